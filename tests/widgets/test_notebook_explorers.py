"""Every explorer the course and solution notebooks make, made as the notebook makes it (its call and the
statements it needs, read from the notebook: tests/widgets/notebook_calls.py), with every slider moved
through its range alone and all sliders set together to every combination of their ends: each position
draws (a figure and a PNG for every picture, no error line) and slider moves stay within the redraw budget
(benchmarks/bench_render.py: under 100 ms of Python time per move; here the median move's processor time,
`Explorer.last_redraw_cpu_seconds`, so that other work on a shared machine does not count, and no move over
a second)."""
import itertools
import statistics

import ipywidgets
import pytest

from cutekit import widgets
from tests.sweep import pick

from .notebook_calls import notebook_calls

# Python time of one slider move (value change -> new PNG): the course's budget, and the most any one move
# may take on a machine shared with other work (a learner notices a second)
REDRAW_BUDGET_SECONDS = 0.100
SLOWEST_MOVE_SECONDS = 1.0
# a longer slider is sampled: both ends and evenly spaced positions between (make test-deep: 128 of them)
MOST_POSITIONS = pick(quick=24, deep=128)

def distinct_calls():
    """{name: call}: one per distinct call and setup (course and solutions mostly repeat each other); the
    name lists every notebook line that makes it."""
    by_code = {}
    for call in notebook_calls("widgets"):
        by_code.setdefault((call.text, call.setup), []).append(call)
    return {" & ".join(f"{c.notebook}:{c.line}" for c in calls) + f" {calls[0].text}": calls[0]
            for calls in by_code.values()}


def sliders(explorer):
    return [c for c in widgets._controls_in(explorer.children) if isinstance(c, ipywidgets.IntSlider)]


def positions(slider):
    """Every value of a slider, or for a long one both ends and evenly spaced values between."""
    low, high = slider.min, slider.max
    if high - low + 1 <= MOST_POSITIONS:
        return list(range(low, high + 1))
    step = (high - low) / (MOST_POSITIONS - 1)
    return sorted({low, high, *(low + round(i * step) for i in range(MOST_POSITIONS))})


def drawn_at(explorer, where):
    assert explorer.error.value == "" and explorer.last_error is None, (where, explorer.error.value)
    for image, figure in zip(explorer.images, explorer.figures):
        assert figure is not None and bytes(image.value).startswith(b"\x89PNG"), where


def test_the_notebooks_make_explorers():
    made = {call.function for call in notebook_calls("widgets")}
    assert {"layout_explorer", "tv_explorer", "divide_explorer", "partition_explorer", "mma_explorer"} <= made
    assert {call.notebook.split("/")[0] for call in notebook_calls("widgets")} == {"course", "solutions"}


@pytest.mark.parametrize("name", sorted(distinct_calls()), ids=lambda name: name.split(" ")[0])
def test_every_slider_of_every_notebook_explorer_draws_at_every_position(name):
    call = distinct_calls()[name]
    sweep(call)


def sweep(call):
    name = call.name
    explorer = call.make()
    drawn_at(explorer, "as made")
    controls = sliders(explorer)
    assert controls, f"{name}: an explorer without a slider"
    moves = []

    def move(slider, value, where):
        before = explorer.redraw_count
        slider.value = value
        drawn_at(explorer, where)
        if explorer.redraw_count > before:
            moves.append(explorer.last_redraw_cpu_seconds)

    for slider in controls:                                 # each slider alone, the others where they are
        for value in positions(slider):
            move(slider, value, (slider.description, value))
        move(slider, slider.min, (slider.description, slider.min))
    for corner in itertools.product(*[(s.min, s.max) for s in controls]):    # every combination of the ends
        for slider, value in zip(controls, corner):
            move(slider, value, dict(zip([s.description for s in controls], corner)))
        assert [s.value for s in controls] == list(corner)
    assert moves, f"{name}: no slider move redrew"
    assert statistics.median(moves) < REDRAW_BUDGET_SECONDS, (name, statistics.median(moves))
    assert max(moves) < SLOWEST_MOVE_SECONDS, (name, max(moves))
