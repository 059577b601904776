"""Planning of block run-length decoding (docs: operations/run_length_decode): the windowed and the bulk form."""
from __future__ import annotations

from dataclasses import dataclass

from .._errors import CoopTypeError, CoopUnsupportedError, CoopValueError
from .aggregates import is_aggregate
from .common import (
    ALL_NUMERIC_DTYPES,
    INTEGER_DTYPES,
    NUMERIC_DTYPES,
    Runtime,
    Static,
    check_runtime_int,
    static_positive,
)
from .._markers import records
from .shape import CallShape

# the run table's offset type: decoded_offset_dtype (docs: operations/run_length_decode, "Qualified additions")
OFFSET_DTYPES = ("uint32", "uint64")


def decodes_into(op: str) -> bool:
    """Whether form ``op`` writes the whole stream to an array (else it returns one window)."""
    return bool(records.of(op).fixed("into", False))


def offset_param(op: str) -> str:
    """The static offset option of form ``op`` (a literal must be nonnegative; a runtime one traps if negative)."""
    return str(records.of(op).fixed("offset"))


@dataclass(frozen=True)
class RunLengthSpec:
    """Everything the code generator needs for one run-length decode call."""

    op: str  # the form: run_length_decode or run_length_decode_into
    threads: int
    value_dtype: str
    length_dtype: str
    runs_per_thread: int
    decoded_items_per_thread: int
    offset: int | None  # the literal offset; None when it is a runtime operand
    barrier: bool
    offset_dtype: str = "uint32"  # decoded offsets and totals (qualified: uint64 for totals beyond 2**32 - 1)
    total_dtype: str | None = None  # dtype of the qualified total_decoded_size payload, when given
    relative_offsets: bool = False  # the qualified relative_offsets payload (window) or destination (bulk)

    @property
    def window_items(self) -> int:
        return self.threads * self.decoded_items_per_thread


@dataclass(frozen=True)
class Extensions:
    """The qualified options of one call (docs: operations/run_length_decode, "Qualified additions"); payloads as
    (dtype, extent), the destination by dtype."""

    offset_dtype: str | None = None
    total: tuple[str, int] | None = None
    relative: tuple[str, int] | None = None
    relative_destination: str | None = None  # the array's dtype ("" when not visible before typing)


@dataclass(frozen=True, kw_only=True)
class RunLengthOptions:
    """``run_lengths``: that payload's (dtype, extent); the offset (``window_offset`` or ``destination_offset``) is
    the shape's control of that name."""

    run_lengths: tuple[str, int]
    decoded_items_per_thread: object = None
    extensions: Extensions = Extensions()


def offset_dtype_of(name: str, dtype: str | None) -> str:
    """``decoded_offset_dtype``: None (the default) means uint32."""
    dtype = "uint32" if dtype is None else dtype
    if dtype not in OFFSET_DTYPES:
        raise CoopTypeError(f"{name} does not support decoded_offset_dtype {dtype}; supported: "
                            f"{', '.join(OFFSET_DTYPES)}")
    return dtype


def _check_extensions(name: str, ext: Extensions, offset_dtype: str, decoded: int) -> None:
    if ext.total is not None:
        dtype, extent = ext.total
        if extent != 1:
            raise CoopValueError(f"{name} total_decoded_size must be a ThreadData of one item; got {extent} items")
        allowed = ("uint64",) if offset_dtype == "uint64" else OFFSET_DTYPES
        if dtype not in allowed:
            raise CoopTypeError(f"{name} does not support total_decoded_size dtype {dtype} with decoded_offset_dtype "
                                f"{offset_dtype}; supported: {', '.join(allowed)}")
    if ext.relative is not None:
        dtype, extent = ext.relative
        if extent != decoded:
            raise CoopValueError(f"{name} relative_offsets must have decoded_items_per_thread items "
                                 f"({extent} != {decoded})")
        if dtype != offset_dtype:
            raise CoopTypeError(f"{name} relative_offsets dtype {dtype} does not match decoded_offset_dtype "
                                f"{offset_dtype}")
    if ext.relative_destination and ext.relative_destination != offset_dtype:
        raise CoopTypeError(f"{name} relative_offsets_destination dtype {ext.relative_destination} does not match "
                            f"decoded_offset_dtype {offset_dtype}")


def plan_run_length_decode(shape: CallShape, opts: RunLengthOptions) -> RunLengthSpec:
    """The run values are the shape's operand."""
    op, name, launch = shape.op, shape.name, shape.launch
    value_dtype, value_extent = shape.dtypes[0], shape.items_per_thread
    (length_dtype, length_extent), extensions = opts.run_lengths, opts.extensions
    decoded_items_per_thread, offset = opts.decoded_items_per_thread, shape.control(offset_param(op))
    if launch.block[1] != 1 or launch.block[2] != 1:
        raise CoopUnsupportedError(f"{name} requires a one-dimensional block; block shape is {launch.block}")
    # run values may be numbers or (qualified) aggregates (docs: qualified, "User-defined aggregates")
    if value_dtype not in ALL_NUMERIC_DTYPES and not is_aggregate(value_dtype):
        raise CoopTypeError(f"{name} does not support run_values dtype {value_dtype}; supported: "
                            f"{', '.join(NUMERIC_DTYPES)}")
    if length_dtype not in INTEGER_DTYPES:
        raise CoopTypeError(f"{name} does not support run_lengths dtype {length_dtype}; supported: "
                            f"{', '.join(INTEGER_DTYPES)}")
    if value_extent != length_extent:
        raise CoopValueError(f"{name} run_values and run_lengths must have the same items_per_thread "
                             f"({value_extent} != {length_extent})")
    if decoded_items_per_thread is None:
        raise CoopTypeError(f"{name}: missing a required argument: 'decoded_items_per_thread'")
    decoded = static_positive(name, "decoded_items_per_thread", decoded_items_per_thread)
    param = offset_param(op)
    check_runtime_int(name, param, offset)
    literal = None
    if isinstance(offset, Static):
        literal = int(offset.value)  # type: ignore[call-overload]
        if literal < 0:
            raise CoopValueError(f"{name} static {param} must be nonnegative; got {literal}")  # C8, naming it
    elif offset is None:
        literal = 0
    offset_dtype = offset_dtype_of(name, extensions.offset_dtype)
    _check_extensions(name, extensions, offset_dtype, decoded)
    runs = launch.threads * value_extent
    if runs > 2**31 - 1:  # CUB indexes the run table with 32-bit offsets
        raise CoopValueError(f"{name} tile of {runs} items exceeds CUB's limit of {2**31 - 1} for this algorithm")
    relative = extensions.relative is not None or extensions.relative_destination is not None
    return RunLengthSpec(op, launch.threads, value_dtype, length_dtype, value_extent, decoded,
                         None if isinstance(offset, Runtime) else literal, shape.reuse_barrier,
                         offset_dtype, extensions.total[0] if extensions.total else None, relative)
