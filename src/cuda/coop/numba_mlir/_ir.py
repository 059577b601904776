"""Reading numba IR before typing: what each variable statically is.

The planner runs after inlining and before type inference, so the only facts
available are IR definitions, the kernel's argument types and Python objects
referenced as globals. ``Resolver`` folds those into abstract values.
"""
from __future__ import annotations

import operator
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from .._calls.site import SiteCall
from .._semantics.operators import LocalFunction
from .._semantics.temp_storage import DESCRIPTOR_ATTRIBUTES
from . import _compat as nb


class Unknown:
    """A value the planner cannot know before typing."""

    def __repr__(self) -> str:
        return "<runtime>"


UNKNOWN = Unknown()


@dataclass(frozen=True)
class Obj:
    """A compile-time Python object (literal, global, closure value, literal argument)."""

    value: Any


@dataclass(frozen=True)
class ArgRef:
    """A kernel argument whose value is not a literal."""

    index: int
    type: Any


@dataclass(frozen=True)
class ArgExpr:
    """Integer arithmetic over integer kernel arguments (and constants), ``n * 2``: a compile-time value once those
    arguments are specialised (SPEC 7.2), a run-time integer where none is asked for."""

    indices: frozenset[int]


def arguments_of(value: Any) -> frozenset[int] | None:
    """The kernel arguments an integer value computed at compile time would depend on: none for a constant, None
    for a value no specialisation makes compile-time."""
    if isinstance(value, Obj) and _is_int(value.value):
        return frozenset()
    if isinstance(value, ArgRef) and isinstance(value.type, nb.types.Integer):
        return frozenset({value.index})
    if isinstance(value, ArgExpr):
        return value.indices
    return None


def integer_expression(fn: Callable[..., Any], operands: list[Any]) -> Any:
    """``fn`` over resolved operands: a constant where they all are, an ``ArgExpr`` where integer kernel arguments
    are among them, else UNKNOWN."""
    if all(isinstance(o, Obj) and _is_int(o.value) for o in operands):
        return Obj(fn(*(o.value for o in operands)))
    arguments = [arguments_of(o) for o in operands]
    if any(a is None for a in arguments):
        return UNKNOWN
    return ArgExpr(frozenset().union(*arguments))  # type: ignore[arg-type]


@dataclass(eq=False)
class GroupVal:
    spec: Any
    loc: Any


@dataclass(frozen=True)
class MethodVal:
    group: GroupVal
    name: str


THREAD_DATA, LOCAL_ARRAY, SHARED_ROW = "ThreadData", "local array", "shared array row"


@dataclass(eq=False)
class PayloadVal:
    """One ThreadData construction site."""

    stmt: Any
    var: str
    items_per_thread: int
    dtype: str | None
    explicit: bool
    loc: Any
    evidence: list[tuple[str, str]] = field(default_factory=list)  # (dtype, where)
    same_as: "PayloadVal | None" = None  # an operation result shares its input's dtype
    array: Any = None  # the IR variable of a result's local array when it is not ``stmt``'s target (tuple results)
    # "ThreadData", or LOCAL_ARRAY: the user's own 1-D local array, a qualified payload
    # (docs: qualified, "Payload forms")
    form: str = "ThreadData"
    result: bool = False  # a fresh payload an operation returns (sized by the operation, which checks it)

    def root(self) -> "PayloadVal":
        node = self
        while node.same_as is not None:
            node = node.same_as
        return node


@dataclass(eq=False)
class SharedArrayVal:
    """A static ``cuda.shared.array`` or ``numba_coop.shared.array`` (``in_backing``): its rows are payloads."""

    stmt: Any
    shape: tuple[int, ...]
    dtype: str
    alignment: int
    in_backing: bool
    rows: dict[int, PayloadVal] = field(default_factory=dict)  # id(statement) -> the PayloadVal of ``arr[r]``
    site: SiteCall | None = None  # ``in_backing``: its pointer into the backing, once the build placed it

    def row(self, stmt: Any) -> "PayloadVal | object":
        if stmt is None or len(self.shape) != 2:
            return UNKNOWN
        if id(stmt) not in self.rows:
            self.rows[id(stmt)] = PayloadVal(stmt, stmt.target.name, int(self.shape[1]), self.dtype, True, stmt.loc,
                                             form=SHARED_ROW)
        return self.rows[id(stmt)]


