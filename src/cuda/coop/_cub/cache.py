"""Persistent, content-addressed provider cache (SPEC 1.6). A bad entry is a miss, never an error."""
from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
from pathlib import Path

from .. import _config

SCHEMA = 2
_MAGIC = b"CUDACOOP1\n"
_log = logging.getLogger("cuda.coop")
_writes_failed = False
_memo: dict[str, tuple[bytes, dict]] = {}


def key(*parts: object) -> str:
    """SHA-256 of a versioned encoding of everything that changes the output."""
    return hashlib.sha256(json.dumps([SCHEMA, *parts], sort_keys=True, default=str).encode()).hexdigest()


def load(entry_key: str) -> tuple[bytes, dict] | None:
    if entry_key in _memo:
        return _memo[entry_key]
    if _config.cache_disabled():
        return None
    try:
        data = (_config.cache_dir() / f"{entry_key}.bin").read_bytes()
        if not data.startswith(_MAGIC) or len(data) < len(_MAGIC) + 40:
            return None
        body, digest = data[len(_MAGIC):-32], data[-32:]
        if hashlib.sha256(body).digest() != digest:
            return None
        meta_len = int.from_bytes(body[:8], "little")
        meta = json.loads(body[8:8 + meta_len])
        if meta.get("schema") != SCHEMA or meta.get("key") != entry_key:
            return None
        result = (body[8 + meta_len:], meta)
    except (OSError, ValueError, UnicodeDecodeError):
        return None
    _memo[entry_key] = result
    return result


def store(entry_key: str, payload: bytes, meta: dict) -> None:
    global _writes_failed
    meta = {**meta, "schema": SCHEMA, "key": entry_key}
    _memo[entry_key] = (payload, meta)
    if _config.cache_disabled() or _writes_failed:
        return
    encoded = json.dumps(meta).encode()
    body = len(encoded).to_bytes(8, "little") + encoded + payload
    directory = _config.cache_dir()
    try:
        directory.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=f".{entry_key[:16]}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(_MAGIC + body + hashlib.sha256(body).digest())
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, directory / f"{entry_key}.bin")
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except OSError as exc:
        _writes_failed = True
        _log.warning("cuda.coop provider cache write failed (%s); caching disabled for this process", exc)


def forget_memo() -> None:
    """Drop the in-process memo (tests use it to force disk reads)."""
    _memo.clear()
