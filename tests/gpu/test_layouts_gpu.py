"""The explainers' layout rules (cuda.coop._semantics.layouts, what `python -m cuda.coop explain` draws) checked
against what the built kernels do on the GPU: which tile element each slot holds after every load algorithm and
exchange mode, and where every store algorithm writes each slot."""
from __future__ import annotations

import functools

import numpy as np
import pytest
from gpu_helpers import poisoned
from numba_cuda_mlir import cuda

import cuda.coop.numba_mlir as numba_coop  # noqa: F401  (registers the backend; the alias keeps numba_cuda_mlir.cuda)
from cuda import coop
from cuda.coop._semantics import layouts

pytestmark = pytest.mark.gpu
THREADS, ITEMS = 64, 4  # two warps, so warp-striped and striped differ
TILE = THREADS * ITEMS


@functools.cache
def load_kernel(algorithm):
    """Load 0..TILE-1 with ``algorithm``; member t writes slot i to out[t*K + i] (plain per-thread code)."""
    @cuda.jit
    def kernel(src, out):
        block = coop.this_block()
        items = coop.ThreadData(ITEMS)
        coop.load(block, src, items, algorithm=algorithm)
        for i in range(ITEMS):
            out[block.rank() * ITEMS + i] = items[i]

    return kernel


@functools.cache
def store_kernel(algorithm):
    """Member t's slot i holds the value t*K + i; store it with ``algorithm``."""
    @cuda.jit
    def kernel(dst):
        block = coop.this_block()
        items = coop.ThreadData(ITEMS, dtype=np.int32)
        for i in range(ITEMS):
            items[i] = np.int32(block.rank() * ITEMS + i)
        coop.store(block, dst, items, algorithm=algorithm)

    return kernel


@functools.cache
def exchange_kernel(mode):
    """Slot i of member t starts with value t*K + i (the direct load's blocked arrangement), then ``mode``."""
    @cuda.jit
    def kernel(src, out):
        block = coop.this_block()
        items = coop.ThreadData(ITEMS)
        coop.load(block, src, items)
        moved = numba_coop.exchange(block, items, mode=mode)
        for i in range(ITEMS):
            out[block.rank() * ITEMS + i] = moved[i]

    return kernel


def expected_registers(arrangement):
    """out[t*K + i] = the tile position slot i of member t holds, by the layout rules."""
    return np.array([layouts.position(arrangement, t, i, THREADS, ITEMS) for t in range(THREADS)
                     for i in range(ITEMS)], np.int32)


@pytest.mark.parametrize("algorithm", layouts.LOAD_STORE_ALGORITHMS)
def test_load_produces_the_arrangement_the_explainer_draws(algorithm):
    src = np.arange(TILE, dtype=np.int32)
    out = poisoned(TILE, np.int32)
    load_kernel(algorithm)[1, THREADS](src, out)
    cuda.synchronize()
    np.testing.assert_array_equal(out, expected_registers(layouts.load_store_movement(algorithm).registers))


@pytest.mark.parametrize("algorithm", layouts.LOAD_STORE_ALGORITHMS)
def test_store_writes_where_the_explainer_draws(algorithm):
    dst = poisoned(TILE, np.int32)
    store_kernel(algorithm)[1, THREADS](dst)
    cuda.synchronize()
    arrangement = layouts.load_store_movement(algorithm).registers  # what store expects in registers
    expected = np.empty(TILE, np.int32)
    for t in range(THREADS):
        for i in range(ITEMS):
            expected[layouts.position(arrangement, t, i, THREADS, ITEMS)] = t * ITEMS + i
    np.testing.assert_array_equal(dst, expected)


@pytest.mark.parametrize("mode", [m for m in layouts.EXCHANGE_ALL_MODES if m not in layouts.SCATTER_MODES])
def test_exchange_moves_items_as_the_explainer_draws(mode):
    """The input slot i of member t holds value v = t*K + i, read as position p_in of the input arrangement; after
    the exchange the member/slot that the output arrangement assigns to p_in holds v."""
    source, target = layouts.exchange_arrangements(mode)
    src = np.arange(TILE, dtype=np.int32)
    out = poisoned(TILE, np.int32)
    exchange_kernel(mode)[1, THREADS](src, out)
    cuda.synchronize()
    expected = np.empty(TILE, np.int32)
    for t in range(THREADS):
        for i in range(ITEMS):
            p = layouts.position(source, t, i, THREADS, ITEMS)
            owner_rank, owner_slot = layouts.owner(target, p, THREADS, ITEMS)
            expected[owner_rank * ITEMS + owner_slot] = t * ITEMS + i
    np.testing.assert_array_equal(out, expected)
