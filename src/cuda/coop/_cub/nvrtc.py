"""NVRTC to LTO-IR, and scratch size discovery without running anything."""
from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import re
import stat
import time
import warnings
from dataclasses import dataclass, field
from typing import Any, Sequence

from .. import _config
from .._errors import CoopBuildError
from .._version import __version__
from . import cache
from .provider import Provider, translation_unit
from .toolchain import library_call, toolchain

# Parsing the CCCL headers is nearly all of an NVRTC run. Under NVRTC, CCCL sets
# _CCCL_META_UNROLL_LIMIT to 16 instead of nvcc's 10, and the unrolled type-list folds of
# cuda/std/__type_traits/type_list.h then take ~0.9 s to parse (NVRTC 13.0 and 13.5, CCCL 3.6).
# Passing nvcc's value cuts a run ~2.8x; the limit only bounds how far metaprograms unroll
# before recursing: same types, same code. (C++20 would parse ~25% faster still; SPEC 1.7 says C++17.)
OPTIONS = ("-std=c++17", "-rdc=true", "-dlto", "-DCUB_DISABLE_BF16_SUPPORT", "-D_CCCL_META_UNROLL_LIMIT=10")

# Counters the tests read: how many NVRTC runs this process made, and their time.
stats = {"nvrtc_runs": 0, "nvrtc_seconds": 0.0, "link_seconds": 0.0}


@dataclass
class BuildResult:
    ltoir: bytes
    source: str
    scratch: dict[str, tuple[int, int]] = field(default_factory=dict)
    from_cache: bool = False
    dump_path: str | None = None


_log = logging.getLogger("cuda.coop")
_dump_warned: set[str] = set()


def _dump(source: str) -> str | None:
    """Write the TU to CUDA_COOP_SOURCE_DUMP_DIR; an unusable directory is one warning, never a failed build."""
    directory = _config.source_dump_dir()
    if directory is None:
        return None
    path = directory / f"cuda_coop_numba_mlir_{hashlib.sha256(source.encode()).hexdigest()[:16]}.cu"
    try:
        directory.mkdir(parents=True, exist_ok=True)
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC
        for name in ("O_NONBLOCK", "O_NOFOLLOW", "O_CLOEXEC"):
            flags |= getattr(os, name, 0)
        fd = os.open(path, flags, 0o644)  # a FIFO without reader fails here instead of blocking
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
                raise OSError(f"{path} is not a regular file")
            f.write(source)
    except (OSError, ValueError) as exc:
        if str(directory) not in _dump_warned:
            _dump_warned.add(str(directory))
            message = (f"CUDA_COOP_SOURCE_DUMP_DIR={directory} is not usable ({exc}); generated C++ sources are "
                       "not written there and builds continue")
            _log.warning("%s", message)
            warnings.warn(message, UserWarning, stacklevel=3)
        return None
    return str(path)


def _check(result: object, what: str) -> None:
    if int(result) != 0:  # type: ignore[call-overload]
        raise CoopBuildError(f"{what} failed: {result}")


_STATIC_ASSERT_RE = re.compile(r"static[_ ]assert(?:ion)?\s+failed\b(?P<rest>.*)", re.IGNORECASE)
_SOURCE_ASSERT_RE = re.compile(r"static_assert\s*\((?P<cond>.*?)\)\s*;")
_WHERE_RE = re.compile(r"(?P<file>[^\s()]+)\((?P<line>\d+)\):\s*error")


def static_assert_messages(log: str, include_paths: Sequence[str] = ()) -> list[str]:
    """The failed ``static_assert``s of an NVRTC log in words, in order, without duplicates.

    NVRTC writes ``file(line): error: static assertion failed with "message"`` (the message's own quotes are not
    escaped), then the offending source line; an assertion without a message is described by its condition.
    """
    found: list[str] = []
    lines = log.splitlines()
    for index, line in enumerate(lines):
        match = _STATIC_ASSERT_RE.search(line)
        if not match:
            continue
        rest = match.group("rest").strip()
        if rest.count('"') >= 2:
            text = rest[rest.index('"') + 1:rest.rindex('"')].strip()
        else:
            text = rest.lstrip(":").strip()
        if not text:
            following = lines[index + 1] if index + 1 < len(lines) else ""
            cond = _SOURCE_ASSERT_RE.search(following)
            text = f"static_assert({cond.group('cond').strip()}) failed" if cond else "a static_assert failed"
        where = _WHERE_RE.search(line[:match.start()])
        if where:
            header = where.group("file").replace("\\", "/")
            for root in include_paths:  # cub/block/..., not the site-packages prefix
                prefix = str(root).replace("\\", "/").rstrip("/") + "/"
                if header.startswith(prefix):
                    header = header[len(prefix):]
                    break
            else:
                header = header.rsplit("/include/", 1)[-1]
            text = f"{text} (static_assert at {header}:{where.group('line')})"
        if text not in found:
            found.append(text)
    return found


