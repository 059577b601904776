"""The qualified argmax/argmin with and without the broadcast on the GPU (numba-cuda-mlir; the CuTe DSL twin is in
test_cutlass_gpu.py): rank 0 of the block and lane 0 of every warp hold NumPy's (value, first index)."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from gpu_helpers import poisoned
from numba_cuda_mlir import cuda

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "compile"))
from test_argreduce_compile import THREADS, K, argmax_kernel  # noqa: E402  (the kernels the CPU test builds)

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("broadcast", [True, False])
def test_qualified_argmax_in_rank_zero_and_every_warp(broadcast):
    blocks, warps = 3, THREADS // 32
    host = np.random.default_rng(31).integers(-50, 50, size=blocks * THREADS * K).astype(np.int32)  # ties occur
    block_out = poisoned(blocks * 2, np.int32)
    warp_out = poisoned(blocks * warps * 2, np.int32)
    argmax_kernel(broadcast)[blocks, THREADS](host, block_out, warp_out)
    cuda.synchronize()
    tiles = host.reshape(blocks, -1)
    at = np.argmax(tiles, axis=1)
    np.testing.assert_array_equal(block_out.reshape(blocks, 2), np.stack([tiles[np.arange(blocks), at], at], 1))
    firsts = tiles.reshape(blocks, THREADS, K)[:, :, 0].reshape(blocks * warps, 32)  # item 0 of every lane
    lane = np.argmin(firsts, axis=1)
    np.testing.assert_array_equal(warp_out.reshape(-1, 2),
                                  np.stack([firsts[np.arange(firsts.shape[0]), lane], lane], 1))
