"""The sampling workload's softmax on masked logits (examples/workloads/sampling_*.py), on both backends, against the
NumPy oracle: what a serving stack feeds it after ``top_k_mask_logits`` (-inf but for the top 50), a row whose first
20000 items are -inf (whole threads of -inf items, whose share must be 0, not NaN), and a row of one finite logit.
The held path keeps exp(x - the thread's maximum) and scales it by one exponential a thread, so a thread of -inf
items is its edge case; one block per row (vocab 32000; numba's host wrapper takes the cluster kernel there, at
batch <= 8) and row slices meeting at a grid barrier (vocab 128256, one row), and the cluster softmax launched
directly on both backends. Outputs are poisoned (NaN) before each launch."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "examples" / "workloads"))
import sampling_reference as ref  # noqa: E402
from gpu_helpers import SEEDED_PER_TEST  # noqa: E402

pytestmark = pytest.mark.gpu
rng = SEEDED_PER_TEST  # each test's own generator (tests/gpu/conftest.py)


def masked_rows(batch: int, vocab: int) -> np.ndarray:
    """Row 0 and every third: normal logits masked to their top 50; then 20000 leading -inf; then one finite logit."""
    logits = rng.standard_normal((batch, vocab)).astype(np.float32)
    for r in range(batch):
        kind = r % 3
        if kind == 0:
            cut = np.sort(logits[r])[-50]
            logits[r, logits[r] < cut] = -np.inf
        elif kind == 1:
            logits[r, :20000] = -np.inf
        else:
            keep = int(rng.integers(vocab))
            logits[r, np.arange(vocab) != keep] = -np.inf
    return logits


def _numba(logits: np.ndarray) -> np.ndarray:
    pytest.importorskip("numba_cuda_mlir")
    import sampling_numba as kernels
    from numba_cuda_mlir import cuda

    out = cuda.to_device(np.full(logits.shape, np.nan, np.float32))
    kernels.softmax(cuda.to_device(logits), out)  # a cluster or a block per row, or row slices (the host plan)
    return out.copy_to_host()


def _cute(logits: np.ndarray) -> np.ndarray:
    pytest.importorskip("cutlass")
    pytest.importorskip("torch")
    import cute_llm_sampling
    import cutlass
    import torch
    from cutlass.cute.runtime import from_dlpack

    batch, vocab = logits.shape
    if batch > 1:  # one block per row
        name, launcher, host, out, _ = cute_llm_sampling.launches_for(logits, *_unused(batch, vocab))[0]
        assert name == "softmax"
        device = [torch.from_numpy(a).cuda() if isinstance(a, np.ndarray) else a for a in host]
        launcher(*(from_dlpack(a) if isinstance(a, torch.Tensor) else cute_llm_sampling.SCALARS[a.dtype](a.item())
                   for a in device), cutlass.Int32(batch))
        torch.cuda.synchronize()
        return device[out].cpu().numpy().reshape(batch, vocab)
    _, sliced = cute_llm_sampling.sliced_launches(logits, *_unused(batch, vocab))
    steps, out, _ = sliced["softmax"]
    return cute_llm_sampling.run_steps(steps, out).reshape(batch, vocab)


def _unused(batch: int, vocab: int):
    """The other functions' operands of ``launches_for`` (only the softmax runs here)."""
    return (np.full((batch, vocab), 1.0 / vocab, np.float32), np.full(batch, 50, np.int32),
            np.full(batch, 0.9, np.float32), np.full(batch, 0.1, np.float32))


@pytest.mark.parametrize("backend", ["numba", "cute"])
@pytest.mark.parametrize("batch, vocab", [(6, 32000), (1, 128256)])
def test_softmax_of_masked_logits(backend, batch, vocab):
    logits = masked_rows(batch, vocab)
    got = (_numba if backend == "numba" else _cute)(logits)
    assert not np.isnan(got).any(), "a thread of -inf items gave NaN"
    ref.check("softmax", got, ref.softmax(logits))


def _cluster(backend: str, logits: np.ndarray) -> np.ndarray:
    """The cluster softmax (``cluster_softmax_plan``: each row over the 8 blocks of a cluster) launched directly."""
    import sampling_plan as plan

    batch, vocab = logits.shape
    threads, held, length = plan.cluster_softmax_plan(vocab)
    if backend == "numba":
        pytest.importorskip("numba_cuda_mlir")
        import sampling_numba as kernels
        from numba_cuda_mlir import cuda

        out = cuda.to_device(np.full(logits.shape, np.nan, np.float32))
        kernels.softmax_cluster(cuda.to_device(logits), out)
        return out.copy_to_host()
    pytest.importorskip("cutlass")
    torch = pytest.importorskip("torch")
    import cutlass
    import sampling_cute
    from cutlass.cute.runtime import from_dlpack

    x = torch.from_numpy(logits.reshape(-1)).cuda()
    out = torch.full((logits.size,), float("nan"), device="cuda")
    sampling_cute.softmax_cluster_launcher(threads, held)(
        from_dlpack(x), from_dlpack(out), cutlass.Int64(vocab), cutlass.Int64(length), cutlass.Float32(1.0),
        cutlass.Int32(batch))
    torch.cuda.synchronize()
    return out.cpu().numpy().reshape(batch, vocab)


@pytest.mark.parametrize("backend", ["numba", "cute"])
@pytest.mark.parametrize("batch, vocab, masked", [(6, 32000, True), (2, 32000, False), (5, 4099, False),
                                                  (3, 10, False), (1, 128256, False)])
def test_cluster_softmax_of_masked_and_plain_logits(backend, batch, vocab, masked):
    """The cluster softmax on both backends: masked rows (whole blocks of the cluster holding only -inf items: their
    pair carries no mass), plain rows, short last slices (vocab 4099), blocks past the row's end (vocab 10: five of
    the eight hold nothing) and a long row (8 blocks of 512 threads x 32 items)."""
    logits = masked_rows(batch, vocab) if masked else rng.standard_normal((batch, vocab)).astype(np.float32)
    got = _cluster(backend, logits)
    assert not np.isnan(got).any(), "a block or thread of -inf items gave NaN"
    ref.check("softmax", got, ref.softmax(logits))
