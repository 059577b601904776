"""The qualified namespace ``cuda.coop.numba_mlir``: the common contract plus what each operation's marker
declares as its extension (``_markers.base.Extension``; docs: qualified)."""
from __future__ import annotations

from typing import Any, Callable

from .._markers.base import qualified
from ._about import NAMESPACE

# Declared options and operands this backend does not build yet, per operation: its namespace leaves them out; a
# common call naming one is C3, a qualified call R9. (Every documented one is built today; docs: qualified, "What this
# release builds".)
PENDING_QUALIFIED_OPTIONS: dict[str, tuple[str, ...]] = {
}


def qualify(common: Callable[..., Any]) -> Callable[..., Any]:
    """The marker of ``common`` in this backend's namespace: the common contract with its declared extension."""
    return qualified(common, NAMESPACE, PENDING_QUALIFIED_OPTIONS.get(common.__qualname__, ()))
