"""The SFU's approximate instructions for numba-cuda-mlir kernels, the ones CUDA C++ kernels get from
``--use_fast_math`` (FlashInfer's ``ptx_exp2``, mamba-ssm's build): numba-cuda-mlir has no fast-math switch on this
route, so they come as inline PTX. Shared by the sampling and selective-scan workloads."""
from __future__ import annotations

import numpy as np
from numba_cuda_mlir import cuda


@cuda.jit(device=True, inline="always")
def exp2_approx(x):
    """2**x by ex2.approx.ftz.f32 (one MUFU.EX2; results below 2**-126 flush to zero): ``math.exp2`` lowers to the
    non-ftz form, which ptxas wraps in a range test and two multiplies."""
    return cuda.experimental.inline_ptx("ex2.approx.ftz.f32 %0, %1;", "=f", np.float32(0), "f", x)


@cuda.jit(device=True, inline="always")
def rcp_approx(x):
    """1 / x by rcp.approx.ftz.f32 (one MUFU.RCP): ``/`` lowers to the IEEE division, a test and a call."""
    return cuda.experimental.inline_ptx("rcp.approx.ftz.f32 %0, %1;", "=f", np.float32(0), "f", x)
