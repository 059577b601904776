"""Running scans across tiles on numba-cuda-mlir without a GPU (SPEC 8.24, issue 42 item 6; docs: operations/scan,
"Running segmented scans" and "Reverse running scans"): prefix_op with head_flags is CUB's callback overload of
BlockScan over (flag, value) pairs (cuda_coop::BlockRunningSegmentedScan), and prefix_op with reverse=True our suffix
scan with the prefix on the right (cuda_coop::BlockRunningReverseScan); both callback forms take has_head with
head_flags, and every build is inlined with the state in registers (build_kernel: no CALL, no local memory). Their
results against NumPy on both backends: the conformance cases ``running_scan-segmented_*`` and
``running_scan-reverse_*``; the errors O6, O7, O14, O17, O18 and O19: ``error_cases.py``."""
from __future__ import annotations

import re

import numpy as np
import pytest
from numba_cuda_mlir import cuda

import cuda.coop.numba_mlir as numba_coop
from cuda import coop

from compile_helpers import build_kernel, expect_compile_error

THREADS, K, TILES = 128, 4, 3
I32 = np.zeros(TILES * THREADS * K, np.int32)
F64 = np.zeros(TILES * THREADS * K, np.float64)


def carry(state, aggregate, has_head):
    prefix = state[0]
    state[0] = aggregate if has_head else prefix + aggregate
    return prefix


def carry_reverse(state, aggregate):
    prefix = state[0]
    state[0] = aggregate + prefix
    return prefix


def seed(aggregate, has_head):
    return aggregate + has_head


RUNNING = numba_coop.StatefulFunction(carry, np.int32)
RUNNING_F64 = numba_coop.StatefulFunction(carry, np.float64)
SUFFIX = numba_coop.StatefulFunction(carry_reverse, np.int32)


def _algorithm(source):
    return re.findall(r"using Algo = (cuda_coop::\w+|cub::\w+)<", source)


@pytest.mark.parametrize("form, call", [
    ("inclusive_sum", "algo.InclusiveScan(in, out, flags, cuda::std::plus<int>{}, prefix);"),
    ("exclusive_sum", "algo.ExclusiveSum(in, out, flags, prefix);"),
    ("exclusive_max", "algo.ExclusiveScan(in, out, flags, initial_value, cuda::maximum<int>{}, prefix);"),
])
def test_running_segmented_scans_over_tiles_build_inline(form, call):
    @cuda.jit
    def kernel(src, flags, dst):
        block = coop.this_block()
        items = coop.ThreadData(K, dtype=np.int32)
        heads = coop.ThreadData(K, dtype=np.int32)
        state = coop.ThreadData(1, dtype=np.int32)
        state[0] = 0
        for t in range(TILES):
            coop.load(block, src, items, offset=t * THREADS * K)
            coop.load(block, flags, heads, offset=t * THREADS * K)
            if form == "inclusive_sum":
                out = numba_coop.inclusive_sum(block, items, state, prefix_op=RUNNING, head_flags=heads)
            elif form == "exclusive_sum":
                out = numba_coop.exclusive_sum(block, items, state, prefix_op=RUNNING, head_flags=heads)
            else:
                out = numba_coop.exclusive_scan(block, items, state, scan_op="max", initial_value=-1, prefix_op=RUNNING,
                                                head_flags=heads)
            coop.store(block, dst, out, offset=t * THREADS * K)

    source = build_kernel(kernel, (I32, I32, I32), block=THREADS).cpp_source
    assert "cuda_coop::BlockRunningSegmentedScan" in _algorithm(source)
    assert re.search(r'extern "C" __device__ int cuda_coop_fn_\w+_int32_state_int32_head\(int\*, int, int\);',
                     source)
    assert "operator()(int aggregate, int has_head)" in source and "prefix{state};" in source
    assert call in source