@dataclass(eq=False)
class PayloadTuple:
    """The fresh payloads an operation returns together (``keys, values = coop.merge_sort_pairs(...)``)."""

    items: tuple[PayloadVal, ...]
    op: str = ""  # the operation that returned them, and what it calls them, for messages
    names: tuple[str, ...] = ()
    # the places of the returned tuple that hold scalars, beside the payloads (a broadcast of ``(x, items)``): the
    # call's ``out`` results, in order; places count the flat sequence of the call's results (``inner`` apart)
    scalars: tuple[int, ...] = ()
    # the first ``inner`` results form a tuple of their own, the returned tuple's first member (``(items, count)``
    # of a select of a tuple: ``((a, b), count)``)
    inner: int = 0
    nested: "PayloadTuple | None" = field(default=None, repr=False)
    within: "PayloadTuple | None" = field(default=None, repr=False)  # the returned tuple holding this inner one

    def __post_init__(self) -> None:
        if self.inner and self.nested is None:
            items = tuple(p for place, p in enumerate(self._flat()) if place < self.inner and p is not None)
            scalars = tuple(place for place in self.scalars if place < self.inner)
            self.nested = PayloadTuple(items, self.op, self.names[:self.inner], scalars, within=self)

    def _flat(self) -> list["PayloadVal | None"]:
        """The call's results in order: a payload, or None for a scalar."""
        payloads = iter(self.items)
        return [None if place in self.scalars else next(payloads) for place in range(self.flat_size)]

    @property
    def flat_size(self) -> int:
        """How many results the call makes (the inner tuple's members counted one by one)."""
        return len(self.items) + len(self.scalars)

    @property
    def size(self) -> int:
        """The returned tuple's length."""
        return self.flat_size - self.inner + 1 if self.inner else self.flat_size

    @property
    def shown_names(self) -> tuple[str, ...]:
        """What the call's documentation calls each member of the returned tuple, for messages."""
        if not self.inner:
            return self.names
        return (f"({', '.join(self.names[:self.inner])})", *self.names[self.inner:])

    def member(self, index: int) -> "PayloadVal | PayloadTuple | None":
        """The payload at place ``index`` (``0 <= index < size``) of the returned tuple, the inner tuple at place 0
        where there is one; None for a scalar."""
        if self.inner:
            if index == 0:
                return self.nested
            index += self.inner - 1
        return self._flat()[index]


@dataclass(eq=False)
class DescVal:
    descriptor: Any
    stmt: Any
    loc: Any


_BINOPS: dict[Any, Callable[[Any, Any], Any]] = {
    operator.add: operator.add, operator.sub: operator.sub, operator.mul: operator.mul,
    operator.floordiv: operator.floordiv, operator.mod: operator.mod, operator.pow: operator.pow,
    operator.lshift: operator.lshift, operator.rshift: operator.rshift,
    operator.iadd: operator.add, operator.isub: operator.sub, operator.imul: operator.mul,
    operator.ifloordiv: operator.floordiv, operator.imod: operator.mod,
}


