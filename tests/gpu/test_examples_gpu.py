"""Every script in examples/ runs on the GPU, checks its results exactly against NumPy and says so."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.gpu
ROOT = Path(__file__).resolve().parents[2]
# the scripts (examples/workloads/ also holds the kernel and oracle modules its scripts import)
EXAMPLES = sorted(str(path.relative_to(ROOT / "examples")) for pattern in ("*.py", "workloads/*.py")
                  for path in (ROOT / "examples").glob(pattern) if 'if __name__ == "__main__":' in path.read_text())
SUCCESS = {"copy_tiles.py": "copied correctly"}  # every other example prints a line starting with "OK:"


def _compiler_of(name: str) -> str:
    return "cutlass" if Path(name).name.startswith("cute_") else "numba_cuda_mlir"


@pytest.mark.parametrize("name", EXAMPLES)
def test_example_runs_and_checks_itself(name):
    pytest.importorskip(_compiler_of(name))  # a GPU run carries one backend's compiler or both
    out = subprocess.run([sys.executable, str(ROOT / "examples" / name)], cwd=ROOT, capture_output=True, text=True,
                         check=False, timeout=600)
    report = f"exit {out.returncode}\nstdout:\n{out.stdout[-3000:]}\nstderr:\n{out.stderr[-6000:]}"
    assert out.returncode == 0, report
    assert "could not launch" not in out.stdout, report
    if name in SUCCESS:
        assert SUCCESS[name] in out.stdout, report
    else:
        assert any(line.startswith("OK:") for line in out.stdout.splitlines()), report
