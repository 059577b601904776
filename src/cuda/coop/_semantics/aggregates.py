"""User-defined aggregate dtypes (SPEC 9.2): NumPy structured dtypes (numba records) with fixed-size fields.

The planning layer knows an aggregate by its dtype name, its size and its alignment; its fields matter only to the
user's own code. In C++ it is an opaque ``struct alignas(A)`` of ``S`` bytes (``_cub.abi``); user callables receive
and return it by pointer. Backends register the aggregates they meet (``register``) and name them with the string
of their own type, which describes the field layout, so equal layouts share one name in every process.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass

from .._errors import CoopTypeError

AGGREGATE_C_PREFIX = "cuda_coop_agg_"


@dataclass(frozen=True)
class Aggregate:
    name: str  # the backend's description of the layout (e.g. numba's ``Record(a[type=int32;offset=0],...)``)
    size: int
    alignment: int

    @property
    def c_type(self) -> str:
        return f"{AGGREGATE_C_PREFIX}{self.size}_{self.alignment}"

    @property
    def symbol_part(self) -> str:
        """A C identifier fragment unique to the layout (for callable symbols compiled at this dtype)."""
        return "agg" + hashlib.sha256(self.name.encode()).hexdigest()[:12]


_REGISTRY: dict[str, Aggregate] = {}


def register(name: str, size: int, alignment: int) -> str:
    """Record an aggregate dtype; returns its dtype name."""
    if size <= 0 or alignment <= 0 or alignment & (alignment - 1):
        raise ValueError(f"aggregate {name}: size {size} and alignment {alignment} do not describe a C type")
    _REGISTRY.setdefault(name, Aggregate(name, size, alignment))
    return name


def aggregate(dtype: str | None) -> Aggregate | None:
    return _REGISTRY.get(dtype) if dtype is not None else None


def is_aggregate(dtype: str | None) -> bool:
    return dtype in _REGISTRY


def require_aggregate_callable(name: str, param: str, dtype: str, given: object) -> None:
    """SPEC 9.2: an aggregate has no built-in operators or comparisons; ``param`` must be a user callable."""
    if is_aggregate(dtype) and (given is None or isinstance(given, str)):
        what = "an operator string" if isinstance(given, str) else "no " + param
        from .._errors import CoopTypeError

        raise CoopTypeError(f"{name} on the aggregate dtype {dtype} needs {param}=<a Python or device function>; got "
                            f"{what} (aggregates have no built-in operators)")


def require_aggregate_callable(name: str, param: str, dtype: str, given: object) -> None:
    """SPEC 9.2: an aggregate has no built-in operators or comparisons; ``param`` must be a user callable."""
    if is_aggregate(dtype) and (given is None or isinstance(given, str)):
        what = "an operator string" if isinstance(given, str) else "no " + param
        raise CoopTypeError(f"{name} on the aggregate dtype {dtype} needs {param}=<a Python or device function>; got "
                            f"{what} (aggregates have no built-in operators)")


def symbol_part(dtype: str) -> str:
    """``dtype`` as a fragment of a C symbol."""
    found = aggregate(dtype)
    return found.symbol_part if found is not None else dtype
