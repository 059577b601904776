"""Precompiled headers (PCH) made in the background and used by later builds of the same process.

NVRTC runs on a tiny header tree (CUDA_COOP_CCCL_ROOT), with the size threshold lowered so that it gets PCHs too.
What must hold: a PCH never changes what a build produces or reports, a damaged or rejected one means a plain
compile, CUDA_COOP_DISABLE_CACHE writes nothing, and the files go with their process.
"""
from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import textwrap
import threading
import time
import uuid
from pathlib import Path

import pytest

from cuda.coop import CoopBuildError
from cuda.coop._cub import cache, cache_inventory, nvrtc, program, toolchain
from cuda.coop._cub import pch as pch_store
from cuda.coop._cub.provider import Provider

ROOT = Path(__file__).resolve().parents[2]
ARCH = "sm_90"
# Heavy enough that the header block shows in NVRTC's time, small enough to compile in a blink.
_HEADER = "#pragma once\n#define CUDA_COOP_TEST_EXTRA 1\n" + "".join(
    f"template <int N> struct Fold{i} {{ static constexpr int value = N + Fold{i}<N - 1>::value; }};\n"
    f"template <> struct Fold{i}<0> {{ static constexpr int value = 0; }};\n" for i in range(40))


def _clear_toolchain() -> None:
    toolchain._cached.cache_clear()
    toolchain.headers_digest.cache_clear()
    toolchain.cuda_include_digest.cache_clear()


@pytest.fixture
def fake_cccl(tmp_path, monkeypatch):
    root = tmp_path / "cccl"
    (root / "cub").mkdir(parents=True)
    (root / "cub" / "version.cuh").write_text("#pragma once\n#define CUB_VERSION 300000\n")
    (root / "cub" / "extra.cuh").write_text(_HEADER)
    monkeypatch.setenv("CUDA_COOP_CCCL_ROOT", str(root))
    _clear_toolchain()
    yield root
    _clear_toolchain()


