"""merge_sort_keys and radix_sort_keys on the GPU against NumPy oracles (SPEC 8.8, 8.9, 9.8)."""
from __future__ import annotations

import numpy as np
import pytest

import cuda.coop.numba_mlir as numba_coop
from cuda import coop
from numba_cuda_mlir import cuda

from gpu_helpers import SEEDED_PER_TEST, full_range, poisoned

pytestmark = pytest.mark.gpu
GRID = 3
rng = SEEDED_PER_TEST  # each test draws from its own generator (tests/gpu/conftest.py)
SHAPES = [(32, 1, 1), (128, 1, 1), (8, 4, 1)]


def data(n, dtype, distinct=None):
    """Random keys; ``distinct`` draws them from a few values so that equal keys and digits occur."""
    dtype = np.dtype(dtype)
    if distinct:
        return rng.integers(-distinct, distinct, n).astype(dtype)
    if dtype.kind == "f":
        return (rng.standard_normal(n) * 1000).astype(dtype)
    return full_range(rng, n, dtype)  # every value but the poison


def launch(kernel, shape, *args):
    kernel[GRID, shape](*args)
    cuda.synchronize()


def merge_kernel(width, k, descending, partial, oob):
    """Width 0: the block; 32: physical warps; otherwise logical warps. Partial tiles pass valid_items and
    oob_default (a separate kernel: both branches of a compile-time condition are planned)."""
    if partial:
        @cuda.jit
        def merge_partial(src, dst, kept, valid):
            block = coop.this_block()
            group = coop.this_block() if width == 0 else (
                coop.this_warp() if width == 32 else coop.this_warp().group_by(width))
            base = np.int64(cuda.blockIdx.x) * block.count() * k
            keys = coop.ThreadData(k)
            coop.load(block, src, keys, offset=base)
            out = coop.merge_sort_keys(group, keys, descending=descending, valid_items=valid, oob_default=oob)
            coop.store(block, dst, out, offset=base)
            coop.store(block, kept, keys, offset=base)  # the input payload is unchanged

        return merge_partial

    @cuda.jit
    def merge(src, dst, kept, valid):
        block = coop.this_block()
        group = coop.this_block() if width == 0 else (
            coop.this_warp() if width == 32 else coop.this_warp().group_by(width))
        base = np.int64(cuda.blockIdx.x) * block.count() * k
        keys = coop.ThreadData(k)
        coop.load(block, src, keys, offset=base)
        out = coop.merge_sort_keys(group, keys, descending=descending)
        coop.store(block, dst, out, offset=base)
        coop.store(block, kept, keys, offset=base)

    return merge


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("k", [1, 2, 4])
@pytest.mark.parametrize("dtype", [np.int32, np.float32])
def test_block_merge_sort(shape, k, dtype):
    threads = int(np.prod(shape))
    tile = threads * k
    src = data(GRID * tile, dtype)
    for descending in (False, True):
        dst, kept = poisoned(src.size, dtype), poisoned(src.size, dtype)
        launch(merge_kernel(0, k, descending, False, None), shape, src, dst, kept, 0)
        expected = np.sort(src.reshape(GRID, tile), axis=1)
        if descending:
            expected = expected[:, ::-1]
        np.testing.assert_array_equal(dst.reshape(GRID, tile), expected)
        np.testing.assert_array_equal(kept, src)


@pytest.mark.parametrize("width", [32, 16, 4, 1])
@pytest.mark.parametrize("dtype", [np.int64, np.float64])
def test_warp_merge_sort(width, dtype):
    threads, k = 64, 4
    src = data(GRID * threads * k, dtype, distinct=50)  # duplicates across the tile
    dst, kept = poisoned(src.size, dtype), poisoned(src.size, dtype)
    launch(merge_kernel(width, k, False, False, None), threads, src, dst, kept, 0)
    chunks = src.reshape(-1, width * k)
    np.testing.assert_array_equal(dst.reshape(-1, width * k), np.sort(chunks, axis=1))
    np.testing.assert_array_equal(kept, src)


