"""The marker contract: kernel-only callables recognised by identity (see the Concepts page of the documentation)."""
from __future__ import annotations

import functools
import inspect
import sys
from typing import Any, Callable, Iterable, TypeVar

from .._backend_context import COMMON_NAMESPACE, MarkerCall, current
from .._errors import CoopCompilerContextRequiredError, located

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
    caller = sys._getframe(2)  # the marker's caller: dispatch <- marker (or a marker class's __new__) <- caller
    site = (caller.f_code.co_filename, caller.f_lineno)
    foreign = context.foreign_call(namespace, name)
    if foreign is not None:  # R11, at the user's line
        raise located(foreign, site)
    return context.tracer.call(MarkerCall(name, namespace, args, kwargs, site))


def documented_constructor(cls: type, documented: Callable[..., Any]) -> None:
    """Give ``cls.__new__`` (which takes any arguments and dispatches them) the signature ``(cls, ...)`` of
    ``documented``'s parameters: what the backends bind a kernel's call to, the stubs and the docs show."""
    signature = inspect.signature(documented)
    first = inspect.Parameter("cls", inspect.Parameter.POSITIONAL_OR_KEYWORD)
    setattr(cls.__new__, "__signature__", signature.replace(parameters=[first, *signature.parameters.values()]))


def operation(name: str, *, module: str = COMMON_NAMESPACE) -> Callable[[F], F]:
    """Turn a documented signature into the marker ``name`` of namespace ``module`` (cooperative operations are
    declared through ``records.declare``)."""

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


def op_name(obj: object) -> str | None:
    return getattr(obj, OP_ATTR, None) if callable(obj) else None


def public_name(obj: object) -> str:
    return f"{getattr(obj, '__module__', 'cuda.coop')}.{getattr(obj, '__qualname__', '?')}"


def missing_name(namespace: str, name: str, names: Iterable[str], operations: Iterable[str]) -> AttributeError:
    """The error of ``namespace.name`` for a name ``namespace`` lacks (a misspelt operation, or one of a later
    release): an ``AttributeError``, as Python's own, that offers the nearest name the namespace has (difflib). While
    a backend traces a kernel (it runs the kernel's Python) it starts with the caller's ``file:line``, as every
    compile-time message does; a backend that reads the kernel's IR locates it itself."""
    if name.startswith("_"):  # dunder probes (copy, pickle, import machinery): Python's own message, no search
        return AttributeError(f"module {namespace!r} has no attribute {name!r}")
    import difflib

    from .._version import __version__

    names, operations = sorted(set(names)), set(operations)
    nearest = difflib.get_close_matches(name, names, n=1)
    if nearest:
        kind = "operation" if nearest[0] in operations else "attribute"
        message = f"{namespace} has no {kind} {name!r}; did you mean {nearest[0]!r}?"
    else:
        message = (f"{namespace} has no operation {name!r} in cuda-coop {__version__}; {namespace}.__all__ lists "
                   "the names it has")
    context = current()
    if context is not None and context.tracer is not None:
        caller = sys._getframe(2)  # the caller of the module's __getattr__ (missing_name <- __getattr__ <- caller)
        message = f"{caller.f_code.co_filename}:{caller.f_lineno}: {message}"
    return AttributeError(message)
