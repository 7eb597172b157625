"""A graded kernel that never finishes costs seconds, not minutes: the simulator stops it (after 10 s by default) and
the check names the line, the block and the thread, skips the cases after it, and the caller goes on; whatever
else hangs in the check's sandbox (host code, a C call) is stopped after QUIET_SECONDS without progress."""
import inspect
import os
import re
import time

import pytest

from cutekit.checks import check, sandbox
from cutekit.sim import configure, machine

import stuck_answers


def _reference_hints(result) -> list:
    return [criterion.hint for criterion in result.criteria if criterion.tier == "reference"]


def _line_of(function, text: str) -> int:
    lines, first = inspect.getsourcelines(function)
    return first + next(i for i, line in enumerate(lines) if line.strip() == text)


def _seconds_allowed(seconds: float) -> float:
    """`seconds`, or more on a machine so busy that this process gets less than a third of a core: the simulator
    stops a block after 10 s only once 5 of them were spent on the CPU (a busy machine must not stop a slow block)."""
    busy = os.getloadavg()[0] / (os.cpu_count() or 1)
    return seconds * max(1.0, busy / 3)


def test_a_main_loop_that_never_ends_is_stopped_within_20_s_naming_line_block_and_thread(monkeypatch):
    monkeypatch.setenv("CUTEKIT_TIERS", "reference")
    assert machine.SETTINGS.block_seconds == 10.0
    started = time.monotonic()
    result = check("ch07.main_loop", stuck_answers.main_loop_while_true, seed=0, record=False)
    seconds = time.monotonic() - started
    assert seconds < _seconds_allowed(20), seconds
    first, second = _reference_hints(result)
    line = _line_of(stuck_answers.main_loop_while_true, "k_tiles = k_tiles + 0")
    assert re.search(rf"NoProgressError: thread \(\d+, 0, 0\) of block \(0, 0, 0\) in \w+, stuck_answers.py, line "
                     rf"({line - 1}|{line}) `", first), first
    assert "this thread runs on without reaching a barrier" in first
    assert second.split(": ", 1)[1].startswith("not run, as the case before was stopped: NoProgressError: thread (")
    assert not result.passed


def test_a_barrier_loop_whose_counter_never_advances_is_stopped_and_named(monkeypatch):
    monkeypatch.setenv("CUTEKIT_TIERS", "reference")
    before = machine.SETTINGS.block_seconds
    configure(block_seconds=2)                       # the forked sandbox inherits it; 10 s is tested above
    try:
        started = time.monotonic()
        result = check("ch07.main_loop", stuck_answers.main_loop_counter_never_advanced, seed=0, record=False)
        seconds = time.monotonic() - started
    finally:
        configure(block_seconds=before)
    assert seconds < _seconds_allowed(15), seconds
    first, _ = _reference_hints(result)
    assert re.search(r"NoProgressError: thread \(\d+, 0, 0\) of block \(0, 0, 0\) in \w+, stuck_answers.py, line \d+ `",
                     first), first
    assert "meeting at barriers" in first and "is its counter advanced?" in first


def test_a_sandbox_that_shows_no_progress_is_stopped_after_the_quiet_limit():
    def host_code_that_hangs():
        while True:
            pass
    started = time.monotonic()
    outcome = sandbox.run_isolated(host_code_that_hangs, timeout=60, quiet=1)
    assert time.monotonic() - started < 10
    assert outcome.error.startswith("your code made no progress for 1 s (no case finished)"), outcome.error


def test_a_sandbox_that_keeps_making_progress_runs_past_the_quiet_limit():
    def many_short_cases():
        for _ in range(6):
            time.sleep(0.3)
            sandbox.still_working()
        return "done"
    outcome = sandbox.run_isolated(many_short_cases, timeout=60, quiet=1)
    assert outcome.ok and outcome.value == "done", outcome.error


def test_grading_gives_each_case_at_most_20_s():
    assert sandbox.QUIET_SECONDS <= 20
    assert inspect.signature(sandbox.run_isolated).parameters["quiet"].default == sandbox.QUIET_SECONDS


@pytest.mark.parametrize("exercise_id", ["ch07.main_loop"])
def test_the_right_main_loop_still_passes_with_the_watchdog(exercise_id, monkeypatch):
    from answers_ch07 import CORRECT
    monkeypatch.setenv("CUTEKIT_TIERS", "reference")
    result = check(exercise_id, CORRECT[exercise_id], seed=0, record=False)
    assert all(criterion.status == "passed" for criterion in result.criteria if criterion.tier == "reference"), result
