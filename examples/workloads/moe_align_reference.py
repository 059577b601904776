"""The NumPy oracle of ``moe_align_block_size`` (``moe_align_numba.py``, ``moe_align_cute.py``): its exact, stable
output, and the checks the scripts, the tests and the benchmark share.

The semantics are vLLM's (``vllm.model_executor.layers.fused_moe.moe_align_block_size``, the ``_moe_C`` CUDA op), with
one addition: ours is **stable**. For ``topk_ids`` of shape (tokens, k), ``numel = tokens * k`` routed entries, entry
``i`` being ``topk_ids.flatten()[i]``:

* entries whose id lies outside ``[0, num_experts)`` are skipped (vLLM's op skips ids ``>= num_experts``);
* expert ``e`` receives ``count[e]`` entries, padded up to ``padded[e] = ceil(count[e] / block_size) * block_size``
  slots (0 slots when it receives none); its slots start at ``offset[e]``, the exclusive prefix sum of ``padded``;
* ``sorted_token_ids`` has ``max_num_tokens_padded(numel, num_experts, block_size)`` int32 slots (vLLM's size:
  ``numel + num_experts * (block_size - 1)``, or at most ``numel * block_size`` when ``numel < num_experts``): slots
  ``offset[e] .. offset[e] + count[e] - 1`` hold the flat indices ``i`` of expert ``e``'s entries **in increasing
  order** (vLLM's order there depends on its atomics), every other slot, padding and tail alike, holds ``numel``;
* ``expert_ids`` has ``ceil(len(sorted_token_ids) / block_size)`` int32 entries: block ``b < post_pad / block_size``
  of the padded layout holds the expert whose slots it covers, the later ones ``-1`` (vLLM's current kernel; older
  releases wrote 0 there);
* ``num_tokens_post_pad`` is one int32: ``sum(padded)``.
"""
from __future__ import annotations

import numpy as np

from moe_align_plan import cdiv, max_num_blocks, max_num_tokens_padded

SHAPES_EXPERTS_K = ((8, 2), (64, 6), (128, 8), (256, 8))  # (num_experts, k) of issue 43's grid
TOKENS = (1, 16, 128, 1024, 8192, 65536)
BLOCK_SIZES = (16, 64, 128)


def moe_align_block_size(topk_ids: np.ndarray, num_experts: int, block_size: int):
    """(sorted_token_ids, expert_ids, num_tokens_post_pad) as int32 arrays: the stable output defined above."""
    flat = np.ascontiguousarray(topk_ids).reshape(-1).astype(np.int64)
    numel = flat.size
    size = max_num_tokens_padded(numel, num_experts, block_size)
    valid = (flat >= 0) & (flat < num_experts)
    counts = np.bincount(flat[valid], minlength=num_experts)
    padded = -(-counts // block_size) * block_size
    offsets = np.concatenate([[0], np.cumsum(padded)])
    sorted_ids = np.full(size, numel, np.int32)
    expert_ids = np.full(max_num_blocks(numel, num_experts, block_size), -1, np.int32)
    order = np.argsort(np.where(valid, flat, num_experts), kind="stable")  # stable: flat indices increase per expert
    placed = 0
    for e in range(num_experts):
        indices = order[placed: placed + counts[e]]
        placed += counts[e]
        sorted_ids[offsets[e]: offsets[e] + counts[e]] = indices
        expert_ids[offsets[e] // block_size: offsets[e + 1] // block_size] = e
    return sorted_ids, expert_ids, np.array([offsets[-1]], np.int32)


def problem(tokens: int, num_experts: int, k: int, seed: int = 0, invalid: float = 0.0) -> np.ndarray:
    """A router's ``topk_ids``: each token's k distinct experts (a random permutation's first k, as a top-k of
    random scores picks them), int32 (tokens, k). ``invalid``: the fraction of entries replaced by ids outside
    ``[0, num_experts)`` (negative, or ``num_experts`` and above), which every implementation skips."""
    rng = np.random.default_rng(seed)
    k = min(k, num_experts)
    ids = np.argsort(rng.random((tokens, num_experts)), axis=1)[:, :k].astype(np.int32)
    if invalid:
        out = rng.random(ids.shape) < invalid
        ids[out] = rng.choice(np.array([-1, num_experts, num_experts + 7, 2**31 - 1], np.int32), int(out.sum()))
    return ids


def poisoned_outputs(numel: int, num_experts: int, block_size: int):
    """Output buffers of the right sizes filled with values no correct kernel leaves there."""
    return (np.full(max_num_tokens_padded(numel, num_experts, block_size), -7, np.int32),
            np.full(max_num_blocks(numel, num_experts, block_size), -7, np.int32),
            np.full(1, -7, np.int32))


def check(got, want) -> str:
    """Exact equality of all three outputs with the stable oracle (``got``/``want``: the three arrays)."""
    names = ("sorted_token_ids", "expert_ids", "num_tokens_post_pad")
    for name, g, w in zip(names, got, want):
        g = np.asarray(g).reshape(-1)
        assert g.shape == w.shape, f"{name}: {g.shape} slots, the oracle has {w.shape}"
        if not np.array_equal(g, w):
            bad = np.flatnonzero(g != w)
            raise AssertionError(f"{name}: {bad.size} slots differ from the oracle, first at {bad[:6].tolist()}: "
                                 f"{g[bad[:6]].tolist()} instead of {w[bad[:6]].tolist()}")
    return f"stable and exact: {int(want[2][0])} slots after padding, {want[0].size} allocated"


def check_as_multisets(got, want, block_size: int) -> str:
    """vLLM's order within an expert depends on its atomics: the same post-pad count, the same expert per block
    below it, and per expert the same entries (as a multiset, sentinels included) in its slots; the tail of
    ``sorted_token_ids`` holds the sentinel. ``expert_ids`` past the padded blocks is reported, not checked (-1 in
    vLLM's current kernel, 0 in older ones)."""
    sorted_ids, expert_ids, post_pad = (np.asarray(a).reshape(-1) for a in got)
    want_sorted, want_experts, want_post = want
    total = int(want_post[0])
    assert int(post_pad[0]) == total, f"num_tokens_post_pad {int(post_pad[0])}, the oracle has {total}"
    blocks = total // block_size
    assert np.array_equal(expert_ids[:blocks], want_experts[:blocks]), "expert_ids differ below the padded blocks"
    assert sorted_ids.shape == want_sorted.shape, f"sorted_token_ids: {sorted_ids.size} slots, not {want_sorted.size}"
    assert np.array_equal(sorted_ids[total:], want_sorted[total:]), \
        "sorted_token_ids past num_tokens_post_pad is not the sentinel"
    edges = np.flatnonzero(np.diff(np.concatenate([[-2], want_experts[:blocks], [-3]]))) * block_size
    for start, end in zip(edges[:-1], edges[1:]):
        assert np.array_equal(np.sort(sorted_ids[start:end]), np.sort(want_sorted[start:end])), \
            f"slots {start}..{end - 1} hold other entries than the oracle's"
    tail = expert_ids[blocks: cdiv(want_sorted.size, block_size)]
    return f"same entries per expert (unordered); expert_ids tail {sorted(set(tail.tolist()))[:3]}"
