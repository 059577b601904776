"""Sorting and selection in the call layer (C++: _cub.families.sort): merge sort, radix
sort, radix rank and top-k (a block's: a radix sort with padded invalid keys; a warp group's: a sort of its own
tile's ordered keys, without scratch for one key per lane).

The ``*_pairs`` forms return ``(keys, values)``: two fresh payloads whose local arrays the
rewrite packs into a tuple, so the user's unpacking works unchanged."""
from __future__ import annotations

from typing import Any, Callable, Mapping

from .._cub.families import sort as cub_sort
from .._cub.provider import Provider
from .._errors import CoopTypeError
from .._semantics.common import literal_as
from .._semantics.sort import (
    MergeSortOptions,
    RadixRankOptions,
    RadixSortOptions,
    TopKOptions,
    plan_merge_sort,
    plan_radix_rank,
    plan_radix_sort,
    plan_topk,
)
from .context import C, P, Call, CallContext, dtype_of
from .shape import CallShape, call_shape
from .site import OperandType, Operands, SiteCall, emit, require_payload_dtype, require_runtime_int


def _controls(op: str) -> tuple[str, ...]:
    """The runtime controls of sort operation ``op``, in the order their C parameters are fed."""
    if op.startswith("topk"):
        return ("k", "valid_items")
    if op.startswith("merge"):
        return ("valid_items", "oob_default")
    return () if op == "radix_rank" else ("begin_bit", "end_bit", "valid_items", "oob_default")


def _fed(provider: Provider, controls: Mapping[str, Any]) -> dict[str, Any]:
    """The controls the provider has a C parameter for: a radix sort's ``valid_items`` and ``oob_default`` only
    when given."""
    names = {param.name for param in provider.params}
    return {key: control for key, control in controls.items() if key in names}


def _typing_check(name: str, runtime: Mapping[str, int], key_dtype: str) -> Callable[[tuple[OperandType, ...]], None]:
    """C6 for the runtime integer controls, C9 for a runtime ``oob_default`` (exactly the keys' dtype)."""
    def check(argtys: tuple[OperandType, ...]) -> None:
        for key, index in runtime.items():
            if key == "oob_default":
                require_payload_dtype(name, key, argtys[index], key_dtype)
            else:
                require_runtime_int(name, key, argtys[index])
    return check


def _bounds(ctx: CallContext[C, P], call: C) -> dict[str, Any]:
    """radix_rank's static bit bounds."""
    return {key: ctx.static(call, key, None, kind="integer") for key in ("begin_bit", "end_bit", "radix_bits")}


def _one_key(ctx: CallContext[C, P], call: C, shape: CallShape) -> None:
    """The scalar form: the one-key tile sorted or ranked, the thread's result returned as a scalar."""
    name, args, dtype = call.name, call.args, shape.dtypes[0]
    descending = ctx.static(call, "descending", False, kind="bool")
    if call.op == "radix_rank":
        prefix = _prefix_payload(ctx, call) if _has_prefix(call) else None
        rank = plan_radix_rank(shape, RadixRankOptions(
            **_bounds(ctx, call), descending=descending,
            exclusive_digit_prefix=(prefix.dtype, prefix.items_per_thread) if prefix is not None else None))
        emission = emit(lambda s: cub_sort.one_key(cub_sort.emit_rank(s), dtype, "int32"), rank)
        provider = emission.provider
        operands = Operands()
        operands.add("key", shape.operands[0])
        if prefix is not None:
            operands.add("digit_prefix", call.args[PREFIX])
        site = SiteCall(provider.symbol, operands.params(provider), dtype, "int32")
        return ctx.add_site(call, operands.values, site, emission, shape.scratch)
    value_dtype = _scalar_values(ctx, call) if call.op == "radix_sort_pairs" else None
    spec = plan_radix_sort(shape, RadixSortOptions(
        values=(value_dtype, 1) if value_dtype else None, descending=descending,
        blocked_to_striped=ctx.static(call, "blocked_to_striped", False, kind="bool")))
    operands = Operands()
    operands.add("key", shape.operands[0])
    if value_dtype is not None:  # (key, value) = radix_sort_pairs(group, key, value): two results, one tuple
        operands.add("value", args["values"])
    if value_dtype is not None:
        emission = emit(lambda s: cub_sort.one_pair(cub_sort.emit(s), dtype, value_dtype), spec)
    else:
        emission = emit(lambda s: cub_sort.one_key(cub_sort.emit(s), dtype, dtype), spec)
    provider = emission.provider
    defaults = {"begin_bit": spec.begin_bit, "end_bit": spec.end_bit}
    runtime = operands.controls(args, _fed(provider, shape.controls),
                                lambda key, control: _literal(name, key, control, defaults, dtype))
    site = SiteCall(provider.symbol, operands.params(provider), dtype, None if value_dtype else dtype,
                    check=_typing_check(name, runtime, dtype))
    ctx.add_site(call, operands.values, site, emission, shape.scratch)


def _literal(name: str, key: str, control: Any, defaults: Mapping[str, object], key_dtype: str) -> object:
    """A static or absent control's constant; a literal ``oob_default`` converted to the keys' dtype (C10)."""
    if key == "oob_default" and control is not None:
        return literal_as(name, key, control.value, key_dtype)
    return control.value if control is not None else defaults[key]


