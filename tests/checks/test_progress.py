"""Progress: each check appends one whole line under a lock (two processes at once lose nothing);
`python -m cutekit progress` shows the learner's best scores; `report` gathers a class, reporting
unreadable files instead of crashing."""
import json
import multiprocessing
import os

from cutekit.__main__ import main
from cutekit.checks import check
from cutekit.checks.progress import append_line, class_report, read_progress

import answers_ch01 as answers


def _append_many(path, writer, count):
    for number in range(count):
        append_line(path, {"exercise": "ch01.layout_from_grid", "earned": number % 5, "possible": 4,
                           "writer": writer, "padding": "x" * 3000})


def test_two_processes_appending_at_once_lose_and_interleave_nothing(tmp_path):
    path = tmp_path / "progress.jsonl"
    spawn = multiprocessing.get_context("spawn")
    writers = [spawn.Process(target=_append_many, args=(path, writer, 200)) for writer in range(2)]
    for writer in writers:
        writer.start()
    for writer in writers:
        writer.join(60)
    lines = path.read_text().splitlines()
    assert len(lines) == 400
    records = [json.loads(line) for line in lines]
    assert sorted(record["writer"] for record in records) == [0] * 200 + [1] * 200


def test_each_check_appends_its_result(private_progress_file, monkeypatch):
    monkeypatch.setenv("CUTEKIT_TIERS", "reference")
    monkeypatch.setenv("CUTEKIT_LEARNER", "ada")
    check("ch01.layout_from_grid", answers.layout_for_column_major, seed=1)
    check("ch01.layout_from_grid", answers.layout_for, seed=2)
    records = read_progress(private_progress_file).records
    assert [(r["learner"], r["earned"], r["possible"], r["seed"], r["tiers"]) for r in records] == [
        ("ada", 1, 4, 1, []), ("ada", 3, 4, 2, ["reference"])]


def test_progress_recording_can_be_switched_off(tmp_path, monkeypatch):
    monkeypatch.setenv("CUTEKIT_PROGRESS", "off")
    monkeypatch.setenv("CUTEKIT_TIERS", "reference")
    check("ch01.layout_from_grid", answers.layout_for, seed=2)
    assert not list(tmp_path.iterdir())


def test_an_unwritable_progress_file_becomes_a_note_not_an_error(tmp_path, monkeypatch):
    monkeypatch.setenv("CUTEKIT_PROGRESS", str(tmp_path / "a-file" / "progress.jsonl"))
    (tmp_path / "a-file").write_text("in the way")
    monkeypatch.setenv("CUTEKIT_TIERS", "reference")
    result = check("ch01.layout_from_grid", answers.layout_for, seed=2)
    assert result.passed and "progress not saved" in str(result)


def test_the_progress_command_shows_best_score_and_tiers_per_exercise(private_progress_file, monkeypatch, capsys):
    monkeypatch.setenv("CUTEKIT_TIERS", "reference")
    check("ch01.layout_from_grid", answers.layout_for, seed=2)
    check("ch01.layout_from_grid", answers.layout_for_column_major, seed=3)
    assert main(["progress"]) == 0
    out = capsys.readouterr().out
    assert "ch01\n" in out
    assert "ch01.layout_from_grid" in out and "3/4" in out and "tiers: reference" in out and "2 attempts" in out
    assert "ch01.coalesce_by_hand" in out and "not tried" in out


def _learner_file(folder, name, earned):
    path = folder / name / ".cutekit" / "progress.jsonl"
    path.parent.mkdir(parents=True)
    for points in earned:
        append_line(path, {"learner": name, "exercise": "ch01.layout_from_grid", "earned": points, "possible": 4,
                           "tiers": ["reference"], "time": "2025-01-01T00:00:00"})
    return path


def test_the_report_gathers_home_folders_into_a_table_and_csv(tmp_path, capsys):
    homes = tmp_path / "home"
    _learner_file(homes, "ada", [1, 4, 2])
    _learner_file(homes, "grace", [3])
    csv_path = tmp_path / "class.csv"
    assert main(["report", str(homes), "--csv", str(csv_path)]) == 0
    out = capsys.readouterr().out
    assert "ada" in out and "grace" in out and "layout_from_grid" in out
    rows = csv_path.read_text().splitlines()
    header = rows[0].split(",")
    assert header[:2] == ["learner", "source"] and header[-2:] == ["total", "possible"]
    column = header.index("ch01.layout_from_grid")
    assert rows[1].startswith("ada,") and rows[1].split(",")[column] == "4"      # the best of 1, 4, 2
    assert rows[2].startswith("grace,") and rows[2].split(",")[column] == "3"


def test_the_report_names_unreadable_files_and_damaged_lines_without_crashing(tmp_path, capsys):
    good = _learner_file(tmp_path, "ada", [2])
    with open(good, "a") as damaged:
        damaged.write("{not json\n")
    unreadable = tmp_path / "locked.jsonl"
    unreadable.write_text("{}")
    os.chmod(unreadable, 0)
    missing = tmp_path / "nobody.jsonl"
    try:
        report = class_report([tmp_path / "ada", unreadable, missing])
    finally:
        os.chmod(unreadable, 0o644)
    problems = "\n".join(report.problems)
    assert [row[0] for row in report.rows] == ["ada"]
    assert "skipped a damaged line" in problems and "nobody.jsonl: cannot be read" in problems
    if os.geteuid() != 0:  # root reads any file
        assert "locked.jsonl: cannot be read" in problems
    assert main(["report", str(missing)]) == 1
    assert "cannot be read" in capsys.readouterr().out


