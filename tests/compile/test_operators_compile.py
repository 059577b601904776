"""User operator callables: symbols, caching, callback errors (SPEC 7.3, 8.0; C14, C16, H2) without a GPU."""
from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
import types

import numpy as np
import pytest

import cuda.coop.numba_mlir as numba_coop
from cuda import coop
from cuda.coop._semantics.operators import callable_symbol, resolve_operator
from cuda.coop.numba_mlir._failures import failure_reason
from cuda.coop.numba_mlir._lowering import operator_link
from numba_cuda_mlir import cuda

from compile_helpers import expect_compile_error

X32 = np.zeros(128, np.int32)
F32 = np.zeros(128, np.float32)


def larger(a, b):
    return a if a > b else b


SCALE = 2


def scaled(a, b):
    return a + b * SCALE


OFFSET = 1


def offset_of(b):
    return b * OFFSET


@cuda.jit(device=True)
def device_offset_of(b):
    return b * OFFSET


def calls_helper(a, b):
    return a + device_offset_of(b)


def reduce_kernel(op):
    @cuda.jit
    def kernel(src, dst):
        block = coop.this_block()
        dst[block.rank()] = coop.reduce(block, src[block.rank()], binary_op=op)

    return kernel


def _symbols(cpp):
    return sorted({word.split("(")[0] for line in cpp.splitlines() if line.startswith('extern "C"')
                   for word in line.split() if word.startswith("cuda_coop_fn_")})


# ------------------------------------------------------------------ bug 1: one function, two dtypes
def test_one_function_at_two_dtypes_in_one_kernel():
    @cuda.jit
    def kernel(xi, xf, di, df):
        block = coop.this_block()
        di[block.rank()] = coop.reduce(block, xi[block.rank()], binary_op=larger)
        df[block.rank()] = coop.reduce(block, xf[block.rank()], binary_op=larger)

    built = numba_coop.compile_kernel(kernel, (X32, F32, X32, F32), block=128, target="sm_90")
    symbols = _symbols(built.cpp_source)
    assert len(symbols) == 2 and {s.rsplit("_", 1)[1] for s in symbols} == {"int32", "float32"}, symbols
    assert "CALL" not in built.sass()


def test_one_function_as_scan_op_and_reduce_op_at_two_dtypes():
    @cuda.jit
    def kernel(xi, xf, di, df):
        block = coop.this_block()
        di[block.rank()] = coop.inclusive_scan(block, xi[block.rank()], scan_op=larger)
        df[block.rank()] = coop.reduce(block, xf[block.rank()], binary_op=larger)

    built = numba_coop.compile_kernel(kernel, (X32, F32, X32, F32), block=128, target="sm_90")
    assert len(_symbols(built.cpp_source)) == 2


RAKING = False


def test_an_operator_before_a_conditional_expression_in_the_same_call():
    """numba carries a call's earlier operands across the blocks of a conditional expression among its later ones
    as copies; the operator callable is still consumed at compile time (once a raw TypingError "Untyped global
    name")."""
    @cuda.jit
    def kernel(x, d):
        block = coop.this_block()
        d[block.rank()] = coop.reduce(block, x[block.rank()], binary_op=larger,
                                      algorithm="raking" if RAKING else None)
        d[block.rank() + 128] = coop.inclusive_scan(block, x[block.rank()], scan_op=scaled if RAKING else larger)

    built = numba_coop.compile_kernel(kernel, (X32, np.zeros(256, np.int32)), block=128, target="sm_90")
    assert "cub::BLOCK_REDUCE_WARP_REDUCTIONS" in built.cpp_source and "CALL" not in built.sass()
    assert len(_symbols(built.cpp_source)) == 1  # the scan's operator is larger too: one function, one dtype


def test_symbol_names_the_dtype_and_arity():
    assert callable_symbol(larger, "int32") != callable_symbol(larger, "float32")
    assert callable_symbol(larger, "int32") != callable_symbol(larger, "int32", arity=1)
    assert callable_symbol(larger, "int32").endswith("_int32")
    assert callable_symbol(larger, "int32") == callable_symbol(larger, "int32")
    assert resolve_operator("op", "binary_op", larger, "int64").name == callable_symbol(larger, "int64")


# ------------------------------------------------------------------ bug 2: everything that changes the code
def test_kernel_compiled_after_a_global_changed_gets_new_operator_code():
    module = sys.modules[__name__].__dict__
    first = numba_coop.compile_kernel(reduce_kernel(scaled), (X32, X32), block=128, target="sm_90")
    try:
        module["SCALE"] = 3
        second = numba_coop.compile_kernel(reduce_kernel(scaled), (X32, X32), block=128, target="sm_90")
    finally:
        module["SCALE"] = 2
    assert _symbols(first.cpp_source) != _symbols(second.cpp_source)
    assert first.cpp_source != second.cpp_source
    assert first.cubin != second.cubin
    again = numba_coop.compile_kernel(reduce_kernel(scaled), (X32, X32), block=128, target="sm_90")
    assert _symbols(again.cpp_source) == _symbols(first.cpp_source)  # the value, not the history, decides


