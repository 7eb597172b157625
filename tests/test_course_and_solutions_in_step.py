"""The course notebooks and their solved twins stay in step: the same cells, word for word, except the
bodies of the exercises, where the course has `# YOUR CODE HERE` and a placeholder and the solution has the
answer. Every exercise of a chapter has its cell, ending in its check."""
import difflib
import pathlib
import re

import nbformat
import pytest

from cutekit.checks import exercises

ROOT = pathlib.Path(__file__).resolve().parents[1]
CHAPTERS = sorted(p.name for p in (ROOT / "course").glob("[0-9][0-9]_*.ipynb"))
MARKER = "# YOUR CODE HERE"
PLACEHOLDERS = {"return None", "pass"}


def cells(folder, name):
    return nbformat.read(ROOT / folder / name, as_version=4).cells


@pytest.mark.parametrize("name", CHAPTERS)
def test_the_solution_has_the_same_cells_as_the_course(name):
    course, solution = cells("course", name), cells("solutions", name)
    assert [c.cell_type for c in course] == [c.cell_type for c in solution], name
    for index, (mine, solved) in enumerate(zip(course, solution)):
        if mine.source == solved.source:
            continue
        assert MARKER in mine.source, f"{name} cell {index} differs from the solution but is not an exercise"
        _assert_only_the_body_differs(name, index, mine.source.splitlines(), solved.source.splitlines())


def _assert_only_the_body_differs(name, index, course, solution):
    matcher = difflib.SequenceMatcher(a=course, b=solution, autojunk=False)
    for tag, i1, i2, _, _ in matcher.get_opcodes():
        if tag == "equal":
            continue
        replaced = [line.strip() for line in course[i1:i2]]
        assert all(line in PLACEHOLDERS | {MARKER} for line in replaced), \
            f"{name} cell {index}: the course's {course[i1:i2]} is not an exercise placeholder"
        assert MARKER in "\n".join(course[max(i1 - 1, 0):i2]), \
            f"{name} cell {index}: the solution changes lines that are not at {MARKER!r}"


@pytest.mark.parametrize("name", CHAPTERS)
def test_every_exercise_of_the_chapter_has_a_cell_that_checks_it(name):
    chapter = name[:2]
    wanted = {e.id for e in exercises() if e.id.startswith(f"ch{chapter}.")}
    checked, in_exercise = set(), False
    for cell in cells("course", name):         # an exercise: its cell and the code cells up to the next text
        in_exercise = cell.cell_type == "code" and (in_exercise or MARKER in cell.source)
        if in_exercise:
            checked.update(re.findall(r'check\("([^"]+)"', cell.source))
    assert checked == wanted, f"{name}: exercise cells check {sorted(checked)}, the registry has {sorted(wanted)}"
