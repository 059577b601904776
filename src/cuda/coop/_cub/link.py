"""Linking a kernel that its compiler hands over as PTX with the CUB LTO-IR, through nvJitLink (no driver).

A backend whose compiler cannot link LTO-IR itself (the CuTe DSL: docs: cutlass, "How it works") compiles its kernel
as relocatable PTX and calls ``link_ptx``; the result is the cubin the kernel runs as.
"""
from __future__ import annotations

import contextlib
from typing import Any, Sequence

from .._errors import CoopBuildError
from .toolchain import library_call


def link_ptx(ptx: str, ltoirs: Sequence[bytes], arch: str, what: str) -> bytes:
    """One cubin for ``arch`` (``sm_90a``) from the kernel's PTX and the LTO-IR of its calls."""
    from cuda.bindings import nvjitlink

    def call(function: str, *args: object) -> Any:
        return library_call(nvjitlink, "nvJitLink", function, *args)

    handle = call("create", 3, [f"-arch={arch}", "-lto", "-O3"])
    try:
        try:
            data = ptx.encode()
            call("add_data", handle, nvjitlink.InputType.PTX, data, len(data), "kernel.ptx")
            for index, ltoir in enumerate(ltoirs):
                call("add_data", handle, nvjitlink.InputType.LTOIR, ltoir, len(ltoir), f"cuda_coop_{index}.ltoir")
            call("complete", handle)
        except CoopBuildError as exc:
            log = _error_log(nvjitlink, handle)
            raise CoopBuildError(f"cuda.coop could not link {what} for {arch}: {log or exc}") from None
        size = call("get_linked_cubin_size", handle)
        cubin = bytearray(size)
        call("get_linked_cubin", handle, cubin)
        return bytes(cubin)
    finally:
        with contextlib.suppress(Exception):
            nvjitlink.destroy(handle)


def _error_log(nvjitlink: Any, handle: Any) -> str:
    with contextlib.suppress(Exception):
        size = nvjitlink.get_error_log_size(handle)
        buf = bytearray(size)
        nvjitlink.get_error_log(handle, buf)
        return bytes(buf).decode(errors="replace").strip("\0 \n")
    return ""
