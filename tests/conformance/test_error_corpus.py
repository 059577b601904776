"""The shared error corpus on every backend, without a GPU: each common-API mistake of ``error_cases.py`` is reported
by numba-cuda-mlir and the CuTe DSL with the same class, the same catalogue wording and the user's file and line
(SPEC §0 rule 4, §10; docs: errors)."""
from __future__ import annotations

import re

import pytest

from cuda import coop

from . import harness_cutlass, harness_numba
from .error_cases import ERRORS

BACKENDS = {harness_numba.NAME: harness_numba, harness_cutlass.NAME: harness_cutlass}
# the classes a mistake is reported as: the catalogue's, and Python's own for a name a namespace lacks
REPORTED = (coop.CoopError, AttributeError)
# what must never be in a message's first line: compiler IR, type reprs of a compiler, C++
FORBIDDEN = [re.compile(p) for p in (r"\$[0-9A-Za-z]", r"!llvm", r"func\.func", r"%", r"cub::", r"template<",
                                     r"::", r"!cute", r"memref")]


@pytest.mark.parametrize("backend", list(BACKENDS))
@pytest.mark.parametrize("error", ERRORS, ids=[e.id for e in ERRORS])
def test_the_mistake_is_reported_alike(backend, error):
    harness = BACKENDS[backend]
    missing = harness.available()
    if missing:
        pytest.skip(missing)
    with pytest.raises(REPORTED) as info:
        harness.compile_case(error.case)
    exc = info.value
    message = str(exc)
    first = message.splitlines()[0]
    assert type(exc) is error.error, f"{type(exc).__name__}: {message}"
    assert error.fragment in message, message
    assert f"error_cases.py:{error.line}: " in first, first
    for pattern in FORBIDDEN:
        assert not pattern.search(first), f"compiler text {pattern.pattern!r} in the first line: {first}"


@pytest.mark.parametrize("error", ERRORS, ids=[e.id for e in ERRORS])
def test_both_backends_say_the_same(error):
    """The first line of the message is word for word the same on both backends (where a case says why they may
    differ, the same up to the words 'depends on', and both name the condition's line)."""
    missing = [m for m in (h.available() for h in BACKENDS.values()) if m]
    if missing:
        pytest.skip("; ".join(missing))
    firsts, raw = {}, {}
    for name, harness in BACKENDS.items():
        with pytest.raises(REPORTED) as info:
            harness.compile_case(error.case)
        # a qualified-only option names the namespace of the backend compiling the kernel (C3); a dtype only one
        # backend builds names that backend's namespace on both (P1 for float16)
        namespace = {harness_numba.NAME: "cuda.coop.numba_mlir", harness_cutlass.NAME: "cuda.coop.cutlass"}[name]
        raw[name] = str(info.value).splitlines()[0]
        firsts[name] = raw[name].replace(namespace, "<backend namespace>")
    if len(set(raw.values())) == 1:
        return
    if error.words_differ:
        firsts = {name: first.split("depends on ")[0] + "depends on ... (" + first.rsplit(" (", 1)[-1]
                  for name, first in firsts.items()}
    assert len(set(firsts.values())) == 1, firsts
