"""Checks of a kernel's cuda.coop values that speak Python: early operand checks (in the documented check order;
docs: errors, "Reading a message"), static payload indices, escapes and unpacking, each naming the user's construct and
line.

A mixin of the planner's ``KernelPlan`` (reads ``self.resolver``, ``self.func_ir``, ``self.payloads``).
"""
from __future__ import annotations

import inspect
import os
import re
from typing import Any

from .._errors import CoopError, CoopIndexError, CoopTypeError, CoopUnsupportedError, CoopValueError, at, located
from .._calls.site import not_a_vector
from .._version import __version__
from .._markers.base import op_name
from .._markers.records import extension
from .._semantics.common import check_payload_bytes, check_payload_dtype, check_payload_extent
from .._calls import front
from .._semantics.tuples import takes_tuples, tuple_operand
from . import _compat as nb
from ._lowering import operand_type
from ._ir import SHARED_ROW, THREAD_DATA, ArgRef, DescVal, GroupVal, MethodVal, Obj, PayloadTuple, PayloadVal
from ._plan_state import OpCall, PlanState

_KINDS = {GroupVal: "ThreadGroup", PayloadVal: "ThreadData", PayloadTuple: "ThreadData", DescVal: "TempStorage"}


def _where(loc: Any) -> str:
    return f"{os.path.basename(str(getattr(loc, 'filename', '?')))}:{getattr(loc, 'line', '?')}"


_INLINED = re.compile(r"^\w+?_v\d+_(.*)$")  # numba's name for a variable of an inlined helper: <helper>_v<n>_<name>


def user_name(name: str) -> str:
    """The Python variable behind an IR name (``items.2`` -> ``items``, a helper's ``h_v3_items`` -> ``items``);
    a compiler temporary is ``value``."""
    inlined = _INLINED.match(name)
    if inlined:
        name = inlined.group(1)
        if name.startswith("_v"):  # a temporary of the helper ($ became _v)
            return "value"
    return "value" if name.startswith("$") else name.split(".")[0]


