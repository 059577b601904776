"""The docs draw an explorer for every operation family, each picture renders, and the GPU test can read every
result cell of the pictures it runs (tests/explorer_cases.py)."""
from __future__ import annotations

import numpy as np
import pytest
from explorer_cases import KERNEL_OPERATIONS, check, docs_lines, expected, inputs, kernel_cases, outputs

FAMILIES = {
    "load/store": ("load", "store"), "exchange": ("exchange",), "shuffle": ("shuffle",),
    "reduce": ("reduce", "sum"), "reduce_batched": ("reduce_batched",),
    "scans": ("exclusive_sum", "inclusive_sum", "exclusive_scan", "inclusive_scan"),
    "adjacent difference": ("adjacent_difference",), "discontinuity": ("discontinuity",),
    "merge sort": ("merge_sort_keys", "merge_sort_pairs"), "radix sort": ("radix_sort_keys", "radix_sort_pairs"),
    "radix rank": ("radix_rank",), "top-k": ("topk_min_keys", "topk_max_keys", "topk_min_pairs", "topk_max_pairs"),
    "histogram": ("histogram",), "run-length decode": ("run_length_decode",), "argmax/argmin": ("argmax", "argmin"),
    "broadcast": ("broadcast",), "select/partition": ("select", "partition"),
}


def test_every_family_has_a_picture_in_the_docs():
    drawn = {line.split()[0] for _, line in docs_lines()}
    missing = [family for family, ops in FAMILIES.items() if not drawn & set(ops)]
    assert not missing, f"no explorer in docs/ for: {missing}"


def test_segment_totals_have_pictures_in_the_docs():
    """reduce/sum with head_flags (and compact) is drawn too: the family test sees only the operation's name."""
    cases = [case for case in kernel_cases() if case.op in ("reduce", "sum") and case.segmented]
    assert any(case.args.compact for case in cases) and any(not case.args.compact for case in cases)
    assert any(case.warp for case in cases) and any(not case.warp for case in cases)


def test_the_kernel_cases_read_every_defined_cell():
    cases = kernel_cases()
    assert {case.op for case in cases} <= set(KERNEL_OPERATIONS) and len(cases) >= 30
    for case in cases:
        src, values = inputs(case, np.random.default_rng(1))
        predicted = expected(case, src, values)
        assert len(predicted) == len(case.picture.panels) - 1
        assert any(v is not None for panel in predicted for row in panel for v in row), case.line


def test_the_scan_cells_predict_a_numpy_prefix():
    """The label reader against NumPy: an inclusive sum picture predicts np.cumsum of the input."""
    case = next(c for c in kernel_cases() if c.op == "inclusive_sum" and not c.warp and not c.args.reverse
                and c.args.head_flags is None)
    src, values = inputs(case, np.random.default_rng(2))
    (panel,) = expected(case, src, values)
    flat = [v for row in panel for v in row]
    np.testing.assert_array_equal(np.array(flat, np.uint64), np.cumsum(src[:len(flat)], dtype=np.uint32))


def test_the_checker_accepts_the_picture_and_rejects_one_wrong_cell():
    """What the GPU test relies on: outputs that hold exactly the picture's cells pass, and changing one defined cell
    of the first result panel fails."""
    for case in kernel_cases():
        src, values = inputs(case, np.random.default_rng(3))
        out = outputs(case, src, np.zeros)[:len(case.result_columns())]
        for array, panel, columns in zip(out, expected(case, src, values), case.result_columns(), strict=True):
            grid = array.reshape(case.block, columns)
            for r, row in enumerate(panel):
                for s, v in enumerate(row):
                    grid[r, s] = 0 if v is None else v
        check(case, src, values, out)
        first = out[0].reshape(case.block, -1)
        r, s = next((r, s) for r, row in enumerate(expected(case, src, values)[0]) for s, v in enumerate(row)
                    if v is not None)
        first[r, s] += 1
        with pytest.raises(AssertionError):
            check(case, src, values, out)


