"""User-defined aggregates registered through numba-cuda-mlir's extension API with a struct data model (SPEC 9.2)
on the GPU: one value per thread through reduce (block, warp, this_thread, warp groups, cluster), scans, scalar
shuffles, radix_sort_pairs values and chained calls; ThreadData payloads of them in every payload role; a running
scan with a struct state. Each against a NumPy oracle, outputs poisoned, inputs checked unchanged. The kernels read
the fields from arrays and write them back (numba-cuda-mlir has no arrays of struct-model types)."""
from __future__ import annotations

import functools

import numpy as np
import pytest
from coop_struct_types import RUNNING_HULL, Interval, Tagged, hull, hull_device, interval_type, larger_key
from gpu_helpers import SEEDED_PER_TEST, poisoned
from numba_cuda_mlir import cuda

import cuda.coop.numba_mlir as numba_coop
from cuda import coop

pytestmark = pytest.mark.gpu
rng = SEEDED_PER_TEST  # each test draws from its own generator (tests/gpu/conftest.py)
GRID, THREADS = 4, 128


@cuda.jit(device=True)
def make_interval(lo, hi):
    return Interval(lo, hi)


def intervals(n):
    lo = rng.normal(size=n).astype(np.float32)
    return lo, (lo + rng.uniform(0.1, 2.0, n)).astype(np.float32)


def by_block(a):
    return a.reshape(GRID, -1)


@functools.cache
def reduce_scan_kernel():
    @cuda.jit
    def kernel(lo, hi, seed, total, running, before, warp, own, pair, chained):
        block = coop.this_block()
        t = cuda.blockIdx.x * THREADS + block.rank()
        value = Interval(lo[t], hi[t])
        r = numba_coop.reduce(block, value, binary_op=hull)
        s = numba_coop.inclusive_scan(block, value, scan_op=hull_device)
        e = numba_coop.exclusive_scan(coop.this_warp(), value, scan_op=hull,
                                      initial_value=Interval(seed[0], seed[1]))
        w = numba_coop.reduce(coop.this_warp(), value, binary_op=hull)
        o = numba_coop.reduce(coop.this_thread(), value, binary_op=hull)
        p = numba_coop.reduce(block.group_by(2), value, binary_op=hull)
        c = numba_coop.shuffle(block, r, mode="rotate", distance=1)  # a result feeds the next call
        d = numba_coop.reduce(block, make_interval(lo[t], hi[t]), binary_op=hull)  # a device function's struct
        total[2 * t], total[2 * t + 1] = r.lo, r.hi
        running[2 * t], running[2 * t + 1] = s.lo, s.hi
        before[2 * t], before[2 * t + 1] = e.lo, e.hi
        warp[2 * t], warp[2 * t + 1] = w.lo, w.hi
        own[2 * t], own[2 * t + 1] = o.lo, o.hi
        pair[2 * t], pair[2 * t + 1] = p.lo, p.hi
        chained[2 * t], chained[2 * t + 1] = c.lo + d.lo, c.hi + d.hi

    return kernel


def _pairs(out):
    return out.reshape(-1, 2)