@pytest.mark.parametrize("width,descending", [(0, False), (0, True), (32, False), (8, True)])
def test_merge_sort_partial_tile(width, descending):
    threads, k, dtype = 128, 4, np.int32
    tile = (threads if width == 0 else width) * k
    oob = np.int32(np.iinfo(np.int32).min if descending else np.iinfo(np.int32).max)
    src = data(GRID * threads * k, dtype, distinct=1000)
    for valid in (0, 1, tile // 3, tile):
        dst, kept = poisoned(src.size, dtype), poisoned(src.size, dtype)
        launch(merge_kernel(width, k, descending, True, oob), threads, src, dst, kept, np.int32(valid))
        chunks = src.reshape(-1, tile)[:, :valid]
        expected = np.sort(chunks, axis=1)
        if descending:
            expected = expected[:, ::-1]
        np.testing.assert_array_equal(dst.reshape(-1, tile)[:, :valid], expected)  # only valid positions are defined
        np.testing.assert_array_equal(kept, src)


# ---------------------------------------------------------------------------------------- radix sort


def ordered_digits(keys, begin, end):
    """The digit [begin, end) of SPEC 8.9's ordered representation: signed keys with the sign bit inverted,
    negative floats with all bits inverted, other floats with the sign bit inverted."""
    dtype = keys.dtype
    bits = dtype.itemsize * 8
    unsigned = np.dtype(f"uint{bits}")
    raw = keys.view(unsigned).astype(np.uint64)
    sign = np.uint64(1 << (bits - 1))
    if dtype.kind == "i":
        ordered = raw ^ sign
    elif dtype.kind == "f":
        mask = np.uint64((1 << bits) - 1)
        ordered = np.where(raw & sign, (~raw) & mask, raw ^ sign)
    else:
        ordered = raw
    return (ordered >> np.uint64(begin)) & np.uint64((1 << (end - begin)) - 1)


def radix_oracle(src, tile, begin, end, descending):
    """Stable sort of each tile by the selected digits (descending: digits high to low, still stable)."""
    out = []
    for chunk in src.reshape(-1, tile):
        digits = ordered_digits(chunk, begin, end).astype(np.float64) if end - begin < 53 else None
        if digits is None:  # wide digits: sort on the exact integers through a stable lexsort of two halves
            d = ordered_digits(chunk, begin, end)
            hi, lo = (d >> np.uint64(32)).astype(np.int64), (d & np.uint64(0xFFFFFFFF)).astype(np.int64)
            order = np.lexsort((-lo, -hi) if descending else (lo, hi))
        else:
            order = np.argsort(-digits if descending else digits, kind="stable")
        out.append(chunk[order])
    return np.concatenate(out)


def radix_kernel(k, descending, begin, end, runtime_bits):
    """Common radix sort; ``runtime_bits`` passes the bounds as kernel arguments instead of constants."""
    if runtime_bits:
        @cuda.jit
        def radix_runtime(src, dst, kept, begin_bit, end_bit):
            block = coop.this_block()
            base = np.int64(cuda.blockIdx.x) * block.count() * k
            keys = coop.ThreadData(k)
            coop.load(block, src, keys, offset=base)
            out = coop.radix_sort_keys(block, keys, begin_bit=begin_bit, end_bit=end_bit, descending=descending)
            coop.store(block, dst, out, offset=base)
            coop.store(block, kept, keys, offset=base)  # the input payload is unchanged

        return radix_runtime

    @cuda.jit
    def radix(src, dst, kept, begin_bit, end_bit):
        block = coop.this_block()
        base = np.int64(cuda.blockIdx.x) * block.count() * k
        keys = coop.ThreadData(k)
        coop.load(block, src, keys, offset=base)
        out = coop.radix_sort_keys(block, keys, begin_bit=begin, end_bit=end, descending=descending)
        coop.store(block, dst, out, offset=base)
        coop.store(block, kept, keys, offset=base)

    return radix


def qualified_radix_kernel(k, descending, blocked_to_striped):
    """cuda.coop.numba_mlir.radix_sort_keys: float keys and the striped output layout (SPEC 9.8)."""
    @cuda.jit
    def radix_qualified(src, dst, kept, begin_bit, end_bit):
        block = coop.this_block()
        base = np.int64(cuda.blockIdx.x) * block.count() * k
        keys = coop.ThreadData(k)
        coop.load(block, src, keys, offset=base)
        out = numba_coop.radix_sort_keys(block, keys, descending=descending, blocked_to_striped=blocked_to_striped)
        coop.store(block, dst, out, algorithm="striped" if blocked_to_striped else "direct", offset=base)
        coop.store(block, kept, keys, offset=base)

    return radix_qualified


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("k", [1, 2, 4])
@pytest.mark.parametrize("dtype", [np.int32, np.uint64])
def test_block_radix_sort_full_width(shape, k, dtype):
    threads = int(np.prod(shape))
    tile = threads * k
    bits = np.dtype(dtype).itemsize * 8
    src = data(GRID * tile, dtype)
    for descending in (False, True):
        dst, kept = poisoned(src.size, dtype), poisoned(src.size, dtype)
        launch(radix_kernel(k, descending, 0, None, False), shape, src, dst, kept, 0, 0)
        np.testing.assert_array_equal(dst, radix_oracle(src, tile, 0, bits, descending))
        np.testing.assert_array_equal(kept, src)


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint32])
@pytest.mark.parametrize("begin,end", [(0, 5), (3, 11), (4, 31)])
@pytest.mark.parametrize("runtime_bits", [False, True])
def test_block_radix_sort_bit_range_is_stable(dtype, begin, end, runtime_bits):
    threads, k = 128, 4
    tile = threads * k
    src = data(GRID * tile, dtype)
    for descending in (False, True):
        dst, kept = poisoned(src.size, dtype), poisoned(src.size, dtype)
        kernel = radix_kernel(k, descending, begin, end, runtime_bits)
        launch(kernel, threads, src, dst, kept, np.int32(begin), np.int32(end))
        np.testing.assert_array_equal(dst, radix_oracle(src, tile, begin, end, descending))
        np.testing.assert_array_equal(kept, src)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_qualified_radix_sort_float_keys(dtype):
    threads, k = 128, 4
    tile = threads * k
    src = data(GRID * tile, dtype)
    src[::7] = -src[::7]
    src[5] = 0.0
    bits = np.dtype(dtype).itemsize * 8
    for descending in (False, True):
        dst, kept = poisoned(src.size, dtype), poisoned(src.size, dtype)
        launch(qualified_radix_kernel(k, descending, False), threads, src, dst, kept, 0, 0)
        np.testing.assert_array_equal(dst, radix_oracle(src, tile, 0, bits, descending))
        np.testing.assert_array_equal(kept, src)


