"""What numba-cuda-mlir says when it cannot compile a user callable, in Python terms: the failure text of this
backend's callable compilation (``_lowering.operator_link``)."""
from __future__ import annotations

import re

_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")
_NOISE = ("Failed in ", "During:", "NOTE:", "Please ", "This error may have been caused", "Enable logging",
          "For more information", "- Resolution failure", "Rejected as the implementation raised",
          "This line in your program", "and attach the full traceback")
_IR_LINE = re.compile(r"%[\w.]+\s*=|!llvm|\bllvm\.\w|\bloc\(|^(func|gpu|module|builtin)\.\w|^\s*\^\s*$")
_REWRITES = (
    # a message raised as a tuple of strings (numba's "wrong tuple length" check) reads as one sentence
    (re.compile(r"^\('([^']*)', '([^']*)'\)$"), r"\1\2"),
    (re.compile(r" for '\$[^']*'"), ""),
    (re.compile(r",? defined at (?:None|\S+)"), ""),
    (re.compile(r"Function\(<(?:built-in )?function ([\w.]+)(?: at 0x[0-9a-fA-F]+)?>\)"), r"\1"),
    (re.compile(r"UniTuple\((\w+) x (\d+)\)"), r"tuple of \2 \1"),
    (re.compile(r"\bTuple\(([^()]*)\)"), r"tuple (\1)"),
    (re.compile(r"Literal\[(\w+)\]\(([^()]*)\)"), r"\1 literal \2"),
    (re.compile(r"'\$[\w.]+'|\$[\w.]+"), "a temporary value"),
    (_ADDRESS, ""),
)


def failure_reason(exc: BaseException) -> str:
    """The first meaningful line of a callback compile failure, in Python terms (no IR, no source excerpts)."""
    lines, in_excerpt = [], False
    for raw in str(exc).splitlines():
        line = raw.strip()
        if not line:
            in_excerpt = False  # a source excerpt ("File ...", code, "^") ends at a blank line
            continue
        if line.startswith('File "'):
            in_excerpt = True
            continue
        if in_excerpt or line.startswith(_NOISE) or _IR_LINE.search(line):
            continue
        lines.append(line)
    if not lines:
        return type(exc).__name__
    reason = lines[0]
    if reason.endswith(":") and len(lines) > 1 and lines[1].startswith(">>>"):  # "... found for signature:"
        reason += " " + lines[1].lstrip("> ").strip()
    for pattern, replacement in _REWRITES:
        reason = pattern.sub(replacement, reason)
    reason = reason.strip()
    return reason if len(reason) <= 300 else reason[:297] + "..."
