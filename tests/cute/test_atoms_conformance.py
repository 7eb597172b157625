"""Every TiledCopy and TiledMMA built from the Ampere atoms prints what CuTeDSL 4.8.1 prints and hands every
thread the same coordinates after get_slice(t).partition_* and retile, or both refuse, on a seeded sample of
random configurations (tests/cute/atoms_conformance.py draws them; `scripts/conformance.py --atoms --cases N`
runs a long one). CuTeDSL is traced once for the sample and its answers are cached by the sample's digest under
build/conformance/atoms/, so a second run costs only cutekit's side."""
import functools
import json

import pytest

from . import atoms_conformance as suite

pytest.importorskip("cutlass")
pytestmark = pytest.mark.cutedsl

from tests.sweep import pick

DRAWN = 300         # the seeded draw; make test-deep asks CuTeDSL about all of it


@functools.cache
def drawn():
    return suite.make_cases(DRAWN, seed=2025)


@functools.cache
def sample():
    """make test: the first 20 cases of the draw and, for every feature the draw holds (each atom, MMA, atom
    layout, permutation form, kind and operand), a case that has it (about 45 in all); make test-deep: the
    whole draw."""
    return pick(quick=suite.covering_sample(drawn(), first=20), deep=drawn())


@functools.cache
def answers():
    cases = sample()
    return cases, suite.cutedsl_facts(cases), [suite.cutekit_facts(case) for case in cases]


def test_a_seeded_sample_of_tiled_copies_and_mmas_agrees_with_cutedsl_for_every_thread():
    bad, counts = suite.run(sample())
    assert not bad, suite.report(bad, counts)
    assert counts["refused_cutedsl"] > 0 and counts["warned"] > 0, counts


def test_cutekit_refuses_with_a_cute_error_naming_the_rule_never_a_failure_inside():
    _, _, ours = answers()
    crashes = [(k, v) for facts in ours for k, v in facts.items() if k != "warnings" and v.startswith("CRASH")]
    assert not crashes, crashes[:3]
    refusals = [v for facts in ours for k, v in facts.items() if k != "warnings" and v.startswith("ERROR")]
    assert refusals and all(v.startswith("ERROR: CuteError: ") and len(v) > 40 for v in refusals)


def test_what_cutedsl_builds_but_should_not_cutekit_builds_too_with_a_named_warning():
    cases, theirs, ours = answers()
    warned = [(facts, real) for facts, real in zip(ours, theirs) if "warnings" in facts]
    assert warned and all(facts["warnings"] == ["AtomDoesNotFitWarning"] for facts, _ in warned)
    assert all(not suite.compare(facts, real) for facts, real in warned)
    # most of them CuTeDSL prints whole (the rest it prints with an undefined `x`, and cutekit refuses further on)
    built = [facts for facts, real in warned if not suite._refused(real.get("tiled_copy", "ERROR"))]
    assert len(built) > len(warned) // 2
    assert all(facts["tiled_copy"] == real["tiled_copy"] for facts, real in warned if facts in built)


def test_the_generator_draws_every_ampere_atom_layout_and_permutation_the_issue_names():
    cases = sample()      # what CuTeDSL is asked about: at either width, every feature of the whole draw
    ops = {json.dumps(c["mma"]["op"]) for c in cases if "mma" in c}
    for op in suite.WARP_MMAS + suite.FMAS:
        assert json.dumps(list(op)) in ops, op
    atoms = {(c["copy_atom"][0], tuple(c["copy_atom"][2:])) for c in cases if "copy_atom" in c}
    for kind in [("ldmatrix", (t, n)) for t in (False, True) for n in (1, 2, 4)]:
        assert kind in atoms, kind
    assert {bits for kind, (bits, *_) in atoms if kind == "universal"} >= {32, 64, 128}
    assert {bits for kind, (bits, *_) in atoms if kind == "g2s"} >= {32, 64, 128}
    layouts = {tuple(c["mma"]["atom_layout"][0]) for c in cases if "mma" in c}
    assert {(m, n, 1) for m in range(1, 5) for n in range(1, 5)} <= layouts
    permutations = [c["mma"]["permutation"] for c in cases if "mma" in c]
    entries = [p for perm in permutations if perm for p in perm]
    assert None in permutations and None in entries
    assert any(isinstance(p, int) for p in entries) and any(isinstance(p, list) for p in entries)
    kinds = {c["kind"] for c in cases} | {"copy_mma_" + c["operand"] for c in cases if c["kind"] == "copy_mma"}
    assert kinds >= {"mma", "copy_tv", "copy_layout_tv", "copy_mma_A", "copy_mma_B", "copy_mma_C"}
