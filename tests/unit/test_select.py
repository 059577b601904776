"""select and partition without a compiler (docs: operations/select; SPEC 8.20): planning, every error they own, the
provider the emitter writes for blocks, warps, scalars and tuples, and the ranks it computes (a NumPy model of the
header's formula checked against the contract's oracle)."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from cuda.coop._cub.families.select import emit
from cuda.coop._cub.provider import REUSE_MARK, Abi
from cuda.coop._errors import CoopTypeError, CoopUnsupportedError, CoopValueError
from cuda.coop._markers.records import of
from cuda.coop._semantics.common import (
    BLOCK, CLUSTER, LOGICAL_WARP, THREAD, WARP, WARPS_IN_BLOCK, GroupSpec, LaunchShape, Runtime, Static,
)
from cuda.coop._semantics.select import SelectOptions, plan_select
from cuda.coop._semantics.shape import CallShape
from cuda.coop._semantics.temp_storage import make_descriptor
from cuda.coop._semantics.tuples import check_operands

NAME = "cuda.coop.select"
L128 = LaunchShape((128, 1, 1))
BLOCK128 = GroupSpec(BLOCK, 128, 1)
WARP32 = GroupSpec(WARP, 32, 4)


def _plan(group=BLOCK128, *, launch=L128, dtypes=("int32",), k=4, tupled=False, flags=("int32", 4), valid=None,
          descriptor=None, op="select"):
    shape = CallShape(name=f"cuda.coop.{op}", op=op, group=group, launch=launch, dtypes=dtypes, items_per_thread=k,
                      extents=(k,) * len(dtypes), tupled=tupled, descriptor=descriptor,
                      controls={"valid_items": valid})
    return plan_select(shape, SelectOptions(flags=flags))


def test_every_group_uses_scratch_and_the_reuse_barrier_unless_auto_sync_is_off():
    for group in (BLOCK128, WARP32, GroupSpec(LOGICAL_WARP, 1, 128), GroupSpec(LOGICAL_WARP, 8, 16)):
        spec = _plan(group)
        assert spec.uses_scratch and spec.barrier
    assert not _plan(descriptor=make_descriptor(0, None, None, False, "shared")).barrier
    assert _plan(descriptor=make_descriptor(0, None, None, True, "shared")).barrier
    assert _plan(WARP32).positions == 128 and _plan(k=0, flags=("bool", 0)).positions == 128


@pytest.mark.parametrize("flags, crossing", [(("int8", 4), "int8"), (("uint64", 4), "uint64")])
def test_flags_are_integer_payloads_of_the_items_extent(flags, crossing):
    assert _plan(flags=flags).flag_dtype == crossing


@pytest.mark.parametrize("dtype, crossing", [("bool", "uint8"), ("boolean", "uint8"), ("int16", "int16")])
def test_scalar_items_take_integer_or_boolean_scalar_flags(dtype, crossing):
    assert _plan(k=0, flags=(dtype, 0)).flag_dtype == crossing


@pytest.mark.parametrize("flags", [("float32", 4), ("bool", 4)])
def test_p2_flags_payloads_hold_integers(flags):
    with pytest.raises(CoopTypeError) as info:
        _plan(flags=flags)
    assert str(info.value) == (f"{NAME} does not support flags dtype {flags[0]}; supported: int8, int16, int32, "
                               "int64, uint8, uint16, uint32, uint64; a boolean flag is accepted as the scalar of "
                               "scalar items")


def test_p2_a_float_scalar_flag():
    with pytest.raises(CoopTypeError) as info:
        _plan(k=0, flags=("float64", 0))
    assert str(info.value) == f"{NAME} flags must be an integer or boolean scalar; got float64"


def test_p5_p7_flags_of_another_shape():
    with pytest.raises(CoopTypeError, match=r"flags must be a ThreadData of 4 items, as items is$"):
        _plan(flags=("int32", 0))
    with pytest.raises(CoopTypeError, match=r"flags must be a scalar, as items is$"):
        _plan(k=0, flags=("int32", 1))
    with pytest.raises(CoopValueError) as info:
        _plan(flags=("int32", 2))
    assert str(info.value) == f"{NAME} items and flags must have the same items_per_thread (4 != 2)"


@pytest.mark.parametrize("dtypes, tupled, param", [(("bool",), False, "items"), (("complex64",), False, "items"),
                                                   (("int32", "bool"), True, "items[1]")])
def test_p2_items_that_are_not_numeric(dtypes, tupled, param):
    with pytest.raises(CoopTypeError) as info:
        _plan(dtypes=dtypes, tupled=tupled)
    assert str(info.value).startswith(f"{NAME} does not support {param} dtype {dtypes[-1]}; supported: int8, ")


def test_p18_a_tuple_of_1_to_8_items_of_one_shape():
    check_operands(NAME, [4, 4], ["float64", "int8"], moved=True, param="items")
    check_operands(NAME, [0, 0, 0], ["float64", "int8", "uint16"], moved=True, param="items")
    for extents, got in (([], "an empty tuple"), ([4] * 9, "a tuple of 9"), ([4, 0], "a tuple mixing payloads "
                                                                                      "and scalars")):
        with pytest.raises(CoopTypeError) as info:
            check_operands(NAME, extents, ["int32"] * len(extents), moved=True, param="items")
        assert str(info.value) == f"{NAME} items must be a tuple of 1 to 8 payloads of one extent or scalars; got {got}"
    with pytest.raises(CoopValueError, match=r"items tuple payloads must have the same items_per_thread; got 4, 2$"):
        check_operands(NAME, [4, 2], ["int32", "int32"], moved=True, param="items")
    assert of("select").moved_members and of("partition").tuple_operand == "items"


@pytest.mark.parametrize("group, top", [(BLOCK128, 512), (WARP32, 128), (GroupSpec(LOGICAL_WARP, 8, 16), 32),
                                        (GroupSpec(LOGICAL_WARP, 1, 128), 4)])
def test_valid_items_may_be_anything_from_zero_to_the_tile(group, top):
    for valid in (Static(0), Static(1), Static(top), Runtime("int64"), Runtime("uint32")):
        assert _plan(group, valid=valid).has_valid_items
    for bad in (-1, top + 1):
        with pytest.raises(CoopValueError) as info:
            _plan(group, valid=Static(bad))
        assert str(info.value) == f"{NAME} static valid_items must be between 0 and {top}; got {bad}"


@pytest.mark.parametrize("control, shown", [(Runtime("uint64"), "uint64"), (Runtime("float32"), "float32"),
                                            (Static(2.0), "float"), (Static(True), "bool")])
def test_c6_valid_items_of_another_type(control, shown):
    with pytest.raises(CoopTypeError) as info:
        _plan(valid=control)
    assert str(info.value) == (f"{NAME} valid_items must be a signed integer of at most 64 bits or an unsigned "
                               f"integer of at most 32 bits; got {shown}")


@pytest.mark.parametrize("kind", [THREAD, WARPS_IN_BLOCK, CLUSTER])
def test_g3_group_kinds_it_does_not_take(kind):
    with pytest.raises(CoopUnsupportedError) as info:
        _plan(GroupSpec(kind, 64, 2))
    assert str(info.value) == (f"{NAME} does not support group kind '{kind}'; supported group kinds: block, warp, "
                               "threads_within_warp")


@pytest.mark.parametrize("width", [3, 12, 24])
def test_g15_widths_that_are_not_powers_of_two(width):
    with pytest.raises(CoopUnsupportedError) as info:
        _plan(GroupSpec(LOGICAL_WARP, width, 4, exhaustive=False))
    assert str(info.value) == f"{NAME} supports logical-warp widths 1, 2, 4, 8, 16, 32; got {width}"


def test_g5_and_s2_on_warp_groups():
    with pytest.raises(CoopValueError, match=r"on warp groups requires a block made of complete warps; block has 48"):
        _plan(WARP32, launch=LaunchShape((48, 1, 1)))
    _plan(GroupSpec(BLOCK, 60, 1), launch=LaunchShape((20, 3, 1)))  # a block's last warp may be partial
    with pytest.raises(CoopValueError) as info:
        _plan(GroupSpec(LOGICAL_WARP, 8, 16), descriptor=make_descriptor(0, None, None, False, "shared"))
    assert str(info.value) == (f"{NAME} does not accept temp_storage for threads_within_warp groups; their scratch "
                               "is always compiler-owned")


def _lines(provider):
    return [line.strip() for line in provider.body.splitlines()]


def test_a_block_provider_ranks_then_scatters_each_member_after_a_barrier():
    spec = _plan(GroupSpec(BLOCK, 64, 1), launch=LaunchShape((4, 4, 4)), dtypes=("float64", "int8"), k=3,
                 tupled=True, flags=("uint16", 3), valid=Runtime("int32"), op="partition")
    provider = emit(spec)
    assert [(p.abi, p.name, p.dtype) for p in provider.params] == [
        (Abi.PTR, "items0", "float64"), (Abi.PTR, "items1", "int8"), (Abi.PTR, "flags", "uint16"),
        (Abi.I64, "valid_items", None), (Abi.PTR, "output0", "float64"), (Abi.PTR, "output1", "int8"),
        (Abi.OUT, "count", "int32"), (Abi.SCRATCH, "scratch", None), (Abi.STRIDE, "stride", None)]
    body = provider.body
    assert ("typename cuda_coop::BlockSelectRanks<3, 4, 4, 4>::TempStorage ranks; typename "
            "cuda_coop::BlockSelectExchange<double, 3, 4, 4, 4>::TempStorage x0; typename "
            "cuda_coop::BlockSelectExchange<signed char, 3, 4, 4, 4>::TempStorage x1;") in body
    lines = _lines(provider)
    order = ["cuda_coop::check_range(valid_items, 0, 192);",
             "const int n = cuda_coop::BlockSelectRanks<3, 4, 4, 4>(storage.ranks).Rank(keep, valid_items, ranks);",
             "cuda_coop::BlockSelectExchange<double, 3, 4, 4, 4>(storage.x0).ScatterToBlocked(in0, out0, ranks);",
             "cuda_coop::BlockSelectExchange<signed char, 3, 4, 4, 4>(storage.x1).ScatterToBlocked(in1, out1, "
             "ranks);", "*count = n;"]
    at = [lines.index(line) for line in order]
    assert at == sorted(at)
    # a barrier before each exchange: the scan's storage (then the previous exchange's) is read first
    barrier = "cuda_coop::sync_block();"
    assert lines[at[2] - 1].startswith(barrier) and lines[at[3] - 1].startswith(barrier)
    assert REUSE_MARK in body and REUSE_MARK not in emit(dataclasses.replace(spec, barrier=False)).body
    assert provider.headers == ("cuda_coop/block/block_select.cuh",)
    assert provider.scratch_type.endswith("_storage")


def test_a_warp_provider_takes_scalars_apart_and_scatters_in_its_own_slice():
    spec = _plan(GroupSpec(LOGICAL_WARP, 8, 16), dtypes=("int64", "float32"), k=0, tupled=True, flags=("bool", 0))
    provider = emit(spec)
    assert [(p.abi, p.name, p.dtype) for p in provider.params] == [
        (Abi.VALUE, "value0", "int64"), (Abi.VALUE, "value1", "float32"), (Abi.VALUE, "flag", "uint8"),
        (Abi.I64, "valid_items", None), (Abi.OUT, "result0", "int64"), (Abi.OUT, "result1", "float32"),
        (Abi.OUT, "count", "int32"), (Abi.SCRATCH, "scratch", None), (Abi.STRIDE, "stride", None)]
    lines = _lines(provider)
    for line in ("cuda_coop::check_range(valid_items, 0, 8);", "const unsigned char keep[1] = {flag};",
                 "scratch += cuda_coop::group_instance<8>(rank) * stride;  // the group's own slice",
                 "const int n = cuda_coop::WarpSelectRanks<1, 8, 128, 1, 1>().Rank(keep, valid_items, ranks);",
                 "cuda_coop::WarpSelectExchange<long long, 1, 8>(storage.x0, mask).Scatter(in0, out0, ranks);",
                 "cuda_coop::sync_lanes(mask);  // the previous member's exchange is read first",
                 "*result0 = out0[0];", "*result1 = out1[0];", "*count = n;"):
        assert line in lines, line
    assert "cuda_coop::sync_logical_warp(rank, 8u);  " + REUSE_MARK in provider.body
    assert "ranks;" not in provider.body.split("extern")[0]  # a warp's ranks need no shared memory
    assert provider.headers == ("cuda_coop/warp/warp_select.cuh",)


def _header_ranks(flags, valid):
    """The ranks of include/cuda_coop/block/block_select.cuh (BlockSelectRanks::Rank) over one tile, in NumPy."""
    position = np.arange(flags.size)
    kept = ((position < valid) & (flags != 0)).astype(int)
    before = np.cumsum(kept) - kept
    count = int(kept.sum())
    return np.where(kept == 1, before, np.where(position < valid, count + position - before, position)), count


@pytest.mark.parametrize("valid", [0, 1, 17, 63, 64])
def test_the_header_ranks_are_a_permutation_that_gives_the_partition_of_the_contract(valid):
    rng = np.random.default_rng(valid)
    for flags in (rng.integers(-2, 3, 64), np.zeros(64, int), np.ones(64, int)):
        items = rng.permutation(64) + 100
        ranks, count = _header_ranks(flags, valid)
        assert sorted(ranks) == list(range(64))
        moved = np.empty_like(items)
        moved[ranks] = items  # ScatterToBlocked: item p goes to position ranks[p]
        keep = (np.arange(64) < valid) & (flags != 0)
        expected = np.concatenate([items[keep], items[(np.arange(64) < valid) & ~keep], items[valid:]])
        assert count == keep.sum() and (moved == expected).all()
