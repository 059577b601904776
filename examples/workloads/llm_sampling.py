"""LLM sampling in Python with cuda.coop (numba-cuda-mlir): softmax, top-k masking and renormalisation, top-p
renormalisation, and sampling (plain and min-p) from a (batch, vocab) float32 matrix, each checked against NumPy.

The kernels are in ``sampling_numba.py`` (one 1024-thread block per row); the NumPy oracles and the Philox stream the
samplers draw from are in ``sampling_reference.py``. With a GPU this runs every kernel on random rows (softmax of
normal logits) and checks it; without one it builds every kernel for sm_90 and says that it could not launch.

    python examples/workloads/llm_sampling.py [--batch 8] [--vocab 32000]
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import sampling_numba as kernels  # noqa: E402
import sampling_reference as ref  # noqa: E402
from sampling_reference import check, problem  # noqa: E402, F401  (the scripts' shared problem and check)
from numba_cuda_mlir import cuda  # noqa: E402
import cuda.coop.numba_mlir as numba_coop  # noqa: E402


def launches(batch: int, vocab: int, seed: int = 0, philox_seed: int = 12345, philox_offset: int = 0):
    """(name, kernel, host arguments, output index, oracle) of every kernel on one random problem."""
    return launches_for(*problem(batch, vocab, seed), philox_seed, philox_offset)


def launches_for(logits, probs, top_k, top_p, min_p, philox_seed: int = 12345, philox_offset: int = 0):
    """(name, kernel, host arguments, output index, oracle) of every kernel on the given rows and parameters."""
    batch, vocab = logits.shape
    f32 = np.full((batch, vocab), np.nan, np.float32).ravel()
    samples = np.full(batch, -1, np.int32)
    v = np.int64(vocab)
    u = ref.uniforms(philox_seed, philox_offset, batch)
    seed, offset = np.uint64(philox_seed), np.uint64(philox_offset)
    # launched a block per row (slice length = vocab), top-k, top-p and the samplers read neither their bins or
    # partials nor the barrier's words
    unused_counts, unused_masses = np.zeros(1, np.int32), np.zeros(1, np.int64)
    unused_partials, unused_lasts = np.zeros(1, np.float32), np.zeros(1, np.int32)
    unused_words = np.zeros(2, np.uint32)
    return [
        ("softmax", kernels.softmax_kernel, (logits.ravel(), f32.copy(), v, np.float32(1)), 1,
         lambda: ref.softmax(logits)),
        ("top_k_mask_logits", kernels.top_k_mask_logits_kernel,
         (logits.ravel().view(np.uint32), f32.copy().view(np.uint32), unused_counts, unused_words, v, v, top_k), 1,
         lambda: ref.top_k_mask_logits(logits, top_k)),
        ("top_k_renorm_probs", kernels.top_k_renorm_probs_kernel,
         (probs.ravel(), probs.ravel().view(np.uint32), f32.copy(), unused_counts, unused_partials, unused_words, v, v,
          top_k), 2,
         lambda: ref.renorm(probs, ref.top_k_keep(probs, top_k))),
        ("top_p_renorm_probs", kernels.top_p_renorm_probs_kernel,
         (probs.ravel(), probs.ravel().view(np.uint32), f32.copy(), unused_masses, unused_partials, unused_words, v,
          v, top_p), 2,
         lambda: ref.renorm(probs, ref.top_p_keep(probs, top_p))),
        ("sampling_from_probs", kernels.sampling_from_probs_kernel,
         (probs.ravel(), samples.copy(), unused_partials, unused_lasts, unused_words, v, v, seed, offset), 1,
         lambda: ref.sample(probs, np.ones(probs.shape, bool), u, scale_by_kept=False)),
        ("min_p_sampling_from_probs", kernels.min_p_sampling_from_probs_kernel,
         (probs.ravel(), samples.copy(), unused_partials, unused_lasts, unused_words, v, v, min_p, seed, offset), 1,
         lambda: ref.sample(probs, ref.min_p_keep(probs, min_p), u, scale_by_kept=True)),
        ("top_k_top_p_sampling_from_probs", kernels.top_k_top_p_sampling_from_probs_kernel,
         (probs.ravel(), samples.copy(), v, top_k, top_p, seed, offset), 1,
         lambda: ref.top_k_top_p_joint(probs, top_k, top_p, philox_seed, philox_offset)),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--vocab", type=int, default=32000)
    args = parser.parse_args()
    for name, kernel, host, out, oracle in launches(args.batch, args.vocab):
        start = time.perf_counter()
        built = numba_coop.compile_kernel(kernel, host, block=kernels.THREADS, grid=args.batch)
        print(ref.built_line(name, built, "sm_90", time.perf_counter() - start, kernels.THREADS))
        try:
            device = [cuda.to_device(a) if isinstance(a, np.ndarray) else a for a in host]
            kernel[args.batch, kernels.THREADS](*device)
            got = device[out].copy_to_host()
        except Exception as exc:  # no driver or no GPU on this machine
            print(f"  could not launch on a GPU here ({type(exc).__name__}: {str(exc).splitlines()[0][:100]})")
            continue
        if got.dtype == np.uint32:
            got = got.view(np.float32)
        print(f"OK: {name}: {check(name, got, oracle())}")
    sliced(args.batch, args.vocab)


def sliced_builds(batch: int, vocab: int):
    """(name, kernel, host arguments, blocks) of every kernel of the small-batch launches over row slices
    (``slice_plan``; built whatever the plan says), one launch each: the softmax's (one grid barrier), top-k's
    mask and renormalisation (a grid barrier between radix digits), top-p's (the same, on masses) and the two
    samplers' (one grid barrier; min-p's two)."""
    logits, probs, top_k, top_p, _ = problem(batch, vocab)
    slices, length = kernels.slice_plan(batch, max(vocab, 2 * kernels.TILE))
    partials = np.zeros(2 * batch * slices, np.float32)
    counts = np.zeros(batch * 4 * slices * kernels.BINS, np.int32)
    masses = np.zeros(batch * 4 * slices * kernels.BINS, np.int64)
    kept = np.zeros(batch * slices, np.float32)
    lasts = np.zeros(batch * slices, np.int32)
    samples = np.full(batch, -1, np.int32)
    min_p = np.full(batch, 0.1, np.float32)
    seed, offset = np.uint64(12345), np.uint64(0)
    arrive = np.zeros(2, np.uint32)
    out = np.full(logits.size, np.nan, np.float32)
    bits = probs.ravel().view(np.uint32)
    v, n, one, blocks = np.int64(vocab), np.int64(length), np.float32(1), batch * slices
    return [("softmax_slices", kernels.softmax_slices_kernel, (logits.ravel(), partials, out, arrive, v, n, one),
             blocks),
            ("top_k_mask_slices", kernels.top_k_mask_logits_kernel,
             (bits, out.view(np.uint32), counts, arrive, v, n, top_k), blocks),
            ("top_k_renorm_slices", kernels.top_k_renorm_probs_kernel,
             (probs.ravel(), bits, out, counts, kept, arrive, v, n, top_k), blocks),
            ("top_p_renorm_slices", kernels.top_p_renorm_probs_kernel,
             (probs.ravel(), bits, out, masses, kept, arrive, v, n, top_p), blocks),
            ("sampling_slices", kernels.sampling_from_probs_kernel,
             (probs.ravel(), samples, partials, lasts, arrive, v, n, seed, offset), blocks),
            ("min_p_sampling_slices", kernels.min_p_sampling_from_probs_kernel,
             (probs.ravel(), samples, partials, lasts, arrive, v, n, min_p, seed, offset), blocks)]


def cluster_build(batch: int, vocab: int):
    """(kernel, host arguments, threads) of the cluster softmax (``softmax_cluster_kernel``, launched with
    ``kernels.CLUSTER`` blocks a row: ``kernels.softmax_cluster``) on a problem's rows of ``vocab`` items."""
    logits = problem(batch, vocab)[0]
    threads, held, length = kernels.cluster_softmax_plan(vocab)
    host = (logits.ravel(), np.full(logits.size, np.nan, np.float32), np.int64(vocab), np.int64(length),
            np.float32(1))
    return kernels.softmax_cluster_kernel(threads, held), host, threads


