"""Block sum, tile exclusive sum, warp sum and exchange: cuda.coop, CUB C++, plain
numba-cuda-mlir and Triton (issue 4, Benchmarks).

A family module shaped like ``load_store.py``. Every kernel name contains ``sum`` or
``exchange`` (and no load_store kernel does), so ``--only 'sum|exchange'`` runs this family
alone. int32 arithmetic wraps (mod 2^32) in every implementation; the NumPy oracles compute
in uint32, where wrapping is defined, and compare bit patterns.

Outputs: the n-element ``dst`` for the exclusive sum and the exchange; for the sums a small
``totals`` array (poisoned like ``dst``): ``totals[0]`` receives one atomicAdd per block,
``totals[b]`` the partial of block (or warp) ``b``.
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

FAMILY = "collectives"
CUB_SOURCE = "collectives.cu"
THREADS = 256
WARPS = THREADS // 32
DTYPE = "int32"
REDUCE_ALGORITHMS = ("warp_reductions", "raking", "raking_commutative_only")  # CUB's default first
SCAN_ALGORITHMS = ("raking", "raking_memoize", "warp_scans")  # CUB's default first
SCAN_LOAD = "transpose"  # load and store of the tile exclusive sum (BLOCK_LOAD/STORE_TRANSPOSE)
# At 4 items a thread's items are one 16-byte vector: the vectorized load/store is coalesced
# without the transpose's shared-memory round trip and its two barriers.
SCAN_VECTORIZE_ITEMS = 4
SUM_LOAD = "striped"  # a sum does not care about the order: coalesced loads, no shared memory
ATOMIC_ITEMS = 16  # block sum with one atomicAdd per block
PARTIALS_ITEMS = 4  # block sum writing one partial per block
SCAN_ITEMS = (4, 16)
WARP_ITEMS = (4, 16)
EXCHANGE_ITEMS = (4, 16)
POISON = 0x5A5A5A5A  # common.poison's pattern, also written to ``totals``
# 8-byte rows (issue 12): the block sum and the tile exclusive sum with CUB's default algorithms at 256x4.
# float64 inputs are integers of magnitude < 2^13 (``_exact_floats``): every partial sum that any order of
# additions forms is an exact integer, so float results compare exactly with NumPy's.
WIDE_DTYPES = ("int64", "float64")
WIDE_ITEMS = 4
_CTYPE = {"int32": "int", "int64": "long long", "float64": "double"}
# Triton's warp sum: one program per block tile, an [8, 32 * K] tile (one row per warp's 32 x K tile) on 8
# warps, so each program has as much work as a cuda.coop block (a [32 * K] tile on 1 warp starves Triton).
TRITON_WARP_ROWS = WARPS
# What each hand-written kernel is (RESULTS.md labels the hand-written column with it).
HANDWRITTEN_NOTES = {
    "tree": "straightforward port: striped loads, a shared-memory tree with a barrier per level",
    "shuffle": "straightforward port, one fix: the int32 sum narrowed back from Numba's int64 before the five "
               "shfl_down steps (32-bit shuffles)",
    "smem_scan": "straightforward port: tile staged in shared memory, per-thread serial scan, Hillis-Steele "
                 "scan of the thread totals (two barriers per step)",
    "smem_exchange": "straightforward port: striped loads into shared memory, one barrier, blocked reads",
}


def cases() -> list[Case]:
    out: list[Case] = []

    def add(kernel, group, algorithm, threads, k, impls, variant, operation, io=""):
        out.append(Case(FAMILY, kernel, group, algorithm, threads, k, DTYPE, impls, variant, operation, io))

    # The hand-written kernel is paired with the default algorithm; Triton has no algorithm choice.
    for op, k in (("sum_atomic", ATOMIC_ITEMS), ("sum_partials", PARTIALS_ITEMS)):
        for alg in REDUCE_ALGORITHMS:
            hand = ("handwritten",) if alg == REDUCE_ALGORITHMS[0] else ()
            add(f"block_{op}_{alg}_{THREADS}x{k}_{DTYPE}", "block", alg, THREADS, k, ("coop", "cub_cpp") + hand,
                "tree" if hand else "", op)
        add(f"tile_{op}_{THREADS}x{k}_{DTYPE}", "", "", THREADS, k, ("triton",), "", op)
    for k in SCAN_ITEMS:
        for alg in SCAN_ALGORITHMS:
            hand = ("handwritten",) if alg == SCAN_ALGORITHMS[0] else ()
            add(f"block_exclusive_sum_{alg}_{THREADS}x{k}_{DTYPE}", "block", alg, THREADS, k,
                ("coop", "cub_cpp") + hand, "smem_scan" if hand else "", "exclusive_sum", SCAN_LOAD)
            if k == SCAN_VECTORIZE_ITEMS:
                add(f"block_exclusive_sum_{alg}_vectorize_{THREADS}x{k}_{DTYPE}", "block", alg, THREADS, k,
                    ("coop", "cub_cpp"), "", "exclusive_sum", "vectorize")
        add(f"tile_exclusive_sum_{THREADS}x{k}_{DTYPE}", "", "", THREADS, k, ("triton",), "", "exclusive_sum")
    for k in WARP_ITEMS:
        add(f"warp_sum_{THREADS}x{k}_{DTYPE}", "warp", "", THREADS, k, ("coop", "cub_cpp", "handwritten"), "shuffle",
            "sum")
        # Eight warps' tiles per program (num_warps=8): an [8, 32 x K] tile, one total per row.
        add(f"tile_warp_sum_{TRITON_WARP_ROWS}x{32 * k}_{DTYPE}", "", "", THREADS, k, ("triton",), "", "sum")
    for k in EXCHANGE_ITEMS:  # Triton has no exchange: its layouts are the compiler's business
        add(f"block_exchange_striped_to_blocked_{THREADS}x{k}_{DTYPE}", "block", "striped_to_blocked", THREADS, k,
            ("coop", "cub_cpp", "handwritten"), "smem_exchange", "exchange")
        # The same kernel with an explicit descriptor (auto_sync=False): no trailing reuse barrier,
        # the synchronisation of the CUB C++ kernel (compiler-owned scratch adds one by SPEC 6.3).
        add(f"block_exchange_striped_to_blocked_explicit_storage_{THREADS}x{k}_{DTYPE}", "block",
            "striped_to_blocked_explicit_storage", THREADS, k, ("coop", "cub_cpp"), "", "exchange")
        # How a kernel usually uses an exchange: coalesced striped accesses at both ends, blocked
        # order in between (striped_to_blocked, then blocked_to_striped back).
        add(f"block_exchange_round_trip_{THREADS}x{k}_{DTYPE}", "block", "round_trip", THREADS, k,
            ("coop", "cub_cpp"), "", "exchange")
    for dtype in WIDE_DTYPES:  # CUB's default algorithms only: the rows show the 8-byte types, not the algorithms
        k = WIDE_ITEMS
        out.append(Case(FAMILY, f"block_sum_partials_{REDUCE_ALGORITHMS[0]}_{THREADS}x{k}_{dtype}", "block",
                        REDUCE_ALGORITHMS[0], THREADS, k, dtype, ("coop", "cub_cpp"), "", "sum_partials"))
        for io in (SCAN_LOAD, "vectorize"):
            suffix = "_vectorize" if io == "vectorize" else ""
            out.append(Case(FAMILY, f"block_exclusive_sum_{SCAN_ALGORITHMS[0]}{suffix}_{THREADS}x{k}_{dtype}", "block",
                            SCAN_ALGORITHMS[0], THREADS, k, dtype, ("coop", "cub_cpp"), "", "exclusive_sum", io))
    return out


def _outputs(case: Case, n: int) -> int:
    """How many elements of ``totals`` a launch writes (0: it writes ``dst``)."""
    if case.operation == "sum_atomic":
        return 1
    if case.operation == "sum_partials":
        return case.grid(n)
    if case.operation == "sum":  # one total per warp
        return n // (32 * case.items_per_thread)
    return 0


def bytes_moved(case: Case, n: int, itemsize: int) -> int:
    """Bytes read + written: the input once, plus each element of dst or each total (one atomic per block)."""
    if case.operation == "sum_atomic":
        return (n + case.grid(n)) * itemsize
    written = _outputs(case, n)
    return (n + (written if written else n)) * itemsize


# --- outputs, poisoning and checks -----------------------------------------------------

def _state(buffers: Buffers) -> dict:
    """The family's extra device output and its host-side bookkeeping, kept with the buffers."""
    state = buffers.views.get(FAMILY)
    if state is None:
        import cupy as cp

        size = max([1] + [_outputs(c, buffers.n) for c in cases() if c.dtype == buffers.dtype])
        if buffers.dtype.startswith("float"):
            _exact_floats(buffers.src)
        state = buffers.views[FAMILY] = {"totals": cp.empty(size, dtype=buffers.dtype), "atomic_launches": 0,
                                         "refs": {}, "views": {}}
    return state


