"""What a family's call layer asks of the backend that plans a kernel: the ``CallContext`` protocol.

A backend implements it once (numba-cuda-mlir: its whole-function planner, over numba IR; a tracing backend:
over the values it sees while it traces) and every family's ``plan``, ``evidence`` and ``result_payload`` run
unchanged on it. Operands are whatever the backend uses to name a call's inputs (an IR variable, a traced
value): the call layer only passes them back to the context and lists them in a ``SiteCall``'s operand order.
"""
from __future__ import annotations

from typing import Any, Mapping, Protocol, Sequence, TypeVar

from .._errors import CoopTypeError
from .._semantics.common import GroupSpec, LaunchShape
from .._semantics.temp_storage import Descriptor as TempStorageDescriptor
from .site import Emission, SiteCall


class Call(Protocol):
    """One operation call: the operation, its public name and its bound arguments (parameter -> operand)."""

    @property
    def op(self) -> str: ...

    @property
    def name(self) -> str:
        """The qualified name the user called (``cuda.coop.block.reduce``), for messages."""

    @property
    def args(self) -> Mapping[str, Any]: ...

    @property
    def qualified(self) -> bool:
        """Called through a backend's namespace (its extensions are available), not the common one."""


class Payload(Protocol):
    """A ThreadData the planner knows: its extent and dtype (inference runs before any family plans; ``evidence``
    reads ``explicit`` to tell an inferred dtype from a declared one)."""

    items_per_thread: int
    dtype: str | None  # None until inference (or a user's declaration) gives one
    explicit: bool
    array: Any  # for each payload of a tuple result: the operand through which the call fills it

    def root(self) -> "Payload":
        """The payload whose dtype this one shares (itself unless it follows another)."""


def dtype_of(payload: Payload, call: Call, param: str) -> str:
    """The dtype of the payload ``param`` as planning reads it, P9 when nothing has said it yet (a backend that plans
    each call as it traces reports P9 at the line that made the payload)."""
    if payload.dtype is None:
        raise CoopTypeError(f"{call.name}: could not infer the dtype of ThreadData {param}; pass dtype= or load into "
                            f"it first")
    return payload.dtype


class Group(Protocol):
    spec: GroupSpec


class Descriptor(Protocol):
    descriptor: TempStorageDescriptor


class PayloadTuple(Protocol):
    @property
    def items(self) -> tuple[Payload, ...]: ...


C = TypeVar("C", bound=Call)  # a backend's own call record
P = TypeVar("P", bound=Payload)  # a backend's own payload
_CallIn = TypeVar("_CallIn", bound=Call, contravariant=True)  # C, as the protocol only takes it


