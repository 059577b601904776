"""Runtime preconditions trap on the device (SPEC 2.5); each case runs in a child process, which must die of the trap's
own error (``gpu_helpers.trap_failure``: CUDA_ERROR_LAUNCH_FAILED, not an illegal address or any other fault)."""
from __future__ import annotations

import textwrap

import pytest
from gpu_helpers import assert_traps

pytestmark = pytest.mark.gpu

CHILD = textwrap.dedent("""
    import sys
    import numpy as np
    from numba_cuda_mlir import cuda
    import cuda.coop.numba_mlir
    from cuda import coop
    from numba_cuda_mlir import cuda

    @cuda.jit
    def kernel(src, dst, valid):
        items = coop.ThreadData(4)
        coop.load(coop.this_block(), src, items, valid_items=valid, oob_default=0)
        coop.store(coop.this_block(), dst, items)

    src = np.arange(512, dtype=np.int32) + 1
    dst = np.zeros_like(src)
    kernel[1, 128](src, dst, np.int32(512))   # in range: runs
    cuda.synchronize()
    assert (dst == src).all()
    print("IN_RANGE_OK", flush=True)
    kernel[1, 128](src, dst, np.int32(int(sys.argv[1])))
    cuda.synchronize()
    print("NO_TRAP", flush=True)
""")


@pytest.mark.parametrize("valid", [513, -1])
def test_out_of_range_valid_items_traps(valid):
    assert_traps(CHILD, valid)


SORT_CHILD = textwrap.dedent("""
    import sys
    import numpy as np
    from numba_cuda_mlir import cuda
    import cuda.coop.numba_mlir
    from cuda import coop
    from numba_cuda_mlir import cuda

    @cuda.jit
    def radix(src, dst, begin, end):
        keys = coop.ThreadData(4)
        coop.load(coop.this_block(), src, keys)
        coop.store(coop.this_block(), dst, coop.radix_sort_keys(coop.this_block(), keys, begin_bit=begin, end_bit=end))

    @cuda.jit
    def merge(src, dst, valid, unused):
        keys = coop.ThreadData(4)
        coop.load(coop.this_block(), src, keys)
        out = coop.merge_sort_keys(coop.this_block(), keys, valid_items=valid, oob_default=np.int32(2**31 - 1))
        coop.store(coop.this_block(), dst, out)

    @cuda.jit
    def topk(src, dst, kk, valid):
        keys = coop.ThreadData(4)
        coop.load(coop.this_block(), src, keys)
        coop.store(coop.this_block(), dst, coop.topk_min_keys(coop.this_block(), keys, k=kk, valid_items=valid))

    kernel = {"radix": radix, "merge": merge, "topk": topk}[sys.argv[1]]
    good = {"radix": (0, 32), "merge": (512, 0), "topk": (512, 512)}[sys.argv[1]]
    src = np.arange(512, dtype=np.int32)[::-1].copy()
    dst = np.zeros_like(src)
    kernel[1, 128](src, dst, np.int32(good[0]), np.int32(good[1]))   # in range: runs
    cuda.synchronize()
    assert (dst == np.sort(src)).all()
    print("IN_RANGE_OK", flush=True)
    kernel[1, 128](src, dst, np.int32(int(sys.argv[2])), np.int32(int(sys.argv[3])))
    cuda.synchronize()
    print("NO_TRAP", flush=True)
""")


@pytest.mark.parametrize("case", [("radix", 0, 33), ("radix", 5, 5), ("radix", -1, 8), ("merge", 513, 0),
                                  ("merge", -1, 0), ("topk", 513, 512), ("topk", 4, 513), ("topk", -1, 4)])
def test_out_of_range_sort_controls_trap(case):
    assert_traps(SORT_CHILD, *case)


WARP_CHILD = textwrap.dedent("""
    import sys
    import numpy as np
    import cuda.coop.numba_mlir as numba_coop  # noqa: F401  (the alias keeps `cuda` numba-cuda-mlir's)
    from cuda import coop
    from numba_cuda_mlir import cuda

    width, op = int(sys.argv[1]), sys.argv[2]

    @cuda.jit
    def load(src, dst, valid):
        group = coop.this_warp() if width == 32 else coop.this_warp().group_by(width)
        items = coop.ThreadData(4)
        coop.load(group, src, items, valid_items=valid, oob_default=0)
        coop.store(group, dst, items)

    @cuda.jit
    def store(src, dst, valid):
        group = coop.this_warp() if width == 32 else coop.this_warp().group_by(width)
        items = coop.ThreadData(4)
        coop.load(group, src, items)
        coop.store(group, dst, items, valid_items=valid)

    kernel = load if op == "load" else store
    src = np.arange(512, dtype=np.int32) + 1
    dst = np.zeros_like(src)
    kernel[1, 128](src, dst, np.int32(width * 4))   # each group's own full tile: runs
    cuda.synchronize()
    assert (dst == src).all()
    print("IN_RANGE_OK", flush=True)
    kernel[1, 128](src, dst, np.int32(int(sys.argv[3])))
    cuda.synchronize()
    print("NO_TRAP", flush=True)
""")


