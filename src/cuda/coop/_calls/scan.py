"""The scan family in the call layer (C++: _cub.families.scan).

Qualified extensions (docs: operations/scan): warp ``valid_items`` (an i64 parameter the provider range-checks),
``aggregate_output`` (a one-item payload the provider writes through a pointer) and ``prefix_op`` with a
``StatefulFunction``, whose one-item state payload (the optional positional operand ``state``) is passed by
pointer to the user's ``op(state, block_aggregate)``, compiled to LTO-IR as ``T op(S*, T)``.
"""
from __future__ import annotations

from typing import Any

from .._cub.families import scan as cub_scan
from .._cub.tuples import split_entry
from .._errors import CoopError, CoopTypeError, CoopValueError
from .._semantics.scan import is_stateful, plan_scan
from .._semantics.aggregates import is_aggregate
from .._semantics.common import Static
from .._semantics.tuples import require_tuple_operator
from . import tuples
from .context import Call, CallContext
from .site import (
    OperandType,
    Operands,
    SiteCall,
    emit,
    require_payload_dtype,
    require_runtime_int,
    require_scalar,
    companion_shape,
    same_shape_result,
)




def _state_dtype(ctx: CallContext, name: str, prefix_op: Any) -> str:
    """The state dtype of a StatefulFunction as a dtype name (P12 shape otherwise)."""
    dtype = ctx.dtype_of_object(prefix_op.dtype)
    if dtype is None:
        raise CoopTypeError(f"{name} prefix_op StatefulFunction dtype must be {ctx.dtype_words}; got "
                            f"{prefix_op.dtype!r}")
    if is_aggregate(dtype) and not ctx.holds_by_value(dtype):
        # ``old = state[0]`` would be a view of the bytes the op then overwrites: the prefix would come out wrong
        raise CoopTypeError(f"{name} prefix_op StatefulFunction dtype {dtype} is a structured dtype, whose state[0] "
                            f"is a reference to the state in {ctx.compiler}; use a numeric dtype or a struct-model "
                            "type (a value) for the state")
    return dtype


def _prefix_op(ctx: CallContext, call: Call) -> Any:
    try:
        return ctx.static(call, "prefix_op", None)
    except CoopError:
        return None  # reported when the call is planned


def evidence(ctx: CallContext, call: Call) -> None:
    """aggregate_output has the value's dtype; a StatefulFunction's state has its declared dtype
    (docs: operations/scan; concepts, "ThreadData payloads")."""
    args = call.args
    if "aggregate_output" in args and "value" in args:
        aggregate, value = ctx.payload(args["aggregate_output"]), ctx.payload(args["value"])
        if aggregate is not None and value is not None:
            ctx.follow_dtype(aggregate, value, call, "value")
        elif aggregate is not None:
            try:
                dtype = ctx.scalar_dtype(args["value"], call, "value")
            except CoopError:
                dtype = None  # reported when the call is planned
            ctx.add_evidence(aggregate, dtype, call, "value")
    if "state" in args:
        state, prefix_op = ctx.payload(args["state"]), _prefix_op(ctx, call)
        if state is not None and is_stateful(prefix_op):
            dtype = ctx.dtype_of_object(prefix_op.dtype)
            if dtype is not None:
                ctx.add_evidence(state, dtype, call, "prefix_op")


def _one_item(ctx: CallContext, call: Call, param: str, dtype: str, what: str) -> Any:
    """The one-item payload behind ``param`` (P4/P5 via require_payload, then its extent and dtype)."""
    payload = ctx.require_payload(call, param)
    if payload.items_per_thread != 1:
        raise CoopTypeError(f"{call.name} {param} must be a one-item ThreadData; got a ThreadData of "
                            f"{payload.items_per_thread} items")
    if payload.dtype != dtype:
        raise CoopTypeError(f"{call.name} {param} dtype {payload.dtype} does not match {what} dtype {dtype}")
    return payload


def result_payload(ctx: CallContext, call: Call) -> Any:
    """A fresh payload of the value's shape; a tuple of them for a tuple of payloads (SPEC 8.18)."""
    results = tuples.result_payloads(ctx, call)
    return results if results is not None else same_shape_result(ctx, call)


