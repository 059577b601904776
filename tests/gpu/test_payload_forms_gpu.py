"""The user's own local arrays as payloads of qualified calls (SPEC 9.1, 9.9) on the GPU against NumPy."""
from __future__ import annotations

import functools

import numpy as np
import pytest
from gpu_helpers import SEEDED_PER_TEST, poisoned
from numba_cuda_mlir import cuda

import cuda.coop.numba_mlir as numba_coop
from cuda import coop

pytestmark = pytest.mark.gpu
rng = SEEDED_PER_TEST  # each test draws from its own generator (tests/gpu/conftest.py)
GRID = 3


@functools.cache
def scan_kernel(k, numba_local):
    @cuda.jit
    def kernel(src, dst, totals, copy):
        block = coop.this_block()
        base = np.int64(cuda.blockIdx.x) * block.count() * k
        if numba_local:
            items = numba_coop.local.array(k, np.int32)
        else:
            items = cuda.local.array(k, np.int32)
        numba_coop.load(block, src, items, algorithm="transpose", offset=base)  # writes into the array
        numba_coop.store(block, copy, items, offset=base)  # the array itself as a store value
        scanned = numba_coop.exclusive_sum(block, items)
        numba_coop.store(block, dst, scanned, offset=base)
        total = numba_coop.sum(block, items)
        if block.rank() == 0:
            totals[cuda.blockIdx.x] = total

    return kernel


@pytest.mark.parametrize("threads", [32, 128])
@pytest.mark.parametrize("k", [1, 2, 4])
@pytest.mark.parametrize("numba_local", [False, True])
def test_local_arrays_through_load_scan_reduce_store(threads, k, numba_local):
    src = rng.integers(-100, 100, GRID * threads * k).astype(np.int32)
    original = src.copy()
    dst, copy, totals = poisoned(src.size, np.int32), poisoned(src.size, np.int32), poisoned(GRID, np.int32)
    scan_kernel(k, numba_local)[GRID, threads](src, dst, totals, copy)
    cuda.synchronize()
    tiles = src.reshape(GRID, -1)
    exclusive = np.cumsum(tiles, axis=1) - tiles
    np.testing.assert_array_equal(dst, exclusive.reshape(-1))
    np.testing.assert_array_equal(totals, tiles.sum(axis=1).astype(np.int32))
    np.testing.assert_array_equal(copy, src)
    np.testing.assert_array_equal(src, original)


@functools.cache
def sort_kernel(k):
    @cuda.jit
    def kernel(src, dst):
        block = coop.this_block()
        base = np.int64(cuda.blockIdx.x) * block.count() * k
        keys = cuda.local.array(k, np.float64)
        numba_coop.load(block, src, keys, offset=base)
        numba_coop.store(block, dst, numba_coop.merge_sort_keys(block, keys), offset=base)

    return kernel


@pytest.mark.parametrize("k", [1, 4])
def test_local_array_keys_sort(k):
    threads = 64
    src = rng.normal(size=GRID * threads * k)
    dst = poisoned(src.size, np.float64)
    sort_kernel(k)[GRID, threads](src, dst)
    cuda.synchronize()
    np.testing.assert_array_equal(dst, np.sort(src.reshape(GRID, -1), axis=1).reshape(-1))


@functools.cache
def rows_kernel(k, in_backing):
    @cuda.jit
    def kernel(src, dst, copy):
        block = coop.this_block()
        base = np.int64(cuda.blockIdx.x) * block.count() * k
        if in_backing:
            rows = numba_coop.shared.array((128, k), np.int32)
        else:
            rows = cuda.shared.array((128, k), np.int32)
        mine = rows[block.rank()]
        numba_coop.load(block, src, mine, algorithm="transpose", offset=base)
        numba_coop.store(block, dst, numba_coop.inclusive_sum(block, rows[block.rank()]), offset=base)
        numba_coop.store(block, copy, mine, offset=base, algorithm="direct")

    return kernel


@pytest.mark.parametrize("k", [1, 2, 4])
@pytest.mark.parametrize("in_backing", [True, False])
def test_shared_rows_as_payloads(k, in_backing):
    threads = 128
    src = rng.integers(-100, 100, GRID * threads * k).astype(np.int32)
    dst, copy = poisoned(src.size, np.int32), poisoned(src.size, np.int32)
    rows_kernel(k, in_backing)[GRID, threads](src, dst, copy)
    cuda.synchronize()
    np.testing.assert_array_equal(dst, np.cumsum(src.reshape(GRID, -1), axis=1).astype(np.int32).reshape(-1))
    np.testing.assert_array_equal(copy, src)


