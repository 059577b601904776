"""results.json and RESULTS.md: the tables, the targets of issue 3 and a short analysis."""
from __future__ import annotations

import json
from pathlib import Path

from .common import READ_BOUND

COOP_VS_CUB = 0.98  # every cuda.coop kernel against the CUB C++ kernel of the same algorithm and shape
BEST_VS_COPY = 0.95  # the best cuda.coop variant of each memory-bound benchmark against the copy ceiling
WARM_DISK_OVERHEAD_S = 0.3  # warm-cache compile in a new process, on top of numba-cuda-mlir's own compile
COLD_FOUR_NVRTC_S = 1.5  # cold four-specialisation kernel: one NVRTC run, under this much NVRTC time
# Compute-bound operations: reported in Gkeys/s (GB/s / 8 for 4-byte keys read and written), no copy-ceiling target.
COMPUTE_BOUND = ("merge_sort", "radix_sort")
IMPL_NAMES = {"coop": "cuda.coop", "cub_cpp": "CUB C++", "handwritten": "hand-written", "triton": "Triton",
              "copy": "copy", "read": "read-only"}


def throughput(records: list[dict]) -> list[dict]:
    return [r for r in records if r.get("type") == "throughput" and "gbps" in r]


def kernel_order(records: list[dict]) -> list[str]:
    """Kernels in run order; the chart's group numbers and the tables' # column follow it."""
    seen: dict[str, None] = {}
    for r in throughput(records):
        seen.setdefault(r["kernel"], None)
    return list(seen)


def ceiling(records: list[dict]) -> float | None:
    return max((r["gbps"] for r in throughput(records) if r["impl"] == "copy"), default=None)


def read_ceiling(records: list[dict]) -> float | None:
    """The fastest verified read-only row (read_ceiling.py): the ceiling of the reductions."""
    return max((r["gbps"] for r in throughput(records) if r["impl"] == "read" and r.get("verified")), default=None)


def ceiling_for(operation: str | None, records: list[dict]) -> tuple[float | None, str]:
    """(GB/s, name) of the ceiling a row of ``operation`` is compared with: read-only for the reductions (they read n
    items and write almost nothing), the copy for the rest (and for the reductions when no read-only row ran)."""
    if operation in READ_BOUND or operation == "read":
        read = read_ceiling(records)
        if read:
            return read, "read-only ceiling"
    return ceiling(records), "copy ceiling"


def _f(value, digits: int = 1, suffix: str = "") -> str:
    if value is None:
        return "–"
    return f"{value:.{digits}f}{suffix}"


def _res(r: dict | None) -> str:
    if not r or "registers" not in r:
        return "–"
    return f"{r['registers']}/{r.get('shared_bytes', '?')}/{r.get('local_bytes', '?')}"


def _variant(row: dict) -> str:
    """The algorithm of a benchmark's row, with the load/store algorithm around it where the family varies it."""
    name = row["algorithm"] or row["kernel"]
    return f"{name}, {row['io']} load/store" if row.get("io") else name


def _benchmarks(records: list[dict]) -> dict[tuple, list[dict]]:
    """Memory-bound benchmarks: one per family, operation, group, items per thread and dtype; rows are its
    algorithms."""
    out: dict[tuple, list[dict]] = {}
    for r in throughput(records):
        if r["impl"] == "coop" and r.get("operation") not in COMPUTE_BOUND:
            key = (r["family"], r.get("operation", "copy"), r["group"], r["items_per_thread"], r["dtype"])
            out.setdefault(key, []).append(r)
    return out


