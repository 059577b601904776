"""The cuda.coop exception hierarchy (docs: errors) and message helpers."""
from __future__ import annotations

import re

# what a terminal reads as escapes: CSI (colours, bold: ESC [ ... m), OSC (ESC ] ... BEL or ESC \), two-character
_ESCAPES = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")


def plain_text(text: str) -> str:
    """``text`` without terminal escape sequences: a compiler's coloured diagnostics, as plain text (docs: errors)."""
    return _ESCAPES.sub("", text)


class CoopError(Exception):
    """Base class of every error cuda.coop raises. Its message is plain text: compiler text embedded in it loses
    its terminal colour codes."""

    def __init__(self, *args: object) -> None:
        super().__init__(*(plain_text(arg) if isinstance(arg, str) else arg for arg in args))


class CoopTypeError(CoopError, TypeError):
    """Wrong kind of value, dtype, or a value that is not compile-time."""


class CoopValueError(CoopError, ValueError):
    """Value out of range, incompatible combination or resource limit."""


class CoopUnsupportedError(CoopError, NotImplementedError):
    """Unsupported group kind or variant, or an unimplemented operation."""


class CoopIndexError(CoopError, IndexError):
    """A static index outside a payload."""


class CoopBuildError(CoopError, RuntimeError):
    """Toolchain or header failure while building CUB code."""


class CoopCompilerContextRequiredError(CoopError, RuntimeError):
    """A kernel-only marker was executed as ordinary Python."""


class CudaCoopAutoRegistrationWarning(UserWarning):
    """Automatic backend registration failed while importing cuda.coop."""


# Users catch and read these as cuda.coop.<name> (docs: errors): print them under the public module.
for _cls in (CoopError, CoopTypeError, CoopValueError, CoopUnsupportedError, CoopIndexError, CoopBuildError,
             CoopCompilerContextRequiredError, CudaCoopAutoRegistrationWarning):
    _cls.__module__ = "cuda.coop"
del _cls


def at(loc: object) -> str:
    """Render a source location (an object with ``filename`` and ``line``, or a ``(file, line)`` pair) as
    ``file:line`` for messages."""
    if isinstance(loc, tuple) and len(loc) == 2:
        return f"{loc[0]}:{loc[1]}"
    filename = getattr(loc, "filename", None)
    line = getattr(loc, "line", None)
    if filename is None:
        return "<unknown location>"
    return f"{filename}:{line}"


def located(exc: CoopError, loc: object) -> CoopError:
    """Prefix an error message with the kernel source location of the call (once: the innermost wins)."""
    if getattr(exc, "coop_location", None) is not None:
        return exc
    exc.args = (f"{at(loc)}: {exc.args[0]}",) + tuple(exc.args[1:])
    exc.coop_location = at(loc)  # type: ignore[attr-defined]
    return exc
