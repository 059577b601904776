"""Kernels the documentation includes (``literalinclude`` between ``# [name]`` markers), so its examples cannot
drift: tests/compile/test_docs_snippets_compile.py builds every kernel here, tests/gpu/test_docs_snippets_gpu.py
runs them against NumPy."""
from __future__ import annotations

import numpy as np
from numba_cuda_mlir import cuda

import cuda.coop.numba_mlir as numba_coop
from cuda import coop

THREADS, K, BINS = 128, 4, 256

# [partial-histogram]
@cuda.jit
def histogram_partial(samples, counts, n):
    """Bin counts of the first n samples. The samples past valid_items count nowhere, so the load need not fill
    the slots past n: they may hold anything."""
    block = coop.this_block()
    valid = min(n, THREADS * K)
    items = coop.ThreadData(K)
    coop.load(block, samples, items, valid_items=valid)
    bins = coop.histogram(block, items, bins=BINS, bins_per_thread=2, valid_items=valid)
    coop.store(block, counts, bins, algorithm="striped")
# [/partial-histogram]


# [partial-radix-sort]
@cuda.jit
def radix_sort_partial(keys_in, keys_out, n):
    """Sort the first n keys. The keys past valid_items take no part in the ordering; without oob_default the
    results past n are unspecified, so only the first n are stored."""
    block = coop.this_block()
    valid = min(n, THREADS * K)
    keys = coop.ThreadData(K)
    coop.load(block, keys_in, keys, valid_items=valid)
    ordered = coop.radix_sort_keys(block, keys, valid_items=valid)
    coop.store(block, keys_out, ordered, valid_items=valid)
# [/partial-radix-sort]


# [running-inclusive-sum]
def carry(state, tile_total):
    """The running prefix of a block scan over many tiles: return the total so far, add this tile's."""
    before = state[0]
    state[0] = before + tile_total
    return before


running = numba_coop.StatefulFunction(carry, np.int64)


@cuda.jit
def running_inclusive_sum(src, dst, tiles):
    """One block scans tiles after tiles: the state carries the sum of the tiles before."""
    block = coop.this_block()
    state = coop.ThreadData(1, dtype=np.int64)
    state[0] = 0  # every thread initialises the state identically
    items = coop.ThreadData(K, dtype=np.int64)
    for t in range(tiles):
        offset = np.int64(t) * THREADS * K
        coop.load(block, src, items, offset=offset)
        prefix = numba_coop.inclusive_sum(block, items, state, prefix_op=running)
        coop.store(block, dst, prefix, offset=offset)
# [/running-inclusive-sum]


# [wide-rows]
@cuda.jit
def row_sums(matrix, sums, width):
    """One block per row of a row-major matrix wider than a tile: a loop over the row's tiles, the last one
    partial, accumulating the block's sums."""
    block = coop.this_block()
    row = np.int64(cuda.blockIdx.x) * width
    tile = THREADS * K
    total = np.float64(0)
    items = coop.ThreadData(K)
    for start in range(0, width, tile):
        valid = min(width - start, tile)
        coop.load(block, matrix, items, offset=row + start, valid_items=valid, oob_default=0.0)
        total += coop.sum(block, items)
    if block.rank() == 0:
        sums[cuda.blockIdx.x] = total
# [/wide-rows]


# [local-and-shared]
@cuda.jit
def sort_rows_in_shared(src, dst):
    """A local array and rows of a backing shared array as payloads of qualified calls."""
    block = coop.this_block()
    rank = block.rank()
    keys = numba_coop.local.array(K, np.int32)
    numba_coop.load(block, src, keys)
    staged = numba_coop.shared.array((THREADS, K), np.int32)
    mine = staged[rank]  # this thread's row: no other thread passes it
    for i in range(K):
        mine[i] = keys[i]
    ordered = numba_coop.merge_sort_keys(block, mine)
    numba_coop.store(block, dst, ordered)
# [/local-and-shared]
