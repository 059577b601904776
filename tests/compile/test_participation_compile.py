"""Divergent participation (SPEC 2.7, G21) at compile time; no GPU needed.

Rejections name the operation, the per-thread source and the call's line in this file; accepted kernels
compile fully for sm_90.
"""
from __future__ import annotations

import re

import numpy as np
import pytest

import cuda.coop.numba_mlir as numba_coop
from cuda import coop
from numba_cuda_mlir import cuda

from compile_helpers import line_of

I32 = np.zeros(1024, np.int32)
FILE = "test_participation_compile.py"


def _rejected(kernel, args, op, kind, source, *, cond_marker="COND", call_marker="CALL"):
    with pytest.raises(coop.CoopValueError) as info:
        numba_coop.compile_kernel(kernel, args, block=128, target="sm_90")
    message = str(info.value)
    assert isinstance(info.value, ValueError)
    assert message.startswith(f"{kernel.py_func.__code__.co_filename}:{line_of(kernel, call_marker)}: "), message
    assert f"{FILE}:{line_of(kernel, call_marker)}" in message, message
    assert (f"{op} on {kind} groups must be reached by every member, but it is under a condition that depends on "
            f"{source} (") in message, message
    assert re.search(rf"\(\S*{re.escape(FILE)}:{line_of(kernel, cond_marker)}\); use valid_items / oob_default, "
                     r"or move the condition inside the values", message), message
    return message


def _accepted(kernel, args):
    numba_coop.compile_kernel(kernel, args, block=128, target="sm_90")


# ------------------------------------------------------------------ rejected


@cuda.jit
def k_block_sum_under_tid(src, dst):
    block = coop.this_block()
    if cuda.threadIdx.x < 16:  # COND
        dst[0] = coop.sum(block, src[0])  # CALL


def test_block_sum_under_thread_index_rejected():
    _rejected(k_block_sum_under_tid, (I32, I32), "cuda.coop.sum", "block", "cuda.threadIdx.x")


@cuda.jit
def k_block_sum_under_rank(src, dst):
    block = coop.this_block()
    if block.rank() < 5:  # COND
        dst[0] = coop.sum(block, src[0])  # CALL


def test_block_sum_under_block_rank_rejected():
    _rejected(k_block_sum_under_rank, (I32, I32), "cuda.coop.sum", "block", "block.rank()")


@cuda.jit
def k_early_return(src, dst, n):
    block = coop.this_block()
    items = coop.ThreadData(4, dtype=np.int32)
    if cuda.threadIdx.x >= n:  # COND
        return
    coop.load(block, src, items)  # CALL
    coop.store(block, dst, items)


def test_block_load_after_early_return_rejected():
    _rejected(k_early_return, (I32, I32, np.int32(3)), "cuda.coop.load", "block", "cuda.threadIdx.x")


@cuda.jit
def k_block_sum_under_grid(src, dst, n):
    block = coop.this_block()
    if cuda.grid(1) < n:  # COND
        dst[0] = coop.sum(block, src[0])  # CALL


def test_block_sum_under_grid_index_rejected():
    _rejected(k_block_sum_under_grid, (I32, I32, np.int32(3)), "cuda.coop.sum", "block", "cuda.grid(1)")


@cuda.jit
def k_block_sum_under_derived(src, dst):
    block = coop.this_block()
    t = cuda.threadIdx.x * 2
    if t > 3:  # COND
        dst[0] = coop.sum(block, src[0])  # CALL


def test_block_sum_under_derived_value_rejected():
    _rejected(k_block_sum_under_derived, (I32, I32), "cuda.coop.sum", "block", "t (derived from cuda.threadIdx.x)")


@cuda.jit(device=True, inline="always")
def _lead_sums(block, src, dst):
    lead = block.rank() < 5
    if lead:  # COND
        dst[0] = coop.sum(block, src[0])  # CALL


@cuda.jit
def k_block_sum_in_an_inlined_helper(src, dst):
    _lead_sums(coop.this_block(), src, dst)


def test_block_sum_in_an_inlined_helper_names_the_helpers_variables():
    """numba renames an inlined helper's variables (``_lead_sums_v2_lead``, ``_lead_sums_v2__v12pred`` for a
    temporary): the message names them as the helper's source does."""
    with pytest.raises(coop.CoopValueError) as info:
        numba_coop.compile_kernel(k_block_sum_in_an_inlined_helper, (I32, I32), block=128, target="sm_90")
    message = str(info.value)
    assert message.startswith(f"{_lead_sums.py_func.__code__.co_filename}:{line_of(_lead_sums, 'CALL')}: "), message
    assert ("cuda.coop.sum on block groups must be reached by every member, but it is under a condition that depends "
            "on lead (derived from block.rank()) (") in message, message
    assert f"{FILE}:{line_of(_lead_sums, 'COND')});" in message, message


