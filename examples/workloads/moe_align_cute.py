"""MoE align (vLLM's ``moe_align_block_size``, stable) in the CuTe DSL with cuda.coop: the kernels of
``moe_align_numba.py``, written for ``cuda.coop.cutlass`` with the same algorithm, tiling and cooperative calls, so
that the two files read side by side. Thread ``e`` of a 1024-thread block owns expert ``e``; the entries are walked
in tiles of 1024 x 4.

* counting: a block ``histogram`` of each tile's ids (257 bins), loaded ``striped``;
* offsets: a block ``exclusive_sum`` of the padded counts (the last expert's end is the total); ``expert_ids`` by
  binary search; each expert's padding by one warp;
* placing, stable: one ``radix_sort_keys`` per tile of keys holding the expert above the entry's place in the tile
  (sorted by the expert's bits only), ``discontinuity`` (heads and tails) of the sorted experts, and each expert's
  running base in shared memory.

Inputs of up to 8192 entries (``small_path``) take ``small_launcher(small_items(numel))``:
warp w holds its run of 32 x items entries and ranks them slot after slot by ballots of their experts and its
running per-expert counts, thread e turns expert e's counts over the warps into each warp's base, a block
``exclusive_sum`` of the padded counts gives the offsets; no sort. Larger inputs take two launches (``launch_count``,
``launch_place``) over up to 132 blocks; ``launch_align`` (one block that counts then places by tile sorts, the plan
for up to two tiles before the small kernel took them) stays for comparing the two.

What differs from ``moe_align_numba.py``, and why (the same dialect differences as the sampling kernels'):

* Each ``@cuda.jit`` kernel is a ``@cute.kernel`` with a ``@cute.jit`` launcher (``launch_*``, whose last argument is
  the grid); each device helper is a ``@cute.jit`` function.
* Scalars are CuTe numerics (``Int32``, ``Int64``, ``Uint32``); a variable that a run-time loop or branch assigns
  starts typed. ``for i in range(ITEMS)`` over a payload is ``cutlass.range_constexpr(ITEMS)``; a run-time loop over
  slots or blocks is ``cutlass.range``.
* The shared arrays (``numba_coop.shared.array``) come from the DSL's ``SmemAllocator``, which places the
  cooperative scratch beside them; ``cuda.syncthreads()`` is ``cute.arch.sync_threads()``.
* The grid size reaches ``place_kernel`` as an argument (numba reads ``cuda.gridDim.x``).
* The small kernel's ballots are ``cute.arch.vote_ballot_sync``, its lane mask ``cute.arch.lanemask_lt()`` and its
  warp barrier ``cute.arch.sync_warp()`` (numba: ``cuda.ballot_sync``, ``(1 << lane) - 1``: numba-cuda-mlir 0.6
  does not lower ``cuda.lanemask_lt``, and ``cuda.syncwarp()``); its entries a lane are a ``cutlass.Constexpr`` argument
  of the kernel, given by its launcher (``small_launcher``; numba: one kernel per count, ``small_kernel_for``).

The semantics and the NumPy oracle are in ``moe_align_reference.py``; ``cute_moe_align.py`` runs and checks them.
"""
from __future__ import annotations

import functools

import numpy as np
import cutlass  # noqa: I001  (the compiler first, then cuda.coop)
import cutlass.cute as cute
import cuda.coop.cutlass as cute_coop  # noqa: F401  (registers the backend)
from cuda import coop
from moe_align_plan import (  # noqa: F401  (the tiling and the launch plan: pure Python, shared with moe_align_numba.py)
    BINS, ITEMS, MAX_EXPERTS, SMALL_ITEMS, THREADS, TILE, cdiv, check_arguments, key_bits, launch_plan,
    max_num_blocks, max_num_tokens_padded, small_blocks, small_items, small_path, small_threads,
)

from cutlass import Int32, Int64, Uint32
from cutlass.memory import SmemAllocator

OUTSIDE = 0xFFFFFFFF  # the sort key of the tile's slots past its last entry (only fills them: never placed)
PLACE_BITS = 12  # a sort key's low bits: the slot's place in its tile (TILE = 4096), carried along, not sorted by
WARPS = THREADS // 32
assert TILE == 1 << PLACE_BITS


