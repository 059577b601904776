"""The LLM sampling workload (examples/workloads) on the GPU against its NumPy oracles: random rows of both
distributions, ragged vocabularies, per-row parameters at and past their edges, ties, one-hot and degenerate rows,
and the samplers' distribution over 10^6 draws."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "examples" / "workloads"))
pytest.importorskip("numba_cuda_mlir")
import llm_sampling  # noqa: E402
import sampling_numba as kernels  # noqa: E402
import sampling_reference as ref  # noqa: E402
from gpu_helpers import SEEDED_PER_TEST  # noqa: E402
from numba_cuda_mlir import cuda  # noqa: E402

pytestmark = pytest.mark.gpu
rng = SEEDED_PER_TEST  # each test's own generator (tests/gpu/conftest.py)


def rows(batch: int, vocab: int, distribution: str) -> tuple[np.ndarray, np.ndarray]:
    if distribution == "normal":
        logits = rng.standard_normal((batch, vocab)).astype(np.float32)
    elif distribution == "gumbel":
        logits = rng.gumbel(0.0, 0.1, (batch, vocab)).astype(np.float32)
    else:  # ties: few distinct values, so pivots fall inside runs of equal values
        logits = rng.integers(-3, 3, (batch, vocab)).astype(np.float32)
    return logits, ref.softmax(logits)


def run_all(logits, probs, top_k, top_p, min_p, offset=0):
    for name, kernel, host, out, oracle in llm_sampling.launches_for(logits, probs, top_k, top_p, min_p,
                                                                     philox_offset=offset):
        device = [cuda.to_device(a) if isinstance(a, np.ndarray) else a for a in host]
        kernel[logits.shape[0], kernels.THREADS](*device)
        got = device[out].copy_to_host()
        if got.dtype == np.uint32:
            got = got.view(np.float32)
        llm_sampling.check(name, got, oracle())


@pytest.mark.parametrize("vocab", [4096, 50001, 128256])
@pytest.mark.parametrize("distribution", ["normal", "gumbel", "ties"])
def test_every_kernel_matches_its_oracle(vocab, distribution):
    batch = 6
    logits, probs = rows(batch, vocab, distribution)
    top_k = np.array([50, 1, 0, -1, vocab, vocab - 1], np.int32)
    top_p = np.array([0.9, 0.5, 1.0, 0.0, 0.99, 0.1], np.float32)
    min_p = np.array([0.1, 0.0, 0.5, 1.0, 0.01, 0.2], np.float32)
    run_all(logits, probs, top_k, top_p, min_p, offset=int(rng.integers(0, 1000)))


def test_one_hot_and_zero_rows():
    vocab = 10000
    probs = np.zeros((3, vocab), np.float32)
    probs[0, 1234] = 1
    probs[1, [7, 9000]] = 0.5
    probs[2, -1] = 1
    logits = np.where(probs > 0, np.float32(5), np.float32(-5)).astype(np.float32)
    k = np.array([1, 1, 50], np.int32)
    run_all(logits, probs, k, np.full(3, 0.9, np.float32), np.full(3, 0.1, np.float32))


@pytest.mark.parametrize("sampler", ["sampling_from_probs", "min_p_sampling_from_probs",
                                     "top_k_top_p_sampling_from_probs"])
def test_samples_follow_the_filtered_distribution(sampler):
    """10^6 draws (4096 rows of one distribution x 256 offsets): a chi-square test against the kept probabilities,
    renormalised, with a one-in-a-million false-alarm rate (the draws are seeded, so the test is deterministic)."""
    vocab, batch, offsets = 200, 4096, 256
    logits = np.tile(rng.standard_normal(vocab).astype(np.float32) * 2, (batch, 1))
    probs = ref.softmax(logits)
    top_k, top_p, min_p = (np.full(batch, 20, np.int32), np.full(batch, 0.8, np.float32),
                           np.full(batch, 0.05, np.float32))
    name_to = {n: (k, h, o) for n, k, h, o, _ in llm_sampling.launches_for(logits, probs, top_k, top_p, min_p)}
    kernel, host, out = name_to[sampler]
    device = [cuda.to_device(a) if isinstance(a, np.ndarray) else a for a in host]
    counts = np.zeros(vocab, np.int64)
    for offset in range(offsets):
        args = list(device)
        args[-1] = np.uint64(offset * 64)  # rejection rounds draw up to 64 words per row and offset
        kernel[batch, kernels.THREADS](*args)
        counts += np.bincount(args[out].copy_to_host(), minlength=vocab)
    p = probs[0].astype(np.float64)
    if sampler == "min_p_sampling_from_probs":
        keep = ref.min_p_keep(probs[:1], min_p[:1])[0]
    elif sampler == "top_k_top_p_sampling_from_probs":
        order = np.argsort(-p)
        above = np.cumsum(p[order]) - p[order]  # mass strictly above each value (distinct values)
        keep = np.zeros(vocab, bool)
        keep[order[(np.arange(vocab) < 20) & (above < 0.8)]] = True
    else:
        keep = p > 0
    expected = np.where(keep, p, 0) / p[keep].sum() * counts.sum()
    assert counts[~keep].sum() == 0, "a filtered-out token was drawn"
    chi2 = (((counts - expected) ** 2)[keep] / expected[keep]).sum()
    dof = keep.sum() - 1
    z = (chi2 - dof) / np.sqrt(2 * dof)  # the chi-square's normal approximation (dof >= 19 here)
    assert z < 4.75, f"chi-square {chi2:.1f} on {dof} degrees of freedom (z = {z:.2f})"


@pytest.mark.parametrize("batch, vocab, slices", [(1, 128256, 31), (3, 50001, 12), (8, 32000, 1), (300, 4096, 1),
                                                  (32, 140000, 4), (140, 40000, 1)])
def test_softmax_host_wrapper_slices_small_batches(batch, vocab, slices):
    """``sampling_numba.softmax`` splits rows into slices for small batches (one launch, a grid barrier) and uses
    one block per row otherwise (rows a block holds in registers, at most HELD_TILE items, whatever the batch): both
    match the oracle, whether the row or slice stays in registers (all but the last two shapes) or is read twice
    (4 slices of 35000; whole rows of 40000)."""
    logits, _ = rows(batch, vocab, "normal")
    out = cuda.to_device(np.full((batch, vocab), np.nan, np.float32))
    kernels.softmax(cuda.to_device(logits), out)
    llm_sampling.check("softmax", out.copy_to_host(), ref.softmax(logits))
    assert kernels.resident_plan(batch, vocab, kernels.softmax_plan)[0] == slices


@pytest.mark.parametrize("batch, vocab, distribution", [(1, 32000, "normal"), (3, 50001, "ties"), (2, 128256, "gumbel"),
                                                       (5, 151936, "normal"), (1, 256000, "normal"), (4, 4099, "ties"),
                                                       (3, 10, "normal"), (130, 32000, "gumbel")])
def test_cluster_softmax_matches_the_oracle(batch, vocab, distribution):
    """``softmax_cluster_kernel``: each row over the 8 blocks of a cluster (``cluster_softmax_plan``: 256 to 1024
    threads, 16 or 32 items a thread), the slices' pairs merged by a cluster ``reduce``; short last slices (vocab
    4099) and slices past the row's end (vocab 10: five of the eight blocks hold nothing)."""
    logits, _ = rows(batch, vocab, distribution)
    out = cuda.to_device(np.full((batch, vocab), np.nan, np.float32))
    kernels.softmax_cluster(cuda.to_device(logits), out)  # the cluster kernel whatever the batch
    llm_sampling.check("softmax", out.copy_to_host(), ref.softmax(logits))


