"""python -m benchmarks.sass_audit [--only REGEX]: the static audit of issue 40, without a GPU.

Each audited row is built as the benchmark builds it (the CuTe kernel with ``cute_coop.compile_kernel``, the
numba-cuda-mlir kernel with ``numba_coop.compile_kernel``, both for sm_90 at the launch's block and grid) beside its
CUB C++ twin (``cub/*.cu``, every twin in one nvcc run), and the SASS of each is reduced to the classes a change
of algorithm moves: barriers, shared-memory loads, stores and atomics, global accesses by width, local memory,
calls, static instruction count, and the registers that set how many 256-thread blocks an SM keeps.
``tests/compile/test_benchmark_sass.py`` holds the rows to these numbers.
"""
from __future__ import annotations

import argparse
import collections
import re
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np

from . import cub_build

# sm_90: 64K registers and 2048 threads per SM, at most 32 blocks; registers are given to a warp in units of 256
# (8 per thread); 228 KiB of shared memory per SM, 1 KiB of it reserved per block.
REGISTERS_PER_SM = 65536
THREADS_PER_SM = 2048
BLOCKS_PER_SM = 32
SHARED_PER_SM = 228 * 1024
SHARED_RESERVED_PER_BLOCK = 1024
REGISTER_UNIT = 256

# an instruction line of cuobjdump -sass: address, optional predicate, opcode with its modifiers
_INSTRUCTION = re.compile(r"/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P[T0-9]\s+)?([A-Z][A-Z0-9_]*(?:\.[A-Z0-9_]+)*)")
_WIDTHS = {"U8": 8, "S8": 8, "U16": 16, "S16": 16, "64": 64, "128": 128}


