"""User-defined aggregates (NumPy structured dtypes, SPEC 9.2) without a GPU: the qualified forms build with every
call inlined, and each mistake is a compile-time error naming the call site."""
from __future__ import annotations

import numpy as np
import pytest
from numba_cuda_mlir import cuda

import cuda.coop.numba_mlir as numba_coop
from cuda import coop

from compile_helpers import build_kernel, expect_compile_error

PAIR = np.dtype([("key", np.int32), ("val", np.float32)], align=True)
RECORDS = np.zeros(512, PAIR)
KEYS = np.zeros(512, np.int32)


def by_key(a, b):
    return a.key < b.key


def larger(a, b):
    return a if a.key >= b.key else b


def test_data_movement_builds_with_an_opaque_struct():
    @cuda.jit
    def kernel(src, dst):
        block = coop.this_block()
        items = coop.ThreadData(4)
        numba_coop.load(block, src, items, algorithm="vectorize")  # vectorize behaves as direct
        numba_coop.store(block, dst, numba_coop.exchange(block, items, mode="blocked_to_striped"), algorithm="striped")

    built = build_kernel(kernel, (RECORDS, RECORDS), check_no_local_memory=False)
    assert built.local_memory_bytes == 0
    source = built.cpp_source
    assert "struct alignas(4) cuda_coop_agg_8_4 { unsigned int words[2]; };" in source
    assert "BLOCK_LOAD_DIRECT" in source and "BLOCK_LOAD_VECTORIZE" not in source


def test_callables_and_sorts_build():
    @cuda.jit
    def kernel(src, keys, dst, best):
        block = coop.this_block()
        items = coop.ThreadData(4)
        numba_coop.load(block, src, items)
        radix_keys = coop.ThreadData(4)
        numba_coop.load(block, keys, radix_keys)
        _, values = numba_coop.radix_sort_pairs(block, radix_keys, items)
        ordered = numba_coop.merge_sort_keys(block, values, compare_op=by_key)
        numba_coop.store(block, dst, numba_coop.inclusive_scan(block, ordered, scan_op=larger))
        result = numba_coop.reduce(block, items, binary_op=larger)
        if block.rank() == 0:
            best[0] = result

    built = build_kernel(kernel, (RECORDS, KEYS, RECORDS, np.zeros(1, PAIR)), check_no_local_memory=False)
    assert built.local_memory_bytes == 0
    source = built.cpp_source
    # callables take and return aggregates by pointer; the reduce result comes back through a pointer too
    assert "(cuda_coop_agg_8_4*, cuda_coop_agg_8_4*, cuda_coop_agg_8_4*);" in source
    assert "cuda_coop_agg_8_4* result)" in source


def test_shuffles_topk_values_and_run_values_build():
    @cuda.jit
    def kernel(src, keys, lengths, dst, one):
        block = coop.this_block()
        items = coop.ThreadData(4)
        numba_coop.load(block, src, items)
        numba_coop.store(block, dst, numba_coop.shuffle(block, items, mode="up"))
        one[cuda.threadIdx.x] = numba_coop.shuffle(block, src[cuda.threadIdx.x], mode="rotate", distance=3)
        radix_keys = coop.ThreadData(4)
        numba_coop.load(block, keys, radix_keys)
        _, values = numba_coop.topk_min_pairs(block, radix_keys, items, k=5)
        numba_coop.store(block, dst, values)
        run_lengths = coop.ThreadData(4)
        numba_coop.load(block, lengths, run_lengths)
        numba_coop.store(block, dst, numba_coop.run_length_decode(block, items, run_lengths,
                                                                  decoded_items_per_thread=4,
                                                                  decoded_window_offset=0))

    built = build_kernel(kernel, (RECORDS, KEYS, KEYS, RECORDS, np.zeros(128, PAIR)), check_no_local_memory=False)
    assert built.local_memory_bytes == 0


def test_common_api_rejects_aggregates():
    @cuda.jit
    def kernel(src, dst):
        items = coop.ThreadData(4)
        coop.load(coop.this_block(), src, items)  # HERE
        coop.store(coop.this_block(), dst, items)

    expect_compile_error(kernel, (RECORDS, RECORDS), coop.CoopTypeError,
                         "cuda.coop.load supports source dtypes int8, int16, int32, int64, uint8, uint16, "
                         "uint32, uint64, float32, float64 through the common API; use cuda.coop.numba_mlir "
                         "for dtype([('key', '<i4')", site="first_line")


def test_common_api_rejects_aggregate_scalars():
    @cuda.jit
    def kernel(src, dst):
        dst[0] = coop.reduce(coop.this_block(), src[cuda.threadIdx.x], binary_op=larger)  # HERE

    expect_compile_error(kernel, (RECORDS, RECORDS), coop.CoopTypeError,
                         "cuda.coop.reduce supports value dtypes int8, int16, int32, int64, uint8, uint16, "
                         "uint32, uint64, float32, float64 through the common API; use cuda.coop.numba_mlir "
                         "for dtype([('key', '<i4')", site="first_line")


