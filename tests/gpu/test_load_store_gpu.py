"""Load/Store on the GPU against NumPy oracles (SPEC 8.1, 8.2)."""
from __future__ import annotations

import numpy as np
import pytest

import cuda.coop.numba_mlir  # noqa: F401  (registers the backend)
from cuda import coop
from numba_cuda_mlir import cuda

from gpu_helpers import SEEDED_PER_TEST, full_range, poisoned

pytestmark = pytest.mark.gpu
GRID = 3
BLOCKED = ("direct", "vectorize", "transpose", "warp_transpose", "warp_transpose_timesliced")
rng = SEEDED_PER_TEST  # each test draws from its own generator (tests/gpu/conftest.py)


def random_data(n: int, dtype) -> np.ndarray:
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        return rng.standard_normal(n).astype(dtype) * 100
    return full_range(rng, n, dtype)  # every value but the poison


def positions(algorithm: str, threads: int, group: int, k: int) -> np.ndarray:
    """pos[t, i]: tile position (within the block's tile) of slot i of the thread with linear rank t."""
    t = np.arange(threads)[:, None]
    i = np.arange(k)[None, :]
    if algorithm == "striped":
        g, r = t // group, t % group
        return g * group * k + r + i * group
    return t * k + i


def launch(kernel, block, *args):
    kernel[GRID, block](*args)
    cuda.synchronize()


def make_load_kernel(algorithm, width, partial, with_default):
    @cuda.jit
    def kernel(src, out, k, valid, default):
        block = coop.this_block()
        group = coop.this_block() if width == 0 else (coop.this_warp() if width == 32
                                                      else coop.this_warp().group_by(width))
        items = coop.ThreadData(k)
        tile = np.int64(cuda.blockIdx.x) * block.count() * k
        if partial and with_default:
            coop.load(group, src, items, algorithm=algorithm, offset=tile, valid_items=valid, oob_default=default)
        elif partial:
            coop.load(group, src, items, algorithm=algorithm, offset=tile, valid_items=valid)
        else:
            coop.load(group, src, items, algorithm=algorithm, offset=tile)
        me = tile + np.int64(block.rank()) * k
        for i in range(k):
            out[me + i] = items[i]

    return kernel


def make_store_kernel(algorithm, width, partial):
    @cuda.jit
    def kernel(src, dst, k, valid):
        block = coop.this_block()
        group = coop.this_block() if width == 0 else (coop.this_warp() if width == 32
                                                      else coop.this_warp().group_by(width))
        items = coop.ThreadData(k)
        tile = np.int64(cuda.blockIdx.x) * block.count() * k
        me = tile + np.int64(block.rank()) * k
        for i in range(k):
            items[i] = src[me + i]
        if partial:
            coop.store(group, dst, items, algorithm=algorithm, offset=tile, valid_items=valid)
        else:
            coop.store(group, dst, items, algorithm=algorithm, offset=tile)
        for i in range(k):  # the input payload is preserved
            src[me + i] = items[i]

    return kernel


