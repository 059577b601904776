"""Layer 2 planning of sorting and selection (SPEC 8.8-8.11) without a compiler, checked against NumPy."""
from __future__ import annotations

import numpy as np
import pytest

from cuda.coop._backend_context import BackendContext, active
from cuda.coop._errors import CoopTypeError, CoopUnsupportedError, CoopValueError
from cuda.coop._semantics.common import (
    BLOCK, LOGICAL_WARP, THREAD, WARP, GroupSpec, LaunchShape, Runtime, Static,
)
from cuda.coop._semantics.shape import CallShape
from cuda.coop._semantics.sort import (
    MergeSortOptions, RadixRankOptions, RadixSortOptions, TopKOptions, ordered_extreme_bits, plan_merge_sort,
    plan_radix_rank, plan_radix_sort, plan_topk,
)

L128 = LaunchShape((128, 1, 1))
BLOCK128 = GroupSpec(BLOCK, 128, 1)


def _shape(name, op, dtype, items_per_thread, group=BLOCK128, launch=L128, qualified=False, **controls):
    return CallShape(name=name, op=op, group=group, launch=launch, dtypes=(dtype,), items_per_thread=items_per_thread,
                     qualified=qualified, controls=controls)


def _ordered(raw: int, dtype: str) -> int:
    """SPEC 8.9's ordered representation of a key's bits, written independently of the code under test."""
    bits = np.dtype(dtype).itemsize * 8
    sign = 1 << (bits - 1)
    if dtype.startswith("uint"):
        return raw
    if dtype.startswith("int"):
        return raw ^ sign
    return (~raw & ((1 << bits) - 1)) if raw & sign else raw ^ sign


@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "int64", "uint8", "uint32", "uint64", "float32",
                                   "float64"])
def test_padding_key_orders_after_every_key(dtype):
    bits = np.dtype(dtype).itemsize * 8
    unsigned = np.dtype(f"uint{bits}")
    rng = np.random.default_rng(7)
    samples = rng.integers(0, np.iinfo(unsigned).max, 1000, dtype=unsigned, endpoint=True)
    for descending in (False, True):
        pad = ordered_extreme_bits(dtype, descending)
        ordered_pad = _ordered(pad, dtype)
        assert ordered_pad == (0 if descending else (1 << bits) - 1)
        others = [_ordered(int(s), dtype) for s in samples]
        assert all((o >= ordered_pad) if descending else (o <= ordered_pad) for o in others)


def test_merge_sort_plans_blocks_warps_and_logical_warps():
    spec = plan_merge_sort(_shape("m", "merge_sort_pairs", "float32", 4, valid_items=Static(10),
                                  oob_default=Static(1.5)), MergeSortOptions(values=("int16", 4), descending=True))
    assert (spec.op, spec.value_dtype, spec.descending, spec.has_valid_items, spec.barrier) == (
        "merge_sort", "int16", True, True, True)
    warp = plan_merge_sort(_shape("m", "merge_sort_keys", "int32", 2, GroupSpec(WARP, 32, 4)), MergeSortOptions())
    assert warp.tile_items == 64
    plan_merge_sort(_shape("m", "merge_sort_keys", "int32", 2, GroupSpec(LOGICAL_WARP, 8, 16)), MergeSortOptions())


@pytest.mark.parametrize("args,cls,message", [
    (dict(launch=LaunchShape((96, 1, 1)), group=GroupSpec(BLOCK, 96, 1)), CoopUnsupportedError,
     "m requires a power-of-two thread count; block shape is (96, 1, 1)"),
    (dict(descending=Runtime("bool")), CoopTypeError, "m descending must be a compile-time bool"),
    (dict(valid_items=Static(3)), CoopValueError, "valid_items and oob_default must be provided together"),
    (dict(valid_items=Static(513), oob_default=Static(0)), CoopValueError,
     "m static valid_items must be between 0 and 512; got 513"),
    (dict(values=("int32", 2)), CoopValueError, "m keys and values must have the same items_per_thread (4 != 2)"),
    (dict(compare_op=min, descending=True), CoopValueError, "m compare_op cannot be combined with descending=True"),
])
def test_merge_sort_errors(args, cls, message):
    call = dict(group=BLOCK128, launch=L128, values=None, descending=False, valid_items=None, oob_default=None,
                compare_op=None)
    call.update(args)
    with pytest.raises(cls) as info:
        shape = _shape("m", "merge_sort_keys", "int32", 4, call["group"], call["launch"],
                       valid_items=call["valid_items"], oob_default=call["oob_default"])
        plan_merge_sort(shape, MergeSortOptions(values=call["values"], descending=call["descending"],
                                                compare_op=call["compare_op"]))
    assert message in str(info.value)


def _radix(dtype, qualified=False, begin_bit=None, end_bit=None, **options):
    shape = _shape("r", "radix_sort_keys", dtype, 4, qualified=qualified, begin_bit=begin_bit, end_bit=end_bit)
    return plan_radix_sort(shape, RadixSortOptions(**options))


