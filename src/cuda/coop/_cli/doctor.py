"""``python -m cuda.coop doctor``: is this machine ready to build, and to run, cooperative kernels?

Each check reports OK, WARN or FAIL on one line, with the fix on WARN and FAIL. Discovery is the library's own
(``_cub/toolchain.py``, ``_cub/cache.py``): the doctor sees exactly what a build would see.
"""
from __future__ import annotations

import importlib
import importlib.metadata as metadata
import os
import re
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from .. import _config
from .._errors import CoopError
from .._version import __version__
from .cache_command import human_size

OK, WARN, FAIL = "OK", "WARN", "FAIL"
EXTRA_HINT = 'pip install "cuda-coop[numba-cuda-mlir-cu13]" (CUDA 13) or "cuda-coop[numba-cuda-mlir-cu12]" (CUDA 12)'
# cub::WarpReduceBatched (docs: install, "Choosing a command")
CCCL_FOR_EVERY_OPERATION = (3, 6)


@dataclass(frozen=True)
class Check:
    name: str
    status: str
    detail: str
    fix: str | None = None

    def line(self) -> str:
        fix = f" -- fix: {self.fix}" if self.fix and self.status != OK else ""
        return f"{self.status:<4}  {self.name}: {self.detail}{fix}"


# ---------------------------------------------------------------- versions and requirements

