"""The CuTe DSL backend keeps the contract the numba-cuda-mlir backend keeps (SPEC §12; issue 30), without a GPU:
the namespace's names, payload forms and errors in the documented words at the user's line."""
from __future__ import annotations

import pytest

cutlass = pytest.importorskip("cutlass")
from cutlass.cute.runtime import make_fake_tensor  # noqa: E402

import cuda.coop.cutlass as cute_coop  # noqa: E402
from cuda import coop  # noqa: E402

import cute_kernels as ck  # noqa: E402


def _tensor(n=ck.THREADS * ck.K, dtype=None):
    return make_fake_tensor(dtype or cutlass.Int32, (n,), stride=(1,))


def test_the_namespace_thread_data_makes_payloads():
    """cuda.coop.cutlass.ThreadData(K, cutlass.Int32), (K, dtype=np.int32) and (K) are payloads, as the common
    ThreadData (a one-backend user writes ``import cuda.coop.cutlass as coop``)."""
    kernel = cute_coop.compile_kernel(ck.namespace_thread_data_launch, _tensor(), _tensor())
    assert "cuda_coop_scan_" in kernel.cpp_source and kernel.cpp_source.count("cuda_coop_load_") >= 1


def test_the_namespace_thread_data_outside_a_kernel_is_r1():
    with pytest.raises(coop.CoopCompilerContextRequiredError,
                       match=r"^cuda.coop.cutlass.ThreadData must be called from a supported GPU kernel.$"):
        cute_coop.ThreadData(4)
