"""User-defined aggregates (NumPy structured dtypes) through the qualified namespace on the GPU (SPEC 9.2): data
movement, sort values, merge-sort keys with compare_op, reduce/scan with callables, adjacent_difference and
discontinuity with their callables, each against a NumPy oracle, outputs poisoned, inputs checked unchanged."""
from __future__ import annotations

import functools

import numpy as np
import pytest
from gpu_helpers import SEEDED_PER_TEST, poisoned
from numba_cuda_mlir import cuda

import cuda.coop.numba_mlir as numba_coop
from cuda import coop

pytestmark = pytest.mark.gpu
rng = SEEDED_PER_TEST  # each test draws from its own generator (tests/gpu/conftest.py)
GRID, THREADS, K = 3, 128, 4
TILE = THREADS * K
PAIR = np.dtype([("key", np.int32), ("val", np.float32)], align=True)  # 8 bytes, aligned to 4
ODD = np.dtype([("a", np.int8), ("b", np.int16), ("c", np.uint8)])  # 4 bytes, packed: alignment 1
WIDE = np.dtype([("k", np.int64), ("v", np.float64), ("t", np.int32)], align=True)  # 24 bytes, aligned to 8


def records(n, dtype, unique_keys=False):
    out = np.zeros(n, dtype)
    for name in dtype.names:
        kind = dtype.fields[name][0]
        if kind.kind == "f":
            out[name] = rng.normal(size=n).astype(kind)
        else:
            info = np.iinfo(kind)
            out[name] = rng.integers(max(info.min, -1000), min(info.max, 1000), n, dtype=kind)
    if unique_keys:
        out[dtype.names[0]] = rng.permutation(n).astype(dtype.fields[dtype.names[0]][0]) - n // 2
    return out


def same_bytes(got, want):
    np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))


@functools.cache
def copy_kernel(algorithm):
    @cuda.jit
    def kernel(src, dst, exchanged):
        block = coop.this_block()
        items = coop.ThreadData(K)
        base = np.int64(cuda.blockIdx.x) * TILE
        numba_coop.load(block, src, items, algorithm=algorithm, offset=base)
        numba_coop.store(block, dst, items, algorithm=algorithm, offset=base)
        blocked = numba_coop.exchange(block, items, mode="blocked_to_striped")
        numba_coop.store(block, exchanged, blocked, algorithm="striped", offset=base)

    return kernel


@pytest.mark.parametrize("dtype", [PAIR, ODD, WIDE], ids=["pair", "odd", "wide"])
@pytest.mark.parametrize("algorithm", ["direct", "striped", "vectorize", "transpose", "warp_transpose"])
def test_copy_and_exchange(dtype, algorithm):
    src = records(GRID * TILE, dtype)
    keep = src.copy()
    dst, exchanged = poisoned(src.size, dtype), poisoned(src.size, dtype)
    copy_kernel(algorithm)[GRID, THREADS](src, dst, exchanged)
    cuda.synchronize()
    same_bytes(src, keep)
    same_bytes(dst, src)
    if algorithm in ("direct", "vectorize"):  # a blocked tile, made striped and stored striped: the tile in order
        same_bytes(exchanged, src)


@cuda.jit(device=True)
def larger_key(a, b):
    return a if a.key >= b.key else b


def key_less(a, b):
    return a.key < b.key


def keys_differ(a, b):
    return a.key != b.key


@functools.cache
def compute_kernel():
    @cuda.jit
    def kernel(src, keys, sorted_by_key, radix_values, running, diffs, heads, best):
        block = coop.this_block()
        base = np.int64(cuda.blockIdx.x) * TILE
        items = coop.ThreadData(K)
        numba_coop.load(block, src, items, offset=base)
        numba_coop.store(block, sorted_by_key, numba_coop.merge_sort_keys(block, items, compare_op=key_less),
                         offset=base)
        radix_keys = coop.ThreadData(K)
        numba_coop.load(block, keys, radix_keys, offset=base)
        _, values = numba_coop.radix_sort_pairs(block, radix_keys, items)
        numba_coop.store(block, radix_values, values, offset=base)
        numba_coop.store(block, running, numba_coop.inclusive_scan(block, items, scan_op=larger_key), offset=base)
        numba_coop.store(block, diffs, numba_coop.adjacent_difference(block, items, difference_op=larger_key),
                         offset=base)
        numba_coop.store(block, heads, numba_coop.discontinuity(block, items, flag_op=keys_differ), offset=base)
        largest = numba_coop.reduce(block, items, binary_op=larger_key)
        if block.rank() == 0:
            best[cuda.blockIdx.x] = largest

    return kernel


