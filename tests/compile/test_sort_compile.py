"""sm_90 builds of merge sort and radix sort without a GPU, and their compile-time errors (SPEC 8.8, 8.9, 9.8)."""
from __future__ import annotations

import numpy as np
import pytest

import cuda.coop.numba_mlir as numba_coop
from cuda import coop
from numba_cuda_mlir import cuda

from compile_helpers import build_kernel, expect_compile_error

I32 = np.zeros(1024, np.int32)
U64 = np.zeros(1024, np.uint64)
F32 = np.zeros(1024, np.float32)
I16 = np.zeros(1024, np.int16)


@pytest.mark.parametrize("width", [0, 32, 16])
def test_merge_sort_builds_with_scratch(width):
    @cuda.jit
    def kernel(src, dst):
        block = coop.this_block()
        group = coop.this_block() if width == 0 else (coop.this_warp() if width == 32
                                                      else coop.this_warp().group_by(width))
        keys = coop.ThreadData(4)
        coop.load(block, src, keys)
        coop.store(block, dst, coop.merge_sort_keys(group, keys))

    built = build_kernel(kernel, (I32, I32))
    assert built.metadata["scratch_bytes"] > 0
    assert "BlockMergeSort" in built.cpp_source if width == 0 else "WarpMergeSort" in built.cpp_source


def test_radix_sort_runtime_bits_build_with_range_traps():
    @cuda.jit
    def kernel(src, dst, begin, end):
        block = coop.this_block()
        keys = coop.ThreadData(2)
        coop.load(block, src, keys)
        coop.store(block, dst, coop.radix_sort_keys(block, keys, begin_bit=begin, end_bit=end, descending=True))

    built = build_kernel(kernel, (U64, U64, np.int32(0), np.int32(64)))
    assert "SortDescending(out, (int)begin_bit, (int)end_bit)" in built.cpp_source
    assert "check_range(end_bit, begin_bit + 1, 64)" in built.cpp_source
    assert "BPT.TRAP" in built.sass()  # the range checks trap on the device


def test_merge_sort_needs_power_of_two_block():
    @cuda.jit
    def kernel(src, dst):
        keys = coop.ThreadData(2)
        coop.load(coop.this_block(), src, keys)
        coop.store(coop.this_block(), dst, coop.merge_sort_keys(coop.this_block(), keys))

    expect_compile_error(kernel, (I32, I32), coop.CoopUnsupportedError,
                         "cuda.coop.merge_sort_keys requires a power-of-two thread count; block shape is (96, 1, 1)",
                         block=96)


def test_merge_sort_partial_options_come_together():
    @cuda.jit
    def kernel(src, dst, n):
        keys = coop.ThreadData(2)
        coop.load(coop.this_block(), src, keys)
        coop.store(coop.this_block(), dst, coop.merge_sort_keys(coop.this_block(), keys, valid_items=n))

    expect_compile_error(kernel, (I32, I32, np.int32(3)), coop.CoopValueError,
                         "valid_items and oob_default must be provided together")


def test_merge_sort_static_valid_items_range():
    @cuda.jit
    def kernel(src, dst):
        keys = coop.ThreadData(2)
        coop.load(coop.this_block(), src, keys)
        out = coop.merge_sort_keys(coop.this_block(), keys, valid_items=257, oob_default=0)
        coop.store(coop.this_block(), dst, out)

    expect_compile_error(kernel, (I32, I32), coop.CoopValueError,
                         "cuda.coop.merge_sort_keys static valid_items must be between 0 and 256; got 257")


def test_descending_must_be_compile_time_bool():
    @cuda.jit
    def kernel(src, dst, flag):
        keys = coop.ThreadData(2)
        coop.load(coop.this_block(), src, keys)
        coop.store(coop.this_block(), dst, coop.merge_sort_keys(coop.this_block(), keys, descending=flag))

    expect_compile_error(kernel, (I32, I32, True), coop.CoopTypeError,
                         "cuda.coop.merge_sort_keys descending must be a compile-time bool")


