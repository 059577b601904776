"""A kernel's NVVM IR built for one block shape: declaring that shape exactly, and compiling the IR to LTO-IR through
libNVVM (no driver).

A cooperative kernel is specialised on its block shape (SPEC 2.2), so it may say so: ``reqntid`` annotations (PTX
``.reqntid``) tell ptxas every warp of the block is whole, and it then needs no divergent fallback around CUB's warp
shuffles (``BRA.DIV``, ``WARPSYNC.COLLECTIVE``). A compiler that declares at most a maximum (``maxntid``) hands its
IR through ``declare_exact_block`` and ``compile_to_ltoir`` (numba_mlir._patches,
``translate_cooperative_kernels``).
"""
from __future__ import annotations

import ctypes
import functools
import re
from collections.abc import Sequence

from .._errors import CoopBuildError

# LLVM 7 IR text: the module's annotation list and a numbered metadata node
_ANNOTATIONS = re.compile(rb"^!nvvm\.annotations = !\{([^}\n]*)\}[ \t]*$", re.MULTILINE)
_NODE = re.compile(rb"^!(\d+) = !\{(.*)\}[ \t]*$", re.MULTILINE)
_KERNEL_MARK = b', !"kernel", i32 1'
_BLOCK_ANNOTATION = re.compile(rb'!"(?:maxntid|reqntid)[xyz]"')


def declare_exact_block(ir: bytes, block: Sequence[int]) -> bytes | None:
    """``ir`` (NVVM IR as LLVM 7 text) with each kernel annotated with the exact block ``block`` (``reqntidx/y/z``)
    in place of any maximum (``maxntidx/y/z``: ptxas refuses both on one kernel); None when the IR does not have the
    shape this expects (no annotated kernel), so the caller keeps its own build."""
    listed = _ANNOTATIONS.search(ir)
    if listed is None:
        return None
    nodes = {int(m.group(1)): m.group(2) for m in _NODE.finditer(ir)}
    try:
        ids = [int(token.strip().lstrip(b"!")) for token in listed.group(1).split(b",") if token.strip()]
    except ValueError:
        return None
    kernels = [nodes[i][:-len(_KERNEL_MARK)] for i in ids if nodes.get(i, b"").endswith(_KERNEL_MARK)]
    if not kernels:
        return None
    kept = [i for i in ids if not _BLOCK_ANNOTATION.search(nodes.get(i, b""))]
    extents = (tuple(int(d) for d in block) + (1, 1, 1))[:3]
    added = []
    next_id = max(nodes, default=-1) + 1
    for kernel in kernels:
        for axis, extent in zip("xyz", extents, strict=True):
            added.append(b'!%d = !{%s, !"reqntid%s", i32 %d}' % (next_id, kernel, axis.encode(), extent))
            kept.append(next_id)
            next_id += 1
    listing = b"!nvvm.annotations = !{" + b", ".join(b"!%d" % i for i in kept) + b"}"
    body = ir[:listed.start()] + listing + ir[listed.end():]
    return body.rstrip(b"\0\n") + b"\n" + b"\n".join(added) + b"\n"


@functools.lru_cache(maxsize=None)
def _library(path: str) -> ctypes.CDLL:
    lib = ctypes.CDLL(path)
    program = ctypes.POINTER(ctypes.c_void_p)
    lib.nvvmCreateProgram.argtypes = [program]
    lib.nvvmAddModuleToProgram.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p]
    lib.nvvmLazyAddModuleToProgram.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p]
    lib.nvvmCompileProgram.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)]
    for name in ("nvvmGetCompiledResultSize", "nvvmGetProgramLogSize"):
        getattr(lib, name).argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_size_t)]
    for name in ("nvvmGetCompiledResult", "nvvmGetProgramLog"):
        getattr(lib, name).argtypes = [ctypes.c_void_p, ctypes.c_char_p]
    lib.nvvmDestroyProgram.argtypes = [program]
    return lib


@functools.lru_cache(maxsize=4)
def _read(path: str) -> bytes:
    with open(path, "rb") as file:
        return file.read()


def compile_to_ltoir(ir: bytes, libnvvm: str, libdevice: str, arch: str, opt_level: int) -> bytes:
    """LTO-IR of ``ir`` for ``arch`` (``compute_90``) from the libNVVM at ``libnvvm``, the libdevice at ``libdevice``
    added lazily (only what the IR calls is linked), as numba-cuda-mlir's own translation compiles it."""
    lib = _library(libnvvm)
    device_library = _read(libdevice)
    handle = ctypes.c_void_p()

    def check(status: int, what: str) -> None:
        if status != 0:
            size = ctypes.c_size_t()
            log = b""
            if lib.nvvmGetProgramLogSize(handle, ctypes.byref(size)) == 0 and size.value > 1:
                buffer = ctypes.create_string_buffer(size.value)
                if lib.nvvmGetProgramLog(handle, buffer) == 0:
                    log = buffer.value
            raise CoopBuildError(f"cuda.coop could not compile a kernel's NVVM IR ({what}, status {status}): "
                                 f"{log.decode(errors='replace').strip()}")

    check(lib.nvvmCreateProgram(ctypes.byref(handle)), "nvvmCreateProgram")
    try:
        check(lib.nvvmAddModuleToProgram(handle, ir, len(ir), b"kernel"), "nvvmAddModuleToProgram")
        check(lib.nvvmLazyAddModuleToProgram(handle, device_library, len(device_library), b"libdevice"),
              "nvvmLazyAddModuleToProgram")
        options = [f"-arch={arch}".encode(), f"-opt={opt_level}".encode(), b"-gen-lto"]
        check(lib.nvvmCompileProgram(handle, len(options), (ctypes.c_char_p * len(options))(*options)),
              "nvvmCompileProgram")
        size = ctypes.c_size_t()
        check(lib.nvvmGetCompiledResultSize(handle, ctypes.byref(size)), "nvvmGetCompiledResultSize")
        result = ctypes.create_string_buffer(size.value)
        check(lib.nvvmGetCompiledResult(handle, result), "nvvmGetCompiledResult")
        return result.raw[:size.value]
    finally:
        lib.nvvmDestroyProgram(ctypes.byref(handle))
