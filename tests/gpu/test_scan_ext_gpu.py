"""Qualified scan extensions on the GPU against NumPy oracles (SPEC 9.6): warp and logical-warp ``valid_items``,
``aggregate_output`` for blocks and warps, and ``prefix_op=StatefulFunction`` running block scans over many tiles
(the single-pass device-wide scan pattern); out-of-range runtime ``valid_items`` traps (SPEC 2.5)."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest
from gpu_helpers import SEEDED_PER_TEST, assert_traps, poisoned
from numba_cuda_mlir import cuda

import cuda.coop.numba_mlir as numba_coop
from cuda import coop

pytestmark = pytest.mark.gpu
GRID = 2
rng = SEEDED_PER_TEST  # each test draws from its own generator (tests/gpu/conftest.py)


def data(n, dtype):
    """Random integer-valued data (floats too, so that sums are exact in any combination order); never all 0."""
    return rng.integers(-1000, 1000, n).astype(dtype)


def my_max(a, b):
    return max(a, b)


# (mode, scan_op, needs initial_value, NumPy operator)
FORMS = {
    "inclusive_sum": ("inclusive", "sum", False, np.add),
    "exclusive_sum": ("exclusive", "sum", False, np.add),
    "exclusive_scan": ("exclusive", my_max, True, np.maximum),  # a user callable with initial_value
    "inclusive_scan": ("inclusive", "max", False, np.maximum),
}
INITIAL = -5000


def scan_oracle(x, form, dtype):
    """(scan of x, aggregate of x) as the form defines them."""
    mode, _, has_init, fn = FORMS[form]
    inclusive = fn.accumulate(x.astype(dtype), dtype=dtype)
    aggregate = inclusive[-1]
    if mode == "inclusive":
        return inclusive, aggregate
    seed = dtype(INITIAL) if has_init else dtype(0)
    exclusive = np.empty_like(inclusive)
    exclusive[0] = seed
    exclusive[1:] = fn(seed, inclusive[:-1]) if has_init else inclusive[:-1]
    return exclusive, aggregate


# ------------------------------------------------------------------ warp and logical-warp valid_items


def warp_kernel(width, form, dtype, valid, aggregate):
    """``valid``: None (no valid_items), "runtime" (the kernel argument) or a literal int."""
    mode, op, has_init, _ = FORMS[form]
    init = dtype(INITIAL) if has_init else None
    literal = None if valid == "runtime" else valid

    @cuda.jit
    def kernel(src, dst, agg_dst, v):
        g = coop.this_warp() if width == 32 else coop.this_warp().group_by(width)
        i = cuda.grid(1)
        agg = coop.ThreadData(1, dtype=dtype)
        if valid == "runtime":
            if aggregate:
                r = numba_coop.scan(g, src[i], mode=mode, scan_op=op, initial_value=init, valid_items=v,
                                    aggregate_output=agg)
                agg_dst[i] = agg[0]
            else:
                r = numba_coop.scan(g, src[i], mode=mode, scan_op=op, initial_value=init, valid_items=v)
        else:
            if aggregate:
                r = numba_coop.scan(g, src[i], mode=mode, scan_op=op, initial_value=init, valid_items=literal,
                                    aggregate_output=agg)
                agg_dst[i] = agg[0]
            else:
                r = numba_coop.scan(g, src[i], mode=mode, scan_op=op, initial_value=init, valid_items=literal)
        dst[i] = r

    return kernel


def check_warp(width, form, dtype, src, out, agg, v, aggregate):
    w = width
    for start in range(0, src.size, w):
        n = w if v is None else v
        want, total = scan_oracle(src[start:start + n], form, dtype)
        np.testing.assert_array_equal(out[start:start + n], want)  # lanes >= valid_items: unspecified
        if aggregate:
            np.testing.assert_array_equal(agg[start:start + w], np.full(w, total, dtype))


WARP_CASES = [(w, f, np.int32) for w in (32, 16, 8, 4, 2, 1) for f in FORMS] + \
             [(w, f, np.float64) for w in (32, 8, 1) for f in ("inclusive_sum", "exclusive_scan")]


@pytest.mark.parametrize("width, form, dtype", WARP_CASES)
@pytest.mark.parametrize("kind", ["runtime", "literal"])
def test_warp_valid_items(width, form, dtype, kind):
    threads = 128
    src = data(GRID * threads, dtype)
    keep = src.copy()
    if kind == "runtime":
        kernel = warp_kernel(width, form, dtype, "runtime", True)
        values = sorted({1, width // 2 + 1, width, max(1, width - 1)})
    else:
        values = [max(1, (3 * width) // 4)]
    for v in values:
        if kind == "literal":
            kernel = warp_kernel(width, form, dtype, v, True)
        out, agg = poisoned(src.size, dtype), poisoned(src.size, dtype)
        kernel[GRID, threads](src, out, agg, np.int32(v))
        cuda.synchronize()
        check_warp(width, form, dtype, src, out, agg, v, True)
    np.testing.assert_array_equal(src, keep)


@pytest.mark.parametrize("width", [32, 8])
@pytest.mark.parametrize("form", list(FORMS))
def test_warp_valid_items_without_aggregate(width, form):
    threads, dtype = 64, np.int32
    src = data(GRID * threads, dtype)
    kernel = warp_kernel(width, form, dtype, "runtime", False)
    for v in (1, width // 2 + 1, width):
        out = poisoned(src.size, dtype)
        kernel[GRID, threads](src, out, poisoned(src.size, dtype), np.int64(v))
        cuda.synchronize()
        check_warp(width, form, dtype, src, out, None, v, False)


@pytest.mark.parametrize("width", [32, 16, 4, 1])
@pytest.mark.parametrize("form", list(FORMS))
@pytest.mark.parametrize("dtype", [np.int32, np.float64])
def test_warp_aggregate_output(width, form, dtype):
    threads = 128
    src = data(GRID * threads, dtype)
    out, agg = poisoned(src.size, dtype), poisoned(src.size, dtype)
    warp_kernel(width, form, dtype, None, True)[GRID, threads](src, out, agg, np.int32(0))
    cuda.synchronize()
    check_warp(width, form, dtype, src, out, agg, None, True)


# ------------------------------------------------------------------ block aggregate_output


def block_kernel(k, form, dtype, threads):
    mode, op, has_init, _ = FORMS[form]
    init = dtype(INITIAL) if has_init else None
    tile = threads * max(k, 1)

    @cuda.jit
    def kernel(src, dst, agg_dst):
        block = coop.this_block()
        rank = np.int64(block.rank())
        base = np.int64(cuda.blockIdx.x) * tile
        agg = coop.ThreadData(1, dtype=dtype)
        if k == 0:
            dst[base + rank] = numba_coop.scan(block, src[base + rank], mode=mode, scan_op=op, initial_value=init,
                                               aggregate_output=agg)
        else:
            items = coop.ThreadData(k, dtype=dtype)
            coop.load(block, src, items, offset=base)
            out = numba_coop.scan(block, items, mode=mode, scan_op=op, initial_value=init, aggregate_output=agg)
            coop.store(block, dst, out, offset=base)
        agg_dst[np.int64(cuda.blockIdx.x) * threads + rank] = agg[0]

    return kernel


BLOCK_CASES = [(b, k, f, np.int32) for b in ((32,), (128,), (8, 4, 1)) for k in (1, 2, 4) for f in FORMS] + \
              [((128,), 0, f, np.int32) for f in FORMS] + \
              [(b, k, f, np.float64) for b in ((128,), (8, 4, 1)) for k in (1, 4) for f in ("exclusive_sum",
                                                                                          "inclusive_scan")]


@pytest.mark.parametrize("block, k, form, dtype", BLOCK_CASES)
def test_block_aggregate_output(block, k, form, dtype):
    threads = int(np.prod(block))
    tile = threads * max(k, 1)
    src = data(GRID * tile, dtype)
    keep = src.copy()
    out, agg = poisoned(src.size, dtype), poisoned(GRID * threads, dtype)
    block_kernel(k, form, dtype, threads)[GRID, block](src, out, agg)
    cuda.synchronize()
    for b in range(GRID):
        want, total = scan_oracle(src[b * tile:(b + 1) * tile], form, dtype)
        np.testing.assert_array_equal(out[b * tile:(b + 1) * tile], want)
        np.testing.assert_array_equal(agg[b * threads:(b + 1) * threads], np.full(threads, total, dtype))
    np.testing.assert_array_equal(src, keep)


# ------------------------------------------------------------------ StatefulFunction running scans


def running_total(state, block_aggregate):
    """The running prefix: returns the total so far and adds this tile's aggregate."""
    old = state[0]
    state[0] = old + block_aggregate
    return old


