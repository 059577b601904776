"""The project's type check (mypy, configured in pyproject.toml) runs with the suite, so CI fails on a finding."""
from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _mypy(*paths: str) -> subprocess.CompletedProcess[str]:
    if importlib.util.find_spec("mypy") is None:
        pytest.skip("mypy is not installed (pip install -e '.[test]')")
    return subprocess.run([sys.executable, "-m", "mypy", *paths], cwd=ROOT,
                          capture_output=True, text=True, timeout=600, check=False)


def test_mypy_finds_nothing():
    result = _mypy()
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]


@pytest.mark.parametrize("backend", ["numba_mlir", "cutlass"])
def test_mypy_finds_nothing_in_a_backend_package_module(backend):
    """The configured run reads ``<backend>/__init__.pyi`` (the generated stub) in place of the module itself."""
    result = _mypy(f"src/cuda/coop/{backend}/__init__.py")
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]
