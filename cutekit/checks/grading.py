"""Exercises, criteria, and grading an answer on every tier: `grade(exercise, answer, seed)`.

How an answer is graded (`checking.check` finds the exercise, calls `grade`, records the result):
  1. The exercise draws its randomized cases from a seeded generator (the seed is reported, so a result
     reproduces with `check(..., seed=...)`); an answer tuned to the worked example meets other cases.
  2. The learner's answer is asked every case in a forked child with a time limit (`sandbox`); only plain
     data (the answer's outcomes, or an error per case) comes back.
  3. Each criterion judges those outcomes on its tier: `reference` (cutekit's algebra, always),
     `cutedsl-cpu` (real CuTeDSL in a subprocess, when it is installed), `gpu` (a real kernel, when there is
     an sm_80+ GPU). A tier that is missing leaves its points waiting; it is never counted as a failure.
  4. The outcome is an `ExerciseResult`: per criterion, its tier, status, points and hint; for a kernel
     exercise whose `runs` says so, one line per problem the simulator ran, with its wall time (a kernel
     that is right but slow shows it, where there is no GPU to time it).

A wrong answer never raises; `strict()` (`CUTEKIT_STRICT=1`, for CI) says a lost point should, which
`grade` honours for a check that itself fails and `checking.check` for a wrong answer.
"""
from __future__ import annotations

import os
import random
import re
import secrets
import sys
from dataclasses import dataclass
from typing import Callable

from .kernels import kernel_module_source
from .result import CriterionResult, ExerciseResult
from .sandbox import Isolated, describe_exception, run_isolated, still_working
from .verdict import Verdict, failed, passed

TIERS = ("reference", "cutedsl-cpu", "gpu")


class CheckFailed(AssertionError):
    """Raised by `check` in strict mode (`CUTEKIT_STRICT=1`) when an answer loses points."""


@dataclass(frozen=True)
class Outcome:
    """The learner's answer to one case: a plain value, or the error it gave."""
    case: dict
    value: object = None
    error: str = ""


@dataclass(frozen=True)
class Context:
    """What a criterion sees: the cases, the learner's outcomes (one per case) and the answer itself."""
    exercise: "Exercise"
    seed: int
    outcomes: tuple
    answer: object


@dataclass(frozen=True)
class Criterion:
    """One thing the answer must get right, worth `points`, judged on `tier` by `judge(context) -> Verdict`."""
    name: str
    tier: str
    points: int
    judge: Callable[[Context], Verdict]
    needs: str = ""         # a GPU architecture the criterion needs beyond its tier ("sm_90", "sm_100"), else it waits

    def __post_init__(self):
        if self.tier not in TIERS:
            raise ValueError(f"tier must be one of {TIERS}, got {self.tier!r}")
        if self.needs and self.needs not in ARCHITECTURES:
            raise ValueError(f"needs must be one of {tuple(ARCHITECTURES)} (or empty), got {self.needs!r}")


@dataclass(frozen=True)
class Exercise:
    """A graded exercise.

    `cases(rng)` draws the randomized inputs (plain dicts); `ask(answer, case)` runs the learner's answer on
    one case and returns a plain value (it runs in the sandbox, so it may raise freely: wrong type, wrong
    shape); `criteria` judge the outcomes. `forbidden` names cutekit.cute functions the answer must not call
    (an exercise that asks for coalescing by hand switches `coalesce` off while the answer runs). `rule` is the
    second hint level, printed by `hint(id)`: the rule(s) behind the exercise, one per line, stated without the
    answer's code or formula. `runs(outcome)`, for a kernel exercise, lists the problems the simulator ran for
    that outcome as (problem, seconds of wall time) pairs; the result shows one line for each.
    """
    id: str
    statement: str
    cases: Callable[[random.Random], list]
    ask: Callable[[object, dict], object]
    criteria: tuple
    forbidden: tuple = ()
    timeout: float = 10.0
    example: str = ""
    rule: str = ""
    runs: Callable[[Outcome], list] | None = None

    @property
    def chapter(self) -> str:
        return self.id.split(".", 1)[0]

    @property
    def points(self) -> int:
        return sum(criterion.points for criterion in self.criteria)


def strict() -> bool:
    return os.environ.get("CUTEKIT_STRICT", "") not in ("", "0", "false", "no")


def _ask_every_case(exercise: Exercise, answer, cases: list, parent: int) -> list:
    """Runs in the sandbox child: the forbidden functions are switched off, then every case is asked."""
    if os.getpid() != parent:  # only in a forked child: the notebook's own cute module stays whole
        _use_reference_algebra(answer)
        _switch_off(exercise.forbidden, answer)
    outcomes = []
    for case in cases:
        stops = _kernels_stopped()
        try:
            outcomes.append(Outcome(case, value=exercise.ask(answer, case)))
        except Exception as error:
            outcomes.append(Outcome(case, error=describe_exception(error)))
        still_working()
        stopped = _kernels_stopped()[len(stops):]
        if stopped:     # the simulator stopped a kernel that made no progress: the next cases would wait as long
            for later in cases[len(outcomes):]:
                outcomes.append(Outcome(later, error=f"not run, as the case before was stopped: {stopped[0]}"))
            break
    return outcomes


