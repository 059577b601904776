"""Qualified custom predicates and difference operators (SPEC 9.7) and radix_rank's exclusive_digit_prefix
(SPEC 9.8) on the GPU against NumPy oracles.

Options that select code are closure constants of kernel factories (None: not passed)."""
from __future__ import annotations

import numpy as np
import pytest
from gpu_helpers import SEEDED_PER_TEST, full_range, poisoned
from numba_cuda_mlir import cuda

import cuda.coop.numba_mlir as numba_coop
from cuda import coop

pytestmark = pytest.mark.gpu
GRID = 3
rng = SEEDED_PER_TEST  # each test draws from its own generator (tests/gpu/conftest.py)
SHAPES = [(32, 1, 1), (128, 1, 1), (8, 4, 1)]
DTYPES = [np.int32, np.float32]


def launch(kernel, shape, *args):
    kernel[GRID, shape](*args)
    cuda.synchronize()


def small(n, dtype, bound=9):
    """Values in [-bound, bound) (integer-valued for floats): equal keys, equal magnitudes and small steps occur."""
    values = rng.integers(-bound, bound, n).astype(dtype)
    assert np.any(values != 0)
    return values


# ------------------------------------------------------------------------------------------ user callables


@cuda.jit(device=True)
def descending_order(a, b):
    return a > b


def by_magnitude(a, b):
    return abs(a) < abs(b)


def twice_minus(current, neighbour):
    return current * 2 - neighbour


@cuda.jit(device=True)
def larger(current, neighbour):
    return max(current, neighbour)


def far_apart(a, b):
    return abs(a - b) > 3


@cuda.jit(device=True)
def rises(a, b):
    return b - a > 3  # not symmetric: shows which argument is the previous / next item


# ------------------------------------------------------------------------------------------------ merge sort


def merge_kernel(width, k, compare, valid, oob):
    """Width 0: the block; 32: physical warps; otherwise logical warps. ``valid``/``oob``: closure constants."""
    @cuda.jit
    def merge(keys_in, values_in, keys_out, values_out, kept, only_keys_out):
        block = coop.this_block()
        group = coop.this_block() if width == 0 else (
            coop.this_warp() if width == 32 else coop.this_warp().group_by(width))
        base = np.int64(cuda.blockIdx.x) * block.count() * k
        keys = coop.ThreadData(k)
        values = coop.ThreadData(k)
        coop.load(block, keys_in, keys, offset=base)
        coop.load(block, values_in, values, offset=base)
        sorted_keys, sorted_values = numba_coop.merge_sort_pairs(group, keys, values, compare_op=compare,
                                                                 valid_items=valid, oob_default=oob)
        coop.store(block, keys_out, sorted_keys, offset=base)
        coop.store(block, values_out, sorted_values, offset=base)
        only = numba_coop.merge_sort_keys(group, keys, compare_op=compare, valid_items=valid, oob_default=oob)
        coop.store(block, only_keys_out, only, offset=base)
        coop.store(block, kept, keys, offset=base)  # the input payload is unchanged

    return merge


def run_merge(shape, width, k, dtype, compare, key_of, valid=None, oob=None):
    """Sorts every group tile of random keys (values: their input positions) and checks the stable order by
    ``key_of`` in the first ``valid`` positions of each group tile."""
    threads = int(np.prod(shape))
    tile = (threads if width == 0 else width) * k
    keys = small(GRID * threads * k, dtype)
    values = np.arange(keys.size, dtype=np.int32)
    keys_out, only_keys = poisoned(keys.size, dtype), poisoned(keys.size, dtype)
    values_out, kept = poisoned(keys.size, np.int32), poisoned(keys.size, dtype)
    launch(merge_kernel(width, k, compare, valid, oob), shape, keys, values, keys_out, values_out, kept, only_keys)
    n = tile if valid is None else valid
    chunks = keys.reshape(-1, tile)[:, :n]
    order = np.argsort(key_of(chunks), axis=1, kind="stable")  # merge sort with compare_op is stable
    expected_keys = np.take_along_axis(chunks, order, 1)
    np.testing.assert_array_equal(keys_out.reshape(-1, tile)[:, :n], expected_keys)
    np.testing.assert_array_equal(only_keys.reshape(-1, tile)[:, :n], expected_keys)
    np.testing.assert_array_equal(values_out.reshape(-1, tile)[:, :n],
                                  np.take_along_axis(values.reshape(-1, tile)[:, :n], order, 1))
    np.testing.assert_array_equal(kept, keys)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("k", [1, 2, 4])
