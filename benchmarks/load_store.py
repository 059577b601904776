"""Load -> Store tile copies: cuda.coop, CUB C++, plain numba-cuda-mlir and Triton (issue 3, item 3).

A family module gives the runner its cases, a launcher per implementation, the bytes a
launch moves and the check of its output; later families add a module of the same shape.
"""
from __future__ import annotations

import functools

import numpy as np
from numba_cuda_mlir import cuda  # noqa: I001  (the compiler first, then cuda.coop)
import cuda.coop.numba_mlir as numba_coop  # noqa: F401  (registers the backend)
from cuda import coop
from numba_cuda_mlir import cuda  # noqa: F811  (keep the name `cuda` bound to numba's)

from .common import Buffers, Case, outputs_equal

FAMILY = "load_store"
CUB_SOURCE = "load_store.cu"
THREADS = 256
ITEMS = (4, 16)
DTYPES = ("int32", "float32")
BLOCK_ALGORITHMS = ("direct", "striped", "vectorize", "transpose", "warp_transpose")
WARP_ALGORITHMS = ("transpose", "striped")
# The hand-written kernels a user writes without cuda.coop, paired with the cuda.coop
# algorithm that has the same memory access pattern.
HANDWRITTEN = {"direct": "blocked", "striped": "striped"}
# What each hand-written kernel is (RESULTS.md labels the hand-written column with it).
HANDWRITTEN_NOTES = {
    "blocked": "straightforward port: each thread copies its K consecutive items through a local array",
    "striped": "straightforward port: each thread copies items t, t + 256, ... through a local array (coalesced)",
}
_CTYPE = {"int32": "int", "float32": "float", "int64": "long long", "float64": "double"}


def cases() -> list[Case]:
    out = []
    for dtype in DTYPES:
        for k in ITEMS:
            for alg in BLOCK_ALGORITHMS:
                impls = ("coop", "cub_cpp") + (("handwritten",) if alg in HANDWRITTEN else ())
                out.append(Case(FAMILY, f"block_copy_{alg}_{THREADS}x{k}_{dtype}", "block", alg, THREADS, k, dtype,
                                impls, HANDWRITTEN.get(alg, "")))
            for alg in WARP_ALGORITHMS:
                out.append(Case(FAMILY, f"warp_copy_{alg}_{THREADS}x{k}_{dtype}", "warp", alg, THREADS, k, dtype,
                                ("coop", "cub_cpp")))
            # Triton has no algorithm choice: one tile copy per shape (num_warps=8 is 256 threads).
            out.append(Case(FAMILY, f"tile_copy_{THREADS}x{k}_{dtype}", "", "", THREADS, k, dtype, ("triton",)))
    return out


def bytes_moved(case: Case, n: int, itemsize: int) -> int:
    return 2 * n * itemsize  # each element read once and written once


def verify(case: Case, buffers: Buffers) -> bool:
    return outputs_equal(buffers)


# --- cuda.coop kernels ---------------------------------------------------------------

@functools.lru_cache(maxsize=None)
def coop_kernel(group: str, algorithm: str, k: int):
    """One dispatcher per (group, algorithm, K); it specialises on dtype and launch shape.

    The tile size is a compile-time constant, as in the CUB C++ kernels, so that the
    comparison measures the cooperative calls and not differences in index arithmetic
    (a runtime ``blockDim.x * items_per_thread`` costs a few extra integer instructions).
    """
    tile = THREADS * k
    if group == "block":
        @cuda.jit
        def block_copy(src, dst):
            block = coop.this_block()
            base = np.int64(cuda.blockIdx.x) * tile
            items = coop.ThreadData(k)
            coop.load(block, src, items, algorithm=algorithm, offset=base)
            coop.store(block, dst, items, algorithm=algorithm, offset=base)

        return block_copy

    @cuda.jit
    def warp_copy(src, dst):
        warp = coop.this_warp()
        # The block's tile origin; each warp adds its own (SPEC: warp groups add their origin).
        base = np.int64(cuda.blockIdx.x) * tile
        items = coop.ThreadData(k)
        coop.load(warp, src, items, algorithm=algorithm, offset=base)
        coop.store(warp, dst, items, algorithm=algorithm, offset=base)

    return warp_copy


