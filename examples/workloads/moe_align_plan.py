"""The tiling, the buffer sizes and the host-side launch plan shared by ``moe_align_numba.py`` and
``moe_align_cute.py`` (pure Python: each backend's install imports it without the other's compiler).

``small_path(numel)`` says whether the entries fit one warp's sort (``WARP_ITEMS`` per lane, up to ``WARP_TILE``
entries): then ``warp_kernel`` runs them in one launch of one block, warp 0 ranking and counting them by a warp merge
sort and a warp scan while the other warps fill the sentinel, with one block barrier. Otherwise ``launch_plan(numel)``
says how ``moe_align_block_size`` runs over ``numel = tokens * k`` routed entries: one launch of one block while the
entries fit in ``SINGLE_BLOCK_TILES`` tiles (the block counts them, then ranks and places them), else two launches of
``blocks`` blocks, each over ``span`` consecutive entries (the first writes each block's per-expert counts, the
second turns every block's counts into its destinations and places its entries).
"""
from __future__ import annotations

THREADS = 1024  # threads per block of every MoE-align kernel (thread e < num_experts owns expert e)
ITEMS = 4  # routed entries per thread per tile: a 16-byte blocked load per thread
TILE = THREADS * ITEMS
MAX_EXPERTS = 256  # thread e < 256 owns expert e; the sort keys need at most 9 bits
BINS = MAX_EXPERTS + 1  # counting bins: one per expert, one (the last) for ids outside [0, num_experts)
SINGLE_BLOCK_TILES = 2  # up to this many tiles (8192 entries: 1024 tokens at k = 8) run as one launch of one block
WARP_ITEMS = 8  # the small path's entries per lane: one warp sorts up to WARP_TILE entries
WARP_TILE = 32 * WARP_ITEMS  # 256 entries (32 tokens at k = 8); the sort key's low 8 bits carry the entry's place
MAX_BLOCKS = 132  # the two-launch path fills one wave: one 1024-thread block per SM of an H100/H200


def cdiv(a: int, b: int) -> int:
    return -(-a // b)


def max_num_tokens_padded(numel: int, num_experts: int, block_size: int) -> int:
    """The length of ``sorted_token_ids`` as vLLM allocates it: every entry plus up to ``block_size - 1`` padding
    slots per expert; at most ``numel`` experts receive an entry, so fewer entries than experts need at most
    ``numel * block_size`` slots."""
    size = numel + num_experts * (block_size - 1)
    if numel < num_experts:
        size = min(numel * block_size, size)
    return size


def max_num_blocks(numel: int, num_experts: int, block_size: int) -> int:
    """The length of ``expert_ids``: one entry per ``block_size`` slots of ``sorted_token_ids``."""
    return cdiv(max_num_tokens_padded(numel, num_experts, block_size), block_size)


def small_path(numel: int) -> bool:
    """Whether ``moe_align_block_size`` takes the warp path: every entry fits one warp's tile of ``WARP_TILE`` (256).

    Why 256: the path's cost is one warp merge sort of ``WARP_ITEMS`` keys per lane (a serial merge of K items per
    lane in each of 5 rounds, so it grows with K while the 1024-thread path's 17-24 block barriers stay), and it keeps
    every expert's start and end and the padded offsets per lane (8 experts of 256 per lane); its keys hold the expert
    above an 8-bit place. 256 entries cover decoding batches up to 32 tokens at k = 8 (issue 43's losses were at 16
    tokens: 32 to 128 entries)."""
    return numel <= WARP_TILE


def launch_plan(numel: int) -> tuple[int, int]:
    """(blocks, span): one block over every entry while they fit SINGLE_BLOCK_TILES tiles, else up to MAX_BLOCKS
    blocks of ``span`` consecutive entries each (a whole number of tiles; the last block may hold fewer)."""
    tiles = max(1, cdiv(numel, TILE))
    if tiles <= SINGLE_BLOCK_TILES:
        return 1, tiles * TILE
    per_block = cdiv(tiles, MAX_BLOCKS)
    return cdiv(tiles, per_block), per_block * TILE


def key_bits(num_experts: int) -> int:
    """The bits a tile's sort keys need: expert ids 0 .. num_experts - 1, and num_experts for ids outside them."""
    return int(num_experts).bit_length()


def check_arguments(numel: int, num_experts: int, block_size: int) -> None:
    """The host wrappers' argument checks, as ValueErrors that name the argument and the fix."""
    if not 1 <= num_experts <= MAX_EXPERTS:
        raise ValueError(f"moe_align_block_size: num_experts={num_experts} is outside 1..{MAX_EXPERTS}; the kernels "
                         f"rank expert ids by one 8-bit digit (split the experts into groups of at most "
                         f"{MAX_EXPERTS})")
    if block_size < 1:
        raise ValueError(f"moe_align_block_size: block_size={block_size} must be a positive integer")
    if max_num_tokens_padded(numel, num_experts, block_size) >= 2**31:
        raise ValueError(f"moe_align_block_size: {numel} entries padded to block_size={block_size} over "
                         f"{num_experts} experts need more than 2**31 - 1 slots (int32 token ids)")
