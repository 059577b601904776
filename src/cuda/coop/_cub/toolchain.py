"""Locating one consistent toolkit: CCCL headers, CUDA headers, NVRTC and nvJitLink versions."""
from __future__ import annotations

import functools
import hashlib
from dataclasses import dataclass
from pathlib import Path

from .. import _config
from .._errors import CoopBuildError


@dataclass(frozen=True)
class Toolchain:
    cccl_include: Path
    cuda_include: Path | None
    nvrtc_version: tuple[int, int]
    nvjitlink_version: tuple[int, int]
    headers_digest: str

    def include_paths(self) -> list[str]:
        return [str(self.cccl_include)] + ([str(self.cuda_include)] if self.cuda_include else [])


def _cccl_include() -> Path:
    root = _config.cccl_root()
    if root is not None:
        for candidate in (root, root / "include"):
            if (candidate / "cub" / "version.cuh").is_file():
                return candidate.resolve()
        if (root / "cub" / "cub" / "version.cuh").is_file():  # a CCCL source checkout
            raise CoopBuildError(
                f"CUDA_COOP_CCCL_ROOT={root} is a CCCL checkout; point it at a header tree containing cub/version.cuh"
            )
        raise CoopBuildError(f"CUDA_COOP_CCCL_ROOT={root} does not contain cub/version.cuh")
    try:
        from importlib.resources import files

        path = Path(str(files("cuda.cccl.headers.include")))
    except Exception as exc:  # ModuleNotFoundError and friends
        raise CoopBuildError(
            "the CCCL headers were not found: install cuda-cccl>=1.2,<2 (part of the numba-cuda-mlir extras) "
            "or set CUDA_COOP_CCCL_ROOT"
        ) from exc
    if not (path / "cub" / "version.cuh").is_file():
        raise CoopBuildError(f"the cuda-cccl headers at {path} lack cub/version.cuh")
    return path


def _cuda_include() -> Path | None:
    try:
        from cuda.pathfinder import find_nvidia_header_directory

        found = find_nvidia_header_directory("cudart")
        if found:
            return Path(found)
    except Exception:
        pass
    for candidate in _config.cuda_home_candidates():
        if (candidate / "cuda_runtime.h").is_file():
            return candidate
    return None


def _digest(include: Path) -> str:
    h = hashlib.sha256(str(include).encode())
    for rel in ("cub/version.cuh", "cuda/__cccl_config"):
        f = include / rel
        if f.is_file():
            h.update(f.read_bytes())
    return h.hexdigest()


@functools.lru_cache(maxsize=None)
def _cached(cccl_root: str | None) -> Toolchain:
    from cuda.bindings import nvjitlink, nvrtc

    err, major, minor = nvrtc.nvrtcVersion()
    if err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
        raise CoopBuildError(f"NVRTC is not usable: {err}")
    link_version = tuple(nvjitlink.version())
    include = _cccl_include()
    return Toolchain(include, _cuda_include(), (major, minor), link_version, _digest(include))  # type: ignore[arg-type]


def toolchain() -> Toolchain:
    """The toolchain for this process; re-resolved when CUDA_COOP_CCCL_ROOT changes."""
    root = _config.cccl_root()
    return _cached(str(root) if root else None)
