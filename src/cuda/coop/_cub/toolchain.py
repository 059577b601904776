"""Locating one consistent toolkit: CCCL headers, CUDA headers, NVRTC and nvJitLink versions.

Everything here runs on the first build of a process (never at ``import cuda.coop``) and is memoised for the process:
the digests feed the provider cache key (docs: troubleshooting, "The cache of generated code"), the version check guards
linking (docs: troubleshooting, "The C++ toolchain").
"""
from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import _config
from .._errors import CoopBuildError, CoopError

# cuda-coop's own headers (include/cuda_coop: the algorithms the providers instantiate), on every include path after
# CCCL's; their content is part of the code digest, so editing one invalidates the builds that used it.
OWN_INCLUDE = Path(__file__).resolve().parent / "include"
CODE_SUFFIXES = (".py", ".cuh")


def include_paths_of(cccl_include: Path, cuda_include: Path | None) -> list[str]:
    """The include directories of a build: CCCL's, cuda-coop's own, and the CUDA runtime's when found."""
    return [str(cccl_include), str(OWN_INCLUDE)] + ([str(cuda_include)] if cuda_include else [])


@dataclass(frozen=True)
class Toolchain:
    cccl_include: Path
    cuda_include: Path | None
    nvrtc_version: tuple[int, int]
    nvjitlink_version: tuple[int, int]
    headers_digest: str
    nvrtc_library: str = "unknown"
    nvjitlink_library: str = "unknown"
    cuda_include_digest: str = ""
    code_digest: str = ""

    def include_paths(self) -> list[str]:
        return include_paths_of(self.cccl_include, self.cuda_include)

    def key_parts(self) -> dict[str, Any]:
        """Everything about the toolchain that can change the LTO-IR, for the provider cache key."""
        return {
            "cccl_include": str(self.cccl_include),
            "cccl_tree": self.headers_digest,
            "cuda_include": str(self.cuda_include) if self.cuda_include else None,
            "cuda_include_tree": self.cuda_include_digest,
            "nvrtc": [*self.nvrtc_version, self.nvrtc_library],
            "nvjitlink": [*self.nvjitlink_version, self.nvjitlink_library],
            "code": self.code_digest,
        }


# ---------------------------------------------------------------- library calls

def library_call(module: Any, library: str, function: str, *args: Any) -> Any:
    """Call ``module.function(*args)``, turning a missing or broken entry point into CoopBuildError.

    ``cuda.bindings`` raises AttributeError/RuntimeError (or NotImplementedError) when the loaded library lacks a
    function; users should read which library and which function, not a raw traceback.
    """
    try:
        fn = getattr(module, function)
    except AttributeError as exc:
        raise CoopBuildError(
            f"the {library} library ({library_identity(library)}) does not provide {function}, which cuda.coop "
            "requires; install NVRTC and nvJitLink of one CUDA toolkit version that provides it"
        ) from exc
    try:
        return fn(*args)
    except CoopError:
        raise
    except (AttributeError, RuntimeError, NotImplementedError, OSError, TypeError) as exc:
        raise CoopBuildError(
            f"the {library} library ({library_identity(library)}) failed in {function}: {exc}; the library may "
            "lack this function or be incompatible with cuda.bindings"
        ) from exc


_LIBRARY_FILES = {"nvrtc": "libnvrtc", "nvJitLink": "libnvJitLink"}


@functools.lru_cache(maxsize=None)
def library_identity(library: str) -> str:
    """``path:size:mtime_ns`` of the loaded shared library, or 'unknown'; it makes a rebuilt library a new key."""
    path = _mapped_library(_LIBRARY_FILES.get(library, library))
    if path is None:
        try:
            from cuda.pathfinder import load_nvidia_dynamic_lib

            path = load_nvidia_dynamic_lib(library).abs_path
        except Exception:
            path = None
    if not path:
        return "unknown"
    try:
        st = os.stat(path)
    except OSError:
        return str(path)
    return f"{path}:{st.st_size}:{st.st_mtime_ns}"


def _mapped_library(stem: str) -> str | None:
    """The file of a shared library loaded in this process (Linux /proc/self/maps), else None."""
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as maps:
            for line in maps:
                parts = line.split(None, 5)
                path = parts[5].strip() if len(parts) == 6 else ""
                if os.path.basename(path).startswith(stem + ".") and os.path.isabs(path):
                    return path
    except OSError:
        return None
    return None


