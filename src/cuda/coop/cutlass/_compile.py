"""compile_kernel: trace and build a ``@cute.jit`` launcher for sample arguments without a GPU
(docs: cutlass, "Building without a GPU")."""
from __future__ import annotations

import contextvars
from typing import Any

import numpy as np

from .._cub.report import CompiledKernel as CompiledKernel, cubin_of, report
from .._errors import CoopValueError
from . import _dsl

_built: contextvars.ContextVar[dict[str, Any] | None] = contextvars.ContextVar("cuda_coop_cute_built", default=None)


def record_source(source: str) -> None:
    """The trace-finalize hook tells a compile_kernel in progress the C++ of the calls it built."""
    seen = _built.get()
    if seen is not None:
        seen["source"] = source


def record_scratch(kernel: str, size: int) -> None:
    """The trace-finalize hook tells a compile_kernel in progress the cooperative scratch of a kernel (bytes of
    dynamic shared memory, beside the cubin's static shared memory)."""
    seen = _built.get()
    if seen is not None:
        seen.setdefault("scratch", {})[kernel] = size


def record_link(cubin: bytes) -> None:
    """The link step (link route) tells a compile_kernel in progress the cubin it made."""
    seen = _built.get()
    if seen is not None:
        seen["cubin"] = cubin


def compile_kernel(launcher: Any, *args: Any, target: str = "sm_90a") -> CompiledKernel:
    """Trace and compile ``launcher`` (a ``@cute.jit`` function launching one ``@cute.kernel``) for ``args`` on
    ``target`` without launching it, and report the kernel's cubin (registers, shared and local memory, SASS).

    ``args``: ``cute.Tensor`` samples (``cutlass.cute.runtime.make_fake_tensor``), NumPy arrays (described by
    their dtype and shape, never read) or scalars. Raises the same compile-time errors as a launch.
    """
    names = _dsl.target_names()
    if target not in names:  # C15, in the words of the other backend's compile_kernel: the CuTe DSL's targets
        raise CoopValueError(f"target must look like 'sm_90' or 'sm_90a' with a supported architecture "
                             f"({', '.join(names)}); got {target!r}")
    samples = [_sample(arg) for arg in args]
    seen: dict[str, Any] = {}
    token = _built.set(seen)
    try:
        compiled = _dsl.compile_launcher(launcher, samples, target)
    finally:
        _built.reset(token)
    # the link route's cubin; on the bitcode route (or when CuTe reused an earlier build) the binary CuTe holds
    cubin = cubin_of(seen.get("cubin") or _dsl.binary_of(compiled))
    if cubin is None:
        raise RuntimeError("the CuTe DSL's device binary holds no cubin")
    built = report(cubin, seen.get("source", ""))
    # the dynamic shared memory the launch asks for: the DSL's allocations (SmemAllocator's), cuda.coop's scratch
    # among them; where the launch gives no constant, the scratch alone
    dynamic = _dsl.launch_dynamic_shared_bytes(compiled)
    if dynamic is None:
        scratch = seen.get("scratch", {})
        dynamic = scratch.get(built.name, sum(scratch.values()) if len(scratch) == 1 else 0)
    return report(cubin, built.cpp_source, dynamic, name=built.name) if dynamic else built


def _sample(arg: Any) -> Any:
    if isinstance(arg, np.ndarray):
        dtype = _dsl.NUMERIC_TYPES.get(arg.dtype.name) or _dsl.OTHER_TYPES.get(arg.dtype.name)
        if dtype is None:
            raise CoopValueError(f"compile_kernel cannot describe a NumPy array of dtype {arg.dtype} to CuTe")
        strides = tuple(s // arg.itemsize for s in arg.strides)
        return _dsl.fake_tensor(dtype, arg.shape, strides)
    return arg
