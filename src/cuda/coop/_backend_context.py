"""The backend compiling the kernel at hand, as a context variable (the contract between the backend-free layers and
the backends; see "Adding a backend" in CONTRIBUTING.md).

A backend sets it while it compiles a kernel. A tracing backend (one that runs the kernel's Python, as the CuTe DSL
does) gives a ``tracer``: markers executed while it is set hand their call to it instead of raising R1. The
backend-free layers read the qualified namespace from it for their messages ("use cuda.coop.<backend> for float16").
"""
from __future__ import annotations

import contextlib
import contextvars
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Protocol

from ._errors import CoopTypeError

COMMON_NAMESPACE = "cuda.coop"


@dataclass(frozen=True)
class MarkerCall:
    """A marker executed while a tracer is active: ``namespace.name(*args, **kwargs)`` at ``site`` (file, line)."""

    name: str
    namespace: str
    args: tuple[Any, ...]
    kwargs: dict[str, Any] = field(default_factory=dict)
    site: tuple[str, int] | None = None

    @property
    def qualified(self) -> bool:
        return self.namespace != COMMON_NAMESPACE


class Tracer(Protocol):
    def call(self, call: MarkerCall) -> Any:
        """Carry out one marker call of the kernel being traced and return its result."""


@dataclass(frozen=True)
class ValueAbi:
    """How values cross between the generated C++ and the code a backend compiles (its kernels, and the user
    callables it compiles to be called from C++): the backend's policy, which the code generator follows. The
    default is C++'s own convention."""

    # float16 crosses entry points as its 16 bits (``unsigned short``) and user callables by pointer: the
    # compiler's half is not C++'s ``__half`` struct, and a call between the two would not be inlined
    half_as_bits: bool = False
    # an aggregate (a structured dtype) crosses entry points and user callables as a pointer to its bytes
    aggregates_by_pointer: bool = False
    # a user predicate returns its boolean as one byte holding 0 or 1, not as a C++ ``bool``
    predicate_byte: bool = False


@dataclass(frozen=True)
class BackendContext:
    """``backend``: its registered name; ``namespace``: its qualified namespace module; ``tracer``: the receiver of
    marker calls, for a backend that executes the kernel's Python; ``abi``: how values cross to its code;
    ``dtypes_elsewhere``: the qualified namespace that builds a qualified dtype this backend does not (P1's fix)."""

    backend: str
    namespace: str
    tracer: Tracer | None = None
    abi: ValueAbi = ValueAbi()
    dtypes_elsewhere: tuple[tuple[str, str], ...] = ()

    def foreign_call(self, namespace: str, name: str) -> CoopTypeError | None:
        """R11 for ``namespace.name`` called in a kernel this backend compiles, when ``namespace`` is the qualified
        namespace of another backend (a tracer's markers are checked as they execute, ``_markers.base.dispatch``;
        a backend reading IR checks the markers it finds); None for the common namespace and its own."""
        if namespace in (COMMON_NAMESPACE, self.namespace):
            return None
        return CoopTypeError(f"{namespace}.{name} belongs to {namespace}; this kernel is compiled by {self.backend}: "
                             f"use {COMMON_NAMESPACE}.{name} or {self.namespace}.{name}")


_current: contextvars.ContextVar[BackendContext | None] = contextvars.ContextVar("cuda_coop_backend", default=None)

# A tracing backend whose compiler runs the kernel's Python without calling back first (the CuTe DSL) gives a probe
# that answers whether its compiler is tracing a kernel now, and the context for that kernel.
_probes: list[Callable[[], BackendContext | None]] = []


def add_trace_probe(probe: Callable[[], BackendContext | None]) -> None:
    """Consult ``probe`` when no backend context is set (idempotent)."""
    if probe not in _probes:
        _probes.append(probe)


def current() -> BackendContext | None:
    context = _current.get()
    if context is not None:
        return context
    for probe in _probes:
        context = probe()
        if context is not None:
            return context
    return None


@contextlib.contextmanager
def active(context: BackendContext) -> Iterator[BackendContext]:
    """``context`` is the current backend for the duration (nested uses restore the outer one)."""
    token = _current.set(context)
    try:
        yield context
    finally:
        _current.reset(token)


def value_abi() -> ValueAbi:
    """The value ABI of the backend compiling now (C++'s own convention outside a compile)."""
    context = current()
    return context.abi if context is not None else ValueAbi()


def qualified_namespace(dtype: str | None = None) -> str:
    """The qualified namespace of the backend compiling now, for messages that point a user to it (for ``dtype``,
    the one that builds it where this backend does not)."""
    context = current()
    if context is None:
        return "the backend's qualified namespace"
    return dict(context.dtypes_elsewhere).get(dtype or "", context.namespace)
