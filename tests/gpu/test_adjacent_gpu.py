"""adjacent_difference and discontinuity on the GPU against NumPy oracles (SPEC 8.12, 8.13).

Each test launches all its kernels first and checks afterwards. Options that select code are closure constants
of kernel factories (None: not passed); a runtime boundary item is read per block from an array argument."""
from __future__ import annotations

import numpy as np
import pytest
from gpu_helpers import SEEDED_PER_TEST, full_range, poisoned
from numba_cuda_mlir import cuda

import cuda.coop.numba_mlir as numba_coop  # noqa: F401  (registers the backend; the alias keeps `cuda` free)
from cuda import coop

pytestmark = pytest.mark.gpu
GRID = 3
rng = SEEDED_PER_TEST  # each test draws from its own generator (tests/gpu/conftest.py)
SHAPES = [(32, 1, 1), (128, 1, 1), (8, 4, 1)]
DTYPES = [np.int32, np.float32]


def data(n, dtype):
    """Random values (integer-valued for floats, so that differences are exact); int32 spans its whole range, so
    differences wrap around."""
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        return rng.integers(-1000, 1000, n).astype(dtype)
    return full_range(rng, n, dtype)  # every value but the poison


def runs(n, dtype):
    """Values in runs of 1-5 equal items (neighbouring runs may share a value)."""
    values = np.repeat(rng.integers(-20, 20, n), rng.integers(1, 6, n))[:n]
    return values.astype(dtype)


def launch(kernel, shape, *args):
    kernel[GRID, shape](*args)
    cuda.synchronize()


def sub(a, b, dtype):
    """a - b in ``dtype`` (wrapping), element-wise."""
    return (np.asarray(a, dtype) - np.asarray(b, dtype)).astype(dtype)


def left_oracle(x, valid=None, predecessor=None):
    v = x.size if valid is None else valid
    out = x.copy()
    if v > 1:
        out[1:v] = sub(x[1:v], x[:v - 1], x.dtype)
    if predecessor is not None and v > 0:
        out[0] = sub(x[:1], [predecessor], x.dtype)[0]
    return out


def right_oracle(x, valid=None, successor=None):
    v = x.size if valid is None else valid
    out = x.copy()
    if v > 1:
        out[:v - 1] = sub(x[:v - 1], x[1:v], x.dtype)
    if successor is not None:
        out[-1] = sub(x[-1:], [successor], x.dtype)[0]
    return out


def heads_oracle(x, predecessor=None):
    flags = np.ones(x.size, np.int32)
    flags[1:] = x[1:] != x[:-1]
    if predecessor is not None:
        flags[0] = x[0] != predecessor
    return flags


def tails_oracle(x, successor=None):
    flags = np.ones(x.size, np.int32)
    flags[:-1] = x[:-1] != x[1:]
    if successor is not None:
        flags[-1] = x[-1] != successor
    return flags


# ---------------------------------------------------------------------------- kernel factories


def difference_kernel(k, direction, valid, boundary):
    """``valid`` and ``boundary`` are compile-time (None: not passed); the boundary is the predecessor for
    "left" and the successor for "right"."""
    predecessor = boundary if direction == "left" else None
    successor = boundary if direction == "right" else None

    @cuda.jit
    def kernel(src, dst, kept):
        block = coop.this_block()
        base = np.int64(cuda.blockIdx.x) * block.count() * k
        items = coop.ThreadData(k)
        coop.load(block, src, items, offset=base)
        out = coop.adjacent_difference(block, items, direction=direction, valid_items=valid,
                                       tile_predecessor_item=predecessor, tile_successor_item=successor)
        coop.store(block, dst, out, offset=base)
        coop.store(block, kept, items, offset=base)  # the input payload is unchanged

    return kernel


def difference_runtime_boundary_kernel(k, direction):
    """The boundary item of each block comes from ``boundary[blockIdx.x]``."""
    if direction == "left":
        @cuda.jit
        def left(src, dst, kept, boundary):
            block = coop.this_block()
            base = np.int64(cuda.blockIdx.x) * block.count() * k
            items = coop.ThreadData(k)
            coop.load(block, src, items, offset=base)
            out = coop.adjacent_difference(block, items, tile_predecessor_item=boundary[cuda.blockIdx.x])
            coop.store(block, dst, out, offset=base)
            coop.store(block, kept, items, offset=base)

        return left

    @cuda.jit
    def right(src, dst, kept, boundary):
        block = coop.this_block()
        base = np.int64(cuda.blockIdx.x) * block.count() * k
        items = coop.ThreadData(k)
        coop.load(block, src, items, offset=base)
        out = coop.adjacent_difference(block, items, direction="right", tile_successor_item=boundary[cuda.blockIdx.x])
        coop.store(block, dst, out, offset=base)
        coop.store(block, kept, items, offset=base)

    return right


