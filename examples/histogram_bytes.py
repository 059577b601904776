"""Histogram: count the 256 byte values of an array, each block counting several tiles.

``coop.histogram`` returns fresh counters for one tile, striped over the block: slot ``i`` of
thread ``t`` holds bin ``t + i*T``. With 128 threads and 256 bins each thread holds
``bins_per_thread=2`` counters. Each block adds the counters of its tiles into its own running
payload and stores it with ``algorithm="striped"``, which writes the bins in order; NumPy then
adds the per-block rows.

With a GPU this launches the kernel and checks it against ``np.bincount``; without one it builds
the kernel for sm_90 (through NVRTC, libNVVM and nvJitLink, no driver needed) and says that it
could not launch.
"""
import time

import numpy as np
from numba_cuda_mlir import cuda  # noqa: I001  (the compiler first, then cuda.coop)
import cuda.coop.numba_mlir as numba_coop  # the backend; `as` keeps the name `cuda` bound to numba-cuda-mlir's
from cuda import coop  # the common API used inside kernels

BINS = 256
BINS_PER_THREAD = 2  # 128 threads * 2 >= 256 bins


@cuda.jit
def byte_histogram(data, counts, tiles_per_block, items_per_thread):
    block = coop.this_block()
    tile_size = np.int64(cuda.blockDim.x) * items_per_thread
    first = np.int64(cuda.blockIdx.x) * tiles_per_block * tile_size
    total = coop.ThreadData(BINS_PER_THREAD, dtype=np.int32)
    for i in range(BINS_PER_THREAD):
        total[i] = np.int32(0)
    for tile in range(tiles_per_block):
        samples = coop.ThreadData(items_per_thread)  # uint8, from data
        coop.load(block, data, samples, algorithm="striped", offset=first + tile * tile_size)  # any order counts
        tile_counts = coop.histogram(block, samples, bins=BINS, bins_per_thread=BINS_PER_THREAD)
        for i in range(BINS_PER_THREAD):
            total[i] = np.int32(total[i] + tile_counts[i])
    coop.store(block, counts, total, algorithm="striped", offset=np.int64(cuda.blockIdx.x) * BINS)


def main() -> None:
    threads, k, blocks, tiles_per_block = 128, 16, 32, 8
    data = np.random.default_rng(0).binomial(255, 0.3, threads * k * tiles_per_block * blocks).astype(np.uint8)
    counts = np.full(blocks * BINS, -1, np.int32)
    args = (data, counts, tiles_per_block, k)
    start = time.perf_counter()
    built = numba_coop.compile_kernel(byte_histogram, args, block=threads, grid=blocks)
    print(f"built byte_histogram for sm_90 in {time.perf_counter() - start:.2f} s: {built.registers} registers, "
          f"{built.shared_memory_bytes} B shared, {built.local_memory_bytes} B local, {len(built.cubin)} B cubin")
    try:
        byte_histogram[blocks, threads](*args)
        cuda.synchronize()
    except Exception as exc:  # no driver or no GPU on this machine
        print(f"could not launch on a GPU here ({type(exc).__name__}: {str(exc).splitlines()[0][:120]}); "
              "the kernel was built but not run")
        return
    per_block = data.reshape(blocks, -1)
    want = np.stack([np.bincount(row, minlength=BINS) for row in per_block]).astype(np.int32)
    assert np.array_equal(counts.reshape(blocks, BINS), want), "per-block counts differ"
    assert counts.reshape(blocks, BINS).sum(axis=0).sum() == data.size
    print(f"OK: {data.size} bytes counted into {BINS} bins by {blocks} blocks, as np.bincount")


if __name__ == "__main__":
    main()
