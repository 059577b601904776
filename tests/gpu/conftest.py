"""The GPU tests' random inputs: each test draws from its own generator, seeded from its node id."""
from __future__ import annotations

import pytest

from gpu_helpers import generator_for


@pytest.fixture(autouse=True)
def _generator_per_test(request, monkeypatch):
    """A module's global ``rng`` (``gpu_helpers.SEEDED_PER_TEST``, or a generator of its own) becomes, for the length
    of each test, ``generator_for(node id)``: a failure is reproduced by running that test alone (``-k``), whatever
    ran before it, and inputs do not change when tests are added or deselected."""
    module = getattr(request, "module", None)
    if module is not None and hasattr(module, "rng"):
        monkeypatch.setattr(module, "rng", generator_for(request.node.nodeid))
