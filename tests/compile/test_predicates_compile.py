"""sm_90 builds of the qualified custom predicates and difference operators (SPEC 9.7) and of radix_rank's
exclusive_digit_prefix (SPEC 9.8), without a GPU, and their compile-time errors (O13, C14, C16, P3, C2, C3)."""
from __future__ import annotations

import re

import numpy as np
import pytest

import cuda.coop.numba_mlir as numba_coop
from cuda import coop
from numba_cuda_mlir import cuda

from compile_helpers import build_kernel, expect_compile_error

I32 = np.zeros(1024, np.int32)
F32 = np.zeros(1024, np.float32)
U32 = np.zeros(1024, np.uint32)


def by_abs(a, b):
    return abs(a) < abs(b)


@cuda.jit(device=True)
def device_greater(a, b):
    return a > b


def twice_minus(current, neighbour):
    return current * 2 - neighbour


@cuda.jit(device=True)
def device_larger(current, neighbour):
    return max(current, neighbour)


def far_apart(a, b):
    return abs(a - b) > 3


@cuda.jit(device=True)
def device_far_apart(a, b):
    return abs(a - b) > 3


def returns_a_number(a, b):
    return a - b  # a number used as a truth value: nonzero is true


def not_compilable(a, b):
    return a.no_such_attribute < b


def _predicate_symbols(cpp: str) -> set[str]:
    return set(re.findall(r"cuda_coop_fn_\w+_pred", cpp))


# ---------------------------------------------------------------------------------------------- merge sort


def _sort_kernel(width, compare, k, pairs=False, partial=False):
    @cuda.jit
    def kernel(src, dst, vals, n):
        block = coop.this_block()
        group = block if width == 0 else (coop.this_warp() if width == 32 else coop.this_warp().group_by(width))
        keys = coop.ThreadData(k)
        coop.load(block, src, keys)
        if pairs:
            values = coop.ThreadData(k)
            coop.load(block, vals, values)
            if partial:
                out, out_values = numba_coop.merge_sort_pairs(group, keys, values, compare_op=compare, valid_items=n,
                                                              oob_default=1000)
            else:
                out, out_values = numba_coop.merge_sort_pairs(group, keys, values, compare_op=compare)
            coop.store(block, vals, out_values)
        elif partial:
            out = numba_coop.merge_sort_keys(group, keys, compare_op=compare, valid_items=n, oob_default=1000)
        else:
            out = numba_coop.merge_sort_keys(group, keys, compare_op=compare)
        coop.store(block, dst, out)

    return kernel


@pytest.mark.parametrize("width", [0, 32, 16])
@pytest.mark.parametrize("compare", [by_abs, device_greater], ids=["python", "device"])
def test_merge_sort_compare_op_builds_for_every_group(width, compare):
    built = build_kernel(_sort_kernel(width, compare, 2), (I32, I32, I32, np.int32(5)))
    cpp = built.cpp_source
    assert "StableSort(out, cuda_coop_merge_sort_" in cpp and "_compare{})" in cpp
    assert len(_predicate_symbols(cpp)) == 1
    assert "cuda::std::less" not in cpp
    assert ("BlockMergeSort" if width == 0 else "WarpMergeSort") in cpp


@pytest.mark.parametrize("dtype", [I32, F32])
def test_merge_sort_pairs_compare_op_with_partial_tiles(dtype):
    built = build_kernel(_sort_kernel(0, by_abs, 4, pairs=True, partial=True), (dtype, dtype, I32, np.int32(7)))
    cpp = built.cpp_source
    assert "StableSort(out, out_values, cuda_coop_merge_sort_" in cpp and "(int)valid_items, oob_default)" in cpp
    ctype = "int" if dtype is I32 else "float"
    assert "extern \"C\" __device__ unsigned char cuda_coop_fn_" in cpp
    assert f"bool operator()(const {ctype}& a, const {ctype}& b)" in cpp


def test_merge_sort_compare_op_returning_a_number_builds():
    build_kernel(_sort_kernel(0, returns_a_number, 2), (F32, F32, I32, np.int32(5)))


