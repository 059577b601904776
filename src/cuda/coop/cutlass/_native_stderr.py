"""Lines that native code writes to the process's standard error, filtered while one call runs (``_patches``: the DSL's
LLVM prints a harmless data-layout warning per bitcode link straight to file descriptor 2, where no Python stream,
logger or warnings filter sees it).

File descriptor 2 belongs to the whole process, so while any filter is open everything written to it, by any thread
and by Python's ``sys.stderr`` too, goes to a temporary file, and is written back when the last open filter closes:
less the lines holding a filtered text (and the blank line after each), in the order it came, nothing else lost.
Filters open in several threads at once share that one capture, so the process's own descriptor is always the one put
back. Callers keep the window to the native call that prints the text.
"""
from __future__ import annotations

import contextlib
import os
import sys
import tempfile
import threading
from typing import IO, Iterator

_lock = threading.Lock()
_open = 0  # filters open now
_needles: list[bytes] = []  # what the open filters drop
_saved = -1  # a duplicate of the process's own descriptor 2 while a filter is open
_capture: IO[bytes] | None = None


@contextlib.contextmanager
def native_stderr_without(needle: bytes) -> Iterator[None]:
    """Inside, the lines holding ``needle`` (and the blank line after each) never reach file descriptor 2."""
    _begin(needle)
    try:
        yield
    finally:
        _end()


def _flush_python_stderr() -> None:
    if sys.stderr is not None:
        sys.stderr.flush()  # what Python buffered before (or during) the window goes where it was written


def _begin(needle: bytes) -> None:
    global _open, _saved, _capture
    with _lock:
        if not _open:
            _flush_python_stderr()
            _capture = tempfile.TemporaryFile()
            _saved = os.dup(2)
            os.dup2(_capture.fileno(), 2)
        _open += 1
        _needles.append(needle)


def _end() -> None:
    global _open, _saved, _capture
    with _lock:
        _open -= 1
        if _open:
            return
        _flush_python_stderr()
        os.dup2(_saved, 2)
        os.close(_saved)
        assert _capture is not None
        _capture.seek(0)
        text = _capture.read()
        _capture.close()
        needles = tuple(_needles)
        _saved, _capture = -1, None
        _needles.clear()
        kept = memoryview(b"".join(_without(text, needles)))
        while kept:
            kept = kept[os.write(2, kept):]


def _without(text: bytes, needles: tuple[bytes, ...]) -> list[bytes]:
    kept, dropped = [], False
    for line in text.splitlines(keepends=True):
        hit = any(needle in line for needle in needles)
        if hit or (dropped and not line.strip()):  # the warning, and the blank line after it
            dropped = hit
            continue
        dropped = False
        kept.append(line)
    return kept
