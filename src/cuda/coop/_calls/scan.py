"""The scan family in the call layer (C++: _cub.families.scan).

Qualified extensions (docs: operations/scan): warp ``valid_items`` (an i64 parameter the provider range-checks),
``aggregate_output`` (a one-item payload the provider writes through a pointer) and ``prefix_op`` with a
``StatefulFunction``, whose one-item state payload (the optional positional operand ``state``) is passed by
pointer to the user's ``op(state, block_aggregate)``, compiled by the backend as ``T op(S*, T)``. With
``head_flags`` both callback forms take one more argument, ``int32_t has_head`` (SPEC 8.24).
"""
from __future__ import annotations

from typing import Any

from .._cub.families import scan as cub_scan
from .._cub.tuples import split_entry
from .._errors import CoopError, CoopTypeError, CoopValueError
from .._semantics.scan import ScanOptions, ScanSpec, is_stateful, plan_scan, reject_tuple_prefix
from .._semantics.aggregates import is_aggregate
from .._semantics.tuples import require_tuple_operator
from . import tuples
from .context import C, P, CallContext
from .shape import CallShape, call_shape
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




def _state_dtype(ctx: CallContext[C, P], name: str, prefix_op: Any) -> str:
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


def _prefix_op(ctx: CallContext[C, P], call: C) -> Any:
    try:
        return ctx.static(call, "prefix_op", None)
    except CoopError:
        return None  # reported when the call is planned


def evidence(ctx: CallContext[C, P], call: C) -> None:
    """aggregate_output has the value's dtype; a StatefulFunction's state has its declared dtype
    (docs: operations/scan; concepts, "ThreadData payloads")."""
    args = call.args
    if "aggregate_output" in args and "value" in args:
        aggregate, value = ctx.payload(args["aggregate_output"]), ctx.payload(args["value"])
        if aggregate is not None and aggregate.root().explicit:
            pass  # a declared dtype is checked against the value's when the call is planned, naming aggregate_output
        elif aggregate is not None and value is not None:
            ctx.follow_dtype(aggregate, value, call, "value")
        elif aggregate is not None:
            try:
                dtype = ctx.scalar_dtype(args["value"], call, "value")
            except CoopError:
                dtype = None  # reported when the call is planned
            ctx.add_evidence(aggregate, dtype, call, "value")
    if "state" in args:
        try:
            state, prefix_op = ctx.payload(args["state"]), _prefix_op(ctx, call)
        except CoopError:
            state = prefix_op = None  # not a payload: reported when the call is planned
        # a declared dtype is checked when the call is planned (C9), as the StatefulFunction's
        if state is not None and is_stateful(prefix_op) and not state.root().explicit:
            dtype = ctx.dtype_of_object(prefix_op.dtype)
            if dtype is not None:
                ctx.add_evidence(state, dtype, call, "prefix_op")


def _one_item(ctx: CallContext[C, P], call: C, param: str, dtype: str, what: str) -> Any:
    """The one-item payload behind ``param`` (P4/P5 via require_payload, then its extent and dtype)."""
    payload = ctx.require_payload(call, param)
    if payload.items_per_thread != 1:
        raise CoopTypeError(f"{call.name} {param} must be a one-item ThreadData; got a ThreadData of "
                            f"{payload.items_per_thread} items")
    if payload.dtype != dtype:
        raise CoopTypeError(f"{call.name} {param} dtype {payload.dtype} does not match {what} dtype {dtype}")
    return payload


# what a state operand that is no register payload is, in words (SPEC 12.9)
_STATE_FORMS = {"array": "a global-memory array", "shared array": "a shared-memory array",
                "shared array row": "a row of a shared-memory array", "local array": "a per-thread array"}


def _state(ctx: CallContext[C, P], call: C, dtype: str) -> Any:
    """The one-item register payload holding a StatefulFunction's state (docs: operations/scan, "Running scans
    across tiles"). The lanes of the first warp each run the callback on their own state, so state in shared or
    global memory would be written by all of them at once: any other form is P5, another dtype C9."""
    operand = call.args["state"]
    form = ctx.operand_form(operand)
    try:
        payload = ctx.payload(operand) if form not in ("array", "shared array", "shared array row") else None
    except CoopError:
        payload = None
    if payload is None or payload.items_per_thread != 1:
        if payload is not None:
            got = f"{_STATE_FORMS.get(form or '', 'a ThreadData')} of {payload.items_per_thread} items"
        else:
            got = _STATE_FORMS.get(form or "", "a scalar")
        raise CoopTypeError(f"{call.name} state must be a one-item register payload; got {got}")
    if payload.dtype != dtype:
        raise CoopTypeError(f"{call.name} state must have the payload dtype {dtype}; got "
                            f"{payload.dtype}; cast it")
    return payload


def result_payload(ctx: CallContext[C, P], call: C) -> Any:
    """A fresh payload of the value's shape; a tuple of them for a tuple of payloads (SPEC 8.18)."""
    results = tuples.result_payloads(ctx, call)
    return results if results is not None else same_shape_result(ctx, call)


