"""The CuTe DSL backend's emission: a planned call (``SiteCall``) becomes a call of its C function in the kernel's
module, its operands passed by the ABI the route needs (payloads by pointer on the bitcode route, by value on the link
route), with G21 checked where the call sits under a condition that depends on the thread.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .._calls.build import PlannedCall
from .._calls.emitter import parameter_values
from .._calls.site import ArrayType, OperandType
from .._cub.by_value import PayloadParam, adapt
from .._cub.provider import Abi
from .._errors import CoopValueError
from .._semantics.common import THREAD
from . import _divergence, _dsl
from ._values import Call, Slot, ThreadGroup, describe, enclosing_statement, number_dtype


@dataclass
class Planned(PlannedCall):
    """A planned call as emitted: its call operation, and which of its operands the scratch placement sets."""

    call_op: Any = None
    scratch_operand: int | None = None
    stride_operand: int | None = None
    in_loop: bool = False
    where: tuple[str, int] | None = None  # the user's file and line of the call


@dataclass
class KernelPlan:
    """What one kernel's calls planned: the emitted calls in trace order and the explicit TempStorage."""

    planned: list[Planned] = field(default_factory=list)
    descriptors: list[Any] = field(default_factory=list)


def payloads_by_value(tracer: Any, operands: list[Any], planned: Planned) -> list[tuple[int, Slot]]:
    """On the link route, pass the call's payloads by value (``_cub.by_value``): the call stays a call there, and
    a payload whose address is taken lives in local memory. Returns (parameter index, payload) pairs. On the
    bitcode route payloads cross by pointer, which inlining removes (clang's struct convention would not match
    the DSL's call, and a mismatched call is never inlined)."""
    if tracer.route == "bitcode":
        return []
    site = planned.site
    payloads = []
    for index, param in enumerate(site.params):
        slot = tracer.payload(operands[param.operand]) if param.abi is Abi.PTR and param.operand is not None else None
        if slot is not None:
            slot.materialise()
            payloads.append((index, slot))
    if not payloads:
        return []
    specs = tuple(PayloadParam(index, slot.known_dtype(), slot.items_per_thread) for index, slot in payloads)
    arrays = tuple(index for index, param in enumerate(site.params)
                   if param.abi is Abi.PTR and param.operand is not None
                   and isinstance(operands[param.operand], _dsl.Tensor) and _dsl.memspace(operands[param.operand])
                   == "gmem")
    planned.provider = adapt(planned.provider, specs, site.result_dtype, arrays)
    if planned.without_reuse_barrier is not None:
        emitted_again = planned.without_reuse_barrier
        planned.without_reuse_barrier = lambda: adapt(emitted_again(), specs, site.result_dtype, arrays)
    site.symbol = planned.provider.symbol
    return payloads


def emit(tracer: Any, call: Call, operands: list[Any], planned: Planned) -> None:
    """Emit the call of ``planned``'s C function at the current insertion point of ``tracer``'s kernel; its result
    (a scalar, or a tuple of output slots) becomes ``call.returned``."""
    site = planned.site
    payloads = payloads_by_value(tracer, operands, planned)
    given = {index: _dsl.pack_items(slot.fragment, slot.known_dtype(), slot.items_per_thread)
             for index, slot in payloads}
    emitter = TracedEmitter(tracer, operands)
    values = parameter_values(site, emitter, given)
    for index, param in enumerate(site.params):  # values are in the parameters' order
        if param.abi is Abi.SCRATCH:
            planned.scratch_operand = index  # the place in the backing is set once every call is planned
        elif param.abi is Abi.STRIDE:
            planned.stride_operand = index
    outs = emitter.outs
    if site.result_dtype is not None and site.result_dtype not in _dsl.NUMERIC_TYPES:  # pragma: no cover
        raise AssertionError(site.result_dtype)
    if payloads:
        result = _dsl.results_type([(slot.known_dtype(), slot.items_per_thread) for _, slot in payloads],
                                   site.result_dtype)
    else:
        result = _dsl.NUMERIC_TYPES[site.result_dtype].mlir_type if site.result_dtype is not None else None
    call_op = _dsl.call(site.symbol, values, result, tracer.gpu_module)
    planned.call_op = call_op.operation
    check_participation(tracer, call, call_op.operation)
    planned.in_loop = _dsl.inside_loop(call_op.operation)
    scalar = _dsl.result_of(call_op) if site.result_dtype is not None else None
    if payloads:
        results = _dsl.result_of(call_op)
        for field, (_, slot) in enumerate(payloads):
            _dsl.unpack_items(results, field, slot.fragment, slot.known_dtype(), slot.items_per_thread)
        if site.result_dtype is not None:
            scalar = _dsl.field_of(results, len(payloads), site.result_dtype)
    if outs:
        call.returned = tuple(slot[0] for slot, _ in outs)
    elif scalar is not None and site.result_dtype is not None:  # a scalar is there only when the site returns one
        call.returned = _dsl.wrap(scalar, site.result_dtype)


