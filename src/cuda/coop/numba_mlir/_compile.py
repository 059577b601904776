"""compile_kernel: build a cooperative kernel for one launch shape without a GPU
(docs: api/numba_mlir, "Building without a GPU")."""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from .._cub.report import CompiledKernel as CompiledKernel, report
from .._errors import CoopError, CoopTypeError, located
from .._semantics.targets import KNOWN_ARCHITECTURES, parse_target


def _dim3(value: int | Sequence[int]) -> tuple[int, int, int]:
    dims = (value,) if isinstance(value, int) else tuple(value)
    return tuple(dims) + (1,) * (3 - len(dims))  # type: ignore[return-value]


def _arg_name(py_func: Any, index: int) -> str:
    import inspect

    try:
        return list(inspect.signature(py_func).parameters)[index]
    except (TypeError, ValueError, IndexError):
        return str(index)


def _typed_argument_error(request: Any, py_func: Any, index: int, given: Any) -> CoopError:
    """H4: a compile-time value (items_per_thread, ...) read from a kernel argument that compile_kernel was given as a
    type, so the kernel cannot be specialised on its value; at the line that reads it, as every error."""
    what = getattr(request, "coop_what", "a compile-time value")
    error = CoopTypeError(f"{what} comes from kernel argument {_arg_name(py_func, index)!r}, which the explicit "
                          f"signature types as {given}; pass a literal or constant, or remove the signature "
                          "(compile_kernel: pass the argument's value, e.g. 4, instead of its type)")
    filename, line = getattr(request.loc, "filename", None), getattr(request.loc, "line", None)
    return located(error, request.loc) if filename and line else error


def _buildable_architectures() -> tuple[int, ...]:
    """The known architectures NVRTC can build for (all known ones when it cannot be asked)."""
    try:
        from cuda.bindings import nvrtc

        err, archs = nvrtc.nvrtcGetSupportedArchs()
        if int(err) == 0 and archs:
            return tuple(cc for cc in KNOWN_ARCHITECTURES if cc in set(archs))
    except Exception:  # an NVRTC without the query: the build itself reports what it cannot do
        pass
    return KNOWN_ARCHITECTURES


def compile_kernel(kernel: Any, args: Sequence[Any], /, *, block: int | Sequence[int], grid: int | Sequence[int] = 1,
                   target: str = "sm_90", cluster: int | Sequence[int] | None = None) -> CompiledKernel:
    """Build ``kernel`` for ``kernel[grid, block](*args)`` on ``target`` without launching it.

    ``cluster`` builds it for a cluster launch, ``kernel[grid, block, 0, 0, cluster]``.

    ``args`` are sample arguments or numba types; integer values are specialised
    exactly as a launch would. Raises the same compile-time errors as a launch.
    """
    py_func = getattr(kernel, "py_func", kernel)
    target, _ = parse_target(target, _buildable_architectures())
    options = dict(getattr(kernel, "targetoptions", {}) or {})
    options["chip"] = target
    options["__launch_config__"] = {"grid": _dim3(grid), "block": _dim3(block), "sharedmem": 0,
                                     "cluster": None if cluster is None else _dim3(cluster)}
    from . import _compat as nb  # numba-cuda-mlir's internals load with the first build, not on import

    argtypes = [a if isinstance(a, nb.types.Type) else nb.typeof(a) for a in args]
    while True:
        try:
            cres = nb.compile_for_launch(py_func, list(argtypes), options)
            break
        except nb.ForceLiteralArg as request:
            progressed = False
            for index in request.requested_args:
                value = args[index]
                if isinstance(value, nb.types.Type) or isinstance(argtypes[index], nb.types.Literal):
                    raise _typed_argument_error(request, py_func, index, value) from None
                # a NumPy integer specialises like the Python int it holds
                argtypes[index] = nb.literal_type(int(value) if isinstance(value, np.integer) else value)
                progressed = True
            if not progressed:
                raise
    cubin = cres.metadata["cubin"]
    coop = cres.metadata.get("cuda_coop", {})
    return report(cubin, coop.get("cpp_source", ""), cres.metadata.get("required_dynamic_shared_memory", 0), coop)