def analysis(records: list[dict]) -> list[str]:
    lines = []
    rows = throughput(records)
    coop = [r for r in rows if r["impl"] == "coop" and "ratio_vs_cub_cpp" in r]
    if coop:
        missed = sorted((r for r in coop if r["ratio_vs_cub_cpp"] < COOP_VS_CUB), key=lambda r: r["ratio_vs_cub_cpp"])
        worst = min(coop, key=lambda r: r["ratio_vs_cub_cpp"])
        lines.append(f"- {'MET' if not missed else 'MISSED'}: every cuda.coop kernel >= {COOP_VS_CUB}x CUB C++ "
                     f"({len(coop) - len(missed)}/{len(coop)} kernels; lowest {worst['ratio_vs_cub_cpp']:.3f}x, "
                     f"{worst['kernel']}).")
        by_kernel = {(r["kernel"], r["impl"]): r for r in rows}
        for r in missed:
            cub = by_kernel.get((r["kernel"], "cub_cpp"), {})
            lines.append(f"  - {r['kernel']}: {r['gbps']:.0f} vs {cub.get('gbps', 0):.0f} GB/s "
                         f"({r['ratio_vs_cub_cpp']:.3f}x); regs/shared/local coop {_res(r)}, CUB {_res(cub)}"
                         f"{_resource_hint(r, cub)}")
    top = ceiling(records)
    lines += _ceiling_lines(records)
    if top:
        cub_gbps = {r["kernel"]: r["gbps"] for r in throughput(records) if r["impl"] == "cub_cpp"}
        for key, group in sorted(_benchmarks(records).items()):
            best = max(group, key=lambda r: r["gbps"])
            here, name = ceiling_for(key[1], records)
            ok = best["gbps"] / here >= BEST_VS_COPY
            cub = cub_gbps.get(best["kernel"])
            lines.append(f"- {'MET' if ok else 'MISSED'}: best cuda.coop {key[2]} {key[1]} at {key[3]} items, "
                         f"{key[4]} ({_variant(best)}) {best['gbps']:.0f} GB/s = "
                         f"{best['gbps'] / here:.3f}x the {name} {here:.0f} GB/s (target {BEST_VS_COPY}x"
                         + (f"; CUB C++ there {cub / here:.3f}x)." if cub else ")."))
    compiles = {(r["kernel"], r["phase"], r.get("variant", "")): r for r in records
                if r.get("type") == "compile" and "seconds" in r}
    for (kernel, phase, _), r in sorted(compiles.items()):
        if phase == "warm_disk":
            ok = r["overhead_seconds"] < WARM_DISK_OVERHEAD_S
            lines.append(f"- {'MET' if ok else 'MISSED'}: {kernel} warm-disk compile adds "
                         f"{r['overhead_seconds']:.3f} s "
                         f"to numba-cuda-mlir's own {r['baseline_seconds']:.3f} s (target < {WARM_DISK_OVERHEAD_S} s).")
        if phase == "cold" and "four" in kernel:
            ok = r["nvrtc_runs"] == 1 and r["nvrtc_seconds"] < COLD_FOUR_NVRTC_S
            lines.append(f"- {'MET' if ok else 'MISSED'}: {kernel} cold: {r['nvrtc_runs']:g} NVRTC run(s), "
                         f"{r['nvrtc_seconds']:.2f} s of NVRTC (target 1 run, < {COLD_FOUR_NVRTC_S} s).")
    wrong = [r for r in rows if not r.get("verified", True)]
    failed = [r for r in records if "error" in r]
    lines.append(f"- Outputs verified exactly for {len(rows) - len(wrong)}/{len(rows)} timed rows"
                 + (f"; WRONG: {', '.join(r['kernel'] + ' ' + r['impl'] for r in wrong)}" if wrong else "") + ".")
    if failed:
        lines.append(f"- {len(failed)} measurement(s) failed; see Errors.")
    hand = [r["ratio_vs_cub_cpp"] for r in rows if r["impl"] == "handwritten" and "ratio_vs_cub_cpp" in r]
    if hand:
        lines.append(f"- Plain numba-cuda-mlir kernels written by hand: {min(hand):.2f}x-{max(hand):.2f}x of CUB C++ "
                     "(straightforward ports, not tuned; see Hand-written kernels).")
    triton: dict[str, list[dict]] = {}
    for r in rows:
        if r["impl"] == "triton":
            triton.setdefault(r.get("operation", "copy"), []).append(r)
    for r in rows:
        if r.get("operation") in COMPUTE_BOUND and r["impl"] in ("coop", "cub_cpp", "triton"):
            keys_per_s = r["gbps"] / (2 * 4)  # 4-byte keys, each read and written once
            lines.append(f"- {IMPL_NAMES[r['impl']]} {r['kernel']}: {keys_per_s:.1f} Gkeys/s"
                         + (f" ({r['ratio_vs_cub_cpp']:.3f}x CUB C++)." if "ratio_vs_cub_cpp" in r else "."))
    for operation, tri in triton.items():
        if operation in COMPUTE_BOUND:
            continue
        here, name = ceiling_for(operation, records)
        if here:
            what = "tile copies" if operation == "copy" else operation
            lines.append(f"- Triton {what}: {min(r['gbps'] for r in tri) / here:.2f}x-"
                         f"{max(r['gbps'] for r in tri) / here:.2f}x of the {name}.")
    lines += _launch_lines(records)
    return lines


