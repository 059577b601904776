"""NVRTC to LTO-IR, and scratch size discovery without running anything.

Parsing the CCCL headers is nearly all of an NVRTC run. Three things keep builds short (issue 12, item 2):

* The CCCL headers a TU reaches go to NVRTC from memory (``header_sources``), not through its file reads.
* The first build of a process with an empty cache runs NVRTC while the header tree is digested for the cache key
  (``_toolchain_and_first_compile``) instead of after it.
* Precompiled headers (PCH): a TU that starts with the ``#include`` block of an earlier one skips parsing it by using
  a PCH made from that block. NVRTC's PCH files record the address of its PCH heap, so only the process that made
  one can use it (in another process NVRTC warns, 20282, and compiles more slowly than without it): PCHs live in a
  private per-process directory of the cache and go at exit. Making one costs more than a plain compile, so it never
  delays a build: a background thread makes it after a plain compile, and later specialisations with the same
  headers (another dtype, block or item count) use it. A PCH that NVRTC rejects, or any failure around one, means a
  plain compile, never a failed build or another result.
"""
from __future__ import annotations

import atexit
import contextlib
import hashlib
import json
import logging
import os
import re
import stat
import threading
import time
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import _config
from .._errors import CoopBuildError
from .._version import __version__
from . import cache
from .provider import Provider, translation_unit
from .toolchain import (
    digest_is_cold,
    library_call,
    locate,
    manifests_deferred,
    toolchain,
)

# Parsing the CCCL headers is nearly all of an NVRTC run. Under NVRTC, CCCL sets
# _CCCL_META_UNROLL_LIMIT to 16 instead of nvcc's 10, and the unrolled type-list folds of
# cuda/std/__type_traits/type_list.h then take ~0.9 s to parse (NVRTC 13.0 and 13.5, CCCL 3.6).
# Passing nvcc's value cuts a run ~2.8x; the limit only bounds how far metaprograms unroll
# before recursing: same types, same code. (C++20 would parse ~25% faster still; SPEC 1.7 says C++17.)
OPTIONS = ("-std=c++17", "-rdc=true", "-dlto", "-DCUB_DISABLE_BF16_SUPPORT", "-D_CCCL_META_UNROLL_LIMIT=10")

# Counters the tests and benchmarks read: the NVRTC runs builds waited for and their time, the scratch-size links,
# and the precompiled headers made in the background, used, and rejected by NVRTC.
stats = {"nvrtc_runs": 0, "nvrtc_seconds": 0.0, "link_seconds": 0.0,
         "pch_created": 0, "pch_create_seconds": 0.0, "pch_used": 0, "pch_rejected": 0}


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


@dataclass
class _Compiled:
    status: int
    log: str
    ltoir: bytes
    seconds: float
    pch_status: int | None = None  # nvrtcGetPCHCreateStatus, when the run was asked to make a PCH


def _compile(text: str, options: Sequence[str], headers: dict[str, bytes], *, want_log: bool = False,
             creating: bool = False) -> _Compiled:
    """One NVRTC run with ``headers`` (include name -> contents) in memory; the log is read when it failed or
    ``want_log``."""
    from cuda.bindings import nvrtc

    def call(function: str, *args: object) -> Any:
        return library_call(nvrtc, "nvrtc", function, *args)

    names = list(headers)
    err, prog = call("nvrtcCreateProgram", text.encode(), b"cuda_coop.cu", len(names), [headers[n] for n in names],
                     [n.encode("utf-8", "surrogateescape") for n in names])
    _check(err, "nvrtcCreateProgram")
    try:
        opts = [o.encode() for o in options]
        start = time.perf_counter()
        (status,) = call("nvrtcCompileProgram", prog, len(opts), opts)
        seconds = time.perf_counter() - start
        log = ""
        if int(status) != 0 or want_log:
            _, size = call("nvrtcGetProgramLogSize", prog)
            raw = b" " * size
            call("nvrtcGetProgramLog", prog, raw)
            log = raw.decode(errors="replace").rstrip("\0")
        pch_status = int(call("nvrtcGetPCHCreateStatus", prog)[0]) if creating else None
        ltoir = b""
        if int(status) == 0 and not creating:
            err, size = call("nvrtcGetLTOIRSize", prog)
            _check(err, "nvrtcGetLTOIRSize")
            out = b" " * size
            (err,) = call("nvrtcGetLTOIR", prog, out)
            _check(err, "nvrtcGetLTOIR")
            ltoir = bytes(out)
        return _Compiled(int(status), log, ltoir, seconds, pch_status)
    finally:
        with contextlib.suppress(Exception):
            nvrtc.nvrtcDestroyProgram(prog)


