"""LLM sampling: ours (examples/workloads/sampling_numba.py, sampling_cute.py) against FlashInfer 0.7.2.post1 and
the torch code a PyTorch user writes, in one process, every output verified.

Grid: vocab 32000, 128256, 151936, 256000 x batch 1, 8, 32, 128, 512 x two distributions (softmax of normal logits
with sigma 1; of Gumbel logits with beta 0.1); top-k 50, top-p 0.9, min-p 0.1. Timing: CUDA events; "warm" =
back-to-back launches behind a spin kernel (common.time_launches; the row stays in L2 where it fits), "cold" = each
launch after a 256 MiB write that evicts L2, behind a spin too (``_cold_ms``: the GPU time, not the host's dispatch).

Verification, per shape and implementation: deterministic functions against FlashInfer's output (softmax and renorm:
kept set exact, values within a few float32 ulps; mask: bit for bit); samplers: every sample is a kept index of its
row (positive, and in the top-k / min-p set), and ours equal FlashInfer's samples for the same seed and offset except
where a uniform lies within rounding of a prefix sum (counted in the record); top-p: kept set and values against the
exact NumPy oracle (``verify_top_p``: FlashInfer's default top-p sums with float atomics and moves a few values).
"""
from __future__ import annotations

import math
import sys
import time
from pathlib import Path

import numpy as np

from ..common import ROOT, hidden_behind_spin, spin_gpu, time_launches

COLD_SPIN_MS = 0.5  # the shortest spin ahead of a cold launch (_cold_ms)

sys.path.insert(0, str(ROOT / "examples" / "workloads"))

FUNCTIONS = ("softmax", "top_k_mask_logits", "top_k_renorm_probs", "top_p_renorm_probs", "sampling_from_probs",
             "min_p_sampling_from_probs", "top_k_top_p_sampling_from_probs")
SAMPLERS = ("sampling_from_probs", "min_p_sampling_from_probs", "top_k_top_p_sampling_from_probs")
VOCABS = (32000, 128256, 151936, 256000)
BATCHES = (1, 8, 32, 128, 512)
DISTRIBUTIONS = ("normal", "gumbel")
TOP_K, TOP_P, MIN_P = 50, 0.9, 0.1
SEED, OFFSET = 2026, 0


def logits_for(batch: int, vocab: int, distribution: str, seed: int = 0):
    import torch

    g = torch.Generator(device="cuda").manual_seed(seed)
    if distribution == "normal":
        return torch.randn(batch, vocab, device="cuda", generator=g)
    u = torch.rand(batch, vocab, device="cuda", generator=g).clamp_(1e-20, 1 - 1e-7)
    return -0.1 * torch.log(-torch.log(u))  # Gumbel(0, beta 0.1)


