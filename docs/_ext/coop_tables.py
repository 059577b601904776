"""Tables of the operations, written from their records (``cuda.coop._markers.records``) at build time.

``.. coop-groups-table::`` is the "Groups each operation accepts" table; ``.. coop-operations-table::`` lists every
operation with what it computes and what the qualified namespaces add; ``.. coop-qualified-options:: NAMESPACE`` lists
the options, operands and scalar forms one backend's qualified namespace builds (its records' extensions less what
the backend's ``LACKS`` leaves out). A new operation's record puts it in all of them.
"""
from __future__ import annotations

import ast
import importlib
import importlib.util
from pathlib import Path

from docutils import nodes
from docutils.parsers.rst import Directive
from docutils.statemachine import StringList

from cuda.coop._markers.records import BLOCK, LOGICAL_WARP, WARP, Operation, records

_KINDS = (BLOCK, WARP, LOGICAL_WARP)
_BACKENDS = ("cuda.coop.numba_mlir", "cuda.coop.cutlass")


def backend_lacks(namespace: str) -> frozenset[str]:
    """The capabilities the backend of ``namespace`` lacks (its ``_about.LACKS``). Where its compiler is not installed
    (importing ``_about`` checks it), the constant is read from the module's source, so the tables do not depend on
    which backends the machine building the docs has."""
    try:
        return frozenset(importlib.import_module(f"{namespace}._about").LACKS)
    except ImportError:
        package = importlib.util.find_spec("cuda.coop")
        assert package is not None and package.submodule_search_locations
        source = Path(list(package.submodule_search_locations)[0], *namespace.split(".")[2:], "_about.py")
        for node in ast.parse(source.read_text(encoding="utf-8")).body:
            target = node.target if isinstance(node, ast.AnnAssign) else (
                node.targets[0] if isinstance(node, ast.Assign) else None)
            if isinstance(target, ast.Name) and target.id == "LACKS" and isinstance(node.value, ast.Call):
                return frozenset(ast.literal_eval(node.value.args[0])) if node.value.args else frozenset()
        raise


def _lacking(capability: str) -> list[str]:
    """The backend namespaces (of those installed) without ``capability``, which leave out what needs it."""
    lacking = []
    for namespace in _BACKENDS:
        try:
            about = importlib.import_module(f"{namespace}._about")
        except ImportError:
            continue
        if capability in about.LACKS:
            lacking.append(namespace)
    return lacking


def _names(ops: list[Operation]) -> str:
    return ", ".join(f"``{op.name}``" for op in ops)


def _rows(key) -> list[list[Operation]]:  # noqa: ANN001
    """The records in declaration order, consecutive ones with the same ``key`` in one row."""
    rows: list[list[Operation]] = []
    for op in records():
        if rows and key(rows[-1][0]) == key(op):
            rows[-1].append(op)
        else:
            rows.append([op])
    return rows


def _list_table(header: list[str], widths: list[int], rows: list[list[str]]) -> list[str]:
    lines = [".. list-table::", "   :header-rows: 1", f"   :widths: {' '.join(map(str, widths))}", ""]
    for row in [header, *rows]:
        lines += [f"   * - {row[0]}", *(f"     - {cell}" for cell in row[1:])]
    return lines


def groups_table() -> list[str]:
    """The groups table: one row per run of operations of one family that accept the same groups."""
    rows = _rows(lambda op: (op.family, op.groups))
    return _list_table(["Operation", "block", "warp", "logical warp"], [30, 16, 10, 44],
                       [[_names(ops), *(ops[0].groups.cell(kind) for kind in _KINDS)] for ops in rows])


