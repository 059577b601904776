"""CuTe DSL kernels for the CPU tests of the cutlass backend (CuTe reads kernel source, so they live in a file)."""
from __future__ import annotations

import numpy as np
import cutlass
import cutlass.cute as cute

import cuda.coop.cutlass as cute_coop
from cuda import coop

THREADS, K = 128, 4


def add(a, b):  # operators live at module scope: one defined in the kernel body is C16 (SPEC 7.3)
    return a + b


def less(a, b):
    return a < b


def cutlass_larger(a, b):  # an operator calling a cutlass function
    return cutlass.max(a, b)


def one_block_launcher(kernel):
    """A ``@cute.jit`` launcher of ``kernel(src, dst)`` on one block of THREADS threads."""
    @cute.jit
    def launch(src: cute.Tensor, dst: cute.Tensor):
        kernel(src, dst).launch(grid=(1, 1, 1), block=(THREADS, 1, 1))

    return launch


def marked_line(fn) -> int:
    """The line of ``fn``'s source marked ``# HERE`` (where an error test expects its message to point)."""
    import inspect

    lines, start = inspect.getsourcelines(fn)
    return start + next(i for i, text in enumerate(lines) if "# HERE" in text)


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
def vector_scan_kernel(src: cute.Tensor, dst: cute.Tensor):
    """The scan kernel with vector loads and stores (one 16-byte access per thread and direction)."""
    bid, _, _ = cute.arch.block_idx()
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items, algorithm="vectorize", offset=bid * (THREADS * K))
    out = coop.inclusive_sum(block, items)
    coop.store(block, dst, out, algorithm="vectorize", offset=bid * (THREADS * K))


@cute.jit
def vector_scan_launch(src: cute.Tensor, dst: cute.Tensor):
    vector_scan_kernel(src, dst).launch(grid=(1, 1, 1), block=(THREADS, 1, 1))


@cute.kernel
def fragment_kernel(src: cute.Tensor, dst: cute.Tensor):
    """Register tensors as payloads, and a ThreadData's fragment handed to CuTe code."""
    block = coop.this_block()
    frag = cute.make_rmem_tensor((K,), cutlass.Int32)
    cute_coop.load(block, src, frag)  # a register tensor: a qualified call's payload (P4 in a common one)
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
    out = coop.inclusive_scan(block, items, scan_op=add)
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


# the every-family kernel's outputs: one tile-sized segment of ``stages`` per stage, in this order, then ``scalars``
EVERYTHING_STAGES = ("loaded", "exclusive_sum", "radix_sort_keys", "merge_sort_keys", "merge_sort_values",
                     "histogram", "adjacent_difference", "discontinuity", "exchange", "shuffle", "radix_rank",
                     "reduce_batched", "run_length_decode", "topk_max_keys")
EVERYTHING_SCALARS = ("sum", "max", "argmax_value", "argmax_index", "run_length_total")
EVERYTHING_DECODED = 4 * THREADS * K  # room for the whole decoded stream: run lengths are 1 to 4


@cute.kernel
def everything_kernel(src: cute.Tensor, dst: cute.Tensor, count: cutlass.Int32, stages: cute.Tensor,
                      decoded: cute.Tensor, scalars: cute.Tensor, window: cutlass.Int32):
    """One call (or more) of every operation family in one kernel, each result stored: ``stages`` gets one tile per
    entry of EVERYTHING_STAGES, rank 0 writes EVERYTHING_SCALARS, ``decoded`` the run-length stream, ``dst`` the
    first ``count`` items of the exclusive sum. ``count`` is at most THREADS (the sum's valid_items)."""
    tile = THREADS * K
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items, algorithm="transpose")
    coop.store(block, stages, items, offset=0 * tile)
    prefix = coop.exclusive_sum(block, items)
    coop.store(block, stages, prefix, offset=1 * tile)
    coop.store(block, dst, prefix, valid_items=count)
    total = coop.sum(block, items[0], valid_items=count)  # item 0 of the first count threads, in rank 0
    largest = coop.reduce(block, items, binary_op="max")
    value, index = coop.argmax(block, items)
    coop.store(block, stages, coop.radix_sort_keys(block, items), offset=2 * tile)
    positions = coop.ThreadData(K, np.int32)
    for i in cutlass.range_constexpr(K):
        positions[i] = block.rank() * K + i
    keys, values = coop.merge_sort_pairs(block, items, positions)
    coop.store(block, stages, keys, offset=3 * tile)
    coop.store(block, stages, values, offset=4 * tile)
    samples = coop.ThreadData(K, np.int32)
    lengths = coop.ThreadData(K, np.int32)
    for i in cutlass.range_constexpr(K):
        samples[i] = items[i] & 255
        lengths[i] = (items[i] & 3) + 1
    counts = coop.histogram(block, samples, bins=256, bins_per_thread=2)
    coop.store(block, stages, counts, algorithm="striped", offset=5 * tile)
    storage = coop.TempStorage(auto_sync=True)
    coop.store(block, stages, coop.adjacent_difference(block, items, temp_storage=storage), offset=6 * tile)
    coop.store(block, stages, coop.discontinuity(block, items, temp_storage=storage), offset=7 * tile)
    coop.store(block, stages, coop.exchange(block, items, mode="blocked_to_striped"), offset=8 * tile)
    coop.store(block, stages, coop.shuffle(block, items, mode="up"), offset=9 * tile)
    coop.store(block, stages, coop.radix_rank(block, items, begin_bit=2, end_bit=7), offset=10 * tile)
    coop.store(block, stages, coop.reduce_batched(coop.this_warp().group_by(K), items, binary_op="max"),
               offset=11 * tile)
    decoded_total = coop.run_length_decode_into(block, items, lengths, decoded, decoded_items_per_thread=2 * K)
    coop.store(block, stages, coop.run_length_decode(block, items, lengths, decoded_items_per_thread=K,
                                                     decoded_window_offset=window), offset=12 * tile)
    coop.store(block, stages, coop.topk_max_keys(block, items, k=5), offset=13 * tile)
    if block.rank() == 0:
        scalars[0] = total
        scalars[1] = largest
        scalars[2] = value
        scalars[3] = index
        scalars[4] = cutlass.Int32(decoded_total)


