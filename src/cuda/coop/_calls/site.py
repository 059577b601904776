"""What a planned call becomes: the C ABI parameters of its provider and the operands that feed them.

A family's call layer describes each call as a ``SiteCall``; the backend turns that description into its
compiler's call (numba-cuda-mlir: an MLIR ``func.call``). Typing-time checks see each operand as an
``OperandType``, which the backend derives from its compiler's type, so the checks and their messages are
written once for every backend.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Callable, Mapping, TypeVar

from .._cub.provider import Abi, Provider
from .._errors import CoopTypeError
from .._semantics.common import RUNTIME_INT_DTYPES, Runtime, dtype_string_error


@dataclass(frozen=True)
class Backing:
    """The kernel's one shared-memory backing of every call's scratch: its size, alignment, and whether the
    launch supplies it (dynamic shared memory)."""

    size: int
    alignment: int
    dynamic: bool


@dataclass(frozen=True)
class Param:
    """One C ABI parameter of a planned call, in its provider's order and of its kind (``_cub.provider.CParam``,
    through ``bind``): taken from call operand ``operand`` or the constant ``value``."""

    abi: Abi
    operand: int | None = None
    value: object = 0
    dtype: str | None = None  # ELEM/VALUE: a dtype other than the site's; OUT: the dtype written


@dataclass(frozen=True)
class ArrayType:
    """An array operand as typing sees it."""

    ndim: int
    layout: str  # "C" (contiguous), "F" (Fortran-ordered) or another (non-contiguous)
    dtype: str | None  # the element's dtype name, None when no dtype names it
    dtype_text: str  # the element type as the compiler prints it
    space: str = ""  # a memory space other than global that the array lives in ("shared memory", "registers")
    layout_text: str = ""  # the layout as the kernel's language writes it ("(128,4):(4,1)"), where it has one
    stride: object = None  # a one-dimensional array's stride in elements, where typing knows it

    @property
    def contiguous(self) -> bool:
        return self.layout == "C"

    @property
    def not_a_vector(self) -> str:
        """Why the array is not one-dimensional and contiguous, in words ("" when it is)."""
        if self.ndim != 1:
            return f"it has {self.ndim} dimensions"
        if self.contiguous:
            return ""
        if self.stride is not None:
            return f"its stride is {self.stride}, not 1"
        return "its elements are not adjacent (a stride other than 1)"

    @property
    def words(self) -> str:
        """``a 2-D contiguous int32 array``: the array in words, for messages that speak Python."""
        layout = {"C": "contiguous", "F": "Fortran-ordered"}.get(self.layout, "non-contiguous")
        return f"a {self.ndim}-D {layout} {self.dtype_text} array" + (f" in {self.space}" if self.space else "")


@dataclass(frozen=True)
class OperandType:
    """One operand's type at typing time, in the terms the checks need."""

    text: str  # the type as the compiler prints it
    dtype: str | None = None  # the dtype name of a number or an aggregate, else None
    scalar: bool = False  # a number or an aggregate: what one scalar operand may be
    array: ArrayType | None = None

    @property
    def words(self) -> str:
        return self.array.words if self.array is not None else f"a {self.text}"


Check = Callable[[tuple[OperandType, ...]], None]


@dataclass
class SiteCall:
    """A planned call: the provider's symbol and parameters, and what the backend fills in when it builds."""

    symbol: str
    params: list[Param]
    elem_dtype: str | None = None
    result_dtype: str | None = None
    check: Check | None = None  # raises user errors at typing time
    ltoir: object = None
    backing: Backing | None = None
    scratch_offset: int = 0
    stride: int = 0
    loc: object = None  # the kernel source location of the call, for typing-time errors
    link: list[Any] = field(default_factory=list)  # the backend's link items for user callables


Spec = TypeVar("Spec")


@dataclass(frozen=True)
class Emission:
    """A call's provider, and how to emit it without its trailing reuse barrier (None: it has none), for the build
    session's barrier decision (``build.drop_unneeded_reuse_barriers``)."""

    provider: Provider
    without_reuse_barrier: Callable[[], Provider] | None = None


def bind(provider: Provider, operands: Mapping[str, int] | None = None,
         constants: Mapping[str, object] | None = None) -> list[Param]:
    """The call's parameters in the order of the provider's C parameters (``Provider.params``): each from the call
    operand ``operands[name]`` (its index) or the constant ``constants[name]``; scratch, stride and results need
    neither. A parameter bound to nothing, or a name the provider does not have, is a bug of the family."""
    operands, constants = operands or {}, constants or {}
    unknown = (set(operands) | set(constants)) - {param.name for param in provider.params}
    if unknown:
        raise AssertionError(f"{provider.symbol} has no C parameter {sorted(unknown)}")
    params = []
    for param in provider.params:
        if param.name in operands:
            params.append(Param(param.abi, operands[param.name], dtype=param.dtype))
        elif param.name in constants:
            params.append(Param(param.abi, None, constants[param.name], dtype=param.dtype))
        elif param.abi in (Abi.SCRATCH, Abi.STRIDE, Abi.OUT):
            params.append(Param(param.abi, dtype=param.dtype))
        else:
            raise AssertionError(f"{provider.symbol}: C parameter {param.name} is bound to nothing")
    return params


