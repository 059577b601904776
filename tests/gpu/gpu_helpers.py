"""Helpers shared by the GPU test modules (not a test module itself): poisoned outputs and full-range inputs without
the poison (``tests/poison.py``), per-test random generators, exact float sum and scan oracles, and the check that
a child process died of a device trap. ``tests/unit/test_gpu_helpers.py`` tests them without a GPU."""
from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import zlib
from fractions import Fraction
from pathlib import Path

import numpy as np

from poison import assert_same, full_range, poison_value, poisoned  # noqa: F401  (re-exported for the GPU tests)

ROOT = Path(__file__).resolve().parents[2]


# ------------------------------------------------------------------ a generator per test

def generator_for(nodeid: str) -> np.random.Generator:
    """The generator of the test ``nodeid``: its inputs are the same whichever tests run beside it (``-k``, shards)."""
    return np.random.default_rng(zlib.crc32(nodeid.encode()))


class _SeededPerTest:
    """A module's ``rng`` outside a test: ``tests/gpu/conftest.py`` puts ``generator_for(test's node id)`` in its
    place for each test, so drawing from it anywhere else (at import, at collection) is a mistake."""

    def __getattr__(self, name):
        raise RuntimeError("this module's rng is seeded per test (tests/gpu/conftest.py): draw inputs inside a test")


SEEDED_PER_TEST = _SeededPerTest()


# ------------------------------------------------------------------ exact float sums and scans

def exact_float_items(rng: np.random.Generator, n: int, dtype) -> np.ndarray:
    """Nonzero multiples of 1/8 of magnitude at most 100: up to 2**14 of them sum exactly in float32 and float64 in
    any order (``exact_in_any_order``), so a float sum or scan is compared exactly, and dropping or repeating any one
    item changes it."""
    magnitude = rng.integers(1, 801, n)
    return (magnitude * rng.choice([-1, 1], n) / 8).astype(dtype)


def _fractions(x) -> list[Fraction]:
    return [Fraction(float(v)) for v in np.asarray(x).reshape(-1)]  # a binary float is an exact fraction


def exact_in_any_order(x, dtype) -> bool:
    """Whether every sum of items of ``x``, in any order and grouping, is exact in ``dtype``: the items are multiples
    of one power of two ``2**-e`` (their largest denominator) and the total of their magnitudes in units of ``2**-e``
    fits the significand, so every partial sum is an integer number of units that the significand holds."""
    parts = _fractions(x)
    unit = max((f.denominator for f in parts), default=1)
    return sum(abs(f) for f in parts) * unit <= 2 ** (np.finfo(dtype).nmant + 1)


def _require_exact(x, dtype) -> None:
    if not exact_in_any_order(x, dtype):
        raise AssertionError(f"the test's {np.dtype(dtype).name} inputs do not sum exactly in every order: draw them "
                             "with exact_float_items (or compare against a rounding bound)")


def float_scan_oracle(x, dtype, *, exclusive: bool) -> np.ndarray:
    """The prefix sums of ``x`` (an exclusive scan starts at 0), computed in exact rationals and returned in
    ``dtype``: exactly what any summation order yields when ``exact_in_any_order`` holds (checked)."""
    _require_exact(x, dtype)
    total, out = Fraction(0), []
    for f in _fractions(x):
        if exclusive:
            out.append(total)
        total += f
        if not exclusive:
            out.append(total)
    want = np.array([float(f) for f in out], dtype)
    assert all(Fraction(float(w)) == f for w, f in zip(want, out)), "a prefix sum is not representable"
    return want


def check_float_scan(got, x, *, exclusive: bool, what: str = "") -> None:
    """A float sum scan of ``x`` against its exact value: the operation's rounding bound is zero on these inputs."""
    want = float_scan_oracle(x, np.asarray(got).dtype, exclusive=exclusive)
    np.testing.assert_array_equal(got, want, err_msg=f"{what}: the sum scan of {len(want)} items")


def check_float_sum(got, x, *, what: str = "") -> None:
    """A float sum of ``x`` (or several copies of it: every member of a group receives it) against its exact value
    (see ``check_float_scan``)."""
    want = float_scan_oracle(x, np.asarray(got).dtype, exclusive=False)[-1]
    np.testing.assert_array_equal(got, want, err_msg=f"{what}: the sum of {np.asarray(x).size} items")


# ------------------------------------------------------------------ device traps (SPEC 2.5) in a child process

#: What a device trap yields. The generated code's range checks call ``__trap()`` (``check_range`` in
#: ``_cub/provider.py``, the stream and capacity checks of ``_cub/families/run_length.py``; the clang shim maps it
#: to ``__builtin_trap``), the PTX ``trap`` instruction: the kernel aborts with CUDA_ERROR_LAUNCH_FAILED (719,
#: "unspecified launch failure"). A missing range guard shows otherwise: an out-of-bounds global access is
#: CUDA_ERROR_ILLEGAL_ADDRESS (700), a failed device ``assert`` CUDA_ERROR_ASSERT (710).
TRAP_ERROR = "CUDA_ERROR_LAUNCH_FAILED"