@cute.jit
def everything_launch(src: cute.Tensor, dst: cute.Tensor, count: cutlass.Int32, stages: cute.Tensor,
                      decoded: cute.Tensor, scalars: cute.Tensor, window: cutlass.Int32):
    everything_kernel(src, dst, count, stages, decoded, scalars, window).launch(grid=(1, 1, 1),
                                                                                block=(THREADS, 1, 1))


def everything_arguments(tensor):
    """Sample arguments of everything_launch for compile_kernel; ``tensor(n)`` makes an int32 tensor of ``n``."""
    tile = THREADS * K
    return (tensor(tile), tensor(tile), 100, tensor(len(EVERYTHING_STAGES) * tile), tensor(EVERYTHING_DECODED),
            tensor(len(EVERYTHING_SCALARS)), 8)


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
def carried_condition_kernel(src: cute.Tensor, dst: cute.Tensor, rank_through_if: cutlass.Constexpr):
    """A block call under flags a ``for`` and a ``while`` carry, after thread 0 stored to ``dst``: CuTe passes ``dst``
    through that ``if`` and into the loops, which store to it too; the flags are the same in every member (allowed).
    With ``rank_through_if`` (and no thread-0 store) the condition holds a value that an ``if`` on an argument sets
    from the rank (rejected)."""
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    if cutlass.const_expr(not rank_through_if):
        if block.rank() == 0:
            dst[0] = items[0]
    seen = cutlass.Boolean(False)
    for t in cutlass.range(2):
        if src[t] > 0 and not seen:
            seen = cutlass.Boolean(True)
        dst[t + 1] = items[1]
    more = cutlass.Boolean(False)
    t = cutlass.Int32(0)
    while t < 2:  # a run-time while carries dst, and the flag, as well
        if src[t + 2] > 0:
            more = cutlass.Boolean(True)
        dst[t + 3] = items[2]
        t += 1
    rank = cutlass.Int32(0)
    if cutlass.const_expr(rank_through_if):
        if src[0] > 0:
            rank = cutlass.Int32(block.rank())
    if seen and more and rank < 5:  # CONDITION
        items = coop.inclusive_sum(block, items)
    coop.store(block, dst, items)


@cute.kernel
def loop_carried_kernel(src: cute.Tensor, dst: cute.Tensor, mode: cutlass.Constexpr):
    """Values loops carry. ``"accumulator"``: a while carries a per-thread sum (from the rank) beside a flag that is
    the same in every member, and a block call sits under the flag (allowed). ``"for"`` / ``"while"``: the call
    sits inside the loop under a value the loop carries from the rank (rejected)."""
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    mine = cutlass.Int32(block.rank())
    seen = cutlass.Boolean(False)
    t = cutlass.Int32(0)
    if cutlass.const_expr(mode == "accumulator"):
        while t < 2:
            mine += src[t]
            if src[t] > 0:
                seen = cutlass.Boolean(True)
            t += 1
        if seen:  # CONDITION accumulator
            items = coop.inclusive_sum(block, items)
    elif cutlass.const_expr(mode == "for"):
        for _ in cutlass.range(2):
            if mine < 5:  # CONDITION for
                items = coop.inclusive_sum(block, items)
            mine += 1
    else:
        while t < 2:
            if mine < 5:  # CONDITION while
                items = coop.inclusive_sum(block, items)
            mine += 1
            t += 1
    dst[block.rank()] = mine
    coop.store(block, dst, items)


@cute.jit
def loop_carried_launch(src: cute.Tensor, dst: cute.Tensor, mode: cutlass.Constexpr):
    loop_carried_kernel(src, dst, mode).launch(grid=(1, 1, 1), block=(THREADS, 1, 1))


@cute.jit
def carried_condition_launch(src: cute.Tensor, dst: cute.Tensor, rank_through_if: cutlass.Constexpr):
    carried_condition_kernel(src, dst, rank_through_if).launch(grid=(1, 1, 1), block=(THREADS, 1, 1))


@cute.kernel
def tensor_condition_kernel(src: cute.Tensor, dst: cute.Tensor, divergent: cutlass.Constexpr):
    """A call under a condition read from a tensor: the same in every member (``src[bid]``), or not (``src[tid]``)."""
    tid, _, _ = cute.arch.thread_idx()
    bid, _, _ = cute.arch.block_idx()
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    if cutlass.const_expr(divergent):
        if src[tid] > 0:
            items = coop.inclusive_sum(block, items)
    else:
        if src[bid] > 0:
            items = coop.inclusive_sum(block, items)
    coop.store(block, dst, items)


@cute.jit
def tensor_condition_launch(src: cute.Tensor, dst: cute.Tensor, divergent: cutlass.Constexpr):
    tensor_condition_kernel(src, dst, divergent).launch(grid=(1, 1, 1), block=(THREADS, 1, 1))


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
def qualified_half_kernel(src: cute.Tensor, dst: cute.Tensor):
    block = coop.this_block()
    items = coop.ThreadData(K, np.float16)
    cute_coop.load(block, src, items)
    cute_coop.store(block, dst, items)


