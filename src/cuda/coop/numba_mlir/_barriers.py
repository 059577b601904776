"""The barrier pass (SPEC 6.3): one decision per planned call, over the kernel's control-flow graph.

A call with compiler-owned scratch keeps its trailing reuse barrier only if a scratch-using call can execute after
it: a later call in its block, a call in a block reachable from it, or (through a loop back-edge) itself. The last
use on every path gets none, so a straight-line kernel synchronises exactly as its CUB C++ twin does. Explicit
descriptors keep what their ``auto_sync`` says.
"""
from __future__ import annotations

from typing import Any


def _successors(block: Any) -> list:
    terminator = block.body[-1] if block.body else None
    get_targets = getattr(terminator, "get_targets", None)
    return list(get_targets()) if get_targets is not None else []


def reachable_labels(blocks: dict, start: list) -> set:
    """The labels ``start`` holds and every label reachable from them."""
    seen: set = set()
    pending = list(start)
    while pending:
        label = pending.pop()
        if label in seen or label not in blocks:
            continue
        seen.add(label)
        pending.extend(_successors(blocks[label]))
    return seen


def elide_last_reuse_barriers(func_ir: Any, sites: list) -> None:
    """Replace the provider of every compiler-owned scratch call that no scratch-using call can follow with its
    variant without the trailing reuse barrier (``sites``: the planner's entries, with ``stmt``, ``block``,
    ``scratch``, ``provider`` and ``site``)."""
    blocks = func_ir.blocks
    label_of = {id(block): label for label, block in blocks.items()}
    users: dict = {}  # label -> statement indices of scratch-using calls
    for entry in sites:
        if entry.scratch is not None:
            label = label_of.get(id(entry.block))
            if label is None:
                return  # a call outside the graph: keep every barrier
            users.setdefault(label, []).append(entry.block.body.index(entry.stmt))
    for entry in sites:
        if entry.scratch is None or entry.scratch.descriptor is not None or not entry.provider.has_reuse_barrier:
            continue
        label = label_of[id(entry.block)]
        index = entry.block.body.index(entry.stmt)
        if any(i > index for i in users[label]):
            continue
        after = reachable_labels(blocks, _successors(entry.block))
        if any(other in after for other in users):  # includes its own block through a back-edge
            continue
        entry.provider = entry.provider.without_reuse_barrier()
        entry.site.symbol = entry.provider.symbol
