"""python -m benchmarks.cute OUTDIR [--quick] [--dry-run]: the CuTe DSL backend's rows.

Each tile kernel (copy direct and transpose, block sum, tile exclusive sum, exchange, merge and radix sort,
histogram, top-k) is timed in one process and one run as (a) a CuTe kernel with cuda.coop calls
(``cute_kernels.py``), (b) the plain CuTe copy (the CuTe copy bandwidth, and cudaMemcpy beside it), (c) the
numba-cuda-mlir cuda.coop kernel of the existing family (``load_store``, ``collectives``, ``sort``, ``tier4``;
this module's own for the two rows no family has) and (d) that family's nvcc-compiled CUB C++ twin
(``cub/*.cu``). All three run on the same input and outputs, which this module owns: poisoned before every round,
checked exactly against a NumPy oracle after its timed launches. The CuTe rows also carry the kernel's registers,
local memory and the number of CALL instructions in its SASS.

On the H200 machine, with the staged CuTe wheels (``pack cute numba`` for the numba column):

    bash .stage/tools/in.sh -- python3 -m benchmarks.cute $OUT/cute --quick

writes OUTDIR/cute_results.json and OUTDIR/CUTE_RESULTS.md. ``--dry-run`` needs no GPU: it builds every CuTe
kernel with ``compile_kernel``, the numba kernels with theirs and the CUB twins with nvcc. An implementation that
cannot run (no numba-cuda-mlir, no nvcc, no GPU, a kernel that does not build) gets an error in its cell.
"""
from __future__ import annotations

import argparse
import functools
import importlib
import json
import re
import statistics
import sys
import traceback
from dataclasses import dataclass
from pathlib import Path

try:  # torch before cutlass (the other order once broke torch's schema parser); absent on a build-only machine
    import torch  # noqa: F401
except ImportError:
    pass

import numpy as np

from . import cub_build
from .common import ROOT, Stopwatch, gbps, make_buffers, time_launches

FULL = {"n": 1 << 26, "warmup": 3, "reps": 15, "inner": 5, "rounds": 2}
QUICK = {"n": 1 << 24, "warmup": 2, "reps": 5, "inner": 3, "rounds": 1}
SEED = 20240611
THREADS = 256
POISON = 0x5A5A5A5A
IMPLS = ("cute", "numba", "cub_cpp", "triton")  # timed side by side in every row (Triton: where it has one)
TRITON_OPERATIONS = ("reverse_inclusive_sum", "segmented_inclusive_sum", "argmax")  # triton_kernels.tile_op
# Constants shared with cute_kernels.py (which imports cutlass: only loaded once needed).
ITEMS, HISTOGRAM_ITEMS, BINS, TOPK = 4, 16, 256, 16


def segmented_tile_algorithm(k: int) -> str:
    """The segmented-sum rows' load and store (the CUB twin's too, cub/cute.cu): with 4 four-byte items a thread's
    items are one 16-byte access and a warp's 512 bytes are contiguous, so vector accesses need no shared memory;
    with more items neighbouring threads' vectors are strided, and the transpose through shared memory wins."""
    return "vectorize" if k <= 4 else "transpose"


def segmented_launch_bounds(k: int) -> dict:
    """The numba segmented-sum kernel's ``launch_bounds``, its twin's ``BENCH_SEGMENTED_BOUNDS_<K>`` (cub/cute.cu):
    at 4 items (256, 8) keeps 8 blocks per SM (32 registers, no spill; 40 registers and 6 blocks without);
    at 16 none, as for the twin."""
    return {"launch_bounds": (THREADS, 8)} if k <= 4 else {}


@dataclass(frozen=True)
class Row:
    """One tile kernel: its CuTe launcher, the family that has its numba kernel and CUB twin, its output."""

    name: str  # the launcher in cute_kernels.py
    operation: str
    dtype: str  # of the input
    items: int
    output: str  # "dst" (n items), "totals" (one per block), "histogram" (BINS counters), "topk" (TOPK per block)
    family: str  # benchmarks module with the numba kernel and the CUB twin ("cute": this one)
    kernel: str  # that family's Case.kernel; the CUB symbol is cub_<kernel>
    cub_source: str
    cub_macro: str  # the instantiation line, {sym} the symbol (the family's cub_instances gives the same)

    @property
    def tile(self) -> int:
        return THREADS * self.items

    def grid(self, n: int) -> int:
        return n // self.tile

    @property
    def symbol(self) -> str:
        return f"cub_{self.kernel}"