@pytest.mark.parametrize("case", [(32, "load", 129), (8, "load", 33), (1, "store", 5), (16, "store", -1)])
def test_warp_valid_items_above_the_group_tile_traps(case):
    """SPEC 8.1: a warp or logical warp passes its own count, 0 <= valid_items <= G*K; above it traps."""
    assert_traps(WARP_CHILD, *case)


ADJACENT_CHILD = textwrap.dedent("""
    import sys
    import numpy as np
    import cuda.coop.numba_mlir as numba_coop  # noqa: F401  (the alias keeps `cuda` numba-cuda-mlir's)
    from cuda import coop
    from numba_cuda_mlir import cuda

    direction = sys.argv[1]

    @cuda.jit
    def kernel(src, dst, valid):
        items = coop.ThreadData(4)
        coop.load(coop.this_block(), src, items)
        out = coop.adjacent_difference(coop.this_block(), items, direction=direction, valid_items=valid)
        coop.store(coop.this_block(), dst, out)

    src = np.arange(512, dtype=np.int32) * 3 + 1
    dst = np.zeros_like(src)
    kernel[1, 128](src, dst, np.int32(512))   # in range: runs
    cuda.synchronize()
    assert (dst[1:-1] == (3 if direction == "left" else -3)).all()
    print("IN_RANGE_OK", flush=True)
    kernel[1, 128](src, dst, np.int32(int(sys.argv[2])))
    cuda.synchronize()
    print("NO_TRAP", flush=True)
""")


@pytest.mark.parametrize("case", [("left", 513), ("left", -1), ("right", 600), ("right", -2)])
def test_out_of_range_adjacent_difference_valid_items_traps(case):
    """SPEC 8.12: 0 <= valid_items <= T*K; outside it traps before narrowing to CUB's int."""
    assert_traps(ADJACENT_CHILD, *case)


RUN_LENGTH_CHILD = textwrap.dedent("""
    import sys
    import numpy as np
    import cuda.coop.numba_mlir as numba_coop  # noqa: F401  (the alias keeps `cuda` numba-cuda-mlir's)
    from cuda import coop
    from numba_cuda_mlir import cuda

    case = sys.argv[1]
    length_dtype = np.int64

    @cuda.jit
    def window(values, lengths, dst, offset):
        block = coop.this_block()
        v = coop.ThreadData(2)
        n = coop.ThreadData(2)
        coop.load(block, values, v)
        coop.load(block, lengths, n)
        out = coop.run_length_decode(block, v, n, decoded_items_per_thread=2, decoded_window_offset=offset)
        coop.store(block, dst, out)

    @cuda.jit
    def bulk(values, lengths, dst, offset):
        block = coop.this_block()
        v = coop.ThreadData(2)
        n = coop.ThreadData(2)
        coop.load(block, values, v)
        coop.load(block, lengths, n)
        coop.run_length_decode_into(block, v, n, dst, decoded_items_per_thread=2, destination_offset=offset)

    values = np.arange(256, dtype=np.int32) + 1
    good = np.zeros(256, length_dtype)
    good[:100] = 2
    dst = np.zeros(1024, np.int32)
    window[1, 128](values, good, dst, 0)   # a valid stream: runs
    bulk[1, 128](values, good, dst, 0)
    cuda.synchronize()
    assert (dst[:200] == np.repeat(values[:100], 2)).all()
    print("IN_RANGE_OK", flush=True)
    bad, offset, kernel = good.copy(), 0, window
    if case == "negative_length":
        bad[7] = -1
    elif case == "zero_then_positive_in_a_thread":
        bad[101] = 3                  # member 50 holds runs 100 (zero) and 101
    elif case == "zero_then_positive_across_members":
        bad[102] = 3                  # member 50's last run (101) is zero, member 51's first positive
    elif case == "total_beyond_uint32":
        bad[:] = 0; bad[0] = 2**31; bad[1] = 2**31
    elif case == "single_length_beyond_uint32":
        bad[:] = 0; bad[0] = 2**32
    elif case == "negative_window_offset":
        offset = -1
    elif case == "negative_destination_offset":
        offset, kernel = -1, bulk
    elif case == "destination_too_short":
        offset, kernel = 1024 - 199, bulk
    kernel[1, 128](values, bad, dst, offset)
    cuda.synchronize()
    print("NO_TRAP", flush=True)
""")