def difference_runtime_valid_kernel(k, direction, predecessor):
    """Runtime ``valid_items``; ``predecessor`` (left only) is a compile-time literal or None."""
    @cuda.jit
    def kernel(src, dst, kept, valid):
        block = coop.this_block()
        base = np.int64(cuda.blockIdx.x) * block.count() * k
        items = coop.ThreadData(k)
        coop.load(block, src, items, offset=base)
        out = coop.adjacent_difference(block, items, direction=direction, valid_items=valid,
                                       tile_predecessor_item=predecessor)
        coop.store(block, dst, out, offset=base)
        coop.store(block, kept, items, offset=base)

    return kernel


def difference_runtime_valid_and_boundary_kernel(k):
    @cuda.jit
    def kernel(src, dst, kept, valid, boundary):
        block = coop.this_block()
        base = np.int64(cuda.blockIdx.x) * block.count() * k
        items = coop.ThreadData(k)
        coop.load(block, src, items, offset=base)
        out = coop.adjacent_difference(block, items, direction="left", valid_items=valid,
                                       tile_predecessor_item=boundary[cuda.blockIdx.x])
        coop.store(block, dst, out, offset=base)
        coop.store(block, kept, items, offset=base)

    return kernel


def flags_kernel(k, mode, predecessor, successor):
    """A single-flag mode ("heads" or "tails") with compile-time boundary items (None: not passed)."""
    @cuda.jit
    def kernel(src, dst, kept):
        block = coop.this_block()
        base = np.int64(cuda.blockIdx.x) * block.count() * k
        items = coop.ThreadData(k)
        coop.load(block, src, items, offset=base)
        flags = coop.discontinuity(block, items, mode=mode, tile_predecessor_item=predecessor,
                                   tile_successor_item=successor)
        coop.store(block, dst, flags, offset=base)
        coop.store(block, kept, items, offset=base)

    return kernel


def both_flags_kernel(k, predecessor, successor):
    @cuda.jit
    def kernel(src, heads_out, tails_out, kept):
        block = coop.this_block()
        base = np.int64(cuda.blockIdx.x) * block.count() * k
        items = coop.ThreadData(k)
        coop.load(block, src, items, offset=base)
        heads, tails = coop.discontinuity(block, items, mode="heads_and_tails", tile_predecessor_item=predecessor,
                                          tile_successor_item=successor)
        coop.store(block, heads_out, heads, offset=base)
        coop.store(block, tails_out, tails, offset=base)
        coop.store(block, kept, items, offset=base)

    return kernel


def both_flags_runtime_kernel(k):
    """Each block's boundary items are its neighbours' edge items (``before``/``after`` arrays)."""
    @cuda.jit
    def kernel(src, heads_out, tails_out, kept, before, after):
        block = coop.this_block()
        base = np.int64(cuda.blockIdx.x) * block.count() * k
        items = coop.ThreadData(k)
        coop.load(block, src, items, offset=base)
        heads, tails = coop.discontinuity(block, items, mode="heads_and_tails",
                                          tile_predecessor_item=before[cuda.blockIdx.x],
                                          tile_successor_item=after[cuda.blockIdx.x])
        coop.store(block, heads_out, heads, offset=base)
        coop.store(block, tails_out, tails, offset=base)
        coop.store(block, kept, items, offset=base)

    return kernel


# ---------------------------------------------------------------------------- adjacent_difference


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("k", [1, 2, 4])
@pytest.mark.parametrize("dtype", DTYPES)
def test_adjacent_difference_full_tiles(shape, k, dtype):
    tile = int(np.prod(shape)) * k
    src = data(GRID * tile, dtype)
    boundary = data(GRID, dtype)
    cases = []  # (direction, boundary kind, boundary per block, dst, kept)
    for direction in ("left", "right"):
        for kind in ("none", "runtime"):
            dst, kept = poisoned(src.size, dtype), poisoned(src.size, dtype)
            if kind == "runtime":
                launch(difference_runtime_boundary_kernel(k, direction), shape, src, dst, kept, boundary)
                per_block = list(boundary)
            else:
                launch(difference_kernel(k, direction, None, None), shape, src, dst, kept)
                per_block = [None] * GRID
            cases.append((direction, kind, per_block, dst, kept))
    for direction, kind, per_block, dst, kept in cases:
        np.testing.assert_array_equal(kept, src)
        for b in range(GRID):
            x = src[b * tile:(b + 1) * tile]
            expected = (left_oracle(x, predecessor=per_block[b]) if direction == "left"
                        else right_oracle(x, successor=per_block[b]))
            np.testing.assert_array_equal(dst[b * tile:(b + 1) * tile], expected, err_msg=f"{direction} {kind} {b}")


