"""What the planner's parts share: one operation call (``OpCall``), a planned call and the statement it replaces
(``PlannedSite``), and ``PlanState``: the attributes of the planner's ``KernelPlan`` that its mixins (``_checks``,
``_inference``, ``_shared_arrays``, ``_rewrite``) read, and the methods one of them calls on another, declared once
for the type checker (at run time the class adds nothing to ``KernelPlan``)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .._calls.build import PlannedCall
from .._calls.context import CallContext
from .._markers.base import QUALIFIED_ATTR
from .._semantics.common import LaunchShape
from ._ir import DescVal, GroupVal, PayloadVal, Resolver, SharedArrayVal


@dataclass
class OpCall:
    """One operation call: its statement, marker, public name and bound arguments."""

    stmt: Any
    block: Any
    marker: Any
    op: str
    name: str
    args: dict[str, Any]

    @property
    def qualified(self) -> bool:
        """Called through cuda.coop.numba_mlir (the marker carries the qualified flag), not the common API."""
        return bool(getattr(self.marker, QUALIFIED_ATTR, False))


@dataclass(kw_only=True)
class PlannedSite(PlannedCall):
    """A planned call and the statement it replaces."""

    stmt: Any
    block: Any
    name: str
    operands: list[Any]


class PlanState:
    """The planner of one kernel specialisation as its mixins see it (numba IR objects are ``Any``)."""

    operations: tuple[str, ...]  # every operation's public name
    dtype_words: str  # what names a dtype in numba-cuda-mlir, for messages (_calls.context.CallContext)
    state: Any  # numba-cuda-mlir's compiler state of the kernel
    func_ir: Any
    kernel: str
    launch: LaunchShape
    cc: int
    resolver: Resolver
    payloads: list[PayloadVal]
    dtype_follows: list[tuple[PayloadVal, PayloadVal, OpCall, str]]  # (output, input, call, param)
    backing_arrays: list[SharedArrayVal]  # numba_coop.shared.array sites
    descriptors: list[DescVal]
    groups: list[GroupVal]
    sites: list[PlannedSite]
    result_operands: set[int]
    op_calls: list[OpCall]
    constructor_stmts: dict[int, Any]  # id(statement) -> what it made (a payload, a group, a result tuple ...)
    member_reads: dict[str, Any]  # tuple members read where their call stands (_tuple_operands), by variable name

    if TYPE_CHECKING:  # defined by KernelPlan or by another mixin
        def as_context(self) -> CallContext[OpCall, PayloadVal]: ...

        def reject_literal_unroll_of(self, value: Any, what: str) -> None: ...

        def _shape_of(self, var: Any, stmt: Any) -> tuple[int, ...] | None: ...

        @staticmethod
        def is_coop_object(value: Any) -> bool: ...

        def op_call(self, stmt: Any, block: Any, marker: Any) -> OpCall: ...

        def group(self, call: OpCall) -> GroupVal: ...

        def payload(self, var: Any) -> PayloadVal | None: ...

        def tuple_definitions(self, var: Any) -> tuple[list[Any], list[Any]]: ...

        def _bind(self, stmt: Any, signature_of: Any, name: str, skip_self: bool = False) -> dict[str, Any]: ...

        def _static(self, var: Any, stmt: Any, what: str, must: bool = True) -> Any: ...

        def check_payload_size(self, payload: PayloadVal) -> None: ...

        def _backing_array_statements(self, block: Any, stmt: Any, value: SharedArrayVal,
                                      typingctx: Any) -> list[Any]: ...

        def _constant_shape_statements(self, block: Any, stmt: Any) -> list[Any]: ...
