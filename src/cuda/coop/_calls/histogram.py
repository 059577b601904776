"""histogram in the call layer (C++: _cub.families.histogram).

The result is a fresh payload of ``bins_per_thread`` striped counters of ``counter_dtype``; its shape is read
from the call's compile-time options when the payload is created, so later uses are typed from it."""
from __future__ import annotations

from typing import Any

from .._cub.families import histogram as cub_histogram
from .._semantics.common import check_payload_bytes, static_positive
from .._semantics.histogram import HistogramOptions, counter_dtype_of, plan_histogram
from .context import C, P, CallContext
from .shape import call_shape
from .site import OperandType, Operands, SiteCall, emit, require_runtime_int, static_dtype_name


def _counter_dtype(ctx: CallContext[C, P], call: C) -> str | None:
    return static_dtype_name(ctx, call, "counter_dtype")


def _bins_per_thread(ctx: CallContext[C, P], call: C) -> int:
    return static_positive(call.name, "bins_per_thread", ctx.static(call, "bins_per_thread", 1, kind="integer"))


def result_payload(ctx: CallContext[C, P], call: C) -> Any:
    """``bins_per_thread`` counters of ``counter_dtype`` per thread."""
    extent = _bins_per_thread(ctx, call)
    return ctx.new_result_payload(call, extent, None, dtype=counter_dtype_of(call.name, _counter_dtype(ctx, call)))


def plan(ctx: CallContext[C, P], call: C) -> None:
    """Samples are a payload, or in a qualified call one scalar per thread (docs: qualified, "Payload forms")."""
    shape = call_shape(ctx, call, operand="samples", controls=("valid_items",), needs_payload=True)
    scalar = shape.payload is None
    spec = plan_histogram(shape, HistogramOptions(
        bins=ctx.static(call, "bins", None, kind="integer"), bins_per_thread=_bins_per_thread(ctx, call),
        counter_dtype=_counter_dtype(ctx, call), algorithm=ctx.selector(call, "algorithm", "atomic")))
    check_payload_bytes(ctx.result_name(call), spec.bins_per_thread, spec.counter_dtype)
    emission = emit(lambda s: cub_histogram.emit(s, scalar_samples=scalar), spec)
    provider = emission.provider
    operands = Operands()
    operands.add("sample" if scalar else "samples", shape.operands[0])
    operands.add("output", ctx.result_operand(call))
    runtime: dict[str, int] = {}
    if spec.has_valid_items:  # a runtime valid_items is an operand, a constant a literal
        runtime = operands.controls(call.args, shape.controls, lambda key, control: control.value)

    def check(argtys: tuple[OperandType, ...]) -> None:
        for key, index in runtime.items():
            require_runtime_int(call.name, key, argtys[index])

    site = SiteCall(provider.symbol, operands.params(provider), spec.sample_dtype, check=check)
    ctx.add_site(call, operands.values, site, emission, shape.scratch)
