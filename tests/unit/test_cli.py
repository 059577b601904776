"""``python -m cuda.coop``: explain (text and SVG) against NumPy oracles, cache info/clear, doctor."""
from __future__ import annotations

import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import numpy as np
import pytest

from cuda.coop._cli import doctor, main
from cuda.coop._cub import cache, cache_inventory
from cuda.coop._semantics import layouts

SRC = Path(__file__).resolve().parents[2] / "src"
ROW = re.compile(r"^(member \d+|warp \d+ lane \d+)\s+(.*)$")


def explain(capsys, *argv: str) -> tuple[str, list[tuple[str, list[list[str]]]]]:
    """Run ``explain`` in-process; return its title and panels as (caption, rows of cell labels)."""
    assert main(["explain", *argv]) == 0
    text = capsys.readouterr().out
    blocks = text.strip("\n").split("\n\n")
    panels = []
    for block in blocks[1:]:
        lines = block.splitlines()
        rows = [ROW.match(line) for line in lines[2:]]
        if lines[2:] and all(rows):
            panels.append((re.sub(r"^\d+\. ", "", lines[0]), [m.group(2).split() for m in rows]))
    return blocks[0], panels


def numbers(rows: list[list[str]]) -> np.ndarray:
    """Cell labels as integers, -1 for an unspecified slot."""
    return np.array([[-1 if cell == "-" else int(cell) for cell in row] for row in rows])


def blocked(t: int, k: int) -> np.ndarray:
    return np.arange(t * k).reshape(t, k)


def striped(t: int, k: int) -> np.ndarray:
    return np.arange(t * k).reshape(k, t).T