class CallContext(Protocol[_CallIn, P]):
    """The planner of one kernel specialisation, as the families see it: generic over the backend's own call record
    ``C`` and payload ``P``, so that a family hands the backend back exactly what it was given, and each backend is
    checked against this protocol where it calls a family (``_calls.Family``)."""

    @property
    def launch(self) -> LaunchShape: ...

    @property
    def cc(self) -> int:
        """The compute capability built for (90 for sm_90)."""

    @property
    def compiler(self) -> str:
        """The compiler's name, for messages about what it can hold."""

    @property
    def dtype_words(self) -> str:
        """What names a dtype in this compiler, for messages ("a NumPy or ... scalar type")."""

    # operands
    def group(self, call: _CallIn) -> Group:
        """The call's group (G-errors when it is not a compile-time group of this kernel)."""

    def payload(self, operand: Any) -> P | None:
        """The ThreadData an operand refers to, or None for anything else."""

    def tuple_operands(self, operand: Any) -> list[Any] | None:
        """The members of a tuple the kernel built (``(a, b)``), or None for anything else."""

    def require_payload(self, call: _CallIn, param: str) -> P:
        """The ThreadData behind ``param``, or the P4/P5 error for what it is instead."""

    def operand_form(self, operand: Any) -> str | None:
        """``array``, ``local array``, ``shared array`` or ``shared array row`` for those operands, else None."""

    def scalar_dtype(self, operand: Any, call: _CallIn, param: str, through: tuple[str, ...] = ()) -> str:
        """A scalar operand's dtype; ``through``: operations whose scalar result has their ``value``'s dtype."""

    def array_dtype(self, operand: Any) -> str | None:
        """An array operand's element dtype when it is known before typing."""

    def descriptor(self, operand: Any, name: str) -> Descriptor | None:
        """The TempStorage an operand refers to (None when omitted or None)."""

    # options
    def control(self, call: _CallIn, key: str) -> Any:
        """None, Static(value) or Runtime(dtype if visible) for an optional runtime control."""

    def operand_control(self, operand: Any) -> Any:
        """``control`` of an operand rather than a parameter: a member of a tuple control."""

    def static(self, call: _CallIn, key: str, default: Any, kind: str = "value") -> Any:
        """A compile-time option (C4 when its value is only known at run time)."""

    def selector(self, call: _CallIn, key: str, default: str) -> Any:
        """A compile-time selector string."""

    def dtype_of_object(self, value: Any) -> str | None:
        """The dtype name a dtype-like object names (a NumPy type, the compiler's own scalar types)."""

    def holds_by_value(self, dtype: str) -> bool:
        """Whether the compiler holds an aggregate as a value (not as a reference to its bytes)."""

    # results
    def result_operand(self, call: _CallIn) -> Any:
        """The operand through which a call fills its fresh result payload."""

    def result_name(self, call: _CallIn) -> str:
        """What the user calls the call's result, for messages."""

    def new_result_payload(self, call: _CallIn, items_per_thread: int, like: P | None,
                           dtype: str | None = None) -> P: ...

    def new_result_payloads(self, call: _CallIn, likes: Sequence[P | None],
                            names: tuple[str, ...] = ("keys", "values"), inner: int = 0) -> PayloadTuple:
        """The fresh payloads a call returns as a tuple, each shaped like one of ``likes`` (``items``, in order). A
        None in ``likes`` is a scalar at that place of the returned tuple, which the call writes through its next
        ``out`` parameter: the call then returns its payloads and scalars in the tuple's order (a broadcast of
        ``(x, items)``). ``inner``: the first ``inner`` places of ``likes`` form a tuple of their own, the first
        member of the returned tuple, whose other members are the remaining places (a select of a tuple returns
        ``((a, b), count)``: ``likes`` ``[a, b, None]`` with ``inner=2``)."""

    def payload_tuple(self, call: _CallIn) -> PayloadTuple:
        """The payloads a tuple-returning call creates."""

    # dtype inference (docs: concepts, "ThreadData payloads")
    def add_evidence(self, payload: P, dtype: str | None, call: _CallIn, param: str) -> None: ...

    def follow_dtype(self, output: P, source: P, call: _CallIn, param: str) -> None: ...

    # the planned call
    def link_operator(self, spec: Any, dtype: str, name: str, param: str, *, arity: int = 2,
                      result: str | None = None, state_dtype: str | None = None,
                      extra: tuple[str, ...] = ()) -> list[Any]:
        """The link items of a user callable (none for a built-in functor), compiled by the backend; a failure is
        a CoopTypeError naming ``name`` and ``param``. ``state_dtype``: a StatefulFunction's op, whose first
        argument is the caller's one-item state payload (by pointer in C); ``extra``: the dtypes of arguments after
        the ``arity`` operands, by value (a prefix callback's ``has_head``, int32)."""

    def add_site(self, call: _CallIn, operands: list[Any], site: SiteCall, emission: Emission,
                 scratch: tuple[Any, Any] | None = None) -> None:
        """Record a planned call and its provider; ``scratch`` is (group spec, descriptor or None) when it needs
        scratch."""
