"""The MoE-align workload's oracle and plan (examples/workloads/moe_align_reference.py, moe_align_plan.py), checked
on the CPU: vLLM's documented example, the buffer sizes vLLM allocates, a brute-force reading of the definition, the
order-free check used for vLLM's own output, and the launch plan's cover of the entries."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples" / "workloads"))
import moe_align_plan as plan  # noqa: E402
import moe_align_reference as ref  # noqa: E402


def test_vllm_docstring_example():
    """vLLM's docstring: ids 1-4 of 12 entries, block size 4: each expert padded by one sentinel slot."""
    topk_ids = np.array([[2, 3, 4], [1, 2, 4], [1, 3, 4], [1, 2, 3]], np.int32)
    sorted_ids, expert_ids, post_pad = ref.moe_align_block_size(topk_ids, 5, 4)
    assert sorted_ids[:16].tolist() == [3, 6, 9, 12, 0, 4, 10, 12, 1, 7, 11, 12, 2, 5, 8, 12]
    assert (sorted_ids[16:] == 12).all() and sorted_ids.size == 12 + 5 * 3
    assert expert_ids.tolist() == [1, 2, 3, 4, -1, -1, -1] and post_pad.tolist() == [16]


@pytest.mark.parametrize("numel, experts, block_size, size", [
    (12, 5, 4, 27), (1, 8, 16, 16), (2, 256, 128, 256), (524288, 256, 128, 524288 + 256 * 127), (0, 8, 16, 0)])
