"""python -m benchmarks.beyond OUTDIR [--quick] [--dry-run] [--only REGEX]: issue 42's rows on both backends.

The operations issue 42 added (SPEC 8.19-8.24, 12.9), each timed in one process and one run as (a) a numba-cuda-mlir
kernel with cuda.coop calls (this module), (b) the same tile kernel in the CuTe DSL (``beyond_cute_kernels.py``),
(c) its CUB C++ twin compiled by nvcc (``cub/beyond.cu``: the same load and store around the CUB parts a CUDA
programmer uses where CUB has no such call) and (d) Triton where Triton has the operation (``triton_beyond.py``).
All of them share the input and outputs, poisoned before every round and checked exactly against a NumPy oracle after
its timed launches (``oracle``). 256 threads per block, one tile per block unless said:

* ``broadcast``: every thread rebases its items on the tile's first item (``coop.broadcast(block, items[0])``;
  twin: a shared slot). Triton: none (a program cannot hand one element of a tile to the others; it would reload
  the item from memory).
* ``select`` / ``partition``: keep the positive items (stable compaction), the kept items stored with
  ``valid_items=count`` (select) or the whole permutation (partition), each block's ``count`` to ``out2``. Twin:
  ``BlockScan`` of the flags + ``BlockExchange::ScatterToBlocked``; Triton: ``tl.cumsum`` ranks and a scattered store.
* ``segment_sums``: ``coop.sum(block, items, head_flags=heads, compact=True)``, a segment starting where the low four
  bits of the (whole) number are zero and at position 0; the totals stored direct (``SEGMENT_STORE``) with
  ``valid_items=count``. Twin: one ``BlockScan`` over (flag, head count, value) triples; Triton:
  ``tl.associative_scan`` over (flag, value) pairs and a ``tl.cumsum`` compaction.
* ``topk``: warp rows (32 lanes x 1 item) and logical-warp rows (8 lanes x 4 items), a row of 32 keys each (the MoE
  routing shape), ``topk_max_pairs(group, keys, positions, k=TOP)`` for TOP = 2, 4, 8, the TOP keys and positions
  stored at ``row * TOP``. Twin: ``WarpMergeSort`` of (key, position) descending; Triton: ``tl.sort`` of the keys'
  ordered bits packed with the positions, 8 rows per program.
* ``radix_sort_valid``, ``histogram_valid``: partial tiles (SPEC 8.23), each block's ``valid_items`` in ``aux``
  (uniform in [tile/2, tile]); the sort with ``oob_default`` = the dtype's largest key stores the whole tile, the
  histogram (int32 samples ``src & 255``) adds its 256 counters into a global histogram with one atomic per bin.
  Twins: the padding recipes (keys past ``valid_items`` padded with the largest key and a full ``BlockRadixSort``;
  samples padded with 0 and bin 0's padding subtracted); Triton: ``tl.sort`` of the padded tile, ``tl.histogram``
  with the invalid samples counted in a bin past the 256.
* ``running_exclusive_sum``, ``running_segmented_sum``, ``running_reverse_exclusive_sum``: each block walks
  ``SEGMENT`` items tile by tile with a ``StatefulFunction`` prefix callback (SPEC 8.24, 12.9: the CuTe backend's
  prefix callbacks): the running exclusive sum, the running segmented inclusive sum (``prefix_op`` with
  ``head_flags`` and the ``has_head`` carry) and the reverse running exclusive sum (tiles from the last). Twins: a
  ``BlockScan`` with a prefix callback functor (over (flag, value) pairs for the segmented one; the reverse one
  through reverse iterators); Triton: ``tl.cumsum`` / ``tl.associative_scan`` in a loop carrying the running value.

On the H200 machine, with the staged wheels of both backends (``pack cute numba``):

    bash .stage/tools/in.sh -- python3 -m benchmarks.beyond $OUT/beyond --quick

writes OUTDIR/beyond_results.json and OUTDIR/BEYOND_RESULTS.md. ``--dry-run`` needs no GPU: it builds every numba and
CuTe kernel for sm_90 and the CUB twins with nvcc, and prints their registers.
"""
from __future__ import annotations

import argparse
import functools
import json
import re
import statistics
import sys
import traceback
from dataclasses import dataclass
from pathlib import Path

try:  # torch before cutlass (see cute.py); absent on a build-only machine
    import torch  # noqa: F401
except ImportError:
    pass

import numpy as np

from . import cub_build
from .common import ROOT, Stopwatch, gbps, make_buffers, time_launches

FULL = {"n": 1 << 26, "warmup": 3, "reps": 15, "inner": 5, "rounds": 2}
QUICK = {"n": 1 << 24, "warmup": 2, "reps": 5, "inner": 3, "rounds": 1}
SEED = 20240611
VALID_SEED = 4242
THREADS = 256
POISON = 0x5A5A5A5A
BINS = 256
SEGMENT = 1 << 16  # items one block of a running scan walks: 64 tiles at K = 4, 16 at K = 16
ROW = 32  # top-k rows: 32 keys (one warp x 1, or a logical warp of 8 x 4)
IMPLS = ("numba", "cute", "cub_cpp", "triton")
DTYPES = ("int32", "float32")
SHAPES = (4, 16)
TOPS = (2, 4, 8)
_CTYPE = {"int32": "int", "float32": "float"}
# Triton has no broadcast of one member's value (a program would reload the item from memory).
NO_TRITON = ("broadcast",)


def tile_algorithm(k: int) -> str:
    """The element-wise rows' load and store (cute.py's segmented_tile_algorithm, the twins' tile_load)."""
    return "vectorize" if k <= 4 else "transpose"


def partial_store(k: int) -> str:
    """The store of the first ``count`` items of a select: direct at 4 items, the transpose beyond."""
    return "direct" if k <= 4 else "transpose"


# The store of the compacted segment totals: direct at every width. There are few of them (one a segment: a sixteenth
# of the tile here), so the transposing store's two barriers and shared round trip cost more than its coalescing
# saves: on an H100 (main 5dc3a4a, --quick) the 256x16 rows went from 0.827-0.847x the twin with the transpose to
# 0.939-0.947x (numba) and 0.977-1.004x (CuTe) direct; a select's 256x16 rows, which keep most items, fell to 0.39x.
SEGMENT_STORE = "direct"


