"""LLM sampling kernels in the CuTe DSL with cuda.coop: the kernels of ``sampling_numba.py``, written for
``cuda.coop.cutlass`` with the same algorithms, tiling and cooperative calls, so that the two files read side by side.
One 1024-thread block per row of a (batch, vocab) float32 matrix, the vocabulary walked in tiles of 1024 x 4 items.

* ``softmax``: a row of at most 32768 items (``HELD_TILE``) is read once into registers and written from them, one
  block ``reduce`` of the threads' (max, sum) pairs between; a longer row takes an online (max, sum) pass and one
  that writes; small batches of long rows split each row into slices, one block each, in one launch
  (``launch_softmax_slices``: each slice's pair meets the row's others across a grid barrier, then each block
  merges them and writes its slice, held in registers when it fits; ``softmax_plan`` of ``sampling_plan.py`` says
  which way and how many slices);
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
  shared memory at one barrier and every warp alike names the chunk where the running mass passes ``u`` (a warp
  ``exclusive_sum`` and warp ``reduce``s: ``warp_crossing``), and the block walks that chunk alone in tiles,
  one barrier a tile (``sample_kept``: warp scans, the warps' masses in shared memory, the crossing warp finding the
  first index past ``u``); in launches of two
  waves or more (``walks_whole_rows``) plain sampling walks each row that way from its start. Small batches of long
  rows (``select_plan``) split each row over the blocks of one launch: the slices' masses meet across a grid barrier
  and the crossing slice's block walks it (``sample_slices``; min-p meets the slices' largest probabilities first).
  The joint top-k/top-p sampler's rounds each take one pass by warp chunks (``warp_chunk_above_two``): the masses
  and counts above the round's two pivots decide it, and the chunks' masses above the new lower bound are the next
  round's parts.

What differs from ``sampling_numba.py``, and why:

* Each ``@cuda.jit`` kernel is a ``@cute.kernel`` with a ``@cute.jit`` launcher (``launch_*``: grid = batch, block =
  1024); each ``@cuda.jit(device=True)`` helper is a ``@cute.jit`` function (CuTe inlines it while it traces, and
  rewrites its ``while``/``if`` on run-time values into MLIR control flow, as it does the kernel's).
* Scalars are CuTe numerics (``cutlass.Float32``, ``Int32``, ``Int64``, ``Uint32``, ``Uint64``) where numba had NumPy
  scalars; a variable that a run-time loop or branch assigns starts typed, since CuTe carries it as one MLIR type.
* ``for i in range(WIDE)`` over a payload's items is ``cutlass.range_constexpr(WIDE)``: unrolled while tracing, so
  each ``items[i]`` has a constant index (a plain ``range`` would be a run-time loop). The four radix passes stay a
  run-time loop (``cutlass.range(4)``), as numba's ``range(4)`` is.
* ``math.exp`` is ``cute.math.exp`` and ``math.exp2`` ``cute.math.exp2`` (libdevice's ``expf`` and ``exp2f``, as
  numba's); numba's ``exp2_approx`` (inline PTX, ``sfu_numba.py``) is ``sfu_cute.py``'s,
  ``cute.math.exp2(x, approx=True, ftz=True)``.
* The operators (``binary_op``) are traced on CuTe numerics without CuTe's rewriting of ``if``: they use
  ``cutlass.max``/``cutlass.min`` and ``cutlass.select_`` where numba's use ``max``/``min`` and ``x if c else y``.
* CuTe rewrites no ``return`` under a run-time ``if``: ``at_or_above`` and ``sample_kept`` compute their result and
  return it once (the same values as the numba helpers' early returns).
* The top-k kernels read the floats themselves and take their bits with ``x.bitcast(cutlass.Uint32)``: numba's
  kernels take an extra uint32 view of the array because numba-cuda-mlir cannot bitcast a scalar. So
  ``top_k_mask_logits`` reads and writes float32 (``logits``, ``out``; the kept values keep their bits, NaN
  included) and ``top_k_renorm_probs`` has no ``bits`` operand.
* A variable that a run-time loop carries as a flag starts as ``cutlass.Boolean(False)`` (numba: ``False``).
* Top-p's bins: numba's ``cuda.shared.array(BINS, np.uint32)`` is ``SmemAllocator().allocate_tensor(Uint32,
  cute.make_layout(BINS))`` (the DSL's allocator, which also places the cooperative scratch: the launch's dynamic
  shared memory covers both), and ``cuda.atomic.add(bins, b, v)`` is ``cute.arch.atomic_add(bins.iterator + b, v,
  scope="cta")`` (a shared-memory pointer: ``ATOMS.ADD`` in the SASS); ``cuda.syncthreads()`` is
  ``cute.arch.sync_threads()``. The top-p kernel reads the floats and bitcasts them, as the top-k ones do, so
  ``top_p_renorm_probs`` has no ``bits`` operand. A pivot's float comes back from its bits by ``bitcast``, where
  numba views a one-item local array as float32.

The semantics and the NumPy oracles are in ``sampling_reference.py``; ``cute_llm_sampling.py`` runs and checks them.
"""
from __future__ import annotations

import functools
import math

import numpy as np
import cutlass  # noqa: I001  (the compiler first, then cuda.coop)
import cutlass.cute as cute
import cuda.coop.cutlass as cute_coop  # noqa: F401  (registers the backend)
from cuda import coop
from sampling_plan import (  # noqa: F401  (the tiling and the launch plan: pure Python, shared with sampling_numba.py)
    BINS, BINS_PER_LANE, CANDIDATES, CLUSTER, HELD, HELD_GROUP, HELD_TILE, NARROW, NARROW_TILE, PART_SLOTS,
    PARTS_PER_LANE, SLICE_BLOCKS, THREADS, TILE, VEC, WARP_TILE, WARPS, WHOLE_ROW_BLOCKS, WIDE, WIDE_TILE,
    cluster_softmax_plan, select_plan, slice_plan, softmax_plan, uses_cluster_softmax,
)
from sfu_cute import exp2_approx  # the SFU's 2**x, shared with the selective scan

from cutlass import Float32, Float64, Int32, Int64, Uint32, Uint64
from cutlass.memory import SmemAllocator

NEG_INF = -math.inf
POS_INF = math.inf
NAN = math.nan
NEG_INF_BITS = 0xFF800000
LOG2E = 1.4426950408889634  # exp(d) = exp2(d * LOG2E): the exponentials of a row held in registers
NO_INDEX = 2**31 - 1
M32 = 0xFFFFFFFF


# ---------------------------------------------------------------------------------------------- Philox (curand's)
@cute.jit
def philox_uniform(seed: Uint64, offset: Uint64, row: Int64):
    """The row's uniform in (0, 1]: curand_init(seed, row, offset) then curand_uniform (sampling_reference.py)."""
    k0 = seed & Uint64(M32)
    k1 = (seed >> Uint64(32)) & Uint64(M32)
    block = offset >> Uint64(2)
    c0 = block & Uint64(M32)
    c1 = block >> Uint64(32)
    c2 = Uint64(row) & Uint64(M32)
    c3 = Uint64(0)
    for r in cutlass.range_constexpr(10):
        if r > 0:
            k0 = (k0 + Uint64(0x9E3779B9)) & Uint64(M32)
            k1 = (k1 + Uint64(0xBB67AE85)) & Uint64(M32)
        p0 = Uint64(0xD2511F53) * c0
        p1 = Uint64(0xCD9E8D57) * c2
        n0 = (p1 >> Uint64(32)) ^ c1 ^ k0
        n2 = (p0 >> Uint64(32)) ^ c3 ^ k1
        c0, c1, c2, c3 = n0, p1 & Uint64(M32), n2, p0 & Uint64(M32)
    word = offset & Uint64(3)
    x = c0
    if word == Uint64(1):
        x = c1
    if word == Uint64(2):
        x = c2
    if word == Uint64(3):
        x = c3
    return Float32(x) * Float32(2.0**-32) + Float32(2.0**-33)


# ---------------------------------------------------------------------------------------------- operators
def online_softmax_merge(a, b):
    """Two (max, sum of exp(x - max)) pairs as one; -inf maxima carry no mass."""
    m = cutlass.max(a[0], b[0])
    sa = cutlass.select_(a[0] != NEG_INF, a[1] * exp2_approx((a[0] - m) * Float32(LOG2E)), Float32(0))
    sb = cutlass.select_(b[0] != NEG_INF, b[1] * exp2_approx((b[0] - m) * Float32(LOG2E)), Float32(0))
    return m, sa + sb


