"""Corpus: group mistakes (SPEC 3, 2.7, 10.2 G1-G22)."""
from __future__ import annotations

import numpy as np
import pytest

import cuda.coop.numba_mlir as numba_coop
from cuda import coop
from numba_cuda_mlir import cuda

I32 = np.zeros(1024, np.int32)
U32 = np.zeros(1024, np.uint32)


# ------------------------------------------------------------------ G1: not a compile-time group


@cuda.jit
def k_g1_thread_index(src, dst):
    dst[0] = coop.sum(cuda.threadIdx.x, src[cuda.threadIdx.x])  # HERE


@cuda.jit
def k_g1_none_group(src, dst):
    items = coop.ThreadData(2)
    coop.load(coop.this_block(), src, items)
    out = numba_coop.exchange(None, items)  # HERE
    coop.store(coop.this_block(), dst, out)


@cuda.jit
def k_g1_factory_not_called(src, dst):
    dst[0] = coop.reduce(coop.this_block, src[cuda.threadIdx.x], binary_op="max")  # HERE


# ------------------------------------------------------------------ G3/G4: unsupported group kinds


@cuda.jit
def k_g3_warp_shuffle(src, dst):
    warp = coop.this_warp()
    items = coop.ThreadData(2)
    coop.load(warp, src, items)
    out = coop.shuffle(warp, items)  # HERE
    coop.store(warp, dst, out)


@cuda.jit
def k_g3_warp_radix(src, dst):
    warp = coop.this_warp()
    keys = coop.ThreadData(2)
    coop.load(warp, src, keys)
    out = coop.radix_sort_keys(warp, keys)  # HERE
    coop.store(warp, dst, out)


@cuda.jit
def k_g3_thread_load(src, dst):
    items = coop.ThreadData(2, dtype=np.int32)
    coop.load(coop.this_thread(), src, items)  # HERE
    dst[0] = items[0]


@cuda.jit
def k_g3_thread_sum_common(src, dst):
    dst[cuda.threadIdx.x] = coop.sum(coop.this_thread(), src[cuda.threadIdx.x])  # HERE


@cuda.jit
def k_g3_warps_within_block_topk(src, dst):
    keys = coop.ThreadData(2)
    coop.load(coop.this_block(), src, keys)
    out = coop.topk_min_keys(coop.this_block().group_by(2), keys, k=2)  # HERE
    coop.store(coop.this_block(), dst, out)


@cuda.jit
def k_g3_cluster_exchange(src, dst):
    items = coop.ThreadData(2)
    coop.load(coop.this_block(), src, items)
    out = coop.exchange(coop.this_cluster(), items)  # HERE
    coop.store(coop.this_block(), dst, out)


@cuda.jit
def k_g3_grid_load(src, dst):
    items = coop.ThreadData(2, dtype=np.int32)
    coop.load(coop.this_grid(), src, items)  # HERE
    coop.store(coop.this_block(), dst, items)


@cuda.jit
def k_g4_grid_sum(src, dst):
    dst[0] = coop.sum(coop.this_grid(), src[cuda.threadIdx.x])  # HERE


@cuda.jit
def k_g4_grid_reduce_qualified(src, dst):
    dst[0] = numba_coop.reduce(coop.this_grid(), src[cuda.threadIdx.x], binary_op="max")  # HERE


# ------------------------------------------------------------------ G5: warp-scope calls in partial-warp blocks


@cuda.jit
def k_g5_warp_sum(src, dst):
    dst[cuda.threadIdx.x] = coop.sum(coop.this_warp(), src[cuda.threadIdx.x])  # HERE


@cuda.jit
def k_g5_warp_scan(src, dst):
    dst[cuda.threadIdx.x] = coop.inclusive_sum(coop.this_warp(), src[cuda.threadIdx.x])  # HERE


# ------------------------------------------------------------------ G6-G14: group_by mistakes