def _kernels_stopped() -> list:
    """The simulator's NoProgressErrors so far in this process (none where it was never imported)."""
    watchdog = sys.modules.get("cutekit.sim.machine.watchdog")
    return list(getattr(watchdog, "STOPPED", ()))


def _use_reference_algebra(answer) -> None:
    """On a GPU machine the notebook's `cute` is real CuTeDSL after `cutekit.use("auto")`, whose layout
    functions work only inside a @cute.jit trace; the reference tier grades an answer with the simulator's
    `cute` instead (cutekit's algebra with the same names, plus the device operations). Only in the forked
    child: the notebook keeps its names."""
    import types
    namespace = getattr(answer, "__globals__", None) or {}
    real = [key for key, value in namespace.items() if isinstance(value, types.ModuleType)
            and value.__name__ == "cutlass.cute" and not getattr(value, "__cutekit_sim__", False)]
    if not real:
        return
    try:   # the simulator's cute: the reference algebra plus the device operations, for kernel-shaped answers
        from cutekit.sim.dsl import build_modules
        replacement = build_modules()["cutlass.cute"]
    except ImportError:
        from cutekit import cute as replacement
    for key in real:
        namespace[key] = replacement


def _switch_off(names: tuple, answer) -> None:
    if not names:
        return
    from cutekit import cute

    def refuse(name):
        def refused(*args, **kwargs):
            raise RuntimeError(f"this exercise asks you to work it out by hand: cute.{name} is switched off here")
        return refused

    originals = {name: getattr(cute, name, None) for name in names}
    for name in names:
        setattr(cute, name, refuse(name))
    # an answer that did `from cutekit.cute import coalesce` holds its own reference: switch that off too
    namespace = getattr(answer, "__globals__", {})
    for key, value in list(namespace.items()):
        for name, original in originals.items():
            if original is not None and value is original:
                namespace[key] = refuse(name)


_tier_cache: dict = {}


def tier_available(tier: str) -> tuple[bool, str]:
    """Whether this machine offers `tier`, and why not (probed once per process; `CUTEKIT_TIERS` overrides,
    e.g. `CUTEKIT_TIERS=reference` to grade on the reference tier alone)."""
    allowed = os.environ.get("CUTEKIT_TIERS")
    if allowed is not None and tier not in allowed.replace(",", " ").split():
        return False, f"the {tier} tier is switched off (CUTEKIT_TIERS={allowed})"
    if tier == "reference":
        return True, ""
    if tier not in _tier_cache:
        from cutekit import backend
        probe = backend.probe_cutedsl_cpu if tier == "cutedsl-cpu" else backend.probe_gpu
        found = probe()
        _tier_cache[tier] = (found.available, "" if found.available else f"{found.detail}")
        _tier_details[tier] = found.detail
    return _tier_cache[tier]


_tier_details: dict = {}


# the GPUs each `needs` accepts, as the gpu tier's probe names them ("NVIDIA B200 (sm_100): ..."): wgmma is on
# sm_90a alone; tcgen05 and tensor memory on datacenter Blackwell, B200/GB200 (sm_100a) and B300 (sm_103a), and
# not on consumer Blackwell (sm_120, sm_121), which has neither
ARCHITECTURES = {"sm_90": ("sm_90",), "sm_100": ("sm_100", "sm_103")}


def _missing_architecture(criterion) -> str:
    """Why `criterion` cannot run on this tier's device (its `needs`), or "" when it can."""
    if not criterion.needs:
        return ""
    detail = _tier_details.get(criterion.tier, "")
    if any(f"({architecture})" in detail for architecture in ARCHITECTURES.get(criterion.needs, (criterion.needs,))):
        return ""
    device = detail.split(":")[0] if detail else "this GPU"
    return _needs_line(criterion.needs, device, re.search(r"\(sm_(\d+)\)", detail))


def _needs_line(needs: str, device: str, found=None) -> str:
    """The one line a criterion that needs `needs` shows where `device` lacks it."""
    if needs == "sm_100":
        return (f"waits for an sm_100 GPU (a B200 or GB200; a B300, sm_103, too): {device} has no tcgen05 or tensor "
                f"memory, so this kernel needs sm_100a; the criteria above were graded without it")
    # wgmma is sm_90a only: a later GPU (Blackwell, sm_100 on) has TMA but multiplies with tcgen05 instead
    lacks = "has TMA but no wgmma (sm_90a only)" if found and int(found.group(1)) > 90 else "has no TMA or wgmma"
    return (f"waits for an {needs} GPU (an H100 or H200): {device} {lacks}, so this "
            f"chapter's kernels need {needs}; the simulator graded the criteria above")


