"""run_length_decode and run_length_decode_into in the call layer (C++: _cub.families.run_length).

The windowed form returns a fresh payload of ``decoded_items_per_thread`` run values; the bulk form writes to an
array operand, whose extent is passed so the provider can check the capacity, and returns the total. The
qualified options (docs: operations/run_length_decode, "Qualified additions") add writable payloads (the total,
relative offsets), a second destination and the offset type."""
from __future__ import annotations

from typing import Any

from .._cub.families import run_length as cub_run_length
from .._errors import CoopTypeError
from .._semantics.common import static_positive
from .._semantics.run_length import (
    Extensions,
    RunLengthOptions,
    decodes_into,
    offset_dtype_of,
    offset_param,
    plan_run_length_decode,
)
from .context import C, P, Call, CallContext, dtype_of
from .shape import call_shape
from .site import OperandType, Operands, SiteCall, emit, require_runtime_int, require_vector, static_dtype_name


def _offset_dtype(ctx: CallContext[C, P], call: C) -> str | None:
    return static_dtype_name(ctx, call, "decoded_offset_dtype")


def _present(call: Call, key: str) -> bool:
    return key in call.args


def evidence(ctx: CallContext[C, P], call: C) -> None:
    """The total and the relative offsets are typed by the offset type unless their payloads say otherwise."""
    try:
        dtype = offset_dtype_of(call.name, _offset_dtype(ctx, call))
    except Exception:  # reported when the call is planned
        return
    for key in ("total_decoded_size", "relative_offsets"):
        if _present(call, key):
            payload = ctx.payload(call.args[key])
            if payload is not None and not payload.root().explicit:
                ctx.add_evidence(payload, dtype, call, key)


def result_payload(ctx: CallContext[C, P], call: C) -> Any:
    """The windowed form: ``decoded_items_per_thread`` items of the run-value dtype."""
    if decodes_into(call.op):
        return None
    values = ctx.payload(call.args["run_values"]) if "run_values" in call.args else None
    decoded = ctx.static(call, "decoded_items_per_thread", None, kind="integer")
    if values is None or decoded is None:
        return None
    return ctx.new_result_payload(call, static_positive(call.name, "decoded_items_per_thread", decoded), values)


def _extensions(ctx: CallContext[C, P], call: C) -> Extensions:
    payloads = {}
    for key in ("total_decoded_size", "relative_offsets"):
        if _present(call, key):
            payload = ctx.require_payload(call, key)
            payloads[key] = (dtype_of(payload, call, key), payload.items_per_thread)
    relative_destination = None
    if _present(call, "relative_offsets_destination"):
        relative_destination = ctx.array_dtype(call.args["relative_offsets_destination"]) or ""
    return Extensions(_offset_dtype(ctx, call), payloads.get("total_decoded_size"), payloads.get("relative_offsets"),
                      relative_destination)


def plan(ctx: CallContext[C, P], call: C) -> None:
    name, args = call.name, call.args
    into, offset_option = decodes_into(call.op), offset_param(call.op)
    shape = call_shape(ctx, call, operand="run_values", controls=(offset_option,), needs_payload=True)
    lengths = ctx.require_payload(call, "run_lengths")
    offset = shape.control(offset_option)
    spec = plan_run_length_decode(shape, RunLengthOptions(
        run_lengths=(dtype_of(lengths, call, "run_lengths"), lengths.items_per_thread),
        decoded_items_per_thread=ctx.static(call, "decoded_items_per_thread", None, kind="integer"),
        extensions=_extensions(ctx, call)))
    operands = Operands()
    operands.add("run_values", shape.operands[0])
    operands.add("run_lengths", args["run_lengths"])
    if spec.total_dtype is not None:
        operands.add("total_decoded_size", args["total_decoded_size"])
    arrays: dict[int, tuple[str, str, str]] = {}  # operand index -> (param, dtype, what it must match)
    if into:
        destination_dtype = ctx.array_dtype(args["destination"])
        if destination_dtype is not None and destination_dtype != spec.value_dtype:
            raise CoopTypeError(f"{name} destination dtype {destination_dtype} does not match payload dtype "
                                f"{spec.value_dtype}")
        index = operands.add("destination", args["destination"])
        operands.feed("capacity", index)  # the array's extent: the provider checks the capacity
        arrays[index] = ("destination", spec.value_dtype, "payload dtype")
        if spec.relative_offsets:
            index = operands.add("relative_destination", args["relative_offsets_destination"])
            operands.feed("relative_capacity", index)
            arrays[index] = ("relative_offsets_destination", spec.offset_dtype, "decoded_offset_dtype")
    else:
        operands.add("output", ctx.result_operand(call))
        if spec.relative_offsets:
            operands.add("relative_offsets", args["relative_offsets"])
    offset_index = operands.control("destination_offset" if into else "window_offset", offset,
                                    args.get(offset_option), spec.offset)
    emission = emit(cub_run_length.emit, spec)
    provider = emission.provider

    def check(argtys: tuple[OperandType, ...]) -> None:
        for index, (param, dtype, what) in arrays.items():
            require_vector(name, param, argtys[index], dtype, what)
        if offset_index is not None:
            require_runtime_int(name, offset_option, argtys[offset_index])

    result = spec.offset_dtype if into else None
    site = SiteCall(provider.symbol, operands.params(provider), spec.value_dtype, result, check=check)
    ctx.add_site(call, operands.values, site, emission, shape.scratch)
