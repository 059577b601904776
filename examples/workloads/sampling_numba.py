"""LLM sampling kernels in numba-cuda-mlir with cuda.coop: one 1024-thread block per row of a (batch, vocab) float32
matrix, the vocabulary walked in tiles of 1024 x 4 items, every cross-thread step a cooperative call.

* ``softmax``: small batches (up to 8 rows) of rows of at most 32768 items go over the 8 blocks of a cluster
  (``softmax_cluster_kernel``: each block holds its slice in registers, the slices' (max, sum of exp) pairs meet in
  a cluster ``reduce`` through distributed shared memory); other rows of at most 32768 items (``HELD_TILE``) are
  read once into registers (32 items a thread), their
  (max, sum of exp) pair per thread reduced by one block ``reduce``, and written from the registers; a longer row
  takes an online (max, sum) pass and a pass that writes (small batches: over row slices in one launch, the slices'
  pairs meeting at a grid barrier, a slice held in registers across it when it fits);
* ``top_k_*``: the k-th largest value by a radix select on the values' ordered bits (``select_pivot``): each 8-bit
  digit counted by a block ``histogram`` over the row until few enough values share the digits so far, then those
  kept in shared memory (an ``exclusive_sum`` places them) and the later digits counted from them alone; a reverse
  ``inclusive_sum`` over the bins and one tuple ``reduce`` pick each digit; then a pass that masks or renormalises.
  Small batches of long rows (``select_plan``) split each row over the blocks of one launch, which meet at a grid
  barrier (``grid_barrier``) after each digit, each block writing its slice's counts and reading every slice's;
* ``top_p_*``: the pivot by a four-digit radix select on the values' bits by mass (a 256-bin histogram of each 8-bit
  digit's fixed-point mass in shared memory, by atomic adds; a reverse ``inclusive_sum`` over the bins, one tuple
  ``reduce`` to pick the bin), then a pass that renormalises; split rows as top-k's, on the bins' masses;
* samplers: one Philox uniform per row (``sampling_reference.py`` documents the stream); a whole row's kept mass is
  summed by parts in one order-free pass: its block's 32 warps take a chunk each (``warp_chunk_kept``: striped warp
  ``load``s, a warp tuple ``reduce``), so every load of the row is in flight at once; the chunks' masses meet in
  shared memory at one barrier, and every warp alike scans them (a warp ``exclusive_sum``) and names the chunk where
  the running mass passes ``u`` (warp ``reduce``s: ``warp_crossing``), with no further block barrier; the
  block walks that chunk alone in tiles, one barrier a tile (``sample_kept``: each warp scans its items, the warps'
  masses meet in shared memory, every warp names the crossing warp alike, and that warp finds the first index past
  ``u`` with a warp ``reduce``). In launches of
  two waves or more (``walks_whole_rows``) plain sampling walks each row that way from its start, up to the sample,
  with no chunk pass: the rows' reads then set the time, and a row is read only up to its sample. Small batches of
  long rows (``select_plan``) split each row over the blocks of one launch: the slices' masses meet across a grid
  barrier and the crossing slice's block walks it (``sample_slices``; min-p meets the slices' largest probabilities
  first). The joint top-k/top-p sampler's rounds each take one pass by warp chunks (``warp_chunk_above_two``): the
  masses and counts above the round's two pivots decide it, and the chunks' masses above the new lower bound are the
  next round's parts.

The semantics and the NumPy oracles are in ``sampling_reference.py``; ``llm_sampling.py`` runs and checks them.
"""
from __future__ import annotations

import functools
import math

import numpy as np
from numba_cuda_mlir import cuda  # noqa: I001  (the compiler first, then cuda.coop)
import cuda.coop.numba_mlir as numba_coop  # noqa: F401  (registers the backend)
from cuda import coop
from sampling_plan import (  # noqa: F401  (the tiling and the launch plan: pure Python, shared with sampling_cute.py)
    BINS, BINS_PER_LANE, CANDIDATES, CLUSTER, HELD, HELD_GROUP, HELD_TILE, NARROW, NARROW_TILE, PART_SLOTS,
    PARTS_PER_LANE, SLICE_BLOCKS, THREADS, TILE, VEC, WARP_TILE, WARPS, WHOLE_ROW_BLOCKS, WIDE, WIDE_TILE,
    cluster_softmax_plan, select_plan, slice_plan, softmax_plan, uses_cluster_softmax,
)
from sfu_numba import exp2_approx  # the SFU's 2**x (inline PTX), shared with the selective scan

FIXED_ONE = np.float32(2.0**40)  # top-p masses in fixed point: 2^40 units per unit of probability
NEG_INF = np.float32(-np.inf)
POS_INF = np.float32(np.inf)
NAN = np.float32(np.nan)
NEG_INF_BITS = 0xFF800000
LOG2E = np.float32(1.4426950408889634)  # exp(d) = exp2(d * LOG2E): the exponentials of a row held in registers
NO_INDEX = np.int32(2**31 - 1)
M32 = np.uint64(0xFFFFFFFF)

# __threadfence(), which numba-cuda-mlir 0.6 types but does not lower: a one-line CUDA C++ device function, linked
# into the kernels that use it (the grid barrier of the sliced top-k and top-p launches)
threadfence = cuda.declare_device(
    "sampling_threadfence", "int32()", abi="c",
    link=[cuda.CUSource('extern "C" __device__ int sampling_threadfence() { __threadfence(); return 0; }')])


# ---------------------------------------------------------------------------------------------- Philox (curand's)
@cuda.jit(device=True, inline="always")
def philox_uniform(seed, offset, row):
    """The row's uniform in (0, 1]: curand_init(seed, row, offset) then curand_uniform (sampling_reference.py)."""
    k0 = np.uint64(seed) & M32
    k1 = (np.uint64(seed) >> np.uint64(32)) & M32
    block = np.uint64(offset) >> np.uint64(2)
    c0 = block & M32
    c1 = block >> np.uint64(32)
    c2 = np.uint64(row) & M32
    c3 = np.uint64(0)
    for r in range(10):
        if r > 0:
            k0 = (k0 + np.uint64(0x9E3779B9)) & M32
            k1 = (k1 + np.uint64(0xBB67AE85)) & M32
        p0 = np.uint64(0xD2511F53) * c0
        p1 = np.uint64(0xCD9E8D57) * c2
        n0 = (p1 >> np.uint64(32)) ^ c1 ^ k0
        n2 = (p0 >> np.uint64(32)) ^ c3 ^ k1
        c0, c1, c2, c3 = n0, p1 & M32, n2, p0 & M32
    word = np.uint64(offset) & np.uint64(3)
    x = c0
    if word == 1:
        x = c1
    if word == 2:
        x = c2
    if word == 3:
        x = c3
    return np.float32(x) * np.float32(2.0**-32) + np.float32(2.0**-33)


# ---------------------------------------------------------------------------------------------- operators
def online_softmax_merge(a, b):
    """Two (max, sum of exp(x - max)) pairs as one; -inf maxima carry no mass. The block reduction applies it ten
    times one after the other (the latency of a batch-1 row), so its exponentials are the SFU's (``exp2_approx``)."""
    m = max(a[0], b[0])
    sa = a[1] * exp2_approx((a[0] - m) * LOG2E) if a[0] != NEG_INF else np.float32(0)
    sb = b[1] * exp2_approx((b[0] - m) * LOG2E) if b[0] != NEG_INF else np.float32(0)
    return m, sa + sb


def max_max(a, b):
    return max(a[0], b[0]), max(a[1], b[1])


def max_max_max(a, b):
    return max(a[0], b[0]), max(a[1], b[1]), max(a[2], b[2])


def sum_max(a, b):
    return a[0] + b[0], max(a[1], b[1])


def min_max(a, b):
    return min(a[0], b[0]), max(a[1], b[1])


# ---------------------------------------------------------------------------------------------- helpers
@cuda.jit(device=True, inline="always")
def ordered_key(bits):
    """A float32's bits (a uint32 view of the array: numba-cuda-mlir 0.6 cannot lower ``x.view(np.uint32)`` on a
    scalar), mapped so that unsigned order is the floats' order."""
    return np.uint32(bits ^ np.uint32(0xFFFFFFFF) if bits >> np.uint32(31) else bits | np.uint32(0x80000000))


@cuda.jit(device=True, inline="always")
def load_wide(block, source, items, start, end, fill):
    """source[start:end] (0 < end - start; at most WIDE_TILE) into ``items``, striped; ``fill`` past ``end``. A whole
    tile is loaded without bounds, so the compiler issues every load before the first item is used (with bounds it
    spread them between the uses, one or two at a time). A partial tile's valid items (0 < end - start < WIDE_TILE,
    a power of two) are masked with WIDE_TILE - 1, an unchanged value whose range the compiler sees, so the load's
    run-time range check folds away (a max/min clamp did not: the compiler dropped the min first). In the loops over
    tiles that call this, the check's trap branch was a second exit of the loop, after which ptxas no longer knew
    the warps reconverged: a divergence test and a slow path at every later warp shuffle (BRA.DIV,
    WARPSYNC.COLLECTIVE; 544 of top_k_top_p's instructions)."""
    if end - start >= WIDE_TILE:
        coop.load(block, source, items, algorithm="striped", offset=start)
    else:
        coop.load(block, source, items, algorithm="striped", offset=start,
                  valid_items=(end - start) & np.int64(WIDE_TILE - 1), oob_default=fill)