#: Kernel faults other than the trap: a trapping child must report none of them.
OTHER_KERNEL_FAULTS = frozenset({
    "CUDA_ERROR_ILLEGAL_ADDRESS", "CUDA_ERROR_ASSERT", "CUDA_ERROR_ILLEGAL_INSTRUCTION",
    "CUDA_ERROR_MISALIGNED_ADDRESS", "CUDA_ERROR_INVALID_ADDRESS_SPACE", "CUDA_ERROR_INVALID_PC",
    "CUDA_ERROR_HARDWARE_STACK_ERROR", "CUDA_ERROR_LAUNCH_TIMEOUT", "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES",
})

# The runtime API's names and messages (torch, the CuTe DSL) of the same errors, as the driver API names them.
_RUNTIME_FORMS = {
    "cudaErrorLaunchFailure": "CUDA_ERROR_LAUNCH_FAILED",
    "unspecified launch failure": "CUDA_ERROR_LAUNCH_FAILED",
    "cudaErrorIllegalAddress": "CUDA_ERROR_ILLEGAL_ADDRESS",
    "an illegal memory access was encountered": "CUDA_ERROR_ILLEGAL_ADDRESS",
    "cudaErrorAssert": "CUDA_ERROR_ASSERT",
    "device-side assert triggered": "CUDA_ERROR_ASSERT",
    "cudaErrorIllegalInstruction": "CUDA_ERROR_ILLEGAL_INSTRUCTION",
    "an illegal instruction was encountered": "CUDA_ERROR_ILLEGAL_INSTRUCTION",
    "cudaErrorMisalignedAddress": "CUDA_ERROR_MISALIGNED_ADDRESS",
    "misaligned address": "CUDA_ERROR_MISALIGNED_ADDRESS",
}
_CUDA_ERROR = re.compile(r"\bCUDA_ERROR_[A-Z_]+|" + "|".join(re.escape(form) for form in _RUNTIME_FORMS))


def cuda_errors(text: str) -> list[str]:
    """The CUDA errors ``text`` reports, in order, by their driver API names (``CUDA_ERROR_...``)."""
    return [_RUNTIME_FORMS.get(m.group(0), m.group(0)) for m in _CUDA_ERROR.finditer(text)]


def trap_failure(returncode: int, stdout: str, stderr: str) -> str | None:
    """Why a child's output is not that of a device trap (None when it is). The child prints ``IN_RANGE_OK`` once its
    in-range launch passed and ``NO_TRAP`` if the out-of-range launch finished; the trap must then be the first CUDA
    error it reports, and no other kernel fault may appear."""
    if "IN_RANGE_OK" not in stdout:
        return "the in-range launch did not pass"
    if "NO_TRAP" in stdout:
        return "the out-of-range launch finished: nothing trapped"
    if returncode == 0:
        return "the child exited with status 0"
    errors = cuda_errors(stderr)
    if not errors:
        return "the child failed without a CUDA error"
    if errors[0] != TRAP_ERROR:
        return f"the first CUDA error is {errors[0]}, not the trap's {TRAP_ERROR}"
    others = sorted(set(errors) & OTHER_KERNEL_FAULTS)
    if others:
        return f"besides the trap the child reports {', '.join(others)}"
    return None


def assert_traps(child: str, *args: object) -> None:
    """Run ``child`` in a fresh process (a trap leaves its CUDA context unusable): the in-range launch must pass and
    the out-of-range one must trap (``trap_failure``). The child runs from a file, not ``-c``: the CuTe DSL compiles a
    function from its source file."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])}
    with tempfile.TemporaryDirectory() as folder:
        script = Path(folder) / "trap_child.py"
        script.write_text(child)
        done = subprocess.run([sys.executable, str(script), *map(str, args)], env=env, capture_output=True, text=True,
                              timeout=300, check=False)
    problem = trap_failure(done.returncode, done.stdout, done.stderr)
    assert problem is None, f"{problem} (exit status {done.returncode})\n{done.stderr[-3000:]}"


def reduce_batched_expected(src, width, batches, layout, ufunc, dtype):
    """reduce_batched's result slots per thread, (threads, ceil(B/W)), and the mask of the slots SPEC 8.6 defines:
    ``src`` holds each thread's B items in linear-rank order, groups of W consecutive ranks reduce each batch with
    ``ufunc`` (int sums wrap as on the device), and batch b lands in lane ``b % W`` slot ``b // W`` (striped) or lane
    ``b // m`` slot ``b % m`` (blocked)."""
    x = src.reshape(-1, width, batches)  # (groups, lanes, batches)
    reduced = ufunc.reduce(x, axis=1).astype(dtype)  # (groups, batches)
    m = -(-batches // width)
    want = np.zeros((x.shape[0], width, m), dtype)
    defined = np.zeros((x.shape[0], width, m), bool)
    for r in range(width):
        for i in range(m):
            b = r + i * width if layout == "striped" else r * m + i
            if b < batches:
                want[:, r, i] = reduced[:, b]
                defined[:, r, i] = True
    return want.reshape(-1, m), defined.reshape(-1, m)