def _waiting_reason(tier: str, why: str) -> str:
    if tier == "gpu":
        return f"waits for an sm_80+ GPU ({why}); rerun this check on one to earn these points"
    return f"waits for CuTeDSL on this machine ({why})"


MARKER = "# YOUR CODE HERE"
PLACEHOLDERS = ("return None", "pass")


def untouched(answer) -> bool:
    """Whether `answer` (or a kernel or function it calls) still has the course's placeholder as the whole
    body under `# YOUR CODE HERE`: the exercise has not been attempted, so there is nothing to grade."""
    try:
        lines = kernel_module_source(answer).splitlines()
    except Exception:  # a lambda, a builtin, source not readable: grade it as it is
        return False
    for i, line in enumerate(lines):
        if line.strip() != MARKER:
            continue
        indent, body = len(line) - len(line.lstrip()), []
        for following in lines[i + 1:]:
            if following.strip() and len(following) - len(following.lstrip()) < indent:
                break
            if following.strip():
                body.append(following.strip())
        if body and all(statement in PLACEHOLDERS for statement in body):
            return True
    return False


def grade(exercise: Exercise, answer, seed: int) -> ExerciseResult:
    """Grade `answer` on every tier this machine offers; never raises for a wrong answer."""
    if untouched(answer):
        return ExerciseResult(
            exercise.id, exercise.statement, seed,
            tuple(CriterionResult(c.name, c.tier, c.points, 0, "not run", "") for c in exercise.criteria),
            note=f"write your answer in place of the placeholder under {MARKER}, then run this cell again",
            attempted=False)
    cases = exercise.cases(random.Random(seed))
    parent = os.getpid()
    isolated = run_isolated(lambda: _ask_every_case(exercise, answer, cases, parent), timeout=exercise.timeout)
    if isolated.ok:
        outcomes = tuple(isolated.value)
    else:  # the whole run failed (timeout, crash): every case carries that message
        outcomes = tuple(Outcome(case, error=isolated.error) for case in cases)
    context = Context(exercise, seed, outcomes, answer)
    results, reference_passed = [], True
    for criterion in exercise.criteria:
        available, why = tier_available(criterion.tier)
        if not available:
            # a Blackwell kernel says what it needs even where there is no GPU at all
            reason = (_needs_line(criterion.needs, f"this machine ({why})") if criterion.needs == "sm_100"
                      else _waiting_reason(criterion.tier, why))
            results.append(CriterionResult(criterion.name, criterion.tier, criterion.points, 0, "waiting", reason))
            continue
        missing = _missing_architecture(criterion)
        if missing:
            results.append(CriterionResult(criterion.name, criterion.tier, criterion.points, 0, "waiting", missing))
            continue
        if criterion.tier != "reference" and not reference_passed:
            results.append(CriterionResult(criterion.name, criterion.tier, criterion.points, 0, "not run",
                                           "runs once the reference criteria pass"))
            continue
        try:
            verdict = criterion.judge(context)
        except Exception as error:  # a bug in the check, not in the answer: say so plainly
            if strict():
                raise
            verdict = failed(f"the check itself failed ({describe_exception(error)}); please report this")
        if criterion.tier == "reference" and not verdict.passed:
            reference_passed = False
        results.append(CriterionResult(criterion.name, criterion.tier, criterion.points,
                                       criterion.points if verdict.passed else 0,
                                       "passed" if verdict.passed else "failed", verdict.hint, verdict.figure))
    return ExerciseResult(exercise.id, exercise.statement, seed, tuple(results), isolated.output,
                          simulated=simulator_times(exercise, outcomes))


def simulator_times(exercise: Exercise, outcomes) -> tuple:
    """One line per problem the simulator ran for a kernel exercise (its `runs`): the problem and the wall
    time of the learner's kernel on it, on this machine."""
    if exercise.runs is None:
        return ()
    return tuple(f"{problem}: {seconds:.1f} s" for outcome in outcomes for problem, seconds in exercise.runs(outcome))


def new_seed() -> int:
    """A fresh seed per check (so each run meets new cases), or `CUTEKIT_SEED` when set."""
    fixed = os.environ.get("CUTEKIT_SEED")
    return int(fixed) if fixed else secrets.randbelow(1_000_000)


__all__ = ["Criterion", "Exercise", "Verdict", "Outcome", "Context", "CheckFailed", "grade", "new_seed", "strict",
           "passed", "failed", "Isolated"]
