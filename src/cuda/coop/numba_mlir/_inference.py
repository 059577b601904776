"""Payload dtype inference before typing (SPEC 4): all evidence first, then one decision per payload.

A mixin of the planner's ``KernelPlan``: it reads ``self.resolver``, ``self.payloads`` and
``self.func_ir``, and asks each operation family for the evidence its calls provide.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .._errors import CoopError, CoopTypeError, located
from .._markers.base import op_name
from . import _compat as nb
from ._ir import ArgRef, Obj, PayloadVal, dtype_of_object
from ._lowering import FAMILIES


class DtypeInference:
    def _infer_dtypes(self) -> None:
        """SPEC 4: explicit dtype, then cooperative operations, then indexed assignments, then literals."""
        for block in self.func_ir.blocks.values():
            for stmt in block.body:
                if isinstance(stmt, nb.ir.Assign) and isinstance(stmt.value, nb.ir.Expr) and stmt.value.op == "call":
                    callee = self.resolver.callee(stmt)
                    family = FAMILIES.get(op_name(callee.value)) if isinstance(callee, Obj) else None
                    if family is not None and hasattr(family, "evidence"):
                        try:
                            call = self.op_call(stmt, block, callee.value)
                        except CoopError:
                            continue  # reported with its location when the call is planned
                        try:
                            family.evidence(self, call)
                        except CoopError as exc:
                            raise located(exc, stmt.loc) from None
        weak: dict[int, list] = {}
        for _ in range(4):  # payload-to-payload assignments propagate in a few rounds
            for block in self.func_ir.blocks.values():
                for stmt in block.body:
                    if isinstance(stmt, (nb.ir.SetItem, nb.ir.StaticSetItem)):
                        target = self.resolver.var(stmt.target.name)
                        if not isinstance(target, PayloadVal):
                            continue
                        root = target.root()
                        if root.dtype is None and not root.evidence:
                            dtype, is_weak = self._value_dtype(stmt.value)
                            if dtype is not None:
                                (weak.setdefault(id(root), []) if is_weak else root.evidence).append(
                                    (dtype, f"assignment at line {stmt.loc.line}"))
            self._settle_dtypes()
        for payload in self.payloads:
            root = payload.root()
            if root.dtype is None and id(root) in weak:
                root.evidence = weak[id(root)]
                root.dtype = self._decide(root)
        self._settle_dtypes()
        for payload in self.payloads:
            if payload.dtype is None:
                raise located(CoopTypeError(
                    f"could not infer the dtype of ThreadData {payload.var}; pass dtype= or assign values of "
                    "known type (cast helper results, e.g. numpy.int32(x))"), payload.loc)

    def _settle_dtypes(self) -> None:
        for payload in self.payloads:
            root = payload.root()
            if root.dtype is None and root.evidence:
                root.dtype = self._decide(root)
            payload.dtype = root.dtype

    def _decide(self, payload: PayloadVal) -> str:
        first = payload.evidence[0]
        for other in payload.evidence[1:]:
            if other[0] != first[0]:
                raise located(CoopTypeError(
                    f"ThreadData {payload.var} has conflicting dtypes {first[0]} ({first[1]}) and {other[0]} ({other[1]})"
                ), payload.loc)
        return first[0]

    def add_evidence(self, payload: PayloadVal, dtype: str | None, call: Any, param: str) -> None:
        """Record that ``call`` types ``payload`` as ``dtype`` (an explicit dtype must agree)."""
        if dtype is None:
            return
        payload = payload.root()
        if payload.explicit:
            if payload.dtype != dtype:
                suffix = "; cast the value" if call.op == "store" else ""
                raise located(CoopTypeError(
                    f"{call.name} {param} dtype {dtype} does not match payload dtype {payload.dtype}{suffix}"),
                    call.stmt.loc)
            return
        payload.evidence.append((dtype, f"{call.name} at line {call.stmt.loc.line}"))

    def _value_dtype(self, var: Any) -> tuple[str | None, bool]:
        """(dtype, weak) of an assigned value, from what is visible before typing."""
        value = self.resolver.var(var.name)
        if isinstance(value, ArgRef):
            return nb.dtype_name(value.type), False
        if isinstance(value, Obj):
            if isinstance(value.value, bool):
                return None, False
            if isinstance(value.value, int):
                return "int32", True
            if isinstance(value.value, float):
                return "float32", True
            return None, False
        for definition in self.resolver.definitions(var.name):
            if not isinstance(definition, nb.ir.Expr):
                if isinstance(definition, nb.ir.Var):
                    return self._value_dtype(definition)
                continue
            if definition.op in ("getitem", "static_getitem"):
                base = self.resolver.var(definition.value.name)
                if isinstance(base, PayloadVal):
                    return base.dtype, False
                if isinstance(base, ArgRef) and isinstance(base.type, nb.types.Array):
                    return nb.dtype_name(base.type.dtype), False
            if definition.op == "call":
                callee = self.resolver.callee(self.resolver.stmt_of[id(definition)])
                if isinstance(callee, Obj) and not isinstance(callee.value, str):
                    dtype = dtype_of_object(callee.value) if callee.value not in (int, float) else None
                    if dtype is not None:
                        return dtype, False
            if definition.op in ("binop", "inplace_binop"):
                (a, wa), (b, wb) = self._value_dtype(definition.lhs), self._value_dtype(definition.rhs)
                if a is None or b is None:
                    return None, False
                if wa and not wb:
                    return b, False
                if wb and not wa:
                    return a, False
                return np.result_type(a, b).name, wa and wb
        return None, False
