"""The documentation in docs/ builds with Sphinx with warnings as errors, shows every example, and the public
docstrings point at its pages rather than at the specification."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_docs_build_without_warnings(tmp_path):
    pytest.importorskip("sphinx")
    command = [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html",
               "-d", str(tmp_path / "doctrees"), str(ROOT / "docs"), str(tmp_path / "html")]
    out = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False, timeout=600)
    assert out.returncode == 0, f"{' '.join(command)}\n{out.stdout[-4000:]}\n{out.stderr[-8000:]}"
    assert "WARNING" not in out.stderr and "ERROR" not in out.stderr, out.stderr[-8000:]
    for page in ("index", "tutorial", "concepts", "errors", "api/common", "api/numba_mlir",
                 "operations/run_length_decode"):
        assert (tmp_path / "html" / f"{page}.html").is_file(), page


def test_every_example_is_shown_in_the_docs():
    included = set()
    for page in (ROOT / "docs").rglob("*.rst"):
        included |= set(re.findall(r"literalinclude:: \.\./\.\./examples/(\w+\.py)", page.read_text()))
    examples = {path.name for path in (ROOT / "examples").glob("*.py")}
    assert examples <= included, sorted(examples - included)


def test_public_docstrings_point_to_the_docs_not_the_spec():
    import cuda.coop as coop
    import cuda.coop.numba_mlir as numba_coop

    for module in (coop, numba_coop):
        for name in module.__all__:
            obj = getattr(module, name)
            docs = [getattr(obj, "__doc__", None) or ""]
            if isinstance(obj, type):
                docs += [getattr(member, "__doc__", None) or "" for member in vars(obj).values() if callable(member)]
            for doc in docs:
                assert not re.search(r"\bSPEC\b", doc), f"{module.__name__}.{name}: {doc[:200]}"
    assert "SPEC" not in (numba_coop.__doc__ or "")