class Ours:
    """Our kernels on one backend, launched on torch tensors (numba: wrapped once as device arrays)."""

    def __init__(self, backend: str):
        self.backend = backend
        if backend == "numba":
            import sampling_numba as kernels
            from numba_cuda_mlir import cuda

            self.kernels, self.cuda = kernels, cuda
        else:
            import sampling_cute as kernels

            self.kernels, self.compiled, self.buffers = kernels, {}, {}

    def launcher(self, name: str, x, out, params: dict):
        """A no-argument callable that runs ``name`` on ``x`` into ``out``."""
        if self.backend == "numba":
            return self._numba(name, x, out, params)
        return self._cute(name, x, out, params)

    def _cute(self, name, x, out, params):
        """CuTe kernels compiled once per function (cute.compile), on buffers of the largest shape: the kernels read
        only the first batch x vocab items (vocab and batch are runtime values), so every shape reuses the build.
        Softmax, top-k, top-p and the samplers take one launch over row slices where ``softmax_plan`` or
        ``select_plan`` says so (small batches: softmax's pairs and the kept masses in ``partials``, the radix counts
        or masses in ``counts``/``masses``: batch x slices <= SLICE_BLOCKS), as ``sampling_numba``'s host wrappers
        do.
        ``x`` is copied in before timing; ``out`` receives the result after each launch (not timed: the copy is
        made by ``collect``)."""
        import cutlass
        import torch
        from cutlass.cute.runtime import from_dlpack

        k = self.kernels
        batch, vocab = x.shape
        size = max(VOCABS) * max(BATCHES)
        if not self.buffers:
            self.buffers = {"x": torch.empty(size, device="cuda"), "out": torch.empty(size, device="cuda"),
                            "samples": torch.empty(max(BATCHES), dtype=torch.int32, device="cuda"),
                            "k": torch.empty(max(BATCHES), dtype=torch.int32, device="cuda"),
                            "p": torch.empty(max(BATCHES), device="cuda"),
                            "min_p": torch.empty(max(BATCHES), device="cuda"),
                            "partials": torch.empty(2 * max(BATCHES) * k.THREADS, device="cuda"),
                            "counts": torch.empty(4 * k.SLICE_BLOCKS * k.BINS, dtype=torch.int32, device="cuda"),
                            "masses": torch.empty(4 * k.SLICE_BLOCKS * k.BINS, dtype=torch.int64, device="cuda"),
                            "pivots": torch.empty(max(BATCHES), device="cuda"),
                            "lasts": torch.empty(max(BATCHES) * k.THREADS, dtype=torch.int32, device="cuda"),
                            "arrive": torch.zeros(2, dtype=torch.int32, device="cuda")}
            self.views = {key: from_dlpack(t) for key, t in self.buffers.items()}
        b, t = self.buffers, self.views
        b["x"][: x.numel()].copy_(x.reshape(-1))
        for key in ("k", "p", "min_p"):
            b[key][:batch].copy_(params[key])
        v, seed, offset = cutlass.Int64(vocab), cutlass.Uint64(SEED), cutlass.Uint64(OFFSET)
        compile_ = __import__("cutlass.cute", fromlist=["compile"]).compile
        sliced_samplers = ("sampling_from_probs", "min_p_sampling_from_probs")
        slices, length = (k.softmax_plan if name == "softmax" else k.select_plan)(batch, vocab)
        if batch * slices > torch.cuda.get_device_properties(0).multi_processor_count:
            slices, length = 1, vocab  # a grid barrier needs every block resident
        selects = ("top_k_mask_logits", "top_k_renorm_probs", "top_p_renorm_probs")
        if name == "softmax" and k.uses_cluster_softmax(batch, vocab):  # a cluster of blocks a row
            threads, held, length = k.cluster_softmax_plan(vocab)
            args = (t["x"], t["out"], v, cutlass.Int64(length), cutlass.Float32(1.0), cutlass.Int32(batch))
            step = f"softmax_cluster_{threads}x{held}"
            if step not in self.compiled:
                self.compiled[step] = compile_(k.softmax_cluster_launcher(threads, held), *args)
            compiled_cluster = self.compiled[step]

            def launch_cluster():
                compiled_cluster(*args)

            def collect_cluster():
                out.reshape(-1).copy_(b["out"][: out.numel()])

            launch_cluster.collect = collect_cluster
            return launch_cluster
        if name in selects + sliced_samplers or (name == "softmax" and slices > 1):
            # one launch, a block per row or per row slice (its blocks meet at grid barriers)
            n, blocks = cutlass.Int64(length if slices > 1 else vocab), cutlass.Int32(batch * slices)
            args = {"softmax": (t["x"], t["partials"], t["out"], t["arrive"], v, n, cutlass.Float32(1.0), blocks),
                    "top_k_mask_logits": (t["x"], t["out"], t["counts"], t["arrive"], v, n, t["k"], blocks),
                    "top_k_renorm_probs": (t["x"], t["out"], t["counts"], t["partials"], t["arrive"], v, n, t["k"],
                                           blocks),
                    "top_p_renorm_probs": (t["x"], t["out"], t["masses"], t["partials"], t["arrive"], v, n, t["p"],
                                           blocks),
                    "sampling_from_probs": (t["x"], t["samples"], t["partials"], t["lasts"], t["arrive"], v, n, seed,
                                            offset, blocks),
                    "min_p_sampling_from_probs": (t["x"], t["samples"], t["partials"], t["lasts"], t["arrive"], v, n,
                                                  t["min_p"], seed, offset, blocks)}[name]
            source_select = b["samples"] if name in sliced_samplers else b["out"]
            step = "softmax_slices" if name == "softmax" else name
            if step not in self.compiled:
                self.compiled[step] = compile_(getattr(k, f"launch_{step}"), *args)
            compiled_select = self.compiled[step]

            def launch_select():
                compiled_select(*args)

            def collect_select():
                out.reshape(-1).copy_(source_select[: out.numel()])

            launch_select.collect = collect_select
            return launch_select
        sampler = name in SAMPLERS
        dst = t["samples"] if sampler else t["out"]
        args = {
            "softmax": (t["x"], dst, v, cutlass.Float32(1.0)),
            "sampling_from_probs": (t["x"], dst, v, seed, offset),
            "min_p_sampling_from_probs": (t["x"], dst, v, t["min_p"], seed, offset),
            "top_k_top_p_sampling_from_probs": (t["x"], dst, v, t["k"], t["p"], seed, offset),
        }[name] + (cutlass.Int32(batch),)
        if name not in self.compiled:
            self.compiled[name] = compile_(getattr(k, f"launch_{name}"), *args)
        compiled = self.compiled[name]
        source = b["samples"] if sampler else b["out"]

        def launch():
            compiled(*args)

        def collect():
            out.reshape(-1).copy_(source[: out.numel()])

        launch.collect = collect
        return launch

    def _numba(self, name, x, out, params):
        k, cuda = self.kernels, self.cuda
        batch, vocab = x.shape
        flat = cuda.as_cuda_array(x.reshape(-1))
        dst = cuda.as_cuda_array(out.reshape(-1))
        v = np.int64(vocab)
        grid = (batch, k.THREADS)
        seed, offset = np.uint64(SEED), np.uint64(OFFSET)
        params = {key: cuda.as_cuda_array(t) for key, t in params.items()}  # numba takes no torch dtypes
        slices, _ = k.slice_plan(batch, vocab)
        partials = cuda.device_array(2 * batch * slices, np.float32)  # made here: outside the timed launches
        counts = cuda.device_array(batch * 4 * slices * k.BINS, np.int32)
        masses = cuda.device_array(batch * 4 * slices * k.BINS, np.int64)
        if name == "softmax":  # one launch: a block per row, or row slices for small batches
            logits2d, out2d = cuda.as_cuda_array(x), cuda.as_cuda_array(out)
            arrive = k.barrier_words()
            return lambda: k.softmax(logits2d, out2d, np.float32(1), partials, arrive)
        if name == "top_k_mask_logits":  # one launch: a block per row, or row slices for small batches
            logits_bits, out_bits = cuda.as_cuda_array(x).view(np.uint32), cuda.as_cuda_array(out).view(np.uint32)
            arrive = k.barrier_words()
            return lambda: k.top_k_mask_logits(logits_bits, out_bits, params["k"], counts, arrive)
        if name == "top_k_renorm_probs":  # one launch: a block per row, or row slices for small batches
            probs2d, out2d = cuda.as_cuda_array(x), cuda.as_cuda_array(out)
            arrive = k.barrier_words()
            return lambda: k.top_k_renorm_probs(probs2d, probs2d.view(np.uint32), out2d, params["k"], counts,
                                                partials[: batch * slices], arrive)
        if name == "top_p_renorm_probs":  # one launch: a block per row, or row slices for small batches
            probs2d, out2d = cuda.as_cuda_array(x), cuda.as_cuda_array(out)
            arrive = k.barrier_words()
            return lambda: k.top_p_renorm_probs(probs2d, probs2d.view(np.uint32), out2d, params["p"], masses,
                                                partials[: batch * slices], arrive)
        if name in ("sampling_from_probs", "min_p_sampling_from_probs"):  # one launch: a block per row, or row
            # slices for small batches
            probs2d = cuda.as_cuda_array(x)
            lasts, arrive = cuda.device_array(batch * slices, np.int32), k.barrier_words()
            if name == "sampling_from_probs":
                return lambda: k.sampling_from_probs(probs2d, dst, SEED, OFFSET, partials, lasts, arrive)
            return lambda: k.min_p_sampling_from_probs(probs2d, dst, params["min_p"], SEED, OFFSET, partials, lasts,
                                                       arrive)
        kernel, args = (k.top_k_top_p_sampling_from_probs_kernel,
                        (flat, dst, v, params["k"], params["p"], seed, offset))
        configured = kernel[grid]
        return lambda: configured(*args)