@cuda.jit
def k_g6_float_count(src, dst):
    g = coop.this_warp().group_by(2.0)  # HERE
    dst[cuda.threadIdx.x] = coop.sum(g, src[cuda.threadIdx.x])


@cuda.jit
def k_g6_runtime_count(src, dst):
    g = coop.this_warp().group_by(src[0])  # HERE
    dst[cuda.threadIdx.x] = coop.sum(g, src[cuda.threadIdx.x])


@cuda.jit
def k_g7_zero_count(src, dst):
    g = coop.this_warp().group_by(0)  # HERE
    dst[cuda.threadIdx.x] = coop.sum(g, src[cuda.threadIdx.x])


@cuda.jit
def k_g7_negative_block_count(src, dst):
    g = coop.this_block().group_by(-2)  # HERE
    dst[cuda.threadIdx.x] = g.rank()


@cuda.jit
def k_g8_exhaustive_int(src, dst):
    g = coop.this_warp().group_by(8, exhaustive=1)  # HERE
    dst[cuda.threadIdx.x] = coop.sum(g, src[cuda.threadIdx.x])


@cuda.jit
def k_g9_thread_parent(src, dst):
    g = coop.this_thread().group_by(1)  # HERE
    dst[cuda.threadIdx.x] = g.rank()


@cuda.jit
def k_g9_grid_parent(src, dst):
    g = coop.this_grid().group_by(2)  # HERE
    dst[cuda.threadIdx.x] = g.rank()


@cuda.jit
def k_g10_nested(src, dst):
    g = coop.this_warp().group_by(8).group_by(2)  # HERE
    dst[cuda.threadIdx.x] = coop.sum(g, src[cuda.threadIdx.x])


@cuda.jit
def k_g11_too_wide(src, dst):
    g = coop.this_warp().group_by(64)  # HERE
    dst[cuda.threadIdx.x] = coop.sum(g, src[cuda.threadIdx.x])


@cuda.jit
def k_g12_too_many_warps(src, dst):
    g = coop.this_block().group_by(8)  # HERE
    dst[cuda.threadIdx.x] = g.rank()


@cuda.jit
def k_g13_partial_warp_block(src, dst):
    g = coop.this_warp().group_by(4)  # HERE
    dst[cuda.threadIdx.x] = coop.sum(g, src[cuda.threadIdx.x])


@cuda.jit
def k_g14_block_not_divisible(src, dst):
    g = coop.this_block().group_by(3)  # HERE
    dst[cuda.threadIdx.x] = g.rank()


# ------------------------------------------------------------------ G15, G16: widths and block shapes


@cuda.jit
def k_g15_width_3_load(src, dst):
    g = coop.this_warp().group_by(3, exhaustive=False)
    items = coop.ThreadData(2, dtype=np.int32)
    if g.is_member():
        coop.load(g, src, items)  # HERE
    dst[cuda.threadIdx.x] = items[0]


@cuda.jit
def k_g15_width_12_sum(src, dst):
    g = coop.this_warp().group_by(12, exhaustive=False)
    if g.is_member():
        dst[cuda.threadIdx.x] = coop.sum(g, src[cuda.threadIdx.x])  # HERE


@cuda.jit
def k_g16_merge_not_power_of_two(src, dst):
    block = coop.this_block()
    keys = coop.ThreadData(2)
    coop.load(block, src, keys)
    out = coop.merge_sort_keys(block, keys)  # HERE
    coop.store(block, dst, out)


@cuda.jit
def k_g16_topk_2d_block(src, dst):
    block = coop.this_block()
    keys = coop.ThreadData(2)
    coop.load(block, src, keys)
    out = coop.topk_max_keys(block, keys, k=4)  # HERE
    coop.store(block, dst, out)


# ------------------------------------------------------------------ G17-G20: queries and sync


@cuda.jit
def k_g17_unknown_level(dst):
    dst[cuda.threadIdx.x] = coop.this_block().rank(level="lane")  # HERE


