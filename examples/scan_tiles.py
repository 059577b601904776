"""Prefix sums: an exclusive sum of each block's tile, and a running scan over many tiles.

``scan_tiles`` gives every block its own tile: the block writes the tile's exclusive prefix sum
and the tile's total. ``running_scan`` is one block walking the whole array tile by tile: it
offsets each tile's exclusive sum by the running total of the tiles before it, and adds the
block aggregate (``coop.sum`` of the tile, broadcast to every thread) to that running total,
so the output is the exclusive prefix sum of the whole array.

With a GPU this launches both kernels and checks them against NumPy; without one it builds them
for sm_90 (through NVRTC, libNVVM and nvJitLink, no driver needed) and says that it could not
launch.
"""
import time

import numpy as np
from numba_cuda_mlir import cuda  # noqa: I001  (the compiler first, then cuda.coop)
import cuda.coop.numba_mlir as numba_coop  # the backend; `as` keeps the name `cuda` bound to numba-cuda-mlir's
from cuda import coop  # the common API used inside kernels


@cuda.jit
def scan_tiles(src, dst, tile_totals, items_per_thread):
    block = coop.this_block()
    base = np.int64(cuda.blockIdx.x) * cuda.blockDim.x * items_per_thread
    items = coop.ThreadData(items_per_thread)
    coop.load(block, src, items, algorithm="transpose", offset=base)
    prefix = coop.exclusive_sum(block, items)  # fresh payload, blocked order
    coop.store(block, dst, prefix, algorithm="transpose", offset=base)
    total = coop.sum(block, items)  # the tile's aggregate, in every thread
    if block.rank() == 0:
        tile_totals[cuda.blockIdx.x] = total


@cuda.jit
def running_scan(src, dst, num_tiles, items_per_thread):
    block = coop.this_block()
    tile_size = np.int64(cuda.blockDim.x) * items_per_thread
    running = np.int64(0)  # sum of every tile before this one; the same in every thread
    for tile in range(num_tiles):
        base = tile * tile_size
        items = coop.ThreadData(items_per_thread)
        coop.load(block, src, items, algorithm="transpose", offset=base)
        prefix = coop.exclusive_sum(block, items)
        aggregate = coop.sum(block, items)
        for i in range(items_per_thread):
            prefix[i] = prefix[i] + running
        coop.store(block, dst, prefix, algorithm="transpose", offset=base)
        running += aggregate


def main() -> None:
    threads, k, tiles = 128, 4, 64
    x = np.random.default_rng(0).integers(-1000, 1000, threads * k * tiles).astype(np.int64)
    out = np.zeros_like(x)
    totals = np.zeros(tiles, np.int64)
    running = np.zeros_like(x)
    start = time.perf_counter()
    built = numba_coop.compile_kernel(scan_tiles, (x, out, totals, k), block=threads, grid=tiles)
    built_running = numba_coop.compile_kernel(running_scan, (x, running, tiles, k), block=threads, grid=1)
    print(f"built scan_tiles and running_scan for sm_90 in {time.perf_counter() - start:.2f} s: "
          f"{built.registers} and {built_running.registers} registers, {built.shared_memory_bytes} and "
          f"{built_running.shared_memory_bytes} B shared, {len(built.cubin) + len(built_running.cubin)} B of cubin")
    try:
        scan_tiles[tiles, threads](x, out, totals, k)
        running_scan[1, threads](x, running, tiles, k)
        cuda.synchronize()
    except Exception as exc:  # no driver or no GPU on this machine
        print(f"could not launch on a GPU here ({type(exc).__name__}: {str(exc).splitlines()[0][:120]}); "
              "the kernels were built but not run")
        return
    per_tile = x.reshape(tiles, threads * k)
    exclusive = np.cumsum(per_tile, axis=1) - per_tile
    assert np.array_equal(out.reshape(tiles, -1), exclusive), "tile exclusive sums differ"
    assert np.array_equal(totals, per_tile.sum(axis=1)), "tile totals differ"
    assert np.array_equal(running, np.cumsum(x) - x), "running scan differs"
    print(f"OK: {tiles} tile scans, their totals and a running scan of {x.size} int64 match NumPy")


if __name__ == "__main__":
    main()
