"""Layering of the package (SPEC 0, 1.1): the compiler-independent layers never import a compiler, only
``numba_mlir/_compat.py`` and ``numba_mlir/_patches.py`` touch numba-cuda-mlir's private modules (only
``cutlass/_dsl.py`` and ``cutlass/_patches.py`` the CuTe DSL), and ``import cuda.coop`` needs only the standard
library.

Sources are parsed with ``ast``; nothing under ``src/`` is imported by the static checks.
"""
from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src"
PACKAGE = SRC / "cuda" / "coop"

#: Compiler-independent layers (SPEC 0): markers, semantics, the CUB code generator and the call layer.
INDEPENDENT_LAYERS = ("_markers", "_semantics", "_cub", "_calls")

#: numba-cuda-mlir's documented API: the package itself and these submodules.
PUBLIC_NUMBA_CUDA_MLIR = {"cuda", "extending", "types", "errors"}

#: The modules allowed to reach into numba-cuda-mlir's private modules: the names used, and the names replaced.
COMPAT = PACKAGE / "numba_mlir" / "_compat.py"
NUMBA_PATCHES = PACKAGE / "numba_mlir" / "_patches.py"


def _modules(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*.py") if "__pycache__" not in p.parts)


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path: Path) -> list[tuple[int, str]]:
    """Every module an import statement in ``path`` may bind, as absolute dotted names with line numbers."""
    return _imports_of(path.read_text(encoding="utf-8"), _module_name(path), path.name == "__init__.py")


def _imports_of(source: str, name: str, is_package: bool) -> list[tuple[int, str]]:
    """``from X import a`` yields ``X`` and ``X.a`` (``a`` may be a submodule); relative imports are resolved
    against the module's package. Imports inside functions count too."""
    tree = ast.parse(source)
    package = name.split(".") if is_package else name.split(".")[:-1]
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)] if node.level > 1 else list(package)
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            found.append((node.lineno, module))
            found.extend((node.lineno, f"{module}.{alias.name}") for alias in node.names if alias.name != "*")
    return found


def _is_under(module: str, root: str) -> bool:
    return module == root or module.startswith(root + ".")


def _is_private_numba_cuda_mlir(module: str) -> bool:
    if not _is_under(module, "numba_cuda_mlir") or module == "numba_cuda_mlir":
        return False
    first = module.split(".")[1]
    return first.startswith("_") or first not in PUBLIC_NUMBA_CUDA_MLIR


def test_resolver_handles_relative_imports():
    """Sanity check of the resolver on the shapes the layering rules look for."""
    sample = PACKAGE / "_markers" / "base.py"
    names = {m for _, m in _imports(sample)}
    assert names, "the resolver found no imports in _markers/base.py"
    assert all(not m.startswith(".") for m in names)
    relative = _imports_of("from ..numba_mlir import _compat\nfrom .. import numba_mlir\n"
                           "def f():\n    import numba\n", "cuda.coop._markers.base", False)
    assert {m for _, m in relative} == {"cuda.coop.numba_mlir", "cuda.coop.numba_mlir._compat", "cuda.coop",
                                        "numba"}
    assert _is_private_numba_cuda_mlir("numba_cuda_mlir._whole_function_planners")
    assert _is_private_numba_cuda_mlir("numba_cuda_mlir.numba_cuda.core.errors")
    assert not _is_private_numba_cuda_mlir("numba_cuda_mlir.extending.type_callable")
    assert not _is_private_numba_cuda_mlir("numba_cuda_mlir")


@pytest.mark.parametrize("layer", INDEPENDENT_LAYERS)
def test_independent_layers_import_no_compiler(layer):
    files = _modules(PACKAGE / layer)
    assert files, layer
    bad = []
    for path in files:
        for line, module in _imports(path):
            if any(_is_under(module, root) for root in ("numba_cuda_mlir", "numba", "cuda.coop.numba_mlir", "cutlass",
                                                        "cuda.coop.cutlass")):
                bad.append(f"{path.relative_to(SRC)}:{line}: {module}")
    assert not bad, "compiler imports in a compiler-independent layer:\n" + "\n".join(bad)


