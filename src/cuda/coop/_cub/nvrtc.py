"""NVRTC to LTO-IR, and scratch size discovery without running anything.

Parsing the CCCL headers is nearly all of an NVRTC run. Three things keep builds short (issue 12, item 2):

* The CCCL headers a TU reaches go to NVRTC from memory (``header_sources``), not through its file reads.
* The first build of a process with an empty cache runs NVRTC while the header tree is digested for the cache key
  (``_toolchain_and_first_compile``) instead of after it.
* Precompiled headers, per process (``pch``): later specialisations with the same ``#include`` block skip parsing
  it; any failure around one means a plain compile, never a failed build or another result.
"""
from __future__ import annotations

import contextlib
import hashlib
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
from . import cache, pch, program
from .program import stats
from .provider import Provider, translation_unit
from .toolchain import (
    OWN_INCLUDE,
    digest_is_cold,
    include_paths_of,
    library_call,
    locate,
    manifests_deferred,
    toolchain,
)

# Parsing the CCCL headers is nearly all of an NVRTC run. Under NVRTC, CCCL sets
# _CCCL_META_UNROLL_LIMIT to 16 instead of nvcc's 10, and the unrolled type-list folds of
# cuda/std/__type_traits/type_list.h then take ~0.9 s to parse (NVRTC 13.0 and 13.5, CCCL 3.6).
# Passing nvcc's value cuts a run ~2.8x; the limit only bounds how far metaprograms unroll
# before recursing: same types, same code. (C++20 would parse ~25% faster still, but the toolchain is
# C++17; docs: troubleshooting, "The C++ toolchain".)
OPTIONS = ("-std=c++17", "-rdc=true", "-dlto", "-DCUB_DISABLE_BF16_SUPPORT", "-D_CCCL_META_UNROLL_LIMIT=10")

@dataclass
class BuildResult:
    ltoir: bytes
    source: str
    scratch: dict[str, tuple[int, int]] = field(default_factory=dict)
    from_cache: bool = False
    dump_path: str | None = None


_log = logging.getLogger("cuda.coop")
_dump_warned: set[str] = set()


def dump_source(source: str, backend: str) -> str | None:
    """Write the TU to CUDA_COOP_SOURCE_DUMP_DIR as ``cuda_coop_<backend>_<hash>.cu``; an unusable directory is one
    warning, never a failed build."""
    directory = _config.source_dump_dir()
    if directory is None:
        return None
    path = directory / f"cuda_coop_{backend}_{hashlib.sha256(source.encode()).hexdigest()[:16]}.cu"
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
    return f'{block}{pch.PCH_STOP}\n#line 1 "cuda_coop.cu"\n{source}', block


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
_OWN_PREFIX = "cuda_coop/"  # include names of cuda-coop's own headers (OWN_INCLUDE), read with CCCL's
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
            if (root, name) not in files:  # cuda-coop's own headers from its folder, the others from CCCL's
                own = name.startswith(_OWN_PREFIX)
                files[(root, name)] = _read_header(str(OWN_INCLUDE) if own else root, name)
            entry = files[(root, name)]
            if entry is not None:
                found.append(name)
                todo.extend(entry[1])
        names = tuple(found)
        if generation is not None:
            _header_sets[(root, block)] = names
    return {name: files[(root, name)][0] for name in names}  # type: ignore[index]


def _nvrtc_ltoir(source: str, arch: str, tools: Any, what: str, dump: str | None,
                 early: program.Compiled | None = None) -> bytes:
    """LTO-IR of ``source``: with this process's PCH of its headers when there is one, else a plain compile (or
    ``early``, the plain compile that ran beside the toolchain resolution), after which a PCH is made."""
    include_paths = tools.include_paths()
    text, block = compile_text(source)
    options = _options(arch, include_paths)
    headers = header_sources(block, tools.cccl_include, tools.headers_digest) if early is None else {}
    key = pch.block_key(block, options, tools) if block and pch.enabled(tools) else None
    entry = pch.usable(key) if key is not None and early is None else None
    failed_with_pch = None
    if entry is not None and key is not None:  # an entry comes only with its key
        result = pch.compile_using(entry, key, text, options, headers)
        if result is not None and result.status == 0:
            return result.ltoir
        failed_with_pch = result
    elif key is not None and early is None:
        pch.first_block(block, options, headers, tools)
    # Without a PCH; after a failure with one too, so that what the user sees never depends on a PCH.
    result = early if early is not None else _plain(text, options, headers)
    if key is not None:
        pch.note_plain_seconds(key, result.seconds)
    if failed_with_pch is not None:
        if result.status == 0 and key is not None and entry is not None:  # the PCH made it fail: never again
            pch.reject(key, entry, failed_with_pch.log)
    elif result.status == 0 and key is not None and result.seconds >= pch.PCH_MIN_SECONDS:
        if not headers:
            headers = header_sources(block, tools.cccl_include, tools.headers_digest)
        pch.make_in_background(key, block, options, headers, result.seconds)
    if result.status != 0:
        raise CoopBuildError(compile_error_message(what, arch, result.log, dump, include_paths))
    return result.ltoir


def _plain(text: str, options: Sequence[str], headers: dict[str, bytes]) -> program.Compiled:
    result = program.run_program(text, options, headers)
    stats["nvrtc_runs"] += 1
    stats["nvrtc_seconds"] += result.seconds
    return result


@contextlib.contextmanager
def _toolchain_and_first_compile(source: str, arch: str) -> Iterator[tuple[Any, program.Compiled | None]]:
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
    paths = include_paths_of(include, cuda_include)
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
                pch.first_block(block, options, headers, resolved["tools"])

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


def cache_key(source: str, arch: str, tools: Any, backend: str) -> str:
    """The provider cache key (docs: troubleshooting, "The cache of generated code"): schema, version, own code, source,
    target, toolchain, options, headers, and the backend whose kernel links the code (its ABI for callbacks is its
    own)."""
    return cache.key(__version__, source, arch, OPTIONS, tools.key_parts(), backend)


def build(providers: list[Provider], arch: str, what: str, *, backend: str) -> BuildResult:
    """Compile all of a kernel's providers as one translation unit, through the cache. ``backend``: the tag of the
    backend whose kernel links the code (in the cache key and the dump's file name).

    Look up first; on a miss take the per-key lock, look again (another process may just have built it), and only
    then run NVRTC and store. The source is dumped on both paths, after the lookup. The one exception: when the
    key needs a full header digest (an empty cache), NVRTC already ran beside it, and its result is used on a miss.
    """
    source = translation_unit(providers)
    try:
        with _toolchain_and_first_compile(source, arch) as (tools, early):
            return _build(providers, source, arch, what, tools, early, backend)
    except CoopBuildError as exc:
        message = str(exc)
        if message.startswith("cuda.coop could not build"):
            raise
        raise CoopBuildError(f"cuda.coop could not build {what} for {arch}: {message}") from exc


def _build(providers: list[Provider], source: str, arch: str, what: str, tools: Any,
           early: program.Compiled | None, backend: str) -> BuildResult:
    wanted = frozenset(p.symbol for p in providers if p.scratch_type is not None)
    entry = cache_key(source, arch, tools, backend)
    hit = cache.load(entry, wanted)
    if hit is None:
        with cache.lock(entry):
            hit = cache.load(entry, wanted)
            if hit is None:
                dump = dump_source(source, backend)
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
    return BuildResult(ltoir, source, {k: (v[0], v[1]) for k, v in meta["scratch"].items()}, True,
                       dump_source(source, backend))
