"""How much of each exercise's model answer a learner can read in the student bundle outside the notebooks.

    python scripts/answer_exposure.py                      # builds the bundle in a temporary folder
    python scripts/answer_exposure.py --bundle build/student/cute-by-hand-student [--lines 3]
    python scripts/answer_exposure.py --plain-graders      # as the bundle was before its graders were packed

For every exercise (a `### BEGIN SOLUTION` block of solutions/NN_topic.py, named by the `check("...")` call
after it) it takes the answer's code lines (stripped, without comments, at least MIN_CHARS characters, and not
a line a course notebook shows anyway) and looks for each, verbatim (blanks collapsed), inside every text file
of the bundle except the course notebooks: the grader (cutekit/checks), the kernels (benchmarks/kernels), the
rest of the kit. It prints one row per exercise: answer lines found / answer lines, and the longest lines found
with the file that holds them. The student bundle's build refuses a bundle where any is found (see
scripts/build_student.py, `exposed`).
"""
from __future__ import annotations

import argparse
import re
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import generate_course  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
MIN_CHARS = 12            # shorter lines (`else:`, `return acc`) are in any Python file
TEXT_SUFFIXES = {".py", ".md", ".txt", ".toml", ".yml", ".yaml", ".json", ".cfg", ".sh", ".html", ".js", ""}
CHECK = re.compile(r"""check\(\s*["'](?P<id>ch\d\d\.\w+)["']""")


def normal(line: str) -> str:
    """A code line without its comment and with its blanks collapsed (`a  =  b # x` -> `a = b`)."""
    code = re.sub(r"\s+#.*$", "", line.strip()) if not line.strip().startswith("#") else ""
    return " ".join(code.split())


@dataclass
class Exercise:
    """One marked answer: its exercise id, its answer lines and which of them the bundle holds (and where)."""
    chapter: str
    exercise: str
    lines: list[str]
    found: dict[str, list[str]] = field(default_factory=dict)       # answer line -> bundle files holding it

    @property
    def share(self) -> float:
        return len(self.found) / len(self.lines) if self.lines else 0.0


def course_lines(root: Path = ROOT) -> set[str]:
    """Every code line the course notebooks show (worked examples may reappear in an answer: no leak)."""
    return {normal(line) for path in (root / "course").glob("[0-9][0-9]_*.py") for line in path.read_text().splitlines()}


def exercises(root: Path = ROOT) -> list[Exercise]:
    """Every marked answer of every chapter, with the id of the check that grades it."""
    shown = course_lines(root)
    found = []
    for chapter in generate_course.chapters(root):
        text = (root / "solutions" / f"{chapter}.py").read_text()
        source = text.splitlines()
        for answer in generate_course.answers(text, f"solutions/{chapter}.py"):
            after = "\n".join(source[answer.line:answer.line + 80])
            match = CHECK.search(after)
            name = match["id"] if match else f"{chapter[:2]}: answer at line {answer.line}"
            lines = sorted({normal(line) for line in answer.lines} - shown - {""}, key=len, reverse=True)
            found.append(Exercise(chapter, name, [line for line in lines if len(line) >= MIN_CHARS]))
    return found


def bundle_texts(bundle: Path) -> dict[str, str]:
    """Every text file of the bundle except its course notebooks, blanks collapsed line by line."""
    texts = {}
    for path in sorted(bundle.rglob("*")):
        relative = path.relative_to(bundle)
        if not path.is_file() or path.suffix not in TEXT_SUFFIXES or relative.parts[0] in ("course", ".git"):
            continue
        try:
            raw = path.read_text()
        except UnicodeDecodeError:
            continue
        texts[relative.as_posix()] = "\n".join(" ".join(line.split()) for line in raw.splitlines())
    return texts


def exposure(bundle: Path, root: Path = ROOT) -> list[Exercise]:
    """Each exercise with the answer lines the bundle holds outside the course notebooks."""
    texts = bundle_texts(bundle)
    measured = exercises(root)
    for item in measured:
        for line in item.lines:
            holders = [name for name, text in texts.items() if line in text]
            if holders:
                item.found[line] = holders
    return measured


def table(measured: list[Exercise], examples: int = 2) -> str:
    rows = ["| exercise | answer lines in the bundle outside the notebooks | longest found (file) |", "|---|---|---|"]
    for item in measured:
        longest = sorted(item.found, key=len, reverse=True)[:examples]
        shown = "; ".join(f"`{line[:70]}` ({', '.join(item.found[line][:2])})" for line in longest)
        rows.append(f"| `{item.exercise}` | {len(item.found)} of {len(item.lines)} | {shown} |")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bundle", type=Path, help="a built student bundle (default: build one in a temporary folder)")
    ap.add_argument("--lines", type=int, default=2, help="longest lines found shown per exercise")
    ap.add_argument("--plain-graders", action="store_true",
                    help="measure a bundle whose graders (cutekit/checks/chNN_*.py) ship as plain source")
    args = ap.parse_args(argv)
    if args.bundle:
        measured = exposure(args.bundle)
    else:
        import shutil

        import build_student
        with tempfile.TemporaryDirectory() as out:
            bundle = build_student.write_bundle(Path(out))
            if args.plain_graders:
                for grader in bundle.glob(build_student.PACKED):
                    shutil.copy(ROOT / grader.relative_to(bundle), grader)
            measured = exposure(bundle)
    print(table(measured, args.lines))
    exposed = [item for item in measured if item.found]
    total = sum(len(item.found) for item in measured), sum(len(item.lines) for item in measured)
    print(f"\n{len(exposed)} of {len(measured)} exercises have answer lines in the bundle outside the notebooks "
          f"({total[0]} of {total[1]} answer lines)")
    return 1 if exposed else 0


if __name__ == "__main__":
    sys.exit(main())
