"""Shared vocabulary of the planning layer: dtypes, selectors, launch shapes, scratch needs."""
from __future__ import annotations

import enum
import operator
from dataclasses import dataclass
from typing import Sequence, TypeGuard

from .._backend_context import qualified_namespace, value_abi
from .._errors import CoopTypeError, CoopValueError
from .aggregates import aggregate, is_aggregate
from .tuples import fields, is_tuple, tuple_c_type

# Numeric dtypes of the common API: name -> (C++ type, size in bytes).
NUMERIC_DTYPES: dict[str, tuple[str, int]] = {
    "int8": ("signed char", 1),
    "int16": ("short", 2),
    "int32": ("int", 4),
    "int64": ("long long", 8),
    "uint8": ("unsigned char", 1),
    "uint16": ("unsigned short", 2),
    "uint32": ("unsigned int", 4),
    "uint64": ("unsigned long long", 8),
    "float32": ("float", 4),
    "float64": ("double", 8),
}
INTEGER_DTYPES = tuple(name for name in NUMERIC_DTYPES if "int" in name)
# float16 (C++ __half) wherever floats are accepted, through the qualified namespace only (docs: operations/index,
# "Dtypes"); the backend rejects it in common calls (P1) before a family sees it, so families accept every dtype
# of this table.
HALF_DTYPES: dict[str, tuple[str, int]] = {"float16": ("__half", 2)}
ALL_NUMERIC_DTYPES: dict[str, tuple[str, int]] = {**NUMERIC_DTYPES, **HALF_DTYPES}

from .._markers.records import (  # noqa: E402  (declared with the operations' records, whose groups name them)
    BLOCK as BLOCK, CLUSTER as CLUSTER, GRID as GRID, LOGICAL_WARP as LOGICAL_WARP, THREAD as THREAD, WARP as WARP,
    WARPS_IN_BLOCK as WARPS_IN_BLOCK,
)
WARP_SCOPE = (WARP, LOGICAL_WARP)


def passes_by_pointer(dtype: str) -> bool:
    """Values of ``dtype`` reach user callables by pointer (docs: qualified, "User-defined aggregates"), as the
    value ABI of the backend compiling now says: float16 when its half is not C++'s ``__half`` struct, aggregates
    when it holds them as pointers to their bytes."""
    abi = value_abi()
    return (dtype == "float16" and abi.half_as_bits) or (is_aggregate(dtype) and abi.aggregates_by_pointer)


def c_type(dtype: str) -> str:
    if is_tuple(dtype):  # a multi-operand value
        return tuple_c_type(dtype)
    found = aggregate(dtype)
    return found.c_type if found is not None else ALL_NUMERIC_DTYPES[dtype][0]


def itemsize(dtype: str) -> int:
    return layout(dtype)[0]


