"""sm_90 builds of segmented reduce and sum (docs: operations/reduce, "Segmented reductions"; SPEC 8.21) on
numba-cuda-mlir: the reverse segmented scan with positions past valid_items isolated, the compacting form on blocks
ranking the starts in the same scan and scattering the kept totals beside its storage (in SASS: the plain form's
shuffles and one barrier more), warps scanning without scratch unless they compact, results as payloads, scalars,
``(totals, count)`` and ``((t0, t1), count)`` feeding later calls, the count as a uniform condition, float16 and
aggregates with a callable in the qualified namespace. Results are checked by the conformance suite
(tests/conformance/cases.py, both backends, on the GPU)."""
from __future__ import annotations

import numpy as np
from numba_cuda_mlir import cuda

import cuda.coop.numba_mlir as numba_coop
from cuda import coop
from cuda.coop._cub.provider import REUSE_MARK

from compile_helpers import build_kernel, expect_compile_error

THREADS, K = 128, 4
I32 = np.zeros(THREADS * K, np.int32)
F64 = np.zeros(THREADS * K, np.float64)


def _providers(built, family="reduce"):
    parts = built.cpp_source.split('extern "C" __device__ ')
    return [part for part in parts if part.split("(")[0].split()[-1].startswith(f"cuda_coop_{family}_")]


@cuda.jit
def block_forms(src, flags_in, dst, counts, n):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    flags = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    coop.load(block, flags_in, flags)
    totals = coop.sum(block, items, head_flags=flags, valid_items=n)
    kept, count = coop.reduce(block, totals, binary_op="max", head_flags=flags, compact=True)
    coop.store(block, dst, kept, valid_items=count)
    counts[0] = count


