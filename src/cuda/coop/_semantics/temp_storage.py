"""TempStorage descriptors and the scratch layout of a kernel (docs: concepts, "Scratch memory and barriers")."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TypeAlias

from .._backend_context import qualified_namespace
from .._errors import CoopTypeError, CoopValueError
from .common import ScratchNeed, compile_time_int, normalize_selector, require_alignment
from .targets import opt_in_shared_limit

STATIC_LIMIT = 48 * 1024
# what a kernel may read of a TempStorage: its constructor's arguments, as compile-time values (SPEC 6.1)
DESCRIPTOR_ATTRIBUTES = ("size_in_bytes", "alignment", "auto_sync", "sharing")
DYNAMIC_MAX_ALIGNMENT = 16


@dataclass(frozen=True)
class Descriptor:
    """One ``TempStorage(...)`` construction site, in constructor order."""

    index: int
    size_in_bytes: int | None
    alignment: int | None
    auto_sync: bool
    sharing: str


def keeps_reuse_barrier(descriptor: Descriptor | None) -> bool:
    """Whether a call's scratch ends with a reuse barrier (docs: concepts, "Scratch memory and barriers"):
    compiler-owned scratch does (the build drops it where no scratch-using call can follow: ``_calls.build``), a
    TempStorage as its ``auto_sync`` says."""
    return descriptor is None or descriptor.auto_sync


def make_descriptor(index: int, size_in_bytes: object, alignment: object, auto_sync: object,
                    sharing: object) -> Descriptor:
    if size_in_bytes is not None:
        size = compile_time_int(size_in_bytes)
        if size is None:
            raise CoopTypeError("TempStorage size_in_bytes must be a compile-time positive integer; "
                                f"got {size_in_bytes!r}")
        if size <= 0:
            raise CoopValueError("TempStorage size_in_bytes must be a compile-time positive integer; "
                                 f"got {size!r}")
        size_in_bytes = size
    if alignment is not None:
        if compile_time_int(alignment) is None:
            raise CoopTypeError("TempStorage alignment must be a compile-time positive power of two; "
                                f"got {alignment!r}")
        alignment = require_alignment("TempStorage", alignment)
    if not isinstance(auto_sync, bool):
        raise CoopTypeError(f"TempStorage auto_sync must be a compile-time bool; got {auto_sync!r}")
    try:
        sharing = normalize_selector("cuda.coop.TempStorage", "sharing", sharing, ("shared", "exclusive"))
    except CoopTypeError:
        raise CoopTypeError(f"TempStorage sharing must be 'shared' or 'exclusive'; got {sharing!r}") from None
    except CoopValueError:
        raise CoopValueError(f"TempStorage sharing must be 'shared' or 'exclusive'; got {sharing!r}") from None
    return Descriptor(index, size_in_bytes, alignment, auto_sync, sharing)


def _align(value: int, alignment: int) -> int:
    return -(-value // alignment) * alignment


# Who shares compiler-owned scratch: ("block",), or a warp-scope group's (kind, size).
ScratchDomain: TypeAlias = tuple[str] | tuple[str, int]


@dataclass
class ScratchUse:
    """One call site's scratch request and, after layout, where it lives."""

    site: int
    need: ScratchNeed
    descriptor: Descriptor | None  # None: compiler-owned
    domain: ScratchDomain = ("block",)  # compiler-owned participation domain
    instances: int = 1  # warp-scope: one slice per group instance
    label: str = ""
    offset: int = 0
    stride: int = 0  # warp-scope slice stride


@dataclass
class ScratchLayout:
    size: int = 0
    alignment: int = 16
    dynamic: bool = False
    uses: list[ScratchUse] = field(default_factory=list)


def layout(uses: list[ScratchUse], descriptors: list[Descriptor], user_static_bytes: int, user_dynamic: str | None,
           kernel: str, *, cc: int = 90, user_static_name: str = "") -> ScratchLayout:
    """Place explicit descriptors in constructor order, then compiler-owned domains."""
    cursor, max_align = 0, 16

    def place(size: int, alignment: int) -> int:
        nonlocal cursor, max_align
        max_align = max(max_align, alignment)
        start = _align(cursor, alignment)
        cursor = start + size
        return start

    for desc in descriptors:
        mine = [u for u in uses if u.descriptor is desc]
        if not mine:
            continue  # an unused descriptor reserves nothing
        align = max([desc.alignment or 1] + [u.need.alignment for u in mine])
        if desc.sharing == "exclusive":
            sites: dict[int, int] = {}
            need = 0
            for use in mine:  # one slice per distinct call site
                if use.site not in sites:
                    sites[use.site] = _align(need, align)
                    need = sites[use.site] + use.need.size
            offsets = sites
        else:
            need = max(u.need.size for u in mine)
            offsets = {u.site: 0 for u in mine}
        if desc.size_in_bytes is not None and desc.size_in_bytes < need:
            detail = ", ".join(f"{u.label} needs {u.need.size}" for u in mine)
            raise CoopValueError(
                f"TempStorage size_in_bytes={desc.size_in_bytes} is too small: its uses need {need} bytes ({detail})"
            )
        base = place(max(need, desc.size_in_bytes or 0), align)
        for use in mine:
            use.offset = base + offsets[use.site]

    domains: dict[ScratchDomain, list[ScratchUse]] = {}
    for use in uses:
        if use.descriptor is None:
            domains.setdefault(use.domain, []).append(use)
    for domain_uses in domains.values():
        align = max(u.need.alignment for u in domain_uses)
        slice_size = _align(max(u.need.size for u in domain_uses), align)
        base = place(slice_size * domain_uses[0].instances, align)
        for use in domain_uses:
            use.offset, use.stride = base, slice_size

    result = ScratchLayout(_align(cursor, 16) if cursor else 0, max_align, False, uses)
    if result.size and result.size + user_static_bytes > STATIC_LIMIT:
        result.dynamic = True
    if result.size and user_dynamic is not None:
        raise CoopValueError(
            f"kernel {kernel}: user shared array {user_dynamic} (dynamic) cannot coexist with "
            f"{'dynamic' if result.dynamic else 'static'} cooperative scratch; use static scratch within 48 KiB, "
            f"{qualified_namespace()}.shared.array, global memory, or separate kernels"
        )
    if result.dynamic and user_static_bytes:
        raise CoopValueError(
            f"kernel {kernel}: user shared array {user_static_name + ' ' if user_static_name else ''}"
            f"({user_static_bytes} bytes, static) cannot coexist with dynamic "
            f"cooperative scratch of {result.size} bytes; keep the total within 48 KiB, use "
            f"{qualified_namespace()}.shared.array, global memory, or separate kernels"
        )
    device_limit = opt_in_shared_limit(cc)
    if result.size > device_limit:
        raise CoopValueError(
            f"cooperative scratch for kernel {kernel} needs {result.size} bytes of shared memory per block; "
            f"the device allows at most {device_limit}"
        )
    if result.dynamic and max_align > DYNAMIC_MAX_ALIGNMENT:
        raise CoopValueError(
            f"shared-memory alignment {max_align} exceeds the 16-byte limit of dynamic shared memory"
        )
    return result
