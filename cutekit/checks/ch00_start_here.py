"""Chapter 00 exercise: predict what a launch prints.

The kernel of chapter 00 prints one line per thread, `block (bx,by,bz) thread (tx,ty,tz)`. The learner
writes predict(grid, block): the lines a launch with that grid and block prints. Every seed draws three
launches that between them tell each usual mistake apart: a grid of several blocks, y and z ids other than 0,
a grid unlike its block, and a block and a grid that each vary in two dimensions (so an order with y or z
fastest shows).
"""
from __future__ import annotations

import itertools
import re
from collections import Counter

from .grading import Criterion, Exercise, Verdict, failed, passed

# the launches the notebook shows, whose lines an answer may have copied
WORKED_LAUNCHES = (((2, 1, 1), (4, 1, 1)), ((1, 2, 1), (3, 2, 1)))
LINE = re.compile(r"block \((\d+),(\d+),(\d+)\) thread \((\d+),(\d+),(\d+)\)")


def _ids(dims):
    """Every (x, y, z) of a grid or block, x fastest, then y, then z: the order CUDA numbers them."""
    return [(x, y, z) for z, y, x in itertools.product(range(dims[2]), range(dims[1]), range(dims[0]))]


def launch_lines(grid: tuple, block: tuple) -> list:
    """Every line, in the simulator's order: blocks x fastest, then y, then z; inside a block the same for
    threads (a GPU prints them in no fixed order)."""
    return [f"block ({bx},{by},{bz}) thread ({tx},{ty},{tz})" for bx, by, bz in _ids(grid) for tx, ty, tz in _ids(block)]


def _cases(rng):
    grids = [(rng.randint(1, 3), rng.randint(1, 2), 1), (rng.randint(2, 4), 1, 1), (2, rng.randint(2, 3), rng.randint(1, 2))]
    blocks = [(rng.randint(2, 4), rng.randint(2, 3), 1), (rng.randint(1, 2), rng.randint(1, 2), rng.randint(2, 3)),
              (rng.randint(3, 8), 1, 1)]
    return [{"grid": grid, "block": block} for grid, block in zip(grids, blocks)]


def _ask(answer, case):
    lines = answer(case["grid"], case["block"])
    if not isinstance(lines, (list, tuple)) or not all(isinstance(line, str) for line in lines):
        raise TypeError(f"predict(grid, block) should return a list of strings, got {type(lines).__name__}: "
                        f"{lines!r:.80}")
    return [line.strip() for line in lines]


def _case_text(case) -> str:
    return f"grid={case['grid']}, block={case['block']}"


def _dims_text(dims) -> str:
    return f"{dims[0]}*{dims[1]}*{dims[2]}"


def _what_differs(case, got: list) -> str:
    """Why `got` is not the set of lines this launch prints, naming the usual mistake where it is one."""
    grid, block = case["grid"], case["block"]
    story = _what_else_differs(grid, block, got)
    for worked in WORKED_LAUNCHES:
        if worked != (grid, block) and Counter(got) == Counter(launch_lines(*worked)):
            # the same lines can also come from another slip (an id range one too long, y ignored): name both
            return (f"these are the lines of the worked example's launch hello({worked[0]}, {worked[1]}), and this "
                    f"case launches grid={grid}, block={block}: {story}")
    return story


