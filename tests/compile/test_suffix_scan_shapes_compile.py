"""The block suffix scan's two forms (block_suffix_scan.cuh) at the block shapes that pick them: scalars scan by
warps; (flags, value) pairs rake through warp 0 in blocks of whole warps (two barriers) and scan by warps in a block
with a partial warp. The kernels are the GPU test's (tests/gpu/test_suffix_scan_shapes_gpu.py): a reverse segmented
inclusive sum and a compacted segment sum over a tile of K items per thread, in blocks of 64 to 1024 threads, one and
two dimensional."""
from __future__ import annotations

import functools

import numpy as np
import pytest
from compile_helpers import build_kernel

import cuda.coop.numba_mlir  # noqa: F401  (registers the backend)
from cuda import coop
from numba_cuda_mlir import cuda  # after cuda.coop: the name `cuda` is numba's

K = 4
# (block shape, whether the pairs rake): whole warps rake at every count of warps; a partial warp keeps the warp scans
SHAPES = [((64, 1), True), ((256, 1), True), ((1024, 1), True), ((32, 8), True), ((16, 4), True), ((104, 1), False)]


@functools.lru_cache(maxsize=None)
def segment_kernels():
    """(reverse segmented inclusive sum, compacted segment sums): one tile of K items per thread per block, the head
    flags beside the values."""

    @cuda.jit
    def reverse_segmented(src, flags_in, dst):
        block = coop.this_block()
        base = np.int64(cuda.blockIdx.x) * (cuda.blockDim.x * cuda.blockDim.y * K)
        items = coop.ThreadData(K, np.int32)
        heads = coop.ThreadData(K, np.int32)
        coop.load(block, src, items, offset=base)
        coop.load(block, flags_in, heads, offset=base)
        coop.store(block, dst, coop.inclusive_sum(block, items, head_flags=heads, reverse=True), offset=base)

    @cuda.jit
    def compacted(src, flags_in, dst, counts):
        block = coop.this_block()
        base = np.int64(cuda.blockIdx.x) * (cuda.blockDim.x * cuda.blockDim.y * K)
        items = coop.ThreadData(K, np.int32)
        heads = coop.ThreadData(K, np.int32)
        coop.load(block, src, items, offset=base)
        coop.load(block, flags_in, heads, offset=base)
        totals, count = coop.sum(block, items, head_flags=heads, compact=True)
        coop.store(block, dst, totals, offset=base, valid_items=count)
        if cuda.threadIdx.x == 0 and cuda.threadIdx.y == 0:
            counts[cuda.blockIdx.x] = count

    return reverse_segmented, compacted


I32 = np.zeros(16, np.int32)


@pytest.mark.parametrize("shape,rakes", SHAPES, ids=[f"{x}x{y}" for (x, y), _ in SHAPES])
def test_pairs_rake_in_blocks_of_whole_warps(shape, rakes):
    reverse_segmented, compacted = segment_kernels()
    plain = build_kernel(reverse_segmented, (I32, I32, I32), block=shape)
    compact = build_kernel(compacted, (I32, I32, I32, I32), block=shape)
    # raking: a barrier before warp 0 folds the pairs and one after (the warp scans: one); the compaction's scatter
    # adds one
    scan_barriers = 2 if rakes else 1
    assert plain.sass().count("BAR.SYNC") == scan_barriers
    assert compact.sass().count("BAR.SYNC") == scan_barriers + 1
