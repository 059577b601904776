"""Typed stubs (``.pyi``) of the public namespaces, rendered from the live marker objects.

``cuda.coop`` and every backend namespace that this package ships (read from the registry in ``_backends.py``)
get an ``__init__.pyi`` beside their ``__init__.py``: each public name with its signature (``inspect``), its
defaults and the first paragraph of its docstring. Selector options (``algorithm=``, ``mode=``, ...) are typed
with ``Literal`` choices taken from the semantics layer, which is where they are checked; a qualified namespace
adds its extra choices.

``python -m cuda.coop._stubs --write`` writes the stubs; ``--check`` prints a unified diff and exits 1 when a
stub on disk differs from what the markers give now (``tests/unit/test_stubs.py`` runs the same comparison).
The output is deterministic: names sorted within sections, one layout, lines within 120 characters.
"""
from __future__ import annotations

import argparse
import ast
import builtins
import dataclasses
import difflib
import importlib
import inspect
import sys
import textwrap
import types
from pathlib import Path
from typing import Any, Sequence

from . import _backends
from ._backend_context import COMMON_NAMESPACE
from ._markers.base import QUALIFIED_ATTR, op_name
from ._markers.records import record, records
from ._markers.load_store import LOAD_ALGORITHMS
from ._semantics import adjacent, histogram, reduce, scan
from ._semantics.exchange_shuffle import EXCHANGE_MODES, QUALIFIED_EXCHANGE_MODES, SCALAR_SHUFFLE_MODES, SHUFFLE_MODES
from ._semantics.groups import QUERY_LEVELS
from ._semantics.layouts import REDUCE_BATCHED_LAYOUTS

PACKAGE_DIR = Path(__file__).resolve().parent
LINE_LENGTH = 120
WRITE_COMMAND = "python -m cuda.coop._stubs --write"

#: Selector vocabularies, typed as ``Literal`` in the stubs: alias -> (choices in every namespace, choices a qualified
#: namespace adds). Canonical spellings only: matching at run time also ignores case and treats ``-`` as ``_`` (docs:
#: operations/index, "Rules every operation shares"). An operation's record names the vocabulary of each of its
#: selector parameters (``Operation.selectors``); the marker must declare the parameter as ``str`` (or
#: ``str | None``), and a stale name stops the generator.
VOCABULARIES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "_LoadStoreAlgorithm": (LOAD_ALGORITHMS, ()),
    "_ExchangeMode": (EXCHANGE_MODES, QUALIFIED_EXCHANGE_MODES),
    "_ShuffleMode": (SHUFFLE_MODES, SCALAR_SHUFFLE_MODES),
    "_ReduceAlgorithm": (reduce.ALGORITHMS, ()),
    "_BatchedLayout": (REDUCE_BATCHED_LAYOUTS, ()),
    "_ScanMode": (scan.MODES, ()),
    "_ScanAlgorithm": (scan.ALGORITHMS, ()),
    "_AdjacentDirection": (adjacent.DIRECTIONS, ()),
    "_DiscontinuityMode": (adjacent.MODES, ()),
    "_HistogramAlgorithm": (histogram.ALGORITHMS, ()),
    "_Sharing": (("shared", "exclusive"), ()),
    "_QueryLevel": (QUERY_LEVELS + ("gpu_thread",), ()),
}

#: The selector parameters of the classes' methods: (``Class.method``, parameter) -> vocabulary.
METHOD_SELECTORS: dict[tuple[str, str], str] = {
    ("TempStorage.__new__", "sharing"): "_Sharing",
    **{(f"ThreadGroup.{method}", "level"): "_QueryLevel" for method in ("rank", "count", "rank_as", "count_as")},
}


def selectors() -> dict[tuple[str, str], str]:
    """Every selector parameter: (operation or ``Class.method``, parameter) -> its vocabulary."""
    return {**{(op.name, param): alias for op in records() for param, alias in op.selectors}, **METHOD_SELECTORS}


