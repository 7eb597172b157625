"""`python -m cutekit report`, the instructor's view of the room: per learner, per chapter and per exercise
(learners who passed, who tried, checks run, learners failing it repeatedly, the last check), and the learners
to go and see (failing one exercise again and again, idle, not started), for all chapters or chosen ones."""
from __future__ import annotations

import time
from pathlib import Path

import pytest

from cutekit.checks import exercises

from cutekit.__main__ import main
from cutekit.checks.progress import append_line, class_report


def check_line(homes: Path, learner: str, exercise: str, earned: int, passed: bool | None, minute: int):
    record = {"learner": learner, "exercise": exercise, "earned": earned, "possible": 4, "waiting": 0,
              "tiers": ["reference"], "time": f"2026-11-27T10:{minute:02d}:00+0000"}
    if passed is not None:
        record["passed"] = passed
    append_line(homes / learner / ".cutekit" / "progress.jsonl", record)


@pytest.fixture(autouse=True)
def utc(monkeypatch):
    """The report prints times in local time: the tests read them in UTC."""
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


@pytest.fixture
def room(tmp_path) -> Path:
    """ada passes two exercises; bob fails the swizzle four times; cy checked once, long ago; eve failed the
    swizzle three times, then passed it; dan has a home and nothing else."""
    homes = tmp_path / "home"
    check_line(homes, "ada", "ch01.layout_from_grid", 4, True, 0)
    check_line(homes, "ada", "ch07.swizzle", 4, True, 50)
    for minute in (40, 42, 45, 48):
        check_line(homes, "bob", "ch07.swizzle", 2, False, minute)
    check_line(homes, "cy", "ch01.layout_from_grid", 1, False, 10)
    for minute, earned in ((41, 1), (43, 2), (44, 3), (46, 4)):
        check_line(homes, "eve", "ch07.swizzle", earned, earned == 4, minute)
    (homes / "dan").mkdir()
    return homes


def summary_row(report, label: str) -> list[str]:
    line = next(line for line in report.summary().splitlines() if line.strip().startswith(label))
    return line.split()


def test_each_exercise_shows_who_passed_who_tried_the_checks_run_who_is_failing_and_the_last_check(room):
    report = class_report(homes=[room], chapters=["07"])
    assert summary_row(report, "ch07.swizzle") == ["ch07.swizzle", "2/5", "3", "9", "1", "10:50"]
    assert summary_row(report, "ch07.tiled_mma") == ["ch07.tiled_mma", "0/5", "0", "0", "0", "-"]
    chapter = summary_row(report, "ch07:")
    count = str(sum(e.id.startswith("ch07.") for e in exercises()))
    assert chapter[:4] == ["ch07:", "all", count, "exercises"] and chapter[4:8] == ["0/5", "3", "9", "1"]


def test_the_learners_to_go_and_see_are_named_with_why(room):
    attention = class_report(homes=[room], chapters=["07"]).attention()
    assert "bob: failing ch07.swizzle, 4 checks, none passed" in attention
    assert any(line.startswith("cy: idle, last check 10:10 (ch01.layout_from_grid), 40 min") for line in attention)
    assert "dan: not attempted" in attention
    assert not any(line.startswith(("ada", "eve")) for line in attention)       # eve passed after three tries


def test_a_chapter_filter_keeps_that_chapters_exercises_in_every_view(room, tmp_path, capsys):
    report = class_report(homes=[room], chapters=["ch01"])
    header = report.table().splitlines()[0].split()
    assert header[1:] == [e.id.split(".", 1)[1] for e in exercises() if e.id.startswith("ch01.")] + ["total"]
    assert header[1:3] == ["layout_from_grid", "layout_from_picture"]
    assert "ch07" not in report.summary() and not any("failing" in line for line in report.attention())
    out = tmp_path / "room.csv"
    assert main(["report", "--homes", str(room), "--chapter", "1", "--csv", str(out)]) == 0
    columns = out.read_text().splitlines()[0].split(",")
    assert columns[:6] == ["learner", "source", "status", "checks", "last check", "failing"]
    assert [c for c in columns if c.startswith("ch0")] == [f"ch01.{name}" for name in header[1:-1]]
    printed = capsys.readouterr().out
    assert "The room: 5 learners" in printed and "Needs attention" in printed


def test_the_thresholds_are_the_instructors_to_set(room, capsys):
    assert main(["report", "--homes", str(room), "--failing", "5", "--idle", "60"]) == 0
    attention = capsys.readouterr().out.split("Needs attention", 1)[1]
    assert "bob" not in attention and "cy" not in attention and "dan: not attempted" in attention


def test_a_record_without_passed_counts_every_point_of_its_tiers_as_passed(tmp_path):
    homes = tmp_path / "home"
    check_line(homes, "old", "ch07.swizzle", 4, None, 0)
    check_line(homes, "old", "ch07.tiled_mma", 3, None, 1)
    row = class_report(homes=[homes]).rows[0]
    assert row.passed == {"ch07.swizzle"} and row.failing == {"ch07.tiled_mma": 1}


def test_an_unknown_chapter_is_refused_with_the_chapters_there_are(room, capsys):
    with pytest.raises(ValueError, match=r"no chapter ch42 \(chapters: ch00, ch01"):
        class_report(homes=[room], chapters=["42"])
    assert main(["report", "--homes", str(room), "--chapter", "seven"]) == 2
    assert "give a chapter number, like 07" in capsys.readouterr().err
