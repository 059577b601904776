"""Corpus: call-signature and selector mistakes, and §9 options in common calls (SPEC 2.3, 9, 10.2 C1-C5, R9)."""
from __future__ import annotations

import enum

import numpy as np
import pytest

import cuda.coop.numba_mlir as numba_coop
from cuda import coop
from numba_cuda_mlir import cuda

I32 = np.zeros(1024, np.int32)
F32 = np.zeros(1024, np.float32)


class Algo(enum.Enum):
    DIRECT = "direct"


class Mode(enum.IntEnum):
    BLOCKED_TO_STRIPED = 1


# ------------------------------------------------------------------ C5: unknown keywords, options passed positionally


@cuda.jit
def k_c5_only_evidence_has_typo(src, dst):
    items = coop.ThreadData(4)
    coop.load(coop.this_block(), src, items, count=4)  # HERE
    dst[cuda.threadIdx.x] = items[0]


@cuda.jit
def k_c5_qualified_store_typo(src, dst):
    block = coop.this_block()
    items = coop.ThreadData(2, dtype=np.int32)
    numba_coop.load(block, src, items)
    numba_coop.store(block, dst, items, valid=100)  # HERE


@cuda.jit
def k_c5_sum_has_no_binary_op(src, dst):
    total = coop.sum(coop.this_block(), src[cuda.threadIdx.x], binary_op="max")  # HERE
    dst[0] = total


@cuda.jit
def k_c5_inclusive_sum_initial_value(src, dst):
    block = coop.this_block()
    items = coop.ThreadData(2)
    coop.load(block, src, items)
    out = coop.inclusive_sum(block, items, init=3)  # HERE
    coop.store(block, dst, out)


@cuda.jit
def k_c5_histogram_oob_default(src, dst):
    block = coop.this_block()
    samples = coop.ThreadData(4)
    coop.load(block, src, samples)
    out = coop.histogram(block, samples, bins=64, valid_items=100, oob_default=0)  # HERE
    coop.store(block, dst, out)


@cuda.jit
def k_c5_exchange_mode_positional(src, dst):
    block = coop.this_block()
    items = coop.ThreadData(4)
    coop.load(block, src, items)
    out = coop.exchange(block, items, "blocked_to_striped")  # HERE
    coop.store(block, dst, out)


@cuda.jit
def k_c5_reduce_op_positional(src, dst):
    best = coop.reduce(coop.this_block(), src[cuda.threadIdx.x], "max")  # HERE
    dst[0] = best


@cuda.jit
def k_c5_merge_descending_positional(src, dst):
    warp = coop.this_warp()
    keys = coop.ThreadData(2)
    coop.load(warp, src, keys)
    out = coop.merge_sort_keys(warp, keys, True)  # HERE
    coop.store(warp, dst, out)


@cuda.jit
def k_c5_topk_k_positional(src, dst):
    block = coop.this_block()
    keys = coop.ThreadData(2)
    coop.load(block, src, keys)
    out = numba_coop.topk_max_keys(block, keys, 8)  # HERE
    coop.store(block, dst, out)


@cuda.jit
def k_c5_store_offset_positional(src, dst):
    block = coop.this_block()
    items = coop.ThreadData(2)
    coop.load(block, src, items)
    coop.store(block, dst, items, "direct", 0)  # HERE


# ------------------------------------------------------------------ C1: selectors that are not strings


@cuda.jit
def k_c1_algorithm_one(src, dst):
    block = coop.this_block()
    items = coop.ThreadData(2)
    coop.load(block, src, items, algorithm=1)  # HERE
    coop.store(block, dst, items)


@cuda.jit
def k_c1_algorithm_enum(src, dst):
    block = coop.this_block()
    items = coop.ThreadData(2)
    coop.load(block, src, items, algorithm=Algo.DIRECT)  # HERE
    coop.store(block, dst, items)


@cuda.jit
def k_c1_algorithm_none(src, dst):
    block = coop.this_block()
    items = coop.ThreadData(2)
    coop.load(block, src, items)
    coop.store(block, dst, items, algorithm=None)  # HERE


@cuda.jit
def k_c1_algorithm_true(src, dst):
    warp = coop.this_warp()
    items = coop.ThreadData(2)
    numba_coop.load(warp, src, items, algorithm=True)  # HERE
    coop.store(warp, dst, items)