def sliced(batch: int, vocab: int) -> None:
    """Build the sliced launches' kernels, then run the host wrappers that choose them (``sampling_numba.softmax``,
    ``top_k_mask_logits``, ``top_k_renorm_probs``, ``top_p_renorm_probs``, ``sampling_from_probs``,
    ``min_p_sampling_from_probs``) and check them."""
    for name, kernel, host, blocks in sliced_builds(batch, vocab):
        start = time.perf_counter()
        built = numba_coop.compile_kernel(kernel, host, block=kernels.THREADS, grid=blocks)
        print(ref.built_line(name, built, "sm_90", time.perf_counter() - start, kernels.THREADS))
    kernel, host, threads = cluster_build(batch, vocab)  # small batches of rows a block would hold
    start = time.perf_counter()
    built = numba_coop.compile_kernel(kernel, host, block=threads, grid=batch * kernels.CLUSTER,
                                      cluster=kernels.CLUSTER)
    print(ref.built_line("softmax_cluster", built, "sm_90", time.perf_counter() - start, threads))
    logits, probs, top_k, top_p, min_p = problem(batch, vocab)
    seed, offset = 12345, 0
    try:
        outs = [cuda.to_device(np.full((batch, vocab), np.nan, np.float32)) for _ in range(4)]
        drawn = [cuda.to_device(np.full(batch, -1, np.int32)) for _ in range(2)]
        device_logits, device_probs, device_k = cuda.to_device(logits), cuda.to_device(probs), cuda.to_device(top_k)
        kernels.softmax(device_logits, outs[0])
        kernels.top_k_mask_logits(device_logits.view(np.uint32), outs[1].view(np.uint32), device_k)
        kernels.top_k_renorm_probs(device_probs, device_probs.view(np.uint32), outs[2], device_k)
        kernels.top_p_renorm_probs(device_probs, device_probs.view(np.uint32), outs[3], cuda.to_device(top_p))
        kernels.sampling_from_probs(device_probs, drawn[0], seed, offset)
        kernels.min_p_sampling_from_probs(device_probs, drawn[1], cuda.to_device(min_p), seed, offset)
        got = [o.copy_to_host() for o in outs] + [d.copy_to_host() for d in drawn]
    except Exception as exc:  # no driver or no GPU on this machine
        print(f"  could not launch on a GPU here ({type(exc).__name__}: {str(exc).splitlines()[0][:100]})")
        return
    plans = {"softmax": kernels.resident_plan(batch, vocab, kernels.softmax_plan)[0],
             "select": kernels.resident_select_plan(batch, vocab)[0]}
    u = ref.uniforms(seed, offset, batch)
    keep_all = np.ones(probs.shape, bool)
    for name, result, want in [("softmax", got[0], ref.softmax(logits)),
                               ("top_k_mask_logits", got[1], ref.top_k_mask_logits(logits, top_k)),
                               ("top_k_renorm_probs", got[2], ref.renorm(probs, ref.top_k_keep(probs, top_k))),
                               ("top_p_renorm_probs", got[3], ref.renorm(probs, ref.top_p_keep(probs, top_p))),
                               ("sampling_from_probs", got[4], ref.sample(probs, keep_all, u, scale_by_kept=False)),
                               ("min_p_sampling_from_probs", got[5],
                                ref.sample(probs, ref.min_p_keep(probs, min_p), u, scale_by_kept=True))]:
        plan = plans["softmax" if name == "softmax" else "select"]
        print(f"OK: {name} in {plan} slice(s) per row: {check(name, result, want)}")

if __name__ == "__main__":
    main()
