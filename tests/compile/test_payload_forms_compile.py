"""The user's own 1-D local arrays as payloads of qualified calls (SPEC 9.1, 9.9): builds without a GPU and the
mistakes: the common API rejects them (P4), one array may not be two operands of a call."""
from __future__ import annotations

import numpy as np
import pytest
from numba_cuda_mlir import cuda

import cuda.coop.numba_mlir as numba_coop
from cuda import coop

from compile_helpers import build_kernel, expect_compile_error

I32 = np.zeros(1024, np.int32)


def test_local_arrays_are_payloads_of_qualified_calls():
    @cuda.jit
    def kernel(src, dst):
        block = coop.this_block()
        items = cuda.local.array(4, np.int32)
        numba_coop.load(block, src, items, algorithm="transpose")  # load writes into the given array
        doubled = numba_coop.local.array(4, np.int32)
        for i in range(4):
            doubled[i] = items[i] * 2
        scanned = numba_coop.exclusive_sum(block, doubled)  # results are fresh ThreadData
        numba_coop.store(block, dst, scanned)

    built = build_kernel(kernel, (I32, I32), check_no_local_memory=False)
    assert built.local_memory_bytes == 0  # the arrays stay in registers


def test_local_array_with_a_tuple_shape_and_keyword_dtype():
    @cuda.jit
    def kernel(src, dst):
        block = coop.this_block()
        items = numba_coop.local.array((2,), dtype=np.float32)
        numba_coop.load(block, src, items)
        numba_coop.store(block, dst, numba_coop.exchange(block, items))

    data = np.zeros(512, np.float32)
    build_kernel(kernel, (data, data), check_no_local_memory=False)


def test_local_arrays_still_go_anywhere_outside_cooperative_calls():
    @cuda.jit(device=True)
    def total(values):
        return values[0] + values[1]

    @cuda.jit
    def kernel(src, dst):
        block = coop.this_block()
        items = cuda.local.array(2, np.int32)
        numba_coop.load(block, src, items)
        dst[cuda.threadIdx.x] = total(items)  # an ordinary array: no escape error

    build_kernel(kernel, (I32, I32), check_no_local_memory=False)


def test_common_api_rejects_local_arrays_with_p4():
    @cuda.jit
    def kernel(src, dst):
        block = coop.this_block()
        items = cuda.local.array(4, np.int32)
        coop.load(block, src, items)  # HERE

    exc = expect_compile_error(kernel, (I32, I32), coop.CoopTypeError,
                               "cuda.coop.load requires a fixed-size ThreadData output payload in the common API; "
                               "use cuda.coop.numba_mlir for local array payloads", site="first_line")
    assert "test_payload_forms_compile.py" in str(exc).splitlines()[0]


def test_one_array_for_two_operands_is_rejected():
    @cuda.jit
    def kernel(values, lengths, dst):
        block = coop.this_block()
        runs = cuda.local.array(2, np.int32)
        numba_coop.load(block, values, runs)
        out = numba_coop.run_length_decode(block, runs, runs, decoded_items_per_thread=2)
        numba_coop.store(block, dst, out)

    expect_compile_error(kernel, (I32, I32, I32), coop.CoopValueError,
                         "cuda.coop.numba_mlir.run_length_decode run_values and run_lengths are the same array; array "
                         "payloads must not alias another operand of the call", site="first_line")


def test_two_dimensional_local_arrays_are_not_payloads():
    @cuda.jit
    def kernel(src, dst):
        block = coop.this_block()
        grid = cuda.local.array((2, 2), np.int32)
        numba_coop.load(block, src, grid)

    expect_compile_error(kernel, (I32, I32), coop.CoopError, "output", site="first_line")


def test_numba_coop_local_is_numba_cuda_mlirs():
    assert numba_coop.local is cuda.local
    assert "local" in numba_coop.__all__


# ------------------------------------------------------------------ shared rows and numba_coop.shared.array


def test_rows_of_shared_arrays_are_payloads():
    @cuda.jit
    def kernel(src, dst):
        block = coop.this_block()
        rows = numba_coop.shared.array((128, 4), np.int32)
        numba_coop.load(block, src, rows[cuda.threadIdx.x], algorithm="transpose")
        numba_coop.store(block, dst, numba_coop.exclusive_sum(block, rows[cuda.threadIdx.x]))

    built = build_kernel(kernel, (I32, I32), check_no_local_memory=False)
    assert built.metadata["scratch_bytes"] >= 128 * 4 * 4  # the array lives in the backing

    @cuda.jit
    def plain_rows(src, dst):
        block = coop.this_block()
        rows = cuda.shared.array((128, 2), np.float64)
        numba_coop.load(block, src, rows[cuda.threadIdx.x])
        numba_coop.store(block, dst, rows[cuda.threadIdx.x])

    data = np.zeros(256, np.float64)
    build_kernel(plain_rows, (data, data), check_no_local_memory=False)