def compile_error_message(what: str, arch: str, log: str, dump: str | None,
                          include_paths: Sequence[str] = ()) -> str:
    """R10: one readable first line (a CUB static_assert in words), then the full NVRTC log."""
    where = f" (source: {dump})" if dump else " (set CUDA_COOP_SOURCE_DUMP_DIR to keep the source)"
    asserts = static_assert_messages(log, include_paths)
    if asserts:
        reason = "the configuration violates a compile-time constraint (static_assert): " + "; ".join(asserts)
    else:
        reason = "NVRTC failed"
    return f"cuda.coop could not build {what} for {arch}: {reason}{where}\nNVRTC log:\n{log.rstrip()}"


def _nvrtc_ltoir(source: str, arch: str, include_paths: list[str], what: str, dump: str | None) -> bytes:
    from cuda.bindings import nvrtc

    def call(function: str, *args: object) -> Any:
        return library_call(nvrtc, "nvrtc", function, *args)

    err, prog = call("nvrtcCreateProgram", source.encode(), b"cuda_coop.cu", 0, [], [])
    _check(err, "nvrtcCreateProgram")
    try:
        opts = [o.encode() for o in (*OPTIONS, f"-arch={arch}", *[f"-I{p}" for p in include_paths])]
        start = time.perf_counter()
        (status,) = call("nvrtcCompileProgram", prog, len(opts), opts)
        stats["nvrtc_runs"] += 1
        stats["nvrtc_seconds"] += time.perf_counter() - start
        if int(status) != 0:
            _, size = call("nvrtcGetProgramLogSize", prog)
            log = b" " * size
            call("nvrtcGetProgramLog", prog, log)
            raise CoopBuildError(compile_error_message(what, arch, log.decode(errors="replace").rstrip("\0"), dump,
                                                        include_paths))
        err, size = call("nvrtcGetLTOIRSize", prog)
        _check(err, "nvrtcGetLTOIRSize")
        out = b" " * size
        (err,) = call("nvrtcGetLTOIR", prog, out)
        _check(err, "nvrtcGetLTOIR")
        return bytes(out)
    finally:
        with contextlib.suppress(Exception):
            nvrtc.nvrtcDestroyProgram(prog)


_SCRATCH_RE = re.compile(r"\.global \.align \d+ \.b8 (\w+)_scratch_size\[16\] = \{([\d, ]+)\}")


def _scratch_sizes(ltoir: bytes, arch: str) -> dict[str, tuple[int, int]]:
    """Read the sizeof/alignof tables back by letting nvJitLink lower the LTO-IR to PTX (no driver)."""
    from cuda.bindings import nvjitlink

    def call(function: str, *args: object) -> Any:
        return library_call(nvjitlink, "nvJitLink", function, *args)

    start = time.perf_counter()
    handle = call("create", 3, [f"-arch={arch}", "-lto", "-ptx"])
    try:
        call("add_data", handle, nvjitlink.InputType.LTOIR, ltoir, len(ltoir), "cuda_coop")
        call("complete", handle)
        size = call("get_linked_ptx_size", handle)
        buf = bytearray(size)
        call("get_linked_ptx", handle, buf)
    finally:
        with contextlib.suppress(Exception):
            nvjitlink.destroy(handle)
    stats["link_seconds"] += time.perf_counter() - start
    ptx = bytes(buf).decode(errors="replace")
    sizes = {}
    for symbol, data in _SCRATCH_RE.findall(ptx):
        raw = bytes(int(b) for b in data.split(","))
        sizes[symbol] = (int.from_bytes(raw[:8], "little"), int.from_bytes(raw[8:], "little"))
    return sizes


def cache_key(source: str, arch: str, tools: Any) -> str:
    """The provider cache key (SPEC 1.6): schema, version, own code, source, target, toolchain, options, headers."""
    return cache.key(__version__, source, arch, OPTIONS, tools.key_parts())


def build(providers: list[Provider], arch: str, what: str) -> BuildResult:
    """Compile all of a kernel's providers as one translation unit, through the cache.

    Look up first; on a miss take the per-key lock, look again (another process may just have built it), and only
    then run NVRTC and store. The source is dumped on both paths, after the lookup.
    """
    try:
        tools = toolchain()
    except CoopBuildError as exc:
        message = str(exc)
        if message.startswith("cuda.coop could not build"):
            raise
        raise CoopBuildError(f"cuda.coop could not build {what} for {arch}: {message}") from exc
    source = translation_unit(providers)
    wanted = frozenset(p.symbol for p in providers if p.scratch_type is not None)
    entry = cache_key(source, arch, tools)
    hit = cache.load(entry, wanted)
    if hit is None:
        with cache.lock(entry):
            hit = cache.load(entry, wanted)
            if hit is None:
                dump = _dump(source)
                ltoir = _nvrtc_ltoir(source, arch, tools.include_paths(), what, dump)
                scratch = _scratch_sizes(ltoir, arch) if wanted else {}
                missing = wanted - scratch.keys()
                if missing:
                    raise CoopBuildError(
                        f"cuda.coop could not build {what} for {arch}: could not determine the scratch size of "
                        f"{sorted(missing)}"
                    )
                scratch = {k: v for k, v in scratch.items() if k in wanted}
                cache.store(entry, ltoir, {"scratch": scratch, "symbols": sorted({p.symbol for p in providers})})
                return BuildResult(ltoir, source, scratch, False, dump)
    ltoir, meta = hit
    return BuildResult(ltoir, source, {k: (v[0], v[1]) for k, v in meta["scratch"].items()}, True, _dump(source))
