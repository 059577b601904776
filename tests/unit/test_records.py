"""Each operation is declared once (``cuda.coop._markers.records``): every list of operations is derived from the
records, and no module keeps a table of its own (issue 31, part 1)."""
from __future__ import annotations

import ast
import importlib
import inspect
import sys
from pathlib import Path

import pytest

import cuda.coop as coop
from cuda.coop._backend_context import COMMON_NAMESPACE
from cuda.coop._calls import FAMILIES
from cuda.coop._cli.explain import EXPLAINERS
from cuda.coop._errors import CoopUnsupportedError
from cuda.coop._markers import OPERATIONS
from cuda.coop._markers.records import (
    BLOCK, LOGICAL_WARP, WARP, Extension, Groups, Operation, declare, qualified, records,
)
from cuda.coop._semantics.common import GroupSpec
from cuda.coop._semantics.groups import require_operation_group
from cuda.coop._semantics.tuples import takes_tuples, tuple_operand
from cuda.coop._stubs import VOCABULARIES, check_selectors

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "src" / "cuda" / "coop"
RECORDS_MODULE = PACKAGE / "_markers" / "records.py"
NAMESPACE_MODULES = [PACKAGE / "__init__.py", PACKAGE / "numba_mlir" / "__init__.py",
                     PACKAGE / "cutlass" / "__init__.py"]


def _module_level_tables(path: Path) -> list[str]:
    """Module-level statements (not definitions) of ``path`` whose literals name two operations or more."""
    found = []
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom)):
            continue
        names = {n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and n.value in OPERATIONS}
        if len(names) >= 2:
            found.append(f"{path.relative_to(ROOT)}:{node.lineno} names {', '.join(sorted(names))}")
    return found


def test_no_module_keeps_a_table_of_operations():
    sources = [p for p in sorted(PACKAGE.rglob("*.py")) if p != RECORDS_MODULE] + sorted((ROOT / "docs").rglob("*.py"))
    assert sources and all(p.exists() for p in NAMESPACE_MODULES)
    tables = [table for path in sources for table in _module_level_tables(path)]
    assert tables == []


def test_the_namespace_modules_name_no_operation():
    """The common and both qualified namespaces are filled from the records: none names an operation itself."""
    for path in NAMESPACE_MODULES:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        named = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} | {
            n.value for n in ast.walk(tree) if isinstance(n, ast.Constant)} | {
            alias.asname or alias.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) for alias in n.names}
        assert named & set(OPERATIONS) == set(), path


def test_the_table_check_catches_a_hand_kept_table(tmp_path):
    module = tmp_path / "family.py"
    module.write_text('OPS = ("scan", "exclusive_sum")\nSINGLE = "scan"\n\ndef f():\n    return ("scan", "sum")\n')
    global ROOT
    saved, ROOT = ROOT, tmp_path
    try:
        assert _module_level_tables(module) == ["family.py:1 names exclusive_sum, scan"]
    finally:
        ROOT = saved


def test_every_record_is_an_exported_marker_of_every_namespace():
    names = [op.name for op in records()]
    assert tuple(names) == OPERATIONS and len(set(names)) == len(names) >= 28
    namespaces = [coop, importlib.import_module("cuda.coop.numba_mlir")]
    if importlib.util.find_spec("cutlass") is not None:
        namespaces.append(importlib.import_module("cuda.coop.cutlass"))
    for namespace in namespaces:
        assert set(names) <= set(namespace.__all__), namespace.__name__
        for op in records():
            marker = getattr(namespace, op.name)
            assert marker.__coop_op__ == op.name and marker.__module__ == namespace.__name__
            assert marker.__wrapped__ is op.marker.__wrapped__
    assert [op.marker for op in records()] == [getattr(coop, name) for name in names]


@pytest.mark.parametrize("namespace", ["cuda.coop.numba_mlir", "cuda.coop.cutlass"])
def test_a_qualified_namespace_offers_what_its_backend_builds(namespace):
    if namespace.endswith("cutlass") and importlib.util.find_spec("cutlass") is None:
        pytest.skip("nvidia-cutlass-dsl is not installed")
    module = importlib.import_module(namespace)
    lacks = importlib.import_module(f"{namespace}._about").LACKS
    for op in records():
        params = inspect.signature(getattr(module, op.name)).parameters
        unbuilt = op.extends.unbuilt(lacks)
        for name in (*op.extends.options, *op.extends.operands):
            assert (name in params) == (name not in unbuilt), (namespace, op.name, name)
        assert set(params) == set(inspect.signature(op.marker).parameters) | {
            n for n in (*op.extends.options, *op.extends.operands) if n not in unbuilt}


