"""Mamba's selective scan (the forward of mamba-ssm's ``selective_scan_fn``) in numba-cuda-mlir with cuda.coop.

One block per (batch, dim) row, the row's positions walked in chunks of ``threads x items`` (``selective_scan_plan``:
2048 for rows longer than 1024), each thread holding ``items`` consecutive positions. Per chunk:

* ``load`` u and delta (float32, or bfloat16 bits as uint16); delta gets its bias and the softplus; ``D * u`` starts
  the output;
* for each state ``n``: ``load`` B[n] and C[n] of the chunk, make the (decay, value) pair of every position,
  ``(exp(delta * A[n]), delta * B[n] * u)``, and run one block ``inclusive_scan`` over the pairs with the
  non-commutative operator ``ssm_combine``: the scanned value of position ``t`` is the state ``h[n]`` after ``t``;
  the output adds ``C[n] * h[n]``;
* gate the output with ``z * sigmoid(z)`` and ``store`` it.

The running state crosses chunks as the scan's prefix. mamba-ssm seeds CUB's scan with a block prefix callback that
holds the running (decay, value) pair; cuda.coop's ``prefix_op`` takes one operand, not a tuple (O19), so here the
prefix enters through the data instead: thread 0 folds the carried state into its first pair,
``(a, b) -> (a, a * h + b)`` (the pair ``(1, h)`` combined in front), and the last thread writes the chunk's final
state to shared memory for the next chunk (one barrier per chunk, not per state). Positions past the row's end hold
the neutral pair ``(1, 0)``, so the last thread's last state is the row's: the ``last_state`` output.

What the state loop costs decides the kernel's speed (bfloat16 inputs halve its bytes, not its instructions), so it is
kept short: B[n] and C[n] are loaded together (one wait for memory per state), as 16-byte vectors (8 bfloat16 items
a vector; rows of even length as 32-bit words of two positions, each widened by one shift or one mask); full chunks
build their pairs without a test per position (only the ragged last chunk selects the neutral pair);
``A[n] * log2(e)`` is read from shared memory (stored once per row); and the exponentials are the SFU's
``ex2.approx.ftz`` (``exp2_approx``: one instruction, where ``math.exp2`` adds a range test and two multiplies), the
gate's division its ``rcp.approx.ftz``, the instructions mamba-ssm's ``--use_fast_math`` build uses. numba-cuda-mlir
has no fast-math switch on this route, so the two come as inline PTX (``sfu_numba.py``).

numba-cuda-mlir computes 32-bit integer arithmetic in 64 bits, tests signed indices for a negative value, divides
signed ints through a called 64-bit routine, runs ``range()`` on 64-bit counters and gives its arrays a run-time
stride; so the kernel's row, channel, state and position indices and its loop counters are uint32 (each sum wrapped
back), its loops ``while`` loops, the row's division uint32, its arrays stride-1 views (``ravel``), and only the
element offsets into the rows int64, as the CuTe kernel's; the block is declared (``launch_bounds``), as CuTe's
launch declares it. The float arithmetic and its order are unchanged (tests/compile/test_selective_scan_numba_sass.py
holds the SASS to CuTe's).

The NumPy oracle is ``selective_scan_reference.py``; ``selective_scan.py`` runs and checks the kernels.
"""
from __future__ import annotations

import functools
import math

import numpy as np
from numba_cuda_mlir import cuda  # noqa: I001  (the compiler first, then cuda.coop)
import cuda.coop.numba_mlir as numba_coop  # noqa: F401  (registers the backend)
from cuda import coop
# (pure Python, shared with CuTe)
from selective_scan_plan import LOG2E, MAX_DSTATE, chunks, reads_pairs, tiling  # noqa: F401
from sfu_numba import exp2_approx, rcp_approx  # the SFU's 2**x and 1/x (inline PTX)

LOAD = "vectorize"  # full chunks: each thread's items as 16-byte vector loads (the ragged last chunk: guarded)


def ssm_combine(first, second):
    """Two (decay, value) steps as one: first (a1, b1), then (a2, b2): h -> a2 * (a1 * h + b1) + b2."""
    return first[0] * second[0], second[0] * first[1] + second[1]


