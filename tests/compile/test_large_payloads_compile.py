"""Large payloads (issue 18, item 5): above 256 items per thread load and store are loops, not CUB's unrolled
per-item code (whose build took up to minutes), and need no shared-memory exchange; at and below 256 they are
CUB's. The bound on items per thread (P17) is in tests/compile/corpus/test_corpus_payloads.py; results on the GPU
in tests/gpu/test_large_payloads_gpu.py."""
from __future__ import annotations

import numpy as np
import pytest

import cuda.coop.numba_mlir as numba_coop
from cuda import coop
from numba_cuda_mlir import cuda

ALGORITHMS = ["direct", "striped", "vectorize", "transpose", "warp_transpose", "warp_transpose_timesliced"]


def _copy_kernel(k, algorithm):
    @cuda.jit
    def copy(src, dst, n):
        block = coop.this_block()
        items = coop.ThreadData(k)
        coop.load(block, src, items, algorithm=algorithm, valid_items=n, oob_default=7)
        coop.store(block, dst, items, algorithm=algorithm, valid_items=n)

    return copy


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_the_largest_payload_is_a_loop_without_scratch(algorithm):
    data = np.zeros(4096 * 32, np.int64)
    built = numba_coop.compile_kernel(_copy_kernel(4096, algorithm), (data, data, 5), block=32)
    source = built.cpp_source
    assert "cub::BlockLoad" not in source and "cub::BlockStore" not in source
    # loops of include/cuda_coop/block/block_load_store_rolled.cuh; striped stays striped, the rest blocked
    striped = str(algorithm == "striped").lower()
    assert f"cuda_coop::load_rolled<4096, 32, {striped}>" in source
    assert f"cuda_coop::store_rolled<4096, 32, {striped}>" in source
    assert built.shared_memory_bytes == 0  # no exchange through shared memory
    assert len(built.cubin) < 64 * 1024  # a loop, not 8192 unrolled memory operations


@pytest.mark.parametrize("algorithm", ["direct", "transpose"])
def test_up_to_the_bound_payloads_are_cubs(algorithm):
    data = np.zeros(256 * 32, np.int32)
    built = numba_coop.compile_kernel(_copy_kernel(256, algorithm), (data, data, 5), block=32)
    assert f"cub::BlockLoad<int, 32, 256, cub::BLOCK_LOAD_{algorithm.upper()}" in built.cpp_source


@cuda.jit
def warp_copy(src, dst):
    warp = coop.this_warp().group_by(8)
    items = coop.ThreadData(300)
    coop.load(warp, src, items, algorithm="striped")
    coop.store(warp, dst, items)


def test_a_logical_warp_payload_loop_starts_at_its_groups_tile():
    data = np.zeros(300 * 64, np.float32)
    source = numba_coop.compile_kernel(warp_copy, (data, data), block=64).cpp_source
    assert "cub::WarpLoad" not in source
    assert "array += (long long)cuda_coop::group_instance<8>(rank) * 2400;" in source
    assert "const long long lane = (rank % 32u) % 8u;" in source
