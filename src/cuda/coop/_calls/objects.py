"""The kernel's cuda.coop objects, made the same way by every backend (docs: concepts, "ThreadData payloads",
"Scratch memory and barriers", "Groups and ranks"): a constructor call's or group method call's arguments bound to
its documented signature with that signature's defaults, the checks of a ``ThreadData`` (P6, P12, P13), a
``TempStorage`` descriptor (S5), the group factories, and the group queries (G17, G18).

A backend reads its compiler's values (an IR variable's compile-time value, a traced Python value) and hands them
here; what it makes of the result (a payload in its IR, a register tensor) stays its own.
"""
from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Mapping

from .._errors import CoopTypeError, CoopValueError
from .._markers.groups import ThreadGroup
from .._semantics import groups as sem_groups
from .._semantics.common import (
    BLOCK, CLUSTER, GRID, THREAD, WARP, GroupSpec, LaunchShape, compile_time_int, require_alignment,
)
from .._semantics.groups import QuerySpec
from .._semantics.temp_storage import Descriptor, make_descriptor
from .binding import bind_arguments

#: the group factories of the common namespace and the group kind each makes
FACTORIES: dict[str, str] = {"this_thread": THREAD, "this_warp": WARP, "this_block": BLOCK, "this_cluster": CLUSTER,
                             "this_grid": GRID}


def factory_group(name: str, launch: LaunchShape) -> GroupSpec:
    """The group ``name()`` (one of ``FACTORIES``) makes in a kernel launched with ``launch``."""
    return sem_groups.factory_group(FACTORIES[name], launch)


# ---- constructors: ThreadData(...) and TempStorage(...), and the options of group methods
def with_defaults(function: Any, bound: Mapping[str, Any]) -> dict[str, Any]:
    """Every parameter of ``function`` (a constructor marker's ``__new__`` or a ``ThreadGroup`` method) but its first
    (``cls``, ``self``): the bound argument where the call passed one, else the documented default. The defaults live
    in the signatures alone (``_markers``)."""
    parameters = list(inspect.signature(function).parameters.values())[1:]
    return {p.name: bound.get(p.name, p.default) for p in parameters}


def bind_constructor(name: str, marker: Any, args: tuple[Any, ...], kwargs: dict[str, Any], *, namespace: str,
                     backend: str) -> dict[str, Any]:
    """``with_defaults`` of a constructor call ``name`` (``cuda.coop.ThreadData``) made with Python values: C5 for
    arguments its signature refuses, in the words of any other call."""
    bound = bind_arguments(name, inspect.signature(marker.__new__), (None, *args), kwargs, namespace=namespace,
                           backend=backend, skipped=1)
    return with_defaults(marker.__new__, bound)


def bind_method(method: str, args: tuple[Any, ...], kwargs: dict[str, Any], *, namespace: str,
                backend: str) -> dict[str, Any]:
    """``with_defaults`` of a call ``group.method(...)`` (``group_by``, ``rank`` ...) made with Python values, bound to
    the ``ThreadGroup`` marker's signature: C5 for arguments it refuses, as numba-cuda-mlir reports them."""
    function = getattr(ThreadGroup, method)
    bound = bind_arguments(f"ThreadGroup.{method}", inspect.signature(function), (None, *args), kwargs,
                           namespace=namespace, backend=backend, skipped=1)
    return with_defaults(function, bound)


def is_extent(value: object) -> bool:
    """Whether ``value`` can be a ThreadData's ``items_per_thread`` (an integer, not a bool; P6 checks the sign)."""
    return compile_time_int(value) is not None  # a NumPy integer is one, and any object with __index__


@dataclass(frozen=True)
class ThreadDataSpec:
    """What a ``ThreadData(...)`` construction says: its extent, its dtype (None: inferred) and its alignment."""

    items_per_thread: int
    dtype: str | None
    alignment: int | None


