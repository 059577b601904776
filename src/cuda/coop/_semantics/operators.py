"""Operators of reduce and the scan family (docs: operations/operators)."""
from __future__ import annotations

import builtins
import enum
import functools
import hashlib
import operator
import os
import re
import sys
import sysconfig
import types
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._backend_context import value_abi
from .._errors import CoopTypeError, CoopValueError
from .tuples import symbol_part
from .common import INTEGER_DTYPES, passes_by_pointer, selector_type_error

# canonical name -> (aliases, integer-only)
_BUILTINS: dict[str, tuple[tuple[str, ...], bool]] = {
    "sum": (("+", "add", "plus"), False),
    "multiplies": (("*", "mul", "multiply"), False),
    "min": (("minimum",), False),
    "max": (("maximum",), False),
    "bit_and": (("&",), True),
    "bit_or": (("|",), True),
    "bit_xor": (("^",), True),
}
_ALIASES = {alias: name for name, (aliases, _) in _BUILTINS.items() for alias in (name, *aliases)}


def _callable_aliases() -> dict[Any, str]:
    table: dict[Any, str] = {operator.add: "sum", operator.mul: "multiplies", min: "min", max: "max",
                             operator.and_: "bit_and", operator.or_: "bit_or", operator.xor: "bit_xor"}
    try:  # NumPy ufuncs are recognised when NumPy is importable (it always is inside kernels)
        import numpy as np

        table.update({np.add: "sum", np.multiply: "multiplies", np.minimum: "min", np.maximum: "max",
                      np.bitwise_and: "bit_and", np.bitwise_or: "bit_or", np.bitwise_xor: "bit_xor"})
    except ImportError:  # pragma: no cover
        pass
    return table


@dataclass(frozen=True, eq=False)
class LocalFunction:
    """A lambda or ``def`` made in the body of the kernel (or of the helper that makes the call): as an operator or
    predicate it is C16. Each backend finds them its own way (numba-cuda-mlir in the kernel's IR, the CuTe backend
    among the constants of the calling frame's code)."""

    name: str


@dataclass(frozen=True)
class OperatorSpec:
    """A resolved operator: a built-in functor name, or a user callable with a stable symbol."""

    name: str
    builtin: bool
    function: Any = None  # the Python function of a user callable
    # its values cross the C ABI by pointer (float16, aggregates; docs: qualified, "User-defined aggregates")
    by_pointer: bool = False
    # a predicate's boolean comes back as one byte (the backend's value ABI), not as a C++ bool
    byte_result: bool = False

    @property
    def is_sum(self) -> bool:
        return self.builtin and self.name == "sum"


_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")
_PLAIN = (type(None), bool, int, float, complex, str, bytes)


