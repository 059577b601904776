"""float16 in argmax/argmin and in multi-operand reduce and scans of the qualified numba-cuda-mlir namespace (SPEC 9.2,
8.16, 8.18; docs: qualified, "float16"): sm_90 builds, every call inlined. The same kernels run on the GPU in
tests/gpu/test_float16_gpu.py; the CuTe DSL backend builds no float16 (tests/cute_dsl/test_cutlass_float16.py)."""
from __future__ import annotations

import functools
import re

import numpy as np
from numba_cuda_mlir import cuda

import cuda.coop.numba_mlir as numba_coop
from cuda import coop

from compile_helpers import build_kernel

THREADS, K = 128, 4
TILE = THREADS * K
WARPS = THREADS // 32


@functools.cache
def argreduce_kernel():
    """Per block: argmax and argmin of the tile (payloads), and of every warp's item 0 and item 1 (scalars)."""
    @cuda.jit
    def kernel(src, block_values, block_indices, warp_values, warp_indices):
        block = coop.this_block()
        base = np.int64(cuda.blockIdx.x) * TILE
        items = coop.ThreadData(K)
        numba_coop.load(block, src, items, offset=base)
        largest, at_largest = numba_coop.argmax(block, items)
        smallest, at_smallest = numba_coop.argmin(block, items)
        lane_largest, lane_at_largest = numba_coop.argmax(coop.this_warp(), items[0])
        lane_smallest, lane_at_smallest = numba_coop.argmin(coop.this_warp(), items[1])
        if block.rank() == 0:
            block_values[cuda.blockIdx.x * 2] = largest
            block_values[cuda.blockIdx.x * 2 + 1] = smallest
            block_indices[cuda.blockIdx.x * 2] = at_largest
            block_indices[cuda.blockIdx.x * 2 + 1] = at_smallest
        if block.rank() % 32 == 0:
            slot = (cuda.blockIdx.x * WARPS + block.rank() // 32) * 2
            warp_values[slot] = lane_largest
            warp_values[slot + 1] = lane_smallest
            warp_indices[slot] = lane_at_largest
            warp_indices[slot + 1] = lane_at_smallest

    return kernel


def argreduce_args(src, blocks):
    return (src, np.zeros(blocks * 2, np.float16), np.zeros(blocks * 2, np.int32),
            np.zeros(blocks * WARPS * 2, np.float16), np.zeros(blocks * WARPS * 2, np.int32))


def add_both(a, b):
    return (a[0] + b[0], a[1] + b[1])


def count_and_larger(a, b):
    """(int32 count, float16 larger): float16 second, after a wider member."""
    return (a[0] + b[0], a[1] if a[1] > b[1] else b[1])


@functools.cache
def tuple_kernel():
    """float16 members of tuple scans and reductions: a block inclusive and exclusive scan of (half, int32)
    payloads, a block reduce of (int32, half) payloads, and a warp inclusive scan and reduce of scalars."""
    @cuda.jit
    def kernel(halves, ints, scan_halves, scan_ints, exclusive_halves, exclusive_ints, warp_halves, warp_ints,
               totals_ints, totals_halves):
        block = coop.this_block()
        base = np.int64(cuda.blockIdx.x) * TILE
        h = coop.ThreadData(K)
        n = coop.ThreadData(K)
        numba_coop.load(block, halves, h, offset=base)
        numba_coop.load(block, ints, n, offset=base)
        x, y = numba_coop.inclusive_scan(block, (h, n), scan_op=add_both)
        numba_coop.store(block, scan_halves, x, offset=base)
        numba_coop.store(block, scan_ints, y, offset=base)
        p, q = numba_coop.exclusive_scan(block, (h, n), scan_op=add_both, initial_value=(1.5, 7))
        numba_coop.store(block, exclusive_halves, p, offset=base)
        numba_coop.store(block, exclusive_ints, q, offset=base)
        count, larger = numba_coop.reduce(block, (n, h), binary_op=count_and_larger)
        lane_half, lane_int = numba_coop.inclusive_scan(coop.this_warp(), (h[0], n[0]), scan_op=add_both)
        warp_count, warp_larger = numba_coop.reduce(coop.this_warp(), (n[1], h[1]), binary_op=count_and_larger)
        thread = base // K + block.rank()
        warp_halves[thread] = lane_half
        warp_ints[thread] = lane_int
        if block.rank() == 0:
            totals_ints[cuda.blockIdx.x * (WARPS + 1)] = count
            totals_halves[cuda.blockIdx.x * (WARPS + 1)] = larger
        if block.rank() % 32 == 0:
            slot = cuda.blockIdx.x * (WARPS + 1) + 1 + block.rank() // 32
            totals_ints[slot] = warp_count
            totals_halves[slot] = warp_larger

    return kernel


def tuple_args(halves, ints, blocks):
    n = blocks * TILE
    return (halves, ints, np.zeros(n, np.float16), np.zeros(n, np.int32), np.zeros(n, np.float16),
            np.zeros(n, np.int32), np.zeros(blocks * THREADS, np.float16), np.zeros(blocks * THREADS, np.int32),
            np.zeros(blocks * (WARPS + 1), np.int32), np.zeros(blocks * (WARPS + 1), np.float16))


def test_float16_argmax_and_argmin_build_inline():
    """float16 items (payloads and scalars) as SPEC 9.2 says of every float operation; the pair holds a __half."""
    built = build_kernel(argreduce_kernel(), argreduce_args(np.zeros(TILE, np.float16), 1))
    assert len(re.findall(r"using Algo = cuda_coop::(?:Block|Warp)ArgReduce<__half, ", built.cpp_source)) == 4
    assert "__ushort_as_half(value)" in built.cpp_source  # the scalars arrive as their 16 bits


def test_float16_members_of_tuple_scans_and_reductions_build_inline():
    """A float16 member of a tuple (SPEC 8.18, 9.2): the tuple struct holds a __half and the user's function takes
    it by pointer, as single-operand float16 callables do, so LTO inlines it and no local memory is left."""
    built = build_kernel(tuple_kernel(), tuple_args(np.zeros(TILE, np.float16), np.zeros(TILE, np.int32), 1))
    source = built.cpp_source
    assert "struct cuda_coop_tuple_float16_int32 { __half f0; int f1; };" in source
    assert "struct cuda_coop_tuple_int32_float16 { int f0; __half f1; };" in source
    assert "(__half*, int*, __half*, int, __half*, int);" in source  # add_both over (float16, int32)
    assert "(int*, __half*, int, __half*, int, __half*);" in source  # count_and_larger over (int32, float16)