@pytest.fixture
def no_driver(monkeypatch):
    """Operators compiled directly (outside a kernel compile) take sm_90 as the device here."""
    from numba_cuda_mlir import tools

    monkeypatch.setattr(tools, "_cached_cc", tools._cached_cc or (9, 0))


def test_operator_ltoir_follows_a_global_of_a_called_device_function(no_driver):
    spec = resolve_operator("cuda.coop.reduce", "binary_op", calls_helper, "int32")
    module = sys.modules[__name__].__dict__
    before = operator_link(spec, "int32", 90, "cuda.coop.reduce", "binary_op")
    try:
        module["OFFSET"] = 7
        changed = resolve_operator("cuda.coop.reduce", "binary_op", calls_helper, "int32")
        after = operator_link(changed, "int32", 90, "cuda.coop.reduce", "binary_op")
    finally:
        module["OFFSET"] = 1
    assert spec.name != changed.name
    assert bytes(before[0].data) != bytes(after[0].data)


def _symbol_changes(function, mutate, restore):
    before = callable_symbol(function, "int32")
    mutate()
    try:
        return before != callable_symbol(function, "int32")
    finally:
        restore()


def _set_global(name, value):
    module = sys.modules[__name__].__dict__
    old = module[name]
    return (lambda: module.__setitem__(name, value)), (lambda: module.__setitem__(name, old))


def test_symbol_follows_globals_of_called_functions():
    def op(a, b):
        return a + offset_of(b)

    assert _symbol_changes(op, *_set_global("OFFSET", 5))
    assert _symbol_changes(calls_helper, *_set_global("OFFSET", 5))


CONFIG = types.ModuleType("operator_test_config")
CONFIG.factor = 3
CONFIG.unrelated = 0
TABLE = np.arange(4, dtype=np.int32)
PAIR = (1, np.float32(2.5))


def reads_module(a, b):
    return a + b * CONFIG.factor


def reads_array_and_tuple(a, b):
    return a + b * TABLE[1] + PAIR[0]


def test_symbol_follows_module_attributes_arrays_tuples_and_numpy_scalars():
    assert _symbol_changes(reads_module, lambda: setattr(CONFIG, "factor", 4), lambda: setattr(CONFIG, "factor", 3))
    assert not _symbol_changes(reads_module, lambda: setattr(CONFIG, "unrelated", 1),
                               lambda: setattr(CONFIG, "unrelated", 0))
    assert _symbol_changes(reads_array_and_tuple, lambda: TABLE.__setitem__(1, 9), lambda: TABLE.__setitem__(1, 1))
    assert _symbol_changes(reads_array_and_tuple, *_set_global("PAIR", (1, np.float32(3.5))))
    assert _symbol_changes(reads_array_and_tuple, *_set_global("PAIR", (1, np.float64(2.5))))


def make_closure(value):
    def op(a, b):
        return a + b * value

    return op


def with_defaults(a, b, c=1, *, d=2):
    return a + b + c + d


def test_symbol_follows_closures_defaults_and_bytecode():
    assert callable_symbol(make_closure(2), "int32") != callable_symbol(make_closure(3), "int32")
    assert callable_symbol(make_closure(2), "int32") == callable_symbol(make_closure(2), "int32")
    assert _symbol_changes(with_defaults, lambda: setattr(with_defaults, "__defaults__", (5,)),
                           lambda: setattr(with_defaults, "__defaults__", (1,)))
    assert _symbol_changes(with_defaults, lambda: setattr(with_defaults, "__kwdefaults__", {"d": 5}),
                           lambda: setattr(with_defaults, "__kwdefaults__", {"d": 2}))
    original = larger.__code__
    assert _symbol_changes(larger, lambda: setattr(larger, "__code__", (lambda a, b: a if a < b else b).__code__),
                           lambda: setattr(larger, "__code__", original))


def ping(a, b):
    return pong(a, b) if a > 0 else b


def pong(a, b):
    return ping(a - 1, b)


def test_mutually_recursive_functions_get_a_symbol():
    assert callable_symbol(ping, "int32") == callable_symbol(ping, "int32")
    assert callable_symbol(ping, "int32") != callable_symbol(pong, "int32")


