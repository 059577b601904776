"""User functions traced as CuTe traces its own ``@cute.jit`` functions.

An operator, predicate or prefix callback is a plain Python function (SPEC 8.24's ``carry`` is). CuTe rewrites the
``if``/``else``, conditional expressions and loops of a function into its run-time control flow only when the
function's source carries a ``.jit``/``.kernel`` decorator; traced as written, ``a if flag else b`` on a run-time
``flag`` needs a Python bool and fails. So the backend traces a copy compiled from the function's own source with
that decorator added, leaving the user's function untouched.
"""
from __future__ import annotations

import ast
import inspect
import linecache
import re
import textwrap
import weakref
from typing import Any, Callable

_copies: "weakref.WeakKeyDictionary[Callable[..., Any], Callable[..., Any]]" = weakref.WeakKeyDictionary()
_FACTORY = "__cuda_coop_callback__"
_DSL = "__cuda_coop_cute__"


def traceable(body: Callable[..., Any], jit: Callable[..., Any]) -> Callable[..., Any]:
    """``body``, or a copy of it decorated with ``jit`` (``cute.jit``, which ``_dsl`` passes: the one module that
    imports the DSL) when it is a plain module-level or nested ``def`` whose source is available (a lambda, a
    callable object, a builtin or a function the DSL already decorated is used as is)."""
    if not inspect.isfunction(body) or hasattr(body, "_dsl_cls") or hasattr(body, "_dsl_object"):
        return body
    copy = _copies.get(body)
    if copy is None:
        copy = _jit_copy(body, jit) or body
        if body.__closure__ is None:  # a closure's copy holds its cells' values of now: made again each time
            _copies[body] = copy
    return copy


def _jit_copy(body: Any, jit: Callable[..., Any]) -> Callable[..., Any] | None:
    try:
        lines, first_line = inspect.getsourcelines(body)
        filename = inspect.getsourcefile(body) or body.__code__.co_filename
        tree = ast.parse(textwrap.dedent("".join(lines)))
        cells = [cell.cell_contents for cell in body.__closure__ or ()]
    except (OSError, TypeError, SyntaxError, ValueError):  # no source (a REPL, exec), or an unset closure cell
        return None
    definition = tree.body[0] if len(tree.body) == 1 else None
    if not isinstance(definition, ast.FunctionDef) or definition.name != body.__name__ or definition.decorator_list:
        return None  # a lambda, or a function another decorator made: its source is not the function traced
    # The copy's source: the function, decorated, inside a factory whose parameters are the DSL and the original's
    # free variables (so the copy sees what the original sees), with the ``def`` on the original's line number so
    # the DSL's diagnostics point at the user's lines.
    freevars = body.__code__.co_freevars
    function = textwrap.indent(ast.get_source_segment(textwrap.dedent("".join(lines)), definition) or "", "    ")
    head = [f"def {_FACTORY}({', '.join((_DSL, *freevars))}):", f"    @{_DSL}.jit"]
    text = "\n" * max(first_line - 1 - len(head), 0) + "\n".join([*head, function, f"    return {body.__name__}", ""])
    name = f"{filename} ({body.__qualname__} at line {first_line}, traced by cuda.coop as @cute.jit)"  # one each
    linecache.cache[name] = (len(text), None, text.splitlines(keepends=True), name)
    namespace: dict[str, Any] = {}
    try:
        exec(compile(text, name, "exec"), body.__globals__, namespace)
        copy = namespace[_FACTORY](_Decorators(jit), *cells)
    except Exception:  # noqa: BLE001 - the copy did not build: the original is traced as written
        return None
    return copy  # type: ignore[no-any-return]


class _Decorators:
    """What the copy's ``@__cuda_coop_cute__.jit`` line names (the DSL recognises a ``.jit`` attribute)."""

    def __init__(self, jit: Callable[..., Any]) -> None:
        self.jit = jit


def without_copy_names(text: str) -> str:
    """``text`` (a failure while tracing a callback) naming the user's function, not the factory of its copy."""
    return text.replace(f"{_FACTORY}.<locals>.", "")


def failure_reason(text: str) -> str | None:
    """The reason to give when CuTe's preprocessor or tracer refused a callback, in Python's words: the DSL's own
    sentence without its diagnostic code, or for a branch on a run-time value in a function this module could not
    copy (a lambda, a callable object, no source) what to write instead; None for any other failure."""
    match = re.match(r"error\[(\w+)\]:\s*(.*)", text.splitlines()[0] if text else "")
    if match is None:
        return None
    code, said = match.groups()
    if code == "PHASE_DYNAMIC_TO_STATIC_BOOL":
        return ("it branches on a run-time value (an if, a conditional expression, and/or), which CuTe rewrites only "
                "in a def whose source it can read; write it as a def function, or use cutlass.select_(condition, a, "
                "b)")
    if code == "UNSUP_EARLY_EXIT":
        return f"{said} Assign the result in each branch and return it once, at the end."
    return said or None


__all__ = ["failure_reason", "traceable", "without_copy_names"]
