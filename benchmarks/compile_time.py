"""Compile time of a kernel with one Load/Store pair and of one with four (issue 3, item 4).

Every measurement that needs a new process runs benchmarks.compile_child in a
subprocess: ``cold`` with an empty cuda-coop cache (a fresh XDG_CACHE_HOME), then
``warm_disk`` with the cache that cold run filled; ``warm_process`` comes from the cold
child itself (a recompile in the same process, or a new specialisation with other dtypes, before
and after the background precompiled header is ready; see compile_child's docstring).
Nothing here touches the GPU.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from .common import ROOT, median_record

KERNELS = {"one": "load_store_one_pair", "four": "load_store_four_pairs"}


def _child(kernel: str, cache_home: Path, target: str) -> dict:
    env = dict(os.environ)
    env["XDG_CACHE_HOME"] = str(cache_home)
    env["NUMBA_CUDA_MLIR_CACHE_DIR"] = str(cache_home / "numba")  # keep numba's own cache out of the picture
    env.pop("CUDA_COOP_DISABLE_CACHE", None)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    done = subprocess.run([sys.executable, "-m", "benchmarks.compile_child", kernel, "--target", target],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    for line in done.stdout.splitlines():
        if line.startswith("BENCH_JSON "):
            return json.loads(line[len("BENCH_JSON "):])
    raise RuntimeError(f"compile child {kernel} failed (rc {done.returncode}):\n{done.stderr[-4000:]}")


def _record(kernel: str, phase: str, variant: str, child: dict, measured: dict, baseline: dict) -> dict:
    record = {"type": "compile", "kernel": KERNELS[kernel], "phase": phase, "variant": variant, **measured,
              "baseline_seconds": baseline["seconds"], "overhead_seconds": measured["seconds"] - baseline["seconds"],
              "import_seconds": child["import_seconds"], "process_init_seconds": child["init_seconds"]}
    return record


def run(repeats: int, target: str = "sm_90") -> list[dict]:
    """Median over ``repeats`` of each (kernel, phase, variant)."""
    samples: dict[tuple[str, str, str], list[dict]] = {}
    errors = []
    for kernel in KERNELS:
        for r in range(repeats):
            with tempfile.TemporaryDirectory(prefix="coop-bench-cache-") as tmp:
                try:
                    cold = _child(kernel, Path(tmp), target)
                    warm = _child(kernel, Path(tmp), target)
                except Exception as exc:
                    errors.append({"type": "compile", "kernel": KERNELS[kernel], "phase": "cold", "error": str(exc)})
                    print(f"compile-time child failed: {str(exc)[:1500]}", flush=True)
                    continue
            found = [
                ("cold", "", cold, cold["first"], cold["baseline"]),
                ("warm_disk", "", warm, warm["first"], warm["baseline"]),
                ("warm_process", "new_grid", cold, cold["new_grid"], cold["baseline_new_grid"]),
                ("warm_process", "new_kernel_object", cold, cold["new_kernel"], cold["baseline_new_grid"]),
                ("warm_process", "new_dtype", cold, cold["new_dtype"], cold["baseline_new_dtype"]),
                ("warm_process", "new_dtype_pch_ready", cold,
                 {**cold["new_dtype_pch"], "pch_wait_seconds": cold["pch_wait_seconds"]},
                 cold["baseline_new_dtype_pch"]),
            ]
            for phase, variant, child, measured, baseline in found:
                samples.setdefault((kernel, phase, variant), []).append(
                    _record(kernel, phase, variant, child, measured, baseline))
            print(f"compile {KERNELS[kernel]} repeat {r + 1}/{repeats}: cold {cold['first']['seconds']:.2f} s "
                  f"(NVRTC {cold['first']['nvrtc_seconds']:.2f} s in {cold['first']['nvrtc_runs']} runs), "
                  f"warm_disk {warm['first']['seconds']:.2f} s (plain numba {warm['baseline']['seconds']:.2f} s), "
                  f"warm_process {cold['new_grid']['seconds']:.2f} s, new dtype {cold['new_dtype']['seconds']:.2f} s "
                  f"({cold['new_dtype_pch']['seconds']:.2f} s with the PCH ready after waiting "
                  f"{cold['pch_wait_seconds']:.2f} s)", flush=True)
    return [median_record(v) for v in samples.values()] + errors
