"""python -m benchmarks.workloads.report SAMPLING_JSON... | MOE_ALIGN_JSON... [--markdown OUT.md] [--chart OUT.png]

Turns the records of ``python -m benchmarks.workloads`` (one or more sampling.json files of one run) into the tables
of RESULTS.md and docs/real_kernels.rst: per function and backend, the geomean of FlashInfer's time over ours across
the grid (warm and cold L2), the worst row, and the speed-up over the torch code at batch <= 64; then every row of the
normal distribution. ``--chart`` draws time against batch size per function (matplotlib, when installed).
Records of moe_align.json (rows with ``tokens``) get ``moe_markdown``: per backend, the geomean of vLLM's CUDA op's time
over ours, the worst row and the geomean over torch's version, then every row.
Records of the selective-scan workload (selective_scan.json) get that workload's tables (``selective_scan.markdown``).
"""
from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

FUNCTIONS = ("softmax", "top_k_mask_logits", "top_k_renorm_probs", "top_p_renorm_probs", "sampling_from_probs",
             "min_p_sampling_from_probs", "top_k_top_p_sampling_from_probs")
BACKENDS = ("numba", "cute")
SPIN_MS, INNER = 2.0, 5  # common.time_launches's spin and the launches per timed batch (sampling.run)


def load(paths: list[str]) -> tuple[dict, list[dict]]:
    environment, records = {}, []
    for path in paths:
        data = json.loads(Path(path).read_text())
        environment = environment or data["environment"]
        records += data["records"]
    return environment, records


def geomean(values: list[float]) -> float:
    return math.exp(sum(math.log(v) for v in values) / len(values))


def summary(records: list[dict]) -> list[dict]:
    """One row per (function, backend): FlashInfer time / ours (> 1: ours faster), warm and cold."""
    rows = []
    for function in FUNCTIONS:
        for backend in BACKENDS:
            mine = [r for r in records if r["function"] == function and backend in r["times_ms"]]
            if not mine:
                continue
            speed = {mode: [r["times_ms"]["flashinfer"][mode] / r["times_ms"][backend][mode] for r in mine]
                     for mode in ("warm", "cold")}
            worst = min(range(len(mine)), key=lambda i: speed["warm"][i])
            small = [r["times_ms"]["torch"]["warm"] / r["times_ms"][backend]["warm"] for r in mine if r["batch"] <= 64]
            rows.append({"function": function, "backend": backend, "rows": len(mine),
                         "verified": sum(r["checks"][backend]["ok"] for r in mine),
                         "warm": geomean(speed["warm"]), "cold": geomean(speed["cold"]),
                         "worst": speed["warm"][worst], "worst_at": (mine[worst]["vocab"], mine[worst]["batch"]),
                         "torch_small": geomean(small) if small else math.nan,
                         "torch_small_min": min(small) if small else math.nan})
    return rows


def markdown(environment: dict, records: list[dict]) -> str:
    lines = [f"Card: {environment.get('gpu', '?')} (driver {environment.get('driver', '?')}), "
             f"{environment.get('date', '?')}, commit {environment.get('commit', '?')}; "
             f"{len(records)} rows (function x vocab x batch x distribution), every output verified.", "",
             "| function | backend | vs FlashInfer, warm (geomean) | cold | worst row (vocab, batch) | "
             "vs torch, batch <= 64 (geomean / min) | verified |",
             "|---|---|---|---|---|---|---|"]
    for row in summary(records):
        lines.append(f"| {row['function']} | {row['backend']} | {row['warm']:.2f}x | {row['cold']:.2f}x | "
                     f"{row['worst']:.2f}x ({row['worst_at'][0]}, {row['worst_at'][1]}) | "
                     f"{row['torch_small']:.2f}x / {row['torch_small_min']:.2f}x | {row['verified']}/{row['rows']} |")
    bound = [f"{r['function']} V={r['vocab']} B={r['batch']} {r['distribution']} {b}"
             for r in records for b in BACKENDS if b in r["times_ms"] and host_bound(r["times_ms"][b])]
    if bound:
        lines += ["", "Rows whose host enqueue cost per call exceeds the spin that hides it (their warm time is the "
                      f"host's): {len(bound)}: " + "; ".join(bound[:20])]
    lines += ["", "Every row, normal logits, warm L2 (microseconds; in brackets FlashInfer's time over ours):", "",
              "| function | vocab | batch | FlashInfer | numba | CuTe | torch |", "|---|---|---|---|---|---|---|"]
    for r in sorted((r for r in records if r["distribution"] == "normal"),
                    key=lambda r: (FUNCTIONS.index(r["function"]), r["vocab"], r["batch"])):
        t = r["times_ms"]
        fi = t["flashinfer"]["warm"]
        ours = " | ".join(f"{t[b]['warm'] * 1e3:.1f} ({fi / t[b]['warm']:.2f}x)" if b in t else "-" for b in BACKENDS)
        lines.append(f"| {r['function']} | {r['vocab']} | {r['batch']} | {fi * 1e3:.1f} | {ours} | "
                     f"{t['torch']['warm'] * 1e3:.1f} |")
    return "\n".join(lines) + "\n"


def host_bound(times: dict) -> bool:
    """Whether a warm timing measured the host: ``time_launches`` hides INNER launches' enqueue cost behind a spin
    kernel (SPIN_MS, doubled while the enqueue outlasted half of it; the spin used is ``spin_ms``), so a call whose
    enqueue takes longer than spin / INNER plus its GPU time starves the GPU. Records before host_us was kept
    cannot say."""
    host_ms = times.get("host_us", 0.0) / 1e3
    return host_ms > times.get("spin_ms", SPIN_MS) / INNER + times["warm"]