def _ceiling_lines(records: list[dict]) -> list[str]:
    rows = [r for r in throughput(records) if r["impl"] in ("copy", "read") and r.get("verified")]
    if not rows:
        return []
    best = {impl: max((r for r in rows if r["impl"] == impl), key=lambda r: r["gbps"], default=None)
            for impl in ("copy", "read")}
    parts = [f"copy {best['copy']['gbps']:.0f} GB/s ({best['copy']['kernel']}; reads and writes n items)"
             if best["copy"] else None,
             f"read-only {best['read']['gbps']:.0f} GB/s ({best['read']['kernel']}; reads n items, writes one total "
             f"per tile), the ceiling of {', '.join(READ_BOUND)}" if best["read"] else None]
    return ["- Ceilings: " + "; ".join(p for p in parts if p) + "."]


def _launch_lines(records: list[dict]) -> list[str]:
    from . import launch

    lines = launch.goal_lines(records)
    for r in records:
        if r.get("type") == "first_result" and "script_seconds" in r:
            lines.append(f"- First result: README.md's example in a new process with an empty cache, from the first "
                         f"import to a checked output: {r['script_seconds']:.2f} s ({r['process_seconds']:.2f} s "
                         f"with the interpreter's start; NVRTC {r.get('nvrtc_seconds') or 0:.2f} s in "
                         f"{r.get('nvrtc_runs')} run(s)); output {'verified' if r.get('verified') else 'WRONG'}.")
    return lines


def _resource_hint(coop: dict, cub: dict) -> str:
    """Point at the usual causes the issue lists: local-memory traffic, more shared memory, more registers."""
    hints = []
    if coop.get("local_bytes", 0) > cub.get("local_bytes", 0):
        hints.append("coop spills to local memory")
    if coop.get("shared_bytes", 0) > cub.get("shared_bytes", 0):
        hints.append("coop uses more shared memory")
    if coop.get("registers", 0) > cub.get("registers", 0) + 8:
        hints.append("coop uses more registers")
    return f" ({'; '.join(hints)}; compare SASS under sass/)" if hints else " (compare SASS under sass/)"


def _throughput_tables(records: list[dict]) -> list[str]:
    rows = throughput(records)
    order = {k: i + 1 for i, k in enumerate(kernel_order(records))}
    by = {(r["kernel"], r["impl"]): r for r in rows}
    out = [("| # | kernel | cuda.coop GB/s | CUB C++ GB/s | coop / CUB | hand-written GB/s | coop / ceiling | "
            "regs/shared/local coop | CUB | ok |"), "|---|---|---|---|---|---|---|---|---|---|"]
    for kernel, index in order.items():
        coop, cub, hand = by.get((kernel, "coop")), by.get((kernel, "cub_cpp")), by.get((kernel, "handwritten"))
        if not (coop or cub):
            continue
        verified = all(r.get("verified", True) for r in (coop, cub, hand) if r)
        out.append(f"| {index} | {kernel} | {_f(coop and coop['gbps'])} | {_f(cub and cub['gbps'])} | "
                   f"{_f(coop and coop.get('ratio_vs_cub_cpp'), 3)} | {_f(hand and hand['gbps'])} | "
                   f"{_vs_ceiling(coop, records)} | {_res(coop)} | {_res(cub)} | "
                   f"{'yes' if verified else 'NO'} |")
    others = [r for r in rows if r["impl"] in ("triton", "copy", "read")]
    if others:
        out += ["", "| # | kernel | implementation | GB/s | / ceiling | ms | ok |", "|---|---|---|---|---|---|---|"]
        for r in others:
            out.append(f"| {order[r['kernel']]} | {r['kernel']} | {IMPL_NAMES[r['impl']]} | {r['gbps']:.1f} | "
                       f"{_vs_ceiling(r, records)} | {r['ms']:.4f} | "
                       f"{'yes' if r.get('verified') else 'NO'} |")
    return out


def _vs_ceiling(row: dict | None, records: list[dict]) -> str:
    """The row against its ceiling (see ceiling_for); ``r`` marks the read-only ceiling."""
    if not row:
        return "–"
    here, name = ceiling_for(row.get("operation"), records)
    if not here:
        return "–"
    return f"{row['gbps'] / here:.3f}" + (" r" if name.startswith("read") else "")


