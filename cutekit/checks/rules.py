"""The second hint level: `hint("ch08.mbarrier_phases")` prints the rule(s) behind an exercise, stated as rules
(what completes a phase, which way a layout unfolds), never the answer's code or formula. The first level is
the check's own hint, which names the cause and the place of a mistake. A check offers this level in its
result from the third failed attempt of an exercise on."""
from __future__ import annotations

import textwrap

from .registry import exercises


def hint(exercise_id: str) -> None:
    """Print the rule(s) behind exercise `exercise_id`, e.g. `hint("ch01.layout_from_grid")`."""
    if not isinstance(exercise_id, str):
        raise TypeError(f"hint() takes an exercise id such as 'ch01.layout_from_grid', not {exercise_id!r}")
    found = {exercise.id: exercise for exercise in exercises()}
    if exercise_id not in found:
        raise ValueError(_unknown(exercise_id, list(found)))
    exercise = found[exercise_id]
    if not exercise.rule.strip():
        print(f"{exercise_id}: no rule is written for this exercise yet; its check's hints name the cause")
        return
    print(f"{exercise_id}: the rule")
    for rule in exercise.rule.strip().splitlines():
        print(textwrap.fill(rule.strip(), width=100, initial_indent="  - ", subsequent_indent="    "))


def _unknown(exercise_id: str, known: list) -> str:
    chapter = exercise_id.split(".", 1)[0]
    same = [other for other in known if other.split(".", 1)[0] == chapter]
    if same:
        return f"no exercise {exercise_id!r}; chapter {chapter[2:]}'s exercises are {', '.join(same)}"
    chapters = sorted({other.split(".", 1)[0] for other in known})
    return (f"no exercise {exercise_id!r}: its chapter {chapter!r} is not one of the course's "
            f"({', '.join(chapters)}); an id reads like 'ch01.layout_from_grid'")