def _exact_floats(src) -> None:
    """Round a float input in place to integers in [-8191, 8191]: sums of up to 2^40 of them are exact in float64
    whatever the order of the additions, so a float sum or scan has one right answer."""
    import cupy as cp

    cp.clip(cp.rint(src), -8191, 8191, out=src)


def _totals(buffers: Buffers, framework: str):
    state = _state(buffers)
    totals = state["totals"]
    if framework == "cupy":
        return totals
    if framework not in state["views"]:
        if framework == "numba":
            state["views"]["numba"] = cuda.as_cuda_array(totals)  # see Buffers.numba: no per-launch sync
        else:
            import torch

            state["views"]["torch"] = torch.from_dlpack(totals)
    return state["views"][framework]


def poison(buffers: Buffers) -> None:
    """dst and totals get the poison pattern; the atomic launch count starts again from 0."""
    poison_dst(buffers)
    state = _state(buffers)
    state["totals"].view(np.uint32).fill(POISON)
    state["atomic_launches"] = 0


def _wrapping(src: np.ndarray) -> np.ndarray:
    """Integers as unsigned of the same width (where wrapping is defined); floats as they are."""
    return src.view(f"u{src.dtype.itemsize}") if src.dtype.kind == "i" else src


def tile_sums(src: np.ndarray, tile: int) -> np.ndarray:
    """Sum of each ``tile`` consecutive elements, integers wrapping mod 2^bits (the NumPy oracle)."""
    u = _wrapping(src)
    return u.reshape(-1, tile).sum(axis=1, dtype=u.dtype).view(src.dtype)


