"""Qualified-namespace rows (issue 11, Benchmarks): running block scans over many tiles with a
``StatefulFunction`` prefix callback, and float16 block sums and copies through ``cuda.coop.numba_mlir``,
against CUB C++ (``cub/qualified.cu``).

A family module shaped like ``collectives.py``. Every kernel name contains ``running_scan`` or ``half_`` (and no
kernel of another family does), so ``--only 'running_scan|half_'`` runs this family alone.

* Running scan (SPEC 9.6, the single-pass device-wide scan pattern inside one block): each block of 256 threads
  walks ``SEGMENT // (256 * K)`` consecutive tiles of 256 x K int32 (its segment of ``SEGMENT`` elements), loads
  each tile, computes ``numba_coop.exclusive_sum(block, items, state, prefix_op=RUNNING)`` where the
  ``StatefulFunction`` returns the running total and adds the tile's aggregate to it, and stores the tile. The
  grid is ``n / SEGMENT`` blocks (4096 at 2^28 elements). CUB C++: ``BlockScan::ExclusiveSum(items, items,
  prefix_callback)`` with the classic running-total functor. Oracle: the exclusive cumsum of every block's
  segment, wrapping mod 2^32 (computed in uint32).
* float16 (SPEC 9.2, qualified only; C++ ``__half``): a block sum of 256 x 16 halves loaded striped, thread 0
  writing the block's partial to ``partials[blockIdx.x]``, and Load -> Store copies of 256 x 4 and 256 x 16
  halves (direct, vectorize, transpose). The sums read their own input, derived once from the runner's random
  ``src``: values in {-1, 0, 1} with every odd position 0, so no tile has more than 2048 nonzero items, every
  partial sum CUB or cuda.coop forms (in half precision, in any order) is an integer of magnitude <= 2048, exact
  in float16, and the partials compare exactly with a float64 oracle.

Outputs besides ``dst``: ``partials`` (float16, one per block of the sum), poisoned with ``dst`` before every round.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
from numba_cuda_mlir import cuda  # noqa: I001  (the compiler first, then cuda.coop)
import cuda.coop.numba_mlir as numba_coop
from cuda import coop
from numba_cuda_mlir import cuda  # noqa: F811  (keep the name `cuda` bound to numba's)

from .common import Buffers, Case, outputs_equal
from .common import poison as poison_dst

FAMILY = "qualified"
CUB_SOURCE = "qualified.cu"
THREADS = 256
SEGMENT = 1 << 16  # elements one block of a running scan walks: 64 tiles at K = 4, 16 at K = 16
RUNNING_ITEMS = (4, 16)
# Load/store around the running scan; at 4 items a thread's items are one 16-byte vector (see collectives.py).
RUNNING_IO = {4: ("transpose", "vectorize"), 16: ("transpose",)}
RUNNING_ALGORITHM = "raking"  # CUB's default
HALF = "float16"
HALF_SUM_ITEMS = 16
HALF_SUM_ALGORITHM = "warp_reductions"  # CUB's default
HALF_SUM_LOAD = "striped"  # a sum does not care about the order: coalesced loads, no shared memory
HALF_COPY_ITEMS = (4, 16)
HALF_COPY_ALGORITHMS = ("direct", "vectorize", "transpose")
POISON = 0x5A5A  # common.poison's pattern at 2 bytes, also written to ``partials``
_CTYPE = {"int32": "int", "float16": "__half"}


@dataclass(frozen=True)
class RunningCase(Case):
    """A case whose block walks ``tiles`` consecutive tiles: the grid is n / (tile * tiles)."""

    tiles: int = 1

    @property
    def segment(self) -> int:
        return self.tile * self.tiles

    def grid(self, n: int) -> int:
        return n // self.segment

    def describe(self) -> dict:
        return {**super().describe(), "tiles": self.tiles}


def cases() -> list[Case]:
    out: list[Case] = []
    for k in RUNNING_ITEMS:
        tiles = SEGMENT // (THREADS * k)
        for io in RUNNING_IO[k]:
            out.append(RunningCase(FAMILY, f"block_running_scan_exclusive_sum_{io}_{THREADS}x{k}_x{tiles}_int32",
                                   "block", RUNNING_ALGORITHM, THREADS, k, "int32", ("coop", "cub_cpp"), "",
                                   "running_exclusive_sum", io, tiles))
    out.append(Case(FAMILY, f"block_half_sum_partials_{HALF_SUM_ALGORITHM}_{THREADS}x{HALF_SUM_ITEMS}_{HALF}",
                    "block", HALF_SUM_ALGORITHM, THREADS, HALF_SUM_ITEMS, HALF, ("coop", "cub_cpp"), "",
                    "sum_partials", HALF_SUM_LOAD))
    for k in HALF_COPY_ITEMS:
        for alg in HALF_COPY_ALGORITHMS:
            out.append(Case(FAMILY, f"block_half_copy_{alg}_{THREADS}x{k}_{HALF}", "block", alg, THREADS, k, HALF,
                            ("coop", "cub_cpp"), "", "copy"))
    return out


def bytes_moved(case: Case, n: int, itemsize: int) -> int:
    """Bytes read + written: the input once, plus each element of dst or, for the sum, one partial per block."""
    if case.operation == "sum_partials":
        return (n + case.grid(n)) * itemsize
    return 2 * n * itemsize


# --- inputs, outputs, poisoning and checks -----------------------------------------------

def _state(buffers: Buffers) -> dict:
    state = buffers.views.get(FAMILY)
    if state is None:
        state = buffers.views[FAMILY] = {"arrays": {}, "views": {}, "refs": {}}
    return state


def _array(buffers: Buffers, name: str):
    """A device (cupy) array of the family, made on first use: the sums' input or their partials."""
    state = _state(buffers)
    arrays = state["arrays"]
    if name not in arrays:
        import cupy as cp

        if name == "ternary":  # {-1, 0, 1} from the random bit patterns, every odd position 0 (module doc)
            values = (buffers.src.view(cp.uint16).astype(cp.int32) % 3 - 1).astype(cp.float16)
            values[1::2] = 0
            arrays[name] = values
        elif name == "partials":
            arrays[name] = cp.empty(buffers.n // (THREADS * HALF_SUM_ITEMS), dtype=cp.float16)
            arrays[name].view(cp.uint16).fill(POISON)
        else:
            raise KeyError(name)
        cp.cuda.runtime.deviceSynchronize()
    return arrays[name]


def _view(buffers: Buffers, name: str):
    """``_array`` wrapped once for numba (see Buffers.numba: no per-launch synchronisation)."""
    views = _state(buffers)["views"]
    if name not in views:
        views[name] = cuda.as_cuda_array(_array(buffers, name))
    return views[name]


def poison(buffers: Buffers) -> None:
    """dst and the partials (once made) get the poison pattern."""
    import cupy as cp

    poison_dst(buffers)
    arrays = _state(buffers)["arrays"]
    if "partials" in arrays:
        arrays["partials"].view(cp.uint16).fill(POISON)


def segment_exclusive_sums(src: np.ndarray, segment: int) -> np.ndarray:
    """Exclusive prefix sum within each ``segment`` consecutive int32 items, wrapping mod 2^32 (the oracle)."""
    u = src.view(np.uint32).reshape(-1, segment)
    return (np.cumsum(u, axis=1, dtype=np.uint32) - u).view(np.int32).reshape(-1)


def half_tile_sums(values: np.ndarray, tile: int) -> np.ndarray:
    """Sum of each ``tile`` consecutive halves, in float64 (exact for the ternary input), as float16."""
    return values.astype(np.float64).reshape(-1, tile).sum(axis=1).astype(np.float16)


def _reference(buffers: Buffers, key: tuple):
    """The NumPy oracle of one output, computed once from a host copy and kept on the device."""
    state = _state(buffers)
    if key not in state["refs"]:
        import cupy as cp

        kind, size = key
        if kind == "running":
            ref = segment_exclusive_sums(cp.asnumpy(buffers.src), size)
        else:
            ref = half_tile_sums(cp.asnumpy(_array(buffers, "ternary")), size)
        state["refs"][key] = cp.asarray(ref)
    return state["refs"][key]


def verify(case: Case, buffers: Buffers) -> bool:
    import cupy as cp

    if case.operation == "copy":  # the float16 copies and this family's copy-ceiling rows
        return outputs_equal(buffers)
    if case.operation == "running_exclusive_sum":
        return bool(cp.array_equal(buffers.dst, _reference(buffers, ("running", case.segment))))
    if case.operation == "sum_partials":  # values compared exactly (no NaN, no -0 can arise from the input)
        got = _array(buffers, "partials")
        return bool(cp.array_equal(got, _reference(buffers, ("sums", case.tile))))
    raise ValueError(f"no check for {case.operation}")


# --- cuda.coop kernels ---------------------------------------------------------------

def running_total(state, block_aggregate):
    """The block prefix callback: returns the total of the tiles before this one and adds this tile's aggregate
    (int32 arithmetic wraps when stored back into the int32 state)."""
    old = state[0]
    state[0] = old + block_aggregate
    return old


RUNNING = numba_coop.StatefulFunction(running_total, np.int32)


@functools.lru_cache(maxsize=None)
def coop_kernel(operation: str, algorithm: str, k: int, io: str, tiles: int = 1):
    """One dispatcher per (operation, algorithm, K, load/store, tiles), with the compile-time shapes of CUB's."""
    tile = THREADS * k
    if operation == "running_exclusive_sum":
        segment = tile * tiles

        @cuda.jit
        def block_running_scan(src, dst):
            block = coop.this_block()
            state = coop.ThreadData(1, dtype=np.int32)
            state[0] = 0  # every thread alike; thread 0's state is the authoritative one
            items = coop.ThreadData(k)
            base = np.int64(cuda.blockIdx.x) * segment
            for t in range(tiles):
                offset = base + t * tile
                coop.load(block, src, items, algorithm=io, offset=offset)
                scanned = numba_coop.exclusive_sum(block, items, state, prefix_op=RUNNING, algorithm=algorithm)
                coop.store(block, dst, scanned, algorithm=io, offset=offset)

        return block_running_scan
    if operation == "sum_partials":
        @cuda.jit
        def block_half_sum_partials(src, partials):
            block = coop.this_block()
            base = np.int64(cuda.blockIdx.x) * tile
            items = coop.ThreadData(k, dtype=np.float16)
            numba_coop.load(block, src, items, algorithm=io, offset=base)
            total = numba_coop.sum(block, items, algorithm=algorithm, broadcast=False)  # thread 0 only, as in CUB
            if cuda.threadIdx.x == 0:
                partials[cuda.blockIdx.x] = total

        return block_half_sum_partials
    if operation == "copy":
        @cuda.jit
        def block_half_copy(src, dst):
            block = coop.this_block()
            base = np.int64(cuda.blockIdx.x) * tile
            items = coop.ThreadData(k, dtype=np.float16)
            numba_coop.load(block, src, items, algorithm=algorithm, offset=base)
            numba_coop.store(block, dst, items, algorithm=algorithm, offset=base)

        return block_half_copy
    raise ValueError(f"no cuda.coop kernel for {operation}")


def numba_kernel(impl: str, case: Case):
    return coop_kernel(case.operation, case.algorithm, case.items_per_thread, case.io, getattr(case, "tiles", 1))


def compile_args(impl: str, case: Case, sample) -> tuple:
    """Arguments for numba_coop.compile_kernel with the types of the launch (both arrays of the case's dtype)."""
    return (sample, sample)


# --- launchers -----------------------------------------------------------------------

_MACROS = {"running_exclusive_sum": "BENCH_RUNNING_EXCLUSIVE_SUM", "sum_partials": "BENCH_HALF_SUM_PARTIALS",
           "copy": "BENCH_QUALIFIED_COPY"}


def cub_symbol(case: Case) -> str:
    return f"cub_{case.kernel}"


def cub_instances(all_cases: list[Case]) -> list[tuple[str, str]]:
    """(symbol, extern "C" instantiation line) per CUB kernel (macros of cub/qualified.cu)."""
    lines = []
    for case in all_cases:
        if "cub_cpp" not in case.impls:
            continue
        args = [cub_symbol(case), _CTYPE[case.dtype], str(case.threads), str(case.items_per_thread)]
        if case.operation == "running_exclusive_sum":
            args += [str(case.tiles), case.io.upper(), case.algorithm.upper()]
        elif case.operation == "sum_partials":
            args.append(case.algorithm.upper())
        else:
            args.append(case.algorithm.upper())
        lines.append((cub_symbol(case), f"{_MACROS[case.operation]}({', '.join(args)})"))
    return lines


def launcher(impl: str, case: Case, buffers: Buffers, cub_functions: dict | None = None):
    """A no-argument callable that launches ``impl`` of ``case`` once, asynchronously."""
    grid = case.grid(buffers.n)
    if impl == "coop":
        if case.operation == "sum_partials":
            args = (_view(buffers, "ternary"), _view(buffers, "partials"))
        else:
            args = buffers.numba()
        configured = numba_kernel(impl, case)[grid, case.threads]
        return lambda: configured(*args)
    if impl == "cub_cpp":
        fn = cub_functions[cub_symbol(case)]
        if case.operation == "sum_partials":
            args = (_array(buffers, "ternary"), _array(buffers, "partials"))
        else:
            args = (buffers.src, buffers.dst)
        return lambda: fn((grid,), (case.threads,), args)
    raise ValueError(f"no {impl} implementation of {case.kernel}")


def copy_launchers(buffers: Buffers) -> dict[str, object]:
    """The copy ceiling, measured again in this family's run (named apart from the other families' rows)."""
    import cupy as cp

    src, dst, nbytes = buffers.src, buffers.dst, buffers.nbytes
    kind = cp.cuda.runtime.memcpyDeviceToDevice
    return {f"memcpy_d2d_{buffers.dtype}_for_{FAMILY}":
            lambda: cp.cuda.runtime.memcpyAsync(dst.data.ptr, src.data.ptr, nbytes, kind, 0)}
