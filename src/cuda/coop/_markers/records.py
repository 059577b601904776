"""One declarative record per cooperative operation (CONTRIBUTING, "Adding an operation family").

An operation is declared once, beside its documented signature, with ``@declare(Operation(...))``. Everything
that lists operations reads the records instead of keeping a table of its own: the markers and both backends'
qualified namespaces (``qualified``), ``__all__`` and the stubs, the group check every call passes, which call-layer
family and C++ emitter build it, which operations take tuples of operands, the ``explain`` command and the
documentation's tables. ``tests/unit/test_records.py`` checks that no other module keeps such a table.
"""
from __future__ import annotations

import dataclasses
import inspect
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, TypeVar

from .base import OP_ATTR, operation

F = TypeVar("F", bound=Callable[..., Any])

# Group kinds as messages name them (docs: concepts, "Groups and ranks"); the semantics layer re-exports them.
BLOCK, WARP, LOGICAL_WARP = "block", "warp", "threads_within_warp"
THREAD, CLUSTER, GRID, WARPS_IN_BLOCK = "thread", "cluster", "grid", "warps_within_block"
LOGICAL_WARP_WIDTHS = (1, 2, 4, 8, 16, 32)


@dataclass(frozen=True)
class Extension:
    """What a backend's qualified namespace adds to one operation beyond the common contract (docs: qualified).

    A backend that lacks a capability in ``needs`` leaves the names that need it out of its namespace; naming one
    is R9 there and C3 in a common call."""

    options: tuple[str, ...] = ()  # keyword options (default None); a common call naming one is C3
    operands: tuple[str, ...] = ()  # optional positional operands after the common ones (default None)
    # takes one scalar per thread where the common call needs a payload (docs: qualified, "Payload forms")
    scalar_form: bool = False
    returns: str = ""  # the qualified marker's return annotation in the stubs, where it widens the common one
    note: str = ""  # what the qualified docstring adds; ``{name}``: the qualified marker's public name
    # what the docstring adds when the namespace offers one extension name (an option or operand), keyed by it
    notes: tuple[tuple[str, str], ...] = ()
    # (extension name, backend capability it needs): a backend without the capability does not build the name
    needs: tuple[tuple[str, str], ...] = ()
    # what the docstring adds where the backend has a capability, keyed by it (radix sort's float16 keys): a backend
    # lacking it builds no such thing, so its namespace does not say it does
    capability_notes: tuple[tuple[str, str], ...] = ()

    def unbuilt(self, lacks: frozenset[str]) -> tuple[str, ...]:
        """The options and operands a backend lacking the capabilities ``lacks`` does not build."""
        return tuple(name for name, capability in self.needs if capability in lacks)


NO_EXTENSION = Extension()


@dataclass(frozen=True)
class Groups:
    """The group kinds an operation accepts (G3) and the logical-warp widths (G15), with the documentation's words
    for each kind where they say more than "yes" (docs: operations/index, "Groups each operation accepts")."""

    kinds: tuple[str, ...]
    widths: tuple[int, ...] | None = None
    own_rule: bool = False  # the family checks a richer rule of its own (reduce: qualified kinds, partial widths)
    words: tuple[tuple[str, str], ...] = ()  # (kind, the table cell that replaces "yes" / the widths)

    def cell(self, kind: str) -> str:
        """The documentation's table cell for ``kind``."""
        words = dict(self.words)
        if kind in words:
            return words[kind]
        if kind not in self.kinds:
            return "no"
        if kind == LOGICAL_WARP:
            return f"W in {', '.join(map(str, self.widths or LOGICAL_WARP_WIDTHS))}"
        return "yes"


ALL_WARPS = Groups((BLOCK, WARP, LOGICAL_WARP), LOGICAL_WARP_WIDTHS)
BLOCK_ONLY = Groups((BLOCK,))
ONE_DIMENSIONAL_BLOCK = Groups((BLOCK,), words=((BLOCK, "1-D"),))


@dataclass(frozen=True)
class Operation:
    """The declaration of one cooperative operation: everything a layer needs to know about it besides its
    signature and docstring (the decorated function) and its family's code."""

    name: str
    # the module of the call layer (``_calls.<family>``) and of the C++ emitter (``_cub.families.<family>``)
    family: str
    summary: str  # what it computes, in a few words (``explain``'s help, the documentation's tables)
    groups: Groups
    extends: Extension = NO_EXTENSION
    # a tuple ``value`` goes to the family (docs: operations/scan, "Several operands at once"), which plans it, or
    # refuses it with its own message where the form fixes a single-operand operator (the sums)
    tuple_operands: bool = False
    # a tuple ``value``'s members travel independently, none combined with another (docs: operations/broadcast): it
    # may mix scalars and payloads of any extents, and no user function of tuples takes part
    independent_members: bool = False
    # a tuple's members are data that one permutation moves together (docs: operations/select): payloads of one
    # extent or scalars, of any dtypes, and no user function of tuples takes part
    moved_members: bool = False
    tuple_operand: str = "value"  # the operand that may be a tuple (select and partition: ``items``)
    # parameters the operation fixes that its family otherwise takes from the call (scan: mode and operator)
    form: tuple[tuple[str, Any], ...] = ()
    selectors: tuple[tuple[str, str], ...] = ()  # (selector parameter, its vocabulary's name in the stubs)
    explainer: str = ""  # the ``explain`` command's picture of it (none: not explained)
    marker: Callable[..., Any] = field(default=lambda: None, compare=False, repr=False)

    @property
    def multi_operand(self) -> bool:
        """Whether the operation computes over a tuple of operands (with the user's function of tuples)."""
        return (self.tuple_operands and not self.independent_members and not self.moved_members
                and self.fixed("operator") is None)

    @property
    def takes_tuple_value(self) -> bool:
        """Whether a tuple operand is accepted: combined by the user's function, moved member by member, or moved
        together by one permutation."""
        return self.multi_operand or (self.tuple_operands and (self.independent_members or self.moved_members))

    def fixed(self, parameter: str, default: Any = None) -> Any:
        """The value the operation fixes for ``parameter`` (``default`` when the call gives it)."""
        return dict(self.form).get(parameter, default)


