"""What the run ran on: GPU, driver, clocks seen during the run, commit and software versions."""
from __future__ import annotations

import datetime
import os
import platform
import subprocess
import threading

from .common import ROOT

_FIELDS = "name,driver_version,clocks.sm,clocks.mem,clocks.max.sm,clocks.max.mem,temperature.gpu,power.draw"


def nvidia_smi(fields: str = _FIELDS) -> list[str] | None:
    try:
        out = subprocess.run(["nvidia-smi", f"--query-gpu={fields}", "--format=csv,noheader,nounits"],
                             capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if out.returncode != 0 or not out.stdout.strip():
        return None
    return [v.strip() for v in out.stdout.strip().splitlines()[0].split(",")]


class ClockSampler:
    """Polls nvidia-smi while the timed kernels run: the clocks the numbers were measured at."""

    def __init__(self, period_s: float = 1.0):
        self.period_s = period_s
        self.samples: list[tuple[float, float]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def _loop(self) -> None:
        while not self._stop.is_set():
            row = nvidia_smi("clocks.sm,clocks.mem")
            if row is None:
                return
            try:
                self.samples.append((float(row[0]), float(row[1])))
            except ValueError:
                pass
            self._stop.wait(self.period_s)

    def __enter__(self) -> "ClockSampler":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=30)

    def summary(self) -> dict:
        if not self.samples:
            return {}
        sm = [s for s, _ in self.samples]
        mem = [m for _, m in self.samples]
        return {"sm_mhz_min": min(sm), "sm_mhz_max": max(sm), "mem_mhz_min": min(mem), "mem_mhz_max": max(mem),
                "clock_samples": len(self.samples)}


def commit() -> str:
    """BENCH_COMMIT wins (the GPU machine's copy of the tree may have no .git)."""
    if os.environ.get("BENCH_COMMIT"):
        return os.environ["BENCH_COMMIT"]
    try:
        head = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], cwd=ROOT, capture_output=True, text=True)
        if head.returncode == 0:
            dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT,
                                   capture_output=True, text=True).stdout.strip()
            return head.stdout.strip() + ("+dirty" if dirty else "")
    except OSError:
        pass
    return "unknown"


def _version(module: str) -> str | None:
    try:
        from importlib.metadata import version

        return version(module)
    except Exception:
        return None


def _cccl_version() -> str | None:
    try:
        from importlib.resources import files

        text = (files("cuda.cccl.headers.include") / "cuda" / "std" / "__cccl" / "version.h").read_text()
        number = int(text.split("#define CCCL_VERSION ")[1].split()[0])
        return f"{number // 1000000}.{number // 1000 % 1000}.{number % 1000}"
    except Exception:
        return None


def _nvrtc_version() -> str | None:
    try:
        from cuda.bindings import nvrtc

        _, major, minor = nvrtc.nvrtcVersion()
        return f"{major}.{minor}"
    except Exception:
        return None


def _nvjitlink_version() -> str | None:
    """The nvJitLink that links every cuda.coop kernel (numba-cuda-mlir's final LTO link, and its ptxas)."""
    try:
        from cuda.bindings import nvjitlink

        major, minor = nvjitlink.version()
        return f"{major}.{minor}"
    except Exception:
        return None


def _ptxas_version() -> str | None:
    """The standalone ptxas next to the toolkit's nvcc (the CUB C++ kernels' assembler), as its release line."""
    try:
        from .cub_build import find_tool

        ptxas = find_tool("ptxas")
        if ptxas is None:
            return None
        out = subprocess.run([ptxas, "--version"], capture_output=True, text=True, timeout=60, check=False).stdout
        lines = out.strip().splitlines()
        release = next((line for line in lines if "release" in line), lines[-1] if lines else "unknown")
        return f"{release.strip()} ({ptxas})"
    except Exception:
        return None


def describe() -> dict:
    row = nvidia_smi()
    info = {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "commit": commit(), "python": platform.python_version(), "host": platform.node()}
    if row:
        keys = ["gpu", "driver", "sm_mhz_idle", "mem_mhz_idle", "sm_mhz_max_rated", "mem_mhz_max_rated",
                "temperature_c", "power_w"]
        info.update(dict(zip(keys, row)))
    else:
        info["gpu"] = "none (nvidia-smi unavailable)"
    packages = {name: _version(name) for name in
                ("cuda-coop", "numba-cuda-mlir", "cuda-cccl", "cuda-bindings", "cuda-core", "numpy", "cupy-cuda13x",
                 "cupy-cuda12x", "cupy", "torch", "triton")}
    try:
        from cuda.coop import __version__ as coop_version  # run from the source tree: no metadata

        packages["cuda-coop"] = coop_version
    except Exception:
        pass
    info["packages"] = {k: v for k, v in packages.items() if v}
    info["cccl_headers"] = _cccl_version()
    info["nvrtc"] = _nvrtc_version()
    info["nvjitlink"] = _nvjitlink_version()
    info["ptxas"] = _ptxas_version()
    return info