def test_aggregate_radix_keys_are_rejected():
    @cuda.jit
    def kernel(src, dst):
        block = coop.this_block()
        items = coop.ThreadData(4)
        numba_coop.load(block, src, items)
        numba_coop.store(block, dst, numba_coop.radix_sort_keys(block, items))

    expect_compile_error(kernel, (RECORDS, RECORDS), coop.CoopTypeError,
                         "cuda.coop.numba_mlir.radix_sort_keys does not support keys dtype dtype([('key', '<i4')",
                         site="first_line")


@pytest.mark.parametrize("form", ["reduce", "sum", "exclusive_sum", "merge_sort", "discontinuity", "adjacent"])
def test_aggregates_need_a_callable(form):
    @cuda.jit
    def kernel(src, dst):
        block = coop.this_block()
        items = coop.ThreadData(4)
        numba_coop.load(block, src, items)
        if form == "reduce":
            dst[0] = numba_coop.reduce(block, items, binary_op="max")
        elif form == "sum":
            dst[0] = numba_coop.sum(block, items)
        elif form == "exclusive_sum":
            numba_coop.store(block, dst, numba_coop.exclusive_sum(block, items))
        elif form == "merge_sort":
            numba_coop.store(block, dst, numba_coop.merge_sort_keys(block, items))
        elif form == "discontinuity":
            numba_coop.store(block, dst, numba_coop.discontinuity(block, items))
        else:
            numba_coop.store(block, dst, numba_coop.adjacent_difference(block, items))

    param = {"reduce": "binary_op", "sum": "binary_op", "exclusive_sum": "scan_op", "merge_sort": "compare_op",
             "discontinuity": "flag_op", "adjacent": "difference_op"}[form]
    expect_compile_error(kernel, (RECORDS, RECORDS), coop.CoopTypeError,
                         "on the aggregate dtype dtype([('key', '<i4'), ('val', '<f4')], align=True) needs "
                         f"{param}=<a Python or device function>", site="first_line")


def test_literal_initial_value_on_an_aggregate():
    @cuda.jit
    def kernel(src, dst):
        block = coop.this_block()
        items = coop.ThreadData(4)
        numba_coop.load(block, src, items)
        numba_coop.store(block, dst, numba_coop.exclusive_scan(block, items, scan_op=larger, initial_value=0))

    expect_compile_error(kernel, (RECORDS, RECORDS), coop.CoopTypeError,
                         "initial_value must be a value of the aggregate dtype", site="first_line")


def test_neighbour_callables_keep_records_in_registers():
    """Word-sized members in the opaque struct: two calls reading one record payload leave no local memory."""
    def differs(a, b):
        return a.key != b.key

    @cuda.jit
    def kernel(src, dst, flags):
        block = coop.this_block()
        items = coop.ThreadData(4)
        numba_coop.load(block, src, items)
        numba_coop.store(block, flags, numba_coop.discontinuity(block, items, flag_op=differs))
        numba_coop.store(block, dst, numba_coop.adjacent_difference(block, items, difference_op=larger))

    assert build_kernel(kernel, (RECORDS, RECORDS, KEYS), check_no_local_memory=False).local_memory_bytes == 0



@pytest.mark.parametrize("where", ["local", "shared"])
def test_arrays_of_records_are_unsupported_with_a_pointer_to_thread_data(where):
    """numba-cuda-mlir 0.6 cannot lower local or shared arrays of records: an R9-shaped error, not its crash."""
    @cuda.jit
    def kernel(src, dst):
        block = coop.this_block()
        if where == "local":
            items = numba_coop.local.array(4, PAIR)  # HERE
        else:
            items = numba_coop.shared.array((128, 4), PAIR)[cuda.threadIdx.x]  # HERE
        numba_coop.load(block, src, items)
        numba_coop.store(block, dst, items)

    message = str(expect_compile_error(kernel, (RECORDS, RECORDS), coop.CoopUnsupportedError,
                                       f"a {where} array of the structured dtype dtype([('key', '<i4')",
                                       site="first_line"))
    assert "use coop.ThreadData(items_per_thread, dtype=...)" in message


def test_scalar_radix_pairs_with_record_values_build():
    @cuda.jit
    def kernel(keys, values, keys_out, values_out):
        block = coop.this_block()
        t = cuda.threadIdx.x
        key, value = numba_coop.radix_sort_pairs(block, keys[t], values[t])
        keys_out[t] = key
        values_out[t] = value

    built = build_kernel(kernel, (KEYS[:128], RECORDS[:128], KEYS[:128], RECORDS[:128]), check_no_local_memory=False)
    assert built.local_memory_bytes == 0
    assert "const cuda_coop_agg_8_4* value" in built.cpp_source  # the record reaches the entry by pointer