@cute.jit
def count_experts(block, topk_ids: cute.Tensor, begin: Int64, end: Int64, num_experts: Int32):
    """Thread e < num_experts returns how many of topk_ids[begin:end] are e, thread num_experts how many are outside
    ``[0, num_experts)`` (the others 0)."""
    mine = Int32(0)
    start = begin
    while start < end:
        raw = coop.ThreadData(ITEMS, np.int32)
        coop.load(block, topk_ids, raw, algorithm="striped", offset=start, valid_items=min(end - start, TILE),
                  oob_default=np.int32(-1))
        bins = coop.ThreadData(ITEMS, np.int32)
        for i in cutlass.range_constexpr(ITEMS):
            bins[i] = raw[i] if raw[i] >= 0 and raw[i] < num_experts else num_experts
        counts = coop.histogram(block, bins, bins=BINS)
        mine += counts[0]
        start += TILE
    return mine if block.rank() <= num_experts else Int32(0)


@cute.jit
def write_expert_ids(expert_ids: cute.Tensor, offsets: cute.Tensor, num_experts: Int32, total: Int32, size: Int64,
                     block_size: Int32, first: Int64, stride: Int64):
    """expert_ids[b] for b = first, first + stride, ...: the expert whose padded slots cover block b (the last expert
    whose offset is at or below the block's first slot, by a binary search of the offsets), -1 past the total."""
    b = first
    while b < (size + Int64(block_size) - Int64(1)) // Int64(block_size):
        owner = Int32(-1)
        if b * Int64(block_size) < Int64(total):
            low = Int32(0)
            high = num_experts - Int32(1)
            while low < high:  # the last expert whose offset is at or below the block's first slot
                middle = (low + high + Int32(1)) // Int32(2)
                if Int64(offsets[middle]) <= b * Int64(block_size):
                    low = middle
                else:
                    high = middle - Int32(1)
            owner = low
        expert_ids[b] = owner
        b += stride


@cute.jit
def place(block, topk_ids: cute.Tensor, sorted_ids: cute.Tensor, expert_ids: cute.Tensor, post_pad: cute.Tensor,
          begin: Int64, end: Int64, numel: Int64, num_experts: Int32, bits: Int32, block_size: Int32, size: Int64,
          mine: Int32, before: Int32, part: Int64, parts: Int64, outside_known: Int32):
    """``moe_align_numba.place``: thread e < num_experts brings expert e's count over all entries (``mine``) and
    in the entries before ``begin`` (``before``); with ``outside_known`` (non-zero), thread num_experts the count of
    ids outside the experts."""
    smem = SmemAllocator()
    offsets = smem.allocate_tensor(Int32, cute.make_layout(MAX_EXPERTS + 1), 4)  # padded exclusive offsets
    fills = smem.allocate_tensor(Int32, cute.make_layout(MAX_EXPERTS), 4)  # where each expert's padding starts
    bases = smem.allocate_tensor(Int32, cute.make_layout(MAX_EXPERTS), 4)  # each expert's next slot
    starts = smem.allocate_tensor(Int32, cute.make_layout(MAX_EXPERTS), 4)  # each expert's run start in the tile
    sort_bits = smem.allocate_tensor(Int32, cute.make_layout(1), 4)
    e = Int32(block.rank())
    padded = (mine + block_size - Int32(1)) // block_size * block_size if e < num_experts else Int32(0)
    offset = coop.exclusive_sum(block, padded)
    if e < num_experts:
        offsets[e] = offset
        bases[e] = offset + before
        fills[e] = offset + mine
    if e == num_experts - Int32(1):  # the last expert's end is the total
        offsets[num_experts] = offset + padded
    if e == num_experts:
        width = bits  # ids outside the experts sort after them: key num_experts, one more bit if a power of two
        if (outside_known != 0 and mine == Int32(0) and num_experts > Int32(1)
                and num_experts & (num_experts - Int32(1)) == Int32(0)):
            width = bits - Int32(1)
        sort_bits[0] = width
    cute.arch.sync_threads()
    total = offsets[num_experts]
    width = sort_bits[0]
    if part == Int64(0) and e == Int32(0):
        post_pad[0] = total
    lane = e % Int32(32)
    x = Int32(part) * WARPS + e // Int32(32)  # each expert's padding: one warp, coalesced; the blocks take turns
    while x < num_experts:
        pad = fills[x] + lane
        while pad < offsets[x + Int32(1)]:
            sorted_ids[pad] = Int32(numel)
            pad += Int32(32)
        x += Int32(parts) * WARPS
    q = Int64(total) + part * THREADS + Int64(e)  # the tail, shared by the blocks
    while q < size:
        sorted_ids[q] = Int32(numel)
        q += parts * THREADS
    write_expert_ids(expert_ids, offsets, num_experts, total, size, block_size, part * THREADS + Int64(e),
                     parts * THREADS)
    start = begin
    while start < end:
        valid = min(end - start, Int64(TILE))
        raw = coop.ThreadData(ITEMS, np.int32)
        coop.load(block, topk_ids, raw, offset=start, valid_items=valid, oob_default=np.int32(-1))
        keys = coop.ThreadData(ITEMS, np.uint32)  # the expert above the slot's place in the tile, which rides along
        for i in cutlass.range_constexpr(ITEMS):
            expert = Uint32(raw[i]) if raw[i] >= 0 and raw[i] < num_experts else Uint32(num_experts)
            keys[i] = (expert << Uint32(PLACE_BITS)) | Uint32(e * ITEMS + i)
        ordered = coop.radix_sort_keys(block, keys, begin_bit=PLACE_BITS, end_bit=Int32(PLACE_BITS) + width,
                                       valid_items=valid, oob_default=np.uint32(OUTSIDE))
        experts = coop.ThreadData(ITEMS, np.uint32)
        for i in cutlass.range_constexpr(ITEMS):
            experts[i] = ordered[i] >> Uint32(PLACE_BITS)
        heads, tails = coop.discontinuity(block, experts, mode="heads_and_tails")
        for i in cutlass.range_constexpr(ITEMS):
            if heads[i] != 0 and experts[i] < Uint32(num_experts):
                starts[Int32(experts[i])] = e * ITEMS + i
        cute.arch.sync_threads()
        ends = coop.ThreadData(ITEMS, np.int32)
        for i in cutlass.range_constexpr(ITEMS):
            ends[i] = Int32(0)
            if experts[i] < Uint32(num_experts):
                d = Int32(experts[i])
                slot = bases[d] + e * ITEMS + i - starts[d]
                sorted_ids[slot] = Int32(start + Int64(ordered[i] & Uint32(TILE - 1)))
                ends[i] = slot + Int32(1)
        if start + Int64(TILE) < end:  # another tile follows: each expert's next slot, past its run's last
            cute.arch.sync_threads()
            for i in cutlass.range_constexpr(ITEMS):
                if tails[i] != 0 and experts[i] < Uint32(num_experts):
                    bases[Int32(experts[i])] = ends[i]
            cute.arch.sync_threads()
        start += TILE