def test_common_api_rejects_shared_rows_with_p4():
    @cuda.jit
    def kernel(src, dst):
        block = coop.this_block()
        rows = cuda.shared.array((128, 4), np.int32)
        coop.load(block, src, rows[cuda.threadIdx.x])  # HERE

    expect_compile_error(kernel, (I32, I32), coop.CoopTypeError,
                         "cuda.coop.load requires a fixed-size ThreadData output payload in the common API; use "
                         "cuda.coop.numba_mlir for shared array row payloads", site="first_line")


def test_backing_arrays_coexist_with_dynamic_backing():
    """Scratch above 48 KiB turns the backing dynamic: a cuda.shared.array is rejected (S9), a
    numba_coop.shared.array lives inside the backing."""
    def make(shared_array):
        @cuda.jit
        def kernel(src, dst):
            block = coop.this_block()
            temp = coop.TempStorage(size_in_bytes=50000)
            buf = shared_array(128, np.int32)
            items = coop.ThreadData(4)
            coop.load(block, src, items, algorithm="transpose", temp_storage=temp)
            buf[cuda.threadIdx.x] = items[0]
            cuda.syncthreads()
            dst[cuda.threadIdx.x] = buf[127 - cuda.threadIdx.x]

        return kernel

    built = build_kernel(make(numba_coop.shared.array), (I32, I32), check_no_local_memory=False)
    assert built.metadata["dynamic"] and built.metadata["scratch_bytes"] >= 50000 + 512
    with pytest.raises(coop.CoopValueError, match="cannot coexist with dynamic"):
        numba_coop.compile_kernel(make(cuda.shared.array), (I32, I32), block=128)


def test_backing_array_without_cooperative_calls():
    @cuda.jit
    def kernel(src, dst):
        buf = numba_coop.shared.array(64, np.float32, alignment=16)
        buf[cuda.threadIdx.x] = src[cuda.threadIdx.x]
        cuda.syncthreads()
        dst[cuda.threadIdx.x] = buf[63 - cuda.threadIdx.x]

    data = np.zeros(64, np.float32)
    built = build_kernel(kernel, (data, data), block=64, check_no_local_memory=False)
    assert built.metadata["scratch_bytes"] == 256


@pytest.mark.parametrize("alignment", [3, 0, True])
def test_backing_array_alignment(alignment):
    @cuda.jit
    def kernel(src, dst):
        buf = numba_coop.shared.array(64, np.float32, alignment=alignment)  # HERE
        dst[cuda.threadIdx.x] = buf[0]

    expect_compile_error(kernel, (I32, I32), coop.CoopValueError,
                         "cuda.coop.numba_mlir.shared.array alignment must be a positive power of two",
                         site="first_line")


def test_backing_array_shape_must_be_static():
    @cuda.jit
    def kernel(src, dst, n):
        buf = numba_coop.shared.array(n, np.float32)  # HERE
        dst[cuda.threadIdx.x] = buf[0]

    expect_compile_error(kernel, (I32, I32, np.float32(1)), coop.CoopTypeError,
                         "cuda.coop.numba_mlir.shared.array shape must be a compile-time positive integer",
                         site="first_line")


def test_shared_marker_outside_a_kernel():
    with pytest.raises(coop.CoopCompilerContextRequiredError):
        numba_coop.shared.array(4, np.int32)
    assert "shared" in numba_coop.__all__


# ------------------------------------------------------------------ float16 (SPEC 9.2) gates


def test_float16_scalars_in_common_calls_are_p1():
    @cuda.jit
    def kernel(src, dst):
        dst[0] = coop.sum(coop.this_block(), src[cuda.threadIdx.x])  # HERE

    half = np.zeros(128, np.float16)
    expect_compile_error(kernel, (half, half), coop.CoopTypeError,
                         "cuda.coop.sum supports value dtypes int8, int16, int32, int64, uint8, uint16, uint32, "
                         "uint64, float32, float64 through the common API; use cuda.coop.numba_mlir for float16",
                         site="first_line")


