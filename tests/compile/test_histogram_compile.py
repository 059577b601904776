"""sm_90 builds of histogram without a GPU, and its compile-time errors (SPEC 8.14)."""
from __future__ import annotations

import re

import numpy as np
import pytest
from numba_cuda_mlir import cuda

import cuda.coop.numba_mlir as numba_coop
from cuda import coop
from cuda.coop._cub import toolchain

from compile_helpers import build_kernel, expect_compile_error

SAMPLE_DTYPES = [np.uint8, np.int32, np.uint32, np.int64, np.uint64]
COUNTER_DTYPES = [None, np.int32, np.uint32, np.int64, np.uint64]


def _kernel(k=2, bins=64, per_thread=1, counter=None, algorithm="atomic"):
    @cuda.jit
    def kernel(src, dst):
        block = coop.this_block()
        items = coop.ThreadData(k)
        coop.load(block, src, items)
        counts = coop.histogram(block, items, bins=bins, bins_per_thread=per_thread, counter_dtype=counter,
                                algorithm=algorithm)
        coop.store(block, dst, counts, algorithm="striped")

    return kernel


def _out(counter, n=1024):
    return np.zeros(n, np.int32 if counter is None else counter)


# Each sample dtype and each counter dtype with each algorithm, in pairs that differ between the algorithms: the
# sample type and the counter type are independent template arguments of CUB's histogram, so every pairing of the
# two (the 50 builds this once was) proves nothing the 10 below do not.
_PAIRS = [("atomic", sample, counter) for sample, counter in zip(SAMPLE_DTYPES, COUNTER_DTYPES)] + \
    [("sort", sample, counter) for sample, counter in zip(SAMPLE_DTYPES, COUNTER_DTYPES[1:] + COUNTER_DTYPES[:1])]


@pytest.mark.parametrize("algorithm, sample, counter", _PAIRS)
def test_builds_for_every_sample_and_counter_dtype(algorithm, sample, counter):
    built = build_kernel(_kernel(counter=counter, algorithm=algorithm), (np.zeros(1024, sample), _out(counter)))
    src = built.cpp_source
    assert f"cub::BLOCK_HISTO_{algorithm.upper()}" in src
    counting = {None: "int", np.int32: "int", np.uint32: "unsigned int", np.int64: "unsigned long long",
                np.uint64: "unsigned long long"}[counter]
    # int64 counts in unsigned long long (CUB has no signed atomic): the counters' type, after the samples'
    assert re.search(rf"cuda_coop::BlockHistogramStriped<[^,<>]+, {counting}, [^,<>]+, 128, 2, 64, ", src)
    counter_bytes = 64 * np.dtype(counter or np.int32).itemsize
    assert built.metadata["scratch_bytes"] >= counter_bytes  # CUB's storage plus the shared counters


def test_sort_counts_a_private_copy():
    src = build_kernel(_kernel(algorithm=" Sort "), (np.zeros(1024, np.int32), _out(None))).cpp_source
    assert "algo.Histogram(samples, output);" in src
    header = (toolchain.OWN_INCLUDE / "cuda_coop" / "block" / "block_histogram_striped.cuh").read_text()
    assert "items[i] = samples[i];" in header and "CubHistogram(storage.algo).Histogram(items, " in header


@pytest.mark.parametrize("algorithm", ["atomic", "sort"])
@pytest.mark.parametrize("block, bins, per_thread", [(32, 70, 3), (128, 300, 3), (256, 1000, 4), (96, 96, 1)])
def test_several_bins_per_thread(algorithm, block, bins, per_thread):
    built = build_kernel(_kernel(k=4, bins=bins, per_thread=per_thread, counter=np.int64, algorithm=algorithm),
                         (np.zeros(4096, np.int64), _out(np.int64, 4096)), block=block)
    # per_thread striped slots, bins past the last zero (include/cuda_coop/block/block_histogram_striped.cuh)
    assert f", {bins}, {per_thread}, cub::BLOCK_HISTO_{algorithm.upper()}, 1, 1>" in built.cpp_source


