"""sm_90 builds of top-k on warps and logical warps (docs: operations/topk, "Warps and logical warps"; SPEC 8.22) on
numba-cuda-mlir: the generated route (the keys' ordered representation sorted by a bitonic network of shuffles for
one key per lane, without scratch, or by WarpMergeSort in each group's scratch), the traps of runtime controls, the
reuse barrier, any block shape, float16 keys and aggregate values. Results are checked by the conformance suite
(tests/conformance/cases.py, both backends, on the GPU)."""
from __future__ import annotations

import re

import numpy as np
import pytest
from numba_cuda_mlir import cuda

import cuda.coop.numba_mlir as numba_coop
from cuda import coop
from cuda.coop._cub.provider import REUSE_MARK

from compile_helpers import build_kernel, expect_compile_error

N = 1024
I32 = np.zeros(N, np.int32)
U32 = np.zeros(N, np.uint32)
F32 = np.zeros(N, np.float32)
F64 = np.zeros(N, np.float64)
F16 = np.zeros(N, np.float16)


def _providers(built):
    """The generated top-k entry points of the kernel's translation unit, each as its C++ text."""
    parts = built.cpp_source.split('extern "C" __device__ ')
    return [part for part in parts if part.split("(")[0].split()[-1].startswith("cuda_coop_topk_")]


@cuda.jit
def routing(scores, experts, top_scores, top_experts, kk, n):
    """One score per lane: a warp's largest k (runtime) with its expert numbers, over the first n (runtime) lanes."""
    block = coop.this_block()
    s = coop.ThreadData(1, np.float32)
    e = coop.ThreadData(1, np.int32)
    coop.load(block, scores, s)
    coop.load(block, experts, e)
    best, chosen = coop.topk_max_pairs(coop.this_warp(), s, e, k=kk, valid_items=n)
    coop.store(block, top_scores, best)
    coop.store(block, top_experts, chosen)


def test_one_key_per_lane_shuffles_without_scratch_and_traps_out_of_range_controls():
    built = build_kernel(routing, (F32, I32, F32, I32, np.int32(8), np.int32(32)))
    (provider,) = _providers(built)
    assert "cuda_coop::WarpTopK<float, cuda_coop::KeyKind::FLOATING, 1, 32, int, true, true>" in provider
    assert "typename Algo::TempStorage storage;" in provider and "scratch +=" not in provider
    assert "cuda_coop::check_range(k, 0, 32);" in provider
    assert "cuda_coop::check_range(valid_items, 0, 32);" in provider
    assert "algo.Select<true>(out, out_values, (int)valid_items);" in provider
    assert built.metadata["scratch_bytes"] == 0 and REUSE_MARK not in built.cpp_source
    sass = built.sass()
    assert "SHFL" in sass and "BAR" not in sass and "STS" not in sass  # no shared memory at all
    assert "BPT.TRAP" in sass  # runtime k and valid_items trap out of range (docs: errors, "Device traps")


def _one_key_per_lane(width, pairs, partial):
    """A kernel of one warp top-k call, one float32 key per lane: keys or pairs, with or without valid_items."""
    @cuda.jit
    def kernel(scores, experts, top, chosen, n):
        block = coop.this_block()
        s = coop.ThreadData(1, np.float32)
        e = coop.ThreadData(1, np.int32)
        coop.load(block, scores, s)
        coop.load(block, experts, e)
        group = coop.this_warp() if width == 32 else coop.this_warp().group_by(width)
        if pairs and partial:
            best, moved = coop.topk_max_pairs(group, s, e, k=2, valid_items=n)
            coop.store(block, chosen, moved)
        elif pairs:
            best, moved = coop.topk_max_pairs(group, s, e, k=2)
            coop.store(block, chosen, moved)
        elif partial:
            best = coop.topk_max_keys(group, s, k=2, valid_items=n)
        else:
            best = coop.topk_max_keys(group, s, k=2)
        coop.store(block, top, best)

    return kernel


