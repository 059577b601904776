"""Multi-operand reduce and scans in the call layer (``_semantics.tuples``; C++: ``_cub.tuples``).

A tuple operand's members are entered in the call's arguments as ``value#0``, ``value#1``, ... (and the same for a
tuple ``initial_value``), so that every backend's operand queries (payload, scalar dtype, control) serve each of
them; the provider's entry point takes one parameter per member (``items0``, ``in0``, ``initial_value0``, ...)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast

from .._errors import CoopTypeError
from .._semantics.aggregates import is_aggregate
from .._semantics.common import Runtime, Static, check_payload_dtype, literal_as
from .._semantics.tuples import check_operands, tuple_dtype
from .context import Call, CallContext
from .site import OperandType, Operands, require_payload_dtype


@dataclass(frozen=True)
class TupleValue:
    keys: list[str]  # the members' keys in call.args
    payloads: list[Any]  # each member's payload (None: a scalar)
    dtypes: list[str]
    dtype: str  # the tuple dtype
    items_per_thread: int  # 0: scalars


def member_keys(ctx: CallContext, call: Call, param: str) -> list[str] | None:
    """Enter the members of the tuple argument ``param`` in ``call.args`` (``param#j``); None when it is no tuple."""
    value = call.args.get(param)
    members = ctx.tuple_operands(value) if value is not None else None
    if members is None:
        return None
    keys = [f"{param}#{j}" for j in range(len(members))]
    cast("dict[str, Any]", call.args).update(zip(keys, members))  # both backends' calls hold a dict
    return keys


def tuple_value(ctx: CallContext, call: Call, param: str = "value") -> TupleValue | None:
    """The tuple operand ``param`` (1-8 payloads of one extent, or scalars), or None when it is not a tuple."""
    keys = member_keys(ctx, call, param)
    if keys is None:
        return None
    payloads = [ctx.payload(call.args[key]) for key in keys]
    dtypes = [p.dtype if p is not None else ctx.scalar_dtype(call.args[key], call, key.replace("#", "[") + "]")
              for key, p in zip(keys, payloads)]
    extents = [p.items_per_thread if p is not None else 0 for p in payloads]
    check_operands(call.name, extents, dtypes)
    for position, dtype in enumerate(dtypes):  # P1/P2 per member: float16 and aggregates are qualified-only
        check_payload_dtype(call.name, f"value[{position}]", dtype, call.qualified)
    return TupleValue(keys, payloads, dtypes, tuple_dtype(dtypes), extents[0])


def result_payloads(ctx: CallContext, call: Call, param: str = "value") -> Any:
    """The fresh payloads a call over a tuple of payloads returns (None for scalars or no tuple)."""
    keys = member_keys(ctx, call, param)
    if keys is None:
        return None
    payloads = [p for p in (ctx.payload(call.args[key]) for key in keys) if p is not None]
    if len(payloads) != len(keys):
        return None
    return ctx.new_result_payloads(call, payloads, tuple(f"{param}[{j}]" for j in range(len(payloads))))


def add_members(operands: Operands, call: Call, value: TupleValue, name: str) -> list[int]:
    """Each member feeds the C parameter ``{name}{j}``; their operand indices."""
    return [operands.add(f"{name}{j}", call.args[key]) for j, key in enumerate(value.keys)]


def add_initial_value(ctx: CallContext, operands: Operands, call: Call, value: TupleValue) -> list[tuple[int, int]]:
    """A tuple ``initial_value`` of the value's arity: each member a literal (converted to its operand's dtype) or a
    runtime value of exactly that dtype (an aggregate member: a value of the aggregate, never a literal); absent:
    zeros. Returns (operand index, member) of each runtime member, whose dtype ``check_initial_value`` checks at
    typing time (where a backend sees an aggregate's type only then)."""
    runtime: list[tuple[int, int]] = []
    keys = member_keys(ctx, call, "initial_value")
    if call.args.get("initial_value") is not None and keys is None:
        raise CoopTypeError(f"{call.name} initial_value must be a tuple of {len(value.keys)} values, as value is")
    if keys is not None and len(keys) != len(value.keys):
        raise CoopTypeError(f"{call.name} initial_value must be a tuple of {len(value.keys)} values, as value is; "
                            f"got {len(keys)}")
    for j, dtype in enumerate(value.dtypes):
        control = ctx.control(call, keys[j]) if keys is not None else None
        if isinstance(control, Runtime):
            if control.dtype not in (None, dtype):
                raise CoopTypeError(f"{call.name} initial_value[{j}] must have the dtype {dtype}; got "
                                    f"{control.dtype}; cast it")
            runtime.append((operands.add(f"initial_value{j}", call.args[keys[j]]), j))  # type: ignore[index]
        elif control is not None and is_aggregate(dtype):
            raise CoopTypeError(f"{call.name} initial_value[{j}] must be a value of the aggregate dtype {dtype}; got "
                                "a literal")
        else:
            literal = control.value if isinstance(control, Static) else 0
            operands.constant(f"initial_value{j}", literal_as(call.name, f"initial_value[{j}]", literal, dtype))
    return runtime


def check_initial_value(call: Call, value: TupleValue, runtime: list[tuple[int, int]],
                        argtys: tuple[OperandType, ...]) -> None:
    """C9 at typing time: each runtime member of a tuple ``initial_value`` has exactly its operand's dtype."""
    for index, j in runtime:
        require_payload_dtype(call.name, f"initial_value[{j}]", argtys[index], value.dtypes[j])
