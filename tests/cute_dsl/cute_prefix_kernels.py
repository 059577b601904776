"""CuTe DSL kernels of block prefix callbacks for the CPU tests (SPEC 12.9; CuTe reads kernel source, so they live
in a file): StatefulFunction states as a ThreadData and as a register tensor, and the state forms that are errors."""
from __future__ import annotations

import numpy as np
import cutlass
import cutlass.cute as cute

import cuda.coop.cutlass as cute_coop
from cuda import coop

THREADS, K, TILES = 128, 4, 4


def running_total(state, aggregate):
    prefix = state[0]
    state[0] = prefix + aggregate
    return prefix


class RunningMax:
    """The class form: its unbound ``__call__(state, aggregate)`` is the op."""

    def __call__(state, aggregate):
        prefix = state[0]
        state[0] = aggregate if aggregate > prefix else prefix
        return prefix


def seed_of(aggregate):
    return aggregate * 0 + 7


def untraceable(state, aggregate):
    return state.no_such_attribute


def segment_carry(state, aggregate, has_head):
    """A running segmented sum's carry, SPEC 8.24's verbatim: the aggregate after a head, else the prefix plus it (a
    conditional expression on run-time values: the backend traces a plain function as CuTe traces a ``@cute.jit``
    one)."""
    prefix = state[0]
    state[0] = aggregate if has_head else prefix + aggregate
    return prefix


def capped_total(cap):
    """A closure: the callback sees its enclosing function's ``cap``, and branches with an ``if`` statement."""
    def carry(state, aggregate):
        prefix = state[0]
        total = prefix + aggregate
        if total > cap:
            total = cap
        state[0] = total
        return prefix

    return carry


def larger_of(a, b):  # an operator with a conditional expression on run-time values
    return a if a > b else b


larger_as_lambda = lambda a, b: a if a > b else b  # noqa: E731 - a lambda's source cannot be rewritten


def three_arguments(a, b, c):  # an operator of the wrong arity: the message names it, not the traced copy
    return a if a > b else c


def seed_with_heads(aggregate, has_head):
    return aggregate + has_head


RUNNING = cute_coop.StatefulFunction(running_total, np.int32)
SEGMENTS = cute_coop.StatefulFunction(segment_carry, np.int32)
RUNNING_MAX = cute_coop.StatefulFunction(RunningMax, cutlass.Float64, name="running_max")
RUNNING_I64 = cute_coop.StatefulFunction(running_total, np.int64)
CAPPED = cute_coop.StatefulFunction(capped_total(1 << 20), np.int32)
BROKEN = cute_coop.StatefulFunction(untraceable, np.int32)


def launcher(kernel):
    @cute.jit
    def launch(src: cute.Tensor, dst: cute.Tensor):
        kernel(src, dst).launch(grid=(1, 1, 1), block=(THREADS, 1, 1))

    return launch


@cute.kernel
def tiles_kernel(src: cute.Tensor, dst: cute.Tensor):
    """A running exclusive sum over TILES tiles in a run-time loop, the state a ThreadData."""
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    state = coop.ThreadData(1, np.int32)
    state[0] = 0
    for t in cutlass.range(TILES):
        coop.load(block, src, items, offset=t * (THREADS * K))
        coop.store(block, dst, cute_coop.exclusive_sum(block, items, state, prefix_op=RUNNING),
                   offset=t * (THREADS * K))


@cute.kernel
def fragment_state_kernel(src: cute.Tensor, dst: cute.Tensor):
    """A running inclusive max of float64 scalars (one per thread), the state a register tensor, the op a class."""
    block = coop.this_block()
    state = cute.make_rmem_tensor((1,), cutlass.Float64)
    state[0] = -1000.0
    items = coop.ThreadData(1, np.float64)
    for t in cutlass.range(TILES):
        coop.load(block, src, items, offset=t * THREADS)
        items[0] = cute_coop.inclusive_scan(block, items[0], state, scan_op="max", prefix_op=RUNNING_MAX)
        coop.store(block, dst, items, offset=t * THREADS)


@cute.kernel
def segmented_tiles_kernel(src: cute.Tensor, dst: cute.Tensor):
    """Running segmented scans over TILES tiles (SPEC 8.24): flags where an item is negative, a StatefulFunction
    with has_head carrying the open segment, and a stateless callback of (aggregate, has_head)."""
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    heads = coop.ThreadData(K, np.int32)
    state = coop.ThreadData(1, np.int32)
    state[0] = 0
    for t in cutlass.range(TILES):
        coop.load(block, src, items, offset=t * (THREADS * K))
        for i in range(K):
            heads[i] = items[i] < 0
        out = cute_coop.exclusive_scan(block, items, state, scan_op="max", initial_value=-1000, prefix_op=SEGMENTS,
                                       head_flags=heads)
        out = cute_coop.inclusive_sum(block, out, prefix_op=seed_with_heads, head_flags=heads)
        coop.store(block, dst, out, offset=t * (THREADS * K))


