"""Block prefix callbacks on the CuTe DSL backend without a GPU (SPEC 12.9; docs: cutlass, "Prefix callbacks"): a
StatefulFunction's op traced into a C function that takes the caller's state by pointer, inlined with the state in
registers, and the state forms that are errors, at the user's line. Its results, against NumPy on both backends: the
conformance cases ``running_scan-*``."""
from __future__ import annotations

import importlib.util
import re

import pytest

cutlass = pytest.importorskip("cutlass")
from cutlass.cute.runtime import make_fake_tensor  # noqa: E402

import cuda.coop.cutlass as cute_coop  # noqa: E402
from cuda import coop  # noqa: E402

import cute_prefix_kernels as pk  # noqa: E402


def _tensor(n, dtype=None):
    return make_fake_tensor(dtype or cutlass.Int32, (n,), stride=(1,))


def test_stateful_function_is_the_numba_namespaces_class():
    assert "StatefulFunction" in cute_coop.__all__ and not hasattr(coop, "StatefulFunction")
    assert pk.RUNNING_MAX.function is pk.RunningMax.__call__ and pk.RUNNING_MAX.name == "running_max"
    if importlib.util.find_spec("numba_cuda_mlir") is None:
        pytest.skip("numba-cuda-mlir is not installed")
    import cuda.coop.numba_mlir as numba_coop

    assert cute_coop.StatefulFunction is numba_coop.StatefulFunction


@pytest.mark.parametrize("name", ["scan", "exclusive_sum", "inclusive_sum", "exclusive_scan", "inclusive_scan"])
def test_the_scans_take_the_state_operand(name):
    import inspect

    params = inspect.signature(getattr(cute_coop, name)).parameters
    assert "prefix_op" in params and "state" in params
    assert "StatefulFunction" in getattr(cute_coop, name).__doc__


def test_a_running_scan_over_tiles_keeps_its_state_in_registers():
    """The state's address goes to the C++ functor CUB calls; inlined, neither the state nor the traced op's copy of
    it touches local memory, in a run-time loop over the tiles."""
    n = pk.TILES * pk.THREADS * pk.K
    kernel = cute_coop.compile_kernel(pk.tiles_launch, _tensor(n), _tensor(n))
    source = kernel.cpp_source
    assert re.search(r'extern "C" __device__ int cuda_coop_fn_\w+_int32_state_int32\(int\*, int\);', source)
    assert "prefix{state};" in source and "algo.ExclusiveSum(in, out, prefix);" in source
    assert "CALL" not in kernel.sass() and kernel.local_memory_bytes == 0


def test_a_register_tensor_state_and_a_class_op_build_inline():
    n = pk.TILES * pk.THREADS
    kernel = cute_coop.compile_kernel(pk.fragment_state_launch, _tensor(n, cutlass.Float64),
                                      _tensor(n, cutlass.Float64))
    assert "_state_float64(double*, double);" in kernel.cpp_source
    assert "CALL" not in kernel.sass() and kernel.local_memory_bytes == 0


def test_running_segmented_scans_take_has_head_and_build_inline():
    """prefix_op with head_flags (SPEC 8.24): both callback forms get has_head (int32) after the aggregate, and CUB's
    callback overload of a scan over (flag, value) pairs runs them."""
    n = pk.TILES * pk.THREADS * pk.K
    kernel = cute_coop.compile_kernel(pk.segmented_tiles_launch, _tensor(n), _tensor(n))
    source = kernel.cpp_source
    assert re.search(r'extern "C" __device__ int cuda_coop_fn_\w+_int32_state_int32_head\(int\*, int, int\);', source)
    assert re.search(r'extern "C" __device__ int cuda_coop_fn_\w+_int32_head_1\(int, int\);', source)
    assert source.count("using Algo = cuda_coop::BlockRunningSegmentedScan<int, 128") == 2
    assert "algo.ExclusiveScan(in, out, flags, initial_value, cuda::maximum<int>{}, prefix);" in source
    assert "CALL" not in kernel.sass() and kernel.local_memory_bytes == 0


