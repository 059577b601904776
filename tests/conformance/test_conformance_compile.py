"""The conformance suite without a GPU: each backend's compile_kernel builds a representative subset of the cases
(one per operation variant and dtype, the (block shape, K) combinations rotated), so CI proves they compile; the
CuTe kernels with every call inlined (no CALL, no local memory). The cases build in batches, one kernel per batch
(cases.compile_batches); a batch that fails is built again case by case, and the test names each case that fails
alone, with its error."""
from __future__ import annotations

import pytest

from . import harness_cutlass, harness_numba
from .cases import batch_id, compile_batches

BACKENDS = {harness_numba.NAME: harness_numba, harness_cutlass.NAME: harness_cutlass}


def params():
    for backend in BACKENDS:
        for batch in compile_batches(backend):
            marks = []
            if len(batch) == 1 and backend in batch[0].known_failures:
                marks.append(pytest.mark.xfail(strict=True, reason=batch[0].known_failures[backend]))
            yield pytest.param(backend, batch, id=f"{backend}:{batch_id(batch)}", marks=marks)


def _first_line(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {(str(exc).strip().splitlines() or [''])[0]}"


def _alone(harness, batch) -> list[str]:
    """Each case of ``batch`` built on its own: the failures, as 'case id: error'."""
    failures = []
    for case in batch:
        try:
            harness.compile_batch((case,))
        except Exception as exc:  # noqa: BLE001 - reported per case below
            failures.append(f"{case.id}: {_first_line(exc)}")
    return failures


@pytest.mark.parametrize("backend, batch", list(params()))
def test_compiles(backend, batch):
    harness = BACKENDS[backend]
    missing = harness.available()
    if missing:
        pytest.skip(missing)
    ids = [case.id for case in batch]
    if len(batch) == 1:
        built = harness.compile_batch(batch)
    else:
        try:
            built = harness.compile_batch(batch)
        except Exception as exc:  # noqa: BLE001 - which case is at fault decides the report
            failures = _alone(harness, batch)
            where = ("; ".join(failures) if failures
                     else f"every case builds alone, the batch of {len(batch)} does not: {_first_line(exc)}")
            pytest.fail(f"{backend}: {where}", pytrace=False)
    assert built.cubin, ids
    if backend == harness_cutlass.NAME:  # the bitcode route inlines every call (docs: cutlass, "How it works")
        assert built.local_memory_bytes == 0, ids
        assert "CALL" not in built.sass(), ids
