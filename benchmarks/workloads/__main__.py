"""python -m benchmarks.workloads [OUTDIR] [--dry-run] [--quick] [--workloads sampling,moe_align,selective_scan]
[--backends numba,cute] [--functions a,b] [--tokens a,b]

On the GPU machine, with both backends staged (../shared/gpu/stage.sh pack cute numba) and FlashInfer carried
(../shared/gpu/flashinfer/README.md), from the project root:

    bash ../shared/gpu/flashinfer/in.sh bash .stage/tools/in.sh -- python3 -m benchmarks.workloads $OUT/workloads

writes OUTDIR/sampling.json and prints one line per (function, shape): FlashInfer's time, ours and torch's, and
whether each output was verified; then OUTDIR/moe_align.json, one line per (tokens, experts, k, block size): vLLM's
CUDA op and Triton version where vLLM imports (staged like FlashInfer: a vLLM wheel through ``EXTRA_WHEELS``; without
it, the CUDA op built from vLLM's source into ``.anchors/vllm-moe-build``, moe_align.VLLM_MOE_BUILD), torch's and
ours (``--workloads moe_align`` runs that one alone). ``--dry-run`` builds every kernel for sm_90 without a GPU.

``--workloads selective_scan`` runs Mamba's selective scan (benchmarks/workloads/selective_scan.py) against
mamba-ssm's CUDA forward, built first from a git-ignored source copy (``.anchors/``, made by
benchmarks/workloads/anchors/fetch_anchors.py and built on the GPU machine by its gpu_run43.sh: that folder's README;
the column is left out when ``selective_scan_cuda`` does not import), and a torch version;
it writes OUTDIR/selective_scan.json (grid: ``--batches``, ``--dims``, ``--seqlens``, ``--dtypes``; ``--quick``:
batch 1 and 16, d_inner 4096, seqlen 2048 and 8192).
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ..common import ROOT
from ..environment import describe
from . import moe_align, sampling, selective_scan


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.workloads", description=__doc__.splitlines()[0])
    p.add_argument("outdir", nargs="?", default=str(ROOT / "bench-out" / "workloads"))
    p.add_argument("--dry-run", action="store_true", help="no GPU: build every kernel for sm_90")
    p.add_argument("--quick", action="store_true", help="vocab 32000 and 128256, batch 1 and 128, normal logits")
    p.add_argument("--workloads", default="sampling,moe_align")
    p.add_argument("--backends", default="numba,cute")
    p.add_argument("--functions", default=",".join(sampling.FUNCTIONS))
    p.add_argument("--reps", type=int, default=10)
    p.add_argument("--vocabs", help="comma-separated subset of the grid's vocabularies (default: all)")
    p.add_argument("--batches", help="comma-separated subset of the grid's batch sizes (default: all)")
    p.add_argument("--distributions", help="normal, gumbel or both (default: both)")
    p.add_argument("--tokens", help="MoE align: comma-separated subset of the grid's token counts (default: all)")
    p.add_argument("--dims", help="selective_scan: comma-separated d_inner values (default: the grid's)")
    p.add_argument("--seqlens", help="selective_scan: comma-separated sequence lengths (default: the grid's)")
    p.add_argument("--dtypes", help="selective_scan: float32, bfloat16 or both (default: both)")
    p.add_argument("--no-torch", action="store_true", help="selective_scan: leave out the (slow) torch version")
    args = p.parse_args(argv)
    backends = tuple(b for b in args.backends.split(",") if b)
    workloads = tuple(w for w in args.workloads.split(",") if w)
    if args.dry_run:
        for line in (sampling.dry_run(backends) if "sampling" in workloads else []) + (
                moe_align.dry_run(backends) if "moe_align" in workloads else []) + (
                selective_scan.dry_run(backends) if "selective_scan" in workloads else []):
            print(line, flush=True)
        return 0
    import torch  # noqa: F401  (before cutlass: the other order once broke torch's operator registry)

    outdir = Path(args.outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    env = describe()
    print(json.dumps(env), flush=True)
    grid = {}
    if args.quick:
        grid = {"vocabs": (32000, 128256), "batches": (1, 128), "distributions": ("normal",)}
    for key, cast in (("vocabs", int), ("batches", int), ("distributions", str)):
        if getattr(args, key):
            grid[key] = tuple(cast(v) for v in getattr(args, key).split(","))

    wrong = 0
    if "sampling" in workloads:
        wrong += _run_sampling(args, backends, outdir, env, grid)
    if "moe_align" in workloads:
        wrong += _run_moe_align(args, backends, outdir, env)
    if "selective_scan" in workloads:
        wrong += _run_selective_scan(args, backends, outdir, env)
    return 1 if wrong else 0


def _checkpointer(path: Path, env: dict):
    def checkpoint(records: list[dict]) -> None:  # after every row: a run cut short still leaves its rows
        path.write_text(json.dumps({"environment": env, "records": records}, indent=1) + "\n")

    return checkpoint


def _run_sampling(args, backends, outdir: Path, env: dict, grid: dict) -> int:
    checkpoint = _checkpointer(outdir / "sampling.json", env)
    records = sampling.run(backends, functions=tuple(args.functions.split(",")), reps=args.reps,
                           log=lambda line: print(line, flush=True), checkpoint=checkpoint, **grid)
    checkpoint(records)
    wrong = [r for r in records for c in r["checks"].values() if not c["ok"]]
    print(f"{len(records)} rows, {len(wrong)} with an output that failed verification", flush=True)
    return len(wrong)


def _run_moe_align(args, backends, outdir: Path, env: dict) -> int:
    checkpoint = _checkpointer(outdir / "moe_align.json", env)
    tokens = tuple(int(t) for t in args.tokens.split(",")) if args.tokens else moe_align.TOKENS
    if args.quick:
        tokens = (16, 8192)
    records = moe_align.run(backends, tokens=tokens, reps=args.reps, log=lambda line: print(line, flush=True),
                            checkpoint=checkpoint)
    checkpoint(records)
    wrong = [r for r in records for c in r["checks"].values() if not c["ok"]]
    print(f"moe_align: {len(records)} rows, {len(wrong)} with an output that failed verification", flush=True)
    return len(wrong)


def _run_selective_scan(args: argparse.Namespace, backends: tuple[str, ...], outdir: Path, env: dict) -> int:
    grid: dict = {}
    if args.quick:
        grid = {"batches": (1, 16), "dims": (4096,), "seqlens": (2048, 8192)}
    for key, cast in (("batches", int), ("dims", int), ("seqlens", int), ("dtypes", str)):
        if getattr(args, key):
            grid[key] = tuple(cast(v) for v in getattr(args, key).split(","))

    checkpoint = _checkpointer(outdir / "selective_scan.json", env)

    records = selective_scan.run(backends, reps=args.reps, log=lambda line: print(line, flush=True),
                                 checkpoint=checkpoint, torch_version=not args.no_torch, **grid)
    checkpoint(records)
    wrong = [r for r in records for c in r["checks"].values() if not c["ok"]]
    print(f"selective_scan: {len(records)} rows, {len(wrong)} with an output that failed verification", flush=True)
    return len(wrong)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
