"""Segmented sums: the total of every run of items that starts at a flagged position.

Each block loads its tile of ``threads * items_per_thread`` float32 values and their head flags (1 where a
segment starts, as the rows of a CSR matrix start; the last tile may be partial: ``valid_items``), then

* sums every segment and compacts the sums to the front of the tile (``compact=True``), with their count;
* takes every warp's largest first value per segment of lanes, from one value per lane.

With a GPU this launches the kernel and checks the results against NumPy; without one it builds the kernel for
sm_90 (through NVRTC, libNVVM and nvJitLink, no driver needed) and says that it could not launch.
"""
import time

import numpy as np
from numba_cuda_mlir import cuda  # noqa: I001  (the compiler first, then cuda.coop)
import cuda.coop.numba_mlir as numba_coop  # the backend; `as` keeps the name `cuda` bound to numba-cuda-mlir's
from cuda import coop  # the common API used inside kernels


@cuda.jit
def segment_sums(values, heads, sums, counts, warp_max, n, items_per_thread):
    block = coop.this_block()
    tile = cuda.blockDim.x * items_per_thread
    base = np.int64(cuda.blockIdx.x) * tile
    valid = min(n - base, tile)  # the last tile may be partial
    x = coop.ThreadData(items_per_thread)  # float32, from values
    flags = coop.ThreadData(items_per_thread)  # int32, from heads
    coop.load(block, values, x, offset=base, valid_items=valid, oob_default=0)
    coop.load(block, heads, flags, offset=base, valid_items=valid, oob_default=0)

    # one total per segment (the tile's first position always starts one), compacted, and their count
    totals, count = coop.sum(block, x, head_flags=flags, compact=True, valid_items=valid)
    coop.store(block, sums, totals, offset=base, valid_items=count)
    if block.rank() == 0:
        counts[cuda.blockIdx.x] = count

    # per warp, one value per lane: each segment's largest first value at the lane that starts it
    warp = coop.this_warp()
    largest = coop.reduce(warp, x[0], binary_op="max", head_flags=flags[0])
    warp_max[np.int64(cuda.blockIdx.x) * cuda.blockDim.x + block.rank()] = largest


def main() -> None:
    threads, per_thread, blocks = 128, 4, 64
    tile = threads * per_thread
    n = tile * blocks - 300  # the last tile holds 212 valid values
    rng = np.random.default_rng(0)
    values = rng.integers(-100, 100, n).astype(np.float32)
    heads = (rng.random(n) < 0.05).astype(np.int32)  # a segment starts at about one value in twenty
    sums = np.zeros(tile * blocks, np.float32)
    counts = np.zeros(blocks, np.int32)
    warp_max = np.zeros(threads * blocks, np.float32)
    args = (values, heads, sums, counts, warp_max, n, per_thread)
    start = time.perf_counter()
    built = numba_coop.compile_kernel(segment_sums, args, block=threads, grid=blocks)
    print(f"built segment_sums for sm_90 in {time.perf_counter() - start:.2f} s: {built.registers} registers, "
          f"{built.shared_memory_bytes} B shared, {built.local_memory_bytes} B local, {len(built.cubin)} B cubin")
    try:
        segment_sums[blocks, threads](*args)
        cuda.synchronize()
    except Exception as exc:  # no driver or no GPU on this machine
        print(f"could not launch on a GPU here ({type(exc).__name__}: {str(exc).splitlines()[0][:120]}); "
              "the kernel was built but not run")
        return
    for b in range(blocks):
        lo, hi = b * tile, min((b + 1) * tile, n)
        starts = [p for p in range(hi - lo) if p == 0 or heads[lo + p]]
        want = [values[lo + s:lo + e].sum() for s, e in zip(starts, starts[1:] + [hi - lo])]
        assert counts[b] == len(want), f"tile {b}: {counts[b]} segments, not {len(want)}"
        assert np.array_equal(sums[lo:lo + len(want)], np.asarray(want, np.float32)), f"tile {b}: sums differ"
    padded_values = np.zeros(tile * blocks, np.float32)
    padded_heads = np.zeros(tile * blocks, np.int32)
    padded_values[:n], padded_heads[:n] = values, heads
    firsts, first_heads = padded_values[::per_thread].reshape(-1, 32), padded_heads[::per_thread].reshape(-1, 32)
    for w, (lane_values, lane_heads) in enumerate(zip(firsts, first_heads)):
        starts = [p for p in range(32) if p == 0 or lane_heads[p]]
        for s, e in zip(starts, starts[1:] + [32]):
            assert warp_max[w * 32 + s] == lane_values[s:e].max(), f"warp {w}: segment at lane {s} differs"
    print(f"OK: {counts.sum()} segment sums of {n} values in {blocks} tiles and every warp's segment maxima match "
          "NumPy")


if __name__ == "__main__":
    main()