class KernelChecks(PlanState):
    # ------------------------------------------------------------ before inference
    def _check_operands(self, calls: list[tuple[Any, Any, Any, Any]]) -> None:
        """Per operation, in the documented order (docs: errors, "Reading a message"): signature (C5), group (G1), array
        operands (P11, P2), explicit payload dtypes (P1, P2); then payload sizes (P17) and static indices (P16). Runs
        before dtype inference, so a mistake is never reported as an inference failure."""
        for stmt, block, callee, _ in calls:
            if isinstance(callee, Obj) and self._uses_coop(callee.value):
                raise located(self._not_inlined(callee.value), stmt.loc)
            if not (isinstance(callee, Obj) and op_name(callee.value) in self.operations):
                continue
            try:
                call = self.op_call(stmt, block, callee.value)
                self.op_calls.append(call)
                if "group" in call.args:
                    front.check_group(call.op, call.name, self.group(call).spec, self.launch, self.cc)
                arrays: dict[int, str] = {}  # the user's arrays passed as payloads: id -> parameter
                for param, var in call.args.items():
                    if param == "group" or not isinstance(var, nb.ir.Var):
                        continue
                    value = self.resolver.var(var.name)
                    if isinstance(value, PayloadTuple):
                        raise self._tuple_operand_error(value, param, call.name)
                    self._reject_container(call, param, var)
                    if isinstance(value, PayloadVal) and value.form != THREAD_DATA:
                        self._check_array_payload(call, param, value, arrays)
                    if isinstance(value, PayloadVal) and value.explicit:
                        check_payload_dtype(call.name, param, value.dtype, call.qualified)
                    if isinstance(value, ArgRef) and isinstance(value.type, nb.types.Array):
                        self._check_array(call, param, value.type)
            except CoopError as exc:
                raise located(exc, stmt.loc) from None
        for payload in self.payloads:
            if payload.explicit and payload.same_as is None and payload.form == THREAD_DATA:
                try:
                    check_payload_dtype("cuda.coop.ThreadData", "dtype", payload.dtype, True)
                except CoopError as exc:
                    raise located(exc, payload.loc) from None
            if payload.explicit or payload.form != THREAD_DATA:
                self.check_payload_size(payload)
        self._check_static_indices()
        self._check_unpacking()

    _CONTAINERS = {"build_list": "list", "build_tuple": "tuple", "build_set": "set", "build_map": "dict"}

    def _reject_container(self, call: OpCall, param: str, var: Any) -> None:
        """A Python container built in the kernel where an operand goes (``coop.sum(block, [a, b])``): it is not a
        payload, and would otherwise be reported as a dtype that cannot be inferred."""
        parameter = inspect.signature(call.marker).parameters.get(param)
        if parameter is None or parameter.kind != parameter.POSITIONAL_ONLY:
            return  # an option: its own check names what it takes
        for definition in self.resolver.definitions(var.name):
            kind = self._CONTAINERS.get(getattr(definition, "op", "")) if isinstance(definition, nb.ir.Expr) \
                else None
            if kind is None or (kind == "tuple" and param == tuple_operand(call.op)):
                continue  # a tuple of operands is checked by the call layer (_calls.tuples)
            form = " or a local array (numba_coop.local.array(n, dtype))" if call.qualified else ""
            raise CoopTypeError(f"{call.name} {param} must be a ThreadData payload{form}; got a Python {kind}, "
                                "which is not a payload: make one with coop.ThreadData(n, dtype) and fill it with "
                                "items[i] = ...")

    def check_payload_size(self, payload: PayloadVal) -> None:
        """P17 (items per thread, then bytes per thread) at the payload's construction (an inferred dtype: once it
        is known)."""
        if payload.result or payload.form == SHARED_ROW:
            return  # an operation checks the results it sizes; a shared row is not per-thread storage
        try:
            check_payload_extent(user_name(payload.var), payload.items_per_thread, payload.dtype, payload.form)
            check_payload_bytes(user_name(payload.var), payload.items_per_thread, payload.dtype)
        except CoopError as exc:
            raise located(exc, payload.loc) from None

    def require_payload(self, call: OpCall, param: str) -> PayloadVal:
        """The ThreadData behind ``param``; otherwise P4 (a qualified-only form in a common call), the qualified
        form not built yet (R9 shape), or P5 (a scalar where a payload is required)."""
        payload = self.payload(call.args[param])
        if payload is not None:
            return payload
        self.reject_multidimensional_local_array(call, param)
        form = self.operand_form(call.args[param])
        # a qualified scalar form (docs: qualified, "Payload forms")
        if form is None and extension(call.op).scalar_form:
            form = "scalar"
        if form is not None:
            if call.qualified:
                raise CoopUnsupportedError(f"{call.name} {form} {param} operands are not implemented by the "
                                           f"numba-cuda-mlir backend in cuda-coop {__version__}")
            raise CoopTypeError(f"{call.name} requires a fixed-size ThreadData {param} payload in the common API; "
                                f"use cuda.coop.numba_mlir for {form} payloads")
        raise CoopTypeError(f"{call.name} {param} must be a ThreadData payload; got a scalar")

    def reject_multidimensional_local_array(self, call: OpCall, param: str) -> None:
        """P4's shape: a local array is a payload only with one dimension (docs: qualified, "Payload forms")."""
        var = call.args.get(param)
        for definition in self.resolver.definitions(var.name) if isinstance(var, nb.ir.Var) else ():
            if isinstance(definition, nb.ir.Expr) and definition.op == "call":
                stmt = self.resolver.stmt_of[id(definition)]
                callee = self.resolver.callee(stmt)
                if isinstance(callee, Obj) and callee.value is nb.nb_cuda.local.array:
                    shape_var = definition.args[0] if definition.args else dict(definition.kws).get("shape")
                    shape = self._shape_of(shape_var, stmt)
                    if shape is not None and len(shape) != 1:
                        raise CoopTypeError(
                            f"{call.name} {param} must be a one-dimensional local array (numba_coop.local.array(n, "
                            f"dtype)) or a ThreadData payload; got a local array of shape {shape}")

    def operand_form(self, var: Any) -> str | None:
        """``local array`` / ``shared array row`` / ``array`` when a variable is one, else None."""
        value = self.resolver.var(var.name)
        if isinstance(value, ArgRef) and isinstance(value.type, nb.types.Array):
            return "array"
        for definition in self.resolver.definitions(var.name):
            if isinstance(definition, nb.ir.Expr) and definition.op == "call":
                callee = self.resolver.callee(self.resolver.stmt_of[id(definition)])
                if isinstance(callee, Obj) and callee.value in (nb.nb_cuda.local.array, nb.nb_cuda.shared.array):
                    return "local array" if callee.value is nb.nb_cuda.local.array else "shared array"
            if isinstance(definition, nb.ir.Expr) and definition.op in ("getitem", "static_getitem"):
                base = self.operand_form(definition.value)
                if base == "shared array":
                    return "shared array row"
        return None

    def reject_literal_unroll(self, call: OpCall, param: str) -> None:
        """H3: a compile-time parameter fed by a ``literal_unroll`` loop variable."""
        self.reject_literal_unroll_of(call.args.get(param), f"{call.name} {param}")

    def reject_literal_unroll_of(self, value: Any, what: str) -> None:
        """H3 for the IR variable ``value`` of ``what`` (``cuda.coop.ThreadData items_per_thread``)."""
        seen: set[str] = set()
        pending = [value] if isinstance(value, nb.ir.Var) else []
        while pending:
            var = pending.pop()
            if var.name in seen:
                continue
            seen.add(var.name)
            for definition in self.resolver.definitions(var.name):
                if isinstance(definition, nb.ir.Var):
                    pending.append(definition)
                elif isinstance(definition, nb.ir.Expr) and definition.op == "call":
                    callee = self.resolver.callee(self.resolver.stmt_of[id(definition)])
                    if isinstance(callee, Obj) and getattr(callee.value, "__name__", "") == "literal_unroll":
                        raise CoopTypeError(f"{what} depends on a literal_unroll value; write separate explicit "
                                            "calls")
                elif isinstance(definition, nb.ir.Expr) and definition.op in (
                        "getiter", "iternext", "pair_first", "typed_getitem", "getitem", "static_getitem"):
                    pending.append(definition.value)

    def _check_array_payload(self, call: OpCall, param: str, payload: PayloadVal, seen: dict[int, str]) -> None:
        """The user's own arrays are payloads of qualified calls only (P4), never two operands at once
        (docs: qualified, "Payload forms")."""
        if not call.qualified:
            raise CoopTypeError(f"{call.name} requires a fixed-size ThreadData {param} payload in the common API; "
                                f"use cuda.coop.numba_mlir for {payload.form} payloads")
        if id(payload) in seen:
            raise CoopValueError(f"{call.name} {seen[id(payload)]} and {param} are the same array; array payloads "
                                 "must not alias another operand of the call")
        seen[id(payload)] = param

    def _check_array(self, call: OpCall, param: str, ty: Any) -> None:
        if ty.ndim != 1 or ty.layout != "C":
            raise not_a_vector(call.name, param, operand_type(ty))
        check_payload_dtype(call.name, param, nb.dtype_name(ty.dtype) or str(ty.dtype), call.qualified)

    def _tuple_operand_error(self, value: PayloadTuple, param: str, name: str) -> CoopError:
        names = ", ".join((value.within or value).shown_names)
        return CoopTypeError(f"{name} {param} is the tuple that {value.op} returns ({names}); unpack it first: "
                             f"`{names} = {value.op.rsplit('.', 1)[-1]}(...)`")

    def _check_static_indices(self) -> None:
        """P16: ``items[i]`` with a constant ``i`` outside ``-K <= i < K``."""
        ir = nb.ir
        for block in self.func_ir.blocks.values():
            for stmt in block.body:
                if isinstance(stmt, ir.StaticSetItem):
                    base, index = stmt.target, stmt.index
                elif isinstance(stmt, ir.SetItem):
                    base, index = stmt.target, self.resolver.var(stmt.index.name)
                    index = index.value if isinstance(index, Obj) else None
                elif isinstance(stmt, ir.Assign) and isinstance(stmt.value, ir.Expr) and \
                        stmt.value.op in ("static_getitem", "getitem"):
                    base = stmt.value.value
                    index = stmt.value.index if stmt.value.op == "static_getitem" else \
                        self.resolver.var(stmt.value.index.name)
                    index = index.value if isinstance(index, Obj) else index
                else:
                    continue
                payload = self.resolver.var(base.name)
                if not isinstance(payload, PayloadVal) or isinstance(index, bool) or not isinstance(index, int):
                    continue
                k = payload.items_per_thread
                if not -k <= index < k:
                    raise located(CoopIndexError(
                        f"ThreadData {user_name(base.name)} index {index} is out of range for items_per_thread {k}"),
                        stmt.loc)

    def _check_unpacking(self) -> None:
        """``a, b, c = coop.radix_sort_pairs(...)``: name the operation and what it returns."""
        for block in self.func_ir.blocks.values():
            for stmt in block.body:
                if isinstance(stmt, nb.ir.Assign) and isinstance(stmt.value, nb.ir.Expr) and \
                        stmt.value.op == "exhaust_iter":
                    value = self.resolver.var(stmt.value.value.name)
                    if isinstance(value, PayloadTuple) and stmt.value.count != value.size:
                        names = ", ".join(value.shown_names)
                        raise located(CoopTypeError(
                            f"{value.op} returns ({names}); unpack it into {value.size} names, not "
                            f"{stmt.value.count}: `{names} = {value.op.rsplit('.', 1)[-1]}(...)`"), stmt.loc)

    def _check_missing_names(self) -> None:
        """``coop.exclusive_summ``: a name a cuda.coop namespace lacks is the module's own AttributeError (the nearest
        name it has), at the line that names it, before it could be reported as what it does to its operands."""
        ir = nb.ir
        for _, block in sorted(self.func_ir.blocks.items()):
            for stmt in block.body:
                if not (isinstance(stmt, ir.Assign) and isinstance(stmt.value, ir.Expr) and stmt.value.op == "getattr"):
                    continue
                base = self.resolver.var(stmt.value.value.name)
                module = base.value if isinstance(base, Obj) else None
                if not isinstance(module, type(inspect)) or not module.__name__.startswith("cuda.coop"):
                    continue
                try:
                    getattr(module, stmt.value.attr)
                except AttributeError as exc:
                    raise AttributeError(f"{at(stmt.loc)}: {exc}") from None

    # ------------------------------------------------------------ after planning
    def _check_escapes(self) -> None:
        """Groups, payloads and descriptors may only flow into cooperative calls, their own methods and inlined
        helpers (G2, P14); a non-inlined helper that itself uses cuda.coop is H1."""
        ir = nb.ir
        for block in self.func_ir.blocks.values():
            for stmt in block.body:
                if isinstance(stmt, ir.Assign) and isinstance(stmt.value, ir.Var):
                    continue
                callee = None
                if isinstance(stmt, ir.Assign) and isinstance(stmt.value, ir.Expr):
                    expr = stmt.value
                    if expr.op in ("getitem", "static_getitem") and self._is_slice(expr):
                        base = self.resolver.var(expr.value.name)
                        if isinstance(base, PayloadVal):
                            raise located(CoopTypeError(
                                f"ThreadData {user_name(expr.value.name)} escapes to runtime through slicing at "
                                f"{_where(stmt.loc)}; index single items instead"), stmt.loc)
                    if expr.op in ("getattr", "getitem", "static_getitem", "exhaust_iter"):
                        continue
                    if expr.op == "build_tuple" and self._feeds_only_coop_calls(stmt.target.name):
                        continue  # a multi-operand value: coop.scan(block, (a, b), scan_op=f)
                    if expr.op == "call":
                        callee = self.resolver.callee(stmt)
                        if isinstance(callee, MethodVal) or (isinstance(callee, Obj) and (
                                self.is_coop_object(callee.value) or callee.value is len)):
                            continue
                used = [stmt.value] if isinstance(stmt, (ir.SetItem, ir.StaticSetItem)) else stmt.list_vars()
                for var in used:
                    value = self.resolver.var(var.name)
                    kind = _KINDS.get(type(value))
                    if kind is None or (isinstance(value, PayloadVal) and value.form != THREAD_DATA):
                        continue  # the user's own arrays may go anywhere
                    if isinstance(callee, Obj) and self._uses_coop(callee.value):
                        raise located(self._not_inlined(callee.value), stmt.loc)  # H1 is the root cause
                    use = self._describe_use(stmt, callee)
                    what = f"{kind} {user_name(var.name)} escapes to runtime through {use}"
                    if kind == "ThreadGroup":
                        what += "; groups may only be used with cuda.coop operations, group methods and inlined helpers"
                    raise located(CoopTypeError(what), stmt.loc)

    def _feeds_only_coop_calls(self, name: str) -> bool:
        """Whether variable ``name`` is used, and only as an operand of operations that take tuples of operands
        (``coop.scan(block, (a, b), scan_op=f)``; ``_semantics.tuples``), directly or under another name."""
        ir = nb.ir
        used = False
        for block in self.func_ir.blocks.values():
            for stmt in block.body:
                value = stmt.value if isinstance(stmt, ir.Assign) else None
                uses = [value] if isinstance(value, ir.Var) else \
                    value.list_vars() if isinstance(value, ir.Expr) else stmt.list_vars()
                if not any(var.name == name for var in uses):
                    continue
                used = True
                if isinstance(value, ir.Expr) and value.op == "call":
                    callee = self.resolver.callee(stmt)
                    if isinstance(callee, Obj) and takes_tuples(op_name(callee.value)):
                        continue
                if isinstance(value, ir.Var) and stmt.target.name != name and \
                        self._feeds_only_coop_calls(stmt.target.name):
                    continue  # another name for it (``pair = (a, b)``)
                return False
        return used

    def _is_slice(self, expr: Any) -> bool:
        if expr.op == "static_getitem" and isinstance(expr.index, slice):
            return True
        index = expr.index_var if expr.op == "static_getitem" else expr.index
        if index is None:
            return False
        for definition in self.resolver.definitions(index.name):
            if isinstance(definition, nb.ir.Expr) and definition.op == "call":
                callee = self.resolver.callee(self.resolver.stmt_of[id(definition)])
                if isinstance(callee, Obj) and callee.value is slice:
                    return True
        return False

    def _describe_use(self, stmt: Any, callee: Any) -> str:
        """The Python construct a value flows into, with its line: never the IR statement."""
        ir = nb.ir
        where = _where(stmt.loc)
        if isinstance(stmt, ir.Return):
            return f"the kernel's return value at {where}"
        if isinstance(stmt, (ir.SetItem, ir.StaticSetItem, ir.SetAttr)):
            return f"an assignment into {user_name(stmt.target.name)} at {where}"
        if isinstance(stmt, ir.Assign) and isinstance(stmt.value, ir.Expr):
            expr = stmt.value
            if expr.op == "call":
                fn = callee.value if isinstance(callee, Obj) else None
                label = getattr(fn, "__qualname__", None) or getattr(getattr(fn, "py_func", None), "__qualname__", None)
                return f"a call of `{label}()` at {where}" if label else f"a function call at {where}"
            constructs = {"build_tuple": "a tuple", "build_list": "a list", "build_set": "a set",
                          "build_map": "a dict", "binop": "an arithmetic expression",
                          "inplace_binop": "an arithmetic expression", "unary": "an arithmetic expression",
                          "getiter": "iteration", "iternext": "iteration", "cast": "the kernel's return value"}
            return f"{constructs.get(expr.op, 'an expression')} at {where}"
        if isinstance(stmt, ir.Branch):
            return f"a condition at {where}"
        return f"a statement at {where}"

    @staticmethod
    def _not_inlined(fn: Any) -> CoopError:
        """H1, raised where the kernel calls the helper (a recursive helper can never be inlined)."""
        name = getattr(getattr(fn, "py_func", fn), "__qualname__", repr(fn))
        return CoopTypeError(f"device function {name} contains cuda.coop operations but is not inlined into the "
                             'kernel; declare it with @cuda.jit(device=True, inline="always")')

    def _uses_coop(self, fn: Any) -> bool:
        """A device function (not inlined here) whose code refers to cuda.coop."""
        py_func = getattr(fn, "py_func", None)
        if py_func is None or not hasattr(py_func, "__code__"):
            return False
        seen: set[int] = set()

        def refers(function: Any) -> bool:
            if id(function) in seen or not hasattr(function, "__code__"):
                return False
            seen.add(id(function))
            scope = dict(getattr(function, "__globals__", {}))
            for cell_name, cell in zip(function.__code__.co_freevars, function.__closure__ or ()):
                try:
                    scope[cell_name] = cell.cell_contents
                except ValueError:
                    pass
            for name in _names(function.__code__):
                value = scope.get(name)
                if value is None:
                    continue
                if self.is_coop_object(value):
                    return True
                if refers(getattr(value, "py_func", None)):
                    return True
            return False

        return refers(py_func)


def _names(code: Any) -> set[str]:
    names = set(code.co_names) | set(code.co_freevars)
    for const in code.co_consts:
        if hasattr(const, "co_names"):
            names |= _names(const)
    return names