def max_max_max(a, b):
    return cutlass.max(a[0], b[0]), cutlass.max(a[1], b[1]), cutlass.max(a[2], b[2])


def max_max(a, b):
    return cutlass.max(a[0], b[0]), cutlass.max(a[1], b[1])


def sum_max(a, b):
    return a[0] + b[0], cutlass.max(a[1], b[1])


def min_max(a, b):
    return cutlass.min(a[0], b[0]), cutlass.max(a[1], b[1])


# ---------------------------------------------------------------------------------------------- helpers
@cute.jit
def ordered_key(bits: Uint32):
    """A float32's bits (``x.bitcast(Uint32)``), mapped so that unsigned order is the floats' order."""
    return bits ^ Uint32(0xFFFFFFFF) if bits >> Uint32(31) != Uint32(0) else bits | Uint32(0x80000000)


@cute.jit
def at_or_above(bits: Uint32, pivot: Uint32):
    """``x >= pivot`` as floats compare, on their bits and the pivot's ordered key: -0.0 equals +0.0, NaN fails
    (k < 0 or k >= vocab, pivot 0: every value stays, NaN included, as a copy). The numba helper's early returns,
    from the last to the first (CuTe rewrites no ``return`` under a run-time ``if``)."""
    result = ordered_key(bits) >= pivot
    if bits & Uint32(0x7FFFFFFF) == Uint32(0):
        result = ordered_key(Uint32(0)) >= pivot or ordered_key(Uint32(0x80000000)) >= pivot
    if bits & Uint32(0x7FFFFFFF) > Uint32(0x7F800000):
        result = cutlass.Boolean(False)
    if pivot == Uint32(0):
        result = cutlass.Boolean(True)
    return result


@cute.jit
def digit_histogram(block, values: cute.Tensor, begin: Int64, end: Int64, shift: Uint32, high: Uint32,
                    prefix: Uint32):
    """This block's counts of one 8-bit digit (at ``shift``) of the ordered keys of values[begin:end] whose digits
    under ``high`` equal ``prefix``: thread t < BINS holds bin t (the others 0)."""
    count = Int32(0)
    start = begin
    while start < end:
        items = coop.ThreadData(WIDE, np.float32)
        coop.load(block, values, items, algorithm="striped", offset=start,
                  valid_items=min(end - start, WIDE_TILE), oob_default=np.float32(0))
        digits = coop.ThreadData(WIDE, np.uint32)
        for i in cutlass.range_constexpr(WIDE):
            key = ordered_key(items[i].bitcast(Uint32))
            inside = start + i * THREADS + block.rank() < end
            digits[i] = (key >> shift) & Uint32(0xFF) if inside and (key & high) == prefix else Uint32(BINS)
        counts = coop.histogram(block, digits, bins=BINS + 1)  # bin 256 collects the rest
        count += counts[0]
        start += WIDE_TILE
    return count if block.rank() < BINS else Int32(0)


@cute.jit
def choose_digit(block, mine: Int32, remaining: Int32):
    """Thread t < BINS holds bin t's count: (the bin where the count from the top reaches ``remaining``, how many
    are still to find inside it, how many the bin holds), in every thread: ``sampling_numba.choose_digit`` (the
    first warp picks the bin from BINS_PER_LANE neighbouring bins a lane)."""
    bins = SmemAllocator().allocate_tensor(Int32, cute.make_layout(BINS), 16)
    choice = SmemAllocator().allocate_tensor(Int32, cute.make_layout(4), 16)
    if block.rank() < BINS:
        bins[block.rank()] = mine
    cute.arch.sync_threads()
    tid, _, _ = cute.arch.thread_idx()
    if tid < 32:  # the first warp, whole
        first = Int32(tid) * BINS_PER_LANE
        total = Int32(0)
        for i in cutlass.range_constexpr(BINS_PER_LANE):
            total += bins[first + i]
        running = coop.inclusive_sum(coop.this_warp(), total, reverse=True) - total  # the later lanes' bins
        at_bin, left, in_bin = Int32(-1), Int32(-1), Int32(-1)
        for j in cutlass.range_constexpr(BINS_PER_LANE):
            at = first + (BINS_PER_LANE - 1 - j)
            count = bins[at]
            if running < remaining and running + count >= remaining:
                at_bin, left, in_bin = at, remaining - running, count
            running += count
        at_bin, left, in_bin = coop.reduce(coop.this_warp(), (at_bin, left, in_bin), binary_op=max_max_max)
        if tid == 0:
            choice[0], choice[1], choice[2] = at_bin, left, in_bin
    cute.arch.sync_threads()
    chosen = (choice[0], choice[1], choice[2])
    cute.arch.sync_threads()  # every thread has read the choice before the next digit's is written
    return chosen


@cute.jit
def append_candidates(block, values: cute.Tensor, begin: Int64, end: Int64, high: Uint32, prefix: Uint32,
                      keys: cute.Tensor, with_mass: cutlass.Constexpr):
    """One pass over values[begin:end] once a radix select's digits under ``high`` are known (``prefix``) and few
    enough values share them: the ordered keys that do go to ``keys`` (a shared buffer of CANDIDATES; a tile's
    places from an ``exclusive_sum`` of each thread's count, so no atomics), and with ``with_mass`` the values
    above them are summed (all are kept). (candidates found; the block's sum of the values above, or 0)."""
    found = Int32(0)
    above = Float32(0)
    start = begin
    while start < end:
        items = coop.ThreadData(WIDE, np.float32)
        coop.load(block, values, items, algorithm="striped", offset=start,
                  valid_items=min(end - start, WIDE_TILE), oob_default=np.float32(0))
        held = Uint32(0)  # bit i: item i is a candidate (the items themselves are not kept past the scan)
        for i in cutlass.range_constexpr(WIDE):
            key = ordered_key(items[i].bitcast(Uint32))
            if start + i * THREADS + block.rank() < end:
                if key & high == prefix:
                    held |= Uint32(1 << i)
                elif key & high > prefix:
                    above += items[i]
        tile_found = cute_coop.ThreadData(1, np.int32)
        slot = cute_coop.exclusive_sum(block, Int32(cute.arch.popc(held)), aggregate_output=tile_found) + found
        for i in cutlass.range_constexpr(WIDE):
            if (held >> Uint32(i)) & Uint32(1) != Uint32(0):
                if slot < CANDIDATES:  # candidates are few: read again (an L1 hit) rather than held in registers
                    keys[slot] = ordered_key(values[start + i * THREADS + block.rank()].bitcast(Uint32))
                slot += Int32(1)
        found += tile_found[0]
        start += WIDE_TILE
    cute.arch.sync_threads()  # the buffer is read by other threads next
    total = Float32(0)
    if cutlass.const_expr(with_mass):
        total = coop.sum(block, above)
    return found, total


@cute.jit
def held_digit_counts(block, keys: cute.Tensor, count: Int32, shift: Uint32, high: Uint32, prefix: Uint32):
    """Thread t < BINS: how many of the ``count`` held keys whose digits under ``high`` equal ``prefix`` have digit
    t at ``shift`` (shared atomics)."""
    bins = SmemAllocator().allocate_tensor(Int32, cute.make_layout(BINS), 4)
    if block.rank() < BINS:
        bins[block.rank()] = Int32(0)
    cute.arch.sync_threads()
    j = Int32(block.rank())
    while j < count:
        if keys[j] & high == prefix:
            cute.arch.atomic_add(bins.iterator + Int32((keys[j] >> shift) & Uint32(0xFF)), Int32(1), scope="cta")
        j += THREADS
    cute.arch.sync_threads()
    mine = Int32(0)
    if block.rank() < BINS:
        mine = bins[block.rank()]
    cute.arch.sync_threads()  # every bin read before the next call clears them
    return mine


@cute.jit
def held_mass(block, keys: cute.Tensor, count: Int32, pivot_key: Uint32):
    """This thread's sum of the held values at or above the pivot key."""
    mass = Float32(0)
    j = Int32(block.rank())
    while j < count:
        if keys[j] >= pivot_key:
            mass += float_of_key(keys[j])
        j += THREADS
    return mass


