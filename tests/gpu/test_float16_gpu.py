"""float16 through the qualified namespace (SPEC 9.2) on the GPU against NumPy, every result checked after the
store (numba-cuda-mlir warns that link-time optimisation could drop half-precision stores)."""
from __future__ import annotations

import functools

import numpy as np
import pytest
from gpu_helpers import poisoned
from numba_cuda_mlir import cuda

import cuda.coop.numba_mlir as numba_coop
from cuda import coop

pytestmark = pytest.mark.gpu
rng = np.random.default_rng(1616)
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