def compile_text(source: str) -> tuple[str, str]:
    """(the text NVRTC compiles, the ``#include`` block a PCH of it holds).

    The block, a declaration that ends it (NVRTC's header stop point is the first token that is not a directive),
    then the generated source unchanged and numbered from line 1, so errors keep its line numbers. The headers
    are included twice; the second time their include guards make it a no-op.
    """
    lines = source.split("\n")
    count = 0
    while count < len(lines) and lines[count].startswith("#include"):
        count += 1
    if count == 0:
        return source, ""
    block = "\n".join(lines[:count]) + "\n"
    return f'{block}{PCH_STOP}\n#line 1 "cuda_coop.cu"\n{source}', block


def _options(arch: str, include_paths: Sequence[str]) -> list[str]:
    return [*OPTIONS, f"-arch={arch}", *[f"-I{p}" for p in include_paths]]


# ---------------------------------------------------------------- headers from memory

# NVRTC reads a header file with locked stdio calls once the process has a second thread (numpy's OpenBLAS pool,
# numba-cuda-mlir's, ours), which makes a CUB compile ~20% slower than in a single-threaded process. Handing NVRTC
# the CCCL headers as in-memory sources (nvrtcCreateProgram's headers) avoids that and the ~11,000 file-system calls
# of a compile, and links to the same code (tests/compile/test_pch_compile.py). The set is every CCCL header that an
# ``#include <...>`` line reaches from the TU's block (lines in disabled branches too: an unused header costs only a
# copy); a header included through a macro is not found that way and NVRTC reads it from the include path as before.
_INCLUDE = re.compile(rb"^[ \t]*#[ \t]*include[ \t]*<([^<>\n]+)>", re.MULTILINE)
_BLOCK_INCLUDE = re.compile(r"^#include <([^<>\n]+)>", re.MULTILINE)
_header_files: dict[tuple[str, str], tuple[bytes, tuple[str, ...]] | None] = {}  # (root, name) -> text, includes
_header_sets: dict[tuple[str, str], tuple[str, ...]] = {}  # (root, block) -> the names it reaches
_header_generation: dict[str, str] = {}  # root -> headers digest the memos above belong to
_EARLY = "(read before the digest)"  # the generation of a first build's reads until its digest is known


def _read_header(root: str, name: str) -> tuple[bytes, tuple[str, ...]] | None:
    """A header of the CCCL tree and the names it includes; None unless it is a regular file inside ``root``."""
    parts = name.split("/")
    if name.startswith("/") or ".." in parts or "" in parts:
        return None
    flags = os.O_RDONLY
    for flag in ("O_NONBLOCK", "O_CLOEXEC"):
        flags |= getattr(os, flag, 0)
    try:
        fd = os.open(os.path.join(root, name), flags)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):  # never read a FIFO or device found in a header tree
            return None
        chunks = [os.read(fd, st.st_size + 1)]
        while chunks[-1]:
            chunks.append(os.read(fd, 1 << 16))
    except OSError:
        return None
    finally:
        os.close(fd)
    data = b"".join(chunks)
    return data, tuple(m.decode("utf-8", "surrogateescape") for m in _INCLUDE.findall(data))


def header_sources(block: str, include: Path, generation: str | None) -> dict[str, bytes]:
    """The CCCL headers ``block`` reaches, by include name, for NVRTC to read from memory.

    Kept for the process per header-tree ``generation`` (its digest: a re-resolved, changed tree starts afresh;
    ``_EARLY`` for the first build, until its digest is known); ``None`` reads without keeping anything.
    """
    root = str(include)
    if generation is not None and _header_generation.get(root) != generation:
        for memo in (_header_files, _header_sets):
            for k in [k for k in memo if k[0] == root]:
                del memo[k]
        _header_generation[root] = generation
    names = _header_sets.get((root, block)) if generation is not None else None
    files: dict[tuple[str, str], tuple[bytes, tuple[str, ...]] | None] = (
        _header_files if generation is not None else {})
    if names is None:
        found: list[str] = []
        seen: set[str] = set()
        todo = _BLOCK_INCLUDE.findall(block)
        while todo:
            name = todo.pop()
            if name in seen:
                continue
            seen.add(name)
            if (root, name) not in files:
                files[(root, name)] = _read_header(root, name)
            entry = files[(root, name)]
            if entry is not None:
                found.append(name)
                todo.extend(entry[1])
        names = tuple(found)
        if generation is not None:
            _header_sets[(root, block)] = names
    return {name: files[(root, name)][0] for name in names}  # type: ignore[index]


