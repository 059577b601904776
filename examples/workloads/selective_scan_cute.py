"""Mamba's selective scan in the CuTe DSL with cuda.coop: the kernel of ``selective_scan_numba.py`` written for
``cuda.coop.cutlass``, with the same tiling, cooperative calls and carry, so that the two files read side by side.

One block per (batch, dim) row, the row walked in chunks of ``threads x items`` positions (``selective_scan_plan``);
per chunk a ``load`` of u and delta, then per state a ``load`` of B[n] and C[n], one block ``inclusive_scan`` over
the (decay, value) pairs with the operator ``ssm_combine``, and the output's ``C[n] * h`` term; then the gating and
a ``store``. The running state crosses chunks through thread 0's first pair and a shared-memory carry written by the
last thread, as in the numba kernel (``prefix_op`` takes no tuple operand: O19).

What differs from ``selective_scan_numba.py``, and why:

* The kernel is a ``@cute.kernel`` with a ``@cute.jit`` launcher (``launch``: grid = batch x dim, block =
  threads); helpers are ``@cute.jit`` functions, which CuTe inlines while it traces. ``kernel_for`` builds one pair
  per (threads, items, dtype), as numba's builds one kernel.
* Loops over a payload's items are ``cutlass.range_constexpr(items)`` (unrolled while tracing); the chunk loop is a
  run-time ``while`` and the state loop ``cutlass.range(dstate)``, as numba's ``range(dstate)``.
* ``exp2_approx`` is ``cute.math.exp2(x, approx=True, ftz=True)`` and the gate's reciprocal ``cute.arch.rcp_approx``
  (numba: the same PTX instructions inline); ``log1p`` is ``cute.math``'s; the operator ``ssm_combine`` is the same
  code (products and sums trace as they are); per-position choices use ``cutlass.select_`` where numba writes
  ``x if c else y``.
* bfloat16 bits arrive as Int16 (``tensor.view(torch.int16)``: DLPack carries int16 from every torch, uint16 only
  from recent ones; numba's kernel takes uint16) and become float32 by ``(Uint32(bits) << 16).bitcast(Float32)``,
  and back by the same rounding on ``x.bitcast(Uint32)``: numba goes through a one-item local array, having no
  scalar bitcast.
* The carry and the rates are ``SmemAllocator`` tensors (``allocate_tensor(Float32, make_layout(MAX_DSTATE))``;
  numba: ``cuda.shared.array``), and ``cuda.syncthreads()`` is ``cute.arch.sync_threads()``.
* A flag read in a run-time ``if`` (``softplus``, ``gated``) is compared with zero explicitly (an ``Int32``).
* Rows of even length read their full chunks as 32-bit words of two bfloat16 positions, as numba's kernel: the
  Int16 tensor seen as Uint32 by ``cute.recast_tensor`` (numba: ``array.view(np.uint32)``), at half the offset;
  the compile-time choice is ``cutlass.const_expr(paired)`` (numba: a different device function per kernel).

The NumPy oracle is ``selective_scan_reference.py``; ``cute_selective_scan.py`` runs and checks the kernels.
"""
from __future__ import annotations

import functools

import numpy as np
import cutlass  # noqa: I001  (the compiler first, then cuda.coop)
import cutlass.cute as cute
import cuda.coop.cutlass as cute_coop  # noqa: F401  (registers the backend)
from cuda import coop
# (pure Python, shared with numba)
from selective_scan_plan import LOG2E, MAX_DSTATE, chunks, reads_pairs, tiling  # noqa: F401
from sfu_cute import exp2_approx  # the SFU's 2**x

from cutlass import Float32, Int16, Int32, Int64, Uint32
from cutlass.memory import SmemAllocator

LOAD = "vectorize"  # full chunks: each thread's items as 16-byte vector loads (the ragged last chunk: guarded)


def ssm_combine(first, second):
    """Two (decay, value) steps as one: first (a1, b1), then (a2, b2): h -> a2 * (a1 * h + b1) + b2."""
    return first[0] * second[0], second[0] * first[1] + second[1]


@cute.jit
def exp_approx(x: Float32):
    return exp2_approx(x * Float32(LOG2E))


@cute.jit
def widen_float32(x):
    return Float32(x)


@cute.jit
def widen_bfloat16(bits):
    """bfloat16 bits (Int16) -> Float32: the bits shifted into the high half (the sign extension shifts out)."""
    return (Uint32(bits) << Uint32(16)).bitcast(Float32)


@cute.jit
def widen_pair_low(word: Uint32):
    """The bfloat16 in a 32-bit word's low half (the earlier of two positions) as Float32: one shift."""
    return (word << Uint32(16)).bitcast(Float32)


@cute.jit
def widen_pair_high(word: Uint32):
    """The bfloat16 in a 32-bit word's high half (the later position) as Float32: one mask."""
    return (word & Uint32(0xFFFF0000)).bitcast(Float32)


@cute.jit
def narrow_float32(x: Float32):
    return x


