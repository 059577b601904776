"""Issue 42's benchmark rows (benchmarks/beyond.py) without a GPU: the rows cover the issue's shapes, and every NumPy
oracle agrees with a plain-Python loop on small random tiles (so a GPU run's "verified" means what it says)."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))  # the benchmarks package lives beside src/, not inside it

from benchmarks import beyond  # noqa: E402

T = beyond.THREADS


def _src(dtype: str, size: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if dtype == "int32":
        return rng.integers(-2**31, 2**31, size=size, dtype=np.int64).astype(np.int32)
    return np.rint(rng.standard_normal(size) * 1000).astype(np.float32) + np.float32(0.0)


def _row(operation: str, dtype: str, k: int, **kw) -> beyond.Row:
    return next(r for r in beyond.ROWS if r.operation == operation and r.dtype == dtype and r.items == k
                and all(getattr(r, key) == value for key, value in kw.items()))


def _add(a, b, dtype):
    if dtype == "int32":
        return np.int32(np.uint32((int(a) + int(b)) % (1 << 32)).view(np.int32))
    return np.float32(float(a) + float(b))


def test_rows_cover_the_issue_shapes():
    block_ops = {"broadcast", "select", "partition", "segment_sums", "radix_sort_valid", "running_exclusive_sum",
                 "running_segmented_sum", "running_reverse_exclusive_sum"}
    for op in block_ops:
        assert {(r.items, r.dtype) for r in beyond.ROWS if r.operation == op} == {
            (k, d) for k in (4, 16) for d in ("int32", "float32")}, op
    assert {r.items for r in beyond.ROWS if r.operation == "histogram_valid"} == {4, 16}
    topk = {(r.width, r.items, r.top, r.dtype) for r in beyond.ROWS if r.operation == "topk"}
    assert topk == {(w, k, top, d) for w, k in ((32, 1), (8, 4)) for top in (2, 4, 8) for d in ("int32", "float32")}
    assert all(r.width * r.items == beyond.ROW for r in beyond.ROWS if r.operation == "topk")
    assert len({r.name for r in beyond.ROWS}) == len(beyond.ROWS)
    assert [r.name for r in beyond.ROWS if not r.triton] == [r.name for r in beyond.ROWS if r.operation == "broadcast"]
    for row in beyond.ROWS:  # every twin is instantiated by a macro of cub/beyond.cu
        macro = row.cub_line().split("(")[0]
        assert f"#define {macro}(" in (ROOT / "benchmarks" / "cub" / "beyond.cu").read_text(), row.name


@pytest.mark.parametrize("dtype", ["int32", "float32"])
@pytest.mark.parametrize("operation", ["select", "partition"])
def test_select_and_partition_oracles(operation, dtype):
    row = _row(operation, dtype, 4)
    src = _src(dtype, 3 * row.tile, 1)
    want = beyond.oracle(row, src)
    poison = beyond.poison_of(src.dtype)
    for b in range(3):
        tile = list(src[b * row.tile:(b + 1) * row.tile])
        kept = [x for x in tile if x > 0]
        rest = [x for x in tile if not x > 0]
        expect = kept + (rest if operation == "partition" else [poison] * len(rest))
        got = want["dst"][b * row.tile:(b + 1) * row.tile]
        assert np.array_equal(np.array(expect, src.dtype).view(np.uint32), got.view(np.uint32))
        assert want["out2"][b] == len(kept)


@pytest.mark.parametrize("dtype", ["int32", "float32"])
def test_segment_sums_oracle(dtype):
    row = _row("segment_sums", dtype, 4)
    src = _src(dtype, 3 * row.tile, 2)
    want = beyond.oracle(row, src)
    poison = beyond.poison_of(src.dtype)
    for b in range(3):
        tile = src[b * row.tile:(b + 1) * row.tile]
        totals = []
        for p, x in enumerate(tile):
            if p == 0 or (int(x) & 15) == 0:
                totals.append(x)
            else:
                totals[-1] = _add(totals[-1], x, dtype)
        expect = np.array(totals + [poison] * (row.tile - len(totals)), src.dtype)
        assert 1 < len(totals) < row.tile
        assert np.array_equal(expect.view(np.uint32), want["dst"][b * row.tile:(b + 1) * row.tile].view(np.uint32))
        assert want["out2"][b] == len(totals)


@pytest.mark.parametrize("dtype", ["int32", "float32"])
@pytest.mark.parametrize("operation", ["running_exclusive_sum", "running_segmented_sum",
                                       "running_reverse_exclusive_sum", "broadcast"])
def test_scan_and_broadcast_oracles(operation, dtype):
    row = _row(operation, dtype, 16)
    size = row.tile * row.tiles
    src = _src(dtype, 2 * size, 3)
    got = beyond.oracle(row, src)["dst"]
    for b in range(2):
        block = src[b * size:(b + 1) * size]
        running = src.dtype.type(0)
        order = range(size - 1, -1, -1) if operation == "running_reverse_exclusive_sum" else range(size)
        out = [None] * size
        for p in order:
            x = block[p]
            if operation == "broadcast":
                out[p] = np.int32((int(x) - int(block[0])) % (1 << 32) - (1 << 32) * (
                    (int(x) - int(block[0])) % (1 << 32) >= 1 << 31)) if dtype == "int32" else x - block[0]
            elif operation == "running_segmented_sum":
                running = x if p == 0 or (int(x) & 15) == 0 else _add(running, x, dtype)
                out[p] = running
            else:
                out[p] = running
                running = _add(running, x, dtype)
        expect = np.array(out, src.dtype)
        assert np.array_equal(expect.view(np.uint32), got[b * size:(b + 1) * size].view(np.uint32)), (operation, b)


@pytest.mark.parametrize("dtype", ["int32", "float32"])
def test_partial_tile_oracles(dtype):
    row = _row("radix_sort_valid", dtype, 4)
    src = _src(dtype, 4 * row.tile, 4)
    valid = beyond.valid_counts(4, row.tile)
    assert ((valid >= row.tile // 2) & (valid <= row.tile)).all() and len(set(valid)) > 1
    got = beyond.oracle(row, src, valid)["dst"]
    for b in range(4):
        tile = src[b * row.tile:(b + 1) * row.tile]
        expect = sorted(tile[:valid[b]]) + [beyond.largest(dtype)] * (row.tile - valid[b])
        assert np.array_equal(np.array(expect, src.dtype), got[b * row.tile:(b + 1) * row.tile])
    if dtype == "int32":
        hist = _row("histogram_valid", "int32", 4)
        samples = src & 255
        counts = beyond.oracle(hist, samples, valid)["dst"]
        expect = np.zeros(256, np.uint64)
        for b in range(4):
            for x in samples[b * row.tile:b * row.tile + valid[b]]:
                expect[x] += 1
        assert np.array_equal(counts, expect)


@pytest.mark.parametrize("width, k", [(32, 1), (8, 4)])
def test_topk_check_accepts_any_order_and_ties_and_rejects_wrong_answers(width, k):
    row = _row("topk", "float32", k, width=width, top=4)
    src = np.rint(np.random.default_rng(5).standard_normal(8 * 32) * 3).astype(np.float32) + np.float32(0.0)
    want = beyond.oracle(row, src)["keys"]
    rows = src.reshape(-1, 32)
    positions = np.argsort(-rows, axis=1, kind="stable")[:, :4][:, ::-1].copy()  # any order
    keys = np.take_along_axis(rows, positions, axis=1)
    assert beyond.check_topk(row, src, keys.copy(), positions.copy(), want)
    # a tie at the boundary may keep either of the equal keys
    tied = next(r for r in range(8) if (rows[r] == np.sort(rows[r])[-4]).sum() > 1)
    other = [p for p in np.flatnonzero(rows[tied] == np.sort(rows[tied])[-4]) if p not in positions[tied]]
    if other:
        swapped = positions.copy()
        swapped[tied, list(keys[tied]).index(np.sort(rows[tied])[-4])] = other[0]
        assert beyond.check_topk(row, src, keys.copy(), swapped, want)
    wrong = positions.copy()
    wrong[0, 0] = wrong[0, 1]  # a position twice
    assert not beyond.check_topk(row, src, keys.copy(), wrong, want)
    smaller = keys.copy()
    smaller[1, 0] = np.float32(-1e9)
    assert not beyond.check_topk(row, src, smaller, positions.copy(), want)


def test_bytes_moved_counts_outputs():
    n = 1 << 20
    row = _row("select", "int32", 4)
    assert beyond.bytes_moved(row, n, written=10) == 4 * n + 40 + 4 * row.grid(n)
    top = _row("topk", "int32", 1, width=32, top=8)
    assert beyond.bytes_moved(top, n) == 4 * n + (n // 32) * 8 * 8
    running = _row("running_exclusive_sum", "float32", 16)
    assert running.grid(n) == n // beyond.SEGMENT and running.tiles == beyond.SEGMENT // (T * 16)