def test_oob_default_numpy_constant_must_match_the_keys():
    wrong = np.int64(7)

    @cuda.jit
    def kernel(src, dst):
        keys = coop.ThreadData(2)
        coop.load(coop.this_block(), src, keys)
        out = coop.merge_sort_keys(coop.this_block(), keys, valid_items=3, oob_default=wrong)
        coop.store(coop.this_block(), dst, out)

    expect_compile_error(kernel, (I32, I32), coop.CoopTypeError,
                         "cuda.coop.merge_sort_keys oob_default must have the payload dtype int32; got int64; cast it")


def test_radix_sort_is_block_only():
    @cuda.jit
    def kernel(src, dst):
        keys = coop.ThreadData(2)
        coop.load(coop.this_warp(), src, keys)
        coop.store(coop.this_warp(), dst, coop.radix_sort_keys(coop.this_warp(), keys))

    expect_compile_error(kernel, (I32, I32), coop.CoopUnsupportedError,
                         "cuda.coop.radix_sort_keys does not support group kind 'warp'; supported group kinds: block")


def test_radix_sort_float_keys_need_the_qualified_api():
    @cuda.jit
    def kernel(src, dst):
        keys = coop.ThreadData(2)
        coop.load(coop.this_block(), src, keys)
        coop.store(coop.this_block(), dst, coop.radix_sort_keys(coop.this_block(), keys))

    expect_compile_error(kernel, (F32, F32), coop.CoopTypeError,
                         "cuda.coop.radix_sort_keys supports keys dtypes int32, uint32, int64, uint64 through the "
                         "common API; use cuda.coop.numba_mlir for float32")


def test_radix_sort_rejects_small_integer_keys():
    @cuda.jit
    def kernel(src, dst):
        keys = coop.ThreadData(2)
        coop.load(coop.this_block(), src, keys)
        coop.store(coop.this_block(), dst, numba_coop.radix_sort_keys(coop.this_block(), keys))

    expect_compile_error(kernel, (I16, I16), coop.CoopTypeError,
                         "cuda.coop.numba_mlir.radix_sort_keys does not support keys dtype int16; supported: int32, "
                         "uint32, int64, uint64, float16, float32, float64")


@pytest.mark.parametrize("begin,end,message", [
    (32, None, "static begin_bit must be between 0 and 31; got 32"),
    (4, 4, "static end_bit must be between 5 and 32; got 4"),
    (0, 33, "static end_bit must be between 1 and 32; got 33"),
])
def test_radix_sort_static_bit_bounds(begin, end, message):
    @cuda.jit
    def kernel(src, dst):
        keys = coop.ThreadData(2)
        coop.load(coop.this_block(), src, keys)
        coop.store(coop.this_block(), dst, coop.radix_sort_keys(coop.this_block(), keys, begin_bit=begin, end_bit=end))

    expect_compile_error(kernel, (I32, I32), coop.CoopValueError, f"cuda.coop.radix_sort_keys {message}")


def test_qualified_options_in_common_calls_are_c3():
    @cuda.jit
    def kernel(src, dst):
        keys = coop.ThreadData(2)
        coop.load(coop.this_block(), src, keys)
        coop.store(coop.this_block(), dst, coop.radix_sort_keys(coop.this_block(), keys, blocked_to_striped=True))

    expect_compile_error(kernel, (I32, I32), coop.CoopValueError,
                         "cuda.coop.radix_sort_keys blocked_to_striped True requires cuda.coop.numba_mlir; the common "
                         "API accepts: begin_bit, end_bit, descending, valid_items, oob_default, temp_storage")


def test_compare_op_with_descending_is_o13():
    @cuda.jit
    def kernel(src, dst):
        keys = coop.ThreadData(2)
        coop.load(coop.this_block(), src, keys)
        out = numba_coop.merge_sort_keys(coop.this_block(), keys, descending=True, compare_op=max)
        coop.store(coop.this_block(), dst, out)

    expect_compile_error(kernel, (I32, I32), coop.CoopValueError,
                         "cuda.coop.numba_mlir.merge_sort_keys compare_op cannot be combined with descending=True")