@pytest.mark.parametrize("width", [32, 8])
@pytest.mark.parametrize("pairs", [True, False], ids=["pairs", "keys"])
@pytest.mark.parametrize("partial", [False, True], ids=["full", "valid_items"])
def test_the_lane_network_shuffles_only_what_it_moves_and_keeps_no_predicate_in_registers(width, pairs, partial):
    """Issue 42 (numba's warp top-k at 0.44x the CuTe DSL's): the bitonic network over the lanes has log2(W) *
    (log2(W) + 1) / 2 stages, each one shuffle of the key, one of the value (pairs) and, with valid_items only, one of
    the invalid flag. Without valid_items the flag was shuffled anyway (NVVM keeps a shuffled constant), and the
    choice between two comparisons per stage became branches after which ptxas kept every stage's predicate in a
    register (P2R) and ran the values' shuffles after all the keys'.
    A logical warp shuffles with its own member mask (sibling logical warps may be on other paths): ptxas then issues
    the network once for a converged warp (``SHFL.IDX PT``) and once more, behind ``BRA.DIV``, with
    ``WARPSYNC.COLLECTIVE`` for a diverged one; a whole warp's mask is all lanes, and only the first form exists."""
    built = build_kernel(_one_key_per_lane(width, pairs, partial), (F32, I32, F32, I32, np.int32(5)))
    sass = built.sass()
    log = width.bit_length() - 1
    stages = log * (log + 1) // 2
    converged = len(re.findall(r"SHFL\.IDX PT,", sass))
    assert converged == stages * (1 + pairs + partial), converged
    assert ("WARPSYNC.COLLECTIVE" in sass) == (width < 32)
    if not partial:  # with valid_items ptxas may still keep a few of the 32 lanes' predicates in registers
        assert "P2R" not in sass and "R2P" not in sass


@cuda.jit
def two_merges(src, dst):
    block = coop.this_block()
    keys = coop.ThreadData(4, np.int32)
    coop.load(block, src, keys)
    low = coop.topk_min_keys(coop.this_warp(), keys, k=3)
    high = coop.topk_max_keys(coop.this_warp(), low, k=5, valid_items=100)
    coop.store(block, dst, high)


@cuda.jit
def merge_sort_of_ordered_keys(src, dst):
    block = coop.this_block()
    keys = coop.ThreadData(4, np.uint32)
    coop.load(block, src, keys)
    coop.store(block, dst, coop.merge_sort_keys(coop.this_warp(), keys))


def test_several_keys_per_lane_merge_in_each_warps_scratch_with_the_reuse_barrier_only_before_another_use():
    built = build_kernel(two_merges, (I32, I32), check_scratch=True)
    low, high = _providers(built)
    assert "cuda_coop::WarpTopK<int, cuda_coop::KeyKind::SIGNED, 4, 32, cub::NullType, false, false>" in low
    assert "cuda_coop::WarpTopK<int, cuda_coop::KeyKind::SIGNED, 4, 32, cub::NullType, true, false>" in high
    for provider in (low, high):
        assert "scratch += cuda_coop::group_instance<32>(cuda_coop::linear_rank<128, 1, 1>()) * stride;" in provider
    assert "algo.Select<false>(out, 128);" in low and "algo.Select<true>(out, (int)valid_items);" in high
    assert REUSE_MARK in low and REUSE_MARK not in high  # the last scratch use of the kernel keeps none
    # each warp's slice is CUB's WarpMergeSort of the 32-bit representation: as a merge sort of uint32 keys takes
    merge = build_kernel(merge_sort_of_ordered_keys, (U32, U32), check_scratch=True)
    assert built.metadata["scratch_bytes"] == merge.metadata["scratch_bytes"]
    assert "BAR.SYNC" not in built.sass()  # warps synchronise their own lanes only


