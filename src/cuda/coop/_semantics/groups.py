"""Group construction and validation (docs: concepts, "Groups and ranks")."""
from __future__ import annotations

from dataclasses import dataclass

from .._markers import records
from .._markers.records import LOGICAL_WARP_WIDTHS as LOGICAL_WARP_WIDTHS
from .._errors import CoopTypeError, CoopUnsupportedError, CoopValueError
from .common import (
    BLOCK, CLUSTER, GRID, LOGICAL_WARP, THREAD, WARP, WARPS_IN_BLOCK, GroupSpec, LaunchShape, compile_time_int,
    is_selector_string,
    selector_type_error,
)

QUERY_LEVELS = ("thread", "warp", "block", "cluster", "grid")
INT_DTYPES = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")


def factory_group(kind: str, launch: LaunchShape) -> GroupSpec:
    threads = launch.threads
    if kind == BLOCK:
        return GroupSpec(BLOCK, threads, 1)
    if kind == WARP:
        return GroupSpec(WARP, 32, -(-threads // 32))
    if kind == THREAD:
        return GroupSpec(THREAD, 1, threads)
    return GroupSpec(kind, threads, 1)  # cluster and grid: queries only


def group_by(parent: GroupSpec, count: object, exhaustive: object, launch: LaunchShape) -> GroupSpec:
    """``parent.group_by(count, exhaustive=exhaustive)`` in a kernel launched with ``launch``; ``count`` and
    ``exhaustive`` as compile-time values (anything else, a backend's run-time value included, is G6 / G8).

    The checks, in the order of SPEC 10.1 (the group, then its arguments, then what the launch allows), so that the
    first error is the root cause: the parent (G10 nested, G9 another kind); ``count`` (G6 not a compile-time
    integer, G7 not positive); ``exhaustive`` (G8); a block of complete warps (G13); the count within the parent
    (G11, G12) and dividing it when exhaustive (G14)."""
    if parent.kind in (LOGICAL_WARP, WARPS_IN_BLOCK):
        raise CoopUnsupportedError("nested ThreadGroup.group_by is not supported")
    if parent.kind not in (WARP, BLOCK):
        raise CoopUnsupportedError("ThreadGroup.group_by supports only physical warp and block parents")
    number = compile_time_int(count)
    if number is None:
        raise CoopTypeError("ThreadGroup.group_by count must be a compile-time integer")
    count = number
    if count <= 0:
        raise CoopValueError("ThreadGroup.group_by count must be positive")
    if not isinstance(exhaustive, bool):
        raise CoopTypeError("ThreadGroup.group_by exhaustive must be a compile-time bool")
    threads = launch.threads
    if threads % 32:
        raise CoopValueError(
            f"group_by requires an enclosing block composed of complete warps; block has {threads} threads"
        )
    if parent.kind == WARP:
        if count > 32:
            raise CoopValueError("warp group_by count cannot exceed 32 threads")
        units = 32
    else:
        units = threads // 32
        if count > units:
            raise CoopValueError(f"block group_by count cannot exceed the parent warp count ({units})")
    if exhaustive and units % count:
        raise CoopValueError(
            f"exhaustive ThreadGroup.group_by requires the count to divide the parent unit count ({units})"
        )
    if parent.kind == WARP:
        return GroupSpec(LOGICAL_WARP, count, (threads // 32) * (32 // count), exhaustive)
    return GroupSpec(WARPS_IN_BLOCK, 32 * count, units // count, exhaustive)


def require_operation_group(op: str, name: str, group: GroupSpec) -> None:
    """G3/G15 for operation ``op`` (its public name ``name``), from the groups its record declares; reduce and sum
    check their own, richer rule (``require_reduce_group``)."""
    groups = records.of(op).groups
    if not groups.own_rule:
        require_kind(name, group, groups.kinds, groups.widths)


def require_complete_warps(op: str, group: GroupSpec, launch: LaunchShape) -> None:
    if group.is_warp_scope and launch.threads % 32:
        raise CoopValueError(
            f"{op} on {group.kind} groups requires a block made of complete warps; block has {launch.threads} threads"
        )


def require_kind(op: str, group: GroupSpec, supported: tuple[str, ...], widths: tuple[int, ...] | None = None) -> None:
    if group.kind not in supported:
        raise CoopUnsupportedError(
            f"{op} does not support group kind '{group.kind}'; supported group kinds: {', '.join(supported)}"
        )
    if group.kind == LOGICAL_WARP and widths is not None and group.size not in widths:
        raise CoopUnsupportedError(
            f"{op} supports logical-warp widths {', '.join(map(str, widths))}; got {group.size}"
        )


def query_level(method: str, level: object) -> str:
    if not is_selector_string(level):
        raise selector_type_error(f"ThreadGroup.{method}", "level", level)
    assert isinstance(level, str)
    canonical = level.strip().lower().replace("-", "_")
    if canonical == "gpu_thread":
        canonical = "thread"
    if canonical not in QUERY_LEVELS:
        raise CoopValueError(
            f"ThreadGroup.{method} level must be one of: thread, gpu_thread, warp, block, cluster, grid"
        )
    return canonical


# Levels each kind answers (docs: concepts, "Groups and ranks"): finer levels and coarser levels.
_LEVELS = {
    THREAD: ("thread", "warp", "block", "cluster", "grid"),
    WARP: ("thread", "warp", "block", "cluster", "grid"),
    LOGICAL_WARP: ("thread", "warp"),
    WARPS_IN_BLOCK: ("thread", "warp", "block"),
    BLOCK: ("thread", "warp", "block", "cluster", "grid"),
    CLUSTER: ("thread", "warp", "block", "cluster", "grid"),
    GRID: ("thread", "warp", "block", "cluster", "grid"),
}


def check_level(method: str, group: GroupSpec, level: str) -> None:
    if level not in _LEVELS[group.kind]:
        raise CoopValueError(f"level '{level}' is not available for group kind '{group.kind}'")


def query_dtype(method: str, dtype: str | None) -> None:
    if dtype is not None and dtype not in INT_DTYPES:
        raise CoopTypeError(
            f"ThreadGroup.{method} dtype must be one of int8, int16, int32, int64, uint8, uint16, uint32, uint64"
        )


@dataclass(frozen=True)
class QuerySpec:
    """One group method call: rank/count/is_member/sync and friends."""

    method: str
    group: GroupSpec
    block: tuple[int, int, int]
    level: str = "thread"
    dtype: str | None = None  # result dtype; None for sync

    @property
    def result_dtype(self) -> str | None:
        return self.dtype


def require_cluster_target(group: GroupSpec, target_cc: int) -> None:
    """G20: every use of a cluster group (queries, sync, operations) needs sm_90 or newer."""
    if group.kind == CLUSTER and target_cc < 90:
        raise CoopUnsupportedError(f"cluster groups require compute capability 9.0 or newer; target is sm_{target_cc}")


def plan_query(method: str, group: GroupSpec, launch: LaunchShape, *, level: object, dtype: str | None,
               target_cc: int) -> QuerySpec:
    require_cluster_target(group, target_cc)
    if method in ("sync", "sync_aligned"):
        if group.kind in (WARPS_IN_BLOCK, GRID):
            raise CoopUnsupportedError(f"ThreadGroup.{method} is not supported for group kind '{group.kind}'")
        return QuerySpec(method, group, launch.block)
    if method == "is_member":
        return QuerySpec(method, group, launch.block, dtype="uint8")
    lvl = query_level(method, level)
    check_level(method, group, lvl)
    query_dtype(method, dtype)
    natural = "uint64" if GRID in (group.kind, lvl) else "uint32"
    return QuerySpec(method, group, launch.block, lvl, dtype or natural)


def reject_warp_descriptor(name: str, group: GroupSpec, descriptor: object) -> None:
    """Warp-scope operations always use compiler-owned scratch
    (S2; docs: concepts, "Scratch memory and barriers")."""
    if descriptor is not None and group.is_warp_scope:
        raise CoopValueError(
            f"{name} does not accept temp_storage for {group.kind} groups; their scratch is always compiler-owned")