def flashinfer_launcher(name: str, x, out, params: dict):
    import flashinfer.sampling as fs

    k, p, min_p = params["k_t"], params["p_t"], params["min_p_t"]
    calls = {
        "softmax": lambda: fs.softmax(x),
        "top_k_mask_logits": lambda: fs.top_k_mask_logits(x, k),
        "top_k_renorm_probs": lambda: fs.top_k_renorm_probs(x, k),
        "top_p_renorm_probs": lambda: fs.top_p_renorm_probs(x, p),
        "sampling_from_probs": lambda: fs.sampling_from_probs(x, seed=SEED, offset=OFFSET),
        "min_p_sampling_from_probs": lambda: fs.min_p_sampling_from_probs(x, min_p, seed=SEED, offset=OFFSET),
        "top_k_top_p_sampling_from_probs": lambda: fs.top_k_top_p_sampling_from_probs(
            x, k, p, filter_apply_order="joint", seed=SEED, offset=OFFSET),
    }
    call = calls[name]

    def run():
        out.copy_(call().reshape(out.shape))  # the copy is timed in torch's row too: see torch_launcher

    return call, run


def torch_launcher(name: str, x, params: dict):
    """What a PyTorch user writes (no fused kernels)."""
    import torch

    k, p, min_p = TOP_K, params["p_t"][:, None], params["min_p_t"][:, None]

    def top_k_keep(v):
        return v >= torch.topk(v, k, dim=-1).values[:, -1:]

    def top_p_keep(v):
        ordered, index = torch.sort(v, dim=-1, descending=True)
        before = torch.cumsum(ordered, dim=-1) - ordered  # mass strictly before each (sorted) value
        keep_sorted = before < p * v.sum(-1, keepdim=True)
        return torch.zeros_like(keep_sorted).scatter_(-1, index, keep_sorted)

    calls = {
        "softmax": lambda: torch.softmax(x, dim=-1),
        "top_k_mask_logits": lambda: x.masked_fill(~top_k_keep(x), -math.inf),
        "top_k_renorm_probs": lambda: (lambda kept: kept / kept.sum(-1, keepdim=True))(x * top_k_keep(x)),
        "top_p_renorm_probs": lambda: (lambda kept: kept / kept.sum(-1, keepdim=True))(x * top_p_keep(x)),
        "sampling_from_probs": lambda: torch.multinomial(x, 1).squeeze(1),
        "min_p_sampling_from_probs": lambda: torch.multinomial(
            x * (x >= x.max(-1, keepdim=True).values * min_p), 1).squeeze(1),
        "top_k_top_p_sampling_from_probs": lambda: torch.multinomial(x * top_k_keep(x) * top_p_keep(x), 1).squeeze(1),
    }
    return calls[name]


