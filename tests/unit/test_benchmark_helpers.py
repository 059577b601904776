"""Helpers of the benchmark suite (issue 12): the NumPy oracles of the 8-byte sums and scans, the ceiling each row
is compared with, the launch-overhead goal and table, and the README example the "first result" row runs.

No GPU: the oracles run on small random arrays against plain-Python modular arithmetic, the report helpers on
synthetic records.
"""
from __future__ import annotations

import sys
import types
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))  # the benchmarks package lives beside src/, not inside it

from benchmarks import first_result, launch, report  # noqa: E402


@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_integer_oracles_wrap_like_the_device(dtype):
    from benchmarks.collectives import tile_exclusive_sums, tile_sums

    rng = np.random.default_rng(12)
    info = np.iinfo(dtype)
    src = rng.integers(info.min, info.max, size=6 * 8, dtype=dtype, endpoint=True)
    bits = info.bits
    sums = tile_sums(src, 8)
    scans = tile_exclusive_sums(src, 8)
    assert sums.dtype == src.dtype and scans.dtype == src.dtype
    for t in range(6):
        running = 0
        for i in range(8):
            got = int(scans[t * 8 + i]) % (1 << bits)
            assert got == running, (t, i)
            running = (running + int(src[t * 8 + i])) % (1 << bits)
        assert int(sums[t]) % (1 << bits) == running


def test_float_oracles_are_exact_on_integer_valued_inputs():
    from benchmarks.collectives import tile_exclusive_sums, tile_sums

    rng = np.random.default_rng(13)
    src = rng.integers(-8191, 8192, size=4 * 16).astype(np.float64)
    sums = tile_sums(src, 16)
    scans = tile_exclusive_sums(src, 16)
    ints = src.astype(np.int64).reshape(4, 16)
    assert np.array_equal(sums, ints.sum(axis=1).astype(np.float64))
    assert np.array_equal(scans, (np.cumsum(ints, axis=1) - ints).reshape(-1).astype(np.float64))


def _row(kernel, impl, gbps, operation="copy", **extra):
    return {"type": "throughput", "kernel": kernel, "impl": impl, "gbps": gbps, "operation": operation,
            "verified": True, "family": "collectives", "group": "block", "items_per_thread": 4, "dtype": "int32",
            "algorithm": "a", "io": "", **extra}


def test_reductions_are_measured_against_the_read_only_ceiling():
    records = [_row("memcpy", "copy", 4000.0), _row("read_sum", "read", 4500.0, "read"),
               _row("read_slow", "read", 4400.0, "read"), _row("read_bad", "read", 9000.0, "read", verified=False),
               _row("sum_k", "coop", 4200.0, "sum_partials"), _row("scan_k", "coop", 3900.0, "exclusive_sum")]
    assert report.read_ceiling(records) == 4500.0  # an unverified row is no ceiling
    assert report.ceiling_for("sum_partials", records) == (4500.0, "read-only ceiling")
    assert report.ceiling_for("reduce_batched", records) == (4500.0, "read-only ceiling")
    assert report.ceiling_for("exclusive_sum", records) == (4000.0, "copy ceiling")
    lines = "\n".join(report.analysis(records))
    assert "MISSED: best cuda.coop block sum_partials" in lines and "0.933x the read-only ceiling 4500" in lines
    assert "MET: best cuda.coop block exclusive_sum" in lines and "0.975x the copy ceiling 4000" in lines
    assert report._vs_ceiling(records[4], records) == "0.933 r"
    assert report._vs_ceiling(records[5], records) == "0.975"
    # Without a read-only row the reductions fall back to the copy ceiling.
    plain = [r for r in records if r["impl"] != "read"]
    assert report.ceiling_for("sum_partials", plain) == (4000.0, "copy ceiling")


def _launch(process, kernel, args, wall, **extra):
    return {"type": "launch", "process": process, "kernel": kernel, "args": args, "wall_us": wall, **extra}


def test_launch_goal_compares_each_coop_kernel_with_the_plain_kernel_of_its_process():
    records = [_launch("coop", "plain", "numba", 40.0, device_us=3.0), _launch("plain", "plain", "numba", 37.5),
               _launch("coop", "coop_1", "numba", 41.9, device_us=3.5), _launch("coop", "coop_4", "numba", 42.1),
               _launch("coop", "coop_8", "numba", 55.0), _launch("coop", "coop_1", "cupy", 90.0)]
    lines = launch.goal_lines(records)
    assert lines[0].startswith("- Launch: plain numba-cuda-mlir kernel 40.0 us") and "+2.5 us" in lines[0]
    assert lines[1].startswith("- MET: cuda.coop kernel with 1 call(s) 41.9 us") and "+1.9 us" in lines[1]
    assert lines[2].startswith("- MISSED: cuda.coop kernel with 4 call(s)") and "+2.1 us" in lines[2]
    assert lines[3].startswith("- MISSED: cuda.coop kernel with 8 call(s)") and "+15.0 us" in lines[3]
    assert len(lines) == 4