@pytest.fixture
def pch_home(tmp_path, monkeypatch, fake_cccl):
    """A private cache, PCHs for every block, and a process with no PCH yet."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("CUDA_COOP_DISABLE_CACHE", raising=False)
    monkeypatch.delenv("CUDA_COOP_SOURCE_DUMP_DIR", raising=False)
    monkeypatch.setattr(cache, "_writes_failed", False)
    monkeypatch.setattr(pch_store, "PCH_MIN_SECONDS", 0.0)
    pch_store.forget_pch()
    cache.forget_memo()
    yield tmp_path / "xdg" / "cuda-coop"
    pch_store.forget_pch()
    cache.forget_memo()


def _provider(value: int, scratch: str | None = None) -> Provider:
    """A new specialisation of one call: same headers, another constant (a new TU and key)."""
    body = (f"// {uuid.uuid4().hex}\n"
            f'extern "C" __device__ int @SYM@(int x) {{ return x * {value} + Fold7<{value % 50}>::value; }}')
    return Provider.make("tiny", ("cub/extra.cuh",), body, scratch)


def _ptx(ltoir: bytes) -> str:
    """What nvJitLink makes of the LTO-IR (the same lowering as the scratch-size query): the code that runs."""
    from cuda.bindings import nvjitlink

    handle = nvjitlink.create(3, [f"-arch={ARCH}", "-lto", "-ptx"])
    try:
        nvjitlink.add_data(handle, nvjitlink.InputType.LTOIR, ltoir, len(ltoir), "t")
        nvjitlink.complete(handle)
        out = bytearray(nvjitlink.get_linked_ptx_size(handle))
        nvjitlink.get_linked_ptx(handle, out)
    finally:
        nvjitlink.destroy(handle)
    return bytes(out).decode()


def _plain_ltoir(provider: Provider) -> bytes:
    """The same provider built with PCHs switched off (another cache key is not needed: nothing is stored)."""
    saved = pch_store._pch.off
    pch_store._pch.off = "test: plain reference"
    try:
        source = nvrtc.translation_unit([provider])
        return nvrtc._nvrtc_ltoir(source, ARCH, toolchain.toolchain(), "reference", None)
    finally:
        pch_store._pch.off = saved


def _pch_files(home: Path) -> list[Path]:
    return sorted(home.glob("pch-*/*.pch"))


def _ready_pch(home: Path) -> Path:
    """Build once (plain), let the background PCH finish, and return its file."""
    nvrtc.build([_provider(3)], ARCH, "kernel k", backend="numba_mlir")
    pch_store.wait_for_pch()
    files = _pch_files(home)
    assert len(files) == 1, files
    return files[0]


# ---------------------------------------------------------------- the translation unit NVRTC sees

def test_compile_text_splits_the_include_block_and_keeps_line_numbers():
    source = "#include <a.h>\n#include <b.h>\n// body\nint x;\n"
    text, block = nvrtc.compile_text(source)
    assert block == "#include <a.h>\n#include <b.h>\n"
    lines = text.split("\n")
    assert lines[:2] == ["#include <a.h>", "#include <b.h>"] and lines[2] == pch_store.PCH_STOP
    assert lines[3] == '#line 1 "cuda_coop.cu"' and "\n".join(lines[4:]) == source
    assert nvrtc.compile_text("int x;\n") == ("int x;\n", "")


def test_error_lines_point_into_the_generated_source(pch_home):
    provider = Provider.make("tiny", ("cub/extra.cuh",), 'extern "C" __device__ int @SYM@() {\n  return y;\n}', None)
    with pytest.raises(CoopBuildError) as info:
        nvrtc.build([provider], ARCH, "kernel k", backend="numba_mlir")
    source = nvrtc.translation_unit([provider])
    line = next(i for i, text in enumerate(source.split("\n"), 1) if "return y;" in text)
    assert f"cuda_coop.cu({line}): error" in str(info.value)


# ---------------------------------------------------------------- CCCL headers from memory

def test_header_sources_follow_include_lines_and_read_only_files_of_the_tree(tmp_path):
    root = tmp_path / "inc"
    (root / "a").mkdir(parents=True)
    (root / "a" / "x.h").write_text("#include <a/y.h>\n  #  include <missing.h>\n// #include <a/never.h>\n")
    (root / "a" / "y.h").write_text("#pragma once\n#include <a/x.h>\n#if 0\n#include <a/z.h>\n#endif\n")  # a cycle
    (root / "a" / "z.h").write_text("int z;\n")
    (root / "a" / "never.h").write_text("int never;\n")
    (root / "a" / "w.h").write_text("#include <a/fifo.h>\n#include <../outside.h>\n#include </etc/hostname>\n")
    os.mkfifo(root / "a" / "fifo.h")  # opening it for reading would block
    (tmp_path / "outside.h").write_text("not in the tree")
    got = nvrtc.header_sources("#include <a/x.h>\n#include <a/w.h>\n", root, None)
    assert set(got) == {"a/x.h", "a/y.h", "a/z.h", "a/w.h"}  # a disabled branch is followed too: harmless
    assert got["a/z.h"] == b"int z;\n" and got["a/y.h"] == (root / "a" / "y.h").read_bytes()


def test_header_sources_are_kept_per_tree_generation(tmp_path):
    root = tmp_path / "inc"
    root.mkdir()
    (root / "h.h").write_text("int v1;\n")
    assert nvrtc.header_sources("#include <h.h>\n", root, "g1") == {"h.h": b"int v1;\n"}
    (root / "h.h").write_text("int v2;\n")
    assert nvrtc.header_sources("#include <h.h>\n", root, "g1") == {"h.h": b"int v1;\n"}  # same digest: kept
    assert nvrtc.header_sources("#include <h.h>\n", root, "g2") == {"h.h": b"int v2;\n"}  # a new tree: reread
    assert nvrtc.header_sources("#include <h.h>\n", root, None) == {"h.h": b"int v2;\n"}


def test_an_edited_header_reaches_nvrtc_after_a_new_resolution(pch_home, fake_cccl):
    provider = _provider(3)
    nvrtc.build([provider], ARCH, "kernel k", backend="numba_mlir")
    (fake_cccl / "cub" / "extra.cuh").write_text(_HEADER + "#error edited header\n")
    _clear_toolchain()  # a new process would digest the tree again
    cache.forget_memo()
    with pytest.raises(CoopBuildError, match="edited header"):
        nvrtc.build([_provider(4)], ARCH, "kernel k", backend="numba_mlir")


# ---------------------------------------------------------------- made in the background, used by the next build

def test_next_specialisation_uses_the_pch_and_builds_the_same_code(pch_home):
    pch = _ready_pch(pch_home)
    assert pch.parent.name.startswith(f"pch-{os.getpid()}-") and pch.stat().st_mode & 0o777 == 0o600
    assert (pch.parent.stat().st_mode & 0o777) == 0o700
    before = dict(nvrtc.stats)
    for value in (5, 11, 42):
        provider = _provider(value, scratch="int[3]")
        built = nvrtc.build([provider], ARCH, "kernel k", backend="numba_mlir")
        assert built.scratch == {provider.symbol: (12, 4)}
        assert _ptx(built.ltoir) == _ptx(_plain_ltoir(provider))
    assert nvrtc.stats["pch_used"] == before["pch_used"] + 3
    assert nvrtc.stats["pch_rejected"] == before["pch_rejected"]


def test_first_build_never_waits_for_a_pch(pch_home, monkeypatch):
    started = []
    monkeypatch.setattr(pch_store, "_create_pch", lambda *args: started.append(args))
    built = nvrtc.build([_provider(3)], ARCH, "kernel k", backend="numba_mlir")
    assert built.ltoir and not built.from_cache and len(started) == 1


def _other_block(fake_cccl: Path, name: str, value: int) -> Provider:
    """A provider whose TU includes one more header than ``_provider``'s: another include block."""
    (fake_cccl / "cub" / f"{name}.cuh").write_text(f"#pragma once\nstruct {name.title()} {{ int a[{value}]; }};\n")
    return Provider.make("tiny", ("cub/extra.cuh", f"cub/{name}.cuh"),
                         f'extern "C" __device__ int @SYM@() {{ return sizeof({name.title()}) + {value}; }}', None)