#: A qualified operation also takes local arrays, shared rows and scalars where the common one takes a ThreadData
#: (docs: qualified, "Payload forms"), so its ``ThreadData`` parameters read ``ThreadData | Any``.
_PAYLOAD = "ThreadData"

_TYPING = ("Any", "Callable", "Iterable", "Iterator", "Literal", "Mapping", "Protocol", "Sequence", "TypeAlias",
           "runtime_checkable")
_DUNDERS = ("__new__", "__init__", "__call__", "__len__", "__getitem__", "__setitem__", "__iter__", "__enter__",
            "__exit__")


#: Builtin generics written bare in a marker (``dict``): the stub gives them ``Any`` parameters (strict checkers
#: reject a bare generic).
_GENERICS = {"dict": 2, "frozenset": 1, "list": 1, "set": 1, "type": 1}


class _Parametrise(ast.NodeTransformer):
    def visit_Subscript(self, node: ast.Subscript) -> ast.AST:
        node.slice = self.visit(node.slice)  # the subscripted name itself already has its parameters
        return node

    def visit_Name(self, node: ast.Name) -> ast.AST:
        count = _GENERICS.get(node.id)
        if count is None:
            return node
        args: list[ast.expr] = [ast.Name("Any", ast.Load()) for _ in range(count)]
        return ast.Subscript(node, args[0] if count == 1 else ast.Tuple(args, ast.Load()), ast.Load())


class StubError(RuntimeError):
    """The markers cannot be rendered as they are (a stale table entry, a line that cannot be wrapped)."""


# ------------------------------------------------------------------ namespaces and files


def namespaces() -> list[str]:
    """``cuda.coop`` and the registered backend namespaces whose source lives in this package, sorted."""
    found = []
    for backend in _backends.backends():
        module = backend.module
        if not module.startswith(COMMON_NAMESPACE + "."):
            continue
        relative = PACKAGE_DIR.joinpath(*module.split(".")[2:])
        if (relative / "__init__.py").is_file() or relative.with_suffix(".py").is_file():
            found.append(module)
    return [COMMON_NAMESPACE, *sorted(set(found))]


def stub_path(namespace: str) -> Path:
    relative = PACKAGE_DIR.joinpath(*namespace.split(".")[2:])
    if namespace == COMMON_NAMESPACE or (relative / "__init__.py").is_file():
        return relative / "__init__.pyi"
    return relative.with_suffix(".pyi")


# ------------------------------------------------------------------ text helpers


def _summary(obj: object) -> str:
    """The first paragraph of ``obj``'s own docstring, on one line ('' without one)."""
    doc = obj.__dict__.get("__doc__") if isinstance(obj, type) else getattr(obj, "__doc__", None)
    if not isinstance(doc, str) or not doc.strip():
        return ""
    paragraph = inspect.cleandoc(doc).split("\n\n")[0]
    return " ".join(line.strip() for line in paragraph.splitlines())


def _escape(text: str) -> str:
    """``text`` safe inside a triple-quoted string."""
    body = text.replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
    backslashes = len(body[:-1]) - len(body[:-1].rstrip("\\"))
    if body.endswith('"') and backslashes % 2 == 0:  # a bare final quote would run into the closing ones
        body = body[:-1] + '\\"'
    return body


def _docstring(text: str, indent: str) -> list[str]:
    body = _escape(text)
    line = f'{indent}"""{body}"""'
    if len(line) <= LINE_LENGTH:
        return [line]
    lines = textwrap.wrap(body, width=LINE_LENGTH, initial_indent=indent + '"""', subsequent_indent=indent,
                          break_long_words=False, break_on_hyphens=False)
    return [*lines, indent + '"""']


def _string(value: str) -> str:
    return f'"{value}"' if '"' not in value and "\\" not in value and value.isprintable() else repr(value)


def _default(value: object) -> str:
    if value is None or isinstance(value, (bool, int, float)):
        return repr(value)
    if isinstance(value, str):
        return _string(value)
    return "..."


