"""Backends: the registry behind ``coop.register`` and automatic registration (the Installation page of the
documentation; "Adding a backend" in CONTRIBUTING.md).

A backend is described by a ``Backend``: its names, the module of its qualified namespace (importing that module
activates the backend and its ``_register_backend()`` is idempotent), and the compiler package whose presence in
``sys.modules`` makes ``import cuda.coop`` register it automatically. The built-in backends are listed here; other
packages add theirs with ``add_backend`` or through the ``cuda.coop.backends`` entry-point group, whose entries
name a ``Backend`` (read the first time a name is not found).
"""
from __future__ import annotations

import importlib
import sys
import threading
import warnings
from dataclasses import dataclass

from . import _config
from ._errors import CoopValueError, CudaCoopAutoRegistrationWarning

ENTRY_POINT_GROUP = "cuda.coop.backends"


@dataclass(frozen=True)
class Backend:
    """``names[0]`` is the name messages use; ``module`` is the qualified namespace; ``compiler`` the top-level module
    of the compiler it serves; ``install_hint`` how to install what it needs."""

    names: tuple[str, ...]
    module: str
    compiler: str
    install_hint: str = ""

    @property
    def name(self) -> str:
        return self.names[0]


_registry: dict[str, Backend] = {}
_entry_points_read = False
_lock = threading.RLock()


def add_backend(backend: Backend) -> None:
    """Make ``backend`` known to ``register`` and automatic registration (a name already taken is a ValueError)."""
    with _lock:
        taken = [name for name in backend.names if name in _registry and _registry[name] != backend]
        if taken:
            raise ValueError(f"cuda.coop backend name {taken[0]!r} is already taken by {_registry[taken[0]].module}")
        for name in backend.names:
            _registry[name] = backend


def backends() -> list[Backend]:
    """The known backends, built-in ones first, each once."""
    with _lock:
        _read_entry_points()
        return list(dict.fromkeys(_registry.values()))


def _read_entry_points() -> None:
    global _entry_points_read
    if _entry_points_read:
        return
    _entry_points_read = True
    from importlib import metadata

    for entry in metadata.entry_points(group=ENTRY_POINT_GROUP):
        try:
            backend = entry.load()
            add_backend(backend() if callable(backend) and not isinstance(backend, Backend) else backend)
        except Exception as exc:  # noqa: BLE001 - another package's broken entry must not break this one
            warnings.warn(f"cuda.coop backend entry point {entry.name!r} ({entry.value}) could not be read: {exc}",
                          CudaCoopAutoRegistrationWarning, stacklevel=3)


def _lookup(name: str) -> Backend | None:
    with _lock:
        if name not in _registry:
            _read_entry_points()
        return _registry.get(name)


def register(backend: str, /) -> None:
    """Activate a compiler backend in this process (``"numba-cuda-mlir"`` or ``"cutlass"``).

    Idempotent and thread-safe; works before or after importing the compiler and
    defining kernels. Raises ImportError when the backend's dependencies are missing.
    """
    if not isinstance(backend, str):
        raise TypeError(f"cuda.coop.register expects a backend name string; got {type(backend).__name__}.")
    found = _lookup(backend)
    if found is None:
        names = " or ".join(repr(name) for known in backends() for name in known.names)
        raise ValueError(f"Unsupported cuda.coop backend {backend!r}; expected {names}.")
    with _lock:
        importlib.import_module(found.module)._register_backend()


def auto_register() -> None:
    """Register every known backend whose compiler the program has already imported; one that fails warns and
    leaves the others and ``import cuda.coop`` alone."""
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
    if disabled:
        return
    with _lock:
        known = list(dict.fromkeys(_registry.values()))  # entry points are read on demand, not at every import
    for backend in known:
        if backend.compiler in sys.modules:
            _auto_register_one(backend)


def _auto_register_one(backend: Backend) -> None:
    try:
        register(backend.name)
    except Exception as exc:  # any failure must leave `import cuda.coop` usable
        version = getattr(sys.modules.get(backend.compiler), "__version__", "unknown")
        for name in [m for m in sys.modules if m == backend.module or m.startswith(backend.module + ".")]:
            del sys.modules[name]
        warnings.warn(
            f"cuda.coop automatic DSL registration: {backend.name} {version} is imported but could not be "
            f"registered ({exc}); the cuda.coop import continued. "
            + (f"{backend.install_hint} or set" if backend.install_hint else "Set")
            + " CUDA_COOP_DISABLE_AUTO_DSL_REGISTRATION=1 to skip this check.",
            CudaCoopAutoRegistrationWarning,
            stacklevel=4,
        )


add_backend(Backend(("numba-cuda-mlir", "numba_cuda_mlir"), "cuda.coop.numba_mlir", "numba_cuda_mlir",
                    'Install "cuda-coop[numba-cuda-mlir-cu13]"'))
add_backend(Backend(("cutlass", "cute", "cutlass-dsl", "cutlass_dsl"), "cuda.coop.cutlass", "cutlass",
                    'Install "cuda-coop[cutlass-cu13]"'))
