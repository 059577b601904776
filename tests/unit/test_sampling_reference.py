"""The sampling workload's oracles (examples/workloads/sampling_reference.py), checked on the CPU: the Philox stream
against Random123's known answers, and each filter against a brute-force reading of its definition."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples" / "workloads"))
import sampling_reference as ref  # noqa: E402


@pytest.mark.parametrize("counter, key, want", [
    ((0, 0, 0, 0), (0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
    ((0xFFFFFFFF,) * 4, (0xFFFFFFFF,) * 2, (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
    ((0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344), (0xA4093822, 0x299F31D0),
     (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1)),
], ids=["zeros", "ones", "pi"])
def test_philox_matches_random123_known_answers(counter, key, want):
    assert ref.philox4x32_10(counter, key) == want


def test_uniforms_walk_the_stream_word_by_word_and_lie_in_0_1():
    seed = 0x0123456789ABCDEF
    words = [ref.philox4x32_10((0, 0, 3, 0), (seed & ref.MASK32, seed >> 32))[w] for w in range(4)]
    got = [ref.uniforms(seed, offset, 4)[3] for offset in range(4)]  # row 3, words 0..3 of counter block 0
    assert got == [np.float32(w) * np.float32(2.0**-32) + np.float32(2.0**-33) for w in words]
    u = ref.uniforms(7, 5, 1000)
    assert (u > 0).all() and (u <= 1).all() and len(set(u.tolist())) > 990


def test_top_k_keeps_every_tie_at_the_pivot_and_handles_k_edges():
    x = np.array([[5, 3, 3, 3, 1, -2]] * 5, np.float32)
    keep = ref.top_k_keep(x, np.array([2, 0, -1, 6, 1]))
    assert keep.tolist() == [[1, 1, 1, 1, 0, 0], [0] * 6, [1] * 6, [1] * 6, [1, 0, 0, 0, 0, 0]]


def test_top_p_keeps_the_smallest_top_set_reaching_p_times_the_total():
    rng = np.random.default_rng(1)
    probs = rng.random((20, 300)).astype(np.float32) * 3  # not normalised: p scales the total
    probs[:, :40] = probs[:, :1]  # a run of ties
    p = rng.uniform(0.05, 0.99, 20).astype(np.float32)
    keep = ref.top_p_keep(probs, p)
    for r in range(20):
        v = probs[r][keep[r]].min()
        mass = lambda t: probs[r][probs[r] >= t].astype(np.float64).sum()  # noqa: E731
        total = probs[r].astype(np.float64).sum()
        assert mass(v) >= p[r] * total  # enough mass at and above the pivot ...
        larger = probs[r][probs[r] > v]
        assert larger.size == 0 or mass(larger.min()) < p[r] * total  # ... and no larger pivot has it


def test_sampling_oracle_takes_the_first_prefix_past_u():
    probs = np.array([[0.1, 0.0, 0.2, 0.7]], np.float32)
    keep = np.ones(probs.shape, bool)
    for u, want in [(0.05, 0), (0.1000001, 2), (0.31, 3), (1.0, 3)]:
        got, _ = ref.sample(probs, keep, np.array([u], np.float32), scale_by_kept=False)
        assert got[0] == want, (u, got)
