"""The tiling and the host-side launch plan shared by ``sampling_numba.py`` and ``sampling_cute.py`` (pure Python:
each backend's install imports it without the other's compiler).

``slice_plan(batch, vocab)`` says how a pass over a (batch, vocab) matrix is launched: one 1024-thread block per row
when the batch alone fills the GPU, else each row split into slices, one block each, whose blocks meet at grid
barriers in one launch (so a sliced launch never has more blocks than SMs); the softmax follows ``softmax_plan``,
which keeps rows a block holds in registers whole, the radix selects and the samplers ``select_plan``, which keeps rows
shorter than 65536 items whole.
"""
from __future__ import annotations

THREADS = 1024  # threads per block of every sampling kernel
VEC = 4  # items per thread per tile in order-sensitive passes (scans): 16 B per thread
TILE = THREADS * VEC  # a softmax slice holds at least one such tile
WIDE = 16  # items per thread per tile in order-free passes (histograms, reductions), loaded striped
WIDE_TILE = THREADS * WIDE
NARROW = 8  # the same, where a pass keeps more per item live (top-p's fixed-point masses)
NARROW_TILE = THREADS * NARROW
HELD = 32  # items per thread of a softmax row (or slice) short enough to stay in registers between its two passes
HELD_TILE = THREADS * HELD  # 32768: up to this length a softmax row or slice is read once
HELD_GROUP = 4  # held items are worked in groups; a group wholly past the row's (or slice's) end is skipped
WARPS = THREADS // 32  # a whole row's chunks in the samplers' first pass: one per warp
WARP_TILE = 32 * NARROW  # a warp's striped tile in that pass
BINS = 256  # radix-select bins: 8-bit digits
BINS_PER_LANE = BINS // 32  # a radix digit is chosen by one warp, each lane holding this many neighbouring bins
CANDIDATES = 8192  # keys a radix select keeps in shared memory once few enough share its digits so far (32 KiB)
SLICE_BLOCKS = 132  # a sliced launch fills one wave: one block per SM of an H100/H200 (132 SMs; a 1024-thread
# block of more than 32 registers a thread leaves no room for a second), never more blocks than that


def slice_plan(batch: int, vocab: int) -> tuple[int, int]:
    """(slices per row, slice length) of a pass over the rows: one slice (one block per row: ``softmax_kernel``) once
    the batch alone fills the GPU, else as many slices of at least 4096 items each as keep the launch within
    SLICE_BLOCKS blocks (a second wave would double the time, and the blocks meet at grid barriers; at most THREADS:
    a row's pairs, or counts, are merged with one thread per slice). Every kernel's plan keeps short rows
    whole (``softmax_plan``, ``select_plan``). The length is a multiple of 4."""
    slices = min(max(1, SLICE_BLOCKS // batch), max(1, vocab // TILE), THREADS)
    length = -(-vocab // slices)
    return slices, -(-length // 4) * 4


SELECT_MIN_VOCAB = 4 * WIDE_TILE  # rows shorter than this stay whole (one block each)


PARTS_PER_LANE = -(-SLICE_BLOCKS // 32)  # a row's parts (slices or warp chunks) as one warp holds them: 5 a lane
PART_SLOTS = 32 * PARTS_PER_LANE  # the shared arrays of a row's parts (a constant: numba-cuda-mlir carves a shared
# array whose shape is computed in the kernel out of dynamic shared memory, which a launch must then provide)


WHOLE_ROW_BLOCKS = 2 * SLICE_BLOCKS  # plain sampling walks its rows whole in launches of at least this many blocks


def walks_whole_rows(blocks: int) -> bool:
    """Whether plain sampling (``sampling_from_probs``, a block per row) walks each row in tiles from its start up to
    the sample (FlashInfer's order: about half the row read, each tile after the last) rather than reading the whole
    row at once by warp chunks and walking the crossing chunk: in a launch of two waves or more, where the blocks'
    reads, not one block's latency, set the time. An A/B on an H100 (numba, CUDA events, the same samples but for
    rows whose uniform lies within rounding of a prefix sum): vocab 32000 at batch 512 33.6 against 42.1 us, 128256
    and 256000 at 512 101 and 187 against 110 and 195; at batch 256 and below the chunks won (16.8 against 18.9 us at
    256, 8.1 against 11.1 at 8). The kernels decide it from their grid (``WHOLE_ROW_BLOCKS``)."""
    return blocks >= WHOLE_ROW_BLOCKS


def select_plan(batch: int, vocab: int) -> tuple[int, int]:
    """``slice_plan`` for the radix selects and the samplers: rows shorter than SELECT_MIN_VOCAB (65536) stay whole,
    one block per row. An A/B on an H100 at vocab 32000 (one block per row against one launch over 7 slices) found
    the radix selects' split no faster (37.0 against 37.7 us, batch 1) and the samplers' slower (0.55-0.99x of
    FlashInfer against 0.80-0.97x)."""
    return (1, vocab) if vocab < SELECT_MIN_VOCAB else slice_plan(batch, vocab)


def softmax_plan(batch: int, vocab: int) -> tuple[int, int]:
    """``slice_plan`` for the softmax: a row of at most HELD_TILE items stays whole, one block per row (read once and
    held in registers, it is done before a sliced launch's grid barrier would be: on an H100 at vocab 16384 and
    32000, batch 1 to 32, one block per row took 11-12 us against the sliced launch's 16 us, libdevice's exp in
    both)."""
    return (1, vocab) if vocab <= HELD_TILE else slice_plan(batch, vocab)


CLUSTER = 8  # blocks of a thread-block cluster that share a softmax row (sm_90; 8: the portable cluster size)
CLUSTER_SHAPES = ((256, 16), (512, 16), (512, 32), (768, 32), (1024, 32))  # (threads, items a thread) by size


CLUSTER_BATCHES = 8  # the cluster softmax takes batches up to this many rows of at most HELD_TILE items


def cluster_softmax_plan(vocab: int) -> tuple[int, int, int] | None:
    """(threads, items a thread, slice length) of the cluster softmax: a row over the CLUSTER blocks of one cluster,
    each holding its slice in registers, the slices' (max, sum) pairs merged through distributed shared memory (a
    cluster ``reduce``: no grid barrier, no second read); the smallest block that holds a slice. None where a slice
    does not fit in 1024 x 32 items (rows over 262144)."""
    length = -(-vocab // CLUSTER)
    length = -(-length // 4) * 4
    for threads, held in CLUSTER_SHAPES:
        if threads * held >= length:
            return threads, held, length
    return None


def uses_cluster_softmax(batch: int, vocab: int) -> bool:
    """Whether ``softmax`` takes the cluster kernel: small batches of rows one block would hold. An A/B on an H100
    (numba, CUDA events; every output checked) against the plan before it: vocab 32000 at batch 1 and 8, 7.7 us
    against 10.3-10.4 (a block per row); at batch 32 12.2 against 11.1, at 128 26.0 against 15.0; longer rows
    (128256 to 256000, 8 blocks of 512-1024 threads) 0.24-1.37x the sliced launch over every SM."""
    return batch <= CLUSTER_BATCHES and vocab <= HELD_TILE and cluster_softmax_plan(vocab) is not None