def _nvrtc_ltoir(source: str, arch: str, tools: Any, what: str, dump: str | None,
                 early: _Compiled | None = None) -> bytes:
    """LTO-IR of ``source``: with this process's PCH of its headers when there is one, else a plain compile (or
    ``early``, the plain compile that ran beside the toolchain resolution), after which a PCH is made."""
    include_paths = tools.include_paths()
    text, block = compile_text(source)
    options = _options(arch, include_paths)
    headers = header_sources(block, tools.cccl_include, tools.headers_digest) if early is None else {}
    key = _pch_key(block, options, tools) if block and _pch_enabled(tools) else None
    entry = _usable_pch(key) if key is not None and early is None else None
    failed_with_pch = None
    if entry is not None:
        result = _compile_using(entry, key, text, options, headers)
        if result is not None and result.status == 0:
            return result.ltoir
        failed_with_pch = result
    elif key is not None and early is None:
        _first_block_pch(block, options, headers, tools)
    # Without a PCH; after a failure with one too, so that what the user sees never depends on a PCH.
    result = early if early is not None else _plain(text, options, headers)
    if key is not None:
        _note_plain_seconds(key, result.seconds)
    if failed_with_pch is not None:
        if result.status == 0:  # the PCH made it fail: never again
            _reject(key, entry, failed_with_pch.log)
    elif result.status == 0 and key is not None and result.seconds >= PCH_MIN_SECONDS:
        if not headers:
            headers = header_sources(block, tools.cccl_include, tools.headers_digest)
        _start_pch(key, block, options, headers, result.seconds)
    if result.status != 0:
        raise CoopBuildError(compile_error_message(what, arch, result.log, dump, include_paths))
    return result.ltoir


def _plain(text: str, options: Sequence[str], headers: dict[str, bytes]) -> _Compiled:
    result = _compile(text, options, headers)
    stats["nvrtc_runs"] += 1
    stats["nvrtc_seconds"] += result.seconds
    return result


@contextlib.contextmanager
def _toolchain_and_first_compile(source: str, arch: str) -> Iterator[tuple[Any, _Compiled | None]]:
    """``toolchain()``, and when that has to read every header (an empty cache), NVRTC at the same time.

    Hashing CCCL's ~2,400 headers takes ~60 ms, which the first build of a process with an empty cache would
    otherwise wait for before NVRTC; NVRTC releases the GIL, so the digest runs in a thread beside it. The compile
    is used if the lookup that follows misses (with an empty cache it does). Concurrent first builds of the same
    source in other processes wait on one lock, held until the caller stored its entry, as cold builds of one key
    do; they then find the digest and the entry ready (the tree's digest manifest is written last, so that no
    process takes the ordinary path before then).
    """
    include, cuda_include, nvrtc_version = locate()  # version errors first, before any NVRTC run
    if not digest_is_cold(include):
        yield toolchain(), None
        return
    paths = [str(include)] + ([str(cuda_include)] if cuda_include else [])
    text, block = compile_text(source)
    options = _options(arch, paths)
    with cache.lock(cache.key("first build", text, options, list(nvrtc_version))), manifests_deferred():
        if not digest_is_cold(include):  # another process digested the tree while this one waited
            yield toolchain(), None
            return
        resolved: dict[str, Any] = {}
        headers = header_sources(block, include, _EARLY)

        def resolve() -> None:
            try:
                resolved["tools"] = toolchain()
            except BaseException as exc:  # noqa: BLE001 - re-raised in the building thread below
                resolved["error"] = exc
                return
            if resolved["tools"].include_paths() == paths:
                _first_block_pch(block, options, headers, resolved["tools"])

        worker = threading.Thread(target=resolve, name="cuda-coop-toolchain", daemon=True)
        worker.start()
        try:
            compiled = _plain(text, options, headers)
        finally:
            worker.join()
        if "error" in resolved:
            raise resolved["error"]
        tools = resolved["tools"]
        if _header_generation.get(str(include)) == _EARLY:  # what was read is the tree that was just digested
            _header_generation[str(include)] = tools.headers_digest
        yield tools, (compiled if tools.include_paths() == paths else None)


