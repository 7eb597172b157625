"""What every chapter's checks must do with a right and a wrong answer, said once; the chapters' test files
name the answers (CORRECT, and MUTANTS named for the mistake each models) and call these."""
import pytest

from cutekit.checks import check
from tests.sweep import pick

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
    import re

    monkeypatch.setenv("CUTEKIT_TIERS", tiers)
    for seed in seeds:
        result = check(exercise_id, answer, seed=seed)
        lost = [criterion for criterion in result.criteria if criterion.status == "failed"]
        assert lost and not result.passed, f"seed {seed}: a wrong answer passed:\n{result}"
        hints = " | ".join(criterion.hint for criterion in lost)
        assert re.search(cause, hints, flags=re.IGNORECASE | re.DOTALL), \
            f"seed {seed}: the hint does not name the cause /{cause}/: {hints}"
        assert_no_hint_answers(result)


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
