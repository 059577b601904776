"""NumPy oracles of the LLM sampling kernels (``sampling_numba.py``, ``sampling_cute.py``) and the stream they draw.

The semantics are FlashInfer's (``flashinfer.sampling``, 0.7.2.post1), as its documentation and behaviour define them:

* ``softmax``: ``exp(x / T - max) / sum``, float32 out;
* ``top_k_mask_logits``: every logit ``>=`` the row's k-th largest (counting repeats) stays, the rest become
  ``-inf`` (ties at the pivot all stay, NaN never does); ``k == 0`` masks everything, ``k < 0`` or ``k >= vocab``
  copies the row;
* ``top_k_renorm_probs``: the same kept set, times ``1 / max(sum of kept, 1e-8)``, the rest 0;
* ``top_p_renorm_probs``: the smallest set of the largest probabilities, ties grouped, whose mass reaches ``top_p``
  times the row's total (every probability ``>=`` its smallest member), renormalised; ``top_p >= 1`` keeps the row;
* ``sampling_from_probs``: the first index whose inclusive prefix sum of the positive probabilities exceeds ``u``
  (no renormalisation), else the last positive index (0 if none);
* ``min_p_sampling_from_probs``: kept = ``p >= max(p) * min_p``; ``u`` scaled by the kept mass; the same rule;
* ``top_k_top_p_sampling_from_probs(filter_apply_order="joint")``: rejection rounds (``top_k_top_p_joint``).

The stream is curand's Philox4x32-10 as ``curand_init(seed, subsequence=row, offset)`` and ``curand_uniform`` set it
up: key ``seed``, counter ``(offset // 4) + (row << 64)`` as 128 bits, word ``offset % 4`` of the block, mapped to
``(0, 1]`` by ``x * 2**-32 + 2**-33`` in float32; the ``r``-th draw of a row is the stream's word ``offset + r``.
"""
from __future__ import annotations

import numpy as np

MASK32 = 0xFFFFFFFF
PHILOX_M = (0xD2511F53, 0xCD9E8D57)
PHILOX_W = (0x9E3779B9, 0xBB67AE85)


def philox4x32_10(counter: tuple[int, int, int, int], key: tuple[int, int]) -> tuple[int, int, int, int]:
    """Ten Philox rounds of one 128-bit counter (Salmon et al., SC'11), in Python integers."""
    c0, c1, c2, c3 = counter
    k0, k1 = key
    for round_ in range(10):
        if round_:
            k0, k1 = (k0 + PHILOX_W[0]) & MASK32, (k1 + PHILOX_W[1]) & MASK32
        p0, p1 = PHILOX_M[0] * c0, PHILOX_M[1] * c2
        c0, c1, c2, c3 = (p1 >> 32) ^ c1 ^ k0, p1 & MASK32, (p0 >> 32) ^ c3 ^ k1, p0 & MASK32
    return c0, c1, c2, c3


def uniforms(seed: int, offset: int, rows: int) -> np.ndarray:
    """Each row's uniform in (0, 1], float32, as the kernels draw it (the draw at ``offset`` of stream ``row``)."""
    out = np.empty(rows, np.float32)
    key = (seed & MASK32, (seed >> 32) & MASK32)
    block, word = divmod(offset, 4)
    for row in range(rows):
        x = philox4x32_10((block & MASK32, (block >> 32) & MASK32, row & MASK32, (row >> 32) & MASK32), key)[word]
        out[row] = np.float32(x) * np.float32(2.0**-32) + np.float32(2.0**-33)
    return out


def softmax(logits: np.ndarray, temperature: float = 1.0) -> np.ndarray:
    x = logits.astype(np.float64) / temperature
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return (e / e.sum(axis=1, keepdims=True)).astype(np.float32)


def ordered_keys(x: np.ndarray) -> np.ndarray:
    """float32 -> uint32 whose unsigned order is the floats' order (-0.0 just below +0.0)."""
    bits = np.ascontiguousarray(x, np.float32).view(np.uint32)
    return np.where(bits >> 31 == 1, ~bits, bits | np.uint32(0x80000000)).astype(np.uint32)