@pytest.mark.parametrize("case", ["negative_length", "zero_then_positive_in_a_thread",
                                  "zero_then_positive_across_members", "total_beyond_uint32",
                                  "single_length_beyond_uint32", "negative_window_offset",
                                  "negative_destination_offset", "destination_too_short"])
def test_malformed_run_length_streams_and_destinations_trap(case):
    """SPEC 8.15 / 10.2: stream rules, a negative offset and a short destination trap."""
    assert_traps(RUN_LENGTH_CHILD, case)


BROADCAST_CHILD = textwrap.dedent("""
    import sys
    import numpy as np
    import cuda.coop.numba_mlir as numba_coop  # noqa: F401  (the alias keeps `cuda` numba-cuda-mlir's)
    from cuda import coop
    from numba_cuda_mlir import cuda

    width = int(sys.argv[1])  # 0: the block, 32: a warp, else logical warps (exhaustive=False)

    @cuda.jit
    def block_kernel(src, dst, rank):
        items = coop.ThreadData(4)
        coop.load(coop.this_block(), src, items)
        coop.store(coop.this_block(), dst, coop.broadcast(coop.this_block(), items, src_rank=rank))

    @cuda.jit
    def warp_kernel(src, dst, rank):
        items = coop.ThreadData(4)
        coop.load(coop.this_block(), src, items)
        coop.store(coop.this_block(), dst, coop.broadcast(coop.this_warp(), items, src_rank=rank))

    @cuda.jit
    def lanes_kernel(src, dst, rank):
        items = coop.ThreadData(4)
        coop.load(coop.this_block(), src, items)
        lanes = coop.this_warp().group_by(width, exhaustive=False)
        if lanes.is_member():
            moved = coop.broadcast(lanes, items, src_rank=rank)
            for i in range(4):
                items[i] = moved[i]
        coop.store(coop.this_block(), dst, items)

    kernel = {0: block_kernel, 32: warp_kernel}.get(width, lanes_kernel)
    src = np.arange(512, dtype=np.int32) + 1
    dst = np.zeros_like(src)
    kernel[1, 128](src, dst, np.int32(0))   # in range: runs
    cuda.synchronize()
    assert (dst != 0).all()
    print("IN_RANGE_OK", flush=True)
    kernel[1, 128](src, dst, np.int32(int(sys.argv[2])))
    cuda.synchronize()
    print("NO_TRAP", flush=True)
""")


@pytest.mark.parametrize("case", [(0, 128), (0, -1), (32, 32), (12, 12), (12, -3)])
def test_out_of_range_broadcast_src_rank_traps(case):
    """SPEC 8.19: a runtime src_rank outside 0 ... G-1 traps (the block, a warp, a logical warp of 12 lanes)."""
    assert_traps(BROADCAST_CHILD, *case)


PARTIAL_CHILD = textwrap.dedent("""
    import sys
    import numpy as np
    from numba_cuda_mlir import cuda
    import cuda.coop.numba_mlir
    from cuda import coop
    from numba_cuda_mlir import cuda

    ALGORITHM = sys.argv[1]  # a global: a compile-time string in the kernel

    @cuda.jit
    def histogram(src, dst, valid):
        items = coop.ThreadData(4)
        coop.load(coop.this_block(), src, items)
        counts = coop.histogram(coop.this_block(), items, bins=128, algorithm=ALGORITHM, valid_items=valid)
        coop.store(coop.this_block(), dst, counts, algorithm="striped")

    @cuda.jit
    def radix(src, dst, valid):
        keys = coop.ThreadData(4)
        coop.load(coop.this_block(), src, keys)
        out = coop.radix_sort_keys(coop.this_block(), keys, valid_items=valid, oob_default=-1)
        coop.store(coop.this_block(), dst, out)

    kernel = radix if sys.argv[1] == "radix" else histogram
    src = (np.arange(512, dtype=np.int32) % 128)[::-1].copy()
    dst = np.zeros(512 if kernel is radix else 128, np.int32)
    kernel[1, 128](src, dst, np.int32(512))   # in range: runs
    cuda.synchronize()
    assert (dst == (np.sort(src) if kernel is radix else np.full(128, 4))).all()
    print("IN_RANGE_OK", flush=True)
    kernel[1, 128](src, dst, np.int32(int(sys.argv[2])))
    cuda.synchronize()
    print("NO_TRAP", flush=True)
""")


