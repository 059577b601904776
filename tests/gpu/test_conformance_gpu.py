"""Issue-8 conformance on the GPU: P15 merges, compile-time extents in helpers, uniform participation,
group queries of every kind (cluster launches included), against NumPy oracles with poisoned outputs."""
from __future__ import annotations

import numpy as np
import pytest

import cuda.coop.numba_mlir  # noqa: F401  (registers the backend)
from cuda import coop
from numba_cuda_mlir import cuda

from gpu_helpers import SEEDED_PER_TEST, poisoned

pytestmark = pytest.mark.gpu
rng = SEEDED_PER_TEST  # each test draws from its own generator (tests/gpu/conftest.py)


def _tiles(x, threads, k):
    return x.reshape(-1, threads * k)


# ------------------------------------------------------------ P15: loop-carried and branch-merged payloads


@cuda.jit
def running_scans(src, dst, rounds, k):
    block = coop.this_block()
    base = np.int64(cuda.blockIdx.x) * block.count() * k
    items = coop.ThreadData(k)
    coop.load(block, src, items, offset=base)
    for _ in range(rounds):
        items = coop.inclusive_sum(block, items)
    coop.store(block, dst, items, offset=base)


@pytest.mark.parametrize("rounds", [0, 1, 3])
@pytest.mark.parametrize("k", [1, 4])
def test_loop_carried_payload(rounds, k):
    threads, grid = 128, 3
    src = rng.integers(-5, 6, size=grid * threads * k).astype(np.int32)
    original = src.copy()
    dst = poisoned(src.size, np.int32)
    running_scans[grid, threads](src, dst, rounds, k)
    cuda.synchronize()
    want = _tiles(original, threads, k).astype(np.int32)
    for _ in range(rounds):
        want = np.cumsum(want, axis=1, dtype=np.int32)
    np.testing.assert_array_equal(dst, want.ravel())
    np.testing.assert_array_equal(src, original)


@cuda.jit
def branch_merged(src, dst, flag):
    block = coop.this_block()
    base = np.int64(cuda.blockIdx.x) * block.count() * 2
    items = coop.ThreadData(2)
    coop.load(block, src, items, offset=base)
    if flag > 0:
        out = coop.inclusive_sum(block, items)
    else:
        out = coop.ThreadData(2)
        for i in range(len(out)):
            out[i] = items[i] - np.float32(1)
    coop.store(block, dst, out, offset=base)


@pytest.mark.parametrize("flag", [0, 1])
def test_branch_merged_payload(flag):
    threads, grid = 64, 2
    src = rng.integers(-50, 50, size=grid * threads * 2).astype(np.float32)
    dst = poisoned(src.size, np.float32)
    branch_merged[grid, threads](src, dst, np.int32(flag))
    cuda.synchronize()
    tiles = _tiles(src, threads, 2)
    want = np.cumsum(tiles, axis=1, dtype=np.float32) if flag else tiles - 1
    np.testing.assert_array_equal(dst, want.ravel())


# ------------------------------------------------------------ items_per_thread and len() in helpers


@cuda.jit(device=True, inline="always")
def _scaled(items, factor):
    out = coop.ThreadData(items.items_per_thread, dtype=np.int64)
    for i in range(items.items_per_thread):
        out[i] = np.int64(items[i]) * factor
    return out


@cuda.jit
def extents_kernel(src, dst, k):
    block = coop.this_block()
    base = np.int64(cuda.blockIdx.x) * block.count() * k
    items = coop.ThreadData(k)
    coop.load(block, src, items, offset=base, algorithm="striped")
    for i in range(len(items)):
        items[i] += 1
    coop.store(block, dst, _scaled(items, np.int64(3)), offset=base, algorithm="striped")


@pytest.mark.parametrize("k", [1, 2, 4])
def test_compile_time_extents_in_helpers(k):
    threads, grid = 96, 2
    src = rng.integers(-1000, 1000, size=grid * threads * k).astype(np.int64)
    dst = poisoned(src.size, np.int64)
    extents_kernel[grid, threads](src, dst, k)
    cuda.synchronize()
    np.testing.assert_array_equal(dst, (src + 1) * 3)


# ------------------------------------------------------------ uniform participation (SPEC 2.7)


@cuda.jit
def uniform_branches(src, sums, warp_sums, limit):
    block = coop.this_block()
    warp = coop.this_warp()
    t = np.int64(cuda.blockIdx.x) * block.count() + block.rank()
    value = src[t]
    if cuda.blockIdx.x < limit:  # uniform across the block
        total = coop.sum(block, value)
        if block.rank() == 0:
            sums[cuda.blockIdx.x] = total
    if cuda.threadIdx.x < 64:  # whole warps (block x extent is a multiple of 32)
        partial = coop.sum(warp, value)
        if cuda.laneid == 0:
            warp_sums[np.int64(cuda.blockIdx.x) * 4 + warp.rank(level="block")] = partial


def test_uniform_conditions_run():
    threads, grid, limit = 128, 5, 3
    src = rng.integers(-100, 100, size=grid * threads).astype(np.int32)
    sums = poisoned(grid, np.int32)
    warp_sums = poisoned(grid * 4, np.int32)
    uniform_branches[grid, threads](src, sums, warp_sums, np.int32(limit))
    cuda.synchronize()
    want_sums = poisoned(grid, np.int32)
    want_sums[:limit] = src.reshape(grid, threads).sum(axis=1)[:limit]
    np.testing.assert_array_equal(sums, want_sums)
    want_warps = poisoned(grid * 4, np.int32).reshape(grid, 4)
    want_warps[:, :2] = src.reshape(grid, 4, 32).sum(axis=2)[:, :2]
    np.testing.assert_array_equal(warp_sums, want_warps.ravel())


