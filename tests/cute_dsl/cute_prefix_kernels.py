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
        larger = aggregate > prefix
        state[0] = aggregate * larger + prefix * (1 - larger)
        return prefix


def seed_of(aggregate):
    return aggregate * 0 + 7


def untraceable(state, aggregate):
    return state.no_such_attribute


RUNNING = cute_coop.StatefulFunction(running_total, np.int32)
RUNNING_MAX = cute_coop.StatefulFunction(RunningMax, cutlass.Float64, name="running_max")
RUNNING_I64 = cute_coop.StatefulFunction(running_total, np.int64)
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
fragment_state_launch = launcher(fragment_state_kernel)
ERROR_KERNELS = {"global": global_state_kernel, "shared": shared_state_kernel, "two_items": two_items_state_kernel,
                 "two_registers": two_registers_state_kernel, "other_dtype": other_dtype_state_kernel,
                 "stateless_with_state": stateless_with_state_kernel, "untraceable": untraceable_op_kernel,
                 "common": common_prefix_kernel}
ERROR_LAUNCHES = {name: launcher(kernel) for name, kernel in ERROR_KERNELS.items()}