def thread_data(values: Mapping[str, Any], *, dtype_of_object: Callable[[Any], str | None],
                dtype_words: str) -> ThreadDataSpec:
    """The checks of ``ThreadData(items_per_thread, dtype=None, *, alignment=None)``, in this order (docs: concepts,
    "ThreadData payloads"): ``items_per_thread`` a compile-time positive integer (P6), ``dtype`` None or what the
    compiler names a dtype with (P12; a string is not one), ``alignment`` None or a power of two (P13).
    ``values``: every parameter (``with_defaults``) as compile-time Python values; ``dtype_of_object`` and
    ``dtype_words``: the backend's (``CallContext``)."""
    k = values["items_per_thread"]
    if not is_extent(k):
        raise CoopTypeError("ThreadData items_per_thread must be a compile-time integer")
    k = int(k)
    if k <= 0:
        raise CoopValueError("ThreadData items_per_thread must be positive")
    dtype_obj = values["dtype"]
    dtype = None
    if dtype_obj is not None:
        dtype = None if isinstance(dtype_obj, str) else dtype_of_object(dtype_obj)
        if dtype is None:
            raise CoopTypeError(f"ThreadData dtype must be {dtype_words}; got {dtype_obj!r}")
    alignment = values["alignment"]
    if alignment is not None:
        if compile_time_int(alignment) is None:
            raise CoopTypeError(f"ThreadData alignment must be a compile-time integer; got {alignment!r}")
        alignment = require_alignment("ThreadData", alignment)
    return ThreadDataSpec(k, dtype, alignment)


def temp_storage(index: int, values: Mapping[str, Any]) -> Descriptor:
    """The descriptor of the kernel's ``index``-th ``TempStorage(...)`` construction (S5 for a bad argument);
    ``values``: every parameter (``with_defaults``) as compile-time Python values."""
    return make_descriptor(index, values["size_in_bytes"], values["alignment"], values["auto_sync"],
                           values["sharing"])


# ---- one variable, several construction sites
def several_sites(variable: str) -> CoopTypeError:
    """A variable that may refer to the groups, payloads or descriptors of several construction sites (a branch or a
    loop reassigns it): each must come from exactly one, or be payloads of one shape (P15)."""
    return CoopTypeError(f"variable {variable} may refer to different cuda.coop values (a ThreadGroup, ThreadData or "
                         "TempStorage must come from exactly one construction site, or payloads of one shape)")


# ---- groups made by group_by, and group queries
def group_by(parent: GroupSpec, values: Mapping[str, Any], launch: LaunchShape) -> GroupSpec:
    """The group ``parent.group_by(...)`` makes in a kernel launched with ``launch``, every backend's checks in one
    order (``_semantics.groups.group_by``: G10/G9, G6/G7, G8, G13, G11/G12, G14). ``values``: every parameter
    (``with_defaults``, ``bind_method``) as compile-time Python values; a backend passes what it cannot know at
    compile time as it is (a run-time value of its compiler, ``_semantics.common.Runtime``): G6 or G8 when the
    checks reach it."""
    return sem_groups.group_by(parent, values["count"], values["exhaustive"], launch)


# ---- group queries
#: the query methods of ``ThreadGroup`` (``group_by`` makes a group and is not one)
QUERY_METHODS = ("rank", "count", "rank_as", "count_as", "is_member", "sync", "sync_aligned")


def plan_query(method: str, group: GroupSpec, launch: LaunchShape, *, level: object, dtype: object,
               dtype_of_object: Callable[[Any], str | None], target_cc: int) -> QuerySpec:
    """The query ``group.method(...)`` as called (``rank_as``, so that messages name it), ``level`` and ``dtype``
    as passed (compile-time Python values; ``dtype`` None when none was): G17 for a bad level, G18 for a dtype
    that names no integer type."""
    name = None
    if dtype is not None:
        name = None if isinstance(dtype, str) else dtype_of_object(dtype)
        if name is None:
            sem_groups.query_dtype(method, "?")  # G18
    return sem_groups.plan_query(method, group, launch, level=level, dtype=name, target_cc=target_cc)
