"""Triton versions of the tile kernels (imported only where Triton is installed).

No ``from __future__ import annotations`` here: Triton reads ``tl.constexpr`` annotations.
"""
import triton
import triton.language as tl


@triton.jit
def _tile_copy(src, dst, TILE: tl.constexpr):
    # int64 tile origin, like the other implementations, so large inputs cannot overflow.
    offsets = tl.program_id(0).to(tl.int64) * TILE + tl.arange(0, TILE)
    tl.store(dst + offsets, tl.load(src + offsets))


def tile_copy(src, dst, tile: int, num_warps: int):
    """A launcher copying ``src`` to ``dst`` (torch tensors) one ``tile`` per program."""
    grid = (src.numel() // tile,)
    return lambda: _tile_copy[grid](src, dst, TILE=tile, num_warps=num_warps)


@triton.jit
def _tile_sort(src, dst, TILE: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int64) * TILE + tl.arange(0, TILE)
    tl.store(dst + offsets, tl.sort(tl.load(src + offsets)))


def tile_sort(src, dst, tile: int, num_warps: int):
    """A launcher sorting each ``tile`` of ``src`` into ``dst`` (torch tensors), one tile per program."""
    grid = (src.numel() // tile,)
    return lambda: _tile_sort[grid](src, dst, TILE=tile, num_warps=num_warps)


# --- issue 31: a reverse scan, a segmented scan and an argmax of each tile (benchmarks/cute.py's rows) ---------

@triton.jit
def _tile_reverse_sum(src, dst, TILE: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int64) * TILE + tl.arange(0, TILE)
    tl.store(dst + offsets, tl.cumsum(tl.load(src + offsets), axis=0, reverse=True))


@triton.jit
def _segmented_add(flag_a, value_a, flag_b, value_b):
    return flag_a | flag_b, tl.where(flag_b != 0, value_b, value_a + value_b)


@triton.jit
def _tile_segmented_sum(src, dst, TILE: tl.constexpr):
    positions = tl.arange(0, TILE)
    offsets = tl.program_id(0).to(tl.int64) * TILE + positions
    x = tl.load(src + offsets)
    heads = (((x.to(tl.int32) & 15) == 0) | (positions == 0)).to(tl.int32)  # low four bits (of a whole number)
    _, sums = tl.associative_scan((heads, x), 0, _segmented_add)
    tl.store(dst + offsets, sums)


@triton.jit
def _tile_argmax(src, positions, TILE: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int64) * TILE + tl.arange(0, TILE)
    tl.store(positions + tl.program_id(0), tl.argmax(tl.load(src + offsets), axis=0).to(tl.int32))


_TILE_OPS = {"reverse_inclusive_sum": _tile_reverse_sum, "segmented_inclusive_sum": _tile_segmented_sum,
             "argmax": _tile_argmax}


def tile_op(operation: str, src, out, tile: int, num_warps: int):
    """A launcher of ``operation`` on each ``tile`` of ``src`` (torch tensors), one tile per program."""
    kernel = _TILE_OPS[operation]
    grid = (src.numel() // tile,)
    return lambda: kernel[grid](src, out, TILE=tile, num_warps=num_warps)
