"""The whole-function planner: finds cuda.coop calls in a kernel and replaces them.

Runs after inlining and before typing, once per kernel specialisation:
1. resolve groups, payloads and descriptors (``_ir.Resolver``);
2. infer payload dtypes from all evidence, then plan every call (layer 2);
3. build all providers in one NVRTC run (layer 3) and lay out the scratch;
4. rewrite the IR: payloads become local arrays, calls become site callees.
"""
from __future__ import annotations

from typing import Any, Iterator, Sequence

import numpy as np

from .._markers import OPERATIONS, groups as _groups_markers, temp_storage as _ts_markers
from .._cub.families import groups as cub_groups
from .._errors import (
    CoopError, CoopTypeError, located,
)
from .._markers.base import OP_ATTR, op_name
from .._markers.groups import GROUP_METHODS, ThreadGroup
from .._semantics.common import (
    LaunchShape, Runtime, Static, check_block_shape,
)
from .._semantics.common import itemsize
from . import _compat as nb, _patches
from ._ir import (
    UNKNOWN, ArgRef, DescVal, GroupVal, MethodVal, Obj, PayloadTuple, PayloadVal, Resolver,
    dtype_of_object, integer_expression,
)
from .._calls import FAMILIES, front
from .._calls.build import (
    compile_calls,
    drop_unneeded_reuse_barriers,
    place_scratch,
    scratch_use,
)
from .._calls.context import CallContext
from .._calls.objects import FACTORIES, factory_group, group_by, plan_query, several_sites, with_defaults
from .._calls.site import Emission, SiteCall
from ._lowering import operator_link
from ._checks import KernelChecks, user_name
from ._about import BACKEND, BUILD_TAG, CONTEXT
from ._inference import DtypeInference
from ._barriers import scratch_use_may_follow
from ._objects import KernelObjects
from ._rewrite import KernelRewrite
from ._shared_arrays import SharedArrays, is_backing_array_marker, new_pointer_site
from ._tuple_operands import TupleOperands
from ._uniformity import check_participation
from ._plan_state import OpCall, PlannedSite

def _is_coop_object(value: Any) -> bool:
    if isinstance(value, type(np)) and (value.__name__ == "cuda.coop" or value.__name__.startswith("cuda.coop.")):
        return True
    return getattr(value, OP_ATTR, None) is not None or value is ThreadGroup or is_backing_array_marker(value)


def mentions_coop(func_ir: Any) -> bool:
    for block in func_ir.blocks.values():
        for stmt in block.body:
            if isinstance(stmt, nb.ir.Assign) and isinstance(stmt.value, (nb.ir.Global, nb.ir.FreeVar)):
                if _is_coop_object(stmt.value.value):
                    return True
    return False


def _first_coop_use(func_ir: Any) -> Any:
    """The location of the first statement that refers to cuda.coop (the function's own if none)."""
    for block in sorted(func_ir.blocks.items()):
        for stmt in block[1].body:
            if isinstance(stmt, nb.ir.Assign) and isinstance(stmt.value, (nb.ir.Global, nb.ir.FreeVar)) \
                    and _is_coop_object(stmt.value.value):
                return stmt.loc
    return func_ir.loc