def _cold_ms(fn, reps: int) -> float:
    """Median time of one launch after a write that evicts L2 (256 MiB), CUDA events around the launch alone, the
    launch enqueued behind a spin kernel (``common.hidden_behind_spin``) so that the host's dispatch cost (tens of
    microseconds for a numba-cuda-mlir launch) is not timed as the GPU's: cold means an empty L2, not a slow host."""
    import torch

    flush = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
    samples = []

    def once(spin_ms: float) -> tuple[float, float]:
        flush.fill_(1)
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        spin_gpu(spin_ms)
        start.record()
        t0 = time.perf_counter()
        fn()
        host_ms = (time.perf_counter() - t0) * 1e3
        end.record()
        end.synchronize()
        return start.elapsed_time(end), host_ms

    spin_ms, synchronises = COLD_SPIN_MS, False
    for _ in range(reps):
        gpu_ms, _, spin_ms, found = hidden_behind_spin(once, spin_ms, 0 if synchronises else 4)
        synchronises = synchronises or found  # (then no later launch retries)
        samples.append(gpu_ms)
    return float(np.median(samples))


def verify(name: str, ours, reference, x, params: dict) -> dict:
    """What was checked and how far apart: see the module docstring."""
    import torch

    if name in SAMPLERS:
        rows = torch.arange(x.shape[0], device=x.device)
        ours_l = ours.long()
        in_range = bool(((ours_l >= 0) & (ours_l < x.shape[1])).all())
        chosen = x[rows, ours_l.clamp(0, x.shape[1] - 1)]
        ok = in_range and bool((chosen > 0).all())
        if name == "min_p_sampling_from_probs":
            ok &= bool((chosen >= x.max(-1).values * params["min_p_t"]).all())
        if name == "top_k_top_p_sampling_from_probs":
            ok &= bool(((x > chosen[:, None]).sum(-1) < TOP_K).all())
        differs = int((ours_l != reference.long()).sum())
        return {"ok": ok, "samples_differing_from_flashinfer": differs}
    if name == "top_k_mask_logits":
        return {"ok": bool(torch.equal(ours.view(torch.int32), reference.view(torch.int32)))}
    if name == "top_p_renorm_probs":
        return verify_top_p(ours, reference, x, params)
    same_set = bool(torch.equal(ours == 0, reference == 0))
    rel = ((ours.double() - reference.double()).abs() / reference.double().abs().clamp_min(1e-30)).max().item()
    return {"ok": same_set and rel < 1e-5, "max_relative_error": rel, "kept_set_equal": same_set}