@cuda.jit
def logical_warps_in_three_dimensions(src, dst, wide, wide_out):
    block = coop.this_block()
    keys = coop.ThreadData(2, np.float64)
    one = coop.ThreadData(1, np.float64)
    coop.load(block, wide, keys)
    coop.load(block, wide, one)
    coop.store(block, wide_out, coop.topk_min_keys(coop.this_warp().group_by(8), keys, k=8, valid_items=0))
    coop.store(block, wide_out, coop.topk_max_keys(coop.this_warp().group_by(1), one, k=1), offset=N // 2)
    small = coop.ThreadData(2, np.int32)
    coop.load(block, src, small)
    coop.store(block, dst, coop.topk_max_keys(coop.this_warp().group_by(16), small, k=0))


def test_logical_warps_build_in_any_block_of_complete_warps():
    built = build_kernel(logical_warps_in_three_dimensions, (I32, I32, F64, F64), block=(8, 4, 2))
    eight, one, sixteen = _providers(built)
    assert "WarpTopK<double, cuda_coop::KeyKind::FLOATING, 2, 8, cub::NullType, false, false>" in eight
    assert "group_instance<8>(cuda_coop::linear_rank<8, 4, 2>())" in eight
    assert "cuda_coop::check_range(valid_items, 0, 16);" in eight
    assert "WarpTopK<double, cuda_coop::KeyKind::FLOATING, 1, 1, cub::NullType, true, true>" in one
    assert "WarpTopK<int, cuda_coop::KeyKind::SIGNED, 2, 16, cub::NullType, true, false>" in sixteen
    assert "cuda_coop::check_range(k, 0, 32);" in sixteen


def test_a_warp_call_needs_complete_warps_but_a_block_call_does_not():
    @cuda.jit
    def kernel(src, dst):
        keys = coop.ThreadData(2, np.int32)
        coop.load(coop.this_block(), src, keys)
        coop.store(coop.this_block(), dst, coop.topk_min_keys(coop.this_warp(), keys, k=2))

    expect_compile_error(kernel, (I32, I32), coop.CoopValueError,
                         "cuda.coop.topk_min_keys on warp groups requires a block made of complete warps; block has "
                         "48 threads", block=48)

    @cuda.jit
    def block_call(src, dst):
        keys = coop.ThreadData(2, np.int32)
        coop.load(coop.this_block(), src, keys)
        coop.store(coop.this_block(), dst, coop.topk_min_keys(coop.this_block(), keys, k=2))

    assert build_kernel(block_call, (I32, I32), block=48).cubin


def test_float16_keys_and_aggregate_values_through_the_qualified_namespace():
    pair = np.dtype([("expert", np.int32), ("weight", np.float32)], align=True)

    @cuda.jit
    def kernel(scores, records, top, top_records):
        block = coop.this_block()
        s = coop.ThreadData(1, np.float16)
        r = coop.ThreadData(1)
        numba_coop.load(block, scores, s)
        numba_coop.load(block, records, r)
        best, carried = numba_coop.topk_max_pairs(coop.this_warp(), s, r, k=4)
        numba_coop.store(block, top, best)
        numba_coop.store(block, top_records, carried)
        wide = coop.ThreadData(2, np.float16)
        numba_coop.load(block, scores, wide)
        numba_coop.store(block, top, numba_coop.topk_min_keys(coop.this_warp().group_by(4), wide, k=3), offset=512)

    built = build_kernel(kernel, (F16, np.zeros(N, pair), F16, np.zeros(N, pair)))
    shuffled, merged = _providers(built)
    assert "WarpTopK<__half, cuda_coop::KeyKind::FLOATING, 1, 32, cuda_coop_agg_8_4, true, true>" in shuffled
    assert "WarpTopK<__half, cuda_coop::KeyKind::FLOATING, 2, 4, cub::NullType, false, false>" in merged

    @cuda.jit
    def common(scores, top):
        block = coop.this_block()
        s = coop.ThreadData(1, np.float16)
        numba_coop.load(block, scores, s)
        best = coop.topk_max_keys(coop.this_warp(), s, k=4)  # HERE
        numba_coop.store(block, top, best)

    expect_compile_error(common, (F16, F16), coop.CoopTypeError, "cuda.coop.topk_max_keys ",
                         line_marker="# HERE")