def _literal(alias: str, choices: Sequence[str]) -> list[str]:
    line = f"{alias}: TypeAlias = Literal[{', '.join(_string(c) for c in choices)}]"
    if len(line) <= LINE_LENGTH:
        return [line]
    return [f"{alias}: TypeAlias = Literal[", *(f"    {_string(c)}," for c in choices), "]"]


# ------------------------------------------------------------------ one stub


class _Stub:
    """The state of one namespace's rendering: the names it declares and the imports its annotations need."""

    def __init__(self, namespace: str, module: types.ModuleType, common: types.ModuleType) -> None:
        self.namespace = namespace
        self.module = module
        self.common = common
        self.exports = list(getattr(module, "__all__", [n for n in dir(module) if not n.startswith("_")]))
        self.declared: set[str] = set(self.exports)
        self.typing: set[str] = set()
        self.common_imports: set[str] = set()
        self.dataclass = False
        self.aliases: dict[str, tuple[str, ...]] = {}

    # ---------------------------------------------------------------- annotations

    def annotation(self, raw: object, *, widen: bool = False) -> str:
        """An annotation as stub text: names resolved (imported from typing or the common namespace); ``Any``
        for what the stub cannot name."""
        if raw is inspect.Parameter.empty:
            return self.name("Any")
        if isinstance(raw, type):
            raw = raw.__name__ if raw.__module__ == "builtins" or raw.__name__ in self.declared else "Any"
        if not isinstance(raw, str):
            return self.name("Any")
        node = ast.parse(raw, mode="eval").body
        while isinstance(node, ast.Constant) and isinstance(node.value, str):  # a quoted forward reference
            node = ast.parse(node.value, mode="eval").body
        names = [n.id for n in ast.walk(node) if isinstance(n, ast.Name)]
        if any(isinstance(n, ast.Attribute) for n in ast.walk(node)) or not all(map(self.resolvable, names)):
            return self.name("Any")
        for name in names:
            self.name(name)
        if any(n in _GENERICS for n in names):
            node = _Parametrise().visit(node)
            self.name("Any")
        text = ast.unparse(node)
        if widen and text == _PAYLOAD:
            text = f"{_PAYLOAD} | {self.name('Any')}"
        return text

    def resolvable(self, name: str) -> bool:
        importable = self.module is not self.common and isinstance(getattr(self.common, name, None), type)
        return name in self.declared or name in _TYPING or hasattr(builtins, name) or importable

    def name(self, name: str) -> str:
        """Use ``name`` in the stub, importing it when it is not declared there."""
        if name in self.declared:
            return name
        if name in _TYPING:
            self.typing.add(name)
        elif not hasattr(builtins, name):
            self.common_imports.add(name)
        return name

    # ---------------------------------------------------------------- functions

    def function(self, fn: Any, name: str, indent: str = "", *, decorators: Sequence[str] = (),
                 owner: str | None = None, qualified: bool = False, method: bool = False) -> list[str]:
        """``def name(...)`` of ``fn``'s signature; ``owner`` (the operation, or ``Class.method``) keys the
        selector vocabularies and the qualified return annotation; ``qualified``: a qualified namespace's marker."""
        sig = inspect.signature(fn)
        params = list(sig.parameters.values())
        rendered: list[str] = []
        star = False
        for index, param in enumerate(params):
            if param.kind == param.KEYWORD_ONLY and not star:
                rendered.append("*")
                star = True
            text = param.name
            if method and index == 0 and param.annotation is param.empty:
                pass  # self / cls
            else:
                ann = self.selector(owner, param, qualified)
                ann = ann or self.annotation(param.annotation, widen=qualified and param.kind != param.VAR_KEYWORD)
                text += f": {ann}"
            if param.default is not param.empty:
                text += f" = {_default(param.default)}"
            if param.kind == param.VAR_POSITIONAL:
                text, star = "*" + text, True
            elif param.kind == param.VAR_KEYWORD:
                text = "**" + text
            rendered.append(text)
            if param.kind == param.POSITIONAL_ONLY and (index + 1 == len(params)
                                                         or params[index + 1].kind != param.POSITIONAL_ONLY):
                rendered.append("/")
        declared = record(owner) if owner else None
        if qualified and declared is not None and declared.extends.returns:
            returns = declared.extends.returns
            for part in ast.walk(ast.parse(returns, mode="eval")):
                if isinstance(part, ast.Name):
                    self.name(part.id)
        elif sig.return_annotation is sig.empty and name in ("__init__", "__exit__", "__setitem__"):
            returns = "None"
        else:
            returns = self.annotation(sig.return_annotation)
        summary = _summary(fn)
        head = f"{indent}def {name}({', '.join(rendered)}) -> {returns}:"
        if len(head) > LINE_LENGTH or (not summary and len(head) + 4 > LINE_LENGTH):
            head = "\n".join([f"{indent}def {name}(", *(f"{indent}    {p}," for p in rendered),
                              f"{indent}) -> {returns}:"])
        lines = [*(f"{indent}@{d}" for d in decorators)]
        if summary:
            return [*lines, head, *_docstring(summary, indent + "    ")]
        return [*lines, head + " ..."]

    def selector(self, owner: str | None, param: inspect.Parameter, qualified: bool) -> str | None:
        alias = selectors().get((owner, param.name)) if owner else None
        if alias is None:
            return None
        choices, extra = VOCABULARIES[alias]
        if qualified and extra:
            alias, choices = "_Qualified" + alias[1:], choices + extra
        self.aliases[alias] = choices
        self.typing.update(("Literal", "TypeAlias"))
        return alias + (" | None" if param.annotation == "str | None" else "")

    # ---------------------------------------------------------------- classes

    def klass(self, cls: type, name: str) -> list[str]:
        bases = []
        for base in cls.__bases__:
            if base is object or base.__name__ == "Generic":
                continue
            if getattr(base, "_is_protocol", False) and base.__module__ == "typing":
                bases.append(self.name("Protocol"))
            elif base.__module__ == "builtins" or base.__name__ in self.declared:
                bases.append(base.__name__)
            else:
                raise StubError(f"{self.namespace}.{name}: base class {base.__module__}.{base.__qualname__} is "
                                "neither a builtin nor declared in the stub")
        lines = []
        is_dataclass = dataclasses.is_dataclass(cls)
        if is_dataclass:
            self.dataclass = True
            frozen = cls.__dataclass_params__.frozen  # type: ignore[attr-defined]
            lines.append("@dataclass(frozen=True)" if frozen else "@dataclass")
        if "_is_runtime_protocol" in cls.__dict__ and cls.__dict__["_is_runtime_protocol"]:
            lines.append("@" + self.name("runtime_checkable"))
        lines.append(f"class {name}({', '.join(bases)}):" if bases else f"class {name}:")
        body: list[str] = []
        summary = _summary(cls)
        if summary:
            body += _docstring(summary, "    ")
        fields = {f.name: f for f in dataclasses.fields(cls)} if is_dataclass else {}
        attributes = []
        for attr, raw in cls.__dict__.get("__annotations__", {}).items():
            if attr.startswith("_"):
                continue
            text = f"    {attr}: {self.annotation(raw)}"
            field = fields.get(attr)
            if field is not None and (field.default is not dataclasses.MISSING
                                      or field.default_factory is not dataclasses.MISSING):
                text += " = ..." if field.default is dataclasses.MISSING else f" = {_default(field.default)}"
            attributes.append(text)
        if attributes:
            body += ([""] if body else []) + attributes
        for attr, value in cls.__dict__.items():
            if attr.startswith("_") and attr not in _DUNDERS or (is_dataclass and attr == "__init__"):
                continue
            decorators: list[str] = []
            if isinstance(value, staticmethod):
                value, decorators = value.__func__, ([] if attr == "__new__" else ["staticmethod"])
            elif isinstance(value, classmethod):
                value, decorators = value.__func__, ["classmethod"]
            elif isinstance(value, property):
                value, decorators = value.fget, ["property"]
            if not inspect.isfunction(value) or not value.__qualname__.startswith(cls.__qualname__ + "."):
                continue  # inherited machinery (a Protocol's __init__), not a declared member
            owner = f"{cls.__name__}.{attr}"
            body += [""] + self.function(value, attr, "    ", decorators=decorators, owner=owner,
                                         method="staticmethod" not in decorators)
        return lines + (body or ["    ..."])

    def namespace_object(self, module: types.ModuleType, name: str) -> list[str]:
        """A module-valued export (``local``, ``shared``) as a class of static methods and a variable."""
        cls = "_" + "".join(part.title() for part in name.split("_")) + "Namespace"
        self.declared.add(cls)
        lines = [f"class {cls}:"]
        body = _docstring(_summary(module), "    ") if _summary(module) else []
        for attr in sorted(vars(module)):
            value = vars(module)[attr]
            if attr.startswith("_") or not inspect.isroutine(value) or inspect.isclass(value):
                continue
            body += ([""] if body else []) + self.function(value, attr, "    ", decorators=["staticmethod"])
        return [*lines, *(body or ["    ..."]), "", "", f"{name}: {cls}"]

    # ---------------------------------------------------------------- the file

    def render(self) -> str:
        backend = self.namespace != COMMON_NAMESPACE
        reexports: list[str] = []
        values: list[str] = []
        classes: list[str] = []
        errors: list[str] = []
        functions: list[str] = []
        modules: list[str] = []
        for name in sorted(self.exports):
            obj = getattr(self.module, name)
            shared = backend and getattr(self.common, name, None) is obj
            if shared and (inspect.isclass(obj) or inspect.isroutine(obj)):
                reexports.append(name)
            elif inspect.ismodule(obj):
                modules.append(name)
            elif inspect.isclass(obj):
                (errors if issubclass(obj, BaseException) else classes).append(name)
            elif inspect.isroutine(obj):
                functions.append(name)
            else:
                values.append(name)
        sections: list[list[str]] = []
        sections += [[f"{n}: {self.value_type(getattr(self.module, n))}"] for n in values]
        sections += [self.klass(getattr(self.module, n), n) for n in _bases_first(self.module, classes + errors)]
        for name in functions:
            fn = getattr(self.module, name)
            qualified = bool(getattr(fn, QUALIFIED_ATTR, False))
            sections.append(self.function(fn, name, owner=op_name(fn) or name, qualified=qualified))
        sections += [self.namespace_object(getattr(self.module, n), n) for n in modules]

        self.common_imports -= self.declared
        out = ['"""' + _escape(_summary(self.module) or self.namespace),
               "",
               f"Type stubs generated from the live markers by ``{WRITE_COMMAND}``; do not edit by hand.",
               '"""']
        imports = []
        standard = ["from dataclasses import dataclass"] if self.dataclass else []
        if self.typing:
            standard += self.import_line("typing", sorted(self.typing, key=lambda n: (n[0].islower(), n)))
        if standard:
            imports.append(standard)
        if reexports or self.common_imports:
            names = [f"{n} as {n}" for n in reexports] + sorted(self.common_imports)
            imports.append(self.import_line(COMMON_NAMESPACE, sorted(names, key=lambda n: n.split()[0])))
        for block in imports:
            out += ["", *block]
        out += ["", "__all__ = ["] + [f"    {_string(n)}," for n in sorted(self.exports)] + ["]"]
        if self.aliases:
            out.append("")
            for alias in sorted(self.aliases):
                out += _literal(alias, self.aliases[alias])
        for section in sections:
            out += ["", "", *section]
        text = "\n".join(out) + "\n"
        long = [n for n, line in enumerate(text.splitlines(), 1) if len(line) > LINE_LENGTH]
        if long:
            raise StubError(f"the {self.namespace} stub has lines over {LINE_LENGTH} characters: {long}")
        ast.parse(text)
        return text

    def value_type(self, value: object) -> str:
        kind = type(value)
        return kind.__name__ if kind.__module__ == "builtins" and value is not None else self.name("Any")

    @staticmethod
    def import_line(module: str, names: Sequence[str]) -> list[str]:
        line = f"from {module} import {', '.join(names)}"
        if len(line) <= LINE_LENGTH:
            return [line]
        return [f"from {module} import (", *(f"    {n}," for n in names), ")"]