ROWS = (
    Row("copy_direct", "copy", "int32", ITEMS, "dst", "load_store", "block_copy_direct_256x4_int32", "load_store.cu",
        "BENCH_BLOCK_COPY({sym}, int, 256, 4, DIRECT)"),
    Row("copy_transpose", "copy", "int32", ITEMS, "dst", "load_store", "block_copy_transpose_256x4_int32",
        "load_store.cu", "BENCH_BLOCK_COPY({sym}, int, 256, 4, TRANSPOSE)"),
    Row("block_sum", "sum_partials", "int32", ITEMS, "totals", "collectives",
        "block_sum_partials_warp_reductions_256x4_int32", "collectives.cu",
        "BENCH_BLOCK_SUM_PARTIALS({sym}, int, 256, 4, WARP_REDUCTIONS)"),
    Row("exclusive_sum", "exclusive_sum", "int32", ITEMS, "dst", "collectives",
        "block_exclusive_sum_raking_256x4_int32", "collectives.cu",
        "BENCH_TILE_EXCLUSIVE_SUM({sym}, int, 256, 4, TRANSPOSE, RAKING)"),
    Row("exchange", "exchange", "int32", ITEMS, "dst", "cute", "block_exchange_blocked_to_striped_256x4_int32",
        "cute.cu", "BENCH_BLOCK_EXCHANGE_BLOCKED_TO_STRIPED({sym}, int, 256, 4)"),
    Row("merge_sort", "merge_sort", "int32", ITEMS, "dst", "sort", "block_merge_sort_256x4_int32", "sort.cu",
        "BENCH_TILE_SORT({sym}, int, 256, 4, false)"),
    Row("radix_sort", "radix_sort", "int32", ITEMS, "dst", "sort", "block_radix_sort_256x4_int32", "sort.cu",
        "BENCH_TILE_SORT({sym}, int, 256, 4, true)"),
    Row("histogram", "histogram", "uint8", HISTOGRAM_ITEMS, "histogram", "tier4", "block_histogram_atomic_256x16_uint8",
        "tier4.cu", "BENCH_BLOCK_HISTOGRAM({sym}, unsigned char, 256, 16, ATOMIC)"),
    Row("topk", "topk_max_keys", "int32", ITEMS, "topk", "cute", f"block_topk_max_keys_{TOPK}_256x4_int32", "cute.cu",
        f"BENCH_TILE_TOPK_MAX({{sym}}, int, 256, 4, {TOPK})"),
    # issue 31: a reverse scan, a segmented scan and an argmax, against the CUB C++ a CUDA programmer writes
    Row("reverse_sum", "reverse_inclusive_sum", "int32", ITEMS, "dst", "cute", "tile_reverse_inclusive_sum_256x4_int32",
        "cute.cu", "BENCH_TILE_REVERSE_INCLUSIVE_SUM({sym}, int, 256, 4)"),
    Row("segmented_sum", "segmented_inclusive_sum", "int32", ITEMS, "dst", "cute",
        "tile_segmented_inclusive_sum_256x4_int32", "cute.cu",
        "BENCH_TILE_SEGMENTED_INCLUSIVE_SUM({sym}, int, 256, 4)"),
    Row("argmax", "argmax", "int32", ITEMS, "totals", "cute", "tile_argmax_256x4_int32", "cute.cu",
        "BENCH_TILE_ARGMAX({sym}, int, 256, 4)"),
    Row("reverse_sum_256x16", "reverse_inclusive_sum", "int32", 16, "dst", "cute",
        "tile_reverse_inclusive_sum_256x16_int32", "cute.cu", "BENCH_TILE_REVERSE_INCLUSIVE_SUM({sym}, int, 256, 16)"),
    Row("segmented_sum_256x16", "segmented_inclusive_sum", "int32", 16, "dst", "cute",
        "tile_segmented_inclusive_sum_256x16_int32", "cute.cu",
        "BENCH_TILE_SEGMENTED_INCLUSIVE_SUM({sym}, int, 256, 16)"),
    Row("argmax_256x16", "argmax", "int32", 16, "totals", "cute", "tile_argmax_256x16_int32", "cute.cu",
        "BENCH_TILE_ARGMAX({sym}, int, 256, 16)"),
    *(Row(f"{name}_256x{k}_float32", operation, "float32", k, output, "cute", f"{twin}_256x{k}_float32", "cute.cu",
          f"{macro}({{sym}}, float, 256, {k})")
      for k in (ITEMS, 16)
      for name, operation, output, twin, macro in (
          ("reverse_sum", "reverse_inclusive_sum", "dst", "tile_reverse_inclusive_sum",
           "BENCH_TILE_REVERSE_INCLUSIVE_SUM"),
          ("segmented_sum", "segmented_inclusive_sum", "dst", "tile_segmented_inclusive_sum",
           "BENCH_TILE_SEGMENTED_INCLUSIVE_SUM"),
          ("argmax", "argmax", "totals", "tile_argmax", "BENCH_TILE_ARGMAX"))),
)
COPY = Row("plain_copy", "copy", "int32", ITEMS, "dst", "", "", "", "")  # the plain CuTe copy (no cuda.coop)


def bytes_moved(row: Row, n: int) -> int:
    """Bytes read + written: the input once, plus every output element (one 4-byte atomic per bin and block)."""
    itemsize = np.dtype(row.dtype).itemsize
    written = {"dst": n * itemsize, "totals": row.grid(n) * 4, "histogram": row.grid(n) * BINS * 4,
               "topk": row.grid(n) * TOPK * 4}[row.output]
    return n * itemsize + written


def _error(exc: BaseException) -> str:
    return "".join(traceback.format_exception_only(type(exc), exc)).strip()[-2000:]


# --- the CuTe kernels' builds (no GPU) ------------------------------------------------------

def _cute_samples(row: Row, n: int) -> tuple:
    """Fake tensors of the launch's dtypes and sizes, and the default stream, for compile_kernel."""
    import cutlass
    from cuda.bindings import driver as cudrv
    from cutlass.cute.runtime import make_fake_tensor

    types = {"int32": cutlass.Int32, "uint8": cutlass.Uint8, "float32": cutlass.Float32}
    out = {"dst": n, "totals": row.grid(n), "histogram": BINS, "topk": row.grid(n) * TOPK}[row.output]
    out_type = types[row.dtype] if row.output == "dst" else cutlass.Int32
    return (make_fake_tensor(types[row.dtype], (n,), stride=(1,)), make_fake_tensor(out_type, (out,), stride=(1,)),
            cudrv.CUstream(0))