class RunningTotal:
    """The class form: its unbound ``__call__(state, block_aggregate)`` is the callback."""

    def __call__(state, block_aggregate):  # the state payload, not an instance
        old = state[0]
        state[0] = old + block_aggregate
        return old


class RunningMax:
    def __call__(state, block_aggregate):
        old = state[0]
        if block_aggregate > old:
            state[0] = block_aggregate
        return old


TILES = 9


def running_kernel(k, dtype, threads, callback, form):
    prefix = numba_coop.StatefulFunction(callback, dtype)
    tile = threads * max(k, 1)
    lowest = dtype(np.iinfo(np.int32).min) if form == "running_max" else dtype(0)

    @cuda.jit
    def kernel(src, dst, state_dst, n_tiles):
        block = coop.this_block()
        rank = np.int64(block.rank())
        state = coop.ThreadData(1, dtype=dtype)
        state[0] = lowest  # every thread initialises the state identically
        items = coop.ThreadData(max(k, 1), dtype=dtype)
        base = np.int64(cuda.blockIdx.x) * n_tiles * tile
        for t in range(n_tiles):
            offset = base + t * tile
            if k == 0:
                if form == "exclusive_sum":
                    dst[offset + rank] = numba_coop.exclusive_sum(block, src[offset + rank], state, prefix_op=prefix)
                elif form == "inclusive_sum":
                    dst[offset + rank] = numba_coop.inclusive_sum(block, src[offset + rank], state, prefix_op=prefix)
                else:
                    dst[offset + rank] = numba_coop.exclusive_scan(block, src[offset + rank], state, scan_op="max",
                                                                   prefix_op=prefix)
            else:
                coop.load(block, src, items, offset=offset)
                if form == "exclusive_sum":
                    out = numba_coop.exclusive_sum(block, items, state, prefix_op=prefix)
                elif form == "inclusive_sum":
                    out = numba_coop.inclusive_sum(block, items, state, prefix_op=prefix)
                else:
                    out = numba_coop.exclusive_scan(block, items, state, scan_op="max", prefix_op=prefix)
                coop.store(block, dst, out, offset=offset)
        if rank == 0:
            state_dst[cuda.blockIdx.x] = state[0]  # only thread 0's final state is authoritative

    return kernel


