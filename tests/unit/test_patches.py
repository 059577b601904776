"""The patch tables (CONTRIBUTING.md, "Patches"): every attribute a backend replaces, and every one its patches rely
on, exists in the installed (pinned) compiler before cuda.coop touches it; after ``install`` each replaced attribute
is cuda.coop's, and installing again changes nothing."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from cuda.coop._patching import AROUND_A_CALL, Patch, defined_in, kind, resolve

SRC = Path(__file__).resolve().parents[2] / "src"

# Resolves targets in a process that imports the compiler but not cuda.coop's backend: the release as installed.
_PRISTINE = r"""
import json, sys
from cuda.coop._patching import kind, resolve
found = {}
for target in json.loads(sys.argv[1]):
    try:
        found[target] = kind(resolve(target))
    except LookupError as exc:
        found[target] = "missing: " + str(exc)
assert not [m for m in sys.modules if m.startswith(("cuda.coop.numba_mlir", "cuda.coop.cutlass"))]
print(json.dumps(found))
"""


def _pristine_kinds(targets: list[str]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CUDA_COOP_")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(SRC), env.get("PYTHONPATH")]))
    done = subprocess.run([sys.executable, "-c", _PRISTINE, json.dumps(targets)], capture_output=True, text=True,
                          timeout=300, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def _check_table(patches: tuple[Patch, ...], module: str) -> None:
    assert patches and len({p.name for p in patches}) == len(patches)
    for patch in patches:
        assert patch.targets and patch.reason and patch.removal and patch.when and patch.where, patch.name
        assert (patch.install is None) == (patch.when == AROUND_A_CALL), patch.name
        if patch.install is not None:
            assert patch.install.__module__ == module and patch.install.__name__ == patch.name


def _check_installed(patches: tuple[Patch, ...], pristine: dict[str, str]) -> None:
    """Each target and each name relied on is in the release; a replaced attribute is cuda.coop's now, of the kind
    it replaced (a function for a function, keeping the original as ``__wrapped__``), and installing again wraps
    nothing twice."""
    assert {t: k for t, k in pristine.items() if k.startswith("missing")} == {}
    for patch in patches:
        if patch.install is None:
            continue
        patch.install()
        installed = {target: resolve(target) for target in patch.targets}
        patch.install()
        for target, value in installed.items():
            assert resolve(target) is value, f"{patch.name}: installing again replaced {target}"
            assert (defined_in(value) or "").startswith("cuda.coop."), f"{patch.name}: {target} is not cuda.coop's"
            assert kind(value) == pristine[target], f"{patch.name}: {target} was a {pristine[target]}"
            if kind(value) == "callable":  # a wrapper keeps the compiler's own as __wrapped__
                original = getattr(value.__func__ if isinstance(value, (classmethod, staticmethod)) else value,
                                   "__wrapped__", None)
                assert original is not None and not (defined_in(original) or "").startswith("cuda.coop."), target


def _all_names(patches: tuple[Patch, ...]) -> list[str]:
    return sorted({name for patch in patches for name in (*patch.targets, *patch.relies_on)})


def test_the_numba_cuda_mlir_patches():
    pytest.importorskip("numba_cuda_mlir")  # the backend raises ImportError, not a skip, without its compiler
    from cuda.coop.numba_mlir import _patches

    _check_table(_patches.PATCHES, _patches.__name__)
    assert sum(len(p.targets) for p in _patches.PATCHES if p.install is not None) == 12
    _check_installed(_patches.PATCHES, _pristine_kinds(_all_names(_patches.PATCHES)))


def test_the_compile_only_target_is_put_back():
    pytest.importorskip("numba_cuda_mlir")
    from numba_cuda_mlir import tools

    from cuda.coop.numba_mlir import _patches

    before = tools._cached_cc
    with _patches.compile_only_target((10, 0)):
        assert tools._cached_cc == (10, 0)
    assert tools._cached_cc == before


def test_the_cute_dsl_patches():
    pytest.importorskip("cutlass")  # the backend raises ImportError, not a skip, without its compiler
    from cuda.coop.cutlass import _patches

    _check_table(_patches.PATCHES, _patches.__name__)
    _check_installed(_patches.PATCHES, _pristine_kinds(_all_names(_patches.PATCHES)))


def test_the_cute_dsl_compiler_makes_its_pass_manager_as_the_quiet_link_expects():
    """The data-layout filter's window is the pass manager's run: the DSL's compiler holds the ``passmanager`` module
    whose ``PassManager.parse`` it calls."""
    pytest.importorskip("cutlass")
    from cutlass._mlir import passmanager
    from cutlass.cutlass_dsl import CuTeDSL

    import cuda.coop.cutlass  # noqa: F401  (installs the patches)

    assert CuTeDSL._get_dsl().compiler_provider.passmanager is passmanager
