"""The scan family in the numba-cuda-mlir backend (C++: _cub.families.scan)."""
from __future__ import annotations

from typing import Any

from ..._cub.families import scan as cub_scan
from ..._errors import CoopTypeError
from ..._semantics.common import Runtime
from ..._semantics.scan import plan_scan
from .. import _compat as nb
from . import Param, SiteCall, operator_link, require_payload_dtype, same_shape_result

OPS = ("scan", "exclusive_sum", "inclusive_sum", "exclusive_scan", "inclusive_scan")


result_payload = same_shape_result


def plan(ctx: Any, call: Any) -> None:
    name, args = call.name, call.args
    group = ctx.group(call)
    payload = ctx.payload(args["value"])
    dtype = payload.dtype if payload is not None else ctx.scalar_dtype(args["value"], call, "value")
    initial = ctx.control(call, "initial_value")
    desc = ctx.descriptor(args.get("temp_storage"), name)
    spec, literal = plan_scan(
        name, call.op, group.spec, ctx.launch, dtype, payload.items_per_thread if payload else 0,
        ctx.static(call, "mode", "exclusive", kind="string"), ctx.static(call, "scan_op", None), initial,
        ctx.static(call, "algorithm", None, kind="string"), desc.descriptor if desc else None, ctx.static(call, "prefix_op", None))
    operands = [args["value"]]
    params = [Param("ptr" if payload is not None else "value", 0)]
    if payload is not None:
        params.append(Param("ptr", len(operands)))
        operands.append(ctx.result_operand(call))  # the fresh result payload
    if isinstance(initial, Runtime):
        params.append(Param("elem", len(operands)))
        operands.append(args["initial_value"])
    else:
        params.append(Param("elem", None, literal if literal is not None else 0))
    params += [Param("scratch"), Param("stride")]
    provider = cub_scan.emit(spec)
    initial_index = len(operands) - 1 if isinstance(initial, Runtime) else None

    def check(argtys: tuple) -> None:
        if payload is None and not isinstance(argtys[0], nb.types.Number):
            raise CoopTypeError(f"{name} value must be a scalar or a ThreadData; got {argtys[0]}")
        if initial_index is not None:
            require_payload_dtype(name, "initial_value", argtys[initial_index], spec.dtype)

    site = SiteCall(provider.symbol, params, spec.dtype, None if payload is not None else spec.dtype, check=check)
    site.extra["link"] = (operator_link(spec.operator, spec.dtype, ctx.cc, name, "scan_op")
                          + operator_link(spec.prefix, spec.dtype, ctx.cc, name, "prefix_op", arity=1))
    ctx.add_site(call, operands, site, provider, (group.spec, desc) if spec.uses_scratch else None)
