"""Corpus: payload and dtype mistakes (SPEC 4, 9.1-9.2, 10.2 P1-P17, R9)."""
from __future__ import annotations

import numpy as np
import pytest

import cuda.coop.numba_mlir as numba_coop
from cuda import coop
from numba_cuda_mlir import cuda

I32 = np.zeros(1024, np.int32)
I16 = np.zeros(1024, np.int16)
F16 = np.zeros(1024, np.float16)
F32 = np.zeros(1024, np.float32)
C64 = np.zeros(1024, np.complex64)


# ------------------------------------------------------------------ P1/P2: dtypes of explicit ThreadData


@cuda.jit
def k_p2_complex64(src, dst):
    block = coop.this_block()
    items = coop.ThreadData(2, dtype=np.complex64)
    coop.load(block, src, items)  # HERE
    coop.store(block, dst, items)


@cuda.jit
def k_p2_bool(src, dst):
    warp = coop.this_warp()
    items = coop.ThreadData(2, dtype=np.bool_)
    numba_coop.load(warp, src, items)  # HERE
    numba_coop.store(warp, dst, items)


@cuda.jit
def k_p2_datetime64(src, dst):
    block = coop.this_block()
    items = coop.ThreadData(1, dtype=np.datetime64)
    coop.load(block, src, items)  # HERE
    coop.store(block, dst, items)


@cuda.jit
def k_p2_complex_payload_int_source(src, dst):
    block = coop.this_block()
    items = coop.ThreadData(2, dtype=np.complex64)
    coop.load(block, src, items)  # HERE
    dst[cuda.threadIdx.x] = 0


@cuda.jit
def k_p1_float16_payload_float_source(src, dst):
    warp = coop.this_warp()
    items = coop.ThreadData(2, dtype=np.float16)
    coop.load(warp, src, items)  # HERE
    dst[cuda.threadIdx.x] = 0


@cuda.jit
def k_p1_float16_common(src, dst):
    block = coop.this_block()
    items = coop.ThreadData(2, dtype=np.float16)
    coop.load(block, src, items)  # HERE
    coop.store(block, dst, items)


@cuda.jit
def k_p1_float16_sum(src, dst):
    block = coop.this_block()
    items = coop.ThreadData(2, dtype=np.float16)
    items[0] = np.float16(src[0])
    items[1] = np.float16(src[1])
    dst[0] = coop.sum(block, items)  # HERE


@cuda.jit
def k_p1_float_radix_keys(src, dst):
    block = coop.this_block()
    keys = coop.ThreadData(2)
    coop.load(block, src, keys)
    out = coop.radix_sort_keys(block, keys)  # HERE
    coop.store(block, dst, out)


@cuda.jit
def k_p2_int16_radix_keys(src, dst):
    block = coop.this_block()
    keys = coop.ThreadData(2)
    coop.load(block, src, keys)
    out = numba_coop.radix_sort_keys(block, keys)  # HERE
    coop.store(block, dst, out)


@cuda.jit
def k_p2_float_radix_rank(src, dst):
    block = coop.this_block()
    keys = coop.ThreadData(2)
    coop.load(block, src, keys)
    ranks = numba_coop.radix_rank(block, keys)  # HERE
    coop.store(block, dst, ranks)


# ------------------------------------------------------------------ P3: bit operators on floats


@cuda.jit
def k_p3_bit_and_float(src, dst):
    dst[0] = coop.reduce(coop.this_block(), src[cuda.threadIdx.x], binary_op="bit_and")  # HERE


@cuda.jit
def k_p3_xor_scan_float(src, dst):
    warp = coop.this_warp()
    dst[cuda.threadIdx.x] = coop.inclusive_scan(warp, src[cuda.threadIdx.x], scan_op="^")  # HERE


# ------------------------------------------------------------------ P4: payload forms


@cuda.jit
def k_p4_local_array_common(src, dst):
    block = coop.this_block()
    items = cuda.local.array(4, np.int32)
    coop.load(block, src, items)  # HERE
    dst[cuda.threadIdx.x] = items[0]



@cuda.jit
def k_p4_shuffle_scalar_common(src, dst):
    block = coop.this_block()
    dst[cuda.threadIdx.x] = coop.shuffle(block, src[cuda.threadIdx.x])  # HERE


