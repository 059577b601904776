"""load/store in the numba-cuda-mlir backend: planning a call and its C ABI (C++: _cub.families.load_store)."""
from __future__ import annotations

from typing import Any

from ..._cub.families import load_store as cub_load_store
from ..._errors import CoopTypeError
from ..._semantics.common import Runtime, literal_as
from ..._semantics.load_store import LoadStoreSpec, plan_load_store
from .. import _compat as nb
from . import Param, SiteCall, array_words, require_payload_dtype, require_runtime_int

OPS = ("load", "store")


def _params_of(op: str) -> tuple[str, str]:
    return ("source", "output") if op == "load" else ("destination", "value")


def evidence(ctx: Any, call: Any) -> None:
    """SPEC 4: load types its output from the source, store its value from the destination."""
    array_param, payload_param = _params_of(call.op)
    if payload_param not in call.args or array_param not in call.args:
        return
    payload = ctx.payload(call.args[payload_param])
    if payload is not None:
        ctx.add_evidence(payload, ctx.array_dtype(call.args[array_param]), call, array_param)


def plan(ctx: Any, call: Any) -> None:
    name, args = call.name, call.args
    group = ctx.group(call)
    array_param, payload_param = _params_of(call.op)
    payload = ctx.payload(args[payload_param])
    if payload is None and (call.op == "load" or ctx.operand_form(args[payload_param]) is not None):
        payload = ctx.require_payload(call, payload_param)  # store takes a scalar, not an array (P4)
    scalar = payload is None
    array_dtype = ctx.array_dtype(args[array_param])
    dtype = array_dtype if scalar else payload.dtype
    controls = {key: ctx.control(call, key) for key in ("valid_items", "oob_default", "offset")}
    desc = ctx.descriptor(args.get("temp_storage"), name)
    spec = plan_load_store(
        call.op, name, group.spec, ctx.launch, array_dtype or dtype, dtype or array_dtype,
        1 if scalar else payload.items_per_thread, ctx.selector(call, "algorithm", "direct"),
        controls["valid_items"], controls["oob_default"] if call.op == "load" else None, controls["offset"],
        desc.descriptor if desc else None, scalar_value=scalar,
    )
    literals = {key: c.value for key, c in controls.items() if c is not None and not isinstance(c, Runtime)}
    if "oob_default" in literals:
        literals["oob_default"] = literal_as(name, "oob_default", literals["oob_default"], spec.dtype)
    operands = [args[array_param], args[payload_param]]
    index: dict[str, int | None] = {"array": 0, "payload": 1}
    for key in ("offset", "valid_items", "oob_default"):
        if isinstance(controls[key], Runtime):
            index[key] = len(operands)
            operands.append(args[key])
    provider = cub_load_store.emit(spec)
    site = SiteCall(provider.symbol, params(spec, index, literals), spec.dtype, check=checker(spec, name, index))
    ctx.add_site(call, operands, site, provider, (group.spec, desc) if spec.uses_scratch else None)


def params(spec: LoadStoreSpec, operands: dict[str, int | None], literals: dict[str, object]) -> list[Param]:
    """``operands`` maps each logical operand to its index among the call's operands (None: absent)."""

    def scalar(name: str, abi: str, default: object = 0) -> Param:
        index = operands.get(name)
        return Param(abi, index, literals.get(name, default)) if index is None else Param(abi, index)

    middle = [Param("ptr", operands["array"]), Param("value" if spec.scalar_value else "ptr", operands["payload"])]
    tail = [scalar("offset", "i64"), scalar("valid_items", "i64")]
    if spec.op == "load":
        tail.append(scalar("oob_default", "elem"))
    return middle + tail + [Param("scratch"), Param("stride")]


def checker(spec: LoadStoreSpec, name: str, operands: dict[str, int | None]):
    """Typing-time checks of the operands whose types the planner could not see."""

    def check(argtys: tuple) -> None:
        array = argtys[operands["array"]]
        param = "source" if spec.op == "load" else "destination"
        if not isinstance(array, nb.types.Array) or array.ndim != 1 or array.layout not in ("C",):
            raise CoopTypeError(f"{name} {param} must be a one-dimensional contiguous array; got {array_words(array)}")
        if nb.dtype_name(array.dtype) != spec.dtype:
            suffix = "; cast the value" if spec.op == "store" else ""
            raise CoopTypeError(
                f"{name} {param} dtype {array.dtype} does not match payload dtype {spec.dtype}{suffix}"
            )
        if spec.scalar_value:
            value = argtys[operands["payload"]]
            if nb.dtype_name(value) != spec.dtype:
                raise CoopTypeError(
                    f"{name} destination dtype {spec.dtype} does not match payload dtype {value}; cast the value"
                )
        for control in ("valid_items", "offset"):
            index = operands.get(control)
            if index is not None:
                require_runtime_int(name, control, argtys[index])
        index = operands.get("oob_default")
        if index is not None:
            require_payload_dtype(name, "oob_default", argtys[index], spec.dtype)

    return check
