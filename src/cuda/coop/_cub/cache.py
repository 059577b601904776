"""Persistent, content-addressed provider cache (docs: troubleshooting, "The cache of generated code"). A bad entry is a
miss, never an error.

* Entries are read only from regular files (``lstat`` + ``O_NOFOLLOW|O_NONBLOCK`` + ``fstat``), and only if their
  metadata is complete, well-typed and consistent with the stored LTO-IR (its SHA-256) and with the scratch symbols
  the caller expects.
* A cache directory that other users can write (group/world-writable, owned by another uid, or created into such a
  parent) is not used: one warning per directory and process, then builds run on the in-process memo only.
* ``lock(key)`` serialises cold builds of one key across processes (``flock`` on ``<key>.lock``), with a timeout after
  which the build runs anyway.
* ``pch_directory()`` gives a process its own ``pch-<pid>-<random>/`` subdirectory for NVRTC precompiled headers,
  which only the process that made them can use; it goes at exit, and a later process removes those of dead ones.
"""
from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import logging
import os
import re
import secrets
import stat
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any, Iterator, TypeAlias

from .. import _config

try:  # POSIX only; without it builds simply run unlocked
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

SCHEMA = 3
_MAGIC = b"CUDACOOP1\n"
_MAX_ENTRY_BYTES = 1 << 30
LOCK_TIMEOUT = 60.0  # seconds a process waits for another one building the same key
_LOCK_POLL = 0.05
_log = logging.getLogger("cuda.coop")
_writes_failed = False
# An entry's metadata: a JSON object whose shape valid_meta checks before it is used.
Meta: TypeAlias = dict[str, Any]
# A file-digest manifest: a JSON object, read back unchecked (its user checks each value).
Manifest: TypeAlias = dict[str, object]

_memo: dict[str, tuple[bytes, Meta]] = {}
_warned_dirs: set[str] = set()


def key(*parts: object) -> str:
    """SHA-256 of a versioned encoding of everything that changes the output."""
    return hashlib.sha256(json.dumps([SCHEMA, *parts], sort_keys=True, default=str).encode()).hexdigest()


# ---------------------------------------------------------------- directory safety

def _warn_unsafe(directory: Path, reason: str) -> None:
    if str(directory) in _warned_dirs:
        return
    _warned_dirs.add(str(directory))
    message = (
        f"cuda.coop is not using the provider cache directory {directory}: {reason}. Builds in this process run "
        "without the persistent cache. Make the directory private (owned by you, chmod 700) or set XDG_CACHE_HOME "
        "to a private location."
    )
    _log.warning("%s", message)
    warnings.warn(message, UserWarning, stacklevel=4)


def _ownership_problem(st: os.stat_result, what: str, *, allow_root: bool, allow_sticky: bool) -> str | None:
    uid = os.geteuid() if hasattr(os, "geteuid") else None
    if uid is not None and st.st_uid != uid and not (allow_root and st.st_uid == 0):
        return f"{what} is owned by uid {st.st_uid}, not by this user (uid {uid})"
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH) and not (allow_sticky and st.st_mode & stat.S_ISVTX):
        kind = "world-writable" if st.st_mode & stat.S_IWOTH else "group-writable"
        return f"{what} is {kind} (mode {stat.S_IMODE(st.st_mode):o})"
    return None


def _note_write_failure(exc: BaseException) -> None:
    global _writes_failed
    _writes_failed = True
    _log.warning("cuda.coop provider cache write failed (%s); caching disabled for this process", exc)


def _directory(create: bool) -> Path | None:
    """The cache directory when it is safe to use, else None (creating it with mode 0o700 when ``create``)."""
    directory = _config.cache_dir()
    try:
        st = os.stat(directory)
    except FileNotFoundError:
        if not create:
            return None
        # The nearest existing ancestor is the directory we create into: it must not let others swap our tree.
        parent = directory.parent
        while True:
            try:
                pst = os.stat(parent)
                break
            except FileNotFoundError:
                if parent == parent.parent:
                    return None
                parent = parent.parent
            except OSError as exc:
                _note_write_failure(exc)
                return None
        problem = _ownership_problem(pst, f"its parent {parent}", allow_root=True, allow_sticky=True)
        if problem is not None:
            _warn_unsafe(directory, problem)
            return None
        try:
            os.makedirs(directory, mode=0o700, exist_ok=True)
            st = os.stat(directory)
        except OSError as exc:
            _note_write_failure(exc)
            return None
    except OSError as exc:  # e.g. a path component is a file
        if create:
            _note_write_failure(exc)
        return None
    if not stat.S_ISDIR(st.st_mode):
        if create:
            _note_write_failure(NotADirectoryError(errno.ENOTDIR, "not a directory", str(directory)))
        return None
    problem = _ownership_problem(st, "it", allow_root=False, allow_sticky=False)
    if problem is not None:
        _warn_unsafe(directory, problem)
        return None
    return directory


