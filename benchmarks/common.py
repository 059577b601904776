"""What every benchmark family shares: the case record, device buffers, timing and checks.

GPU packages (cupy, torch) are imported inside functions so that ``--dry-run`` works on
a machine that has neither a GPU nor those packages.
"""
from __future__ import annotations

import functools
import statistics
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

BENCH_DIR = Path(__file__).resolve().parent
ROOT = BENCH_DIR.parent
IMPLS = ("coop", "cub_cpp", "handwritten", "triton", "copy", "read")
# Operations that read n items and write almost nothing (one total per tile, warp or batch): compared
# with the read-only ceiling (read_ceiling.py), not the copy's, which also writes n items.
READ_BOUND = ("sum_atomic", "sum_partials", "sum", "reduce_batched")


@dataclass(frozen=True)
class Case:
    """One tile kernel at one shape, and the implementations that run it."""

    family: str
    kernel: str  # unique name, also the C++ symbol suffix
    group: str  # "block", "warp" or "" (shape-level cases such as Triton's)
    algorithm: str
    threads: int
    items_per_thread: int
    dtype: str
    impls: tuple[str, ...]
    variant: str = ""  # which hand-written kernel, for example
    operation: str = "copy"  # what the tile kernel computes: one benchmark per operation, group and shape
    io: str = ""  # the load/store algorithm around a collective, where a family varies it

    @property
    def tile(self) -> int:
        return self.threads * self.items_per_thread

    def grid(self, n: int) -> int:
        return n // self.tile

    def describe(self) -> dict:
        return {"family": self.family, "kernel": self.kernel, "group": self.group, "algorithm": self.algorithm,
                "threads": self.threads, "items_per_thread": self.items_per_thread, "dtype": self.dtype,
                "operation": self.operation, "io": self.io}


@dataclass
class Buffers:
    """One input and one output of ``n`` elements, with the views each framework launches with."""

    dtype: str
    n: int
    src: object  # cupy arrays
    dst: object
    views: dict = field(default_factory=dict)

    def numba(self) -> tuple:
        # Wrap once: numba-cuda-mlir synchronises the exporting stream on every launch
        # that receives a foreign __cuda_array_interface__ object (NUMBA_CUDA_ARRAY_INTERFACE_SYNC),
        # which would put a host round trip into every timed launch. DeviceNDArrays skip that.
        if "numba" not in self.views:
            from numba_cuda_mlir import cuda

            self.views["numba"] = (cuda.as_cuda_array(self.src), cuda.as_cuda_array(self.dst))
        return self.views["numba"]

    def torch(self) -> tuple:
        if "torch" not in self.views:
            import torch

            self.views["torch"] = (torch.from_dlpack(self.src), torch.from_dlpack(self.dst))
        return self.views["torch"]

    @property
    def nbytes(self) -> int:
        return self.src.nbytes


def make_buffers(dtype: str, n: int, seed: int) -> Buffers:
    """Random input (never an all-zero array that a broken kernel could match) and an output."""
    import cupy as cp

    rs = cp.random.RandomState(seed)
    if dtype.startswith("float"):
        src = (rs.standard_normal(n, dtype=cp.float64) * 1000).astype(dtype)
    else:
        info = cp.iinfo(dtype)
        src = rs.randint(info.min, info.max, size=n, dtype=cp.int64).astype(dtype)
    dst = cp.empty_like(src)
    cp.cuda.runtime.deviceSynchronize()
    return Buffers(dtype, n, src, dst)


def _bits(array):
    """Bit-exact view: float outputs must match the input bit for bit, NaN payloads included."""
    return array.view(f"u{array.dtype.itemsize}")


def poison(buffers: Buffers) -> None:
    _bits(buffers.dst).fill(0x5A5A5A5A5A5A5A5A & ((1 << (8 * buffers.dst.dtype.itemsize)) - 1))


def outputs_equal(buffers: Buffers) -> bool:
    import cupy as cp

    return bool(cp.array_equal(_bits(buffers.dst), _bits(buffers.src)))


SPIN_MS = 2.0  # the shortest spin ahead of a timed batch (time_launches)

@dataclass
class Timing:
    batches_ms: list[float]  # per-launch time of each batch
    launches: int
    host_us: float  # median host time to enqueue one launch
    spin_ms: float = SPIN_MS  # the spin each batch waited behind (longer where the host's enqueue needed it)


