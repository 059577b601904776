"""The CuTe DSL backend keeps the contract the numba-cuda-mlir backend keeps (SPEC §12; issue 30), without a GPU:
the namespace's names, payload forms and errors in the documented words at the user's line."""
from __future__ import annotations

import re

import pytest

cutlass = pytest.importorskip("cutlass")
from cutlass.cute.runtime import make_fake_tensor  # noqa: E402

import cuda.coop.cutlass as cute_coop  # noqa: E402
from cuda import coop  # noqa: E402

import cute_kernels as ck  # noqa: E402


def _tensor(n=ck.THREADS * ck.K, dtype=None):
    return make_fake_tensor(dtype or cutlass.Int32, (n,), stride=(1,))


def test_the_namespace_thread_data_makes_payloads():
    """cuda.coop.cutlass.ThreadData(K, cutlass.Int32), (K, dtype=np.int32) and (K) are payloads, as the common
    ThreadData (a one-backend user writes ``import cuda.coop.cutlass as coop``)."""
    kernel = cute_coop.compile_kernel(ck.namespace_thread_data_launch, _tensor(), _tensor())
    assert "cuda_coop_scan_" in kernel.cpp_source and kernel.cpp_source.count("cuda_coop_load_") >= 1


def test_the_namespace_thread_data_outside_a_kernel_is_r1():
    with pytest.raises(coop.CoopCompilerContextRequiredError,
                       match=r"^cuda.coop.cutlass.ThreadData must be called from a supported GPU kernel.$"):
        cute_coop.ThreadData(4)


def _error(launcher, *args, **options):
    with pytest.raises(coop.CoopError) as info:
        cute_coop.compile_kernel(launcher, *args, **options)
    return info.value


def _at(fn, text):
    """``cute_kernels.py:<line>`` of the first line of ``fn`` holding ``text``."""
    import inspect

    lines, start = inspect.getsourcelines(fn)
    return f"{ck.__file__}:{start + next(i for i, line in enumerate(lines) if text in line)}"


@pytest.mark.parametrize("threads, k, n", [(1024, 1, 1024), (512, 8, 4096), (512, 16, 8192)])
def test_large_blocks_build(threads, k, n):
    """1024-thread and 512 x 16 sorts (the link route once failed to link them: the kernel's launch bounds cap its
    registers) build, with the calls inlined."""
    kernel = cute_coop.compile_kernel(ck.large_sort_launch, _tensor(n), _tensor(n), threads, k)
    assert "cuda_coop_radix_sort_" in kernel.cpp_source
    assert "CALL" not in kernel.sass() and kernel.local_memory_bytes == 0


def test_a_1024_thread_scan_builds():
    kernel = cute_coop.compile_kernel(ck.large_scan_launch, _tensor(4096), _tensor(4096))
    assert "cuda_coop_scan_" in kernel.cpp_source and kernel.local_memory_bytes == 0


def test_builtin_min_and_max_are_operators():
    kernel = cute_coop.compile_kernel(ck.builtin_min_launch, _tensor(), _tensor())
    source = kernel.cpp_source
    # (cuda_coop::minimum / maximum: CCCL's but for float and double, util_operators.cuh)
    assert re.search(r"cuda(_coop)?::minimum<", source) and re.search(r"cuda(_coop)?::maximum<", source), source[-3000:]


def test_float_min_and_max_combine_without_branches():
    """The CuTe half of test_operators_compile's ``test_min_and_max_combine_without_branches``: float ``"max"`` and
    ``min`` combine with FMNMX, no operand tested for NaN (the route's clang has the builtins NVRTC lacks)."""
    kernel = cute_coop.compile_kernel(ck.float_min_max_launch, _tensor(dtype=cutlass.Float32),
                                      _tensor(dtype=cutlass.Float32))
    sass = kernel.sass()
    assert "cuda_coop::maximum<float>" in kernel.cpp_source
    assert len(re.findall(r"\bBSSY\b", sass)) <= 1, "NaN tests branch around the combinations"
    assert not re.search(r"FSETP\.\w+\.AND\s+\w+, \w+, \|R\d+\|, \+INF", sass), "operands tested for NaN"
    assert len(re.findall(r"\bFMNMX\b", sass)) >= 10


