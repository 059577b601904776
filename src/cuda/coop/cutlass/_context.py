"""The CuTe DSL backend's call context: one ``KernelTracer`` per traced kernel receives every cuda.coop call executed
while CuTe traces it, binds it to its documented signature and plans it with the shared family modules
(``cuda.coop._calls``) over the values of ``_values``, as the call layer's ``CallContext``; ``_emit`` emits each
planned call at once. The trace-finalize hook (``_link``) then builds the kernel's C++ with the shared build session,
places the scratch and links or attaches the calls.
"""
from __future__ import annotations

import importlib
import inspect
from typing import Any, Iterator, Sequence

import numpy as np

from .._backend_context import BackendContext, MarkerCall
from .._calls import front
from .._calls.binding import bind_arguments, literal_words, operator_failure
from .._calls.build import scratch_use
from .._calls.objects import FACTORIES, bind_constructor, factory_group, plan_query, temp_storage, thread_data
from .._calls.site import Emission, SiteCall
from .._cub.families import groups as cub_groups
from .._markers import temp_storage as _ts_markers
from .._markers.records import extension
from .._errors import CoopError, CoopTypeError, CoopUnsupportedError, CoopValueError, located, plain_text
from .._version import __version__
from .._semantics.common import (
    BLOCK, CLUSTER, GRID, LOGICAL_WARP, THREAD, WARP, WARPS_IN_BLOCK, LaunchShape, Runtime, Static, check_block_shape,
    check_payload_extent,
)
from .._semantics.tuples import fields, is_tuple
from . import _about, _callbacks, _dsl
from ._emit import KernelPlan, Planned, emit, operand_type
from ._route import route
from ._values import (
    Call, PayloadPair, Slot, Storage, ThreadData, ThreadGroup, caller_site, describe, function_at, made_at, name_at,
    number_dtype, require_payload_dtype, static_value,
)

# rank and count are signed here (docs: cutlass, "What the kernel may hold"): SPEC 3.4's unsigned type -> CuTe's
_SIGNED = {"uint32": "int32", "uint64": "int64"}
# nesting order of group kinds and query levels (a smaller number is a finer unit)
_ORDER = {THREAD: 0, LOGICAL_WARP: 1, WARP: 2, WARPS_IN_BLOCK: 3, BLOCK: 4, CLUSTER: 5, GRID: 6}


# ---- the tracer of each kernel being traced
_tracers: dict[str, "KernelTracer"] = {}


def tracer_for(kernel: Any) -> "KernelTracer":
    name = _dsl.kernel_name(kernel)
    tracer = _tracers.get(name)
    if tracer is None or tracer.kernel != kernel:
        tracer = _tracers[name] = KernelTracer(kernel)
    return tracer


def take_tracers(names: list[str]) -> list["KernelTracer"]:
    return [_tracers.pop(name) for name in names if name in _tracers]