@cuda.jit(device=True, inline="always")
def items_left(block, start, end):
    """How far past this thread's first striped item of the tile at ``start`` the tile's valid items reach: item i
    (at start + i * THREADS + rank) is before ``end`` when i * THREADS < items_left. An int32, so each test is one
    32-bit compare against a constant (numba's int64 index arithmetic made it four instructions)."""
    return np.int32(min(end - start, WIDE_TILE) - block.rank())


@cuda.jit(device=True, inline="always")
def store_wide(block, destination, items, start, end):
    """``items`` to destination[start:end] (at most WIDE_TILE), striped: ``load_wide``'s store."""
    if end - start >= WIDE_TILE:
        coop.store(block, destination, items, algorithm="striped", offset=start)
    else:
        coop.store(block, destination, items, algorithm="striped", offset=start, valid_items=end - start)


@cuda.jit(device=True, inline="always")
def at_or_above(bits, pivot):
    """``x >= pivot`` as floats compare, on their bits and the pivot's ordered key: -0.0 equals +0.0, NaN fails
    (k < 0 or k >= vocab, pivot 0: every value stays, NaN included, as a copy)."""
    if pivot == 0:
        return True
    if bits & np.uint32(0x7FFFFFFF) > np.uint32(0x7F800000):
        return False
    if bits & np.uint32(0x7FFFFFFF) == 0:
        return ordered_key(np.uint32(0)) >= pivot or ordered_key(np.uint32(0x80000000)) >= pivot
    return ordered_key(bits) >= pivot


@cuda.jit(device=True, inline="always")
def digit_histogram(block, bits, begin, end, shift, high, prefix):
    """This block's counts of one 8-bit digit (at ``shift``) of the ordered keys in bits[begin:end] whose digits
    under ``high`` equal ``prefix``: thread t < BINS holds bin t (the others 0)."""
    count = np.int32(0)
    start = begin
    while start < end:
        words = coop.ThreadData(WIDE, np.uint32)
        load_wide(block, bits, words, start, end, np.uint32(0))
        room = items_left(block, start, end)
        digits = coop.ThreadData(WIDE, np.uint32)
        for i in range(WIDE):
            key = ordered_key(words[i])
            inside = i * THREADS < room
            digit = np.uint32((key >> shift) & np.uint32(0xFF))
            digits[i] = digit if inside and np.uint32(key & high) == prefix else np.uint32(BINS)
        counts = coop.histogram(block, digits, bins=BINS + 1)  # bin 256 collects the rest
        count += counts[0]
        start += WIDE_TILE
    return count if block.rank() < BINS else np.int32(0)


@cuda.jit(device=True, inline="always")
def choose_digit(block, mine, remaining):
    """Thread t < BINS holds bin t's count: (the bin where the count from the top reaches ``remaining``, how many
    are still to find inside it, how many the bin holds), in every thread. The bins go through shared memory to the
    first warp, whose lanes take BINS_PER_LANE neighbouring bins each: a warp ``inclusive_sum`` (reverse) of the
    lanes' totals says how many lie above each lane's bins, each lane walks its own bins down, and a warp tuple
    ``reduce`` names the one that crosses; it comes back to the block through shared memory (on an H100 a block
    scan and reduce over the 1024 threads took 2,560 cycles a digit)."""
    bins = cuda.shared.array(BINS, np.int32)
    choice = cuda.shared.array(3, np.int32)
    if block.rank() < BINS:
        bins[block.rank()] = mine
    cuda.syncthreads()
    if cuda.threadIdx.x < 32:  # the first warp, whole
        first = np.int32(cuda.threadIdx.x * BINS_PER_LANE)  # (numba widens int32 arithmetic to int64: cast back)
        total = np.int32(0)
        for i in range(BINS_PER_LANE):
            total = np.int32(total + bins[first + i])
        above = coop.inclusive_sum(coop.this_warp(), total, reverse=True)
        running = np.int32(above - total)  # in the later lanes' bins
        at_bin, left, in_bin = np.int32(-1), np.int32(-1), np.int32(-1)
        for j in range(BINS_PER_LANE):
            at = np.int32(first + (BINS_PER_LANE - 1 - j))
            count = bins[at]
            if running < remaining and running + count >= remaining:
                at_bin, left, in_bin = at, np.int32(remaining - running), count
            running = np.int32(running + count)
        at_bin, left, in_bin = coop.reduce(coop.this_warp(), (at_bin, left, in_bin), binary_op=max_max_max)
        if cuda.threadIdx.x == 0:
            choice[0], choice[1], choice[2] = at_bin, left, in_bin
    cuda.syncthreads()
    chosen = (choice[0], choice[1], choice[2])
    cuda.syncthreads()  # every thread has read the choice before the next digit's is written
    return chosen


@cuda.jit(device=True, inline="always")
def append_candidates(block, bits, begin, end, high, prefix, keys, with_mass):
    """One pass over bits[begin:end] once a radix select's digits under ``high`` are known (``prefix``) and few
    enough values share them: the ordered keys that do go to ``keys`` (a shared buffer of CANDIDATES; a tile's
    places from an ``exclusive_sum`` of each thread's count, so no atomics), and with ``with_mass`` the values
    above them are summed (all are kept). (candidates found; the block's sum of the values above, or 0)."""
    found = np.int32(0)
    above = np.float32(0)
    start = begin
    while start < end:
        words = coop.ThreadData(WIDE, np.uint32)
        load_wide(block, bits, words, start, end, np.uint32(0))
        room = items_left(block, start, end)
        held = np.uint32(0)  # bit i: item i is a candidate (the words themselves are not kept past the scan)
        for i in range(WIDE):
            key = ordered_key(words[i])
            if i * THREADS < room:
                if np.uint32(key & high) == prefix:
                    held |= np.uint32(1) << np.uint32(i)
                elif np.uint32(key & high) > prefix:
                    above += float_of_bits(words[i])
        tile_found = numba_coop.ThreadData(1, np.int32)
        slot = np.uint32(numba_coop.exclusive_sum(block, np.int32(cuda.popc(held)), aggregate_output=tile_found)
                         + found)
        rank = np.uint32(block.rank())
        rest = np.uint32(held)  # (a new name: ``held`` is typed 64-bit by its ``|=``)
        while rest != np.uint32(0):  # the candidates alone, lowest item first (a loop over all WIDE items stayed
            i = np.uint32(cuda.ffs(rest) - 1)  # rolled, its counter 64-bit); uint32 arithmetic, each step cast back
            rest = np.uint32(rest & np.uint32(rest - np.uint32(1)))
            if slot < np.uint32(CANDIDATES):  # candidates are few: read again (an L1 hit) rather than held
                keys[slot] = ordered_key(bits[np.uint64(start + np.uint32(np.uint32(i * np.uint32(THREADS)) + rank))])
            slot = np.uint32(slot + np.uint32(1))
        found += tile_found[0]
        start += WIDE_TILE
    cuda.syncthreads()  # the buffer is read by other threads next
    return found, coop.sum(block, above) if with_mass else np.float32(0)


@cuda.jit(device=True, inline="always")
def held_digit_counts(block, keys, count, shift, high, prefix):
    """Thread t < BINS: how many of the ``count`` held keys whose digits under ``high`` equal ``prefix`` have digit
    t at ``shift`` (shared atomics, here where the bins are allocated: numba-cuda-mlir 0.6 addresses a shared array
    passed into a device function as global memory in atomics)."""
    bins = cuda.shared.array(BINS, np.int32)
    if block.rank() < BINS:
        bins[block.rank()] = np.int32(0)
    cuda.syncthreads()
    j = np.uint32(block.rank())  # uint32: no test for a negative index, 32-bit steps
    while j < np.uint32(count):
        key = keys[j]
        if key & high == prefix:
            cuda.atomic.add(bins, np.uint32((key >> shift) & np.uint32(0xFF)), np.int32(1))
        j = np.uint32(j + np.uint32(THREADS))
    cuda.syncthreads()
    mine = np.int32(bins[block.rank()]) if block.rank() < BINS else np.int32(0)
    cuda.syncthreads()  # every bin read before the next call clears them
    return mine


@cuda.jit(device=True, inline="always")
def held_mass(block, keys, count, pivot_key):
    """This thread's sum of the held values at or above the pivot key."""
    mass = np.float32(0)
    j = np.uint32(block.rank())  # as held_digit_counts
    while j < np.uint32(count):
        key = keys[j]
        if key >= pivot_key:
            mass += float_of_key(key)
        j = np.uint32(j + np.uint32(THREADS))
    return mass


