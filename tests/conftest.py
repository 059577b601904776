"""Shared test set-up: GPU detection, compile-only target and a private provider cache."""
from __future__ import annotations

import functools
import os

import pytest


@functools.lru_cache(maxsize=None)
def gpu_available() -> bool:
    try:
        from cuda.bindings import driver

        (err,) = driver.cuInit(0)
        if int(err) != 0:
            return False
        err, count = driver.cuDeviceGetCount()
        return int(err) == 0 and count > 0
    except Exception:
        return False


# The fast lane (``pytest -m fast``, README): the unit tests and one build per family (the examples' builds).
_FAST = ("unit", "test_examples_compile.py")


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


def pytest_collection_modifyitems(config, items):
    kept, dropped = _shard(items)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept
    for item in items:
        if any(part in _FAST for part in item.path.parts):
            item.add_marker(pytest.mark.fast)
    if gpu_available():
        return
    skip = pytest.mark.skip(reason="needs an NVIDIA GPU and its driver; none was found on this machine")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


def pytest_configure(config):
    # Keep the suite's provider cache away from the user's unless a test chooses one.
    os.environ.setdefault("XDG_CACHE_HOME", os.path.join(str(config.rootpath), ".pytest_cache", "xdg"))
