"""What a check returns: per criterion, its tier, status, points and hint; shown as an HTML table in
JupyterLab (`_repr_html_`) and as aligned lines in a terminal (`__str__`).

Statuses: `passed`, `failed`, `waiting` (its tier is missing on this machine: the points wait for it, they
are not lost) and `not run` (it runs once the reference criteria pass).

A criterion may carry `figure`, plain data for a picture of the mistake (e.g. the expected and the given
layout and the first coordinate where they differ). `set_figure_renderer(function)` lets a renderer turn
that data into HTML; without one, the hint text stands alone.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from html import escape
import re

STATUS_MARK = {"passed": "pass", "failed": "FAIL", "waiting": "wait", "not run": "----"}
STATUS_COLOUR = {"passed": "#1a7f37", "failed": "#cf222e", "waiting": "#9a6700", "not run": "#6e7781"}
TIER_COLOUR = {"reference": "#0969da", "cutedsl-cpu": "#8250df", "gpu": "#1a7f37"}

_figure_renderer = None

# the heading of a kernel exercise's simulator times (one line per problem below it)
SIMULATED = "your kernel on the simulator, wall time on this machine (not a GPU's speed)"


def set_figure_renderer(renderer) -> None:
    """Register `renderer(figure: dict) -> str (HTML) | None`, used for criteria that carry a figure."""
    global _figure_renderer
    _figure_renderer = renderer


def _html_text(text: str) -> str:
    """Plain text for HTML, with `code` spans (as the statements and hints write them) shown as code."""
    return re.sub(r"`([^`\n]+)`", r"<code>\1</code>", escape(text))


@dataclass(frozen=True)
class CriterionResult:
    name: str
    tier: str
    points: int
    earned: int
    status: str
    hint: str = ""
    figure: dict | None = None


@dataclass(frozen=True)
class ExerciseResult:
    exercise_id: str
    statement: str
    seed: int
    criteria: tuple
    output: str = ""           # what the answer printed while it was checked
    note: str = ""             # e.g. the progress file could not be written
    offer: str = ""            # after repeated failures: where the second hint level is (`hint(id)`)
    attempted: bool = True     # False: the exercise still holds the course's placeholder (nothing graded)
    simulated: tuple = ()      # a kernel exercise: "problem: seconds" per problem the simulator ran

    @property
    def earned(self) -> int:
        return sum(criterion.earned for criterion in self.criteria)

    @property
    def possible(self) -> int:
        return sum(criterion.points for criterion in self.criteria)

    @property
    def waiting(self) -> int:
        """Points that wait for a tier this machine lacks (a GPU, or CuTeDSL)."""
        return sum(criterion.points for criterion in self.criteria if criterion.status == "waiting")

    @property
    def passed(self) -> bool:
        """Every criterion that could run here passed (waiting ones do not count against the answer)."""
        return all(criterion.status in ("passed", "waiting") for criterion in self.criteria)

    @property
    def tiers(self) -> tuple:
        """The tiers whose criteria all ran and passed."""
        ran = {}
        for criterion in self.criteria:
            if criterion.status in ("passed", "failed"):
                ran[criterion.tier] = ran.get(criterion.tier, True) and criterion.status == "passed"
        return tuple(tier for tier, ok in ran.items() if ok)

    def with_note(self, note: str) -> "ExerciseResult":
        return replace(self, note=note)

    def with_offer(self, offer: str) -> "ExerciseResult":
        return replace(self, offer=offer)

    def _summary(self) -> str:
        if not self.attempted:
            return f"0/{self.possible} points, not attempted yet"
        verdict = "passed" if self.passed else "not yet"
        wait = f", {self.waiting} waiting for another tier" if self.waiting else ""
        return f"{self.earned}/{self.possible} points{wait}, {verdict}"

    def __str__(self) -> str:
        lines = [f"{self.exercise_id}: {self._summary()} (seed {self.seed})", f"  {self.statement}"]
        for criterion in self.criteria:
            lines.append(f"  [{STATUS_MARK[criterion.status]}] {criterion.tier:<11} "
                         f"{criterion.earned}/{criterion.points}  {criterion.name}")
            if criterion.hint:
                lines.extend(f"{'':>26}{line}" for line in criterion.hint.splitlines())
        if self.simulated:
            lines.append(f"  {SIMULATED}:")
            lines.extend(f"    {line}" for line in self.simulated)
        if self.output.strip():
            lines.append("  your code printed:")
            lines.extend(f"    {line}" for line in self.output.strip().splitlines()[-10:])
        if self.note:
            lines.append(f"  note: {self.note}")
        if self.offer:
            lines.append(f"  {self.offer}")
        return "\n".join(lines)

    __repr__ = __str__

    def _repr_html_(self) -> str:
        headline_colour = STATUS_COLOUR["not run" if not self.attempted else "passed" if self.passed else "failed"]
        rows = []
        for criterion in self.criteria:
            colour = STATUS_COLOUR[criterion.status]
            badge = (f"<span style='background:{TIER_COLOUR.get(criterion.tier, '#6e7781')};color:white;"
                     f"border-radius:8px;padding:1px 7px;font-size:85%;white-space:nowrap'>"
                     f"{escape(criterion.tier)}</span>")
            hint = _html_text(criterion.hint).replace("\n", "<br>")
            if criterion.figure is not None and _figure_renderer is not None:
                try:
                    hint += _figure_renderer(criterion.figure) or ""
                except Exception:  # a broken picture must not hide the hint
                    pass
            rows.append(
                f"<tr><td style='color:{colour};font-weight:bold'>{criterion.status}</td><td>{badge}</td>"
                f"<td style='text-align:right'>{criterion.earned}/{criterion.points}</td>"
                f"<td style='text-align:left'>{_html_text(criterion.name)}"
                + (f"<div style='color:{colour};margin-top:2px'>{hint}</div>" if hint else "") + "</td></tr>")
        extra = ""
        if self.simulated:
            extra += (f"<div style='color:#6e7781'>{escape(SIMULATED)}:<br>"
                      + "<br>".join(escape(line) for line in self.simulated) + "</div>")
        if self.output.strip():
            printed = escape("\n".join(self.output.strip().splitlines()[-10:]))
            extra += f"<details><summary>your code printed</summary><pre>{printed}</pre></details>"
        if self.note:
            extra += f"<div style='color:#9a6700'>note: {escape(self.note)}</div>"
        if self.offer:
            extra += f"<div style='color:#0969da'>{_html_text(self.offer)}</div>"
        return (f"<div><b><code>{escape(self.exercise_id)}</code></b> "
                f"<span style='color:{headline_colour};font-weight:bold'>{escape(self._summary())}</span> "
                f"<span style='color:#6e7781'>seed {self.seed}</span><br><i>{_html_text(self.statement)}</i>"
                "<table><thead><tr><th>status</th><th>tier</th><th>points</th>"
                "<th style='text-align:left'>criterion</th></tr></thead>"
                f"<tbody>{''.join(rows)}</tbody></table>{extra}</div>")