def test_explicit_temp_storage():
    @cuda.jit
    def kernel(src, dst):
        block = coop.this_block()
        temp = coop.TempStorage()
        items = coop.ThreadData(2)
        coop.load(block, src, items)
        counts = coop.histogram(block, items, bins=100, temp_storage=temp, algorithm="sort")
        coop.store(block, dst, counts, algorithm="striped")

    built = build_kernel(kernel, (np.zeros(1024, np.uint32), _out(None)))
    assert built.metadata["scratch_bytes"] >= 400
    provider = next(part for part in built.cpp_source.split('extern "C"')
                    if "BlockHistogram" in part and "void" in part)
    assert "reuse barrier" not in provider  # auto_sync=False: the kernel synchronises


def test_accumulating_two_calls_builds():
    @cuda.jit
    def kernel(src, dst):
        block = coop.this_block()
        first = coop.ThreadData(2)
        second = coop.ThreadData(2)
        coop.load(block, src, first)
        coop.load(block, src, second, offset=256)
        a = coop.histogram(block, first, bins=200, bins_per_thread=2, counter_dtype=np.uint32)
        b = coop.histogram(block, second, bins=200, bins_per_thread=2, counter_dtype=np.uint32)
        total = coop.ThreadData(2, dtype=np.uint32)
        for i in range(2):
            total[i] = np.uint32(a[i] + b[i])
        coop.store(block, dst, total, algorithm="striped")

    build_kernel(kernel, (np.zeros(1024, np.uint8), _out(np.uint32)))


def test_python_int_counter_means_int32():
    built = build_kernel(_kernel(counter=int), (np.zeros(1024, np.int32), _out(np.int32)))
    assert "int* output" in built.cpp_source


# ------------------------------------------------------------------------------------------------ errors


def test_bins_not_covered_is_o11():
    expect_compile_error(_kernel(bins=300, per_thread=2), (np.zeros(1024, np.int32), _out(None)), coop.CoopValueError,
                         "cuda.coop.histogram requires block_threads * bins_per_thread >= bins (128 * 2 < 300)")


def test_two_dimensional_block_is_g16():
    expect_compile_error(_kernel(), (np.zeros(1024, np.int32), _out(None)), coop.CoopUnsupportedError,
                         "cuda.coop.histogram requires a one-dimensional block; block shape is (32, 4, 1)",
                         block=(32, 4))
    expect_compile_error(_kernel(), (np.zeros(1024, np.int32), _out(None)), coop.CoopUnsupportedError,
                         "cuda.coop.histogram requires a one-dimensional block; block shape is (8, 4, 2)",
                         block=(8, 4, 2))


def test_warp_groups_are_g3():
    @cuda.jit
    def kernel(src, dst):
        items = coop.ThreadData(2)
        coop.load(coop.this_block(), src, items)
        coop.store(coop.this_block(), dst, coop.histogram(coop.this_warp(), items, bins=16), algorithm="striped")

    expect_compile_error(kernel, (np.zeros(1024, np.int32), _out(None)), coop.CoopUnsupportedError,
                         "cuda.coop.histogram does not support group kind 'warp'; supported group kinds: block")


@pytest.mark.parametrize("sample", [np.float32, np.int16, np.int8, np.uint16, np.float64])
def test_sample_dtype_is_p2(sample):
    expect_compile_error(_kernel(), (np.zeros(1024, sample), _out(None)), coop.CoopTypeError,
                         f"cuda.coop.histogram does not support samples dtype {np.dtype(sample).name}; supported: "
                         "uint8, int32, uint32, int64, uint64")


@pytest.mark.parametrize("counter, shown", [(np.float32, "float32"), (np.int16, "int16"), (np.uint8, "uint8")])
def test_counter_dtype_is_p2(counter, shown):
    expect_compile_error(_kernel(counter=counter), (np.zeros(1024, np.int32), _out(None)), coop.CoopTypeError,
                         f"cuda.coop.histogram does not support counter_dtype dtype {shown}; supported: "
                         "int32, uint32, int64, uint64")