class Operands:
    """A call's operands in order, each bound to the provider's C parameter it feeds, and the constants of the C
    parameters no operand feeds."""

    def __init__(self) -> None:
        self.values: list[Any] = []
        self.bound: dict[str, int] = {}
        self.constants: dict[str, object] = {}

    def add(self, name: str, operand: Any) -> int:
        """``operand`` feeds C parameter ``name``; its index among the call's operands."""
        self.bound[name] = len(self.values)
        self.values.append(operand)
        return self.bound[name]

    def feed(self, name: str, index: int) -> None:
        """C parameter ``name`` is fed by the operand already at ``index`` too (an array and its extent)."""
        self.bound[name] = index

    def constant(self, name: str, value: object) -> None:
        self.constants[name] = value

    def control(self, name: str, control: Any, operand: Any, literal: object) -> int | None:
        """A runtime control becomes an operand (its index is returned); a static or absent one the constant
        ``literal``."""
        if isinstance(control, Runtime):
            return self.add(name, operand)
        self.constant(name, literal)
        return None

    def controls(self, args: Mapping[str, Any], controls: Mapping[str, Any], literal: Callable[[str, Any], object],
                 names: Mapping[str, str] | None = None) -> dict[str, int]:
        """Each control feeds the C parameter ``names[key]`` (by default its own name): a runtime one as the
        operand ``args[key]``, a static or absent one as the constant ``literal(key, control)``. Returns the operand
        index of each runtime control, for the typing-time checks."""
        runtime: dict[str, int] = {}
        for key, control in controls.items():
            name = names[key] if names is not None else key
            index = self.control(name, control, args.get(key),
                                 None if isinstance(control, Runtime) else literal(key, control))
            if index is not None:
                runtime[key] = index
        return runtime

    def params(self, provider: Provider) -> list[Param]:
        return bind(provider, self.bound, self.constants)


def emit(emitter: Callable[[Spec], Provider], spec: Spec) -> Emission:
    """``emitter(spec)``; a spec whose ``barrier`` is set can be emitted again with it cleared."""
    provider = emitter(spec)
    if not getattr(spec, "barrier", False):
        return Emission(provider)
    return Emission(provider, lambda: emitter(replace(spec, barrier=False)))  # type: ignore[type-var]


def require_runtime_int(name: str, param: str, ty: OperandType) -> None:
    """C6 at typing time: a runtime integer control's type (the planner could not see it)."""
    if ty.dtype not in RUNTIME_INT_DTYPES:
        raise CoopTypeError(f"{name} {param} must be a signed integer of at most 64 bits or an unsigned integer of at "
                            f"most 32 bits; got {ty.text}")


def require_payload_dtype(name: str, param: str, ty: OperandType, dtype: str) -> None:
    """C9 at typing time: a runtime typed scalar control must have exactly the payload dtype."""
    if ty.dtype != dtype:
        raise CoopTypeError(f"{name} {param} must have the payload dtype {dtype}; got {ty.text}; cast it")


def require_scalar(name: str, ty: OperandType, what: str = "a scalar or a ThreadData") -> None:
    """A scalar ``value`` operand: a number or an aggregate (docs: qualified, "User-defined aggregates")."""
    if not ty.scalar:
        raise CoopTypeError(f"{name} value must be {what}; got {ty.text}")


def not_a_vector(name: str, param: str, ty: OperandType) -> CoopTypeError:
    """P11 for an operand that is not a one-dimensional contiguous array, saying what is wrong with it: its rank or
    its stride (docs: errors, P11)."""
    why = ""
    if ty.array is not None:
        layout = f" (layout {ty.array.layout_text})" if ty.array.layout_text else ""
        why = f"{layout}: {ty.array.not_a_vector}"
    return CoopTypeError(f"{name} {param} must be a one-dimensional contiguous array; got {ty.words}{why}")


def require_vector(name: str, param: str, ty: OperandType, dtype: str, what: str, *, suffix: str = "") -> None:
    """A one-dimensional contiguous array operand of ``dtype`` (``what``: whose dtype it must match)."""
    if ty.array is not None and ty.array.space:  # P11: memory operands are global memory
        raise CoopTypeError(f"{name} {param} must be an array in global memory; got {ty.words}")
    if ty.array is None or ty.array.ndim != 1 or not ty.array.contiguous:
        raise not_a_vector(name, param, ty)
    if ty.array.dtype != dtype:
        raise CoopTypeError(f"{name} {param} dtype {ty.array.dtype_text} does not match {what} {dtype}{suffix}")


def companion_shape(ctx: Any, call: Any, key: str) -> tuple[str | None, int] | None:
    """The dtype and extent (0: a scalar) of the optional operand ``key`` (scan ``head_flags``, argmax
    ``indices``), or None when it is absent."""
    value = call.args.get(key)
    payload = ctx.payload(value) if value is not None else None
    if payload is not None:
        return (payload.dtype, payload.items_per_thread)
    if value is not None and ctx.control(call, key) is not None:
        return (ctx.scalar_dtype(value, call, key), 0)
    return None


def same_shape_result(ctx: Any, call: Any) -> Any:
    """Operations on a payload return a fresh payload of the same extent and dtype."""
    args = call.args
    payload = ctx.payload(args["value"]) if "value" in args else None
    if payload is None:
        return None
    return ctx.new_result_payload(call, payload.items_per_thread, payload)


def static_dtype_name(ctx: Any, call: Any, key: str) -> str | None:
    """A compile-time dtype option (``counter_dtype``, ``decoded_offset_dtype``): its dtype name, None when absent,
    or the repr of an object that names no dtype, which the family reports as P2. A string is P12: dtypes are named
    by their types (``np.uint64``), on every backend."""
    value = ctx.static(call, key, None, kind="dtype")
    if value is None:
        return None
    if isinstance(value, str):
        raise dtype_string_error(call.name, key, value)
    dtype = ctx.dtype_of_object(value)
    return dtype if dtype is not None else repr(value)
