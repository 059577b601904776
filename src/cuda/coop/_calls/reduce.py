"""reduce/sum in the call layer (C++: _cub.families.reduce).

With ``head_flags`` (docs: operations/reduce, "Segmented reductions"; SPEC 8.21) the call is a segmented reduction:
a fresh payload (a scalar for a scalar value) holding each segment's total at its first position, or with
``compact=True`` the totals compacted beside their count, ``(totals, count)`` (``((t0, t1), count)`` for a tuple:
``new_result_payloads`` with a None for each scalar and the count, the value's members as an inner tuple).
"""
from __future__ import annotations

from typing import Any

from .._cub.families import reduce as cub_reduce
from .._cub.tuples import split_entry
from .._errors import CoopError, CoopTypeError
from .._markers import records
from .._semantics.tuples import MAX_OPERANDS, require_tuple_operator
from . import tuples
from .._semantics.reduce import ReduceOptions, plan_reduce, plan_segmented_reduce
from .context import C, P, CallContext
from .shape import CallShape, call_shape
from .site import Check, OperandType, Operands, SiteCall, companion_shape, emit, require_runtime_int, require_scalar


def _segmented(call: Any) -> bool:
    """A reduction with ``head_flags`` (SPEC 8.21)."""
    return call.args.get("head_flags") is not None


def _compact(ctx: CallContext[C, P], call: C) -> bool:
    try:
        return ctx.static(call, "compact", False, kind="bool") is True
    except CoopError:
        return False  # reported when the call is planned


def result_payload(ctx: CallContext[C, P], call: C) -> Any:
    """What a segmented reduction returns beside its scalars: a fresh payload of the value's shape, or with
    ``compact`` ``(totals, count)`` (``((t0, t1), count)`` for a tuple, a scalar member at its place); a reduction
    without ``head_flags``, a single scalar value's ``(total, count)`` and a tuple of scalars without ``compact``
    return their scalars only. A tuple that ``plan`` refuses (P18) makes none."""
    if not _segmented(call):
        return None
    value = call.args.get("value")
    members = ctx.tuple_operands(value) if value is not None else None
    compact = _compact(ctx, call)
    if members is None:
        like = ctx.payload(value) if value is not None else None
        if like is None:
            return None
        if compact:
            return ctx.new_result_payloads(call, [like, None], ("totals", "count"))
        return ctx.new_result_payload(call, like.items_per_thread, like)
    likes = [ctx.payload(member) for member in members]
    if not 1 <= len(likes) <= MAX_OPERANDS or len({like is None for like in likes}) > 1:
        return None
    if not compact:
        return tuples.result_payloads(ctx, call)
    names = tuple(f"totals{j}" for j in range(len(likes))) + ("count",)
    return ctx.new_result_payloads(call, [*likes, None], names, inner=len(likes))



def _options(ctx: CallContext[C, P], call: C, shape: CallShape) -> ReduceOptions:
    """The operator (the record's for sum; the user's function of tuples for a tuple of operands, SPEC 8.18),
    broadcast and algorithm."""
    fixed = records.of(call.op).fixed("operator")
    if shape.tupled:
        if fixed:
            raise CoopTypeError(f"{call.name} takes one operand; reduce a tuple with reduce and binary_op=f")
        binary_op = ctx.static(call, "binary_op", None)
        require_tuple_operator(call.name, "binary_op", binary_op)
    else:
        binary_op = fixed or ctx.static(call, "binary_op", None)
    return ReduceOptions(binary_op=binary_op, broadcast=ctx.static(call, "broadcast", True, kind="bool"),
                         algorithm=ctx.static(call, "algorithm", None, kind="string"),
                         flags=companion_shape(ctx, call, "head_flags"),
                         compact=ctx.static(call, "compact", False, kind="bool"))


def plan(ctx: CallContext[C, P], call: C) -> None:
    """A reduction of one operand, or of a tuple of operands to a tuple of scalars (SPEC 8.18)."""
    name, args = call.name, call.args
    shape = call_shape(ctx, call, controls=("valid_items",))
    if _segmented(call):
        _plan_segmented(ctx, call, shape)
        return
    spec = plan_reduce(shape, _options(ctx, call, shape))
    k = shape.items_per_thread
    operands = Operands()
    if shape.tupled:
        members = tuples.add_members(operands, shape, "items" if k else "value")
    else:
        members = [operands.add("items" if k else "value", shape.operands[0])]
    valid = shape.control("valid_items")
    valid_index = operands.control("valid_items", valid, args.get("valid_items"), getattr(valid, "value", 0))
    if shape.tupled:
        emission = emit(lambda s: split_entry(cub_reduce.emit(s), s.dtype, {"items": k}), spec)
    else:
        emission = emit(cub_reduce.emit, spec)
    provider = emission.provider

    check = _typing_check(name, k, members, valid_index)
    site = SiteCall(provider.symbol, operands.params(provider), shape.dtypes[0],
                    None if shape.tupled else spec.dtype, check=check)
    site.link = ctx.link_operator(spec.operator, spec.dtype, name, "binary_op")
    ctx.add_site(call, operands.values, site, emission, shape.scratch if spec.uses_scratch else None)


def _typing_check(name: str, k: int, members: list[int], valid_index: int | None) -> Check:
    """Typing's check of a reduction: scalar operands (``k == 0``) are scalars, ``valid_items`` a runtime integer."""

    def check(argtys: tuple[OperandType, ...]) -> None:
        if not k:
            for index in members:
                require_scalar(name, argtys[index])
        if valid_index is not None:
            require_runtime_int(name, "valid_items", argtys[valid_index])

    return check


def _plan_segmented(ctx: CallContext[C, P], call: C, shape: CallShape) -> None:
    """A segmented reduction (SPEC 8.21) of one operand or of a tuple of operands."""
    name, args = call.name, call.args
    spec = plan_segmented_reduce(shape, _options(ctx, call, shape))
    k = shape.items_per_thread
    operands = Operands()
    if shape.tupled:
        members = tuples.add_members(operands, shape, "items" if k else "value")
    else:
        members = [operands.add("items" if k else "value", shape.operands[0])]
    operands.add("head_flags" if k else "flag", args["head_flags"])  # its dtype is checked by planning (P2)
    valid = shape.control("valid_items")
    valid_index = operands.control("valid_items", valid, args.get("valid_items"),
                                   getattr(valid, "value", spec.positions))
    if k and (shape.tupled or spec.compact):
        for j, result in enumerate(ctx.payload_tuple(call).items):
            operands.add(f"output{j}" if shape.tupled else "output", result.array)  # the fresh result payloads
    elif k:
        operands.add("output", ctx.result_operand(call))
    if shape.tupled:
        emission = emit(lambda s: split_entry(cub_reduce.emit_segmented(s), s.dtype, {"items": k, "output": k},
                                              ("output",)), spec)
    else:
        emission = emit(cub_reduce.emit_segmented, spec)
    provider = emission.provider

    check = _typing_check(name, k, members, valid_index)
    scalar_result = spec.dtype if not k and not shape.tupled and not spec.compact else None
    site = SiteCall(provider.symbol, operands.params(provider), shape.dtypes[0], scalar_result, check=check)
    site.link = ctx.link_operator(spec.operator, spec.dtype, name, "binary_op")
    ctx.add_site(call, operands.values, site, emission, shape.scratch if spec.uses_scratch else None)
