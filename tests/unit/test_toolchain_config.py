"""Toolchain resolution, the provider cache key, NVRTC failures and CUDA_COOP_* booleans (SPEC 1.5-1.7, R10)."""
from __future__ import annotations

import dataclasses
import os
import signal
import subprocess
import sys
import textwrap
import time
import types
import uuid
import warnings
from pathlib import Path

import pytest

from cuda.coop import CoopBuildError, CoopValueError, CudaCoopAutoRegistrationWarning
from cuda.coop import _backends, _config
from cuda.coop._cub import cache, nvrtc, toolchain
from cuda.coop._cub.provider import Provider

ROOT = Path(__file__).resolve().parents[2]
ARCH = "sm_90"


def _clear_toolchain() -> None:
    toolchain._cached.cache_clear()
    toolchain.headers_digest.cache_clear()
    toolchain.cuda_include_digest.cache_clear()


@pytest.fixture
def fake_cccl(tmp_path, monkeypatch):
    """A tiny header tree accepted as CUDA_COOP_CCCL_ROOT: NVRTC runs on it take well under a second."""
    root = tmp_path / "cccl"
    (root / "cub").mkdir(parents=True)
    (root / "cub" / "version.cuh").write_text("#pragma once\n#define CUB_VERSION 300000\n")
    (root / "cub" / "extra.cuh").write_text("#pragma once\n#define CUDA_COOP_TEST_EXTRA 1\n")
    monkeypatch.setenv("CUDA_COOP_CCCL_ROOT", str(root))
    _clear_toolchain()
    yield root
    _clear_toolchain()