def tile_exclusive_sums(src: np.ndarray, tile: int) -> np.ndarray:
    """Exclusive prefix sum within each ``tile``, integers wrapping mod 2^bits (the NumPy oracle)."""
    u = _wrapping(src).reshape(-1, tile)
    return (np.cumsum(u, axis=1, dtype=u.dtype) - u).view(src.dtype).reshape(-1)


def atomic_expected(total: int, launches: int) -> int:
    """``totals[0]`` after ``launches`` atomic launches on the poisoned counter, as uint32."""
    return (POISON + launches * total) % (1 << 32)


def _reference(buffers: Buffers, key: tuple) -> object:
    """A NumPy oracle of the input (copied to the host once), kept on the device for the checks."""
    state = _state(buffers)
    if key not in state["refs"]:
        import cupy as cp

        if "host_src" not in state:
            state["host_src"] = cp.asnumpy(buffers.src)
        src = state["host_src"]
        kind, size = key
        if kind == "total":  # a Python int in [0, 2^32)
            state["refs"][key] = int(tile_sums(src, src.size).view(np.uint32)[0])
        elif kind == "sums":
            state["refs"][key] = cp.asarray(tile_sums(src, size))
        else:
            state["refs"][key] = cp.asarray(tile_exclusive_sums(src, size))
    return state["refs"][key]


def verify(case: Case, buffers: Buffers) -> bool:
    import cupy as cp

    if case.operation in ("copy", "exchange"):  # the exchange copies each tile through its permutation
        return outputs_equal(buffers)
    state = _state(buffers)
    totals = state["totals"]
    if case.operation == "sum_atomic":
        got = int(totals[:1].view(cp.uint32)[0])
        ok = got == atomic_expected(_reference(buffers, ("total", 0)), state["atomic_launches"])
        return ok and _untouched(totals[1:])
    if case.operation == "exclusive_sum":
        return bool(cp.array_equal(buffers.dst, _reference(buffers, ("scan", case.tile))))
    m = _outputs(case, buffers.n)
    tile = buffers.n // m  # a block's tile, or a warp's 32 x K
    return bool(cp.array_equal(totals[:m], _reference(buffers, ("sums", tile)))) and _untouched(totals[m:])


