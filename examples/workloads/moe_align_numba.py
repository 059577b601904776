"""MoE align (vLLM's ``moe_align_block_size``, stable) in numba-cuda-mlir with cuda.coop: the routed entries of
``topk_ids`` grouped by expert, each expert's run padded to a multiple of ``block_size``, every cross-thread step a
cooperative call. Thread ``e`` of a 1024-thread block owns expert ``e``; the entries are walked in tiles of
1024 x 4.

* counting: a block ``histogram`` of each tile's ids (257 bins: the experts, and bin ``num_experts`` for ids
  outside ``[0, num_experts)``), loaded ``striped``; thread e adds up bin e;
* offsets: each expert's padded count and a block ``exclusive_sum`` over the experts (the last expert's end is the
  post-pad total); ``expert_ids`` by a binary search of the offsets per padded block; each expert's padding by one
  warp (coalesced stores: the cost grows with the padding, not with a thread's serial loop over it), the tail by
  plain stores;
* placing, stable: a blocked load of each tile, then one ``radix_sort_keys`` of keys holding the expert above the
  entry's place in the tile (ids outside the range take expert ``num_experts``: after every expert). The sort orders
  by the expert's bits only, so the place rides along and the sort, being stable, keeps each expert's entries in
  flat order (no values to exchange); with no ids outside and a power-of-two expert count it orders by one bit
  fewer (256 experts: two 4-bit passes, not three). ``discontinuity`` (heads and tails) of the sorted experts marks
  where each expert's run starts and ends in the tile: an entry's sorted position minus its run's start is its place
  among that expert's entries of the tile, and the expert's running base (shared memory, set past the run's last
  slot by the thread holding its tail, when another tile follows) places it.

Inputs of up to 8192 entries (``small_path``: up to 8 a thread) take the small kernel (``small_kernel_for``, one
per number of entries a lane, ``small_items``): one block, no sort:

* warp w loads its run of 32 x items entries (a warp ``striped`` load: lane l of slot j holds the run's entry
  32 j + l; expert ``num_experts`` for ids outside the experts and past the last entry); slot after slot, the warp
  finds the lanes holding each lane's expert by nine ballots, one per bit of the expert (``ballot_peers``: the one
  step that is not a cooperative call, cuda.coop having no warp rank by a digit; ``match_any_sync`` gives the same
  lanes, but its time grows with the distinct experts in the warp): the entries of the same expert at earlier
  lanes, plus the warp's running count of the expert (shared memory), are the entry's rank among the warp's entries
  of its expert (stable), and the expert's last lane in the slot moves the count on;
* after a block barrier, thread e turns expert e's counts over the warps into each warp's base and their sum; a block
  ``exclusive_sum`` of the padded counts gives the offsets;
* after a second barrier, each entry goes to its expert's offset plus its warp's base plus its rank; a warp per
  expert writes the padding, the block the tail, thread e expert e's ``expert_ids``.

Larger inputs take two launches over up to 132 blocks (``launch_plan``): ``count_kernel`` writes each block's
per-expert counts, ``place_kernel`` sums the counts of the blocks before it (its experts' bases) and of all blocks
(the offsets) and places its entries. ``align_kernel``, one block that counts then places (the plan for up to 8192
entries before the small kernel took them), stays for comparing the two.

The semantics and the NumPy oracle are in ``moe_align_reference.py``; ``moe_align.py`` runs and checks them.
"""
from __future__ import annotations

import functools

import numpy as np
from numba_cuda_mlir import cuda  # noqa: I001  (the compiler first, then cuda.coop)
import cuda.coop.numba_mlir as numba_coop
from cuda import coop
from moe_align_plan import (  # noqa: F401  (the tiling and the launch plan: pure Python, shared with moe_align_cute.py)
    BINS, ITEMS, MAX_EXPERTS, SMALL_ITEMS, THREADS, TILE, cdiv, check_arguments, key_bits, launch_plan,
    max_num_blocks, max_num_tokens_padded, small_blocks, small_items, small_path, small_threads,
)

