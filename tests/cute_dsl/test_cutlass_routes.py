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
from cuda.coop._cub import bitcode, bitstream, cache, nvrtc, program, toolchain  # noqa: E402
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


@pytest.fixture
def cold_cache(tmp_path, monkeypatch):
    """An empty cuda.coop cache (clang, NVRTC and their entries start from nothing), forgotten again after."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("CUDA_COOP_DISABLE_CACHE", raising=False)
    monkeypatch.setattr(cache, "_writes_failed", False)
    cache.forget_memo()
    yield monkeypatch
    cache.forget_memo()


@pytest.fixture
def counted(monkeypatch):
    """Counts of what a build runs: NVRTC programs (every one, a precompiled header's too), clang compiles, and the
    bitcode route's builds (each trace-finalize of a kernel on that route makes one)."""
    counts = {"nvrtc": 0, "clang": 0, "bitcode builds": 0}

    def counting(module, name, key):
        real = getattr(module, name)

        def spy(*args, **kwargs):
            counts[key] += 1
            return real(*args, **kwargs)

        monkeypatch.setattr(module, name, spy)

    counting(program, "run_program", "nvrtc")
    counting(bitcode, "compile_source", "clang")
    counting(bitcode, "build", "bitcode builds")
    return counts


def _symbols(source):
    return frozenset(re.findall(r"(\w+)_scratch_size\[2\]", source))


def _nvrtc_scratch_sizes(source):
    tools = toolchain.toolchain()
    text, _ = nvrtc.compile_text(source)
    built = program.run_program(text, nvrtc._options("sm_90", tools.include_paths()), {})
    assert built.status == 0, built.log
    return nvrtc._scratch_sizes(built.ltoir, "sm_90")


@pytest.mark.parametrize("digest", ["known", "cold"])
def test_a_cold_bitcode_build_runs_no_nvrtc_program(cold_cache, counted, digest):
    """A cold build on the bitcode route compiles its C++ once, with clang, and reads the scratch sizes from the
    bitcode; a warm one (a new process: nothing in memory) runs no compiler at all. ``cold``: the first build of a
    process whose cache has no header digest, where clang runs while the digest is made."""
    _needs_bitcode_route()
    if digest == "cold":
        cold_cache.setattr(bitcode, "digest_is_cold", lambda include: True)
    runs, links = nvrtc.stats["nvrtc_runs"], nvrtc.stats["link_seconds"]
    tile = ck.THREADS * ck.K
    kernel = cute_coop.compile_kernel(ck.scratch_sizes_launch, _tensor(tile * 3), _tensor(tile * 5))
    assert counted == {"nvrtc": 0, "clang": 1, "bitcode builds": 1}
    assert nvrtc.stats["nvrtc_runs"] == runs and nvrtc.stats["link_seconds"] == links  # nor nvJitLink's sizes
    sass, functions = _kernel_sass(kernel)
    assert len(functions) == 1 and "CALL" not in sass
    sizes = _nvrtc_scratch_sizes(kernel.cpp_source)
    assert len(sizes) == 5 and kernel.shared_memory_bytes >= max(size for size, _ in sizes.values())
    cold_cache.setattr(bitcode, "digest_is_cold", lambda include: False)  # a later process finds the digest
    cache.forget_memo()
    counted.update({"nvrtc": 0, "clang": 0, "bitcode builds": 0})
    warm = cute_coop.compile_kernel(ck.scratch_sizes_launch, _tensor(tile * 6), _tensor(tile * 5))
    assert counted == {"nvrtc": 0, "clang": 0, "bitcode builds": 1}
    assert warm.shared_memory_bytes == kernel.shared_memory_bytes and "CALL" not in warm.sass()


def test_scratch_sizes_read_from_the_bitcode_are_nvrtcs(cold_cache):
    """The bitcode route's scratch sizes, read from clang's bitcode and from the cache entry that keeps them, are
    the ones NVRTC reports for the same C++: a block scan, radix sort and histogram, each warp's merge sort and
    exchange, and the families of the every-family kernel."""
    _needs_bitcode_route()
    clang = _route.clang_lookup().clang
    tile = ck.THREADS * ck.K
    sources = [cute_coop.compile_kernel(ck.scratch_sizes_launch, _tensor(), _tensor(tile * 5)).cpp_source,
               cute_coop.compile_kernel(ck.everything_launch, *ck.everything_arguments(_tensor)).cpp_source]
    families = set()
    for source in sources:
        symbols = _symbols(source)
        families |= {re.match(r"cuda_coop_(\w+)_[0-9a-f]{16}$", s).group(1) for s in symbols}
        expected = _nvrtc_scratch_sizes(source)
        assert set(expected) == symbols
        fresh = bitcode.scratch_sizes(bitcode.compile_source(clang, source, "sm_90a"), symbols)
        assert fresh == expected
        cache.forget_memo()  # the entry the kernel's build stored, as another process reads it
        assert bitcode.build(clang, source, "sm_90a", symbols, backend="test").scratch == expected
    assert {"scan", "radix_sort", "histogram", "merge_sort", "exchange"} <= families and len(families) >= 12


def test_sizes_the_bitcode_does_not_show_are_asked_of_nvrtc(cold_cache, counted):
    """Should the bitcode's tables ever not be read, NVRTC gives the sizes (as before it was read): the calls are
    still inlined, with the same shared memory."""
    _needs_bitcode_route()
    tile = ck.THREADS * ck.K
    reference = cute_coop.compile_kernel(ck.scratch_sizes_launch, _tensor(tile * 7), _tensor(tile * 5))
    assert counted["nvrtc"] == 0

    def unreadable(data):
        raise ValueError("a made-up reading failure")

    cold_cache.setattr(bitstream, "integer_arrays", unreadable)
    cold_cache.setattr(bitcode, "bitcode_key", lambda *args: uuid.uuid4().hex)  # clang compiles it again
    runs = nvrtc.stats["nvrtc_runs"]
    kernel = cute_coop.compile_kernel(ck.scratch_sizes_launch, _tensor(tile * 8), _tensor(tile * 5))
    assert nvrtc.stats["nvrtc_runs"] == runs + 1  # the program the build waited for (a header's PCH may follow)
    assert counted["clang"] == 2 and counted["bitcode builds"] == 2
    assert "CALL" not in kernel.sass() and kernel.shared_memory_bytes == reference.shared_memory_bytes


def test_the_bitcode_reader_refuses_what_it_cannot_read():
    """Cut short anywhere, the bitcode is refused (ValueError) or shows fewer tables, never other values; what is
    not bitcode is refused."""
    _needs_bitcode_route()
    kernel_source = cute_coop.compile_kernel(ck.scan_launch, _tensor(), _tensor()).cpp_source
    data = bitcode.compile_source(_route.clang_lookup().clang, kernel_source, "sm_90a")
    whole = bitstream.integer_arrays(data)
    symbols = _symbols(kernel_source)
    assert {f"{s}_scratch_size" for s in symbols} == whole.keys() and len(symbols) == 1
    for cut in [*range(0, 64), *range(64, len(data), 7)]:
        try:
            part = bitstream.integer_arrays(data[:cut])
        except ValueError:
            continue
        assert part.items() <= whole.items()
    for junk in (b"", b"BC", b"not bitcode at all", b"BC\xc0\xde" + bytes(range(256)) * 4):
        with pytest.raises(ValueError):
            bitstream.integer_arrays(junk)
    assert bitcode.scratch_sizes(b"junk", symbols) is None
    assert bitcode.scratch_sizes(data, symbols | {"cuda_coop_missing"}) is None
    assert bitcode.scratch_sizes(data, frozenset()) == {}


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


def test_a_cpp_error_is_reported_in_nvrtcs_words(fresh_route, cold_cache, counted):
    """When clang fails on the C++ (here a static_assert the unit is given), NVRTC compiles it to say why: the first
    line names the kernel's call and the constraint in words, with no C++ and no link-route warning."""
    _needs_bitcode_route()
    from cuda.coop.cutlass import _link

    def with_constraint(providers, *args):
        return _link_unit(providers, *args) + 'static_assert(sizeof(int) == 3, "a made-up constraint");\n'

    _link_unit = _link.translation_unit
    fresh_route.setattr(_link, "translation_unit", with_constraint)
    fresh_route.setattr(nvrtc, "translation_unit", with_constraint)
    with pytest.raises(coop.CoopBuildError) as caught:
        cute_coop.compile_kernel(ck.scan_launch, _tensor(ck.THREADS * ck.K * 9), _tensor())
    first = str(caught.value).splitlines()[0]
    assert re.match(r"\S*cute_kernels\.py:\d+: cuda\.coop could not build kernel scan_kernel for sm_90: ", first)
    assert "static_assert): a made-up constraint" in first
    assert counted["clang"] == 1 and counted["nvrtc"] >= 1
    assert not _route._warned


def test_a_clang_newer_than_the_dsls_llvm_is_refused(fresh_route):
    _needs_bitcode_route()
    lookup = bitcode.find_clang(_route.clang_lookup().clang.version[0] - 1)
    assert lookup.clang is None
    assert "newer than the LLVM" in lookup.reason and "ziglang>=0.17,<0.18" in lookup.reason


def test_the_route_can_be_forced_to_link(fresh_route):
    fresh_route.setenv(_route.ROUTE_VARIABLE, "link")
    assert _route.route() == "link"
    assert "CUDA_COOP_CUTE_ROUTE=link" in _route.clang_lookup().reason


def test_a_misspelt_route_is_the_users_error(fresh_route):
    """Not a silent default: the setting and what it accepts."""
    fresh_route.setenv(_route.ROUTE_VARIABLE, "bogus")
    with pytest.raises(coop.CoopValueError, match=r"^CUDA_COOP_CUTE_ROUTE='bogus' is not a route; accepted: link, "):
        _route.route()
    fresh_route.setenv(_route.ROUTE_VARIABLE, " Bitcode ")
    assert _route.clang_lookup().reason is None or "CUDA_COOP_CUTE_ROUTE" not in _route.clang_lookup().reason
