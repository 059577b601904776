"""What a backend's patch table is made of (CONTRIBUTING.md, "Patches"): one record per replacement of a compiler's
attribute, saying what is replaced, why, when, and what would let it go; and how a target is found.

Standard library only: the tables are read by tests that check every target against the installed compiler.
"""
from __future__ import annotations

import functools
import importlib
import inspect
from dataclasses import dataclass
from typing import Callable

#: The ``when`` of a patch applied around one call and put back after it, never left in place.
AROUND_A_CALL = "around a call"


@dataclass(frozen=True)
class Patch:
    """One patch: ``targets`` (each ``"module:Owner.attribute"``) are the compiler's attributes it replaces;
    ``relies_on`` names it reads without replacing them; ``install`` applies it once per process (None when it is
    applied ``AROUND_A_CALL``, by ``where``); ``removal`` is the upstream issue, change or version that would let it
    go."""

    name: str
    targets: tuple[str, ...]
    reason: str
    removal: str
    when: str
    where: str
    install: Callable[[], None] | None = None
    relies_on: tuple[str, ...] = ()


def once(install: Callable[[], None]) -> Callable[[], None]:
    """An installer that runs at most once per process (later calls return at once)."""
    done = False

    @functools.wraps(install)
    def install_once() -> None:
        nonlocal done
        if not done:
            done = True
            install()

    return install_once


_MISSING = object()


def resolve(target: str) -> object:
    """The attribute ``"module:Owner.attribute"`` names, as its owner holds it (a class's ``classmethod`` or
    ``property`` object, not what it gives on access; inherited attributes too); raises ``LookupError`` when any
    part is missing."""
    module_name, _, path = target.partition(":")
    try:
        value: object = importlib.import_module(module_name)
    except ImportError as exc:
        raise LookupError(f"{target}: no module {module_name} ({exc})") from None
    for part in path.split("."):
        found = inspect.getattr_static(value, part, _MISSING)
        if found is _MISSING:
            raise LookupError(f"{target}: {part} is missing")
        value = found
    return value


def kind(value: object) -> str:
    """``callable`` (a function or method, as its owner holds it), ``property`` or ``value``."""
    if isinstance(value, property):
        return "property"
    if isinstance(value, (classmethod, staticmethod)) or callable(value):
        return "callable"
    return "value"


def defined_in(value: object) -> str | None:
    """The module that wrote ``value``: a function's (a classmethod's, a property's getter's), else its type's."""
    function = value.__func__ if isinstance(value, (classmethod, staticmethod)) else (
        value.fget if isinstance(value, property) else value)
    if inspect.isfunction(function):
        return function.__module__
    return type(value).__module__