def operations_table() -> list[str]:
    """Every operation, what it computes, whether it takes tuples of operands, and its qualified additions."""
    def added(op: Operation) -> str:
        needs = dict(op.extends.needs)

        def word(name: str) -> str:
            lacking = _lacking(needs[name]) if name in needs else []
            return f"``{name}``" + (f" (not in ``{'``, ``'.join(lacking)}``)" if lacking else "")

        text = ", ".join(word(name) for name in [*op.extends.operands, *op.extends.options])
        if op.extends.scalar_form:
            text = ", ".join(filter(None, [text, "scalar operands"]))
        return text or "none"

    rows = _rows(lambda op: (op.family, op.summary, op.takes_tuple_value, op.extends))
    return _list_table(["Operation", "Computes", "Tuples of operands", "Qualified additions"], [30, 34, 12, 24],
                       [[_names(ops), ops[0].summary, "yes" if ops[0].takes_tuple_value else "no", added(ops[0])]
                        for ops in rows])


def qualified_options(namespace: str) -> list[tuple[Operation, tuple[str, ...], tuple[str, ...], bool]]:
    """Per operation whose qualified variant in ``namespace`` adds something: (record, keyword options, extra
    operands, whether it takes one scalar per thread), as the namespace builds them."""
    lacks = backend_lacks(namespace)
    built = []
    for op in records():
        unbuilt = set(op.extends.unbuilt(lacks))
        options = tuple(name for name in op.extends.options if name not in unbuilt)
        operands = tuple(name for name in op.extends.operands if name not in unbuilt)
        if options or operands or op.extends.scalar_form:
            built.append((op, options, operands, op.extends.scalar_form))
    return built


def qualified_options_table(namespace: str) -> list[str]:
    """The options, operands and scalar forms ``namespace`` builds, one row per run of operations of one family that
    add the same, followed by what the backend's ``LACKS`` leaves out."""
    def code(names: tuple[str, ...]) -> str:
        return ", ".join(f"``{name}=``" for name in names) or "none"

    rows: list[tuple[list[Operation], tuple]] = []
    for op, options, operands, scalar in qualified_options(namespace):
        key = (op.family, options, operands, scalar)
        if rows and rows[-1][1] == key:
            rows[-1][0].append(op)
        else:
            rows.append(([op], key))
    lines = _list_table(
        ["Operation", "Keyword options", "Operands after the common ones", "One scalar per thread"], [30, 34, 20, 16],
        [[_names(ops), code(options), ", ".join(f"``{name}``" for name in operands) or "none",
          "yes" if scalar else "no"] for ops, (_, options, operands, scalar) in rows])
    listed = {op.name for op, *_ in qualified_options(namespace)}
    rest = [op for op in records() if op.name not in listed]
    if rest:
        lines += ["", f"The other operations ({_names(rest)}) add no options, operands or scalar forms."]
    lacks = backend_lacks(namespace)
    left_out = [(op, name) for op in records() for name in op.extends.unbuilt(lacks)]
    if left_out:
        names = sorted({name for _, name in left_out})
        # the capabilities that leave a name out (another, such as float16, only keeps a docstring from claiming it)
        leaving = sorted({c for op in records() for name, c in op.extends.needs if c in lacks})
        lines += ["", f"Left out because the backend lacks {', '.join(f'``{c}``' for c in leaving)}: "
                  + "; ".join(f"``{name}`` of {_names([op for op, n in left_out if n == name])}" for name in names)
                  + f" (naming one in a ``{namespace}`` call is R9, :doc:`/errors`)."]
    return lines


class _TableDirective(Directive):
    lines: staticmethod

    def run(self) -> list:
        holder = nodes.container()
        self.state.nested_parse(StringList(self.lines(*self.arguments), source="cuda.coop operation records"),
                                self.content_offset, holder)
        return list(holder.children)


class GroupsTable(_TableDirective):
    lines = staticmethod(groups_table)


class OperationsTable(_TableDirective):
    lines = staticmethod(operations_table)


class QualifiedOptionsTable(_TableDirective):
    """``.. coop-qualified-options:: cuda.coop.cutlass``: the table of one qualified namespace."""

    required_arguments = 1
    lines = staticmethod(qualified_options_table)


def setup(app) -> dict:  # noqa: ANN001
    app.add_directive("coop-groups-table", GroupsTable)
    app.add_directive("coop-operations-table", OperationsTable)
    app.add_directive("coop-qualified-options", QualifiedOptionsTable)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