def test_qualified_radix_sort_blocked_to_striped():
    """Sorted position p goes to member p % T, slot p // T: a striped store writes the sorted tile in order."""
    threads, k, dtype = 128, 4, np.int32
    tile = threads * k
    src = data(GRID * tile, dtype)
    dst, kept = poisoned(src.size, dtype), poisoned(src.size, dtype)
    launch(qualified_radix_kernel(k, False, True), threads, src, dst, kept, 0, 0)
    np.testing.assert_array_equal(dst, radix_oracle(src, tile, 0, 32, False))
    np.testing.assert_array_equal(kept, src)


# ---------------------------------------------------------------------------------------- pairs


def merge_pairs_kernel(width, k, descending, partial, oob):
    if partial:
        @cuda.jit
        def merge_pairs_partial(keys_in, values_in, keys_out, values_out, kept, valid):
            block = coop.this_block()
            group = coop.this_block() if width == 0 else (
                coop.this_warp() if width == 32 else coop.this_warp().group_by(width))
            base = np.int64(cuda.blockIdx.x) * block.count() * k
            keys = coop.ThreadData(k)
            values = coop.ThreadData(k)
            coop.load(block, keys_in, keys, offset=base)
            coop.load(block, values_in, values, offset=base)
            sorted_keys, sorted_values = coop.merge_sort_pairs(group, keys, values, descending=descending,
                                                               valid_items=valid, oob_default=oob)
            coop.store(block, keys_out, sorted_keys, offset=base)
            coop.store(block, values_out, sorted_values, offset=base)
            coop.store(block, kept, values, offset=base)

        return merge_pairs_partial

    @cuda.jit
    def merge_pairs(keys_in, values_in, keys_out, values_out, kept, valid):
        block = coop.this_block()
        group = coop.this_block() if width == 0 else (
            coop.this_warp() if width == 32 else coop.this_warp().group_by(width))
        base = np.int64(cuda.blockIdx.x) * block.count() * k
        keys = coop.ThreadData(k)
        values = coop.ThreadData(k)
        coop.load(block, keys_in, keys, offset=base)
        coop.load(block, values_in, values, offset=base)
        result = coop.merge_sort_pairs(group, keys, values, descending=descending)
        coop.store(block, keys_out, result[0], offset=base)
        coop.store(block, values_out, result[1], offset=base)
        coop.store(block, kept, values, offset=base)

    return merge_pairs


