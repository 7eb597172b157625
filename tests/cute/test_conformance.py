"""cutekit.cute prints what CuTeDSL 4.8.1 prints, or refuses where it refuses, on a seeded sample of random
cases of the whole layout algebra (tests/cute/conformance.py draws them; `scripts/conformance.py --cases N`
runs a long one). CuTeDSL is traced once for the whole sample, and its answers are cached by the cases' digest,
so a second run costs only cutekit's side."""
import functools

import pytest

from tests.sweep import pick

from . import conformance

pytest.importorskip("cutlass")
pytestmark = pytest.mark.cutedsl

SAMPLE = pick(quick=2000, deep=5000)       # tests/sweep.py; `make conformance` runs 200,000


@functools.cache
def sample():
    return conformance.make_cases(SAMPLE, seed=2025)


def test_a_seeded_sample_of_the_layout_algebra_agrees_with_cutedsl():
    bad, counts = conformance.run(sample())
    assert not bad, conformance.report(bad, counts)


def test_a_refusal_is_a_cute_error_naming_the_rule_never_a_failure_inside():
    crashes = [(conformance.describe(c), o) for c, o in zip(sample(), conformance.reference(sample()))
               if o.startswith("CRASH")]
    assert not crashes, crashes[:5]
    refusals = [o for o in conformance.reference(sample()) if o.startswith("ERROR")]
    assert refusals and all(o.startswith("ERROR: CuteError: ") and len(o) > 40 for o in refusals)


def test_the_generator_draws_the_cases_the_issue_names():
    cases = sample()
    names = {name for name, _, _ in cases}
    for name in ["make_layout", "make_ordered_layout", "size", "rank", "depth", "shape", ".stride", "coalesce",
                 "filter", "filter_zeros", "composition", "complement", "right_inverse", "left_inverse",
                 "logical_divide", "zipped_divide", "tiled_divide", "flat_divide", "logical_product",
                 "zipped_product", "tiled_product", "flat_product", "blocked_product", "raked_product", "select",
                 "group_modes", "flatten", "idx2crd", "crd2idx", "max_common_layout", "max_common_vector"]:
        assert name in names, name
    layouts = [a for _, args, _ in cases for a in args if isinstance(a, conformance.cute.Layout)]
    assert max(conformance.cute.rank(l) for l in layouts) == 4
    assert max(conformance.cute.depth(l) for l in layouts) == 3
    assert any(0 in conformance.cute.flatten(l.stride) if isinstance(l.stride, tuple) else l.stride == 0
               for l in layouts)
