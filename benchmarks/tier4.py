"""Tier 4 (issue 9, Benchmarks): block histogram, adjacent difference, discontinuity heads, run-length decode
and batched warp reduction: cuda.coop against CUB C++ (and Triton's ``tl.histogram``).

A family module shaped like ``collectives.py``. Every kernel name contains ``histogram``, ``adjacent``,
``discontinuity``, ``run_length`` or ``reduce_batched`` (and no kernel of another family does), so
``--only 'histogram|adjacent|discontinuity|run_length|reduce_batched'`` runs this family alone. Each block
processes one tile of 256 threads x K items; block ``b`` takes tile ``b``. int32 arithmetic wraps (mod 2^32)
everywhere; the NumPy oracles compute in uint32 and compare bit patterns.

Inputs, derived once per buffer set from the runner's random ``src`` (kept with the buffers):

* histogram: uint8 ``src`` as it is; int32 samples are ``src & 255``.
* adjacent difference: ``src`` (full int32 range, so differences wrap).
* discontinuity heads: sorted keys in runs, ``cumsum(src & 3 == 0)`` (a head at about one item in four).
* run-length decode: ``n`` runs, values ``src``, lengths uniform in [1, 8] from their own generator; block ``b``
  decodes runs ``[b*T*R, (b+1)*T*R)`` and writes them at ``offsets[b]``, the exclusive prefix sum of the
  blocks' decoded sizes (computed on the device before timing).

Outputs besides ``dst`` (poisoned before every round like ``dst``): a 256-bin global histogram that each
block adds its counters into with one atomicAdd per bin, the decoded stream, and the batched sums.
"""
from __future__ import annotations

import functools

import numpy as np
from numba_cuda_mlir import cuda  # noqa: I001  (the compiler first, then cuda.coop)
import cuda.coop.numba_mlir as numba_coop  # noqa: F401  (registers the backend)
from cuda import coop
from numba_cuda_mlir import cuda  # noqa: F811  (keep the name `cuda` bound to numba's)

from . import read_ceiling
from .common import Buffers, Case, outputs_equal
from .common import poison as poison_dst

FAMILY = "tier4"
CUB_SOURCE = "tier4.cu"
THREADS = 256
WARPS = THREADS // 32
BINS = 256  # one bin per thread: bins_per_thread = 1
HISTOGRAM_ITEMS = {"uint8": (16,), "int32": (4, 16)}
HISTOGRAM_ALGORITHMS = ("atomic", "sort")  # CUB's default first
HISTOGRAM_LOAD = "striped"  # a histogram does not care about the order: coalesced loads, no shared memory
ADJACENT_ITEMS = (4, 16)
ADJACENT_IO = ("direct", "transpose")  # the load and store around the difference / the flags
BOUNDARIES = ("predecessor", "none")  # tile_predecessor_item = the previous tile's last item, or no boundary item
RUNS_PER_THREAD = 4
DECODED_ITEMS = (4, 8)  # decoded_items_per_thread: windows of T*D items
MAX_RUN = 8  # run lengths are uniform in [1, MAX_RUN]
RUN_LOAD = "vectorize"  # blocked runs, one 16-byte load per operand and thread at R = 4
BATCHES = (8, 32, 64)  # B = 8: CUB's redux.sync path; 32: one result per lane; 64: two (shuffle trees)
BATCH_LOAD = "vectorize"  # lane r holds row r of its warp's 32 x B row-major tile (blocked)
DTYPE = "int32"
POISON = 0x5A5A5A5A  # common.poison's pattern, also written to the family's other outputs
LENGTH_SEED = 90210
_CTYPE = {"int32": "int", "uint8": "unsigned char"}
_DECODED_TOTAL: dict[int, int] = {}  # n -> decoded items of the run-length stream (for bytes_moved)