def _untouched(array) -> bool:
    import cupy as cp

    return bool(cp.all(array.view(cp.uint32) == POISON))


# --- cuda.coop kernels ---------------------------------------------------------------

@functools.lru_cache(maxsize=None)
def coop_kernel(operation: str, algorithm: str, k: int, io: str = ""):
    """One dispatcher per (operation, algorithm, K, load/store), with the compile-time tile size of the CUB kernels."""
    tile = THREADS * k
    if operation == "sum_atomic":
        @cuda.jit
        def block_sum_atomic(src, totals):
            block = coop.this_block()
            base = np.int64(cuda.blockIdx.x) * tile
            items = coop.ThreadData(k)
            coop.load(block, src, items, algorithm=SUM_LOAD, offset=base)
            total = coop.sum(block, items, algorithm=algorithm, broadcast=False)  # thread 0 only, as in CUB
            if cuda.threadIdx.x == 0:
                cuda.atomic.add(totals, 0, total)

        return block_sum_atomic
    if operation == "sum_partials":
        @cuda.jit
        def block_sum_partials(src, totals):
            block = coop.this_block()
            base = np.int64(cuda.blockIdx.x) * tile
            items = coop.ThreadData(k)
            coop.load(block, src, items, algorithm=SUM_LOAD, offset=base)
            total = coop.sum(block, items, algorithm=algorithm, broadcast=False)
            if cuda.threadIdx.x == 0:
                totals[cuda.blockIdx.x] = total

        return block_sum_partials
    if operation == "exclusive_sum":
        @cuda.jit
        def block_exclusive_sum(src, dst):
            block = coop.this_block()
            base = np.int64(cuda.blockIdx.x) * tile
            items = coop.ThreadData(k)
            coop.load(block, src, items, algorithm=io, offset=base)
            scanned = coop.exclusive_sum(block, items, algorithm=algorithm)
            coop.store(block, dst, scanned, algorithm=io, offset=base)

        return block_exclusive_sum
    if operation == "sum":
        @cuda.jit
        def warp_sum(src, totals):
            warp = coop.this_warp()
            base = np.int64(cuda.blockIdx.x) * tile  # the block's tile; each warp adds its own origin
            items = coop.ThreadData(k)
            coop.load(warp, src, items, algorithm="striped", offset=base)
            total = coop.sum(warp, items, broadcast=False)  # lane 0 only, as in CUB
            if cuda.threadIdx.x & 31 == 0:  # bit operations: no Python-semantics sign fix-ups of % and //
                # an unsigned index: numba tests a signed one for a negative value (wraparound) on every access
                totals[np.uint64(cuda.blockIdx.x) * np.uint64(WARPS) + np.uint64(cuda.threadIdx.x >> 5)] = total

        return warp_sum
    if operation == "exchange" and algorithm == "round_trip":
        @cuda.jit
        def block_exchange_round_trip(src, dst):
            block = coop.this_block()
            base = np.int64(cuda.blockIdx.x) * tile
            items = coop.ThreadData(k)
            coop.load(block, src, items, algorithm="striped", offset=base)
            blocked = coop.exchange(block, items, mode="striped_to_blocked")
            striped = coop.exchange(block, blocked, mode="blocked_to_striped")
            coop.store(block, dst, striped, algorithm="striped", offset=base)

        return block_exchange_round_trip
    if operation == "exchange" and algorithm == "striped_to_blocked_explicit_storage":
        @cuda.jit
        def block_exchange_explicit_storage(src, dst):
            block = coop.this_block()
            temp = coop.TempStorage()  # auto_sync=False: the kernel synchronises any reuse (there is none)
            base = np.int64(cuda.blockIdx.x) * tile
            items = coop.ThreadData(k)
            coop.load(block, src, items, algorithm="striped", offset=base)
            blocked = coop.exchange(block, items, mode="striped_to_blocked", temp_storage=temp)
            coop.store(block, dst, blocked, algorithm="direct", offset=base)

        return block_exchange_explicit_storage
    if operation == "exchange":
        @cuda.jit
        def block_exchange(src, dst):
            block = coop.this_block()
            base = np.int64(cuda.blockIdx.x) * tile
            items = coop.ThreadData(k)
            coop.load(block, src, items, algorithm="striped", offset=base)
            blocked = coop.exchange(block, items, mode="striped_to_blocked")
            coop.store(block, dst, blocked, algorithm="direct", offset=base)

        return block_exchange
    raise ValueError(f"no cuda.coop kernel for {operation}")


