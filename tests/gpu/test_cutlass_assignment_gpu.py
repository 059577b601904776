"""Item assignment on the CuTe backend (SPEC 4, 12.3): ``items[i] = v`` converts ``v`` to the payload's dtype as
numba-cuda-mlir does, checked exactly against NumPy's conversions."""
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
from gpu_helpers import assert_same, poisoned  # noqa: E402

pytestmark = pytest.mark.gpu


def _poisoned(n, dtype):
    return torch.from_numpy(poisoned(n, dtype)).cuda()


def test_assigned_items_are_converted_to_the_payload_dtype():
    n = ck.THREADS * ck.K
    rng = np.random.default_rng(37)
    wide = rng.integers(-2**31, 2**31, size=n, dtype=np.int64).astype(np.int32)
    reals = (rng.uniform(-1e6, 1e6, size=n)).astype(np.float32)
    outs = {dtype: _poisoned(n, dtype) for dtype in (np.uint8, np.float32, np.int32, np.int16)}
    ck.converting_assignment_launch(from_dlpack(torch.from_numpy(wide.copy()).cuda()),
                                    from_dlpack(torch.from_numpy(reals.copy()).cuda()),
                                    *(from_dlpack(out) for out in outs.values()))
    torch.cuda.synchronize()

    # NumPy oracle: C's conversions, item by item in blocked order (thread t holds positions t*K .. t*K + K-1)
    np.testing.assert_array_equal(outs[np.uint8].cpu().numpy(), wide.astype(np.uint32).astype(np.uint8))
    assert_same(outs[np.float32].cpu().numpy(), wide.astype(np.float32), "float32")  # bit for bit
    np.testing.assert_array_equal(outs[np.int32].cpu().numpy(), np.trunc(reals).astype(np.int32))
    short = np.empty((ck.THREADS, ck.K), np.int16)
    short[:, 0] = (wide[::ck.K].astype(np.int64) * 3).astype(np.int16)
    short[:, 1] = np.int64(70000).astype(np.int16)
    short[:, 2] = -1
    short[:, 3] = np.uint32(40000).astype(np.int16)
    np.testing.assert_array_equal(outs[np.int16].cpu().numpy(), short.ravel())