def test_launch_table_has_a_cell_per_argument_kind_and_shows_failures():
    records = [_launch("coop", "coop_1", "numba", 41.9, device_us=3.5, verified=True),
               _launch("coop", "coop_1", "cupy", 60.25),
               {"type": "launch", "process": "coop", "kernel": "coop_1", "args": "torch",
                "failed": "TypeError: no dtype | here"},
               _launch("plain", "plain", "numba", 37.5, verified=False)]
    table = launch.table(records)
    header = table[0].split(" | ")
    assert header[2:5] == ["numba", "cupy", "torch"]
    plain_row = next(line for line in table if "without cuda.coop" in line)
    coop_row = next(line for line in table if "cuda.coop, 1 call" in line)
    assert table.index(plain_row) < table.index(coop_row)  # the process without cuda.coop first
    assert "| 41.9 | 60.2 | fails: TypeError: no dtype / here | 3.5 | yes |" in coop_row
    assert plain_row.endswith("| 37.5 | – | – | – | NO |")


def test_first_result_runs_the_readme_example_and_checks_its_output():
    example = first_result.readme_example()
    assert "@cuda.jit" in example and "coop" in example
    text = first_result.script(example)
    compile(text, "readme_example.py", "exec")  # the example with its timer and check is valid Python
    assert text.index(example) < text.index("np.array_equal(out, x)")
    with pytest.raises(ValueError, match="no longer defines"):
        first_result.script("y = 1\n")


def _sampling_record(function, vocab, batch, ours_ms, flashinfer_ms, host_us=10.0):
    times = {"flashinfer": {"warm": flashinfer_ms, "cold": flashinfer_ms},
             "torch": {"warm": 4 * flashinfer_ms, "cold": 4 * flashinfer_ms}}
    times.update({b: {"warm": ours_ms, "cold": ours_ms, "host_us": host_us} for b in ("numba", "cute")})
    return {"function": function, "vocab": vocab, "batch": batch, "distribution": "normal", "times_ms": times,
            "checks": {"numba": {"ok": True}, "cute": {"ok": False}}}


def test_sampling_report_geomeans_worst_rows_and_host_bound_rows():
    from benchmarks.workloads import report as sampling_report

    records = [_sampling_record("softmax", 32000, 1, 0.02, 0.01),  # half FlashInfer's speed
               _sampling_record("softmax", 128256, 128, 0.05, 0.10, host_us=900.0)]  # twice; the host's time
    rows = {(r["function"], r["backend"]): r for r in sampling_report.summary(records)}
    numba = rows["softmax", "numba"]
    assert numba["warm"] == pytest.approx(1.0) and numba["worst"] == pytest.approx(0.5)
    assert numba["worst_at"] == (32000, 1) and numba["verified"] == 2 and rows["softmax", "cute"]["verified"] == 0
    assert numba["torch_small"] == pytest.approx(2.0)  # batch <= 64 only: torch 0.04 ms over ours 0.02
    assert [sampling_report.host_bound(r["times_ms"]["numba"]) for r in records] == [False, True]
    text = sampling_report.markdown({"gpu": "G"}, records)
    assert "| softmax | numba | 1.00x |" in text and "softmax V=128256 B=128 normal numba" in text


def test_a_batch_is_timed_again_behind_a_longer_spin_while_the_host_outlasts_half_of_it():
    from benchmarks.common import SPIN_MS, hidden_behind_spin

    spins = []

    def slow_host(spin_ms):  # takes 3 ms to enqueue; the GPU time grows while the host shows through
        spins.append(spin_ms)
        return (0.01 if 3.0 <= spin_ms / 2 else 3.0 - spin_ms), 3.0

    assert hidden_behind_spin(slow_host) == (0.01, 3.0, 4 * SPIN_MS, False)
    assert spins == [SPIN_MS, 2 * SPIN_MS, 4 * SPIN_MS]
    spins.clear()
    assert hidden_behind_spin(slow_host, 0.5, retries=1) == (3.0 - 1.0, 3.0, 1.0, False)  # the last try stands
    assert spins == [0.5, 1.0]


def test_a_call_that_synchronises_stops_the_doubling_at_once():
    from benchmarks.common import SPIN_MS, hidden_behind_spin

    spins = []

    def synchronising(spin_ms):  # the host waits out the spin, then 0.1 ms of its own work
        spins.append(spin_ms)
        return 0.2, spin_ms + 0.1

    assert hidden_behind_spin(synchronising) == (0.2, 2 * SPIN_MS + 0.1, 2 * SPIN_MS, True)
    assert spins == [SPIN_MS, 2 * SPIN_MS]
    spins.clear()
    assert hidden_behind_spin(synchronising, SPIN_MS, retries=0) == (0.2, SPIN_MS + 0.1, SPIN_MS, False)
    assert spins == [SPIN_MS]


def test_host_bound_counts_the_spin_the_batch_waited_behind():
    from benchmarks.workloads import report as sampling_report

    times = {"warm": 0.01, "host_us": 900.0}  # 5 enqueues of 0.9 ms: past a 2 ms spin, hidden by an 8 ms one
    assert sampling_report.host_bound(times) and not sampling_report.host_bound({**times, "spin_ms": 8.0})


