"""User-defined aggregates as members of multi-operand reduce and scans (SPEC 8.18, 9.2) on the GPU against NumPy:
(record, int32) and (int32, record) tuples of payloads and of scalars, struct-model (Interval, int32) and (Tagged,
int32) tuples. Keys are unique where the operator picks the larger one, so every result is exact in any order;
outputs are poisoned and inputs checked unchanged. The kernels are the ones
tests/compile/test_aggregate_tuples_compile.py builds."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from gpu_helpers import SEEDED_PER_TEST, poisoned
from numba_cuda_mlir import cuda

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "compile"))
import test_aggregate_tuples_compile as built  # noqa: E402  (the kernels the CPU test builds)

pytestmark = pytest.mark.gpu
rng = SEEDED_PER_TEST  # each test draws from its own generator (tests/gpu/conftest.py)
BLOCKS = 3
THREADS, K, TILE, WARPS, PAIR = built.THREADS, built.K, built.TILE, built.WARPS, built.PAIR


def pair_records(groups, size):
    """``groups`` runs of ``size`` records, keys unique within a run and even (a seed with an odd key never ties),
    random float values."""
    out = np.zeros(groups * size, PAIR)
    out["key"] = np.concatenate([rng.permutation(size) * 2 - size for _ in range(groups)])
    out["val"] = rng.normal(size=out.size).astype(np.float32)
    return out


def same_bytes(got, want):
    np.testing.assert_array_equal(np.ascontiguousarray(got).view(np.uint8), np.ascontiguousarray(want).view(np.uint8))


def running_best(runs, seed=None):
    """For each run (rows of records) the record of the largest key so far, first ``seed`` when given (inclusive
    without a seed, exclusive with one)."""
    rows = []
    for run in runs:
        best = seed
        picks = []
        for record in run:
            if seed is not None:
                picks.append(best)
            if best is None or record["key"] > best["key"]:
                best = record
            if seed is None:
                picks.append(best)
        rows.append(np.array(picks, PAIR))
    return np.concatenate(rows)


def best_of(runs):
    return np.concatenate([run[[np.argmax(run["key"])]] for run in runs])


def poisoned_like(args):
    return [poisoned(a.size, a.dtype) for a in args]


def test_record_and_int32_payload_tuples_in_block_scans_and_reduce():
    records = pair_records(BLOCKS, TILE)
    ints = rng.integers(-1000, 1000, records.size).astype(np.int32)
    seed = np.zeros(1, PAIR)
    seed["key"], seed["val"] = 1, np.float32(0.5)  # larger than about half of each tile's keys
    keep = records.copy(), ints.copy()
    outs = poisoned_like(built.block_record_args(records, ints, seed, BLOCKS)[3:])
    built.block_record_kernel()[BLOCKS, THREADS](records, ints, seed, *outs)
    cuda.synchronize()
    same_bytes(records, keep[0])
    np.testing.assert_array_equal(ints, keep[1])
    scan_records, scan_ints, excl_records, excl_ints, totals_ints, totals_records = outs
    tiles, counts = records.reshape(BLOCKS, TILE), ints.reshape(BLOCKS, TILE).astype(np.int64)
    same_bytes(scan_records, running_best(tiles))
    np.testing.assert_array_equal(scan_ints, np.cumsum(counts, 1).astype(np.int32).reshape(-1))
    same_bytes(excl_records, running_best(tiles, seed[0]))
    np.testing.assert_array_equal(excl_ints, (7 + np.cumsum(counts, 1) - counts).astype(np.int32).reshape(-1))
    np.testing.assert_array_equal(totals_ints, counts.sum(1).astype(np.int32))
    same_bytes(totals_records, best_of(tiles))


def test_record_and_int32_scalar_tuples_in_warp_scan_and_reduce():
    records = pair_records(BLOCKS * WARPS, 32)
    ints = rng.integers(-1000, 1000, records.size).astype(np.int32)
    keep = records.copy(), ints.copy()
    outs = poisoned_like(built.warp_record_args(records, ints, BLOCKS)[2:])
    built.warp_record_kernel()[BLOCKS, THREADS](records, ints, *outs)
    cuda.synchronize()
    same_bytes(records, keep[0])
    np.testing.assert_array_equal(ints, keep[1])
    warp_records, warp_ints, totals_ints, totals_records = outs
    warps, counts = records.reshape(-1, 32), ints.reshape(-1, 32).astype(np.int64)
    same_bytes(warp_records, running_best(warps))
    np.testing.assert_array_equal(warp_ints, np.cumsum(counts, 1).astype(np.int32).reshape(-1))
    np.testing.assert_array_equal(totals_ints, counts.sum(1).astype(np.int32))
    same_bytes(totals_records, best_of(warps))


def test_struct_model_member_tuples():
    """(Interval, int32) block scans of scalars and of payloads (seeded), a (Tagged, int32) warp reduce."""
    n = BLOCKS * TILE
    lo = rng.normal(size=n).astype(np.float32)
    hi = (lo + rng.uniform(0.1, 2.0, n)).astype(np.float32)
    ints = rng.integers(-1000, 1000, n).astype(np.int32)
    keys = np.concatenate([rng.permutation(32) * 3 - 40 for _ in range(n // 32)]).astype(np.int64)
    tags = rng.integers(-100, 100, n).astype(np.int8)
    seed = np.array([-0.25, 0.25], np.float32)
    inputs = (lo, hi, ints, keys, tags, seed)
    keep = [a.copy() for a in inputs]
    outs = poisoned_like(built.struct_args(*inputs, BLOCKS)[6:])
    built.struct_kernel()[BLOCKS, THREADS](*inputs, *outs)
    cuda.synchronize()
    for got, want in zip(inputs, keep):
        np.testing.assert_array_equal(got, want)
    scan_lo, scan_hi, scan_ints, excl_lo, excl_hi, excl_ints, warp_keys, warp_tags, warp_ints = outs
    threads = BLOCKS * THREADS  # one scalar per thread: the first BLOCKS * THREADS elements
    per_block = lo[:threads].reshape(BLOCKS, THREADS), hi[:threads].reshape(BLOCKS, THREADS)
    np.testing.assert_array_equal(scan_lo[:threads], np.minimum.accumulate(per_block[0], 1).reshape(-1))
    np.testing.assert_array_equal(scan_hi[:threads], np.maximum.accumulate(per_block[1], 1).reshape(-1))
    np.testing.assert_array_equal(scan_ints[:threads], np.cumsum(ints[:threads].reshape(BLOCKS, THREADS)
                                                                 .astype(np.int64), 1).astype(np.int32).reshape(-1))
    for out in (scan_lo, scan_hi, scan_ints):  # the rest is never written
        np.testing.assert_array_equal(out[threads:].view(np.uint8), poisoned(n - threads, out.dtype).view(np.uint8))
    tile_lo, tile_hi = lo.reshape(BLOCKS, TILE), hi.reshape(BLOCKS, TILE)
    want_lo = np.full((BLOCKS, TILE), seed[0], np.float32)
    want_hi = np.full((BLOCKS, TILE), seed[1], np.float32)
    want_lo[:, 1:] = np.minimum(seed[0], np.minimum.accumulate(tile_lo, 1)[:, :-1])
    want_hi[:, 1:] = np.maximum(seed[1], np.maximum.accumulate(tile_hi, 1)[:, :-1])
    np.testing.assert_array_equal(excl_lo, want_lo.reshape(-1))
    np.testing.assert_array_equal(excl_hi, want_hi.reshape(-1))
    counts = ints.reshape(BLOCKS, TILE).astype(np.int64)
    np.testing.assert_array_equal(excl_ints, (-3 + np.cumsum(counts, 1) - counts).astype(np.int32).reshape(-1))
    warp_k, warp_t = keys[:threads].reshape(-1, 32), tags[:threads].reshape(-1, 32)
    top = np.argmax(warp_k, 1)
    rows = np.arange(warp_k.shape[0])
    np.testing.assert_array_equal(warp_keys, warp_k[rows, top])
    np.testing.assert_array_equal(warp_tags, warp_t[rows, top])
    np.testing.assert_array_equal(warp_ints, ints[:threads].reshape(-1, 32).astype(np.int64).sum(1).astype(np.int32))
