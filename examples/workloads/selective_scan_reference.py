"""NumPy oracle of the selective-scan kernels (``selective_scan_numba.py``, ``selective_scan_cute.py``): the
semantics of mamba-ssm's ``selective_scan_ref`` (``mamba_ssm/ops/selective_scan_interface.py``) for real ``A`` and
"variable B and C, one group", computed in float64 by the sequential recurrence.

For each batch ``b``, channel ``d`` and position ``t`` (``delta`` after the bias and the softplus)::

    h[n]  = exp(delta[b,d,t] * A[d,n]) * h[n] + delta[b,d,t] * B[b,n,t] * u[b,d,t]     (h starts at 0)
    y     = sum_n C[b,n,t] * h[n] + D[d] * u[b,d,t]
    out   = y * z / (1 + exp(-z))   if z is given (SiLU gating), then rounded to u's dtype

``delta_bias`` is added before the softplus; ``delta_softplus`` applies ``log(1 + exp(x))`` (``x`` itself above 20,
as torch's ``F.softplus``). ``last_state`` is ``h`` after the last position, shape (batch, dim, dstate). Inputs are
float32 or bfloat16 (here: uint16 arrays holding bfloat16 bits, since NumPy has no bfloat16); ``A``, ``D`` and
``delta_bias`` are float32.
"""
from __future__ import annotations

import numpy as np

# |ours - oracle| <= ATOL + RTOL * |oracle|, per output element: the tolerances mamba-ssm's own tests allow its CUDA
# forward against selective_scan_ref (float32 compute; bfloat16 adds the rounding of inputs and output).
DTYPES = ("float32", "bfloat16")  # the inputs the kernels take
TOLERANCE = {"float32": (6e-4, 2e-3), "bfloat16": (3e-2, 5e-2)}  # (rtol, atol)


def bf16_to_f32(bits: np.ndarray) -> np.ndarray:
    """bfloat16 bits (uint16) -> float32: the high half of a float32's bits."""
    return (bits.astype(np.uint32) << 16).view(np.float32)


def f32_to_bf16(x: np.ndarray) -> np.ndarray:
    """float32 -> bfloat16 bits (uint16), rounded to nearest even; NaN stays a quiet NaN."""
    bits = np.ascontiguousarray(x, np.float32).view(np.uint32).astype(np.uint64)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)
    nan = (bits & 0x7FFFFFFF) > 0x7F800000
    return np.where(nan, np.uint16(0x7FC0), rounded).astype(np.uint16)


def as_float(x: np.ndarray) -> np.ndarray:
    """An input as float64: uint16 arrays are bfloat16 bits."""
    return bf16_to_f32(x).astype(np.float64) if x.dtype == np.uint16 else x.astype(np.float64)


def softplus(x: np.ndarray) -> np.ndarray:
    return np.where(x > 20.0, x, np.log1p(np.exp(np.minimum(x, 20.0))))


def selective_scan(u, delta, A, B, C, D=None, z=None, delta_bias=None, delta_softplus=False,
                   return_last_state=False, rows=None):
    """(out in float64, last_state) of the recurrence above; ``rows`` (optional): a list of (b, d) pairs to compute
    instead of every row, returned in that order as out (len(rows), seqlen) and last_state (len(rows), dstate)."""
    batch, dim, seqlen = u.shape
    every = rows is None
    if every:
        rows = [(b, d) for b in range(batch) for d in range(dim)]
    bs = np.array([r[0] for r in rows])
    ds = np.array([r[1] for r in rows])
    y, h = scan_rows(u[bs, ds], delta[bs, ds], A[ds], B[bs], C[bs], None if D is None else D[ds],
                     None if z is None else z[bs, ds], None if delta_bias is None else delta_bias[ds], delta_softplus)
    if every:
        y, h = y.reshape(batch, dim, seqlen), h.reshape(batch, dim, -1)
    return (y, h) if return_last_state else y


