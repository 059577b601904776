"""Build time of CuTe kernels with cuda.coop calls, on both routes of the CuTe backend (docs: cutlass, "How it works").

Each measurement is one fresh process that builds one benchmark kernel with ``compile_kernel`` (sm_90a, no GPU
needed) and reports the seconds of that build alone (imports excluded): ``cold`` with an empty cuda-coop cache (a
fresh XDG_CACHE_HOME), then ``warm`` in a second process on the cache the first one filled. The CuTe DSL's own file
cache is off (CUTE_DSL_DISABLE_FILE_CACHING=1), so that both phases run its whole pipeline: ``warm`` is what a
changed kernel with known calls costs. ``link`` is the route forced by CUDA_COOP_CUTE_ROUTE=link.

    python -m benchmarks.cute_build_time [ROW ...]      (rows of benchmarks/cute.py; default exclusive_sum radix_sort)
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time

ROUTES = ("bitcode", "link")
PHASES = ("cold", "warm")
DEFAULT_ROWS = ("exclusive_sum", "radix_sort")


def _child(row_name: str) -> None:
    from . import cute

    row = next(r for r in cute.ROWS if r.name == row_name)
    import cuda.coop.cutlass as cute_coop
    from cuda.coop.cutlass import _route

    from . import cute_kernels

    samples = cute._cute_samples(row, 1 << 20)
    start = time.perf_counter()
    built = cute_coop.compile_kernel(getattr(cute_kernels, row.name), *samples)
    seconds = time.perf_counter() - start
    print(json.dumps({"seconds": seconds, "route": _route.route(), "registers": built.registers,
                      "calls": built.sass().count("CALL")}))


def _run_child(row: str, route: str, cache_home: str) -> dict:
    env = {**os.environ, "XDG_CACHE_HOME": cache_home, "CUTE_DSL_DISABLE_FILE_CACHING": "1"}
    env.pop("CUDA_COOP_CUTE_ROUTE", None)
    if route == "link":
        env["CUDA_COOP_CUTE_ROUTE"] = "link"
    done = subprocess.run([sys.executable, "-W", "ignore", "-m", "benchmarks.cute_build_time", "--child", row],
                          capture_output=True, text=True, env=env, timeout=900)
    if done.returncode != 0:
        return {"error": done.stderr.strip()[-2000:] or f"exit {done.returncode}"}
    return json.loads(done.stdout.strip().splitlines()[-1])


def measure(rows: tuple[str, ...] = DEFAULT_ROWS) -> list[dict]:
    """One record per (row, route, phase): ``seconds`` of the build, the route it took, its CALL count."""
    records = []
    for row in rows:
        for route in ROUTES:
            with tempfile.TemporaryDirectory(prefix="cuda_coop_build_time_") as cache_home:
                for phase in PHASES:
                    result = _run_child(row, route, cache_home)
                    records.append({"type": "cute_build", "row": row, "impl": f"{route}-{phase}", "route": route,
                                    "phase": phase, **result})
                    shown = f"{result['seconds']:.2f} s ({result['route']}, {result['calls']} CALL)" \
                        if "seconds" in result else "FAILED " + result["error"].splitlines()[-1][:200]
                    print(f"  build {row:14s} {route:8s} {phase:5s} {shown}", flush=True)
    return records


def table(records: list[dict]) -> list[str]:
    """Markdown lines: build seconds per row and route, and the bitcode/link ratio of each phase."""
    by = {(r["row"], r["route"], r["phase"]): r.get("seconds") for r in records if r.get("type") == "cute_build"}
    rows = list(dict.fromkeys(r["row"] for r in records if r.get("type") == "cute_build"))
    if not rows:
        return []

    def cell(value: float | None) -> str:
        return "error" if value is None else f"{value:.2f}"

    lines = ["| kernel | bitcode cold s | bitcode warm s | link cold s | link warm s | cold bitcode / link | "
             "warm bitcode / link |", "|---|--:|--:|--:|--:|--:|--:|"]
    for row in rows:
        values = [by.get((row, route, phase)) for route in ROUTES for phase in PHASES]
        ratios = [f"{a / b:.2f}" if a and b else "-" for a, b in ((values[0], values[2]), (values[1], values[3]))]
        lines.append(f"| {row} | " + " | ".join(cell(v) for v in values) + f" | {ratios[0]} | {ratios[1]} |")
    return lines


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        _child(sys.argv[2])
    else:
        found = measure(tuple(sys.argv[1:]) or DEFAULT_ROWS)
        print("\n".join(table(found)))
