"""LLM sampling in the CuTe DSL with cuda.coop: softmax, top-k masking and renormalisation, top-p renormalisation, and
sampling (plain and min-p) from a (batch, vocab) float32 matrix, each checked against NumPy.

The kernels are in ``sampling_cute.py`` (the kernels of ``sampling_numba.py`` for ``cuda.coop.cutlass``: one
1024-thread block per row); the problem, the NumPy oracles and the check are those of ``llm_sampling.py`` and
``sampling_reference.py``. Every kernel is built for sm_90a without a GPU (``cute_coop.compile_kernel`` on fake
tensors); with a GPU and torch (to hand CuTe the device arrays) each is launched on random rows and checked, and
without one the script says that it could not launch.

    python examples/workloads/cute_llm_sampling.py [--batch 8] [--vocab 32000]
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

try:
    import torch  # before cutlass: the other order once broke torch's operator registry
except ImportError:
    torch = None
import cutlass  # noqa: E402
from cutlass.cute.runtime import make_fake_tensor  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
import sampling_cute as kernels  # noqa: E402
import sampling_reference as ref  # noqa: E402
from sampling_reference import check, problem  # noqa: E402  (the same problem and check as the numba run)
import cuda.coop.cutlass as cute_coop  # noqa: E402

SCALARS = {np.dtype(np.int32): cutlass.Int32, np.dtype(np.int64): cutlass.Int64, np.dtype(np.float32): cutlass.Float32,
           np.dtype(np.uint64): cutlass.Uint64}


def launches(batch: int, vocab: int, seed: int = 0, philox_seed: int = 12345, philox_offset: int = 0):
    """(name, launcher, host arguments, output index, oracle) of every kernel on one random problem."""
    return launches_for(*problem(batch, vocab, seed), philox_seed, philox_offset)


def launches_for(logits, probs, top_k, top_p, min_p, philox_seed: int = 12345, philox_offset: int = 0):
    """(name, launcher, host arguments, output index, oracle) of every kernel on the given rows and parameters:
    llm_sampling.py's, but the top-k kernels take the float arrays themselves (the CuTe kernels bitcast the values),
    and each launcher takes the batch after these arguments."""
    batch, vocab = logits.shape
    f32 = np.full((batch, vocab), np.nan, np.float32).ravel()
    samples = np.full(batch, -1, np.int32)
    v = np.int64(vocab)
    u = ref.uniforms(philox_seed, philox_offset, batch)
    seed, offset = np.uint64(philox_seed), np.uint64(philox_offset)
    # launched a block per row (slice length = vocab), top-k, top-p and the samplers read neither their bins or
    # partials nor the barrier's words
    unused_counts, unused_masses = np.zeros(1, np.int32), np.zeros(1, np.int64)
    unused_partials, unused_words = np.zeros(1, np.float32), np.zeros(2, np.int32)
    unused_lasts = np.zeros(1, np.int32)
    return [
        ("softmax", kernels.launch_softmax, (logits.ravel(), f32.copy(), v, np.float32(1)), 1,
         lambda: ref.softmax(logits)),
        ("top_k_mask_logits", kernels.launch_top_k_mask_logits,
         (logits.ravel(), f32.copy(), unused_counts, unused_words, v, v, top_k), 1,
         lambda: ref.top_k_mask_logits(logits, top_k)),
        ("top_k_renorm_probs", kernels.launch_top_k_renorm_probs,
         (probs.ravel(), f32.copy(), unused_counts, unused_partials, unused_words, v, v, top_k), 1,
         lambda: ref.renorm(probs, ref.top_k_keep(probs, top_k))),
        ("top_p_renorm_probs", kernels.launch_top_p_renorm_probs,
         (probs.ravel(), f32.copy(), unused_masses, unused_partials, unused_words, v, v, top_p), 1,
         lambda: ref.renorm(probs, ref.top_p_keep(probs, top_p))),
        ("sampling_from_probs", kernels.launch_sampling_from_probs,
         (probs.ravel(), samples.copy(), unused_partials, unused_lasts, unused_words, v, v, seed, offset), 1,
         lambda: ref.sample(probs, np.ones(probs.shape, bool), u, scale_by_kept=False)),
        ("min_p_sampling_from_probs", kernels.launch_min_p_sampling_from_probs,
         (probs.ravel(), samples.copy(), unused_partials, unused_lasts, unused_words, v, v, min_p, seed, offset), 1,
         lambda: ref.sample(probs, ref.min_p_keep(probs, min_p), u, scale_by_kept=True)),
        ("top_k_top_p_sampling_from_probs", kernels.launch_top_k_top_p_sampling_from_probs,
         (probs.ravel(), samples.copy(), v, top_k, top_p, seed, offset), 1,
         lambda: ref.top_k_top_p_joint(probs, top_k, top_p, philox_seed, philox_offset)),
    ]


def sliced_launches(logits, probs, top_k, top_p, min_p, philox_seed: int = 12345, philox_offset: int = 0):
    """The small-batch launches over row slices (``slice_plan``: each row split into slices, one block each):
    (slices per row, {name: (steps, output array, oracle)}), ``steps`` a list of (name, launcher, host arguments,
    blocks) launched in order on shared arrays. Softmax: one launch, each slice's (max, sum) pair meeting the row's
    others across a grid barrier, then the merge and the write. Top-k and top-p: one launch whose blocks meet at a
    grid barrier after each radix digit and once more for the kept masses. The samplers: one launch, each slice's
    kept mass meeting across a grid barrier (min-p: after one more for the slices' largest probabilities). Here on
    ``slice_plan``'s slices whatever the row length, so that the script checks them (``select_plan``, which the
    benchmark and numba's host wrappers follow for all but the softmax, keeps rows under 65536 items whole)."""
    batch, vocab = logits.shape
    slices, length = kernels.slice_plan(batch, vocab)
    v, n, t, blocks = np.int64(vocab), np.int64(length), np.float32(1), batch * slices
    partials = np.full(2 * batch * slices, np.nan, np.float32)
    counts = np.zeros(batch * 4 * slices * kernels.BINS, np.int32)
    masses = np.zeros(batch * 4 * slices * kernels.BINS, np.int64)
    kept = np.full(batch * slices, np.nan, np.float32)
    arrive = np.zeros(2, np.int32)  # the grid barrier's words (top-k: one launch, its blocks meet between digits)
    soft, masked, top_k_out, top_p_out = (np.full(batch * vocab, np.nan, np.float32) for _ in range(4))
    x, p = logits.ravel(), probs.ravel()
    lasts = np.full(batch * slices, -2, np.int32)
    drawn, min_p_drawn = np.full(batch, -1, np.int32), np.full(batch, -1, np.int32)
    seed, offset = np.uint64(philox_seed), np.uint64(philox_offset)
    u = ref.uniforms(philox_seed, philox_offset, batch)

    return slices, {
        "softmax": ([("softmax_slices", kernels.launch_softmax_slices, (x, partials, soft, arrive, v, n, t),
                      blocks)], soft, lambda: ref.softmax(logits)),
        "top_k_mask_logits": ([("top_k_mask_slices", kernels.launch_top_k_mask_logits,
                                (x, masked, counts, arrive, v, n, top_k), blocks)],
                              masked, lambda: ref.top_k_mask_logits(logits, top_k)),
        "top_k_renorm_probs": ([("top_k_renorm_slices", kernels.launch_top_k_renorm_probs,
                                 (p, top_k_out, counts, kept, arrive, v, n, top_k), blocks)],
                               top_k_out, lambda: ref.renorm(probs, ref.top_k_keep(probs, top_k))),
        "top_p_renorm_probs": ([("top_p_renorm_slices", kernels.launch_top_p_renorm_probs,
                                 (p, top_p_out, masses, kept, arrive, v, n, top_p), blocks)],
                               top_p_out, lambda: ref.renorm(probs, ref.top_p_keep(probs, top_p))),
        "sampling_from_probs": ([("sampling_slices", kernels.launch_sampling_from_probs,
                                  (p, drawn, partials, lasts, arrive, v, n, seed, offset), blocks)],
                                drawn, lambda: ref.sample(probs, np.ones(probs.shape, bool), u, scale_by_kept=False)),
        "min_p_sampling_from_probs": ([("min_p_sampling_slices", kernels.launch_min_p_sampling_from_probs,
                                        (p, min_p_drawn, partials, lasts, arrive, v, n, min_p, seed, offset), blocks)],
                                      min_p_drawn,
                                      lambda: ref.sample(probs, ref.min_p_keep(probs, min_p), u, scale_by_kept=True)),
    }


def cluster_build(batch: int, vocab: int):
    """(launcher, host arguments, threads) of the cluster softmax (``softmax_cluster_launcher``, whose last argument
    is the batch) on a problem's rows of ``vocab`` items."""
    logits = problem(batch, vocab)[0]
    threads, held, length = kernels.cluster_softmax_plan(vocab)
    host = (logits.ravel(), np.full(logits.size, np.nan, np.float32), np.int64(vocab), np.int64(length),
            np.float32(1))
    return kernels.softmax_cluster_launcher(threads, held), host, threads


def fake(a):
    """A launcher argument for a build without a GPU: a fake 1-D tensor for an array, a CuTe numeric for a scalar."""
    if isinstance(a, np.ndarray):
        return make_fake_tensor(SCALARS[a.dtype], a.shape, stride=(1,))
    return SCALARS[a.dtype](a.item())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--vocab", type=int, default=32000)
    args = parser.parse_args()
    batch = cutlass.Int32(args.batch)
    for name, launcher, host, out, oracle in launches(args.batch, args.vocab):
        start = time.perf_counter()
        built = cute_coop.compile_kernel(launcher, *(fake(a) for a in host), batch)
        print(ref.built_line(name, built, "sm_90a", time.perf_counter() - start, kernels.THREADS))
        try:
            if torch is None or not torch.cuda.is_available():
                raise RuntimeError("no CUDA device (or no torch to hand the arrays to CuTe)")
            from cutlass.cute.runtime import from_dlpack

            device = [torch.from_numpy(a).cuda() if isinstance(a, np.ndarray) else a for a in host]
            launcher(*(from_dlpack(a) if isinstance(a, torch.Tensor) else SCALARS[a.dtype](a.item()) for a in device),
                     batch)
            torch.cuda.synchronize()
            got = device[out].cpu().numpy()
        except Exception as exc:  # no driver or no GPU on this machine
            print(f"  could not launch on a GPU here ({type(exc).__name__}: {str(exc).splitlines()[0][:100]})")
            continue
        print(f"OK: {name}: {check(name, got, oracle())}")
    slices, sliced = sliced_launches(*problem(args.batch, args.vocab))
    built = set()
    for steps, _, _ in sliced.values():  # built whatever the plan says; launched in order below
        for name, launcher, host, blocks in steps:
            if name not in built:
                built.add(name)
                start = time.perf_counter()
                compiled = cute_coop.compile_kernel(launcher, *(fake(a) for a in host), cutlass.Int32(blocks))
                print(ref.built_line(name, compiled, "sm_90a", time.perf_counter() - start, kernels.THREADS))
    launcher, host, threads = cluster_build(args.batch, args.vocab)  # small batches of rows a block would hold
    start = time.perf_counter()
    compiled = cute_coop.compile_kernel(launcher, *(fake(a) for a in host), batch)
    print(ref.built_line("softmax_cluster", compiled, "sm_90a", time.perf_counter() - start, threads))
    for name, (steps, out, oracle) in sliced.items():
        try:
            got = run_steps(steps, out)
        except Exception as exc:  # no driver or no GPU on this machine
            print(f"  could not launch on a GPU here ({type(exc).__name__}: {str(exc).splitlines()[0][:100]})")
            return
        print(f"OK: {name} in {slices} slices per row: {check(name, got, oracle())}")


def run_steps(steps, out: np.ndarray) -> np.ndarray:
    """Launch ``steps`` in order on device copies of their host arrays (one per host array: the launches share
    them) and return the device copy of ``out``."""
    if torch is None or not torch.cuda.is_available():
        raise RuntimeError("no CUDA device (or no torch to hand the arrays to CuTe)")
    from cutlass.cute.runtime import from_dlpack

    arrays = {id(a): torch.from_numpy(a).cuda() for _, _, host, _ in steps for a in host if isinstance(a, np.ndarray)}
    for _, launcher, host, blocks in steps:
        launcher(*(from_dlpack(arrays[id(a)]) if isinstance(a, np.ndarray) else SCALARS[a.dtype](a.item())
                   for a in host), cutlass.Int32(blocks))
    torch.cuda.synchronize()
    return arrays[id(out)].cpu().numpy()

if __name__ == "__main__":
    main()
