"""histogram on the GPU against np.bincount (SPEC 8.14): striped counters, both algorithms, every sample and
counter dtype, bins spread over several counters per thread, accumulation across tiles."""
from __future__ import annotations

import functools

import numpy as np
import pytest
from gpu_helpers import SEEDED_PER_TEST, poisoned
from numba_cuda_mlir import cuda

import cuda.coop.numba_mlir as numba_coop  # the alias keeps the name `cuda` numba_cuda_mlir's
from cuda import coop

pytestmark = pytest.mark.gpu
GRID = 3
rng = SEEDED_PER_TEST  # each test draws from its own generator (tests/gpu/conftest.py)
SHAPES = [(32, 1, 1), (128, 1, 1), (256, 1, 1)]  # histogram takes 1-D blocks only
SAMPLE_DTYPES = [np.uint8, np.int32, np.uint32, np.int64, np.uint64]
COUNTER_DTYPES = [np.int32, np.uint32, np.int64, np.uint64]


def samples(n, bins, dtype):
    """Random bin indices in [0, bins), never all equal."""
    return rng.integers(0, bins, n).astype(dtype)


def launch(kernel, shape, *args):
    kernel[GRID, shape](*args)
    cuda.synchronize()


@functools.cache
def histogram_kernel(k, bins, per_thread, counter, algorithm):
    """Block b counts its tile ``src[b*T*k : (b+1)*T*k]`` and stores its ``T*per_thread`` counters in bin order."""
    @cuda.jit
    def kernel(src, dst, kept):
        block = coop.this_block()
        base = np.int64(cuda.blockIdx.x) * block.count() * k
        items = coop.ThreadData(k)
        coop.load(block, src, items, offset=base)
        counts = coop.histogram(block, items, bins=bins, bins_per_thread=per_thread, counter_dtype=counter,
                                algorithm=algorithm)
        coop.store(block, dst, counts, offset=np.int64(cuda.blockIdx.x) * block.count() * per_thread,
                   algorithm="striped")
        coop.store(block, kept, items, offset=base)  # the input payload is unchanged

    return kernel


def expected_counts(src, threads, k, bins, per_thread, counter):
    """np.bincount of each block's tile, padded with zero counters up to T*per_thread bins."""
    tiles = src.reshape(GRID, threads * k).astype(np.int64)
    return np.concatenate([np.bincount(tile, minlength=threads * per_thread) for tile in tiles]).astype(counter)


def check(shape, k, bins, per_thread, sample, counter, algorithm):
    threads = shape[0]
    src = samples(GRID * threads * k, bins, sample)
    original = src.copy()
    dst = poisoned(GRID * threads * per_thread, counter)
    kept = poisoned(src.size, sample)
    launch(histogram_kernel(k, bins, per_thread, None if counter is np.int32 else counter, algorithm), shape,
           src, dst, kept)
    expected = expected_counts(src, threads, k, bins, per_thread, counter)
    np.testing.assert_array_equal(dst, expected)
    np.testing.assert_array_equal(kept, original)
    np.testing.assert_array_equal(src, original)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("k", [1, 2, 4])
@pytest.mark.parametrize("algorithm", ["atomic", "sort"])
def test_block_histogram(shape, k, algorithm):
    """bins < T: the members past the last bin hold zero counters."""
    check(shape, k, shape[0] - 5, 1, np.int32, np.int32, algorithm)


@pytest.mark.parametrize("sample", SAMPLE_DTYPES)
@pytest.mark.parametrize("algorithm", ["atomic", "sort"])
def test_every_sample_dtype(sample, algorithm):
    check((128, 1, 1), 2, 100, 1, sample, np.int32, algorithm)


@pytest.mark.parametrize("counter", COUNTER_DTYPES)
@pytest.mark.parametrize("algorithm", ["atomic", "sort"])
def test_every_counter_dtype(counter, algorithm):
    check((128, 1, 1), 4, 128, 1, np.uint8, counter, algorithm)


@pytest.mark.parametrize("shape, bins, per_thread", [((32, 1, 1), 70, 3), ((128, 1, 1), 300, 3),
                                                     ((256, 1, 1), 600, 4)])
