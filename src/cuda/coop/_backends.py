"""Backend selection: ``coop.register`` and automatic registration (SPEC 1.4)."""
from __future__ import annotations

import importlib
import sys
import threading
import warnings

from . import _config
from ._errors import CoopValueError, CudaCoopAutoRegistrationWarning

# Backend name -> module that registers it on import.
_BACKENDS = {"numba-cuda-mlir": "cuda.coop.numba_mlir", "numba_cuda_mlir": "cuda.coop.numba_mlir"}
_lock = threading.RLock()


def register(backend: str, /) -> None:
    """Activate a compiler backend in this process (``"numba-cuda-mlir"``).

    Idempotent and thread-safe; works before or after importing the compiler and
    defining kernels. Raises ImportError when the backend's dependencies are missing.
    """
    if not isinstance(backend, str):
        raise TypeError(f"cuda.coop.register expects a backend name string; got {type(backend).__name__}.")
    module = _BACKENDS.get(backend)
    if module is None:
        raise ValueError(
            f"Unsupported cuda.coop backend {backend!r}; expected 'numba-cuda-mlir' or 'numba_cuda_mlir'."
        )
    with _lock:
        importlib.import_module(module).register_backend()


def auto_register() -> None:
    """Register numba-cuda-mlir when the program has already imported it."""
    try:
        disabled = _config.auto_registration_disabled()
    except CoopValueError as exc:  # a bad spelling must not break `import cuda.coop`
        warnings.warn(
            f"cuda.coop automatic DSL registration was skipped: {exc}. Call cuda.coop.register('numba-cuda-mlir') "
            "explicitly or fix the variable.",
            CudaCoopAutoRegistrationWarning,
            stacklevel=3,
        )
        return
    if disabled or "numba_cuda_mlir" not in sys.modules:
        return
    try:
        register("numba-cuda-mlir")
    except Exception as exc:  # any failure must leave `import cuda.coop` usable
        version = getattr(sys.modules.get("numba_cuda_mlir"), "__version__", "unknown")
        for name in [m for m in sys.modules if m == "cuda.coop.numba_mlir" or m.startswith("cuda.coop.numba_mlir.")]:
            del sys.modules[name]
        warnings.warn(
            f"cuda.coop automatic DSL registration: numba-cuda-mlir {version} is imported but could not be "
            f"registered ({exc}); the cuda.coop import continued. Install \"cuda-coop[numba-cuda-mlir-cu13]\" "
            "or set CUDA_COOP_DISABLE_AUTO_DSL_REGISTRATION=1 to skip this check.",
            CudaCoopAutoRegistrationWarning,
            stacklevel=3,
        )
