"""The documentation's recipes (tests/docs_snippets/recipes.py, included by the pages) build for sm_90."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import cuda.coop.numba_mlir as numba_coop

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "docs_snippets"))
import recipes as r  # noqa: E402

DOCS = Path(__file__).resolve().parents[2] / "docs"
N = r.THREADS * r.K
CASES = {
    "partial-histogram": (r.histogram_partial, (np.zeros(N, np.uint8), np.zeros(2 * r.THREADS, np.int32), 100)),
    "partial-radix-sort": (r.radix_sort_partial, (np.zeros(N, np.uint32), np.zeros(N, np.uint32), 100)),
    "running-inclusive-sum": (r.running_inclusive_sum, (np.zeros(4 * N, np.int64), np.zeros(4 * N, np.int64), 4)),
    "wide-rows": (r.row_sums, (np.zeros(3 * 1500, np.float64), np.zeros(3, np.float64), 1500)),
    "local-and-shared": (r.sort_rows_in_shared, (np.zeros(N, np.int32), np.zeros(N, np.int32))),
}


@pytest.mark.parametrize("name", list(CASES))
def test_recipe_builds(name):
    kernel, args = CASES[name]
    built = numba_coop.compile_kernel(kernel, args, block=r.THREADS)
    assert "CALL" not in built.sass()


def test_every_recipe_is_included_by_a_page():
    markers = set()
    for page in DOCS.rglob("*.rst"):
        text = page.read_text()
        if "docs_snippets/recipes.py" in text:
            markers |= {name for name in CASES if f":start-after: # [{name}]" in text}
    assert markers == set(CASES)
