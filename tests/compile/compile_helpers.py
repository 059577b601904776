"""Helpers shared by the compile-only test modules (not a test module itself): building a kernel without a GPU,
and checking the compile-time error a bad kernel raises."""
from __future__ import annotations

import inspect
import os
import re

import pytest

import cuda.coop.numba_mlir as numba_coop

#: Where ``expect_compile_error`` looks for the kernel's file in the error message.
SITES = ("message", "first_line", "prefix")


def line_of(fn, marker: str) -> int:
    """Absolute line number of the first source line of ``fn`` (a kernel or plain function) containing ``marker``."""
    lines, start = inspect.getsourcelines(getattr(fn, "py_func", fn))
    for i, text in enumerate(lines):
        if marker in text:
            return start + i
    raise AssertionError(f"{marker!r} not in {fn}")


def build_kernel(kernel, args, *, block=128, target="sm_90", check_inlined=True, check_no_local_memory=True,
                 check_scratch=False):
    """Build ``kernel`` for ``kernel[1, block](*args)`` on ``target`` with ``cuda.coop.numba_mlir.compile_kernel``
    (no GPU needed) and return the ``CompiledKernel``.

    Checks, each as its flag says: ``check_inlined``, every call is inlined (no ``CALL`` in the SASS);
    ``check_no_local_memory``, the kernel uses no local memory; ``check_scratch``, the build reserves scratch
    (``metadata["scratch_bytes"] > 0``).
    """
    built = numba_coop.compile_kernel(kernel, args, block=block, target=target)
    if check_inlined:
        assert "CALL" not in built.sass(), "a call is not inlined"
    if check_no_local_memory:
        assert built.local_memory_bytes == 0, built.local_memory_bytes
    if check_scratch:
        assert built.metadata["scratch_bytes"] > 0, built.metadata
    return built


def expect_compile_error(kernel, args, cls, fragment, *, block=128, target="sm_90", exact_class=False,
                         site="message", site_has_line=False, line_marker=None):
    """Build ``kernel`` as ``build_kernel`` does, expecting the build to raise ``cls``; return the exception.

    Checks: the exception is a ``cls`` (with ``exact_class``, of exactly that class, not a subclass); its message
    contains ``fragment`` and names the file that defines ``kernel`` (the call site), where ``site`` says:
    ``"message"``, ``<file name>:`` anywhere in it; ``"first_line"``, ``<file name>:`` in its first line;
    ``"prefix"``, the message starts with the file's full path and a colon. With ``site_has_line``, a line number
    follows the file name there; with ``line_marker``, ``<file name>:<line>`` is there, ``<line>`` being the first
    line of the kernel's source containing ``line_marker``.
    """
    assert site in SITES, site
    with pytest.raises(cls) as info:
        numba_coop.compile_kernel(kernel, args, block=block, target=target)
    exc = info.value
    if exact_class:
        assert type(exc) is cls, type(exc)
    message = str(exc)
    assert fragment in message, message
    path = getattr(kernel, "py_func", kernel).__code__.co_filename
    name = os.path.basename(path)
    if site == "prefix":
        assert message.startswith(f"{path}:"), message
        where = message
    else:
        where = message.splitlines()[0] if site == "first_line" else message
        assert f"{name}:" in where, message
    if site_has_line:
        assert re.search(rf"{re.escape(name)}:\d+", where), message
    if line_marker is not None:
        assert f"{name}:{line_of(kernel, line_marker)}" in where, message
    return exc