def _bases_first(module: types.ModuleType, names: list[str]) -> list[str]:
    """``names`` (sorted) with each class moved after the classes of ``names`` it derives from."""
    ordered: list[str] = []

    def add(name: str) -> None:
        if name in ordered:
            return
        for base in getattr(module, name).__mro__[1:]:
            if base.__name__ in names and getattr(module, base.__name__) is base:
                add(base.__name__)
        ordered.append(name)

    for name in names:
        add(name)
    return ordered


def check_selectors(common: types.ModuleType) -> None:
    """Every selector names a parameter its owner declares as a string, and a vocabulary the stubs know (a stale
    record or table fails here)."""
    for (owner, param), alias in selectors().items():
        if alias not in VOCABULARIES:
            raise StubError(f"{owner}({param}=...) names the vocabulary {alias}, which VOCABULARIES does not have")
        target: Any = common
        for part in owner.split("."):
            target = getattr(target, part, None)
        if target is None:
            raise StubError(f"a selector names {owner!r}, which {COMMON_NAMESPACE} does not have")
        target = getattr(target, "__func__", target)
        declared = inspect.signature(target).parameters.get(param)
        if declared is None or declared.annotation not in ("str", "str | None"):
            raise StubError(f"a selector names {owner}({param}=...), which is not a string parameter")