class KernelTracer:
    """The tracer and the ``CallContext`` of one traced kernel."""

    compiler = "the CuTe DSL"
    dtype_words = "a NumPy scalar type or a CuTe numeric type (cutlass.Int32, ...)"

    def __init__(self, kernel: Any):
        self.kernel = kernel
        self.name = _dsl.kernel_name(kernel)
        self.gpu_module = _dsl.gpu_module_of(kernel)
        self.cc = _dsl.compute_capability()
        self.route = route()
        # the kernel's Python function (the DSL's symbol is mangled from it and its arguments' types)
        self.python_name: str | None = _dsl.kernel_function_name(kernel)
        self._marker: str = "cuda.coop"  # the marker being planned (G23 may be found by a group factory)
        self._launch: LaunchShape | None = None
        self._cluster: tuple[int, int, int] | None = None
        self.plan = KernelPlan()
        self._call: Call | None = None
        # G21: query symbols whose result differs between members -> (whether it differs within a warp, words, the
        # group whose own calls may sit under it: its is_member())
        self.varying: dict[str, tuple[bool, str, Any]] = {}
        # the scalars cooperative calls returned: assigned into a payload they convert, as on numba-cuda-mlir, where a
        # call's result is no dtype evidence (docs: concepts, "ThreadData payloads"); kept alive, so ids stay theirs
        self.scalar_results: dict[int, Any] = {}

    @property
    def launch(self) -> LaunchShape:
        if self._launch is None:
            block = _dsl.launch_dim(self.kernel, "block")
            if block is None:
                raise CoopValueError(f"{self._marker} needs the block shape of kernel {self.python_name or self.name} "
                                     "at compile time; pass block= as constants to .launch()")
            shape = tuple(int(b) for b in block)
            check_block_shape(self.python_name or self.name, shape)  # G22
            self._launch = LaunchShape(shape)  # type: ignore[arg-type]
        return self._launch

    def cluster_shape(self) -> tuple[int, int, int]:
        """The launch's cluster shape, which an operation on a cluster group is built for (docs: cutlass, "What the
        kernel may hold"): constants in ``.launch(cluster=...)``, or (1, 1, 1) for a launch without clusters; else
        G23."""
        if self._cluster is None:
            shape = _dsl.launch_dim(self.kernel, "cluster")
            if shape is None:
                raise CoopValueError(f"{self._marker} needs the cluster shape of kernel "
                                     f"{self.python_name or self.name} at compile time; pass cluster= as constants to "
                                     ".launch()")
            self._cluster = (int(shape[0]), int(shape[1]), int(shape[2]))
        return self._cluster

    # the tracer side: every marker executed while CuTe traces this kernel arrives here
    def call(self, marker_call: MarkerCall) -> Any:
        if self.python_name is None and marker_call.site is not None:
            self.python_name = function_at(marker_call.site)
        self._marker = f"{marker_call.namespace}.{marker_call.name}"
        try:
            return self._call_marker(marker_call)
        except CoopError as exc:
            raise located(exc, marker_call.site) from None

    def _call_marker(self, marker_call: MarkerCall) -> Any:
        name = marker_call.name
        args = tuple(_dsl.plain_builtin(a) for a in marker_call.args)  # binary_op=min in a kernel
        kwargs = {k: _dsl.plain_builtin(v) for k, v in marker_call.kwargs.items()}
        if name in FACTORIES:  # C5 for any argument: a factory takes none
            bind_arguments(f"{marker_call.namespace}.{name}", inspect.signature(_marker(name, marker_call.namespace)),
                           args, kwargs, namespace=_about.NAMESPACE, backend=_about.BACKEND)
            return ThreadGroup(factory_group(name, self.launch), self)
        if name in ("ThreadData", "TempStorage"):  # bound to the documented signature, as numba-cuda-mlir does
            values = bind_constructor(f"{marker_call.namespace}.{name}", _marker(name, marker_call.namespace), args,
                                      kwargs, namespace=_about.NAMESPACE, backend=_about.BACKEND)
            if name == "ThreadData":
                return ThreadData._of(self._new_slot(values, marker_call.site))
            descriptor = temp_storage(len(self.plan.descriptors), _compile_time_values("TempStorage", values))
            self.plan.descriptors.append(descriptor)
            return Storage(descriptor)
        kwargs = {k: made_at(marker_call.site, v) for k, v in kwargs.items()}  # C16 for a callable made here
        marker = _marker(name, marker_call.namespace)
        qualified_name = f"{marker_call.namespace}.{name}"
        bound = bind_arguments(qualified_name, inspect.signature(marker), args, kwargs, namespace=_about.NAMESPACE,
                               backend=_about.BACKEND, lacks=_about.LACKS,
                               shown=lambda option: literal_words(kwargs[option]))
        call = Call(name, qualified_name, bound, marker_call.qualified, site=marker_call.site)
        self._call = call
        if isinstance(bound.get("group"), ThreadGroup):  # the group before its arguments, as numba-cuda-mlir checks it
            front.check_group(name, qualified_name, bound["group"].spec, self.launch, self.cc)
        front.check_operand_dtypes(call, self._declared_dtypes(bound))
        family = front.family_of(call, _about.BACKEND)
        front.evidence(self, call, family)
        try:
            call.result = front.result(self, call, family)
            front.plan(self, call, family, ((param, value._slot.root().dtype) for param, value in bound.items()
                                            if isinstance(value, ThreadData)))
        except CoopError:
            operands = list(call.args.values())  # then the members of tuple operands
            for value in operands + [m for v in operands if isinstance(v, tuple) for m in v]:
                # P9 is the root cause when an operand still has no dtype
                payload = value._slot.root() if isinstance(value, ThreadData) else None
                if payload is not None and payload.dtype is None:
                    raise payload.not_inferred() from None
            raise
        return self._result(call)

    def _declared_dtypes(self, bound: dict[str, Any]) -> Iterator[tuple[str, str | None]]:
        """(parameter, dtype) of the operands whose dtype the kernel declared: an explicit ThreadData dtype, a
        tensor's element type (P1/P2 before inference, as numba-cuda-mlir checks them)."""
        for param, value in bound.items():
            if isinstance(value, ThreadData) and value._slot.root().explicit:
                yield param, value._slot.root().dtype
            elif isinstance(value, _dsl.Tensor):
                yield param, _dsl.element_dtype(value)

    def _result(self, call: Call) -> Any:
        if isinstance(call.result, PayloadPair):  # the out results, in order
            outs = tuple(call.returned) if call.result.scalars else ()
            self.scalar_results.update((id(out), out) for out in outs)
            return call.result.returned(outs)
        if isinstance(call.result, Slot):
            return ThreadData._of(call.result)
        returned = call.returned
        for value in returned if isinstance(returned, tuple) else (returned,):
            self.scalar_results[id(value)] = value
        return returned

    def _new_slot(self, values: dict[str, Any], site: tuple[str, int] | None) -> Slot:
        spec = thread_data(values, dtype_of_object=self.dtype_of_object, dtype_words=self.dtype_words)
        # float16 and booleans are not built here: a common call says P1 (float16) or P2 (booleans) at its line, as
        # numba-cuda-mlir's do; making the register tensor says which dtypes this namespace builds
        name = name_at(site, r"^\s*(\w+)\s*=") if site is not None else None
        check_payload_extent(name or "payload", spec.items_per_thread, spec.dtype)
        return Slot(spec.items_per_thread, spec.dtype, spec.dtype is not None, self, site=site, name=name or "payload")

    def fragment_slot(self, tensor: Any, name: str, param: str) -> Slot:
        if not _dsl.is_register_tensor(tensor):
            raise CoopTypeError(f"{name} {param} must be a 1-D register tensor (cute.make_rmem_tensor); got "
                                f"{describe(tensor)}")
        shape, _ = _dsl.shape_and_stride(tensor)
        if len(shape) != 1 or not isinstance(shape[0], int):
            raise CoopTypeError(f"{name} {param} must be a 1-D register tensor of static extent; got "
                                f"{describe(tensor)}")
        dtype = _dsl.element_dtype(tensor)
        if dtype is None:
            raise CoopTypeError(f"{name} {param} element type {tensor.element_type} is not a supported dtype")
        require_payload_dtype(dtype)  # float16 too (a fragment's element type maps to it; not built here)
        return Slot(shape[0], dtype, True, self, fragment=_dsl.canonical_fragment(tensor, shape[0]))

    # group methods
    def query(self, method: str, group: ThreadGroup, options: dict[str, Any]) -> Any:
        """``group.method(...)`` as called (``rank_as``); ``options``: its arguments, bound with their defaults
        (``_calls.objects.bind_method``)."""
        site = caller_site()
        dtype_obj = options.get("dtype")  # None: a method without a dtype, or none passed
        try:
            spec = plan_query(method, group.spec, self.launch, level=options.get("level"), dtype=dtype_obj,
                              dtype_of_object=self.dtype_of_object, target_cc=self.cc)
        except CoopError as exc:
            raise located(exc, site) from None
        provider = cub_groups.emit(spec)
        result_dtype = spec.result_dtype
        # rank and count signed, as CuTe's indices: the C++'s result's bits (rank_as() without a dtype: as rank())
        if dtype_obj is None and method in ("rank", "count", "rank_as", "count_as") and result_dtype in _SIGNED:
            result_dtype = _SIGNED[result_dtype]
        site_call = SiteCall(provider.symbol, [], result_dtype=result_dtype)
        call = Call(method, f"ThreadGroup.{method}", {}, site=site)
        self.add_site(call, [], site_call, Emission(provider))
        if method in ("rank", "rank_as") and _ORDER[spec.level] < _ORDER[group.spec.kind]:  # differs between members
            within_warp = group.spec.is_warp_scope and spec.level == "thread"
            self.varying[provider.symbol] = (within_warp, f"the {group.spec.kind} group's rank({spec.level!r})", None)
        elif method in ("rank", "rank_as") and group.spec.kind == WARP and _ORDER[spec.level] > _ORDER[WARP]:
            # a warp's rank in its block (or coarser): one value per warp, so it differs between a block's members
            self.varying[provider.symbol] = (False, f"the {group.spec.kind} group's rank({spec.level!r})", None)
        elif method == "is_member" and not group.spec.exhaustive:  # a per-thread condition for any other group's call
            self.varying[provider.symbol] = (False, f"the {group.spec.kind} group's is_member()", group.spec)
        return call.returned

    # the CallContext side
    def group(self, call: Call) -> ThreadGroup:
        group = call.args.get("group")
        if not isinstance(group, ThreadGroup):
            raise CoopTypeError(f"{call.name} requires a compile-time ThreadGroup created by this_*() or group_by() "
                                "in this kernel")
        return group

    def tuple_operands(self, operand: Any) -> list[Any] | None:
        return list(operand) if isinstance(operand, tuple) else None

    def payload(self, operand: Any) -> Slot | None:
        if isinstance(operand, ThreadData):
            return operand._slot
        if isinstance(operand, Slot):
            return operand
        if _dsl.is_register_tensor(operand):
            call = self._call
            if call is not None and not call.qualified:  # P4: register tensors are cuda.coop.cutlass's (SPEC 12.3)
                param = next((k for k, v in call.args.items() if v is operand or
                              (isinstance(v, tuple) and any(m is operand for m in v))), "value")
                raise CoopTypeError(f"{call.name} requires a fixed-size ThreadData {param} payload in the common API; "
                                    f"use {_about.NAMESPACE} for register tensor payloads (or wrap the tensor: "
                                    f"{_about.NAMESPACE}.ThreadData.from_fragment)")
            return self.fragment_slot(operand, "a payload operand", "tensor")
        return None

    def require_payload(self, call: Call, param: str) -> Slot:
        operand = call.args.get(param)
        payload = self.payload(operand)
        if payload is None:
            if not call.qualified and extension(call.op).scalar_form and self.operand_form(operand) is None:
                # P4: one scalar a thread is a qualified payload form (SPEC 9.1, 12.3), as on numba-cuda-mlir
                raise CoopTypeError(f"{call.name} requires a fixed-size ThreadData {param} payload in the common API; "
                                    f"use {_about.NAMESPACE} for scalar payloads")
            raise CoopTypeError(f"{call.name} {param} must be a ThreadData payload; got {describe(operand)}")
        return payload

    def operand_form(self, operand: Any) -> str | None:
        if isinstance(operand, _dsl.Tensor):
            space = _dsl.memspace(operand)
            return {"gmem": "array", "smem": "shared array", "rmem": "local array"}.get(space, "array")
        return None

    def scalar_dtype(self, operand: Any, call: Call, param: str, through: tuple[str, ...] = ()) -> str:
        dtype = "bool" if isinstance(operand, bool) else number_dtype(operand)
        if dtype is None:
            raise CoopTypeError(f"{call.name} {param} must be a number, a CuTe numeric or a ThreadData; got "
                                f"{describe(operand)}")
        # float16 is not built on this backend, whatever the namespace (docs: cutlass, "Qualified options of
        # ``cuda.coop.cutlass``"); booleans go on to the operation, which says whether it takes them
        if dtype not in _dsl.NUMERIC_TYPES and dtype != "bool":
            raise CoopTypeError(f"{call.name} {param} is a {dtype} scalar; {_about.NAMESPACE} supports dtypes "
                                f"{', '.join(_dsl.NUMERIC_TYPES)}")
        return dtype

    def array_dtype(self, operand: Any) -> str | None:
        return _dsl.element_dtype(operand) if isinstance(operand, _dsl.Tensor) else None

    def descriptor(self, operand: Any, name: str) -> Storage | None:
        if operand is None:
            return None
        if isinstance(operand, _ts_markers.TempStorage):  # made outside the traced kernel (S4)
            raise CoopTypeError("TempStorage descriptors must be constructed inside the kernel or an inlined helper; "
                                f"the {name} temp_storage is not")
        if not isinstance(operand, Storage):
            raise CoopTypeError(f"{name} temp_storage must be a TempStorage descriptor constructed in the kernel with "
                                f"cuda.coop.TempStorage(); got {describe(operand)}")
        return operand

    def control(self, call: Call, key: str) -> Any:
        return self.operand_control(call.args.get(key))

    def operand_control(self, value: Any) -> Any:
        if value is None:
            return None
        if isinstance(value, _dsl.Numeric) and not isinstance(value, (int, float)):
            static, dtype = static_value(value), _dsl.DTYPE_OF_TYPE.get(type(value))
            if static is not None:  # typed, as a NumPy scalar constant is on numba-cuda-mlir (C6, C9)
                return Static(bool(static) if dtype in (None, "bool") else np.dtype(dtype).type(static))
            return Runtime(dtype)
        return Static(value)  # a NumPy scalar keeps its dtype: a typed control of another dtype is C9, as on numba

    def static(self, call: Call, key: str, default: Any, kind: str = "value") -> Any:
        value = call.args.get(key, default)
        if isinstance(value, _dsl.Numeric):
            static = static_value(value)
            if static is None:
                raise CoopTypeError(f"{call.name} {key} must be a compile-time {kind}")
            return static
        return value

    def selector(self, call: Call, key: str, default: str) -> Any:
        return self.static(call, key, default, kind="string")

    def dtype_of_object(self, value: Any) -> str | None:
        if value is int:
            return "int32"
        if value is float:
            return "float32"
        if isinstance(value, type) and value in _dsl.DTYPE_OF_TYPE:
            return _dsl.DTYPE_OF_TYPE[value]
        if isinstance(value, type) and issubclass(value, np.generic) or isinstance(value, np.dtype):
            return np.dtype(value).name  # whether an operation supports it is decided there (P1/P2)
        return None

    def holds_by_value(self, dtype: str) -> bool:
        return True

    def result_operand(self, call: Call) -> Any:
        return call.result

    def result_name(self, call: Call) -> str:
        return f"the result of {call.name}"

    def new_result_payload(self, call: Call, items_per_thread: int, like: Slot | None,
                           dtype: str | None = None) -> Slot:
        resolved = dtype or (like.root().dtype if like is not None else None)
        slot = Slot(items_per_thread, resolved, dtype is not None, self)
        if resolved is None and like is not None:
            slot.follows = like
        return slot

    def new_result_payloads(self, call: Call, likes: Sequence[Slot | None],
                            names: tuple[str, ...] = ("keys", "values"), inner: int = 0) -> PayloadPair:
        items, scalars = [], []
        for place, like in enumerate(likes):
            if like is None:  # a scalar of the returned tuple: the call's next out result
                scalars.append(place)
                continue
            slot = Slot(like.items_per_thread, like.root().dtype, False, self)
            slot.array = slot  # each result of the pair is filled through itself
            items.append(slot)
        return PayloadPair(tuple(items), tuple(scalars), inner)

    def payload_tuple(self, call: Call) -> PayloadPair:
        if not isinstance(call.result, PayloadPair):  # pragma: no cover - asked only after new_result_payloads
            raise AssertionError(f"{call.name} made no pair of result payloads")
        return call.result

    def add_evidence(self, payload: Slot, dtype: str | None, call: Call, param: str) -> None:
        root = payload.root()
        if dtype is None:
            return
        where = f"{call.name} at line {call.site[1]}" if call.site is not None else call.name
        if root.dtype is None:
            root.dtype = dtype
            root.inferred_by = where
        elif root.dtype != dtype and not root.explicit and (root.inferred_by or root.assigned_at) is not None:
            raise root.conflicting(dtype, where)
        elif root.dtype != dtype and root.fragment is None and not root.explicit:
            raise CoopTypeError(f"{call.name} {param} has dtype {dtype} but the ThreadData was inferred as "
                                f"{root.dtype}")

    def follow_dtype(self, output: Slot, source: Slot, call: Call, param: str) -> None:
        if output.root().dtype is None and output is not source:
            output.follows = source

    def link_operator(self, spec: Any, dtype: str, name: str, param: str, *, arity: int = 2, result: str | None = None,
                      state_dtype: str | None = None, extra: tuple[str, ...] = ()) -> list[Any]:
        """A user function as an operator (docs: operations/operators, "Your own function"): CuTe traces it on the
        call's numerics into a C function of the kernel's module, which the C++ calls and the route inlines. A
        StatefulFunction's op receives its state as a one-item register tensor (docs: cutlass, "Prefix
        callbacks"); ``extra``: the dtypes of the arguments after the operands (a prefix callback's has_head)."""
        if spec is None or getattr(spec, "builtin", True):
            return []
        function = spec.function
        label = getattr(function, "__qualname__", repr(function))
        if spec.by_pointer:  # pragma: no cover - float16 and aggregates are not built here (LACKS)
            raise CoopUnsupportedError(f"{name} {param} {label}: this form of user function is not implemented by the "
                                       f"cutlass backend in cuda-coop {__version__}")
        symbol = spec.name + ("_1" if arity == 1 else "")  # the C++ names a unary callback so (_cub.families.scan)
        try:
            if is_tuple(dtype):  # over a tuple of operands (_cub.tuples)
                _dsl.define_tuple_function(symbol, fields(dtype), function, self.gpu_module)
            elif state_dtype is not None:  # op(state, aggregate[, has_head])
                _dsl.define_stateful_function(symbol, state_dtype, [dtype, *extra], dtype, function, self.gpu_module)
            else:
                _dsl.define_function(symbol, [dtype] * arity + list(extra),
                                     "boolean" if result == "boolean" else dtype, function, self.gpu_module)
        except CoopError as exc:  # a cooperative call inside the operator (R1 there): callbacks are per thread
            raise CoopTypeError(f"{name} {param} {label} contains cuda.coop operations; callbacks may only do "
                                "per-thread computation") from exc
        except Exception as exc:  # the DSL could not trace it (its diagnostics are coloured for a terminal)
            text = _callbacks.without_copy_names(plain_text(str(exc)).strip())
            first = text.splitlines()[0] if text else ""
            reason = _callbacks.failure_reason(text) or f"{type(exc).__name__}: {first}"
            raise CoopTypeError(operator_failure(name, param, label, dtype, arity=arity, reason=reason,
                                                 state_dtype=state_dtype, extra=extra)) from None
        return []

    def add_site(self, call: Call, operands: list[Any], site: SiteCall, emission: Emission,
                 scratch: tuple[Any, Any] | None = None) -> None:
        if site.check is not None:
            site.check(tuple(operand_type(self, o) for o in operands))
        group = call.args.get("group")
        if isinstance(group, ThreadGroup) and group.spec.kind == CLUSTER:
            self.cluster_shape()  # G23 before the call is emitted
        use = None
        if scratch is not None:
            group, desc = scratch
            label = f"{call.name} at line {call.site[1]}" if call.site is not None else call.name
            use = scratch_use(len(self.plan.planned), group, desc.descriptor if desc else None, label)
        planned = Planned(site=site, provider=emission.provider, scratch=use,
                          without_reuse_barrier=emission.without_reuse_barrier, where=call.site)
        emit(self, call, operands, planned)
        self.plan.planned.append(planned)


