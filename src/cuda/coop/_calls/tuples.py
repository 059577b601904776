"""Multi-operand reduce and scans in the call layer (``_semantics.tuples``; C++: ``_cub.tuples``).

A tuple operand is a ``CallShape`` of several operands (``_calls.shape``); the provider's entry point takes one
parameter per member (``items0``, ``in0``, ``initial_value0``, ...)."""
from __future__ import annotations

from typing import Any

from .._errors import CoopTypeError
from .._semantics.aggregates import is_aggregate
from .._semantics.common import Runtime, Static, literal_as
from .._semantics.shape import CallShape
from .context import C, P, Call, CallContext
from .site import OperandType, Operands, require_payload_dtype


def result_payloads(ctx: CallContext[C, P], call: C, param: str = "value") -> Any:
    """The fresh payloads a call over a tuple of payloads returns (None for scalars or no tuple)."""
    value = call.args.get(param)
    members = ctx.tuple_operands(value) if value is not None else None
    if members is None:
        return None
    payloads = [p for p in (ctx.payload(member) for member in members) if p is not None]
    if len(payloads) != len(members):
        return None
    return ctx.new_result_payloads(call, payloads, tuple(f"{param}[{j}]" for j in range(len(payloads))))


def add_members(operands: Operands, shape: CallShape, name: str) -> list[int]:
    """Each member feeds the C parameter ``{name}{j}``; their operand indices."""
    return [operands.add(f"{name}{j}", member) for j, member in enumerate(shape.operands)]


def add_initial_value(ctx: CallContext[C, P], operands: Operands, call: C,
                      shape: CallShape) -> list[tuple[int, int]]:
    """A tuple ``initial_value`` of the value's arity: each member a literal (converted to its operand's dtype) or a
    runtime value of exactly that dtype (an aggregate member: a value of the aggregate, never a literal); absent:
    zeros. Returns (operand index, member) of each runtime member, whose dtype ``check_initial_value`` checks at
    typing time (where a backend sees an aggregate's type only then)."""
    runtime: list[tuple[int, int]] = []
    value = call.args.get("initial_value")
    members = ctx.tuple_operands(value) if value is not None else None
    arity = len(shape.dtypes)
    if value is not None and members is None:
        raise CoopTypeError(f"{call.name} initial_value must be a tuple of {arity} values, as value is")
    if members is not None and len(members) != arity:
        raise CoopTypeError(f"{call.name} initial_value must be a tuple of {arity} values, as value is; "
                            f"got {len(members)}")
    found = shape.control("initial_value")  # a Static of each member's control (``_calls.shape``)
    controls = found.value if members is not None and isinstance(found, Static) else ()
    assert isinstance(controls, tuple)
    for j, dtype in enumerate(shape.dtypes):
        control = controls[j] if controls else None
        if isinstance(control, Runtime):
            if control.dtype not in (None, dtype):
                raise CoopTypeError(f"{call.name} initial_value[{j}] must have the dtype {dtype}; got "
                                    f"{control.dtype}; cast it")
            runtime.append((operands.add(f"initial_value{j}", members[j]), j))  # type: ignore[index]
        elif control is not None and is_aggregate(dtype):
            raise CoopTypeError(f"{call.name} initial_value[{j}] must be a value of the aggregate dtype {dtype}; got "
                                "a literal")
        else:
            literal = control.value if isinstance(control, Static) else 0
            operands.constant(f"initial_value{j}", literal_as(call.name, f"initial_value[{j}]", literal, dtype))
    return runtime


def check_initial_value(call: Call, shape: CallShape, runtime: list[tuple[int, int]],
                        argtys: tuple[OperandType, ...]) -> None:
    """C9 at typing time: each runtime member of a tuple ``initial_value`` has exactly its operand's dtype."""
    for index, j in runtime:
        require_payload_dtype(call.name, f"initial_value[{j}]", argtys[index], shape.dtypes[j])
