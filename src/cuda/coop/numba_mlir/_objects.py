"""What a kernel's cuda.coop objects are made of, as the planner reads them from numba IR: the arguments of a
constructor call bound to its Python signature, compile-time values, ThreadData (and one-dimensional local arrays as
payloads) and TempStorage descriptors, checked by the call layer's shared rules (``_calls.objects``). ``KernelPlan``
mixes this in; ``_planner`` decides which constructor a call is."""
from __future__ import annotations

import inspect
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from .._calls.binding import binding_error, value_words
from .._calls.objects import is_extent, temp_storage, thread_data, with_defaults
from .._errors import CoopTypeError, located
from .._semantics.aggregates import is_aggregate
from .._semantics.common import Runtime, require_alignment
from . import _compat as nb, _patches
from ._about import BACKEND, LACKS, NAMESPACE
from ._inference import no_array_of
from ._ir import UNKNOWN, ArgRef, DescVal, LOCAL_ARRAY, Obj, PayloadVal, arguments_of, dtype_of_object
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
        arguments = arguments_of(value)  # none for a constant (an Obj, above), None for a run-time value
        if arguments:
            # Specialise the kernel on these integer arguments (its launches then literalise them: memoised)
            # (docs: concepts, "Compile-time values and specialisation").
            _patches.install(_patches.AT_FIRST_LITERAL)
            request = nb.ForceLiteralArg(set(arguments), loc=stmt.loc)
            request.coop_what = what or "a compile-time value"  # H4 names it where the argument comes as a type
            raise request
        if must:
            raise CoopTypeError(f"{what} must be a compile-time value")
        return Runtime(nb.dtype_name(value.type) if isinstance(value, ArgRef) else None)

    def _thread_data(self, stmt: Any, marker: Any) -> PayloadVal:
        bound = self._bind(stmt, marker.__new__, "cuda.coop.ThreadData", skip_self=True)
        given = with_defaults(marker.__new__, bound)

        def value(key: str) -> Any:  # read when the shared checks ask for it: the first mistake is reported
            if key != "items_per_thread":
                return self._static(given[key], stmt, f"ThreadData {key}")
            k = self._static(given[key], stmt, "cuda.coop.ThreadData items_per_thread", must=False)
            if not is_extent(k):
                self.reject_literal_unroll_of(given[key], "cuda.coop.ThreadData items_per_thread")
            return k

        spec = thread_data(_Lazy(value, given), dtype_of_object=dtype_of_object, dtype_words=self.dtype_words)
        payload = PayloadVal(stmt, stmt.target.name, spec.items_per_thread, spec.dtype, spec.dtype is not None,
                             stmt.loc)
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
        values = {}
        for key, var in with_defaults(marker.__new__, bound).items():
            value = self._static(var, stmt, f"TempStorage {key}", must=False)
            if isinstance(value, Runtime):  # H3 where a literal_unroll loop feeds it, else S5
                self.reject_literal_unroll_of(var, f"cuda.coop.TempStorage {key}")
                raise CoopTypeError(f"TempStorage {key} must be a compile-time value")
            values[key] = value
        result = DescVal(temp_storage(len(self.descriptors), values), stmt, stmt.loc)
        self.descriptors.append(result)
        return result


class _Lazy(Mapping[str, Any]):
    """The arguments of a constructor, each read by ``read(key)`` when first asked for."""

    def __init__(self, read: Callable[[str], Any], keys: Mapping[str, Any]):
        self._read, self._keys, self._values = read, keys, dict[str, Any]()

    def __getitem__(self, key: str) -> Any:
        if key not in self._values:
            self._values[key] = self._read(key)
        return self._values[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys)

    def __len__(self) -> int:
        return len(self._keys)
