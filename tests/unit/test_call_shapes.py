"""Options travel by keyword (issue 41, "A call's shape, built once"): no function of the semantics or the call layer
takes more than five positional parameters, and no family keeps a second planning path for tuples of operands.

A family's ``plan`` builds a ``CallShape`` (``_calls.shape``) and its ``plan_X(shape, opts)`` takes a frozen,
keyword-only ``XOptions``; a helper's extra parameters go after ``*``."""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2] / "src" / "cuda" / "coop"
LAYERS = ("_semantics", "_calls")
MAX_POSITIONAL = 5

#: Functions not yet migrated (``module:function``): none are left, and none may be added. An entry that no longer
#: exceeds the limit fails the test until it is removed.
PENDING: set[str] = set()


def _functions() -> list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda]]:
    found = []
    for layer in LAYERS:
        for path in sorted((ROOT / layer).glob("*.py")):
            module = f"{layer}/{path.name}"
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                    found.append((module, node))
    return found


def _positional(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> list[str]:
    names = [arg.arg for arg in node.args.posonlyargs + node.args.args]
    return names[1:] if names[:1] in (["self"], ["cls"]) else names


def _name(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> str:
    return getattr(node, "name", "<lambda>")


def test_no_function_takes_more_than_five_positional_parameters():
    over = {f"{module}:{_name(node)}": len(_positional(node)) for module, node in _functions()
            if len(_positional(node)) > MAX_POSITIONAL}
    new = sorted(f"{key} ({count})" for key, count in over.items() if key not in PENDING)
    assert not new, ("functions with more than 5 positional parameters (take options by keyword, after *, or a "
                     "CallShape and a frozen keyword-only XOptions):\n" + "\n".join(new))
    done = sorted(PENDING - set(over))
    assert not done, "migrated: remove from PENDING:\n" + "\n".join(done)


def test_no_second_planning_path_for_tuples():
    offenders = [f"{module}:{getattr(node, 'lineno', 0)}" for layer in LAYERS
                 for path in sorted((ROOT / layer).glob("*.py"))
                 for module in [f"{layer}/{path.name}"]
                 for node in ast.walk(ast.parse(path.read_text()))
                 if (isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == "_plan_tuple")
                 or (isinstance(node, ast.Name) and node.id == "_plan_tuple")
                 or (isinstance(node, ast.Attribute) and node.attr == "_plan_tuple")]
    assert not offenders, "a tuple of operands is a CallShape of several operands, planned by plan:\n" + "\n".join(
        offenders)


def test_tuple_members_are_not_smuggled_through_the_call_arguments():
    """A tuple's members are the shape's operands, not ``value#j`` keys added to ``call.args``."""
    offenders = [f"{layer}/{path.name}" for layer in LAYERS for path in sorted((ROOT / layer).glob("*.py"))
                 if "member_keys" in path.read_text() or '#{j}' in path.read_text()]
    assert not offenders, offenders
