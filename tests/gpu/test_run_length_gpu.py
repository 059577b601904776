"""run_length_decode and run_length_decode_into on the GPU against np.repeat (SPEC 8.15): windows starting at the
stream's start, inside a run, at and past its end, empty streams, several windows per kernel, the bulk form at
runtime offsets, value dtypes incl. float64 and uint8, length dtypes up to 64 bits."""
from __future__ import annotations

import functools

import numpy as np
import pytest
from gpu_helpers import SEEDED_PER_TEST, poisoned
from numba_cuda_mlir import cuda

import cuda.coop.numba_mlir as numba_coop  # noqa: F401  (registers the backend; the alias keeps numba_cuda_mlir.cuda)
from cuda import coop

pytestmark = pytest.mark.gpu
GRID = 4
rng = SEEDED_PER_TEST  # each test draws from its own generator (tests/gpu/conftest.py)
THREADS = [32, 128]


def streams(threads, r, value_dtype, length_dtype, max_length=5):
    """Per block: random values, random positive lengths for a random number of leading runs (block 0 empty, block
    1 full), zero padding after them."""
    runs = threads * r
    values = rng.integers(1, 100, GRID * runs).astype(value_dtype)
    if np.dtype(value_dtype).kind == "f":
        values = values + np.asarray(0.25, value_dtype)
    lengths = np.zeros(GRID * runs, length_dtype)
    for b in range(GRID):
        used = {0: 0, 1: runs}.get(b, int(rng.integers(1, runs)))
        lengths[b * runs: b * runs + used] = rng.integers(1, max_length + 1, used)
    return values, lengths


def decoded(values, lengths, b, runs):
    """The oracle: block b's stream."""
    return np.repeat(values[b * runs:(b + 1) * runs], lengths[b * runs:(b + 1) * runs].astype(np.int64))


def window_of(stream, offset, size, dtype):
    out = np.zeros(size, dtype)
    part = stream[offset:offset + size] if offset < stream.size else stream[:0]
    out[:part.size] = part
    return out


@functools.cache
def window_kernel(r, d, second_window):
    """Each block decodes the window at offsets[b] (a runtime, block-uniform offset) and, when asked, the next one
    in the same kernel (the call rebuilds the table; the scratch is reused)."""
    @cuda.jit
    def kernel(values, lengths, offsets, dst, kept_values, kept_lengths):
        block = coop.this_block()
        b = cuda.blockIdx.x
        runs = np.int64(b) * block.count() * r
        v = coop.ThreadData(r)
        n = coop.ThreadData(r)
        coop.load(block, values, v, offset=runs)
        coop.load(block, lengths, n, offset=runs)
        window = block.count() * d
        out = coop.run_length_decode(block, v, n, decoded_items_per_thread=d, decoded_window_offset=offsets[b])
        coop.store(block, dst, out, offset=np.int64(b) * window * 2)
        if second_window:
            nxt = coop.run_length_decode(block, v, n, decoded_items_per_thread=d,
                                         decoded_window_offset=offsets[b] + window)
            coop.store(block, dst, nxt, offset=np.int64(b) * window * 2 + window)
        coop.store(block, kept_values, v, offset=runs)
        coop.store(block, kept_lengths, n, offset=runs)

    return kernel


def check_windows(threads, r, d, value_dtype, length_dtype, offsets_of, second_window=True):
    values, lengths = streams(threads, r, value_dtype, length_dtype)
    originals = values.copy(), lengths.copy()
    runs, window = threads * r, threads * d
    stream = [decoded(values, lengths, b, runs) for b in range(GRID)]
    offsets = np.array([offsets_of(s.size, window) for s in stream], np.int64)
    dst = poisoned(GRID * window * 2, value_dtype)
    kept_values, kept_lengths = poisoned(values.size, value_dtype), poisoned(lengths.size, length_dtype)
    window_kernel(r, d, second_window)[GRID, threads](values, lengths, offsets, dst, kept_values, kept_lengths)
    cuda.synchronize()
    for b in range(GRID):
        got = dst[b * window * 2: b * window * 2 + window]
        np.testing.assert_array_equal(got, window_of(stream[b], int(offsets[b]), window, value_dtype), f"block {b}")
        if second_window:
            got = dst[b * window * 2 + window: (b + 1) * window * 2]
            np.testing.assert_array_equal(got, window_of(stream[b], int(offsets[b]) + window, window, value_dtype))
    np.testing.assert_array_equal(kept_values, originals[0])
    np.testing.assert_array_equal(kept_lengths, originals[1])
    np.testing.assert_array_equal(values, originals[0])