def check_running(src, out, state, n, form, dtype):
    for b in range(GRID):
        x = src[b * n:(b + 1) * n]
        if form == "running_max":
            inclusive = np.maximum.accumulate(x)
            want = np.concatenate([[dtype(np.iinfo(np.int32).min)], inclusive[:-1]]).astype(dtype)
            total = inclusive[-1]
        else:
            inclusive = np.cumsum(x, dtype=dtype)
            want = inclusive if form == "inclusive_sum" else np.concatenate([[dtype(0)], inclusive[:-1]]).astype(dtype)
            total = inclusive[-1]
        np.testing.assert_array_equal(out[b * n:(b + 1) * n], want)
        assert state[b] == total


RUNNING_CASES = [(b, k, d) for b in ((32,), (128,), (8, 4, 1)) for k in (1, 2, 4) for d in (np.int32, np.float64)]


@pytest.mark.parametrize("block, k, dtype", RUNNING_CASES)
def test_running_exclusive_sum_over_tiles(block, k, dtype):
    """The concatenated output of a block looping over TILES tiles is the exclusive cumsum of its segment."""
    threads = int(np.prod(block))
    n = TILES * threads * k
    src = data(GRID * n, dtype)
    keep = src.copy()
    out, state = poisoned(src.size, dtype), poisoned(GRID, dtype)
    running_kernel(k, dtype, threads, running_total, "exclusive_sum")[GRID, block](src, out, state, np.int32(TILES))
    cuda.synchronize()
    check_running(src, out, state, n, "exclusive_sum", dtype)
    np.testing.assert_array_equal(src, keep)


@pytest.mark.parametrize("k", [0, 4])
@pytest.mark.parametrize("form", ["exclusive_sum", "inclusive_sum"])
@pytest.mark.parametrize("dtype", [np.int32, np.float64])
def test_running_scan_class_form(k, form, dtype):
    threads = 128
    n = TILES * threads * max(k, 1)
    src = data(GRID * n, dtype)
    out, state = poisoned(src.size, dtype), poisoned(GRID, dtype)
    running_kernel(k, dtype, threads, RunningTotal, form)[GRID, threads](src, out, state, np.int32(TILES))
    cuda.synchronize()
    check_running(src, out, state, n, form, dtype)


@pytest.mark.parametrize("block, k", [((128,), 2), ((8, 4, 1), 1), ((32,), 0)])
def test_running_max_scan(block, k):
    threads, dtype = int(np.prod(block)), np.int32
    n = TILES * threads * max(k, 1)
    src = data(GRID * n, dtype)
    out, state = poisoned(src.size, dtype), poisoned(GRID, dtype)
    running_kernel(k, dtype, threads, RunningMax, "running_max")[GRID, block](src, out, state, np.int32(TILES))
    cuda.synchronize()
    check_running(src, out, state, n, "running_max", dtype)


# ------------------------------------------------------------------ traps (child processes)

TRAP_CHILD = textwrap.dedent("""
    import sys
    import numpy as np
    from numba_cuda_mlir import cuda
    import cuda.coop.numba_mlir as numba_coop
    from cuda import coop

    width = int(sys.argv[2])

    @cuda.jit
    def kernel(src, dst, valid):
        g = coop.this_warp() if width == 32 else coop.this_warp().group_by(width)
        i = cuda.grid(1)
        dst[i] = numba_coop.inclusive_sum(g, src[i], valid_items=valid)

    src = np.arange(128, dtype=np.int32) + 1
    dst = np.zeros_like(src)
    kernel[1, 128](src, dst, np.int32(width))   # in range: runs
    cuda.synchronize()
    assert (dst[:width] == np.cumsum(src[:width])).all()
    print("IN_RANGE_OK", flush=True)
    kernel[1, 128](src, dst, np.int32(int(sys.argv[1])))
    cuda.synchronize()
    print("NO_TRAP", flush=True)
""")


@pytest.mark.parametrize("valid, width", [(0, 32), (33, 32), (9, 8), (-1, 8)])
def test_out_of_range_warp_valid_items_traps(valid, width):
    assert_traps(TRAP_CHILD, valid, width)
