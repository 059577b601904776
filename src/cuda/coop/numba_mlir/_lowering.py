"""Lowering of planned call sites to calls of the generated C ABI functions.

A site is a fresh callee the planner puts in place of a marker call. Its typer
checks what only typing can know (runtime operand dtypes); its codegen links the
kernel's LTO-IR, computes pointers (arrays, payloads, scratch) and emits the call.
The call layer (``cuda.coop._calls``) describes each site; this module is where that description meets MLIR.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .._calls.binding import operator_failure
from .._calls.emitter import parameter_values
from .._calls.site import ArrayType, Backing, OperandType, SiteCall
from .._cub.provider import Abi
from .._errors import CoopError, CoopTypeError, located
from .._semantics.aggregates import aggregate, is_aggregate
from .._semantics.common import passes_by_pointer
from .._semantics.operators import OperatorSpec
from .._semantics.tuples import fields, is_tuple
from . import _compat as nb
from ._failures import failure_reason

BACKING_SYMBOL = "__cuda_coop_backing"


def _ensure_backing(gmod: Any, backing: Backing) -> None:
    body = gmod.bodyRegion.blocks[0]
    for op in body.operations:
        name = getattr(op, "sym_name", None)
        if name is not None and getattr(name, "value", None) == BACKING_SYMBOL:
            return
    llvm = nb.mlir_llvm
    with nb.mlir.InsertionPoint.at_block_begin(body):
        if backing.dynamic:  # extern __shared__ array: the launch supplies the bytes
            llvm.GlobalOp(nb.mlir.Type.parse("!llvm.array<0 x i8>"), BACKING_SYMBOL,
                          nb.mlir.Attribute.parse("#llvm.linkage<external>"), addr_space=3,
                          alignment=backing.alignment)
        else:
            llvm.GlobalOp(nb.mlir.Type.parse(f"!llvm.array<{backing.size} x i8>"), BACKING_SYMBOL,
                          nb.mlir.Attribute.parse("#llvm.linkage<internal>"), addr_space=3,
                          alignment=backing.alignment)


def _scratch_pointer(builder: Any, site: SiteCall) -> Any:
    llvm, mlir = nb.mlir_llvm, nb.mlir
    generic = llvm.PointerType.get()
    if site.backing is None:
        return llvm.mlir_zero(generic)
    _ensure_backing(builder.mlir_gpu_module, site.backing)
    base = llvm.addrspacecast(generic, llvm.mlir_addressof(llvm.PointerType.get(3), BACKING_SYMBOL))
    if not site.scratch_offset:
        return base
    return nb.llvm_ptr_add_bytes(base, nb.constant(site.scratch_offset, mlir.IntegerType.get_signless(64)))


class CodegenEmitter:
    """The values of a call's C parameters in a site's codegen (``_calls.emitter.Emitter``): MLIR values, from the
    call's numba variables ``args``."""

    def __init__(self, builder: Any, args: Any, site: SiteCall):
        self.builder, self.args, self.site = builder, args, site
        self.outs: list[tuple[Any, str]] = []  # the result slots, in order, with their dtypes

    def _load(self, operand: int) -> Any:
        return self.builder.load_var(self.args[operand])

    def pointer(self, operand: int) -> Any:
        value = self._load(operand)
        if not isinstance(self.builder.get_numba_type(self.args[operand]), nb.types.CPointer):
            value = nb.memref_data_pointer(value)  # an array (a struct-model ThreadData is a pointer)
        return value

    def extent(self, operand: int) -> Any:
        return nb.array_length(self._load(operand))

    def integer(self, operand: int | None, constant: int) -> Any:
        i64 = nb.mlir.IntegerType.get_signless(64)
        if operand is None:
            return _constant(constant, i64)
        ty = self.builder.get_numba_type(self.args[operand])
        return nb.convert(self._load(operand), i64, signed=getattr(ty, "signed", True))

    def scalar(self, operand: int | None, constant: object, dtype: str) -> Any:
        if is_aggregate(dtype):
            # aggregates cross by pointer (_cub.abi): numba-cuda-mlir holds a record as a pointer to its bytes; a
            # struct-model value is an SSA struct, stored to a stack slot of the function's entry
            if operand is None:
                return nb.mlir_llvm.mlir_zero(nb.mlir_llvm.PointerType.get())
            value = self._load(operand)
            if nb.held_by_value(dtype):
                slot = entry_bytes(self.builder, dtype, 1)
                nb.mlir_llvm.store(value, slot)
                value = slot
            return value
        elem = self.builder.get_mlir_type(nb.numba_dtype(dtype))
        value = _constant(constant, elem) if operand is None else nb.convert(self._load(operand), elem)
        if dtype == "float16":  # by-value float16 travels as its bits (_cub.abi)
            value = nb.mlir_arith.bitcast(nb.mlir.IntegerType.get_signless(16), value)
        return value

    def result_slot(self, dtype: str) -> Any:  # written by the call, returned in the result tuple
        if is_aggregate(dtype):
            value = entry_bytes(self.builder, dtype, 1)
        else:
            value = self.builder.alloca(self.builder.get_mlir_type(nb.numba_dtype(dtype)))
        self.outs.append((value, dtype))
        return value

    def scratch(self) -> Any:
        return _scratch_pointer(self.builder, self.site)

    def stride(self) -> Any:
        return nb.constant(self.site.stride, nb.mlir.IntegerType.get_signless(64))


