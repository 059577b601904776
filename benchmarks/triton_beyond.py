"""Triton versions of benchmarks/beyond.py's rows (issue 42), imported only where Triton is installed.

One program per tile on 8 warps (the 256-thread blocks), the same arguments (src, aux, dst, out2) as the other
implementations. Triton has no broadcast of one element of a tile to the others (those rows have no Triton
column); the rest are composed from Triton's own operations: ``tl.cumsum`` ranks and a scattered store for select
and partition, ``tl.associative_scan`` over (flag, value) pairs for the segmented rows, ``tl.sort`` for the top-k
(keys' ordered bits packed with positions) and the padded partial sort, ``tl.histogram`` with invalid samples in a
bin past the 256, and loops carrying the running value for the running scans.
No ``from __future__ import annotations`` here: Triton reads ``tl.constexpr`` annotations.
"""
import triton
import triton.language as tl

WARPS = 8  # 256 threads


@triton.jit
def _select(src, dst, counts, TILE: tl.constexpr, PARTITION: tl.constexpr):
    positions = tl.arange(0, TILE)
    base = tl.program_id(0).to(tl.int64) * TILE
    x = tl.load(src + base + positions)
    keep = (x > 0).to(tl.int32)
    before = tl.cumsum(keep, axis=0) - keep  # kept items before each position
    count = tl.sum(keep, axis=0)
    if PARTITION:
        rank = tl.where(keep != 0, before, count + positions - before)
        tl.store(dst + base + rank, x)
    else:
        tl.store(dst + base + before, x, mask=keep != 0)
    tl.store(counts + tl.program_id(0), count)


@triton.jit
def _segmented_add(flag_a, value_a, flag_b, value_b):
    return flag_a | flag_b, tl.where(flag_b != 0, value_b, value_a + value_b)


@triton.jit
def _segment_sums(src, dst, counts, TILE: tl.constexpr):
    positions = tl.arange(0, TILE)
    base = tl.program_id(0).to(tl.int64) * TILE
    x = tl.load(src + base + positions)
    heads = (((x.to(tl.int32) & 15) == 0) | (positions == 0)).to(tl.int32)
    _, running = tl.associative_scan((heads, x), 0, _segmented_add)
    # a segment ends where the next item starts one (reloaded: a tile cannot be shifted) or at the tile's end
    following = tl.load(src + base + positions + 1, mask=positions < TILE - 1, other=0)
    ends = ((following.to(tl.int32) & 15) == 0) | (positions == TILE - 1)
    segment = tl.cumsum(heads, axis=0) - 1
    tl.store(dst + base + segment, running, mask=ends)
    tl.store(counts + tl.program_id(0), tl.sum(heads, axis=0))


@triton.jit
def _topk(src, keys_out, positions_out, TOP: tl.constexpr, FLOAT: tl.constexpr):
    """8 rows of 32 keys per program: the keys' ordered bits (unsigned order = the keys' order) above the position,
    sorted descending; the first TOP columns are the row's TOP largest."""
    ROWS: tl.constexpr = 8
    rows = tl.program_id(0).to(tl.int64) * ROWS + tl.arange(0, ROWS)[:, None]
    columns = tl.arange(0, 32)[None, :]
    x = tl.load(src + rows * 32 + columns)
    bits = x.to(tl.int32, bitcast=True)
    if FLOAT:
        ordered = bits ^ ((bits >> 31) | -2147483648)  # negatives: every bit flipped; the rest: the sign bit
    else:
        ordered = bits ^ -2147483648
    packed = ((ordered.to(tl.int64) & 0xFFFFFFFF) << 5) | columns.to(tl.int64)
    packed = tl.sort(packed, dim=1, descending=True)
    position = (packed & 31).to(tl.int32)
    ordered = (packed >> 5).to(tl.int32)
    if FLOAT:
        bits = ordered ^ (((~ordered) >> 31) | -2147483648)
    else:
        bits = ordered ^ -2147483648
    keep = columns < TOP
    tl.store(keys_out + rows * TOP + columns, bits.to(x.dtype, bitcast=True), mask=keep)
    tl.store(positions_out + rows * TOP + columns, position, mask=keep)