def check_partial(src, tile, cases):
    for direction, valid, per_block, dst, kept in cases:
        np.testing.assert_array_equal(kept, src)
        for b in range(GRID):
            x = src[b * tile:(b + 1) * tile]
            expected = (left_oracle(x, valid, per_block[b]) if direction == "left" else right_oracle(x, valid))
            np.testing.assert_array_equal(dst[b * tile:(b + 1) * tile], expected,
                                          err_msg=f"{direction} valid={valid} predecessor={per_block[b]} block {b}")


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("k", [1, 2, 4])
@pytest.mark.parametrize("dtype", DTYPES)
def test_adjacent_difference_runtime_valid_items(shape, k, dtype):
    """Runtime valid_items of 0, a partial tile and the full tile (one kernel each, launched three times); left
    also with a literal and with a runtime predecessor."""
    tile = int(np.prod(shape)) * k
    src = data(GRID * tile, dtype)
    boundary = data(GRID, dtype)
    kernels = [(direction, predecessor, difference_runtime_valid_kernel(k, direction, predecessor))
               for direction, predecessor in (("left", None), ("left", 3), ("right", None))]
    with_boundary = difference_runtime_valid_and_boundary_kernel(k)
    cases = []  # (direction, valid, predecessor per block, dst, kept)
    for valid in (0, tile // 2 + 1, tile):
        for direction, predecessor, kernel in kernels:
            dst, kept = poisoned(src.size, dtype), poisoned(src.size, dtype)
            launch(kernel, shape, src, dst, kept, np.int32(valid))
            cases.append((direction, valid, [predecessor] * GRID, dst, kept))
        dst, kept = poisoned(src.size, dtype), poisoned(src.size, dtype)
        launch(with_boundary, shape, src, dst, kept, np.int64(valid), boundary)
        cases.append(("left", valid, list(boundary), dst, kept))
    check_partial(src, tile, cases)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("k", [1, 2, 4])
def test_adjacent_difference_static_valid_items(shape, k):
    """Compile-time valid_items of 0, a partial tile and the full tile; a literal predecessor with the partial one."""
    tile = int(np.prod(shape)) * k
    src = data(GRID * tile, np.int32)
    variants = [(direction, valid, None) for valid in (0, tile // 2 + 1, tile) for direction in ("left", "right")]
    variants.append(("left", tile // 2 + 1, -5))
    cases = []
    for direction, valid, predecessor in variants:
        dst, kept = poisoned(src.size, np.int32), poisoned(src.size, np.int32)
        launch(difference_kernel(k, direction, valid, predecessor), shape, src, dst, kept)
        cases.append((direction, valid, [predecessor] * GRID, dst, kept))
    check_partial(src, tile, cases)


@pytest.mark.parametrize("k", [1, 4])
def test_uint8_differences_wrap_around(k):
    shape = (128, 1, 1)
    tile = 128 * k
    src = data(GRID * tile, np.uint8)
    boundary = data(GRID, np.uint8)
    results = []
    for direction in ("left", "right"):
        dst, kept = poisoned(src.size, np.uint8), poisoned(src.size, np.uint8)
        launch(difference_kernel(k, direction, None, 200), shape, src, dst, kept)
        results.append((direction, [200] * GRID, dst, kept))
        dst, kept = poisoned(src.size, np.uint8), poisoned(src.size, np.uint8)
        launch(difference_runtime_boundary_kernel(k, direction), shape, src, dst, kept, boundary)
        results.append((direction, list(boundary), dst, kept))
    for direction, per_block, dst, kept in results:
        np.testing.assert_array_equal(kept, src)
        for b in range(GRID):
            x = src[b * tile:(b + 1) * tile]
            expected = (left_oracle(x, predecessor=per_block[b]) if direction == "left"
                        else right_oracle(x, successor=per_block[b]))
            np.testing.assert_array_equal(dst[b * tile:(b + 1) * tile], expected)
    # the data wraps: some differences are negative in exact arithmetic
    assert (src[1:tile].astype(int) - src[:tile - 1].astype(int) < 0).any()


# ---------------------------------------------------------------------------- discontinuity


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("k", [1, 2, 4])
@pytest.mark.parametrize("dtype", DTYPES)
def test_discontinuity_flags(shape, k, dtype):
    tile = int(np.prod(shape)) * k
    src = runs(GRID * tile, dtype)
    tiles = src.reshape(GRID, tile)
    # each block's boundary items are its neighbours' edge items (the grid's first and last get other values)
    before = np.concatenate([tiles[:1, 0], tiles[:-1, -1]]).astype(dtype)
    after = np.concatenate([tiles[1:, 0], tiles[-1:, -1] + 1]).astype(dtype)
    literal = int(tiles[0, 0])
    single, both = [], []
    for mode, predecessor, successor in (("heads", None, None), ("heads", literal, None), ("tails", None, None),
                                         ("tails", None, literal)):
        dst, kept = poisoned(src.size, np.int32), poisoned(src.size, dtype)
        launch(flags_kernel(k, mode, predecessor, successor), shape, src, dst, kept)
        single.append((mode, predecessor, successor, dst, kept))
    for predecessor, successor in ((None, None), (literal, literal + 1)):
        heads, tails, kept = poisoned(src.size, np.int32), poisoned(src.size, np.int32), poisoned(src.size, dtype)
        launch(both_flags_kernel(k, predecessor, successor), shape, src, heads, tails, kept)
        both.append(([predecessor] * GRID, [successor] * GRID, heads, tails, kept))
    heads, tails, kept = poisoned(src.size, np.int32), poisoned(src.size, np.int32), poisoned(src.size, dtype)
    launch(both_flags_runtime_kernel(k), shape, src, heads, tails, kept, before, after)
    both.append((list(before), list(after), heads, tails, kept))

    for mode, predecessor, successor, dst, kept in single:
        np.testing.assert_array_equal(kept, src)
        expected = [heads_oracle(x, predecessor) if mode == "heads" else tails_oracle(x, successor) for x in tiles]
        np.testing.assert_array_equal(dst, np.concatenate(expected), err_msg=f"{mode} {predecessor} {successor}")
    for predecessors, successors, heads, tails, kept in both:
        np.testing.assert_array_equal(kept, src)
        np.testing.assert_array_equal(heads, np.concatenate([heads_oracle(x, p) for x, p in zip(tiles, predecessors)]))
        np.testing.assert_array_equal(tails, np.concatenate([tails_oracle(x, s) for x, s in zip(tiles, successors)]))
    assert 0 < heads.sum() < heads.size  # the data has runs


@pytest.mark.parametrize("k", [1, 2, 4])
def test_heads_and_tails_with_one_boundary_item(k):
    shape = (128, 1, 1)
    tile = 128 * k
    src = runs(GRID * tile, np.int32)
    tiles = src.reshape(GRID, tile)
    results = []
    for predecessor, successor in ((int(tiles[0, 0]), None), (None, int(tiles[0, -1]))):
        heads, tails, kept = (poisoned(src.size, np.int32) for _ in range(3))
        launch(both_flags_kernel(k, predecessor, successor), shape, src, heads, tails, kept)
        results.append((predecessor, successor, heads, tails, kept))
    for predecessor, successor, heads, tails, kept in results:
        np.testing.assert_array_equal(kept, src)
        np.testing.assert_array_equal(heads, np.concatenate([heads_oracle(x, predecessor) for x in tiles]))
        np.testing.assert_array_equal(tails, np.concatenate([tails_oracle(x, successor) for x in tiles]))


@pytest.mark.parametrize("shape", [(4, 4, 2), (8, 2, 4)])
def test_run_labels_in_a_3d_block(shape):
    """heads -> inclusive_sum labels each run 1, 2, ... in blocked order; the run ends agree with the tails."""
    k = 4
    tile = int(np.prod(shape)) * k

    @cuda.jit
    def label_runs(src, labels_out, tails_out):
        block = coop.this_block()
        base = np.int64(cuda.blockIdx.x) * block.count() * k
        items = coop.ThreadData(k)
        coop.load(block, src, items, offset=base)
        heads = coop.discontinuity(block, items)
        labels = coop.inclusive_sum(block, heads)
        _, tails = coop.discontinuity(block, items, mode="heads_and_tails")
        coop.store(block, labels_out, labels, offset=base)
        coop.store(block, tails_out, tails, offset=base)

    src = np.sort(runs(GRID * tile, np.int32).reshape(GRID, tile), axis=1).ravel()  # sorted-ish: sorted per tile
    src[::7] += 1  # a few isolated changes inside runs
    labels, tails = poisoned(src.size, np.int32), poisoned(src.size, np.int32)
    launch(label_runs, shape, src, labels, tails)
    for b, x in enumerate(src.reshape(GRID, tile)):
        expected = np.cumsum(heads_oracle(x)).astype(np.int32)
        np.testing.assert_array_equal(labels[b * tile:(b + 1) * tile], expected)
        np.testing.assert_array_equal(tails[b * tile:(b + 1) * tile], tails_oracle(x))
        assert 1 < expected[-1] < tile
