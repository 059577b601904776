"""Every CUDA_COOP_* environment variable, parsed where it is read
(docs: troubleshooting, "Environment variables")."""
from __future__ import annotations

import os
from pathlib import Path

from ._errors import CoopValueError

_FALSE = frozenset({"", "0", "false", "no", "off"})
_TRUE = frozenset({"1", "true", "yes", "on"})
ACCEPTED_FLAG_SPELLINGS = "1, true, yes, on (true) or unset, empty, 0, false, no, off (false), case-insensitive"


def parse_flag(name: str, value: str | None) -> bool:
    """A boolean variable's value: stripped and lower-cased, one of the accepted spellings, else CoopValueError."""
    text = (value or "").strip().lower()
    if text in _FALSE:
        return False
    if text in _TRUE:
        return True
    raise CoopValueError(f"{name}={value!r} is not a boolean; accepted spellings: {ACCEPTED_FLAG_SPELLINGS}")


def env_flag(name: str) -> bool:
    return parse_flag(name, os.environ.get(name))


def auto_registration_disabled() -> bool:
    return env_flag("CUDA_COOP_DISABLE_AUTO_DSL_REGISTRATION")


def cache_disabled() -> bool:
    return env_flag("CUDA_COOP_DISABLE_CACHE")


def cache_dir() -> Path:
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    root = Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".cache"
    return root / "cuda-coop"


def source_dump_dir() -> Path | None:
    value = os.environ.get("CUDA_COOP_SOURCE_DUMP_DIR", "")
    return Path(value) if value else None


def cccl_root() -> Path | None:
    value = os.environ.get("CUDA_COOP_CCCL_ROOT", "")
    return Path(value) if value else None


def cuda_home_candidates() -> list[Path]:
    found = [Path(os.environ[v]) / "include" for v in ("CUDA_PATH", "CUDA_HOME") if os.environ.get(v)]
    return found + [Path("/usr/local/cuda/include")]
