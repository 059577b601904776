"""What the documentation (docs/ and README.md) says about backends, names and options agrees with the code: the CuTe
DSL backend exists, ``coop.register``'s names are the registry's, ``head_flags`` dtypes follow the contract, each
qualified namespace's options are listed from the records and linked from every operation page, no page calls an
option numba-cuda-mlir's alone when ``cuda.coop.cutlass`` has it, and the error pages and the tutorial reach CuTe
kernels (issue 37, items 8-12)."""
from __future__ import annotations

import importlib
import importlib.util
import inspect
import re
import sys
from pathlib import Path

import pytest

import cuda.coop as coop
from cuda.coop import _backends
from cuda.coop._markers.records import records

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
PAGES = sorted(DOCS.rglob("*.rst"))
OPERATION_PAGES = sorted((DOCS / "operations").glob("*.rst"))
NAMESPACES = {"cuda.coop.numba_mlir": "qualified-options-numba-mlir", "cuda.coop.cutlass": "qualified-options-cutlass"}
TABLE_PAGES = {"cuda.coop.numba_mlir": DOCS / "qualified.rst", "cuda.coop.cutlass": DOCS / "cutlass.rst"}


def _coop_tables():
    sys.path.insert(0, str(DOCS / "_ext"))
    try:
        return importlib.import_module("coop_tables")
    finally:
        sys.path.remove(str(DOCS / "_ext"))


def _prose(text: str) -> str:
    """``text`` without its literal blocks (code blocks, included files, ``::`` blocks), which show code, not claims."""
    kept, block_indent, fenced = [], None, False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):  # README.md's fenced code
            fenced = not fenced
            continue
        if fenced:
            continue
        indent = len(line) - len(line.lstrip())
        if block_indent is not None:
            if not line.strip() or indent > block_indent:
                continue
            block_indent = None
        if re.match(r"\s*\.\. (code-block|code|literalinclude|coop-explorer)::", line) or (
                line.rstrip().endswith("::") and not line.lstrip().startswith("..")):
            block_indent = indent
            if not line.lstrip().startswith(".."):
                kept.append(line)
            continue
        kept.append(line)
    return "\n".join(kept)


def _paragraphs(path: Path) -> list[str]:
    """The paragraphs of ``path``'s prose, whitespace collapsed: each item of a bullet list on its own, after the
    sentence that introduces the list (a paragraph ending in a colon) when there is one."""
    text = _prose(path.read_text(encoding="utf-8"))
    paragraphs: list[str] = []
    for block in re.split(r"\n\s*\n", text):
        items = [" ".join(item.split()) for item in re.split(r"\n(?=\s*[*-] )", block) if item.strip()]
        intro = paragraphs[-1] if paragraphs and paragraphs[-1].endswith(":") else ""
        paragraphs += [f"{intro} {item}" if intro else item for item in items]
    return paragraphs


def _documents() -> list[Path]:
    return [*PAGES, ROOT / "README.md"]


def test_prose_leaves_out_code_blocks():
    text = "Say this.\n\n.. code-block:: python\n\n   numba_coop.f(compare_op=g)\n\nAnd this::\n\n   x = 1\n\nEnd.\n"
    assert _prose(text).split() == ["Say", "this.", "And", "this::", "End."]
    assert _prose("a\n```\nnumba_coop.f()\n```\nb\n").split() == ["a", "b"]


# ------------------------------------------------------------------ item 8: the CuTe backend is not "planned"


def test_no_page_says_the_cute_backend_is_planned():
    found = []
    for path in _documents():
        for paragraph in _paragraphs(path):
            for sentence in re.split(r"(?<=[.;:])\s+", paragraph):
                if re.search(r"cutlass|\bcute\b", sentence, re.I) and re.search(
                        r"\bplanned\b(?! by)|\bfuture\b|\bwill (be )?(add|come|support)|\bnot yet\b", sentence, re.I):
                    found.append(f"{path.relative_to(ROOT)}: {sentence}")
                if re.search(r"\bonly backend\b|\bthe first backend\b", sentence, re.I):
                    found.append(f"{path.relative_to(ROOT)}: {sentence}")
    assert found == []


# ------------------------------------------------------------------ item 9: every backend name


def _builtin_backends() -> list[_backends.Backend]:
    return [b for b in _backends.backends() if b.module.startswith("cuda.coop.")]


def _section(path: Path, start: str, end: str) -> str:
    text = path.read_text(encoding="utf-8")
    begin = text.index(start)
    return text[begin:text.index(end, begin + len(start))]


def test_the_docs_list_every_registered_backend_name():
    backends = _builtin_backends()
    assert {b.module for b in backends} == {"cuda.coop.numba_mlir", "cuda.coop.cutlass"}
    names = [name for b in backends for name in b.names]
    assert len(names) >= 6
    register_row = _section(DOCS / "errors.rst", "   * - R2, R3", "   * - R4")
    activation = _section(DOCS / "install.rst", ".. _registration:", "Registration cannot be undone")
    for where, text in (("errors.rst R2/R3", register_row), ("install.rst registration", activation)):
        missing = [name for name in names if f'``"{name}"``' not in text]
        assert missing == [], (where, missing)