@cuda.jit
def k_g17_level_not_available(dst):
    lw = coop.this_warp().group_by(8)
    dst[cuda.threadIdx.x] = lw.count(level="block")  # HERE


@cuda.jit
def k_g18_float_dtype(dst):
    dst[cuda.threadIdx.x] = coop.this_block().rank_as(np.float32)  # HERE


@cuda.jit
def k_g18_bool_dtype(dst):
    dst[cuda.threadIdx.x] = coop.this_warp().count_as(dtype=np.bool_)  # HERE


@cuda.jit
def k_g19_warps_within_block_sync(dst):
    g = coop.this_block().group_by(2)
    g.sync()  # HERE
    dst[cuda.threadIdx.x] = g.rank()


@cuda.jit
def k_g19_grid_sync_aligned(dst):
    coop.this_grid().sync_aligned()  # HERE
    dst[cuda.threadIdx.x] = 1


@cuda.jit
def k_g20_cluster_on_sm80(dst):
    dst[cuda.threadIdx.x] = coop.this_cluster().rank()  # HERE


# ------------------------------------------------------------------ G21: divergent participation


@cuda.jit
def k_g21_block_sum_under_tid(src, dst):
    block = coop.this_block()
    total = 0
    if cuda.threadIdx.x < 16:
        total = coop.sum(block, src[cuda.threadIdx.x])  # HERE
    dst[cuda.threadIdx.x] = total


@cuda.jit
def k_g21_block_exchange_under_tid_y(src, dst):
    block = coop.this_block()
    items = coop.ThreadData(2)
    coop.load(block, src, items)
    if cuda.threadIdx.y == 0:
        out = coop.exchange(block, items)  # HERE
        coop.store(block, dst, out)


@cuda.jit
def k_g21_warp_scan_under_rank(src, dst):
    warp = coop.this_warp()
    r = warp.rank()
    if r % 2 == 0:
        dst[cuda.threadIdx.x] = coop.inclusive_sum(warp, src[cuda.threadIdx.x])  # HERE


# ------------------------------------------------------------------ G22: impossible block shapes


@cuda.jit
def k_g22_copy(src, dst):
    block = coop.this_block()
    items = coop.ThreadData(1)
    coop.load(block, src, items)
    coop.store(block, dst, items)


