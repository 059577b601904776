"""Tile sorts (SPEC 8.8, 8.9): cuda.coop merge and radix sort, CUB C++ and Triton's tl.sort.

Each block sorts its THREADS x K tile of int32 keys: load (warp_transpose: blocked order,
coalesced), sort, store. Every kernel name contains ``sort``, so ``--only sort`` runs this
family alone. Sorting is compute-bound: the report gives Gkeys/s (GB/s / 8) and no copy-ceiling
target. The NumPy oracle sorts each tile on the host.
"""
from __future__ import annotations

import functools

import numpy as np
from numba_cuda_mlir import cuda  # noqa: I001  (the compiler first, then cuda.coop)
import cuda.coop.numba_mlir as numba_coop  # noqa: F401  (registers the backend)
from cuda import coop
from numba_cuda_mlir import cuda  # noqa: F811  (keep the name `cuda` bound to numba's)

from .common import Buffers, Case, outputs_equal

FAMILY = "sort"
CUB_SOURCE = "sort.cu"
THREADS = 256
ITEMS = (4, 16)
DTYPE = "int32"
OPERATIONS = ("merge_sort", "radix_sort")


def cases() -> list[Case]:
    out = []
    for k in ITEMS:
        for op in OPERATIONS:
            out.append(Case(FAMILY, f"block_{op}_{THREADS}x{k}_{DTYPE}", "block", op, THREADS, k, DTYPE,
                            ("coop", "cub_cpp"), "", op, "warp_transpose"))
        # Triton: one program per tile (num_warps=8 is 256 threads); tl.sort sorts the whole tile.
        out.append(Case(FAMILY, f"tile_sort_{THREADS}x{k}_{DTYPE}", "", "", THREADS, k, DTYPE, ("triton",), "",
                        "merge_sort"))
    return out


def bytes_moved(case: Case, n: int, itemsize: int) -> int:
    return 2 * n * itemsize  # each key read once and written once


def _expected(buffers: Buffers, tile: int):
    state = buffers.views.setdefault(FAMILY, {})
    if tile not in state:
        import cupy as cp

        host = cp.asnumpy(buffers.src).reshape(-1, tile)
        state[tile] = cp.asarray(np.sort(host, axis=1).reshape(-1))
    return state[tile]


def verify(case: Case, buffers: Buffers) -> bool:
    import cupy as cp

    if case.operation == "copy":  # this family's copy-ceiling row
        return outputs_equal(buffers)
    return bool(cp.array_equal(buffers.dst, _expected(buffers, case.tile)))


@functools.lru_cache(maxsize=None)
def coop_kernel(operation: str, k: int):
    tile = THREADS * k
    if operation == "radix_sort":
        @cuda.jit
        def block_radix_sort(src, dst):
            block = coop.this_block()
            base = np.int64(cuda.blockIdx.x) * tile
            keys = coop.ThreadData(k)
            coop.load(block, src, keys, algorithm="warp_transpose", offset=base)
            coop.store(block, dst, coop.radix_sort_keys(block, keys), algorithm="warp_transpose", offset=base)

        return block_radix_sort

    @cuda.jit
    def block_merge_sort(src, dst):
        block = coop.this_block()
        base = np.int64(cuda.blockIdx.x) * tile
        keys = coop.ThreadData(k)
        coop.load(block, src, keys, algorithm="warp_transpose", offset=base)
        coop.store(block, dst, coop.merge_sort_keys(block, keys), algorithm="warp_transpose", offset=base)

    return block_merge_sort


def compile_args(impl: str, case: Case, sample) -> tuple:
    return (sample, sample)


def numba_kernel(impl: str, case: Case):
    return coop_kernel(case.algorithm, case.items_per_thread)


def cub_symbol(case: Case) -> str:
    return f"cub_{case.kernel}"


def cub_instances(all_cases: list[Case]) -> list[tuple[str, str]]:
    return [(cub_symbol(c), f"BENCH_TILE_SORT({cub_symbol(c)}, int, {c.threads}, {c.items_per_thread}, "
                            f"{'true' if c.algorithm == 'radix_sort' else 'false'})")
            for c in all_cases if "cub_cpp" in c.impls]


def launcher(impl: str, case: Case, buffers: Buffers, cub_functions: dict | None = None):
    grid = case.grid(buffers.n)
    if impl == "coop":
        src, dst = buffers.numba()
        configured = coop_kernel(case.algorithm, case.items_per_thread)[grid, case.threads]
        return lambda: configured(src, dst)
    if impl == "cub_cpp":
        fn = cub_functions[cub_symbol(case)]
        args = (buffers.src, buffers.dst)
        return lambda: fn((grid,), (case.threads,), args)
    if impl == "triton":
        from .triton_kernels import tile_sort

        src, dst = buffers.torch()
        return tile_sort(src, dst, case.tile, case.threads // 32)
    raise ValueError(f"no {impl} implementation of {case.kernel}")


def copy_launchers(buffers: Buffers) -> dict[str, object]:
    import cupy as cp

    src, dst, nbytes = buffers.src, buffers.dst, buffers.nbytes
    kind = cp.cuda.runtime.memcpyDeviceToDevice
    return {f"memcpy_d2d_{buffers.dtype}_for_sort":
            lambda: cp.cuda.runtime.memcpyAsync(dst.data.ptr, src.data.ptr, nbytes, kind, 0)}