@cuda.jit
def k_p5_scalar_keys_payload_values(src, dst):
    block = coop.this_block()
    values = coop.ThreadData(1, dtype=np.int32)
    k, v = numba_coop.radix_sort_pairs(block, src[cuda.threadIdx.x], values)  # HERE
    dst[cuda.threadIdx.x] = k


# ------------------------------------------------------------------ P5: scalar where a payload is required


@cuda.jit
def k_p5_qualified_exchange_scalar(src, dst):
    block = coop.this_block()
    dst[cuda.threadIdx.x] = numba_coop.exchange(block, src[cuda.threadIdx.x])  # HERE


# ------------------------------------------------------------------ P10: explicit payload dtype vs array dtype


@cuda.jit
def k_p10_int64_payload_float32_source(src, dst):
    block = coop.this_block()
    items = coop.ThreadData(2, dtype=np.int64)
    coop.load(block, src, items)  # HERE
    coop.store(block, dst, items)


# ------------------------------------------------------------------ P11: array operands not 1-D contiguous


@cuda.jit
def k_p11_two_dimensional_source(src, dst):
    block = coop.this_block()
    items = coop.ThreadData(2)
    coop.load(block, src, items)  # HERE
    coop.store(block, dst, items)


@cuda.jit
def k_p11_strided_source(src, dst):
    block = coop.this_block()
    items = coop.ThreadData(2)
    coop.load(block, src[::2], items)  # HERE
    coop.store(block, dst, items)


# ------------------------------------------------------------------ items_per_thread from an integer kernel argument


@cuda.jit
def k_items_per_thread_argument(src, dst, n):
    block = coop.this_block()
    items = coop.ThreadData(n)
    coop.load(block, src, items)
    coop.store(block, dst, items)


# ------------------------------------------------------------------ P6: bad items_per_thread


@cuda.jit
def k_p6_negative(src, dst):
    items = coop.ThreadData(-3)  # HERE
    coop.load(coop.this_block(), src, items)
    coop.store(coop.this_block(), dst, items)


@cuda.jit
def k_p6_from_array(src, dst):
    items = coop.ThreadData(src[0])  # HERE
    coop.load(coop.this_block(), src, items)
    coop.store(coop.this_block(), dst, items)


# ------------------------------------------------------------------ P7: operand extents differ


@cuda.jit
def k_p7_merge_pairs(src, dst):
    block = coop.this_block()
    keys = coop.ThreadData(4)
    values = coop.ThreadData(2)
    coop.load(block, src, keys)
    coop.load(block, src, values)
    k, v = coop.merge_sort_pairs(block, keys, values)  # HERE
    coop.store(block, dst, k)
    coop.store(block, dst, v)


@cuda.jit
def k_p7_radix_pairs(src, dst):
    block = coop.this_block()
    keys = coop.ThreadData(1)
    values = coop.ThreadData(3)
    coop.load(block, src, keys)
    coop.load(block, src, values)
    k, v = coop.radix_sort_pairs(block, keys, values)  # HERE
    coop.store(block, dst, k)
    coop.store(block, dst, v)


# ------------------------------------------------------------------ P8, P9: inference


@cuda.jit
def k_p8_two_loads(src, other, dst):
    block = coop.this_block()
    items = coop.ThreadData(2)  # HERE
    coop.load(block, src, items)
    coop.load(block, other, items)
    dst[cuda.threadIdx.x] = items[0]


@cuda.jit(device=True, inline="never")
def opaque_value(x):
    return x + 1


@cuda.jit
def k_p9_helper_result(src, dst):
    items = coop.ThreadData(2)  # HERE
    items[0] = opaque_value(src[0])
    items[1] = opaque_value(src[1])
    dst[cuda.threadIdx.x] = items[0] + items[1]


# ------------------------------------------------------------------ P8, P10, P12, P13


@cuda.jit
def k_p8_load_float_store_int(src, dst):
    block = coop.this_block()
    items = coop.ThreadData(2)  # HERE
    coop.load(block, src, items)
    coop.store(block, dst, items)


@cuda.jit
def k_p10_scalar_store_float_into_int(src, dst):
    block = coop.this_block()
    coop.store(block, dst, src[cuda.threadIdx.x] * 2.0)  # HERE