def test_callables_and_sorts():
    src = records(GRID * TILE, PAIR, unique_keys=True)
    src["key"][5:9] = src["key"][4]  # a run of equal keys for the heads
    keep = src.copy()
    keys = rng.permutation(GRID * TILE).astype(np.int32)
    outs = [poisoned(src.size, PAIR) for _ in range(4)]
    heads = poisoned(src.size, np.int32)
    best = poisoned(GRID, PAIR)
    compute_kernel()[GRID, THREADS](src, keys, *outs, heads, best)
    cuda.synchronize()
    sorted_by_key, radix_values, running, diffs = outs
    same_bytes(src, keep)
    tiles, key_tiles = src.reshape(GRID, TILE), keys.reshape(GRID, TILE)
    want_sorted = np.stack([t[np.argsort(t["key"], kind="stable")] for t in tiles])
    same_bytes(sorted_by_key, want_sorted.reshape(-1))
    want_radix = np.stack([t[np.argsort(k, kind="stable")] for t, k in zip(tiles, key_tiles)])
    same_bytes(radix_values, want_radix.reshape(-1))
    # running "larger key" record: the record with the largest key so far (ties keep the earlier, as a >= b -> a)
    want_running = tiles.copy()
    for t in range(GRID):
        for i in range(1, TILE):
            prev = want_running[t, i - 1]
            if prev["key"] >= tiles[t, i]["key"]:
                want_running[t, i] = prev
    same_bytes(running, want_running.reshape(-1))
    # adjacent_difference (left): op(current, previous); the first item of each tile is copied
    want_diffs = tiles.copy()
    for t in range(GRID):
        for i in range(1, TILE):
            cur, prev = tiles[t, i], tiles[t, i - 1]
            want_diffs[t, i] = cur if cur["key"] >= prev["key"] else prev
    same_bytes(diffs, want_diffs.reshape(-1))
    want_heads = np.ones((GRID, TILE), np.int32)
    want_heads[:, 1:] = tiles["key"][:, 1:] != tiles["key"][:, :-1]
    np.testing.assert_array_equal(heads, want_heads.reshape(-1))
    same_bytes(best, np.stack([t[np.argmax(t["key"])] for t in tiles]))


@functools.cache
def movement_kernel():
    @cuda.jit
    def kernel(src, keys, lengths, shifted, neighbour, top_values, decoded):
        block = coop.this_block()
        base = np.int64(cuda.blockIdx.x) * TILE
        t = np.int64(cuda.blockIdx.x) * THREADS + block.rank()
        items = coop.ThreadData(K)
        numba_coop.load(block, src, items, offset=base)
        numba_coop.store(block, shifted, numba_coop.shuffle(block, items, mode="up"), offset=base)
        neighbour[t] = numba_coop.shuffle(block, src[t], mode="offset", distance=1)  # a scalar record
        radix_keys = coop.ThreadData(K)
        numba_coop.load(block, keys, radix_keys, offset=base)
        _, values = numba_coop.topk_max_pairs(block, radix_keys, items, k=10)
        numba_coop.store(block, top_values, values, offset=base)
        runs = coop.ThreadData(2)
        run_lengths = coop.ThreadData(2)
        run_base = np.int64(cuda.blockIdx.x) * THREADS * 2
        numba_coop.load(block, src, runs, offset=run_base)
        numba_coop.load(block, lengths, run_lengths, offset=run_base)
        window = numba_coop.run_length_decode(block, runs, run_lengths, decoded_items_per_thread=K,
                                              decoded_window_offset=0)
        numba_coop.store(block, decoded, window, offset=base)

    return kernel


def test_shuffle_topk_and_run_values():
    """Aggregates in the remaining data-movement roles (SPEC 9.2): shuffles (payload and scalar), top-k values,
    run-length decode values (positions past the stream are zero)."""
    src = records(GRID * TILE, PAIR)
    keep = src.copy()
    keys = rng.permutation(GRID * TILE).astype(np.int32)
    lengths = rng.integers(1, 4, GRID * THREADS * 2).astype(np.int32)
    shifted, top_values, decoded = (poisoned(src.size, PAIR) for _ in range(3))
    neighbour = poisoned(GRID * THREADS, PAIR)
    movement_kernel()[GRID, THREADS](src, keys, lengths, shifted, neighbour, top_values, decoded)
    cuda.synchronize()
    same_bytes(src, keep)
    tiles = src.reshape(GRID, TILE)
    same_bytes(shifted.reshape(GRID, TILE)[:, 1:], tiles[:, :-1])  # position 0 is unspecified
    scalars = src[:GRID * THREADS].reshape(GRID, THREADS)  # member t read src[block * THREADS + t]
    same_bytes(neighbour.reshape(GRID, THREADS)[:, :-1], scalars[:, 1:])  # the last member's is unspecified
    for b in range(GRID):
        order = np.argsort(-keys.reshape(GRID, TILE)[b], kind="stable")[:10]
        same_bytes(top_values.reshape(GRID, TILE)[b, :10], tiles[b, order])
        runs = src[b * THREADS * 2:(b + 1) * THREADS * 2]
        stream = np.repeat(runs, lengths[b * THREADS * 2:(b + 1) * THREADS * 2])[:TILE]
        want = np.zeros(TILE, PAIR)
        want[:stream.size] = stream
        same_bytes(decoded.reshape(GRID, TILE)[b], want)


@functools.cache
def scalar_pairs_kernel():
    @cuda.jit
    def kernel(keys, values, keys_out, values_out):
        block = coop.this_block()
        t = cuda.blockIdx.x * block.count() + block.rank()
        key, value = numba_coop.radix_sort_pairs(block, keys[t], values[t])
        keys_out[t] = key
        values_out[t] = value

    return kernel


def test_scalar_radix_pairs_with_record_values():
    """One key and one record per thread (SPEC 9.1, 9.2): member t receives the pair at sorted position t."""
    n = GRID * THREADS
    keys = rng.integers(0, 50, n).astype(np.int32)  # repeated keys: the sort is stable
    values = records(n, PAIR)
    keys_out, values_out = poisoned(n, np.int32), poisoned(n, PAIR)
    scalar_pairs_kernel()[GRID, THREADS](keys, values, keys_out, values_out)
    cuda.synchronize()
    order = np.argsort(keys.reshape(GRID, THREADS), axis=1, kind="stable")
    np.testing.assert_array_equal(keys_out, np.take_along_axis(keys.reshape(GRID, THREADS), order, 1).reshape(-1))
    same_bytes(values_out, np.take_along_axis(values.reshape(GRID, THREADS), order, 1).reshape(-1))
