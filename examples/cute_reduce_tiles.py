"""The CuTe DSL backend: reduce each tile in a ``@cute.kernel``.

Every block loads its tile of 128 threads x 4 int32 items and computes

* its sum (``coop.sum``, the result in every thread);
* the bitwise xor of its items with your operator (``binary_op``: a module-level function CuTe traces);
* its largest item and that item's first position in the tile (``argmax``), and each warp's
  smallest item and its position in the warp's part of the tile (``argmin`` on a warp group).
  ``broadcast=False``, an option of the qualified namespace ``cuda.coop.cutlass``, leaves the
  result in group rank 0 only and saves the broadcast: rank 0 is the thread that writes it.

examples/block_sum.py sums tiles in a numba-cuda-mlir kernel.
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

import cuda.coop.cutlass as cute_coop  # noqa: E402  (registers the backend; qualified options)
from cuda import coop  # noqa: E402  (the common API used inside kernels)

THREADS, K = 128, 4
TILE = THREADS * K
WARPS = THREADS // 32


def xor(a, b):  # an operator lives at module scope (one defined in the kernel body is C16)
    return a ^ b


@cute.kernel
def reduce_tiles(src: cute.Tensor, per_tile: cute.Tensor, per_warp: cute.Tensor):
    tile, _, _ = cute.arch.block_idx()
    block = coop.this_block()
    warp = coop.this_warp()
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items, offset=tile * TILE)
    total = coop.sum(block, items)
    mixed = coop.reduce(block, items, binary_op=xor)
    largest, at = cute_coop.argmax(block, items, broadcast=False)  # defined in rank 0 only
    smallest, warp_at = cute_coop.argmin(warp, items, broadcast=False)  # in lane 0 of each warp
    if block.rank() == 0:
        per_tile[tile * 4] = total
        per_tile[tile * 4 + 1] = mixed
        per_tile[tile * 4 + 2] = largest
        per_tile[tile * 4 + 3] = at
    if warp.rank() == 0:
        slot = (tile * WARPS + block.rank() // 32) * 2
        per_warp[slot] = smallest
        per_warp[slot + 1] = warp_at


@cute.jit
def launch(src: cute.Tensor, per_tile: cute.Tensor, per_warp: cute.Tensor, tiles: cutlass.Constexpr):
    reduce_tiles(src, per_tile, per_warp).launch(grid=(tiles, 1, 1), block=(THREADS, 1, 1))


def main() -> None:
    tiles = 64
    x = np.random.default_rng(0).integers(-1000, 1000, TILE * tiles).astype(np.int32)  # repeated extremes: ties
    start = time.perf_counter()
    built = cute_coop.compile_kernel(launch, *(make_fake_tensor(cutlass.Int32, (n,), stride=(1,))
                                               for n in (x.size, 4 * tiles, 2 * WARPS * tiles)), tiles)
    print(f"built reduce_tiles for sm_90a in {time.perf_counter() - start:.2f} s: {built.registers} registers, "
          f"{built.shared_memory_bytes} B shared, {built.local_memory_bytes} B local, {len(built.cubin)} B of cubin")
    try:
        if torch is None or not torch.cuda.is_available():
            raise RuntimeError("no CUDA device (or no torch to hand the arrays to CuTe)")
        from cutlass.cute.runtime import from_dlpack

        src = torch.from_numpy(x).cuda()
        per_tile = torch.full((4 * tiles,), 0x5A5A5A5A, dtype=torch.int32, device="cuda")
        per_warp = torch.full((2 * WARPS * tiles,), 0x5A5A5A5A, dtype=torch.int32, device="cuda")
        launch(from_dlpack(src), from_dlpack(per_tile), from_dlpack(per_warp), tiles)
        torch.cuda.synchronize()
    except Exception as exc:  # no driver or no GPU on this machine
        print(f"could not launch on a GPU here ({type(exc).__name__}: {str(exc).splitlines()[0][:120]}); "
              "the kernel was built but not run")
        return
    rows = x.reshape(tiles, TILE)  # a tile in blocked order: position rank * K + i
    want = np.stack([rows.sum(axis=1, dtype=np.int32), np.bitwise_xor.reduce(rows, axis=1),
                     rows.max(axis=1), rows.argmax(axis=1)], axis=1)  # argmax: the first occurrence, as NumPy's
    assert np.array_equal(per_tile.cpu().numpy().reshape(tiles, 4), want), "tile sum, xor or argmax differ"
    warp_rows = x.reshape(tiles * WARPS, 32 * K)  # each warp's part of the tile, blocked over its lanes
    want_warps = np.stack([warp_rows.min(axis=1), warp_rows.argmin(axis=1)], axis=1)
    assert np.array_equal(per_warp.cpu().numpy().reshape(tiles * WARPS, 2), want_warps), "warp argmin differs"
    print(f"OK: {tiles} tiles' sum, xor and argmax, and {tiles * WARPS} warps' argmin, match NumPy "
          "(CuTe DSL backend)")


if __name__ == "__main__":
    main()