@cuda.jit
def k_p12_string_dtype_exchange(src, dst):
    block = coop.this_block()
    items = coop.ThreadData(2, dtype="float32")  # HERE
    coop.load(block, src, items)
    coop.store(block, dst, coop.exchange(block, items))


@cuda.jit
def k_p12_int_dtype_value(src, dst):
    block = coop.this_block()
    items = coop.ThreadData(2, dtype=32)  # HERE
    coop.load(block, src, items)
    coop.store(block, dst, items)


@cuda.jit
def k_p13_alignment_three(src, dst):
    block = coop.this_block()
    items = coop.ThreadData(2, alignment=3)  # HERE
    coop.load(block, src, items)
    coop.store(block, dst, items)


# ------------------------------------------------------------------ P15, P16, P17


@cuda.jit
def k_p15_loop_reassign_extent(src, dst, rounds):
    block = coop.this_block()
    items = coop.ThreadData(4)
    coop.load(block, src, items)  # HERE
    for _ in range(rounds):
        items = coop.ThreadData(2, dtype=np.int32)
        items[0] = 1
        items[1] = 2
    coop.store(block, dst, items)


@cuda.jit
def k_p16_index_10(src, dst):
    block = coop.this_block()
    items = coop.ThreadData(4)
    coop.load(block, src, items)
    dst[cuda.threadIdx.x] = items[10]  # HERE


@cuda.jit
def k_p16_store_index_4(src, dst):
    block = coop.this_block()
    items = coop.ThreadData(4, dtype=np.int32)
    items[4] = 7  # HERE
    coop.store(block, dst, items)


WIDE_RECORD = np.dtype([(f"f{i}", np.float64) for i in range(64)], align=True)  # 512 bytes


@cuda.jit
def k_p17_huge_payload(src, dst):
    block = coop.this_block()
    items = numba_coop.ThreadData(2048, dtype=WIDE_RECORD)  # HERE
    numba_coop.load(block, src, items)
    numba_coop.store(block, dst, items)


@cuda.jit
def k_p17_too_many_items(src, dst):
    block = coop.this_block()
    items = coop.ThreadData(100000, dtype=np.float64)  # HERE
    coop.load(block, src, items)
    coop.store(block, dst, items)


@cuda.jit
def k_p17_too_many_inferred_items(src, dst):
    block = coop.this_block()
    items = coop.ThreadData(4097)  # HERE
    coop.load(block, src, items)
    coop.store(block, dst, items)


@cuda.jit
def k_p17_local_array(src, dst):
    block = coop.this_block()
    items = numba_coop.local.array(8192, np.int16)  # HERE
    numba_coop.load(block, src, items)
    numba_coop.store(block, dst, items)


