"""Real CUB kernels built the fast way link to the same sm_90 code as the plain way (no GPU needed).

The fast way: CCCL headers handed to NVRTC from memory, and after the first build of a ``#include`` block (a
plain compile that leaves a PCH made in the background) the next specialisations with the same headers use the
PCH. The plain way: NVRTC reads every header from disk, no PCH. The cubins are compared byte for byte.
"""
from __future__ import annotations

import numpy as np
import pytest
from numba_cuda_mlir import cuda

import cuda.coop.numba_mlir as numba_coop
from cuda import coop
from cuda.coop._cub import cache, nvrtc, pch


def copy_kernel():
    @cuda.jit
    def kernel(a, b, c, d, k):
        tile = np.int64(cuda.blockIdx.x) * cuda.blockDim.x * k
        x = coop.ThreadData(k)
        coop.load(coop.this_block(), a, x, algorithm="transpose", offset=tile)
        coop.store(coop.this_block(), b, x, algorithm="transpose", offset=tile)
        y = coop.ThreadData(k)
        coop.load(coop.this_warp(), c, y, algorithm="striped", offset=tile)
        coop.store(coop.this_warp(), d, y, algorithm="striped", offset=tile)

    return kernel


def scan_kernel():
    @cuda.jit
    def kernel(src, dst, k):
        items = coop.ThreadData(k)
        coop.load(coop.this_block(), src, items, algorithm="transpose")
        items = coop.inclusive_sum(coop.this_block(), items)
        coop.store(coop.this_block(), dst, items, algorithm="transpose")

    return kernel


def _args(factory, dtype):
    x = np.zeros(4096, dtype)
    return (x, x, x, x, 4) if factory is copy_kernel else (x, x, 4)


@pytest.fixture
def fresh_cache(tmp_path, monkeypatch):
    """An empty cache and a process without PCHs; ``fresh_cache(name)`` switches to another empty cache."""
    monkeypatch.delenv("CUDA_COOP_DISABLE_CACHE", raising=False)

    def switch(name: str) -> None:
        pch.forget_pch()
        cache.forget_memo()
        monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / name))

    switch("first")
    yield switch
    pch.forget_pch()
    cache.forget_memo()


@pytest.mark.parametrize("factory", [copy_kernel, scan_kernel])
def test_fast_builds_link_to_the_same_cubin(factory, fresh_cache, monkeypatch):
    fast = {np.int32: numba_coop.compile_kernel(factory(), _args(factory, np.int32), block=128)}  # the PCH follows
    pch.wait_for_pch()
    used = nvrtc.stats["pch_used"]
    for dtype in (np.float32, np.int64):
        fast[dtype] = numba_coop.compile_kernel(factory(), _args(factory, dtype), block=128)
    assert nvrtc.stats["pch_used"] == used + 2

    fresh_cache("plain")
    monkeypatch.setattr(pch._pch, "off", "test: reference builds without a PCH")
    monkeypatch.setattr(nvrtc, "header_sources", lambda *args: {})  # NVRTC reads the include path
    for dtype, built in fast.items():
        plain = numba_coop.compile_kernel(factory(), _args(factory, dtype), block=128)
        assert not plain.metadata.get("from_cache")
        assert plain.cubin == built.cubin
        assert plain.metadata["scratch_bytes"] == built.metadata["scratch_bytes"]
    assert nvrtc.stats["pch_used"] == used + 2
