"""The CuTe DSL backend's tracer: every cuda.coop call executed while CuTe traces a kernel arrives here.

One ``KernelTracer`` per traced kernel implements the call layer's ``CallContext`` over the values CuTe hands the
kernel's Python (its numerics, register and global tensors), plans each call with the shared family modules
(``cuda.coop._calls``) and emits a call of the planned C function at once. The trace-finalize hook then builds the
kernel's C++ with the shared build session, places the scratch through the DSL's shared-memory allocator and marks
the module for the link step (``_link``).
"""
from __future__ import annotations

import importlib
import inspect
import linecache
import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .. import _markers
from .._markers.base import dispatch
from .._markers.thread_data import ThreadData as CommonThreadData
from .._backend_context import BackendContext, MarkerCall
from .._calls import FAMILIES
from .._calls.binding import bind_arguments, literal_words, operator_failure
from .._calls.build import PlannedCall, scratch_use
from .._calls.site import ArrayType, Emission, OperandType, SiteCall
from .._cub.by_value import PayloadParam, adapt
from .._cub.families import groups as cub_groups
from .._errors import (
    CoopError, CoopIndexError, CoopTypeError, CoopUnsupportedError, CoopValueError, located, plain_text,
)
from .._version import __version__
from .._semantics import groups as sem_groups
from .._semantics.common import (
    BLOCK, CLUSTER, GRID, LOGICAL_WARP, THREAD, WARP, WARPS_IN_BLOCK, LaunchShape, Runtime, Static,
    check_block_shape, check_payload_dtype, check_payload_extent,
)
from .._semantics.temp_storage import make_descriptor
from .._semantics.tuples import fields, is_tuple
from . import _about, _dsl
from ._route import route

# rank and count are signed here (docs: cutlass, "What the kernel may hold"): SPEC 3.4's unsigned type -> CuTe's
_SIGNED = {"uint32": "int32", "uint64": "int64"}
# nesting order of group kinds and query levels (a smaller number is a finer unit)
_ORDER = {THREAD: 0, LOGICAL_WARP: 1, WARP: 2, WARPS_IN_BLOCK: 3, BLOCK: 4, CLUSTER: 5, GRID: 6}
FACTORIES = {"this_thread": THREAD, "this_warp": WARP, "this_block": BLOCK, "this_cluster": CLUSTER,
             "this_grid": GRID}


# ---- what the kernel's Python holds
@dataclass(eq=False)
class Slot:
    """A payload as the call layer sees it (the ``Payload`` protocol)."""

    items_per_thread: int
    dtype: str | None
    explicit: bool
    tracer: "KernelTracer"
    fragment: Any = None  # the register tensor, once the dtype is known
    array: Any = None
    follows: "Slot | None" = None
    site: tuple[str, int] | None = None  # where the kernel made it (ThreadData(...)), for P9
    uncarried: bool = False  # not carried through traced regions (see ThreadData.__extract_mlir_values__)

    def root(self) -> "Slot":
        slot = self
        while slot.follows is not None:
            slot = slot.follows
        return slot

    def not_inferred(self) -> CoopError:
        """P9, at the line that made the payload: nothing before its first use said its dtype."""
        error = CoopTypeError("could not infer the dtype of ThreadData before its first use; pass dtype= or load "
                              "into it (or assign values of known type, e.g. cutlass.Int32(x)) first")
        return located(error, self.site) if self.site is not None else error

    def materialise(self) -> Any:
        if self.fragment is None:
            dtype = self.root().dtype
            if dtype is None:
                raise self.root().not_inferred()
            require_payload_dtype(dtype)
            self.dtype = dtype
            self.fragment = _dsl.make_fragment(self.items_per_thread, dtype, self.tracer.kernel)
        return self.fragment


