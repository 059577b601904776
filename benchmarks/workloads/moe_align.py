"""MoE align: ours (examples/workloads/moe_align_numba.py, moe_align_cute.py) against vLLM's CUDA op
(``torch.ops._moe_C.moe_align_block_size``, where vLLM's ``_moe_C`` library loads; else the same host function and
kernels compiled from vLLM 0.33.0's published ``csrc/moe/moe_align_sum_kernels.cu`` into ``VLLM_MOE_BUILD``, default
``.anchors/vllm-moe-build/libvllm_moe_align.so``, registering ``torch.ops.coop_vllm.moe_align_block_size``: the source
copy is git-ignored, its recipe is benchmarks/workloads/anchors/), vLLM's Triton version (where
``moe_align_block_size_triton`` imports) and a vectorised torch version (bincount, cumsum, stable sort, scatter), in
one process, every output verified.

Grid (issue 43): tokens 1, 16, 128, 1024, 8192, 65536 x (experts, k) in (8, 2), (64, 6), (128, 8), (256, 8) x block
size 16, 64, 128; ``topk_ids`` int32 from a top-k of uniform random router scores (k distinct experts per token).
Timing as the sampling benchmark's: "warm" = the median of CUDA-event batches of back-to-back calls behind a spin
kernel (common.time_launches), "cold" = each call after a 256 MiB write that evicts L2 (behind a spin as well). Every
implementation writes into buffers allocated once, outside the timing (vLLM's CUDA op allocates its own small cumsum
workspace inside).

Verification per row: ours and torch's equal the stable NumPy oracle (moe_align_reference.py) exactly; vLLM's
outputs, whose order within an expert depends on atomics, as multisets per expert with the same post-pad count and
block experts (``check_as_multisets``).
"""
from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import numpy as np

from ..common import ROOT, time_launches
from .sampling import _cold_ms

sys.path.insert(0, str(ROOT / "examples" / "workloads"))

TOKENS = (1, 16, 128, 1024, 8192, 65536)
EXPERTS_K = ((8, 2), (64, 6), (128, 8), (256, 8))
BLOCK_SIZES = (16, 64, 128)
IMPLEMENTATIONS = ("vllm_cuda", "vllm_triton", "torch", "numba", "cute")
VLLM_MOE_BUILD = os.environ.get("VLLM_MOE_BUILD", str(ROOT / ".anchors" / "vllm-moe-build"))
VLLM_MOE_LIBRARY = "libvllm_moe_align.so"


def topk_ids_for(tokens: int, experts: int, k: int, seed: int = 0):
    import torch

    g = torch.Generator(device="cuda").manual_seed(seed)
    scores = torch.rand(tokens, experts, device="cuda", generator=g)
    return scores.topk(k, dim=-1).indices.to(torch.int32).contiguous()


def _sizes(numel: int, experts: int, block_size: int) -> tuple[int, int]:
    import moe_align_plan as plan

    return plan.max_num_tokens_padded(numel, experts, block_size), plan.max_num_blocks(numel, experts, block_size)


def _outputs(numel: int, experts: int, block_size: int):
    import torch

    size, blocks = _sizes(numel, experts, block_size)
    return (torch.full((size,), -7, dtype=torch.int32, device="cuda"),
            torch.full((blocks,), -7, dtype=torch.int32, device="cuda"),
            torch.full((1,), -7, dtype=torch.int32, device="cuda"))


def built_vllm_library(build_dir: str | os.PathLike[str] | None = None) -> Path:
    """Where the library built from vLLM's source is looked for: ``build_dir`` (default ``VLLM_MOE_BUILD``) /
    ``libvllm_moe_align.so``."""
    return Path(VLLM_MOE_BUILD if build_dir is None else build_dir) / VLLM_MOE_LIBRARY


def vllm_cuda_op(build_dir: str | os.PathLike[str] | None = None):
    """(vLLM's CUDA op, where it comes from): ``torch.ops._moe_C.moe_align_block_size`` where vLLM's ``_moe_C``
    imports, else ``torch.ops.coop_vllm.moe_align_block_size`` from the library built from vLLM's source; (None,
    why) where neither loads (its column is then left out)."""
    import torch

    try:
        import vllm._moe_C  # noqa: F401  (registers torch.ops._moe_C)

        return torch.ops._moe_C.moe_align_block_size, f"vllm._moe_C of vLLM {_vllm_version()}"
    except Exception as exc:
        why = f"vllm._moe_C: {type(exc).__name__}: {str(exc)[:120]}"
    library = built_vllm_library(build_dir)
    if not library.is_file():
        return None, f"{why}; no {library} (benchmarks/workloads/anchors/build_vllm_moe.sh builds it)"
    try:
        torch.ops.load_library(str(library))
        return torch.ops.coop_vllm.moe_align_block_size, f"built from vLLM's source: {library}"
    except Exception as exc:
        return None, f"{why}; {library} did not load: {type(exc).__name__}: {str(exc)[:200]}"


