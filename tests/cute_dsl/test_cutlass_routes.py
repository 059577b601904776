"""The two routes of the CuTe DSL backend's calls (docs: cutlass, "How it works"), without a GPU:

* bitcode (the default): the calls are inlined into the kernel (no CALL, no local memory), every benchmark kernel too;
* link (no ziglang, or clang failing on a kernel): each call stays one CALL, with one warning naming cause and fix.
"""
from __future__ import annotations

import os
import re
import sys
import uuid
from pathlib import Path

import pytest

cutlass = pytest.importorskip("cutlass")
from cutlass.cute.runtime import make_fake_tensor  # noqa: E402

import cuda.coop.cutlass as cute_coop  # noqa: E402
from cuda import coop  # noqa: E402
from cuda.coop._cub import bitcode, nvrtc, program, toolchain  # noqa: E402
from cuda.coop.cutlass import _dsl, _patches, _route  # noqa: E402
from cuda.coop.cutlass._native_stderr import native_stderr_without  # noqa: E402

import cute_kernels as ck  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


def _tensor(n=ck.THREADS * ck.K, dtype=None):
    return make_fake_tensor(dtype or cutlass.Int32, (n,), stride=(1,))


def _kernel_sass(kernel):
    """The SASS of the kernel's own function(s), and the names of every function in the cubin."""
    sass = kernel.sass()
    return sass, re.findall(r"Function : (\S+)", sass)


def _needs_bitcode_route():
    lookup = _route.clang_lookup()
    if lookup.clang is None:
        pytest.fail(f"the README's install gives the bitcode route, but this one does not: {lookup.reason}")


def test_the_installed_route_is_bitcode():
    _needs_bitcode_route()
    assert _route.route() == "bitcode"
    assert _route.clang_lookup().clang.version[0] <= _dsl.llvm_major()


def test_calls_are_inlined_into_the_kernel():
    """The scan kernel's load, scan and store are CUB code inside the kernel: one function, no CALL, no local
    memory, CUB's barriers and shuffles in its SASS."""
    _needs_bitcode_route()
    kernel = cute_coop.compile_kernel(ck.scan_launch, _tensor(), _tensor())
    sass, functions = _kernel_sass(kernel)
    assert len(functions) == 1 and functions[0].startswith("kernel_"), functions
    assert "CALL" not in sass and kernel.local_memory_bytes == 0
    assert "BAR.SYNC" in sass and "SHFL.UP" in sass
    assert "cuda_coop_scan_" in kernel.cpp_source  # the C++ it was built from is still reported


def test_every_family_in_one_kernel_is_inlined():
    _needs_bitcode_route()
    kernel = cute_coop.compile_kernel(ck.everything_launch, *ck.everything_arguments(_tensor))
    sass, functions = _kernel_sass(kernel)
    assert len(functions) == 1 and "CALL" not in sass and kernel.local_memory_bytes == 0


def test_a_vectorized_store_is_one_vector_store_per_thread():
    """algorithm="vectorize": with the tile aligned, one 128-bit load and one 128-bit store per thread (the items
    are computed by a scan just before; CUB's own vectorized store came out of clang as three stores, 64, 32 and
    32 bits), and the scalar accesses on the unaligned path only."""
    _needs_bitcode_route()
    kernel = cute_coop.compile_kernel(ck.vector_scan_launch, _tensor(), _tensor())
    widths = re.findall(r"STG\.E(\.\d+)? ", kernel.sass())
    assert sorted(widths) == [""] * ck.K + [".128"], widths  # the vector store, and the unaligned path's K
    assert "LDG.E.128" in kernel.sass()


def test_the_sm100a_build_is_inlined_too():
    _needs_bitcode_route()
    kernel = cute_coop.compile_kernel(ck.scan_launch, _tensor(), _tensor(), target="sm_100a")
    sass, functions = _kernel_sass(kernel)
    assert len(functions) == 1 and "CALL" not in sass and kernel.local_memory_bytes == 0


def test_every_benchmark_kernel_is_inlined():
    """benchmarks/cute_kernels.py, as the benchmark builds them: 0 CALL and 0 local bytes in every row."""
    _needs_bitcode_route()
    sys.path.insert(0, str(ROOT))
    try:
        from benchmarks import cute as bench
    finally:
        sys.path.remove(str(ROOT))
    rows = [row for row in bench.ROWS if row.name != "plain_copy"]
    assert len(rows) >= 9
    for row in rows:
        resources = bench.cute_resources(row, 1 << 16)
        assert resources["calls"] == 0 and resources["local_bytes"] == 0, (row.name, resources)


