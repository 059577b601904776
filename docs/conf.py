"""Sphinx configuration of the cuda-coop documentation.

Build: ``python -m sphinx -W --keep-going -b html docs <outdir>`` (warnings are errors; the test
suite runs the same build in ``tests/unit/test_docs_build.py``).
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))  # document the working tree, also when it is not installed
sys.path.insert(0, str(ROOT / "docs" / "_ext"))  # coop_pictures, coop_tables: drawn by the library

# The API pages import cuda.coop.numba_mlir, which registers the backend; nothing is compiled.
os.environ.setdefault("CUDA_COOP_DISABLE_CACHE", "1")

import cuda.coop  # noqa: E402

project = "cuda-coop"
author = "the cuda-coop developers"
copyright = "the cuda-coop developers"  # noqa: A001
release = cuda.coop.__version__
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "coop_pictures",
    "coop_tables",
]

exclude_patterns = ["_build", "_ext"]
templates_path: list[str] = []
html_static_path: list[str] = []
root_doc = "index"
default_role = "literal"  # single backquotes read as code, as in the docstrings
highlight_language = "python3"

# autodoc: signatures come from the markers' __signature__; options are shown as declared.
autodoc_member_order = "bysource"
autodoc_typehints = "signature"
autodoc_default_options = {"undoc-members": False}
autodoc_preserve_defaults = False  # qualified markers extend their signatures
add_module_names = True

# Google-style docstrings.
napoleon_google_docstring = True
napoleon_numpy_docstring = False
napoleon_use_rtype = False
napoleon_use_param = True

try:
    import furo  # noqa: F401

    html_theme = "furo"
    html_theme_options = {"navigation_with_keys": True}
except ImportError:  # a plain build still works without the theme
    html_theme = "alabaster"
    html_theme_options = {}

html_title = f"cuda-coop {release}"
html_show_sourcelink = False