@cute.kernel
def branching_callbacks_kernel(src: cute.Tensor, dst: cute.Tensor):
    """Callbacks that branch on run-time values: a closure's ``if`` as a prefix callback, a conditional expression
    as a scan operator."""
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    state = coop.ThreadData(1, np.int32)
    state[0] = 0
    for t in cutlass.range(TILES):
        coop.load(block, src, items, offset=t * (THREADS * K))
        out = cute_coop.exclusive_sum(block, items, state, prefix_op=CAPPED)
        out = cute_coop.inclusive_scan(block, out, scan_op=larger_of)
        coop.store(block, dst, out, offset=t * (THREADS * K))


@cute.kernel
def lambda_operator_kernel(src: cute.Tensor, dst: cute.Tensor):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    coop.store(block, dst, cute_coop.inclusive_scan(block, items, scan_op=larger_as_lambda))  # HERE


@cute.kernel
def wrong_arity_operator_kernel(src: cute.Tensor, dst: cute.Tensor):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    coop.store(block, dst, cute_coop.inclusive_scan(block, items, scan_op=three_arguments))  # HERE


@cute.kernel
def reverse_tiles_kernel(src: cute.Tensor, dst: cute.Tensor):
    """A reverse running inclusive sum over TILES tiles from the last, the state a register tensor."""
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    state = cute.make_rmem_tensor((1,), cutlass.Int32)
    state[0] = 0
    for t in cutlass.range(TILES):
        at = (TILES - 1 - t) * (THREADS * K)
        coop.load(block, src, items, offset=at)
        coop.store(block, dst, cute_coop.inclusive_sum(block, items, state, prefix_op=RUNNING, reverse=True),
                   offset=at)


@cute.kernel
def global_state_kernel(src: cute.Tensor, dst: cute.Tensor):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    coop.store(block, dst, cute_coop.exclusive_sum(block, items, dst, prefix_op=RUNNING))  # HERE


@cute.kernel
def shared_state_kernel(src: cute.Tensor, dst: cute.Tensor):
    from cutlass.memory import SmemAllocator

    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    state = SmemAllocator().allocate_tensor(cutlass.Int32, cute.make_layout(1))
    coop.store(block, dst, cute_coop.exclusive_sum(block, items, state, prefix_op=RUNNING))  # HERE


@cute.kernel
def two_items_state_kernel(src: cute.Tensor, dst: cute.Tensor):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    state = coop.ThreadData(2, np.int32)
    coop.store(block, dst, cute_coop.exclusive_sum(block, items, state, prefix_op=RUNNING))  # HERE


@cute.kernel
def two_registers_state_kernel(src: cute.Tensor, dst: cute.Tensor):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    state = cute.make_rmem_tensor((2,), cutlass.Int32)
    coop.store(block, dst, cute_coop.exclusive_sum(block, items, state, prefix_op=RUNNING))  # HERE


@cute.kernel
def other_dtype_state_kernel(src: cute.Tensor, dst: cute.Tensor):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    state = cute.make_rmem_tensor((1,), cutlass.Int32)
    coop.store(block, dst, cute_coop.exclusive_sum(block, items, state, prefix_op=RUNNING_I64))  # HERE


@cute.kernel
def stateless_with_state_kernel(src: cute.Tensor, dst: cute.Tensor):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    state = coop.ThreadData(1, np.int32)
    coop.store(block, dst, cute_coop.exclusive_sum(block, items, state, prefix_op=seed_of))  # HERE


@cute.kernel
def untraceable_op_kernel(src: cute.Tensor, dst: cute.Tensor):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    state = coop.ThreadData(1, np.int32)
    coop.store(block, dst, cute_coop.exclusive_sum(block, items, state, prefix_op=BROKEN))  # HERE


@cute.kernel
def common_prefix_kernel(src: cute.Tensor, dst: cute.Tensor):
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items)
    coop.store(block, dst, coop.exclusive_sum(block, items, prefix_op=seed_of))  # HERE


tiles_launch = launcher(tiles_kernel)
segmented_tiles_launch = launcher(segmented_tiles_kernel)
reverse_tiles_launch = launcher(reverse_tiles_kernel)
branching_callbacks_launch = launcher(branching_callbacks_kernel)
fragment_state_launch = launcher(fragment_state_kernel)
ERROR_KERNELS = {"lambda": lambda_operator_kernel, "wrong_arity": wrong_arity_operator_kernel,
                 "global": global_state_kernel, "shared": shared_state_kernel,
                 "two_items": two_items_state_kernel,
                 "two_registers": two_registers_state_kernel, "other_dtype": other_dtype_state_kernel,
                 "stateless_with_state": stateless_with_state_kernel, "untraceable": untraceable_op_kernel,
                 "common": common_prefix_kernel}
ERROR_LAUNCHES = {name: launcher(kernel) for name, kernel in ERROR_KERNELS.items()}
