"""The names of numba-cuda-mlir's internals the backend uses (version-checked at import); what it replaces of them
is in ``_patches``, the only other module that imports them."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Sequence

from ._about import HINT as _HINT, VERSION  # the version check ran there
from ._patches import compile_only_target

if TYPE_CHECKING:
    from numpy.typing import DTypeLike

try:
    from numba_cuda_mlir import cuda as nb_cuda, extending
    from numba_cuda_mlir.numba_cuda import types
    from numba_cuda_mlir.extending import (
        WholeFunctionPlanner,
        register_planner,
        require_launch_config,
        set_required_dynamic_shared_memory,
    )
    from numba_cuda_mlir._whole_function_planners import _planner_registry
    from numba_cuda_mlir.numba_cuda.core import ir
    from numba_cuda_mlir.numba_cuda.core.errors import ForceLiteralArg, NumbaError
    from numba_cuda_mlir.numba_cuda.extending import _Intrinsic
    from numba_cuda_mlir.numba_cuda.typing.templates import make_intrinsic_template
    from numba_cuda_mlir.numba_cuda import typing as nb_typing
    from numba_cuda_mlir.lowering_utilities import (
        convert, constant, get_or_insert_function, index_of, llvm_ptr_add_bytes, memref_data_pointer,
    )
    from numba_cuda_mlir._mlir import ir as mlir
    from numba_cuda_mlir._mlir.dialects import (
        arith as mlir_arith, func as mlir_func, llvm as mlir_llvm, memref as mlir_memref,
    )
except ImportError as exc:  # a hook this package relies on is gone
    missing = getattr(exc, "name", None) or str(exc)
    raise ImportError(f"numba-cuda-mlir {VERSION} does not provide {missing}, which cuda.coop requires. "
                      f"To fix it, {_HINT}") from exc

__all__ = [
    "VERSION", "nb_cuda", "extending", "types", "WholeFunctionPlanner", "register_planner", "require_launch_config",
    "set_required_dynamic_shared_memory", "_planner_registry", "ir", "ForceLiteralArg", "NumbaError", "nb_typing",
    "convert", "constant", "llvm_ptr_add_bytes", "get_or_insert_function", "memref_data_pointer", "mlir", "mlir_func",
    "mlir_llvm", "new_site_function", "target_cc", "dtype_name", "numba_dtype", "mlir_arith", "array_length",
    "ELEMENT_READS",
]

_sites: list[object] = []  # typing contexts hold globals weakly: keep site functions alive

#: numba-cuda-mlir's public functions whose result is an element of their first (array) argument: the cache-hinted
#: loads, and the atomics (they return the element's old value); the dtype inference reads them as that element
ELEMENT_READS: tuple[object, ...] = tuple(
    getattr(nb_cuda, name) for name in ("ldca", "ldcg", "ldcs", "ldlu", "ldcv") if hasattr(nb_cuda, name)) + tuple(
    getattr(nb_cuda.atomic, name) for name in ("add", "sub", "max", "min", "nanmax", "nanmin", "exch", "inc", "dec",
                                               "and_", "or_", "xor", "cas", "compare_and_swap")
    if hasattr(nb_cuda.atomic, name))


def new_site_function(name: str, typer: Callable[..., Any], typingctx: Any) -> Any:
    """A fresh intrinsic-like callee typed by ``typer``, known only to this compile's typing context."""
    site = _Intrinsic(name, typer)
    _sites.append(site)
    typingctx.refresh()
    typingctx.insert_user_function(site, make_intrinsic_template(site, typer, name))
    return site


def array_length(array: Any) -> Any:
    """The extent of a 1-D array value (an MLIR memref) as an i64."""
    return mlir_arith.index_cast(mlir.IntegerType.get_signless(64), mlir_memref.dim(array, index_of(0)))


def target_cc(state: Any) -> int:
    """The compute capability the kernel is compiled for, as an integer (90 for sm_90)."""
    from numba_cuda_mlir import tools

    options = state.metadata.get("targetoptions", {})
    major, minor = tools.resolve_gpu_target(options)["cc"][:2]
    return int(major) * 10 + int(minor)


