"""Large payloads on the GPU (issue 18, item 5): above 256 items per thread load and store are loops; each
algorithm must still give its arrangement (striped, or blocked for the rest), honour valid_items and oob_default,
and a guarded store must leave the rest of the destination alone. NumPy oracles, poisoned outputs."""
from __future__ import annotations

import numpy as np
import pytest

from cuda import coop
from numba_cuda_mlir import cuda

from gpu_helpers import SEEDED_PER_TEST, poisoned

pytestmark = pytest.mark.gpu
rng = SEEDED_PER_TEST  # each test draws from its own generator (tests/gpu/conftest.py)
THREADS = 64


def _kernels(k, algorithm):
    @cuda.jit
    def arrangement(src, seen, n):
        """What each thread's items[i] holds, written out by (rank, i): the arrangement the load produced."""
        block = coop.this_block()
        items = coop.ThreadData(k)
        coop.load(block, src, items, algorithm=algorithm, valid_items=n, oob_default=-1)
        for i in range(k):
            seen[block.rank() * k + i] = items[i]

    @cuda.jit
    def copy(src, dst, n):
        block = coop.this_block()
        base = np.int64(cuda.blockIdx.x) * block.count() * k
        items = coop.ThreadData(k)
        coop.load(block, src, items, algorithm=algorithm, offset=base)
        coop.store(block, dst, items, algorithm=algorithm, offset=base, valid_items=n)

    return arrangement, copy


@pytest.mark.parametrize("algorithm", ["direct", "striped", "transpose", "warp_transpose"])
@pytest.mark.parametrize("k", [300, 4096])
def test_large_loads_and_stores_keep_their_arrangement(k, algorithm):
    arrangement, copy = _kernels(k, algorithm)
    tile = THREADS * k
    n = tile - 1000 - k // 3  # a partial tile: the last items are oob_default
    src = rng.integers(0, 1 << 30, size=tile).astype(np.int32)
    seen = poisoned(tile, np.int32)
    arrangement[1, THREADS](src, seen, n)
    padded = np.where(np.arange(tile) < n, src, -1).astype(np.int32)
    if algorithm == "striped":
        expect = padded.reshape(k, THREADS).T.ravel()  # items[i] of thread r is element i * THREADS + r
    else:
        expect = padded  # blocked: items[i] of thread r is element r * k + i
    np.testing.assert_array_equal(seen, expect)

    grid = 2
    src = rng.integers(0, 1 << 30, size=grid * tile).astype(np.int32)
    dst = poisoned(src.size, np.int32)
    copy[grid, THREADS](src, dst, n)
    expect = poisoned(src.size, np.int32)
    for b in range(grid):
        expect[b * tile:b * tile + n] = src[b * tile:b * tile + n]  # a guarded store writes the first n of each tile
    np.testing.assert_array_equal(dst, expect)


@cuda.jit
def warp_striped_copy(src, dst):
    warp = coop.this_warp().group_by(8)
    items = coop.ThreadData(300)
    coop.load(warp, src, items, algorithm="striped")
    for i in range(300):
        items[i] = items[i] * 2
    coop.store(warp, dst, items, algorithm="striped")


def test_large_logical_warp_payloads_cover_their_groups_tiles():
    src = rng.integers(-1000, 1000, size=300 * THREADS).astype(np.int64)
    dst = poisoned(src.size, np.int64)
    warp_striped_copy[1, THREADS](src, dst)
    np.testing.assert_array_equal(dst, src * 2)
