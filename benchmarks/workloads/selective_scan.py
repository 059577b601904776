"""Mamba's selective scan forward: ours (examples/workloads/selective_scan_numba.py, selective_scan_cute.py) against
mamba-ssm's CUDA forward (``selective_scan_cuda.fwd``, when importable: benchmarks/workloads/anchors/build_mamba.sh
builds it from the git-ignored source copy into ``MAMBA_BUILD``) and a torch version, in one process, every output
verified.

Grid (issue 43): batch 1, 4, 16 x d_inner 1536, 4096, 5120 x seqlen 512, 2048, 8192 x float32 and bfloat16 inputs;
d_state 16; B and C variable (batch, d_state, seqlen), one group; D, z, delta_bias and delta_softplus on (a Mamba
layer's call). Inputs as ``selective_scan_reference.problem`` draws them, on the GPU.

Timing: CUDA events; "warm" = back-to-back launches behind a spin kernel (common.time_launches), "cold" = each launch
after a 256 MiB write that evicts L2 (behind a spin as well). mamba-ssm is timed at ``selective_scan_cuda.fwd`` (its
kernel and the allocation of its outputs: out, out_z and the per-chunk states x, which its backward needs and ours
does not write); the torch version (``torch_selective_scan``: the recurrence of selective_scan_ref, one step per
position, without its (batch, dim, seqlen, dstate) intermediates, which do not fit the GPU at the larger shapes) is
timed warm only, over fewer launches: it takes about a second at seqlen 8192.

Verification, per shape and implementation: out and last_state on ROWS sampled (batch, dim) rows against the float64
NumPy oracle (``selective_scan_reference``), within its TOLERANCE (mamba-ssm's own test tolerance), outputs poisoned
(NaN) before the launch; plus the largest difference from mamba-ssm's out over every element (recorded, not judged).
"""
from __future__ import annotations

import math
import os
import sys
import time
from pathlib import Path

import numpy as np

from ..common import ROOT, time_launches

sys.path.insert(0, str(ROOT / "examples" / "workloads"))

BATCHES = (1, 4, 16)
DIMS = (1536, 4096, 5120)
SEQLENS = (512, 2048, 8192)
DTYPES = ("float32", "bfloat16")
DSTATE = 16
ROWS = 48  # (batch, dim) rows checked against the float64 oracle per shape
TORCH_REPS = 3
MAMBA_BUILD = os.environ.get("MAMBA_BUILD", str(ROOT / ".anchors" / "mamba-build"))


def mamba_module():
    """``selective_scan_cuda`` (mamba-ssm's CUDA extension) from an installed mamba-ssm or ``MAMBA_BUILD``; None
    when neither has it (the anchor's column is then left out)."""
    import torch  # noqa: F401  (the extension links against torch)

    if MAMBA_BUILD not in sys.path and Path(MAMBA_BUILD).is_dir():
        sys.path.insert(0, MAMBA_BUILD)
    try:
        import selective_scan_cuda
    except ImportError:
        return None
    return selective_scan_cuda


def problem(batch: int, dim: int, seqlen: int, dtype: str, seed: int = 0) -> dict:
    """``selective_scan_reference.problem``'s distributions, drawn on the GPU with torch (inputs of ``dtype``; A, D
    and delta_bias float32)."""
    import torch

    g = torch.Generator(device="cuda").manual_seed(seed)
    kind = torch.bfloat16 if dtype == "bfloat16" else torch.float32

    def normal(*shape):
        return torch.randn(*shape, device="cuda", generator=g)

    def uniform(*shape):
        return torch.rand(*shape, device="cuda", generator=g)

    x = {"u": normal(batch, dim, seqlen), "delta": 0.5 * uniform(batch, dim, seqlen),
         "A": -torch.exp(normal(dim, DSTATE)), "B": normal(batch, DSTATE, seqlen), "C": normal(batch, DSTATE, seqlen),
         "D": normal(dim), "z": normal(batch, dim, seqlen), "delta_bias": 0.5 * uniform(dim) - 2.0}
    for key in ("u", "delta", "B", "C", "z"):
        x[key] = x[key].to(kind).contiguous()
    return x


def torch_selective_scan(u, delta, A, B, C, D, z, delta_bias, delta_softplus=True):
    """The recurrence of mamba-ssm's selective_scan_ref in torch, one step per position, float32 compute: what a
    PyTorch user runs without the CUDA extension. Returns (out in u's dtype, last_state float32)."""
    import torch
    import torch.nn.functional as F

    dt = delta.float() + delta_bias[:, None]
    if delta_softplus:
        dt = F.softplus(dt)
    x_in, Bf, Cf = u.float(), B.float(), C.float()
    batch, dim, seqlen = u.shape
    h = torch.zeros(batch, dim, A.shape[1], device=u.device)
    ys = torch.empty(batch, dim, seqlen, device=u.device)
    driven = dt * x_in
    for t in range(seqlen):
        h = torch.exp(dt[:, :, t, None] * A) * h + driven[:, :, t, None] * Bf[:, None, :, t]
        ys[:, :, t] = (h * Cf[:, None, :, t]).sum(-1)
    out = (ys + D[:, None] * x_in) * F.silu(z.float())
    return out.to(u.dtype), h


