"""User-defined aggregates registered through numba-cuda-mlir's extension API with a struct data model (SPEC 9.2),
without a GPU: scalars and ThreadData payloads in every role build with every call inlined and no local memory, the
opaque C++ struct has numba-cuda-mlir's size and alignment, and each mistake is a compile-time error naming the call
site. numba-cuda-mlir 0.6 has no arrays of struct-model types: a ThreadData of one is a pointer to its slots, and
local or shared arrays of one are an error that says so."""
from __future__ import annotations

import numpy as np
import pytest
from coop_struct_types import RUNNING_HULL, Interval, Tagged, hull, hull_device, interval_type, larger_key
from numba_cuda_mlir import cuda

import cuda.coop.numba_mlir as numba_coop
from cuda import coop

from compile_helpers import build_kernel, expect_compile_error

LO = np.zeros(256, np.float32)
KEYS = np.zeros(256, np.int64)


def test_reduce_and_scans_of_one_struct_per_thread_build():
    @cuda.jit
    def kernel(lo, out, keys):
        t = cuda.threadIdx.x
        value = Interval(lo[t], lo[t] + np.float32(1))
        total = numba_coop.reduce(coop.this_block(), value, binary_op=hull)
        running = numba_coop.inclusive_scan(coop.this_block(), value, scan_op=hull_device)
        before = numba_coop.exclusive_scan(coop.this_warp(), value, scan_op=hull, initial_value=Interval(lo[0], lo[1]))
        out[t] = total.lo + running.hi + before.lo

    source = build_kernel(kernel, (LO, LO, KEYS)).cpp_source
    assert "struct alignas(4) cuda_coop_agg_8_4 { unsigned int words[2]; };" in source


def test_reduce_groups_shuffles_and_sort_values_build():
    @cuda.jit
    def kernel(lo, out, keys):
        t = cuda.threadIdx.x
        value = Interval(lo[t], lo[t])
        warp = numba_coop.reduce(coop.this_warp(), value, binary_op=hull)
        own = numba_coop.reduce(coop.this_thread(), value, binary_op=hull)
        pair = numba_coop.reduce(coop.this_block().group_by(2), value, binary_op=hull)
        up = numba_coop.shuffle(coop.this_block(), value, mode="offset", distance=-1)
        around = numba_coop.shuffle(coop.this_block(), value, mode="rotate", distance=np.int32(keys[t]))
        tagged = Tagged(keys[t], np.int8(t), lo[t] > np.float32(0))
        key, moved = numba_coop.radix_sort_pairs(coop.this_block(), keys[t], tagged)
        best = numba_coop.reduce(coop.this_block(), tagged, binary_op=larger_key)
        out[t] = warp.lo + own.hi + pair.lo + up.hi + around.lo + np.float32(moved.tag + best.key + key)

    source = build_kernel(kernel, (LO, LO, KEYS)).cpp_source
    # int64, int8 and bool: one member per field, the padding in the widest words that fit
    assert ("struct alignas(8) cuda_coop_agg_16_8_81124 { unsigned long long m0; unsigned char m1; unsigned char m2; "
            "unsigned short m3; unsigned int m4; };") in source


@cuda.jit(device=True)
def widen(x):
    return Interval(x - np.float32(1), x + np.float32(1))


def test_a_device_function_returning_a_struct_types_the_operand():
    """A struct cannot be cast, so a device function's struct result types a scalar operand (a numeric result
    still does not: SPEC 4, cast it)."""
    @cuda.jit
    def kernel(lo, out, keys):
        t = cuda.threadIdx.x
        out[t] = numba_coop.reduce(coop.this_block(), widen(lo[t]), binary_op=hull).hi

    build_kernel(kernel, (LO, LO, KEYS))


def test_cluster_reduce_of_a_struct_builds():
    @cuda.jit
    def kernel(lo, out, keys):
        t = cuda.threadIdx.x
        total = numba_coop.reduce(coop.this_cluster(), Interval(lo[t], lo[t]), binary_op=hull)
        out[t] = total.lo

    build_kernel(kernel, (LO, LO, KEYS))


def test_common_api_rejects_a_struct_scalar_with_p1():
    @cuda.jit
    def kernel(lo, out, keys):
        t = cuda.threadIdx.x
        total = coop.reduce(coop.this_block(), Interval(lo[t], lo[t]), binary_op=hull)  # HERE
        out[t] = total.lo

    message = str(expect_compile_error(kernel, (LO, LO, KEYS), coop.CoopTypeError,
                                       "use cuda.coop.numba_mlir for Interval", site="first_line"))
    assert message.startswith("cuda.coop.reduce") or "cuda.coop.reduce" in message.splitlines()[0]


def test_an_operator_string_on_a_struct_is_an_error():
    @cuda.jit
    def kernel(lo, out, keys):
        t = cuda.threadIdx.x
        total = numba_coop.reduce(coop.this_block(), Interval(lo[t], lo[t]), binary_op="max")
        out[t] = total.lo

    expect_compile_error(kernel, (LO, LO, KEYS), coop.CoopTypeError,
                         "on the aggregate dtype Interval needs binary_op=<a Python or device function>",
                         site="first_line")


