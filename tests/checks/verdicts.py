"""What every chapter's checks must do with a right and a wrong answer, said once; the chapters' test files
name the answers (CORRECT, and MUTANTS named for the mistake each models) and call these."""
import dataclasses
import random
import re

import pytest

from cutekit.checks import check
from tests.sweep import DEEP, pick

SEEDS = (0, 1, 2, 12345, 999_999)


def mutant_params(mutants):
    """pytest parameters `exercise_id, answer` for (exercise_id, mistake, answer) triples, named by the mistake."""
    return [pytest.param(e, a, id=f"{e.split('.')[1]}-{m}") for e, m, a in mutants]


def assert_right_answer_earns_every_reference_point(exercise_id, answer, seed, monkeypatch):
    monkeypatch.setenv("CUTEKIT_STRICT", "1")           # strict: a failing check raises
    monkeypatch.setenv("CUTEKIT_TIERS", "reference")
    result = check(exercise_id, answer, seed=seed)
    assert result.passed and result.earned == result.possible - result.waiting
    assert_no_hint_answers(result)


def assert_real_cutedsl_confirms_it(exercise_id, answer, monkeypatch):
    pytest.importorskip("cutlass", reason="nvidia-cutlass-dsl is not installed")
    monkeypatch.setenv("CUTEKIT_STRICT", "1")
    monkeypatch.setenv("CUTEKIT_TIERS", "reference cutedsl-cpu")
    result = check(exercise_id, answer, seed=7)
    assert "cutedsl-cpu" in result.tiers, str(result)
    assert result.earned == result.possible


def assert_wrong_answer_loses_points_with_a_hint(exercise_id, answer, seeds, monkeypatch):
    monkeypatch.setenv("CUTEKIT_TIERS", "reference")
    for seed in seeds:
        result = check(exercise_id, answer, seed=seed)
        lost = [criterion for criterion in result.criteria if criterion.status == "failed"]
        assert lost and not result.passed, f"seed {seed}: {result}"
        assert all(criterion.hint for criterion in lost)


# ---- mistake tables: each plausible wrong answer fails, and its hint names the cause, on every seed ----

ALL_SEEDS = tuple(range(100))           # a case generator is tested on each of these (cheap)
# the seeds every mistake row is graded on: ten under make test, all hundred under make test-deep
HINT_SEEDS = pick(quick=tuple(range(10)), deep=ALL_SEEDS)


def mistake_params(mistakes):
    """pytest parameters `exercise_id, answer, cause` for (exercise_id, mistake, answer, cause) rows, named by
    the mistake. `cause` is a regular expression the hint of a lost criterion must match (case-insensitive):
    words naming what the learner got wrong, not just 'wrong'."""
    return [pytest.param(e, a, c, id=f"{e.split('.')[1]}-{m}") for e, m, a, c in mistakes]


def assert_mistake_fails_naming_its_cause(exercise_id, answer, cause, seeds, monkeypatch, tiers="reference"):
    """On every seed: the answer loses points, the hints of the criteria it lost name `cause`, and no hint of
    the result writes out the model answer's code or formula (`assert_no_hint_answers`)."""
    monkeypatch.setenv("CUTEKIT_TIERS", tiers)
    for seed in seeds:
        assert_fails_naming(check(exercise_id, answer, seed=seed), cause)


def lost_hints(result) -> str:
    """The hints of the criteria `result` lost, joined ("" where it lost none)."""
    return " | ".join(criterion.hint for criterion in result.criteria if criterion.status == "failed")


def names_the_cause(result, cause) -> bool:
    return not result.passed and bool(re.search(cause, lost_hints(result), flags=re.IGNORECASE | re.DOTALL))


def assert_fails_naming(result, cause):
    """`result` (a wrong answer's) lost points, its lost criteria's hints name `cause`, and no hint of it
    writes out the model answer."""
    lost = [criterion for criterion in result.criteria if criterion.status == "failed"]
    assert lost and not result.passed, f"seed {result.seed}: a wrong answer passed:\n{result}"
    hints = lost_hints(result)
    assert names_the_cause(result, cause), f"seed {result.seed}: the hint does not name the cause /{cause}/: {hints}"
    assert_no_hint_answers(result)


# ---- kernel mistakes: each check simulates the learner's kernel on every problem it draws (seconds each) ----
# make test grades a kernel mistake on the first of its seeds only, one problem at a time in the order the
# exercise draws them (or from the one a test names first; each check a fork of its own), and stops at the first
# problem whose check fails with the hint: most mistakes show on the first, small problem, and the larger ones
# are not simulated for them. A mistake that no single problem shows is graded on all of them at once. make
# test-deep grades it on every problem of every seed at once, as a learner's check does. The right answers run
# on every problem at either width.

def kernel_mistake_results(exercise_id, answer, cause, seeds, monkeypatch, tiers="reference", first=0):
    """The results a kernel mistake is judged on: [one per seed] under make test-deep; under make test the
    result of the first problem of seeds[0] that shows it, or of all its problems. `first` (an index into
    the problems drawn, -1 the last) is tried before the others: for a mistake that only a later problem
    shows, so the problems that do not are not simulated in full first. If it stops showing there, the
    others are tried as before."""
    from cutekit.checks import checking, registry

    monkeypatch.setenv("CUTEKIT_TIERS", tiers)
    if DEEP:
        return [check(exercise_id, answer, seed=seed) for seed in seeds]
    seed, exercise = seeds[0], registry.exercise(exercise_id)
    problems = list(exercise.cases(random.Random(seed)))
    if len(problems) > 1:
        problems.insert(0, problems.pop(first))
        for problem in problems:
            alone = dataclasses.replace(exercise, cases=lambda rng, problem=problem: [problem])
            with monkeypatch.context() as patch:
                patch.setattr(checking, "find", lambda _: alone)
                result = check(exercise_id, answer, seed=seed)
            if names_the_cause(result, cause):
                return [result]
    return [check(exercise_id, answer, seed=seed)]


def assert_kernel_mistake_fails_naming_its_cause(exercise_id, answer, cause, seeds, monkeypatch, tiers="reference",
                                                 first=0):
    """assert_mistake_fails_naming_its_cause for a simulated kernel (kernel_mistake_results says on what)."""
    for result in kernel_mistake_results(exercise_id, answer, cause, seeds, monkeypatch, tiers, first):
        assert_fails_naming(result, cause)


def assert_no_hint_answers(result):
    """No criterion's hint in `result` writes out an expression of the exercise's model answer (the code
    between BEGIN/END SOLUTION in solutions/, see model_answers.py): a hint names the cause and the place."""
    from model_answers import answer_in, leak_log

    for criterion in result.criteria:
        leaked = answer_in(criterion.hint, result.exercise_id)
        if leaked and leak_log(result, criterion, leaked):
            continue
        assert not leaked, (f"seed {result.seed}: the hint of '{criterion.name}' writes out the model answer's "
                            f"{', '.join(repr(text) for text in leaked)}: {criterion.hint}")


def mistakes_per_exercise(mistakes):
    """How many rows of the table each exercise has."""
    from collections import Counter

    return Counter(row[0] for row in mistakes)
