"""A call's shape: what every family's planning starts from, gathered once by the call layer (``_calls.shape``).

An operation's operands are always a tuple (one operand is a 1-tuple, as Triton's ``associative_scan((x,), ...)``
takes it): ``tupled`` says whether the user passed a tuple of operands (docs: operations/scan, "Several operands at
once"), whose dtype is then the tuple dtype of its members even for one member. The group is checked against the
operation's record when the shape is made (G3/G15), so no family repeats it. The backend's own handles (operands,
payloads, the TempStorage it resolved) travel along for the call layer and take no part in planning.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from .common import Control, GroupSpec, LaunchShape
from .groups import require_operation_group
from .temp_storage import Descriptor, keeps_reuse_barrier
from .tuples import tuple_dtype


@dataclass(frozen=True, kw_only=True)
class CallShape:
    """One call's group, operands, extent, dtypes, runtime controls and scratch descriptor."""

    name: str  # the public name the user called, for messages
    op: str  # the operation (its record)
    group: GroupSpec
    launch: LaunchShape
    dtypes: tuple[str, ...]  # each operand's dtype
    items_per_thread: int  # each operand's extent; 0: scalars
    # each operand's extent (0: a scalar), where they may differ: a tuple of independent members (broadcast's)
    extents: tuple[int, ...] = ()
    tupled: bool = False  # the user passed a tuple of operands (of one or more members)
    qualified: bool = False  # called through a backend's namespace
    descriptor: Descriptor | None = None
    # None, Static or Runtime per control the family asked for; a tuple of controls (a multi-operand call's tuple
    # ``initial_value``) is one Static holding each member's control
    controls: Mapping[str, Control] = field(default_factory=dict)
    # the backend's handles, for the call layer only
    operands: tuple[Any, ...] = field(default=(), compare=False)
    payloads: tuple[Any, ...] = field(default=(), compare=False)  # each operand's payload (None: a scalar)
    storage: Any = field(default=None, compare=False)  # the backend's TempStorage (None: compiler-owned)

    def __post_init__(self) -> None:
        require_operation_group(self.op, self.name, self.group)  # reduce and sum check their own rule

    @property
    def dtype(self) -> str:
        """The operand's dtype; the tuple dtype of a tuple of operands."""
        return tuple_dtype(list(self.dtypes)) if self.tupled else self.dtypes[0]

    @property
    def payload(self) -> Any:
        """The first operand's payload (None: a scalar)."""
        return self.payloads[0] if self.payloads else None

    def control(self, key: str) -> Control:
        return self.controls.get(key)

    @property
    def reuse_barrier(self) -> bool:
        """Whether the call's scratch, if it uses any, ends with a reuse barrier (``keeps_reuse_barrier``)."""
        return keeps_reuse_barrier(self.descriptor)

    @property
    def scratch(self) -> tuple[GroupSpec, Any]:
        """What ``CallContext.add_site`` records for a call that uses scratch: its group and TempStorage."""
        return (self.group, self.storage)