@pytest.mark.parametrize("algorithm", ["atomic", "sort"])
def test_several_bins_per_thread(shape, bins, per_thread, algorithm):
    """bins not a multiple of T, spread over striped counters: member t slot i holds bin t + i*T."""
    check(shape, 4, bins, per_thread, np.int64, np.int32, algorithm)


@pytest.mark.parametrize("algorithm", ["atomic", "sort"])
def test_skewed_samples_fill_one_bin(algorithm):
    """Most samples in one bin: its count reaches most of the tile (atomic contention, one long sorted run)."""
    threads, k, bins = 128, 4, 10
    src = np.full(GRID * threads * k, 7, np.int32)
    src[::5] = 2
    dst = poisoned(GRID * threads, np.int32)
    kept = poisoned(src.size, np.int32)
    launch(histogram_kernel(k, bins, 1, None, algorithm), (threads, 1, 1), src, dst, kept)
    np.testing.assert_array_equal(dst, expected_counts(src, threads, k, bins, 1, np.int32))
    np.testing.assert_array_equal(kept, src)


@functools.cache
def accumulate_kernel(k, bins, per_thread, counter, algorithm, explicit):
    """Block b counts two consecutive tiles (two calls, or a loop over one call with an explicit descriptor)
    and adds the returned payloads element-wise."""
    cast = np.dtype(counter).type
    if explicit:
        @cuda.jit
        def looped(src, dst):
            block = coop.this_block()
            temp = coop.TempStorage(auto_sync=True)
            base = np.int64(cuda.blockIdx.x) * block.count() * k * 2
            total = coop.ThreadData(per_thread, dtype=counter)
            for i in range(per_thread):
                total[i] = cast(0)
            for tile in range(2):
                items = coop.ThreadData(k)
                coop.load(block, src, items, offset=base + tile * block.count() * k)
                counts = coop.histogram(block, items, bins=bins, bins_per_thread=per_thread, counter_dtype=counter,
                                        algorithm=algorithm, temp_storage=temp)
                for i in range(per_thread):
                    total[i] = cast(total[i] + counts[i])
            coop.store(block, dst, total, offset=np.int64(cuda.blockIdx.x) * block.count() * per_thread,
                       algorithm="striped")

        return looped

    @cuda.jit
    def two_calls(src, dst):
        block = coop.this_block()
        base = np.int64(cuda.blockIdx.x) * block.count() * k * 2
        first = coop.ThreadData(k)
        second = coop.ThreadData(k)
        coop.load(block, src, first, offset=base)
        coop.load(block, src, second, offset=base + block.count() * k)
        a = coop.histogram(block, first, bins=bins, bins_per_thread=per_thread, counter_dtype=counter,
                           algorithm=algorithm)
        b = coop.histogram(block, second, bins=bins, bins_per_thread=per_thread, counter_dtype=counter,
                           algorithm=algorithm)
        total = coop.ThreadData(per_thread, dtype=counter)
        for i in range(per_thread):
            total[i] = cast(a[i] + b[i])
        coop.store(block, dst, total, offset=np.int64(cuda.blockIdx.x) * block.count() * per_thread,
                   algorithm="striped")

    return two_calls


@pytest.mark.parametrize("algorithm", ["atomic", "sort"])
@pytest.mark.parametrize("explicit", [False, True])
@pytest.mark.parametrize("counter", [np.int32, np.uint64])
def test_accumulate_across_tiles(algorithm, explicit, counter):
    threads, k, bins, per_thread = 128, 2, 200, 2
    src = samples(GRID * 2 * threads * k, bins, np.uint32)
    original = src.copy()
    dst = poisoned(GRID * threads * per_thread, counter)
    launch(accumulate_kernel(k, bins, per_thread, counter, algorithm, explicit), (threads, 1, 1), src, dst)
    tiles = src.reshape(GRID, 2 * threads * k).astype(np.int64)
    expected = np.concatenate([np.bincount(t, minlength=threads * per_thread) for t in tiles]).astype(counter)
    np.testing.assert_array_equal(dst, expected)
    np.testing.assert_array_equal(src, original)