# ---------------------------------------------------------------- precompiled headers (one process)

PCH_STOP = "namespace cuda_coop_pch_stop {}"
PCH_MIN_SECONDS = 0.15  # a plain compile shorter than this parses too little for a PCH to pay
PCH_MIN_HEADER_BYTES = 1 << 18  # nor does a block reaching fewer header bytes (CUB blocks reach 2-6 MB)
PCH_FIRST_ESTIMATE = 0.3  # seconds a first block's plain compile is assumed to take until it is measured
PCH_MAX_FILES = 3  # kept per process (75-150 MB each for CUB blocks); the least recently used one goes
PCH_MAX_CREATIONS = 16  # per process: a workload that keeps changing headers stops paying for new PCHs
PCH_CREATE_FACTOR = 1.5  # making a PCH takes about this many plain compiles of its block (updated as they are made)
PCH_NICE = 10  # niceness of the thread that makes PCHs
_PCH_USED = "using precompiled header file"  # NVRTC's --pch-messages line when it used the PCH
_PCH_MIN_NVRTC = (12, 8)  # the first NVRTC with --create-pch/--use-pch


@dataclass
class _Pch:
    path: Path
    plain_seconds: float  # the plain compile of this block that asked for it
    started: float  # time.monotonic() when its creation began
    state: str = "pending"  # pending, then ready or failed
    signature: tuple[int, ...] | None = None  # os.lstat of the finished file: any later write changes it
    thread: threading.Thread | None = None
    last_used: float = 0.0


class _PchStore:
    """This process's PCHs by key (``#include`` block, NVRTC options, toolchain)."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.lock = threading.Lock()  # guards the table
        self.heap = threading.Lock()  # NVRTC has one PCH heap: one compile at a time may make or use a PCH
        self.entries: dict[str, _Pch] = {}
        self.directory: Path | None = None
        self.owner = os.getpid()
        self.creations = 0
        self.seen: dict[str, int] = {}  # plain compiles per key, most recent last
        self.create_factor = PCH_CREATE_FACTOR
        self.off: str | None = None  # why PCHs are off for the rest of the process


_pch = _PchStore()


def _pch_enabled(tools: Any) -> bool:
    """PCHs follow the cache (CUDA_COOP_DISABLE_CACHE writes nothing) and need NVRTC 12.8 or newer."""
    return _pch.off is None and tuple(tools.nvrtc_version) >= _PCH_MIN_NVRTC and not _config.cache_disabled()


def _pch_key(block: str, options: Sequence[str], tools: Any) -> str:
    return hashlib.sha256(json.dumps([block, list(options), tools.key_parts()], sort_keys=True).encode()).hexdigest()


def _signature(path: Path) -> tuple[int, ...] | None:
    try:
        st = os.lstat(path)
    except OSError:
        return None
    if not stat.S_ISREG(st.st_mode) or st.st_size == 0:
        return None
    return (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev)


def _drop(key: str, entry: _Pch) -> None:
    with _pch.lock:
        if _pch.entries.get(key) is entry:
            del _pch.entries[key]
    with contextlib.suppress(OSError):
        entry.path.unlink()


def _usable_pch(key: str) -> _Pch | None:
    """The ready PCH of ``key`` with the heap lock held, or None: a pending one is awaited only as long as
    waiting and using it stays cheaper than a plain compile, and a file changed since it was made is never
    handed to NVRTC (a truncated PCH crashes it)."""
    with _pch.lock:
        entry = _pch.entries.get(key)
    if entry is None:
        return None
    if entry.state == "pending" and entry.thread is not None:
        # Waiting for it, up to a little more than a plain compile, beats compiling beside the creation, which
        # competes with it for the CPU and takes about as long as the wait.
        remaining = entry.started + _pch.create_factor * entry.plain_seconds - time.monotonic()
        if remaining > 1.5 * entry.plain_seconds:
            return None
        entry.thread.join(max(remaining, 0.0) + 0.5 * entry.plain_seconds)
    # Another block's PCH being made holds the heap (at low priority): compiling without waiting for it is cheaper.
    if entry.state != "ready" or not _pch.heap.acquire(blocking=False):
        return None
    if _signature(entry.path) != entry.signature:  # checked with the heap held: eviction also needs it
        _pch.heap.release()
        _drop(key, entry)
        return None
    entry.last_used = time.monotonic()
    return entry


def _compile_using(entry: _Pch, key: str, text: str, options: Sequence[str],
                   headers: dict[str, bytes]) -> _Compiled | None:
    """Compile with ``entry`` (whose heap lock the caller took); None after a library failure around it."""
    try:
        result = _compile(text, [*options, f"--use-pch={entry.path}", "--pch-messages=true"], headers,
                          want_log=True)
    except CoopBuildError as exc:  # a binding or library failure: no more PCHs; the plain compile reports its own
        _pch.off = f"compile with a PCH failed: {exc}"
        _reject(key, entry, str(exc))
        return None
    finally:
        _pch.heap.release()
    stats["nvrtc_runs"] += 1
    stats["nvrtc_seconds"] += result.seconds
    if result.status == 0:
        if _PCH_USED in result.log:
            stats["pch_used"] += 1
        else:  # NVRTC compiled without it (another heap address, an incompatible file): a valid result
            _reject(key, entry, result.log)
    return result


def _reject(key: str, entry: _Pch, why: str) -> None:
    stats["pch_rejected"] += 1
    _log.debug("cuda.coop: not using precompiled header %s again: %s", entry.path, why.strip()[:500])
    _drop(key, entry)


def _first_block_pch(block: str, options: Sequence[str], headers: dict[str, bytes], tools: Any) -> None:
    """The first heavy ``#include`` block of a process has its PCH made beside its first compile, so that it is
    ready soon after that build (and a process that exits right after it waits the least for it)."""
    try:
        if (not block or _pch.creations or not _pch_enabled(tools)
                or sum(len(h) for h in headers.values()) < PCH_MIN_HEADER_BYTES):
            return
        _start_pch(_pch_key(block, options, tools), block, options, headers, PCH_FIRST_ESTIMATE)
    except Exception as exc:  # noqa: BLE001 - never a failed build because of a PCH
        _log.debug("cuda.coop: no precompiled header for the first block: %s", exc)


def _note_plain_seconds(key: str, seconds: float) -> None:
    """A PCH started before its block's plain compile finished learns how long that compile took."""
    with _pch.lock:
        entry = _pch.entries.get(key)
        if entry is not None and entry.state == "pending" and entry.plain_seconds == PCH_FIRST_ESTIMATE:
            entry.plain_seconds = seconds