def test_warp_merge_sort_rejects_descriptors():
    @cuda.jit
    def kernel(src, dst):
        temp = coop.TempStorage()
        keys = coop.ThreadData(2)
        coop.load(coop.this_block(), src, keys)
        out = coop.merge_sort_keys(coop.this_warp(), keys, temp_storage=temp)
        coop.store(coop.this_block(), dst, out)

    expect_compile_error(kernel, (I32, I32), coop.CoopValueError, "does not accept temp_storage for warp groups")


def test_pairs_unpack_into_two_payloads():
    @cuda.jit
    def kernel(keys_in, values_in, keys_out, values_out):
        block = coop.this_block()
        keys = coop.ThreadData(4)
        values = coop.ThreadData(4)
        coop.load(block, keys_in, keys)
        coop.load(block, values_in, values)
        k, v = coop.radix_sort_pairs(block, keys, values)
        both = coop.merge_sort_pairs(coop.this_warp(), k, v, descending=True)
        coop.store(block, keys_out, both[0])
        coop.store(block, values_out, both[1])

    built = build_kernel(kernel, (I32, F32, I32, F32))
    source = built.cpp_source
    assert "cub::BlockRadixSort<int, 128, 4, float," in source and "cub::WarpMergeSort<int, 4, 32, float>" in source


def test_pairs_need_equal_extents():
    @cuda.jit
    def kernel(src, dst):
        keys = coop.ThreadData(2)
        values = coop.ThreadData(4)
        coop.load(coop.this_block(), src, keys)
        coop.load(coop.this_block(), src, values)
        k, v = coop.merge_sort_pairs(coop.this_block(), keys, values)
        coop.store(coop.this_block(), dst, k)

    expect_compile_error(kernel, (I32, I32), coop.CoopValueError,
                         "cuda.coop.merge_sort_pairs keys and values must have the same items_per_thread (2 != 4)")


def test_pair_results_cannot_escape():
    @cuda.jit
    def kernel(src, dst, out):
        keys = coop.ThreadData(2)
        coop.load(coop.this_block(), src, keys)
        both = coop.merge_sort_pairs(coop.this_block(), keys, keys)
        kept = (both, 1)
        out[0] = kept[1]
        coop.store(coop.this_block(), dst, both[0])

    expect_compile_error(kernel, (I32, I32, I32), coop.CoopTypeError, "escapes to runtime")


@pytest.mark.parametrize("begin,end,radix_bits,message", [
    (0, None, 0, "radix_bits must be positive"),
    (2, 6, 3, "radix_bits must match end_bit - begin_bit"),
    (0, 9, None, "radix_rank bit width must be <= 8"),
    (30, None, 4, "cuda.coop.radix_rank static end_bit must be between 31 and 32; got 34"),
])
def test_radix_rank_bit_bounds_are_o10(begin, end, radix_bits, message):
    @cuda.jit
    def kernel(src, dst):
        keys = coop.ThreadData(2)
        coop.load(coop.this_block(), src, keys)
        ranks = coop.radix_rank(coop.this_block(), keys, begin_bit=begin, end_bit=end, radix_bits=radix_bits)
        coop.store(coop.this_block(), dst, ranks)

    expect_compile_error(kernel, (I32, I32), coop.CoopValueError, message)


def test_radix_rank_bits_must_be_compile_time():
    @cuda.jit
    def kernel(src, dst, bits):
        keys = coop.ThreadData(2)
        coop.load(coop.this_block(), src, keys)
        coop.store(coop.this_block(), dst, coop.radix_rank(coop.this_block(), keys, radix_bits=bits))

    expect_compile_error(kernel, (I32, I32, np.float32(3)), coop.CoopTypeError,
                         "cuda.coop.radix_rank radix_bits must be a compile-time integer")