def scan_rows(u, delta, A, B, C, D=None, z=None, delta_bias=None, delta_softplus=False):
    """The recurrence on R independent rows, each with its own parameters: u, delta, z (R, seqlen); A, B, C (R,
    dstate[, seqlen]); D, delta_bias (R,). Returns (out (R, seqlen), last_state (R, dstate)) in float64."""
    x, dt, Bt, Ct = (as_float(a) for a in (u, delta, B, C))
    a = A.astype(np.float64)
    if delta_bias is not None:
        dt = dt + delta_bias.astype(np.float64)[:, None]
    if delta_softplus:
        dt = softplus(dt)
    h = np.zeros(a.shape)
    y = np.empty(dt.shape)
    for t in range(dt.shape[1]):
        h = np.exp(dt[:, t, None] * a) * h + (dt[:, t] * x[:, t])[:, None] * Bt[:, :, t]
        y[:, t] = (h * Ct[:, :, t]).sum(axis=1)
    if D is not None:
        y = y + D.astype(np.float64)[:, None] * x
    if z is not None:
        zt = as_float(z)
        y = y * zt / (1.0 + np.exp(-zt))
    return y, h


def problem(batch: int, dim: int, seqlen: int, dstate: int = 16, dtype: str = "float32", seed: int = 0):
    """Random inputs as a Mamba layer sees them: u, B, C, z normal; delta positive (0.5 * uniform, then the bias
    and the softplus); A negative (-exp of a normal: decays below 1); D normal. bfloat16 arrays are uint16 bits."""
    rng = np.random.default_rng(seed)
    u = rng.standard_normal((batch, dim, seqlen), dtype=np.float32)
    delta = (0.5 * rng.random((batch, dim, seqlen))).astype(np.float32)
    A = -np.exp(rng.standard_normal((dim, dstate))).astype(np.float32)
    B = rng.standard_normal((batch, dstate, seqlen), dtype=np.float32)
    C = rng.standard_normal((batch, dstate, seqlen), dtype=np.float32)
    D = rng.standard_normal(dim, dtype=np.float32)
    z = rng.standard_normal((batch, dim, seqlen), dtype=np.float32)
    delta_bias = (0.5 * rng.random(dim) - 2.0).astype(np.float32)  # softplus(-2 + ...): steps of about 0.1-0.4
    if dtype == "bfloat16":
        u, delta, B, C, z = (f32_to_bf16(a) for a in (u, delta, B, C, z))
    return {"u": u, "delta": delta, "A": A, "B": B, "C": C, "D": D, "z": z, "delta_bias": delta_bias}


def check(got: np.ndarray, want: np.ndarray, dtype: str, what: str = "out") -> str:
    """``got`` (float32, or bfloat16 bits) within TOLERANCE[dtype] of the float64 oracle ``want``, elementwise."""
    rtol, atol = TOLERANCE[dtype]
    g = as_float(got).reshape(want.shape)
    assert np.isfinite(g).all(), f"{what}: {int((~np.isfinite(g)).sum())} values are not finite (unwritten?)"
    err = np.abs(g - want)
    bad = err > atol + rtol * np.abs(want)
    assert not bad.any(), (f"{what}: {int(bad.sum())} of {bad.size} values outside rtol {rtol}, atol {atol}; "
                           f"worst {err.max():.3g} at {np.unravel_index(int(err.argmax()), err.shape)}")
    return f"within rtol {rtol}, atol {atol} of the float64 oracle (max abs error {err.max():.2g})"


def variants(inputs: dict) -> list[tuple[str, dict, bool]]:
    """The example scripts' runs of one problem: (name, inputs, delta_softplus) with every option on, and with none
    (no D, z, delta_bias or softplus)."""
    plain = {key: inputs[key] for key in ("u", "delta", "A", "B", "C")}
    return [("D, z, delta_bias, softplus", inputs, True), ("no options", plain, False)]


def outputs(u: np.ndarray, dstate: int) -> tuple[np.ndarray, np.ndarray]:
    """Poisoned outputs (out like u, last_state float32): NaN (bfloat16: NaN bits), so an unwritten value fails."""
    batch, dim, _ = u.shape
    out = np.full(u.shape, 0x7FC1, np.uint16) if u.dtype == np.uint16 else np.full(u.shape, np.nan, np.float32)
    return out, np.full((batch, dim, dstate), np.nan, np.float32)


def oracle(inputs: dict, delta_softplus: bool) -> tuple[np.ndarray, np.ndarray]:
    """(out, last_state) of ``selective_scan`` for a dict of inputs (absent keys: the option is off)."""
    return selective_scan(inputs["u"], inputs["delta"], inputs["A"], inputs["B"], inputs["C"], inputs.get("D"),
                          inputs.get("z"), inputs.get("delta_bias"), delta_softplus, return_last_state=True)