OFFSETS = {
    "start": lambda total, window: 0,
    "inside_a_run": lambda total, window: max(total // 3, 1) if total else 0,  # rarely a run boundary
    "at_the_end": lambda total, window: total,
    "past_the_end": lambda total, window: total + 7,
    "huge": lambda total, window: 2**40,  # beyond any uint32 total: all zeros
}


@pytest.mark.parametrize("threads", THREADS)
@pytest.mark.parametrize("r", [1, 2, 4])
@pytest.mark.parametrize("d", [1, 4])
def test_windows_int32(threads, r, d):
    check_windows(threads, r, d, np.int32, np.int32, OFFSETS["inside_a_run"])


@pytest.mark.parametrize("where", sorted(OFFSETS))
def test_window_positions(where):
    check_windows(128, 2, 3, np.int32, np.int32, OFFSETS[where])


@pytest.mark.parametrize("value_dtype", [np.float64, np.uint8, np.float32, np.int64, np.int16])
def test_value_dtypes(value_dtype):
    check_windows(128, 2, 4, value_dtype, np.int32, OFFSETS["start"])


@pytest.mark.parametrize("length_dtype", [np.uint8, np.int8, np.int16, np.uint16, np.uint32, np.int64, np.uint64])
def test_length_dtypes(length_dtype):
    check_windows(32, 4, 2, np.int32, length_dtype, OFFSETS["inside_a_run"])


def test_long_runs_span_many_windows():
    """Runs longer than a window: every window is one or two runs."""
    threads, r, d = 32, 1, 2
    values, lengths = streams(threads, r, np.int32, np.uint16, max_length=300)
    runs, window = threads * r, threads * d
    offsets = np.array([int(decoded(values, lengths, b, runs).size // 2) for b in range(GRID)], np.int64)
    dst = poisoned(GRID * window * 2, np.int32)
    kept_values, kept_lengths = poisoned(values.size, np.int32), poisoned(lengths.size, np.uint16)
    window_kernel(r, d, True)[GRID, threads](values, lengths, offsets, dst, kept_values, kept_lengths)
    cuda.synchronize()
    for b in range(GRID):
        stream = decoded(values, lengths, b, runs)
        expected = np.concatenate([window_of(stream, int(offsets[b]), window, np.int32),
                                   window_of(stream, int(offsets[b]) + window, window, np.int32)])
        np.testing.assert_array_equal(dst[b * window * 2:(b + 1) * window * 2], expected)


@functools.cache
def static_offset_kernel(r, d, offset):
    @cuda.jit
    def kernel(values, lengths, dst):
        block = coop.this_block()
        v = coop.ThreadData(r)
        n = coop.ThreadData(r)
        coop.load(block, values, v, offset=np.int64(cuda.blockIdx.x) * block.count() * r)
        coop.load(block, lengths, n, offset=np.int64(cuda.blockIdx.x) * block.count() * r)
        out = coop.run_length_decode(block, v, n, decoded_items_per_thread=d, decoded_window_offset=offset)
        coop.store(block, dst, out, offset=np.int64(cuda.blockIdx.x) * block.count() * d)

    return kernel


@pytest.mark.parametrize("offset", [0, 5])
def test_static_window_offset(offset):
    threads, r, d = 128, 2, 2
    values, lengths = streams(threads, r, np.int32, np.int32)
    dst = poisoned(GRID * threads * d, np.int32)
    static_offset_kernel(r, d, offset)[GRID, threads](values, lengths, dst)
    cuda.synchronize()
    for b in range(GRID):
        stream = decoded(values, lengths, b, threads * r)
        np.testing.assert_array_equal(dst[b * threads * d:(b + 1) * threads * d],
                                      window_of(stream, offset, threads * d, np.int32))


@functools.cache
def bulk_kernel(r, d):
    """Block b decodes its whole stream to ``dst[starts[b]:]`` and every member records the total it got."""
    @cuda.jit
    def kernel(values, lengths, dst, starts, totals, kept_values, kept_lengths):
        block = coop.this_block()
        b = cuda.blockIdx.x
        runs = np.int64(b) * block.count() * r
        v = coop.ThreadData(r)
        n = coop.ThreadData(r)
        coop.load(block, values, v, offset=runs)
        coop.load(block, lengths, n, offset=runs)
        total = coop.run_length_decode_into(block, v, n, dst, decoded_items_per_thread=d,
                                            destination_offset=starts[b])
        totals[b * block.count() + cuda.threadIdx.x] = total
        coop.store(block, kept_values, v, offset=runs)
        coop.store(block, kept_lengths, n, offset=runs)

    return kernel


@pytest.mark.parametrize("threads", THREADS)
@pytest.mark.parametrize("r,d", [(1, 1), (2, 4), (4, 2), (4, 8)])
@pytest.mark.parametrize("value_dtype,length_dtype", [(np.int32, np.int32), (np.float64, np.uint8),
                                                      (np.uint8, np.int64)])
def test_bulk_decode(threads, r, d, value_dtype, length_dtype):
    values, lengths = streams(threads, r, value_dtype, length_dtype)
    originals = values.copy(), lengths.copy()
    runs = threads * r
    stream = [decoded(values, lengths, b, runs) for b in range(GRID)]
    gaps = rng.integers(0, 9, GRID)  # untouched cells between the segments
    starts = np.cumsum([0] + [s.size + g for s, g in zip(stream, gaps)])[:GRID].astype(np.int64) + 3
    size = int(starts[-1] + stream[-1].size + 5)
    dst = poisoned(size, value_dtype)
    expected = dst.copy()
    for b in range(GRID):
        expected[starts[b]:starts[b] + stream[b].size] = stream[b]
    totals = poisoned(GRID * threads, np.uint32)
    kept_values, kept_lengths = poisoned(values.size, value_dtype), poisoned(lengths.size, length_dtype)
    bulk_kernel(r, d)[GRID, threads](values, lengths, dst, starts, totals, kept_values, kept_lengths)
    cuda.synchronize()
    np.testing.assert_array_equal(dst, expected)  # the empty stream of block 0 wrote nothing
    np.testing.assert_array_equal(totals, np.repeat([s.size for s in stream], threads).astype(np.uint32))
    np.testing.assert_array_equal(kept_values, originals[0])
    np.testing.assert_array_equal(kept_lengths, originals[1])


def test_bulk_decode_fills_the_destination_exactly():
    """destination_offset + total == len(destination) is in range (the capacity check is not off by one)."""
    threads, r, d = 32, 2, 2
    values, lengths = streams(threads, r, np.int32, np.int32)
    stream = [decoded(values, lengths, b, threads * r) for b in range(GRID)]
    starts = np.cumsum([0] + [s.size for s in stream])[:GRID].astype(np.int64)
    dst = poisoned(sum(s.size for s in stream), np.int32)
    totals = poisoned(GRID * threads, np.uint32)
    scratch_v, scratch_l = poisoned(values.size, np.int32), poisoned(lengths.size, np.int32)
    bulk_kernel(r, d)[GRID, threads](values, lengths, dst, starts, totals, scratch_v, scratch_l)
    cuda.synchronize()
    np.testing.assert_array_equal(dst, np.concatenate(stream))


# ------------------------------------------------------------------ qualified extensions (SPEC 9.10)


def relative_of(lengths, b, runs):
    """The oracle of each decoded item's offset inside its run."""
    block_lengths = lengths[b * runs:(b + 1) * runs].astype(np.int64)
    return np.concatenate([np.arange(n, dtype=np.int64) for n in block_lengths] or [np.zeros(0, np.int64)])


@functools.cache
def qualified_window_kernel(r, d, offset_dtype):
    @cuda.jit
    def kernel(values, lengths, offsets, dst, rel_out, totals):
        block = coop.this_block()
        b = cuda.blockIdx.x
        runs = np.int64(b) * block.count() * r
        v = coop.ThreadData(r)
        n = coop.ThreadData(r)
        coop.load(block, values, v, offset=runs)
        coop.load(block, lengths, n, offset=runs)
        total = coop.ThreadData(1)
        rel = coop.ThreadData(d)
        out = numba_coop.run_length_decode(block, v, n, decoded_items_per_thread=d, decoded_window_offset=offsets[b],
                                           total_decoded_size=total, relative_offsets=rel,
                                           decoded_offset_dtype=offset_dtype)
        window = np.int64(b) * block.count() * d
        coop.store(block, dst, out, offset=window)
        coop.store(block, rel_out, rel, offset=window)
        totals[b * block.count() + cuda.threadIdx.x] = total[0]

    return kernel


@pytest.mark.parametrize("offset_dtype", [np.uint32, np.uint64])
@pytest.mark.parametrize("where", ["start", "inside_a_run", "past_the_end"])
def test_total_and_relative_offsets(offset_dtype, where):
    threads, r, d = 128, 2, 3
    values, lengths = streams(threads, r, np.int32, np.int16)
    runs, window = threads * r, threads * d
    offsets = np.array([OFFSETS[where](decoded(values, lengths, b, runs).size, window) for b in range(GRID)], np.int64)
    dst, rel = poisoned(GRID * window, np.int32), poisoned(GRID * window, offset_dtype)
    totals = poisoned(GRID * threads, offset_dtype)
    qualified_window_kernel(r, d, offset_dtype)[GRID, threads](values, lengths, offsets, dst, rel, totals)
    cuda.synchronize()
    most = np.iinfo(offset_dtype).max
    for b in range(GRID):
        stream, relative = decoded(values, lengths, b, runs), relative_of(lengths, b, runs)
        o = int(offsets[b])
        np.testing.assert_array_equal(dst[b * window:(b + 1) * window], window_of(stream, o, window, np.int32))
        expected = np.full(window, most, offset_dtype)
        part = relative[o:o + window]
        expected[:part.size] = part
        np.testing.assert_array_equal(rel[b * window:(b + 1) * window], expected)
        np.testing.assert_array_equal(totals[b * threads:(b + 1) * threads],
                                      np.full(threads, stream.size, offset_dtype))


@functools.cache
def huge_stream_kernel():
    @cuda.jit
    def kernel(values, lengths, dst, rel_out, totals, offset):
        block = coop.this_block()
        v = coop.ThreadData(1)
        n = coop.ThreadData(1)
        coop.load(block, values, v)
        coop.load(block, lengths, n)
        total = coop.ThreadData(1, dtype=np.uint64)
        rel = coop.ThreadData(2, dtype=np.uint64)
        out = numba_coop.run_length_decode(block, v, n, decoded_items_per_thread=2, decoded_window_offset=offset,
                                           total_decoded_size=total, relative_offsets=rel,
                                           decoded_offset_dtype=np.uint64)
        coop.store(block, dst, out)
        coop.store(block, rel_out, rel)
        totals[cuda.threadIdx.x] = total[0]

    return kernel


def test_uint64_offsets_decode_streams_beyond_uint32():
    """Three runs of 2**31 items: the total (3 * 2**31) needs 64-bit offsets; a window straddling runs 1 and 2."""
    threads = 32
    values = rng.integers(1, 100, threads).astype(np.int32)
    lengths = np.zeros(threads, np.int64)
    lengths[:3] = 2**31
    offset = 2 * 2**31 - 10
    dst, rel, totals = poisoned(threads * 2, np.int32), poisoned(threads * 2, np.uint64), poisoned(threads, np.uint64)
    huge_stream_kernel()[1, threads](values, lengths, dst, rel, totals, offset)
    cuda.synchronize()
    positions = offset + np.arange(threads * 2, dtype=np.int64)
    run = positions // 2**31
    np.testing.assert_array_equal(dst, values[run])
    np.testing.assert_array_equal(rel, (positions - run * 2**31).astype(np.uint64))
    np.testing.assert_array_equal(totals, np.full(threads, 3 * 2**31, np.uint64))


@functools.cache
def qualified_bulk_kernel(r, d):
    @cuda.jit
    def kernel(values, lengths, dst, rel, starts, totals):
        block = coop.this_block()
        b = cuda.blockIdx.x
        runs = np.int64(b) * block.count() * r
        v = coop.ThreadData(r)
        n = coop.ThreadData(r)
        coop.load(block, values, v, offset=runs)
        coop.load(block, lengths, n, offset=runs)
        total = numba_coop.run_length_decode_into(block, v, n, dst, decoded_items_per_thread=d,
                                                  destination_offset=starts[b], decoded_offset_dtype=np.uint64,
                                                  relative_offsets_destination=rel)
        totals[b * block.count() + cuda.threadIdx.x] = total

    return kernel


def test_bulk_with_relative_offsets_destination():
    threads, r, d = 128, 2, 4
    values, lengths = streams(threads, r, np.float64, np.uint8)
    runs = threads * r
    stream = [decoded(values, lengths, b, runs) for b in range(GRID)]
    starts = np.cumsum([0] + [s.size + 2 for s in stream])[:GRID].astype(np.int64)
    size = int(starts[-1] + stream[-1].size + 3)
    dst, rel = poisoned(size, np.float64), poisoned(size, np.uint64)
    expected_dst, expected_rel = dst.copy(), rel.copy()
    for b in range(GRID):
        expected_dst[starts[b]:starts[b] + stream[b].size] = stream[b]
        expected_rel[starts[b]:starts[b] + stream[b].size] = relative_of(lengths, b, runs)
    totals = poisoned(GRID * threads, np.uint64)
    qualified_bulk_kernel(r, d)[GRID, threads](values, lengths, dst, rel, starts, totals)
    cuda.synchronize()
    np.testing.assert_array_equal(dst, expected_dst)
    np.testing.assert_array_equal(rel, expected_rel)
    np.testing.assert_array_equal(totals, np.repeat([s.size for s in stream], threads).astype(np.uint64))