@pytest.mark.parametrize("counter, hint", [("int32", ": pass np.int32"), ("int128", "")])
def test_counter_dtype_string_is_p12(counter, hint):
    """A dtype named by a string is refused as ThreadData's is (P12), saying which type to pass; it was P2 saying
    'int32' is not supported while listing int32."""
    expect_compile_error(_kernel(counter=counter), (np.zeros(1024, np.int32), _out(None)), coop.CoopTypeError,
                         f"cuda.coop.histogram counter_dtype must be a NumPy scalar type, not the string "
                         f"{counter!r}{hint}")


def test_unknown_algorithm_is_c2():
    expect_compile_error(_kernel(algorithm="radix"), (np.zeros(1024, np.int32), _out(None)), coop.CoopValueError,
                         "cuda.coop.histogram algorithm must be one of: atomic, sort; got 'radix'")


def test_algorithm_must_be_a_string_c1():
    expect_compile_error(_kernel(algorithm=1), (np.zeros(1024, np.int32), _out(None)), coop.CoopTypeError,
                         "cuda.coop.histogram algorithm must be a string; got int")


def test_runtime_bins_is_c4():
    @cuda.jit
    def kernel(src, dst):
        items = coop.ThreadData(2)
        coop.load(coop.this_block(), src, items)
        coop.store(coop.this_block(), dst, coop.histogram(coop.this_block(), items, bins=src[0]), algorithm="striped")

    expect_compile_error(kernel, (np.zeros(1024, np.int32), _out(None)), coop.CoopTypeError,
                         "cuda.coop.histogram bins must be a compile-time integer")


def test_runtime_bins_per_thread_is_c4():
    @cuda.jit
    def kernel(src, dst):
        items = coop.ThreadData(2)
        coop.load(coop.this_block(), src, items)
        counts = coop.histogram(coop.this_block(), items, bins=16, bins_per_thread=src[0])
        coop.store(coop.this_block(), dst, counts, algorithm="striped")

    expect_compile_error(kernel, (np.zeros(1024, np.int32), _out(None)), coop.CoopTypeError,
                         "cuda.coop.histogram bins_per_thread must be a compile-time integer")


def test_integer_kernel_argument_specialises_bins():
    """SPEC 7.2: an integer kernel argument is a compile-time value (the kernel specialises on it)."""
    @cuda.jit
    def kernel(src, dst, bins):
        items = coop.ThreadData(2)
        coop.load(coop.this_block(), src, items)
        coop.store(coop.this_block(), dst, coop.histogram(coop.this_block(), items, bins=bins), algorithm="striped")

    built = build_kernel(kernel, (np.zeros(1024, np.int32), _out(None), 77))
    assert "cuda_coop::BlockHistogramStriped<int, int, int, 128, 2, 77," in built.cpp_source


@pytest.mark.parametrize("bins, per_thread, message", [
    (0, 1, "cuda.coop.histogram bins must be positive; got 0"),
    (-3, 1, "cuda.coop.histogram bins must be positive; got -3"),
    (16, 0, "cuda.coop.histogram bins_per_thread must be positive; got 0"),
])
def test_nonpositive_bins_are_value_errors(bins, per_thread, message):
    expect_compile_error(_kernel(bins=bins, per_thread=per_thread), (np.zeros(1024, np.int32), _out(None)),
                         coop.CoopValueError, message)


def test_float_bins_are_type_errors():
    expect_compile_error(_kernel(bins=16.0), (np.zeros(1024, np.int32), _out(None)), coop.CoopTypeError,
                         "cuda.coop.histogram bins must be a compile-time integer")


