"""The CuTe DSL backend: tile prefix sums and tile totals in a ``@cute.kernel``.

Every block loads its tile of 128 threads x 4 items into a register fragment, writes the tile's
exclusive prefix sum and its total. The same ``coop.*`` calls run in a numba-cuda-mlir kernel
(examples/scan_tiles.py); here CuTe traces them and cuda.coop links the CUB code into the kernel.

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

THREADS, K = 128, 4


@cute.kernel
def scan_tiles(src: cute.Tensor, dst: cute.Tensor, tile_totals: cute.Tensor):
    tile, _, _ = cute.arch.block_idx()
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items, algorithm="transpose", offset=tile * (THREADS * K))
    prefix = coop.exclusive_sum(block, items)
    coop.store(block, dst, prefix, algorithm="transpose", offset=tile * (THREADS * K))
    total = coop.sum(block, items)  # a CuTe Int32, the same in every thread
    if block.rank() == 0:
        tile_totals[tile] = total


@cute.jit
def launch(src: cute.Tensor, dst: cute.Tensor, tile_totals: cute.Tensor, tiles: cutlass.Constexpr):
    scan_tiles(src, dst, tile_totals).launch(grid=(tiles, 1, 1), block=(THREADS, 1, 1))


def main() -> None:
    tiles = 64
    x = np.random.default_rng(0).integers(-1000, 1000, THREADS * K * tiles).astype(np.int32)
    start = time.perf_counter()
    sample = make_fake_tensor(cutlass.Int32, (x.size,), stride=(1,))
    built = cute_coop.compile_kernel(launch, sample, sample, make_fake_tensor(cutlass.Int32, (tiles,), stride=(1,)),
                                     tiles)
    print(f"built scan_tiles for sm_90a in {time.perf_counter() - start:.2f} s: {built.registers} registers, "
          f"{built.shared_memory_bytes} B shared, {built.local_memory_bytes} B local, {len(built.cubin)} B of cubin")
    try:
        if torch is None or not torch.cuda.is_available():
            raise RuntimeError("no CUDA device (or no torch to hand the arrays to CuTe)")
        from cutlass.cute.runtime import from_dlpack

        src = torch.from_numpy(x).cuda()
        out = torch.full_like(src, 0x5A5A5A5A)
        totals = torch.full((tiles,), 0x5A5A5A5A, dtype=torch.int32, device="cuda")
        launch(from_dlpack(src), from_dlpack(out), from_dlpack(totals), tiles)
        torch.cuda.synchronize()
    except Exception as exc:  # no driver or no GPU on this machine
        print(f"could not launch on a GPU here ({type(exc).__name__}: {str(exc).splitlines()[0][:120]}); "
              "the kernel was built but not run")
        return
    per_tile = x.reshape(tiles, THREADS * K)
    exclusive = (np.cumsum(per_tile, axis=1, dtype=np.int32) - per_tile).ravel()
    assert np.array_equal(out.cpu().numpy(), exclusive), "tile exclusive sums differ"
    assert np.array_equal(totals.cpu().numpy(), per_tile.sum(axis=1, dtype=np.int32)), "tile totals differ"
    assert np.array_equal(src.cpu().numpy(), x), "the input changed"
    print(f"OK: {tiles} tile scans and their totals of {x.size} int32 match NumPy (CuTe DSL backend)")


if __name__ == "__main__":
    main()
