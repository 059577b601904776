"""Operations of the contract whose backends are not implemented yet (they raise R9).

Every operation of this release is implemented; a new operation starts here until its families land."""
from __future__ import annotations

from typing import Any

from .base import operation

PENDING: tuple[str, ...] = ()


def _pending(name: str) -> Any:
    def signature(group: Any, /, *operands: Any, **options: Any) -> Any:
        """Cooperative operation; not implemented by this release's backend yet."""

    signature.__name__ = name
    return operation(name)(signature)


globals().update({name: _pending(name) for name in PENDING})
