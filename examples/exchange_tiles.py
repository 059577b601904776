"""Exchange: turn a striped payload into a blocked one without touching global memory again.

A striped load is coalesced (neighbouring threads read neighbouring elements), but it leaves
slot ``i`` of thread ``t`` holding tile position ``t + i*T``. Stored directly, such a payload
comes out permuted (``raw``); after ``coop.exchange(..., mode="striped_to_blocked")`` thread
``t`` holds positions ``t*K ... t*K+K-1`` and the direct store is a plain copy (``fixed``).
The same call works on warps and logical warps, which exchange their own tiles.

With a GPU this launches the kernel and checks both outputs against NumPy; without one it builds
the kernel for sm_90 (through NVRTC, libNVVM and nvJitLink, no driver needed) and says that it
could not launch.
"""
import time

import numpy as np
from numba_cuda_mlir import cuda  # noqa: I001  (the compiler first, then cuda.coop)
import cuda.coop.numba_mlir as numba_coop  # the backend; `as` keeps the name `cuda` bound to numba-cuda-mlir's
from cuda import coop  # the common API used inside kernels


@cuda.jit
def striped_to_blocked(src, raw, fixed, items_per_thread):
    block = coop.this_block()
    base = np.int64(cuda.blockIdx.x) * cuda.blockDim.x * items_per_thread
    items = coop.ThreadData(items_per_thread)
    coop.load(block, src, items, algorithm="striped", offset=base)  # slot i of thread t: position t + i*T
    coop.store(block, raw, items, offset=base)  # a direct store expects blocked order: permuted
    blocked = coop.exchange(block, items, mode="striped_to_blocked")  # slot i of thread t: position t*K + i
    coop.store(block, fixed, blocked, offset=base)  # blocked payload, direct store: a copy


def main() -> None:
    threads, k, blocks = 128, 4, 64
    x = np.random.default_rng(0).integers(-1000, 1000, threads * k * blocks, dtype=np.int32)
    raw = np.full_like(x, -1)
    fixed = np.full_like(x, -1)
    start = time.perf_counter()
    built = numba_coop.compile_kernel(striped_to_blocked, (x, raw, fixed, k), block=threads, grid=blocks)
    print(f"built striped_to_blocked for sm_90 in {time.perf_counter() - start:.2f} s: {built.registers} registers, "
          f"{built.shared_memory_bytes} B shared, {built.local_memory_bytes} B local, {len(built.cubin)} B cubin")
    try:
        striped_to_blocked[blocks, threads](x, raw, fixed, k)
        cuda.synchronize()
    except Exception as exc:  # no driver or no GPU on this machine
        print(f"could not launch on a GPU here ({type(exc).__name__}: {str(exc).splitlines()[0][:120]}); "
              "the kernel was built but not run")
        return
    # raw[t*K + i] = tile[t + i*T]: per tile, the (K, T) matrix of the tile, transposed
    permuted = x.reshape(blocks, k, threads).transpose(0, 2, 1).reshape(-1)
    assert np.array_equal(raw, permuted), "the striped payload was not in striped order"
    assert np.array_equal(fixed, x), "striped_to_blocked did not restore the tile"
    print(f"OK: {blocks} tiles of {threads}x{k} int32 exchanged from striped to blocked order")


if __name__ == "__main__":
    main()