class Resolver:
    """Memoised static evaluation of IR variables."""

    def __init__(self, func_ir: Any, arg_types: tuple[Any, ...], on_call: Callable[[Any], Any]) -> None:
        self.func_ir = func_ir
        self.arg_types = arg_types
        self.on_call = on_call  # evaluates marker constructor calls (groups, payloads, descriptors)
        self.memo: dict[str, Any] = {}
        self.merges: list[tuple[PayloadVal, PayloadVal, str]] = []  # payloads one variable may hold
        self.stmt_of: dict[int, Any] = {}
        for block in func_ir.blocks.values():
            for stmt in block.body:
                if isinstance(stmt, nb.ir.Assign):
                    self.stmt_of[id(stmt.value)] = stmt
        self.local_code = _kernel_code_objects(func_ir)

    def definitions(self, name: str) -> list[Any]:
        return list(self.func_ir._definitions.get(name, ()))

    def definitions_through_copies(self, var: Any) -> list[Any]:
        """The definitions of ``var`` and of the variables it copies (``b = a``), each variable once; the copies
        themselves left out."""
        return self.copies_of(var)[1]

    def copies_of(self, var: Any) -> tuple[set[str], list[Any]]:
        """(the names of ``var`` and of the variables it copies, their definitions that are not copies). numba
        copies a call's earlier operands across the blocks of a conditional expression among its later ones
        (``f(op, x if c else y)``)."""
        found: list[Any] = []
        seen: set[str] = set()
        pending = [var]
        while pending:
            current = pending.pop()
            if current.name in seen:
                continue
            seen.add(current.name)
            for definition in self.definitions(current.name):
                if isinstance(definition, nb.ir.Var):
                    pending.append(definition)
                else:
                    found.append(definition)
        return seen, found

    def var(self, name: str) -> Any:
        if name in self.memo:
            return self.memo[name]
        self.memo[name] = UNKNOWN  # cycles (loop-carried values) are runtime
        defs = self.definitions(name)
        values = []
        for definition in defs:
            values.append(self.expr(definition))
            if isinstance(values[-1], PayloadVal) and self.memo[name] is UNKNOWN:
                # A loop-carried payload (``items = op(group, items)``): later definitions see this one.
                self.memo[name] = values[-1]
        result: Any = UNKNOWN
        if len(values) == 1:
            result = values[0]
        elif values and all(v is values[0] for v in values):
            result = values[0]
        elif values and any(isinstance(v, (PayloadVal, PayloadTuple, DescVal, GroupVal)) for v in values):
            result = self.merge(name, tuple(values))
        self.memo[name] = result
        return result

    def merge(self, name: str, values: tuple[Any, ...]) -> Any:
        """Several payloads one variable may hold (branches, loops): one payload when they all have one extent (P15;
        docs: concepts, "ThreadData payloads"; their dtypes are unified by the planner), else a merge the planner
        reports."""
        name = self.copied_into(name)
        if all(isinstance(v, PayloadVal) for v in values) and len({v.items_per_thread for v in values}) == 1:
            for other in values[1:]:
                if other is not values[0]:
                    self.merges.append((values[0], other, name))
            return values[0]
        return ("merge", values, name)

    def copied_into(self, name: str) -> str:
        """The user's variable a compiler temporary is copied into (``c = a if f else b`` merges into ``$phi``
        first), for messages; ``name`` itself otherwise."""
        if not name.startswith("$"):
            return name
        for target, definitions in self.func_ir._definitions.items():
            if not target.startswith("$") and any(isinstance(d, nb.ir.Var) and d.name == name for d in definitions):
                return str(target)
        return name

    def expr(self, value: Any) -> Any:
        ir = nb.ir
        if isinstance(value, ir.Var):
            return self.var(value.name)
        if isinstance(value, (ir.Global, ir.FreeVar, ir.Const)):
            code = getattr(getattr(value.value, "py_func", value.value), "__code__", None)
            if code is not None and id(code) in self.local_code:
                return Obj(LocalFunction(getattr(code, "co_qualname", code.co_name)))
            return Obj(value.value)
        if isinstance(value, ir.Arg):
            ty = self.arg_types[value.index]
            if isinstance(ty, nb.types.Literal):
                return Obj(ty.literal_value)
            return ArgRef(value.index, ty)
        if not isinstance(value, ir.Expr):
            return UNKNOWN
        if value.op == "make_function":  # a closure numba left as is (non-constant defaults)
            return Obj(LocalFunction(getattr(value.code, "co_qualname", value.code.co_name)))
        if value.op == "getattr":
            base = self.var(value.value.name)
            if isinstance(base, Obj):
                try:
                    return Obj(getattr(base.value, value.attr))
                except AttributeError:
                    return UNKNOWN
            if isinstance(base, GroupVal):
                return MethodVal(base, value.attr)
            if isinstance(base, PayloadVal) and value.attr == "items_per_thread":
                return Obj(base.items_per_thread)
            if isinstance(base, DescVal) and value.attr in DESCRIPTOR_ATTRIBUTES:
                return Obj(getattr(base.descriptor, value.attr))
            return UNKNOWN
        if value.op == "call":
            return self.on_call(self.stmt_of.get(id(value)))
        if value.op in ("binop", "inplace_binop"):
            fn = _BINOPS.get(value.fn)
            return integer_expression(fn, [self.var(value.lhs.name), self.var(value.rhs.name)]) if fn else UNKNOWN
        if value.op == "unary" and value.fn in _UNARY:
            # A sign on a compile-time number is a compile-time number: -math.inf, -np.inf, -CONST
            # (docs: concepts, "Compile-time values and specialisation").
            inner = self.var(value.value.name)
            if isinstance(inner, Obj) and _is_number(inner.value):
                return Obj(_UNARY[value.fn](inner.value))
            return integer_expression(_UNARY[value.fn], [inner])
        if value.op == "cast":
            return self.var(value.value.name)
        if value.op in ("getitem", "static_getitem"):  # a row of a 2-D shared array: a per-thread payload
            base = self.var(value.value.name)
            if isinstance(base, SharedArrayVal):
                index = value.index if value.op == "static_getitem" else self.var(value.index.name)
                if isinstance(index, tuple) or (isinstance(index, Obj) and isinstance(index.value, tuple)):
                    return UNKNOWN  # rows[r, i] is an element
                if value.op == "getitem" and any(isinstance(d, nb.ir.Expr) and d.op == "build_tuple"
                                                 for d in self.definitions(value.index.name)):
                    return UNKNOWN
                return base.row(self.stmt_of.get(id(value)))
        if value.op in ("exhaust_iter", "static_getitem"):  # unpacking or indexing a multi-payload result
            index = value.index if value.op == "static_getitem" else None
            count = value.count if value.op == "exhaust_iter" else None
            return self._element(self.var(value.value.name), index, count)
        return UNKNOWN

    def _element(self, base: Any, index: Any, count: Any) -> Any:
        """``base`` unpacked (``count``) or indexed (``index``); a merge of tuples gives the merge of elements."""
        if isinstance(base, tuple) and base[0] == "merge" and all(isinstance(v, PayloadTuple) for v in base[1]):
            elements = tuple(self._element(v, index, count) for v in base[1])
            # A variable holding tuples of several calls stays a merge: numba-cuda-mlir 0.6 cannot lower a
            # branch merge of tuples of arrays; the planner asks for unpacking in each branch instead.
            return UNKNOWN if any(e is UNKNOWN for e in elements) else ("merge", elements, base[2], "tuple")
        if not isinstance(base, PayloadTuple):
            return UNKNOWN
        if count is not None:
            return base if count == base.size else UNKNOWN
        if isinstance(index, int) and -base.size <= index < base.size:
            member = base.member(index % base.size)
            return member if member is not None else UNKNOWN  # a scalar is no payload
        return UNKNOWN

    def callee(self, stmt: Any) -> Any:
        return self.var(stmt.value.func.name)