@cute.jit
def qualified_half_launch(src: cute.Tensor, dst: cute.Tensor):
    qualified_half_kernel(src, dst).launch(grid=(1, 1, 1), block=(THREADS, 1, 1))


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


@cute.kernel
def small_storage_kernel(src: cute.Tensor, dst: cute.Tensor):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    storage = coop.TempStorage(16)
    out = coop.exclusive_sum(block, items, temp_storage=storage)
    coop.store(block, dst, out)


@cute.jit
def small_storage_launch(src: cute.Tensor, dst: cute.Tensor):
    small_storage_kernel(src, dst).launch(grid=(1, 1, 1), block=(THREADS, 1, 1))


# A descriptor that did not come from a TempStorage() call in the kernel (S4): TempStorage() outside any kernel is
# R1, so one is made without its constructor, as a descriptor kept from elsewhere would reach the call.
OUTSIDE_STORAGE = object.__new__(coop.TempStorage)


@cute.kernel
def outside_storage_kernel(src: cute.Tensor, dst: cute.Tensor):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    out = coop.exclusive_sum(block, items, temp_storage=OUTSIDE_STORAGE)
    coop.store(block, dst, out)


@cute.jit
def outside_storage_launch(src: cute.Tensor, dst: cute.Tensor):
    outside_storage_kernel(src, dst).launch(grid=(1, 1, 1), block=(THREADS, 1, 1))


@cute.kernel
def number_as_storage_kernel(src: cute.Tensor, dst: cute.Tensor):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    out = coop.exclusive_sum(block, items, temp_storage=64)
    coop.store(block, dst, out)


@cute.jit
def number_as_storage_launch(src: cute.Tensor, dst: cute.Tensor):
    number_as_storage_kernel(src, dst).launch(grid=(1, 1, 1), block=(THREADS, 1, 1))


@cute.kernel
def ordered_descending_kernel(src: cute.Tensor, dst: cute.Tensor):
    block = coop.this_block()
    keys = coop.ThreadData(K, np.int32)
    coop.load(block, src, keys)
    out = cute_coop.merge_sort_keys(block, keys, compare_op=less, descending=True)
    coop.store(block, dst, out)


@cute.jit
def ordered_descending_launch(src: cute.Tensor, dst: cute.Tensor):
    ordered_descending_kernel(src, dst).launch(grid=(1, 1, 1), block=(THREADS, 1, 1))


@cute.kernel
def scatter_without_ranks_kernel(src: cute.Tensor, dst: cute.Tensor):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    out = cute_coop.exchange(block, items, mode="scatter_to_striped")
    coop.store(block, dst, out)


@cute.jit
def scatter_without_ranks_launch(src: cute.Tensor, dst: cute.Tensor):
    scatter_without_ranks_kernel(src, dst).launch(grid=(1, 1, 1), block=(THREADS, 1, 1))


@cute.kernel
def flagged_without_flags_kernel(src: cute.Tensor, dst: cute.Tensor):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    ranks = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    coop.load(block, src, ranks)
    out = cute_coop.exchange(block, items, mode="scatter_to_striped_flagged", ranks=ranks)
    coop.store(block, dst, out)


@cute.jit
def flagged_without_flags_launch(src: cute.Tensor, dst: cute.Tensor):
    flagged_without_flags_kernel(src, dst).launch(grid=(1, 1, 1), block=(THREADS, 1, 1))


@cute.kernel
def cluster_rank_kernel(src: cute.Tensor, dst: cute.Tensor):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    items[0] = coop.this_cluster().rank_as(np.int32)
    coop.store(block, dst, items)


@cute.jit
def cluster_rank_launch(src: cute.Tensor, dst: cute.Tensor):
    cluster_rank_kernel(src, dst).launch(grid=(1, 1, 1), block=(THREADS, 1, 1))


@cute.kernel
def huge_scratch_kernel(src: cute.Tensor, dst: cute.Tensor):
    block = coop.this_block()
    items = coop.ThreadData(64, np.int64)
    coop.load(block, src, items)
    out = coop.exchange(block, items, mode="blocked_to_striped")
    coop.store(block, dst, out)


@cute.jit
def huge_scratch_launch(src: cute.Tensor, dst: cute.Tensor):
    huge_scratch_kernel(src, dst).launch(grid=(1, 1, 1), block=(1024, 1, 1))


@cute.kernel
def builtin_min_kernel(src: cute.Tensor, dst: cute.Tensor):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    low = coop.reduce(block, items, binary_op=min)
    high = coop.inclusive_scan(block, items, scan_op=max)
    for i in range(K):
        high[i] = high[i] - low
    coop.store(block, dst, high)


@cute.jit
def builtin_min_launch(src: cute.Tensor, dst: cute.Tensor):
    builtin_min_kernel(src, dst).launch(grid=(1, 1, 1), block=(THREADS, 1, 1))


@cute.kernel
def float_min_max_kernel(src: cute.Tensor, dst: cute.Tensor):
    block = coop.this_block()
    items = coop.ThreadData(K, np.float32)
    coop.load(block, src, items)
    high = coop.reduce(block, items, binary_op="max")
    low = coop.reduce(coop.this_warp(), items[0], binary_op=min)
    out = coop.inclusive_scan(block, items, scan_op=np.maximum)
    for i in range(K):
        out[i] = out[i] + high - low
    coop.store(block, dst, out)


