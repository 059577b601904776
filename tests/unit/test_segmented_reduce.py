"""Segmented reduce and sum without a compiler (docs: operations/reduce, "Segmented reductions"; SPEC 8.21): planning,
the errors they own (O5, O16, C4, C11, P2/P5/P7 of the flags, C6/C7, G3/G15, S2), the provider the emitter writes
(the reverse segmented scan with positions past valid_items isolated; with compact, on blocks the same scan ranking
the starts and a scatter of the kept totals, on warps select's ranks and exchange), the entry point of a tuple, and
NumPy models of the totals the reverse scan leaves at segment starts and of the ranks its counting form gives."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from cuda.coop._cub.families.reduce import emit_segmented
from cuda.coop._cub.provider import REUSE_MARK, Abi
from cuda.coop._cub.tuples import split_entry
from cuda.coop._errors import CoopTypeError, CoopUnsupportedError, CoopValueError
from cuda.coop._semantics.common import (
    BLOCK, LOGICAL_WARP, THREAD, WARP, WARPS_IN_BLOCK, GroupSpec, LaunchShape, Runtime, Static,
)
from cuda.coop._semantics.reduce import ReduceOptions, plan_reduce, plan_segmented_reduce
from cuda.coop._semantics.shape import CallShape
from cuda.coop._semantics.temp_storage import make_descriptor
from cuda.coop._semantics.tuples import tuple_dtype

NAME = "cuda.coop.reduce"
L128 = LaunchShape((128, 1, 1))
BLOCK128 = GroupSpec(BLOCK, 128, 1)
WARP32 = GroupSpec(WARP, 32, 4)


def _shape(group=BLOCK128, *, launch=L128, dtypes=("int32",), k=4, tupled=False, valid=None, descriptor=None,
           name=NAME):
    return CallShape(name=name, op="reduce", group=group, launch=launch, dtypes=dtypes, items_per_thread=k,
                     extents=(k,) * len(dtypes), tupled=tupled, descriptor=descriptor, controls={"valid_items": valid})


def _plan(group=BLOCK128, *, flags=("int32", 4), compact=False, binary_op="sum", broadcast=True, algorithm=None,
          **shape):
    return plan_segmented_reduce(_shape(group, **shape), ReduceOptions(binary_op=binary_op, broadcast=broadcast,
                                                                        algorithm=algorithm, flags=flags,
                                                                        compact=compact))


def test_blocks_scan_through_scratch_warps_only_when_they_compact():
    block = _plan()
    assert block.uses_scratch and block.barrier and not block.compact and block.positions == 512
    warp = _plan(WARP32, k=0, flags=("bool", 0))
    assert not warp.uses_scratch and not warp.barrier and warp.flag_dtype == "uint8"
    compact = _plan(GroupSpec(LOGICAL_WARP, 8, 16), k=0, flags=("int16", 0), compact=True)
    assert compact.uses_scratch and compact.barrier and compact.positions == 8
    assert not _plan(descriptor=make_descriptor(0, None, None, False, "shared")).barrier


def test_o5_warp_groups_take_one_scalar_per_lane():
    with pytest.raises(CoopTypeError) as info:
        _plan(WARP32)
    assert str(info.value) == f"{NAME} on warp groups accepts one scalar per lane"


@pytest.mark.parametrize("option, value", [("broadcast", False), ("algorithm", "raking")])
def test_o16_broadcast_false_and_algorithms(option, value):
    with pytest.raises(CoopValueError) as info:
        _plan(**{option: value})
    assert str(info.value) == (f"{NAME} head_flags cannot be combined with {option}; segmented reductions return one "
                               "total per segment")


def test_c4_compact_is_a_compile_time_bool_and_c11_it_needs_head_flags():
    with pytest.raises(CoopTypeError, match=r"compact must be a compile-time bool$"):
        _plan(compact=1)
    with pytest.raises(CoopValueError) as info:
        plan_reduce(_shape(), ReduceOptions(compact=True))
    assert str(info.value) == f"{NAME} compact requires head_flags"
    with pytest.raises(CoopTypeError, match=r"compact must be a compile-time bool$"):
        plan_reduce(_shape(), ReduceOptions(compact="yes"))
    assert plan_reduce(_shape(), ReduceOptions(compact=False)).operator.is_sum


def test_head_flags_are_typed_as_the_scans():
    with pytest.raises(CoopTypeError, match=r"does not support head_flags dtype float32; supported: int8, .*; a "
                                            r"boolean flag is accepted as the scalar of a scalar value$"):
        _plan(flags=("float32", 4))
    with pytest.raises(CoopTypeError, match=r"head_flags must be a ThreadData of 4 items, as value is$"):
        _plan(flags=("int32", 0))
    with pytest.raises(CoopValueError, match=r"value and head_flags must have the same items_per_thread \(4 != 2\)"):
        _plan(flags=("int32", 2))
    with pytest.raises(CoopTypeError, match=r"head_flags must be an integer or boolean scalar; got float64$"):
        _plan(k=0, flags=("float64", 0))


@pytest.mark.parametrize("group, k, top", [(BLOCK128, 4, 512), (BLOCK128, 0, 128), (WARP32, 0, 32),
                                           (GroupSpec(LOGICAL_WARP, 1, 128), 0, 1)])
def test_valid_items_from_zero_to_the_tile_payloads_included(group, k, top):
    flags = ("int32", k)
    for valid in (Static(0), Static(top), Runtime("int64")):
        assert _plan(group, k=k, flags=flags, valid=valid).has_valid_items
    with pytest.raises(CoopValueError) as info:
        _plan(group, k=k, flags=flags, valid=Static(top + 1))
    assert str(info.value) == f"{NAME} static valid_items must be between 0 and {top}; got {top + 1}"
    with pytest.raises(CoopTypeError, match=r"valid_items must be a signed integer .*; got uint64$"):
        _plan(group, k=k, flags=flags, valid=Runtime("uint64"))


def test_g3_g15_groups_of_the_segmented_scans_only():
    with pytest.raises(CoopUnsupportedError) as info:
        _plan(GroupSpec(THREAD, 1, 128), k=0, flags=("int32", 0), name="cuda.coop.numba_mlir.reduce")
    assert str(info.value) == ("cuda.coop.numba_mlir.reduce does not support group kind 'thread'; "
                               "supported group kinds: block, warp, threads_within_warp (with head_flags)")
    with pytest.raises(CoopUnsupportedError, match="does not support group kind 'warps_within_block'.*with head_flags"):
        _plan(GroupSpec(WARPS_IN_BLOCK, 64, 2), k=0, flags=("int32", 0), name="cuda.coop.numba_mlir.reduce")
    with pytest.raises(CoopUnsupportedError) as info:
        _plan(GroupSpec(LOGICAL_WARP, 24, 4, exhaustive=False), k=0, flags=("int32", 0))
    assert str(info.value) == f"{NAME} supports logical-warp widths 1, 2, 4, 8, 16, 32; got 24 (with head_flags)"


def test_s2_warp_groups_take_no_temp_storage():
    with pytest.raises(CoopValueError, match="does not accept temp_storage for warp groups"):
        _plan(WARP32, k=0, flags=("int32", 0), descriptor=make_descriptor(0, None, None, False, "shared"))


def _lines(provider):
    return [line.strip() for line in provider.body.splitlines()]


def test_a_block_provider_isolates_positions_past_valid_items_and_compacts_the_starts():
    spec = _plan(GroupSpec(BLOCK, 64, 1), launch=LaunchShape((4, 4, 4)), dtypes=("float64",), k=3,
                 flags=("int8", 3), binary_op="max", compact=True, valid=Runtime("int32"))
    provider = emit_segmented(spec)
    assert [(p.abi, p.name, p.dtype) for p in provider.params] == [
        (Abi.PTR, "items", None), (Abi.PTR, "head_flags", "int8"), (Abi.I64, "valid_items", None),
        (Abi.PTR, "output", None), (Abi.OUT, "count", "int32"), (Abi.SCRATCH, "scratch", None),
        (Abi.STRIDE, "stride", None)]
    lines = _lines(provider)
    order = ["cuda_coop::check_range(valid_items, 0, 192);",
             "const int first = (int)(rank * 3);  // the caller's first tile position",
             "cuda_coop::isolated_starts(heads, first, (int)valid_items, cut);",
             "cuda_coop::segment_starts(heads, first, (int)valid_items, keep);",
             "const int n = cuda_coop::BlockSegmentedReverseScan<double, 4, 4, 4>(storage.scan).InclusiveScanCounting("
             "in, totals, cut, keep, cuda_coop::maximum<double>{}, ranks);",
             "cuda_coop::BlockScatterKept<double, 3, 4, 4, 4>(storage.x0).ScatterToBlocked(totals, out, keep, ranks, "
             "n);",
             "*count = n;"]
    at = [lines.index(line) for line in order]
    assert at == sorted(at)
    # one suffix scan ranks the starts: no second scan, and no barrier between the scan and the scatter, whose
    # storage lies beside the scan's
    assert provider.body.count("sync_block") == 1 and "Rank(" not in provider.body  # the reuse barrier only
    assert provider.body.startswith("struct cuda_coop_reduce_")
    assert ("_storage { typename cuda_coop::BlockSegmentedReverseScan<double, 4, 4, 4>::TempStorage scan; typename "
            "cuda_coop::BlockScatterKept<double, 3, 4, 4, 4>::TempStorage x0; };") in provider.body
    assert REUSE_MARK in provider.body and REUSE_MARK not in emit_segmented(dataclasses.replace(
        spec, barrier=False)).body
    assert provider.headers[:3] == ("cuda_coop/block/block_segmented_reverse_scan.cuh", "cuda_coop/util_segment.cuh",
                                    "cuda_coop/block/block_select.cuh")


def test_a_whole_tile_is_cut_at_its_flags_only():
    lines = _lines(emit_segmented(_plan(compact=True)))
    assert "cuda_coop::isolated_starts(heads, cut);" in lines
    assert "cuda_coop::segment_starts(heads, first, keep);" in lines
    assert not any("(int)valid_items" in line for line in lines)


def test_a_warp_provider_returns_its_scalar_total_without_scratch():
    provider = emit_segmented(_plan(GroupSpec(LOGICAL_WARP, 16, 8), k=0, flags=("bool", 0), binary_op="min",
                                    dtypes=("int64",)))
    assert "long long cuda_coop_reduce_" in provider.body and provider.scratch_type is None
    assert [(p.abi, p.name) for p in provider.params] == [
        (Abi.VALUE, "value"), (Abi.VALUE, "flag"), (Abi.I64, "valid_items"), (Abi.SCRATCH, "scratch"),
        (Abi.STRIDE, "stride")]
    lines = _lines(provider)
    assert "const int first = (int)((rank % 16u) * 1);  // the caller's first tile position" in lines
    assert ("cuda_coop::WarpSegmentedReverseScan<long long, 16, 128, 1, 1>().InclusiveScan(in[0], out[0], cut[0], "
            "cuda::minimum<long long>{});  // shuffles: no shared memory") in lines
    assert "return out[0];" in lines and REUSE_MARK not in provider.body


def test_a_compacting_warp_provider_writes_its_total_and_count():
    provider = emit_segmented(_plan(WARP32, k=0, flags=("int32", 0), compact=True, dtypes=("float32",)))
    assert [(p.abi, p.name) for p in provider.params][3:5] == [(Abi.OUT, "result"), (Abi.OUT, "count")]
    lines = _lines(provider)
    for line in ("scratch += cuda_coop::group_instance<32>(rank) * stride;  // the group's own slice",
                 "cuda_coop::WarpSelectExchange<float, 1, 32>(storage.x0, mask).Scatter(totals, out, ranks);",
                 "*count = n;", "*result = out[0];"):
        assert line in lines, line
    assert "void cuda_coop_reduce_" in provider.body


def test_a_tuple_of_scalars_comes_back_member_by_member_before_the_count():
    dtype = tuple_dtype(["int32", "float64"])
    spec = _plan(dtypes=("int32", "float64"), k=0, tupled=True, flags=("int32", 0), compact=True,
                 binary_op=lambda a, b: a)
    entry = split_entry(emit_segmented(spec), dtype, {"items": 0, "output": 0}, ("output",))
    assert [(p.abi, p.name, p.dtype) for p in entry.params][:7] == [
        (Abi.VALUE, "value0", "int32"), (Abi.VALUE, "value1", "float64"), (Abi.VALUE, "flag", "int32"),
        (Abi.I64, "valid_items", None), (Abi.OUT, "result0", "int32"), (Abi.OUT, "result1", "float64"),
        (Abi.OUT, "count", "int32")]
    for line in ("cuda_coop_tuple_int32_float64 result_t;", "*result0 = result_t.f0;", "*result1 = result_t.f1;"):
        assert line in _lines(entry), line


def _reverse_segmented_totals(values, heads, valid):
    """The reverse segmented inclusive scan of include/cuda_coop with every position from ``valid`` on flagged:
    each position's fold up to the end of its segment (a model of BlockSegmentedReverseScan's result)."""
    cut = (heads != 0) | (np.arange(values.size) >= valid)
    out = values.copy()
    for p in range(values.size - 2, -1, -1):
        if not cut[p + 1]:
            out[p] = values[p] + out[p + 1]
    return out


@pytest.mark.parametrize("valid", [0, 1, 9, 40])
def test_the_scan_leaves_each_segments_total_at_its_start(valid):
    rng = np.random.default_rng(valid)
    values, heads = rng.integers(-50, 50, 40), (rng.random(40) < 0.3).astype(int)
    totals = _reverse_segmented_totals(values, heads, valid)
    starts = [p for p in range(valid) if p == 0 or heads[p]]
    for lo, hi in zip(starts, starts[1:] + [valid]):
        assert totals[lo] == values[lo:hi].sum()


def _suffix_segment_count_op(a, b):
    """include/cuda_coop/util_segment.cuh's suffix_segment_count_op on (flag word, value) pairs, ``a`` before ``b``:
    bits 0 and 1 as suffix_segment_op's, the marked positions counted from bit 2 on."""
    stop = (a[0] & 2) != 0 or (b[0] & 1) != 0
    return (a[0] + (b[0] & ~3)) | (2 if b[0] & 3 else 0), a[1] if stop else a[1] + b[1]