def cute_build(row: Row, n: int):
    """The CuTe kernel of the row, built for sm_90a without a GPU (a ``CompiledKernel``)."""
    import cuda.coop.cutlass as cute_coop

    from . import cute_kernels

    return cute_coop.compile_kernel(getattr(cute_kernels, row.name), *_cute_samples(row, n))


def cute_resources(row: Row, n: int) -> dict:
    """Registers, shared and local memory and SASS CALLs of the CuTe kernel, built for sm_90a without a GPU."""
    with Stopwatch() as sw:
        built = cute_build(row, n)
    out = {"registers": built.registers, "shared_bytes": built.shared_memory_bytes,
           "local_bytes": built.local_memory_bytes, "build_seconds": sw.seconds}
    try:
        out["calls"] = built.sass().count("CALL")
    except Exception as exc:  # see /tmp/bench_findings.md: a kernel without cuda.coop calls gives a cut cubin
        out["calls"] = None
        out["sass_error"] = _error(exc)[:300]
    return out


# --- numba-cuda-mlir kernels ----------------------------------------------------------------

def _family(row: Row):
    """The family module (it imports numba-cuda-mlir and registers cuda.coop's numba backend)."""
    return importlib.import_module(f".{row.family}", __package__)


def _case(row: Row):
    family = _family(row)
    return next(c for c in family.cases() if c.kernel == row.kernel)


def numba_kernel(row: Row):
    """The family's cuda.coop dispatcher for this case; this module's own for the rows no family has."""
    if row.family != "cute":
        family = _family(row)
        return family.numba_kernel("coop", _case(row))
    return _own_numba_kernel(row.operation, row.items)


@functools.lru_cache(maxsize=None)
def _own_numba_kernel(operation: str, k: int = ITEMS):
    """Exchange (blocked to striped), top-k and the issue-31 rows (``k`` items per thread), written like the
    families' kernels (compile-time tile)."""
    from numba_cuda_mlir import cuda  # noqa: I001  (the compiler first, then cuda.coop)
    import cuda.coop.numba_mlir as numba_coop  # registers the backend; its qualified argmax
    from cuda import coop
    from numba_cuda_mlir import cuda  # noqa: F811  (keep the name `cuda` bound to numba's)

    tile = THREADS * ITEMS
    if operation == "exchange":
        @cuda.jit
        def block_exchange_blocked_to_striped(src, dst):
            block = coop.this_block()
            base = np.int64(cuda.blockIdx.x) * tile
            items = coop.ThreadData(ITEMS)
            coop.load(block, src, items, algorithm="direct", offset=base)
            striped = coop.exchange(block, items, mode="blocked_to_striped")
            coop.store(block, dst, striped, algorithm="striped", offset=base)

        return block_exchange_blocked_to_striped

    if operation == "reverse_inclusive_sum":
        @cuda.jit
        def tile_reverse_inclusive_sum(src, dst):
            block = coop.this_block()
            base = np.int64(cuda.blockIdx.x) * (THREADS * k)
            items = coop.ThreadData(k)
            coop.load(block, src, items, algorithm="transpose", offset=base)
            coop.store(block, dst, coop.inclusive_sum(block, items, reverse=True), algorithm="transpose", offset=base)

        return tile_reverse_inclusive_sum
    if operation == "segmented_inclusive_sum":
        access = segmented_tile_algorithm(k)

        @cuda.jit(**segmented_launch_bounds(k))
        def tile_segmented_inclusive_sum(src, dst):
            block = coop.this_block()
            base = np.int64(cuda.blockIdx.x) * (THREADS * k)
            items = coop.ThreadData(k)
            heads = coop.ThreadData(k, np.int32)
            coop.load(block, src, items, algorithm=access, offset=base)
            for i in range(k):
                heads[i] = np.int32((np.int32(items[i]) & 15) == 0)  # float32 rows: of the whole number
            scanned = coop.inclusive_sum(block, items, head_flags=heads)
            coop.store(block, dst, scanned, algorithm=access, offset=base)

        return tile_segmented_inclusive_sum
    if operation == "argmax":
        @cuda.jit
        def tile_argmax(src, positions):
            block = coop.this_block()
            base = np.int64(cuda.blockIdx.x) * (THREADS * k)
            items = coop.ThreadData(k)
            coop.load(block, src, items, algorithm="vectorize", offset=base)
            # blocked (vector loads): the index is the tile position (numpy.argmax's first occurrence, ties
            # included); thread 0 writes it: no broadcast (qualified)
            _, index = numba_coop.argmax(block, items, broadcast=False)
            if cuda.threadIdx.x == 0:
                positions[cuda.blockIdx.x] = index

        return tile_argmax

    @cuda.jit
    def block_topk_max_keys(src, out):
        block = coop.this_block()
        base = np.int64(cuda.blockIdx.x) * tile
        keys = coop.ThreadData(ITEMS)
        coop.load(block, src, keys, algorithm="warp_transpose", offset=base)
        top = coop.topk_max_keys(block, keys, k=TOPK)
        coop.store(block, out, top, algorithm="direct", offset=np.int64(cuda.blockIdx.x) * TOPK, valid_items=TOPK)

    return block_topk_max_keys


def numba_build(row: Row, n: int):
    """The row's numba-cuda-mlir kernel, built for sm_90 at the launch's block and grid (a ``CompiledKernel``)."""
    import cuda.coop.numba_mlir as numba_coop

    sample = np.zeros(16, dtype=row.dtype)
    out = np.zeros(16, dtype=np.int32)
    return numba_coop.compile_kernel(numba_kernel(row), (sample, out if row.output != "dst" else sample),
                                     block=THREADS, grid=row.grid(n), target=cub_build.ARCH)