def distinct_keys(n, dtype):
    """Keys without duplicates, so that each value's destination is determined (merge sort is not stable)."""
    return rng.permutation(n).astype(dtype) * (3 if np.dtype(dtype).kind != "u" else 1) - n


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("k", [1, 2, 4])
@pytest.mark.parametrize("key_dtype,value_dtype", [(np.int32, np.float64), (np.float32, np.int16)])
def test_block_merge_sort_pairs(shape, k, key_dtype, value_dtype):
    threads = int(np.prod(shape))
    tile = threads * k
    keys = distinct_keys(GRID * tile, key_dtype)
    values = data(keys.size, value_dtype)
    for descending in (False, True):
        keys_out, values_out = poisoned(keys.size, key_dtype), poisoned(keys.size, value_dtype)
        kept = poisoned(keys.size, value_dtype)
        launch(merge_pairs_kernel(0, k, descending, False, None), shape, keys, values, keys_out, values_out, kept, 0)
        order = np.argsort(keys.reshape(GRID, tile), axis=1, kind="stable")
        if descending:
            order = order[:, ::-1]
        np.testing.assert_array_equal(keys_out.reshape(GRID, tile),
                                      np.take_along_axis(keys.reshape(GRID, tile), order, 1))
        np.testing.assert_array_equal(values_out.reshape(GRID, tile),
                                      np.take_along_axis(values.reshape(GRID, tile), order, 1))
        np.testing.assert_array_equal(kept, values)


@pytest.mark.parametrize("width", [32, 8])
@pytest.mark.parametrize("partial", [False, True])
def test_warp_merge_sort_pairs(width, partial):
    threads, k = 64, 4
    tile = width * k
    keys = distinct_keys(GRID * threads * k, np.int32)
    values = np.arange(keys.size, dtype=np.uint32)
    valid = tile // 2 + 1 if partial else tile
    keys_out, values_out = poisoned(keys.size, np.int32), poisoned(keys.size, np.uint32)
    kept = poisoned(keys.size, np.uint32)
    oob = np.int32(np.iinfo(np.int32).max)
    launch(merge_pairs_kernel(width, k, False, partial, oob), threads, keys, values, keys_out, values_out, kept,
           np.int32(valid))
    chunks = keys.reshape(-1, tile)[:, :valid]
    order = np.argsort(chunks, axis=1, kind="stable")
    np.testing.assert_array_equal(keys_out.reshape(-1, tile)[:, :valid], np.take_along_axis(chunks, order, 1))
    np.testing.assert_array_equal(values_out.reshape(-1, tile)[:, :valid],
                                  np.take_along_axis(values.reshape(-1, tile)[:, :valid], order, 1))
    np.testing.assert_array_equal(kept, values)


