"""cuda-coop's own headers (src/cuda/coop/_cub/include/cuda_coop): each builds on its own, and every algorithm
instantiated (headers/instantiate_all.cu) builds, under NVRTC and under the bitcode route's clang (docs: cutlass,
"How it works")."""
from __future__ import annotations

from pathlib import Path

import pytest

from cuda.coop._cub import bitcode, nvrtc, program, toolchain

HEADERS = sorted(p.relative_to(toolchain.OWN_INCLUDE).as_posix()
                 for p in toolchain.OWN_INCLUDE.rglob("*.cuh"))
INSTANTIATIONS = Path(__file__).resolve().parent / "headers" / "instantiate_all.cu"


def _nvrtc(text: str) -> None:
    options = nvrtc._options("sm_90", toolchain.toolchain().include_paths())
    built = program.run_program(text, options, {}, want_log=True)
    assert built.status == 0, built.log
    assert "warning" not in built.log, built.log


def _clang() -> bitcode.Clang:
    found = bitcode.find_clang(None).clang
    if found is None:
        pytest.skip("the bitcode route's clang (the ziglang wheel) is not installed")
    return found


def test_every_header_is_listed_as_package_data():
    text = (Path(__file__).resolve().parents[2] / "pyproject.toml").read_text()
    depths = {header.count("/") for header in HEADERS}
    assert HEADERS and depths <= {1, 2}
    assert '"include/cuda_coop/*.cuh", "include/cuda_coop/*/*.cuh"' in text


def test_every_header_is_instantiated():
    text = INSTANTIATIONS.read_text()
    for header in HEADERS:
        assert f"#include <{header}>" in text, header


@pytest.mark.parametrize("header", HEADERS)
def test_header_builds_alone_under_nvrtc(header):
    _nvrtc(f"#include <{header}>\n")


@pytest.mark.parametrize("header", HEADERS)
def test_header_builds_alone_under_clang(header):
    bitcode.compile_source(_clang(), f"#include <{header}>\n", "sm_90a")


def test_instantiations_build_under_nvrtc():
    _nvrtc(INSTANTIATIONS.read_text())


def test_instantiations_build_under_clang():
    ir = bitcode.compile_source(_clang(), INSTANTIATIONS.read_text(), "sm_90a", textual=True).decode()
    assert "instantiate_all" in ir
