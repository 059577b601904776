"""sm_90 builds of select and partition (docs: operations/select; SPEC 8.20) on numba-cuda-mlir: what the generated
code holds (a block's scan, barrier and exchange per member sharing one union of scratch; warps' exchange in their
own slice), the reuse barrier of section 6.3, explicit TempStorage, tuples returned as ``((a, b), count)`` whose
scalars and count type later calls, the count as a uniform condition, float16 and aggregates in the qualified
namespace. Results are checked by the conformance suite (tests/conformance/cases.py, both backends, on the GPU)."""
from __future__ import annotations

import numpy as np
from numba_cuda_mlir import cuda

import cuda.coop.numba_mlir as numba_coop
from cuda import coop
from cuda.coop._cub.provider import REUSE_MARK

from compile_helpers import build_kernel, expect_compile_error

THREADS, K = 128, 4
I32 = np.zeros(THREADS * K, np.int32)
F64 = np.zeros(THREADS * K, np.float64)


def _providers(built, family="select"):
    """The generated entry points of ``family`` in the kernel's translation unit, each as its C++ text."""
    parts = built.cpp_source.split('extern "C" __device__ ')
    return [part for part in parts if part.split("(")[0].split()[-1].startswith(f"cuda_coop_{family}_")]


@cuda.jit
def block_twice(src, flags_in, dst, counts):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    flags = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    coop.load(block, flags_in, flags)
    kept, count = coop.select(block, items, flags)
    parted, rest = coop.partition(block, kept, flags, valid_items=count)
    coop.store(block, dst, parted)
    counts[0] = rest


def test_a_block_scans_waits_and_exchanges_and_keeps_the_reuse_barrier_only_before_another_use():
    built = build_kernel(block_twice, (I32, I32, I32, I32), check_scratch=True)
    first, second = _providers(built)
    for provider in (first, second):
        assert "cuda_coop::BlockSelectRanks<4, 128, 1, 1>(storage.ranks).Rank(keep, valid_items, ranks);" in provider
        assert provider.index("Rank(") < provider.index("cuda_coop::sync_block();") < \
            provider.index("ScatterToBlocked(in0, out0, ranks);") < provider.index("*count = n;")
        assert "cuda_coop::check_range(valid_items, 0, 512);" in provider
    assert REUSE_MARK in first and REUSE_MARK not in second  # the last scratch use of the kernel keeps none
    # one region for both: the larger of the scan's storage and the exchange's K items per thread (CUB pads none)
    assert built.metadata["scratch_bytes"] == 4 * THREADS * K
    assert built.sass().count("BAR.SYNC") >= 5  # the scan's, the phase barrier, the exchange's, one reuse barrier


@cuda.jit
def warp_kinds(src, wide, flags_in, dst, wide_out, counts):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    doubles = coop.ThreadData(K, np.float64)
    flags = coop.ThreadData(K, np.uint8)
    coop.load(block, src, items)
    coop.load(block, wide, doubles)
    coop.load(block, flags_in, flags)
    (moved, moved_wide), count = coop.partition(coop.this_warp().group_by(8), (items, doubles), flags)
    single, n = coop.select(coop.this_warp(), items[0], items[1] > 0)
    moved[0] = single
    coop.store(block, dst, moved)
    coop.store(block, wide_out, moved_wide)
    counts[0] = count + n


def test_warps_exchange_in_their_own_slice_and_return_nested_tuples():
    built = build_kernel(warp_kinds, (I32, F64, np.zeros(THREADS * K, np.uint8), I32, F64, I32), check_scratch=True)
    eight, warp = _providers(built)
    assert "(int* items0, double* items1, unsigned char* flags, long long valid_items, int* output0, " \
        "double* output1, int* count, char* scratch" in eight
    assert "cuda_coop::WarpSelectRanks<4, 8, 128, 1, 1>().Rank(keep, valid_items, ranks);" in eight
    assert "scratch += cuda_coop::group_instance<8>(rank) * stride;" in eight
    assert eight.index("Scatter(in0, out0, ranks);") < eight.index("cuda_coop::sync_lanes(mask);") < \
        eight.index("Scatter(in1, out1, ranks);")
    assert "(int value0, unsigned char flag, long long valid_items, int* result0, int* count, " in warp
    assert "check_range(valid_items, 0, 32);" in warp and "BAR.SYNC" not in built.sass()


@cuda.jit
def explicit_storage(src, flags_in, dst):
    block = coop.this_block()
    quiet = coop.TempStorage(auto_sync=False)
    items = coop.ThreadData(K, np.int32)
    flags = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    coop.load(block, flags_in, flags)
    kept, count = coop.select(block, items, flags, temp_storage=quiet)
    block.sync()
    again, total = coop.select(block, kept, flags, valid_items=count, temp_storage=quiet)
    coop.store(block, dst, again, valid_items=total)


def test_explicit_storage_without_auto_sync_gets_no_reuse_barrier():
    built = build_kernel(explicit_storage, (I32, I32, I32), check_scratch=True)
    assert REUSE_MARK not in built.cpp_source
    assert built.metadata["scratch_bytes"] == 4 * THREADS * K


@cuda.jit
def small_storage(src, flags_in, dst):
    block = coop.this_block()
    storage = coop.TempStorage(64)
    items = coop.ThreadData(K, np.int32)
    flags = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    coop.load(block, flags_in, flags)
    kept, count = coop.select(block, items, flags, temp_storage=storage)
    coop.store(block, dst, kept)


