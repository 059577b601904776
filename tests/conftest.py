"""Shared test set-up: GPU detection and what a GPU run requires, the skips counted by reason, sharding, the fast
lane and a private provider cache."""
from __future__ import annotations

import collections
import functools
import importlib
import os
import re
from dataclasses import dataclass

import pytest

# A run that requires the GPU and both backends' GPU halves (CONTRIBUTING.md, "GPU tests"): every GPU runner sets it.
REQUIRE_GPU = "CUDA_COOP_REQUIRE_GPU"
_REQUIRED = pytest.StashKey[str]()  # why this run requires a GPU ("" when it does not)


@dataclass(frozen=True)
class GpuProbe:
    """What the driver said. ``found``: kernels can be launched; else ``reason`` says why not, and ``unexpected``
    tells a probe that failed (a driver error, an exception) from a machine with no driver or no device."""

    found: bool
    reason: str = ""
    unexpected: bool = False


# cuInit's answers that mean "no GPU on this machine" (the toolkit's stub library stands in for an absent driver);
# any other error means a GPU that could not be used, which is reported, never skipped.
_NO_DEVICE = frozenset({"CUDA_ERROR_NO_DEVICE", "CUDA_ERROR_STUB_LIBRARY"})


def _driver_absent(exc: BaseException) -> bool:
    """cuda-bindings could not load the driver library (libcuda): cuda.pathfinder's DynamicLibNotFoundError, or the
    dlopen failure of older cuda-bindings."""
    try:
        from cuda.pathfinder import DynamicLibNotFoundError

        if isinstance(exc, DynamicLibNotFoundError):
            return True
    except ImportError:
        pass
    return isinstance(exc, (OSError, RuntimeError)) and "libcuda" in str(exc)


@functools.lru_cache(maxsize=None)
def gpu_probe() -> GpuProbe:
    try:
        from cuda.bindings import driver
    except ImportError as exc:
        return GpuProbe(False, f"cuda-bindings is not installed ({exc})")
    try:
        (err,) = driver.cuInit(0)
        if int(err) != 0:
            name = getattr(err, "name", str(err))
            return GpuProbe(False, f"cuInit returned {name}", unexpected=name not in _NO_DEVICE)
        err, count = driver.cuDeviceGetCount()
        if int(err) != 0:
            return GpuProbe(False, f"cuDeviceGetCount returned {getattr(err, 'name', err)}", unexpected=True)
        if int(count) == 0:
            return GpuProbe(False, "the driver lists no device")
    except Exception as exc:
        if _driver_absent(exc):
            return GpuProbe(False, "no NVIDIA driver on this machine (libcuda was not found)")
        return GpuProbe(False, f"the driver probe raised {type(exc).__name__}: {exc}", unexpected=True)
    return GpuProbe(True)


def _requirement(config) -> str:
    """Why this run requires a GPU: ``CUDA_COOP_REQUIRE_GPU`` set true, or (the variable unset or empty) a ``-m gpu``
    selection; "" when it does not (the variable set false)."""
    value = os.environ.get(REQUIRE_GPU, "").strip()
    if value:
        from cuda.coop._config import parse_flag

        try:
            return f"{REQUIRE_GPU}={value}" if parse_flag(REQUIRE_GPU, value) else ""
        except ValueError as exc:
            raise pytest.UsageError(str(exc)) from None
    if re.fullmatch(r"gpu(\s+and\s+.+)?", (config.option.markexpr or "").strip()):
        return "-m gpu"
    return ""


# What the GPU tests of each backend import, and where it comes from. torch first: imported after cutlass it once
# broke torch's schema parser.
_GPU_NEEDS = (
    ("torch (the CuTe GPU tests' device tensors)", ("torch",), 'the "gpu-test" extra'),
    ("numba-cuda-mlir", ("numba_cuda_mlir", "cuda.coop.numba_mlir"), 'the "numba-cuda-mlir-cu13" extra'),
    ("the CuTe DSL", ("cutlass", "cutlass.cute", "cuda.coop.cutlass"), 'the "cutlass-cu13" extra'),
)


def unmet_gpu_needs(probe: GpuProbe) -> list[str]:
    """Each thing a GPU run needs and lacks, with its cause: a device, both backends, torch with CUDA."""
    causes = [f"no GPU can be used: {probe.reason}"] if not probe.found else []
    for what, modules, source in _GPU_NEEDS:
        try:
            for module in modules:
                importlib.import_module(module)
        except Exception as exc:  # a broken installation fails here as surely as a missing one
            causes.append(f"{what} does not import ({type(exc).__name__}: {exc}); install {source}")
    if probe.found and not any(cause.startswith("torch") for cause in causes):
        import torch

        if not torch.cuda.is_available():
            causes.append(f"torch {torch.__version__} sees no GPU (torch.version.cuda = {torch.version.cuda}: a "
                          "CPU-only build?); install a CUDA build of torch")
    return causes


def required(config) -> str:
    """Why this run requires a GPU, "" when it does not."""
    return config.stash.get(_REQUIRED, "")