def test_later_blocks_get_a_pch_when_built_a_second_time(pch_home, fake_cccl):
    _ready_pch(pch_home)  # the first block of the process: at once
    used = nvrtc.stats["pch_used"]
    nvrtc.build([_other_block(fake_cccl, "more", 1)], ARCH, "kernel k", backend="numba_mlir")
    pch_store.wait_for_pch()
    assert len(_pch_files(pch_home)) == 1  # built once: maybe the only time (a test suite), no PCH
    nvrtc.build([_other_block(fake_cccl, "more", 2)], ARCH, "kernel k", backend="numba_mlir")
    pch_store.wait_for_pch()
    assert len(_pch_files(pch_home)) == 2 and nvrtc.stats["pch_used"] == used
    provider = _other_block(fake_cccl, "more", 3)
    built = nvrtc.build([provider], ARCH, "kernel k", backend="numba_mlir")
    assert nvrtc.stats["pch_used"] == used + 1
    assert _ptx(built.ltoir) == _ptx(_plain_ltoir(provider))


def test_at_most_pch_max_files_are_kept(pch_home, fake_cccl, monkeypatch):
    monkeypatch.setattr(pch_store, "PCH_MAX_FILES", 2)
    _ready_pch(pch_home)
    for i in range(3):
        for value in (1, 2):
            nvrtc.build([_other_block(fake_cccl, f"h{i}", value)], ARCH, "kernel k", backend="numba_mlir")
            pch_store.wait_for_pch()
        assert len(_pch_files(pch_home)) == 2
    used = nvrtc.stats["pch_used"]
    nvrtc.build([_other_block(fake_cccl, "h2", 3)], ARCH, "kernel k", backend="numba_mlir")  # the newest is kept
    assert nvrtc.stats["pch_used"] == used + 1


def test_compile_errors_are_reported_as_without_a_pch(pch_home):
    _ready_pch(pch_home)
    bad = Provider.make("tiny", ("cub/extra.cuh",),
                        'extern "C" __device__ int @SYM@() { static_assert(sizeof(int) == 3, "int is not 3 bytes");'
                        " return 0; }", None)
    with pytest.raises(CoopBuildError) as info:
        nvrtc.build([bad], ARCH, "kernel k", backend="numba_mlir")
    assert "int is not 3 bytes" in str(info.value).splitlines()[0]
    assert "precompiled" not in str(info.value)
    assert len(_pch_files(pch_home)) == 1  # a real error does not cost the PCH
    used = nvrtc.stats["pch_used"]
    nvrtc.build([_provider(8)], ARCH, "kernel k", backend="numba_mlir")
    assert nvrtc.stats["pch_used"] == used + 1


# ---------------------------------------------------------------- damaged, foreign or missing PCH files

