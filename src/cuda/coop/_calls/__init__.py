"""The call layer: one module per operation family, shared by every backend.

Each family module binds an operation call to its semantics and its CUB provider over the ``CallContext`` a
backend implements (``context.py``): ``plan(ctx, call)`` (plan the call and
record its ``SiteCall``), and optionally ``evidence(ctx, call)`` (what the call says about payload dtypes) and
``result_payload(ctx, call)`` (the fresh payload a call returns). The backend only translates its compiler's
representation to and from these.
"""
from __future__ import annotations

from dataclasses import dataclass
from types import ModuleType
from typing import Any, Protocol

from .._markers.records import records
from . import (adjacent, argreduce, broadcast, exchange_shuffle, histogram, load_store, reduce, reduce_batched,
               run_length, scan, select, sort)
from .context import C, P, CallContext


class Step(Protocol):
    """``plan`` or ``evidence`` of a family, for any backend's context, call and payload types."""

    def __call__(self, ctx: CallContext[C, P], call: C, /) -> None: ...


class ResultStep(Protocol):
    """``result_payload`` of a family: the fresh payload (or tuple of payloads) a call returns."""

    def __call__(self, ctx: CallContext[C, P], call: C, /) -> Any: ...


@dataclass(frozen=True)
class Family:
    """What a family's call module offers a backend: ``plan``, and ``evidence``/``result_payload`` where the family
    has them (None otherwise)."""

    name: str
    plan: Step
    evidence: Step | None = None
    result_payload: ResultStep | None = None

    @classmethod
    def of(cls, module: ModuleType) -> Family:
        return cls(module.__name__.rsplit(".", 1)[1], module.plan, getattr(module, "evidence", None),
                   getattr(module, "result_payload", None))


#: every family of the call layer, by the name operation records give it (``Operation.family``)
FAMILY_MODULES: dict[str, Family] = {family.name: family for family in map(Family.of, (
    adjacent, argreduce, broadcast, exchange_shuffle, histogram, load_store, reduce, reduce_batched, run_length, scan,
    select, sort))}


def _families() -> dict[str, Family]:
    unknown = sorted({op.family for op in records()} - set(FAMILY_MODULES))
    if unknown:  # a record naming a family this table lacks is a bug of the change that added it
        raise AssertionError(f"operation records name call-layer families missing from FAMILY_MODULES: {unknown}")
    return {op.name: FAMILY_MODULES[op.family] for op in records()}


#: op name -> its family (the one its record names)
FAMILIES: dict[str, Family] = _families()