def histogram_load(k: int) -> str:
    """The partial histogram's blocked load with valid_items (a striped one would count other positions)."""
    return "direct" if k <= 4 else "transpose"


def largest(dtype: str):
    """The dtype's largest key: the radix sort's oob_default and the twin's padding."""
    return int(np.iinfo(dtype).max) if dtype.startswith("int") else float(np.finfo(dtype).max)


@dataclass(frozen=True)
class Row:
    """One tile kernel of issue 42 at one shape and dtype."""

    name: str  # unique: the CuTe launcher's key, the CUB symbol's suffix
    operation: str
    dtype: str
    items: int  # per thread
    width: int = 0  # top-k: lanes per group (32: a warp, 8: logical warps)
    top: int = 0  # top-k: keys kept per row

    @property
    def tile(self) -> int:
        return THREADS * self.items

    @property
    def running(self) -> bool:
        return self.operation.startswith("running_")

    @property
    def tiles(self) -> int:
        """Tiles one block walks (running scans), else 1."""
        return SEGMENT // self.tile if self.running else 1

    def grid(self, n: int) -> int:
        return n // (self.tile * self.tiles)

    @property
    def symbol(self) -> str:
        return f"cub42_{self.name}"

    @property
    def triton(self) -> bool:
        return self.operation not in NO_TRITON

    @property
    def output(self) -> str:
        """dst's kind: "n" (n items of the dtype), "histogram" (BINS int32), "topk" (n / ROW * top keys)."""
        return {"histogram_valid": "histogram", "topk": "topk"}.get(self.operation, "n")

    @property
    def out2(self) -> str:
        """out2's kind: "counts" (one int32 per block), "positions" (n / ROW * top int32) or "none"."""
        if self.operation in ("select", "partition", "segment_sums"):
            return "counts"
        return "positions" if self.operation == "topk" else "none"

    def cub_line(self) -> str:
        t, k, s = _CTYPE[self.dtype], self.items, self.symbol
        op = self.operation
        if op == "broadcast":
            return f"BENCH42_BROADCAST({s}, {t}, {THREADS}, {k})"
        if op in ("select", "partition"):
            return f"BENCH42_SELECT({s}, {t}, {THREADS}, {k}, {'true' if op == 'partition' else 'false'})"
        if op == "segment_sums":
            return f"BENCH42_SEGMENT_SUMS({s}, {t}, {THREADS}, {k})"
        if op == "topk":
            return f"BENCH42_WARP_TOPK({s}, {t}, {THREADS}, {self.width}, {k}, {self.top})"
        if op == "radix_sort_valid":
            return f"BENCH42_PARTIAL_RADIX_SORT({s}, {t}, {THREADS}, {k})"
        if op == "histogram_valid":
            return f"BENCH42_PARTIAL_HISTOGRAM({s}, {t}, {THREADS}, {k})"
        code = {"running_exclusive_sum": 0, "running_segmented_sum": 1, "running_reverse_exclusive_sum": 2}[op]
        return f"BENCH42_RUNNING_SCAN({s}, {t}, {THREADS}, {k}, {self.tiles}, {code})"


def rows() -> tuple[Row, ...]:
    out: list[Row] = []
    for op in ("broadcast", "select", "partition", "segment_sums", "radix_sort_valid", "running_exclusive_sum",
               "running_segmented_sum", "running_reverse_exclusive_sum"):
        out += [Row(f"{op}_256x{k}_{dtype}", op, dtype, k) for k in SHAPES for dtype in DTYPES]
    out += [Row(f"histogram_valid_256x{k}_int32", "histogram_valid", "int32", k) for k in SHAPES]
    for width, k in ((32, 1), (8, 4)):
        group = "warp" if width == 32 else f"lwarp{width}"
        out += [Row(f"{group}_topk{top}_{width}x{k}_{dtype}", "topk", dtype, k, width, top)
                for top in TOPS for dtype in DTYPES]
    return tuple(out)


ROWS = rows()


def _error(exc: BaseException) -> str:
    return "".join(traceback.format_exception_only(type(exc), exc)).strip()[-2000:]


# --- NumPy oracles (host arrays; every integer result wraps mod 2^32) ------------------------------

def heads_of(tiles: np.ndarray) -> np.ndarray:
    """Segment starts of the segmented rows: the (whole) number's low four bits are zero."""
    return (tiles.astype(np.int64) & 15) == 0