def make_site(name: str, site: SiteCall, typingctx: Any) -> Any:
    """Create the callee object that replaces one marker call."""

    def typer(context: Any, *argtys: Any) -> Any:
        try:
            if site.check is not None:
                site.check(tuple(operand_type(ty) for ty in argtys))
            _check_planned_kinds(site, argtys)
        except CoopError as exc:
            raise located(exc, site.loc) from None
        outs = [nb.numba_dtype(p.dtype) for p in site.params if p.abi is Abi.OUT]
        result = nb.numba_dtype(site.result_dtype) if site.result_dtype else (
            nb.types.Tuple(outs) if outs else nb.types.none)
        return nb.nb_typing.signature(result, *argtys), codegen

    def codegen(builder: Any, target: Any, args: Any, kwargs: Any) -> None:
        mlir = nb.mlir
        builder.link_external_item(site.ltoir)
        for item in site.link:  # user operators compiled to LTO-IR
            builder.link_external_item(item)
        emitter = CodegenEmitter(builder, args, site)
        values = parameter_values(site, emitter)
        types_ = [value.type for value in values]
        outs = emitter.outs
        results = []
        half_result = site.result_dtype == "float16"
        aggregate_result = is_aggregate(site.result_dtype)
        if aggregate_result:  # written through a trailing pointer to stack bytes of the function's entry
            out = entry_bytes(builder, site.result_dtype, 1)
            values.append(out)
            types_.append(out.type)
        elif site.result_dtype:
            results = [mlir.IntegerType.get_signless(16) if half_result else
                       builder.get_mlir_type(nb.numba_dtype(site.result_dtype))]
        callee = nb.get_or_insert_function(site.symbol, mlir.FunctionType.get(types_, results),
                                           builder.mlir_gpu_module)
        call = nb.mlir_func.call(result=results, callee=callee.name.value, operands_=values)
        if half_result:
            call = nb.mlir_arith.bitcast(builder.get_mlir_type(nb.numba_dtype("float16")), call)
        if outs:  # records stay references to their bytes; other values are loaded
            builder.store_var(target, tuple(_read_back(builder, pointer, dtype) for pointer, dtype in outs))
        elif aggregate_result:
            builder.store_var(target, _read_back(builder, out, site.result_dtype))
        elif site.result_dtype:
            builder.store_var(target, call)

    return nb.new_site_function(name, typer, typingctx)


def _check_planned_kinds(site: SiteCall, argtys: tuple[Any, ...]) -> None:
    """A value numba types as a float where the plan read an integer (a variable assigned values of several types,
    not all visible before typing) would be truncated by the call: refused, with the cast that fixes it. Other
    differences are conversions the plan means (a literal's weak dtype, numba's int64 for int32 arithmetic)."""
    for param in site.params:
        if param.abi is not Abi.VALUE or param.operand is None or param.operand >= len(argtys):
            continue
        planned, actual = param.dtype or site.elem_dtype, nb.dtype_name(argtys[param.operand])
        if planned is None or actual is None or is_aggregate(planned) or is_aggregate(actual):
            continue
        if np.dtype(actual).kind in "fc" and np.dtype(planned).kind in "iub":
            raise CoopTypeError(
                f"a cuda.coop call's operand is a {actual} here, but the call was planned for {planned} (the "
                f"variable is assigned values of several types); cast it where it is assigned, e.g. "
                f"np.{actual}(...) or np.{planned}(...)")


def _read_back(builder: Any, pointer: Any, dtype: str | None) -> Any:
    """The value a call wrote through ``pointer``: a record stays a reference to those bytes, others are loaded."""
    if is_aggregate(dtype) and not nb.held_by_value(dtype):
        return pointer
    return nb.mlir_llvm.load(builder.get_mlir_type(nb.numba_dtype(dtype)), pointer)


def make_pointer_site(name: str, site: SiteCall, typingctx: Any) -> Any:
    """A callee returning a pointer to the site's slice of the backing, typed ``CPointer(site.elem_dtype)``."""

    def typer(context: Any, *argtys: Any) -> Any:
        return nb.nb_typing.signature(nb.types.CPointer(nb.numba_dtype(site.elem_dtype))), codegen

    def codegen(builder: Any, target: Any, args: Any, kwargs: Any) -> None:
        builder.store_var(target, _scratch_pointer(builder, site))

    return nb.new_site_function(name, typer, typingctx)