def test_scratch_sizes_of_clang_and_nvrtc_agree():
    """NVRTC's sizes are the ones used (docs: cutlass, "How it works"); clang's, read from its IR, are the same."""
    _needs_bitcode_route()
    kernel = cute_coop.compile_kernel(ck.everything_launch, *ck.everything_arguments(_tensor))
    source = kernel.cpp_source
    tools = toolchain.toolchain()
    text, _ = nvrtc.compile_text(source)
    built = program.run_program(text, nvrtc._options("sm_90", tools.include_paths()), {})
    assert built.status == 0, built.log
    nvrtc_sizes = nvrtc._scratch_sizes(built.ltoir, "sm_90")
    ir = bitcode.compile_source(_route.clang_lookup().clang, source, "sm_90a", textual=True).decode()
    clang_sizes = {m.group(1): (int(m.group(2)), int(m.group(3))) for m in re.finditer(
        r"@(\w+)_scratch_size = .*\[2 x i64\] \[i64 (\d+), i64 (\d+)\]", ir)}
    assert len(nvrtc_sizes) >= 6
    assert clang_sizes == nvrtc_sizes


def test_entry_points_are_always_inline():
    _needs_bitcode_route()
    kernel = cute_coop.compile_kernel(ck.scan_launch, _tensor(), _tensor())
    ir = bitcode.compile_source(_route.clang_lookup().clang, kernel.cpp_source, "sm_90a", textual=True).decode()
    entries = re.findall(r"^define .*@(cuda_coop_\w+)\(.*#(\d+)", ir, re.MULTILINE)
    assert entries
    for name, group in entries:
        attributes = re.search(rf"^attributes #{group} = {{(.*)}}", ir, re.MULTILINE).group(1)
        assert "alwaysinline" in attributes, name


def test_the_data_layout_warning_is_kept_off_the_screen(capfd):
    """The DSL prints a harmless warning per bitcode link on file descriptor 2; the compile step drops it (and the
    blank line after it) and writes back everything else."""
    with native_stderr_without(_dsl.DATA_LAYOUT_WARNING):
        os.write(2, b"before\nwarning: Linking two modules of different data layouts: 'a.bc' is 'x'\n\nafter\n")
    assert capfd.readouterr().err == "before\nafter\n"


def test_the_warning_is_filtered_while_the_pass_manager_runs_only(capfd, monkeypatch):
    """A bitcode link's compile opens the filter from its pass manager's run, once (the native call that prints the
    warning), not around the DSL's whole compile; the warning never shows, what else is written does."""
    _needs_bitcode_route()
    opened = []
    real = _patches.native_stderr_without

    def spied(needle):
        opened.append(sys._getframe(1).f_code.co_name)  # who opens the filter
        return real(needle)

    monkeypatch.setattr(_patches, "native_stderr_without", spied)
    os.write(2, b"before the build\n")
    kernel = cute_coop.compile_kernel(ck.scan_launch, _tensor(ck.THREADS * ck.K * 3), _tensor(ck.THREADS * ck.K * 3))
    assert kernel.local_memory_bytes == 0
    assert opened == ["run"], opened  # _QuietPassManager.run: a new module (its own tensor shape) was compiled once
    err = capfd.readouterr().err
    assert "before the build" in err and _dsl.DATA_LAYOUT_WARNING.decode() not in err


def test_only_the_compile_sees_a_quiet_pass_manager():
    """The copy of the DSL's compiler made for one compile leaves the DSL's own compiler and its module alone."""
    from cutlass.cutlass_dsl import CuTeDSL

    compiler = CuTeDSL._get_dsl().compiler_provider
    passmanagers = compiler.passmanager
    quiet = _patches._quiet_linking(compiler)
    assert compiler.passmanager is passmanagers and quiet.passmanager is not passmanagers
    assert quiet.execution_engine is compiler.execution_engine
    assert quiet.passmanager.PassManager.parse is not passmanagers.PassManager.parse