def test_explicit_storage_must_hold_the_exchange():
    expect_compile_error(small_storage, (I32, I32, I32), coop.CoopValueError,
                         f"TempStorage size_in_bytes=64 is too small: its uses need {4 * THREADS * K} bytes")


@cuda.jit
def scalars_feed_later_calls(src, wide, dst, wide_out, r):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    doubles = coop.ThreadData(K, np.float64)
    coop.load(block, src, items)
    coop.load(block, wide, doubles)
    (first, last), count = coop.select(block, (items[0], doubles[K - 1]), items[1] > 0, valid_items=r)
    # the inner tuple's scalars are typed by their places (int32, float64), the count as int32, before any typing
    items[0] = coop.sum(block, first)
    doubles[0] = coop.sum(coop.this_warp(), last)
    if count > 0:  # the same in every member (SPEC 8.25, G21)
        items[1] = coop.sum(block, count)
    coop.store(block, dst, items)
    coop.store(block, wide_out, doubles)


def test_a_tuple_of_scalars_and_the_count_type_later_calls_and_the_count_is_uniform():
    built = build_kernel(scalars_feed_later_calls, (I32, F64, I32, F64, np.int32(100)), check_scratch=True)
    (select,) = _providers(built)
    assert "(int value0, double value1, unsigned char flag, long long valid_items, int* result0, double* result1, " \
        "int* count, char* scratch" in select
    sums = _providers(built, "reduce")  # first (int32), last (float64) and the count (int32)
    assert sorted(s.split("(")[1].split(",")[0] for s in sums) == ["double value", "int value", "int value"]


@cuda.jit
def half_payload(src, flags_in, dst):
    block = coop.this_block()
    items = coop.ThreadData(2, np.float16)
    flags = coop.ThreadData(2, np.int32)
    numba_coop.load(block, src, items)
    coop.load(block, flags_in, flags)
    kept, count = numba_coop.select(coop.this_warp(), items, flags)
    numba_coop.store(block, dst, kept, valid_items=count)


@cuda.jit
def half_payload_common(src, flags_in, dst):
    block = coop.this_block()
    items = coop.ThreadData(2, np.float16)
    flags = coop.ThreadData(2, np.int32)
    numba_coop.load(block, src, items)
    coop.load(block, flags_in, flags)
    kept, count = coop.select(coop.this_warp(), items, flags)  # HERE
    numba_coop.store(block, dst, kept, valid_items=count)


def test_float16_is_the_qualified_namespaces():
    halves = np.zeros(THREADS * 2, np.float16)
    flags = np.zeros(THREADS * 2, np.int32)
    built = build_kernel(half_payload, (halves, flags, halves))
    assert "cuda_coop::WarpSelectExchange<__half, 2, 32>" in _providers(built)[0]
    expect_compile_error(half_payload_common, (halves, flags, halves), coop.CoopTypeError,
                         "cuda.coop.select supports items dtypes int8, int16, int32, int64, uint8, uint16, uint32, "
                         "uint64, float32, float64 through the common API; use cuda.coop.numba_mlir for float16",
                         line_marker="# HERE")


PAIR = np.dtype([("key", np.int32), ("val", np.float32)], align=True)


@cuda.jit
def pair_payloads(src, flags_in, dst):
    block = coop.this_block()
    items = coop.ThreadData(K)  # PAIR, from src
    flags = coop.ThreadData(K, np.int32)
    numba_coop.load(block, src, items)
    coop.load(block, flags_in, flags)
    parted, count = numba_coop.partition(block, items, flags)
    numba_coop.store(block, dst, parted)


def test_aggregates_are_moved_in_the_qualified_namespace():
    pairs = np.zeros(THREADS * K, PAIR)
    built = build_kernel(pair_payloads, (pairs, I32, pairs.copy()), check_scratch=True)
    assert built.metadata["scratch_bytes"] == PAIR.itemsize * THREADS * K  # the exchange of K records per thread


@cuda.jit
def divergent_block(src, flags_in, dst):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    flags = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    coop.load(block, flags_in, flags)
    if cuda.threadIdx.x < 64:
        items[0], count = coop.select(block, items[0], flags[0])  # HERE
    coop.store(block, dst, items)


def test_g21_a_block_select_must_be_reached_by_every_thread():
    expect_compile_error(divergent_block, (I32, I32, I32), coop.CoopValueError,
                         "cuda.coop.select on block groups must be reached by every member", line_marker="# HERE")


@cuda.jit
def unpacked_wrongly(src, flags_in, dst):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    flags = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    coop.load(block, flags_in, flags)
    a, b, c = coop.partition(block, (items, items), flags)  # HERE
    coop.store(block, dst, a)


def test_a_tuple_result_is_unpacked_as_the_items_and_the_count():
    expect_compile_error(unpacked_wrongly, (I32, I32, I32), coop.CoopTypeError,
                         "cuda.coop.partition returns ((items0, items1), count); unpack it into 2 names, not 3",
                         line_marker="# HERE")


@cuda.jit
def inner_tuple_passed_on(src, flags_in, dst):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    flags = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    coop.load(block, flags_in, flags)
    kept, count = coop.select(block, (items, items), flags)
    again = coop.exchange(block, kept)  # HERE
    coop.store(block, dst, again)


def test_the_inner_tuple_is_unpacked_before_it_is_an_operand():
    expect_compile_error(inner_tuple_passed_on, (I32, I32, I32), coop.CoopTypeError,
                         "cuda.coop.exchange value is the tuple that cuda.coop.select returns ((items0, items1), "
                         "count); unpack it first", line_marker="# HERE")