KEY_BITS = 9  # expert ids 0 .. 256 (num_experts stands for ids outside): the bits the warp's ballots compare


@cute.jit
def ballot_peers(x: Int32):
    """``moe_align_numba.ballot_peers``: the lanes of the warp holding the same x as this lane, from one ballot per
    bit of x (``match_sync``'s time grows with the distinct values among the lanes)."""
    peers = Uint32(0xFFFFFFFF)
    for bit in cutlass.range_constexpr(KEY_BITS):
        mine = ((x >> Int32(bit)) & Int32(1)) != Int32(0)
        votes = Uint32(cute.arch.vote_ballot_sync(mine))
        peers &= cutlass.select_(mine, votes, votes ^ Uint32(0xFFFFFFFF))
    return peers


@cute.kernel
def small_kernel(topk_ids: cute.Tensor, sorted_ids: cute.Tensor, expert_ids: cute.Tensor, post_pad: cute.Tensor,
                 numel: Int64, num_experts: Int32, block_size: Int32, size: Int64, items: cutlass.Constexpr,
                 threads: cutlass.Constexpr):
    """``moe_align_numba.small_kernel_for(items)``: up to threads x items entries, warp w holding its run of
    32 x items (lane l of slot j: the run's entry 32 j + l); slot after slot the warp ranks its entries by ballots
    of their experts and its running per-expert counts; the warps' counts give each warp's base, a block
    exclusive_sum the offsets."""
    span = 32 * items  # a warp's entries
    warps = threads // 32
    smem = SmemAllocator()
    counts = smem.allocate_tensor(Int32, cute.make_layout(warps * MAX_EXPERTS), 16)  # warp w's count, then base
    offsets = smem.allocate_tensor(Int32, cute.make_layout(MAX_EXPERTS + 1), 4)  # padded exclusive offsets
    fills = smem.allocate_tensor(Int32, cute.make_layout(MAX_EXPERTS), 4)  # where each expert's padding starts
    ranked = smem.allocate_tensor(Int32, cute.make_layout(threads * items), 16)  # [entry]: expert << 16 | rank
    block = coop.this_block()
    n = Int32(numel)
    slots = Int32(size)
    t = Int32(block.rank())
    lane = t % Int32(32)
    first = (t // Int32(32)) * Int32(span)  # this warp's first entry
    row = (t // Int32(32)) * Int32(MAX_EXPERTS)  # this warp's counts
    for j in cutlass.range_constexpr(MAX_EXPERTS // 32):  # each warp clears its own row: no barrier before counting
        counts[row + Int32(j * 32) + lane] = Int32(0)
    raw = coop.ThreadData(items, np.int32)
    coop.load(coop.this_warp(), topk_ids, raw, algorithm="striped",
              valid_items=cutlass.min(cutlass.max(n - first, Int32(0)), Int32(span)), oob_default=np.int32(-1))
    if cutlass.const_expr(items > 1):
        cute.arch.sync_warp()  # the row's zeros before any lane reads them
    for j in cutlass.range_constexpr(items):
        x = raw[j] if raw[j] >= 0 and raw[j] < num_experts else num_experts
        peers = ballot_peers(x)  # the slot's lanes holding the same expert
        rank = Int32(cute.arch.popc(peers & cute.arch.lanemask_lt()))  # those at earlier lanes
        if cutlass.const_expr(items > 1):
            if x < num_experts:  # and the earlier slots' entries of the expert
                rank += counts[row + x]
            cute.arch.sync_warp()  # every lane has read its expert's count before the expert's last lane moves it on
        if peers >> Uint32(lane) == Uint32(1) and x < num_experts:  # the slot's last entry of the expert
            counts[row + x] = rank + Int32(1)
        if cutlass.const_expr(items > 1):
            cute.arch.sync_warp()  # the new counts before the next slot reads them
        ranked[first + Int32(32 * j) + lane] = (x << Int32(16)) | rank
    cute.arch.sync_threads()
    mine = Int32(0)  # thread e: expert e's count; each warp's count becomes the warp's base
    if t < num_experts:
        for w in cutlass.range_constexpr(warps):  # every warp cleared its row: unrolled, the reads all in flight
            count = counts[Int32(w * MAX_EXPERTS) + t]
            counts[Int32(w * MAX_EXPERTS) + t] = mine
            mine += count
    padded = (mine + block_size - Int32(1)) // block_size * block_size
    offset = coop.exclusive_sum(block, padded)
    if t < num_experts:
        offsets[t] = offset
        fills[t] = offset + mine
    if t == num_experts - Int32(1):  # the last expert's end is the total
        offsets[num_experts] = offset + padded
    cute.arch.sync_threads()
    total = offsets[num_experts]
    # every block ranked every entry: the writes (size slots in all) are shared out over the blocks
    part = Int32(cute.arch.block_idx()[0])
    parts = Int32(cute.arch.grid_dim()[0])
    entry = part * Int32(threads) + t
    while entry < n:
        x = ranked[entry] >> Int32(16)
        if x < num_experts:
            sorted_ids[offsets[x] + counts[(entry // Int32(span)) * Int32(MAX_EXPERTS) + x]
                       + (ranked[entry] & Int32(0xFFFF))] = entry
        entry += parts * Int32(threads)
    if t == Int32(0) and part == Int32(0):
        post_pad[0] = total
    e = part * Int32(warps) + t // Int32(32)  # each expert's padding: one warp, coalesced
    while e < num_experts:
        pad = fills[e] + lane
        while pad < offsets[e + Int32(1)]:
            sorted_ids[pad] = n
            pad += Int32(32)
        e += parts * Int32(warps)
    q = total + part * Int32(threads) + t  # the tail
    while q < slots:
        sorted_ids[q] = n
        q += parts * Int32(threads)
    if t < num_experts and t % parts == part:  # expert t's blocks
        for b in cutlass.range(offset // block_size, (offset + padded) // block_size):
            expert_ids[b] = t
    b = total // block_size + part * Int32(threads) + t  # the blocks past the total
    while b < (slots + block_size - Int32(1)) // block_size:
        expert_ids[b] = Int32(-1)
        b += parts * Int32(threads)


@cute.kernel
def align_kernel(topk_ids: cute.Tensor, sorted_ids: cute.Tensor, expert_ids: cute.Tensor, post_pad: cute.Tensor,
                 numel: Int64, num_experts: Int32, bits: Int32, block_size: Int32, size: Int64):
    """Small inputs: one block counts every entry, then places them."""
    block = coop.this_block()
    mine = count_experts(block, topk_ids, Int64(0), numel, num_experts)
    place(block, topk_ids, sorted_ids, expert_ids, post_pad, Int64(0), numel, numel, num_experts, bits, block_size,
          size, mine, Int32(0), Int64(0), Int64(1), Int32(1))


@cute.kernel
def count_kernel(topk_ids: cute.Tensor, counts: cute.Tensor, numel: Int64, num_experts: Int32, span: Int64):
    """Large inputs, first launch: block j writes its entries' per-expert counts to counts[j * 256 + e]."""
    block = coop.this_block()
    part = Int64(cute.arch.block_idx()[0])
    mine = count_experts(block, topk_ids, part * span, min(numel, (part + Int64(1)) * span), num_experts)
    if block.rank() < MAX_EXPERTS:
        counts[part * MAX_EXPERTS + Int64(block.rank())] = mine


@cute.kernel
def place_kernel(topk_ids: cute.Tensor, counts: cute.Tensor, sorted_ids: cute.Tensor, expert_ids: cute.Tensor,
                 post_pad: cute.Tensor, numel: Int64, num_experts: Int32, bits: Int32, block_size: Int32, size: Int64,
                 span: Int64, parts: Int64):
    """Large inputs, second launch: block j reads every block's counts (thread e: expert e's total, and its count
    in the blocks before j) and places its entries."""
    block = coop.this_block()
    part = Int64(cute.arch.block_idx()[0])
    mine = Int32(0)
    before = Int32(0)
    if block.rank() < num_experts:
        for other in cutlass.range(parts):
            count = counts[Int64(other) * MAX_EXPERTS + Int64(block.rank())]
            mine += count
            if Int64(other) < part:
                before += count
    place(block, topk_ids, sorted_ids, expert_ids, post_pad, part * span, min(numel, (part + Int64(1)) * span),
          numel, num_experts, bits, block_size, size, mine, before, part, parts, Int32(0))


@cute.jit
def launch_align(topk_ids: cute.Tensor, sorted_ids: cute.Tensor, expert_ids: cute.Tensor, post_pad: cute.Tensor,
                 numel: Int64, num_experts: Int32, bits: Int32, block_size: Int32, size: Int64, blocks: Int32):
    align_kernel(topk_ids, sorted_ids, expert_ids, post_pad, numel, num_experts, bits, block_size, size).launch(
        grid=(blocks, 1, 1), block=(THREADS, 1, 1))


@functools.cache
def small_launcher(items: int, threads: int = THREADS):
    """The ``@cute.jit`` launcher of ``small_kernel`` at ``items`` entries a lane (``small_items``), taking what the
    other launchers take: the kernel's arguments, then the grid."""

    @cute.jit
    def launch_small(topk_ids: cute.Tensor, sorted_ids: cute.Tensor, expert_ids: cute.Tensor, post_pad: cute.Tensor,
                     numel: Int64, num_experts: Int32, block_size: Int32, size: Int64, blocks: Int32):
        small_kernel(topk_ids, sorted_ids, expert_ids, post_pad, numel, num_experts, block_size, size, items,
                     threads).launch(grid=(blocks, 1, 1), block=(threads, 1, 1))

    return launch_small


@cute.jit
def launch_count(topk_ids: cute.Tensor, counts: cute.Tensor, numel: Int64, num_experts: Int32, span: Int64,
                 blocks: Int32):
    count_kernel(topk_ids, counts, numel, num_experts, span).launch(grid=(blocks, 1, 1), block=(THREADS, 1, 1))


@cute.jit
def launch_place(topk_ids: cute.Tensor, counts: cute.Tensor, sorted_ids: cute.Tensor, expert_ids: cute.Tensor,
                 post_pad: cute.Tensor, numel: Int64, num_experts: Int32, bits: Int32, block_size: Int32,
                 size: Int64, span: Int64, blocks: Int32):
    place_kernel(topk_ids, counts, sorted_ids, expert_ids, post_pad, numel, num_experts, bits, block_size, size,
                 span, Int64(blocks)).launch(grid=(blocks, 1, 1), block=(THREADS, 1, 1))
