"""The tiling, the buffer sizes and the host-side launch plan shared by ``moe_align_numba.py`` and
``moe_align_cute.py`` (pure Python: each backend's install imports it without the other's compiler).

``small_path(numel)`` says whether the entries fit one launch of one block at up to ``SMALL_ITEMS[-1]`` entries a
thread (8192: 1024 tokens at k = 8): then the small kernel of ``small_items(numel)`` entries a lane runs them, each
warp ranking its own run of entries among themselves, with no sort and two block barriers besides one block
``exclusive_sum``. Otherwise ``launch_plan(numel)`` says how ``moe_align_block_size`` runs over ``numel = tokens * k``
routed entries: two launches of ``blocks`` blocks, each over ``span`` consecutive entries (the first writes each
block's per-expert counts, the second turns every block's counts into its destinations and places its entries);
``launch_plan`` also gives the one-block plan (``blocks == 1``: count, then rank and place by tile sorts) that the
small kernel replaced, kept for comparing the two.
"""
from __future__ import annotations

THREADS = 1024  # threads per block of every MoE-align kernel (thread e < num_experts owns expert e)
ITEMS = 4  # routed entries per thread per tile: a 16-byte blocked load per thread
TILE = THREADS * ITEMS
MAX_EXPERTS = 256  # thread e < 256 owns expert e; the sort keys need at most 9 bits
BINS = MAX_EXPERTS + 1  # counting bins: one per expert, one (the last) for ids outside [0, num_experts)
SINGLE_BLOCK_TILES = 2  # the one-block plan's limit (8192 entries), the small kernel's since: see launch_plan
SMALL_ITEMS = (1, 2, 4, 8)  # entries a lane of the small kernel's specialisations (each warp ranks 32 x items)
SMALL_SLOTS_PER_BLOCK = 4096  # the small kernel's writes a block takes (sorted_token_ids' slots): see small_blocks
SMALL_MAX_BLOCKS = 8
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
    """Whether ``moe_align_block_size`` takes the small kernel: one block, up to ``SMALL_ITEMS[-1]`` entries a
    thread (8192 entries: every decoding batch and prefills up to 1024 tokens at k = 8).

    Why: the one-block path's cost is fixed by its 17-24 block barriers (a histogram, two or three radix-sort
    passes, discontinuities per tile), and a single warp's merge sort is a chain of dependent shared-memory steps;
    issue 43's losses were at 16 tokens (32 to 128 entries, 0.43-0.99x of vLLM's op). The small kernel needs
    neither: each warp ranks its entries by matching their experts (a stable rank, as a sort would give), slot after
    slot, keeping its running per-expert counts in shared memory; per-warp counts give each warp's base, and one
    block scan the offsets."""
    return numel <= THREADS * SMALL_ITEMS[-1]


def small_items(numel: int) -> int:
    """Entries a lane of the small kernel that runs ``numel`` entries (``small_path``): the fewest of SMALL_ITEMS
    that hold them, since each is a slot the warp ranks after the one before."""
    for items in SMALL_ITEMS:
        if numel <= THREADS * items:
            return items
    raise ValueError(f"{numel} entries do not take the small path (at most {THREADS * SMALL_ITEMS[-1]})")


SMALL_FEW_THREADS = 256  # the small kernel's block for a few entries: still a thread per expert (MAX_EXPERTS)


def small_threads(numel: int) -> int:
    """Threads of the small kernel's block for ``numel`` entries: 256 (8 warps) for up to 256 entries, a lane each,
    else THREADS. Decoding batches have a few dozen entries: a 1024-thread block would spend its 32 warps on a
    block scan, 32 rows of counts per expert and barriers of 32 warps for them (vLLM launches max(experts, 32) +
    256 threads there)."""
    return SMALL_FEW_THREADS if numel <= SMALL_FEW_THREADS else THREADS


def small_blocks(numel: int, num_experts: int, size: int, threads: int) -> int:
    """Blocks of the small kernel (``threads`` a block) for ``numel`` entries over ``num_experts`` experts, writing
    ``size`` slots of ``sorted_token_ids``. Every block ranks all the entries (the same work, on SMs that would idle)
    and takes its share of the rest: the entries' placement (a block's share up to THREADS), the padding (a warp per
    expert: up to one expert a warp) and the other slots (up to SMALL_SLOTS_PER_BLOCK a block). One block's warps
    issue those stores at one SM's rate: on an H100, 1 to 8 blocks of 256 threads at one token of 256 experts took 6.4
    to 4.7 us (a warp padding 32 experts in turn), of 1024 threads at 1024 tokens of 256 experts 22.5 to 13.0 us."""
    warps = threads // 32
    wanted = max(cdiv(size, SMALL_SLOTS_PER_BLOCK), cdiv(num_experts, warps), cdiv(numel, THREADS))
    return max(1, min(SMALL_MAX_BLOCKS, wanted))


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