def valid_counts(grid: int, tile: int) -> np.ndarray:
    """Each block's valid_items of the partial-tile rows: uniform in [tile/2, tile], the same on every run."""
    return np.random.default_rng(VALID_SEED + tile).integers(tile // 2, tile + 1, size=grid).astype(np.int32)


def _wrap_cumsum(x: np.ndarray, axis: int = -1, reverse: bool = False) -> np.ndarray:
    """Inclusive cumsum in the dtype's arithmetic: uint32 wrapping for int32, exact float64 then float32 for the
    whole-number float inputs."""
    if reverse:
        return np.flip(_wrap_cumsum(np.flip(x, axis), axis), axis)
    if x.dtype == np.int32:
        return np.cumsum(x.view(np.uint32), axis=axis, dtype=np.uint32).view(np.int32)
    return np.cumsum(x.astype(np.float64), axis=axis).astype(x.dtype)


def _minus(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if a.dtype == np.int32:
        return (a.view(np.uint32) - b.view(np.uint32)).view(np.int32)
    return a - b


def stable_partition(tiles: np.ndarray, keep: np.ndarray) -> np.ndarray:
    """Each tile's kept items in order, then its rejected items in order."""
    order = np.argsort(~keep, axis=1, kind="stable")
    return np.take_along_axis(tiles, order, axis=1)


def segment_sums(tiles: np.ndarray, poison) -> tuple[np.ndarray, np.ndarray]:
    """(dst, counts) of the compacted segment sums: each tile's totals in order from its base, poison after them."""
    heads = heads_of(tiles)
    heads[:, 0] = True
    flat, starts = tiles.reshape(-1), np.flatnonzero(heads.reshape(-1))
    if tiles.dtype == np.int32:
        totals = np.add.reduceat(flat.view(np.uint32), starts, dtype=np.uint32).view(np.int32)
    else:
        totals = np.add.reduceat(flat.astype(np.float64), starts).astype(tiles.dtype)
    counts = heads.sum(axis=1)
    segment_of_tile = np.repeat(np.cumsum(counts) - counts, counts)  # the first segment number of each one's tile
    tile_of = starts // tiles.shape[1]
    out = np.full(flat.size, poison, tiles.dtype)
    out[tile_of * tiles.shape[1] + np.arange(starts.size) - segment_of_tile] = totals
    return out, counts.astype(np.int32)


def running_scan(row: Row, blocks: np.ndarray) -> np.ndarray:
    """A running scan of each block's SEGMENT items (``blocks``: one row per block)."""
    if row.operation == "running_exclusive_sum":
        return _minus(_wrap_cumsum(blocks), blocks)
    if row.operation == "running_reverse_exclusive_sum":
        return _minus(_wrap_cumsum(blocks, reverse=True), blocks)
    heads = heads_of(blocks)
    heads[:, 0] = True  # the carry starts from zero: the same as a head
    flat, starts = blocks.reshape(-1), np.flatnonzero(heads.reshape(-1))
    total = _wrap_cumsum(flat)
    before = np.zeros(starts.size, flat.dtype)
    before[1:] = total[starts[1:] - 1]  # the running total before each segment
    segment = np.cumsum(heads.reshape(-1)) - 1
    return _minus(total, before[segment]).reshape(blocks.shape)


def poison_of(dtype) -> object:
    """The poison pattern as a value of ``dtype``."""
    return np.array([POISON], np.uint32).view(dtype)[0]


def oracle(row: Row, src: np.ndarray, valid: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """The expected outputs of one launch: {"dst": ..., "out2": ...}; the histogram's dst is uint64 counts of one
    launch; top-k: "keys" (each row's TOP largest, sorted) instead of dst and out2 (checked by ``check_topk``)."""
    op = row.operation
    if op == "topk":
        return {"keys": np.sort(src.reshape(-1, ROW), axis=1)[:, -row.top:]}
    tiles = src.reshape(-1, row.tile * row.tiles)
    if op == "broadcast":
        return {"dst": _minus(tiles, tiles[:, :1]).reshape(-1)}
    if op in ("select", "partition"):
        keep = tiles > 0
        moved = stable_partition(tiles, keep)
        counts = keep.sum(axis=1).astype(np.int32)
        if op == "select":
            moved = np.where(np.arange(row.tile) < counts[:, None], moved, poison_of(tiles.dtype))
        return {"dst": moved.reshape(-1), "out2": counts}
    if op == "segment_sums":
        dst, counts = segment_sums(tiles, poison_of(tiles.dtype))
        return {"dst": dst, "out2": counts}
    if op == "radix_sort_valid":
        padded = np.where(np.arange(row.tile) < valid[:, None], tiles, np.asarray(largest(row.dtype), tiles.dtype))
        return {"dst": np.sort(padded, axis=1).reshape(-1)}
    if op == "histogram_valid":
        samples = tiles[np.arange(row.tile) < valid[:, None]] & (BINS - 1)
        return {"dst": np.bincount(samples, minlength=BINS).astype(np.uint64)}
    if row.running:
        return {"dst": running_scan(row, tiles).reshape(-1)}
    raise ValueError(op)


def check_topk(row: Row, src: np.ndarray, keys: np.ndarray, positions: np.ndarray, want: np.ndarray) -> bool:
    """Each row's TOP keys (any order) are its TOP largest, each with its own position in the row, all distinct
    (which of several equal keys at the boundary is kept is unspecified)."""
    rows_ = src.reshape(-1, ROW)
    keys, positions = keys.reshape(-1, row.top), positions.reshape(-1, row.top)
    if positions.min() < 0 or positions.max() >= ROW:
        return False
    if not np.array_equal(np.sort(keys, axis=1).view(np.uint32), want.view(np.uint32)):
        return False
    if not np.array_equal(np.take_along_axis(rows_, positions, axis=1).view(np.uint32), keys.view(np.uint32)):
        return False
    ordered = np.sort(positions, axis=1)
    return bool((ordered[:, 1:] != ordered[:, :-1]).all())


def bytes_moved(row: Row, n: int, written: int | None = None) -> int:
    """Bytes read + written: the input once (the valid items of the partial tiles), plus the outputs (select and
    segment sums: the items the oracle keeps, and one count per block)."""
    size = np.dtype(row.dtype).itemsize
    if row.operation == "topk":
        return n * size + n // ROW * row.top * (size + 4)
    if row.operation == "histogram_valid":
        return (written or n) * size + row.grid(n) * BINS * 4
    if row.operation == "radix_sort_valid":
        return (written or n) * size + n * size
    if row.operation in ("select", "segment_sums"):
        return n * size + (written if written is not None else n) * size + row.grid(n) * 4
    if row.operation == "partition":
        return 2 * n * size + row.grid(n) * 4
    return 2 * n * size


# --- numba-cuda-mlir kernels ----------------------------------------------------------------------

def _carry(state, aggregate, has_head):
    """The running segmented sum's carry (SPEC 8.24): the aggregate after a head, else the prefix plus it."""
    prefix = state[0]
    state[0] = aggregate if has_head else prefix + aggregate
    return prefix


def _running_total(state, aggregate):
    """The running (and the reverse running) sum's carry: returns the running value and adds the aggregate."""
    prefix = state[0]
    state[0] = aggregate + prefix
    return prefix


@functools.lru_cache(maxsize=None)
def _numba_callbacks(dtype: str):
    import cuda.coop.numba_mlir as numba_coop

    kind = np.dtype(dtype).type
    return (numba_coop.StatefulFunction(_running_total, kind, name=f"bench42_running_{dtype}"),
            numba_coop.StatefulFunction(_carry, kind, name=f"bench42_segments_{dtype}"))


@functools.lru_cache(maxsize=None)
def numba_kernel(row: Row):
    """The row's numba-cuda-mlir dispatcher: (src, aux, dst, out2), the tile a compile-time constant.

    Each kernel declares its block (``launch_bounds=THREADS``), as the CuTe launch's block does (its ``reqntid``):
    ptxas allocates registers for 256 threads (the running segmented sum at 256x4: 40, 6 blocks per SM, not 48 and
    5). A block's count goes to ``out2.ravel()`` at a uint32 index (numba's arrays carry a run-time stride and test a
    signed index for a negative value) and the running scans count their tiles in uint32 (no 64-bit compare a tile).
    """
    from numba_cuda_mlir import cuda  # noqa: I001  (the compiler first, then cuda.coop)
    import cuda.coop.numba_mlir as numba_coop
    from cuda import coop
    from numba_cuda_mlir import cuda  # noqa: F811  (keep the name `cuda` bound to numba's)

    k, tile, op = row.items, row.tile, row.operation
    access = tile_algorithm(k)
    if op == "broadcast":
        @cuda.jit(launch_bounds=THREADS)
        def broadcast(src, aux, dst, out2):
            block = coop.this_block()
            base = np.int64(cuda.blockIdx.x) * tile
            items = coop.ThreadData(k)
            coop.load(block, src, items, algorithm=access, offset=base)
            first = coop.broadcast(block, items[0])  # thread 0's first item: the tile's first
            for i in range(k):
                items[i] = items[i] - first
            coop.store(block, dst, items, algorithm=access, offset=base)

        return broadcast
    if op in ("select", "partition"):
        partition = op == "partition"
        store = access if partition else partial_store(k)

        @cuda.jit(launch_bounds=THREADS)
        def select(src, aux, dst, out2):
            block = coop.this_block()
            base = np.int64(cuda.blockIdx.x) * tile
            items = coop.ThreadData(k)
            flags = coop.ThreadData(k, np.int32)
            coop.load(block, src, items, algorithm=access, offset=base)
            for i in range(k):
                flags[i] = np.int32(items[i] > 0)
            if partition:
                moved, count = coop.partition(block, items, flags)
                coop.store(block, dst, moved, algorithm=store, offset=base)
            else:
                kept, count = coop.select(block, items, flags)
                coop.store(block, dst, kept, algorithm=store, offset=base, valid_items=count)
            if cuda.threadIdx.x == 0:
                out2.ravel()[np.uint32(cuda.blockIdx.x)] = count

        return select
    if op == "segment_sums":
        store = SEGMENT_STORE

        @cuda.jit(launch_bounds=THREADS)
        def segment_sums(src, aux, dst, out2):
            block = coop.this_block()
            base = np.int64(cuda.blockIdx.x) * tile
            items = coop.ThreadData(k)
            heads = coop.ThreadData(k, np.int32)
            coop.load(block, src, items, algorithm=access, offset=base)
            for i in range(k):
                heads[i] = np.int32((np.int32(items[i]) & 15) == 0)  # float32 rows: of the whole number
            totals, count = coop.sum(block, items, head_flags=heads, compact=True)
            coop.store(block, dst, totals, algorithm=store, offset=base, valid_items=count)
            if cuda.threadIdx.x == 0:
                out2.ravel()[np.uint32(cuda.blockIdx.x)] = count

        return segment_sums
    if op == "topk":
        width, top = row.width, row.top
        load = "vectorize" if k == 4 else "direct"
        groups = THREADS // width
        # The lane, row and output index in 32-bit unsigned arithmetic, as the CuTe kernel's Int32 (whose operands
        # LLVM knows are non-negative): numba's signed integers follow Python, so int64 `%`, `//` and negative-index
        # wrap-around would add instructions to every store that the other kernels do not have.
        u_width, u_top, u_groups, u_k = np.uint32(width), np.uint32(top), np.uint32(groups), np.uint32(k)

        if width == 32:
            @cuda.jit(launch_bounds=THREADS)
            def warp_topk(src, aux, dst, out2):
                block = coop.this_block()
                keys = coop.ThreadData(k)
                positions = coop.ThreadData(k, np.int32)
                coop.load(block, src, keys, algorithm=load, offset=np.int64(cuda.blockIdx.x) * tile)
                tid = np.uint32(cuda.threadIdx.x)
                lane = tid % u_width
                for i in range(k):
                    positions[i] = np.int32(lane * u_k + np.uint32(i))
                best, where = coop.topk_max_pairs(coop.this_warp(), keys, positions, k=top)
                first = (np.uint32(cuda.blockIdx.x) * u_groups + tid // u_width) * u_top
                for i in range(k):
                    p = lane * u_k + np.uint32(i)
                    if p < u_top:
                        dst[first + p] = best[i]
                        out2[first + p] = where[i]

            return warp_topk

        @cuda.jit(launch_bounds=THREADS)
        def logical_warp_topk(src, aux, dst, out2):
            block = coop.this_block()
            keys = coop.ThreadData(k)
            positions = coop.ThreadData(k, np.int32)
            coop.load(block, src, keys, algorithm=load, offset=np.int64(cuda.blockIdx.x) * tile)
            tid = np.uint32(cuda.threadIdx.x)
            lane = tid % u_width
            for i in range(k):
                positions[i] = np.int32(lane * u_k + np.uint32(i))
            best, where = coop.topk_max_pairs(coop.this_warp().group_by(width), keys, positions, k=top)
            first = (np.uint32(cuda.blockIdx.x) * u_groups + tid // u_width) * u_top
            for i in range(k):
                p = lane * u_k + np.uint32(i)
                if p < u_top:
                    dst[first + p] = best[i]
                    out2[first + p] = where[i]

        return logical_warp_topk
    if op == "radix_sort_valid":
        pad = largest(row.dtype)

        @cuda.jit(launch_bounds=THREADS)
        def radix_sort_valid(src, aux, dst, out2):
            block = coop.this_block()
            base = np.int64(cuda.blockIdx.x) * tile
            valid = aux[cuda.blockIdx.x]
            keys = coop.ThreadData(k)
            coop.load(block, src, keys, algorithm="warp_transpose", offset=base, valid_items=valid)
            # the qualified namespace: float32 keys are qualified-only (the int32 rows take the same call)
            out = numba_coop.radix_sort_keys(block, keys, valid_items=valid, oob_default=pad)
            coop.store(block, dst, out, algorithm="warp_transpose", offset=base)

        return radix_sort_valid
    if op == "histogram_valid":
        load = histogram_load(k)

        @cuda.jit(launch_bounds=THREADS)
        def histogram_valid(src, aux, dst, out2):
            block = coop.this_block()
            base = np.int64(cuda.blockIdx.x) * tile
            valid = aux[cuda.blockIdx.x]
            samples = coop.ThreadData(k)
            coop.load(block, src, samples, algorithm=load, offset=base, valid_items=valid)
            counts = coop.histogram(block, samples, bins=BINS, valid_items=valid)  # thread t: bin t
            cuda.atomic.add(dst, cuda.threadIdx.x, counts[0])

        return histogram_valid

    running, segments = _numba_callbacks(row.dtype)
    tiles, segment = row.tiles, SEGMENT
    u_tiles = np.uint32(tiles)  # a 32-bit loop counter (numba's int64 range costs a 64-bit compare a tile)
    kind = np.dtype(row.dtype).type
    if op == "running_exclusive_sum":
        @cuda.jit(launch_bounds=THREADS)
        def running_exclusive_sum(src, aux, dst, out2):
            block = coop.this_block()
            state = coop.ThreadData(1, dtype=kind)
            state[0] = 0  # every thread alike; thread 0's is the authoritative one
            items = coop.ThreadData(k)
            base = np.int64(cuda.blockIdx.x) * segment
            for t in range(u_tiles):
                offset = base + t * tile
                coop.load(block, src, items, algorithm=access, offset=offset)
                scanned = numba_coop.exclusive_sum(block, items, state, prefix_op=running)
                coop.store(block, dst, scanned, algorithm=access, offset=offset)

        return running_exclusive_sum
    if op == "running_segmented_sum":
        @cuda.jit(launch_bounds=THREADS)
        def running_segmented_sum(src, aux, dst, out2):
            block = coop.this_block()
            state = coop.ThreadData(1, dtype=kind)
            state[0] = 0
            items = coop.ThreadData(k)
            heads = coop.ThreadData(k, np.int32)
            base = np.int64(cuda.blockIdx.x) * segment
            for t in range(u_tiles):
                offset = base + t * tile
                coop.load(block, src, items, algorithm=access, offset=offset)
                for i in range(k):
                    heads[i] = np.int32((np.int32(items[i]) & 15) == 0)
                scanned = numba_coop.inclusive_sum(block, items, state, prefix_op=segments, head_flags=heads)
                coop.store(block, dst, scanned, algorithm=access, offset=offset)

        return running_segmented_sum

    @cuda.jit(launch_bounds=THREADS)
    def running_reverse_exclusive_sum(src, aux, dst, out2):
        block = coop.this_block()
        state = coop.ThreadData(1, dtype=kind)
        state[0] = 0
        items = coop.ThreadData(k)
        base = np.int64(cuda.blockIdx.x) * segment
        for t in range(u_tiles):
            offset = base + (tiles - 1 - t) * tile  # the last tile first
            coop.load(block, src, items, algorithm="transpose", offset=offset)
            scanned = numba_coop.exclusive_sum(block, items, state, prefix_op=running, reverse=True)
            coop.store(block, dst, scanned, algorithm="transpose", offset=offset)

    return running_reverse_exclusive_sum


def out_sizes(row: Row, n: int) -> tuple[int, int]:
    """Elements of dst and out2 (out2 is at least one element)."""
    dst = {"n": n, "histogram": BINS, "topk": n // ROW * row.top}[row.output]
    out2 = {"counts": row.grid(n), "positions": n // ROW * row.top, "none": 1}[row.out2]
    return dst, out2


def numba_build(row: Row, n: int):
    """The row's numba kernel built for sm_90 at the launch's block and grid (a ``CompiledKernel``)."""
    import cuda.coop.numba_mlir as numba_coop

    sample = np.zeros(16, dtype=row.dtype)
    ints = np.zeros(16, dtype=np.int32)
    dst = ints if row.output == "histogram" else sample
    return numba_coop.compile_kernel(numba_kernel(row), (sample, ints, dst, ints), block=THREADS, grid=row.grid(n),
                                     target=cub_build.ARCH)


def _resources(built, seconds: float, calls: bool = False) -> dict:
    out = {"registers": built.registers, "shared_bytes": built.shared_memory_bytes,
           "local_bytes": built.local_memory_bytes, "build_seconds": seconds}
    if calls:
        try:
            out["calls"] = built.sass().count("CALL")
        except Exception as exc:
            out["calls"], out["sass_error"] = None, _error(exc)[:300]
    return out


def numba_resources(row: Row, n: int) -> dict:
    with Stopwatch() as sw:
        built = numba_build(row, n)
    return _resources(built, sw.seconds)


# --- CuTe DSL kernels -----------------------------------------------------------------------------

def _cute_samples(row: Row, n: int) -> tuple:
    import cutlass
    from cuda.bindings import driver as cudrv
    from cutlass.cute.runtime import make_fake_tensor

    types = {"int32": cutlass.Int32, "float32": cutlass.Float32}
    dst, out2 = out_sizes(row, n)
    dst_type = cutlass.Int32 if row.output == "histogram" else types[row.dtype]
    return (make_fake_tensor(types[row.dtype], (n,), stride=(1,)),
            make_fake_tensor(cutlass.Int32, (max(row.grid(n), 1),), stride=(1,)),
            make_fake_tensor(dst_type, (dst,), stride=(1,)), make_fake_tensor(cutlass.Int32, (out2,), stride=(1,)),
            cudrv.CUstream(0))


def cute_build(row: Row, n: int):
    import cuda.coop.cutlass as cute_coop

    from . import beyond_cute_kernels

    return cute_coop.compile_kernel(beyond_cute_kernels.launcher(row), *_cute_samples(row, n))


def cute_resources(row: Row, n: int) -> dict:
    with Stopwatch() as sw:
        built = cute_build(row, n)
    return _resources(built, sw.seconds, calls=True)


# --- CUB C++ twins ------------------------------------------------------------------------------

def start_cub_build(rows_: list[Row], workdir: Path):
    """One background nvcc build of every row's twin (a ``cub_build.Build``), or the exception that stopped it."""
    try:
        return cub_build.start("beyond.cu", [(r.symbol, r.cub_line()) for r in rows_], workdir)
    except Exception as exc:
        return exc


def wait_cub_build(build) -> tuple[dict, str | None, dict]:
    """symbol -> cubin, the build's error, symbol -> resource usage."""
    if isinstance(build, Exception):
        return {}, _error(build), {}
    try:
        where = build.wait()
    except Exception as exc:
        return {}, _error(exc), {}
    usage = {k: v for cubin in build.cubins() for k, v in cub_build.res_usage(cubin).items()}
    return where, None, usage


# --- device data ----------------------------------------------------------------------------------

class Data:
    """One input per dtype (whole numbers for float32, no -0.0), derived inputs, the outputs, their views."""

    def __init__(self, n: int):
        import cupy as cp

        self.n = n
        self.src = {dtype: make_buffers(dtype, n, SEED).src for dtype in DTYPES}
        # whole numbers (every sum in any order exact), and +0.0 for -0.0 (the sorts order -0.0 first, NumPy not)
        self.src["float32"][:] = cp.rint(self.src["float32"]) + np.float32(0.0)
        self.samples = cp.bitwise_and(self.src["int32"], BINS - 1)  # the histogram's int32 samples
        self._arrays: dict = {}
        self._views: dict = {}
        self._refs: dict = {}
        self._host: dict = {}
        self.atomic_launches = 0
        cp.cuda.runtime.deviceSynchronize()

    def _array(self, key: tuple):
        import cupy as cp

        if key not in self._arrays:
            kind, dtype, size = key
            if kind == "valid":
                self._arrays[key] = cp.asarray(valid_counts(size, dtype))  # dtype here: the tile
            else:
                self._arrays[key] = cp.empty(size, dtype)
        return self._arrays[key]

    def arrays(self, row: Row) -> tuple:
        """(src, aux, dst, out2) as cupy arrays."""
        dst_n, out2_n = out_sizes(row, self.n)
        src = self.samples if row.operation == "histogram_valid" else self.src[row.dtype]
        aux = self._array(("valid", row.tile, row.grid(self.n))) if row.operation.endswith("_valid") else \
            self._array(("aux", "int32", 1))
        dst = self._array(("dst", "int32" if row.output == "histogram" else row.dtype, dst_n))
        return src, aux, dst, self._array(("out2", "int32", out2_n))

    def view(self, row: Row, framework: str) -> tuple:
        key = (row.name, framework)
        if key not in self._views:
            arrays = self.arrays(row)
            if framework == "numba":
                from numba_cuda_mlir import cuda

                self._views[key] = tuple(cuda.as_cuda_array(a) for a in arrays)
            elif framework == "torch":
                import torch

                self._views[key] = tuple(torch.from_dlpack(a) for a in arrays)
            else:
                import torch
                from cutlass.cute.runtime import from_dlpack

                self._views[key] = tuple(from_dlpack(torch.from_dlpack(a)) for a in arrays)
        return self._views[key]

    def poison(self, row: Row) -> None:
        import cupy as cp

        _, _, dst, out2 = self.arrays(row)
        dst.view(cp.uint32).fill(POISON)
        out2.view(cp.uint32).fill(POISON)
        self.atomic_launches = 0

    def host(self, row: Row) -> tuple[np.ndarray, np.ndarray | None]:
        import cupy as cp

        src, aux = self.arrays(row)[:2]
        key = (row.operation == "histogram_valid", row.dtype, row.tile if row.operation.endswith("_valid") else 0)
        if key not in self._host:
            self._host[key] = (cp.asnumpy(src), cp.asnumpy(aux) if key[2] else None)
        return self._host[key]

    def reference(self, row: Row) -> dict:
        if row.name not in self._refs:
            src, valid = self.host(row)
            self._refs[row.name] = oracle(row, src, valid)
        return self._refs[row.name]

    def written(self, row: Row) -> int | None:
        """Items the row writes (select, segment sums) or reads (partial tiles), from the oracle's data."""
        if row.operation in ("select", "segment_sums"):
            return int(self.reference(row)["out2"].sum())
        if row.operation.endswith("_valid"):
            return int(self.host(row)[1].sum())
        return None

    def verify(self, row: Row) -> bool:
        import cupy as cp

        want = self.reference(row)
        _, _, dst, out2 = self.arrays(row)
        got = cp.asnumpy(dst)
        if row.operation == "topk":
            return check_topk(row, self.host(row)[0], got, cp.asnumpy(out2), want["keys"])
        if row.operation == "histogram_valid":  # every launch since the poison added the counts
            expect = (POISON + self.atomic_launches * want["dst"]) % (1 << 32)
            return self.atomic_launches > 0 and bool(np.array_equal(got.view(np.uint32).astype(np.uint64), expect))
        if not np.array_equal(got.view(np.uint32), want["dst"].view(np.uint32)):
            return False
        return "out2" not in want or bool(np.array_equal(cp.asnumpy(out2[:want["out2"].size]), want["out2"]))


# --- launchers ----------------------------------------------------------------------------------

def numba_launcher(row: Row, data: Data):
    args = data.view(row, "numba")
    configured = numba_kernel(row)[row.grid(data.n), THREADS]
    return lambda: configured(*args)


def cute_launcher(row: Row, data: Data):
    import cutlass.cute as cute
    from cuda.bindings import driver as cudrv

    from . import beyond_cute_kernels

    args = data.view(row, "cute")
    stream = cudrv.CUstream(0)
    compiled = cute.compile(beyond_cute_kernels.launcher(row), *args, stream)
    return lambda: compiled(*args, stream)


def cub_launcher(row: Row, data: Data, function):
    args, grid = data.arrays(row), row.grid(data.n)
    return lambda: function((grid,), (THREADS,), args)


def triton_launcher(row: Row, data: Data):
    from . import triton_beyond

    return triton_beyond.launcher(row, *data.view(row, "torch"))


def _counted(row: Row, data: Data, launch):
    if row.operation != "histogram_valid":
        return launch

    def counted() -> None:
        data.atomic_launches += 1
        launch()

    return counted


# --- the run ----------------------------------------------------------------------------------------

def _record(row: Row, impl: str, n: int, batches: list[float] | None, verified: bool | None, written: int | None,
            **extra) -> dict:
    record = {"type": "beyond", "row": row.name, "operation": row.operation, "dtype": row.dtype,
              "shape": f"{row.width or THREADS}x{row.items}", "top": row.top, "impl": impl, "n": n,
              "bytes": bytes_moved(row, n, written), **extra}
    if batches:
        ms = statistics.median(batches)
        record.update(ms=ms, ms_min=min(batches), gbps=gbps(record["bytes"], ms), verified=bool(verified))
        print(f"  {impl:8s} {record['gbps']:8.1f} GB/s  {ms * 1e3:8.1f} us  {'ok' if verified else 'WRONG OUTPUT'}",
              flush=True)
    elif "error" in record:
        print(f"  {impl:8s} FAILED: {record['error'].splitlines()[-1][:200]}", flush=True)
    return record


def run(settings: dict, outdir: Path, rows_: list[Row]) -> tuple[list[dict], dict]:
    n = settings["n"]
    records: list[dict] = []
    env: dict = {"n": n, "threads": THREADS}
    build = start_cub_build(rows_, outdir / "cub_build")
    import cupy as cp
    import torch

    if not torch.cuda.is_available():
        raise RuntimeError("torch sees no CUDA device")
    env["gpu"] = torch.cuda.get_device_name(0)
    data = Data(n)
    launchers: dict[tuple[str, str], object] = {}
    errors: dict[tuple[str, str], str] = {}
    resources: dict[tuple[str, str], dict] = {}
    for row in rows_:
        print(f"build {row.name}", flush=True)
        for impl, make, res in (("numba", numba_launcher, numba_resources), ("cute", cute_launcher, cute_resources)):
            try:
                resources[(row.name, impl)] = res(row, n)
                launchers[(row.name, impl)] = _counted(row, data, make(row, data))
            except Exception as exc:
                errors[(row.name, impl)] = _error(exc)
        if row.triton:
            try:
                launchers[(row.name, "triton")] = _counted(row, data, triton_launcher(row, data))
            except Exception as exc:
                errors[(row.name, "triton")] = _error(exc)
    where, build_error, usage = wait_cub_build(build)
    for row in rows_:
        try:
            if build_error:
                raise RuntimeError(build_error)
            function = cub_build.load({row.symbol: where[row.symbol]})[row.symbol]
            launchers[(row.name, "cub_cpp")] = _counted(row, data, cub_launcher(row, data, function))
            resources[(row.name, "cub_cpp")] = usage.get(row.symbol, {})
        except Exception as exc:
            errors[(row.name, "cub_cpp")] = _error(exc)
    cp.cuda.runtime.deviceSynchronize()
    for row in rows_:
        print(row.name, flush=True)
        samples: dict[str, list] = {impl: [] for impl in IMPLS}
        ok = {impl: True for impl in IMPLS}
        for _ in range(settings["rounds"]):
            for impl in IMPLS:
                key = (row.name, impl)
                if key not in launchers or key in errors:
                    continue
                try:
                    data.poison(row)
                    timing = time_launches(launchers[key], settings["warmup"], settings["reps"], settings["inner"])
                    samples[impl] += timing.batches_ms
                    ok[impl] &= data.verify(row)
                except Exception as exc:
                    errors[key] = _error(exc)
        written = data.written(row)
        for impl in IMPLS:
            key = (row.name, impl)
            if key not in launchers and key not in errors:
                continue  # Triton has no such operation
            extra = {"error": errors[key]} if key in errors else {}
            extra.update(resources.get(key, {}))
            records.append(_record(row, impl, n, samples[impl] if key not in errors else None, ok[impl], written,
                                   **extra))
    ratios(records)
    return records, env


def ratios(records: list[dict]) -> None:
    """ratio_vs_cub_cpp and ratio_vs_triton on the numba and CuTe rows; verified rows only."""
    ok = [r for r in records if r.get("verified")]
    cub = {r["row"]: r["gbps"] for r in ok if r["impl"] == "cub_cpp"}
    triton = {r["row"]: r["gbps"] for r in ok if r["impl"] == "triton"}
    for r in ok:
        if r["impl"] in ("numba", "cute") and r["row"] in cub:
            r["ratio_vs_cub_cpp"] = r["gbps"] / cub[r["row"]]
        if r["impl"] in ("numba", "cute") and r["row"] in triton:
            r["ratio_vs_triton"] = r["gbps"] / triton[r["row"]]


def dry_run(n: int, outdir: Path, rows_: list[Row]) -> tuple[list[dict], dict]:
    """No GPU: every numba and CuTe kernel built for sm_90 with compile_kernel, the twins with nvcc."""
    records: list[dict] = []
    build = start_cub_build(rows_, outdir / "cub_build")
    for row in rows_:
        for impl, res in (("numba", numba_resources), ("cute", cute_resources)):
            try:
                r = res(row, n)
                records.append({"type": "beyond_dry", "row": row.name, "impl": impl, **r})
                print(f"{row.name:40s} {impl:6s} {r['registers']:4d} regs {r['local_bytes']:5d} B local "
                      f"{r['shared_bytes']:6d} B shared {r['build_seconds']:6.2f} s", flush=True)
            except Exception as exc:
                records.append({"type": "beyond_dry", "row": row.name, "impl": impl, "error": _error(exc)})
                print(f"{row.name:40s} {impl:6s} FAILED {records[-1]['error'].splitlines()[-1][:300]}", flush=True)
    _, build_error, usage = wait_cub_build(build)
    for row in rows_:
        record = {"type": "beyond_dry", "row": row.name, "impl": "cub_cpp"}
        if build_error:
            record["error"] = build_error
        elif row.symbol in usage:
            record.update(usage[row.symbol])
        else:
            record["error"] = f"{row.symbol} missing from the cubin (or cuobjdump not found)"
        records.append(record)
    built = {impl: sum(1 for r in records if r["impl"] == impl and "error" not in r) for impl in
             ("numba", "cute", "cub_cpp")}
    print(f"built: numba {built['numba']}/{len(rows_)}, CuTe {built['cute']}/{len(rows_)}, CUB twins "
          f"{built['cub_cpp']}/{len(rows_)}{'; nvcc: ' + build_error.splitlines()[-1] if build_error else ''}",
          flush=True)
    return records, {"n": n, "threads": THREADS}


# --- report -------------------------------------------------------------------------------------------

def _cell(record: dict | None, key: str = "gbps", fmt: str = "{:.0f}") -> str:
    if record is None:
        return "-"
    if "error" in record:
        return "error"
    if key == "gbps" and not record.get("verified", True):
        return "WRONG"
    value = record.get(key)
    return "-" if value is None else fmt.format(value)


def report(records: list[dict], env: dict, mode: str, rows_: list[Row]) -> str:
    lines = [f"# Issue 42 rows ({mode}, n = {env['n']})", "",
             f"GPU: {env.get('gpu', 'not used (dry run)')}. 256 threads per block. GB/s = bytes read + written / "
             "median time per launch (every output poisoned before and checked exactly against NumPy after its "
             "round). numba / CuTe = the tile kernel with cuda.coop calls on each backend; CUB C++ = the nvcc twin "
             "(cub/beyond.cu); Triton where it has the operation.", ""]
    by = {(r["row"], r["impl"]): r for r in records}
    if mode == "dry":
        lines += ["| row | numba regs | numba local B | CuTe regs | CuTe local B | CuTe CALLs | CUB regs | "
                  "CUB local B |", "|---|--:|--:|--:|--:|--:|--:|--:|"]
        for row in rows_:
            nb, c, cb = by.get((row.name, "numba")), by.get((row.name, "cute")), by.get((row.name, "cub_cpp"))
            lines.append(f"| {row.name} | {_cell(nb, 'registers', '{}')} | {_cell(nb, 'local_bytes', '{}')} | "
                         f"{_cell(c, 'registers', '{}')} | {_cell(c, 'local_bytes', '{}')} | "
                         f"{_cell(c, 'calls', '{}')} | {_cell(cb, 'registers', '{}')} | "
                         f"{_cell(cb, 'local_bytes', '{}')} |")
    else:
        lines += ["| row | numba GB/s | CuTe GB/s | CUB C++ GB/s | Triton GB/s | numba / CUB | CuTe / CUB | "
                  "numba / Triton | CuTe / Triton |", "|---|--:|--:|--:|--:|--:|--:|--:|--:|"]
        for row in rows_:
            nb, c, cb, tr = (by.get((row.name, impl)) for impl in IMPLS)
            lines.append(f"| {row.name} | {_cell(nb)} | {_cell(c)} | {_cell(cb)} | "
                         f"{_cell(tr) if row.triton else 'none'} | {_cell(nb, 'ratio_vs_cub_cpp', '{:.3f}')} | "
                         f"{_cell(c, 'ratio_vs_cub_cpp', '{:.3f}')} | {_cell(nb, 'ratio_vs_triton', '{:.2f}')} | "
                         f"{_cell(c, 'ratio_vs_triton', '{:.2f}')} |")
        for impl in ("numba", "cute"):
            values = [r["ratio_vs_cub_cpp"] for r in records if r["impl"] == impl and "ratio_vs_cub_cpp" in r]
            if values:
                misses = sorted(r["row"] for r in records if r["impl"] == impl and r.get("ratio_vs_cub_cpp", 1) < 0.99)
                lines += ["", f"{impl} / CUB C++: geomean {statistics.geometric_mean(values):.3f}, lowest "
                              f"{min(values):.3f} ({len(values)} rows); below 0.99x: {', '.join(misses) or 'none'}."]
    failed = [r for r in records if "error" in r]
    if failed:
        lines += ["", "## Errors", ""]
        lines += [f"* {r['row']} / {r['impl']}: `{r['error'].splitlines()[-1][:300]}`" for r in failed]
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.beyond", description=__doc__.split("\n\n")[0])
    p.add_argument("outdir", nargs="?", default=str(ROOT / "bench-out" / "beyond"), help="where the results go")
    p.add_argument("--quick", action="store_true", help="2^24 elements, fewer repeats: a smoke run")
    p.add_argument("--dry-run", action="store_true", help="no GPU: build every kernel and twin, print registers")
    p.add_argument("--only", default="", help="a regular expression: only the rows whose name matches")
    args = p.parse_args(argv)
    rows_ = [row for row in ROWS if re.search(args.only, row.name)]
    settings = dict(QUICK if args.quick or args.dry_run else FULL)
    outdir = Path(args.outdir).resolve()
    outdir.mkdir(parents=True, exist_ok=True)
    mode = "dry" if args.dry_run else ("quick" if args.quick else "full")
    print(f"== benchmarks.beyond ({mode}, n = {settings['n']}, {len(rows_)} rows) -> {outdir}", flush=True)
    try:
        records, env = dry_run(settings["n"], outdir, rows_) if args.dry_run else run(settings, outdir, rows_)
    except Exception:
        traceback.print_exc()
        records, env = [{"type": "error", "row": "run", "impl": "-", "error": traceback.format_exc()[-4000:]}], {
            "n": settings["n"]}
    env.update(mode=mode, **{k: settings[k] for k in ("warmup", "reps", "inner", "rounds")})
    (outdir / "beyond_results.json").write_text(json.dumps({"env": env, "records": records}, indent=1, default=str)
                                                + "\n")
    text = report(records, env, mode, rows_)
    (outdir / "BEYOND_RESULTS.md").write_text(text)
    print(text, flush=True)
    return 2 if any("error" in r for r in records) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
