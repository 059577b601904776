"""Sorting and selection in the call layer (C++: _cub.families.sort): merge sort, radix
sort, radix rank and top-k (a radix sort with padded invalid keys).

The ``*_pairs`` forms return ``(keys, values)``: two fresh payloads whose local arrays the
rewrite packs into a tuple, so the user's unpacking works unchanged."""
from __future__ import annotations

from typing import Any

from .._cub.families import sort as cub_sort
from .._errors import CoopTypeError
from .._semantics.common import literal_as
from .._semantics.sort import plan_merge_sort, plan_radix_rank, plan_radix_sort, plan_topk
from .context import Call, CallContext
from .site import OperandType, Operands, SiteCall, bind, emit, require_payload_dtype, require_runtime_int



def _operand(ctx: CallContext, call: Call, param: str) -> Any:
    return ctx.require_payload(call, param)


def _scalar_keys(ctx: CallContext, call: Call) -> str | None:
    """A qualified radix sort / radix_rank may take one scalar key per thread (docs: qualified, "Payload forms"); its
    dtype."""
    var = call.args.get("keys")
    if (call.op not in ("radix_sort_keys", "radix_sort_pairs", "radix_rank") or var is None
            or ctx.payload(var) is not None or ctx.operand_form(var) is not None
            or not call.qualified):
        return None
    return ctx.scalar_dtype(var, call, "keys")


def _one_key(ctx: CallContext, call: Call, dtype: str) -> None:
    """The scalar form: the one-key tile sorted or ranked, the thread's result returned as a scalar."""
    name, args = call.name, call.args
    group = ctx.group(call)
    desc = ctx.descriptor(args.get("temp_storage"), name)
    descending = ctx.static(call, "descending", False, kind="bool")
    if call.op == "radix_rank":
        bounds = {key: ctx.static(call, key, None, kind="integer") for key in ("begin_bit", "end_bit", "radix_bits")}
        rank = plan_radix_rank(name, group.spec, ctx.launch, dtype, 1, bounds["begin_bit"], bounds["end_bit"],
                               bounds["radix_bits"], descending, desc.descriptor if desc else None, None)
        emission = emit(lambda s: cub_sort.one_key(cub_sort.emit_rank(s), dtype, "int32"), rank)
        provider = emission.provider
        site = SiteCall(provider.symbol, bind(provider, {"key": 0}), dtype, "int32")
        return ctx.add_site(call, [args["keys"]], site, emission, (group.spec, desc))
    controls = {key: ctx.control(call, key) for key in ("begin_bit", "end_bit")}
    value_dtype = _scalar_values(ctx, call) if call.op == "radix_sort_pairs" else None
    spec = plan_radix_sort(name, group.spec, ctx.launch, dtype, 1, (value_dtype, 1) if value_dtype else None,
                           controls["begin_bit"], controls["end_bit"], descending,
                           ctx.static(call, "blocked_to_striped", False, kind="bool"),
                           desc.descriptor if desc else None, True)
    operands = Operands()
    operands.add("key", args["keys"])
    if value_dtype is not None:  # (key, value) = radix_sort_pairs(group, key, value): two results, one tuple
        operands.add("value", args["values"])
    defaults = {"begin_bit": spec.begin_bit, "end_bit": spec.end_bit}
    runtime = operands.controls(args, controls,
                                lambda key, control: control.value if control is not None else defaults[key])
    if value_dtype is not None:
        emission = emit(lambda s: cub_sort.one_pair(cub_sort.emit(s), dtype, value_dtype, ("begin_bit", "end_bit")),
                        spec)
    else:
        emission = emit(lambda s: cub_sort.one_key(cub_sort.emit(s), dtype, dtype, ("begin_bit", "end_bit")), spec)
    provider = emission.provider

    def check(argtys: tuple[OperandType, ...]) -> None:
        for key, index in runtime.items():
            require_runtime_int(name, key, argtys[index])

    site = SiteCall(provider.symbol, operands.params(provider), dtype, None if value_dtype else dtype, check=check)
    ctx.add_site(call, operands.values, site, emission, (group.spec, desc))


def _scalar_values(ctx: CallContext, call: Call) -> str:
    """The scalar value of a scalar-key radix_sort_pairs: a payload there is P5's mirror image (forms must match)."""
    var = call.args["values"]
    if ctx.payload(var) is not None or ctx.operand_form(var) is not None:
        raise CoopTypeError(f"{call.name} keys is a scalar, so values must be a scalar too; got a payload")
    return ctx.scalar_dtype(var, call, "values")


def result_payload(ctx: CallContext, call: Call) -> Any:
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


def evidence(ctx: CallContext, call: Call) -> None:
    """radix_rank's exclusive_digit_prefix payload is int32 unless it says otherwise."""
    if call.op == "radix_rank" and _has_prefix(call):
        payload = ctx.payload(call.args[PREFIX])
        if payload is not None and not payload.root().explicit:
            ctx.add_evidence(payload, "int32", call, PREFIX)


