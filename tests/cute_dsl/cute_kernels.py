"""CuTe DSL kernels for the CPU tests of the cutlass backend (CuTe reads kernel source, so they live in a file)."""
from __future__ import annotations

import numpy as np
import cutlass
import cutlass.cute as cute

import cuda.coop.cutlass as cute_coop
from cuda import coop

THREADS, K = 128, 4


@cute.kernel
def scan_kernel(src: cute.Tensor, dst: cute.Tensor):
    bid, _, _ = cute.arch.block_idx()
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items, offset=bid * (THREADS * K))
    out = coop.exclusive_sum(block, items)
    coop.store(block, dst, out, offset=bid * (THREADS * K))


@cute.jit
def scan_launch(src: cute.Tensor, dst: cute.Tensor):
    scan_kernel(src, dst).launch(grid=(1, 1, 1), block=(THREADS, 1, 1))


@cute.jit
def scan_launch_dynamic_block(src: cute.Tensor, dst: cute.Tensor, threads: cutlass.Int32):
    scan_kernel(src, dst).launch(grid=(1, 1, 1), block=(threads, 1, 1))


@cute.kernel
def fragment_kernel(src: cute.Tensor, dst: cute.Tensor):
    """Register tensors as payloads, and a ThreadData's fragment handed to CuTe code."""
    block = coop.this_block()
    frag = cute.make_rmem_tensor((K,), cutlass.Int32)
    coop.load(block, src, frag)
    items = cute_coop.ThreadData.from_fragment(frag)
    total = coop.inclusive_sum(block, items)
    doubled = coop.ThreadData(K, np.int32)
    for i in range(K):
        doubled.fragment[i] = total[i] * 2
    coop.store(block, dst, doubled)


@cute.jit
def fragment_launch(src: cute.Tensor, dst: cute.Tensor):
    fragment_kernel(src, dst).launch(grid=(1, 1, 1), block=(THREADS, 1, 1))


@cute.kernel
def two_dim_kernel(src: cute.Tensor, dst: cute.Tensor):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    coop.store(block, dst, items)


@cute.jit
def two_dim_launch(src: cute.Tensor, dst: cute.Tensor):
    two_dim_kernel(src, dst).launch(grid=(1, 1, 1), block=(THREADS, 1, 1))


@cute.kernel
def user_operator_kernel(src: cute.Tensor, dst: cute.Tensor):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    out = coop.inclusive_scan(block, items, scan_op=lambda a, b: a + b)
    coop.store(block, dst, out)


@cute.jit
def user_operator_launch(src: cute.Tensor, dst: cute.Tensor):
    user_operator_kernel(src, dst).launch(grid=(1, 1, 1), block=(THREADS, 1, 1))


@cute.kernel
def runtime_selector_kernel(src: cute.Tensor, dst: cute.Tensor, bins: cutlass.Int32):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    counts = coop.histogram(block, items, bins=bins)
    coop.store(block, dst, counts)


@cute.jit
def runtime_selector_launch(src: cute.Tensor, dst: cute.Tensor, bins: cutlass.Int32):
    runtime_selector_kernel(src, dst, bins).launch(grid=(1, 1, 1), block=(THREADS, 1, 1))


@cute.kernel
def numba_namespace_kernel(src: cute.Tensor, dst: cute.Tensor):
    import cuda.coop.numba_mlir as numba_coop

    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    numba_coop.load(block, src, items)
    coop.store(block, dst, items)


@cute.jit
def numba_namespace_launch(src: cute.Tensor, dst: cute.Tensor):
    numba_namespace_kernel(src, dst).launch(grid=(1, 1, 1), block=(THREADS, 1, 1))


@cute.kernel
def everything_kernel(src: cute.Tensor, dst: cute.Tensor, count: cutlass.Int32):
    """One call of most families in one kernel (as tests/compile/tracing_backend.py's sample kernel)."""
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items, algorithm="transpose")
    prefix = coop.exclusive_sum(block, items)
    total = coop.sum(block, np.int32(3), valid_items=count)
    keys = coop.radix_sort_keys(block, prefix)
    values = coop.ThreadData(K, np.int32)
    for i in range(K):
        values[i] = keys[i] + 1
    keys, values = coop.merge_sort_pairs(block, keys, values)
    counts = coop.histogram(block, keys, bins=256, bins_per_thread=2)
    storage = coop.TempStorage(auto_sync=True)
    deltas = coop.adjacent_difference(block, counts, temp_storage=storage)
    striped = coop.exchange(block, deltas, mode="blocked_to_striped")
    coop.store(block, dst, striped, valid_items=total)


@cute.jit
def everything_launch(src: cute.Tensor, dst: cute.Tensor, count: cutlass.Int32):
    everything_kernel(src, dst, count).launch(grid=(1, 1, 1), block=(THREADS, 1, 1))


@cute.kernel
def divergent_kernel(src: cute.Tensor, dst: cute.Tensor, rank_condition: cutlass.Constexpr):
    tid, _, _ = cute.arch.thread_idx()
    bid, _, _ = cute.arch.block_idx()
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    if bid > 0:  # the same in every member: allowed
        items = coop.inclusive_sum(block, items)
    warp = coop.this_warp()
    if tid < 64:  # selects whole warps: allowed for a warp call
        items[0] = coop.inclusive_sum(warp, items[0])
    if cutlass.const_expr(rank_condition):
        if block.rank() < 5:
            items = coop.inclusive_sum(block, items)
    else:
        if tid < 5:
            items = coop.inclusive_sum(block, items)
    coop.store(block, dst, items)