def blocks_per_sm(registers: int, threads: int = 256, shared_bytes: int = 0) -> int:
    """Resident blocks of ``threads`` threads per sm_90 SM, from registers, threads and static shared memory."""
    warps = -(-threads // 32)
    per_warp = -(-max(registers, 1) * 32 // REGISTER_UNIT) * REGISTER_UNIT
    by_registers = (REGISTERS_PER_SM // per_warp) // warps
    by_shared = SHARED_PER_SM // (shared_bytes + SHARED_RESERVED_PER_BLOCK)
    return min(BLOCKS_PER_SM, THREADS_PER_SM // threads, by_registers, by_shared)


def _width(modifiers: list[str]) -> int:
    return next((_WIDTHS[m] for m in modifiers if m in _WIDTHS), 32)


def classes(sass: str) -> collections.Counter:
    """The instruction classes of one kernel's SASS (``cuobjdump -sass`` of a single function).

    Keys: ``instructions`` (every instruction but NOP), ``BAR`` (block barriers), ``LDS``, ``STS``, ``ATOMS``
    (shared memory), ``LD``/``ST`` (generic addresses), ``LDL``/``STL`` (local memory), ``CALL``, ``MEMBAR``,
    ``LDG.<bits>``/``STG.<bits>`` (global loads and stores by width), ``global atomics`` (RED, REDG, ATOM, ATOMG)
    and ``SHFL``.
    """
    out: collections.Counter = collections.Counter()
    for match in _INSTRUCTION.finditer(sass):
        opcode, *modifiers = match.group(1).split(".")
        if opcode == "NOP":
            continue
        out["instructions"] += 1
        if opcode in ("LDG", "STG"):
            out[f"{opcode}.{_width(modifiers)}"] += 1
        elif opcode in ("LDSM",):
            out["LDS"] += 1
        elif opcode in ("RED", "REDG", "ATOM", "ATOMG"):
            out["global atomics"] += 1
        elif opcode in ("BAR", "LDS", "STS", "ATOMS", "LD", "ST", "LDL", "STL", "CALL", "MEMBAR", "SHFL"):
            out[opcode] += 1
    return out


def global_accesses(counts: collections.Counter) -> dict[str, int]:
    """The global loads and stores by width (``LDG.128``: 128-bit loads)."""
    return {k: v for k, v in sorted(counts.items()) if k.startswith(("LDG.", "STG."))}


@dataclass
class Side:
    """One built kernel: its resources and SASS classes."""

    registers: int
    shared_bytes: int
    local_bytes: int
    counts: collections.Counter = field(repr=False)

    @property
    def blocks(self) -> int:
        return blocks_per_sm(self.registers, 256, self.shared_bytes)

    def get(self, key: str) -> int:
        return self.counts.get(key, 0)


def _side(built) -> Side:
    """A cuda.coop ``CompiledKernel`` (either backend)."""
    return Side(built.registers, built.shared_memory_bytes, built.local_memory_bytes, classes(built.sass()))


# --- the rows ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class AuditRow:
    """A benchmark row: the CuTe row of ``cute.py`` (``cute``) or a numba family's case (``family``, ``kernel``)."""

    name: str
    cute: str = ""  # cute.ROWS name: the CuTe kernel, numba kernel and twin of that row
    family: str = ""  # or a numba family module and its Case.kernel
    kernel: str = ""


def cute_rows(pattern: str = "") -> list[AuditRow]:
    from . import cute

    return [AuditRow(r.name, cute=r.name) for r in cute.ROWS if re.search(pattern, r.name)]


def family_rows(family: str, pattern: str = "") -> list[AuditRow]:
    import importlib

    module = importlib.import_module(f".{family}", __package__)
    return [AuditRow(c.kernel, family=family, kernel=c.kernel) for c in module.cases()
            if "coop" in c.impls and "cub_cpp" in c.impls and re.search(pattern, c.kernel)]


def _cute_row(row: AuditRow):
    from . import cute

    return next(r for r in cute.ROWS if r.name == row.cute)


def _family_case(row: AuditRow):
    import importlib

    module = importlib.import_module(f".{row.family}", __package__)
    return module, next(c for c in module.cases() if c.kernel == row.kernel)


def twin_instance(row: AuditRow) -> tuple[str, str, str]:
    """(CUB source, symbol, instantiation line) of the row's twin."""
    if row.cute:
        r = _cute_row(row)
        return r.cub_source, r.symbol, r.cub_macro.format(sym=r.symbol)
    module, case = _family_case(row)
    ((symbol, line),) = module.cub_instances([case])
    return module.CUB_SOURCE, symbol, line


def start_twins(rows: list[AuditRow], workdir: Path) -> Callable[[], dict[str, Side]]:
    """Start every row's twin in one background nvcc run (all sources in one translation unit); the function
    returned waits for it and gives row name -> Side."""
    instances = {row.name: twin_instance(row) for row in rows}
    sources = sorted({source for source, _, _ in instances.values()})
    lines = list(dict.fromkeys((symbol, line) for _, symbol, line in instances.values()))
    build = cub_build.start(sources, lines, workdir, jobs=1)

    def finish() -> dict[str, Side]:
        where = build.wait()
        usage = {k: v for cubin in build.cubins() for k, v in cub_build.res_usage(cubin).items()}
        out = {}
        for name, (_, symbol, _) in instances.items():
            res = usage[symbol]
            out[name] = Side(res["registers"], res["shared_bytes"], res["local_bytes"],
                             classes(cub_build.sass(where[symbol], symbol)))
        return out

    return finish


def build_numba(row: AuditRow, n: int = 1 << 24) -> Side:
    """The row's numba-cuda-mlir kernel as the dry run builds it."""
    import cuda.coop.numba_mlir as numba_coop

    if row.cute:
        from . import cute

        return _side(cute.numba_build(_cute_row(row), n))
    module, case = _family_case(row)
    sample = np.zeros(16, dtype=case.dtype)
    built = numba_coop.compile_kernel(module.numba_kernel("coop", case), module.compile_args("coop", case, sample),
                                      block=case.threads, grid=case.grid(n), target=cub_build.ARCH)
    return _side(built)


def build_cute(row: AuditRow, n: int = 1 << 24) -> Side | None:
    """The row's CuTe kernel (None for a numba family's row: the CuTe rows are cute.py's)."""
    if not row.cute:
        return None
    from . import cute

    return _side(cute.cute_build(_cute_row(row), n))


# --- the table ----------------------------------------------------------------------------------

COLUMNS = ("registers", "blocks", "instructions", "BAR", "LDS", "STS", "ATOMS", "global", "global atomics", "LDL+STL",
           "CALL")


def describe(side: Side) -> dict[str, object]:
    g = global_accesses(side.counts)
    return {"registers": side.registers, "blocks": side.blocks, "instructions": side.get("instructions"),
            "BAR": side.get("BAR"), "LDS": side.get("LDS"), "STS": side.get("STS"), "ATOMS": side.get("ATOMS"),
            "global": " ".join(f"{k}x{v}" for k, v in g.items()), "global atomics": side.get("global atomics"),
            "LDL+STL": side.get("LDL") + side.get("STL") + side.local_bytes, "CALL": side.get("CALL")}


def table(rows: list[AuditRow], sides: dict[tuple[str, str], Side]) -> str:
    lines = ["| row | impl | " + " | ".join(COLUMNS) + " |", "|---|---|" + "--:|" * (len(COLUMNS) - 1) + "---|"]
    for row in rows:
        for impl in ("cute", "numba", "cub_cpp"):
            side = sides.get((row.name, impl))
            if side is not None:
                d = describe(side)
                lines.append(f"| {row.name} | {impl} | " + " | ".join(str(d[c]) for c in COLUMNS) + " |")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.sass_audit", description=__doc__.split("\n\n")[0])
    p.add_argument("--only", default="", help="a regular expression on the row names")
    p.add_argument("--families", default="sort,tier4,collectives",
                   help="numba families whose rows are audited besides cute.py's (comma-separated)")
    args = p.parse_args(argv)
    rows = cute_rows(args.only)
    for family in filter(None, args.families.split(",")):
        rows += family_rows(family, args.only)
    sides: dict[tuple[str, str], Side] = {}
    with tempfile.TemporaryDirectory() as tmp:
        twins = start_twins(rows, Path(tmp))  # nvcc runs while ours build
        for row in rows:
            cute_side = build_cute(row)
            if cute_side is not None:
                sides[(row.name, "cute")] = cute_side
            sides[(row.name, "numba")] = build_numba(row)
        for name, side in twins().items():
            sides[(name, "cub_cpp")] = side
    print(table(rows, sides))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
