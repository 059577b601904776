"""Tuple operands (SPEC 8.18) as the numba planner reads them: the members a call receives.

A call's tuple is passed member by member. Where the variable was built once by ``(a, b)`` and its members cannot
have changed since, the members are the variables it was built from. Where it may hold one of several tuples
(``found = (-1, -1)`` before a loop that may assign ``found = (at, count)``), or a member may have been assigned
again after the tuple was built, the members are read from the tuple where the call stands (``found[0]``,
``found[1]``): the first tuple's members would pass values the kernel no longer holds.

A mixin of the planner's ``KernelPlan``; ``KernelRewrite`` places the reads (``member_reads``) before the call.
"""
from __future__ import annotations

from typing import Any

from .._errors import CoopTypeError
from . import _compat as nb
from ._checks import user_name
from ._ir import PayloadVal
from ._plan_state import PlanState


class TupleOperands(PlanState):
    _members_of: dict[int, list[Any] | None]  # id(operand variable) -> its members, one answer per call
    _keep: list[Any]  # objects whose ids key a memo, kept alive

    def tuple_operands(self, var: Any) -> list[Any] | None:
        """The members of a tuple the kernel built (``(a, b)``) that ``var`` holds where the call stands, or None
        when it holds no tuple the kernel built."""
        if not isinstance(var, nb.ir.Var):
            return None
        if id(var) not in self._members_of:
            self._keep.append(var)
            self._members_of[id(var)] = self._find_members(var)
        return self._members_of[id(var)]

    def _find_members(self, var: Any) -> list[Any] | None:
        builds, others = self.tuple_definitions(var)
        if not builds:
            return None
        if len(builds) == 1 and not others and self._members_unchanged(builds[0], var):
            return list(builds[0].items)
        sizes = {len(build.items) for build in builds}
        name = user_name(var.name)
        if len(sizes) > 1:
            raise CoopTypeError(f"the tuple {name} has {' or '.join(map(str, sorted(sizes)))} members where the call "
                                "takes it; give every assignment to it the same number of members")
        if any(isinstance(self.resolver.var(item.name), PayloadVal) for build in builds for item in build.items):
            raise CoopTypeError(f"{name} is a tuple of ThreadData payloads assigned in several places, or one of "
                                "whose members was assigned again after it was built; build the tuple in the call, "
                                "e.g. op(group, (a, b))")
        return [self._member_read(var, index) for index in range(sizes.pop())]

    def tuple_definitions(self, var: Any) -> tuple[list[Any], list[Any]]:
        """(the ``build_tuple`` expressions ``var`` may hold, through copies; its other definitions)."""
        builds: list[Any] = []
        others: list[Any] = []
        for definition in self.resolver.definitions_through_copies(var):
            is_build = isinstance(definition, nb.ir.Expr) and definition.op == "build_tuple"
            (builds if is_build else others).append(definition)
        return builds, others

    def _members_unchanged(self, build: Any, var: Any) -> bool:
        """Whether each member of ``build`` still holds, where ``var`` is used, what the tuple was built from: a
        member assigned once cannot change; otherwise the tuple must be built in the call's block, with no
        assignment to a member between it and the call (``op(group, (a, b))`` in a loop that changes ``a``)."""
        names = {item.name for item in build.items}
        if all(len(self.resolver.definitions(name)) <= 1 for name in names):
            return True
        built = self.resolver.stmt_of.get(id(build))
        for block in self.func_ir.blocks.values():
            between: list[Any] | None = None  # statements after the build, once it is found in this block
            for stmt in block.body:
                if stmt is built:
                    between = []
                elif between is not None:
                    if _uses(stmt, var):
                        return not any(isinstance(s, nb.ir.Assign) and s.target.name in names for s in between)
                    between.append(stmt)
        return False

    def _member_read(self, var: Any, index: int) -> Any:
        """A new variable holding ``var[index]``, defined by a statement the rewrite places before the call."""
        loc = var.loc
        scope = next(iter(self.func_ir.blocks.values())).scope
        member = nb.ir.Var(scope, scope.redefine(f"$cuda_coop_member{index}", loc).name, loc)
        read = nb.ir.Expr.static_getitem(var, index, None, loc)
        stmt = nb.ir.Assign(read, member, loc)
        self.func_ir._definitions[member.name] = [read]
        self.resolver.stmt_of[id(read)] = stmt
        self.member_reads[member.name] = stmt
        return member


def _uses(stmt: Any, var: Any) -> bool:
    """Whether ``stmt`` passes this very variable object (a call's argument)."""
    value = getattr(stmt, "value", None)
    if not isinstance(value, nb.ir.Expr) or value.op != "call":
        return False
    return any(arg is var for arg in value.args) or any(arg is var for _, arg in value.kws)