@cuda.jit
def tiles_in_a_runtime_loop(src, dst, tiles):
    block = coop.this_block()
    for tile in range(tiles):  # a runtime, block-uniform trip count
        base = (np.int64(cuda.blockIdx.x) * tiles + tile) * block.count() * 2
        items = coop.ThreadData(2)
        coop.load(block, src, items, offset=base, algorithm="transpose")
        coop.store(block, dst, coop.exclusive_sum(block, items), offset=base, algorithm="transpose")


def test_calls_in_a_runtime_loop():
    threads, grid, tiles = 64, 2, 5
    src = rng.integers(0, 9, size=grid * tiles * threads * 2).astype(np.uint32)
    dst = poisoned(src.size, np.uint32)
    tiles_in_a_runtime_loop[grid, threads](src, dst, np.int32(tiles))
    cuda.synchronize()
    t = _tiles(src, threads, 2)
    want = np.cumsum(t, axis=1, dtype=np.uint32) - t
    np.testing.assert_array_equal(dst, want.ravel())


# ------------------------------------------------------------ group queries of every kind (SPEC 3.4)

COLUMNS = 24


@cuda.jit
def queries(out):
    thread, warp, block = coop.this_thread(), coop.this_warp(), coop.this_block()
    lw = coop.this_warp().group_by(8)
    lw24 = coop.this_warp().group_by(24, exhaustive=False)
    pair = coop.this_block().group_by(2)
    cluster, grid = coop.this_cluster(), coop.this_grid()
    row = grid.rank()
    out[row, 0] = thread.rank(level="block")
    out[row, 1] = thread.count(level="warp")
    out[row, 2] = warp.rank()
    out[row, 3] = warp.count()
    out[row, 4] = warp.rank(level="block")
    out[row, 5] = lw.rank()
    out[row, 6] = lw.rank(level="warp")
    out[row, 7] = lw.count(level="warp")
    out[row, 8] = lw24.is_member()
    out[row, 9] = block.rank()
    out[row, 10] = block.count(level="warp")
    out[row, 11] = block.rank(level="cluster")
    out[row, 12] = block.rank(level="grid")
    out[row, 13] = pair.rank()
    out[row, 14] = pair.rank(level="block")
    out[row, 15] = pair.count(level="block")
    out[row, 16] = cluster.rank()
    out[row, 17] = cluster.count(level="block")
    out[row, 18] = cluster.rank(level="grid")
    out[row, 19] = cluster.count(level="grid")
    out[row, 20] = grid.count()
    out[row, 21] = block.rank_as(np.int8)
    out[row, 22] = grid.count_as(np.uint16, level="block")
    block.sync()
    warp.sync()
    lw.sync()
    cluster.sync()
    thread.sync()
    out[row, 23] = lw.is_member() + block.is_member() + pair.is_member()


def _expected(grid_dims, block_dims, cluster_dims):
    gx, gy, gz = grid_dims
    bx, by, bz = block_dims
    cx, cy, cz = cluster_dims
    T = bx * by * bz
    rows = []
    for bzi in range(gz):
        for byi in range(gy):
            for bxi in range(gx):
                blk = bxi + gx * (byi + gy * bzi)
                cta = (bxi % cx) + cx * ((byi % cy) + cy * (bzi % cz))
                ncx, ncy = gx // cx, gy // cy
                clu = bxi // cx + ncx * (byi // cy + ncy * (bzi // cz))
                ncta, nclu = cx * cy * cz, (gx * gy * gz) // (cx * cy * cz)
                for lin in range(T):
                    lane, w = lin % 32, lin // 32
                    rows.append((blk * T + lin, [
                        lin, 32, lane, 32, w, lane % 8, lane // 8, 4, int(lane < 24), lin, T // 32, cta, blk,
                        lin % 64, w // 2, T // 64, cta * T + lin, ncta, clu, nclu, gx * gy * gz * T,
                        np.int8(np.uint8(lin & 0xFF)), gx * gy * gz, 3]))
    out = np.zeros((len(rows), COLUMNS), np.int64)
    for r, values in rows:
        out[r] = values
    return out


@pytest.mark.parametrize("grid_dims,block_dims,cluster_dims", [
    ((3, 1, 1), (128, 1, 1), (1, 1, 1)),
    ((2, 2, 1), (32, 4, 1), (1, 1, 1)),
    ((4, 2, 1), (64, 2, 1), (2, 1, 1)),
    ((4, 4, 1), (32, 2, 2), (2, 2, 1)),
    ((2, 2, 2), (128, 1, 1), (1, 2, 2)),
])
def test_group_queries_every_kind(grid_dims, block_dims, cluster_dims):
    threads = int(np.prod(grid_dims) * np.prod(block_dims))
    out = poisoned(threads * COLUMNS, np.int64).reshape(threads, COLUMNS)
    d_out = cuda.to_device(out)
    if cluster_dims == (1, 1, 1):
        queries[grid_dims, block_dims](d_out)
    else:
        queries[grid_dims, block_dims, 0, 0, cluster_dims](d_out)
    cuda.synchronize()
    got = d_out.copy_to_host()
    want = _expected(grid_dims, block_dims, cluster_dims)
    for column in range(COLUMNS):
        np.testing.assert_array_equal(got[:, column], want[:, column], err_msg=f"column {column}")
