"""NVRTC options that might shorten a cold build (issue 19, item 4): the translation unit of a kernel with one
load/store pair compiled as cuda.coop compiles it, and with each option added, in one process, alternating.

    python -m benchmarks.nvrtc_levers [--rounds R]

Prints one line per variant: the median NVRTC seconds, or why the variant does not build. No GPU needed.
"""
from __future__ import annotations

import argparse
import statistics
import time

VARIANTS = {
    "as built": [],
    "-default-device": ["-default-device"],
    "-minimal": ["-minimal"],  # NVRTC leaves out the CUDA runtime's declarations
}


def _translation_unit() -> str:
    import numpy as np
    from numba_cuda_mlir import cuda

    import cuda.coop.numba_mlir as numba_coop
    from cuda import coop

    @cuda.jit
    def copy_tile(src, dst):
        block = coop.this_block()
        items = coop.ThreadData(4)
        coop.load(block, src, items, algorithm="transpose")
        coop.store(block, dst, items, algorithm="transpose")

    data = np.arange(512, dtype=np.int32)
    return numba_coop.compile_kernel(copy_tile, (data, data), block=128).cpp_source


def _compile(text: str, options: list[str]) -> tuple[float, str]:
    from cuda.bindings import nvrtc

    _, program = nvrtc.nvrtcCreateProgram(text.encode(), b"cuda_coop.cu", 0, [], [])
    try:
        encoded = [o.encode() for o in options]
        start = time.perf_counter()
        (status,) = nvrtc.nvrtcCompileProgram(program, len(encoded), encoded)
        seconds = time.perf_counter() - start
        if int(status) == 0:
            return seconds, ""
        _, size = nvrtc.nvrtcGetProgramLogSize(program)
        log = b" " * size
        nvrtc.nvrtcGetProgramLog(program, log)
        first = next((line for line in log.decode(errors="replace").splitlines() if "error" in line), "failed")
        return seconds, first.strip()
    finally:
        nvrtc.nvrtcDestroyProgram(program)


def main(argv: list[str] | None = None) -> int:
    from cuda.coop._cub import nvrtc as coop_nvrtc, toolchain

    parser = argparse.ArgumentParser(prog="python -m benchmarks.nvrtc_levers")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)
    include, cuda_include, version = toolchain.locate()
    base = [*coop_nvrtc.OPTIONS, "-arch=sm_90", f"-I{include}", *([f"-I{cuda_include}"] if cuda_include else [])]
    text = _translation_unit()
    _compile(text, base)  # NVRTC's own first-use cost stays out of the rows
    seconds: dict[str, list[float]] = {name: [] for name in VARIANTS}
    errors: dict[str, str] = {}
    for _ in range(args.rounds):
        for name, extra in VARIANTS.items():
            took, error = _compile(text, base + extra)
            seconds[name].append(took)
            if error:
                errors[name] = error
    print(f"NVRTC {version[0]}.{version[1]}, one load/store pair, {args.rounds} rounds:")
    for name in VARIANTS:
        outcome = f"does not build: {errors[name]}" if name in errors else "builds"
        print(f"- {name}: {statistics.median(seconds[name]):.3f} s median; {outcome}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