@pytest.mark.parametrize("role", ["radix key", "histogram sample"])
def test_a_struct_is_no_key_or_sample(role):
    @cuda.jit
    def kernel(lo, out, keys):
        t = cuda.threadIdx.x
        value = Interval(lo[t], lo[t])
        if role == "radix key":
            out[t] = numba_coop.radix_sort_keys(coop.this_block(), value).lo
        else:
            numba_coop.histogram(coop.this_block(), value, bins=16)

    expect_compile_error(kernel, (LO, LO, KEYS), coop.CoopTypeError, "dtype Interval; supported:", site="first_line")


@pytest.mark.parametrize("form", ["local", "shared"])
def test_local_and_shared_arrays_of_a_struct_model_type_are_unsupported(form):
    """numba-cuda-mlir 0.6 has no arrays of struct-model types (it raises an internal error): said at the array."""
    @cuda.jit
    def kernel(lo, out, keys):
        t = cuda.threadIdx.x
        if form == "local":
            items = numba_coop.local.array(2, interval_type)
        else:
            items = numba_coop.shared.array((128, 2), interval_type)[t]
        total = numba_coop.reduce(coop.this_block(), items, binary_op=hull)
        out[t] = total.lo

    message = str(expect_compile_error(kernel, (LO, LO, KEYS), coop.CoopUnsupportedError,
                                       f"a {form} array of the struct-model type Interval is not supported",
                                       site="first_line"))
    assert "use coop.ThreadData(items_per_thread, dtype=...)" in message


def by_lo(a, b):
    return a.lo < b.lo


def test_thread_data_of_a_struct_model_type_in_every_payload_role_builds():
    """A ThreadData of a struct-model type is a pointer to its slots (no arrays of such types in numba-cuda-mlir):
    indexing, len(), and every payload role of SPEC 9.2 build with no CALL and no local memory."""
    @cuda.jit
    def kernel(lo, out, keys):
        block = coop.this_block()
        t = cuda.threadIdx.x
        items = coop.ThreadData(2, dtype=interval_type)
        for j in range(len(items)):
            items[j] = Interval(lo[2 * t + j], lo[2 * t + j] + np.float32(1))
        inferred = coop.ThreadData(2)  # typed by what is stored into it
        inferred[0] = items[1]
        inferred[1] = items[0]
        radix_keys = coop.ThreadData(2)
        numba_coop.load(block, keys, radix_keys)
        total = numba_coop.reduce(block, inferred, binary_op=hull)
        striped = numba_coop.exchange(block, items, mode="blocked_to_striped")
        running = numba_coop.inclusive_scan(block, items, scan_op=hull)
        ordered = numba_coop.merge_sort_keys(block, items, compare_op=by_lo)
        _, moved = numba_coop.radix_sort_pairs(block, radix_keys, items)
        _, top = numba_coop.topk_max_pairs(block, radix_keys, items, k=10)
        spread = numba_coop.adjacent_difference(block, items, difference_op=hull)
        heads = numba_coop.discontinuity(block, items, flag_op=by_lo)
        for j in range(2):
            out[2 * t + j] = (total.lo + striped[j].lo + running[j].hi + ordered[j].lo + moved[j].hi + top[j].lo
                              + spread[j].hi + np.float32(heads[j]))

    build_kernel(kernel, (LO, LO, KEYS))




def test_running_scan_with_a_struct_state_builds():
    """A StatefulFunction whose state is a struct-model value carries a running hull across tiles."""
    @cuda.jit
    def kernel(lo, out, keys):
        block = coop.this_block()
        r = block.rank()
        state = coop.ThreadData(1, dtype=interval_type)
        state[0] = Interval(lo[0], lo[0])
        items = coop.ThreadData(2, dtype=interval_type)
        for tile in range(4):
            for j in range(2):
                items[j] = Interval(lo[2 * r + j], lo[2 * r + j] + np.float32(tile))
            before = numba_coop.exclusive_scan(block, items, state, scan_op=hull, prefix_op=RUNNING_HULL)
            out[2 * r] += before[0].lo + before[1].hi

    build_kernel(kernel, (LO, LO, KEYS))


PAIR = np.dtype([("key", np.int32), ("val", np.float32)], align=True)


def keep_first(state, block_aggregate):
    return state[0]


def test_a_structured_dtype_state_is_an_error():
    """A record's state[0] is a reference to the state: ``old = state[0]`` would change with the update."""
    running = numba_coop.StatefulFunction(keep_first, PAIR)

    @cuda.jit
    def kernel(src, dst):
        block = coop.this_block()
        state = coop.ThreadData(1, dtype=PAIR)
        state[0] = src[0]
        items = coop.ThreadData(2, dtype=PAIR)
        numba_coop.load(block, src, items)
        numba_coop.store(block, dst, numba_coop.exclusive_scan(block, items, state, scan_op=larger_key,
                                                               prefix_op=running))

    records = np.zeros(256, PAIR)
    message = str(expect_compile_error(kernel, (records, records), coop.CoopTypeError,
                                       "prefix_op StatefulFunction dtype dtype([(", site="first_line"))
    assert "use a numeric dtype or a struct-model type" in message
