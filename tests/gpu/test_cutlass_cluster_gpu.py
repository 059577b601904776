"""The cluster reduce of cuda.coop.cutlass launched against NumPy oracles (SPEC 9.3, 12.2; docs: operations/reduce,
"More groups in the qualified namespaces"), as tests/gpu/test_reduce_groups_gpu.py launches numba-cuda-mlir's:
``cute_coop.reduce(coop.this_cluster(), value, ...)`` over clusters of 2, 4 and 8 blocks (and 2x2, and a launch
without clusters, where each block is its own cluster), scalars and payloads, string operators and a user function,
with and without broadcast; and a tuple of two float32 scalars reduced with a function of tuples: (max, sum) exactly,
and the (max, sum of exp) merge of an online softmax within a stated tolerance. Random inputs, poisoned outputs,
exact comparisons where the arithmetic is exact. The kernels live in tests/cute_dsl (CuTe reads their source), where
test_cutlass_cluster_compile.py builds each launch below without a GPU."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")  # before cutlass (the other order once broke torch's schema parser)
cutlass = pytest.importorskip("cutlass")
from cutlass.cute.runtime import from_dlpack  # noqa: E402

import cuda.coop.cutlass  # noqa: E402, F401  (registers the backend)

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cute_dsl"))
import cute_cluster_kernels as cc  # noqa: E402
from gpu_helpers import SEEDED_PER_TEST, exact_float_items, poisoned  # noqa: E402

pytestmark = pytest.mark.gpu
rng = SEEDED_PER_TEST  # each test draws from its own generator (tests/gpu/conftest.py)
THREADS = cc.THREADS
# The online-softmax merge rescales partial sums by exp(a - m) at every level of the reduction tree (5 warp shuffle
# levels, the block's warps, up to 3 levels over 8 blocks), each exp and product within a few float32 ulps: 1e-5
# relative is several times the worst case of ~20 ulps (2.4e-6); the running max itself is exact.
SOFTMAX_RTOL = 1e-5


def _device(host):
    return torch.from_numpy(np.ascontiguousarray(host).copy()).cuda()


def _launch(launcher, *args):
    launcher(*(from_dlpack(a) if isinstance(a, torch.Tensor) else a for a in args))
    torch.cuda.synchronize()


def data(n, dtype):
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        return exact_float_items(rng, n, dtype)  # multiples of 1/8: sums are exact in any order
    if dtype.kind == "u":
        return rng.integers(0, 250, n).astype(dtype)  # below uint8's poison (254)
    return rng.integers(-1000, 1000, n).astype(dtype)


FOLDS = {"sum": np.sum, "max": np.max, "larger": np.max}


@pytest.mark.parametrize("k, op, broadcast, dtype", cc.FORMS)
@pytest.mark.parametrize("grid, cluster", cc.LAUNCHES)
def test_cluster_combines_its_blocks(grid, cluster, k, op, broadcast, dtype):
    blocks = cc.blocks_of(grid)
    per_block = THREADS * max(k, 1)
    src = data(blocks * per_block, dtype)
    dst = _device(poisoned(blocks * THREADS, dtype))
    expected = poisoned(blocks * THREADS, dtype)
    ids, ranks = cc.cluster_of_blocks(grid, cluster)
    for c in np.unique(ids):
        members = np.flatnonzero(ids == c)
        total = FOLDS[op](np.concatenate([src[b * per_block:(b + 1) * per_block] for b in members])).astype(dtype)
        for b in members:
            if broadcast:
                expected[b * THREADS:(b + 1) * THREADS] = total
            elif ranks[b] == 0:
                expected[b * THREADS] = total  # rank 0: thread 0 of the cluster's first block
    _launch(cc.cluster_reduce_launch, _device(src), dst, grid, cluster, k, op, broadcast)
    np.testing.assert_array_equal(dst.cpu().numpy(), expected)


def _pairs(grid, cluster, op, values, weights):
    blocks = cc.blocks_of(grid)
    outs = [_device(poisoned(blocks * THREADS, np.float32)) for _ in range(2)]
    _launch(cc.cluster_pair_launch, _device(values), _device(weights), *outs, grid, cluster, op)
    ids, _ = cc.cluster_of_blocks(grid, cluster)
    return [out.cpu().numpy() for out in outs], np.repeat(ids, THREADS)  # each thread's cluster


CLUSTERED = [launch for launch in cc.LAUNCHES if launch[1] is not None]


@pytest.mark.parametrize("grid, cluster", CLUSTERED)
def test_a_max_and_a_sum_with_a_function_of_tuples(grid, cluster):
    """(values[i], weights[i]) reduced with ``max_and_sum``: the cluster's max and sum, exact (multiples of 1/8)."""
    n = cc.blocks_of(grid) * THREADS
    values, weights = data(n, np.float32), data(n, np.float32)
    (m, s), cluster_of = _pairs(grid, cluster, "max_and_sum", values, weights)
    want_m = np.array([values[cluster_of == c].max() for c in cluster_of], np.float32)
    want_s = np.array([weights[cluster_of == c].sum() for c in cluster_of], np.float32)
    np.testing.assert_array_equal(m, want_m)
    np.testing.assert_array_equal(s, want_s)


@pytest.mark.parametrize("grid, cluster", CLUSTERED)
def test_the_online_softmax_merge_of_a_cluster(grid, cluster):
    """Each thread starts from (x, 1); the cluster's reduction with ``online_softmax_merge`` is (max x, sum of
    exp(x - max x)): the max exact, the sum within SOFTMAX_RTOL of the float64 oracle."""
    n = cc.blocks_of(grid) * THREADS
    values = (rng.standard_normal(n) * 4).astype(np.float32)
    (m, s), cluster_of = _pairs(grid, cluster, "online_softmax_merge", values, np.ones(n, np.float32))
    want_m = np.array([values[cluster_of == c].max() for c in cluster_of], np.float32)
    want_s = np.array([np.exp(values[cluster_of == c].astype(np.float64) - values[cluster_of == c].max()).sum()
                       for c in cluster_of])
    np.testing.assert_array_equal(m, want_m)
    np.testing.assert_allclose(s, want_s, rtol=SOFTMAX_RTOL, atol=0)
    assert (s >= 1).all()  # the max's own term is exp(0) = 1: no poison, no NaN