OUTSIDE = 0xFFFFFFFF  # the sort key of the tile's slots past its last entry (only fills them: never placed)
PLACE_BITS = 12  # a sort key's low bits: the slot's place in its tile (TILE = 4096), carried along, not sorted by
WARPS = THREADS // 32
assert TILE == 1 << PLACE_BITS


@cuda.jit(device=True, inline="always")
def count_experts(block, topk_ids, begin, end, num_experts):
    """Thread e < num_experts returns how many of topk_ids[begin:end] are e, thread num_experts how many are outside
    ``[0, num_experts)`` (the others 0)."""
    mine = np.int32(0)
    start = begin
    while start < end:
        raw = coop.ThreadData(ITEMS, np.int32)
        coop.load(block, topk_ids, raw, algorithm="striped", offset=start, valid_items=min(end - start, TILE),
                  oob_default=np.int32(-1))
        bins = coop.ThreadData(ITEMS, np.int32)
        for i in range(ITEMS):
            bins[i] = raw[i] if raw[i] >= 0 and raw[i] < num_experts else np.int32(num_experts)
        counts = coop.histogram(block, bins, bins=BINS)
        mine += counts[0]
        start += TILE
    return mine if block.rank() <= num_experts else np.int32(0)


@cuda.jit(device=True, inline="always")
def write_expert_ids(expert_ids, offsets, num_experts, total, size, block_size, first, stride):
    """expert_ids[b] for b = first, first + stride, ...: the expert whose padded slots cover block b (the last expert
    whose offset is at or below the block's first slot, by a binary search of the offsets), -1 past the total."""
    b = first
    while b < (size + block_size - 1) // block_size:
        owner = np.int32(-1)
        if b * block_size < total:
            low = np.int32(0)
            high = np.int32(num_experts - 1)
            while low < high:  # the last expert whose offset is at or below the block's first slot
                middle = (low + high + 1) // 2
                if offsets[middle] <= b * block_size:
                    low = np.int32(middle)
                else:
                    high = np.int32(middle - 1)
            owner = low
        expert_ids[b] = owner
        b += stride