def test_s6_undersized_temp_storage_is_the_users_error_at_the_call():
    exc = _error(ck.small_storage_launch, _tensor(), _tensor())
    assert isinstance(exc, coop.CoopValueError)
    where = _at(ck.small_storage_kernel, 'coop.exclusive_sum(')
    assert str(exc) == (f"{where}: TempStorage size_in_bytes=16 is too small: its uses need 672 bytes "
                        f"(cuda.coop.exclusive_sum at line {where.rsplit(':', 1)[1]} needs 672)")


def test_s4_a_descriptor_made_outside_the_kernel():
    exc = _error(ck.outside_storage_launch, _tensor(), _tensor())
    assert type(exc) is coop.CoopTypeError
    assert str(exc) == (f"{_at(ck.outside_storage_kernel, 'coop.exclusive_sum(')}: TempStorage descriptors must be "
                        "constructed inside the kernel or an inlined helper; the cuda.coop.exclusive_sum temp_storage "
                        "is not")


def test_s1_temp_storage_that_is_not_a_descriptor():
    exc = _error(ck.number_as_storage_launch, _tensor(), _tensor())
    assert type(exc) is coop.CoopTypeError
    first = str(exc).splitlines()[0]
    assert first.startswith(f"{_at(ck.number_as_storage_kernel, 'coop.exclusive_sum(')}: cuda.coop.exclusive_sum "
                            "temp_storage must be a TempStorage descriptor constructed in the kernel with "
                            "cuda.coop.TempStorage()"), first


@pytest.mark.parametrize("launch, kernel, message", [
    ("ordered_descending", "merge_sort_keys(", "cuda.coop.cutlass.merge_sort_keys compare_op cannot be combined with "
                                               "descending=True"),
    ("scatter_without_ranks", "exchange(", "cuda.coop.cutlass.exchange mode='scatter_to_striped' requires ranks"),
    ("flagged_without_flags", "exchange(", "cuda.coop.cutlass.exchange mode='scatter_to_striped_flagged' requires "
                                           "valid_flags"),
])
def test_o13_o15_qualified_options_that_need_each_other(launch, kernel, message):
    """O13 and O15 on the CuTe backend's qualified sort and exchange options (the numba-cuda-mlir rows are in
    tests/compile/test_exchange_ext_compile.py and the sort tests)."""
    exc = _error(getattr(ck, f"{launch}_launch"), _tensor(), _tensor())
    assert type(exc) is coop.CoopValueError
    assert str(exc) == f"{_at(getattr(ck, f'{launch}_kernel'), kernel)}: {message}"


def test_g20_a_cluster_group_below_compute_capability_9():
    assert cute_coop.compile_kernel(ck.cluster_rank_launch, _tensor(), _tensor(), target="sm_90a").cubin
    exc = _error(ck.cluster_rank_launch, _tensor(), _tensor(), target="sm_80")
    assert type(exc) is coop.CoopUnsupportedError
    assert str(exc) == (f"{_at(ck.cluster_rank_kernel, 'coop.this_cluster()')}: cluster groups require compute "
                        "capability 9.0 or newer; target is sm_80")


def test_s7_scratch_above_the_device_limit_names_the_python_kernel():
    exc = _error(ck.huge_scratch_launch, _tensor(65536, cutlass.Int64), _tensor(65536, cutlass.Int64))
    assert isinstance(exc, coop.CoopValueError)
    assert str(exc) == (f"{_at(ck.huge_scratch_kernel, 'coop.exchange(')}: cooperative scratch for kernel "
                        "huge_scratch_kernel needs 540672 bytes of shared memory per block; the device allows at "
                        "most 232448")


@pytest.mark.parametrize("shape", [(2048, 1, 1), (8, 8, 128), (0, 1, 1), (-1, 1, 1)])
def test_g22_invalid_block_shapes(shape):
    """G22 for constants out of CUDA's range (the DSL leaves zero and negative extents out of its launch facts: not
    G23, as for a run-time extent)."""
    n = 2048 * 4
    exc = _error(ck.big_block_launch, _tensor(n), _tensor(n), shape)
    assert isinstance(exc, coop.CoopValueError)
    assert str(exc) == (f"{_at(ck.big_block_kernel, 'coop.this_block()')}: kernel big_block_kernel: block shape "
                        f"{shape} is not a valid CUDA block")


