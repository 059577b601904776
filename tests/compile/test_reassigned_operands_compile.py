"""Operands whose variable holds, where the call stands, another value than the first one assigned to it
(numba-cuda-mlir; SPEC 8.18 for tuples): a tuple a loop may assign again under a condition, with a member whose
type the assignment widens (int32 to int64: the variable's type is unified), a tuple one of whose members is
assigned again after it was built, and a scalar assigned an int32 and then a float. The call must take the values
and the type the variable has there: the planner once passed the first tuple's members (the reduction saw only
its constants: the loads were dead in the SASS, and the top-k kernels of examples/workloads chose no digit), and
planned a scalar for its first assignment's dtype (a float sum truncated to int32). The same kernels run on the
GPU in tests/gpu/test_reassigned_operands_gpu.py; the conformance case ``multi_operand-block_reduce_reassigned``
holds both backends to the rule for tuples."""
from __future__ import annotations

import functools

import numpy as np
from numba_cuda_mlir import cuda

from cuda import coop
from cuda.coop import CoopTypeError

from compile_helpers import build_kernel, expect_compile_error

THREADS, K = 64, 8


def max_pair(a, b):
    return (max(a[0], b[0]), max(a[1], b[1]))


@functools.cache
def conditional_kernel():
    """Per warp: each lane's first item above ``threshold`` in its K-item row, scanned from the end (its position,
    widened to int64 by the arithmetic, and its value; (-1, -1) when none), then the warp's largest of each."""
    @cuda.jit
    def kernel(values, threshold, out):
        first = np.int32(cuda.threadIdx.x) * K
        found = (np.int32(-1), np.int32(-1))
        for j in range(K):
            at = first + np.int32(K - 1 - j)
            if values[at] > threshold:
                found = (at, values[at])
        found = coop.reduce(coop.this_warp(), found, binary_op=max_pair)
        out[cuda.threadIdx.x, 0] = found[0]
        out[cuda.threadIdx.x, 1] = np.int64(found[1])  # (docs: troubleshooting, a signed value in a 2-D store)
    return kernel


def conditional_args():
    return (np.zeros(THREADS * K, np.int32), np.int32(0), np.zeros((THREADS, 2), np.int64))


@functools.cache
def rebuilt_member_kernel():
    """A tuple built from ``a``, ``a`` assigned again before the block reduction: the sum of the first items."""
    @cuda.jit
    def kernel(values, out):
        t = cuda.threadIdx.x
        a = values[t * 2]
        pair = (a, values[t * 2 + 1])
        a = np.int32(7)
        total, other = coop.reduce(coop.this_block(), pair, binary_op=add_pair)
        out[t, 0] = np.int64(total) + a - a
        out[t, 1] = np.int64(other)  # (docs: troubleshooting, a signed value in a 2-D store)
    return kernel


def add_pair(a, b):
    return (a[0] + b[0], a[1] + b[1])


def test_a_conditionally_reassigned_tuple_reaches_the_call():
    """With the first tuple's members the reduction's input was a constant and every load of ``values`` dead: the
    SASS loads each of a lane's K items."""
    built = build_kernel(conditional_kernel(), conditional_args(), block=THREADS)
    assert built.sass().count("LDG") >= K, built.sass().count("LDG")


def test_a_member_assigned_after_the_tuple_was_built_keeps_the_built_value():
    built = build_kernel(rebuilt_member_kernel(), (np.zeros(THREADS * 2, np.int32), np.zeros((THREADS, 2),
                                                                                            np.int64)), block=THREADS)
    assert built.sass().count("LDG") >= 2


def test_tuples_of_different_lengths_in_one_variable_are_refused():
    @cuda.jit
    def kernel(values, out):
        t = cuda.threadIdx.x
        found = (values[t], values[t])
        if values[t] > 0:
            found = (values[t], values[t], values[t])
        total = coop.reduce(coop.this_block(), found, binary_op=add_pair)  # tuples 2 or 3
        out[t] = total[0]
    expect_compile_error(kernel, (np.zeros(THREADS, np.int32), np.zeros(THREADS, np.int32)), CoopTypeError,
                         "the tuple found has 2 or 3 members where the call takes it", block=THREADS,
                         site="prefix", line_marker="tuples 2 or 3")


def test_a_tuple_of_payloads_assigned_in_several_places_is_refused():
    @cuda.jit
    def kernel(values, out):
        block = coop.this_block()
        a = coop.ThreadData(2, np.int32)
        b = coop.ThreadData(2, np.int32)
        coop.load(block, values, a)
        coop.load(block, values, b)
        pair = (a, b)
        if values[0] > 0:
            pair = (b, a)
        total = coop.reduce(block, pair, binary_op=add_pair)  # payloads in two places
        out[cuda.threadIdx.x] = total[0]
    expect_compile_error(kernel, (np.zeros(THREADS * 2, np.int32), np.zeros(THREADS, np.int32)), CoopTypeError,
                         "pair is a tuple of ThreadData payloads assigned in several places", block=THREADS,
                         site="prefix", line_marker="payloads in two places")


@functools.cache
def scalar_kernel():
    """Each thread's value: an int32 0, or half its float32 input where that is positive (numba types the variable
    float64); the block's sum of them."""
    @cuda.jit
    def kernel(values, out):
        t = cuda.threadIdx.x
        v = np.int32(0)
        if values[t] > 0:
            v = values[t] * 0.5
        out[t] = coop.sum(coop.this_block(), v)
    return kernel


def test_a_scalar_assigned_an_int_then_a_float_is_summed_as_a_float():
    built = build_kernel(scalar_kernel(), (np.zeros(THREADS, np.float32), np.zeros(THREADS, np.float64)),
                         block=THREADS)
    assert "BlockReduce<double" in built.cpp_source, built.cpp_source


def test_a_float_the_plan_could_not_see_is_refused_not_truncated():
    @cuda.jit
    def kernel(values, out):
        t = cuda.threadIdx.x
        v = np.int32(0)
        if values[t] > 0:
            v = 0.5
        out[t] = coop.sum(coop.this_block(), v)  # int32 then a float literal
    expect_compile_error(kernel, (np.zeros(THREADS, np.float32), np.zeros(THREADS, np.float64)), CoopTypeError,
                         "operand is a float64 here, but the call was planned for int32", block=THREADS,
                         site="prefix", line_marker="int32 then a float literal")
