"""Batched warp reductions: column sums and maxima of small row blocks, with no shared memory.

Every thread holds one row of ``B = 8`` int32 features (a blocked load of 8 items per thread).
The threads form logical warps of ``W = 8`` lanes, and ``coop.reduce_batched`` reduces slot ``b``
of the 8 lanes of each logical warp into batch ``b``: the column sums of that group's 8x8 block of
rows. The result has ``ceil(B/W) = 1`` slot per lane; in the default ``"striped"`` layout lane
``r`` holds batch ``r``, so a one-item block store writes, for each logical warp, its 8 column
results in order.

With a GPU this launches the kernel and checks it against NumPy; without one it builds the kernel
for sm_90 (through NVRTC, libNVVM and nvJitLink, no driver needed) and says that it could not
launch.
"""
import time

import numpy as np
from numba_cuda_mlir import cuda  # noqa: I001  (the compiler first, then cuda.coop)
import cuda.coop.numba_mlir as numba_coop  # the backend; `as` keeps the name `cuda` bound to numba-cuda-mlir's
from cuda import coop  # the common API used inside kernels

FEATURES = 8  # B: slots per thread, one batch each
LANES = 8  # W: lanes per logical warp


@cuda.jit
def column_reductions(rows, sums, maxima):
    block = coop.this_block()
    group = coop.this_warp().group_by(LANES)
    first_thread = np.int64(cuda.blockIdx.x) * cuda.blockDim.x
    row = coop.ThreadData(FEATURES)
    coop.load(block, rows, row, offset=first_thread * FEATURES)  # thread t: row t of the block's rows
    column_sums = coop.reduce_batched(group, row)  # default: sum, striped layout
    column_max = coop.reduce_batched(group, row, binary_op="max")
    coop.store(block, sums, column_sums, offset=first_thread)  # one item per thread
    coop.store(block, maxima, column_max, offset=first_thread)


def main() -> None:
    threads, blocks = 128, 32
    rows = np.random.default_rng(0).integers(-1000, 1000, (threads * blocks, FEATURES), dtype=np.int32)
    sums = np.zeros(threads * blocks, np.int32)
    maxima = np.zeros(threads * blocks, np.int32)
    args = (rows.reshape(-1), sums, maxima)
    start = time.perf_counter()
    built = numba_coop.compile_kernel(column_reductions, args, block=threads, grid=blocks)
    print(f"built column_reductions for sm_90 in {time.perf_counter() - start:.2f} s: {built.registers} registers, "
          f"{built.shared_memory_bytes} B shared, {built.local_memory_bytes} B local, {len(built.cubin)} B cubin")
    try:
        column_reductions[blocks, threads](*args)
        cuda.synchronize()
    except Exception as exc:  # no driver or no GPU on this machine
        print(f"could not launch on a GPU here ({type(exc).__name__}: {str(exc).splitlines()[0][:120]}); "
              "the kernel was built but not run")
        return
    groups = rows.reshape(-1, LANES, FEATURES)  # (logical warps, lanes, features)
    assert np.array_equal(sums.reshape(-1, FEATURES), groups.sum(axis=1, dtype=np.int32)), "column sums differ"
    assert np.array_equal(maxima.reshape(-1, FEATURES), groups.max(axis=1)), "column maxima differ"
    print(f"OK: column sums and maxima of {groups.shape[0]} groups of {LANES} rows x {FEATURES} features")


if __name__ == "__main__":
    main()
