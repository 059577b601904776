"""Kernels launched from many Python threads at once (issue 18, item 0): each thread its own specialisation
(``items_per_thread`` is a compile-time kernel argument), host NumPy arrays, outputs poisoned, results against NumPy.
Before the fix one thread's copy-back ran in another thread and a host output was never written."""
from __future__ import annotations

import threading

import numpy as np
import pytest

import cuda.coop.numba_mlir  # noqa: F401  (registers the backend)
from cuda import coop
from numba_cuda_mlir import cuda

from gpu_helpers import poisoned

pytestmark = pytest.mark.gpu
THREADS = 64


@cuda.jit
def scan_tiles(src, dst, items_per_thread):
    block = coop.this_block()
    base = np.int64(cuda.blockIdx.x) * block.count() * items_per_thread
    items = coop.ThreadData(items_per_thread)
    coop.load(block, src, items, algorithm="warp_transpose", offset=base)
    items = coop.exclusive_sum(block, items)
    coop.store(block, dst, items, algorithm="transpose", offset=base)


@cuda.jit
def max_tiles(src, dst, items_per_thread):
    block = coop.this_block()
    base = np.int64(cuda.blockIdx.x) * block.count() * items_per_thread
    items = coop.ThreadData(items_per_thread)
    coop.load(block, src, items, offset=base)
    best = coop.reduce(block, items, binary_op="max")
    if block.rank() == 0:
        dst[cuda.blockIdx.x] = best


def _scan_case(k, rng):
    grid = 3
    src = rng.integers(-50, 50, size=grid * THREADS * k).astype(np.int32)
    dst = poisoned(src.size, np.int32)
    tiles = src.reshape(grid, -1)
    expect = (np.cumsum(tiles, axis=1) - tiles).astype(np.int32).ravel()
    return scan_tiles, (src, dst, k), dst, expect


def _max_case(k, rng):
    grid = 3
    src = rng.integers(-1000, 1000, size=grid * THREADS * k).astype(np.int32)
    dst = poisoned(grid, np.int32)
    return max_tiles, (src, dst, k), dst, src.reshape(grid, -1).max(axis=1)


@pytest.mark.parametrize("rounds", [3])
def test_sixteen_threads_launch_several_specialisations_of_two_kernels(rounds):
    failures: list[str] = []
    for round_ in range(rounds):
        cases = [(_scan_case if t % 2 == 0 else _max_case)(t // 2 + 1, np.random.default_rng(100 * round_ + t))
                 for t in range(16)]
        start = threading.Barrier(len(cases))

        def run(case, index):
            kernel, args, dst, expect = case
            try:
                start.wait()
                kernel[3, THREADS](*args)
                cuda.synchronize()
                if not np.array_equal(dst, expect):
                    failures.append(f"round {round_}, thread {index} ({kernel.__name__}, k={args[2]}): wrong result")
            except Exception as exc:  # noqa: BLE001  (reported below, with the thread)
                failures.append(f"round {round_}, thread {index}: {type(exc).__name__}: {exc}")

        threads = [threading.Thread(target=run, args=(case, i)) for i, case in enumerate(cases)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert not failures, failures