def _vllm_version() -> str:
    try:
        from importlib.metadata import version

        return version("vllm")
    except Exception:
        return "?"


def vllm_triton():
    try:
        from vllm.model_executor.layers.fused_moe.moe_align_block_size import moe_align_block_size_triton
    except Exception:
        return None
    return moe_align_block_size_triton


def vllm_cuda_launcher(op, topk_ids, experts: int, block_size: int, outputs):
    """vLLM's op fills every output slot itself (sentinels and the expert_ids tail included). Releases after
    the expert-map change take a seventh argument (None: no expert map); earlier ones six."""
    sorted_ids, expert_ids, post_pad = outputs
    try:
        op(topk_ids, experts, block_size, sorted_ids, expert_ids, post_pad, None)
        return lambda: op(topk_ids, experts, block_size, sorted_ids, expert_ids, post_pad, None)
    except (RuntimeError, TypeError):
        return lambda: op(topk_ids, experts, block_size, sorted_ids, expert_ids, post_pad)


def vllm_triton_launcher(fn, topk_ids, experts: int, block_size: int, outputs):
    """vLLM's Triton stages write the placed entries and the padded blocks' experts; its Python wrapper fills the
    sentinels and zeroes ``expert_ids`` first, so the timed call does too."""
    sorted_ids, expert_ids, post_pad = outputs
    numel = topk_ids.numel()

    def call():
        sorted_ids.fill_(numel)
        expert_ids.zero_()
        fn(topk_ids, experts, block_size, sorted_ids, expert_ids, post_pad)

    return call


def torch_launcher(topk_ids, experts: int, block_size: int, outputs):
    """What a PyTorch user writes, with no explicit host synchronisation (torch's CUDA bincount reads the ids'
    minimum and maximum on the host: implicit round trips): counts by bincount, padded offsets by cumsum, a stable
    sort of the expert ids (so the same stable output as ours), one scatter; expert_ids by searchsorted."""
    import torch

    sorted_ids, expert_ids, post_pad = outputs
    flat = topk_ids.reshape(-1)
    numel = flat.numel()
    positions = torch.arange(numel, device="cuda")
    first_slots = torch.arange(expert_ids.numel(), device="cuda") * block_size

    def call():
        key = torch.where((flat >= 0) & (flat < experts), flat, experts).long()
        counts = torch.bincount(key, minlength=experts + 1)[:experts]
        padded = (counts + block_size - 1) // block_size * block_size
        ends = torch.cumsum(padded, 0)
        runs = torch.cumsum(counts, 0) - counts
        order = torch.sort(key, stable=True).indices
        expert = key[order].clamp_(max=experts - 1)
        keep = key[order] < experts
        slots = ends[expert] - padded[expert] + positions - runs[expert]
        sorted_ids.fill_(numel)
        sorted_ids[slots[keep]] = order[keep].to(torch.int32)
        owner = torch.searchsorted(ends, first_slots, right=True)
        expert_ids.copy_(torch.where(first_slots < ends[-1], owner, -1))
        post_pad.copy_(ends[-1:])

    return call