# --- plain numba-cuda-mlir kernels (no cuda.coop) --------------------------------------

@functools.lru_cache(maxsize=None)
def handwritten_kernel(operation: str, k: int, dtype: str):
    """What a user writes today: per-thread loads, shared-memory trees and scans, shuffles."""
    nbtype = getattr(np, dtype)
    tile = THREADS * k

    if operation in ("sum_atomic", "sum_partials"):
        atomic = operation == "sum_atomic"

        @cuda.jit
        def block_sum_tree(src, totals):
            partial = cuda.shared.array(THREADS, nbtype)
            t = cuda.threadIdx.x
            base = np.int64(cuda.blockIdx.x) * tile + t
            acc = src[base]
            for i in range(1, k):  # striped: each load instruction is coalesced
                acc += src[base + i * THREADS]
            partial[t] = acc
            cuda.syncthreads()
            s = THREADS // 2
            while s > 0:  # the shared-memory tree
                if t < s:
                    partial[t] += partial[t + s]
                cuda.syncthreads()
                s //= 2
            if t == 0:
                if atomic:
                    cuda.atomic.add(totals, 0, partial[0])
                else:
                    totals[cuda.blockIdx.x] = partial[0]

        return block_sum_tree

    if operation == "sum":
        @cuda.jit
        def warp_sum_shuffle(src, totals):
            lane = cuda.threadIdx.x & 31
            warp = cuda.threadIdx.x >> 5
            base = np.int64(cuda.blockIdx.x) * tile + warp * (32 * k) + lane
            acc = src[base]
            for i in range(1, k):
                acc += src[base + i * 32]
            v = nbtype(acc)  # Numba widens int32 sums to int64: back to 32 bits, one SHFL per step
            v = nbtype(v + cuda.shfl_down_sync(0xFFFFFFFF, v, 16))
            v = nbtype(v + cuda.shfl_down_sync(0xFFFFFFFF, v, 8))
            v = nbtype(v + cuda.shfl_down_sync(0xFFFFFFFF, v, 4))
            v = nbtype(v + cuda.shfl_down_sync(0xFFFFFFFF, v, 2))
            v = nbtype(v + cuda.shfl_down_sync(0xFFFFFFFF, v, 1))
            if lane == 0:
                totals[np.int64(cuda.blockIdx.x) * WARPS + warp] = v

        return warp_sum_shuffle

    if operation == "exclusive_sum":
        @cuda.jit
        def block_scan_smem(src, dst):
            data = cuda.shared.array(tile, nbtype)
            sums = cuda.shared.array(THREADS, nbtype)
            t = cuda.threadIdx.x
            base = np.int64(cuda.blockIdx.x) * tile
            for i in range(k):  # coalesced load into shared memory
                data[i * THREADS + t] = src[base + i * THREADS + t]
            cuda.syncthreads()
            acc = nbtype(0)
            for i in range(k):  # the thread's K consecutive elements, scanned in place
                v = data[t * k + i]
                data[t * k + i] = acc
                acc += v
            sums[t] = acc
            cuda.syncthreads()
            d = 1
            while d < THREADS:  # Hillis-Steele inclusive scan of the thread totals
                v = sums[t - d] if t >= d else nbtype(0)
                cuda.syncthreads()
                sums[t] += v
                cuda.syncthreads()
                d *= 2
            prefix = sums[t] - acc  # the sum of the threads before t
            for i in range(k):
                data[t * k + i] += prefix
            cuda.syncthreads()
            for i in range(k):
                dst[base + i * THREADS + t] = data[i * THREADS + t]

        return block_scan_smem

    if operation == "exchange":
        @cuda.jit
        def exchange_smem(src, dst):
            data = cuda.shared.array(tile, nbtype)
            t = cuda.threadIdx.x
            base = np.int64(cuda.blockIdx.x) * tile
            items = cuda.local.array(k, nbtype)
            for i in range(k):  # striped load
                items[i] = src[base + i * THREADS + t]
            for i in range(k):
                data[i * THREADS + t] = items[i]
            cuda.syncthreads()
            for i in range(k):  # blocked read
                items[i] = data[t * k + i]
            for i in range(k):  # direct store
                dst[base + t * k + i] = items[i]

        return exchange_smem
    raise ValueError(f"no hand-written kernel for {operation}")


