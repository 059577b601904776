"""The installed distribution version (docs: api/common)."""
from __future__ import annotations

from importlib import metadata

try:
    __version__ = metadata.version("cuda-coop")
except metadata.PackageNotFoundError:
    __version__ = "0+unknown"