@cuda.jit(device=True, inline="always")
def _sums_over_rank_trips(block, src, dst):
    r = block.rank()
    for i in range(r % 3):  # COND
        dst[i] = coop.sum(block, src[i])  # CALL


@cuda.jit
def k_block_sum_in_a_loop_over_rank_trips(src, dst):
    _sums_over_rank_trips(coop.this_block(), src, dst)


def test_a_loop_trip_count_from_the_rank_names_the_users_variable():
    """The loop's condition reads ``r`` through numba's ``$phi`` temporaries (``_vphi..`` once inlined): the message
    names ``r``, never a temporary."""
    with pytest.raises(coop.CoopValueError) as info:
        numba_coop.compile_kernel(k_block_sum_in_a_loop_over_rank_trips, (I32, I32), block=128, target="sm_90")
    first = str(info.value).splitlines()[0]
    assert "depends on r (derived from block.rank()) (" in first and "_v" not in first, first
    assert f"{FILE}:{line_of(_sums_over_rank_trips, 'COND')});" in first, first


@cuda.jit
def k_warp_sum_under_lane(src, dst):
    warp = coop.this_warp()
    if cuda.laneid < 16:  # COND
        dst[0] = coop.sum(warp, src[0])  # CALL


def test_warp_sum_under_lane_rejected():
    _rejected(k_warp_sum_under_lane, (I32, I32), "cuda.coop.sum", "warp", "cuda.laneid")


@cuda.jit
def k_logical_warp_under_own_rank(src, dst):
    lw = coop.this_warp().group_by(16)
    if lw.rank() == 0:  # COND
        dst[0] = coop.sum(lw, src[0])  # CALL


def test_logical_warp_sum_under_own_rank_rejected():
    _rejected(k_logical_warp_under_own_rank, (I32, I32), "cuda.coop.sum", "threads_within_warp", "lw.rank()")


@cuda.jit
def k_block_sum_in_per_thread_loop(src, dst):
    block = coop.this_block()
    for i in range(cuda.threadIdx.x):  # COND
        dst[i] = coop.sum(block, src[i])  # CALL


def test_block_sum_in_loop_with_per_thread_trip_count_rejected():
    _rejected(k_block_sum_in_per_thread_loop, (I32, I32), "cuda.coop.sum", "block", "cuda.threadIdx.x")


@cuda.jit
def k_block_sum_nested(src, dst, n):
    block = coop.this_block()
    if cuda.threadIdx.x < 64:  # COND
        if n > 0:
            dst[0] = coop.sum(block, src[0])  # CALL


def test_block_sum_under_nested_condition_rejected():
    _rejected(k_block_sum_nested, (I32, I32, np.int32(3)), "cuda.coop.sum", "block", "cuda.threadIdx.x")


@cuda.jit
def k_block_sum_under_branch_chosen_value(src, dst):
    block = coop.this_block()
    if cuda.threadIdx.x < 3:
        x = 1
    else:
        x = 2
    if x == 1:  # COND
        dst[0] = coop.sum(block, src[0])  # CALL


def test_block_sum_under_value_chosen_by_per_thread_branch_rejected():
    _rejected(k_block_sum_under_branch_chosen_value, (I32, I32), "cuda.coop.sum", "block",
              "x (derived from cuda.threadIdx.x)")


@cuda.jit
def k_block_sum_under_other_groups_is_member(src, dst):
    block = coop.this_block()
    g = coop.this_warp().group_by(24, exhaustive=False)
    if g.is_member():  # COND
        dst[0] = coop.sum(block, src[0])  # CALL


def test_block_sum_under_logical_warp_membership_rejected():
    _rejected(k_block_sum_under_other_groups_is_member, (I32, I32), "cuda.coop.sum", "block", "g.is_member()")


@cuda.jit
def k_block_sum_in_per_thread_while(src, dst, n):
    block = coop.this_block()
    i = cuda.threadIdx.x
    while i < n:  # COND
        dst[0] = coop.sum(block, src[0])  # CALL
        i += 128


def test_block_sum_in_per_thread_while_loop_rejected():
    _rejected(k_block_sum_in_per_thread_while, (I32, I32, np.int32(3)), "cuda.coop.sum", "block",
              "i (derived from cuda.threadIdx.x)")


# ------------------------------------------------------------------ accepted


@cuda.jit
def k_block_sum_after_per_thread_break(src, dst, n):
    block = coop.this_block()
    for i in range(n):
        if cuda.threadIdx.x == i:
            break
    dst[0] = coop.sum(block, src[0])


@cuda.jit
def k_block_sum_under_block_level_ranks(src, dst):
    block = coop.this_block()
    if block.rank(level="grid") == 0 and block.rank(level="block") == 0:
        dst[0] = coop.sum(block, src[0])


