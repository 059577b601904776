"""The installed distribution version (SPEC 1.1)."""
from __future__ import annotations

from importlib import metadata

try:
    __version__ = metadata.version("cuda-coop")
except metadata.PackageNotFoundError:
    __version__ = "0+unknown"
