"""Real sm_90 builds without a GPU: CUB fully inlined, planned shared memory, warm cache in a new process."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import cuda.coop.numba_mlir as numba_coop
from cuda import coop
from numba_cuda_mlir import cuda

ROOT = Path(__file__).resolve().parents[2]
X32 = np.zeros(1024, np.int32)


def make_copy(load_algorithm, store_algorithm, width=0):
    @cuda.jit
    def kernel(src, dst, k):
        group = coop.this_block() if width == 0 else coop.this_warp()
        items = coop.ThreadData(k)
        tile = np.int64(cuda.blockIdx.x) * cuda.blockDim.x * k
        coop.load(group, src, items, algorithm=load_algorithm, offset=tile)
        coop.store(group, dst, items, algorithm=store_algorithm, offset=tile)

    return kernel


@pytest.mark.parametrize("load_algorithm,store_algorithm,width", [
    ("direct", "direct", 0), ("striped", "striped", 0), ("vectorize", "vectorize", 0),
    ("transpose", "transpose", 0), ("warp_transpose", "warp_transpose_timesliced", 0), ("transpose", "striped", 32),
])
def test_cub_is_inlined_without_local_memory(load_algorithm, store_algorithm, width):
    built = numba_coop.compile_kernel(make_copy(load_algorithm, store_algorithm, width), (X32, X32, 4), block=128)
    sass = built.sass()
    assert "CALL" not in sass
    assert built.local_memory_bytes == 0
    assert "LDG" in sass and "STG" in sass
    assert "cub::Block" in built.cpp_source or "cub::Warp" in built.cpp_source


@pytest.mark.parametrize("dtype,k,width", [
    (np.uint16, 16, 128), (np.int16, 8, 128), (np.uint16, 4, 64), (np.int8, 16, 128), (np.int8, 8, 64),
    (np.float32, 16, 128), (np.float64, 4, 128), (np.uint16, 6, 32),
])
def test_block_vectorize_moves_the_widest_vector_of_16_8_or_4_bytes(dtype, k, width):
    """algorithm="vectorize" on a block: each thread's K items as vectors of up to 16 bytes (8 two-byte items, where
    CUB's hold 4 items at most), the widest that a whole number of make the K items. Where these are wider than
    CUB's, with two vectors or more, the misaligned tile's item by item loads are a loop of their own, not issued
    predicated off beside the vector loads; items of 4 bytes or more with K a multiple of 4 keep CUB's vectors, as
    wide, and CUB's unrolled fallback (docs: operations/load_store, "Algorithms")."""
    import re

    sample = np.zeros(1024, dtype)
    built = numba_coop.compile_kernel(make_copy("vectorize", "vectorize"), (sample, sample, k), block=128)
    sass = built.sass()
    assert built.local_memory_bytes == 0 and "CALL" not in sass
    vectors = k * np.dtype(dtype).itemsize // (width // 8)
    assert len(re.findall(rf"\bLDG\.E\.{width}\b" if width != 32 else r"\bLDG\.E ", sass)) >= vectors
    assert len(re.findall(rf"\bSTG\.E\.{width}\b" if width != 32 else r"\bSTG\.E ", sass)) >= vectors
    cubs_as_wide = np.dtype(dtype).itemsize >= 4 and k % 4 == 0
    if vectors >= 2 and width > 8 * np.dtype(dtype).itemsize and not cubs_as_wide:
        assert not re.search(r"@!?P\d LDG", sass), "the fallback's loads were predicated beside the vector loads"
    if vectors >= 2 and cubs_as_wide:  # CUB's fallback: unrolled, issued predicated off beside the vector loads
        assert re.search(r"@!?P\d LDG", sass), "CUB's vectors were expected (as wide as ours, faster fallback)"


def test_shared_memory_matches_the_planned_backing():
    baseline = numba_coop.compile_kernel(make_copy("direct", "direct"), (X32, X32, 4), block=128)
    transposed = numba_coop.compile_kernel(make_copy("transpose", "transpose"), (X32, X32, 4), block=128)
    # BlockLoad/BlockStore<int, 128, 4, TRANSPOSE> share one compiler-owned region sized for the larger
    # (BlockStore keeps valid_items beside the 2048-byte exchange buffer).
    assert transposed.metadata["scratch_bytes"] == 128 * 4 * 4 + 16
    assert baseline.shared_memory_bytes == 0
    # The cubin's shared section is the backing plus the 1 KiB sm_90 reserves once a kernel uses shared memory.
    assert transposed.shared_memory_bytes == transposed.metadata["scratch_bytes"] + 1024
    assert "BAR.SYNC" in transposed.sass() and "BAR.SYNC" not in baseline.sass()


HALF = 40  # module-level: the extents below are computed from it in the kernel


def make_mirror(computed):
    """A block scan beside two user shared arrays whose extents are computed in the kernel (``2 * HALF``) or
    written as literals: a compile-time value either way."""
    if computed:
        @cuda.jit
        def kernel(src, dst):
            block = coop.this_block()
            flat = cuda.shared.array(shape=2 * HALF, dtype=np.int32)  # (by keyword, the other by position)
            rows = cuda.shared.array((2, HALF + 0), np.int32)
            mirror_body(block, src, dst, flat, rows)
    else:
        @cuda.jit
        def kernel(src, dst):
            block = coop.this_block()
            flat = cuda.shared.array(80, np.int32)
            rows = cuda.shared.array((2, 40), np.int32)
            mirror_body(block, src, dst, flat, rows)
    return kernel