def check_participation(tracer: Any, call: Call, call_op: Any) -> None:
    """G21 where CuTe's traced ``if`` provably depends on the thread (docs: concepts, "Participation"): a block
    call under any thread-index condition, a warp call under a lane-id one; what cannot be classified passes."""
    group = call.args.get("group")
    if not isinstance(group, ThreadGroup) or group.spec.kind == THREAD:
        return
    kind = group.spec.kind
    sources = dict(_dsl.LANE_OPS) if group.spec.is_warp_scope else {**_dsl.THREAD_INDEX_OPS, **_dsl.LANE_OPS}
    varying = {symbol: words for symbol, (within_warp, words, owner) in tracer.varying.items()
               if (within_warp or not group.spec.is_warp_scope) and owner != group.spec}
    divergent = _divergence.divergent_condition(call_op, sources, varying)
    if divergent is not None:
        source, in_loop = divergent
        where = enclosing_statement(call.site, ("for ", "while ") if in_loop else ("if ", "elif ", "else")) or \
            "a branch or loop around the call"
        raise CoopValueError(f"{call.name} on {kind} groups must be reached by every member, but it is under a "
                             f"condition that depends on {source} ({where}); use valid_items / oob_default, or "
                             "move the condition inside the values")


class TracedEmitter:
    """The values of a call's C parameters in the traced kernel (``_calls.emitter.Emitter``)."""

    def __init__(self, tracer: Any, operands: list[Any]):
        self.tracer, self.operands = tracer, operands
        self.outs: list[tuple[Any, str]] = []  # the result slots, in order, with their dtypes

    def pointer(self, operand: int) -> Any:
        return pointer(self.tracer, self.operands[operand])

    def extent(self, operand: int) -> Any:
        return _dsl.i64(_dsl.extent(self.operands[operand]))

    def integer(self, operand: int | None, constant: int) -> Any:
        return _dsl.i64(constant if operand is None else self.operands[operand])

    def scalar(self, operand: int | None, constant: object, dtype: str) -> Any:
        return _dsl.scalar(constant if operand is None else self.operands[operand], dtype)

    def result_slot(self, dtype: str) -> Any:
        slot = _dsl.make_fragment(1, dtype, self.tracer.kernel)  # in registers, made at the kernel's entry
        self.outs.append((slot, dtype))
        return _dsl.tensor_pointer(slot)

    def scratch(self) -> Any:
        return _dsl.null_pointer()  # the place in the backing is set once every call is planned

    def stride(self) -> Any:
        return _dsl.i64(0)


def pointer(tracer: Any, operand: Any) -> Any:
    slot = tracer.payload(operand)
    if slot is not None:
        return _dsl.tensor_pointer(slot.materialise())
    if isinstance(operand, _dsl.Tensor):
        return _dsl.tensor_pointer(operand)
    raise AssertionError(f"no pointer for {operand!r}")


def layout_kind(shape: tuple[Any, ...], stride: tuple[Any, ...]) -> str:
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


def operand_type(tracer: Any, operand: Any) -> OperandType:
    if isinstance(operand, _dsl.Tensor):
        shape, stride = _dsl.shape_and_stride(operand)
        dtype = _dsl.element_dtype(operand)
        space = _dsl.memspace(operand)
        words = "" if space == "gmem" else {"smem": "shared memory", "rmem": "registers"}.get(space, f"{space} memory")
        array = ArrayType(len(shape), layout_kind(shape, stride), dtype, str(dtype or operand.element_type), words,
                          layout_text=str(operand.layout),
                          stride=stride[0] if len(shape) == 1 and isinstance(stride[0], int) else None)
        return OperandType(describe(operand), None, False, array)
    slot = tracer.payload(operand)
    if slot is not None:
        return OperandType(repr(operand), None, False, None)
    dtype = number_dtype(operand)
    text = type(operand).__name__ if dtype is None else dtype
    return OperandType(text, dtype, dtype is not None, None)