@pytest.mark.parametrize("damage", ["truncate", "rewrite", "remove"])
def test_a_changed_pch_file_is_never_given_to_nvrtc(pch_home, damage):
    pch = _ready_pch(pch_home)
    data = pch.read_bytes()
    if damage == "truncate":  # NVRTC would die of SIGBUS reading past the end of a truncated PCH
        pch.write_bytes(data[: len(data) // 2])
    elif damage == "rewrite":
        pch.write_bytes(bytes(b ^ 0xFF for b in data[:4096]) + data[4096:])
    else:
        pch.unlink()
    before = dict(nvrtc.stats)
    provider = _provider(6)
    built = nvrtc.build([provider], ARCH, "kernel k", backend="numba_mlir")
    assert _ptx(built.ltoir) == _ptx(_plain_ltoir(provider))
    assert nvrtc.stats["pch_used"] == before["pch_used"] and nvrtc.stats["pch_rejected"] == before["pch_rejected"]


def _swap_in(pch: Path, data: bytes) -> None:
    """Replace the PCH as something cuda.coop cannot notice would (its recorded signature follows the file)."""
    pch.write_bytes(data)
    for entry in pch_store._pch.entries.values():
        if entry.path == pch:
            entry.signature = pch_store._signature(pch)


@pytest.mark.parametrize("kind", ["other_block", "garbage", "cut"])
def test_a_pch_nvrtc_refuses_means_a_plain_compile(pch_home, fake_cccl, kind):
    pch = _ready_pch(pch_home)
    if kind == "other_block":  # a valid PCH of other headers: NVRTC warns and compiles without it
        for value in (1, 2):
            nvrtc.build([_other_block(fake_cccl, "more", value)], ARCH, "kernel k", backend="numba_mlir")
            pch_store.wait_for_pch()
        other = next(p for p in _pch_files(pch_home) if p != pch)
        _swap_in(pch, other.read_bytes())
    elif kind == "garbage":  # NVRTC: not a PCH of this compiler, warning and a plain compile
        _swap_in(pch, hashlib.sha256(b"x").digest() * 4096)
    else:  # NVRTC: "invalid precompiled header file", a failed compile: retried without the PCH
        _swap_in(pch, pch.read_bytes()[:100])
    before = dict(nvrtc.stats)
    provider = _provider(7)
    built = nvrtc.build([provider], ARCH, "kernel k", backend="numba_mlir")
    assert _ptx(built.ltoir) == _ptx(_plain_ltoir(provider))
    assert nvrtc.stats["pch_rejected"] == before["pch_rejected"] + 1
    assert nvrtc.stats["pch_used"] == before["pch_used"]
    assert not pch.exists()  # dropped: never tried again


def test_an_nvrtc_without_pch_support_builds_plainly(pch_home, monkeypatch):
    from cuda.bindings import nvrtc as bindings

    monkeypatch.delattr(bindings, "nvrtcGetPCHCreateStatus")  # e.g. bindings older than the PCH API
    nvrtc.build([_provider(3)], ARCH, "kernel k", backend="numba_mlir")
    pch_store.wait_for_pch()
    assert _pch_files(pch_home) == [] and pch_store._pch.off
    used = nvrtc.stats["pch_used"]
    provider = _provider(4)
    built = nvrtc.build([provider], ARCH, "kernel k", backend="numba_mlir")
    assert nvrtc.stats["pch_used"] == used and _ptx(built.ltoir) == _ptx(_plain_ltoir(provider))


def test_old_nvrtc_makes_no_pch(pch_home, monkeypatch):
    monkeypatch.setattr(pch_store, "_PCH_MIN_NVRTC", (99, 0))
    nvrtc.build([_provider(3)], ARCH, "kernel k", backend="numba_mlir")
    pch_store.wait_for_pch()
    assert _pch_files(pch_home) == []


# ---------------------------------------------------------------- the cache switch, exit and cleanup

def test_disabled_cache_writes_no_pch(pch_home, monkeypatch):
    monkeypatch.setenv("CUDA_COOP_DISABLE_CACHE", "1")
    created = nvrtc.stats["pch_created"]
    for value in (3, 4, 5):
        nvrtc.build([_provider(value)], ARCH, "kernel k", backend="numba_mlir")
        pch_store.wait_for_pch()
    assert nvrtc.stats["pch_created"] == created
    assert not pch_home.exists()


_CHILD = textwrap.dedent("""
    import os, sys
    from cuda.coop._cub import nvrtc
    from cuda.coop._cub import pch as pch_store
    from cuda.coop._cub.provider import Provider

    pch_store.PCH_MIN_SECONDS = 0.0
    def build(value):
        body = 'extern "C" __device__ int @SYM@(int x) { return x * %d; }' % value
        return nvrtc.build([Provider.make("tiny", ("cub/extra.cuh",), body, None)], "sm_90", "kernel k",
                           backend="numba_mlir")
    build(1)
    pch_store.wait_for_pch()
    print("DIR", pch_store._pch.directory, flush=True)
    if sys.argv[1] == "fork":
        pid = os.fork()
        if pid == 0:  # the child starts without the parent's PCHs, makes its own, and leaves the parent's alone
            build(2)
            pch_store.wait_for_pch()
            ok = pch_store._pch.directory is not None and str(os.getpid()) in pch_store._pch.directory.name
            print("CHILD", ok, nvrtc.stats["pch_used"], flush=True)
            sys.exit(0)  # runs the exit handlers: only the child's own directory goes
        os.waitpid(pid, 0)
        print("PARENT_DIR_KEPT", pch_store._pch.directory.is_dir(), flush=True)
    build(3)
    print("USED", nvrtc.stats["pch_used"], flush=True)
""")


def _child(tmp_path, fake_cccl, mode):
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "xdg"), "PYTHONPATH": str(ROOT / "src"),
           "CUDA_COOP_CCCL_ROOT": str(fake_cccl)}
    env.pop("CUDA_COOP_DISABLE_CACHE", None)
    out = subprocess.run([sys.executable, "-c", _CHILD, mode], env=env, capture_output=True, text=True, timeout=240,
                         check=False)
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_the_pch_directory_goes_with_its_process(tmp_path, fake_cccl):
    out = _child(tmp_path, fake_cccl, "plain")
    directory = Path(out.split("DIR ", 1)[1].split()[0])
    assert directory.parent == tmp_path / "xdg" / "cuda-coop"
    assert "USED 1" in out
    assert not directory.exists()


