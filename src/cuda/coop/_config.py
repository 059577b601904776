"""Every CUDA_COOP_* environment variable, parsed where it is read (SPEC 1.5)."""
from __future__ import annotations

import os
from pathlib import Path

_FALSE = {"", "0", "false", "no", "off"}


def env_flag(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() not in _FALSE


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
