"""histogram marker (the Histogram page of the documentation)."""
from __future__ import annotations

from typing import Any

from .records import ONE_DIMENSIONAL_BLOCK, Extension, Operation, declare
from .groups import ThreadGroup
from .temp_storage import TempStorage
from .thread_data import ThreadData


@declare(Operation("histogram", "histogram", "count a tile's samples into bins", ONE_DIMENSIONAL_BLOCK,
                   extends=Extension(scalar_form=True), selectors=(("algorithm", "_HistogramAlgorithm"),),
                   explainer="bins"))
def histogram(group: ThreadGroup, samples: ThreadData, /, *, bins: int, bins_per_thread: int = 1,
              counter_dtype: Any = None, algorithm: str = "atomic", valid_items: Any = None,
              temp_storage: TempStorage | None = None) -> ThreadData:
    """Count the block's samples per bin; returns fresh striped counters.

    Slot ``i`` of member ``t`` of the result holds the count of bin ``t + i*T`` (``T`` threads); slots for
    bins ``>= bins`` are zero. Counters start from zero on every call: accumulate across tiles by adding the
    returned payloads, and store them with ``coop.store(block, out, counts, algorithm="striped")`` to write
    the bins in order.

    Args:
        group: a one-dimensional block.
        samples: a ThreadData of uint8, int32, uint32, int64 or uint64 (left unchanged). Each counted sample
            must be a bin index in ``[0, bins)`` (out-of-range samples are undefined behaviour).
        bins: compile-time positive number of bins.
        bins_per_thread: compile-time positive extent of the result, with ``T * bins_per_thread >= bins``.
        counter_dtype: ``int32`` (default; Python ``int`` also means ``int32``), ``uint32``, ``int64`` or
            ``uint64``. CUB's atomic add has no signed 64-bit overload, so ``int64`` counters are counted in
            ``unsigned long long`` and the (nonnegative) counts are returned as ``int64`` with the same bits.
        algorithm: ``"atomic"`` (default; shared-memory atomics, ``BLOCK_HISTO_ATOMIC``) or ``"sort"``
            (``BLOCK_HISTO_SORT``: a radix sort of a private copy of the samples, then run boundaries).
        valid_items: count only the samples at blocked positions ``t*K + i < valid_items`` (compile-time or
            block-uniform runtime, ``0 <= valid_items <= T*K``; default: every slot). The others count nowhere
            and may hold anything, uninitialised values included; after a striped load, ``exchange`` first.
        temp_storage: an explicit ``TempStorage``; the call's scratch is CUB's storage plus ``bins``
            shared-memory counters.

    See Also:
        :doc:`Histogram </operations/histogram>` in the cuda-coop documentation.
    """