def test_radix_sort_bits_static_and_runtime():
    spec = _radix("int64", begin_bit=Static(3))
    assert (spec.begin_bit, spec.end_bit, spec.key_bits) == (3, 64, 64)
    spec = _radix("uint32", begin_bit=Runtime("int32"), end_bit=Runtime("int32"), descending=True)
    assert (spec.begin_bit, spec.end_bit) == (None, None)  # checked on the device
    with pytest.raises(CoopValueError, match="r static end_bit must be between 5 and 32; got 4"):
        _radix("int32", begin_bit=Static(4), end_bit=Static(4))
    with active(BackendContext("numba-cuda-mlir", "cuda.coop.numba_mlir")):  # the message names the compiling backend
        with pytest.raises(CoopTypeError, match="use cuda.coop.numba_mlir for float64"):
            _radix("float64")
    assert _radix("float64", qualified=True, blocked_to_striped=True).blocked_to_striped


def _rank(dtype, **options):
    return plan_radix_rank(_shape("rank", "radix_rank", dtype, 2), RadixRankOptions(**options))


def test_radix_rank_bounds():
    spec = _rank("int32", begin_bit=5, descending=True)
    assert (spec.begin_bit, spec.radix_bits, spec.descending) == (5, 4, True)
    assert _rank("uint64", begin_bit=56, end_bit=64, radix_bits=8).radix_bits == 8
    with pytest.raises(CoopTypeError, match="rank end_bit must be a compile-time integer"):
        _rank("int32", begin_bit=0, end_bit=2.5)
    with pytest.raises(CoopTypeError, match="does not support keys dtype float32"):
        _rank("float32", begin_bit=0)


def _topk(dtype, group=BLOCK128, launch=L128, *, largest=False, values=None, **controls):
    shape = _shape("t", "topk_max_pairs" if values else "topk_min_keys", dtype, 4, group, launch, **controls)
    return plan_topk(shape, TopKOptions(largest=largest, values=values))


def test_topk_is_a_padded_radix_sort_of_a_one_dimensional_block():
    spec = _topk("int8", largest=True, values=("float64", 4), k=Runtime("int32"), valid_items=Static(9))
    assert (spec.op, spec.topk, spec.descending, spec.has_valid_items) == ("radix_sort", True, True, True)
    assert spec.padding_bits == 0x80  # int8 -128 sorts last in a descending sort
    with pytest.raises(CoopUnsupportedError, match="requires a one-dimensional block; block shape is"):
        _topk("int32", GroupSpec(BLOCK, 128, 1), LaunchShape((32, 4, 1)), k=Static(1))
    with pytest.raises(CoopValueError, match="t static valid_items must be between 0 and 512; got -1"):
        _topk("int32", k=Static(1), valid_items=Static(-1))
    with pytest.raises(CoopUnsupportedError, match="does not support group kind 'thread'"):
        _topk("int32", GroupSpec(THREAD, 1, 128), k=Static(1))
    with pytest.raises(CoopUnsupportedError, match="t supports logical-warp widths 1, 2, 4, 8, 16, 32; got 3"):
        _topk("int32", GroupSpec(LOGICAL_WARP, 3, 40, exhaustive=False), k=Static(1))


def _digits(raw_bits, dtype, begin, end):
    ordered = np.array([_ordered(int(b), dtype) for b in raw_bits], dtype=np.uint64)
    return (ordered >> np.uint64(begin)) & np.uint64((1 << (end - begin)) - 1)


@pytest.mark.parametrize("dtype", ["int32", "uint32", "int64", "uint64", "float32", "float64"])
@pytest.mark.parametrize("descending", [False, True])
def test_padding_the_invalid_keys_sorts_the_valid_ones_first_in_any_bit_range(dtype, descending):
    """SPEC 8.23's conforming radix sort of a partial tile: the keys past valid_items replaced by the padding key,
    then a stable sort of the whole tile, equals the stable sort of the valid keys alone followed by the pads in
    input order (their values carried in input order), whatever the bit range."""
    width = np.dtype(dtype).itemsize * 8
    unsigned = np.dtype(f"uint{width}")
    rng = np.random.default_rng(11)
    pad = ordered_extreme_bits(dtype, descending)
    for begin, end in ((0, width), (3, width - 5), (width - 4, width), (1, 2)):
        tile = rng.integers(0, np.iinfo(unsigned).max, 96, dtype=unsigned, endpoint=True)
        tile[rng.random(96) < 0.2] = pad  # valid keys equal to the pad tie with it: stability keeps them first
        for valid in (0, 1, 37, 96):
            mask = (1 << (end - begin)) - 1
            padded = np.concatenate([tile[:valid], np.full(96 - valid, pad, unsigned)])
            ranked = _digits(padded, dtype, begin, end)
            order = np.argsort(np.uint64(mask) - ranked if descending else ranked, kind="stable")
            alone = _digits(tile[:valid], dtype, begin, end)
            expected = np.argsort(np.uint64(mask) - alone if descending else alone, kind="stable")
            assert list(order[:valid]) == list(expected), (begin, end, valid)
            assert list(order[valid:]) == list(range(valid, 96)), (begin, end, valid)


