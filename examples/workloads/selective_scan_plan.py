"""The tiling of the selective-scan kernels, shared by ``selective_scan_numba.py`` and ``selective_scan_cute.py``
(pure Python: each backend's install imports it without the other's compiler).

One block per (batch, dim) row; the row's ``seqlen`` positions are walked in chunks of ``threads x items``
positions, each thread holding ``items`` consecutive positions (blocked order, as the scan needs). The table is
mamba-ssm's public launch plan for its CUDA forward: short rows get a narrow block so that no thread idles, rows
longer than 1024 positions take chunks of 2048 (128 threads x 16 items).
"""
from __future__ import annotations

MAX_DSTATE = 256  # the running states of one row live in shared memory: MAX_DSTATE x 4 B
LOG2E = 1.4426950408889634  # exp(x) = exp2(x * log2(e)): A is scaled once per state, not per position
TILINGS = ((128, 32, 4), (256, 32, 8), (512, 32, 16), (1024, 64, 16))  # (longest seqlen, threads, items)
LONG = (128, 16)  # every longer row: chunks of 2048


def tiling(seqlen: int) -> tuple[int, int]:
    """(threads, items per thread) of the kernel that scans rows of ``seqlen`` positions."""
    for longest, threads, items in TILINGS:
        if seqlen <= longest:
            return threads, items
    return LONG


def reads_pairs(seqlen: int, dtype: str) -> bool:
    """Whether the kernels read full chunks as 32-bit words of two positions: bfloat16 rows of even length (every
    row, and so every chunk, starts at an even position; an odd length leaves a row starting at an odd one)."""
    return dtype == "bfloat16" and seqlen % 2 == 0


def chunks(seqlen: int) -> int:
    """Chunks per row: the kernel's loop count, and the number of times each state crosses a chunk boundary."""
    threads, items = tiling(seqlen)
    return -(-seqlen // (threads * items))
