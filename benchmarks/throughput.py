"""Throughput of every implementation of every case, in one process and one run.

Implementations of one case are timed in alternating rounds (coop, cub_cpp, ... then
again), so that clock or thermal drift during the run cannot favour one of them; each
round poisons the output first and verifies it exactly after its timed launches.
"""
from __future__ import annotations

import re
import statistics
import traceback
from dataclasses import dataclass
from pathlib import Path

from . import cub_build
from .common import READ_BOUND, Buffers, Case, Stopwatch, gbps, make_buffers, poison, time_launches


@dataclass
class Settings:
    n: int
    warmup: int
    reps: int
    inner: int
    rounds: int
    seed: int = 20240611


def _resources_coop(family, impl: str, case: Case, buffers: Buffers) -> dict:
    """Registers / shared / local memory of the exact specialisation that was launched."""
    import cuda.coop.numba_mlir as numba_coop

    sample = buffers.numba()[0]
    built = numba_coop.compile_kernel(family.numba_kernel(impl, case), family.compile_args(impl, case, sample),
                                      block=case.threads, grid=case.grid(buffers.n))
    usage = cub_build.res_usage(built.cubin).get(built.name)  # the same tool as for the CUB cubin
    if usage is None:
        usage = {"registers": built.registers, "shared_bytes": built.shared_memory_bytes,
                 "local_bytes": built.local_memory_bytes}
    return {**usage, "_built": built}


def _error_record(case: Case, impl: str, exc: BaseException) -> dict:
    text = "".join(traceback.format_exception_only(type(exc), exc)).strip()
    print(f"  {impl:11s} FAILED: {text.splitlines()[0][:200]}", flush=True)
    return {"type": "throughput", **case.describe(), "impl": impl, "error": text[-2000:]}