@functools.cache
def scalar_histogram_kernel(bins, per_thread, algorithm):
    """SPEC 9.1: each thread counts one scalar sample (the qualified namespace)."""
    @cuda.jit
    def kernel(src, dst):
        block = coop.this_block()
        sample = src[cuda.blockIdx.x * block.count() + block.rank()]
        counts = numba_coop.histogram(block, sample, bins=bins, bins_per_thread=per_thread, algorithm=algorithm)
        coop.store(block, dst, counts, offset=np.int64(cuda.blockIdx.x) * block.count() * per_thread,
                   algorithm="striped")

    return kernel


@pytest.mark.parametrize("sample", [np.uint8, np.int32, np.uint64])
@pytest.mark.parametrize("algorithm", ["atomic", "sort"])
def test_scalar_samples(sample, algorithm):
    threads, bins, per_thread = 128, 200, 2
    src = samples(GRID * threads, bins, sample)
    dst = poisoned(GRID * threads * per_thread, np.int32)
    launch(scalar_histogram_kernel(bins, per_thread, algorithm), (threads, 1, 1), src, dst)
    np.testing.assert_array_equal(dst, expected_counts(src, threads, 1, bins, per_thread, np.int32))


# ---------------------------------------------------------------------------------------- partial tiles (SPEC 8.23)


@functools.cache
def partial_kernel(k, bins, per_thread, counter, algorithm):
    """Only the first ``valid`` blocked positions of each tile count; the others are never loaded."""
    @cuda.jit
    def kernel(src, dst, valid):
        block = coop.this_block()
        base = np.int64(cuda.blockIdx.x) * block.count() * k
        items = coop.ThreadData(k)
        coop.load(block, src, items, offset=base, valid_items=valid)
        counts = coop.histogram(block, items, bins=bins, bins_per_thread=per_thread, counter_dtype=counter,
                                algorithm=algorithm, valid_items=valid)
        coop.store(block, dst, counts, offset=np.int64(cuda.blockIdx.x) * block.count() * per_thread,
                   algorithm="striped")

    return kernel


@pytest.mark.parametrize("sample, bins", [(np.uint8, 256), (np.int32, 200), (np.uint64, 37)])
@pytest.mark.parametrize("counter", [np.int32, np.int64])
@pytest.mark.parametrize("algorithm", ["atomic", "sort"])
def test_partial_tiles(sample, bins, counter, algorithm):
    threads, k, per_thread = 128, 3, 2
    tile = threads * k
    src = samples(GRID * tile, bins, sample)
    for valid in (0, 1, 250, tile):
        dst = poisoned(GRID * threads * per_thread, counter)
        launch(partial_kernel(k, bins, per_thread, None if counter is np.int32 else counter, algorithm),
               (threads, 1, 1), src, dst, np.int32(valid))
        expected = np.concatenate([np.bincount(t[:valid].astype(np.int64), minlength=threads * per_thread)
                                   for t in src.reshape(GRID, tile)]).astype(counter)
        np.testing.assert_array_equal(dst, expected)


@pytest.mark.parametrize("algorithm", ["atomic", "sort"])
def test_scalar_samples_partial_tile(algorithm):
    @cuda.jit
    def kernel(src, dst, valid):
        block = coop.this_block()
        sample = src[cuda.blockIdx.x * block.count() + block.rank()]
        counts = numba_coop.histogram(block, sample, bins=256, bins_per_thread=2, algorithm=algorithm,
                                      valid_items=valid)
        coop.store(block, dst, counts, offset=np.int64(cuda.blockIdx.x) * block.count() * 2, algorithm="striped")

    threads = 128
    src = samples(GRID * threads, 256, np.uint8)
    for valid in (0, 100, threads):
        dst = poisoned(GRID * threads * 2, np.int32)
        launch(kernel, (threads, 1, 1), src, dst, np.int32(valid))
        expected = np.concatenate([np.bincount(t[:valid], minlength=2 * threads) for t in src.reshape(GRID, threads)])
        np.testing.assert_array_equal(dst, expected.astype(np.int32))