def _plan_tuple(ctx: CallContext, call: Call, value: tuples.TupleValue) -> None:
    """A scan over a tuple of operands with the user's ``scan_op`` (SPEC 8.18), reverse and segmented included."""
    name, args = call.name, call.args
    if call.op.endswith("_sum"):
        raise CoopTypeError(f"{name} takes one operand; scan a tuple with scan, inclusive_scan or exclusive_scan and "
                            "scan_op=f")
    for key in ("prefix_op", "valid_items", "aggregate_output", "state"):
        if args.get(key) is not None:
            raise CoopValueError(f"{name} {key} cannot be combined with a tuple of operands")
    scan_op = ctx.static(call, "scan_op", None)
    require_tuple_operator(name, "scan_op", scan_op)
    group = ctx.group(call)
    desc = ctx.descriptor(args.get("temp_storage"), name)
    k = value.items_per_thread
    spec, _ = plan_scan(
        name, call.op, group.spec, ctx.launch, value.dtype, k, ctx.static(call, "mode", "exclusive", kind="string"),
        scan_op, Static(None) if args.get("initial_value") is not None else None,
        ctx.static(call, "algorithm", None, kind="string"), desc.descriptor if desc else None,
        reverse=ctx.static(call, "reverse", False, kind="bool"), flags=companion_shape(ctx, call, "head_flags"))
    operands = Operands()
    members = tuples.add_members(operands, call, value, "items" if k else "in")
    if k:
        for j, result in enumerate(ctx.payload_tuple(call).items):
            operands.add(f"output{j}", result.array)
    if spec.flag_dtype is not None:
        operands.add("head_flags" if k else "flag", args["head_flags"])
    runtime_initial = tuples.add_initial_value(ctx, operands, call, value)
    emission = emit(lambda s: split_entry(cub_scan.emit(s), s.dtype, {"items": k, "output": k}, ("output",)), spec)
    provider = emission.provider

    def check(argtys: tuple[OperandType, ...]) -> None:
        if not k:
            for index in members:
                require_scalar(name, argtys[index])
        tuples.check_initial_value(call, value, runtime_initial, argtys)

    site = SiteCall(provider.symbol, operands.params(provider), value.dtypes[0], None, check=check)
    site.link = ctx.link_operator(spec.operator, spec.dtype, name, "scan_op")
    ctx.add_site(call, operands.values, site, emission, (group.spec, desc) if spec.uses_scratch else None)


def plan(ctx: CallContext, call: Call) -> None:
    name, args = call.name, call.args
    value = tuples.tuple_value(ctx, call)
    if value is not None:
        return _plan_tuple(ctx, call, value)
    group = ctx.group(call)
    payload = ctx.payload(args["value"])
    dtype = payload.dtype if payload is not None else ctx.scalar_dtype(args["value"], call, "value")
    initial = ctx.control(call, "initial_value")
    valid = ctx.control(call, "valid_items")
    desc = ctx.descriptor(args.get("temp_storage"), name)
    prefix_op = ctx.static(call, "prefix_op", None)
    stateful = is_stateful(prefix_op)
    state_dtype = _state_dtype(ctx, name, prefix_op) if stateful else None
    has_aggregate = args.get("aggregate_output") is not None and ctx.control(call, "aggregate_output") is not None
    head_flags = args.get("head_flags")
    flags = companion_shape(ctx, call, "head_flags")
    spec, literal = plan_scan(
        name, call.op, group.spec, ctx.launch, dtype, payload.items_per_thread if payload else 0,
        ctx.static(call, "mode", "exclusive", kind="string"), ctx.static(call, "scan_op", None), initial,
        ctx.static(call, "algorithm", None, kind="string"), desc.descriptor if desc else None, prefix_op,
        valid, has_aggregate, state_dtype, "state" in args and ctx.control(call, "state") is not None,
        ctx.static(call, "reverse", False, kind="bool"), flags)
    operands = Operands()
    if payload is not None:
        operands.add("items", args["value"])
        operands.add("output", ctx.result_operand(call))  # the fresh result payload
    else:
        operands.add("in", args["value"])
    if spec.flag_dtype is not None:
        operands.add("head_flags" if payload is not None else "flag", head_flags)
    initial_index = operands.control("initial_value", initial, args.get("initial_value"),
                                     literal if literal is not None else 0)
    valid_index = None
    if spec.has_valid_items:
        valid_index = operands.control("valid_items", valid, args.get("valid_items"), getattr(valid, "value", 0))
    if spec.aggregate:
        aggregate = _one_item(ctx, call, "aggregate_output", spec.dtype, "value")
        if payload is not None and aggregate.root() is payload.root():
            raise CoopValueError(f"{name} aggregate_output must not be the value operand")
        operands.add("aggregate", args["aggregate_output"])
    if spec.state_dtype is not None:
        state = _one_item(ctx, call, "state", spec.state_dtype, "StatefulFunction")
        if payload is not None and state.root() is payload.root():
            raise CoopValueError(f"{name} state must not be the value operand")
        operands.add("state", args["state"])
    emission = emit(cub_scan.emit, spec)
    provider = emission.provider

    def check(argtys: tuple[OperandType, ...]) -> None:
        if payload is None:
            require_scalar(name, argtys[0])
        if initial_index is not None:
            require_payload_dtype(name, "initial_value", argtys[initial_index], spec.dtype)
        if valid_index is not None:
            require_runtime_int(name, "valid_items", argtys[valid_index])

    site = SiteCall(provider.symbol, operands.params(provider), spec.dtype, None if payload is not None else spec.dtype,
                    check=check)
    prefix_link = (ctx.link_operator(spec.prefix, spec.dtype, name, "prefix_op", state_dtype=spec.state_dtype)
                   if spec.state_dtype is not None else
                   ctx.link_operator(spec.prefix, spec.dtype, name, "prefix_op", arity=1))
    site.link = ctx.link_operator(spec.operator, spec.dtype, name, "scan_op") + prefix_link
    ctx.add_site(call, operands.values, site, emission, (group.spec, desc) if spec.uses_scratch else None)
