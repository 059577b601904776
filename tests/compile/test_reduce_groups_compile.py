"""sm_90 builds of the qualified reduce groups (SPEC 9.3) and their compile-time errors."""
from __future__ import annotations

import numpy as np
import pytest
from numba_cuda_mlir import cuda

import cuda.coop.numba_mlir as numba_coop
from cuda import coop

from compile_helpers import build_kernel, expect_compile_error

I32 = np.zeros(2048, np.int32)


def _kernel(kind, n=2, exhaustive=True, reduce=numba_coop.reduce, binary_op="sum", algorithm=None):
    @cuda.jit
    def kernel(src, dst):
        block = coop.this_block()
        if kind == "thread":
            group = coop.this_thread()
        elif kind == "cluster":
            group = coop.this_cluster()
        else:
            group = block.group_by(n, exhaustive=exhaustive)
        items = coop.ThreadData(4)
        coop.load(block, src, items)
        if group.is_member():
            dst[cuda.threadIdx.x] = reduce(group, items, binary_op=binary_op, algorithm=algorithm)  # HERE

    return kernel


def test_thread_needs_no_scratch():
    built = build_kernel(_kernel("thread", binary_op="max"), (I32, I32))
    assert "ThreadReduce" in built.cpp_source and built.metadata["scratch_bytes"] == 0


@pytest.mark.parametrize("n, exhaustive, barriers", [(1, True, 0), (2, True, 1), (4, True, 1), (3, False, 1)])
def test_groups_of_warps_use_a_named_barrier_of_their_members(n, exhaustive, barriers):
    built = build_kernel(_kernel("warps", n, exhaustive, binary_op="sum"), (I32, I32))
    members = 128 // 32 // n * n * 32
    # include/cuda_coop/block/block_warps_reduce.cuh: bar.sync 1, members
    assert f"cuda_coop::BlockWarpsReduce<int, {n}, {members}, 128, 1, 1>" in built.cpp_source
    assert built.sass().count("BAR.SYNC") == barriers  # the last call keeps no reuse barrier
    assert "sync_block" not in built.cpp_source.split("cuda_coop_reduce")[-1]


def test_groups_of_warps_keep_the_reuse_barrier_before_another_call():
    @cuda.jit
    def kernel(src, dst):
        block = coop.this_block()
        group = block.group_by(2)
        items = coop.ThreadData(4)
        coop.load(block, src, items)
        first = numba_coop.sum(group, items)
        second = numba_coop.reduce(group, items, binary_op="max")
        dst[cuda.threadIdx.x] = first + second

    built = build_kernel(kernel, (I32, I32))
    assert built.cpp_source.count("// reuse barrier for the scratch") == 1


def test_cluster_reads_distributed_shared_memory():
    built = build_kernel(_kernel("cluster", binary_op="sum"), (I32, I32))
    # include/cuda_coop/block/block_cluster_reduce.cuh, read in 32-bit words
    assert "cuda_coop::BlockClusterReduce<int, true, 4, 128, 1, 1>" in built.cpp_source
    sass = built.sass()
    assert sass.count("UCGABAR_WAIT") == 2  # partials in; no block leaves while others read
    assert "SR_SWINHI" in sass  # the cluster's shared window, which mapa addresses


@pytest.mark.parametrize("dtype", [np.int8, np.uint16, np.float32, np.float64, np.uint64])
def test_cluster_every_dtype(dtype):
    data = np.zeros(2048, dtype)
    build_kernel(_kernel("cluster", binary_op="max"), (data, data))


def test_cluster_needs_sm_90():
    expect_compile_error(_kernel("cluster", binary_op="sum"), (I32, I32), coop.CoopUnsupportedError,
                         "cluster groups require compute capability 9.0 or newer; target is sm_80", target="sm_80",
                         site="first_line")


@pytest.mark.parametrize("kind", ["thread", "warps", "cluster"])
def test_common_api_rejects_the_qualified_groups(kind):
    expect_compile_error(_kernel(kind, reduce=coop.reduce, binary_op="sum"), (I32, I32), coop.CoopUnsupportedError,
                         "cuda.coop.reduce does not support group kind", site="first_line")


def test_common_message_points_to_the_qualified_namespace():
    exc = expect_compile_error(_kernel("thread", reduce=coop.reduce, binary_op="sum"), (I32, I32),
                               coop.CoopUnsupportedError,
                               "; cuda.coop.numba_mlir.reduce also supports thread, warps_within_block, cluster",
                               site="first_line")
    assert "cuda.coop.reduce does not support group kind 'thread'" in str(exc)


@pytest.mark.parametrize("kind", ["thread", "warps", "cluster"])
def test_no_algorithm(kind):
    expect_compile_error(_kernel(kind, binary_op="sum", algorithm="raking"), (I32, I32), coop.CoopValueError,
                         "cuda.coop.numba_mlir.reduce algorithm is supported only for block groups", site="first_line")


def test_no_valid_items():
    @cuda.jit
    def kernel(src, dst):
        group = coop.this_block().group_by(2)
        dst[cuda.threadIdx.x] = numba_coop.sum(group, src[cuda.threadIdx.x], valid_items=10)

    expect_compile_error(kernel, (I32, I32), coop.CoopValueError,
                         "cuda.coop.numba_mlir.sum valid_items is supported only for block and warp groups; got a "
                         "warps_within_block group", site="first_line")


def test_no_temp_storage():
    @cuda.jit
    def kernel(src, dst):
        temp = coop.TempStorage()
        dst[cuda.threadIdx.x] = numba_coop.sum(coop.this_cluster(), src[cuda.threadIdx.x], temp_storage=temp)

    expect_compile_error(kernel, (I32, I32), coop.CoopValueError,
                         "cuda.coop.numba_mlir.sum does not accept temp_storage for cluster groups; their scratch "
                         "is always compiler-owned", site="first_line")
