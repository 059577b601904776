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
            alignment = require_alignment(NAME, alignment)
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

    def _constant_shape_statements(self, block: Any, stmt: Any) -> list[Any]:
        """A ``cuda.shared.array`` whose shape is a compile-time value computed in the kernel (``32 * N``) gets that
        value as a constant: numba-cuda-mlir allocates an array statically only where each extent is a constant in
        its IR, and carves any other out of dynamic shared memory, which a launch without ``sharedmem`` lacks (the
        first access then faults). The statements to insert before ``stmt``, whose shape operand they replace."""
        ir, loc, expr = nb.ir, stmt.loc, stmt.value
        kws = dict(expr.kws)
        var = expr.args[0] if expr.args else kws.get("shape")
        if not isinstance(var, ir.Var) or self._written_as_constant(var):
            return []
        shape = self._shape_of(var, stmt)
        if shape is None:
            return []  # a run-time extent: numba-cuda-mlir's dynamic shared array, as the user wrote it
        constant = ir.Var(block.scope, block.scope.redefine("$cuda_coop_shape", loc).name, loc)
        if expr.args:
            expr.args = [constant, *expr.args[1:]]
        else:
            expr.kws = [(k, constant if k == "shape" else v) for k, v in expr.kws]
        return [ir.Assign(ir.Const(shape, loc), constant, loc)]  # (a 1-tuple shape is a 1-D array's)

    def _written_as_constant(self, var: Any) -> bool:
        """Whether numba-cuda-mlir sees ``var`` (a shape) as constant extents: a literal or a global, or a tuple of
        them."""
        ir = nb.ir

        def constant(name: str) -> bool:
            found = self.resolver.definitions(name)
            return len(found) == 1 and isinstance(found[0], (ir.Const, ir.Global, ir.FreeVar))

        found = self.resolver.definitions(var.name)
        if len(found) == 1 and isinstance(found[0], ir.Expr) and found[0].op == "build_tuple":
            return all(constant(item.name) for item in found[0].items)
        return constant(var.name)

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
