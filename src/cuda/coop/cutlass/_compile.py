"""compile_kernel: trace and build a ``@cute.jit`` launcher for sample arguments without a GPU
(docs: cutlass, "Building without a GPU")."""
from __future__ import annotations

import contextvars
from typing import Any

import numpy as np

from .._cub.report import CompiledKernel as CompiledKernel, report
from .._errors import CoopValueError
from . import _dsl

_linked: contextvars.ContextVar[list[tuple[bytes, str]] | None] = contextvars.ContextVar("cuda_coop_cute_linked",
                                                                                       default=None)


def record_link(cubin: bytes, source: str) -> None:
    """The link step tells a compile_kernel in progress what it linked."""
    seen = _linked.get()
    if seen is not None:
        seen.append((cubin, source))


def compile_kernel(launcher: Any, *args: Any, target: str = "sm_90a") -> CompiledKernel:
    """Trace and compile ``launcher`` (a ``@cute.jit`` function launching one ``@cute.kernel``) for ``args`` on
    ``target`` without launching it, and report the kernel's cubin (registers, shared and local memory, SASS).

    ``args``: ``cute.Tensor`` samples (``cutlass.cute.runtime.make_fake_tensor``), NumPy arrays (described by
    their dtype and shape, never read) or scalars. Raises the same compile-time errors as a launch.
    """
    if not isinstance(target, str) or not target.startswith("sm_"):
        raise CoopValueError(f"compile_kernel target must be an architecture such as 'sm_90a'; got {target!r}")
    samples = [_sample(arg) for arg in args]
    seen: list[tuple[bytes, str]] = []
    token = _linked.set(seen)
    try:
        compiled = _dsl.compile_launcher(launcher, samples, target)
    finally:
        _linked.reset(token)
    if seen:
        cubin, source = seen[-1]
    else:  # no cuda.coop call, or CuTe reused an earlier build: the binary it holds
        cubin, source = _dsl.binary_of(compiled), ""
    return report(_dsl.cubin_of(cubin), source)


def _sample(arg: Any) -> Any:
    if isinstance(arg, np.ndarray):
        dtype = _dsl.NUMERIC_TYPES.get(arg.dtype.name) or _dsl.OTHER_TYPES.get(arg.dtype.name)
        if dtype is None:
            raise CoopValueError(f"compile_kernel cannot describe a NumPy array of dtype {arg.dtype} to CuTe")
        strides = tuple(s // arg.itemsize for s in arg.strides)
        return _dsl.fake_tensor(dtype, arg.shape, strides)
    return arg