class ThreadData:
    """``ThreadData(items_per_thread, dtype=None, *, alignment=None)``: a payload in a CuTe kernel,
    ``items_per_thread`` items of one dtype in a register tensor (``.fragment``), as ``cuda.coop.ThreadData``.

    ``dtype`` is a NumPy type or a CuTe numeric type (``cutlass.Int32`` ...); ``None``: inferred from a ``load``
    source, a ``store`` destination or a typed assignment. ``ThreadData.from_fragment(tensor)`` wraps a 1-D register
    tensor of static extent instead.
    """

    __module__ = "cuda.coop.cutlass"
    _slot: Slot

    def __new__(cls, *args: Any, **kwargs: Any) -> "ThreadData":
        # the same marker as cuda.coop.ThreadData (and its signature), in this backend's namespace (R11 in another
        # backend's kernel)
        return dispatch("ThreadData", _about.NAMESPACE, args, kwargs)  # type: ignore[no-any-return]

    @classmethod
    def _of(cls, slot: Slot) -> "ThreadData":
        """The kernel value of a payload (what the markers return)."""
        made = object.__new__(cls)
        made._slot = slot
        return made

    @property
    def items_per_thread(self) -> int:
        return self._slot.items_per_thread

    @property
    def dtype(self) -> Any:
        """The CuTe numeric type of the items (None while not inferred)."""
        dtype = self._slot.root().dtype
        return None if dtype is None else _dsl.NUMERIC_TYPES.get(dtype, _dsl.OTHER_TYPES.get(dtype))

    @property
    def fragment(self) -> Any:
        """The register tensor holding the items (1-D, static extent)."""
        return self._slot.materialise()

    def __len__(self) -> int:
        return self._slot.items_per_thread

    def _index(self, index: Any) -> Any:
        """P16: a literal index is within ``-K .. K-1`` (a negative one counts from the end, as in Python)."""
        if isinstance(index, (int, np.integer)) and not isinstance(index, bool):
            k = self._slot.items_per_thread
            if not -k <= index < k:
                site = _caller_site()
                name = _name_at(site, r"(\w+)\s*\[") or "payload"
                raise located(CoopIndexError(f"ThreadData {name} index {int(index)} is out of range for "
                                             f"items_per_thread {k}"), site)
            return int(index) % k
        return index

    def __getitem__(self, index: Any) -> Any:
        return self._slot.materialise()[self._index(index)]

    def __setitem__(self, index: Any, value: Any) -> None:
        slot = self._slot
        index = self._index(index)
        if slot.root().dtype is None:  # a typed assignment gives the dtype (docs: concepts, "ThreadData payloads")
            dtype = _value_dtype(value)
            if dtype is not None:
                slot.root().dtype = dtype
        fragment = slot.materialise()
        # converted to the payload's dtype, as numba-cuda-mlir converts it (docs: concepts, "ThreadData payloads"):
        # the DSL refuses a store of another type
        dtype = _dsl.element_dtype(fragment)
        fragment[index] = _dsl.converted(value, dtype) if dtype in _dsl.NUMERIC_TYPES else value

    def __repr__(self) -> str:
        return f"<cuda.coop ThreadData {self.items_per_thread} x {self._slot.root().dtype}>"

    # CuTe carries values assigned in a traced loop or branch through its region: a ThreadData is its register tensor
    # A payload whose dtype is not known when a loop or branch starts (typed assignments in its body give it) is not
    # carried: its register tensor is allocated at the kernel's entry, so the region reads and writes the same
    # registers, and it stays uncarried in every later region so that each region's structure stays the same.
    def __extract_mlir_values__(self) -> Any:
        root = self._slot.root()
        if root.uncarried or (self._slot.fragment is None and root.dtype is None):
            root.uncarried = True
            return []
        return self._slot.materialise().__extract_mlir_values__()

    def __new_from_mlir_values__(self, values: Any) -> "ThreadData":
        slot = self._slot
        if slot.root().uncarried:
            return self
        view = Slot(slot.items_per_thread, slot.root().dtype, True, slot.tracer,
                    fragment=slot.materialise().__new_from_mlir_values__(values), follows=slot)
        return ThreadData._of(view)

    @classmethod
    def from_fragment(cls, tensor: Any) -> "ThreadData":
        """Wrap a 1-D register tensor of static extent (no copy): calls read and write its items."""
        tracer = current_tracer("cuda.coop.cutlass.ThreadData.from_fragment")
        try:
            return ThreadData._of(tracer.fragment_slot(tensor, "ThreadData.from_fragment", "tensor"))
        except CoopError as exc:
            raise located(exc, _caller_site()) from None


setattr(ThreadData.__new__, "__signature__", inspect.signature(CommonThreadData.__new__))  # cuda.coop.ThreadData's