@cute.jit
def grid_barrier(arrive: cute.Tensor):
    """Every block of the launch waits here for all the others, and what any block wrote before it is visible
    after it. arrive[0] counts the blocks in, arrive[1] is the barrier's generation: the last block in resets the
    count and moves the generation on, so the two words (zeros when allocated) serve launch after launch. The blocks
    must all be resident at once: a sliced launch has at most one block per SM (``select_plan``). Int32 words: every
    torch hands int32 to CuTe."""
    cute.arch.fence_acq_rel_gpu()
    cute.arch.sync_threads()
    if cute.arch.thread_idx()[0] == 0:
        generation = cute.arch.atomic_add(arrive.iterator + 1, Int32(0), scope="gpu")
        arrived = cute.arch.atomic_add(arrive.iterator, Int32(1), scope="gpu")
        if arrived == cute.arch.grid_dim()[0] - 1:
            arrive[0] = Int32(0)
            cute.arch.fence_acq_rel_gpu()
            cute.arch.atomic_add(arrive.iterator + 1, Int32(1), scope="gpu")
        else:
            waiting = cutlass.Boolean(True)
            while waiting:
                waiting = cute.arch.atomic_add(arrive.iterator + 1, Int32(0), scope="gpu") == generation
        cute.arch.fence_acq_rel_gpu()
    cute.arch.sync_threads()


@cute.jit
def across_slices(block, mine, zero, counts: cute.Tensor, arrive: cute.Tensor, row: Int64, slices: Int64,
                  part: Int64, digit: Int32):
    """Thread t < BINS holds bin t of this slice's bins of one digit (counts, or top-p's masses; ``zero`` of their
    type): the row's bin, summed over its slices through ``counts`` (``((row * 4 + digit) * slices + slice) * BINS
    + bin``) and a grid barrier."""
    if block.rank() < BINS:
        counts[((row * 4 + Int64(digit)) * slices + part) * BINS + block.rank()] = mine
    grid_barrier(arrive)
    total = zero
    if block.rank() < BINS:
        for other in cutlass.range(slices):
            total += counts[((row * 4 + Int64(digit)) * slices + other) * BINS + block.rank()]
    return total


@cute.jit
def select_pivot(block, values: cute.Tensor, counts: cute.Tensor, arrive: cute.Tensor, row: Int64, slices: Int64,
                 part: Int64, begin: Int64, end: Int64, k: Int32, with_mass: cutlass.Constexpr):
    """The ordered key of the k-th largest value of a row (1 <= k <= vocab; k = 0: no select, but every barrier
    reached), this block holding values[begin:end] of it (its slice ``part`` of ``slices``; one slice: the row). A
    radix select on 8-bit digits from the most significant: each digit's bins counted over the row (its slices'
    counts meeting across a grid barrier, ``across_slices``) until the chosen bin holds at most CANDIDATES values;
    then one pass keeps those candidates in shared memory (``append_candidates``) and the remaining digits are
    counted from them alone. A row of ties counts all four digits over the row. (the key; with ``with_mass`` this
    block's mass at or above it, if ``known``: its candidates at or above the key and every value above them)."""
    keys = SmemAllocator().allocate_tensor(Uint32, cute.make_layout(CANDIDATES), 16)
    prefix = Uint32(0)
    high = Uint32(0)
    remaining = Int32(k)
    in_bin = Int32(2**31 - 1)  # values in the chosen bin: unknown before the first digit
    count = Int32(0)
    above = Float32(0)
    held = cutlass.Boolean(False)
    for digit in cutlass.range(4):
        shift = Uint32(24) - Uint32(8) * Uint32(digit)
        if k > 0 and not held and in_bin <= CANDIDATES:
            count, above = append_candidates(block, values, begin, end, high, prefix, keys, with_mass)
            held = cutlass.Boolean(True)
        mine = Int32(0)
        if k > 0:
            if held:
                mine = held_digit_counts(block, keys, count, shift, high, prefix)
            else:
                mine = digit_histogram(block, values, begin, end, shift, high, prefix)
        if slices > 1:
            mine = across_slices(block, mine, Int32(0), counts, arrive, row, slices, part, Int32(digit))
        if k > 0:
            chosen, left, bin_count = choose_digit(block, mine, remaining)
            prefix |= Uint32(chosen) << shift
            high |= Uint32(0xFF) << shift
            remaining = left
            in_bin = bin_count
    kept = Float32(0)
    if cutlass.const_expr(with_mass):
        if k > 0 and held:
            kept = above + coop.sum(block, held_mass(block, keys, count, prefix))
    return prefix, kept, held


@cute.jit
def slice_of_block(vocab: Int64, slice_length: Int64):
    """(slices per row, row, slice, first item, end) of this block in a sliced launch (block b: row b // slices,
    slice b % slices; items as offsets into the flattened matrix)."""
    slices = (vocab + slice_length - 1) // slice_length
    row = Int64(cute.arch.block_idx()[0]) // slices
    part = Int64(cute.arch.block_idx()[0]) % slices
    return slices, row, part, row * vocab + part * slice_length, row * vocab + min(vocab, (part + 1) * slice_length)


@cute.jit
def float_of_key(key: Uint32):
    """The float32 whose ordered key is ``key`` (``ordered_key`` inverted)."""
    bits = key & Uint32(0x7FFFFFFF) if key >> Uint32(31) != Uint32(0) else key ^ Uint32(0xFFFFFFFF)
    return bits.bitcast(Float32)


# ---------------------------------------------------------------------------------------------- kernels
@cute.kernel
def softmax_kernel(logits: cute.Tensor, out: cute.Tensor, vocab: Int64, inv_temperature: Float32):
    """One block per row: a row of at most HELD_TILE items is read once and held in registers (``held_max_sum``,
    ``write_held``); a longer one takes the (max, sum) pass, then the pass that writes."""
    row = Int64(cute.arch.block_idx()[0])
    block = coop.this_block()
    begin = row * vocab
    if vocab <= HELD_TILE:
        held = coop.ThreadData(HELD, np.float32)
        row_max, row_sum, thread_max = held_max_sum(block, logits, held, begin, begin + vocab, inv_temperature)
        write_held(block, out, held, begin, begin + vocab, row_max, row_sum, thread_max)
    else:
        row_max, row_sum = online_max_sum(block, logits, begin, begin + vocab, inv_temperature)
        write_softmax(block, logits, out, begin, begin + vocab, inv_temperature, row_max, row_sum)