def verify_top_p(ours, reference, x, params: dict) -> dict:
    """Top-p against the exact oracle (sampling_reference.top_p_keep: float64 masses), not against FlashInfer: by
    default FlashInfer sums its radix buckets with float atomics, so its kept set moves by a few values from run to
    run wherever p x total lies within that rounding of a boundary (counted here as ``flashinfer_rows_off``). Ours
    sums in 2^-40 fixed point, so a row may differ from the float64 oracle only where the target lies within
    vocab x 2^-40 of a boundary (``ambiguous_rows``, not counted as errors)."""
    import sampling_reference as ref

    probs, got, theirs = (t.double().cpu().numpy() for t in (x, ours, reference))
    p = params["p_t"].cpu().numpy()
    keep = ref.top_p_keep(x.cpu().numpy(), p)
    want = ref.renorm(x.cpu().numpy(), keep).astype(np.float64)
    slack = probs.shape[1] * 2.0 ** -40
    wrong = ambiguous = flashinfer_off = 0
    worst = 0.0
    for r in range(probs.shape[0]):
        if (theirs[r] != 0).tolist() != keep[r].tolist():
            flashinfer_off += 1
        if (got[r] != 0).tolist() == keep[r].tolist():
            kept = keep[r]
            worst = max(worst, float(np.max(np.abs(got[r][kept] - want[r][kept]) / want[r][kept], initial=0.0)))
            continue
        sums = np.cumsum(np.sort(probs[r])[::-1])
        target = float(p[r]) * sums[-1]
        at = int(np.searchsorted(sums, target))  # the first prefix reaching the target
        margins = [abs(sums[i] - target) for i in (at - 1, at) if 0 <= i < sums.size]
        if min(margins) <= slack:
            ambiguous += 1
        else:
            wrong += 1
    return {"ok": wrong == 0 and worst < 1e-5, "max_relative_error": worst, "rows_wrong": wrong,
            "ambiguous_rows": ambiguous, "flashinfer_rows_off": flashinfer_off}


def run(backends: tuple[str, ...], functions=FUNCTIONS, vocabs=VOCABS, batches=BATCHES,
        distributions=DISTRIBUTIONS, reps: int = 10, log=print, checkpoint=lambda records: None) -> list[dict]:
    import torch

    ours = {b: Ours(b) for b in backends}
    records = []
    for vocab in vocabs:
        for batch in batches:
            for distribution in distributions:
                logits = logits_for(batch, vocab, distribution)
                probs = torch.softmax(logits, dim=-1)
                params = {"k": torch.full((batch,), TOP_K, dtype=torch.int32, device="cuda"),
                          "p": torch.full((batch,), TOP_P, dtype=torch.float32, device="cuda"),
                          "min_p": torch.full((batch,), MIN_P, dtype=torch.float32, device="cuda")}
                params.update(k_t=params["k"], p_t=params["p"], min_p_t=params["min_p"])
                for name in functions:
                    x = logits if name in ("softmax", "top_k_mask_logits") else probs
                    sampler = name in SAMPLERS
                    out_shape, out_dtype = ((batch,), torch.int32) if sampler else ((batch, vocab), torch.float32)
                    call, _ = flashinfer_launcher(name, x, None, params)
                    reference = call()
                    row = {"function": name, "vocab": vocab, "batch": batch, "distribution": distribution,
                           "times_ms": {}, "checks": {}}
                    fns = {"flashinfer": call, "torch": torch_launcher(name, x, params)}
                    for backend, impl in ours.items():
                        out = torch.full(out_shape, -1 if sampler else math.nan, dtype=out_dtype, device="cuda")
                        launch = impl.launcher(name, x, out, {kk: v for kk, v in params.items() if "_t" not in kk})
                        launch()
                        getattr(launch, "collect", lambda: None)()
                        torch.cuda.synchronize()
                        row["checks"][backend] = verify(name, out, reference, x, params)
                        fns[backend] = launch
                    for impl_name, fn in fns.items():
                        warm = time_launches(fn, warmup=2, reps=reps, inner=5)
                        row["times_ms"][impl_name] = {"warm": float(np.median(warm.batches_ms)),
                                                      "cold": _cold_ms(fn, reps),
                                                      "host_us": warm.host_us,  # enqueue cost of one call
                                                      "spin_ms": warm.spin_ms}
                    records.append(row)
                    log(_line(row))
                    checkpoint(records)
                del logits, probs
                torch.cuda.empty_cache()
    return records


