"""Boolean scalar head flags on the GPU (numba-cuda-mlir; SPEC 8.17): an element of a boolean array, ``not`` of an
integer and a comparison flag segments exactly where NumPy says (comparisons on both backends: the conformance
cases ``segmented_scan-*compared_flags*``)."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from gpu_helpers import poisoned
from numba_cuda_mlir import cuda

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "compile"))
from test_scan_segmented_compile import THREADS, boolean_flags_args, boolean_flags_kernel  # noqa: E402

pytestmark = pytest.mark.gpu


def segmented(values, heads, fold, exclusive=False, reverse=False):
    """Each row scanned per segment (a true head starts one; position 0 always does), forward or reverse; an
    exclusive sum gives 0 where a segment's scan begins."""
    out = np.empty_like(values)
    for row in range(values.shape[0]):
        starts = [0] + [p for p in range(1, values.shape[1]) if heads[row, p]]
        for lo, hi in zip(starts, starts[1:] + [values.shape[1]]):
            segment = values[row, lo:hi][::-1] if reverse else values[row, lo:hi]
            scanned = fold.accumulate(segment)
            if exclusive:
                scanned = np.concatenate([[0], scanned[:-1]])
            out[row, lo:hi] = scanned[::-1] if reverse else scanned
    return out


def test_boolean_scalar_flags():
    blocks = 3
    rng = np.random.default_rng(817)
    src = rng.integers(-5, 6, blocks * THREADS).astype(np.int32)  # zeros and negatives flag segments
    starts = rng.random(src.size) < 0.25
    keep, keep_starts = src.copy(), starts.copy()
    _, _, *outs = boolean_flags_args(src, starts)
    outs = [poisoned(out.size, out.dtype) for out in outs]
    boolean_flags_kernel()[blocks, THREADS](src, starts, *outs)
    cuda.synchronize()
    by_array, by_not, by_comparison = outs
    np.testing.assert_array_equal(src, keep)
    np.testing.assert_array_equal(starts, keep_starts)
    np.testing.assert_array_equal(by_array.reshape(-1, 32),
                                  segmented(src.reshape(-1, 32), starts.reshape(-1, 32), np.add))
    np.testing.assert_array_equal(by_not.reshape(-1, THREADS),
                                  segmented(src.reshape(-1, THREADS), src.reshape(-1, THREADS) == 0, np.add,
                                            exclusive=True))
    np.testing.assert_array_equal(by_comparison.reshape(-1, 8),
                                  segmented(src.reshape(-1, 8), src.reshape(-1, 8) < 0, np.maximum, reverse=True))
