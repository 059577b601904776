"""The planner's last step: the kernel IR rewritten so that payloads are arrays and calls are site callees.

A mixin of the planner's ``KernelPlan`` (like ``_shared_arrays``): ThreadData constructors become local arrays (records:
a record array over stack bytes), marker calls become calls of the planned sites, compile-time operands the sites
consumed are dropped before typing, and variables that may hold several payloads get one array at the entry.
"""
from __future__ import annotations

import enum
from typing import Any

import numpy as np

from .._semantics.aggregates import is_aggregate
from .._semantics.common import compile_time_int
from . import _compat as nb
from ._ir import THREAD_DATA, DescVal, GroupVal, MethodVal, Obj, PayloadTuple, PayloadVal
from ._plan_state import PlanState
from ._lowering import local_bytes_site, make_site


class KernelRewrite(PlanState):
    def _rewrite(self) -> None:
        ir = nb.ir
        typingctx = self.state.typingctx
        sites = {id(s.stmt): s for s in self.sites}
        # Compile-time operands a site consumed (operator callables, dtypes) must not reach typing.
        dropped: set[str] = set()
        for entry in self.sites:
            kept = {v.name for v in entry.operands}
            expr = entry.stmt.value
            for var in [*expr.args, *(v for _, v in expr.kws)]:
                if var.name in kept or not isinstance(self.resolver.var(var.name), Obj):
                    continue
                names, definitions = self.resolver.copies_of(var)  # a conditional expression copies it
                if all(isinstance(d, (ir.Global, ir.FreeVar)) or (isinstance(d, ir.Expr) and d.op == "getattr")
                       for d in definitions):
                    dropped.update(names)  # e.g. binary_op=module.op
        backing_stmts = {id(value.stmt): value for value in self.backing_arrays}
        payload_stmts: dict[int, list[PayloadVal]] = {}
        for payload in self.payloads:
            payload_stmts.setdefault(id(payload.stmt), []).append(payload)
        for block in self.func_ir.blocks.values():
            body = []
            for stmt in block.body:
                loc = stmt.loc
                if isinstance(stmt, ir.Assign):
                    value = stmt.value
                    if id(stmt) in sites:
                        entry = sites[id(stmt)]
                        callee = make_site(entry.site.symbol, entry.site, typingctx)
                        fn = ir.Var(block.scope, block.scope.redefine("$cuda_coop_site", loc).name, loc)
                        body.append(ir.Assign(ir.Global(entry.site.symbol, callee, loc), fn, loc))
                        operands = list(entry.operands)
                        body.extend(self.member_reads[v.name] for v in operands if v.name in self.member_reads)
                        made = self.constructor_stmts.get(id(stmt))
                        shaped = isinstance(made, PayloadTuple) and bool(made.scalars or made.inner)
                        if id(stmt) in payload_stmts or shaped:  # the result is fresh payloads the call fills
                            target = stmt.target
                            # ``items = op(group, items)``: the result must not replace its own input before
                            # the call reads it; fill a fresh variable and assign it afterwards.
                            result = target
                            if any(id(v) not in self.result_operands and v.name == target.name for v in operands):
                                result = ir.Var(block.scope, block.scope.redefine("$cuda_coop_result", loc).name, loc)
                                operands = [result if id(v) in self.result_operands else v for v in operands]
                            if shaped:  # payloads and scalars, in order (a tuple of its first ones, maybe)
                                assert isinstance(made, PayloadTuple)
                                body.extend(self._mixed_result(block, loc, result, made,
                                                               ir.Expr.call(fn, operands, (), loc)))
                            else:
                                body.extend(self._result_arrays(block, loc, result, payload_stmts[id(stmt)]))
                                unused = ir.Var(block.scope, block.scope.redefine("$cuda_coop_void", loc).name, loc)
                                body.append(ir.Assign(ir.Expr.call(fn, operands, (), loc), unused, loc))
                            if result is target:
                                continue
                            stmt = ir.Assign(result, target, loc)
                        else:
                            stmt.value = ir.Expr.call(fn, operands, (), loc)
                    elif id(stmt) in backing_stmts:  # numba_coop.shared.array: a view of its slice of the backing
                        body.extend(self._backing_array_statements(block, stmt, backing_stmts[id(stmt)], typingctx))
                        continue
                    elif id(stmt) in payload_stmts and payload_stmts[id(stmt)][0].form == THREAD_DATA:
                        # a ThreadData constructor becomes its local array (the user's own arrays stay)
                        body.extend(self._local_array(block, loc, stmt.target, payload_stmts[id(stmt)][0]))
                        continue
                    elif isinstance(value, (ir.Global, ir.FreeVar)) and (
                            self.is_coop_object(value.value) or stmt.target.name in dropped):
                        stmt.value = ir.Const(0, loc)
                    elif isinstance(value, (ir.Global, ir.FreeVar)) and _index_object(value.value):
                        # an object with __index__ (SPEC 6.1) is a compile-time integer numba-cuda-mlir cannot type
                        stmt.value = ir.Const(compile_time_int(value.value), loc)
                    elif isinstance(value, ir.Arg) and isinstance(self.state.args[value.index], nb.types.Literal):
                        # A specialised integer argument is a constant: loops over it unroll, payloads stay
                        # in registers (the argument is still passed, and not read).
                        stmt.value = ir.Const(self.state.args[value.index].literal_value, loc)
                    elif isinstance(value, ir.Expr) and value.op in ("getattr", "call"):
                        callee = self.resolver.memo.get(value.func.name) if value.op == "call" else None
                        if value.op == "call" and _is_shared_array(self.resolver.callee(stmt)):
                            body.extend(self._constant_shape_statements(block, stmt))
                        callee_is_coop = isinstance(callee, MethodVal) or (
                            isinstance(callee, Obj) and self.is_coop_object(callee.value))
                        is_len = isinstance(callee, Obj) and callee.value is len
                        # items.items_per_thread and len(items) anywhere (not only where planning
                        # looked) are compile-time integers: range bounds, extents of new payloads.
                        resolved = (self.resolver.var(stmt.target.name) if value.op == "getattr" or is_len
                                    else self.resolver.memo.get(stmt.target.name))
                        if is_len and isinstance(resolved, Obj):
                            stmt.value = ir.Const(resolved.value, loc)
                        elif value.op == "getattr":
                            base = self.resolver.memo.get(value.value.name)
                            if stmt.target.name in dropped:
                                stmt.value = ir.Const(0, loc)
                            elif isinstance(resolved, Obj) and isinstance(base, (PayloadVal, DescVal)):
                                stmt.value = ir.Const(resolved.value, loc)
                            elif isinstance(resolved, Obj) and resolved.value is nb.nb_cuda.local:
                                # numba_coop.local is numba-cuda-mlir's own: typed from the object, not from
                                # the cuda.coop module the kernel reached it through
                                stmt.value = ir.Global(value.attr, resolved.value, loc)
                            elif (isinstance(resolved, MethodVal)
                                  or (isinstance(base, Obj) and self.is_coop_object(base.value))):
                                stmt.value = ir.Const(0, loc)
                        elif isinstance(resolved, (GroupVal, DescVal)) or callee_is_coop:
                            stmt.value = ir.Const(0, loc)
                body.append(stmt)
            block.body = body
        self._hoist_merged_payloads()

    def _hoist_merged_payloads(self) -> None:
        """A variable that may hold several payloads of one shape (P15: branches, loop-carried results) gets one
        local array, allocated at the kernel's entry; each definition fills it (results are written into it or
        copied), so the variable never switches arrays and its items stay in registers."""
        ir = nb.ir
        shapes: dict[str, PayloadVal] = {}
        for first, _, name in self.resolver.merges:
            if name not in shapes and all(self._fills_fresh_payload(d) for d in self.resolver.definitions(name)):
                shapes[name] = first
        if not shapes:
            return
        entry = self.func_ir.blocks[min(self.func_ir.blocks)]
        allocations = []
        for name, payload in shapes.items():
            allocations += self._local_array(entry, entry.loc, ir.Var(entry.scope, name, entry.loc), payload)
        for block in self.func_ir.blocks.values():
            body = []
            for stmt in block.body:
                if not (isinstance(stmt, ir.Assign) and stmt.target.name in shapes):
                    body.append(stmt)
                    continue
                value, target, loc = stmt.value, stmt.target, stmt.loc
                if isinstance(value, ir.Expr) and value.op == "call" and value.func.name.startswith("$cuda_coop_array"):
                    continue  # the entry allocation replaces it; a result is written straight into it
                source = value
                if not isinstance(value, ir.Var):
                    source = ir.Var(block.scope, block.scope.redefine("$cuda_coop_merged", loc).name, loc)
                    body.append(ir.Assign(value, source, loc))
                for i in range(shapes[target.name].items_per_thread):  # copy slot by slot (LLVM folds it)
                    index = ir.Var(block.scope, block.scope.redefine("$cuda_coop_slot", loc).name, loc)
                    item = ir.Var(block.scope, block.scope.redefine("$cuda_coop_item", loc).name, loc)
                    body += [ir.Assign(ir.Const(i, loc), index, loc),
                             ir.Assign(ir.Expr.getitem(source, index, loc), item, loc),
                             ir.SetItem(target, index, item, loc)]
            block.body = body
        entry.body = allocations + entry.body

    def _fills_fresh_payload(self, definition: Any) -> bool:
        """A definition whose payload no other variable refers to afterwards (so filling a copy is the same):
        a constructor or operation call, a compiler temporary, or an item of a returned tuple."""
        ir = nb.ir
        if isinstance(definition, ir.Var):
            return bool(definition.name.startswith("$"))
        return isinstance(definition, ir.Expr) and definition.op in ("call", "static_getitem", "getitem")

    def _result_arrays(self, block: Any, loc: Any, target: Any, payloads: list[PayloadVal]) -> list[Any]:
        """Statements creating an operation's result arrays: ``target`` is the array, or the tuple of them."""
        if len(payloads) == 1 and payloads[0].array is None:
            return self._local_array(block, loc, target, payloads[0])
        out = []
        for payload in payloads:
            out += self._local_array(block, loc, payload.array, payload)
        out.append(nb.ir.Assign(nb.ir.Expr.build_tuple([p.array for p in payloads], loc), target, loc))
        return out

    def _mixed_result(self, block: Any, loc: Any, target: Any, made: PayloadTuple, call: Any) -> list[Any]:
        """Statements of a call returning a tuple of payloads and scalars: the payloads' arrays, the call (which
        fills them and returns its scalar results as a tuple), then ``target``: the tuple in the call's order."""
        ir = nb.ir
        out: list[Any] = []
        for item in made.items:
            out += self._local_array(block, loc, item.array, item)
        scalars = ir.Var(block.scope, block.scope.redefine("$cuda_coop_scalars", loc).name, loc)
        out.append(ir.Assign(call, scalars, loc))
        members = []
        payloads = iter(made.items)
        for place in range(made.flat_size):
            if place not in made.scalars:
                members.append(next(payloads).array)
                continue
            scalar = ir.Var(block.scope, block.scope.redefine("$cuda_coop_scalar", loc).name, loc)
            out.append(ir.Assign(ir.Expr.static_getitem(scalars, made.scalars.index(place), None, loc), scalar, loc))
            members.append(scalar)
        if made.inner:  # the first results as a tuple of their own: the returned tuple's first member
            first = ir.Var(block.scope, block.scope.redefine("$cuda_coop_inner", loc).name, loc)
            out.append(ir.Assign(ir.Expr.build_tuple(members[:made.inner], loc), first, loc))
            members = [first, *members[made.inner:]]
        out.append(ir.Assign(ir.Expr.build_tuple(members, loc), target, loc))
        return out

    def _local_array(self, block: Any, loc: Any, target: Any, payload: PayloadVal) -> list[Any]:
        """``target = cuda.local.array(K, dtype)`` as IR statements; the last one is the assignment."""
        ir = nb.ir
        scope = block.scope

        def fresh(prefix: str) -> Any:
            return ir.Var(scope, scope.redefine(prefix, loc).name, loc)

        # numba-cuda-mlir has no local arrays of records: a record array over stack bytes of the kernel's entry;
        # nor arrays of struct-model types: a pointer to the slots (docs: qualified, "User-defined aggregates")
        if is_aggregate(payload.dtype):
            site = local_bytes_site(payload.dtype, payload.items_per_thread, self.state.typingctx)
            site_var = fresh("$cuda_coop_bytes")
            if nb.held_by_value(payload.dtype):
                return [ir.Assign(ir.Global("cuda_coop_local_bytes", site, loc), site_var, loc),
                        ir.Assign(ir.Expr.call(site_var, [], (), loc), target, loc)]
            pointer, array_fn, size_var = fresh("$cuda_coop_pointer"), fresh("$cuda_coop_array"), fresh("$cuda_coop_k")
            return [
                ir.Assign(ir.Global("cuda_coop_local_bytes", site, loc), site_var, loc),
                ir.Assign(ir.Expr.call(site_var, [], (), loc), pointer, loc),
                ir.Assign(ir.Global("carray", nb.nb_cuda.carray, loc), array_fn, loc),
                ir.Assign(ir.Const(payload.items_per_thread, loc), size_var, loc),
                ir.Assign(ir.Expr.call(array_fn, [pointer, size_var], (), loc), target, loc),
            ]
        cuda_var, local_var, array_fn = fresh("$cuda_coop_cuda"), fresh("$cuda_coop_local"), fresh("$cuda_coop_array")
        size_var, dtype_var = fresh("$cuda_coop_k"), fresh("$cuda_coop_dtype")
        return [
            ir.Assign(ir.Global("cuda", nb.nb_cuda, loc), cuda_var, loc),
            ir.Assign(ir.Expr.getattr(cuda_var, "local", loc), local_var, loc),
            ir.Assign(ir.Expr.getattr(local_var, "array", loc), array_fn, loc),
            ir.Assign(ir.Const(payload.items_per_thread, loc), size_var, loc),
            ir.Assign(ir.Global(payload.dtype, nb.numba_dtype(payload.dtype), loc), dtype_var, loc),
            ir.Assign(ir.Expr.call(array_fn, [size_var, dtype_var], (), loc), target, loc),
        ]


def _is_shared_array(callee: Any) -> bool:
    return isinstance(callee, Obj) and callee.value is nb.nb_cuda.shared.array


def _index_object(value: object) -> bool:
    """Whether ``value`` is an object of the user's that says an integer through ``__index__`` and that
    numba-cuda-mlir cannot type (a number, enum member, array or any object it types keeps its own meaning)."""
    if isinstance(value, (int, np.generic, np.ndarray, type, enum.Enum)) or callable(value) or \
            hasattr(value, "__cuda_array_interface__") or hasattr(value, "__array_interface__"):
        return False
    if compile_time_int(value) is None:
        return False
    try:
        nb.typeof(value)
    except Exception:  # numba's own words for an object it cannot type: the integer it says stands for it
        return True
    return False
