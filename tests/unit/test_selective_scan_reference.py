"""The selective-scan workload's oracle (examples/workloads/selective_scan_reference.py) and the kernels' algorithm,
checked on the CPU: the recurrence against the closed form of the same linear system, and a NumPy model of the
kernels' chunked pair scan (thread 0's seeded first pair, neutral padding, the carry) against the recurrence."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples" / "workloads"))
import selective_scan_plan as plan  # noqa: E402
import selective_scan_reference as ref  # noqa: E402


def closed_form(inputs: dict, softplus: bool) -> np.ndarray:
    """out[b, d, t] = sum_n C[b,n,t] sum_{s <= t} exp(A[d,n] sum_{s < r <= t} delta_r) delta_s B[b,n,s] u_s + D u_t,
    gated: the solution of the recurrence written as a sum, without the recurrence."""
    u, dt, B, C, z = (ref.as_float(inputs[k]) for k in ("u", "delta", "B", "C", "z"))
    A, D, bias = (inputs[k].astype(np.float64) for k in ("A", "D", "delta_bias"))
    dt = dt + bias[None, :, None]
    if softplus:
        dt = np.log1p(np.exp(dt))  # every step here is far below the threshold of 20
    batch, dim, seqlen = u.shape
    out = np.zeros(u.shape)
    for b in range(batch):
        for d in range(dim):
            total = np.concatenate([[0.0], np.cumsum(dt[b, d])])  # total[t + 1] = sum of steps 0..t
            for t in range(seqlen):
                since = total[t + 1] - total[1:t + 2]  # sum over s < r <= t, for each s <= t
                weights = np.exp(A[d][:, None] * since[None, :]) * (dt[b, d, :t + 1] * u[b, d, :t + 1])[None, :]
                out[b, d, t] = (C[b, :, t] * (weights * B[b, :, :t + 1]).sum(axis=1)).sum()
            out[b, d] += D[d] * u[b, d]
    return out * z / (1 + np.exp(-z))


def test_recurrence_equals_the_closed_form():
    inputs = ref.problem(2, 3, 37, dstate=5, seed=1)
    got = ref.selective_scan(**inputs, delta_softplus=True)
    assert np.allclose(got, closed_form(inputs, True), rtol=1e-10, atol=1e-10)


def test_rows_subset_and_last_state_shapes():
    inputs = ref.problem(2, 3, 20, dstate=4, seed=2)
    out, last = ref.selective_scan(**inputs, delta_softplus=True, return_last_state=True)
    assert out.shape == (2, 3, 20) and last.shape == (2, 3, 4)
    some, some_last = ref.selective_scan(**inputs, delta_softplus=True, return_last_state=True, rows=[(1, 2), (0, 1)])
    assert np.array_equal(some, out[[1, 0], [2, 1]]) and np.array_equal(some_last, last[[1, 0], [2, 1]])


def test_softplus_and_bfloat16_conversions():
    assert np.array_equal(ref.softplus(np.array([-50.0, 0.0, 20.0, 20.5])),
                          [np.log1p(np.exp(-50.0)), np.log(2.0), np.log1p(np.exp(20.0)), 20.5])
    x = np.array([1.0, -2.5, 1 + 2**-8, 1 + 3 * 2**-8, 1 + 2**-8 + 2**-20, np.inf, np.nan], np.float32)
    bits = ref.f32_to_bf16(x)
    # ties to even: 1 + 2^-8 -> 1.0, 1 + 3 * 2^-8 -> 1 + 2^-6; just above a tie rounds up
    assert bits[:6].tolist() == [0x3F80, 0xC020, 0x3F80, 0x3F82, 0x3F81, 0x7F80] and bits[6] == 0x7FC0
    assert np.array_equal(ref.bf16_to_f32(bits[:6]), [1.0, -2.5, 1.0, 1 + 2**-6, 1 + 2**-7, np.inf])


def kernel_model(inputs: dict, softplus: bool, threads: int, items: int) -> tuple[np.ndarray, np.ndarray]:
    """The kernels' algorithm in NumPy (float64): per chunk of threads x items positions and per state, the pairs
    (exp(delta * A), delta * B * u), neutral (1, 0) past the row's end, thread 0's first pair seeded with the carry,
    an inclusive scan of the pairs under (a1, b1) o (a2, b2) = (a1 a2, a2 b1 + b2) (folded in tree order, as a block
    scan may associate it), the carry read at the chunk's last position."""
    u, dt, B, C, z = (ref.as_float(inputs[k]) for k in ("u", "delta", "B", "C", "z"))
    A, D, bias = (inputs[k].astype(np.float64) for k in ("A", "D", "delta_bias"))
    batch, dim, seqlen = u.shape
    dstate, chunk = A.shape[1], threads * items
    out = np.empty(u.shape)
    last = np.empty((batch, dim, dstate))
    for b in range(batch):
        for d in range(dim):
            carry = np.zeros(dstate)
            for start in range(0, seqlen, chunk):
                valid = min(seqlen - start, chunk)
                step = np.zeros(chunk)
                step[:valid] = dt[b, d, start:start + valid] + bias[d]
                if softplus:
                    step = np.where(step <= 20, np.log1p(np.exp(step)), step)
                x = np.zeros(chunk)
                x[:valid] = u[b, d, start:start + valid]
                y = D[d] * x
                for n in range(dstate):
                    decay = np.where(np.arange(chunk) < valid, np.exp2(step * A[d, n] * plan.LOG2E), 1.0)
                    value = np.zeros(chunk)
                    value[:valid] = B[b, n, start:start + valid] * step[:valid] * x[:valid]
                    value[0] = decay[0] * carry[n] + value[0]
                    _, h = tree_scan(decay, value)
                    carry[n] = h[-1]
                    c = np.zeros(chunk)
                    c[:valid] = C[b, n, start:start + valid]
                    y += c * h
                gate = np.zeros(chunk)
                gate[:valid] = z[b, d, start:start + valid]
                out[b, d, start:start + valid] = (y * gate / (1 + np.exp(-gate)))[:valid]
            last[b, d] = carry
    return out, last