@cuda.jit(device=True, inline="always")
def slice_of_block(vocab, slice_length):
    """(slices per row, row, slice, first item, end) of this block in a sliced launch (block b: row b // slices,
    slice b % slices; items as offsets into the flattened matrix)."""
    # uint32 divisions (vocab + slice_length < 2**32): numba-cuda-mlir divides int64s through a called routine
    length = np.uint32(slice_length)
    count = np.uint32(np.uint32(np.uint32(vocab) + np.uint32(length - np.uint32(1))) // length)
    block = np.uint32(cuda.blockIdx.x)
    row32 = np.uint32(block // count)
    slices = np.int64(count)
    row = np.int64(row32)
    part = np.int64(np.uint32(block - np.uint32(row32 * count)))
    return slices, row, part, row * vocab + part * slice_length, row * vocab + min(vocab, (part + 1) * slice_length)


@cuda.jit(device=True, inline="always")
def chunk_length(vocab):
    """Items of each warp's chunk of a whole row (``warp_chunk_kept``): the row over WARPS chunks, whole warp tiles
    (so a warp's loads start at or past its own tile origin, which a warp ``load`` adds to ``offset``; and a multiple
    of 4: the walk's 16-byte loads stay aligned where the row is)."""
    return np.int64((vocab + WARPS * WARP_TILE - 1) // (WARPS * WARP_TILE) * WARP_TILE)


@cuda.jit(device=True, inline="always")
def float_of_bits(raw):
    """The float32 whose bits are ``raw``: a one-item local array viewed as float32 (numba-cuda-mlir 0.6 has no
    scalar bitcast; the array lives in a register, no local memory)."""
    slot = cuda.local.array(1, np.uint32)
    slot[0] = raw
    return slot.view(np.float32)[0]


@cuda.jit(device=True, inline="always")
def float_of_key(key):
    """The float32 whose ordered key is ``key`` (``ordered_key`` inverted)."""
    return float_of_bits(key & np.uint32(0x7FFFFFFF) if key >> np.uint32(31) else key ^ np.uint32(0xFFFFFFFF))


# ---------------------------------------------------------------------------------------------- kernels
@cuda.jit(launch_bounds=THREADS)
def softmax_kernel(logits, out, vocab, inv_temperature):
    """One block per row: a row of at most HELD_TILE items is read once and held in registers (``held_max_sum``,
    ``write_held``); a longer one takes the (max, sum) pass, then the pass that writes."""
    row = np.int64(cuda.blockIdx.x)
    block = coop.this_block()
    begin = row * vocab
    if vocab <= HELD_TILE:
        held = coop.ThreadData(HELD, np.float32)
        row_max, row_sum, thread_max = held_max_sum(block, logits, held, begin, begin + vocab, inv_temperature)
        write_held(block, out, held, begin, begin + vocab, row_max, row_sum, thread_max)
    else:
        row_max, row_sum = online_max_sum(block, logits, begin, begin + vocab, inv_temperature)
        write_softmax(block, logits, out, begin, begin + vocab, inv_temperature, row_max, row_sum)


@cuda.jit(device=True, inline="always")
def held_max_sum(block, logits, held, begin, end, inv_temperature):
    """Loads logits[begin:end] (at most HELD_TILE items; the rest of ``held`` -inf) scaled by inv_temperature, and
    returns their (max, sum of exp(x - max)) in every thread and the thread's own maximum; ``held`` is left holding
    each item's exp(x - the thread's maximum), so that ``write_held`` scales them by one exponential a thread
    instead of one an item. All the loads are in flight at once, and each thread takes its maximum before its
    exponentials (one exp per item, no rescaling). The exponentials are the SFU's (``exp2_approx``: a multiply-add and
    one MUFU, where libdevice's exp takes nine instructions): at small batches a row's arithmetic is one SM's, and its
    exponentials (a quarter-rate unit) bound the time. Groups of HELD_GROUP items that lie wholly past ``end`` (the
    same for every thread: striped items) are skipped, so a short slice costs its own items' arithmetic."""
    coop.load(block, logits, held, algorithm="striped", offset=begin, valid_items=end - begin, oob_default=NEG_INF)
    n = end - begin
    m = NEG_INF
    for g in range(HELD // HELD_GROUP):
        if g * HELD_GROUP * THREADS < n:
            for j in range(HELD_GROUP):
                held[g * HELD_GROUP + j] = held[g * HELD_GROUP + j] * inv_temperature
                m = max(m, held[g * HELD_GROUP + j])
    m_log2 = m * LOG2E if m != NEG_INF else np.float32(0)  # a thread of -inf items alone: exp(-inf - 0) = 0, no mass
    s = np.float32(0)
    for g in range(HELD // HELD_GROUP):
        if g * HELD_GROUP * THREADS < n:
            for j in range(HELD_GROUP):
                held[g * HELD_GROUP + j] = exp2_approx(held[g * HELD_GROUP + j] * LOG2E - m_log2)
                s += held[g * HELD_GROUP + j]
    row_max, row_sum = coop.reduce(block, (m, s), binary_op=online_softmax_merge)
    return row_max, row_sum, m


@cuda.jit(device=True, inline="always")
def write_held(block, out, held, begin, end, row_max, row_sum, thread_max):
    """Writes the probabilities of the items ``held_max_sum`` left in ``held`` (exp(x - thread_max); its groups past
    ``end`` skipped; the store writes only the items before it): each times exp(thread_max - row_max) / row_sum."""
    n = end - begin
    factor = math.exp2(thread_max * LOG2E - row_max * LOG2E) / row_sum  # 0 for a thread of -inf items
    for g in range(HELD // HELD_GROUP):
        if g * HELD_GROUP * THREADS < n:
            for j in range(HELD_GROUP):
                held[g * HELD_GROUP + j] = held[g * HELD_GROUP + j] * factor
    coop.store(block, out, held, algorithm="striped", offset=begin, valid_items=n)


@cuda.jit(device=True, inline="always")
def online_max_sum(block, logits, begin, end, inv_temperature):
    """(max, sum of exp(x - max)) of logits[begin:end] (x scaled by inv_temperature), in every thread: per tile, the
    thread's maximum first (the running sum rescaled once when it grows), then the tile's exp2's."""
    m = NEG_INF
    s = np.float32(0)
    start = begin
    while start < end:
        items = coop.ThreadData(WIDE, np.float32)
        load_wide(block, logits, items, start, end, NEG_INF)
        tile_max = NEG_INF
        for i in range(WIDE):
            items[i] = items[i] * inv_temperature
            tile_max = max(tile_max, items[i])
        if tile_max > m:
            s = s * math.exp2((m - tile_max) * LOG2E)  # 0 while m is -inf
            m = tile_max
        if m != NEG_INF:
            m_log2 = m * LOG2E
            for i in range(WIDE):
                s += exp2_approx(items[i] * LOG2E - m_log2)
        start += WIDE_TILE
    return coop.reduce(block, (m, s), binary_op=online_softmax_merge)


@cuda.jit(device=True, inline="always")
def write_softmax(block, logits, out, begin, end, inv_temperature, row_max, row_sum):
    scale = np.float32(1) / row_sum
    max_log2 = row_max * LOG2E
    start = begin
    while start < end:
        items = coop.ThreadData(WIDE, np.float32)
        load_wide(block, logits, items, start, end, NEG_INF)
        probs = coop.ThreadData(WIDE, np.float32)
        for i in range(WIDE):
            probs[i] = exp2_approx(items[i] * inv_temperature * LOG2E - max_log2) * scale
        store_wide(block, out, probs, start, end)
        start += WIDE_TILE


@cuda.jit(launch_bounds=THREADS)
def softmax_slices_kernel(logits, partials, out, arrive, vocab, slice_length, inv_temperature):
    """Small batches: each row split into slices, one block each (block b: row b // slices, slice b % slices), so
    that the whole GPU works on a few rows, in one launch: each block writes its slice's (max, sum) pair to
    partials[2 b], the pairs meet across a grid barrier, every block of the row merges them (one tuple ``reduce``;
    thread t holds slice t's pair, a row has at most THREADS slices) and writes its slice. Slices of at most
    HELD_TILE items stay in registers across the barrier (one read); longer ones are read again to write."""
    slices, row, part, begin, end = slice_of_block(vocab, slice_length)
    block = coop.this_block()
    held = coop.ThreadData(HELD, np.float32)
    thread_max = NEG_INF
    if slice_length <= HELD_TILE:
        m, s, thread_max = held_max_sum(block, logits, held, begin, end, inv_temperature)
    else:
        m, s = online_max_sum(block, logits, begin, end, inv_temperature)
    if block.rank() == 0:
        partials[2 * np.int64(cuda.blockIdx.x)] = m
        partials[2 * np.int64(cuda.blockIdx.x) + 1] = s
    grid_barrier(arrive)
    pair_max = NEG_INF
    pair_sum = np.float32(0)
    if block.rank() < slices:
        pair_max = cuda.ldcg(partials, 2 * (row * slices + block.rank()))
        pair_sum = cuda.ldcg(partials, 2 * (row * slices + block.rank()) + 1)
    row_max, row_sum = coop.reduce(block, (pair_max, pair_sum), binary_op=online_softmax_merge)
    if slice_length <= HELD_TILE:
        write_held(block, out, held, begin, end, row_max, row_sum, thread_max)
    else:
        write_softmax(block, logits, out, begin, end, inv_temperature, row_max, row_sum)


@functools.lru_cache(maxsize=None)
def softmax_cluster_kernel(threads: int, held: int):
    """The softmax of rows split over the CLUSTER blocks of a cluster launch (``cluster_softmax_plan``: block b of
    the grid holds slice b % CLUSTER of row b // CLUSTER, ``held`` items a thread, in registers): each block's
    (max, sum of exp) pairs meet the cluster's others in one cluster ``reduce`` through distributed shared memory,
    and each block writes its slice from its registers. One read, one write, no grid barrier; blocks of ``threads``
    threads, a kernel per (threads, held). Every held item is worked, those past the slice's end as -inf (no mass):
    the plan's blocks fit their slices closely, and a test of the end per group of items would keep the loops
    rolled and the items in local memory."""

    @cuda.jit(launch_bounds=threads)
    def kernel(logits, out, vocab, slice_length, inv_temperature):
        block = coop.this_block()
        part = np.int64(block.rank(level="cluster"))
        row = np.int64(np.uint32(cuda.blockIdx.x) // np.uint32(CLUSTER))
        begin = row * vocab + part * slice_length
        n = max(np.int64(0), min(slice_length, vocab - part * slice_length))  # the last slices may be short
        items = coop.ThreadData(held, np.float32)
        coop.load(block, logits, items, algorithm="striped", offset=begin, valid_items=n, oob_default=NEG_INF)
        m = NEG_INF
        for i in range(held):
            items[i] = items[i] * inv_temperature
            m = max(m, items[i])
        m_log2 = m * LOG2E if m != NEG_INF else np.float32(0)  # a thread of -inf items alone: no mass
        s = np.float32(0)
        for i in range(held):
            items[i] = exp2_approx(items[i] * LOG2E - m_log2)
            s += items[i]
        row_max, row_sum = numba_coop.reduce(coop.this_cluster(), (m, s), binary_op=online_softmax_merge)
        factor = math.exp2(m * LOG2E - row_max * LOG2E) / row_sum  # 0 for a thread of -inf items
        for i in range(held):
            items[i] = items[i] * factor
        coop.store(block, out, items, algorithm="striped", offset=begin, valid_items=n)

    return kernel


@cuda.jit(device=True, inline="always")
def pivot_threshold(pivot):
    """The float that ``at_or_above(bits, pivot)`` compares against as floats do (x >= it; pivot != 0): the value
    whose ordered key is ``pivot`` (-0.0 and +0.0 equal, NaN fails, as ``at_or_above``), -inf for keys at or
    below -inf's (a negative NaN's key: every number stays), NaN above +inf's (0xFFFFFFFF, a positive NaN's key:
    none stays)."""
    return NEG_INF if pivot <= np.uint32(0x007FFFFF) else float_of_key(pivot)


@cuda.jit(device=True, inline="always")
def mask(block, bits, out_bits, begin, end, pivot):
    """bits[begin:end] at or above the pivot key to out_bits unchanged, -inf's bits elsewhere: ``at_or_above`` as
    one float compare an item (``pivot_threshold``; pivot 0 keeps every item, NaN included), on float32 views of
    the bits (a float select moves the bits unchanged, NaN payloads included)."""
    values = bits.view(np.float32)
    out = out_bits.view(np.float32)
    keep_all = pivot == 0
    threshold = pivot_threshold(pivot)
    start = begin
    while start < end:
        items = coop.ThreadData(WIDE, np.float32)
        load_wide(block, values, items, start, end, np.float32(0))
        masked = coop.ThreadData(WIDE, np.float32)
        for i in range(WIDE):
            masked[i] = items[i] if (items[i] >= threshold) | keep_all else NEG_INF
        store_wide(block, out, masked, start, end)
        start += WIDE_TILE


@cuda.jit(device=True, inline="always")
def kept_mass(block, probs, base, vocab, pivot):
    """The sum of the row's probabilities >= pivot, in every thread."""
    kept = np.float32(0)
    start = np.int64(0)
    while start < vocab:
        items = coop.ThreadData(WIDE, np.float32)
        load_wide(block, probs, items, base + start, base + vocab, np.float32(0))
        for i in range(WIDE):
            if items[i] >= pivot:
                kept += items[i]
        start += WIDE_TILE
    return coop.sum(block, kept)


@cuda.jit(device=True, inline="always")
def write_scaled(block, probs, out, begin, end, pivot, scale):
    """probs[begin:end] >= pivot times scale to out, the rest 0."""
    start = begin
    while start < end:
        items = coop.ThreadData(WIDE, np.float32)
        load_wide(block, probs, items, start, end, np.float32(0))
        renormed = coop.ThreadData(WIDE, np.float32)
        for i in range(WIDE):
            renormed[i] = items[i] * scale if items[i] >= pivot else np.float32(0)
        store_wide(block, out, renormed, start, end)
        start += WIDE_TILE


@cuda.jit(device=True, inline="always")
def grid_barrier(arrive):
    """Every block of the launch waits here for all the others, and what any block wrote before it is visible
    after it. arrive[0] counts the blocks in, arrive[1] is the barrier's generation: the last block in resets the
    count and moves the generation on, so the two words (zeros when allocated) serve launch after launch. The blocks
    must all be resident at once: a sliced launch has at most one block per SM (``select_plan``)."""
    threadfence()
    cuda.syncthreads()
    if cuda.threadIdx.x == 0:
        generation = cuda.atomic.add(arrive, 1, np.uint32(0))
        if cuda.atomic.add(arrive, 0, np.uint32(1)) == np.uint32(cuda.gridDim.x - 1):
            arrive[0] = np.uint32(0)
            threadfence()
            cuda.atomic.add(arrive, 1, np.uint32(1))
        else:
            while cuda.atomic.add(arrive, 1, np.uint32(0)) == generation:
                pass
        threadfence()
    cuda.syncthreads()


@cuda.jit(device=True, inline="always")
def across_slices(block, mine, zero, counts, arrive, row, slices, part, digit):
    """Thread t < BINS holds bin t of this slice's bins of one digit (counts, or top-p's masses; ``zero`` of their
    type): the row's bin, summed over its slices through ``counts`` (``((row * 4 + digit) * slices + slice) * BINS
    + bin``) and a grid barrier; the reads go past L1, as other SMs wrote them."""
    if block.rank() < BINS:
        counts[((row * 4 + digit) * slices + part) * BINS + block.rank()] = mine
    grid_barrier(arrive)
    total = zero
    if block.rank() < BINS:
        for other in range(slices):
            total += cuda.ldcg(counts, ((row * 4 + digit) * slices + other) * BINS + block.rank())
    return total


@cuda.jit(device=True, inline="always")
def select_pivot(block, bits, counts, arrive, row, slices, part, begin, end, k, with_mass):
    """The ordered key of the k-th largest value of a row (1 <= k <= vocab; k = 0: no select, but every barrier
    reached), this block holding bits[begin:end] of it (its slice ``part`` of ``slices``; one slice: the row). A
    radix select on 8-bit digits from the most significant: each digit's bins counted over the row (its slices'
    counts meeting across a grid barrier, ``across_slices``) until the chosen bin holds at most CANDIDATES values;
    then one pass keeps those candidates in shared memory (``append_candidates``) and the remaining digits are
    counted from them alone. A row of ties counts all four digits over the row. (the key; with ``with_mass`` this
    block's mass at or above it, if ``known``: its candidates at or above the key and every value above them)."""
    keys = cuda.shared.array(CANDIDATES, np.uint32)
    prefix = np.uint32(0)
    high = np.uint32(0)
    remaining = np.int32(k)
    in_bin = np.int32(2**31 - 1)  # values in the chosen bin: unknown before the first digit
    count = np.int32(0)
    above = np.float32(0)
    held = False
    for digit in range(4):
        shift = np.uint32(24 - 8 * digit)
        if k > 0 and not held and in_bin <= CANDIDATES:
            count, above = append_candidates(block, bits, begin, end, high, prefix, keys, with_mass)
            held = True
        mine = np.int32(0)
        if k > 0:
            if held:
                mine = held_digit_counts(block, keys, count, shift, high, prefix)
            else:
                mine = digit_histogram(block, bits, begin, end, shift, high, prefix)
        if slices > 1:
            mine = across_slices(block, mine, np.int32(0), counts, arrive, row, slices, part, digit)
        if k > 0:
            chosen, left, in_bin = choose_digit(block, mine, np.int32(remaining))
            prefix = np.uint32(prefix | (np.uint32(chosen) << shift))  # (numba widens uint32 arithmetic: the
            high = np.uint32(high | (np.uint32(0xFF) << shift))  # casts keep the key tests 32-bit)
            remaining = left
    kept = np.float32(0)
    if with_mass and k > 0 and held:
        kept = above + coop.sum(block, held_mass(block, keys, count, prefix))
    return prefix, kept, held


@cuda.jit(launch_bounds=THREADS)
def top_k_mask_logits_kernel(bits, out_bits, counts, arrive, vocab, slice_length, top_k):
    """On the uint32 views of the logits and of the output: the kept logits' bits move unchanged, -inf elsewhere.
    One block per row (slice_length >= vocab; ``counts`` and ``arrive`` unused), or per row slice in one launch
    whose blocks meet at grid barriers (``select_pivot``)."""
    bits = bits.ravel()  # numba-cuda-mlir's arrays have a run-time stride (a 64-bit multiply per index); ravel's
    out_bits = out_bits.ravel()  # view has stride 1
    slices, row, part, begin, end = slice_of_block(vocab, slice_length)
    block = coop.this_block()
    k = top_k[row]
    key, _, _ = select_pivot(block, bits, counts, arrive, row, slices, part, begin, end,
                             k if 0 < k < vocab else np.int32(0), False)
    pivot = key
    if k == 0:
        pivot = np.uint32(0xFFFFFFFF)  # above every ordered key of a number: nothing stays
    elif k < 0 or k >= vocab:
        pivot = np.uint32(0)  # every logit stays
    mask(block, bits, out_bits, begin, end, pivot)


@cuda.jit(launch_bounds=THREADS)
def top_k_renorm_probs_kernel(probs, bits, out, counts, partials, arrive, vocab, slice_length, top_k):
    """``bits`` is the uint32 view of ``probs``: the pivot is found on the bits (as ``top_k_mask_logits_kernel``),
    then compared as a float; over row slices, each slice's kept mass meets in partials[block] across one more grid
    barrier."""
    probs = probs.ravel()  # stride-1 views (top_k_mask_logits_kernel)
    bits = bits.ravel()
    out = out.ravel()
    slices, row, part, begin, end = slice_of_block(vocab, slice_length)
    block = coop.this_block()
    k = top_k[row]
    key, kept, known = select_pivot(block, bits, counts, arrive, row, slices, part, begin, end,
                                    k if 0 < k < vocab else np.int32(0), True)
    pivot = float_of_key(key)
    if k == 0:
        pivot = NAN  # nothing compares >= NaN: all zeros
    elif k < 0 or k >= vocab:
        pivot = NEG_INF  # the whole row, renormalised
    if not (known and 0 < k < vocab):
        kept = kept_mass(block, probs, begin, end - begin, pivot)
    renormalise_slice(block, probs, out, partials, arrive, row, slices, begin, end, pivot, kept)


@cuda.jit(device=True, inline="always")
def renormalise_slice(block, probs, out, partials, arrive, row, slices, begin, end, pivot, kept):
    """probs[begin:end] >= pivot times 1 / max(the row's kept mass, 1e-8) to out, the rest 0 (FlashInfer's renorm):
    ``kept`` is this block's; over row slices, the slices' meet in partials[block] across a grid barrier."""
    if slices > 1:
        if block.rank() == 0:
            partials[cuda.blockIdx.x] = kept
        grid_barrier(arrive)
        mine = np.float32(0)
        if block.rank() < slices:
            mine = cuda.ldcg(partials, row * slices + block.rank())
        kept = coop.sum(block, mine)
    write_scaled(block, probs, out, begin, end, pivot, np.float32(1) / max(kept, np.float32(1e-8)))


@cuda.jit(device=True, inline="always")
def fixed_mass(bits):
    """A non-negative float32's value in 2^-40 units, truncated, from its bits alone (integer arithmetic: no second
    load of the values): (1.mantissa) x 2^(exponent - 127) x 2^40; subnormals count 0."""
    exponent = np.int64(bits >> np.uint32(23)) & np.int64(0xFF)
    significand = np.int64(bits & np.uint32(0x7FFFFF)) | np.int64(0x800000)
    shift = exponent - np.int64(110)  # 127 + 23 - 40
    if exponent == 0 or shift < -24:
        return np.int64(0)
    if shift >= 0:
        return significand << shift
    return significand >> -shift


@cuda.jit(device=True, inline="always")
def mass_histogram(block, bits, begin, end, shift, high, prefix):
    """This block's 256 bins of one 8-bit digit (at ``shift``) of the bits of bits[begin:end] (non-negative values)
    whose digits under ``high`` equal ``prefix``, each bin the candidates' mass in 2^-40 fixed point: integer sums,
    so the same bins on every run whatever order the atomics land in. cuda.coop has no weighted histogram, so the
    bins are shared arrays of our own, in this function: numba-cuda-mlir 0.6 addresses a shared array passed to an
    inlined device function as global memory. Thread t < BINS returns bin t (the others 0)."""
    low_words = cuda.shared.array(BINS, np.uint32)  # each bin's mass as two 32-bit words: shared memory has no
    high_words = cuda.shared.array(BINS, np.uint32)  # native 64-bit atomic add (it would be a compare-and-swap loop)
    if block.rank() < BINS:
        low_words[block.rank()] = np.uint32(0)
        high_words[block.rank()] = np.uint32(0)
    cuda.syncthreads()
    start = begin
    while start < end:
        words = coop.ThreadData(NARROW, np.uint32)
        coop.load(block, bits, words, algorithm="striped", offset=start,
                  valid_items=min(end - start, NARROW_TILE), oob_default=np.uint32(0))
        for i in range(NARROW):
            if (words[i] & high) == prefix:
                mass = fixed_mass(words[i])
                if mass > 0:  # a 64-bit add as two 32-bit words: the low word's atomic add returns the old value,
                    b = (words[i] >> shift) & np.uint32(0xFF)  # so exactly the thread that wraps it carries
                    low = np.uint32(mass & np.int64(0xFFFFFFFF))
                    upper = np.uint32(mass >> np.int64(32))
                    old = cuda.atomic.add(low_words, b, low)
                    if np.uint32(old + low) < old:
                        upper += np.uint32(1)
                    if upper != 0:
                        cuda.atomic.add(high_words, b, upper)
        start += NARROW_TILE
    cuda.syncthreads()
    mine = np.int64(0)
    if block.rank() < BINS:
        mine = (np.int64(high_words[block.rank()]) << np.int64(32)) | np.int64(low_words[block.rank()])
    cuda.syncthreads()  # every thread read its bin before a later call clears them
    return mine


@cuda.jit(device=True, inline="always")
def choose_mass_digit(block, mine, remaining):
    """``choose_digit`` on masses (int64): where truncation left less mass than asked for, the lowest bin (0, with 1
    unit still to find)."""
    at_or_above = coop.inclusive_sum(block, mine, reverse=True)
    hit = at_or_above >= remaining and at_or_above - mine < remaining
    chosen, left = coop.reduce(block, (np.int64(block.rank()) if hit else np.int64(-1),
                                       remaining - (at_or_above - mine) if hit else np.int64(-1)),
                               binary_op=max_max)
    if chosen < 0:
        chosen = np.int64(0)
        left = np.int64(1)
    return chosen, left


@cuda.jit(launch_bounds=THREADS)
def top_p_renorm_probs_kernel(probs, bits, out, masses, partials, arrive, vocab, slice_length, top_p):
    """``bits`` is the uint32 view of ``probs``. The pivot is the smallest kept probability: the largest value v of
    the row whose mass at and above it reaches top_p times the row's total (0 where top_p >= 1: the whole row). A
    radix select on the bits of the (non-negative) values by mass: four 8-bit digits from the most significant, each
    a ``mass_histogram``, a reverse inclusive_sum over the bins and a tuple reduce that picks the bin; the row's
    total is the first digit's bins summed. One block per row (slice_length >= vocab; ``masses`` and ``arrive``
    unused), or per row slice in one launch: each digit's bins meet across the row's slices in ``masses`` (int64,
    batch x 4 x slices x BINS) at a grid barrier, the slices' kept masses in ``partials`` at one more."""
    probs = probs.ravel()  # stride-1 views (top_k_mask_logits_kernel)
    bits = bits.ravel()
    out = out.ravel()
    slices, row, part, begin, end = slice_of_block(vocab, slice_length)
    block = coop.this_block()
    p = top_p[row]
    active = not p >= 1
    remaining = np.int64(0)  # mass still to find
    prefix = np.uint32(0)
    high = np.uint32(0)  # the digits fixed so far
    for digit in range(4):
        shift = np.uint32(24 - 8 * digit)
        mine = np.int64(0)
        if active:
            mine = mass_histogram(block, bits, begin, end, shift, high, prefix)
        if slices > 1:
            mine = across_slices(block, mine, np.int64(0), masses, arrive, row, slices, part, digit)
        if active:
            if digit == 0:  # every value is a candidate of the first digit
                remaining = max(np.int64(np.float64(p) * np.float64(coop.sum(block, mine))), np.int64(1))
            chosen, left = choose_mass_digit(block, mine, remaining)
            prefix = np.uint32(prefix | (np.uint32(chosen) << shift))  # (numba widens uint32 arithmetic: the
            high = np.uint32(high | (np.uint32(0xFF) << shift))  # casts keep the key tests 32-bit)
            remaining = left
    pivot = float_of_bits(prefix) if active else np.float32(0)
    renormalise_slice(block, probs, out, partials, arrive, row, slices, begin, end, pivot,
                      kept_mass(block, probs, begin, end - begin, pivot))


@cuda.jit(device=True, inline="always")
def sample_kept(block, probs, base, vocab, above, at_least, target, running, wide_loads):
    """FlashInfer's sampling rule over the kept probabilities (``p > above`` and ``p >= at_least``) of
    probs[base:base + vocab], tiles in order from a mass of ``running`` before them: the first kept index whose
    inclusive prefix sum exceeds ``target``, else the last kept index (0 if none). One block barrier a tile: each
    warp scans its 128 items (a warp ``exclusive_sum`` of its threads' masses) and its lane 31 leaves the warp's mass
    in shared memory; after the barrier every warp scans the 32 warp masses alike (a second warp ``exclusive_sum``)
    and names the first warp whose running mass passes the target (a warp ``reduce``), which alone has the answer:
    its first kept index past the target, or its last kept one where rounding left none (one warp tuple ``reduce``);
    the others' minima are int32 (one REDUX each) and the crossing warp's mass before it is a warp ``broadcast``.
    ``wide_loads`` (a compile-time bool): whole tiles as one 16-byte load a thread where the row's alignment allows
    (5-7% on the H100 where rows are walked whole at batch 512; a walk of one chunk gains nothing from the extra
    code). Returns (index from base, the rank of a thread holding it: lane 0 of the crossing warp; 0 when no tile
    crossed, every thread then holding the block's last kept index)."""
    warp_masses = cuda.shared.array((2, WARPS), np.float32)  # by tile parity: no tile's writes meet the last one's
    warp = coop.this_warp()  # reads, so one barrier a tile serves both
    lane = np.uint32(block.rank() % 32)
    my_warp = np.int32(block.rank() // 32)
    found = NO_INDEX
    holder = np.int32(0)
    last = np.int32(-1)
    crossed = False
    length = np.uint32(vocab)  # (a row of fewer than 2**31 items: 32-bit counters and indices)
    mine_at = np.uint32(block.rank() * VEC)
    start = np.uint32(0)
    parity = np.uint32(0)
    while start < length and not crossed:
        items = coop.ThreadData(VEC, np.float32)
        left = np.uint32(length - start)
        if wide_loads and left >= np.uint32(TILE):
            coop.load(block, probs, items, algorithm="vectorize", offset=base + start)
        else:  # (valid items the compiler sees in range: no trap branch)
            coop.load(block, probs, items, offset=base + start, valid_items=left if left < np.uint32(TILE) else TILE,
                      oob_default=np.float32(0))
        kept = coop.ThreadData(VEC, np.float32)
        mine = np.float32(0)
        my_last = np.int32(-1)
        for i in range(VEC):
            kept[i] = items[i] if items[i] > above and items[i] >= at_least else np.float32(0)
            if kept[i] > 0:
                my_last = np.int32(np.uint32(start + mine_at) + np.uint32(i))
            mine += kept[i]
        before = coop.exclusive_sum(warp, mine)  # the warp's mass before this thread's items
        reach = before  # ... and through them, added as the crossing warp adds them below (the same rounding)
        for i in range(VEC):
            reach += kept[i]
        if lane == 31:
            warp_masses[parity, my_warp] = reach
        cuda.syncthreads()
        warp_mass = np.float32(warp_masses[parity, lane])
        tile_mass = numba_coop.ThreadData(1, np.float32)
        warp_before = numba_coop.exclusive_sum(warp, warp_mass, aggregate_output=tile_mass)
        crosses = NO_INDEX
        if warp_mass > 0 and (running + warp_before) + warp_mass > target:
            crosses = np.int32(lane)
        crossing = coop.reduce(warp, crosses, binary_op="min")  # (one REDUX)
        if crossing != NO_INDEX:  # the same in every warp: the same numbers scanned alike
            crossed = True
            at = running + coop.broadcast(warp, warp_before, src_rank=crossing & np.int32(31))
            reach = before
            my_first = NO_INDEX
            for i in range(VEC):
                reach += kept[i]
                if kept[i] > 0 and my_first == NO_INDEX and my_warp == crossing and at + reach > target:
                    my_first = np.int32(np.uint32(start + mine_at) + np.uint32(i))
            first, warp_last = coop.reduce(warp, (my_first, my_last), binary_op=min_max)
            found = first if first != NO_INDEX else warp_last  # (only the crossing warp's are the answer)
            holder = crossing * np.int32(32)
        else:
            running += tile_mass[0]
            last = max(last, my_last)
        start = np.uint32(start + np.uint32(TILE))
        parity = np.uint32(parity ^ np.uint32(1))
    if not crossed:  # rounding (or nothing kept) left no crossing: the last kept index
        found = max(coop.reduce(block, last, binary_op="max"), np.int32(0))
    return found, holder


@cuda.jit(device=True, inline="always")
def slice_kept(block, probs, begin, end, first, at_least):
    """(kept mass, last kept index or -1) of probs[begin:end] (kept: p > 0 and p >= at_least), whose first item is
    the row's index ``first``: one order-free pass (striped, 16 items a thread) and one tuple ``reduce``."""
    mass = np.float32(0)
    last = np.int32(-1)
    start = begin
    while start < end:
        items = coop.ThreadData(WIDE, np.float32)
        load_wide(block, probs, items, start, end, np.float32(0))
        for i in range(WIDE):
            if items[i] > 0 and items[i] >= at_least:
                mass += items[i]
                last = np.int32(first + (start - begin) + i * THREADS + block.rank())
        start += WIDE_TILE
    return coop.reduce(block, (mass, last), binary_op=sum_max)


@cuda.jit(device=True, inline="always")
def warp_chunk(block, begin, vocab):
    """This thread's warp's chunk of the row at ``begin``: (its first index in the row, the lane, the warp's own
    tile origin, which a warp ``load`` adds to ``offset`` itself, the chunk's begin and end as offsets, the chunk's
    length: every warp's, the same in the whole block)."""
    chunk = chunk_length(vocab)
    first = np.int64(block.rank() // 32) * chunk
    return (first, np.int32(block.rank() % 32), np.int64(block.rank() // 32) * WARP_TILE, begin + first,
            begin + min(vocab, first + chunk), chunk)


@cuda.jit(device=True, inline="always")
def warp_tile_items(chunk_begin, chunk_end, step):
    """How many of the warp tile at chunk_begin + step lie before chunk_end: 0 ... WARP_TILE (none for the tiles of
    a warp whose chunk is short or past the row's end)."""
    return max(np.int64(0), min(chunk_end - (chunk_begin + step), np.int64(WARP_TILE)))


@cuda.jit(device=True, inline="always")
def warp_chunk_kept(block, probs, begin, vocab, at_least):
    """The whole row's first pass: warp w sums the kept mass (p > 0 and p >= at_least) and finds the last kept index
    of chunk w (``chunk_length`` items from w x that), its lanes loading striped (coalesced, every load of the row
    independent of the others); (mass, last kept index or -1) in each warp's lane 0, (0, -1) in the other lanes."""
    first, lane, origin, chunk_begin, chunk_end, chunk = warp_chunk(block, begin, vocab)
    warp = coop.this_warp()
    mass = np.float32(0)
    last = np.int32(-1)
    step = np.int64(0)
    while step < chunk:  # every warp the same tiles (a bound the compiler sees is uniform), the last ones empty
        items = coop.ThreadData(NARROW, np.float32)
        coop.load(warp, probs, items, algorithm="striped", offset=chunk_begin + step - origin,
                  valid_items=warp_tile_items(chunk_begin, chunk_end, step), oob_default=np.float32(0))
        for i in range(NARROW):
            if items[i] > 0 and items[i] >= at_least:
                mass += items[i]
                last = np.int32(first + step + i * 32 + lane)
        step += WARP_TILE
    mass, last = coop.reduce(warp, (mass, last), binary_op=sum_max, broadcast=False)
    if lane != 0:
        mass = np.float32(0)
        last = np.int32(-1)
    return mass, last


@cuda.jit(device=True, inline="always")
def warp_crossing(part_masses, part_lasts, parts, u, scaled):
    """Which of a row's ``parts`` parts (slices or warp chunks) holds the sample, found by every warp alike, with no
    block barrier: lane l reads parts l x PARTS_PER_LANE onwards from the shared ``part_masses`` and ``part_lasts``
    (their kept masses and last kept indices, written before a barrier); a warp ``exclusive_sum`` of the lanes' masses
    and a running sum through each lane's parts give each part the mass before it, a warp ``reduce`` (int32 min: one
    REDUX) picks the lowest part whose running mass passes the target (``u``, or ``u`` times the kept mass with
    ``scaled``), a warp ``broadcast`` hands on the mass before it and another ``reduce`` the row's last kept index:
    the same numbers in the same order in every warp of every block. (part or NO_INDEX when rounding left none, the
    mass before it, the row's last kept index, the target)."""
    warp = coop.this_warp()
    lane = np.int32(warp.rank())
    masses = coop.ThreadData(PARTS_PER_LANE, np.float32)
    mine = np.float32(0)
    my_last = np.int32(-1)
    for j in range(PARTS_PER_LANE):
        part_j = np.uint32(lane * PARTS_PER_LANE + j)
        masses[j] = part_masses[part_j] if part_j < np.uint32(parts) else np.float32(0)
        mine += masses[j]
        my_last = max(my_last, part_lasts[part_j] if part_j < np.uint32(parts) else np.int32(-1))
    total = numba_coop.ThreadData(1, np.float32)
    running = numba_coop.exclusive_sum(warp, mine, aggregate_output=total)
    target = u * total[0] if scaled else u
    crosses = NO_INDEX
    before = np.float32(0)
    for j in range(PARTS_PER_LANE):
        if crosses == NO_INDEX and masses[j] > 0 and running + masses[j] > target:
            crosses = np.int32(lane * PARTS_PER_LANE + j)
            before = running
        running += masses[j]
    # int32 minima and maxima across a warp are one REDUX each; the mass before the crossing part comes from the lane
    # holding it (a tuple reduce of the three took 15 dependent shuffles)
    crossing = coop.reduce(warp, crosses, binary_op="min")
    row_last = coop.reduce(warp, my_last, binary_op="max")
    holder = np.int32(np.uint32(crossing) // np.uint32(PARTS_PER_LANE)) & np.int32(31)  # (NO_INDEX: any lane)
    before = coop.broadcast(warp, before, src_rank=holder)
    return crossing, before, row_last, target


@cuda.jit(device=True, inline="always")
def sample_slices(block, probs, partials, lasts, arrive, row, slices, part, begin, end, slice_length, at_least,
                  u, scaled, rows_walkable):
    """``sample_kept`` after a pass that sums the kept mass by parts, then walks only the part holding the sample.
    A row split into slices, one block each in one launch: each slice's kept mass and last kept index meet in
    partials/lasts[block] across a grid barrier, every warp of every block of the row reads them all and finds the
    crossing slice alike (``warp_crossing``) and that slice's block alone walks it. A whole row (``slices`` 1): its
    block's warps take a chunk each (``warp_chunk_kept``), so the row is read at once rather than tile after dependent
    tile; the chunks' masses meet in shared memory at one barrier, every warp finds the crossing chunk alike, and the
    block walks it (one or two tiles); with ``rows_walkable`` (unscaled sampling), in a launch of several waves
    (``walks_whole_rows``), the block walks the row from its start instead, reading it only up to the sample.
    (the sample, the rank of the thread holding it, whether this block writes it: the crossing slice's block, or the
    row's first when rounding left no crossing)."""
    # one warp_crossing and one sample_kept for every shape (each inlined once: the two copies doubled the code)
    whole_rows = rows_walkable and slices == 1 and np.uint32(cuda.gridDim.x) >= np.uint32(WHOLE_ROW_BLOCKS)
    part_masses = cuda.shared.array(PART_SLOTS, np.float32)  # the row's parts, as warp_crossing reads them
    part_lasts = cuda.shared.array(PART_SLOTS, np.int32)
    rank = np.uint32(block.rank())
    parts = np.uint32(WARPS)
    if slices > 1:
        mass, last = slice_kept(block, probs, begin, end, part * slice_length, at_least)
        if block.rank() == 0:
            partials[cuda.blockIdx.x] = mass
            lasts[cuda.blockIdx.x] = last
        grid_barrier(arrive)
        # each slice's numbers read once a block (every warp reading all of them queued 32 times the requests on the
        # same lines), then from shared memory
        parts = np.uint32(slices)
        if rank < parts:
            part_masses[rank] = cuda.ldcg(partials, row * slices + block.rank())
            part_lasts[rank] = cuda.ldcg(lasts, row * slices + block.rank())
    elif not whole_rows:
        mine, my_last = warp_chunk_kept(block, probs, begin, end - begin, at_least)
        if rank % np.uint32(32) == np.uint32(0):
            part_masses[rank // np.uint32(32)] = mine
            part_lasts[rank // np.uint32(32)] = my_last
    crossing = np.int32(0)  # a row walked whole: its one "part", from a mass of 0 to u
    running = np.float32(0)
    row_last = np.int32(-1)
    target = u
    if not whole_rows:
        cuda.syncthreads()  # the parts written above
        crossing, running, row_last, target = warp_crossing(part_masses, part_lasts, parts, u, scaled)
    if slices > 1:  # the crossing slice's block walks its slice
        writes = crossing == part or (crossing == NO_INDEX and part == 0)
        walks = crossing == part
        first = part * slice_length
        walk_begin = begin
        walk_length = end - begin
    else:  # the block walks the crossing chunk (the whole row: chunk 0 of the row's length)
        writes = True
        walks = crossing != NO_INDEX
        chunk = end - begin if whole_rows else chunk_length(end - begin)
        first = np.int64(crossing) * chunk
        walk_begin = begin + first
        walk_length = min(end - begin - first, chunk)
    holder = np.int32(0)
    if walks:
        found, holder = sample_kept(block, probs, walk_begin, walk_length, np.float32(0), at_least, target, running,
                                    True)  # (16-byte tile loads: they pay where rows are walked whole, batch >= 264)
        chosen = np.int32(first + found)
    else:  # (the fallback set here, not before the walk: not held across it)
        chosen = max(row_last, np.int32(0))
    return chosen, holder, writes


@cuda.jit(launch_bounds=THREADS)
def sampling_from_probs_kernel(probs, samples, partials, lasts, arrive, vocab, slice_length, seed, offset):
    """One block per row (slice_length >= vocab; partials, lasts and arrive unused), or per row slice in one launch
    (``sample_slices``)."""
    probs = probs.ravel()  # stride-1 views (top_k_mask_logits_kernel)
    slices, row, part, begin, end = slice_of_block(vocab, slice_length)
    block = coop.this_block()
    u = philox_uniform(seed, offset, row)
    chosen, holder, writes = sample_slices(block, probs, partials, lasts, arrive, row, slices, part, begin, end,
                                           slice_length, np.float32(0), u, False, True)
    if block.rank() == holder and writes:
        samples[row] = chosen


@cuda.jit(launch_bounds=THREADS)
def min_p_sampling_from_probs_kernel(probs, samples, partials, lasts, arrive, vocab, slice_length, min_p, seed,
                                     offset):
    """The row's largest probability, then ``sample_kept`` over p >= largest * min_p with u scaled by their mass;
    over row slices (``sample_slices``) the slices' largest meet in partials[batch x slices + block] first."""
    probs = probs.ravel()  # stride-1 views (top_k_mask_logits_kernel)
    slices, row, part, begin, end = slice_of_block(vocab, slice_length)
    block = coop.this_block()
    u = philox_uniform(seed, offset, row)
    largest = np.float32(0)
    start = begin
    while start < end:
        items = coop.ThreadData(WIDE, np.float32)
        load_wide(block, probs, items, start, end, np.float32(0))
        for i in range(WIDE):
            largest = max(largest, items[i])
        start += WIDE_TILE
    largest = coop.reduce(block, largest, binary_op="max")
    if slices > 1:
        if block.rank() == 0:
            partials[cuda.gridDim.x + cuda.blockIdx.x] = largest
        grid_barrier(arrive)
        mine = np.float32(0)
        if block.rank() < slices:
            mine = cuda.ldcg(partials, cuda.gridDim.x + row * slices + block.rank())
        largest = coop.reduce(block, mine, binary_op="max")
    chosen, holder, writes = sample_slices(block, probs, partials, lasts, arrive, row, slices, part, begin, end,
                                           slice_length, largest * min_p[row], u, True, False)
    if block.rank() == holder and writes:
        samples[row] = chosen


def above_two_pivots(a, b):
    """(mass above pivot 0, count above it, mass above pivot 1, count above it): sums."""
    return a[0] + b[0], a[1] + b[1], a[2] + b[2], a[3] + b[3]


@cuda.jit(device=True, inline="always")
def warp_chunk_above_two(block, probs, begin, vocab, pivot0, pivot1):
    """``warp_chunk_kept`` for the joint sampler's rounds: warp w's (mass, count, last index) of the values of chunk w
    above pivot0 and above pivot1, in its lane 0 (zeros and -1 in the other lanes)."""
    first, lane, origin, chunk_begin, chunk_end, chunk = warp_chunk(block, begin, vocab)
    warp = coop.this_warp()
    mass0 = np.float32(0)
    count0 = np.int32(0)
    last0 = np.int32(-1)
    mass1 = np.float32(0)
    count1 = np.int32(0)
    last1 = np.int32(-1)
    step = np.int64(0)
    while step < chunk:  # as warp_chunk_kept: a uniform bound
        items = coop.ThreadData(NARROW, np.float32)
        coop.load(warp, probs, items, algorithm="striped", offset=chunk_begin + step - origin,
                  valid_items=warp_tile_items(chunk_begin, chunk_end, step), oob_default=np.float32(0))
        for i in range(NARROW):
            index = np.int32(first + step + i * 32 + lane)
            if items[i] > pivot0:
                mass0 += items[i]
                count0 += np.int32(1)
                last0 = index
            if items[i] > pivot1:
                mass1 += items[i]
                count1 += np.int32(1)
                last1 = index
        step += WARP_TILE
    mass0, count0, last0, mass1, count1, last1 = coop.reduce(
        warp, (mass0, count0, last0, mass1, count1, last1), binary_op=sums_and_lasts, broadcast=False)
    if lane != 0:
        mass0 = np.float32(0)
        count0 = np.int32(0)
        last0 = np.int32(-1)
        mass1 = np.float32(0)
        count1 = np.int32(0)
        last1 = np.int32(-1)
    return mass0, count0, last0, mass1, count1, last1


def sums_and_lasts(a, b):
    """Two (mass, count, last index) triples: sums and maxima."""
    return a[0] + b[0], a[1] + b[1], max(a[2], b[2]), a[3] + b[3], a[4] + b[4], max(a[5], b[5])


@cuda.jit(launch_bounds=THREADS)
def top_k_top_p_sampling_from_probs_kernel(probs, samples, vocab, top_k, top_p, seed, offset):
    """FlashInfer's joint filter by rejection: sample among p > low with u * q; accept when fewer than k values and
    less than top_p mass lie strictly above the sample; else narrow (low, high] by the sample and the midpoint.
    Each round is one pass over the row by warp chunks (``warp_chunk_above_two``): the masses and counts above the
    two pivots decide the round, and the chunks' masses above the one that becomes ``low`` are the next round's, so
    the next sample walks only its crossing chunk (``warp_crossing``). Each warp's lane 0 leaves its chunk's part of
    the round in shared memory, every warp reading them all after one barrier a round (in registers held across the
    round they spilled)."""
    probs = probs.ravel()  # stride-1 views (top_k_mask_logits_kernel)
    row = np.int64(cuda.blockIdx.x)
    block = coop.this_block()
    base = row * vocab
    k = top_k[row]
    if k < 0 or k >= vocab:
        k = np.int32(2**31 - 1)
    p = top_p[row]
    low = np.float32(0)
    high = np.float32(1)
    q = np.float32(1)
    chosen = np.int32(0)
    draw = np.uint32(0)  # (32 bits: fewer live registers across the rounds)
    done = False
    chunk = chunk_length(vocab)
    chunk_masses = cuda.shared.array(WARPS, np.float32)
    chunk_lasts = cuda.shared.array(WARPS, np.int32)
    lane = np.uint32(block.rank() % 32)
    my_warp = np.uint32(block.rank() // 32)
    mine, my_last = warp_chunk_kept(block, probs, base, vocab, np.float32(0))  # round 0 keeps p > 0
    if lane == 0:
        chunk_masses[my_warp] = mine
        chunk_lasts[my_warp] = my_last
    while not done:
        u = philox_uniform(seed, np.uint64(offset) + np.uint64(draw), row)
        draw = np.uint32(draw + np.uint32(1))
        cuda.syncthreads()  # the round's chunk parts, written by each warp's lane 0 (read before the block reduce
        # below, whose barriers keep the next round's writes after every read: one barrier a round)
        crossing, running, row_last, target = warp_crossing(chunk_masses, chunk_lasts, WARPS, u * q, False)
        if row_last < 0:  # nothing kept
            chosen = np.int32(0)
            done = True
        else:
            chosen = row_last
            if crossing != NO_INDEX:
                first = np.int64(crossing) * chunk
                found, holder = sample_kept(block, probs, base + first, min(vocab - first, chunk), low,
                                            np.float32(0), target, running, False)
                # (a rank the compiler sees in range: no run-time check, no trap branch)
                chosen = coop.broadcast(block, np.int32(first + found), src_rank=holder & np.int32(THREADS - 1))
            pivot0 = probs[base + chosen]
            pivot1 = (pivot0 + high) * np.float32(0.5)
            mass0, count0, last0, mass1, count1, last1 = warp_chunk_above_two(block, probs, base, vocab, pivot0,
                                                                              pivot1)
            sum0, above0, sum1, above1 = coop.reduce(block, (mass0, count0, mass1, count1), binary_op=above_two_pivots)
            if above0 < k and sum0 < p:
                done = True
            elif above1 < k and sum1 < p:
                low = pivot0
                high = pivot1
                q = sum0
                if lane == 0:
                    chunk_masses[my_warp] = mass0
                    chunk_lasts[my_warp] = last0
            else:
                low = pivot1
                q = sum1
                if lane == 0:
                    chunk_masses[my_warp] = mass1
                    chunk_lasts[my_warp] = last1
            if not low < high:
                done = True
    if block.rank() == 0:
        samples[row] = chosen


def softmax_cluster(logits, out, inv_temperature=np.float32(1)):
    """Launch ``softmax_cluster_kernel`` on a (batch, vocab) device array into ``out``, whatever the batch (``softmax``
    takes it where ``uses_cluster_softmax`` says): a cluster of CLUSTER blocks a row, ``cluster_softmax_plan``'s
    block."""
    batch, vocab = logits.shape
    threads, held, length = cluster_softmax_plan(vocab)
    softmax_cluster_kernel(threads, held)[(batch * CLUSTER, 1, 1), (threads, 1, 1), 0, 0, (CLUSTER, 1, 1)](
        logits.reshape(-1), out.reshape(-1), np.int64(vocab), np.int64(length), inv_temperature)


def softmax(logits, out, inv_temperature=np.float32(1), partials=None, arrive=None):
    """Launch the softmax of a (batch, vocab) device array into ``out``: one launch, a cluster of blocks per row
    (``uses_cluster_softmax``: small batches of short rows), else a block per row or, for small batches, per row
    slice (``partials``: float32, 2 x batch x slices; ``arrive`` as ``top_k_mask_logits``; made here when not
    given)."""
    batch, vocab = logits.shape
    if uses_cluster_softmax(batch, vocab):
        softmax_cluster(logits, out, inv_temperature)
        return
    flat, dst = logits.reshape(-1), out.reshape(-1)
    slices, length = resident_plan(batch, vocab, softmax_plan)
    if slices == 1:
        softmax_kernel[batch, THREADS](flat, dst, np.int64(vocab), inv_temperature)
        return
    if partials is None:
        partials = cuda.device_array(2 * batch * slices, np.float32)
    softmax_slices_kernel[batch * slices, THREADS](flat, partials, dst, barrier_words() if arrive is None else arrive,
                                                   np.int64(vocab), np.int64(length), inv_temperature)


def top_k_mask_logits(bits, out_bits, top_k, counts=None, arrive=None):
    """Launch top-k masking of a (batch, vocab) uint32 view of the logits into ``out_bits``: one launch, a block per
    row or, for small batches, per row slice (``counts``: int32, batch x 4 x slices x BINS, no zeroing needed;
    ``arrive``: the grid barrier's words, ``barrier_words``; both made here when not given)."""
    batch, vocab = bits.shape
    slices, length = resident_select_plan(batch, vocab)
    counts, _, arrive = select_workspace(batch, slices, counts, (), arrive, np.int32)  # no kept masses to meet
    top_k_mask_logits_kernel[batch * slices, THREADS](bits.reshape(-1), out_bits.reshape(-1), counts, arrive,
                                                      np.int64(vocab), np.int64(length), top_k)


def top_k_renorm_probs(probs, bits, out, top_k, counts=None, partials=None, arrive=None):
    """Launch the top-k renormalisation of a (batch, vocab) device array (``bits``: its uint32 view) into ``out``:
    one launch, a block per row or, for small batches, per row slice (``counts`` and ``arrive`` as
    ``top_k_mask_logits``; ``partials``: float32, batch x slices)."""
    batch, vocab = probs.shape
    slices, length = resident_select_plan(batch, vocab)
    counts, partials, arrive = select_workspace(batch, slices, counts, partials, arrive, np.int32)
    top_k_renorm_probs_kernel[batch * slices, THREADS](probs.reshape(-1), bits.reshape(-1), out.reshape(-1), counts,
                                                       partials, arrive, np.int64(vocab), np.int64(length), top_k)


def top_p_renorm_probs(probs, bits, out, top_p, masses=None, partials=None, arrive=None):
    """Launch the top-p renormalisation of a (batch, vocab) device array (``bits``: its uint32 view) into ``out``:
    one launch, a block per row or, for small batches, per row slice (``masses``: int64, batch x 4 x slices x BINS,
    no zeroing needed; ``partials`` and ``arrive`` as ``top_k_renorm_probs``)."""
    batch, vocab = probs.shape
    slices, length = resident_select_plan(batch, vocab)
    masses, partials, arrive = select_workspace(batch, slices, masses, partials, arrive, np.int64)
    top_p_renorm_probs_kernel[batch * slices, THREADS](probs.reshape(-1), bits.reshape(-1), out.reshape(-1), masses,
                                                       partials, arrive, np.int64(vocab), np.int64(length), top_p)


def sampling_from_probs(probs, samples, seed, offset, partials=None, lasts=None, arrive=None):
    """Launch sampling from a (batch, vocab) device array of probabilities into ``samples`` (int32, batch): one
    launch, a block per row or, for small batches of long rows (``select_plan``), per row slice (``partials``:
    float32, 2 x batch x slices; ``lasts``: int32, batch x slices; ``arrive`` as ``top_k_mask_logits``; made here
    when not given)."""
    batch, vocab = probs.shape
    slices, length = resident_select_plan(batch, vocab)
    partials, lasts, arrive = sample_workspace(batch, slices, partials, lasts, arrive)
    sampling_from_probs_kernel[batch * slices, THREADS](probs.reshape(-1), samples, partials, lasts, arrive,
                                                        np.int64(vocab), np.int64(length), np.uint64(seed),
                                                        np.uint64(offset))


def min_p_sampling_from_probs(probs, samples, min_p, seed, offset, partials=None, lasts=None, arrive=None):
    """Launch min-p sampling (``min_p``: float32, batch) as ``sampling_from_probs``."""
    batch, vocab = probs.shape
    slices, length = resident_select_plan(batch, vocab)
    partials, lasts, arrive = sample_workspace(batch, slices, partials, lasts, arrive)
    min_p_sampling_from_probs_kernel[batch * slices, THREADS](probs.reshape(-1), samples, partials, lasts, arrive,
                                                              np.int64(vocab), np.int64(length), min_p,
                                                              np.uint64(seed), np.uint64(offset))


def sample_workspace(batch, slices, partials, lasts, arrive):
    """(partials, lasts, arrive) of a sampler's launch: the given ones, else made here."""
    if partials is None:
        partials = cuda.device_array(2 * batch * slices, np.float32)
    if lasts is None:
        lasts = cuda.device_array(batch * slices, np.int32)
    return partials, lasts, barrier_words() if arrive is None else arrive


_BARRIER_WORDS = {}


def barrier_words():
    """The grid barrier's two words for the current device, zeros when first made. The sliced top-k and top-p
    launches of one device share them, so launch them on one stream (give each stream its own zeroed pair)."""
    device = cuda.get_current_device().id
    if device not in _BARRIER_WORDS:
        _BARRIER_WORDS[device] = cuda.to_device(np.zeros(2, np.uint32))
    return _BARRIER_WORDS[device]


def select_workspace(batch, slices, bins, partials, arrive, bins_dtype):
    """(bins, partials, arrive) of a top-k or top-p launch: the given ones, else made here (a launch of a block per
    row reads none of them: one-item arrays stand in; the mask passes ``()`` for the partials it has none of)."""
    if bins is None:
        bins = cuda.device_array(batch * 4 * slices * BINS if slices > 1 else 1, bins_dtype)
    if partials is None:
        partials = cuda.device_array(batch * slices, np.float32)
    return bins, partials, barrier_words() if arrive is None else arrive


def resident_plan(batch, vocab, plan=select_plan):
    """``plan`` (``select_plan``, or ``softmax_plan``), kept to one block per row when the device has
    fewer SMs than the sliced launch has blocks (a grid barrier needs every block resident at once: one 1024-thread
    block per SM)."""
    slices, length = plan(batch, vocab)
    if slices > 1 and batch * slices > cuda.get_current_device().MULTIPROCESSOR_COUNT:
        return 1, vocab
    return slices, length


def resident_select_plan(batch, vocab):
    """``resident_plan`` of ``select_plan``: the radix selects' and the samplers' host plan."""
    return resident_plan(batch, vocab)
