"""Every exercise of the course, found by id. A chapter's exercises live in `chNN_topic.py` as `EXERCISES`."""
from __future__ import annotations

import difflib
import importlib

CHAPTER_MODULES = ("ch00_start_here", "ch01_layouts", "ch02_tv_layouts", "ch03_divide", "ch04_local_tile", "ch05_tiled_copy", "ch06_ldmatrix", "ch07_sgemm", "ch08_hopper", "ch09_blackwell",)


def exercises() -> list:
    """All exercises, in chapter order."""
    found = []
    for name in CHAPTER_MODULES:
        found.extend(importlib.import_module(f"{__package__}.{name}").EXERCISES)
    return found


def exercise(exercise_id: str):
    """The exercise with this id; an unknown id raises ValueError naming the close ones."""
    table = {exercise.id: exercise for exercise in exercises()}
    if exercise_id not in table:
        raise unknown_exercise(exercise_id, list(table))
    return table[exercise_id]


def unknown_exercise(exercise_id: str, known: list) -> ValueError:
    close = difflib.get_close_matches(exercise_id, known, n=3)
    return ValueError(f"no exercise {exercise_id!r}" + (f"; did you mean {', '.join(close)}?" if close else
                                                      f"; the exercises are {', '.join(known)}"))
