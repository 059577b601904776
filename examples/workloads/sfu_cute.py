"""``sfu_numba.py`` for CuTe DSL kernels: the SFU's approximate 2**x (the reciprocal is ``cute.arch.rcp_approx``).
Shared by the sampling and selective-scan workloads."""
from __future__ import annotations

import cutlass.cute as cute
from cutlass import Float32


@cute.jit
def exp2_approx(x: Float32):
    """2**x by ex2.approx.ftz.f32 (one MUFU.EX2; below 2**-126 flushes to zero)."""
    return cute.math.exp2(x, approx=True, ftz=True)