def top_k_keep(x: np.ndarray, k: np.ndarray) -> np.ndarray:
    """Per row, whether each value is ``>=`` the row's k-th largest (NaN never; the whole row where k < 0 or
    k >= vocab, nothing where k == 0)."""
    keep = np.ones(x.shape, bool)
    for r in range(x.shape[0]):
        if k[r] == 0:
            keep[r] = False
        elif 0 < k[r] < x.shape[1]:
            pivot = np.sort(x[r])[::-1][k[r] - 1]  # NaN sorts last in NumPy: counted below every value
            keep[r] = x[r] >= pivot
    return keep


def top_k_mask_logits(logits: np.ndarray, k: np.ndarray) -> np.ndarray:
    return np.where(top_k_keep(logits, k), logits, np.float32(-np.inf)).astype(np.float32)


def top_p_keep(probs: np.ndarray, p: np.ndarray) -> np.ndarray:
    """Per row, the probabilities ``>=`` the pivot: the largest value v of the row whose mass at and above it
    (float64) reaches ``p`` times the row's total (the whole row where p >= 1)."""
    keep = np.ones(probs.shape, bool)
    for r in range(probs.shape[0]):
        if p[r] >= 1:
            continue
        ordered = np.sort(probs[r])[::-1]
        sums = np.cumsum(ordered.astype(np.float64))  # at a value's last repeat: the mass at and above it
        reach = np.flatnonzero(sums >= np.float64(p[r]) * sums[-1])
        if reach.size:
            keep[r] = probs[r] >= ordered[reach[0]]
    return keep


def renorm(probs: np.ndarray, keep: np.ndarray) -> np.ndarray:
    kept = np.where(keep, probs, 0).astype(np.float64)
    return (kept / np.maximum(kept.sum(axis=1, keepdims=True), 1e-8)).astype(np.float32)


def first_past(kept: np.ndarray, target: float, valid: np.ndarray) -> tuple[int, bool]:
    """(index, ambiguous) of one row: the first valid index whose inclusive prefix sum (float64) exceeds target,
    else the last valid index (0 if none); ambiguous where target lies within float32 rounding of a prefix sum."""
    sums = np.cumsum(kept)
    above = np.flatnonzero((sums > target) & valid)
    last = np.flatnonzero(valid)
    index = above[0] if above.size else (last[-1] if last.size else 0)
    near = np.abs(sums - target) < 2.0**-20 * max(sums[-1], 1e-30)
    return int(index), bool(near[valid].any())


def sample(probs: np.ndarray, keep: np.ndarray, u: np.ndarray, scale_by_kept: bool) -> tuple[np.ndarray, np.ndarray]:
    """(samples, ambiguous) for every row: ``first_past`` of the kept positive probabilities, with ``u`` scaled by
    their total (min-p) or not (plain sampling)."""
    out = np.empty(probs.shape[0], np.int32)
    ambiguous = np.zeros(probs.shape[0], bool)
    for r in range(probs.shape[0]):
        kept = np.where(keep[r], probs[r], 0).astype(np.float64)
        target = np.float64(u[r]) * (kept.sum() if scale_by_kept else 1.0)
        out[r], ambiguous[r] = first_past(kept, target, keep[r] & (probs[r] > 0) if not scale_by_kept else keep[r])
    return out, ambiguous


def min_p_keep(probs: np.ndarray, min_p: np.ndarray) -> np.ndarray:
    pivot = (np.maximum(probs.max(axis=1), 0) * min_p).astype(np.float32)
    return probs >= pivot[:, None]


