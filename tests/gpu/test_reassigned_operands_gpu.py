"""Operands whose variable holds another value where the call stands (numba-cuda-mlir; SPEC 8.18 for tuples) on
the GPU against NumPy: the kernels tests/compile/test_reassigned_operands_compile.py builds. Outputs poisoned,
inputs checked unchanged, random rows (about one item in four above the threshold, so some lanes find none);
the float sums are of multiples of 1/16, exact in any order."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from gpu_helpers import SEEDED_PER_TEST, poisoned
from numba_cuda_mlir import cuda

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "compile"))
import test_reassigned_operands_compile as built  # noqa: E402  (the kernels the CPU test builds)

pytestmark = pytest.mark.gpu
rng = SEEDED_PER_TEST
THREADS, K = built.THREADS, built.K


def test_a_conditionally_reassigned_tuple_is_reduced_as_the_loop_left_it():
    values = rng.integers(-1000, 1000, THREADS * K).astype(np.int32)
    threshold = np.int32(500)
    keep = values.copy()
    out = poisoned(THREADS * 2, np.int64).reshape(THREADS, 2)
    built.conditional_kernel()[1, THREADS](values, threshold, out)
    cuda.synchronize()
    np.testing.assert_array_equal(values, keep)
    rows = values.reshape(THREADS, K)
    found = np.full((THREADS, 2), -1, np.int64)
    for lane, row in enumerate(rows):
        above = np.flatnonzero(row > threshold)
        if above.size:  # the walk from the end keeps the last assignment: the first such item
            found[lane] = (lane * K + above[0], row[above[0]])
    warps = found.reshape(-1, 32, 2).max(axis=1)
    np.testing.assert_array_equal(out, np.repeat(warps, 32, axis=0))


def test_a_member_assigned_after_the_tuple_was_built_is_reduced_as_built():
    values = rng.integers(-1000, 1000, THREADS * 2).astype(np.int32)
    keep = values.copy()
    out = poisoned(THREADS * 2, np.int64).reshape(THREADS, 2)
    built.rebuilt_member_kernel()[1, THREADS](values, out)
    cuda.synchronize()
    np.testing.assert_array_equal(values, keep)
    pairs = values.reshape(THREADS, 2).astype(np.int64)
    np.testing.assert_array_equal(out, np.repeat(pairs.sum(axis=0, keepdims=True), THREADS, axis=0))


def test_a_scalar_assigned_an_int_then_a_float_is_summed_as_a_float():
    values = (rng.integers(-1000, 1000, THREADS) / 8).astype(np.float32)
    keep = values.copy()
    out = poisoned(THREADS, np.float64)
    built.scalar_kernel()[1, THREADS](values, out)
    cuda.synchronize()
    np.testing.assert_array_equal(values, keep)
    halves = np.where(values > 0, values.astype(np.float64) * 0.5, 0.0)
    np.testing.assert_array_equal(out, np.full(THREADS, halves.sum()))
