"""Signed group ranks on the CuTe backend (docs: cutlass, "What the kernel may hold"): a warp past the end of the
data computes a negative ``remaining``, clamps it to 0 and moves nothing; the poisoned outputs past ``n`` stay as
they were."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")  # before cutlass (the other order once broke torch's schema parser)
cutlass = pytest.importorskip("cutlass")
from cutlass.cute.runtime import from_dlpack  # noqa: E402

import cuda.coop.cutlass  # noqa: E402, F401  (registers the backend)

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cute_dsl"))
import cute_kernels as ck  # noqa: E402
from gpu_helpers import poison_value  # noqa: E402

pytestmark = pytest.mark.gpu
WARPS = ck.THREADS // 32
POISON = poison_value(np.int32)  # outside the inputs' range


@pytest.mark.parametrize("n, blocks", [(173, 2), (45, 2), (1, 1), (256, 2)])
def test_a_warp_past_the_end_moves_nothing(n, blocks):
    size = blocks * ck.THREADS
    host = np.random.default_rng(n).integers(-1000, 1000, size=size).astype(np.int32)
    src = torch.from_numpy(host.copy()).cuda()
    dst = torch.full((size,), int(POISON), dtype=torch.int32, device="cuda")
    valid = torch.full((blocks * WARPS,), int(POISON), dtype=torch.int32, device="cuda")
    ck.last_warp_launch(from_dlpack(src), from_dlpack(dst), from_dlpack(valid), n, blocks)
    torch.cuda.synchronize()

    # NumPy oracle: warp w of the grid owns host[32w : 32w + 32] and moves its first clip(n - 32w, 0, 32) items
    counts = np.clip(n - 32 * np.arange(blocks * WARPS), 0, 32).astype(np.int32)
    want = np.full(size, POISON, np.int32)
    for warp, count in enumerate(counts):
        start = 32 * warp
        want[start:start + count] = np.cumsum(host[start:start + count], dtype=np.int32)
    np.testing.assert_array_equal(valid.cpu().numpy(), counts)
    np.testing.assert_array_equal(dst.cpu().numpy(), want)  # past n: still poisoned
    np.testing.assert_array_equal(src.cpu().numpy(), host)