def _start_pch(key: str, block: str, options: Sequence[str], headers: dict[str, bytes],
               plain_seconds: float) -> None:
    """Make this block's PCH in a background thread, unless one exists or is being made (one at a time).

    The first block of a process gets one at once (a process usually builds several specialisations of its
    kernels; see ``_first_block_pch``); any other block only when it is compiled without a PCH a second time, so
    that a process that builds many different kernels once each (a test suite) does not make PCHs nothing uses.
    """
    with _pch.lock:
        _pch.seen[key] = _pch.seen.pop(key, 0) + 1
        while len(_pch.seen) > 256:
            del _pch.seen[next(iter(_pch.seen))]
        if key in _pch.entries or _pch.creations >= PCH_MAX_CREATIONS or _pch.off is not None:
            return
        if _pch.creations and _pch.seen[key] < 2:
            return
        if any(e.state == "pending" for e in _pch.entries.values()):
            return
        if _pch.directory is None or not _pch.directory.is_dir():  # (``cache clear`` may have removed it)
            _pch.directory = cache.pch_directory()
            if _pch.directory is None:
                _pch.off = "no usable cache directory"
                return
        entry = _Pch(_pch.directory / f"{key[:32]}.pch", plain_seconds, time.monotonic())
        # Not a daemon: interpreter exit waits for it instead of unloading NVRTC under a running compile.
        entry.thread = threading.Thread(target=_create_pch, args=(key, entry, block, list(options), headers),
                                        name="cuda-coop-pch", daemon=False)
        _pch.entries[key] = entry
        _pch.creations += 1
    entry.thread.start()