def test_callbacks_branch_on_run_time_values_and_stay_untouched():
    """A plain function's ``if`` and conditional expressions on run-time values (SPEC 8.24's carry is one) trace as
    in a ``@cute.jit`` function, closures included: the backend traces a decorated copy, so the user's functions keep
    their code and gain no DSL attributes; inlined as before."""
    before = {f: f.__code__ for f in (pk.segment_carry, pk.larger_of, pk.CAPPED.function)}
    n = pk.TILES * pk.THREADS * pk.K
    for launch in (pk.segmented_tiles_launch, pk.branching_callbacks_launch):
        kernel = cute_coop.compile_kernel(launch, _tensor(n), _tensor(n))
        assert "CALL" not in kernel.sass() and kernel.local_memory_bytes == 0
    for function, code in before.items():
        assert function.__code__ is code
        assert not [name for name in vars(function) if name.startswith("_dsl") or name.startswith("_pre")]
    assert pk.segment_carry(_State(5), 3, 0) == 5 and pk.larger_of(2, 7) == 7  # still plain Python on the host


class _State(list):
    def __init__(self, value):
        super().__init__([value])


def test_a_reverse_running_scan_builds_inline():
    n = pk.TILES * pk.THREADS * pk.K
    kernel = cute_coop.compile_kernel(pk.reverse_tiles_launch, _tensor(n), _tensor(n))
    assert "cuda_coop::BlockRunningReverseScan<int, 128" in kernel.cpp_source
    assert "CALL" not in kernel.sass() and kernel.local_memory_bytes == 0


ERRORS = {
    "wrong_arity": (coop.CoopTypeError, "scan_op three_arguments could not be compiled for (int32, int32): TypeError: "
                                        "three_arguments() missing 1 required positional argument: 'c'"),
    "lambda": (coop.CoopTypeError, "scan_op <lambda> could not be compiled for (int32, int32): it branches on a "
                                   "run-time value (an if, a conditional expression, and/or), which CuTe rewrites "
                                   "only in a def whose source it can read; write it as a def function, or use "
                                   "cutlass.select_(condition, a, b)"),
    "global": (coop.CoopTypeError, "state must be a one-item register payload; got a global-memory array"),
    "shared": (coop.CoopTypeError, "state must be a one-item register payload; got a shared-memory array"),
    "two_items": (coop.CoopTypeError, "state must be a one-item register payload; got a ThreadData of 2 items"),
    "two_registers": (coop.CoopTypeError,
                      "state must be a one-item register payload; got a per-thread array of 2 items"),
    "other_dtype": (coop.CoopTypeError, "state must have the payload dtype int64; got int32; cast it"),
    "stateless_with_state": (coop.CoopValueError, "state requires prefix_op=StatefulFunction(...)"),
    "untraceable": (coop.CoopTypeError, "prefix_op untraceable could not be compiled for (int32 state, int32): "
                                        "AttributeError"),
    "common": (coop.CoopValueError, "cuda.coop.exclusive_sum prefix_op"),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_state_mistakes_are_reported_at_the_call(name):
    cls, fragment = ERRORS[name]
    n = pk.THREADS * pk.K
    with pytest.raises(coop.CoopError) as info:
        cute_coop.compile_kernel(pk.ERROR_LAUNCHES[name], _tensor(n), _tensor(n))
    exc = info.value
    first = str(exc).splitlines()[0]
    assert type(exc) is cls, f"{type(exc).__name__}: {exc}"
    assert fragment in first, first
    kernel = pk.ERROR_KERNELS[name]
    import inspect

    lines, start = inspect.getsourcelines(kernel)
    line = start + next(i for i, text in enumerate(lines) if "# HERE" in text)
    assert first.startswith(f"{pk.__file__}:{line}: "), first
    if name not in ("common", "lambda", "wrong_arity"):
        assert first.split(": ", 1)[1].startswith("cuda.coop.cutlass.exclusive_sum "), first
