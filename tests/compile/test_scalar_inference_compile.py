"""Element-type inference (SPEC 4, rule 3: an element of a kernel array argument) through numba-cuda-mlir's
cache-hinted loads and atomics: ``cuda.ldcg(a, i)`` reads an element of ``a`` and ``cuda.atomic.add(a, i, v)``
returns one, so a scalar operand or a payload slot computed from them has ``a``'s dtype, with no cast (issue 39's
sliced kernels met "could not infer the dtype" there). Builds without a GPU; the CUB instantiation shows the dtype."""
from __future__ import annotations

import re

import numpy as np
import pytest
from numba_cuda_mlir import cuda

from cuda import coop

from compile_helpers import build_kernel

CUB_TYPES = {np.int32: "int", np.int64: "long long", np.float32: "float", np.float64: "double"}


def reduced_types(built) -> list[str]:
    """The value types of the kernel's BlockReduce instantiations, in source order, once each."""
    return list(dict.fromkeys(re.findall(r"BlockReduce<([^,]+),", built.cpp_source)))


@pytest.mark.parametrize("load", ["ldcg", "ldca", "ldcs", "ldlu", "ldcv"])
@pytest.mark.parametrize("dtype", [np.int64, np.float32])
def test_a_cache_hinted_load_is_an_element_of_its_array(load, dtype):
    read = getattr(cuda, load)

    @cuda.jit
    def kernel(src, dst):
        block = coop.this_block()
        x = read(src, cuda.threadIdx.x)
        largest = coop.reduce(block, x, binary_op="max")
        if block.rank() == 0:
            dst[0] = largest

    built = build_kernel(kernel, (np.zeros(128, dtype), np.zeros(1, dtype)))
    assert reduced_types(built) == [CUB_TYPES[dtype]]


@cuda.jit
def atomic_add_kernel(counts, dst):
    block = coop.this_block()
    total = coop.sum(block, cuda.atomic.add(counts, 0, np.int64(1)))
    if block.rank() == 0:
        dst[0] = total


@cuda.jit
def atomic_max_kernel(counts, dst):
    block = coop.this_block()
    old = cuda.atomic.max(counts, 1, np.int64(cuda.threadIdx.x))
    total = coop.sum(block, old)
    if block.rank() == 0:
        dst[0] = total


@cuda.jit
def atomic_exch_kernel(counts, dst):
    block = coop.this_block()
    old = cuda.atomic.exch(counts, 2, np.int64(7))
    total = coop.sum(block, old)
    if block.rank() == 0:
        dst[0] = total


@pytest.mark.parametrize("kernel", [atomic_add_kernel, atomic_max_kernel, atomic_exch_kernel],
                         ids=["add", "max", "exch"])
def test_an_atomic_returns_an_element_of_its_array(kernel):
    built = build_kernel(kernel, (np.zeros(4, np.int64), np.zeros(1, np.int64)))
    assert reduced_types(built) == ["long long"]


def test_a_payload_slot_assigned_from_a_load_takes_its_dtype():
    @cuda.jit
    def kernel(src, dst):
        block = coop.this_block()
        items = coop.ThreadData(2)
        items[0] = cuda.ldcg(src, 2 * cuda.threadIdx.x)
        items[1] = cuda.ldcg(src, 2 * cuda.threadIdx.x + 1)
        total = coop.sum(block, items)
        if block.rank() == 0:
            dst[0] = total

    built = build_kernel(kernel, (np.zeros(256, np.float64), np.zeros(1, np.float64)))
    assert reduced_types(built) == ["double"]
