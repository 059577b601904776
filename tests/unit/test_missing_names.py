"""A name a cuda.coop namespace lacks is Python's AttributeError offering the nearest name (issue 37 item 15); inside
kernels both backends report it at the user's line (tests/conformance/error_cases.py, ``missing-name-*``)."""
from __future__ import annotations

import importlib
import importlib.util
import subprocess
import sys

import pytest

from cuda import coop


def _namespace(name):
    package = {"cuda.coop.numba_mlir": "numba_cuda_mlir", "cuda.coop.cutlass": "cutlass"}.get(name)
    if package is not None and importlib.util.find_spec(package) is None:
        pytest.skip(f"{package} is not installed")
    return importlib.import_module(name)


@pytest.mark.parametrize("name", ["cuda.coop", "cuda.coop.numba_mlir", "cuda.coop.cutlass"])
def test_a_misspelt_operation_offers_the_nearest(name):
    namespace = _namespace(name)
    with pytest.raises(AttributeError) as info:
        namespace.exclusive_summ
    assert str(info.value) == f"{name} has no operation 'exclusive_summ'; did you mean 'exclusive_sum'?"
    with pytest.raises(AttributeError) as info:
        namespace.TheadData
    assert str(info.value) == f"{name} has no attribute 'TheadData'; did you mean 'ThreadData'?"


def test_a_name_with_no_near_one_names_the_release():
    with pytest.raises(AttributeError) as info:
        coop.stream_compact_if
    assert str(info.value) == (f"cuda.coop has no operation 'stream_compact_if' in cuda-coop {coop.__version__}; "
                               "cuda.coop.__all__ lists the names it has")


def test_python_probes_behave_as_on_any_module():
    assert not hasattr(coop, "__wrapped__") and getattr(coop, "no_such_name", 7) == 7
    with pytest.raises(AttributeError, match="^module 'cuda.coop' has no attribute '_private'$"):
        coop._private


def test_submodules_still_import_through_the_package():
    code = ("from cuda.coop import _stubs, _cli\nimport cuda.coop\n"
            "assert cuda.coop._stubs is _stubs\nprint('ok')")
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout == "ok\n"
