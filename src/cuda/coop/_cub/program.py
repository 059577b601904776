"""One NVRTC program run: the text, options and in-memory headers in; status, log and LTO-IR out (no driver)."""
from __future__ import annotations

import contextlib
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .._errors import CoopBuildError
from .toolchain import library_call

# Counters the tests and benchmarks read: the NVRTC runs builds waited for and their time, the scratch-size links,
# and the precompiled headers made in the background, used, and rejected by NVRTC.
stats = {"nvrtc_runs": 0, "nvrtc_seconds": 0.0, "link_seconds": 0.0,
         "pch_created": 0, "pch_create_seconds": 0.0, "pch_used": 0, "pch_rejected": 0}



def check(result: object, what: str) -> None:
    if int(result) != 0:  # type: ignore[call-overload]
        raise CoopBuildError(f"{what} failed: {result}")



@dataclass
class Compiled:
    status: int
    log: str
    ltoir: bytes
    seconds: float
    pch_status: int | None = None  # nvrtcGetPCHCreateStatus, when the run was asked to make a PCH


def run_program(text: str, options: Sequence[str], headers: dict[str, bytes], *, want_log: bool = False,
             creating: bool = False) -> Compiled:
    """One NVRTC run with ``headers`` (include name -> contents) in memory; the log is read when it failed or
    ``want_log``."""
    from cuda.bindings import nvrtc

    def call(function: str, *args: object) -> Any:
        return library_call(nvrtc, "nvrtc", function, *args)

    names = list(headers)
    err, prog = call("nvrtcCreateProgram", text.encode(), b"cuda_coop.cu", len(names), [headers[n] for n in names],
                     [n.encode("utf-8", "surrogateescape") for n in names])
    check(err, "nvrtcCreateProgram")
    try:
        opts = [o.encode() for o in options]
        start = time.perf_counter()
        (status,) = call("nvrtcCompileProgram", prog, len(opts), opts)
        seconds = time.perf_counter() - start
        log = ""
        if int(status) != 0 or want_log:
            _, size = call("nvrtcGetProgramLogSize", prog)
            raw = bytearray(size)  # never ``b" " * size``: at size 1 that is CPython's shared b" ", and NVRTC's
            call("nvrtcGetProgramLog", prog, raw)  # write into it turned every b" " of the process into b"\0"
            log = raw.decode(errors="replace").rstrip("\0")
        pch_status = int(call("nvrtcGetPCHCreateStatus", prog)[0]) if creating else None
        ltoir = b""
        if int(status) == 0 and not creating:
            err, size = call("nvrtcGetLTOIRSize", prog)
            check(err, "nvrtcGetLTOIRSize")
            out = bytearray(size)
            (err,) = call("nvrtcGetLTOIR", prog, out)
            check(err, "nvrtcGetLTOIR")
            ltoir = bytes(out)
        return Compiled(int(status), log, ltoir, seconds, pch_status)
    finally:
        with contextlib.suppress(Exception):
            nvrtc.nvrtcDestroyProgram(prog)