def numba_resources(row: Row, n: int) -> dict:
    with Stopwatch() as sw:
        built = numba_build(row, n)
    return {"registers": built.registers, "shared_bytes": built.shared_memory_bytes,
            "local_bytes": built.local_memory_bytes, "build_seconds": sw.seconds}


# --- CUB C++ twins ----------------------------------------------------------------------------

def start_cub_builds(rows: list[Row], workdir: Path) -> dict[str, object]:
    """One background nvcc build per CUB source (the instantiations of the rows that use it); source -> Build or
    the exception that stopped it (nvcc missing)."""
    builds: dict[str, object] = {}
    for source in sorted({r.cub_source for r in rows}):
        instances = [(r.symbol, r.cub_macro.format(sym=r.symbol)) for r in rows if r.cub_source == source]
        try:
            builds[source] = cub_build.start(source, instances, workdir)
        except Exception as exc:
            builds[source] = exc
    return builds


def check_cub_lines(rows: list[Row]) -> list[str]:
    """The families' own instantiation lines must be this module's (a mismatch would time another kernel)."""
    problems = []
    for row in rows:
        if row.family == "cute":
            continue
        try:
            want = _family(row).cub_instances([_case(row)])
        except Exception as exc:
            problems.append(f"{row.name}: family {row.family} not importable ({type(exc).__name__})")
            continue
        if want != [(row.symbol, row.cub_macro.format(sym=row.symbol))]:
            problems.append(f"{row.name}: {row.family} instantiates {want}, this module {row.cub_macro}")
    return problems


def wait_cub_builds(builds: dict[str, object]) -> tuple[dict[str, object], dict[str, str], dict[str, dict]]:
    """symbol -> cubin, source -> error, symbol -> resource usage."""
    where, errors, usage = {}, {}, {}
    for source, build in builds.items():
        if isinstance(build, Exception):
            errors[source] = _error(build)
            continue
        try:
            where.update(build.wait())  # cubin paths: loaded with cupy once a GPU is there
            usage.update({k: v for cubin in build.cubins() for k, v in cub_build.res_usage(cubin).items()})
        except Exception as exc:
            errors[source] = _error(exc)
    return where, errors, usage


# --- device data: one input per dtype, this module's outputs, poison and oracles ---------------

class Data:
    """The inputs (common.make_buffers), every output, and each framework's view of them, made once."""

    def __init__(self, n: int):
        import cupy as cp

        self.n = n
        self.inputs = {dtype: make_buffers(dtype, n, SEED) for dtype in ("int32", "uint8", "float32")}
        # whole numbers, so that float32 sums in any order are exact (every partial sum stays below 2^24)
        self.inputs["float32"].src[:] = cp.rint(self.inputs["float32"].src)
        grid = n // (THREADS * ITEMS)
        self.outputs = {"dst": self.inputs["int32"].dst, "totals": cp.empty(grid, cp.int32),
                        "histogram": cp.empty(BINS, cp.int32), "topk": cp.empty(grid * TOPK, cp.int32)}
        self.atomic_launches = 0  # histogram launches since the last poison
        self._views: dict = {}
        self._refs: dict = {}

    def arrays(self, row: Row) -> tuple:
        out = self.inputs[row.dtype].dst if row.output == "dst" else self.outputs[row.output]
        return self.inputs[row.dtype].src, out

    def view(self, row: Row, framework: str) -> tuple:
        """(input, output) as numba device arrays (no per-launch sync, see Buffers.numba) or CuTe tensors."""
        key = (row.dtype, row.output, framework)
        if key not in self._views:
            if framework == "numba":
                from numba_cuda_mlir import cuda

                self._views[key] = tuple(cuda.as_cuda_array(a) for a in self.arrays(row))
            else:
                import torch
                from cutlass.cute.runtime import from_dlpack

                self._views[key] = tuple(from_dlpack(torch.from_dlpack(a)) for a in self.arrays(row))
        return self._views[key]

    def poison(self, row: Row) -> None:
        import cupy as cp

        out = self.arrays(row)[1]
        out.view(cp.uint32).fill(POISON)
        self.atomic_launches = 0

    def verify(self, row: Row) -> bool:
        """The output against the NumPy oracle, bit for bit (integers wrap mod 2^32)."""
        import cupy as cp

        src, out = self.arrays(row)
        if row.operation in ("copy", "exchange"):  # the exchange copies each tile through its permutation
            return bool(cp.array_equal(out, src))
        if row.output == "histogram":  # every launch since the poison added the input's counts
            want = (POISON + self.atomic_launches * self._ref(row)) % (1 << 32)
            return self.atomic_launches > 0 and bool(np.array_equal(cp.asnumpy(out.view(cp.uint32)), want))
        if row.output == "topk":  # the TOPK largest keys of each tile, in any order
            got = np.sort(cp.asnumpy(out).reshape(-1, TOPK), axis=1)
            return bool(np.array_equal(got, self._ref(row)))
        if row.output == "totals":  # one per tile: the buffer holds one per tile of the smallest rows
            return bool(cp.array_equal(out[:row.grid(self.n)], self._ref(row)))
        return bool(cp.array_equal(out, self._ref(row)))

    def _ref(self, row: Row):
        key = (row.operation, row.tile, row.dtype)
        if key not in self._refs:
            import cupy as cp

            host = cp.asnumpy(self.inputs[row.dtype].src)
            self._refs[key] = ref = oracle(row, host)
            if row.output in ("dst", "totals"):  # compared on the device
                self._refs[key] = cp.asarray(ref)
        return self._refs[key]


