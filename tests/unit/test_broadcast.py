"""broadcast without a compiler (docs: operations/broadcast; SPEC 8.19, 8.26): its planning, every error it owns, and
the provider its emitter writes for blocks, warps and tuples."""
from __future__ import annotations

import dataclasses

import pytest

from cuda.coop._cub.families.broadcast import emit
from cuda.coop._cub.provider import REUSE_MARK
from cuda.coop._errors import CoopTypeError, CoopUnsupportedError, CoopValueError
from cuda.coop._markers.records import of
from cuda.coop._semantics.broadcast import BroadcastOptions, plan_broadcast
from cuda.coop._semantics.common import (
    BLOCK, CLUSTER, LOGICAL_WARP, THREAD, WARP, WARPS_IN_BLOCK, GroupSpec, LaunchShape, Runtime, Static,
)
from cuda.coop._semantics.shape import CallShape
from cuda.coop._semantics.temp_storage import make_descriptor
from cuda.coop._semantics.tuples import check_operands

NAME = "cuda.coop.broadcast"
L128 = LaunchShape((128, 1, 1))
BLOCK128 = GroupSpec(BLOCK, 128, 1)
WARP32 = GroupSpec(WARP, 32, 4)


def _plan(group=BLOCK128, *, launch=L128, dtypes=("int32",), extents=(4,), tupled=False, src_rank=None,
          descriptor=None):
    shape = CallShape(name=NAME, op="broadcast", group=group, launch=launch, dtypes=dtypes,
                      items_per_thread=extents[0], extents=extents, tupled=tupled, descriptor=descriptor,
                      controls={"src_rank": src_rank})
    return plan_broadcast(shape, BroadcastOptions())


def test_blocks_use_a_slot_and_the_reuse_barrier_warps_shuffle():
    block = _plan()
    assert block.uses_scratch and block.barrier
    assert not _plan(descriptor=make_descriptor(0, None, None, False, "shared")).barrier  # auto_sync=False
    assert _plan(descriptor=make_descriptor(0, None, None, True, "shared")).barrier
    for group in (WARP32, GroupSpec(LOGICAL_WARP, 8, 16), GroupSpec(LOGICAL_WARP, 12, 8, exhaustive=False)):
        spec = _plan(group)
        assert not spec.uses_scratch and not spec.barrier
    assert [_plan(GroupSpec(LOGICAL_WARP, w, 1, w in (1, 2, 4, 8, 16, 32))).shuffle_width
            for w in (1, 2, 3, 8, 12, 16, 31, 32)] == [1, 2, 32, 8, 32, 16, 32, 32]


@pytest.mark.parametrize("group, rank", [(BLOCK128, 127), (WARP32, 31), (GroupSpec(LOGICAL_WARP, 12, 8), 11),
                                         (GroupSpec(LOGICAL_WARP, 1, 128), 0)])
def test_src_rank_may_be_either_end_of_the_group(group, rank):
    _plan(group, src_rank=Static(0))
    _plan(group, src_rank=Static(rank))
    _plan(group, src_rank=Runtime("int64"))
    _plan(group, src_rank=Runtime("uint32"))


@pytest.mark.parametrize("group, rank", [(BLOCK128, 128), (BLOCK128, -1), (WARP32, 32), (WARP32, -32),
                                         (GroupSpec(LOGICAL_WARP, 12, 8), 12), (GroupSpec(LOGICAL_WARP, 1, 128), 1)])
def test_c7_a_static_src_rank_outside_the_group(group, rank):
    with pytest.raises(CoopValueError) as info:
        _plan(group, src_rank=Static(rank))
    assert str(info.value) == f"{NAME} static src_rank must be between 0 and {group.size - 1}; got {rank}"


@pytest.mark.parametrize("control, shown", [(Runtime("uint64"), "uint64"), (Runtime("float32"), "float32"),
                                            (Runtime("bool"), "bool"), (Static(1.0), "float"), (Static(True), "bool")])
def test_c6_src_rank_of_another_type(control, shown):
    with pytest.raises(CoopTypeError) as info:
        _plan(src_rank=control)
    assert str(info.value) == (f"{NAME} src_rank must be a signed integer of at most 64 bits or an unsigned integer "
                               f"of at most 32 bits; got {shown}")


@pytest.mark.parametrize("kind", [THREAD, WARPS_IN_BLOCK, CLUSTER])
def test_g3_group_kinds_it_does_not_take(kind):
    with pytest.raises(CoopUnsupportedError) as info:
        _plan(GroupSpec(kind, 64, 2))
    assert str(info.value) == (f"{NAME} does not support group kind '{kind}'; supported group kinds: block, warp, "
                               "threads_within_warp")


def test_g15_every_width_group_by_makes_is_taken():
    assert of("broadcast").groups.widths == tuple(range(1, 33))
    with pytest.raises(CoopUnsupportedError, match=r"supports logical-warp widths 1, 2, 3, .*, 32; got 33$"):
        _plan(GroupSpec(LOGICAL_WARP, 33, 1))  # wider than group_by allows (G11 comes first in a kernel)


