"""Issue 18 on the GPU: a negated literal pads and seeds with the right value, uint64 sentinels at or above 2**63
pad and sort, and an aggregate_output without a dtype receives the scan's total; NumPy oracles, poisoned outputs."""
from __future__ import annotations

import math

import numpy as np
import pytest

import cuda.coop.numba_mlir as numba_coop
from cuda import coop
from numba_cuda_mlir import cuda

from gpu_helpers import SEEDED_PER_TEST, poisoned

pytestmark = pytest.mark.gpu
THREADS, K = 128, 4
rng = SEEDED_PER_TEST  # each test draws from its own generator (tests/gpu/conftest.py)


@cuda.jit
def running_max_padded(src, dst, n):
    block = coop.this_block()
    items = coop.ThreadData(K)
    coop.load(block, src, items, valid_items=n, oob_default=-math.inf)
    best = coop.exclusive_scan(block, items, scan_op="max", initial_value=-np.inf)
    coop.store(block, dst, best)


@pytest.mark.parametrize("n", [1, 37, THREADS * K])
def test_negative_infinity_pads_and_seeds_a_float32_scan(n):
    src = np.full(THREADS * K, 1e30, np.float32)  # past n: larger than every item, so a load of it would show
    src[:n] = rng.normal(size=n).astype(np.float32)
    dst = poisoned(THREADS * K, np.float32)
    running_max_padded[1, THREADS](src, dst, n)
    tile = np.concatenate([src[:n], np.full(THREADS * K - n, -np.inf, np.float32)])
    expect = np.concatenate([[-np.inf], np.maximum.accumulate(tile)[:-1]]).astype(np.float32)
    np.testing.assert_array_equal(dst, expect)


@cuda.jit
def sort_padded_with_uint64_max(src, padded, dst, n):
    block = coop.this_block()
    items = coop.ThreadData(K)
    coop.load(block, src, items, valid_items=n, oob_default=18446744073709551615)
    coop.store(block, padded, items)
    keys = coop.merge_sort_keys(block, items, valid_items=n, oob_default=2**64 - 1)
    coop.store(block, dst, keys)


def test_uint64_maximum_is_a_padding_sentinel():
    n = 300
    src = poisoned(THREADS * K, np.uint64)
    src[:n] = rng.integers(0, 2**64 - 1, size=n, dtype=np.uint64, endpoint=False)
    src[:8] |= np.uint64(1 << 63)  # keys with the top bit set sort among the rest
    padded, dst = poisoned(THREADS * K, np.uint64), poisoned(THREADS * K, np.uint64)
    sort_padded_with_uint64_max[1, THREADS](src, padded, dst, n)
    np.testing.assert_array_equal(padded, np.concatenate([src[:n], np.full(THREADS * K - n, 2**64 - 1, np.uint64)]))
    np.testing.assert_array_equal(dst[:n], np.sort(src[:n]))  # SPEC 8.8: only the first valid_items are defined


@cuda.jit
def scan_with_untyped_aggregate(src, dst, totals):
    block = coop.this_block()
    base = np.int64(cuda.blockIdx.x) * THREADS * K
    items = coop.ThreadData(K)
    coop.load(block, src, items, offset=base)
    total = numba_coop.ThreadData(1)
    items = numba_coop.exclusive_sum(block, items, aggregate_output=total)
    coop.store(block, dst, items, offset=base)
    if block.rank() == 0:
        totals[cuda.blockIdx.x] = total[0]


@pytest.mark.parametrize("dtype", [np.int32, np.float64, np.uint64])
def test_untyped_aggregate_output_receives_the_tile_total(dtype):
    grid = 3
    src = rng.integers(1, 1000, size=grid * THREADS * K).astype(dtype)
    dst, totals = poisoned(src.size, dtype), poisoned(grid, dtype)
    scan_with_untyped_aggregate[grid, THREADS](src, dst, totals)
    tiles = src.reshape(grid, -1)
    np.testing.assert_array_equal(dst, (np.cumsum(tiles, axis=1, dtype=dtype) - tiles).ravel())
    np.testing.assert_array_equal(totals, tiles.sum(axis=1, dtype=dtype))
