"""exchange and shuffle in the call layer (C++: _cub.families.exchange_shuffle).

Qualified extensions: exchange ``ranks``/``valid_flags`` payload operands and ``warp_time_slicing``; scalar
``shuffle`` (``offset``/``rotate``) with a static or runtime per-thread ``distance``, returning a scalar."""
from __future__ import annotations

from typing import Any

from .._cub.families import exchange_shuffle as cub_exchange
from .._errors import CoopTypeError
from .._semantics.exchange_shuffle import (
    SCALAR_SHUFFLE_MODES,
    ExchangeOptions,
    Operand,
    ShuffleOptions,
    plan_exchange,
    plan_scalar_shuffle,
    plan_shuffle,
    shuffle_mode,
)
from .context import C, P, CallContext
from .shape import CallShape, call_shape
from .site import OperandType, Operands, SiteCall, emit, require_runtime_int, require_scalar, same_shape_result


result_payload = same_shape_result  # None for a scalar shuffle: its result is a scalar


def _extra(ctx: CallContext[C, P], call: C, param: str) -> tuple[Any, Operand | None]:
    """A ``ranks``/``valid_flags`` payload operand (its variable and shape), or (None, None) when omitted."""
    if ctx.control(call, param) is None:
        return None, None
    payload = ctx.require_payload(call, param)
    return call.args[param], Operand(payload.dtype, payload.items_per_thread)


def _exchange(ctx: CallContext[C, P], call: C) -> None:
    shape = call_shape(ctx, call, needs_payload=True)
    mode = ctx.static(call, "mode", "striped_to_blocked", kind="string")
    slicing = ctx.static(call, "warp_time_slicing", None, kind="bool") if "warp_time_slicing" in call.args else None
    ranks_var, ranks = _extra(ctx, call, "ranks") if "ranks" in call.args else (None, None)
    flags_var, flags = _extra(ctx, call, "valid_flags") if "valid_flags" in call.args else (None, None)
    spec = plan_exchange(shape, ExchangeOptions(mode=mode, ranks=ranks, valid_flags=flags,
                                                warp_time_slicing=slicing))
    operands = Operands()
    operands.add("items", shape.operands[0])
    operands.add("output", ctx.result_operand(call))
    for c_name, var in (("ranks_ptr", ranks_var), ("flags_ptr", flags_var)):
        if var is not None:
            operands.add(c_name, var)
    emission = emit(cub_exchange.emit, spec)
    site = SiteCall(emission.provider.symbol, operands.params(emission.provider), spec.dtype)
    ctx.add_site(call, operands.values, site, emission, shape.scratch)


def _scalar_shuffle(ctx: CallContext[C, P], call: C, shape: CallShape, mode: object) -> None:
    name = call.name
    spec = plan_scalar_shuffle(shape, ShuffleOptions(mode=mode))
    operands = Operands()
    operands.add("value", shape.operands[0])
    operands.control("distance", shape.control("distance"), call.args.get("distance"), spec.distance)
    emission = emit(cub_exchange.emit, spec)
    provider = emission.provider

    def check(argtys: tuple[OperandType, ...]) -> None:
        # numbers and aggregates (docs: qualified, "User-defined aggregates")
        require_scalar(name, argtys[0], f"a scalar for mode {spec.mode!r}")
        if len(argtys) > 1:
            require_runtime_int(name, "distance", argtys[1])

    site = SiteCall(provider.symbol, operands.params(provider), spec.dtype, spec.dtype, check=check)
    ctx.add_site(call, operands.values, site, emission, shape.scratch)


def plan(ctx: CallContext[C, P], call: C) -> None:
    name, args = call.name, call.args
    if call.op == "exchange":
        _exchange(ctx, call)
        return
    qualified = call.qualified
    ctx.group(call)  # group errors before the mode's (docs: errors, "Reading a message"); the shape follows the mode
    raw_mode = ctx.static(call, "mode", "down", kind="string")
    if not qualified:
        shape = call_shape(ctx, call, needs_payload=True)  # P4 for a scalar or array form
        distance: object = ctx.static(call, "distance", 1, kind="integer")
    else:
        mode = shuffle_mode(name, raw_mode, True)  # C1/C2 first: the mode decides the operand form
        if mode in SCALAR_SHUFFLE_MODES and ctx.payload(args["value"]) is None:
            _scalar_shuffle(ctx, call, call_shape(ctx, call, controls=("distance",), through=("shuffle",)), raw_mode)
            return
        if ctx.payload(args["value"]) is None and ctx.operand_form(args["value"]) is None:
            raise CoopTypeError(f"{name} value must be a ThreadData payload for mode {mode!r}; got a scalar (scalar "
                                "values take mode='offset' or mode='rotate')")
        shape = call_shape(ctx, call, needs_payload=True)  # an array form: require_payload's error
        # an integer kernel argument specialises the kernel, as in the common call (docs: concepts,
        # "Compile-time values and specialisation")
        try:
            distance = ctx.static(call, "distance", 1, kind="integer")
        except CoopTypeError:
            distance = "a runtime value"
    spec = plan_shuffle(shape, ShuffleOptions(mode=raw_mode, distance=distance))
    operands = Operands()
    operands.add("items", shape.operands[0])
    operands.add("output", ctx.result_operand(call))
    emission = emit(cub_exchange.emit, spec)
    site = SiteCall(emission.provider.symbol, operands.params(emission.provider), spec.dtype)
    ctx.add_site(call, operands.values, site, emission, shape.scratch)