def _moe_record(tokens, ours_ms, vllm_ms, ok=True):
    times = {"vllm_cuda": {"warm": vllm_ms, "cold": vllm_ms}, "torch": {"warm": 10 * ours_ms, "cold": 10 * ours_ms},
             "numba": {"warm": ours_ms, "cold": 2 * ours_ms}}
    return {"tokens": tokens, "experts": 256, "k": 8, "block_size": 64, "times_ms": times,
            "checks": {"vllm_cuda": {"ok": True}, "torch": {"ok": True}, "numba": {"ok": ok}},
            "vllm_cuda_op": "built from vLLM's source: /b/libvllm_moe_align.so"}


def test_moe_align_report_geomeans_against_vllm_and_torch():
    from benchmarks.workloads import report

    records = [_moe_record(16, 0.004, 0.008), _moe_record(65536, 0.04, 0.02, ok=False)]  # 2x, then 0.5x
    (numba,) = report.moe_summary(records)
    assert numba["warm"] == pytest.approx(1.0) and numba["cold"] == pytest.approx(0.5)
    assert numba["worst"] == pytest.approx(0.5) and numba["worst_at"] == (65536, 256, 8, 64)
    assert numba["torch"] == pytest.approx(10.0) and numba["verified"] == 1
    text = report.moe_markdown({"gpu": "G"}, records)
    assert "\nvLLM CUDA op: built from vLLM's source: /b/libvllm_moe_align.so.\n" in text
    assert "| numba | 1.00x | 0.50x | 0.50x (65536, 256, 8, 64) | 10.00x | 1/2 |" in text
    assert "| 16 | 256 | 8 | 64 | 8.0 | - | 40.0 | 4.0 | - | vllm_cuda:ok torch:ok numba:ok |" in text


class _Ops:
    """The two torch.ops members vllm_cuda_op reads, recording the libraries it loads."""

    def __init__(self):
        self.loaded = []
        self.coop_vllm = types.SimpleNamespace(moe_align_block_size="coop_vllm op")

    def load_library(self, path):
        self.loaded.append(path)


def test_moe_align_anchor_falls_back_to_the_library_built_from_vllm_source(tmp_path, monkeypatch):
    from benchmarks.workloads import moe_align

    ops = _Ops()
    monkeypatch.setitem(sys.modules, "torch", types.SimpleNamespace(ops=ops))
    monkeypatch.setitem(sys.modules, "vllm", None)  # no vLLM: `import vllm._moe_C` raises
    op, why = moe_align.vllm_cuda_op(tmp_path)
    assert op is None and ops.loaded == []
    assert "vllm._moe_C" in why and str(tmp_path / "libvllm_moe_align.so") in why
    (tmp_path / "libvllm_moe_align.so").write_bytes(b"\x7fELF")
    op, origin = moe_align.vllm_cuda_op(tmp_path)
    assert op == "coop_vllm op" and ops.loaded == [str(tmp_path / "libvllm_moe_align.so")]
    assert origin == f"built from vLLM's source: {tmp_path / 'libvllm_moe_align.so'}"
    assert moe_align.built_vllm_library() == Path(moe_align.VLLM_MOE_BUILD) / "libvllm_moe_align.so"


def _scan_record(dtype, batch, ours_ms, mamba_ms, ok=True):
    times = {"numba": {"warm": ours_ms, "cold": ours_ms}, "torch": {"warm": 100 * (mamba_ms or ours_ms)}}
    if mamba_ms is not None:
        times["mamba"] = {"warm": mamba_ms, "cold": 2 * mamba_ms}
    return {"function": "selective_scan", "batch": batch, "dim": 4096, "seqlen": 2048, "dstate": 16, "dtype": dtype,
            "times_ms": times, "checks": {"numba": {"ok": ok}}}


def test_selective_scan_report_geomeans_against_mamba_and_torch():
    from benchmarks.workloads import selective_scan

    records = [_scan_record("float32", 1, 0.2, 0.1), _scan_record("float32", 16, 1.0, 2.0, ok=False),
               _scan_record("bfloat16", 1, 0.1, None)]
    text = selective_scan.markdown({"gpu": "G"}, records)
    # float32: mamba/ours 0.5 and 2.0 warm (geomean 1.0), cold 1.0 and 4.0 (2.0); torch 50 and 200 (100)
    assert "| float32 | numba | 1.00x | 2.00x | 0.50x (1, 4096, 2048) | 100.0x | 1/2 |" in text
    assert "| bfloat16 | numba | – (no selective_scan_cuda) | – | – | 100.0x | 1/1 |" in text
    assert "| bfloat16 | 1 | 4096 | 2048 | – | 100.0 | – | 10000 |" in text
    assert "| float32 | 16 | 4096 | 2048 | 2000.0 | 1000.0 (2.00x) | – | 200000 |" in text
