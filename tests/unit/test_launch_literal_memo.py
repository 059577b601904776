"""The launch-path memo of literal argument types (issue 12, item 4): a kernel specialised on an integer argument
(SPEC 7.2) has numba-cuda-mlir rebuild the argument's literal type on every launch; cuda.coop memoises it. The memo
must return exactly the object numba-cuda-mlir would build, keep int and bool apart, and leave errors alone."""
from __future__ import annotations

import pytest

pytest.importorskip("numba_cuda_mlir")  # the backend raises ImportError, not a skip, without its compiler
nb = pytest.importorskip("cuda.coop.numba_mlir._patches")


def test_memo_returns_numba_cuda_mlirs_own_literal_types_and_builds_each_once(monkeypatch):
    from numba_cuda_mlir.descriptor import MLIRDispatcher
    from numba_cuda_mlir.numba_cuda import types

    nb.memoize_literal_launch_types()
    nb.memoize_literal_launch_types()  # idempotent: one wrapper, not two
    built: list[object] = []
    real = types.literal

    def counting(value):
        built.append(value)
        return real(value)

    monkeypatch.setattr(types, "literal", counting)
    value = 7_654_321  # not used by any other test: its first call builds it
    first = MLIRDispatcher._literal_type_for_value(value, 2)
    again = MLIRDispatcher._literal_type_for_value(value, 0)
    assert first is again is real(value)
    assert built == [value]  # the second launch's lookup did not rebuild it
    one, true = MLIRDispatcher._literal_type_for_value(1, 0), MLIRDispatcher._literal_type_for_value(True, 0)
    assert one is real(1) and true is real(True) and one is not true


@pytest.mark.parametrize("value", [1.5, "4"])
def test_memo_leaves_numba_cuda_mlirs_errors_alone(value):
    from numba_cuda_mlir.descriptor import MLIRDispatcher

    nb.memoize_literal_launch_types()
    for _ in range(2):  # a rejected value is rejected every time, never memoised
        with pytest.raises(TypeError, match="argument 3 is"):
            MLIRDispatcher._literal_type_for_value(value, 3)
