"""What a traced ``if`` condition derives from, for G21 (docs: concepts, "Participation"): a walk back through the
MLIR of a CuTe kernel, in terms of ``_dsl``'s accessors.

A value derives from what its operation reads, except where control flow says more, and a tensor from nothing: it is
the same memory in every thread (loaded data is not classified; a load's index is). An ``if``'s result derives from
what its branches yield for it, and from its condition unless both yield one value (CuTe threads every variable a
branch may assign through the ``if``: a tensor a thread-0 branch stores to comes out unchanged). A loop's result, and
a variable the loop carries, derive from the variable's initial value, what the body yields for it and what decides
the trip count (a ``for``'s bounds, a ``while``'s condition). A kernel parameter derives from nothing, and what the
walk cannot classify (another call's result, an unknown region) passes.
"""
from __future__ import annotations

from typing import Any

from . import _dsl

LIMIT = 400  # values visited per condition: a kernel's conditions rarely reach more


def divergent_condition(op: Any, sources: dict[str, str], varying_calls: dict[str, str]) -> tuple[str, bool] | None:
    """What the condition of an ``if``, or the trip count of a ``for``, around ``op`` depends on, when it derives from
    one of ``sources`` (op name -> words) or from a call of a symbol in ``varying_calls``, and whether it is a loop's;
    else None."""
    parent = op.parent
    with _dsl.reading_ir():
        while parent is not None and parent.name not in _dsl.KERNEL_OPS:
            # an if's condition, or a for loop's bounds and step (a trip count that differs between members)
            deciding = parent.operands[:1] if parent.name == "scf.if" else \
                list(parent.operands)[:3] if parent.name == "scf.for" else []
            for value in deciding:
                found = depends_on(value, sources, varying_calls)
                if found is not None:
                    return found, parent.name == "scf.for"
            parent = parent.parent
    return None


def depends_on(value: Any, sources: dict[str, str], varying_calls: dict[str, str]) -> str | None:
    seen: set[tuple[int, int, int]] = set()  # (operation, region of an argument or -1 for a result, number)
    queue = [value]
    while queue and len(seen) < LIMIT:
        current = _dsl.raw_value(queue.pop())
        if current is None or _dsl.is_tensor_value(current):  # a tensor is the same memory in every thread
            continue
        argument = _dsl.block_argument(current)
        if argument is not None:
            owner, region, number = argument
            if (hash(owner), region, number) not in seen:
                seen.add((hash(owner), region, number))
                queue.extend(_sources_of_argument(owner, region, number))
            continue
        operation = _dsl.defining_operation(current)
        if operation is None:
            continue
        number = _dsl.result_number(current) if operation.name in ("scf.if", "scf.for", "scf.while") else -1
        if (hash(operation), -1, number) in seen:
            continue
        seen.add((hash(operation), -1, number))
        if operation.name in sources:
            return sources[operation.name]
        if operation.name == "func.call":
            if _dsl.callee(operation) in varying_calls:
                return varying_calls[_dsl.callee(operation)]
            continue  # another call's result: not classified
        queue.extend(_sources_of_result(operation, number))
    return None


def _yielded(operation: Any, region: int, number: int) -> list[Any]:
    """Operand ``number`` of the region's terminator (``scf.yield``, ``scf.condition``), or none while the tracer is
    still inside the region (its terminator comes last: what a later iteration brings back is not known yet)."""
    operations = list(operation.regions[region].blocks[0].operations) if len(operation.regions[region].blocks) else []
    if not operations or operations[-1].name not in ("scf.yield", "scf.condition"):
        return []
    operands = list(operations[-1].operands)
    return operands[number:number + 1]


def _sources_of_result(operation: Any, number: int) -> list[Any]:
    if number < 0:
        return list(operation.operands)
    if operation.name == "scf.if":
        yields = [v for region in range(len(operation.regions)) for v in _yielded(operation, region, number)]
        raw = [_dsl.raw_value(v) for v in yields]
        if len(raw) == 2 and all(r is not None for r in raw) and _dsl.same_value(raw[0], raw[1]):
            return yields[:1]
        return [operation.operands[0], *yields]
    if operation.name == "scf.for":  # operands: lower bound, upper bound, step, then the carried variables
        return [*list(operation.operands)[:3], operation.operands[3 + number], *_yielded(operation, 0, number)]
    # scf.while: its test ends in scf.condition(decision, the values passed on)
    return [*_yielded(operation, 0, 0), *_yielded(operation, 0, 1 + number)]


def _sources_of_argument(owner: Any, region: int, number: int) -> list[Any]:
    if owner.name == "scf.for" and region == 0:  # argument 0 is the induction variable
        if number == 0:
            return list(owner.operands)[:3]
        return [owner.operands[3 + number - 1], *_yielded(owner, 0, number - 1)]
    if owner.name == "scf.while" and region == 0:  # before the test: the initial value, or what the body yields
        return [owner.operands[number], *_yielded(owner, 1, number)]
    if owner.name == "scf.while" and region == 1:  # the body: what the test passed on
        return _yielded(owner, 0, 1 + number)
    return []  # a kernel parameter, or a region the walk does not know
