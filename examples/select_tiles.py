"""Select and partition: keep the flagged items of each tile, in order (stream compaction).

Each block loads its tile of ``threads * items_per_thread`` key/value pairs (float32 keys, int32 values;
the last tile may be partial: ``valid_items``), then

* selects the pairs whose key is positive, keys and values moved together (a tuple), and writes
  exactly the kept pairs with ``store(..., valid_items=count)``, plus the tile's count;
* partitions every logical warp of 8 lanes' first keys: the positive ones first, then the others,
  each in their order.

With a GPU this launches the kernel and checks the results against NumPy; without one it builds the
kernel for sm_90 (through NVRTC, libNVVM and nvJitLink, no driver needed) and says that it could not
launch.
"""
import time

import numpy as np
from numba_cuda_mlir import cuda  # noqa: I001  (the compiler first, then cuda.coop)
import cuda.coop.numba_mlir as numba_coop  # the backend; `as` keeps the name `cuda` bound to numba-cuda-mlir's
from cuda import coop  # the common API used inside kernels

LANES = 8


@cuda.jit
def keep_positive(keys, values, kept_keys, kept_values, counts, parted, n, items_per_thread):
    block = coop.this_block()
    tile = cuda.blockDim.x * items_per_thread
    base = np.int64(cuda.blockIdx.x) * tile
    valid = min(n - base, tile)  # the last tile may be partial
    k = coop.ThreadData(items_per_thread)  # float32, from keys
    v = coop.ThreadData(items_per_thread)  # int32, from values
    flags = coop.ThreadData(items_per_thread, np.int32)
    coop.load(block, keys, k, offset=base, valid_items=valid, oob_default=0)
    coop.load(block, values, v, offset=base, valid_items=valid, oob_default=0)
    for i in range(items_per_thread):
        flags[i] = 1 if k[i] > 0 else 0

    (kk, kv), count = coop.select(block, (k, v), flags, valid_items=valid)
    coop.store(block, kept_keys, kk, offset=base, valid_items=count)  # exactly the kept pairs
    coop.store(block, kept_values, kv, offset=base, valid_items=count)
    if block.rank() == 0:
        counts[cuda.blockIdx.x] = count

    # one key per lane, the positive ones first: a comparison is a boolean flag for scalar items
    first, _ = coop.partition(coop.this_warp().group_by(LANES), k[0], k[0] > 0)
    parted[np.int64(cuda.blockIdx.x) * cuda.blockDim.x + block.rank()] = first


def main() -> None:
    threads, per_thread, blocks = 128, 4, 64
    tile = threads * per_thread
    n = tile * blocks - 100  # the last tile holds 412 valid pairs
    rng = np.random.default_rng(0)
    keys = rng.integers(-1000, 1000, n).astype(np.float32)
    values = np.arange(n, dtype=np.int32)
    kept_keys = np.zeros(tile * blocks, np.float32)
    kept_values = np.zeros(tile * blocks, np.int32)
    counts = np.zeros(blocks, np.int32)
    parted = np.zeros(threads * blocks, np.float32)
    args = (keys, values, kept_keys, kept_values, counts, parted, n, per_thread)
    start = time.perf_counter()
    built = numba_coop.compile_kernel(keep_positive, args, block=threads, grid=blocks)
    print(f"built keep_positive for sm_90 in {time.perf_counter() - start:.2f} s: {built.registers} registers, "
          f"{built.shared_memory_bytes} B shared, {built.local_memory_bytes} B local, {len(built.cubin)} B cubin")
    try:
        keep_positive[blocks, threads](*args)
        cuda.synchronize()
    except Exception as exc:  # no driver or no GPU on this machine
        print(f"could not launch on a GPU here ({type(exc).__name__}: {str(exc).splitlines()[0][:120]}); "
              "the kernel was built but not run")
        return
    for b in range(blocks):
        lo, hi = b * tile, min((b + 1) * tile, n)
        keep = keys[lo:hi] > 0
        assert counts[b] == keep.sum(), f"tile {b}: count {counts[b]} != {keep.sum()}"
        assert np.array_equal(kept_keys[lo:lo + counts[b]], keys[lo:hi][keep]), f"tile {b}: kept keys differ"
        assert np.array_equal(kept_values[lo:lo + counts[b]], values[lo:hi][keep]), f"tile {b}: kept values differ"
    padded = np.zeros(tile * blocks, np.float32)
    padded[:n] = keys
    firsts = padded.reshape(-1, per_thread)[:, 0].reshape(-1, LANES)  # each group's lanes' first keys
    want = np.concatenate([np.concatenate([g[g > 0], g[g <= 0]]) for g in firsts])
    assert np.array_equal(parted, want), "partitioned first keys differ"
    print(f"OK: {counts.sum()} kept pairs of {n} in {blocks} tiles and {blocks * threads // LANES} partitioned groups "
          "match NumPy")


if __name__ == "__main__":
    main()
