"""Corpus: groups, payloads and descriptors escaping to runtime, and unpacking mistakes (SPEC 3.1, 4, 6.4, 7.3,
10.2 G2, P14)."""
from __future__ import annotations

import numpy as np
import pytest

import cuda.coop.numba_mlir as numba_coop
from cuda import coop
from numba_cuda_mlir import cuda

I32 = np.zeros(1024, np.int32)


@cuda.jit(device=True, inline="never")
def plain_helper(x):
    return 1


# ------------------------------------------------------------------ G2: groups


@cuda.jit
def k_g2_group_in_list(src, dst):
    g = coop.this_warp()
    groups = [g]  # HERE
    dst[cuda.threadIdx.x] = coop.sum(g, src[cuda.threadIdx.x]) + len(groups)


@cuda.jit
def k_g2_group_to_plain_call(src, dst):
    g = coop.this_block()
    dst[cuda.threadIdx.x] = plain_helper(g)  # HERE


@cuda.jit
def k_g2_group_compared(src, dst):
    g = coop.this_block()
    if g == 1:  # HERE
        dst[0] = 1



@cuda.jit(device=True, inline="always")
def block_and_one():
    return (coop.this_block(), 1)  # HERE


@cuda.jit
def k_g2_group_in_tuple_from_inlined_helper(src, dst):
    pair = block_and_one()
    dst[0] = coop.sum(pair[0], src[cuda.threadIdx.x])


# ------------------------------------------------------------------ P14: payloads and descriptors


@cuda.jit
def k_p14_payload_in_tuple(src, dst):
    block = coop.this_block()
    items = coop.ThreadData(2)
    coop.load(block, src, items)
    both = (items, 3)  # HERE
    coop.store(block, dst, both[0])


@cuda.jit
def k_p14_payload_in_list(src, dst):
    block = coop.this_block()
    items = coop.ThreadData(2, dtype=np.int32)
    coop.load(block, src, items)
    stash = [items]  # HERE
    dst[cuda.threadIdx.x] = len(stash)


@cuda.jit
def k_p14_payload_to_plain_call(src, dst):
    block = coop.this_block()
    items = coop.ThreadData(2)
    coop.load(block, src, items)
    dst[cuda.threadIdx.x] = plain_helper(items)  # HERE


@cuda.jit
def k_p14_payload_iteration(src, dst):
    block = coop.this_block()
    items = coop.ThreadData(4)
    coop.load(block, src, items)
    total = 0
    for v in items:  # HERE
        total += v
    dst[cuda.threadIdx.x] = total


@cuda.jit
def k_p14_payload_arithmetic(src, dst):
    block = coop.this_block()
    items = coop.ThreadData(2)
    coop.load(block, src, items)
    doubled = items * 2  # HERE
    coop.store(block, dst, doubled)


@cuda.jit
def k_p14_storage_to_plain_call(src, dst):
    ts = coop.TempStorage()
    dst[cuda.threadIdx.x] = plain_helper(ts)  # HERE



@cuda.jit
def k_p14_storage_in_tuple(src, dst):
    ts = coop.TempStorage()
    keep = (ts, 0)  # HERE
    dst[0] = coop.sum(coop.this_block(), src[cuda.threadIdx.x], temp_storage=keep[0])


@cuda.jit
def k_p14_payload_slicing(src, dst):
    block = coop.this_block()
    items = coop.ThreadData(4)
    coop.load(block, src, items)
    head = items[0:2]  # HERE
    dst[cuda.threadIdx.x] = head[0]


@cuda.jit
def k_p14_payload_returned_from_kernel(src, dst):
    block = coop.this_block()
    items = coop.ThreadData(2)
    coop.load(block, src, items)
    return items  # HERE


@cuda.jit(device=True, inline="never")
def identity(x):
    return x


@cuda.jit
def k_p14_payload_round_trip_through_call(src, dst):
    block = coop.this_block()
    items = coop.ThreadData(2)
    coop.load(block, src, items)
    same = identity(items)  # HERE
    coop.store(block, dst, same)


# ------------------------------------------------------------------ unpacking results of pair operations


@cuda.jit
def k_unpack_too_many(src, dst):
    block = coop.this_block()
    keys = coop.ThreadData(2)
    values = coop.ThreadData(2)
    coop.load(block, src, keys)
    coop.load(block, src, values)
    k, v, extra = coop.radix_sort_pairs(block, keys, values)  # HERE
    coop.store(block, dst, k)


@cuda.jit
def k_unpack_too_few(src, dst):
    warp = coop.this_warp()
    keys = coop.ThreadData(2)
    values = coop.ThreadData(2)
    coop.load(warp, src, keys)
    coop.load(warp, src, values)
    (k,) = coop.merge_sort_pairs(warp, keys, values)  # HERE
    coop.store(warp, dst, k)


@cuda.jit
def k_pair_result_as_payload(src, dst):
    block = coop.this_block()
    keys = coop.ThreadData(2)
    values = coop.ThreadData(2)
    coop.load(block, src, keys)
    coop.load(block, src, values)
    out = coop.merge_sort_pairs(block, keys, values)
    coop.store(block, dst, out)  # HERE