def tree_scan(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Inclusive scan of (a, b) pairs by doubling (Hillis-Steele): another association than left to right, so the
    model also checks that the operator is associative."""
    a, b = a.copy(), b.copy()
    shift = 1
    while shift < a.size:
        a_prev, b_prev = a[:-shift].copy(), b[:-shift].copy()
        b[shift:] = a[shift:] * b_prev + b[shift:]
        a[shift:] = a_prev * a[shift:]
        shift *= 2
    return a, b


@pytest.mark.parametrize("seqlen", [1, 100, 512, 1000, 2048, 2049, 4500])
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_chunked_pair_scan_model_equals_the_recurrence(seqlen, dtype):
    inputs = ref.problem(1, 2, seqlen, dstate=3, dtype=dtype, seed=seqlen)
    threads, items = plan.tiling(seqlen)
    got_out, got_last = kernel_model(inputs, True, threads, items)
    want_out, want_last = ref.oracle(inputs, True)
    assert np.allclose(got_out, want_out, rtol=1e-9, atol=1e-9)
    assert np.allclose(got_last, want_last, rtol=1e-9, atol=1e-9)


def test_tiling_follows_the_chunk_table():
    assert [plan.tiling(n) for n in (1, 128, 129, 256, 300, 512, 513, 1024, 1025, 8192)] == [
        (32, 4), (32, 4), (32, 8), (32, 8), (32, 16), (32, 16), (64, 16), (64, 16), (128, 16), (128, 16)]
    assert plan.chunks(8192) == 4 and plan.chunks(2049) == 2 and plan.chunks(512) == 1


def test_check_rejects_poison_and_values_outside_the_tolerance():
    want = np.linspace(-3, 3, 64).reshape(2, 32)
    assert "within" in ref.check(want.astype(np.float32), want, "float32")
    with pytest.raises(AssertionError, match="not finite"):
        ref.check(np.full(want.shape, np.nan, np.float32), want, "float32")
    with pytest.raises(AssertionError, match="outside"):
        ref.check((want + 0.01).astype(np.float32), want, "float32")
    assert "within" in ref.check(ref.f32_to_bf16(want.astype(np.float32)), want, "bfloat16")
    poisoned, _ = ref.outputs(ref.f32_to_bf16(want.astype(np.float32))[None], 4)
    with pytest.raises(AssertionError, match="not finite"):
        ref.check(poisoned[0], want, "bfloat16")
