"""What the provider cache directory holds, and clearing it (``python -m cuda.coop cache``; docs: troubleshooting,
"The cache of generated code"): exactly the files ``cache`` wrote, never anyone else's."""
from __future__ import annotations

import contextlib
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path

from .. import _config
from .cache import (_PCH_DIR_NAME, _ownership_problem, _parse, _pch_directories, _pch_files, _read_regular,
                    forget_memo, valid_meta)

# Exactly the names this module writes: entries, per-key locks, header-tree manifests and the temporary files of
# _write_atomic (mkstemp's ".<first 16 characters of the name>.<8 random characters>.tmp").
_OWNED_NAME = re.compile(r"[0-9a-f]{64}\.(?:bin|lock)|tree-[0-9a-f]{32}\.json|"
                         r"\.(?:[0-9a-f]{16}|tree-[0-9a-f]{11})\.[a-z0-9_]{8}\.tmp")
# payload_file's directory and its files: <SHA-256>.<suffix> (bitcode a kernel compiler links) and their temporaries.
_PAYLOAD_DIR_NAME = "files"
_PAYLOAD_NAME = re.compile(r"[0-9a-f]{64}\.[a-z0-9]{1,8}|\.[0-9a-f]{16}\.[a-z0-9_]{8}\.tmp")


@dataclass(frozen=True)
class Inventory:
    """What the provider cache directory holds."""

    directory: Path
    exists: bool
    disabled: bool  # CUDA_COOP_DISABLE_CACHE is set
    problem: str | None  # why builds do not use the directory (it is not private), else None
    entries: int  # provider entries (<key>.bin)
    bad_entries: int  # entries a build would treat as a miss: truncated, corrupt, another schema
    other_files: int  # locks, header-tree manifests, leftover temporary files
    total_bytes: int  # size of everything cuda.coop wrote there
    foreign_files: int  # files cuda.coop did not write (never touched)
    pch_files: int = 0  # precompiled headers of running processes, or left by processes that did not exit cleanly
    pch_bytes: int = 0
    pch_stale_files: int = 0  # those of processes that are gone (the next build or cache clear removes them)


def _owned_files(directory: Path, pattern: re.Pattern[str] = _OWNED_NAME) -> tuple[list[tuple[Path, os.stat_result]],
                                                                                  int]:
    """Regular files with one of this module's names, owned by this user, payload files included; and the count of
    all other entries."""
    owned, foreign = [], 0
    uid = os.geteuid() if hasattr(os, "geteuid") else None
    try:
        names = sorted(os.listdir(directory))
    except OSError:
        return [], 0
    for name in names:
        path = directory / name
        try:
            st = os.lstat(path)
        except OSError:
            continue
        mine = uid is None or st.st_uid == uid
        if pattern.fullmatch(name) and stat.S_ISREG(st.st_mode) and mine:
            owned.append((path, st))
        elif pattern is _OWNED_NAME and name == _PAYLOAD_DIR_NAME and stat.S_ISDIR(st.st_mode) and mine:
            payloads, others = _owned_files(path, _PAYLOAD_NAME)
            owned += payloads
            foreign += others
        elif not (pattern is _OWNED_NAME and _PCH_DIR_NAME.fullmatch(name) and stat.S_ISDIR(st.st_mode) and mine):
            foreign += 1
    return owned, foreign


def _entry_is_valid(path: Path) -> bool:
    data = _read_regular(path)
    if data is None:
        return False
    entry_key = path.name[:-len(".bin")]
    try:
        parsed = _parse(entry_key, data)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return False
    return parsed is not None and valid_meta(entry_key, parsed[0], parsed[1], None)


def inventory(check_entries: bool = True) -> Inventory:
    """Location, size and health of the cache directory; reads entries (``check_entries``) but never writes."""
    directory = _config.cache_dir()
    disabled = _config.cache_disabled()
    try:
        st = os.stat(directory)
    except OSError:
        return Inventory(directory, False, disabled, None, 0, 0, 0, 0, 0)
    if not stat.S_ISDIR(st.st_mode):
        return Inventory(directory, True, disabled, "it is not a directory", 0, 0, 0, 0, 0)
    problem = _ownership_problem(st, "it", allow_root=False, allow_sticky=False)
    owned, foreign = _owned_files(directory)
    entries = [path for path, _ in owned if path.name.endswith(".bin")]
    bad = sum(not _entry_is_valid(path) for path in entries) if check_entries else 0
    pch = [(path, st, alive) for sub, alive in _pch_directories(directory) for path, st in _pch_files(sub)]
    pch_bytes = sum(st.st_size for _, st, _ in pch)
    return Inventory(directory, True, disabled, problem, len(entries), bad, len(owned) - len(entries),
                     sum(s.st_size for _, s in owned) + pch_bytes, foreign, len(pch), pch_bytes,
                     sum(not alive for _, _, alive in pch))


def clear() -> tuple[int, int]:
    """Delete every file cuda.coop wrote in the cache directory (never other files, links or directories),
    precompiled headers of running processes included (they then build without them); the directory itself goes
    too once it is empty. Returns (files removed, bytes freed)."""
    forget_memo()
    directory = _config.cache_dir()
    if not directory.is_dir():
        return 0, 0
    removed = freed = 0
    owned, _ = _owned_files(directory)
    for sub, _alive in _pch_directories(directory):  # a running process whose PCH goes just builds without it
        owned += _pch_files(sub)
    for path, st in owned:
        try:
            path.unlink()
        except FileNotFoundError:  # another process replaced or removed it meanwhile
            continue
        removed += 1
        freed += st.st_size
    for sub in [sub for sub, _alive in _pch_directories(directory)] + [directory / _PAYLOAD_DIR_NAME]:
        with contextlib.suppress(OSError):
            sub.rmdir()
    with contextlib.suppress(OSError):  # not empty: someone else's files stay, and so does the directory
        directory.rmdir()
    return removed, freed