def _scalar_values(ctx: CallContext[C, P], call: C) -> str:
    """The scalar value of a scalar-key radix_sort_pairs: a payload there is P5's mirror image (forms must match)."""
    var = call.args["values"]
    if ctx.payload(var) is not None or ctx.operand_form(var) is not None:
        raise CoopTypeError(f"{call.name} keys is a scalar, so values must be a scalar too; got a payload")
    return ctx.scalar_dtype(var, call, "values")


def result_payload(ctx: CallContext[C, P], call: C) -> Any:
    """Fresh payloads shaped like the keys (and the values, as a tuple, for ``*_pairs``)."""
    keys = ctx.payload(call.args["keys"]) if "keys" in call.args else None
    if keys is None:
        return None
    if call.op == "radix_rank":
        return ctx.new_result_payload(call, keys.items_per_thread, None, dtype="int32")
    if not call.op.endswith("_pairs"):
        return ctx.new_result_payload(call, keys.items_per_thread, keys)
    values = ctx.payload(call.args["values"]) if "values" in call.args else None
    return None if values is None else ctx.new_result_payloads(call, [keys, values])


PREFIX = "exclusive_digit_prefix"  # the qualified radix_rank output (docs: operations/radix_sort, "Radix rank")


def _has_prefix(call: Call) -> bool:
    return PREFIX in call.args


def evidence(ctx: CallContext[C, P], call: C) -> None:
    """radix_rank's exclusive_digit_prefix payload is int32 unless it says otherwise."""
    if call.op == "radix_rank" and _has_prefix(call):
        payload = ctx.payload(call.args[PREFIX])
        if payload is not None and not payload.root().explicit:
            ctx.add_evidence(payload, "int32", call, PREFIX)


def _prefix_payload(ctx: CallContext[C, P], call: C) -> Any:
    """The writable exclusive_digit_prefix payload (P5 for a scalar; other forms as every payload operand)."""
    if ctx.payload(call.args[PREFIX]) is None and ctx.operand_form(call.args[PREFIX]) is None:
        raise CoopTypeError(f"{call.name} {PREFIX} must be a ThreadData payload; got a scalar")
    return ctx.require_payload(call, PREFIX)


def _plan_rank(ctx: CallContext[C, P], call: C, shape: CallShape) -> None:
    bounds = _bounds(ctx, call)
    prefix = _prefix_payload(ctx, call) if _has_prefix(call) else None
    spec = plan_radix_rank(shape, RadixRankOptions(
        **bounds, descending=ctx.static(call, "descending", False, kind="bool"),
        exclusive_digit_prefix=(prefix.dtype, prefix.items_per_thread) if prefix is not None else None))
    emission = emit(cub_sort.emit_rank, spec)
    provider = emission.provider
    operands = Operands()
    operands.add("keys", shape.operands[0])
    operands.add("output", ctx.result_operand(call))
    if prefix is not None:
        operands.add("digit_prefix", call.args[PREFIX])
    site = SiteCall(provider.symbol, operands.params(provider), spec.key_dtype)
    ctx.add_site(call, operands.values, site, emission, shape.scratch)


def plan(ctx: CallContext[C, P], call: C) -> None:
    """Keys are a payload, or in a qualified radix sort or radix_rank one scalar per thread (docs: qualified,
    "Payload forms")."""
    shape = call_shape(ctx, call, operand="keys", controls=_controls(call.op), needs_payload=True)
    if shape.payload is None:
        return _one_key(ctx, call, shape)
    if call.op == "radix_rank":
        return _plan_rank(ctx, call, shape)
    name, args = call.name, call.args
    pairs = call.op.endswith("_pairs")
    values = ctx.require_payload(call, "values") if pairs else None
    value_shape = (dtype_of(values, call, "values"), values.items_per_thread) if values is not None else None
    qualified = call.qualified
    if call.op.startswith("topk"):
        spec = plan_topk(shape, TopKOptions(largest=call.op.startswith("topk_max"), values=value_shape))
    elif call.op.startswith("merge"):
        spec = plan_merge_sort(shape, MergeSortOptions(
            values=value_shape, descending=ctx.static(call, "descending", False, kind="bool"),
            compare_op=ctx.static(call, "compare_op", None) if qualified else None))
    else:
        spec = plan_radix_sort(shape, RadixSortOptions(
            values=value_shape, descending=ctx.static(call, "descending", False, kind="bool"),
            blocked_to_striped=ctx.static(call, "blocked_to_striped", False, kind="bool") if qualified else False))
    operands = Operands()
    operands.add("keys", shape.operands[0])
    if pairs:
        results = ctx.payload_tuple(call).items
        operands.add("values", args["values"])
        operands.add("output", results[0].array)
        operands.add("output_values", results[1].array)
    else:
        operands.add("output", ctx.result_operand(call))
    # valid_items defaults to 0 for merge sort (unused without oob_default) and to the whole tile for top-k; a radix
    # sort's provider has no valid_items or oob_default parameter unless they are given.
    defaults = {"valid_items": spec.tile_items if spec.topk else 0, "oob_default": 0, "begin_bit": spec.begin_bit,
                "end_bit": spec.end_bit, "k": 0}
    emission = emit(cub_sort.emit, spec)
    provider = emission.provider
    runtime = operands.controls(args, _fed(provider, shape.controls),
                                lambda key, control: _literal(name, key, control, defaults, spec.key_dtype))
    site = SiteCall(provider.symbol, operands.params(provider), spec.key_dtype,
                    check=_typing_check(name, runtime, spec.key_dtype))
    site.link = ctx.link_operator(spec.compare, spec.key_dtype, name, "compare_op", result="boolean")
    ctx.add_site(call, operands.values, site, emission, shape.scratch if spec.uses_scratch else None)