float_min_max_launch = one_block_launcher(float_min_max_kernel)


@cute.kernel
def loop_assignment_kernel(src: cute.Tensor, dst: cute.Tensor):
    bid, _, _ = cute.arch.block_idx()
    block = coop.this_block()
    items = coop.ThreadData(K)
    for i in cutlass.range(K):
        items[i] = src[bid * K + i] + cutlass.Int32(1)
    out = coop.inclusive_sum(block, items)
    coop.store(block, dst, out)


@cute.jit
def loop_assignment_launch(src: cute.Tensor, dst: cute.Tensor):
    loop_assignment_kernel(src, dst).launch(grid=(1, 1, 1), block=(THREADS, 1, 1))


@cute.kernel
def fragment_loop_kernel(src: cute.Tensor, dst: cute.Tensor, tiles: cutlass.Int32):
    block = coop.this_block()
    frag = cute.make_rmem_tensor(K, cutlass.Int32)  # layout K:1 (a (K,) shape gives (K):(1))
    items = cute_coop.ThreadData.from_fragment(frag)
    coop.load(block, src, items)
    for _ in cutlass.range(tiles):
        items = coop.inclusive_sum(block, items)
    coop.store(block, dst, items)


@cute.jit
def fragment_loop_launch(src: cute.Tensor, dst: cute.Tensor, tiles: cutlass.Int32):
    fragment_loop_kernel(src, dst, tiles).launch(grid=(1, 1, 1), block=(THREADS, 1, 1))


@cute.kernel
def shared_source_kernel(src: cute.Tensor, dst: cute.Tensor):
    from cutlass.memory import SmemAllocator

    block = coop.this_block()
    staged = SmemAllocator().allocate_tensor(cutlass.Int32, cute.make_layout(THREADS * K))
    items = coop.ThreadData(K, np.int32)
    coop.load(block, staged, items)
    coop.store(block, dst, items)


@cute.jit
def shared_source_launch(src: cute.Tensor, dst: cute.Tensor):
    shared_source_kernel(src, dst).launch(grid=(1, 1, 1), block=(THREADS, 1, 1))


@cute.kernel
def register_destination_kernel(src: cute.Tensor, dst: cute.Tensor):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    local = cute.make_rmem_tensor((THREADS * K,), cutlass.Int32)
    coop.store(block, local, items)


@cute.jit
def register_destination_launch(src: cute.Tensor, dst: cute.Tensor):
    register_destination_kernel(src, dst).launch(grid=(1, 1, 1), block=(THREADS, 1, 1))


@cute.kernel
def qualified_option_kernel(src: cute.Tensor, dst: cute.Tensor):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    out = coop.radix_sort_keys(block, items, blocked_to_striped=True)
    coop.store(block, dst, out)


@cute.jit
def qualified_option_launch(src: cute.Tensor, dst: cute.Tensor):
    qualified_option_kernel(src, dst).launch(grid=(1, 1, 1), block=(THREADS, 1, 1))


@cute.kernel
def positional_option_kernel(src: cute.Tensor, dst: cute.Tensor):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items, "transpose")
    coop.store(block, dst, items)


@cute.jit
def positional_option_launch(src: cute.Tensor, dst: cute.Tensor):
    positional_option_kernel(src, dst).launch(grid=(1, 1, 1), block=(THREADS, 1, 1))


@cute.kernel
def static_boolean_control_kernel(src: cute.Tensor, dst: cute.Tensor):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    items[0] = coop.broadcast(block, items[0], src_rank=cutlass.Boolean(True))
    coop.store(block, dst, items)


@cute.kernel
def static_uint64_control_kernel(src: cute.Tensor, dst: cute.Tensor):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items, valid_items=cutlass.Uint64(3), oob_default=0)
    coop.store(block, dst, items)


@cute.jit
def static_uint64_control_launch(src: cute.Tensor, dst: cute.Tensor):
    static_uint64_control_kernel(src, dst).launch(grid=(1, 1, 1), block=(THREADS, 1, 1))


@cute.kernel
def static_int64_fill_kernel(src: cute.Tensor, dst: cute.Tensor):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items, valid_items=3, oob_default=cutlass.Int64(1))
    coop.store(block, dst, items)


@cute.jit
def static_int64_fill_launch(src: cute.Tensor, dst: cute.Tensor):
    static_int64_fill_kernel(src, dst).launch(grid=(1, 1, 1), block=(THREADS, 1, 1))


@cute.jit
def static_boolean_control_launch(src: cute.Tensor, dst: cute.Tensor):
    static_boolean_control_kernel(src, dst).launch(grid=(1, 1, 1), block=(THREADS, 1, 1))


@cute.kernel
def no_dtype_kernel(src: cute.Tensor, dst: cute.Tensor):
    block = coop.this_block()
    items = coop.ThreadData(K)
    out = coop.inclusive_sum(block, items)
    coop.store(block, dst, out)


@cute.jit
def no_dtype_launch(src: cute.Tensor, dst: cute.Tensor):
    no_dtype_kernel(src, dst).launch(grid=(1, 1, 1), block=(THREADS, 1, 1))


@cute.kernel
def index_kernel(src: cute.Tensor, dst: cute.Tensor):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    items[K] = 0
    coop.store(block, dst, items)


@cute.jit
def index_launch(src: cute.Tensor, dst: cute.Tensor):
    index_kernel(src, dst).launch(grid=(1, 1, 1), block=(THREADS, 1, 1))