def test_one_function_as_comparator_and_binary_operator_gets_two_symbols():
    def both(a, b):
        return a < b

    @cuda.jit
    def kernel(src, dst):
        block = coop.this_block()
        keys = coop.ThreadData(2)
        coop.load(block, src, keys)
        coop.store(block, dst, numba_coop.merge_sort_keys(block, keys, compare_op=both))
        dst[block.rank()] = coop.reduce(block, src[block.rank()], binary_op=both)

    cpp = build_kernel(kernel, (I32, I32)).cpp_source
    (pred,) = _predicate_symbols(cpp)
    plain = pred[: -len("_pred")]
    assert f"unsigned char {pred}(int, int)" in cpp and f"int {plain}(int, int)" in cpp


def test_compare_op_with_descending_is_o13():
    @cuda.jit
    def kernel(src, dst):
        keys = coop.ThreadData(2)
        coop.load(coop.this_block(), src, keys)
        out = numba_coop.merge_sort_pairs(coop.this_block(), keys, keys, descending=True, compare_op=device_greater)
        coop.store(coop.this_block(), dst, out[0])

    expect_compile_error(kernel, (I32, I32), coop.CoopValueError,
                         "cuda.coop.numba_mlir.merge_sort_pairs compare_op cannot be combined with descending=True",
                         exact_class=True)


@pytest.mark.parametrize("value,shown", [("less", "'less'"), (5, "5"), (max, "<built-in function max>")])
def test_compare_op_must_be_a_function(value, shown):
    kernel = _sort_kernel(0, value, 2)
    expect_compile_error(kernel, (I32, I32, I32, np.int32(5)), coop.CoopTypeError,
                         "cuda.coop.numba_mlir.merge_sort_keys compare_op must be a Python/device "
                         f"function; got {shown}", exact_class=True)


def test_compare_op_that_does_not_compile_is_c14():
    expect_compile_error(_sort_kernel(0, not_compilable, 2), (I32, I32, I32, np.int32(5)), coop.CoopTypeError,
                         "cuda.coop.numba_mlir.merge_sort_keys compare_op not_compilable could not be "
                         "compiled for (int32, int32)", exact_class=True)


def test_compare_op_defined_in_the_kernel_is_c16():
    @cuda.jit
    def kernel(src, dst):
        keys = coop.ThreadData(2)
        coop.load(coop.this_block(), src, keys)
        out = numba_coop.merge_sort_keys(coop.this_block(), keys, compare_op=lambda a, b: a < b)
        coop.store(coop.this_block(), dst, out)

    expect_compile_error(kernel, (I32, I32), coop.CoopTypeError,
                         "<lambda> is defined inside the kernel; define operator callables at module scope",
                         exact_class=True)


def test_common_merge_sort_compare_op_is_c3():
    @cuda.jit
    def kernel(src, dst):
        keys = coop.ThreadData(2)
        coop.load(coop.this_block(), src, keys)
        coop.store(coop.this_block(), dst, coop.merge_sort_keys(coop.this_block(), keys, compare_op=by_abs))

    expect_compile_error(kernel, (I32, I32), coop.CoopValueError,
                         "cuda.coop.merge_sort_keys compare_op by_abs requires cuda.coop.numba_mlir; the common API "
                         "accepts: descending, valid_items, oob_default, temp_storage", exact_class=True)


# ---------------------------------------------------------------------------------------- adjacent difference


def _difference_kernel(op, direction, boundary=False, partial=False, k=4):
    @cuda.jit
    def kernel(src, dst, edge, n):
        block = coop.this_block()
        items = coop.ThreadData(k)
        coop.load(block, src, items)
        if direction == "left" and boundary:
            out = numba_coop.adjacent_difference(block, items, difference_op=op, tile_predecessor_item=edge[0])
        elif boundary:
            out = numba_coop.adjacent_difference(block, items, direction="right", difference_op=op,
                                                 tile_successor_item=edge[0])
        elif partial:
            out = numba_coop.adjacent_difference(block, items, direction=direction, difference_op=op, valid_items=n)
        else:
            out = numba_coop.adjacent_difference(block, items, direction=direction, difference_op=op)
        coop.store(block, dst, out)

    return kernel