@functools.cache
def backing_kernel():
    """A numba_coop.shared.array beside dynamic backing (an explicit 50 KB TempStorage)."""
    @cuda.jit
    def kernel(src, dst):
        block = coop.this_block()
        temp = coop.TempStorage(size_in_bytes=50000)
        reversed_tile = numba_coop.shared.array(512, np.float64)
        items = coop.ThreadData(4)
        base = np.int64(cuda.blockIdx.x) * 512
        coop.load(block, src, items, algorithm="transpose", offset=base, temp_storage=temp)
        for i in range(4):
            reversed_tile[511 - (block.rank() * 4 + i)] = items[i]
        cuda.syncthreads()
        for i in range(4):
            dst[base + block.rank() * 4 + i] = reversed_tile[block.rank() * 4 + i]

    return kernel


def test_backing_array_beside_dynamic_backing():
    src = rng.normal(size=GRID * 512)
    dst = poisoned(src.size, np.float64)
    backing_kernel()[GRID, 128](src, dst)
    cuda.synchronize()
    np.testing.assert_array_equal(dst, src.reshape(GRID, 512)[:, ::-1].reshape(-1))


@functools.cache
def scalar_radix_kernel(descending, begin, end):
    @cuda.jit
    def kernel(src, dst, ranks):
        block = coop.this_block()
        t = cuda.blockIdx.x * block.count() + block.rank()
        key = src[t]
        dst[t] = numba_coop.radix_sort_keys(block, key, descending=descending)
        ranks[t] = numba_coop.radix_rank(block, key, begin_bit=begin, end_bit=end, descending=descending)

    return kernel


@pytest.mark.parametrize("threads", [32, 128])
@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize("dtype", [np.int32, np.uint32])
def test_scalar_keys_sort_and_rank(threads, descending, dtype):
    """One key per thread: the block's keys sorted (member t gets sorted position t) and each key's stable rank
    by its digit of bits [3, 7)."""
    begin, end = 3, 7
    src = rng.integers(-5000 if dtype == np.int32 else 0, 5000, GRID * threads).astype(dtype)
    dst, ranks = poisoned(src.size, dtype), poisoned(src.size, np.int32)
    scalar_radix_kernel(descending, begin, end)[GRID, threads](src, dst, ranks)
    cuda.synchronize()
    tiles = src.reshape(GRID, threads)
    expected = np.sort(tiles, axis=1)
    np.testing.assert_array_equal(dst, (expected[:, ::-1] if descending else expected).reshape(-1))
    digits = (tiles.astype(np.int64) >> begin) & ((1 << (end - begin)) - 1)
    order = np.argsort(-digits if descending else digits, axis=1, kind="stable")
    want = np.empty_like(order)
    np.put_along_axis(want, order, np.arange(threads)[None, :].repeat(GRID, 0), axis=1)
    np.testing.assert_array_equal(ranks, want.reshape(-1).astype(np.int32))


@functools.cache
def scalar_pairs_kernel(descending):
    @cuda.jit
    def kernel(keys, values, keys_out, values_out):
        block = coop.this_block()
        t = cuda.blockIdx.x * block.count() + block.rank()
        key, value = numba_coop.radix_sort_pairs(block, keys[t], values[t], descending=descending)
        keys_out[t] = key
        values_out[t] = value

    return kernel


@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize("key_dtype,value_dtype", [(np.int32, np.float64), (np.uint32, np.int8),
                                                   (np.float16, np.float16)])
def test_scalar_pairs_sort(descending, key_dtype, value_dtype):
    """One key and one value per thread (SPEC 9.1): member t receives the pair at sorted position t (stable)."""
    threads = 128
    n = GRID * threads
    keys = rng.integers(0, 40, n).astype(key_dtype)  # repeated keys: stability shows
    values = rng.integers(-100, 100, n).astype(value_dtype)
    keys_out, values_out = poisoned(n, key_dtype), poisoned(n, value_dtype)
    keep = keys.copy(), values.copy()
    scalar_pairs_kernel(descending)[GRID, threads](keys, values, keys_out, values_out)
    cuda.synchronize()
    np.testing.assert_array_equal(keys, keep[0])
    np.testing.assert_array_equal(values, keep[1])
    key_tiles, value_tiles = keys.reshape(GRID, threads), values.reshape(GRID, threads)
    # CUB's descending radix sort is stable too: equal keys keep their input order
    order = np.argsort(-key_tiles.astype(np.float64) if descending else key_tiles, axis=1, kind="stable")
    np.testing.assert_array_equal(keys_out, np.take_along_axis(key_tiles, order, axis=1).reshape(-1))
    np.testing.assert_array_equal(values_out, np.take_along_axis(value_tiles, order, axis=1).reshape(-1))
