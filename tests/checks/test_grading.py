"""The grading framework: whatever the learner's answer does, the check reports it and the caller survives;
wrong answers never raise unless CUTEKIT_STRICT=1; cases are seeded and reported; missing tiers leave
their points waiting; the result shows as a table in JupyterLab and as lines in a terminal."""
import os
import time

import pytest

from cutekit.checks import Criterion, Exercise, check, exercises, failed, grade, passed
from cutekit.checks import grading
from cutekit.checks.sandbox import run_isolated


def doubling_exercise(*extra_criteria, timeout=5.0):
    """A toy exercise: `answer(x)` must return 2 * x, for x drawn from the seed."""
    def judge(context):
        for outcome in context.outcomes:
            if outcome.error:
                return failed(f"x={outcome.case['x']}: {outcome.error}")
            if outcome.value != 2 * outcome.case["x"]:
                return failed(f"x={outcome.case['x']}: expected {2 * outcome.case['x']}, got {outcome.value}")
        return passed()
    return Exercise(id="ch99.double", statement="Write double(x).",
                    cases=lambda rng: [{"x": rng.randint(0, 10**6)} for _ in range(3)],
                    ask=lambda answer, case: answer(case["x"]),
                    criteria=(Criterion("doubles", "reference", 2, judge), *extra_criteria), timeout=timeout)


def hint_of(result):
    return " ".join(criterion.hint for criterion in result.criteria if criterion.status == "failed")


def test_an_answer_that_raises_is_reported_with_its_error_and_line():
    def double(x):
        return x / undefined_name  # noqa: F821
    result = grade(doubling_exercise(), double, seed=1)
    assert not result.passed and "NameError" in hint_of(result) and "undefined_name" in hint_of(result)


def test_an_answer_that_loops_forever_times_out_and_the_caller_goes_on():
    def double(x):
        while True:
            pass
    started = time.monotonic()
    result = grade(doubling_exercise(timeout=1.0), double, seed=1)
    assert time.monotonic() - started < 5
    assert "did not finish within 1 s" in hint_of(result)


def test_an_answer_that_crashes_its_process_is_reported_and_the_caller_survives():
    def double(x):
        os.kill(os.getpid(), 11)  # a segfault, as a faulting extension would give
    result = grade(doubling_exercise(), double, seed=1)
    assert "crashed" in hint_of(result) and "SIGSEGV" in hint_of(result)


def test_an_answer_that_exits_is_reported():
    def double(x):
        os._exit(3)
    assert "ended the process" in hint_of(grade(doubling_exercise(), double, seed=1))


def test_an_answer_that_calls_sys_exit_is_reported_as_raising():
    def double(x):
        raise SystemExit(2)
    assert "SystemExit" in hint_of(grade(doubling_exercise(), double, seed=1))


def test_what_the_answer_prints_is_captured_and_shown():
    def double(x):
        print("thinking about", x)
        return 2 * x
    result = grade(doubling_exercise(), double, seed=1)
    assert result.passed and "thinking about" in result.output and "your code printed" in str(result)


def test_a_result_that_cannot_be_sent_back_is_reported():
    outcome = run_isolated(lambda: (lambda: 0))
    assert not outcome.ok and "could not be sent back" in outcome.error


def test_the_seed_is_reported_and_reproduces_the_cases():
    seen = []
    def double(x):
        seen.append(x)
        return 2 * x
    exercise = doubling_exercise()
    assert grade(exercise, double, seed=5).seed == 5
    same = [exercise.cases(__import__("random").Random(5)) for _ in range(2)]
    assert same[0] == same[1] and same[0] != exercise.cases(__import__("random").Random(6))
    assert "seed 5" in str(grade(exercise, double, seed=5))


def test_a_fresh_seed_is_drawn_for_each_check_unless_cutekit_seed_fixes_it(monkeypatch):
    assert len({grading.new_seed() for _ in range(5)}) > 1
    monkeypatch.setenv("CUTEKIT_SEED", "42")
    assert grading.new_seed() == 42


def test_an_answer_tuned_to_one_case_fails_on_the_others():
    exercise = doubling_exercise()
    first = exercise.cases(__import__("random").Random(0))[0]["x"]
    result = grade(exercise, lambda x: 2 * first, seed=0)
    assert not result.passed and "expected" in hint_of(result)


def test_a_wrong_answer_does_not_raise_in_learner_mode_but_raises_in_strict_mode(monkeypatch):
    from answers_ch01 import layout_for_column_major
    monkeypatch.setenv("CUTEKIT_TIERS", "reference")
    assert not check("ch01.layout_from_grid", layout_for_column_major, seed=0).passed
    monkeypatch.setenv("CUTEKIT_STRICT", "1")
    with pytest.raises(grading.CheckFailed, match="belongs at offset"):
        check("ch01.layout_from_grid", layout_for_column_major, seed=0)


