"""sm_90 builds of broadcast (docs: operations/broadcast; SPEC 8.19, 8.26) on numba-cuda-mlir: what the generated code
holds (a block's slot, barrier and reads; warps' shuffles, 64-bit items as two words; no scratch on warps), the reuse
barrier of section 6.3, explicit TempStorage, tuples whose scalar results feed later calls, and the qualified float16.
Results are checked by the conformance suite (tests/conformance/cases.py, both backends, on the GPU)."""
from __future__ import annotations

import numpy as np
import pytest
from numba_cuda_mlir import cuda

import cuda.coop.numba_mlir as numba_coop
from cuda import coop
from cuda.coop._cub.provider import REUSE_MARK

from compile_helpers import build_kernel, expect_compile_error

THREADS, K = 128, 4
I32 = np.zeros(THREADS * K, np.int32)
F64 = np.zeros(THREADS * K, np.float64)


def _providers(built, family="broadcast"):
    """The generated entry points of ``family`` in the kernel's translation unit, each as its C++ text."""
    source = built.cpp_source
    parts = source.split('extern "C" __device__ ')
    return [part for part in parts if part.split("(")[0].split()[-1].startswith(f"cuda_coop_{family}_")]


@cuda.jit
def block_then_block(src, dst):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    first = coop.broadcast(block, items)
    last = coop.broadcast(block, first[K - 1], src_rank=THREADS - 1)
    first[0] = last
    coop.store(block, dst, first)


def test_a_block_writes_one_slot_waits_reads_and_keeps_the_reuse_barrier_only_before_another_use():
    built = build_kernel(block_then_block, (I32, I32), check_scratch=True)
    first, last = _providers(built)
    for provider in (first, last):
        assert "cuda_coop::BlockBroadcast<128, 1, 1> algo(src_rank);" in provider
        assert provider.index("algo.Write(") < provider.index("algo.Sync();") < provider.index("algo.Read(")
        assert "cuda_coop::check_range(src_rank, 0, 127);" in provider
    assert "int m0[4];" in built.cpp_source and "int m0[1];" in built.cpp_source  # K items, and one for a scalar
    assert REUSE_MARK in first and REUSE_MARK not in last  # the last scratch use of the kernel keeps none
    assert built.metadata["scratch_bytes"] == 4 * K  # one slot of K int32, reused by both calls
    assert built.sass().count("BAR.SYNC") == 3  # two algorithm barriers and one reuse barrier


@cuda.jit
def warp_kinds(src, wide, dst, wide_out):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    doubles = coop.ThreadData(K, np.float64)
    coop.load(block, src, items)
    coop.load(block, wide, doubles)
    lanes = coop.this_warp().group_by(12, exhaustive=False)
    if lanes.is_member():
        items[0] = coop.broadcast(lanes, items[0], src_rank=11)
    moved = coop.broadcast(coop.this_warp().group_by(8), doubles, src_rank=7)
    items[1] = coop.broadcast(coop.this_warp(), items[1], src_rank=31)
    coop.store(block, dst, items)
    coop.store(block, wide_out, moved)


def test_warps_shuffle_without_scratch_each_64_bit_item_as_two_words():
    built = build_kernel(warp_kinds, (I32, F64, I32, F64))
    odd, eight, warp = _providers(built)
    # widths that do not divide 32 shuffle over the warp from the group's first lane; others within their own lanes
    assert "cuda_coop::WarpBroadcast<12, 128, 1, 1>" in odd and "check_range(src_rank, 0, 11)" in odd
    assert "cuda_coop::WarpBroadcast<8, 128, 1, 1>" in eight and "algo.Broadcast<4>(output, items);" in eight
    assert "cuda_coop::WarpBroadcast<32, 128, 1, 1>" in warp
    assert built.metadata["scratch_bytes"] == 0 and REUSE_MARK not in built.cpp_source
    # one shuffle per 32-bit word on the converged path (ptxas adds a fallback for divergent arrival)
    assert built.sass().count("SHFL.IDX PT,") == 1 + 2 * K + 1
    assert "BAR.SYNC" not in built.sass()


@cuda.jit
def explicit_storage(src, dst):
    block = coop.this_block()
    quiet = coop.TempStorage(auto_sync=False)
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    out = coop.broadcast(block, items, src_rank=5, temp_storage=quiet)
    block.sync()
    out[0] = coop.broadcast(block, out[1], src_rank=6, temp_storage=quiet)
    coop.store(block, dst, out)


def test_explicit_storage_without_auto_sync_gets_no_reuse_barrier():
    built = build_kernel(explicit_storage, (I32, I32), check_scratch=True)
    assert REUSE_MARK not in built.cpp_source
    assert built.metadata["scratch_bytes"] == 4 * K


@cuda.jit
def small_storage(src, dst):
    block = coop.this_block()
    storage = coop.TempStorage(8)
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    coop.store(block, dst, coop.broadcast(block, items, temp_storage=storage))


def test_explicit_storage_must_hold_the_slot():
    expect_compile_error(small_storage, (I32, I32), coop.CoopValueError,
                         "TempStorage size_in_bytes=8 is too small: its uses need 16 bytes")


