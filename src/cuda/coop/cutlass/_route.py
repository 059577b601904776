"""Which route this process builds CuTe kernels' cooperative calls by (docs: cutlass, "How it works"): bitcode when
the ziglang wheel's clang can serve the DSL's LLVM, else the link route, with one warning per cause."""
from __future__ import annotations

import functools
import logging
import os
import re
import warnings

from .._cub import bitcode
from .._errors import CoopValueError
from . import _dsl

_log = logging.getLogger("cuda.coop")
ROUTE_VARIABLE = "CUDA_COOP_CUTE_ROUTE"  # "link" forces the link route (for comparisons); unset: bitcode if it can


@functools.lru_cache(maxsize=1)
def clang_lookup() -> bitcode.ClangLookup:
    """Whether this process builds CuTe kernels' calls as bitcode: the ziglang clang, or why not."""
    raw = os.environ.get(ROUTE_VARIABLE, "")
    chosen = raw.strip().lower()
    if chosen == "link":
        return bitcode.ClangLookup(None, f"{ROUTE_VARIABLE}=link asks for the link route")
    if chosen not in ("", "bitcode"):  # a misspelt setting is the user's mistake, never a silent default
        raise CoopValueError(f"{ROUTE_VARIABLE}={raw!r} is not a route; accepted: link, bitcode (the default where "
                             "the ziglang wheel's clang can serve the CuTe DSL), or unset")
    return bitcode.find_clang(_dsl.llvm_major())


def route() -> str:
    """``bitcode`` or ``link``: the route this process's CuTe kernels are traced for (payload ABI) and built by."""
    return "bitcode" if clang_lookup().clang is not None else "link"


_warned: set[str] = set()


def warn_link_route(reason: str) -> None:
    """One warning per cause and process: the calls stay calls, at a cost in speed."""
    if reason in _warned:
        return
    _warned.add(reason)
    message = (f"cuda.coop builds CuTe DSL kernels through the link route, where each cooperative call stays a "
               f"function call (slower than CUB C++): {reason}")
    _log.warning("%s", message)
    warnings.warn(message, UserWarning, stacklevel=2)


_BITCODE_FILE = re.compile(r"[0-9a-f]{64}\.bc")


def is_bitcode_file(path: str) -> bool:
    """Whether a ``link-libraries`` entry is bitcode this backend attached (a file named by its content)."""
    return bool(_BITCODE_FILE.fullmatch(os.path.basename(path)))

