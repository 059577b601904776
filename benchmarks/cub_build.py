"""Build the CUB C++ reference kernels with nvcc at run time and load them with cupy.

All instantiations go into one generated translation unit, so one nvcc run builds
every reference kernel; it runs in the background while the cuda.coop kernels compile.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from .common import BENCH_DIR

ARCH = "sm_90"
FLAGS = ("-O3", f"-arch={ARCH}", "-cubin", "-std=c++17")


def find_tool(name: str) -> str | None:
    """$NVCC (for nvcc), the system toolkit (CUDA 13.0 on the H200 machine), PATH, then pip's."""
    candidates = [os.environ.get("NVCC", "")] if name == "nvcc" else []
    for var in ("CUDA_HOME", "CUDA_PATH"):
        if os.environ.get(var):
            candidates.append(str(Path(os.environ[var]) / "bin" / name))
    candidates += [f"/usr/local/cuda/bin/{name}", shutil.which(name) or ""]
    try:
        import nvidia.cu13

        candidates += [str(Path(p) / "bin" / name) for p in nvidia.cu13.__path__]
    except Exception:
        pass
    try:
        from cuda.pathfinder import find_nvidia_binary_utility

        candidates.append(str(find_nvidia_binary_utility(name) or ""))
    except Exception:
        pass
    return next((c for c in candidates if c and os.access(c, os.X_OK)), None)


def find_nvcc() -> str | None:
    return find_tool("nvcc")


def cccl_include() -> str:
    """The cuda-cccl wheel's headers: the same CUB that cuda.coop compiles through NVRTC."""
    from importlib.resources import files

    return str(files("cuda.cccl.headers.include"))


def nvcc_version(nvcc: str) -> str:
    out = subprocess.run([nvcc, "--version"], capture_output=True, text=True).stdout.strip().splitlines()
    return out[-1] if out else "unknown"


@dataclass
class Part:
    symbols: list[str]
    cubin: Path
    command: list[str]
    process: subprocess.Popen


@dataclass
class Build:
    """Background nvcc runs, one per chunk of kernels; ``wait()`` raises with nvcc's log on failure."""

    parts: list[Part]
    started: float
    seconds: float = 0.0

    @property
    def command(self) -> list[str]:
        return self.parts[0].command

    def wait(self) -> dict[str, Path]:
        """symbol -> the cubin that holds it."""
        logs = [(part, part.process.communicate()[0]) for part in self.parts]
        self.seconds = time.perf_counter() - self.started
        for part, log in logs:
            if part.process.returncode != 0:
                raise RuntimeError(f"nvcc failed ({' '.join(part.command)}):\n{log[-6000:]}")
        return {symbol: part.cubin for part in self.parts for symbol in part.symbols}

    def cubins(self) -> list[Path]:
        return [part.cubin for part in self.parts]


def start(family_source: str | list[str], instances: list[tuple[str, str]], workdir: Path,
          jobs: int | None = None) -> Build:
    """Write the generated translation units and start nvcc on them.

    ``instances`` are (symbol, instantiation line); ``family_source`` one file of ``cub/`` or several, all included
    in every translation unit. One nvcc run spends most of its time instantiating templates on one core, so the
    kernels are split over parallel runs (``jobs``, by default from the number of cores).
    """
    nvcc = find_nvcc()
    if nvcc is None:
        raise RuntimeError("nvcc not found: set $NVCC or CUDA_HOME")
    workdir.mkdir(parents=True, exist_ok=True)
    sources = [family_source] if isinstance(family_source, str) else list(family_source)
    stem = "_".join(Path(s).stem for s in sources)
    if jobs is None:
        jobs = max(1, min(8, (os.cpu_count() or 2) // 2, len(instances) // 4))
    includes = "".join(f'#include "{BENCH_DIR / "cub" / s}"\n' for s in sources)
    parts, started = [], time.perf_counter()
    for j in range(jobs):
        chunk = instances[j::jobs]
        source = workdir / f"{stem}_{j}.cu"
        source.write_text(includes + "\n" + "\n".join(line for _, line in chunk) + "\n")
        cubin = workdir / f"{stem}_{j}.cubin"
        # The wheel's include directory goes first, ahead of the toolkit's own CCCL copy.
        command = [nvcc, *FLAGS, f"-I{cccl_include()}", "-o", str(cubin), str(source)]
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        parts.append(Part([symbol for symbol, _ in chunk], cubin, command, process))
    return Build(parts, started)


def load(where: dict[str, Path]) -> dict[str, object]:
    """symbol -> cupy kernel, loading each cubin once."""
    import cupy as cp

    modules = {path: cp.RawModule(path=str(path)) for path in set(where.values())}
    return {symbol: modules[path].get_function(symbol) for symbol, path in where.items()}


def resources(function) -> dict:
    """Registers and memory of a loaded cupy kernel, as the driver reports them."""
    return {"registers": int(function.num_regs), "shared_bytes": int(function.shared_size_bytes),
            "local_bytes": int(function.local_size_bytes)}


_RES = re.compile(r"Function (\S+):\s*\n\s*REG:(\d+) STACK:(\d+) SHARED:(\d+) LOCAL:(\d+)")


def res_usage(cubin: Path | bytes) -> dict[str, dict]:
    """``cuobjdump -res-usage`` per function (shared includes the 1 KiB sm_90 reserves, as for CUB)."""
    tool = find_tool("cuobjdump")
    if tool is None:
        return {}
    with tempfile.TemporaryDirectory() as tmp:
        if isinstance(cubin, bytes):
            path = Path(tmp) / "kernel.cubin"
            path.write_bytes(cubin)
            cubin = path
        out = subprocess.run([tool, "-res-usage", str(cubin)], capture_output=True, text=True).stdout
    return {m[0]: {"registers": int(m[1]), "stack_bytes": int(m[2]), "shared_bytes": int(m[3]),
                   "local_bytes": int(m[4])} for m in _RES.findall(out)}


def sass(cubin: Path | bytes, function: str | None = None) -> str:
    """SASS of one kernel (or all) of a cubin, for comparing a missed target with CUB."""
    tool = find_tool("cuobjdump")
    if tool is None:
        return "cuobjdump not found"
    with tempfile.TemporaryDirectory() as tmp:
        if isinstance(cubin, bytes):
            path = Path(tmp) / "kernel.cubin"
            path.write_bytes(cubin)
            cubin = path
        command = [tool, "-sass"] + (["-fun", function] if function else []) + [str(cubin)]
        done = subprocess.run(command, capture_output=True, text=True)
    return done.stdout if done.returncode == 0 else f"{' '.join(command)} failed: {done.stderr}"


def symbols_present(cubin: Path, names: list[str]) -> list[str]:
    """Names missing from a cubin's symbol table (a cheap check that needs no driver)."""
    data = cubin.read_bytes()
    return [n for n in names if b"\0" + n.encode() + b"\0" not in data]
