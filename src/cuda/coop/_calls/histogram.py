"""histogram in the call layer (C++: _cub.families.histogram).

The result is a fresh payload of ``bins_per_thread`` striped counters of ``counter_dtype``; its shape is read
from the call's compile-time options when the payload is created, so later uses are typed from it."""
from __future__ import annotations

from typing import Any

from .._cub.families import histogram as cub_histogram
from .._semantics.common import check_payload_bytes, static_positive
from .._semantics.histogram import counter_dtype_of, plan_histogram
from .context import Call, CallContext
from .site import Operands, SiteCall, emit, static_dtype_name



def _counter_dtype(ctx: CallContext, call: Call) -> str | None:
    return static_dtype_name(ctx, call, "counter_dtype")


def _bins_per_thread(ctx: CallContext, call: Call) -> int:
    return static_positive(call.name, "bins_per_thread", ctx.static(call, "bins_per_thread", 1, kind="integer"))


def result_payload(ctx: CallContext, call: Call) -> Any:
    """``bins_per_thread`` counters of ``counter_dtype`` per thread."""
    extent = _bins_per_thread(ctx, call)
    return ctx.new_result_payload(call, extent, None, dtype=counter_dtype_of(call.name, _counter_dtype(ctx, call)))


def _scalar_samples(ctx: CallContext, call: Call) -> str | None:
    """A qualified call may count one scalar sample per thread (docs: qualified, "Payload forms"); its dtype (None: a
    payload)."""
    var = call.args["samples"]
    if ctx.payload(var) is not None or ctx.operand_form(var) is not None or not call.qualified:
        return None
    return ctx.scalar_dtype(var, call, "samples")


def plan(ctx: CallContext, call: Call) -> None:
    name = call.name
    group = ctx.group(call)
    scalar = _scalar_samples(ctx, call)
    if scalar is not None:
        dtype, items_per_thread = scalar, 1
    else:
        samples = ctx.require_payload(call, "samples")
        dtype, items_per_thread = samples.dtype, samples.items_per_thread
    desc = ctx.descriptor(call.args.get("temp_storage"), name)
    spec = plan_histogram(name, group.spec, ctx.launch, dtype, items_per_thread,
                          ctx.static(call, "bins", None, kind="integer"), _bins_per_thread(ctx, call),
                          _counter_dtype(ctx, call), ctx.selector(call, "algorithm", "atomic"),
                          desc.descriptor if desc else None)
    check_payload_bytes(ctx.result_name(call), spec.bins_per_thread, spec.counter_dtype)
    emission = emit(lambda s: cub_histogram.emit(s, scalar_samples=scalar is not None), spec)
    provider = emission.provider
    operands = Operands()
    operands.add("sample" if scalar else "samples", call.args["samples"])
    operands.add("output", ctx.result_operand(call))
    site = SiteCall(provider.symbol, operands.params(provider), spec.sample_dtype)
    ctx.add_site(call, operands.values, site, emission, (group.spec, desc))