def _create_pch(key: str, entry: _Pch, block: str, options: list[str], headers: dict[str, bytes]) -> None:
    part = entry.path.with_name(entry.path.name + ".part")  # renamed into place once NVRTC finished it
    ready = False
    with contextlib.suppress(AttributeError, OSError):  # Linux: a thread's own niceness; elsewhere full priority
        # On a busy machine the builds (and other processes) come first; an idle core still makes it at full speed.
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), PCH_NICE)
    try:
        with _pch.heap:
            _evict()
            start = time.perf_counter()
            result = _compile(f"{block}{PCH_STOP}\n", [*options, f"--create-pch={part}", "--pch-messages=false"],
                              headers, creating=True)
            seconds = time.perf_counter() - start
            stats["pch_create_seconds"] += seconds
            _pch.create_factor = 0.5 * _pch.create_factor + 0.5 * seconds / max(entry.plain_seconds, 1e-3)
        if result.status == 0 and result.pch_status == 0 and _signature(part) is not None:
            os.chmod(part, 0o600)  # NVRTC honours the umask; the directory is private already
            os.replace(part, entry.path)
            entry.signature = _signature(entry.path)
            ready = entry.signature is not None
        else:  # e.g. NVRTC_ERROR_PCH_CREATE_HEAP_EXHAUSTED (14) for a block larger than the heap
            _log.debug("cuda.coop: no precompiled header for this block (status %s, PCH status %s)",
                       result.status, result.pch_status)
    except OSError as exc:  # e.g. ``cache clear`` removed the directory meanwhile: no PCH for this block
        _log.debug("cuda.coop: making a precompiled header failed: %s", exc)
    except Exception as exc:  # noqa: BLE001 - a PCH is an optimisation: any failure just leaves builds plain
        _pch.off = f"making a PCH failed: {exc}"  # e.g. bindings without nvrtcGetPCHCreateStatus
        _log.debug("cuda.coop: making a precompiled header failed: %s", exc)
    with contextlib.suppress(OSError):
        part.unlink()
    with _pch.lock:
        entry.state = "ready" if ready else "failed"
        entry.last_used = time.monotonic()
        if ready:
            stats["pch_created"] += 1
    if not ready:
        with contextlib.suppress(OSError):
            entry.path.unlink()


def _evict() -> None:
    """Keep at most PCH_MAX_FILES - 1 ready PCHs before making one more (called with the heap lock held)."""
    with _pch.lock:
        ready = sorted(((e.last_used, k) for k, e in _pch.entries.items() if e.state == "ready"))
        doomed = [(k, _pch.entries[k]) for _, k in ready[:max(0, len(ready) - (PCH_MAX_FILES - 1))]]
        for k, _ in doomed:
            _pch.seen[k] = 0  # made again only if it comes back twice
    for k, entry in doomed:
        _drop(k, entry)


def wait_for_pch(timeout: float | None = None) -> None:
    """Wait for the PCHs being made in the background (benchmarks and tests)."""
    with _pch.lock:
        threads = [e.thread for e in _pch.entries.values() if e.thread is not None]
    for thread in threads:
        thread.join(timeout)


def forget_pch() -> None:
    """Drop this process's PCHs and their directory (waiting for those being made) and allow new ones (tests)."""
    wait_for_pch()
    with _pch.lock:
        directory, _pch.directory = _pch.directory, None
        _pch.entries.clear()
        _pch.seen.clear()
        _pch.creations = 0
        _pch.off = None
    if directory is not None:
        cache.remove_pch_directory(directory)


def _remove_pch_directory() -> None:
    """At exit (after the interpreter joined the creation threads): this process's PCH directory goes."""
    if _pch.directory is not None and _pch.owner == os.getpid():
        cache.remove_pch_directory(_pch.directory)


atexit.register(_remove_pch_directory)
# A forked child shares NVRTC's heap address but not the parent's threads or directory: it starts afresh (and
# must not wait on a lock a parent thread held at the fork).
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_pch.reset)


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
    then run NVRTC and store. The source is dumped on both paths, after the lookup. The one exception: when the
    key needs a full header digest (an empty cache), NVRTC already ran beside it, and its result is used on a miss.
    """
    source = translation_unit(providers)
    try:
        with _toolchain_and_first_compile(source, arch) as (tools, early):
            return _build(providers, source, arch, what, tools, early)
    except CoopBuildError as exc:
        message = str(exc)
        if message.startswith("cuda.coop could not build"):
            raise
        raise CoopBuildError(f"cuda.coop could not build {what} for {arch}: {message}") from exc


def _build(providers: list[Provider], source: str, arch: str, what: str, tools: Any,
           early: _Compiled | None) -> BuildResult:
    wanted = frozenset(p.symbol for p in providers if p.scratch_type is not None)
    entry = cache_key(source, arch, tools)
    hit = cache.load(entry, wanted)
    if hit is None:
        with cache.lock(entry):
            hit = cache.load(entry, wanted)
            if hit is None:
                dump = _dump(source)
                ltoir = _nvrtc_ltoir(source, arch, tools, what, dump, early)
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