class KernelPlan(KernelObjects, DtypeInference, KernelChecks, SharedArrays, TupleOperands, KernelRewrite):
    operations = OPERATIONS
    is_coop_object = staticmethod(_is_coop_object)
    def as_context(self) -> CallContext[OpCall, PayloadVal]:
        """The plan as the call layer's families see it (checked against the protocol here)."""
        return self

    def __init__(self, state: Any):
        self.state = state
        self.func_ir = state.func_ir
        config = nb.require_launch_config(state)
        block = tuple(config["block"]) + (1,) * (3 - len(tuple(config["block"])))
        self.kernel = state.func_id.func_qualname
        try:
            check_block_shape(self.kernel, block)
        except CoopError as exc:
            raise located(exc, self.func_ir.loc) from None
        self.launch = LaunchShape(block)
        self.cc = nb.target_cc(state)
        self.resolver = Resolver(self.func_ir, tuple(state.args), self._constructor)
        self.payloads: list[PayloadVal] = []
        self.dtype_follows = []  # (output, input, call, param): an output payload typed by an input's dtype
        self.backing_arrays = []  # numba_coop.shared.array sites (SharedArrayVal)
        self.descriptors: list[DescVal] = []
        self.groups: list[GroupVal] = []
        self.constructor_stmts: dict[int, Any] = {}
        self.sites: list[PlannedSite] = []
        self.result_operands: set[int] = set()  # ids of the operands that stand for a call's fresh result
        self._keep: list[Any] = []  # ... kept alive so their ids stay theirs
        self.member_reads: dict[str, Any] = {}  # tuple members read where the call stands (_tuple_operands)
        self._members_of: dict[int, list[Any] | None] = {}
        self.op_calls: list[OpCall] = []  # each operation call, bound by the early operand check; read by the G21 check

    # ---------------------------------------------------------------- values
    def _constructor(self, stmt: Any) -> Any:
        """Evaluate a call expression that may construct a group, payload or descriptor."""
        if stmt is None:
            return UNKNOWN
        key = id(stmt)
        if key in self.constructor_stmts:
            return self.constructor_stmts[key]
        self.constructor_stmts[key] = UNKNOWN
        callee = self.resolver.callee(stmt)
        result: Any = UNKNOWN
        try:
            if isinstance(callee, Obj):
                name = op_name(callee.value)
                if isinstance(callee.value, type) and callee.value.__qualname__ == "ThreadData" and \
                        callee.value.__module__.startswith("cuda.coop."):
                    # another backend's payload class (cuda.coop.cutlass.ThreadData) is its qualified name: R11
                    foreign = CONTEXT.foreign_call(callee.value.__module__, "ThreadData")
                    if foreign is not None:
                        raise foreign
                if name in FACTORIES:
                    self._bind(stmt, callee.value, f"cuda.coop.{name}")  # C5: a factory takes no arguments
                    result = GroupVal(factory_group(name, self.launch), stmt.loc)
                    self.groups.append(result)
                elif name == "ThreadData":
                    result = self._thread_data(stmt, callee.value)
                elif callee.value is nb.nb_cuda.local.array:
                    result = self._local_array_payload(stmt)
                elif callee.value is nb.nb_cuda.shared.array:
                    result = self._shared_array(stmt, in_backing=False)
                elif is_backing_array_marker(callee.value):
                    result = self._shared_array(stmt, in_backing=True)
                elif name == "TempStorage":
                    result = self._temp_storage(stmt, callee.value)
                elif callee.value is len and len(stmt.value.args) == 1:
                    arg = self.resolver.var(stmt.value.args[0].name)
                    if isinstance(arg, PayloadVal):
                        result = Obj(arg.items_per_thread)
                elif callee.value in (float, int) and len(stmt.value.args) == 1 and not stmt.value.kws:
                    # float("-inf"), int(2.0): a conversion of a compile-time value is one
                    # (docs: concepts, "Compile-time values and specialisation")
                    arg = self.resolver.var(stmt.value.args[0].name)
                    if isinstance(arg, Obj) and isinstance(arg.value, (str, int, float)) \
                            and not isinstance(arg.value, bool):
                        try:
                            result = Obj(callee.value(arg.value))
                        except ValueError:  # float("x"): numba reports it as Python would
                            pass
                elif callee.value in (min, max) and stmt.value.args:
                    result = integer_expression(callee.value, [self.resolver.var(a.name) for a in stmt.value.args])
                elif name in FAMILIES and (make_result := FAMILIES[name].result_payload) is not None:
                    call = self.op_call(stmt, None, callee.value)
                    result = make_result(self, call)
                    if isinstance(result, PayloadVal):
                        self.payloads.append(result)
                    elif isinstance(result, PayloadTuple):
                        self.payloads.extend(result.items)
            elif isinstance(callee, MethodVal) and callee.name == "group_by":
                function = _groups_markers.ThreadGroup.group_by
                bound = with_defaults(function, self._bind(stmt, function, "ThreadGroup.group_by", skip_self=True))
                # a run-time value stays a Runtime: G6 / G8 where the shared checks reach it
                values = {key: self._static(var, stmt, "", must=False) for key, var in bound.items()}
                for param, value in values.items():
                    if isinstance(value, Runtime):  # H3 before G6 / G8: a literal_unroll value is the cause
                        self.reject_literal_unroll_of(bound[param], f"ThreadGroup.group_by {param}")
                spec = group_by(callee.group.spec, values, self.launch)
                result = GroupVal(spec, stmt.loc)
                self.groups.append(result)
        except CoopError as exc:
            raise located(exc, stmt.loc) from None
        self.constructor_stmts[key] = result
        return result

    # ------------------------------------------------------------- the plan
    def run(self) -> bool:
        self._check_missing_names()  # before a call of the missing name reads as an escape of its operands
        calls = []
        for block in self.func_ir.blocks.values():
            for stmt in block.body:
                if isinstance(stmt, nb.ir.Assign) and isinstance(stmt.value, nb.ir.Expr) and stmt.value.op == "call":
                    callee = self.resolver.callee(stmt)
                    value = self.resolver.var(stmt.target.name)  # constructs groups/payloads in order
                    calls.append((stmt, block, callee, value))
        merged = [name for name, definitions in self.func_ir._definitions.items() if len(definitions) > 1]
        for name in merged:  # P15 sees every merge (``c = a`` in one branch, ``c = b`` in the other)
            self.resolver.var(name)
        self._unify_merged_payloads()
        self._check_escapes()  # an escape is the root cause of what would fail later (G2, P14 before G1, S1)
        self._check_operands(calls)
        # G21: a group error, before options and inference (docs: errors, "Reading a message")
        check_participation(self)
        self._infer_dtypes()
        for stmt, block, callee, _ in calls:
            try:
                if isinstance(callee, Obj) and op_name(callee.value) in OPERATIONS:
                    self._operation(stmt, block, callee.value)
                elif isinstance(callee, MethodVal) and callee.name in GROUP_METHODS and callee.name != "group_by":
                    self._query(stmt, block, callee)
            except CoopError as exc:  # keep a callback's own failure (C14) as the cause
                raise located(exc, stmt.loc) from exc.__cause__
        self._check_unused_merges(merged)
        drop_unneeded_reuse_barriers(self.sites, scratch_use_may_follow(self.func_ir, self.sites))
        self._build()
        self._rewrite()
        return True

    def _operation(self, stmt: Any, block: Any, marker: Any) -> None:
        call = self.op_call(stmt, block, marker)
        front.plan(self, call, front.family_of(call, BACKEND), self._operand_dtypes(call))

    def _operand_dtypes(self, call: OpCall) -> Iterator[tuple[str, str | None]]:
        """(parameter, dtype) of the call's operands after inference, each read when the P1 gate reaches it."""
        for param, var in call.args.items():
            if param == "group" or not isinstance(var, nb.ir.Var):
                continue
            value = self.resolver.var(var.name)
            yield param, value.dtype if isinstance(value, PayloadVal) else (
                None if isinstance(value, (GroupVal, DescVal, PayloadTuple)) else self._value_dtype(var)[0])

    def op_call(self, stmt: Any, block: Any, marker: Any) -> OpCall:
        op = op_name(marker)
        assert op is not None  # callers pass operation markers only
        name = f"{marker.__module__}.{op}"
        foreign = CONTEXT.foreign_call(marker.__module__, op)  # R11: another backend's qualified call
        if foreign is not None:
            raise located(foreign, stmt.loc)
        return OpCall(stmt, block, marker, op, name, self._bind(stmt, marker, name))

    def add_site(self, call: OpCall, operands: list[Any], site: SiteCall, emission: Emission,
                 scratch: tuple[Any, Any] | None = None) -> None:
        """Record a planned call; ``scratch`` is (group spec, descriptor or None) when it needs scratch."""
        site.loc = call.stmt.loc
        use = None
        if scratch is not None:
            group, desc = scratch
            use = scratch_use(len(self.sites), group, desc.descriptor if desc else None,
                              f"{call.name} at line {call.stmt.loc.line}")
        self.sites.append(PlannedSite(stmt=call.stmt, block=call.block, name=call.name, operands=operands, site=site,
                                      provider=emission.provider, without_reuse_barrier=emission.without_reuse_barrier,
                                      scratch=use))

    def group(self, call: OpCall) -> GroupVal:
        group = self.resolver.var(call.args["group"].name)
        if not isinstance(group, GroupVal):
            raise CoopTypeError(
                f"{call.name} requires a compile-time ThreadGroup created by this_*() or group_by() in this kernel")
        return group

    def payload(self, var: Any) -> PayloadVal | None:
        """The payload a variable refers to, or None for a scalar."""
        value = self.resolver.var(var.name)
        if isinstance(value, tuple):
            raise self._merge_error(value)
        return value if isinstance(value, PayloadVal) else None

    def control(self, call: OpCall, key: str) -> Any:
        """None, Static(value) or Runtime(dtype if visible) for an optional runtime control."""
        return self.operand_control(call.args.get(key))

    def operand_control(self, var: Any) -> Any:
        """``control`` of an operand (a member of a tuple control)."""
        if var is None:
            return None
        value = self.resolver.var(var.name)
        if isinstance(value, Obj):
            return None if value.value is None else Static(value.value)
        return Runtime(nb.dtype_name(value.type) if isinstance(value, ArgRef) else None)

    def static(self, call: OpCall, key: str, default: Any, kind: str = "value") -> Any:
        """A compile-time option (selectors, bools, operator callables); runtime values are C4 errors."""
        value = self._static(call.args.get(key, default), call.stmt, f"{call.name} {key}", must=False)
        if isinstance(value, Runtime):
            self.reject_literal_unroll(call, key)
            raise CoopTypeError(f"{call.name} {key} must be a compile-time {kind}")
        return value

    def selector(self, call: OpCall, key: str, default: str) -> Any:
        value = self._static(call.args.get(key, default), call.stmt, f"{call.name} {key}", must=False)
        if isinstance(value, Runtime):
            self.reject_literal_unroll(call, key)
            raise CoopTypeError(f"{call.name} {key} must be a compile-time string")
        return value

    def result_operand(self, call: OpCall) -> Any:
        """The operand through which a call fills its fresh result payload (the call's target variable)."""
        target = call.stmt.target
        operand = nb.ir.Var(target.scope, target.name, target.loc)  # its own object: inputs may share the name
        self.result_operands.add(id(operand))
        self._keep.append(operand)
        return operand

    def new_result_payload(self, call: OpCall, items_per_thread: int, like: PayloadVal | None,
                           dtype: str | None = None) -> PayloadVal:
        """A fresh payload an operation returns: a local array created where the call was."""
        return PayloadVal(call.stmt, call.stmt.target.name, items_per_thread, dtype, False, call.stmt.loc,
                          same_as=like if dtype is None else None, result=True)

    def payload_tuple(self, call: OpCall) -> PayloadTuple:
        """The payloads a tuple-returning call creates (by statement: its target may be reassigned elsewhere)."""
        value = self.constructor_stmts.get(id(call.stmt))
        if not isinstance(value, PayloadTuple):
            raise CoopTypeError(f"{call.name} requires fixed-size ThreadData payloads of known dtype")
        return value

    def new_result_payloads(self, call: OpCall, likes: Sequence[PayloadVal | None],
                            names: tuple[str, ...] = ("keys", "values"), inner: int = 0) -> PayloadTuple:
        """Fresh payloads an operation returns as a tuple, each shaped like one input; each gets its own local
        array variable, and the call's target becomes the tuple of those arrays (with the call's scalar results at
        the places of a None in ``likes``, the first ``inner`` places as a tuple of their own; ``_rewrite``)."""
        stmt = call.stmt
        scope, loc = stmt.target.scope, stmt.loc
        items: list[PayloadVal] = []
        scalars: list[int] = []
        for place, like in enumerate(likes):
            if like is None:
                scalars.append(place)
                continue
            array = nb.ir.Var(scope, scope.redefine("$cuda_coop_result", loc).name, loc)
            items.append(PayloadVal(stmt, f"{stmt.target.name}[{place}]", like.items_per_thread, None, False, loc,
                                    same_as=like, array=array, result=True))
        return PayloadTuple(tuple(items), call.name, names, tuple(scalars), inner)

    def scalar_dtype(self, var: Any, call: OpCall, param: str, through: tuple[str, ...] = ()) -> str:
        """The dtype of a scalar operand, as far as it can be seen before typing (by the inference rules;
        docs: concepts, "ThreadData payloads"); the scalar result of a call of an operation in ``through`` has the dtype
        of that call's value (its operand after the group)."""
        for _ in range(16 if through else 0):
            source = self._scalar_source(var, through)
            if source is None:
                break
            var = source
        dtype, _ = self._value_dtype(var)
        if dtype is None and self._is_truth_value(var):  # the operation says whether it takes booleans
            dtype = "bool"
        if dtype is None:
            self.reject_multidimensional_local_array(call, param)
            raise CoopTypeError(f"could not infer the dtype of {call.name} {param}; cast it to a NumPy scalar type "
                                "(e.g. numpy.int32(x)) or compute it from a typed array element")
        return dtype

    def _scalar_source(self, var: Any, through: tuple[str, ...]) -> Any:
        """The value operand of the call of an operation in ``through`` that defines ``var``, if one does."""
        for definition in self.resolver.definitions(var.name):
            if isinstance(definition, nb.ir.Expr) and definition.op == "call" and len(definition.args) >= 2:
                callee = self.resolver.callee(self.resolver.stmt_of[id(definition)])
                if isinstance(callee, Obj) and op_name(callee.value) in through:
                    return definition.args[1]
        return None

    # what the call layer asks of the compiler (_calls.context.CallContext)
    compiler = "numba-cuda-mlir"
    dtype_words = "a NumPy or Numba scalar type"
    dtype_of_object = staticmethod(dtype_of_object)
    holds_by_value = staticmethod(nb.held_by_value)

    def result_name(self, call: OpCall) -> str:
        return user_name(call.stmt.target.name)

    def link_operator(self, spec: Any, dtype: str, name: str, param: str, *, arity: int = 2, result: str | None = None,
                      state_dtype: str | None = None, extra: tuple[str, ...] = ()) -> list[Any]:
        return operator_link(spec, dtype, self.cc, name, param, arity, result, state_dtype, extra)

    def descriptor(self, var: Any, name: str) -> DescVal | None:
        if var is None:
            return None
        value = self.resolver.var(var.name)
        if isinstance(value, Obj) and value.value is None:
            return None
        if isinstance(value, tuple):
            raise CoopTypeError(f"{name} temp_storage must resolve to exactly one TempStorage constructor "
                                "in this kernel")
        if isinstance(value, Obj) and isinstance(value.value, (_ts_markers.TempStorage,)):
            raise CoopTypeError("TempStorage descriptors must be constructed inside the kernel or an inlined helper; "
                                f"{self._outside_name(var)} is not")
        if not isinstance(value, DescVal):
            raise CoopTypeError(
                f"{name} temp_storage must be a TempStorage descriptor constructed in the kernel with "
                "cuda.coop.TempStorage()"
            )
        return value

    def _outside_name(self, var: Any) -> str:
        """The Python name a descriptor made outside the kernel reaches the call by: the global or closure variable
        it was read from, else the variable passed."""
        for definition in self.resolver.definitions_through_copies(var):
            if isinstance(definition, (nb.ir.Global, nb.ir.FreeVar)):
                return str(definition.name)
        return user_name(var.name)

    def array_dtype(self, var: Any) -> str | None:
        """The element dtype of an array operand when it can be seen before typing."""
        value = self.resolver.var(var.name)
        if isinstance(value, ArgRef) and isinstance(value.type, nb.types.Array):
            return nb.dtype_name(value.type.dtype)
        for definition in self.resolver.definitions(var.name):
            if isinstance(definition, nb.ir.Expr) and definition.op in ("getitem", "static_getitem"):
                return self.array_dtype(definition.value)  # a slice of an array
            if isinstance(definition, nb.ir.Expr) and definition.op == "call":
                callee = self.resolver.callee(self.resolver.stmt_of[id(definition)])
                if isinstance(callee, Obj) and callee.value is nb.nb_cuda.shared.array and len(definition.args) > 1:
                    dtype = self.resolver.var(definition.args[1].name)
                    return dtype_of_object(dtype.value) if isinstance(dtype, Obj) else None
        return None

    def _unify_merged_payloads(self) -> None:
        """P15: payloads one variable may refer to share one dtype (an explicit one wins; two must agree)."""
        for first, other, name in self.resolver.merges:
            a, b = first.root(), other.root()
            if a is b:
                continue
            if a.explicit and b.explicit and a.dtype != b.dtype:
                raise located(CoopTypeError(f"variable {user_name(name)} may refer to payloads with different "
                                            f"extents or dtypes ({_shape(a)}; {_shape(b)})"), other.loc)
            if b.explicit and not a.explicit:
                a, b = b, a
            b.same_as = a

    def _check_unused_merges(self, names: list[str]) -> None:
        """P15 for a variable that may hold payloads of different extents but reaches no cooperative call (only
        indexed): reported where it is assigned, as a call would report it."""
        for name in names:
            value = self.resolver.var(name)
            if isinstance(value, tuple) and all(isinstance(v, PayloadVal) for v in value[1]):
                where = [stmt.loc for block in self.func_ir.blocks.values() for stmt in block.body
                         if isinstance(stmt, nb.ir.Assign) and stmt.target.name == name]
                raise located(self._merge_error(value), max(where, key=lambda loc: loc.line))

    def _merge_error(self, merged: tuple[Any, ...]) -> CoopError:
        name = user_name(merged[2]) if len(merged) > 2 else "?"
        if merged[-1] == "tuple" or all(isinstance(v, PayloadTuple) for v in merged[1]):
            return CoopTypeError(f"variable {name} may refer to the tuples of several calls; unpack each call's "
                                 "result where it is made (`keys, values = ...`) and merge the payloads instead")
        payloads = [v for v in merged[1] if isinstance(v, PayloadVal)]
        if len(payloads) == len(merged[1]):
            a, b = sorted({_shape(p) for p in payloads})[:2]
            return CoopTypeError(f"variable {name} may refer to payloads with different extents or dtypes ({a}; {b})")
        return several_sites(name)

    def _query(self, stmt: Any, block: Any, method: MethodVal) -> None:
        name = f"ThreadGroup.{method.name}"
        function = getattr(ThreadGroup, method.name)
        options = with_defaults(function, self._bind(stmt, function, name, skip_self=True))
        level = self._static(options.get("level"), stmt, f"{name} level")  # None: a method without levels
        dtype = self._static(options["dtype"], stmt, f"{name} dtype") if "dtype" in options else None
        spec = plan_query(method.name, method.group.spec, self.launch, level=level, dtype=dtype,
                          dtype_of_object=dtype_of_object, target_cc=self.cc)
        provider = cub_groups.emit(spec)
        site = SiteCall(provider.symbol, [], None, spec.result_dtype)
        self.sites.append(PlannedSite(stmt=stmt, block=block, name=name, operands=[], site=site, provider=provider))

    # --------------------------------------------------------------- checks
    # ---------------------------------------------------------------- build
    def _build(self) -> None:
        if not self.sites and not self.backing_arrays:
            return
        try:
            built = compile_calls(self.sites, self.kernel, self.cc, BUILD_TAG)
        except CoopError as exc:
            raise located(exc, self.sites[0].stmt.loc) from None
        if built is not None:
            self.cpp_source = built.source
            ltoir = nb.nb_cuda.LTOIR(built.ltoir, name=f"cuda_coop_{self.kernel}.ltoir")
            for entry in self.sites:
                entry.site.ltoir = ltoir
        arrays = self._backing_array_uses()
        user_static, user_dynamic, static_name = self._user_shared()
        try:
            plan, backing = place_scratch(self.sites, self.kernel, self.cc, other_uses=[use for _, use, _ in arrays],
                                          descriptors=[d.descriptor for d in self.descriptors]
                                          + [desc for _, _, desc in arrays],
                                          user_static_bytes=user_static, user_dynamic=user_dynamic,
                                          user_static_name=static_name)
        except CoopError as exc:
            first = next((entry for entry in self.sites if entry.scratch is not None), None)
            where = first.stmt.loc if first is not None else (self.sites[0].stmt.loc if self.sites
                                                               else arrays[0][0].stmt.loc)
            raise located(exc, where) from None
        for value, use, _ in arrays:
            value.site = new_pointer_site(value)
            value.site.backing, value.site.scratch_offset = backing, use.offset
        self.state.metadata["cuda_coop"] = {"cpp_source": built.source if built else "", "scratch_bytes": plan.size,
                                            "dynamic": plan.dynamic, "from_cache": built.from_cache if built else True}
        if plan.dynamic:
            nb.set_required_dynamic_shared_memory(self.state, plan.size)

    def _user_shared(self) -> tuple[int, str | None, str]:
        """Bytes of the user's static shared arrays, the name of a dynamic one if any, and of the first static one."""
        static, dynamic, static_name = 0, None, ""
        for block in self.func_ir.blocks.values():
            for stmt in block.body:
                if not (isinstance(stmt, nb.ir.Assign) and isinstance(stmt.value, nb.ir.Expr)
                        and stmt.value.op == "call"):
                    continue
                callee = self.resolver.callee(stmt)
                if not (isinstance(callee, Obj) and callee.value is nb.nb_cuda.shared.array):
                    continue
                args = [self.resolver.var(a.name) for a in stmt.value.args]
                kws = {k: self.resolver.var(v.name) for k, v in stmt.value.kws}
                shape = self._shape_of(stmt.value.args[0] if stmt.value.args else dict(stmt.value.kws).get("shape"),
                                       stmt)
                dtype = args[1] if len(args) > 1 else kws.get("dtype")
                count = int(np.prod(shape)) if shape is not None else 0
                dtype_name = dtype_of_object(dtype.value) if isinstance(dtype, Obj) else None
                if count == 0 or dtype_name is None:
                    dynamic = stmt.target.name
                else:
                    static += count * itemsize(dtype_name)
                    static_name = static_name or user_name(stmt.target.name)
        return static, dynamic, static_name


