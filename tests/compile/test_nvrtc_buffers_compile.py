"""An NVRTC build leaves the process's Python objects alone. NVRTC writes its log and its LTO-IR into buffers the
caller passes; they must be writable buffers of ours. An empty log is one byte, and ``b" " * 1`` is CPython's
one shared ``b" "``: NVRTC's write into it turned every one-byte ``b" "`` of the process into ``b"\\0"``, and the
bitcode reader (which slices bytes) then misread clang's bitcode after any NVRTC build in the same process (found
as CuTe route tests failing only after an NVRTC test on the same pytest worker)."""
from __future__ import annotations

from cuda.coop._cub import nvrtc, program, toolchain


def _build(text: str) -> program.Compiled:
    options = nvrtc._options("sm_90", toolchain.toolchain().include_paths())
    return program.run_program(text, options, {}, want_log=True)


def test_an_empty_log_leaves_shared_bytes_alone():
    built = _build("__device__ int cuda_coop_probe;\n")
    assert built.status == 0 and built.log == "" and built.ltoir
    assert int.from_bytes(b"a b"[1:2], "little") == 0x20  # a slice of one byte is CPython's shared object


def test_a_log_and_lto_ir_are_copied_out():
    built = _build("__device__ int cuda_coop_probe() { int unused; return 1; }\n")
    assert built.status == 0 and "unused" in built.log, built.log
    assert isinstance(built.ltoir, bytes) and len(built.ltoir) > 16
    assert int.from_bytes(b"a b"[1:2], "little") == 0x20
