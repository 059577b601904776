"""tests/conftest.py's GPU logic, run in a child pytest with tests/conftest.py over a small suite: a driver probe that
finds no driver or no device skips the GPU tests, one that fails unexpectedly fails them; with the GPU required
(``CUDA_COOP_REQUIRE_GPU=1`` or ``-m gpu``) a missing GPU, backend or torch stops the run with its cause, and a GPU
test that skips fails; the skips are counted by reason at the end. The driver and the modules are faked by a plugin
(``-p fakes``), so these run the same with or without a GPU."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("cuda.bindings")  # the probe's driver module, which the plugin fakes

CONFTEST = Path(__file__).resolve().parents[1] / "conftest.py"

# A plugin loaded before tests/conftest.py: FAKE_PROBE says what the driver answers, FAKE_MODULES names the modules
# that import (fakes; torch's CUDA as FAKE_TORCH_CUDA says), FAKE_MISSING those that do not.
FAKES = '''
import os, sys, types
from cuda.bindings import driver
from cuda.pathfinder import DynamicLibNotFoundError

R = driver.CUresult
probe = os.environ["FAKE_PROBE"]
if probe == "absent":
    def cuInit(flags):
        raise DynamicLibNotFoundError('"cuda" is an NVIDIA driver library and can only be found via system search')
elif probe == "raises":
    def cuInit(flags):
        raise ValueError("the driver probe exploded")
else:
    def cuInit(flags):
        return (getattr(R, probe),)
driver.cuInit = cuInit
driver.cuDeviceGetCount = lambda: (R.CUDA_SUCCESS, 1)
for name in os.environ.get("FAKE_MODULES", "").split():
    module = types.ModuleType(name)
    if name == "torch":
        module.__version__ = "0.fake"
        module.version = types.SimpleNamespace(cuda=None)
        module.cuda = types.SimpleNamespace(is_available=lambda: os.environ.get("FAKE_TORCH_CUDA") == "1")
    sys.modules[name] = module
for name in os.environ.get("FAKE_MISSING", "").split():
    sys.modules[name] = None  # import raises ImportError
'''

SUITE = {
    "pytest.ini": "[pytest]\nmarkers =\n    gpu: needs a GPU\n    fast: the fast lane\naddopts = -rfE\n",
    "test_plain.py": "def test_plain():\n    pass\n",
    "gpu/test_kernel_gpu.py": "import pytest\n\npytestmark = pytest.mark.gpu\n\n\ndef test_launch():\n    pass\n",
}
BACKENDS = "numba_cuda_mlir cuda.coop.numba_mlir cutlass cutlass.cute cuda.coop.cutlass"
ALL = f"torch {BACKENDS}"


def run_suite(tmp_path: Path, probe: str, *args: str, require: str | None = None, modules: str = "",
              missing: str = "", torch_cuda: bool = True, files: dict[str, str] | None = None):
    shutil.copy(CONFTEST, tmp_path / "conftest.py")
    for name, text in {**SUITE, **(files or {}), "fakes.py": FAKES}.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    env = {k: v for k, v in os.environ.items()
           if k not in ("CUDA_COOP_REQUIRE_GPU", "CUDA_COOP_TEST_SHARD", "PYTEST_ADDOPTS")}
    # the fake backends are not registered; a wide terminal keeps the summary's lines whole
    env.update(CUDA_COOP_DISABLE_AUTO_DSL_REGISTRATION="1", COLUMNS="400",
               FAKE_PROBE=probe, FAKE_MODULES=modules, FAKE_MISSING=missing, FAKE_TORCH_CUDA=str(int(torch_cuda)),
               PYTHONPATH=os.pathsep.join(filter(None, [str(tmp_path), env.get("PYTHONPATH")])))
    if require is not None:
        env["CUDA_COOP_REQUIRE_GPU"] = require
    out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "fakes", "-p", "no:cacheprovider", *args],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120, check=False)
    return out.returncode, out.stdout + out.stderr


@pytest.mark.parametrize("probe, reason", [
    ("absent", "no NVIDIA driver on this machine (libcuda was not found)"),
    ("CUDA_ERROR_NO_DEVICE", "cuInit returned CUDA_ERROR_NO_DEVICE"),
])
def test_no_driver_or_no_device_skips_the_gpu_tests_and_counts_them(tmp_path, probe, reason):
    status, output = run_suite(tmp_path, probe)
    assert status == 0, output
    assert "1 passed, 1 skipped" in output, output
    assert "skips by reason" in output and f"skipped 1: needs an NVIDIA GPU and its driver: {reason}" in output, output


@pytest.mark.parametrize("probe, cause", [
    ("raises", "the driver probe raised ValueError: the driver probe exploded"),
    ("CUDA_ERROR_SYSTEM_DRIVER_MISMATCH", "cuInit returned CUDA_ERROR_SYSTEM_DRIVER_MISMATCH"),
])
def test_a_probe_that_fails_unexpectedly_fails_the_gpu_tests(tmp_path, probe, cause):
    status, output = run_suite(tmp_path, probe, modules=ALL)
    assert status == 1, output
    assert "1 passed, 1 error" in output, output
    assert f"ERROR gpu/test_kernel_gpu.py::test_launch - Failed: the GPU probe failed: {cause}" in output, output


@pytest.mark.parametrize("selection", [("-m", "gpu"), ()])
def test_a_required_gpu_that_is_absent_stops_the_run(tmp_path, selection):
    status, output = run_suite(tmp_path, "absent", *selection, require=None if selection else "1", modules=ALL)
    assert status == 1, output
    why = "-m gpu" if selection else "CUDA_COOP_REQUIRE_GPU=1"
    assert f"this run requires a GPU and both backends' GPU tests ({why};" in output, output
    assert "no GPU can be used: no NVIDIA driver on this machine" in output, output
    assert "passed" not in output, output  # stopped before any test ran


@pytest.mark.parametrize("missing, cause", [
    ("torch", 'torch (the CuTe GPU tests\' device tensors) does not import (ModuleNotFoundError: import of torch '
              'halted; None in sys.modules); install the "gpu-test" extra'),
    ("cutlass", 'the CuTe DSL does not import (ModuleNotFoundError: import of cutlass halted; None in sys.modules); '
                'install the "cutlass-cu13" extra'),
    ("numba_cuda_mlir", "numba-cuda-mlir does not import"),
])
def test_a_required_gpu_run_names_each_missing_module(tmp_path, missing, cause):
    present = " ".join(name for name in ALL.split() if name.split(".")[0] != missing)
    status, output = run_suite(tmp_path, "CUDA_SUCCESS", "-m", "gpu", modules=present, missing=missing)
    assert status == 1, output
    assert cause in output, output
    assert "no GPU can be used" not in output, output


def test_a_required_gpu_run_needs_torch_with_cuda(tmp_path):
    status, output = run_suite(tmp_path, "CUDA_SUCCESS", require="yes", modules=ALL, torch_cuda=False)
    assert status == 1, output
    assert "torch 0.fake sees no GPU (torch.version.cuda = None: a CPU-only build?)" in output, output


def test_a_required_gpu_run_with_everything_runs_and_reports_no_skips(tmp_path):
    status, output = run_suite(tmp_path, "CUDA_SUCCESS", require="1", modules=ALL)
    assert status == 0, output
    assert "2 passed" in output and "skips by reason" in output and "skipped 0" in output, output


def test_a_required_gpu_run_fails_a_gpu_test_or_module_that_skips(tmp_path):
    files = {"gpu/test_skips_gpu.py": "import pytest\n\n\n@pytest.mark.gpu\ndef test_skips():\n"
                                      "    pytest.skip('needs something else')\n\n\ndef test_plain_here():\n"
                                      "    pytest.skip('not a GPU test')\n",
             "gpu/test_optional_gpu.py": "import pytest\n\npytest.importorskip('a_module_nobody_has')\n"}
    status, output = run_suite(tmp_path, "CUDA_SUCCESS", "--continue-on-collection-errors", require="1",
                               modules=ALL, files=files)
    assert status == 1, output
    assert "FAILED gpu/test_skips_gpu.py::test_skips - this run requires the GPU tests to run " \
           "(CUDA_COOP_REQUIRE_GPU=1), but this one skipped: needs something else" in output, output
    assert "ERROR gpu/test_optional_gpu.py" in output, output
    assert "test_optional_gpu.py skipped: could not import 'a_module_nobody_has'" in output, output
    assert "skipped 1: not a GPU test" in output, output  # a test without the gpu marker may still skip


def test_the_requirement_set_false_lets_a_gpu_selection_skip(tmp_path):
    status, output = run_suite(tmp_path, "absent", "-m", "gpu", require="0", modules=ALL)
    assert status == 0, output
    assert "1 skipped, 1 deselected" in output, output
    assert "skipped 1: needs an NVIDIA GPU and its driver" in output, output


def test_skips_are_counted_by_reason_most_first(tmp_path):
    files = {"test_skips.py": "import pytest\n\n\n@pytest.mark.parametrize('n', range(3))\ndef test_a(n):\n"
                              "    pytest.skip('reason a')\n\n\ndef test_b():\n    pytest.skip('reason b')\n"}
    status, output = run_suite(tmp_path, "CUDA_SUCCESS", "test_skips.py", modules=ALL, files=files)
    assert status == 0, output
    assert "skipped 3: reason a\nskipped 1: reason b\n" in output, output
