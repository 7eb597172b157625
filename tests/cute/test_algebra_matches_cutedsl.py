"""The reference algebra prints exactly what real CuTeDSL 4.8.1 prints, on random layouts and tilers.

Each test draws a few hundred random cases with hypothesis, answers them with cutekit.cute and with CuTeDSL
traced on the CPU (one process per batch, tests/cute/cutedsl_oracle.py), and compares string for string.
Where CuTeDSL refuses an input, the reference must refuse it too.
"""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from cutekit import cute

from tests.sweep import pick

from .cutedsl_oracle import agree, ask, reference

pytest.importorskip("cutlass")
pytestmark = pytest.mark.cutedsl

CASES = pick(quick=100, deep=300)     # hypothesis draws per batch (tests/sweep.py)
batch = settings(max_examples=1, deadline=None, database=None, phases=[Phase.generate],
                 suppress_health_check=list(HealthCheck))

leaf = st.integers(1, 6)
mode = st.one_of(leaf, st.tuples(leaf, leaf), st.tuples(leaf, leaf, leaf))
shape2 = st.tuples(mode, mode)
shape_any = st.one_of(leaf, st.tuples(mode), shape2, st.tuples(mode, mode, leaf))


@st.composite
def compact(draw, shapes=shape_any):
    shape = draw(shapes)
    n = len(cute.flatten(shape)) if isinstance(shape, tuple) else 1
    if draw(st.booleans()) or n == 1:
        return cute.make_layout(shape)
    order = draw(st.permutations(range(n)))
    flat_order = tuple(order)
    return cute.make_ordered_layout(shape, order=_like(shape, iter(flat_order)))


def _like(shape, it):
    return tuple(_like(p, it) for p in shape) if isinstance(shape, tuple) else next(it)


@st.composite
def any_layout(draw, shapes=shape_any):
    shape = draw(shapes)
    strides = _like(shape, iter(draw(st.lists(st.sampled_from([0, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32]),
                                              min_size=len(cute.flatten(shape)) if isinstance(shape, tuple) else 1,
                                              max_size=len(cute.flatten(shape)) if isinstance(shape, tuple) else 1))))
    return cute.make_layout(shape, stride=strides)


@st.composite
def tiler_for(draw, layout):
    kind = draw(st.sampled_from(["ints", "layouts", "layout"]))
    modes = list(layout) if isinstance(layout.shape, tuple) else [layout]
    if kind == "ints":
        return tuple(draw(st.integers(1, max(1, cute.size(m)))) for m in modes[:draw(st.integers(1, len(modes)))])
    if kind == "layouts":
        return tuple(draw(st.sampled_from([cute.make_layout(2), cute.make_layout(2, stride=2),
                                           cute.make_layout((2, 2), stride=(1, 4)), cute.make_layout(3, stride=2),
                                           cute.make_layout(4)])) for _ in modes[:draw(st.integers(1, len(modes)))])
    return draw(st.sampled_from([cute.make_layout(2), cute.make_layout(4, stride=2),
                                 cute.make_layout((2, 2), stride=(1, 4)), cute.make_layout(3)]))


def _compare(cases):
    got, want = reference(cases), ask(cases)
    bad = [(c, g, w) for c, g, w in zip(cases, got, want) if not agree(g, w)]
    assert not bad, "\n".join(f"{name}{tuple(map(str, args))} {kw}: cutekit {g!r}, CuTeDSL {w!r}"
                              for (name, args, kw), g, w in bad[:10]) + f"\n({len(bad)} of {len(cases)} differ)"


def cases_of(name, args_strategy, kwargs=st.just({})):
    return st.lists(st.tuples(st.just(name), args_strategy, kwargs), min_size=CASES, max_size=CASES)


@batch
@given(cases_of("coalesce", st.tuples(any_layout())))
def test_coalesce_matches_cutedsl(cases):
    _compare(cases)


@batch
@given(cases_of("composition", st.tuples(compact(), st.one_of(compact(st.one_of(leaf, st.tuples(leaf, leaf))),
                                                               any_layout(st.one_of(leaf, st.tuples(leaf, leaf)))))))
def test_composition_matches_cutedsl(cases):
    _compare(cases)


@batch
@given(cases_of("complement", st.tuples(any_layout(), st.integers(1, 256))))
def test_complement_matches_cutedsl(cases):
    _compare(cases)


@batch
@given(cases_of("right_inverse", st.tuples(st.one_of(compact(), any_layout()))))
def test_right_inverse_matches_cutedsl(cases):
    _compare(cases)


@batch
@given(cases_of("left_inverse", st.tuples(compact())))
def test_left_inverse_matches_cutedsl(cases):
    _compare(cases)


@st.composite
def divide_args(draw):
    layout = draw(compact(shape2))
    return layout, draw(tiler_for(layout))


@pytest.mark.parametrize("name", ["logical_divide", "zipped_divide", "tiled_divide", "flat_divide"])
def test_divides_match_cutedsl(name):
    @batch
    @given(cases_of(name, divide_args()))
    def run(cases):
        _compare(cases)
    run()


@pytest.mark.parametrize("name", ["logical_product", "zipped_product", "tiled_product", "flat_product",
                                  "blocked_product", "raked_product"])
def test_products_match_cutedsl(name):
    small = compact(st.one_of(leaf, st.tuples(leaf, leaf)))
    @batch
    @given(cases_of(name, st.tuples(small, small)))
    def run(cases):
        _compare(cases)
    run()


@batch
@given(cases_of("make_layout_tv", st.tuples(compact(st.tuples(leaf, leaf)), compact(st.tuples(leaf, leaf)))))
def test_make_layout_tv_matches_cutedsl(cases):
    _compare(cases)


@batch
@given(cases_of("size", st.tuples(any_layout())) | cases_of("cosize", st.tuples(any_layout()))
       | cases_of("depth", st.tuples(any_layout())) | cases_of("rank", st.tuples(any_layout())))
def test_size_cosize_rank_depth_match_cutedsl(cases):
    _compare(cases)


@batch
@given(cases_of("recast_layout", st.tuples(st.sampled_from([8, 16, 32, 64]), st.sampled_from([8, 16, 32]),
                                           compact(shape2))))
def test_recast_layout_matches_cutedsl(cases):
    _compare(cases)


@batch
@given(cases_of("max_common_vector", st.tuples(compact(shape2), compact(shape2))))
def test_max_common_vector_matches_cutedsl(cases):
    _compare(cases)


@batch
@given(cases_of("filter", st.tuples(any_layout())) | cases_of("filter_zeros", st.tuples(any_layout()))
       | cases_of("flatten", st.tuples(any_layout())))
def test_filter_and_flatten_match_cutedsl(cases):
    _compare(cases)


@batch
@given(cases_of("make_ordered_layout", st.tuples(st.tuples(leaf, leaf, leaf), st.permutations([0, 1, 2]).map(tuple))))
def test_make_ordered_layout_matches_cutedsl(cases):
    _compare(cases)


@batch
@given(cases_of("tile_to_shape", st.tuples(compact(st.tuples(leaf, leaf)), st.tuples(st.integers(1, 24), st.integers(1, 24)),
                                           st.sampled_from([(0, 1), (1, 0)]))))
def test_tile_to_shape_matches_cutedsl(cases):
    _compare(cases)