def _tuple_options(ctx: CallContext[C, P], call: C) -> ScanOptions:
    """The options of a scan over a tuple of operands with the user's ``scan_op`` (SPEC 8.18), reverse and
    segmented included: no sums and none of the single-operand extensions."""
    name, args = call.name, call.args
    if call.op.endswith("_sum"):
        raise CoopTypeError(f"{name} takes one operand; scan a tuple with scan, inclusive_scan or exclusive_scan and "
                            "scan_op=f")
    if "prefix_op" in args:
        reject_tuple_prefix(name, ctx.static(call, "prefix_op", None), len(ctx.tuple_operands(args["value"]) or ()))
    for key in ("valid_items", "aggregate_output", "state"):
        if args.get(key) is not None:
            raise CoopValueError(f"{name} {key} cannot be combined with a tuple of operands")
    scan_op = ctx.static(call, "scan_op", None)
    require_tuple_operator(name, "scan_op", scan_op)
    return ScanOptions(mode=ctx.static(call, "mode", "exclusive", kind="string"), scan_op=scan_op,
                       algorithm=ctx.static(call, "algorithm", None, kind="string"),
                       reverse=ctx.static(call, "reverse", False, kind="bool"),
                       flags=companion_shape(ctx, call, "head_flags"))


def _options(ctx: CallContext[C, P], call: C) -> ScanOptions:
    """The options of a scan of one operand, the qualified extensions included."""
    name, args = call.name, call.args
    prefix_op = ctx.static(call, "prefix_op", None)
    state_dtype = _state_dtype(ctx, name, prefix_op) if is_stateful(prefix_op) else None
    aggregate = args.get("aggregate_output") is not None and ctx.control(call, "aggregate_output") is not None
    flags = companion_shape(ctx, call, "head_flags")
    return ScanOptions(mode=ctx.static(call, "mode", "exclusive", kind="string"),
                       scan_op=ctx.static(call, "scan_op", None),
                       algorithm=ctx.static(call, "algorithm", None, kind="string"), prefix_op=prefix_op,
                       aggregate=aggregate, state_dtype=state_dtype,
                       has_state="state" in args and ctx.control(call, "state") is not None,
                       reverse=ctx.static(call, "reverse", False, kind="bool"), flags=flags)


def _add_extensions(ctx: CallContext[C, P], call: C, operands: Operands, shape: CallShape, spec: ScanSpec) -> None:
    """The qualified one-item operands: aggregate_output and a StatefulFunction's state."""
    payload = shape.payload
    if spec.aggregate:
        aggregate = _one_item(ctx, call, "aggregate_output", spec.dtype, "value")
        if payload is not None and aggregate.root() is payload.root():
            raise CoopValueError(f"{call.name} aggregate_output must not be the value operand")
        operands.add("aggregate", call.args["aggregate_output"])
    if spec.state_dtype is not None:
        state = _state(ctx, call, spec.state_dtype)
        if payload is not None and state.root() is payload.root():
            raise CoopValueError(f"{call.name} state must not be the value operand")
        operands.add("state", call.args["state"])


def plan(ctx: CallContext[C, P], call: C) -> None:
    """A scan of one operand or of a tuple of operands (SPEC 8.18), reverse and segmented included."""
    name, args = call.name, call.args
    shape = call_shape(ctx, call, controls=("initial_value", "valid_items"))
    spec, literal = plan_scan(shape, _tuple_options(ctx, call) if shape.tupled else _options(ctx, call))
    k = shape.items_per_thread
    operands = Operands()
    if shape.tupled:
        members = tuples.add_members(operands, shape, "items" if k else "in")
        for j, result in enumerate(ctx.payload_tuple(call).items if k else ()):
            operands.add(f"output{j}", result.array)
    else:
        members = [operands.add("items" if k else "in", shape.operands[0])]
        if k:
            operands.add("output", ctx.result_operand(call))  # the fresh result payload
    if spec.flag_dtype is not None:
        operands.add("head_flags" if k else "flag", args["head_flags"])
    runtime_initial: list[tuple[int, int]] = []
    initial_index = valid_index = None
    if shape.tupled:
        runtime_initial = tuples.add_initial_value(ctx, operands, call, shape)
    else:
        initial = shape.control("initial_value")
        initial_index = operands.control("initial_value", initial, args.get("initial_value"),
                                         literal if literal is not None else 0)
    if spec.has_valid_items:
        valid = shape.control("valid_items")
        valid_index = operands.control("valid_items", valid, args.get("valid_items"), getattr(valid, "value", 0))
    _add_extensions(ctx, call, operands, shape, spec)
    if shape.tupled:
        emission = emit(lambda s: split_entry(cub_scan.emit(s), s.dtype, {"items": k, "output": k}, ("output",)),
                        spec)
    else:
        emission = emit(cub_scan.emit, spec)
    provider = emission.provider

    def check(argtys: tuple[OperandType, ...]) -> None:
        if not k:
            for index in members:
                require_scalar(name, argtys[index])
        if initial_index is not None:
            require_payload_dtype(name, "initial_value", argtys[initial_index], spec.dtype)
        if valid_index is not None:
            require_runtime_int(name, "valid_items", argtys[valid_index])
        tuples.check_initial_value(call, shape, runtime_initial, argtys)

    scalar_result = None if k or shape.tupled else spec.dtype
    site = SiteCall(provider.symbol, operands.params(provider), shape.dtypes[0], scalar_result, check=check)
    has_head = ("int32",) if spec.flag_dtype is not None else ()  # a running segmented scan's callback (SPEC 8.24)
    prefix_link = (ctx.link_operator(spec.prefix, spec.dtype, name, "prefix_op", state_dtype=spec.state_dtype,
                                     extra=has_head)
                   if spec.state_dtype is not None else
                   ctx.link_operator(spec.prefix, spec.dtype, name, "prefix_op", arity=1, extra=has_head))
    site.link = ctx.link_operator(spec.operator, spec.dtype, name, "scan_op") + prefix_link
    ctx.add_site(call, operands.values, site, emission, shape.scratch if spec.uses_scratch else None)