def test_only_compat_and_patches_import_private_numba_cuda_mlir_modules():
    bad = []
    for path in _modules(PACKAGE):
        if path in (COMPAT, NUMBA_PATCHES):
            continue
        for line, module in _imports(path):
            if _is_private_numba_cuda_mlir(module):
                bad.append(f"{path.relative_to(SRC)}:{line}: {module}")
    assert not bad, ("private numba-cuda-mlir modules imported outside numba_mlir/_compat.py and _patches.py:\n"
                     + "\n".join(bad))


def test_compat_is_where_the_private_imports_are():
    """The rule above is not vacuous: _compat.py and _patches.py exist and do import private numba-cuda-mlir
    modules."""
    for path in (COMPAT, NUMBA_PATCHES):
        assert path.is_file()
        assert any(_is_private_numba_cuda_mlir(m) for _, m in _imports(path)), path


_PROBE = r"""
import json, sys
before = set(sys.modules)
import cuda.coop
new = sorted(set(sys.modules) - before)
print(json.dumps({"new": new, "stdlib": sorted(sys.stdlib_module_names)}))
"""


def test_import_cuda_coop_uses_only_the_standard_library():
    env = {k: v for k, v in os.environ.items() if not k.startswith("CUDA_COOP_")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(SRC), env.get("PYTHONPATH")]))
    result = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True, timeout=120, env=env)
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout.strip().splitlines()[-1])
    stdlib = set(data["stdlib"])
    foreign = [m for m in data["new"]
               if m.split(".")[0] not in stdlib and m != "cuda" and not _is_under(m, "cuda.coop")]
    assert not foreign, f"import cuda.coop imported non-standard-library modules: {foreign}"
    for heavy in ("numpy", "numba", "numba_cuda_mlir", "cuda.bindings", "cuda.core", "cuda.coop.numba_mlir"):
        assert not any(_is_under(m, heavy) for m in data["new"]), heavy


_CLI_PROBE = r"""
import contextlib, io, json, sys
before = set(sys.modules)
from cuda.coop._cli import main
with contextlib.redirect_stdout(io.StringIO()):
    main(["explain", "load", "--algorithm", "warp_transpose"])
    main(["explain", "run_length_decode", "--svg", sys.argv[1]])
    main(["cache", "info"])
new = sorted(set(sys.modules) - before)
print(json.dumps({"new": new, "stdlib": sorted(sys.stdlib_module_names)}))
"""


