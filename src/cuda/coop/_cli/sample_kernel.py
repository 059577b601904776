"""The doctor's sample build: a transpose load/store copy kernel (imports numba-cuda-mlir; load it only to build)."""
from __future__ import annotations

import numpy as np
import numpy.typing as npt
from numba_cuda_mlir import cuda as nb_cuda

import cuda.coop as coop
import cuda.coop.numba_mlir as numba_coop

THREADS, ITEMS = 128, 4


@nb_cuda.jit  # type: ignore[untyped-decorator]  # numba-cuda-mlir ships no types (Any to mypy)
def copy_tile(src: npt.NDArray[np.int32], dst: npt.NDArray[np.int32]) -> None:
    block = coop.this_block()
    items = coop.ThreadData(ITEMS)
    coop.load(block, src, items, algorithm="transpose")
    coop.store(block, dst, items, algorithm="transpose")


def build(target: str = "sm_90") -> numba_coop.CompiledKernel:
    """Compile ``copy_tile`` for one block of 128 threads without launching it."""
    sample = np.zeros(THREADS * ITEMS, np.int32)
    return numba_coop.compile_kernel(copy_tile, (sample, sample), block=THREADS, target=target)
