"""adjacent_difference and discontinuity in the call layer (C++: _cub.families.adjacent).

``discontinuity(mode="heads_and_tails")`` returns ``(heads, tails)``: two fresh int32 payloads whose local arrays
the rewrite packs into a tuple, like the pair sorts."""
from __future__ import annotations

from typing import Any

from .._cub.families import adjacent as cub_adjacent
from .._errors import CoopError
from .._semantics.adjacent import (
    PREDECESSOR,
    SUCCESSOR,
    AdjacentDifferenceOptions,
    DiscontinuityOptions,
    boundary_literal,
    discontinuity_mode,
    plan_adjacent_difference,
    plan_discontinuity,
)
from .context import C, P, CallContext
from .shape import call_shape
from .site import OperandType, Operands, SiteCall, emit, require_payload_dtype, require_runtime_int


def _mode(ctx: CallContext[C, P], call: C) -> str | None:
    """The canonical discontinuity mode, or None when it is invalid (reported when the call is planned)."""
    try:
        return discontinuity_mode(call.name, ctx.static(call, "mode", "heads", kind="string"))
    except CoopError:
        return None


def result_payload(ctx: CallContext[C, P], call: C) -> Any:
    """A fresh payload like the input (adjacent_difference) or int32 flags, two of them for heads_and_tails."""
    values = ctx.payload(call.args["values"]) if "values" in call.args else None
    if values is None:
        return None
    k = values.items_per_thread
    if call.op == "adjacent_difference":
        return ctx.new_result_payload(call, k, values)
    if _mode(ctx, call) != "heads_and_tails":
        return ctx.new_result_payload(call, k, None, dtype="int32")
    flags = [ctx.new_result_payload(call, k, None, dtype="int32") for _ in range(2)]  # int32 roots of the pair
    return ctx.new_result_payloads(call, flags, names=("heads", "tails"))


def plan(ctx: CallContext[C, P], call: C) -> None:
    name, args = call.name, call.args
    shape = call_shape(ctx, call, operand="values", controls=("valid_items", PREDECESSOR, SUCCESSOR),
                       needs_payload=True)
    controls, qualified = shape.controls, call.qualified
    if call.op == "adjacent_difference":
        spec = plan_adjacent_difference(shape, AdjacentDifferenceOptions(
            direction=ctx.static(call, "direction", "left", kind="string"),
            difference_op=ctx.static(call, "difference_op", None) if qualified else None))
        outputs = {"output": ctx.result_operand(call)}
        boundary = PREDECESSOR if spec.has_predecessor else SUCCESSOR
        names = {"valid_items": "valid_items", boundary: "boundary"}  # control -> C parameter
    else:
        spec = plan_discontinuity(shape, DiscontinuityOptions(
            mode=ctx.static(call, "mode", "heads", kind="string"),
            flag_op=ctx.static(call, "flag_op", None) if qualified else None))
        if spec.kind == "heads_and_tails":
            results = ctx.payload_tuple(call).items
            outputs = {"output_heads": results[0].array, "output_tails": results[1].array}
        else:
            outputs = {f"output_{spec.kind}": ctx.result_operand(call)}
        names = {PREDECESSOR: "predecessor", SUCCESSOR: "successor"}
    operands = Operands()
    operands.add("items", shape.operands[0])
    for output, operand in outputs.items():
        operands.add(output, operand)

    def literal(key: str, control: Any) -> object:
        if key != "valid_items":  # a literal converted to the payload dtype, or an unused 0
            value = boundary_literal(name, key, control, spec.dtype)
            return 0 if value is None else value
        return 0 if control is None else control.value

    runtime = operands.controls(args, {key: controls[key] for key in names}, literal, names)
    emission = emit(cub_adjacent.emit, spec)
    provider = emission.provider

    def check(argtys: tuple[OperandType, ...]) -> None:
        for key, index in runtime.items():
            if key == "valid_items":
                require_runtime_int(name, key, argtys[index])
            else:
                require_payload_dtype(name, key, argtys[index], spec.dtype)

    site = SiteCall(provider.symbol, operands.params(provider), spec.dtype, check=check)
    if call.op == "adjacent_difference":
        site.link = ctx.link_operator(spec.operator, spec.dtype, name, "difference_op")
    else:
        site.link = ctx.link_operator(spec.operator, spec.dtype, name, "flag_op", result="boolean")
    ctx.add_site(call, operands.values, site, emission, shape.scratch)