def _heads(tiles: np.ndarray) -> np.ndarray:
    """Where the segmented rows' segments start: each tile's first item and every item whose whole number's low four
    bits are zero."""
    heads = (tiles.astype(np.int32) & 15) == 0
    heads[:, 0] = True
    return heads


def _float_scan_oracle(row: Row, tiles: np.ndarray) -> np.ndarray:
    """The float32 reverse and segmented sums: the inputs are whole numbers, so every order of the sums is exact."""
    if row.operation == "reverse_inclusive_sum":
        return np.ascontiguousarray(np.cumsum(tiles[:, ::-1], axis=1, dtype=np.float32)[:, ::-1]).reshape(-1)
    flat, starts = tiles.reshape(-1), np.flatnonzero(_heads(tiles).reshape(-1))
    return np.concatenate([np.cumsum(part, dtype=np.float32) for part in np.split(flat, starts[1:])])


def oracle(row: Row, src: np.ndarray) -> np.ndarray:
    """NumPy oracle of a row's output (histogram: uint64 counts of one launch; top-k: each tile's keys sorted)."""
    tiles = src.reshape(-1, row.tile)
    u = tiles.view(np.uint32)
    if row.operation == "sum_partials":
        return u.sum(axis=1, dtype=np.uint32).view(np.int32)
    if row.operation == "exclusive_sum":
        return (np.cumsum(u, axis=1, dtype=np.uint32) - u).view(np.int32).reshape(-1)
    if row.operation in ("merge_sort", "radix_sort"):
        return np.sort(tiles, axis=1).reshape(-1)
    if row.operation == "histogram":
        return np.bincount(src, minlength=BINS).astype(np.uint64)
    if row.operation == "topk_max_keys":
        return np.sort(np.partition(tiles, -TOPK, axis=1)[:, -TOPK:], axis=1)
    if row.dtype == "float32" and row.operation in ("reverse_inclusive_sum", "segmented_inclusive_sum"):
        return _float_scan_oracle(row, tiles)
    if row.operation == "reverse_inclusive_sum":
        suffix = np.ascontiguousarray(np.cumsum(u[:, ::-1], axis=1, dtype=np.uint32)[:, ::-1])
        return suffix.view(np.int32).reshape(-1)
    if row.operation == "segmented_inclusive_sum":  # a segment starts where the low four bits are zero
        heads = _heads(tiles)
        segment = np.cumsum(heads.reshape(-1))  # a distinct id per segment of the whole array
        totals = np.cumsum(u.reshape(-1), dtype=np.uint32)
        starts = np.flatnonzero(heads.reshape(-1))
        before = np.concatenate([[0], totals[starts[1:] - 1]]).astype(np.uint32)  # the running total at each start
        return (totals - before[segment - 1]).view(np.int32)
    if row.operation == "argmax":
        return np.argmax(tiles, axis=1).astype(np.int32)
    raise ValueError(row.operation)


# --- launchers ---------------------------------------------------------------------------------

def cute_launcher(row: Row, data: Data):
    """Compile the CuTe launcher once for these tensors; return a no-argument launch on the default stream."""
    import cutlass.cute as cute
    from cuda.bindings import driver as cudrv

    from . import cute_kernels

    src, out = data.view(row, "cute")
    stream = cudrv.CUstream(0)  # the legacy default stream, as cupy's events and the other launchers
    compiled = cute.compile(getattr(cute_kernels, row.name), src, out, stream)
    return lambda: compiled(src, out, stream)


def numba_launcher(row: Row, data: Data):
    src, out = data.view(row, "numba")
    configured = numba_kernel(row)[row.grid(data.n), THREADS]
    return lambda: configured(src, out)


def cub_launcher(row: Row, data: Data, function):
    args, grid = data.arrays(row), row.grid(data.n)
    return lambda: function((grid,), (THREADS,), args)


