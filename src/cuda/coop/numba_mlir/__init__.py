"""cuda.coop.numba_mlir: the numba-cuda-mlir backend and its qualified API.

Importing this module registers the backend. It exports everything in
``cuda.coop`` except ``register``; operations are qualified variants that accept
the backend's extensions, plus ``compile_kernel`` for builds without a GPU.
Import it with an alias (``import cuda.coop.numba_mlir as numba_coop``): a bare
``import cuda.coop.numba_mlir`` rebinds the name ``cuda``. See the "The qualified
namespace" and "API reference: cuda.coop.numba_mlir" pages of the documentation.
"""
from __future__ import annotations

import threading

from . import _entry
from .. import (  # noqa: F401  (re-exported common names)
    CoopBuildError, CoopCompilerContextRequiredError, CoopError, CoopIndexError, CoopTypeError, CoopUnsupportedError,
    CoopValueError, CudaCoopAutoRegistrationWarning, TempStorage, TempStorageLike, ThreadData, ThreadDataLike,
    ThreadGroup, __version__, this_block, this_cluster, this_grid, this_thread, this_warp,
)
from .. import _markers  # noqa: F401
from ._qualified import qualify as _qualify
from .._markers import (
    exchange_shuffle as _xs, load_store as _load_store, pending as _pending, reduce as _reduce, scan as _scan,
    sort as _sort,
)
from .._markers import reduce_batched as _reduce_batched
from .._markers import histogram as _histogram
from .._markers import adjacent as _adjacent
from .._markers import run_length as _run_length
from .._markers import argreduce as _argreduce
from ._compile import CompiledKernel as CompiledKernel, compile_kernel as compile_kernel

load = _qualify(_load_store.load)
store = _qualify(_load_store.store)
exchange = _qualify(_xs.exchange)
shuffle = _qualify(_xs.shuffle)
reduce = _qualify(_reduce.reduce)
sum = _qualify(_reduce.sum)
reduce_batched = _qualify(_reduce_batched.reduce_batched)
scan = _qualify(_scan.scan)
exclusive_sum = _qualify(_scan.exclusive_sum)
inclusive_sum = _qualify(_scan.inclusive_sum)
exclusive_scan = _qualify(_scan.exclusive_scan)
inclusive_scan = _qualify(_scan.inclusive_scan)
StatefulFunction = _scan.StatefulFunction  # qualified-only: stateful block prefix callbacks (docs: operations/scan)
merge_sort_keys = _qualify(_sort.merge_sort_keys)
merge_sort_pairs = _qualify(_sort.merge_sort_pairs)
radix_sort_keys = _qualify(_sort.radix_sort_keys)
radix_sort_pairs = _qualify(_sort.radix_sort_pairs)
radix_rank = _qualify(_sort.radix_rank)
topk_min_keys = _qualify(_sort.topk_min_keys)
topk_max_keys = _qualify(_sort.topk_max_keys)
topk_min_pairs = _qualify(_sort.topk_min_pairs)
topk_max_pairs = _qualify(_sort.topk_max_pairs)
histogram = _qualify(_histogram.histogram)
adjacent_difference = _qualify(_adjacent.adjacent_difference)
discontinuity = _qualify(_adjacent.discontinuity)
run_length_decode = _qualify(_run_length.run_length_decode)
run_length_decode_into = _qualify(_run_length.run_length_decode_into)
argmax = _qualify(_argreduce.argmax)
argmin = _qualify(_argreduce.argmin)
globals().update({_name: _qualify(getattr(_pending, _name)) for _name in _pending.PENDING})
# ``numba_coop.local.array(shape, dtype)`` is numba-cuda-mlir's per-thread array, which qualified calls take as a
# payload (1-D, fixed extent; docs: qualified, "Payload forms").
from numba_cuda_mlir.cuda import local as local  # noqa: E402
from ._memory import shared as shared  # noqa: E402  (numba_coop.shared.array: inside the cooperative backing)

_lock = threading.Lock()
_registered = False


def register_backend() -> None:
    """Install the planner once per process (idempotent; importing this module calls it)."""
    global _registered
    with _lock:
        if _registered:
            return
        from ._compat import (
            claim_planner, keep_disk_cache_for_plain_kernels, memoize_ready_launches, reuse_builds_across_grids,
            serialise_launches,
        )

        claim_planner(_entry.CoopPlannerEntry)
        _entry.register()

        serialise_launches()  # before the first launch (threads' first launches race otherwise); _compat is light
        reuse_builds_across_grids()  # a new grid size does not rebuild a cuda.coop kernel (issue 19)
        keep_disk_cache_for_plain_kernels()  # kernels without cuda.coop keep numba-cuda-mlir's disk cache
        memoize_ready_launches()  # launches cost what they do without a planner registered
        _registered = True


register_backend()

__all__ = [
    "__version__", "this_thread", "this_warp", "this_block", "this_cluster", "this_grid", "ThreadGroup",
    "ThreadData", "ThreadDataLike", "TempStorage", "TempStorageLike", "load", "store", "exchange", "shuffle",
    "reduce", "sum", "scan", "exclusive_sum", "inclusive_sum", "exclusive_scan", "inclusive_scan", "merge_sort_keys",
    "merge_sort_pairs", "radix_sort_keys", "radix_sort_pairs", "radix_rank", "topk_min_keys", "topk_max_keys",
    "topk_min_pairs", "topk_max_pairs", "histogram", "adjacent_difference", "discontinuity", "run_length_decode",
    "run_length_decode_into", "argmax", "argmin", *_pending.PENDING,
    "CoopError", "CoopTypeError", "CoopValueError", "CoopUnsupportedError", "CoopIndexError", "CoopBuildError",
    "CoopCompilerContextRequiredError", "CudaCoopAutoRegistrationWarning", "compile_kernel", "CompiledKernel",
    "StatefulFunction", "local", "shared",
]
