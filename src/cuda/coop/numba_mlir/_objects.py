"""What a kernel's cuda.coop objects are made of, as the planner reads them from numba IR: the arguments of a
constructor call bound to its Python signature, compile-time values, ThreadData (and one-dimensional local arrays as
payloads) and TempStorage descriptors. ``KernelPlan`` mixes this in; ``_planner`` decides which constructor a call
is."""
from __future__ import annotations

import inspect
from typing import Any

import numpy as np

from .._calls.binding import binding_error, value_words
from .._errors import CoopTypeError, CoopValueError, located
from .._semantics.aggregates import is_aggregate
from .._semantics.common import Runtime, require_alignment
from .._semantics.temp_storage import make_descriptor
from . import _compat as nb, _patches
from ._about import BACKEND, LACKS, NAMESPACE
from ._inference import no_array_of
from ._ir import UNKNOWN, ArgRef, DescVal, LOCAL_ARRAY, Obj, PayloadVal, dtype_of_object
from ._plan_state import PlanState


class KernelObjects(PlanState):
    def _bind(self, stmt: Any, signature_of: Any, name: str, skip_self: bool = False) -> dict[str, Any]:
        expr = stmt.value
        args = list(expr.args)
        if skip_self:
            args = [None] + args
        kws = dict(expr.kws)
        if expr.vararg is not None or getattr(expr, "varkwarg", None) is not None:
            raise CoopTypeError(f"{name} does not accept *args or **kwargs")
        sig = inspect.signature(signature_of)

        def shown(option: str) -> str:
            value = self.resolver.var(kws[option].name)
            return value_words(value.value) if isinstance(value, Obj) else ""  # a function by its name

        try:
            bound = sig.bind(*args, **kws)
        except TypeError as exc:
            raise binding_error(name, sig, exc, len(expr.args), list(kws), namespace=NAMESPACE, backend=BACKEND,
                                lacks=LACKS, shown=shown,
                                skipped=skip_self) from None
        out = dict(bound.arguments)
        if skip_self:
            out.pop(next(iter(sig.parameters)))
        return out

    def _static(self, var: Any, stmt: Any, what: str, must: bool = True) -> Any:
        """The compile-time value of ``var`` (a Python default passes through)."""
        if not isinstance(var, nb.ir.Var):
            return var
        value = self.resolver.var(var.name)
        if isinstance(value, Obj):
            return value.value
        if isinstance(value, ArgRef) and isinstance(value.type, nb.types.Integer):
            # Specialise the kernel on this integer argument (its launches then literalise it: memoised)
            # (docs: concepts, "Compile-time values and specialisation").
            _patches.install(_patches.AT_FIRST_LITERAL)
            raise nb.ForceLiteralArg({value.index}, loc=stmt.loc)
        if must:
            raise CoopTypeError(f"{what} must be a compile-time value")
        return Runtime(nb.dtype_name(value.type) if isinstance(value, ArgRef) else None)

    def _thread_data(self, stmt: Any, marker: Any) -> PayloadVal:
        bound = self._bind(stmt, marker.__new__, "cuda.coop.ThreadData", skip_self=True)
        k = self._static(bound.get("items_per_thread"), stmt, "", must=False)
        if not isinstance(k, (int, np.integer)) or isinstance(k, bool):
            self.reject_literal_unroll_of(bound.get("items_per_thread"), "cuda.coop.ThreadData items_per_thread")
            raise CoopTypeError("ThreadData items_per_thread must be a compile-time integer")
        if k <= 0:
            raise CoopValueError("ThreadData items_per_thread must be positive")
        dtype_obj = self._static(bound.get("dtype"), stmt, "ThreadData dtype")
        dtype = None
        if dtype_obj is not None:
            dtype = None if isinstance(dtype_obj, str) else dtype_of_object(dtype_obj)
            if dtype is None:
                raise CoopTypeError(f"ThreadData dtype must be a NumPy or Numba scalar type; got {dtype_obj!r}")
        alignment = self._static(bound.get("alignment"), stmt, "ThreadData alignment")
        if alignment is not None and (isinstance(alignment, bool) or not isinstance(alignment, int)):
            raise CoopTypeError(f"ThreadData alignment must be a compile-time integer; got {alignment!r}")
        if alignment is not None:
            require_alignment("ThreadData", alignment)
        payload = PayloadVal(stmt, stmt.target.name, int(k), dtype, dtype is not None, stmt.loc)
        self.payloads.append(payload)
        return payload

    def _local_array_payload(self, stmt: Any) -> Any:
        """A 1-D ``cuda.local.array(K, dtype)`` (``numba_coop.local.array`` is the same function): a payload the
        qualified calls take as an operand or output (docs: qualified, "Payload forms"). Anything else stays an ordinary
        array."""
        expr = stmt.value
        args, kws = list(expr.args), dict(expr.kws)
        shape_var = args[0] if args else kws.get("shape")
        dtype_var = args[1] if len(args) > 1 else kws.get("dtype")
        alignment = self._static(args[2] if len(args) > 2 else kws.get("alignment"), stmt, "", must=False)
        if alignment is not None and not isinstance(alignment, Runtime):
            require_alignment("local.array", alignment)  # here: numba-cuda-mlir's own check has no call line
        shape = self._shape_of(shape_var, stmt)
        if shape is None or len(shape) != 1:  # 2-D local arrays stay ordinary arrays
            return UNKNOWN
        dtype_obj = self._static(dtype_var, stmt, "", must=False)
        dtype = None if dtype_obj is None or isinstance(dtype_obj, (str, Runtime)) else dtype_of_object(dtype_obj)
        if dtype is None:
            return UNKNOWN
        if is_aggregate(dtype):  # numba-cuda-mlir 0.6 cannot lower a local array of records
            raise located(no_array_of(dtype, "a local array"), stmt.loc)
        payload = PayloadVal(stmt, stmt.target.name, shape[0], dtype, True, stmt.loc, form=LOCAL_ARRAY)
        self.payloads.append(payload)
        return payload

    def _temp_storage(self, stmt: Any, marker: Any) -> DescVal:
        bound = self._bind(stmt, marker.__new__, "cuda.coop.TempStorage", skip_self=True)
        values = {k: self._static(bound.get(k, d), stmt, f"TempStorage {k}")
                  for k, d in (("size_in_bytes", None), ("alignment", None), ("auto_sync", False),
                               ("sharing", "shared"))}
        desc = make_descriptor(len(self.descriptors), **values)
        result = DescVal(desc, stmt, stmt.loc)
        self.descriptors.append(result)
        return result
