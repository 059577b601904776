"""NVRTC to LTO-IR, and scratch size discovery without running anything."""
from __future__ import annotations

import hashlib
import re
import time
from dataclasses import dataclass, field

from .. import _config
from .._errors import CoopBuildError
from .._version import __version__
from . import cache
from .provider import Provider, translation_unit
from .toolchain import toolchain

# Parsing the CCCL headers is nearly all of an NVRTC run. Under NVRTC, CCCL sets
# _CCCL_META_UNROLL_LIMIT to 16 instead of nvcc's 10, and the unrolled type-list folds of
# cuda/std/__type_traits/type_list.h then take ~0.9 s to parse (NVRTC 13.0 and 13.5, CCCL 3.6).
# Passing nvcc's value cuts a run ~2.8x; the limit only bounds how far metaprograms unroll
# before recursing: same types, same code. (C++20 would parse ~25% faster still; SPEC 1.7 says C++17.)
OPTIONS = ("-std=c++17", "-rdc=true", "-dlto", "-DCUB_DISABLE_BF16_SUPPORT", "-D_CCCL_META_UNROLL_LIMIT=10")

# Counters the tests read: how many NVRTC runs this process made, and their time.
stats = {"nvrtc_runs": 0, "nvrtc_seconds": 0.0, "link_seconds": 0.0}


@dataclass
class BuildResult:
    ltoir: bytes
    source: str
    scratch: dict[str, tuple[int, int]] = field(default_factory=dict)
    from_cache: bool = False
    dump_path: str | None = None


def _dump(source: str) -> str | None:
    directory = _config.source_dump_dir()
    if directory is None:
        return None
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"cuda_coop_numba_mlir_{hashlib.sha256(source.encode()).hexdigest()[:16]}.cu"
    path.write_text(source)
    return str(path)


def _check(result: object, what: str) -> None:
    if int(result) != 0:  # type: ignore[call-overload]
        raise CoopBuildError(f"{what} failed: {result}")


def _nvrtc_ltoir(source: str, arch: str, include_paths: list[str], what: str, dump: str | None) -> bytes:
    from cuda.bindings import nvrtc

    err, prog = nvrtc.nvrtcCreateProgram(source.encode(), b"cuda_coop.cu", 0, [], [])
    _check(err, "nvrtcCreateProgram")
    try:
        opts = [o.encode() for o in (*OPTIONS, f"-arch={arch}", *[f"-I{p}" for p in include_paths])]
        start = time.perf_counter()
        (status,) = nvrtc.nvrtcCompileProgram(prog, len(opts), opts)
        stats["nvrtc_runs"] += 1
        stats["nvrtc_seconds"] += time.perf_counter() - start
        if int(status) != 0:
            _, size = nvrtc.nvrtcGetProgramLogSize(prog)
            log = b" " * size
            nvrtc.nvrtcGetProgramLog(prog, log)
            where = f" (source: {dump})" if dump else " (set CUDA_COOP_SOURCE_DUMP_DIR to keep the source)"
            raise CoopBuildError(
                f"cuda.coop could not build {what} for {arch}: NVRTC failed{where}\n"
                f"{log.decode(errors='replace').rstrip(chr(0))}"
            )
        err, size = nvrtc.nvrtcGetLTOIRSize(prog)
        _check(err, "nvrtcGetLTOIRSize")
        out = b" " * size
        (err,) = nvrtc.nvrtcGetLTOIR(prog, out)
        _check(err, "nvrtcGetLTOIR")
        return bytes(out)
    finally:
        nvrtc.nvrtcDestroyProgram(prog)


_SCRATCH_RE = re.compile(r"\.global \.align \d+ \.b8 (\w+)_scratch_size\[16\] = \{([\d, ]+)\}")


def _scratch_sizes(ltoir: bytes, arch: str) -> dict[str, tuple[int, int]]:
    """Read the sizeof/alignof tables back by letting nvJitLink lower the LTO-IR to PTX (no driver)."""
    from cuda.bindings import nvjitlink

    start = time.perf_counter()
    handle = nvjitlink.create(3, [f"-arch={arch}", "-lto", "-ptx"])
    try:
        nvjitlink.add_data(handle, nvjitlink.InputType.LTOIR, ltoir, len(ltoir), "cuda_coop")
        nvjitlink.complete(handle)
        size = nvjitlink.get_linked_ptx_size(handle)
        buf = bytearray(size)
        nvjitlink.get_linked_ptx(handle, buf)
    finally:
        nvjitlink.destroy(handle)
    stats["link_seconds"] += time.perf_counter() - start
    ptx = bytes(buf).decode(errors="replace")
    sizes = {}
    for symbol, data in _SCRATCH_RE.findall(ptx):
        raw = bytes(int(b) for b in data.split(","))
        sizes[symbol] = (int.from_bytes(raw[:8], "little"), int.from_bytes(raw[8:], "little"))
    return sizes


def build(providers: list[Provider], arch: str, what: str) -> BuildResult:
    """Compile all of a kernel's providers as one translation unit, through the cache."""
    tools = toolchain()
    source = translation_unit(providers)
    dump = _dump(source)
    entry = cache.key(__version__, source, arch, tools.nvrtc_version, tools.nvjitlink_version, OPTIONS,
                      tools.headers_digest)
    hit = cache.load(entry)
    if hit is not None:
        ltoir, meta = hit
        return BuildResult(ltoir, source, {k: tuple(v) for k, v in meta["scratch"].items()}, True, dump)
    ltoir = _nvrtc_ltoir(source, arch, tools.include_paths(), what, dump)
    wanted = {p.symbol for p in providers if p.scratch_type is not None}
    scratch = _scratch_sizes(ltoir, arch) if wanted else {}
    missing = wanted - scratch.keys()
    if missing:
        raise CoopBuildError(f"cuda.coop could not determine the scratch size of {sorted(missing)} for {arch}")
    cache.store(entry, ltoir, {"scratch": scratch})
    return BuildResult(ltoir, source, scratch, False, dump)
