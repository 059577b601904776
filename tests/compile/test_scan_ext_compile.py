"""sm_90 builds of the qualified scan extensions without a GPU, and their compile-time errors (SPEC 9.6;
C3, C5, C6, C7, C11, C12-shaped, C14, O14, P5, P10)."""
from __future__ import annotations

import numpy as np
import pytest
from numba_cuda_mlir import cuda

import cuda.coop.numba_mlir as numba_coop
from cuda import coop

from compile_helpers import build_kernel, expect_compile_error

I32 = np.zeros(4096, np.int32)
F64 = np.zeros(4096, np.float64)


def running_total(state, block_aggregate):
    old = state[0]
    state[0] = old + block_aggregate
    return old


class RunningTotal:
    def __call__(state, block_aggregate):  # the state payload
        old = state[0]
        state[0] = old + block_aggregate
        return old


def seed_of(aggregate):
    return aggregate * 0 + 7


def my_max(a, b):
    return max(a, b)


def broken_state(state, block_aggregate):
    return state.no_such_attribute


RUNNING = numba_coop.StatefulFunction(running_total, np.int32)
RUNNING_CLASS = numba_coop.StatefulFunction(RunningTotal, np.float64, name="running")
RUNNING_I64 = numba_coop.StatefulFunction(running_total, np.int64)
BROKEN = numba_coop.StatefulFunction(broken_state, np.int32)
BAD_DTYPE = numba_coop.StatefulFunction(running_total, "int32")


# ---------------------------------------------------------------------------- the public class


def test_stateful_function_is_qualified_only():
    assert "StatefulFunction" in numba_coop.__all__
    assert not hasattr(coop, "StatefulFunction")
    assert RUNNING.function is running_total and RUNNING.dtype is np.int32 and RUNNING.name == "running_total"
    assert RUNNING_CLASS.function is RunningTotal.__call__ and RUNNING_CLASS.name == "running"
    assert "running_total" in repr(RUNNING)


def test_stateful_function_rejects_non_callables():
    with pytest.raises(coop.CoopTypeError, match="StatefulFunction op must be a Python/device function"):
        numba_coop.StatefulFunction(3, np.int32)
    with pytest.raises(coop.CoopTypeError, match="StatefulFunction op must be"):
        numba_coop.StatefulFunction(int, np.int32)  # a class without a Python __call__


# ---------------------------------------------------------------------------- builds


def test_running_exclusive_sum_over_tiles_builds_inline():
    @cuda.jit
    def kernel(src, dst, n_tiles):
        block = coop.this_block()
        state = coop.ThreadData(1, dtype=np.int32)
        state[0] = 0
        items = coop.ThreadData(4, dtype=np.int32)
        for t in range(n_tiles):
            coop.load(block, src, items, offset=t * 512)
            coop.store(block, dst, numba_coop.exclusive_sum(block, items, state, prefix_op=RUNNING), offset=t * 512)

    built = build_kernel(kernel, (I32, I32, np.int32(8)))
    source = built.cpp_source
    assert "_state_int32(int*, int);" in source and "prefix{state};" in source
    assert "algo.ExclusiveSum(in, out, prefix);" in source
    assert "running_total" not in source  # the user callable is linked as LTO-IR and inlined


@pytest.mark.parametrize("block", [(32,), (8, 4, 1)])
def test_class_form_scalar_inclusive_sum_builds(block):
    @cuda.jit
    def kernel(src, dst):
        b = coop.this_block()
        state = coop.ThreadData(1, dtype=np.float64)
        state[0] = 0.0
        r = b.rank()
        dst[r] = numba_coop.inclusive_sum(b, src[r], state, prefix_op=RUNNING_CLASS)

    built = build_kernel(kernel, (F64, F64), block=block)
    assert "_state_float64(double*, double);" in built.cpp_source


def test_stateful_max_scan_with_wider_state_builds():
    @cuda.jit
    def kernel(src, dst):
        block = coop.this_block()
        state = coop.ThreadData(1)  # its dtype comes from the StatefulFunction
        state[0] = 0
        items = coop.ThreadData(2, dtype=np.int32)
        coop.load(block, src, items)
        coop.store(block, dst, numba_coop.exclusive_scan(block, items, state, scan_op="max", prefix_op=RUNNING_I64))

    built = build_kernel(kernel, (I32, I32))
    assert "_state_int64(long long*, int);" in built.cpp_source


