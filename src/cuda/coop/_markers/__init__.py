"""Layer 1: public markers. Backend-free signatures, docs, kernel-only guards and the operations' records."""

# The modules that declare the operations, in the order of ``__all__`` and the documentation's tables.
from . import (  # noqa: E402
    load_store, exchange_shuffle, reduce, reduce_batched, scan, sort, adjacent, histogram, run_length, argreduce,
    broadcast, select,
)

MARKER_MODULES = (load_store, exchange_shuffle, reduce, reduce_batched, scan, sort, adjacent, histogram, run_length,
                  argreduce, broadcast, select)

from .records import records as _records  # noqa: E402

# Every operation of the contract (docs: api/common).
OPERATIONS: tuple[str, ...] = tuple(op.name for op in _records())
MARKERS = {op.name: op.marker for op in _records()}
