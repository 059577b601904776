"""Planning of load and store calls (docs: operations/load_store)."""
from __future__ import annotations

from dataclasses import dataclass

from .._errors import CoopTypeError, CoopValueError
from .aggregates import is_aggregate
from .common import (
    ALL_NUMERIC_DTYPES,
    BLOCK, NUMERIC_DTYPES, GroupSpec, Static,
    check_runtime_int, literal_as, normalize_selector,
)
from .groups import reject_warp_descriptor, require_complete_warps
from .shape import CallShape

ALGORITHMS = ("direct", "striped", "vectorize", "transpose", "warp_transpose", "warp_transpose_timesliced")
BLOCK_ONLY = ("warp_transpose", "warp_transpose_timesliced")
SCRATCH_ALGORITHMS = ("transpose", "warp_transpose", "warp_transpose_timesliced")
# Above this many items per thread, load and store are loops rather than CUB's fully unrolled per-item code, whose
# build time grows faster than linearly (a 1024-item transpose pair: a minute; 4096 direct items: 40 s). Every
# algorithm but striped then reads and writes the blocked arrangement directly: the same result, without the
# shared-memory exchange (whose scratch, T * K items, would be most of a block's shared memory at these sizes).
UNROLLED_ITEMS_LIMIT = 256


@dataclass(frozen=True)
class LoadStoreSpec:
    """Everything the code generator needs for one load or store call."""

    op: str  # "load" or "store"
    group: GroupSpec
    block: tuple[int, int, int]
    dtype: str
    items_per_thread: int
    algorithm: str
    has_valid_items: bool
    has_oob_default: bool
    scalar_value: bool  # store of a scalar (K = 1)
    barrier: bool  # trailing reuse barrier after the call

    @property
    def uses_scratch(self) -> bool:
        return self.algorithm in SCRATCH_ALGORITHMS

    @property
    def rolled(self) -> bool:
        """Per-item code is a loop (UNROLLED_ITEMS_LIMIT); the algorithm is then direct or striped."""
        return self.items_per_thread > UNROLLED_ITEMS_LIMIT

    @property
    def tile_items(self) -> int:
        return self.group.size * self.items_per_thread


@dataclass(frozen=True, kw_only=True)
class LoadStoreOptions:
    """``array_dtype``: the source's or destination's element dtype (None: not visible before typing; the payload's
    is assumed and the typed call checks it); ``value_dtype``: a scalar store's dtype. ``valid_items``, ``offset`` and
    a load's ``oob_default`` are the shape's controls."""

    array_dtype: str | None = None
    value_dtype: str | None = None
    algorithm: object = "direct"


def plan_load_store(shape: CallShape, opts: LoadStoreOptions) -> LoadStoreSpec:
    """Validate one call and return its spec. A store of a scalar (the shape's extent 0) stores one item per
    thread."""
    op, name, group, launch, descriptor = shape.op, shape.name, shape.group, shape.launch, shape.descriptor
    scalar_value = shape.items_per_thread == 0
    payload_dtype = opts.value_dtype if scalar_value else shape.dtypes[0]
    assert payload_dtype is not None, "a scalar store's dtype travels in its options"
    items_per_thread, array_dtype = max(shape.items_per_thread, 1), opts.array_dtype or payload_dtype
    valid_items, oob_default, offset = (shape.control(key) for key in ("valid_items", "oob_default", "offset"))
    require_complete_warps(name, group, launch)
    algorithm = normalize_selector(name, "algorithm", opts.algorithm, ALGORITHMS)
    if algorithm in BLOCK_ONLY:
        if group.kind != BLOCK:
            raise CoopValueError(
                f"{name} algorithm must be one of: direct, striped, vectorize, transpose for {group.kind} groups; "
                f"got {algorithm!r}"
            )
        if launch.threads % 32:
            raise CoopValueError(
                f"{name} on block groups with algorithm {algorithm!r} requires a block made of complete warps; "
                f"block has {launch.threads} threads"
            )
    if array_dtype not in ALL_NUMERIC_DTYPES and not is_aggregate(array_dtype):
        raise CoopTypeError(f"{name} does not support {'source' if op == 'load' else 'destination'} dtype "
                            f"{array_dtype}; supported: {', '.join(NUMERIC_DTYPES)}")
    if array_dtype != payload_dtype:
        param = "source" if op == "load" else "destination"
        suffix = "; cast the value" if op == "store" else ""
        raise CoopTypeError(f"{name} {param} dtype {array_dtype} does not match payload dtype {payload_dtype}{suffix}")
    reject_warp_descriptor(name, group, descriptor)
    tile = group.size * items_per_thread
    if valid_items is not None:
        check_runtime_int(name, "valid_items", valid_items)
        if isinstance(valid_items, Static):
            # Every group, warps included, counts valid items relative to its own tile (docs: operations/load_store,
            # "Partial tiles").
            if not 0 <= valid_items.value <= tile:  # type: ignore[operator]
                raise CoopValueError(f"{name} static valid_items must be between 0 and {tile}; got {valid_items.value}")
    if oob_default is not None:
        if valid_items is None:
            raise CoopValueError(f"{name} oob_default requires valid_items")
        if isinstance(oob_default, Static) and is_aggregate(payload_dtype):
            raise CoopTypeError(f"{name} oob_default must be a value of the payload dtype {payload_dtype} (e.g. an "
                                "element of a record array); got a literal")
        if isinstance(oob_default, Static):
            literal_as(name, "oob_default", oob_default.value, payload_dtype)
        elif oob_default.dtype is not None and oob_default.dtype != payload_dtype:
            raise CoopTypeError(
                f"{name} oob_default must have the payload dtype {payload_dtype}; got {oob_default.dtype}; cast it"
            )
    if offset is not None:
        check_runtime_int(name, "offset", offset)
        if isinstance(offset, Static) and offset.value < 0:  # type: ignore[operator]
            raise CoopValueError(f"{name} static offset must be nonnegative; got {offset.value}")
    if algorithm == "vectorize" and is_aggregate(payload_dtype):
        # CUB vectorizes primitive types only; "direct" is the same blocked arrangement (docs: qualified,
        # "User-defined aggregates")
        algorithm = "direct"
    if items_per_thread > UNROLLED_ITEMS_LIMIT and algorithm != "striped":
        algorithm = "direct"  # a loop over the blocked arrangement: what every other algorithm produces
    uses_scratch = algorithm in SCRATCH_ALGORITHMS
    barrier = uses_scratch and shape.reuse_barrier
    return LoadStoreSpec(
        op, group, launch.block, payload_dtype, items_per_thread, algorithm,
        valid_items is not None, oob_default is not None, scalar_value, barrier,
    )
