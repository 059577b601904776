"""The CuTe DSL backend's values: what a traced kernel's Python holds of cuda.coop (payloads, groups, temp storage),
the record of one call being planned, and where in the kernel's source a value or call is.

``ThreadData`` and ``ThreadGroup`` are what the markers return inside a traced kernel; their methods reach the
kernel's tracer (``_context.KernelTracer``), which plans and emits the calls (``_emit``).
"""
from __future__ import annotations

import inspect
import linecache
import os
import re
from dataclasses import dataclass
from types import FrameType
from typing import Any, NoReturn

import numpy as np

from .. import _markers
from .._backend_context import current
from .._markers.base import dispatch
from .._markers.groups import GROUP_METHODS, ThreadGroup as GroupMarker
from .._markers.thread_data import ThreadData as CommonThreadData
from .._calls.objects import bind_method, group_by
from .._errors import CoopError, CoopIndexError, CoopTypeError, located
from .._semantics.common import assignment_at, conflicting_dtypes, declared_dtype_conflict
from .._semantics.operators import LocalFunction
from .._semantics.temp_storage import DESCRIPTOR_ATTRIBUTES
from . import _about, _dsl


# ---- what the kernel's Python holds
@dataclass(eq=False)
class Slot:
    """A payload as the call layer sees it (the ``Payload`` protocol)."""

    items_per_thread: int
    dtype: str | None
    explicit: bool
    tracer: Any  # the kernel's _context.KernelTracer
    fragment: Any = None  # the register tensor, once the dtype is known
    array: Any = None
    follows: "Slot | None" = None
    site: tuple[str, int] | None = None  # where the kernel made it (ThreadData(...)), for P9
    uncarried: bool = False  # not carried through traced regions (see ThreadData.__extract_mlir_values__)
    inferred_by: str | None = None  # the call whose operand gave the dtype ("cuda.coop.load at line 51"), for P8
    assigned_at: str | None = None  # the typed assignment that gave it ("assignment at line 52"), for P8
    name: str = "payload"  # the kernel's name for it (``items = coop.ThreadData(...)``), for messages

    def root(self) -> "Slot":
        slot = self
        while slot.follows is not None:
            slot = slot.follows
        return slot

    def known_dtype(self) -> str:
        """The payload's dtype (its root's), P9 while nothing said it."""
        dtype = self.root().dtype
        if dtype is None:
            raise self.root().not_inferred()
        return dtype

    def not_inferred(self) -> CoopError:
        """P9, at the line that made the payload: nothing before its first use said its dtype."""
        error = CoopTypeError(f"could not infer the dtype of ThreadData {self.name}; pass dtype= or assign values of "
                              "known type (e.g. cutlass.Int32(x)) or load into it before its first use")
        return located(error, self.site) if self.site is not None else error

    def conflicting(self, dtype: str, where: str, at: tuple[str, int] | None = None) -> CoopError:
        """P8 (numba-cuda-mlir's words): two calls, two typed assignments, or a call and an assignment gave the
        payload two dtypes (at the line that made it; the call's evidence named first), or an assignment disagrees
        with its explicit dtype (at ``at``, the assignment: ``dtype`` never converts)."""
        if self.explicit:
            line = self.site[1] if self.site is not None else "?"
            error = declared_dtype_conflict(self.name, str(self.dtype), line, dtype, where)
            return located(error, at) if at is not None else error
        error = conflicting_dtypes(self.name, (str(self.dtype), str(self.inferred_by or self.assigned_at)),
                                   (dtype, where))
        return located(error, self.site) if self.site is not None else error

    def materialise(self) -> Any:
        if self.fragment is None:
            dtype = self.known_dtype()
            try:
                require_payload_dtype(dtype)
            except CoopError as exc:  # made before any call took it (a traced loop carries it): at its constructor
                raise (located(exc, self.site) if self.site is not None else exc) from None
            self.dtype = dtype
            self.fragment = _dsl.make_fragment(self.items_per_thread, dtype, self.tracer.kernel)
        return self.fragment