def run_family(family, settings: Settings, outdir: Path, only: str | None, sass: bool) -> list[dict]:
    import cupy as cp

    cases = [c for c in family.cases() if only is None or re.search(only, c.kernel)]
    records: list[dict] = []
    build = None
    instances = family.cub_instances(cases)
    if instances:
        build = cub_build.start(family.CUB_SOURCE, instances, outdir / "cub_build")
    buffers: dict[str, Buffers] = {}
    launchers: dict[tuple[str, str], object] = {}
    extra: dict[tuple[str, str], dict] = {}

    # 1. Buffers and the copy ceiling, per dtype (timed first and again last, so that it sees the
    #    same clock and thermal conditions as the kernels in between; see step 5).
    #    A family with reductions also offers read-only rows (read_ceiling.py): their own output, reset and check.
    copies = []
    for dtype in sorted({c.dtype for c in cases}):
        buffers[dtype] = b = make_buffers(dtype, settings.n, settings.seed)
        for name, fn in family.copy_launchers(b).items():
            copies.append((Case(family.FAMILY, name, "", "", 0, 0, dtype, ("copy",)), fn, [], None))
        try:
            reads = getattr(family, "read_launchers", lambda _: {})(b)
        except Exception as exc:  # the ceiling is a reference: its failure must not stop the family
            records.append(_error_record(Case(family.FAMILY, f"read_ceiling_{dtype}", "", "", 0, 0, dtype, ("read",),
                                              operation="read"), "read", exc))
            reads = {}
        for name, row in reads.items():
            copies.append((Case(family.FAMILY, name, "", "", 0, 0, dtype, ("read",), operation="read"), row.launch, [],
                           row))
    for case, fn, samples, row in copies:
        _time_copy(case, fn, buffers[case.dtype], settings, family, samples, row)

    # 2. Compile every Python implementation at its first launch (timed: it includes NVRTC on a cold cache).
    for case in cases:
        b = buffers[case.dtype]
        for impl in case.impls:
            if impl == "cub_cpp":
                continue
            try:
                fn = family.launcher(impl, case, b)
                with Stopwatch() as sw:
                    fn()
                    cp.cuda.runtime.deviceSynchronize()
            except Exception as exc:
                records.append(_error_record(case, impl, exc))
                continue
            launchers[(case.kernel, impl)] = fn
            extra[(case.kernel, impl)] = {"first_launch_seconds": sw.seconds}
            if impl in ("coop", "handwritten"):
                try:  # diagnostics only: a failure here must not drop the measurement
                    extra[(case.kernel, impl)].update(_resources_coop(family, impl, case, b))
                except Exception as exc:
                    extra[(case.kernel, impl)]["resources_error"] = f"{type(exc).__name__}: {exc}"[:500]

    # 3. The CUB C++ kernels (nvcc has been running in the background).
    where: dict[str, Path] = {}
    if build is not None:
        try:
            where = build.wait()
            functions = cub_build.load(where)
            print(f"nvcc built {len(instances)} CUB kernels in {build.seconds:.1f} s "
                  f"({len(build.parts)} parallel runs, "
                  f"{cub_build.nvcc_version(build.command[0])})", flush=True)
            records.append({"type": "build", "family": family.FAMILY, "impl": "cub_cpp", "seconds": build.seconds,
                            "kernels": len(instances), "command": " ".join(build.command)})
        except Exception as exc:
            functions = {}
            records.append({"type": "build", "family": family.FAMILY, "impl": "cub_cpp", "error": str(exc)[-4000:]})
            print(f"CUB build failed: {str(exc)[:2000]}", flush=True)
        usage = {k: v for cubin in set(where.values()) for k, v in cub_build.res_usage(cubin).items()}
        for case in cases:
            symbol = family.cub_symbol(case)
            if "cub_cpp" in case.impls and symbol in functions:
                try:
                    launchers[(case.kernel, "cub_cpp")] = family.launcher("cub_cpp", case, buffers[case.dtype],
                                                                          functions)
                    extra[(case.kernel, "cub_cpp")] = usage.get(symbol) or cub_build.resources(functions[symbol])
                except Exception as exc:
                    records.append(_error_record(case, "cub_cpp", exc))

    # 4. Timed rounds, alternating implementations within each case.
    for case in cases:
        b = buffers[case.dtype]
        impls = [i for i in case.impls if (case.kernel, i) in launchers]
        if not impls:
            continue
        print(f"{case.kernel}", flush=True)
        samples: dict[str, list] = {i: [] for i in impls}
        ok = {i: True for i in impls}
        failed: dict[str, BaseException] = {}
        for _ in range(settings.rounds):
            for impl in impls:
                if impl in failed:
                    continue
                try:
                    getattr(family, "poison", poison)(b)  # a family with more outputs poisons them too
                    samples[impl].append(time_launches(launchers[(case.kernel, impl)], settings.warmup,
                                                       settings.reps, settings.inner))
                    ok[impl] &= family.verify(case, b)
                except Exception as exc:
                    failed[impl] = exc
        for impl in impls:
            if impl in failed:
                records.append(_error_record(case, impl, failed[impl]))
                continue
            info = {k: v for k, v in extra.get((case.kernel, impl), {}).items() if k != "_built"}
            records.append(_record(case, impl, samples[impl], b, family, ok[impl], info))
    # 5. The copy ceiling again; its row pools the batches of both passes, like the others' rounds.
    for case, fn, samples, row in copies:
        print(case.kernel, flush=True)
        impl = case.impls[0]
        if not _time_copy(case, fn, buffers[case.dtype], settings, family, samples, row):
            records.append(_error_record(case, impl, samples[-1]))
        else:
            records.append(_record(case, impl, samples, buffers[case.dtype], family, True, {},
                                   nbytes=row.nbytes if row is not None else None))
    _ratios(records)
    _dump_sass(records, cases, extra, where, family, outdir, everything=sass)
    return records


