"""Payload dtype inference before typing (docs: concepts, "ThreadData payloads"): all evidence first, then one decision
per payload.

A mixin of the planner's ``KernelPlan``: it reads ``self.resolver``, ``self.payloads`` and
``self.func_ir``, and asks each operation family for the evidence its calls provide.
"""
from __future__ import annotations

import operator
from typing import Any

import numpy as np

from .._errors import CoopError, CoopTypeError, CoopUnsupportedError, located
from .._markers.base import op_name
from . import _compat as nb
from .._semantics.aggregates import is_aggregate
from .._semantics.common import assignment_at, conflicting_dtypes, declared_dtype_conflict
from ._ir import THREAD_DATA, ArgRef, Obj, PayloadTuple, PayloadVal, dtype_of_object
from ._checks import user_name
from ._plan_state import OpCall, PlanState
from .._calls import FAMILIES, front
from .._cub.provider import Abi


_COMPARISONS = (operator.lt, operator.le, operator.gt, operator.ge, operator.eq, operator.ne)


def no_array_of(dtype: str, what: str) -> CoopUnsupportedError:
    """numba-cuda-mlir 0.6 lowers no array (local, shared, or a ThreadData's) of records or struct-model types."""
    if nb.held_by_value(dtype):
        return CoopUnsupportedError(
            f"{what} of the struct-model type {dtype} is not supported: numba-cuda-mlir {nb.VERSION} has no arrays of "
            f"struct-model types; use coop.ThreadData(items_per_thread, dtype=...) for a payload of them")
    return CoopUnsupportedError(
        f"{what} of the structured dtype {dtype} is not supported by numba-cuda-mlir {nb.VERSION}; use "
        "coop.ThreadData(items_per_thread, dtype=...) for a payload of records")