def compile_args(impl: str, case: Case, sample) -> tuple:
    """Arguments for numba_coop.compile_kernel, matching the launch exactly (both arrays of the dtype)."""
    return (sample, sample)


def numba_kernel(impl: str, case: Case):
    if impl == "coop":
        return coop_kernel(case.operation, case.algorithm, case.items_per_thread, case.io)
    return handwritten_kernel(case.operation, case.items_per_thread, case.dtype)


# --- launchers -----------------------------------------------------------------------

_MACROS = {"sum_atomic": "BENCH_BLOCK_SUM_ATOMIC", "sum_partials": "BENCH_BLOCK_SUM_PARTIALS",
           "exclusive_sum": "BENCH_TILE_EXCLUSIVE_SUM", "sum": "BENCH_WARP_SUM", "exchange": "BENCH_BLOCK_EXCHANGE",
           "round_trip": "BENCH_BLOCK_EXCHANGE_ROUND_TRIP"}


def cub_instances(all_cases: list[Case]) -> list[tuple[str, str]]:
    """(symbol, extern "C" instantiation line) per CUB kernel (macros of cub/collectives.cu)."""
    lines = []
    for case in all_cases:
        if "cub_cpp" not in case.impls:
            continue
        args = [cub_symbol(case), _CTYPE[case.dtype], str(case.threads), str(case.items_per_thread)]
        if case.operation == "exclusive_sum":
            args.append(case.io.upper())
        if case.operation in ("sum_atomic", "sum_partials", "exclusive_sum"):
            args.append(case.algorithm.upper())
        macro = _MACROS["round_trip" if case.algorithm == "round_trip" else case.operation]
        lines.append((cub_symbol(case), f"{macro}({', '.join(args)})"))
    return lines


def cub_symbol(case: Case) -> str:
    return f"cub_{case.kernel}"


def _writes_totals(case: Case) -> bool:
    return case.operation in ("sum_atomic", "sum_partials", "sum")


def launcher(impl: str, case: Case, buffers: Buffers, cub_functions: dict | None = None):
    """A no-argument callable that launches ``impl`` of ``case`` once, asynchronously."""
    grid = case.grid(buffers.n)
    if impl in ("coop", "handwritten"):
        src, dst = buffers.numba()
        out = _totals(buffers, "numba") if _writes_totals(case) else dst
        configured = numba_kernel(impl, case)[grid, case.threads]
        launch = lambda: configured(src, out)  # noqa: E731
    elif impl == "cub_cpp":
        fn = cub_functions[cub_symbol(case)]
        args = (buffers.src, _totals(buffers, "cupy") if _writes_totals(case) else buffers.dst)
        launch = lambda: fn((grid,), (case.threads,), args)  # noqa: E731
    elif impl == "triton":
        from . import triton_collectives

        src, dst = buffers.torch()
        out = _totals(buffers, "torch") if _writes_totals(case) else dst
        launch = triton_collectives.launcher(case.operation, src, out, case.tile, case.threads // 32)
    else:
        raise ValueError(f"no {impl} implementation of {case.kernel}")
    if case.operation != "sum_atomic":
        return launch
    state = _state(buffers)

    def counted() -> None:  # verify() needs the number of atomic launches since the poison
        state["atomic_launches"] += 1
        launch()

    return counted


def read_launchers(buffers: Buffers) -> dict:
    """The read-only ceiling of the sums, measured in this family's run."""
    return read_ceiling.launchers(buffers, FAMILY)


def copy_launchers(buffers: Buffers) -> dict[str, object]:
    """The copy ceiling, measured again in this family's run (named apart from load_store's rows)."""
    import cupy as cp

    src, dst, nbytes = buffers.src, buffers.dst, buffers.nbytes
    kind = cp.cuda.runtime.memcpyDeviceToDevice
    return {f"memcpy_d2d_{buffers.dtype}_for_{FAMILY}":
            lambda: cp.cuda.runtime.memcpyAsync(dst.data.ptr, src.data.ptr, nbytes, kind, 0)}
