"""Broadcast: every thread of a group receives one member's value.

Each block loads its tile of ``threads * items_per_thread`` float32 values (blocked: thread t
holds items t*K ... t*K+K-1), then

* rebases the tile on its first value: thread 0's first item, broadcast to the whole block;
* gives every logical warp of 8 lanes its last lane's items and that lane's first rebased item,
  in one call over a tuple (a payload and a scalar travel side by side).

With a GPU this launches the kernel and checks both results against NumPy; without one it builds
the kernel for sm_90 (through NVRTC, libNVVM and nvJitLink, no driver needed) and says that it
could not launch.
"""
import time

import numpy as np
from numba_cuda_mlir import cuda  # noqa: I001  (the compiler first, then cuda.coop)
import cuda.coop.numba_mlir as numba_coop  # the backend; `as` keeps the name `cuda` bound to numba-cuda-mlir's
from cuda import coop  # the common API used inside kernels

LANES = 8


@cuda.jit
def rebase_and_spread(src, rebased, spread, firsts, items_per_thread):
    block = coop.this_block()
    base = np.int64(cuda.blockIdx.x) * cuda.blockDim.x * items_per_thread
    items = coop.ThreadData(items_per_thread)  # float32, from src
    coop.load(block, src, items, offset=base)

    origin = coop.broadcast(block, items[0])  # src_rank=0: thread 0's first item, in every thread
    for i in range(items_per_thread):
        items[i] = items[i] - origin
    coop.store(block, rebased, items, offset=base)

    lanes = coop.this_warp().group_by(LANES)
    # a tuple: lane 7's payload and its first item, each member travelling as itself
    last_items, last_first = coop.broadcast(lanes, (items, items[0]), src_rank=LANES - 1)
    coop.store(block, spread, last_items, offset=base)
    firsts[np.int64(cuda.blockIdx.x) * cuda.blockDim.x + block.rank()] = last_first


def main() -> None:
    threads, k, blocks = 128, 4, 64
    x = np.random.default_rng(0).integers(-1000, 1000, threads * k * blocks).astype(np.float32)
    rebased = np.zeros_like(x)
    spread = np.zeros_like(x)
    firsts = np.zeros(threads * blocks, np.float32)
    args = (x, rebased, spread, firsts, k)
    start = time.perf_counter()
    built = numba_coop.compile_kernel(rebase_and_spread, args, block=threads, grid=blocks)
    print(f"built rebase_and_spread for sm_90 in {time.perf_counter() - start:.2f} s: {built.registers} registers, "
          f"{built.shared_memory_bytes} B shared, {built.local_memory_bytes} B local, {len(built.cubin)} B cubin")
    try:
        rebase_and_spread[blocks, threads](*args)
        cuda.synchronize()
    except Exception as exc:  # no driver or no GPU on this machine
        print(f"could not launch on a GPU here ({type(exc).__name__}: {str(exc).splitlines()[0][:120]}); "
              "the kernel was built but not run")
        return
    tiles = x.reshape(blocks, threads * k)
    want = (tiles - tiles[:, :1]).reshape(blocks, threads, k)
    assert np.array_equal(rebased, want.reshape(-1)), "rebased tiles differ"
    last = want.reshape(blocks, threads // LANES, LANES, k)[:, :, LANES - 1:, :]  # each group's last lane
    assert np.array_equal(spread, np.broadcast_to(last, (blocks, threads // LANES, LANES, k)).reshape(-1)), \
        "spread items differ"
    assert np.array_equal(firsts, np.broadcast_to(last[..., 0], (blocks, threads // LANES, LANES)).reshape(-1)), \
        "spread first items differ"
    print(f"OK: {blocks} rebased tiles and {blocks * threads // LANES} groups' last lanes match NumPy")


if __name__ == "__main__":
    main()
