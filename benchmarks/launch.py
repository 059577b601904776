"""The launch-overhead table (issue 12, item 4): host cost per launch of a one-block kernel.

Runs benchmarks.launch_child twice, in new processes: ``coop`` (cuda.coop imported; the plain kernel, cuda.coop
kernels with 1, 4 and 8 calls, a CuPy RawKernel) and ``plain`` (cuda.coop never imported: the plain kernel and the
RawKernel), so the plain kernel is measured with and without cuda.coop's planner registered. Each row is one
kernel with one way of passing the arrays (``KINDS``).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

from .common import ROOT

MODES = ("coop", "plain")
# Argument kinds: (label, what the launch receives). ``*_each`` wraps on every launch, as code that converts at
# the call site does; the ``_nosync`` kinds turn off numba-cuda-mlir's synchronisation of a foreign array's
# exporting stream (NUMBA_CUDA_ARRAY_INTERFACE_SYNC=0, here its config attribute).
KINDS = {
    "numba": "numba device arrays, kernel[1, 256](a, b)",
    "numba_configured": "numba device arrays, launcher = kernel[1, 256] made once",
    "numba_unmemoised": "numba device arrays without cuda.coop's memo of literal argument types (diagnostic)",
    "cupy": "CuPy arrays passed directly",
    "cupy_nosync": "CuPy arrays passed directly, NUMBA_CUDA_ARRAY_INTERFACE_SYNC=0",
    "cupy_wrap_once": "cuda.as_cuda_array(CuPy array) once, the view passed to every launch",
    "cupy_wrap_each": "cuda.as_cuda_array(CuPy array) at every launch",
    "cupy_wrap_each_nosync": "cuda.as_cuda_array(CuPy array, sync=False) at every launch",
    "torch": "PyTorch tensors passed directly",
    "torch_wrap_once": "cuda.as_cuda_array(tensor) once, the view passed to every launch",
    "torch_wrap_each": "cuda.as_cuda_array(tensor) at every launch",
}
GOAL_US = 2.0  # a cuda.coop kernel's launch <= the same-size plain kernel's + 2 us (issue 12)


def _child(mode: str, dry: bool, batches: int, launches: int) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    command = [sys.executable, "-m", "benchmarks.launch_child", mode, "--batches", str(batches),
               "--launches", str(launches)] + (["--dry"] if dry else [])
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600, check=False)
    rows = []
    for line in done.stdout.splitlines():
        if line.startswith("BENCH_JSON "):
            return json.loads(line[len("BENCH_JSON "):])
        if line.startswith("BENCH_ROW "):
            rows.append(json.loads(line[len("BENCH_ROW "):]))
    failure = f"launch child {mode} failed (rc {done.returncode}):\n{done.stderr[-4000:]}"
    if rows:  # it died after measuring these: keep them, and say so
        return {"mode": mode, "rows": rows, "error": failure}
    raise RuntimeError(failure)


def run(dry: bool, quick: bool = False) -> list[dict]:
    batches, launches = (5, 100) if quick else (10, 100)
    records: list[dict] = []
    for mode in MODES:
        try:
            child = _child(mode, dry, batches, launches)
        except Exception as exc:
            records.append({"type": "launch_process", "process": mode, "error": str(exc)[-4000:]})
            print(f"launch child {mode} failed: {str(exc)[:1500]}", flush=True)
            continue
        info = {k: v for k, v in child.items() if k != "rows"}
        records.append({"type": "launch_process", "process": mode, "dry": dry, "batches": batches,
                        "launches": launches, **info})
        if mode == "plain" and child.get("coop_imported_at_end"):
            records[-1]["error"] = "cuda.coop was imported in the process that must run without it"
        for row in child.get("rows", []):
            records.append({"type": "launch_dry" if dry else "launch", "process": mode, **row})
            if dry:
                print(f"launch {mode:5s} {row['kernel']:14s} " + (f"built in {row['built_seconds']:.2f} s"
                                                                  if "built_seconds" in row else row.get("error", "")),
                      flush=True)
            else:
                shown = (f"{row['wall_us']:7.1f} us/launch (host {row['host_us']:.1f})" if "wall_us" in row
                         else row.get("error") or row.get("failed", ""))
                print(f"launch {mode:5s} {row['kernel']:14s} {row['args']:22s} {shown}", flush=True)
    return records


def goal_lines(records: list[dict]) -> list[str]:
    """Issue 12's launch goal: each cuda.coop kernel against the plain kernel of the same process (numba arrays,
    ``kernel[1, 256](a, b)``), and the plain kernel with and without cuda.coop in the process."""
    cells = {(r["process"], r["kernel"], r["args"]): r for r in records if r.get("type") == "launch" and "wall_us" in r}
    plain = cells.get(("coop", "plain", "numba"))
    lines = []
    if plain is None:
        return lines
    alone = cells.get(("plain", "plain", "numba"))
    if alone:
        lines.append(f"- Launch: plain numba-cuda-mlir kernel {plain['wall_us']:.1f} us per launch with cuda.coop "
                     f"imported, {alone['wall_us']:.1f} us without ({plain['wall_us'] - alone['wall_us']:+.1f} us: "
                     "numba-cuda-mlir's planner-aware launch path, taken for every kernel once a planner is "
                     "registered).")
    pairs = [(f"coop_{calls}", f"cuda.coop kernel with {calls} call(s)", "plain", plain) for calls in (1, 4, 8)]
    plain_arg = cells.get(("coop", "plain_arg", "numba"))
    if plain_arg:
        pairs.append(("coop_literal", "cuda.coop kernel specialised on an int argument (README.md's shape)",
                      "plain with an int argument", plain_arg))
    for kernel, what, base_name, base in pairs:
        coop = cells.get(("coop", kernel, "numba"))
        if coop is None:
            continue
        added = coop["wall_us"] - base["wall_us"]
        lines.append(f"- {'MET' if added <= GOAL_US else 'MISSED'}: {what} {coop['wall_us']:.1f} us per launch = "
                     f"{base_name} {base['wall_us']:.1f} us {added:+.1f} us (target <= +{GOAL_US:g} us; GPU time "
                     f"{_us(coop.get('device_us'))} vs {_us(base.get('device_us'))} per launch).")
    unmemoised = cells.get(("coop", "coop_literal", "numba_unmemoised"))
    if unmemoised and plain_arg and ("coop", "coop_literal", "numba") in cells:
        memo = cells[("coop", "coop_literal", "numba")]
        lines.append(f"- Without cuda.coop's memo of literal argument types the int-argument kernel takes "
                     f"{unmemoised['wall_us']:.1f} us per launch ({unmemoised['wall_us'] - memo['wall_us']:+.1f} us).")
    return lines


def _us(value) -> str:
    return "–" if value is None else f"{value:.1f} us"


def table(records: list[dict]) -> list[str]:
    """Rows: process and kernel; columns: the argument kinds, then the GPU time per launch."""
    rows = [r for r in records if r.get("type") == "launch"]
    if not rows:
        return []
    kinds = [k for k in KINDS if any(r["args"] == k for r in rows)]
    by: dict[tuple, dict[str, dict]] = {}
    for r in rows:
        by.setdefault((r["process"], r["kernel"]), {})[r["args"]] = r
    names = {"plain": "plain numba-cuda-mlir", "plain_arg": "plain numba-cuda-mlir, int argument",
             "coop_1": "cuda.coop, 1 call", "coop_4": "cuda.coop, 4 calls", "coop_8": "cuda.coop, 8 calls",
             "coop_literal": "cuda.coop, 2 calls, specialised on an int argument",
             "cupy_rawkernel": "CuPy RawKernel (CuPy arrays)"}
    out = ["| process | kernel | " + " | ".join(kinds) + " | GPU us/launch | ok |",
           "|---|---|" + "---|" * (len(kinds) + 2)]
    order = list(names)
    for (process, kernel), cells in sorted(by.items(), key=lambda item: (
            item[0][0] != "plain", order.index(item[0][1]) if item[0][1] in order else len(order), item[0][1])):
        where = "cuda.coop imported" if process == "coop" else "without cuda.coop"
        values = []
        for kind in kinds:
            cell = cells.get(kind)
            if cell is None:
                values.append("–")
            elif "wall_us" in cell:
                values.append(f"{cell['wall_us']:.1f}")
            else:
                values.append("fails: " + (cell.get("error") or cell.get("failed", ""))[:80].replace("|", "/"))
        first = next(iter(cells.values()))
        verified = first.get("verified")
        out.append(f"| {where} | {names.get(kernel, kernel)} | " + " | ".join(values)
                   + f" | {_us(first.get('device_us')).replace(' us', '')} | "
                   + f"{'–' if verified is None else ('yes' if verified else 'NO')} |")
    legend = "; ".join(f"`{k}`: {v}" for k, v in KINDS.items() if k in kinds)
    out += ["", f"Columns: {legend}. The CuPy RawKernel row is in the `cupy` column (its own launcher)."]
    processes = {r["process"]: r for r in records if r.get("type") == "launch_process"}
    coop = processes.get("coop", {})
    ready = coop.get("ready_launch_us") or {}
    if any(v is not None for v in ready.values()):
        text = ("numba-cuda-mlir's per-launch bookkeeping on its planner-aware path (`_get_ready_launch`, "
                "private; microseconds per call, cuda.coop imported): "
                + ", ".join(f"{names.get(k, k)} {_us(v)}" for k, v in ready.items()) + ".")
        out += ["", text]
    for kernel, top in (coop.get("profile") or {}).items():
        title = (f"Host profile of one launch, {names.get(kernel, kernel)} (configured launcher, numba arrays; "
                 "cProfile, so inflated; us per launch by function):")
        out += ["", title, "", "; ".join(f"`{name}` {us:.2f}" for name, us in top[:10])]
    return out