class DtypeInference(PlanState):
    def _infer_dtypes(self) -> None:
        """Explicit dtype, then cooperative operations, then indexed assignments, then literals
        (docs: concepts, "ThreadData payloads")."""
        for block in self.func_ir.blocks.values():
            for stmt in block.body:
                if isinstance(stmt, nb.ir.Assign) and isinstance(stmt.value, nb.ir.Expr) and stmt.value.op == "call":
                    callee = self.resolver.callee(stmt)
                    family = FAMILIES.get(op_name(callee.value) or "") if isinstance(callee, Obj) else None
                    if family is not None and family.evidence is not None:
                        try:
                            call = self.op_call(stmt, block, callee.value)
                        except CoopError:
                            continue  # reported with its location when the call is planned
                        try:
                            front.evidence(self.as_context(), call, family)
                        except CoopError as exc:
                            raise located(exc, stmt.loc) from None
        weak: dict[int, list[tuple[str, str]]] = {}
        # rule 3 decides only payloads that rules 1 and 2 left open; every typed assignment to one is evidence, and
        # two that disagree are P8
        by_operations = {id(p.root()) for p in self.payloads if p.root().dtype is not None or p.root().evidence}
        counted: set[int] = set()
        mismatches: list[tuple[int, CoopError]] = []  # typed assignments against an explicit dtype, by line
        for _ in range(4):  # payload-to-payload assignments propagate in a few rounds
            for block in self.func_ir.blocks.values():
                for stmt in block.body:
                    if isinstance(stmt, (nb.ir.SetItem, nb.ir.StaticSetItem)) and id(stmt) not in counted:
                        target = self.resolver.var(stmt.target.name)
                        if not isinstance(target, PayloadVal):
                            continue
                        root = target.root()
                        if id(root) in by_operations:
                            self._check_assignment_agrees(stmt, root, counted, mismatches)
                            continue
                        dtype, is_weak = self._value_dtype(stmt.value)
                        if dtype is not None:
                            counted.add(id(stmt))
                            evidence = (dtype, assignment_at(stmt.loc.line))
                            if is_weak:
                                weak.setdefault(id(root), []).append(evidence)
                            else:
                                root.evidence.append(evidence)
                                if root.dtype is not None and root.dtype != dtype:
                                    root.dtype = self._decide(root)  # P8: an earlier round decided otherwise
            self._settle_dtypes()
        if mismatches:  # the first in the kernel's order, as a tracing backend meets it
            raise min(mismatches, key=lambda found: found[0])[1]
        for payload in self.payloads:
            root = payload.root()
            if root.dtype is None and id(root) in weak:
                root.evidence = weak[id(root)]
                root.dtype = self._decide(root)
        self._settle_dtypes()
        for payload in self.payloads:
            if payload.dtype is None:
                raise located(CoopTypeError(
                    f"could not infer the dtype of ThreadData {user_name(payload.var)}; pass dtype= or assign values "
                    "of known type (cast helper results, e.g. numpy.int32(x))"), payload.loc)
            if not payload.explicit and payload.form == THREAD_DATA:
                self.check_payload_size(payload)  # P17 with the inferred dtype (explicit ones were checked)

    def _check_assignment_agrees(self, stmt: Any, root: PayloadVal, counted: set[int],
                                 mismatches: list[tuple[int, CoopError]]) -> None:
        """P8: a typed assignment into a payload that its explicit dtype or a cooperative operation types must agree
        with it; ``dtype`` never converts (docs: concepts, "ThreadData payloads"). Only direct evidence counts
        against a dtype already given (``_is_direct``); literals, kernel arguments, arithmetic (whose dtype is only
        estimated here), results of cooperative calls, and the payloads that operations return are left to
        numba-cuda-mlir's conversions. A mismatch with an explicit dtype goes to ``mismatches`` (by line): the first
        in the kernel's order is raised once every round has run."""
        if root.form != THREAD_DATA or root.result:
            return
        dtype, is_weak = self._value_dtype(stmt.value)
        if dtype is None or is_weak or dtype == "bool" or not self._is_direct(stmt.value):
            return
        counted.add(id(stmt))
        where = assignment_at(stmt.loc.line)
        if root.explicit:
            if dtype != root.dtype:
                conflict = declared_dtype_conflict(user_name(root.var), str(root.dtype), root.loc.line, dtype, where)
                mismatches.append((stmt.loc.line, located(conflict, stmt.loc)))
            return
        root.evidence.append((dtype, where))
        if root.dtype is not None and root.dtype != dtype:
            root.dtype = self._decide(root)

    def _is_direct(self, var: Any, depth: int = 0) -> bool:
        """Whether ``var`` is direct dtype evidence (SPEC 4, rule 3): an element of a kernel array or of a payload
        (read by indexing or by a cache-hinted load or atomic), an explicit cast (``np.int32(x)``) or a NumPy scalar
        constant, through copies, from one definition."""
        value = self.resolver.var(var.name)
        if isinstance(value, Obj):
            return isinstance(value.value, np.generic) and value.value.dtype.kind in "iuf"
        definitions = self.resolver.definitions(var.name)
        if len(definitions) != 1 or depth > 16:
            return False
        definition = definitions[0]
        if isinstance(definition, nb.ir.Var):
            return self._is_direct(definition, depth + 1)
        if not isinstance(definition, nb.ir.Expr):
            return False
        if definition.op in ("getitem", "static_getitem"):
            base = self.resolver.var(definition.value.name)
            return isinstance(base, PayloadVal) or (isinstance(base, ArgRef) and isinstance(base.type, nb.types.Array))
        if definition.op == "call":
            stmt = self.resolver.stmt_of.get(id(definition))
            callee = self.resolver.callee(stmt) if stmt is not None else None
            if not isinstance(callee, Obj) or isinstance(callee.value, str):
                return False
            if any(callee.value is read for read in nb.ELEMENT_READS):
                return True
            return callee.value not in (int, float, bool) and dtype_of_object(callee.value) is not None
        return False

    def _settle_dtypes(self) -> None:
        for output, source, call, param in self.dtype_follows:
            if source.root().dtype is not None and (output.root().dtype is None or output.root().explicit):
                self.add_evidence(output, source.root().dtype, call, param)  # an explicit dtype must agree
        for payload in self.payloads:
            root = payload.root()
            if root.dtype is None and root.evidence:
                root.dtype = self._decide(root)
            payload.dtype = root.dtype

    def _decide(self, payload: PayloadVal) -> str:
        """The one dtype the evidence gives, or P8 for the first evidence that disagrees, met in the kernel's order
        (as a tracing backend meets it); an operation is named before an assignment it disagrees with."""
        ordered = sorted(payload.evidence, key=_line_of)
        first = ordered[0]
        for other in ordered[1:]:
            if other[0] != first[0]:
                raise located(conflicting_dtypes(user_name(payload.var), first, other), payload.loc)
        return first[0]

    def follow_dtype(self, output: PayloadVal, source: PayloadVal, call: OpCall, param: str) -> None:
        """``output`` (an operand ``call`` writes into) has ``source``'s dtype, once that is known (the
        evidence for ``source`` may come from a later statement; docs: concepts, "ThreadData payloads")."""
        self.dtype_follows.append((output, source, call, param))

    def add_evidence(self, payload: PayloadVal, dtype: str | None, call: OpCall, param: str) -> None:
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
        """(dtype, weak) of an assigned value, from what is visible before typing. A variable whose definitions lead
        back to itself (``s = s * f + 1`` in a loop) is not followed around the cycle: its other definitions decide."""
        visiting = self.__dict__.setdefault("_dtype_visiting", set())
        if var.name in visiting:
            return None, True  # a weak unknown: the cycle adds no evidence of its own
        visiting.add(var.name)
        try:
            return self._value_dtype_of(var)
        finally:
            visiting.discard(var.name)

    def _value_dtype_of(self, var: Any) -> tuple[str | None, bool]:
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
            if isinstance(value.value, np.generic) and value.value.dtype.kind in "iuf":
                return value.value.dtype.name, False  # a NumPy scalar constant (``NEG_INF = np.float32(-np.inf)``)
            return None, False
        answers = [answer for answer in (self._definition_dtype(var, definition)
                                         for definition in self.resolver.definitions(var.name)) if answer is not None]
        known = [answer for answer in answers if answer[0] is not None]
        if len({dtype for dtype, _ in known}) <= 1 or any(is_aggregate(dtype) for dtype, _ in known):
            strong = [answer for answer in known if not answer[1]]
            return (strong or known or answers or [(None, False)])[0]
        # A variable assigned in several places (``v = np.int32(0)`` then ``v = x * 0.5``): numba types it as the
        # unification of every assignment, so its dtype is theirs together, not the first one's.
        return self._promoted(known)

    def _definition_dtype(self, var: Any, definition: Any) -> tuple[str | None, bool] | None:
        """(dtype, weak) of one assignment to ``var``; None where it says nothing."""
        if not isinstance(definition, nb.ir.Expr):
            if isinstance(definition, nb.ir.Var):
                return self._value_dtype(definition)
            return None
        if definition.op == "static_getitem" and isinstance(definition.index, int):
            results = self._site_results(definition.value)  # ``key, value = radix_sort_pairs(...)``
            if results is not None and definition.index < len(results) and \
                    not isinstance(results[definition.index], list):
                return results[definition.index], False
            item = self._tuple_item(definition.value, definition.index)  # ``a, b = inlined_helper(...)``
            if item is not None:
                return self._value_dtype(item)
            builds, _ = self.tuple_definitions(definition.value)  # a tuple assigned in several places
            if builds and all(definition.index < len(build.items) for build in builds):
                return self._promoted([self._value_dtype(build.items[definition.index]) for build in builds])
        if definition.op in ("getitem", "static_getitem"):
            base = self.resolver.var(definition.value.name)
            if isinstance(base, PayloadVal):
                return base.dtype, False
            if isinstance(base, ArgRef) and isinstance(base.type, nb.types.Array):
                return nb.dtype_name(base.type.dtype), False
        if definition.op == "call":
            results = self._site_results(var)  # the scalar result of an earlier cuda.coop call
            if results is not None and len(results) == 1:
                return results[0], False
            callee = self.resolver.callee(self.resolver.stmt_of[id(definition)])
            if isinstance(callee, Obj) and callee.value in (min, max) and definition.args and not definition.kws:
                return self._promoted([self._value_dtype(arg) for arg in definition.args])
            if isinstance(callee, Obj) and any(callee.value is read for read in nb.ELEMENT_READS) and \
                    definition.args:  # ``cuda.ldcg(a, i)``, ``cuda.atomic.add(a, i, v)``: an element of ``a``
                base = self.resolver.var(definition.args[0].name)
                if isinstance(base, ArgRef) and isinstance(base.type, nb.types.Array):
                    return nb.dtype_name(base.type.dtype), False
            if isinstance(callee, Obj) and not isinstance(callee.value, str):
                dtype = dtype_of_object(callee.value) if callee.value not in (int, float) else None
                if dtype is None:  # e.g. a struct-model type's constructor (docs: qualified, "Struct-model types")
                    dtype = self._typed_call_dtype(callee.value, definition)
                if dtype is not None:
                    return dtype, False
        if definition.op == "binop" and definition.fn in _COMPARISONS:
            return None, False  # a truth value: no payload dtype
        if definition.op in ("binop", "inplace_binop"):
            return self._promoted([self._value_dtype(definition.lhs), self._value_dtype(definition.rhs)])
        return None

    def _tuple_item(self, var: Any, index: int) -> Any:
        """The variable at ``index`` of the tuple that ``var`` unpacks, where a single chain of definitions leads
        from it to the ``build_tuple`` (an inlined helper's ``return a, b`` seen through ``exhaust_iter`` and
        copies); None otherwise."""
        for _ in range(16):
            definitions = self.resolver.definitions(var.name)
            if len(definitions) != 1:
                return None
            definition = definitions[0]
            if isinstance(definition, nb.ir.Var):
                var = definition
            elif isinstance(definition, nb.ir.Expr) and definition.op == "exhaust_iter":
                var = definition.value
            elif isinstance(definition, nb.ir.Expr) and definition.op == "build_tuple":
                return definition.items[index] if index < len(definition.items) else None
            else:
                return None
        return None

    @staticmethod
    def _promoted(operands: list[tuple[str | None, bool]]) -> tuple[str | None, bool]:
        """(dtype, weak) of arithmetic, ``min`` or ``max`` over operands: a weak literal takes the other side's dtype;
        a variable met again round a loop (``s += x``, ``m = max(m, x)``: a weak unknown) leaves the others to
        decide."""
        known = [(d, w) for d, w in operands if not (d is None and w)]
        if not known or any(d is None or is_aggregate(d) for d, _ in known):
            return None, False
        strong = [d for d, w in known if not w]
        if strong:
            return np.result_type(*strong).name, False
        return np.result_type(*[d for d, _ in known]).name, True

    def _typed_call_dtype(self, function: Any, call: Any) -> str | None:
        """The struct-model aggregate a call returns (a constructor, or a device function, whose struct result cannot be
        cast; docs: qualified, "Struct-model types"), typed by numba-cuda-mlir from its positional arguments' dtypes;
        None when an argument's dtype is not visible, the call does not type, or it types to anything else (a device
        function's numeric result stays no evidence: cast it; docs: concepts, "ThreadData payloads")."""
        if call.kws or call.vararg is not None:
            return None
        argtys = []
        for arg in call.args:
            dtype, _ = self._value_dtype(arg)
            if dtype is not None:
                argtys.append(nb.numba_dtype(dtype))
            elif self._is_comparison(arg):  # a struct's flag field
                argtys.append(nb.types.boolean)
            else:
                return None
        dtype = nb.call_result_dtype(self.state.typingctx, function, argtys)
        return dtype if dtype is not None and nb.held_by_value(dtype) else None

    def _is_comparison(self, var: Any) -> bool:
        return any(isinstance(d, nb.ir.Expr) and d.op == "binop" and d.fn in _COMPARISONS
                   for d in self.resolver.definitions(var.name))

    def _is_truth_value(self, var: Any) -> bool:
        """``var`` is a boolean visible before typing: a comparison, a ``not``, a ``True``/``False`` literal, a
        boolean kernel argument or an element of a boolean array (a scalar scan's ``head_flags``; docs:
        operations/scan, "Reverse and segmented scans")."""
        value = self.resolver.var(var.name)
        if isinstance(value, Obj):
            return isinstance(value.value, bool)
        if isinstance(value, ArgRef):
            return str(value.type) == "bool"
        for definition in self.resolver.definitions(var.name):
            if isinstance(definition, nb.ir.Var):
                return self._is_truth_value(definition)
            if not isinstance(definition, nb.ir.Expr):
                continue
            if definition.op == "binop" and definition.fn in _COMPARISONS:
                return True
            if definition.op == "unary" and definition.fn is operator.not_:
                return True
            if definition.op in ("getitem", "static_getitem"):
                base = self.resolver.var(definition.value.name)
                if isinstance(base, ArgRef) and isinstance(base.type, nb.types.Array):
                    return str(base.type.dtype) == "bool"
        return False

    def _site_results(self, var: Any) -> list[Any] | None:
        """The scalar result dtypes of the planned cuda.coop call that defines ``var`` (through the iterator of a
        tuple unpacking, and into a tuple the call returns inside its tuple): one for a scalar result, one per
        element of a tuple of scalars (a list for an inner tuple); None otherwise."""
        for definition in self.resolver.definitions(var.name):
            if isinstance(definition, nb.ir.Expr) and definition.op == "exhaust_iter":
                return self._site_results(definition.value)
            if isinstance(definition, nb.ir.Expr) and definition.op == "static_getitem" and \
                    isinstance(definition.index, int):  # ``(a, b), count = select(block, (x, y), flags)``
                outer = self._site_results(definition.value)
                member = outer[definition.index] if outer is not None and definition.index < len(outer) else None
                return member if isinstance(member, list) else None
            if isinstance(definition, nb.ir.Expr) and definition.op == "call":
                stmt = self.resolver.stmt_of.get(id(definition))
                for site in self.sites:
                    if site.stmt is stmt:
                        outs: list[str | None] = [p.dtype for p in site.site.params if p.abi is Abi.OUT]
                        made = self.constructor_stmts.get(id(stmt))
                        if isinstance(made, PayloadTuple) and (made.scalars or made.inner):  # scalars among payloads
                            flat: list[Any] = [outs[made.scalars.index(place)] if place in made.scalars else None
                                               for place in range(made.flat_size)]
                            return [flat[:made.inner], *flat[made.inner:]] if made.inner else flat
                        return outs or ([site.site.result_dtype] if site.site.result_dtype else None)
        return None


def _line_of(evidence: tuple[str, str]) -> int:
    """The line an evidence's place names (``"cuda.coop.load at line 12"``)."""
    _, _, line = evidence[1].rpartition("line ")
    return int(line) if line.isdigit() else 0