def top_k_top_p_joint(probs: np.ndarray, k: np.ndarray, p: np.ndarray, seed: int, offset: int,
                      max_rounds: int = 64) -> tuple[np.ndarray, np.ndarray]:
    """(samples, ambiguous): FlashInfer's joint rejection sampler, round by round in float64 with the kernels'
    uniforms (round r draws the stream's word offset + r): sample among x > low with u * q; accept when fewer than k
    values and less than top_p mass lie strictly above the sample; else narrow (low, high) by the sample and the
    midpoint to ``high``, as the kernels do."""
    rows, vocab = probs.shape
    out = np.zeros(rows, np.int32)
    ambiguous = np.zeros(rows, bool)
    for r in range(rows):
        x = probs[r].astype(np.float64)
        kk = k[r] if 0 <= k[r] < vocab else vocab
        low, high, q = 0.0, 1.0, 1.0
        for round_ in range(max_rounds):
            u = np.float64(uniforms(seed, offset + round_, r + 1)[r])
            valid = probs[r] > np.float32(low)
            kept = np.where(valid, x, 0)
            index, near = first_past(kept, u * q, valid)
            ambiguous[r] |= near
            out[r] = index
            if not valid.any():
                break
            pivot0 = float(probs[r][index])
            pivot1 = float(np.float32((np.float32(pivot0) + np.float32(high)) * np.float32(0.5)))
            above0, above1 = probs[r] > np.float32(pivot0), probs[r] > np.float32(pivot1)
            sum0, count0, sum1, count1 = x[above0].sum(), above0.sum(), x[above1].sum(), above1.sum()
            if count0 < kk and sum0 < p[r]:
                break
            if count1 < kk and sum1 < p[r]:
                low, high, q = pivot0, pivot1, sum0
            else:
                low, q = pivot1, sum1
            if not low < high:
                break
    return out, ambiguous


def problem(batch: int, vocab: int, seed: int = 0):
    """Logits, their probabilities (float32) and per-row parameters: top-k 50, top-p 0.9, min-p 0.1."""
    rng = np.random.default_rng(seed)
    logits = rng.standard_normal((batch, vocab), dtype=np.float32)
    probs = softmax(logits)
    return logits, probs, np.full(batch, 50, np.int32), np.full(batch, 0.9, np.float32), np.full(batch, 0.1, np.float32)


def check(name: str, got: np.ndarray, want) -> str:
    """Exact for masks and samples (only a row whose uniform lies within float rounding of a prefix sum may pick
    another index), a few float32 ulps for softmax and renormalised probabilities (sums in another order)."""
    if isinstance(want, tuple):
        want, ambiguous = want
        off = got != want
        assert not (off & ~ambiguous).any(), f"{name}: rows {np.flatnonzero(off & ~ambiguous)[:8]} sampled wrongly"
        return f"{got.size} samples equal the oracle's ({int(off.sum())} differ where u is within rounding of a sum)"
    got = got.reshape(want.shape)
    if name == "top_k_mask_logits":
        assert np.array_equal(got.view(np.uint32), want.view(np.uint32)), f"{name}: differs from the oracle"
        return "bit-exact"
    assert np.array_equal(got == 0, want == 0), f"{name}: the kept set differs from the oracle's"
    err = np.abs(got.astype(np.float64) - want) / np.maximum(np.abs(want), np.finfo(np.float32).tiny)
    assert err.max() < 8 * 2.0**-24 * np.log2(want.shape[1]), f"{name}: relative error {err.max():.3g}"
    return f"kept set exact, relative error {err.max():.2g}"


def built_line(name: str, built, target: str, seconds: float, threads: int = 1024) -> str:
    """The scripts' report of one build, once the kernel is known to launch: one block of ``threads`` must fit an
    SM's 65536 registers (a kernel compiled without launch bounds may not)."""
    assert built.registers * threads <= 65536, (
        f"{name}: {built.registers} registers x {threads} threads exceed the 65536 of an SM: cannot launch")
    return (f"built {name} for {target} in {seconds:.1f} s: {built.registers} registers, "
            f"{built.shared_memory_bytes} B shared, {built.local_memory_bytes} B local")
