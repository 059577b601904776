"""Every script in examples/ builds its kernels for sm_90 on a machine without a GPU and says that it could not
launch them (each runs in its own process, as a user would run it). With a GPU present these tests skip:
tests/gpu/test_examples_gpu.py runs the same scripts to completion there."""
from __future__ import annotations

import functools
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# the scripts (examples/workloads/ also holds the kernel and oracle modules its scripts import)
EXAMPLES = sorted(str(path.relative_to(ROOT / "examples")) for pattern in ("*.py", "workloads/*.py")
                  for path in (ROOT / "examples").glob(pattern) if 'if __name__ == "__main__":' in path.read_text())


@functools.cache
def _gpu_present() -> bool:
    try:
        from cuda.bindings import driver

        (err,) = driver.cuInit(0)
        if int(err) != 0:
            return False
        err, count = driver.cuDeviceGetCount()
        return int(err) == 0 and count > 0
    except Exception:
        return False


def test_every_family_has_an_example():
    assert {"copy_tiles.py", "block_sum.py", "scan_tiles.py", "exchange_tiles.py", "merge_sort_tiles.py",
            "radix_sort_tiles.py", "topk_tiles.py", "histogram_bytes.py", "adjacent_tiles.py",
            "reduce_batched_warps.py", "run_length_decode.py"} <= set(EXAMPLES)


def test_every_family_group_has_a_cute_example():
    """The CuTe DSL backend's examples: scans, sorts, reductions, histogram and run-length decode (docs: cutlass,
    "Examples"), each built here and run on a GPU as the numba-cuda-mlir ones are."""
    assert {"cute_scan_tiles.py", "cute_sort_tiles.py", "cute_reduce_tiles.py",
            "cute_histogram_runs.py"} <= set(EXAMPLES)


@pytest.mark.parametrize("name", EXAMPLES)
def test_example_builds_without_a_gpu(name):
    if _gpu_present():
        pytest.skip("a GPU is present: tests/gpu/test_examples_gpu.py runs the examples")
    # an install may hold one backend (README: numba-cuda-mlir alone): the other backend's examples skip
    pytest.importorskip("cutlass" if Path(name).name.startswith("cute_") else "numba_cuda_mlir")
    out = subprocess.run([sys.executable, str(ROOT / "examples" / name)], cwd=ROOT, capture_output=True, text=True,
                         check=False, timeout=600)
    report = f"exit {out.returncode}\nstdout:\n{out.stdout[-3000:]}\nstderr:\n{out.stderr[-6000:]}"
    assert out.returncode == 0, report
    assert re.search(r" for sm_90a? in ", out.stdout) and out.stdout.startswith("built "), report
    assert "could not launch on a GPU here" in out.stdout, report
    assert "Traceback" not in out.stderr, report
