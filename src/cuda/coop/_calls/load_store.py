"""load/store in the call layer: planning a call and its C ABI (C++: _cub.families.load_store)."""
from __future__ import annotations


from .._cub.families import load_store as cub_load_store
from .._errors import CoopTypeError
from .._semantics.common import Runtime, literal_as
from .._semantics.load_store import LoadStoreSpec, plan_load_store
from .context import Call, CallContext
from .site import (
    Check,
    OperandType,
    Operands,
    SiteCall,
    emit,
    require_payload_dtype,
    require_runtime_int,
    require_vector,
)



def _params_of(op: str) -> tuple[str, str]:
    return ("source", "output") if op == "load" else ("destination", "value")


def evidence(ctx: CallContext, call: Call) -> None:
    """Load types its output from the source, store its value from the destination (docs: concepts,
    "ThreadData payloads")."""
    array_param, payload_param = _params_of(call.op)
    if payload_param not in call.args or array_param not in call.args:
        return
    payload = ctx.payload(call.args[payload_param])
    if payload is not None:
        ctx.add_evidence(payload, ctx.array_dtype(call.args[array_param]), call, array_param)


def plan(ctx: CallContext, call: Call) -> None:
    name, args = call.name, call.args
    group = ctx.group(call)
    array_param, payload_param = _params_of(call.op)
    payload = ctx.payload(args[payload_param])
    if payload is None and (call.op == "load" or ctx.operand_form(args[payload_param]) is not None):
        payload = ctx.require_payload(call, payload_param)  # store takes a scalar, not an array (P4)
    scalar = payload is None
    array_dtype = ctx.array_dtype(args[array_param])
    if payload is not None:
        dtype, items_per_thread = payload.dtype, payload.items_per_thread
    else:  # a scalar store: typed by its destination, else (not visible before typing) by the value itself
        items_per_thread = 1
        dtype = array_dtype or ctx.scalar_dtype(args[payload_param], call, payload_param)
    controls = {key: ctx.control(call, key) for key in ("valid_items", "oob_default", "offset")}
    desc = ctx.descriptor(args.get("temp_storage"), name)
    spec = plan_load_store(
        call.op, name, group.spec, ctx.launch, array_dtype or dtype, dtype, items_per_thread,
        ctx.selector(call, "algorithm", "direct"),
        controls["valid_items"], controls["oob_default"] if call.op == "load" else None, controls["offset"],
        desc.descriptor if desc else None, scalar_value=scalar,
    )
    literals = {key: c.value for key, c in controls.items() if c is not None and not isinstance(c, Runtime)}
    if "oob_default" in literals:
        literals["oob_default"] = literal_as(name, "oob_default", literals["oob_default"], spec.dtype)
    operands = Operands()
    operands.add("array", args[array_param])
    operands.add("value" if spec.scalar_value else "items", args[payload_param])
    keys = ("offset", "valid_items", "oob_default") if call.op == "load" else ("offset", "valid_items")
    operands.controls(args, {key: controls[key] for key in keys}, lambda key, control: literals.get(key, 0))
    emission = emit(cub_load_store.emit, spec)
    provider = emission.provider
    site = SiteCall(provider.symbol, operands.params(provider), spec.dtype, check=checker(spec, name, operands.bound))
    ctx.add_site(call, operands.values, site, emission, (group.spec, desc) if spec.uses_scratch else None)


def checker(spec: LoadStoreSpec, name: str, operands: dict[str, int]) -> Check:
    """Typing-time checks of the operands whose types the planner could not see (``operands``: the operand index
    feeding each C parameter)."""

    def check(argtys: tuple[OperandType, ...]) -> None:
        param = "source" if spec.op == "load" else "destination"
        suffix = "; cast the value" if spec.op == "store" else ""
        require_vector(name, param, argtys[operands["array"]], spec.dtype, "payload dtype", suffix=suffix)
        if spec.scalar_value:
            value = argtys[operands["value"]]
            if value.dtype != spec.dtype:
                raise CoopTypeError(
                    f"{name} destination dtype {spec.dtype} does not match payload dtype {value.text}; cast the value"
                )
        for control in ("valid_items", "offset"):
            index = operands.get(control)
            if index is not None:
                require_runtime_int(name, control, argtys[index])
        index = operands.get("oob_default")
        if index is not None:
            require_payload_dtype(name, "oob_default", argtys[index], spec.dtype)

    return check