@pytest.mark.parametrize("form, method", [
    ("inclusive_sum", "InclusiveSum(in, out, *aggregate)"),
    ("exclusive_sum", "ExclusiveSum(in, out, *aggregate)"),
    ("inclusive_scan", "InclusiveScan(in, out, cuda::maximum<int>{}, *aggregate)"),
    ("exclusive_scan", "ExclusiveScan(in, out, initial_value, cuda::maximum<int>{}, *aggregate)"),
])
@pytest.mark.parametrize("k", [0, 4])
def test_block_aggregate_output_builds(form, method, k):
    mode = form.split("_")[0]
    op = "sum" if form.endswith("sum") else "max"
    init = np.int32(-9) if form == "exclusive_scan" else None

    @cuda.jit
    def kernel(src, dst, agg_dst):
        block = coop.this_block()
        agg = coop.ThreadData(1)  # dtype inferred from the value
        if k == 0:
            r = block.rank()
            dst[r] = numba_coop.scan(block, src[r], mode=mode, scan_op=op, initial_value=init, aggregate_output=agg)
        else:
            items = coop.ThreadData(k, dtype=np.int32)
            coop.load(block, src, items)
            coop.store(block, dst, numba_coop.scan(block, items, mode=mode, scan_op=op, initial_value=init,
                                                   aggregate_output=agg))
        agg_dst[block.rank()] = agg[0]

    built = build_kernel(kernel, (I32, I32, I32))
    assert method in built.cpp_source


@pytest.mark.parametrize("width", [32, 16, 1])
@pytest.mark.parametrize("runtime", [True, False])
@pytest.mark.parametrize("aggregate", [True, False])
def test_warp_valid_items_builds(width, runtime, aggregate):
    @cuda.jit
    def kernel(src, dst, agg_dst, valid):
        g = coop.this_warp() if width == 32 else coop.this_warp().group_by(width)
        i = cuda.grid(1)
        agg = coop.ThreadData(1, dtype=np.int32)
        if runtime:
            if aggregate:
                dst[i] = numba_coop.exclusive_scan(g, src[i], scan_op=my_max, initial_value=-3, valid_items=valid,
                                                   aggregate_output=agg)
            else:
                dst[i] = numba_coop.exclusive_scan(g, src[i], scan_op=my_max, initial_value=-3, valid_items=valid)
        else:
            if aggregate:
                dst[i] = numba_coop.exclusive_scan(g, src[i], scan_op=my_max, initial_value=-3, valid_items=1,
                                                   aggregate_output=agg)
            else:
                dst[i] = numba_coop.exclusive_scan(g, src[i], scan_op=my_max, initial_value=-3, valid_items=1)
        agg_dst[i] = agg[0]

    built = build_kernel(kernel, (I32, I32, I32, np.int64(3)))
    source = built.cpp_source
    assert f"cuda_coop::check_range(valid_items, 1, {width});" in source
    if aggregate:
        assert f"using Algo = cuda_coop::WarpPartialScan<int, {width}, " in source  # include/cuda_coop/warp
        assert "(int)valid_items, *aggregate);" in source
    else:
        assert f"using Algo = cub::WarpScan<int, {width}>;" in source
        assert "algo.ExclusiveScan(in, out, initial_value, " in source and "WarpPartialScan" not in source


def test_warp_aggregate_output_builds():
    @cuda.jit
    def kernel(src, dst, agg_dst):
        g = coop.this_warp().group_by(8)
        i = cuda.grid(1)
        agg = coop.ThreadData(1, dtype=np.float64)
        dst[i] = numba_coop.inclusive_sum(g, src[i], aggregate_output=agg)
        agg_dst[i] = agg[0]

    built = build_kernel(kernel, (F64, F64, F64))
    assert "cub::WarpScan<double, 8>" in built.cpp_source and "InclusiveSum(in, out, *aggregate)" in built.cpp_source


def test_common_scans_are_unchanged():
    @cuda.jit
    def kernel(src, dst):
        dst[cuda.threadIdx.x] = coop.exclusive_sum(coop.this_warp(), src[cuda.threadIdx.x])

    source = build_kernel(kernel, (I32, I32)).cpp_source
    assert "int in, int initial_value, char* scratch, unsigned long long stride)" in source
    assert "valid_items" not in source


# ---------------------------------------------------------------------------- errors


def test_common_api_rejects_the_options():
    @cuda.jit
    def valid(src, dst):
        dst[cuda.threadIdx.x] = coop.inclusive_sum(coop.this_warp(), src[cuda.threadIdx.x], valid_items=16)

    expect_compile_error(valid, (I32, I32), coop.CoopValueError,
                         "cuda.coop.inclusive_sum valid_items 16 requires cuda.coop.numba_mlir; the common API "
                         "accepts: algorithm, reverse, head_flags, temp_storage")

    @cuda.jit
    def aggregate(src, dst):
        agg = coop.ThreadData(1, dtype=np.int32)
        dst[cuda.threadIdx.x] = coop.inclusive_sum(coop.this_block(), src[cuda.threadIdx.x], aggregate_output=agg)

    expect_compile_error(aggregate, (I32, I32), coop.CoopValueError,
                         "cuda.coop.inclusive_sum aggregate_output requires cuda.coop.numba_mlir")