# Complete whenever another module reads it: importing anything of ``_markers`` runs the package's ``__init__``,
# which imports every marker module (``MARKER_MODULES``) first.
_RECORDS: dict[str, Operation] = {}


def declare(record: Operation) -> Callable[[F], F]:
    """Make the decorated signature the common marker of ``record`` and register the record."""

    def wrap(fn: F) -> F:
        if record.name in _RECORDS:
            raise ValueError(f"operation {record.name} is declared twice")
        marker = operation(record.name)(fn)
        _RECORDS[record.name] = dataclasses.replace(record, marker=marker)
        return marker

    return wrap


def records() -> Iterator[Operation]:
    """Every declared operation, in declaration order (the order of ``__all__`` and the documentation)."""
    return iter(tuple(_RECORDS.values()))


def record(op: str) -> Operation | None:
    """The record of operation ``op`` (None for a name that is not an operation)."""
    return _RECORDS.get(op)


def of(op: str) -> Operation:
    """The record of the declared operation ``op``."""
    return _RECORDS[op]


def extension(op: str) -> Extension:
    """The qualified additions declared for operation ``op`` (none when it declares none)."""
    found = record(op)
    return found.extends if found is not None else NO_EXTENSION


def offered_extension(op: str, lacks: frozenset[str] = frozenset()) -> Extension:
    """The part of operation ``op``'s extension that a backend lacking the capabilities ``lacks`` offers."""
    declared = extension(op)
    unbuilt = declared.unbuilt(lacks)
    if not unbuilt and not any(capability in lacks for capability, _ in declared.capability_notes):
        return declared
    return dataclasses.replace(
        declared, options=tuple(o for o in declared.options if o not in unbuilt),
        operands=tuple(o for o in declared.operands if o not in unbuilt),
        notes=tuple((key, text) for key, text in declared.notes if key not in unbuilt),
        capability_notes=tuple((key, text) for key, text in declared.capability_notes if key not in lacks))


def qualified(common: Callable[..., Any], module: str, lacks: frozenset[str] = frozenset()) -> Callable[..., Any]:
    """The qualified variant of a common operation in a backend's namespace ``module``: same contract, more
    accepted: the options and operands its ``Extension`` declares (default None) join the signature, and its notes
    the docstring, except those needing a capability in ``lacks`` (what this backend does not build, so its namespace
    neither offers nor describes)."""
    wrapped: Callable[..., Any] = getattr(common, "__wrapped__")  # set by functools.wraps
    marker = operation(getattr(common, OP_ATTR), module=module)(wrapped)
    offered = offered_extension(marker.__qualname__, lacks)
    notes = [offered.note] + [text for key, text in (*offered.notes, *offered.capability_notes)]
    if any(notes):
        doc = common.__doc__ or ""
        # one paragraph: each note without its blank ends
        note = "\n".join(n.format(name=f"{module}.{marker.__qualname__}").strip("\n").rstrip() for n in notes if n)
        note += "\n\n"
        at = doc.find("    See Also:")  # before the links, so the note reads as part of the description
        marker.__doc__ = doc[:at] + note + doc[at:] if at >= 0 else doc + "\n" + note
    if offered.options or offered.operands:
        sig = inspect.signature(marker)
        params = list(sig.parameters.values())
        cut = sum(p.kind == p.POSITIONAL_ONLY for p in params)
        params = (params[:cut]
                  + [inspect.Parameter(name, inspect.Parameter.POSITIONAL_ONLY, default=None)
                     for name in offered.operands]
                  + params[cut:]
                  + [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=None)
                     for name in offered.options])
        setattr(marker, "__signature__", sig.replace(parameters=params))
    return marker


def qualified_markers(module: str, lacks: frozenset[str] = frozenset()) -> dict[str, Callable[..., Any]]:
    """Every operation's qualified marker in the namespace ``module`` of a backend lacking ``lacks``, by name."""
    return {op.name: qualified(op.marker, module, lacks) for op in records()}
