"""Generate the course from its one source: `solutions/NN_topic.py` holds each chapter with its answers.

    python scripts/generate_course.py            # write course/NN_topic.{py,ipynb} and solutions/NN_topic.ipynb
    python scripts/generate_course.py --check    # write nothing; list every committed file that differs

An answer sits between two marker lines, the convention nbgrader uses:

        def layout_for(M, N):
            ### BEGIN SOLUTION
            return cute.make_layout((M, N), stride=(N, 1))
            ### END SOLUTION

In `course/` the lines from BEGIN to END become `# YOUR CODE HERE` and a placeholder at the marker's
indentation: `return None`, or what `### BEGIN SOLUTION (placeholder: pass)` names. Everything else is
copied as it is. Both notebooks are made from their .py by jupytext, without outputs and with cell ids
that depend only on the cell's position, so the same source always gives the same files.
The student bundle (scripts/build_student.py) and the site (scripts/build_site.py) call this module.
"""
from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCE = "solutions"
COURSE = "course"
BEGIN = re.compile(r"^(?P<indent>[ \t]*)### BEGIN SOLUTION(?:[ \t]+\(placeholder: (?P<placeholder>[^)]+)\))?[ \t]*$")
END = re.compile(r"^[ \t]*### END SOLUTION[ \t]*$")
MARKER = "# YOUR CODE HERE"
# The reference of the CuTeDSL names the chapters use: a notebook of the course with no exercise, whose source
# scripts/vocabulary.py writes from the chapters (make sync runs it first).
REFERENCE = "90_reference"
DEFAULT_PLACEHOLDER = "return None"
FIX = "python scripts/generate_course.py (or make sync)"


class SourceError(ValueError):
    """A chapter source whose solution markers do not pair up."""


@dataclass(frozen=True)
class Answer:
    """One marked answer: where it starts (1-based line of its BEGIN marker) and its lines."""
    line: int
    indent: str
    placeholder: str
    lines: tuple[str, ...]


def answers(text: str, name: str = "<source>") -> list[Answer]:
    """The marked answers of a chapter source, in order; a marker that does not pair up is refused.

    >>> [a.lines for a in answers("def f():\\n    ### BEGIN SOLUTION\\n    return 1\\n    ### END SOLUTION\\n")]
    [('    return 1',)]
    """
    found, start, body = [], None, []
    for number, line in enumerate(text.splitlines(), 1):
        begin, end = BEGIN.match(line), END.match(line)
        if "### BEGIN SOLUTION" in line and not begin:
            raise SourceError(f"{name}:{number}: write the marker alone on its line: "
                              f"'### BEGIN SOLUTION' or '### BEGIN SOLUTION (placeholder: pass)'")
        if begin:
            if start is not None:
                raise SourceError(f"{name}:{number}: BEGIN SOLUTION inside the answer opened at line {start[0]}")
            start, body = (number, begin["indent"], begin["placeholder"] or DEFAULT_PLACEHOLDER), []
        elif end:
            if start is None:
                raise SourceError(f"{name}:{number}: END SOLUTION without a BEGIN SOLUTION before it")
            if not any(b.strip() for b in body):
                raise SourceError(f"{name}:{start[0]}: the answer between BEGIN and END SOLUTION is empty")
            found.append(Answer(start[0], start[1], start[2], tuple(body)))
            start = None
        elif start is not None:
            if line.startswith("# %%"):
                raise SourceError(f"{name}:{start[0]}: BEGIN SOLUTION is not closed before the next cell "
                                  f"(line {number})")
            body.append(line)
    if start is not None:
        raise SourceError(f"{name}:{start[0]}: BEGIN SOLUTION is never closed by END SOLUTION")
    return found


def student_text(text: str, name: str = "<source>") -> str:
    """The course's version of a chapter source: each answer replaced by the marker and its placeholder.

    >>> print(student_text("def f():\\n    ### BEGIN SOLUTION\\n    return 1\\n    ### END SOLUTION\\n"), end="")
    def f():
        # YOUR CODE HERE
        return None
    """
    by_line = {a.line: a for a in answers(text, name)}
    out, skipping = [], False
    for number, line in enumerate(text.splitlines(), 1):
        if number in by_line:
            answer = by_line[number]
            out += [answer.indent + MARKER, answer.indent + answer.placeholder]
            skipping = True
        elif skipping:
            skipping = not END.match(line)
        else:
            out.append(line)
    return "\n".join(out) + "\n"


def notebook_text(py_text: str) -> str:
    """The .ipynb twin of a percent-format chapter: jupytext's conversion, no outputs, positional cell ids."""
    import jupytext

    nb = jupytext.reads(py_text, fmt="py:percent")
    for index, cell in enumerate(nb.cells):
        cell.id = f"cell-{index:03d}"
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    return jupytext.writes(nb, fmt="ipynb")


def chapters(root: Path = ROOT) -> list[str]:
    """The chapter names (`00_start_here`, ..., and the reference `90_reference`) that have a source in
    solutions/."""
    return sorted(p.stem for p in (root / SOURCE).glob("[0-9][0-9]_*.py"))


def lessons(root: Path = ROOT) -> list[str]:
    """The chapters that teach and have exercises: every chapter but the reference."""
    return [chapter for chapter in chapters(root) if chapter != REFERENCE]


def generated(root: Path = ROOT) -> dict[Path, str]:
    """Every generated file of the course, by path, with the text the sources give it."""
    files = {}
    for chapter in chapters(root):
        source = (root / SOURCE / f"{chapter}.py").read_text()
        course = student_text(source, f"{SOURCE}/{chapter}.py")
        files[root / COURSE / f"{chapter}.py"] = course
        files[root / COURSE / f"{chapter}.ipynb"] = notebook_text(course)
        files[root / SOURCE / f"{chapter}.ipynb"] = notebook_text(source)
    return files


def stale(root: Path = ROOT) -> list[Path]:
    """The generated files whose committed text differs from what the sources give (or that are missing),
    and the course chapters that have no source."""
    wrong = [path for path, text in generated(root).items() if not path.exists() or path.read_text() != text]
    orphans = [p for p in (root / COURSE).glob("[0-9][0-9]_*.py") if p.stem not in chapters(root)]
    return wrong + orphans


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="write nothing; exit 1 if a generated file is stale")
    ap.add_argument("--root", type=Path, default=ROOT, help="the repository (default: this one)")
    args = ap.parse_args(argv)
    try:
        if args.check:
            wrong = stale(args.root)
            for path in wrong:
                print(f"stale: {path.relative_to(args.root)}", file=sys.stderr)
            if wrong:
                print(f"{len(wrong)} generated file(s) differ from solutions/: run {FIX}", file=sys.stderr)
            return 1 if wrong else 0
        written = 0
        for path, text in generated(args.root).items():
            if not path.exists() or path.read_text() != text:
                path.write_text(text)
                written += 1
        print(f"generate_course: {written} file(s) written from {len(chapters(args.root))} chapter sources")
        return 0
    except SourceError as error:
        print(f"generate_course: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
