"""Every kernel that tests/gpu/test_cutlass_features_gpu.py launches builds here, without a GPU, with the same
compile-time parameters and tensor types: radix_rank, reduce_batched, group queries of every kind and level, fragment
interop and the every-family kernel (their results are checked only on a GPU)."""
from __future__ import annotations

import pytest

cutlass = pytest.importorskip("cutlass")
from cutlass.cute.runtime import make_fake_tensor  # noqa: E402

import cuda.coop.cutlass as cute_coop  # noqa: E402

import cute_feature_kernels as fk  # noqa: E402
import cute_kernels as ck  # noqa: E402


def _tensor(n, dtype="int32"):
    return make_fake_tensor(fk.CUTE_TYPES[dtype], (n,), stride=(1,))


def _inlined(kernel):
    assert kernel.cubin[:4] == b"\x7fELF"
    assert "CALL" not in kernel.sass() and kernel.local_memory_bytes == 0


@pytest.mark.parametrize("begin, end, radix_bits, descending", fk.RADIX_RANK_DIGITS)
@pytest.mark.parametrize("dtype, k, shape", fk.RADIX_RANK_TILES)
def test_radix_rank_kernels_build(dtype, k, shape, begin, end, radix_bits, descending):
    _, n = fk.radix_rank_sizes(dtype, k, shape)
    kernel = cute_coop.compile_kernel(fk.radix_rank_launch, _tensor(n, dtype), _tensor(n), _tensor(n, dtype),
                                      fk.RADIX_RANK_BLOCKS, shape, k, begin, end, radix_bits, descending)
    assert "cub::BlockRadixRank<" in kernel.cpp_source
    _inlined(kernel)


@pytest.mark.parametrize("op, dtype", fk.REDUCE_BATCHED_OPERATORS)
@pytest.mark.parametrize("width", fk.REDUCE_BATCHED_WIDTHS)
def test_reduce_batched_kernels_build(width, op, dtype):
    payloads, threads = fk.reduce_batched_sizes(width)
    sources = [_tensor(threads * b, dtype) for b, _ in payloads]
    outputs = [_tensor(threads * m, dtype) for _, m in payloads for _layout in ("striped", "blocked")]
    kernel = cute_coop.compile_kernel(fk.reduce_batched_launch, *sources, *outputs,
                                      _tensor(threads * payloads[-1][0], dtype), fk.REDUCE_BATCHED_BLOCKS, width, op)
    assert "cuda_coop_reduce_batched_" in kernel.cpp_source
    _inlined(kernel)


@pytest.mark.parametrize("grid, block, cluster", fk.QUERY_LAUNCHES)
def test_group_query_kernels_build(grid, block, cluster):
    kernel = cute_coop.compile_kernel(fk.queries_launch, _tensor(fk.query_rows(grid, block) * fk.COLUMNS, "int64"),
                                      grid, block, cluster)
    assert "cuda_coop::cluster_position(cta, ncta, clu, nclu);" in kernel.cpp_source
    _inlined(kernel)


def test_the_fragment_interop_kernels_build():
    n = fk.FRAGMENT_BLOCKS * fk.THREADS * fk.K
    kernel = cute_coop.compile_kernel(fk.fragment_interop_launch, _tensor(n), _tensor(n), _tensor(fk.FRAGMENT_BLOCKS),
                                      _tensor(n), _tensor(n), _tensor(n), _tensor(n), fk.FRAGMENT_BLOCKS)
    _inlined(kernel)
    _inlined(cute_coop.compile_kernel(ck.fragment_launch, _tensor(ck.THREADS * ck.K), _tensor(ck.THREADS * ck.K)))


def test_the_every_family_kernel_builds_with_the_gpu_tests_arguments():
    tile = ck.THREADS * ck.K
    kernel = cute_coop.compile_kernel(ck.everything_launch, _tensor(tile), _tensor(tile), fk.EVERYTHING_COUNT,
                                      _tensor(len(ck.EVERYTHING_STAGES) * tile), _tensor(ck.EVERYTHING_DECODED),
                                      _tensor(len(ck.EVERYTHING_SCALARS)), fk.EVERYTHING_WINDOW)
    _inlined(kernel)


@pytest.mark.parametrize("descending, striped", fk.PARTIAL_SORTS)
def test_radix_sort_partial_tile_kernels_build(descending, striped):
    n = fk.PARTIAL_BLOCKS * fk.THREADS * fk.PARTIAL_K
    kernel = cute_coop.compile_kernel(fk.radix_partial_launch, _tensor(n, "float32"), _tensor(n, "int64"),
                                      _tensor(n, "float32"), _tensor(n, "int64"), cutlass.Int32(5),
                                      cutlass.Float32(-1.5), fk.PARTIAL_K, descending, striped)
    assert "check_range(valid_items, 0, 384);" in kernel.cpp_source
    assert ("pad_striped(" if striped else "pad_blocked(out, cuda_coop::linear_rank<128, 1, 1>(), valid_items, "
            "oob_default)") in kernel.cpp_source
    _inlined(kernel)


@pytest.mark.parametrize("algorithm", ["atomic", "sort"])
def test_scalar_histogram_partial_tile_kernels_build(algorithm):
    n = fk.PARTIAL_BLOCKS * fk.THREADS
    kernel = cute_coop.compile_kernel(fk.histogram_partial_launch, _tensor(n, "uint8"), _tensor(2 * n),
                                      cutlass.Int32(5), algorithm)
    assert "algo.Histogram(&sample, output, valid_items);" in kernel.cpp_source
    _inlined(kernel)


@pytest.mark.parametrize("width, k", [(32, 1), (8, 1), (32, 3), (4, 2)])
def test_warp_topk_kernels_build_one_key_per_lane_by_shuffles_more_in_each_groups_scratch(width, k):
    """The route of docs: operations/topk, "Warps and logical warps", on this backend too (SPEC 12.5)."""
    n = fk.WARP_TOPK_BLOCKS * 64 * k
    kernel = cute_coop.compile_kernel(fk.warp_topk_launch, _tensor(n, "float32"), _tensor(n), _tensor(n, "float32"),
                                      _tensor(n), cutlass.Int32(3), cutlass.Int32(width * k - 1), width, k)
    assert f"cuda_coop::WarpTopK<float, cuda_coop::KeyKind::FLOATING, {k}, {width}, int, true, {str(k == 1).lower()}>" \
        in kernel.cpp_source
    assert "cuda_coop::check_range(k, 0, " in kernel.cpp_source
    _inlined(kernel)
    sass = kernel.sass()
    assert "BPT.TRAP" in sass
    if k == 1:
        assert "SHFL" in sass and kernel.shared_memory_bytes == 0
    else:
        assert kernel.shared_memory_bytes > 0 and "BAR.SYNC" not in sass
