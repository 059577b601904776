"""Layer 2 planning of sorting and selection (SPEC 8.8-8.11) without a compiler, checked against NumPy."""
from __future__ import annotations

import numpy as np
import pytest

from cuda.coop._backend_context import BackendContext, active
from cuda.coop._errors import CoopTypeError, CoopUnsupportedError, CoopValueError
from cuda.coop._semantics.common import BLOCK, LOGICAL_WARP, WARP, GroupSpec, LaunchShape, Runtime, Static
from cuda.coop._semantics.sort import (
    ordered_extreme_bits, plan_merge_sort, plan_radix_rank, plan_radix_sort, plan_topk,
)

L128 = LaunchShape((128, 1, 1))
BLOCK128 = GroupSpec(BLOCK, 128, 1)


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
    spec = plan_merge_sort("m", BLOCK128, L128, "float32", 4, ("int16", 4), True, Static(10), Static(1.5), None, None)
    assert (spec.op, spec.value_dtype, spec.descending, spec.has_valid_items, spec.barrier) == (
        "merge_sort", "int16", True, True, True)
    warp = plan_merge_sort("m", GroupSpec(WARP, 32, 4), L128, "int32", 2, None, False, None, None, None, None)
    assert warp.tile_items == 64
    plan_merge_sort("m", GroupSpec(LOGICAL_WARP, 8, 16), L128, "int32", 2, None, False, None, None, None, None)


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
        plan_merge_sort("m", call["group"], call["launch"], "int32", 4, call["values"], call["descending"],
                        call["valid_items"], call["oob_default"], call["compare_op"], None)
    assert message in str(info.value)


def test_radix_sort_bits_static_and_runtime():
    spec = plan_radix_sort("r", BLOCK128, L128, "int64", 4, None, Static(3), None, False, False, None, False)
    assert (spec.begin_bit, spec.end_bit, spec.key_bits) == (3, 64, 64)
    spec = plan_radix_sort("r", BLOCK128, L128, "uint32", 4, None, Runtime("int32"), Runtime("int32"), True, False,
                           None, False)
    assert (spec.begin_bit, spec.end_bit) == (None, None)  # checked on the device
    with pytest.raises(CoopValueError, match="r static end_bit must be between 5 and 32; got 4"):
        plan_radix_sort("r", BLOCK128, L128, "int32", 4, None, Static(4), Static(4), False, False, None, False)
    with active(BackendContext("numba-cuda-mlir", "cuda.coop.numba_mlir")):  # the message names the compiling backend
        with pytest.raises(CoopTypeError, match="use cuda.coop.numba_mlir for float64"):
            plan_radix_sort("r", BLOCK128, L128, "float64", 4, None, None, None, False, False, None, False)
    assert plan_radix_sort("r", BLOCK128, L128, "float64", 4, None, None, None, False, True, None,
                           True).blocked_to_striped


def test_radix_rank_bounds():
    spec = plan_radix_rank("rank", BLOCK128, L128, "int32", 2, 5, None, None, True, None)
    assert (spec.begin_bit, spec.radix_bits, spec.descending) == (5, 4, True)
    assert plan_radix_rank("rank", BLOCK128, L128, "uint64", 2, 56, 64, 8, False, None).radix_bits == 8
    with pytest.raises(CoopTypeError, match="rank end_bit must be a compile-time integer"):
        plan_radix_rank("rank", BLOCK128, L128, "int32", 2, 0, 2.5, None, False, None)
    with pytest.raises(CoopTypeError, match="does not support keys dtype float32"):
        plan_radix_rank("rank", BLOCK128, L128, "float32", 2, 0, None, None, False, None)


def test_topk_is_a_padded_radix_sort_of_a_one_dimensional_block():
    spec = plan_topk("t", BLOCK128, L128, "int8", 4, ("float64", 4), True, Runtime("int32"), Static(9), None)
    assert (spec.op, spec.topk, spec.descending, spec.has_valid_items) == ("radix_sort", True, True, True)
    assert spec.padding_bits == 0x80  # int8 -128 sorts last in a descending sort
    with pytest.raises(CoopUnsupportedError, match="requires a one-dimensional block; block shape is"):
        plan_topk("t", GroupSpec(BLOCK, 128, 1), LaunchShape((32, 4, 1)), "int32", 4, None, False, Static(1), None,
                  None)
    with pytest.raises(CoopValueError, match="t static valid_items must be between 0 and 512; got -1"):
        plan_topk("t", BLOCK128, L128, "int32", 4, None, False, Static(1), Static(-1), None)
    with pytest.raises(CoopUnsupportedError, match="does not support group kind 'warp'"):
        plan_topk("t", GroupSpec(WARP, 32, 4), L128, "int32", 4, None, False, Static(1), None, None)
