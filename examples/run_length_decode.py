"""Run-length decode: expand each block's runs into the stream they encode.

Every block holds ``threads * R`` runs, blocked (slot ``i`` of thread ``t`` is run ``t*R + i``):
a value and a length each. Lengths are positive and then zero padding; here the runs of the odd
blocks end in padding, so their streams are shorter. The kernel uses both forms:

* ``run_length_decode`` decodes one window of ``threads * D`` items (here the first one); thread
  ``t`` receives items ``t*D ... t*D + D - 1`` of the stream, and positions past its end are 0.
* ``run_length_decode_into`` decodes the whole stream into a slice of ``stream`` that starts at
  ``destination_offset`` and returns its length (``uint32``) to every thread.

With a GPU this launches the kernel and checks it against ``np.repeat``; without one it builds the
kernel for sm_90 (through NVRTC, libNVVM and nvJitLink, no driver needed) and says that it could
not launch.
"""
import time

import numpy as np
from numba_cuda_mlir import cuda  # noqa: I001  (the compiler first, then cuda.coop)
import cuda.coop.numba_mlir as numba_coop  # the backend; `as` keeps the name `cuda` bound to numba-cuda-mlir's
from cuda import coop  # the common API used inside kernels

RUNS_PER_THREAD = 2  # R
DECODED_PER_THREAD = 4  # D
MAX_LENGTH = 5


@cuda.jit
def expand_runs(run_values, run_lengths, window, stream, totals):
    block = coop.this_block()
    runs_base = np.int64(cuda.blockIdx.x) * cuda.blockDim.x * RUNS_PER_THREAD
    values = coop.ThreadData(RUNS_PER_THREAD)
    lengths = coop.ThreadData(RUNS_PER_THREAD)
    coop.load(block, run_values, values, offset=runs_base)
    coop.load(block, run_lengths, lengths, offset=runs_base)

    first_window = coop.run_length_decode(block, values, lengths, decoded_items_per_thread=DECODED_PER_THREAD)
    coop.store(block, window, first_window, offset=np.int64(cuda.blockIdx.x) * cuda.blockDim.x * DECODED_PER_THREAD)

    capacity = np.int64(cuda.blockDim.x) * RUNS_PER_THREAD * MAX_LENGTH  # the longest stream a block can hold
    total = coop.run_length_decode_into(block, values, lengths, stream, decoded_items_per_thread=DECODED_PER_THREAD,
                                        destination_offset=np.int64(cuda.blockIdx.x) * capacity)
    if block.rank() == 0:
        totals[cuda.blockIdx.x] = total


def main() -> None:
    threads, blocks = 128, 16
    runs = threads * RUNS_PER_THREAD
    rng = np.random.default_rng(0)
    values = rng.integers(-1000, 1000, runs * blocks).astype(np.int32)
    lengths = rng.integers(1, MAX_LENGTH + 1, runs * blocks).astype(np.int32)
    for b in range(1, blocks, 2):  # odd blocks: the last b*8 runs are zero padding
        lengths[(b + 1) * runs - b * 8:(b + 1) * runs] = 0
    capacity = runs * MAX_LENGTH
    window = np.full(blocks * threads * DECODED_PER_THREAD, -1, np.int32)
    stream = np.full(blocks * capacity, -1, np.int32)
    totals = np.zeros(blocks, np.uint32)
    args = (values, lengths, window, stream, totals)
    start = time.perf_counter()
    built = numba_coop.compile_kernel(expand_runs, args, block=threads, grid=blocks)
    print(f"built expand_runs for sm_90 in {time.perf_counter() - start:.2f} s: {built.registers} registers, "
          f"{built.shared_memory_bytes} B shared, {built.local_memory_bytes} B local, {len(built.cubin)} B cubin")
    try:
        expand_runs[blocks, threads](*args)
        cuda.synchronize()
    except Exception as exc:  # no driver or no GPU on this machine
        print(f"could not launch on a GPU here ({type(exc).__name__}: {str(exc).splitlines()[0][:120]}); "
              "the kernel was built but not run")
        return
    width = threads * DECODED_PER_THREAD
    for b in range(blocks):
        decoded = np.repeat(values[b * runs:(b + 1) * runs], lengths[b * runs:(b + 1) * runs])
        assert totals[b] == decoded.size, f"block {b}: total {totals[b]} != {decoded.size}"
        got = stream[b * capacity:(b + 1) * capacity]
        assert np.array_equal(got[:decoded.size], decoded), f"block {b}: decoded stream differs"
        assert np.all(got[decoded.size:] == -1), f"block {b}: wrote past its stream"
        want_window = np.zeros(width, np.int32)
        want_window[:min(width, decoded.size)] = decoded[:width]
        assert np.array_equal(window[b * width:(b + 1) * width], want_window), f"block {b}: first window differs"
    print(f"OK: {blocks} blocks of {runs} runs decoded (first window and whole stream), {int(totals.sum())} items")


if __name__ == "__main__":
    main()
