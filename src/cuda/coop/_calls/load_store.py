"""load/store in the call layer: planning a call and its C ABI (C++: _cub.families.load_store)."""
from __future__ import annotations


from .._cub.families import load_store as cub_load_store
from .._errors import CoopTypeError
from .._semantics.common import Runtime, literal_as
from .._semantics.load_store import LoadStoreOptions, LoadStoreSpec, plan_load_store
from .context import C, P, CallContext
from .shape import call_shape
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


def evidence(ctx: CallContext[C, P], call: C) -> None:
    """Load types its output from the source, store its value from the destination (docs: concepts,
    "ThreadData payloads")."""
    array_param, payload_param = _params_of(call.op)
    if payload_param not in call.args or array_param not in call.args:
        return
    payload = ctx.payload(call.args[payload_param])
    if payload is not None:
        ctx.add_evidence(payload, ctx.array_dtype(call.args[array_param]), call, array_param)


def plan(ctx: CallContext[C, P], call: C) -> None:
    name, args = call.name, call.args
    array_param, payload_param = _params_of(call.op)
    keys = ("offset", "valid_items", "oob_default") if call.op == "load" else ("offset", "valid_items")
    shape = call_shape(ctx, call, operand=payload_param, controls=keys, scalars=False,
                       needs_payload=call.op == "load")
    value = shape.operands[0]
    if shape.payload is None and ctx.operand_form(value) is not None:
        ctx.require_payload(call, payload_param)  # store takes a scalar, not an array (P4)
    array_dtype = ctx.array_dtype(args[array_param])
    scalar_dtype = None
    if shape.payload is None:  # a scalar store: typed by its destination, else (not visible before typing) by itself
        scalar_dtype = array_dtype or ctx.scalar_dtype(value, call, payload_param)
    spec = plan_load_store(shape, LoadStoreOptions(array_dtype=array_dtype, value_dtype=scalar_dtype,
                                                   algorithm=ctx.selector(call, "algorithm", "direct")))
    controls = shape.controls
    literals = {key: c.value for key, c in controls.items() if c is not None and not isinstance(c, Runtime)}
    if "oob_default" in literals:
        literals["oob_default"] = literal_as(name, "oob_default", literals["oob_default"], spec.dtype)
    operands = Operands()
    operands.add("array", args[array_param])
    operands.add("value" if spec.scalar_value else "items", value)
    operands.controls(args, {key: controls[key] for key in keys}, lambda key, control: literals.get(key, 0))
    emission = emit(cub_load_store.emit, spec)
    provider = emission.provider
    site = SiteCall(provider.symbol, operands.params(provider), spec.dtype, check=checker(spec, name, operands.bound))
    ctx.add_site(call, operands.values, site, emission, shape.scratch if spec.uses_scratch else None)


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
