"""Reduce tiles: one total and one maximum per block, and one total per warp.

Each block loads its tile of ``threads * items_per_thread`` int32 values; the block sums it
(result at rank 0 only), finds its maximum (broadcast to every thread) and every physical warp
sums its own part of the tile. With a GPU this launches the kernel and checks the three results
against NumPy; without one it builds the kernel for sm_90 (through NVRTC, libNVVM and nvJitLink,
no driver needed) and says that it could not launch.
"""
import time

import numpy as np
from numba_cuda_mlir import cuda  # noqa: I001  (the compiler first, then cuda.coop)
import cuda.coop.numba_mlir as numba_coop  # the backend; `as` keeps the name `cuda` bound to numba-cuda-mlir's
from cuda import coop  # the common API used inside kernels


@cuda.jit
def tile_reductions(src, block_sums, block_maxima, warp_sums, items_per_thread):
    block = coop.this_block()
    warp = coop.this_warp()
    base = np.int64(cuda.blockIdx.x) * cuda.blockDim.x * items_per_thread
    items = coop.ThreadData(items_per_thread)  # int32, from src
    coop.load(block, src, items, algorithm="vectorize", offset=base)  # blocked: thread t holds t*K ... t*K+K-1

    total = coop.sum(block, items, broadcast=False)  # defined in rank 0 only
    largest = coop.reduce(block, items, binary_op="max")  # broadcast: defined in every thread
    warp_total = coop.sum(warp, items)  # each warp sums its 32*K consecutive values

    if block.rank() == 0:
        block_sums[cuda.blockIdx.x] = total
    if block.rank() == block.count() - 1:  # any thread may read a broadcast result
        block_maxima[cuda.blockIdx.x] = largest
    if warp.rank() == 0:
        warps_per_block = np.int64(warp.count(level="block"))
        warp_sums[np.int64(cuda.blockIdx.x) * warps_per_block + warp.rank(level="block")] = warp_total


def main() -> None:
    threads, k, blocks = 128, 4, 64
    x = np.random.default_rng(0).integers(-1000, 1000, threads * k * blocks, dtype=np.int32)
    block_sums = np.zeros(blocks, np.int32)
    block_maxima = np.zeros(blocks, np.int32)
    warp_sums = np.zeros(blocks * threads // 32, np.int32)
    args = (x, block_sums, block_maxima, warp_sums, k)
    start = time.perf_counter()
    built = numba_coop.compile_kernel(tile_reductions, args, block=threads, grid=blocks)
    print(f"built tile_reductions for sm_90 in {time.perf_counter() - start:.2f} s: {built.registers} registers, "
          f"{built.shared_memory_bytes} B shared, {built.local_memory_bytes} B local, {len(built.cubin)} B cubin")
    try:
        tile_reductions[blocks, threads](*args)
        cuda.synchronize()
    except Exception as exc:  # no driver or no GPU on this machine
        print(f"could not launch on a GPU here ({type(exc).__name__}: {str(exc).splitlines()[0][:120]}); "
              "the kernel was built but not run")
        return
    tiles = x.reshape(blocks, threads * k)
    assert np.array_equal(block_sums, tiles.sum(axis=1, dtype=np.int32)), "block sums differ"
    assert np.array_equal(block_maxima, tiles.max(axis=1)), "block maxima differ"
    assert np.array_equal(warp_sums, x.reshape(-1, 32 * k).sum(axis=1, dtype=np.int32)), "warp sums differ"
    print(f"OK: {blocks} block sums, {blocks} block maxima and {warp_sums.size} warp sums match NumPy")


if __name__ == "__main__":
    main()
