"""CuTe DSL kernels of the features launched by tests/gpu/test_cutlass_features_gpu.py (radix_rank, reduce_batched,
group queries, fragment interop, partial tiles of radix sort and histogram) and built on the CPU by
tests/cute_dsl/test_cutlass_features_compile.py (CuTe reads kernel source, so they live in a file both import)."""
from __future__ import annotations

import numpy as np
import cutlass
import cutlass.cute as cute

import cuda.coop.cutlass as cute_coop
from cuda import coop

THREADS, K = 128, 4


# ---- radix_rank (SPEC 8.10): a block's tile of keys ranked on one digit; the keys are stored back (kept unchanged)
@cute.kernel
def radix_rank_kernel(src: cute.Tensor, ranks: cute.Tensor, kept: cute.Tensor, k: cutlass.Constexpr,
                      begin: cutlass.Constexpr, end: cutlass.Constexpr, radix_bits: cutlass.Constexpr,
                      descending: cutlass.Constexpr):
    bid, _, _ = cute.arch.block_idx()
    block = coop.this_block()
    base = bid * (block.count() * k)
    keys = coop.ThreadData(k)
    coop.load(block, src, keys, offset=base)
    rank = coop.radix_rank(block, keys, begin_bit=begin, end_bit=end, radix_bits=radix_bits, descending=descending)
    coop.store(block, ranks, rank, offset=base)
    coop.store(block, kept, keys, offset=base)


@cute.jit
def radix_rank_launch(src: cute.Tensor, ranks: cute.Tensor, kept: cute.Tensor, blocks: cutlass.Constexpr,
                      shape: cutlass.Constexpr, k: cutlass.Constexpr, begin: cutlass.Constexpr,
                      end: cutlass.Constexpr, radix_bits: cutlass.Constexpr, descending: cutlass.Constexpr):
    radix_rank_kernel(src, ranks, kept, k, begin, end, radix_bits, descending).launch(grid=(blocks, 1, 1),
                                                                                      block=shape)


# ---- reduce_batched (SPEC 8.6): B in {1, 3, W, 2W+1} batches, each reduced to both output layouts
def batch_counts(width):
    return (1, 3, width, 2 * width + 1)


def larger(a, b):
    """A user function as binary_op (a qualified feature of cuda.coop.cutlass), traceable by CuTe."""
    return cutlass.max(a, b)


OPERATORS = {"sum": "sum", "max": "max", "larger": larger}


def _warp_group(width):
    return coop.this_warp() if width == 32 else coop.this_warp().group_by(width)