def test_sizes_follow_vllm_allocation(numel, experts, block_size, size):
    assert plan.max_num_tokens_padded(numel, experts, block_size) == size
    assert plan.max_num_blocks(numel, experts, block_size) == -(-size // block_size)


def brute_force(flat: np.ndarray, experts: int, block_size: int):
    """The definition read literally: walk the experts, append each one's entries in flat order, pad."""
    numel = flat.size
    sorted_ids, expert_ids = [], []
    for e in range(experts):
        mine = [i for i in range(numel) if flat[i] == e]
        while len(mine) % block_size:
            mine.append(numel)
        sorted_ids += mine
        expert_ids += [e] * (len(mine) // block_size)
    total = len(sorted_ids)
    size = plan.max_num_tokens_padded(numel, experts, block_size)
    return (sorted_ids + [numel] * (size - total), expert_ids + [-1] * (-(-size // block_size) - len(expert_ids)),
            [total])


@pytest.mark.parametrize("tokens, experts, k, block_size, invalid", [
    (1, 8, 2, 16, 0.0), (37, 8, 2, 4, 0.2), (50, 64, 6, 16, 0.05), (3, 256, 8, 128, 0.3), (200, 256, 8, 1, 0.1)])
def test_oracle_matches_the_definition(tokens, experts, k, block_size, invalid):
    topk_ids = ref.problem(tokens, experts, k, seed=tokens, invalid=invalid)
    got = ref.moe_align_block_size(topk_ids, experts, block_size)
    want = brute_force(topk_ids.reshape(-1), experts, block_size)
    assert [a.tolist() for a in got] == list(want)
    if invalid:
        assert ((topk_ids < 0) | (topk_ids >= experts)).any()  # the skipped ids were exercised


def test_problem_picks_distinct_experts_per_token():
    ids = ref.problem(500, 64, 6, seed=3)
    assert ids.shape == (500, 6) and ids.dtype == np.int32
    assert all(len(set(row)) == 6 for row in ids.tolist()) and ids.min() >= 0 and ids.max() < 64


def test_order_free_check_accepts_any_order_within_an_expert_and_nothing_else():
    topk_ids = ref.problem(300, 8, 2, seed=1)
    want = ref.moe_align_block_size(topk_ids, 8, 16)
    shuffled = want[0].copy()
    start = int(np.flatnonzero(want[1] == 3)[0]) * 16
    end = (int(np.flatnonzero(want[1] == 3)[-1]) + 1) * 16
    shuffled[start:end] = np.random.default_rng(0).permutation(shuffled[start:end])
    ref.check_as_multisets((shuffled, want[1], want[2]), want, 16)
    with pytest.raises(AssertionError):
        ref.check((shuffled, want[1], want[2]), want)
    swapped = want[0].copy()
    swapped[[0, end]] = swapped[[end, 0]]  # an entry of expert 0 moved into another expert's slots
    with pytest.raises(AssertionError):
        ref.check_as_multisets((swapped, want[1], want[2]), want, 16)


@pytest.mark.parametrize("numel", [0, 1, plan.TILE, 2 * plan.TILE, 2 * plan.TILE + 1, 6144, 8192 * 8, 65536 * 8,
                                   10**7])
def test_launch_plan_covers_every_entry_once(numel):
    blocks, span = plan.launch_plan(numel)
    assert span % plan.TILE == 0 and 1 <= blocks <= plan.MAX_BLOCKS
    assert blocks * span >= numel and (blocks - 1) * span < max(numel, 1)
    assert (blocks == 1) == (numel <= plan.SINGLE_BLOCK_TILES * plan.TILE)


def ballot_peers_model(slot: np.ndarray, bits: int = 9) -> np.ndarray:
    """moe_align_*.ballot_peers for a warp's 32 values: per lane, the AND over the value's bits of that bit's ballot
    (the lanes whose bit is set) or its complement."""
    peers = np.full(32, 0xFFFFFFFF, np.uint64)
    for bit in range(bits):
        votes = sum(1 << lane for lane in range(32) if (slot[lane] >> bit) & 1)
        peers &= np.where((slot >> bit) & 1 == 1, votes, ~np.uint64(votes) & 0xFFFFFFFF).astype(np.uint64)
    return peers


def test_ballots_name_the_lanes_with_the_same_expert():
    """The small kernel's peers: nine ballots give, for every lane, exactly the lanes holding its value, for values
    0 .. 256 (256: ids outside the experts): few distinct, many, all distinct, all equal, the extremes."""
    rng = np.random.default_rng(43)
    slots = [rng.integers(0, 257, 32), rng.integers(0, 3, 32), np.arange(32) * 8, np.full(32, 256),
             np.array([0, 256] * 16), rng.permutation(257)[:32]]
    for slot in slots:
        want = [sum(1 << k for k in range(32) if slot[k] == slot[lane]) for lane in range(32)]
        assert list(ballot_peers_model(slot.astype(np.int64))) == want


def test_small_items_are_the_fewest_slots_that_hold_the_entries():
    assert [plan.small_items(n) for n in (1, 1024, 1025, 2048, 2049, 4096, 4097, 8192)] == [1, 1, 2, 2, 4, 4, 8, 8]
    assert plan.small_path(8192) and not plan.small_path(8193)
    with pytest.raises(ValueError, match="8193 entries do not take the small path"):
        plan.small_items(8193)


def test_argument_checks_name_the_argument_and_the_fix():
    with pytest.raises(ValueError, match=r"num_experts=257 is outside 1\.\.256.*split the experts"):
        plan.check_arguments(10, 257, 16)
    with pytest.raises(ValueError, match="block_size=0 must be a positive integer"):
        plan.check_arguments(10, 8, 0)


def small_path_model(flat: np.ndarray, experts: int, block_size: int, blocks: int = 1):
    """The small kernel's steps (moe_align_numba.small_kernel_for, moe_align_cute.small_kernel) in NumPy at
    ``small_items(numel)`` entries a lane: warp w holds entries w * 32 * items + 32 * j + lane (slot j); slot after
    slot, each lane's peers (the slot's lanes with the same expert: the ballots), its rank (peers at earlier lanes,
    plus the warp's running count of the expert, read by every lane before the expert's last lane of the slot moves
    it on); thread e turns the warps' counts into bases and a sum; the exclusive sum of the padded counts; each entry
    placed at offset + warp base + rank; each expert's padding, the tail and expert_ids written in the kernel's order,
    each of ``blocks`` blocks its share with the kernel's strides (every slot starts poisoned: a slot no step writes
    fails the check)."""
    numel = flat.size
    threads = plan.small_threads(numel)  # 256 up to 256 entries, else 1024
    items = plan.small_items(max(numel, 1))
    span = 32 * items
    raw = np.full(threads * items, -1, np.int64)
    raw[:numel] = flat
    x = np.where((raw >= 0) & (raw < experts), raw, experts)  # by entry
    counts = np.zeros((threads // 32, plan.MAX_EXPERTS), np.int64)
    rank = np.zeros(threads * items, np.int64)
    lanes = np.arange(32)
    for warp in range(threads // 32):
        for j in range(items):
            at = warp * span + 32 * j
            slot = x[at: at + 32]
            peers = slot[:, None] == slot[None, :]  # [lane, k]: lane k holds the same expert (the ballots' mask)
            inside = slot < experts
            read = np.where(inside, counts[warp, np.minimum(slot, plan.MAX_EXPERTS - 1)], 0)  # every lane reads
            rank[at: at + 32] = (peers & (lanes[None, :] < lanes[:, None])).sum(1) + read
            last = ~(peers & (lanes[None, :] > lanes[:, None])).any(1)  # no peer at a later lane (peers >> lane == 1)
            for lane in np.flatnonzero(last & inside):  # then the writes
                counts[warp, slot[lane]] = rank[at + lane] + 1
    mine = np.zeros(threads, np.int64)
    for e in range(experts):
        for w in range(threads // 32):  # every warp's row (the rows of warps without entries are 0)
            counts[w, e], mine[e] = mine[e], mine[e] + counts[w, e]
    padded = -(-mine // block_size) * block_size
    offset = np.cumsum(padded) - padded
    offsets = np.zeros(plan.MAX_EXPERTS + 1, np.int64)
    offsets[:experts] = offset[:experts]
    offsets[experts] = offset[experts - 1] + padded[experts - 1]
    fills = offset + mine
    total = offsets[experts]
    size = plan.max_num_tokens_padded(numel, experts, block_size)
    sorted_ids = np.full(size, -7, np.int64)
    expert_ids = np.full(plan.max_num_blocks(numel, experts, block_size), -7, np.int64)
    warps = threads // 32
    for part in range(blocks):  # every block ranked the same; each writes its share, with the kernel's strides
        for entry in range(numel):  # thread t's entries part * threads + t, + blocks * threads, ...
            if (entry // threads) % blocks == part and x[entry] < experts:
                sorted_ids[offsets[x[entry]] + counts[entry // span, x[entry]] + rank[entry]] = entry
        for warp in range(warps):  # a warp an expert: warp w's experts part * warps + w, + blocks * warps, ...
            for e in range(part * warps + warp, experts, blocks * warps):
                sorted_ids[fills[e]: offsets[e + 1]] = numel
        for e in range(part, experts, blocks):  # thread e, in the block e % blocks
            expert_ids[offset[e] // block_size: (offset[e] + padded[e]) // block_size] = e
        for t in range(threads):  # the tails: thread t's slots t, t + blocks * threads, ... past the block's start
            sorted_ids[total + part * threads + t:: blocks * threads] = numel
            expert_ids[total // block_size + part * threads + t:: blocks * threads] = -1
    return sorted_ids.astype(np.int32), expert_ids.astype(np.int32), np.array([total], np.int32)


@pytest.mark.parametrize("numel", [1, 2, 31, 32, 33, 128, 200, 256, 1000, 1024, 1025, 2048, 3000, 4096, 6144, 8192])
def test_the_small_paths_steps_give_the_stable_oracle(numel):
    """The small path's algorithm (issue 43) on any ids up to 8192 entries, 1 to 8 a lane: repeats, ids outside the
    experts (negative, at and far past them), 1 to 256 experts, block sizes 1 to 4096, every entry on one expert."""
    assert plan.small_path(numel) and not plan.small_path(plan.THREADS * plan.SMALL_ITEMS[-1] + 1)
    rng = np.random.default_rng(numel)
    for experts in (1, 3, 8, 64, 129, 256):
        for block_size in (1, 7, 16, 128, 4096):
            flat = rng.integers(-2, experts + 2, numel).astype(np.int32)
            flat[rng.random(numel) < 0.05] = 2**31 - 1
            for ids in (flat, np.full(numel, experts - 1, np.int32)):
                want = ref.moe_align_block_size(ids, experts, block_size)
                size = plan.max_num_tokens_padded(numel, experts, block_size)
                threads = plan.small_threads(numel)
                for blocks in sorted({1, 3, plan.small_blocks(numel, experts, size, threads)}):
                    ref.check(small_path_model(ids, experts, block_size, blocks), want)


def test_small_blocks_share_the_writes_a_few_thousand_slots_each():
    """At least a block per 4096 slots, per 1024 entries, per expert a warp; at most 8."""
    assert [plan.small_blocks(2, 8, s, 256) for s in (1, 4096, 4097, 16384, 16385, 32 * 1024, 10**6)] == \
        [1, 1, 2, 4, 5, 8, 8]
    assert [plan.small_blocks(2, e, 32, 256) for e in (8, 9, 16, 64, 256)] == [1, 2, 2, 8, 8]
    assert [plan.small_blocks(2, e, 32, 1024) for e in (8, 32, 33, 128, 256)] == [1, 1, 2, 4, 8]
    assert [plan.small_blocks(n, 8, 32, 1024) for n in (1024, 1025, 6144, 8192)] == [1, 2, 6, 8]


def test_a_few_entries_take_a_block_of_256_threads():
    assert [plan.small_threads(n) for n in (1, 128, 256, 257, 8192)] == [256, 256, 256, 1024, 1024]
    assert plan.small_threads(256) >= plan.MAX_EXPERTS  # still a thread per expert
