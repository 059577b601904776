"""The only module that imports numba-cuda-mlir internals (version-checked at import)."""
from __future__ import annotations

import functools
import threading
from typing import Callable, Sequence

from ._about import HINT as _HINT, VERSION  # the version check ran there

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
    "mark_grid_free",
]

_sites: list[object] = []  # typing contexts hold globals weakly: keep site functions alive


def new_site_function(name: str, typer: object, typingctx: object) -> object:
    """A fresh intrinsic-like callee typed by ``typer``, known only to this compile's typing context."""
    site = _Intrinsic(name, typer)
    _sites.append(site)
    typingctx.refresh()  # type: ignore[attr-defined]
    typingctx.insert_user_function(site, make_intrinsic_template(site, typer, name))  # type: ignore[attr-defined]
    return site


def array_length(array: object) -> object:
    """The extent of a 1-D array value (an MLIR memref) as an i64."""
    return mlir_arith.index_cast(mlir.IntegerType.get_signless(64), mlir_memref.dim(array, index_of(0)))


def target_cc(state: object) -> int:
    """The compute capability the kernel is compiled for, as an integer (90 for sm_90)."""
    from numba_cuda_mlir import tools

    options = state.metadata.get("targetoptions", {})  # type: ignore[attr-defined]
    major, minor = tools.resolve_gpu_target(options)["cc"][:2]
    return major * 10 + minor


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


_aggregate_types: dict[str, object] = {}  # aggregate dtype name -> numba record or struct-model type


def _aggregate_name(record: object) -> str | None:
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


def _struct_layout(ty: object) -> tuple[int, int, list[tuple[int, int]]] | None:
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


def _record_leaves(record: object, base: int = 0) -> list[tuple[int, int]]:
    """The scalar fields of a numba record as (offset, width), nested records and arrays flattened."""
    leaves = []
    for field in record.fields.values():  # type: ignore[attr-defined]
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


def call_result_dtype(typingctx: object, function: object, argtys: list) -> str | None:
    """The dtype name of ``function(*argtys)`` as numba-cuda-mlir types it; None when it does not type."""
    try:
        fnty = typingctx.resolve_value_type(function)  # type: ignore[attr-defined]
        sig = typingctx.resolve_function_type(fnty, tuple(argtys), {})  # type: ignore[attr-defined]
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
    class StructSlotAssignment(AbstractTemplate):
        def generic(self, args: tuple, kws: dict) -> object:
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


