"""Operations of the contract whose backends are not implemented yet (they raise R9)."""
from __future__ import annotations

from typing import Any

from .base import operation

PENDING = (
    "run_length_decode", "run_length_decode_into",
)


def _pending(name: str) -> Any:
    def signature(group: Any, /, *operands: Any, **options: Any) -> Any:
        """Cooperative operation (SPEC 8); not implemented by this release's backend yet."""

    signature.__name__ = name
    return operation(name)(signature)


globals().update({name: _pending(name) for name in PENDING})
