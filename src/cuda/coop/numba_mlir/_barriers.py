"""What the barrier decision (``_calls.build.drop_unneeded_reuse_barriers``) needs from numba IR
(docs: concepts, "Scratch memory and barriers").

A call with compiler-owned scratch keeps its trailing reuse barrier only if a scratch-using call can execute after
it: a later call in its block, a call in a block reachable from it, or (through a loop back-edge) itself. The last
use on every path gets none, so a straight-line kernel synchronises exactly as its CUB C++ twin does.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

from ._plan_state import PlannedSite


def _successors(block: Any) -> list[Any]:
    terminator = block.body[-1] if block.body else None
    get_targets = getattr(terminator, "get_targets", None)
    return list(get_targets()) if get_targets is not None else []


def reachable_labels(blocks: dict[Any, Any], start: list[Any]) -> set[Any]:
    """The labels ``start`` holds and every label reachable from them."""
    seen: set[Any] = set()
    pending = list(start)
    while pending:
        label = pending.pop()
        if label in seen or label not in blocks:
            continue
        seen.add(label)
        pending.extend(_successors(blocks[label]))
    return seen


def scratch_use_may_follow(func_ir: Any, sites: Sequence[PlannedSite]) -> Callable[[PlannedSite], bool]:
    """Whether a scratch-using call may execute after a planned call, over the kernel's control-flow graph
    (``sites``: the planner's entries, with ``stmt``, ``block`` and ``scratch``): a later one in its block, or one
    in a block reachable from it (its own block again, through a loop back-edge, included)."""
    blocks = func_ir.blocks
    label_of = {id(block): label for label, block in blocks.items()}
    users: dict[Any, list[int]] = {}  # label -> statement indices of scratch-using calls
    for entry in sites:
        if entry.scratch is not None:
            label = label_of.get(id(entry.block))
            if label is None:
                return lambda entry: True  # a call outside the graph: keep every barrier
            users.setdefault(label, []).append(entry.block.body.index(entry.stmt))

    def followed(entry: PlannedSite) -> bool:
        label = label_of[id(entry.block)]
        index = entry.block.body.index(entry.stmt)
        if any(i > index for i in users.get(label, ())):
            return True
        after = reachable_labels(blocks, _successors(entry.block))
        return any(other in after for other in users)

    return followed
