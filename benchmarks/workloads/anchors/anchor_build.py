#!/usr/bin/env python3
"""Build issue 43's two third-party CUDA anchors from the source copies in .anchors/ (git-ignored, never committed).

    python3 benchmarks/workloads/anchors/anchor_build.py vllm  [--src DIR] [--out DIR] [--jobs N] [--arch 90] [--force]
    python3 benchmarks/workloads/anchors/anchor_build.py mamba [--src DIR] [--out DIR] [--jobs N] [--arch 90] [--force]

The third-party sources (.anchors/vllm-src, .anchors/mamba-src: fetch_anchors.py or unpack_kit.sh) are compiled
unchanged; the only other units are cuda-coop's own files beside this script.

vllm:  vLLM 0.33.0's csrc/moe/moe_align_sum_kernels.cu + our vllm_moe_register.cpp
       -> OUT/libvllm_moe_align.so (torch.ops.load_library; registers torch.ops.coop_vllm.moe_align_block_size).
       Flags as vLLM's CMake for _moe_C_stable_libtorch: C++20, TORCH_TARGET_VERSION=2.11 (stable ABI), USE_CUDA,
       ENABLE_FP8, torch's COMMON_NVCC_FLAGS less the __CUDA_NO_HALF* defines (vLLM drops them for CUDA >= 12).
mamba: mamba-ssm 2.3.2.post1's csrc/selective_scan/selective_scan.cpp (its pybind11 module: fwd and bwd) and
       selective_scan_fwd_{fp32,fp16,bf16}.cu (the forward, float and complex weights) + our mamba_bwd_stubs.cpp
       (the backward instantiations selective_scan.cpp references, raising "backward not built": no backward
       kernel is compiled) -> OUT/selective_scan_cuda<EXT_SUFFIX>.so, with mamba-ssm's setup.py flags. Where
       Python.h is missing: selective_scan.cpp is compiled against our mamba_nopython/torch/python.h instead, giving
       OUT/libselective_scan_cuda_op.so (torch.ops.coop_mamba.fwd) and a selective_scan_cuda.py shim exposing fwd.

Every unit is compiled in parallel (--jobs, default min(16, cores)) straight with nvcc / c++, with the include paths,
library paths and nvcc defaults of torch.utils.cpp_extension (no ninja, no CUDA version check: the toolkit's nvcc
is used whatever CUDA torch was built with; cudart is linked statically). Idempotent: a stamp in OUT records a hash
of the sources, the command lines, nvcc's and torch's versions; a build whose stamp matches is skipped.
--compile-only (with --units) compiles objects and stops (for a check on a machine without a GPU).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import hashlib
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import time
import warnings
from pathlib import Path

OWN = Path(__file__).resolve().parent  # cuda-coop's own sources and tools (benchmarks/workloads/anchors)
ROOT = OWN.parents[2]
ANCHORS = Path(os.environ.get("ANCHORS_DIR") or ROOT / ".anchors")  # git-ignored: sources, kit, builds
HALF_DEFINES = (
    "-D__CUDA_NO_HALF_OPERATORS__",
    "-D__CUDA_NO_HALF_CONVERSIONS__",
    "-D__CUDA_NO_BFLOAT16_CONVERSIONS__",
    "-D__CUDA_NO_HALF2_OPERATORS__",
)
MAMBA_NVCC = [
    "-O3",
    "-std=c++17",
    "-U__CUDA_NO_HALF_OPERATORS__",
    "-U__CUDA_NO_HALF_CONVERSIONS__",
    "-U__CUDA_NO_BFLOAT16_OPERATORS__",
    "-U__CUDA_NO_BFLOAT16_CONVERSIONS__",
    "-U__CUDA_NO_BFLOAT162_OPERATORS__",
    "-U__CUDA_NO_BFLOAT162_CONVERSIONS__",
    "--expt-relaxed-constexpr",
    "--expt-extended-lambda",
    "--use_fast_math",
    "-lineinfo",
]
# (mamba-ssm's setup.py also passes --ptxas-options=-v, which only prints register counts, and --threads 4)


def log(msg: str) -> None:
    print(f"[anchor_build] {msg}", flush=True)


def cuda_home() -> Path:
    for cand in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
        if cand and (Path(cand) / "bin" / "nvcc").is_file():
            return Path(cand)
    nvcc = shutil.which("nvcc")
    if nvcc:
        return Path(nvcc).resolve().parent.parent
    sys.exit("anchor_build: no nvcc (set CUDA_HOME)")


def cudart_static_dir(home: Path) -> Path:
    for sub in ("lib64", "lib", "targets/x86_64-linux/lib", "targets/sbsa-linux/lib"):
        if (home / sub / "libcudart_static.a").is_file():
            return home / sub
    sys.exit(f"anchor_build: no libcudart_static.a under {home}")


class Torch:
    """What torch.utils.cpp_extension would use: include and library paths, nvcc defaults, ABI defines."""

    def __init__(self) -> None:
        import torch
        import torch.utils.cpp_extension as ce

        self.version = torch.__version__
        self.cuda = torch.version.cuda
        try:
            self.includes = list(ce.include_paths("cpu"))  # torch's own include dirs (CUDA's added by us)
        except TypeError:  # torch < 2.6: include_paths(cuda=False)
            self.includes = list(ce.include_paths(False))
        try:
            self.libs = list(ce.library_paths("cpu"))
        except TypeError:
            self.libs = list(ce.library_paths(False))
        self.common_nvcc = list(ce.COMMON_NVCC_FLAGS)
        abi = []
        for helper in ("_get_pybind11_abi_build_flags", "_get_glibcxx_abi_build_flags"):
            if hasattr(ce, helper):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    abi += list(getattr(ce, helper)())
        if not any("_GLIBCXX_USE_CXX11_ABI" in f for f in abi):
            abi.append(f"-D_GLIBCXX_USE_CXX11_ABI={int(torch._C._GLIBCXX_USE_CXX11_ABI)}")
        self.abi = abi


def isystem(paths: list[str]) -> list[str]:
    return [flag for p in paths for flag in ("-isystem", p)]


def spec_vllm(src: Path, t: Torch, home: Path, arch: str, python_ok: bool) -> dict:
    includes = [f"-I{src / 'csrc'}"] + isystem(t.includes + [str(home / "include")])
    defines = ["-DTORCH_TARGET_VERSION=0x020B000000000000ULL", "-DUSE_CUDA", "-DENABLE_FP8", "-DNDEBUG"]
    nvcc_common = [f for f in t.common_nvcc if f not in HALF_DEFINES]
    return {
        "target": "libvllm_moe_align.so",
        "units": [
            (
                "nvcc",
                src / "csrc/moe/moe_align_sum_kernels.cu",
                nvcc_common
                + ["-O3", "-std=c++20", "-Xcompiler", "-fPIC", "-gencode", f"arch=compute_{arch},code=sm_{arch}"]
                + includes
                + defines,
            ),
            ("cxx", OWN / "vllm_moe_register.cpp", ["-O3", "-std=c++20", "-fPIC"] + includes + defines),
        ],
        "link_libs": ["-lc10", "-ltorch", "-ltorch_cpu", "-lc10_cuda", "-ltorch_cuda"],
    }


def spec_mamba(src: Path, t: Torch, home: Path, arch: str, python_ok: bool) -> dict:
    inc_py = [sysconfig.get_path("include", scheme="posix_prefix")] if python_ok else []
    includes = [f"-I{src / 'csrc/selective_scan'}"] + isystem(t.includes + [str(home / "include")] + inc_py)
    defines = ["-DTORCH_EXTENSION_NAME=selective_scan_cuda", "-DTORCH_API_INCLUDE_EXTENSION_H"] + t.abi
    if not python_ok:
        defines.append("-DCOOP_NO_PYTHON")
    nvcc = (
        t.common_nvcc
        + ["--compiler-options", "-fPIC"]
        + MAMBA_NVCC
        + ["-gencode", f"arch=compute_{arch},code=sm_{arch}"]
        + includes
        + defines
    )
    ss = src / "csrc/selective_scan"
    units = [("nvcc", ss / f"selective_scan_fwd_{d}.cu", nvcc) for d in ("fp32", "bf16", "fp16")]
    cxx = ["-O3", "-std=c++17", "-fPIC"]
    # without Python.h: our torch/python.h stand-in first on the path (selective_scan.cpp only)
    binding = ([] if python_ok else [f"-I{OWN / 'mamba_nopython'}"]) + includes
    units.append(("cxx", ss / "selective_scan.cpp", cxx + binding + defines))
    units.append(("cxx", OWN / "mamba_bwd_stubs.cpp", cxx + includes + defines))
    suffix = sysconfig.get_config_var("EXT_SUFFIX") or ".so"
    return {
        "target": f"selective_scan_cuda{suffix}" if python_ok else "libselective_scan_cuda_op.so",
        "units": units,
        "link_libs": (["-ltorch_python"] if python_ok else [])
        + ["-lc10", "-ltorch", "-ltorch_cpu", "-lc10_cuda", "-ltorch_cuda"],
        "shim": None if python_ok else "selective_scan_cuda.py",
    }


SHIM = '''"""selective_scan_cuda as a torch op (built without Python.h by benchmarks/workloads/anchors/anchor_build.py):
fwd takes mamba-ssm's arguments and returns its outputs (out, x[, out_z]) as a list."""
import os as _os