def test_p16_literal_index_out_of_range():
    exc = _error(ck.index_launch, _tensor(), _tensor())
    assert isinstance(exc, coop.CoopIndexError)
    assert str(exc) == (f"{_at(ck.index_kernel, 'items[K] = 0')}: ThreadData items index 4 is out of range for "
                        "items_per_thread 4")


def test_p_an_untyped_dsl_value_says_how_to_type_it():
    """``cutlass.select_`` returns the DSL's untyped value; the operand error names it and the fix."""
    exc = _error(ck.raw_value_launch, _tensor(), _tensor())
    assert isinstance(exc, coop.CoopTypeError)
    assert str(exc) == (f"{_at(ck.raw_value_kernel, 'coop.reduce(')}: cuda.coop.reduce value must be a number, a CuTe "
                        "numeric or a ThreadData; got an untyped int32 DSL value (what cutlass.select_ returns); wrap "
                        "it in its CuTe numeric type, e.g. cutlass.Int32(x)")


@pytest.mark.parametrize("launcher, kernel, text, words", [
    (ck.shared_source_launch, ck.shared_source_kernel, "coop.load(", "cuda.coop.load source must be an array in "
     "global memory; got a 1-D contiguous int32 array in shared memory"),
    (ck.register_destination_launch, ck.register_destination_kernel, "coop.store(", "cuda.coop.store destination "
     "must be an array in global memory; got a 1-D contiguous int32 array in registers"),
])
def test_p11_names_the_memory_space(launcher, kernel, text, words):
    exc = _error(launcher, _tensor(), _tensor())
    assert isinstance(exc, coop.CoopTypeError)
    assert str(exc) == f"{_at(kernel, text)}: {words}"


def test_c3_a_qualified_option_in_a_common_call():
    exc = _error(ck.qualified_option_launch, _tensor(), _tensor())
    assert isinstance(exc, coop.CoopValueError)
    assert str(exc) == (f"{_at(ck.qualified_option_kernel, 'coop.radix_sort_keys(')}: cuda.coop.radix_sort_keys "
                        "blocked_to_striped True requires cuda.coop.cutlass; the common API accepts: begin_bit, "
                        "end_bit, descending, valid_items, oob_default, temp_storage")


def test_c5_an_option_passed_positionally():
    exc = _error(ck.positional_option_launch, _tensor(), _tensor())
    assert isinstance(exc, coop.CoopTypeError)
    assert str(exc) == (f"{_at(ck.positional_option_kernel, 'coop.load(')}: cuda.coop.load takes 3 positional "
                        "operands; pass options by keyword")


def test_c6_a_static_cute_boolean_is_no_integer_control():
    """A static ``cutlass.Boolean`` is a bool, as Python's ``True`` is: C6, not the rank 1."""
    exc = _error(ck.static_boolean_control_launch, _tensor(), _tensor())
    assert type(exc) is coop.CoopTypeError
    assert str(exc) == (f"{_at(ck.static_boolean_control_kernel, 'coop.broadcast(')}: cuda.coop.broadcast src_rank "
                        "must be a signed integer of at most 64 bits or an unsigned integer of at most 32 bits; "
                        "got bool")


@pytest.mark.parametrize("launcher, kernel, message", [
    (ck.static_uint64_control_launch, ck.static_uint64_control_kernel,
     "cuda.coop.load valid_items must be a signed integer of at most 64 bits or an unsigned integer of at most 32 "
     "bits; got uint64"),
    (ck.static_int64_fill_launch, ck.static_int64_fill_kernel,
     "cuda.coop.load oob_default must have the payload dtype int32; got int64; cast it")])
def test_c6_c9_a_static_cute_numeric_keeps_its_dtype(launcher, kernel, message):
    """A static ``cutlass.Uint64(3)`` or ``cutlass.Int64(1)`` is typed, as a NumPy scalar constant is on
    numba-cuda-mlir: C6 for an unsigned 64-bit control, C9 for a fill value of another dtype."""
    exc = _error(launcher, _tensor(), _tensor())
    assert type(exc) is coop.CoopTypeError
    assert str(exc) == f"{_at(kernel, 'coop.load(')}: {message}"