def test_common_api_rejects_a_state_operand():
    @cuda.jit
    def kernel(src, dst):
        state = coop.ThreadData(1, dtype=np.int32)
        dst[0] = coop.exclusive_sum(coop.this_block(), src[0], state)

    expect_compile_error(kernel, (I32, I32), coop.CoopTypeError,
                         "cuda.coop.exclusive_sum takes 2 positional operands; pass options by keyword")


@pytest.mark.parametrize("value", [0, 17])
def test_static_valid_items_out_of_range(value):
    @cuda.jit
    def kernel(src, dst):
        g = coop.this_warp().group_by(16)
        dst[cuda.threadIdx.x] = numba_coop.inclusive_sum(g, src[cuda.threadIdx.x], valid_items=value)

    expect_compile_error(kernel, (I32, I32), coop.CoopValueError,
                         f"cuda.coop.numba_mlir.inclusive_sum static valid_items must be between 1 and 16; got {value}")


def test_runtime_valid_items_dtype():
    @cuda.jit
    def kernel(src, dst, valid):
        dst[cuda.threadIdx.x] = numba_coop.inclusive_sum(coop.this_warp(), src[cuda.threadIdx.x], valid_items=valid)

    expect_compile_error(kernel, (I32, I32, np.float32(3)), coop.CoopTypeError,
                         "cuda.coop.numba_mlir.inclusive_sum valid_items must be a signed integer of at most 64 bits "
                         "or an unsigned integer of at most 32 bits; got float32")


def test_valid_items_on_a_block():
    @cuda.jit
    def kernel(src, dst):
        dst[cuda.threadIdx.x] = numba_coop.inclusive_sum(coop.this_block(), src[cuda.threadIdx.x], valid_items=3)

    expect_compile_error(kernel, (I32, I32), coop.CoopValueError,
                         "cuda.coop.numba_mlir.inclusive_sum valid_items is supported only for warp "
                         "and logical-warp groups")


def test_aggregate_output_must_be_one_item_of_the_value_dtype():
    @cuda.jit
    def extent(src, dst):
        agg = coop.ThreadData(2, dtype=np.int32)
        dst[cuda.threadIdx.x] = numba_coop.inclusive_sum(coop.this_block(), src[cuda.threadIdx.x],
                                                         aggregate_output=agg)

    expect_compile_error(extent, (I32, I32), coop.CoopTypeError,
                         "cuda.coop.numba_mlir.inclusive_sum aggregate_output must be a one-item ThreadData; got "
                         "a ThreadData of 2 items")

    @cuda.jit
    def dtype(src, dst):
        agg = coop.ThreadData(1, dtype=np.float64)
        items = coop.ThreadData(2, dtype=np.int32)
        coop.load(coop.this_block(), src, items)
        coop.store(coop.this_block(), dst, numba_coop.inclusive_sum(coop.this_block(), items, aggregate_output=agg))

    expect_compile_error(dtype, (I32, I32), coop.CoopTypeError,
                         "cuda.coop.numba_mlir.inclusive_sum aggregate_output dtype float64 does not match value "
                         "dtype int32")

    @cuda.jit
    def scalar(src, dst):
        agg = src[1]
        dst[cuda.threadIdx.x] = numba_coop.inclusive_sum(coop.this_block(), src[cuda.threadIdx.x],
                                                         aggregate_output=agg)

    expect_compile_error(scalar, (I32, I32), coop.CoopTypeError,
                         "cuda.coop.numba_mlir.inclusive_sum aggregate_output must be a "
                         "ThreadData payload; got a scalar")


def test_prefix_op_with_aggregate_output():
    @cuda.jit
    def kernel(src, dst):
        agg = coop.ThreadData(1, dtype=np.int32)
        dst[0] = numba_coop.exclusive_sum(coop.this_block(), src[0], prefix_op=seed_of, aggregate_output=agg)

    expect_compile_error(kernel, (I32, I32), coop.CoopValueError,
                         "cuda.coop.numba_mlir.exclusive_sum prefix_op cannot be combined with aggregate_output")


