"""Operators of reduce and the scan family (SPEC 8.0)."""
from __future__ import annotations

import hashlib
import operator
from dataclasses import dataclass
from typing import Any

from .._errors import CoopTypeError, CoopValueError
from .common import INTEGER_DTYPES

# canonical name -> (aliases, integer-only)
_BUILTINS: dict[str, tuple[tuple[str, ...], bool]] = {
    "sum": (("+", "add", "plus"), False),
    "multiplies": (("*", "mul", "multiply"), False),
    "min": (("minimum",), False),
    "max": (("maximum",), False),
    "bit_and": (("&",), True),
    "bit_or": (("|",), True),
    "bit_xor": (("^",), True),
}
_ALIASES = {alias: name for name, (aliases, _) in _BUILTINS.items() for alias in (name, *aliases)}


def _callable_aliases() -> dict[Any, str]:
    table: dict[Any, str] = {operator.add: "sum", operator.mul: "multiplies", min: "min", max: "max",
                             operator.and_: "bit_and", operator.or_: "bit_or", operator.xor: "bit_xor"}
    try:  # NumPy ufuncs are recognised when NumPy is importable (it always is inside kernels)
        import numpy as np

        table.update({np.add: "sum", np.multiply: "multiplies", np.minimum: "min", np.maximum: "max",
                      np.bitwise_and: "bit_and", np.bitwise_or: "bit_or", np.bitwise_xor: "bit_xor"})
    except ImportError:  # pragma: no cover
        pass
    return table


@dataclass(frozen=True)
class OperatorSpec:
    """A resolved operator: a built-in functor name, or a user callable with a stable symbol."""

    name: str
    builtin: bool
    function: Any = None  # the Python function of a user callable

    @property
    def is_sum(self) -> bool:
        return self.builtin and self.name == "sum"


def callable_symbol(function: Any) -> str:
    """A symbol derived from the callable's identity: code, module, name and captured values.

    Stable across processes (so the provider cache hits) while distinct closures differ.
    """
    code = getattr(function, "__code__", None)
    parts = [getattr(function, "__module__", ""), getattr(function, "__qualname__", repr(function))]
    if code is not None:
        parts += [code.co_code.hex(), repr(code.co_consts), repr(code.co_names)]
    for cell in getattr(function, "__closure__", None) or ():
        try:
            parts.append(repr(cell.cell_contents))
        except ValueError:  # empty cell
            parts.append("<empty>")
    return "cuda_coop_fn_" + hashlib.sha256("\0".join(parts).encode()).hexdigest()[:16]


def resolve_operator(op: str, param: str, value: Any, dtype: str) -> OperatorSpec:
    if value is None:
        return OperatorSpec("sum", True)
    if isinstance(value, str):
        canonical = _ALIASES.get(value.strip().lower().replace("-", "_"))
        if canonical is None:
            raise CoopValueError(f"{op} {param} must be one of: {', '.join(_BUILTINS)}; got {value!r}")
    else:
        try:
            canonical = _callable_aliases().get(value)
        except TypeError:  # unhashable
            canonical = None
        if canonical is None:
            function = getattr(value, "py_func", value)  # a cuda.jit(device=True) dispatcher
            if not callable(function) or not hasattr(function, "__code__"):
                raise CoopTypeError(
                    f"{op} {param} must be an operator string or a Python/device function; got {value!r}")
            return OperatorSpec(callable_symbol(function), False, function)
    if _BUILTINS[canonical][1] and dtype not in INTEGER_DTYPES:
        raise CoopTypeError(f"{op} {param} {canonical!r} requires an integer dtype; got {dtype}")
    return OperatorSpec(canonical, True)
