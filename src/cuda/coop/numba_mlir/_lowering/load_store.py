"""C ABI parameter lists of load/store sites (the C++ side is _cub.families.load_store)."""
from __future__ import annotations

from ..._errors import CoopTypeError
from ..._semantics.common import RUNTIME_INT_DTYPES
from ..._semantics.load_store import LoadStoreSpec
from .. import _compat as nb
from . import Param


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
            raise CoopTypeError(f"{name} {param} must be a one-dimensional contiguous array; got {array}")
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
            if index is not None and nb.dtype_name(argtys[index]) not in RUNTIME_INT_DTYPES:
                raise CoopTypeError(
                    f"{name} {control} must be a signed integer of at most 64 bits or an unsigned integer of at "
                    f"most 32 bits; got {argtys[index]}"
                )
        index = operands.get("oob_default")
        if index is not None and nb.dtype_name(argtys[index]) != spec.dtype:
            raise CoopTypeError(
                f"{name} oob_default must have the payload dtype {spec.dtype}; got {argtys[index]}; cast it"
            )

    return check