def _compile_table(records: list[dict]) -> list[str]:
    rows = [r for r in records if r.get("type") == "compile" and "seconds" in r]
    if not rows:
        return []
    out = ["| kernel | phase | variant | total s | NVRTC s (runs) | scratch-size link s | final link s | "
           "numba-cuda-mlir s | plain numba s | added s | repeats |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        out.append(f"| {r['kernel']} | {r['phase']} | {r.get('variant') or '–'} | {r['seconds']:.3f} | "
                   f"{r['nvrtc_seconds']:.3f} ({r['nvrtc_runs']:g}) | {r['scratch_link_seconds']:.3f} | "
                   f"{_f(r.get('final_link_seconds'), 3)} | {_f(r.get('numba_seconds'), 3)} | "
                   f"{r['baseline_seconds']:.3f} | {r['overhead_seconds']:+.3f} | {r.get('repeats', 1)} |")
    first = rows[0]
    out.append(f"\nNew processes also pay {first['import_seconds']:.2f} s of imports and "
               f"{first['process_init_seconds']:.2f} s of numba-cuda-mlir start-up before the first kernel "
               "(not counted above).")
    return out


def write(outdir: Path, records: list[dict], env: dict, settings: dict, chart: str | None) -> None:
    outdir.mkdir(parents=True, exist_ok=True)
    (outdir / "results.json").write_text(json.dumps(records, indent=1, default=str) + "\n")
    clocks = env.get("clocks") or {}
    seen = (f"SM {clocks['sm_mhz_min']:.0f}-{clocks['sm_mhz_max']:.0f} MHz, memory {clocks['mem_mhz_min']:.0f}-"
            f"{clocks['mem_mhz_max']:.0f} MHz over {clocks['clock_samples']} samples while timing"
            if clocks else "not sampled")
    lines = ["# cuda.coop benchmarks", "",
             f"Regenerated by `python -m benchmarks <outdir>` ({settings.get('mode', 'full')} run). "
             "GB/s = (bytes read + bytes written) / median time.", "",
             "| | |", "|---|---|",
             f"| date | {env.get('date')} |", f"| GPU | {env.get('gpu')} |", f"| driver | {env.get('driver', '–')} |",
             f"| clocks seen | {seen}; rated max SM {env.get('sm_mhz_max_rated', '–')} MHz, memory "
             f"{env.get('mem_mhz_max_rated', '–')} MHz |",
             f"| commit | {env.get('commit')} |",
             f"| elements | {settings.get('n')} per buffer |",
             f"| timing | {settings.get('timing')} |",
             f"| software | {', '.join(f'{k} {v}' for k, v in env.get('packages', {}).items())}; CCCL headers "
             f"{env.get('cccl_headers')}; NVRTC {env.get('nvrtc')}; nvJitLink {env.get('nvjitlink', '–')}; "
             f"ptxas {env.get('ptxas') or '–'}; nvcc {env.get('nvcc', '–')} |", "",
             "## Targets and analysis (generated)", "", *analysis(records), ""]
    table = _throughput_tables(records)
    if len(table) > 2:
        legend = ("regs/shared/local: registers per thread, shared bytes per block (cuobjdump, including the "
                  "1 KiB sm_90 reserves), local bytes per thread. coop / ceiling: against the copy ceiling, or, "
                  f"marked r, the read-only ceiling (the reductions: {', '.join(READ_BOUND)}).")
        lines += ["## Throughput", "", legend, "", *table, ""]
    if chart:
        lines += [f"![throughput]({chart})", "",
                  "Bars grouped by kernel (numbered as in #): blue cuda.coop, orange CUB C++, green hand-written, "
                  "purple Triton, grey copy; red line: the copy ceiling.", ""]
    compile_table = _compile_table(records)
    if compile_table:
        lines += ["## Compile time (seconds, median over repeats)", "",
                  "cold: empty cuda-coop cache, new process; warm_disk: the cache the cold run filled, new process; "
                  "warm_process: a recompile in the cold process (new_grid: same kernel launched with another grid, "
                  "which numba-cuda-mlir specialises on; new_kernel_object: the same body jitted again). "
                  "numba-cuda-mlir s excludes cuda.coop's planner (with NVRTC and the scratch-size link) and the "
                  "final nvJitLink link; plain numba s is the same access pattern written without cuda.coop, "
                  "compiled in the same process just before; added s is the difference.", "", *compile_table, ""]
    lines += _handwritten_section(records)
    lines += _launch_section(records)
    builds = [r for r in records if r.get("type") == "build"]
    if builds:
        lines += ["## Builds", ""] + [f"- {r.get('impl')} {r.get('family')}: "
                                      + (f"{r['kernels']} kernels in {r['seconds']:.2f} s" if "seconds" in r else "")
                                      + (f" FAILED: {r['error'][:300]}" if "error" in r else "") for r in builds] + [""]
    lines += _dry_table(records)
    errors = [r for r in records if "error" in r and r.get("type") != "build"]
    if errors:
        lines += ["## Errors", ""] + [f"- {r.get('kernel') or r.get('type')} "
                                      f"{r.get('impl') or r.get('args') or r.get('phase') or r.get('process')}: "
                                      f"{r['error'].splitlines()[-1][:300]}" for r in errors] + [""]
    (outdir / "RESULTS.md").write_text("\n".join(lines))