def test_topk_needs_a_one_dimensional_block():
    @cuda.jit
    def kernel(src, dst):
        keys = coop.ThreadData(2)
        coop.load(coop.this_block(), src, keys)
        coop.store(coop.this_block(), dst, coop.topk_max_keys(coop.this_block(), keys, k=3))

    expect_compile_error(kernel, (I32, I32), coop.CoopUnsupportedError,
                         "cuda.coop.topk_max_keys requires a one-dimensional block; block shape is (32, 4, 1)",
                         block=(32, 4))


def test_topk_static_k_range():
    @cuda.jit
    def kernel(src, dst):
        keys = coop.ThreadData(2)
        coop.load(coop.this_block(), src, keys)
        coop.store(coop.this_block(), dst, coop.topk_min_keys(coop.this_block(), keys, k=257))

    expect_compile_error(kernel, (I32, I32), coop.CoopValueError,
                         "cuda.coop.topk_min_keys static k must be between 0 and 256; got 257")


def test_topk_requires_k():
    @cuda.jit
    def kernel(src, dst):
        keys = coop.ThreadData(2)
        coop.load(coop.this_block(), src, keys)
        coop.store(coop.this_block(), dst, coop.topk_min_keys(coop.this_block(), keys))

    expect_compile_error(kernel, (I32, I32), coop.CoopTypeError, "missing a required argument: 'k'")


def test_topk_pads_invalid_keys_with_the_key_that_sorts_last():
    @cuda.jit
    def kernel(src, dst, valid):
        keys = coop.ThreadData(2)
        coop.load(coop.this_block(), src, keys)
        coop.store(coop.this_block(), dst, coop.topk_min_keys(coop.this_block(), keys, k=3, valid_items=valid))

    built = build_kernel(kernel, (F32, F32, np.int32(5)))
    assert "bit_cast<float>((unsigned int)0x7fffffffull)" in built.cpp_source  # ordered all-ones: sorts last


def test_pair_results_merged_across_branches_ask_for_unpacking():
    """A variable holding the (keys, values) tuples of two calls: unpack where they are made (then P15 merges)."""
    @cuda.jit
    def kernel(src, dst, flag):
        block = coop.this_block()
        keys = coop.ThreadData(2)
        coop.load(block, src, keys)
        if flag > 0:
            both = coop.radix_sort_pairs(block, keys, keys, descending=True)
        else:
            both = coop.radix_sort_pairs(block, keys, keys)
        coop.store(block, dst, both[1])

    expect_compile_error(kernel, (I32, I32, np.int32(1)), coop.CoopTypeError,
                         "variable both may refer to the tuples of several calls; unpack each call's "
                         "result where it is made")

    @cuda.jit
    def unpacked(src, dst, flag):
        block = coop.this_block()
        keys = coop.ThreadData(2)
        coop.load(block, src, keys)
        if flag > 0:
            k, v = coop.radix_sort_pairs(block, keys, keys, descending=True)
        else:
            k, v = coop.radix_sort_pairs(block, keys, keys)
        coop.store(block, dst, v)

    built = build_kernel(unpacked, (I32, I32, np.int32(1)))  # P15: one array for v, no local memory
    assert built.cpp_source.count("cub::BlockRadixSort<") >= 2


def test_typing_time_checks_of_computed_controls():
    """Controls the planner cannot see (computed values) are checked when the call is typed: C6 and C9."""
    @cuda.jit
    def bits_from_float(src, dst, x):
        keys = coop.ThreadData(2)
        coop.load(coop.this_block(), src, keys)
        coop.store(coop.this_block(), dst, coop.radix_sort_keys(coop.this_block(), keys, end_bit=x * 2.0))

    expect_compile_error(bits_from_float, (I32, I32, np.float64(8)), coop.CoopTypeError,
                         "cuda.coop.radix_sort_keys end_bit must be a signed integer of at most 64 bits or an "
                         "unsigned integer of at most 32 bits; got float64")

    @cuda.jit
    def oob_from_float(src, dst, x):
        keys = coop.ThreadData(2)
        coop.load(coop.this_block(), src, keys)
        out = coop.merge_sort_keys(coop.this_block(), keys, valid_items=3, oob_default=x * 2.0)
        coop.store(coop.this_block(), dst, out)

    expect_compile_error(oob_from_float, (I32, I32, np.float64(8)), coop.CoopTypeError,
                         "cuda.coop.merge_sort_keys oob_default must have the payload dtype "
                         "int32; got float64; cast it")


