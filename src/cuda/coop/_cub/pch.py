"""Precompiled headers (PCH) for NVRTC, per process (issue 12, item 2).

A TU that starts with the ``#include`` block of an earlier one skips parsing it by using a PCH made from that block.
NVRTC's PCH files record the address of its PCH heap, so only the process that made one can use it (in another
process NVRTC warns, 20282, and compiles more slowly than without it): PCHs live in a private per-process directory
of the cache and go at exit. Making one costs more than a plain compile, so it never delays a build: a background
thread makes it after a plain compile, and later specialisations with the same headers (another dtype, block or item
count) use it. A PCH that NVRTC rejects, or any failure around one, means a plain compile, never a failed build or
another result (``nvrtc._nvrtc_ltoir`` decides).
"""
from __future__ import annotations

import atexit
import contextlib
import hashlib
import json
import logging
import os
import stat
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import _config
from .._errors import CoopBuildError
from . import cache, program

_log = logging.getLogger("cuda.coop")

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


def enabled(tools: Any) -> bool:
    """PCHs follow the cache (CUDA_COOP_DISABLE_CACHE writes nothing) and need NVRTC 12.8 or newer."""
    return _pch.off is None and tuple(tools.nvrtc_version) >= _PCH_MIN_NVRTC and not _config.cache_disabled()


def block_key(block: str, options: Sequence[str], tools: Any) -> str:
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


def usable(key: str) -> _Pch | None:
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


def compile_using(entry: _Pch, key: str, text: str, options: Sequence[str],
                   headers: dict[str, bytes]) -> program.Compiled | None:
    """Compile with ``entry`` (whose heap lock the caller took); None after a library failure around it."""
    try:
        result = program.run_program(text, [*options, f"--use-pch={entry.path}", "--pch-messages=true"], headers,
                          want_log=True)
    except CoopBuildError as exc:  # a binding or library failure: no more PCHs; the plain compile reports its own
        _pch.off = f"compile with a PCH failed: {exc}"
        reject(key, entry, str(exc))
        return None
    finally:
        _pch.heap.release()
    program.stats["nvrtc_runs"] += 1
    program.stats["nvrtc_seconds"] += result.seconds
    if result.status == 0:
        if _PCH_USED in result.log:
            program.stats["pch_used"] += 1
        else:  # NVRTC compiled without it (another heap address, an incompatible file): a valid result
            reject(key, entry, result.log)
    return result


def reject(key: str, entry: _Pch, why: str) -> None:
    program.stats["pch_rejected"] += 1
    _log.debug("cuda.coop: not using precompiled header %s again: %s", entry.path, why.strip()[:500])
    _drop(key, entry)


def first_block(block: str, options: Sequence[str], headers: dict[str, bytes], tools: Any) -> None:
    """The first heavy ``#include`` block of a process has its PCH made beside its first compile, so that it is
    ready soon after that build (and a process that exits right after it waits the least for it)."""
    try:
        if (not block or _pch.creations or not enabled(tools)
                or sum(len(h) for h in headers.values()) < PCH_MIN_HEADER_BYTES):
            return
        make_in_background(block_key(block, options, tools), block, options, headers, PCH_FIRST_ESTIMATE)
    except Exception as exc:  # noqa: BLE001 - never a failed build because of a PCH
        _log.debug("cuda.coop: no precompiled header for the first block: %s", exc)


def note_plain_seconds(key: str, seconds: float) -> None:
    """A PCH started before its block's plain compile finished learns how long that compile took."""
    with _pch.lock:
        entry = _pch.entries.get(key)
        if entry is not None and entry.state == "pending" and entry.plain_seconds == PCH_FIRST_ESTIMATE:
            entry.plain_seconds = seconds


def make_in_background(key: str, block: str, options: Sequence[str], headers: dict[str, bytes],
               plain_seconds: float) -> None:
    """Make this block's PCH in a background thread, unless one exists or is being made (one at a time).

    The first block of a process gets one at once (a process usually builds several specialisations of its
    kernels; see ``first_block``); any other block only when it is compiled without a PCH a second time, so
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
            result = program.run_program(f"{block}{PCH_STOP}\n",
                                         [*options, f"--create-pch={part}", "--pch-messages=false"], headers,
                                         creating=True)
            seconds = time.perf_counter() - start
            program.stats["pch_create_seconds"] += seconds
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
            program.stats["pch_created"] += 1
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
