"""Triton versions of the collectives tile kernels (imported only where Triton is installed).

``tl.sum`` and ``tl.cumsum`` keep int32 in int32, so they wrap like the other
implementations. Triton has no exchange: data layouts are the compiler's business.
No ``from __future__ import annotations`` here: Triton reads ``tl.constexpr`` annotations.
"""
import triton
import triton.language as tl


@triton.jit
def _tile_sum_atomic(src, out, TILE: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int64) * TILE + tl.arange(0, TILE)
    # relaxed, like CUDA's atomicAdd (Triton's default is acq_rel)
    tl.atomic_add(out, tl.sum(tl.load(src + offsets), axis=0), sem="relaxed")


@triton.jit
def _tile_sum_partials(src, out, TILE: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid.to(tl.int64) * TILE + tl.arange(0, TILE)
    tl.store(out + pid, tl.sum(tl.load(src + offsets), axis=0))


@triton.jit
def _tile_exclusive_sum(src, dst, TILE: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int64) * TILE + tl.arange(0, TILE)
    x = tl.load(src + offsets)
    tl.store(dst + offsets, tl.cumsum(x, axis=0) - x)


@triton.jit
def _tile_row_sums(src, out, ROWS: tl.constexpr, COLS: tl.constexpr):
    # ROWS consecutive segments of COLS elements (the warps' 32 x K tiles of a block), one total per segment
    pid = tl.program_id(0).to(tl.int64)
    rows = tl.arange(0, ROWS)
    offsets = pid * (ROWS * COLS) + rows[:, None] * COLS + tl.arange(0, COLS)[None, :]
    tl.store(out + pid * ROWS + rows, tl.sum(tl.load(src + offsets), axis=1))


_KERNELS = {"sum_atomic": _tile_sum_atomic, "sum_partials": _tile_sum_partials, "exclusive_sum": _tile_exclusive_sum}


def launcher(operation: str, src, out, tile: int, num_warps: int):
    """A launcher of ``operation`` over ``src`` (torch tensors), one ``tile`` per program.

    ``sum`` is the warp sum: the program's tile is ``num_warps`` rows of ``tile / num_warps`` elements (an
    [8, 32 x K] tile on 8 warps, as much work as one cuda.coop block), one total per row.
    """
    grid = (src.numel() // tile,)
    if operation == "sum":
        rows = num_warps
        return lambda: _tile_row_sums[grid](src, out, ROWS=rows, COLS=tile // rows, num_warps=num_warps)
    kernel = _KERNELS[operation]
    return lambda: kernel[grid](src, out, TILE=tile, num_warps=num_warps)