class Ours:
    """Our kernel on one backend, launched on torch tensors (numba: wrapped once as device arrays; CuTe: compiled
    once per shape)."""

    def __init__(self, backend: str):
        self.backend = backend
        if backend == "numba":
            import selective_scan_numba as kernels
            from numba_cuda_mlir import cuda

            self.kernels, self.cuda = kernels, cuda
        else:
            import selective_scan_cute as kernels

            self.kernels = kernels

    def launcher(self, x: dict, out, last_state):
        """A no-argument callable that writes ``out`` (u's shape and dtype) and ``last_state`` (float32)."""
        import torch

        batch, dim, seqlen = x["u"].shape
        threads, items = self.kernels.tiling(seqlen)
        dtype = "bfloat16" if x["u"].dtype == torch.bfloat16 else "float32"
        pairs = self.kernels.reads_pairs(seqlen, dtype)
        order = ("u", "delta", "A", "B", "C", "D", "z", "delta_bias")
        if self.backend == "numba":  # softplus and z on (the last two int32 flags)
            cuda = self.cuda

            def wrap(t):
                if t.dtype == torch.bfloat16:  # the kernel reads bfloat16 bits as uint16
                    return cuda.as_cuda_array(t.reshape(-1).view(torch.int16)).view(np.uint16)
                return cuda.as_cuda_array(t.reshape(-1))

            args = [wrap(x[k]) for k in order] + [wrap(out), wrap(last_state)]
            args += [np.int64(dim), np.int64(seqlen), np.int64(DSTATE), np.int32(1), np.int32(1)]
            configured = self.kernels.kernel_for(threads, items, dtype, pairs)[batch * dim, threads]
            return lambda: configured(*args)
        import cutlass
        from cutlass.cute.runtime import from_dlpack

        def view(t):
            return from_dlpack(t.reshape(-1).view(torch.int16) if t.dtype == torch.bfloat16 else t.reshape(-1))

        args = [view(x[k]) for k in order] + [view(out), view(last_state)]
        args += [cutlass.Int64(dim), cutlass.Int64(seqlen), cutlass.Int32(DSTATE), cutlass.Int32(1),
                 cutlass.Int32(1), cutlass.Int32(batch * dim)]
        compiled = cutlass.cute.compile(self.kernels.kernel_for(threads, items, dtype, pairs), *args)
        return lambda: compiled(*args)


def _cold_ms(fn, reps: int) -> float:
    from .sampling import _cold_ms as cold

    return cold(fn, reps)


def _events_ms(fn, reps: int) -> float:
    """Median of ``reps`` single launches between CUDA events (after one warm-up)."""
    import torch

    fn()
    samples = []
    for _ in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        samples.append(start.elapsed_time(end))
    return float(np.median(samples))


