"""Issue 19 on the GPU: a cuda.coop kernel launched at five grid sizes with one block shape is built once and is
right at each size; another block shape builds again; a cuda.coop kernel declared with cache=True is never read
back from numba-cuda-mlir's disk cache (its build depends on the launch), while a plain kernel is."""
from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
from gpu_helpers import full_range, poisoned
from numba_cuda_mlir import cuda

import cuda.coop.numba_mlir as numba_coop  # noqa: F401  (registers the backend)
from cuda import coop
from cuda.coop.numba_mlir import _planner

pytestmark = pytest.mark.gpu
ITEMS = 4


def tile_scan_kernel():
    @cuda.jit
    def tile_scan(src, dst, totals):
        block = coop.this_block()
        base = cuda.blockIdx.x * block.count() * ITEMS
        items = coop.ThreadData(ITEMS)
        coop.load(block, src, items, offset=base)
        coop.store(block, dst, coop.exclusive_sum(block, items), offset=base)
        total = coop.sum(block, items)
        if block.rank() == 0:
            totals[cuda.blockIdx.x] = total

    return tile_scan


@pytest.fixture
def builds(monkeypatch):
    """How many times cuda.coop planned a kernel (once per build)."""
    count = [0]
    original = _planner.CoopPlanner.run

    def counted(self):
        changed = original(self)
        count[0] += 1
        return changed

    monkeypatch.setattr(_planner.CoopPlanner, "run", counted)
    return count


def _check(kernel, grid, threads, rng, launcher=None):
    tile = threads * ITEMS
    src = rng.integers(-1000, 1000, size=grid * tile).astype(np.int32)
    dst, totals = poisoned(src.size, np.int32), poisoned(grid, np.int32)
    (launcher or kernel[grid, threads])(src, dst, totals)
    cuda.synchronize()
    tiles = src.reshape(grid, tile)
    scanned = np.cumsum(tiles, axis=1, dtype=np.int32) - tiles
    np.testing.assert_array_equal(dst.reshape(grid, tile), scanned)
    np.testing.assert_array_equal(totals, tiles.sum(axis=1, dtype=np.int32))


def test_five_grid_sizes_one_build_each_right(builds):
    kernel, rng = tile_scan_kernel(), np.random.default_rng(19)
    for grid in (1, 7, 130, 3, 1025):
        _check(kernel, grid, 128, rng)
    assert builds[0] == 1
    _check(kernel, 5, 128, rng, launcher=kernel[5, (128, 1, 1)])  # the same block written as a 3-tuple
    assert builds[0] == 1
    _check(kernel, 4, 64, rng)  # another block shape: its own build
    _check(kernel, 9, 64, rng)
    assert builds[0] == 2
    for grid in (2, 7):  # the first shape's build is still there
        _check(kernel, grid, 128, rng)
    assert builds[0] == 2


def test_dynamic_shared_memory_scratch_is_sized_at_every_grid(builds):
    """A kernel whose scratch is dynamic shared memory (a TempStorage above the 48 KiB static limit) gets it at a
    reused grid."""
    @cuda.jit
    def sort_tiles(src, dst):
        block = coop.this_block()
        base = cuda.blockIdx.x * block.count() * ITEMS
        keys = coop.ThreadData(ITEMS)
        coop.load(block, src, keys, offset=base)
        coop.store(block, dst, coop.radix_sort_keys(block, keys, temp_storage=coop.TempStorage(size_in_bytes=60000)),
                   offset=base)

    rng = np.random.default_rng(20)
    for grid in (3, 11, 64):
        src = full_range(rng, grid * 256 * ITEMS, np.int32)
        dst = poisoned(src.size, np.int32)
        sort_tiles[grid, 256](src, dst)
        cuda.synchronize()
        np.testing.assert_array_equal(dst.reshape(grid, -1), np.sort(src.reshape(grid, -1), axis=1))
    assert builds[0] == 1


_CACHED_PROGRAM = """
import numpy as np
from numba_cuda_mlir import cuda
from cuda import coop
import cuda.coop.numba_mlir as numba_coop

@cuda.jit(cache=True)
def block_sums(src, dst):
    dst[cuda.blockIdx.x] = coop.sum(coop.this_block(), src[cuda.grid(1)])

@cuda.jit(cache=True)
def plain(src, dst):
    dst[cuda.grid(1)] = src[cuda.grid(1)] + 1

src = np.arange(4 * 128, dtype=np.int32)
dst, out = np.zeros(4, np.int32), np.zeros(src.size, np.int32)
block_sums[4, 128](src, dst)
plain[4, 128](src, out)
assert (dst == src.reshape(4, 128).sum(axis=1)).all() and (out == src + 1).all()
print("coop_hits", sum(block_sums._cache_hits.values()), "plain_hits", sum(plain._cache_hits.values()))
"""


def test_disk_cache_serves_the_plain_kernel_and_never_the_cuda_coop_one(tmp_path):
    program = tmp_path / "cached.py"
    program.write_text(_CACHED_PROGRAM)
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"))
    outputs = []
    for _ in range(2):
        run = subprocess.run([sys.executable, str(program)], capture_output=True, text=True, env=env, timeout=300,
                             check=False)
        assert run.returncode == 0, run.stderr[-3000:]
        outputs.append(run.stdout.split()[-4:])
    assert outputs[0] == ["coop_hits", "0", "plain_hits", "0"]
    assert outputs[1] == ["coop_hits", "0", "plain_hits", "1"]
