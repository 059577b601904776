"""The marker contract: kernel-only callables recognised by identity (see the Concepts page of the documentation)."""
from __future__ import annotations

import dataclasses
import functools
import inspect
import sys
from dataclasses import dataclass
from typing import Any, Callable, TypeVar

from .._backend_context import COMMON_NAMESPACE, MarkerCall, current
from .._errors import CoopCompilerContextRequiredError, CoopTypeError, located

F = TypeVar("F", bound=Callable[..., Any])

# Attribute names the backends read; kept here so both layers agree.
OP_ATTR = "__coop_op__"
QUALIFIED_ATTR = "__coop_qualified__"


@dataclass(frozen=True)
class Extension:
    """What a backend's qualified namespace adds to one operation beyond the common contract (docs: qualified),
    declared once beside the operation's marker and read by every backend, the qualified markers and the docs."""

    options: tuple[str, ...] = ()  # keyword options (default None); a common call naming one is C3
    operands: tuple[str, ...] = ()  # optional positional operands after the common ones (default None)
    # takes one scalar per thread where the common call needs a payload (docs: qualified, "Payload forms")
    scalar_form: bool = False
    note: str = ""  # what the qualified docstring adds; ``{name}``: the qualified marker's public name
    # what the docstring adds when the namespace offers one extension name (an option or operand), keyed by it
    notes: tuple[tuple[str, str], ...] = ()


NO_EXTENSION = Extension()
_EXTENSIONS: dict[str, Extension] = {}


def extension(op: str) -> Extension:
    """The qualified additions declared for operation ``op`` (none when it declares none)."""
    return _EXTENSIONS.get(op, NO_EXTENSION)


def offered_extension(op: str, unbuilt: tuple[str, ...] = ()) -> Extension:
    """The part of operation ``op``'s extension that a namespace leaving out ``unbuilt`` offers."""
    declared = extension(op)
    if not unbuilt:
        return declared
    return dataclasses.replace(
        declared, options=tuple(o for o in declared.options if o not in unbuilt),
        operands=tuple(o for o in declared.operands if o not in unbuilt),
        notes=tuple((key, text) for key, text in declared.notes if key not in unbuilt))


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
    if namespace not in (COMMON_NAMESPACE, context.namespace):  # R11, at the user's line
        raise located(CoopTypeError(f"{namespace}.{name} belongs to {namespace}; this kernel is compiled by "
                                    f"{context.backend}: use {COMMON_NAMESPACE}.{name} or {context.namespace}.{name}"),
                      site)
    return context.tracer.call(MarkerCall(name, namespace, args, kwargs, site))


def documented_constructor(cls: type, documented: Callable[..., Any]) -> None:
    """Give ``cls.__new__`` (which takes any arguments and dispatches them) the signature ``(cls, ...)`` of
    ``documented``'s parameters: what the backends bind a kernel's call to, the stubs and the docs show."""
    signature = inspect.signature(documented)
    first = inspect.Parameter("cls", inspect.Parameter.POSITIONAL_OR_KEYWORD)
    setattr(cls.__new__, "__signature__", signature.replace(parameters=[first, *signature.parameters.values()]))


def operation(name: str, *, module: str = COMMON_NAMESPACE, extends: Extension | None = None) -> Callable[[F], F]:
    """Turn a documented signature into a marker for operation ``name``; ``extends``: what qualified namespaces
    add to it."""
    if extends is not None:
        _EXTENSIONS[name] = extends

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


def qualified(common: Callable[..., Any], module: str, unbuilt: tuple[str, ...] = ()) -> Callable[..., Any]:
    """The qualified variant of a common operation in a backend's namespace ``module``: same contract, more
    accepted: the options and operands its ``Extension`` declares (default None) join the signature, and its notes
    the docstring, except those in ``unbuilt`` (what this backend does not build, so its namespace does not offer)."""
    wrapped: Callable[..., Any] = getattr(common, "__wrapped__")  # set by functools.wraps
    marker = operation(getattr(common, OP_ATTR), module=module)(wrapped)
    offered = offered_extension(marker.__qualname__, unbuilt)
    notes = [offered.note] + [text for key, text in offered.notes]
    if any(notes):
        doc = common.__doc__ or ""
        note = "\n".join(n.format(name=f"{module}.{marker.__qualname__}").strip("\n") for n in notes if n) + "\n\n"
        at = doc.find("    See Also:")  # before the links, so the note reads as part of the description
        marker.__doc__ = doc[:at] + note + doc[at:] if at >= 0 else doc + "\n" + note
    declared = offered
    if declared.options or declared.operands:
        sig = inspect.signature(marker)
        params = list(sig.parameters.values())
        cut = sum(p.kind == p.POSITIONAL_ONLY for p in params)
        params = (params[:cut]
                  + [inspect.Parameter(name, inspect.Parameter.POSITIONAL_ONLY, default=None)
                     for name in declared.operands]
                  + params[cut:]
                  + [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=None)
                     for name in declared.options])
        setattr(marker, "__signature__", sig.replace(parameters=params))
    return marker


def op_name(obj: object) -> str | None:
    return getattr(obj, OP_ATTR, None) if callable(obj) else None


def public_name(obj: object) -> str:
    return f"{getattr(obj, '__module__', 'cuda.coop')}.{getattr(obj, '__qualname__', '?')}"
