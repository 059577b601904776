"""The read-only bandwidth ceiling for the reductions (issue 12, item 5a).

A reduction reads n items and writes almost nothing, so the copy ceiling (n read + n written)
flatters it: a device reads faster than it reads and writes. These rows read the input and
write one total per tile: three plain CUDA C++ kernels (no CUB; 16-byte vector loads, shuffles,
one store per block; built by cupy's NVRTC) and cupy's own sum. The report takes the fastest
verified one as the ceiling of the reduction rows.

A family offers them with ``read_launchers(buffers)`` returning ``launchers(buffers, FAMILY)`` (see
throughput.run_family).
"""
from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass

THREADS = 256
VECTOR_ITEMS = (4, 8, 16)  # 16-byte vectors per thread: 16, 32 and 64 int32 items (64 to 256 bytes in flight)
DTYPE = "int32"
POISON = 0x5A5A5A5A

SOURCE = r"""
// One block of 256 threads sums a tile of 256 * VECS int4 vectors, each load instruction coalesced
// (thread t reads vectors t, t + 256, ...), and thread 0 writes the tile's total: reads n items,
// writes n / tile. int32 arithmetic wraps.
template <int VECS>
__device__ __forceinline__ void read_sum(const int4* __restrict__ src, int* __restrict__ out)
{
  const long long base = static_cast<long long>(blockIdx.x) * (256 * VECS) + threadIdx.x;
  int4 v[VECS];
#pragma unroll
  for (int i = 0; i < VECS; ++i)
  {
    v[i] = src[base + i * 256];  // every load issued before the first add
  }
  unsigned acc = 0;
#pragma unroll
  for (int i = 0; i < VECS; ++i)
  {
    acc += static_cast<unsigned>(v[i].x) + static_cast<unsigned>(v[i].y) + static_cast<unsigned>(v[i].z)
         + static_cast<unsigned>(v[i].w);
  }
#pragma unroll
  for (int d = 16; d > 0; d >>= 1)
  {
    acc += __shfl_down_sync(0xffffffffu, acc, d);
  }
  __shared__ unsigned warp_totals[8];
  if ((threadIdx.x & 31) == 0)
  {
    warp_totals[threadIdx.x >> 5] = acc;
  }
  __syncthreads();
  if (threadIdx.x == 0)
  {
    unsigned total = 0;
#pragma unroll
    for (int w = 0; w < 8; ++w)
    {
      total += warp_totals[w];
    }
    out[blockIdx.x] = static_cast<int>(total);
  }
}

extern "C" __global__ void bench_read_sum_4(const int4* src, int* out) { read_sum<4>(src, out); }
extern "C" __global__ void bench_read_sum_8(const int4* src, int* out) { read_sum<8>(src, out); }
extern "C" __global__ void bench_read_sum_16(const int4* src, int* out) { read_sum<16>(src, out); }
"""


@dataclass
class ReadRow:
    """One read-only row: ``launch`` once (asynchronous), ``reset`` its output, ``check`` it after the launches."""

    name: str
    launch: Callable[[], None]
    reset: Callable[[], None]
    check: Callable[[], bool]
    nbytes: int


@functools.cache
def _module():
    import cupy as cp

    return cp.RawModule(code=SOURCE, options=("-std=c++17",))


def tile_items(vecs: int) -> int:
    return THREADS * vecs * 4


def launchers(buffers, family: str) -> dict[str, ReadRow]:
    """The read-only rows over ``buffers.src`` (int32 buffers only: the ceiling is in bytes, one dtype suffices),
    named apart per family like the copy rows."""
    if buffers.dtype != DTYPE:
        return {}
    import cupy as cp

    src, n, itemsize = buffers.src, buffers.n, buffers.src.dtype.itemsize
    state = buffers.views.setdefault("read_ceiling", {})
    if "out" not in state:
        state["out"] = cp.empty(max(n // tile_items(v) for v in VECTOR_ITEMS), dtype=cp.int32)
        state["total"] = cp.empty((), dtype=cp.int32)
        state["refs"] = {}
    out, total = state["out"], state["total"]

    def reference(tile: int):
        """Per-tile sums mod 2^32 by cupy's reduction (independent of the kernels), computed once."""
        if tile not in state["refs"]:
            state["refs"][tile] = src.view(cp.uint32).reshape(-1, tile).sum(axis=1, dtype=cp.uint32)
        return state["refs"][tile]

    def reset() -> None:
        out.view(cp.uint32).fill(POISON)
        total.view(cp.uint32).fill(POISON)

    rows: dict[str, ReadRow] = {}
    for vecs in VECTOR_ITEMS:
        tile = tile_items(vecs)
        if n % tile:
            continue
        blocks = n // tile
        fn = _module().get_function(f"bench_read_sum_{vecs}")

        def launch(fn=fn, blocks=blocks) -> None:
            fn((blocks,), (THREADS,), (src, out))

        def check(tile=tile, blocks=blocks) -> bool:
            return bool(cp.array_equal(out[:blocks].view(cp.uint32), reference(tile))) and bool(
                cp.all(out[blocks:].view(cp.uint32) == POISON))

        name = f"read_sum_vec4x{vecs}_{THREADS}x{4 * vecs}_{DTYPE}_for_{family}"
        rows[name] = ReadRow(name, launch, reset, check, (n + blocks) * itemsize)

    def cupy_sum() -> None:
        cp.sum(src, dtype=cp.int32, out=total)  # cupy's reduction (CUB's device reduce where cupy enables it)

    def cupy_check() -> bool:
        expected = int(reference(tile_items(VECTOR_ITEMS[0])).sum(dtype=cp.uint32))
        return int(total.view(cp.uint32)) == expected

    name = f"cupy_sum_{DTYPE}_for_{family}"
    rows[name] = ReadRow(name, cupy_sum, reset, cupy_check, (n + 1) * itemsize)
    return rows


def dry_build(outdir) -> dict:
    """--dry-run: build the kernels for sm_90 with the local nvcc (cupy builds them with NVRTC on the GPU machine)."""
    import subprocess
    import time
    from pathlib import Path

    from . import cub_build

    nvcc = cub_build.find_nvcc()
    base = {"type": "build", "family": "read_ceiling", "impl": "read"}
    if nvcc is None:
        return {**base, "error": "nvcc not found"}
    where = Path(outdir) / "read_ceiling"
    where.mkdir(parents=True, exist_ok=True)
    (where / "read_ceiling.cu").write_text(SOURCE)
    command = [nvcc, *cub_build.FLAGS, "-o", str(where / "read_ceiling.cubin"), str(where / "read_ceiling.cu")]
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        return {**base, "error": done.stderr[-4000:]}
    usage = cub_build.res_usage(where / "read_ceiling.cubin")
    print(f"read-only ceiling kernels built with nvcc in {seconds:.1f} s: {usage}", flush=True)
    return {**base, "seconds": seconds, "kernels": len(usage), "command": " ".join(command)}