_NUMERIC = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16", "float32", "float64")


def dtype_name(ty: object) -> str | None:
    """numba scalar type -> numeric dtype name; a record or a struct-model type -> its aggregate dtype name
    (docs: qualified, "User-defined aggregates"); else None."""
    if isinstance(ty, types.Record):
        return _aggregate_name(ty)
    name = str(types.unliteral(ty)) if isinstance(ty, types.Type) else str(ty)
    if name in _NUMERIC:
        return name
    if isinstance(ty, types.Type) and name not in _aggregate_types:
        layout = _struct_layout(ty)
        if layout is None:
            return None
        from .._semantics import aggregates

        size, alignment, leaves = layout
        _aggregate_types[aggregates.register(name, size, alignment, aggregates.member_plan(leaves, size))] = ty
    return name if name in _aggregate_types else None


_aggregate_types: dict[str, Any] = {}  # aggregate dtype name -> numba record or struct-model type


def _aggregate_name(record: Any) -> str | None:
    """Register a numba record as an aggregate: fixed-size fields only (a record of records counts as fixed)."""
    from .._semantics import aggregates

    fields = getattr(record, "fields", {})
    if any(not isinstance(f[0], (types.Number, types.Record, types.NestedArray)) for f in fields.values()):
        return None  # e.g. character sequences: not an aggregate of this library
    from numba_cuda_mlir.numba_cuda.np.numpy_support import as_struct_dtype

    # Named as NumPy writes the dtype (messages speak Python, not numba's Record(...) repr); the repr holds the
    # fields, their types and offsets and the alignment, so distinct layouts keep distinct names.
    name = aggregates.register(repr(as_struct_dtype(record)), record.size, _alignment(record),
                               aggregates.member_plan(_record_leaves(record), record.size))
    _aggregate_types[name] = record
    return name