@cute.kernel
def raw_value_kernel(src: cute.Tensor, dst: cute.Tensor):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    picked = cutlass.select_(items[0] > items[1], items[0], items[1])  # the DSL's untyped value, not a numeric
    total = coop.reduce(block, picked, binary_op=add)
    items[0] = total
    coop.store(block, dst, items)


@cute.jit
def raw_value_launch(src: cute.Tensor, dst: cute.Tensor):
    raw_value_kernel(src, dst).launch(grid=(1, 1, 1), block=(THREADS, 1, 1))


@cute.kernel
def bad_fragment_kernel(src: cute.Tensor, dst: cute.Tensor):
    block = coop.this_block()
    items = cute_coop.ThreadData.from_fragment(src)
    coop.store(block, dst, items)


@cute.jit
def bad_fragment_launch(src: cute.Tensor, dst: cute.Tensor):
    bad_fragment_kernel(src, dst).launch(grid=(1, 1, 1), block=(THREADS, 1, 1))


@cute.kernel
def big_block_kernel(src: cute.Tensor, dst: cute.Tensor):
    block = coop.this_block()
    items = coop.ThreadData(1, np.int32)
    coop.load(block, src, items)
    coop.store(block, dst, items)


@cute.jit
def big_block_launch(src: cute.Tensor, dst: cute.Tensor, shape: cutlass.Constexpr):
    big_block_kernel(src, dst).launch(grid=(1, 1, 1), block=shape)


# ---- issue 30: large blocks that the link route could not link (nvJitLink ERROR_INTERNAL)
@cute.kernel
def large_scan_kernel(src: cute.Tensor, dst: cute.Tensor):
    block = coop.this_block()
    items = coop.ThreadData(LARGE_K, np.int32)
    coop.load(block, src, items)
    out = coop.inclusive_sum(block, items)
    coop.store(block, dst, out)


@cute.kernel
def large_sort_kernel(src: cute.Tensor, dst: cute.Tensor, k: cutlass.Constexpr):
    block = coop.this_block()
    items = coop.ThreadData(k, np.int32)
    coop.load(block, src, items)
    out = coop.radix_sort_keys(block, items)
    coop.store(block, dst, out)


LARGE_K = 4


@cute.jit
def large_scan_launch(src: cute.Tensor, dst: cute.Tensor):
    large_scan_kernel(src, dst).launch(grid=(1, 1, 1), block=(1024, 1, 1))


@cute.jit
def large_sort_launch(src: cute.Tensor, dst: cute.Tensor, threads: cutlass.Constexpr, k: cutlass.Constexpr):
    large_sort_kernel(src, dst, k).launch(grid=(1, 1, 1), block=(threads, 1, 1))


# ---- issue 30: user functions as operators, predicates and comparators (traced by CuTe into the kernel's module)
def xor_op(a, b):
    return a ^ b


def greater(a, b):
    return a > b


def twice_minus(current, neighbour):
    return current * 2 - neighbour


def far_apart(previous, current):
    return (current - previous) * (current - previous) > 100


def after_aggregate(block_aggregate):
    """A block prefix callback: the scan starts at 1000 + the block's total."""
    return block_aggregate + 1000


@cute.kernel
def user_functions_kernel(src: cute.Tensor, dst: cute.Tensor, sorted_out: cute.Tensor, diffs: cute.Tensor,
                          heads: cute.Tensor, folded: cute.Tensor, seeded: cute.Tensor):
    bid, _, _ = cute.arch.block_idx()
    base = bid * (THREADS * K)
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items, offset=base)
    total = coop.reduce(block, items, binary_op=xor_op)
    prefix = coop.inclusive_scan(block, items, scan_op=add)
    coop.store(block, dst, prefix, offset=base)
    keys = cute_coop.merge_sort_keys(block, items, compare_op=greater)
    coop.store(block, sorted_out, keys, offset=base)
    coop.store(block, diffs, cute_coop.adjacent_difference(block, items, difference_op=twice_minus), offset=base)
    coop.store(block, heads, cute_coop.discontinuity(block, items, flag_op=far_apart), offset=base)
    coop.store(block, seeded, cute_coop.exclusive_sum(block, items, prefix_op=after_aggregate), offset=base)
    if block.rank() == 0:
        folded[bid] = total


@cute.jit
def user_functions_launch(src: cute.Tensor, dst: cute.Tensor, sorted_out: cute.Tensor, diffs: cute.Tensor,
                          heads: cute.Tensor, folded: cute.Tensor, seeded: cute.Tensor, blocks: cutlass.Constexpr):
    user_functions_kernel(src, dst, sorted_out, diffs, heads, folded, seeded).launch(grid=(blocks, 1, 1),
                                                                                     block=(THREADS, 1, 1))


def cooperative_op(a, b):
    coop.this_warp()
    return a + b


@cute.kernel
def cooperative_operator_kernel(src: cute.Tensor, dst: cute.Tensor):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    total = coop.reduce(block, items, binary_op=cooperative_op)
    for i in range(K):
        items[i] = total
    coop.store(block, dst, items)


@cute.jit
def cooperative_operator_launch(src: cute.Tensor, dst: cute.Tensor):
    cooperative_operator_kernel(src, dst).launch(grid=(1, 1, 1), block=(THREADS, 1, 1))


