"""What a criterion's judge returns: a `Verdict`, made with `passed()` or `failed(hint, figure)`.

On its own so that every tier (the grading core, the CuTeDSL tier, the chapters) can give verdicts without
importing the grading machinery."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Verdict:
    """One criterion's judgement: passed or not, the hint for a wrong answer, an optional picture's data."""
    passed: bool
    hint: str = ""
    figure: dict | None = None


def passed() -> Verdict:
    return Verdict(True)


def failed(hint: str, figure: dict | None = None) -> Verdict:
    return Verdict(False, hint, figure)