class ThreadData:
    """``ThreadData(items_per_thread, dtype=None, *, alignment=None)``: a payload in a CuTe kernel,
    ``items_per_thread`` items of one dtype in a register tensor (``.fragment``), as ``cuda.coop.ThreadData``.

    ``dtype`` is a NumPy type or a CuTe numeric type (``cutlass.Int32`` ...); ``None``: inferred from a ``load``
    source, a ``store`` destination or a typed assignment. ``ThreadData.from_fragment(tensor)`` wraps a 1-D register
    tensor of static extent instead.
    """

    __module__ = "cuda.coop.cutlass"
    _slot: Slot

    def __new__(cls, *args: Any, **kwargs: Any) -> "ThreadData":
        # the same marker as cuda.coop.ThreadData (and its signature), in this backend's namespace (R11 in another
        # backend's kernel)
        return dispatch("ThreadData", _about.NAMESPACE, args, kwargs)  # type: ignore[no-any-return]

    @classmethod
    def _of(cls, slot: Slot) -> "ThreadData":
        """The kernel value of a payload (what the markers return)."""
        made = object.__new__(cls)
        made._slot = slot
        return made

    @property
    def items_per_thread(self) -> int:
        return self._slot.items_per_thread

    @property
    def dtype(self) -> Any:
        """The CuTe numeric type of the items (None while not inferred)."""
        dtype = self._slot.root().dtype
        return None if dtype is None else _dsl.NUMERIC_TYPES.get(dtype, _dsl.OTHER_TYPES.get(dtype))

    @property
    def fragment(self) -> Any:
        """The register tensor holding the items (1-D, static extent)."""
        return self._slot.materialise()

    def __len__(self) -> int:
        return self._slot.items_per_thread

    def __iter__(self) -> NoReturn:  # P14, as numba-cuda-mlir reports it: a payload is indexed, not iterated
        raise self._escapes("iteration")

    def _index(self, index: Any) -> Any:
        """P16: a literal index is within ``-K .. K-1`` (a negative one counts from the end, as in Python); P14 for a
        slice."""
        if isinstance(index, slice):
            raise self._escapes("slicing", "; index single items instead")
        if isinstance(index, (int, np.integer)) and not isinstance(index, bool):
            k = self._slot.items_per_thread
            if not -k <= index < k:
                site = caller_site()
                # the kernel's own name for it (``dst[0] = items[4]`` names items), else the line's first subscript
                name = user_variable(self, site) or name_at(site, r"(\w+)\s*\[") or "payload"
                raise located(CoopIndexError(f"ThreadData {name} index {int(index)} is out of range for "
                                             f"items_per_thread {k}"), site)
            return int(index) % k
        return index

    def __getitem__(self, index: Any) -> Any:
        return self._slot.materialise()[self._index(index)]

    def __setitem__(self, index: Any, value: Any) -> None:
        slot = self._slot
        index = self._index(index)
        root, dtype = slot.root(), value_dtype(value)
        if dtype is not None:
            # a typed assignment gives the dtype where nothing else did; one that disagrees with the dtype another
            # gave, or with the explicit dtype, is P8, as on numba-cuda-mlir (docs: concepts, "ThreadData
            # payloads"). The payloads operations return and wrapped fragments (no site) convert, as there, and so
            # do a truth value (a comparison) and a cooperative call's scalar result, which numba-cuda-mlir counts as
            # no evidence.
            if root.dtype is None:
                root.dtype, root.assigned_at = dtype, assignment_at(caller_site()[1])
            elif root.dtype != dtype and root.site is not None and dtype != "bool" and \
                    id(value) not in slot.tracer.scalar_results:
                site = caller_site()
                raise root.conflicting(dtype, assignment_at(site[1]), site)
        fragment = slot.materialise()
        # converted to the payload's dtype, as numba-cuda-mlir converts it (docs: concepts, "ThreadData payloads"):
        # the DSL refuses a store of another type
        dtype = _dsl.element_dtype(fragment)
        fragment[index] = _dsl.converted(value, dtype) if dtype in _dsl.NUMERIC_TYPES else value

    def __repr__(self) -> str:
        return f"<cuda.coop ThreadData {self.items_per_thread} x {self._slot.root().dtype}>"

    def _shape(self) -> str:
        """The extent and dtype as P15 names them (numba-cuda-mlir's words)."""
        dtype = self._slot.root().dtype
        return f"items_per_thread={self.items_per_thread}" + (f", dtype={dtype}" if dtype is not None else "")

    def _escapes(self, use: str, hint: str = "") -> CoopError:
        """P14: a payload used as a run-time value (numba-cuda-mlir finds the same uses in its IR)."""
        site = caller_site()
        return located(CoopTypeError(f"ThreadData {user_variable(self, site) or 'payload'} escapes to runtime "
                                    f"through {use} at {os.path.basename(site[0])}:{site[1]}{hint}"), site)

    def _arithmetic(self, *_: Any) -> Any:
        raise self._escapes("an arithmetic expression")

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = __rtruediv__ = _arithmetic
    __floordiv__ = __rfloordiv__ = __mod__ = __rmod__ = __pow__ = __rpow__ = __matmul__ = __rmatmul__ = _arithmetic
    __and__ = __rand__ = __or__ = __ror__ = __xor__ = __rxor__ = __lshift__ = __rlshift__ = _arithmetic
    __rshift__ = __rrshift__ = __neg__ = __pos__ = __abs__ = __invert__ = _arithmetic
    __lt__ = __le__ = __gt__ = __ge__ = _arithmetic  # (== and != stay identity: the backend keys payloads by them)

    def __bool__(self) -> bool:
        raise self._escapes("a condition")

    def _conversion(self) -> Any:
        raise self._escapes("a conversion to a scalar")

    __int__ = __float__ = __index__ = _conversion

    # CuTe carries values assigned in a traced loop or branch through its region: a ThreadData is its register tensor
    # A payload whose dtype is not known when a loop or branch starts (typed assignments in its body give it) is not
    # carried: its register tensor is allocated at the kernel's entry, so the region reads and writes the same
    # registers, and it stays uncarried in every later region so that each region's structure stays the same.
    def __extract_mlir_values__(self) -> Any:
        root = self._slot.root()
        if root.uncarried or (self._slot.fragment is None and root.dtype is None):
            root.uncarried = True
            return []
        return self._slot.materialise().__extract_mlir_values__()

    def __new_from_mlir_values__(self, values: Any) -> "ThreadData":
        slot = self._slot
        if slot.root().uncarried:
            return self
        view = Slot(slot.items_per_thread, slot.root().dtype, True, slot.tracer,
                    fragment=slot.materialise().__new_from_mlir_values__(values), follows=slot)
        return ThreadData._of(view)

    @classmethod
    def from_fragment(cls, tensor: Any) -> "ThreadData":
        """Wrap a 1-D register tensor of static extent (no copy): calls read and write its items."""
        context = current()  # while CuTe traces a kernel: this backend's, with the kernel's tracer
        if context is None or context.backend != _about.BACKEND or context.tracer is None:
            raise _markers.base.kernel_only("cuda.coop.cutlass.ThreadData.from_fragment")
        tracer: Any = context.tracer
        try:
            return ThreadData._of(tracer.fragment_slot(tensor, "ThreadData.from_fragment", "tensor"))
        except CoopError as exc:
            raise located(exc, caller_site()) from None