def test_p9_no_dtype_evidence_at_the_payloads_line():
    exc = _error(ck.no_dtype_launch, _tensor(), _tensor())
    assert isinstance(exc, coop.CoopTypeError)
    assert str(exc).startswith(f"{_at(ck.no_dtype_kernel, 'coop.ThreadData(K)')}: could not infer the dtype of "
                               "ThreadData items; pass dtype= or assign values of known type (e.g. cutlass.Int32(x)) "
                               "or load into it before its first use")


@pytest.mark.parametrize("launcher, kernel, line, shapes", [
    (ck.reshaped_in_branch_launch, ck.reshaped_in_branch_kernel, "if n > 0",
     "items_per_thread=2, dtype=int32; items_per_thread=4, dtype=int32"),
    (ck.retyped_in_loop_launch, ck.retyped_in_loop_kernel, "for _ in range(n)",
     "items_per_thread=4, dtype=int32; items_per_thread=4, dtype=float32")])
def test_p15_one_variable_two_payload_shapes_through_a_traced_region(launcher, kernel, line, shapes):
    """P15 at the branch's or loop's line (numba-cuda-mlir's words), not the DSL's structure error with MLIR types."""
    import cutlass

    exc = _error(launcher, _tensor(), _tensor(), cutlass.Int32(1))
    assert isinstance(exc, coop.CoopTypeError)
    assert str(exc) == (f"{_at(kernel, line)}: variable items may refer to payloads with different extents or dtypes "
                        f"({shapes})")


@pytest.mark.parametrize("launcher, kernel, line, message", [
    (ck.storage_in_branch_launch, ck.storage_in_branch_kernel, "if n > 0",
     "variable temp may refer to several TempStorage descriptors; a temp_storage must resolve to exactly one "
     "TempStorage constructor in this kernel"),
    (ck.group_in_loop_launch, ck.group_in_loop_kernel, "for _ in range(n)",
     "variable group may refer to different cuda.coop values (a ThreadGroup, ThreadData or TempStorage must come from "
     "exactly one construction site, or payloads of one shape)")])
def test_one_variable_two_groups_or_descriptors_through_a_traced_region(launcher, kernel, line, message):
    """Groups and descriptors hold no run-time value: the DSL carried the first through a run-time branch or loop
    silently. Now an error at the branch's or loop's line: numba-cuda-mlir's words for groups, S3's for
    descriptors (the call that uses the variable is not known there)."""
    import cutlass

    exc = _error(launcher, _tensor(), _tensor(), cutlass.Int32(1))
    assert type(exc) is coop.CoopTypeError
    assert str(exc) == f"{_at(kernel, line)}: {message}"


def test_the_same_descriptor_through_a_traced_branch_builds():
    import cutlass

    built = cute_coop.compile_kernel(ck.one_storage_in_branch_launch, _tensor(), _tensor(), cutlass.Int32(1))
    assert built.shared_memory_bytes >= 4096


def test_p4_a_register_tensor_in_a_common_call():
    """SPEC 0 rule 2, 12.3: register tensors are payloads of cuda.coop.cutlass's calls; a common call says P4."""
    exc = _error(ck.common_fragment_launch, _tensor(), _tensor())
    assert isinstance(exc, coop.CoopTypeError)
    assert str(exc) == (f"{_at(ck.common_fragment_kernel, 'coop.load(')}: cuda.coop.load requires a fixed-size "
                        "ThreadData output payload in the common API; use cuda.coop.cutlass for register tensor "
                        "payloads (or wrap the tensor: cuda.coop.cutlass.ThreadData.from_fragment)")


def test_c15_a_target_the_dsl_does_not_know():
    with pytest.raises(coop.CoopValueError, match=r"^target must look like 'sm_90' or 'sm_90a' with a supported "
                                                  r"architecture \(sm_80, .*sm_90a.*\); got 'sm_12'$"):
        cute_coop.compile_kernel(ck.scan_launch, _tensor(), _tensor(), target="sm_12")