def test_a_missing_gpu_leaves_its_points_waiting_not_lost(monkeypatch):
    monkeypatch.setitem(grading._tier_cache, "gpu", (False, "torch sees no CUDA device"))
    monkeypatch.setenv("CUTEKIT_STRICT", "1")  # waiting points are not a failure, even in CI
    on_gpu = Criterion("runs on the GPU", "gpu", 3, lambda context: passed())
    result = grade(doubling_exercise(on_gpu), lambda x: 2 * x, seed=1)
    assert result.passed and (result.earned, result.possible, result.waiting) == (2, 5, 3)
    assert "waits for an sm_80+ GPU (torch sees no CUDA device)" in str(result)
    assert "3 waiting" in str(result)


def test_a_criterion_that_needs_sm_90_waits_on_another_gpu_with_one_line_saying_so(monkeypatch):
    monkeypatch.setitem(grading._tier_cache, "gpu", (True, ""))
    monkeypatch.setitem(grading._tier_details, "gpu", "NVIDIA A100-SXM4-80GB (sm_80): CuTeDSL kernels run")
    ran = []
    on_hopper = Criterion("runs on an sm_90 GPU", "gpu", 1, lambda context: ran.append(1) or passed(), needs="sm_90")
    result = grade(doubling_exercise(on_hopper), lambda x: 2 * x, seed=1)
    assert not ran and result.passed and result.criteria[1].status == "waiting"
    assert "NVIDIA A100-SXM4-80GB (sm_80) has no TMA or wgmma, so this chapter's kernels need sm_90" in str(result)
    monkeypatch.setitem(grading._tier_details, "gpu", "NVIDIA B200 (sm_100): CuTeDSL kernels run")
    result = grade(doubling_exercise(on_hopper), lambda x: 2 * x, seed=1)
    assert not ran and "NVIDIA B200 (sm_100) has TMA but no wgmma (sm_90a only)" in str(result)
    monkeypatch.setitem(grading._tier_details, "gpu", "NVIDIA H100 80GB HBM3 (sm_90): CuTeDSL kernels run")
    result = grade(doubling_exercise(on_hopper), lambda x: 2 * x, seed=1)
    assert ran and result.criteria[1].status == "passed"


@pytest.mark.parametrize("detail, runs", [("NVIDIA H100 80GB HBM3 (sm_90): CuTeDSL kernels run", False),
                                          ("NVIDIA GeForce RTX 5090 (sm_120): CuTeDSL kernels run", False),
                                          ("NVIDIA A100-SXM4-80GB (sm_80): CuTeDSL kernels run", False),
                                          ("NVIDIA B200 (sm_100): CuTeDSL kernels run", True),
                                          ("NVIDIA B300 SXM6 AC (sm_103): CuTeDSL kernels run", True)])
def test_a_criterion_that_needs_sm_100_runs_on_b200_and_b300_and_waits_elsewhere_with_one_line(monkeypatch, detail,
                                                                                                runs):
    monkeypatch.setitem(grading._tier_cache, "gpu", (True, ""))
    monkeypatch.setitem(grading._tier_details, "gpu", detail)
    ran = []
    on_blackwell = Criterion("runs on an sm_100 GPU", "gpu", 1, lambda context: ran.append(1) or passed(),
                             needs="sm_100")
    result = grade(doubling_exercise(on_blackwell), lambda x: 2 * x, seed=1)
    criterion = result.criteria[1]
    if runs:
        assert ran and criterion.status == "passed"
    else:
        assert not ran and result.passed and criterion.status == "waiting" and "\n" not in criterion.hint
        assert f"{detail.split(':')[0]} has no tcgen05 or tensor memory, so this kernel needs sm_100a" in criterion.hint


def test_a_criterion_that_needs_sm_100_says_so_where_there_is_no_gpu(monkeypatch):
    monkeypatch.setitem(grading._tier_cache, "gpu", (False, "torch sees no CUDA device"))
    monkeypatch.setenv("CUTEKIT_STRICT", "1")
    on_blackwell = Criterion("runs on an sm_100 GPU", "gpu", 1, lambda context: passed(), needs="sm_100")
    result = grade(doubling_exercise(on_blackwell), lambda x: 2 * x, seed=1)
    waiting = result.criteria[1]
    assert result.passed and waiting.status == "waiting" and "\n" not in waiting.hint
    assert "this machine (torch sees no CUDA device) has no tcgen05 or tensor memory, so this kernel needs " \
           "sm_100a" in waiting.hint


def test_a_criterion_names_only_an_architecture_the_grader_knows():
    with pytest.raises(ValueError, match="needs must be one of \\('sm_90', 'sm_100'\\)"):
        Criterion("runs on Blackwell", "gpu", 1, lambda context: passed(), needs="blackwell")


