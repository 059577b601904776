"""Radix sort: a stable sort of each block's tile of int32 keys, and a sort by one byte of the key.

``radix_sort_pairs`` carries each key's original index with it; the sort is stable, so equal keys
keep their input order and the result matches NumPy's stable argsort exactly, duplicates included.
A second call sorts the same keys by bits ``[0, 8)`` only (``begin_bit`` / ``end_bit``): keys with
the same low byte keep their input order (for signed keys the sign bit is flipped first, which
changes only the top byte).

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
def radix_sort_tiles(keys_in, keys_out, order_out, by_low_byte, items_per_thread):
    block = coop.this_block()
    base = np.int64(cuda.blockIdx.x) * cuda.blockDim.x * items_per_thread
    keys = coop.ThreadData(items_per_thread)
    coop.load(block, keys_in, keys, algorithm="transpose", offset=base)
    order = coop.ThreadData(items_per_thread, dtype=np.int32)
    for i in range(items_per_thread):
        order[i] = np.int32(block.rank() * items_per_thread + i)  # position in the tile
    sorted_keys, sorted_order = coop.radix_sort_pairs(block, keys, order)
    coop.store(block, keys_out, sorted_keys, algorithm="transpose", offset=base)
    coop.store(block, order_out, sorted_order, algorithm="transpose", offset=base)
    low_byte_order = coop.radix_sort_keys(block, keys, begin_bit=0, end_bit=8)  # keys is unchanged
    coop.store(block, by_low_byte, low_byte_order, algorithm="transpose", offset=base)


def main() -> None:
    threads, k, blocks = 128, 4, 64
    tile = threads * k
    x = np.random.default_rng(0).integers(-5000, 5000, tile * blocks, dtype=np.int32)  # many duplicates
    keys_out = np.zeros_like(x)
    order_out = np.full(x.size, -1, np.int32)
    by_low_byte = np.zeros_like(x)
    args = (x, keys_out, order_out, by_low_byte, k)
    start = time.perf_counter()
    built = numba_coop.compile_kernel(radix_sort_tiles, args, block=threads, grid=blocks)
    print(f"built radix_sort_tiles for sm_90 in {time.perf_counter() - start:.2f} s: {built.registers} registers, "
          f"{built.shared_memory_bytes} B shared, {built.local_memory_bytes} B local, {len(built.cubin)} B cubin")
    try:
        radix_sort_tiles[blocks, threads](*args)
        cuda.synchronize()
    except Exception as exc:  # no driver or no GPU on this machine
        print(f"could not launch on a GPU here ({type(exc).__name__}: {str(exc).splitlines()[0][:120]}); "
              "the kernel was built but not run")
        return
    for b, chunk in enumerate(x.reshape(blocks, tile)):
        order = np.argsort(chunk, kind="stable")
        got = slice(b * tile, (b + 1) * tile)
        assert np.array_equal(keys_out[got], chunk[order]), f"keys of tile {b} differ"
        assert np.array_equal(order_out[got], order), f"order of tile {b} differs (not stable?)"
        low = chunk.view(np.uint32) & 0xFF  # bits [0, 8) of the key, unchanged by the sign-bit flip
        assert np.array_equal(by_low_byte[got], chunk[np.argsort(low, kind="stable")]), f"low-byte sort of {b}"
    print(f"OK: {blocks} tiles of {tile} int32 keys sorted stably, with their indices and by their low byte")


if __name__ == "__main__":
    main()
