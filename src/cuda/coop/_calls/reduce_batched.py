"""reduce_batched in the call layer (C++: _cub.families.reduce_batched)."""
from __future__ import annotations

from typing import Any

from .._cub.families import reduce_batched as cub_reduce_batched
from .._semantics.common import WARP_SCOPE
from .._semantics.layouts import reduce_batched_extent as result_extent
from .._semantics.reduce_batched import ReduceBatchedOptions, plan_reduce_batched, require_warp_group
from .context import C, P, CallContext
from .shape import call_shape
from .site import Operands, SiteCall, emit

def result_payload(ctx: CallContext[C, P], call: C) -> Any:
    """A fresh payload of ceil(B / W) slots with the input's dtype (None for a scalar: plan reports O4)."""
    value = ctx.payload(call.args["value"]) if "value" in call.args else None
    if value is None:
        return None
    group = ctx.group(call).spec
    width = group.size if group.kind in WARP_SCOPE else 1  # other kinds are rejected (G3) when planned
    return ctx.new_result_payload(call, result_extent(value.items_per_thread, width), value)


def plan(ctx: CallContext[C, P], call: C) -> None:
    name, args = call.name, call.args
    shape = call_shape(ctx, call, scalars=False)
    if shape.payload is None and ctx.operand_form(args["value"]) is not None:
        require_warp_group(name, shape.group, ctx.launch)  # group errors first (docs: errors, "Reading a message")
        ctx.require_payload(call, "value")  # an array form: P4 (common) or the qualified form's R9
    spec = plan_reduce_batched(shape, ReduceBatchedOptions(
        binary_op=ctx.static(call, "binary_op", None),
        output_layout=ctx.static(call, "output_layout", "striped", kind="string")))
    emission = emit(cub_reduce_batched.emit, spec)
    provider = emission.provider
    operands = Operands()
    operands.add("items", shape.operands[0])
    operands.add("output", ctx.result_operand(call))
    site = SiteCall(provider.symbol, operands.params(provider), spec.dtype)
    site.link = ctx.link_operator(spec.operator, spec.dtype, name, "binary_op")
    ctx.add_site(call, operands.values, site, emission)