def render(namespace: str) -> str:
    """The ``.pyi`` text of ``namespace`` (imported here; a backend namespace needs its compiler installed)."""
    common = importlib.import_module(COMMON_NAMESPACE)
    check_selectors(common)
    return _Stub(namespace, importlib.import_module(namespace), common).render()


# ------------------------------------------------------------------ command line


def _relative(path: Path) -> str:
    """``path`` as messages show it: from the source root (``cuda/coop/__init__.pyi``) when it is below it."""
    root = PACKAGE_DIR.parents[1]
    return path.relative_to(root).as_posix() if path.is_relative_to(root) else str(path)


def diff(namespace: str) -> str:
    """A unified diff from the stub on disk to the generated one ('' when they agree)."""
    path = stub_path(namespace)
    current = path.read_text(encoding="utf-8") if path.is_file() else ""
    fresh = render(namespace)
    return "".join(difflib.unified_diff(current.splitlines(keepends=True), fresh.splitlines(keepends=True),
                                        fromfile=f"{_relative(path)} (on disk)",
                                        tofile=f"{_relative(path)} (generated)"))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m cuda.coop._stubs", description=__doc__.splitlines()[0])
    action = parser.add_mutually_exclusive_group(required=True)
    action.add_argument("--write", action="store_true", help="write the stubs of every namespace")
    action.add_argument("--check", action="store_true",
                        help="print a unified diff and exit 1 when a stub on disk is not current")
    args = parser.parse_args(argv)
    stale = 0
    for namespace in namespaces():
        try:
            if args.write:
                path = stub_path(namespace)
                text = render(namespace)
                if not path.is_file() or path.read_text(encoding="utf-8") != text:
                    path.write_text(text, encoding="utf-8", newline="\n")
                    print(f"wrote {_relative(path)}")
                continue
            changes = diff(namespace)
        except ImportError as exc:
            print(f"cannot import {namespace} to render its stub: {exc}", file=sys.stderr)
            return 2
        if changes:
            stale += 1
            sys.stdout.write(changes)
    if stale:
        print(f"\n{stale} stub(s) are not current: run `{WRITE_COMMAND}`", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
