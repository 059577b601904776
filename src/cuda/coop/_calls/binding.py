"""Binding a marker call's arguments to its signature, with the same errors on every backend (docs: errors, C3 and
C5): a qualified-only option in a common call names the backend's namespace, an unknown keyword is named, and an
option passed positionally is told to go by keyword."""
from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import Any

from .._backend_context import COMMON_NAMESPACE
from .._errors import CoopError, CoopTypeError, CoopUnsupportedError, CoopValueError
from .._markers.records import extension
from .._semantics.tuples import fields, is_tuple
from .._version import __version__


def value_words(value: Any) -> str:
    """`` name`` of a function (a device function's Python one), else `` repr``: an option's value in a message."""
    function = getattr(value, "py_func", value)
    return f" {function.__qualname__}" if callable(function) and hasattr(function, "__qualname__") else f" {value!r}"


def literal_words(value: Any) -> str:
    """``value_words`` of a compile-time Python value (a literal or a function), else ``""``: what a message shows
    of an option whatever backend compiles the call (payloads and other kernel values are not shown)."""
    function = getattr(value, "py_func", value)
    if isinstance(value, (bool, int, float, str)) or inspect.isfunction(function) or inspect.isbuiltin(function):
        return value_words(value)
    return ""


def bind_arguments(name: str, signature: inspect.Signature, args: Sequence[Any], kwargs: dict[str, Any], *,
                   namespace: str, backend: str, lacks: frozenset[str] = frozenset(),
                   shown: Callable[[str], str] = lambda option: "", skipped: int = 0) -> dict[str, Any]:
    """``signature`` bound to ``args`` and ``kwargs`` of the call ``name`` (``cuda.coop.scan`` or a qualified
    name), or the error a user reads. ``namespace``: the qualified namespace of the backend compiling the kernel;
    ``backend``: its name (``cutlass``); ``lacks``: the capabilities it lacks, whose qualified options and
    operands it does not build (its namespace leaves them out; ``Extension.needs``); ``shown(option)``: the
    option's value as words (`` my_op``), or ``""``; ``skipped``: leading parameters bound by the caller (``self``
    of a method)."""
    try:
        return dict(signature.bind(*args, **kwargs).arguments)
    except TypeError as exc:
        raise binding_error(name, signature, exc, len(args) - skipped, list(kwargs), namespace=namespace,
                            backend=backend, lacks=lacks, shown=shown, skipped=skipped) from None


def binding_error(name: str, signature: inspect.Signature, exc: TypeError, positional: int, keywords: list[str], *,
                  namespace: str, backend: str, lacks: frozenset[str] = frozenset(),
                  shown: Callable[[str], str] = lambda option: "", skipped: int = 0) -> CoopError:
    """The error of a call whose arguments ``signature.bind`` refused with ``exc`` (see ``bind_arguments``)."""
    unknown = [k for k in keywords if k not in signature.parameters]
    op = name.rsplit(".", 1)[-1]
    pending = extension(op).unbuilt(lacks)
    waiting = [k for k in unknown if k in pending]
    qualified_only = [k for k in unknown if k in extension(op).options] + waiting
    common_call = name.startswith(f"{COMMON_NAMESPACE}.") and not name.startswith(f"{namespace}.")
    if qualified_only and common_call:  # C3
        options = [p.name for p in signature.parameters.values() if p.kind == p.KEYWORD_ONLY]
        return CoopValueError(f"{name} {qualified_only[0]}{shown(qualified_only[0])} requires {namespace}; the "
                              f"common API accepts: {', '.join(options)}")
    if waiting:
        return CoopUnsupportedError(f"{name} {waiting[0]} is not implemented by the {backend} backend in "
                                    f"cuda-coop {__version__}")
    if unknown:  # C5
        return CoopTypeError(f"{name} got an unexpected keyword argument {unknown[0]!r}")
    operands = sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in signature.parameters.values()
                   ) - skipped
    unbuilt_operands = [o for o in extension(op).operands if o in pending]
    if positional > operands and unbuilt_operands and not common_call:  # R9: an operand this backend leaves out
        return CoopUnsupportedError(f"{name} {unbuilt_operands[0]} operand is not implemented by the {backend} "
                                    f"backend in cuda-coop {__version__}")
    if positional > operands:  # C5
        return CoopTypeError(f"{name} takes {operands} positional operands; pass options by keyword")
    return CoopTypeError(f"{name}: {exc}")


def operator_failure(name: str, param: str, label: str, dtype: str, *, arity: int, reason: str,
                     state_dtype: str | None = None, extra: tuple[str, ...] = ()) -> str:
    """The message of a user operator the backend could not compile: the same first line on every backend (what the
    operator is called with, and for a tuple what it must return), the compiler's reason after it. ``state_dtype``:
    a StatefulFunction's op, called with its state first; ``extra``: the dtypes of the arguments after the
    operands (a prefix callback's has_head)."""
    if is_tuple(dtype):
        members = fields(dtype)
        operand = f"({', '.join(members)})"
        return (f"{name} {param} {label} could not be compiled for ({operand}, {operand}); it must return a tuple "
                f"of {len(members)} values\n{reason}")
    state = [f"{state_dtype} state"] if state_dtype is not None else []
    operands = [dtype] * (1 if state_dtype is not None else arity)
    return f"{name} {param} {label} could not be compiled for ({', '.join(state + operands + list(extra))}): {reason}"