class ThreadGroup:
    """A group inside a CuTe kernel; its methods are planned like the numba-cuda-mlir backend's."""

    __module__ = "cuda.coop.cutlass"

    def __init__(self, spec: Any, tracer: "KernelTracer"):
        self.spec = spec
        self._tracer = tracer

    # CuTe may carry a group through a traced ``if`` or loop: it holds no run-time value
    def __extract_mlir_values__(self) -> list[Any]:
        return []

    def __new_from_mlir_values__(self, values: list[Any]) -> "ThreadGroup":
        return self

    def group_by(self, count: int, /, *, exhaustive: bool = True) -> "ThreadGroup":
        try:
            return ThreadGroup(sem_groups.group_by(self.spec, count, exhaustive, self._tracer.launch), self._tracer)
        except CoopError as exc:
            raise located(exc, _caller_site()) from None

    def rank(self, level: str = "thread") -> Any:
        return self._tracer.query("rank", self, level, None)

    def count(self, level: str = "thread") -> Any:
        return self._tracer.query("count", self, level, None)

    def rank_as(self, dtype: Any = None, level: str = "thread") -> Any:
        return self._tracer.query("rank", self, level, dtype)

    def count_as(self, dtype: Any = None, level: str = "thread") -> Any:
        return self._tracer.query("count", self, level, dtype)

    def is_member(self) -> Any:
        return self._tracer.query("is_member", self, "thread", None)

    def sync(self) -> None:
        self._tracer.query("sync", self, "thread", None)

    def sync_aligned(self) -> None:
        self._tracer.query("sync_aligned", self, "thread", None)


@dataclass(eq=False)
class Storage:
    descriptor: Any

    def __extract_mlir_values__(self) -> list[Any]:  # carried like a group: no run-time value
        return []

    def __new_from_mlir_values__(self, values: list[Any]) -> "Storage":
        return self


@dataclass(frozen=True)
class PayloadPair:
    items: tuple[Slot, ...]


@dataclass
class Call:
    op: str
    name: str
    args: dict[str, Any]
    qualified: bool = False
    result: Any = None
    returned: Any = None
    site: tuple[str, int] | None = None


@dataclass
class Planned(PlannedCall):
    call_op: Any = None
    scratch_operand: int | None = None
    stride_operand: int | None = None
    in_loop: bool = False
    where: tuple[str, int] | None = None  # the user's file and line of the call


@dataclass
class KernelPlan:
    planned: list[Planned] = field(default_factory=list)
    descriptors: list[Any] = field(default_factory=list)


def _caller_site() -> tuple[str, int]:
    frame = inspect.currentframe()
    here = __file__
    while frame is not None and frame.f_code.co_filename == here:
        frame = frame.f_back
    return (frame.f_code.co_filename, frame.f_lineno) if frame is not None else ("<kernel>", 0)


def _name_at(site: tuple[str, int], pattern: str) -> str | None:
    """The variable ``pattern`` finds on the source line ``site`` (messages name payloads as the user does)."""
    found = re.search(pattern, linecache.getline(*site))
    return found.group(1) if found else None


def _function_at(site: tuple[str, int]) -> str | None:
    """The name of the function executing ``site`` (file, line) on the current stack: the kernel's Python name."""
    frame = inspect.currentframe()
    while frame is not None:
        if (frame.f_code.co_filename, frame.f_lineno) == site:
            return frame.f_code.co_name
        frame = frame.f_back
    return None


def _enclosing_if(site: tuple[str, int] | None) -> str | None:
    """``file:line`` of the ``if`` whose body holds the call at ``site`` (CuTe keeps no location on it)."""
    if site is None:
        return None
    filename, line = site
    text = linecache.getline(filename, line)
    indent = len(text) - len(text.lstrip())
    for number in range(line - 1, 0, -1):
        above = linecache.getline(filename, number)
        stripped = above.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if len(above) - len(above.lstrip()) < indent:
            if stripped.startswith(("if ", "elif ", "else")):
                return f"{filename}:{number}"
            indent = len(above) - len(above.lstrip())
            if stripped.startswith(("def ", "@")):
                return None
    return None


def require_payload_dtype(dtype: str) -> None:
    """A payload of this backend holds one of the ten numeric dtypes (float16 and booleans are not built)."""
    if dtype not in _dsl.NUMERIC_TYPES:
        raise CoopTypeError(f"{_about.NAMESPACE} payloads support dtypes {', '.join(_dsl.NUMERIC_TYPES)}; got {dtype}")


