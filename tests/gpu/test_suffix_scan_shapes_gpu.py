"""The block suffix scan's forms on the GPU (numba-cuda-mlir; both backends compile the same header, and the
conformance cases run it on the CuTe backend at 128 threads): a reverse segmented inclusive sum and compacted
segment sums at the block shapes of tests/compile/test_suffix_scan_shapes_compile.py (raking at 64 to 1024 threads,
one and two dimensional; warp scans with a partial warp), each block's tile against NumPy: one tile without flags,
one with every flag set, one random."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from gpu_helpers import SEEDED_PER_TEST, poison_value, poisoned
from numba_cuda_mlir import cuda

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "compile"))
from test_suffix_scan_shapes_compile import K, SHAPES, segment_kernels  # noqa: E402

pytestmark = pytest.mark.gpu
BLOCKS = 3
rng = SEEDED_PER_TEST


def segments(heads: np.ndarray) -> list[tuple[int, int]]:
    """[lo, hi) of each segment of one tile: position 0 starts one, and every flagged position."""
    starts = [0] + [p for p in range(1, heads.size) if heads[p]]
    return list(zip(starts, starts[1:] + [heads.size]))


def inputs(tile: int) -> tuple[np.ndarray, np.ndarray]:
    src = rng.integers(-1000, 1001, BLOCKS * tile).astype(np.int32)
    heads = np.concatenate([np.zeros(tile, np.int32), np.ones(tile, np.int32),
                            (rng.random(tile) < 0.2).astype(np.int32)])
    return src, heads


@pytest.mark.parametrize("shape", [s for s, _ in SHAPES], ids=[f"{x}x{y}" for (x, y), _ in SHAPES])
def test_reverse_segmented_inclusive_sum(shape):
    tile = shape[0] * shape[1] * K
    src, heads = inputs(tile)
    dst = poisoned(src.size, np.int32)
    segment_kernels()[0][BLOCKS, shape](src, heads, dst)
    cuda.synchronize()
    want = np.empty_like(src)
    for b in range(BLOCKS):
        lo_tile = b * tile
        for lo, hi in segments(heads[lo_tile:lo_tile + tile]):
            part = src[lo_tile + lo:lo_tile + hi]
            want[lo_tile + lo:lo_tile + hi] = np.cumsum(part[::-1])[::-1]
    np.testing.assert_array_equal(dst, want)


@pytest.mark.parametrize("shape", [s for s, _ in SHAPES], ids=[f"{x}x{y}" for (x, y), _ in SHAPES])
def test_compacted_segment_sums(shape):
    tile = shape[0] * shape[1] * K
    src, heads = inputs(tile)
    dst = poisoned(src.size, np.int32)
    counts = poisoned(BLOCKS, np.int32)
    segment_kernels()[1][BLOCKS, shape](src, heads, dst, counts)
    cuda.synchronize()
    for b in range(BLOCKS):
        lo_tile = b * tile
        totals = [int(src[lo_tile + lo:lo_tile + hi].sum()) for lo, hi in segments(heads[lo_tile:lo_tile + tile])]
        assert counts[b] == len(totals)
        np.testing.assert_array_equal(dst[lo_tile:lo_tile + len(totals)], np.array(totals, np.int32))
        assert (dst[lo_tile + len(totals):lo_tile + tile] == poison_value(np.int32)).all()  # nothing past count
