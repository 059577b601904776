"""Top-k: the 16 largest scores of each block's tile, with the index of each.

``topk_max_pairs`` leaves the ``k`` selected keys, each with its value, in the first ``k`` blocked
positions of its results, in no particular order; the rest of the tile is unspecified. Here the
first ``k`` positions are the first ``k // K`` threads' slots, which thread 0 ... ``k // K - 1``
write out. The scores are distinct, so the selection is unique.

With a GPU this launches the kernel and checks it against NumPy; without one it builds the kernel
for sm_90 (through NVRTC, libNVVM and nvJitLink, no driver needed) and says that it could not
launch.
"""
import time

import numpy as np
from numba_cuda_mlir import cuda  # noqa: I001  (the compiler first, then cuda.coop)
import cuda.coop.numba_mlir as numba_coop  # the backend; `as` keeps the name `cuda` bound to numba-cuda-mlir's
from cuda import coop  # the common API used inside kernels

TOP = 16  # a module-level constant is a compile-time value; a runtime block-uniform k works too


@cuda.jit
def top_scores(scores, best_scores, best_indices, items_per_thread):
    block = coop.this_block()
    base = np.int64(cuda.blockIdx.x) * cuda.blockDim.x * items_per_thread
    keys = coop.ThreadData(items_per_thread)
    coop.load(block, scores, keys, algorithm="transpose", offset=base)
    index = coop.ThreadData(items_per_thread, dtype=np.int64)
    for i in range(items_per_thread):
        index[i] = base + block.rank() * items_per_thread + i
    top_keys, top_index = coop.topk_max_pairs(block, keys, index, k=TOP)
    # blocked order: position p is slot p % K of thread p // K
    for i in range(items_per_thread):
        p = np.int64(block.rank()) * items_per_thread + i
        if p < TOP:
            best_scores[np.int64(cuda.blockIdx.x) * TOP + p] = top_keys[i]
            best_indices[np.int64(cuda.blockIdx.x) * TOP + p] = top_index[i]


def main() -> None:
    threads, k, blocks = 128, 4, 64
    tile = threads * k
    scores = (np.random.default_rng(0).permutation(tile * blocks) - 9000).astype(np.float32)  # distinct
    best_scores = np.full(blocks * TOP, np.nan, np.float32)
    best_indices = np.full(blocks * TOP, -1, np.int64)
    args = (scores, best_scores, best_indices, k)
    start = time.perf_counter()
    built = numba_coop.compile_kernel(top_scores, args, block=threads, grid=blocks)
    print(f"built top_scores for sm_90 in {time.perf_counter() - start:.2f} s: {built.registers} registers, "
          f"{built.shared_memory_bytes} B shared, {built.local_memory_bytes} B local, {len(built.cubin)} B cubin")
    try:
        top_scores[blocks, threads](*args)
        cuda.synchronize()
    except Exception as exc:  # no driver or no GPU on this machine
        print(f"could not launch on a GPU here ({type(exc).__name__}: {str(exc).splitlines()[0][:120]}); "
              "the kernel was built but not run")
        return
    for b in range(blocks):
        got_scores = best_scores[b * TOP:(b + 1) * TOP]
        got_indices = best_indices[b * TOP:(b + 1) * TOP]
        want = np.sort(scores[b * tile:(b + 1) * tile])[-TOP:]
        assert np.array_equal(np.sort(got_scores), want), f"tile {b}: wrong scores selected"
        assert np.array_equal(scores[got_indices], got_scores), f"tile {b}: an index does not match its score"
    print(f"OK: the {TOP} largest of {tile} scores, with their indices, in each of {blocks} tiles")


if __name__ == "__main__":
    main()
