"""The marker contract: kernel-only callables recognised by identity (see the Concepts page of the documentation)."""
from __future__ import annotations

import functools
import inspect
from typing import Any, Callable, TypeVar

from .._errors import CoopCompilerContextRequiredError

F = TypeVar("F", bound=Callable[..., Any])

# Attribute names the backends read; kept here so both layers agree.
OP_ATTR = "__coop_op__"
QUALIFIED_ATTR = "__coop_qualified__"


def kernel_only(name: str) -> CoopCompilerContextRequiredError:
    return CoopCompilerContextRequiredError(f"{name} must be called from a supported GPU kernel.")


def operation(name: str, *, module: str = "cuda.coop") -> Callable[[F], F]:
    """Turn a documented signature into a marker for operation ``name``."""

    def wrap(fn: F) -> F:
        full = f"{module}.{name}"

        @functools.wraps(fn)
        def marker(*args: Any, **kwargs: Any) -> Any:
            raise kernel_only(full)

        marker.__module__ = module
        marker.__qualname__ = name
        setattr(marker, OP_ATTR, name)
        setattr(marker, QUALIFIED_ATTR, module != "cuda.coop")
        marker.__signature__ = inspect.signature(fn)  # type: ignore[attr-defined]
        return marker  # type: ignore[return-value]

    return wrap


def qualified(common: Callable[..., Any], module: str = "cuda.coop.numba_mlir") -> Callable[..., Any]:
    """The qualified variant of a common operation: same contract, more accepted."""
    return operation(getattr(common, OP_ATTR), module=module)(common.__wrapped__)  # type: ignore[attr-defined]


def op_name(obj: object) -> str | None:
    return getattr(obj, OP_ATTR, None) if callable(obj) else None


def public_name(obj: object) -> str:
    return f"{getattr(obj, '__module__', 'cuda.coop')}.{getattr(obj, '__qualname__', '?')}"