@cute.jit
def narrow_bfloat16(x: Float32):
    """Float32 -> bfloat16 bits, rounded to nearest even (a NaN stays a quiet NaN)."""
    bits = x.bitcast(Uint32)
    rounded = Int16((bits + Uint32(0x7FFF) + ((bits >> Uint32(16)) & Uint32(1))) >> Uint32(16))
    return cutlass.select_(bits & Uint32(0x7FFFFFFF) > Uint32(0x7F800000), Int16(0x7FC0), rounded)


@functools.cache
def kernel_for(threads: int, items: int, dtype: str, paired: bool = False):
    """The ``@cute.jit`` launcher for blocks of ``threads`` x ``items`` positions and inputs of ``dtype``
    ("float32", or "bfloat16" as Int16 bits): ``launch(u, delta, A, B, C, D, z, delta_bias, out, last_state, dim,
    seqlen, dstate, softplus, gated, rows)`` on flattened tensors, as numba's kernel takes them, plus the number of
    rows (batch x dim: the grid). ``paired`` (bfloat16 rows of even length only: ``selective_scan_plan.reads_pairs``):
    full chunks are read as 32-bit words of two positions, each widened with one shift or one mask."""
    assert not paired or dtype == "bfloat16", "pairs are two bfloat16 positions"
    chunk = threads * items
    last = threads - 1
    raw_type = Int16 if dtype == "bfloat16" else Float32
    raw_numpy = np.int16 if dtype == "bfloat16" else np.float32
    widen = widen_bfloat16 if dtype == "bfloat16" else widen_float32
    narrow = narrow_bfloat16 if dtype == "bfloat16" else narrow_float32
    words = items // 2

    @cute.jit
    def widen_into(raw, wide):
        for i in cutlass.range_constexpr(items):
            wide[i] = widen(raw[i])

    @cute.jit
    def widen_words_into(pairs, wide):
        for j in cutlass.range_constexpr(words):
            wide[2 * j] = widen_pair_low(pairs[j])
            wide[2 * j + 1] = widen_pair_high(pairs[j])

    @cute.jit
    def load_full_pairs(block, first: cute.Tensor, second: cute.Tensor, offset: Int64, wide_first, wide_second):
        """Two full chunks at an even offset, as 32-bit words: both loads issued, then both widened."""
        pairs_first = coop.ThreadData(words, np.uint32)
        pairs_second = coop.ThreadData(words, np.uint32)
        coop.load(block, cute.recast_tensor(first, Uint32), pairs_first, algorithm=LOAD, offset=offset // 2)
        coop.load(block, cute.recast_tensor(second, Uint32), pairs_second, algorithm=LOAD, offset=offset // 2)
        widen_words_into(pairs_first, wide_first)
        widen_words_into(pairs_second, wide_second)

    @cute.jit
    def load_two_widened(block, first: cute.Tensor, second: cute.Tensor, offset: Int64, valid: Int64, wide_first,
                         wide_second):
        """wide_first, wide_second <- two tensors' chunks at one offset (Float32; past ``valid``, zeros), both loads
        issued before either is used, each path widening its own items: one branch on the chunk's length around
        both (with a branch around each, whose two paths give the items in different registers, the first load's
        items were needed where its branch ended, before the second load was issued; widened after the paths
        meet, a bfloat16 item took an extraction and a shift)."""
        if valid == chunk:
            if cutlass.const_expr(paired):
                load_full_pairs(block, first, second, offset, wide_first, wide_second)
            else:
                raw_first = coop.ThreadData(items, raw_numpy)
                raw_second = coop.ThreadData(items, raw_numpy)
                coop.load(block, first, raw_first, algorithm=LOAD, offset=offset)
                coop.load(block, second, raw_second, algorithm=LOAD, offset=offset)
                widen_into(raw_first, wide_first)
                widen_into(raw_second, wide_second)
        else:
            raw_first = coop.ThreadData(items, raw_numpy)
            raw_second = coop.ThreadData(items, raw_numpy)
            coop.load(block, first, raw_first, offset=offset, valid_items=valid, oob_default=raw_type(0))
            coop.load(block, second, raw_second, offset=offset, valid_items=valid, oob_default=raw_type(0))
            widen_into(raw_first, wide_first)
            widen_into(raw_second, wide_second)

    @cute.jit
    def load_one_widened(block, src: cute.Tensor, offset: Int64, valid: Int64, wide):
        """wide <- one tensor's chunk at ``offset`` (Float32; past ``valid``, zeros)."""
        if valid == chunk:
            if cutlass.const_expr(paired):
                pairs = coop.ThreadData(words, np.uint32)
                coop.load(block, cute.recast_tensor(src, Uint32), pairs, algorithm=LOAD, offset=offset // 2)
                widen_words_into(pairs, wide)
            else:
                raw = coop.ThreadData(items, raw_numpy)
                coop.load(block, src, raw, algorithm=LOAD, offset=offset)
                widen_into(raw, wide)
        else:
            raw = coop.ThreadData(items, raw_numpy)
            coop.load(block, src, raw, offset=offset, valid_items=valid, oob_default=raw_type(0))
            widen_into(raw, wide)

    @cute.kernel
    def selective_scan_kernel(u: cute.Tensor, delta: cute.Tensor, A: cute.Tensor, B: cute.Tensor, C: cute.Tensor,
                              D: cute.Tensor, z: cute.Tensor, delta_bias: cute.Tensor, out: cute.Tensor,
                              last_state: cute.Tensor, dim: Int64, seqlen: Int64, dstate: Int32, softplus: Int32,
                              gated: Int32):
        block = coop.this_block()
        rank = Int32(block.rank())
        row = Int64(cute.arch.block_idx()[0])
        batch_index = row // dim
        channel = row % dim
        smem = SmemAllocator()
        carry = smem.allocate_tensor(Float32, cute.make_layout(MAX_DSTATE), 16)
        rates = smem.allocate_tensor(Float32, cute.make_layout(MAX_DSTATE), 16)  # A[channel, n] * log2(e)
        for n in cutlass.range(rank, MAX_DSTATE, threads):
            carry[n] = Float32(0)
        for n in cutlass.range(rank, dstate, threads):
            rates[n] = A[channel * dstate + n] * Float32(LOG2E)
        d_skip = D[channel]
        bias = delta_bias[channel]
        start = Int64(0)
        while start < seqlen:
            cute.arch.sync_threads()  # the previous chunk's carries are written (and the first chunk's zeros)
            valid = cutlass.min(seqlen - start, Int64(chunk))
            offset = row * seqlen + start
            steps = coop.ThreadData(items, np.float32)
            inputs = coop.ThreadData(items, np.float32)
            load_two_widened(block, delta, u, offset, valid, steps, inputs)
            driven = coop.ThreadData(items, np.float32)
            y = coop.ThreadData(items, np.float32)
            for i in cutlass.range_constexpr(items):
                steps[i] = steps[i] + bias
            if softplus != 0:  # log(1 + e^step) up to 20, branch-free: e^step by the SFU, log1p exact
                for i in cutlass.range_constexpr(items):
                    soft = cute.math.log1p(exp_approx(cutlass.min(steps[i], Float32(20))))
                    steps[i] = cutlass.select_(steps[i] <= Float32(20), soft, steps[i])
            for i in cutlass.range_constexpr(items):
                step = steps[i]
                driven[i] = step * inputs[i]
                y[i] = d_skip * inputs[i]
            state_offset = batch_index * dstate * seqlen + start  # B[batch_index, n, start], n = 0 first
            for n in cutlass.range(dstate):
                rate = rates[n]
                b_n = coop.ThreadData(items, np.float32)
                c_n = coop.ThreadData(items, np.float32)
                load_two_widened(block, B, C, state_offset, valid, b_n, c_n)  # in flight together: one wait
                decay = coop.ThreadData(items, np.float32)
                value = coop.ThreadData(items, np.float32)
                if valid == chunk:
                    for i in cutlass.range_constexpr(items):
                        decay[i] = exp2_approx(steps[i] * rate)
                        value[i] = b_n[i] * driven[i]
                else:  # the ragged last chunk: positions past the row's end hold the neutral pair (1, 0)
                    for i in cutlass.range_constexpr(items):
                        inside = Int64(rank * items + i) < valid
                        decay[i] = cutlass.select_(inside, exp2_approx(steps[i] * rate), Float32(1))
                        value[i] = cutlass.select_(inside, b_n[i] * driven[i], Float32(0))
                if rank == 0:  # the carried state enters as the pair (1, h) in front of position 0
                    value[0] = decay[0] * carry[n] + value[0]
                _, h = coop.inclusive_scan(block, (decay, value), scan_op=ssm_combine, algorithm="warp_scans")
                if rank == last:
                    carry[n] = h[items - 1]
                for i in cutlass.range_constexpr(items):
                    y[i] = y[i] + c_n[i] * h[i]
                state_offset += seqlen
            if gated != 0:
                gate = coop.ThreadData(items, np.float32)
                load_one_widened(block, z, offset, valid, gate)
                for i in cutlass.range_constexpr(items):
                    y[i] = y[i] * gate[i] * cute.arch.rcp_approx(Float32(1) + exp_approx(-gate[i]))
            result = coop.ThreadData(items, raw_numpy)
            for i in cutlass.range_constexpr(items):
                result[i] = narrow(y[i])
            if valid == chunk:
                coop.store(block, out, result, algorithm=LOAD, offset=offset)
            else:
                coop.store(block, out, result, offset=offset, valid_items=valid)
            start += chunk
        cute.arch.sync_threads()
        for n in cutlass.range(rank, dstate, threads):
            last_state[row * dstate + n] = carry[n]

    @cute.jit
    def launch(u: cute.Tensor, delta: cute.Tensor, A: cute.Tensor, B: cute.Tensor, C: cute.Tensor, D: cute.Tensor,
               z: cute.Tensor, delta_bias: cute.Tensor, out: cute.Tensor, last_state: cute.Tensor, dim: Int64,
               seqlen: Int64, dstate: Int32, softplus: Int32, gated: Int32, rows: Int32):
        selective_scan_kernel(u, delta, A, B, C, D, z, delta_bias, out, last_state, dim, seqlen, dstate, softplus,
                              gated).launch(grid=(rows, 1, 1), block=(threads, 1, 1))

    return launch
