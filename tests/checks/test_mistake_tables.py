"""Every exercise of the course keeps a table of the mistakes learners make, at least four rows, each with
the cause its hint must name; the chapters' test files run every row on the sweep's seeds (0-9; 0-99 under make test-deep) (or, for simulated
kernels, on the seeds their docstrings give). This test holds the tables' size for every exercise the
registry knows, so a new exercise cannot arrive without one."""
import importlib
import re
from collections import Counter

import pytest

from cutekit.checks import exercises

CHAPTERS = [f"ch{n:02d}" for n in range(9)]
TABLES = ("MISTAKES", "LAYOUT_MISTAKES", "KERNEL_MISTAKES")


def rows(chapter):
    module = importlib.import_module(f"test_{chapter}_mutants")
    return [row for name in TABLES for row in getattr(module, name, [])]


def table_sizes():
    return Counter(row[0] for chapter in CHAPTERS for row in rows(chapter))


@pytest.mark.parametrize("exercise_id", sorted(e.id for e in exercises()))
def test_every_exercise_has_at_least_four_mistakes_each_with_its_cause(exercise_id):
    chapter_rows = [row for row in rows(exercise_id.split(".")[0]) if row[0] == exercise_id]
    assert len(chapter_rows) >= 4, f"{exercise_id}: {len(chapter_rows)} rows in its mistake table"
    for _, mistake, answer, cause in chapter_rows:
        assert callable(answer) or answer is not None, mistake
        assert cause and re.compile(cause) and not re.fullmatch(r"\W*(wrong|incorrect)\W*", cause), mistake


def test_the_instructors_guide_lists_exactly_these_tables():
    import pathlib
    import sys
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "scripts"))
    import mistake_table
    assert mistake_table.main(["--check"]) == 0, "INSTRUCTOR.md's table is stale: run python scripts/mistake_table.py"