def test_radix_sort_partial_tiles():
    shape = _shape("r", "radix_sort_pairs", "uint64", 4, valid_items=Runtime("int32"), oob_default=Static(2**64 - 1))
    spec = plan_radix_sort(shape, RadixSortOptions(values=("float32", 4), descending=True))
    assert (spec.has_valid_items, spec.has_oob_default, spec.padding_bits) == (True, True, 0)
    keys = plan_radix_sort(_shape("r", "radix_sort_keys", "int32", 2, valid_items=Static(256)), RadixSortOptions())
    assert (keys.has_valid_items, keys.has_oob_default, keys.padding_bits) == (True, False, 0x7FFFFFFF)
    assert not plan_radix_sort(_shape("r", "radix_sort_keys", "int32", 2), RadixSortOptions()).has_valid_items


@pytest.mark.parametrize("controls,cls,message", [
    (dict(oob_default=Static(0)), CoopValueError, "r oob_default requires valid_items"),
    (dict(valid_items=Static(513)), CoopValueError, "r static valid_items must be between 0 and 512; got 513"),
    (dict(valid_items=Static(-1)), CoopValueError, "r static valid_items must be between 0 and 512; got -1"),
    (dict(valid_items=Runtime("uint64")), CoopTypeError,
     "r valid_items must be a signed integer of at most 64 bits or an unsigned integer of at most 32 bits; got uint64"),
    (dict(valid_items=Static(3), oob_default=Runtime("int64")), CoopTypeError,
     "r oob_default must have the payload dtype int32; got int64; cast it"),
    (dict(valid_items=Static(3), oob_default=Static(2**31)), CoopValueError,
     "r oob_default literal 2147483648 is not representable as int32"),
    (dict(valid_items=Static(3), oob_default=Static(0.5)), CoopValueError,
     "r oob_default literal 0.5 is not representable as int32"),
])
def test_radix_sort_partial_tile_errors(controls, cls, message):
    with pytest.raises(cls) as info:
        plan_radix_sort(_shape("r", "radix_sort_keys", "int32", 4, **controls), RadixSortOptions())
    assert str(info.value) == message


def _warp_topk(items_per_thread, group=GroupSpec(WARP, 32, 4), launch=L128, *, values=None, descriptor=None,
               **controls):
    shape = CallShape(name="w", op="topk_min_pairs" if values else "topk_min_keys", group=group, launch=launch,
                      dtypes=("float32",), items_per_thread=items_per_thread, controls=controls,
                      descriptor=descriptor)
    return plan_topk(shape, TopKOptions(largest=False, values=values))


def test_warp_topk_sorts_each_groups_own_tile_without_scratch_for_one_key_per_lane():
    spec = _warp_topk(1, k=Static(2), valid_items=Runtime("int32"))
    assert (spec.op, spec.tile_items, spec.has_valid_items, spec.bitonic, spec.uses_scratch, spec.barrier) == (
        "topk", 32, True, True, False, False)
    spec = _warp_topk(4, GroupSpec(LOGICAL_WARP, 8, 16), values=("int64", 4), k=Static(32))
    assert (spec.tile_items, spec.value_dtype, spec.bitonic, spec.uses_scratch, spec.barrier) == (
        32, "int64", False, True, True)
    # any block of complete warps, in any number of dimensions; the tile limit of radix ranking does not apply
    assert _warp_topk(4, GroupSpec(WARP, 32, 32), LaunchShape((8, 8, 16)), k=Static(0)).tile_items == 128
    assert _warp_topk(1, GroupSpec(LOGICAL_WARP, 1, 128), k=Static(1)).tile_items == 1


@pytest.mark.parametrize("args,cls,message", [
    (dict(k=Static(33)), CoopValueError, "w static k must be between 0 and 32; got 33"),
    (dict(k=Static(-1)), CoopValueError, "w static k must be between 0 and 32; got -1"),
    (dict(k=Static(1), valid_items=Static(33)), CoopValueError,
     "w static valid_items must be between 0 and 32; got 33"),
    (dict(k=Runtime("float32")), CoopTypeError, "w k must be a signed integer of at most 64 bits"),
    (dict(k=Static(1), valid_items=Runtime("uint64")), CoopTypeError,
     "w valid_items must be a signed integer of at most 64 bits"),
    (dict(k=Static(1), launch=LaunchShape((48, 1, 1))), CoopValueError,
     "w on warp groups requires a block made of complete warps; block has 48 threads"),
    (dict(k=Static(1), descriptor=object()), CoopValueError,
     "w does not accept temp_storage for warp groups; their scratch is always compiler-owned"),
    (dict(k=Static(1), values=("int32", 2)), CoopValueError,
     "w keys and values must have the same items_per_thread (1 != 2)"),
])
def test_warp_topk_errors(args, cls, message):
    with pytest.raises(cls) as info:
        _warp_topk(1, **args)
    assert message in str(info.value)
