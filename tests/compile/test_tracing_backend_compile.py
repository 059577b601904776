"""The backend contract carries a second backend (issue 20): ``tracing_backend.py`` is a tracer defined in the tests,
with no compiler, that plans a kernel with the shared call layer and builds it with the shared build session,
without anything of ``cuda.coop.numba_mlir``. It must plan what the numba-cuda-mlir backend plans for the same
kernel: the same C++ translation unit, the same scratch layout and the same barrier decisions."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest


TRACER = Path(__file__).with_name("tracing_backend.py")
CALLS = ["load", "exclusive_sum", "sum", "radix_sort_keys", "merge_sort_pairs", "histogram", "adjacent_difference",
         "exchange", "store"]


@pytest.fixture(scope="module")
def traced() -> dict:
    """The tracer's report, from a process of its own (so that no other test's imports count)."""
    result = subprocess.run([sys.executable, str(TRACER)], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout)


def test_a_tracer_plans_and_builds_every_call_without_a_compiler(traced):
    assert traced["compiler_modules"] == []  # neither numba nor cuda.coop.numba_mlir was imported
    assert [call["call"] for call in traced["calls"]] == CALLS
    assert traced["ltoir_bytes"] > 0
    with_scratch = [call for call in traced["calls"] if call["scratch"] is not None]
    assert [call["call"] for call in with_scratch] == CALLS[:-1]  # a direct store needs none
    assert traced["scratch_table"] == sorted(call["symbol"] for call in with_scratch)
    size, alignment, dynamic = traced["backing"]
    assert (size, dynamic) == (traced["scratch_bytes"], False) and alignment >= 16
    for call in with_scratch:
        need, need_alignment = call["scratch"]
        assert need > 0 and call["offset"] % need_alignment == 0 and call["offset"] + need <= size, call


def test_the_tracer_keeps_exactly_the_reuse_barriers_it_needs(traced):
    """Every compiler-owned scratch use but the last keeps its trailing barrier; the TempStorage with auto_sync=True
    keeps its own, and sits at the start of the backing (explicit storage is placed first)."""
    barriers = {call["call"]: call["reuse_barrier"] for call in traced["calls"]}
    assert barriers == {**{name: True for name in CALLS}, "exchange": False, "store": False}
    adjacent = next(call for call in traced["calls"] if call["call"] == "adjacent_difference")
    assert adjacent["offset"] == 0
    owned = {call["offset"] for call in traced["calls"] if call["call"] not in ("adjacent_difference", "store")}
    assert len(owned) == 1  # the compiler-owned block scratch: one slice, reused by every call


def test_runtime_operands_reach_the_call_as_parameters(traced):
    reduce_call = next(call for call in traced["calls"] if call["call"] == "sum")
    assert reduce_call["operands"] == ["int32", "runtime int32"] and reduce_call["params"][:2] == ["value", "i64"]
    store = traced["calls"][-1]
    assert store["operands"] == ["array of int32", "payload 2xint32", "runtime int32"]  # valid_items=total


def test_the_tracer_plans_what_numba_cuda_mlir_plans_for_the_same_kernel(traced):
    """The very function the tracer traced, compiled by numba-cuda-mlir: the same C++ translation unit."""
    pytest.importorskip("numba_cuda_mlir")  # the backend raises ImportError, not a skip, without its compiler
    numba_coop = pytest.importorskip("cuda.coop.numba_mlir")
    from numba_cuda_mlir import cuda
    from tracing_backend import sample_kernel

    data = np.arange(512, dtype=np.int32)
    built = numba_coop.compile_kernel(cuda.jit(sample_kernel), (data, data.copy(), np.int32(5)), block=128)
    assert built.cpp_source == traced["source"]
    assert "CALL" not in built.sass() and built.local_memory_bytes == 0
