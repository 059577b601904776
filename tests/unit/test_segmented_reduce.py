"""Segmented reduce and sum without a compiler (docs: operations/reduce, "Segmented reductions"; SPEC 8.21): planning,
the errors they own (O5, O16, C4, C11, P2/P5/P7 of the flags, C6/C7, G3/G15, S2), the provider the emitter writes
(the reverse segmented scan with positions past valid_items isolated; with compact, select's ranks and exchange),
the entry point of a tuple, and a NumPy model of the totals the reverse scan leaves at segment starts."""
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
    assert str(info.value) == ("cuda.coop.numba_mlir.reduce with head_flags does not support group kind 'thread'; "
                               "supported group kinds: block, warp, threads_within_warp")
    with pytest.raises(CoopUnsupportedError, match="with head_flags does not support group kind 'warps_within_block'"):
        _plan(GroupSpec(WARPS_IN_BLOCK, 64, 2), k=0, flags=("int32", 0), name="cuda.coop.numba_mlir.reduce")
    with pytest.raises(CoopUnsupportedError) as info:
        _plan(GroupSpec(LOGICAL_WARP, 24, 4, exhaustive=False), k=0, flags=("int32", 0))
    assert str(info.value) == f"{NAME} with head_flags supports logical-warp widths 1, 2, 4, 8, 16, 32; got 24"


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
             "cuda_coop::isolated_starts(heads, first, valid_items, cut);",
             "cuda_coop::BlockSegmentedReverseScan<double, 4, 4, 4>(storage.scan).InclusiveScan(in, totals, cut, "
             "cuda::maximum<double>{});",
             "cuda_coop::segment_starts(heads, first, keep);",
             "cuda_coop::sync_block();  // the scan's storage is read before the ranks' is written",
             "const int n = cuda_coop::BlockSelectRanks<3, 4, 4, 4>(storage.ranks).Rank(keep, valid_items, ranks);",
             "cuda_coop::BlockSelectExchange<double, 3, 4, 4, 4>(storage.x0).ScatterToBlocked(totals, out, ranks);",
             "*count = n;"]
    at = [lines.index(line) for line in order]
    assert at == sorted(at)
    assert "typename cuda_coop::BlockSegmentedReverseScan<double, 4, 4, 4>::TempStorage scan;" in provider.body
    assert REUSE_MARK in provider.body and REUSE_MARK not in emit_segmented(dataclasses.replace(
        spec, barrier=False)).body
    assert provider.headers[:3] == ("cuda_coop/block/block_segmented_reverse_scan.cuh", "cuda_coop/util_segment.cuh",
                                    "cuda_coop/block/block_select.cuh")


def test_a_warp_provider_returns_its_scalar_total_without_scratch():
    provider = emit_segmented(_plan(GroupSpec(LOGICAL_WARP, 16, 8), k=0, flags=("bool", 0), binary_op="min",
                                    dtypes=("int64",)))
    assert "long long cuda_coop_reduce_" in provider.body and provider.scratch_type is None
    assert [(p.abi, p.name) for p in provider.params] == [
        (Abi.VALUE, "value"), (Abi.VALUE, "flag"), (Abi.I64, "valid_items"), (Abi.SCRATCH, "scratch"),
        (Abi.STRIDE, "stride")]
    lines = _lines(provider)
    assert "const long long first = (long long)(rank % 16u) * 1;  // the caller's first tile position" in lines
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
