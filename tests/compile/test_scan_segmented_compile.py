"""Segmented scans' head flags on numba-cuda-mlir without a GPU (SPEC 8.17; docs: operations/scan, "Reverse and
segmented scans"): a scalar scan's flag may be a boolean scalar (a comparison, ``not``, an element of a boolean
array), a payload's flags are integers. Comparisons as flags on both backends: the conformance cases
``segmented_scan-*compared_flags*``; the kernel below runs on the GPU in tests/gpu/test_scan_segmented_gpu.py."""
from __future__ import annotations

import functools

import numpy as np

import cuda.coop.numba_mlir  # noqa: F401  (registers the backend)
from cuda import coop
from numba_cuda_mlir import cuda

from compile_helpers import build_kernel, expect_compile_error

THREADS = 128


@functools.cache
def boolean_flags_kernel():
    """Per thread one item: a warp inclusive sum flagged by a boolean array's element, a block exclusive sum
    flagged by ``not`` of an integer, and a logical-warp reverse inclusive max flagged by a comparison."""
    @cuda.jit
    def kernel(src, starts, by_array, by_not, by_comparison):
        block = coop.this_block()
        i = cuda.blockIdx.x * THREADS + block.rank()
        by_array[i] = coop.inclusive_sum(coop.this_warp(), src[i], head_flags=starts[i])
        by_not[i] = coop.exclusive_sum(block, src[i], head_flags=not src[i])
        by_comparison[i] = coop.inclusive_scan(coop.this_warp().group_by(8), src[i], scan_op="max",
                                               head_flags=src[i] < 0, reverse=True)

    return kernel


def boolean_flags_args(src, starts):
    return (src, starts, *(np.zeros(src.size, np.int32) for _ in range(3)))


def test_boolean_scalar_flags_build_inline():
    """Each boolean flag crosses as one byte (0 or 1) and every call inlines."""
    built = build_kernel(boolean_flags_kernel(), boolean_flags_args(np.zeros(THREADS, np.int32),
                                                                    np.zeros(THREADS, np.bool_)))
    assert built.cpp_source.count("unsigned char flag") == 3


def test_boolean_payload_flags_list_the_integer_dtypes():
    """Boolean payloads stay P2; the message lists what a payload of flags may hold (not the floats)."""
    @cuda.jit
    def kernel(src, dst):
        block = coop.this_block()
        items = coop.ThreadData(4, np.int32)
        heads = coop.ThreadData(4, np.bool_)
        coop.load(block, src, items)
        for j in range(4):
            heads[j] = items[j] != 0
        coop.store(block, dst, coop.inclusive_sum(block, items, head_flags=heads))  # HERE

    exc = expect_compile_error(kernel, (np.zeros(512, np.int32), np.zeros(512, np.int32)), coop.CoopTypeError,
                               "cuda.coop.inclusive_sum does not support head_flags dtype bool; supported: int8, "
                               "int16, int32, int64, uint8, uint16, uint32, uint64; a boolean flag is accepted as "
                               "the scalar of a scalar scan", exact_class=True, line_marker="# HERE")
    assert "float" not in str(exc)
