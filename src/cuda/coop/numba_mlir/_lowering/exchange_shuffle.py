"""exchange and shuffle in the numba-cuda-mlir backend (C++: _cub.families.exchange_shuffle)."""
from __future__ import annotations

from typing import Any

from ..._cub.families import exchange_shuffle as cub_exchange
from ..._semantics.exchange_shuffle import plan_exchange, plan_shuffle
from . import Param, SiteCall, same_shape_result

OPS = ("exchange", "shuffle")


def _input(ctx: Any, call: Any) -> Any:
    return ctx.require_payload(call, "value")


result_payload = same_shape_result


def plan(ctx: Any, call: Any) -> None:
    name = call.name
    group = ctx.group(call)
    payload = _input(ctx, call)
    desc = ctx.descriptor(call.args.get("temp_storage"), name)
    qualified = getattr(call.marker, "__coop_qualified__", False)
    if call.op == "exchange":
        spec = plan_exchange(name, group.spec, ctx.launch, payload.dtype, payload.items_per_thread,
                             ctx.static(call, "mode", "striped_to_blocked", kind="string"), desc.descriptor if desc else None,
                             qualified)
    else:
        spec = plan_shuffle(name, group.spec, ctx.launch, payload.dtype, payload.items_per_thread,
                            ctx.static(call, "mode", "down", kind="string"), ctx.static(call, "distance", 1, kind="integer"),
                            desc.descriptor if desc else None)
    provider = cub_exchange.emit(spec)
    site = SiteCall(provider.symbol, [Param("ptr", 0), Param("ptr", 1), Param("scratch"), Param("stride")],
                    spec.dtype)
    ctx.add_site(call, [call.args["value"], ctx.result_operand(call)], site, provider, (group.spec, desc))