@cute.jit
def divergent_launch(src: cute.Tensor, dst: cute.Tensor, rank_condition: cutlass.Constexpr):
    divergent_kernel(src, dst, rank_condition).launch(grid=(1, 1, 1), block=(THREADS, 1, 1))


@cute.kernel
def plain_kernel(src: cute.Tensor, dst: cute.Tensor):
    tid, _, _ = cute.arch.thread_idx()
    dst[tid] = src[tid]


@cute.jit
def plain_launch(src: cute.Tensor, dst: cute.Tensor):
    plain_kernel(src, dst).launch(grid=(1, 1, 1), block=(THREADS, 1, 1))


@cute.kernel
def inference_kernel(src: cute.Tensor, dst: cute.Tensor, out: cute.Tensor):
    block = coop.this_block()
    items = coop.ThreadData(K)  # its dtype comes from the load's source
    coop.load(block, src, items)
    total = coop.sum(block, items)
    stored = coop.ThreadData(K)  # from the store's destination
    for i in cutlass.range_constexpr(K):
        stored[i] = items[i] + total
    coop.store(block, dst, stored)
    typed = coop.ThreadData(K)  # from a typed assignment
    for i in cutlass.range_constexpr(K):
        typed[i] = cutlass.Float32(items[i]) * cutlass.Float32(0.5)
    coop.store(block, out, coop.inclusive_sum(block, typed))


@cute.jit
def inference_launch(src: cute.Tensor, dst: cute.Tensor, out: cute.Tensor):
    inference_kernel(src, dst, out).launch(grid=(1, 1, 1), block=(THREADS, 1, 1))


@cute.kernel
def more_families_kernel(src: cute.Tensor, dst: cute.Tensor, decoded: cute.Tensor, counts: cute.Tensor,
                         bits: cutlass.Int32):
    """The families the conformance suite leaves out, and logical warps and group queries."""
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    shifted = coop.shuffle(block, items, mode="up")
    ranks = coop.radix_rank(block, shifted, begin_bit=4, end_bit=8)
    lanes = coop.this_warp().group_by(8)
    batched = coop.reduce_batched(lanes, ranks, binary_op="max")
    partial = coop.sum(lanes, batched[0])
    lengths = coop.ThreadData(K, np.int32)
    for i in cutlass.range_constexpr(K):
        lengths[i] = items[i] & 3
    total = coop.run_length_decode_into(block, shifted, lengths, decoded, decoded_items_per_thread=2 * K)
    window = coop.run_length_decode(block, shifted, lengths, decoded_items_per_thread=K, decoded_window_offset=bits)
    coop.store(block, dst, window)
    if block.rank() == 0:
        counts[0] = total
        counts[1] = partial + lanes.rank() + lanes.count("warp") + block.count()


@cute.jit
def more_families_launch(src: cute.Tensor, dst: cute.Tensor, decoded: cute.Tensor, counts: cute.Tensor,
                         bits: cutlass.Int32):
    more_families_kernel(src, dst, decoded, counts, bits).launch(grid=(1, 1, 1), block=(THREADS, 1, 1))


@cute.kernel
def half_kernel(src: cute.Tensor, dst: cute.Tensor):
    block = coop.this_block()
    items = coop.ThreadData(K, np.float16)
    coop.load(block, src, items)
    coop.store(block, dst, items)


@cute.jit
def half_launch(src: cute.Tensor, dst: cute.Tensor):
    half_kernel(src, dst).launch(grid=(1, 1, 1), block=(THREADS, 1, 1))


@cute.kernel
def loop_kernel(src: cute.Tensor, dst: cute.Tensor, tiles: cutlass.Int32):
    """A running scan over tiles in a run-time loop: the payload is carried through CuTe's scf.for."""
    block = coop.this_block()
    running = cutlass.Int32(0)
    for tile in cutlass.range(tiles):
        items = coop.ThreadData(K, np.int32)
        coop.load(block, src, items, offset=tile * (THREADS * K))
        prefix = coop.exclusive_sum(block, items)
        total = coop.sum(block, items)
        for i in cutlass.range_constexpr(K):
            prefix[i] = prefix[i] + running
        coop.store(block, dst, prefix, offset=tile * (THREADS * K))
        running = running + total


@cute.jit
def loop_launch(src: cute.Tensor, dst: cute.Tensor, tiles: cutlass.Int32):
    loop_kernel(src, dst, tiles).launch(grid=(1, 1, 1), block=(THREADS, 1, 1))


# ---- issue 30: the namespace's ThreadData is the common marker
@cute.kernel
def namespace_thread_data_kernel(src: cute.Tensor, dst: cute.Tensor):
    block = cute_coop.this_block()
    typed = cute_coop.ThreadData(K, cutlass.Int32)
    numpy_typed = cute_coop.ThreadData(K, dtype=np.int32)
    inferred = cute_coop.ThreadData(K)
    cute_coop.load(block, src, typed)
    cute_coop.load(block, src, inferred)
    prefix = cute_coop.inclusive_sum(block, typed)
    for i in range(K):
        numpy_typed[i] = prefix[i] + inferred[i]
    cute_coop.store(block, dst, numpy_typed)


@cute.jit
def namespace_thread_data_launch(src: cute.Tensor, dst: cute.Tensor):
    namespace_thread_data_kernel(src, dst).launch(grid=(1, 1, 1), block=(THREADS, 1, 1))