def test_float16_in_qualified_calls_builds_inline():
    """By-value float16 (scalars, oob_default, results) travels as its 16 bits, so every call inlines."""
    @cuda.jit
    def kernel(src, dst, out):
        block = coop.this_block()
        items = coop.ThreadData(4)
        numba_coop.load(block, src, items, algorithm="transpose", valid_items=500, oob_default=1.5)
        total = numba_coop.sum(block, src[cuda.threadIdx.x])
        largest = numba_coop.reduce(block, items, binary_op="max")
        numba_coop.store(block, dst, numba_coop.inclusive_sum(block, items))
        if cuda.threadIdx.x == 0:
            out[0] = total
            out[1] = largest

    half = np.zeros(512, np.float16)
    built = build_kernel(kernel, (half, half, np.zeros(2, np.float16)), check_no_local_memory=False)
    assert built.local_memory_bytes == 0
    assert "#include <cuda_fp16.h>" in built.cpp_source and "__ushort_as_half(" in built.cpp_source


def _half_max(a, b):
    return a if a > b else b


def _half_less(a, b):
    return a < b


def _half_step(state, aggregate):
    old = state[0]
    state[0] = old + aggregate
    return old


def test_float16_python_callables_build_inline():
    """Python operators, predicates and prefix callbacks on float16 cross the C ABI by pointer (SPEC 9.2): LTO
    inlines them, no local memory is left and the C++ never passes a __half to them by value."""
    running = numba_coop.StatefulFunction(_half_step, np.float16)

    @cuda.jit
    def kernel(src, dst, out):
        block = coop.this_block()
        items = coop.ThreadData(4)
        numba_coop.load(block, src, items)
        state = coop.ThreadData(1, dtype=np.float16)
        state[0] = np.float16(0)
        scanned = numba_coop.exclusive_scan(block, items, state, scan_op=_half_max, prefix_op=running)
        numba_coop.store(block, dst, numba_coop.merge_sort_keys(block, scanned, compare_op=_half_less))
        total = numba_coop.reduce(block, items, binary_op=_half_max)
        if cuda.threadIdx.x == 0:
            out[0] = total

    half = np.zeros(512, np.float16)
    built = build_kernel(kernel, (half, half, np.zeros(1, np.float16)), check_no_local_memory=False)
    assert built.local_memory_bytes == 0
    source = built.cpp_source
    assert "__half r, x = a, y = b;" in source and "(__half*, __half*);" in source  # operator, predicate
    assert "(__half*, __half*, __half*);" in source  # the StatefulFunction: (result, state, aggregate)


# ------------------------------------------------------------------ scalar keys (SPEC 9.1)


def test_scalar_radix_keys_and_ranks_build():
    @cuda.jit
    def kernel(src, dst, ranks):
        block = coop.this_block()
        key = src[cuda.threadIdx.x]
        dst[cuda.threadIdx.x] = numba_coop.radix_sort_keys(block, key, descending=True)
        ranks[cuda.threadIdx.x] = numba_coop.radix_rank(block, key, begin_bit=2, end_bit=6)

    built = build_kernel(kernel, (I32, I32, I32), check_no_local_memory=False)
    assert built.local_memory_bytes == 0
    assert built.cpp_source.count("keys[1] = {key};") == 2


def test_scalar_radix_keys_in_common_calls_are_p4():
    @cuda.jit
    def kernel(src, dst):
        dst[cuda.threadIdx.x] = coop.radix_sort_keys(coop.this_block(), src[cuda.threadIdx.x])  # HERE

    expect_compile_error(kernel, (I32, I32), coop.CoopTypeError,
                         "cuda.coop.radix_sort_keys requires a fixed-size ThreadData keys payload in the common API; "
                         "use cuda.coop.numba_mlir for scalar payloads", site="first_line")


def test_scalar_radix_pairs_build():
    """SPEC 9.1: ``key, value = radix_sort_pairs(block, key, value)`` with scalars returns the pair as a tuple."""
    @cuda.jit
    def kernel(keys, values, keys_out, values_out):
        block = coop.this_block()
        t = cuda.threadIdx.x
        key, value = numba_coop.radix_sort_pairs(block, keys[t], values[t], begin_bit=0, end_bit=16)
        keys_out[t] = key
        values_out[t] = value

    half = np.zeros(128, np.float16)
    built = build_kernel(kernel, (I32, half, I32, half), check_no_local_memory=False)
    assert built.local_memory_bytes == 0
    assert "const __half values[1] = {value};" in built.cpp_source