@cuda.jit
def k_radix_pair_result_as_payload(src, dst):
    block = coop.this_block()
    keys = coop.ThreadData(2)
    values = coop.ThreadData(2)
    coop.load(block, src, keys)
    coop.load(block, src, values)
    sorted_pairs = numba_coop.radix_sort_pairs(block, keys, values)
    out = coop.exchange(block, sorted_pairs)  # HERE
    coop.store(block, dst, out)


CASES = {
    "g2_group_in_list": (k_g2_group_in_list, (I32, I32), coop.CoopTypeError,
                         "ThreadGroup g escapes to runtime through a list at test_corpus_escapes.py:"),
    "g2_group_to_plain_call": (k_g2_group_to_plain_call, (I32, I32), coop.CoopTypeError,
                               "ThreadGroup g escapes to runtime through a call of `plain_helper()`"),
    "g2_group_compared": (k_g2_group_compared, (I32, I32), coop.CoopTypeError,
                          "ThreadGroup g escapes to runtime through an arithmetic expression at "
                          "test_corpus_escapes.py:"),
    "p14_payload_in_tuple": (k_p14_payload_in_tuple, (I32, I32), coop.CoopTypeError,
                             "ThreadData items escapes to runtime through a tuple at test_corpus_escapes.py:"),
    "p14_payload_in_list": (k_p14_payload_in_list, (I32, I32), coop.CoopTypeError,
                            "ThreadData items escapes to runtime through a list at test_corpus_escapes.py:"),
    "p14_payload_to_plain_call": (k_p14_payload_to_plain_call, (I32, I32), coop.CoopTypeError,
                                  "ThreadData items escapes to runtime through a call of `plain_helper()`"),
    "p14_payload_iteration": (k_p14_payload_iteration, (I32, I32), coop.CoopTypeError,
                              "ThreadData items escapes to runtime through iteration at test_corpus_escapes.py:"),
    "p14_payload_arithmetic": (k_p14_payload_arithmetic, (I32, I32), coop.CoopTypeError,
                               "ThreadData items escapes to runtime through an arithmetic expression at "
                               "test_corpus_escapes.py:"),
    "p14_payload_round_trip": (k_p14_payload_round_trip_through_call, (I32, I32), coop.CoopTypeError,
                               "ThreadData items escapes to runtime through a call of `identity()` at "
                               "test_corpus_escapes.py:"),
    "p14_storage_to_plain_call": (k_p14_storage_to_plain_call, (I32, I32), coop.CoopTypeError,
                                  "TempStorage ts escapes to runtime through a call of `plain_helper()`"),
    "g2_group_in_tuple_from_inlined_helper": (k_g2_group_in_tuple_from_inlined_helper, (I32, I32),
                                              coop.CoopTypeError,
                                              "escapes to runtime through a tuple at test_corpus_escapes.py:",
                                              {"where": block_and_one}),
    "p14_storage_in_tuple": (k_p14_storage_in_tuple, (I32, I32), coop.CoopTypeError,
                             "TempStorage ts escapes to runtime through a tuple at test_corpus_escapes.py:"),
    "p14_payload_slicing": (k_p14_payload_slicing, (I32, I32), coop.CoopTypeError,
                            "ThreadData items escapes to runtime through slicing at test_corpus_escapes.py:"),
    "p14_payload_kernel_return": (k_p14_payload_returned_from_kernel, (I32, I32), coop.CoopTypeError,
                                  "ThreadData items escapes to runtime through the kernel's return value at "
                                  "test_corpus_escapes.py:"),
    "unpack_too_many": (k_unpack_too_many, (I32, I32), coop.CoopTypeError,
                        "cuda.coop.radix_sort_pairs returns (keys, values); unpack it into 2 names, not 3"),
    "unpack_too_few": (k_unpack_too_few, (I32, I32), coop.CoopTypeError,
                       "cuda.coop.merge_sort_pairs returns (keys, values); unpack it into 2 names, not 1"),
    "pair_result_as_payload": (k_pair_result_as_payload, (I32, I32), coop.CoopTypeError,
                               "cuda.coop.store value is the tuple that cuda.coop.merge_sort_pairs returns (keys, "
                               "values); unpack it first"),
    "radix_pair_result_as_payload": (k_radix_pair_result_as_payload, (I32, I32), coop.CoopTypeError,
                                     "cuda.coop.exchange value is the tuple that cuda.coop.numba_mlir.radix_sort_pairs "
                                     "returns (keys, values); unpack it first"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_escape_mistake(case, expect):
    kernel, args, cls, fragment, *rest = CASES[case]
    expect(kernel, args, cls, fragment, **(rest[0] if rest else {}))


def test_g2_group_in_tuple_is_a_group_escape(expect):
    exc = expect(k_g2_group_in_tuple_from_inlined_helper, (I32, I32), coop.CoopTypeError, "ThreadGroup ",
                 where=block_and_one)
    first = str(exc).splitlines()[0]
    assert "ThreadGroup " in first and " escapes to runtime through a tuple at " in first, first
    assert first.endswith("; groups may only be used with cuda.coop operations, group methods and inlined "
                          "helpers"), first