def _nvrtc_version() -> tuple[int, int]:
    from cuda.bindings import nvrtc

    err, major, minor = library_call(nvrtc, "nvrtc", "nvrtcVersion")
    if int(err) != 0:
        raise CoopBuildError(f"NVRTC is not usable: nvrtcVersion returned {err}")
    return int(major), int(minor)


def _nvjitlink_version() -> tuple[int, int]:
    from cuda.bindings import nvjitlink

    version = tuple(library_call(nvjitlink, "nvJitLink", "version"))
    return int(version[0]), int(version[1])


def check_versions(nvrtc_version: tuple[int, int], nvjitlink_version: tuple[int, int]) -> None:
    """LTO-IR from NVRTC must be linkable by nvJitLink: same major, NVRTC not newer
    (docs: troubleshooting, "The C++ toolchain")."""
    rtc, link = tuple(nvrtc_version[:2]), tuple(nvjitlink_version[:2])
    if rtc[0] == link[0] and rtc <= link:
        return
    why = "a different major version than" if rtc[0] != link[0] else "newer than"
    raise CoopBuildError(
        f"NVRTC {rtc[0]}.{rtc[1]} is {why} nvJitLink {link[0]}.{link[1]}: the LTO-IR NVRTC produces could not be "
        "linked into the kernel. Install the NVRTC and nvJitLink wheels of one CUDA toolkit version, e.g. "
        f'pip install "cuda-toolkit[nvrtc,nvjitlink]=={link[0]}.{link[1]}.*" '
        f'(or "cuda-toolkit[nvrtc,nvjitlink]=={rtc[0]}.{rtc[1]}.*")'
    )


# ---------------------------------------------------------------- headers

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
            "the CCCL headers were not found: install cuda-cccl>=1.2,<2 (part of every backend's extra) "
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


def tree_digest(root: Path, suffixes: tuple[str, ...] | None = None, known: dict[str, object] | None = None
                ) -> str:
    """SHA-256 over (relative path, size, content) of every regular file under ``root``, in sorted path order.

    Directories named ``__pycache__`` are skipped; symlinked directories are followed once (NVRTC follows them too).
    ``suffixes`` restricts the files hashed (the library's own ``.py`` files). Unreadable files enter as such.
    ``known`` maps a relative path to ``[stat signature, content digest]``: a file whose signature (size, mtime,
    ctime, inode: any write changes the ctime) is unchanged is not read again; the map is updated in place.
    """
    files: list[tuple[str, str]] = []
    seen: set[tuple[int, int]] = set()
    prefix = len(os.path.join(str(root), ""))  # relative paths by slicing: os.path.relpath costs 25 us a file
    for dirpath, dirnames, filenames in os.walk(root, followlinks=True):
        try:
            st = os.stat(dirpath)
            if (st.st_dev, st.st_ino) in seen:  # a symlink loop or a second link to a visited tree
                dirnames[:] = []
                continue
            seen.add((st.st_dev, st.st_ino))
        except OSError:
            continue
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for name in filenames:
            if suffixes is not None and not name.endswith(suffixes):
                continue
            full = os.path.join(dirpath, name)
            files.append((full[prefix:].replace(os.sep, "/"), full))
    files.sort()
    h = hashlib.sha256(b"cuda-coop tree digest 2\0")
    for rel, full in files:
        h.update(rel.encode("utf-8", "surrogateescape") + b"\0")
        try:
            st = os.stat(full)
            if not stat.S_ISREG(st.st_mode):  # never open a FIFO or device found in a header tree
                h.update(b"\1not a regular file\0")
                continue
            signature = [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev]
            seen_before = known.get(rel) if known is not None else None
            if isinstance(seen_before, list) and len(seen_before) == 2 and seen_before[0] == signature \
                    and isinstance(seen_before[1], str):
                content = seen_before[1]
            else:
                with open(full, "rb") as f:
                    content = hashlib.sha256(f.read()).hexdigest()
                if known is not None:
                    known[rel] = [signature, content]
        except OSError:
            h.update(b"\1unreadable\0")
            continue
        h.update(content.encode() + b"\0")
    return h.hexdigest()