def _shape(payload: PayloadVal) -> str:
    return f"items_per_thread={payload.items_per_thread}" + (f", dtype={payload.dtype}" if payload.dtype else "")


class CoopPlanner(nb.WholeFunctionPlanner):  # type: ignore[misc]  # numba-cuda-mlir's base is untyped (Any)
    """Run by the registered entry (``_entry.CoopPlannerEntry``); returns quickly for code without cuda.coop."""

    def run(self) -> bool:
        func_ir = self.state.func_ir
        if not mentions_coop(func_ir):
            return False
        _patches.install(_patches.AT_FIRST_KERNEL)  # 32-bit shared pointers, the exact block: before translation
        if self.is_device_function:
            name = self.state.func_id.func_qualname
            raise located(CoopTypeError(
                f"device function {name} contains cuda.coop operations but is not inlined into the kernel; "
                'declare it with @cuda.jit(device=True, inline="always")'
            ), _first_coop_use(func_ir))
        try:
            changed = KernelPlan(self.state).run()
        except CoopError as exc:
            # The message already names the user's line: drop cuda.coop's own frames from the traceback
            # (it still shows the user's launch and numba-cuda-mlir's frames above this one).
            raise exc.with_traceback(None) from exc.__cause__
        _patches.mark_grid_free(self.state)  # the plan read the block shape only: other grids reuse the build
        return changed