@pytest.mark.parametrize("direction", ["left", "right"])
@pytest.mark.parametrize("boundary,partial", [(False, False), (True, False), (False, True)])
@pytest.mark.parametrize("op", [twice_minus, device_larger], ids=["python", "device"])
def test_difference_op_builds(direction, boundary, partial, op):
    built = build_kernel(_difference_kernel(op, direction, boundary, partial), (I32, I32, I32, np.int32(9)))
    cpp = built.cpp_source
    method = ("SubtractLeft" if direction == "left" else "SubtractRight") + ("PartialTile" if partial else "")
    assert f"algo.{method}(in, out, cuda_coop_adjacent_difference_" in cpp
    assert "struct Difference" not in cpp and re.search(
        r"extern \"C\" __device__ int cuda_coop_fn_\w+_int32\(int, int\)", cpp)


@pytest.mark.parametrize("op,functor", [("max", "cuda_coop::maximum<float>{}"), (min, "cuda_coop::minimum<float>{}")])
def test_difference_op_accepts_operator_names(op, functor):
    built = build_kernel(_difference_kernel(op, "right"), (F32, F32, F32, np.int32(9)), block=32)
    assert f"algo.SubtractRight(in, out, {functor})" in built.cpp_source


def test_difference_op_bit_operator_on_floats_is_p3():
    expect_compile_error(_difference_kernel("bit_xor", "left"), (F32, F32, F32, np.int32(9)), coop.CoopTypeError,
                         "cuda.coop.numba_mlir.adjacent_difference difference_op 'bit_xor' requires an "
                         "integer dtype; got float32", exact_class=True)


def test_difference_op_unknown_name_is_c2():
    expect_compile_error(_difference_kernel("minus", "left"), (I32, I32, I32, np.int32(9)), coop.CoopValueError,
                         "cuda.coop.numba_mlir.adjacent_difference difference_op must be one of: sum, multiplies, "
                         "min, max, bit_and, bit_or, bit_xor; got 'minus'", exact_class=True)


def test_difference_op_bad_value_and_compile_failure_are_c14():
    expect_compile_error(_difference_kernel(3, "left"), (I32, I32, I32, np.int32(9)), coop.CoopTypeError,
                         "cuda.coop.numba_mlir.adjacent_difference difference_op must be an operator string or a "
                         "Python/device function; got 3", exact_class=True)
    expect_compile_error(_difference_kernel(not_compilable, "left"), (I32, I32, I32, np.int32(9)), coop.CoopTypeError,
                         "cuda.coop.numba_mlir.adjacent_difference difference_op not_compilable could not be "
                         "compiled for (int32, int32)", exact_class=True)


def test_common_adjacent_difference_difference_op_is_c3():
    @cuda.jit
    def kernel(src, dst):
        items = coop.ThreadData(2)
        coop.load(coop.this_block(), src, items)
        coop.store(coop.this_block(), dst, coop.adjacent_difference(coop.this_block(), items, difference_op="max"))

    expect_compile_error(kernel, (I32, I32), coop.CoopValueError,
                         "cuda.coop.adjacent_difference difference_op 'max' requires cuda.coop.numba_mlir; the "
                         "common API accepts: direction, valid_items, tile_predecessor_item, "
                         "tile_successor_item, temp_storage", exact_class=True)


# ---------------------------------------------------------------------------------------------- discontinuity


def _flags_kernel(op, mode, predecessor=False, successor=False):
    @cuda.jit
    def kernel(src, heads_out, tails_out, edge):
        block = coop.this_block()
        items = coop.ThreadData(4)
        coop.load(block, src, items)
        if mode == "heads_and_tails":
            if predecessor and successor:
                heads, tails = numba_coop.discontinuity(block, items, mode=mode, flag_op=op,
                                                        tile_predecessor_item=edge[0], tile_successor_item=edge[1])
            else:
                heads, tails = numba_coop.discontinuity(block, items, mode=mode, flag_op=op)
            coop.store(block, heads_out, heads)
            coop.store(block, tails_out, tails)
        elif mode == "heads":
            if predecessor:
                coop.store(block, heads_out, numba_coop.discontinuity(block, items, flag_op=op,
                                                                      tile_predecessor_item=edge[0]))
            else:
                coop.store(block, heads_out, numba_coop.discontinuity(block, items, flag_op=op))
        elif successor:
            coop.store(block, tails_out, numba_coop.discontinuity(block, items, mode="tails", flag_op=op,
                                                                  tile_successor_item=edge[1]))
        else:
            coop.store(block, tails_out, numba_coop.discontinuity(block, items, mode="tails", flag_op=op))

    return kernel


