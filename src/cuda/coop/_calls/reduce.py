"""reduce/sum in the call layer (C++: _cub.families.reduce)."""
from __future__ import annotations


from .._cub.families import reduce as cub_reduce
from .._cub.tuples import split_entry
from .._errors import CoopTypeError
from .._markers import records
from .._semantics.tuples import require_tuple_operator
from . import tuples
from .._semantics.reduce import plan_reduce
from .context import Call, CallContext
from .site import OperandType, Operands, SiteCall, emit, require_runtime_int, require_scalar



def _plan_tuple(ctx: CallContext, call: Call, value: tuples.TupleValue) -> None:
    """A reduction of a tuple of operands with the user's ``binary_op`` (SPEC 8.18): a tuple of scalars."""
    name, args = call.name, call.args
    if records.of(call.op).fixed("operator"):
        raise CoopTypeError(f"{name} takes one operand; reduce a tuple with reduce and binary_op=f")
    binary_op = ctx.static(call, "binary_op", None)
    require_tuple_operator(name, "binary_op", binary_op)
    group = ctx.group(call)
    valid = ctx.control(call, "valid_items")
    desc = ctx.descriptor(args.get("temp_storage"), name)
    k = value.items_per_thread
    spec = plan_reduce(name, group.spec, ctx.launch, value.dtype, k, binary_op,
                       ctx.static(call, "broadcast", True, kind="bool"), valid,
                       ctx.static(call, "algorithm", None, kind="string"), desc.descriptor if desc else None)
    operands = Operands()
    members = tuples.add_members(operands, call, value, "items" if k else "value")
    valid_index = operands.control("valid_items", valid, args.get("valid_items"), getattr(valid, "value", 0))
    emission = emit(lambda s: split_entry(cub_reduce.emit(s), s.dtype, {"items": k}), spec)
    provider = emission.provider

    def check(argtys: tuple[OperandType, ...]) -> None:
        if not k:
            for index in members:
                require_scalar(name, argtys[index])
        if valid_index is not None:
            require_runtime_int(name, "valid_items", argtys[valid_index])

    site = SiteCall(provider.symbol, operands.params(provider), value.dtypes[0], None, check=check)
    site.link = ctx.link_operator(spec.operator, spec.dtype, name, "binary_op")
    ctx.add_site(call, operands.values, site, emission, (group.spec, desc) if spec.uses_scratch else None)


def plan(ctx: CallContext, call: Call) -> None:
    name, args = call.name, call.args
    value = tuples.tuple_value(ctx, call)
    if value is not None:
        return _plan_tuple(ctx, call, value)
    group = ctx.group(call)
    payload = ctx.payload(args["value"])
    dtype = payload.dtype if payload is not None else ctx.scalar_dtype(args["value"], call, "value")
    binary_op = records.of(call.op).fixed("operator") or ctx.static(call, "binary_op", None)
    valid = ctx.control(call, "valid_items")
    desc = ctx.descriptor(args.get("temp_storage"), name)
    spec = plan_reduce(name, group.spec, ctx.launch, dtype, payload.items_per_thread if payload else 0, binary_op,
                       ctx.static(call, "broadcast", True, kind="bool"), valid,
                       ctx.static(call, "algorithm", None, kind="string"), desc.descriptor if desc else None)
    operands = Operands()
    operands.add("items" if payload is not None else "value", args["value"])
    operands.control("valid_items", valid, args.get("valid_items"), getattr(valid, "value", 0))
    emission = emit(cub_reduce.emit, spec)
    provider = emission.provider

    def check(argtys: tuple[OperandType, ...]) -> None:
        if payload is None:
            require_scalar(name, argtys[0])
        if len(argtys) > 1:
            require_runtime_int(name, "valid_items", argtys[1])

    site = SiteCall(provider.symbol, operands.params(provider), spec.dtype, spec.dtype, check=check)
    site.link = ctx.link_operator(spec.operator, spec.dtype, name, "binary_op")
    ctx.add_site(call, operands.values, site, emission, (group.spec, desc) if spec.uses_scratch else None)
