"""float16 through the qualified namespace (SPEC 9.2) on the GPU against NumPy, every result checked after the
store (numba-cuda-mlir warns that link-time optimisation could drop half-precision stores)."""
from __future__ import annotations

import functools
import sys
from pathlib import Path

import numpy as np
import pytest
from gpu_helpers import SEEDED_PER_TEST, poisoned
from numba_cuda_mlir import cuda

import cuda.coop.numba_mlir as numba_coop
from cuda import coop

pytestmark = pytest.mark.gpu
rng = SEEDED_PER_TEST  # each test draws from its own generator (tests/gpu/conftest.py)
GRID, THREADS, K = 3, 128, 4
TILE = THREADS * K


def halves(n, small=False):
    """Random float16 values; ``small``: integers in {-1, 0, 1}, whose sums are exact in float16 in any order."""
    if small:
        return rng.integers(-1, 2, n).astype(np.float16)
    return rng.normal(size=n).astype(np.float16)


@functools.cache
def copy_kernel(algorithm):
    @cuda.jit
    def kernel(src, dst):
        block = coop.this_block()
        items = coop.ThreadData(K)
        base = np.int64(cuda.blockIdx.x) * TILE
        numba_coop.load(block, src, items, algorithm=algorithm, offset=base)
        numba_coop.store(block, dst, items, algorithm=algorithm, offset=base)

    return kernel


@pytest.mark.parametrize("algorithm", ["direct", "striped", "vectorize", "transpose", "warp_transpose"])
def test_copy(algorithm):
    src = halves(GRID * TILE)
    dst = poisoned(src.size, np.float16)
    copy_kernel(algorithm)[GRID, THREADS](src, dst)
    cuda.synchronize()
    np.testing.assert_array_equal(dst.view(np.uint16), src.view(np.uint16))


@functools.cache
def collectives_kernel():
    @cuda.jit
    def kernel(src, scan, sorted_merge, sorted_radix, exchanged, diffs, partial, totals):
        block = coop.this_block()
        base = np.int64(cuda.blockIdx.x) * TILE
        items = coop.ThreadData(K)
        numba_coop.load(block, src, items, offset=base)
        numba_coop.store(block, scan, numba_coop.inclusive_sum(block, items), offset=base)
        numba_coop.store(block, sorted_merge, numba_coop.merge_sort_keys(block, items), offset=base)
        numba_coop.store(block, sorted_radix, numba_coop.radix_sort_keys(block, items), offset=base)
        numba_coop.store(block, exchanged, numba_coop.exchange(block, items, mode="blocked_to_striped"), offset=base,
                         algorithm="striped")
        numba_coop.store(block, diffs, numba_coop.adjacent_difference(block, items), offset=base)
        tail = coop.ThreadData(K)
        numba_coop.load(block, src, tail, offset=base, valid_items=TILE - 7, oob_default=2.5)  # a by-value half
        numba_coop.store(block, partial, tail, offset=base)
        total = numba_coop.sum(block, items)
        largest = numba_coop.reduce(block, src[base + block.rank()], binary_op="max")  # a scalar half
        warp_total = numba_coop.sum(coop.this_warp(), items)
        if block.rank() == 0:
            totals[cuda.blockIdx.x * 3] = total
            totals[cuda.blockIdx.x * 3 + 1] = largest
        if block.rank() == 32:
            totals[cuda.blockIdx.x * 3 + 2] = warp_total

    return kernel


def test_collectives():
    src = halves(GRID * TILE, small=True)
    outs = [poisoned(src.size, np.float16) for _ in range(6)]
    totals = poisoned(GRID * 3, np.float16)
    collectives_kernel()[GRID, THREADS](src, *outs, totals)
    cuda.synchronize()
    scan, merge, radix, exchanged, diffs, partial = outs
    tiles = src.reshape(GRID, TILE).astype(np.float64)
    np.testing.assert_array_equal(scan, np.cumsum(tiles, axis=1).astype(np.float16).reshape(-1))
    np.testing.assert_array_equal(merge, np.sort(src.reshape(GRID, TILE), axis=1).reshape(-1))
    np.testing.assert_array_equal(radix, np.sort(src.reshape(GRID, TILE), axis=1).reshape(-1))
    np.testing.assert_array_equal(exchanged, src)  # blocked -> striped, stored striped: the tile in order
    want = np.diff(tiles, axis=1, prepend=0.0)
    want[:, 0] = tiles[:, 0]
    np.testing.assert_array_equal(diffs, want.astype(np.float16).reshape(-1))
    expected_partial = src.reshape(GRID, TILE).copy()
    expected_partial[:, TILE - 7:] = np.float16(2.5)
    np.testing.assert_array_equal(partial, expected_partial.reshape(-1))
    per_block = np.stack([tiles.sum(axis=1), src.reshape(GRID, TILE)[:, :THREADS].max(axis=1).astype(np.float64),
                          tiles[:, 32 * K:64 * K].sum(axis=1)], axis=1)
    np.testing.assert_array_equal(totals, per_block.astype(np.float16).reshape(-1))


