"""argmax/argmin in the call layer (C++: _cub.families.argreduce): two results, (value, index), as a tuple."""
from __future__ import annotations

from .._cub.families import argreduce as cub_argreduce
from .._semantics.argreduce import ArgReduceOptions, plan_argreduce
from .context import C, P, CallContext
from .shape import call_shape
from .site import OperandType, Operands, SiteCall, companion_shape, emit, require_runtime_int, require_scalar

def plan(ctx: CallContext[C, P], call: C) -> None:
    name, args = call.name, call.args
    shape = call_shape(ctx, call, operand="items", controls=("valid_items",))
    spec = plan_argreduce(shape, ArgReduceOptions(largest=call.op == "argmax",
                                                  indices=companion_shape(ctx, call, "indices"),
                                                  broadcast=ctx.static(call, "broadcast", True, kind="bool")))
    scalar = shape.payload is None
    operands = Operands()
    operands.add("value" if scalar else "items", shape.operands[0])
    if spec.has_indices:
        operands.add("index" if scalar else "indices", args["indices"])
    valid_index = None
    if spec.has_valid_items:
        valid = shape.control("valid_items")
        valid_index = operands.control("valid_items", valid, args.get("valid_items"), getattr(valid, "value", 0))
    emission = emit(cub_argreduce.emit, spec)
    provider = emission.provider

    def check(argtys: tuple[OperandType, ...]) -> None:
        if scalar:
            require_scalar(name, argtys[0])
        if valid_index is not None:
            require_runtime_int(name, "valid_items", argtys[valid_index])

    site = SiteCall(provider.symbol, operands.params(provider), spec.dtype, None, check=check)
    ctx.add_site(call, operands.values, site, emission, shape.scratch if spec.uses_scratch else None)
