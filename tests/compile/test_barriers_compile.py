"""The barrier pass (SPEC 6.3): a compiler-owned scratch call gets a trailing reuse barrier only if a scratch-using
call can execute after it; counted in the generated C++ and in the SASS of sm_90 builds."""
from __future__ import annotations

import numpy as np
from numba_cuda_mlir import cuda

from cuda import coop

from compile_helpers import build_kernel

I32 = np.zeros(4096, np.int32)
MARK = "// reuse barrier for the scratch"


def _barriers(built):
    return built.sass().count("BAR.SYNC")


def test_straight_line_transpose_copy_synchronises_like_cub():
    """CUB C++: Load (one barrier inside), __syncthreads() before reusing the storage, Store (one inside)."""
    @cuda.jit
    def kernel(src, dst):
        block = coop.this_block()
        items = coop.ThreadData(4)
        coop.load(block, src, items, algorithm="transpose")
        coop.store(block, dst, items, algorithm="transpose")

    built = build_kernel(kernel, (I32, I32))
    assert built.cpp_source.count(MARK) == 1  # the load's: the store follows
    assert _barriers(built) == 3


def test_single_scratch_call_has_no_reuse_barrier():
    @cuda.jit
    def kernel(src, dst):
        block = coop.this_block()
        items = coop.ThreadData(4)
        coop.load(block, src, items)
        out = coop.exclusive_sum(block, items)
        coop.store(block, dst, out)

    without = build_kernel(kernel, (I32, I32))
    assert MARK not in without.cpp_source

    @cuda.jit
    def twice(src, dst):
        block = coop.this_block()
        items = coop.ThreadData(4)
        coop.load(block, src, items)
        out = coop.exclusive_sum(block, items)
        again = coop.inclusive_sum(block, out)
        coop.store(block, dst, again)

    with_second = build_kernel(twice, (I32, I32))
    assert with_second.cpp_source.count(MARK) == 1  # only the first scan's
    # the second scan adds its own barriers plus exactly one reuse barrier between the two
    assert _barriers(with_second) == 2 * _barriers(without) + 1


def test_loops_keep_their_reuse_barriers():
    """Through the back-edge the call follows itself: its barrier stays."""
    @cuda.jit
    def kernel(src, dst, tiles):
        block = coop.this_block()
        items = coop.ThreadData(4)
        for t in range(tiles):
            coop.load(block, src, items, offset=t * 512)
            out = coop.exclusive_sum(block, items)
            coop.store(block, dst, out, offset=t * 512)

    built = build_kernel(kernel, (I32, I32, 4))
    assert built.cpp_source.count(MARK) == 1


def test_a_call_after_the_loop_keeps_the_loops_barrier_and_drops_its_own():
    @cuda.jit
    def kernel(src, dst, tiles):
        block = coop.this_block()
        items = coop.ThreadData(4)
        coop.load(block, src, items)
        for _ in range(tiles):
            items = coop.inclusive_sum(block, items)
        total = coop.sum(block, items)
        coop.store(block, dst, items)
        if cuda.threadIdx.x == 0:
            dst[0] = total

    built = build_kernel(kernel, (I32, I32, 4))
    providers = [p for p in built.cpp_source.split('extern "C"') if "cuda_coop_" in p]
    scan = next(p for p in providers if "InclusiveSum" in p)
    reduce = next(p for p in providers if "BlockReduce" in p)
    assert MARK in scan and MARK not in reduce


def test_branches_end_without_reuse_barriers():
    """Each branch's call is the last on its path; the call before the branch is followed by one of them."""
    @cuda.jit
    def kernel(src, dst, flag):
        block = coop.this_block()
        items = coop.ThreadData(4)
        coop.load(block, src, items, algorithm="transpose")
        if flag > 0:
            coop.store(block, dst, items, algorithm="transpose")
        else:
            out = coop.exclusive_sum(block, items)
            coop.store(block, dst, out)

    built = build_kernel(kernel, (I32, I32, 1))
    providers = [p for p in built.cpp_source.split('extern "C"') if "cuda_coop_" in p]
    load = next(p for p in providers if "BlockLoad" in p)
    assert MARK in load
    assert sum(MARK in p for p in providers) == 1


def test_explicit_auto_sync_keeps_the_last_barrier():
    @cuda.jit
    def kernel(src, dst):
        block = coop.this_block()
        temp = coop.TempStorage(auto_sync=True)
        items = coop.ThreadData(4)
        coop.load(block, src, items)
        out = coop.exclusive_sum(block, items, temp_storage=temp)
        coop.store(block, dst, out)

    assert build_kernel(kernel, (I32, I32)).cpp_source.count(MARK) == 1


def test_warp_calls_follow_the_same_rule():
    @cuda.jit
    def kernel(src, dst):
        warp = coop.this_warp()
        items = coop.ThreadData(4)
        coop.load(warp, src, items, algorithm="transpose")
        coop.store(warp, dst, items, algorithm="transpose")

    built = build_kernel(kernel, (I32, I32))
    assert built.cpp_source.count(MARK) == 1
    assert "cuda_coop::sync_logical_warp(" in built.cpp_source
