"""Qualified exchange modes (warp-striped, scatter, warp_time_slicing) and scalar shuffles on the GPU against NumPy
oracles built from the layout rules of SPEC 5 (``_semantics/layouts.py``); rotate-distance traps in child processes
(SPEC 9.4, 9.5, 2.5)."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest
from gpu_helpers import assert_traps, poisoned
from numba_cuda_mlir import cuda

import cuda.coop.numba_mlir as numba_coop
from cuda import coop
from cuda.coop._semantics import layouts

pytestmark = pytest.mark.gpu

BLOCKS = [(32,), (128,), (8, 4, 1)]
DTYPES = [np.int32, np.float64]
KS = [1, 2, 4]


def _threads(block):
    return int(np.prod(block))


def _data(n, dtype, rng):
    if np.dtype(dtype).kind == "f":
        return rng.standard_normal(n).astype(dtype) * 100
    return rng.integers(-(2**30), 2**30, n).astype(dtype)


# ---------------------------------------------------------------------------- kernels (one per shape of call)

_kernels: dict = {}


def _kernel(mode, slicing, k):
    key = (mode, slicing, k)
    if key in _kernels:
        return _kernels[key]
    if mode == "scatter_to_striped_flagged":
        @cuda.jit
        def kernel(src, rk, fl, dst):
            block = coop.this_block()
            items = coop.ThreadData(k)
            ranks = coop.ThreadData(k)
            flags = coop.ThreadData(k)
            coop.load(block, src, items)
            coop.load(block, rk, ranks)
            coop.load(block, fl, flags)
            out = numba_coop.exchange(block, items, mode=mode, ranks=ranks, valid_flags=flags)
            coop.store(block, dst, out)
    elif mode in layouts.SCATTER_MODES:
        @cuda.jit
        def kernel(src, rk, fl, dst):
            block = coop.this_block()
            items = coop.ThreadData(k)
            ranks = coop.ThreadData(k)
            coop.load(block, src, items)
            coop.load(block, rk, ranks)
            out = numba_coop.exchange(block, items, mode=mode, ranks=ranks, warp_time_slicing=slicing)
            coop.store(block, dst, out)
    else:
        @cuda.jit
        def kernel(src, rk, fl, dst):
            block = coop.this_block()
            items = coop.ThreadData(k)
            coop.load(block, src, items)
            out = numba_coop.exchange(block, items, mode=mode, warp_time_slicing=slicing)
            coop.store(block, dst, out)
    _kernels[key] = kernel
    return kernel


def _grid(values, threads, k):
    """A blocked tile (member t, slot i at t*K + i) as [member][slot]."""
    return [[int(values[t * k + i]) for i in range(k)] for t in range(threads)]


def _run(mode, slicing, block, k, dtype, ranks=None, flags=None, seed=0):
    rng = np.random.default_rng(seed)
    threads = _threads(block)
    tile = threads * k
    src = _data(tile, dtype, rng)
    rk = np.zeros(tile, np.int32) if ranks is None else ranks
    fl = np.zeros(tile, np.uint8) if flags is None else flags
    keep = (src.copy(), rk.copy(), fl.copy())
    dst = poisoned(tile, dtype)
    _kernel(mode, slicing, k)[1, block](src, rk, fl, dst)
    cuda.synchronize()
    for before, after in zip(keep, (src, rk, fl)):
        np.testing.assert_array_equal(after, before)  # inputs unchanged
    return src, dst


# (K, dtype): every K with int32, one K with float64.
SHAPES = [(k, np.int32) for k in KS] + [(2, np.float64)]
# warp_time_slicing=True on the three shapes; with 32 threads there is a single warp (one time slice), so the
# sliced code paths are also run with 4 warps.
MODE_CASES = ([(m, False, b) for m in layouts.EXCHANGE_ALL_MODES for b in BLOCKS]
              + [(m, True, b) for m in layouts.EXCHANGE_ALL_MODES if m not in
                 ("scatter_to_striped_guarded", "scatter_to_striped_flagged") for b in [(128,), (8, 4, 1)]])


@pytest.mark.parametrize("mode, slicing, block", [c for c in MODE_CASES if c[0] not in layouts.SCATTER_MODES])
@pytest.mark.parametrize("k, dtype", SHAPES)
def test_layout_exchanges(mode, slicing, block, k, dtype):
    """Slot i of member t holds the item at tile position position(source, t, i); afterwards the owner of that
    position in the target arrangement holds it (every slot defined)."""
    threads = _threads(block)
    source, target = layouts.exchange_arrangements(mode)
    src, dst = _run(mode, slicing, block, k, dtype, seed=k)
    expected = np.empty_like(src)
    for t in range(threads):
        for i in range(k):
            rank, slot = layouts.owner(target, layouts.position(source, t, i, threads, k), threads, k)
            expected[rank * k + slot] = src[t * k + i]
    np.testing.assert_array_equal(dst, expected)


@pytest.mark.parametrize("mode, slicing, block", [c for c in MODE_CASES if c[0] in layouts.SCATTER_MODES])
@pytest.mark.parametrize("k, dtype", SHAPES)
def test_scatter_exchanges(mode, slicing, block, k, dtype):
    """Random unique ranks; guarded: about a quarter negative (nothing written); flagged: random flags. Only the
    positions some item lands on are defined, and only those are checked."""
    threads = _threads(block)
    tile = threads * k
    rng = np.random.default_rng(1000 + tile)
    ranks = rng.permutation(tile).astype(np.int32)
    guarded = mode == "scatter_to_striped_guarded"
    flags = None
    if guarded:
        skipped = rng.random(tile) < 0.25
        skipped[:2] = [True, False]
        ranks[skipped] = -1 - rng.integers(0, 1000, int(skipped.sum()))
        assert (ranks < 0).any() and (ranks >= 0).any()
    if mode == "scatter_to_striped_flagged":
        flags = (rng.random(tile) < 0.6).astype(np.uint8)
        assert flags.any() and not flags.all()
    _, target = layouts.exchange_arrangements(mode)
    src, dst = _run(mode, slicing, block, k, dtype, ranks=ranks, flags=flags, seed=tile)
    landed = layouts.scatter(_grid(ranks, threads, k), target, threads, k, guarded=guarded,
                             flags=None if flags is None else _grid(flags, threads, k))
    defined = 0
    for t in range(threads):
        for i in range(k):
            origin = landed[t][i]
            if origin is None:
                continue
            defined += 1
            assert dst[t * k + i] == src[origin[0] * k + origin[1]], (t, i)
    written = tile if flags is None and not guarded else int((ranks >= 0).sum() if guarded else flags.sum())
    assert defined == written


def test_warp_striped_round_trip_matches_the_formula():
    """blocked_to_warp_striped: slot i of member t = 32w + l holds tile position 32*K*w + l + 32*i."""
    block, k = (128,), 4
    src, dst = _run("blocked_to_warp_striped", False, block, k, np.int32, seed=7)
    for t in range(128):
        w, lane = divmod(t, 32)
        for i in range(k):
            assert dst[t * k + i] == src[32 * k * w + lane + 32 * i]


# ---------------------------------------------------------------------------- scalar shuffle

_shuffles: dict = {}


def _shuffle_kernel(mode, distance):
    """distance None: a runtime per-thread distance read from ``dist``; otherwise a literal."""
    key = (mode, distance)
    if key in _shuffles:
        return _shuffles[key]
    if distance is None:
        @cuda.jit
        def kernel(src, dst, dist):
            block = coop.this_block()
            t = block.rank()
            dst[t] = numba_coop.shuffle(block, src[t], mode=mode, distance=dist[t])
    else:
        @cuda.jit
        def kernel(src, dst, dist):
            block = coop.this_block()
            t = block.rank()
            dst[t] = numba_coop.shuffle(block, src[t], mode=mode, distance=distance)
    _shuffles[key] = kernel
    return kernel


def _shuffle(mode, distance, block, dtype, dist):
    threads = _threads(block)
    rng = np.random.default_rng(threads)
    src = _data(threads, dtype, rng)
    keep, keep_dist = src.copy(), dist.copy()
    dst = poisoned(threads, dtype)
    _shuffle_kernel(mode, distance)[1, block](src, dst, dist)
    cuda.synchronize()
    np.testing.assert_array_equal(src, keep)
    np.testing.assert_array_equal(dist, keep_dist)
    return src, dst


@pytest.mark.parametrize("distance", [5, -7, 0, 200, -(2**40)])
@pytest.mark.parametrize("block", BLOCKS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_offset_static_distance(distance, block, dtype):
    threads = _threads(block)
    src, dst = _shuffle("offset", distance, block, dtype, np.zeros(threads, np.int64))
    checked = 0
    for t in range(threads):
        source = layouts.scalar_shuffle_source(t, threads, "offset", distance)
        if source is not None:
            assert dst[t] == src[source], t
            checked += 1
    assert checked == max(0, threads - abs(distance))


@pytest.mark.parametrize("block", BLOCKS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("dist_dtype", [np.int32, np.int64])
def test_offset_runtime_per_thread_distance(block, dtype, dist_dtype):
    threads = _threads(block)
    rng = np.random.default_rng(5)
    dist = rng.integers(-threads - 3, threads + 3, threads).astype(dist_dtype)
    dist[:4] = [2**31 - 1, -(2**31), 0, 1] if dist_dtype == np.int32 else [2**40, -(2**40), 0, 1]
    src, dst = _shuffle("offset", None, block, dtype, dist)
    checked = 0
    for t in range(threads):
        source = layouts.scalar_shuffle_source(t, threads, "offset", int(dist[t]))
        if source is not None:
            assert dst[t] == src[source], (t, dist[t])
            checked += 1
    assert checked > threads // 3


@pytest.mark.parametrize("block", BLOCKS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_rotate_static_and_runtime(block, dtype):
    threads = _threads(block)
    for distance in (1, threads - 1):
        src, dst = _shuffle("rotate", distance, block, dtype, np.zeros(threads, np.int32))
        np.testing.assert_array_equal(dst, np.roll(src, -distance))
    rng = np.random.default_rng(9)
    dist = rng.integers(1, threads, threads).astype(np.int32)  # per thread, all in range
    src, dst = _shuffle("rotate", None, block, dtype, dist)
    expected = np.array([src[layouts.scalar_shuffle_source(t, threads, "rotate", int(dist[t]))]
                         for t in range(threads)], dtype)
    np.testing.assert_array_equal(dst, expected)


# ---------------------------------------------------------------------------- traps (child processes)

CHILD = textwrap.dedent("""
    import sys
    import numpy as np
    from numba_cuda_mlir import cuda
    import cuda.coop.numba_mlir as numba_coop
    from cuda import coop

    @cuda.jit
    def kernel(src, dst, d):
        block = coop.this_block()
        t = block.rank()
        dst[t] = numba_coop.shuffle(block, src[t], mode="rotate", distance=d)

    src = np.arange(128, dtype=np.int32) + 1
    dst = np.zeros_like(src)
    kernel[1, 128](src, dst, np.int64(127))   # in range: runs
    cuda.synchronize()
    assert (dst == np.roll(src, -127)).all()
    print("IN_RANGE_OK", flush=True)
    kernel[1, 128](src, dst, np.int64(int(sys.argv[1])))
    cuda.synchronize()
    print("NO_TRAP", flush=True)
""")


@pytest.mark.parametrize("distance", [0, 128, -1, 2**32 + 1])
def test_rotate_runtime_distance_out_of_range_traps(distance):
    assert_traps(CHILD, distance)
