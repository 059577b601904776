"""Launch and specialisation cost (issue 19): a new grid size, the launch itself, the disk cache.

    python -m benchmarks.launch_cost OUTDIR [--rounds R]
    # H200: bash .gpu/run.sh python3 -m benchmarks.launch_cost $OUT/lc

Writes OUTDIR/launch_cost.json and prints the RESULTS.md lines. Parts, each in new processes:

* ``new_grid``: one process with cuda.coop imported builds a cuda.coop kernel (one block reduction) and a plain
  kernel at one grid, then times the first launch (launch + synchronize, checked) at 12 grid sizes not seen before.
* ``launch``: per-launch host cost of a plain kernel and a one-call cuda.coop kernel, one block of 256 threads, numba
  device arrays, launcher made once (``k = kernel[1, 256]``). Processes without cuda.coop (``plain``) and with it
  (``coop``) alternate (ABAB, ``--rounds`` each, every child on the same core); inside a ``coop`` process the two
  kernels alternate too. A cell is the median over batches of the host time of 100 back-to-back launches / 100 (the
  queue is drained between batches, outside the timed loop); reported: median of the processes' medians and their
  spread.
* ``first_result``: a new process, caches warm (cuda-coop's provider cache and numba-cuda-mlir's disk cache, both
  filled by an earlier process), from after the imports to a checked result, for a cuda.coop kernel and a plain
  ``cache=True`` kernel.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
THREADS = 256
NEW_GRIDS = (3, 5, 9, 17, 33, 65, 129, 257, 513, 1025, 2049, 4097)


# ---------------------------------------------------------------- child processes

def _kernels(with_coop: bool) -> dict:
    from numba_cuda_mlir import cuda

    @cuda.jit
    def plain(src, dst):
        i = cuda.grid(1)
        dst[i] = src[i] + 1

    kernels = {"plain": plain}
    if with_coop:
        from cuda import coop

        @cuda.jit
        def coop_1(src, dst):
            i = cuda.grid(1)
            dst[i] = coop.sum(coop.this_block(), src[i])  # every thread gets its block's total

        kernels["coop_1"] = coop_1
    return kernels


def _expected(name: str, src):
    import numpy as np

    if name == "plain":
        return src + 1
    return np.repeat(src.reshape(-1, THREADS).sum(axis=1, dtype=np.int32), THREADS)


def child_new_grid() -> dict:
    import numpy as np
    from numba_cuda_mlir import cuda

    import cuda.coop.numba_mlir as _backend  # noqa: F401  (an alias: keeps numba_cuda_mlir.cuda bound)

    kernels = _kernels(True)
    rows = {}
    for name, kernel in kernels.items():
        src = cuda.to_device(np.arange(THREADS * max(NEW_GRIDS), dtype=np.int32) % 97)
        dst = cuda.device_array(src.size, np.int32)
        kernel[1, THREADS](src, dst)  # the build
        cuda.synchronize()
        times, ok = [], True
        for grid in NEW_GRIDS:
            t0 = time.perf_counter()
            kernel[grid, THREADS](src, dst)
            cuda.synchronize()
            times.append((time.perf_counter() - t0) * 1e3)
            n = grid * THREADS
            ok &= bool(np.array_equal(dst.copy_to_host()[:n], _expected(name, src.copy_to_host()[:n])))
        rows[name] = {"ms_median": statistics.median(times), "ms_max": max(times), "ms": times, "verified": ok}
    return {"new_grid": rows}


def _timer(launch, sync, batches: int = 15, launches: int = 100) -> float:
    for _ in range(50):
        launch()
    sync()
    samples = []
    for _ in range(batches):  # the host's cost of a launch: the GPU drains the queue outside the timed loop
        sync()
        t0 = time.perf_counter()
        for _ in range(launches):
            launch()
        samples.append((time.perf_counter() - t0) / launches * 1e6)
        sync()
    return statistics.median(samples)


def child_launch(mode: str, interleave: int = 4) -> dict:
    import numpy as np
    from numba_cuda_mlir import cuda

    if mode == "coop":
        import cuda.coop.numba_mlir as _backend  # noqa: F401
    kernels = _kernels(mode == "coop")
    src = cuda.to_device(np.arange(THREADS, dtype=np.int32))
    dst = cuda.device_array(THREADS, np.int32)
    launchers = {name: kernel[1, THREADS] for name, kernel in kernels.items()}
    results: dict[str, list[float]] = {name: [] for name in kernels}
    verified = {}
    for name, launcher in launchers.items():
        launcher(src, dst)
        cuda.synchronize()
        verified[name] = bool(np.array_equal(dst.copy_to_host(), _expected(name, src.copy_to_host())))
    for _ in range(interleave):  # ABAB inside the process
        for name, launcher in launchers.items():
            results[name].append(_timer(lambda launcher=launcher: launcher(src, dst), cuda.synchronize))
    return {"mode": mode, "us": {name: statistics.median(v) for name, v in results.items()}, "verified": verified,
            "coop_imported": "cuda.coop" in sys.modules}


def _hooks_removed():
    """A context in which this process launches as if cuda.coop had not been imported: no planner registered and
    numba-cuda-mlir's own launch methods in place of cuda.coop's wrappers."""
    import contextlib

    from numba_cuda_mlir._whole_function_planners import _planner_registry
    from numba_cuda_mlir.descriptor import MLIRDispatcher, _ArgMarshaller

    @contextlib.contextmanager
    def removed():
        swapped = []
        for owner in (_ArgMarshaller, MLIRDispatcher):
            for name, value in list(vars(owner).items()):
                original = getattr(value, "__wrapped__", None)
                if original is not None and callable(value):
                    swapped.append((owner, name, value))
                    setattr(owner, name, original)
        planners, _planner_registry._planners = _planner_registry._planners, []
        try:
            yield
        finally:
            _planner_registry._planners = planners
            for owner, name, value in swapped:
                setattr(owner, name, value)

    return removed()


def child_toggle(rounds: int = 8) -> dict:
    """The plain kernel in one process, alternating between cuda.coop present and its planner and launch hooks
    removed (ABAB): what cuda.coop's presence changes, free of the differences between processes."""
    import numpy as np
    from numba_cuda_mlir import cuda

    import cuda.coop.numba_mlir as _backend  # noqa: F401

    plain = _kernels(False)["plain"]
    src = cuda.to_device(np.arange(THREADS, dtype=np.int32))
    dst = cuda.device_array(THREADS, np.int32)
    launcher = plain[1, THREADS]
    launcher(src, dst)
    cuda.synchronize()
    verified = bool(np.array_equal(dst.copy_to_host(), _expected("plain", src.copy_to_host())))
    present, removed = [], []
    for _ in range(rounds):
        present.append(_timer(lambda: launcher(src, dst), cuda.synchronize))
        with _hooks_removed():
            lock, plain._launch_lock = plain._launch_lock, None  # the lock cuda.coop gives every dispatcher
            removed.append(_timer(lambda: launcher(src, dst), cuda.synchronize))
            plain._launch_lock = lock
    return {"present_us": present, "removed_us": removed, "verified": verified,
            "added_us": statistics.median(p - r for p, r in zip(present, removed, strict=True))}