# ---------------------------------------------------------------------------- radix sort of a partial tile (SPEC 8.23)


def _radix_provider(built):
    return next(part for part in built.cpp_source.split('extern "C"') if "BlockRadixSort<" in part)


def test_radix_sort_partial_tile_pads_a_private_copy_and_fills_the_tail():
    @cuda.jit
    def kernel(src, vals, dst, vdst, n, oob):
        block = coop.this_block()
        keys = coop.ThreadData(2)
        values = coop.ThreadData(2)
        coop.load(block, src, keys)
        coop.load(block, vals, values)
        k, v = coop.radix_sort_pairs(block, keys, values, descending=True, begin_bit=3, valid_items=n,
                                     oob_default=oob)
        coop.store(block, dst, k)
        coop.store(block, vdst, v)

    built = build_kernel(kernel, (I32, F32, I32, F32, np.int32(5), np.int32(-1)), block=(8, 4, 2))
    provider = _radix_provider(built)
    assert "long long valid_items, int oob_default" in provider
    assert "cuda_coop::check_range(valid_items, 0, 128);" in provider
    # descending: the ordered representation all zeros (int32: the sign bit alone), in blocked positions of 3-D blocks
    assert "bit_cast<int>((unsigned int)0x80000000ull);" in provider
    rank = "cuda_coop::linear_rank<8, 4, 2>()"
    padded = provider.index(f"cuda_coop::pad_blocked(out, {rank}, valid_items, padding);")
    sort = provider.index("algo.SortDescending(out, out_values, (int)begin_bit, (int)end_bit);")
    filled = provider.index(f"cuda_coop::pad_blocked(out, {rank}, valid_items, oob_default);")
    assert padded < sort < filled
    assert "BPT.TRAP" in built.sass()


def test_radix_sort_static_valid_items_without_oob_default():
    @cuda.jit
    def kernel(src, dst):
        keys = coop.ThreadData(4)
        coop.load(coop.this_block(), src, keys)
        coop.store(coop.this_block(), dst, coop.radix_sort_keys(coop.this_block(), keys, valid_items=0))

    provider = _radix_provider(build_kernel(kernel, (U64, U64)))
    assert "long long valid_items, char* scratch" in provider  # no oob_default parameter, no tail written
    assert "bit_cast<unsigned long long>((unsigned long long)0xffffffffffffffffull);" in provider
    assert provider.count("pad_blocked") == 1


def test_radix_sort_without_valid_items_is_unchanged():
    @cuda.jit
    def kernel(src, dst):
        keys = coop.ThreadData(4)
        coop.load(coop.this_block(), src, keys)
        coop.store(coop.this_block(), dst, coop.radix_sort_keys(coop.this_block(), keys))

    provider = _radix_provider(build_kernel(kernel, (I32, I32)))
    assert "valid_items" not in provider and "pad_" not in provider


@pytest.mark.parametrize("dtype, padding", [(np.float32, "bit_cast<float>((unsigned int)0x7fffffffull)"),
                                            (np.float64, "bit_cast<double>((unsigned long long)0x7fffffffffffffffull)"),
                                            (np.float16, "bit_cast<__half>((unsigned short)0x7fffull)")])
