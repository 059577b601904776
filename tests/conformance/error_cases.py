"""The shared error corpus: common-API mistakes written once, compiled by every backend (SPEC §0 rule 4, §10).

Each case is a conformance-style body (``body(bid, *operands)``, wrapped by each backend's harness) holding one
mistake on the line marked ``# HERE``, and the error every backend must report: the exact public class and a
fragment of the catalogue's wording (docs: errors); a name a namespace lacks is Python's own ``AttributeError``. The
test (``test_error_corpus.py``) also checks that the message names this file and the marked line, and keeps compiler
text out of its first line.
"""
from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from cuda import coop

from .cases import Array, Case, qualified, staged

THREADS = 128
K = 4
N = 2 * THREADS * K


@dataclass(frozen=True)
class ErrorCase:
    id: str
    body: Callable[..., None]
    error: type
    fragment: str
    block: tuple[int, int, int] = (THREADS, 1, 1)
    src_dtype: Any = np.int32
    dst_dtype: Any = np.int32
    #: why the backends' first lines may differ in words (None: they must not); G21 names the per-thread source as
    #: each compiler sees it
    words_differ: str | None = None

    @property
    def case(self) -> Case:
        """The case as the harnesses compile it (no oracle: it never runs)."""
        operands = (Array("src", self.src_dtype, N, "in", lambda rng: np.ones(N, self.src_dtype)),
                    Array("dst", self.dst_dtype, N, "out"))
        return Case(f"error-{self.id}", "errors", self.body, self.block, 2, operands, lambda values: {})

    @property
    def line(self) -> int:
        lines, start = inspect.getsourcelines(self.body)
        return start + next(i for i, text in enumerate(lines) if "# HERE" in text)


# ---- C5: unknown keywords, options passed positionally
def c5_unknown_keyword(bid, src, dst):
    items = coop.ThreadData(K, np.int32)
    coop.load(coop.this_block(), src, items, count=4)  # HERE
    coop.store(coop.this_block(), dst, items)


def c5_option_positional(bid, src, dst):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    out = coop.exchange(block, items, "blocked_to_striped")  # HERE
    coop.store(block, dst, out)


def c5_factory_with_a_size(bid, src, dst):
    warp = coop.this_warp(32)  # HERE
    items = coop.ThreadData(K, np.int32)
    coop.load(warp, src, items)
    coop.store(warp, dst, items)


def c5_scan_keyword(bid, src, dst):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    out = coop.inclusive_sum(block, items, init=3)  # HERE
    coop.store(block, dst, out)


# ---- C3: a qualified-only option in a common call
def c3_blocked_to_striped(bid, src, dst):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    out = coop.radix_sort_keys(block, items, blocked_to_striped=True)  # HERE
    coop.store(block, dst, out)


def c3_argmax_broadcast(bid, src, dst):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    value, index = coop.argmax(block, items, broadcast=False)  # HERE
    coop.store(block, dst, items)


# ---- C1/C2: selectors
def c1_unknown_load_algorithm(bid, src, dst):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items, algorithm="sideways")  # HERE
    coop.store(block, dst, items)


def c1_unknown_exchange_mode(bid, src, dst):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    out = coop.exchange(block, items, mode="inside_out")  # HERE
    coop.store(block, dst, out)


def c1_unknown_operator(bid, src, dst):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    out = coop.inclusive_scan(block, items, scan_op="modulo")  # HERE
    coop.store(block, dst, out)


# ---- groups
def g_not_a_group(bid, src, dst):
    items = coop.ThreadData(K, np.int32)
    coop.load(5, src, items)  # HERE
    coop.store(coop.this_block(), dst, items)


def g_bad_group_by(bid, src, dst):
    warps = coop.this_warp().group_by(5)  # HERE
    items = coop.ThreadData(K, np.int32)
    coop.load(warps, src, items)
    coop.store(coop.this_block(), dst, items)


# ---- payloads
def p_zero_items(bid, src, dst):
    items = coop.ThreadData(0, np.int32)  # HERE
    coop.load(coop.this_block(), src, items)
    coop.store(coop.this_block(), dst, items)


def p_too_many_items(bid, src, dst):
    items = coop.ThreadData(5000, np.int32)  # HERE
    coop.load(coop.this_block(), src, items)
    coop.store(coop.this_block(), dst, items)


def p_literal_index_out_of_range(bid, src, dst):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    items[K] = 1  # HERE
    coop.store(block, dst, items)


def p_load_dtype_mismatch(bid, src, dst):
    block = coop.this_block()
    items = coop.ThreadData(K, np.float32)
    coop.load(block, src, items)  # HERE
    coop.store(block, dst, items)


def p_histogram_of_floats(bid, src, dst):
    block = coop.this_block()
    items = coop.ThreadData(K, np.float32)
    coop.load(block, src, items)
    counts = coop.histogram(block, items, bins=THREADS)  # HERE
    coop.store(block, dst, counts)


def p12_counter_dtype_string(bid, src, dst):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    counts = coop.histogram(block, items, bins=THREADS, counter_dtype="int32")  # HERE
    coop.store(block, dst, counts)


# ---- controls
def c_bins_not_a_constant(bid, src, dst):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    counts = coop.histogram(block, items, bins=bid)  # HERE
    coop.store(block, dst, counts)


def c_merge_sort_needs_power_of_two(bid, src, dst):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    out = coop.merge_sort_keys(block, items)  # HERE
    coop.store(block, dst, out)


# ---- storage
def s6_temp_storage_too_small(bid, src, dst):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    storage = coop.TempStorage(16)
    out = coop.exclusive_sum(block, items, temp_storage=storage)  # HERE
    coop.store(block, dst, out)


# ---- more groups, controls and payloads (from the numba-cuda-mlir corpus, written for both backends)
def g3_warp_radix_sort(bid, src, dst):
    warp = coop.this_warp()
    keys = coop.ThreadData(K, np.int32)
    coop.load(warp, src, keys)
    out = coop.radix_sort_keys(warp, keys)  # HERE
    coop.store(warp, dst, out)


def g11_group_by_too_wide(bid, src, dst):
    group = coop.this_warp().group_by(64)  # HERE
    items = coop.ThreadData(K, np.int32)
    coop.load(group, src, items)
    coop.store(group, dst, items)


def g17_unknown_level(bid, src, dst):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    items[0] = block.rank(level="lane")  # HERE
    coop.store(block, dst, items)


def c7_radix_end_bit(bid, src, dst):
    block = coop.this_block()
    keys = coop.ThreadData(K, np.int32)
    coop.load(block, src, keys)
    out = coop.radix_sort_keys(block, keys, end_bit=33)  # HERE
    coop.store(block, dst, out)


def c7_topk_k_above_tile(bid, src, dst):
    block = coop.this_block()
    keys = coop.ThreadData(K, np.int32)
    coop.load(block, src, keys)
    out = coop.topk_max_keys(block, keys, k=THREADS * K + 1)  # HERE
    coop.store(block, dst, out)


def c12_warp_reduce_algorithm(bid, src, dst):
    warp = coop.this_warp()
    items = coop.ThreadData(K, np.int32)
    coop.load(warp, src, items)
    items[0] = coop.reduce(warp, items, binary_op="max", algorithm="raking")  # HERE
    coop.store(warp, dst, items)


def o6_max_scan_without_initial_value(bid, src, dst):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    out = coop.exclusive_scan(block, items, scan_op="max")  # HERE
    coop.store(block, dst, out)


def o7_inclusive_initial_value(bid, src, dst):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    out = coop.scan(block, items, mode="inclusive", scan_op="min", initial_value=0)  # HERE
    coop.store(block, dst, out)


def o8_descending_int(bid, src, dst):
    block = coop.this_block()
    keys = coop.ThreadData(K, np.int32)
    coop.load(block, src, keys)
    out = coop.radix_sort_keys(block, keys, descending=1)  # HERE
    coop.store(block, dst, out)


def o10_radix_bits_zero(bid, src, dst):
    block = coop.this_block()
    keys = coop.ThreadData(K, np.int32)
    coop.load(block, src, keys)
    ranks = coop.radix_rank(block, keys, radix_bits=0)  # HERE
    coop.store(block, dst, ranks)


def p6_negative_items(bid, src, dst):
    items = coop.ThreadData(-3, np.int32)  # HERE
    coop.load(coop.this_block(), src, items)
    coop.store(coop.this_block(), dst, items)


def p13_thread_data_alignment(bid, src, dst):
    items = coop.ThreadData(K, np.int32, alignment=12)  # HERE
    coop.load(coop.this_block(), src, items)
    coop.store(coop.this_block(), dst, items)


def p13_thread_data_alignment_type(bid, src, dst):
    items = coop.ThreadData(K, np.int32, alignment=16.0)  # HERE
    coop.load(coop.this_block(), src, items)
    coop.store(coop.this_block(), dst, items)


def g17_rank_as_unknown_level(bid, src, dst):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    items[0] = block.rank_as(np.int32, level="lane")  # HERE
    coop.store(block, dst, items)


def g18_rank_as_float_dtype(bid, src, dst):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    items[0] = block.rank_as(np.float32)  # HERE
    coop.store(block, dst, items)


def g18_count_as_string_dtype(bid, src, dst):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    items[0] = block.count_as("int32")  # HERE
    coop.store(block, dst, items)


# ---- C5 on group methods: arguments bound to cuda.coop.ThreadGroup's signatures on every backend (issue 41; the CuTe
# DSL backend reported Python's own TypeError)
def c5_rank_keyword(bid, src, dst):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    items[0] = block.rank(lvl="warp")  # HERE
    coop.store(block, dst, items)


def c5_group_by_option_positional(bid, src, dst):
    lanes = coop.this_warp().group_by(8, False)  # HERE
    items = coop.ThreadData(K, np.int32)
    coop.load(lanes, src, items)
    coop.store(lanes, dst, items)


def c5_sync_positional(bid, src, dst):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    block.sync(True)  # HERE
    coop.store(block, dst, items)


def c5_group_by_without_count(bid, src, dst):
    lanes = coop.this_warp().group_by()  # HERE
    items = coop.ThreadData(K, np.int32)
    coop.load(lanes, src, items)
    coop.store(lanes, dst, items)


# ---- group_by's checks in one order on every backend (issue 41): the parent, then count, then exhaustive
# (numba-cuda-mlir reported a run-time count or exhaustive first; both reported exhaustive before a count of 0)
def g9_group_by_runtime_count_on_thread(bid, src, dst):
    coop.this_thread().group_by(bid + 1)  # HERE
    items = coop.ThreadData(K, np.int32)
    coop.load(coop.this_block(), src, items)
    coop.store(coop.this_block(), dst, items)


def g10_group_by_runtime_exhaustive_nested(bid, src, dst):
    coop.this_block().group_by(2).group_by(2, exhaustive=bid > 1)  # HERE
    items = coop.ThreadData(K, np.int32)
    coop.load(coop.this_block(), src, items)
    coop.store(coop.this_block(), dst, items)


def g7_group_by_zero_before_exhaustive(bid, src, dst):
    lanes = coop.this_warp().group_by(0, exhaustive=1)  # HERE
    items = coop.ThreadData(K, np.int32)
    coop.load(lanes, src, items)
    coop.store(lanes, dst, items)


def p1_common_float16_source(bid, src, dst):
    block = coop.this_block()
    items = coop.ThreadData(K)
    coop.load(block, src, items)  # HERE
    coop.store(block, dst, items)


def p2_complex_payload(bid, src, dst):
    block = coop.this_block()
    items = coop.ThreadData(K, np.complex64)
    coop.load(block, src, items)  # HERE
    coop.store(block, dst, items)


# ---- C7-C12: static controls out of range, literals not representable, options that need one another
def c7_warp_valid_items_above_tile(bid, src, dst):
    warp = coop.this_warp()
    items = coop.ThreadData(K, np.int32)
    coop.load(warp, src, items, valid_items=129, oob_default=0)  # HERE
    coop.store(warp, dst, items)


def c7_logical_warp_store_valid_items(bid, src, dst):
    lanes = coop.this_warp().group_by(8)
    items = coop.ThreadData(K, np.int32)
    coop.load(lanes, src, items)
    coop.store(lanes, dst, items, valid_items=33)  # HERE


def c7_sum_valid_items_zero(bid, src, dst):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    items[0] = coop.sum(block, items[0], valid_items=0)  # HERE
    coop.store(block, dst, items)


def c8_warp_store_offset(bid, src, dst):
    warp = coop.this_warp()
    items = coop.ThreadData(K, np.int32)
    coop.load(warp, src, items)
    coop.store(warp, dst, items, offset=-2)  # HERE


def c8_run_length_destination_offset(bid, src, dst):
    block = coop.this_block()
    values = coop.ThreadData(2, np.int32)
    lengths = coop.ThreadData(2, np.int32)
    coop.load(block, src, values)
    coop.load(block, src, lengths)
    coop.run_length_decode_into(block, values, lengths, dst, decoded_items_per_thread=2,  # HERE
                                destination_offset=-1)


