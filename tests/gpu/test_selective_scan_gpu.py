"""The selective-scan workload (examples/workloads/selective_scan_*.py) on the GPU against its float64 NumPy oracle:
random inputs, poisoned outputs (NaN, or bfloat16 NaN bits), float32 and bfloat16, every option on and none, rows
shorter than a warp's chunk, exactly one chunk, one position past it, several ragged chunks, and more states than
threads; the tolerance is the one mamba-ssm's tests allow its CUDA forward (selective_scan_reference.TOLERANCE)."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "examples" / "workloads"))
import selective_scan_plan as plan  # noqa: E402
import selective_scan_reference as ref  # noqa: E402
from gpu_helpers import SEEDED_PER_TEST  # noqa: E402

pytestmark = pytest.mark.gpu
rng = SEEDED_PER_TEST  # each test's own generator (tests/gpu/conftest.py)

CASES = [(1, 16), (37, 16), (512, 16), (1000, 16), (2048, 16), (2049, 16), (5000, 16), (3000, 1), (100, 40)]


def _problem(seqlen: int, dstate: int, dtype: str, options: bool):
    inputs = ref.problem(2, 3, seqlen, dstate, dtype, seed=int(rng.integers(1 << 30)))
    name, chosen, softplus = ref.variants(inputs)[0 if options else 1]
    return chosen, softplus


def _check(chosen: dict, softplus: bool, dtype: str, got_out, got_state) -> None:
    want_out, want_state = ref.oracle(chosen, softplus)
    ref.check(got_out, want_out, dtype)
    ref.check(got_state, want_state, "float32", "last_state")


@pytest.mark.parametrize("options", [True, False], ids=["options", "plain"])
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("seqlen, dstate", CASES)
def test_numba_kernel_matches_the_oracle(seqlen, dstate, dtype, options):
    pytest.importorskip("numba_cuda_mlir")
    import selective_scan_numba as kernels
    from numba_cuda_mlir import cuda

    chosen, softplus = _problem(seqlen, dstate, dtype, options)
    out, last_state = ref.outputs(chosen["u"], dstate)
    threads, items = plan.tiling(seqlen)
    host = kernels.arguments(chosen, out, last_state, softplus)
    device = [cuda.to_device(a) if isinstance(a, np.ndarray) else a for a in host]
    kernels.kernel_for(threads, items, dtype, plan.reads_pairs(seqlen, dtype))[2 * 3, threads](*device)
    _check(chosen, softplus, dtype, device[8].copy_to_host(), device[9].copy_to_host())


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_numba_host_wrapper_on_device_arrays(dtype):
    pytest.importorskip("numba_cuda_mlir")
    import selective_scan_numba as kernels
    from numba_cuda_mlir import cuda

    chosen, softplus = _problem(3000, 16, dtype, True)
    out, last_state = ref.outputs(chosen["u"], 16)
    names = ("u", "delta", "A", "B", "C", "D", "z", "delta_bias")
    d = {k: cuda.to_device(chosen[k]) for k in names}
    got_out, got_state = cuda.to_device(out), cuda.to_device(last_state)
    kernels.selective_scan(*(d[k] for k in names), got_out, got_state, delta_softplus=softplus)
    _check(chosen, softplus, dtype, got_out.copy_to_host(), got_state.copy_to_host())


@pytest.mark.parametrize("options", [True, False], ids=["options", "plain"])
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("seqlen, dstate", CASES)
def test_cute_kernel_matches_the_oracle(seqlen, dstate, dtype, options):
    pytest.importorskip("torch")
    pytest.importorskip("cutlass")
    import cute_selective_scan as script
    import selective_scan_cute as kernels

    chosen, softplus = _problem(seqlen, dstate, dtype, options)
    out, last_state = ref.outputs(chosen["u"], dstate)
    threads, items = plan.tiling(seqlen)
    got_out, got_state = script.launch(kernels.kernel_for(threads, items, dtype, plan.reads_pairs(seqlen, dtype)),
                                       script.arguments(chosen, out, last_state, softplus))
    _check(chosen, softplus, dtype, got_out, got_state)