def test_the_reverse_segmented_and_argmax_cells_predict_numpy():
    """The label reader against NumPy for the pictures of reverse and segmented scans and of argmax/argmin."""
    cases = kernel_cases()
    reverse = next(c for c in cases if c.op == "inclusive_sum" and c.args.reverse and c.args.head_flags is None)
    src, values = inputs(reverse, np.random.default_rng(4))
    flat = [v for row in expected(reverse, src, values)[0] for v in row]
    np.testing.assert_array_equal(np.array(flat, np.uint64),
                                  np.cumsum(src[:len(flat)][::-1], dtype=np.uint32)[::-1])
    segmented = next(c for c in cases if c.op == "inclusive_sum" and not c.args.reverse
                     and c.args.head_flags is not None and not c.warp)
    src, flags = inputs(segmented, np.random.default_rng(5))
    flat = [v for row in expected(segmented, src, flags)[0] for v in row]
    starts = np.flatnonzero(np.asarray(segmented.args.head_flags)) if any(segmented.args.head_flags) else []
    oracle = np.concatenate([np.cumsum(part, dtype=np.uint32) for part in np.split(src[:len(flat)], starts)
                             if len(part)])
    np.testing.assert_array_equal(np.array(flat, np.uint64), oracle)
    for op, pick in (("argmax", np.argmax), ("argmin", np.argmin)):
        for case in (c for c in cases if c.op == op and not c.warp and c.args.valid_items is None):
            src, values = inputs(case, np.random.default_rng(6))
            tile = src[:case.threads * case.items]
            index = int(pick(tile))
            assert {v for row in expected(case, src, values)[0] for v in row} == {int(tile[index]) * (1 << 16) + index}


def _tiles(case, array):
    """``array`` (one value per tile position, blocked) cut into the drawn groups' tiles."""
    size = (case.warp or case.threads) * case.items
    return array[:case.threads * case.items].reshape(-1, size)


def test_the_broadcast_and_compaction_cells_predict_numpy():
    """The pictures of broadcast, select and partition against NumPy: each group's tile is member src_rank's items
    repeated; the flagged valid items in order (partition: then the rejected valid ones, then the rest in place), and
    the count of kept items in every member."""
    cases = [c for c in kernel_cases() if c.op in ("broadcast", "select", "partition")]
    assert {c.op for c in cases} == {"broadcast", "select", "partition"}
    for case in cases:
        src, flags = inputs(case, np.random.default_rng(7))
        predicted = expected(case, src, flags)
        results = np.array([v for row in predicted[0] for v in row], dtype=object)
        for tile, got, flag in zip(_tiles(case, src), _tiles(case, results), _tiles(case, flags), strict=True):
            if case.op == "broadcast":
                rank = case.args.src_rank
                want = np.tile(tile[rank * case.items:(rank + 1) * case.items], len(tile) // case.items)
                np.testing.assert_array_equal(got.astype(np.int64), want)
                continue
            valid = len(tile) if case.args.valid_items is None else case.args.valid_items
            keep = (np.arange(len(tile)) < valid) & (flag != 0)
            count = int(keep.sum())
            assert list(got[:count]) == list(tile[keep]), case.line
            if case.op == "select":
                assert all(v is None for v in got[count:]), case.line
            else:
                rejected = tile[(np.arange(len(tile)) < valid) & ~keep]
                assert list(got[count:]) == [*rejected, *tile[valid:]], case.line
        if case.op != "broadcast":
            counts = [row[0] for row in predicted[1]]
            size = (case.warp or case.threads) * case.items
            valid = size if case.args.valid_items is None else case.args.valid_items
            per_group = [int(((np.arange(size) < valid) & (f != 0)).sum()) for f in _tiles(case, flags)]
            assert counts == [per_group[r // (case.warp or case.threads)] for r in range(case.threads)], case.line


def test_the_segment_total_cells_predict_numpy():
    """The pictures of segmented reduce and sum against NumPy: each segment's total (a wrapping uint32 sum or an
    xor) at its first position, or with compact=True the totals in order at the front and their count."""
    for case in (c for c in kernel_cases() if c.op in ("reduce", "sum") and c.segmented):
        src, flags = inputs(case, np.random.default_rng(8))
        predicted = expected(case, src, flags)
        results = np.array([v for row in predicted[0] for v in row], dtype=object)
        fold = np.add if case.op == "sum" else np.bitwise_xor
        size = (case.warp or case.threads) * case.items
        valid = size if case.args.valid_items is None else case.args.valid_items
        counts = []
        for tile, got, flag in zip(_tiles(case, src), _tiles(case, results), _tiles(case, flags), strict=True):
            starts = [p for p in range(valid) if p == 0 or flag[p]]
            totals = [int(fold.reduce(tile[a:b], dtype=np.uint32)) for a, b in zip(starts, [*starts[1:], valid])]
            where = range(len(starts)) if case.args.compact else starts
            want = [None] * size
            for position, total in zip(where, totals, strict=True):
                want[position] = total
            assert list(got) == want, case.line
            counts.append(len(starts))
        if case.args.compact:
            assert [row[0] for row in predicted[1]] == [counts[r // (case.warp or case.threads)]
                                                         for r in range(case.threads)], case.line
