"""sm_90 builds of run_length_decode / run_length_decode_into without a GPU, and their compile-time errors
(SPEC 8.15)."""
from __future__ import annotations

import numpy as np
import pytest
from numba_cuda_mlir import cuda

import cuda.coop.numba_mlir as numba_coop
from cuda import coop
from cuda.coop._semantics.common import c_type

from compile_helpers import build_kernel, expect_compile_error

VALUE_DTYPES = [np.int8, np.uint8, np.int16, np.int32, np.uint32, np.int64, np.uint64, np.float32, np.float64]
LENGTH_DTYPES = [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64]


def _window_kernel(r=2, d=4, decode=coop.run_length_decode):
    @cuda.jit
    def kernel(values, lengths, dst, offset):
        block = coop.this_block()
        v = coop.ThreadData(r)
        n = coop.ThreadData(r)
        coop.load(block, values, v)
        coop.load(block, lengths, n)
        out = decode(block, v, n, decoded_items_per_thread=d, decoded_window_offset=offset)
        coop.store(block, dst, out)

    return kernel


def _bulk_kernel(r=2, d=4):
    @cuda.jit
    def kernel(values, lengths, dst, offset, totals):
        block = coop.this_block()
        v = coop.ThreadData(r)
        n = coop.ThreadData(r)
        coop.load(block, values, v)
        coop.load(block, lengths, n)
        totals[cuda.threadIdx.x] = coop.run_length_decode_into(block, v, n, dst, decoded_items_per_thread=d,
                                                               destination_offset=offset)

    return kernel


def _window_args(value=np.int32, length=np.int32, offset=0):
    return np.zeros(512, value), np.zeros(512, length), np.zeros(1024, value), offset


def _bulk_args(value=np.int32, length=np.int32, offset=0):
    return np.zeros(512, value), np.zeros(512, length), np.zeros(4096, value), offset, np.zeros(128, np.uint32)


@pytest.mark.parametrize("value", VALUE_DTYPES)
def test_window_builds_for_every_value_dtype(value):
    src = build_kernel(_window_kernel(), _window_args(value)).cpp_source
    assert "cuda_coop::BlockRunLengthDecode<" in src and "table.RunLengthDecode(output, window_offset);" in src


@pytest.mark.parametrize("length", LENGTH_DTYPES)
def test_bulk_builds_for_every_length_dtype(length):
    src = build_kernel(_bulk_kernel(), _bulk_args(np.float64, length)).cpp_source
    # the length type picks the stream checks (include/cuda_coop/block/block_run_length_decode.cuh): only signed
    # lengths can be negative, only 64-bit lengths exceed uint32 alone
    assert f"cuda_coop::BlockRunLengthDecode<double, {c_type(np.dtype(length).name)}, unsigned int, 128, 2, 4>" in src
    assert "table.RunLengthDecodeInto(destination, capacity, destination_offset);" in src


@pytest.mark.parametrize("r, d", [(1, 1), (4, 3), (8, 16)])
def test_runs_and_decoded_items_per_thread(r, d):
    built = build_kernel(_window_kernel(r, d), (np.zeros(2048, np.int32), np.zeros(2048, np.int32),
                                                np.zeros(4096, np.int32), 0))
    assert f"cuda_coop::BlockRunLengthDecode<int, int, unsigned int, 128, {r}, {d}>" in built.cpp_source


def test_table_costs_one_barrier_less_than_cubs_lengths_constructor():
    """The scan storage sits beside the table (no union): scan, table barrier, reuse barrier."""
    built = build_kernel(_bulk_kernel(), _bulk_args())
    assert "cuda_coop::BlockRunLengthDecode<" in built.cpp_source
    assert built.sass().count("BAR.SYNC") <= 4


def test_static_offsets_become_constants():
    @cuda.jit
    def kernel(values, lengths, dst):
        block = coop.this_block()
        v = coop.ThreadData(2)
        n = coop.ThreadData(2)
        coop.load(block, values, v)
        coop.load(block, lengths, n)
        coop.store(block, dst, coop.run_length_decode(block, v, n, decoded_items_per_thread=2, decoded_window_offset=9))

    build_kernel(kernel, _window_args()[:3])