@cute.kernel
def reduce_batched_kernel(s1: cute.Tensor, s2: cute.Tensor, s3: cute.Tensor, s4: cute.Tensor,
                          o1s: cute.Tensor, o1b: cute.Tensor, o2s: cute.Tensor, o2b: cute.Tensor,
                          o3s: cute.Tensor, o3b: cute.Tensor, o4s: cute.Tensor, o4b: cute.Tensor,
                          kept: cute.Tensor, width: cutlass.Constexpr, op: cutlass.Constexpr):
    bid, _, _ = cute.arch.block_idx()
    block = coop.this_block()
    group = _warp_group(width)
    binary_op = OPERATORS[op]
    b1, b2, b3, b4 = batch_counts(width)
    m1, m2, m3, m4 = (-(-b // width) for b in (b1, b2, b3, b4))
    first = bid * block.count()  # the linear rank of the block's first thread in the grid
    x1 = coop.ThreadData(b1)
    x2 = coop.ThreadData(b2)
    x3 = coop.ThreadData(b3)
    x4 = coop.ThreadData(b4)
    coop.load(block, s1, x1, offset=first * b1)
    coop.load(block, s2, x2, offset=first * b2)
    coop.load(block, s3, x3, offset=first * b3)
    coop.load(block, s4, x4, offset=first * b4)
    coop.store(block, o1s, cute_coop.reduce_batched(group, x1, binary_op=binary_op), offset=first * m1)
    coop.store(block, o1b, cute_coop.reduce_batched(group, x1, binary_op=binary_op, output_layout="blocked"),
               offset=first * m1)
    coop.store(block, o2s, cute_coop.reduce_batched(group, x2, binary_op=binary_op, output_layout="striped"),
               offset=first * m2)
    coop.store(block, o2b, cute_coop.reduce_batched(group, x2, binary_op=binary_op, output_layout="blocked"),
               offset=first * m2)
    coop.store(block, o3s, cute_coop.reduce_batched(group, x3, binary_op=binary_op, output_layout="striped"),
               offset=first * m3)
    coop.store(block, o3b, cute_coop.reduce_batched(group, x3, binary_op=binary_op, output_layout="blocked"),
               offset=first * m3)
    coop.store(block, o4s, cute_coop.reduce_batched(group, x4, binary_op=binary_op, output_layout="striped"),
               offset=first * m4)
    coop.store(block, o4b, cute_coop.reduce_batched(group, x4, binary_op=binary_op, output_layout="blocked"),
               offset=first * m4)
    coop.store(block, kept, x4, offset=first * b4)  # the input payload is preserved


@cute.jit
def reduce_batched_launch(s1: cute.Tensor, s2: cute.Tensor, s3: cute.Tensor, s4: cute.Tensor,
                          o1s: cute.Tensor, o1b: cute.Tensor, o2s: cute.Tensor, o2b: cute.Tensor,
                          o3s: cute.Tensor, o3b: cute.Tensor, o4s: cute.Tensor, o4b: cute.Tensor,
                          kept: cute.Tensor, blocks: cutlass.Constexpr, width: cutlass.Constexpr,
                          op: cutlass.Constexpr):
    reduce_batched_kernel(s1, s2, s3, s4, o1s, o1b, o2s, o2b, o3s, o3b, o4s, o4b, kept, width, op).launch(
        grid=(blocks, 1, 1), block=(THREADS, 1, 1))


# ---- group queries (SPEC 3.4, 12.3): every kind at every level it answers, each written as an Int64 column
GROUPS = ("thread", "warp", "lanes8", "warp_pair", "block", "cluster", "grid")
LEVELS = {  # the levels each kind answers (SPEC 3.4's table)
    "thread": ("thread", "warp", "block", "cluster", "grid"),
    "warp": ("thread", "warp", "block", "cluster", "grid"),
    "lanes8": ("thread", "warp"),  # this_warp().group_by(8)
    "warp_pair": ("thread", "warp", "block"),  # this_block().group_by(2)
    "block": ("thread", "warp", "block", "cluster", "grid"),
    "cluster": ("thread", "warp", "block", "cluster", "grid"),
    "grid": ("thread", "warp", "block", "cluster", "grid"),
}
# (group, method, level): one column each, in this order
QUERIES = tuple((group, method, level) for group in GROUPS for level in LEVELS[group] for method in ("rank", "count"))
# (group, method, dtype, level): rank_as / count_as, narrowing included (int8 of a grid rank above 127 wraps)
CONVERSIONS = (("block", "rank_as", np.int8, "thread"), ("grid", "rank_as", np.int8, "thread"),
               ("grid", "count_as", np.uint16, "block"), ("block", "rank_as", np.uint32, "thread"),
               ("warp", "count_as", np.int64, "block"), ("grid", "rank_as", np.int16, "thread"),
               ("lanes8", "rank_as", np.uint8, "warp"), ("block", "rank_as", None, "thread"))
MEMBERS = ("lanes8", "lanes24", "warp_pair", "warp_triple", "block")  # is_member(); the 24 and 3 are not exhaustive
# signed arithmetic on the results (SPEC 12.3): negative where SPEC 3.4's unsigned types would wrap
SIGNED = ("warp.rank(level='block') * 32 - block.count()", "lanes8.rank() - lanes8.count()",
          "block.rank(level='grid') - grid.count(level='block')", "grid.rank() - grid.count()")
COLUMNS = len(QUERIES) + len(CONVERSIONS) + len(MEMBERS) + len(SIGNED)


def _groups():
    warp, block = coop.this_warp(), coop.this_block()
    return {"thread": coop.this_thread(), "warp": warp, "lanes8": warp.group_by(8),
            "lanes24": warp.group_by(24, exhaustive=False), "warp_pair": block.group_by(2),
            "warp_triple": block.group_by(3, exhaustive=False), "block": block, "cluster": coop.this_cluster(),
            "grid": coop.this_grid()}


def _signed(g):
    return (g["warp"].rank(level="block") * 32 - g["block"].count(), g["lanes8"].rank() - g["lanes8"].count(),
            g["block"].rank(level="grid") - g["grid"].count(level="block"), g["grid"].rank() - g["grid"].count())


@cute.kernel
def queries_kernel(out: cute.Tensor):
    g = _groups()
    row = g["grid"].rank() * COLUMNS
    for c in cutlass.range_constexpr(len(QUERIES)):
        name, method, level = QUERIES[c]
        out[row + c] = cutlass.Int64(getattr(g[name], method)(level=level))
    for c in cutlass.range_constexpr(len(CONVERSIONS)):
        name, method, dtype, level = CONVERSIONS[c]
        out[row + len(QUERIES) + c] = cutlass.Int64(getattr(g[name], method)(dtype, level=level))
    base = len(QUERIES) + len(CONVERSIONS)
    for c in cutlass.range_constexpr(len(MEMBERS)):
        out[row + base + c] = cutlass.Int64(g[MEMBERS[c]].is_member())
    g["block"].sync()
    g["block"].sync_aligned()
    g["warp"].sync()
    g["lanes8"].sync()
    g["cluster"].sync()
    g["thread"].sync()
    signed = _signed(g)
    base = base + len(MEMBERS)
    for c in cutlass.range_constexpr(len(SIGNED)):
        out[row + base + c] = cutlass.Int64(signed[c])


@cute.jit
def queries_launch(out: cute.Tensor, grid: cutlass.Constexpr, block: cutlass.Constexpr,
                   cluster: cutlass.Constexpr):
    if cutlass.const_expr(cluster is None):  # no cluster launch: each block is its own cluster
        queries_kernel(out).launch(grid=grid, block=block)
    else:
        queries_kernel(out).launch(grid=grid, block=block, cluster=cluster)


# ---- fragment interop (SPEC 12.3): register tensors as payload operands, from_fragment aliasing, items.fragment
@cute.kernel
def fragment_interop_kernel(src: cute.Tensor, scanned: cute.Tensor, totals: cute.Tensor, aliased: cute.Tensor,
                            through: cute.Tensor, doubled: cute.Tensor, tripled: cute.Tensor):
    bid, _, _ = cute.arch.block_idx()
    base = bid * (THREADS * K)
    block = coop.this_block()
    frag = cute.make_rmem_tensor((K,), cutlass.Int32)
    cute_coop.load(block, src, frag, offset=base)  # a register tensor as the load's output (qualified calls only)
    prefix = cute_coop.inclusive_sum(block, frag)  # ... as an operation's operand
    total = cute_coop.sum(block, frag)
    coop.store(block, scanned, prefix, offset=base)
    if block.rank() == 0:
        totals[bid] = total
    items = cute_coop.ThreadData.from_fragment(frag)  # wraps frag, no copy: each side sees the other's writes
    for i in cutlass.range_constexpr(K):
        frag[i] = frag[i] + 1  # written through the tensor, read through items
    coop.store(block, aliased, items, offset=base)
    for i in cutlass.range_constexpr(K):
        items[i] = items[i] * 5  # written through items, read through the tensor
    out = cute.make_rmem_tensor((K,), cutlass.Int32)
    for i in cutlass.range_constexpr(K):
        out[i] = frag[i] - 7
    cute_coop.store(block, through, out, offset=base)  # ... as the store's value
    twice = coop.ThreadData(K, np.int32)
    for i in cutlass.range_constexpr(K):
        twice.fragment[i] = prefix[i] * 2  # items.fragment written
    coop.store(block, doubled, twice, offset=base)
    thrice = cute.make_rmem_tensor((K,), cutlass.Int32)
    for i in cutlass.range_constexpr(K):
        thrice[i] = prefix.fragment[i] * 3  # items.fragment read
    cute_coop.store(block, tripled, thrice, offset=base)


@cute.jit
def fragment_interop_launch(src: cute.Tensor, scanned: cute.Tensor, totals: cute.Tensor, aliased: cute.Tensor,
                            through: cute.Tensor, doubled: cute.Tensor, tripled: cute.Tensor,
                            blocks: cutlass.Constexpr):
    fragment_interop_kernel(src, scanned, totals, aliased, through, doubled, tripled).launch(
        grid=(blocks, 1, 1), block=(THREADS, 1, 1))


# ---- top-k on warp groups (SPEC 8.22): each group's largest keys with their values, k and valid_items at run time;
# built on the CPU only (tests/cute_dsl/test_cutlass_features_compile.py), the conformance suite runs the same calls
@cute.kernel
def warp_topk_kernel(src: cute.Tensor, vals: cute.Tensor, top: cute.Tensor, carried: cute.Tensor, kk: cutlass.Int32,
                     n: cutlass.Int32, width: cutlass.Constexpr, k: cutlass.Constexpr):
    bid, _, _ = cute.arch.block_idx()
    block = coop.this_block()
    base = bid * (block.count() * k)
    keys = coop.ThreadData(k)
    values = coop.ThreadData(k)
    coop.load(block, src, keys, offset=base)
    coop.load(block, vals, values, offset=base)
    best, moved = coop.topk_max_pairs(_warp_group(width), keys, values, k=kk, valid_items=n)
    coop.store(block, top, best, offset=base)
    coop.store(block, carried, moved, offset=base)


@cute.jit
def warp_topk_launch(src: cute.Tensor, vals: cute.Tensor, top: cute.Tensor, carried: cute.Tensor, kk: cutlass.Int32,
                     n: cutlass.Int32, width: cutlass.Constexpr, k: cutlass.Constexpr):
    warp_topk_kernel(src, vals, top, carried, kk, n, width, k).launch(grid=(WARP_TOPK_BLOCKS, 1, 1),
                                                                     block=(64, 1, 1))


# ---- partial tiles (SPEC 8.23) through the qualified namespace: float keys sorted with their values, the slots past
# valid_items never loaded, oob_default in the tail, blocked or striped output; one scalar sample per thread counted
@cute.kernel
def radix_partial_kernel(keys_in: cute.Tensor, values_in: cute.Tensor, keys_out: cute.Tensor, values_out: cute.Tensor,
                         valid: cutlass.Int32, oob: cutlass.Float32, k: cutlass.Constexpr,
                         descending: cutlass.Constexpr, striped: cutlass.Constexpr):
    bid, _, _ = cute.arch.block_idx()
    block = coop.this_block()
    base = bid * (block.count() * k)
    keys = coop.ThreadData(k)
    values = coop.ThreadData(k)
    coop.load(block, keys_in, keys, offset=base, valid_items=valid)
    coop.load(block, values_in, values, offset=base)
    sorted_keys, sorted_values = cute_coop.radix_sort_pairs(block, keys, values, descending=descending,
                                                            blocked_to_striped=striped, valid_items=valid,
                                                            oob_default=oob)
    coop.store(block, keys_out, sorted_keys, offset=base)  # direct: the test reads the layout itself
    coop.store(block, values_out, sorted_values, offset=base)


@cute.jit
def radix_partial_launch(keys_in: cute.Tensor, values_in: cute.Tensor, keys_out: cute.Tensor, values_out: cute.Tensor,
                         valid: cutlass.Int32, oob: cutlass.Float32, k: cutlass.Constexpr,
                         descending: cutlass.Constexpr, striped: cutlass.Constexpr):
    radix_partial_kernel(keys_in, values_in, keys_out, values_out, valid, oob, k, descending, striped).launch(
        grid=(PARTIAL_BLOCKS, 1, 1), block=(THREADS, 1, 1))


@cute.kernel
def histogram_partial_kernel(src: cute.Tensor, counts_out: cute.Tensor, valid: cutlass.Int32,
                             algorithm: cutlass.Constexpr):
    bid, _, _ = cute.arch.block_idx()
    block = coop.this_block()
    sample = src[bid * block.count() + block.rank()]
    counts = cute_coop.histogram(block, sample, bins=PARTIAL_BINS, bins_per_thread=2, algorithm=algorithm,
                                 valid_items=valid)
    coop.store(block, counts_out, counts, offset=bid * (block.count() * 2), algorithm="striped")


@cute.jit
def histogram_partial_launch(src: cute.Tensor, counts_out: cute.Tensor, valid: cutlass.Int32,
                             algorithm: cutlass.Constexpr):
    histogram_partial_kernel(src, counts_out, valid, algorithm).launch(grid=(PARTIAL_BLOCKS, 1, 1),
                                                                       block=(THREADS, 1, 1))


# ---- the launches of the GPU tests, each built on the CPU by the compile tests
CUTE_TYPES = {"int32": cutlass.Int32, "uint32": cutlass.Uint32, "int64": cutlass.Int64, "uint64": cutlass.Uint64,
              "uint8": cutlass.Uint8, "float32": cutlass.Float32}
RADIX_RANK_BLOCKS = 3
# (key dtype, items per thread, block shape)
RADIX_RANK_TILES = (("int32", 4, (128, 1, 1)), ("uint32", 2, (64, 1, 1)), ("int64", 1, (32, 4, 1)),
                    ("uint64", 3, (128, 1, 1)))
# (begin_bit, end_bit, radix_bits, descending): the digit [begin, end or begin + radix_bits or begin + 4)
RADIX_RANK_DIGITS = ((0, None, None, False), (3, None, 5, True), (28, 32, None, False), (2, 10, 8, True))
REDUCE_BATCHED_BLOCKS = 2
REDUCE_BATCHED_WIDTHS = (1, 2, 4, 8, 16, 32)
REDUCE_BATCHED_OPERATORS = (("sum", "int32"), ("max", "float32"), ("larger", "int32"))  # (operator, dtype)
# (grid, block, cluster): cluster None is a launch without clusters (each block is its own cluster)
QUERY_LAUNCHES = (((3, 1, 1), (128, 1, 1), None), ((2, 2, 1), (32, 4, 1), None),
                  ((4, 2, 1), (64, 2, 1), (2, 1, 1)), ((4, 4, 1), (32, 2, 2), (2, 2, 1)),
                  ((2, 2, 2), (128, 1, 1), (1, 2, 2)))
FRAGMENT_BLOCKS = 2
WARP_TOPK_BLOCKS = 2
PARTIAL_BLOCKS, PARTIAL_K, PARTIAL_BINS = 2, 3, 256  # the uint8 samples of the scalar histogram: every byte a bin
# (descending, blocked_to_striped) of the qualified radix sort of a partial tile
PARTIAL_SORTS = ((False, False), (True, False), (False, True), (True, True))
EVERYTHING_COUNT, EVERYTHING_WINDOW = 100, 37  # the sum's valid threads and the stored items; the decoded window


def radix_rank_sizes(dtype, k, shape):
    """(tile, whole input) of a radix_rank launch."""
    tile = int(np.prod(shape)) * k
    return tile, RADIX_RANK_BLOCKS * tile


def reduce_batched_sizes(width):
    """[(B, result slots per thread)] of the four payloads, and the number of threads launched."""
    return [(b, -(-b // width)) for b in batch_counts(width)], REDUCE_BATCHED_BLOCKS * THREADS


def query_rows(grid, block):
    return int(np.prod(grid)) * int(np.prod(block))