@pytest.mark.parametrize("mode,call", [
    ("heads", "FlagHeads(heads, in, {f})"), ("tails", "FlagTails(tails, in, {f})"),
    ("heads_and_tails", "FlagHeadsAndTails(heads, tails, in, {f})")])
@pytest.mark.parametrize("op", [far_apart, device_far_apart], ids=["python", "device"])
def test_flag_op_builds(mode, call, op):
    built = build_kernel(_flags_kernel(op, mode), (I32, I32, I32, I32))
    cpp = built.cpp_source
    symbol = re.search(r"(cuda_coop_discontinuity_\w+)_flag", cpp).group(1)
    assert call.format(f=f"{symbol}_flag{{}}") in cpp
    assert "Inequality" not in cpp and len(_predicate_symbols(cpp)) == 1


@pytest.mark.parametrize("mode", ["heads", "tails", "heads_and_tails"])
def test_flag_op_with_boundary_items_builds(mode):
    built = build_kernel(_flags_kernel(far_apart, mode, True, True), (F32, I32, I32, F32))
    assert "predecessor" in built.cpp_source and "_flag{}" in built.cpp_source


@pytest.mark.parametrize("value,shown", [("not_equal_to", "'not_equal_to'"), (max, "<built-in function max>")])
def test_flag_op_must_be_a_function(value, shown):
    expect_compile_error(_flags_kernel(value, "heads"), (I32, I32, I32, I32), coop.CoopTypeError,
                         f"cuda.coop.numba_mlir.discontinuity flag_op must be a Python/device function; got {shown}",
                         exact_class=True)


def test_flag_op_that_does_not_compile_is_c14():
    expect_compile_error(_flags_kernel(not_compilable, "tails"), (I32, I32, I32, I32), coop.CoopTypeError,
                         "cuda.coop.numba_mlir.discontinuity flag_op not_compilable could not be "
                         "compiled for (int32, int32)", exact_class=True)


def test_flag_op_defined_in_the_kernel_is_c16():
    @cuda.jit
    def kernel(src, dst):
        def inner(a, b):
            return a != b

        items = coop.ThreadData(2)
        coop.load(coop.this_block(), src, items)
        coop.store(coop.this_block(), dst, numba_coop.discontinuity(coop.this_block(), items, flag_op=inner))

    expect_compile_error(kernel, (I32, I32), coop.CoopTypeError,
                         "cuda.coop.numba_mlir.discontinuity flag_op "
                         "test_flag_op_defined_in_the_kernel_is_c16.<locals>.kernel.<locals>.inner is defined inside "
                         "the kernel; define operator callables at module scope", exact_class=True)


def test_common_discontinuity_flag_op_is_c3():
    @cuda.jit
    def kernel(src, dst):
        items = coop.ThreadData(2)
        coop.load(coop.this_block(), src, items)
        coop.store(coop.this_block(), dst, coop.discontinuity(coop.this_block(), items, flag_op=far_apart))

    expect_compile_error(kernel, (I32, I32), coop.CoopValueError,
                         "cuda.coop.discontinuity flag_op far_apart requires cuda.coop.numba_mlir; the common API "
                         "accepts: mode, tile_predecessor_item, tile_successor_item, temp_storage", exact_class=True)


# ---------------------------------------------------------------------------- radix_rank exclusive_digit_prefix


def _rank_kernel(bits, extent, descending=False, dtype=None):
    @cuda.jit
    def kernel(src, ranks_out, prefix_out):
        block = coop.this_block()
        keys = coop.ThreadData(2)
        coop.load(block, src, keys)
        prefix = coop.ThreadData(extent, dtype=dtype)
        ranks = numba_coop.radix_rank(block, keys, begin_bit=3, radix_bits=bits, descending=descending,
                                      exclusive_digit_prefix=prefix)
        coop.store(block, ranks_out, ranks)
        coop.store(block, prefix_out, prefix)

    return kernel