def _handwritten_section(records: list[dict]) -> list[str]:
    """What each hand-written kernel is, with the rows it ran in (the family's HANDWRITTEN_NOTES)."""
    notes: dict[str, list[str]] = {}
    for r in throughput(records):
        if r["impl"] == "handwritten":
            notes.setdefault(r.get("handwritten_note") or f"{r.get('variant') or 'hand-written'} (no note)",
                             []).append(r["kernel"])
    if not notes:
        return []
    intro = ("Plain numba-cuda-mlir kernels written as a user would without cuda.coop: straightforward ports of the "
             "textbook algorithm, not tuned.")
    return ["## Hand-written kernels", "", intro, ""] + [f"- {note}: {', '.join(kernels)}"
                                                         for note, kernels in notes.items()] + [""]


def _launch_section(records: list[dict]) -> list[str]:
    from . import launch

    lines = []
    table = launch.table(records)
    if table:
        intro = ("One block of 256 threads, two int32 arrays of 2048 items: wall time of back-to-back launches "
                 "ended by a device synchronisation, divided by the launches (median of batches), in new processes "
                 "with and without cuda.coop imported. GPU us/launch: the same kernel's device time with the "
                 "queue kept full (so the wall time is the host's).")
        lines += ["## Launch overhead (microseconds per launch)", "", intro, "", *table, ""]
    dry = [r for r in records if r.get("type") == "launch_dry"]
    if dry:
        built = [f"- {r['process']} process, {r['kernel']}: "
                 + (f"built in {r['built_seconds']:.2f} s" if "built_seconds" in r else f"FAILED {r.get('error')}")
                 for r in dry]
        lines += ["## Launch-table kernels built without a GPU (--dry-run)", "", *built, ""]
    first = [r for r in records if r.get("type") == "first_result"]
    for r in first:
        if "script_seconds" in r:
            text = (f"README.md's main example in a new process with an empty cuda-coop cache (fresh XDG_CACHE_HOME "
                    f"and numba-cuda-mlir cache), from the first import to a checked output: "
                    f"{r['script_seconds']:.2f} s in the script, {r['process_seconds']:.2f} s from process start; "
                    f"NVRTC {r.get('nvrtc_seconds') or 0:.2f} s in {r.get('nvrtc_runs')} run(s).")
            lines += ["## First result", "", text, ""]
        elif r.get("dry"):
            lines += ["## First result", "", f"Not measured (dry run): {r.get('note')}", ""]
    return lines


def _dry_table(records: list[dict]) -> list[str]:
    """--dry-run: what each kernel compiles to for sm_90, without a GPU."""
    rows = [r for r in records if r.get("type") == "dry_build" and "error" not in r]
    if not rows:
        return []
    by: dict[str, dict[str, dict]] = {}
    for r in rows:
        by.setdefault(r["kernel"], {})[r["impl"]] = r
    out = ["## sm_90 builds without a GPU (--dry-run)", "",
           "| kernel | cuda.coop build s (NVRTC runs) | regs/shared/local coop | CUB C++ | hand-written |",
           "|---|---|---|---|---|"]
    for kernel, impls in by.items():
        coop = impls.get("coop")
        built = f"{coop['seconds']:.2f} ({coop.get('nvrtc_runs', 0)})" if coop else "–"
        out.append(f"| {kernel} | {built} | {_res(coop)} | {_res(impls.get('cub_cpp'))} | "
                   f"{_res(impls.get('handwritten'))} |")
    return out + [""]
