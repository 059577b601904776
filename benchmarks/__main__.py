"""python -m benchmarks OUTDIR [--quick] [--dry-run] [--only REGEX] [--sass] ...

On the H200 machine (from the project root, carrying .gpu):

    bash .gpu/run.sh python3 -m benchmarks $OUT/bench

writes OUTDIR/results.json, OUTDIR/RESULTS.md and OUTDIR/throughput.png (copy the first
two to benchmarks/ to publish them). Without a GPU, ``--dry-run`` builds every kernel for
sm_90 and measures compile time, which needs no GPU either.
"""
from __future__ import annotations

import argparse
import json
import sys
import traceback
from pathlib import Path

from . import compile_time, environment, report
from .common import ROOT

FULL = {"n": 1 << 28, "warmup": 3, "reps": 15, "inner": 5, "rounds": 2, "compile_repeats": 3}
QUICK = {"n": 1 << 24, "warmup": 2, "reps": 5, "inner": 3, "rounds": 1, "compile_repeats": 1}


def parse(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.split("\n\n")[0])
    p.add_argument("outdir", nargs="?", default=str(ROOT / "bench-out"), help="where the results go")
    p.add_argument("--quick", action="store_true", help="2^24 elements, fewer repeats: a smoke run")
    p.add_argument("--dry-run", action="store_true", help="no GPU: build all kernels for sm_90, time compiles")
    p.add_argument("--only", metavar="REGEX", help="only kernels whose name matches (throughput and dry run)")
    p.add_argument("--sass", action="store_true", help="dump SASS of every kernel (default: only missed targets)")
    p.add_argument("--skip-compile-time", action="store_true", help="leave out the compile-time processes")
    p.add_argument("--skip-throughput", action="store_true", help="leave out the GPU timings")
    p.add_argument("--compile-repeats", type=int, help="new-process compile measurements per phase (median)")
    p.add_argument("--skip-launch", action="store_true", help="leave out the launch-overhead processes")
    p.add_argument("--skip-first-result", action="store_true",
                   help="leave out the README example in a new process with an empty cache")
    return p.parse_args(argv)


def main(argv: list[str]) -> int:
    args = parse(argv)
    settings = dict(QUICK if args.quick else FULL)
    if args.compile_repeats:
        settings["compile_repeats"] = args.compile_repeats
    outdir = Path(args.outdir).resolve()
    outdir.mkdir(parents=True, exist_ok=True)
    env = environment.describe()
    mode = "dry" if args.dry_run else ("quick" if args.quick else "full")
    info = {"mode": mode, "n": settings["n"],
            "timing": f"CUDA events around {settings['inner']} back-to-back launches, median of {settings['reps']} "
                      f"batches x {settings['rounds']} alternating rounds after {settings['warmup']} warm-up launches"}
    print(f"== benchmarks ({mode}) -> {outdir}\n{json.dumps(env)}", flush=True)
    records: list[dict] = []
    status = 0

    def save() -> None:  # after every section, so a crash later keeps what was measured
        (outdir / "results.json").write_text(json.dumps(records, indent=1, default=str) + "\n")

    # The families import numba-cuda-mlir and register cuda.coop's backend.
    from . import collectives, cub_build, load_store, qualified, sort, tier4

    nvcc = cub_build.find_nvcc()
    env["nvcc"] = f"{cub_build.nvcc_version(nvcc)} ({nvcc})" if nvcc else None

    families = [load_store, collectives, sort, tier4, qualified]

    def failed() -> None:
        nonlocal status
        traceback.print_exc()
        records.append({"type": "error", "error": traceback.format_exc()[-4000:]})
        status = 1

    try:
        try:
            if args.dry_run:
                from . import dry_run, read_ceiling

                for family in families:
                    records += dry_run.run(family, settings["n"], outdir, args.only, args.sass)
                records.append(read_ceiling.dry_build(outdir))
                save()
            if not args.skip_compile_time:
                records += compile_time.run(settings["compile_repeats"])
                save()
            if not args.dry_run and not args.skip_throughput:
                from . import throughput

                run_settings = throughput.Settings(**{k: settings[k] for k in ("n", "warmup", "reps", "inner",
                                                                                "rounds")})
                with environment.ClockSampler() as clocks:
                    for family in families:
                        records += throughput.run_family(family, run_settings, outdir, args.only, args.sass)
                env["clocks"] = clocks.summary()
                save()
        except Exception:
            failed()
        try:  # new processes of their own (a few seconds each): they run even when a section above failed
            if not args.skip_launch:
                from . import launch

                records += launch.run(args.dry_run, args.quick)
                save()
            if not args.skip_first_result:
                from . import first_result

                records += first_result.run(args.dry_run)
                save()
        except Exception:
            failed()
    finally:
        save()
        chart = None
        try:
            from . import chart as chart_module

            if chart_module.draw(records, outdir / "throughput.png"):
                chart = "throughput.png"
        except Exception:
            traceback.print_exc()
        report.write(outdir, records, env, info, chart)
        print((outdir / "RESULTS.md").read_text(), flush=True)
    if any("error" in r for r in records):
        status = status or 2
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
