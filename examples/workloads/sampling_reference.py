"""NumPy oracles of the LLM sampling kernels (``sampling_numba.py``, ``sampling_cute.py``), and the random stream they draw.

The semantics are FlashInfer's (``flashinfer.sampling``, 0.7.2.post1), written from its documentation and behaviour:

* ``softmax``: ``exp(x / T - max) / sum``, float32 out;
* ``top_k_mask_logits``: the logits at or above the row's k-th largest stay, the rest become ``-inf`` (ties at the
  pivot all stay; ``k <= 0`` or ``k >= vocab`` keeps the row);
* ``top_k_renorm_probs``: the same set of probabilities, divided by their sum, the rest 0;
* ``top_p_renorm_probs``: the largest probabilities whose sum reaches ``top_p`` (every probability at or above the
  smallest of them), divided by their sum, the rest 0;
* samplers: one uniform ``u`` per row from the stream below; the sample is the first index whose inclusive prefix
  sum of the kept probabilities exceeds ``u`` times their total (the last kept index if rounding leaves ``u`` above
  the total).

The stream is curand's Philox4x32-10 as ``curand_init(seed, subsequence=row, offset)`` and ``curand_uniform`` set it
up: key ``seed``, counter ``(offset // 4, 0, row, 0)`` as 128 bits, word ``offset % 4`` of the block, mapped to
``(0, 1]`` by ``x * 2**-32 + 2**-33`` in float32.
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
    """Each row's uniform in (0, 1], float32, as the kernels draw it."""
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
    """Per row, whether each value is at or above the row's k-th largest (all of the row where k <= 0 or k >= vocab)."""
    keys = ordered_keys(x)
    keep = np.ones(x.shape, bool)
    for r in range(x.shape[0]):
        if 0 < k[r] < x.shape[1]:
            pivot = np.sort(keys[r])[::-1][k[r] - 1]
            keep[r] = keys[r] >= pivot
    return keep


def top_k_mask_logits(logits: np.ndarray, k: np.ndarray) -> np.ndarray:
    return np.where(top_k_keep(logits, k), logits, np.float32(-np.inf)).astype(np.float32)


def top_p_keep(probs: np.ndarray, p: np.ndarray) -> np.ndarray:
    """Per row, the probabilities at or above the pivot: the smallest value of the shortest prefix of the row sorted
    in descending order whose sum (float64) reaches ``p`` (every value where no prefix does)."""
    keep = np.ones(probs.shape, bool)
    for r in range(probs.shape[0]):
        ordered = np.sort(probs[r])[::-1]
        sums = np.cumsum(ordered.astype(np.float64))
        reach = np.flatnonzero(sums >= p[r])
        if reach.size:
            keep[r] = probs[r] >= ordered[reach[0]]
    return keep


def renorm(probs: np.ndarray, keep: np.ndarray) -> np.ndarray:
    kept = np.where(keep, probs, 0).astype(np.float64)
    return (kept / kept.sum(axis=1, keepdims=True)).astype(np.float32)


def sample(probs: np.ndarray, keep: np.ndarray, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(samples, ambiguous): each row's first index whose inclusive prefix sum (float64) of the kept probabilities
    exceeds ``u`` times their total, and whether ``u`` lies so near a prefix sum that float32 summation orders may
    pick the neighbour (those rows are checked to pick one of the two)."""
    kept = np.where(keep, probs, 0).astype(np.float64)
    sums = np.cumsum(kept, axis=1)
    total = sums[:, -1]
    target = u.astype(np.float64) * total
    out = np.empty(probs.shape[0], np.int32)
    ambiguous = np.zeros(probs.shape[0], bool)
    for r in range(probs.shape[0]):
        above = np.flatnonzero(sums[r] > target[r])
        nonzero = np.flatnonzero(kept[r] > 0)
        out[r] = above[0] if above.size else (nonzero[-1] if nonzero.size else 0)
        ambiguous[r] = np.min(np.abs(sums[r] - target[r])) < 1e-5 * max(total[r], 1e-30)
    return out, ambiguous