def metadata_digest(root: Path) -> str:
    """SHA-256 over (relative path, size, mtime_ns) of the files under ``root`` (non-recursive of symlink loops)."""
    h = hashlib.sha256(b"cuda-coop metadata digest 1\0")
    entries = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in filenames:
            full = os.path.join(dirpath, name)
            try:
                st = os.stat(full)
            except OSError:
                continue
            entries.append((os.path.relpath(full, root), st.st_size, st.st_mtime_ns))
    for rel, size, mtime in sorted(entries):
        h.update(f"{rel}\0{size}\0{mtime}\0".encode("utf-8", "surrogateescape"))
    return h.hexdigest()


def _manifest_name(include: str) -> str:
    return "tree-" + hashlib.sha256(include.encode("utf-8", "surrogateescape")).hexdigest()[:32]


_hashed: set[str] = set()  # header trees this process has digested
_deferred_manifests: list[tuple[str, dict[str, object]]] | None = None


@contextlib.contextmanager
def manifests_deferred() -> Iterator[None]:
    """Write the per-file digest manifests computed inside the block only when it ends.

    A first build that compiles beside the digest holds its lock until its entry is stored; other processes must
    not see the tree as digested (and skip that lock) before then."""
    global _deferred_manifests
    _deferred_manifests = []
    try:
        yield
    finally:
        pending, _deferred_manifests = _deferred_manifests, None
        from . import cache

        for name, known in pending:
            cache.store_manifest(name, known)


@functools.lru_cache(maxsize=None)
def headers_digest(include: str) -> str:
    """Digest of the content of the whole selected CCCL header tree, once per process per root
    (docs: troubleshooting, "The cache of generated code").

    The per-file content digests are kept in the cache directory under the tree's path, so a later process reads
    only the files whose stat signature changed (0.24 s -> a few ms for CCCL's ~2,400 headers)."""
    from . import cache

    name = _manifest_name(include)
    known = cache.load_manifest(name)
    before = dict(known)
    digest = tree_digest(Path(include), known=known)
    if known != before:
        if _deferred_manifests is not None:
            _deferred_manifests.append((name, known))
        else:
            cache.store_manifest(name, known)
    _hashed.add(include)
    return digest


def digest_is_cold(include: Path) -> bool:
    """Whether resolving the toolchain will read every header of ``include`` (~60 ms for CCCL): this process has
    not digested the tree and the cache holds no per-file digests of it (an empty or disabled cache)."""
    from . import cache

    return str(include) not in _hashed and not cache.manifest_exists(_manifest_name(str(include)))


@functools.lru_cache(maxsize=None)
def cuda_include_digest(include: str | None) -> str:
    return metadata_digest(Path(include)) if include else ""


@functools.lru_cache(maxsize=None)
def code_digest() -> str:
    """Digest of the installed cuda.coop package's own code, Python and C++ headers (a development install never
    changes version)."""
    return tree_digest(Path(__file__).resolve().parent.parent, suffixes=CODE_SUFFIXES)


def locate() -> tuple[Path, Path | None, tuple[int, int]]:
    """The cheap part of ``toolchain()``: NVRTC and nvJitLink versions checked (docs: troubleshooting,
    "The C++ toolchain"), then the CCCL and CUDA include directories and the NVRTC version; no digests."""
    rtc, link = _nvrtc_version(), _nvjitlink_version()
    check_versions(rtc, link)
    return _cccl_include(), _cuda_include(), rtc


@functools.lru_cache(maxsize=None)
def _cached(cccl_root: str | None) -> Toolchain:
    include, cuda_include, rtc = locate()
    link = _nvjitlink_version()
    return Toolchain(
        include,
        cuda_include,
        rtc,
        link,
        headers_digest(str(include)),
        library_identity("nvrtc"),
        library_identity("nvJitLink"),
        cuda_include_digest(str(cuda_include) if cuda_include else None),
        code_digest(),
    )


def toolchain() -> Toolchain:
    """The toolchain for this process; re-resolved when CUDA_COOP_CCCL_ROOT changes."""
    root = _config.cccl_root()
    return _cached(str(root) if root else None)