# ------------------------------------------------------------------ item 10: head_flags dtypes


def test_head_flags_are_integer_payloads_or_boolean_scalars():
    scan = " ".join((DOCS / "operations" / "scan.rst").read_text(encoding="utf-8").split())
    assert "integer or boolean payload" not in scan
    flags = scan[scan.index("``head_flags=flags`` makes the scan segmented"):]
    flags = flags[:flags.index("Exclusive forms")]
    for words in ("integer payload", "integer or boolean scalar", "Boolean payloads"):
        assert words in flags, words
    dtypes = " ".join(_section(DOCS / "operations" / "index.rst", "Dtypes\n------", "Each page's").split())
    assert "``bool``" in dtypes and "boolean scalar" in dtypes and "integer payloads" in dtypes


# ------------------------------------------------------------------ item 11: the qualified options, per namespace


def _namespace(name: str):
    if name.endswith("cutlass") and importlib.util.find_spec("cutlass") is None:
        pytest.skip("nvidia-cutlass-dsl is not installed")
    if name.endswith("numba_mlir") and importlib.util.find_spec("numba_cuda_mlir") is None:
        pytest.skip("numba-cuda-mlir is not installed")
    return importlib.import_module(name)


def _table_rows(lines: list[str]) -> dict[str, list[str]]:
    """Operation name -> its row's cells (after the first), from a list-table's lines."""
    rows: dict[str, list[str]] = {}
    text = "\n".join(lines[:lines.index("", 4)] if "" in lines[4:] else lines)  # the table, not the text after it
    for row in re.findall(r"^   \* - (.*?)(?=^   \* - |\Z)", text, re.M | re.S):
        cells = [c.strip() for c in re.split(r"^     - ", row, flags=re.M)]
        for name in re.findall(r"``(\w+)``", cells[0]):
            rows[name] = cells[1:]
    return rows


@pytest.mark.parametrize("name", list(NAMESPACES))
def test_the_qualified_options_table_is_what_the_namespace_builds(name):
    namespace = _namespace(name)
    lines = _coop_tables().qualified_options_table(name)
    rows = _table_rows(lines)
    for op in records():
        added = set(inspect.signature(getattr(namespace, op.name)).parameters) - set(
            inspect.signature(getattr(coop, op.name)).parameters)
        if not added and not op.extends.scalar_form:
            assert op.name not in rows and f"``{op.name}``" in lines[-1] + " ".join(lines), op.name
            continue
        options, operands, scalar = rows[op.name]
        assert set(re.findall(r"``(\w+)=``", options)) | set(re.findall(r"``(\w+)``", operands)) == added, op.name
        assert scalar == ("yes" if op.extends.scalar_form else "no"), op.name
    lacks = importlib.import_module(f"{name}._about").LACKS
    assert _coop_tables().backend_lacks(name) == lacks
    for op in records():
        for unbuilt in op.extends.unbuilt(lacks):
            assert f"``{unbuilt}`` of" in lines[-1] and "R9" in lines[-1], (op.name, unbuilt)


def test_the_tables_read_lacks_without_the_compiler(monkeypatch):
    tables = _coop_tables()
    real = importlib.import_module

    def without_backends(module: str, *args):
        if module.endswith("._about"):
            raise ImportError(module)
        return real(module, *args)

    expected = {name: tables.backend_lacks(name) for name in NAMESPACES}
    monkeypatch.setattr(tables.importlib, "import_module", without_backends)
    assert {name: tables.backend_lacks(name) for name in NAMESPACES} == expected


def test_each_namespace_page_holds_its_table_and_each_operation_page_links_both():
    for name, label in NAMESPACES.items():
        text = TABLE_PAGES[name].read_text(encoding="utf-8")
        assert re.search(rf"^\.\. _{label}:\n\n.+\n-+\n", text, re.M), (name, label)
        assert text.count(f".. coop-qualified-options:: {name}\n") == 1, name
        assert text.index(f".. _{label}:") < text.index(f".. coop-qualified-options:: {name}")
    documented = set()
    for page in OPERATION_PAGES:
        text = page.read_text(encoding="utf-8")
        ops = {op.name for op in records() if f":func:`cuda.coop.{op.name}`" in text}
        if not ops:
            continue
        documented |= ops
        for label in NAMESPACES.values():
            assert f"<{label}>`" in text, (page.name, label)
    assert documented == {op.name for op in records()}


def _cutlass_options() -> dict[str, dict[str, str]]:
    """Per operation, the extension names ``cuda.coop.cutlass`` builds (its records less its LACKS), each with the
    pattern that names it in prose, plus float keys for radix sort (a qualified dtype of both namespaces:
    ``examples/cute_sort_tiles.py`` builds it)."""
    lacks = _coop_tables().backend_lacks("cuda.coop.cutlass")
    built = {op.name: {name: rf"`{{1,2}}{name}\b" for name in op.extends.options + op.extends.operands
                       if name not in op.extends.unbuilt(lacks)} for op in records()}
    for name in ("radix_sort_keys", "radix_sort_pairs"):
        built[name]["float keys"] = r"\bfloat(32|64)?\b[`/\w ]{0,24}\bkeys\b"
    return built