@cuda.jit
def k_c1_mode_zero(src, dst):
    block = coop.this_block()
    items = coop.ThreadData(2)
    coop.load(block, src, items)
    out = coop.exchange(block, items, mode=0)  # HERE
    coop.store(block, dst, out)


@cuda.jit
def k_c1_mode_int_enum(src, dst):
    block = coop.this_block()
    items = coop.ThreadData(2)
    coop.load(block, src, items)
    out = numba_coop.exchange(block, items, mode=Mode.BLOCKED_TO_STRIPED)  # HERE
    coop.store(block, dst, out)


@cuda.jit
def k_c1_reduce_algorithm_false(src, dst):
    dst[0] = coop.reduce(coop.this_block(), src[cuda.threadIdx.x], binary_op="min", algorithm=False)  # HERE


@cuda.jit
def k_c1_scan_mode_int(src, dst):
    block = coop.this_block()
    dst[cuda.threadIdx.x] = coop.scan(block, src[cuda.threadIdx.x], mode=1)  # HERE


# ------------------------------------------------------------------ C2: unknown selectors


@cuda.jit
def k_c2_exchange_mode(src, dst):
    block = coop.this_block()
    items = coop.ThreadData(2)
    coop.load(block, src, items)
    out = coop.exchange(block, items, mode="blocked_to_blocked")  # HERE
    coop.store(block, dst, out)


@cuda.jit
def k_c2_reduce_algorithm(src, dst):
    dst[0] = numba_coop.reduce(coop.this_block(), src[cuda.threadIdx.x], binary_op="max", algorithm="tree")  # HERE


@cuda.jit
def k_c2_scan_mode(src, dst):
    dst[cuda.threadIdx.x] = coop.scan(coop.this_block(), src[cuda.threadIdx.x], mode="both")  # HERE


@cuda.jit
def k_c2_load_algorithm_typo(src, dst):
    warp = coop.this_warp()
    items = coop.ThreadData(2)
    coop.load(warp, src, items, algorithm="stripe")  # HERE
    coop.store(warp, dst, items)


@cuda.jit
def k_c2_scan_algorithm(src, dst):
    block = coop.this_block()
    items = coop.ThreadData(2)
    coop.load(block, src, items)
    out = coop.exclusive_sum(block, items, algorithm="blelloch")  # HERE
    coop.store(block, dst, out)


# ------------------------------------------------------------------ C3: qualified-only selectors/options, common call


@cuda.jit
def k_c3_warp_striped_mode(src, dst):
    block = coop.this_block()
    items = coop.ThreadData(2)
    coop.load(block, src, items)
    out = coop.exchange(block, items, mode="warp_striped_to_blocked")  # HERE
    coop.store(block, dst, out)


@cuda.jit
def k_c3_scatter_mode(src, dst):
    block = coop.this_block()
    items = coop.ThreadData(2)
    coop.load(block, src, items)
    out = coop.exchange(block, items, mode="Scatter-To-Striped")  # HERE
    coop.store(block, dst, out)


@cuda.jit
def k_c3_blocked_to_warp_striped_mode(src, dst):
    block = coop.this_block()
    items = coop.ThreadData(2)
    coop.load(block, src, items)
    out = coop.exchange(block, items, mode="blocked_to_warp_striped")  # HERE
    coop.store(block, dst, out)


def some_function(aggregate):
    return aggregate


@cuda.jit
def k_c3_exchange_warp_time_slicing(src, dst):
    block = coop.this_block()
    items = coop.ThreadData(2)
    coop.load(block, src, items)
    out = coop.exchange(block, items, warp_time_slicing=True)  # HERE
    coop.store(block, dst, out)


@cuda.jit
def k_c3_warp_inclusive_sum_valid_items(src, dst):
    warp = coop.this_warp()
    dst[cuda.threadIdx.x] = coop.inclusive_sum(warp, src[cuda.threadIdx.x], valid_items=16)  # HERE


@cuda.jit
def k_c3_exclusive_sum_aggregate_output(src, dst):
    block = coop.this_block()
    items = coop.ThreadData(2)
    coop.load(block, src, items)
    agg = coop.ThreadData(1, dtype=np.int32)
    out = coop.exclusive_sum(block, items, aggregate_output=agg)  # HERE
    coop.store(block, dst, out)


@cuda.jit
def k_c3_radix_blocked_to_striped(src, dst):
    block = coop.this_block()
    keys = coop.ThreadData(2)
    coop.load(block, src, keys)
    out = coop.radix_sort_keys(block, keys, blocked_to_striped=True)  # HERE
    coop.store(block, dst, out)