def c16_operator_defined_in_the_body(bid, src, dst):
    def mine(a, b):
        return a + b

    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    coop.store(block, dst, coop.inclusive_scan(block, items, scan_op=mine))  # HERE


def p14_iterating_a_payload(bid, src, dst):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    total = items[0] * 0
    for item in items:  # HERE
        total += item
    dst[block.rank()] = total


def p14_slicing_a_payload(bid, src, dst):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    half = items[0:2]  # HERE
    dst[block.rank()] = half[0]


def c10_fractional_oob_default(bid, src, dst):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items, valid_items=100, oob_default=1.5)  # HERE
    coop.store(block, dst, items)


def c10_negative_unsigned_initial_value(bid, src, dst):
    block = coop.this_block()
    items = coop.ThreadData(K, np.uint32)
    coop.load(block, src, items)
    out = coop.exclusive_scan(block, items, scan_op="min", initial_value=-1)  # HERE
    coop.store(block, dst, out)


# ---- C9: a NumPy scalar is typed (SPEC 2.6): of another dtype than the payload it is refused, constant or not, on
# every backend (the CuTe DSL once took its value as an untyped literal)
OOB_INT64 = np.int64(7)
OOB_FLOAT64 = np.float64(0)


def c9_numpy_oob_default_constant(bid, src, dst):
    block = coop.this_block()
    items = coop.ThreadData(K, np.float32)
    coop.load(block, src, items, valid_items=100, oob_default=OOB_FLOAT64)  # HERE
    coop.store(block, dst, items)


def c9_numpy_oob_default_merge_sort(bid, src, dst):
    block = coop.this_block()
    keys = coop.ThreadData(K, np.int32)
    coop.load(block, src, keys)
    out = coop.merge_sort_keys(block, keys, valid_items=100, oob_default=np.int64(7))  # HERE
    coop.store(block, dst, out)


def c9_numpy_oob_default_radix_sort(bid, src, dst):
    block = coop.this_block()
    keys = coop.ThreadData(K, np.uint32)
    coop.load(block, src, keys)
    out = coop.radix_sort_keys(block, keys, valid_items=100, oob_default=OOB_INT64)  # HERE
    coop.store(block, dst, out)


def c11_oob_default_without_valid_items(bid, src, dst):
    warp = coop.this_warp()
    items = coop.ThreadData(K, np.int32)
    coop.load(warp, src, items, oob_default=-1)  # HERE
    coop.store(warp, dst, items)


# ---- partial tiles of histogram and radix sort (SPEC 8.23): C5, C6, C7, C10, C11
def c5_histogram_oob_default(bid, src, dst):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    counts = coop.histogram(block, items, bins=THREADS, valid_items=100, oob_default=0)  # HERE
    coop.store(block, dst, counts)


def c6_histogram_float_valid_items(bid, src, dst):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    counts = coop.histogram(block, items, bins=THREADS, algorithm="sort", valid_items=1.5)  # HERE
    coop.store(block, dst, counts)


def c7_histogram_valid_items_above_tile(bid, src, dst):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    counts = coop.histogram(block, items, bins=THREADS, valid_items=THREADS * K + 1)  # HERE
    coop.store(block, dst, counts)


def c7_radix_sort_negative_valid_items(bid, src, dst):
    block = coop.this_block()
    keys = coop.ThreadData(K, np.int32)
    coop.load(block, src, keys)
    k, v = coop.radix_sort_pairs(block, keys, keys, valid_items=-1, oob_default=0)  # HERE
    coop.store(block, dst, k)


def c10_radix_sort_oob_default_literal(bid, src, dst):
    block = coop.this_block()
    keys = coop.ThreadData(K, np.uint32)
    coop.load(block, src, keys)
    out = coop.radix_sort_keys(block, keys, valid_items=10, oob_default=2**32)  # HERE
    coop.store(block, dst, out)


def c11_radix_sort_oob_default_alone(bid, src, dst):
    block = coop.this_block()
    keys = coop.ThreadData(K, np.int32)
    coop.load(block, src, keys)
    out = coop.radix_sort_keys(block, keys, descending=True, oob_default=0)  # HERE
    coop.store(block, dst, out)


def c12_warp_scan_algorithm(bid, src, dst):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    items[0] = coop.exclusive_sum(coop.this_warp(), items[0], algorithm="warp_scans")  # HERE
    coop.store(block, dst, items)


# ---- O-rows: options the operation does not take in this form
def o1_shuffle_distance_two(bid, src, dst):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    out = coop.shuffle(block, items, mode="up", distance=2)  # HERE
    coop.store(block, dst, out)


def o2_sum_payload_valid_items(bid, src, dst):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    items[0] = coop.sum(block, items, valid_items=64)  # HERE
    coop.store(block, dst, items)


def larger(a, b):
    return max(a, b)


def o3_commutative_only_callable(bid, src, dst):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    items[0] = coop.reduce(block, items, binary_op=larger, algorithm="raking_commutative_only")  # HERE
    coop.store(block, dst, items)


def o5_warp_scan_payload(bid, src, dst):
    warp = coop.this_warp()
    items = coop.ThreadData(K, np.int32)
    coop.load(warp, src, items)
    out = coop.inclusive_sum(warp, items)  # HERE
    coop.store(warp, dst, out)


def o6_general_scan_without_initial_value(bid, src, dst):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    items[0] = coop.scan(coop.this_warp(), items[0], mode="exclusive", scan_op="*")  # HERE
    coop.store(block, dst, items)


def o9_valid_items_without_oob_default(bid, src, dst):
    block = coop.this_block()
    keys = coop.ThreadData(K, np.int32)
    coop.load(block, src, keys)
    out = coop.merge_sort_keys(block, keys, valid_items=200)  # HERE
    coop.store(block, dst, out)


def o9_oob_default_without_valid_items(bid, src, dst):
    lanes = coop.this_warp().group_by(16)
    keys = coop.ThreadData(K, np.int32)
    coop.load(lanes, src, keys)
    out = coop.merge_sort_keys(lanes, keys, oob_default=2**31 - 1)  # HERE
    coop.store(lanes, dst, out)


def o10_radix_bits_mismatch(bid, src, dst):
    block = coop.this_block()
    keys = coop.ThreadData(K, np.uint32)
    coop.load(block, src, keys)
    ranks = coop.radix_rank(block, keys, begin_bit=4, end_bit=8, radix_bits=3)  # HERE
    coop.store(block, dst, ranks)


def o10_rank_too_wide(bid, src, dst):
    block = coop.this_block()
    keys = coop.ThreadData(K, np.uint32)
    coop.load(block, src, keys)
    ranks = coop.radix_rank(block, keys, begin_bit=0, end_bit=12)  # HERE
    coop.store(block, dst, ranks)


def o10_runtime_begin_bit(bid, src, dst):
    block = coop.this_block()
    keys = coop.ThreadData(K, np.uint32)
    coop.load(block, src, keys)
    ranks = coop.radix_rank(block, keys, begin_bit=bid % 4)  # HERE
    coop.store(block, dst, ranks)


# ---- groups, payload pairs, storage and selectors in more calls
def g3_warp_shuffle(bid, src, dst):
    warp = coop.this_warp()
    items = coop.ThreadData(K, np.int32)
    coop.load(warp, src, items)
    out = coop.shuffle(warp, items, mode="up")  # HERE
    coop.store(warp, dst, out)


def g3_thread_topk(bid, src, dst):
    block = coop.this_block()
    keys = coop.ThreadData(K, np.int32)
    coop.load(block, src, keys)
    out = coop.topk_min_keys(coop.this_thread(), keys, k=3)  # HERE
    coop.store(block, dst, out)


def g5_warp_sum_partial_warp(bid, src, dst):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    items[0] = coop.sum(coop.this_warp(), items[0])  # HERE
    coop.store(block, dst, items)


def g16_topk_two_dimensional_block(bid, src, dst):
    block = coop.this_block()
    keys = coop.ThreadData(K, np.int32)
    coop.load(block, src, keys)
    out = coop.topk_max_keys(block, keys, k=3)  # HERE
    coop.store(block, dst, out)


def p3_bit_and_of_floats(bid, src, dst):
    block = coop.this_block()
    items = coop.ThreadData(K, np.float32)
    coop.load(block, src, items)
    total = coop.reduce(block, items, binary_op="bit_and")  # HERE
    items[0] = total
    coop.store(block, dst, items)


def p3_xor_scan_of_floats(bid, src, dst):
    block = coop.this_block()
    items = coop.ThreadData(K, np.float32)
    coop.load(block, src, items)
    out = coop.inclusive_scan(block, items, scan_op="bit_xor")  # HERE
    coop.store(block, dst, out)


def p7_merge_pairs_extents(bid, src, dst):
    block = coop.this_block()
    keys = coop.ThreadData(K, np.int32)
    values = coop.ThreadData(2, np.int32)
    coop.load(block, src, keys)
    coop.load(block, src, values)
    k, v = coop.merge_sort_pairs(block, keys, values)  # HERE
    coop.store(block, dst, k)


def s2_warp_sum_temp_storage(bid, src, dst):
    block = coop.this_block()
    storage = coop.TempStorage(1024, alignment=16)
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    items[0] = coop.sum(coop.this_warp(), items[0], temp_storage=storage)  # HERE
    coop.store(block, dst, items)


def s2_logical_warp_exchange_temp_storage(bid, src, dst):
    lanes = coop.this_warp().group_by(8)
    storage = coop.TempStorage(4096, alignment=16)
    items = coop.ThreadData(K, np.int32)
    coop.load(lanes, src, items)
    out = coop.exchange(lanes, items, temp_storage=storage)  # HERE
    coop.store(lanes, dst, out)


def c5_sum_binary_op(bid, src, dst):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    items[0] = coop.sum(block, items, binary_op="max")  # HERE
    coop.store(block, dst, items)


def c5_store_positional_option(bid, src, dst):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    coop.store(block, dst, items, "direct")  # HERE


def c1_scan_mode_not_a_string(bid, src, dst):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    out = coop.scan(block, items, mode=1)  # HERE
    coop.store(block, dst, out)


def c2_scan_algorithm(bid, src, dst):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    out = coop.exclusive_sum(block, items, algorithm="ripple")  # HERE
    coop.store(block, dst, out)


def c3_warp_striped_mode(bid, src, dst):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    out = coop.exchange(block, items, mode="warp_striped_to_blocked")  # HERE
    coop.store(block, dst, out)


def c3_aggregate_output(bid, src, dst):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    total = coop.ThreadData(1, np.int32)
    coop.load(block, src, items)
    out = coop.exclusive_sum(block, items, aggregate_output=total)  # HERE
    coop.store(block, dst, out)


# ---- reverse scans (SPEC 8.17)
def reverse_not_a_bool(bid, src, dst):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    out = coop.inclusive_sum(block, items, reverse=1)  # HERE
    coop.store(block, dst, out)


def reverse_positional(bid, src, dst):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    out = coop.exclusive_sum(block, items, "raking", True)  # HERE
    coop.store(block, dst, out)


# ---- segmented scans (SPEC 8.17)
def head_flags_of_floats(bid, src, dst):
    block = coop.this_block()
    items = coop.ThreadData(K, np.float32)
    heads = coop.ThreadData(K, np.float32)
    coop.load(block, src, items)
    coop.load(block, src, heads)
    out = coop.inclusive_sum(block, items, head_flags=heads)  # HERE
    coop.store(block, dst, out)


def head_flag_of_a_float_scalar(bid, src, dst):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    heads = coop.ThreadData(K, np.float32)
    coop.load(block, src, items)
    heads[0] = 1.0
    items[0] = coop.inclusive_sum(coop.this_warp(), items[0], head_flags=heads[0])  # HERE
    coop.store(block, dst, items)


def head_flags_of_another_extent(bid, src, dst):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    heads = coop.ThreadData(2, np.int32)
    coop.load(block, src, items)
    heads[0] = 1
    heads[1] = 0
    out = coop.exclusive_sum(block, items, head_flags=heads)  # HERE
    coop.store(block, dst, out)


# ---- argmax / argmin (SPEC 8.16)
def argmax_float_indices(bid, src, dst):
    block = coop.this_block()
    items = coop.ThreadData(K, np.float32)
    where = coop.ThreadData(K, np.float32)
    coop.load(block, src, items)
    coop.load(block, src, where)
    v, i = coop.argmax(block, items, indices=where)  # HERE
    items[0] = v
    coop.store(block, dst, items)


def argmin_valid_items_above_tile(bid, src, dst):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    v, i = coop.argmin(block, items, valid_items=1000)  # HERE
    items[0] = v
    coop.store(block, dst, items)


def argmax_positional_option(bid, src, dst):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    v, i = coop.argmax(block, items, 5)  # HERE
    items[0] = v
    coop.store(block, dst, items)


# ---- broadcast (SPEC 8.19)
def broadcast_thread_group(bid, src, dst):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    items[0] = coop.broadcast(coop.this_thread(), items[0])  # HERE
    coop.store(block, dst, items)


def broadcast_warp_in_partial_warp(bid, src, dst):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    out = coop.broadcast(coop.this_warp(), items, src_rank=3)  # HERE
    coop.store(block, dst, out)


