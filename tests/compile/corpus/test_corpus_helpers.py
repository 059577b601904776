"""Corpus: device helpers and user callbacks (SPEC 7.1, 7.3, 8.0, 10.2 H1-H3, C14, C16)."""
from __future__ import annotations

import numpy as np
import pytest

import cuda.coop.numba_mlir as numba_coop
from cuda import coop
from numba_cuda_mlir import cuda

I32 = np.zeros(1024, np.int32)
F32 = np.zeros(1024, np.float32)


# ------------------------------------------------------------------ H1: coop calls in non-inlined helpers


@cuda.jit(device=True, inline="never")
def store_twice(dst, items):
    block = coop.this_block()
    coop.store(block, dst, items)
    coop.store(block, dst, items, offset=512)


@cuda.jit
def k_h1_payload_to_helper(src, dst):
    block = coop.this_block()
    items = coop.ThreadData(2)
    coop.load(block, src, items)
    store_twice(dst, items)  # HERE


@cuda.jit(device=True, inline="never")
def warp_total(g, items):
    return coop.sum(g, items)


@cuda.jit
def k_h1_group_and_payload_to_helper(src, dst):
    warp = coop.this_warp()
    items = coop.ThreadData(4)
    coop.load(warp, src, items)
    dst[cuda.threadIdx.x] = warp_total(warp, items)  # HERE


@cuda.jit(device=True, inline="never")
def make_payload():
    fresh = coop.ThreadData(2, dtype=np.int32)
    fresh[0] = 1
    fresh[1] = 2
    return fresh


@cuda.jit
def k_h1_payload_returned_from_helper(src, dst):
    items = make_payload()  # HERE
    coop.store(coop.this_block(), dst, items)



@cuda.jit(device=True, inline="never")
def copy_tile(src, dst):
    block = coop.this_block()  # HERE
    items = coop.ThreadData(2)
    coop.load(block, src, items)
    coop.store(block, dst, items)


@cuda.jit
def k_h1_kernel_without_coop_calls(src, dst):
    copy_tile(src, dst)


# ------------------------------------------------------------------ H3: literal_unroll values shaping a call


@cuda.jit
def k_h3_unrolled_algorithm(src, dst):
    block = coop.this_block()
    items = coop.ThreadData(2)
    for alg in cuda.literal_unroll(("direct", "striped")):
        coop.load(block, src, items, algorithm=alg)  # HERE
    coop.store(block, dst, items)


@cuda.jit
def k_h3_unrolled_group_width(src, dst):
    for width in cuda.literal_unroll((8, 16)):
        lanes = coop.this_warp().group_by(width)  # HERE
        dst[0] = coop.sum(lanes, src[cuda.threadIdx.x])


@cuda.jit
def k_h3_unrolled_storage_size(src, dst):
    for size in cuda.literal_unroll((1024, 2048)):
        temp = coop.TempStorage(size)  # HERE
        dst[0] = coop.sum(coop.this_block(), src[cuda.threadIdx.x], temp_storage=temp)


# ------------------------------------------------------------------ H2: coop calls inside operators


def op_with_block_sum(a, b):
    return a + coop.sum(coop.this_block(), b)


@cuda.jit
def k_h2_operator_calls_sum(src, dst):
    dst[0] = coop.reduce(coop.this_block(), src[cuda.threadIdx.x], binary_op=op_with_block_sum)  # HERE


@cuda.jit(device=True)
def op_with_warp_scan(a, b):
    return a + coop.inclusive_sum(coop.this_warp(), b)


@cuda.jit
def k_h2_device_operator_scan(src, dst):
    dst[cuda.threadIdx.x] = coop.inclusive_scan(coop.this_warp(), src[cuda.threadIdx.x],  # HERE
                                                scan_op=op_with_warp_scan)


# ------------------------------------------------------------------ C14: operators that are not usable


def op_uses_attribute(a, b):
    return a.no_such_attribute + b


def op_returns_tuple(a, b):
    return (a, b)


@cuda.jit
def k_c14_attribute_error(src, dst):
    dst[0] = coop.reduce(coop.this_block(), src[cuda.threadIdx.x], binary_op=op_uses_attribute)  # HERE


@cuda.jit
def k_c14_tuple_result(src, dst):
    warp = coop.this_warp()
    dst[cuda.threadIdx.x] = coop.inclusive_scan(warp, src[cuda.threadIdx.x], scan_op=op_returns_tuple)  # HERE


@cuda.jit
def k_c14_integer_operator(src, dst):
    dst[0] = coop.reduce(coop.this_block(), src[cuda.threadIdx.x], binary_op=3)  # HERE


# ------------------------------------------------------------------ C16: operators defined inside the kernel


@cuda.jit
def k_c16_lambda(src, dst):
    dst[0] = coop.reduce(coop.this_block(), src[cuda.threadIdx.x], binary_op=lambda a, b: a * b)  # HERE