@cuda.jit(device=True, inline="always")
def float_of_bits(raw):
    """The float32 whose bits are ``raw`` (numba-cuda-mlir 0.6 has no scalar bitcast: a one-item local array viewed
    as float32, kept in a register)."""
    slot = cuda.local.array(1, np.uint32)
    slot[0] = raw
    return slot.view(np.float32)[0]


@cuda.jit(device=True, inline="always")
def bits_of_float(x):
    slot = cuda.local.array(1, np.float32)
    slot[0] = x
    return slot.view(np.uint32)[0]


@cuda.jit(device=True, inline="always")
def exp_approx(x):
    return exp2_approx(x * np.float32(LOG2E))


@cuda.jit(device=True, inline="always")
def widen_float32(x):
    return np.float32(x)


@cuda.jit(device=True, inline="always")
def widen_bfloat16(bits):
    """bfloat16 bits (uint16) -> float32."""
    return float_of_bits(np.uint32(np.uint32(bits) << np.uint32(16)))


@cuda.jit(device=True, inline="always")
def narrow_float32(x):
    return np.float32(x)


@cuda.jit(device=True, inline="always")
def narrow_bfloat16(x):
    """float32 -> bfloat16 bits, rounded to nearest even (a NaN stays a quiet NaN)."""
    bits = bits_of_float(x)
    if bits & np.uint32(0x7FFFFFFF) > np.uint32(0x7F800000):
        return np.uint16(0x7FC0)
    # (each uint32 sum wrapped back: numba-cuda-mlir adds uint32s in 64 bits; a NaN, the only input whose sum would
    # carry past bit 31, returned above, and the carry never reached the 16 bits kept)
    rounded = np.uint32(np.uint32(bits + np.uint32(0x7FFF)) + np.uint32((bits >> np.uint32(16)) & np.uint32(1)))
    return np.uint16(rounded >> np.uint32(16))


@cuda.jit(device=True, inline="always")
def widen_pair_low(word):
    """The bfloat16 in a 32-bit word's low half (the earlier of two positions) as float32: one shift."""
    return float_of_bits(np.uint32(word << np.uint32(16)))


@cuda.jit(device=True, inline="always")
def widen_pair_high(word):
    """The bfloat16 in a 32-bit word's high half (the later position) as float32: one mask."""
    return float_of_bits(np.uint32(word & np.uint32(0xFFFF0000)))


