"""--dry-run: everything that needs no GPU, so the GPU run starts from code known to build.

Builds every cuda.coop and hand-written kernel for sm_90 with compile_kernel (exactly the
specialisation the GPU run launches: same dtypes, items per thread, block and grid),
builds the CUB C++ kernels with the local nvcc, and reads both cubins' resource usage.
Triton is not checked: it compiles only for an attached GPU.
"""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from . import cub_build
from .common import Stopwatch


def run(family, n: int, outdir: Path, only: str | None, sass: bool) -> list[dict]:
    import cuda.coop.numba_mlir as numba_coop
    from cuda.coop._cub import nvrtc

    cases = [c for c in family.cases() if only is None or re.search(only, c.kernel)]
    records: list[dict] = []
    build = None
    instances = family.cub_instances(cases)
    if instances and cub_build.find_nvcc():
        build = cub_build.start(family.CUB_SOURCE, instances, outdir / "cub_build")
    elif instances:
        records.append({"type": "build", "family": family.FAMILY, "impl": "cub_cpp", "error": "nvcc not found"})

    for case in cases:
        sample = np.zeros(16, dtype=case.dtype)  # only the array type matters to the build
        for impl in case.impls:
            if impl not in ("coop", "handwritten"):
                continue
            base = {"type": "dry_build", **case.describe(), "impl": impl, "grid": case.grid(n)}
            runs = nvrtc.stats["nvrtc_runs"]
            try:
                with Stopwatch() as sw:
                    built = numba_coop.compile_kernel(family.numba_kernel(impl, case),
                                                      family.compile_args(impl, case, sample),
                                                      block=case.threads, grid=case.grid(n), target=cub_build.ARCH)
            except Exception as exc:
                records.append({**base, "error": f"{type(exc).__name__}: {exc}"})
                print(f"{case.kernel} {impl}: FAILED {type(exc).__name__}: {str(exc)[:300]}", flush=True)
                continue
            usage = cub_build.res_usage(built.cubin).get(built.name) or {
                "registers": built.registers, "shared_bytes": built.shared_memory_bytes,
                "local_bytes": built.local_memory_bytes}
            records.append({**base, "seconds": sw.seconds, "nvrtc_runs": nvrtc.stats["nvrtc_runs"] - runs, **usage})
            print(f"{case.kernel:40s} {impl:11s} built in {sw.seconds:5.2f} s: {usage['registers']} regs, "
                  f"{usage['shared_bytes']} B shared, {usage['local_bytes']} B local", flush=True)
            if sass:
                _write(outdir, case.kernel, impl, cub_build.sass(built.cubin))

    if build is not None:
        try:
            where = build.wait()
        except Exception as exc:
            records.append({"type": "build", "family": family.FAMILY, "impl": "cub_cpp", "error": str(exc)[-4000:]})
            print(f"CUB build FAILED: {str(exc)[:3000]}", flush=True)
            return records
        version = cub_build.nvcc_version(build.command[0])
        symbols = [family.cub_symbol(c) for c in cases if "cub_cpp" in c.impls]
        missing = [s for s in symbols if s not in where or cub_build.symbols_present(where[s], [s])]
        records.append({"type": "build", "family": family.FAMILY, "impl": "cub_cpp", "seconds": build.seconds,
                        "kernels": len(symbols), "missing": missing, "nvcc": version,
                        "command": " ".join(build.command)})
        print(f"nvcc ({version}) built {len(symbols)} CUB kernels in {build.seconds:.1f} s with "
              f"{len(build.parts)} parallel runs; missing symbols: {missing or 'none'}", flush=True)
        usage = {k: v for cubin in build.cubins() for k, v in cub_build.res_usage(cubin).items()}
        for case in cases:
            symbol = family.cub_symbol(case)
            if "cub_cpp" in case.impls and symbol in usage:
                records.append({"type": "dry_build", **case.describe(), "impl": "cub_cpp", **usage[symbol]})
                if sass:
                    _write(outdir, case.kernel, "cub_cpp", cub_build.sass(where[symbol], symbol))
    return records


def _write(outdir: Path, kernel: str, impl: str, text: str) -> None:
    path = outdir / "sass" / f"{kernel}.{impl}.sass"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
