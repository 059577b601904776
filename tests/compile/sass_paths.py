"""Reading a kernel's SASS as paths through its branches (not a test module): how many global vector loads a warp
can have in flight in a loop before it must wait for one of them. A load's wait comes with the first instruction
that reads its destination registers, so a branch whose paths meet only after reading a load's result makes every
later load wait for it, which a count of instructions cannot see."""
from __future__ import annotations

import re

_INSTRUCTION = re.compile(r"/\*([0-9a-f]{4,})\*/\s+(@!?U?P[T0-9]\s+)?([A-Z][A-Z0-9_.]*)\s*([^;]*);")
# opcodes whose first operand is not a register they write
_NO_DESTINATION = ("ST", "BRA", "BAR", "EXIT", "BSYNC", "BSSY", "RED", "WARPSYNC", "BPT", "RET", "CALL", "NOP")
VECTOR_LOAD = "LDG.E.128"


def instructions(sass: str) -> list[tuple[int, bool, str, list[str]]]:
    """(address, predicated, opcode, operands) of each instruction of one function's ``cuobjdump -sass``."""
    return [(int(address, 16), bool(predicate), opcode, [o.strip() for o in operands.split(",")] if operands.strip()
             else []) for address, predicate, opcode, operands in _INSTRUCTION.findall(sass)]


def registers(operand: str) -> set[int]:
    """The general registers an operand names (``R4.64``: R4 and R5)."""
    out: set[int] = set()
    for match in re.finditer(r"(?<![A-Z])R(\d+)(\.64)?\b", operand):
        n = int(match.group(1))
        out |= {n, n + 1} if match.group(2) else {n}
    return out


def branch_target(operands: list[str]) -> int | None:
    """A branch's target address (``BRA 0x1a0``, ``BRA !P0, 0x1a0``, ``BRA.U !UP0, 0x1a0``), or None (an indirect
    branch)."""
    targets = [int(o, 16) for o in operands if re.fullmatch(r"0x[0-9a-f]+", o)]
    return targets[-1] if targets else None


def innermost_loop_around(code: list, opcode: str) -> tuple[int, int]:
    """(first, last) indices of the shortest backward branch's loop that holds every ``opcode`` instruction."""
    index = {address: i for i, (address, *_) in enumerate(code)}
    inside = [i for i, (_, _, op, _) in enumerate(code) if op.startswith(opcode)]
    assert inside, f"no {opcode} in the SASS"
    loops = [(index[target], i) for i, (_, _, op, ops) in enumerate(code)
             if op.startswith("BRA") and (target := branch_target(ops)) in index
             and index[target] <= inside[0] and i >= inside[-1]]
    assert loops, f"no loop around the {opcode} instructions"
    return min(loops, key=lambda loop: loop[1] - loop[0])


def vector_loads_in_flight(sass: str, loop_around: str = "SHFL") -> int:
    """The most 16-byte global loads (``LDG.E.128``) that one path through the loop around ``loop_around``
    instructions issues, from the loop's first such load, before an instruction reads a loaded register. Both ways
    of each predicated branch are followed; a predicated write does not end a register's wait."""
    code = instructions(sass)
    index = {address: i for i, (address, *_) in enumerate(code)}
    first, last = innermost_loop_around(code, loop_around)
    start = next((i for i in range(first, last + 1) if code[i][2].startswith(VECTOR_LOAD)), None)
    if start is None:
        return 0
    best, stack, seen = 0, [(start, frozenset(), 0)], set()
    while stack:
        i, waiting, count = stack.pop()
        if not first <= i <= last or (i, waiting) in seen:
            continue
        seen.add((i, waiting))
        _, predicated, opcode, operands = code[i]
        writes = operands[0] if operands and not opcode.startswith(_NO_DESTINATION) else ""
        reads = operands[1:] if writes else operands
        if any(r in waiting for operand in reads for r in registers(operand)):
            continue  # this path waits here
        if opcode.startswith(VECTOR_LOAD):
            base = int(re.match(r"R(\d+)", writes).group(1))
            waiting, count = waiting | frozenset(range(base, base + 4)), count + 1
            best = max(best, count)
        elif not predicated:
            waiting = waiting - frozenset(registers(writes))
        if opcode.startswith("BRA"):
            target = index.get(branch_target(operands))  # type: ignore[arg-type]
            if target is not None:
                stack.append((target, waiting, count))
            if predicated or len(operands) > 1:  # a predicate in front, or one among the operands
                stack.append((i + 1, waiting, count))
        elif not (opcode == "EXIT" and not predicated):
            stack.append((i + 1, waiting, count))
    return best
