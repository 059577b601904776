"""User-defined aggregates as members of multi-operand reduce and scans in the qualified numba-cuda-mlir namespace
(SPEC 8.18, 9.2; docs: qualified, "User-defined aggregates"): NumPy structured dtypes (numba records) and struct-model
types beside numeric members, payloads and scalars, built for sm_90 with every call inlined and no local memory, as
single-operand aggregate calls are. The tuple struct holds the aggregate's opaque struct and the user's function
takes it by pointer. The same kernels run on the GPU in tests/gpu/test_aggregate_tuples_gpu.py."""
from __future__ import annotations

import functools

import numpy as np
from coop_struct_types import Interval, Tagged, hull_device, interval_type
from numba_cuda_mlir import cuda

import cuda.coop.numba_mlir as numba_coop
from cuda import coop

from compile_helpers import build_kernel, expect_compile_error

THREADS, K = 128, 4
TILE = THREADS * K
WARPS = THREADS // 32
PAIR = np.dtype([("key", np.int32), ("val", np.float32)], align=True)  # 8 bytes, aligned to 4
OTHER = np.dtype([("a", np.int64)], align=True)


def best_and_count(a, b):
    """(the record of the larger key, the sum of the counts)."""
    return (a[0] if a[0].key >= b[0].key else b[0], a[1] + b[1])


def count_and_best(a, b):
    """``best_and_count`` with the members the other way round: the aggregate second."""
    return (a[0] + b[0], a[1] if a[1].key >= b[1].key else b[1])


def larger_key(a, b):
    return a if a.key >= b.key else b


@functools.cache
def block_record_kernel(tuples=True):
    """Per block, over (PAIR, int32) payloads: an inclusive and a seeded exclusive scan and a reduce of (int32,
    PAIR). ``tuples=False``: the single-operand twin (the PAIR payload alone), the reference for local memory."""
    @cuda.jit
    def kernel(records, ints, seed, scan_records, scan_ints, excl_records, excl_ints, totals_ints, totals_records):
        block = coop.this_block()
        base = np.int64(cuda.blockIdx.x) * TILE
        items = coop.ThreadData(K, dtype=PAIR)
        counts = coop.ThreadData(K)
        numba_coop.load(block, records, items, offset=base)
        numba_coop.load(block, ints, counts, offset=base)
        if tuples:
            best, count = numba_coop.inclusive_scan(block, (items, counts), scan_op=best_and_count)
            numba_coop.store(block, scan_ints, count, offset=base)
            before, before_count = numba_coop.exclusive_scan(block, (items, counts), scan_op=best_and_count,
                                                             initial_value=(seed[0], 7))
            numba_coop.store(block, excl_ints, before_count, offset=base)
            total, top = numba_coop.reduce(block, (counts, items), binary_op=count_and_best)
        else:
            best = numba_coop.inclusive_scan(block, items, scan_op=larger_key)
            before = numba_coop.exclusive_scan(block, items, scan_op=larger_key, initial_value=seed[0])
            top = numba_coop.reduce(block, items, binary_op=larger_key)
            total = 0
        numba_coop.store(block, scan_records, best, offset=base)
        numba_coop.store(block, excl_records, before, offset=base)
        if block.rank() == 0:
            totals_ints[cuda.blockIdx.x] = total
            totals_records[cuda.blockIdx.x] = top

    return kernel


def block_record_args(records, ints, seed, blocks):
    n = blocks * TILE
    return (records, ints, seed, np.zeros(n, PAIR), np.zeros(n, np.int32), np.zeros(n, PAIR), np.zeros(n, np.int32),
            np.zeros(blocks, np.int32), np.zeros(blocks, PAIR))