@cuda.jit(device=True, inline="always")
def mirror_body(block, src, dst, flat, rows):
    rank = block.rank()
    if rank < 2 * HALF:
        flat[rank] = src[rank]
        rows[rank // HALF, rank % HALF] = src[rank] * 3
    cuda.syncthreads()
    total = coop.exclusive_sum(block, src[rank])
    if rank < 2 * HALF:
        back = 2 * HALF - 1 - rank
        dst[rank] = flat[back] + rows[back // HALF, back % HALF] + total


def test_shared_arrays_of_computed_extents_are_static():
    # numba-cuda-mlir allocates a shared array statically only where each extent is a constant in its IR; a
    # computed one (2 * HALF) it carves out of dynamic shared memory, which a launch without sharedmem lacks (the
    # numba sampler faulted so on the H100). cuda-coop passes the computed value: the same build as the literals.
    computed = numba_coop.compile_kernel(make_mirror(True), (X32, X32), block=128)
    written = numba_coop.compile_kernel(make_mirror(False), (X32, X32), block=128)
    assert computed.dynamic_shared_memory_bytes == written.dynamic_shared_memory_bytes == 0
    assert computed.shared_memory_bytes == written.shared_memory_bytes
    assert written.shared_memory_bytes >= 1024 + 2 * 80 * 4 + computed.metadata["scratch_bytes"]


def test_exclusive_storage_takes_one_slice_per_call_site():
    @cuda.jit
    def kernel(src, dst, k):
        block = coop.this_block()
        scratch = coop.TempStorage(sharing="exclusive", auto_sync=True)
        items = coop.ThreadData(k)
        coop.load(block, src, items, algorithm="transpose", temp_storage=scratch)
        coop.store(block, dst, items, algorithm="transpose", temp_storage=scratch)

    built = numba_coop.compile_kernel(kernel, (X32, X32, 4), block=128)
    assert built.metadata["scratch_bytes"] == 2 * 128 * 4 * 4 + 16  # load slice, then the store slice


def test_large_explicit_storage_becomes_dynamic():
    @cuda.jit
    def kernel(src, dst, k):
        block = coop.this_block()
        scratch = coop.TempStorage(64 * 1024)
        items = coop.ThreadData(k)
        coop.load(block, src, items, algorithm="transpose", temp_storage=scratch)
        block.sync()
        coop.store(block, dst, items, algorithm="transpose", temp_storage=scratch)

    built = numba_coop.compile_kernel(kernel, (X32, X32, 4), block=128)
    assert built.metadata["dynamic"] is True
    assert built.dynamic_shared_memory_bytes == 64 * 1024


_CHILD = textwrap.dedent("""
    import numpy as np
    from numba_cuda_mlir import cuda
    import cuda.coop.numba_mlir as numba_coop
    from cuda import coop
    from cuda.coop._cub import nvrtc
    from numba_cuda_mlir import cuda

    @cuda.jit
    def kernel(src, dst, k):
        block = coop.this_block()
        items = coop.ThreadData(k)
        coop.load(block, src, items, algorithm="warp_transpose")
        coop.store(block, dst, items, algorithm="warp_transpose")

    x = np.zeros(2048, np.float64)
    numba_coop.compile_kernel(kernel, (x, x, 8), block=256)
    print("NVRTC_RUNS", nvrtc.stats["nvrtc_runs"])
""")


def test_second_compile_in_a_fresh_process_runs_no_nvrtc(tmp_path):
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path), "PYTHONPATH": str(ROOT / "src")}
    env.pop("CUDA_COOP_DISABLE_CACHE", None)
    runs = []
    for _ in range(2):
        out = subprocess.run([sys.executable, "-c", _CHILD], env=env, capture_output=True, text=True, timeout=300)
        assert out.returncode == 0, out.stderr
        runs.append(int(out.stdout.split("NVRTC_RUNS")[1]))
    assert runs == [1, 0]
    assert list((tmp_path / "cuda-coop").glob("*.bin"))


def test_source_dump_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("CUDA_COOP_SOURCE_DUMP_DIR", str(tmp_path / "dump"))
    numba_coop.compile_kernel(make_copy("striped", "striped"), (X32, X32, 2), block=64)
    dumped = list((tmp_path / "dump").glob("cuda_coop_numba_mlir_*.cu"))
    assert dumped and "cub::BLOCK_LOAD_STRIPED" in dumped[0].read_text()


def test_block_reduce_scratch_covers_the_raking_grid():
    @cuda.jit
    def kernel(src, dst):
        block = coop.this_block()
        total = coop.sum(block, src[block.rank()], algorithm="raking")
        if block.rank() == 0:
            dst[0] = total

    built = numba_coop.compile_kernel(kernel, (X32, X32), block=128)
    # BlockReduceRaking<int, 128> shares one int per thread in its raking grid, plus the broadcast slot.
    assert built.metadata["scratch_bytes"] >= 128 * 4 + 4
    assert "CALL" not in built.sass()