def layout(dtype: str) -> tuple[int, int]:
    """(size, alignment) in bytes of one value as C lays it out; a tuple's is its struct's, the operands as fields
    in order (``_cub.tuples``)."""
    if is_tuple(dtype):
        size, alignment = 0, 1
        for member in fields(dtype):
            member_size, member_alignment = layout(member)
            size = -(-size // member_alignment) * member_alignment + member_size
            alignment = max(alignment, member_alignment)
        return -(-size // alignment) * alignment, alignment
    found = aggregate(dtype)
    if found is not None:
        return found.size, found.alignment
    size = ALL_NUMERIC_DTYPES[dtype][1]
    return size, size


def is_selector_string(value: object) -> TypeGuard[str]:
    """A plain string: an enum member is rejected whatever its mixin (C1; docs: operations/index,
    "Rules every operation shares"), a ``str`` subclass or not."""
    return isinstance(value, str) and not isinstance(value, enum.Enum)


def selector_type_error(op: str, param: str, value: object, expected: str = "a string") -> CoopTypeError:
    """C1: ``value`` where a selector string is required."""
    hint = f" (an enum member: pass its string, {type(value).__name__}.{value.name}.value)" \
        if isinstance(value, enum.Enum) else ""
    return CoopTypeError(f"{op} {param} must be {expected}; got {type(value).__name__}{hint}")


def normalize_selector(op: str, param: str, value: object, allowed: Sequence[str]) -> str:
    """Match a selector string (docs: operations/index, "Rules every operation shares"): trimmed, case-insensitive, '-'
    as '_'."""
    if not is_selector_string(value):
        raise selector_type_error(op, param, value)
    assert isinstance(value, str)
    canonical = value.strip().lower().replace("-", "_")
    if canonical not in allowed:
        raise CoopValueError(f"{op} {param} must be one of: {', '.join(allowed)}; got {value!r}")
    return canonical


def is_power_of_two(value: int) -> bool:
    return value > 0 and value & (value - 1) == 0


def compile_time_int(value: object) -> int | None:
    """``value`` as an ``int`` where it is a compile-time integer: an ``int``, a NumPy integer or any object with
    ``__index__`` (SPEC 6.1); None for a bool (Python's or NumPy's) and for anything that cannot say its integer (a
    compiler's run-time value)."""
    if isinstance(value, bool) or type(value).__name__ in _TRUTH_TYPES:
        return None
    try:  # an __index__ that returns no int (a float numeric of a compiler) is refused by operator.index
        return operator.index(value)  # type: ignore[arg-type]
    except Exception:  # a compiler's run-time value refuses in its own words: not a compile-time integer
        return None


# the names of truth-value types that still answer __index__: NumPy's (1.x) and the CuTe DSL's
_TRUTH_TYPES = ("bool_", "Boolean")


def require_alignment(what: str, alignment: object) -> int:
    """P13: ``alignment`` of ``what`` (``ThreadData``, ``TempStorage``, a shared or local array) is a positive power
    of two (a value that is not an integer at all is P13 too, where ``what`` has no type check of its own); returned
    as an ``int``."""
    number = compile_time_int(alignment)
    if number is None or not is_power_of_two(number):
        raise CoopValueError(f"{what} alignment must be a positive power of two; got {alignment!r}")
    return number


@dataclass(frozen=True)
class LaunchShape:
    """The block shape a kernel specialisation is compiled for."""

    block: tuple[int, int, int]

    @property
    def threads(self) -> int:
        x, y, z = self.block
        return x * y * z


@dataclass(frozen=True)
class GroupSpec:
    """A resolved group: kind, size ``G`` of one group, and instances per block."""

    kind: str
    size: int
    instances: int
    exhaustive: bool = True

    @property
    def is_warp_scope(self) -> bool:
        return self.kind in WARP_SCOPE


@dataclass(frozen=True)
class ScratchNeed:
    """Shared memory one call needs; size and alignment come from the compiled provider."""

    size: int
    alignment: int


@dataclass(frozen=True)
class Static:
    """An option whose value the compiler knows."""

    value: object


@dataclass(frozen=True)
class Runtime:
    """An option known only at run time; ``dtype`` when the planner can tell it."""

    dtype: str | None = None


Control = Static | Runtime | None

RUNTIME_INT_DTYPES = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32")


def check_runtime_int(op: str, param: str, control: Control) -> None:
    """Runtime integer controls: signed integers up to 64 bits, unsigned up to 32 bits
    (docs: operations/index, "Rules every operation shares")."""
    if isinstance(control, Runtime) and control.dtype is not None and control.dtype not in RUNTIME_INT_DTYPES:
        raise CoopTypeError(
            f"{op} {param} must be a signed integer of at most 64 bits or an unsigned integer of at most "
            f"32 bits; got {control.dtype}"
        )
    if not isinstance(control, Static):
        return
    typed = getattr(getattr(control.value, "dtype", None), "name", None)  # a NumPy scalar constant: its dtype
    if typed in RUNTIME_INT_DTYPES:
        return
    if typed is not None or isinstance(control.value, bool) or not isinstance(control.value, int):
        raise CoopTypeError(
            f"{op} {param} must be a signed integer of at most 64 bits or an unsigned integer of at most "
            f"32 bits; got {typed or type(control.value).__name__}"
        )


def check_tile_valid_items(op: str, control: Control, tile: int) -> None:
    """``valid_items`` of a call over a tile of ``tile`` blocked positions: a runtime integer (C6) or a constant in
    ``[0, tile]`` (C7); a runtime value outside that range traps on the device (docs: errors, "Device traps")."""
    if control is None:
        return
    check_runtime_int(op, "valid_items", control)
    if isinstance(control, Static) and not 0 <= control.value <= tile:  # type: ignore[operator]
        raise CoopValueError(f"{op} static valid_items must be between 0 and {tile}; got {control.value}")


def literal_as(op: str, param: str, value: object, dtype: str) -> int | float:
    """Convert a Python literal to ``dtype`` at compile time (C10; docs: operations/index,
    "Rules every operation shares").

    A NumPy scalar constant (a closure or global) is typed: like a runtime value it must have exactly ``dtype`` (C9).
    """
    typed = getattr(getattr(value, "dtype", None), "name", None)  # duck-typed: no NumPy import in this layer
    if typed is not None and hasattr(value, "item"):
        if typed != dtype:
            raise CoopTypeError(f"{op} {param} must have the payload dtype {dtype}; got {typed}; cast it")
        item: int | float = value.item()  # a NumPy scalar's Python value
        return item
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise CoopTypeError(f"{op} {param} must have the payload dtype {dtype}; got {type(value).__name__}; cast it")
    if dtype.startswith(("int", "uint")):
        if isinstance(value, float) and not value.is_integer():
            raise CoopValueError(f"{op} {param} literal {value!r} is not representable as {dtype}")
        bits = itemsize(dtype) * 8
        lo, hi = (0, 2**bits - 1) if dtype.startswith("u") else (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1)
        if not lo <= int(value) <= hi:
            raise CoopValueError(f"{op} {param} literal {value!r} is not representable as {dtype}")
        return int(value)
    largest = {"float32": 3.4028234663852886e38, "float16": 65504.0}.get(dtype)
    if largest is not None and isinstance(value, (int, float)) and abs(value) != float("inf"):
        if abs(value) > largest:
            raise CoopValueError(f"{op} {param} literal {value!r} is not representable as {dtype}")
    return float(value)


def check_companion_extent(name: str, operand: str, companion: str, items_per_thread: int, extent: int) -> None:
    """A companion operand (scan ``head_flags``, argmax ``indices``) has the shape of ``operand``: a payload of its
    extent, or a scalar for a scalar (extent 0)."""
    if extent == items_per_thread:
        return
    if not extent or not items_per_thread:
        raise CoopTypeError(f"{name} {companion} must be " + (f"a scalar, as {operand} is" if not items_per_thread
                            else f"a ThreadData of {items_per_thread} items, as {operand} is"))
    raise CoopValueError(f"{name} {operand} and {companion} must have the same items_per_thread "
                         f"({items_per_thread} != {extent})")


BOOLEAN_DTYPES = ("bool", "boolean")  # a truth value's dtype as each backend names it


def check_flags(name: str, items_per_thread: int, flags: tuple[str | None, int], param: str = "flags",
                operand: str = "items") -> str:
    """The flags' dtype as the C++ reads them: an integer payload of the items' extent, or for scalar items an
    integer or boolean scalar (a comparison), which crosses as uint8 (SPEC 8.17's head_flags; P2, P5, P7): select's
    ``flags``, a segmented reduction's ``head_flags``."""
    dtype, extent = flags
    check_companion_extent(name, operand, param, items_per_thread, extent)
    if extent and dtype not in INTEGER_DTYPES:
        scalar = "scalar items" if operand == "items" else f"a scalar {operand}"
        raise CoopTypeError(f"{name} does not support {param} dtype {dtype}; supported: {', '.join(INTEGER_DTYPES)}; "
                            f"a boolean flag is accepted as the scalar of {scalar}")
    if not extent and dtype not in INTEGER_DTYPES and dtype not in BOOLEAN_DTYPES:
        raise CoopTypeError(f"{name} {param} must be an integer or boolean scalar; got {dtype}")
    return "uint8" if dtype in BOOLEAN_DTYPES else dtype  # type: ignore[return-value]


def check_valid_items(name: str, valid_items: object, positions: int) -> None:
    """C6 for the control's dtype, C7 for a static value outside ``0 ... positions`` (select, partition and segmented
    reductions: SPEC 8.20, 8.21)."""
    if valid_items is None:
        return
    check_runtime_int(name, "valid_items", valid_items)  # type: ignore[arg-type]
    if isinstance(valid_items, Static) and not 0 <= valid_items.value <= positions:  # type: ignore[operator]
        raise CoopValueError(f"{name} static valid_items must be between 0 and {positions}; got {valid_items.value}")


def dtype_string_error(name: str, param: str, value: str) -> CoopTypeError:
    """A dtype option (``counter_dtype``, ``decoded_offset_dtype``) given as a string: dtypes are named by their
    types, never by strings, as ``ThreadData``'s (P12; docs: errors, "Payloads and arrays")."""
    hint = f": pass np.{value}" if value in ALL_NUMERIC_DTYPES else ""
    return CoopTypeError(f"{name} {param} must be a NumPy scalar type, not the string {value!r}{hint}")


def static_bool(name: str, param: str, value: object) -> bool:
    """A compile-time bool option (None: False)."""
    if value is None:
        return False
    if isinstance(value, bool) or type(value).__name__ == "bool_":
        return bool(value)
    raise CoopTypeError(f"{name} {param} must be a compile-time bool")


def static_positive(name: str, param: str, value: object) -> int:
    """A compile-time positive integer option (``bins``, ``decoded_items_per_thread``, ...)."""
    if isinstance(value, bool) or not hasattr(value, "__index__"):
        raise CoopTypeError(f"{name} {param} must be a compile-time integer")
    number: int = value.__index__()
    if number <= 0:
        raise CoopValueError(f"{name} {param} must be positive; got {number}")
    return number


# Dtypes only the qualified API takes (docs: operations/index, "Dtypes").
QUALIFIED_DTYPES = ("float16",)
# The most local memory one thread may address (CUDA: 512 KiB on every supported architecture).
LOCAL_MEMORY_LIMIT = 512 * 1024


# Payload operands that hold integers in every namespace, whatever the operation's dtype (docs: operations/scan,
# "Reverse and segmented scans"; operations/argreduce): a P2 there lists the integer dtypes only.
INTEGER_OPERANDS = ("head_flags", "indices", "flags", "run_lengths")


def check_payload_dtype(op: str, param: str, dtype: str | None, qualified: bool) -> None:
    """P1/P2: ``dtype`` of a payload or array operand of ``op`` must be one of the numeric dtypes."""
    if dtype is None or dtype in NUMERIC_DTYPES:
        return
    if param in INTEGER_OPERANDS:
        hint = {"head_flags": "; a boolean flag is accepted as the scalar of a scalar scan",
                "flags": "; a boolean flag is accepted as the scalar of scalar items"}.get(param, "")
        raise CoopTypeError(f"{op} does not support {param} dtype {dtype}; supported: {', '.join(INTEGER_DTYPES)}"
                            f"{hint}")
    require_common_dtype(op, param, dtype, qualified)
    if dtype in QUALIFIED_DTYPES or is_aggregate(dtype):
        return  # a qualified call's
    what = "dtype" if param == "dtype" else f"{param} dtype"  # a constructor's own dtype= is named once
    raise CoopTypeError(f"{op} does not support {what} {dtype}; supported: {', '.join(NUMERIC_DTYPES)}")


def require_common_dtype(op: str, param: str, dtype: str | None, qualified: bool) -> None:
    """P1: float16 and aggregates are the qualified namespaces' (docs: operations/index, "Dtypes"); a common call
    naming one is told which namespace takes it. Any other dtype passes (the operation decides on it)."""
    if qualified or not (dtype in QUALIFIED_DTYPES or is_aggregate(dtype)):
        return
    raise CoopTypeError(f"{op} supports {param} dtypes {', '.join(NUMERIC_DTYPES)} through the common API; use "
                        f"{qualified_namespace(dtype)} for {dtype}")


_ASSIGNMENT = "assignment at line "


def assignment_at(line: int) -> str:
    """Where a typed assignment gave a payload dtype evidence, as P8 names it."""
    return f"{_ASSIGNMENT}{line}"


def conflicting_dtypes(name: str, first: tuple[str, str], second: tuple[str, str]) -> CoopTypeError:
    """P8: two pieces of payload ``name``'s dtype evidence, ``(dtype, where)`` each, disagree; ``first`` was met first
    in the kernel's order, and an operation is named before an assignment it disagrees with (docs: concepts,
    "ThreadData payloads")."""
    if first[1].startswith(_ASSIGNMENT) and not second[1].startswith(_ASSIGNMENT):
        first, second = second, first
    return CoopTypeError(f"ThreadData {name} has conflicting dtypes {first[0]} ({first[1]}) and {second[0]} "
                         f"({second[1]})")


def declared_dtype_conflict(name: str, declared: str, line: int | str, dtype: str, where: str) -> CoopTypeError:
    """P8: a typed assignment (``where``) disagrees with the ``dtype=`` payload ``name`` declared at ``line``
    (``dtype`` never converts)."""
    return CoopTypeError(f"ThreadData {name} has conflicting dtypes {declared} (dtype= at line {line}) and {dtype} "
                         f"({where}); cast the value")


# The most items one thread's payload may hold (P17, a payload beyond a hard limit): per-item code of that size
# builds for minutes and the payload lives in local memory; larger tiles belong in shared memory or in a loop over
# tiles.
PAYLOAD_ITEMS_LIMIT = 4096


def check_payload_extent(var: str, items_per_thread: int, dtype: str | None, kind: str = "ThreadData") -> None:
    """P17: at most PAYLOAD_ITEMS_LIMIT items per thread (``dtype`` None: not known yet, the bytes are not named)."""
    if items_per_thread <= PAYLOAD_ITEMS_LIMIT:
        return
    known = dtype in ALL_NUMERIC_DTYPES or is_aggregate(dtype)
    size = f" ({items_per_thread * itemsize(dtype)} bytes of {dtype})" if known else ""  # type: ignore[arg-type]
    raise CoopValueError(
        f"{kind} {var} needs {items_per_thread} items per thread{size}; the limit is {PAYLOAD_ITEMS_LIMIT} items per "
        "thread: keep a larger tile in shared memory (cuda.shared.array) or loop over tiles of at most "
        f"{PAYLOAD_ITEMS_LIMIT} items per thread")


def check_payload_bytes(var: str, items_per_thread: int, dtype: str | None) -> None:
    """P17: a payload lives in one thread's local memory."""
    size = items_per_thread * (itemsize(dtype) if dtype in ALL_NUMERIC_DTYPES or is_aggregate(dtype) else 1)
    if size > LOCAL_MEMORY_LIMIT:
        raise CoopValueError(f"ThreadData {var} needs {size} bytes per thread; the limit is {LOCAL_MEMORY_LIMIT}")


def check_block_shape(kernel: str, block: tuple[int, ...]) -> None:
    """G22: every dimension positive, x and y at most 1024, z at most 64, at most 1024 threads in all."""
    x, y, z = block
    threads = x * y * z
    if min(block) <= 0 or x > 1024 or y > 1024 or z > 64 or threads > 1024:
        raise CoopValueError(f"kernel {kernel}: block shape {tuple(block)} is not a valid CUDA block")
