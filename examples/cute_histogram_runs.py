"""The CuTe DSL backend: count each tile's bytes, then decode the counts into the sorted tile.

In a ``@cute.kernel``, every block takes its tile of 128 threads x 16 bytes and

* counts its 256 byte values with ``coop.histogram``: fresh int32 counters, striped over the block
  (slot ``i`` of thread ``t`` holds bin ``t + i*T``), stored in bin order with ``algorithm="striped"``;
* makes each bin a run (the byte value, its count) in blocked order (``coop.exchange``). A run
  length of zero may only pad the end of the runs (a zero before a positive length traps), so a
  stable radix sort on one bit, "is this bin empty", moves the empty bins last and keeps the others
  in ascending order;
* decodes the runs with ``coop.run_length_decode_into``: the stream is the tile's bytes in
  ascending order (a counting sort), written to the block's slice of ``ordered``; the call returns
  its length.

The numba-cuda-mlir versions are examples/histogram_bytes.py and examples/run_length_decode.py.
With a GPU (and torch, to hand CuTe the device arrays) this launches the kernel and checks it
against NumPy; without one it builds the kernel for sm_90a and says that it could not launch.
"""
import time

import numpy as np

try:
    import torch  # before cutlass: the other order once broke torch's operator registry
except ImportError:
    torch = None
import cutlass  # noqa: E402
import cutlass.cute as cute  # noqa: E402
from cutlass.cute.runtime import make_fake_tensor  # noqa: E402

import cuda.coop.cutlass as cute_coop  # noqa: E402  (registers the backend)
from cuda import coop  # noqa: E402  (the common API used inside kernels)

THREADS, K = 128, 16
TILE = THREADS * K
BINS = 256
BINS_PER_THREAD = 2  # 128 threads * 2 >= 256 bins


@cute.kernel
def count_and_expand(data: cute.Tensor, counts: cute.Tensor, ordered: cute.Tensor, lengths: cute.Tensor):
    tile, _, _ = cute.arch.block_idx()
    block = coop.this_block()
    samples = coop.ThreadData(K, np.uint8)
    coop.load(block, data, samples, algorithm="striped", offset=tile * TILE)  # any order counts
    tile_counts = coop.histogram(block, samples, bins=BINS, bins_per_thread=BINS_PER_THREAD)
    coop.store(block, counts, tile_counts, algorithm="striped", offset=tile * BINS)

    counts_blocked = coop.exchange(block, tile_counts, mode="striped_to_blocked")  # slot i of t: bin t*2 + i
    empty = coop.ThreadData(BINS_PER_THREAD, np.int32)
    packed = coop.ThreadData(BINS_PER_THREAD, np.int32)  # a run: its count above the low 8 bits, its byte in them
    for i in cutlass.range_constexpr(BINS_PER_THREAD):
        empty[i] = 1 - cutlass.min(counts_blocked[i], 1)
        packed[i] = counts_blocked[i] * BINS + cutlass.Int32(block.rank() * BINS_PER_THREAD + i)
    _, runs = coop.radix_sort_pairs(block, empty, packed, end_bit=1)  # stable: the non-empty bins first, in order
    run_values = coop.ThreadData(BINS_PER_THREAD, np.uint8)
    run_lengths = coop.ThreadData(BINS_PER_THREAD, np.int32)
    for i in cutlass.range_constexpr(BINS_PER_THREAD):
        run_values[i] = cutlass.Uint8(runs[i] & (BINS - 1))
        run_lengths[i] = runs[i] >> 8
    decoded = coop.run_length_decode_into(block, run_values, run_lengths, ordered, decoded_items_per_thread=K,
                                          destination_offset=tile * TILE)
    if block.rank() == 0:
        lengths[tile] = cutlass.Int32(decoded)  # a uint32 count


@cute.jit
def launch(data: cute.Tensor, counts: cute.Tensor, ordered: cute.Tensor, lengths: cute.Tensor,
           tiles: cutlass.Constexpr):
    count_and_expand(data, counts, ordered, lengths).launch(grid=(tiles, 1, 1), block=(THREADS, 1, 1))


def main() -> None:
    tiles = 32
    data = np.random.default_rng(0).binomial(255, 0.3, TILE * tiles).astype(np.uint8)
    start = time.perf_counter()
    built = cute_coop.compile_kernel(
        launch, make_fake_tensor(cutlass.Uint8, (data.size,), stride=(1,)),
        make_fake_tensor(cutlass.Int32, (BINS * tiles,), stride=(1,)),
        make_fake_tensor(cutlass.Uint8, (data.size,), stride=(1,)),
        make_fake_tensor(cutlass.Int32, (tiles,), stride=(1,)), tiles)
    print(f"built count_and_expand for sm_90a in {time.perf_counter() - start:.2f} s: {built.registers} registers, "
          f"{built.shared_memory_bytes} B shared, {built.local_memory_bytes} B local, {len(built.cubin)} B of cubin")
    try:
        if torch is None or not torch.cuda.is_available():
            raise RuntimeError("no CUDA device (or no torch to hand the arrays to CuTe)")
        from cutlass.cute.runtime import from_dlpack

        d_data = torch.from_numpy(data).cuda()
        d_counts = torch.full((BINS * tiles,), -1, dtype=torch.int32, device="cuda")
        d_ordered = torch.zeros_like(d_data)
        d_lengths = torch.zeros((tiles,), dtype=torch.int32, device="cuda")
        launch(from_dlpack(d_data), from_dlpack(d_counts), from_dlpack(d_ordered), from_dlpack(d_lengths), tiles)
        torch.cuda.synchronize()
    except Exception as exc:  # no driver or no GPU on this machine
        print(f"could not launch on a GPU here ({type(exc).__name__}: {str(exc).splitlines()[0][:120]}); "
              "the kernel was built but not run")
        return
    rows = data.reshape(tiles, TILE)
    want_counts = np.stack([np.bincount(row, minlength=BINS) for row in rows]).astype(np.int32)
    assert np.array_equal(d_counts.cpu().numpy().reshape(tiles, BINS), want_counts), "per-tile counts differ"
    assert np.array_equal(d_ordered.cpu().numpy().reshape(tiles, TILE), np.sort(rows, axis=1)), \
        "decoded runs are not the sorted tile"
    assert np.all(d_lengths.cpu().numpy() == TILE), "decoded lengths differ"
    print(f"OK: {tiles} tiles' byte histograms, and the runs they decode to (each tile sorted), match NumPy "
          "(CuTe DSL backend)")


if __name__ == "__main__":
    main()
