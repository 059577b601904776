"""numba-cuda-mlir kernels with cuda.coop calls declare the block shape they are built for (PTX ``.reqntid``, the
cubin's EIATTR_REQNTID), as CuTe's kernels do, where numba-cuda-mlir 0.6 declares a maximum at most (``.maxntid``):
ptxas then knows every warp whole and puts no divergent fallback around CUB's warp shuffles (numba_mlir._patches,
``translate_cooperative_kernels``). The LTO-IR of that route is the translation's own, byte for byte, without the
annotation."""
from __future__ import annotations

import re
import subprocess
import tempfile
from pathlib import Path

import numpy as np
import pytest
from numba_cuda_mlir import cuda

import cuda.coop.numba_mlir as numba_coop
from cuda import coop
from cuda.coop._cub import nvvm
from cuda.coop._cub.report import _tool

ITEMS = 4
I32 = np.zeros(1024, np.int32)


def _attributes(cubin: bytes) -> dict[str, list[int]]:
    """The cubin's kernel attributes (cuobjdump -elf): name -> values."""
    tool = _tool("cuobjdump")
    if tool is None:
        pytest.skip("cuobjdump is not installed (cuda-toolkit[cuobjdump])")
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "k.cubin"
        path.write_bytes(cubin)
        text = subprocess.run([tool, "-elf", str(path)], capture_output=True, text=True, check=True).stdout
    found = re.findall(r"Attribute:\s+(EIATTR_\w+)\s+Format:\s+\w+\s+Value:\s+([0-9a-fx ]+)", text)
    return {name: [int(value, 16) for value in values.split()] for name, values in found}


def _scan_tile(src, dst):
    block = coop.this_block()
    items = coop.ThreadData(ITEMS, np.int32)
    coop.load(block, src, items)
    coop.store(block, dst, coop.inclusive_sum(block, items))


scan_tile = cuda.jit(_scan_tile)
bounded_scan_tile = cuda.jit(launch_bounds=256)(_scan_tile)
scan_tile_with_lines = cuda.jit(launch_bounds=256, lineinfo=True)(_scan_tile)


@cuda.jit(launch_bounds=256)
def plain_copy(src, dst):
    i = cuda.grid(1)
    if i < src.size:
        dst[i] = src[i]


@pytest.mark.parametrize(("kernel", "block"), [(scan_tile, (128, 1, 1)), (scan_tile, (32, 4, 1)),
                                               (bounded_scan_tile, (256, 1, 1)), (bounded_scan_tile, (64, 1, 1))])
def test_a_cooperative_kernel_declares_its_block(kernel, block):
    built = numba_coop.compile_kernel(kernel, (I32, I32), block=block)
    attributes = _attributes(built.cubin)
    assert attributes.get("EIATTR_REQNTID") == list(block), attributes
    assert "EIATTR_MAX_THREADS" not in attributes  # (ptxas refuses both)


def test_a_kernel_without_cooperative_calls_keeps_its_maximum():
    built = numba_coop.compile_kernel(plain_copy, (I32, I32), block=64)
    attributes = _attributes(built.cubin)
    assert attributes.get("EIATTR_MAX_THREADS") == [256, 1, 1] and "EIATTR_REQNTID" not in attributes, attributes


def test_the_lto_ir_is_the_translations_own_without_the_annotation(monkeypatch):
    from numba_cuda_mlir import mlir_optimization

    from cuda.coop.numba_mlir import _patches

    _patches.translate_cooperative_kernels()  # (once per process: installed by the first kernel's plan in any case)
    ours = mlir_optimization._call_llvm70_capi
    assert ours.__name__ == "translate_coop_aware"
    compiled, compared = [], []
    compile_to_ltoir = nvvm.compile_to_ltoir

    def counted(*args, **kwargs):
        compiled.append(1)
        return compile_to_ltoir(*args, **kwargs)

    def both(module, target_options, gen_lto=False, gen_llvmir=False):
        result = ours(module, target_options, gen_lto=gen_lto, gen_llvmir=gen_llvmir)
        if gen_lto and not gen_llvmir:
            with monkeypatch.context() as inner:  # the translation's own LTO-IR, short shared pointers and all
                inner.setattr(_patches, "_exact_block", lambda options: None)
                compared.append(result == ours(module, target_options, gen_lto=True))
        return result

    monkeypatch.setattr(nvvm, "declare_exact_block", lambda ir, block: ir)  # the route, without the annotation
    monkeypatch.setattr(nvvm, "compile_to_ltoir", counted)
    monkeypatch.setattr(mlir_optimization, "_call_llvm70_capi", both)
    numba_coop.compile_kernel(scan_tile, (I32, I32), block=(96, 1, 1))
    assert compiled == [1] and compared == [True]


def test_a_build_with_line_information_keeps_numba_cuda_mlirs_own_translation():
    """(Its libNVVM options for line information are the translation's own: such a build is left as it is.)"""
    built = numba_coop.compile_kernel(scan_tile_with_lines, (I32, I32), block=128)
    attributes = _attributes(built.cubin)
    assert attributes.get("EIATTR_MAX_THREADS") == [256, 1, 1] and "EIATTR_REQNTID" not in attributes, attributes
