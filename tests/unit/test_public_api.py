"""The public surface of ``cuda.coop``: imports, names, registration, markers and exceptions
(SPEC 1.3, 1.4, 2.1, 10.1)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src"

# SPEC 1.3, in order: the names that are not operations. The operations (8.1-8.18, and every one added after 8.18 "by
# its record") stand between TempStorageLike and the exceptions, in the records' order. 1.3 lists the exceptions of
# 10.1, whose table also has CoopIndexError.
SPEC_BEFORE_OPERATIONS = [
    "__version__", "register",
    "this_thread", "this_warp", "this_block", "this_cluster", "this_grid", "ThreadGroup",
    "ThreadData", "ThreadDataLike", "TempStorage", "TempStorageLike",
]
SPEC_AFTER_OPERATIONS = [
    "CoopError", "CoopTypeError", "CoopValueError", "CoopUnsupportedError", "CoopIndexError", "CoopBuildError",
    "CoopCompilerContextRequiredError", "CudaCoopAutoRegistrationWarning",
]
# SPEC 1.3 before argmax/argmin were named there (8.16): the records must still hold these, in this order
SPEC_OPERATIONS_8_1_TO_8_18 = [
    "load", "store", "exchange", "shuffle", "reduce", "sum", "reduce_batched", "scan", "exclusive_sum",
    "inclusive_sum", "exclusive_scan", "inclusive_scan", "merge_sort_keys", "merge_sort_pairs", "radix_sort_keys",
    "radix_sort_pairs", "radix_rank", "topk_min_keys", "topk_max_keys", "topk_min_pairs", "topk_max_pairs",
    "adjacent_difference", "discontinuity", "histogram", "run_length_decode", "run_length_decode_into",
    "argmax", "argmin",
]
# What each qualified namespace exports beyond the common names less ``register``: SPEC 1.3 (numba-cuda-mlir: local,
# shared, StatefulFunction, compile_kernel) and 12.1 (cutlass: compile_kernel; its fragment interop is
# ThreadData.from_fragment, no new name; 12.9: StatefulFunction, the same class as numba-cuda-mlir's), plus
# CompiledKernel, the class of compile_kernel's report (9.11, 12.7), in both.
QUALIFIED_EXTRAS = {
    "cuda.coop.numba_mlir": {"local", "shared", "StatefulFunction", "compile_kernel", "CompiledKernel"},
    "cuda.coop.cutlass": {"StatefulFunction", "compile_kernel", "CompiledKernel"},
}


def _record_operations() -> list[str]:
    from cuda.coop._markers.records import records

    return [op.name for op in records()]


EXPECTED_ALL = [*SPEC_BEFORE_OPERATIONS, *_record_operations(), *SPEC_AFTER_OPERATIONS]
OPERATIONS = EXPECTED_ALL[EXPECTED_ALL.index("load"):EXPECTED_ALL.index("CoopError")]

def _run_python(code: str, **extra_env: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "CUDA_COOP_DISABLE_AUTO_DSL_REGISTRATION"}
    env["PYTHONPATH"] = str(SRC)
    env.update(extra_env)
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)


# ------------------------------------------------------------------ imports and packaging


def test_import_needs_only_the_standard_library():
    result = _run_python(
        "import cuda.coop, sys; "
        "assert 'numpy' not in sys.modules, 'numpy imported'; "
        "assert 'numba_cuda_mlir' not in sys.modules, 'numba_cuda_mlir imported'; "
        "assert 'cuda.coop.numba_mlir' not in sys.modules, 'backend imported'"
    )
    assert result.returncode == 0, result.stderr


def test_import_auto_registers_when_numba_cuda_mlir_was_imported_first():
    result = _run_python(
        "import warnings; warnings.simplefilter('error'); "
        "import numba_cuda_mlir, cuda.coop, sys; "
        "assert 'cuda.coop.numba_mlir' in sys.modules; "
        "assert sys.modules['cuda.coop.numba_mlir']._registered"
    )
    assert result.returncode == 0, result.stderr


def test_auto_registration_can_be_disabled():
    result = _run_python(
        "import numba_cuda_mlir, cuda.coop, sys; assert 'cuda.coop.numba_mlir' not in sys.modules",
        CUDA_COOP_DISABLE_AUTO_DSL_REGISTRATION="1",
    )
    assert result.returncode == 0, result.stderr


def test_no_namespace_init_file():
    assert not (SRC / "cuda" / "__init__.py").exists()
    assert (SRC / "cuda" / "coop" / "__init__.py").exists()


# ------------------------------------------------------------------ names


def test_all_matches_spec():
    import cuda.coop as coop

    assert coop.__all__ == EXPECTED_ALL
    for name in EXPECTED_ALL:
        assert hasattr(coop, name), name


def test_all_is_spec_names_and_the_records_operations():
    """SPEC 1.3: ``cuda.coop.__all__`` is exactly its non-operation names and, between them, every record's operation
    (8.16's argmax/argmin and every later one included); the records keep 1.3's own list, in its order."""
    import cuda.coop as coop

    records = _record_operations()
    assert records[:len(SPEC_OPERATIONS_8_1_TO_8_18)] == SPEC_OPERATIONS_8_1_TO_8_18
    assert coop.__all__ == SPEC_BEFORE_OPERATIONS + records + SPEC_AFTER_OPERATIONS
    assert len(set(coop.__all__)) == len(coop.__all__)


@pytest.mark.parametrize("namespace", sorted(QUALIFIED_EXTRAS))
def test_a_qualified_all_is_the_common_one_less_register_plus_its_extras(namespace):
    """SPEC 1.3 and 12.1: each backend's namespace exports every common name except ``register``, and its extras."""
    import importlib
    import importlib.util

    import cuda.coop as coop

    compiler = "cutlass" if namespace.endswith("cutlass") else "numba_cuda_mlir"
    if importlib.util.find_spec(compiler) is None:
        pytest.skip(f"{compiler} is not installed")
    module = importlib.import_module(namespace)
    expected = [name for name in coop.__all__ if name != "register"]
    assert module.__all__[:len(expected)] == expected, namespace
    assert set(module.__all__[len(expected):]) == QUALIFIED_EXTRAS[namespace], namespace
    assert len(set(module.__all__)) == len(module.__all__)
    for name in module.__all__:
        assert hasattr(module, name), (namespace, name)


def test_version_is_a_string():
    import cuda.coop as coop

    assert isinstance(coop.__version__, str) and coop.__version__


def test_qualified_namespace_reexports_common_objects():
    import cuda.coop as coop
    import cuda.coop.numba_mlir as numba_coop

    assert numba_coop.ThreadData is coop.ThreadData
    assert numba_coop.TempStorage is coop.TempStorage
    assert numba_coop.ThreadGroup is coop.ThreadGroup
    assert numba_coop.this_block is coop.this_block
    assert numba_coop.CoopError is coop.CoopError
    assert not hasattr(numba_coop, "register")
    assert "register" not in numba_coop.__all__
    assert "compile_kernel" in numba_coop.__all__
    for op in OPERATIONS:
        assert getattr(numba_coop, op) is not getattr(coop, op), op
    assert numba_coop.load is not coop.load


# ------------------------------------------------------------------ markers as Python (R1)


def test_load_marker_outside_kernel():
    import cuda.coop as coop

    with pytest.raises(coop.CoopCompilerContextRequiredError) as info:
        coop.load(None, None, None)
    assert str(info.value) == "cuda.coop.load must be called from a supported GPU kernel."


@pytest.mark.parametrize("name", OPERATIONS + ["this_thread", "this_warp", "this_block", "this_cluster", "this_grid"])
def test_every_function_marker_outside_kernel(name):
    import cuda.coop as coop

    with pytest.raises(coop.CoopCompilerContextRequiredError) as info:
        getattr(coop, name)()
    assert str(info.value) == f"cuda.coop.{name} must be called from a supported GPU kernel."
    assert isinstance(info.value, RuntimeError)


def test_class_markers_outside_kernel():
    import cuda.coop as coop

    with pytest.raises(coop.CoopCompilerContextRequiredError, match=r"^cuda\.coop\.ThreadData must be called"):
        coop.ThreadData(4)
    with pytest.raises(coop.CoopCompilerContextRequiredError, match=r"^cuda\.coop\.TempStorage must be called"):
        coop.TempStorage()
    with pytest.raises(coop.CoopCompilerContextRequiredError, match=r"^cuda\.coop\.ThreadGroup must be called"):
        coop.ThreadGroup()


def test_group_method_marker_message():
    import cuda.coop as coop

    with pytest.raises(coop.CoopCompilerContextRequiredError) as info:
        coop.ThreadGroup.rank(None)
    assert str(info.value) == "cuda.coop.ThreadGroup.rank must be called from a supported GPU kernel."


def test_qualified_marker_message():
    import cuda.coop.numba_mlir as numba_coop

    with pytest.raises(numba_coop.CoopCompilerContextRequiredError) as info:
        numba_coop.store(None, None, None)
    assert str(info.value) == "cuda.coop.numba_mlir.store must be called from a supported GPU kernel."


def test_markers_carry_module_and_qualname():
    import cuda.coop as coop
    import cuda.coop.numba_mlir as numba_coop

    assert (coop.load.__module__, coop.load.__qualname__) == ("cuda.coop", "load")
    assert (numba_coop.load.__module__, numba_coop.load.__qualname__) == ("cuda.coop.numba_mlir", "load")
    assert list(__import__("inspect").signature(coop.load).parameters)[:3] == ["group", "source", "output"]


# ------------------------------------------------------------------ register (R2, R3)


@pytest.mark.parametrize("value, type_name", [(5, "int"), (None, "NoneType"), (b"numba-cuda-mlir", "bytes")])
def test_register_rejects_non_strings(value, type_name):
    import cuda.coop as coop

    with pytest.raises(TypeError) as info:
        coop.register(value)
    assert str(info.value) == f"cuda.coop.register expects a backend name string; got {type_name}."


@pytest.mark.parametrize("value", ["x", "numba", "NUMBA-CUDA-MLIR", ""])
def test_register_rejects_unknown_names(value):
    import cuda.coop as coop

    with pytest.raises(ValueError) as info:
        coop.register(value)
    assert str(info.value) == (
        f"Unsupported cuda.coop backend {value!r}; expected 'numba-cuda-mlir' or 'numba_cuda_mlir' or 'cutlass' or "
        "'cute' or 'cutlass-dsl' or 'cutlass_dsl'."
    )


def test_register_is_idempotent_with_both_spellings():
    import cuda.coop as coop
    import cuda.coop.numba_mlir as numba_coop
    from cuda.coop.numba_mlir import _compat

    coop.register("numba-cuda-mlir")
    before = list(_compat._planner_registry._planners)
    assert before.count(numba_coop._entry.CoopPlannerEntry) == 1
    for name in ("numba-cuda-mlir", "numba_cuda_mlir", "numba_cuda_mlir", "numba-cuda-mlir"):
        assert coop.register(name) is None
    assert numba_coop._registered
    assert list(_compat._planner_registry._planners) == before


def test_register_is_positional_only():
    import cuda.coop as coop

    with pytest.raises(TypeError):
        coop.register(backend="numba-cuda-mlir")


# ------------------------------------------------------------------ exceptions (SPEC 10.1)


def test_exception_hierarchy():
    import cuda.coop as coop

    assert coop.CoopError.__bases__ == (Exception,)
    assert coop.CoopTypeError.__bases__ == (coop.CoopError, TypeError)
    assert coop.CoopValueError.__bases__ == (coop.CoopError, ValueError)
    assert coop.CoopUnsupportedError.__bases__ == (coop.CoopError, NotImplementedError)
    assert coop.CoopIndexError.__bases__ == (coop.CoopError, IndexError)
    assert coop.CoopBuildError.__bases__ == (coop.CoopError, RuntimeError)
    assert coop.CoopCompilerContextRequiredError.__bases__ == (coop.CoopError, RuntimeError)
    assert coop.CudaCoopAutoRegistrationWarning.__bases__ == (UserWarning,)
    assert not issubclass(coop.CudaCoopAutoRegistrationWarning, coop.CoopError)


# ------------------------------------------------------------------ R4-R6: a missing or wrong numba-cuda-mlir


_IMPORT_WITH_FAKE = """
import sys, types
{setup}
try:
    import cuda.coop.numba_mlir
except ImportError as exc:
    print("IMPORT_ERROR:" + str(exc))
    print("CAUSE:" + type(exc.__cause__).__name__)
"""


def test_r4_numba_cuda_mlir_not_installed():
    result = _run_python(_IMPORT_WITH_FAKE.format(setup="sys.modules['numba_cuda_mlir'] = None"))
    assert ("IMPORT_ERROR:cuda.coop backend 'numba-cuda-mlir' requires numba-cuda-mlir>=0.6,<0.7, which is not "
            'installed; install "cuda-coop[numba-cuda-mlir-cu13]" (CUDA 13) or "cuda-coop[numba-cuda-mlir-cu12]" '
            "(CUDA 12).") in result.stdout, result.stdout + result.stderr
    assert "CAUSE:ModuleNotFoundError" in result.stdout


def test_r5_unsupported_numba_cuda_mlir_version():
    setup = ("fake = types.ModuleType('numba_cuda_mlir'); fake.__version__ = '0.7.1'; "
             "sys.modules['numba_cuda_mlir'] = fake")
    result = _run_python(_IMPORT_WITH_FAKE.format(setup=setup))
    assert "IMPORT_ERROR:cuda.coop supports numba-cuda-mlir>=0.6,<0.7; found 0.7.1." in result.stdout, result.stdout
    assert "cuda-coop[numba-cuda-mlir-cu13]" in result.stdout


def test_r6_required_hook_missing():
    setup = ("fake = types.ModuleType('numba_cuda_mlir'); fake.__version__ = '0.6.0'; fake.__path__ = []; "
             "sys.modules['numba_cuda_mlir'] = fake")
    result = _run_python(_IMPORT_WITH_FAKE.format(setup=setup))
    assert "IMPORT_ERROR:numba-cuda-mlir 0.6.0 does not provide " in result.stdout, result.stdout
    assert "which cuda.coop requires" in result.stdout


def test_r7_failed_automatic_registration_warns_and_the_import_continues():
    code = """
import sys, types, warnings
fake = types.ModuleType('numba_cuda_mlir'); fake.__version__ = '0.7.1'; sys.modules['numba_cuda_mlir'] = fake
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter('always')
    import cuda.coop
print('IMPORTED', cuda.coop.__name__)
print('LEFT', [m for m in sys.modules if m.startswith('cuda.coop.numba_mlir')])
for w in caught:
    print('WARNING', w.category.__name__, str(w.message))
"""
    result = _run_python(code)
    assert "IMPORTED cuda.coop" in result.stdout, result.stdout + result.stderr
    assert "LEFT []" in result.stdout
    assert ("WARNING CudaCoopAutoRegistrationWarning cuda.coop automatic DSL registration: numba-cuda-mlir 0.7.1 is "
            "imported but could not be registered (cuda.coop supports numba-cuda-mlir>=0.6,<0.7; found 0.7.1.") \
        in result.stdout, result.stdout
    assert "the cuda.coop import continued." in result.stdout


def test_backend_import_is_cheap_after_numba_cuda_mlir():
    """Issue 12: importing cuda.coop.numba_mlir after numba-cuda-mlir loads neither the planner, nor NVRTC, nor
    numba-cuda-mlir's internals; they load with the first build (the time itself is measured in benchmarks).
    ``_compat`` does load (issue 18: launches from several threads are serialised before the first launch), and
    it must add no numba-cuda-mlir module that numba-cuda-mlir's own import did not load."""
    code = ("import sys; from numba_cuda_mlir import cuda; before = set(sys.modules); "
            "import cuda.coop.numba_mlir as numba_coop; added = set(sys.modules) - before; "
            "heavy = sorted(m for m in added if m.endswith(('_planner', 'nvrtc', 'nvjitlink')) "
            "or m.startswith(('numba_cuda_mlir.numba_cuda', 'numba_cuda_mlir._mlir', 'cuda.bindings'))); "
            "print(heavy)")
    result = _run_python(code)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip().splitlines()[-1] == "[]", result.stdout


def test_docstrings_describe_what_each_variant_takes():
    """Issue 18.7: the sums take no scan_op; the qualified radix sorts document float keys and blocked_to_striped
    (the common ones do not)."""
    import cuda.coop.numba_mlir as numba_coop
    from cuda import coop

    for sum_marker in (coop.exclusive_sum, coop.inclusive_sum, numba_coop.exclusive_sum, numba_coop.inclusive_sum):
        assert "scan_op" not in sum_marker.__doc__
    assert "scan_op" in coop.exclusive_scan.__doc__
    for name in ("radix_sort_keys", "radix_sort_pairs"):
        qualified_doc, common_doc = getattr(numba_coop, name).__doc__, getattr(coop, name).__doc__
        assert "float32" in qualified_doc and "blocked_to_striped" in qualified_doc
        assert "blocked_to_striped" not in common_doc