def test_symbols_are_stable_across_processes(tmp_path):
    (tmp_path / "ops_for_symbols.py").write_text(textwrap.dedent("""
        import math
        import numpy as np
        LIMITS = {"low": np.int32(1), "high": (2.5, "x")}
        WEIGHTS = np.linspace(0, 1, 5)
        def helper(b):
            return b * LIMITS["low"] + WEIGHTS[2]
        def op(a, b, c=frozenset({1, 2, 3})):
            return a + helper(b) + math.pi if a in {4, 5, 6} else b
    """))
    script = ("import sys; sys.path.insert(0, sys.argv[1]); import ops_for_symbols as m; "
              "from cuda.coop._semantics.operators import callable_symbol; print(callable_symbol(m.op, 'float64'))")
    seen = set()
    for seed in ("1", "2"):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        out = subprocess.run([sys.executable, "-c", script, str(tmp_path)], env=env, capture_output=True, text=True,
                             check=True)
        seen.add(out.stdout.strip())
    assert len(seen) == 1 and next(iter(seen)).startswith("cuda_coop_fn_"), seen


# ------------------------------------------------------------------ bug 3: callback failures keep their cause
def undefined_global_op(a, b):
    return a + b * NOT_DEFINED_ANYWHERE  # noqa: F821


def attribute_op(a, b):
    return a.no_such_attribute


def tuple_op(a, b):
    return (a, b)


def _first_line_is_clean(message):
    first = message.splitlines()[0]
    for noise in ("$", "Failed in", "During:", "UniTuple", "mlir", "%"):
        assert noise not in first, first
    return first


def test_undefined_global_in_operator_names_the_name():
    err = expect_compile_error(reduce_kernel(undefined_global_op), (X32, X32), coop.CoopTypeError,
                               "cuda.coop.reduce binary_op undefined_global_op could not be "
                               "compiled for (int32, int32): ", site="prefix")
    first = _first_line_is_clean(str(err))
    assert "NOT_DEFINED_ANYWHERE" in first and "is not defined" in first, first


def test_typing_error_in_operator_is_reported_in_python_terms():
    err = expect_compile_error(reduce_kernel(attribute_op), (X32, X32), coop.CoopTypeError,
                               "cuda.coop.reduce binary_op attribute_op could not be compiled for (int32, int32): ",
                               site="prefix")
    assert "Unknown attribute 'no_such_attribute' of type int32" in _first_line_is_clean(str(err))
    err = expect_compile_error(reduce_kernel(tuple_op), (X32, X32), coop.CoopTypeError,
                               "cuda.coop.reduce binary_op tuple_op could not be compiled for (int32, int32): ",
                               site="prefix")
    assert "tuple of 2 int32" in _first_line_is_clean(str(err))


def test_callback_failure_is_chained_to_its_cause(no_driver):
    spec = resolve_operator("cuda.coop.reduce", "binary_op", undefined_global_op, "float32")
    with pytest.raises(coop.CoopTypeError) as info:
        operator_link(spec, "float32", 90, "cuda.coop.reduce", "binary_op")
    assert str(info.value).startswith("cuda.coop.reduce binary_op undefined_global_op could not be compiled for "
                                      "(float32, float32): NameError: name 'NOT_DEFINED_ANYWHERE' is not defined")
    assert info.value.__cause__ is not None and "NOT_DEFINED_ANYWHERE" in str(info.value.__cause__)


def test_failure_reason_strips_numba_noise():
    class Fake(Exception):
        pass

    text = ("Failed in mlir mode pipeline (step: mlir frontend)\nNo implementation of function "
            "Function(<built-in function add>) found for signature:\n \n >>> add(int32, UniTuple(int32 x 2))\n \n"
            "There are 2 candidate implementations:\nDuring: typing of intrinsic-call at x.py (3)\n\n"
            'File "x.py", line 3:\ndef f(a, b):\n    return a + (b, b)\n    ^\n')
    assert failure_reason(Fake(text)) == ("No implementation of function add found for signature: "
                                          "add(int32, tuple of 2 int32)")
    assert failure_reason(Fake("No conversion from Tuple(int32, float32) to int32 for '$10return_value.3', "
                               "defined at None")) == "No conversion from tuple (int32, float32) to int32"
    assert failure_reason(Fake("%3 = llvm.add %1, %2 : i32\n  loc(x.py:3)\n")) == "Fake"
    assert failure_reason(Fake("")) == "Fake"
    # numba raises its tuple-length check with a tuple of strings as the message: one sentence, not its repr
    assert failure_reason(Fake(("wrong tuple length for result: ", "expected 2, got 3"))) == \
        "wrong tuple length for result: expected 2, got 3"


# ------------------------------------------------------------------ bug 4: callables defined in the kernel (C16)
def test_lambda_defined_in_kernel_is_rejected():
    @cuda.jit
    def kernel(src, dst):
        block = coop.this_block()
        dst[block.rank()] = coop.reduce(block, src[block.rank()], binary_op=lambda a, b: a + b)

    expect_compile_error(kernel, (X32, X32), coop.CoopTypeError,
                         "cuda.coop.reduce binary_op "
                         "test_lambda_defined_in_kernel_is_rejected.<locals>.kernel.<locals>.<lambda> is defined "
                         "inside the kernel; define operator callables at module scope", site="prefix")


