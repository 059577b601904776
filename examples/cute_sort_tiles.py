"""The CuTe DSL backend: sort each tile two ways in a ``@cute.kernel``.

Every block takes its tile of 128 threads x 4 items and

* sorts float32 keys with a radix sort and their tile positions with them: float keys and
  ``blocked_to_striped=True`` are options of the qualified namespace ``cuda.coop.cutlass`` (as of
  ``cuda.coop.numba_mlir``); the striped result is stored with ``algorithm="striped"``, which writes
  it in sorted order;
* sorts int32 keys by magnitude with a merge sort and ``compare_op``, your comparison (a Python
  function CuTe traces), also qualified: keys of equal magnitude keep their input order.

The numba-cuda-mlir versions are examples/radix_sort_tiles.py and examples/merge_sort_tiles.py.
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


def smaller_magnitude(a, b):
    """Orders ``a`` before ``b`` when it is nearer zero (a strict weak ordering: ties keep their order)."""
    return a * a < b * b


@cute.kernel
def sort_tiles(keys: cute.Tensor, sorted_keys: cute.Tensor, origins: cute.Tensor,
               values: cute.Tensor, by_magnitude: cute.Tensor):
    tile, _, _ = cute.arch.block_idx()
    block = coop.this_block()
    floats = coop.ThreadData(K, np.float32)
    coop.load(block, keys, floats, offset=tile * TILE)
    positions = coop.ThreadData(K, np.int32)  # each key's position in its tile, blocked
    for i in cutlass.range_constexpr(K):
        positions[i] = cutlass.Int32(block.rank() * K + i)
    ordered, where_from = cute_coop.radix_sort_pairs(block, floats, positions, blocked_to_striped=True)
    coop.store(block, sorted_keys, ordered, algorithm="striped", offset=tile * TILE)
    coop.store(block, origins, where_from, algorithm="striped", offset=tile * TILE)

    ints = coop.ThreadData(K, np.int32)
    coop.load(block, values, ints, offset=tile * TILE)
    nearest_first = cute_coop.merge_sort_keys(block, ints, compare_op=smaller_magnitude)
    coop.store(block, by_magnitude, nearest_first, offset=tile * TILE)


@cute.jit
def launch(keys: cute.Tensor, sorted_keys: cute.Tensor, origins: cute.Tensor, values: cute.Tensor,
           by_magnitude: cute.Tensor, tiles: cutlass.Constexpr):
    sort_tiles(keys, sorted_keys, origins, values, by_magnitude).launch(grid=(tiles, 1, 1), block=(THREADS, 1, 1))


def main() -> None:
    tiles = 64
    rng = np.random.default_rng(0)
    keys = rng.standard_normal(TILE * tiles).astype(np.float32)  # no zeros, no NaN: NumPy's order is the bits' order
    values = rng.integers(-1000, 1000, TILE * tiles).astype(np.int32)  # many ties in magnitude (x and -x)
    start = time.perf_counter()
    f32, i32 = (make_fake_tensor(t, (TILE * tiles,), stride=(1,)) for t in (cutlass.Float32, cutlass.Int32))
    built = cute_coop.compile_kernel(launch, f32, f32, i32, i32, i32, tiles)
    print(f"built sort_tiles for sm_90a in {time.perf_counter() - start:.2f} s: {built.registers} registers, "
          f"{built.shared_memory_bytes} B shared, {built.local_memory_bytes} B local, {len(built.cubin)} B of cubin")
    try:
        if torch is None or not torch.cuda.is_available():
            raise RuntimeError("no CUDA device (or no torch to hand the arrays to CuTe)")
        from cutlass.cute.runtime import from_dlpack

        d_keys, d_values = torch.from_numpy(keys).cuda(), torch.from_numpy(values).cuda()
        d_sorted = torch.full_like(d_keys, float("nan"))
        d_origins, d_by_magnitude = torch.full_like(d_values, -1), torch.full_like(d_values, 0x5A5A5A5A)
        launch(*(from_dlpack(t) for t in (d_keys, d_sorted, d_origins, d_values, d_by_magnitude)), tiles)
        torch.cuda.synchronize()
    except Exception as exc:  # no driver or no GPU on this machine
        print(f"could not launch on a GPU here ({type(exc).__name__}: {str(exc).splitlines()[0][:120]}); "
              "the kernel was built but not run")
        return
    key_tiles, value_tiles = keys.reshape(tiles, TILE), values.reshape(tiles, TILE)
    order = np.argsort(key_tiles, axis=1, kind="stable")  # radix sort is stable
    assert np.array_equal(d_sorted.cpu().numpy().reshape(tiles, TILE), np.take_along_axis(key_tiles, order, 1)), \
        "radix-sorted keys differ"
    assert np.array_equal(d_origins.cpu().numpy().reshape(tiles, TILE), order), "radix-sorted positions differ"
    by_size = np.argsort(value_tiles.astype(np.int64) ** 2, axis=1, kind="stable")  # compare_op's sort is stable
    assert np.array_equal(d_by_magnitude.cpu().numpy().reshape(tiles, TILE),
                          np.take_along_axis(value_tiles, by_size, 1)), "keys sorted by magnitude differ"
    print(f"OK: {tiles} tiles radix-sorted (float32 keys with their positions) and merge-sorted by magnitude "
          "(compare_op) match NumPy (CuTe DSL backend)")


if __name__ == "__main__":
    main()