def test_r11_and_from_fragment_errors_carry_the_line():
    pytest.importorskip("numba_cuda_mlir")
    exc = _error(ck.numba_namespace_launch, _tensor(), _tensor())
    assert str(exc).startswith(f"{_at(ck.numba_namespace_kernel, 'numba_coop.load(')}: cuda.coop.numba_mlir.load "
                               "belongs to cuda.coop.numba_mlir")
    exc = _error(ck.bad_fragment_launch, _tensor(), _tensor())
    assert str(exc).startswith(f"{_at(ck.bad_fragment_kernel, 'from_fragment(')}: ThreadData.from_fragment tensor "
                               "must be a 1-D register tensor")


def test_shared_memory_counts_the_cooperative_scratch():
    scan = cute_coop.compile_kernel(ck.scan_launch, _tensor(), _tensor())
    plain = cute_coop.compile_kernel(ck.plain_launch, _tensor(), _tensor())
    assert plain.dynamic_shared_memory_bytes == 0
    assert scan.dynamic_shared_memory_bytes == 672  # cub::BlockScan<int, 128> raking storage
    assert scan.shared_memory_bytes >= 672 + plain.shared_memory_bytes


def test_generated_sources_land_in_the_dump_directory(tmp_path, monkeypatch):
    monkeypatch.setenv("CUDA_COOP_SOURCE_DUMP_DIR", str(tmp_path))
    kernel = cute_coop.compile_kernel(ck.fragment_launch, _tensor(), _tensor())
    dumped = list(tmp_path.glob("cuda_coop_cutlass_*.cu"))
    assert len(dumped) == 1 and dumped[0].read_text() == kernel.cpp_source


def test_a_fragment_payload_is_carried_through_a_runtime_loop():
    """``from_fragment(cute.make_rmem_tensor(K, ...))`` (layout ``K:1``) rebound to results (``(K):(1)``) in a
    ``cutlass.range`` loop keeps one structure (the DSL refused it as CONTAINER_STRUCTURE_CHANGED)."""
    kernel = cute_coop.compile_kernel(ck.fragment_loop_launch, _tensor(), _tensor(), 3)
    assert kernel.cpp_source.count("cuda_coop_scan_") >= 1


def test_user_functions_that_call_cooperative_operations_are_named():
    exc = _error(ck.cooperative_operator_launch, _tensor(), _tensor())
    assert isinstance(exc, coop.CoopTypeError)
    assert "cuda.coop.reduce binary_op cooperative_op contains cuda.coop operations" in str(exc)
    assert "callbacks may only do per-thread computation" in str(exc)


SCANS = ("scan", "exclusive_sum", "inclusive_sum", "exclusive_scan", "inclusive_scan")


@pytest.mark.parametrize("name", SCANS)
def test_the_numba_namespace_keeps_the_state_operand(name):
    import inspect

    pytest.importorskip("numba_cuda_mlir")  # the backend raises ImportError, not a skip, without its compiler
    import cuda.coop.numba_mlir as numba_coop

    numba_params = inspect.signature(getattr(numba_coop, name)).parameters
    assert "prefix_op" in numba_params and "state" in numba_params
    assert "StatefulFunction" in getattr(numba_coop, name).__doc__


def test_no_cutlass_docstring_calls_a_feature_numba_only():
    from cuda.coop import _markers

    for name in _markers.OPERATIONS:
        for line in (getattr(cute_coop, name).__doc__ or "").splitlines():
            if "only" in line and "numba_mlir" in line:
                assert "cutlass" in line, (name, line)


def test_payload_dtype_from_an_assignment_in_a_runtime_loop():
    """``items = coop.ThreadData(K)`` typed by ``items[i] = ...`` inside ``cutlass.range`` (issue 30, item 4: the
    DSL asked for the payload's values at the loop's start, before the body gave its dtype, and P9 followed)."""
    kernel = cute_coop.compile_kernel(ck.loop_assignment_launch, _tensor(), _tensor())
    assert "cuda_coop_scan_" in kernel.cpp_source
    assert "CALL" not in kernel.sass() and kernel.local_memory_bytes == 0
