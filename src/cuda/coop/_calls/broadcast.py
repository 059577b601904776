"""broadcast in the call layer (C++: _cub.families.broadcast): one value, or a tuple of 1-8 whose members travel on
their own (docs: operations/broadcast; SPEC 8.19, 8.26), a payload into a fresh payload and a scalar into a scalar.

The provider takes the members apart (``_cub.families.broadcast``): a payload member feeds ``items{j}`` and its
fresh result ``output{j}``, a scalar member ``value{j}`` and comes back through the ``out`` parameter ``result{j}``.
A tuple that mixes them returns its payloads and its scalars in the tuple's order (``new_result_payloads`` with a
None for each scalar member)."""
from __future__ import annotations

from typing import Any

from .._cub.families import broadcast as cub_broadcast
from .._semantics.broadcast import BroadcastOptions, plan_broadcast
from .._semantics.tuples import MAX_OPERANDS
from .context import C, P, CallContext
from .shape import call_shape
from .site import OperandType, Operands, SiteCall, emit, require_runtime_int, require_scalar, same_shape_result


def result_payload(ctx: CallContext[C, P], call: C) -> Any:
    """A fresh payload of the value's shape; for a tuple holding payloads, a fresh payload per payload member and a
    None where a scalar member comes back as a scalar. A tuple of scalars only returns a tuple of scalars."""
    value = call.args.get("value")
    members = ctx.tuple_operands(value) if value is not None else None
    if members is None:
        return same_shape_result(ctx, call)
    likes = [ctx.payload(member) for member in members]
    if all(like is None for like in likes) or not 1 <= len(likes) <= MAX_OPERANDS:
        return None  # scalars only, or a tuple plan() refuses (P18)
    return ctx.new_result_payloads(call, likes, tuple(f"value{j}" for j in range(len(likes))))


def plan(ctx: CallContext[C, P], call: C) -> None:
    name, args = call.name, call.args
    shape = call_shape(ctx, call, controls=("src_rank",), through=("broadcast",))
    spec = plan_broadcast(shape, BroadcastOptions())
    operands = Operands()
    suffixes = [str(j) if shape.tupled else "" for j in range(len(spec.extents))]
    scalars = [operands.add(f"items{s}" if k else f"value{s}", member)
               for s, k, member in zip(suffixes, spec.extents, shape.operands)]
    scalars = [index for index, k in zip(scalars, spec.extents) if not k]
    if shape.tupled:
        fresh = iter(ctx.payload_tuple(call).items if any(spec.extents) else ())
        for s, k in zip(suffixes, spec.extents):
            if k:
                operands.add(f"output{s}", next(fresh).array)
    elif spec.extents[0]:
        operands.add("output", ctx.result_operand(call))  # the fresh result payload
    src_rank = shape.control("src_rank")
    src_index = operands.control("src_rank", src_rank, args.get("src_rank"), getattr(src_rank, "value", 0))
    emission = emit(cub_broadcast.emit, spec)
    provider = emission.provider

    def check(argtys: tuple[OperandType, ...]) -> None:
        for index in scalars:
            require_scalar(name, argtys[index])
        if src_index is not None:
            require_runtime_int(name, "src_rank", argtys[src_index])

    single_scalar = not shape.tupled and not spec.extents[0]
    site = SiteCall(provider.symbol, operands.params(provider), spec.dtypes[0],
                    spec.dtypes[0] if single_scalar else None, check=check)
    ctx.add_site(call, operands.values, site, emission, shape.scratch if spec.uses_scratch else None)
