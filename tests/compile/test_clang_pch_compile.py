"""The bitcode route's precompiled headers (``_cub/clang_pch.py``): made at a block's second compile in a process and
used by later TUs of that block, the same code as without one, and never the cause of a result or an error."""
from __future__ import annotations

import re

import pytest

from cuda import coop
from cuda.coop._cub import bitcode, clang_pch

BLOCK = "#include <cub/warp/warp_reduce.cuh>\n#include <cuda_coop/util_group.cuh>\n"


def _tu(n: int, body: str = "") -> str:
    return (f'{BLOCK}extern "C" __device__ int tu_{n}(int x) {{\n'
            f"  using R = cub::WarpReduce<int>;\n  __shared__ typename R::TempStorage s;\n"
            f"  return R(s).Sum(x * {n}) + (int)cuda_coop::linear_rank<32, 1, 1>();{body}\n}}\n")


@pytest.fixture
def clang(monkeypatch, tmp_path):
    found = bitcode.find_clang(None).clang
    if found is None:
        pytest.skip("the bitcode route's clang (the ziglang wheel) is not installed")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))  # a private cache, so a private PCH directory
    clang_pch.forget()
    yield found
    clang_pch.forget()


def _without_srclocs(ir: str) -> str:
    """LLVM assembly less the source locations clang records for inline assembly (!srcloc: diagnostics only)."""
    ir = re.sub(r", !srcloc !\d+", "", ir)
    return "\n".join(line for line in ir.splitlines() if not re.fullmatch(r"!\d+ = !\{i64 -?\d+\}", line))


def test_second_compile_of_a_block_makes_the_pch_and_later_ones_use_it(clang):
    plain = bitcode.compile_source(clang, _tu(1), "sm_90a")
    assert clang_pch.stats() == {"made": 0, "used": 0, "refused": 0}  # a block compiled once pays nothing
    bitcode.compile_source(clang, _tu(2), "sm_90a")
    again = bitcode.compile_source(clang, _tu(1), "sm_90a")
    assert clang_pch.stats() == {"made": 1, "used": 2, "refused": 0}
    assert again[:4] == plain[:4] == b"BC\xc0\xde"
    bitcode.compile_source(clang, _tu(3), "sm_80")  # another target: another PCH, made at its own second compile
    assert clang_pch.stats()["made"] == 1


def test_a_tu_compiled_with_the_pch_is_the_same_code(clang, monkeypatch):
    """The same LLVM assembly with the PCH as without, but for the inline assembly's source locations."""
    import os
    import subprocess
    import tempfile

    monkeypatch.setattr(clang_pch, "MAKE_AT", 1)
    source = _tu(7)
    with tempfile.TemporaryDirectory() as where:
        output = os.path.join(where, "out.ll")
        argv = bitcode.command(clang, "sm_90a", bitcode.include_paths(), output, textual=True)
        text = bitcode.clang_input(source).encode()
        plain = subprocess.run(argv, input=text, capture_output=True, check=True, cwd=where)
        assert plain.returncode == 0
        without = open(output).read()
        found = clang_pch.usable(clang_pch.split(source)[0], argv, output)
        assert found is not None
        subprocess.run(clang_pch.with_pch(argv, found[1]), input=text, capture_output=True, check=True, cwd=where)
        with_pch = open(output).read()
    assert "tu_7" in without and "srcloc" in without  # inline assembly of CUB, so there are source locations to differ
    assert _without_srclocs(with_pch) == _without_srclocs(without)


def test_an_error_is_clangs_without_the_pch_and_keeps_the_pch(clang, monkeypatch):
    monkeypatch.setattr(clang_pch, "MAKE_AT", 1)
    bad = _tu(4, "\n  static_assert(sizeof(int) == 3, \"an int of three bytes\");")
    with pytest.raises(coop.CoopBuildError) as with_pch:
        bitcode.compile_source(clang, bad, "sm_90a")
    assert clang_pch.stats() == {"made": 1, "used": 0, "refused": 0}
    monkeypatch.setattr(clang_pch, "MAKE_AT", 10**9)
    clang_pch.forget()
    with pytest.raises(coop.CoopBuildError) as plain:
        bitcode.compile_source(clang, bad, "sm_90a")
    assert str(with_pch.value) == str(plain.value)
    assert "an int of three bytes" in str(plain.value)


def test_a_pch_clang_refuses_means_a_plain_compile_and_no_pch_again(clang, monkeypatch):
    monkeypatch.setattr(clang_pch, "MAKE_AT", 1)
    bitcode.compile_source(clang, _tu(5), "sm_90a")
    (path, _), = clang_pch._store.ready.values()
    path.write_bytes(b"not a precompiled header")
    data = bitcode.compile_source(clang, _tu(6), "sm_90a")
    assert data[:4] == b"BC\xc0\xde"
    assert clang_pch.stats() == {"made": 1, "used": 1, "refused": 1}
    assert not path.exists() and not clang_pch._store.ready
    bitcode.compile_source(clang, _tu(7), "sm_90a")
    assert clang_pch.stats()["made"] == 1  # the block is not given another


def test_no_pch_with_the_cache_off(clang, monkeypatch):
    monkeypatch.setattr(clang_pch, "MAKE_AT", 1)
    monkeypatch.setenv("CUDA_COOP_DISABLE_CACHE", "1")
    bitcode.compile_source(clang, _tu(8), "sm_90a")
    bitcode.compile_source(clang, _tu(9), "sm_90a")
    assert clang_pch.stats() == {"made": 0, "used": 0, "refused": 0}
