"""Multi-operand reduce and scans (docs: operations/scan, "Several operands at once"; SPEC 8.18): a tuple of 1-8
payloads or scalars is one value of a tuple dtype, whose C++ type is a struct of one field per operand. A member may
be a user-defined aggregate (docs: qualified, "User-defined aggregates"), whose dtype name is its backend's
description of the layout: any text, commas included."""
from __future__ import annotations

import json
from collections.abc import Sequence

from .._markers import records
from .._errors import CoopTypeError, CoopValueError
from . import aggregates

TUPLE_PREFIX = "tuple:"
TUPLE_C_PREFIX = "cuda_coop_tuple_"
MAX_OPERANDS = 8


def takes_tuples(op: str | None) -> bool:
    """Whether operation ``op``'s ``value`` may be a tuple of operands (its record says so)."""
    declared = records.record(op) if op is not None else None
    return declared is not None and declared.tuple_operands


def tuple_operand(op: str | None) -> str | None:
    """The operand of operation ``op`` that may be a tuple (``value``; select and partition: ``items``), or None."""
    declared = records.record(op) if op is not None else None
    return declared.tuple_operand if declared is not None and declared.tuple_operands else None


def tuple_dtype(dtypes: list[str]) -> str:
    """The dtype name of a tuple of values of ``dtypes``: their names as a JSON list (``tuple:["int32","float32"]``),
    which ``fields`` reads back whatever an aggregate's name holds."""
    return TUPLE_PREFIX + json.dumps(list(dtypes), separators=(",", ":"))


def is_tuple(dtype: object) -> bool:
    return isinstance(dtype, str) and dtype.startswith(TUPLE_PREFIX)


def fields(dtype: str) -> list[str]:
    """The operand dtypes of a tuple dtype."""
    members = json.loads(dtype[len(TUPLE_PREFIX):])
    assert isinstance(members, list), dtype
    return [str(member) for member in members]


def tuple_c_type(dtype: str) -> str:
    """``cuda_coop_tuple_int32_float32``: a struct with one field ``f{j}`` per operand (``_cub.tuples``), named by
    its members' dtypes; an aggregate member by its C type as one word (``agg8x4``: ``Aggregate.token``), so tuples
    of aggregates of one layout share a struct as the aggregates do."""
    return TUPLE_C_PREFIX + "_".join(_c_token(member) for member in fields(dtype))


def _c_token(dtype: str) -> str:
    found = aggregates.aggregate(dtype)
    return found.token if found is not None else dtype


def symbol_part(dtype: str) -> str:
    """``dtype`` as a fragment of a C symbol (for callables compiled at this dtype): a tuple by its members'."""
    if is_tuple(dtype):  # a multi-operand value
        return "tup_" + "_".join(aggregates.symbol_part(member) for member in fields(dtype))
    return aggregates.symbol_part(dtype)


def check_operands(name: str, extents: Sequence[int], dtypes: Sequence[str | None], *,
                   independent: bool = False, moved: bool = False, param: str = "value") -> None:
    """1-8 operands (P18), all payloads of one extent or all scalars, each with a dtype; ``independent``: members that
    travel on their own (broadcast's) may mix scalars and payloads of any extents; ``moved``: members one permutation
    moves (select's ``items``), for which a mix of scalars and payloads is P18 too. ``param``: the operand's name."""
    kind = "payloads or scalars" if independent else "payloads of one extent or scalars"
    if not 1 <= len(extents) <= MAX_OPERANDS:
        got = f"a tuple of {len(extents)}" if extents else "an empty tuple"
        raise CoopTypeError(f"{name} {param} must be a tuple of 1 to {MAX_OPERANDS} {kind}; got {got}")
    if len(set(extents)) > 1 and not independent:
        if 0 in extents:  # P18: select's items and the members of reduce and the scans (SPEC 8.18) share one shape
            raise CoopTypeError(f"{name} {param} must be a tuple of 1 to {MAX_OPERANDS} {kind}; got a tuple mixing "
                                "payloads and scalars")
        raise CoopValueError(f"{name} {param} tuple payloads must have the same items_per_thread; got "
                             f"{', '.join(map(str, extents))}")
    for position, dtype in enumerate(dtypes):
        if dtype is None:
            raise CoopTypeError(f"could not infer the dtype of {name} {param}[{position}]")


def require_tuple_operator(name: str, param: str, value: object) -> None:
    """A multi-operand call needs the user's function: operator strings and the sums are single-operand only."""
    function = getattr(value, "py_func", value)
    if value is None or isinstance(value, str) or not callable(function) or not hasattr(function, "__code__"):
        raise CoopTypeError(f"{name} over a tuple of operands needs {param}=f, a function of two tuples returning "
                            f"a tuple; got {value!r}")