setattr(ThreadData.__new__, "__signature__", inspect.signature(CommonThreadData.__new__))  # cuda.coop.ThreadData's


class ThreadGroup:
    """A group inside a CuTe kernel; its methods are planned like the numba-cuda-mlir backend's. Their arguments are
    bound to the signatures of ``cuda.coop.ThreadGroup``'s methods (set on these below), so that a mistake is the
    same error (C5) on both backends."""

    __module__ = "cuda.coop.cutlass"

    def __init__(self, spec: Any, tracer: Any):  # the kernel's _context.KernelTracer
        self.spec = spec
        self._tracer = tracer

    # CuTe may carry a group through a traced ``if`` or loop: it holds no run-time value
    def __extract_mlir_values__(self) -> list[Any]:
        return []

    def __new_from_mlir_values__(self, values: list[Any]) -> "ThreadGroup":
        return self

    def _escapes(self, use: str) -> CoopError:
        """G2: a group used as a run-time value (numba-cuda-mlir finds the same uses in its IR)."""
        site = caller_site()
        return located(CoopTypeError(f"ThreadGroup {user_variable(self, site) or 'group'} escapes to runtime through "
                                     f"{use} at {os.path.basename(site[0])}:{site[1]}; groups may only be used with "
                                     "cuda.coop operations, group methods and inlined helpers"), site)

    def _arithmetic(self, *_: Any) -> Any:
        raise self._escapes("an arithmetic expression")

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = __rtruediv__ = _arithmetic
    __floordiv__ = __rfloordiv__ = __mod__ = __rmod__ = __pow__ = __rpow__ = __neg__ = __pos__ = _arithmetic
    __lt__ = __le__ = __gt__ = __ge__ = _arithmetic  # (== and != stay identity: the backend compares groups)

    def __bool__(self) -> bool:
        raise self._escapes("a condition")

    def _conversion(self) -> Any:
        raise self._escapes("a conversion to a scalar")

    __int__ = __float__ = __index__ = _conversion

    def _bound(self, method: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
        """Every parameter of ``method`` (the bound argument, else its documented default), at the kernel's line."""
        try:
            return bind_method(method, args, kwargs, namespace=_about.NAMESPACE, backend=_about.BACKEND)
        except CoopError as exc:
            raise located(exc, caller_site()) from None

    def _query(self, method: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        return self._tracer.query(method, self, self._bound(method, args, kwargs))

    def group_by(self, *args: Any, **kwargs: Any) -> "ThreadGroup":
        values = self._bound("group_by", args, kwargs)
        try:
            spec = group_by(self.spec, values, self._tracer.launch)
        except CoopError as exc:
            raise located(exc, caller_site()) from None
        return ThreadGroup(spec, self._tracer)

    def rank(self, *args: Any, **kwargs: Any) -> Any:
        return self._query("rank", args, kwargs)

    def count(self, *args: Any, **kwargs: Any) -> Any:
        return self._query("count", args, kwargs)

    def rank_as(self, *args: Any, **kwargs: Any) -> Any:
        return self._query("rank_as", args, kwargs)

    def count_as(self, *args: Any, **kwargs: Any) -> Any:
        return self._query("count_as", args, kwargs)

    def is_member(self, *args: Any, **kwargs: Any) -> Any:
        return self._query("is_member", args, kwargs)

    def sync(self, *args: Any, **kwargs: Any) -> None:
        self._query("sync", args, kwargs)

    def sync_aligned(self, *args: Any, **kwargs: Any) -> None:
        self._query("sync_aligned", args, kwargs)


for _method in GROUP_METHODS:  # cuda.coop.ThreadGroup's signatures (and their defaults): the one source of truth
    setattr(getattr(ThreadGroup, _method), "__signature__", inspect.signature(getattr(GroupMarker, _method)))


@dataclass(eq=False)
class Storage:
    descriptor: Any

    def __getattr__(self, name: str) -> Any:
        """``size_in_bytes``, ``alignment``, ``auto_sync``, ``sharing``: the constructor's arguments, compile-time
        Python values (SPEC 6.1)."""
        if name in DESCRIPTOR_ATTRIBUTES:
            return getattr(self.descriptor, name)
        raise AttributeError(f"'TempStorage' object has no attribute {name!r}")

    def __extract_mlir_values__(self) -> list[Any]:  # carried like a group: no run-time value
        return []

    def __new_from_mlir_values__(self, values: list[Any]) -> "Storage":
        return self


@dataclass(frozen=True)
class PayloadPair:
    items: tuple[Slot, ...]
    # the places of the returned tuple that hold scalars, beside the payloads (a broadcast of ``(x, items)``): the
    # call's ``out`` results, in order
    scalars: tuple[int, ...] = ()
    # the first ``inner`` results form a tuple of their own, the returned tuple's first member (``((a, b), count)``)
    inner: int = 0

    def returned(self, outs: tuple[Any, ...]) -> tuple[Any, ...]:
        """The tuple the call returns: its payloads (as ``ThreadData``) and its ``out`` results ``outs`` in order,
        the first ``inner`` of them as a tuple of their own."""
        payloads = iter(ThreadData._of(slot) for slot in self.items)
        scalars = iter(outs)
        flat = [next(scalars) if place in self.scalars else next(payloads)
                for place in range(len(self.items) + len(self.scalars))]
        return (tuple(flat[:self.inner]), *flat[self.inner:]) if self.inner else tuple(flat)


@dataclass
class Call:
    """One call being planned: the operation, its qualified name, its bound arguments, what it returns."""

    op: str
    name: str
    args: dict[str, Any]
    qualified: bool = False
    result: Any = None
    returned: Any = None
    site: tuple[str, int] | None = None


# ---- where in the kernel's Python
def caller_site(dsl_folder: str | None = None) -> tuple[str, int]:
    """The file and line of the kernel's Python that called into this backend (its frames skipped; with
    ``dsl_folder``, the DSL's too: a check the DSL runs for a traced region calls back into this backend)."""
    here = os.path.dirname(os.path.abspath(__file__))

    def skipped(folder: str) -> bool:
        return folder == here or (dsl_folder is not None and (folder + os.sep).startswith(dsl_folder + os.sep))

    frame = inspect.currentframe()
    while frame is not None and skipped(os.path.dirname(os.path.abspath(frame.f_code.co_filename))):
        frame = frame.f_back
    return (frame.f_code.co_filename, frame.f_lineno) if frame is not None else ("<kernel>", 0)


def frame_at(site: tuple[str, int]) -> FrameType | None:
    """The frame on the current stack executing ``site`` (file, line): the kernel's Python while it is traced."""
    frame = inspect.currentframe()
    while frame is not None and (frame.f_code.co_filename, frame.f_lineno) != site:
        frame = frame.f_back
    return frame


def user_variable(value: Any, site: tuple[str, int]) -> str | None:
    """The name the kernel's Python gives ``value`` in the frame executing ``site`` (for messages)."""
    frame = frame_at(site)
    names = [name for name, held in (frame.f_locals.items() if frame is not None else ()) if held is value]
    return names[0] if names else None


def name_at(site: tuple[str, int], pattern: str) -> str | None:
    """The variable ``pattern`` finds on the source line ``site`` (messages name payloads as the user does)."""
    found = re.search(pattern, linecache.getline(*site))
    return found.group(1) if found else None


def function_at(site: tuple[str, int]) -> str | None:
    """The name of the function executing ``site`` (file, line) on the current stack: the kernel's Python name."""
    frame = frame_at(site)
    return frame.f_code.co_name if frame is not None else None


def made_at(site: tuple[str, int] | None, value: Any) -> Any:
    """``value``, or a ``LocalFunction`` where it is a Python function whose code belongs to the code running ``site``
    (it was defined in that function's body)."""
    if site is None or not inspect.isfunction(value):
        return value
    frame = frame_at(site)
    pending = list(frame.f_code.co_consts) if frame is not None else []
    while pending:
        const = pending.pop()
        if const is value.__code__:
            return LocalFunction(value.__qualname__)
        if inspect.iscode(const):
            pending.extend(const.co_consts)
    return value


def enclosing_statement(site: tuple[str, int] | None,
                        headers: tuple[str, ...] = ("if ", "elif ", "else")) -> str | None:
    """``file:line`` of the ``if`` (or another statement of ``headers``: a loop's) whose body holds the call at
    ``site`` (CuTe keeps no location on it)."""
    if site is None:
        return None
    filename, line = site
    text = linecache.getline(filename, line)
    indent = len(text) - len(text.lstrip())
    for number in range(line - 1, 0, -1):
        above = linecache.getline(filename, number)
        stripped = above.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if len(above) - len(above.lstrip()) < indent:
            if stripped.startswith(headers):
                return f"{filename}:{number}"
            indent = len(above) - len(above.lstrip())
            if stripped.startswith(("def ", "@")):
                return None
    return None


def require_payload_dtype(dtype: str) -> None:
    """A payload of this backend holds one of the ten numeric dtypes (float16 and booleans are not built)."""
    if dtype not in _dsl.NUMERIC_TYPES:
        raise CoopTypeError(f"{_about.NAMESPACE} payloads support dtypes {', '.join(_dsl.NUMERIC_TYPES)}; got {dtype}")


def number_dtype(value: Any) -> str | None:
    """A scalar operand's dtype: a CuTe numeric's or NumPy scalar's own, a Python int int32 and a float float32
    (as CuTe's ``as_numeric``); None for anything else, booleans included."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return "int32"
    if isinstance(value, float):
        return "float32"
    return value_dtype(value)


def value_dtype(value: Any) -> str | None:
    if isinstance(value, _dsl.Numeric):
        return _dsl.DTYPE_OF_TYPE.get(type(value))
    if isinstance(value, np.generic):
        return value.dtype.name
    return None


def static_value(value: Any) -> Any:
    """A CuTe numeric's value when it is a compile-time constant, else None."""
    try:
        raw = value.value
    except AttributeError:
        return None
    return raw if isinstance(raw, (int, float, bool)) else None


def describe(value: Any) -> str:
    if isinstance(value, _dsl.Tensor):
        shape, stride = _dsl.shape_and_stride(value)
        return (f"a {_dsl.memspace(value)} tensor of {value.element_type} with shape {shape} and stride {stride}")
    if isinstance(value, ThreadData):
        return repr(value)
    untyped = _dsl.untyped_value_numeric(value)
    if untyped is not None:
        numeric, dtype = untyped
        return (f"an untyped {dtype} DSL value (what cutlass.select_ returns); wrap it in its CuTe numeric type, "
                f"e.g. cutlass.{numeric}(x)")
    name = type(value).__name__
    return f"{'an' if name[:1].lower() in 'aeiou' else 'a'} {name}"