def _argmax_kernels(broadcast):
    """A block's and every warp's argmax through the qualified namespace: rank 0 (lane 0) writes (value, index)."""
    @cute.kernel
    def argmax_kernel(src: cute.Tensor, block_out: cute.Tensor, warp_out: cute.Tensor):
        bid, _, _ = cute.arch.block_idx()
        block = coop.this_block()
        items = coop.ThreadData(K, np.int32)
        coop.load(block, src, items, offset=bid * (THREADS * K))
        value, index = cute_coop.argmax(block, items, broadcast=broadcast)
        lane_value, lane_index = cute_coop.argmin(coop.this_warp(), items[0], broadcast=broadcast)
        if block.rank() == 0:
            block_out[bid * 2] = value
            block_out[bid * 2 + 1] = index
        if block.rank() % 32 == 0:
            slot = (bid * (THREADS // 32) + block.rank() // 32) * 2
            warp_out[slot] = lane_value
            warp_out[slot + 1] = lane_index

    @cute.jit
    def argmax_launch(src: cute.Tensor, block_out: cute.Tensor, warp_out: cute.Tensor, blocks: cutlass.Constexpr):
        argmax_kernel(src, block_out, warp_out).launch(grid=(blocks, 1, 1), block=(THREADS, 1, 1))

    return argmax_launch


argmax_broadcast_launch = _argmax_kernels(True)
argmax_rank0_launch = _argmax_kernels(False)


@cute.kernel
def cutlass_max_kernel(src: cute.Tensor, dst: cute.Tensor):
    """A user operator calling a cutlass function (its fingerprint must not walk the process around it)."""
    block = coop.this_block()
    items = coop.ThreadData(K, np.float32)
    coop.load(block, src, items)
    out = coop.inclusive_scan(block, items, scan_op=cutlass_larger)
    coop.store(block, dst, out)


@cute.jit
def cutlass_max_launch(src: cute.Tensor, dst: cute.Tensor):
    cutlass_max_kernel(src, dst).launch(grid=(1, 1, 1), block=(THREADS, 1, 1))


def branchy_max(a, b):
    if a > b:  # a return inside an `if` on run-time values: CuTe cannot stage it (its diagnostic is coloured)
        return a
    return b


@cute.kernel
def untraceable_operator_kernel(src: cute.Tensor, dst: cute.Tensor):
    block = coop.this_block()
    items = coop.ThreadData(K, np.float32)
    coop.load(block, src, items)
    out = coop.inclusive_scan(block, items, scan_op=branchy_max)
    coop.store(block, dst, out)


@cute.jit
def untraceable_operator_launch(src: cute.Tensor, dst: cute.Tensor):
    untraceable_operator_kernel(src, dst).launch(grid=(1, 1, 1), block=(THREADS, 1, 1))


@cute.kernel
def untraceable_compare_kernel(src: cute.Tensor, dst: cute.Tensor):
    block = coop.this_block()
    items = coop.ThreadData(K, np.float32)
    coop.load(block, src, items)
    out = cute_coop.merge_sort_keys(block, items, compare_op=branchy_max)
    coop.store(block, dst, out)


@cute.jit
def untraceable_compare_launch(src: cute.Tensor, dst: cute.Tensor):
    untraceable_compare_kernel(src, dst).launch(grid=(1, 1, 1), block=(THREADS, 1, 1))


def _block_of_this_kernel():
    return coop.this_block()  # the kernel's first call, made in a helper


@cute.kernel
def helper_first_kernel(src: cute.Tensor, dst: cute.Tensor):
    block = _block_of_this_kernel()
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    coop.store(block, dst, items)


@cute.jit
def helper_first_dynamic_launch(src: cute.Tensor, dst: cute.Tensor, threads: cutlass.Int32):
    helper_first_kernel(src, dst).launch(grid=(1, 1, 1), block=(threads, 1, 1))


@cute.jit
def helper_first_launch(src: cute.Tensor, dst: cute.Tensor, shape: cutlass.Constexpr):
    helper_first_kernel(src, dst).launch(grid=(1, 1, 1), block=shape)


QUERY_TYPES: dict[str, type] = {}  # what the group queries of query_types_kernel returned, by expression


@cute.kernel
def query_types_kernel(dst: cute.Tensor):
    warp = coop.this_warp()
    block = coop.this_block()
    grid = coop.this_grid()
    QUERY_TYPES["warp.rank(level='block')"] = type(warp.rank(level="block"))
    QUERY_TYPES["warp.count(level='block')"] = type(warp.count(level="block"))
    QUERY_TYPES["block.rank()"] = type(block.rank())
    QUERY_TYPES["block.count()"] = type(block.count())
    QUERY_TYPES["block.rank_as()"] = type(block.rank_as())
    QUERY_TYPES["block.rank(level='grid')"] = type(block.rank(level="grid"))
    QUERY_TYPES["grid.rank()"] = type(grid.rank())
    QUERY_TYPES["grid.count()"] = type(grid.count())
    QUERY_TYPES["block.rank_as(np.uint32)"] = type(block.rank_as(np.uint32))
    QUERY_TYPES["block.count_as(np.int16)"] = type(block.count_as(np.int16))
    QUERY_TYPES["grid.rank_as(np.int32)"] = type(grid.rank_as(np.int32))
    QUERY_TYPES["block.is_member()"] = type(block.is_member())
    remaining = 100 - warp.rank(level="block") * 32
    dst[block.rank()] = remaining


@cute.jit
def query_types_launch(dst: cute.Tensor):
    query_types_kernel(dst).launch(grid=(1, 1, 1), block=(THREADS, 1, 1))


@cute.kernel
def last_warp_kernel(src: cute.Tensor, dst: cute.Tensor, valid: cute.Tensor, n: cutlass.Int32):
    """Each warp clamps what is left of ``n`` for its own tile, as a CuTe user writes it: a warp past the end gets a
    negative ``remaining`` (signed ranks; docs: cutlass, "What the kernel may hold") and so 0 valid items, not 32."""
    bid, _, _ = cute.arch.block_idx()
    warp = coop.this_warp()
    origin = bid * THREADS  # the block's tile; each warp's own origin is added by the call
    remaining = n - origin - warp.rank(level="block") * 32
    count = min(max(remaining, 0), 32)
    items = coop.ThreadData(1, np.int32)
    coop.load(warp, src, items, valid_items=count, oob_default=0, offset=origin)
    out = coop.ThreadData(1, np.int32)
    out[0] = coop.inclusive_sum(warp, items[0])
    coop.store(warp, dst, out, valid_items=count, offset=origin)
    if warp.rank() == 0:
        valid[bid * (THREADS // 32) + warp.rank(level="block")] = count


@cute.jit
def last_warp_launch(src: cute.Tensor, dst: cute.Tensor, valid: cute.Tensor, n: cutlass.Int32,
                     blocks: cutlass.Constexpr):
    last_warp_kernel(src, dst, valid, n).launch(grid=(blocks, 1, 1), block=(THREADS, 1, 1))


@cute.kernel
def converting_assignment_kernel(wide: cute.Tensor, reals: cute.Tensor, small_out: cute.Tensor,
                                 real_out: cute.Tensor, whole_out: cute.Tensor, short_out: cute.Tensor):
    """``items[i] = v`` of a Python number converts it to the payload's dtype, as numba-cuda-mlir does (SPEC 4,
    12.3): integers keep their low bits, floats truncate toward zero; a typed value of another dtype is P8 (``dtype``
    never converts), so the CuTe values are cast first, as its message says."""
    tid, _, _ = cute.arch.thread_idx()
    block = coop.this_block()
    small = coop.ThreadData(K, np.uint8)
    real = coop.ThreadData(K, np.float32)
    whole = coop.ThreadData(K, np.int32)
    short = coop.ThreadData(K, np.int16)
    for i in range(K):
        small[i] = cutlass.Uint8(cutlass.Uint32(wide[tid * K + i]))  # a Uint32 cast to uint8: the low byte
        real[i] = cutlass.Float32(wide[tid * K + i])  # an Int32 cast to float32
        whole[i] = cutlass.Int32(reals[tid * K + i])  # a Float32 cast to int32: truncated toward zero
    short[0] = cutlass.Int16(cutlass.Int64(wide[tid * K]) * 3)  # an Int64 cast to int16: the low 16 bits
    short[1] = 70000  # a Python int: the low 16 bits (4464)
    short[2] = -1.75  # a Python float: truncated toward zero (-1)
    short[3] = 40000  # a Python int: the low 16 bits (-25536)
    coop.store(block, small_out, small)
    coop.store(block, real_out, real)
    coop.store(block, whole_out, whole)
    coop.store(block, short_out, short)


@cute.jit
def converting_assignment_launch(wide: cute.Tensor, reals: cute.Tensor, small_out: cute.Tensor,
                                 real_out: cute.Tensor, whole_out: cute.Tensor, short_out: cute.Tensor):
    converting_assignment_kernel(wide, reals, small_out, real_out, whole_out, short_out).launch(
        grid=(1, 1, 1), block=(THREADS, 1, 1))


@cute.kernel
def wide_offsets_kernel(values: cute.Tensor, lengths: cute.Tensor, dst: cute.Tensor, totals: cute.Tensor,
                        offset_dtype: cutlass.Constexpr):
    """The qualified run-length decode with ``decoded_offset_dtype`` as the launcher passes it (docs:
    operations/run_length_decode, "Qualified additions")."""
    block = coop.this_block()
    v = coop.ThreadData(2, np.int32)
    n = coop.ThreadData(2, np.int32)
    coop.load(block, values, v)
    coop.load(block, lengths, n)
    total = cute_coop.run_length_decode_into(block, v, n, dst, decoded_items_per_thread=2,
                                             decoded_offset_dtype=offset_dtype)
    totals[block.rank()] = total


@cute.jit
def wide_offsets_launch(values: cute.Tensor, lengths: cute.Tensor, dst: cute.Tensor, totals: cute.Tensor,
                        offset_dtype: cutlass.Constexpr):
    wide_offsets_kernel(values, lengths, dst, totals, offset_dtype).launch(grid=(1, 1, 1), block=(THREADS, 1, 1))


@cute.kernel
def scratch_sizes_kernel(src: cute.Tensor, dst: cute.Tensor):
    """Calls whose scratch sizes the bitcode route reads from clang's output: a block scan, a block radix sort, a
    histogram, and a merge sort and an exchange of each warp (one scratch slice per warp)."""
    tile = THREADS * K
    block = coop.this_block()
    warp = coop.this_warp()
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    coop.store(block, dst, coop.exclusive_sum(block, items), offset=0 * tile)
    coop.store(block, dst, coop.radix_sort_keys(block, items), offset=1 * tile)
    samples = coop.ThreadData(K, np.int32)
    for i in cutlass.range_constexpr(K):
        samples[i] = items[i] & 127
    coop.store(block, dst, coop.histogram(block, samples, bins=128), offset=2 * tile)
    coop.store(block, dst, coop.merge_sort_keys(warp, items), offset=3 * tile)
    coop.store(block, dst, coop.exchange(warp, items, mode="blocked_to_striped"), offset=4 * tile)


@cute.jit
def scratch_sizes_launch(src: cute.Tensor, dst: cute.Tensor):
    scratch_sizes_kernel(src, dst).launch(grid=(1, 1, 1), block=(THREADS, 1, 1))


STAGED = 3000  # int32 a kernel of its own allocates beside a call's scratch (12000 bytes)


@cute.kernel
def staged_scan_kernel(src: cute.Tensor, dst: cute.Tensor):
    from cutlass.memory import SmemAllocator

    block = coop.this_block()
    staged = SmemAllocator().allocate_tensor(cutlass.Int32, cute.make_layout(STAGED), 16)
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    staged[block.rank()] = items[0]
    cute.arch.sync_threads()
    items[0] = staged[(block.rank() + 1) % THREADS]
    coop.store(block, dst, coop.exclusive_sum(block, items))


staged_scan_launch = one_block_launcher(staged_scan_kernel)


@cute.kernel
def reshaped_in_branch_kernel(src: cute.Tensor, dst: cute.Tensor, n: cutlass.Int32):
    block = coop.this_block()
    items = coop.ThreadData(2, np.int32)
    if n > 0:  # a run-time branch: the DSL carries items through it
        items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    coop.store(block, dst, items)


@cute.jit
def reshaped_in_branch_launch(src: cute.Tensor, dst: cute.Tensor, n: cutlass.Int32):
    reshaped_in_branch_kernel(src, dst, n).launch(grid=(1, 1, 1), block=(THREADS, 1, 1))


@cute.kernel
def storage_in_branch_kernel(src: cute.Tensor, dst: cute.Tensor, n: cutlass.Int32):
    block = coop.this_block()
    small, large = coop.TempStorage(4096), coop.TempStorage(8192)
    temp = small
    if n > 0:  # a run-time branch: the variable may hold either descriptor
        temp = large
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    coop.store(block, dst, coop.exclusive_sum(block, items, temp_storage=temp))


@cute.jit
def storage_in_branch_launch(src: cute.Tensor, dst: cute.Tensor, n: cutlass.Int32):
    storage_in_branch_kernel(src, dst, n).launch(grid=(1, 1, 1), block=(THREADS, 1, 1))


@cute.kernel
def group_in_loop_kernel(src: cute.Tensor, dst: cute.Tensor, n: cutlass.Int32):
    group = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    coop.load(coop.this_block(), src, items)
    for _ in range(n):  # a run-time loop: the variable may hold either group
        items = coop.inclusive_sum(group, items)
        group = coop.this_warp()
    coop.store(coop.this_block(), dst, items)


@cute.jit
def group_in_loop_launch(src: cute.Tensor, dst: cute.Tensor, n: cutlass.Int32):
    group_in_loop_kernel(src, dst, n).launch(grid=(1, 1, 1), block=(THREADS, 1, 1))


@cute.kernel
def one_storage_in_branch_kernel(src: cute.Tensor, dst: cute.Tensor, n: cutlass.Int32):
    block = coop.this_block()
    storage = coop.TempStorage(4096)
    temp = storage
    if n > 0:  # the same descriptor either way
        temp = storage
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    coop.store(block, dst, coop.exclusive_sum(block, items, temp_storage=temp))


@cute.jit
def one_storage_in_branch_launch(src: cute.Tensor, dst: cute.Tensor, n: cutlass.Int32):
    one_storage_in_branch_kernel(src, dst, n).launch(grid=(1, 1, 1), block=(THREADS, 1, 1))


@cute.kernel
def retyped_in_loop_kernel(src: cute.Tensor, dst: cute.Tensor, n: cutlass.Int32):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    for _ in range(n):  # a run-time loop
        items = coop.ThreadData(K, np.float32)
    coop.store(block, dst, items)


@cute.jit
def retyped_in_loop_launch(src: cute.Tensor, dst: cute.Tensor, n: cutlass.Int32):
    retyped_in_loop_kernel(src, dst, n).launch(grid=(1, 1, 1), block=(THREADS, 1, 1))


@cute.kernel
def common_fragment_kernel(src: cute.Tensor, dst: cute.Tensor):
    block = coop.this_block()
    frag = cute.make_rmem_tensor((K,), cutlass.Int32)
    coop.load(block, src, frag)
    coop.store(block, dst, cute_coop.ThreadData.from_fragment(frag))


@cute.jit
def common_fragment_launch(src: cute.Tensor, dst: cute.Tensor):
    common_fragment_kernel(src, dst).launch(grid=(1, 1, 1), block=(THREADS, 1, 1))


@cute.kernel
def branch_results_kernel(src: cute.Tensor, dst: cute.Tensor, tiles: cutlass.Int32):
    """A run-time tile loop whose payload variable takes the result of one of two calls in a run-time branch (the
    first tile has no predecessor item), then is stored."""
    block = coop.this_block()
    items = coop.ThreadData(2, np.int16)
    for tile in cutlass.range(tiles):
        base = cutlass.Int64(tile) * (THREADS * 2)
        coop.load(block, src, items, offset=base)
        out = coop.ThreadData(2, np.int16)
        if tile == 0:
            out = coop.adjacent_difference(block, items, direction="left")
        else:
            out = coop.adjacent_difference(block, items, direction="left", tile_predecessor_item=src[base - 1])
        coop.store(block, dst, out, offset=base)


@cute.jit
def branch_results_launch(src: cute.Tensor, dst: cute.Tensor, tiles: cutlass.Int32):
    branch_results_kernel(src, dst, tiles).launch(grid=(1, 1, 1), block=(THREADS, 1, 1))