def local_bytes_site(dtype: str, count: int, typingctx: Any) -> Any:
    """A callee returning a pointer to ``count`` items of the aggregate ``dtype`` in the calling thread's stack,
    allocated once at the function's entry (so a call in a loop reuses it), typed ``CPointer(record)``."""
    layout = aggregate(dtype)
    assert layout is not None
    record = nb.numba_dtype(dtype)

    def typer(context: Any, *argtys: Any) -> Any:
        return nb.nb_typing.signature(nb.types.CPointer(record)), codegen

    def codegen(builder: Any, target: Any, args: Any, kwargs: Any) -> None:
        builder.store_var(target, entry_bytes(builder, dtype, count))

    return nb.new_site_function(f"cuda_coop_local_{layout.symbol_part}_{count}", typer, typingctx)


def entry_bytes(builder: Any, dtype: str | None, count: int) -> Any:
    """A pointer to stack bytes for ``count`` items of the aggregate ``dtype``, allocated in the function's entry
    block (a call in a loop reuses them; SROA keeps them in registers once the CUB code is inlined)."""
    layout = aggregate(dtype)
    assert layout is not None
    llvm, mlir = nb.mlir_llvm, nb.mlir
    with builder.alloca_insertion_point():
        size = nb.constant(layout.size * count, mlir.IntegerType.get_signless(64))
        return llvm.alloca(llvm.PointerType.get(), size, mlir.IntegerType.get_signless(8),
                           alignment=max(layout.alignment, 4))


def _constant(value: object, ty: Any) -> Any:
    """An MLIR constant of ``ty``. MLIR integers are signless and its Python binding takes a signed 64-bit value,
    so an unsigned value at or above 2**(bits-1) (the uint64 maximum as a sort sentinel) is passed as the signed
    integer with the same bits."""
    if isinstance(value, int) and not isinstance(value, bool) and isinstance(ty, nb.mlir.IntegerType):
        bits = ty.width
        if value >= 1 << (bits - 1):
            value -= 1 << bits
    return nb.constant(value, ty)


_operator_memo: dict[tuple[Any, ...], Any] = {}


def operator_link(spec: OperatorSpec | None, dtype: str, cc: int, name: str, param: str, arity: int = 2,
                  result: str | None = None, state_dtype: str | None = None, extra: tuple[str, ...] = ()) -> list[Any]:
    """LTO-IR link items for a user operator (none for built-in functors); memoised per process.

    ``spec.name`` derives from everything that changes the operator's code and from the dtype
    (docs: operations/operators, "Your own function"), so the memo key (symbol, dtype, arity, cc) misses whenever the
    compiled code would differ. Unary callbacks (scan prefix_op) get the symbol suffix ``_1`` so one function may serve
    both roles. ``result`` is the compiled return type when it is not ``dtype`` (``"boolean"`` for predicates, whose
    spec names carry their own suffix).
    ``state_dtype``: a scan StatefulFunction ``op(state_dtype* state, dtype) -> dtype`` (its spec name carries the
    state dtype). ``extra``: the dtypes of arguments after the operands, passed by value (a prefix callback's
    ``has_head``, whose spec name carries its own suffix).
    """
    if spec is None or getattr(spec, "builtin", True):
        return []
    symbol = spec.name + ("_1" if arity == 1 else "")
    by_pointer = spec.by_pointer
    key = (symbol, dtype, arity, cc, result, state_dtype, by_pointer, extra)
    if key not in _operator_memo:
        function = spec.function
        label = getattr(function, "__qualname__", repr(function))
        try:
            if is_tuple(dtype):  # over a tuple of operands (_cub.tuples)
                ltoir = nb.compile_tuple_operator(function, fields(dtype), cc, symbol,
                                                  [passes_by_pointer(d) for d in fields(dtype)])
            else:
                ltoir = nb.compile_operator(function, dtype, cc, symbol, arity, result, state_dtype, by_pointer,
                                            extra)
        except CoopError as exc:
            if "contains cuda.coop operations" in str(exc):
                raise CoopTypeError(f"{name} {param} {label} contains cuda.coop operations; callbacks may only do "
                                    "per-thread computation") from None
            raise
        except Exception as exc:  # numba-cuda-mlir typing/lowering failures of the user function
            raise CoopTypeError(operator_failure(name, param, label, dtype, arity=arity, reason=failure_reason(exc),
                                                 state_dtype=state_dtype, extra=extra)) from exc
        _operator_memo[key] = nb.nb_cuda.LTOIR(ltoir, name=f"{symbol}.ltoir")
    return [_operator_memo[key]]


def operand_type(ty: Any) -> OperandType:
    """A numba type as the call layer's typing-time checks see it."""
    array = None
    if isinstance(ty, nb.types.Array):
        array = ArrayType(ty.ndim, ty.layout, nb.dtype_name(ty.dtype), str(ty.dtype))
    return OperandType(str(ty), nb.dtype_name(ty), nb.is_scalar_type(ty), array)