@pytest.mark.parametrize("batch, vocab, distribution", [(1, 128256, "normal"), (6, 70001, "ties"),
                                                        (6, 100000, "gumbel"), (6, 32000, "gumbel"),
                                                        (200, 4096, "normal")])
def test_top_k_host_wrappers_slice_small_batches(batch, vocab, distribution):
    """``sampling_numba.top_k_mask_logits`` and ``top_k_renorm_probs`` split rows of 65536 items or more into slices
    for small batches (one launch, its blocks meeting at a grid barrier after each radix digit) and use one block
    per row otherwise: both match the oracles, with k at and past its edges."""
    logits, probs = rows(batch, vocab, distribution)
    edges = np.array([50, 1, 0, -1, vocab, vocab - 1], np.int32)
    top_k = edges[:batch] if batch <= edges.size else rng.integers(-2, vocab + 2, batch).astype(np.int32)
    k_device = cuda.to_device(top_k)
    masked = cuda.to_device(np.full((batch, vocab), np.nan, np.float32))
    kernels.top_k_mask_logits(cuda.to_device(logits).view(np.uint32), masked.view(np.uint32), k_device)
    llm_sampling.check("top_k_mask_logits", masked.copy_to_host(), ref.top_k_mask_logits(logits, top_k))
    renormed = cuda.to_device(np.full((batch, vocab), np.nan, np.float32))
    device_probs = cuda.to_device(probs)
    kernels.top_k_renorm_probs(device_probs, device_probs.view(np.uint32), renormed, k_device)
    llm_sampling.check("top_k_renorm_probs", renormed.copy_to_host(), ref.renorm(probs, ref.top_k_keep(probs, top_k)))
    assert (kernels.select_plan(batch, vocab)[0] > 1) == (batch < 66 and vocab >= 65536)