def radix_pairs_kernel(k, descending, begin, end):
    @cuda.jit
    def radix_pairs(keys_in, values_in, keys_out, values_out, kept):
        block = coop.this_block()
        base = np.int64(cuda.blockIdx.x) * block.count() * k
        keys = coop.ThreadData(k)
        values = coop.ThreadData(k)
        coop.load(block, keys_in, keys, offset=base)
        coop.load(block, values_in, values, offset=base)
        sorted_keys, sorted_values = coop.radix_sort_pairs(block, keys, values, begin_bit=begin, end_bit=end,
                                                           descending=descending)
        coop.store(block, keys_out, sorted_keys, offset=base)
        coop.store(block, values_out, sorted_values, offset=base)
        coop.store(block, kept, keys, offset=base)

    return radix_pairs


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("k", [1, 2, 4])
@pytest.mark.parametrize("key_dtype", [np.int32, np.uint64])
def test_block_radix_sort_pairs_is_stable(shape, k, key_dtype):
    """Values are input positions: the output values are exactly the stable order of the selected digits."""
    threads = int(np.prod(shape))
    tile = threads * k
    keys = data(GRID * tile, key_dtype)
    positions = np.tile(np.arange(tile, dtype=np.int32), GRID)
    for descending, (begin, end) in ((False, (0, None)), (True, (0, None)), (False, (2, 9)), (True, (5, 12))):
        bits = np.dtype(key_dtype).itemsize * 8 if end is None else end
        keys_out, values_out = poisoned(keys.size, key_dtype), poisoned(keys.size, np.int32)
        kept = poisoned(keys.size, key_dtype)
        launch(radix_pairs_kernel(k, descending, begin, end), shape, keys, positions, keys_out, values_out, kept)
        expected_keys = radix_oracle(keys, tile, begin, bits, descending)
        np.testing.assert_array_equal(keys_out, expected_keys)
        order = values_out.reshape(GRID, tile)
        np.testing.assert_array_equal(np.take_along_axis(keys.reshape(GRID, tile), order.astype(np.int64), 1).ravel(),
                                      expected_keys)
        digits = [ordered_digits(c, begin, bits) for c in keys.reshape(GRID, tile)]
        for row, d in zip(order, digits):  # stability: equal digits keep increasing input positions
            sorted_digits = d[row]
            same = sorted_digits[1:] == sorted_digits[:-1]
            assert np.all(row[1:][same] > row[:-1][same])
        np.testing.assert_array_equal(kept, keys)


# ---------------------------------------------------------------------------------------- radix rank


def rank_kernel(k, begin, end, radix_bits, descending):
    @cuda.jit
    def rank(src, ranks, kept):
        block = coop.this_block()
        base = np.int64(cuda.blockIdx.x) * block.count() * k
        keys = coop.ThreadData(k)
        coop.load(block, src, keys, offset=base)
        r = coop.radix_rank(block, keys, begin_bit=begin, end_bit=end, radix_bits=radix_bits, descending=descending)
        coop.store(block, ranks, r, offset=base)
        coop.store(block, kept, keys, offset=base)

    return rank


