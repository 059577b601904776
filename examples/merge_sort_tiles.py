"""Merge sort: sort each block's tile of float32 keys, carrying each key's original index.

The array does not fill the last tile. Every block computes how many of its positions are valid
(``valid_items``); the loads fill the missing keys with ``+inf`` (``oob_default``), a key that
sorts after every valid one, and the stores write only the valid positions. The keys here are
distinct: merge sort is not stable, so with equal keys the order of their values could differ.

With a GPU this launches the kernel and checks it against NumPy; without one it builds the kernel
for sm_90 (through NVRTC, libNVVM and nvJitLink, no driver needed) and says that it could not
launch.
"""
import math
import time

import numpy as np
from numba_cuda_mlir import cuda  # noqa: I001  (the compiler first, then cuda.coop)
import cuda.coop.numba_mlir as numba_coop  # the backend; `as` keeps the name `cuda` bound to numba-cuda-mlir's
from cuda import coop  # the common API used inside kernels


@cuda.jit
def sort_tiles(keys_in, keys_out, order_out, n, items_per_thread):
    block = coop.this_block()
    tile = np.int64(cuda.blockDim.x) * items_per_thread
    base = np.int64(cuda.blockIdx.x) * tile
    valid = min(max(n - base, 0), tile)  # block-uniform: the whole tile except in the last block
    keys = coop.ThreadData(items_per_thread)
    coop.load(block, keys_in, keys, algorithm="transpose", offset=base, valid_items=valid, oob_default=math.inf)
    order = coop.ThreadData(items_per_thread, dtype=np.int32)
    for i in range(items_per_thread):  # the original position of each key (blocked: t*K + i)
        order[i] = np.int32(base + block.rank() * items_per_thread + i)
    sorted_keys, sorted_order = coop.merge_sort_pairs(block, keys, order, valid_items=valid, oob_default=math.inf)
    coop.store(block, keys_out, sorted_keys, algorithm="transpose", offset=base, valid_items=valid)
    coop.store(block, order_out, sorted_order, algorithm="transpose", offset=base, valid_items=valid)


def main() -> None:
    threads, k, blocks = 128, 4, 64
    tile = threads * k
    n = tile * blocks - 300  # the last tile has 212 valid keys
    x = np.random.default_rng(0).permutation(n).astype(np.float32) / 7  # distinct keys
    keys_out = np.full_like(x, np.nan)
    order_out = np.full(n, -1, np.int32)
    args = (x, keys_out, order_out, n, k)
    start = time.perf_counter()
    built = numba_coop.compile_kernel(sort_tiles, args, block=threads, grid=blocks)
    print(f"built sort_tiles for sm_90 in {time.perf_counter() - start:.2f} s: {built.registers} registers, "
          f"{built.shared_memory_bytes} B shared, {built.local_memory_bytes} B local, {len(built.cubin)} B cubin")
    try:
        sort_tiles[blocks, threads](*args)
        cuda.synchronize()
    except Exception as exc:  # no driver or no GPU on this machine
        print(f"could not launch on a GPU here ({type(exc).__name__}: {str(exc).splitlines()[0][:120]}); "
              "the kernel was built but not run")
        return
    for start in range(0, n, tile):
        chunk = x[start:start + tile]
        order = np.argsort(chunk, kind="stable")
        assert np.array_equal(keys_out[start:start + tile], chunk[order]), f"keys of tile {start // tile} differ"
        assert np.array_equal(order_out[start:start + tile], start + order), f"order of tile {start // tile} differs"
    print(f"OK: {n} float32 keys sorted in tiles of {tile} (the last one partial), with their indices")


if __name__ == "__main__":
    main()