@pytest.mark.parametrize("threads", [32, 128])
@pytest.mark.parametrize("bits", [1, 5, 8])
@pytest.mark.parametrize("descending", [False, True])
def test_exclusive_digit_prefix_builds(threads, bits, descending):
    extent = -(-(1 << bits) // threads)
    built = build_kernel(_rank_kernel(bits, extent, descending), (U32, I32, I32), block=threads)
    cpp = built.cpp_source
    assert f"static_assert(Algo::BINS_TRACKED_PER_THREAD == {extent}" in cpp
    assert f"algo.RankKeys(bits, ranks, cub::BFEDigitExtractor<unsigned int>(3, {bits}), prefix);" in cpp


def test_exclusive_digit_prefix_of_scalar_keys_is_written():
    """The scalar-key form (one key a thread, SPEC 9.1) passes the prefix payload to CUB too: it was dropped, and the
    payload stayed unwritten."""
    @cuda.jit
    def kernel(src, ranks_out, prefix_out):
        block = coop.this_block()
        prefix = coop.ThreadData(2)
        rank = numba_coop.radix_rank(block, src[block.rank()], begin_bit=3, radix_bits=7, exclusive_digit_prefix=prefix)
        coop.store(block, ranks_out, rank)
        coop.store(block, prefix_out, prefix)

    cpp = build_kernel(kernel, (U32, I32, I32), block=64).cpp_source
    assert "algo.RankKeys(bits, ranks, cub::BFEDigitExtractor<unsigned int>(3, 7), prefix);" in cpp
    assert re.search(r'extern "C" __device__ int \w+\(unsigned int key, int\* digit_prefix, char\* scratch', cpp)


def test_exclusive_digit_prefix_with_explicit_int32_and_2d_block():
    build_kernel(_rank_kernel(7, 2, dtype=np.int32), (I32, I32, I32), block=(16, 4, 1))


def test_exclusive_digit_prefix_extent_must_match():
    expect_compile_error(_rank_kernel(8, 1), (U32, I32, I32), coop.CoopValueError,
                         "cuda.coop.numba_mlir.radix_rank exclusive_digit_prefix must have ceil(2**8 / 128) = 2 "
                         "items per thread; got 1", exact_class=True)


def test_exclusive_digit_prefix_dtype_must_be_int32():
    expect_compile_error(_rank_kernel(4, 1, dtype=np.float32), (U32, I32, F32), coop.CoopTypeError,
                         "cuda.coop.numba_mlir.radix_rank does not support exclusive_digit_prefix dtype "
                         "float32; supported: int32", exact_class=True)


def test_exclusive_digit_prefix_must_be_a_payload():
    @cuda.jit
    def kernel(src, dst):
        keys = coop.ThreadData(2)
        coop.load(coop.this_block(), src, keys)
        coop.store(coop.this_block(), dst, numba_coop.radix_rank(coop.this_block(), keys, exclusive_digit_prefix=0))

    expect_compile_error(kernel, (U32, I32), coop.CoopTypeError,
                         "cuda.coop.numba_mlir.radix_rank exclusive_digit_prefix must be a "
                         "ThreadData payload; got a scalar", exact_class=True)


def test_common_radix_rank_exclusive_digit_prefix_is_c3():
    @cuda.jit
    def kernel(src, dst):
        keys = coop.ThreadData(2)
        coop.load(coop.this_block(), src, keys)
        prefix = coop.ThreadData(1, dtype=np.int32)
        coop.store(coop.this_block(), dst, coop.radix_rank(coop.this_block(), keys, exclusive_digit_prefix=prefix))

    expect_compile_error(kernel, (U32, I32), coop.CoopValueError,
                         "cuda.coop.radix_rank exclusive_digit_prefix requires cuda.coop.numba_mlir; the common API "
                         "accepts: begin_bit, end_bit, radix_bits, descending, temp_storage", exact_class=True)
