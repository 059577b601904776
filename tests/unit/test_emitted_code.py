"""Emitters print instantiations and calls only (issue 41): barriers, loops and algorithms live in the headers of
src/cuda/coop/_cub/include/cuda_coop, whose contents are part of the cache key (``toolchain.code_digest``)."""
from __future__ import annotations

import ast
import re
from pathlib import Path

from cuda.coop._cub import toolchain

CUB = Path(toolchain.__file__).resolve().parent
# A barrier, a loop of C++ or inline PTX: what a Python string of the emitters must not hold.
DEVICE_CODE = re.compile(r"__syncthreads|__syncwarp|bar(?:rier)?\.(?:sync|cluster)|\bfor \(|\bwhile \(|\bdo \{"
                         r"|\basm\s*(?:volatile\s*)?\(")


def _strings(tree: ast.AST) -> list[str]:
    """The module's string constants (f-strings' literal parts too), docstrings left out."""
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                  and node.body and isinstance(node.body[0], ast.Expr)
                  and isinstance(node.body[0].value, ast.Constant)}
    return [node.value for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings]


def _offenders() -> dict[str, list[str]]:
    found = {}
    for path in sorted(CUB.rglob("*.py")):
        hits = [s for s in _strings(ast.parse(path.read_text())) if DEVICE_CODE.search(s)]
        if hits:
            found[path.relative_to(CUB).as_posix()] = hits
    return found


def test_emitters_hold_no_barrier_and_no_loop():
    offenders = _offenders()
    assert not offenders, offenders


def test_the_pattern_sees_device_code():
    assert DEVICE_CODE.search("  __syncthreads();") and DEVICE_CODE.search("for (int i = 0; i < 4; ++i)")
    assert DEVICE_CODE.search('asm("mov.u32 %0, %%cluster_ctarank;" : "=r"(cta));')
    assert not DEVICE_CODE.search("cuda_coop::BlockReverseScan<int, 128, 1, 1>")


def test_header_contents_are_in_the_code_digest(tmp_path):
    assert ".cuh" in toolchain.CODE_SUFFIXES
    assert toolchain.OWN_INCLUDE.parent == CUB and any(toolchain.OWN_INCLUDE.rglob("*.cuh"))
    header = tmp_path / "include" / "cuda_coop" / "a.cuh"
    header.parent.mkdir(parents=True)
    header.write_text("#pragma once\n")
    digest = toolchain.tree_digest(tmp_path, suffixes=toolchain.CODE_SUFFIXES)
    header.write_text("#pragma twice\n")  # same size, other content
    assert toolchain.tree_digest(tmp_path, suffixes=toolchain.CODE_SUFFIXES) != digest


# A warp shuffle (or a helper that shuffles, named Mirror/Shuffle*) after the '?' of a conditional expression: the
# lanes that take the other side skip it, and the lanes that run it read lanes that did not (undefined values).
SHUFFLE_UNDER_CONDITION = re.compile(r"\?[^;:]*\b(?:cub::Shuffle\w*|Mirror|__shfl\w*)\s*(?:<[^>]*>)?\(|"
                                     r"\?[^;]*:[^;]*\b(?:cub::Shuffle\w*|Mirror|__shfl\w*)\s*(?:<[^>]*>)?\(")


def test_headers_shuffle_in_every_lane():
    """Every shuffle of our headers runs in all the lanes it names: none sits on one side of a ``?:``."""
    offenders = [f"{path.relative_to(CUB).as_posix()}:{number}: {line.strip()}"
                 for path in sorted((CUB / "include").rglob("*.cuh"))
                 for number, line in enumerate(path.read_text().splitlines(), 1)
                 if SHUFFLE_UNDER_CONDITION.search(line.split("//")[0])]
    assert not offenders, offenders


def test_the_shuffle_check_catches_a_conditional_shuffle():
    assert SHUFFLE_UNDER_CONDITION.search("out = tail ? initial_value : op(Mirror(r).v, initial_value);")
    assert SHUFFLE_UNDER_CONDITION.search("x = c ? cub::ShuffleIndex<32>(v, 0, mask) : v;")
    assert not SHUFFLE_UNDER_CONDITION.search("const int n = cub::ShuffleDown<W>(head != 0 ? 1 : 0, 1, W - 1, mask);")
