"""The call layer: one module per operation family, shared by every backend.

Each family module binds an operation call to its semantics and its CUB provider over the ``CallContext`` a
backend implements (``context.py``): ``plan(ctx, call)`` (plan the call and
record its ``SiteCall``), and optionally ``evidence(ctx, call)`` (what the call says about payload dtypes) and
``result_payload(ctx, call)`` (the fresh payload a call returns). The backend only translates its compiler's
representation to and from these.
"""
from __future__ import annotations

import importlib
from types import ModuleType

from .._markers.records import records

#: op name -> family module (the one its record names)
FAMILIES: dict[str, ModuleType] = {op.name: importlib.import_module(f"{__name__}.{op.family}") for op in records()}