def test_explicit_temp_storage_has_no_reuse_barrier():
    @cuda.jit
    def kernel(values, lengths, dst):
        block = coop.this_block()
        temp = coop.TempStorage()
        v = coop.ThreadData(2)
        n = coop.ThreadData(2)
        coop.load(block, values, v)
        coop.load(block, lengths, n)
        coop.run_length_decode_into(block, v, n, dst, decoded_items_per_thread=4, temp_storage=temp)

    built = build_kernel(kernel, _bulk_args()[:3])
    provider = next(p for p in built.cpp_source.split('extern "C"')
                    if "BlockRunLengthDecode" in p and "unsigned int cuda" in p)
    assert "reuse barrier" not in provider


def test_qualified_namespace_builds():
    build_kernel(_window_kernel(decode=numba_coop.run_length_decode), _window_args())


# ------------------------------------------------------------------------------------------------ errors


def test_extents_differ_is_p7():
    @cuda.jit
    def kernel(values, lengths, dst):
        block = coop.this_block()
        v = coop.ThreadData(2)
        n = coop.ThreadData(4)
        coop.load(block, values, v)
        coop.load(block, lengths, n)
        coop.store(block, dst, coop.run_length_decode(block, v, n, decoded_items_per_thread=2))

    expect_compile_error(kernel, _window_args()[:3], coop.CoopValueError,
                         "cuda.coop.run_length_decode run_values and run_lengths must have the same "
                         "items_per_thread (2 != 4)")


@pytest.mark.parametrize("length", [np.float32, np.float64])
def test_float_lengths_are_p2(length):
    expect_compile_error(_window_kernel(), _window_args(np.int32, length), coop.CoopTypeError,
                         "cuda.coop.run_length_decode does not support run_lengths dtype "
                         f"{np.dtype(length).name}; supported: int8")


@pytest.mark.parametrize("d, cls, fragment", [
    (0, coop.CoopValueError, "decoded_items_per_thread must be positive; got 0"),
    (-2, coop.CoopValueError, "decoded_items_per_thread must be positive; got -2"),
    (2.5, coop.CoopTypeError, "decoded_items_per_thread must be a compile-time integer"),
])
def test_bad_decoded_items_per_thread(d, cls, fragment):
    expect_compile_error(_window_kernel(d=d), _window_args(), cls, f"cuda.coop.run_length_decode {fragment}")


def test_missing_decoded_items_per_thread():
    @cuda.jit
    def kernel(values, lengths, dst):
        block = coop.this_block()
        v = coop.ThreadData(2)
        n = coop.ThreadData(2)
        coop.load(block, values, v)
        coop.load(block, lengths, n)
        coop.store(block, dst, coop.run_length_decode(block, v, n))

    expect_compile_error(kernel, _window_args()[:3], coop.CoopTypeError, "decoded_items_per_thread")


def test_runtime_decoded_items_per_thread_is_c4():
    @cuda.jit
    def kernel(values, lengths, dst, d):
        block = coop.this_block()
        v = coop.ThreadData(2)
        n = coop.ThreadData(2)
        coop.load(block, values, v)
        coop.load(block, lengths, n)
        coop.run_length_decode_into(block, v, n, dst, decoded_items_per_thread=d)

    expect_compile_error(kernel, (*_bulk_args()[:3], np.float32(2.0)), coop.CoopTypeError, "decoded_items_per_thread")


@pytest.mark.parametrize("form", ["window", "into"])
def test_negative_static_offset_is_c8_naming_the_parameter(form):
    @cuda.jit
    def kernel(values, lengths, dst):
        block = coop.this_block()
        v = coop.ThreadData(2)
        n = coop.ThreadData(2)
        coop.load(block, values, v)
        coop.load(block, lengths, n)
        if form == "into":
            coop.run_length_decode_into(block, v, n, dst, decoded_items_per_thread=2, destination_offset=-3)
        else:
            coop.store(block, dst, coop.run_length_decode(block, v, n, decoded_items_per_thread=2,
                                                          decoded_window_offset=-3))

    name, param = ("run_length_decode_into", "destination_offset") if form == "into" else \
        ("run_length_decode", "decoded_window_offset")
    expect_compile_error(kernel, _bulk_args()[:3], coop.CoopValueError,
                         f"cuda.coop.{name} static {param} must be nonnegative; got -3")


@pytest.mark.parametrize("offset", [np.uint64(1), np.float64(1.0)])
def test_runtime_offset_dtype_is_c6(offset):
    expect_compile_error(_window_kernel(), _window_args(offset=offset), coop.CoopTypeError,
                         "cuda.coop.run_length_decode decoded_window_offset must be a signed "
                         "integer of at most 64 bits")


