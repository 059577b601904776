"""run_length_decode and run_length_decode_into in the numba-cuda-mlir backend (C++: _cub.families.run_length).

The windowed form returns a fresh payload of ``decoded_items_per_thread`` run values; the bulk form writes to an
array operand, whose extent is passed so the provider can check the capacity, and returns the total."""
from __future__ import annotations

from typing import Any

from ..._cub.families import run_length as cub_run_length
from ..._errors import CoopTypeError
from ..._semantics.common import Runtime, static_positive
from ..._semantics.run_length import INTO, OFFSET_PARAM, plan_run_length_decode
from .. import _compat as nb
from . import Param, SiteCall, array_words, require_runtime_int

OPS = ("run_length_decode", "run_length_decode_into")


def result_payload(ctx: Any, call: Any) -> Any:
    """The windowed form: ``decoded_items_per_thread`` items of the run-value dtype."""
    if call.op == INTO:
        return None
    values = ctx.payload(call.args["run_values"]) if "run_values" in call.args else None
    decoded = ctx.static(call, "decoded_items_per_thread", None, kind="integer")
    if values is None or decoded is None:
        return None
    return ctx.new_result_payload(call, static_positive(call.name, "decoded_items_per_thread", decoded), values)


def plan(ctx: Any, call: Any) -> None:
    name, args = call.name, call.args
    group = ctx.group(call)
    values = ctx.require_payload(call, "run_values")
    lengths = ctx.require_payload(call, "run_lengths")
    desc = ctx.descriptor(args.get("temp_storage"), name)
    offset_param = OFFSET_PARAM[call.op]
    offset = ctx.control(call, offset_param)
    spec = plan_run_length_decode(call.op, name, group.spec, ctx.launch, values.dtype, values.items_per_thread,
                                  lengths.dtype, lengths.items_per_thread,
                                  ctx.static(call, "decoded_items_per_thread", None, kind="integer"), offset,
                                  desc.descriptor if desc else None)
    if call.op == INTO:
        destination_dtype = ctx.array_dtype(args["destination"])
        if destination_dtype is not None and destination_dtype != spec.value_dtype:
            raise CoopTypeError(f"{name} destination dtype {destination_dtype} does not match payload dtype "
                                f"{spec.value_dtype}")
        operands = [args["run_values"], args["run_lengths"], args["destination"]]
        params = [Param("ptr", 0), Param("ptr", 1), Param("ptr", 2), Param("len", 2)]
    else:
        operands = [args["run_values"], args["run_lengths"], ctx.result_operand(call)]
        params = [Param("ptr", 0), Param("ptr", 1), Param("ptr", 2)]
    offset_index = None
    if isinstance(offset, Runtime):
        offset_index = len(operands)
        params.append(Param("i64", offset_index))
        operands.append(args[offset_param])
    else:
        params.append(Param("i64", None, spec.offset))
    params += [Param("scratch"), Param("stride")]
    provider = cub_run_length.emit(spec)

    def check(argtys: tuple) -> None:
        if call.op == INTO:
            array = argtys[2]
            if not isinstance(array, nb.types.Array) or array.ndim != 1 or array.layout != "C":
                raise CoopTypeError(f"{name} destination must be a one-dimensional contiguous array; got "
                                    f"{array_words(array)}")
            if nb.dtype_name(array.dtype) != spec.value_dtype:
                raise CoopTypeError(f"{name} destination dtype {array.dtype} does not match payload dtype "
                                    f"{spec.value_dtype}")
        if offset_index is not None:
            require_runtime_int(name, offset_param, argtys[offset_index])

    site = SiteCall(provider.symbol, params, spec.value_dtype, "uint32" if call.op == INTO else None, check=check)
    ctx.add_site(call, operands, site, provider, (group.spec, desc))
