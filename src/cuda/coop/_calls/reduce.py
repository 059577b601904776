"""reduce/sum in the call layer (C++: _cub.families.reduce)."""
from __future__ import annotations


from .._cub.families import reduce as cub_reduce
from .._cub.tuples import split_entry
from .._errors import CoopTypeError
from .._markers import records
from .._semantics.tuples import require_tuple_operator
from . import tuples
from .._semantics.reduce import ReduceOptions, plan_reduce
from .context import C, P, CallContext
from .shape import CallShape, call_shape
from .site import OperandType, Operands, SiteCall, emit, require_runtime_int, require_scalar



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
                         algorithm=ctx.static(call, "algorithm", None, kind="string"))


def plan(ctx: CallContext[C, P], call: C) -> None:
    """A reduction of one operand, or of a tuple of operands to a tuple of scalars (SPEC 8.18)."""
    name, args = call.name, call.args
    shape = call_shape(ctx, call, controls=("valid_items",))
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

    def check(argtys: tuple[OperandType, ...]) -> None:
        if not k:
            for index in members:
                require_scalar(name, argtys[index])
        if valid_index is not None:
            require_runtime_int(name, "valid_items", argtys[valid_index])

    site = SiteCall(provider.symbol, operands.params(provider), shape.dtypes[0],
                    None if shape.tupled else spec.dtype, check=check)
    site.link = ctx.link_operator(spec.operator, spec.dtype, name, "binary_op")
    ctx.add_site(call, operands.values, site, emission, shape.scratch if spec.uses_scratch else None)