def broadcast_src_rank_float_literal(bid, src, dst):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    out = coop.broadcast(block, items, src_rank=1.5)  # HERE
    coop.store(block, dst, out)


def broadcast_src_rank_float_value(bid, src, dst):
    block = coop.this_block()
    items = coop.ThreadData(K, np.float32)
    coop.load(block, src, items)
    out = coop.broadcast(block, items, src_rank=items[0])  # HERE
    coop.store(block, dst, out)


def broadcast_src_rank_past_the_block(bid, src, dst):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    out = coop.broadcast(block, items, src_rank=THREADS)  # HERE
    coop.store(block, dst, out)


def broadcast_src_rank_negative(bid, src, dst):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    items[0] = coop.broadcast(coop.this_warp(), items[0], src_rank=-1)  # HERE
    coop.store(block, dst, items)


def broadcast_src_rank_past_the_logical_warp(bid, src, dst):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    out = coop.broadcast(coop.this_warp().group_by(8), items, src_rank=8)  # HERE
    coop.store(block, dst, out)


def broadcast_complex_payload(bid, src, dst):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    pairs = coop.ThreadData(K, np.complex64)
    coop.load(block, src, items)
    coop.broadcast(block, pairs)  # HERE
    coop.store(block, dst, items)


def broadcast_nine_values(bid, src, dst):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    x = items[0]
    coop.broadcast(block, (x, x, x, x, x, x, x, x, x))  # HERE
    coop.store(block, dst, items)


def broadcast_warp_temp_storage(bid, src, dst):
    block = coop.this_block()
    storage = coop.TempStorage()
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    out = coop.broadcast(coop.this_warp(), items, temp_storage=storage)  # HERE
    coop.store(block, dst, out)


def broadcast_positional_src_rank(bid, src, dst):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    out = coop.broadcast(block, items, 3)  # HERE
    coop.store(block, dst, out)


# ---- select and partition (SPEC 8.20)
def select_thread_group(bid, src, dst):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    kept, count = coop.select(coop.this_thread(), items[0], items[1] > 0)  # HERE
    items[0] = kept
    coop.store(block, dst, items)


def select_odd_logical_warp(bid, src, dst):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    heads = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    coop.load(block, src, heads)
    lanes = coop.this_warp().group_by(3, exhaustive=False)
    kept, count = coop.select(lanes, items, heads)  # HERE
    coop.store(block, dst, kept)


def partition_warp_in_partial_warp(bid, src, dst):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    heads = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    coop.load(block, src, heads)
    parted, count = coop.partition(coop.this_warp(), items, heads)  # HERE
    coop.store(block, dst, parted)


def select_float_flags(bid, src, dst):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    heads = coop.ThreadData(K, np.float32)
    coop.load(block, src, items)
    for i in range(K):
        heads[i] = items[i] * np.float32(0.5)
    kept, count = coop.select(block, items, heads)  # HERE
    coop.store(block, dst, kept)


def select_scalar_flag_for_a_payload(bid, src, dst):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    kept, count = coop.select(block, items, items[0] > 0)  # HERE
    coop.store(block, dst, kept)


def select_flags_of_another_extent(bid, src, dst):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    heads = coop.ThreadData(2, np.int32)
    coop.load(block, src, items)
    heads[0] = 1
    heads[1] = 0
    kept, count = coop.select(block, items, heads)  # HERE
    coop.store(block, dst, kept)


def partition_tuple_mixing_shapes(bid, src, dst):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    heads = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    coop.load(block, src, heads)
    (parted, first), count = coop.partition(block, (items, items[0]), heads)  # HERE
    coop.store(block, dst, parted)


def select_nine_items(bid, src, dst):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    heads = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    coop.load(block, src, heads)
    coop.select(block, (items, items, items, items, items, items, items, items, items), heads)  # HERE
    coop.store(block, dst, items)


def select_valid_items_float(bid, src, dst):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    heads = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    coop.load(block, src, heads)
    kept, count = coop.select(block, items, heads, valid_items=2.5)  # HERE
    coop.store(block, dst, kept)


def partition_valid_items_past_the_tile(bid, src, dst):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    heads = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    coop.load(block, src, heads)
    parted, count = coop.partition(coop.this_warp().group_by(8), items, heads, valid_items=33)  # HERE
    coop.store(block, dst, parted)


def select_valid_items_negative(bid, src, dst):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    heads = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    coop.load(block, src, heads)
    kept, count = coop.select(block, items, heads, valid_items=-1)  # HERE
    coop.store(block, dst, kept)


def select_warp_temp_storage(bid, src, dst):
    block = coop.this_block()
    storage = coop.TempStorage()
    items = coop.ThreadData(K, np.int32)
    heads = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    coop.load(block, src, heads)
    kept, count = coop.select(coop.this_warp(), items, heads, temp_storage=storage)  # HERE
    coop.store(block, dst, kept)


def select_positional_valid_items(bid, src, dst):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    heads = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    coop.load(block, src, heads)
    kept, count = coop.select(block, items, heads, 7)  # HERE
    coop.store(block, dst, kept)


# ---- segmented reduce and sum (SPEC 8.21)
def segmented_sum_warp_payload(bid, src, dst):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    heads = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    coop.load(block, src, heads)
    totals = coop.sum(coop.this_warp(), items, head_flags=heads)  # HERE
    coop.store(block, dst, totals)


def segmented_sum_without_broadcast(bid, src, dst):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    heads = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    coop.load(block, src, heads)
    totals = coop.sum(block, items, head_flags=heads, broadcast=False)  # HERE
    coop.store(block, dst, totals)


def segmented_reduce_with_algorithm(bid, src, dst):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    heads = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    coop.load(block, src, heads)
    totals = coop.reduce(block, items, binary_op="max", head_flags=heads, algorithm="raking")  # HERE
    coop.store(block, dst, totals)


def compact_without_head_flags(bid, src, dst):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    items[0] = coop.sum(block, items, compact=True)  # HERE
    coop.store(block, dst, items)


def compact_at_run_time(bid, src, dst):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    heads = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    coop.load(block, src, heads)
    totals, count = coop.sum(block, items, head_flags=heads, compact=bid > 0)  # HERE
    coop.store(block, dst, totals)


def segmented_sum_float_flags(bid, src, dst):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    heads = coop.ThreadData(K, np.float32)
    coop.load(block, src, items)
    for i in range(K):
        heads[i] = items[i] * np.float32(0.5)
    totals = coop.sum(block, items, head_flags=heads)  # HERE
    coop.store(block, dst, totals)


def segmented_sum_flags_of_another_extent(bid, src, dst):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    heads = coop.ThreadData(2, np.int32)
    coop.load(block, src, items)
    heads[0] = 1
    heads[1] = 0
    totals = coop.sum(block, items, head_flags=heads)  # HERE
    coop.store(block, dst, totals)


def segmented_sum_valid_items_past_the_tile(bid, src, dst):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    items[0] = coop.sum(coop.this_warp(), items[0], head_flags=items[1] > 0, valid_items=33)  # HERE
    coop.store(block, dst, items)


def segmented_sum_odd_logical_warp(bid, src, dst):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    lanes = coop.this_warp().group_by(24, exhaustive=False)
    items[0] = coop.sum(lanes, items[0], head_flags=items[1] > 0)  # HERE
    coop.store(block, dst, items)


def segmented_sum_warp_temp_storage(bid, src, dst):
    block = coop.this_block()
    storage = coop.TempStorage()
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    items[0] = coop.sum(coop.this_warp(), items[0], head_flags=items[1] > 0, temp_storage=storage)  # HERE
    coop.store(block, dst, items)


# ---- several operands (SPEC 8.18)
def add_pairs(a, b):
    return (a[0] + b[0], a[1] + b[1])


def one_value(a, b):
    return (a[0] + b[0],)


def three_values(a, b):
    return (a[0] + b[0], a[1] + b[1], a[0] - b[1])


def tuple_of_other_extents(bid, src, dst):
    block = coop.this_block()
    a = coop.ThreadData(K, np.int32)
    b = coop.ThreadData(2, np.int32)
    coop.load(block, src, a)
    b[0] = 1
    b[1] = 2
    x, y = coop.inclusive_scan(block, (a, b), scan_op=add_pairs)  # HERE
    coop.store(block, dst, x)


def tuple_mixing_payloads_and_scalars(bid, src, dst):
    block = coop.this_block()
    a = coop.ThreadData(K, np.int32)
    coop.load(block, src, a)
    x, y = coop.reduce(block, (a, a[0]), binary_op=add_pairs)  # HERE
    coop.store(block, dst, a)


def tuple_operator_of_another_arity(bid, src, dst):
    block = coop.this_block()
    a = coop.ThreadData(K, np.int32)
    b = coop.ThreadData(K, np.int32)
    coop.load(block, src, a)
    coop.load(block, src, b)
    x, y = coop.inclusive_scan(block, (a, b), scan_op=one_value)  # HERE
    coop.store(block, dst, x)


def tuple_operator_returning_more(bid, src, dst):
    block = coop.this_block()
    a = coop.ThreadData(K, np.int32)
    b = coop.ThreadData(K, np.int32)
    coop.load(block, src, a)
    coop.load(block, src, b)
    x, y = coop.inclusive_scan(block, (a, b), scan_op=three_values)  # HERE
    coop.store(block, dst, x)


def tuple_reduce_operator_returning_more(bid, src, dst):
    block = coop.this_block()
    a = coop.ThreadData(K, np.int32)
    b = coop.ThreadData(K, np.int32)
    coop.load(block, src, a)
    coop.load(block, src, b)
    x, y = coop.reduce(block, (a, b), binary_op=three_values)  # HERE
    a[0] = x
    coop.store(block, dst, a)


def tuple_initial_value_of_another_arity(bid, src, dst):
    block = coop.this_block()
    a = coop.ThreadData(K, np.int32)
    b = coop.ThreadData(K, np.int32)
    coop.load(block, src, a)
    coop.load(block, src, b)
    x, y = coop.exclusive_scan(block, (a, b), scan_op=add_pairs, initial_value=(0, 0, 0))  # HERE
    coop.store(block, dst, x)


def tuple_with_an_operator_string(bid, src, dst):
    block = coop.this_block()
    a = coop.ThreadData(K, np.int32)
    b = coop.ThreadData(K, np.int32)
    coop.load(block, src, a)
    coop.load(block, src, b)
    x, y = coop.inclusive_scan(block, (a, b), scan_op="sum")  # HERE
    coop.store(block, dst, x)


def tuple_to_a_sum(bid, src, dst):
    block = coop.this_block()
    a = coop.ThreadData(K, np.int32)
    b = coop.ThreadData(K, np.int32)
    coop.load(block, src, a)
    coop.load(block, src, b)
    x, y = coop.inclusive_sum(block, (a, b))  # HERE
    coop.store(block, dst, x)


def tuple_to_the_reduce_sum(bid, src, dst):
    block = coop.this_block()
    a = coop.ThreadData(K, np.int32)
    b = coop.ThreadData(K, np.int32)
    coop.load(block, src, a)
    coop.load(block, src, b)
    x, y = coop.sum(block, (a, b))  # HERE
    coop.store(block, dst, a)


# ---- a name cuda.coop lacks: Python's AttributeError, with the nearest name and the line
def misspelt_operation(bid, src, dst):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    out = coop.exclusive_summ(block, items)  # HERE
    coop.store(block, dst, out)


def operation_of_a_later_release(bid, src, dst):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    out = coop.stream_compact_if(block, items)  # HERE
    coop.store(block, dst, out)


# ---- constructors: C5 as in any call
def c5_storage_alignment_positional(bid, src, dst):
    storage = coop.TempStorage(1024, 16)  # HERE
    items = coop.ThreadData(K, np.int32)
    coop.load(coop.this_block(), src, items, temp_storage=storage)
    coop.store(coop.this_block(), dst, items)


def c5_thread_data_alignment_positional(bid, src, dst):
    items = coop.ThreadData(K, np.int32, 16)  # HERE
    coop.load(coop.this_block(), src, items)
    coop.store(coop.this_block(), dst, items)


# ---- top-k on warp groups (SPEC 8.22): G5, G15, C5, C6, C7, P7, S2 and the required k
def topk_warp_in_partial_warp(bid, src, dst):
    block = coop.this_block()
    keys = coop.ThreadData(K, np.int32)
    coop.load(block, src, keys)
    out = coop.topk_max_keys(coop.this_warp(), keys, k=2)  # HERE
    coop.store(block, dst, out)


@staged.jit
def topk_logical_warp_of_three(bid, src, dst):
    block = coop.this_block()
    keys = coop.ThreadData(K, np.int32)
    coop.load(block, src, keys)
    lanes = coop.this_warp().group_by(3, exhaustive=False)
    if lanes.is_member():
        keys = coop.topk_min_keys(lanes, keys, k=2)  # HERE
    coop.store(block, dst, keys)