@functools.cache
def kernel_for(threads: int, items: int, dtype: str, paired: bool = False):
    """The kernel for blocks of ``threads`` x ``items`` positions and inputs of ``dtype`` ("float32", or "bfloat16"
    as uint16 bits). Launch: ``kernel[batch * dim, threads](u, delta, A, B, C, D, z, delta_bias, out, last_state,
    dim, seqlen, dstate, softplus, gated)`` on flattened C-contiguous arrays (``D`` and ``delta_bias`` always given:
    zeros when absent; ``z`` read only when ``gated``). ``paired`` (bfloat16 rows of even length only:
    ``selective_scan_plan.reads_pairs``): full chunks are read as 32-bit words of two positions, each widened with one
    shift or one mask (from 16-bit items it took an extraction and a shift)."""
    assert not paired or dtype == "bfloat16", "pairs are two bfloat16 positions"
    chunk = threads * items
    last = threads - 1
    raw_type = np.uint16 if dtype == "bfloat16" else np.float32
    widen = widen_bfloat16 if dtype == "bfloat16" else widen_float32
    narrow = narrow_bfloat16 if dtype == "bfloat16" else narrow_float32
    zero = raw_type(0)
    words = items // 2
    # numba-cuda-mlir computes int32/uint32 arithmetic in 64 bits, tests every signed index for a negative value,
    # divides signed ints through a called 64-bit routine, runs range() on 64-bit counters and gives its arrays a
    # run-time stride (a 64-bit multiply per index): the row, channel, state and position indices below are uint32
    # (each sum wrapped back, so that the 64-bit steps fold to 32-bit ones), the loops while loops on uint32
    # counters, the arrays' stride-1 views (ravel) indexed by them. Only the element offsets into the (batch, dim,
    # seqlen) and (batch, dstate, seqlen) arrays are 64-bit, as CuTe's Int64 offsets.
    u = np.uint32
    w = np.int64  # (cuda.coop takes offsets as int64, or unsigned of at most 32 bits)
    one, zero_index, block_threads = u(1), u(0), u(threads)
    chunk_items, item_count, last_rank = u(chunk), u(items), u(last)

    @cuda.jit(device=True, inline="always")
    def widen_into(raw, wide):
        for i in range(items):
            wide[i] = widen(raw[i])

    @cuda.jit(device=True, inline="always")
    def widen_words_into(pairs, wide):
        for j in range(words):
            wide[2 * j] = widen_pair_low(pairs[j])
            wide[2 * j + 1] = widen_pair_high(pairs[j])

    if paired:
        @cuda.jit(device=True, inline="always")
        def load_full_one(block, src, offset, wide):
            """A full chunk at an even offset, as 32-bit words, widened."""
            pairs = coop.ThreadData(words, dtype=np.uint32)
            coop.load(block, src.view(np.uint32), pairs, algorithm=LOAD, offset=offset >> w(1))
            widen_words_into(pairs, wide)

        @cuda.jit(device=True, inline="always")
        def load_full(block, first, second, offset, wide_first, wide_second):
            """Two full chunks at an even offset, as 32-bit words: both loads issued, then both widened."""
            pairs_first = coop.ThreadData(words, dtype=np.uint32)
            pairs_second = coop.ThreadData(words, dtype=np.uint32)
            coop.load(block, first.view(np.uint32), pairs_first, algorithm=LOAD, offset=offset >> w(1))
            coop.load(block, second.view(np.uint32), pairs_second, algorithm=LOAD, offset=offset >> w(1))
            widen_words_into(pairs_first, wide_first)
            widen_words_into(pairs_second, wide_second)
    else:
        @cuda.jit(device=True, inline="always")
        def load_full_one(block, src, offset, wide):
            """A full chunk, widened."""
            raw = coop.ThreadData(items, dtype=raw_type)
            coop.load(block, src, raw, algorithm=LOAD, offset=offset)
            widen_into(raw, wide)

        @cuda.jit(device=True, inline="always")
        def load_full(block, first, second, offset, wide_first, wide_second):
            """Two full chunks: both loads issued, then both widened."""
            raw_first = coop.ThreadData(items, dtype=raw_type)
            raw_second = coop.ThreadData(items, dtype=raw_type)
            coop.load(block, first, raw_first, algorithm=LOAD, offset=offset)
            coop.load(block, second, raw_second, algorithm=LOAD, offset=offset)
            widen_into(raw_first, wide_first)
            widen_into(raw_second, wide_second)

    @cuda.jit(device=True, inline="always")
    def load_one_widened(block, src, offset, valid, wide):
        """wide <- one array's chunk at ``offset`` (float32; past ``valid``, zeros)."""
        if valid == chunk_items:
            load_full_one(block, src, offset, wide)
        else:
            raw = coop.ThreadData(items, dtype=raw_type)
            coop.load(block, src, raw, offset=offset, valid_items=valid, oob_default=zero)
            widen_into(raw, wide)

    @cuda.jit(device=True, inline="always")
    def load_two_widened(block, first, second, offset, valid, wide_first, wide_second):
        """wide_first, wide_second <- two arrays' chunks at one offset (float32; past ``valid``, zeros), both loads
        issued before either is used, each path widening its own items: one branch on the chunk's length around
        both (with a branch around each, whose two paths give the items in different registers, the first load's
        items were needed where its branch ended, before the second load was issued; widened after the paths
        meet, a bfloat16 item took an extraction and a shift)."""
        if valid == chunk_items:
            load_full(block, first, second, offset, wide_first, wide_second)
        else:
            raw_first = coop.ThreadData(items, dtype=raw_type)
            raw_second = coop.ThreadData(items, dtype=raw_type)
            coop.load(block, first, raw_first, offset=offset, valid_items=valid, oob_default=zero)
            coop.load(block, second, raw_second, offset=offset, valid_items=valid, oob_default=zero)
            widen_into(raw_first, wide_first)
            widen_into(raw_second, wide_second)

    @cuda.jit(launch_bounds=threads)
    def selective_scan_kernel(u_in, delta_in, A_in, B_in, C_in, D_in, z_in, bias_in, out_in, last_state_in, dim,
                              seqlen, dstate, softplus, gated):
        # stride-1 views: one 64-bit add per access, no multiply by a run-time stride
        u_, delta, A, B, C = u_in.ravel(), delta_in.ravel(), A_in.ravel(), B_in.ravel(), C_in.ravel()
        D, z, delta_bias, out, last_state = D_in.ravel(), z_in.ravel(), bias_in.ravel(), out_in.ravel(), \
            last_state_in.ravel()
        block = coop.this_block()
        rank = u(block.rank())
        dims = u(dim)
        length = u(seqlen)  # a row's positions (below 2**31)
        states = u(dstate)
        row = u(cuda.blockIdx.x)
        batch_index = u(row // dims)  # 32-bit unsigned division (numba's int64 one is a called routine)
        channel = u(row - u(batch_index * dims))
        first_item = u(rank * item_count)  # this thread's first position in a chunk
        carry = cuda.shared.array(MAX_DSTATE, np.float32)  # each state's value at the end of the previous chunk
        rates = cuda.shared.array(MAX_DSTATE, np.float32)  # A[channel, n] * log2(e), read once per row
        slot = rank  # (a name of its own: n, the state loop's counter, must not derive from the rank)
        while slot < u(MAX_DSTATE):
            carry[slot] = np.float32(0)
            slot = u(slot + block_threads)
        slot = rank
        row_rates = u(channel * states)
        while slot < states:
            rates[slot] = A[u(row_rates + slot)] * np.float32(LOG2E)
            slot = u(slot + block_threads)
        d_skip = D[channel]
        bias = delta_bias[channel]
        row_offset = w(w(row) * w(length))  # u[row, 0]
        batch_offset = w(w(u(batch_index * states)) * w(length))  # B[batch_index, 0, 0]
        start = u(0)
        while start < length:
            cuda.syncthreads()  # the previous chunk's carries are written (and the first chunk's zeros)
            remaining = u(length - start)
            valid = remaining if remaining < chunk_items else chunk_items  # (numba's min of uint32s is signed)
            offset = w(row_offset + w(start))
            steps = coop.ThreadData(items, dtype=np.float32)
            inputs = coop.ThreadData(items, dtype=np.float32)
            load_two_widened(block, delta, u_, offset, valid, steps, inputs)
            driven = coop.ThreadData(items, dtype=np.float32)  # delta * u
            y = coop.ThreadData(items, dtype=np.float32)
            for i in range(items):
                steps[i] += bias
            if softplus:  # log(1 + e^step) up to 20, branch-free: e^step by the SFU, log1p exact
                for i in range(items):
                    soft = math.log1p(exp_approx(min(steps[i], np.float32(20))))
                    steps[i] = soft if steps[i] <= np.float32(20) else steps[i]
            for i in range(items):
                step = steps[i]
                driven[i] = step * inputs[i]
                y[i] = d_skip * inputs[i]
            state_offset = w(batch_offset + w(start))  # B[batch_index, n, start], n = 0 first
            n = zero_index
            while n < states:
                rate = rates[n]
                b_n = coop.ThreadData(items, dtype=np.float32)
                c_n = coop.ThreadData(items, dtype=np.float32)
                load_two_widened(block, B, C, state_offset, valid, b_n, c_n)  # in flight together: one wait
                decay = coop.ThreadData(items, dtype=np.float32)
                value = coop.ThreadData(items, dtype=np.float32)
                if valid == chunk_items:
                    for i in range(items):
                        decay[i] = exp2_approx(steps[i] * rate)
                        value[i] = b_n[i] * driven[i]
                else:  # the ragged last chunk: positions past the row's end hold the neutral pair (1, 0)
                    for i in range(items):
                        inside = u(first_item + u(i)) < valid
                        decay[i] = exp2_approx(steps[i] * rate) if inside else np.float32(1)
                        value[i] = b_n[i] * driven[i] if inside else np.float32(0)
                if rank == zero_index:  # the carried state enters as the pair (1, h) in front of position 0
                    value[0] = decay[0] * carry[n] + value[0]
                _, h = coop.inclusive_scan(block, (decay, value), scan_op=ssm_combine, algorithm="warp_scans")
                if rank == last_rank:
                    carry[n] = h[items - 1]
                for i in range(items):
                    y[i] += c_n[i] * h[i]
                state_offset = w(state_offset + w(length))
                n = u(n + one)
            if gated:
                gate = coop.ThreadData(items, dtype=np.float32)
                load_one_widened(block, z, offset, valid, gate)
                for i in range(items):
                    y[i] = y[i] * gate[i] * rcp_approx(np.float32(1) + exp_approx(-gate[i]))
            result = coop.ThreadData(items, dtype=raw_type)
            for i in range(items):
                result[i] = narrow(y[i])
            if valid == chunk_items:
                coop.store(block, out, result, algorithm=LOAD, offset=offset)
            else:
                coop.store(block, out, result, offset=offset, valid_items=valid)
            start = u(start + chunk_items)
        cuda.syncthreads()
        slot = rank
        row_states = u(row * states)
        while slot < states:
            last_state[u(row_states + slot)] = carry[slot]
            slot = u(slot + block_threads)

    return selective_scan_kernel


def arguments(inputs: dict, out: np.ndarray, last_state: np.ndarray, delta_softplus: bool = True):
    """The kernel's host arguments for one problem (``selective_scan_reference.problem``'s arrays, flattened; absent
    D or delta_bias become zeros, absent z an unread one-item array)."""
    u = inputs["u"]
    batch, dim, seqlen = u.shape
    dstate = inputs["A"].shape[1]
    D = inputs.get("D")
    bias = inputs.get("delta_bias")
    z = inputs.get("z")
    return (u.ravel(), inputs["delta"].ravel(), inputs["A"].ravel(), inputs["B"].ravel(), inputs["C"].ravel(),
            np.zeros(dim, np.float32) if D is None else D, u.ravel()[:1] if z is None else z.ravel(),
            np.zeros(dim, np.float32) if bias is None else bias, out.ravel(), last_state.ravel(),
            np.int64(dim), np.int64(seqlen), np.int64(dstate), np.int32(delta_softplus), np.int32(z is not None))


def selective_scan(u, delta, A, B, C, D, z, delta_bias, out, last_state, delta_softplus=True):
    """Launch on device arrays of a problem's shapes (u, delta, z, out: (batch, dim, seqlen); B, C: (batch, dstate,
    seqlen); A: (dim, dstate); last_state: (batch, dim, dstate), float32); ``D``/``delta_bias`` float32 (dim,)
    arrays (zeros for none), ``z`` None for no gating. Returns ``out`` and ``last_state``."""
    batch, dim, seqlen = u.shape
    dstate = A.shape[1]
    if batch * dim * dstate >= 2**31 or seqlen >= 2**31:  # the kernel's rows, states and positions are uint32
        raise ValueError(f"selective_scan: batch x dim x dstate ({batch * dim * dstate}) and seqlen ({seqlen}) must "
                         "be below 2**31")
    threads, items = tiling(seqlen)
    dtype = "bfloat16" if u.dtype == np.uint16 else "float32"
    kernel = kernel_for(threads, items, dtype, reads_pairs(seqlen, dtype))
    flat = [a.reshape(a.size) for a in (u, delta, A, B, C)]
    gate = flat[0] if z is None else z.reshape(z.size)
    kernel[batch * dim, threads](*flat, D, gate, delta_bias, out.reshape(out.size), last_state.reshape(last_state.size),
                                 np.int64(dim), np.int64(seqlen), np.int64(dstate), np.int32(delta_softplus),
                                 np.int32(z is not None))
    return out, last_state
