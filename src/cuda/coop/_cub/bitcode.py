"""A kernel's C++ as LLVM bitcode, compiled by the clang of the ``ziglang`` wheel, for a kernel compiler that links
bitcode into its own LLVM module and inlines it (docs: cutlass, "How it works").

CCCL is shown NVRTC's freestanding configuration, and ``clang_shim/cuda_coop_clang.h`` gives it, on clang's NVPTX
builtins, what NVRTC would have built in (keywords, built-in variables, intrinsics). Nothing of a CUDA toolkit is
read but the CCCL headers and the CUDA runtime's vector and driver types. One clang compile gives both the bitcode
and every call's scratch size and alignment: the TU's ``<symbol>_scratch_size`` tables, read from the bitcode
(``bitstream``) and cached with it. NVRTC runs only where clang could not serve (its errors are the ones in words).

Every entry point is made ``always_inline`` here (a pragma around the generated code), so that inlining does not
depend on the kernel compiler's heuristics. The result is cached by content like the LTO-IR, and handed to the
kernel compiler as a file (``bitcode_file``).
"""
from __future__ import annotations

import functools
import hashlib
import os
import re
import subprocess
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._errors import CoopBuildError
from .._version import __version__
from . import bitstream, cache, clang_pch
from .nvrtc import dump_source
from .toolchain import digest_is_cold, include_paths_of, locate, toolchain

ZIGLANG_REQUIREMENT = "ziglang>=0.17,<0.18"
INSTALL_HINT = f'pip install "{ZIGLANG_REQUIREMENT}"'
SHIM_DIR = Path(__file__).resolve().parent / "clang_shim"
SHIM_HEADER = SHIM_DIR / "cuda_coop_clang.h"
CLANG_TIMEOUT = 300.0  # seconds; a build that runs longer is a failed build, never a hang

# The PTX ISA an architecture needs first: clang refuses an sm without it even when it only emits IR.
_PTX_FOR_ARCH = {75: 63, 80: 70, 86: 71, 87: 74, 89: 78, 90: 80, 100: 86, 101: 86, 103: 88, 110: 90, 120: 87,
                 121: 88}
_ARCH_RE = re.compile(r"^sm_(\d+)([af]?)$")

# CCCL under NVRTC's configuration (its own macros), the options NVRTC builds with (nvrtc.OPTIONS), and the clang
# driver kept away from the host: no host headers, no CUDA installation, its own resource directory.
_OPTIONS = ("-x", "cuda", "--cuda-device-only", "-nocudainc", "-nocudalib", "--cuda-path=/nonexistent",
            "-nostdlibinc", "-std=c++17", "-O3", "-DNDEBUG", "-U__clang__", "-fgnuc-version=0", "-D__CUDACC_RTC__",
            "-D_CCCL_META_UNROLL_LIMIT=10", "-DCUB_DISABLE_BF16_SUPPORT", "-DCCCL_DISABLE_BF16_SUPPORT",
            "-DCCCL_DISABLE_FP16_SUPPORT", "-Wno-unknown-cuda-version", "-w", "-emit-llvm", "-c")


@dataclass(frozen=True)
class Clang:
    """The clang of an installed ziglang wheel."""

    zig: str  # the zig executable (``zig clang`` is its clang driver)
    resource_dir: str
    version: tuple[int, int, int]
    ziglang_version: str

    def identity(self) -> str:
        st = os.stat(self.zig)
        return f"{self.zig}:{st.st_size}:{st.st_mtime_ns}:{'.'.join(map(str, self.version))}"


@dataclass(frozen=True)
class ClangLookup:
    """Whether the bitcode route can run here: ``clang`` when it can, else ``reason`` (a sentence with its fix)."""

    clang: Clang | None
    reason: str = ""