def test_each_record_names_a_call_layer_family_and_an_emitter():
    for op in records():
        assert FAMILIES[op.name].name == op.family
        assert FAMILIES[op.name].plan is importlib.import_module(f"cuda.coop._calls.{op.family}").plan
        importlib.import_module(f"cuda.coop._cub.families.{op.family}")
        assert op.explainer == "" or op.explainer in EXPLAINERS
        assert all(alias in VOCABULARIES for _, alias in op.selectors)
        assert takes_tuples(op.name) == op.tuple_operands
    assert not takes_tuples(None) and not takes_tuples("this_block")
    # SPEC 8.18: reduce and the scans with an operator take tuples; the sums are single-operand (and say so)
    assert {op.name for op in records() if op.multi_operand} == {"reduce", "scan", "exclusive_scan", "inclusive_scan"}
    assert {op.name for op in records() if op.tuple_operands and not op.takes_tuple_value} == {
        "sum", "exclusive_sum", "inclusive_sum"}
    # SPEC 8.19, 8.26: broadcast moves a tuple's members one by one (scalars and payloads mixed), with no operator
    assert {op.name for op in records() if op.independent_members} == {"broadcast"}
    assert all(op.takes_tuple_value and not op.multi_operand for op in records() if op.independent_members)
    # SPEC 8.20: select and partition move a tuple of items of one shape by one permutation, with no operator
    assert {op.name for op in records() if op.moved_members} == {"select", "partition"}
    assert all(op.takes_tuple_value and not op.multi_operand and op.tuple_operand == "items"
               for op in records() if op.moved_members)
    assert {op.tuple_operand for op in records() if op.tuple_operands and not op.moved_members} == {"value"}
    assert tuple_operand("select") == "items" and tuple_operand("reduce") == "value" and tuple_operand("load") is None
    check_selectors(coop)


def test_the_group_check_follows_each_record():
    for op in records():
        for kind, size in ((BLOCK, 128), (WARP, 32), (LOGICAL_WARP, 8), (LOGICAL_WARP, 3)):
            group = GroupSpec(kind, size, 1)
            accepted = kind in op.groups.kinds and (
                kind != LOGICAL_WARP or op.groups.widths is None or size in op.groups.widths)
            if op.groups.own_rule:
                require_operation_group(op.name, op.name, group)  # the family's own rule decides
            elif accepted:
                require_operation_group(op.name, op.name, group)
            else:
                with pytest.raises(CoopUnsupportedError):
                    require_operation_group(op.name, op.name, group)


def test_an_extension_needing_a_capability_is_left_out_where_it_is_lacking():
    extension = Extension(options=("fast",), operands=("state",), needs=(("state", "by_pointer"),))
    assert extension.unbuilt(frozenset()) == ()
    assert extension.unbuilt(frozenset({"by_pointer"})) == ("state",)


def test_a_declared_operation_gets_its_marker_and_cannot_be_declared_twice(monkeypatch):
    from cuda.coop._markers import records as records_module

    monkeypatch.setattr(records_module, "_RECORDS", dict(records_module._RECORDS))

    @declare(Operation("probe_op", "scan", "a probe", Groups((BLOCK,)), extends=Extension(options=("extra",))))
    def probe_op(group, value, /, *, flag: bool = False):
        """A probe."""

    assert probe_op.__coop_op__ == "probe_op" and probe_op.__module__ == COMMON_NAMESPACE
    assert records_module.of("probe_op").marker is probe_op
    variant = qualified(probe_op, "cuda.coop.some_backend")
    assert list(inspect.signature(variant).parameters) == ["group", "value", "flag", "extra"]
    with pytest.raises(ValueError, match="declared twice"):
        declare(Operation("probe_op", "scan", "again", Groups((BLOCK,))))(lambda group: None)


def test_the_documentation_tables_are_written_from_the_records():
    sys.path.insert(0, str(ROOT / "docs" / "_ext"))
    try:
        coop_tables = importlib.import_module("coop_tables")
    finally:
        sys.path.remove(str(ROOT / "docs" / "_ext"))
    groups = "\n".join(coop_tables.groups_table())
    operations = "\n".join(coop_tables.operations_table())
    for op in records():
        assert f"``{op.name}``" in groups and f"``{op.name}``" in operations and op.summary in operations
    assert "   * - ``topk_min_keys``, ``topk_max_keys``, ``topk_min_pairs``, ``topk_max_pairs``\n     - 1-D\n" \
           "     - yes\n     - W in 1, 2, 4, 8, 16, 32" in groups
    assert "   * - ``histogram``\n     - 1-D\n     - no\n     - no" in groups
    page = (ROOT / "docs" / "operations" / "index.rst").read_text(encoding="utf-8")
    assert ".. coop-groups-table::" in page and ".. coop-operations-table::" in page
    assert "   * - ``histogram``" not in page  # the table is not also kept by hand


def test_a_note_needing_a_capability_is_left_out_where_it_is_lacking():
    """Radix sort's float16 keys are described only where the backend builds float16 (SPEC 12.3: the CuTe backend
    builds none, so its namespace's docstrings must not claim them)."""
    for op in (r for r in records() if r.name in ("radix_sort_keys", "radix_sort_pairs")):
        assert "float16" in qualified(op.marker, "some.namespace").__doc__
        doc = qualified(op.marker, "some.namespace", frozenset({"float16"})).__doc__
        assert "float16" not in doc and "float32 or float64" in doc


@pytest.mark.parametrize("namespace, builds_float16", [("cuda.coop.numba_mlir", True), ("cuda.coop.cutlass", False)])
def test_a_namespace_describes_float16_only_where_its_backend_builds_it(namespace, builds_float16):
    if namespace.endswith("cutlass") and importlib.util.find_spec("cutlass") is None:
        pytest.skip("nvidia-cutlass-dsl is not installed")
    module = importlib.import_module(namespace)
    assert ("float16" not in importlib.import_module(f"{namespace}._about").LACKS) == builds_float16
    claims = {name for name in module.__all__ if "float16" in (getattr(module, name).__doc__ or "").lower()}
    if builds_float16:
        assert {"radix_sort_keys", "radix_sort_pairs"} <= claims
    else:
        assert not claims, claims
    stubs = (PACKAGE / namespace.split(".", 2)[-1].replace(".", "/") / "__init__.pyi").read_text(encoding="utf-8")
    assert builds_float16 or "float16" not in stubs.lower()
