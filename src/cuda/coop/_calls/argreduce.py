"""argmax/argmin in the call layer (C++: _cub.families.argreduce): two results, (value, index), as a tuple."""
from __future__ import annotations

from .._cub.families import argreduce as cub_argreduce
from .._semantics.argreduce import plan_argreduce
from .context import Call, CallContext
from .site import OperandType, Operands, SiteCall, companion_shape, emit, require_runtime_int, require_scalar



def plan(ctx: CallContext, call: Call) -> None:
    name, args = call.name, call.args
    group = ctx.group(call)
    payload = ctx.payload(args["items"])
    dtype = payload.dtype if payload is not None else ctx.scalar_dtype(args["items"], call, "items")
    indices = companion_shape(ctx, call, "indices")
    valid = ctx.control(call, "valid_items")
    desc = ctx.descriptor(args.get("temp_storage"), name)
    spec = plan_argreduce(name, call.op == "argmax", group.spec, ctx.launch, dtype,
                          payload.items_per_thread if payload is not None else 0, indices, valid,
                          desc.descriptor if desc else None, ctx.static(call, "broadcast", True, kind="bool"))
    operands = Operands()
    operands.add("items" if payload is not None else "value", args["items"])
    if spec.has_indices:
        operands.add("indices" if payload is not None else "index", args["indices"])
    valid_index = None
    if spec.has_valid_items:
        valid_index = operands.control("valid_items", valid, args.get("valid_items"), getattr(valid, "value", 0))
    emission = emit(cub_argreduce.emit, spec)
    provider = emission.provider

    def check(argtys: tuple[OperandType, ...]) -> None:
        if payload is None:
            require_scalar(name, argtys[0])
        if valid_index is not None:
            require_runtime_int(name, "valid_items", argtys[valid_index])

    site = SiteCall(provider.symbol, operands.params(provider), spec.dtype, None, check=check)
    ctx.add_site(call, operands.values, site, emission, (group.spec, desc) if spec.uses_scratch else None)
