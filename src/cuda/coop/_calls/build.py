"""The build of one kernel specialisation, the same for every backend.

After a backend has planned a kernel's calls (one ``PlannedCall`` each), four steps remain, in this order:

1. ``drop_unneeded_reuse_barriers``: a call with compiler-owned scratch keeps its trailing reuse barrier only when a
   scratch-using call may execute after it (docs: concepts, "Scratch memory and barriers"); the backend answers that
   from its control flow.
2. ``compile_calls``: one NVRTC program for all the providers, whose scratch sizes become the calls' needs (a
   backend that compiles the same translation unit otherwise, with the sizes from that compile, hands them to
   ``use_scratch_sizes`` instead).
3. ``place_scratch``: the layout of every scratch need, explicit descriptors and the backend's own shared
   allocations (its memory namespace) in one backing; each call learns its offset and stride.
4. The backend links the program and passes the backing and offsets to its calls.

A numba-cuda-mlir kernel runs them from its whole-function planner; a tracing backend from the hook that ends
its trace.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Mapping, Sequence, TypeVar

from .._cub import nvrtc
from .._cub.provider import Provider
from .._semantics.common import GroupSpec, ScratchNeed
from .._semantics.temp_storage import Descriptor, ScratchLayout, ScratchUse, layout
from .site import Backing, SiteCall


@dataclass(kw_only=True)
class PlannedCall:
    """One call as planned: what the backend emits for it, its provider (and how to emit that without its trailing
    reuse barrier), and its scratch request if any."""

    site: SiteCall
    provider: Provider
    without_reuse_barrier: Callable[[], Provider] | None = None
    scratch: ScratchUse | None = None


def scratch_use(index: int, group: GroupSpec, descriptor: Descriptor | None, label: str) -> ScratchUse:
    """The scratch request of call ``index`` by ``group``, through ``descriptor`` or compiler-owned; ``label`` names
    the call in layout messages. Its size is known once the program is compiled."""
    if group.is_warp_scope:  # one slice per group instance
        return ScratchUse(index, ScratchNeed(0, 1), descriptor, (group.kind, group.size), group.instances, label)
    return ScratchUse(index, ScratchNeed(0, 1), descriptor, ("block",), 1, label)


PlannedT = TypeVar("PlannedT", bound=PlannedCall)  # a backend's own record of a planned call (a subclass)


def drop_unneeded_reuse_barriers(calls: Sequence[PlannedT], followed: Callable[[PlannedT], bool]) -> None:
    """Emit every call with compiler-owned scratch that ``followed`` says no scratch-using call can follow again,
    without its trailing reuse barrier. Explicit descriptors keep what ``auto_sync`` says. ``followed(call)``:
    whether a scratch-using call may execute after ``call`` (itself again, in a loop, included)."""
    for call in calls:
        if call.scratch is None or call.scratch.descriptor is not None or call.without_reuse_barrier is None:
            continue
        if followed(call):
            continue
        call.provider, call.without_reuse_barrier = call.without_reuse_barrier(), None
        call.site.symbol = call.provider.symbol


def compile_calls(calls: Sequence[PlannedCall], kernel: str, cc: int, backend: str) -> nvrtc.BuildResult | None:
    """One NVRTC program for the calls' providers (through the provider cache); each scratch request gets the
    size and alignment that program reports. None when there is no call."""
    if not calls:
        return None
    built = nvrtc.build([call.provider for call in calls], f"sm_{cc}", f"kernel {kernel}", backend=backend)
    use_scratch_sizes(calls, built.scratch)
    return built


def scratch_symbols(calls: Sequence[PlannedCall]) -> frozenset[str]:
    """The providers whose scratch size the calls need (``use_scratch_sizes`` wants one for each)."""
    return frozenset(call.provider.symbol for call in calls if call.scratch is not None)


def use_scratch_sizes(calls: Sequence[PlannedCall], sizes: Mapping[str, tuple[int, int]]) -> None:
    """Each scratch request gets the (size, alignment) of its provider's scratch type in ``sizes`` (by symbol),
    as the translation unit of the calls reports them."""
    for call in calls:
        if call.scratch is not None:
            size, alignment = sizes[call.provider.symbol]
            call.scratch.need = ScratchNeed(max(size, 1), alignment)


def place_scratch(calls: Sequence[PlannedCall], kernel: str, cc: int, *, other_uses: Sequence[ScratchUse] = (),
                  descriptors: Sequence[Descriptor] = (), user_static_bytes: int = 0, user_dynamic: str | None = None,
                  user_static_name: str = "") -> tuple[ScratchLayout, Backing | None]:
    """Lay out every scratch request (the calls', then ``other_uses``: the backend's own shared allocations) with
    the kernel's ``descriptors`` beside the user's shared memory, and tell each call its place in the backing."""
    uses = [call.scratch for call in calls if call.scratch is not None]
    plan = layout(uses + list(other_uses), list(descriptors), user_static_bytes, user_dynamic, kernel, cc=cc,
                  user_static_name=user_static_name)
    backing = Backing(plan.size, plan.alignment, plan.dynamic) if plan.size else None
    for call in calls:
        if call.scratch is not None:
            call.site.backing = backing
            call.site.scratch_offset = call.scratch.offset
            call.site.stride = call.scratch.stride
    return plan, backing
