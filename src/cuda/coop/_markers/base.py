"""The marker contract: kernel-only callables recognised by identity (see the Concepts page of the documentation)."""
from __future__ import annotations

import functools
import inspect
import sys
from typing import Any, Callable, TypeVar

from .._backend_context import COMMON_NAMESPACE, MarkerCall, current
from .._errors import CoopCompilerContextRequiredError, CoopTypeError

F = TypeVar("F", bound=Callable[..., Any])

# Attribute names the backends read; kept here so both layers agree.
OP_ATTR = "__coop_op__"
QUALIFIED_ATTR = "__coop_qualified__"


def kernel_only(name: str) -> CoopCompilerContextRequiredError:
    return CoopCompilerContextRequiredError(f"{name} must be called from a supported GPU kernel.")


def dispatch(name: str, namespace: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """A marker executed as Python: the call goes to the tracer of the backend compiling now (R11 when it is a
    qualified call of another backend's namespace); with none, R1."""
    context = current()
    if context is None or context.tracer is None:
        raise kernel_only(f"{namespace}.{name}")
    if namespace not in (COMMON_NAMESPACE, context.namespace):
        raise CoopTypeError(f"{namespace}.{name} belongs to {namespace}; this kernel is compiled by "
                            f"{context.backend}: use {COMMON_NAMESPACE}.{name} or {context.namespace}.{name}")
    caller = sys._getframe(2)  # the marker's caller: dispatch <- marker (or a marker class's __new__) <- caller
    site = (caller.f_code.co_filename, caller.f_lineno)
    return context.tracer.call(MarkerCall(name, namespace, args, kwargs, site))


def operation(name: str, *, module: str = COMMON_NAMESPACE) -> Callable[[F], F]:
    """Turn a documented signature into a marker for operation ``name``."""

    def wrap(fn: F) -> F:
        @functools.wraps(fn)
        def marker(*args: Any, **kwargs: Any) -> Any:
            return dispatch(name, module, args, kwargs)

        marker.__module__ = module
        marker.__qualname__ = name
        setattr(marker, OP_ATTR, name)
        setattr(marker, QUALIFIED_ATTR, module != COMMON_NAMESPACE)
        marker.__signature__ = inspect.signature(fn)  # type: ignore[attr-defined]
        return marker  # type: ignore[return-value]

    return wrap


def qualified(common: Callable[..., Any], module: str) -> Callable[..., Any]:
    """The qualified variant of a common operation in a backend's namespace ``module``: same contract, more
    accepted."""
    return operation(getattr(common, OP_ATTR), module=module)(common.__wrapped__)  # type: ignore[attr-defined]


def op_name(obj: object) -> str | None:
    return getattr(obj, OP_ATTR, None) if callable(obj) else None


def public_name(obj: object) -> str:
    return f"{getattr(obj, '__module__', 'cuda.coop')}.{getattr(obj, '__qualname__', '?')}"