@pytest.fixture
def cache_home(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("CUDA_COOP_DISABLE_CACHE", raising=False)
    monkeypatch.delenv("CUDA_COOP_SOURCE_DUMP_DIR", raising=False)
    monkeypatch.setattr(cache, "_writes_failed", False)
    cache.forget_memo()
    yield tmp_path / "xdg" / "cuda-coop"
    cache.forget_memo()


def _provider(tag: str = "", scratch: str | None = None) -> Provider:
    """A fresh provider (``tag`` makes a new translation unit, hence a new key)."""
    body = (f'// {tag or uuid.uuid4().hex}\n'
            'extern "C" __device__ int @SYM@(int x) { return x + CUDA_COOP_TEST_EXTRA; }')
    return Provider.make("tiny", ("cub/extra.cuh",), body, scratch)


# ---------------------------------------------------------------- 9. boolean variables

@pytest.mark.parametrize("value", [None, "", "0", "false", "FALSE", "No", " off ", "\tOff\n"])
def test_false_spellings(value):
    assert _config.parse_flag("CUDA_COOP_DISABLE_CACHE", value) is False


@pytest.mark.parametrize("value", ["1", "true", "True", "YES", " on ", "On"])
def test_true_spellings(value):
    assert _config.parse_flag("CUDA_COOP_DISABLE_CACHE", value) is True


@pytest.mark.parametrize("value", ["2", "maybe", "enabled", "y", "n", "t", "1.0", "-1", "truee"])
def test_other_spellings_are_errors(value):
    with pytest.raises(CoopValueError) as info:
        _config.parse_flag("CUDA_COOP_DISABLE_CACHE", value)
    message = str(info.value)
    assert "CUDA_COOP_DISABLE_CACHE" in message and repr(value) in message
    for spelling in ("1", "true", "yes", "on", "0", "false", "no", "off"):
        assert spelling in message


def test_invalid_disable_cache_raises_at_compile(monkeypatch, cache_home):
    monkeypatch.setenv("CUDA_COOP_DISABLE_CACHE", "sometimes")
    with pytest.raises(CoopValueError, match="CUDA_COOP_DISABLE_CACHE='sometimes'"):
        _config.cache_disabled()
    with pytest.raises(CoopValueError, match="CUDA_COOP_DISABLE_CACHE"):
        cache.load("0" * 64)


def test_invalid_auto_registration_value_warns_and_skips(monkeypatch):
    calls = []
    monkeypatch.setenv("CUDA_COOP_DISABLE_AUTO_DSL_REGISTRATION", "perhaps")
    monkeypatch.setitem(sys.modules, "numba_cuda_mlir", types.ModuleType("numba_cuda_mlir"))
    monkeypatch.setattr(_backends, "register", lambda name: calls.append(name))
    with pytest.warns(CudaCoopAutoRegistrationWarning) as record:
        _backends.auto_register()
    message = str(record[0].message)
    assert "CUDA_COOP_DISABLE_AUTO_DSL_REGISTRATION" in message and "'perhaps'" in message
    assert "yes" in message and "off" in message
    assert calls == []  # automatic registration skipped


def test_invalid_auto_registration_value_does_not_break_the_import():
    env = {**os.environ, "CUDA_COOP_DISABLE_AUTO_DSL_REGISTRATION": "maybe", "PYTHONPATH": str(ROOT / "src")}
    code = ("import warnings, sys\nwarnings.simplefilter('always')\nimport cuda.coop\n"
            "print('IMPORTED', 'cuda.coop.numba_mlir' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "IMPORTED False" in out.stdout
    assert "CudaCoopAutoRegistrationWarning" in out.stderr and "CUDA_COOP_DISABLE_AUTO_DSL_REGISTRATION" in out.stderr


def test_valid_auto_registration_value_still_disables(monkeypatch):
    calls = []
    monkeypatch.setenv("CUDA_COOP_DISABLE_AUTO_DSL_REGISTRATION", " YES ")
    monkeypatch.setitem(sys.modules, "numba_cuda_mlir", types.ModuleType("numba_cuda_mlir"))
    monkeypatch.setattr(_backends, "register", lambda name: calls.append(name))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _backends.auto_register()
    assert calls == []


# ---------------------------------------------------------------- 6. NVRTC vs nvJitLink versions

@pytest.mark.parametrize("rtc, link", [((13, 0), (13, 0)), ((13, 0), (13, 5)), ((12, 4), (12, 9))])
def test_compatible_versions(rtc, link):
    toolchain.check_versions(rtc, link)


@pytest.mark.parametrize("rtc, link, why", [
    ((13, 6), (13, 5), "newer than"),
    ((13, 0), (12, 9), "different major"),
    ((12, 9), (13, 0), "different major"),
])
def test_incompatible_versions(rtc, link, why):
    with pytest.raises(CoopBuildError) as info:
        toolchain.check_versions(rtc, link)
    message = str(info.value)
    assert why in message
    assert f"NVRTC {rtc[0]}.{rtc[1]}" in message and f"nvJitLink {link[0]}.{link[1]}" in message
    assert "cuda-toolkit[nvrtc,nvjitlink]" in message


def test_newer_nvrtc_fails_before_any_build(monkeypatch, fake_cccl, cache_home):
    monkeypatch.setattr(toolchain, "_nvrtc_version", lambda: (13, 9))
    monkeypatch.setattr(toolchain, "_nvjitlink_version", lambda: (13, 5))
    runs = nvrtc.stats["nvrtc_runs"]
    with pytest.raises(CoopBuildError) as info:
        nvrtc.build([_provider()], ARCH, "kernel k", backend="numba_mlir")
    first = str(info.value).splitlines()[0]
    assert first.startswith(f"cuda.coop could not build kernel k for {ARCH}: NVRTC 13.9 is newer than nvJitLink 13.5")
    assert nvrtc.stats["nvrtc_runs"] == runs


# ---------------------------------------------------------------- 7. libraries without the expected symbols

def test_library_call_names_a_missing_function():
    with pytest.raises(CoopBuildError, match="nvrtc library .* does not provide nvrtcGetLTOIR"):
        toolchain.library_call(types.SimpleNamespace(), "nvrtc", "nvrtcGetLTOIR")


def test_library_call_wraps_a_binding_runtime_error():
    def missing(*_):
        raise RuntimeError('Function "nvrtcGetLTOIR" not found')

    with pytest.raises(CoopBuildError, match="nvrtc library .* failed in nvrtcGetLTOIR"):
        toolchain.library_call(types.SimpleNamespace(nvrtcGetLTOIR=missing), "nvrtc", "nvrtcGetLTOIR")


def test_missing_nvrtc_get_ltoir_is_a_build_error(monkeypatch, fake_cccl, cache_home):
    from cuda.bindings import nvrtc as bindings

    monkeypatch.delattr(bindings, "nvrtcGetLTOIR")
    with pytest.raises(CoopBuildError, match="does not provide nvrtcGetLTOIR"):
        nvrtc.build([_provider()], ARCH, "kernel k", backend="numba_mlir")


def test_nvrtc_function_raising_is_a_build_error(monkeypatch, fake_cccl, cache_home):
    from cuda.bindings import nvrtc as bindings

    def missing(*_):
        raise RuntimeError('Function "nvrtcGetLTOIRSize" not found')

    monkeypatch.setattr(bindings, "nvrtcGetLTOIRSize", missing)
    with pytest.raises(CoopBuildError, match="nvrtcGetLTOIRSize"):
        nvrtc.build([_provider()], ARCH, "kernel k", backend="numba_mlir")


def test_missing_nvrtc_version_is_a_build_error(monkeypatch, fake_cccl):
    from cuda.bindings import nvrtc as bindings

    monkeypatch.delattr(bindings, "nvrtcVersion")
    with pytest.raises(CoopBuildError, match="nvrtc library .* does not provide nvrtcVersion"):
        toolchain.toolchain()


def test_missing_nvjitlink_version_is_a_build_error(monkeypatch, fake_cccl):
    from cuda.bindings import nvjitlink

    monkeypatch.delattr(nvjitlink, "version")
    with pytest.raises(CoopBuildError, match="nvJitLink library .* does not provide version"):
        toolchain.toolchain()


# ---------------------------------------------------------------- 8. static_assert in words

_LOG = textwrap.dedent('''\
    /venv/site-packages/cuda/cccl/headers/include/cub/block/block_radix_rank.cuh(210): error: static assertion failed \
with "BlockRadixRank requires "RADIX_BITS <= 8""
        static_assert(RADIX_BITS <= 8, "BlockRadixRank requires \\"RADIX_BITS <= 8\\"");
        ^
              detected during instantiation of class "cub::BlockRadixRank<...>" at line 40 of cuda_coop.cu

    cuda_coop.cu(12): error: static assertion failed
      static_assert(sizeof(T) == 8);
      ^

    2 errors detected in the compilation of "cuda_coop.cu".
''')


def test_static_assert_messages_are_extracted():
    assert nvrtc.static_assert_messages(_LOG) == [
        'BlockRadixRank requires "RADIX_BITS <= 8" (static_assert at cub/block/block_radix_rank.cuh:210)',
        "static_assert(sizeof(T) == 8) failed (static_assert at cuda_coop.cu:12)",
    ]
    assert nvrtc.static_assert_messages("x.cu(1): error: identifier \"y\" is undefined") == []
    assert nvrtc.static_assert_messages('error: static_assert failed due to requirement \'N > 0\' "N must be '
                                        'positive"') == ["N must be positive"]


def test_static_assert_first_line_is_in_words_and_the_log_follows():
    message = nvrtc.compile_error_message("kernel k", ARCH, _LOG, "/tmp/dump/x.cu")
    first, rest = message.split("\n", 1)
    assert first.startswith(f"cuda.coop could not build kernel k for {ARCH}: ")
    assert 'BlockRadixRank requires "RADIX_BITS <= 8"' in first and "/tmp/dump/x.cu" in first
    assert "sizeof(T) == 8" in first
    assert _LOG.rstrip() in rest


def test_plain_nvrtc_errors_keep_the_generic_first_line():
    message = nvrtc.compile_error_message("kernel k", ARCH, 'x.cu(1): error: identifier "y" is undefined', None)
    assert message.splitlines()[0] == (f"cuda.coop could not build kernel k for {ARCH}: NVRTC failed "
                                       "(set CUDA_COOP_SOURCE_DUMP_DIR to keep the source)")


def test_real_static_assert_is_translated(fake_cccl, cache_home):
    (fake_cccl / "cub" / "extra.cuh").write_text(
        "#pragma once\n#define CUDA_COOP_TEST_EXTRA 1\n"
        'template <int N> struct Tile { static_assert(N % 32 == 0, "tile must be a multiple of 32 items"); };\n'
        "template struct Tile<33>;\n")
    _clear_toolchain()
    with pytest.raises(CoopBuildError) as info:
        nvrtc.build([_provider()], ARCH, "kernel k", backend="numba_mlir")
    first, rest = str(info.value).split("\n", 1)
    assert "tile must be a multiple of 32 items (static_assert at cub/extra.cuh:3)" in first
    assert "static assertion failed" in rest


# ---------------------------------------------------------------- 1. cache key completeness

def test_editing_any_header_of_the_tree_is_a_new_key(fake_cccl, cache_home):
    provider = _provider()
    assert nvrtc.build([provider], ARCH, "kernel k", backend="numba_mlir").from_cache is False
    cache.forget_memo()
    assert nvrtc.build([provider], ARCH, "kernel k", backend="numba_mlir").from_cache is True  # warm
    (fake_cccl / "cub" / "extra.cuh").write_text("#pragma once\n#error edited header\n")
    _clear_toolchain()  # a new process
    cache.forget_memo()
    with pytest.raises(CoopBuildError, match="edited header"):
        nvrtc.build([provider], ARCH, "kernel k", backend="numba_mlir")


def test_key_covers_every_toolchain_part(fake_cccl):
    tools = toolchain.toolchain()
    base = nvrtc.cache_key("src", ARCH, tools, "numba_mlir")
    assert base == nvrtc.cache_key("src", ARCH, toolchain.toolchain(), "numba_mlir")
    changes = {
        "cccl_include": Path("/elsewhere"),
        "cuda_include": Path("/other/cuda/include"),
        "nvrtc_version": (tools.nvrtc_version[0], tools.nvrtc_version[1] + 1),
        "nvjitlink_version": (tools.nvjitlink_version[0], tools.nvjitlink_version[1] + 1),
        "headers_digest": "0" * 64,
        "nvrtc_library": "/other/libnvrtc.so.13:1:2",
        "nvjitlink_library": "/other/libnvJitLink.so.13:1:2",
        "cuda_include_digest": "1" * 64,
        "code_digest": "2" * 64,
    }
    assert set(changes) == {f.name for f in dataclasses.fields(tools)}
    keys = {name: nvrtc.cache_key("src", ARCH, dataclasses.replace(tools, **{name: value}), "numba_mlir")
            for name, value in changes.items()}
    assert base not in keys.values() and len(set(keys.values())) == len(keys)
    assert nvrtc.cache_key("src", "sm_100", tools, "numba_mlir") != base
    assert nvrtc.cache_key("src2", ARCH, tools, "numba_mlir") != base


def test_toolchain_identifies_the_loaded_libraries(fake_cccl):
    tools = toolchain.toolchain()
    assert "libnvrtc" in tools.nvrtc_library and "libnvJitLink" in tools.nvjitlink_library
    path, size, _ = tools.nvrtc_library.rsplit(":", 2)
    assert os.path.getsize(path) == int(size)
    assert tools.code_digest == toolchain.code_digest() and len(tools.code_digest) == 64
    assert tools.headers_digest == toolchain.tree_digest(fake_cccl)


def test_tree_digest_tracks_content_paths_and_suffixes(tmp_path):
    (tmp_path / "pkg" / "sub").mkdir(parents=True)
    (tmp_path / "pkg" / "a.py").write_text("x = 1\n")
    (tmp_path / "pkg" / "sub" / "b.py").write_text("y = 2\n")
    digest = toolchain.tree_digest(tmp_path / "pkg", suffixes=(".py",))
    (tmp_path / "pkg" / "notes.txt").write_text("ignored")
    (tmp_path / "pkg" / "__pycache__").mkdir()
    (tmp_path / "pkg" / "__pycache__" / "a.py").write_text("ignored")
    assert toolchain.tree_digest(tmp_path / "pkg", suffixes=(".py",)) == digest
    (tmp_path / "pkg" / "sub" / "b.py").write_text("y = 3\n")  # same size, other content
    assert toolchain.tree_digest(tmp_path / "pkg", suffixes=(".py",)) != digest
    (tmp_path / "pkg" / "sub" / "b.py").write_text("y = 2\n")
    (tmp_path / "pkg" / "sub" / "b.py").rename(tmp_path / "pkg" / "sub" / "c.py")
    assert toolchain.tree_digest(tmp_path / "pkg", suffixes=(".py",)) != digest


class _Blocked(Exception):
    pass


def test_tree_digest_never_opens_a_fifo(tmp_path):
    (tmp_path / "t").mkdir()
    os.mkfifo(tmp_path / "t" / "pipe.cuh")
    def on_alarm(*_):
        raise _Blocked("tree_digest blocked on a FIFO")

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(10)
    try:
        assert len(toolchain.tree_digest(tmp_path / "t")) == 64
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def test_resolution_happens_on_first_build_not_at_import():
    code = ("import sys, cuda.coop\nfrom cuda.coop._cub import toolchain\n"
            "print('STATE', toolchain._cached.cache_info().currsize, toolchain.headers_digest.cache_info().currsize,"
            " 'cuda.bindings' in sys.modules, 'numpy' in sys.modules)")
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "STATE 0 0 False False" in out.stdout


# ---------------------------------------------------------------- 2. bad entries through build

def test_entry_with_other_scratch_symbols_is_rebuilt(fake_cccl, cache_home):
    provider = _provider(scratch="int")
    built = nvrtc.build([provider], ARCH, "kernel k", backend="numba_mlir")
    assert built.scratch == {provider.symbol: (4, 4)}
    entry = nvrtc.cache_key(built.source, ARCH, toolchain.toolchain(), "numba_mlir")
    cache.store(entry, built.ltoir, {"scratch": {"cuda_coop_other": [4, 4]}})  # inconsistent with the request
    cache.forget_memo()
    runs = nvrtc.stats["nvrtc_runs"]
    again = nvrtc.build([provider], ARCH, "kernel k", backend="numba_mlir")
    assert not again.from_cache and again.scratch == {provider.symbol: (4, 4)}
    assert nvrtc.stats["nvrtc_runs"] == runs + 1


# ---------------------------------------------------------------- 5. source dumps

def test_unusable_dump_dir_warns_once_and_builds(tmp_path, monkeypatch, fake_cccl, cache_home):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("CUDA_COOP_SOURCE_DUMP_DIR", str(blocker))
    monkeypatch.setattr(nvrtc, "_dump_warned", set())
    with pytest.warns(UserWarning, match=f"CUDA_COOP_SOURCE_DUMP_DIR={blocker} is not usable"):
        built = nvrtc.build([_provider()], ARCH, "kernel k", backend="numba_mlir")
    assert built.ltoir and built.dump_path is None
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # once per directory
        nvrtc.build([_provider()], ARCH, "kernel k", backend="numba_mlir")


def test_dump_dir_below_a_file_is_a_warning_too(tmp_path, monkeypatch, fake_cccl, cache_home):
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    monkeypatch.setenv("CUDA_COOP_SOURCE_DUMP_DIR", str(blocker / "sub"))
    monkeypatch.setattr(nvrtc, "_dump_warned", set())
    with pytest.warns(UserWarning, match="CUDA_COOP_SOURCE_DUMP_DIR"):
        assert nvrtc.build([_provider()], ARCH, "kernel k", backend="numba_mlir").ltoir


def test_sources_are_dumped_on_cache_hits(tmp_path, monkeypatch, fake_cccl, cache_home):
    dump = tmp_path / "dump"
    provider = _provider()
    nvrtc.build([provider], ARCH, "kernel k", backend="numba_mlir")  # cold, no dump asked
    cache.forget_memo()
    monkeypatch.setenv("CUDA_COOP_SOURCE_DUMP_DIR", str(dump))
    built = nvrtc.build([provider], ARCH, "kernel k", backend="numba_mlir")
    assert built.from_cache and built.dump_path is not None
    assert Path(built.dump_path).read_text() == built.source
    assert Path(built.dump_path).parent == dump and Path(built.dump_path).name.startswith("cuda_coop_numba_mlir_")


# ---------------------------------------------------------------- 4. concurrent cold builds

_CHILD = textwrap.dedent("""
    import hashlib, sys, time
    from pathlib import Path
    from cuda.coop._cub import nvrtc
    from cuda.coop._cub.provider import Provider
    from cuda.coop._cub.toolchain import toolchain

    toolchain()
    body = '// %s\\nextern "C" __device__ int @SYM@(int x) { return x + CUDA_COOP_TEST_EXTRA; }'
    provider = Provider.make("tiny", ("cub/extra.cuh",), body, "int")
    Path(sys.argv[2]).touch()
    while not Path(sys.argv[1]).exists():
        time.sleep(0.005)
    built = nvrtc.build([provider], "sm_90", "kernel k", backend="numba_mlir")
    print("RESULT", nvrtc.stats["nvrtc_runs"], hashlib.sha256(built.ltoir).hexdigest(), built.scratch)
""")


def test_concurrent_cold_builds_run_nvrtc_once(tmp_path, fake_cccl):
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "xdg"), "PYTHONPATH": str(ROOT / "src"),
           "CUDA_COOP_CCCL_ROOT": str(fake_cccl)}
    env.pop("CUDA_COOP_DISABLE_CACHE", None)
    env.pop("CUDA_COOP_SOURCE_DUMP_DIR", None)
    go = tmp_path / "go"
    child = _CHILD.replace("%s", uuid.uuid4().hex)
    procs = [subprocess.Popen([sys.executable, "-c", child, str(go), str(tmp_path / f"ready{i}")], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for i in range(8)]
    try:
        deadline = time.monotonic() + 240
        while not all((tmp_path / f"ready{i}").exists() for i in range(8)):
            assert time.monotonic() < deadline and all(p.poll() is None for p in procs), \
                [p.communicate()[1] for p in procs if p.poll() is not None]
            time.sleep(0.02)
        go.touch()  # all eight start their build at once
        outputs = [p.communicate(timeout=240) for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
    results = []
    for proc, (out, err) in zip(procs, outputs):
        assert proc.returncode == 0, err
        runs, digest, scratch = out.split("RESULT ", 1)[1].strip().split(" ", 2)
        results.append((int(runs), digest, scratch))
    assert sum(r[0] for r in results) == 1
    assert len({r[1] for r in results}) == 1 and len({r[2] for r in results}) == 1
    assert list((tmp_path / "xdg" / "cuda-coop").glob("*.bin"))


def test_tree_digest_reuses_known_file_digests_only_for_unchanged_files(tmp_path):
    """The per-file manifest skips reading unchanged headers, and any write (even one that keeps the size and
    puts the mtime back) changes the ctime, so the file is read again."""
    import time as _time

    from cuda.coop._cub.toolchain import tree_digest

    header = tmp_path / "cub" / "a.cuh"
    header.parent.mkdir()
    header.write_text("int a = 1;\n")
    known: dict = {}
    first = tree_digest(tmp_path, known=known)
    assert set(known) == {"cub/a.cuh"}
    assert tree_digest(tmp_path, known=dict(known)) == first
    forged = {"cub/a.cuh": [known["cub/a.cuh"][0], "0" * 64]}  # same signature: the stored digest is trusted
    assert tree_digest(tmp_path, known=forged) != first
    st = header.stat()
    _time.sleep(0.01)
    header.write_text("int a = 2;\n")  # same size
    os.utime(header, ns=(st.st_atime_ns, st.st_mtime_ns))  # same mtime
    assert tree_digest(tmp_path, known=dict(known)) != first
