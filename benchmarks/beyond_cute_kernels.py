"""CuTe DSL tile kernels of benchmarks/beyond.py (issue 42; CuTe reads kernel source, so they live in a file).

Each mirrors the numba-cuda-mlir kernel of the same row in ``beyond.py`` (and its CUB C++ twin in ``cub/beyond.cu``):
256 threads, the tile a compile-time constant, arguments (src, aux, dst, out2). ``launcher(row)`` gives the row's
``@cute.jit`` launcher, which launches one block per tile (per ``SEGMENT`` items for the running scans) on ``stream``.
Import torch before this module where both are used.
"""
from __future__ import annotations

import functools

import numpy as np
import cutlass
import cutlass.cute as cute
from cuda.bindings import driver as cudrv

import cuda.coop.cutlass as cute_coop  # registers the backend; its qualified scans with prefix_op
from cuda import coop

from .beyond import BINS, SEGMENT, SEGMENT_STORE, THREADS, Row, histogram_load, largest, partial_store, tile_algorithm

_TYPES = {"int32": cutlass.Int32, "float32": cutlass.Float32}


def _running_total(state, aggregate):
    """Returns the running value and adds the tile's aggregate (forward and reverse running sums)."""
    prefix = state[0]
    state[0] = aggregate + prefix
    return prefix


def _carry(state, aggregate, has_head):
    """The running segmented sum's carry, without an ``if`` on a run-time value (CuTe traces it)."""
    prefix = state[0]
    state[0] = aggregate + prefix * (1 - has_head)
    return prefix


@functools.lru_cache(maxsize=None)
def _callbacks(dtype: str):
    kind = np.dtype(dtype).type
    return (cute_coop.StatefulFunction(_running_total, kind, name=f"bench42_cute_running_{dtype}"),
            cute_coop.StatefulFunction(_carry, kind, name=f"bench42_cute_segments_{dtype}"))