def test_sort_tile_limit_is_p17():
    expect_compile_error(_kernel(k=128, algorithm="sort"), (np.zeros(1 << 17, np.int32), _out(None)),
                         coop.CoopValueError,
                         "cuda.coop.histogram tile of 131072 items exceeds CUB's limit of 65535 for this algorithm",
                         block=1024)


def test_bins_per_thread_must_fit_int32():
    expect_compile_error(_kernel(per_thread=1 << 22), (np.zeros(1024, np.uint8), _out(None)), coop.CoopValueError,
                         "cuda.coop.histogram block_threads * bins_per_thread must fit int32 (1024 "
                         "* 4194304 > 2147483647)", block=1024)


def test_scalar_samples():
    """A scalar sample is a qualified-only form (SPEC 9.1): P4 in the common API."""
    def make(histogram):
        @cuda.jit
        def kernel(src, dst):
            sample = src[cuda.threadIdx.x]
            coop.store(coop.this_block(), dst, histogram(coop.this_block(), sample, bins=16), algorithm="striped")

        return kernel

    expect_compile_error(make(coop.histogram), (np.zeros(1024, np.int32), _out(None)), coop.CoopTypeError,
                         "cuda.coop.histogram requires a fixed-size ThreadData samples payload in the common API; use "
                         "cuda.coop.numba_mlir for scalar payloads")
    build_kernel(make(numba_coop.histogram), (np.zeros(1024, np.int32), _out(None)))  # the qualified form builds


# ------------------------------------------------------------------------------------------------ scalar samples


def test_qualified_scalar_samples_build():
    """SPEC 9.1: cuda.coop.numba_mlir.histogram counts one scalar sample per thread."""
    @cuda.jit
    def kernel(src, dst):
        block = coop.this_block()
        counts = numba_coop.histogram(block, src[cuda.threadIdx.x], bins=100)
        coop.store(block, dst, counts, algorithm="striped")

    built = build_kernel(kernel, (np.zeros(1024, np.uint8), _out(None)))
    assert "unsigned char sample," in built.cpp_source and "algo.Histogram(sample, output);" in built.cpp_source


# ------------------------------------------------------------------------------------------------ partial tiles


def _partial_kernel(valid, algorithm, bins=256, per_thread=2, k=4):
    """valid_items (SPEC 8.23): a runtime count when ``valid`` is None (the kernel's ``n``), else the constant."""
    if valid is None:
        @cuda.jit
        def runtime(src, dst, n):
            block = coop.this_block()
            items = coop.ThreadData(k)
            coop.load(block, src, items)
            counts = coop.histogram(block, items, bins=bins, bins_per_thread=per_thread, algorithm=algorithm,
                                    valid_items=n)
            coop.store(block, dst, counts, algorithm="striped")
        return runtime

    @cuda.jit
    def static(src, dst, n):
        block = coop.this_block()
        items = coop.ThreadData(k)
        coop.load(block, src, items)
        counts = coop.histogram(block, items, bins=bins, bins_per_thread=per_thread, algorithm=algorithm,
                                valid_items=valid)
        coop.store(block, dst, counts, algorithm="striped")
    return static


def _provider(built):
    return next(part for part in built.cpp_source.split('extern "C"') if "BlockHistogramStriped<" in part)


@pytest.mark.parametrize("algorithm", ["atomic", "sort"])
def test_runtime_valid_items_counts_a_partial_tile_and_traps_out_of_range(algorithm):
    built = build_kernel(_partial_kernel(None, algorithm), (np.zeros(1024, np.uint8), _out(None), np.int32(300)))
    provider = _provider(built)
    assert "long long valid_items" in provider and "cuda_coop::check_range(valid_items, 0, 512);" in provider
    assert "algo.Histogram(samples, output, valid_items);" in provider
    assert f"unsigned char, int, int, 128, 4, 256, 2, cub::BLOCK_HISTO_{algorithm.upper()}" in provider
    assert "BPT.TRAP" in built.sass()  # the range check traps on the device
    header = (toolchain.OWN_INCLUDE / "cuda_coop" / "block" / "block_histogram_striped.cuh").read_text()
    # atomic: the per-item atomic guarded by the blocked position (slot i of the member's samples before
    # valid_items); sort: invalid samples as bin 0, taken back out
    assert "const int kept = (int)valid_items - (int)(linear_rank<BX, BY, BZ>() * K);" in header
    assert "if (i < kept) atomicAdd(storage.counters + samples[i], (Counter)1);" in header
    assert "items[i] = i < kept ? samples[i] : (T)0;" in header
    assert "Publish(output, (Counter)((long long)BX * BY * BZ * K - valid_items));" in header