def chart(records: list[dict], path: Path, vocab: int = 128256) -> bool:
    """Time against batch size at one vocabulary (normal logits, warm L2), one panel per function."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    chosen = [r for r in records if r["vocab"] == vocab and r["distribution"] == "normal"]
    figure, axes = plt.subplots(2, 4, figsize=(16, 7), constrained_layout=True)
    for axis, function in zip(axes.flat, FUNCTIONS):
        rows = sorted((r for r in chosen if r["function"] == function), key=lambda r: r["batch"])
        for impl, style in (("flashinfer", "k-o"), ("numba", "C0-s"), ("cute", "C1-^"), ("torch", "C2:")):
            points = [(r["batch"], r["times_ms"][impl]["warm"] * 1e3) for r in rows if impl in r["times_ms"]]
            if points:
                axis.plot(*zip(*points), style, label=impl)
        axis.set(title=function, xscale="log", yscale="log", xlabel="batch", ylabel="us")
    axes.flat[-1].axis("off")
    axes.flat[0].legend()
    figure.suptitle(f"LLM sampling, vocab {vocab}: time against batch size (lower is better)")
    figure.savefig(path, dpi=80)
    return True


MOE_OURS = ("numba", "cute")


def moe_summary(records: list[dict]) -> list[dict]:
    """One row per backend of ours: vLLM's CUDA op time / ours (> 1: ours faster), warm and cold, the worst row,
    and torch's time / ours, over the rows where both were timed."""
    rows = []
    for backend in MOE_OURS:
        mine = [r for r in records if backend in r["times_ms"] and "vllm_cuda" in r["times_ms"]]
        if not mine:
            continue
        speed = {mode: [r["times_ms"]["vllm_cuda"][mode] / r["times_ms"][backend][mode] for r in mine]
                 for mode in ("warm", "cold")}
        worst = min(range(len(mine)), key=lambda i: speed["warm"][i])
        over_torch = [r["times_ms"]["torch"]["warm"] / r["times_ms"][backend]["warm"] for r in mine
                      if "torch" in r["times_ms"]]
        w = mine[worst]
        rows.append({"backend": backend, "rows": len(mine),
                     "verified": sum(r["checks"][backend]["ok"] for r in mine),
                     "warm": geomean(speed["warm"]), "cold": geomean(speed["cold"]), "worst": speed["warm"][worst],
                     "worst_at": (w["tokens"], w["experts"], w["k"], w["block_size"]),
                     "torch": geomean(over_torch) if over_torch else math.nan})
    return rows


def moe_markdown(environment: dict, records: list[dict]) -> str:
    lines = [f"Card: {environment.get('gpu', '?')} (driver {environment.get('driver', '?')}), "
             f"{environment.get('date', '?')}, commit {environment.get('commit', '?')}; {len(records)} rows "
             "(tokens x (experts, k) x block size)."]
    origins = sorted({r["vllm_cuda_op"] for r in records if "vllm_cuda" in r["times_ms"] and "vllm_cuda_op" in r})
    if origins:
        lines.append("vLLM CUDA op: " + "; ".join(origins) + ".")
    lines += ["", "| backend | vs vLLM CUDA op, warm (geomean) | cold | worst row (tokens, experts, k, block) | "
              "vs torch (geomean) | verified |", "|---|---|---|---|---|---|"]
    for row in moe_summary(records):
        lines.append(f"| {row['backend']} | {row['warm']:.2f}x | {row['cold']:.2f}x | {row['worst']:.2f}x "
                     f"{row['worst_at']} | {row['torch']:.2f}x | {row['verified']}/{row['rows']} |")
    bound = [f"T={r['tokens']} E={r['experts']} block={r['block_size']} {b}"
             for r in records for b in MOE_OURS if b in r["times_ms"] and host_bound(r["times_ms"][b])]
    if bound:
        lines += ["", "Rows whose host enqueue cost per call exceeds the spin that hides it (their warm time is the "
                      f"host's): {len(bound)}: " + "; ".join(bound[:20])]
    names = ("vllm_cuda", "vllm_triton", "torch") + MOE_OURS
    lines += ["", "Every row, warm L2 (microseconds):", "",
              "| tokens | experts | k | block | " + " | ".join(names) + " | verified |",
              "|---|---|---|---|" + "---|" * (len(names) + 1)]
    for r in sorted(records, key=lambda r: (r["tokens"], r["experts"], r["block_size"])):
        t = r["times_ms"]
        cells = " | ".join(f"{t[n]['warm'] * 1e3:.1f}" if n in t else "-" for n in names)
        ok = " ".join(f"{n}:{'ok' if c['ok'] else 'WRONG'}" for n, c in r["checks"].items())
        lines.append(f"| {r['tokens']} | {r['experts']} | {r['k']} | {r['block_size']} | {cells} | {ok} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.workloads.report", description=__doc__.splitlines()[0])
    p.add_argument("json", nargs="+")
    p.add_argument("--markdown")
    p.add_argument("--chart")
    args = p.parse_args(argv)
    environment, records = load(args.json)
    if records and records[0].get("function") == "selective_scan":
        from .selective_scan import markdown as selective_scan_markdown

        text = selective_scan_markdown(environment, records)
        args.chart = None  # no chart for this workload yet
    elif records and "tokens" in records[0]:
        text = moe_markdown(environment, records)
    else:
        text = markdown(environment, records)
    if args.markdown:
        Path(args.markdown).write_text(text)
    else:
        print(text)
    if args.chart and not chart(records, Path(args.chart)):
        print("no matplotlib: no chart", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
