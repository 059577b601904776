"""Shared arrays in kernels (docs: qualified, "Payload forms"): rows of 2-D shared arrays as per-thread payloads, and
``numba_coop.shared.array`` placed inside the cooperative backing.

A mixin of the planner's ``KernelPlan``. A ``numba_coop.shared.array`` call becomes, in the rewritten kernel,
``carray(<pointer to its slice of the backing>, shape)``: an ordinary array of the program, in a slice that the
layout reserves for the whole kernel (an exclusive pseudo-descriptor), so it coexists with dynamic backing.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .._errors import CoopTypeError, located
from .._semantics.aggregates import is_aggregate
from .._semantics.common import ScratchNeed, itemsize, require_alignment
from .._semantics.temp_storage import Descriptor, ScratchUse
from . import _compat as nb
from ._inference import no_array_of
from ._ir import UNKNOWN, SharedArrayVal, dtype_of_object
from ._plan_state import PlanState
from .._calls.site import SiteCall
from ._lowering import make_pointer_site
from ._memory import array as coop_shared_array

NAME = "cuda.coop.numba_mlir.shared.array"


class SharedArrays(PlanState):
    def _shared_array(self, stmt: Any, in_backing: bool) -> Any:
        """The SharedArrayVal of a static shared-array construction; UNKNOWN for a dynamic ``cuda.shared.array``
        (and errors for a malformed ``numba_coop.shared.array``, which must be static)."""
        expr = stmt.value
        args, kws = list(expr.args), dict(expr.kws)
        shape = self._shape_of(args[0] if args else kws.get("shape"), stmt)
        dtype_obj = self._static(args[1] if len(args) > 1 else kws.get("dtype"), stmt, "", must=False)
        dtype = dtype_of_object(dtype_obj) if isinstance(dtype_obj, type) or hasattr(dtype_obj, "name") else None
        alignment = 8
        if in_backing:
            alignment = self._static(kws.get("alignment", 8), stmt, f"{NAME} alignment")
            if shape is None:
                raise CoopTypeError(f"{NAME} shape must be a compile-time positive integer or tuple of them")
            if dtype is None:
                raise CoopTypeError(f"{NAME} dtype must be a NumPy or Numba scalar type; got {dtype_obj!r}")
            require_alignment(NAME, alignment)
        if shape is None or dtype is None:
            return UNKNOWN
        if is_aggregate(dtype):  # numba-cuda-mlir 0.6 cannot index shared arrays of records
            raise located(no_array_of(dtype, "a shared array"), stmt.loc)
        value = SharedArrayVal(stmt, shape, dtype, alignment, in_backing)
        if in_backing:
            self.backing_arrays.append(value)
        return value

    def _shape_of(self, var: Any, stmt: Any) -> tuple[int, ...] | None:
        """A compile-time shape: an int, a constant tuple or a tuple written in the kernel; None otherwise."""
        if var is None:
            return None
        items = None
        if isinstance(var, nb.ir.Var):
            for definition in self.resolver.definitions(var.name):
                if isinstance(definition, nb.ir.Expr) and definition.op == "build_tuple":
                    items = [self._static(item, stmt, "", must=False) for item in definition.items]
        if items is None:
            value = self._static(var, stmt, "", must=False)
            items = list(value) if isinstance(value, tuple) else [value]
        if not items or any(isinstance(i, bool) or not isinstance(i, (int, np.integer)) or i <= 0 for i in items):
            return None
        return tuple(int(i) for i in items)

    def _backing_array_uses(self) -> list[tuple[SharedArrayVal, ScratchUse, Descriptor]]:
        """One exclusive slice per ``numba_coop.shared.array``, placed like an explicit descriptor."""
        out = []
        for i, value in enumerate(self.backing_arrays):
            size = int(np.prod(value.shape)) * itemsize(value.dtype)
            desc = Descriptor(len(self.descriptors) + i, size, value.alignment, False, "exclusive")
            use = ScratchUse(-1 - i, ScratchNeed(size, value.alignment), desc, label=f"{NAME} at line "
                             f"{value.stmt.loc.line}")
            out.append((value, use, desc))
        return out

    def _backing_array_statements(self, block: Any, stmt: Any, value: SharedArrayVal, typingctx: Any) -> list[Any]:
        """``arr = carray(<pointer into the backing>, shape)`` in place of the marker call."""
        ir, loc = nb.ir, stmt.loc
        site = value.site
        assert site is not None  # placed by the build (KernelPlan._build) before the rewrite
        callee = make_pointer_site(site.symbol, site, typingctx)
        fn = ir.Var(block.scope, block.scope.redefine("$cuda_coop_shared", loc).name, loc)
        pointer = ir.Var(block.scope, block.scope.redefine("$cuda_coop_pointer", loc).name, loc)
        carray = ir.Var(block.scope, block.scope.redefine("$cuda_coop_carray", loc).name, loc)
        shape = ir.Var(block.scope, block.scope.redefine("$cuda_coop_shape", loc).name, loc)
        return [ir.Assign(ir.Global(site.symbol, callee, loc), fn, loc),
                ir.Assign(ir.Expr.call(fn, [], (), loc), pointer, loc),
                ir.Assign(ir.Global("carray", nb.nb_cuda.carray, loc), carray, loc),
                ir.Assign(ir.Const(value.shape, loc), shape, loc),
                ir.Assign(ir.Expr.call(carray, [pointer, shape], (), loc), stmt.target, loc)]


def is_backing_array_marker(value: Any) -> bool:
    return value is coop_shared_array


def new_pointer_site(value: SharedArrayVal) -> SiteCall:
    site = SiteCall(f"cuda_coop_shared_{id(value):x}", [], value.dtype)
    site.loc = value.stmt.loc
    return site
