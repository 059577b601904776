"""The qualified reduce groups (SPEC 9.3) on the GPU against NumPy: this_thread() folds its own payload, groups of
warps (block.group_by(n), exhaustive or not) combine their 32*n threads, and this_cluster() combines the blocks of
a cluster launch through distributed shared memory."""
from __future__ import annotations

import functools

import numpy as np
import pytest
from gpu_helpers import SEEDED_PER_TEST, poisoned
from numba_cuda_mlir import cuda

import cuda.coop.numba_mlir as numba_coop
from cuda import coop

pytestmark = pytest.mark.gpu
rng = SEEDED_PER_TEST  # each test draws from its own generator (tests/gpu/conftest.py)
GRID = 4


def data(n, dtype):
    if np.dtype(dtype).kind == "f":
        return rng.integers(-50, 50, n).astype(dtype)  # integer-valued: sums are exact in any order
    return rng.integers(-1000, 1000, n).astype(dtype)


def fold(values, op):
    return {"sum": np.sum, "max": np.max, "min": np.min}[op](values, axis=-1).astype(values.dtype)


def user_op(a, b):
    return a if a > b else b  # a maximum written in Python


@functools.cache
def thread_kernel(k, op):
    binary_op = user_op if op == "user" else op

    @cuda.jit
    def kernel(src, dst, scalars):
        block = coop.this_block()
        thread = coop.this_thread()
        items = coop.ThreadData(k)
        coop.load(block, src, items, offset=np.int64(cuda.blockIdx.x) * block.count() * k)
        t = cuda.blockIdx.x * block.count() + block.rank()
        dst[t] = numba_coop.reduce(thread, items, binary_op=binary_op)
        scalars[t] = numba_coop.reduce(thread, src[t], binary_op=binary_op)  # a scalar is its own reduction

    return kernel


@pytest.mark.parametrize("k", [1, 2, 4])
@pytest.mark.parametrize("op", ["sum", "max", "user"])
@pytest.mark.parametrize("dtype", [np.int32, np.float64])
def test_thread_folds_its_own_payload(k, op, dtype):
    threads = 128
    src = data(GRID * threads * k, dtype)
    original = src.copy()
    dst, scalars = poisoned(GRID * threads, dtype), poisoned(GRID * threads, dtype)
    thread_kernel(k, op)[GRID, threads](src, dst, scalars)
    cuda.synchronize()
    np.testing.assert_array_equal(dst, fold(src.reshape(-1, k), "max" if op == "user" else op))
    np.testing.assert_array_equal(scalars, src[:GRID * threads])
    np.testing.assert_array_equal(src, original)


@functools.cache
def warps_kernel(n, exhaustive, k, op, broadcast):
    @cuda.jit
    def kernel(src, dst):
        block = coop.this_block()
        group = block.group_by(n, exhaustive=exhaustive)
        items = coop.ThreadData(k)
        coop.load(block, src, items, offset=np.int64(cuda.blockIdx.x) * block.count() * k)
        if group.is_member():
            total = numba_coop.reduce(group, items, binary_op=op, broadcast=broadcast)
            if broadcast or group.rank() == 0:
                dst[cuda.blockIdx.x * block.count() + block.rank()] = total

    return kernel


@pytest.mark.parametrize("threads, n, exhaustive", [(128, 1, True), (128, 2, True), (128, 4, True), (256, 2, True),
                                                   (128, 3, False), (256, 3, False), (64, 2, True)])
@pytest.mark.parametrize("k", [1, 4])
@pytest.mark.parametrize("op", ["sum", "min"])
@pytest.mark.parametrize("broadcast", [True, False])
def test_groups_of_warps(threads, n, exhaustive, k, op, broadcast):
    src = data(GRID * threads * k, np.int32)
    dst = poisoned(GRID * threads, np.int32)
    expected = dst.copy()
    size = 32 * n
    groups = threads // 32 // n
    for b in range(GRID):
        tile = src[b * threads * k:(b + 1) * threads * k]
        for g in range(groups):
            total = fold(tile[g * size * k:(g + 1) * size * k], op)
            first = b * threads + g * size
            if broadcast:
                expected[first:first + size] = total
            else:
                expected[first] = total
    warps_kernel(n, exhaustive, k, op, broadcast)[GRID, threads](src, dst)
    cuda.synchronize()
    np.testing.assert_array_equal(dst, expected)  # non-members' slots stay poisoned


@functools.cache
def cluster_kernel(k, op, broadcast):
    @cuda.jit
    def kernel(src, dst):
        block = coop.this_block()
        cluster = coop.this_cluster()
        items = coop.ThreadData(k)
        first = np.int64(cuda.blockIdx.x) * block.count()
        coop.load(block, src, items, offset=first * k)
        total = numba_coop.reduce(cluster, items, binary_op=op, broadcast=broadcast)
        if broadcast or cluster.rank() == 0:
            dst[first + block.rank()] = total

    return kernel


@pytest.mark.parametrize("cluster_size", [2, 4])
@pytest.mark.parametrize("k", [1, 2])
@pytest.mark.parametrize("op", ["sum", "max"])
@pytest.mark.parametrize("broadcast", [True, False])
@pytest.mark.parametrize("dtype", [np.int32, np.float64])
def test_cluster_combines_its_blocks(cluster_size, k, op, broadcast, dtype):
    threads, blocks = 128, 8
    src = data(blocks * threads * k, dtype)
    d_dst = cuda.to_device(poisoned(blocks * threads, dtype))
    expected = d_dst.copy_to_host()
    for c in range(blocks // cluster_size):
        total = fold(src[c * cluster_size * threads * k:(c + 1) * cluster_size * threads * k], op)
        first = c * cluster_size * threads
        if broadcast:
            expected[first:first + cluster_size * threads] = total
        else:
            expected[first] = total  # rank 0: thread 0 of the cluster's first block
    cluster_kernel(k, op, broadcast)[(blocks, 1, 1), (threads, 1, 1), 0, 0, (cluster_size, 1, 1)](src, d_dst)
    cuda.synchronize()
    np.testing.assert_array_equal(d_dst.copy_to_host(), expected)


@functools.cache
def half_cluster_kernel(k):
    @cuda.jit
    def kernel(src, dst):
        block = coop.this_block()
        items = coop.ThreadData(k)
        first = np.int64(cuda.blockIdx.x) * block.count()
        numba_coop.load(block, src, items, offset=first * k)  # float16: the qualified load
        dst[first + block.rank()] = numba_coop.reduce(coop.this_cluster(), items, binary_op="max")

    return kernel


@pytest.mark.parametrize("cluster_size", [2, 4])
def test_cluster_max_of_float16(cluster_size):
    """A 2-byte partial read from other blocks with 16-bit loads (float16 sums are not exact in any order)."""
    threads, blocks, k = 128, 8, 2
    src = rng.normal(size=blocks * threads * k).astype(np.float16)
    d_dst = cuda.to_device(poisoned(blocks * threads, np.float16))
    half_cluster_kernel(k)[(blocks, 1, 1), (threads, 1, 1), 0, 0, (cluster_size, 1, 1)](src, d_dst)
    cuda.synchronize()
    want = src.reshape(-1, cluster_size * threads * k).max(axis=1)
    np.testing.assert_array_equal(d_dst.copy_to_host(), np.repeat(want, cluster_size * threads))
