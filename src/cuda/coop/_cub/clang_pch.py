"""Precompiled headers for the bitcode route's clang, per process (issue 41, step 6).

Every clang run parses its TU's ``#include`` block again (and the shim its command line includes first): about
nine tenths of a CUB TU's ~1 s. The second time a process compiles a block, clang makes a PCH of it (about one
compile's time), and that TU and every later one starting with the block use it (``-include-pch``: ~0.1 s). The
bitcode is the same but for the source locations clang records for inline assembly (``!srcloc``, read only by its
diagnostics).

Clang checks a PCH against the options and header files it was made from and refuses one that does not match; a
compile with a PCH that fails for any reason runs again without it, and the PCH is not used again, so what a build
gives or reports never depends on a PCH. Clang's PCHs could serve other processes too, but one is 10-15 MB: like
NVRTC's (``pch.py``) they live in this process's private directory of the cache (``cache.pch_directory``), at most
``MAX_FILES`` of them, and go at exit. With the cache off, or no usable cache directory, there are none.
"""
from __future__ import annotations

import atexit
import contextlib
import hashlib
import json
import logging
import os
import subprocess
import threading
import time
from collections.abc import Sequence
from pathlib import Path

from .. import _config
from . import cache

_log = logging.getLogger("cuda.coop")

MAX_FILES = 8  # kept per process (10-15 MB each for CUB blocks); the least recently used one goes
MAKE_AT = 2  # the compile of a block that first makes its PCH: a block compiled once pays nothing for it
TIMEOUT = 300.0  # seconds for making one; longer means no PCH for the block


class _Store:
    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.lock = threading.Lock()
        self.directory: Path | None = None
        self.owner = os.getpid()
        self.seen: dict[str, int] = {}  # compiles per key, most recent last
        self.ready: dict[str, tuple[Path, float]] = {}  # key -> (file, last used)
        self.making: set[str] = set()
        self.refused: set[str] = set()  # keys clang failed to make or use a PCH for
        self.off: str | None = None
        self.stats = {"made": 0, "used": 0, "refused": 0}


_store = _Store()


def split(text: str) -> tuple[str, str]:
    """(the leading ``#include`` lines of ``text``, the rest)."""
    lines = text.split("\n")
    count = 0
    while count < len(lines) and lines[count].startswith("#include"):
        count += 1
    return "\n".join(lines[:count]), "\n".join(lines[count:])


def _key(block: str, argv: Sequence[str], output: str) -> str:
    options = [arg for arg in argv if arg != output]
    return hashlib.sha256(json.dumps([block, options]).encode()).hexdigest()


def usable(block: str, argv: Sequence[str], output: str) -> tuple[str, Path] | None:
    """The (key, file) of the PCH to compile a TU starting with ``block`` with, by ``argv`` (the command that writes
    ``output`` from standard input); made now when this is the block's MAKE_AT-th compile; None to compile without."""
    if not block or _store.off is not None or _config.cache_disabled():
        return None
    key = _key(block, argv, output)
    with _store.lock:
        ready = _store.ready.get(key)
        if ready is not None:
            _store.ready[key] = (ready[0], time.monotonic())
            return key, ready[0]
        _store.seen[key] = _store.seen.pop(key, 0) + 1
        while len(_store.seen) > 256:
            del _store.seen[next(iter(_store.seen))]
        if _store.seen[key] < MAKE_AT or key in _store.making or key in _store.refused:
            return None
        _store.making.add(key)
    try:
        path = _make(key, block, argv, output)
    finally:
        with _store.lock:
            _store.making.discard(key)
    return (key, path) if path is not None else None


def _directory() -> Path | None:
    with _store.lock:
        if _store.directory is None or not _store.directory.is_dir():  # (``cache clear`` may have removed it)
            _store.directory = cache.pch_directory()
            if _store.directory is None:
                _store.off = "no usable cache directory"
        return _store.directory


def _make(key: str, block: str, argv: Sequence[str], output: str) -> Path | None:
    directory = _directory()
    if directory is None:
        return None
    _evict()
    path = directory / f"{key[:32]}.pch"
    part = path.with_name(path.name + ".part")
    command = [part.as_posix() if arg == output else arg for arg in argv]
    command[-1:-1] = ["-Xclang", "-emit-pch"]  # before the input ("-")
    try:
        done = subprocess.run(command, input=f"{block}\n".encode(), capture_output=True, timeout=TIMEOUT,
                              cwd=directory)
        made = done.returncode == 0 and part.is_file()
        if made:
            os.replace(part, path)
        else:
            _log.debug("cuda.coop: clang made no precompiled header: %s", done.stderr.decode(errors="replace")[:500])
    except (OSError, subprocess.TimeoutExpired) as exc:
        _log.debug("cuda.coop: clang made no precompiled header: %s", exc)
        made = False
    with contextlib.suppress(OSError):
        part.unlink()
    with _store.lock:
        if not made:
            _store.refused.add(key)
            return None
        _store.ready[key] = (path, time.monotonic())
        _store.stats["made"] += 1
    return path


def with_pch(argv: Sequence[str], path: Path) -> list[str]:
    """``argv`` compiling with the PCH at ``path``."""
    return [*argv[:-1], "-Xclang", "-include-pch", "-Xclang", path.as_posix(), argv[-1]]


def used() -> None:
    with _store.lock:
        _store.stats["used"] += 1


def refuse(key: str, why: str) -> None:
    """A compile with the PCH of ``key`` failed: the TU is compiled without it, and the PCH goes."""
    _log.debug("cuda.coop: not using a clang precompiled header again: %s", why.strip()[:500])
    with _store.lock:
        _store.refused.add(key)
        _store.stats["refused"] += 1
        ready = _store.ready.pop(key, None)
    if ready is not None:
        with contextlib.suppress(OSError):
            ready[0].unlink()


def _evict() -> None:
    """Keep at most MAX_FILES - 1 PCHs before making one more."""
    with _store.lock:
        ordered = sorted(_store.ready.items(), key=lambda item: item[1][1])
        doomed = ordered[:max(0, len(ordered) - (MAX_FILES - 1))]
        for key, _ in doomed:
            del _store.ready[key]
            _store.seen[key] = 0  # made again only if it comes back MAKE_AT times
    for _, (path, _) in doomed:
        with contextlib.suppress(OSError):
            path.unlink()


def stats() -> dict[str, int]:
    with _store.lock:
        return dict(_store.stats)


def forget() -> None:
    """Drop this process's clang PCHs, their directory and counts (tests)."""
    with _store.lock:
        directory, _store.directory = _store.directory, None
        _store.ready.clear()
        _store.seen.clear()
        _store.refused.clear()
        _store.off = None
        _store.stats = dict.fromkeys(_store.stats, 0)
    if directory is not None:
        cache.remove_pch_directory(directory)


def _remove_directory() -> None:
    if _store.directory is not None and _store.owner == os.getpid():
        cache.remove_pch_directory(_store.directory)


atexit.register(_remove_directory)
if hasattr(os, "register_at_fork"):  # a forked child starts afresh, as pch.py's store does
    os.register_at_fork(after_in_child=_store.reset)