def test_cli_explain_and_cache_use_only_the_standard_library(tmp_path):
    """``python -m cuda.coop explain`` and ``cache`` start as fast as ``import cuda.coop``: only the doctor (and
    its sample build, in ``_cli/sample_kernel.py``) imports the backend, and only when it runs."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("CUDA_COOP_")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(SRC), env.get("PYTHONPATH")]))
    env["XDG_CACHE_HOME"] = str(tmp_path)
    result = subprocess.run([sys.executable, "-c", _CLI_PROBE, str(tmp_path / "picture.svg")], capture_output=True,
                            text=True, timeout=120, env=env)
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout.strip().splitlines()[-1])
    stdlib = set(data["stdlib"])
    foreign = [m for m in data["new"]
               if m.split(".")[0] not in stdlib and m != "cuda" and not _is_under(m, "cuda.coop")]
    assert not foreign, f"the explain/cache commands imported non-standard-library modules: {foreign}"
    for heavy in ("cuda.coop.numba_mlir", "cuda.coop._cli.sample_kernel", "cuda.coop._cli.doctor"):
        assert not any(_is_under(m, heavy) for m in data["new"]), heavy


def test_layouts_are_stated_once():
    """The explainers render from _semantics/layouts.py: no other CLI module spells a layout formula itself."""
    formula = re.compile(r"\b(?:rank|r|t)\s*\*\s*(?:items|k|shape\.items)\s*\+\s*(?:slot|s|i)\b|"
                         r"\b(?:rank|r|t)\s*\+\s*(?:slot|s|i)\s*\*\s*(?:threads|shape\.threads)\b")
    offenders = [f"{p.relative_to(SRC)}:{n}" for p in _modules(PACKAGE / "_cli")
                 for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
                 if formula.search(line.split("#")[0])]
    assert not offenders, "layout arithmetic outside _semantics/layouts.py:\n" + "\n".join(offenders)


#: How a backend's name is written: its registered names, its package, its compiler's package.
BACKEND_NAME = re.compile(r"numba[-_]?cuda[-_]?mlir|numba_mlir|numba|cutlass|\bcute\b", re.IGNORECASE)


def _docstring_nodes(tree: ast.AST) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(
                    first.value.value, str):
                found.add(id(first.value))
    return found


def _backend_names_in_code(source: str) -> list[tuple[int, str]]:
    """Names and strings of the code (docstrings and comments aside) that name a backend."""
    tree = ast.parse(source)
    docstrings = _docstring_nodes(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            text = node.value
        elif isinstance(node, ast.Name):
            text = node.id
        elif isinstance(node, ast.Attribute):
            text = node.attr
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            text = node.name
        elif isinstance(node, ast.alias):
            text = node.name
        elif isinstance(node, ast.ImportFrom):
            text = node.module or ""
        else:
            continue
        if BACKEND_NAME.search(text):
            found.append((getattr(node, "lineno", 0), text))
    return found


def test_the_backend_free_layers_name_no_backend():
    """What a backend is called reaches the backend-free layers as data (the current backend context, a build's
    backend tag), so a second backend needs no edit there."""
    bad = []
    for layer in INDEPENDENT_LAYERS:
        for path in _modules(PACKAGE / layer):
            bad += [f"{path.relative_to(SRC)}:{line}: {text[:80]!r}"
                    for line, text in _backend_names_in_code(path.read_text(encoding="utf-8"))]
    assert not bad, "backend names in a backend-free layer:\n" + "\n".join(bad)


def test_the_backend_name_check_finds_names_and_strings_but_not_docstrings():
    source = '"""Docs may name numba-cuda-mlir."""\nhint = "use cuda.coop.numba_mlir"\nfrom cutlass import cute\n'
    assert sorted(line for line, _ in _backend_names_in_code(source)) == [2, 3, 3]


def _package_imports(path: Path) -> set[str]:
    """Modules of this package that ``path`` imports, at module level or inside a function: a cycle closed by an
    import inside a function is still a circle of modules that need each other."""
    modules = {_module_name(p) for p in _modules(PACKAGE)}
    return {name for _, name in _imports(path) if name in modules}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    cycles: list[list[str]] = []

    def visit(module: str, path: list[str]) -> None:
        state[module] = 1
        for child in sorted(graph.get(module, ())):
            if state.get(child) == 1:
                cycles.append(path[path.index(child):] + [child])
            elif child not in state:
                visit(child, path + [child])
        state[module] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])
    return cycles


def test_the_cycle_search_finds_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c", "a"]]
    assert _cycles({"a": {"b", "c"}, "b": {"c"}, "c": set()}) == []


def test_no_import_cycle():
    graph = {_module_name(path): _package_imports(path) for path in _modules(PACKAGE)}
    for name in graph:  # a package is imported before its submodules: importing it (or itself) is no cycle
        graph[name] = {m for m in graph[name] if m != name and not name.startswith(m + ".")}
    cycles = _cycles(graph)
    assert not cycles, "import cycles:\n" + "\n".join(" -> ".join(c) for c in cycles)


CUTE_DSL = PACKAGE / "cutlass" / "_dsl.py"
CUTE_PATCHES = PACKAGE / "cutlass" / "_patches.py"


def test_only_the_dsl_and_patches_modules_import_the_cute_dsl():
    """Every name of the CuTe DSL the backend uses is behind cutlass/_dsl.py, every one it replaces behind
    cutlass/_patches.py (and both behind its version check, _about.py)."""
    bad = []
    for path in _modules(PACKAGE):
        if path in (CUTE_DSL, CUTE_PATCHES, PACKAGE / "cutlass" / "_about.py"):
            continue
        for line, module in _imports(path):
            if _is_under(module, "cutlass"):
                bad.append(f"{path.relative_to(SRC)}:{line}: {module}")
    assert not bad, "CuTe DSL imports outside cutlass/_dsl.py and _patches.py:\n" + "\n".join(bad)
    assert any(_is_under(m, "cutlass._mlir") for _, m in _imports(CUTE_DSL))
    assert any(_is_under(m, "cutlass.base_dsl") for _, m in _imports(CUTE_PATCHES))
