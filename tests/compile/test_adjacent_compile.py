"""sm_90 builds of adjacent_difference and discontinuity without a GPU, and their compile-time errors
(SPEC 8.12, 8.13, 9.7; O12, C1-C3, C5, C7, C9, C10, G3)."""
from __future__ import annotations

import numpy as np
import pytest
from numba_cuda_mlir import cuda

import cuda.coop.numba_mlir as numba_coop
from cuda import coop

from compile_helpers import build_kernel, expect_compile_error

I32 = np.zeros(1024, np.int32)
F32 = np.zeros(1024, np.float32)
U8 = np.zeros(1024, np.uint8)


def difference(a, b):  # a module-level callable for the qualified-option checks
    return a - b


# ---------------------------------------------------------------------------- builds


def _difference_kernel(direction, valid, predecessor, successor):
    """Options are closure constants (None: not passed)."""
    @cuda.jit
    def kernel(src, dst):
        block = coop.this_block()
        items = coop.ThreadData(4)
        coop.load(block, src, items)
        out = coop.adjacent_difference(block, items, direction=direction, valid_items=valid,
                                       tile_predecessor_item=predecessor, tile_successor_item=successor)
        coop.store(block, dst, out)

    return kernel


@pytest.mark.parametrize("direction, valid, predecessor, successor, method", [
    ("left", None, None, None, "SubtractLeft(in, out, Difference{});"),
    ("left", None, 7, None, "SubtractLeft(in, out, Difference{}, boundary);"),
    ("left", 100, None, None, "SubtractLeftPartialTile(in, out, Difference{}, (int)valid_items);"),
    ("left", 0, 3, None, "SubtractLeftPartialTile(in, out, Difference{}, (int)valid_items, boundary);"),
    ("right", None, None, None, "SubtractRight(in, out, Difference{});"),
    ("right", None, None, 2.0, "SubtractRight(in, out, Difference{}, boundary);"),
    ("RIGHT", 512, None, None, "SubtractRightPartialTile(in, out, Difference{}, (int)valid_items);"),
])
@pytest.mark.parametrize("dtype", [np.int32, np.float32, np.uint8])
def test_adjacent_difference_builds(direction, valid, predecessor, successor, method, dtype):
    data = np.zeros(1024, dtype)
    built = build_kernel(_difference_kernel(direction, valid, predecessor, successor), (data, data), check_scratch=True)
    assert method in built.cpp_source
    assert "BlockAdjacentDifference<" in built.cpp_source
    assert "reuse barrier" not in built.cpp_source  # the kernel's last scratch call: no reuse barrier (SPEC 6.3)


def test_small_integers_subtract_in_their_own_type():
    built = build_kernel(_difference_kernel("left", None, None, None), (U8, U8), check_scratch=True)
    assert ("(unsigned char)(unsigned char)((unsigned char)current - (unsigned char)neighbour)"
            in built.cpp_source)


def test_runtime_controls_build_with_a_range_trap():
    @cuda.jit
    def kernel(src, dst, n, before):
        block = coop.this_block()
        items = coop.ThreadData(2)
        coop.load(block, src, items)
        out = coop.adjacent_difference(block, items, valid_items=n, tile_predecessor_item=before)
        coop.store(block, dst, out)

    built = build_kernel(kernel, (F32, F32, np.int64(5), np.float32(1)), block=(8, 4, 2), check_scratch=True)
    assert "cuda_coop::check_range(valid_items, 0, 128);" in built.cpp_source
    assert "cub::BlockAdjacentDifference<float, 8, 4, 2>" in built.cpp_source
    assert "BPT.TRAP" in built.sass()


def _flags_kernel(mode, predecessor, successor):
    @cuda.jit
    def kernel(src, dst):
        block = coop.this_block()
        items = coop.ThreadData(2)
        coop.load(block, src, items)
        coop.store(block, dst, coop.discontinuity(block, items, mode=mode, tile_predecessor_item=predecessor,
                                                   tile_successor_item=successor))

    return kernel


