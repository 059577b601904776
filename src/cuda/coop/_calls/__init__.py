"""The call layer: one module per operation family, shared by every backend.

Each family module binds an operation call to its semantics and its CUB provider over the ``CallContext`` a
backend implements (``context.py``): ``OPS`` (the operations it serves), ``plan(ctx, call)`` (plan the call and
record its ``SiteCall``), and optionally ``evidence(ctx, call)`` (what the call says about payload dtypes) and
``result_payload(ctx, call)`` (the fresh payload a call returns). The backend only translates its compiler's
representation to and from these.
"""
from __future__ import annotations

from types import ModuleType

from . import (
    adjacent, argreduce, exchange_shuffle, histogram, load_store, reduce, reduce_batched, run_length, scan, sort,
)

_MODULES = (load_store, exchange_shuffle, adjacent, argreduce, histogram, reduce, reduce_batched, run_length, scan,
            sort)

#: op name -> family module
FAMILIES: dict[str, ModuleType] = {op: module for module in _MODULES for op in module.OPS}