_FIRST_PROGRAM = """
import time, json, sys
import numpy as np
from numba_cuda_mlir import cuda
import cuda.coop.numba_mlir as numba_coop
from cuda import coop as coop
from cuda.coop.numba_mlir import _planner
t0 = time.perf_counter()
planning = [0.0]
_plan = _planner.CoopPlanner.run


def timed_plan(self):  # cuda.coop's share: planning, the provider cache or NVRTC, the scratch sizes
    start = time.perf_counter()
    try:
        return _plan(self)
    finally:
        planning[0] += time.perf_counter() - start


_planner.CoopPlanner.run = timed_plan

@cuda.jit(cache=True)
def block_totals(src, dst):
    i = cuda.grid(1)
    dst[i] = coop.sum(coop.this_block(), src[i])

@cuda.jit(cache=True)
def plus_one(src, dst):
    i = cuda.grid(1)
    dst[i] = src[i] + 1

t_context = time.perf_counter()
cuda.current_context()  # the process's CUDA context: every first launch pays it, with or without cuda.coop
t_context = time.perf_counter() - t_context
src = np.arange(4 * 256, dtype=np.int32) % 97
dst = np.zeros_like(src)
which = sys.argv[1]
if which == "coop":
    block_totals[4, 256](src, dst)
    ok = bool((dst == np.repeat(src.reshape(4, 256).sum(axis=1), 256)).all())
    hits = sum(block_totals._cache_hits.values())
else:
    plus_one[4, 256](src, dst)
    ok = bool((dst == src + 1).all())
    hits = sum(plus_one._cache_hits.values())
print("BENCH_JSON " + json.dumps({"seconds": time.perf_counter() - t0, "context_s": t_context, "verified": ok,
                                  "cuda_coop_s": planning[0],
                                  "disk_cache_hits": hits}))
"""


