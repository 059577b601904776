"""The conformance suite on the GPU: every case of cases.py, run by every backend, against its NumPy oracle."""
from __future__ import annotations

import pytest

from . import harness_cutlass, harness_numba
from .cases import CASES, check

pytestmark = pytest.mark.gpu

BACKENDS = {harness_numba.NAME: (harness_numba, harness_numba.available),
            harness_cutlass.NAME: (harness_cutlass, harness_cutlass.gpu_available)}


def params():
    for backend in BACKENDS:
        for case in CASES:
            marks = []
            if backend in case.known_failures:
                marks.append(pytest.mark.xfail(strict=True, reason=case.known_failures[backend]))
            yield pytest.param(backend, case, id=f"{backend}:{case.id}", marks=marks)


@pytest.mark.parametrize("backend, case", list(params()))
def test_case(backend, case):
    harness, available = BACKENDS[backend]
    missing = available()
    if missing:
        pytest.skip(missing)
    values = case.inputs()
    after = harness.run(case, values)
    check(case, values, after)