@cuda.jit(device=True, inline="always")
def place(block, topk_ids, sorted_ids, expert_ids, post_pad, begin, end, numel, num_experts, key_bits, block_size,
          size, mine, before, part, parts, outside_known):
    """Place topk_ids[begin:end] (block ``part`` of ``parts``). Thread e < num_experts brings ``mine``, expert e's
    count over all entries, and ``before``, its count in the entries before ``begin``; with ``outside_known``,
    thread num_experts brings the count of ids outside the experts (then a sort by one bit less when there are
    none and num_experts is a power of two). Block 0 writes ``num_tokens_post_pad``; the blocks share each
    expert's padding (a warp per expert), ``expert_ids`` and the tail of ``sorted_ids`` (``size`` slots). The
    shared arrays live here, with every access to them (numba-cuda-mlir 0.6 addresses a shared array passed to an
    inlined device function as global memory)."""
    offsets = numba_coop.shared.array(MAX_EXPERTS + 1, np.int32)  # padded exclusive offsets; [num_experts]: the total
    fills = numba_coop.shared.array(MAX_EXPERTS, np.int32)  # where each expert's padding starts
    bases = numba_coop.shared.array(MAX_EXPERTS, np.int32)  # each expert's next slot for this block's entries
    starts = numba_coop.shared.array(MAX_EXPERTS, np.int32)  # where each expert's run starts in the sorted tile
    sort_bits = numba_coop.shared.array(1, np.int32)
    e = block.rank()
    padded = np.int32((mine + block_size - 1) // block_size * block_size) if e < num_experts else np.int32(0)
    offset = coop.exclusive_sum(block, padded)
    if e < num_experts:
        offsets[e] = offset
        bases[e] = offset + before
        fills[e] = offset + mine
    if e == num_experts - 1:  # the last expert's end is the total
        offsets[num_experts] = offset + padded
    if e == num_experts:
        width = key_bits  # ids outside the experts sort after them: key num_experts, one more bit if a power of two
        if outside_known and mine == 0 and num_experts > 1 and num_experts & (num_experts - 1) == 0:
            width = key_bits - 1
        sort_bits[0] = width
    cuda.syncthreads()
    total = offsets[num_experts]
    width = sort_bits[0]
    if part == 0 and e == 0:
        post_pad[0] = total
    lane = e % 32
    x = part * WARPS + e // 32  # each expert's padding: one warp, coalesced; the blocks take experts in turn
    while x < num_experts:
        pad = fills[x] + lane
        while pad < offsets[x + 1]:
            sorted_ids[pad] = np.int32(numel)
            pad += 32
        x += parts * WARPS
    q = np.int64(total) + part * THREADS + e  # the tail, shared by the blocks
    while q < size:
        sorted_ids[q] = np.int32(numel)
        q += parts * THREADS
    write_expert_ids(expert_ids, offsets, num_experts, total, size, block_size, np.int64(part * THREADS + e),
                     parts * THREADS)
    start = begin
    while start < end:
        valid = min(end - start, TILE)
        raw = coop.ThreadData(ITEMS, np.int32)
        coop.load(block, topk_ids, raw, offset=start, valid_items=valid, oob_default=np.int32(-1))
        keys = coop.ThreadData(ITEMS, np.uint32)  # the expert above the slot's place in the tile, which rides along
        for i in range(ITEMS):
            expert = np.uint32(raw[i]) if raw[i] >= 0 and raw[i] < num_experts else np.uint32(num_experts)
            keys[i] = (expert << np.uint32(PLACE_BITS)) | np.uint32(e * ITEMS + i)
        ordered = coop.radix_sort_keys(block, keys, begin_bit=PLACE_BITS, end_bit=PLACE_BITS + width,
                                       valid_items=valid, oob_default=np.uint32(OUTSIDE))
        experts = coop.ThreadData(ITEMS, np.uint32)
        for i in range(ITEMS):
            experts[i] = ordered[i] >> np.uint32(PLACE_BITS)
        heads, tails = coop.discontinuity(block, experts, mode="heads_and_tails")
        for i in range(ITEMS):
            if heads[i] and experts[i] < num_experts:
                starts[experts[i]] = np.int32(e * ITEMS + i)
        cuda.syncthreads()
        ends = coop.ThreadData(ITEMS, np.int32)
        for i in range(ITEMS):
            ends[i] = np.int32(0)
            if experts[i] < num_experts:
                slot = bases[experts[i]] + np.int32(e * ITEMS + i) - starts[experts[i]]
                sorted_ids[slot] = np.int32(start + (ordered[i] & np.uint32(TILE - 1)))
                ends[i] = slot + np.int32(1)
        if start + TILE < end:  # another tile follows: each expert's next slot, past its run's last
            cuda.syncthreads()
            for i in range(ITEMS):
                if tails[i] and experts[i] < num_experts:
                    bases[experts[i]] = ends[i]
            cuda.syncthreads()
        start += TILE


KEY_BITS = 9  # expert ids 0 .. 256 (num_experts stands for ids outside): the bits the warp's ballots compare


@cuda.jit(device=True, inline="always")
def ballot_peers(x):
    """The lanes of the warp holding the same x (a uint32) as this lane (what ``match_any_sync`` answers), from one
    ballot per bit of x: nine votes whatever the values. The match's time grows with the distinct values among the
    lanes: on an H100 the small kernel took 5.4 us at 128 tokens of 8 experts and 9.4-13.6 us of 256, 16-27 us at
    1024 tokens of 64-256 experts (8 matches a warp). All in uint32 (numba widens 32-bit operations to 64 bits). The
    ballot is of the lanes whose bit is clear; the lane's own bit, moved to the sign and shifted back over the word,
    flips it where set: four instructions a bit. Choosing the ballot or its complement by a test of the bit took
    seven (the compiler tests the bit twice, once by a shift, a mask and a compare)."""
    peers = np.uint32(0xFFFFFFFF)
    for bit in range(KEY_BITS):
        clear = np.uint32(x & np.uint32(1 << bit)) == np.uint32(0)
        votes = np.uint32(cuda.ballot_sync(0xFFFFFFFF, clear))  # the lanes whose bit is clear
        mine = np.uint32(np.int32(np.uint32(x << np.uint32(31 - bit))) >> np.int32(31))  # all ones where it is set
        peers = np.uint32(peers & (votes ^ mine))
    return peers


@functools.cache
def small_kernel_for(items: int, threads: int = THREADS):
    """The small kernel of ``threads`` threads for up to ``threads * items`` entries (``small_path``, ``small_items``,
    ``small_threads``): warp w holds entries
    ``[w * 32 * items, (w + 1) * 32 * items)``, lane l of slot j entry ``w * 32 * items + 32 * j + l`` (a warp
    ``striped`` load), and ranks them slot after slot: of the lanes of a slot holding the same expert
    (``ballot_peers``), those at earlier lanes plus the warp's running count of the expert (shared memory: the
    earlier slots') are the entry's rank among the warp's entries of its expert, and the expert's last lane of the
    slot moves the running count on.
    Thread e then turns expert e's counts over the warps into each warp's base and sums them; a block
    ``exclusive_sum`` of the padded counts gives the offsets. Two block barriers besides the scan's; no sort. Sizes
    are below 2**31 (``check_arguments``), so the counts and slots are int32."""
    span = 32 * items  # a warp's entries (a power of two)
    warps = threads // 32
    # numba-cuda-mlir types int32 and uint32 arithmetic as 64-bit, tests every signed index for a negative value,
    # divides signed ints through a called 64-bit routine and runs range() on 64-bit counters: the indices, loop
    # counters and divisions below are uint32 (every one is non-negative and below 2**31), each sum wrapped back to
    # uint32 so that the 64-bit steps fold to 32-bit ones, the grid-stride loops plain while loops
    u = np.uint32
    one, lanes_below, span_bits, max_experts = u(1), u(31), u(span.bit_length() - 1), u(MAX_EXPERTS)
    warp_size, lane_bits, block_threads, block_warps = u(32), u(5), u(threads), u(warps)
    key_shift, rank_mask = u(16), u(0xFFFF)

    @cuda.jit(launch_bounds=threads)
    def small_kernel(topk_ids, sorted_ids, expert_ids, post_pad, numel, num_experts, block_size, size):
        counts = numba_coop.shared.array(warps * MAX_EXPERTS, np.int32)  # [w * 256 + e]: warp w's count, then base
        offsets = numba_coop.shared.array(MAX_EXPERTS + 1, np.int32)  # padded exclusive offsets; [num_experts]: total
        fills = numba_coop.shared.array(MAX_EXPERTS, np.int32)  # where each expert's padding starts
        # [entry]: its expert << 16 | its rank among the warp's (< 256), until the bases are known (in registers,
        # 8 a thread spilled beside the counts' reads)
        ranked = numba_coop.shared.array(threads * items, np.int32)
        # numba-cuda-mlir's arrays have a run-time stride (a 64-bit multiply per store); ravel's view has stride 1
        sorted_out = sorted_ids.ravel()
        expert_out = expert_ids.ravel()
        block = coop.this_block()
        n = np.int32(numel)
        entries = u(numel)
        slots = u(size)
        experts = u(num_experts)
        t = u(block.rank())
        lane = u(t & lanes_below)
        warp = u(t >> lane_bits)
        first = u(warp << span_bits)  # this warp's first entry
        row = u(warp * max_experts)  # this warp's counts
        for j in range(MAX_EXPERTS // 32):  # each warp clears its own row: no block barrier before the counting
            counts[u(row + u(j * 32) + lane)] = np.int32(0)
        raw = coop.ThreadData(items, np.int32)
        coop.load(coop.this_warp(), topk_ids, raw, algorithm="striped",
                  valid_items=np.int32(min(max(np.int32(n - np.int32(first)), np.int32(0)), np.int32(span))),
                  oob_default=np.int32(-1))
        at_or_above = u(u(0xFFFFFFFF) << lane)  # numba-cuda-mlir 0.6: no lanemask_lt
        below = u(~at_or_above)  # the earlier lanes
        above = u(at_or_above << one)  # the later lanes
        if items > 1:
            cuda.syncwarp()  # the row's zeros before any lane reads them
        for j in range(items):
            # ids outside [0, num_experts) (a negative one wraps above them) take num_experts (not by min():
            # numba-cuda-mlir 0.6 takes the signed minimum of two uint32s)
            x = u(raw[j])
            x = x if x < experts else experts
            # the slot's lanes holding the same expert (ballots: cuda.coop has no warp rank by a digit), and those
            # at earlier lanes: with the earlier slots' count, the entry's rank among the warp's of its expert
            peers = ballot_peers(x)
            rank = u(cuda.popc(u(peers & below)))
            if items > 1:
                if x < experts:
                    rank = u(rank + u(counts[u(row + x)]))
                cuda.syncwarp()  # every lane has read its expert's count before the expert's last lane moves it on
            if u(peers & above) == u(0) and x < experts:  # the slot's last entry of the expert
                counts[u(row + x)] = np.int32(rank + one)
            if items > 1:
                cuda.syncwarp()  # the new counts before the next slot reads them
            ranked[u(first + u(32 * j) + lane)] = np.int32(u(x << key_shift) | rank)
        cuda.syncthreads()
        mine = np.int32(0)  # thread e: expert e's count; each warp's count becomes the warp's base
        if t < experts:
            for w in range(warps):  # every warp cleared its row: a constant trip count, so the reads are all in flight
                count = counts[u(u(w * MAX_EXPERTS) + t)]
                counts[u(u(w * MAX_EXPERTS) + t)] = mine
                mine = np.int32(mine + count)
        # numba divides signed ints in 64 bits (a called routine); these are non-negative: 32-bit unsigned division
        unit = u(block_size)
        whole = u(u(u(mine) + unit - one) // unit)  # expert t's blocks
        padded = np.int32(whole * unit)  # an int32 scan (numba sums int64)
        offset = coop.exclusive_sum(block, padded)
        if t < experts:
            offsets[t] = offset
            fills[t] = np.int32(offset + mine)
        if t == u(experts - one):  # the last expert's end is the total
            offsets[experts] = np.int32(offset + padded)
        cuda.syncthreads()
        total = u(offsets[experts])
        # every block ranked every entry (the same counts, bases and offsets in each block's shared memory), so the
        # writes, size slots in all, are shared out over the blocks: entries, padding, tail and expert_ids
        part = u(cuda.blockIdx.x)
        parts = u(cuda.gridDim.x)
        stride = u(parts * block_threads)
        entry = u(part * block_threads + t)
        while entry < entries:
            key = u(ranked[entry])
            x = u(key >> key_shift)
            if x < experts:
                base = u(offsets[x]) + u(counts[u(u(entry >> span_bits) * max_experts + x)])
                sorted_out[u(base + u(key & rank_mask))] = np.int32(entry)
            entry = u(entry + stride)
        if t == u(0) and part == u(0):
            post_pad[0] = np.int32(total)
        e = u(part * block_warps + warp)  # each expert's padding: one warp, coalesced
        while e < experts:
            pad = u(u(fills[e]) + lane)
            end = u(offsets[u(e + one)])
            while pad < end:
                sorted_out[pad] = n
                pad = u(pad + warp_size)
            e = u(e + parts * block_warps)
        q = u(total + part * block_threads + t)  # the tail
        while q < slots:
            sorted_out[q] = n
            q = u(q + stride)
        if t < experts and t % parts == part:  # expert t's blocks (whole ones)
            b = u(u(offset) // unit)
            stop = u(b + whole)
            while b < stop:
                expert_out[b] = np.int32(t)
                b = u(b + one)
        b = u(total // unit + part * block_threads + t)  # the blocks past the total
        blocks = u(u(slots + unit - one) // unit)
        while b < blocks:
            expert_out[b] = np.int32(-1)
            b = u(b + stride)

    return small_kernel


@cuda.jit(launch_bounds=THREADS)
def align_kernel(topk_ids, sorted_ids, expert_ids, post_pad, numel, num_experts, key_bits, block_size, size):
    """Up to 2 tiles in one block: counting, then placing by tile sorts (``launch_plan``'s one-block plan; the host
    wrapper runs the small kernel there now: kept for comparing the two)."""
    block = coop.this_block()
    mine = count_experts(block, topk_ids, np.int64(0), numel, num_experts)
    place(block, topk_ids, sorted_ids, expert_ids, post_pad, np.int64(0), numel, numel, num_experts, key_bits,
          block_size, size, mine, np.int32(0), np.int64(0), np.int64(1), True)


@cuda.jit(launch_bounds=THREADS)
def count_kernel(topk_ids, counts, numel, num_experts, span):
    """Large inputs, first launch: block j writes its entries' per-expert counts to counts[j * 256 + e]."""
    block = coop.this_block()
    part = np.int64(cuda.blockIdx.x)
    mine = count_experts(block, topk_ids, part * span, min(numel, (part + 1) * span), num_experts)
    if block.rank() < MAX_EXPERTS:
        counts[part * MAX_EXPERTS + block.rank()] = mine


@cuda.jit(launch_bounds=THREADS)
def place_kernel(topk_ids, counts, sorted_ids, expert_ids, post_pad, numel, num_experts, key_bits, block_size, size,
                 span):
    """Large inputs, second launch: block j reads every block's counts (thread e: expert e's total, and its count
    in the blocks before j) and places its entries."""
    block = coop.this_block()
    part = np.int64(cuda.blockIdx.x)
    parts = np.int64(cuda.gridDim.x)
    mine = np.int32(0)
    before = np.int32(0)
    if block.rank() < num_experts:
        for other in range(parts):
            count = counts[other * MAX_EXPERTS + block.rank()]
            mine += count
            if other < part:
                before += count
    place(block, topk_ids, sorted_ids, expert_ids, post_pad, part * span, min(numel, (part + 1) * span), numel,
          num_experts, key_bits, block_size, size, mine, before, part, parts, False)


def moe_align_block_size(topk_ids, num_experts: int, block_size: int, sorted_ids=None, expert_ids=None,
                         post_pad=None, counts=None):
    """Launch MoE align on an int32 device array ``topk_ids`` (any shape; its flat order is the entries' order).
    Returns (sorted_token_ids, expert_ids, num_tokens_post_pad) device arrays, allocated here when not given
    (sizes: ``max_num_tokens_padded``, ``max_num_blocks``, 1; ``counts``: int32 workspace of blocks x 256 for the
    two-launch path). One launch for small inputs (the small kernel, up to 8192 entries: ``small_path``), two for
large ones (``launch_plan``)."""
    flat = topk_ids.reshape(-1)
    numel = flat.shape[0]
    check_arguments(numel, num_experts, block_size)
    size = max_num_tokens_padded(numel, num_experts, block_size)
    sorted_ids = cuda.device_array(size, np.int32) if sorted_ids is None else sorted_ids
    expert_ids = cuda.device_array(max_num_blocks(numel, num_experts, block_size), np.int32) \
        if expert_ids is None else expert_ids
    post_pad = cuda.device_array(1, np.int32) if post_pad is None else post_pad
    blocks, span = launch_plan(numel)
    n, experts, bits = np.int64(numel), np.int32(num_experts), np.int32(key_bits(num_experts))
    bs, slots = np.int32(block_size), np.int64(size)
    if small_path(numel):
        threads = small_threads(numel)
        blocks = small_blocks(numel, num_experts, size, threads)
        small_kernel_for(small_items(numel), threads)[blocks, threads](flat, sorted_ids, expert_ids, post_pad, n,
                                                                       experts, bs, slots)
    else:
        counts = cuda.device_array(blocks * MAX_EXPERTS, np.int32) if counts is None else counts
        count_kernel[blocks, THREADS](flat, counts, n, experts, np.int64(span))
        place_kernel[blocks, THREADS](flat, counts, sorted_ids, expert_ids, post_pad, n, experts, bits, bs, slots,
                                      np.int64(span))
    return sorted_ids, expert_ids, post_pad
