"""python -m benchmarks.workloads [OUTDIR] [--dry-run] [--quick] [--backends numba,cute] [--functions a,b]

On the GPU machine, with both backends staged (../shared/gpu/stage.sh pack cute numba) and FlashInfer carried
(../shared/gpu/flashinfer/README.md), from the project root:

    bash ../shared/gpu/flashinfer/in.sh bash .stage/tools/in.sh -- python3 -m benchmarks.workloads $OUT/workloads

writes OUTDIR/sampling.json and prints one line per (function, shape): FlashInfer's time, ours and torch's, and
whether each output was verified. ``--dry-run`` builds every kernel for sm_90 without a GPU.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ..common import ROOT
from ..environment import describe
from . import sampling


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.workloads", description=__doc__.splitlines()[0])
    p.add_argument("outdir", nargs="?", default=str(ROOT / "bench-out" / "workloads"))
    p.add_argument("--dry-run", action="store_true", help="no GPU: build every kernel for sm_90")
    p.add_argument("--quick", action="store_true", help="vocab 32000 and 128256, batch 1 and 128, normal logits")
    p.add_argument("--backends", default="numba,cute")
    p.add_argument("--functions", default=",".join(sampling.FUNCTIONS))
    p.add_argument("--reps", type=int, default=10)
    p.add_argument("--vocabs", help="comma-separated subset of the grid's vocabularies (default: all)")
    p.add_argument("--batches", help="comma-separated subset of the grid's batch sizes (default: all)")
    p.add_argument("--distributions", help="normal, gumbel or both (default: both)")
    args = p.parse_args(argv)
    backends = tuple(b for b in args.backends.split(",") if b)
    if args.dry_run:
        for line in sampling.dry_run(backends):
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

    def checkpoint(records: list[dict]) -> None:  # after every row: a run cut short still leaves its rows
        (outdir / "sampling.json").write_text(json.dumps({"environment": env, "records": records}, indent=1) + "\n")

    records = sampling.run(backends, functions=tuple(args.functions.split(",")), reps=args.reps,
                           log=lambda line: print(line, flush=True), checkpoint=checkpoint, **grid)
    checkpoint(records)
    wrong = [r for r in records for c in r["checks"].values() if not c["ok"]]
    print(f"{len(records)} rows, {len(wrong)} with an output that failed verification", flush=True)
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
