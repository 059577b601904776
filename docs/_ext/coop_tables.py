"""Tables of the operations, written from their records (``cuda.coop._markers.records``) at build time.

``.. coop-groups-table::`` is the "Groups each operation accepts" table; ``.. coop-operations-table::`` lists every
operation with what it computes and what the qualified namespaces add. A new operation's record puts it in both.
"""
from __future__ import annotations

import importlib

from docutils import nodes
from docutils.parsers.rst import Directive
from docutils.statemachine import StringList

from cuda.coop._markers.records import BLOCK, LOGICAL_WARP, WARP, Operation, records

_KINDS = (BLOCK, WARP, LOGICAL_WARP)
_BACKENDS = ("cuda.coop.numba_mlir", "cuda.coop.cutlass")


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

    rows = _rows(lambda op: (op.family, op.summary, op.multi_operand, op.extends))
    return _list_table(["Operation", "Computes", "Tuples of operands", "Qualified additions"], [30, 34, 12, 24],
                       [[_names(ops), ops[0].summary, "yes" if ops[0].multi_operand else "no", added(ops[0])]
                        for ops in rows])


class _TableDirective(Directive):
    lines: staticmethod

    def run(self) -> list:
        holder = nodes.container()
        self.state.nested_parse(StringList(self.lines(), source="cuda.coop operation records"), self.content_offset,
                                holder)
        return list(holder.children)


class GroupsTable(_TableDirective):
    lines = staticmethod(groups_table)


class OperationsTable(_TableDirective):
    lines = staticmethod(operations_table)


def setup(app) -> dict:  # noqa: ANN001
    app.add_directive("coop-groups-table", GroupsTable)
    app.add_directive("coop-operations-table", OperationsTable)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
