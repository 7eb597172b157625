"""Graded exercises. The learner makes one call, `check("ch01.layout_from_grid", answer)`, and sees
per criterion: passed or not, the tier it ran on, points, and a specific hint for a wrong answer.

  exercises()              every exercise (id, chapter, statement, points, criteria)
  check(id, answer)        grade on every tier this machine offers; record the result in the progress file
  hint(id)                 the rule(s) behind an exercise: the second hint level (the check's hint is the first)
  compile_to_ptx(...)      compile a CuTeDSL function for sm_80 in a subprocess; PTX text and opcode counts
  layout_algebra_in_cutedsl(calls)  real CuTeDSL's printed answers to layout-algebra calls, in a subprocess

Environment: CUTEKIT_STRICT=1 makes a lost point raise (CI); CUTEKIT_SEED fixes the cases; CUTEKIT_PROGRESS
names the progress file (or `off`); CUTEKIT_TIERS limits the tiers (e.g. `reference`).
"""
from .checking import check
from .cutedsl import AlgebraReply, PtxReport, compile_to_ptx, layout_algebra_in_cutedsl
from .grading import CheckFailed, Criterion, Exercise, Verdict, failed, grade, passed
from .registry import exercise, exercises
from .result import CriterionResult, ExerciseResult, set_figure_renderer
from .rules import hint

__all__ = ["check", "hint", "exercises", "exercise", "grade", "Exercise", "Criterion", "Verdict", "passed", "failed",
           "CheckFailed", "ExerciseResult", "CriterionResult", "set_figure_renderer", "compile_to_ptx", "PtxReport",
           "layout_algebra_in_cutedsl", "AlgebraReply"]