def check_load(algorithm, width, block, k, dtype, partial=False, with_default=False):
    threads = int(np.prod(block))
    group = threads if width == 0 else width
    n = GRID * threads * k
    src = random_data(n, dtype)
    out = poisoned(n, dtype)
    valid = (group * k) // 2 + 1 if width else (threads * k) // 3 + 1
    default = np.array(random_data(1, dtype)[0])
    kernel = make_load_kernel(algorithm, width, partial, with_default)
    launch(kernel, block, src, out, k, np.int32(valid), default.astype(dtype)[()])
    pos = positions(algorithm, threads, group, k)
    for b in range(GRID):
        got = out[b * threads * k:(b + 1) * threads * k].reshape(threads, k)
        want = src[b * threads * k:(b + 1) * threads * k][pos]
        if partial:
            origin = (np.arange(threads)[:, None] // group) * group * k if width else 0
            limit = np.clip(valid - origin, 0, group * k) if width else valid
            in_range = (pos - origin) < limit
            if with_default:
                want = np.where(in_range, want, default.astype(dtype))
                np.testing.assert_array_equal(got, want)
            else:
                np.testing.assert_array_equal(got[in_range], want[in_range])
        else:
            np.testing.assert_array_equal(got, want)


def check_store(algorithm, width, block, k, dtype, partial=False):
    threads = int(np.prod(block))
    group = threads if width == 0 else width
    n = GRID * threads * k
    src = random_data(n, dtype)
    original = src.copy()
    dst = poisoned(n, dtype)
    valid = (threads * k) // 3 + 1
    kernel = make_store_kernel(algorithm, width, partial)
    launch(kernel, block, src, dst, k, np.int32(valid))
    np.testing.assert_array_equal(src, original)  # payload preserved
    pos = positions(algorithm, threads, group, k)
    want = poisoned(n, dtype)
    for b in range(GRID):
        tile = original[b * threads * k:(b + 1) * threads * k].reshape(threads, k)
        block_want = want[b * threads * k:(b + 1) * threads * k]
        if partial:
            origin = (np.arange(threads)[:, None] // group) * group * k if width else 0
            limit = np.clip(valid - origin, 0, group * k) if width else valid
            mask = (pos - origin) < limit
            block_want[pos[mask]] = tile[mask]
        else:
            block_want[pos] = tile
    np.testing.assert_array_equal(dst, want)


BLOCKS = [(128,), (32, 4), (8, 4, 4)]
DTYPES = [np.int8, np.int32, np.uint64, np.float32, np.float64]
ALGORITHMS = ("direct", "striped", "vectorize", "transpose", "warp_transpose", "warp_transpose_timesliced")


def _block_cases():
    cases = []
    n = 0
    for algorithm in ALGORITHMS:
        for block in BLOCKS:
            for k in (1, 2, 4, 7):
                cases.append((algorithm, block, k, DTYPES[n % len(DTYPES)]))
                n += 1
    return cases


@pytest.mark.parametrize("algorithm,block,k,dtype", _block_cases())
def test_block_load_store(algorithm, block, k, dtype):
    check_load(algorithm, 0, block, k, dtype)
    check_store(algorithm, 0, block, k, dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("algorithm", ["transpose", "vectorize"])
def test_block_dtypes(algorithm, dtype):
    check_load(algorithm, 0, (128,), 4, dtype)
    check_store(algorithm, 0, (128,), 4, dtype)


@pytest.mark.parametrize("width", [32, 16, 8, 4, 2, 1])
@pytest.mark.parametrize("algorithm", ["direct", "striped", "vectorize", "transpose"])
def test_warp_load_store(algorithm, width):
    k = (1, 4, 7)[width % 3]
    dtype = DTYPES[(width + len(algorithm)) % len(DTYPES)]
    block = BLOCKS[width % 3]
    check_load(algorithm, width, block, k, dtype)
    check_store(algorithm, width, block, k, dtype)


@pytest.mark.parametrize("with_default", [False, True])
@pytest.mark.parametrize("width,algorithm", [(0, "direct"), (0, "transpose"), (0, "warp_transpose"), (0, "striped")])
def test_partial_tiles(width, algorithm, with_default):
    check_load(algorithm, width, (128,), 4, np.int32, partial=True, with_default=with_default)
    check_store(algorithm, width, (128,), 4, np.float32, partial=True)


def make_warp_partial_kernels(algorithm, width, with_default):
    """Load then store on warps/logical warps where every group passes its own count (SPEC 8.1)."""

    @cuda.jit
    def load_kernel(src, out, k, counts, default):
        block = coop.this_block()
        group = coop.this_warp() if width == 32 else coop.this_warp().group_by(width)
        items = coop.ThreadData(k)
        tile = np.int64(cuda.blockIdx.x) * block.count() * k
        valid = counts[cuda.blockIdx.x, block.rank() // width]
        if with_default:
            coop.load(group, src, items, algorithm=algorithm, offset=tile, valid_items=valid, oob_default=default)
        else:
            coop.load(group, src, items, algorithm=algorithm, offset=tile, valid_items=valid)
        me = tile + np.int64(block.rank()) * k
        for i in range(k):
            out[me + i] = items[i]

    @cuda.jit
    def store_kernel(src, dst, k, counts):
        block = coop.this_block()
        group = coop.this_warp() if width == 32 else coop.this_warp().group_by(width)
        items = coop.ThreadData(k)
        tile = np.int64(cuda.blockIdx.x) * block.count() * k
        me = tile + np.int64(block.rank()) * k
        for i in range(k):
            items[i] = src[me + i]
        coop.store(group, dst, items, algorithm=algorithm, offset=tile,
                   valid_items=counts[cuda.blockIdx.x, block.rank() // width])

    return load_kernel, store_kernel


def group_counts(threads, width, k):
    """One count per (block, group): 0, the full tile and partial values, different in sibling groups."""
    groups = threads // width
    tile = width * k
    counts = rng.integers(0, tile + 1, size=(GRID, groups)).astype(np.int32)
    counts.flat[0], counts.flat[-1] = 0, tile
    if counts.size > 2:
        counts.flat[1] = max(tile - 1, 0)
    return counts


def check_warp_partial(algorithm, width, block, k, dtype, with_default):
    threads = int(np.prod(block))
    n = GRID * threads * k
    counts = group_counts(threads, width, k)
    load_kernel, store_kernel = make_warp_partial_kernels(algorithm, width, with_default)
    pos = positions(algorithm, threads, width, k)
    origin = (np.arange(threads)[:, None] // width) * width * k
    src = random_data(n, dtype)
    original = src.copy()
    out = poisoned(n, dtype)
    default = random_data(1, dtype)[0]
    launch(load_kernel, block, src, out, k, counts, default)
    dst = poisoned(n, dtype)
    launch(store_kernel, block, src, dst, k, counts)
    np.testing.assert_array_equal(src, original)
    want_dst = poisoned(n, dtype)
    for b in range(GRID):
        limit = counts[b][np.arange(threads) // width][:, None]
        in_range = (pos - origin) < limit
        tile = original[b * threads * k:(b + 1) * threads * k]
        got = out[b * threads * k:(b + 1) * threads * k].reshape(threads, k)
        want = tile[pos]
        if with_default:
            np.testing.assert_array_equal(got, np.where(in_range, want, default))
        else:
            np.testing.assert_array_equal(got[in_range], want[in_range])
        block_want = want_dst[b * threads * k:(b + 1) * threads * k]
        block_want[pos[in_range]] = tile.reshape(threads, k)[in_range]
    np.testing.assert_array_equal(dst, want_dst)



@pytest.mark.parametrize("with_default", [False, True])
@pytest.mark.parametrize("width", [32, 16, 8, 4, 2, 1])
@pytest.mark.parametrize("algorithm", ["direct", "striped", "vectorize", "transpose"])
def test_warp_partial_tiles_own_counts(algorithm, width, with_default):
    block = BLOCKS[(width + len(algorithm)) % 3]
    k = (1, 2, 4)[width % 3]
    dtype = (np.int32, np.float32, np.int64)[(width + with_default) % 3]
    check_warp_partial(algorithm, width, block, k, dtype, with_default)


@pytest.mark.parametrize("sharing", ["shared", "exclusive"])
@pytest.mark.parametrize("auto_sync", [False, True])
def test_explicit_storage(sharing, auto_sync):
    @cuda.jit
    def kernel(src, dst, k):
        block = coop.this_block()
        scratch = coop.TempStorage(sharing=sharing, auto_sync=auto_sync)
        items = coop.ThreadData(k)
        tile = np.int64(cuda.blockIdx.x) * block.count() * k
        coop.load(block, src, items, algorithm="transpose", temp_storage=scratch, offset=tile)
        if not auto_sync:
            block.sync()
        items[0] = items[0] + np.int32(1)
        coop.store(block, dst, items, algorithm="warp_transpose", temp_storage=scratch, offset=tile)

    n = GRID * 128 * 4
    src = random_data(n, np.int32)
    dst = poisoned(n, np.int32)
    launch(kernel, (128,), src, dst, 4)
    want = src.copy()
    want[::4] += 1
    np.testing.assert_array_equal(dst, want)


def test_dynamic_shared_memory_over_48k():
    @cuda.jit
    def kernel(src, dst, k):
        block = coop.this_block()
        scratch = coop.TempStorage(64 * 1024, auto_sync=True)
        items = coop.ThreadData(k)
        tile = np.int64(cuda.blockIdx.x) * block.count() * k
        coop.load(block, src, items, algorithm="transpose", temp_storage=scratch, offset=tile)
        coop.store(block, dst, items, algorithm="transpose", temp_storage=scratch, offset=tile)

    n = GRID * 256 * 8
    src = random_data(n, np.float64)
    dst = poisoned(n, np.float64)
    launch(kernel, (256,), src, dst, 8)
    np.testing.assert_array_equal(dst, src)


def test_scalar_store_and_offset():
    @cuda.jit
    def kernel(src, dst, shift):
        block = coop.this_block()
        value = src[np.int64(cuda.blockIdx.x) * 64 + block.rank()] * np.int64(3)
        coop.store(block, dst, value, offset=np.int64(cuda.blockIdx.x) * 64 + shift)

    src = random_data(GRID * 64, np.int64) // 8
    dst = poisoned(GRID * 64 + 5, np.int64)
    launch(kernel, (64,), src, dst, np.int64(5))
    want = poisoned(GRID * 64 + 5, np.int64)
    want[5:] = src * 3
    np.testing.assert_array_equal(dst, want)