def cases() -> list[Case]:
    out: list[Case] = []

    def add(kernel, group, algorithm, k, dtype, impls, operation, io=""):
        out.append(Case(FAMILY, kernel, group, algorithm, THREADS, k, dtype, impls, "", operation, io))

    for dtype, items in HISTOGRAM_ITEMS.items():
        for k in items:
            for alg in HISTOGRAM_ALGORITHMS:
                add(f"block_histogram_{alg}_{THREADS}x{k}_{dtype}", "block", alg, k, dtype, ("coop", "cub_cpp"),
                    "histogram", HISTOGRAM_LOAD)
            # Triton: one program per tile (num_warps=8 is 256 threads), tl.histogram then atomic adds.
            add(f"tile_histogram_{THREADS}x{k}_{dtype}", "", "", k, dtype, ("triton",), "histogram")
    # algorithm: "left" / "heads" without a boundary item, "..._predecessor" with the previous tile's last item.
    for op, prefix, mode in (("adjacent_difference", "adjacent_difference", "left"),
                             ("discontinuity_heads", "discontinuity", "heads")):
        for k in ADJACENT_ITEMS:
            for boundary in BOUNDARIES:
                alg = f"{mode}_predecessor" if boundary == "predecessor" else mode
                for io in ADJACENT_IO:
                    add(f"block_{prefix}_{alg}_{io}_{THREADS}x{k}_{DTYPE}", "block", alg, k, DTYPE,
                        ("coop", "cub_cpp"), op, io)
    for d in DECODED_ITEMS:  # items_per_thread = runs per thread; the algorithm names the window
        add(f"block_run_length_decode_d{d}_{THREADS}x{RUNS_PER_THREAD}_{DTYPE}", "block", f"d{d}",
            RUNS_PER_THREAD, DTYPE, ("coop", "cub_cpp"), "run_length_decode", RUN_LOAD)
    for b in BATCHES:
        add(f"warp_reduce_batched_sum_{THREADS}x{b}_{DTYPE}", "warp", "", b, DTYPE, ("coop", "cub_cpp"),
            "reduce_batched", BATCH_LOAD)
    return out


def _boundary(case: Case) -> bool:
    return case.algorithm.endswith("_predecessor")


def _decoded_items(case: Case) -> int:
    return int(case.algorithm[1:])