def test_reduce_scans_and_groups_of_intervals():
    n = GRID * THREADS
    lo, hi = intervals(n)
    seed = np.array([-0.25, 0.25], np.float32)
    keep = (lo.copy(), hi.copy())
    outs = [poisoned(2 * n, np.float32) for _ in range(7)]
    reduce_scan_kernel()[GRID, THREADS](lo, hi, seed, *outs)
    cuda.synchronize()
    np.testing.assert_array_equal(lo, keep[0])
    np.testing.assert_array_equal(hi, keep[1])
    total, running, before, warp, own, pair, chained = (_pairs(o) for o in outs)

    def hull_of(lo_part, hi_part, axis):
        return np.stack([lo_part.min(axis=axis), hi_part.max(axis=axis)], -1)

    want_total = np.repeat(hull_of(by_block(lo), by_block(hi), 1), THREADS, 0)
    np.testing.assert_array_equal(total, want_total)  # broadcast: every member receives it
    np.testing.assert_array_equal(chained, want_total + want_total)
    want_running = np.stack([np.minimum.accumulate(by_block(lo), 1).reshape(-1),
                             np.maximum.accumulate(by_block(hi), 1).reshape(-1)], -1)
    np.testing.assert_array_equal(running, want_running)
    warps_lo, warps_hi = lo.reshape(-1, 32), hi.reshape(-1, 32)
    want_before = np.empty((n // 32, 32, 2), np.float32)
    want_before[:, 0] = seed
    want_before[:, 1:, 0] = np.minimum(seed[0], np.minimum.accumulate(warps_lo, 1)[:, :-1])
    want_before[:, 1:, 1] = np.maximum(seed[1], np.maximum.accumulate(warps_hi, 1)[:, :-1])
    np.testing.assert_array_equal(before, want_before.reshape(-1, 2))
    np.testing.assert_array_equal(warp, np.repeat(hull_of(warps_lo, warps_hi, 1), 32, 0))
    np.testing.assert_array_equal(own, np.stack([lo, hi], -1))
    np.testing.assert_array_equal(pair, np.repeat(hull_of(lo.reshape(-1, 64), hi.reshape(-1, 64), 1), 64, 0))


@functools.cache
def movement_kernel():
    @cuda.jit
    def kernel(keys, tags, flags, distance, up_key, around_key, sorted_keys, sorted_tags, sorted_flags, best):
        block = coop.this_block()
        t = cuda.blockIdx.x * THREADS + block.rank()
        value = Tagged(keys[t], tags[t], flags[t] != 0)
        up = numba_coop.shuffle(block, value, mode="offset", distance=-1)
        around = numba_coop.shuffle(block, value, mode="rotate", distance=distance[t])
        key, moved = numba_coop.radix_sort_pairs(block, keys[t], value)
        top = numba_coop.reduce(block, moved, binary_op=larger_key)  # an element of a tuple result feeds it
        up_key[t] = up.key
        around_key[t] = around.key + np.int64(around.tag) * 0x100000000
        sorted_keys[t] = key
        sorted_tags[t] = moved.tag
        sorted_flags[t] = 1 if moved.flag else 0
        best[t] = top.key + np.int64(top.tag) * 0x100000000

    return kernel


def test_shuffles_sort_values_and_argmax_of_tagged():
    """A 16-byte struct with padding (int64, int8, bool): every field survives every move."""
    n = GRID * THREADS
    keys = np.concatenate([rng.permutation(THREADS) * 1000 - 64000 for _ in range(GRID)]).astype(np.int64)
    tags = rng.integers(-100, 100, n).astype(np.int8)
    flags = rng.integers(0, 2, n).astype(np.uint8)
    distance = rng.integers(1, THREADS, n).astype(np.int32)
    keep = (keys.copy(), tags.copy(), flags.copy())
    up_key, around_key, sorted_keys, best = (poisoned(n, np.int64) for _ in range(4))
    sorted_tags, sorted_flags = poisoned(n, np.int8), poisoned(n, np.int32)
    movement_kernel()[GRID, THREADS](keys, tags, flags, distance, up_key, around_key, sorted_keys, sorted_tags,
                                     sorted_flags, best)
    cuda.synchronize()
    for got, want in zip((keys, tags, flags), keep):
        np.testing.assert_array_equal(got, want)
    k, g, f, d = by_block(keys), by_block(tags).astype(np.int64), by_block(flags), by_block(distance)
    ranks = np.arange(THREADS)
    np.testing.assert_array_equal(by_block(up_key)[:, 1:], k[:, :-1])  # member 0's source is outside: unspecified
    source = (ranks[None, :] + d) % THREADS
    want_around = np.take_along_axis(k, source, 1) + np.take_along_axis(g, source, 1) * 0x100000000
    np.testing.assert_array_equal(by_block(around_key), want_around)
    order = np.argsort(k, axis=1, kind="stable")
    np.testing.assert_array_equal(by_block(sorted_keys), np.take_along_axis(k, order, 1))
    np.testing.assert_array_equal(by_block(sorted_tags), np.take_along_axis(g, order, 1))
    np.testing.assert_array_equal(by_block(sorted_flags), np.take_along_axis(f, order, 1))
    top = np.argmax(k, axis=1)
    want_best = k[np.arange(GRID), top] + g[np.arange(GRID), top] * 0x100000000
    np.testing.assert_array_equal(by_block(best), np.repeat(want_best[:, None], THREADS, 1))


@functools.cache
def cluster_kernel():
    @cuda.jit
    def kernel(lo, hi, keys, tags, out, best):
        block = coop.this_block()
        t = cuda.blockIdx.x * THREADS + block.rank()
        total = numba_coop.reduce(coop.this_cluster(), Interval(lo[t], hi[t]), binary_op=hull)
        top = numba_coop.reduce(coop.this_cluster(), Tagged(keys[t], tags[t], lo[t] > hi[t]), binary_op=larger_key)
        out[2 * t], out[2 * t + 1] = total.lo, total.hi
        best[t] = top.key + np.int64(top.tag) * 0x100000000

    return kernel


@pytest.mark.parametrize("cluster_size", [2, 4])
def test_cluster_reduce_of_intervals(cluster_size):
    blocks = 8
    n = blocks * THREADS
    lo, hi = intervals(n)
    keys = rng.permutation(n).astype(np.int64) * 3 - n  # unique: one largest key per cluster
    tags = rng.integers(-100, 100, n).astype(np.int8)
    d_out, d_best = cuda.to_device(poisoned(2 * n, np.float32)), cuda.to_device(poisoned(n, np.int64))
    cluster_kernel()[(blocks, 1, 1), (THREADS, 1, 1), 0, 0, (cluster_size, 1, 1)](lo, hi, keys, tags, d_out, d_best)
    cuda.synchronize()
    per = cluster_size * THREADS
    want = np.stack([lo.reshape(-1, per).min(1), hi.reshape(-1, per).max(1)], -1)
    np.testing.assert_array_equal(d_out.copy_to_host().reshape(-1, 2), np.repeat(want, per, 0))
    top = np.argmax(keys.reshape(-1, per), 1)
    want_best = keys.reshape(-1, per)[np.arange(top.size), top] + \
        tags.reshape(-1, per)[np.arange(top.size), top].astype(np.int64) * 0x100000000
    np.testing.assert_array_equal(d_best.copy_to_host(), np.repeat(want_best, per))


K = 4
TILE = THREADS * K


def lo_differs(a, b):
    return a.lo != b.lo


def by_lo(a, b):
    return a.lo < b.lo


@functools.cache
def payload_kernel():
    @cuda.jit
    def kernel(lo, hi, keys, outs, heads, total):
        block = coop.this_block()
        r = block.rank()
        base = cuda.blockIdx.x * TILE
        items = coop.ThreadData(K, dtype=interval_type)  # a pointer to K slots (no arrays of struct types)
        for j in range(len(items)):
            items[j] = Interval(lo[base + K * r + j], hi[base + K * r + j])
        radix_keys = coop.ThreadData(K)
        numba_coop.load(block, keys, radix_keys, offset=base)
        striped = numba_coop.exchange(block, items, mode="blocked_to_striped")
        running = numba_coop.inclusive_scan(block, items, scan_op=hull)
        ordered = numba_coop.merge_sort_keys(block, items, compare_op=by_lo)
        _, moved = numba_coop.radix_sort_pairs(block, radix_keys, items)
        _, top = numba_coop.topk_max_pairs(block, radix_keys, items, k=10)
        spread = numba_coop.adjacent_difference(block, items, difference_op=hull)
        flags = numba_coop.discontinuity(block, items, flag_op=lo_differs)
        whole = numba_coop.reduce(block, items, binary_op=hull)
        for j in range(K):
            blocked, strided = base + K * r + j, base + j * THREADS + r
            outs[0, 2 * strided], outs[0, 2 * strided + 1] = striped[j].lo, striped[j].hi
            outs[1, 2 * blocked], outs[1, 2 * blocked + 1] = running[j].lo, running[j].hi
            outs[2, 2 * blocked], outs[2, 2 * blocked + 1] = ordered[j].lo, ordered[j].hi
            outs[3, 2 * blocked], outs[3, 2 * blocked + 1] = moved[j].lo, moved[j].hi
            outs[4, 2 * blocked], outs[4, 2 * blocked + 1] = top[j].lo, top[j].hi
            outs[5, 2 * blocked], outs[5, 2 * blocked + 1] = spread[j].lo, spread[j].hi
            heads[blocked] = flags[j]
        if r == 0:
            total[2 * cuda.blockIdx.x], total[2 * cuda.blockIdx.x + 1] = whole.lo, whole.hi

    return kernel


def test_thread_data_of_intervals_in_every_payload_role():
    """K = 4 intervals per thread: exchange, scan, merge sort with compare_op, radix-sort and top-k values,
    adjacent_difference, discontinuity and reduce, each against NumPy."""
    n = GRID * TILE
    lo = np.round(rng.normal(size=n), 1).astype(np.float32)  # one decimal: equal neighbours now and then
    hi = (lo + rng.uniform(0.1, 2.0, n)).astype(np.float32)
    keys = np.concatenate([rng.permutation(TILE) for _ in range(GRID)]).astype(np.int32)
    keep = (lo.copy(), hi.copy(), keys.copy())
    outs = poisoned(6 * 2 * n, np.float32).reshape(6, 2 * n)
    heads, total = poisoned(n, np.int32), poisoned(2 * GRID, np.float32)
    payload_kernel()[GRID, THREADS](lo, hi, keys, outs, heads, total)
    cuda.synchronize()
    for got, want in zip((lo, hi, keys), keep):
        np.testing.assert_array_equal(got, want)
    pairs = np.stack([lo, hi], -1).reshape(GRID, TILE, 2)
    got = outs.reshape(6, GRID, TILE, 2)
    np.testing.assert_array_equal(got[0], pairs)  # blocked -> striped, stored striped: the tile again
    want_running = np.stack([np.minimum.accumulate(pairs[..., 0], 1), np.maximum.accumulate(pairs[..., 1], 1)], -1)
    np.testing.assert_array_equal(got[1], want_running)
    by_lo_order = np.argsort(pairs[..., 0], axis=1, kind="stable")
    np.testing.assert_array_equal(got[2], np.take_along_axis(pairs, by_lo_order[..., None], 1))
    key_order = np.argsort(keys.reshape(GRID, TILE), axis=1, kind="stable")
    np.testing.assert_array_equal(got[3], np.take_along_axis(pairs, key_order[..., None], 1))
    largest = np.argsort(-keys.reshape(GRID, TILE), axis=1, kind="stable")[:, :10]
    np.testing.assert_array_equal(got[4][:, :10], np.take_along_axis(pairs, largest[..., None], 1))
    want_spread = pairs.copy()  # the first item of each tile is copied; then hull(current, previous)
    want_spread[:, 1:, 0] = np.minimum(pairs[:, 1:, 0], pairs[:, :-1, 0])
    want_spread[:, 1:, 1] = np.maximum(pairs[:, 1:, 1], pairs[:, :-1, 1])
    np.testing.assert_array_equal(got[5], want_spread)
    want_heads = np.ones((GRID, TILE), np.int32)
    want_heads[:, 1:] = pairs[:, 1:, 0] != pairs[:, :-1, 0]
    assert 0 < want_heads.sum() < want_heads.size  # both kinds of flag occur
    np.testing.assert_array_equal(heads.reshape(GRID, TILE), want_heads)
    np.testing.assert_array_equal(total.reshape(GRID, 2), np.stack([pairs[..., 0].min(1), pairs[..., 1].max(1)], -1))


TILES = 8


@functools.cache
def running_kernel():
    @cuda.jit
    def kernel(lo, hi, seed, out):
        block = coop.this_block()
        r = block.rank()
        state = coop.ThreadData(1, dtype=interval_type)
        state[0] = Interval(seed[0], seed[1])
        items = coop.ThreadData(K, dtype=interval_type)
        for tile in range(TILES):
            base = tile * TILE + K * r
            for j in range(K):
                items[j] = Interval(lo[base + j], hi[base + j])
            before = numba_coop.exclusive_scan(block, items, state, scan_op=hull, prefix_op=RUNNING_HULL)
            for j in range(K):
                out[2 * (base + j)], out[2 * (base + j) + 1] = before[j].lo, before[j].hi

    return kernel


def test_running_scan_across_tiles_with_a_struct_state():
    """One block scans TILES tiles; a StatefulFunction with an Interval state carries the hull between them, so the
    whole stream gets an exclusive running hull seeded with the state's first value."""
    n = TILES * TILE
    lo, hi = intervals(n)
    seed = np.array([0.5, 0.75], np.float32)
    out = poisoned(2 * n, np.float32)
    running_kernel()[1, THREADS](lo, hi, seed, out)
    cuda.synchronize()
    want = np.empty((n, 2), np.float32)
    want[0] = seed
    want[1:, 0] = np.minimum(seed[0], np.minimum.accumulate(lo)[:-1])
    want[1:, 1] = np.maximum(seed[1], np.maximum.accumulate(hi)[:-1])
    np.testing.assert_array_equal(out.reshape(n, 2), want)
