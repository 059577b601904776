"""Divergent participation (G21; docs: concepts, "Participation: every member must reach the call"): cooperative
calls under per-thread conditions.

Runs on the planner's numba IR (after inlining, before typing) once every operation is planned.

1. Taint: which variables hold per-thread values. Sources are ``cuda.threadIdx.*``, ``cuda.laneid``,
   ``cuda.grid(...)``, a group's ``rank()``/``rank_as()`` below the group's own level and a non-exhaustive
   group's ``is_member()``. Taint flows through assignments, arithmetic, comparisons, casts, builtin and
   math calls, tuples and iteration, over every definition of a variable (to a fixed point, so loop-carried
   values are covered), and from a per-thread branch into variables given different definitions under it.
   Everything else (arguments, constants, loaded data, helper and cuda.coop results) carries no taint:
   the check never rejects what it cannot classify.
2. Control dependence: post-dominators over the block graph with a virtual exit; a block is control
   dependent on a branch when one successor is post-dominated by the block and the branch is not. The
   closure of that relation gives every condition that decides whether a call is reached, early returns
   and per-thread loop trip counts included.
3. A block call is rejected under any per-thread source; a warp or logical-warp call only under
   ``cuda.laneid`` or its own group's rank (``cuda.threadIdx`` conditions can select whole warps). The
   call's own non-exhaustive group's ``is_member()`` is always allowed.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._errors import CoopValueError, at, located
from .._markers.groups import ThreadGroup
from .._semantics import groups as sem_groups
from .._semantics.common import BLOCK, CLUSTER, GRID, LOGICAL_WARP, THREAD, WARP, WARPS_IN_BLOCK
from . import _compat as nb
from ._ir import GroupVal, MethodVal, Obj
from ._plan_state import OpCall, PlanState

# Nesting order of group kinds and query levels: a smaller number is a finer unit.
_ORDER = {THREAD: 0, LOGICAL_WARP: 1, WARP: 2, WARPS_IN_BLOCK: 3, BLOCK: 4, CLUSTER: 5, GRID: 6}

_BUILTINS = (range, min, max, abs, int, float, bool, round, divmod, pow, len)

_TID, _LANE, _RANK, _MEMBER = "tid", "lane", "rank", "member"


@dataclass(frozen=True)
class Source:
    """A per-thread value: what it is (for messages) and how far it is uniform."""

    label: str
    kind: str  # tid (threadIdx, grid), lane, rank, member
    unit: int = 0  # the value is uniform inside units of this order (_ORDER)
    group: Any = None  # the GroupSpec of rank/member sources


# numba renames the variables of an inlined function ``f`` (``inline="always"``, and the harness of a generated
# kernel) to ``f_v<N>_<name>``: ``.`` becomes ``_`` and ``$`` ``_v``, so a temporary ``$12pred`` is ``f_v2__v12pred``
_INLINED = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*?_v\d+_(?=.)")


def _user_name(name: str) -> str | None:
    """The Python name of an IR variable as the user wrote it (inside a helper numba inlined too), or None for a
    temporary."""
    inlined = False
    while (found := _INLINED.match(name)) is not None:
        name, inlined = name[found.end():], True
    if inlined:  # a temporary's ``$`` and a version's ``.`` arrive as ``_v`` and ``_``
        if name.startswith("_v") or name.startswith("arg_"):  # ``$phi114`` too, not only ``$12``
            return None
        return re.sub(r"_\d+$", "", name) or None
    if name.startswith("$") or name.startswith("arg."):
        return None
    return re.sub(r"\.\d+$", "", name)


def _diverges(source: Source, spec: Any) -> bool:
    """Whether ``source`` can differ between members of one group of ``spec`` (within the documented rules;
    docs: concepts, "Participation: every member must reach the call")."""
    if spec.kind == BLOCK:
        return source.unit < _ORDER[BLOCK]
    if spec.kind in (WARP, LOGICAL_WARP) and spec.size > 1:
        if source.kind == _LANE:
            return True
        if source.kind == _RANK and source.group == spec:
            return source.unit < _ORDER[spec.kind]
    return False


class _Analysis:
    def __init__(self, plan: PlanState) -> None:
        self.plan = plan
        self.func_ir = plan.func_ir
        self.resolver = plan.resolver
        self.blocks = dict(self.func_ir.blocks)
        self.label_of = {id(block): label for label, block in self.blocks.items()}
        self.taint: dict[str, frozenset[Source]] = {}
        self.controls: dict[Any, frozenset[tuple[Any, Any]]] = {}  # label -> (branch label, successor) edges

    # ------------------------------------------------------------ control flow
    def _successors(self, block: Any) -> list[Any]:
        term = block.body[-1] if block.body else None
        if isinstance(term, nb.ir.Branch):
            return [term.truebr, term.falsebr]
        if isinstance(term, nb.ir.Jump):
            return [term.target]
        return []  # return, raise: the virtual exit

    def _control_dependence(self) -> None:
        exit_ = object()
        succ = {label: [s for s in self._successors(b) if s in self.blocks] for label, b in self.blocks.items()}
        entry = self.func_ir.first_label if hasattr(self.func_ir, "first_label") else min(self.blocks)
        reach, stack = {entry}, [entry]
        while stack:
            for s in succ[stack.pop()]:
                if s not in reach:
                    reach.add(s)
                    stack.append(s)
        nodes = [n for n in self.blocks if n in reach]
        edges: dict[Any, list[Any]] = {n: list(succ[n]) for n in nodes}
        for n in nodes:
            if not succ[n]:
                edges[n].append(exit_)
        # Blocks that cannot reach the exit (infinite loops) get an edge to it, so post-dominance is defined.
        preds: dict[Any, list[Any]] = {n: [] for n in nodes}
        preds[exit_] = []
        for n in nodes:
            for s in edges[n]:
                preds[s].append(n)
        alive, stack = {exit_}, [exit_]
        while stack:
            for p in preds[stack.pop()]:
                if p not in alive:
                    alive.add(p)
                    stack.append(p)
        for n in nodes:
            if n not in alive:
                edges[n].append(exit_)
        everything = frozenset(nodes) | {exit_}
        pdom: dict[Any, frozenset[Any]] = {n: everything for n in nodes}
        pdom[exit_] = frozenset({exit_})
        changed = True
        while changed:
            changed = False
            for n in reversed(nodes):
                new = frozenset.intersection(*(pdom[s] for s in edges[n])) | {n}
                if new != pdom[n]:
                    pdom[n], changed = new, True
        # direct[y]: the (branch block, successor) edges y is immediately control dependent on.
        direct: dict[Any, set[tuple[Any, Any]]] = {n: set() for n in nodes}
        for x in nodes:
            if len(set(edges[x])) < 2:
                continue
            strict = pdom[x] - {x}
            for s in edges[x]:
                for y in pdom[s] - strict:
                    if y is not exit_:
                        direct[y].add((x, s))
        self.controls = {}  # the closure: every branch outcome that decides whether n runs
        for n in nodes:
            seen, stack = set(), list(direct[n])
            while stack:
                edge = stack.pop()
                if edge not in seen:
                    seen.add(edge)
                    stack.extend(direct[edge[0]])
            self.controls[n] = frozenset(seen)

    def branch(self, label: Any) -> Any:
        return self.blocks[label].body[-1]

    # ------------------------------------------------------------------ taint
    def var_taint(self, name: str) -> frozenset[Source]:
        return self.taint.get(name, frozenset())

    def _source_of(self, stmt: Any) -> Source | None:
        """The per-thread source an assignment creates, if any."""
        value = stmt.value
        if not isinstance(value, nb.ir.Expr):
            return None
        if value.op == "getattr":
            base = self.resolver.var(value.value.name)
            if isinstance(base, Obj):
                if base.value is nb.nb_cuda.threadIdx and value.attr in ("x", "y", "z"):
                    return Source(f"cuda.threadIdx.{value.attr}", _TID)
                if base.value is nb.nb_cuda and value.attr == "laneid":
                    return Source("cuda.laneid", _LANE)
            return None
        if value.op != "call":
            return None
        callee = self.resolver.var(value.func.name)
        if isinstance(callee, Obj) and callee.value is nb.nb_cuda.grid:
            arg = self.resolver.var(value.args[0].name) if len(value.args) == 1 else None
            shown = arg.value if isinstance(arg, Obj) else "..."
            return Source(f"cuda.grid({shown})", _TID)
        if isinstance(callee, MethodVal) and callee.name in ("rank", "rank_as", "is_member"):
            return self._query_source(stmt, callee)
        return None

    def _query_source(self, stmt: Any, method: MethodVal) -> Source | None:
        spec = method.group.spec
        owner = self.resolver.definitions(stmt.value.func.name)
        group_name = None
        for definition in owner:
            if isinstance(definition, nb.ir.Expr) and definition.op == "getattr":
                group_name = _user_name(definition.value.name)
        shown = group_name or f"a {spec.kind} group's"
        if method.name == "is_member":
            if spec.exhaustive:
                return None
            return Source(f"{shown}.is_member()" if group_name else f"{shown} is_member()", _MEMBER,
                          _ORDER[WARP] if spec.kind == WARPS_IN_BLOCK else _ORDER[THREAD], spec)
        try:
            bound = self.plan._bind(stmt, getattr(ThreadGroup, method.name),
                                    f"ThreadGroup.{method.name}", skip_self=True)
            level_var = bound.get("level", "thread")
            level = level_var
            if isinstance(level_var, nb.ir.Var):
                resolved = self.resolver.var(level_var.name)
                level = resolved.value if isinstance(resolved, Obj) else None
            level = sem_groups.query_level(method.name, level)
        except Exception:  # the query planner reported anything wrong already
            return None
        own, lvl = _ORDER[spec.kind], _ORDER[level]
        if lvl == own:
            return None  # rank 0 at the group's own level
        unit = lvl if lvl < own else own
        suffix = "" if level == "thread" else f"level={level!r}"
        has_args = bound.get("dtype") is not None  # rank_as(dtype)
        call = f"{method.name}({'..., ' if has_args and suffix else '...' if has_args else ''}{suffix})"
        return Source(f"{shown}.{call}" if group_name else f"{shown} {call}", _RANK, unit, spec)

    def _expr_taint(self, stmt: Any) -> frozenset[Source]:
        value = stmt.value
        ir = nb.ir
        if isinstance(value, ir.Var):
            return self.var_taint(value.name)
        if not isinstance(value, ir.Expr):
            return frozenset()
        op = value.op
        if op in ("binop", "inplace_binop"):
            return self.var_taint(value.lhs.name) | self.var_taint(value.rhs.name)
        if op in ("unary", "cast", "getiter", "iternext", "pair_first", "pair_second", "exhaust_iter",
                  "static_getitem", "getattr"):
            return self.var_taint(value.value.name)
        if op == "getitem":  # element of a tuple (cuda.grid(2)[0]); an array element is loaded data
            return self.var_taint(value.value.name)
        if op in ("build_tuple", "build_list"):
            out: frozenset[Source] = frozenset()
            for item in value.items:
                out |= self.var_taint(item.name)
            return out
        if op == "call" and self._transparent(value):
            out = frozenset()
            for arg in [*value.args, *(v for _, v in value.kws)]:
                out |= self.var_taint(arg.name)
            return out
        return frozenset()

    def _transparent(self, call: Any) -> bool:
        """Calls whose result is a plain function of their arguments: builtins, math, scalar casts."""
        callee = self.resolver.var(call.func.name)
        if not isinstance(callee, Obj):
            return False
        fn = callee.value
        if any(fn is f for f in _BUILTINS) or getattr(fn, "__module__", None) == "math":
            return True
        if isinstance(fn, type) and issubclass(fn, np.generic):
            return True
        return isinstance(fn, nb.types.NumberClass) or isinstance(fn, nb.types.Number)

    def compute_taint(self) -> bool:
        """Taint every variable; False when the kernel reads no per-thread source at all."""
        assigns: list[tuple[Any, Any]] = []
        defined_in: dict[str, list[Any]] = {}
        sources: dict[str, frozenset[Source]] = {}
        for label, block in self.blocks.items():
            for stmt in block.body:
                if isinstance(stmt, nb.ir.Assign):
                    assigns.append((label, stmt))
                    source = self._source_of(stmt)
                    if source is not None:
                        sources[stmt.target.name] = sources.get(stmt.target.name, frozenset()) | {source}
        if not sources:
            return False
        self._control_dependence()
        assigns = [(label, stmt) for label, stmt in assigns if label in self.controls]  # reachable blocks
        for label, stmt in assigns:
            defined_in.setdefault(stmt.target.name, []).append(label)
        self.taint = dict(sources)
        # Variables given several definitions: the branches that decide which one a thread sees.
        deciding: dict[str, frozenset[Any]] = {}
        for name, labels in defined_in.items():
            if len(labels) > 1:
                sets = [self.controls[label] for label in labels]
                deciding[name] = frozenset(x for x, _ in frozenset.union(*sets) - frozenset.intersection(*sets))
        changed = True
        while changed:
            changed = False
            for _, stmt in assigns:
                name = stmt.target.name
                new = self.var_taint(name) | self._expr_taint(stmt)
                for label in deciding.get(name, ()):
                    new |= self.var_taint(self.branch(label).cond.name)
                if new != self.var_taint(name):
                    self.taint[name] = new
                    changed = True
        return True

    # ------------------------------------------------------------------ check
    def shown_source(self, cond: str, source: Source) -> str:
        """The user's variable the condition reads the source through, if any, and the source."""
        seen, queue = set(), [cond]
        while queue:
            name = queue.pop(0)
            if name in seen or source not in self.var_taint(name):
                continue
            seen.add(name)
            user = _user_name(name)
            if user is not None and source.label != user:
                return f"{user} (derived from {source.label})"
            for definition in self.resolver.definitions(name):
                if isinstance(definition, nb.ir.Var):
                    queue.append(definition.name)
                elif isinstance(definition, nb.ir.Expr) and not (
                        definition.op == "call" and not self._transparent(definition)):
                    queue.extend(v.name for v in definition.list_vars())
        return source.label

    def check(self, call: OpCall) -> None:
        group_var = call.args.get("group")
        if not isinstance(group_var, nb.ir.Var):
            return
        group = self.resolver.var(group_var.name)
        if not isinstance(group, GroupVal):
            return
        spec = group.spec
        label = self.label_of.get(id(call.block))
        if label is None or label not in self.controls:
            return
        found = []
        for branch_label in {x for x, _ in self.controls[label]}:
            term = self.branch(branch_label)
            for source in self.var_taint(term.cond.name):
                if _diverges(source, spec):
                    found.append((term.loc.line, str(branch_label), source.label, term, source))
        if not found:
            return
        found.sort(key=lambda item: item[:3])
        _, _, _, term, source = found[0]
        shown = self.shown_source(term.cond.name, source)
        raise located(CoopValueError(
            f"{call.name} on {spec.kind} groups must be reached by every member, but it is under a condition that "
            f"depends on {shown} ({at(term.loc)}); use valid_items / oob_default, or move the condition inside the "
            "values"), call.stmt.loc)


def check_participation(plan: PlanState) -> None:
    """Raise G21 for the first planned operation reached only under a per-thread condition."""
    calls = list(getattr(plan, "op_calls", ()))
    if not calls:
        return
    analysis = _Analysis(plan)
    if not analysis.compute_taint():
        return
    for call in calls:
        analysis.check(call)
