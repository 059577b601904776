"""Linking a kernel that its compiler hands over as PTX with the CUB LTO-IR, through nvJitLink (no driver).

A backend whose compiler cannot link LTO-IR itself (the CuTe DSL: docs: cutlass, "How it works") compiles its kernel
as relocatable PTX and calls ``link_ptx``; the result is the cubin the kernel runs as.
"""
from __future__ import annotations

import contextlib
import re
from typing import Any, Sequence

from .._errors import CoopBuildError
from .toolchain import library_call


_REGISTER_LIMIT = re.compile(r"with max regcount of (\d+) calls function")


def link_ptx(ptx: str, ltoirs: Sequence[bytes], arch: str, what: str) -> bytes:
    """One cubin for ``arch`` (``sm_90a``) from the kernel's PTX and the LTO-IR of its calls.

    A kernel whose launch bounds cap its registers (1024 threads: 64) cannot call a function compiled without that
    cap; the link is then made again with the cap for every function (``-maxrregcount``), as the linker asks."""
    try:
        return _link(ptx, ltoirs, arch, what, [])
    except CoopBuildError as exc:
        found = _REGISTER_LIMIT.search(str(exc))
        if found is None:
            raise
    return _link(ptx, ltoirs, arch, what, [f"-maxrregcount={found.group(1)}"])


def _link(ptx: str, ltoirs: Sequence[bytes], arch: str, what: str, extra: list[str]) -> bytes:
    from cuda.bindings import nvjitlink

    def call(function: str, *args: object) -> Any:
        return library_call(nvjitlink, "nvJitLink", function, *args)

    options = [f"-arch={arch}", "-lto", "-O3", *extra]
    handle = call("create", len(options), options)
    try:
        try:
            data = ptx.encode()
            call("add_data", handle, nvjitlink.InputType.PTX, data, len(data), "kernel.ptx")
            for index, ltoir in enumerate(ltoirs):
                call("add_data", handle, nvjitlink.InputType.LTOIR, ltoir, len(ltoir), f"cuda_coop_{index}.ltoir")
            call("complete", handle)
        except (CoopBuildError, nvjitlink.nvJitLinkError) as exc:  # the library's own error too, with its log
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