@pytest.mark.parametrize("dtype", DTYPES)
def test_block_merge_sort_with_comparators(shape, k, dtype):
    run_merge(shape, 0, k, dtype, descending_order, lambda x: -x)
    run_merge(shape, 0, k, dtype, by_magnitude, np.abs)


@pytest.mark.parametrize("width", [32, 16, 8])
@pytest.mark.parametrize("dtype", DTYPES)
def test_warp_merge_sort_with_comparators(width, dtype):
    run_merge((128, 1, 1), width, 2, dtype, by_magnitude, np.abs)
    run_merge((64, 1, 1), width, 4, dtype, descending_order, lambda x: -x)


@pytest.mark.parametrize("width,shape", [(0, (128, 1, 1)), (0, (8, 4, 1)), (32, (64, 1, 1)), (8, (64, 1, 1))])
@pytest.mark.parametrize("dtype", DTYPES)
def test_partial_merge_sort_with_comparator(width, shape, dtype):
    k = 4
    tile = (int(np.prod(shape)) if width == 0 else width) * k
    # oob_default must order after every valid key under the comparator: a larger magnitude than any key.
    run_merge(shape, width, k, dtype, by_magnitude, np.abs, valid=tile // 2 + 3, oob=dtype(1000))


# --------------------------------------------------------------------------------------- adjacent difference


def difference_kernel(k, direction, op, valid, boundary):
    predecessor = boundary if direction == "left" else None
    successor = boundary if direction == "right" else None

    @cuda.jit
    def kernel(src, dst, kept):
        block = coop.this_block()
        base = np.int64(cuda.blockIdx.x) * block.count() * k
        items = coop.ThreadData(k)
        coop.load(block, src, items, offset=base)
        out = numba_coop.adjacent_difference(block, items, direction=direction, difference_op=op, valid_items=valid,
                                             tile_predecessor_item=predecessor, tile_successor_item=successor)
        coop.store(block, dst, out, offset=base)
        coop.store(block, kept, items, offset=base)

    return kernel


def difference_oracle(x, direction, op, valid=None, boundary=None):
    """op(current, neighbour) at every position with a neighbour inside the first ``valid`` positions (or the
    boundary item); the others are copied."""
    v = x.size if valid is None else valid
    out = x.copy()
    for p in range(v):
        q = p - 1 if direction == "left" else p + 1
        if 0 <= q < v:
            out[p] = op(x[p], x[q])
        elif boundary is not None:
            out[p] = op(x[p], x.dtype.type(boundary))
    return out


def twice_minus_oracle(current, neighbour):
    return type(current)(int(current) * 2 - int(neighbour)) if isinstance(current, np.integer) else \
        type(current)(float(current) * 2 - float(neighbour))


ORACLES = {twice_minus: twice_minus_oracle, larger: max}


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("k", [1, 2, 4])
@pytest.mark.parametrize("dtype", DTYPES)
def test_difference_op(shape, k, dtype):
    threads = int(np.prod(shape))
    tile = threads * k
    src = small(GRID * tile, dtype, 1000)
    cases = [(direction, op, valid, boundary) for direction in ("left", "right")
             for op, valid, boundary in ((twice_minus, None, None), (larger, None, 77), (twice_minus, None, -5),
                                         (larger, tile - 3, None))]
    outputs = []
    for direction, op, valid, boundary in cases:
        dst, kept = poisoned(src.size, dtype), poisoned(src.size, dtype)
        launch(difference_kernel(k, direction, op, valid, boundary), shape, src, dst, kept)
        outputs.append((dst, kept))
    for (direction, op, valid, boundary), (dst, kept) in zip(cases, outputs):
        expected = np.concatenate([difference_oracle(chunk, direction, ORACLES[op], valid, boundary)
                                   for chunk in src.reshape(GRID, tile)])
        np.testing.assert_array_equal(dst, expected, err_msg=f"{direction} {op} {valid} {boundary}")
        np.testing.assert_array_equal(kept, src)


# ---------------------------------------------------------------------------------------------- discontinuity


def flags_kernel(k, mode, op, predecessor, successor):
    if mode == "heads_and_tails":
        @cuda.jit
        def both(src, heads_out, tails_out, kept):
            block = coop.this_block()
            base = np.int64(cuda.blockIdx.x) * block.count() * k
            items = coop.ThreadData(k)
            coop.load(block, src, items, offset=base)
            heads, tails = numba_coop.discontinuity(block, items, mode=mode, flag_op=op,
                                                    tile_predecessor_item=predecessor, tile_successor_item=successor)
            coop.store(block, heads_out, heads, offset=base)
            coop.store(block, tails_out, tails, offset=base)
            coop.store(block, kept, items, offset=base)

        return both

    @cuda.jit
    def one(src, heads_out, tails_out, kept):
        block = coop.this_block()
        base = np.int64(cuda.blockIdx.x) * block.count() * k
        items = coop.ThreadData(k)
        coop.load(block, src, items, offset=base)
        flags = numba_coop.discontinuity(block, items, mode=mode, flag_op=op, tile_predecessor_item=predecessor,
                                         tile_successor_item=successor)
        if mode == "heads":
            coop.store(block, heads_out, flags, offset=base)
        else:
            coop.store(block, tails_out, flags, offset=base)
        coop.store(block, kept, items, offset=base)

    return one


def heads_oracle(x, op, predecessor=None):
    """flag_op(previous, current); the first head is 1 without a predecessor."""
    flags = np.array([1] + [int(op(x[p - 1], x[p])) for p in range(1, x.size)], np.int32)
    if predecessor is not None:
        flags[0] = int(op(x.dtype.type(predecessor), x[0]))
    return flags


def tails_oracle(x, op, successor=None):
    """flag_op(current, next); the last tail is 1 without a successor."""
    flags = np.array([int(op(x[p], x[p + 1])) for p in range(x.size - 1)] + [1], np.int32)
    if successor is not None:
        flags[-1] = int(op(x[-1], x.dtype.type(successor)))
    return flags


FLAG_ORACLES = {far_apart: lambda a, b: abs(float(a) - float(b)) > 3,
                rises: lambda a, b: float(b) - float(a) > 3}


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("k", [1, 2, 4])
@pytest.mark.parametrize("dtype", DTYPES)
def test_flag_op(shape, k, dtype):
    threads = int(np.prod(shape))
    tile = threads * k
    src = small(GRID * tile, dtype, 12)
    cases = [("heads", far_apart, None, None), ("heads", rises, -40, None), ("tails", far_apart, None, None),
             ("tails", rises, None, 40), ("heads_and_tails", rises, None, None),
             ("heads_and_tails", far_apart, 40, -40)]
    outputs = []
    for mode, op, predecessor, successor in cases:
        heads, tails, kept = poisoned(src.size, np.int32), poisoned(src.size, np.int32), poisoned(src.size, dtype)
        launch(flags_kernel(k, mode, op, predecessor, successor), shape, src, heads, tails, kept)
        outputs.append((heads, tails, kept))
    for (mode, op, predecessor, successor), (heads, tails, kept) in zip(cases, outputs):
        chunks = src.reshape(GRID, tile)
        what = f"{mode} {op} {predecessor} {successor}"
        if mode != "tails":
            expected = np.concatenate([heads_oracle(c, FLAG_ORACLES[op], predecessor) for c in chunks])
            np.testing.assert_array_equal(heads, expected, err_msg=what)
        if mode != "heads":
            expected = np.concatenate([tails_oracle(c, FLAG_ORACLES[op], successor) for c in chunks])
            np.testing.assert_array_equal(tails, expected, err_msg=what)
        np.testing.assert_array_equal(kept, src)


# ------------------------------------------------------------------------------ radix_rank exclusive_digit_prefix


def rank_kernel(k, begin, bits, descending, extent):
    @cuda.jit
    def rank(src, ranks_out, prefix_out, kept):
        block = coop.this_block()
        base = np.int64(cuda.blockIdx.x) * block.count() * k
        keys = coop.ThreadData(k)
        coop.load(block, src, keys, offset=base)
        prefix = coop.ThreadData(extent)
        ranks = numba_coop.radix_rank(block, keys, begin_bit=begin, radix_bits=bits, descending=descending,
                                      exclusive_digit_prefix=prefix)
        coop.store(block, ranks_out, ranks, offset=base)
        coop.store(block, prefix_out, prefix, offset=np.int64(cuda.blockIdx.x) * block.count() * extent)
        coop.store(block, kept, keys, offset=base)

    return rank


def scalar_rank_kernel(begin, bits, extent):
    @cuda.jit
    def rank(src, ranks_out, prefix_out):
        block = coop.this_block()
        key = src[np.int64(cuda.blockIdx.x) * block.count() + block.rank()]
        prefix = coop.ThreadData(extent)
        ranks = numba_coop.radix_rank(block, key, begin_bit=begin, radix_bits=bits, exclusive_digit_prefix=prefix)
        ranks_out[np.int64(cuda.blockIdx.x) * block.count() + block.rank()] = ranks
        coop.store(block, prefix_out, prefix, offset=np.int64(cuda.blockIdx.x) * block.count() * extent)

    return rank


def ordered_digits(keys, begin, bits):
    """The digit of SPEC 8.9's ordered representation (signed keys: sign bit inverted)."""
    raw = keys.view(np.uint32).astype(np.uint64)
    if keys.dtype.kind == "i":
        raw ^= np.uint64(1 << 31)
    return ((raw >> np.uint64(begin)) & np.uint64((1 << bits) - 1)).astype(np.int64)


RANK_CASES = [(bits, (1, 2, 4)[bits % 3], (0, 3, 24)[bits % 3], bits % 2 == 0) for bits in range(1, 9)]


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", [np.int32, np.uint32])
def test_radix_rank_exclusive_digit_prefix(shape, dtype):
    threads = int(np.prod(shape))
    outputs = []
    for bits, k, begin, descending in RANK_CASES:
        extent = -(-(1 << bits) // threads)
        tile = threads * k
        src = full_range(rng, GRID * tile, dtype)
        ranks, kept = poisoned(src.size, np.int32), poisoned(src.size, dtype)
        prefix = poisoned(GRID * threads * extent, np.int32)
        launch(rank_kernel(k, begin, bits, descending, extent), shape, src, ranks, prefix, kept)
        outputs.append((src, ranks, prefix, kept))
    for (bits, k, begin, descending), (src, ranks, prefix, kept) in zip(RANK_CASES, outputs):
        extent = -(-(1 << bits) // threads)
        tile = threads * k
        what = f"bits={bits} k={k} begin={begin} descending={descending}"
        for index, chunk in enumerate(src.reshape(GRID, tile)):
            digits = ordered_digits(chunk, begin, bits)
            counts = np.bincount(digits, minlength=1 << bits)
            # Slot i of member t describes digit t*extent + i: the keys whose digit precedes it in the ranking
            # order (smaller digits ascending, larger digits descending). Slots past 2**bits are unspecified.
            if descending:
                expected = np.concatenate([np.cumsum(counts[::-1])[::-1][1:], [0]])
            else:
                expected = np.concatenate([[0], np.cumsum(counts)[:-1]])
            got = prefix.reshape(GRID, threads * extent)[index, :1 << bits]
            np.testing.assert_array_equal(got, expected.astype(np.int32), err_msg=what)
            order = np.argsort(-digits if descending else digits, kind="stable")
            expected_ranks = np.empty(tile, np.int32)
            expected_ranks[order] = np.arange(tile, dtype=np.int32)
            np.testing.assert_array_equal(ranks.reshape(GRID, tile)[index], expected_ranks, err_msg=what)
        np.testing.assert_array_equal(kept, src)


@pytest.mark.parametrize("bits", [3, 6, 8])
def test_radix_rank_of_scalar_keys_fills_the_digit_prefix(bits):
    """One key a thread (SPEC 9.1) with exclusive_digit_prefix (9.8): ranks and prefixes as for a payload of one."""
    threads, begin = 64, 26 - bits
    extent = -(-(1 << bits) // threads)
    src = full_range(rng, GRID * threads, np.uint32)
    ranks = poisoned(src.size, np.int32)
    prefix = poisoned(GRID * threads * extent, np.int32)
    launch(scalar_rank_kernel(begin, bits, extent), (threads, 1, 1), src, ranks, prefix)
    for index, chunk in enumerate(src.reshape(GRID, threads)):
        digits = ordered_digits(chunk, begin, bits)
        counts = np.bincount(digits, minlength=1 << bits)
        expected_ranks = np.empty(threads, np.int32)
        expected_ranks[np.argsort(digits, kind="stable")] = np.arange(threads)
        np.testing.assert_array_equal(ranks.reshape(GRID, threads)[index], expected_ranks)
        np.testing.assert_array_equal(prefix.reshape(GRID, threads * extent)[index, :1 << bits],
                                      np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int32))
