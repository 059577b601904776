"""What a family's call layer asks of the backend that plans a kernel: the ``CallContext`` protocol.

A backend implements it once (numba-cuda-mlir: its whole-function planner, over numba IR; a tracing backend:
over the values it sees while it traces) and every family's ``plan``, ``evidence`` and ``result_payload`` run
unchanged on it. Operands are whatever the backend uses to name a call's inputs (an IR variable, a traced
value): the call layer only passes them back to the context and lists them in a ``SiteCall``'s operand order.
"""
from __future__ import annotations

from typing import Any, Mapping, Protocol

from .._semantics.common import GroupSpec, LaunchShape
from .._semantics.temp_storage import Descriptor as TempStorageDescriptor
from .site import Emission, SiteCall


class Call(Protocol):
    """One operation call: the operation, its public name and its bound arguments (parameter -> operand)."""

    op: str
    name: str  # the qualified name the user called (``cuda.coop.block.reduce``), for messages
    args: Mapping[str, Any]

    @property
    def qualified(self) -> bool:
        """Called through a backend's namespace (its extensions are available), not the common one."""


class Payload(Protocol):
    """A ThreadData the planner knows: its extent and dtype (inference runs before any family plans; ``evidence``
    reads ``explicit`` to tell an inferred dtype from a declared one)."""

    items_per_thread: int
    dtype: str
    explicit: bool
    array: Any  # for each payload of a tuple result: the operand through which the call fills it

    def root(self) -> "Payload":
        """The payload whose dtype this one shares (itself unless it follows another)."""


class Group(Protocol):
    spec: GroupSpec


class Descriptor(Protocol):
    descriptor: TempStorageDescriptor


class PayloadTuple(Protocol):
    items: tuple[Payload, ...]


class CallContext(Protocol):
    """The planner of one kernel specialisation, as the families see it."""

    launch: LaunchShape
    cc: int  # the compute capability built for (90 for sm_90)
    compiler: str  # the compiler's name, for messages about what it can hold
    dtype_words: str  # what names a dtype in this compiler, for messages ("a NumPy or ... scalar type")

    # operands
    def group(self, call: Call) -> Group:
        """The call's group (G-errors when it is not a compile-time group of this kernel)."""

    def payload(self, operand: Any) -> Payload | None:
        """The ThreadData an operand refers to, or None for anything else."""

    def tuple_operands(self, operand: Any) -> list[Any] | None:
        """The members of a tuple the kernel built (``(a, b)``), or None for anything else."""

    def require_payload(self, call: Call, param: str) -> Payload:
        """The ThreadData behind ``param``, or the P4/P5 error for what it is instead."""

    def operand_form(self, operand: Any) -> str | None:
        """``array``, ``local array``, ``shared array`` or ``shared array row`` for those operands, else None."""

    def scalar_dtype(self, operand: Any, call: Call, param: str, through: tuple[str, ...] = ()) -> str:
        """A scalar operand's dtype; ``through``: operations whose scalar result has their ``value``'s dtype."""

    def array_dtype(self, operand: Any) -> str | None:
        """An array operand's element dtype when it is known before typing."""

    def descriptor(self, operand: Any, name: str) -> Descriptor | None:
        """The TempStorage an operand refers to (None when omitted or None)."""

    # options
    def control(self, call: Call, key: str) -> Any:
        """None, Static(value) or Runtime(dtype if visible) for an optional runtime control."""

    def operand_control(self, operand: Any) -> Any:
        """``control`` of an operand rather than a parameter: a member of a tuple control."""

    def static(self, call: Call, key: str, default: Any, kind: str = "value") -> Any:
        """A compile-time option (C4 when its value is only known at run time)."""

    def selector(self, call: Call, key: str, default: str) -> Any:
        """A compile-time selector string."""

    def dtype_of_object(self, value: Any) -> str | None:
        """The dtype name a dtype-like object names (a NumPy type, the compiler's own scalar types)."""

    def holds_by_value(self, dtype: str) -> bool:
        """Whether the compiler holds an aggregate as a value (not as a reference to its bytes)."""

    # results
    def result_operand(self, call: Call) -> Any:
        """The operand through which a call fills its fresh result payload."""

    def result_name(self, call: Call) -> str:
        """What the user calls the call's result, for messages."""

    def new_result_payload(self, call: Call, items_per_thread: int, like: Payload | None,
                           dtype: str | None = None) -> Payload: ...

    def new_result_payloads(self, call: Call, likes: list[Payload],
                            names: tuple[str, ...] = ("keys", "values")) -> PayloadTuple: ...

    def payload_tuple(self, call: Call) -> PayloadTuple:
        """The payloads a tuple-returning call creates."""

    # dtype inference (docs: concepts, "ThreadData payloads")
    def add_evidence(self, payload: Payload, dtype: str | None, call: Call, param: str) -> None: ...

    def follow_dtype(self, output: Payload, source: Payload, call: Call, param: str) -> None: ...

    # the planned call
    def link_operator(self, spec: Any, dtype: str, name: str, param: str, *, arity: int = 2,
                      result: str | None = None, state_dtype: str | None = None) -> list[Any]:
        """The link items of a user callable (none for a built-in functor), compiled by the backend; a failure is
        a CoopTypeError naming ``name`` and ``param``."""

    def add_site(self, call: Call, operands: list[Any], site: SiteCall, emission: Emission,
                 scratch: tuple[Any, Any] | None = None) -> None:
        """Record a planned call and its provider; ``scratch`` is (group spec, descriptor or None) when it needs
        scratch."""
