"""Neighbours in a tile: differences across a whole array, run heads and run labels.

``adjacent_difference`` subtracts each item's left neighbour. A tile's first item has its
neighbour in the previous tile, so every block but the first passes that value as
``tile_predecessor_item``; block 0 has none and its first item is copied, which makes the output
``np.diff(x, prepend=0)``. The branch depends only on ``cuda.blockIdx.x``, so every thread of a
block takes the same side, as a block call requires.

``discontinuity(mode="heads")`` flags (int32 1/0) the first item of every run of equal values in
the tile; an inclusive sum of the flags numbers the runs 1, 2, 3, ... within the tile.

With a GPU this launches the kernel and checks it against NumPy; without one it builds the kernel
for sm_90 (through NVRTC, libNVVM and nvJitLink, no driver needed) and says that it could not
launch.
"""
import time

import numpy as np
from numba_cuda_mlir import cuda  # noqa: I001  (the compiler first, then cuda.coop)
import cuda.coop.numba_mlir as numba_coop  # the backend; `as` keeps the name `cuda` bound to numba-cuda-mlir's
from cuda import coop  # the common API used inside kernels


@cuda.jit
def neighbours(src, differences, heads_out, labels_out, items_per_thread):
    block = coop.this_block()
    base = np.int64(cuda.blockIdx.x) * cuda.blockDim.x * items_per_thread
    items = coop.ThreadData(items_per_thread)
    coop.load(block, src, items, algorithm="transpose", offset=base)
    if cuda.blockIdx.x > 0:  # block-uniform condition
        diff = coop.adjacent_difference(block, items, direction="left", tile_predecessor_item=src[base - 1])
    else:
        diff = coop.adjacent_difference(block, items, direction="left")  # first item copied
    coop.store(block, differences, diff, algorithm="transpose", offset=base)
    heads = coop.discontinuity(block, items, mode="heads")  # int32: 1 where x[p] != x[p-1], and at p = 0
    labels = coop.inclusive_sum(block, heads)  # run number of each item, from 1
    coop.store(block, heads_out, heads, algorithm="transpose", offset=base)
    coop.store(block, labels_out, labels, algorithm="transpose", offset=base)


def main() -> None:
    threads, k, blocks = 128, 4, 64
    rng = np.random.default_rng(0)
    n = threads * k * blocks
    x = np.repeat(rng.integers(-50, 50, n), rng.integers(1, 6, n))[:n].astype(np.int32)  # runs of 1-5 items
    differences = np.zeros_like(x)
    heads = np.full(n, -1, np.int32)
    labels = np.full(n, -1, np.int32)
    args = (x, differences, heads, labels, k)
    start = time.perf_counter()
    built = numba_coop.compile_kernel(neighbours, args, block=threads, grid=blocks)
    print(f"built neighbours for sm_90 in {time.perf_counter() - start:.2f} s: {built.registers} registers, "
          f"{built.shared_memory_bytes} B shared, {built.local_memory_bytes} B local, {len(built.cubin)} B cubin")
    try:
        neighbours[blocks, threads](*args)
        cuda.synchronize()
    except Exception as exc:  # no driver or no GPU on this machine
        print(f"could not launch on a GPU here ({type(exc).__name__}: {str(exc).splitlines()[0][:120]}); "
              "the kernel was built but not run")
        return
    assert np.array_equal(differences, np.diff(x, prepend=np.int32(0))), "differences differ"
    tiles = x.reshape(blocks, threads * k)
    want_heads = np.ones_like(tiles)
    want_heads[:, 1:] = tiles[:, 1:] != tiles[:, :-1]
    assert np.array_equal(heads.reshape(blocks, -1), want_heads), "head flags differ"
    assert np.array_equal(labels.reshape(blocks, -1), np.cumsum(want_heads, axis=1)), "run labels differ"
    print(f"OK: differences of {n} int32 across {blocks} tiles, and the head flags and run labels of each tile")


if __name__ == "__main__":
    main()