def _number_dtype(value: Any) -> str | None:
    """A scalar operand's dtype: a CuTe numeric's or NumPy scalar's own, a Python int int32 and a float float32
    (as CuTe's ``as_numeric``); None for anything else, booleans included."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return "int32"
    if isinstance(value, float):
        return "float32"
    return _value_dtype(value)


def _value_dtype(value: Any) -> str | None:
    if isinstance(value, _dsl.Numeric):
        return _dsl.DTYPE_OF_TYPE.get(type(value))
    if isinstance(value, np.generic):
        return value.dtype.name
    return None


# ---- the tracer
_tracers: dict[str, "KernelTracer"] = {}


def current_tracer(what: str) -> "KernelTracer":
    kernel = _dsl.current_kernel()
    if kernel is None:
        raise _markers.base.kernel_only(what)
    return tracer_for(kernel)


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
        self.plan = KernelPlan()
        self._call: Call | None = None
        # query symbols whose result differs between members -> (whether it differs within a warp, words)
        self.varying: dict[str, tuple[bool, str]] = {}

    @property
    def launch(self) -> LaunchShape:
        if self._launch is None:
            block = _dsl.block_dim(self.kernel)
            if block is None:
                raise CoopValueError(f"{self._marker} needs the block shape of kernel {self.python_name or self.name} "
                                     "at compile time; pass block= as constants to .launch()")
            shape = tuple(int(b) for b in block)
            check_block_shape(self.python_name or self.name, shape)  # G22
            self._launch = LaunchShape(shape)  # type: ignore[arg-type]
        return self._launch

    # the tracer side: every marker executed while CuTe traces this kernel arrives here
    def call(self, marker_call: MarkerCall) -> Any:
        if self.python_name is None:
            self.python_name = _function_at(marker_call.site)
        self._marker = f"{marker_call.namespace}.{marker_call.name}"
        try:
            return self._call_marker(marker_call)
        except CoopError as exc:
            raise located(exc, marker_call.site) from None

    def _call_marker(self, marker_call: MarkerCall) -> Any:
        name = marker_call.name
        args = tuple(_dsl.plain_builtin(a) for a in marker_call.args)  # binary_op=min in a kernel
        kwargs = {k: _dsl.plain_builtin(v) for k, v in marker_call.kwargs.items()}
        if name in FACTORIES:
            return ThreadGroup(sem_groups.factory_group(FACTORIES[name], self.launch), self)
        if name in ("ThreadData", "TempStorage"):  # bound to the documented signature, as numba-cuda-mlir does
            signature = inspect.signature(getattr(_marker(name, marker_call.namespace), "__new__"))
            bound = bind_arguments(f"{marker_call.namespace}.{name}", signature, (None, *args), kwargs,
                                   namespace=_about.NAMESPACE, backend=_about.BACKEND, skipped=1)
            values = {p.name: bound.get(p.name, p.default) for p in list(signature.parameters.values())[1:]}
            if name == "ThreadData":
                return ThreadData._of(self._new_slot((values["items_per_thread"], values["dtype"]),
                                                     {"alignment": values["alignment"]}, marker_call.site))
            return self._temp_storage((values["size_in_bytes"],),
                                      {key: values[key] for key in ("alignment", "auto_sync", "sharing")})
        marker = _marker(name, marker_call.namespace)
        qualified_name = f"{marker_call.namespace}.{name}"
        bound = bind_arguments(qualified_name, inspect.signature(marker), args, kwargs, namespace=_about.NAMESPACE,
                               backend=_about.BACKEND, lacks=_about.LACKS,
                               shown=lambda option: literal_words(kwargs[option]))
        call = Call(name, qualified_name, bound, marker_call.qualified, site=marker_call.site)
        self._call = call
        for param, value in bound.items():  # P1/P2 of an explicit payload dtype, first (as numba-cuda-mlir checks)
            if isinstance(value, ThreadData) and value._slot.root().explicit:
                check_payload_dtype(call.name, param, value._slot.root().dtype, call.qualified)
        family = FAMILIES[name]
        if hasattr(family, "evidence"):
            family.evidence(self, call)
        try:
            if hasattr(family, "result_payload"):
                call.result = family.result_payload(self, call)
            family.plan(self, call)
        except CoopError:
            for value in call.args.values():  # P9 is the root cause when an operand still has no dtype
                payload = value._slot.root() if isinstance(value, ThreadData) else None
                if payload is not None and payload.dtype is None:
                    raise payload.not_inferred() from None
            raise
        return self._result(call)

    def _result(self, call: Call) -> Any:
        if isinstance(call.result, PayloadPair):
            return tuple(ThreadData._of(slot) for slot in call.result.items)
        if isinstance(call.result, Slot):
            return ThreadData._of(call.result)
        return call.returned

    def _new_slot(self, args: tuple[Any, ...], kwargs: dict[str, Any], site: tuple[str, int]) -> Slot:
        k = args[0]
        if isinstance(k, np.integer):
            k = int(k)
        if not isinstance(k, int) or isinstance(k, bool):
            raise CoopTypeError("ThreadData items_per_thread must be a compile-time integer")
        if k <= 0:
            raise CoopValueError("ThreadData items_per_thread must be positive")
        dtype_obj = args[1] if len(args) > 1 else None
        dtype = None
        if dtype_obj is not None:
            dtype = self.dtype_of_object(dtype_obj)
            if dtype is None:
                raise CoopTypeError(f"ThreadData dtype must be {self.dtype_words}; got {dtype_obj!r}")
        if dtype in _dsl.OTHER_TYPES:  # numba-cuda-mlir's qualified dtypes: not built here (others: the call's P2)
            require_payload_dtype(dtype)
        check_payload_extent(_name_at(site, r"^\s*(\w+)\s*=") or "payload", k, dtype)
        return Slot(k, dtype, dtype is not None, self, site=site)

    def fragment_slot(self, tensor: Any, name: str, param: str) -> Slot:
        if not _dsl.is_register_tensor(tensor):
            raise CoopTypeError(f"{name} {param} must be a 1-D register tensor (cute.make_rmem_tensor); got "
                                f"{_describe(tensor)}")
        shape, _ = _dsl.shape_and_stride(tensor)
        if len(shape) != 1 or not isinstance(shape[0], int):
            raise CoopTypeError(f"{name} {param} must be a 1-D register tensor of static extent; got "
                                f"{_describe(tensor)}")
        dtype = _dsl.element_dtype(tensor)
        if dtype is None:
            raise CoopTypeError(f"{name} {param} element type {tensor.element_type} is not a supported dtype")
        return Slot(shape[0], dtype, True, self, fragment=_dsl.canonical_fragment(tensor, shape[0]))

    def _temp_storage(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Storage:
        descriptor = make_descriptor(len(self.plan.descriptors), args[0] if args else None,
                                     kwargs.get("alignment"), kwargs.get("auto_sync", True), kwargs.get("sharing"))
        self.plan.descriptors.append(descriptor)
        return Storage(descriptor)

    # group methods
    def query(self, method: str, group: ThreadGroup, level: Any, dtype_obj: Any) -> Any:
        site = _caller_site()
        try:
            dtype = None if dtype_obj is None else self.dtype_of_object(dtype_obj)
            if dtype_obj is not None and dtype is None:
                raise CoopTypeError(f"ThreadGroup.{method}_as dtype must be an integer dtype; got {dtype_obj!r}")
            spec = sem_groups.plan_query(method, group.spec, self.launch, level, dtype, self.cc)
        except CoopError as exc:
            raise located(exc, site) from None
        provider = cub_groups.emit(spec)
        result_dtype = spec.result_dtype
        if dtype is None and method in ("rank", "count"):  # signed, as CuTe's indices; the C++'s result's bits
            result_dtype = _SIGNED.get(result_dtype, result_dtype)
        site_call = SiteCall(provider.symbol, [], result_dtype=result_dtype)
        call = Call(method, f"ThreadGroup.{method}", {}, site=site)
        self.add_site(call, [], site_call, Emission(provider))
        if method == "rank" and _ORDER[spec.level] < _ORDER[group.spec.kind]:  # differs between the members
            within_warp = group.spec.is_warp_scope and spec.level == "thread"
            self.varying[provider.symbol] = (within_warp, f"the {group.spec.kind} group's rank({spec.level!r})")
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
            return self.fragment_slot(operand, "a payload operand", "tensor")
        return None

    def require_payload(self, call: Call, param: str) -> Slot:
        payload = self.payload(call.args.get(param))
        if payload is None:
            raise CoopTypeError(f"{call.name} {param} must be a ThreadData payload; got "
                                f"{_describe(call.args.get(param))}")
        return payload

    def operand_form(self, operand: Any) -> str | None:
        if isinstance(operand, _dsl.Tensor):
            space = _dsl.memspace(operand)
            return {"gmem": "array", "smem": "shared array", "rmem": "local array"}.get(space, "array")
        return None

    def scalar_dtype(self, operand: Any, call: Call, param: str, through: tuple[str, ...] = ()) -> str:
        dtype = "bool" if isinstance(operand, bool) else _number_dtype(operand)
        if dtype is None:
            raise CoopTypeError(f"{call.name} {param} must be a number, a CuTe numeric or a ThreadData; got "
                                f"{_describe(operand)}")
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
        if not isinstance(operand, Storage):
            raise CoopTypeError(f"{name} temp_storage must be a cuda.coop.TempStorage; got {_describe(operand)}")
        return operand

    def control(self, call: Call, key: str) -> Any:
        value = call.args.get(key)
        if value is None:
            return None
        if isinstance(value, _dsl.Numeric) and not isinstance(value, (int, float)):
            static = _static_value(value)
            if static is not None:
                return Static(static)
            return Runtime(_dsl.DTYPE_OF_TYPE.get(type(value)))
        if isinstance(value, np.generic):
            return Static(value.item())
        return Static(value)

    def static(self, call: Call, key: str, default: Any, kind: str = "value") -> Any:
        value = call.args.get(key, default)
        if isinstance(value, _dsl.Numeric):
            static = _static_value(value)
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

    def new_result_payloads(self, call: Call, likes: list[Slot],
                            names: tuple[str, ...] = ("keys", "values")) -> PayloadPair:
        items = []
        for like in likes:
            slot = Slot(like.items_per_thread, like.root().dtype, False, self)
            slot.array = slot  # each result of the pair is filled through itself
            items.append(slot)
        return PayloadPair(tuple(items))

    def payload_tuple(self, call: Call) -> PayloadPair:
        return call.result

    def add_evidence(self, payload: Slot, dtype: str | None, call: Call, param: str) -> None:
        root = payload.root()
        if dtype is None:
            return
        if root.dtype is None:
            root.dtype = dtype
        elif root.dtype != dtype and root.fragment is None and not root.explicit:
            raise CoopTypeError(f"{call.name} {param} has dtype {dtype} but the ThreadData was inferred as "
                                f"{root.dtype}")

    def follow_dtype(self, output: Slot, source: Slot, call: Call, param: str) -> None:
        if output.root().dtype is None and output is not source:
            output.follows = source

    def link_operator(self, spec: Any, dtype: str, name: str, param: str, arity: int = 2, result: str | None = None,
                      state_dtype: str | None = None) -> list[Any]:
        """A user function as an operator (docs: operations/operators, "Your own function"): CuTe traces it on the
        call's numerics into a C function of the kernel's module, which the C++ calls and the route inlines."""
        if spec is None or getattr(spec, "builtin", True):
            return []
        function = spec.function
        label = getattr(function, "__qualname__", repr(function))
        if state_dtype is not None or spec.by_pointer:  # a StatefulFunction prefix_op (numba_coop's)
            raise CoopUnsupportedError(f"{name} {param} {label}: this form of user function is not implemented by the "
                                       f"cutlass backend in cuda-coop {__version__}")
        symbol = spec.name + ("_1" if arity == 1 else "")  # the C++ names a unary callback so (_cub.families.scan)
        try:
            if is_tuple(dtype):  # over a tuple of operands (_cub.tuples)
                _dsl.define_tuple_function(symbol, fields(dtype), function, self.gpu_module)
            else:
                _dsl.define_function(symbol, [dtype] * arity, "boolean" if result == "boolean" else dtype, function,
                                     self.gpu_module)
        except CoopError as exc:  # a cooperative call inside the operator (R1 there): callbacks are per thread
            raise CoopTypeError(f"{name} {param} {label} contains a cuda.coop call ({exc}); callbacks may only do "
                                "per-thread computation") from None
        except Exception as exc:  # the DSL could not trace it (its diagnostics are coloured for a terminal)
            text = plain_text(str(exc)).strip()
            reason = f"{type(exc).__name__}: {text.splitlines()[0] if text else ''}"
            raise CoopTypeError(operator_failure(name, param, label, dtype, arity, reason)) from None
        return []

    def add_site(self, call: Call, operands: list[Any], site: SiteCall, emission: Emission,
                 scratch: tuple[Any, Any] | None = None) -> None:
        if site.check is not None:
            site.check(tuple(_operand_type(self, o) for o in operands))
        use = None
        if scratch is not None:
            group, desc = scratch
            label = f"{call.name} at line {call.site[1]}" if call.site is not None else call.name
            use = scratch_use(len(self.plan.planned), group, desc.descriptor if desc else None, label)
        planned = Planned(site=site, provider=emission.provider, scratch=use,
                          without_reuse_barrier=emission.without_reuse_barrier, where=call.site)
        self._emit(call, operands, planned)
        self.plan.planned.append(planned)

    # emission
    def _by_value(self, operands: list[Any], planned: Planned) -> list[tuple[int, Slot]]:
        """On the link route, pass the call's payloads by value (``_cub.by_value``): the call stays a call there, and
        a payload whose address is taken lives in local memory. Returns (parameter index, payload) pairs. On the
        bitcode route payloads cross by pointer, which inlining removes (clang's struct convention would not match
        the DSL's call, and a mismatched call is never inlined)."""
        if self.route == "bitcode":
            return []
        site = planned.site
        payloads = []
        for index, param in enumerate(site.params):
            slot = self.payload(operands[param.operand]) if param.abi == "ptr" and param.operand is not None else None
            if slot is not None:
                slot.materialise()
                payloads.append((index, slot))
        if not payloads:
            return []
        specs = tuple(PayloadParam(index, slot.root().dtype, slot.items_per_thread) for index, slot in payloads)
        arrays = tuple(index for index, param in enumerate(site.params) if param.abi == "ptr"
                       and isinstance(operands[param.operand], _dsl.Tensor) and _dsl.memspace(operands[param.operand])
                       == "gmem")
        planned.provider = adapt(planned.provider, specs, site.result_dtype, arrays)
        if planned.without_reuse_barrier is not None:
            emitted_again = planned.without_reuse_barrier
            planned.without_reuse_barrier = lambda: adapt(emitted_again(), specs, site.result_dtype, arrays)
        site.symbol = planned.provider.symbol
        return payloads

    def _emit(self, call: Call, operands: list[Any], planned: Planned) -> None:
        site = planned.site
        payloads = self._by_value(operands, planned)
        by_value = dict(payloads)
        values: list[Any] = []
        outs: list[tuple[Any, str]] = []
        for index, param in enumerate(site.params):
            elem_dtype = param.dtype or site.elem_dtype
            operand = operands[param.operand] if param.operand is not None else None
            if index in by_value:
                slot = by_value[index]
                value = _dsl.pack_items(slot.fragment, slot.root().dtype, slot.items_per_thread)
            elif param.abi == "ptr":
                value = self._pointer(operand)
            elif param.abi == "len":
                value = _dsl.i64(_dsl.extent(operand))
            elif param.abi == "i64":
                value = _dsl.i64(int(param.value) if operand is None else operand)
            elif param.abi == "out":
                slot = _dsl.local_slot(param.dtype, self.kernel)
                outs.append((slot, param.dtype))
                value = _dsl.tensor_pointer(slot)
            elif param.abi in ("elem", "value"):
                value = _dsl.scalar(param.value if operand is None else operand, elem_dtype)
            elif param.abi == "scratch":
                planned.scratch_operand = len(values)
                value = _dsl.null_pointer()  # the place in the backing is set once every call is planned
            elif param.abi == "stride":
                planned.stride_operand = len(values)
                value = _dsl.i64(0)
            else:  # pragma: no cover - families only use the kinds above
                raise AssertionError(param.abi)
            values.append(value)
        if site.result_dtype is not None and site.result_dtype not in _dsl.NUMERIC_TYPES:  # pragma: no cover
            raise AssertionError(site.result_dtype)
        if payloads:
            result = _dsl.results_type([(slot.root().dtype, slot.items_per_thread) for _, slot in payloads],
                                       site.result_dtype)
        else:
            result = _dsl.NUMERIC_TYPES[site.result_dtype].mlir_type if site.result_dtype is not None else None
        call_op = _dsl.call(site.symbol, values, result, self.gpu_module)
        planned.call_op = call_op.operation
        self._check_participation(call, call_op.operation)
        planned.in_loop = _dsl.inside_loop(call_op.operation)
        scalar = _dsl.result_of(call_op) if site.result_dtype is not None else None
        if payloads:
            results = _dsl.result_of(call_op)
            for field, (_, slot) in enumerate(payloads):
                _dsl.unpack_items(results, field, slot.fragment, slot.root().dtype, slot.items_per_thread)
            if site.result_dtype is not None:
                scalar = _dsl.field_of(results, len(payloads), site.result_dtype)
        if outs:
            call.returned = tuple(slot[0] for slot, _ in outs)
        elif scalar is not None:
            call.returned = _dsl.wrap(scalar, site.result_dtype)

    def _check_participation(self, call: Call, call_op: Any) -> None:
        """G21 where CuTe's traced ``if`` provably depends on the thread (docs: concepts, "Participation"): a block
        call under any thread-index condition, a warp call under a lane-id one; what cannot be classified passes."""
        group = call.args.get("group")
        if not isinstance(group, ThreadGroup) or group.spec.kind == THREAD:
            return
        kind = group.spec.kind
        sources = dict(_dsl.LANE_OPS) if group.spec.is_warp_scope else {**_dsl.THREAD_INDEX_OPS, **_dsl.LANE_OPS}
        varying = {symbol: words for symbol, (within_warp, words) in self.varying.items()
                   if within_warp or not group.spec.is_warp_scope}
        source = _dsl.divergent_condition(call_op, sources, varying)
        if source is not None:
            where = _enclosing_if(call.site) or "an if statement of the kernel"
            raise CoopValueError(f"{call.name} on {kind} groups must be reached by every member, but it is under a "
                                 f"condition that depends on {source} ({where}); use valid_items / oob_default, or "
                                 "move the condition inside the values")

    def _pointer(self, operand: Any) -> Any:
        slot = self.payload(operand)
        if slot is not None:
            return _dsl.tensor_pointer(slot.materialise())
        if isinstance(operand, _dsl.Tensor):
            return _dsl.tensor_pointer(operand)
        raise AssertionError(f"no pointer for {operand!r}")


def _marker(name: str, namespace: str) -> Any:
    return getattr(importlib.import_module(namespace), name)


def _static_value(value: Any) -> Any:
    """A CuTe numeric's value when it is a compile-time constant, else None."""
    try:
        raw = value.value
    except AttributeError:
        return None
    return raw if isinstance(raw, (int, float, bool)) else None


def _describe(value: Any) -> str:
    if isinstance(value, _dsl.Tensor):
        shape, stride = _dsl.shape_and_stride(value)
        return (f"a {_dsl.memspace(value)} tensor of {value.element_type} with shape {shape} and stride {stride}")
    if isinstance(value, ThreadData):
        return repr(value)
    return f"a {type(value).__name__}"


def _layout_kind(shape: tuple[Any, ...], stride: tuple[Any, ...]) -> str:
    """``C`` for a compact row-major layout (``(128,4):(4,1)``, and ``(n):(1)``), ``F`` for a compact column-major
    one, ``A`` for any other (a stride other than the compact one, a nested or dynamic mode)."""
    if len(shape) == 1:
        return "C" if stride[0] == 1 else "A"
    if not all(isinstance(x, int) for x in (*shape, *stride)):
        return "A"

    def compact(order: list[int]) -> bool:
        expected = 1
        for axis in order:
            if shape[axis] != 1 and stride[axis] != expected:
                return False
            expected *= shape[axis]
        return True

    axes = list(range(len(shape)))
    return "C" if compact(axes[::-1]) else "F" if compact(axes) else "A"


def _operand_type(tracer: KernelTracer, operand: Any) -> OperandType:
    if isinstance(operand, _dsl.Tensor):
        shape, stride = _dsl.shape_and_stride(operand)
        dtype = _dsl.element_dtype(operand)
        space = _dsl.memspace(operand)
        words = "" if space == "gmem" else {"smem": "shared memory", "rmem": "registers"}.get(space, f"{space} memory")
        array = ArrayType(len(shape), _layout_kind(shape, stride), dtype, str(dtype or operand.element_type), words,
                          layout_text=str(operand.layout),
                          stride=stride[0] if len(shape) == 1 and isinstance(stride[0], int) else None)
        return OperandType(_describe(operand), None, False, array)
    slot = tracer.payload(operand)
    if slot is not None:
        return OperandType(repr(operand), None, False, None)
    dtype = _number_dtype(operand)
    text = type(operand).__name__ if dtype is None else dtype
    return OperandType(text, dtype, dtype is not None, None)


def backend_context() -> BackendContext | None:
    """The backend context while CuTe traces a kernel (None otherwise): markers then reach that kernel's tracer."""
    kernel = _dsl.current_kernel()
    if kernel is None:
        return None
    return BackendContext(_about.BACKEND, _about.NAMESPACE, tracer_for(kernel), abi=_about.ABI)


__all__ = ["ThreadData", "ThreadGroup", "KernelTracer", "backend_context"]
