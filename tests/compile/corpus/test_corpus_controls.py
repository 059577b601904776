"""Corpus: runtime/typed controls and option combinations (SPEC 2.5-2.6, 8, 10.2 C6-C12, C15, O1-O15)."""
from __future__ import annotations

import numpy as np
import pytest

import cuda.coop.numba_mlir as numba_coop
from cuda import coop
from numba_cuda_mlir import cuda

I8 = np.zeros(1024, np.int8)
I32 = np.zeros(1024, np.int32)
U32 = np.zeros(1024, np.uint32)
F32 = np.zeros(1024, np.float32)


def _max(a, b):
    return a if a > b else b


def _less(a, b):
    return a < b


def _prefix(aggregate):
    return aggregate


# ------------------------------------------------------------------ C6: runtime integer control dtypes


@cuda.jit
def k_c6_float_valid_items(src, dst, n):
    block = coop.this_block()
    items = coop.ThreadData(2)
    coop.load(block, src, items, valid_items=n, oob_default=0)  # HERE
    coop.store(block, dst, items)


@cuda.jit
def k_c6_uint64_valid_items_store(src, dst, n):
    warp = coop.this_warp()
    items = coop.ThreadData(2)
    coop.load(warp, src, items)
    coop.store(warp, dst, items, valid_items=n)  # HERE


@cuda.jit
def k_c6_float_k(src, dst, k):
    block = coop.this_block()
    keys = coop.ThreadData(2)
    coop.load(block, src, keys)
    out = coop.topk_min_keys(block, keys, k=k)  # HERE
    coop.store(block, dst, out)


# ------------------------------------------------------------------ C7: static controls out of range


@cuda.jit
def k_c7_warp_valid_items_above_tile(src, dst):
    warp = coop.this_warp()
    items = coop.ThreadData(4)
    coop.load(warp, src, items, valid_items=129, oob_default=0)  # HERE
    coop.store(warp, dst, items)


@cuda.jit
def k_c7_logical_warp_store_valid_items(src, dst):
    lw = coop.this_warp().group_by(8)
    items = coop.ThreadData(2)
    coop.load(lw, src, items)
    coop.store(lw, dst, items, valid_items=17)  # HERE


@cuda.jit
def k_c7_sum_valid_items_zero(src, dst):
    dst[0] = coop.sum(coop.this_block(), src[cuda.threadIdx.x], valid_items=0)  # HERE


@cuda.jit
def k_c7_radix_end_bit(src, dst):
    block = coop.this_block()
    keys = coop.ThreadData(2)
    coop.load(block, src, keys)
    out = coop.radix_sort_keys(block, keys, end_bit=33)  # HERE
    coop.store(block, dst, out)


@cuda.jit
def k_c7_topk_k_above_tile(src, dst):
    block = coop.this_block()
    keys = coop.ThreadData(2)
    coop.load(block, src, keys)
    out = coop.topk_max_keys(block, keys, k=257)  # HERE
    coop.store(block, dst, out)


# ------------------------------------------------------------------ C8: negative static offsets


@cuda.jit
def k_c8_warp_store_offset(src, dst):
    warp = coop.this_warp()
    items = coop.ThreadData(2)
    coop.load(warp, src, items)
    coop.store(warp, dst, items, offset=-2)  # HERE


# ------------------------------------------------------------------ C9, C10: typed scalar controls


@cuda.jit
def k_c9_oob_default_float_for_int(src, dst, fill):
    block = coop.this_block()
    items = coop.ThreadData(2)
    coop.load(block, src, items, valid_items=100, oob_default=fill)  # HERE
    coop.store(block, dst, items)


@cuda.jit
def k_c9_initial_value_int64_for_int32(src, dst, init):
    block = coop.this_block()
    items = coop.ThreadData(2)
    coop.load(block, src, items)
    out = coop.exclusive_scan(block, items, scan_op="max", initial_value=init)  # HERE
    coop.store(block, dst, out)


@cuda.jit
def k_c10_fractional_oob_default(src, dst):
    block = coop.this_block()
    items = coop.ThreadData(2)
    coop.load(block, src, items, valid_items=100, oob_default=1.5)  # HERE
    coop.store(block, dst, items)


