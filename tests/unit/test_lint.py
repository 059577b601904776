"""The project's lint (ruff, configured in pyproject.toml) runs with the suite, so CI fails on a finding."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_ruff_finds_nothing():
    result = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "."], cwd=ROOT,
                            capture_output=True, text=True, timeout=300, check=False)
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]


#: the most lines a module of the package may have (CONTRIBUTING.md, "Style": split by family first)
MODULE_LINES_LIMIT = 600


def test_no_module_of_the_package_exceeds_600_lines():
    package = ROOT / "src" / "cuda" / "coop"
    long = sorted(f"{path.relative_to(package)}: {lines} lines" for path in package.rglob("*.py")
                  if (lines := len(path.read_text(encoding="utf-8").splitlines())) > MODULE_LINES_LIMIT)
    assert not long, f"modules over {MODULE_LINES_LIMIT} lines (split them):\n" + "\n".join(long)