@cuda.jit
def mixed_tuple(src, wide, dst, wide_out, r):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    doubles = coop.ThreadData(2, np.float64)
    coop.load(block, src, items)
    coop.load(block, wide, doubles)
    moved, second, first, pair = coop.broadcast(block, (items, doubles[1], items[0], doubles), src_rank=r)
    (only,) = coop.broadcast(coop.this_warp(), (doubles,))
    # the tuple's scalars are typed by their places (int32, float64) before any typing: they reach other calls
    moved[0] = coop.sum(block, first)
    only[0] = coop.sum(coop.this_warp(), second)
    coop.store(block, dst, moved)
    only[1] = pair[0]
    coop.store(block, wide_out, only)


def test_a_tuple_mixes_scalars_and_payloads_of_several_extents_and_its_scalars_are_typed():
    built = build_kernel(mixed_tuple, (I32, F64, I32, F64, np.int32(3)), check_scratch=True)
    block, warp = _providers(built)
    assert ("(int* items0, double value1, int value2, double* items3, int* output0, double* result1, int* result2, "
            "double* output3, long long src_rank") in block
    assert "int m0[4]; double m1[1]; int m2[1]; double m3[2];" in built.cpp_source  # one slot per member
    assert "(double* items0, double* output0, long long src_rank" in warp


@cuda.jit
def uniform_condition(src, dst):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    first = coop.broadcast(block, items[0])
    if first > 0:  # the same in every member (SPEC 8.25, G21)
        items[1] = coop.sum(block, items[1])
    coop.store(block, dst, items)


def test_a_broadcast_result_may_decide_whether_a_block_call_runs():
    build_kernel(uniform_condition, (I32, I32))


@cuda.jit
def half_payload(src, dst):
    block = coop.this_block()
    items = coop.ThreadData(2, np.float16)
    numba_coop.load(block, src, items)
    numba_coop.store(block, dst, numba_coop.broadcast(coop.this_warp(), items, src_rank=9))


@cuda.jit
def half_payload_common(src, dst):
    block = coop.this_block()
    items = coop.ThreadData(2, np.float16)
    numba_coop.load(block, src, items)
    numba_coop.store(block, dst, coop.broadcast(coop.this_warp(), items, src_rank=9))  # HERE


def test_float16_is_the_qualified_namespaces():
    halves = np.zeros(THREADS * 2, np.float16)
    built = build_kernel(half_payload, (halves, halves))
    assert "cuda_coop::WarpBroadcast<32, 128, 1, 1>" in _providers(built)[0]
    expect_compile_error(half_payload_common, (halves, halves), coop.CoopTypeError,
                         "cuda.coop.broadcast supports value dtypes int8, int16, int32, int64, uint8, uint16, uint32, "
                         "uint64, float32, float64 through the common API; use cuda.coop.numba_mlir for float16",
                         line_marker="# HERE")


@pytest.mark.parametrize("rank, dtype", [(np.uint64(1), "uint64"), (True, "bool")])
def test_src_rank_dtype_follows_the_runtime_control_rule(rank, dtype):
    @cuda.jit
    def kernel(src, dst, r):
        block = coop.this_block()
        items = coop.ThreadData(K, np.int32)
        coop.load(block, src, items)
        coop.store(block, dst, coop.broadcast(block, items, src_rank=r))

    expect_compile_error(kernel, (I32, I32, rank), coop.CoopTypeError,
                         "cuda.coop.broadcast src_rank must be a signed integer of at most 64 bits or an unsigned "
                         f"integer of at most 32 bits; got {dtype}")


PAIR = np.dtype([("key", np.int32), ("val", np.float32)], align=True)


@cuda.jit
def pair_payloads(src, dst, dst2):
    block = coop.this_block()
    items = coop.ThreadData(K)  # PAIR, from src
    numba_coop.load(block, src, items)
    numba_coop.store(block, dst, numba_coop.broadcast(block, items, src_rank=3))
    moved = numba_coop.broadcast(coop.this_warp(), items, src_rank=2)
    moved[0] = numba_coop.broadcast(coop.this_warp().group_by(4), items[1], src_rank=1)
    numba_coop.store(block, dst2, moved)


def test_aggregates_move_as_their_words_in_the_qualified_namespace():
    pairs = np.zeros(THREADS * K, PAIR)
    built = build_kernel(pair_payloads, (pairs, pairs.copy(), pairs.copy()), check_scratch=True)
    assert built.metadata["scratch_bytes"] == PAIR.itemsize * K  # the block's slot of K records
    assert built.sass().count("SHFL.IDX PT,") == 2 * (K - 1) + 2  # two words per record (the first is replaced)


@cuda.jit
def divergent_block(src, dst):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    if cuda.threadIdx.x < 64:
        items[0] = coop.broadcast(block, items[0])  # HERE
    coop.store(block, dst, items)


def test_g21_a_block_broadcast_must_be_reached_by_every_thread():
    expect_compile_error(divergent_block, (I32, I32), coop.CoopValueError,
                         "cuda.coop.broadcast on block groups must be reached by every member", line_marker="# HERE")


@cuda.jit
def unpacked_wrongly(src, dst):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    a, b, c = coop.broadcast(block, (items[0], items))  # HERE
    coop.store(block, dst, b)


def test_a_mixed_tuple_is_unpacked_into_as_many_names_as_it_has_members():
    expect_compile_error(unpacked_wrongly, (I32, I32), coop.CoopTypeError,
                         "cuda.coop.broadcast returns (value0, value1); unpack it into 2 names, not 3",
                         line_marker="# HERE")