def _struct_layout(ty: Any) -> tuple[int, int, list[tuple[int, int]]] | None:
    """(size, alignment, scalar fields as (offset, width)) of a type registered with numba-cuda-mlir's extension API
    on a struct data model whose fields are numbers, booleans or such structs, laid out as LLVM lays out its literal
    struct; None for any other type."""
    from numba_cuda_mlir.models import StructModel, mlir_data_manager

    try:
        model = mlir_data_manager.lookup(ty)
    except Exception:  # noqa: BLE001 - no data model: not a type this library can move
        return None
    if not isinstance(model, StructModel) or not model.field_count:
        return None
    size, alignment, leaves = 0, 1, []
    for position in range(model.field_count):
        member = model.get_type(position)
        if isinstance(member, types.Boolean):  # i1 in registers, one byte in memory as LLVM lays it out
            width, align, inner = 1, 1, [(0, 1)]
        elif isinstance(member, types.Number) and not isinstance(member, types.Complex):
            width = align = member.bitwidth // 8
            inner = [(0, width)]
        else:
            nested = _struct_layout(member)
            if nested is None:  # a pointer, a record, an array, ...
                return None
            width, align, inner = nested
        size = -(-size // align) * align
        leaves += [(size + offset, w) for offset, w in inner]
        size += width
        alignment = max(alignment, align)
    return -(-size // alignment) * alignment, alignment, leaves


def _record_leaves(record: Any, base: int = 0) -> list[tuple[int, int]]:
    """The scalar fields of a numba record as (offset, width), nested records and arrays flattened."""
    leaves: list[tuple[int, int]] = []
    for field in record.fields.values():
        ty, offset = field[0], base + field[1]
        if isinstance(ty, types.Record):
            leaves += _record_leaves(ty, offset)
        elif isinstance(ty, types.NestedArray):
            step = ty.dtype.size if isinstance(ty.dtype, types.Record) else ty.dtype.bitwidth // 8
            for i in range(ty.nitems):
                leaves += (_record_leaves(ty.dtype, offset + i * step) if isinstance(ty.dtype, types.Record)
                           else [(offset + i * step, step)])
        else:
            leaves.append((offset, ty.bitwidth // 8))
    return leaves


def is_scalar_type(ty: object) -> bool:
    """A numba type one scalar operand may have: a number, or an aggregate (a record or a struct-model type)."""
    if isinstance(ty, types.Number):
        return True
    from .._semantics.aggregates import is_aggregate

    return is_aggregate(dtype_name(ty))


def call_result_dtype(typingctx: Any, function: object, argtys: list[Any]) -> str | None:
    """The dtype name of ``function(*argtys)`` as numba-cuda-mlir types it; None when it does not type."""
    try:
        fnty = typingctx.resolve_value_type(function)
        sig = typingctx.resolve_function_type(fnty, tuple(argtys), {})
    except Exception:  # noqa: BLE001 - an untypable call only means the dtype stays unknown
        return None
    return dtype_name(sig.return_type) if sig is not None else None


def _register_struct_slot_assignment() -> None:
    """``items[i] = value`` for a ThreadData of a struct-model type, which is a ``CPointer`` to its slots
    (numba-cuda-mlir 0.6 has no arrays of struct-model types; its pointer setitem is typed for numbers only and
    lowered for any value)."""
    import operator

    from numba_cuda_mlir.numba_cuda.typing.templates import AbstractTemplate

    @extending.typing_registry.register_global(operator.setitem)
    class StructSlotAssignment(AbstractTemplate):  # type: ignore[misc]  # numba's template base is untyped (Any)
        def generic(self, args: tuple[Any, ...], kws: dict[str, Any]) -> Any:
            if len(args) == 3 and isinstance(args[0], types.CPointer) and isinstance(args[1], types.Integer):
                name = dtype_name(args[0].dtype)
                if name is not None and held_by_value(name) and args[2] == args[0].dtype:
                    return nb_typing.signature(types.none, *args)
            return None


_register_struct_slot_assignment()


def held_by_value(dtype: str) -> bool:
    """An aggregate numba-cuda-mlir holds as an SSA struct (a struct-model type), not as a reference to its bytes
    (a record)."""
    return dtype in _aggregate_types and not isinstance(_aggregate_types[dtype], types.Record)


def _alignment(ty: Any) -> int:
    """A record's alignment as NumPy lays it out: its widest field's for an aligned record, else 1."""
    if isinstance(ty, types.Record):
        return max((_alignment(f[0]) for f in ty.fields.values()), default=1) if ty.aligned else 1
    if isinstance(ty, types.NestedArray):
        return _alignment(ty.dtype)
    return max(1, int(ty.bitwidth) // 8)


def record_dtype_name(np_dtype: DTypeLike) -> str | None:
    """A NumPy structured dtype -> its aggregate dtype name (None when it has no fields)."""
    import numpy as np

    dtype = np.dtype(np_dtype)
    if dtype.fields is None:
        return None
    from numba_cuda_mlir.numba_cuda.np.numpy_support import from_dtype

    return _aggregate_name(from_dtype(dtype))


def numba_dtype(name: str | None) -> Any:
    """The numba type of a dtype name. A planned call's dtype fields are optional (``_calls.site``); where one is
    asked for here, its call layer has set it."""
    if name is None:
        raise AssertionError("a planned call asks for the numba type of a dtype it did not set")
    return _aggregate_types[name] if name in _aggregate_types else getattr(types, name)


def compile_for_launch(py_func: object, argtypes: list[Any], options: dict[str, Any]) -> Any:
    """Compile a kernel to a cubin for a given launch configuration, without a driver."""
    from numba_cuda_mlir import mlir_compiler
    from numba_cuda_mlir.mlir_optimization import optimize

    chip = options.get("chip", "sm_90").replace("sm_", "").rstrip("af")
    with compile_only_target((int(chip[:-1]), int(chip[-1]))):  # its own target, not the device's (a patch)
        cres = mlir_compiler.compile_mlir(py_func, types.none, argtypes, targetoptions=options)
        optimize(cres)
    return cres


def typeof(value: object) -> Any:
    from numba_cuda_mlir.numba_cuda.typing.typeof import typeof as _typeof

    return _typeof(value)


def literal_type(value: object) -> Any:
    from numba_cuda_mlir.numba_cuda import types as _types

    return _types.literal(value)


def compile_operator(function: object, dtype: str, cc: int, symbol: str, arity: int = 2,
                     result: str | None = None, state_dtype: str | None = None, by_pointer: bool = False,
                     extra: Sequence[str] = ()) -> bytes:
    """LTO-IR of ``result function(dtype, ...)`` (``arity`` arguments; ``result`` defaults to ``dtype``) with a C ABI
    under ``symbol``. ``result="boolean"`` (predicates) returns the truth value as one byte, 0 or 1. ``state_dtype``:
    a StatefulFunction ``op(state, value)``, whose state arrives as a pointer to the caller's one-item payload
    (indexed ``state[0]``). ``extra``: the dtypes of arguments after the operands, by value (a prefix callback's
    ``has_head``).

    ``by_pointer`` (float16 and aggregates; docs: qualified, "User-defined aggregates"): every ``dtype`` argument
    arrives as a pointer and a ``dtype`` result is written through a leading output pointer, so the C++ side never
    passes those types by value (numba's ``half`` and records-as-pointers have no by-value C++ twin). A small wrapper
    makes that ABI around the user's function, which is compiled as a device function and inlined into it.
    """
    ty = numba_dtype(dtype)
    rty = ty if result is None else numba_dtype(result)
    state = [types.CPointer(numba_dtype(state_dtype))] if state_dtype is not None else []
    after = [numba_dtype(d) for d in extra]
    arity = 1 if state else arity  # op(state, block_aggregate)
    if not by_pointer:
        code, _ = nb_cuda.compile(function, rty(*state, *([ty] * arity), *after), device=True, abi="c",
                                  abi_info={"abi_name": symbol}, output="ltoir", cc=(cc // 10, cc % 10))
        return bytes(code)
    wrapper = _pointer_wrapper(function, arity, bool(state), struct=held_by_value(dtype),
                               writes_result=result is None, extra=len(after))
    pointer = types.CPointer(ty)
    sig = (types.void(pointer, *state, *([pointer] * arity), *after) if result is None
           else rty(*state, *([pointer] * arity), *after))
    code, _ = nb_cuda.compile(wrapper, sig, device=True, abi="c", abi_info={"abi_name": symbol}, output="ltoir",
                              cc=(cc // 10, cc % 10))
    return bytes(code)


def _as_device(function: object) -> object:
    """``function`` as a device function for the wrappers to call (inlined): a ``cuda.jit`` one as it is."""
    return function if hasattr(function, "py_func") else nb_cuda.jit(device=True)(function)


def compile_tuple_operator(function: object, dtypes: list[str], cc: int, symbol: str,
                           by_pointer: Sequence[bool] = ()) -> bytes:
    """LTO-IR of ``void symbol(T0* r0, ..., T0 a0, ..., T0 b0, ...)`` with a C ABI: ``function((a0, ...), (b0,
    ...))`` (compiled as a device function and inlined), each member of the tuple it returns stored through its
    pointer (a multi-operand operator; ``_cub.tuples``). Operand ``j`` arrives as a pointer where ``by_pointer[j]``
    (float16: numba's ``half`` has no by-value C++ twin; aggregates: a record is a reference to its bytes, a
    struct-model value is loaded and stored whole as in ``_pointer_wrapper``). A result of another arity, or no
    tuple, fails to compile (the unpacking below), so no member is dropped or left unwritten."""
    count = len(dtypes)
    pointers = list(by_pointer) or [False] * count
    structs = [held_by_value(d) for d in dtypes]
    outs = [f"r{j}" for j in range(count)]
    a = [f"a{j}" for j in range(count)]
    b = [f"b{j}" for j in range(count)]
    members = [f"m{j}" for j in range(count)]

    def read(name: str, j: int) -> str:
        if not pointers[j]:
            return name
        return f"load({name})" if structs[j] else f"item({name}, 1)[0]"

    stores = "".join(f"    store(r{j}, m{j})\n" if structs[j] else f"    item(r{j}, 1)[0] = m{j}\n"
                     for j in range(count))
    load, store = _struct_intrinsics() if any(structs) else (None, None)
    namespace = {"device": _as_device(function), "item": nb_cuda.carray, "load": load, "store": store}
    source = (f"def wrapper({', '.join(outs + a + b)}):\n"
              f"    result = device(({', '.join(read(x, j) for j, x in enumerate(a))},), "
              f"({', '.join(read(x, j) for j, x in enumerate(b))},))\n"
              f"    {', '.join(members)}, = result\n{stores}")
    exec(source, namespace)  # noqa: S102 - a fixed template
    values = [numba_dtype(d) for d in dtypes]
    operands = [types.CPointer(v) if pointer else v for v, pointer in zip(values, pointers)]
    sig = types.void(*[types.CPointer(v) for v in values], *operands, *operands)
    code, _ = nb_cuda.compile(namespace["wrapper"], sig, device=True, abi="c", abi_info={"abi_name": symbol},
                              output="ltoir", cc=(cc // 10, cc % 10))
    return bytes(code)


def _pointer_wrapper(function: object, arity: int, stateful: bool, struct: bool, writes_result: bool,
                     extra: int = 0) -> object:
    """``wrapper([out,] [state,] *pointers, *extra)`` calling ``function`` (compiled as a device function and
    inlined) on the pointed-to values; a result is written through ``out`` (a predicate's truth value is returned).
    Values are read and written as one-item arrays (every dtype, records too), or loaded and stored directly for a
    struct-model type (numba-cuda-mlir has no arrays of those); a StatefulFunction's state pointer and the ``extra``
    values after the operands (a prefix callback's has_head) are passed on as they are."""
    def read(name: str) -> str:
        return f"load({name})" if struct else f"item({name}, 1)[0]"

    operands = ["a", "b"][:arity]
    after = [f"x{j}" for j in range(extra)]
    call = f"device({', '.join((['state'] if stateful else []) + [read(name) for name in operands] + after)})"
    if not writes_result:
        body = f"return {call}"
    else:
        body = f"store(out, {call})" if struct else f"item(out, 1)[0] = {call}"
    params = (["out"] if writes_result else []) + (["state"] if stateful else []) + operands + after
    load, store = _struct_intrinsics() if struct else (None, None)
    namespace = {"device": _as_device(function), "item": nb_cuda.carray, "load": load, "store": store}
    exec(f"def wrapper({', '.join(params)}):\n    {body}\n", namespace)  # noqa: S102 - fixed templates above
    return namespace["wrapper"]


_struct_access: tuple[object, object] | None = None


def _struct_intrinsics() -> tuple[object, object]:
    """``load(pointer) -> value`` and ``store(pointer, value)`` for struct-model values behind a ``CPointer``."""
    global _struct_access
    if _struct_access is None:
        intrinsic: Callable[[Callable[..., Any]], object] = extending.intrinsic  # makes a compiler object

        @intrinsic
        def load(typingctx: Any, pointer: Any) -> Any:
            def codegen(builder: Any, target: Any, args: list[Any], kwargs: list[Any]) -> None:
                ty = builder.get_mlir_type(pointer.dtype)
                builder.store_var(target, mlir_llvm.load(ty, builder.load_var(args[0])))

            return pointer.dtype(pointer), codegen

        @intrinsic
        def store(typingctx: Any, pointer: Any, value: Any) -> Any:
            def codegen(builder: Any, target: Any, args: list[Any], kwargs: list[Any]) -> None:
                mlir_llvm.store(builder.load_var(args[1]), builder.load_var(args[0]))

            return types.none(pointer, value), codegen

        extending.refresh_registries(target=False)  # intrinsics made after the typing context was set up
        _struct_access = (load, store)
    return _struct_access
