"""One new process of the compile-time benchmark (run by compile_time.py; needs no GPU).

    python -m benchmarks.compile_child one|four [--target sm_90]

Prints one line ``BENCH_JSON {...}``. The order of compiles is what makes the numbers
mean something:

1. a small plain kernel absorbs the process's one-time numba-cuda-mlir start-up, and a
   first instance of the plain equivalent the typing paths it shares with the baseline;
2. the plain numba-cuda-mlir equivalent of the kernel (same accesses, no cuda.coop) is the
   baseline, "numba-cuda-mlir's own compile of the kernel";
3. the cuda.coop kernel: cold or warm_disk, depending on the XDG_CACHE_HOME it was given;
4. warm_process: the same cuda.coop kernel again in this process, once for a new grid
   (numba-cuda-mlir specialises cooperative kernels on the launch configuration, so a new
   input size recompiles) and once as a new kernel object with the same body (a module
   re-imported or a kernel factory called again); the providers come from the in-process
   memo, so this is numba-cuda-mlir's work plus cuda.coop's planning.
5. warm_process, new specialisation: the same kernel for other dtypes (new CUB providers, one
   NVRTC run), first right away, then once the precompiled header that cuda.coop makes in the
   background after the first build is ready (the wait is reported as pch_wait_seconds).
"""
from __future__ import annotations

import time

_T0 = time.perf_counter()

import argparse  # noqa: E402
import json  # noqa: E402
from collections import defaultdict  # noqa: E402

import numpy as np  # noqa: E402
from numba_cuda_mlir import cuda  # noqa: E402,I001  (the compiler first, then cuda.coop)
import cuda.coop.numba_mlir as numba_coop  # noqa: E402
from cuda import coop  # noqa: E402
from numba_cuda_mlir import cuda  # noqa: E402,F811  (keep the name `cuda` bound to numba's)

IMPORT_SECONDS = time.perf_counter() - _T0
THREADS, K, GRID = 256, 4, 1024
TIMERS: dict[str, float] = defaultdict(float)


def _timed(owner: object, name: str, bucket: str) -> None:
    """Accumulate the time spent in ``owner.name`` (private hooks: a missing one is skipped)."""
    original = getattr(owner, name, None)
    if original is None:
        return

    def wrapper(*args, **kwargs):
        start = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            TIMERS[bucket] += time.perf_counter() - start

    setattr(owner, name, wrapper)


def install_timers() -> None:
    from cuda.coop._cub import nvrtc
    from cuda.coop.numba_mlir import _planner

    _timed(_planner.CoopPlanner, "run", "planner")  # planning + provider build (cache or NVRTC)
    _timed(nvrtc, "build", "provider_build")  # toolchain, cache lookup, NVRTC, scratch-size link
    try:
        from numba_cuda_mlir import mlir_optimization
        from numba_cuda_mlir.numba_cuda.cudadrv import driver

        _timed(driver._Linker, "complete", "final_link")  # nvJitLink LTO of kernel + CUB, ptxas
        for fn in ("_call_llvm70_capi", "_compile_to_ltoir", "_compile_to_ptx"):
            _timed(mlir_optimization, fn, "nvvm")  # libNVVM: kernel to LTO-IR
    except ImportError:
        pass


def one_pair():
    @cuda.jit
    def one_pair(src, dst, items_per_thread):
        block = coop.this_block()
        base = np.int64(cuda.blockIdx.x) * cuda.blockDim.x * items_per_thread
        items = coop.ThreadData(items_per_thread)
        coop.load(block, src, items, algorithm="transpose", offset=base)
        coop.store(block, dst, items, algorithm="transpose", offset=base)

    return one_pair


def four_pairs():
    """Four Load/Store pairs that differ in dtype, algorithm and group: eight CUB providers, one NVRTC run."""
    @cuda.jit
    def four_pairs(a, b, c, d, e, f, g, h, items_per_thread):
        block = coop.this_block()
        warp = coop.this_warp()
        base = np.int64(cuda.blockIdx.x) * cuda.blockDim.x * items_per_thread
        x = coop.ThreadData(items_per_thread)
        coop.load(block, a, x, algorithm="transpose", offset=base)
        coop.store(block, b, x, algorithm="transpose", offset=base)
        y = coop.ThreadData(items_per_thread)
        coop.load(block, c, y, algorithm="warp_transpose", offset=base)
        coop.store(block, d, y, algorithm="warp_transpose", offset=base)
        z = coop.ThreadData(items_per_thread)
        coop.load(block, e, z, algorithm="vectorize", offset=base)
        coop.store(block, f, z, algorithm="vectorize", offset=base)
        w = coop.ThreadData(items_per_thread)
        coop.load(warp, g, w, algorithm="striped", offset=base)
        coop.store(warp, h, w, algorithm="striped", offset=base)

    return four_pairs


def plain_one():
    @cuda.jit
    def plain_one(src, dst, items_per_thread):
        base = (np.int64(cuda.blockIdx.x) * cuda.blockDim.x + cuda.threadIdx.x) * K
        items = cuda.local.array(K, np.int32)
        for i in range(K):
            items[i] = src[base + i]
        for i in range(K):
            dst[base + i] = items[i]

    return plain_one