def test_a_forked_child_starts_afresh_and_keeps_the_parents_pch(tmp_path, fake_cccl):
    out = _child(tmp_path, fake_cccl, "fork")
    assert "CHILD True 0" in out  # no PCH of its own yet: a plain compile, no deadlock on the parent's locks
    assert "PARENT_DIR_KEPT True" in out
    assert "USED 1" in out
    assert list((tmp_path / "xdg" / "cuda-coop").glob("pch-*")) == []


def test_pch_directories_of_dead_processes_are_removed(pch_home):
    dead = _dead_pid()
    pch_home.mkdir(parents=True, mode=0o700)
    stale = pch_home / f"pch-{dead}-0123abcd"
    stale.mkdir(mode=0o700)
    (stale / ("a" * 32 + ".pch")).write_bytes(b"old")
    alive = pch_home / f"pch-{os.getppid()}-0123abcd"  # a running process: left alone
    alive.mkdir(mode=0o700)
    (alive / ("b" * 32 + ".pch")).write_bytes(b"in use")
    mine = cache.pch_directory()
    assert mine is not None and mine.name.startswith(f"pch-{os.getpid()}-")
    assert not stale.exists() and (alive / ("b" * 32 + ".pch")).exists()
    cache.remove_pch_directory(mine)
    cache.remove_pch_directory(alive)


def _dead_pid() -> int:
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True,
                          check=True)
    return int(done.stdout)


def test_cache_info_reports_and_clear_removes_pch_files(pch_home, capsys):
    from cuda.coop._cli import main

    pch = _ready_pch(pch_home)
    stale = pch_home / f"pch-{_dead_pid()}-0123abcd"
    stale.mkdir(mode=0o700)
    (stale / ("c" * 32 + ".pch")).write_bytes(b"x" * 1000)
    (stale / "notes.txt").write_text("not ours")  # kept, and so is its directory
    assert main(["cache", "info"]) == 0
    out = capsys.readouterr().out
    assert "precompiled headers: 2 (" in out and "1 of running processes" in out and "1 left by processes" in out
    assert "other files" not in out  # PCH directories are cuda.coop's own
    info = cache_inventory.inventory()
    assert info.pch_bytes == pch.stat().st_size + 1000 and info.total_bytes >= info.pch_bytes

    assert main(["cache", "clear"]) == 0
    assert "removed" in capsys.readouterr().out
    assert not pch.exists() and not pch.parent.exists()
    assert {p.name for p in pch_home.rglob("*")} == {stale.name, "notes.txt"}
    provider = _provider(9)  # this process's PCH went with it: a plain compile, then a new PCH in a new directory
    built = nvrtc.build([provider], ARCH, "kernel k", backend="numba_mlir")
    assert _ptx(built.ltoir) == _ptx(_plain_ltoir(provider))
    pch_store.wait_for_pch()
    again = _pch_files(pch_home)
    assert len(again) == 1 and again[0].parent != pch.parent