# ------------------------------------------------------------------ Python callables on float16 (by-pointer ABI)


def half_max(a, b):
    return a if a > b else b


def half_less(a, b):
    return a < b


def half_difference(current, neighbour):
    return current - neighbour


def half_differs(a, b):
    return a != b


def half_running_total(state, block_aggregate):
    old = state[0]
    state[0] = old + block_aggregate
    return old


@functools.cache
def callables_kernel():
    running = numba_coop.StatefulFunction(half_running_total, np.float16)

    @cuda.jit
    def kernel(src, running_max, sorted_desc, diffs, heads, prefixed, totals):
        block = coop.this_block()
        base = np.int64(cuda.blockIdx.x) * TILE
        items = coop.ThreadData(K)
        numba_coop.load(block, src, items, offset=base)
        numba_coop.store(block, running_max, numba_coop.inclusive_scan(block, items, scan_op=half_max), offset=base)
        numba_coop.store(block, sorted_desc, numba_coop.merge_sort_keys(block, items, compare_op=half_less),
                         offset=base)
        numba_coop.store(block, diffs, numba_coop.adjacent_difference(block, items, difference_op=half_difference),
                         offset=base)
        numba_coop.store(block, heads, numba_coop.discontinuity(block, items, flag_op=half_differs), offset=base)
        state = coop.ThreadData(1, dtype=np.float16)
        state[0] = np.float16(1)
        numba_coop.store(block, prefixed, numba_coop.exclusive_scan(block, items, state, scan_op="+",
                                                                    prefix_op=running), offset=base)
        largest = numba_coop.reduce(block, items, binary_op=half_max)
        if block.rank() == 0:
            totals[cuda.blockIdx.x] = largest

    return kernel


def test_python_callables():
    """Python operators and predicates on float16 (SPEC 9.2, 9.6, 9.7), compiled with the by-pointer wrapper."""
    src = halves(GRID * TILE, small=True)
    keep = src.copy()
    outs = [poisoned(src.size, np.float16) for _ in range(3)]
    heads = poisoned(src.size, np.int32)
    prefixed = poisoned(src.size, np.float16)
    totals = poisoned(GRID, np.float16)
    callables_kernel()[GRID, THREADS](src, *outs, heads, prefixed, totals)
    cuda.synchronize()
    running_max, sorted_tiles, diffs = outs
    tiles = src.reshape(GRID, TILE)
    np.testing.assert_array_equal(src, keep)
    np.testing.assert_array_equal(running_max, np.maximum.accumulate(tiles, axis=1).reshape(-1))
    np.testing.assert_array_equal(sorted_tiles, np.sort(tiles, axis=1).reshape(-1))
    wide = tiles.astype(np.float64)
    want = np.diff(wide, axis=1, prepend=0.0)
    want[:, 0] = wide[:, 0]
    np.testing.assert_array_equal(diffs, want.astype(np.float16).reshape(-1))
    flags = np.ones_like(tiles, dtype=np.int32)
    flags[:, 1:] = (tiles[:, 1:] != tiles[:, :-1]).astype(np.int32)
    np.testing.assert_array_equal(heads, flags.reshape(-1))
    exclusive = np.cumsum(wide, axis=1) - wide + 1.0  # seeded by the state's initial value through prefix_op
    np.testing.assert_array_equal(prefixed, exclusive.astype(np.float16).reshape(-1))
    np.testing.assert_array_equal(totals, tiles.max(axis=1))


# ------------------------------------------------------------------ argmax/argmin and tuples (SPEC 8.16, 8.18)

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "compile"))
import test_float16_compile as built  # noqa: E402  (the kernels the CPU test builds)


