"""Plain sampling's two whole-row plans (examples/workloads/sampling_*.py), on both backends, against the NumPy
oracle: below two waves of blocks (``walks_whole_rows``) a row is read at once by warp chunks and the crossing chunk
walked; from 264 blocks on, each row is walked in tiles from its start up to the sample. Rows of normal logits, of
ties, and a one-hot row with its one at the end; several Philox offsets; outputs poisoned (-1) before each launch.
Samples equal the oracle's but where the uniform lies within float rounding of a prefix sum (``check``)."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "examples" / "workloads"))
import sampling_plan as plan  # noqa: E402
import sampling_reference as ref  # noqa: E402
from gpu_helpers import SEEDED_PER_TEST  # noqa: E402

pytestmark = pytest.mark.gpu
rng = SEEDED_PER_TEST
SEED = 12345


def _rows(batch: int, vocab: int) -> np.ndarray:
    logits = rng.standard_normal((batch, vocab)).astype(np.float32)
    logits[1::3] = rng.integers(-3, 3, (len(range(1, batch, 3)), vocab)).astype(np.float32)  # ties
    probs = ref.softmax(logits)
    probs[2] = 0
    probs[2, vocab - 1] = 1  # one-hot, its one the row's last item
    return probs


def _numba(probs: np.ndarray, offset: int) -> np.ndarray:
    pytest.importorskip("numba_cuda_mlir")
    import sampling_numba as kernels
    from numba_cuda_mlir import cuda

    drawn = cuda.to_device(np.full(probs.shape[0], -1, np.int32))
    kernels.sampling_from_probs(cuda.to_device(probs), drawn, SEED, offset)
    return drawn.copy_to_host()


def _cute(probs: np.ndarray, offset: int) -> np.ndarray:
    pytest.importorskip("cutlass")
    torch = pytest.importorskip("torch")
    import cute_llm_sampling
    import cutlass
    from cutlass.cute.runtime import from_dlpack

    batch, vocab = probs.shape
    unused = (np.full(batch, 50, np.int32), np.full(batch, 0.9, np.float32), np.full(batch, 0.1, np.float32))
    (launcher, host, out), = [(k, h, o) for n, k, h, o, _ in cute_llm_sampling.launches_for(
        np.zeros_like(probs), probs, *unused, philox_seed=SEED, philox_offset=offset) if n == "sampling_from_probs"]
    device = [torch.from_numpy(a).cuda() if isinstance(a, np.ndarray) else a for a in host]
    launcher(*(from_dlpack(a) if isinstance(a, torch.Tensor) else cute_llm_sampling.SCALARS[a.dtype](a.item())
               for a in device), cutlass.Int32(batch))
    torch.cuda.synchronize()
    return device[out].cpu().numpy()


@pytest.mark.parametrize("backend", ["numba", "cute"])
@pytest.mark.parametrize("batch, vocab", [(8, 32000), (264, 5000), (264, 4099), (300, 32000)])  # (4099: rows
# off 16-byte alignment, whole tiles by the vector loads' fallback)
def test_plain_sampling_equals_the_oracle_on_either_plan(backend, batch, vocab):
    assert plan.walks_whole_rows(batch) == (batch >= 264)
    probs = _rows(batch, vocab)
    for offset in (0, int(rng.integers(1, 10**6)), int(rng.integers(1, 10**6))):
        got = (_numba if backend == "numba" else _cute)(probs, offset)
        u = ref.uniforms(SEED, offset, batch)
        ref.check("sampling_from_probs", got, ref.sample(probs, np.ones(probs.shape, bool), u, scale_by_kept=False))
        assert got[2] == vocab - 1