@cuda.jit
def k_c10_int8_overflow(src, dst):
    warp = coop.this_warp()
    items = coop.ThreadData(2)
    coop.load(warp, src, items, valid_items=40, oob_default=300)  # HERE
    coop.store(warp, dst, items)


@cuda.jit
def k_c10_negative_unsigned_initial_value(src, dst):
    block = coop.this_block()
    items = coop.ThreadData(2)
    coop.load(block, src, items)
    out = coop.exclusive_scan(block, items, scan_op="min", initial_value=-1)  # HERE
    coop.store(block, dst, out)


# ------------------------------------------------------------------ C11, C12


@cuda.jit
def k_c11_warp_oob_without_valid_items(src, dst):
    warp = coop.this_warp()
    items = coop.ThreadData(2)
    coop.load(warp, src, items, oob_default=-1)  # HERE
    coop.store(warp, dst, items)


@cuda.jit
def k_c12_warp_reduce_algorithm(src, dst):
    dst[0] = coop.reduce(coop.this_warp(), src[cuda.threadIdx.x], binary_op="max", algorithm="raking")  # HERE


@cuda.jit
def k_c12_warp_scan_algorithm(src, dst):
    dst[cuda.threadIdx.x] = coop.exclusive_sum(coop.this_warp(), src[cuda.threadIdx.x], algorithm="warp_scans")  # HERE


# ------------------------------------------------------------------ O1-O10: operation-specific combinations


@cuda.jit
def k_o1_shuffle_distance_two(src, dst):
    block = coop.this_block()
    items = coop.ThreadData(2)
    coop.load(block, src, items)
    out = coop.shuffle(block, items, mode="up", distance=2)  # HERE
    coop.store(block, dst, out)


@cuda.jit
def k_o2_sum_payload_valid_items(src, dst):
    block = coop.this_block()
    items = coop.ThreadData(2)
    coop.load(block, src, items)
    dst[0] = coop.sum(block, items, valid_items=64)  # HERE


@cuda.jit
def k_o3_commutative_only_callable(src, dst):
    dst[0] = coop.reduce(coop.this_block(), src[cuda.threadIdx.x], binary_op=_max,  # HERE
                         algorithm="raking_commutative_only")


@cuda.jit
def k_o5_warp_scan_payload(src, dst):
    warp = coop.this_warp()
    items = coop.ThreadData(2)
    coop.load(warp, src, items)
    out = coop.inclusive_sum(warp, items)  # HERE
    coop.store(warp, dst, out)


@cuda.jit
def k_o6_max_scan_without_initial_value(src, dst):
    dst[cuda.threadIdx.x] = coop.exclusive_scan(coop.this_block(), src[cuda.threadIdx.x], scan_op="max")  # HERE


@cuda.jit
def k_o6_general_scan_without_initial_value(src, dst):
    warp = coop.this_warp()
    dst[cuda.threadIdx.x] = coop.scan(warp, src[cuda.threadIdx.x], mode="exclusive", scan_op="*")  # HERE


@cuda.jit
def k_o7_inclusive_initial_value(src, dst):
    dst[cuda.threadIdx.x] = coop.scan(coop.this_block(), src[cuda.threadIdx.x], mode="inclusive",  # HERE
                                      scan_op="min", initial_value=0)


@cuda.jit
def k_o8_descending_int(src, dst):
    block = coop.this_block()
    keys = coop.ThreadData(2)
    coop.load(block, src, keys)
    out = coop.radix_sort_keys(block, keys, descending=1)  # HERE
    coop.store(block, dst, out)


@cuda.jit
def k_o8_descending_runtime(src, dst, flag):
    warp = coop.this_warp()
    keys = coop.ThreadData(2)
    coop.load(warp, src, keys)
    out = coop.merge_sort_keys(warp, keys, descending=flag)  # HERE
    coop.store(warp, dst, out)


@cuda.jit
def k_o9_valid_items_without_oob(src, dst):
    block = coop.this_block()
    keys = coop.ThreadData(2)
    coop.load(block, src, keys)
    out = coop.merge_sort_keys(block, keys, valid_items=200)  # HERE
    coop.store(block, dst, out)


