"""One process of the launch-overhead table (run by launch.py; issue 12, item 4).

    python -m benchmarks.launch_child coop|plain [--dry] [--batches B] [--launches L]

``coop`` imports cuda.coop (its planner is registered, so numba-cuda-mlir takes its planner-aware launch path for
every kernel) and measures the plain kernel, the cuda.coop kernels with 1, 4 and 8 calls, a cuda.coop kernel
specialised on an integer argument (README.md's shape) with its plain twin, and a CuPy RawKernel; ``plain`` never
imports cuda.coop and measures the plain kernels and the RawKernel. Every kernel is one block of 256 threads over
two int32 arrays of 2048 items, so the host's work per launch is what differs.

A cell is the median over B batches of (wall time of L back-to-back launches, then a device synchronisation) / L:
the GPU runs each tiny kernel in a few microseconds, far less than the host takes to launch it, so this is the
host's cost per launch. ``device_us`` (GPU time per launch with the queue kept full) shows that. The argument kinds
are the ways a program hands arrays to a numba-cuda-mlir kernel; see ``launch.KINDS``.

Prints one line ``BENCH_JSON {...}`` at the end, and ``BENCH_ROW {...}`` after each cell. ``--dry`` (no GPU)
builds the kernels for sm_90 and checks the imports only.
"""
from __future__ import annotations

import time

_T0 = time.perf_counter()

import argparse  # noqa: E402
import json  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import traceback  # noqa: E402

import numpy as np  # noqa: E402
from numba_cuda_mlir import cuda  # noqa: E402

from .launch import KINDS  # noqa: E402,F401  (the argument kinds measured here)

THREADS = 256
N = 2048  # >= 4 * 256 (the 4-item tile) + 2 + 256 (the 8-call kernel's extra outputs)
TILE = 4 * THREADS



def plain_kernels() -> dict:
    @cuda.jit
    def plain(src, dst):
        t = cuda.threadIdx.x
        dst[t] = src[t] + 1

    @cuda.jit
    def plain_arg(src, dst, k):
        t = cuda.threadIdx.x
        dst[t] = src[t] + k

    return {"plain": plain, "plain_arg": plain_arg}


def coop_kernels() -> dict:
    """cuda.coop kernels making 1, 4 and 8 calls (only defined where cuda.coop is imported)."""
    from cuda import coop

    @cuda.jit
    def coop_1(src, dst):
        t = cuda.threadIdx.x
        dst[t] = coop.sum(coop.this_block(), src[t])  # broadcast: every thread gets the block's total

    @cuda.jit
    def coop_4(src, dst):
        block = coop.this_block()
        items = coop.ThreadData(4)
        coop.load(block, src, items)
        scanned = coop.exclusive_sum(block, items)
        coop.store(block, dst, scanned)
        total = coop.sum(block, items)
        if cuda.threadIdx.x == 0:
            dst[TILE] = total

    @cuda.jit
    def coop_8(src, dst):
        block = coop.this_block()
        t = cuda.threadIdx.x
        items = coop.ThreadData(4)
        coop.load(block, src, items, algorithm="striped")
        blocked = coop.exchange(block, items, mode="striped_to_blocked")
        scanned = coop.exclusive_sum(block, blocked)
        striped = coop.exchange(block, scanned, mode="blocked_to_striped")
        coop.store(block, dst, striped, algorithm="striped")
        total = coop.sum(block, blocked)
        top = coop.reduce(block, blocked, binary_op="max")
        running = coop.inclusive_sum(block, src[t])
        dst[TILE + 2 + t] = running
        if t == 0:
            dst[TILE] = total
            dst[TILE + 1] = top

    @cuda.jit
    def coop_literal(src, dst, items_per_thread):  # README.md's shape: specialised on an integer argument
        block = coop.this_block()
        items = coop.ThreadData(items_per_thread)
        coop.load(block, src, items)
        coop.store(block, dst, items)

    return {"coop_1": coop_1, "coop_4": coop_4, "coop_8": coop_8, "coop_literal": coop_literal}


CALLS = {"plain": 0, "plain_arg": 0, "coop_1": 1, "coop_4": 4, "coop_8": 8, "coop_literal": 2}
ARGUMENT = 4  # the integer argument of plain_arg and coop_literal (items per thread of coop_literal)


