"""sm_90 builds of the qualified argmax/argmin without the broadcast (docs: operations/argreduce, "Qualified
addition"); the CuTe DSL twin is in tests/cute_dsl/test_cutlass_compile.py."""
from __future__ import annotations

import numpy as np
import pytest
from numba_cuda_mlir import cuda

import cuda.coop.numba_mlir as numba_coop
from cuda import coop

from compile_helpers import build_kernel, expect_compile_error

THREADS, K = 128, 4
I32 = np.zeros(2 * THREADS * K, np.int32)


def argmax_kernel(broadcast):
    """A block's and every warp's argmax; rank 0 (lane 0) writes (value, index)."""
    @cuda.jit
    def kernel(src, block_out, warp_out):
        block = coop.this_block()
        items = coop.ThreadData(K)
        coop.load(block, src, items, offset=cuda.blockIdx.x * (THREADS * K))
        value, index = numba_coop.argmax(block, items, broadcast=broadcast)
        lane_value, lane_index = numba_coop.argmin(coop.this_warp(), items[0], broadcast=broadcast)
        if block.rank() == 0:
            block_out[cuda.blockIdx.x * 2] = value
            block_out[cuda.blockIdx.x * 2 + 1] = index
        if block.rank() % 32 == 0:
            slot = (cuda.blockIdx.x * (THREADS // 32) + block.rank() // 32) * 2
            warp_out[slot] = lane_value
            warp_out[slot + 1] = lane_index

    return kernel


def test_without_broadcast_the_barrier_the_shuffle_and_the_result_slot_go():
    args = (I32, np.zeros(4, np.int32), np.zeros(2 * THREADS // 32 * 2, np.int32))
    every = build_kernel(argmax_kernel(True), args, block=THREADS)
    first = build_kernel(argmax_kernel(False), args, block=THREADS)
    assert every.sass().count("BAR.SYNC") == first.sass().count("BAR.SYNC") + 1
    assert every.sass().count("SHFL") > first.sass().count("SHFL")
    assert first.metadata["scratch_bytes"] < every.metadata["scratch_bytes"]


@pytest.mark.parametrize("value", [None, 1])
def test_broadcast_must_be_a_compile_time_bool(value):
    @cuda.jit
    def kernel(src, dst):
        block = coop.this_block()
        items = coop.ThreadData(K)
        coop.load(block, src, items)
        v, i = numba_coop.argmax(block, items, broadcast=value)  # HERE
        dst[block.rank()] = i

    expect_compile_error(kernel, (I32, I32), coop.CoopTypeError,
                         "cuda.coop.numba_mlir.argmax broadcast must be a compile-time bool")
