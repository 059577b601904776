"""A call's shape, built once by the call layer (``_semantics.shape.CallShape``): every family's ``plan`` starts
here instead of repeating the group, payload, dtype, control and descriptor look-ups."""
from __future__ import annotations

from typing import Any

from .._markers.records import extension, record
from .._semantics.common import Control, Static, check_payload_dtype
from .._semantics.shape import CallShape as CallShape
from .._semantics.tuples import check_operands, takes_tuples
from .context import C, P, CallContext, dtype_of


def call_shape(ctx: CallContext[C, P], call: C, *, operand: str | None = "value", controls: tuple[str, ...] = (),
               scalars: bool = True, needs_payload: bool = False, through: tuple[str, ...] = ()) -> CallShape:
    """The shape of ``call``: its group, the operand ``operand`` (None: the call has no such operand; a tuple of 1-8
    payloads or scalars where the operation's record says it takes tuples), the controls named in ``controls`` and
    its TempStorage. A tuple's members are checked as SPEC 8.18 says (one extent, P1/P2 each). ``scalars``: a
    scalar operand's dtype is looked up (False: the family takes payloads only and reports a scalar itself; its
    dtype is None). ``needs_payload``: the operand must be a payload (P4), or where the record has a scalar form, in a
    qualified call, a scalar (docs: qualified, "Payload forms"). ``through``: as ``CallContext.scalar_dtype``'s."""
    group = ctx.group(call)
    value = call.args.get(operand) if operand is not None else None
    members = ctx.tuple_operands(value) if value is not None and takes_tuples(call.op) else None
    if members is not None:
        payloads = tuple(ctx.payload(member) for member in members)
        dtypes = tuple(dtype_of(p, call, f"{operand}[{j}]") if p is not None
                       else ctx.scalar_dtype(member, call, f"{operand}[{j}]")
                       for j, (member, p) in enumerate(zip(members, payloads)))
        extents = [p.items_per_thread if p is not None else 0 for p in payloads]
        declared = record(call.op)
        check_operands(call.name, extents, dtypes, param=operand or "value",
                       independent=declared is not None and declared.independent_members,
                       moved=declared is not None and declared.moved_members)
        for position, dtype in enumerate(dtypes):  # P1/P2 per member: float16 and aggregates are qualified-only
            check_payload_dtype(call.name, f"{operand}[{position}]", dtype, call.qualified)
        operands: tuple[Any, ...] = tuple(members)
    elif operand is not None:
        payload = ctx.payload(value)
        if payload is None and needs_payload and not (call.qualified and extension(call.op).scalar_form
                                                      and ctx.operand_form(value) is None):
            payload = ctx.require_payload(call, operand)
        payloads = (payload,)
        known: Any = payload.dtype if payload is not None else None  # None: reported by the family's plan
        dtypes = (ctx.scalar_dtype(value, call, operand, through) if payload is None and scalars else known,)
        extents = [payload.items_per_thread if payload is not None else 0]
        operands = (value,)
    else:
        payloads, dtypes, extents, operands = (), (), [0], ()
    found = {key: _control(ctx, call, key, members is not None) for key in controls}
    storage = ctx.descriptor(call.args.get("temp_storage"), call.name)
    return CallShape(name=call.name, op=call.op, group=group.spec, launch=ctx.launch, dtypes=dtypes,
                     items_per_thread=extents[0], extents=tuple(extents), tupled=members is not None,
                     qualified=call.qualified,
                     descriptor=storage.descriptor if storage is not None else None, controls=found,
                     operands=operands, payloads=payloads, storage=storage)


def _control(ctx: CallContext[C, P], call: C, key: str, tupled: bool) -> Control:
    """A control of the call; in a multi-operand call a tuple of them is one Static of each member's control."""
    value = call.args.get(key)
    members = ctx.tuple_operands(value) if tupled and value is not None else None
    if members is not None:
        return Static(tuple(ctx.operand_control(member) for member in members))
    return ctx.control(call, key)  # type: ignore[no-any-return]