class _Fingerprint:
    """A stable description of what a callable is, everything that changes its compiled code (docs:
    operations/operators, "Your own function").

    Its code (bytecode, constants, names, recursively into nested code objects), its closure values, defaults and
    keyword defaults, and the values of the globals its code names: a function (or dispatcher) of the user's own
    files by its own fingerprint, recursively, cycles cut by name; one of the standard library or an installed
    package (``cutlass.max``) by its name and its package's version; a module by its name and version and the plain
    constants the code reads from it; a class by its name; a constant, container, NumPy scalar or array by its
    value. Never the process around it: no module's other attributes (``sys.modules``, ``linecache.cache``), no
    library's caches, no ids or addresses, so equal inputs describe equally in every process and at any time in one
    process.
    """

    def __init__(self) -> None:
        self.active: set[int] = set()  # functions and containers being described (cycle guard)
        self.done: dict[int, Any] = {}  # functions already described in this fingerprint

    def function(self, fn: Any) -> Any:
        fn = getattr(fn, "py_func", fn)
        name = (getattr(fn, "__module__", None) or "", getattr(fn, "__qualname__", None) or "")
        key = id(fn)
        if key in self.done:
            return ("fn", name, "see-above")
        if key in self.active:
            return ("fn", name, "recursive")
        self.active.add(key)
        try:
            code = fn.__code__
            names = sorted(_names_read(code))
            scope = getattr(fn, "__globals__", {}) or {}
            reads = tuple((n, self.value(scope[n], names)) if n in scope else (n, self._builtin(n)) for n in names)
            cells = []
            for cell in getattr(fn, "__closure__", None) or ():
                try:
                    cells.append(self.value(cell.cell_contents, names))
                except ValueError:  # an empty cell
                    cells.append("<empty>")
            kwdefaults = getattr(fn, "__kwdefaults__", None) or {}
            result = ("fn", name, self.code(code), ("globals", reads), ("closure", tuple(cells)),
                      ("defaults", self.value(getattr(fn, "__defaults__", None), names)),
                      ("kwdefaults", tuple((k, self.value(v, names)) for k, v in sorted(kwdefaults.items()))))
        finally:
            self.active.discard(key)
        self.done[key] = result
        return result

    def code(self, code: Any) -> Any:
        consts = tuple(self.code(c) if isinstance(c, types.CodeType) else self.value(c, ()) for c in code.co_consts)
        return ("code", code.co_name, code.co_code.hex(), consts, code.co_names, code.co_varnames, code.co_freevars,
                code.co_cellvars, code.co_argcount, code.co_posonlyargcount, code.co_kwonlyargcount, code.co_flags)

    @staticmethod
    def _builtin(name: str) -> Any:
        if hasattr(builtins, name):
            return ("builtin", name)
        return "<undefined>"

    def value(self, value: Any, names: Any) -> Any:
        """``names``: the names the referencing code reads (the attributes that matter of a module or object)."""
        if isinstance(value, _PLAIN):
            return (type(value).__name__, repr(value))
        if isinstance(value, np.generic):
            return ("np", value.dtype.str, value.tobytes().hex())
        if isinstance(value, np.ndarray):
            if value.dtype.hasobject:
                return ("array", value.shape, self.value(value.tolist(), names))
            data = hashlib.sha256(np.ascontiguousarray(value).tobytes()).hexdigest()
            return ("array", value.dtype.str, value.shape, data)
        if isinstance(value, type):
            return ("class", value.__module__, value.__qualname__)
        if isinstance(value, types.CodeType):
            return self.code(value)
        function = getattr(value, "py_func", value)
        if hasattr(function, "__code__"):  # a Python function or a jit dispatcher
            if _installed(function.__code__.co_filename):  # library code: its name and version
                module = getattr(function, "__module__", None) or ""
                return ("installed", module, getattr(function, "__qualname__", ""), _package_version(module))
            return self.function(value)
        if isinstance(value, types.ModuleType):
            return ("module", value.__name__, _package_version(value.__name__, value),
                    self._constants(vars(value), names))
        key = id(value)
        if key in self.active:
            return ("recursive", type(value).__qualname__)
        self.active.add(key)
        try:
            if isinstance(value, (tuple, list)):
                return (type(value).__name__, tuple(self.value(v, names) for v in value))
            if isinstance(value, (set, frozenset)):
                return (type(value).__name__, tuple(sorted((self.value(v, names) for v in value), key=repr)))
            if isinstance(value, dict):
                items = sorted(((self.value(k, names), self.value(v, names)) for k, v in value.items()), key=repr)
                return ("dict", tuple(items))
            try:
                text = repr(value)
            except Exception:  # noqa: BLE001 - a value that cannot describe itself is described by its type
                text = ""
            state = getattr(value, "__dict__", None)
            attrs = self._constants(state, names) if isinstance(state, dict) else ()
            return ("object", type(value).__module__, type(value).__qualname__, _ADDRESS.sub("", text), attrs)
        finally:
            self.active.discard(key)

    def _constants(self, namespace: dict[str, Any], names: Any) -> tuple[Any, ...]:
        """The plain constants (numbers, strings, NumPy scalars and arrays, tuples of them) among the attributes
        ``names`` of a module or object: what code reading ``module.NAME`` sees, and nothing else of it."""
        return tuple((n, self.value(namespace[n], ())) for n in names if n in namespace
                     and _is_constant(namespace[n]))


def _is_constant(value: Any) -> bool:
    if isinstance(value, (tuple, frozenset)):
        return all(_is_constant(v) for v in value)
    return isinstance(value, (_PLAIN, np.generic, np.ndarray))


def _package_version(name: str, module: types.ModuleType | None = None) -> str:
    """A module's version, or its top-level package's (``cutlass.cute`` is ``cutlass``'s); "" when none says."""
    version = getattr(module, "__version__", None)
    if version is None:
        version = getattr(sys.modules.get(name.partition(".")[0]), "__version__", None)
    return str(version) if isinstance(version, (str, tuple)) else ""