def _alignment(ty: object) -> int:
    """A record's alignment as NumPy lays it out: its widest field's for an aligned record, else 1."""
    if isinstance(ty, types.Record):
        return max((_alignment(f[0]) for f in ty.fields.values()), default=1) if ty.aligned else 1
    if isinstance(ty, types.NestedArray):
        return _alignment(ty.dtype)
    return max(1, ty.bitwidth // 8)


def record_dtype_name(np_dtype: object) -> str | None:
    """A NumPy structured dtype -> its aggregate dtype name (None when it has no fields)."""
    import numpy as np

    dtype = np.dtype(np_dtype)
    if dtype.fields is None:
        return None
    from numba_cuda_mlir.numba_cuda.np.numpy_support import from_dtype

    return _aggregate_name(from_dtype(dtype))


def numba_dtype(name: str) -> object:
    return _aggregate_types[name] if name in _aggregate_types else getattr(types, name)


def compile_for_launch(py_func: object, argtypes: list, options: dict) -> object:
    """Compile a kernel to a cubin for a given launch configuration, without a driver."""
    from numba_cuda_mlir import mlir_compiler, tools
    from numba_cuda_mlir.mlir_optimization import optimize

    # numba-cuda-mlir links for the device's compute capability when the target is older than it
    # (and asks the driver for it). A compile-only build is for its own target alone: present the
    # target as the device for the duration of this compile, then put the process's value back.
    chip = options.get("chip", "sm_90").replace("sm_", "").rstrip("af")
    with _target_lock:
        previous = tools._cached_cc
        tools._cached_cc = (int(chip[:-1]), int(chip[-1]))
        try:
            cres = mlir_compiler.compile_mlir(py_func, types.none, argtypes, targetoptions=options)
            optimize(cres)
        finally:
            tools._cached_cc = previous
    return cres


_target_lock = threading.RLock()


def typeof(value: object) -> object:
    from numba_cuda_mlir.numba_cuda.typing.typeof import typeof as _typeof

    return _typeof(value)


def literal_type(value: object) -> object:
    from numba_cuda_mlir.numba_cuda import types as _types

    return _types.literal(value)


def compile_operator(function: object, dtype: str, cc: int, symbol: str, arity: int = 2,
                     result: str | None = None, state_dtype: str | None = None, by_pointer: bool = False) -> bytes:
    """LTO-IR of ``result function(dtype, ...)`` (``arity`` arguments; ``result`` defaults to ``dtype``) with a C ABI
    under ``symbol``. ``result="boolean"`` (predicates) returns the truth value as one byte, 0 or 1. ``state_dtype``:
    a StatefulFunction ``op(state, value)``, whose state arrives as a pointer to the caller's one-item payload
    (indexed ``state[0]``).

    ``by_pointer`` (float16 and aggregates; docs: qualified, "User-defined aggregates"): every ``dtype`` argument
    arrives as a pointer and a ``dtype`` result is written through a leading output pointer, so the C++ side never
    passes those types by value (numba's ``half`` and records-as-pointers have no by-value C++ twin). A small wrapper
    makes that ABI around the user's function, which is compiled as a device function and inlined into it.
    """
    ty = numba_dtype(dtype)
    rty = ty if result is None else numba_dtype(result)
    state = [types.CPointer(numba_dtype(state_dtype))] if state_dtype is not None else []
    arity = 1 if state else arity  # op(state, block_aggregate)
    if not by_pointer:
        code, _ = nb_cuda.compile(function, rty(*state, *([ty] * arity)), device=True, abi="c",
                                  abi_info={"abi_name": symbol}, output="ltoir", cc=(cc // 10, cc % 10))
        return bytes(code)
    wrapper = _pointer_wrapper(function, arity, bool(state), struct=held_by_value(dtype),
                               writes_result=result is None)
    pointer = types.CPointer(ty)
    sig = (types.void(pointer, *state, *([pointer] * arity)) if result is None
           else rty(*state, *([pointer] * arity)))
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


def _pointer_wrapper(function: object, arity: int, stateful: bool, struct: bool, writes_result: bool) -> object:
    """``wrapper([out,] [state,] *pointers)`` calling ``function`` (compiled as a device function and inlined) on
    the pointed-to values; a result is written through ``out`` (a predicate's truth value is returned). Values are
    read and written as one-item arrays (every dtype, records too), or loaded and stored directly for a struct-model
    type (numba-cuda-mlir has no arrays of those); a StatefulFunction's state pointer is passed on as it is."""
    def read(name: str) -> str:
        return f"load({name})" if struct else f"item({name}, 1)[0]"

    operands = ["a", "b"][:arity]
    call = f"device({', '.join((['state'] if stateful else []) + [read(name) for name in operands])})"
    if not writes_result:
        body = f"return {call}"
    else:
        body = f"store(out, {call})" if struct else f"item(out, 1)[0] = {call}"
    params = (["out"] if writes_result else []) + (["state"] if stateful else []) + operands
    load, store = _struct_intrinsics() if struct else (None, None)
    namespace = {"device": _as_device(function), "item": nb_cuda.carray, "load": load, "store": store}
    exec(f"def wrapper({', '.join(params)}):\n    {body}\n", namespace)  # noqa: S102 - fixed templates above
    return namespace["wrapper"]


_struct_access: tuple[object, object] | None = None


def _struct_intrinsics() -> tuple[object, object]:
    """``load(pointer) -> value`` and ``store(pointer, value)`` for struct-model values behind a ``CPointer``."""
    global _struct_access
    if _struct_access is None:
        @extending.intrinsic
        def load(typingctx: object, pointer: object) -> object:
            def codegen(builder: object, target: object, args: list, kwargs: list) -> None:
                ty = builder.get_mlir_type(pointer.dtype)  # type: ignore[attr-defined]
                builder.store_var(target, mlir_llvm.load(ty, builder.load_var(args[0])))  # type: ignore

            return pointer.dtype(pointer), codegen  # type: ignore[attr-defined]

        @extending.intrinsic
        def store(typingctx: object, pointer: object, value: object) -> object:
            def codegen(builder: object, target: object, args: list, kwargs: list) -> None:
                mlir_llvm.store(builder.load_var(args[1]), builder.load_var(args[0]))  # type: ignore[attr-defined]

            return types.none(pointer, value), codegen

        extending.refresh_registries(target=False)  # intrinsics made after the typing context was set up
        _struct_access = (load, store)
    return _struct_access


def _once(install: Callable[[], None]) -> Callable[[], None]:
    """An installer of a hook into numba-cuda-mlir that runs at most once per process (later calls return)."""
    done = False

    @functools.wraps(install)
    def install_once() -> None:
        nonlocal done
        if not done:
            done = True
            install()

    return install_once


# --- 32-bit shared-memory pointers for kernels that call CUB -------------------------------
# nvcc and NVRTC address shared memory with 32-bit pointers (data layout "p3:32:32:32"), so
# CUB's index arithmetic folds constant offsets into the shared loads and stores. numba-cuda-mlir
# 0.6 translates kernels below sm_100 through its LLVM 7 C API with 64-bit shared pointers; the
# inlined CUB code then sign-extends every index and keeps an address register per item
# (a 256x16 exchange round trip: 56 registers instead of CUB C++'s 40). Kernels that contain
# cuda.coop calls are translated with the same layout NVRTC uses; other kernels are untouched.
COOP_SYMBOL_PREFIXES = ("cuda_coop_", "__cuda_coop_")
_SHORT_SHARED_POINTER = "p3:32:32:32"


def _has_coop_symbols(gpu_module: object) -> bool:
    for op in gpu_module.bodyRegion.blocks[0].operations:  # type: ignore[attr-defined]
        name = getattr(op, "sym_name", None)
        if name is not None and str(getattr(name, "value", "")).startswith(COOP_SYMBOL_PREFIXES):
            return True
    return False


@_once
def install_short_shared_pointers() -> None:
    """Idempotent; a numba-cuda-mlir without these private hooks keeps its default (slower, still correct)."""
    try:
        from numba_cuda_mlir import mlir_optimization as mo
        from numba_cuda_mlir.lowering_utilities.llvm_utils import NVPTX64_DATALAYOUT

        translate, get_capi, single_gpu_module = mo._call_llvm70_capi, mo._get_llvm70_capi, mo._get_single_gpu_module
    except (ImportError, AttributeError):
        return
    if "-p3:" in NVPTX64_DATALAYOUT or not NVPTX64_DATALAYOUT.startswith("e-p:64:64:64-"):
        return  # a layout we do not know how to amend
    layout = NVPTX64_DATALAYOUT.replace("e-p:64:64:64-", f"e-p:64:64:64-{_SHORT_SHARED_POINTER}-", 1).encode()
    import threading

    state = threading.local()

    class _CapiWithLayout:
        """The LLVM 7 C API, passing the short-pointer layout while a cuda.coop kernel is translated."""

        def __init__(self, lib: object) -> None:
            self._lib = lib

        def __getattr__(self, name: str) -> object:
            return getattr(self._lib, name)

        def llvm70_translate_gpu_module_from_op(self, op, chip, data_layout, *rest):  # noqa: ANN001
            if data_layout is None and getattr(state, "coop", False):
                data_layout = layout
            return self._lib.llvm70_translate_gpu_module_from_op(op, chip, data_layout, *rest)

    def get_capi_with_layout() -> object:
        return _CapiWithLayout(get_capi())

    def translate_coop_aware(module, *args, **kwargs):  # noqa: ANN001, ANN202
        previous = getattr(state, "coop", False)
        try:
            state.coop = _has_coop_symbols(single_gpu_module(module))
        except Exception:  # never fail a compile over the optimisation
            state.coop = False
        try:
            return translate(module, *args, **kwargs)
        finally:
            state.coop = previous

    mo._get_llvm70_capi = get_capi_with_layout
    mo._call_llvm70_capi = translate_coop_aware


# --- launches from several Python threads ------------------------------------------------
# A configured launcher (``kernel[grid, block]``, cached per configuration and so shared by threads) keeps per-launch
# state on itself: the copy-back callbacks of host arrays, the native launcher of the chosen specialisation.
# numba-cuda-mlir 0.6 serialises a dispatcher's launches only on free-threaded Python; with the GIL, threads still
# interleave there, and one thread runs (and clears) another's copy-backs before that thread's kernel ran, so a
# host output is never written. Give every dispatcher the launch lock the free-threaded build already uses, which
# its launchers take on every launch: when it is made, and before any launch configuration is made (a dispatcher
# made before this module was imported). Launchers configured before then keep numba-cuda-mlir's own behaviour.
_launch_lock_bootstrap = threading.Lock()


@_once
def serialise_launches() -> None:
    """Idempotent; a numba-cuda-mlir without this private path keeps its own behaviour."""
    try:
        from numba_cuda_mlir.descriptor import MLIRDispatcher

        init = MLIRDispatcher.__dict__["__init__"]
        configure = MLIRDispatcher.__dict__["_configure_cached"]
    except (ImportError, KeyError):
        return

    def give_launch_lock(dispatcher: object) -> None:
        if getattr(dispatcher, "_launch_lock", None) is None:
            with _launch_lock_bootstrap:  # two threads' first configurations must not make two locks
                if getattr(dispatcher, "_launch_lock", None) is None:
                    dispatcher._launch_lock = threading.RLock()  # type: ignore[attr-defined]

    def make_dispatcher(self, *args, **kwargs):  # noqa: ANN001, ANN202
        init(self, *args, **kwargs)
        give_launch_lock(self)

    def configure_launcher(self, *args, **kwargs):  # noqa: ANN001, ANN202
        give_launch_lock(self)
        return configure(self, *args, **kwargs)

    make_dispatcher.__wrapped__ = init  # type: ignore[attr-defined]
    configure_launcher.__wrapped__ = configure  # type: ignore[attr-defined]
    MLIRDispatcher.__init__ = make_dispatcher
    MLIRDispatcher._configure_cached = configure_launcher


# --- launch cost of integer arguments the kernel specialises on ---------------------------
# A kernel is specialised on an integer argument (ForceLiteralArg;
# docs: concepts, "Compile-time values and specialisation"). numba-cuda-mlir 0.6 then rebuilds the argument's
# literal type with ``types.literal(value)`` on every launch (``MLIRDispatcher._literal_type_for_value``),
# about 5 us of host time per argument and launch. Literal types are interned (one object per type and value),
# so a memo returns the very object the call would build; errors (values it rejects) are not memoised.
_LITERAL_MEMO_LIMIT = 4096


@_once
def memoize_literal_launch_types() -> None:
    """Idempotent; a numba-cuda-mlir without this private hook keeps its own (slower, same) path."""
    try:
        from numba_cuda_mlir.descriptor import MLIRDispatcher

        original = MLIRDispatcher.__dict__["_literal_type_for_value"].__func__
    except (ImportError, KeyError, AttributeError):
        return
    memo: dict[tuple[type, object], object] = {}

    def literal_type_for_value(cls, value, index):  # noqa: ANN001, ANN202
        key = (type(value), value)  # True and 1 are equal keys otherwise
        try:
            return memo[key]
        except (KeyError, TypeError):
            pass
        ty = original(cls, value, index)
        if len(memo) < _LITERAL_MEMO_LIMIT:
            try:
                memo[key] = ty
            except TypeError:  # an unhashable value: nothing to memoise
                pass
        return ty

    literal_type_for_value.__wrapped__ = original  # type: ignore[attr-defined]  (the benchmark's unmemoised row)
    MLIRDispatcher._literal_type_for_value = classmethod(literal_type_for_value)


# --- one build per block shape -------------------------------------------------------------
# numba-cuda-mlir 0.6 keys a planner kernel's builds on the whole launch configuration, grid included, because a
# planner may read any of it. cuda.coop's planner reads the block shape only (the dynamic shared memory it needs is
# reported separately and the cluster shape is a launch attribute), so its builds are marked grid-free and a launch
# at another grid with the same block, dynamic shared memory and cluster reuses the build (issue 19, item 1). The
# mark is withheld when another planner or an extension that reads the launch configuration takes part in the build.
GRID_FREE = "cuda_coop_grid_free"


_own_planner: object = None  # cuda.coop's registered planner class (claim_planner)


def claim_planner(planner: type) -> None:
    """Tell the hooks below which registered planner is cuda.coop's (the package registers it)."""
    global _own_planner
    _own_planner = planner


def _only_cuda_coop_reads_the_launch(extensions: object) -> bool:
    """No planner but cuda.coop's is registered and no extension reads the launch configuration."""
    with _planner_registry._lock:
        planners = tuple(_planner_registry._planners)
    return (all(planner is _own_planner for planner in planners)
            and not any(getattr(extension, "uses_launch_config", False) for extension in extensions or ()))


def mark_grid_free(state: object) -> None:
    """Record on the build being planned that it depends on the block shape only, when nothing else read the launch
    configuration: no other planner registered and no launch-config extension active."""
    if _only_cuda_coop_reads_the_launch(state.metadata.get("targetoptions", {}).get("extensions")):  # type: ignore
        state.metadata[GRID_FREE] = True  # type: ignore[attr-defined]  (numba-cuda-mlir keeps it on the build)


@_once
def reuse_builds_across_grids() -> None:
    """Idempotent; a numba-cuda-mlir without these private names keeps one build per launch configuration."""
    try:
        from numba_cuda_mlir._launch_config import _is_launch_config_key_tuple as is_launch_key
        from numba_cuda_mlir.descriptor import MLIRDispatcher

        original = MLIRDispatcher.__dict__["_find_launch_config_overload_locked"]
    except (ImportError, KeyError):
        return

    def find(self, argtypes, launch_config_key):  # noqa: ANN001, ANN202  (called with the dispatcher's lock held)
        found = original(self, argtypes, launch_config_key)
        if found is not None or not is_launch_key(launch_config_key):
            return found
        same_block = launch_config_key[1:]  # (block, sharedmem, cluster): all but the grid
        for (sig_args, key), cres in tuple(self._launch_config_overloads.items()):
            if (is_launch_key(key) and key[1:] == same_block and cres.metadata.get(GRID_FREE)
                    and len(sig_args) == len(argtypes)
                    and all(self._can_reuse_overload(s, r) for s, r in zip(sig_args, argtypes, strict=True))):
                # Published under this grid's key too, so the next lookup is exact and evicting the first grid's
                # entry (numba-cuda-mlir keeps a bounded number of launch configurations) leaves this one.
                self._launch_config_overloads.setdefault((argtypes, launch_config_key), cres)
                return cres
        return None

    find.__wrapped__ = original  # type: ignore[attr-defined]
    MLIRDispatcher._find_launch_config_overload_locked = find
    _share_loaded_kernels_across_grids(MLIRDispatcher, is_launch_key)


# A reused build still cost a module load per new grid (about 3 ms on the H200): numba-cuda-mlir 0.6 makes a native
# dispatcher per launch configuration, and each loads the cubins it launches. A new grid therefore takes the native
# dispatcher of a configuration that differs in the grid only and holds grid-free builds alone. A shared native
# dispatcher must never load a build that is not grid-free (one made while another planner was registered, say),
# since it would serve it at every grid it is shared by: such a launch gets a native dispatcher of its own first.
def _share_loaded_kernels_across_grids(dispatcher_type: type, is_launch_key: object) -> None:
    try:
        get_native = dispatcher_type.__dict__["_get_launch_config_dispatcher_and_generation"]
        prepare = dispatcher_type.__dict__["_prepare_for_launch"]
        from numba_cuda_mlir._launch_config import _launch_config_key as launch_key
    except (ImportError, KeyError):
        return

    def grid_free_sibling(self, key):  # noqa: ANN001, ANN202  (the launch-config lock is held)
        builds: dict[object, bool] = {}  # key -> every build published under it is grid-free
        for (_, built_key), cres in self._launch_config_overloads.items():
            builds[built_key] = builds.get(built_key, True) and bool(cres.metadata.get(GRID_FREE))
        for other, native in self._launch_config_dispatchers.items():
            if is_launch_key(other) and other[1:] == key[1:] and builds.get(other):
                return native
        return None

    def get_native_dispatcher(self, launch_config):  # noqa: ANN001, ANN202
        key = launch_key(launch_config)
        if is_launch_key(key) and _only_cuda_coop_reads_the_launch(self.extensions):
            with self._launch_config_lock:
                if key not in self._launch_config_dispatchers:
                    native = grid_free_sibling(self, key)
                    if native is not None:
                        self._remember_kernel_dispatcher_locked(key, native)
                        return native, self._launch_config_generation
        return get_native(self, launch_config)

    def prepare_for_launch(self, *args):  # noqa: ANN001, ANN202
        ready = prepare(self, *args)
        native, generation, launch_config, required_shared_memory = ready
        key = launch_key(launch_config)
        if not is_launch_key(key):
            return ready
        with self._launch_config_lock:
            shared = sum(other is native for other in self._launch_config_dispatchers.values()) > 1
            if not shared or generation != self._launch_config_generation or all(
                    cres.metadata.get(GRID_FREE) for (_, built_key), cres in self._launch_config_overloads.items()
                    if built_key == key):
                return ready
            own = self._new_kernel_dispatcher()
            self._remember_kernel_dispatcher_locked(key, own)  # the shared one stays with the other grids
            return own, generation, launch_config, required_shared_memory

    get_native_dispatcher.__wrapped__ = get_native  # type: ignore[attr-defined]
    prepare_for_launch.__wrapped__ = prepare  # type: ignore[attr-defined]
    dispatcher_type._get_launch_config_dispatcher_and_generation = get_native_dispatcher
    dispatcher_type._prepare_for_launch = prepare_for_launch



# --- numba-cuda-mlir's disk cache for kernels without cuda.coop -------------------------------
# numba-cuda-mlir 0.6 neither reads nor writes its on-disk kernel cache while any planner is registered
# (``if not _planner_registry._planners``), since a cached build skips the planners. cuda.coop's planner changes only
# kernels that call cuda.coop, and those never reach that cache: every one is specialised on its launch
# configuration, which numba-cuda-mlir does not cache on disk. So cuda.coop's planner alone does not count there
# (issue 19, item 3); any other planner still does. ``has_planners`` keeps counting every planner, so launches stay
# on the planner-aware path that sizes a cuda.coop kernel's dynamic shared memory.


class _Planners(list):
    """The registry's planner list; false when it holds cuda.coop's planner only."""

    def __bool__(self) -> bool:
        return any(planner is not _own_planner for planner in self)


@_once
def keep_disk_cache_for_plain_kernels() -> None:
    """Idempotent; a numba-cuda-mlir whose registry is not what 0.6 has keeps its own behaviour."""
    registry_type = type(_planner_registry)
    if not isinstance(getattr(_planner_registry, "_planners", None), list) or not isinstance(
            registry_type.__dict__.get("has_planners"), property):
        return

    def has_planners(self) -> bool:  # noqa: ANN001
        with self._lock:
            return len(self._planners) > 0

    with _planner_registry._lock:
        registry_type.has_planners = property(has_planners)
        _planner_registry._planners = _Planners(_planner_registry._planners)


# --- launch cost while cuda.coop's planner is registered --------------------------------------
# With a planner registered, numba-cuda-mlir 0.6 asks on every launch whether the launcher is still ready
# (``_get_ready_launch``), which it skips when none is: a plain kernel hashes its argument types to find its build
# again, and a kernel specialised on its launch configuration (every cuda.coop kernel) also normalises that
# configuration into a key and checks that its native dispatcher is still the registered one; a few microseconds
# per launch in all. The answer changes only when a build or a native dispatcher is dropped or replaced: a
# recompile or new literal arguments replace the generic native dispatcher and advance the generation, and evicting
# or replacing a launch configuration's native dispatcher goes through ``_remember_kernel_dispatcher_locked``, which
# forgets the answers here. So a launcher (known by its launch configuration dict) asking again with the same
# argument types, native dispatcher and generation gets the answer it got before.
_READY_MEMO_LIMIT = 256


@_once
def memoize_ready_launches() -> None:
    """Idempotent; a numba-cuda-mlir without these private names keeps its own (slower, same) path."""
    try:
        from numba_cuda_mlir._launch_config import _launch_config_key as launch_key
        from numba_cuda_mlir.descriptor import MLIRDispatcher

        ready = MLIRDispatcher.__dict__["_get_ready_launch"]
        remember = MLIRDispatcher.__dict__["_remember_kernel_dispatcher_locked"]
    except (ImportError, KeyError):
        return

    def remember_kernel_dispatcher(self, *args, **kwargs):  # noqa: ANN001, ANN202  (the launch-config lock is held)
        self.__dict__.pop("_coop_ready", None)
        return remember(self, *args, **kwargs)

    def get_ready_launch(self, argtypes, available, configured, native, generation):  # noqa: ANN001, ANN202
        state = self.__dict__  # read directly: attribute lookups through the dispatcher's class cost more here
        memo = state.get("_coop_ready")
        entry = memo.get(id(available)) if memo is not None else None
        if (entry is not None and entry[0] is available and entry[1] is configured and entry[2] is native
                and entry[3] == generation and entry[4] == state["_launch_config_generation"]
                and entry[5] is state["_c"] and entry[6] == state["_requires_launch_config"]
                and entry[7] == argtypes):
            if entry[8] is None:
                return entry[9]
            with state["_launch_config_lock"]:
                try:
                    state["_launch_config_dispatchers"].move_to_end(entry[8])  # as the full check does (LRU)
                    return entry[9]
                except KeyError:  # evicted by another thread since: ask again
                    pass
        with self._launch_config_lock:  # the state an answer rests on changes under this lock only
            result = ready(self, argtypes, available, configured, native, generation)
            if result is not None:
                memo = state.setdefault("_coop_ready", {})
                if len(memo) >= _READY_MEMO_LIMIT:
                    memo.clear()
                memo[id(available)] = (available, configured, native, generation, self._launch_config_generation,
                                       self._c, self._requires_launch_config, tuple(argtypes),
                                       launch_key(result[2]), result)
            return result

    remember_kernel_dispatcher.__wrapped__ = remember  # type: ignore[attr-defined]
    get_ready_launch.__wrapped__ = ready  # type: ignore[attr-defined]
    MLIRDispatcher._remember_kernel_dispatcher_locked = remember_kernel_dispatcher
    MLIRDispatcher._get_ready_launch = get_ready_launch