@cuda.jit
def k_o9_oob_without_valid_items(src, dst):
    lw = coop.this_warp().group_by(16)
    keys = coop.ThreadData(2)
    coop.load(lw, src, keys)
    out = coop.merge_sort_keys(lw, keys, oob_default=2**31 - 1)  # HERE
    coop.store(lw, dst, out)


@cuda.jit
def k_o10_radix_bits_zero(src, dst):
    block = coop.this_block()
    keys = coop.ThreadData(2)
    coop.load(block, src, keys)
    ranks = coop.radix_rank(block, keys, radix_bits=0)  # HERE
    coop.store(block, dst, ranks)


@cuda.jit
def k_o10_radix_bits_mismatch(src, dst):
    block = coop.this_block()
    keys = coop.ThreadData(2)
    coop.load(block, src, keys)
    ranks = coop.radix_rank(block, keys, begin_bit=4, end_bit=8, radix_bits=3)  # HERE
    coop.store(block, dst, ranks)


@cuda.jit
def k_o10_too_wide(src, dst):
    block = coop.this_block()
    keys = coop.ThreadData(2)
    coop.load(block, src, keys)
    ranks = coop.radix_rank(block, keys, begin_bit=0, end_bit=12)  # HERE
    coop.store(block, dst, ranks)


@cuda.jit
def k_o10_runtime_begin_bit(src, dst):
    block = coop.this_block()
    keys = coop.ThreadData(2)
    coop.load(block, src, keys)
    ranks = coop.radix_rank(block, keys, begin_bit=cuda.blockIdx.x % 4)  # HERE
    coop.store(block, dst, ranks)


@cuda.jit
def k_o13_compare_op_descending(src, dst):
    block = coop.this_block()
    keys = coop.ThreadData(2)
    coop.load(block, src, keys)
    out = numba_coop.merge_sort_keys(block, keys, compare_op=_less, descending=True)  # HERE
    coop.store(block, dst, out)


@cuda.jit
def k_o14_prefix_op_with_initial_value(src, dst):
    block = coop.this_block()
    items = coop.ThreadData(2)
    coop.load(block, src, items)
    out = numba_coop.exclusive_scan(block, items, scan_op="max", initial_value=0, prefix_op=_prefix)  # HERE
    coop.store(block, dst, out)


@cuda.jit
def k_o14_prefix_op_on_warp(src, dst):
    dst[cuda.threadIdx.x] = numba_coop.inclusive_sum(coop.this_warp(), src[cuda.threadIdx.x], prefix_op=_prefix)  # HERE


# ------------------------------------------------------------------ C15: compile targets


@cuda.jit
def k_c15_copy(src, dst):
    warp = coop.this_warp()
    items = coop.ThreadData(1)
    coop.load(warp, src, items)
    coop.store(warp, dst, items)


_C15 = "target must look like 'sm_90' or 'sm_90a' with a supported architecture ("

@cuda.jit
def k_reverse_with_prefix_op_and_head_flags(src, dst):
    block = coop.this_block()
    items = coop.ThreadData(2)
    coop.load(block, src, items)
    heads = coop.ThreadData(2, dtype=np.int32)
    for i in range(2):
        heads[i] = items[i] > 0
    out = numba_coop.exclusive_sum(block, items, prefix_op=_prefix, reverse=True, head_flags=heads)  # HERE
    coop.store(block, dst, out)


@cuda.jit
def k_reverse_with_warp_valid_items(src, dst):
    dst[cuda.threadIdx.x] = numba_coop.inclusive_sum(coop.this_warp(), src[cuda.threadIdx.x], valid_items=5,  # HERE
                                                     reverse=True)