CASES = {
    "g1_thread_index": (k_g1_thread_index, (I32, I32), coop.CoopTypeError,
                        "cuda.coop.sum requires a compile-time ThreadGroup created by this_*() or group_by() in this "
                        "kernel"),
    "g1_none": (k_g1_none_group, (I32, I32), coop.CoopTypeError,
                "cuda.coop.numba_mlir.exchange requires a compile-time ThreadGroup created by this_*() or group_by()"),
    "g1_factory_not_called": (k_g1_factory_not_called, (I32, I32), coop.CoopTypeError,
                              "cuda.coop.reduce requires a compile-time ThreadGroup created by this_*() or group_by()"),
    "g3_warp_shuffle": (k_g3_warp_shuffle, (I32, I32), coop.CoopUnsupportedError,
                        "cuda.coop.shuffle does not support group kind 'warp'; supported group kinds: block"),
    "g3_warp_radix": (k_g3_warp_radix, (I32, I32), coop.CoopUnsupportedError,
                      "cuda.coop.radix_sort_keys does not support group kind 'warp'; supported group kinds: block"),
    "g3_thread_load": (k_g3_thread_load, (I32, I32), coop.CoopUnsupportedError,
                       "cuda.coop.load does not support group kind 'thread'; supported group kinds: "),
    "g3_thread_sum_common": (k_g3_thread_sum_common, (I32, I32), coop.CoopUnsupportedError,
                             "cuda.coop.sum does not support group kind 'thread'; supported group kinds: "),
    "g3_warps_within_block_topk": (k_g3_warps_within_block_topk, (I32, I32), coop.CoopUnsupportedError,
                                   "cuda.coop.topk_min_keys does not support group kind 'warps_within_block'; "
                                   "supported group kinds: block, warp, threads_within_warp"),
    "g3_cluster_exchange": (k_g3_cluster_exchange, (I32, I32), coop.CoopUnsupportedError,
                            "cuda.coop.exchange does not support group kind 'cluster'"),
    "g3_grid_load": (k_g3_grid_load, (I32, I32), coop.CoopUnsupportedError,
                     "cuda.coop.load does not support group kind 'grid'"),
    "g4_grid_sum": (k_g4_grid_sum, (I32, I32), coop.CoopUnsupportedError,
                    "cuda.coop.sum does not support grid groups because grid reduction requires hidden per-launch "
                    "workspace"),
    "g4_grid_reduce_qualified": (k_g4_grid_reduce_qualified, (I32, I32), coop.CoopUnsupportedError,
                                 "cuda.coop.numba_mlir.reduce does not support grid groups because grid reduction "
                                 "requires hidden per-launch workspace"),
    "g5_warp_sum": (k_g5_warp_sum, (I32, I32), coop.CoopValueError,
                    "cuda.coop.sum on warp groups requires a block made of complete warps; block has 40 threads",
                    {"block": (40,)}),
    "g5_warp_scan": (k_g5_warp_scan, (I32, I32), coop.CoopValueError,
                     "cuda.coop.inclusive_sum on warp groups requires a block made of complete warps; block has 36 "
                     "threads", {"block": (12, 3, 1)}),
    "g6_float_count": (k_g6_float_count, (I32, I32), coop.CoopTypeError,
                       "ThreadGroup.group_by count must be a compile-time integer"),
    "g6_runtime_count": (k_g6_runtime_count, (I32, I32), coop.CoopTypeError,
                         "ThreadGroup.group_by count must be a compile-time integer"),
    "g7_zero_count": (k_g7_zero_count, (I32, I32), coop.CoopValueError,
                      "ThreadGroup.group_by count must be positive"),
    "g7_negative_block_count": (k_g7_negative_block_count, (I32, U32), coop.CoopValueError,
                                "ThreadGroup.group_by count must be positive"),
    "g8_exhaustive_int": (k_g8_exhaustive_int, (I32, I32), coop.CoopTypeError,
                          "ThreadGroup.group_by exhaustive must be a compile-time bool"),
    "g9_thread_parent": (k_g9_thread_parent, (I32, U32), coop.CoopUnsupportedError,
                         "ThreadGroup.group_by supports only physical warp and block parents"),
    "g9_grid_parent": (k_g9_grid_parent, (I32, U32), coop.CoopUnsupportedError,
                       "ThreadGroup.group_by supports only physical warp and block parents"),
    "g10_nested": (k_g10_nested, (I32, I32), coop.CoopUnsupportedError,
                   "nested ThreadGroup.group_by is not supported"),
    "g11_too_wide": (k_g11_too_wide, (I32, I32), coop.CoopValueError,
                     "warp group_by count cannot exceed 32 threads"),
    "g12_too_many_warps": (k_g12_too_many_warps, (I32, U32), coop.CoopValueError,
                           "block group_by count cannot exceed the parent warp count (4)"),
    "g13_partial_warp_block": (k_g13_partial_warp_block, (I32, I32), coop.CoopValueError,
                               "group_by requires an enclosing block composed of complete warps; block has 100 threads",
                               {"block": (100,)}),
    "g14_block_not_divisible": (k_g14_block_not_divisible, (I32, U32), coop.CoopValueError,
                                "exhaustive ThreadGroup.group_by requires the count to divide the parent unit count "
                                "(4)"),
    "g15_width_3_load": (k_g15_width_3_load, (I32, I32), coop.CoopUnsupportedError,
                         "cuda.coop.load supports logical-warp widths 1, 2, 4, 8, 16, 32; got 3"),
    "g15_width_12_sum": (k_g15_width_12_sum, (I32, I32), coop.CoopUnsupportedError,
                         "cuda.coop.sum supports logical-warp widths "),
    "g16_merge_not_power_of_two": (k_g16_merge_not_power_of_two, (I32, I32), coop.CoopUnsupportedError,
                                   "cuda.coop.merge_sort_keys requires a power-of-two thread count; block shape is ",
                                   {"block": (96,)}),
    "g16_topk_2d_block": (k_g16_topk_2d_block, (I32, I32), coop.CoopUnsupportedError,
                          "cuda.coop.topk_max_keys requires a one-dimensional block; block shape is ",
                          {"block": (32, 4)}),
    "g17_unknown_level": (k_g17_unknown_level, (U32,), coop.CoopValueError,
                          "ThreadGroup.rank level must be one of: thread, gpu_thread, warp, block, cluster, grid"),
    "g17_level_not_available": (k_g17_level_not_available, (U32,), coop.CoopValueError,
                                "level 'block' is not available for group kind 'threads_within_warp'"),
    "g18_float_dtype": (k_g18_float_dtype, (U32,), coop.CoopTypeError,
                        "ThreadGroup.rank_as dtype must be one of int8, int16, int32, int64, uint8, uint16, uint32, "
                        "uint64"),
    "g18_bool_dtype": (k_g18_bool_dtype, (U32,), coop.CoopTypeError,
                       "ThreadGroup.count_as dtype must be one of int8, int16, int32, int64, uint8, uint16, uint32, "
                       "uint64"),
    "g19_warps_within_block_sync": (k_g19_warps_within_block_sync, (U32,), coop.CoopUnsupportedError,
                                    "ThreadGroup.sync is not supported for group kind 'warps_within_block'"),
    "g19_grid_sync_aligned": (k_g19_grid_sync_aligned, (U32,), coop.CoopUnsupportedError,
                              "ThreadGroup.sync_aligned is not supported for group kind 'grid'"),
    "g20_cluster_on_sm80": (k_g20_cluster_on_sm80, (U32,), coop.CoopUnsupportedError,
                            "cluster groups require compute capability 9.0 or newer; target is sm_80",
                            {"target": "sm_80"}),
    "g21_block_sum_under_tid": (k_g21_block_sum_under_tid, (I32, I32), coop.CoopValueError,
                                "cuda.coop.sum on block groups must be reached by every member, but it is under a "
                                "condition that depends on cuda.threadIdx.x ("),
    "g21_block_exchange_under_tid_y": (k_g21_block_exchange_under_tid_y, (I32, I32), coop.CoopValueError,
                                       "cuda.coop.exchange on block groups must be reached by every member, but it is "
                                       "under a condition that depends on cuda.threadIdx.y (", {"block": (32, 4)}),
    "g21_warp_scan_under_rank": (k_g21_warp_scan_under_rank, (I32, I32), coop.CoopValueError,
                                 "cuda.coop.inclusive_sum on warp groups must be reached by every member, but it is "
                                 "under a condition that depends on "),
    "g22_block_2048": (k_g22_copy, (I32, I32), coop.CoopValueError,
                       "block shape (2048, 1, 1) is not a valid CUDA block", {"block": (2048,), "locate": "file"}),
    "g22_block_zero": (k_g22_copy, (I32, I32), coop.CoopValueError,
                       "block shape (0, 1, 1) is not a valid CUDA block", {"block": (0,), "locate": "file"}),
    "g22_block_z65": (k_g22_copy, (I32, I32), coop.CoopValueError,
                      "block shape (1, 1, 65) is not a valid CUDA block", {"block": (1, 1, 65), "locate": "file"}),
}


@pytest.mark.parametrize("case", list(CASES))
def test_group_mistake(case, expect):
    kernel, args, cls, fragment, *rest = CASES[case]
    expect(kernel, args, cls, fragment, **(rest[0] if rest else {}))