def _line(row: dict) -> str:
    t = row["times_ms"]
    fi = t["flashinfer"]["warm"]
    parts = [f"{row['function']:<32} V={row['vocab']:<6} B={row['batch']:<3} {row['distribution']:<6}",
             f"flashinfer {fi * 1e3:8.1f} us"]
    for impl, v in t.items():
        if impl != "flashinfer":
            parts.append(f"{impl} {v['warm'] * 1e3:8.1f} us ({fi / v['warm']:.2f}x)")
    checks = " ".join(f"{b}:{'ok' if c['ok'] else 'WRONG'}" for b, c in row["checks"].items())
    return "  ".join(parts) + "  " + checks


def dry_run(backends: tuple[str, ...]) -> list[str]:
    """No GPU: build every kernel of each backend for sm_90 and report its resources."""
    from sampling_reference import built_line  # the example scripts' report, with their launchability check

    lines = []
    if "numba" in backends:
        import llm_sampling

        import cuda.coop.numba_mlir as numba_coop

        for name, kernel, host, _, _ in llm_sampling.launches(2, 4096):
            start = time.perf_counter()
            built = numba_coop.compile_kernel(kernel, host, block=1024, grid=2)
            lines.append("numba " + built_line(name, built, "sm_90", time.perf_counter() - start))
        for name, kernel, host, blocks in llm_sampling.sliced_builds(2, 4096):  # small batches
            start = time.perf_counter()
            built = numba_coop.compile_kernel(kernel, host, block=1024, grid=blocks)
            lines.append("numba " + built_line(name, built, "sm_90", time.perf_counter() - start))
        kernel, host, threads = llm_sampling.cluster_build(2, 32000)
        start = time.perf_counter()
        built = numba_coop.compile_kernel(kernel, host, block=threads, grid=2 * llm_sampling.kernels.CLUSTER,
                                          cluster=llm_sampling.kernels.CLUSTER)
        lines.append("numba " + built_line("softmax_cluster", built, "sm_90", time.perf_counter() - start, threads))
    if "cute" in backends:
        import cute_llm_sampling
        import cutlass

        import cuda.coop.cutlass as cute_coop

        for name, launcher, host, _, _ in cute_llm_sampling.launches(2, 4096):
            start = time.perf_counter()
            built = cute_coop.compile_kernel(launcher, *(cute_llm_sampling.fake(a) for a in host), cutlass.Int32(2))
            lines.append("cute " + built_line(name, built, "sm_90a", time.perf_counter() - start))
        built_names = set()
        for steps, _, _ in cute_llm_sampling.sliced_launches(*cute_llm_sampling.problem(2, 4096))[1].values():
            for name, launcher, host, blocks in steps:
                if name not in built_names:
                    built_names.add(name)
                    start = time.perf_counter()
                    built = cute_coop.compile_kernel(launcher, *(cute_llm_sampling.fake(a) for a in host),
                                                     cutlass.Int32(blocks))
                    lines.append("cute " + built_line(name, built, "sm_90a", time.perf_counter() - start))
        launcher, host, threads = cute_llm_sampling.cluster_build(2, 32000)
        start = time.perf_counter()
        built = cute_coop.compile_kernel(launcher, *(cute_llm_sampling.fake(a) for a in host), cutlass.Int32(2))
        lines.append("cute " + built_line("softmax_cluster", built, "sm_90a", time.perf_counter() - start, threads))
    return lines


def write(records: list[dict], path: Path) -> None:
    import json

    path.write_text(json.dumps(records, indent=1) + "\n")
