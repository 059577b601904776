"""Copy an array tile by tile with cooperative transpose loads and stores.

With a GPU this launches the kernel and checks the result; without one it builds
the kernel for sm_90 (through NVRTC, libNVVM and nvJitLink, no driver needed) and
says that it could not launch.
"""
import time

import numpy as np
from numba_cuda_mlir import cuda  # noqa: I001  (the compiler first, then cuda.coop)
import cuda.coop.numba_mlir as numba_coop  # the backend; `as` keeps the name `cuda` bound to numba-cuda-mlir's
from cuda import coop  # the common API used inside kernels


@cuda.jit
def copy_tiles(src, dst, items_per_thread):
    block = coop.this_block()
    base = np.int64(cuda.blockIdx.x) * cuda.blockDim.x * items_per_thread
    items = coop.ThreadData(items_per_thread)  # dtype taken from src by the load
    coop.load(block, src, items, algorithm="transpose", offset=base)
    coop.store(block, dst, items, algorithm="transpose", offset=base)


def main() -> None:
    threads, k, blocks = 128, 4, 64
    x = np.random.default_rng(0).integers(-1000, 1000, threads * k * blocks, dtype=np.int32)
    start = time.perf_counter()
    built = numba_coop.compile_kernel(copy_tiles, (x, x, k), block=threads, grid=blocks)
    print(f"built copy_tiles for sm_90 in {time.perf_counter() - start:.2f} s: {built.registers} registers, "
          f"{built.shared_memory_bytes} B shared, {built.local_memory_bytes} B local, {len(built.cubin)} B cubin")
    try:
        out = np.full_like(x, -1)
        copy_tiles[blocks, threads](x, out, k)
        cuda.synchronize()
    except Exception as exc:  # no driver or no GPU on this machine
        print(f"could not launch on a GPU here ({type(exc).__name__}: {str(exc).splitlines()[0][:120]}); "
              "the kernel was built but not run")
        return
    assert np.array_equal(out, x), "copy mismatch"
    print(f"ran on the GPU: {x.size} int32 copied correctly")


if __name__ == "__main__":
    main()