CASES = {
    "c6_float_valid_items": (k_c6_float_valid_items, (I32, I32, np.float32(100)), coop.CoopTypeError,
                             "cuda.coop.load valid_items must be a signed integer of at most 64 bits or an unsigned "
                             "integer of at most 32 bits; got float32"),
    "c6_uint64_valid_items_store": (k_c6_uint64_valid_items_store, (I32, I32, np.uint64(10)), coop.CoopTypeError,
                                    "cuda.coop.store valid_items must be a signed integer of at most 64 bits or an "
                                    "unsigned integer of at most 32 bits; got uint64"),
    "c6_float_k": (k_c6_float_k, (I32, I32, 2.0), coop.CoopTypeError,
                   "cuda.coop.topk_min_keys k must be a signed integer of at most 64 bits or an unsigned integer of "
                   "at most 32 bits; got float64"),
    "c7_warp_valid_items_above_tile": (k_c7_warp_valid_items_above_tile, (I32, I32), coop.CoopValueError,
                                       "cuda.coop.load static valid_items must be between 0 and 128; got 129"),
    "c7_logical_warp_store": (k_c7_logical_warp_store_valid_items, (I32, I32), coop.CoopValueError,
                              "cuda.coop.store static valid_items must be between 0 and 16; got 17"),
    "c7_sum_valid_items_zero": (k_c7_sum_valid_items_zero, (I32, I32), coop.CoopValueError,
                                "cuda.coop.sum static valid_items must be between 1 and 128; got 0"),
    "c7_radix_end_bit": (k_c7_radix_end_bit, (I32, I32), coop.CoopValueError,
                         "cuda.coop.radix_sort_keys static end_bit must be between "),
    "c7_topk_k_above_tile": (k_c7_topk_k_above_tile, (I32, I32), coop.CoopValueError,
                             "cuda.coop.topk_max_keys static k must be between 0 and 256; got 257"),
    "c8_warp_store_offset": (k_c8_warp_store_offset, (I32, I32), coop.CoopValueError,
                             "cuda.coop.store static offset must be nonnegative; got -2"),
    "c9_oob_default_float": (k_c9_oob_default_float_for_int, (I32, I32, np.float32(1)), coop.CoopTypeError,
                             "cuda.coop.load oob_default must have the payload dtype int32; got float32; cast it"),
    "c9_initial_value_int64": (k_c9_initial_value_int64_for_int32, (I32, I32, np.int64(1)), coop.CoopTypeError,
                               "cuda.coop.exclusive_scan initial_value must have the payload dtype int32; got int64; "
                               "cast it"),
    "c10_fractional_oob_default": (k_c10_fractional_oob_default, (I32, I32), coop.CoopValueError,
                                   "cuda.coop.load oob_default literal 1.5 is not representable as int32"),
    "c10_int8_overflow": (k_c10_int8_overflow, (I8, I8), coop.CoopValueError,
                          "cuda.coop.load oob_default literal 300 is not representable as int8"),
    "c10_negative_unsigned": (k_c10_negative_unsigned_initial_value, (U32, U32), coop.CoopValueError,
                              "cuda.coop.exclusive_scan initial_value literal -1 is not representable as uint32"),
    "c11_warp_oob_without_valid_items": (k_c11_warp_oob_without_valid_items, (I32, I32), coop.CoopValueError,
                                         "cuda.coop.load oob_default requires valid_items"),
    "c12_warp_reduce_algorithm": (k_c12_warp_reduce_algorithm, (I32, I32), coop.CoopValueError,
                                  "cuda.coop.reduce algorithm is supported only for block groups"),
    "c12_warp_scan_algorithm": (k_c12_warp_scan_algorithm, (I32, I32), coop.CoopValueError,
                                "cuda.coop.exclusive_sum algorithm is supported only for block groups"),
    "o1_shuffle_distance_two": (k_o1_shuffle_distance_two, (I32, I32), coop.CoopValueError,
                                "cuda.coop.shuffle distance must be exactly 1 in the common API; use "
                                "cuda.coop.numba_mlir for scalar offset and rotate shuffles"),
    "o2_sum_payload_valid_items": (k_o2_sum_payload_valid_items, (I32, I32), coop.CoopTypeError,
                                   "cuda.coop.sum valid_items supports scalar values only"),
    "o3_commutative_only_callable": (k_o3_commutative_only_callable, (I32, I32), coop.CoopValueError,
                                     "cuda.coop.reduce algorithm 'raking_commutative_only' requires a built-in "
                                     "commutative operator"),
    "o5_warp_scan_payload": (k_o5_warp_scan_payload, (I32, I32), coop.CoopTypeError,
                             "cuda.coop.inclusive_sum on warp groups accepts one scalar per lane"),
    "o6_max_scan": (k_o6_max_scan_without_initial_value, (I32, I32), coop.CoopValueError,
                    "cuda.coop.exclusive_scan non-sum exclusive scans require initial_value"),
    "o6_general_scan": (k_o6_general_scan_without_initial_value, (I32, I32), coop.CoopValueError,
                        "cuda.coop.scan non-sum exclusive scans require initial_value"),
    "o7_inclusive_initial_value": (k_o7_inclusive_initial_value, (I32, I32), coop.CoopValueError,
                                   "cuda.coop.scan initial_value is not supported for inclusive scans"),
    "o8_descending_int": (k_o8_descending_int, (I32, I32), coop.CoopTypeError,
                          "cuda.coop.radix_sort_keys descending must be a compile-time bool"),
    "o8_descending_runtime": (k_o8_descending_runtime, (I32, I32, True), coop.CoopTypeError,
                              "cuda.coop.merge_sort_keys descending must be a compile-time bool"),
    "o9_valid_items_without_oob": (k_o9_valid_items_without_oob, (I32, I32), coop.CoopValueError,
                                   "valid_items and oob_default must be provided together"),
    "o9_oob_without_valid_items": (k_o9_oob_without_valid_items, (I32, I32), coop.CoopValueError,
                                   "valid_items and oob_default must be provided together"),
    "o10_radix_bits_zero": (k_o10_radix_bits_zero, (U32, I32), coop.CoopValueError,
                            "radix_bits must be positive"),
    "o10_radix_bits_mismatch": (k_o10_radix_bits_mismatch, (U32, I32), coop.CoopValueError,
                                "radix_bits must match end_bit - begin_bit"),
    "o10_too_wide": (k_o10_too_wide, (U32, I32), coop.CoopValueError,
                     "radix_rank bit width must be <= 8"),
    "o10_runtime_begin_bit": (k_o10_runtime_begin_bit, (U32, I32), coop.CoopTypeError,
                              "cuda.coop.radix_rank begin_bit must be a compile-time integer"),
    "o13_compare_op_descending": (k_o13_compare_op_descending, (I32, I32), coop.CoopValueError,
                                  "cuda.coop.numba_mlir.merge_sort_keys compare_op cannot be combined with "
                                  "descending=True"),
    "o14_prefix_op_with_initial_value": (k_o14_prefix_op_with_initial_value, (I32, I32), coop.CoopValueError,
                                         "cuda.coop.numba_mlir.exclusive_scan prefix_op cannot be combined with "
                                         "initial_value without head_flags"),
    "o14_prefix_op_on_warp": (k_o14_prefix_op_on_warp, (I32, I32), coop.CoopValueError,
                              "cuda.coop.numba_mlir.inclusive_sum prefix_op is supported only for block groups"),
    "o17_reverse_with_prefix_op_and_head_flags": (k_reverse_with_prefix_op_and_head_flags, (I32, I32),
                                                  coop.CoopValueError,
                                                  "cuda.coop.numba_mlir.exclusive_sum prefix_op with head_flags "
                                                  "supports forward scans only; got reverse=True"),
    "reverse_with_valid_items": (k_reverse_with_warp_valid_items, (I32, I32), coop.CoopValueError,
                                 "cuda.coop.numba_mlir.inclusive_sum valid_items cannot be combined with reverse=True"),
    "c15_sm90": (k_c15_copy, (I32, I32), coop.CoopValueError, _C15 + "", {"target": "sm90", "locate": "none"}),
    "c15_compute_90": (k_c15_copy, (I32, I32), coop.CoopValueError, "; got 'compute_90'",
                       {"target": "compute_90", "locate": "none"}),
    "c15_empty": (k_c15_copy, (I32, I32), coop.CoopValueError, "; got ''", {"target": "", "locate": "none"}),
}


@pytest.mark.parametrize("case", list(CASES))
def test_control_mistake(case, expect):
    kernel, args, cls, fragment, *rest = CASES[case]
    expect(kernel, args, cls, fragment, **(rest[0] if rest else {}))


@pytest.mark.parametrize("target", ["sm90", "compute_90", ""])
def test_c15_message_shape(target, expect):
    exc = expect(k_c15_copy, (I32, I32), coop.CoopValueError, _C15, target=target, locate="none")
    assert str(exc).startswith(_C15) and str(exc).endswith(f"; got {target!r}"), str(exc)
