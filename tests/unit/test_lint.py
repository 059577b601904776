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


#: the most positional parameters a function of the planning layers may take (options travel as keyword records)
POSITIONAL_LIMIT = 5
PLANNING_LAYERS = ("_semantics", "_calls")


def positional_parameters(source: str) -> list[tuple[int, str, int]]:
    """(line, name, count) of every function in ``source`` with more than POSITIONAL_LIMIT positional parameters
    (``self`` and ``cls`` not counted; keyword-only ones never are)."""
    import ast

    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            names = [a.arg for a in (*node.args.posonlyargs, *node.args.args) if a.arg not in ("self", "cls")]
            if len(names) > POSITIONAL_LIMIT:
                found.append((node.lineno, node.name, len(names)))
    return found


def test_positional_parameters_are_counted():
    source = "def six(a, b, c, d, e, f): ...\ndef five(self, a, b, c, d, e, *, f): ...\n"
    assert positional_parameters(source) == [(1, "six", 6)]


def test_no_planning_function_takes_more_than_5_positional_parameters():
    package = ROOT / "src" / "cuda" / "coop"
    long = sorted(f"{path.relative_to(package)}:{line} {name}: {count} positional parameters"
                  for layer in PLANNING_LAYERS for path in (package / layer).rglob("*.py")
                  for line, name, count in positional_parameters(path.read_text(encoding="utf-8")))
    assert not long, (f"functions of {', '.join(PLANNING_LAYERS)} with more than {POSITIONAL_LIMIT} positional "
                      "parameters (pass options as keyword-only parameters or a frozen options record):\n"
                      + "\n".join(long))
