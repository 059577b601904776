"""The cluster reduce of cuda.coop.cutlass without a GPU (SPEC 9.3, 12.2; docs: operations/reduce, "More groups in
the qualified namespaces"): every launch of tests/gpu/test_cutlass_cluster_gpu.py builds to an sm_90 cubin with the
CUB code inlined, its blocks' partials read through distributed shared memory between two cluster barriers, as the
numba-cuda-mlir build of tests/compile/test_reduce_groups_compile.py; and its mistakes are reported at the call's
line: a cluster shape known only at run time (G23), a target below sm_90 (G20), the cluster group in the common
reduce (G3)."""
from __future__ import annotations

import pytest

cutlass = pytest.importorskip("cutlass")
from cutlass.cute.runtime import make_fake_tensor  # noqa: E402

import cuda.coop.cutlass as cute_coop  # noqa: E402
from cuda import coop  # noqa: E402

import cute_cluster_kernels as cc  # noqa: E402
import cute_kernels as ck  # noqa: E402

TYPES = {"int32": cutlass.Int32, "float32": cutlass.Float32, "float64": cutlass.Float64, "uint8": cutlass.Uint8}
WORDS = {"int32": ("int", 4), "float32": ("float", 4), "float64": ("double", 8), "uint8": ("unsigned char", 1)}


def _tensor(n, dtype="int32"):
    return make_fake_tensor(TYPES[dtype], (n,), stride=(1,))


def _reads_other_blocks(kernel):
    """Inlined (no CALL, no local memory), two cluster barriers (partials in; no block leaves while others read) and
    the cluster's shared window that mapa addresses."""
    assert kernel.cubin[:4] == b"\x7fELF"
    sass = kernel.sass()
    assert "CALL" not in sass and kernel.local_memory_bytes == 0
    assert sass.count("UCGABAR_WAIT") == 2, sass.count("UCGABAR_WAIT")
    assert "SR_SWINHI" in sass


def _build(grid, cluster, k, op, broadcast, dtype):
    n = cc.blocks_of(grid) * cc.THREADS
    return cute_coop.compile_kernel(cc.cluster_reduce_launch, _tensor(n * max(k, 1), dtype), _tensor(n, dtype), grid,
                                    cluster, k, op, broadcast)


@pytest.mark.parametrize("k, op, broadcast, dtype", cc.FORMS)
@pytest.mark.parametrize("grid, cluster", cc.LAUNCHES)
def test_cluster_reduce_kernels_build(grid, cluster, k, op, broadcast, dtype):
    kernel = _build(grid, cluster, k, op, broadcast, dtype)
    t, word = WORDS[dtype]
    # include/cuda_coop/block/block_cluster_reduce.cuh, a partial read in words of its own width
    assert f"cuda_coop::BlockClusterReduce<{t}, {str(broadcast).lower()}, {word}, 128, 1, 1>" in kernel.cpp_source
    _reads_other_blocks(kernel)


@pytest.mark.parametrize("op", cc.PAIR_OPERATORS)
@pytest.mark.parametrize("grid, cluster", [launch for launch in cc.LAUNCHES if launch[1] is not None])
def test_a_tuple_of_two_floats_with_a_function_of_tuples_builds(grid, cluster, op):
    """(m, s) of two float32 scalars reduced over the cluster with a user function of tuples (SPEC 8.18): the
    function is traced by CuTe and inlined into the C++ functor; the pair crosses as one 8-byte struct read in
    4-byte words."""
    n = cc.blocks_of(grid) * cc.THREADS
    kernel = cute_coop.compile_kernel(cc.cluster_pair_launch, *(_tensor(n, "float32") for _ in range(4)), grid,
                                      cluster, op)
    assert "cuda_coop::BlockClusterReduce<cuda_coop_tuple_float32_float32, true, 4, 128, 1, 1>" in kernel.cpp_source
    _reads_other_blocks(kernel)


def test_g23_a_cluster_shape_known_only_at_run_time():
    n = 8 * cc.THREADS
    with pytest.raises(coop.CoopValueError) as info:
        cute_coop.compile_kernel(cc.dynamic_cluster_launch, _tensor(2 * n), _tensor(n), cutlass.Int32(2))
    assert str(info.value) == (f"{cc.__file__}:{ck.marked_line(cc.cluster_reduce_kernel)}: cuda.coop.cutlass.reduce "
                               "needs the cluster shape of kernel cluster_reduce_kernel at compile time; pass "
                               "cluster= as constants to .launch()")


def test_g20_a_cluster_reduce_below_compute_capability_9():
    with pytest.raises(coop.CoopUnsupportedError) as info:
        cute_coop.compile_kernel(cc.cluster_reduce_launch, _tensor(2048), _tensor(1024), (8, 1, 1), (2, 1, 1), 2,
                                 "sum", True, target="sm_80")
    assert str(info.value) == (f"{cc.__file__}:{ck.marked_line(cc.cluster_reduce_kernel)}: cluster groups require "
                               "compute capability 9.0 or newer; target is sm_80")


def test_the_common_reduce_rejects_the_cluster_group():
    """The cluster group is a qualified extension (SPEC 9.3): the common reduce says G3 and where it is."""
    with pytest.raises(coop.CoopUnsupportedError) as info:
        cute_coop.compile_kernel(cc.common_cluster_launch, _tensor(2048), _tensor(1024))
    assert str(info.value) == (f"{cc.__file__}:{ck.marked_line(cc.common_cluster_kernel)}: cuda.coop.reduce does not "
                               "support group kind 'cluster'; supported group kinds: block, warp, threads_within_warp; "
                               "cuda.coop.cutlass.reduce also supports thread, warps_within_block, cluster")