@pytest.mark.parametrize("mode, predecessor, successor, method", [
    ("heads", None, None, "FlagHeads(heads, in, Inequality{});"),
    ("heads", 3, None, "FlagHeads(heads, in, Inequality{}, predecessor);"),
    ("tails", None, None, "FlagTails(tails, in, Inequality{});"),
    ("Tails", None, 3, "FlagTails(tails, in, Inequality{}, successor);"),
])
@pytest.mark.parametrize("dtype", [np.int32, np.float32])
def test_discontinuity_single_flags_build(mode, predecessor, successor, method, dtype):
    data = np.zeros(1024, dtype)
    built = build_kernel(_flags_kernel(mode, predecessor, successor), (data, I32), block=(8, 4, 1), check_scratch=True)
    assert method in built.cpp_source
    assert f"cub::BlockDiscontinuity<{'int' if dtype == np.int32 else 'float'}, 8, 4, 1>" in built.cpp_source


@pytest.mark.parametrize("predecessor, successor, method", [
    (None, None, "FlagHeadsAndTails(heads, tails, in, Inequality{});"),
    (1, None, "FlagHeadsAndTails(heads, predecessor, tails, in, Inequality{});"),
    (None, 1, "FlagHeadsAndTails(heads, tails, successor, in, Inequality{});"),
    (1, 2, "FlagHeadsAndTails(heads, predecessor, tails, successor, in, Inequality{});"),
])
def test_discontinuity_heads_and_tails_builds(predecessor, successor, method):
    @cuda.jit
    def kernel(src, heads_out, tails_out):
        block = coop.this_block()
        items = coop.ThreadData(4)
        coop.load(block, src, items)
        heads, tails = coop.discontinuity(block, items, mode="heads-and-tails", tile_predecessor_item=predecessor,
                                          tile_successor_item=successor)
        coop.store(block, heads_out, heads)
        coop.store(block, tails_out, tails)

    built = build_kernel(kernel, (F32, I32, I32), check_scratch=True)
    assert method in built.cpp_source


def test_runtime_boundary_items_and_explicit_storage_build():
    @cuda.jit
    def kernel(src, dst, before, after):
        block = coop.this_block()
        temp = coop.TempStorage(auto_sync=True)
        items = coop.ThreadData(2)
        coop.load(block, src, items)
        _heads, _tails = coop.discontinuity(block, items, mode="heads_and_tails", tile_predecessor_item=before,
                                            tile_successor_item=after, temp_storage=temp)
        diff = coop.adjacent_difference(block, items, direction="right", tile_successor_item=after, temp_storage=temp)
        coop.store(block, dst, diff)

    built = build_kernel(kernel, (I32, I32, np.int32(0), np.int32(1)), check_scratch=True)
    assert built.cpp_source.count("cuda_coop::sync_block();  // reuse barrier") == 2


def test_explicit_storage_without_auto_sync_has_no_barrier():
    @cuda.jit
    def kernel(src, dst):
        block = coop.this_block()
        temp = coop.TempStorage()
        items = coop.ThreadData(2)
        coop.load(block, src, items)
        coop.store(block, dst, coop.discontinuity(block, items, temp_storage=temp))

    built = build_kernel(kernel, (I32, I32), check_scratch=True)
    assert "reuse barrier" not in built.cpp_source


def test_qualified_calls_build():
    @cuda.jit
    def kernel(src, dst):
        block = numba_coop.this_block()
        items = numba_coop.ThreadData(2)
        numba_coop.load(block, src, items)
        flags = numba_coop.discontinuity(block, items, mode="tails")
        numba_coop.store(block, dst, numba_coop.adjacent_difference(block, flags, direction="right"))

    build_kernel(kernel, (F32, I32), check_scratch=True)


# ---------------------------------------------------------------------------- errors