def topk_warp_k_of_floats(bid, src, dst):
    block = coop.this_block()
    keys = coop.ThreadData(K, np.float32)
    coop.load(block, src, keys)
    out = coop.topk_min_keys(coop.this_warp(), keys, k=keys[0])  # HERE
    coop.store(block, dst, out)


def topk_warp_valid_items_float_literal(bid, src, dst):
    block = coop.this_block()
    keys = coop.ThreadData(K, np.int32)
    coop.load(block, src, keys)
    out = coop.topk_min_keys(coop.this_warp(), keys, k=2, valid_items=2.5)  # HERE
    coop.store(block, dst, out)


def topk_warp_k_past_the_tile(bid, src, dst):
    block = coop.this_block()
    keys = coop.ThreadData(K, np.int32)
    coop.load(block, src, keys)
    out = coop.topk_max_keys(coop.this_warp(), keys, k=32 * K + 1)  # HERE
    coop.store(block, dst, out)


def topk_warp_negative_k(bid, src, dst):
    block = coop.this_block()
    keys = coop.ThreadData(K, np.int32)
    coop.load(block, src, keys)
    out = coop.topk_max_keys(coop.this_warp(), keys, k=-1)  # HERE
    coop.store(block, dst, out)


def topk_logical_warp_valid_items_past_the_tile(bid, src, dst):
    block = coop.this_block()
    keys = coop.ThreadData(K, np.int32)
    coop.load(block, src, keys)
    out = coop.topk_min_keys(coop.this_warp().group_by(8), keys, k=1, valid_items=8 * K + 1)  # HERE
    coop.store(block, dst, out)


def topk_warp_temp_storage(bid, src, dst):
    block = coop.this_block()
    storage = coop.TempStorage()
    keys = coop.ThreadData(K, np.int32)
    coop.load(block, src, keys)
    out = coop.topk_max_keys(coop.this_warp(), keys, k=2, temp_storage=storage)  # HERE
    coop.store(block, dst, out)


def topk_logical_warp_pairs_extents(bid, src, dst):
    block = coop.this_block()
    keys = coop.ThreadData(K, np.int32)
    values = coop.ThreadData(2, np.int32)
    coop.load(block, src, keys)
    top, carried = coop.topk_min_pairs(coop.this_warp().group_by(4), keys, values, k=2)  # HERE
    coop.store(block, dst, top)


def topk_warp_k_positional(bid, src, dst):
    block = coop.this_block()
    keys = coop.ThreadData(K, np.int32)
    coop.load(block, src, keys)
    out = coop.topk_min_keys(coop.this_warp(), keys, 2)  # HERE
    coop.store(block, dst, out)


def topk_warp_without_k(bid, src, dst):
    block = coop.this_block()
    keys = coop.ThreadData(K, np.int32)
    coop.load(block, src, keys)
    out = coop.topk_max_keys(coop.this_warp(), keys, valid_items=3)  # HERE
    coop.store(block, dst, out)


# ---- block prefix callbacks (qualified: each backend's namespace ``ns``, SPEC 9.6, 12.9)
def carry(state, aggregate):
    prefix = state[0]
    state[0] = prefix + aggregate
    return prefix


@qualified
def p5_state_of_two_items(ns):
    running = ns.StatefulFunction(carry, np.int32)

    def body(bid, src, dst):
        block = coop.this_block()
        items = coop.ThreadData(K, np.int32)
        state = coop.ThreadData(2, np.int32)
        coop.load(block, src, items)
        coop.store(block, dst, ns.exclusive_sum(block, items, state, prefix_op=running))  # HERE
    return body


@qualified
def p5_state_in_global_memory(ns):
    running = ns.StatefulFunction(carry, np.int32)

    def body(bid, src, dst):
        block = coop.this_block()
        items = coop.ThreadData(K, np.int32)
        coop.load(block, src, items)
        coop.store(block, dst, ns.exclusive_sum(block, items, dst, prefix_op=running))  # HERE
    return body


@qualified
def c9_state_of_another_dtype(ns):
    running = ns.StatefulFunction(carry, np.int64)

    def body(bid, src, dst):
        block = coop.this_block()
        items = coop.ThreadData(K, np.int32)
        state = coop.ThreadData(1, np.int32)
        state[0] = 0
        coop.load(block, src, items)
        coop.store(block, dst, ns.exclusive_sum(block, items, state, prefix_op=running))  # HERE
    return body


def carry_heads(state, aggregate, has_head):
    prefix = state[0]
    state[0] = aggregate + prefix * (1 - has_head)
    return prefix


def seed(aggregate):
    return aggregate


def seed_heads(aggregate, has_head):
    return aggregate + has_head


@qualified
def o6_running_segmented_max_without_initial_value(ns):
    def body(bid, src, dst):
        block = coop.this_block()
        items = coop.ThreadData(K, np.int32)
        heads = coop.ThreadData(K, np.int32)
        coop.load(block, src, items)
        coop.load(block, src, heads)
        out = ns.exclusive_scan(block, items, scan_op="max", prefix_op=seed_heads, head_flags=heads)  # HERE
        coop.store(block, dst, out)
    return body


@qualified
def o7_running_segmented_inclusive_initial_value(ns):
    def body(bid, src, dst):
        block = coop.this_block()
        items = coop.ThreadData(K, np.int32)
        heads = coop.ThreadData(K, np.int32)
        coop.load(block, src, items)
        coop.load(block, src, heads)
        out = ns.scan(block, items, mode="inclusive", initial_value=1, prefix_op=seed_heads,  # HERE
                      head_flags=heads)
        coop.store(block, dst, out)
    return body


@qualified
def o14_prefix_initial_value_without_head_flags(ns):
    def body(bid, src, dst):
        block = coop.this_block()
        items = coop.ThreadData(K, np.int32)
        coop.load(block, src, items)
        out = ns.exclusive_scan(block, items, scan_op="max", initial_value=0, prefix_op=seed)  # HERE
        coop.store(block, dst, out)
    return body


@qualified
def o14_prefix_on_a_warp(ns):
    def body(bid, src, dst):
        block = coop.this_block()
        items = coop.ThreadData(K, np.int32)
        coop.load(block, src, items)
        items[0] = ns.inclusive_sum(coop.this_warp(), items[0], prefix_op=seed)  # HERE
        coop.store(block, dst, items)
    return body


@qualified
def o14_prefix_with_aggregate_output(ns):
    def body(bid, src, dst):
        block = coop.this_block()
        items = coop.ThreadData(K, np.int32)
        total = coop.ThreadData(1, np.int32)
        coop.load(block, src, items)
        out = ns.inclusive_sum(block, items, prefix_op=seed, aggregate_output=total)  # HERE
        coop.store(block, dst, out)
    return body


@qualified
def o17_reverse_running_segmented(ns):
    running = ns.StatefulFunction(carry_heads, np.int32)

    def body(bid, src, dst):
        block = coop.this_block()
        items = coop.ThreadData(K, np.int32)
        heads = coop.ThreadData(K, np.int32)
        state = coop.ThreadData(1, np.int32)
        state[0] = 0
        coop.load(block, src, items)
        coop.load(block, src, heads)
        out = ns.inclusive_sum(block, items, state, prefix_op=running, head_flags=heads, reverse=True)  # HERE
        coop.store(block, dst, out)
    return body


@qualified
def o18_stateful_without_has_head(ns):
    running = ns.StatefulFunction(carry, np.int32)

    def body(bid, src, dst):
        block = coop.this_block()
        items = coop.ThreadData(K, np.int32)
        heads = coop.ThreadData(K, np.int32)
        state = coop.ThreadData(1, np.int32)
        state[0] = 0
        coop.load(block, src, items)
        coop.load(block, src, heads)
        out = ns.inclusive_sum(block, items, state, prefix_op=running, head_flags=heads)  # HERE
        coop.store(block, dst, out)
    return body


@qualified
def o18_stateless_with_has_head_but_no_head_flags(ns):
    def body(bid, src, dst):
        block = coop.this_block()
        items = coop.ThreadData(K, np.int32)
        coop.load(block, src, items)
        out = ns.exclusive_sum(block, items, prefix_op=seed_heads)  # HERE
        coop.store(block, dst, out)
    return body


@qualified
def o19_prefix_with_a_tuple(ns):
    def body(bid, src, dst):
        block = coop.this_block()
        a = coop.ThreadData(K, np.int32)
        b = coop.ThreadData(K, np.int32)
        coop.load(block, src, a)
        coop.load(block, src, b)
        x, y = ns.inclusive_scan(block, (a, b), scan_op=add_pairs, prefix_op=seed)  # HERE
        coop.store(block, dst, x)
    return body


# ---- G21: a block call some members may not reach (SPEC 2.7)
@staged.jit
def g21_block_call_under_the_rank(bid, src, dst):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    if block.rank() < 5:
        items = coop.inclusive_sum(block, items)  # HERE
    coop.store(block, dst, items)


@staged.jit
def g21_block_call_under_a_value_an_if_takes_from_the_rank(bid, src, dst):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    first = items[0] * 0
    if bid >= 0:  # the same in every member, but what it assigns is not
        first = items[0] * 0 + block.rank()
    if first < 5:
        items = coop.inclusive_sum(block, items)  # HERE
    coop.store(block, dst, items)


@staged.jit
def g21_block_call_under_a_value_a_loop_carries_from_the_rank(bid, src, dst):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    mine = items[0] * 0 + block.rank()
    for _ in range(2):
        if mine < 5:
            items = coop.inclusive_sum(block, items)  # HERE
        mine += 1
    coop.store(block, dst, items)


@staged.jit
def g21_block_call_under_another_groups_membership(bid, src, dst):
    block = coop.this_block()
    lanes = coop.this_warp().group_by(24, exhaustive=False)
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    if lanes.is_member():  # the one per-thread condition allowed is the call's own group's
        items = coop.inclusive_sum(block, items)  # HERE
    coop.store(block, dst, items)


@staged.jit
def g21_block_call_under_a_warps_index(bid, src, dst):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    if coop.this_warp().rank(level="block") == 0:  # one value per warp: the block's warps differ
        items = coop.inclusive_sum(block, items)  # HERE
    coop.store(block, dst, items)


@staged.jit
def g21_block_call_in_a_loop_whose_trips_the_rank_decides(bid, src, dst):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    for _ in range(block.rank() % 3):
        items = coop.inclusive_sum(block, items)  # HERE
    coop.store(block, dst, items)


# ---- rows once tested on numba-cuda-mlir alone or per backend (catalogue audit e): G14, P10, P17, C14, S8, O13, O15
def g14_block_group_by_not_dividing(bid, src, dst):
    warps = coop.this_block().group_by(3)  # HERE
    items = coop.ThreadData(K, np.int32)
    coop.load(coop.this_block(), src, items)
    coop.store(coop.this_block(), dst, coop.inclusive_sum(warps, items))


def p10_load_int_into_float(bid, src, dst):
    block = coop.this_block()
    items = coop.ThreadData(K, np.float32)
    coop.load(block, src, items)  # HERE
    coop.store(block, dst, items)


def p10_store_float_into_int(bid, src, dst):
    block = coop.this_block()
    items = coop.ThreadData(K, np.float32)
    for i in range(K):
        items[i] = np.float32(1.5)
    coop.store(block, dst, items)  # HERE


def p17_radix_tile_above_cub_limit(bid, src, dst):
    block = coop.this_block()
    keys = coop.ThreadData(1024, np.int32)
    coop.load(block, src, keys)
    out = coop.radix_sort_keys(block, keys)  # HERE
    coop.store(block, dst, out)


def c14_integer_operator(bid, src, dst):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    items[0] = coop.reduce(block, items, binary_op=3)  # HERE
    coop.store(block, dst, items)


def s8_dynamic_storage_aligned_to_32(bid, src, dst):
    block = coop.this_block()
    storage = coop.TempStorage(60000, alignment=32)
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    out = coop.exclusive_sum(block, items, temp_storage=storage)  # HERE
    coop.store(block, dst, out)


def less(a, b):
    return a < b


@qualified
def o13_compare_op_descending(ns):
    def body(bid, src, dst):
        block = coop.this_block()
        items = coop.ThreadData(K, np.int32)
        coop.load(block, src, items)
        out = ns.merge_sort_keys(block, items, compare_op=less, descending=True)  # HERE
        coop.store(block, dst, out)
    return body


@qualified
def o15_scatter_without_ranks(ns):
    def body(bid, src, dst):
        block = coop.this_block()
        items = coop.ThreadData(K, np.int32)
        coop.load(block, src, items)
        out = ns.exchange(block, items, mode="scatter_to_striped")  # HERE
        coop.store(block, dst, out)
    return body


@qualified
def o15_guarded_scatter_time_sliced(ns):
    def body(bid, src, dst):
        block = coop.this_block()
        items = coop.ThreadData(K, np.int32)
        ranks = coop.ThreadData(K, np.int32)
        coop.load(block, src, items)
        coop.load(block, src, ranks)
        out = ns.exchange(block, items, mode="scatter_to_striped_guarded", ranks=ranks,  # HERE
                          warp_time_slicing=True)
        coop.store(block, dst, out)
    return body