def test_destination_dtype_is_p10():
    args = list(_bulk_args())
    args[2] = np.zeros(4096, np.int64)
    expect_compile_error(_bulk_kernel(), tuple(args), coop.CoopTypeError,
                         "cuda.coop.run_length_decode_into destination dtype int64 does not match payload dtype int32")


def test_two_dimensional_destination_is_p11():
    args = list(_bulk_args())
    args[2] = np.zeros((64, 64), np.int32)
    expect_compile_error(_bulk_kernel(), tuple(args), coop.CoopTypeError,
                         "cuda.coop.run_length_decode_into destination must be a one-dimensional contiguous array")


def test_warp_group_is_g3():
    @cuda.jit
    def kernel(values, lengths, dst):
        v = coop.ThreadData(2)
        n = coop.ThreadData(2)
        coop.load(coop.this_block(), values, v)
        coop.load(coop.this_block(), lengths, n)
        out = coop.run_length_decode(coop.this_warp(), v, n, decoded_items_per_thread=2)
        coop.store(coop.this_block(), dst, out)

    expect_compile_error(kernel, _window_args()[:3], coop.CoopUnsupportedError,
                         "cuda.coop.run_length_decode does not support group kind 'warp'; supported group kinds: block")


def test_two_dimensional_block_is_rejected():
    expect_compile_error(_window_kernel(), _window_args(), coop.CoopUnsupportedError,
                         "cuda.coop.run_length_decode requires a one-dimensional block; block shape is (32, 4, 1)",
                         block=(32, 4))


def test_array_operand_in_the_common_api_is_p4():
    @cuda.jit
    def kernel(values, lengths, dst):
        block = coop.this_block()
        n = coop.ThreadData(2)
        coop.load(block, lengths, n)
        coop.run_length_decode_into(block, values, n, dst, decoded_items_per_thread=2)

    expect_compile_error(kernel, _bulk_args()[:3], coop.CoopTypeError,
                         "cuda.coop.run_length_decode_into requires a fixed-size ThreadData run_values "
                         "payload in the common API")


def test_qualified_option_in_a_common_call_is_c3():
    @cuda.jit
    def kernel(values, lengths, dst):
        block = coop.this_block()
        v = coop.ThreadData(2)
        n = coop.ThreadData(2)
        coop.load(block, values, v)
        coop.load(block, lengths, n)
        total = coop.ThreadData(1, dtype=np.uint32)
        out = coop.run_length_decode(block, v, n, decoded_items_per_thread=2, total_decoded_size=total)
        coop.store(block, dst, out)

    expect_compile_error(kernel, _window_args()[:3], coop.CoopValueError,
                         "cuda.coop.run_length_decode total_decoded_size requires cuda.coop.numba_mlir")


@pytest.mark.parametrize("option", ["relative_offsets", "decoded_offset_dtype"])
def test_other_qualified_options_in_common_calls_are_c3(option):
    @cuda.jit
    def kernel(values, lengths, dst):
        block = coop.this_block()
        v = coop.ThreadData(2)
        n = coop.ThreadData(2)
        coop.load(block, values, v)
        coop.load(block, lengths, n)
        rel = coop.ThreadData(2, dtype=np.uint32)
        if option == "relative_offsets":
            out = coop.run_length_decode(block, v, n, decoded_items_per_thread=2, relative_offsets=rel)
        else:
            out = coop.run_length_decode(block, v, n, decoded_items_per_thread=2, decoded_offset_dtype=np.uint64)
        coop.store(block, dst, out)

    expect_compile_error(kernel, _window_args()[:3], coop.CoopValueError, f"cuda.coop.run_length_decode {option}")


# ------------------------------------------------------------------------------------------------ qualified (9.10)


def _qualified_window(offset_dtype=None, total_dtype=None, relative_dtype=None, relative_items=4, total_items=1):
    @cuda.jit
    def kernel(values, lengths, dst, rel_out, total_out, offset):
        block = coop.this_block()
        v = coop.ThreadData(2)
        n = coop.ThreadData(2)
        coop.load(block, values, v)
        coop.load(block, lengths, n)
        total = coop.ThreadData(total_items, dtype=total_dtype)
        rel = coop.ThreadData(relative_items, dtype=relative_dtype)
        out = numba_coop.run_length_decode(block, v, n, decoded_items_per_thread=4, decoded_window_offset=offset,
                                           total_decoded_size=total, relative_offsets=rel,
                                           decoded_offset_dtype=offset_dtype)
        coop.store(block, dst, out)
        coop.store(block, rel_out, rel)
        coop.store(block, total_out, total)

    return kernel