def test_function_defined_in_kernel_is_rejected_as_scan_op():
    @cuda.jit
    def kernel(src, dst):
        def inner(a, b):
            return a + b

        block = coop.this_block()
        dst[block.rank()] = coop.inclusive_scan(block, src[block.rank()], scan_op=inner)

    expect_compile_error(kernel, (X32, X32), coop.CoopTypeError,
                         "cuda.coop.inclusive_scan scan_op "
                         "test_function_defined_in_kernel_is_rejected_as_scan_op.<locals>.kernel.<locals>.inner is "
                         "defined inside the kernel; define operator callables at module scope", site="prefix")


def test_lambda_with_runtime_default_is_rejected():
    @cuda.jit
    def kernel(src, dst):
        s = src[0]
        block = coop.this_block()
        dst[block.rank()] = coop.reduce(block, src[block.rank()], binary_op=lambda a, b, c=s: a + b)

    expect_compile_error(kernel, (X32, X32), coop.CoopTypeError,
                         "<lambda> is defined inside the kernel; define operator callables", site="prefix")


@cuda.jit(device=True, inline="always")
def reduce_with_local_lambda(value):
    return coop.reduce(coop.this_block(), value, binary_op=lambda a, b: a if a > b else b)


def test_lambda_defined_in_inlined_helper_is_rejected():
    @cuda.jit
    def kernel(src, dst):
        dst[coop.this_block().rank()] = reduce_with_local_lambda(src[coop.this_block().rank()])

    expect_compile_error(kernel, (X32, X32), coop.CoopTypeError,
                         "reduce_with_local_lambda.<locals>.<lambda> is defined inside the kernel; define operator "
                         "callables at module scope", site="prefix")


def test_function_defined_beside_the_kernel_is_accepted():
    def beside(a, b):
        return a if a < b else b

    @cuda.jit
    def kernel(src, dst):
        block = coop.this_block()
        dst[block.rank()] = coop.reduce(block, src[block.rank()], binary_op=beside)

    built = numba_coop.compile_kernel(kernel, (X32, X32), block=128, target="sm_90")
    assert len(_symbols(built.cpp_source)) == 1


# ------------------------------------------------------------------ bug 5: cooperative calls in callbacks (H2)
def cooperative_op(a, b):
    return a + coop.reduce(coop.this_warp(), b)


def test_operator_with_cooperative_calls_is_h2():
    expect_compile_error(reduce_kernel(cooperative_op), (X32, X32), coop.CoopTypeError,
                         "cuda.coop.reduce binary_op cooperative_op contains cuda.coop operations; callbacks may only "
                         "do per-thread computation", site="prefix")


class Settings:
    def __init__(self, factor):
        self.factor = factor


SETTINGS = Settings(2)


def reads_instance(a, b):
    return a + b * SETTINGS.factor


def test_symbol_follows_attributes_read_from_an_instance():
    assert _symbol_changes(reads_instance, lambda: setattr(SETTINGS, "factor", 5),
                           lambda: setattr(SETTINGS, "factor", 2))


def _min_max_kernel(dtype):
    @cuda.jit
    def kernel(src, dst):
        block = coop.this_block()
        warp = coop.this_warp()
        value = src[block.rank()]
        high = coop.reduce(block, value, binary_op="max")
        low = coop.reduce(warp, value, binary_op=min)
        dst[block.rank()] = coop.inclusive_scan(block, value, scan_op=np.maximum) + high - low

    return kernel


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
def test_min_and_max_combine_without_branches(dtype):
    """``"min"``/``"max"`` of floats combine with one FMNMX (DMNMX for double) each: CCCL's cuda::maximum under
    NVRTC tested each operand for NaN first, a branch around each of the block reduction's combinations (19 regions
    in this kernel's float build). Integers keep CCCL's operator, so a warp reduces them with REDUX."""
    data = np.zeros(128, dtype)
    built = numba_coop.compile_kernel(_min_max_kernel(dtype), (data, data.copy()), block=128)
    sass = built.sass()
    assert len(re.findall(r"\bBSSY\b", sass)) <= 1, "NaN tests branch around the combinations again"
    assert not re.search(r"FSETP\.\w+\.AND\s+\w+, \w+, \|R\d+\|, \+INF", sass), "operands tested for NaN"
    if dtype == np.float32:
        assert len(re.findall(r"\bFMNMX\b", sass)) >= 10
    if dtype == np.int32:
        assert re.search(r"\bREDUX\b", sass), "the warp's integer minimum no longer a REDUX"