# ---------------------------------------------------------------- entries

def _read_regular(path: Path) -> bytes | None:
    """The bytes of ``path`` if it is a regular file (never opening FIFOs, devices, directories or symlinks)."""
    try:
        st = os.lstat(path)
    except OSError:
        return None
    if not stat.S_ISREG(st.st_mode) or st.st_size > _MAX_ENTRY_BYTES:
        return None
    flags = os.O_RDONLY
    for name in ("O_NONBLOCK", "O_NOFOLLOW", "O_CLOEXEC", "O_BINARY"):
        flags |= getattr(os, name, 0)
    try:
        fd = os.open(path, flags)
    except OSError:
        return None
    try:
        fst = os.fstat(fd)
        if not stat.S_ISREG(fst.st_mode) or (fst.st_dev, fst.st_ino) != (st.st_dev, st.st_ino):
            return None  # swapped between lstat and open
        chunks, total = [], 0
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            total += len(chunk)
            if total > _MAX_ENTRY_BYTES:
                return None
            chunks.append(chunk)
        return b"".join(chunks)
    except OSError:
        return None
    finally:
        os.close(fd)


def _is_int(value: object) -> bool:
    return type(value) is int  # bool is not a size


def _scratch_ok(scratch: object) -> bool:
    if not isinstance(scratch, dict):
        return False
    for symbol, value in scratch.items():
        if not isinstance(symbol, str) or not symbol:
            return False
        if not isinstance(value, (list, tuple)) or len(value) != 2:
            return False
        size, align = value
        if not (_is_int(size) and _is_int(align)) or size < 0 or align <= 0 or align & (align - 1):
            return False
    return True


def valid_meta(entry_key: str, payload: bytes, meta: object, expected_scratch: frozenset[str] | set[str] | None,
               *, check_payload: bool = True) -> bool:
    """Whether ``meta`` is a complete, well-typed description of ``payload`` stored under ``entry_key``."""
    if not isinstance(meta, dict):
        return False
    if not _is_int(meta.get("schema")) or meta["schema"] != SCHEMA or meta.get("key") != entry_key:
        return False
    if not _scratch_ok(meta.get("scratch")):
        return False
    symbols = meta.get("symbols", [])
    if not isinstance(symbols, list) or not all(isinstance(s, str) for s in symbols):
        return False
    if expected_scratch is not None and set(meta["scratch"]) != set(expected_scratch):
        return False
    digest = meta.get("ltoir_sha256")
    if not isinstance(digest, str):
        return False
    if check_payload and hashlib.sha256(payload).hexdigest() != digest:
        return False
    return True


def _parse(entry_key: str, data: bytes) -> tuple[bytes, object] | None:
    if not data.startswith(_MAGIC) or len(data) < len(_MAGIC) + 40:
        return None
    body, digest = data[len(_MAGIC):-32], data[-32:]
    if hashlib.sha256(body).digest() != digest:
        return None
    meta_len = int.from_bytes(body[:8], "little")
    if meta_len > len(body) - 8:
        return None
    meta = json.loads(body[8:8 + meta_len])
    return body[8 + meta_len:], meta