def test_other_tiers_run_only_once_the_reference_criteria_pass(monkeypatch):
    monkeypatch.setitem(grading._tier_cache, "gpu", (True, ""))
    ran = []
    on_gpu = Criterion("runs on the GPU", "gpu", 1, lambda context: ran.append(1) or passed())
    result = grade(doubling_exercise(on_gpu), lambda x: x, seed=1)
    assert not ran and result.criteria[1].status == "not run"


def test_a_bug_in_the_check_itself_is_reported_as_such():
    broken = Criterion("broken", "reference", 1, lambda context: 1 / 0)
    result = grade(doubling_exercise(broken), lambda x: 2 * x, seed=1)
    assert "the check itself failed" in hint_of(result)


def test_an_unknown_exercise_id_names_the_close_ones():
    with pytest.raises(ValueError, match="did you mean ch01.layout_from_grid"):
        check("ch01.layout_from_gird", None)


def test_every_exercise_is_named_by_its_chapter_with_a_one_line_statement_and_points():
    found = exercises()
    assert len({exercise.id for exercise in found}) == len(found)
    for exercise in found:
        assert exercise.id.startswith(exercise.chapter + ".") and exercise.chapter.startswith("ch")
        assert exercise.statement and "\n" not in exercise.statement
        assert exercise.points > 0 and all(c.tier in grading.TIERS for c in exercise.criteria)
        assert any(c.tier == "reference" for c in exercise.criteria)


def test_the_result_shows_as_an_html_table_with_status_tier_points_seed_and_hint(monkeypatch):
    monkeypatch.setitem(grading._tier_cache, "gpu", (False, "no GPU here"))
    on_gpu = Criterion("runs on the GPU", "gpu", 1, lambda context: passed())
    html = grade(doubling_exercise(on_gpu), lambda x: x + 1, seed=9)._repr_html_()
    for text in ("<table", "failed", "waiting", "reference", "gpu", "0/2", "seed 9", "expected"):
        assert text in html
    assert "#cf222e" in html  # failures in red


def test_the_result_shows_as_aligned_lines_in_a_terminal():
    text = str(grade(doubling_exercise(), lambda x: x + 1, seed=9))
    assert text.splitlines()[0] == "ch99.double: 0/2 points, not yet (seed 9)"
    assert "[FAIL] reference   0/2  doubles" in text and repr(grade(doubling_exercise(), lambda x: 2 * x, seed=9))


def test_a_registered_figure_renderer_draws_the_mistake_under_its_hint(monkeypatch):
    from cutekit.checks import result as result_module
    from answers_ch01 import layout_for_column_major
    monkeypatch.setenv("CUTEKIT_TIERS", "reference")
    monkeypatch.setattr(result_module, "_figure_renderer", lambda figure: f"<svg data-got='{figure['got']}'/>")
    html = check("ch01.layout_from_grid", layout_for_column_major, seed=0)._repr_html_()
    assert "<svg data-got=" in html


def test_the_courses_placeholder_is_not_attempted_not_wrong_and_is_not_recorded(private_progress_file):
    def double(x):
        # YOUR CODE HERE
        return None
    result = check("ch01.layout_from_grid", double, seed=3)
    assert not result.attempted and result.earned == 0
    assert "not attempted yet" in str(result) and "YOUR CODE HERE" in str(result)
    assert all(criterion.status == "not run" and not criterion.hint for criterion in result.criteria)
    assert not private_progress_file.exists()


def test_a_placeholder_in_a_kernel_the_answer_launches_counts_as_not_attempted():
    def tails_kernel(x):
        # YOUR CODE HERE
        pass

    def add_with_tails(x):
        tails_kernel(x)
    assert grading.untouched(add_with_tails)


def test_an_answer_written_under_the_marker_is_graded():
    def double(x):
        # YOUR CODE HERE
        return 2 * x
    assert not grading.untouched(double)
    assert grade(doubling_exercise(), double, seed=1).passed


def test_a_placeholder_in_strict_mode_raises(monkeypatch):
    monkeypatch.setenv("CUTEKIT_STRICT", "1")

    def double(x):
        # YOUR CODE HERE
        return None
    with pytest.raises(grading.CheckFailed, match="not attempted"):
        check("ch01.layout_from_grid", double, seed=3)


def test_the_html_shows_code_spans_as_code_and_keeps_tier_badges_on_one_line():
    html = grade(doubling_exercise(), lambda x: x + 1, seed=9)._repr_html_()
    assert "white-space:nowrap" in html
    exercise = Exercise(id="ch99.code", statement="Write `f(x)`.", cases=lambda rng: [{}],
                        ask=lambda answer, case: answer(), criteria=(Criterion("c", "reference", 1,
                                                                               lambda context: passed()),))
    assert "<code>f(x)</code>" in grade(exercise, lambda: 1, seed=0)._repr_html_()
