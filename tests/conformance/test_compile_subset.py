"""compile_subset, what the CPU compile test builds, keeps its promise: one case for every (family, variant, dtype)
group of CASES, and the (block shape, K) combinations spread over them (issue 38: it once left 8 groups unbuilt)."""
from __future__ import annotations

import collections

import numpy as np

from .cases import CASES, combination_of, compile_subset, group_of


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
