"""Chapter 00 exercise: predict what a launch prints.

The kernel of chapter 00 prints one line per thread, `block (bx,by,bz) thread (tx,ty,tz)`. The learner
writes predict(grid, block): the lines a launch with that grid and block prints. Cases are random 1-D to
3-D launches, so an answer written for the notebook's example meets other shapes.
"""
from __future__ import annotations

import itertools
from collections import Counter

from .grading import Criterion, Exercise, Verdict, failed, passed


def launch_lines(grid: tuple, block: tuple) -> list:
    """Every line, in the simulator's order: blocks x fastest, then y, then z; inside a block the same for
    threads (a GPU prints them in no fixed order)."""
    def ids(dims):
        return [(x, y, z) for z, y, x in itertools.product(range(dims[2]), range(dims[1]), range(dims[0]))]
    return [f"block ({bx},{by},{bz}) thread ({tx},{ty},{tz})" for bx, by, bz in ids(grid) for tx, ty, tz in ids(block)]


def _cases(rng):
    shapes = [(rng.randint(1, 3), rng.randint(1, 2), 1), (rng.randint(2, 4), 1, 1), (1, rng.randint(2, 3), rng.randint(1, 2))]
    blocks = [(rng.randint(2, 4), rng.randint(1, 3), 1), (rng.randint(1, 2), rng.randint(1, 2), rng.randint(2, 3)),
              (rng.randint(3, 8), 1, 1)]
    return [{"grid": grid, "block": block} for grid, block in zip(shapes, blocks)]


def _ask(answer, case):
    lines = answer(case["grid"], case["block"])
    if not isinstance(lines, (list, tuple)) or not all(isinstance(line, str) for line in lines):
        raise TypeError(f"predict(grid, block) should return a list of strings, got {type(lines).__name__}: "
                        f"{lines!r:.80}")
    return [line.strip() for line in lines]


def _case_text(case) -> str:
    return f"grid={case['grid']}, block={case['block']}"


def _same_lines(context) -> Verdict:
    for outcome in context.outcomes:
        if outcome.error:
            return failed(f"{_case_text(outcome.case)}: {outcome.error}")
        want, got = Counter(launch_lines(**outcome.case)), Counter(outcome.value)
        if want == got:
            continue
        total = sum(want.values())
        if sum(got.values()) != total:
            g, b = outcome.case["grid"], outcome.case["block"]
            return failed(f"{_case_text(outcome.case)}: the launch runs {g[0]}*{g[1]}*{g[2]} blocks x "
                          f"{b[0]}*{b[1]}*{b[2]} threads = {total} lines; yours has {sum(got.values())}")
        missing = sorted((want - got).elements())
        extra = sorted((got - want).elements())
        return failed(f"{_case_text(outcome.case)}: missing {missing[0]!r}; you have {extra[0]!r}, which "
                      f"this launch never prints")
    return passed()


def _simulator_order(context) -> Verdict:
    for outcome in context.outcomes:
        if outcome.error:
            return failed(f"{_case_text(outcome.case)}: {outcome.error}")
        want = launch_lines(**outcome.case)
        if Counter(want) != Counter(outcome.value):
            return failed("first get the set of lines right")
        for position, (a, b) in enumerate(zip(want, outcome.value)):
            if a != b:
                return failed(f"{_case_text(outcome.case)}: line {position} is {b!r}; the simulator prints "
                              f"{a!r} there (x varies fastest, then y, then z, for blocks and for threads)")
    return passed()


PREDICT_PRINTF = Exercise(
    id="ch00.predict_printf",
    statement="Write predict(grid, block): the lines `block (bx,by,bz) thread (tx,ty,tz)` that the hello "
              "kernel prints when launched with that grid and block.",
    example="predict((1,1,1), (2,1,1)) == ['block (0,0,0) thread (0,0,0)', 'block (0,0,0) thread (1,0,0)']",
    cases=_cases,
    ask=_ask,
    criteria=(
        Criterion("one line per thread of every block, no more, no fewer", "reference", 3, _same_lines),
        Criterion("in the order the simulator runs threads (x fastest, block by block)", "reference", 1,
                  _simulator_order),
    ),
)

EXERCISES = [PREDICT_PRINTF]
