"""Kernels that mix cuda.coop scratch with the user's own shared memory (SPEC 6.7).

Kernels with cuda.coop calls are translated with 32-bit shared-memory pointers, the layout
NVRTC gives the CUB code (numba_mlir/_patches.py). These kernels check that numba-cuda-mlir's
own shared arrays stay correct under it: a static `cuda.shared.array` written and read across
threads next to CUB scratch, passed to a device helper (inlined and not inlined), and
exchanged through coop.exchange in the same kernel.
"""
from __future__ import annotations

import numpy as np
import pytest

import cuda.coop.numba_mlir  # noqa: F401  (registers the backend)
from cuda import coop
from numba_cuda_mlir import cuda

from gpu_helpers import SEEDED_PER_TEST, poisoned

pytestmark = pytest.mark.gpu
rng = SEEDED_PER_TEST  # each test draws from its own generator (tests/gpu/conftest.py)
GRID = 3


def data(n, dtype):
    dtype = np.dtype(dtype)
    if dtype.kind == "f":  # integer values: every partial sum is exact, so results compare exactly
        return rng.integers(-1000, 1000, n).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(info.min // 2, info.max // 2, n, dtype=dtype, endpoint=True)


@cuda.jit(device=True, inline="never")
def put_far(stage, index, value):
    stage[index] = value


@cuda.jit(device=True)
def get_near(stage, index):
    return stage[index]


def reverse_and_scan_kernel(threads, k, dtype, helper_inline):
    tile = threads * k

    @cuda.jit
    def reverse_and_scan(src, reversed_out, scanned_out):
        block = coop.this_block()
        stage = cuda.shared.array(tile, dtype)
        t = cuda.threadIdx.x
        base = np.int64(cuda.blockIdx.x) * tile
        items = coop.ThreadData(k, dtype=dtype)
        coop.load(block, src, items, algorithm="transpose", offset=base)  # scratch: shared, CUB-owned
        for i in range(k):
            if helper_inline:
                stage[t * k + i] = items[i]
            else:
                put_far(stage, t * k + i, items[i])
        cuda.syncthreads()
        mirrored = coop.ThreadData(k, dtype=dtype)
        for i in range(k):
            mirrored[i] = get_near(stage, tile - 1 - (t * k + i))
        coop.store(block, reversed_out, mirrored, algorithm="transpose", offset=base)
        scanned = coop.exclusive_sum(block, mirrored)
        coop.store(block, scanned_out, scanned, algorithm="warp_transpose", offset=base)

    return reverse_and_scan


@pytest.mark.parametrize("dtype", [np.int32, np.float64, np.int8])
@pytest.mark.parametrize("helper_inline", [True, False])
def test_user_shared_array_next_to_coop_scratch(dtype, helper_inline):
    threads, k = 128, 4
    tile = threads * k
    n = GRID * tile
    src = data(n, dtype)
    reversed_out, scanned_out = poisoned(n, dtype), poisoned(n, dtype)
    kernel = reverse_and_scan_kernel(threads, k, dtype, helper_inline)
    kernel[GRID, threads](src, reversed_out, scanned_out)
    cuda.synchronize()
    expected = src.reshape(GRID, tile)[:, ::-1]
    np.testing.assert_array_equal(reversed_out.reshape(GRID, tile), expected)
    wide = expected.astype(np.int64)
    sums = (np.cumsum(wide, axis=1) - wide).astype(dtype)  # int8 wraps like the device's int8 arithmetic
    np.testing.assert_array_equal(scanned_out.reshape(GRID, tile), sums)


def test_user_shared_array_through_exchange():
    """A user array staged in shared memory, exchanged by coop.exchange, written back through shared memory."""
    threads, k, dtype = 64, 8, np.uint64
    tile = threads * k

    @cuda.jit
    def staged_exchange(src, out):
        block = coop.this_block()
        stage = cuda.shared.array(tile, dtype)
        t = cuda.threadIdx.x
        base = np.int64(cuda.blockIdx.x) * tile
        for i in range(k):  # coalesced copy of the tile into shared memory
            stage[i * threads + t] = src[base + i * threads + t]
        cuda.syncthreads()
        items = coop.ThreadData(k, dtype=dtype)
        for i in range(k):  # striped: thread t holds elements t, t + threads, ...
            items[i] = stage[i * threads + t]
        blocked = coop.exchange(block, items, mode="striped_to_blocked")
        cuda.syncthreads()
        for i in range(k):  # blocked: thread t holds elements t*k .. t*k + k - 1; write them negated
            stage[t * k + i] = ~blocked[i]
        cuda.syncthreads()
        for i in range(k):
            out[base + i * threads + t] = stage[i * threads + t]

    n = GRID * tile
    src = data(n, np.int64).view(np.uint64)
    out = poisoned(n, dtype)
    staged_exchange[GRID, threads](src, out)
    cuda.synchronize()
    np.testing.assert_array_equal(out, ~src)


HALF = 48  # module-level: the kernel below computes its shared arrays' extents from it


def test_user_shared_arrays_of_computed_extents():
    """Shared arrays sized ``2 * HALF`` and ``(2, HALF + 0)`` (compile-time values computed in the kernel) beside a
    block scan, launched without dynamic shared memory: numba-cuda-mlir alone would carve them out of dynamic shared
    memory the launch does not have; cuda-coop makes them static (the numba sampler's illegal address)."""
    threads = 128

    @cuda.jit
    def mirror(src, out):
        block = coop.this_block()
        flat = cuda.shared.array(2 * HALF, np.int32)
        rows = cuda.shared.array((2, HALF + 0), np.int32)
        rank = cuda.threadIdx.x
        base = np.int64(cuda.blockIdx.x) * threads
        if rank < 2 * HALF:
            flat[rank] = src[base + rank]
            rows[rank // HALF, rank % HALF] = src[base + rank] * 3
        cuda.syncthreads()
        before = coop.exclusive_sum(block, src[base + rank])
        back = 2 * HALF - 1 - rank
        out[base + rank] = (flat[back] + rows[back // HALF, back % HALF] if rank < 2 * HALF else 0) + before

    n = GRID * threads
    src = data(n, np.int32) // 8  # no overflow in 4 x src + a prefix sum
    out = poisoned(n, np.int32)
    mirror[GRID, threads](src, out)
    cuda.synchronize()
    tiles = src.reshape(GRID, threads).astype(np.int64)
    mirrored = np.zeros_like(tiles)
    mirrored[:, :2 * HALF] = 4 * tiles[:, 2 * HALF - 1::-1]
    expected = (mirrored + np.cumsum(tiles, axis=1) - tiles).astype(np.int32)
    np.testing.assert_array_equal(out.reshape(GRID, threads), expected)