@cuda.jit
def k_c16_lambda_variable(src, dst):
    larger = lambda a, b: a if a > b else b  # noqa: E731
    dst[cuda.threadIdx.x] = numba_coop.inclusive_scan(coop.this_block(), src[cuda.threadIdx.x], scan_op=larger)  # HERE


@cuda.jit
def k_c16_nested_def(src, dst):
    def smaller(a, b):
        return a if a < b else b

    dst[0] = coop.reduce(coop.this_warp(), src[cuda.threadIdx.x], binary_op=smaller)  # HERE


CASES = {
    "h1_payload_to_helper": (k_h1_payload_to_helper, (I32, I32), coop.CoopTypeError,
                             "device function store_twice contains cuda.coop operations but is not inlined into the "
                             "kernel; declare it with @cuda.jit(device=True, inline=\"always\")",
                             ),
    "h1_group_and_payload_to_helper": (k_h1_group_and_payload_to_helper, (I32, I32), coop.CoopTypeError,
                                       "device function warp_total contains cuda.coop operations but is not inlined "
                                       "into the kernel; declare it with @cuda.jit(device=True, inline=\"always\")"),
    "h1_payload_returned_from_helper": (k_h1_payload_returned_from_helper, (I32, I32), coop.CoopTypeError,
                                        "device function make_payload contains cuda.coop operations but is not "
                                        "inlined into the kernel; declare it with @cuda.jit(device=True, "
                                        "inline=\"always\")"),
    "h1_helper_of_kernel_without_coop_calls": (k_h1_kernel_without_coop_calls, (I32, I32), coop.CoopTypeError,
                                               "device function copy_tile contains cuda.coop operations but is not "
                                               "inlined into the kernel; declare it with @cuda.jit(device=True, "
                                               "inline=\"always\")", {"where": copy_tile}),
    "h3_unrolled_algorithm": (k_h3_unrolled_algorithm, (I32, I32), coop.CoopTypeError,
                              "cuda.coop.load algorithm depends on a literal_unroll value; write separate explicit "
                              "calls"),
    "h3_unrolled_group_width": (k_h3_unrolled_group_width, (I32, I32), coop.CoopTypeError,
                                "ThreadGroup.group_by count depends on a literal_unroll value; write separate "
                                "explicit calls"),
    "h3_unrolled_storage_size": (k_h3_unrolled_storage_size, (I32, I32), coop.CoopTypeError,
                                 "cuda.coop.TempStorage size_in_bytes depends on a literal_unroll value; write "
                                 "separate explicit calls"),
    "h2_operator_calls_sum": (k_h2_operator_calls_sum, (I32, I32), coop.CoopTypeError,
                              "cuda.coop.reduce binary_op op_with_block_sum contains cuda.coop operations; callbacks "
                              "may only do per-thread computation"),
    "h2_device_operator_scan": (k_h2_device_operator_scan, (I32, I32), coop.CoopTypeError,
                                "cuda.coop.inclusive_scan scan_op op_with_warp_scan contains cuda.coop operations; "
                                "callbacks may only do per-thread computation"),
    "c14_attribute_error": (k_c14_attribute_error, (I32, I32), coop.CoopTypeError,
                            "cuda.coop.reduce binary_op op_uses_attribute could not be compiled for (int32, int32): "),
    "c14_tuple_result": (k_c14_tuple_result, (F32, F32), coop.CoopTypeError,
                         "cuda.coop.inclusive_scan scan_op op_returns_tuple could not be compiled for (float32, "
                         "float32): "),
    "c14_integer_operator": (k_c14_integer_operator, (I32, I32), coop.CoopTypeError,
                             "cuda.coop.reduce binary_op must be an operator string or a Python/device function; "
                             "got 3"),
    "c16_lambda": (k_c16_lambda, (I32, I32), coop.CoopTypeError,
                   "cuda.coop.reduce binary_op k_c16_lambda.<locals>.<lambda> is defined inside the kernel; define "
                   "operator callables at module scope"),
    "c16_lambda_variable": (k_c16_lambda_variable, (I32, I32), coop.CoopTypeError,
                            "cuda.coop.numba_mlir.inclusive_scan scan_op k_c16_lambda_variable.<locals>.<lambda> is "
                            "defined inside the kernel; define operator callables at module scope"),
    "c16_nested_def": (k_c16_nested_def, (I32, I32), coop.CoopTypeError,
                       "cuda.coop.reduce binary_op k_c16_nested_def.<locals>.smaller is defined inside the kernel; "
                       "define operator callables at module scope"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_helper_mistake(case, expect):
    kernel, args, cls, fragment, *rest = CASES[case]
    expect(kernel, args, cls, fragment, **(rest[0] if rest else {}))