def test_a_stateless_running_segmented_scalar_scan_takes_has_head():
    """One value per thread, its flag a comparison (a boolean scalar); the callback f(aggregate, has_head)."""
    @cuda.jit
    def kernel(src, dst):
        block = coop.this_block()
        r = block.rank()
        dst[r] = numba_coop.inclusive_scan(block, src[r], scan_op="max", prefix_op=seed, head_flags=src[r] < 0)

    source = build_kernel(kernel, (F64, F64), block=THREADS).cpp_source
    assert re.search(r'extern "C" __device__ double cuda_coop_fn_\w+_float64_head_1\(double, int\);', source)
    assert "algo.InclusiveScan(in, out, flag, cuda_coop::maximum<double>{}, prefix);" in source


def test_the_callbacks_with_and_without_head_flags_are_two_functions():
    """A StatefulFunction used with and without head_flags compiles to two C functions (two arities)."""
    @cuda.jit
    def kernel(src, dst):
        block = coop.this_block()
        state = coop.ThreadData(1, dtype=np.float64)
        state[0] = 0.0
        r = block.rank()
        x = numba_coop.exclusive_sum(block, src[r], state, prefix_op=RUNNING_F64, head_flags=src[r] > 1.0)
        dst[r] = x

    source = build_kernel(kernel, (F64, F64), block=THREADS).cpp_source
    assert "_state_float64_head(double*, double, int);" in source


@pytest.mark.parametrize("block", [32, 20, 96])
@pytest.mark.parametrize("mode", ["inclusive", "exclusive"])
def test_reverse_running_scans_build_inline(block, mode):
    """Tiles from last to first; a block of one warp (whole or partial) shuffles the prefix, a larger one passes it
    through shared memory."""
    @cuda.jit
    def kernel(src, dst):
        b = coop.this_block()
        items = coop.ThreadData(2, dtype=np.int32)
        state = coop.ThreadData(1, dtype=np.int32)
        state[0] = 0
        for t in range(TILES):
            at = (TILES - 1 - t) * block * 2
            coop.load(b, src, items, offset=at)
            coop.store(b, dst, numba_coop.scan(b, items, state, mode=mode, prefix_op=SUFFIX, reverse=True),
                       offset=at)

    built = build_kernel(kernel, (I32, I32), block=block)
    source = built.cpp_source
    assert "cuda_coop::BlockRunningReverseScan" in _algorithm(source)
    method = "InclusiveScan" if mode == "inclusive" else "ExclusiveScan"
    assert f"algo.{method}(in, out, cuda::std::plus<int>{{}}, prefix);" in source
    assert "_state_int32(int*, int);" in source
    assert (built.shared_memory_bytes > 0) == (block > 32)  # one warp: shuffles only


def test_reverse_exclusive_max_needs_no_initial_value_with_a_prefix():
    """The prefix replaces initial_value (exempt from O6), as in forward scans with a callback."""
    @cuda.jit
    def kernel(src, dst):
        block = coop.this_block()
        state = coop.ThreadData(1, dtype=np.int32)
        state[0] = -1000
        r = block.rank()
        dst[r] = numba_coop.exclusive_scan(block, src[r], state, scan_op="max", prefix_op=SUFFIX, reverse=True)

    assert "cuda_coop::BlockRunningReverseScan" in _algorithm(build_kernel(kernel, (I32, I32)).cpp_source)


def test_a_prefix_op_of_the_wrong_arity_is_o18_before_any_build():
    @cuda.jit
    def kernel(src, dst):
        block = coop.this_block()
        state = coop.ThreadData(1, dtype=np.int32)
        state[0] = 0
        r = block.rank()
        dst[r] = numba_coop.exclusive_sum(block, src[r], state, prefix_op=SUFFIX, head_flags=src[r] > 0)  # HERE

    expect_compile_error(kernel, (I32, I32), coop.CoopTypeError,
                         "cuda.coop.numba_mlir.exclusive_sum prefix_op carry_reverse must take 3 arguments (state, "
                         "aggregate, has_head) with head_flags; it takes 2", exact_class=True, line_marker="# HERE")