@pytest.mark.parametrize("direction, predecessor, successor, message", [
    ("left", None, 1, "cuda.coop.adjacent_difference direction='left' accepts only tile_predecessor_item"),
    ("right", 1, None, "cuda.coop.adjacent_difference direction='right' accepts only tile_successor_item"),
    (" Left ", 1, 1, "cuda.coop.adjacent_difference direction='left' accepts only tile_predecessor_item"),
])
def test_adjacent_difference_boundary_items_are_o12(direction, predecessor, successor, message):
    expect_compile_error(_difference_kernel(direction, None, predecessor, successor), (I32, I32), coop.CoopValueError,
                         message)


def test_successor_with_valid_items_is_o12():
    expect_compile_error(_difference_kernel("right", 3, None, 5), (I32, I32), coop.CoopValueError,
                         "cuda.coop.adjacent_difference tile_successor_item cannot be combined with valid_items")


@pytest.mark.parametrize("mode, predecessor, successor, message", [
    ("heads", None, 1, "cuda.coop.discontinuity mode='heads' accepts only tile_predecessor_item"),
    ("tails", 1, None, "cuda.coop.discontinuity mode='tails' accepts only tile_successor_item"),
])
def test_discontinuity_boundary_items_are_o12(mode, predecessor, successor, message):
    expect_compile_error(_flags_kernel(mode, predecessor, successor), (I32, I32), coop.CoopValueError, message)


@pytest.mark.parametrize("valid", [513, -1])
def test_static_valid_items_out_of_range_is_c7(valid):
    expect_compile_error(_difference_kernel("left", valid, None, None), (I32, I32), coop.CoopValueError,
                         f"cuda.coop.adjacent_difference static valid_items must be between 0 and 512; got {valid}")


def test_float_runtime_valid_items_is_c6():
    @cuda.jit
    def kernel(src, dst, n):
        items = coop.ThreadData(4)
        coop.load(coop.this_block(), src, items)
        coop.store(coop.this_block(), dst, coop.adjacent_difference(coop.this_block(), items, valid_items=n))

    expect_compile_error(kernel, (I32, I32, np.float32(3)), coop.CoopTypeError,
                         "cuda.coop.adjacent_difference valid_items must be a signed integer of at most 64 bits or an "
                         "unsigned integer of at most 32 bits; got float32")


@pytest.mark.parametrize("name", ["adjacent_difference", "discontinuity"])
def test_runtime_boundary_of_another_dtype_is_c9(name):
    operation = getattr(coop, name)

    @cuda.jit
    def kernel(src, dst, before):
        block = coop.this_block()
        items = coop.ThreadData(2)
        coop.load(block, src, items)
        coop.store(block, dst, operation(block, items, tile_predecessor_item=before))

    expect_compile_error(kernel, (I32, I32, np.int64(1)), coop.CoopTypeError,
                         f"cuda.coop.{name} tile_predecessor_item must have the payload dtype "
                         "int32; got int64; cast it")


def test_numpy_constant_of_another_dtype_is_c9():
    wrong = np.float64(1)
    expect_compile_error(_flags_kernel("tails", None, wrong), (F32, I32), coop.CoopTypeError,
                         "cuda.coop.discontinuity tile_successor_item must have the payload dtype "
                         "float32; got float64; cast it")


@pytest.mark.parametrize("data, value, message", [
    (U8, 256, "cuda.coop.adjacent_difference tile_predecessor_item literal 256 is not representable as uint8"),
    (U8, -1, "cuda.coop.adjacent_difference tile_predecessor_item literal -1 is not representable as uint8"),
    (I32, 1.5, "cuda.coop.adjacent_difference tile_predecessor_item literal 1.5 is not representable as int32"),
    (F32, 1e39, "cuda.coop.adjacent_difference tile_predecessor_item literal 1e+39 is not representable as float32"),
])
def test_unrepresentable_literal_boundary_is_c10(data, value, message):
    expect_compile_error(_difference_kernel("left", None, value, None), (data, data), coop.CoopValueError, message)