# ---- G2, P4 and H2 on both backends (catalogue audit e: the CuTe backend raised Python's own errors or other words)
def g2_group_in_arithmetic(bid, src, dst):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    items[0] = block * 2  # HERE
    coop.store(block, dst, items)


def g2_group_stored_into_an_array(bid, src, dst):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    dst[0] = block  # HERE
    coop.store(block, dst, items)


def p4_common_shuffle_of_a_scalar(bid, src, dst):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    items[0] = coop.shuffle(block, items[1])  # HERE
    coop.store(block, dst, items)


def add_a_block_sum(a, b):
    return a + coop.sum(coop.this_block(), b)


def h2_operator_calls_sum(bid, src, dst):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    items[0] = coop.reduce(block, items, binary_op=add_a_block_sum)  # HERE
    coop.store(block, dst, items)


# ---- rows once tested on numba-cuda-mlir alone (a catalogue audit): O4, O11, O12, G4, G8, G12, G19, S5
def o4_batched_scalar(bid, src, dst):
    warp = coop.this_warp()
    items = coop.ThreadData(K, np.int32)
    coop.load(coop.this_block(), src, items)
    out = coop.reduce_batched(warp, items[0])  # HERE
    coop.store(coop.this_block(), dst, out)


def o11_bins_not_covered(bid, src, dst):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    counts = coop.histogram(block, items, bins=300, bins_per_thread=2)  # HERE
    coop.store(block, dst, counts)


def o12_successor_on_the_left(bid, src, dst):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    out = coop.adjacent_difference(block, items, direction="left", tile_successor_item=1)  # HERE
    coop.store(block, dst, out)


def o12_successor_with_valid_items(bid, src, dst):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    out = coop.adjacent_difference(block, items, direction="right", valid_items=100, tile_successor_item=1)  # HERE
    coop.store(block, dst, out)


def o12_predecessor_of_tails(bid, src, dst):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    out = coop.discontinuity(block, items, mode="tails", tile_predecessor_item=1)  # HERE
    coop.store(block, dst, out)


def g4_grid_sum(bid, src, dst):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    total = coop.sum(coop.this_grid(), items)  # HERE
    items[0] = total
    coop.store(block, dst, items)


# ---- the cluster reduce is qualified (SPEC 9.3): the common reduce rejects the group, the qualified one its options
def g3_common_cluster_reduce(bid, src, dst):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    items[0] = coop.reduce(coop.this_cluster(), items, binary_op="max")  # HERE
    coop.store(block, dst, items)


@qualified
def cluster_sum_with_temp_storage(ns):
    def body(bid, src, dst):
        block = coop.this_block()
        temp = coop.TempStorage()
        items = coop.ThreadData(K, np.int32)
        coop.load(block, src, items)
        items[0] = ns.sum(coop.this_cluster(), items, temp_storage=temp)  # HERE
        coop.store(block, dst, items)
    return body


@qualified
def cluster_reduce_with_valid_items(ns):
    def body(bid, src, dst):
        block = coop.this_block()
        items = coop.ThreadData(K, np.int32)
        coop.load(block, src, items)
        items[0] = ns.reduce(coop.this_cluster(), items[1], valid_items=64)  # HERE
        coop.store(block, dst, items)
    return body


def g8_exhaustive_not_a_bool(bid, src, dst):
    lanes = coop.this_warp().group_by(8, exhaustive=1)  # HERE
    items = coop.ThreadData(K, np.int32)
    coop.load(coop.this_block(), src, items)
    coop.store(coop.this_block(), dst, coop.inclusive_sum(lanes, items))


def g12_more_groups_than_warps(bid, src, dst):
    warps = coop.this_block().group_by(8)  # HERE
    items = coop.ThreadData(K, np.int32)
    coop.load(coop.this_block(), src, items)
    coop.store(coop.this_block(), dst, coop.inclusive_sum(warps, items))


def g19_sync_of_warps_in_a_block(bid, src, dst):
    warps = coop.this_block().group_by(2)
    warps.sync()  # HERE
    items = coop.ThreadData(K, np.int32)
    coop.load(coop.this_block(), src, items)
    coop.store(coop.this_block(), dst, items)


def s5_negative_storage(bid, src, dst):
    block = coop.this_block()
    storage = coop.TempStorage(-64)  # HERE
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    coop.store(block, dst, coop.exclusive_sum(block, items, temp_storage=storage))


def s5_runtime_storage_size(bid, src, dst):
    block = coop.this_block()
    storage = coop.TempStorage(src[0])  # HERE
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    coop.store(block, dst, coop.exclusive_sum(block, items, temp_storage=storage))


def s5_runtime_storage_alignment(bid, src, dst):
    block = coop.this_block()
    storage = coop.TempStorage(4096, alignment=src[0])  # HERE
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    coop.store(block, dst, coop.exclusive_sum(block, items, temp_storage=storage))


def p16_read_past_the_payload(bid, src, dst):
    items = coop.ThreadData(K, np.int32)
    coop.load(coop.this_block(), src, items)
    dst[0] = items[K]  # HERE


def g6_float_count(bid, src, dst):
    lanes = coop.this_warp().group_by(2.0)  # HERE
    items = coop.ThreadData(K, np.int32)
    coop.load(coop.this_block(), src, items)
    coop.store(coop.this_block(), dst, coop.inclusive_sum(lanes, items))


def g13_partial_warp_block(bid, src, dst):
    warps = coop.this_block().group_by(2)  # HERE
    items = coop.ThreadData(K, np.int32)
    coop.load(coop.this_block(), src, items)
    coop.store(coop.this_block(), dst, coop.inclusive_sum(warps, items))


# ---- P8: two calls give an untyped payload two dtypes
def p8_loaded_as_int_stored_as_float(bid, src, dst):
    items = coop.ThreadData(K)  # HERE
    coop.load(coop.this_block(), src, items)
    coop.store(coop.this_block(), dst, items)


def p8_assigned_int_and_float(bid, src, dst):
    items = coop.ThreadData(K)  # HERE
    for i in range(K):
        items[i] = src[i]
    items[1] = dst[1]  # a float32 element: evidence against the int32 ones
    dst[0] = coop.sum(coop.this_block(), items)


def p8_explicit_dtype_and_a_cast(bid, src, dst):
    items = coop.ThreadData(K, np.int64)
    for i in range(K):
        items[i] = np.int32(i)  # HERE
    coop.store(coop.this_block(), dst, items)


def p8_array_element_and_a_store(bid, src, dst):
    items = coop.ThreadData(K)  # HERE
    for i in range(K):
        items[i] = src[i]  # an int32 element: evidence against the float32 destination
    coop.store(coop.this_block(), dst, items)


def p8_two_assignments_and_a_store(bid, src, dst):
    items = coop.ThreadData(K)  # HERE
    items[0] = src[0]
    for i in range(1, K):
        items[i] = np.int64(7)  # a cast: evidence against the int32 element above, met before the store
    coop.store(coop.this_block(), dst, items)


def p8_explicit_dtype_and_a_copy(bid, src, dst):
    wide = coop.ThreadData(K)
    for i in range(K):
        wide[i] = np.int64(i)
    items = coop.ThreadData(K, np.int32)
    items[0] = wide[0]  # HERE: the first mismatch in the kernel's order (wide's dtype is decided by its casts)
    for i in range(1, K):
        items[i] = np.int64(i)
    coop.store(coop.this_block(), dst, items)


# ---- the group before its arguments (SPEC 10.1's order): G15 before a run-time option's C4
def g15_before_a_run_time_option(bid, src, dst):
    fives = coop.this_warp().group_by(5, exhaustive=False)
    dst[0] = coop.sum(fives, src[0], broadcast=src[1] > 0)  # HERE


# ---- P14: a payload used as a run-time value
def p14_payload_in_arithmetic(bid, src, dst):
    items = coop.ThreadData(K, np.int32)
    coop.load(coop.this_block(), src, items)
    items[0] = items * 2  # HERE
    coop.store(coop.this_block(), dst, items)


def p14_payload_stored_into_an_array(bid, src, dst):
    items = coop.ThreadData(K, np.int32)
    coop.load(coop.this_block(), src, items)
    dst[0] = items  # HERE
    coop.store(coop.this_block(), dst, items)


G21_WORDS = "numba-cuda-mlir names the variable the condition reads, the CuTe DSL the query it derives from"