def test_g5_warp_groups_need_complete_warps():
    with pytest.raises(CoopValueError) as info:
        _plan(WARP32, launch=LaunchShape((48, 1, 1)))
    assert str(info.value) == f"{NAME} on warp groups requires a block made of complete warps; block has 48 threads"
    _plan(GroupSpec(BLOCK, 60, 1), launch=LaunchShape((20, 3, 1)))  # a block's last warp may be partial


@pytest.mark.parametrize("dtypes, tupled, param", [(("bool",), False, "value"), (("complex64",), False, "value"),
                                                   (("int32", "bool"), True, "value[1]")])
def test_p2_dtypes_that_are_not_numeric(dtypes, tupled, param):
    with pytest.raises(CoopTypeError) as info:
        _plan(dtypes=dtypes, extents=(0,) * len(dtypes), tupled=tupled)
    assert str(info.value).startswith(f"{NAME} does not support {param} dtype {dtypes[-1]}; supported: int8, ")


def test_s2_warp_groups_take_no_temp_storage():
    with pytest.raises(CoopValueError) as info:
        _plan(GroupSpec(LOGICAL_WARP, 8, 16), descriptor=make_descriptor(0, None, None, False, "shared"))
    assert str(info.value) == (f"{NAME} does not accept temp_storage for threads_within_warp groups; their scratch "
                               "is always compiler-owned")


def test_p18_a_tuple_holds_1_to_8_members_that_may_mix_scalars_and_payloads():
    check_operands(NAME, [0, 4, 2], ["float64", "int32", "int8"], independent=True)
    for extents in ([], [0] * 9):
        with pytest.raises(CoopTypeError) as info:
            check_operands(NAME, extents, ["int32"] * len(extents), independent=True)
        got = f"a tuple of {len(extents)}" if extents else "an empty tuple"
        assert str(info.value) == f"{NAME} value must be a tuple of 1 to 8 payloads or scalars; got {got}"
    with pytest.raises(CoopTypeError) as info:  # reduce's and the scans' members do not (P18)
        check_operands("cuda.coop.reduce", [0, 4], ["int32", "int32"])
    assert str(info.value) == ("cuda.coop.reduce value must be a tuple of 1 to 8 payloads of one extent or scalars; "
                               "got a tuple mixing payloads and scalars")
    assert of("broadcast").independent_members and not of("reduce").independent_members


def test_a_block_provider_writes_the_slot_waits_and_reads_it():
    spec = _plan(GroupSpec(BLOCK, 64, 1), launch=LaunchShape((4, 4, 4)), dtypes=("float64",), extents=(3,))
    provider = emit(spec)
    body = provider.body
    assert "void cuda_coop_broadcast_" in body and "(double* items, double* output, long long src_rank, char* " \
        "scratch, unsigned long long stride)" in body
    assert "double m0[3];" in body and provider.scratch_type.endswith("_storage")
    lines = [line.strip() for line in body.splitlines()]
    order = ["cuda_coop::check_range(src_rank, 0, 63);", "const cuda_coop::BlockBroadcast<4, 4, 4> algo(src_rank);",
             "algo.Write(slots.m0, items);", "algo.Sync();", "algo.Read(output, slots.m0);"]
    assert [lines.index(line) for line in order] == sorted(lines.index(line) for line in order)
    assert REUSE_MARK in body and REUSE_MARK not in emit(dataclasses.replace(spec, barrier=False)).body
    assert provider.headers == ("cuda_coop/block/block_broadcast.cuh",)


def test_a_warp_provider_shuffles_each_member_and_returns_a_single_scalar():
    odd = emit(_plan(GroupSpec(LOGICAL_WARP, 24, 4, exhaustive=False), dtypes=("int64",), extents=(0,)))
    assert "long long cuda_coop_broadcast_" in odd.body and "(long long value, long long src_rank, " in odd.body
    assert "cuda_coop::WarpBroadcast<24, 128, 1, 1> algo(src_rank);" in odd.body
    assert "algo.Broadcast<1>(&result, &value);" in odd.body and "return result;" in odd.body
    assert odd.scratch_type is None and "check_range(src_rank, 0, 23)" in odd.body
    mixed = emit(_plan(WARP32, dtypes=("float32", "int8", "uint64"), extents=(0, 3, 0), tupled=True))
    assert [(p.abi.value, p.name, p.dtype) for p in mixed.params] == [
        ("value", "value0", "float32"), ("ptr", "items1", "int8"), ("value", "value2", "uint64"),
        ("out", "result0", "float32"), ("ptr", "output1", "int8"), ("out", "result2", "uint64"),
        ("i64", "src_rank", None), ("scratch", "scratch", None), ("stride", "stride", None)]
    assert "void cuda_coop_broadcast_" in mixed.body
    for line in ("algo.Broadcast<1>(result0, &value0);", "algo.Broadcast<3>(output1, items1);",
                 "algo.Broadcast<1>(result2, &value2);"):
        assert line in mixed.body
