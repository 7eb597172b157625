"""A kernel exercise's result says how long the learner's kernel ran on the simulator, one line per problem
(the simulator's wall time on this machine): where there is no GPU to time it, a capstone that is right but
slow shows it there, beside the tiers that ran."""
import random

from cutekit.checks import ch05_tiled_copy, ch07_sgemm, ch08_hopper, ch09_blackwell, grading
from cutekit.checks.grading import Criterion, Exercise, Outcome, passed
from cutekit.checks.result import SIMULATED

CAPSTONES = {"ch05.capstone_softmax": ch05_tiled_copy, "ch07.capstone_gemm": ch07_sgemm, "ch08.capstone": ch08_hopper,
             "ch09.capstone": ch09_blackwell}


def test_a_kernel_exercises_result_shows_one_line_per_simulated_problem_with_its_seconds():
    exercise = Exercise(id="chXX.timed", statement="a kernel", cases=lambda rng: [{"M": 4}, {"M": 9}],
                        ask=lambda answer, case: {"seconds": case["M"] / 4},
                        criteria=(Criterion("right", "reference", 1, lambda context: passed()),),
                        runs=lambda outcome: [(f"M={outcome.case['M']}", outcome.value["seconds"])])
    result = grading.grade(exercise, lambda: None, seed=0)
    assert result.simulated == ("M=4: 1.0 s", "M=9: 2.2 s")
    text = str(result)
    assert f"  {SIMULATED}:\n    M=4: 1.0 s\n    M=9: 2.2 s" in text and "[pass] reference" in text
    assert "M=9: 2.2 s" in result._repr_html_()


def test_an_exercise_without_simulated_problems_shows_no_time_lines():
    exercise = Exercise(id="chXX.algebra", statement="a layout", cases=lambda rng: [{}], ask=lambda answer, case: 1,
                        criteria=(Criterion("right", "reference", 1, lambda context: passed()),))
    result = grading.grade(exercise, lambda: None, seed=0)
    assert result.simulated == () and SIMULATED not in str(result)


def _timed(value):
    return value | {"seconds": 1.25} if isinstance(value, dict) else [v | {"seconds": 1.25} for v in value]


def test_each_capstone_times_every_problem_the_simulator_ran():
    """The capstones' `runs`, on outcomes shaped as their harnesses return them: the softmax one line per
    shape, the Ampere GEMM one per problem of its single case (up to the first wrong C), the Hopper and Blackwell
    GEMMs one per problem, none for a problem skipped after the first failed."""
    lines = {}
    for exercise_id, module in CAPSTONES.items():
        exercise = next(e for e in module.EXERCISES if e.id == exercise_id)
        cases = exercise.cases(random.Random(0))
        if exercise_id == "ch07.capstone_gemm":
            outcomes = [Outcome(cases[0], value=_timed([{"error": "", "wrong": 0}] * 2))]     # the third not run
        elif exercise_id in ("ch08.capstone", "ch09.capstone"):
            outcomes = [Outcome(cases[0], value=_timed({"error": "", "wrong": 5})), Outcome(cases[1], {"skipped": True})]
        else:
            outcomes = [Outcome(case, value=_timed({})) for case in cases] + [Outcome(cases[0], error="Boom")]
        lines[exercise_id] = grading.simulator_times(exercise, outcomes)
        assert lines[exercise_id] and all(line.endswith(": 1.2 s") for line in lines[exercise_id]), lines
    assert len(lines["ch05.capstone_softmax"]) == 5 and lines["ch05.capstone_softmax"][0].startswith("a 4x1024 softmax")
    assert len(lines["ch07.capstone_gemm"]) == 2 and lines["ch07.capstone_gemm"][1].startswith("M, N, K = 72, 136, 40")
    assert len(lines["ch08.capstone"]) == 1 and lines["ch08.capstone"][0].startswith("M=")
    assert len(lines["ch09.capstone"]) == 1 and lines["ch09.capstone"][0].startswith("M=")