def test_qualified_float_keys_striped_output_with_a_partial_tile(dtype, padding):
    """Ascending float keys pad with the all-ones ordered key (a NaN); blocked_to_striped fills the tail in sorted,
    that is striped, positions."""
    @cuda.jit
    def kernel(src, dst, n):
        keys = coop.ThreadData(4)
        numba_coop.load(coop.this_block(), src, keys)
        out = numba_coop.radix_sort_keys(coop.this_block(), keys, valid_items=n, oob_default=-1.5,
                                         blocked_to_striped=True)
        numba_coop.store(coop.this_block(), dst, out, algorithm="striped")

    data = np.zeros(1024, dtype)
    provider = _radix_provider(build_kernel(kernel, (data, data, np.int32(9))))
    assert padding in provider
    assert "cuda_coop::pad_striped(out, cuda_coop::linear_rank<128, 1, 1>(), 128u, valid_items, oob_default);" \
        in provider


def test_qualified_scalar_keys_forward_the_partial_tile_controls():
    @cuda.jit
    def kernel(src, vals, dst, vdst, n, oob):
        block = coop.this_block()
        k, v = numba_coop.radix_sort_pairs(block, src[block.rank()], vals[block.rank()], valid_items=n,
                                           oob_default=oob)
        dst[block.rank()] = k
        vdst[block.rank()] = v

    built = build_kernel(kernel, (U64, F32, U64, F32, np.int32(9), np.uint64(7)))
    assert "_items(keys, values, key_out, value_out, begin_bit, end_bit, valid_items, oob_default, scratch, " \
        "stride);" in built.cpp_source
    assert "check_range(valid_items, 0, 128);" in _radix_provider(built)


def test_radix_sort_partial_tile_errors():
    @cuda.jit
    def oob_alone(src, dst):
        keys = coop.ThreadData(4)
        coop.load(coop.this_block(), src, keys)
        coop.store(coop.this_block(), dst, coop.radix_sort_keys(coop.this_block(), keys, oob_default=3))

    expect_compile_error(oob_alone, (I32, I32), coop.CoopValueError,
                         "cuda.coop.radix_sort_keys oob_default requires valid_items")

    @cuda.jit
    def past_the_tile(src, dst):
        keys = coop.ThreadData(4)
        coop.load(coop.this_block(), src, keys)
        coop.store(coop.this_block(), dst, coop.radix_sort_keys(coop.this_block(), keys, valid_items=513))

    expect_compile_error(past_the_tile, (I32, I32), coop.CoopValueError,
                         "cuda.coop.radix_sort_keys static valid_items must be between 0 and 512; got 513")

    @cuda.jit
    def oob_of_another_dtype(src, dst, n, oob):
        keys = coop.ThreadData(4)
        coop.load(coop.this_block(), src, keys)
        out = coop.radix_sort_keys(coop.this_block(), keys, valid_items=n, oob_default=oob)
        coop.store(coop.this_block(), dst, out)

    expect_compile_error(oob_of_another_dtype, (U64, U64, np.int32(3), np.int64(4)), coop.CoopTypeError,
                         "cuda.coop.radix_sort_keys oob_default must have the payload dtype uint64; got int64; "
                         "cast it")

    @cuda.jit
    def computed_oob(src, dst, n):
        keys = coop.ThreadData(4)
        coop.load(coop.this_block(), src, keys)
        out = coop.radix_sort_keys(coop.this_block(), keys, valid_items=n, oob_default=n * 2.0)
        coop.store(coop.this_block(), dst, out)

    expect_compile_error(computed_oob, (I32, I32, np.int32(3)), coop.CoopTypeError,
                         "cuda.coop.radix_sort_keys oob_default must have the payload dtype int32; got float64; "
                         "cast it")

    @cuda.jit
    def uint64_valid_items(src, dst, n):
        keys = coop.ThreadData(4)
        coop.load(coop.this_block(), src, keys)
        coop.store(coop.this_block(), dst, coop.radix_sort_keys(coop.this_block(), keys, valid_items=n))

    expect_compile_error(uint64_valid_items, (I32, I32, np.uint64(3)), coop.CoopTypeError,
                         "cuda.coop.radix_sort_keys valid_items must be a signed integer of at most 64 bits or an "
                         "unsigned integer of at most 32 bits; got uint64")
