"""User operator callables on the GPU against NumPy (SPEC 8.0): one function at two dtypes in one kernel, and
globals frozen when each kernel is compiled."""
from __future__ import annotations

import sys

import numpy as np
import pytest

import cuda.coop.numba_mlir  # noqa: F401  (registers the backend)
from cuda import coop
from numba_cuda_mlir import cuda

from gpu_helpers import SEEDED_PER_TEST, full_range, poisoned

pytestmark = pytest.mark.gpu
GRID, BLOCK = 3, 128
N = GRID * BLOCK
rng = SEEDED_PER_TEST  # each test draws from its own generator (tests/gpu/conftest.py)


def larger(a, b):
    return a if a > b else b


def per_block(values):
    return values.reshape(GRID, BLOCK)


def test_one_function_at_int32_and_float32_in_one_kernel():
    @cuda.jit
    def kernel(xi, xf, ri, rf, si, sf):
        block = coop.this_block()
        at = np.int64(cuda.blockIdx.x) * block.count() + np.int64(block.rank())
        ri[at] = coop.reduce(block, xi[at], binary_op=larger)
        rf[at] = coop.reduce(block, xf[at], binary_op=larger)
        si[at] = coop.inclusive_scan(block, xi[at], scan_op=larger)
        sf[at] = coop.inclusive_scan(block, xf[at], scan_op=larger)

    xi = full_range(rng, N, np.int32)
    xf = (rng.standard_normal(N) * 1000).astype(np.float32)
    ri, si = poisoned(N, np.int32), poisoned(N, np.int32)
    rf, sf = poisoned(N, np.float32), poisoned(N, np.float32)
    kernel[GRID, BLOCK](xi, xf, ri, rf, si, sf)
    cuda.synchronize()
    for got, src in ((ri, xi), (rf, xf)):  # broadcast: every thread holds its block's result
        want = np.repeat(per_block(src).max(axis=1), BLOCK)
        np.testing.assert_array_equal(got, want)
    for got, src in ((si, xi), (sf, xf)):
        np.testing.assert_array_equal(per_block(got), np.maximum.accumulate(per_block(src), axis=1))


CAP = 100
MODULUS = 7


def capped_max(a, b):  # associative: the result is min(max(all values), CAP)
    return min(a if a > b else b, CAP)


def sum_modulo(a, b):  # associative for non-negative values: (sum of all values) % MODULUS
    return (a + b) % MODULUS


def reduce_kernel(op):
    @cuda.jit
    def kernel(src, dst):
        block = coop.this_block()
        at = np.int64(cuda.blockIdx.x) * block.count() + np.int64(block.rank())
        dst[at] = coop.reduce(block, src[at], binary_op=op)

    return kernel


def run(kernel, src):
    out = poisoned(N, src.dtype)
    kernel[GRID, BLOCK](src, out)
    cuda.synchronize()
    return out


@pytest.mark.parametrize("op,name,values,oracle", [
    (capped_max, "CAP", (100, 500), lambda block, cap: np.minimum(block.max(axis=1), cap)),
    (sum_modulo, "MODULUS", (7, 13), lambda block, modulus: block.sum(axis=1) % modulus),
])
def test_kernel_compiled_after_a_global_changed_uses_the_new_value(op, name, values, oracle):
    module = sys.modules[__name__].__dict__
    src = rng.integers(0, 1000, N, dtype=np.int32)
    first_value, second_value = values
    try:
        module[name] = first_value
        first = reduce_kernel(op)
        got = run(first, src)
        np.testing.assert_array_equal(got, np.repeat(oracle(per_block(src), first_value), BLOCK))
        module[name] = second_value
        second = reduce_kernel(op)  # a fresh kernel object: compiled now, with the new value
        got = run(second, src)
        np.testing.assert_array_equal(got, np.repeat(oracle(per_block(src), second_value), BLOCK))
        # The first kernel was compiled with the first value and keeps it.
        np.testing.assert_array_equal(run(first, src), np.repeat(oracle(per_block(src), first_value), BLOCK))
    finally:
        module["CAP"], module["MODULUS"] = 100, 7
