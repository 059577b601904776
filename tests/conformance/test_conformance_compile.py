"""The conformance suite without a GPU: each backend's compile_kernel builds a representative subset of the cases
(one per operation variant and dtype, the (block shape, K) combinations rotated), so CI proves they compile; the
CuTe kernels with every call inlined (no CALL, no local memory)."""
from __future__ import annotations

import pytest

from . import harness_cutlass, harness_numba
from .cases import compile_subset

BACKENDS = {harness_numba.NAME: harness_numba, harness_cutlass.NAME: harness_cutlass}


def params():
    for backend in BACKENDS:
        for case in compile_subset():
            marks = []
            if backend in case.known_failures:
                marks.append(pytest.mark.xfail(strict=True, reason=case.known_failures[backend]))
            yield pytest.param(backend, case, id=f"{backend}:{case.id}", marks=marks)


@pytest.mark.parametrize("backend, case", list(params()))
def test_compiles(backend, case):
    harness = BACKENDS[backend]
    missing = harness.available()
    if missing:
        pytest.skip(missing)
    built = harness.compile_case(case)
    assert built.cubin, case.id
    if backend == harness_cutlass.NAME:  # the bitcode route inlines every call (docs: cutlass, "How it works")
        assert built.local_memory_bytes == 0, case.id
        assert "CALL" not in built.sass(), case.id