def _prefix_payload(ctx: CallContext, call: Call) -> Any:
    """The writable exclusive_digit_prefix payload (P5 for a scalar; other forms as every payload operand)."""
    if ctx.payload(call.args[PREFIX]) is None and ctx.operand_form(call.args[PREFIX]) is None:
        raise CoopTypeError(f"{call.name} {PREFIX} must be a ThreadData payload; got a scalar")
    return ctx.require_payload(call, PREFIX)


def _plan_rank(ctx: CallContext, call: Call) -> None:
    group = ctx.group(call)
    keys = _operand(ctx, call, "keys")
    desc = ctx.descriptor(call.args.get("temp_storage"), call.name)
    bounds = {key: ctx.static(call, key, None, kind="integer") for key in ("begin_bit", "end_bit", "radix_bits")}
    prefix = _prefix_payload(ctx, call) if _has_prefix(call) else None
    spec = plan_radix_rank(call.name, group.spec, ctx.launch, keys.dtype, keys.items_per_thread, bounds["begin_bit"],
                           bounds["end_bit"], bounds["radix_bits"], ctx.static(call, "descending", False, kind="bool"),
                           desc.descriptor if desc else None,
                           (prefix.dtype, prefix.items_per_thread) if prefix is not None else None)
    emission = emit(cub_sort.emit_rank, spec)
    provider = emission.provider
    operands = Operands()
    operands.add("keys", call.args["keys"])
    operands.add("output", ctx.result_operand(call))
    if prefix is not None:
        operands.add("digit_prefix", call.args[PREFIX])
    site = SiteCall(provider.symbol, operands.params(provider), spec.key_dtype)
    ctx.add_site(call, operands.values, site, emission, (group.spec, desc))


def plan(ctx: CallContext, call: Call) -> None:
    scalar = _scalar_keys(ctx, call)
    if scalar is not None:
        return _one_key(ctx, call, scalar)
    if call.op == "radix_rank":
        return _plan_rank(ctx, call)
    name, args = call.name, call.args
    group = ctx.group(call)
    keys = _operand(ctx, call, "keys")
    pairs = call.op.endswith("_pairs")
    values = _operand(ctx, call, "values") if pairs else None
    value_shape = (values.dtype, values.items_per_thread) if values is not None else None
    desc = ctx.descriptor(args.get("temp_storage"), name)
    qualified = call.qualified
    if call.op.startswith("topk"):
        controls = {key: ctx.control(call, key) for key in ("k", "valid_items")}
        spec = plan_topk(name, group.spec, ctx.launch, keys.dtype, keys.items_per_thread, value_shape,
                         call.op.startswith("topk_max"), controls["k"], controls["valid_items"],
                         desc.descriptor if desc else None)
    elif call.op.startswith("merge"):
        descending = ctx.static(call, "descending", False, kind="bool")
        controls = {key: ctx.control(call, key) for key in ("valid_items", "oob_default")}
        spec = plan_merge_sort(name, group.spec, ctx.launch, keys.dtype, keys.items_per_thread, value_shape, descending,
                               controls["valid_items"], controls["oob_default"],
                               ctx.static(call, "compare_op", None) if qualified else None,
                               desc.descriptor if desc else None)
    else:
        descending = ctx.static(call, "descending", False, kind="bool")
        controls = {key: ctx.control(call, key) for key in ("begin_bit", "end_bit")}
        spec = plan_radix_sort(name, group.spec, ctx.launch, keys.dtype, keys.items_per_thread, value_shape,
                               controls["begin_bit"], controls["end_bit"], descending,
                               ctx.static(call, "blocked_to_striped", False, kind="bool") if qualified else False,
                               desc.descriptor if desc else None, qualified)
    operands = Operands()
    operands.add("keys", args["keys"])
    if pairs:
        results = ctx.payload_tuple(call).items
        operands.add("values", args["values"])
        operands.add("output", results[0].array)
        operands.add("output_values", results[1].array)
    else:
        operands.add("output", ctx.result_operand(call))
    # valid_items defaults to 0 for merge sort (unused without oob_default) and to the whole tile for top-k.
    defaults = {"valid_items": spec.tile_items if spec.topk else 0, "oob_default": 0, "begin_bit": spec.begin_bit,
                "end_bit": spec.end_bit, "k": 0}

    def literal(key: str, control: Any) -> object:
        if key == "oob_default" and control is not None:
            return literal_as(name, key, control.value, spec.key_dtype)
        return control.value if control is not None else defaults[key]

    runtime = operands.controls(args, controls, literal)
    emission = emit(cub_sort.emit, spec)
    provider = emission.provider

    def check(argtys: tuple[OperandType, ...]) -> None:
        for key, index in runtime.items():
            if key == "oob_default":
                require_payload_dtype(name, key, argtys[index], spec.key_dtype)
            else:
                require_runtime_int(name, key, argtys[index])

    site = SiteCall(provider.symbol, operands.params(provider), spec.key_dtype, check=check)
    site.link = ctx.link_operator(spec.compare, spec.key_dtype, name, "compare_op", result="boolean")
    ctx.add_site(call, operands.values, site, emission, (group.spec, desc))