def triton_launcher(row: Row, data: Data):
    """Triton's twin of the row (``triton_kernels.tile_op``: tl.cumsum(reverse=True), tl.associative_scan over
    (flag, value), tl.argmax), one tile per program on 8 warps like the 256-thread blocks."""
    import torch

    from . import triton_kernels

    src, out = (torch.from_dlpack(a) for a in data.arrays(row))
    return triton_kernels.tile_op(row.operation, src, out, row.tile, THREADS // 32)


def _counted(row: Row, data: Data, launch):
    """The histogram check needs the number of launches since the poison."""
    if row.output != "histogram":
        return launch

    def counted() -> None:
        data.atomic_launches += 1
        launch()

    return counted


# --- the run --------------------------------------------------------------------------------------

def _time(row: Row, data: Data, launch, settings: dict) -> tuple[list[float], bool]:
    data.poison(row)
    timing = time_launches(launch, settings["warmup"], settings["reps"], settings["inner"])
    return timing.batches_ms, data.verify(row)


def _record(row: Row, impl: str, n: int, batches: list[float] | None, verified: bool | None, **extra) -> dict:
    record = {"type": "cute", "row": row.name, "operation": row.operation, "dtype": row.dtype,
              "shape": f"{THREADS}x{row.items}", "impl": impl, "n": n, "bytes": bytes_moved(row, n), **extra}
    if batches:
        ms = statistics.median(batches)
        record.update(ms=ms, ms_min=min(batches), gbps=gbps(record["bytes"], ms), verified=bool(verified))
        print(f"  {impl:10s} {record['gbps']:8.1f} GB/s  {ms * 1e3:8.1f} us  {'ok' if verified else 'WRONG OUTPUT'}",
              flush=True)
    elif "error" in record:
        print(f"  {impl:10s} FAILED: {record['error'].splitlines()[-1][:200]}", flush=True)
    return record


def run(settings: dict, outdir: Path) -> tuple[list[dict], dict]:
    """Build everything, then time every row's implementations in alternating rounds."""
    n = settings["n"]
    records: list[dict] = []
    env: dict = {"n": n, "threads": THREADS}
    builds = start_cub_builds(list(ROWS), outdir / "cub_build")  # nvcc works while the rest compiles
    env["cub_line_mismatches"] = check_cub_lines(list(ROWS))
    data, gpu_error = None, ""
    try:
        import cupy as cp
        import torch

        if not torch.cuda.is_available():
            raise RuntimeError("torch sees no CUDA device")
        env["gpu"] = torch.cuda.get_device_name(0)
        data = Data(n)
    except Exception as exc:
        gpu_error = env["gpu"] = f"no GPU: {_error(exc)}"
    launchers: dict[tuple[str, str], object] = {}
    errors: dict[tuple[str, str], str] = {}
    resources: dict[str, dict] = {}

    # 1. CuTe and numba-cuda-mlir kernels: resources (no GPU needed), then a compiled launcher each.
    for row in (*ROWS, COPY):
        print(f"build {row.name}", flush=True)
        try:
            resources[row.name] = cute_resources(row, n)
        except Exception as exc:
            errors[(row.name, "cute")] = _error(exc)
            continue
        if data is None:
            errors[(row.name, "cute")] = gpu_error
            continue
        try:
            with Stopwatch() as sw:
                launchers[(row.name, "cute")] = _counted(row, data, cute_launcher(row, data))
            resources[row.name]["runtime_compile_seconds"] = sw.seconds
        except Exception as exc:
            errors[(row.name, "cute")] = _error(exc)
    for row in ROWS:
        try:
            if data is None:
                numba_resources(row, n)  # still says whether numba-cuda-mlir is there and builds the kernel
                raise RuntimeError(gpu_error)
            launchers[(row.name, "numba")] = _counted(row, data, numba_launcher(row, data))
        except Exception as exc:
            errors[(row.name, "numba")] = _error(exc)

    for row in ROWS:
        if row.operation in TRITON_OPERATIONS and data is not None:
            try:
                launchers[(row.name, "triton")] = triton_launcher(row, data)
            except Exception as exc:
                errors[(row.name, "triton")] = _error(exc)

    # 2. The CUB twins (nvcc ran in the background).
    where, build_errors, cub_usage = wait_cub_builds(builds)
    for row in ROWS:
        if row.cub_source in build_errors:
            errors[(row.name, "cub_cpp")] = build_errors[row.cub_source]
        elif data is None:
            errors[(row.name, "cub_cpp")] = gpu_error
        else:
            try:
                function = cub_build.load({row.symbol: where[row.symbol]})[row.symbol]
                launchers[(row.name, "cub_cpp")] = _counted(row, data, cub_launcher(row, data, function))
            except Exception as exc:
                errors[(row.name, "cub_cpp")] = _error(exc)

    # 3. Copy rows first (and again last: they see the same clocks as the kernels in between).
    copy_batches: dict[str, list] = {"copy": [], "memcpy": []}
    copy_ok = {"copy": True, "memcpy": True}
    copies = {}
    if (COPY.name, "cute") in launchers:
        copies["copy"] = launchers[(COPY.name, "cute")]
    if data is not None:
        src, dst = data.arrays(COPY)
        kind = cp.cuda.runtime.memcpyDeviceToDevice
        copies["memcpy"] = lambda: cp.cuda.runtime.memcpyAsync(dst.data.ptr, src.data.ptr, src.nbytes, kind, 0)

    def time_copies() -> None:
        for impl, launch in copies.items():
            try:
                batches, ok = _time(COPY, data, launch, settings)
                copy_batches[impl] += batches
                copy_ok[impl] &= ok
            except Exception as exc:
                errors[(COPY.name, impl)] = _error(exc)

    time_copies()
    # 4. Timed rounds, alternating the implementations within each row.
    for row in ROWS:
        print(row.name, flush=True)
        samples: dict[str, list] = {impl: [] for impl in IMPLS}
        ok = {impl: True for impl in IMPLS}
        for _ in range(settings["rounds"]):
            for impl in IMPLS:
                key = (row.name, impl)
                if key not in launchers or key in errors:
                    continue
                try:
                    batches, good = _time(row, data, launchers[key], settings)
                    samples[impl] += batches
                    ok[impl] &= good
                except Exception as exc:
                    errors[key] = _error(exc)
        for impl in IMPLS:
            key = (row.name, impl)
            if key not in launchers and key not in errors:
                continue  # no such implementation of this row (Triton's few)
            extra = {"error": errors[key]} if key in errors else {}
            if impl == "cute":
                extra.update(resources.get(row.name, {}))
            elif impl == "cub_cpp" and row.symbol in cub_usage:
                extra.update(cub_usage[row.symbol])
            records.append(_record(row, impl, n, samples[impl] if key not in errors else None, ok[impl], **extra))
    time_copies()
    if settings.get("build_times", True):
        records += _build_times()
    print("copy", flush=True)
    for impl in ("copy", "memcpy"):
        key = (COPY.name, impl)
        extra = {"error": errors[key]} if key in errors else {}
        if impl == "copy":
            extra.update(resources.get(COPY.name, {}))
            if (COPY.name, "cute") in errors:
                extra["error"] = errors[(COPY.name, "cute")]
        batches = copy_batches[impl] if "error" not in extra else None
        records.append(_record(COPY, impl, n, batches, copy_ok[impl], **extra))
    _ratios(records)
    return records, env


def _build_times() -> list[dict]:
    """Cold and warm build seconds on both routes (``cute_build_time``), in child processes."""
    from . import cute_build_time

    print("build times", flush=True)
    try:
        return cute_build_time.measure()
    except Exception as exc:
        return [{"type": "cute_build", "row": "build times", "impl": "-", "error": _error(exc)}]


def _ratios(records: list[dict]) -> None:
    """ratio_vs_cub_cpp (CuTe and numba rows) and ratio_vs_copy (the plain CuTe copy); verified rows only."""
    ok = [r for r in records if r.get("verified")]
    copy = next((r["gbps"] for r in ok if r["impl"] == "copy"), None)
    cub = {r["row"]: r["gbps"] for r in ok if r["impl"] == "cub_cpp"}
    triton = {r["row"]: r["gbps"] for r in ok if r["impl"] == "triton"}
    for r in ok:
        if r["impl"] in ("cute", "numba") and r["row"] in cub:
            r["ratio_vs_cub_cpp"] = r["gbps"] / cub[r["row"]]
        if r["impl"] in ("cute", "numba") and r["row"] in triton:
            r["ratio_vs_triton"] = r["gbps"] / triton[r["row"]]
        if copy:
            r["ratio_vs_copy"] = r["gbps"] / copy


def dry_run(n: int, outdir: Path) -> tuple[list[dict], dict]:
    """No GPU: every CuTe kernel through compile_kernel, the numba kernels through theirs, the CUB twins with nvcc."""
    records: list[dict] = []
    builds = start_cub_builds(list(ROWS), outdir / "cub_build")
    env = {"n": n, "threads": THREADS, "cub_line_mismatches": check_cub_lines(list(ROWS))}
    print(f"{'kernel':16s} {'shape':7s} {'regs':>5s} {'local':>6s} {'shared':>7s} {'CALLs':>6s} {'build s':>8s}",
          flush=True)
    for row in (*ROWS, COPY):
        try:
            res = cute_resources(row, n)
            record = {"type": "cute_dry", "row": row.name, "impl": "cute", **res}
            calls = "-" if res["calls"] is None else res["calls"]
            print(f"{row.name:16s} {THREADS}x{row.items:<3d} {res['registers']:5d} {res['local_bytes']:6d} "
                  f"{res['shared_bytes']:7d} {calls:>6} {res['build_seconds']:8.2f}", flush=True)
        except Exception as exc:
            record = {"type": "cute_dry", "row": row.name, "impl": "cute", "error": _error(exc)}
            print(f"{row.name:16s} FAILED {record['error'].splitlines()[-1][:300]}", flush=True)
        records.append(record)
    for row in ROWS:
        try:
            records.append({"type": "cute_dry", "row": row.name, "impl": "numba", **numba_resources(row, n)})
        except Exception as exc:
            records.append({"type": "cute_dry", "row": row.name, "impl": "numba", "error": _error(exc)})
            print(f"numba {row.name}: FAILED {records[-1]['error'].splitlines()[-1][:300]}", flush=True)
    records += _build_times()
    _, build_errors, usage = wait_cub_builds(builds)
    for row in ROWS:
        record = {"type": "cute_dry", "row": row.name, "impl": "cub_cpp"}
        if row.cub_source in build_errors:
            record["error"] = build_errors[row.cub_source]
        elif row.symbol in usage:
            record.update(usage[row.symbol])
        else:
            record["error"] = f"{row.symbol} missing from the cubin (or cuobjdump not found)"
        records.append(record)
    print(f"numba kernels built: {sum(1 for r in records if r['impl'] == 'numba' and 'error' not in r)}/{len(ROWS)}; "
          f"CUB twins built: {sum(1 for r in records if r['impl'] == 'cub_cpp' and 'error' not in r)}/{len(ROWS)}"
          f"{'; build errors: ' + ', '.join(build_errors) if build_errors else ''}", flush=True)
    if env["cub_line_mismatches"]:
        print(f"CUB instantiation lines: {env['cub_line_mismatches']}", flush=True)
    return records, env


# --- report ------------------------------------------------------------------------------------

def _cell(record: dict | None, key: str = "gbps", fmt: str = "{:.0f}") -> str:
    if record is None:
        return "-"
    if "error" in record:
        return "error"
    if key == "gbps" and not record.get("verified", True):
        return "WRONG"
    value = record.get(key)
    return "-" if value is None else fmt.format(value)


def report(records: list[dict], env: dict, mode: str) -> str:
    lines = [f"# CuTe DSL backend rows ({mode}, n = {env['n']})", "",
             f"GPU: {env.get('gpu', 'not used (dry run)')}. 256 threads, one tile per block. GB/s = bytes read + "
             "written / median time per launch (CUDA events around batches of back-to-back launches, after warm-up; "
             "every output poisoned before and checked exactly against NumPy after its round). cute = CuTe kernel "
             "with cuda.coop calls; numba = the same tile kernel with the numba-cuda-mlir backend; CUB C++ = the "
             "nvcc-compiled twin; copy = the plain CuTe copy (256x4 int32, striped). Registers, local memory and "
             "the CALL instructions of the CuTe kernel's SASS come from cute_coop.compile_kernel (sm_90a).", ""]
    builds = [r for r in records if r.get("type") == "cute_build"]
    records = [r for r in records if r.get("type") != "cute_build" or "seconds" not in r]
    by = {(r["row"], r["impl"]): r for r in records}
    if mode == "dry":
        lines += ["| kernel | shape | CuTe regs | local B | shared B | CALLs | numba regs | numba local B | CUB regs | "
                  "CUB local B |", "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|"]
        for row in (*ROWS, COPY):
            c, nb, cb = by.get((row.name, "cute")), by.get((row.name, "numba")), by.get((row.name, "cub_cpp"))
            lines.append(f"| {row.name} | {THREADS}x{row.items} {row.dtype} | {_cell(c, 'registers', '{}')} | "
                         f"{_cell(c, 'local_bytes', '{}')} | {_cell(c, 'shared_bytes', '{}')} | "
                         f"{_cell(c, 'calls', '{}')} | {_cell(nb, 'registers', '{}')} | "
                         f"{_cell(nb, 'local_bytes', '{}')} | {_cell(cb, 'registers', '{}')} | "
                         f"{_cell(cb, 'local_bytes', '{}')} |")
    else:
        lines += ["| kernel | shape | CuTe GB/s | numba GB/s | CUB C++ GB/s | Triton GB/s | CuTe / CUB | numba / CUB | "
                  "CuTe / Triton | numba / Triton | CuTe / copy | regs | local B | CALLs |",
                  "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|"]
        for row in ROWS:
            c, nb, cb = by.get((row.name, "cute")), by.get((row.name, "numba")), by.get((row.name, "cub_cpp"))
            tr = by.get((row.name, "triton"))
            lines.append(f"| {row.name} | {THREADS}x{row.items} {row.dtype} | {_cell(c)} | {_cell(nb)} | {_cell(cb)} | "
                         f"{_cell(tr)} | {_cell(c, 'ratio_vs_cub_cpp', '{:.2f}')} | "
                         f"{_cell(nb, 'ratio_vs_cub_cpp', '{:.2f}')} | {_cell(c, 'ratio_vs_triton', '{:.2f}')} | "
                         f"{_cell(nb, 'ratio_vs_triton', '{:.2f}')} | {_cell(c, 'ratio_vs_copy', '{:.2f}')} | "
                         f"{(c or {}).get('registers', '-')} | {(c or {}).get('local_bytes', '-')} | "
                         f"{(c or {}).get('calls', '-')} |")
        for impl, words in (("cute", "CuTe"), ("numba", "numba")):
            ratios = [r["ratio_vs_cub_cpp"] for r in records if r["impl"] == impl and "ratio_vs_cub_cpp" in r]
            if ratios:
                lines += ["", f"{words} / CUB C++: geomean {statistics.geometric_mean(ratios):.3f}, lowest "
                              f"{min(ratios):.3f} ({len(ratios)} rows)."]
        copy, memcpy = by.get((COPY.name, "copy")), by.get((COPY.name, "memcpy"))
        lines += ["", f"Copy: plain CuTe copy {_cell(copy)} GB/s ({(copy or {}).get('registers', '-')} registers), "
                      f"cudaMemcpyAsync device to device {_cell(memcpy)} GB/s."]
    from . import cute_build_time

    build_lines = cute_build_time.table(builds)
    if build_lines:
        lines += ["", "Build time of one kernel with `compile_kernel` (sm_90a; one fresh process each; cold: empty "
                      "cuda-coop cache, warm: the cache the cold build filled; the CuTe DSL's file cache off): the "
                      "bitcode route (default, calls inlined) against the link route (CUDA_COOP_CUTE_ROUTE=link).",
                  "", *build_lines]
    if env.get("cub_line_mismatches"):
        lines += ["", "CUB instantiation lines: " + "; ".join(env["cub_line_mismatches"])]
    failed = [r for r in records if "error" in r]
    if failed:
        lines += ["", "## Errors", ""]
        for r in failed:
            lines.append(f"* {r['row']} / {r['impl']}: `{r['error'].splitlines()[-1][:300]}`")
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.cute", description=__doc__.split("\n\n")[0])
    p.add_argument("outdir", nargs="?", default=str(ROOT / "bench-out" / "cute"), help="where the results go")
    p.add_argument("--quick", action="store_true", help="2^24 elements, fewer repeats: a smoke run")
    p.add_argument("--dry-run", action="store_true", help="no GPU: build every kernel, print registers and CALLs")
    p.add_argument("--only", default="", help="a regular expression: only the rows whose name matches (and the copy)")
    p.add_argument("--skip-build-times", action="store_true", help="leave out the cold/warm build time children")
    args = p.parse_args(argv)
    global ROWS
    if args.only:
        ROWS = tuple(row for row in ROWS if re.search(args.only, row.name))
    settings = dict(QUICK if args.quick or args.dry_run else FULL)
    settings["build_times"] = not args.skip_build_times
    outdir = Path(args.outdir).resolve()
    outdir.mkdir(parents=True, exist_ok=True)
    mode = "dry" if args.dry_run else ("quick" if args.quick else "full")
    print(f"== benchmarks.cute ({mode}, n = {settings['n']}) -> {outdir}", flush=True)
    try:
        records, env = dry_run(settings["n"], outdir) if args.dry_run else run(settings, outdir)
    except Exception:
        traceback.print_exc()
        records, env = [{"type": "error", "row": "run", "impl": "-", "error": traceback.format_exc()[-4000:]}], {
            "n": settings["n"]}
    env["mode"] = mode
    env.update({k: settings[k] for k in ("warmup", "reps", "inner", "rounds")})
    (outdir / "cute_results.json").write_text(json.dumps({"env": env, "records": records}, indent=1, default=str)
                                              + "\n")
    text = report(records, env, mode)
    (outdir / "CUTE_RESULTS.md").write_text(text)
    print(text, flush=True)
    return 2 if any("error" in r for r in records) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