def plain_four():
    @cuda.jit
    def plain_four(a, b, c, d, e, f, g, h, items_per_thread):
        base = (np.int64(cuda.blockIdx.x) * cuda.blockDim.x + cuda.threadIdx.x) * K
        x = cuda.local.array(K, np.int32)
        y = cuda.local.array(K, np.float32)
        z = cuda.local.array(K, np.float64)
        w = cuda.local.array(K, np.int64)
        for i in range(K):
            x[i] = a[base + i]
            y[i] = c[base + i]
            z[i] = e[base + i]
            w[i] = g[base + i]
        for i in range(K):
            b[base + i] = x[i]
            d[base + i] = y[i]
            f[base + i] = z[i]
            h[base + i] = w[i]

    return plain_four


def warmup_kernel():
    @cuda.jit
    def warmup(src, dst):
        i = cuda.grid(1)
        if i < src.size:
            dst[i] = src[i] + 1

    return warmup


DTYPES = (np.int32, np.float32, np.float64, np.int64)


def _args(kernel: str, shift: int = 0) -> tuple:
    """The kernel's arguments; ``shift`` rotates the dtypes (a new specialisation of the same kernel)."""
    n = THREADS * K * 2
    dtypes = DTYPES[shift:] + DTYPES[:shift]
    if kernel == "one":
        x = np.zeros(n, dtypes[0])
        return (x, x, K)
    arrays = [np.zeros(n, t) for t in dtypes]
    return tuple(a for arr in arrays for a in (arr, arr)) + (K,)


def measure(kernel, args: tuple, grid: int = GRID) -> dict:
    from cuda.coop._cub import nvrtc

    before = dict(nvrtc.stats)
    TIMERS.clear()
    start = time.perf_counter()
    numba_coop.compile_kernel(kernel, args, block=THREADS, grid=grid, target=ARGS.target)
    seconds = time.perf_counter() - start
    out = {"seconds": seconds, "nvrtc_runs": nvrtc.stats["nvrtc_runs"] - before["nvrtc_runs"],
           "nvrtc_seconds": nvrtc.stats["nvrtc_seconds"] - before["nvrtc_seconds"],
           "scratch_link_seconds": nvrtc.stats["link_seconds"] - before["link_seconds"],
           "pch_used": nvrtc.stats.get("pch_used", 0) - before.get("pch_used", 0)}
    out.update({f"{k}_seconds": v for k, v in TIMERS.items()})
    # numba-cuda-mlir's share: everything except cuda.coop's planner and the final link.
    out["numba_seconds"] = seconds - TIMERS.get("planner", 0.0) - TIMERS.get("final_link", 0.0)
    return out


def main() -> None:
    install_timers()
    args = _args(ARGS.kernel)
    coop_factory, plain_factory = {"one": (one_pair, plain_one), "four": (four_pairs, plain_four)}[ARGS.kernel]
    # Warm-up: numba-cuda-mlir's one-time start-up, then the typing and lowering paths the
    # plain kernel uses (a separate instance, so the baseline below still compiles from scratch).
    start = time.perf_counter()
    numba_coop.compile_kernel(warmup_kernel(), args[:2], block=THREADS, grid=GRID, target=ARGS.target)
    init_seconds = time.perf_counter() - start
    numba_coop.compile_kernel(plain_factory(), args, block=THREADS, grid=GRID // 2, target=ARGS.target)
    plain = plain_factory()
    baseline = measure(plain, args)
    kernel = coop_factory()
    first = measure(kernel, args)
    baseline_new_grid = measure(plain, args, GRID * 2)
    new_grid = measure(kernel, args, GRID * 2)
    new_kernel = measure(coop_factory(), args)
    baseline_new_dtype = measure(plain, _args(ARGS.kernel, 1))
    new_dtype = measure(kernel, _args(ARGS.kernel, 1))
    from cuda.coop._cub import pch

    start = time.perf_counter()
    pch.wait_for_pch()
    pch_wait = time.perf_counter() - start
    baseline_new_dtype_pch = measure(plain, _args(ARGS.kernel, 2))
    new_dtype_pch = measure(kernel, _args(ARGS.kernel, 2))
    print("BENCH_JSON " + json.dumps({
        "kernel": ARGS.kernel, "import_seconds": IMPORT_SECONDS, "init_seconds": init_seconds,
        "baseline": baseline, "first": first, "baseline_new_grid": baseline_new_grid,
        "new_grid": new_grid, "new_kernel": new_kernel, "baseline_new_dtype": baseline_new_dtype,
        "new_dtype": new_dtype, "pch_wait_seconds": pch_wait, "baseline_new_dtype_pch": baseline_new_dtype_pch,
        "new_dtype_pch": new_dtype_pch,
    }), flush=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("kernel", choices=("one", "four"))
    parser.add_argument("--target", default="sm_90")
    ARGS = parser.parse_args()
    main()