# ---------------------------------------------------------------- the first build of an empty cache

def test_first_build_of_an_empty_cache_compiles_beside_the_header_digest(pch_home, monkeypatch):
    digest_started = threading.Event()
    seen = {}
    real_digest, real_compile = toolchain.tree_digest, program.run_program

    def digest(*args, **kwargs):
        seen["digest_thread"] = threading.current_thread().name
        digest_started.set()
        return real_digest(*args, **kwargs)

    def compile_(*args, **kwargs):
        seen.setdefault("digest_began_before_nvrtc_returned", digest_started.wait(30))
        return real_compile(*args, **kwargs)

    monkeypatch.setattr(toolchain, "tree_digest", digest)
    monkeypatch.setattr(program, "run_program", compile_)
    runs = nvrtc.stats["nvrtc_runs"]
    provider = _provider(3, scratch="int[5]")
    built = nvrtc.build([provider], ARCH, "kernel k", backend="numba_mlir")
    assert seen == {"digest_thread": "cuda-coop-toolchain", "digest_began_before_nvrtc_returned": True}
    assert not built.from_cache and built.scratch == {provider.symbol: (20, 4)}
    assert nvrtc.stats["nvrtc_runs"] == runs + 1  # the early compile is the build's only one
    cache.forget_memo()
    again = nvrtc.build([provider], ARCH, "kernel k", backend="numba_mlir")  # stored under the key the digest gave
    assert again.from_cache and again.ltoir == built.ltoir


def test_first_build_errors_are_the_same(pch_home, fake_cccl):
    bad = Provider.make("tiny", ("cub/extra.cuh",), 'extern "C" __device__ int @SYM@() { return nope; }', None)
    with pytest.raises(CoopBuildError) as info:
        nvrtc.build([bad], ARCH, "kernel k", backend="numba_mlir")  # an empty cache: the early compile fails
    first = str(info.value)
    _clear_toolchain()
    with pytest.raises(CoopBuildError) as again:
        nvrtc.build([bad], ARCH, "kernel k", backend="numba_mlir")  # the digest known: the ordinary path
    assert first.splitlines()[0] == again.value.args[0].splitlines()[0]
    assert 'identifier "nope" is undefined' in first


_CONCURRENT = textwrap.dedent("""
    import hashlib, sys, time
    from pathlib import Path
    from cuda.coop._cub import nvrtc
    from cuda.coop._cub import pch as pch_store
    from cuda.coop._cub.provider import Provider

    body = 'extern "C" __device__ int @SYM@(int x) { return x + CUDA_COOP_TEST_EXTRA + %s; }'
    provider = Provider.make("tiny", ("cub/extra.cuh",), body, "int")
    Path(sys.argv[2]).touch()
    while not Path(sys.argv[1]).exists():
        time.sleep(0.005)
    built = nvrtc.build([provider], "sm_90", "kernel k", backend="numba_mlir")  # the header digest is not known yet
    print("RESULT", nvrtc.stats["nvrtc_runs"], hashlib.sha256(built.ltoir).hexdigest(), built.scratch)
""")


def test_concurrent_first_builds_of_an_empty_cache_run_nvrtc_once(tmp_path, fake_cccl):
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "xdg"), "PYTHONPATH": str(ROOT / "src"),
           "CUDA_COOP_CCCL_ROOT": str(fake_cccl)}
    env.pop("CUDA_COOP_DISABLE_CACHE", None)
    go = tmp_path / "go"
    child = _CONCURRENT % (uuid.uuid4().int % 1000003)
    count = 6
    procs = [subprocess.Popen([sys.executable, "-c", child, str(go), str(tmp_path / f"ready{i}")], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for i in range(count)]
    try:
        deadline = time.monotonic() + 240
        while not all((tmp_path / f"ready{i}").exists() for i in range(count)):
            assert time.monotonic() < deadline and all(p.poll() is None for p in procs)
            time.sleep(0.02)
        go.touch()
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