@triton.jit
def _radix_sort_valid(src, valid, dst, TILE: tl.constexpr, PAD: tl.constexpr):
    positions = tl.arange(0, TILE)
    base = tl.program_id(0).to(tl.int64) * TILE
    n = tl.load(valid + tl.program_id(0))
    x = tl.load(src + base + positions, mask=positions < n, other=PAD)
    tl.store(dst + base + positions, tl.sort(x))


@triton.jit
def _histogram_valid(src, valid, histogram, TILE: tl.constexpr, BINS: tl.constexpr):
    positions = tl.arange(0, TILE)
    base = tl.program_id(0).to(tl.int64) * TILE
    n = tl.load(valid + tl.program_id(0))
    samples = tl.load(src + base + positions, mask=positions < n, other=BINS)  # invalid: the bin past the last
    counts = tl.histogram(samples, 2 * BINS)
    bins = tl.arange(0, 2 * BINS)
    tl.atomic_add(histogram + bins, counts, mask=bins < BINS, sem="relaxed")


@triton.jit
def _running(src, dst, TILE: tl.constexpr, TILES: tl.constexpr, OP: tl.constexpr):
    """OP 0: running exclusive sum; 1: running segmented inclusive sum; 2: reverse running exclusive sum."""
    positions = tl.arange(0, TILE)
    base = tl.program_id(0).to(tl.int64) * (TILE * TILES)
    carry = tl.sum(tl.load(src + base + positions) * 0, axis=0)  # zero of the dtype
    for t in range(TILES):
        offset = base + (TILES - 1 - t if OP == 2 else t) * TILE
        x = tl.load(src + offset + positions)
        if OP == 1:
            heads = ((x.to(tl.int32) & 15) == 0).to(tl.int32)
            seen, running = tl.associative_scan((heads, x), 0, _segmented_add)
            y = tl.where(seen != 0, running, running + carry)
            carry = tl.sum(tl.where(positions == TILE - 1, y, 0), axis=0)
        elif OP == 2:
            y = tl.cumsum(x, axis=0, reverse=True) - x + carry
            carry = carry + tl.sum(x, axis=0)
        else:
            y = tl.cumsum(x, axis=0) - x + carry
            carry = carry + tl.sum(x, axis=0)
        tl.store(dst + offset + positions, y)


def launcher(row, src, aux, dst, out2):
    """A no-argument launch of ``row`` (a beyond.Row) on torch tensors."""
    from .beyond import largest

    op, tile = row.operation, row.tile
    if op in ("select", "partition"):
        grid = (src.numel() // tile,)
        return lambda: _select[grid](src, dst, out2, TILE=tile, PARTITION=op == "partition", num_warps=WARPS)
    if op == "segment_sums":
        grid = (src.numel() // tile,)
        return lambda: _segment_sums[grid](src, dst, out2, TILE=tile, num_warps=WARPS)
    if op == "topk":
        grid = (src.numel() // (32 * 8),)
        return lambda: _topk[grid](src, dst, out2, TOP=row.top, FLOAT=row.dtype == "float32", num_warps=WARPS)
    if op == "radix_sort_valid":
        grid = (src.numel() // tile,)
        return lambda: _radix_sort_valid[grid](src, aux, dst, TILE=tile, PAD=largest(row.dtype), num_warps=WARPS)
    if op == "histogram_valid":
        grid = (src.numel() // tile,)
        return lambda: _histogram_valid[grid](src, aux, dst, TILE=tile, BINS=256, num_warps=WARPS)
    if row.running:
        code = {"running_exclusive_sum": 0, "running_segmented_sum": 1, "running_reverse_exclusive_sum": 2}[op]
        grid = (src.numel() // (tile * row.tiles),)
        return lambda: _running[grid](src, dst, TILE=tile, TILES=row.tiles, OP=code, num_warps=WARPS)
    raise ValueError(f"Triton has no {op}")
