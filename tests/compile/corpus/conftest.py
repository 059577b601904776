"""Shared machinery of the malformed-kernel corpus (SPEC 10): one ``expect`` helper for every case.

Each case compiles one small kernel through ``cuda.coop.numba_mlir.compile_kernel`` (no GPU needed) and checks
that the error

* is exactly the documented public class (``type(exc) is cls``, not merely a subclass);
* carries the catalogue wording;
* names this corpus file and the line of the offending call (marked in the kernel with a ``# HERE`` comment);
* keeps compiler IR and C++ out of its first line.

Every outcome is recorded; ``test_corpus_zz_outcomes.py`` fails if anything outside the ``CoopError`` family
escaped from any case of the session.
"""
from __future__ import annotations

import inspect
import os
import re

import pytest

import cuda.coop.numba_mlir as numba_coop
from cuda import coop

#: What must never appear in the first line of a user-facing message (SPEC 10.1): Numba IR temporaries
#: (``$92call.11``), Numba type reprs, MLIR/LLVM text and C++.
FORBIDDEN_IN_FIRST_LINE = [
    re.compile(r"\$[0-9A-Za-z]"),
    re.compile(r"UniTuple\("),
    re.compile(r"array\(\w+, \d+d"),  # Numba array type reprs such as array(int32, 1d, C)
    re.compile(r"!llvm"),
    re.compile(r"func\.func"),
    re.compile(r"%"),
    re.compile(r"cub::"),
    re.compile(r"template<"),
    re.compile(r"::"),
]

PUBLIC_CLASSES = (coop.CoopTypeError, coop.CoopValueError, coop.CoopUnsupportedError, coop.CoopIndexError,
                  coop.CoopBuildError)

#: (case, exception type) for every case compiled in this session.
OUTCOMES: list[tuple[str, type]] = []


def line_of(fn, marker: str) -> int:
    """Absolute line number of the first source line of ``fn`` (a kernel or plain function) containing ``marker``."""
    lines, start = inspect.getsourcelines(getattr(fn, "py_func", fn))
    for i, text in enumerate(lines):
        if marker in text:
            return start + i
    raise AssertionError(f"{marker!r} not in {fn}")


def first_line_is_clean(message: str) -> None:
    first = message.splitlines()[0] if message else ""
    for pattern in FORBIDDEN_IN_FIRST_LINE:
        assert not pattern.search(first), f"compiler text {pattern.pattern!r} in the first line: {first}"
    prefix = re.match(r"(\S+:\d+: )", first)
    assert not (prefix and first[len(prefix.group(1)):].startswith(prefix.group(1))), f"location repeated: {first}"


def _source_file(kernel) -> str:
    return os.path.basename(getattr(kernel, "py_func", kernel).__code__.co_filename)


def _compile(kernel, args, block, target):
    return numba_coop.compile_kernel(kernel, args, block=block, target=target)


def _expect(request, kernel, args, cls, fragment, *, block=128, marker="# HERE", where=None, target="sm_90",
            locate="line"):
    """Compile ``kernel`` and check the error against the catalogue row.

    ``where`` is the function whose source holds ``marker`` (default: the kernel itself, e.g. a helper for H1).
    ``locate``: ``"line"`` (file and line of the marked call), ``"file"`` (file name only: errors attributed to the
    kernel as a whole, such as G22) or ``"none"`` (errors about the compile request itself, such as C15).
    """
    assert cls in PUBLIC_CLASSES, cls
    assert locate in ("line", "file", "none"), locate
    case = request.node.nodeid
    try:
        _compile(kernel, args, block, target)
    except BaseException as exc:  # noqa: BLE001 - every escape is recorded and judged below
        OUTCOMES.append((case, type(exc)))
        message = str(exc)
        assert isinstance(exc, coop.CoopError), (f"non-CoopError escaped: {type(exc).__module__}."
                                                 f"{type(exc).__name__}: {message}")
        assert type(exc) is cls, f"expected {cls.__name__}, got {type(exc).__name__}: {message}"
        assert fragment in message, f"{fragment!r} not in {message!r}"
        first_line_is_clean(message)
        filename = _source_file(where if where is not None else kernel)
        if locate == "file":
            assert filename in message, message
        elif locate == "line":
            line = line_of(where if where is not None else kernel, marker)
            assert f"{filename}:{line}" in message, f"{filename}:{line} not in {message!r}"
        return exc
    OUTCOMES.append((case, type(None)))
    pytest.fail(f"{case}: compiled without the expected {cls.__name__}: {fragment}")


@pytest.fixture
def expect(request):
    """``expect(kernel, args, cls, fragment, *, block=128, marker="# HERE", where=None, target="sm_90",
    locate="line")`` -> the raised exception."""

    def run(kernel, args, cls, fragment, **kwargs):
        return _expect(request, kernel, args, cls, fragment, **kwargs)

    return run


@pytest.fixture
def record(request):
    """Record the outcome of a case that is checked by hand (R-rows): ``record(exc_type)``."""

    def run(exc_type):
        OUTCOMES.append((request.node.nodeid, exc_type))

    return run


@pytest.fixture
def corpus_outcomes():
    """Every (case, exception type) recorded so far in this session."""
    return OUTCOMES