CASES = {
    "p2_complex64": (k_p2_complex64, (C64, C64), coop.CoopTypeError,
                     "cuda.coop.load does not support source dtype complex64; supported: int8, int16, int32, int64, "
                     "uint8, uint16, uint32, uint64, float32, float64"),
    "p2_complex_payload": (k_p2_complex_payload_int_source, (I32, I32), coop.CoopTypeError,
                           "cuda.coop.load does not support output dtype complex64; supported: "),
    "p2_bool": (k_p2_bool, (np.zeros(1024, np.bool_), np.zeros(1024, np.bool_)), coop.CoopTypeError,
                "cuda.coop.numba_mlir.load does not support source dtype bool; supported: "),
    "p2_datetime64": (k_p2_datetime64, (I32, I32), coop.CoopTypeError,
                      "cuda.coop.load does not support output dtype datetime64"),
    "p1_float16_payload": (k_p1_float16_payload_float_source, (F32, I32), coop.CoopTypeError,
                           "cuda.coop.load supports output dtypes int8, int16, int32, int64, uint8, uint16, uint32, "
                           "uint64, float32, float64 through the common API; use cuda.coop.numba_mlir for float16"),
    "p1_float16_common": (k_p1_float16_common, (F16, F16), coop.CoopTypeError,
                          "cuda.coop.load supports source dtypes int8, int16, int32, int64, uint8, uint16, uint32, "
                          "uint64, float32, float64 through the common API; use cuda.coop.numba_mlir for float16"),
    "p1_float16_sum": (k_p1_float16_sum, (F32, F16), coop.CoopTypeError,
                       "cuda.coop.sum supports value dtypes int8, int16, int32, int64, uint8, uint16, uint32, uint64, "
                       "float32, float64 through the common API; use cuda.coop.numba_mlir for float16"),
    "p1_float_radix_keys": (k_p1_float_radix_keys, (F32, F32), coop.CoopTypeError,
                            "cuda.coop.radix_sort_keys supports keys dtypes int32, uint32, int64, uint64 through the "
                            "common API; use cuda.coop.numba_mlir for float32"),
    "p2_int16_radix_keys": (k_p2_int16_radix_keys, (I16, I16), coop.CoopTypeError,
                            "cuda.coop.numba_mlir.radix_sort_keys does not support keys dtype int16; supported: "),
    "p2_float_radix_rank": (k_p2_float_radix_rank, (F32, I32), coop.CoopTypeError,
                            "cuda.coop.numba_mlir.radix_rank does not support keys dtype float32; supported: "),
    "p3_bit_and_float": (k_p3_bit_and_float, (F32, F32), coop.CoopTypeError,
                         "cuda.coop.reduce binary_op 'bit_and' requires an integer dtype; got float32"),
    "p3_xor_scan_float": (k_p3_xor_scan_float, (F32, F32), coop.CoopTypeError,
                          "cuda.coop.inclusive_scan scan_op 'bit_xor' requires an integer dtype; got float32"),
    "p4_local_array_common": (k_p4_local_array_common, (I32, I32), coop.CoopTypeError,
                              "cuda.coop.load requires a fixed-size ThreadData output payload in the common API; use "
                              "cuda.coop.numba_mlir for local array payloads"),
    "p4_shuffle_scalar_common": (k_p4_shuffle_scalar_common, (I32, I32), coop.CoopTypeError,
                                 "cuda.coop.shuffle requires a fixed-size ThreadData value payload in the common API; "
                                 "use cuda.coop.numba_mlir for scalar payloads"),
    "p5_scalar_keys_payload_values": (k_p5_scalar_keys_payload_values, (I32, I32), coop.CoopTypeError,
                                      "cuda.coop.numba_mlir.radix_sort_pairs keys is a scalar, so values must be a "
                                      "scalar too; got a payload"),
    "p5_qualified_exchange_scalar": (k_p5_qualified_exchange_scalar, (I32, I32), coop.CoopTypeError,
                                     "cuda.coop.numba_mlir.exchange value must be a ThreadData payload; got a scalar"),
    "p10_int64_payload_float32_source": (k_p10_int64_payload_float32_source, (F32, F32), coop.CoopTypeError,
                                         "cuda.coop.load source dtype float32 does not match payload dtype int64"),
    "p10_int64_payload_int32_source": (k_p10_int64_payload_float32_source, (I32, I32), coop.CoopTypeError,
                                       "cuda.coop.load source dtype int32 does not match payload dtype int64"),
    "p11_two_dimensional_source": (k_p11_two_dimensional_source, (np.zeros((32, 32), np.int32), I32),
                                   coop.CoopTypeError,
                                   "cuda.coop.load source must be a one-dimensional contiguous array; got a 2-D "
                                   "contiguous int32 array"),
    "p11_strided_source": (k_p11_strided_source, (I32, I32), coop.CoopTypeError,
                           "cuda.coop.load source must be a one-dimensional contiguous array; got a 1-D non-contiguous "
                           "int32 array"),
    "p6_negative": (k_p6_negative, (I32, I32), coop.CoopValueError,
                    "ThreadData items_per_thread must be positive"),
    "p6_from_array": (k_p6_from_array, (I32, I32), coop.CoopTypeError,
                      "ThreadData items_per_thread must be a compile-time integer"),
    "p7_merge_pairs": (k_p7_merge_pairs, (I32, I32), coop.CoopValueError,
                       "cuda.coop.merge_sort_pairs keys and values must have the same items_per_thread (4 != 2)"),
    "p7_radix_pairs": (k_p7_radix_pairs, (I32, I32), coop.CoopValueError,
                       "cuda.coop.radix_sort_pairs keys and values must have the same items_per_thread (1 != 3)"),
    "p8_two_loads": (k_p8_two_loads, (I32, F32, I32), coop.CoopTypeError,
                     "ThreadData items has conflicting dtypes int32 (cuda.coop.load at line "),
    "p8_load_float_store_int": (k_p8_load_float_store_int, (F32, I32), coop.CoopTypeError,
                                "ThreadData items has conflicting dtypes float32 (cuda.coop.load at line "),
    "p9_helper_result": (k_p9_helper_result, (I32, I32), coop.CoopTypeError,
                         "could not infer the dtype of ThreadData items; pass dtype= or assign values of known type"),
    "p10_scalar_store_float_into_int": (k_p10_scalar_store_float_into_int, (I32, I32), coop.CoopTypeError,
                                        "cuda.coop.store destination dtype int32 does not match payload dtype float64; "
                                        "cast the value"),
    "p12_string_dtype": (k_p12_string_dtype_exchange, (F32, F32), coop.CoopTypeError,
                         "ThreadData dtype must be a NumPy or Numba scalar type; got 'float32'"),
    "p12_int_dtype_value": (k_p12_int_dtype_value, (I32, I32), coop.CoopTypeError,
                            "ThreadData dtype must be a NumPy or Numba scalar type; got 32"),
    "p13_alignment_three": (k_p13_alignment_three, (I32, I32), coop.CoopValueError,
                            "ThreadData alignment must be a positive power of two; got 3"),
    "p15_loop_reassign_extent": (k_p15_loop_reassign_extent, (I32, I32, 2), coop.CoopTypeError,
                                 "variable items may refer to payloads with different extents or dtypes ("),
    "p16_index_10": (k_p16_index_10, (I32, I32), coop.CoopIndexError,
                     "ThreadData items index 10 is out of range for items_per_thread 4"),
    "p16_store_index_4": (k_p16_store_index_4, (I32, I32), coop.CoopIndexError,
                          "ThreadData items index 4 is out of range for items_per_thread 4"),
    "p17_huge_payload": (k_p17_huge_payload, (np.zeros(16, WIDE_RECORD), np.zeros(16, WIDE_RECORD)),
                         coop.CoopValueError, "ThreadData items needs 1048576 bytes per thread; the limit is 524288"),
    "p17_too_many_items": (k_p17_too_many_items, (np.zeros(16, np.float64), np.zeros(16, np.float64)),
                           coop.CoopValueError, "ThreadData items needs 100000 items per thread (800000 bytes of "
                           "float64); the limit is 4096 items per thread: keep a larger tile in shared memory"),
    "p17_too_many_inferred_items": (k_p17_too_many_inferred_items, (I32, I32), coop.CoopValueError,
                                    "ThreadData items needs 4097 items per thread (16388 bytes of int32); the limit "
                                    "is 4096 items per thread"),
    "p17_local_array": (k_p17_local_array, (I16, I16), coop.CoopValueError,
                        "local array items needs 8192 items per thread (16384 bytes of int16); the limit is 4096 "
                        "items per thread"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_payload_mistake(case, expect):
    kernel, args, cls, fragment, *rest = CASES[case]
    exc = expect(kernel, args, cls, fragment, **(rest[0] if rest else {}))
    if cls is coop.CoopIndexError:
        assert isinstance(exc, IndexError)


def test_p1_float16_names_the_operation_not_the_dtype_rule(expect):
    exc = expect(k_p1_float16_common, (F16, F16), coop.CoopTypeError, "cuda.coop.load")
    assert "must be a NumPy or Numba scalar type" not in str(exc)


@pytest.mark.parametrize("case", ["p10_int64_payload_float32_source", "p10_int64_payload_int32_source",
                                  "p10_scalar_store_float_into_int"])
def test_p10_location_appears_once(case, expect):
    kernel, args, cls, fragment, *rest = CASES[case]
    exc = expect(kernel, args, cls, fragment)
    first = str(exc).splitlines()[0]
    assert first.count("test_corpus_payloads.py:") == 1, first


def test_float16_common_is_p1(expect):
    exc = expect(k_p1_float16_common, (F16, F16), coop.CoopTypeError,
                 "through the common API; use cuda.coop.numba_mlir for float16")
    assert "not implemented" not in str(exc)


@pytest.mark.parametrize("n", [np.int32(2), 2, np.int64(4)])
def test_items_per_thread_from_integer_kernel_argument_compiles(n):
    # SPEC 7.2: an integer kernel argument used as items_per_thread is specialised, whatever its integer type.
    numba_coop.compile_kernel(k_items_per_thread_argument, (I32, I32, n), block=128, target="sm_90")