def _marker(name: str, namespace: str) -> Any:
    return getattr(importlib.import_module(namespace), name)


def backend_context() -> BackendContext | None:
    """The backend context while CuTe traces a kernel (None otherwise): markers then reach that kernel's tracer."""
    kernel = _dsl.current_kernel()
    if kernel is None:
        return None
    return BackendContext(_about.BACKEND, _about.NAMESPACE, tracer_for(kernel), abi=_about.ABI,
                          dtypes_elsewhere=_about.DTYPES_ELSEWHERE)


def _compile_time_values(name: str, values: dict[str, Any]) -> dict[str, Any]:
    """A constructor's arguments as Python values: a static CuTe numeric its value (a static ``Boolean`` a bool), a
    dynamic one S5 in numba-cuda-mlir's words (the DSL's own error otherwise, when the shared checks convert it)."""
    out = {}
    for key, value in values.items():
        if isinstance(value, _dsl.Numeric) and not isinstance(value, (int, float)):
            static = static_value(value)
            if static is None:
                raise CoopTypeError(f"{name} {key} must be a compile-time value")
            value = bool(static) if _dsl.DTYPE_OF_TYPE.get(type(value)) == "bool" else static
        out[key] = value
    return out


__all__ = ["KernelTracer", "backend_context", "take_tracers", "tracer_for"]

