"""The typed stubs shipped beside the public namespaces (SPEC 1.1) are current: ``cuda.coop._stubs`` renders them
from the live markers, they parse, and they declare every public name."""
from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

from cuda.coop import _stubs
from test_layering import _backend_names_in_code, _imports, _is_under

NAMESPACES = _stubs.namespaces()
REGENERATE = f"run `{_stubs.WRITE_COMMAND}` and commit the stubs"


def _module(namespace: str):
    try:
        return importlib.import_module(namespace)
    except ImportError as exc:  # a backend namespace needs its compiler
        pytest.skip(f"{namespace} cannot be imported here: {exc}")


def _top_level_names(tree: ast.Module) -> set[str]:
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef)):
            names.add(node.name)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, ast.Assign):
            names.update(target.id for target in node.targets if isinstance(target, ast.Name))
        elif isinstance(node, ast.ImportFrom):
            names.update(alias.asname for alias in node.names if alias.asname == alias.name)  # explicit re-exports
    return names


def test_the_common_namespace_and_the_shipped_backends_have_stubs():
    assert NAMESPACES[0] == "cuda.coop"
    assert "cuda.coop.numba_mlir" in NAMESPACES
    assert _stubs.stub_path("cuda.coop") == Path(_stubs.__file__).parent / "__init__.pyi"


@pytest.mark.parametrize("namespace", NAMESPACES)
def test_stub_is_current(namespace):
    _module(namespace)
    path = _stubs.stub_path(namespace)
    assert path.is_file(), f"{path} is missing: {REGENERATE}"
    changes = _stubs.diff(namespace)
    assert not changes, f"the {namespace} stub is not current: {REGENERATE}\n{changes[:6000]}"


@pytest.mark.parametrize("namespace", NAMESPACES)
def test_stub_parses_and_declares_every_public_name(namespace):
    module = _module(namespace)
    text = _stubs.stub_path(namespace).read_text(encoding="utf-8")
    tree = ast.parse(text, filename=f"{namespace}.pyi", feature_version=(3, 11))
    public = set(module.__all__)
    missing = sorted(public - _top_level_names(tree))
    assert not missing, f"{namespace} names missing from its stub: {missing}; {REGENERATE}"
    declared_all = next(node.value for node in tree.body if isinstance(node, ast.Assign)
                        and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets))
    assert ast.literal_eval(declared_all) == sorted(public)
    assert all(len(line) <= _stubs.LINE_LENGTH for line in text.splitlines())


def test_check_reports_a_stale_stub_and_write_repairs_it(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(_stubs, "namespaces", lambda: ["cuda.coop"])
    monkeypatch.setattr(_stubs, "stub_path", lambda namespace: tmp_path / "__init__.pyi")
    stale = _stubs.render("cuda.coop").replace("def load(", "def load_renamed(")
    (tmp_path / "__init__.pyi").write_text(stale, encoding="utf-8")
    assert _stubs.main(["--check"]) == 1
    out, err = capsys.readouterr()
    assert "-def load_renamed(" in out and "+def load(" in out
    assert _stubs.WRITE_COMMAND in err
    assert _stubs.main(["--write"]) == 0
    assert _stubs.main(["--check"]) == 0
    assert (tmp_path / "__init__.pyi").read_text(encoding="utf-8") == _stubs.render("cuda.coop")


def test_selectors_are_literal_choices_and_qualified_ones_add_theirs():
    common = _stubs.render("cuda.coop")
    assert '_ExchangeMode: TypeAlias = Literal["striped_to_blocked", "blocked_to_striped"]' in common
    assert "mode: _ExchangeMode = " in common and "sharing: _Sharing = " in common
    assert "level: _QueryLevel = " in common
    _module("cuda.coop.numba_mlir")
    qualified = _stubs.render("cuda.coop.numba_mlir")
    assert "mode: _QualifiedExchangeMode = " in qualified and '"scatter_to_striped_flagged",' in qualified
    assert "from cuda.coop import (" in qualified and "    ThreadData as ThreadData," in qualified


def test_the_generator_is_backend_free():
    """It finds backend namespaces through the registry: it imports no compiler at module level and names none."""
    path = Path(_stubs.__file__)
    imported = [m for _, m in _imports(path)]
    assert not [m for m in imported if any(_is_under(m, root) for root in
                                           ("numba", "numba_cuda_mlir", "cuda.coop.numba_mlir"))]
    assert not _backend_names_in_code(path.read_text(encoding="utf-8"))
