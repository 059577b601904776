"""CuTe DSL kernels of the cluster reduce of ``cuda.coop.cutlass`` (SPEC 9.3, 12.2; docs: operations/reduce, "More
groups in the qualified namespaces"): launched against NumPy oracles by tests/gpu/test_cutlass_cluster_gpu.py and
built on the CPU by tests/cute_dsl/test_cutlass_cluster_compile.py (CuTe reads kernel source, so they live in a file
both import). Each block of a cluster launch loads its tile and the blocks of each cluster reduce together."""
from __future__ import annotations

import numpy as np
import cutlass
import cutlass.cute as cute

import cuda.coop.cutlass as cute_coop
from cuda import coop

THREADS = 128


def larger(a, b):
    """A user function as binary_op (a qualified feature of cuda.coop.cutlass), traceable by CuTe."""
    return cutlass.max(a, b)


def max_and_sum(a, b):
    """A function of two (max, sum) tuples (SPEC 8.18): exact on integer-valued floats in any order."""
    return cutlass.max(a[0], b[0]), a[1] + b[1]


def online_softmax_merge(a, b):
    """Two (running max, sum of exp(x - max)) pairs merged: the combine step of an online softmax."""
    m = cutlass.max(a[0], b[0])  # CuTe traces operators without rewriting Python's max
    sa = a[1] * cute.math.exp(a[0] - m)
    sb = b[1] * cute.math.exp(b[0] - m)
    return m, sa + sb


OPERATORS = {"sum": "sum", "max": "max", "larger": larger}
PAIRS = {"max_and_sum": max_and_sum, "online_softmax_merge": online_softmax_merge}


def _block_id():
    """The block's linear index in the grid (x fastest), as the oracles number the tiles."""
    bx, by, bz = cute.arch.block_idx()
    gx, gy, _ = cute.arch.grid_dim()
    return bx + gx * (by + gy * bz)


@cute.kernel
def cluster_reduce_kernel(src: cute.Tensor, dst: cute.Tensor, k: cutlass.Constexpr, op: cutlass.Constexpr,
                          broadcast: cutlass.Constexpr):
    """``k`` items per thread (0: one scalar) reduced over the cluster; ``dst`` gets each thread's result (with
    ``broadcast=False`` only the cluster's rank 0 stores it)."""
    block = coop.this_block()
    cluster = coop.this_cluster()
    first = _block_id() * block.count()
    if cutlass.const_expr(k == 0):
        total = cute_coop.reduce(cluster, src[first + block.rank()], binary_op=OPERATORS[op], broadcast=broadcast)
    else:
        items = coop.ThreadData(k)
        coop.load(block, src, items, offset=first * k)
        total = cute_coop.reduce(cluster, items, binary_op=OPERATORS[op], broadcast=broadcast)  # HERE
    if cutlass.const_expr(broadcast):
        dst[first + block.rank()] = total
    else:
        if cluster.rank() == 0:  # rank 0 only: thread 0 of the cluster's first block
            dst[first + block.rank()] = total


@cute.jit
def cluster_reduce_launch(src: cute.Tensor, dst: cute.Tensor, grid: cutlass.Constexpr, cluster: cutlass.Constexpr,
                          k: cutlass.Constexpr, op: cutlass.Constexpr, broadcast: cutlass.Constexpr):
    if cutlass.const_expr(cluster is None):  # no cluster launch: each block is its own cluster
        cluster_reduce_kernel(src, dst, k, op, broadcast).launch(grid=grid, block=(THREADS, 1, 1))
    else:
        cluster_reduce_kernel(src, dst, k, op, broadcast).launch(grid=grid, block=(THREADS, 1, 1), cluster=cluster)


@cute.kernel
def cluster_pair_kernel(values: cute.Tensor, weights: cute.Tensor, first_out: cute.Tensor, second_out: cute.Tensor,
                        op: cutlass.Constexpr):
    """A tuple of two float32 scalars ``(values[i], weights[i])`` reduced over the cluster with a user function of
    tuples (``max_and_sum`` or ``online_softmax_merge``), both members stored by every thread."""
    block = coop.this_block()
    i = _block_id() * block.count() + block.rank()
    merge = PAIRS[op]
    m, s = cute_coop.reduce(coop.this_cluster(), (values[i], weights[i]), binary_op=merge)
    first_out[i] = m
    second_out[i] = s


@cute.jit
def cluster_pair_launch(values: cute.Tensor, weights: cute.Tensor, first_out: cute.Tensor, second_out: cute.Tensor,
                        grid: cutlass.Constexpr, cluster: cutlass.Constexpr, op: cutlass.Constexpr):
    cluster_pair_kernel(values, weights, first_out, second_out, op).launch(grid=grid, block=(THREADS, 1, 1),
                                                                           cluster=cluster)


# ---- mistakes (tests/cute_dsl/test_cutlass_cluster_compile.py)
@cute.jit
def dynamic_cluster_launch(src: cute.Tensor, dst: cute.Tensor, width: cutlass.Int32):
    """A cluster shape known only at run time: the cluster reduce needs it at compile time (G23)."""
    cluster_reduce_kernel(src, dst, 2, "sum", True).launch(grid=(8, 1, 1), block=(THREADS, 1, 1),
                                                           cluster=(width, 1, 1))


@cute.kernel
def common_cluster_kernel(src: cute.Tensor, dst: cute.Tensor):
    block = coop.this_block()
    items = coop.ThreadData(2, np.int32)
    coop.load(block, src, items, offset=_block_id() * (THREADS * 2))
    dst[_block_id() * THREADS + block.rank()] = coop.reduce(coop.this_cluster(), items)  # HERE


@cute.jit
def common_cluster_launch(src: cute.Tensor, dst: cute.Tensor):
    common_cluster_kernel(src, dst).launch(grid=(8, 1, 1), block=(THREADS, 1, 1), cluster=(2, 1, 1))


# ---- shapes: (grid, cluster); cluster None is a launch without clusters (each block is its own cluster)
LAUNCHES = (((8, 1, 1), (2, 1, 1)), ((8, 1, 1), (4, 1, 1)), ((8, 1, 1), (8, 1, 1)), ((4, 2, 1), (2, 2, 1)),
            ((4, 1, 1), None))
# (items per thread (0: a scalar), operator, broadcast, dtype)
FORMS = ((0, "sum", True, "int32"), (2, "max", False, "int32"), (2, "larger", True, "float64"),
         (1, "sum", False, "float64"), (3, "sum", True, "float32"), (4, "max", True, "uint8"))
PAIR_OPERATORS = ("max_and_sum", "online_softmax_merge")


def cluster_of_blocks(grid, cluster):
    """Per block (in linear order, x fastest): the index of its cluster and its rank in it (x-major)."""
    gx, gy, gz = grid
    cx, cy, cz = cluster or (1, 1, 1)
    ids, ranks = [], []
    for bz in range(gz):
        for by in range(gy):
            for bx in range(gx):
                ids.append((bx // cx) + (gx // cx) * ((by // cy) + (gy // cy) * (bz // cz)))
                ranks.append(bx % cx + cx * (by % cy + cy * (bz % cz)))
    return np.array(ids), np.array(ranks)


def blocks_of(grid):
    return int(np.prod(grid))
