"""compile_subset, what the CPU compile test builds, keeps its promise: one case for every (family, variant, dtype)
group of CASES, and the (block shape, K) combinations spread over them (issue 38: it once left 8 groups unbuilt)."""
from __future__ import annotations

import collections

import numpy as np

from .cases import BATCH_SIZE, CASES, combination_of, compile_batches, compile_subset, group_of


def test_every_group_is_built_exactly_once():
    groups = collections.Counter(group_of(case) for case in compile_subset())
    assert sorted(groups) == sorted({group_of(case) for case in CASES})
    assert set(groups.values()) == {1}


def test_a_group_is_family_variant_dtype():
    for case in CASES:
        family, _, rest = group_of(case).partition("-")
        variant, _, dtype = rest.rpartition("-")
        assert family == case.family and variant, case.id
        assert np.dtype(dtype).name == dtype, case.id
        assert case.id.startswith(f"{family}-{variant}-{dtype}-k"), case.id


def test_every_combination_is_built_and_each_family_builds_all_it_can():
    built = {combination_of(case) for case in compile_subset()}
    assert {(block, k) for _, block, k in built} == {(block, k) for _, block, k in map(combination_of, CASES)}
    groups, combinations = collections.defaultdict(set), collections.defaultdict(set)
    for case in CASES:
        groups[case.family].add(group_of(case))
        combinations[case.family].add(combination_of(case))
    for family in groups:
        if len(groups[family]) >= len(combinations[family]):
            assert combinations[family] <= built, family


def test_the_batches_build_every_case_of_the_subset_once():
    """compile_batches (one kernel per batch in the CPU compile test) partitions compile_subset: every case once, in a
    batch of one family and one block shape, at most BATCH_SIZE cases; a case known to fail on that backend alone."""
    subset = [case.id for case in compile_subset()]
    for backend in ("numba-cuda-mlir", "cutlass"):
        batches = compile_batches(backend)
        assert sorted(case.id for batch in batches for case in batch) == sorted(subset)
        for batch in batches:
            assert 1 <= len(batch) <= BATCH_SIZE
            assert len({(case.family, case.block) for case in batch}) == 1, [case.id for case in batch]
            if any(backend in case.known_failures for case in batch):
                assert len(batch) == 1, [case.id for case in batch]
        assert len(batches) < len(subset) / 2  # the point of batching
