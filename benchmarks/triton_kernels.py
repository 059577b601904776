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