def test_argmax_and_argmin_of_float16():
    """NumPy's (value, first index) per block and per warp: ties, signed zeros (the first wins, bit for bit) and
    NaNs (the first NaN is the extreme of both) included."""
    blocks = 3
    src = rng.integers(-3, 4, blocks * TILE).astype(np.float16)
    src[(src == 0) & (rng.random(src.size) < 0.5)] = np.float16(-0.0)
    tiles = src.reshape(blocks, TILE)
    tiles[1, 77] = np.nan  # lane 19's item 1
    tiles[2, 300] = np.nan  # lane 75's item 0
    tiles[2, 5] = np.nan  # lane 1's item 1: the block's first NaN
    keep = src.copy()
    _, *outs = built.argreduce_args(src, blocks)
    outs = [poisoned(out.size, out.dtype) for out in outs]
    block_values, block_indices, warp_values, warp_indices = outs
    built.argreduce_kernel()[blocks, THREADS](src, *outs)
    cuda.synchronize()
    np.testing.assert_array_equal(src.view(np.uint16), keep.view(np.uint16))
    at = np.stack([np.argmax(tiles, axis=1), np.argmin(tiles, axis=1)], 1)
    np.testing.assert_array_equal(block_indices.reshape(blocks, 2), at)
    np.testing.assert_array_equal(block_values.reshape(blocks, 2).view(np.uint16),
                                  np.take_along_axis(tiles, at, 1).view(np.uint16))
    lanes = tiles.reshape(blocks, THREADS, K)
    firsts = lanes[:, :, 0].reshape(-1, 32)  # every warp's item 0, then item 1
    seconds = lanes[:, :, 1].reshape(-1, 32)
    lane_at = np.stack([np.argmax(firsts, axis=1), np.argmin(seconds, axis=1)], 1)
    np.testing.assert_array_equal(warp_indices.reshape(-1, 2), lane_at)
    rows = np.arange(firsts.shape[0])
    want = np.stack([firsts[rows, lane_at[:, 0]], seconds[rows, lane_at[:, 1]]], 1)
    np.testing.assert_array_equal(warp_values.reshape(-1, 2).view(np.uint16), want.view(np.uint16))


def test_float16_members_of_tuple_scans_and_reductions():
    """(float16, int32) scans and (int32, float16) reductions against NumPy; float16 members are small integers
    (and 1.5), exact in float16 in any order."""
    blocks = 3
    halves_of = rng.integers(-1, 2, blocks * TILE).astype(np.float16)
    ints = rng.integers(-50, 50, blocks * TILE).astype(np.int32)
    _, _, *outs = built.tuple_args(halves_of, ints, blocks)
    outs = [poisoned(out.size, out.dtype) for out in outs]
    built.tuple_kernel()[blocks, THREADS](halves_of, ints, *outs)
    cuda.synchronize()
    scan_h, scan_i, excl_h, excl_i, warp_h, warp_i, totals_i, totals_h = outs
    h = halves_of.reshape(blocks, TILE).astype(np.float64)
    n = ints.reshape(blocks, TILE).astype(np.int64)
    np.testing.assert_array_equal(scan_h, np.cumsum(h, axis=1).astype(np.float16).reshape(-1))
    np.testing.assert_array_equal(scan_i, np.cumsum(n, axis=1).astype(np.int32).reshape(-1))
    np.testing.assert_array_equal(excl_h, (1.5 + np.cumsum(h, axis=1) - h).astype(np.float16).reshape(-1))
    np.testing.assert_array_equal(excl_i, (7 + np.cumsum(n, axis=1) - n).astype(np.int32).reshape(-1))
    lane_h = h.reshape(blocks, THREADS, K)
    lane_n = n.reshape(blocks, THREADS, K)
    np.testing.assert_array_equal(warp_h, np.cumsum(lane_h[:, :, 0].reshape(-1, 32), axis=1)
                                  .astype(np.float16).reshape(-1))
    np.testing.assert_array_equal(warp_i, np.cumsum(lane_n[:, :, 0].reshape(-1, 32), axis=1)
                                  .astype(np.int32).reshape(-1))
    warps = built.WARPS
    want_i = np.concatenate([n.sum(axis=1)[:, None], lane_n[:, :, 1].reshape(blocks, warps, 32).sum(axis=2)], 1)
    want_h = np.concatenate([h.max(axis=1)[:, None], lane_h[:, :, 1].reshape(blocks, warps, 32).max(axis=2)], 1)
    np.testing.assert_array_equal(totals_i, want_i.astype(np.int32).reshape(-1))
    np.testing.assert_array_equal(totals_h, want_h.astype(np.float16).reshape(-1))