def _kernel(row: Row):  # noqa: C901  (one kernel per operation)
    k, tile, op, dtype = row.items, row.tile, row.operation, np.dtype(row.dtype).type
    access = tile_algorithm(k)
    if op == "broadcast":
        @cute.kernel
        def broadcast_kernel(src: cute.Tensor, aux: cute.Tensor, dst: cute.Tensor, out2: cute.Tensor):
            bid, _, _ = cute.arch.block_idx()
            block = coop.this_block()
            items = coop.ThreadData(k, dtype)
            coop.load(block, src, items, algorithm=access, offset=bid * tile)
            first = coop.broadcast(block, items[0])
            for i in cutlass.range_constexpr(k):
                items[i] = items[i] - first
            coop.store(block, dst, items, algorithm=access, offset=bid * tile)

        return broadcast_kernel
    if op in ("select", "partition"):
        partition = op == "partition"
        store = access if partition else partial_store(k)

        @cute.kernel
        def select_kernel(src: cute.Tensor, aux: cute.Tensor, dst: cute.Tensor, out2: cute.Tensor):
            bid, _, _ = cute.arch.block_idx()
            block = coop.this_block()
            items = coop.ThreadData(k, dtype)
            flags = coop.ThreadData(k, np.int32)
            coop.load(block, src, items, algorithm=access, offset=bid * tile)
            for i in cutlass.range_constexpr(k):
                flags[i] = cutlass.Int32(items[i] > 0)
            if cutlass.const_expr(partition):
                moved, count = coop.partition(block, items, flags)
                coop.store(block, dst, moved, algorithm=store, offset=bid * tile)
            else:
                moved, count = coop.select(block, items, flags)
                coop.store(block, dst, moved, algorithm=store, offset=bid * tile, valid_items=count)
            if block.rank() == 0:
                out2[bid] = count

        return select_kernel
    if op == "segment_sums":
        store = SEGMENT_STORE

        @cute.kernel
        def segment_sums_kernel(src: cute.Tensor, aux: cute.Tensor, dst: cute.Tensor, out2: cute.Tensor):
            bid, _, _ = cute.arch.block_idx()
            block = coop.this_block()
            items = coop.ThreadData(k, dtype)
            heads = coop.ThreadData(k, np.int32)
            coop.load(block, src, items, algorithm=access, offset=bid * tile)
            for i in cutlass.range_constexpr(k):
                heads[i] = cutlass.Int32((cutlass.Int32(items[i]) & 15) == 0)
            totals, count = coop.sum(block, items, head_flags=heads, compact=True)
            coop.store(block, dst, totals, algorithm=store, offset=bid * tile, valid_items=count)
            if block.rank() == 0:
                out2[bid] = count

        return segment_sums_kernel
    if op == "topk":
        width, top = row.width, row.top
        load = "vectorize" if k == 4 else "direct"
        groups = THREADS // width

        @cute.kernel
        def topk_kernel(src: cute.Tensor, aux: cute.Tensor, dst: cute.Tensor, out2: cute.Tensor):
            bid, _, _ = cute.arch.block_idx()
            tid, _, _ = cute.arch.thread_idx()
            block = coop.this_block()
            keys = coop.ThreadData(k, dtype)
            positions = coop.ThreadData(k, np.int32)
            coop.load(block, src, keys, algorithm=load, offset=bid * tile)
            lane = tid % width
            for i in cutlass.range_constexpr(k):
                positions[i] = lane * k + i
            group = coop.this_warp() if cutlass.const_expr(width == 32) else coop.this_warp().group_by(width)
            best, where = coop.topk_max_pairs(group, keys, positions, k=top)
            first = (bid * groups + tid // width) * top
            for i in cutlass.range_constexpr(k):
                p = lane * k + i
                if p < top:
                    dst[first + p] = best[i]
                    out2[first + p] = where[i]

        return topk_kernel
    if op == "radix_sort_valid":
        pad = largest(row.dtype)

        @cute.kernel
        def radix_sort_valid_kernel(src: cute.Tensor, aux: cute.Tensor, dst: cute.Tensor, out2: cute.Tensor):
            bid, _, _ = cute.arch.block_idx()
            block = coop.this_block()
            valid = aux[bid]
            keys = coop.ThreadData(k, dtype)
            coop.load(block, src, keys, algorithm="warp_transpose", offset=bid * tile, valid_items=valid)
            out = cute_coop.radix_sort_keys(block, keys, valid_items=valid, oob_default=pad)  # float32: qualified
            coop.store(block, dst, out, algorithm="warp_transpose", offset=bid * tile)

        return radix_sort_valid_kernel
    if op == "histogram_valid":
        load = histogram_load(k)

        @cute.kernel
        def histogram_valid_kernel(src: cute.Tensor, aux: cute.Tensor, dst: cute.Tensor, out2: cute.Tensor):
            bid, _, _ = cute.arch.block_idx()
            block = coop.this_block()
            valid = aux[bid]
            samples = coop.ThreadData(k, np.int32)
            coop.load(block, src, samples, algorithm=load, offset=bid * tile, valid_items=valid)
            counts = coop.histogram(block, samples, bins=BINS, valid_items=valid)  # thread t: bin t
            cute.arch.atomic_add((dst.iterator + block.rank()).llvm_ptr, counts[0])

        return histogram_valid_kernel

    running, segments = _callbacks(row.dtype)
    tiles, kind = row.tiles, _TYPES[row.dtype]
    if op == "running_exclusive_sum":
        @cute.kernel
        def running_exclusive_sum_kernel(src: cute.Tensor, aux: cute.Tensor, dst: cute.Tensor, out2: cute.Tensor):
            bid, _, _ = cute.arch.block_idx()
            block = coop.this_block()
            items = coop.ThreadData(k, dtype)
            state = coop.ThreadData(1, dtype)
            state[0] = kind(0)
            for t in cutlass.range(tiles):
                offset = bid * SEGMENT + t * tile
                coop.load(block, src, items, algorithm=access, offset=offset)
                coop.store(block, dst, cute_coop.exclusive_sum(block, items, state, prefix_op=running),
                           algorithm=access, offset=offset)

        return running_exclusive_sum_kernel
    if op == "running_segmented_sum":
        @cute.kernel
        def running_segmented_sum_kernel(src: cute.Tensor, aux: cute.Tensor, dst: cute.Tensor, out2: cute.Tensor):
            bid, _, _ = cute.arch.block_idx()
            block = coop.this_block()
            items = coop.ThreadData(k, dtype)
            heads = coop.ThreadData(k, np.int32)
            state = coop.ThreadData(1, dtype)
            state[0] = kind(0)
            for t in cutlass.range(tiles):
                offset = bid * SEGMENT + t * tile
                coop.load(block, src, items, algorithm=access, offset=offset)
                for i in cutlass.range_constexpr(k):
                    heads[i] = cutlass.Int32((cutlass.Int32(items[i]) & 15) == 0)
                scanned = cute_coop.inclusive_sum(block, items, state, prefix_op=segments, head_flags=heads)
                coop.store(block, dst, scanned, algorithm=access, offset=offset)

        return running_segmented_sum_kernel

    @cute.kernel
    def running_reverse_exclusive_sum_kernel(src: cute.Tensor, aux: cute.Tensor, dst: cute.Tensor,
                                             out2: cute.Tensor):
        bid, _, _ = cute.arch.block_idx()
        block = coop.this_block()
        items = coop.ThreadData(k, dtype)
        state = coop.ThreadData(1, dtype)
        state[0] = kind(0)
        for t in cutlass.range(tiles):
            offset = bid * SEGMENT + (tiles - 1 - t) * tile  # the last tile first
            coop.load(block, src, items, algorithm="transpose", offset=offset)
            scanned = cute_coop.exclusive_sum(block, items, state, prefix_op=running, reverse=True)
            coop.store(block, dst, scanned, algorithm="transpose", offset=offset)

    return running_reverse_exclusive_sum_kernel


# Blocks of 256 threads per SM a row's CuTe kernel is built to keep (the launch's ``min_blocks_per_mp``, the
# ``__launch_bounds__(256, N)`` a CUDA programmer gives such a kernel), where the compiler's free choice keeps fewer
# than the twin and the bound costs no spill: select at 16 items, 73 registers (3 blocks) without, 64 (4 blocks, as
# the twin's 64) with.
MIN_BLOCKS = {("select", 16): 4}


def min_blocks(row: Row) -> int:
    return MIN_BLOCKS.get((row.operation, row.items), 0)


@functools.lru_cache(maxsize=None)
def launcher(row: Row):
    """The row's ``@cute.jit`` launcher ``(src, aux, dst, out2, stream)``: one block per tile (per SEGMENT items for
    the running scans)."""
    kernel = _kernel(row)
    items_per_block = row.tile * row.tiles
    # With a bound, the DSL asks the device for its shared memory per SM unless a carveout is given; -1 is the
    # driver's default carveout (what a launch without one gets), and lets the kernel build without a GPU.
    bounds = {"min_blocks_per_mp": min_blocks(row), "preferred_smem_carveout": -1} if min_blocks(row) else {}

    @cute.jit
    def launch(src: cute.Tensor, aux: cute.Tensor, dst: cute.Tensor, out2: cute.Tensor, stream: cudrv.CUstream):
        kernel(src, aux, dst, out2).launch(grid=(cute.size(src) // items_per_block, 1, 1), block=(THREADS, 1, 1),
                                           stream=stream, **bounds)

    return launch