def _what_else_differs(grid, block, got: list) -> str:
    want, have = Counter(launch_lines(grid, block)), Counter(got)
    if have == Counter(launch_lines(block, grid)):
        return ("grid and block swapped: block ids run over the grid (blockIdx < grid), thread ids over the "
                "block (threadIdx < block)")
    parsed = [LINE.fullmatch(line) for line in got]
    for line, match in zip(got, parsed):
        if not match:
            return f"{line!r} is not a line the kernel prints: each reads exactly 'block (bx,by,bz) thread (tx,ty,tz)'"
    ids = [tuple(int(part) for part in match.groups()) for match in parsed]
    for line, six in zip(got, ids):
        for what, dims, values in (("blockIdx", grid, six[:3]), ("threadIdx", block, six[3:])):
            for axis, size, value in zip("xyz", dims, values):
                if value >= size:
                    return (f"yours has {line!r}, but {what}.{axis} runs from 0 to {size - 1} here (ids run from 0 "
                            f"to the size - 1, like range({size}))")
    blocks_seen = {six[:3] for six in ids}
    only_x = all(six[1] == six[2] == six[4] == six[5] == 0 for six in ids)
    several_blocks = grid[0] * grid[1] * grid[2] > 1
    y_or_z_used = grid[1] * grid[2] > 1 or block[1] * block[2] > 1
    if several_blocks and blocks_seen == {(0, 0, 0)}:
        also = "; and y and z count too: " if only_x and y_or_z_used else ""
        return (f"yours has the lines of block (0,0,0) only: every block of the grid runs the kernel "
                f"({_dims_text(grid)} blocks here), and each of its threads prints one line{also}")
    if only_x and y_or_z_used:
        return (f"no line of yours has a y or z id other than 0: y and z count too, the launch runs "
                f"{_dims_text(grid)} blocks of {_dims_text(block)} threads")
    repeated = [line for line, count in have.items() if count > 1]
    if repeated:
        return f"{repeated[0]!r} appears {have[repeated[0]]} times; each thread prints one line"
    total = sum(want.values())
    if len(got) != total:
        return (f"the launch runs {_dims_text(grid)} blocks x {_dims_text(block)} threads = {total} lines; yours "
                f"has {len(got)}")
    missing = sorted((want - have).elements())
    return f"missing {missing[0]!r}"


def _same_lines(context) -> Verdict:
    for outcome in context.outcomes:
        if outcome.error:
            return failed(f"{_case_text(outcome.case)}: {outcome.error}")
        if Counter(launch_lines(**outcome.case)) != Counter(outcome.value):
            return failed(f"{_case_text(outcome.case)}: {_what_differs(outcome.case, outcome.value)}")
    return passed()


def _order_story(case, got: list) -> str:
    """Which part of the simulator's order `got` breaks: block by block, threads x fastest, blocks x fastest."""
    block_of = [LINE.fullmatch(line).groups()[:3] for line in got]
    runs = [key for key, _ in itertools.groupby(block_of)]
    if len(runs) != len(set(runs)):
        return "the simulator runs block by block: all of one block's lines come before the next block's"
    if runs != [tuple(str(value) for value in ids) for ids in _ids(case["grid"])]:
        return "blocks go in the same order as threads: blockIdx.x varies fastest, then y, then z"
    return "inside a block, threadIdx.x varies fastest, then y, then z (the order CUDA numbers threads)"


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
                              f"{a!r} there: {_order_story(outcome.case, outcome.value)}")
    return passed()


PREDICT_PRINTF = Exercise(
    id="ch00.predict_printf",
    statement="Write predict(grid, block): the lines `block (bx,by,bz) thread (tx,ty,tz)` that the hello "
              "kernel prints when launched with that grid and block.",
    example="predict((1,1,1), (2,1,1)) == ['block (0,0,0) thread (0,0,0)', 'block (0,0,0) thread (1,0,0)']",
    rule=("A launch runs the kernel once for every thread of every block, and every id is counted from 0.\n"
          "CUDA numbers the threads of a block x fastest, then y, then z, and the blocks of the grid the same way.\n"
          "The simulator runs block by block, so all of one block's lines come before the next block's (a GPU "
          "prints them in no fixed order)."),
    cases=_cases,
    ask=_ask,
    criteria=(
        Criterion("one line per thread of every block, no more, no fewer", "reference", 3, _same_lines),
        Criterion("in the order the simulator runs threads (x fastest, block by block)", "reference", 1,
                  _simulator_order),
    ),
)

EXERCISES = [PREDICT_PRINTF]