def test_unrepresentable_literal_successor_of_flags_is_c10():
    expect_compile_error(_flags_kernel("tails", None, 2**31), (I32, I32), coop.CoopValueError,
                         "cuda.coop.discontinuity tile_successor_item literal 2147483648 is not representable as int32")


@pytest.mark.parametrize("name", ["adjacent_difference", "discontinuity"])
def test_warp_groups_are_g3(name):
    operation = getattr(coop, name)

    @cuda.jit
    def kernel(src, dst):
        warp = coop.this_warp()
        items = coop.ThreadData(2)
        coop.load(warp, src, items)
        coop.store(warp, dst, operation(warp, items))

    expect_compile_error(kernel, (I32, I32), coop.CoopUnsupportedError,
                         f"cuda.coop.{name} does not support group kind 'warp'; supported group kinds: block")


def test_unknown_direction_is_c2():
    expect_compile_error(_difference_kernel("up", None, None, None), (I32, I32), coop.CoopValueError,
                         "cuda.coop.adjacent_difference direction must be one of: left, right; got 'up'")


def test_unknown_mode_is_c2():
    expect_compile_error(_flags_kernel("head", None, None), (I32, I32), coop.CoopValueError,
                         "cuda.coop.discontinuity mode must be one of: heads, tails, heads_and_tails; got 'head'")


def test_non_string_direction_is_c1():
    expect_compile_error(_difference_kernel(0, None, None, None), (I32, I32), coop.CoopTypeError,
                         "cuda.coop.adjacent_difference direction must be a string; got int")


def test_non_string_mode_is_c1():
    expect_compile_error(_flags_kernel(True, None, None), (I32, I32), coop.CoopTypeError,
                         "cuda.coop.discontinuity mode must be a string; got bool")


def test_discontinuity_has_no_valid_items():
    @cuda.jit
    def kernel(src, dst):
        items = coop.ThreadData(2)
        coop.load(coop.this_block(), src, items)
        coop.store(coop.this_block(), dst, coop.discontinuity(coop.this_block(), items, valid_items=3))

    expect_compile_error(kernel, (I32, I32), coop.CoopTypeError,
                         "cuda.coop.discontinuity got an unexpected keyword argument 'valid_items'")


def test_common_difference_op_is_c3():
    @cuda.jit
    def kernel(src, dst):
        items = coop.ThreadData(2)
        coop.load(coop.this_block(), src, items)
        out = coop.adjacent_difference(coop.this_block(), items, difference_op=difference)
        coop.store(coop.this_block(), dst, out)

    expect_compile_error(kernel, (I32, I32), coop.CoopValueError,
                         "cuda.coop.adjacent_difference difference_op difference requires cuda.coop.numba_mlir; "
                         "the common API accepts: direction, valid_items, tile_predecessor_item, "
                         "tile_successor_item, temp_storage")


def test_common_flag_op_is_c3():
    @cuda.jit
    def kernel(src, dst):
        items = coop.ThreadData(2)
        coop.load(coop.this_block(), src, items)
        coop.store(coop.this_block(), dst, coop.discontinuity(coop.this_block(), items, flag_op=difference))

    expect_compile_error(kernel, (I32, I32), coop.CoopValueError,
                         "cuda.coop.discontinuity flag_op difference requires cuda.coop.numba_mlir; the common API "
                         "accepts: mode, tile_predecessor_item, tile_successor_item, temp_storage")


def test_warp_descriptor_message_order_keeps_g3_first():
    """A block-only operation on a warp group reports the group (G3) before its descriptor."""
    @cuda.jit
    def kernel(src, dst):
        temp = coop.TempStorage()
        items = coop.ThreadData(2)
        coop.load(coop.this_block(), src, items)
        coop.store(coop.this_block(), dst, coop.discontinuity(coop.this_warp(), items, temp_storage=temp))

    expect_compile_error(kernel, (I32, I32), coop.CoopUnsupportedError,
                         "cuda.coop.discontinuity does not support group kind 'warp'")