def expected(kernel: str, src: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(positions, values) a launch of ``kernel`` must have written (NumPy oracle; small values, no overflow)."""
    if kernel == "plain":
        return np.arange(THREADS), src[:THREADS] + 1
    if kernel == "plain_arg":
        return np.arange(THREADS), src[:THREADS] + ARGUMENT
    if kernel == "coop_literal":
        return np.arange(TILE), src[:TILE]
    if kernel == "coop_1":
        return np.arange(THREADS), np.full(THREADS, src[:THREADS].sum())
    tile = src[:TILE].astype(np.int64)
    scan = np.cumsum(tile) - tile
    if kernel == "coop_4":
        return np.arange(TILE + 1), np.append(scan, tile.sum())
    running = np.cumsum(src[:THREADS].astype(np.int64))
    return np.arange(TILE + 2 + THREADS), np.concatenate([scan, [tile.sum(), tile.max()], running])


RAW_SOURCE = r"""
extern "C" __global__ void plain_raw(const int* src, int* dst) {
  const int t = threadIdx.x;
  dst[t] = src[t] + 1;
}
"""

SPIN_SOURCE = r"""
extern "C" __global__ void launch_spin(long long cycles) {
  long long start = clock64();
  while (clock64() - start < cycles) {}
}
"""


class Timer:
    def __init__(self, batches: int, launches: int, sync):
        self.batches, self.launches, self.sync = batches, launches, sync

    def measure(self, launch) -> dict:
        for _ in range(max(10, self.launches // 5)):  # warm: caches of the dispatcher and the marshaller
            launch()
        self.sync()
        walls, hosts = [], []
        for _ in range(self.batches):
            self.sync()
            t0 = time.perf_counter()
            for _ in range(self.launches):
                launch()
            t1 = time.perf_counter()
            self.sync()
            t2 = time.perf_counter()
            hosts.append((t1 - t0) / self.launches * 1e6)
            walls.append((t2 - t0) / self.launches * 1e6)
        return {"wall_us": statistics.median(walls), "wall_us_min": min(walls), "host_us": statistics.median(hosts)}


def device_us(cp, launch, host_us: float, launches: int) -> float | None:
    """GPU time per launch with the queue kept full: a spin kernel longer than the host's enqueueing of the batch
    holds the GPU, so the batch behind it runs back to back; CUDA events around the batch."""
    spin = cp.RawKernel(SPIN_SOURCE, "launch_spin")
    start, end = cp.cuda.Event(), cp.cuda.Event()
    samples = []
    for _ in range(5):
        cp.cuda.runtime.deviceSynchronize()
        spin((1,), (1,), (cp.int64(int((2 * host_us * launches * 1e-3 + 1.0) * 2e6)),))  # ms at up to 2 GHz
        start.record()
        for _ in range(launches):
            launch()
        end.record()
        end.synchronize()
        samples.append(cp.cuda.get_elapsed_time(start, end) * 1e3 / launches)
    return statistics.median(samples)


def ready_launch_us(kernel, configured, args) -> float | None:
    """numba-cuda-mlir's per-launch bookkeeping on its planner-aware path (``_get_ready_launch``), in microseconds
    per call: private API, a diagnostic only (None where it is not there)."""
    try:
        from numba_cuda_mlir.numba_cuda.typing.typeof import typeof

        argtypes = kernel._literalize_argtypes(tuple(typeof(a) for a in args), args)  # as _launch does
        call = (argtypes, configured._available_launch_config, configured._launch_config,
                configured._kernel_dispatcher, configured._launch_config_generation)
        if kernel._get_ready_launch(*call) is None:
            return None
        reps = 20000
        t0 = time.perf_counter()
        for _ in range(reps):
            kernel._get_ready_launch(*call)
        return (time.perf_counter() - t0) / reps * 1e6
    except Exception:
        return None


def profile(launch, launches: int = 2000, top: int = 12) -> list[list]:
    """Where a launch's host time goes: [function, total µs per launch] of the top functions (cProfile)."""
    import cProfile
    import pstats

    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(launches):
        launch()
    profiler.disable()
    stats = pstats.Stats(profiler).stats  # {(file, line, name): (cc, nc, tottime, cumtime, callers)}
    rows = sorted(((f"{k[2]} ({k[0].rsplit('/', 1)[-1]}:{k[1]})", v[2] / launches * 1e6) for k, v in stats.items()),
                  key=lambda r: -r[1])
    return [[name, round(us, 3)] for name, us in rows[:top]]


def measure(mode: str, batches: int, launches: int) -> dict:
    import cupy as cp

    try:
        import torch
    except ImportError:
        torch = None
    from numba_cuda_mlir.numba_cuda.core import config as numba_config

    kernels = plain_kernels()
    if mode == "coop":
        kernels.update(coop_kernels())
    host = (np.arange(N, dtype=np.int32) * 7) % 100  # small values: no int32 overflow in the oracles
    d_src, d_dst = cuda.to_device(host), cuda.device_array(N, np.int32)
    c_src, c_dst = cp.asarray(host), cp.zeros(N, dtype=cp.int32)
    t_src = t_dst = None
    if torch is not None and torch.cuda.is_available():
        t_src, t_dst = torch.from_dlpack(c_src), torch.from_dlpack(c_dst)
    sync = cp.cuda.runtime.deviceSynchronize
    timer = Timer(batches, launches, sync)
    rows: list[dict] = []
    extra: dict = {"ready_launch_us": {}, "profile": {}}

    def cell(kernel_name: str, kind: str, launch, *, fatal: bool) -> dict:
        row = {"kernel": kernel_name, "calls": CALLS.get(kernel_name), "args": kind}
        try:
            row.update(timer.measure(launch))
        except Exception as exc:
            text = f"{type(exc).__name__}: {str(exc).strip().splitlines()[0][:300] if str(exc).strip() else ''}"
            row["error" if fatal else "failed"] = text
            print(f"{kernel_name} {kind}: {text}", file=sys.stderr, flush=True)
            traceback.print_exc()
        rows.append(row)
        print("BENCH_ROW " + json.dumps(row), flush=True)  # kept by the parent should this process die later
        return row

    def unmemoised(name: str, kernel) -> None:
        """Diagnostic: the same launch without cuda.coop's memo of literal argument types (numba-cuda-mlir's own
        path), so the table shows what the memo saves."""
        from numba_cuda_mlir.descriptor import MLIRDispatcher

        memo = MLIRDispatcher.__dict__.get("_literal_type_for_value")
        inner = getattr(getattr(memo, "__func__", None), "__wrapped__", None)  # set by cuda.coop's _patches
        if inner is None:
            return
        MLIRDispatcher._literal_type_for_value = classmethod(inner)
        try:
            cell(name, "numba_unmemoised", lambda k=kernel: k[1, THREADS](d_src, d_dst, ARGUMENT), fatal=False)
        finally:
            MLIRDispatcher._literal_type_for_value = memo

    as_array = cuda.as_cuda_array
    w_src, w_dst = as_array(c_src), as_array(c_dst)  # the "wrap once" views
    if t_src is not None:
        wt_src, wt_dst = as_array(t_src), as_array(t_dst)
    for name, kernel in kernels.items():
        more = (ARGUMENT,) if name in ("plain_arg", "coop_literal") else ()
        # First launch: compiles (cuda.coop: for this launch shape); then the output is checked once.
        try:
            kernel[1, THREADS](d_src, d_dst, *more)
            sync()
            where, want = expected(name, host)
            ok = bool(np.array_equal(d_dst.copy_to_host()[where], want))
        except Exception as exc:
            rows.append({"kernel": name, "calls": CALLS[name], "args": "numba",
                         "error": f"first launch: {type(exc).__name__}: {str(exc)[:500]}"})
            traceback.print_exc()
            continue
        base = cell(name, "numba", lambda k=kernel, m=more: k[1, THREADS](d_src, d_dst, *m), fatal=True)
        base["verified"] = ok
        configured = kernel[1, THREADS]
        configured(d_src, d_dst, *more)
        cell(name, "numba_configured", lambda c=configured, m=more: c(d_src, d_dst, *m), fatal=True)
        if "wall_us" in base:
            base["device_us"] = device_us(cp, lambda k=kernel, m=more: k[1, THREADS](d_src, d_dst, *m),
                                          base["host_us"], launches)
            extra["ready_launch_us"][name] = ready_launch_us(kernel, configured, (d_src, d_dst, *more))
            if name in ("plain", "coop_1", "coop_literal"):
                extra["profile"][name] = profile(lambda c=configured, m=more: c(d_src, d_dst, *m))
        if name == "coop_literal":
            unmemoised(name, kernel)
        cell(name, "cupy", lambda k=kernel, m=more: k[1, THREADS](c_src, c_dst, *m), fatal=False)
        previous = numba_config.CUDA_ARRAY_INTERFACE_SYNC
        numba_config.CUDA_ARRAY_INTERFACE_SYNC = 0
        try:
            cell(name, "cupy_nosync", lambda k=kernel, m=more: k[1, THREADS](c_src, c_dst, *m), fatal=False)
        finally:
            numba_config.CUDA_ARRAY_INTERFACE_SYNC = previous
        cell(name, "cupy_wrap_once", lambda k=kernel, m=more: k[1, THREADS](w_src, w_dst, *m), fatal=False)
        cell(name, "cupy_wrap_each", lambda k=kernel, m=more: k[1, THREADS](as_array(c_src), as_array(c_dst), *m),
             fatal=False)
        cell(name, "cupy_wrap_each_nosync",
             lambda k=kernel, m=more: k[1, THREADS](as_array(c_src, sync=False), as_array(c_dst, sync=False), *m),
             fatal=False)
        if t_src is not None:
            cell(name, "torch", lambda k=kernel, m=more: k[1, THREADS](t_src, t_dst, *m), fatal=False)
            cell(name, "torch_wrap_once", lambda k=kernel, m=more: k[1, THREADS](wt_src, wt_dst, *m), fatal=False)
            cell(name, "torch_wrap_each",
                 lambda k=kernel, m=more: k[1, THREADS](as_array(t_src), as_array(t_dst), *m), fatal=False)

    raw = cp.RawKernel(RAW_SOURCE, "plain_raw")
    row = cell("cupy_rawkernel", "cupy", lambda: raw((1,), (THREADS,), (c_src, c_dst)), fatal=True)
    row["calls"] = None
    if "wall_us" in row:
        row["device_us"] = device_us(cp, lambda: raw((1,), (THREADS,), (c_src, c_dst)), row["host_us"], launches)
        where, want = expected("plain", host)
        row["verified"] = bool(np.array_equal(cp.asnumpy(c_dst)[where], want))
    return {"rows": rows, **extra}


def dry(mode: str) -> dict:
    """No GPU: build the kernels for sm_90 (cuda.coop's compile_kernel; numba-cuda-mlir's compile_ptx for the plain
    kernel of the plain process) and report the imports."""
    rows = []
    sample = np.zeros(N, dtype=np.int32)
    if mode == "coop":
        import cuda.coop.numba_mlir as numba_coop

        kernels = {**plain_kernels(), **coop_kernels()}
        for name, kernel in kernels.items():
            start = time.perf_counter()
            args = (sample, sample) + ((ARGUMENT,) if name in ("plain_arg", "coop_literal") else ())
            try:
                built = numba_coop.compile_kernel(kernel, args, block=THREADS, grid=1, target="sm_90")
                rows.append({"kernel": name, "calls": CALLS[name], "built_seconds": time.perf_counter() - start,
                             "registers": built.registers, "shared_bytes": built.shared_memory_bytes})
            except Exception as exc:
                rows.append({"kernel": name, "calls": CALLS[name], "error": f"{type(exc).__name__}: {exc}"[:500]})
    else:
        from numba_cuda_mlir import tools
        from numba_cuda_mlir.numba_cuda import types

        tools._cached_cc = (9, 0)  # no driver to ask: the dry run's only target
        for name, kernel in plain_kernels().items():
            signature = (types.int32[::1], types.int32[::1]) + ((types.int64,) if name == "plain_arg" else ())
            start = time.perf_counter()
            try:
                cuda.compile_ptx(kernel.py_func, signature, cc=(9, 0))
                rows.append({"kernel": name, "calls": 0, "built_seconds": time.perf_counter() - start})
            except Exception as exc:
                rows.append({"kernel": name, "calls": 0, "error": f"{type(exc).__name__}: {exc}"[:500]})
    return {"rows": rows}


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.launch_child")
    p.add_argument("mode", choices=("coop", "plain"))
    p.add_argument("--dry", action="store_true")
    p.add_argument("--batches", type=int, default=10)
    p.add_argument("--launches", type=int, default=100)
    args = p.parse_args(argv)
    if args.mode == "coop":
        import cuda.coop.numba_mlir  # noqa: F401  (registers the planner)
    from numba_cuda_mlir._whole_function_planners import _planner_registry

    out = {"mode": args.mode, "import_seconds": time.perf_counter() - _T0,
           "coop_imported": "cuda.coop" in sys.modules, "planners_registered": _planner_registry.has_planners}
    try:
        out.update(dry(args.mode) if args.dry else measure(args.mode, args.batches, args.launches))
    except Exception:
        out["error"] = traceback.format_exc()[-3000:]
    out["coop_imported_at_end"] = "cuda.coop" in sys.modules
    print("BENCH_JSON " + json.dumps(out), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