import torch as _torch

_torch.ops.load_library(_os.path.join(_os.path.dirname(_os.path.abspath(__file__)), "libselective_scan_cuda_op.so"))
fwd = _torch.ops.coop_mamba.fwd
'''


def run(cmd: list[str], logfile: Path) -> tuple[int, float]:
    start = time.perf_counter()
    with open(logfile, "w") as fh:
        fh.write(" ".join(cmd) + "\n\n")
        fh.flush()
        rc = subprocess.call(cmd, stdout=fh, stderr=subprocess.STDOUT)
    return rc, time.perf_counter() - start


def shown(path: Path, src: Path) -> str:
    """A unit's path for the log: relative to the source copy, or ours (benchmarks/workloads/anchors/...)."""
    for base in (src, ROOT):
        if path.is_relative_to(base):
            return str(path.relative_to(base))
    return str(path)


def digest(paths: list[Path], extra: list) -> str:
    h = hashlib.sha256()
    for p in sorted(paths):
        h.update(str(p).encode())
        h.update(p.read_bytes())
    h.update(json.dumps(extra, sort_keys=True, default=str).encode())
    return h.hexdigest()


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="anchor_build.py", description=__doc__.splitlines()[0])
    p.add_argument("which", choices=("vllm", "mamba"))
    p.add_argument("--src", help="source copy (default .anchors/vllm-src or .anchors/mamba-src)")
    p.add_argument("--out", help="build folder (default .anchors/vllm-moe-build or .anchors/mamba-build)")
    p.add_argument("--jobs", type=int, default=int(os.environ.get("MAX_JOBS", min(16, os.cpu_count() or 1))))
    p.add_argument("--arch", default=os.environ.get("ANCHOR_ARCH", "90"), help="SM arch digits (default 90)")
    p.add_argument("--force", action="store_true", help="rebuild even if the stamp matches")
    p.add_argument("--compile-only", action="store_true", help="compile objects, no link (a check without a GPU)")
    p.add_argument("--units", help="with --compile-only: comma-separated substrings of the units to compile")
    p.add_argument("--no-python", action="store_true", help="mamba: build the torch-op fallback even with Python.h")
    args = p.parse_args(argv)

    t0 = time.perf_counter()
    src = Path(args.src or ANCHORS / ("vllm-src" if args.which == "vllm" else "mamba-src")).resolve()
    out = Path(args.out or ANCHORS / ("vllm-moe-build" if args.which == "vllm" else "mamba-build")).resolve()
    if not src.is_dir():
        sys.exit(
            f"anchor_build: no source copy at {src} (bash benchmarks/workloads/anchors/unpack_kit.sh, or "
            "python benchmarks/workloads/anchors/fetch_anchors.py on a machine with PyPI access)"
        )
    home = cuda_home()
    nvcc = str(home / "bin" / "nvcc")
    cxx = os.environ.get("CXX") or shutil.which("c++") or shutil.which("g++") or "g++"
    t = Torch()
    py_h = Path(sysconfig.get_path("include", scheme="posix_prefix")) / "Python.h"
    python_ok = py_h.is_file() and not args.no_python
    if args.which == "mamba" and not python_ok:
        why = "--no-python" if args.no_python else f"no {py_h}"
        log(f"{why}: building the torch-op fallback (torch.ops.coop_mamba.fwd + selective_scan_cuda.py shim)")
    spec = (spec_vllm if args.which == "vllm" else spec_mamba)(src, t, home, args.arch, python_ok)
    nvcc_version = subprocess.run([nvcc, "--version"], capture_output=True, text=True).stdout.strip().splitlines()[-1]
    log(
        f"{args.which}: torch {t.version} (CUDA {t.cuda}), nvcc {nvcc_version} at {home}, sm_{args.arch}, "
        f"{args.jobs} jobs, {src} -> {out}"
    )

    units = spec["units"]
    if args.units:
        units = [u for u in units if any(s in str(u[1]) for s in args.units.split(","))]
    out.mkdir(parents=True, exist_ok=True)
    obj_dir = out / "obj"
    obj_dir.mkdir(exist_ok=True)
    target = out / spec["target"]
    cuda_lib = cudart_static_dir(home)
    link = (
        [cxx, "-shared", "-o", str(target)]
        + [str(obj_dir / (u[1].name + ".o")) for u in units]
        + [f"-L{d}" for d in t.libs]
        + [f"-Wl,-rpath,{d}" for d in t.libs]
        + spec["link_libs"]
        + [f"-L{cuda_lib}", "-lcudart_static", "-ldl", "-lrt", "-lpthread"]
    )
    commands = [
        [nvcc if kind == "nvcc" else cxx, "-c", str(path), "-o", str(obj_dir / (path.name + ".o"))] + flags
        for kind, path, flags in units
    ]
    sources = [
        f for d in (src, OWN) for f in d.rglob("*") if f.is_file() and f.suffix in (".cu", ".cuh", ".h", ".hpp", ".cpp")
    ]
    stamp_file = out / ".build-stamp.json"
    key = digest(sources + [Path(__file__).resolve()], [commands, link, nvcc_version, t.version, args.compile_only])
    if (
        not args.force
        and not args.compile_only
        and target.is_file()
        and stamp_file.is_file()
        and json.loads(stamp_file.read_text()).get("key") == key
    ):
        log(f"{target.name} is up to date (sources and flags unchanged): skipped ({time.perf_counter() - t0:.1f} s)")
        return 0
    stamp_file.unlink(missing_ok=True)

    failed = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        futures = {pool.submit(run, cmd, obj_dir / (u[1].name + ".log")): u for cmd, u in zip(commands, units)}
        for fut in concurrent.futures.as_completed(futures):
            u = futures[fut]
            rc, secs = fut.result()
            log(f"  {'ok  ' if rc == 0 else 'FAIL'} {shown(u[1], src)} ({u[0]}, {secs:.1f} s)")
            if rc != 0:
                failed.append(u)
    for u in failed:
        text = (obj_dir / (u[1].name + ".log")).read_text()
        log(f"--- {u[1].name} (last 40 lines of {obj_dir / (u[1].name + '.log')}):")
        print("\n".join(text.splitlines()[-40:]), flush=True)
    if failed:
        log(f"{len(failed)} unit(s) failed ({time.perf_counter() - t0:.1f} s)")
        return 1
    if args.compile_only:
        log(f"compiled {len(units)} unit(s), no link (--compile-only): {time.perf_counter() - t0:.1f} s")
        return 0
    rc, secs = run(link, obj_dir / "link.log")
    if rc != 0:
        print((obj_dir / "link.log").read_text()[-4000:], flush=True)
        log("link failed")
        return 1
    if spec.get("shim"):
        (out / spec["shim"]).write_text(SHIM)
    stamp_file.write_text(
        json.dumps(
            {
                "key": key,
                "target": target.name,
                "torch": t.version,
                "nvcc": nvcc_version,
                "built": time.strftime("%Y-%m-%d %H:%M:%S"),
            },
            indent=1,
        )
        + "\n"
    )
    log(
        f"built {target} ({target.stat().st_size / 2**20:.1f} MiB; link {secs:.1f} s; "
        f"total {time.perf_counter() - t0:.1f} s)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