def test_a_block_scans_then_compacts_in_one_region_and_keeps_the_reuse_barrier_only_before_another_use():
    built = build_kernel(block_forms, (I32, I32, I32, I32, np.int32(300)), check_scratch=True)
    plain, compact = _providers(built)
    scan = "cuda_coop::BlockSegmentedReverseScan<int, 128, 1, 1>(storage.scan)."
    assert scan + "InclusiveScan(in, out, cut, " in plain
    assert "cuda_coop::isolated_starts(heads, first, (int)valid_items, cut);" in plain
    assert "cuda_coop::isolated_starts(heads, cut);" in compact  # no valid_items: the whole tile
    assert "(int* items, int* head_flags, long long valid_items, int* output, char* scratch" in plain
    assert "(int* items, int* head_flags, long long valid_items, int* output, int* count, char* scratch" in compact
    assert compact.index(scan + "InclusiveScanCounting(in, totals, cut, keep, ") < \
        compact.index("ScatterToBlocked(totals, out, keep, ranks, n);")
    assert "cuda_coop::sync_block();" not in compact and "Rank(" not in compact  # one scan, no barrier between
    assert "cuda_coop::check_range(valid_items, 0, 512);" in compact  # no valid_items: the tile
    assert REUSE_MARK in plain and REUSE_MARK not in compact
    # the scatter's tile beside the scan's raking storage: a (flags, value) pair per thread, one left out after each
    # of warp 0's 32 lanes' slots and the aggregate's, the whole rounded up to 16 bytes
    assert built.metadata["scratch_bytes"] == -(-(4 * THREADS * K + 8 * (THREADS + 32 + 1)) // 16) * 16


@cuda.jit
def compact_only(src, flags_in, dst, counts):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    flags = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    coop.load(block, flags_in, flags)
    totals, count = coop.sum(block, items, head_flags=flags, compact=True)
    coop.store(block, dst, totals, valid_items=count)
    counts[0] = count


@cuda.jit
def scan_only(src, flags_in, dst, counts):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    flags = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    coop.load(block, flags_in, flags)
    totals = coop.sum(block, items, head_flags=flags)
    coop.store(block, dst, totals)


def _count(sass: str, opcode: str) -> int:
    return sum(1 for line in sass.splitlines() if f" {opcode}" in line and "*/" in line)


def test_a_compacting_block_sum_is_one_suffix_scan_and_one_scatter_in_sass():
    """Issue 42's segment sums: the compacted totals cost the segmented scan's own shuffles (the starts are counted
    in its flag word, no second block scan) and one barrier more than the plain segmented sum (the scatter's; the
    scan's storage and the scatter's lie side by side, so no barrier between them); no local memory. The scan
    itself rakes its (flags, value) pairs: a barrier before warp 0 folds them and one after."""
    compact = build_kernel(compact_only, (I32, I32, I32, I32), check_scratch=True).sass()
    plain = build_kernel(scan_only, (I32, I32, I32, I32), check_scratch=True).sass()
    assert (_count(plain, "BAR.SYNC"), _count(compact, "BAR.SYNC")) == (2, 3)
    assert _count(compact, "SHFL.") == _count(plain, "SHFL.") > 0


@cuda.jit
def warp_forms(src, wide, flags_in, dst, wide_out, counts):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    doubles = coop.ThreadData(K, np.float64)
    flags = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    coop.load(block, wide, doubles)
    coop.load(block, flags_in, flags)
    items[0] = coop.sum(coop.this_warp(), items[0], head_flags=items[1] > 0)
    doubles[0] = coop.reduce(coop.this_warp().group_by(8), doubles[0], binary_op="min", head_flags=flags[0])
    coop.store(block, dst, items)
    coop.store(block, wide_out, doubles)


def test_warps_scan_by_shuffles_without_scratch():
    built = build_kernel(warp_forms, (I32, F64, I32, I32, F64, I32))
    warp, eight = _providers(built)
    assert "int cuda_coop_reduce_" in warp and "(int value, unsigned char flag, long long valid_items" in warp
    assert "cuda_coop::WarpSegmentedReverseScan<int, 32, 128, 1, 1>()" in warp
    assert "cuda_coop::WarpSegmentedReverseScan<double, 8, 128, 1, 1>()" in eight
    assert built.metadata["scratch_bytes"] == 0 and "BAR.SYNC" not in built.sass()


def add_pairs(a, b):
    return (a[0] + b[0], a[1] + b[1])


@cuda.jit
def tuples_feed_later_calls(src, wide, flags_in, dst, wide_out, counts):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    doubles = coop.ThreadData(K, np.float64)
    flags = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    coop.load(block, wide, doubles)
    coop.load(block, flags_in, flags)
    (a, b), count = coop.reduce(block, (items, doubles), binary_op=add_pairs, head_flags=flags, compact=True)
    (x, y), lanes = coop.reduce(coop.this_warp(), (items[0], doubles[0]), binary_op=add_pairs,
                                head_flags=flags[0], compact=True)
    p, q = coop.reduce(coop.this_warp(), (items[1], doubles[1]), binary_op=add_pairs, head_flags=flags[1])
    if count > 1:  # the same in every member (SPEC 8.25, G21)
        a[0] = coop.sum(block, x + p)
    b[1] = coop.sum(coop.this_warp(), y + q)
    coop.store(block, dst, a, valid_items=count)
    coop.store(block, wide_out, b, valid_items=count)
    counts[0] = lanes


def test_tuples_return_their_members_and_the_count_which_later_calls_take():
    built = build_kernel(tuples_feed_later_calls, (I32, F64, I32, I32, F64, I32), check_scratch=True)
    payloads, scalars, plain = _providers(built)[:3]
    assert "(int* items0, double* items1, int* head_flags, long long valid_items, int* output0, double* output1, " \
        "int* count, char* scratch" in payloads
    assert "(int value0, double value1, int flag, long long valid_items, int* result0, double* result1, int* count, " \
        "char* scratch" in scalars
    assert "char* scratch, unsigned long long stride, int* result0, double* result1)" in plain
    sums = [s.split("(")[1].split(",")[0] for s in _providers(built)[3:]]
    assert sorted(sums) == ["double value", "int value"]  # the scalars are typed by their places


@cuda.jit
def half_sums(src, flags_in, dst):
    block = coop.this_block()
    items = coop.ThreadData(2, np.float16)
    flags = coop.ThreadData(2, np.int32)
    numba_coop.load(block, src, items)
    coop.load(block, flags_in, flags)
    totals, count = numba_coop.sum(block, items, head_flags=flags, compact=True)
    numba_coop.store(block, dst, totals, valid_items=count)


@cuda.jit
def half_sums_common(src, flags_in, dst):
    block = coop.this_block()
    items = coop.ThreadData(2, np.float16)
    flags = coop.ThreadData(2, np.int32)
    numba_coop.load(block, src, items)
    coop.load(block, flags_in, flags)
    totals, count = coop.sum(block, items, head_flags=flags, compact=True)  # HERE
    numba_coop.store(block, dst, totals, valid_items=count)


def test_float16_is_the_qualified_namespaces():
    halves = np.zeros(THREADS * 2, np.float16)
    flags = np.zeros(THREADS * 2, np.int32)
    built = build_kernel(half_sums, (halves, flags, halves), check_scratch=True)
    assert "cuda_coop::BlockSegmentedReverseScan<__half, 128, 1, 1>" in _providers(built)[0]
    expect_compile_error(half_sums_common, (halves, flags, halves), coop.CoopTypeError,
                         "cuda.coop.sum supports value dtypes int8, int16, int32, int64, uint8, uint16, uint32, "
                         "uint64, float32, float64 through the common API; use cuda.coop.numba_mlir for float16",
                         line_marker="# HERE")


PAIR = np.dtype([("key", np.int32), ("val", np.float32)], align=True)


def add_records(a, b):
    out = a
    out.key = a.key + b.key
    out.val = a.val + b.val
    return out


@cuda.jit
def record_sums(src, flags_in, dst):
    block = coop.this_block()
    items = coop.ThreadData(K)  # PAIR, from src
    flags = coop.ThreadData(K, np.int32)
    numba_coop.load(block, src, items)
    coop.load(block, flags_in, flags)
    totals, count = numba_coop.reduce(block, items, binary_op=add_records, head_flags=flags, compact=True)
    numba_coop.store(block, dst, totals, valid_items=count)


def test_aggregates_take_a_callable_in_the_qualified_namespace():
    pairs = np.zeros(THREADS * K, PAIR)
    built = build_kernel(record_sums, (pairs, I32, pairs.copy()), check_scratch=True)
    assert "cuda_coop::BlockScatterKept<cuda_coop_agg_8_4, 4, 128, 1, 1>" in _providers(built)[0]


@cuda.jit
def divergent_block(src, flags_in, dst):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    flags = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    coop.load(block, flags_in, flags)
    if cuda.threadIdx.x < 64:
        items[0] = coop.sum(block, items[0], head_flags=flags[0])  # HERE
    coop.store(block, dst, items)


def test_g21_a_block_segmented_sum_must_be_reached_by_every_thread():
    expect_compile_error(divergent_block, (I32, I32, I32), coop.CoopValueError,
                         "cuda.coop.sum on block groups must be reached by every member", line_marker="# HERE")


@cuda.jit
def unpacked_wrongly(src, flags_in, dst):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    flags = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    coop.load(block, flags_in, flags)
    a, b, c = coop.reduce(block, (items, items), binary_op=add_pairs, head_flags=flags, compact=True)  # HERE
    coop.store(block, dst, a)


def test_a_compacted_tuple_is_unpacked_as_the_totals_and_the_count():
    expect_compile_error(unpacked_wrongly, (I32, I32, I32), coop.CoopTypeError,
                         "cuda.coop.reduce returns ((totals0, totals1), count); unpack it into 2 names, not 3",
                         line_marker="# HERE")