NUMBA_ONLY = re.compile(r"``numba_coop\.\w+``|`cuda\.coop\.numba_mlir`|\bthe qualified namespace\b(?! of)|"
                        r"\bnumba-cuda-mlir only\b", re.I)
BOTH = re.compile(r"cute_coop|cuda\.coop\.cutlass|qualified namespaces|both backends|either backend", re.I)


def _numba_only_claims(path: Path) -> list[str]:
    claims = []
    built = _cutlass_options()
    page = path.read_text(encoding="utf-8")
    own = {op for op in built if f":func:`cuda.coop.{op}`" in page}  # an operation page speaks of its operations
    for paragraph in _paragraphs(path):
        if not NUMBA_ONLY.search(paragraph) or BOTH.search(paragraph):
            continue
        said = sorted({name for op, names in built.items()
                       if op in own or re.search(rf"\b{op}\b|{op.split('_')[0]}", paragraph)
                       for name, pattern in names.items() if re.search(pattern, paragraph)})
        if said:
            claims.append(f"{path.relative_to(ROOT)}: {said}: {paragraph[:200]}")
    return claims


def test_the_numba_only_check_catches_the_old_wording(tmp_path):
    page = tmp_path / "merge_sort.rst"
    page.write_text("``numba_coop.merge_sort_keys`` accepts ``compare_op=f``.\n\n"
                    "The qualified namespace adds ``float32`` keys to ``radix_sort_keys``.\n\n"
                    "* Dtypes: ``float32`` (``cuda.coop.numba_mlir`` adds ``float16``), not in ``radix_rank``.\n\n"
                    "``cute_coop.merge_sort_keys`` and ``numba_coop.merge_sort_keys`` accept ``compare_op``.\n")
    global ROOT
    saved, ROOT = ROOT, tmp_path
    try:
        assert len(_numba_only_claims(page)) == 2
    finally:
        ROOT = saved


def test_no_page_calls_an_option_numba_only_that_the_cutlass_namespace_builds():
    claims = [claim for path in _documents() for claim in _numba_only_claims(path)]
    assert claims == []


# ------------------------------------------------------------------ item 12: traps, CuTe kernels, the tutorial


def test_the_device_traps_list_every_runtime_control_the_operation_pages_say_traps():
    traps = " ".join(_section(DOCS / "errors.rst", "Device traps\n", "The catalogue\n").split())
    assert "``argmax``/``argmin``" in traps and "@cute.kernel" in traps
    argreduce = " ".join((DOCS / "operations" / "argreduce.rst").read_text(encoding="utf-8").split())
    assert "valid_items=n" in argreduce and "a runtime one traps" in argreduce


def test_the_error_pages_and_the_tutorial_reach_cute_kernels():
    errors = (DOCS / "errors.rst").read_text(encoding="utf-8")
    intro = errors[:errors.index("Reading a message")]
    assert "@cute.kernel" in intro and "cuda.coop.cutlass" in intro
    r1 = " ".join(_section(DOCS / "errors.rst", "   * - R1\n", "   * - R2").split())
    assert "@cuda.jit" in r1 and "@cute.kernel" in r1
    tutorial = (DOCS / "tutorial.rst").read_text(encoding="utf-8")
    where_next = tutorial[tutorial.index("Where next\n"):]
    assert ":doc:`cutlass`" in where_next
    assert "@cute.kernel" in tutorial[:tutorial.index("1. Imports")]


def test_the_cutlass_page_lists_each_cute_example():
    page = (DOCS / "cutlass.rst").read_text(encoding="utf-8")
    examples = sorted(path.name for path in (ROOT / "examples").glob("cute_*.py"))
    assert len(examples) >= 4
    for name in examples:
        assert f"``examples/{name}``" in page, name


def test_each_catalogue_id_names_one_row_of_the_errors_page():
    """An ID is one mistake: the catalogue on docs/errors.rst gives each ID (or range, "R4-R6") one row, with no
    qualified duplicate ("P18 (tuples)" beside "P18" was two mistakes under one ID)."""
    page = (DOCS / "errors.rst").read_text(encoding="utf-8")
    rows = re.findall(r"^   \* - ([A-Z]\d+\S*(?:[ ,]+[A-Z]?\d+\S*)*)(.*)$", page, re.MULTILINE)
    assert len(rows) > 80
    assert not [label + rest for label, rest in rows if rest.strip()], "an ID row with a qualifier after it"
    ids = [part for label, _ in rows for part in re.split(r"[ ,]+", label) if part]
    assert len(ids) == len(set(ids)), sorted({i for i in ids if ids.count(i) > 1})