RANK_BOUNDS = [(0, None, None), (3, None, 5), (28, 32, None), (2, 10, 8)]


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("k", [1, 2, 4])
@pytest.mark.parametrize("dtype", [np.int32, np.uint64])
def test_block_radix_rank(shape, k, dtype):
    threads = int(np.prod(shape))
    tile = threads * k
    src = data(GRID * tile, dtype)
    for (begin, end, radix_bits), descending in zip(RANK_BOUNDS, (False, True, False, True)):
        bits = radix_bits if radix_bits is not None else (4 if end is None else end - begin)
        ranks, kept = poisoned(src.size, np.int32), poisoned(src.size, dtype)
        launch(rank_kernel(k, begin, end, radix_bits, descending), shape, src, ranks, kept)
        expected = np.empty(src.size, np.int32)
        for tile_index, chunk in enumerate(src.reshape(GRID, tile)):
            digits = ordered_digits(chunk, begin, begin + bits).astype(np.int64)
            order = np.argsort(-digits if descending else digits, kind="stable")
            expected[tile_index * tile + order] = np.arange(tile, dtype=np.int32)
        np.testing.assert_array_equal(ranks, expected)
        np.testing.assert_array_equal(kept, src)


# ---------------------------------------------------------------------------------------- top-k


def topk_kernel(k, largest, pairs, runtime):
    """``runtime``: k and valid_items come from kernel arguments; otherwise k=5 and the whole tile."""
    if pairs:
        @cuda.jit
        def topk_pairs(keys_in, values_in, keys_out, values_out, kk, valid):
            block = coop.this_block()
            base = np.int64(cuda.blockIdx.x) * block.count() * k
            keys = coop.ThreadData(k)
            values = coop.ThreadData(k)
            coop.load(block, keys_in, keys, offset=base)
            coop.load(block, values_in, values, offset=base)
            if largest:
                a, b = coop.topk_max_pairs(block, keys, values, k=kk, valid_items=valid)
            else:
                a, b = coop.topk_min_pairs(block, keys, values, k=kk, valid_items=valid)
            coop.store(block, keys_out, a, offset=base)
            coop.store(block, values_out, b, offset=base)

        return topk_pairs
    if runtime:
        @cuda.jit
        def topk_runtime(keys_in, values_in, keys_out, values_out, kk, valid):
            block = coop.this_block()
            base = np.int64(cuda.blockIdx.x) * block.count() * k
            keys = coop.ThreadData(k)
            coop.load(block, keys_in, keys, offset=base)
            if largest:
                out = coop.topk_max_keys(block, keys, k=kk, valid_items=valid)
            else:
                out = coop.topk_min_keys(block, keys, k=kk, valid_items=valid)
            coop.store(block, keys_out, out, offset=base)
            coop.store(block, values_out, keys, offset=base)  # the input payload is unchanged

        return topk_runtime

    @cuda.jit
    def topk_static(keys_in, values_in, keys_out, values_out, kk, valid):
        block = coop.this_block()
        base = np.int64(cuda.blockIdx.x) * block.count() * k
        keys = coop.ThreadData(k)
        coop.load(block, keys_in, keys, offset=base)
        out = coop.topk_max_keys(block, keys, k=5) if largest else coop.topk_min_keys(block, keys, k=5)
        coop.store(block, keys_out, out, offset=base)
        coop.store(block, values_out, keys, offset=base)

    return topk_static


def topk_expected(chunk, kk, valid, largest):
    ordered = np.sort(chunk[:valid])
    return np.sort(ordered[::-1][:kk] if largest else ordered[:kk])