@pytest.mark.parametrize("batch, vocab, distribution", [(1, 256000, "gumbel"), (2, 256000, "normal"),
                                                        (3, 200000, "ties")])
def test_sliced_selects_launch_back_to_back(batch, vocab, distribution):
    """The sliced top-k and top-p launches' blocks meet at grid barriers whose two words serve launch after launch:
    six launches in a row on new rows each (top-k mask, top-k renormalisation, top-p renormalisation in turn) all
    match the oracles. Gumbel rows put most of a row in one first digit (top-k counts a second digit over the row
    before it holds the candidates), ties more than fit the candidate buffer at every digit."""
    assert kernels.select_plan(batch, vocab)[0] > 1
    for launch in range(6):
        logits, probs = rows(batch, vocab, distribution)
        top_k = rng.integers(1, 2000, batch).astype(np.int32)
        k_device = cuda.to_device(top_k)
        if launch % 3 == 2:
            top_p = rng.uniform(0.05, 0.99, batch).astype(np.float32)
            renormed = cuda.to_device(np.full((batch, vocab), np.nan, np.float32))
            device_probs = cuda.to_device(probs)
            kernels.top_p_renorm_probs(device_probs, device_probs.view(np.uint32), renormed, cuda.to_device(top_p))
            llm_sampling.check("top_p_renorm_probs", renormed.copy_to_host(),
                               ref.renorm(probs, ref.top_p_keep(probs, top_p)))
        elif launch % 3 == 0:
            masked = cuda.to_device(np.full((batch, vocab), np.nan, np.float32))
            kernels.top_k_mask_logits(cuda.to_device(logits).view(np.uint32), masked.view(np.uint32), k_device)
            llm_sampling.check("top_k_mask_logits", masked.copy_to_host(), ref.top_k_mask_logits(logits, top_k))
        else:
            renormed = cuda.to_device(np.full((batch, vocab), np.nan, np.float32))
            device_probs = cuda.to_device(probs)
            kernels.top_k_renorm_probs(device_probs, device_probs.view(np.uint32), renormed, k_device)
            llm_sampling.check("top_k_renorm_probs", renormed.copy_to_host(),
                               ref.renorm(probs, ref.top_k_keep(probs, top_k)))
    assert kernels.barrier_words().copy_to_host()[0] == 0  # every barrier's count went back to zero