class Ours:
    """Our kernels on one backend, on torch tensors, each taking the path ``small_path`` and ``launch_plan`` choose
    (the small kernel up to 8192 entries). numba: the host wrapper on the tensors wrapped once as device arrays. CuTe:
    each kernel compiled once (cute.compile) on buffers of the grid's largest sizes; the kernels read and write only
    the first ``numel`` / ``size`` slots (runtime scalars), so every shape reuses the build."""

    def __init__(self, backend: str):
        self.backend = backend
        self.compiled, self.buffers = {}, {}

    def launcher(self, topk_ids, experts: int, block_size: int, outputs):
        if self.backend == "numba":
            return self._numba(topk_ids, experts, block_size, outputs)
        return self._cute(topk_ids, experts, block_size, outputs)

    def _numba(self, topk_ids, experts, block_size, outputs):
        import moe_align_numba as kernels
        from numba_cuda_mlir import cuda

        flat = cuda.as_cuda_array(topk_ids.reshape(-1))
        arrays = [cuda.as_cuda_array(t) for t in outputs]
        blocks, _ = kernels.launch_plan(topk_ids.numel())
        counts = cuda.device_array(blocks * kernels.MAX_EXPERTS, np.int32)
        return lambda: kernels.moe_align_block_size(flat, experts, block_size, *arrays, counts)

    def _cute(self, topk_ids, experts, block_size, outputs):
        import cutlass
        import cutlass.cute as cute
        import moe_align_cute as kernels
        import moe_align_plan
        import torch
        from cutlass.cute.runtime import from_dlpack

        if not self.buffers:
            numel = max(TOKENS) * max(k for _, k in EXPERTS_K)
            size = max(_sizes(numel, e, b)[0] for e, _ in EXPERTS_K for b in BLOCK_SIZES)
            blocks = max(-(-size // b) for b in BLOCK_SIZES)
            self.buffers = {"ids": torch.empty(numel, dtype=torch.int32, device="cuda"),
                            "sorted": torch.empty(size, dtype=torch.int32, device="cuda"),
                            "experts": torch.empty(blocks, dtype=torch.int32, device="cuda"),
                            "post": torch.empty(1, dtype=torch.int32, device="cuda"),
                            "counts": torch.empty(moe_align_plan.MAX_BLOCKS * kernels.MAX_EXPERTS, dtype=torch.int32,
                                                  device="cuda")}
            self.views = {key: from_dlpack(t) for key, t in self.buffers.items()}
        b, t = self.buffers, self.views
        numel = topk_ids.numel()
        b["ids"][:numel].copy_(topk_ids.reshape(-1))
        size, _ = _sizes(numel, experts, block_size)
        blocks, span = kernels.launch_plan(numel)
        n, e = cutlass.Int64(numel), cutlass.Int32(experts)
        bits, bs, slots = cutlass.Int32(kernels.key_bits(experts)), cutlass.Int32(block_size), cutlass.Int64(size)
        outs = (t["sorted"], t["experts"], t["post"])
        if kernels.small_path(numel):  # up to 8192 entries, 1-8 a thread: ranked by warps, no sort
            threads = kernels.small_threads(numel)
            grid = cutlass.Int32(kernels.small_blocks(numel, experts, size, threads))
            steps = [(f"small{kernels.small_items(numel)}x{threads}", (t["ids"], *outs, n, e, bs, slots, grid))]
        elif blocks == 1:
            steps = [("align", (t["ids"], *outs, n, e, bits, bs, slots, cutlass.Int32(1)))]
        else:
            grid, width = cutlass.Int32(blocks), cutlass.Int64(span)
            steps = [("count", (t["ids"], t["counts"], n, e, width, grid)),
                     ("place", (t["ids"], t["counts"], *outs, n, e, bits, bs, slots, width, grid))]
        for step, args in steps:
            if step not in self.compiled:
                launcher = kernels.small_launcher(*map(int, step[5:].split("x"))) if step.startswith("small") else \
                    getattr(kernels, f"launch_{step}")
                self.compiled[step] = cute.compile(launcher, *args)
        bound = [(self.compiled[step], args) for step, args in steps]

        def launch():
            for compiled, args in bound:
                compiled(*args)

        def collect():
            for out, key in zip(outputs, ("sorted", "experts", "post")):
                out.copy_(b[key][: out.numel()])

        launch.collect = collect
        return launch


def verify(name: str, got, topk_ids, experts: int, block_size: int) -> dict:
    import moe_align_reference as ref

    want = ref.moe_align_block_size(topk_ids.cpu().numpy(), experts, block_size)
    arrays = [t.cpu().numpy() for t in got]
    try:
        if name.startswith("vllm"):
            note = ref.check_as_multisets(arrays, want, block_size)
        else:
            note = ref.check(arrays, want)
        return {"ok": True, "note": note}
    except AssertionError as exc:
        return {"ok": False, "note": str(exc)[:300]}


def run(backends: tuple[str, ...], tokens=TOKENS, experts_k=EXPERTS_K, block_sizes=BLOCK_SIZES, reps: int = 10,
        log=print, checkpoint=lambda records: None) -> list[dict]:
    import torch

    ours = {b: Ours(b) for b in backends}
    (cuda_op, origin), triton_fn = vllm_cuda_op(), vllm_triton()
    log(f"vLLM CUDA op: {origin if cuda_op else 'not loaded: ' + origin}; "
        f"vLLM Triton: {'loaded' if triton_fn else 'not importable'}")
    records = []
    for t in tokens:
        for experts, k in experts_k:
            topk_ids = topk_ids_for(t, experts, k)
            for block_size in block_sizes:
                row = {"tokens": t, "experts": experts, "k": k, "block_size": block_size, "times_ms": {},
                       "checks": {}, "vllm_cuda_op": origin}
                numel = topk_ids.numel()
                fns = {}
                makers = {"vllm_cuda": (lambda o: vllm_cuda_launcher(cuda_op, topk_ids, experts, block_size, o))
                          if cuda_op else None,
                          "vllm_triton": (lambda o: vllm_triton_launcher(triton_fn, topk_ids, experts, block_size, o))
                          if triton_fn else None,
                          "torch": lambda o: torch_launcher(topk_ids, experts, block_size, o)}
                makers.update({b: (lambda o, impl=impl: impl.launcher(topk_ids, experts, block_size, o))
                               for b, impl in ours.items()})
                for name, make in makers.items():
                    if make is None:
                        continue
                    outputs = _outputs(numel, experts, block_size)
                    try:
                        launch = make(outputs)
                        launch()
                        getattr(launch, "collect", lambda: None)()
                        torch.cuda.synchronize()
                    except Exception as exc:  # an anchor that fails on a shape says so in the record
                        row["checks"][name] = {"ok": False, "note": f"{type(exc).__name__}: {str(exc)[:200]}"}
                        continue
                    row["checks"][name] = verify(name, outputs, topk_ids, experts, block_size)
                    fns[name] = launch
                for name, fn in fns.items():
                    warm = time_launches(fn, warmup=2, reps=reps, inner=5)
                    row["times_ms"][name] = {"warm": float(np.median(warm.batches_ms)), "cold": _cold_ms(fn, reps),
                                             "host_us": warm.host_us, "spin_ms": warm.spin_ms}
                records.append(row)
                log(_line(row))
                checkpoint(records)
    return records


def _line(row: dict) -> str:
    t = row["times_ms"]
    anchor = t.get("vllm_cuda", {}).get("warm")
    parts = [f"moe_align T={row['tokens']:<6} E={row['experts']:<3} k={row['k']} bs={row['block_size']:<3}"]
    for name, v in t.items():
        ratio = f" ({anchor / v['warm']:.2f}x)" if anchor and name != "vllm_cuda" else ""
        parts.append(f"{name} {v['warm'] * 1e3:7.1f} us{ratio}")
    checks = " ".join(f"{n}:{'ok' if c['ok'] else 'WRONG'}" for n, c in row["checks"].items())
    return "  ".join(parts) + "  " + checks


def dry_run(backends: tuple[str, ...]) -> list[str]:
    """No GPU: build every kernel of each backend for sm_90 and report its resources."""
    from sampling_reference import built_line

    lines = []
    if "numba" in backends:
        import moe_align

        import cuda.coop.numba_mlir as numba_coop

        for name, kernel, host, blocks, threads in moe_align.builds(65536 * 8, 256, 128):
            start = time.perf_counter()
            built = numba_coop.compile_kernel(kernel, host, block=threads, grid=blocks)
            lines.append("numba " + built_line(name, built, "sm_90", time.perf_counter() - start))
    if "cute" in backends:
        import cute_moe_align
        import cutlass
        import moe_align_reference as ref

        import cuda.coop.cutlass as cute_coop

        # the small kernel at 1 and 8 entries a lane, the one-block plan it replaced, two launches
        for tokens, plan in ((16, None), (1024, None), (1024, (1, 2 * cute_moe_align.kernels.TILE)), (65536, None)):
            for name, launcher, host, blocks in cute_moe_align.steps(ref.problem(tokens, 256, 8), 256, 128, plan)[0]:
                start = time.perf_counter()
                built = cute_coop.compile_kernel(launcher, *(cute_moe_align.fake(a) for a in host),
                                                 cutlass.Int32(blocks))
                lines.append("cute " + built_line(name, built, "sm_90a", time.perf_counter() - start))
    return lines
