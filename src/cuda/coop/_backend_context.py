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
from typing import Any, Iterator, Protocol

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
class BackendContext:
    """``backend``: its registered name; ``namespace``: its qualified namespace module; ``tracer``: the receiver of
    marker calls, for a backend that executes the kernel's Python."""

    backend: str
    namespace: str
    tracer: Tracer | None = None


_current: contextvars.ContextVar[BackendContext | None] = contextvars.ContextVar("cuda_coop_backend", default=None)


def current() -> BackendContext | None:
    return _current.get()


@contextlib.contextmanager
def active(context: BackendContext) -> Iterator[BackendContext]:
    """``context`` is the current backend for the duration (nested uses restore the outer one)."""
    token = _current.set(context)
    try:
        yield context
    finally:
        _current.reset(token)


def qualified_namespace() -> str:
    """The qualified namespace of the backend compiling now, for messages that point a user to it."""
    context = current()
    return context.namespace if context is not None else "the backend's qualified namespace"
