"""The shared error corpus: common-API mistakes written once, compiled by every backend (SPEC §0 rule 4, §10).

Each case is a conformance-style body (``body(bid, *operands)``, wrapped by each backend's harness) holding one
mistake on the line marked ``# HERE``, and the error every backend must report: the exact public class and a
fragment of the catalogue's wording (docs: errors). The test (``test_error_corpus.py``) also checks that the message
names this file and the marked line, and keeps compiler text out of its first line.
"""
from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from cuda import coop

from .cases import Array, Case

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

    @property
    def case(self) -> Case:
        """The case as the harnesses compile it (no oracle: it never runs)."""
        operands = (Array("src", self.src_dtype, N, "in", lambda rng: np.ones(N, self.src_dtype)),
                    Array("dst", np.int32, N, "out"))
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


def p2_complex_payload(bid, src, dst):
    block = coop.this_block()
    items = coop.ThreadData(K, np.complex64)
    coop.load(block, src, items)  # HERE
    coop.store(block, dst, items)


ERRORS = [
    ErrorCase("c5-unknown-keyword", c5_unknown_keyword, coop.CoopTypeError,
              "cuda.coop.load got an unexpected keyword argument 'count'"),
    ErrorCase("c5-option-positional", c5_option_positional, coop.CoopTypeError,
              "cuda.coop.exchange takes 2 positional operands; pass options by keyword"),
    ErrorCase("c5-scan-keyword", c5_scan_keyword, coop.CoopTypeError,
              "cuda.coop.inclusive_sum got an unexpected keyword argument 'init'"),
    ErrorCase("c3-blocked-to-striped", c3_blocked_to_striped, coop.CoopValueError,
              "cuda.coop.radix_sort_keys blocked_to_striped True requires cuda.coop."),
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
    ErrorCase("p2-complex-payload", p2_complex_payload, coop.CoopTypeError,
              "cuda.coop.load does not support output dtype complex64"),
]