@cuda.jit
def k_block_sum_under_block_index(src, dst, n):
    block = coop.this_block()
    if cuda.blockIdx.x < n and cuda.blockDim.x > 32 and cuda.gridDim.x > 0:
        dst[0] = coop.sum(block, src[0])


@cuda.jit
def k_block_sum_under_argument(src, dst, n):
    block = coop.this_block()
    if n > 3:
        dst[0] = coop.sum(block, src[0])


@cuda.jit
def k_block_sum_under_count(src, dst):
    block = coop.this_block()
    if block.count() > 64:
        dst[0] = coop.sum(block, src[0])


@cuda.jit
def k_block_sum_in_uniform_loop(src, dst):
    block = coop.this_block()
    total = 0
    for i in range(4):
        total += coop.sum(block, src[i])
    dst[0] = total


@cuda.jit
def k_block_sum_in_argument_loop(src, dst, n):
    block = coop.this_block()
    for i in range(n):
        dst[i] = coop.sum(block, src[i])


@cuda.jit
def k_warp_sum_under_thread_index(src, dst):
    warp = coop.this_warp()
    if cuda.threadIdx.x < 32:
        dst[0] = coop.sum(warp, src[0])


@cuda.jit
def k_non_exhaustive_is_member(src, dst):
    g = coop.this_warp().group_by(24, exhaustive=False)
    if g.is_member():
        dst[0] = coop.sum(g, src[0])


@cuda.jit
def k_block_sum_after_rejoin(src, dst):
    block = coop.this_block()
    if cuda.threadIdx.x < 3:
        x = 1
    else:
        x = 2
    dst[cuda.threadIdx.x] = coop.sum(block, src[x])


@cuda.jit
def k_block_sum_under_loaded_data(src, dst):
    block = coop.this_block()
    if src[0] > 0:
        dst[0] = coop.sum(block, src[1])


@cuda.jit
def k_block_sum_under_broadcast_result(src, dst):
    block = coop.this_block()
    total = coop.sum(block, src[cuda.threadIdx.x], broadcast=True)
    if total > 0:
        dst[0] = coop.sum(block, src[1])


@cuda.jit
def k_warp_sum_under_block_query(src, dst):
    warp = coop.this_warp()
    block = coop.this_block()
    if block.rank(level="warp") == 0 and warp.rank(level="block") == 0:
        dst[0] = coop.sum(warp, src[0])


@cuda.jit
def k_per_thread_work_after_block_call(src, dst):
    block = coop.this_block()
    total = coop.sum(block, src[cuda.threadIdx.x])
    if cuda.threadIdx.x == 0:
        dst[0] = total
    block.sync()
    if cuda.threadIdx.x < 4:
        block.sync()


@cuda.jit
def k_block_sum_under_a_carried_flag_after_a_thread_zero_store(src, dst):
    """The CuTe backend's twin: tests/cute_dsl/test_cutlass_compile.py, ``carried_condition_kernel``."""
    block = coop.this_block()
    if block.rank() == 0:
        dst[0] = src[0]
    seen = False
    for t in range(2):
        if src[t] > 0 and not seen:
            seen = True
        dst[t + 1] = src[2]
    if seen:
        dst[3] = coop.sum(block, src[cuda.threadIdx.x])


ACCEPTED = {
    "block_index": (k_block_sum_under_block_index, (I32, I32, np.int32(3))),
    "argument": (k_block_sum_under_argument, (I32, I32, np.int32(3))),
    "count": (k_block_sum_under_count, (I32, I32)),
    "uniform_loop": (k_block_sum_in_uniform_loop, (I32, I32)),
    "argument_loop": (k_block_sum_in_argument_loop, (I32, I32, np.int32(3))),
    "warp_under_thread_index": (k_warp_sum_under_thread_index, (I32, I32)),
    "non_exhaustive_is_member": (k_non_exhaustive_is_member, (I32, I32)),
    "rejoin": (k_block_sum_after_rejoin, (I32, I32)),
    "loaded_data": (k_block_sum_under_loaded_data, (I32, I32)),
    "broadcast_result": (k_block_sum_under_broadcast_result, (I32, I32)),
    "warp_under_block_queries": (k_warp_sum_under_block_query, (I32, I32)),
    "queries_not_checked": (k_per_thread_work_after_block_call, (I32, I32)),
    "after_per_thread_break": (k_block_sum_after_per_thread_break, (I32, I32, np.int32(3))),
    "block_level_ranks": (k_block_sum_under_block_level_ranks, (I32, I32)),
    "carried_flag_after_thread_zero_store": (k_block_sum_under_a_carried_flag_after_a_thread_zero_store, (I32, I32)),
}


@pytest.mark.parametrize("name", list(ACCEPTED))
def test_uniform_participation_accepted(name):
    kernel, args = ACCEPTED[name]
    _accepted(kernel, args)
