"""Triton version of the tier-4 block histogram (imported only where Triton is installed).

Triton has ``tl.histogram`` and none of the family's other operations (adjacent difference, discontinuity,
run-length decode, batched warp reduction). One program counts one tile and adds its counts into the global
histogram with relaxed atomics, like the cuda.coop and CUB C++ kernels' one atomicAdd per bin.
No ``from __future__ import annotations`` here: Triton reads ``tl.constexpr`` annotations.
"""
import triton
import triton.language as tl


@triton.jit
def _tile_histogram(src, histogram, TILE: tl.constexpr, BINS: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int64) * TILE + tl.arange(0, TILE)
    samples = tl.load(src + offsets).to(tl.int32)  # uint8 or int32 bin indices in [0, BINS)
    counts = tl.histogram(samples, BINS)
    # relaxed, like CUDA's atomicAdd (Triton's default is acq_rel)
    tl.atomic_add(histogram + tl.arange(0, BINS), counts, sem="relaxed")


def histogram_launcher(src, histogram, tile: int, bins: int, num_warps: int):
    """A launcher adding the counts of every ``tile`` of ``src`` into ``histogram`` (torch tensors)."""
    grid = (src.numel() // tile,)
    return lambda: _tile_histogram[grid](src, histogram, TILE=tile, BINS=bins, num_warps=num_warps)