def _kernel_code_objects(func_ir: Any) -> dict[int, Any]:
    """Code objects of functions defined in the kernel body (and inlined helpers), by id.

    Numba replaces ``make_function`` with a global dispatcher of a fresh function sharing the code object; the
    code object also stays behind as a constant, and is nested in the kernel's own code.
    """
    found: dict[int, Any] = {}

    def nested(code: Any) -> None:
        for const in code.co_consts:
            if isinstance(const, type(code)) and id(const) not in found:
                found[id(const)] = const
                nested(const)

    kernel = getattr(getattr(func_ir, "func_id", None), "func", None)
    kernel_code = getattr(kernel, "__code__", None)
    if kernel_code is not None:
        nested(kernel_code)
    for block in func_ir.blocks.values():
        for stmt in block.body:
            if not isinstance(stmt, nb.ir.Assign):
                continue
            value = stmt.value
            code = getattr(value, "code", None) if isinstance(value, nb.ir.Expr) and value.op == "make_function" \
                else getattr(value, "value", None) if isinstance(value, nb.ir.Const) else None
            if code is not None and hasattr(code, "co_code"):
                found[id(code)] = code
                nested(code)
    return found


def _is_int(value: Any) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool)


_UNARY: dict[Any, Callable[[Any], Any]] = {operator.neg: operator.neg, "-": operator.neg,
                                           operator.pos: operator.pos, "+": operator.pos}


def dtype_of_object(value: Any) -> str | None:
    """A NumPy/numba scalar type (or Python int/float) -> dtype name."""
    if value is int:
        return "int32"
    if value is float:
        return "float32"
    if isinstance(value, nb.types.NumberClass):
        value = value.instance_type
    if isinstance(value, nb.types.Type):
        return nb.dtype_name(value) or (str(value) if isinstance(value, nb.types.Number) else None)
    # a structured dtype: an aggregate (docs: qualified, "User-defined aggregates")
    if isinstance(value, np.dtype) and value.fields is not None:
        return nb.record_dtype_name(value)
    if isinstance(value, type) and issubclass(value, np.generic) or isinstance(value, np.dtype):
        # Any NumPy scalar type names a dtype; whether an operation supports it is decided there (P1/P2).
        return nb.dtype_name(np.dtype(value).name) or np.dtype(value).name
    return None