@functools.cache
def warp_record_kernel(tuples=True):
    """Per warp, over (PAIR, int32) scalars (a record array's element): an inclusive scan and a reduce of (int32,
    PAIR). ``tuples=False``: the single-operand twin."""
    @cuda.jit
    def kernel(records, ints, warp_records, warp_ints, totals_ints, totals_records):
        thread = cuda.blockIdx.x * THREADS + cuda.threadIdx.x
        if tuples:
            lane_best, lane_count = numba_coop.inclusive_scan(coop.this_warp(), (records[thread], ints[thread]),
                                                              scan_op=best_and_count)
            warp_total, warp_top = numba_coop.reduce(coop.this_warp(), (ints[thread], records[thread]),
                                                     binary_op=count_and_best)
        else:
            lane_best = numba_coop.inclusive_scan(coop.this_warp(), records[thread], scan_op=larger_key)
            warp_top = numba_coop.reduce(coop.this_warp(), records[thread], binary_op=larger_key)
            lane_count = warp_total = 0
        warp_records[thread] = lane_best
        warp_ints[thread] = lane_count
        if thread % 32 == 0:
            totals_ints[thread // 32] = warp_total
            totals_records[thread // 32] = warp_top

    return kernel


def warp_record_args(records, ints, blocks):
    threads, warps = blocks * THREADS, blocks * WARPS
    return (records, ints, np.zeros(threads, PAIR), np.zeros(threads, np.int32), np.zeros(warps, np.int32),
            np.zeros(warps, PAIR))


def hull_and_count(a, b):
    return (hull_device(a[0], b[0]), a[1] + b[1])


def larger_tagged_and_count(a, b):
    return (a[0] if a[0].key >= b[0].key else b[0], a[1] + b[1])


@functools.cache
def struct_kernel():
    """Per block, struct-model members: a block inclusive scan of (Interval, int32) scalars, a seeded exclusive block
    scan of (Interval, int32) payloads (a ThreadData of a struct-model type is a pointer to its slots), and a warp
    reduce of (Tagged, int32) scalars (16 bytes with padding: an opaque struct of mixed words)."""
    @cuda.jit
    def kernel(lo, hi, ints, keys, tags, seed, scan_lo, scan_hi, scan_ints, excl_lo, excl_hi, excl_ints, warp_keys,
               warp_tags, warp_ints):
        block = coop.this_block()
        r = block.rank()
        thread = cuda.blockIdx.x * THREADS + r
        hull, count = numba_coop.inclusive_scan(block, (Interval(lo[thread], hi[thread]), ints[thread]),
                                                scan_op=hull_and_count)
        scan_lo[thread], scan_hi[thread], scan_ints[thread] = hull.lo, hull.hi, count
        base = cuda.blockIdx.x * TILE + K * r
        items = coop.ThreadData(K, dtype=interval_type)
        counts = coop.ThreadData(K)
        for j in range(K):
            items[j] = Interval(lo[base + j], hi[base + j])
            counts[j] = ints[base + j]
        before, before_count = numba_coop.exclusive_scan(block, (items, counts), scan_op=hull_and_count,
                                                         initial_value=(Interval(seed[0], seed[1]), -3))
        for j in range(K):
            excl_lo[base + j], excl_hi[base + j], excl_ints[base + j] = before[j].lo, before[j].hi, before_count[j]
        top, total = numba_coop.reduce(coop.this_warp(), (Tagged(keys[thread], tags[thread], keys[thread] > 0),
                                                          ints[thread]), binary_op=larger_tagged_and_count)
        if r % 32 == 0:
            slot = thread // 32
            warp_keys[slot], warp_tags[slot], warp_ints[slot] = top.key, top.tag, total

    return kernel


def struct_args(lo, hi, ints, keys, tags, seed, blocks):
    n, warps = blocks * TILE, blocks * WARPS
    return (lo, hi, ints, keys, tags, seed, *(np.zeros(n, t) for t in (np.float32, np.float32, np.int32) * 2),
            np.zeros(warps, np.int64), np.zeros(warps, np.int8), np.zeros(warps, np.int32))


def struct_inputs(blocks):
    n = blocks * TILE
    return (np.zeros(n, np.float32), np.zeros(n, np.float32), np.zeros(n, np.int32), np.zeros(n, np.int64),
            np.zeros(n, np.int8), np.zeros(2, np.float32))


def test_record_members_of_tuple_scans_and_reductions_build_inline():
    """The tuple struct holds the record's opaque struct (either position) and the user's function takes it by
    pointer, as single-operand aggregate callables do: no CALL and no local memory (build_kernel checks both), as
    for the single-operand twins of the same kernels."""
    records, ints = np.zeros(TILE, PAIR), np.zeros(TILE, np.int32)
    for tuples in (False, True):
        block_built = build_kernel(block_record_kernel(tuples), block_record_args(records, ints, records[:1], 1))
        build_kernel(warp_record_kernel(tuples), warp_record_args(records[:THREADS], ints[:THREADS], 1))
    source = block_built.cpp_source
    assert "struct alignas(4) cuda_coop_agg_8_4 { unsigned int words[2]; };" in source
    assert "struct cuda_coop_tuple_agg8x4_int32 { cuda_coop_agg_8_4 f0; int f1; };" in source
    assert "struct cuda_coop_tuple_int32_agg8x4 { int f0; cuda_coop_agg_8_4 f1; };" in source
    assert source.index("struct alignas(4) cuda_coop_agg_8_4") < source.index("struct cuda_coop_tuple_agg8x4_int32")
    # best_and_count over (PAIR, int32), count_and_best over (int32, PAIR): results, then a and b by pointer
    assert "(cuda_coop_agg_8_4*, int*, cuda_coop_agg_8_4*, int, cuda_coop_agg_8_4*, int);" in source
    assert "(int*, cuda_coop_agg_8_4*, int, cuda_coop_agg_8_4*, int, cuda_coop_agg_8_4*);" in source


def test_struct_model_members_of_tuple_scans_and_reductions_build_inline():
    """Struct-model members (loaded and stored whole by the wrapper), payloads and scalars; Tagged's padded layout
    names its member widths in the tuple's C type."""
    built = build_kernel(struct_kernel(), struct_args(*struct_inputs(1), 1))
    source = built.cpp_source
    assert "struct cuda_coop_tuple_agg8x4_int32 { cuda_coop_agg_8_4 f0; int f1; };" in source
    assert "struct cuda_coop_tuple_agg16x8x81124_int32 { cuda_coop_agg_16_8_81124 f0; int f1; };" in source


# ------------------------------------------------------------------ mistakes, each at the call's line


def make_error_kernel(case):
    @cuda.jit
    def kernel(records, ints, other, halves):
        block = coop.this_block()
        t = cuda.threadIdx.x
        items = coop.ThreadData(K, dtype=PAIR)
        counts = coop.ThreadData(K)
        numba_coop.load(block, records, items)
        numba_coop.load(block, ints, counts)
        if case == "literal":
            best, count = numba_coop.exclusive_scan(block, (items, counts), scan_op=best_and_count,  # LITERAL
                                                    initial_value=(0, 7))
            numba_coop.store(block, ints, count)
        elif case == "other record":
            best, count = numba_coop.exclusive_scan(block, (items, counts), scan_op=best_and_count,  # OTHER
                                                    initial_value=(other[0], 7))
            numba_coop.store(block, ints, count)
        elif case == "common record":
            best, count = coop.inclusive_scan(block, (items, counts), scan_op=best_and_count)  # COMMON
            numba_coop.store(block, ints, count)
        else:  # common float16
            larger, total = coop.reduce(coop.this_warp(), (halves[t], ints[t]), binary_op=best_and_count)  # HALF
            ints[t] = total

    return kernel


ERROR_ARGS = (np.zeros(TILE, PAIR), np.zeros(TILE, np.int32), np.zeros(1, OTHER), np.zeros(TILE, np.float16))


def test_an_aggregate_member_of_initial_value_is_a_value_of_its_dtype():
    """A literal cannot be an aggregate, and a record of another dtype is not this one (C9), as for one operand."""
    kernel = make_error_kernel("literal")
    expect_compile_error(kernel, ERROR_ARGS, coop.CoopTypeError,
                         f"cuda.coop.numba_mlir.exclusive_scan initial_value[0] must be a value of the aggregate dtype "
                         f"{PAIR!r}; got a literal", site="first_line", line_marker="# LITERAL")
    kernel = make_error_kernel("other record")
    expect_compile_error(kernel, ERROR_ARGS, coop.CoopTypeError,
                         f"cuda.coop.numba_mlir.exclusive_scan initial_value[0] must have the payload dtype {PAIR!r}; "
                         "got Record(a[type=int64;offset=0];8;True); cast it", site="first_line", line_marker="# OTHER")


def test_the_common_api_rejects_aggregate_and_float16_members_with_p1():
    """SPEC 9.2 dtypes are the qualified namespace's, in a tuple as alone (both built silently before)."""
    common = "dtypes int8, int16, int32, int64, uint8, uint16, uint32, uint64, float32, float64 through the common API"
    expect_compile_error(make_error_kernel("common record"), ERROR_ARGS, coop.CoopTypeError,
                         f"cuda.coop.inclusive_scan supports value[0] {common}; use cuda.coop.numba_mlir for {PAIR!r}",
                         site="first_line", line_marker="# COMMON")
    expect_compile_error(make_error_kernel("common float16"), ERROR_ARGS, coop.CoopTypeError,
                         f"cuda.coop.reduce supports value[0] {common}; use cuda.coop.numba_mlir for float16",
                         site="first_line", line_marker="# HALF")