def _qualified_window_args(offset_dtype=np.uint32):
    return (np.zeros(512, np.int32), np.zeros(512, np.int32), np.zeros(1024, np.int32), np.zeros(1024, offset_dtype),
            np.zeros(128, offset_dtype), 0)


@pytest.mark.parametrize("offset_dtype", [None, np.uint32, np.uint64])
def test_qualified_window_with_total_and_relative_offsets(offset_dtype):
    built = build_kernel(_qualified_window(offset_dtype), _qualified_window_args(offset_dtype or np.uint32))
    c = "unsigned long long" if offset_dtype is np.uint64 else "unsigned int"
    assert f"cuda_coop::BlockRunLengthDecode<int, int, {c}, 128, 2, 4>" in built.cpp_source
    assert f"{c}* total_decoded_size" in built.cpp_source and f"{c}* relative_offsets" in built.cpp_source


def test_qualified_bulk_with_relative_destination_returns_uint64():
    @cuda.jit
    def kernel(values, lengths, dst, rel, totals):
        block = coop.this_block()
        v = coop.ThreadData(2)
        n = coop.ThreadData(2)
        coop.load(block, values, v)
        coop.load(block, lengths, n)
        totals[cuda.threadIdx.x] = numba_coop.run_length_decode_into(
            block, v, n, dst, decoded_items_per_thread=2, decoded_offset_dtype=np.uint64,
            relative_offsets_destination=rel)

    built = build_kernel(kernel, (np.zeros(512, np.int32), np.zeros(512, np.int64), np.zeros(4096, np.int32),
                                  np.zeros(4096, np.uint64), np.zeros(128, np.uint64)))
    assert 'extern "C" __device__ unsigned long long' in built.cpp_source
    assert ("RunLengthDecodeInto(destination, capacity, relative_destination, relative_capacity, destination_offset)"
            in built.cpp_source)


@pytest.mark.parametrize("kwargs, cls, fragment", [
    ({"total_items": 2}, coop.CoopValueError, "total_decoded_size must be a ThreadData of one item; got 2 items"),
    ({"relative_items": 3}, coop.CoopValueError, "relative_offsets must have decoded_items_per_thread items (3 != 4)"),
    ({"relative_dtype": np.int32}, coop.CoopTypeError,
     "relative_offsets dtype int32 does not match decoded_offset_dtype uint32"),
    ({"offset_dtype": np.uint64, "total_dtype": np.uint32}, coop.CoopTypeError,
     "does not support total_decoded_size dtype uint32 with decoded_offset_dtype uint64; supported: uint64"),
    ({"offset_dtype": np.int64}, coop.CoopTypeError,
     "does not support decoded_offset_dtype int64; supported: uint32, uint64"),
    # a dtype named by a string is P12, as ThreadData's (it was 'uint64' unsupported, with uint64 listed)
    ({"offset_dtype": "uint64"}, coop.CoopTypeError,
     "decoded_offset_dtype must be a NumPy scalar type, not the string 'uint64': pass np.uint64"),
])
def test_qualified_option_mistakes(kwargs, cls, fragment):
    args = list(_qualified_window_args())
    offsets = np.uint64 if kwargs.get("offset_dtype") is np.uint64 else np.uint32
    args[3] = np.zeros(1024, kwargs.get("relative_dtype", offsets))  # the stores agree with the payloads
    args[4] = np.zeros(128, kwargs.get("total_dtype", np.uint32))
    expect_compile_error(_qualified_window(**kwargs), tuple(args), cls,
                         f"cuda.coop.numba_mlir.run_length_decode {fragment}")


def test_relative_destination_dtype_must_be_the_offset_dtype():
    @cuda.jit
    def kernel(values, lengths, dst, rel):
        block = coop.this_block()
        v = coop.ThreadData(2)
        n = coop.ThreadData(2)
        coop.load(block, values, v)
        coop.load(block, lengths, n)
        numba_coop.run_length_decode_into(block, v, n, dst, decoded_items_per_thread=2,
                                          relative_offsets_destination=rel)

    expect_compile_error(kernel, (*_bulk_args()[:3], np.zeros(4096, np.int64)), coop.CoopTypeError,
                         "cuda.coop.numba_mlir.run_length_decode_into relative_offsets_destination dtype int64 does "
                         "not match decoded_offset_dtype uint32")