# ---- a notebook killed mid-write leaves half a line: the next record still gets a line of its own ----

def _file_cut_off_mid_write(path):
    """Two whole records (1 point each), then the first half of a third, with no newline: what a notebook
    killed while saving leaves behind."""
    for seed in (11, 12):
        append_line(path, {"learner": "ada", "exercise": "ch01.layout_from_grid", "earned": 1, "possible": 4,
                           "tiers": ["reference"], "seed": seed, "time": "2025-01-01T00:00:00"})
    whole = json.dumps({"learner": "ada", "exercise": "ch01.coalesce_by_hand", "earned": 4, "possible": 4,
                        "tiers": ["reference"], "seed": 13, "time": "2025-01-01T00:00:01"}, sort_keys=True)
    with open(path, "a") as out:
        out.write(whole[:len(whole) // 2])
    return whole[:len(whole) // 2]


def _check_after_the_cut(path, monkeypatch):
    monkeypatch.setenv("CUTEKIT_TIERS", "reference")
    monkeypatch.setenv("CUTEKIT_LEARNER", "ada")
    half = _file_cut_off_mid_write(path)
    check("ch01.layout_from_grid", answers.layout_for, seed=2)     # 3 of 4 points
    return half


def test_a_record_appended_after_half_a_line_starts_a_new_line_and_every_other_record_is_kept(
        private_progress_file, monkeypatch):
    half = _check_after_the_cut(private_progress_file, monkeypatch)
    lines = private_progress_file.read_text().splitlines()
    assert len(lines) == 4 and lines[2] == half                       # the damaged line, alone and as it was
    new = json.loads(lines[3])
    assert (new["exercise"], new["earned"], new["seed"], new["learner"]) == ("ch01.layout_from_grid", 3, 2, "ada")
    progress = read_progress(private_progress_file)
    assert [(r["earned"], r["seed"]) for r in progress.records] == [(1, 11), (1, 12), (3, 2)]
    assert progress.problems == (f"{private_progress_file}:3: skipped a damaged line (cut off mid-write: "
                                 f"{_json_error(half)})",)


def _json_error(text):
    try:
        json.loads(text)
    except ValueError as error:
        return str(error)
    raise AssertionError("not damaged")


def test_appending_to_a_whole_file_or_a_new_one_adds_no_blank_line(tmp_path):
    path = tmp_path / "new" / "progress.jsonl"
    for earned in (1, 2):
        append_line(path, {"exercise": "ch01.layout_from_grid", "earned": earned, "possible": 4})
    assert [json.loads(line)["earned"] for line in path.read_text().split("\n")[:-1]] == [1, 2]
    assert path.read_text().endswith("}\n") and "\n\n" not in path.read_text()


def test_the_progress_command_names_the_damaged_line_and_counts_the_new_record(private_progress_file, monkeypatch,
                                                                                capsys):
    _check_after_the_cut(private_progress_file, monkeypatch)
    assert main(["progress"]) == 0
    out = capsys.readouterr().out
    assert "ch01.layout_from_grid" in out and "3/4" in out and "3 attempts" in out
    assert f"{private_progress_file}:3: skipped a damaged line (cut off mid-write" in out
    assert "ch01.coalesce_by_hand" in out and "not tried" in out      # the damaged line's record is not counted


def test_the_report_names_the_damaged_line_and_keeps_the_new_record(private_progress_file, monkeypatch, tmp_path):
    import subprocess
    import sys

    _check_after_the_cut(private_progress_file, monkeypatch)
    csv_path = tmp_path / "class.csv"
    finished = subprocess.run([sys.executable, "-m", "cutekit", "report", str(private_progress_file),
                               "--csv", str(csv_path)], capture_output=True, text=True, timeout=120)
    assert finished.returncode == 1, finished.stderr                  # a problem was met: said in the exit code
    assert f"problem: {private_progress_file}:3: skipped a damaged line (cut off mid-write" in finished.stdout
    header, row = csv_path.read_text().splitlines()
    assert row.split(",")[header.split(",").index("ch01.layout_from_grid")] == "3"   # the best: the new record
    assert row.startswith("ada,")


def test_the_third_failed_check_of_an_exercise_offers_the_rule_behind_it(private_progress_file, monkeypatch):
    """The progress file counts the attempts: from the third failed check of one exercise on, the result says
    where the second hint level is. Another exercise's failures and a right answer do not count."""
    monkeypatch.setenv("CUTEKIT_TIERS", "reference")
    offer = "Stuck? `hint('ch01.layout_from_grid')` states the rule"
    check("ch01.layout_from_picture", answers.picture_swapped_strides, seed=1)
    check("ch01.layout_from_grid", answers.layout_for, seed=1)
    first, second, third = (check("ch01.layout_from_grid", answers.layout_for_column_major, seed=seed)
                            for seed in (1, 2, 3))
    assert offer not in str(first) and offer not in str(second)
    assert offer in str(third)
    assert "<code>hint(&#x27;ch01.layout_from_grid&#x27;)</code> states the rule" in third._repr_html_()
    assert offer not in str(check("ch01.layout_from_grid", answers.layout_for, seed=4))


def test_no_offer_without_a_progress_file_to_count_attempts_in(monkeypatch):
    monkeypatch.setenv("CUTEKIT_PROGRESS", "off")
    monkeypatch.setenv("CUTEKIT_TIERS", "reference")
    results = [check("ch01.layout_from_grid", answers.layout_for_column_major, seed=seed) for seed in range(4)]
    assert not any(result.offer for result in results)