def bytes_moved(case: Case, n: int, itemsize: int) -> int:
    """Bytes read + written. Histogram: the samples, plus one 4-byte atomic per bin and block. Run-length decode:
    values, lengths and each block's offset read, the decoded stream written. Batched reduction: the input, plus
    one result per 32 inputs."""
    if case.operation == "histogram":
        return n * itemsize + case.grid(n) * BINS * 4
    if case.operation == "run_length_decode":
        total = _DECODED_TOTAL.get(n, n * (MAX_RUN + 1) // 2)
        return 2 * n * 4 + case.grid(n) * 8 + total * 4
    if case.operation == "reduce_batched":
        return (n + n // 32) * itemsize
    return 2 * n * itemsize  # copy, difference, flags (int32): each element read once and written once


# --- inputs, outputs, poisoning and checks ---------------------------------------------

def _state(buffers: Buffers) -> dict:
    state = buffers.views.get(FAMILY)
    if state is None:
        state = buffers.views[FAMILY] = {"arrays": {}, "views": {}, "host": {}, "refs": {}, "atomic_launches": 0}
    return state


def _array(buffers: Buffers, name: str):
    """A device (cupy) array of the family, made on first use: inputs derived from ``src`` or outputs."""
    state = _state(buffers)
    arrays = state["arrays"]
    if name in arrays:
        return arrays[name]
    import cupy as cp

    src, n = buffers.src, buffers.n
    if name == "histogram":
        array = cp.empty(BINS, dtype=cp.int32)
        array.view(cp.uint32).fill(POISON)
    elif name == "samples":  # histogram samples in [0, 256)
        array = src if src.dtype == cp.uint8 else cp.bitwise_and(src, BINS - 1)
    elif name == "runs":  # sorted keys: a new run where the random input's low two bits are zero
        array = cp.cumsum(cp.bitwise_and(src, 3) == 0, dtype=cp.int32)
    elif name == "lengths":
        rs = cp.random.RandomState(LENGTH_SEED)
        array = rs.randint(1, MAX_RUN + 1, size=n, dtype=cp.int64).astype(cp.int32)
    elif name.startswith("offsets_"):  # offsets_<tile>: where each block's decoded segment starts
        tile = int(name.split("_")[1])
        per_block = _array(buffers, "lengths").reshape(-1, tile).sum(axis=1, dtype=cp.int64)
        array = cp.cumsum(per_block, dtype=cp.int64) - per_block
    elif name == "decoded":
        total = int(_array(buffers, "lengths").sum(dtype=cp.int64))
        _DECODED_TOTAL[n] = total
        array = cp.empty(total, dtype=cp.int32)
        array.view(cp.uint32).fill(POISON)
    elif name == "batched":  # one result per 32 inputs (a warp's 32 x B tile gives B sums)
        array = cp.empty(n // 32, dtype=cp.int32)
        array.view(cp.uint32).fill(POISON)
    else:
        raise KeyError(name)
    cp.cuda.runtime.deviceSynchronize()
    arrays[name] = array
    return array


def _view(buffers: Buffers, name: str, framework: str):
    """``_array`` wrapped once per framework (see Buffers.numba: no per-launch synchronisation)."""
    state = _state(buffers)
    key = (name, framework)
    if key not in state["views"]:
        array = _array(buffers, name)
        if framework == "numba":
            state["views"][key] = cuda.as_cuda_array(array)
        else:
            import torch

            state["views"][key] = torch.from_dlpack(array)
    return state["views"][key]


_OUTPUTS = ("histogram", "decoded", "batched")


def poison(buffers: Buffers) -> None:
    """dst and every output array made so far get the poison pattern; the atomic launch count starts again."""
    import cupy as cp

    poison_dst(buffers)
    state = _state(buffers)
    for name in _OUTPUTS:
        if name in state["arrays"]:
            state["arrays"][name].view(cp.uint32).fill(POISON)
    state["atomic_launches"] = 0


def _host(buffers: Buffers, name: str) -> np.ndarray:
    """A host copy of ``src`` or of a derived input, made once."""
    state = _state(buffers)
    if name not in state["host"]:
        import cupy as cp

        state["host"][name] = cp.asnumpy(buffers.src if name == "src" else _array(buffers, name))
    return state["host"][name]


def left_differences(x: np.ndarray, tile: int | None) -> np.ndarray:
    """x[p] - x[p-1], wrapping. ``tile=None``: one stream whose first item has predecessor 0 (every block's
    predecessor is the previous tile's last item); otherwise each tile's first item is copied unchanged."""
    u = x.view(np.uint32)
    out = u.copy()
    out[1:] = u[1:] - u[:-1]
    if tile is not None:
        out.reshape(-1, tile)[:, 0] = u.reshape(-1, tile)[:, 0]
    return out.view(np.int32)


def head_flags(x: np.ndarray, tile: int | None) -> np.ndarray:
    """1 where x[p] != x[p-1], as int32. ``tile=None``: one stream (the first item is a head); otherwise the
    first item of every tile is a head (no predecessor)."""
    flags = np.ones(x.size, np.int32)
    flags[1:] = x[1:] != x[:-1]
    if tile is not None:
        flags.reshape(-1, tile)[:, 0] = 1
    return flags


def batched_sums(x: np.ndarray, batches: int) -> np.ndarray:
    """Column sums of every warp's 32 x B row-major tile, wrapping: B results per warp, in batch order."""
    return x.view(np.uint32).reshape(-1, 32, batches).sum(axis=1, dtype=np.uint32).reshape(-1).view(np.int32)


def _reference(buffers: Buffers, key: tuple):
    """The NumPy oracle of one output, computed once and kept (on the device, except the histogram)."""
    state = _state(buffers)
    if key in state["refs"]:
        return state["refs"][key]
    import cupy as cp

    kind, arg = key
    if kind == "histogram":  # uint64 counts of the whole input
        ref = np.bincount(_host(buffers, "samples"), minlength=BINS).astype(np.uint64)
    elif kind == "adjacent_difference":
        ref = cp.asarray(left_differences(_host(buffers, "src"), arg))
    elif kind == "discontinuity_heads":
        ref = cp.asarray(head_flags(_host(buffers, "runs"), arg))
    elif kind == "run_length_decode":
        ref = cp.asarray(np.repeat(_host(buffers, "src"), _host(buffers, "lengths")))
    elif kind == "reduce_batched":
        ref = cp.asarray(batched_sums(_host(buffers, "src"), arg))
    else:
        raise KeyError(kind)
    state["refs"][key] = ref
    return ref


def verify(case: Case, buffers: Buffers) -> bool:
    import cupy as cp

    if case.operation == "copy":  # this family's copy-ceiling rows
        return outputs_equal(buffers)
    state = _state(buffers)
    if case.operation == "histogram":  # every launch since the poison added the input's counts
        got = cp.asnumpy(_array(buffers, "histogram").view(cp.uint32)).astype(np.uint64)
        launches = state["atomic_launches"]
        want = (POISON + launches * _reference(buffers, ("histogram", None))) % (1 << 32)
        return launches > 0 and bool(np.array_equal(got, want))
    if case.operation == "run_length_decode":
        return bool(cp.array_equal(_array(buffers, "decoded"), _reference(buffers, ("run_length_decode", None))))
    if case.operation == "reduce_batched":
        want = _reference(buffers, ("reduce_batched", case.items_per_thread))
        return bool(cp.array_equal(_array(buffers, "batched"), want))
    tile = None if _boundary(case) else case.tile
    return bool(cp.array_equal(buffers.dst, _reference(buffers, (case.operation, tile))))


# --- cuda.coop kernels ---------------------------------------------------------------

@functools.lru_cache(maxsize=None)
def coop_kernel(operation: str, algorithm: str, k: int, io: str = ""):
    """One dispatcher per (operation, algorithm, K, load/store), with the compile-time tile of the CUB kernels."""
    tile = THREADS * k
    if operation == "histogram":
        @cuda.jit
        def block_histogram(src, histogram):
            block = coop.this_block()
            base = np.int64(cuda.blockIdx.x) * tile
            samples = coop.ThreadData(k)
            coop.load(block, src, samples, algorithm=io, offset=base)
            counts = coop.histogram(block, samples, bins=BINS, algorithm=algorithm)  # thread t: bin t
            cuda.atomic.add(histogram, cuda.threadIdx.x, counts[0])

        return block_histogram
    if operation == "adjacent_difference" and algorithm == "left_predecessor":
        @cuda.jit
        def block_adjacent_difference_predecessor(src, dst):
            block = coop.this_block()
            base = np.int64(cuda.blockIdx.x) * tile
            items = coop.ThreadData(k)
            coop.load(block, src, items, algorithm=io, offset=base)
            # The previous tile's last item; the first tile's first item is copied (x - 0). Indexed as written, not
            # through block_discontinuity_heads_predecessor's stride-1 view: with the view, ptxas issued this load
            # between the tile's loads and the direct 256x4 row fell from 1.05x to 0.96x its twin (H100, RESULTS.md).
            predecessor = src[base - 1] if cuda.blockIdx.x > 0 else np.int32(0)
            out = coop.adjacent_difference(block, items, tile_predecessor_item=predecessor)
            coop.store(block, dst, out, algorithm=io, offset=base)

        return block_adjacent_difference_predecessor
    if operation == "adjacent_difference":
        @cuda.jit
        def block_adjacent_difference(src, dst):
            block = coop.this_block()
            base = np.int64(cuda.blockIdx.x) * tile
            items = coop.ThreadData(k)
            coop.load(block, src, items, algorithm=io, offset=base)
            out = coop.adjacent_difference(block, items)  # each tile's first item is copied
            coop.store(block, dst, out, algorithm=io, offset=base)

        return block_adjacent_difference
    if operation == "discontinuity_heads" and algorithm == "heads_predecessor":
        @cuda.jit
        def block_discontinuity_heads_predecessor(keys, dst):
            block = coop.this_block()
            base = np.int64(cuda.blockIdx.x) * tile
            items = coop.ThreadData(k)
            coop.load(block, keys, items, algorithm=io, offset=base)
            # The previous tile's last key; the first tile's first key differs from its complement: a head. Read
            # through a stride-1 view at an unsigned index (numba's arrays carry a run-time stride, and a signed
            # index is tested for a negative value): the one address computed as the twin computes it.
            flat = keys.ravel()
            predecessor = flat[np.uint64(base - 1)] if cuda.blockIdx.x > 0 else np.int32(~flat[0])
            flags = coop.discontinuity(block, items, tile_predecessor_item=predecessor)
            coop.store(block, dst, flags, algorithm=io, offset=base)

        return block_discontinuity_heads_predecessor
    if operation == "discontinuity_heads":
        @cuda.jit
        def block_discontinuity_heads(keys, dst):
            block = coop.this_block()
            base = np.int64(cuda.blockIdx.x) * tile
            items = coop.ThreadData(k)
            coop.load(block, keys, items, algorithm=io, offset=base)
            flags = coop.discontinuity(block, items, mode="heads")  # each tile's first key is a head
            coop.store(block, dst, flags, algorithm=io, offset=base)

        return block_discontinuity_heads
    if operation == "run_length_decode":
        decoded_items = int(algorithm[1:])

        @cuda.jit
        def block_run_length_decode(values, lengths, offsets, decoded):
            block = coop.this_block()
            base = np.int64(cuda.blockIdx.x) * tile
            run_values = coop.ThreadData(k)
            run_lengths = coop.ThreadData(k)
            coop.load(block, values, run_values, algorithm=io, offset=base)
            coop.load(block, lengths, run_lengths, algorithm=io, offset=base)
            coop.run_length_decode_into(block, run_values, run_lengths, decoded,
                                        decoded_items_per_thread=decoded_items,
                                        destination_offset=offsets[cuda.blockIdx.x])

        return block_run_length_decode
    if operation == "reduce_batched":
        slots = -(-k // 32)  # ceil(B / 32) results per lane

        @cuda.jit
        def warp_reduce_batched(src, out):
            warp = coop.this_warp()
            base = np.int64(cuda.blockIdx.x) * tile  # the block's tile; each warp adds its own origin
            items = coop.ThreadData(k)
            coop.load(warp, src, items, algorithm=io, offset=base)  # lane r: row r of the warp's 32 x B tile
            sums = coop.reduce_batched(warp, items)  # striped: lane r slot i holds batch r + 32*i
            lane = cuda.threadIdx.x & 31
            first = (np.int64(cuda.blockIdx.x) * WARPS + (cuda.threadIdx.x >> 5)) * k
            for i in range(slots):
                batch = lane + i * 32
                if batch < k:
                    out[first + batch] = sums[i]

        return warp_reduce_batched
    raise ValueError(f"no cuda.coop kernel for {operation} {algorithm}")


def numba_kernel(impl: str, case: Case):
    return coop_kernel(case.operation, case.algorithm, case.items_per_thread, case.io)


def compile_args(impl: str, case: Case, sample) -> tuple:
    """Arguments for numba_coop.compile_kernel with the types of the launch (``sample`` has the case's dtype)."""
    if case.operation == "histogram":
        return (sample, np.zeros(BINS, np.int32))
    if case.operation == "run_length_decode":
        return (sample, sample, np.zeros(1, np.int64), sample)
    return (sample, sample)


# --- launchers -----------------------------------------------------------------------

_MACROS = {"histogram": "BENCH_BLOCK_HISTOGRAM", "adjacent_difference": "BENCH_ADJACENT_DIFFERENCE_LEFT",
           "discontinuity_heads": "BENCH_DISCONTINUITY_HEADS", "run_length_decode": "BENCH_RUN_LENGTH_DECODE",
           "reduce_batched": "BENCH_WARP_REDUCE_BATCHED"}


def cub_symbol(case: Case) -> str:
    return f"cub_{case.kernel}"


def cub_instances(all_cases: list[Case]) -> list[tuple[str, str]]:
    """(symbol, extern "C" instantiation line) per CUB kernel (macros of cub/tier4.cu)."""
    lines = []
    for case in all_cases:
        if "cub_cpp" not in case.impls:
            continue
        args = [cub_symbol(case), _CTYPE[case.dtype], str(case.threads), str(case.items_per_thread)]
        if case.operation == "histogram":
            args.append(case.algorithm.upper())
        elif case.operation in ("adjacent_difference", "discontinuity_heads"):
            args += [case.io.upper(), "true" if _boundary(case) else "false"]
        elif case.operation == "run_length_decode":
            args.append(str(_decoded_items(case)))
        lines.append((cub_symbol(case), f"{_MACROS[case.operation]}({', '.join(args)})"))
    return lines


def _arguments(case: Case, buffers: Buffers, framework: str) -> tuple:
    """The kernel arguments of ``case``: cupy arrays for CUB C++, numba or torch views for the others."""
    def get(name):
        if name in ("src", "dst"):
            if framework == "cupy":
                return getattr(buffers, name)
            views = buffers.numba() if framework == "numba" else buffers.torch()
            return views[0] if name == "src" else views[1]
        return _array(buffers, name) if framework == "cupy" else _view(buffers, name, framework)

    if case.operation == "histogram":
        return get("samples"), get("histogram")
    if case.operation == "discontinuity_heads":
        return get("runs"), get("dst")
    if case.operation == "run_length_decode":
        return get("src"), get("lengths"), get(f"offsets_{case.tile}"), get("decoded")
    if case.operation == "reduce_batched":
        return get("src"), get("batched")
    return get("src"), get("dst")


def launcher(impl: str, case: Case, buffers: Buffers, cub_functions: dict | None = None):
    """A no-argument callable that launches ``impl`` of ``case`` once, asynchronously."""
    grid = case.grid(buffers.n)
    if impl == "coop":
        args = _arguments(case, buffers, "numba")
        configured = numba_kernel(impl, case)[grid, case.threads]
        launch = lambda: configured(*args)  # noqa: E731
    elif impl == "cub_cpp":
        fn = cub_functions[cub_symbol(case)]
        args = _arguments(case, buffers, "cupy")
        launch = lambda: fn((grid,), (case.threads,), args)  # noqa: E731
    elif impl == "triton":
        from . import triton_tier4

        src, histogram = _arguments(case, buffers, "torch")
        launch = triton_tier4.histogram_launcher(src, histogram, case.tile, BINS, case.threads // 32)
    else:
        raise ValueError(f"no {impl} implementation of {case.kernel}")
    if case.operation != "histogram":
        return launch
    state = _state(buffers)

    def counted() -> None:  # verify() needs the number of launches since the poison
        state["atomic_launches"] += 1
        launch()

    return counted


def copy_launchers(buffers: Buffers) -> dict[str, object]:
    """The copy ceiling, measured again in this family's run (named apart from the other families' rows)."""
    import cupy as cp

    src, dst, nbytes = buffers.src, buffers.dst, buffers.nbytes
    kind = cp.cuda.runtime.memcpyDeviceToDevice
    return {f"memcpy_d2d_{buffers.dtype}_for_{FAMILY}":
            lambda: cp.cuda.runtime.memcpyAsync(dst.data.ptr, src.data.ptr, nbytes, kind, 0)}


def read_launchers(buffers: Buffers) -> dict:
    """The read-only ceiling of reduce_batched, measured in this family's run."""
    return read_ceiling.launchers(buffers, FAMILY)