def pytest_configure(config):
    config.stash[_REQUIRED] = _requirement(config)
    # Keep the suite's provider cache away from the user's unless a test chooses one.
    os.environ.setdefault("XDG_CACHE_HOME", os.path.join(str(config.rootpath), ".pytest_cache", "xdg"))


def pytest_sessionstart(session):
    """A run that requires the GPU stops here, before collecting anything, naming every unmet need."""
    why = required(session.config)
    if not why or session.config.option.collectonly:
        return
    causes = unmet_gpu_needs(gpu_probe())
    if causes:
        lines = "\n".join(f"  - {cause}" for cause in causes)
        pytest.exit(f"this run requires a GPU and both backends' GPU tests ({why}; {REQUIRE_GPU}=0 lets the GPU "
                    f"tests that cannot run skip, counted by reason at the end), but:\n{lines}",
                    returncode=pytest.ExitCode.TESTS_FAILED)


def _is_gpu_test(item) -> bool:
    """Marked ``gpu``, as ``-m gpu`` selects (not the keyword, which every test under a ``gpu`` folder has too)."""
    return item.get_closest_marker("gpu") is not None


def _is_gpu_file(path) -> bool:
    return path.parent.name == "gpu" or path.name.endswith("_gpu.py")


@pytest.hookimpl(hookwrapper=True)  # the old-style wrapper: the GPU machine's pytest may predate wrapper=True
def pytest_make_collect_report(collector):
    """With the GPU required, a GPU test module that skips itself (``pytest.importorskip`` at module level) fails."""
    report = (yield).get_result()
    if (report.skipped and isinstance(collector, pytest.Module) and _is_gpu_file(collector.path)
            and required(collector.config)):
        report.outcome = "failed"
        report.longrepr = (f"this run requires the GPU tests to run ({required(collector.config)}), but "
                           f"{collector.path.name} skipped: {_skip_reason(report)}")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """With the GPU required, a GPU test that skips fails with the skip's reason (an xfail stays an xfail)."""
    report = (yield).get_result()
    if (report.skipped and not hasattr(report, "wasxfail") and _is_gpu_test(item)
            and required(item.config)):
        report.outcome = "failed"
        report.longrepr = (f"this run requires the GPU tests to run ({required(item.config)}), but this one "
                           f"skipped: {_skip_reason(report)}")


def pytest_runtest_setup(item):
    """A probe that failed unexpectedly (not "no driver" or "no device") fails each GPU test instead of skipping it."""
    if _is_gpu_test(item):
        probe = gpu_probe()
        if not probe.found and probe.unexpected:
            pytest.fail(f"the GPU probe failed: {probe.reason}", pytrace=False)


# The fast lane (``pytest -m fast``, README): the unit tests and one build per family (the examples' builds; not the
# workloads' scripts under examples/workloads/, which build a dozen kernels each and run in the build lane).
_FAST = ("unit", "test_examples_compile.py")


def _fast(item) -> bool:
    return any(part in _FAST for part in item.path.parts) and "[workloads/" not in item.nodeid


def _shard(items):
    """``CUDA_COOP_TEST_SHARD=i/n`` keeps every n-th test from the i-th (0-based), so that n processes split one
    selection between them (``.ci/gpu-shards``); the rest are deselected, not skipped."""
    spec = os.environ.get("CUDA_COOP_TEST_SHARD")
    if not spec:
        return items, []
    index, count = (int(part) for part in spec.split("/"))
    kept = [item for n, item in enumerate(items) if n % count == index]
    dropped = [item for n, item in enumerate(items) if n % count != index]
    return kept, dropped


@pytest.hookimpl(trylast=True)  # after -k and -m deselect, so the shards split the selection, not the collection
def pytest_collection_modifyitems(config, items):
    kept, dropped = _shard(items)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept
    for item in items:
        if _fast(item):
            item.add_marker(pytest.mark.fast)
    probe = gpu_probe()
    if probe.found or probe.unexpected:  # an unexpected failure fails the GPU tests (pytest_runtest_setup)
        return
    skip = pytest.mark.skip(reason=f"needs an NVIDIA GPU and its driver: {probe.reason}")
    for item in items:
        if _is_gpu_test(item):
            item.add_marker(skip)


def _skip_reason(report) -> str:
    longrepr = report.longrepr
    reason = longrepr[2] if isinstance(longrepr, tuple) and len(longrepr) == 3 else str(longrepr)
    return reason.removeprefix("Skipped: ")


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    """The skips counted by reason (``-rfE`` lists failures and errors only): a run that should have run everything
    shows what it did not. Printed whenever something skipped, and always in a run that requires the GPU."""
    counts = collections.Counter(_skip_reason(report) for report in terminalreporter.stats.get("skipped", [])
                                 if not hasattr(report, "wasxfail"))
    if not counts and not required(config):
        return
    terminalreporter.section("skips by reason")
    if not counts:
        terminalreporter.write_line("skipped 0")
    for reason, count in sorted(counts.items(), key=lambda pair: (-pair[1], pair[0])):
        terminalreporter.write_line(f"skipped {count}: {reason}")