def _time_copy(case: Case, fn, b: Buffers, settings: Settings, family, samples: list, row=None) -> bool:
    """Append a Timing (or, on failure, the exception) to ``samples``; False once anything failed.

    ``row``: a read-only ceiling row (read_ceiling.ReadRow), which resets and checks its own output."""
    if samples and not all(hasattr(s, "batches_ms") for s in samples):
        return False
    try:
        if row is not None:
            row.reset()
        else:
            getattr(family, "poison", poison)(b)
        timing = time_launches(fn, settings.warmup, settings.reps, settings.inner)
        if not (row.check() if row is not None else family.verify(case, b)):
            raise RuntimeError(f"{case.kernel} wrote the wrong output")
        samples.append(timing)
        return True
    except Exception as exc:
        samples.append(exc)
        return False


def _record(case: Case, impl: str, samples: list, b: Buffers, family, verified: bool, info: dict,
            nbytes: int | None = None) -> dict:
    batches = [ms for s in samples for ms in s.batches_ms]
    ms = statistics.median(batches)  # over every batch of every round
    if nbytes is None:
        nbytes = family.bytes_moved(case, b.n, b.src.dtype.itemsize)
    if impl == "handwritten":  # what the hand-written kernel is: a straightforward port, or improved
        note = getattr(family, "HANDWRITTEN_NOTES", {}).get(case.variant)
        if note:
            info = {**info, "handwritten_note": note}
    record = {"type": "throughput", **case.describe(), "impl": impl, "variant": case.variant, "n": b.n,
              "bytes": nbytes, "ms": ms, "ms_min": min(batches), "gbps": gbps(nbytes, ms),
              "gbps_per_round": [gbps(nbytes, statistics.median(s.batches_ms)) for s in samples],
              "launches_timed": sum(s.launches for s in samples), "host_us_per_launch": min(s.host_us for s in samples),
              "verified": bool(verified), **info}
    print(f"  {impl:11s} {record['gbps']:8.1f} GB/s  {ms * 1e3:8.1f} us  {'ok' if verified else 'WRONG OUTPUT'}",
          flush=True)
    return record


def _ratios(records: list[dict]) -> None:
    """ratio_vs_cub_cpp on coop (and hand-written) rows, ratio_vs_copy on every row; verified rows only."""
    ok = [r for r in records if r.get("type") == "throughput" and "gbps" in r and r.get("verified")]
    ceiling = max((r["gbps"] for r in ok if r["impl"] == "copy"), default=None)
    read = max((r["gbps"] for r in ok if r["impl"] == "read"), default=None)
    cub = {r["kernel"]: r["gbps"] for r in ok if r["impl"] == "cub_cpp"}
    for r in ok:
        if r["impl"] in ("coop", "handwritten") and r["kernel"] in cub:
            r["ratio_vs_cub_cpp"] = r["gbps"] / cub[r["kernel"]]
        if ceiling:
            r["ratio_vs_copy"] = r["gbps"] / ceiling
        if read and (r.get("operation") in READ_BOUND or r["impl"] == "read"):
            r["ratio_vs_read"] = r["gbps"] / read


def _dump_sass(records, cases, extra, where: dict, family, outdir: Path, everything: bool) -> None:
    """SASS of cuda.coop and CUB side by side: for every case, or for those below 0.98x CUB."""
    missed = {r["kernel"] for r in records if r.get("impl") == "coop" and r.get("ratio_vs_cub_cpp", 1.0) < 0.98}
    for case in cases:
        if not (everything or case.kernel in missed):
            continue
        for impl in ("coop", "handwritten", "cub_cpp"):
            built = extra.get((case.kernel, impl), {}).get("_built")
            if built is not None:
                produce = lambda built=built: cub_build.sass(built.cubin)  # noqa: E731
            elif impl == "cub_cpp" and family.cub_symbol(case) in where:
                symbol = family.cub_symbol(case)
                produce = lambda symbol=symbol: cub_build.sass(where[symbol], symbol)  # noqa: E731
            else:
                continue
            try:
                text = produce()
            except Exception as exc:
                text = f"no SASS: {exc}"
            path = outdir / "sass" / f"{case.kernel}.{impl}.sass"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