def test_filters_open_in_two_threads_lose_nothing_and_put_the_descriptor_back(capfd):
    """File descriptor 2 is the process's: filters open at once in two threads share one capture, which is written
    back (less the filtered lines) when the last closes, so nothing is lost and fd 2 is the process's again."""
    import threading

    first_open, second_open, first_closed = threading.Event(), threading.Event(), threading.Event()

    def first():
        with native_stderr_without(b"NOISE"):
            os.write(2, b"one\nNOISE a\n")
            first_open.set()
            second_open.wait(60)
        first_closed.set()

    def second():
        first_open.wait(60)
        with native_stderr_without(b"NOISE"):
            second_open.set()
            first_closed.wait(60)
            os.write(2, b"two\nNOISE b\n")

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    os.write(2, b"three\n")
    assert capfd.readouterr().err == "one\ntwo\nthree\n"


def test_the_pipeline_links_only_this_modules_bitcode():
    """The DSL keeps link-libraries in compile options that outlive one compile: another kernel's bitcode of ours is
    dropped, repeats go, anything else stays."""
    ours = "/c/" + "a" * 64 + ".bc"
    other = "/c/" + "b" * 64 + ".bc"
    pipeline = f"x link-libraries='{ours},{other},/user/lib.bc,{ours}' y"
    assert _dsl.own_libraries(pipeline, [ours], _route.is_bitcode_file) == \
        f"x link-libraries='{ours},/user/lib.bc' y"
    assert _dsl.own_libraries(f"link-libraries='{other}'", [], _route.is_bitcode_file) == ""


@pytest.fixture
def fresh_route(monkeypatch):
    """The route is chosen once per process: forget it before and after the test."""
    _route.clang_lookup.cache_clear()
    bitcode.find_clang.cache_clear()
    monkeypatch.setattr(_route, "_warned", set())
    yield monkeypatch
    _route.clang_lookup.cache_clear()
    bitcode.find_clang.cache_clear()


def _assert_one_call_per_cooperative_call(kernel):
    sass, functions = _kernel_sass(kernel)
    wrappers = sorted(f for f in functions if f.startswith("cuda_coop_"))
    assert [f.split("_")[2] for f in wrappers] == ["load", "scan", "store"]
    assert len(functions) == len(wrappers) + 1  # and the kernel
    kernel_text = [part for part in sass.split("Function : ")[1:] if part.startswith("kernel_")][0]
    assert kernel_text.count("CALL") == 3


def test_without_ziglang_the_link_route_is_taken_with_one_warning(fresh_route):
    fresh_route.setitem(sys.modules, "ziglang", None)  # import ziglang raises ImportError
    assert _route.route() == "link"
    with pytest.warns(UserWarning) as caught:
        kernel = cute_coop.compile_kernel(ck.scan_launch, _tensor(), _tensor())
        cute_coop.compile_kernel(ck.fragment_launch, _tensor(), _tensor())
    messages = [str(w.message) for w in caught if "link route" in str(w.message)]
    assert len(messages) == 1, messages
    assert "the ziglang wheel is not installed" in messages[0] and 'pip install "ziglang>=0.17,<0.18"' in messages[0]
    _assert_one_call_per_cooperative_call(kernel)


def test_when_clang_fails_on_a_kernel_it_is_linked_instead(fresh_route):
    _needs_bitcode_route()

    def failing(*args, **kwargs):
        raise coop.CoopBuildError("clang failed (error: a made-up failure)")

    fresh_route.setattr(bitcode, "compile_source", failing)
    fresh_route.setattr(bitcode, "bitcode_key", lambda *args: uuid.uuid4().hex)  # never in the cache
    with pytest.warns(UserWarning, match=r"clang could not build the calls of scan_kernel \(clang failed "
                                         r"\(error: a made-up failure\)\)"):
        kernel = cute_coop.compile_kernel(ck.scan_launch, _tensor(), _tensor())
    _assert_one_call_per_cooperative_call(kernel)


def test_a_clang_newer_than_the_dsls_llvm_is_refused(fresh_route):
    _needs_bitcode_route()
    lookup = bitcode.find_clang(_route.clang_lookup().clang.version[0] - 1)
    assert lookup.clang is None
    assert "newer than the LLVM" in lookup.reason and "ziglang>=0.17,<0.18" in lookup.reason


def test_the_route_can_be_forced_to_link(fresh_route):
    fresh_route.setenv(_route.ROUTE_VARIABLE, "link")
    assert _route.route() == "link"
    assert "CUDA_COOP_CUTE_ROUTE=link" in _route.clang_lookup().reason
