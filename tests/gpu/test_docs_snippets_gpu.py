"""The documentation's recipes (tests/docs_snippets/recipes.py) on the GPU against NumPy, outputs poisoned."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from gpu_helpers import SEEDED_PER_TEST, full_range, poisoned

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "docs_snippets"))
import recipes as r  # noqa: E402

pytestmark = pytest.mark.gpu
rng = SEEDED_PER_TEST  # each test draws from its own generator (tests/gpu/conftest.py)
N = r.THREADS * r.K


@pytest.mark.parametrize("n", [0, 1, 300, N])
def test_histogram_of_a_partial_tile(n):
    samples = poisoned(N, np.uint8)  # past n: a byte that would count in bin 254 if it were read
    samples[:n] = rng.integers(0, 256, size=n).astype(np.uint8)
    counts = poisoned(2 * r.THREADS, np.int32)
    r.histogram_partial[1, r.THREADS](samples, counts, n)
    np.testing.assert_array_equal(counts[:r.BINS], np.bincount(samples[:n], minlength=r.BINS).astype(np.int32))


@pytest.mark.parametrize("n", [0, 1, 300, N])
def test_radix_sort_of_a_partial_tile(n):
    keys = full_range(rng, N, np.uint32)  # the maximum included: no key needs to stay free for padding
    keys[n:] = 0  # past n: keys that would sort first if they took part
    out = poisoned(N, np.uint32)
    r.radix_sort_partial[1, r.THREADS](keys, out, n)
    np.testing.assert_array_equal(out[:n], np.sort(keys[:n]))
    np.testing.assert_array_equal(out[n:], poisoned(N, np.uint32)[n:])  # the store wrote only the first n


def test_running_inclusive_sum_over_tiles():
    tiles = 5
    src = rng.integers(-1000, 1000, size=tiles * N).astype(np.int64)
    dst = poisoned(src.size, np.int64)
    r.running_inclusive_sum[1, r.THREADS](src, dst, tiles)
    np.testing.assert_array_equal(dst, np.cumsum(src))


def test_row_sums_of_rows_wider_than_a_tile():
    rows, width = 3, 1500
    matrix = rng.integers(-100, 100, size=rows * width).astype(np.float64)
    sums = poisoned(rows, np.float64)
    r.row_sums[rows, r.THREADS](matrix, sums, width)
    np.testing.assert_array_equal(sums, matrix.reshape(rows, width).sum(axis=1))


def test_local_and_shared_arrays_as_payloads():
    src = rng.integers(-1000, 1000, size=N).astype(np.int32)
    dst = poisoned(N, np.int32)
    r.sort_rows_in_shared[1, r.THREADS](src, dst)
    np.testing.assert_array_equal(dst, np.sort(src))