def load(entry_key: str, expected_scratch: frozenset[str] | set[str] | None = None) -> tuple[bytes, Meta] | None:
    """The cached (LTO-IR, metadata) of ``entry_key``, or None.

    ``expected_scratch`` is the set of provider symbols whose scratch size the caller needs; an entry whose scratch
    table names other symbols is a miss.
    """
    disabled = _config.cache_disabled()  # read at each compile; a bad spelling raises here, not later
    hit = _memo.get(entry_key)
    if hit is not None:
        return hit if valid_meta(entry_key, hit[0], hit[1], expected_scratch, check_payload=False) else None
    if disabled:
        return None
    directory = _directory(create=False)
    if directory is None:
        return None
    data = _read_regular(directory / f"{entry_key}.bin")
    if data is None:
        return None
    try:
        parsed = _parse(entry_key, data)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None
    if parsed is None or not valid_meta(entry_key, parsed[0], parsed[1], expected_scratch):
        return None
    result = (parsed[0], parsed[1])
    _memo[entry_key] = result  # type: ignore[assignment]  # valid_meta checked that parsed[1] is a Meta
    return result  # type: ignore[return-value]  # as above


def store(entry_key: str, payload: bytes, meta: Meta) -> None:
    payload = bytes(payload)
    meta = {**meta, "schema": SCHEMA, "key": entry_key, "ltoir_sha256": hashlib.sha256(payload).hexdigest()}
    if "scratch" in meta:
        meta["scratch"] = {str(k): [int(v[0]), int(v[1])] for k, v in dict(meta["scratch"]).items()}
    else:
        meta["scratch"] = {}
    _memo[entry_key] = (payload, meta)
    if _config.cache_disabled() or _writes_failed:
        return
    directory = _directory(create=True)
    if directory is None:
        return
    encoded = json.dumps(meta).encode()
    body = len(encoded).to_bytes(8, "little") + encoded + payload
    _write_atomic(directory, f"{entry_key}.bin", _MAGIC + body + hashlib.sha256(body).digest())


_process_files: list[Path] = []  # this process's private directory for payload files, made on first use


def payload_file(payload: bytes, suffix: str) -> Path:
    """``payload`` as a file for a tool that reads a path (e.g. bitcode a kernel compiler links), named by its
    SHA-256: in the cache directory when it is usable, so the path is the same in every process, else in a private
    directory of this process. A file found there is used only when its bytes are ``payload``'s."""
    name = f"{hashlib.sha256(payload).hexdigest()}{suffix}"
    directory = None if _config.cache_disabled() or _writes_failed else _directory(create=True)
    if directory is not None:
        files = directory / "files"
        with contextlib.suppress(OSError):
            files.mkdir(mode=0o700, exist_ok=True)
        if files.is_dir() and not files.is_symlink():
            if _read_regular(files / name) != payload:
                _write_atomic(files, name, payload)
            if _read_regular(files / name) == payload:
                return files / name
    if not _process_files:
        _process_files.append(Path(tempfile.mkdtemp(prefix="cuda_coop_files_")))
        import atexit
        import shutil

        atexit.register(shutil.rmtree, _process_files[0], True)
    path = _process_files[0] / name
    if _read_regular(path) != payload:
        path.write_bytes(payload)
    return path


def _write_atomic(directory: Path, name: str, data: bytes) -> None:
    """Write a temporary file beside ``name``, flush and fsync it, then rename it over ``name``."""
    try:
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=f".{name[:16]}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, directory / name)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except OSError as exc:
        _note_write_failure(exc)


# ---------------------------------------------------------------- file-digest manifests

def load_manifest(name: str) -> Manifest:
    """A JSON object stored beside the entries (e.g. per-file digests of a header tree); {} when absent or bad."""
    if _config.cache_disabled():
        return {}
    directory = _directory(create=False)
    data = _read_regular(directory / f"{name}.json") if directory is not None else None
    try:
        value = json.loads(data) if data else {}
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def manifest_exists(name: str) -> bool:
    """Whether ``load_manifest(name)`` would find a file (without reading it)."""
    if _config.cache_disabled():
        return False
    directory = _directory(create=False)
    return directory is not None and os.path.isfile(directory / f"{name}.json")


def store_manifest(name: str, value: Manifest) -> None:
    if _config.cache_disabled() or _writes_failed:
        return
    directory = _directory(create=True)
    if directory is not None:
        _write_atomic(directory, f"{name}.json", json.dumps(value, sort_keys=True).encode())