def warp_striped(t: int, k: int, w: int) -> np.ndarray:
    return np.arange(t * k).reshape(t // w, k, w).transpose(0, 2, 1).reshape(t, k)


def from_layouts(arrangement: str, t: int, k: int, w: int) -> np.ndarray:
    return np.array([[layouts.position(arrangement, r, s, t, k, warp_size=w) for s in range(k)] for r in range(t)])


# ---------------------------------------------------------------- explain: load and store

# SPEC 8.1: memory access order, then the payload order in registers.
LOAD = {
    "direct": [blocked], "striped": [striped], "vectorize": [blocked],
    "transpose": [striped, blocked], "warp_transpose": [warp_striped, blocked],
    "warp_transpose_timesliced": [warp_striped, blocked],
}


def _oracle(function, t: int, k: int, w: int) -> np.ndarray:
    return function(t, k, w) if function is warp_striped else function(t, k)


@pytest.mark.parametrize("algorithm", sorted(LOAD))
@pytest.mark.parametrize("threads, items, warp", [(8, 4, 4), (8, 3, 2), (4, 1, 4)])
def test_explain_load_matches_the_oracle_and_the_layouts(capsys, algorithm, threads, items, warp):
    title, panels = explain(capsys, "load", "--algorithm", algorithm, "--threads", str(threads), "--items",
                            str(items), "--warp-size", str(warp))
    assert f'algorithm="{algorithm}"' in title
    steps = LOAD[algorithm]
    assert len(panels) == len(steps)
    movement = layouts.load_store_movement(algorithm)
    arrangements = [movement.memory, movement.registers][-len(steps):] if len(steps) == 2 else [movement.registers]
    for (caption, rows), step, arrangement in zip(panels, steps, arrangements, strict=True):
        got = numbers(rows)
        np.testing.assert_array_equal(got, _oracle(step, threads, items, warp))
        np.testing.assert_array_equal(got, from_layouts(arrangement, threads, items, warp))
        assert arrangement in caption


@pytest.mark.parametrize("algorithm", sorted(LOAD))
def test_explain_store_runs_the_steps_backwards(capsys, algorithm):
    _, panels = explain(capsys, "store", "--algorithm", algorithm)
    steps = list(reversed(LOAD[algorithm]))
    assert [numbers(rows).tolist() for _, rows in panels] == [_oracle(s, 8, 4, 4).tolist() for s in steps]
    assert panels[0][0].startswith("registers before the store")


@pytest.mark.parametrize("algorithm, final", [("direct", blocked), ("striped", striped), ("transpose", blocked)])
def test_explain_load_on_warp_groups_gives_each_group_its_own_tile(capsys, algorithm, final):
    _, panels = explain(capsys, "load", "--group", "warp", "--algorithm", algorithm, "--threads", "8", "--items",
                        "3", "--warp-size", "4")
    rows = panels[-1][1]
    expected = np.concatenate([final(4, 3), final(4, 3) + 12])  # group 1's tile starts at 4 * 3
    np.testing.assert_array_equal(numbers(rows), expected)


# ---------------------------------------------------------------- explain: exchange, shuffle

@pytest.mark.parametrize("mode, before, after", [
    ("striped_to_blocked", striped, blocked), ("blocked_to_striped", blocked, striped),
    ("warp_striped_to_blocked", warp_striped, blocked), ("blocked_to_warp_striped", blocked, warp_striped),
])
def test_explain_exchange(capsys, mode, before, after):
    _, panels = explain(capsys, "exchange", "--mode", mode, "--threads", "8", "--items", "2", "--warp-size", "4")
    np.testing.assert_array_equal(numbers(panels[0][1]), _oracle(before, 8, 2, 4))
    np.testing.assert_array_equal(numbers(panels[1][1]), _oracle(after, 8, 2, 4))


def test_explain_scatter_to_striped_with_reversed_ranks(capsys):
    _, panels = explain(capsys, "exchange", "--mode", "scatter_to_striped", "--threads", "4", "--items", "2")
    ranks = numbers(panels[1][1])
    np.testing.assert_array_equal(ranks, 7 - blocked(4, 2))
    # Oracle: the item at blocked position p goes to striped position 7 - p.
    by_position = np.empty(8, int)
    by_position[ranks.ravel()] = blocked(4, 2).ravel()
    np.testing.assert_array_equal(numbers(panels[2][1]), by_position[striped(4, 2)])


def test_explain_flagged_scatter_leaves_unspecified_holes(capsys):
    _, panels = explain(capsys, "exchange", "--mode", "scatter_to_striped_flagged", "--threads", "2", "--items",
                        "2", "--ranks", "0,1,2,3", "--flags", "1,0,1,1")
    assert numbers(panels[-1][1]).tolist() == [[0, 2], [-1, 3]]  # position 1 (member 1, slot 0) got nothing


def test_explain_shuffle(capsys):
    _, panels = explain(capsys, "shuffle", "--mode", "down", "--threads", "4", "--items", "2")
    expected = blocked(4, 2) + 1
    expected[-1, -1] = -1  # nothing wraps
    np.testing.assert_array_equal(numbers(panels[1][1]), expected)
    _, panels = explain(capsys, "shuffle", "--mode", "rotate", "--distance", "3", "--threads", "4")
    assert numbers(panels[1][1]).ravel().tolist() == [3, 0, 1, 2]


# ---------------------------------------------------------------- explain: compute

def test_explain_inclusive_scan_on_warp_groups(capsys):
    _, panels = explain(capsys, "inclusive_sum", "--group", "warp", "--threads", "8", "--warp-size", "4")
    cells = [row[0] for row in panels[1][1]]
    assert cells == [f"x[0:{n}]" for n in range(1, 5)] + [f"x[4:{n}]" for n in range(5, 9)]


def test_explain_exclusive_scan_of_a_block(capsys):
    _, panels = explain(capsys, "exclusive_scan", "--threads", "2", "--items", "2")
    assert panels[1][1] == [["initial_value", "x[0:1]"], ["x[0:2]", "x[0:3]"]]


def test_explain_reduce_without_broadcast(capsys):
    _, panels = explain(capsys, "reduce", "--threads", "4", "--items", "2", "--no-broadcast")
    assert [row[0] for row in panels[1][1]] == ["x[0:8]", "-", "-", "-"]


@pytest.mark.parametrize("layout", ["striped", "blocked"])
def test_explain_reduce_batched(capsys, layout):
    _, panels = explain(capsys, "reduce_batched", "--warp-size", "4", "--batches", "10", "--output-layout", layout)
    got = np.array([[-1 if c == "-" else int(c[1:]) for c in row] for row in panels[1][1]])
    padded = np.arange(12)
    expected = padded.reshape(3, 4).T if layout == "striped" else padded.reshape(4, 3)
    np.testing.assert_array_equal(got, np.where(expected < 10, expected, -1))


def test_explain_histogram_counts_striped_bins(capsys):
    samples = np.random.default_rng(4).integers(0, 10, 16)
    _, panels = explain(capsys, "histogram", "--threads", "4", "--items", "4", "--bins", "10",
                        "--bins-per-thread", "3", "--samples", ",".join(map(str, samples)))
    counts = np.bincount(samples, minlength=12)  # bins 10 and 11 do not exist: zero
    for t, row in enumerate(panels[1][1]):
        for i, cell in enumerate(row):
            b = t + i * 4
            assert cell == (f"b{b}={counts[b]}" if b < 10 else "0")


def test_explain_run_length_decode_window(capsys):
    lengths = [3, 1, 2, 2, 1, 0]
    _, panels = explain(capsys, "run_length_decode", "--threads", "3", "--runs-per-thread", "2",
                        "--decoded-items", "2", "--offset", "3", "--run-lengths", ",".join(map(str, lengths)))
    stream = np.repeat(np.arange(len(lengths)), lengths)
    positions = 3 + np.arange(6).reshape(3, 2)
    runs = [[f"r{stream[p]}" if p < len(stream) else "0" for p in row] for row in positions]
    assert panels[2][1] == runs
    assert numbers(panels[1][1]).tolist() == np.where(positions < len(stream), positions, 0).tolist()


@pytest.mark.parametrize("op, extra, arrangement", [
    ("merge_sort_keys", (), blocked), ("radix_sort_keys", (), blocked),
    ("radix_sort_keys", ("--blocked-to-striped",), striped), ("radix_sort_pairs", ("--descending",), blocked),
])
def test_explain_sorts(capsys, op, extra, arrangement):
    keys = np.random.default_rng(9).integers(0, 20, 8)
    _, panels = explain(capsys, op, "--threads", "4", "--items", "2", "--keys", ",".join(map(str, keys)), *extra)
    np.testing.assert_array_equal(numbers(panels[0][1]), keys.reshape(4, 2))
    ordered = np.sort(keys)[::-1] if "--descending" in extra else np.sort(keys)
    np.testing.assert_array_equal(numbers(panels[1][1]), ordered[arrangement(4, 2)])
    if op.endswith("_pairs"):  # values follow their keys: v<p> names the input position p
        positions = [[int(c[1:]) for c in row] for row in panels[2][1]]
        np.testing.assert_array_equal(keys[positions], numbers(panels[1][1]))


def test_explain_radix_rank(capsys):
    keys = [5, 1, 5, 0, 17, 3]  # digit = key & 15: 5, 1, 5, 0, 1, 3
    _, panels = explain(capsys, "radix_rank", "--threads", "3", "--items", "2", "--keys", ",".join(map(str, keys)))
    digits = np.array(keys) & 15
    expected = np.empty(6, int)
    expected[np.argsort(digits, kind="stable")] = np.arange(6)
    np.testing.assert_array_equal(numbers(panels[1][1]).ravel(), expected)


def test_explain_adjacent_difference(capsys):
    _, panels = explain(capsys, "adjacent_difference", "--threads", "2", "--items", "2", "--direction", "right")
    assert panels[1][1] == [["x0-x1", "x1-x2"], ["x2-x3", "x3"]]


# ---------------------------------------------------------------- explain: refusals and SVG

@pytest.mark.parametrize("argv, message", [
    (["load", "--group", "warp", "--algorithm", "warp_transpose"], "works on blocks only"),
    (["load", "--algorithm", "warp_transpose", "--threads", "6"], "multiple of --warp-size 4"),
    (["merge_sort_keys", "--threads", "6"], "power-of-two"),
    (["histogram", "--bins", "40"], "threads * bins_per_thread >= bins"),
    (["scan", "--group", "warp", "--items", "2"], "one scalar per lane"),
    (["load", "--threads", "100000"], "at most 1024 threads"),
    (["exchange", "--mode", "scatter_to_blocked", "--threads", "2", "--items", "1", "--ranks", "1,1"],
     "must not send two items to one position"),
])
def test_explain_refuses_what_the_operation_refuses(capsys, argv, message):
    with pytest.raises(SystemExit) as info:
        main(["explain", *argv])
    assert info.value.code == 2
    assert message in capsys.readouterr().err


def test_explain_writes_an_svg_of_the_same_picture(capsys, tmp_path):
    path = tmp_path / "transpose.svg"
    _, panels = explain(capsys, "load", "--algorithm", "transpose", "--threads", "4", "--items", "2", "--svg",
                        str(path))
    root = ElementTree.parse(path).getroot()
    ns = {"svg": "http://www.w3.org/2000/svg"}
    cells = root.findall("svg:rect", ns)[1:]  # the first rect is the background
    assert len(cells) == 2 * 4 * 2
    texts = [t.text for t in root.findall("svg:text", ns)]
    # Row-major cell labels of both panels appear in order, right after each member label.
    labels = [t for t in texts if t and t.lstrip("-").isdigit()]
    assert labels == [c for _, rows in panels for row in rows for c in row]
    # Colours follow the tile element: the same element has the same fill in both panels.
    fills = [rect.get("fill") for rect in cells]
    assert fills[:8] != fills[8:] and sorted(fills[:8]) == sorted(fills[8:])


# ---------------------------------------------------------------- cache info / clear

@pytest.fixture
def cache_home(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delenv("CUDA_COOP_DISABLE_CACHE", raising=False)
    monkeypatch.setattr(cache, "_writes_failed", False)
    cache.forget_memo()
    yield tmp_path / "cuda-coop"
    cache.forget_memo()


def _store(tag: str) -> str:
    key = cache.key("test", tag)
    cache.store(key, b"ltoir " + tag.encode() * 100, {"symbols": ["s"], "scratch": {}})
    return key


def test_cache_info_and_clear_touch_only_what_cuda_coop_wrote(cache_home, capsys, tmp_path):
    assert main(["cache", "info"]) == 0
    assert "not created yet" in capsys.readouterr().out
    keys = [_store("a"), _store("b")]
    cache.store_manifest("tree-" + "0" * 32, {"x": 1})
    (cache_home / f"{keys[1]}.bin").write_bytes(b"CUDACOOP1\ntruncated")  # a bad entry: counted, cleared
    (cache_home / "notes.txt").write_text("mine")  # not cuda.coop's: left alone
    outside = tmp_path / "outside.bin"
    outside.write_bytes(b"keep")
    (cache_home / ("f" * 64 + ".bin")).symlink_to(outside)  # an entry-like name that is a link: left alone

    assert main(["cache", "info"]) == 0
    out = capsys.readouterr().out
    assert f"location: {cache_home}" in out
    assert "entries: 2 (1 unreadable" in out
    assert "other files: 2 not written by cuda.coop" in out

    assert main(["cache", "clear"]) == 0
    assert "removed 3 files" in capsys.readouterr().out
    assert sorted(p.name for p in cache_home.iterdir()) == ["f" * 64 + ".bin", "notes.txt"]
    assert outside.read_bytes() == b"keep"
    assert cache.load(keys[0]) is None  # the in-process memo went too


def test_cache_info_and_clear_count_the_payload_files(cache_home, capsys):
    """The bitcode the CuTe route links lies in the cache's files/ folder: cuda.coop's own files, counted by
    ``cache info`` and removed by ``cache clear`` with their folder (another file there stays, and so does it)."""
    _store("a")
    bitcode = cache.payload_file(b"BC\xc0\xde" + bytes(200), ".bc")
    assert bitcode.parent == cache_home / "files"
    info = cache_inventory.inventory()
    assert (info.entries, info.other_files, info.foreign_files) == (1, 1, 0)
    assert info.total_bytes >= bitcode.stat().st_size
    assert main(["cache", "clear"]) == 0
    assert "removed 2 files" in capsys.readouterr().out
    assert not cache_home.exists()

    cache.payload_file(b"BC\xc0\xde" + bytes(100), ".bc")
    (cache_home / "files" / "notes.txt").write_text("mine")
    assert cache_inventory.inventory().foreign_files == 1
    assert main(["cache", "clear"]) == 0
    assert sorted(p.name for p in (cache_home / "files").iterdir()) == ["notes.txt"]


def test_cache_clear_removes_the_emptied_directory(cache_home, capsys):
    _store("a")
    assert main(["cache", "clear"]) == 0
    assert not cache_home.exists()
    assert main(["cache", "clear"]) == 0
    assert "removed 0 files" in capsys.readouterr().out


# ---------------------------------------------------------------- doctor

def test_doctor_check_lines_carry_their_fix():
    assert doctor.Check("x", "OK", "fine", "unused").line() == "OK    x: fine"
    assert doctor.Check("x", "FAIL", "broken", "do this").line() == "FAIL  x: broken -- fix: do this"


@pytest.mark.parametrize("version, specifier, ok", [
    ("0.6.0", ">=0.6,<0.7", True), ("0.6.12", "<0.7,>=0.6", True), ("0.7.0", ">=0.6,<0.7", False),
    ("0.5.9", ">=0.6,<0.7", False), ("1.2.1", ">=1.2,<2", True), ("2.0", ">=1.2,<2", False),
    ("0.6.0+local", ">=0.6,<0.7", True),
])
def test_doctor_version_ranges(version, specifier, ok):
    assert doctor._satisfies(version, specifier) is ok


def test_doctor_reads_the_supported_ranges_from_the_extras():
    assert doctor.declared_requirement("numba-cuda-mlir") == ">=0.6,<0.7"
    assert doctor.declared_requirement("cuda-cccl") == ">=1.2,<2"


def test_doctor_reads_the_ranges_from_pyproject_in_a_source_tree(monkeypatch):
    """On a machine that runs the sources from PYTHONPATH there is no installed metadata."""
    def not_installed(name):
        raise doctor.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(doctor.metadata, "requires", not_installed)
    assert doctor.declared_requirement("numba-cuda-mlir") == ">=0.6,<0.7"
    assert doctor.declared_requirement("numba") is None  # a prefix of another name is not a match


def test_doctor_fails_on_an_nvrtc_newer_than_nvjitlink(monkeypatch):
    from cuda.coop._cub import toolchain

    monkeypatch.setattr(toolchain, "_nvrtc_version", lambda: (13, 6))
    monkeypatch.setattr(toolchain, "_nvjitlink_version", lambda: (13, 5))
    checks, nvrtc = doctor.check_compilers()
    assert nvrtc == (13, 6)
    verdict = checks[-1]
    assert verdict.status == "FAIL" and "NVRTC 13.6 is newer than nvJitLink 13.5" in verdict.detail
    assert "cuda-toolkit[nvrtc,nvjitlink]" in verdict.fix


def test_doctor_fails_on_a_misspelt_flag(monkeypatch):
    monkeypatch.setenv("CUDA_COOP_DISABLE_CACHE", "maybe")
    check = doctor.check_configuration()
    assert check.status == "FAIL" and "CUDA_COOP_DISABLE_CACHE='maybe'" in check.detail


class FakeDriver:
    """cuda.bindings.driver on a machine with one H200 and a driver for ``version`` (e.g. 12040 = CUDA 12.4)."""

    class CUdevice_attribute:
        CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = "major"
        CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = "minor"

    def __init__(self, version: int):
        self.version = version

    def cuInit(self, flags):
        return (0,)

    def cuDriverGetVersion(self):
        return 0, self.version

    def cuDeviceGetCount(self):
        return 0, 1

    def cuDeviceGet(self, ordinal):
        return 0, ordinal

    def cuDeviceGetName(self, length, device):
        return 0, b"NVIDIA H200\0\0\0"

    def cuDeviceGetAttribute(self, attribute, device):
        return 0, {"major": 9, "minor": 0}[attribute]


@pytest.mark.parametrize("version, driver_status", [(13000, "OK"), (12040, "FAIL")])
def test_doctor_reports_the_gpu_and_a_driver_too_old_for_the_toolkit(monkeypatch, version, driver_status):
    bindings = pytest.importorskip("cuda.bindings")
    monkeypatch.setattr(bindings, "driver", FakeDriver(version), raising=False)
    checks = list(doctor.check_gpu((13, 5)))
    assert [c.name for c in checks] == ["driver", "GPU 0"]
    assert checks[0].status == driver_status
    if driver_status == "FAIL":
        assert "older than the CUDA 13 toolkit" in checks[0].detail and "numba-cuda-mlir-cu12" in checks[0].fix
    assert (checks[1].status, checks[1].detail) == ("OK", "NVIDIA H200, sm_90")


def test_doctor_exit_status_is_one_iff_a_check_fails(monkeypatch, capsys):
    monkeypatch.setattr(doctor, "run_checks", lambda **kw: [doctor.Check("a", "OK", ""),
                                                              doctor.Check("b", "WARN", "", "x")])
    assert doctor.main() == 0
    monkeypatch.setattr(doctor, "run_checks", lambda **kw: [doctor.Check("a", "FAIL", "", "x")])
    assert doctor.main() == 1


def test_doctor_on_this_machine(tmp_path):
    """The real report: no FAIL here (no GPU is a WARN), a sample build, exit status 0."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("CUDA_COOP_")}
    env["XDG_CACHE_HOME"] = str(tmp_path)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(SRC), env.get("PYTHONPATH")]))
    done = subprocess.run([sys.executable, "-m", "cuda.coop", "doctor"], capture_output=True, text=True,
                          timeout=600, env=env)
    lines = done.stdout.splitlines()
    checks = [line for line in lines if line and not line.startswith(tuple("0123456789"))]
    assert done.returncode == 0, done.stdout + done.stderr
    assert all(line.split()[0] in ("OK", "WARN") for line in checks), done.stdout
    assert all("-- fix: " in line for line in checks if line.startswith("WARN"))
    names = [line.split()[1].rstrip(":") for line in checks]
    for name in ("cuda-coop", "numba-cuda-mlir", "CCCL", "NVRTC", "nvJitLink", "NVRTC/nvJitLink", "cache", "sample"):
        assert name in names, name
    gpu = [line for line in checks if " GPU" in line[:12]]
    assert gpu, done.stdout
    if gpu[0].startswith("WARN"):
        assert "no GPU present: kernels can be built for sm_90 but not launched" in gpu[0]
    assert re.search(r"OK    sample build: .* for sm_90 in [\d.]+ s", done.stdout)
    assert len(list((tmp_path / "cuda-coop").glob("*.bin"))) == 1  # the sample build's provider


def test_a_bad_setting_or_path_is_a_message_not_a_traceback(capsys, monkeypatch, tmp_path):
    """The user's mistake in a setting or a path ends the command with its message and status 1."""
    monkeypatch.setenv("CUDA_COOP_DISABLE_CACHE", "maybe")
    assert main(["cache", "info"]) == 1
    assert capsys.readouterr().err.startswith("python -m cuda.coop cache: CUDA_COOP_DISABLE_CACHE='maybe' is not a "
                                              "boolean")
    monkeypatch.delenv("CUDA_COOP_DISABLE_CACHE")
    assert main(["explain", "load", "--svg", str(tmp_path / "missing" / "load.svg")]) == 1
    assert "python -m cuda.coop explain: [Errno 2] No such file or directory" in capsys.readouterr().err
