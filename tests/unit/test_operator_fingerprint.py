"""The symbol of a user operator (SPEC 8.0, 1.6): it follows what the operator is (its code, constants, closure,
defaults, the globals it names) and never the process around it (docs: operations/operators, "Your own function").
"""
from __future__ import annotations

import glob
import importlib
import linecache
import os
import re
import sys
import time
import types

from re import compile as compile_pattern

import numpy as np

from cuda.coop._semantics.operators import callable_symbol


def library_like(value):
    """Library code often names process-wide state; an operator calling it must not be described by that state."""
    if linecache.cache is None or not sys.modules:  # never true: only the names matter
        return value
    return value


def calls_library_like(a, b):
    return library_like(a) + b


def reads_os_module(a, b):
    return a + b if os.sep else a


def calls_a_library_function(a, b):
    """``re.compile`` reads ``re``'s pattern cache, which grows as the process compiles patterns."""
    return a + b if compile_pattern else a


OPERATORS = (calls_library_like, reads_os_module, calls_a_library_function)


def _fill_linecache_and_import():
    """What a long-running process does between two builds: read source files, import modules."""
    files = sorted(glob.glob(os.path.join(os.path.dirname(np.__file__), "**", "*.py"), recursive=True))[:150]
    for path in files:
        linecache.getline(path, 1)
    for name in ("xml.dom.minidom", "email.mime.text", "json.tool", "html.parser", "wave"):
        importlib.import_module(name)
    re.compile(f"unrelated pattern {time.perf_counter_ns()}")


def test_the_symbol_ignores_linecache_and_sys_modules():
    before = [callable_symbol(op, "float32") for op in OPERATORS]
    _fill_linecache_and_import()
    sys.modules["cuda_coop_unrelated_module"] = types.ModuleType("cuda_coop_unrelated_module")
    try:
        after = [callable_symbol(op, "float32") for op in OPERATORS]
    finally:
        del sys.modules["cuda_coop_unrelated_module"]
    assert before == after


def test_the_symbol_is_quick_in_a_process_that_read_many_files():
    _fill_linecache_and_import()
    start = time.perf_counter()
    for _ in range(20):
        for op in OPERATORS:
            callable_symbol(op, "int32")
    assert time.perf_counter() - start < 2.0


# ---- what the operator is: each change gives another symbol
LIMIT = 3
CONFIG = types.ModuleType("fingerprint_test_config")
CONFIG.factor = 2
CONFIG.__version__ = "1.0"


def uses_limit(a, b):
    return a + b if a < LIMIT else b


def uses_module_constant(a, b):
    return a + b * CONFIG.factor


def calls_uses_limit(a, b):
    return uses_limit(a, b) * 2


def _changes(function, change, undo):
    before = callable_symbol(function, "int32")
    change()
    try:
        return callable_symbol(function, "int32") != before
    finally:
        undo()


def _set(namespace, name, value):
    old = getattr(namespace, name)
    return (lambda: setattr(namespace, name, value)), (lambda: setattr(namespace, name, old))


def test_the_symbol_follows_the_code_and_its_constants():
    original = uses_limit.__code__
    assert _changes(uses_limit, lambda: setattr(uses_limit, "__code__", (lambda a, b: a - b).__code__),
                    lambda: setattr(uses_limit, "__code__", original))
    assert callable_symbol(lambda a, b: a + b * 2, "int32") != callable_symbol(lambda a, b: a + b * 3, "int32")


def test_the_symbol_follows_globals_closures_and_called_functions():
    this = sys.modules[__name__]
    assert _changes(uses_limit, *_set(this, "LIMIT", 4))
    assert _changes(calls_uses_limit, *_set(this, "LIMIT", 4))  # a global of a function it calls

    def closure(value):
        return lambda a, b: a + b * value

    assert callable_symbol(closure(2), "int32") != callable_symbol(closure(3), "int32")
    assert callable_symbol(closure(2), "int32") == callable_symbol(closure(2), "int32")


def test_a_module_is_its_name_version_and_the_constants_read_from_it():
    assert _changes(uses_module_constant, *_set(CONFIG, "factor", 5))
    assert _changes(uses_module_constant, *_set(CONFIG, "__version__", "2.0"))
    CONFIG.unrelated = 0
    try:
        assert not _changes(uses_module_constant, *_set(CONFIG, "unrelated", 1))
    finally:
        del CONFIG.unrelated