@pytest.mark.parametrize("valid", [0, 1, 512])
def test_static_valid_items_is_a_constant(valid):
    built = build_kernel(_partial_kernel(valid, "sort"), (np.zeros(1024, np.uint8), _out(None), np.int32(0)))
    assert "algo.Histogram(samples, output, valid_items);" in _provider(built)


def test_without_valid_items_every_slot_counts():
    provider = _provider(build_kernel(_kernel(), (np.zeros(1024, np.int32), _out(None))))
    assert "valid_items" not in provider and "algo.Histogram(samples, output);" in provider


@pytest.mark.parametrize("counter", [np.uint32, np.int64, np.uint64])
def test_partial_tiles_with_every_counter_dtype(counter):
    @cuda.jit
    def kernel(src, dst, n):
        block = coop.this_block()
        items = coop.ThreadData(3)
        coop.load(block, src, items, valid_items=n)  # the slots past n are never written
        counts = coop.histogram(block, items, bins=100, counter_dtype=counter, algorithm="sort", valid_items=n)
        coop.store(block, dst, counts, algorithm="striped")

    built = build_kernel(kernel, (np.zeros(1024, np.int64), _out(counter), np.int64(7)))
    assert "algo.Histogram(samples, output, valid_items);" in _provider(built)


def test_scalar_samples_with_valid_items():
    """The qualified scalar form is a tile of one sample per thread: its sample is the one-item array."""
    @cuda.jit
    def kernel(src, dst, n):
        block = coop.this_block()
        counts = numba_coop.histogram(block, src[block.rank()], bins=100, valid_items=n)
        coop.store(block, dst, counts, algorithm="striped")

    provider = _provider(build_kernel(kernel, (np.zeros(1024, np.uint32), _out(None), np.uint32(5))))
    assert "check_range(valid_items, 0, 128);" in provider
    assert "algo.Histogram(&sample, output, valid_items);" in provider


def test_partial_tile_errors():
    args = (np.zeros(1024, np.uint8), _out(None), np.int32(0))
    expect_compile_error(_partial_kernel(513, "atomic"), args, coop.CoopValueError,
                         "cuda.coop.histogram static valid_items must be between 0 and 512; got 513",
                         line_marker="counts = coop.histogram(")

    @cuda.jit
    def with_oob_default(src, dst, n):
        block = coop.this_block()
        items = coop.ThreadData(4)
        coop.load(block, src, items)
        counts = coop.histogram(block, items, bins=256, bins_per_thread=2, valid_items=n, oob_default=0)
        coop.store(block, dst, counts, algorithm="striped")

    expect_compile_error(with_oob_default, args, coop.CoopTypeError,
                         "cuda.coop.histogram got an unexpected keyword argument 'oob_default'")

    @cuda.jit
    def computed_float(src, dst, n):
        block = coop.this_block()
        items = coop.ThreadData(4)
        coop.load(block, src, items)
        counts = coop.histogram(block, items, bins=256, bins_per_thread=2, valid_items=n * 0.5)
        coop.store(block, dst, counts, algorithm="striped")

    expect_compile_error(computed_float, args, coop.CoopTypeError,
                         "cuda.coop.histogram valid_items must be a signed integer of at most 64 bits or an unsigned "
                         "integer of at most 32 bits; got float64")
