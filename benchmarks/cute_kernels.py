"""CuTe DSL tile kernels of benchmarks/cute.py (CuTe reads kernel source, so they live in a file of their own).

Every kernel mirrors the numba-cuda-mlir kernel of the same operation in the existing families (and its CUB C++
twin): 256 threads, one tile per block, block ``b`` takes tile ``b``, the tile size a compile-time constant. Each
``@cute.jit`` launcher launches one kernel on ``stream`` with one block per tile of ``src``. Import torch before
this module where both are used (the other order once broke torch's schema parser).
"""
from __future__ import annotations

import numpy as np
import cutlass
import cutlass.cute as cute
from cuda.bindings import driver as cudrv

import cuda.coop.cutlass as cute_coop  # registers the backend; its qualified argmax
from cuda import coop

from .cute import segmented_tile_algorithm

THREADS = 256
ITEMS = 4  # copy, sum, scan, exchange, sorts, top-k: 256 x 4 int32
HISTOGRAM_ITEMS = 16  # 256 x 16 uint8 samples, as tier4.py's uint8 rows
BINS = 256  # one bin per thread
TOPK = 16  # keys kept per tile
TILE = THREADS * ITEMS
HISTOGRAM_TILE = THREADS * HISTOGRAM_ITEMS


def _grid(src: cute.Tensor, tile: int):
    return (cute.size(src) // tile, 1, 1)


# --- cuda.coop kernels -----------------------------------------------------------------

@cute.kernel
def copy_direct_kernel(src: cute.Tensor, dst: cute.Tensor):
    bid, _, _ = cute.arch.block_idx()
    block = coop.this_block()
    items = coop.ThreadData(ITEMS, np.int32)
    coop.load(block, src, items, algorithm="direct", offset=bid * TILE)
    coop.store(block, dst, items, algorithm="direct", offset=bid * TILE)


@cute.kernel
def copy_transpose_kernel(src: cute.Tensor, dst: cute.Tensor):
    bid, _, _ = cute.arch.block_idx()
    block = coop.this_block()
    items = coop.ThreadData(ITEMS, np.int32)
    coop.load(block, src, items, algorithm="transpose", offset=bid * TILE)
    coop.store(block, dst, items, algorithm="transpose", offset=bid * TILE)


@cute.kernel
def sum_kernel(src: cute.Tensor, totals: cute.Tensor):
    """One partial per block (collectives.py's sum_partials): striped load, block sum, thread 0 writes it."""
    bid, _, _ = cute.arch.block_idx()
    block = coop.this_block()
    items = coop.ThreadData(ITEMS, np.int32)
    coop.load(block, src, items, algorithm="striped", offset=bid * TILE)
    total = coop.sum(block, items, algorithm="warp_reductions", broadcast=False)  # thread 0 only, as in CUB
    if block.rank() == 0:
        totals[bid] = total


@cute.kernel
def exclusive_sum_kernel(src: cute.Tensor, dst: cute.Tensor):
    bid, _, _ = cute.arch.block_idx()
    block = coop.this_block()
    items = coop.ThreadData(ITEMS, np.int32)
    coop.load(block, src, items, algorithm="transpose", offset=bid * TILE)
    scanned = coop.exclusive_sum(block, items, algorithm="raking")
    coop.store(block, dst, scanned, algorithm="transpose", offset=bid * TILE)


@cute.kernel
def exchange_kernel(src: cute.Tensor, dst: cute.Tensor):
    """Direct (blocked) load, blocked_to_striped, striped store: each tile is copied through the permutation."""
    bid, _, _ = cute.arch.block_idx()
    block = coop.this_block()
    items = coop.ThreadData(ITEMS, np.int32)
    coop.load(block, src, items, algorithm="direct", offset=bid * TILE)
    striped = coop.exchange(block, items, mode="blocked_to_striped")
    coop.store(block, dst, striped, algorithm="striped", offset=bid * TILE)


@cute.kernel
def merge_sort_kernel(src: cute.Tensor, dst: cute.Tensor):
    bid, _, _ = cute.arch.block_idx()
    block = coop.this_block()
    keys = coop.ThreadData(ITEMS, np.int32)
    coop.load(block, src, keys, algorithm="warp_transpose", offset=bid * TILE)
    coop.store(block, dst, coop.merge_sort_keys(block, keys), algorithm="warp_transpose", offset=bid * TILE)


@cute.kernel
def radix_sort_kernel(src: cute.Tensor, dst: cute.Tensor):
    bid, _, _ = cute.arch.block_idx()
    block = coop.this_block()
    keys = coop.ThreadData(ITEMS, np.int32)
    coop.load(block, src, keys, algorithm="warp_transpose", offset=bid * TILE)
    coop.store(block, dst, coop.radix_sort_keys(block, keys), algorithm="warp_transpose", offset=bid * TILE)


@cute.kernel
def histogram_kernel(src: cute.Tensor, histogram: cute.Tensor):
    """256 bins of uint8 samples loaded striped; thread t adds bin t into the global histogram (one atomic)."""
    bid, _, _ = cute.arch.block_idx()
    block = coop.this_block()
    samples = coop.ThreadData(HISTOGRAM_ITEMS, np.uint8)
    coop.load(block, src, samples, algorithm="striped", offset=bid * HISTOGRAM_TILE)
    counts = coop.histogram(block, samples, bins=BINS, algorithm="atomic")  # thread t: bin t
    cute.arch.atomic_add((histogram.iterator + block.rank()).llvm_ptr, counts[0])


@cute.kernel
def topk_kernel(src: cute.Tensor, out: cute.Tensor):
    """The TOPK largest keys of each tile, in no particular order, written to out[b * TOPK ...]."""
    bid, _, _ = cute.arch.block_idx()
    block = coop.this_block()
    keys = coop.ThreadData(ITEMS, np.int32)
    coop.load(block, src, keys, algorithm="warp_transpose", offset=bid * TILE)
    top = coop.topk_max_keys(block, keys, k=TOPK)  # the first TOPK blocked positions
    coop.store(block, out, top, algorithm="direct", offset=bid * TOPK, valid_items=TOPK)


# --- plain CuTe copy (no cuda.coop): the CuTe copy bandwidth ------------------------------

@cute.kernel
def plain_copy_kernel(src: cute.Tensor, dst: cute.Tensor):
    """Each thread copies items t, t + 256, ... of its block's tile (striped: every access is coalesced)."""
    bid, _, _ = cute.arch.block_idx()
    tid, _, _ = cute.arch.thread_idx()
    base = bid * TILE + tid
    for i in cutlass.range_constexpr(ITEMS):
        dst[base + i * THREADS] = src[base + i * THREADS]


# --- launchers -----------------------------------------------------------------------------

@cute.jit
def copy_direct(src: cute.Tensor, dst: cute.Tensor, stream: cudrv.CUstream):
    copy_direct_kernel(src, dst).launch(grid=_grid(src, TILE), block=(THREADS, 1, 1), stream=stream)


@cute.jit
def copy_transpose(src: cute.Tensor, dst: cute.Tensor, stream: cudrv.CUstream):
    copy_transpose_kernel(src, dst).launch(grid=_grid(src, TILE), block=(THREADS, 1, 1), stream=stream)


@cute.jit
def block_sum(src: cute.Tensor, totals: cute.Tensor, stream: cudrv.CUstream):
    sum_kernel(src, totals).launch(grid=_grid(src, TILE), block=(THREADS, 1, 1), stream=stream)


@cute.jit
def exclusive_sum(src: cute.Tensor, dst: cute.Tensor, stream: cudrv.CUstream):
    exclusive_sum_kernel(src, dst).launch(grid=_grid(src, TILE), block=(THREADS, 1, 1), stream=stream)


@cute.jit
def exchange(src: cute.Tensor, dst: cute.Tensor, stream: cudrv.CUstream):
    exchange_kernel(src, dst).launch(grid=_grid(src, TILE), block=(THREADS, 1, 1), stream=stream)


@cute.jit
def merge_sort(src: cute.Tensor, dst: cute.Tensor, stream: cudrv.CUstream):
    merge_sort_kernel(src, dst).launch(grid=_grid(src, TILE), block=(THREADS, 1, 1), stream=stream)


@cute.jit
def radix_sort(src: cute.Tensor, dst: cute.Tensor, stream: cudrv.CUstream):
    radix_sort_kernel(src, dst).launch(grid=_grid(src, TILE), block=(THREADS, 1, 1), stream=stream)


@cute.jit
def histogram(src: cute.Tensor, counts: cute.Tensor, stream: cudrv.CUstream):
    histogram_kernel(src, counts).launch(grid=_grid(src, HISTOGRAM_TILE), block=(THREADS, 1, 1), stream=stream)


@cute.jit
def topk(src: cute.Tensor, out: cute.Tensor, stream: cudrv.CUstream):
    topk_kernel(src, out).launch(grid=_grid(src, TILE), block=(THREADS, 1, 1), stream=stream)


@cute.jit
def plain_copy(src: cute.Tensor, dst: cute.Tensor, stream: cudrv.CUstream):
    plain_copy_kernel(src, dst).launch(grid=_grid(src, TILE), block=(THREADS, 1, 1), stream=stream)


# --- issue 31: a reverse scan, a segmented scan and an argmax of each tile, for 256 x k int32 tiles -------------

def _issue31_launchers(k: int, dtype=np.int32):
    """The reverse-sum, segmented-sum and argmax launchers of ``k`` items of ``dtype`` per thread."""
    tile = THREADS * k
    access = segmented_tile_algorithm(k)

    @cute.kernel
    def reverse_sum_kernel(src: cute.Tensor, dst: cute.Tensor):
        """Suffix sums of each tile: transposed load, inclusive_sum(reverse=True), transposed store."""
        bid, _, _ = cute.arch.block_idx()
        block = coop.this_block()
        items = coop.ThreadData(k, dtype)
        coop.load(block, src, items, algorithm="transpose", offset=bid * tile)
        scanned = coop.inclusive_sum(block, items, reverse=True)
        coop.store(block, dst, scanned, algorithm="transpose", offset=bid * tile)

    @cute.kernel
    def segmented_sum_kernel(src: cute.Tensor, dst: cute.Tensor):
        """Inclusive sums of segments that start at every item whose (whole number's) low four bits are zero."""
        bid, _, _ = cute.arch.block_idx()
        block = coop.this_block()
        items = coop.ThreadData(k, dtype)
        heads = coop.ThreadData(k, np.int32)
        coop.load(block, src, items, algorithm=access, offset=bid * tile)
        for i in cutlass.range_constexpr(k):
            heads[i] = cutlass.Int32((cutlass.Int32(items[i]) & 15) == 0)
        scanned = coop.inclusive_sum(block, items, head_flags=heads)
        coop.store(block, dst, scanned, algorithm=access, offset=bid * tile)

    @cute.kernel
    def argmax_kernel(src: cute.Tensor, positions: cute.Tensor):
        """The tile position of each tile's largest item (its first occurrence, as numpy.argmax): a blocked load,
        whose argmax index is the tile position itself; thread 0 writes it, so the result needs no broadcast (the
        qualified option). (A striped load with the striped positions as ``indices=`` reports, for a repeated
        maximum, the entry of its first occurrence in blocked order, which is not NumPy's.)"""
        bid, _, _ = cute.arch.block_idx()
        block = coop.this_block()
        items = coop.ThreadData(k, dtype)
        coop.load(block, src, items, algorithm="vectorize", offset=bid * tile)
        _, index = cute_coop.argmax(block, items, broadcast=False)
        if block.rank() == 0:
            positions[bid] = index

    @cute.jit
    def reverse_sum(src: cute.Tensor, dst: cute.Tensor, stream: cudrv.CUstream):
        reverse_sum_kernel(src, dst).launch(grid=_grid(src, tile), block=(THREADS, 1, 1), stream=stream)

    @cute.jit
    def segmented_sum(src: cute.Tensor, dst: cute.Tensor, stream: cudrv.CUstream):
        segmented_sum_kernel(src, dst).launch(grid=_grid(src, tile), block=(THREADS, 1, 1), stream=stream)

    @cute.jit
    def argmax(src: cute.Tensor, positions: cute.Tensor, stream: cudrv.CUstream):
        argmax_kernel(src, positions).launch(grid=_grid(src, tile), block=(THREADS, 1, 1), stream=stream)

    return reverse_sum, segmented_sum, argmax


reverse_sum, segmented_sum, argmax = _issue31_launchers(ITEMS)
reverse_sum_256x16, segmented_sum_256x16, argmax_256x16 = _issue31_launchers(16)
reverse_sum_256x4_float32, segmented_sum_256x4_float32, argmax_256x4_float32 = _issue31_launchers(ITEMS, np.float32)
reverse_sum_256x16_float32, segmented_sum_256x16_float32, argmax_256x16_float32 = _issue31_launchers(16, np.float32)