@cuda.jit
def k_c3_prefix_op_callable(src, dst):
    block = coop.this_block()
    items = coop.ThreadData(2)
    coop.load(block, src, items)
    out = coop.exclusive_sum(block, items, prefix_op=some_function)  # HERE
    coop.store(block, dst, out)


# ------------------------------------------------------------------ C4: compile-time parameters given runtime values


@cuda.jit
def k_c4_op_runtime(src, dst, op):
    dst[0] = coop.reduce(coop.this_block(), src[cuda.threadIdx.x], binary_op=op)  # HERE


@cuda.jit
def k_c4_broadcast_runtime(src, dst, flag):
    dst[0] = coop.sum(coop.this_block(), src[cuda.threadIdx.x], broadcast=flag)  # HERE


@cuda.jit
def k_c4_mode_runtime(src, dst, mode):
    block = coop.this_block()
    items = coop.ThreadData(2)
    coop.load(block, src, items)
    out = coop.exchange(block, items, mode=mode)  # HERE
    coop.store(block, dst, out)


CASES = {
    "c5_typo_is_the_only_evidence": (k_c5_only_evidence_has_typo, (I32, I32), coop.CoopTypeError,
                                     "cuda.coop.load got an unexpected keyword argument 'count'"),
    "c5_qualified_store_typo": (k_c5_qualified_store_typo, (I32, I32), coop.CoopTypeError,
                                "cuda.coop.numba_mlir.store got an unexpected keyword argument 'valid'"),
    "c5_sum_binary_op": (k_c5_sum_has_no_binary_op, (I32, I32), coop.CoopTypeError,
                         "cuda.coop.sum got an unexpected keyword argument 'binary_op'"),
    "c5_inclusive_sum_init": (k_c5_inclusive_sum_initial_value, (I32, I32), coop.CoopTypeError,
                              "cuda.coop.inclusive_sum got an unexpected keyword argument 'init'"),
    "c5_histogram_oob_default": (k_c5_histogram_oob_default, (I32, I32), coop.CoopTypeError,
                                 "cuda.coop.histogram got an unexpected keyword argument 'oob_default'"),
    "c5_exchange_positional_mode": (k_c5_exchange_mode_positional, (I32, I32), coop.CoopTypeError,
                                    "cuda.coop.exchange takes 2 positional operands; pass options by keyword"),
    "c5_reduce_positional_op": (k_c5_reduce_op_positional, (I32, I32), coop.CoopTypeError,
                                "cuda.coop.reduce takes 2 positional operands; pass options by keyword"),
    "c5_merge_positional_descending": (k_c5_merge_descending_positional, (I32, I32), coop.CoopTypeError,
                                       "cuda.coop.merge_sort_keys takes 2 positional operands; pass options by "
                                       "keyword"),
    "c5_topk_positional_k": (k_c5_topk_k_positional, (I32, I32), coop.CoopTypeError,
                             "cuda.coop.numba_mlir.topk_max_keys takes 2 positional operands; pass options by keyword"),
    "c5_store_positional_options": (k_c5_store_offset_positional, (I32, I32), coop.CoopTypeError,
                                    "cuda.coop.store takes 3 positional operands; pass options by keyword"),
    "c1_algorithm_one": (k_c1_algorithm_one, (I32, I32), coop.CoopTypeError,
                         "cuda.coop.load algorithm must be a string; got int"),
    "c1_algorithm_enum": (k_c1_algorithm_enum, (I32, I32), coop.CoopTypeError,
                          "cuda.coop.load algorithm must be a string; got Algo"),
    "c1_algorithm_none": (k_c1_algorithm_none, (I32, I32), coop.CoopTypeError,
                          "cuda.coop.store algorithm must be a string; got NoneType"),
    "c1_algorithm_true": (k_c1_algorithm_true, (I32, I32), coop.CoopTypeError,
                          "cuda.coop.numba_mlir.load algorithm must be a string; got bool"),
    "c1_mode_zero": (k_c1_mode_zero, (I32, I32), coop.CoopTypeError,
                     "cuda.coop.exchange mode must be a string; got int"),
    "c1_mode_int_enum": (k_c1_mode_int_enum, (I32, I32), coop.CoopTypeError,
                         "cuda.coop.numba_mlir.exchange mode must be a string; got Mode"),
    "c1_reduce_algorithm_false": (k_c1_reduce_algorithm_false, (I32, I32), coop.CoopTypeError,
                                  "cuda.coop.reduce algorithm must be a string; got bool"),
    "c1_scan_mode_int": (k_c1_scan_mode_int, (I32, I32), coop.CoopTypeError,
                         "cuda.coop.scan mode must be a string; got int"),
    "c2_exchange_mode": (k_c2_exchange_mode, (I32, I32), coop.CoopValueError,
                         "cuda.coop.exchange mode must be one of: "),
    "c2_reduce_algorithm": (k_c2_reduce_algorithm, (I32, I32), coop.CoopValueError,
                            "cuda.coop.numba_mlir.reduce algorithm must be one of: "),
    "c2_scan_mode": (k_c2_scan_mode, (I32, I32), coop.CoopValueError,
                     "cuda.coop.scan mode must be one of: "),
    "c2_load_algorithm_typo": (k_c2_load_algorithm_typo, (I32, I32), coop.CoopValueError,
                               "cuda.coop.load algorithm must be one of: "),
    "c2_scan_algorithm": (k_c2_scan_algorithm, (I32, I32), coop.CoopValueError,
                          "cuda.coop.exclusive_sum algorithm must be one of: "),
    "c3_warp_striped_mode": (k_c3_warp_striped_mode, (I32, I32), coop.CoopValueError,
                             "cuda.coop.exchange mode 'warp_striped_to_blocked' requires cuda.coop.numba_mlir; "
                             "the common API accepts: "),
    "c3_scatter_mode": (k_c3_scatter_mode, (I32, I32), coop.CoopValueError,
                        "cuda.coop.exchange mode 'Scatter-To-Striped' requires cuda.coop.numba_mlir; "
                        "the common API accepts: striped_to_blocked, blocked_to_striped"),
    "c3_blocked_to_warp_striped": (k_c3_blocked_to_warp_striped_mode, (I32, I32), coop.CoopValueError,
                                   "cuda.coop.exchange mode 'blocked_to_warp_striped' requires cuda.coop.numba_mlir"),
    "c4_op_runtime": (k_c4_op_runtime, (I32, I32, "max"), coop.CoopTypeError,
                      "cuda.coop.reduce binary_op must be a compile-time value"),
    "c3_exchange_warp_time_slicing": (k_c3_exchange_warp_time_slicing, (I32, I32), coop.CoopValueError,
                                      "cuda.coop.exchange warp_time_slicing True requires cuda.coop.numba_mlir; the "
                                      "common API accepts: mode, temp_storage"),
    "c3_warp_inclusive_sum_valid_items": (k_c3_warp_inclusive_sum_valid_items, (I32, I32), coop.CoopValueError,
                                          "cuda.coop.inclusive_sum valid_items 16 requires cuda.coop.numba_mlir; the "
                                          "common API accepts: algorithm, reverse, head_flags, "
                                          "temp_storage"),
    "c3_exclusive_sum_aggregate_output": (k_c3_exclusive_sum_aggregate_output, (I32, I32), coop.CoopValueError,
                                          "cuda.coop.exclusive_sum aggregate_output requires cuda.coop.numba_mlir; the "
                                          "common API accepts: algorithm, reverse, head_flags, "
                                          "temp_storage"),
    "c3_radix_blocked_to_striped": (k_c3_radix_blocked_to_striped, (I32, I32), coop.CoopValueError,
                                    "cuda.coop.radix_sort_keys blocked_to_striped True requires cuda.coop.numba_mlir; "
                                    "the common API accepts: begin_bit, end_bit, descending, valid_items, oob_default, "
                                    "temp_storage"),
    "c3_prefix_op_callable_by_name": (k_c3_prefix_op_callable, (I32, I32), coop.CoopValueError,
                                      "cuda.coop.exclusive_sum prefix_op some_function requires cuda.coop.numba_mlir; "
                                      "the common API accepts: algorithm, reverse, head_flags, temp_storage"),
    "c4_broadcast_runtime": (k_c4_broadcast_runtime, (I32, I32, True), coop.CoopTypeError,
                             "cuda.coop.sum broadcast must be a compile-time bool"),
    "c4_mode_runtime": (k_c4_mode_runtime, (I32, I32, "striped_to_blocked"), coop.CoopTypeError,
                        "cuda.coop.exchange mode must be a compile-time string"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_signature_mistake(case, expect):
    kernel, args, cls, fragment, *rest = CASES[case]
    expect(kernel, args, cls, fragment, **(rest[0] if rest else {}))