@cute.jit
def held_max_sum(block, logits: cute.Tensor, held, begin: Int64, end: Int64, inv_temperature: Float32):
    """``sampling_numba.held_max_sum``: logits[begin:end] (at most HELD_TILE items) scaled, their (max, sum of
    exp(x - max)) in every thread and the thread's own maximum; ``held`` left holding exp(x - the thread's maximum)
    (exp2's), so that ``write_held`` scales them by one exponential a thread; groups of HELD_GROUP items wholly past
    ``end`` skipped."""
    coop.load(block, logits, held, algorithm="striped", offset=begin, valid_items=end - begin,
              oob_default=np.float32(NEG_INF))
    n = end - begin
    m = Float32(NEG_INF)
    for g in cutlass.range_constexpr(HELD // HELD_GROUP):
        if Int64(g * HELD_GROUP * THREADS) < n:
            for j in cutlass.range_constexpr(HELD_GROUP):
                held[g * HELD_GROUP + j] = held[g * HELD_GROUP + j] * inv_temperature
                m = cutlass.max(m, held[g * HELD_GROUP + j])
    m_log2 = Float32(cutlass.select_(m != NEG_INF, m * Float32(LOG2E), Float32(0)))  # a -inf thread: exp(-inf) = 0
    s = Float32(0)
    for g in cutlass.range_constexpr(HELD // HELD_GROUP):
        if Int64(g * HELD_GROUP * THREADS) < n:
            for j in cutlass.range_constexpr(HELD_GROUP):
                held[g * HELD_GROUP + j] = exp2_approx(held[g * HELD_GROUP + j] * Float32(LOG2E) - m_log2)
                s += held[g * HELD_GROUP + j]
    row_max, row_sum = coop.reduce(block, (m, s), binary_op=online_softmax_merge)
    return row_max, row_sum, m


@cute.jit
def write_held(block, out: cute.Tensor, held, begin: Int64, end: Int64, row_max: Float32, row_sum: Float32,
               thread_max: Float32):
    """Writes the probabilities of the items ``held_max_sum`` left in ``held`` (groups past ``end`` skipped): each
    times exp(thread_max - row_max) / row_sum."""
    n = end - begin
    factor = cute.math.exp2(thread_max * Float32(LOG2E) - row_max * Float32(LOG2E)) / row_sum  # 0: a -inf thread
    for g in cutlass.range_constexpr(HELD // HELD_GROUP):
        if Int64(g * HELD_GROUP * THREADS) < n:
            for j in cutlass.range_constexpr(HELD_GROUP):
                held[g * HELD_GROUP + j] = held[g * HELD_GROUP + j] * factor
    coop.store(block, out, held, algorithm="striped", offset=begin, valid_items=n)


@cute.jit
def online_max_sum(block, logits: cute.Tensor, begin: Int64, end: Int64, inv_temperature: Float32):
    """(max, sum of exp(x - max)) of logits[begin:end] (x scaled by inv_temperature), in every thread: per tile, the
    thread's maximum first (the running sum rescaled once when it grows), then the tile's exp2's."""
    m = Float32(NEG_INF)
    s = Float32(0)
    start = begin
    while start < end:
        items = coop.ThreadData(WIDE, np.float32)
        coop.load(block, logits, items, algorithm="striped", offset=start,
                  valid_items=min(end - start, WIDE_TILE), oob_default=np.float32(NEG_INF))
        tile_max = Float32(NEG_INF)
        for i in cutlass.range_constexpr(WIDE):
            items[i] = items[i] * inv_temperature
            tile_max = cutlass.max(tile_max, items[i])
        if tile_max > m:
            s = s * cute.math.exp2((m - tile_max) * Float32(LOG2E))  # 0 while m is -inf
            m = tile_max
        if m != NEG_INF:
            m_log2 = m * Float32(LOG2E)
            for i in cutlass.range_constexpr(WIDE):
                s += exp2_approx(items[i] * Float32(LOG2E) - m_log2)
        start += WIDE_TILE
    return coop.reduce(block, (m, s), binary_op=online_softmax_merge)


@cute.jit
def write_softmax(block, logits: cute.Tensor, out: cute.Tensor, begin: Int64, end: Int64, inv_temperature: Float32,
                  row_max: Float32, row_sum: Float32):
    scale = Float32(1) / row_sum
    max_log2 = row_max * Float32(LOG2E)
    start = begin
    while start < end:
        items = coop.ThreadData(WIDE, np.float32)
        coop.load(block, logits, items, algorithm="striped", offset=start,
                  valid_items=min(end - start, WIDE_TILE), oob_default=np.float32(NEG_INF))
        probs = coop.ThreadData(WIDE, np.float32)
        for i in cutlass.range_constexpr(WIDE):
            probs[i] = exp2_approx(items[i] * inv_temperature * Float32(LOG2E) - max_log2) * scale
        coop.store(block, out, probs, algorithm="striped", offset=start, valid_items=min(end - start, WIDE_TILE))
        start += WIDE_TILE


@cute.kernel
def softmax_cluster_kernel(logits: cute.Tensor, out: cute.Tensor, vocab: Int64, slice_length: Int64,
                           inv_temperature: Float32, threads: cutlass.Constexpr, held: cutlass.Constexpr):
    """``sampling_numba.softmax_cluster_kernel``: a small batch's rows over the CLUSTER blocks of a cluster launch
    (``launch_softmax_cluster``), each block's slice held in registers, the slices' (max, sum) pairs merged by a
    cluster ``reduce`` through distributed shared memory; every held item worked, those past the slice as -inf."""
    block = coop.this_block()
    part = Int64(block.rank(level="cluster"))
    row = Int64(Uint32(cute.arch.block_idx()[0]) // Uint32(CLUSTER))
    begin = row * vocab + part * slice_length
    n = cutlass.max(Int64(0), cutlass.min(slice_length, vocab - part * slice_length))  # the last slices may be short
    items = coop.ThreadData(held, np.float32)
    coop.load(block, logits, items, algorithm="striped", offset=begin, valid_items=n, oob_default=np.float32(NEG_INF))
    m = Float32(NEG_INF)
    for i in cutlass.range_constexpr(held):
        items[i] = items[i] * inv_temperature
        m = cutlass.max(m, items[i])
    m_log2 = Float32(cutlass.select_(m != NEG_INF, m * Float32(LOG2E), Float32(0)))  # a -inf thread: no mass
    s = Float32(0)
    for i in cutlass.range_constexpr(held):
        items[i] = exp2_approx(items[i] * Float32(LOG2E) - m_log2)
        s += items[i]
    row_max, row_sum = cute_coop.reduce(coop.this_cluster(), (m, s), binary_op=online_softmax_merge)
    factor = cute.math.exp2(m * Float32(LOG2E) - row_max * Float32(LOG2E)) / row_sum  # 0: a -inf thread
    for i in cutlass.range_constexpr(held):
        items[i] = items[i] * factor
    coop.store(block, out, items, algorithm="striped", offset=begin, valid_items=n)


@cute.kernel
def softmax_slices_kernel(logits: cute.Tensor, partials: cute.Tensor, out: cute.Tensor, arrive: cute.Tensor,
                          vocab: Int64, slice_length: Int64, inv_temperature: Float32):
    """``sampling_numba.softmax_slices_kernel``: small batches' rows over slices, one block each, in one launch whose
    blocks' (max, sum) pairs meet across a grid barrier; every block merges its row's and writes its slice (held in
    registers across the barrier when at most HELD_TILE items)."""
    slices, row, part, begin, end = slice_of_block(vocab, slice_length)
    block = coop.this_block()
    held = coop.ThreadData(HELD, np.float32)
    m = Float32(NEG_INF)
    s = Float32(0)
    thread_max = Float32(NEG_INF)
    if slice_length <= HELD_TILE:
        m, s, thread_max = held_max_sum(block, logits, held, begin, end, inv_temperature)
    else:
        m, s = online_max_sum(block, logits, begin, end, inv_temperature)
    if block.rank() == 0:
        partials[2 * Int64(cute.arch.block_idx()[0])] = m
        partials[2 * Int64(cute.arch.block_idx()[0]) + 1] = s
    grid_barrier(arrive)
    pair_max = Float32(NEG_INF)
    pair_sum = Float32(0)
    if block.rank() < slices:
        pair_max = partials[2 * (row * slices + block.rank())]
        pair_sum = partials[2 * (row * slices + block.rank()) + 1]
    row_max, row_sum = coop.reduce(block, (pair_max, pair_sum), binary_op=online_softmax_merge)
    if slice_length <= HELD_TILE:
        write_held(block, out, held, begin, end, row_max, row_sum, thread_max)
    else:
        write_softmax(block, logits, out, begin, end, inv_temperature, row_max, row_sum)


@cute.kernel
def top_k_mask_logits_kernel(logits: cute.Tensor, out: cute.Tensor, counts: cute.Tensor, arrive: cute.Tensor,
                             vocab: Int64, slice_length: Int64, top_k: cute.Tensor):
    """The kept logits move unchanged (the same bits), -inf elsewhere. One block per row (slice_length >= vocab;
    ``counts`` and ``arrive`` unused), or per row slice in one launch whose blocks meet at grid barriers
    (``select_pivot``)."""
    slices, row, part, begin, end = slice_of_block(vocab, slice_length)
    block = coop.this_block()
    k = top_k[row]
    active = Int32(0)
    if 0 < k < vocab:
        active = k
    key, _, _ = select_pivot(block, logits, counts, arrive, row, slices, part, begin, end, active, False)
    pivot = key
    if k == 0:
        pivot = Uint32(0xFFFFFFFF)  # above every ordered key of a number: nothing stays
    elif k < 0 or k >= vocab:
        pivot = Uint32(0)  # every logit stays
    mask(block, logits, out, begin, end, pivot)


@cute.jit
def mask(block, logits: cute.Tensor, out: cute.Tensor, begin: Int64, end: Int64, pivot: Uint32):
    """logits[begin:end] at or above the pivot key to out unchanged (the same bits), -inf elsewhere."""
    start = begin
    while start < end:
        items = coop.ThreadData(WIDE, np.float32)
        coop.load(block, logits, items, algorithm="striped", offset=start,
                  valid_items=min(end - start, WIDE_TILE), oob_default=np.float32(0))
        masked = coop.ThreadData(WIDE, np.float32)
        for i in cutlass.range_constexpr(WIDE):
            masked[i] = items[i] if at_or_above(items[i].bitcast(Uint32), pivot) else Float32(NEG_INF)
        coop.store(block, out, masked, algorithm="striped", offset=start, valid_items=min(end - start, WIDE_TILE))
        start += WIDE_TILE


@cute.jit
def kept_mass(block, probs: cute.Tensor, base: Int64, vocab: Int64, pivot: Float32):
    """The sum of the row's probabilities >= pivot, in every thread."""
    kept = Float32(0)
    start = Int64(0)
    while start < vocab:
        items = coop.ThreadData(WIDE, np.float32)
        coop.load(block, probs, items, algorithm="striped", offset=base + start,
                  valid_items=min(vocab - start, WIDE_TILE), oob_default=np.float32(0))
        for i in cutlass.range_constexpr(WIDE):
            if items[i] >= pivot:
                kept += items[i]
        start += WIDE_TILE
    return coop.sum(block, kept)


@cute.jit
def write_scaled(block, probs: cute.Tensor, out: cute.Tensor, begin: Int64, end: Int64, pivot: Float32,
                 scale: Float32):
    """probs[begin:end] >= pivot times scale to out, the rest 0."""
    start = begin
    while start < end:
        items = coop.ThreadData(WIDE, np.float32)
        coop.load(block, probs, items, algorithm="striped", offset=start,
                  valid_items=min(end - start, WIDE_TILE), oob_default=np.float32(0))
        renormed = coop.ThreadData(WIDE, np.float32)
        for i in cutlass.range_constexpr(WIDE):
            renormed[i] = items[i] * scale if items[i] >= pivot else Float32(0)
        coop.store(block, out, renormed, algorithm="striped", offset=start, valid_items=min(end - start, WIDE_TILE))
        start += WIDE_TILE


@cute.kernel
def top_k_renorm_probs_kernel(probs: cute.Tensor, out: cute.Tensor, counts: cute.Tensor, partials: cute.Tensor,
                              arrive: cute.Tensor, vocab: Int64, slice_length: Int64, top_k: cute.Tensor):
    """The pivot is found on the values' ordered bits (as ``top_k_mask_logits_kernel``), then compared as a float;
    over row slices, each slice's kept mass meets in partials[block] across one more grid barrier."""
    slices, row, part, begin, end = slice_of_block(vocab, slice_length)
    block = coop.this_block()
    k = top_k[row]
    active = Int32(0)
    if 0 < k < vocab:
        active = k
    key, kept, known = select_pivot(block, probs, counts, arrive, row, slices, part, begin, end, active, True)
    pivot = float_of_key(key)
    if k == 0:
        pivot = Float32(NAN)  # nothing compares >= NaN: all zeros
    elif k < 0 or k >= vocab:
        pivot = Float32(NEG_INF)  # the whole row, renormalised
    if not (known and 0 < k < vocab):
        kept = kept_mass(block, probs, begin, end - begin, pivot)
    renormalise_slice(block, probs, out, partials, arrive, row, slices, begin, end, pivot, kept)


@cute.jit
def renormalise_slice(block, probs: cute.Tensor, out: cute.Tensor, partials: cute.Tensor, arrive: cute.Tensor,
                      row: Int64, slices: Int64, begin: Int64, end: Int64, pivot: Float32, kept: Float32):
    """probs[begin:end] >= pivot times 1 / max(the row's kept mass, 1e-8) to out, the rest 0 (FlashInfer's renorm):
    ``kept`` is this block's; over row slices, the slices' meet in partials[block] across a grid barrier."""
    total = kept
    if slices > 1:
        if block.rank() == 0:
            partials[Int64(cute.arch.block_idx()[0])] = kept
        grid_barrier(arrive)
        mine = Float32(0)
        if block.rank() < slices:
            mine = partials[row * slices + block.rank()]
        total = coop.sum(block, mine)
    write_scaled(block, probs, out, begin, end, pivot, Float32(1) / max(total, Float32(1e-8)))


@cute.jit
def fixed_mass(bits: Uint32):
    """A non-negative float32's value in 2^-40 units, truncated, from its bits alone (integer arithmetic):
    (1.mantissa) x 2^(exponent - 127) x 2^40; subnormals count 0. The numba helper's early returns as one result."""
    exponent = Int64(bits >> Uint32(23)) & Int64(0xFF)
    significand = Int64(bits & Uint32(0x7FFFFF)) | Int64(0x800000)
    shift = exponent - Int64(110)  # 127 + 23 - 40
    mass = Int64(0)
    if exponent != 0 and shift >= -24:
        if shift >= 0:
            mass = significand << shift
        else:
            mass = significand >> -shift
    return mass


@cute.jit
def mass_histogram(block, values: cute.Tensor, begin: Int64, end: Int64, shift: Uint32, high: Uint32,
                   prefix: Uint32):
    """This block's 256 bins of one 8-bit digit (at ``shift``) of the bits of values[begin:end] (non-negative)
    whose digits under ``high`` equal ``prefix``, each bin the candidates' mass in 2^-40 fixed point: integer sums,
    so the same bins on every run whatever order the atomics land in. cuda.coop has no weighted histogram, so the
    bins are shared memory of our own, from the DSL's allocator beside the cooperative scratch. Thread t < BINS
    returns bin t (the others 0)."""
    smem = SmemAllocator()
    low_words = smem.allocate_tensor(Uint32, cute.make_layout(BINS), 4)  # each bin's mass as two 32-bit words:
    high_words = smem.allocate_tensor(Uint32, cute.make_layout(BINS), 4)  # shared memory has no native 64-bit add
    if block.rank() < BINS:
        low_words[block.rank()] = Uint32(0)
        high_words[block.rank()] = Uint32(0)
    cute.arch.sync_threads()
    start = begin
    while start < end:
        items = coop.ThreadData(NARROW, np.float32)
        coop.load(block, values, items, algorithm="striped", offset=start,
                  valid_items=min(end - start, NARROW_TILE), oob_default=np.float32(0))
        for i in cutlass.range_constexpr(NARROW):
            word = items[i].bitcast(Uint32)
            if (word & high) == prefix:
                mass = fixed_mass(word)
                if mass > 0:  # a 64-bit add as two 32-bit words: the low word's atomic add returns the old value,
                    b = Int32((word >> shift) & Uint32(0xFF))  # so exactly the thread that wraps it carries
                    low = Uint32(mass & Int64(0xFFFFFFFF))
                    upper = Uint32(mass >> Int64(32))
                    old = cute.arch.atomic_add(low_words.iterator + b, low, scope="cta")
                    if Uint32(old + low) < old:
                        upper += Uint32(1)
                    if upper != 0:
                        cute.arch.atomic_add(high_words.iterator + b, upper, scope="cta")
        start += NARROW_TILE
    cute.arch.sync_threads()
    mine = Int64(0)
    if block.rank() < BINS:
        mine = (Int64(high_words[block.rank()]) << Int64(32)) | Int64(low_words[block.rank()])
    cute.arch.sync_threads()  # every thread read its bin before a later call clears them
    return mine


@cute.jit
def choose_mass_digit(block, mine: Int64, remaining: Int64):
    """``choose_digit`` on masses (Int64): where truncation left less mass than asked for, the lowest bin (0, with 1
    unit still to find)."""
    at_or_above = coop.inclusive_sum(block, mine, reverse=True)
    hit = at_or_above >= remaining and at_or_above - mine < remaining
    chosen, left = coop.reduce(block, (Int64(block.rank()) if hit else Int64(-1),
                                       remaining - (at_or_above - mine) if hit else Int64(-1)),
                               binary_op=max_max)
    if chosen < 0:
        chosen = Int64(0)
        left = Int64(1)
    return chosen, left


@cute.kernel
def top_p_renorm_probs_kernel(probs: cute.Tensor, out: cute.Tensor, masses: cute.Tensor, partials: cute.Tensor,
                              arrive: cute.Tensor, vocab: Int64, slice_length: Int64, top_p: cute.Tensor):
    """The pivot is the smallest kept probability: the largest value v of the row whose mass at and above it
    reaches top_p times the row's total (0 where top_p >= 1: the whole row). A radix select on the bits of the
    (non-negative) values by mass: four 8-bit digits from the most significant, each a ``mass_histogram``, a reverse
    inclusive_sum over the bins and a tuple reduce that picks the bin; the row's total is the first digit's bins
    summed. One block per row (slice_length >= vocab; ``masses`` and ``arrive`` unused), or per row slice in one
    launch: each digit's bins meet across the row's slices in ``masses`` at a grid barrier, the slices' kept masses
    in ``partials`` at one more."""
    slices, row, part, begin, end = slice_of_block(vocab, slice_length)
    block = coop.this_block()
    p = top_p[row]
    remaining = Int64(0)  # mass still to find
    prefix = Uint32(0)
    high = Uint32(0)  # the digits fixed so far
    for digit in cutlass.range(4):
        shift = Uint32(24) - Uint32(8) * Uint32(digit)
        mine = Int64(0)
        if not p >= 1:
            mine = mass_histogram(block, probs, begin, end, shift, high, prefix)
        if slices > 1:
            mine = across_slices(block, mine, Int64(0), masses, arrive, row, slices, part, Int32(digit))
        if not p >= 1:
            if digit == 0:  # every value is a candidate of the first digit
                remaining = max(Int64(Float64(p) * Float64(coop.sum(block, mine))), Int64(1))
            chosen, left = choose_mass_digit(block, mine, remaining)
            prefix |= Uint32(chosen) << shift
            high |= Uint32(0xFF) << shift
            remaining = left
    pivot = Float32(0)
    if not p >= 1:
        pivot = prefix.bitcast(Float32)
    renormalise_slice(block, probs, out, partials, arrive, row, slices, begin, end, pivot,
                      kept_mass(block, probs, begin, end - begin, pivot))


@cute.jit
def sample_kept(block, probs: cute.Tensor, base: Int64, vocab: Int64, above: Float32, at_least: Float32,
                target: Float32, start_mass: Float32, wide_loads: cutlass.Constexpr):
    """``sampling_numba.sample_kept``: FlashInfer's sampling rule over the kept probabilities (``p > above`` and
    ``p >= at_least``) of probs[base:base + vocab] from a mass of ``start_mass`` before them, one block barrier a
    tile (warp scans; the warps' masses meet in shared memory and every warp names the crossing warp alike), whole
    tiles as 16-byte loads with ``wide_loads``. Returns (index from base, the rank of a thread holding it),
    computed at the end (CuTe rewrites no ``return`` under a run-time ``if``)."""
    warp_masses = SmemAllocator().allocate_tensor(Float32, cute.make_layout(2 * WARPS), 16)  # by tile parity
    warp = coop.this_warp()
    lane = Int32(block.rank() % 32)
    my_warp = Int32(block.rank() // 32)
    running = start_mass
    found = Int32(NO_INDEX)
    holder = Int32(0)
    last = Int32(-1)
    crossed = cutlass.Boolean(False)
    start = Int64(0)
    parity = Int32(0)
    while start < vocab and not crossed:
        items = coop.ThreadData(VEC, np.float32)
        if cutlass.const_expr(wide_loads):
            if vocab - start >= TILE:
                coop.load(block, probs, items, algorithm="vectorize", offset=base + start)
            else:
                coop.load(block, probs, items, offset=base + start, valid_items=vocab - start,
                          oob_default=np.float32(0))
        else:
            coop.load(block, probs, items, offset=base + start, valid_items=min(vocab - start, TILE),
                      oob_default=np.float32(0))
        kept = coop.ThreadData(VEC, np.float32)
        mine = Float32(0)
        my_last = Int32(-1)
        for i in cutlass.range_constexpr(VEC):
            kept[i] = items[i] if items[i] > above and items[i] >= at_least else Float32(0)
            if kept[i] > 0:
                my_last = Int32(start + block.rank() * VEC + i)
            mine += kept[i]
        before = coop.exclusive_sum(warp, mine)
        reach = before  # through this thread's items, added as the crossing warp adds them below
        for i in cutlass.range_constexpr(VEC):
            reach += kept[i]
        if lane == 31:
            warp_masses[parity * WARPS + my_warp] = reach
        cute.arch.sync_threads()
        warp_mass = warp_masses[parity * WARPS + lane]
        tile_mass = cute_coop.ThreadData(1, np.float32)
        warp_before = cute_coop.exclusive_sum(warp, warp_mass, aggregate_output=tile_mass)
        crosses = Int32(NO_INDEX)
        if warp_mass > 0 and (running + warp_before) + warp_mass > target:
            crosses = lane
        crossing = coop.reduce(warp, crosses, binary_op="min")  # (one REDUX)
        if crossing != Int32(NO_INDEX):  # the same in every warp
            crossed = cutlass.Boolean(True)
            at = running + coop.broadcast(warp, warp_before, src_rank=crossing & Int32(31))
            reach = before
            my_first = Int32(NO_INDEX)
            for i in cutlass.range_constexpr(VEC):
                reach += kept[i]
                if kept[i] > 0 and my_first == NO_INDEX and my_warp == crossing and at + reach > target:
                    my_first = Int32(start + block.rank() * VEC + i)
            first, warp_last = coop.reduce(warp, (my_first, my_last), binary_op=min_max)
            found = cutlass.select_(first != Int32(NO_INDEX), first, warp_last)
            holder = crossing * Int32(32)
        else:
            running += tile_mass[0]
            last = max(last, my_last)
        start += TILE
        parity = Int32(1) - parity
    if not crossed:  # rounding (or nothing kept) left no crossing: the last kept index
        found = max(coop.reduce(block, last, binary_op="max"), Int32(0))
    return found, holder


@cute.jit
def slice_kept(block, probs: cute.Tensor, begin: Int64, end: Int64, first: Int64, at_least: Float32):
    """(kept mass, last kept index or -1) of probs[begin:end] (kept: p > 0 and p >= at_least), whose first item is
    the row's index ``first``: one order-free pass (striped, 16 items a thread) and one tuple ``reduce``."""
    mass = Float32(0)
    last = Int32(-1)
    start = begin
    while start < end:
        items = coop.ThreadData(WIDE, np.float32)
        coop.load(block, probs, items, algorithm="striped", offset=start,
                  valid_items=min(end - start, WIDE_TILE), oob_default=np.float32(0))
        for i in cutlass.range_constexpr(WIDE):
            if items[i] > 0 and items[i] >= at_least:
                mass += items[i]
                last = Int32(first + (start - begin) + i * THREADS + block.rank())
        start += WIDE_TILE
    return coop.reduce(block, (mass, last), binary_op=sum_max)


@cute.jit
def chunk_length(vocab: Int64):
    """``sampling_numba.chunk_length``: items of each warp's chunk of a whole row."""
    return (vocab + WARPS * WARP_TILE - 1) // (WARPS * WARP_TILE) * WARP_TILE


@cute.jit
def warp_chunk(block, begin: Int64, vocab: Int64):
    """``sampling_numba.warp_chunk``: (the chunk's first index in the row, the lane, the warp's own tile origin, the
    chunk's begin and end as offsets)."""
    chunk = chunk_length(vocab)
    first = Int64(block.rank() // 32) * chunk
    return (first, Int32(block.rank() % 32), Int64(block.rank() // 32) * WARP_TILE, begin + first,
            begin + min(vocab, first + chunk))


@cute.jit
def warp_chunk_kept(block, probs: cute.Tensor, begin: Int64, vocab: Int64, at_least: Float32):
    """``sampling_numba.warp_chunk_kept``: warp w's kept mass and last kept index of chunk w, in its lane 0 (0 and -1
    in the other lanes)."""
    first, lane, origin, chunk_begin, chunk_end = warp_chunk(block, begin, vocab)
    warp = coop.this_warp()
    mass = Float32(0)
    last = Int32(-1)
    start = chunk_begin
    while start < chunk_end:
        items = coop.ThreadData(NARROW, np.float32)
        coop.load(warp, probs, items, algorithm="striped", offset=start - origin,
                  valid_items=min(chunk_end - start, WARP_TILE), oob_default=np.float32(0))
        for i in cutlass.range_constexpr(NARROW):
            if items[i] > 0 and items[i] >= at_least:
                mass += items[i]
                last = Int32(first + (start - chunk_begin) + i * 32 + lane)
        start += WARP_TILE
    mass, last = coop.reduce(warp, (mass, last), binary_op=sum_max, broadcast=False)
    if lane != 0:
        mass = Float32(0)
        last = Int32(-1)
    return mass, last


@cute.jit
def warp_crossing(part_masses: cute.Tensor, part_lasts: cute.Tensor, parts: Int32, u: Float32,
                  scaled: cutlass.Constexpr):
    """``sampling_numba.warp_crossing``: every warp alike, lane l reading parts l x PARTS_PER_LANE onwards of the
    shared ``part_masses`` and ``part_lasts``, (the part holding the sample or NO_INDEX, the mass before it, the row's
    last kept index, the target)."""
    warp = coop.this_warp()
    lane = Int32(warp.rank())
    masses = coop.ThreadData(PARTS_PER_LANE, np.float32)
    mine = Float32(0)
    my_last = Int32(-1)
    for j in cutlass.range_constexpr(PARTS_PER_LANE):
        masses[j] = Float32(0)
        if lane * PARTS_PER_LANE + j < parts:
            masses[j] = part_masses[lane * PARTS_PER_LANE + j]
            my_last = max(my_last, part_lasts[lane * PARTS_PER_LANE + j])
        mine += masses[j]
    total = cute_coop.ThreadData(1, np.float32)
    running = cute_coop.exclusive_sum(warp, mine, aggregate_output=total)
    target = u
    if cutlass.const_expr(scaled):
        target = u * total[0]
    crosses = Int32(NO_INDEX)
    before = Float32(0)
    for j in cutlass.range_constexpr(PARTS_PER_LANE):
        if crosses == NO_INDEX and masses[j] > 0 and running + masses[j] > target:
            crosses = lane * PARTS_PER_LANE + j
            before = running
        running += masses[j]
    crossing = coop.reduce(warp, crosses, binary_op="min")  # (int32 minima and maxima: one REDUX each)
    row_last = coop.reduce(warp, my_last, binary_op="max")
    before = coop.broadcast(warp, before, src_rank=Int32(Uint32(crossing) // Uint32(PARTS_PER_LANE)) & Int32(31))
    return crossing, before, row_last, target


@cute.jit
def sample_slices(block, probs: cute.Tensor, partials: cute.Tensor, lasts: cute.Tensor, arrive: cute.Tensor,
                  row: Int64, slices: Int64, part: Int64, begin: Int64, end: Int64, slice_length: Int64,
                  at_least: Float32, u: Float32, scaled: cutlass.Constexpr, rows_walkable: cutlass.Boolean):
    """``sampling_numba.sample_slices``: the kept mass by parts (a row's slices, one block each, meeting at a grid
    barrier; or a whole row's warp chunks, meeting in shared memory at one block barrier), every warp finding the
    crossing part alike (``warp_crossing``), then only that part walked; with ``rows_walkable``, in a launch of
    several waves (``walks_whole_rows``), the row walked from its start instead. (the sample, the rank of the thread
    holding it, whether this block writes it)."""
    none = Int32(NO_INDEX)
    smem = SmemAllocator()
    part_masses = smem.allocate_tensor(Float32, cute.make_layout(PART_SLOTS), 16)  # the row's parts
    part_lasts = smem.allocate_tensor(Int32, cute.make_layout(PART_SLOTS), 16)  # (warp_crossing)
    rank = Int32(block.rank())
    parts = Int32(WARPS)
    first = Int64(0)
    walk_begin = begin
    length = end - begin
    crossing = none
    running = Float32(0)
    row_last = Int32(-1)
    target = u
    walk = cutlass.Boolean(False)
    writes = cutlass.Boolean(True)
    whole_rows = cutlass.Boolean(False)
    if slices > 1:
        first = part * slice_length
        mass, last = slice_kept(block, probs, begin, end, first, at_least)
        if block.rank() == 0:
            partials[Int64(cute.arch.block_idx()[0])] = mass
            lasts[Int64(cute.arch.block_idx()[0])] = last
        grid_barrier(arrive)
        parts = Int32(slices)
        if rank < parts:  # one read of each slice's numbers a block, then shared memory
            part_masses[rank] = partials[row * slices + rank]
            part_lasts[rank] = lasts[row * slices + rank]
    elif rows_walkable and Int64(cute.arch.grid_dim()[0]) >= WHOLE_ROW_BLOCKS:  # walks_whole_rows: the row from its
        whole_rows = cutlass.Boolean(True)  # start, up to the sample
        walk = cutlass.Boolean(True)
    else:
        mine, my_last = warp_chunk_kept(block, probs, begin, end - begin, at_least)
        if rank % 32 == 0:
            part_masses[rank // 32] = mine
            part_lasts[rank // 32] = my_last
    if not whole_rows:  # one warp_crossing for both forms
        cute.arch.sync_threads()
        crossing, running, row_last, target = warp_crossing(part_masses, part_lasts, parts, u, scaled)
        if slices > 1:
            walk = Int64(crossing) == part
            writes = walk or (crossing == none and part == 0)
        elif crossing != none:  # one walk below for both forms: two calls of it spill more in this kernel
            walk = cutlass.Boolean(True)
            chunk = chunk_length(end - begin)
            first = Int64(crossing) * chunk
            walk_begin = begin + first
            length = min(end - begin - first, chunk)
    chosen = max(row_last, Int32(0))
    holder = Int32(0)
    if walk:
        found, holder = sample_kept(block, probs, walk_begin, length, Float32(0), at_least, target, running,
                                    True)  # (16-byte tile loads: they pay where rows are walked whole, batch >= 264)
        chosen = Int32(first + found)
    return chosen, holder, writes


@cute.kernel
def sampling_from_probs_kernel(probs: cute.Tensor, samples: cute.Tensor, partials: cute.Tensor, lasts: cute.Tensor,
                               arrive: cute.Tensor, vocab: Int64, slice_length: Int64, seed: Uint64,
                               offset: Uint64):
    """One block per row (slice_length >= vocab; partials, lasts and arrive unused), or per row slice in one launch
    (``sample_slices``)."""
    slices, row, part, begin, end = slice_of_block(vocab, slice_length)
    block = coop.this_block()
    u = philox_uniform(seed, offset, row)
    chosen, holder, writes = sample_slices(block, probs, partials, lasts, arrive, row, slices, part, begin, end,
                                           slice_length, Float32(0), u, False, cutlass.Boolean(True))
    if block.rank() == holder and writes:
        samples[row] = chosen


@cute.kernel
def min_p_sampling_from_probs_kernel(probs: cute.Tensor, samples: cute.Tensor, partials: cute.Tensor,
                                     lasts: cute.Tensor, arrive: cute.Tensor, vocab: Int64, slice_length: Int64,
                                     min_p: cute.Tensor, seed: Uint64, offset: Uint64):
    """The row's largest probability, then ``sample_slices`` over p >= largest * min_p with u scaled by their mass;
    over row slices the slices' largest meet in partials[blocks + block] first."""
    slices, row, part, begin, end = slice_of_block(vocab, slice_length)
    block = coop.this_block()
    u = philox_uniform(seed, offset, row)
    largest = Float32(0)
    start = begin
    while start < end:
        items = coop.ThreadData(WIDE, np.float32)
        coop.load(block, probs, items, algorithm="striped", offset=start,
                  valid_items=min(end - start, WIDE_TILE), oob_default=np.float32(0))
        for i in cutlass.range_constexpr(WIDE):
            largest = max(largest, items[i])
        start += WIDE_TILE
    largest = coop.reduce(block, largest, binary_op="max")
    if slices > 1:
        blocks = Int64(cute.arch.grid_dim()[0])
        if block.rank() == 0:
            partials[blocks + Int64(cute.arch.block_idx()[0])] = largest
        grid_barrier(arrive)
        mine = Float32(0)
        if block.rank() < slices:
            mine = partials[blocks + row * slices + block.rank()]
        largest = coop.reduce(block, mine, binary_op="max")
    chosen, holder, writes = sample_slices(block, probs, partials, lasts, arrive, row, slices, part, begin, end,
                                           slice_length, largest * min_p[row], u, True, cutlass.Boolean(False))
    if block.rank() == holder and writes:
        samples[row] = chosen


def above_two_pivots(a, b):
    """(mass above pivot 0, count above it, mass above pivot 1, count above it): sums."""
    return a[0] + b[0], a[1] + b[1], a[2] + b[2], a[3] + b[3]


@cute.jit
def warp_chunk_above_two(block, probs: cute.Tensor, begin: Int64, vocab: Int64, pivot0: Float32, pivot1: Float32):
    """``sampling_numba.warp_chunk_above_two``: warp w's (mass, count, last index) of the values of chunk w above
    pivot0 and above pivot1, in its lane 0 (zeros and -1 in the other lanes)."""
    first, lane, origin, chunk_begin, chunk_end = warp_chunk(block, begin, vocab)
    warp = coop.this_warp()
    mass0 = Float32(0)
    count0 = Int32(0)
    last0 = Int32(-1)
    mass1 = Float32(0)
    count1 = Int32(0)
    last1 = Int32(-1)
    start = chunk_begin
    while start < chunk_end:
        items = coop.ThreadData(NARROW, np.float32)
        coop.load(warp, probs, items, algorithm="striped", offset=start - origin,
                  valid_items=min(chunk_end - start, WARP_TILE), oob_default=np.float32(0))
        for i in cutlass.range_constexpr(NARROW):
            index = Int32(first + (start - chunk_begin) + i * 32 + lane)
            if items[i] > pivot0:
                mass0 += items[i]
                count0 += Int32(1)
                last0 = index
            if items[i] > pivot1:
                mass1 += items[i]
                count1 += Int32(1)
                last1 = index
        start += WARP_TILE
    mass0, count0, last0, mass1, count1, last1 = coop.reduce(
        warp, (mass0, count0, last0, mass1, count1, last1), binary_op=sums_and_lasts, broadcast=False)
    if lane != 0:
        mass0 = Float32(0)
        count0 = Int32(0)
        last0 = Int32(-1)
        mass1 = Float32(0)
        count1 = Int32(0)
        last1 = Int32(-1)
    return mass0, count0, last0, mass1, count1, last1


def sums_and_lasts(a, b):
    """Two (mass, count, last index) triples: sums and maxima."""
    return a[0] + b[0], a[1] + b[1], cutlass.max(a[2], b[2]), a[3] + b[3], a[4] + b[4], cutlass.max(a[5], b[5])


@cute.kernel
def top_k_top_p_sampling_from_probs_kernel(probs: cute.Tensor, samples: cute.Tensor, vocab: Int64,
                                           top_k: cute.Tensor, top_p: cute.Tensor, seed: Uint64, offset: Uint64):
    """``sampling_numba.top_k_top_p_sampling_from_probs_kernel``: FlashInfer's joint filter by rejection, each round
    one pass over the row by warp chunks whose masses above the new ``low`` are the next round's."""
    row = Int64(cute.arch.block_idx()[0])
    block = coop.this_block()
    base = row * vocab
    k = top_k[row]
    if k < 0 or k >= vocab:
        k = Int32(2**31 - 1)
    p = top_p[row]
    low = Float32(0)
    high = Float32(1)
    q = Float32(1)
    chosen = Int32(0)
    draw = Uint64(0)
    done = cutlass.Boolean(False)
    chunk = chunk_length(vocab)
    smem = SmemAllocator()
    chunk_masses = smem.allocate_tensor(Float32, cute.make_layout(WARPS), 16)  # each warp's chunk part of the round
    chunk_lasts = smem.allocate_tensor(Int32, cute.make_layout(WARPS), 16)
    lane = Int32(block.rank() % 32)
    my_warp = Int32(block.rank() // 32)
    mine, my_last = warp_chunk_kept(block, probs, base, vocab, Float32(0))  # round 0 keeps p > 0
    if lane == 0:
        chunk_masses[my_warp] = mine
        chunk_lasts[my_warp] = my_last
    while not done:
        u = philox_uniform(seed, offset + draw, row)
        draw += Uint64(1)
        cute.arch.sync_threads()  # the round's chunk parts (read before the block reduce below, whose barriers
        # keep the next round's writes after every read: one barrier a round)
        crossing, running, row_last, target = warp_crossing(chunk_masses, chunk_lasts, Int32(WARPS), u * q, False)
        if row_last < 0:  # nothing kept
            chosen = Int32(0)
            done = cutlass.Boolean(True)
        else:
            chosen = row_last
            if crossing != Int32(NO_INDEX):
                first = Int64(crossing) * chunk
                found, holder = sample_kept(block, probs, base + first, min(vocab - first, chunk), low, Float32(0),
                                            target, running, False)
                chosen = coop.broadcast(block, Int32(first + found), src_rank=holder & Int32(THREADS - 1))
            pivot0 = probs[base + chosen]
            pivot1 = (pivot0 + high) * Float32(0.5)
            mass0, count0, last0, mass1, count1, last1 = warp_chunk_above_two(block, probs, base, vocab, pivot0,
                                                                              pivot1)
            sum0, above0, sum1, above1 = coop.reduce(block, (mass0, count0, mass1, count1),
                                                     binary_op=above_two_pivots)
            if above0 < k and sum0 < p:
                done = cutlass.Boolean(True)
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
                done = cutlass.Boolean(True)
    if block.rank() == 0:
        samples[row] = chosen


# ---------------------------------------------------------------------------------------------- launchers
@cute.jit
def launch_softmax(logits: cute.Tensor, out: cute.Tensor, vocab: Int64, inv_temperature: Float32, batch: Int32):
    softmax_kernel(logits, out, vocab, inv_temperature).launch(grid=(batch, 1, 1), block=(THREADS, 1, 1))


@functools.cache
def softmax_cluster_launcher(threads: int, held: int):
    """The ``@cute.jit`` launcher of ``softmax_cluster_kernel`` for ``cluster_softmax_plan``'s (threads, held): the
    kernel's arguments, then the batch (a cluster of CLUSTER blocks a row)."""

    @cute.jit
    def launch_softmax_cluster(logits: cute.Tensor, out: cute.Tensor, vocab: Int64, slice_length: Int64,
                               inv_temperature: Float32, batch: Int32):
        softmax_cluster_kernel(logits, out, vocab, slice_length, inv_temperature, threads, held).launch(
            grid=(batch * CLUSTER, 1, 1), block=(threads, 1, 1), cluster=(CLUSTER, 1, 1))

    return launch_softmax_cluster


@cute.jit
def launch_softmax_slices(logits: cute.Tensor, partials: cute.Tensor, out: cute.Tensor, arrive: cute.Tensor,
                          vocab: Int64, slice_length: Int64, inv_temperature: Float32, blocks: Int32):
    softmax_slices_kernel(logits, partials, out, arrive, vocab, slice_length, inv_temperature).launch(
        grid=(blocks, 1, 1), block=(THREADS, 1, 1))


@cute.jit
def launch_top_k_mask_logits(logits: cute.Tensor, out: cute.Tensor, counts: cute.Tensor, arrive: cute.Tensor,
                             vocab: Int64, slice_length: Int64, top_k: cute.Tensor, blocks: Int32):
    top_k_mask_logits_kernel(logits, out, counts, arrive, vocab, slice_length, top_k).launch(
        grid=(blocks, 1, 1), block=(THREADS, 1, 1))


@cute.jit
def launch_top_k_renorm_probs(probs: cute.Tensor, out: cute.Tensor, counts: cute.Tensor, partials: cute.Tensor,
                              arrive: cute.Tensor, vocab: Int64, slice_length: Int64, top_k: cute.Tensor,
                              blocks: Int32):
    top_k_renorm_probs_kernel(probs, out, counts, partials, arrive, vocab, slice_length, top_k).launch(
        grid=(blocks, 1, 1), block=(THREADS, 1, 1))


@cute.jit
def launch_top_p_renorm_probs(probs: cute.Tensor, out: cute.Tensor, masses: cute.Tensor, partials: cute.Tensor,
                              arrive: cute.Tensor, vocab: Int64, slice_length: Int64, top_p: cute.Tensor,
                              blocks: Int32):
    top_p_renorm_probs_kernel(probs, out, masses, partials, arrive, vocab, slice_length, top_p).launch(
        grid=(blocks, 1, 1), block=(THREADS, 1, 1))


@cute.jit
def launch_sampling_from_probs(probs: cute.Tensor, samples: cute.Tensor, partials: cute.Tensor, lasts: cute.Tensor,
                               arrive: cute.Tensor, vocab: Int64, slice_length: Int64, seed: Uint64, offset: Uint64,
                               blocks: Int32):
    sampling_from_probs_kernel(probs, samples, partials, lasts, arrive, vocab, slice_length, seed, offset).launch(
        grid=(blocks, 1, 1), block=(THREADS, 1, 1))


@cute.jit
def launch_min_p_sampling_from_probs(probs: cute.Tensor, samples: cute.Tensor, partials: cute.Tensor,
                                     lasts: cute.Tensor, arrive: cute.Tensor, vocab: Int64, slice_length: Int64,
                                     min_p: cute.Tensor, seed: Uint64, offset: Uint64, blocks: Int32):
    min_p_sampling_from_probs_kernel(probs, samples, partials, lasts, arrive, vocab, slice_length, min_p, seed,
                                     offset).launch(grid=(blocks, 1, 1), block=(THREADS, 1, 1))


@cute.jit
def launch_top_k_top_p_sampling_from_probs(probs: cute.Tensor, samples: cute.Tensor, vocab: Int64, top_k: cute.Tensor,
                                           top_p: cute.Tensor, seed: Uint64, offset: Uint64, batch: Int32):
    top_k_top_p_sampling_from_probs_kernel(probs, samples, vocab, top_k, top_p, seed, offset).launch(
        grid=(batch, 1, 1), block=(THREADS, 1, 1))