def test_stateful_prefix_op_rules():
    @cuda.jit
    def no_state(src, dst):
        dst[0] = numba_coop.exclusive_sum(coop.this_block(), src[0], prefix_op=RUNNING)

    expect_compile_error(no_state, (I32, I32), coop.CoopValueError,
                         "cuda.coop.numba_mlir.exclusive_sum prefix_op StatefulFunction requires a "
                         "state operand after value")

    @cuda.jit
    def state_without_stateful(src, dst):
        state = coop.ThreadData(1, dtype=np.int32)
        dst[0] = numba_coop.exclusive_sum(coop.this_block(), src[0], state, prefix_op=seed_of)

    expect_compile_error(state_without_stateful, (I32, I32), coop.CoopValueError,
                         "cuda.coop.numba_mlir.exclusive_sum state requires prefix_op=StatefulFunction(...)")

    @cuda.jit
    def on_warp(src, dst):
        state = coop.ThreadData(1, dtype=np.int32)
        dst[0] = numba_coop.exclusive_sum(coop.this_warp(), src[0], state, prefix_op=RUNNING)

    expect_compile_error(on_warp, (I32, I32), coop.CoopValueError,
                         "cuda.coop.numba_mlir.exclusive_sum prefix_op is supported only for block groups")

    @cuda.jit
    def with_initial(src, dst):
        state = coop.ThreadData(1, dtype=np.int32)
        dst[0] = numba_coop.exclusive_scan(coop.this_block(), src[0], state, scan_op="max", initial_value=0,
                                           prefix_op=RUNNING)

    expect_compile_error(with_initial, (I32, I32), coop.CoopValueError,
                         "cuda.coop.numba_mlir.exclusive_scan prefix_op cannot be combined with initial_value")


def test_stateful_state_payload_checks():
    @cuda.jit
    def extent(src, dst):
        state = coop.ThreadData(2, dtype=np.int32)
        dst[0] = numba_coop.exclusive_sum(coop.this_block(), src[0], state, prefix_op=RUNNING)

    expect_compile_error(extent, (I32, I32), coop.CoopTypeError,
                         "cuda.coop.numba_mlir.exclusive_sum state must be a one-item register payload; got "
                         "a ThreadData of 2 items")

    @cuda.jit
    def dtype(src, dst):
        state = coop.ThreadData(1, dtype=np.float32)
        dst[0] = numba_coop.exclusive_sum(coop.this_block(), src[0], state, prefix_op=RUNNING)

    expect_compile_error(dtype, (I32, I32), coop.CoopTypeError,
                         "cuda.coop.numba_mlir.exclusive_sum state must have the payload dtype int32; "
                         "got float32; cast it")

    @cuda.jit
    def bad_dtype(src, dst):
        state = coop.ThreadData(1, dtype=np.int32)
        dst[0] = numba_coop.exclusive_sum(coop.this_block(), src[0], state, prefix_op=BAD_DTYPE)

    expect_compile_error(bad_dtype, (I32, I32), coop.CoopTypeError,
                         "cuda.coop.numba_mlir.exclusive_sum prefix_op StatefulFunction dtype must be a NumPy or "
                         "Numba scalar type; got 'int32'")


def test_stateful_callable_that_does_not_compile():
    @cuda.jit
    def kernel(src, dst):
        state = coop.ThreadData(1, dtype=np.int32)
        dst[0] = numba_coop.exclusive_sum(coop.this_block(), src[0], state, prefix_op=BROKEN)

    expect_compile_error(kernel, (I32, I32), coop.CoopTypeError,
                         "cuda.coop.numba_mlir.exclusive_sum prefix_op broken_state could not be compiled "
                         "for (int32 state, int32)")


def test_a_local_array_of_two_dimensions_is_no_payload():
    """Only a one-dimensional local array is a payload form (SPEC 9.1): a 2-D one is named as such, as an output and
    as an operand (it read as an unimplemented form, or as a scalar of unknown dtype)."""
    @cuda.jit
    def output(src, dst):
        tile = cuda.local.array((2, 2), np.int32)
        numba_coop.load(coop.this_block(), src, tile)

    expect_compile_error(output, (I32, I32), coop.CoopTypeError,
                         "cuda.coop.numba_mlir.load output must be a one-dimensional local array "
                         "(numba_coop.local.array(n, dtype)) or a ThreadData payload; got a local array of shape "
                         "(2, 2)")

    @cuda.jit
    def operand(src, dst):
        tile = cuda.local.array((2, 2), np.int32)
        for i in range(2):
            for j in range(2):
                tile[i, j] = src[i * 2 + j]
        dst[cuda.threadIdx.x] = numba_coop.inclusive_sum(coop.this_block(), tile)

    expect_compile_error(operand, (I32, I32), coop.CoopTypeError,
                         "cuda.coop.numba_mlir.inclusive_sum value must be a one-dimensional local array "
                         "(numba_coop.local.array(n, dtype)) or a ThreadData payload; got a local array of shape "
                         "(2, 2)")