@contextlib.contextmanager
def lock(entry_key: str, timeout: float | None = None) -> Iterator[bool]:
    """Hold ``<key>.lock`` in the cache directory while building ``entry_key``; yields whether it is held.

    Waits at most ``timeout`` seconds (LOCK_TIMEOUT by default) for another process building the same key, then
    lets the build run anyway. Without a usable persistent cache this is a no-op.
    """
    if timeout is None:
        timeout = LOCK_TIMEOUT
    fd = None
    held = False
    if fcntl is not None and not _config.cache_disabled() and not _writes_failed:
        directory = _directory(create=True)
        if directory is not None:
            flags = os.O_RDWR | os.O_CREAT
            for name in ("O_NONBLOCK", "O_NOFOLLOW", "O_CLOEXEC"):
                flags |= getattr(os, name, 0)
            try:
                fd = os.open(directory / f"{entry_key}.lock", flags, 0o600)
                if not stat.S_ISREG(os.fstat(fd).st_mode):
                    os.close(fd)
                    fd = None
            except OSError:
                fd = None
    if fd is not None:
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                held = True
                break
            except OSError as exc:
                if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                    break  # e.g. ENOLCK: the file system has no locks
                if time.monotonic() >= deadline:
                    _log.warning("cuda.coop waited %.0f s for another process building %s; building anyway",
                                 timeout, entry_key[:16])
                    break
                time.sleep(_LOCK_POLL)
    try:
        yield held
    finally:
        if fd is not None:
            if held:
                with contextlib.suppress(OSError):
                    fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)


def forget_memo() -> None:
    """Drop the in-process memo (tests use it to force disk reads)."""
    _memo.clear()


# The inventory of the directory and its clearing (python -m cuda.coop cache): cache_inventory.py.
# A process's precompiled-header directory and the files NVRTC and clang write there (pch.py, clang_pch.py).
_PCH_DIR_NAME = re.compile(r"pch-(\d+)-[0-9a-f]{8}")
_PCH_FILE_NAME = re.compile(r"[0-9a-f]{32}\.pch(?:\.part)?")


# ---------------------------------------------------------------- precompiled-header directories

def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # EPERM: it exists (another user's); anything else: do not guess it is gone
        return True
    return True


def _pch_directories(directory: Path) -> list[tuple[Path, bool]]:
    """This user's ``pch-<pid>-<random>`` directories (never links) and whether their process still runs."""
    found = []
    uid = os.geteuid() if hasattr(os, "geteuid") else None
    try:
        names = sorted(os.listdir(directory))
    except OSError:
        return []
    for name in names:
        match = _PCH_DIR_NAME.fullmatch(name)
        if not match:
            continue
        try:
            st = os.lstat(directory / name)
        except OSError:
            continue
        if stat.S_ISDIR(st.st_mode) and (uid is None or st.st_uid == uid):
            found.append((directory / name, _pid_alive(int(match.group(1)))))
    return found


def _pch_files(sub: Path) -> list[tuple[Path, os.stat_result]]:
    """The regular files with precompiled-header names in one PCH directory."""
    files = []
    try:
        names = sorted(os.listdir(sub))
    except OSError:
        return []
    for name in names:
        try:
            st = os.lstat(sub / name)
        except OSError:
            continue
        if _PCH_FILE_NAME.fullmatch(name) and stat.S_ISREG(st.st_mode):
            files.append((sub / name, st))
    return files


def remove_pch_directory(sub: Path) -> None:
    """Delete one PCH directory: the files NVRTC wrote there, then the directory if that emptied it."""
    for path, _ in _pch_files(sub):
        with contextlib.suppress(OSError):
            path.unlink()
    with contextlib.suppress(OSError):
        sub.rmdir()


def pch_directory() -> Path | None:
    """A new private directory for this process's precompiled headers; None when the cache is off or not usable.

    Also removes the PCH directories of processes that no longer run (killed before their exit handler ran).
    """
    if _config.cache_disabled() or _writes_failed:
        return None
    directory = _directory(create=True)
    if directory is None:
        return None
    for sub, alive in _pch_directories(directory):
        if not alive:
            remove_pch_directory(sub)
    for _ in range(3):
        path = directory / f"pch-{os.getpid()}-{secrets.token_hex(4)}"
        try:
            os.mkdir(path, 0o700)
        except FileExistsError:
            continue
        except OSError as exc:
            _log.debug("cuda.coop could not create a precompiled-header directory: %s", exc)
            return None
        return path
    return None