@pytest.mark.parametrize("case", [("atomic", 513), ("sort", -1), ("radix", 513), ("radix", -1)])
def test_out_of_range_partial_tile_valid_items_traps(case):
    """SPEC 8.23: histogram's and radix sort's runtime valid_items outside 0 ... T*K traps."""
    assert_traps(PARTIAL_CHILD, *case)



WARP_TOPK_CHILD = textwrap.dedent("""
    import sys
    import numpy as np
    import cuda.coop.numba_mlir as numba_coop  # noqa: F401  (the alias keeps `cuda` numba-cuda-mlir's)
    from cuda import coop
    from numba_cuda_mlir import cuda

    width, items_per_thread = int(sys.argv[1]), int(sys.argv[2])  # one key per lane shuffles, more merge in scratch

    @cuda.jit
    def kernel(src, dst, kk, valid):
        group = coop.this_warp() if width == 32 else coop.this_warp().group_by(width)
        keys = coop.ThreadData(items_per_thread)
        coop.load(coop.this_block(), src, keys)
        coop.store(coop.this_block(), dst, coop.topk_min_keys(group, keys, k=kk, valid_items=valid))

    tile = width * items_per_thread
    src = (np.arange(128 * items_per_thread, dtype=np.int32)[::-1] % 1000).copy()
    dst = np.zeros_like(src)
    kernel[1, 128](src, dst, np.int32(tile), np.int32(tile))   # each group's own whole tile: runs, and sorts it
    cuda.synchronize()
    assert (np.sort(dst.reshape(-1, tile), axis=1) == np.sort(src.reshape(-1, tile), axis=1)).all()
    print("IN_RANGE_OK", flush=True)
    kernel[1, 128](src, dst, np.int32(int(sys.argv[3])), np.int32(int(sys.argv[4])))
    cuda.synchronize()
    print("NO_TRAP", flush=True)
""")


@pytest.mark.parametrize("case", [(32, 1, 33, 32), (32, 1, 2, 33), (8, 4, -1, 32), (8, 4, 4, 33), (1, 2, 2, -1)])
def test_out_of_range_warp_topk_controls_trap(case):
    """SPEC 8.22: runtime k and valid_items outside 0 ... G*K of the group's own tile trap (a warp of one key per lane,
    logical warps of 8 and 1 lanes with several)."""
    assert_traps(WARP_TOPK_CHILD, *case)


SELECT_CHILD = textwrap.dedent("""
    import sys
    import numpy as np
    import cuda.coop.numba_mlir as numba_coop  # noqa: F401  (the alias keeps `cuda` numba-cuda-mlir's)
    from cuda import coop
    from numba_cuda_mlir import cuda

    width = int(sys.argv[1])  # 0: the block, 32: a warp, else logical warps of that width

    @cuda.jit
    def block_kernel(src, dst, valid):
        items = coop.ThreadData(4)
        coop.load(coop.this_block(), src, items)
        moved, count = coop.partition(coop.this_block(), items, items, valid_items=valid)
        coop.store(coop.this_block(), dst, moved)

    @cuda.jit
    def warp_kernel(src, dst, valid):
        items = coop.ThreadData(4)
        coop.load(coop.this_block(), src, items)
        moved, count = coop.partition(coop.this_warp(), items, items, valid_items=valid)
        coop.store(coop.this_block(), dst, moved)

    @cuda.jit
    def lanes_kernel(src, dst, valid):
        items = coop.ThreadData(4)
        coop.load(coop.this_block(), src, items)
        moved, count = coop.partition(coop.this_warp().group_by(width), items, items, valid_items=valid)
        coop.store(coop.this_block(), dst, moved)

    kernel = {0: block_kernel, 32: warp_kernel}.get(width, lanes_kernel)
    src = np.arange(512, dtype=np.int32) + 1
    dst = np.zeros_like(src)
    kernel[1, 128](src, dst, np.int32(0))   # in range (nothing valid: the input comes back): runs
    cuda.synchronize()
    assert (dst == src).all()
    print("IN_RANGE_OK", flush=True)
    kernel[1, 128](src, dst, np.int32(int(sys.argv[2])))
    cuda.synchronize()
    print("NO_TRAP", flush=True)
""")


