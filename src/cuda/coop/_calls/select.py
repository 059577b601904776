"""select and partition in the call layer (C++: _cub.families.select; docs: operations/select; SPEC 8.20).

The items are one operand or a tuple of 1-8 of one shape, all moved by one permutation. A payload member feeds
``items{j}`` and its fresh result ``output{j}``; a scalar member feeds ``value{j}`` and comes back through the ``out``
parameter ``result{j}``; the count comes back through the last ``out`` parameter. The call returns ``(result,
count)``, or ``((a, b, ...), count)`` for a tuple: ``new_result_payloads`` with a None for each scalar and for the
count, and the tuple's members as an inner tuple.
"""
from __future__ import annotations

from typing import Any

from .._cub.families import select as cub_select
from .._errors import CoopTypeError
from .._semantics.select import SelectOptions, plan_select
from .._semantics.tuples import MAX_OPERANDS
from .context import C, P, CallContext
from .shape import call_shape
from .site import OperandType, Operands, SiteCall, companion_shape, emit, require_runtime_int


def result_payload(ctx: CallContext[C, P], call: C) -> Any:
    """Fresh items of the operand's shape beside the count: ``(payload, count)``, ``((a, b), count)`` for a tuple
    (a scalar member at its place); scalar items alone come back as the call's ``out`` results, ``(value, count)``.
    A tuple that ``plan`` refuses (P18) makes none."""
    items = call.args.get("items")
    if items is None:
        return None
    members = ctx.tuple_operands(items)
    if members is None:
        like = ctx.payload(items)
        return ctx.new_result_payloads(call, [like, None], ("items", "count")) if like is not None else None
    likes = [ctx.payload(member) for member in members]
    shapes = {like is None for like in likes}
    if not 1 <= len(likes) <= MAX_OPERANDS or len(shapes) > 1:
        return None
    names = tuple(f"items{j}" for j in range(len(likes))) + ("count",)
    return ctx.new_result_payloads(call, [*likes, None], names, inner=len(likes))


def require_item(name: str, param: str, ty: OperandType) -> None:
    """A scalar item: a number or an aggregate."""
    if not ty.scalar:
        raise CoopTypeError(f"{name} {param} must be a scalar or a ThreadData; got {ty.text}")


def plan(ctx: CallContext[C, P], call: C) -> None:
    name, args = call.name, call.args
    shape = call_shape(ctx, call, operand="items", controls=("valid_items",))
    flags = companion_shape(ctx, call, "flags")
    if flags is None:
        raise CoopTypeError(f"{name} flags must be an integer ThreadData of the items' extent, or an integer or "
                            "boolean scalar for scalar items; got None")
    spec = plan_select(shape, SelectOptions(flags=flags))
    k = shape.items_per_thread
    operands = Operands()
    scalars = [(operands.add(f"value{j}", member), j) for j, member in enumerate(shape.operands)] if not k else []
    for j, member in enumerate(shape.operands if k else ()):
        operands.add(f"items{j}", member)
    operands.add("flags" if k else "flag", args["flags"])  # its dtype is checked by planning (P2)
    for j, result in enumerate(ctx.payload_tuple(call).items if k else ()):
        operands.add(f"output{j}", result.array)  # the fresh result payloads
    valid = shape.control("valid_items")
    valid_index = operands.control("valid_items", valid, args.get("valid_items"),
                                   getattr(valid, "value", spec.positions))
    emission = emit(cub_select.emit, spec)
    provider = emission.provider

    def check(argtys: tuple[OperandType, ...]) -> None:
        for index, j in scalars:
            require_item(name, f"items[{j}]" if shape.tupled else "items", argtys[index])
        if valid_index is not None:
            require_runtime_int(name, "valid_items", argtys[valid_index])

    site = SiteCall(provider.symbol, operands.params(provider), spec.dtypes[0], None, check=check)
    ctx.add_site(call, operands.values, site, emission, shape.scratch)
