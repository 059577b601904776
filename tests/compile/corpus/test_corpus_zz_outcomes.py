"""Session-level check of the corpus: every case must end in a CoopError subclass (SPEC 10.1).

Runs after the other corpus modules (pytest orders files by name). Any numba TypingError, AssertionError,
KeyError, internal compiler error and so on that escaped from a case is listed here.
"""
from __future__ import annotations

import pytest

from cuda import coop

#: The R-rows are the only documented exceptions outside the CoopError family (SPEC 10.2 R2-R8).
DOCUMENTED_NON_COOP = ()


def test_no_exception_outside_the_coop_error_family_escaped(corpus_outcomes):
    if not corpus_outcomes:
        pytest.skip("no corpus case ran in this session (run the whole tests/compile/corpus folder)")
    escaped = [(case, f"{t.__module__}.{t.__qualname__}") for case, t in corpus_outcomes
               if not issubclass(t, coop.CoopError) and t not in DOCUMENTED_NON_COOP]
    assert not escaped, "exceptions outside the CoopError family escaped:\n" + "\n".join(
        f"  {case}: {name}" for case, name in escaped)