def _run_child(args: list[str], env: dict | None = None) -> dict:
    environment = dict(os.environ, **(env or {}))
    environment["PYTHONPATH"] = os.pathsep.join([str(ROOT), environment.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    done = subprocess.run([sys.executable, *args], cwd=ROOT, env=environment, capture_output=True, text=True,
                          timeout=600, check=False)
    for line in done.stdout.splitlines():
        if line.startswith("BENCH_JSON "):
            return json.loads(line[len("BENCH_JSON "):])
    raise RuntimeError(f"{args} failed (rc {done.returncode}): {done.stderr[-3000:]}")


def first_result() -> dict:
    with tempfile.TemporaryDirectory(prefix="coop-launch-cost-") as tmp:
        program = Path(tmp) / "first.py"
        program.write_text(_FIRST_PROGRAM)
        env = {"NUMBA_CACHE_DIR": str(Path(tmp) / "numba"), "XDG_CACHE_HOME": str(Path(tmp) / "xdg")}
        rows = {}
        for which in ("coop", "plain"):
            cold = _run_child([str(program), which], env)
            warm = [_run_child([str(program), which], env) for _ in range(3)]
            rows[which] = {"cold_s": cold["seconds"], "warm_s": statistics.median(w["seconds"] for w in warm),
                           "context_s": statistics.median(w["context_s"] for w in warm),
                           "cuda_coop_s": statistics.median(w["cuda_coop_s"] for w in warm),
                           "verified": cold["verified"] and all(w["verified"] for w in warm),
                           "disk_cache_hits": [w["disk_cache_hits"] for w in warm]}
        return rows


# ---------------------------------------------------------------- the parent

def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.launch_cost")
    parser.add_argument("outdir", type=Path, nargs="?")
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--child", choices=("new_grid", "plain", "coop", "toggle"))
    args = parser.parse_args(argv)
    if args.child:
        if hasattr(os, "sched_setaffinity") and len(os.sched_getaffinity(0)) > 2:
            os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[1]})  # every child on one core: same placement
        children = {"new_grid": child_new_grid, "toggle": child_toggle}
        result = children[args.child]() if args.child in children else child_launch(args.child)
        print("BENCH_JSON " + json.dumps(result))
        return 0
    record: dict = {"type": "launch_cost"}
    record.update(_run_child(["-m", "benchmarks.launch_cost", "--child", "new_grid"]))
    processes: dict[str, list[dict]] = {"plain": [], "coop": []}
    for _ in range(args.rounds):  # ABAB across processes
        for mode in ("plain", "coop"):
            processes[mode].append(_run_child(["-m", "benchmarks.launch_cost", "--child", mode]))
    record["launch"] = processes
    record["toggle"] = [_run_child(["-m", "benchmarks.launch_cost", "--child", "toggle"]) for _ in range(3)]
    record["first_result"] = first_result()
    lines = report(record)
    if args.outdir:
        args.outdir.mkdir(parents=True, exist_ok=True)
        (args.outdir / "launch_cost.json").write_text(json.dumps(record, indent=1))
        (args.outdir / "launch_cost.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


def _spread(values: list[float]) -> str:
    return f"{statistics.median(values):.1f} us (processes {min(values):.1f}-{max(values):.1f})"


def report(record: dict) -> list[str]:
    lines = []
    grid = record["new_grid"]
    coop, plain = grid["coop_1"], grid["plain"]
    lines.append(f"- {'MET' if coop['ms_median'] <= 1.0 else 'MISSED'}: first launch at a new grid size (12 sizes, "
                 f"launch + synchronize): cuda.coop kernel {coop['ms_median']:.2f} ms median "
                 f"(max {coop['ms_max']:.2f}), "
                 f"plain kernel {plain['ms_median']:.2f} ms (max {plain['ms_max']:.2f}); target <= 1 ms; outputs "
                 f"{'verified' if coop['verified'] and plain['verified'] else 'WRONG'}.")
    launch = record["launch"]
    alone = [p["us"]["plain"] for p in launch["plain"]]
    beside = [p["us"]["plain"] for p in launch["coop"]]
    with_coop = [p["us"]["coop_1"] for p in launch["coop"]]
    added_import = statistics.median(beside) - statistics.median(alone)
    added_call = statistics.median([p["us"]["coop_1"] - p["us"]["plain"] for p in launch["coop"]])
    lines.append(f"- {'MET' if abs(added_import) <= 0.5 else 'MISSED'}: plain kernel per launch without cuda.coop "
                 f"{_spread(alone)}, with cuda.coop imported {_spread(beside)}: {added_import:+.1f} us (target within "
                 "0.5 us).")
    toggled = [t["added_us"] for t in record.get("toggle", ())]
    if toggled:
        added = statistics.median(toggled)
        lines.append(f"- {'MET' if abs(added) <= 0.5 else 'MISSED'}: the same plain kernel in one process, cuda.coop's "
                     f"planner and launch hooks present vs removed, alternating: {added:+.2f} us per launch (median "
                     f"of {len(toggled)} processes: {', '.join(f'{t:+.2f}' for t in toggled)}; target within 0.5 us); "
                     f"outputs {'verified' if all(t['verified'] for t in record['toggle']) else 'WRONG'}.")
    lines.append(f"- {'MET' if added_call <= 2.0 else 'MISSED'}: one-call cuda.coop kernel {_spread(with_coop)} per "
                 f"launch, {added_call:+.1f} us over the plain kernel in the same processes (median of per-process "
                 "differences; target <= +2 us).")
    for which, label in (("coop", "cuda.coop kernel"), ("plain", "plain cache=True kernel")):
        row = record["first_result"][which]
        lines.append(f"- first checked result in a new process, after the imports, {label}: {row['warm_s']:.2f} s "
                     f"with warm caches ({row['cold_s']:.2f} s with empty ones; disk-cache hits "
                     f"{row['disk_cache_hits']}), of which {row['context_s']:.2f} s make the CUDA context and "
                     f"{row['cuda_coop_s']:.2f} s are cuda.coop's planner and build; "
                     f"{'verified' if row['verified'] else 'WRONG'}.")
    return lines


if __name__ == "__main__":
    raise SystemExit(main())