# --- plain numba-cuda-mlir kernels (no cuda.coop) --------------------------------------

@functools.lru_cache(maxsize=None)
def handwritten_kernel(variant: str, k: int, dtype: str):
    """Per-thread loads into a local array, then stores: what a user writes today
    (with the same compile-time tile size as the other implementations).

    ``blocked`` gives each thread K consecutive elements (like ``direct``); ``striped``
    strides by the block size so that each load instruction is coalesced.
    """
    nbtype = getattr(np, dtype)

    if variant == "blocked":
        @cuda.jit
        def blocked_copy(src, dst):
            base = (np.int64(cuda.blockIdx.x) * THREADS + cuda.threadIdx.x) * k
            items = cuda.local.array(k, nbtype)
            for i in range(k):
                items[i] = src[base + i]
            for i in range(k):
                dst[base + i] = items[i]

        return blocked_copy

    @cuda.jit
    def striped_copy(src, dst):
        base = np.int64(cuda.blockIdx.x) * (THREADS * k) + cuda.threadIdx.x
        items = cuda.local.array(k, nbtype)
        for i in range(k):
            items[i] = src[base + i * THREADS]
        for i in range(k):
            dst[base + i * THREADS] = items[i]

    return striped_copy


def compile_args(impl: str, case: Case, sample) -> tuple:
    """Arguments for numba_coop.compile_kernel, matching the launch exactly."""
    return (sample, sample)


# --- launchers -----------------------------------------------------------------------

def cub_instances(all_cases: list[Case]) -> list[tuple[str, str]]:
    """(symbol, extern "C" instantiation line) per CUB kernel (macros of cub/load_store.cu)."""
    lines = []
    for case in all_cases:
        if "cub_cpp" in case.impls:
            macro = "BENCH_BLOCK_COPY" if case.group == "block" else "BENCH_WARP_COPY"
            lines.append((cub_symbol(case), f"{macro}({cub_symbol(case)}, {_CTYPE[case.dtype]}, {case.threads}, "
                                            f"{case.items_per_thread}, {case.algorithm.upper()})"))
    return lines


def cub_symbol(case: Case) -> str:
    return f"cub_{case.kernel}"


def numba_kernel(impl: str, case: Case):
    if impl == "coop":
        return coop_kernel(case.group, case.algorithm, case.items_per_thread)
    return handwritten_kernel(case.variant, case.items_per_thread, case.dtype)


def launcher(impl: str, case: Case, buffers: Buffers, cub_functions: dict | None = None):
    """A no-argument callable that launches ``impl`` of ``case`` once, asynchronously."""
    grid = case.grid(buffers.n)
    if impl == "coop":
        src, dst = buffers.numba()
        configured = coop_kernel(case.group, case.algorithm, case.items_per_thread)[grid, case.threads]
        return lambda: configured(src, dst)
    if impl == "handwritten":
        src, dst = buffers.numba()
        configured = handwritten_kernel(case.variant, case.items_per_thread, case.dtype)[grid, case.threads]
        return lambda: configured(src, dst)
    if impl == "cub_cpp":
        fn = cub_functions[cub_symbol(case)]
        args = (buffers.src, buffers.dst)
        return lambda: fn((grid,), (case.threads,), args)
    if impl == "triton":
        from .triton_kernels import tile_copy

        src, dst = buffers.torch()
        return tile_copy(src, dst, case.tile, case.threads // 32)
    raise ValueError(f"no {impl} implementation of {case.kernel}")


def copy_launchers(buffers: Buffers) -> dict[str, object]:
    """The copy ceiling: cudaMemcpyAsync device to device, and cupy's own copy kernel."""
    import cupy as cp

    src, dst, nbytes = buffers.src, buffers.dst, buffers.nbytes
    kind = cp.cuda.runtime.memcpyDeviceToDevice
    return {
        f"memcpy_d2d_{buffers.dtype}": lambda: cp.cuda.runtime.memcpyAsync(dst.data.ptr, src.data.ptr, nbytes, kind, 0),
        f"cupy_copy_{buffers.dtype}": lambda: cp.copyto(dst, src),
    }