def sample_rows(batch: int, dim: int, seed: int = 1) -> list[tuple[int, int]]:
    rng = np.random.default_rng(seed)
    picks = rng.choice(batch * dim, size=min(ROWS, batch * dim), replace=False)
    return sorted((int(p // dim), int(p % dim)) for p in picks)


def host(t) -> np.ndarray:
    """A torch tensor on the host as the oracle reads it: bfloat16 as uint16 bits."""
    import torch

    if t.dtype == torch.bfloat16:
        return t.view(torch.int16).cpu().numpy().view(np.uint16)
    return t.cpu().numpy()


def oracle_rows(x: dict, rows: list[tuple[int, int]]) -> tuple[np.ndarray, np.ndarray]:
    """(out, last_state) of the float64 oracle on the sampled rows (only their data leaves the GPU)."""
    import selective_scan_reference as ref
    import torch

    bs = torch.tensor([r[0] for r in rows], device="cuda")
    ds = torch.tensor([r[1] for r in rows], device="cuda")
    return ref.scan_rows(host(x["u"][bs, ds]), host(x["delta"][bs, ds]), host(x["A"][ds]), host(x["B"][bs]),
                         host(x["C"][bs]), host(x["D"][ds]), host(x["z"][bs, ds]), host(x["delta_bias"][ds]), True)


def verify(out, last_state, x: dict, rows, want: tuple[np.ndarray, np.ndarray], dtype: str, anchor=None) -> dict:
    import selective_scan_reference as ref
    import torch

    bs = torch.tensor([r[0] for r in rows], device="cuda")
    ds = torch.tensor([r[1] for r in rows], device="cuda")
    record: dict = {"rows_checked": len(rows)}
    try:
        record["out"] = ref.check(host(out[bs, ds]), want[0], dtype)
        record["last_state"] = ref.check(host(last_state[bs, ds]), want[1], "float32", "last_state")
        record["ok"] = True
    except AssertionError as exc:
        record["ok"], record["error"] = False, str(exc)
    if anchor is not None:
        record["max_abs_diff_vs_mamba"] = float((out.float() - anchor.float()).abs().max().item())
    return record


def run(backends: tuple[str, ...], batches=BATCHES, dims=DIMS, seqlens=SEQLENS, dtypes=DTYPES, reps: int = 10,
        log=print, checkpoint=lambda records: None, torch_version: bool = True) -> list[dict]:
    import torch

    mamba = mamba_module()
    log(f"mamba-ssm selective_scan_cuda: {getattr(mamba, '__file__', 'not importable: its column is left out')}")
    ours = {b: Ours(b) for b in backends}
    records = []
    for dtype in dtypes:
        for seqlen in seqlens:
            for dim in dims:
                for batch in batches:
                    x = problem(batch, dim, seqlen, dtype)
                    rows = sample_rows(batch, dim)
                    want = oracle_rows(x, rows)
                    row = {"function": "selective_scan", "batch": batch, "dim": dim, "seqlen": seqlen,
                           "dstate": DSTATE, "dtype": dtype, "times_ms": {}, "checks": {}}
                    fns = {}
                    anchor = None
                    if mamba is not None:
                        B4, C4 = x["B"][:, None], x["C"][:, None]  # (batch, 1 group, dstate, seqlen), as mamba's

                        def call(m=mamba, x=x, B4=B4, C4=C4):
                            return m.fwd(x["u"], x["delta"], x["A"], B4, C4, x["D"], x["z"], x["delta_bias"], True)

                        result = call()
                        anchor = result[2]  # out_z
                        row["checks"]["mamba"] = verify(anchor, result[1][:, :, -1, 1::2], x, rows, want, dtype)
                        fns["mamba"] = call
                    for backend, impl in ours.items():
                        out = torch.full_like(x["u"], math.nan)
                        last_state = torch.full((batch, dim, DSTATE), math.nan, device="cuda")
                        start = time.perf_counter()
                        launch = impl.launcher(x, out, last_state)
                        launch()
                        torch.cuda.synchronize()
                        row.setdefault("build_s", {})[backend] = time.perf_counter() - start
                        row["checks"][backend] = verify(out, last_state, x, rows, want, dtype, anchor)
                        fns[backend] = launch
                    for name, fn in fns.items():
                        warm = time_launches(fn, warmup=2, reps=reps, inner=5)
                        row["times_ms"][name] = {"warm": float(np.median(warm.batches_ms)),
                                                 "cold": _cold_ms(fn, reps), "host_us": warm.host_us,
                                                 "spin_ms": warm.spin_ms}
                    if torch_version:
                        args = [x[k] for k in ("u", "delta", "A", "B", "C", "D", "z", "delta_bias")]
                        got, state = torch_selective_scan(*args)
                        row["checks"]["torch"] = verify(got, state, x, rows, want, dtype, anchor)
                        row["times_ms"]["torch"] = {"warm": _events_ms(lambda: torch_selective_scan(*args),
                                                                       TORCH_REPS)}
                    records.append(row)
                    log(_line(row))
                    checkpoint(records)
                    del x
                    torch.cuda.empty_cache()
    return records


def _line(row: dict) -> str:
    t = row["times_ms"]
    head = f"selective_scan {row['dtype']:<8} B={row['batch']:<2} D={row['dim']:<4} L={row['seqlen']:<4}"
    base = t.get("mamba", {}).get("warm")
    parts = [head]
    for impl, v in t.items():
        ratio = f" ({base / v['warm']:.2f}x)" if base and impl != "mamba" else ""
        parts.append(f"{impl} {v['warm'] * 1e3:9.1f} us{ratio}")
    checks = " ".join(f"{b}:{'ok' if c['ok'] else 'WRONG'}" for b, c in row["checks"].items())
    return "  ".join(parts) + "  " + checks


def dry_run(backends: tuple[str, ...]) -> list[str]:
    """No GPU: build the kernel of every tiling the grid uses, each dtype, on each backend, for sm_90."""
    import selective_scan_reference as ref
    from sampling_reference import built_line

    lines = []
    from selective_scan_plan import reads_pairs, tiling

    tilings = sorted({tiling(s) for s in SEQLENS})
    for threads, items in tilings:
        seqlen = threads * items
        for dtype in DTYPES:
            inputs = ref.problem(1, 2, seqlen, DSTATE, dtype)
            out, last_state = ref.outputs(inputs["u"], DSTATE)
            pairs = reads_pairs(seqlen, dtype)  # (the grid's lengths are all even)
            label = f"selective_scan {dtype} ({threads} x {items})"
            if "numba" in backends:
                import selective_scan_numba as kernels

                import cuda.coop.numba_mlir as numba_coop

                start = time.perf_counter()
                built = numba_coop.compile_kernel(kernels.kernel_for(threads, items, dtype, pairs),
                                                  kernels.arguments(inputs, out, last_state), block=threads, grid=2)
                lines.append("numba " + built_line(label, built, "sm_90", time.perf_counter() - start, threads))
            if "cute" in backends:
                import cute_selective_scan as script
                import selective_scan_cute as cute_kernels

                import cuda.coop.cutlass as cute_coop

                start = time.perf_counter()
                built = cute_coop.compile_kernel(cute_kernels.kernel_for(threads, items, dtype, pairs),
                                                 *(script.fake(a) for a in script.arguments(inputs, out, last_state)))
                lines.append("cute " + built_line(label, built, "sm_90a", time.perf_counter() - start, threads))
    return lines


def markdown(environment: dict, records: list[dict]) -> str:
    """The tables of RESULTS.md and docs/real_kernels.rst: per dtype and backend, the geomean of mamba-ssm's time
    over ours (warm and cold L2; > 1: ours faster), the worst row, and over the torch version; then every row."""
    from .report import geomean

    impls = [b for b in ("numba", "cute") if any(b in r["times_ms"] for r in records)]
    lines = [f"Card: {environment.get('gpu', '?')} (driver {environment.get('driver', '?')}), "
             f"{environment.get('date', '?')}, commit {environment.get('commit', '?')}; {len(records)} rows "
             "(dtype x seqlen x d_inner x batch, d_state 16).", "",
             "| dtype | backend | vs mamba-ssm, warm (geomean) | cold | worst row (B, D, L) | vs torch (geomean) | "
             "verified |", "|---|---|---|---|---|---|---|"]
    for dtype in DTYPES:
        for backend in impls:
            mine = [r for r in records if r["dtype"] == dtype and backend in r["times_ms"]]
            if not mine:
                continue
            anchored = [r for r in mine if "mamba" in r["times_ms"]]
            speed = {mode: [r["times_ms"]["mamba"][mode] / r["times_ms"][backend][mode] for r in anchored]
                     for mode in ("warm", "cold")}
            torch_speed = [r["times_ms"]["torch"]["warm"] / r["times_ms"][backend]["warm"] for r in mine
                           if "torch" in r["times_ms"]]
            verified = sum(r["checks"][backend]["ok"] for r in mine)
            if anchored:
                worst = min(range(len(anchored)), key=lambda i: speed["warm"][i])
                at = anchored[worst]
                vs_mamba = (f"{geomean(speed['warm']):.2f}x | {geomean(speed['cold']):.2f}x | "
                            f"{speed['warm'][worst]:.2f}x ({at['batch']}, {at['dim']}, {at['seqlen']})")
            else:
                vs_mamba = "– (no selective_scan_cuda) | – | –"
            vs_torch = f"{geomean(torch_speed):.1f}x" if torch_speed else "–"
            lines.append(f"| {dtype} | {backend} | {vs_mamba} | {vs_torch} | {verified}/{len(mine)} |")
    lines += ["", "Every row, warm L2 (microseconds; in brackets mamba-ssm's time over ours):", "",
              "| dtype | batch | d_inner | seqlen | mamba-ssm | numba | CuTe | torch |",
              "|---|---|---|---|---|---|---|---|"]
    for r in sorted(records, key=lambda r: (DTYPES.index(r["dtype"]), r["seqlen"], r["dim"], r["batch"])):
        t = r["times_ms"]
        base = t.get("mamba", {}).get("warm")
        cells = []
        for impl in ("numba", "cute"):
            if impl not in t:
                cells.append("–")
            else:
                cells.append(f"{t[impl]['warm'] * 1e3:.1f}" + (f" ({base / t[impl]['warm']:.2f}x)" if base else ""))
        mamba = f"{base * 1e3:.1f}" if base else "–"
        torch_us = f"{t['torch']['warm'] * 1e3:.0f}" if "torch" in t else "–"
        lines.append(f"| {r['dtype']} | {r['batch']} | {r['dim']} | {r['seqlen']} | {mamba} | {' | '.join(cells)} | "
                     f"{torch_us} |")
    return "\n".join(lines) + "\n"