@pytest.mark.parametrize("threads", [32, 128])
@pytest.mark.parametrize("k", [1, 2, 4])
@pytest.mark.parametrize("dtype", [np.int32, np.float32, np.int8])
@pytest.mark.parametrize("largest", [False, True])
def test_topk_keys(threads, k, dtype, largest):
    tile = threads * k
    src = data(GRID * tile, dtype, distinct=60) if np.dtype(dtype).kind == "f" else data(GRID * tile, dtype)
    for kk, valid in ((0, tile), (1, tile), (tile // 3, tile), (tile // 2, tile // 4 + 1), (tile, tile - 1),
                      (7, 0)):
        dst, kept = poisoned(src.size, dtype), poisoned(src.size, dtype)
        launch(topk_kernel(k, largest, False, True), threads, src, src, dst, kept, np.int32(kk), np.int32(valid))
        m = min(kk, valid)
        for got, chunk in zip(dst.reshape(GRID, tile), src.reshape(GRID, tile)):
            np.testing.assert_array_equal(np.sort(got[:m]), topk_expected(chunk, kk, valid, largest))
        np.testing.assert_array_equal(kept, src)
    dst, kept = poisoned(src.size, dtype), poisoned(src.size, dtype)
    launch(topk_kernel(k, largest, False, False), threads, src, src, dst, kept, 0, 0)  # k=5, whole tile
    m = min(5, tile)
    for got, chunk in zip(dst.reshape(GRID, tile), src.reshape(GRID, tile)):
        np.testing.assert_array_equal(np.sort(got[:m]), topk_expected(chunk, 5, tile, largest))


@pytest.mark.parametrize("largest", [False, True])
@pytest.mark.parametrize("key_dtype", [np.int8, np.float64])
def test_topk_pairs_keep_values_with_keys_and_skip_padding(largest, key_dtype):
    """int8 keys include the padding key itself (127 / -128): the values (input positions) show that only
    valid positions are selected, each with its own key."""
    threads, k = 128, 4
    tile = threads * k
    keys = data(GRID * tile, key_dtype, distinct=60)
    extreme = np.iinfo(np.int8).max if not largest else np.iinfo(np.int8).min
    if key_dtype == np.int8:
        keys[::5] = extreme
    positions = np.tile(np.arange(tile, dtype=np.int32), GRID)
    for kk, valid in ((tile, tile // 2), (10, 40), (tile // 3, tile)):
        keys_out, values_out = poisoned(keys.size, key_dtype), poisoned(keys.size, np.int32)
        launch(topk_kernel(k, largest, True, True), threads, keys, positions, keys_out, values_out, np.int32(kk),
               np.int32(valid))
        m = min(kk, valid)
        for got_k, got_v, chunk in zip(keys_out.reshape(GRID, tile), values_out.reshape(GRID, tile),
                                       keys.reshape(GRID, tile)):
            assert np.all((got_v[:m] >= 0) & (got_v[:m] < valid))  # only valid positions
            assert len(np.unique(got_v[:m])) == m  # each at most once
            np.testing.assert_array_equal(got_k[:m], chunk[got_v[:m]])  # values travel with their keys
            np.testing.assert_array_equal(np.sort(got_k[:m]), topk_expected(chunk, kk, valid, largest))


# ---------------------------------------------------------------------------------------- partial tiles (SPEC 8.23)


def garbage(n, dtype):
    """Bits an unwritten buffer may hold: any pattern (NaNs and infinities for floats) but zero and the poison."""
    dtype = np.dtype(dtype)
    unsigned = np.dtype(f"uint{dtype.itemsize * 8}")
    bits = full_range(rng, n, unsigned)
    bits[(bits == 0) | (bits == poisoned(1, dtype).view(unsigned)[0])] = 1
    return bits.view(dtype)


def partial_pairs_oracle(keys, values, tile, valid, descending, oob):
    """Output positions [0, valid): the valid keys (and values) in stable digit order; [valid, tile): oob_default,
    and the values of the input positions >= valid in input order."""
    out_keys, out_values = [], []
    bits = keys.dtype.itemsize * 8
    for k, v in zip(keys.reshape(-1, tile), values.reshape(-1, tile)):
        digits = ordered_digits(k[:valid], 0, bits).astype(np.float64)  # exact: at most 32-bit keys here
        order = np.argsort(-digits if descending else digits, kind="stable")
        out_keys.append(np.concatenate([k[:valid][order], np.full(tile - valid, oob, keys.dtype)]))
        out_values.append(np.concatenate([v[:valid][order], v[valid:]]))
    return np.concatenate(out_keys), np.concatenate(out_values)


def striped(tiles_in_blocked_order, threads, k):
    """A striped payload stored with a direct store: member t's slot i holds sorted position t + i*T."""
    return tiles_in_blocked_order.reshape(-1, k, threads).transpose(0, 2, 1).reshape(-1)


def qualified_partial_kernel(k, descending, blocked_to_striped):
    @cuda.jit
    def radix_partial(keys_in, values_in, keys_out, values_out, valid, oob):
        block = coop.this_block()
        base = np.int64(cuda.blockIdx.x) * block.count() * k
        keys = coop.ThreadData(k)
        values = coop.ThreadData(k)
        numba_coop.load(block, keys_in, keys, offset=base, valid_items=valid)  # the slots past valid: never written
        coop.load(block, values_in, values, offset=base)
        sorted_keys, sorted_values = numba_coop.radix_sort_pairs(
            block, keys, values, descending=descending, blocked_to_striped=blocked_to_striped, valid_items=valid,
            oob_default=oob)
        numba_coop.store(block, keys_out, sorted_keys, offset=base)  # direct: the test reads the layout itself
        coop.store(block, values_out, sorted_values, offset=base)

    return radix_partial


@pytest.mark.parametrize("dtype", [np.float32, np.int32])
@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize("blocked_to_striped", [False, True])
def test_qualified_radix_sort_partial_tiles(dtype, descending, blocked_to_striped):
    threads, k = 128, 3
    tile = threads * k
    valid_keys = rng.integers(-40, 40, GRID * tile).astype(dtype)  # repeated keys: stability shows
    valid_keys[valid_keys == 0] = 41  # -0.0 and +0.0 tie by SPEC 8.26; keep the oracle to plain numbers
    values = rng.integers(1, 10**6, GRID * tile).astype(np.int64)
    oob = dtype(-12.5 if dtype == np.float32 else 77)
    for valid in (0, 1, 200, tile):
        keys = garbage(GRID * tile, dtype).reshape(GRID, tile)
        keys[:, :valid] = valid_keys.reshape(GRID, tile)[:, :valid]
        keys = keys.reshape(-1)
        keys_out, values_out = poisoned(keys.size, dtype), poisoned(keys.size, np.int64)
        launch(qualified_partial_kernel(k, descending, blocked_to_striped), threads, keys, values, keys_out,
               values_out, np.int32(valid), oob)
        expected_keys, expected_values = partial_pairs_oracle(keys, values, tile, valid, descending, oob)
        if blocked_to_striped:
            expected_keys, expected_values = (striped(expected_keys, threads, k),
                                              striped(expected_values, threads, k))
        np.testing.assert_array_equal(keys_out.view(f"u{keys.itemsize}"), expected_keys.view(f"u{keys.itemsize}"))
        np.testing.assert_array_equal(values_out, expected_values)


def test_qualified_scalar_radix_sort_pairs_partial_tile():
    """One key and value per thread (docs: qualified, "Payload forms"): a tile of one item per thread."""
    @cuda.jit
    def scalar_pairs(keys_in, values_in, keys_out, values_out, valid, oob):
        block = coop.this_block()
        at = np.int64(cuda.blockIdx.x) * block.count() + block.rank()
        key, value = numba_coop.radix_sort_pairs(block, keys_in[at], values_in[at], valid_items=valid,
                                                 oob_default=oob)
        keys_out[at] = key
        values_out[at] = value

    threads = 128
    keys = data(GRID * threads, np.uint32)
    values = rng.standard_normal(GRID * threads).astype(np.float32)
    for valid in (0, 57, threads):
        keys_out, values_out = poisoned(keys.size, np.uint32), poisoned(keys.size, np.float32)
        launch(scalar_pairs, threads, keys, values, keys_out, values_out, np.int32(valid), np.uint32(9))
        expected_keys, expected_values = partial_pairs_oracle(keys, values, threads, valid, False, 9)
        np.testing.assert_array_equal(keys_out, expected_keys)
        np.testing.assert_array_equal(values_out, expected_values)
