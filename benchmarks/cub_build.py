"""Build the CUB C++ reference kernels with nvcc at run time and load them with cupy.

All instantiations go into one generated translation unit, so one nvcc run builds
every reference kernel; it runs in the background while the cuda.coop kernels compile.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from .common import BENCH_DIR

ARCH = "sm_90"
FLAGS = ("-O3", f"-arch={ARCH}", "-cubin", "-std=c++17")


def find_nvcc() -> str | None:
    """$NVCC, the system toolkit (CUDA 13.0 on the H200 machine), PATH, then the pip nvcc."""
    candidates = [os.environ.get("NVCC", "")]
    for var in ("CUDA_HOME", "CUDA_PATH"):
        if os.environ.get(var):
            candidates.append(str(Path(os.environ[var]) / "bin" / "nvcc"))
    candidates += ["/usr/local/cuda/bin/nvcc", shutil.which("nvcc") or ""]
    try:
        import nvidia.cu13

        candidates.append(str(Path(list(nvidia.cu13.__path__)[0]) / "bin" / "nvcc"))
    except Exception:
        pass
    return next((c for c in candidates if c and os.access(c, os.X_OK)), None)


def cccl_include() -> str:
    """The cuda-cccl wheel's headers: the same CUB that cuda.coop compiles through NVRTC."""
    from importlib.resources import files

    return str(files("cuda.cccl.headers.include"))


def nvcc_version(nvcc: str) -> str:
    out = subprocess.run([nvcc, "--version"], capture_output=True, text=True).stdout.strip().splitlines()
    return out[-1] if out else "unknown"


@dataclass
class Build:
    """A background nvcc run; ``wait()`` returns the cubin path or raises with nvcc's log."""

    command: list[str]
    cubin: Path
    source: Path
    process: subprocess.Popen
    started: float
    seconds: float = 0.0

    def wait(self) -> Path:
        out, _ = self.process.communicate()
        self.seconds = time.perf_counter() - self.started
        if self.process.returncode != 0:
            raise RuntimeError(f"nvcc failed ({' '.join(self.command)}):\n{out[-6000:]}")
        return self.cubin


def start(family_source: str, instances: list[str], workdir: Path) -> Build:
    """Write the generated translation unit and start nvcc on it."""
    nvcc = find_nvcc()
    if nvcc is None:
        raise RuntimeError("nvcc not found: set $NVCC or CUDA_HOME")
    workdir.mkdir(parents=True, exist_ok=True)
    stem = Path(family_source).stem
    source = workdir / f"{stem}_instances.cu"
    source.write_text(f'#include "{BENCH_DIR / "cub" / family_source}"\n\n' + "\n".join(instances) + "\n")
    cubin = workdir / f"{stem}.cubin"
    # The wheel's include directory goes first, ahead of the toolkit's own CCCL copy.
    command = [nvcc, *FLAGS, f"-I{cccl_include()}", "-o", str(cubin), str(source)]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return Build(command, cubin, source, process, time.perf_counter())


def load(cubin: Path):
    import cupy as cp

    return cp.RawModule(path=str(cubin))


def resources(function) -> dict:
    """Registers and memory of a cupy kernel, as the driver reports them."""
    return {"registers": int(function.num_regs), "shared_bytes": int(function.shared_size_bytes),
            "local_bytes": int(function.local_size_bytes)}


def sass(cubin: Path, function: str | None = None) -> str:
    """SASS of one kernel (or all) of a cubin, for comparing a missed target with CUB."""
    tool = next((t for t in (str(Path(find_nvcc() or "/usr/local/cuda/bin/nvcc").parent / "cuobjdump"),
                             "/usr/local/cuda/bin/cuobjdump", shutil.which("cuobjdump") or "") if t and
                 os.access(t, os.X_OK)), None)
    if tool is None:
        return "cuobjdump not found"
    command = [tool, "-sass"] + (["-fun", function] if function else []) + [str(cubin)]
    done = subprocess.run(command, capture_output=True, text=True)
    return done.stdout if done.returncode == 0 else f"{' '.join(command)} failed: {done.stderr}"


def symbols_present(cubin: Path, names: list[str]) -> list[str]:
    """Names missing from the cubin's symbol table (a cheap check that needs no driver)."""
    data = cubin.read_bytes()
    return [n for n in names if b"\0" + n.encode() + b"\0" not in data]