@pytest.mark.parametrize("batch, vocab, distribution", [(1, 256000, "gumbel"), (6, 70001, "ties"),
                                                        (6, 32000, "normal"), (200, 4096, "normal")])
def test_top_p_host_wrapper_slices_small_batches(batch, vocab, distribution):
    """``sampling_numba.top_p_renorm_probs`` splits rows into slices for small batches (one launch, each block writing
    its slice's fixed-point bin masses before a grid barrier per digit) and uses one block per row otherwise: it
    matches the oracle, with p at and past its edges."""
    _, probs = rows(batch, vocab, distribution)
    edges = np.array([0.9, 0.5, 1.0, 0.0, 0.99, 0.1], np.float32)
    top_p = edges[:batch] if batch <= edges.size else rng.uniform(0, 1.1, batch).astype(np.float32)
    renormed = cuda.to_device(np.full((batch, vocab), np.nan, np.float32))
    device_probs = cuda.to_device(probs)
    kernels.top_p_renorm_probs(device_probs, device_probs.view(np.uint32), renormed, cuda.to_device(top_p))
    llm_sampling.check("top_p_renorm_probs", renormed.copy_to_host(), ref.renorm(probs, ref.top_p_keep(probs, top_p)))


@pytest.mark.parametrize("batch, vocab, distribution", [(1, 128256, "normal"), (3, 65536, "gumbel"),
                                                        (6, 70001, "ties"), (8, 32000, "normal"),
                                                        (66, 100000, "gumbel"), (200, 4096, "normal"),
                                                        (264, 5000, "ties"), (400, 32000, "normal")])
def test_sampler_host_wrappers_slice_small_batches(batch, vocab, distribution):
    """``sampling_numba.sampling_from_probs`` and ``min_p_sampling_from_probs`` split rows of 65536 items or more
    into slices for small batches (one launch: each slice's kept mass meets the others' across a grid barrier, and
    the slice where the running mass passes u walks itself in order) and use one block per row otherwise (plain
    sampling in a launch of 264 blocks or more walking each row from its start: ``walks_whole_rows``): over several
    offsets the samples equal the oracle's, with min_p at its edges and a one-hot row whose one is in the last
    slice."""
    _, probs = rows(batch, vocab, distribution)
    if batch > 1:
        probs[1] = 0
        probs[1, vocab - 3] = 1  # one-hot in the row's last slice
    edges = np.array([0.1, 0.0, 0.5, 1.0, 0.01, 0.2], np.float32)
    min_p = edges[:batch] if batch <= edges.size else rng.uniform(0, 1, batch).astype(np.float32)
    device_probs, device_min_p = cuda.to_device(probs), cuda.to_device(min_p)
    assert (kernels.select_plan(batch, vocab)[0] > 1) == (batch <= 66 and vocab >= 65536)
    for offset in rng.integers(0, 10**6, 4):
        u = ref.uniforms(12345, int(offset), batch)
        drawn = cuda.to_device(np.full(batch, -1, np.int32))
        kernels.sampling_from_probs(device_probs, drawn, 12345, int(offset))
        llm_sampling.check("sampling_from_probs", drawn.copy_to_host(),
                           ref.sample(probs, np.ones(probs.shape, bool), u, scale_by_kept=False))
        drawn = cuda.to_device(np.full(batch, -1, np.int32))
        kernels.min_p_sampling_from_probs(device_probs, drawn, device_min_p, 12345, int(offset))
        llm_sampling.check("min_p_sampling_from_probs", drawn.copy_to_host(),
                           ref.sample(probs, ref.min_p_keep(probs, min_p), u, scale_by_kept=True))
    assert kernels.barrier_words().copy_to_host()[0] == 0  # every barrier's count went back to zero