_SPIN = r"""
extern "C" __global__ void bench_spin(long long cycles) {
  long long start = clock64();
  while (clock64() - start < cycles) {}
}
"""


@functools.lru_cache(maxsize=None)
def _spin_kernel():
    import cupy as cp

    return cp.RawKernel(_SPIN, "bench_spin")


def spin_gpu(ms: float) -> None:
    """Keep the GPU busy for about ``ms`` (at up to 2 GHz), so that the batch queued behind it
    runs back to back however slowly the host enqueues it."""
    import cupy as cp

    _spin_kernel()((1,), (1,), (cp.int64(int(ms * 2e6)),))


def hidden_behind_spin(measure: Callable[[float], tuple[float, float]], spin_ms: float = SPIN_MS,
                       retries: int = 4) -> tuple[float, float, float, bool]:
    """Run ``measure(spin_ms)`` -> (GPU milliseconds, host milliseconds spent enqueueing behind the spin) until the
    host's enqueue took at most half the spin (so the GPU never waited for the host and the events timed only the
    GPU), doubling the spin each time it did not. A call that synchronises waits out any spin (its host time grows
    with the spin): then no spin hides its host cost, and the doubling stops at once. (GPU ms, host ms, the spin
    used, whether the call synchronises); after ``retries`` doublings the last measurement stands, and
    ``Timing.spin_ms`` and ``host_us`` still show it (workloads/report.host_bound)."""
    previous_host_ms = None
    for attempt in range(retries + 1):
        gpu_ms, host_ms = measure(spin_ms)
        if host_ms <= spin_ms / 2 or attempt == retries:
            return gpu_ms, host_ms, spin_ms, False
        if previous_host_ms is not None and host_ms - previous_host_ms >= spin_ms / 4:
            return gpu_ms, host_ms, spin_ms, True  # the host waited for the longer spin: it synchronises
        previous_host_ms = host_ms
        spin_ms *= 2
    raise AssertionError("unreachable")


def time_launches(fn: Callable[[], None], warmup: int, reps: int, inner: int) -> Timing:
    """Median per-launch time from CUDA events around batches of ``inner`` back-to-back launches.

    Every launcher in the benchmark goes to the legacy default stream (numba-cuda-mlir,
    cupy and torch all default to it), so the events order with the kernels. A spin
    kernel ahead of each batch hides the host's launch overhead (numba-cuda-mlir's
    dispatch costs tens of microseconds, and now and then several hundred): a batch whose
    enqueue took more than half the spin is timed again behind a spin twice as long
    (``hidden_behind_spin``), so a slow host never shows as GPU time; ``host_us`` reports the
    host's cost. The inputs are far larger than L2, so no cache flush is needed.
    """
    import cupy as cp

    for _ in range(warmup):
        fn()
    cp.cuda.runtime.deviceSynchronize()
    start, end = cp.cuda.Event(), cp.cuda.Event()

    def batch(spin_ms: float) -> tuple[float, float]:
        spin_gpu(spin_ms)
        start.record()
        t0 = time.perf_counter()
        for _ in range(inner):
            fn()
        host_ms = (time.perf_counter() - t0) * 1e3
        end.record()
        end.synchronize()
        return cp.cuda.get_elapsed_time(start, end) / inner, host_ms

    samples, host = [], []
    spin_ms, synchronises = SPIN_MS, False
    for _ in range(reps):
        gpu_ms, host_ms, spin_ms, found = hidden_behind_spin(batch, spin_ms, 0 if synchronises else 4)
        synchronises = synchronises or found  # (then no later batch retries)
        samples.append(gpu_ms)
        host.append(host_ms / inner * 1e3)
    return Timing(samples, reps * inner, statistics.median(host), spin_ms)


def gbps(nbytes: int, ms: float) -> float:
    return nbytes / (ms * 1e-3) / 1e9


class Stopwatch:
    """``with Stopwatch() as sw: ...; sw.seconds``"""

    def __enter__(self) -> "Stopwatch":
        self.start = time.perf_counter()
        self.seconds = 0.0
        return self

    def __exit__(self, *exc: object) -> None:
        self.seconds = time.perf_counter() - self.start


def median_record(records: list[dict]) -> dict:
    """Field-wise median of numeric fields (the first record's other fields are kept)."""
    out = dict(records[0])
    for key, value in records[0].items():
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            values = [r[key] for r in records if isinstance(r.get(key), (int, float))]
            out[key] = statistics.median(values)
    out["repeats"] = len(records)
    return out