@pytest.mark.parametrize("case", [(0, 513), (0, -1), (32, 129), (8, 33), (8, -2)])
def test_out_of_range_select_valid_items_traps(case):
    """SPEC 8.20 / 10.2: a runtime valid_items outside 0 ... G*K traps (the block, a warp, logical warps of 8)."""
    assert_traps(SELECT_CHILD, *case)


SEGMENTED_CHILD = textwrap.dedent("""
    import sys
    import numpy as np
    import cuda.coop.numba_mlir as numba_coop  # noqa: F401  (the alias keeps `cuda` numba-cuda-mlir's)
    from cuda import coop
    from numba_cuda_mlir import cuda

    width = int(sys.argv[1])  # 0: the block (payloads, compacted), 32: a warp, 8: logical warps (scalars)

    @cuda.jit
    def block_kernel(src, dst, valid):
        items = coop.ThreadData(4)
        coop.load(coop.this_block(), src, items)
        totals, count = coop.sum(coop.this_block(), items, head_flags=items, compact=True, valid_items=valid)
        coop.store(coop.this_block(), dst, totals)

    @cuda.jit
    def lanes_kernel(src, dst, valid):
        items = coop.ThreadData(4)
        coop.load(coop.this_block(), src, items)
        items[0] = coop.sum(coop.this_warp().group_by(width), items[0], head_flags=items[1], valid_items=valid)
        coop.store(coop.this_block(), dst, items)

    kernel = block_kernel if width == 0 else lanes_kernel
    src = np.arange(512, dtype=np.int32) + 1
    dst = np.zeros_like(src)
    kernel[1, 128](src, dst, np.int32(1))   # in range: runs
    cuda.synchronize()
    print("IN_RANGE_OK", flush=True)
    kernel[1, 128](src, dst, np.int32(int(sys.argv[2])))
    cuda.synchronize()
    print("NO_TRAP", flush=True)
""")


@pytest.mark.parametrize("case", [(0, 513), (0, -1), (32, 33), (8, 9), (8, -5)])
def test_out_of_range_segmented_valid_items_traps(case):
    """SPEC 8.21 / 10.2: a runtime valid_items outside 0 ... G*K of a segmented sum traps (the block, a warp,
    logical warps of 8)."""
    assert_traps(SEGMENTED_CHILD, *case)


REDUCE_STORE_CHILD = textwrap.dedent("""
    import sys
    import numpy as np
    from numba_cuda_mlir import cuda
    import cuda.coop.numba_mlir
    from cuda import coop
    from numba_cuda_mlir import cuda

    @cuda.jit
    def block_sum(src, dst, valid):
        block = coop.this_block()
        total = coop.sum(block, src[block.rank()], valid_items=valid)
        if block.rank() == 0:
            dst[0] = total

    @cuda.jit
    def block_store(src, dst, valid):
        items = coop.ThreadData(4)
        coop.load(coop.this_block(), src, items)
        coop.store(coop.this_block(), dst, items, valid_items=valid)

    which, valid = sys.argv[1].split(":")
    src = np.arange(512, dtype=np.int32) + 1
    dst = np.zeros_like(src)
    if which == "sum":
        block_sum[1, 128](src, dst, np.int32(128))   # in range: runs
        cuda.synchronize()
        assert dst[0] == src[:128].sum()
        kernel = block_sum
    else:
        block_store[1, 128](src, dst, np.int32(512))   # in range: runs
        cuda.synchronize()
        assert (dst == src).all()
        kernel = block_store
    print("IN_RANGE_OK", flush=True)
    kernel[1, 128](src, dst, np.int32(int(valid)))
    cuda.synchronize()
    print("NO_TRAP", flush=True)
""")


@pytest.mark.parametrize("case", ["sum:129", "sum:0", "sum:-1", "store:513", "store:-1"])
def test_out_of_range_reduce_and_store_valid_items_trap(case):
    """SPEC 2.5 / 10.2's trap sites: a block reduction's valid_items outside 1 ... G and a block store's outside
    0 ... T*K (their traps were built but had no GPU test)."""
    assert_traps(REDUCE_STORE_CHILD, case)