def _suffix_segment_op(a, b):
    stop = (a[0] & 2) != 0 or (b[0] & 1) != 0
    return a[0] | (2 if b[0] else 0), a[1] if stop else a[1] + b[1]


def _fold(pairs, op, rng):
    """The pairs folded by ``op`` in a random bracketing (as any tree of a suffix scan folds them)."""
    pairs = list(pairs)
    while len(pairs) > 1:
        j = int(rng.integers(len(pairs) - 1))
        pairs[j:j + 2] = [op(pairs[j], pairs[j + 1])]
    return pairs[0]


@pytest.mark.parametrize("seed", range(6))
def test_the_counting_operator_folds_values_as_the_plain_one_and_counts_in_any_bracketing(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 40))
    bits, marks, values = rng.integers(0, 4, n), rng.integers(0, 5, n), rng.integers(-99, 99, n)
    plain = [(int(f), int(v)) for f, v in zip(bits, values)]
    counted = [(int(f) | int(m) << 2, int(v)) for f, m, v in zip(bits, marks, values)]
    expected = _fold(plain, _suffix_segment_op, rng)
    for _ in range(4):
        word, value = _fold(counted, _suffix_segment_count_op, rng)
        assert (word & 3, value) == expected and word >> 2 == marks.sum()


@pytest.mark.parametrize("threads, k, valid", [(8, 4, 32), (8, 4, 19), (5, 3, 0), (5, 3, 1), (32, 1, 23)])
def test_one_counting_suffix_scan_ranks_the_kept_starts(threads, k, valid):
    """BlockSegmentedReverseScan::InclusiveScanCounting's ranks, in NumPy: a thread's marks from item i on plus the
    later threads' (the suffix scan's ``later``, none after the last thread) taken from the tile's count give the
    marks before each item; the scatter then puts each kept total at its rank."""
    rng = np.random.default_rng(threads * k + valid)
    n = threads * k
    values, heads = rng.integers(-50, 50, n), (rng.random(n) < 0.3).astype(int)
    p = np.arange(n)
    keep = ((p < valid) & ((p == 0) | (heads != 0))).astype(int)
    per_thread = keep.reshape(threads, k)
    later = np.concatenate([np.cumsum(per_thread.sum(1)[::-1])[::-1][1:], [0]])  # marks in the later threads
    total = int(keep.sum())
    ranks = np.empty((threads, k), int)
    for r in range(threads):
        after = later[r]
        for i in range(k - 1, -1, -1):
            after += per_thread[r, i]
            ranks[r, i] = total - after
    assert (ranks.ravel() == np.cumsum(keep) - keep).all()
    totals = _reverse_segmented_totals(values, heads, valid)
    compact = np.full(n, 10**6)
    compact[ranks.ravel()[keep != 0]] = totals[keep != 0]
    starts = [q for q in range(valid) if q == 0 or heads[q]]
    assert total == len(starts)
    assert list(compact[:total]) == [values[lo:hi].sum() for lo, hi in zip(starts, starts[1:] + [valid])]