def _version_tuple(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", text.split("+")[0])[:3])


def _satisfies(version: str, specifier: str) -> bool:
    """``version`` against a specifier such as ``<0.7,>=0.6`` (numeric clauses only; that is all we declare)."""
    have = _version_tuple(version)
    compare: dict[str, Callable[[tuple[int, ...], tuple[int, ...]], bool]] = {
        ">=": lambda a, b: a >= b, "<=": lambda a, b: a <= b, ">": lambda a, b: a > b, "<": lambda a, b: a < b,
        "==": lambda a, b: a[:len(b)] == b, "!=": lambda a, b: a[:len(b)] != b,
    }
    for op, bound in re.findall(r"(>=|<=|==|!=|>|<)\s*([\d.]+)", specifier):
        want = _version_tuple(bound)
        width = max(len(have), len(want))
        if not compare[op](have + (0,) * (width - len(have)), want + (0,) * (width - len(want))):
            return False
    return True


def _declared_requirements() -> list[str]:
    """cuda-coop's requirement strings: from the installed metadata, or from pyproject.toml when the package runs
    from a source tree on sys.path (no metadata)."""
    try:
        return metadata.requires("cuda-coop") or []
    except metadata.PackageNotFoundError:
        pass
    pyproject = Path(__file__).resolve().parents[4] / "pyproject.toml"  # <root>/src/cuda/coop/_cli/doctor.py
    try:
        import tomllib

        project = tomllib.loads(pyproject.read_text(encoding="utf-8")).get("project", {})
    except (OSError, ValueError, ImportError):
        return []
    if project.get("name") != "cuda-coop":
        return []
    return [r for extra in project.get("optional-dependencies", {}).values() for r in extra]


def declared_requirement(distribution: str) -> str | None:
    """The version range cuda-coop's backend extras declare for ``distribution`` (e.g. ``>=0.6,<0.7``)."""
    for requirement in _declared_requirements():
        match = re.match(rf"{re.escape(distribution)}(?:\[[^\]]*\])?\s*([<>=!~][^;]*)", requirement)
        if match:
            clauses = [c.strip() for c in match.group(1).split(",")]
            return ",".join(sorted(clauses, key=lambda c: not c.startswith(">")))  # lower bound first
    return None


def _installed(distribution: str) -> str | None:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return None


def check_python() -> Check:
    version = ".".join(map(str, sys.version_info[:3]))
    if sys.version_info < (3, 11):
        return Check("python", FAIL, f"{version} ({sys.executable})", "use Python 3.11 or newer")
    return Check("python", OK, f"{version} ({sys.executable})")


def check_cuda_coop() -> Check:
    location = Path(__file__).resolve().parents[1]
    if __version__ == "0+unknown":
        return Check("cuda-coop", OK, f"source tree at {location} (not installed, so no version)")
    return Check("cuda-coop", OK, f"{__version__} ({location})")


def check_configuration() -> Check:
    bad, notes = [], []
    for name in ("CUDA_COOP_DISABLE_AUTO_DSL_REGISTRATION", "CUDA_COOP_DISABLE_CACHE"):
        try:
            if _config.env_flag(name):
                notes.append(f"{name}=1")
        except CoopError:
            bad.append(f"{name}={os.environ.get(name)!r}")
    for name in ("CUDA_COOP_CCCL_ROOT", "CUDA_COOP_SOURCE_DUMP_DIR"):
        if os.environ.get(name):
            notes.append(f"{name}={os.environ[name]}")
    if bad:
        return Check("configuration", FAIL, f"not a boolean: {', '.join(bad)}",
                     f"use one of {_config.ACCEPTED_FLAG_SPELLINGS}")
    return Check("configuration", OK, ", ".join(notes) if notes else "no CUDA_COOP_* variables set")


def check_distribution(distribution: str, name: str) -> Check:
    """An installed backend dependency against the range the extras declare."""
    wanted = declared_requirement(distribution)
    version = _installed(distribution)
    if version is None:
        return Check(name, FAIL, f"{distribution} is not installed (cuda-coop needs {wanted or 'it'} to build "
                     "kernels)", EXTRA_HINT)
    if wanted and not _satisfies(version, wanted):
        return Check(name, FAIL, f"{version} is outside the supported range {wanted}",
                     f'pip install "{distribution}{wanted}", or {EXTRA_HINT}')
    return Check(name, OK, f"{version}" + (f" (supported: {wanted})" if wanted else ""))


def check_backend() -> Check:
    """The registration a program performs: importing cuda.coop.numba_mlir checks numba-cuda-mlir's version and
    installs the compiler hooks."""
    start = time.perf_counter()
    try:
        importlib.import_module("cuda.coop.numba_mlir")
    except ImportError as exc:
        return Check("backend", FAIL, f"cuda.coop.numba_mlir does not import: {exc}", EXTRA_HINT)
    except Exception as exc:  # a broken install must still give the doctor's report
        return Check("backend", FAIL, f"registering numba-cuda-mlir failed: {type(exc).__name__}: {exc}",
                     EXTRA_HINT)
    return Check("backend", OK, f"numba-cuda-mlir registered ({time.perf_counter() - start:.2f} s to import)")


def check_cute_backend() -> Check:
    """The CuTe DSL backend, when nvidia-cutlass-dsl is installed, and the route its calls take (docs: cutlass, "How
    it works"): bitcode (inlined) with the ziglang wheel's clang, else the link route, and why."""
    name = "CuTe DSL backend"
    if _installed("nvidia-cutlass-dsl") is None:
        return Check(name, OK, 'nvidia-cutlass-dsl is not installed (optional: pip install "cuda-coop[cutlass-cu13]")')
    try:
        route = importlib.import_module("cuda.coop.cutlass._route")
    except Exception as exc:  # ImportError (version) or a broken install: reported, not raised
        return Check(name, FAIL, f"cuda.coop.cutlass does not import: {type(exc).__name__}: {exc}",
                     'pip install "cuda-coop[cutlass-cu13]"')
    lookup = route.clang_lookup()
    if lookup.clang is None:
        return Check(name, WARN, f"link route: each cooperative call stays a function call, because {lookup.reason}",
                     lookup.reason.rsplit("; ", 1)[-1])
    clang = lookup.clang
    return Check(name, OK, "bitcode route: calls inlined into the kernel (clang {} of ziglang {})".format(
        ".".join(map(str, clang.version)), clang.ziglang_version))


# ---------------------------------------------------------------- toolchain

def _cccl_version(include: Path) -> tuple[int, int, int] | None:
    try:
        text = (include / "cuda" / "std" / "__cccl" / "version.h").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    match = re.search(r"#\s*define\s+CCCL_VERSION\s+(\d+)", text)
    if not match:
        return None
    value = int(match.group(1))  # MMMmmmppp
    return value // 1_000_000, value // 1000 % 1000, value % 1000


def check_cccl() -> Check:
    from .._cub import toolchain

    try:
        include = toolchain._cccl_include()
    except CoopError as exc:
        return Check("CCCL headers", FAIL, str(exc), 'pip install "cuda-cccl>=1.2,<2" or fix CUDA_COOP_CCCL_ROOT')
    version = _cccl_version(include)
    source = "CUDA_COOP_CCCL_ROOT" if _config.cccl_root() else "cuda-cccl"
    text = "unknown version" if version is None else "CCCL {}.{}.{}".format(*version)
    detail = f"{text} at {include} (from {source})"
    if version is not None and version[:2] < CCCL_FOR_EVERY_OPERATION:
        return Check("CCCL headers", WARN, detail + "; reduce_batched and warp top-k need CCCL 3.6 or newer",
                     'pip install "cuda-cccl>=1.2,<2" and unset CUDA_COOP_CCCL_ROOT, or point it at CCCL 3.6+')
    return Check("CCCL headers", OK, detail)


def check_cuda_headers() -> Check:
    from .._cub import toolchain

    found = toolchain._cuda_include()
    if found is None:
        return Check("CUDA headers", WARN, "not found (cuda_runtime.h)",
                     'pip install "cuda-toolkit[cudart]", or set CUDA_HOME to a CUDA toolkit')
    return Check("CUDA headers", OK, str(found))


def _library_path(library: str) -> str:
    from .._cub import toolchain

    identity = toolchain.library_identity(library)
    return identity.rsplit(":", 2)[0] if identity.count(":") >= 2 else identity


def check_compilers() -> tuple[list[Check], tuple[int, int] | None]:
    """NVRTC, nvJitLink and their compatibility; returns the checks and NVRTC's version."""
    from .._cub import toolchain

    checks, versions = [], {}
    for name, query, library in (("NVRTC", toolchain._nvrtc_version, "nvrtc"),
                                 ("nvJitLink", toolchain._nvjitlink_version, "nvJitLink")):
        try:
            versions[name] = query()
        except Exception as exc:  # CoopBuildError, or cuda.bindings / the library missing altogether
            checks.append(Check(name, FAIL, f"not usable: {exc}", EXTRA_HINT))
            continue
        major, minor = versions[name]
        checks.append(Check(name, OK, f"{major}.{minor} ({_library_path(library)})"))
    if len(versions) == 2:
        try:
            toolchain.check_versions(versions["NVRTC"], versions["nvJitLink"])
        except CoopError as exc:
            checks.append(Check("NVRTC/nvJitLink", FAIL, str(exc).split(". Install")[0],
                                "install the NVRTC and nvJitLink of one CUDA toolkit version, e.g. "
                                'pip install "cuda-toolkit[nvrtc,nvjitlink]==13.0.*"'))
        else:
            checks.append(Check("NVRTC/nvJitLink", OK, "compatible: same major version, NVRTC not newer than "
                                "nvJitLink"))
    return checks, versions.get("NVRTC")


# ---------------------------------------------------------------- GPU and driver

NO_GPU = "no GPU present: kernels can be built for sm_90 but not launched"


def check_gpu(toolkit: tuple[int, int] | None) -> Iterator[Check]:
    """Driver and devices through cuda.bindings, imported here only."""
    try:
        from cuda.bindings import driver
    except ImportError:
        yield Check("GPU", WARN, "cuda-bindings is not installed, so no GPU can be used", EXTRA_HINT)
        return
    try:
        (err,) = driver.cuInit(0)
    except Exception as exc:  # no libcuda: cuda.pathfinder raises when the driver library is absent
        yield Check("GPU", WARN, f"{NO_GPU} (no NVIDIA driver found: {type(exc).__name__})",
                    "to launch kernels, run on a machine with an NVIDIA GPU and its driver")
        return
    if int(err) != 0:
        yield Check("GPU", WARN, f"{NO_GPU} (cuInit returned {err.name if hasattr(err, 'name') else err})",
                    "to launch kernels, run on a machine with an NVIDIA GPU and its driver")
        return
    err, version = driver.cuDriverGetVersion()
    driver_cuda = (int(version) // 1000, int(version) % 1000 // 10)
    detail = f"driver for CUDA {driver_cuda[0]}.{driver_cuda[1]}"
    if toolkit is not None and driver_cuda[0] < toolkit[0]:
        yield Check("driver", FAIL, f"{detail}, older than the CUDA {toolkit[0]} toolkit that builds the kernels",
                    f"update the NVIDIA driver to one for CUDA {toolkit[0]}, or install the "
                    f'"cuda-coop[numba-cuda-mlir-cu{driver_cuda[0]}]" extra')
    else:
        yield Check("driver", OK, detail)
    err, count = driver.cuDeviceGetCount()
    if int(err) != 0 or count == 0:
        yield Check("GPU", WARN, NO_GPU, "to launch kernels, run on a machine with an NVIDIA GPU")
        return
    from .._semantics.targets import KNOWN_ARCHITECTURES

    for ordinal in range(count):
        err, device = driver.cuDeviceGet(ordinal)
        err, raw = driver.cuDeviceGetName(64, device)
        name = raw.split(b"\0", 1)[0].decode(errors="replace") if isinstance(raw, bytes) else str(raw)
        attr = driver.CUdevice_attribute
        _, major = driver.cuDeviceGetAttribute(attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device)
        _, minor = driver.cuDeviceGetAttribute(attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device)
        cc = int(major) * 10 + int(minor)
        if cc not in KNOWN_ARCHITECTURES:
            yield Check(f"GPU {ordinal}", WARN, f"{name}, sm_{cc}, which cuda.coop does not know",
                        "use a GPU of a supported architecture (sm_75 ... sm_121)")
        else:
            yield Check(f"GPU {ordinal}", OK, f"{name}, sm_{cc}")


# ---------------------------------------------------------------- cache

def check_cache() -> Check:
    from .._cub import cache_inventory as cache

    try:
        info = cache.inventory()
    except CoopError as exc:  # CUDA_COOP_DISABLE_CACHE misspelt: reported by the configuration check too
        return Check("cache", FAIL, str(exc), "fix CUDA_COOP_DISABLE_CACHE")
    where = str(info.directory)
    if info.disabled:
        return Check("cache", OK, f"disabled by CUDA_COOP_DISABLE_CACHE ({where})")
    if not info.exists:
        return Check("cache", OK, f"{where} (not created yet; the first build creates it)")
    summary = f"{where}: {info.entries} entries, {human_size(info.total_bytes)}"
    if info.problem:
        return Check("cache", WARN, f"{summary}; not used because {info.problem}",
                     f"chmod 700 {where} (it must be yours and private), or set XDG_CACHE_HOME to a private "
                     "directory")
    if info.bad_entries:
        return Check("cache", WARN, f"{summary}, {info.bad_entries} unreadable (each one is rebuilt when needed)",
                     "python -m cuda.coop cache clear")
    return Check("cache", OK, f"{summary}, all readable")


# ---------------------------------------------------------------- sample build

def check_sample_build(target: str) -> Check:
    from .._cub import program

    start = time.perf_counter()
    try:
        from . import sample_kernel

        built = sample_kernel.build(target)
    except Exception as exc:  # the point is to report it, whatever it is
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        return Check("sample build", FAIL, f"a load/store kernel for {target} failed: {type(exc).__name__}: {first}",
                     "fix the FAIL lines above first; run with CUDA_COOP_SOURCE_DUMP_DIR=dir to keep the C++")
    elapsed = time.perf_counter() - start
    how = "provider from the cache" if built.metadata.get("from_cache") else (
        f"NVRTC {program.stats['nvrtc_seconds']:.2f} s")
    return Check("sample build", OK, f"transpose load/store kernel for {target} in {elapsed:.2f} s ({how}): "
                 f"{built.registers} registers, {built.shared_memory_bytes} B shared, {len(built.cubin)} B cubin")


def run_checks(*, build: bool = True, target: str = "sm_90",
               emit: Callable[[Check], None] | None = None) -> list[Check]:
    """Every check in order; ``emit`` sees each one as soon as it is known."""
    results: list[Check] = []

    def add(check: Check) -> None:
        results.append(check)
        if emit is not None:
            emit(check)

    for check in (check_python(), check_cuda_coop(), check_configuration()):
        add(check)
    add(check_distribution("numba-cuda-mlir", "numba-cuda-mlir"))
    add(check_distribution("cuda-cccl", "cuda-cccl"))
    add(check_cccl())
    add(check_cuda_headers())
    compilers, nvrtc_version = check_compilers()
    for check in compilers:
        add(check)
    for check in check_gpu(nvrtc_version):
        add(check)
    add(check_cache())
    backend = check_backend()
    add(backend)
    add(check_cute_backend())
    if build:
        if any(c.status == FAIL for c in results):
            add(Check("sample build", WARN, "not attempted because of the FAIL lines above",
                      "fix them, then run python -m cuda.coop doctor again"))
        else:
            add(check_sample_build(target))
    return results


def main(build: bool = True, target: str = "sm_90") -> int:
    """Print the report; exit status 1 when any check failed, else 0."""
    results = run_checks(build=build, target=target, emit=lambda c: print(c.line(), flush=True))
    failed = sum(c.status == FAIL for c in results)
    warned = sum(c.status == WARN for c in results)
    print(f"\n{len(results)} checks: {failed} failed, {warned} warnings")
    return 1 if failed else 0
