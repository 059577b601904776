"""cuda.coop: cooperative block, warp and logical-warp algorithms for Python GPU kernels.

Common, backend-independent API. Activate a compiler backend with
``coop.register("numba-cuda-mlir")`` (or import ``cuda.coop.numba_mlir``).
"""
from __future__ import annotations

import pkgutil as _pkgutil

__path__ = _pkgutil.extend_path(__path__, __name__)

from ._version import __version__ as __version__
from ._backends import register as register
from ._errors import (
    CoopBuildError as CoopBuildError,
    CoopCompilerContextRequiredError as CoopCompilerContextRequiredError,
    CoopError as CoopError,
    CoopIndexError as CoopIndexError,
    CoopTypeError as CoopTypeError,
    CoopUnsupportedError as CoopUnsupportedError,
    CoopValueError as CoopValueError,
    CudaCoopAutoRegistrationWarning as CudaCoopAutoRegistrationWarning,
)
from ._markers.groups import (
    ThreadGroup as ThreadGroup,
    this_block as this_block,
    this_cluster as this_cluster,
    this_grid as this_grid,
    this_thread as this_thread,
    this_warp as this_warp,
)
from ._markers.thread_data import ThreadData as ThreadData, ThreadDataLike as ThreadDataLike
from ._markers.temp_storage import TempStorage as TempStorage, TempStorageLike as TempStorageLike
from ._markers.load_store import load as load, store as store
from ._markers.exchange_shuffle import exchange as exchange, shuffle as shuffle
from ._markers.reduce import reduce as reduce, sum as sum
from ._markers.argreduce import argmax as argmax, argmin as argmin
from ._markers.histogram import histogram as histogram
from ._markers.reduce_batched import reduce_batched as reduce_batched
from ._markers.scan import (
    exclusive_scan as exclusive_scan,
    exclusive_sum as exclusive_sum,
    inclusive_scan as inclusive_scan,
    inclusive_sum as inclusive_sum,
    scan as scan,
)
from ._markers.sort import (
    merge_sort_keys as merge_sort_keys,
    merge_sort_pairs as merge_sort_pairs,
    radix_rank as radix_rank,
    radix_sort_keys as radix_sort_keys,
    radix_sort_pairs as radix_sort_pairs,
    topk_max_keys as topk_max_keys,
    topk_max_pairs as topk_max_pairs,
    topk_min_keys as topk_min_keys,
    topk_min_pairs as topk_min_pairs,
)
from ._markers.adjacent import adjacent_difference as adjacent_difference, discontinuity as discontinuity
from ._markers.run_length import (
    run_length_decode as run_length_decode,
    run_length_decode_into as run_length_decode_into,
)

from ._markers import OPERATIONS

__all__ = [
    "__version__", "register",
    "this_thread", "this_warp", "this_block", "this_cluster", "this_grid", "ThreadGroup",
    "ThreadData", "ThreadDataLike", "TempStorage", "TempStorageLike",
    *OPERATIONS,
    "CoopError", "CoopTypeError", "CoopValueError", "CoopUnsupportedError", "CoopIndexError", "CoopBuildError",
    "CoopCompilerContextRequiredError", "CudaCoopAutoRegistrationWarning",
]

del OPERATIONS

from ._backends import auto_register as _auto_register  # noqa: E402

_auto_register()
