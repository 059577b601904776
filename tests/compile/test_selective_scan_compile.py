"""sm_90 builds of the selective-scan workload (examples/workloads/selective_scan_numba.py, selective_scan_cute.py) on
the CPU, for the tilings of the issue's sequence lengths (512, 1024, 2048+) and both input dtypes: launchable (a
block's registers fit an SM), no local memory, 16-byte vector loads on full chunks (bfloat16 too: 8 items a vector),
one SFU exp2 per position with no range test, no IEEE division, and no barrier beyond the scan's, its reuse barrier
and the kernel's two (the chunk's carry, the last state). Their results, against the NumPy oracle:
tests/gpu/test_selective_scan_gpu.py."""
from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples" / "workloads"))
import selective_scan_plan as plan  # noqa: E402
import selective_scan_reference as ref  # noqa: E402
from sass_paths import vector_loads_in_flight  # noqa: E402

SEQLENS = [512, 1024, 4096]  # tilings (32, 16), (64, 16), (128, 16)
ITEM_BYTES = {"float32": 4, "bfloat16": 2}


# (dtype, paired): bfloat16 rows of odd length read 16-bit items, of even length 32-bit words of two positions
FORMS = [("float32", False), ("bfloat16", False), ("bfloat16", True)]


def _check_build(built, threads: int, items: int, dtype: str, paired: bool) -> None:
    sass = built.sass()
    assert built.registers * threads <= 65536 and built.local_memory_bytes == 0
    assert built.shared_memory_bytes >= 4 * plan.MAX_DSTATE  # the carries
    loads = re.findall(r"\bLDG\.E[.\w]*", sass)
    # u, delta, B, C and z: 16-byte vectors on the full-chunk path (bfloat16 too: 8 items a vector)
    assert loads.count("LDG.E.128") == 5 * items * ITEM_BYTES[dtype] // 16, sorted(set(loads))
    assert "LDG.E.64" not in loads
    assert sass.count("MUFU.EX2") >= 3 * items  # exp2 of the decays, exp in the softplus and in the gate
    # ex2.approx.ftz: no range test around the SFU's exp2 (x < -126: halve, exp2, square) ...
    assert not re.search(r"FSETP\.GEU\.AND P\d, PT, R\d+, -126", sass)
    # ... and rcp.approx in the gate: no IEEE division (FCHK and its slow-path call); the one call left divides the
    # 64-bit row index, once per block
    assert "FCHK" not in sass and sass.count("CALL.") <= 1
    assert len(re.findall(r"\bBAR\.SYNC\b", sass)) <= 4
    # a state's B and C vectors are all in flight before the first is used: one wait per state, not two (a branch
    # around each load, meeting after its items were taken from the vectors, made C's loads wait for B's)
    assert vector_loads_in_flight(sass) >= 2 * items * ITEM_BYTES[dtype] // 16
    # read as words, each later position is its word masked (one LOP3): u, delta, B, C and z
    high_halves = len(re.findall(r"LOP3\.LUT R\d+, R\d+, 0xffff0000", sass))
    assert high_halves >= 5 * items // 2 if paired else high_halves == 0, high_halves


@pytest.mark.parametrize("dtype, paired", FORMS)
@pytest.mark.parametrize("seqlen", SEQLENS)
def test_numba_kernel_builds(seqlen, dtype, paired):
    pytest.importorskip("numba_cuda_mlir")
    import selective_scan_numba as kernels

    import cuda.coop.numba_mlir as numba_coop

    threads, items = plan.tiling(seqlen)
    inputs = ref.problem(2, 3, seqlen, 16, dtype)
    out, last_state = ref.outputs(inputs["u"], 16)
    built = numba_coop.compile_kernel(kernels.kernel_for(threads, items, dtype, paired),
                                      kernels.arguments(inputs, out, last_state), block=threads, grid=6)
    _check_build(built, threads, items, dtype, paired)
    assert "InclusiveScan" in built.cpp_source


@pytest.mark.parametrize("dtype, paired", FORMS)
@pytest.mark.parametrize("seqlen", SEQLENS)
def test_cute_kernel_builds(seqlen, dtype, paired):
    pytest.importorskip("cutlass")
    import cute_selective_scan as script
    import selective_scan_cute as kernels

    import cuda.coop.cutlass as cute_coop

    threads, items = plan.tiling(seqlen)
    inputs = ref.problem(2, 3, seqlen, 16, dtype)
    out, last_state = ref.outputs(inputs["u"], 16)
    built = cute_coop.compile_kernel(kernels.kernel_for(threads, items, dtype, paired),
                                     *(script.fake(a) for a in script.arguments(inputs, out, last_state)))
    _check_build(built, threads, items, dtype, paired)


def test_both_backends_take_the_same_arguments_but_the_scalars_width_and_the_grid():
    pytest.importorskip("numba_cuda_mlir")
    pytest.importorskip("cutlass")
    import cute_selective_scan as script
    import selective_scan_numba as kernels

    inputs = ref.problem(1, 2, 10, 4, "bfloat16")
    out, last_state = ref.outputs(inputs["u"], 4)
    numba_args = kernels.arguments(inputs, out, last_state)
    cute_args = script.arguments(inputs, out, last_state)
    assert len(cute_args) == len(numba_args) + 1 and cute_args[-1] == 2
    for mine, theirs in zip(numba_args, cute_args):
        mine, theirs = np.asarray(mine), np.asarray(theirs)
        if mine.dtype == np.uint16:  # bfloat16 bits: int16 for CuTe (DLPack), the same bits
            assert theirs.dtype == np.int16 and np.array_equal(mine, theirs.view(np.uint16))
        else:  # dstate: int64 for numba, int32 for CuTe
            assert np.array_equal(mine, theirs, equal_nan=True)
            assert mine.dtype == theirs.dtype or mine.dtype == np.int64