@functools.lru_cache(maxsize=None)
def _installed_roots() -> tuple[str, ...]:
    paths = sysconfig.get_paths()
    roots = {os.path.realpath(paths[key]) for key in ("stdlib", "platstdlib", "purelib", "platlib") if key in paths}
    return tuple(sorted(root + os.sep for root in roots))


@functools.lru_cache(maxsize=4096)
def _installed(filename: str) -> bool:
    """Whether code comes from the standard library or an installed package (not the user's own files): the same
    code for the whole process, whose module globals are the library's own state (its caches and registries)."""
    return os.path.realpath(filename).startswith(_installed_roots())


def _names_read(code: Any) -> set[str]:
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _names_read(const)
    return names


def callable_symbol(function: Any, dtype: str = "", arity: int = 2) -> str:
    """The C symbol of ``function`` compiled for ``arity`` arguments of ``dtype``.

    Derived from everything that changes the compiled code (see ``_Fingerprint``), the dtype and the arity, so one
    function at two dtypes, distinct closures, or a function whose globals changed get distinct symbols (and so
    distinct C++ and provider cache keys), while equal inputs give the same symbol in every process.
    """
    description = (_Fingerprint().function(function), dtype, arity)
    digest = hashlib.sha256(repr(description).encode()).hexdigest()[:20]
    return f"cuda_coop_fn_{digest}" + (f"_{symbol_part(dtype)}" if dtype else "")


def resolve_operator(op: str, param: str, value: Any, dtype: str) -> OperatorSpec:
    if value is None:
        return OperatorSpec("sum", True)
    # an operator name is a plain string, never an enum member (docs: operations/index, "Rules every operation shares")
    if isinstance(value, enum.Enum):
        raise selector_type_error(op, param, value, "an operator string or a Python/device function")
    if isinstance(value, str):
        canonical = _ALIASES.get(value.strip().lower().replace("-", "_"))
        if canonical is None:
            raise CoopValueError(f"{op} {param} must be one of: {', '.join(_BUILTINS)}; got {value!r}")
    elif isinstance(value, LocalFunction):  # a lambda or def in the kernel body (C16)
        # operators are defined at module level (docs: operations/operators, "Your own function")
        raise CoopTypeError(f"{op} {param} {value.name} is defined inside the kernel; define operator callables at "
                            "module scope")
    else:
        try:
            canonical = _callable_aliases().get(value)
        except TypeError:  # unhashable
            canonical = None
        if canonical is None:
            function = getattr(value, "py_func", value)  # a cuda.jit(device=True) dispatcher
            if not callable(function) or not hasattr(function, "__code__"):
                raise CoopTypeError(
                    f"{op} {param} must be an operator string or a Python/device function; got {value!r}")
            return OperatorSpec(callable_symbol(function, dtype), False, function, passes_by_pointer(dtype))
    if _BUILTINS[canonical][1] and dtype not in INTEGER_DTYPES:
        raise CoopTypeError(f"{op} {param} {canonical!r} requires an integer dtype; got {dtype}")
    return OperatorSpec(canonical, True)


def resolve_predicate(op: str, param: str, value: Any, dtype: str) -> OperatorSpec | None:
    """A user predicate ``f(a, b) -> bool`` (merge-sort ``compare_op``, discontinuity ``flag_op``;
    docs: operations/merge_sort, "Custom comparison"; operations/adjacent, "Custom operators").

    Only Python functions and ``cuda.jit(device=True)`` dispatchers are accepted (C16 for one defined in the
    kernel, C14 otherwise): a predicate has no operator string. It is compiled returning a boolean, so its symbol
    carries a ``_pred`` suffix that keeps it apart from the same function used as a binary operator.
    """
    if value is None:
        return None
    if isinstance(value, LocalFunction):
        raise CoopTypeError(f"{op} {param} {value.name} is defined inside the kernel; define operator callables at "
                            "module scope")
    function = getattr(value, "py_func", value)
    if isinstance(value, str) or not callable(function) or not hasattr(function, "__code__"):
        raise CoopTypeError(f"{op} {param} must be a Python/device function; got {value!r}")
    return OperatorSpec(callable_symbol(function, dtype) + "_pred", False, function, passes_by_pointer(dtype),
                        value_abi().predicate_byte)