@functools.lru_cache(maxsize=None)
def find_clang(newest_llvm_major: int | None) -> ClangLookup:
    """The ziglang wheel's clang when it is installed, runs, targets NVPTX and is not newer than
    ``newest_llvm_major`` (the LLVM that reads its bitcode: a newer producer can write records it cannot read)."""
    try:
        import ziglang
    except ImportError:
        return ClangLookup(None, f"the ziglang wheel is not installed; {INSTALL_HINT}")
    from importlib import metadata

    try:
        ziglang_version = metadata.version("ziglang")
    except metadata.PackageNotFoundError:
        ziglang_version = "unknown"
    root = Path(ziglang.__file__).resolve().parent
    zig = root / "zig"
    if not zig.is_file() or not os.access(zig, os.X_OK):
        return ClangLookup(None, f"the ziglang wheel ({ziglang_version}) has no zig executable at {zig}; reinstall "
                                 f"it: {INSTALL_HINT}")
    try:
        done = subprocess.run([str(zig), "clang", "--version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return ClangLookup(None, f"the clang of the ziglang wheel ({zig}) does not run ({exc}); {INSTALL_HINT}")
    found = re.search(r"clang version (\d+)\.(\d+)\.(\d+)", done.stdout)
    if done.returncode != 0 or found is None:
        return ClangLookup(None, f"the clang of the ziglang wheel ({zig}) does not report its version; "
                                 f"{INSTALL_HINT}")
    version = (int(found.group(1)), int(found.group(2)), int(found.group(3)))
    if newest_llvm_major is not None and version[0] > newest_llvm_major:
        return ClangLookup(None, f"the ziglang wheel {ziglang_version} carries clang {version[0]}, newer than the "
                                 f"LLVM {newest_llvm_major} that links its bitcode; install {ZIGLANG_REQUIREMENT}")
    return ClangLookup(Clang(str(zig), str(root / "lib"), version, ziglang_version))


def ptx_feature(arch: str) -> str:
    """The PTX ISA feature clang needs to accept ``arch`` (``sm_90a`` -> ``+ptx80``)."""
    found = _ARCH_RE.match(arch)
    if found is None:
        raise CoopBuildError(f"cuda.coop cannot build bitcode for {arch!r}: not an architecture such as 'sm_90a'")
    number = int(found.group(1))
    ptx = _PTX_FOR_ARCH.get(number, max(_PTX_FOR_ARCH.values()))  # an architecture not listed: the newest ISA
    return f"+ptx{ptx}"


def clang_input(source: str) -> str:
    """The TU clang compiles: ``source`` with every function after its ``#include`` block ``always_inline``."""
    head, body = clang_pch.split(source)
    return (f"{head}\n#pragma clang attribute push(__attribute__((always_inline)), apply_to = function)\n"
            f'#line 1 "cuda_coop.cu"\n{body}\n#pragma clang attribute pop\n')


def command(clang: Clang, arch: str, include_paths: list[str], output: str, *, textual: bool = False) -> list[str]:
    """The clang command line that compiles standard input to bitcode (``textual``: LLVM assembly) at ``output``."""
    includes = [arg for path in [str(SHIM_DIR), *include_paths] for arg in ("-isystem", path)]
    options = [*_OPTIONS, f"--cuda-gpu-arch={arch}", "-Xclang", "-target-feature", "-Xclang", ptx_feature(arch)]
    if textual:
        options.append("-S")
    return [clang.zig, "clang", "-resource-dir", clang.resource_dir, *options, "-include", str(SHIM_HEADER),
            *includes, "-o", output, "-"]


def include_paths() -> list[str]:
    """The include directories NVRTC uses: CCCL's, cuda-coop's own and CUDA's (the cheap part of the toolchain
    lookup)."""
    cccl, cuda_include, _ = locate()
    return include_paths_of(cccl, cuda_include)


def compile_source(clang: Clang, source: str, arch: str, *, textual: bool = False) -> bytes:
    """Run clang on ``source`` (a generated TU); its bitcode, or CoopBuildError with clang's log. With this
    process's precompiled header of the TU's ``#include`` block when there is one (``clang_pch``); clang's result
    and its errors are those of a compile without one."""
    with tempfile.TemporaryDirectory(prefix="cuda_coop_clang_") as where:
        output = os.path.join(where, "cuda_coop.ll" if textual else "cuda_coop.bc")
        argv = command(clang, arch, include_paths(), output, textual=textual)
        text = clang_input(source).encode()
        pch = None if textual else clang_pch.usable(clang_pch.split(source)[0], argv, output)
        if pch is not None:
            with_pch = _run(clang_pch.with_pch(argv, pch[1]), text, where)
            if with_pch.returncode == 0:
                clang_pch.used()
                return Path(output).read_bytes()
        done = _run(argv, text, where)
        if pch is not None and done.returncode == 0:  # the PCH made it fail: never again
            clang_pch.refuse(pch[0], with_pch.stderr.decode(errors="replace"))
        if done.returncode != 0:
            log = done.stderr.decode(errors="replace").strip()
            first = next((line for line in log.splitlines() if "error" in line), log[:200])
            raise CoopBuildError(f"clang failed ({first.strip()})\nclang log:\n{log}")
        return Path(output).read_bytes()


def _run(argv: list[str], text: bytes, where: str) -> subprocess.CompletedProcess[bytes]:
    try:
        return subprocess.run(argv, input=text, capture_output=True, timeout=CLANG_TIMEOUT, cwd=where)
    except subprocess.TimeoutExpired:
        raise CoopBuildError(f"clang ran longer than {CLANG_TIMEOUT:.0f} s") from None
    except OSError as exc:
        raise CoopBuildError(f"clang did not start: {exc}") from None


def bitcode_key(clang: Clang, source: str, arch: str) -> str:
    """The cache key of one TU's bitcode: everything that changes it (and the producer's identity)."""
    shim = hashlib.sha256(SHIM_HEADER.read_bytes()).hexdigest()
    parts = toolchain().key_parts()
    return cache.key("bitcode", __version__, source, arch, _OPTIONS, clang.identity(), shim,
                     {k: parts[k] for k in ("cccl_include", "cccl_tree", "cuda_include", "cuda_include_tree",
                                            "code")})


@dataclass(frozen=True)
class Bitcode:
    """A TU's bitcode as a file the kernel compiler reads, and the (size, alignment) of each scratch type the build
    asked for, read from the same bitcode (None when it could not be read: NVRTC is then asked)."""

    path: Path
    scratch: dict[str, tuple[int, int]] | None


def scratch_sizes(bitcode: bytes, symbols: frozenset[str]) -> dict[str, tuple[int, int]] | None:
    """The (size, alignment) of the scratch type of each provider in ``symbols``: the TU's
    ``<symbol>_scratch_size`` tables (``provider.translation_unit``), as clang initialised them. None when the
    bitcode does not show every one of them."""
    if not symbols:
        return {}
    try:
        arrays = bitstream.integer_arrays(bitcode)
    except ValueError:
        return None
    sizes: dict[str, tuple[int, int]] = {}
    for symbol in symbols:
        table = arrays.get(f"{symbol}_scratch_size")
        if table is None or len(table) != 2 or table[1] <= 0 or table[1] & (table[1] - 1):
            return None
        sizes[symbol] = (table[0], table[1])
    return sizes


def build(clang: Clang, source: str, arch: str, symbols: frozenset[str], *, backend: str) -> Bitcode:
    """The bitcode of ``source`` for ``arch`` as a file the kernel compiler reads (through the cache; named by its
    content, so a kernel compiler's own cache key follows the C++), with the scratch sizes of the providers in
    ``symbols``, cached with it: a warm build runs no compiler. Raises CoopBuildError when clang failed.
    ``backend``: the tag of the backend whose kernel links it (in the name of the source's dump, as NVRTC's).

    When the toolchain is known (its header digest is), the cache is asked first; otherwise (a cold build) clang
    starts at once in a thread, and the cache is asked once the header digest (the key's) is made beside it."""
    dump_source(source, backend)
    if not digest_is_cold(Path(include_paths()[0])):
        entry = bitcode_key(clang, source, arch)
        hit = cache.load(entry)
        if hit is not None:
            return _from_cache(hit, symbols)
        return _store(entry, compile_source(clang, source, arch), symbols)
    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            outcome["bitcode"] = compile_source(clang, source, arch)
        except BaseException as exc:  # noqa: BLE001 - re-raised by the waiting thread
            outcome["error"] = exc

    worker = threading.Thread(target=run, name="cuda-coop-clang", daemon=True)
    worker.start()
    entry = bitcode_key(clang, source, arch)
    hit = cache.load(entry)
    if hit is not None:  # another process built it meanwhile
        return _from_cache(hit, symbols)
    worker.join()
    if "error" in outcome:
        raise outcome["error"]
    return _store(entry, outcome["bitcode"], symbols)


def _store(entry: str, bitcode: bytes, symbols: frozenset[str]) -> Bitcode:
    scratch = scratch_sizes(bitcode, symbols)
    cache.store(entry, bitcode, {"scratch": scratch or {}, "kind": "bitcode"})
    return Bitcode(cache.payload_file(bitcode, ".bc"), scratch)


def _from_cache(hit: tuple[bytes, cache.Meta], symbols: frozenset[str]) -> Bitcode:
    """A cached entry's file and sizes; an entry without them (an older release's) has them read from its bytes."""
    stored = hit[1]["scratch"]
    if symbols <= stored.keys():
        scratch: dict[str, tuple[int, int]] | None = {s: (stored[s][0], stored[s][1]) for s in symbols}
    else:
        scratch = scratch_sizes(hit[0], symbols)
    return Bitcode(cache.payload_file(hit[0], ".bc"), scratch)