ERRORS = [
    ErrorCase("p8-loaded-as-int-stored-as-float", p8_loaded_as_int_stored_as_float, coop.CoopTypeError,
              "ThreadData items has conflicting dtypes int32 (cuda.coop.load at line", dst_dtype=np.float32),
    ErrorCase("p8-assigned-int-and-float", p8_assigned_int_and_float, coop.CoopTypeError,
              "ThreadData items has conflicting dtypes int32 (assignment at line", dst_dtype=np.float32),
    ErrorCase("p8-explicit-dtype-and-a-cast", p8_explicit_dtype_and_a_cast, coop.CoopTypeError,
              "ThreadData items has conflicting dtypes int64 (dtype= at line", dst_dtype=np.int64),
    ErrorCase("p8-array-element-and-a-store", p8_array_element_and_a_store, coop.CoopTypeError,
              "ThreadData items has conflicting dtypes float32 (cuda.coop.store at line", dst_dtype=np.float32),
    ErrorCase("p8-two-assignments-and-a-store", p8_two_assignments_and_a_store, coop.CoopTypeError,
              "ThreadData items has conflicting dtypes int32 (assignment at line"),
    ErrorCase("p8-explicit-dtype-and-a-copy", p8_explicit_dtype_and_a_copy, coop.CoopTypeError,
              "ThreadData items has conflicting dtypes int32 (dtype= at line"),
    ErrorCase("g15-before-a-run-time-option", g15_before_a_run_time_option, coop.CoopUnsupportedError,
              "cuda.coop.sum supports logical-warp widths 1, 2, 4, 8, 16, 32, or 17-31 from group_by(W, "
              "exhaustive=False); got 5"),
    ErrorCase("p14-payload-in-arithmetic", p14_payload_in_arithmetic, coop.CoopTypeError,
              "ThreadData items escapes to runtime through an arithmetic expression at error_cases.py:"),
    ErrorCase("p14-payload-stored-into-an-array", p14_payload_stored_into_an_array, coop.CoopTypeError,
              "ThreadData items escapes to runtime through an assignment into dst at error_cases.py:"),
    ErrorCase("o4-batched-scalar", o4_batched_scalar, coop.CoopTypeError,
              "cuda.coop.reduce_batched requires a ThreadData payload"),
    ErrorCase("o11-bins-not-covered", o11_bins_not_covered, coop.CoopValueError,
              "cuda.coop.histogram requires block_threads * bins_per_thread >= bins (128 * 2 < 300)"),
    ErrorCase("o12-successor-on-the-left", o12_successor_on_the_left, coop.CoopValueError,
              "cuda.coop.adjacent_difference direction='left' accepts only tile_predecessor_item"),
    ErrorCase("o12-successor-with-valid-items", o12_successor_with_valid_items, coop.CoopValueError,
              "cuda.coop.adjacent_difference tile_successor_item cannot be combined with valid_items"),
    ErrorCase("o12-predecessor-of-tails", o12_predecessor_of_tails, coop.CoopValueError,
              "cuda.coop.discontinuity mode='tails' accepts only tile_successor_item"),
    ErrorCase("g4-grid-sum", g4_grid_sum, coop.CoopUnsupportedError,
              "cuda.coop.sum does not support grid groups"),
    ErrorCase("g3-common-cluster-reduce", g3_common_cluster_reduce, coop.CoopUnsupportedError,
              "cuda.coop.reduce does not support group kind 'cluster'; supported group kinds: block, warp, "
              "threads_within_warp; cuda.coop."),
    ErrorCase("cluster-sum-temp-storage", cluster_sum_with_temp_storage, coop.CoopValueError,
              ".sum does not accept temp_storage for cluster groups; their scratch is always compiler-owned"),
    ErrorCase("cluster-reduce-valid-items", cluster_reduce_with_valid_items, coop.CoopValueError,
              ".reduce valid_items is supported only for block and warp groups; got a cluster group"),
    ErrorCase("g8-exhaustive-not-a-bool", g8_exhaustive_not_a_bool, coop.CoopTypeError,
              "group_by exhaustive must be a compile-time bool"),
    ErrorCase("g12-more-groups-than-warps", g12_more_groups_than_warps, coop.CoopValueError,
              "block group_by count cannot exceed the parent warp count (4)"),
    ErrorCase("g19-sync-of-warps-in-a-block", g19_sync_of_warps_in_a_block, coop.CoopUnsupportedError,
              "ThreadGroup.sync is not supported for group kind 'warps_within_block'"),
    ErrorCase("g6-float-count", g6_float_count, coop.CoopTypeError,
              "ThreadGroup.group_by count must be a compile-time integer"),
    ErrorCase("g13-partial-warp-block", g13_partial_warp_block, coop.CoopValueError,
              "group_by requires an enclosing block composed of complete warps; block has 48 threads",
              block=(48, 1, 1)),
    ErrorCase("s5-negative-storage", s5_negative_storage, coop.CoopValueError,
              "TempStorage size_in_bytes must be a compile-time positive integer; got -64"),
    ErrorCase("s5-runtime-storage-size", s5_runtime_storage_size, coop.CoopTypeError,
              "TempStorage size_in_bytes must be a compile-time value"),
    ErrorCase("s5-runtime-storage-alignment", s5_runtime_storage_alignment, coop.CoopTypeError,
              "TempStorage alignment must be a compile-time value"),
    ErrorCase("p16-read-past-the-payload", p16_read_past_the_payload, coop.CoopIndexError,
              "ThreadData items index 4 is out of range for items_per_thread 4"),
    ErrorCase("c5-unknown-keyword", c5_unknown_keyword, coop.CoopTypeError,
              "cuda.coop.load got an unexpected keyword argument 'count'"),
    ErrorCase("c5-option-positional", c5_option_positional, coop.CoopTypeError,
              "cuda.coop.exchange takes 2 positional operands; pass options by keyword"),
    ErrorCase("c5-factory-with-a-size", c5_factory_with_a_size, coop.CoopTypeError,
              "cuda.coop.this_warp takes 0 positional operands"),
    ErrorCase("c5-scan-keyword", c5_scan_keyword, coop.CoopTypeError,
              "cuda.coop.inclusive_sum got an unexpected keyword argument 'init'"),
    ErrorCase("c3-blocked-to-striped", c3_blocked_to_striped, coop.CoopValueError,
              "cuda.coop.radix_sort_keys blocked_to_striped True requires cuda.coop."),
    ErrorCase("c3-argmax-broadcast", c3_argmax_broadcast, coop.CoopValueError,
              "cuda.coop.argmax broadcast False requires cuda.coop."),
    ErrorCase("c1-load-algorithm", c1_unknown_load_algorithm, coop.CoopValueError, "sideways"),
    ErrorCase("c1-exchange-mode", c1_unknown_exchange_mode, coop.CoopValueError, "inside_out"),
    ErrorCase("c1-operator", c1_unknown_operator, coop.CoopValueError, "modulo"),
    ErrorCase("g-not-a-group", g_not_a_group, coop.CoopTypeError,
              "cuda.coop.load requires a compile-time ThreadGroup created by this_*() or group_by() in this kernel"),
    ErrorCase("g-group-by", g_bad_group_by, coop.CoopValueError, "group_by"),
    ErrorCase("p-zero-items", p_zero_items, coop.CoopValueError, "items_per_thread must be positive"),
    ErrorCase("p-too-many-items", p_too_many_items, coop.CoopValueError, "5000"),
    ErrorCase("p-index-out-of-range", p_literal_index_out_of_range, coop.CoopIndexError,
              "index 4 is out of range for items_per_thread 4"),
    ErrorCase("p-load-dtype", p_load_dtype_mismatch, coop.CoopTypeError, "float32"),
    ErrorCase("p-histogram-floats", p_histogram_of_floats, coop.CoopTypeError, "float32", src_dtype=np.float32),
    ErrorCase("p12-counter-dtype-string", p12_counter_dtype_string, coop.CoopTypeError,
              "cuda.coop.histogram counter_dtype must be a NumPy scalar type, not the string 'int32': pass np.int32"),
    ErrorCase("c-bins-runtime", c_bins_not_a_constant, coop.CoopTypeError, "bins must be a compile-time"),
    ErrorCase("c-merge-sort-threads", c_merge_sort_needs_power_of_two, coop.CoopUnsupportedError,
              "cuda.coop.merge_sort_keys requires a power-of-two thread count; block shape is (96, 1, 1)",
              block=(96, 1, 1)),
    ErrorCase("s6-temp-storage", s6_temp_storage_too_small, coop.CoopValueError,
              "TempStorage size_in_bytes=16 is too small: its uses need 672 bytes"),
    ErrorCase("g3-warp-radix-sort", g3_warp_radix_sort, coop.CoopUnsupportedError,
              "cuda.coop.radix_sort_keys does not support group kind 'warp'; supported group kinds: block"),
    ErrorCase("g11-group-by-too-wide", g11_group_by_too_wide, coop.CoopValueError,
              "warp group_by count cannot exceed 32 threads"),
    ErrorCase("g17-unknown-level", g17_unknown_level, coop.CoopValueError, "ThreadGroup.rank level must be one of"),
    ErrorCase("c7-radix-end-bit", c7_radix_end_bit, coop.CoopValueError, "end_bit"),
    ErrorCase("c7-topk-k", c7_topk_k_above_tile, coop.CoopValueError, "513"),
    ErrorCase("c12-warp-reduce-algorithm", c12_warp_reduce_algorithm, coop.CoopValueError,
              "cuda.coop.reduce algorithm is supported only for block groups"),
    ErrorCase("o6-max-scan-initial-value", o6_max_scan_without_initial_value, coop.CoopValueError, "initial_value"),
    ErrorCase("o7-inclusive-initial-value", o7_inclusive_initial_value, coop.CoopValueError, "initial_value"),
    ErrorCase("o8-descending-int", o8_descending_int, coop.CoopTypeError, "descending"),
    ErrorCase("o10-radix-bits-zero", o10_radix_bits_zero, coop.CoopValueError, "radix_bits"),
    ErrorCase("p6-negative-items", p6_negative_items, coop.CoopValueError, "items_per_thread must be positive"),
    # ThreadData alignment and the rank_as/count_as messages: the CuTe DSL backend skipped these checks (issue 41)
    ErrorCase("p13-thread-data-alignment", p13_thread_data_alignment, coop.CoopValueError,
              "ThreadData alignment must be a positive power of two; got 12"),
    ErrorCase("p13-thread-data-alignment-type", p13_thread_data_alignment_type, coop.CoopTypeError,
              "ThreadData alignment must be a compile-time integer; got 16.0"),
    ErrorCase("g17-rank-as-unknown-level", g17_rank_as_unknown_level, coop.CoopValueError,
              "ThreadGroup.rank_as level must be one of: thread, gpu_thread, warp, block, cluster, grid"),
    ErrorCase("g18-rank-as-float-dtype", g18_rank_as_float_dtype, coop.CoopTypeError,
              "ThreadGroup.rank_as dtype must be one of int8, int16, int32, int64, uint8, uint16, uint32, uint64"),
    ErrorCase("g18-count-as-string-dtype", g18_count_as_string_dtype, coop.CoopTypeError,
              "ThreadGroup.count_as dtype must be one of int8, int16, int32, int64, uint8, uint16, uint32, uint64"),
    ErrorCase("c5-rank-keyword", c5_rank_keyword, coop.CoopTypeError,
              "ThreadGroup.rank got an unexpected keyword argument 'lvl'"),
    ErrorCase("c5-group-by-option-positional", c5_group_by_option_positional, coop.CoopTypeError,
              "ThreadGroup.group_by takes 1 positional operands; pass options by keyword"),
    ErrorCase("c5-sync-positional", c5_sync_positional, coop.CoopTypeError,
              "ThreadGroup.sync takes 0 positional operands; pass options by keyword"),
    ErrorCase("c5-group-by-without-count", c5_group_by_without_count, coop.CoopTypeError,
              "ThreadGroup.group_by: missing a required argument: 'count'"),
    ErrorCase("g9-group-by-runtime-count-on-thread", g9_group_by_runtime_count_on_thread, coop.CoopUnsupportedError,
              "ThreadGroup.group_by supports only physical warp and block parents"),
    ErrorCase("g10-group-by-runtime-exhaustive-nested", g10_group_by_runtime_exhaustive_nested,
              coop.CoopUnsupportedError, "nested ThreadGroup.group_by is not supported"),
    ErrorCase("g7-group-by-zero-before-exhaustive", g7_group_by_zero_before_exhaustive, coop.CoopValueError,
              "ThreadGroup.group_by count must be positive"),
    # a float16 array in a common call is P1 on both backends, before inference (SPEC 12.3; the CuTe DSL backend
    # reported its own payload dtypes instead, issue 41)
    ErrorCase("p1-common-float16-source", p1_common_float16_source, coop.CoopTypeError,
              "cuda.coop.load supports source dtypes int8, int16, int32, int64, uint8, uint16, uint32, uint64, "
              "float32, float64 through the common API; use ", src_dtype=np.float16, dst_dtype=np.float16),
    ErrorCase("p2-complex-payload", p2_complex_payload, coop.CoopTypeError,
              "cuda.coop.load does not support output dtype complex64"),
    ErrorCase("c7-warp-valid-items", c7_warp_valid_items_above_tile, coop.CoopValueError,
              "cuda.coop.load static valid_items must be between 0 and 128; got 129"),
    ErrorCase("c7-logical-warp-store", c7_logical_warp_store_valid_items, coop.CoopValueError,
              "cuda.coop.store static valid_items must be between 0 and 32; got 33"),
    ErrorCase("c7-sum-valid-items-zero", c7_sum_valid_items_zero, coop.CoopValueError,
              "cuda.coop.sum static valid_items must be between 1 and 128; got 0"),
    ErrorCase("c8-warp-store-offset", c8_warp_store_offset, coop.CoopValueError,
              "cuda.coop.store static offset must be nonnegative; got -2"),
    ErrorCase("c8-run-length-destination-offset", c8_run_length_destination_offset, coop.CoopValueError,
              "cuda.coop.run_length_decode_into static destination_offset must be nonnegative; got -1"),
    ErrorCase("c16-operator-defined-in-the-body", c16_operator_defined_in_the_body, coop.CoopTypeError,
              "cuda.coop.inclusive_scan scan_op c16_operator_defined_in_the_body.<locals>.mine is defined inside the "
              "kernel; define operator callables at module scope"),
    ErrorCase("p14-iterating-a-payload", p14_iterating_a_payload, coop.CoopTypeError,
              "ThreadData items escapes to runtime through iteration at error_cases.py:"),
    ErrorCase("p14-slicing-a-payload", p14_slicing_a_payload, coop.CoopTypeError,
              "ThreadData items escapes to runtime through slicing at error_cases.py:"),
    ErrorCase("c10-fractional-oob-default", c10_fractional_oob_default, coop.CoopValueError,
              "cuda.coop.load oob_default literal 1.5 is not representable as int32"),
    ErrorCase("c10-negative-unsigned", c10_negative_unsigned_initial_value, coop.CoopValueError,
              "cuda.coop.exclusive_scan initial_value literal -1 is not representable as uint32",
              src_dtype=np.uint32, dst_dtype=np.uint32),
    ErrorCase("c9-numpy-oob-default-constant", c9_numpy_oob_default_constant, coop.CoopTypeError,
              "cuda.coop.load oob_default must have the payload dtype float32; got float64; cast it",
              src_dtype=np.float32, dst_dtype=np.float32),
    ErrorCase("c9-numpy-oob-default-merge-sort", c9_numpy_oob_default_merge_sort, coop.CoopTypeError,
              "cuda.coop.merge_sort_keys oob_default must have the payload dtype int32; got int64; cast it"),
    ErrorCase("c9-numpy-oob-default-radix-sort", c9_numpy_oob_default_radix_sort, coop.CoopTypeError,
              "cuda.coop.radix_sort_keys oob_default must have the payload dtype uint32; got int64; cast it",
              src_dtype=np.uint32, dst_dtype=np.uint32),
    ErrorCase("c11-oob-default-alone", c11_oob_default_without_valid_items, coop.CoopValueError,
              "cuda.coop.load oob_default requires valid_items"),
    ErrorCase("c5-histogram-oob-default", c5_histogram_oob_default, coop.CoopTypeError,
              "cuda.coop.histogram got an unexpected keyword argument 'oob_default'"),
    ErrorCase("c6-histogram-float-valid-items", c6_histogram_float_valid_items, coop.CoopTypeError,
              "cuda.coop.histogram valid_items must be a signed integer of at most 64 bits or an unsigned integer of "
              "at most 32 bits; got float"),
    ErrorCase("c7-histogram-valid-items", c7_histogram_valid_items_above_tile, coop.CoopValueError,
              "cuda.coop.histogram static valid_items must be between 0 and 512; got 513"),
    ErrorCase("c7-radix-sort-valid-items", c7_radix_sort_negative_valid_items, coop.CoopValueError,
              "cuda.coop.radix_sort_pairs static valid_items must be between 0 and 512; got -1"),
    ErrorCase("c10-radix-sort-oob-default", c10_radix_sort_oob_default_literal, coop.CoopValueError,
              "cuda.coop.radix_sort_keys oob_default literal 4294967296 is not representable as uint32",
              src_dtype=np.uint32, dst_dtype=np.uint32),
    ErrorCase("c11-radix-sort-oob-default-alone", c11_radix_sort_oob_default_alone, coop.CoopValueError,
              "cuda.coop.radix_sort_keys oob_default requires valid_items"),
    ErrorCase("c12-warp-scan-algorithm", c12_warp_scan_algorithm, coop.CoopValueError,
              "cuda.coop.exclusive_sum algorithm is supported only for block groups"),
    ErrorCase("o1-shuffle-distance", o1_shuffle_distance_two, coop.CoopValueError,
              "cuda.coop.shuffle distance must be exactly 1 in the common API"),
    ErrorCase("o2-sum-payload-valid-items", o2_sum_payload_valid_items, coop.CoopTypeError,
              "cuda.coop.sum valid_items supports scalar values only"),
    ErrorCase("o3-commutative-only-callable", o3_commutative_only_callable, coop.CoopValueError,
              "cuda.coop.reduce algorithm 'raking_commutative_only' requires a built-in commutative operator"),
    ErrorCase("o5-warp-scan-payload", o5_warp_scan_payload, coop.CoopTypeError,
              "cuda.coop.inclusive_sum on warp groups accepts one scalar per lane"),
    ErrorCase("o6-general-scan", o6_general_scan_without_initial_value, coop.CoopValueError,
              "cuda.coop.scan non-sum exclusive scans require initial_value"),
    ErrorCase("o9-valid-items-alone", o9_valid_items_without_oob_default, coop.CoopValueError,
              "valid_items and oob_default must be provided together"),
    ErrorCase("o9-oob-default-alone", o9_oob_default_without_valid_items, coop.CoopValueError,
              "valid_items and oob_default must be provided together"),
    ErrorCase("o10-radix-bits-mismatch", o10_radix_bits_mismatch, coop.CoopValueError,
              "radix_bits must match end_bit - begin_bit", src_dtype=np.uint32),
    ErrorCase("o10-rank-too-wide", o10_rank_too_wide, coop.CoopValueError, "radix_rank bit width must be <= 8",
              src_dtype=np.uint32),
    ErrorCase("o10-runtime-begin-bit", o10_runtime_begin_bit, coop.CoopTypeError,
              "cuda.coop.radix_rank begin_bit must be a compile-time integer", src_dtype=np.uint32),
    ErrorCase("g3-warp-shuffle", g3_warp_shuffle, coop.CoopUnsupportedError,
              "cuda.coop.shuffle does not support group kind 'warp'; supported group kinds: block"),
    ErrorCase("g3-thread-topk", g3_thread_topk, coop.CoopUnsupportedError,
              "cuda.coop.topk_min_keys does not support group kind 'thread'; supported group kinds: block, warp, "
              "threads_within_warp"),
    ErrorCase("g5-warp-sum-partial-warp", g5_warp_sum_partial_warp, coop.CoopValueError,
              "cuda.coop.sum on warp groups requires a block made of complete warps; block has 40 threads",
              block=(40, 1, 1)),
    ErrorCase("g16-topk-2d-block", g16_topk_two_dimensional_block, coop.CoopUnsupportedError,
              "cuda.coop.topk_max_keys requires a one-dimensional block; block shape is (32, 4, 1)", block=(32, 4, 1)),
    ErrorCase("p3-bit-and-floats", p3_bit_and_of_floats, coop.CoopTypeError,
              "cuda.coop.reduce binary_op 'bit_and' requires an integer dtype; got float32", src_dtype=np.float32,
              dst_dtype=np.float32),
    ErrorCase("p3-xor-scan-floats", p3_xor_scan_of_floats, coop.CoopTypeError,
              "cuda.coop.inclusive_scan scan_op 'bit_xor' requires an integer dtype; got float32", src_dtype=np.float32,
              dst_dtype=np.float32),
    ErrorCase("p7-merge-pairs-extents", p7_merge_pairs_extents, coop.CoopValueError,
              "cuda.coop.merge_sort_pairs keys and values must have the same items_per_thread (4 != 2)"),
    ErrorCase("s2-warp-sum-temp-storage", s2_warp_sum_temp_storage, coop.CoopValueError,
              "cuda.coop.sum does not accept temp_storage for warp groups"),
    ErrorCase("s2-logical-warp-exchange", s2_logical_warp_exchange_temp_storage, coop.CoopValueError,
              "cuda.coop.exchange does not accept temp_storage for threads_within_warp groups"),
    ErrorCase("c5-sum-binary-op", c5_sum_binary_op, coop.CoopTypeError,
              "cuda.coop.sum got an unexpected keyword argument 'binary_op'"),
    ErrorCase("c5-store-positional", c5_store_positional_option, coop.CoopTypeError,
              "cuda.coop.store takes 3 positional operands; pass options by keyword"),
    ErrorCase("c1-scan-mode-int", c1_scan_mode_not_a_string, coop.CoopTypeError,
              "cuda.coop.scan mode must be a string; got int"),
    ErrorCase("c2-scan-algorithm", c2_scan_algorithm, coop.CoopValueError,
              "cuda.coop.exclusive_sum algorithm must be one of: "),
    ErrorCase("c3-warp-striped-mode", c3_warp_striped_mode, coop.CoopValueError,
              "cuda.coop.exchange mode 'warp_striped_to_blocked' requires cuda.coop."),
    ErrorCase("c3-aggregate-output", c3_aggregate_output, coop.CoopValueError,
              "cuda.coop.exclusive_sum aggregate_output requires cuda.coop."),
    ErrorCase("reverse-not-a-bool", reverse_not_a_bool, coop.CoopTypeError,
              "cuda.coop.inclusive_sum reverse must be a compile-time bool"),
    ErrorCase("reverse-positional", reverse_positional, coop.CoopTypeError,
              "cuda.coop.exclusive_sum takes 2 positional operands; pass options by keyword"),
    ErrorCase("head-flags-floats", head_flags_of_floats, coop.CoopTypeError,
              "cuda.coop.inclusive_sum does not support head_flags dtype float32; supported: int8",
              src_dtype=np.float32, dst_dtype=np.float32),
    ErrorCase("head-flag-float-scalar", head_flag_of_a_float_scalar, coop.CoopTypeError,
              "cuda.coop.inclusive_sum head_flags must be an integer or boolean scalar; got float32"),
    ErrorCase("head-flags-extent", head_flags_of_another_extent, coop.CoopValueError,
              "cuda.coop.exclusive_sum value and head_flags must have the same items_per_thread (4 != 2)"),
    ErrorCase("argmax-float-indices", argmax_float_indices, coop.CoopTypeError,
              "cuda.coop.argmax indices must hold integers; got float32", src_dtype=np.float32, dst_dtype=np.float32),
    ErrorCase("argmin-valid-items", argmin_valid_items_above_tile, coop.CoopValueError,
              "cuda.coop.argmin static valid_items must be between 1 and 512; got 1000"),
    ErrorCase("argmax-positional", argmax_positional_option, coop.CoopTypeError,
              "cuda.coop.argmax takes 2 positional operands; pass options by keyword"),
    ErrorCase("broadcast-g3-thread", broadcast_thread_group, coop.CoopUnsupportedError,
              "cuda.coop.broadcast does not support group kind 'thread'; supported group kinds: block, warp, "
              "threads_within_warp"),
    ErrorCase("broadcast-g5-partial-warp", broadcast_warp_in_partial_warp, coop.CoopValueError,
              "cuda.coop.broadcast on warp groups requires a block made of complete warps; block has 48 threads",
              block=(48, 1, 1)),
    ErrorCase("broadcast-c6-float-literal", broadcast_src_rank_float_literal, coop.CoopTypeError,
              "cuda.coop.broadcast src_rank must be a signed integer of at most 64 bits or an unsigned integer of at "
              "most 32 bits; got float"),
    ErrorCase("broadcast-c6-float-value", broadcast_src_rank_float_value, coop.CoopTypeError,
              "cuda.coop.broadcast src_rank must be a signed integer of at most 64 bits or an unsigned integer of at "
              "most 32 bits; got float32", src_dtype=np.float32, dst_dtype=np.float32),
    ErrorCase("broadcast-c7-past-the-block", broadcast_src_rank_past_the_block, coop.CoopValueError,
              "cuda.coop.broadcast static src_rank must be between 0 and 127; got 128"),
    ErrorCase("broadcast-c7-negative", broadcast_src_rank_negative, coop.CoopValueError,
              "cuda.coop.broadcast static src_rank must be between 0 and 31; got -1"),
    ErrorCase("broadcast-c7-logical-warp", broadcast_src_rank_past_the_logical_warp, coop.CoopValueError,
              "cuda.coop.broadcast static src_rank must be between 0 and 7; got 8"),
    ErrorCase("broadcast-p2-complex", broadcast_complex_payload, coop.CoopTypeError,
              "cuda.coop.broadcast does not support value dtype complex64; supported: int8, int16, int32, int64, "
              "uint8, uint16, uint32, uint64, float32, float64"),
    ErrorCase("broadcast-p18-nine-values", broadcast_nine_values, coop.CoopTypeError,
              "cuda.coop.broadcast value must be a tuple of 1 to 8 payloads or scalars; got a tuple of 9"),
    ErrorCase("broadcast-s2-warp-temp-storage", broadcast_warp_temp_storage, coop.CoopValueError,
              "cuda.coop.broadcast does not accept temp_storage for warp groups; their scratch is always "
              "compiler-owned"),
    ErrorCase("broadcast-c5-positional", broadcast_positional_src_rank, coop.CoopTypeError,
              "cuda.coop.broadcast takes 2 positional operands; pass options by keyword"),
    ErrorCase("topk-g5-partial-warp", topk_warp_in_partial_warp, coop.CoopValueError,
              "cuda.coop.topk_max_keys on warp groups requires a block made of complete warps; block has 48 threads",
              block=(48, 1, 1)),
    ErrorCase("topk-g15-width-three", topk_logical_warp_of_three, coop.CoopUnsupportedError,
              "cuda.coop.topk_min_keys supports logical-warp widths 1, 2, 4, 8, 16, 32; got 3"),
    ErrorCase("topk-c6-float-k", topk_warp_k_of_floats, coop.CoopTypeError,
              "cuda.coop.topk_min_keys k must be a signed integer of at most 64 bits or an unsigned integer of at "
              "most 32 bits; got float32", src_dtype=np.float32, dst_dtype=np.float32),
    ErrorCase("topk-c6-float-valid-items", topk_warp_valid_items_float_literal, coop.CoopTypeError,
              "cuda.coop.topk_min_keys valid_items must be a signed integer of at most 64 bits or an unsigned integer "
              "of at most 32 bits; got float"),
    ErrorCase("topk-c7-warp-k", topk_warp_k_past_the_tile, coop.CoopValueError,
              "cuda.coop.topk_max_keys static k must be between 0 and 128; got 129"),
    ErrorCase("topk-c7-warp-negative-k", topk_warp_negative_k, coop.CoopValueError,
              "cuda.coop.topk_max_keys static k must be between 0 and 128; got -1"),
    ErrorCase("topk-c7-logical-warp-valid-items", topk_logical_warp_valid_items_past_the_tile, coop.CoopValueError,
              "cuda.coop.topk_min_keys static valid_items must be between 0 and 32; got 33"),
    ErrorCase("topk-s2-warp-temp-storage", topk_warp_temp_storage, coop.CoopValueError,
              "cuda.coop.topk_max_keys does not accept temp_storage for warp groups; their scratch is always "
              "compiler-owned"),
    ErrorCase("topk-p7-logical-warp-pairs", topk_logical_warp_pairs_extents, coop.CoopValueError,
              "cuda.coop.topk_min_pairs keys and values must have the same items_per_thread (4 != 2)"),
    ErrorCase("topk-c5-warp-k-positional", topk_warp_k_positional, coop.CoopTypeError,
              "cuda.coop.topk_min_keys takes 2 positional operands; pass options by keyword"),
    ErrorCase("topk-warp-without-k", topk_warp_without_k, coop.CoopTypeError, "missing a required argument: 'k'"),
    ErrorCase("select-g3-thread", select_thread_group, coop.CoopUnsupportedError,
              "cuda.coop.select does not support group kind 'thread'; supported group kinds: block, warp, "
              "threads_within_warp"),
    ErrorCase("select-g15-odd-width", select_odd_logical_warp, coop.CoopUnsupportedError,
              "cuda.coop.select supports logical-warp widths 1, 2, 4, 8, 16, 32; got 3"),
    ErrorCase("partition-g5-partial-warp", partition_warp_in_partial_warp, coop.CoopValueError,
              "cuda.coop.partition on warp groups requires a block made of complete warps; block has 48 threads",
              block=(48, 1, 1)),
    ErrorCase("select-p2-float-flags", select_float_flags, coop.CoopTypeError,
              "cuda.coop.select does not support flags dtype float32; supported: int8, int16, int32, int64, uint8, "
              "uint16, uint32, uint64; a boolean flag is accepted as the scalar of scalar items"),
    ErrorCase("select-p5-scalar-flag", select_scalar_flag_for_a_payload, coop.CoopTypeError,
              "cuda.coop.select flags must be a ThreadData of 4 items, as items is"),
    ErrorCase("select-p7-flags-extent", select_flags_of_another_extent, coop.CoopValueError,
              "cuda.coop.select items and flags must have the same items_per_thread (4 != 2)"),
    ErrorCase("partition-p18-mixed-shapes", partition_tuple_mixing_shapes, coop.CoopTypeError,
              "cuda.coop.partition items must be a tuple of 1 to 8 payloads of one extent or scalars; got a tuple "
              "mixing payloads and scalars"),
    ErrorCase("select-p18-nine-items", select_nine_items, coop.CoopTypeError,
              "cuda.coop.select items must be a tuple of 1 to 8 payloads of one extent or scalars; got a tuple of 9"),
    ErrorCase("select-c6-float-valid-items", select_valid_items_float, coop.CoopTypeError,
              "cuda.coop.select valid_items must be a signed integer of at most 64 bits or an unsigned integer of at "
              "most 32 bits; got float"),
    ErrorCase("partition-c7-past-the-tile", partition_valid_items_past_the_tile, coop.CoopValueError,
              "cuda.coop.partition static valid_items must be between 0 and 32; got 33"),
    ErrorCase("select-c7-negative", select_valid_items_negative, coop.CoopValueError,
              "cuda.coop.select static valid_items must be between 0 and 512; got -1"),
    ErrorCase("select-s2-warp-temp-storage", select_warp_temp_storage, coop.CoopValueError,
              "cuda.coop.select does not accept temp_storage for warp groups; their scratch is always "
              "compiler-owned"),
    ErrorCase("select-c5-positional", select_positional_valid_items, coop.CoopTypeError,
              "cuda.coop.select takes 3 positional operands; pass options by keyword"),
    ErrorCase("segmented-o5-warp-payload", segmented_sum_warp_payload, coop.CoopTypeError,
              "cuda.coop.sum on warp groups accepts one scalar per lane"),
    ErrorCase("segmented-o16-broadcast", segmented_sum_without_broadcast, coop.CoopValueError,
              "cuda.coop.sum head_flags cannot be combined with broadcast; segmented reductions return one total "
              "per segment"),
    ErrorCase("segmented-o16-algorithm", segmented_reduce_with_algorithm, coop.CoopValueError,
              "cuda.coop.reduce head_flags cannot be combined with algorithm; segmented reductions return one "
              "total per segment"),
    ErrorCase("segmented-c11-compact", compact_without_head_flags, coop.CoopValueError,
              "cuda.coop.sum compact requires head_flags"),
    ErrorCase("segmented-c4-compact", compact_at_run_time, coop.CoopTypeError,
              "cuda.coop.sum compact must be a compile-time bool"),
    ErrorCase("segmented-p2-float-flags", segmented_sum_float_flags, coop.CoopTypeError,
              "cuda.coop.sum does not support head_flags dtype float32; supported: int8, int16, int32, int64, "
              "uint8, uint16, uint32, uint64; a boolean flag is accepted as the scalar of a scalar value"),
    ErrorCase("segmented-p7-flags-extent", segmented_sum_flags_of_another_extent, coop.CoopValueError,
              "cuda.coop.sum value and head_flags must have the same items_per_thread (4 != 2)"),
    ErrorCase("segmented-c7-past-the-tile", segmented_sum_valid_items_past_the_tile, coop.CoopValueError,
              "cuda.coop.sum static valid_items must be between 0 and 32; got 33"),
    ErrorCase("segmented-g15-odd-width", segmented_sum_odd_logical_warp, coop.CoopUnsupportedError,
              "cuda.coop.sum supports logical-warp widths 1, 2, 4, 8, 16, 32; got 24 (with head_flags)"),
    ErrorCase("segmented-s2-warp-temp-storage", segmented_sum_warp_temp_storage, coop.CoopValueError,
              "cuda.coop.sum does not accept temp_storage for warp groups; their scratch is always "
              "compiler-owned"),
    ErrorCase("tuple-p18-mixing-payloads-and-scalars", tuple_mixing_payloads_and_scalars, coop.CoopTypeError,
              "cuda.coop.reduce value must be a tuple of 1 to 8 payloads of one extent or scalars; got a tuple "
              "mixing payloads and scalars"),
    ErrorCase("tuple-extents", tuple_of_other_extents, coop.CoopValueError,
              "cuda.coop.inclusive_scan value tuple payloads must have the same items_per_thread; got 4, 2"),
    ErrorCase("tuple-operator-arity", tuple_operator_of_another_arity, coop.CoopTypeError,
              "cuda.coop.inclusive_scan scan_op one_value could not be compiled for ((int32, int32), (int32, int32)); "
              "it must return a tuple of 2 values"),
    ErrorCase("tuple-operator-longer", tuple_operator_returning_more, coop.CoopTypeError,
              "cuda.coop.inclusive_scan scan_op three_values could not be compiled for ((int32, int32), (int32, "
              "int32)); it must return a tuple of 2 values"),
    ErrorCase("tuple-reduce-operator-longer", tuple_reduce_operator_returning_more, coop.CoopTypeError,
              "cuda.coop.reduce binary_op three_values could not be compiled for ((int32, int32), (int32, int32)); "
              "it must return a tuple of 2 values"),
    ErrorCase("tuple-initial-value-arity", tuple_initial_value_of_another_arity, coop.CoopTypeError,
              "cuda.coop.exclusive_scan initial_value must be a tuple of 2 values, as value is; got 3"),
    ErrorCase("tuple-operator-string", tuple_with_an_operator_string, coop.CoopTypeError,
              "cuda.coop.inclusive_scan over a tuple of operands needs scan_op=f, a function of two tuples returning "
              "a tuple; got 'sum'"),
    ErrorCase("tuple-sum", tuple_to_a_sum, coop.CoopTypeError,
              "cuda.coop.inclusive_sum takes one operand; scan a tuple with scan, inclusive_scan or exclusive_scan"),
    ErrorCase("tuple-reduce-sum", tuple_to_the_reduce_sum, coop.CoopTypeError,
              "cuda.coop.sum takes one operand; reduce a tuple with reduce and binary_op=f"),
    ErrorCase("missing-name-misspelt", misspelt_operation, AttributeError,
              "cuda.coop has no operation 'exclusive_summ'; did you mean 'exclusive_sum'?"),
    ErrorCase("missing-name-later-release", operation_of_a_later_release, AttributeError,
              "cuda.coop has no operation 'stream_compact_if' in cuda-coop "),
    ErrorCase("c5-storage-positional", c5_storage_alignment_positional, coop.CoopTypeError,
              "cuda.coop.TempStorage takes 1 positional operands; pass options by keyword"),
    ErrorCase("c5-thread-data-positional", c5_thread_data_alignment_positional, coop.CoopTypeError,
              "cuda.coop.ThreadData takes 2 positional operands; pass options by keyword"),
    ErrorCase("prefix-p5-state-two-items", p5_state_of_two_items, coop.CoopTypeError,
              "exclusive_sum state must be a one-item register payload; got a ThreadData of 2 items"),
    ErrorCase("prefix-p5-state-global", p5_state_in_global_memory, coop.CoopTypeError,
              "exclusive_sum state must be a one-item register payload; got a global-memory array"),
    ErrorCase("prefix-c9-state-dtype", c9_state_of_another_dtype, coop.CoopTypeError,
              "exclusive_sum state must have the payload dtype int64; got int32; cast it"),
    ErrorCase("prefix-o6-segmented-max", o6_running_segmented_max_without_initial_value, coop.CoopValueError,
              "exclusive_scan non-sum exclusive scans require initial_value"),
    ErrorCase("prefix-o7-segmented-inclusive", o7_running_segmented_inclusive_initial_value, coop.CoopValueError,
              "scan initial_value is not supported for inclusive scans"),
    ErrorCase("prefix-o14-initial-value", o14_prefix_initial_value_without_head_flags, coop.CoopValueError,
              "exclusive_scan prefix_op cannot be combined with initial_value without head_flags"),
    ErrorCase("prefix-o14-warp", o14_prefix_on_a_warp, coop.CoopValueError,
              "inclusive_sum prefix_op is supported only for block groups"),
    ErrorCase("prefix-o14-aggregate-output", o14_prefix_with_aggregate_output, coop.CoopValueError,
              "inclusive_sum prefix_op cannot be combined with aggregate_output"),
    ErrorCase("prefix-o17-reverse-segmented", o17_reverse_running_segmented, coop.CoopValueError,
              "inclusive_sum prefix_op with head_flags supports forward scans only; got reverse=True"),
    ErrorCase("prefix-o18-stateful-arity", o18_stateful_without_has_head, coop.CoopTypeError,
              "inclusive_sum prefix_op carry must take 3 arguments (state, aggregate, has_head) with head_flags; "
              "it takes 2"),
    ErrorCase("prefix-o18-stateless-arity", o18_stateless_with_has_head_but_no_head_flags, coop.CoopTypeError,
              "exclusive_sum prefix_op seed_heads must take 1 argument (aggregate) without head_flags; it takes 2"),
    ErrorCase("prefix-o19-tuple", o19_prefix_with_a_tuple, coop.CoopValueError,
              "inclusive_scan prefix_op supports a single operand; got a tuple of 2"),
    ErrorCase("g21-under-the-rank", g21_block_call_under_the_rank, coop.CoopValueError,
              "cuda.coop.inclusive_sum on block groups must be reached by every member, but it is under a condition "
              "that depends on ", words_differ=G21_WORDS),
    ErrorCase("g21-through-an-if", g21_block_call_under_a_value_an_if_takes_from_the_rank, coop.CoopValueError,
              "cuda.coop.inclusive_sum on block groups must be reached by every member, but it is under a condition "
              "that depends on ", words_differ=G21_WORDS),
    ErrorCase("g21-carried-by-a-loop", g21_block_call_under_a_value_a_loop_carries_from_the_rank, coop.CoopValueError,
              "cuda.coop.inclusive_sum on block groups must be reached by every member, but it is under a condition "
              "that depends on ", words_differ=G21_WORDS),
    ErrorCase("g21-under-another-groups-membership", g21_block_call_under_another_groups_membership,
              coop.CoopValueError, "cuda.coop.inclusive_sum on block groups must be reached by every member, but it is "
              "under a condition that depends on ", words_differ=G21_WORDS),
    ErrorCase("g21-under-a-warps-index", g21_block_call_under_a_warps_index, coop.CoopValueError,
              "cuda.coop.inclusive_sum on block groups must be reached by every member, but it is under a condition "
              "that depends on ", words_differ=G21_WORDS),
    ErrorCase("g21-trip-count-from-the-rank", g21_block_call_in_a_loop_whose_trips_the_rank_decides,
              coop.CoopValueError, "cuda.coop.inclusive_sum on block groups must be reached by every member, but it is "
              "under a condition that depends on ", words_differ=G21_WORDS),
    ErrorCase("g14-block-group-by-not-dividing", g14_block_group_by_not_dividing, coop.CoopValueError,
              "exhaustive ThreadGroup.group_by requires the count to divide the parent unit count (4)"),
    ErrorCase("p10-load-int-into-float", p10_load_int_into_float, coop.CoopTypeError,
              "cuda.coop.load source dtype int32 does not match payload dtype float32"),
    ErrorCase("p10-store-float-into-int", p10_store_float_into_int, coop.CoopTypeError,
              "cuda.coop.store destination dtype int32 does not match payload dtype float32; cast the value"),
    ErrorCase("p17-radix-tile-above-cub-limit", p17_radix_tile_above_cub_limit, coop.CoopValueError,
              "cuda.coop.radix_sort_keys tile of 131072 items exceeds CUB's limit of 65535 for this algorithm"),
    ErrorCase("c14-integer-operator", c14_integer_operator, coop.CoopTypeError,
              "cuda.coop.reduce binary_op must be an operator string or a Python/device function; got 3"),
    ErrorCase("s8-dynamic-storage-aligned-to-32", s8_dynamic_storage_aligned_to_32, coop.CoopValueError,
              "shared-memory alignment 32 exceeds the 16-byte limit of dynamic shared memory"),
    ErrorCase("o13-compare-op-descending", o13_compare_op_descending, coop.CoopValueError,
              ".merge_sort_keys compare_op cannot be combined with descending=True"),
    ErrorCase("o15-scatter-without-ranks", o15_scatter_without_ranks, coop.CoopValueError,
              ".exchange mode='scatter_to_striped' requires ranks"),
    ErrorCase("o15-guarded-scatter-time-sliced", o15_guarded_scatter_time_sliced, coop.CoopValueError,
              ".exchange mode='scatter_to_striped_guarded' does not support warp_time_slicing"),
    ErrorCase("g2-group-in-arithmetic", g2_group_in_arithmetic, coop.CoopTypeError,
              "ThreadGroup block escapes to runtime through an arithmetic expression at "),
    ErrorCase("g2-group-stored-into-an-array", g2_group_stored_into_an_array, coop.CoopTypeError,
              "ThreadGroup block escapes to runtime through an assignment into dst at "),
    ErrorCase("p4-common-shuffle-scalar", p4_common_shuffle_of_a_scalar, coop.CoopTypeError,
              "cuda.coop.shuffle requires a fixed-size ThreadData value payload in the common API; use "),
    ErrorCase("h2-operator-calls-sum", h2_operator_calls_sum, coop.CoopTypeError,
              "cuda.coop.reduce binary_op add_a_block_sum contains cuda.coop operations; callbacks may only do "
              "per-thread computation"),
]
