"""The one call a learner makes: `check(exercise_id, answer)`: find the exercise (`registry`), grade the
answer on every tier this machine offers (`grading`), record the result in the progress file (`progress`)
and return it, shown as a table in JupyterLab and as lines in a terminal (`result`). From the third failed
check of an exercise on, the result offers the second hint level: `hint(exercise_id)` states the rule.

A wrong answer never raises, unless `CUTEKIT_STRICT=1` (for CI: a broken solution must fail the build).
"""
from __future__ import annotations

from .grading import CheckFailed, grade, new_seed, strict
from .progress import failed_attempts, record_result
from .registry import exercise as find
from .result import ExerciseResult

STUCK_AFTER = 3         # failed checks of one exercise, after which the result offers hint(exercise_id)


def check(exercise_id: str, answer, seed: int | None = None, record: bool = True) -> ExerciseResult:
    """Grade `answer` for `exercise_id` and show the result (a table in JupyterLab, lines in a terminal).

    >>> check("ch01.layout_from_grid", layout_for)          # doctest: +SKIP
    """
    exercise = find(exercise_id)
    result = grade(exercise, answer, new_seed() if seed is None else seed)
    if record and result.attempted:
        result = record_result(result, exercise)
        if not result.passed and exercise.rule and failed_attempts(exercise.id) >= STUCK_AFTER:
            result = result.with_offer(f"Stuck? `hint({exercise.id!r})` states the rule")
    if strict() and (not result.attempted or any(criterion.status == "failed" for criterion in result.criteria)):
        raise CheckFailed(str(result))
    return result


__all__ = ["check"]
