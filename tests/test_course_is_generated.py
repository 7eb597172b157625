"""The course is generated from one source per chapter: `solutions/NN_topic.py` holds the answers between
`### BEGIN SOLUTION` and `### END SOLUTION`; `course/` has `# YOUR CODE HERE` and a placeholder there
(scripts/generate_course.py, `make sync`). Every exercise of a chapter has its cell, ending in its check."""
import pathlib
import re
import sys

import nbformat
import pytest

from cutekit.checks import exercises

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import generate_course  # noqa: E402

CHAPTERS = generate_course.chapters()
MARKER = "# YOUR CODE HERE"


def test_every_committed_course_and_notebook_file_is_what_the_generator_makes():
    stale = [str(p.relative_to(ROOT)) for p in generate_course.stale()]
    assert not stale, f"{stale} differ from what solutions/ gives: run {generate_course.FIX}"


def test_the_course_has_a_source_for_every_chapter_and_nothing_else():
    course = sorted(p.stem for p in (ROOT / "course").glob("[0-9][0-9]_*.py"))
    assert course == CHAPTERS and len(generate_course.lessons()) == 10      # ten chapters and the reference
    assert CHAPTERS[-1] == generate_course.REFERENCE


def test_the_reference_has_no_exercise():
    source = (ROOT / "solutions" / f"{generate_course.REFERENCE}.py").read_text()
    assert not generate_course.answers(source) and "check(" not in source


@pytest.mark.parametrize("name", generate_course.lessons())
def test_the_course_shows_no_answer_and_no_marker(name):
    source = (ROOT / "solutions" / f"{name}.py").read_text()
    course = (ROOT / "course" / f"{name}.py").read_text()
    assert "### BEGIN SOLUTION" not in course and "### END SOLUTION" not in course
    answers = generate_course.answers(source, name)
    assert answers and course.count(MARKER) >= len(answers)
    course_lines = {line.strip() for line in course.splitlines()}
    for answer in answers:       # each answer has at least one line the course does not have
        assert {line.strip() for line in answer.lines if line.strip()} - course_lines, (name, answer.line)


@pytest.mark.parametrize("name", CHAPTERS)
def test_every_exercise_of_the_chapter_has_a_cell_that_checks_it(name):
    chapter = name[:2]
    wanted = {e.id for e in exercises() if e.id.startswith(f"ch{chapter}.")}
    checked, in_exercise = set(), False
    for cell in nbformat.read(ROOT / "course" / f"{name}.ipynb", as_version=4).cells:
        # an exercise: its cell and the code cells up to the next text
        in_exercise = cell.cell_type == "code" and (in_exercise or MARKER in cell.source)
        if in_exercise:
            checked.update(re.findall(r'check\("([^"]+)"', cell.source))
    assert checked == wanted, f"{name}: exercise cells check {sorted(checked)}, the registry has {sorted(wanted)}"


SOURCE = "# %%\ndef f(x):\n    ### BEGIN SOLUTION{suffix}\n    return x + 1\n    ### END SOLUTION\n\n\ncheck('f', f)\n"


def test_an_answer_becomes_the_marker_and_return_none():
    assert generate_course.student_text(SOURCE.format(suffix="")) == (
        "# %%\ndef f(x):\n    # YOUR CODE HERE\n    return None\n\n\ncheck('f', f)\n")


def test_an_answer_can_name_its_placeholder():
    assert "    # YOUR CODE HERE\n    pass\n" in generate_course.student_text(SOURCE.format(suffix=" (placeholder: pass)"))


@pytest.mark.parametrize("broken, named", [
    ("# %%\n    ### BEGIN SOLUTION\n    x = 1\n", "never closed"),
    ("# %%\n    x = 1\n    ### END SOLUTION\n", "without a BEGIN"),
    ("# %%\n    ### BEGIN SOLUTION\n    ### BEGIN SOLUTION\n    x = 1\n    ### END SOLUTION\n", "inside the answer"),
    ("# %%\n    ### BEGIN SOLUTION\n    x = 1\n# %%\n    ### END SOLUTION\n", "not closed before the next cell"),
    ("# %%\n    ### BEGIN SOLUTION\n    ### END SOLUTION\n", "is empty"),
    ("# %%\n    ### BEGIN SOLUTION please\n    x = 1\n    ### END SOLUTION\n", "alone on its line"),
])
def test_markers_that_do_not_pair_up_are_refused_with_their_line(broken, named):
    with pytest.raises(generate_course.SourceError, match=named) as error:
        generate_course.student_text(broken, "solutions/99_x.py")
    assert "solutions/99_x.py:" in str(error.value)


def test_check_mode_names_a_stale_file_and_the_command_that_fixes_it(tmp_path, capsys):
    (tmp_path / "solutions").mkdir()
    (tmp_path / "course").mkdir()
    (tmp_path / "solutions" / "09_demo.py").write_text(SOURCE.format(suffix=""))
    assert generate_course.main(["--root", str(tmp_path)]) == 0
    assert generate_course.main(["--root", str(tmp_path), "--check"]) == 0
    (tmp_path / "course" / "09_demo.py").write_text("edited by hand\n")
    assert generate_course.main(["--root", str(tmp_path), "--check"]) == 1
    err = capsys.readouterr().err
    assert "course/09_demo.py" in err and "make sync" in err


def test_generated_notebooks_have_no_outputs_and_fixed_cell_ids():
    first = generate_course.notebook_text(SOURCE.format(suffix=""))
    assert first == generate_course.notebook_text(SOURCE.format(suffix=""))
    nb = nbformat.reads(first, as_version=4)
    assert [c.id for c in nb.cells] == ["cell-000"]
    assert nb.cells[0].outputs == []
