"""Build the student bundle: the course without its solutions, as a folder and a zip.

    python scripts/build_student.py [--out build/student]

The bundle holds what a learner needs and nothing that answers an exercise: the course notebooks
(outputs cleared, unpaired from their .py twins, no jupytext.toml), the cutekit package with its graders
packed (`pack_graders`), the benchmarks package (chapter 07 runs its kernels, chapter 08 reads and runs
hopper_gemm; on a GPU chapters 05 and 07 time them), the environment files (pyproject.toml,
environment.yml, postBuild, the set-up script and a small Makefile), a README and a .gitignore.
`make student-branch` (scripts/student_branch.py) commits the same bundle as a branch for the hub.
`solution_lines` names the lines only the solution notebooks have; `leaks` refuses a bundle (or any tree a
learner gets) where they appear; tests/test_workshop.py checks every route.
"""
from __future__ import annotations

import argparse
import base64
import html
import re
import shutil
import sys
import zlib
from pathlib import Path

import nbformat

sys.path.insert(0, str(Path(__file__).resolve().parent))
import answer_exposure  # noqa: E402
import generate_course  # noqa: E402  (the course's one generator)

ROOT = Path(__file__).resolve().parent.parent
NAME = "cute-by-hand-student"
TEMPLATES = ROOT / "scripts" / "student"
# Files copied as they are, relative to the repository root.
ENVIRONMENT_FILES = ("pyproject.toml", "environment.yml", "postBuild", "scripts/setup_env.py")
IGNORED = shutil.ignore_patterns("__pycache__", "*.pyc", ".ipynb_checkpoints", "*.egg-info")


def chapters(root: Path = ROOT) -> list[str]:
    """The chapter names (`00_start_here`, ...): one per source in solutions/."""
    return generate_course.chapters(root)


def student_notebook(chapter: str, root: Path = ROOT) -> nbformat.NotebookNode:
    """A chapter as a learner gets it, made from its source by the course's generator: the answers replaced
    by `# YOUR CODE HERE`, no outputs, no jupytext pairing (saving it in the lab should not write a .py)."""
    source = (root / "solutions" / f"{chapter}.py").read_text()
    text = generate_course.student_text(source, f"solutions/{chapter}.py")
    nb = nbformat.reads(generate_course.notebook_text(text), as_version=4)
    nb.metadata.pop("jupytext", None)
    nb.metadata.pop("widgets", None)
    return nb


def solution_blocks(chapter: str, root: Path = ROOT) -> list[list[str]]:
    """The answers of `chapter` (the lines between its solution markers), each as its stripped, non-blank,
    non-comment lines."""
    source = (root / "solutions" / f"{chapter}.py").read_text()
    blocks = [[line.strip() for line in answer.lines if line.strip() and not line.strip().startswith("#")]
              for answer in generate_course.answers(source, f"solutions/{chapter}.py")]
    return [block for block in blocks if block]


def solution_lines(chapter: str, root: Path = ROOT) -> set[str]:
    """The answer lines of `chapter`: lines of its solution blocks that no course notebook has.

    Lines of fewer than 8 characters (`else:`, `return`) are left out: any Python has them. A course kernel a
    chapter reads step by step (`kernel_lines("benchmarks.kernels.NAME", ...)` prints its lines) is shown
    too: its lines are no answer.
    """
    course = [path.read_text() for path in (root / "course").glob("[0-9][0-9]_*.py")]
    shown = sorted({name for text in course for name in re.findall(r'kernel_lines\(\s*"benchmarks\.kernels\.(\w+)"', text)})
    everywhere = {line.strip() for text in course for line in text.splitlines()}
    everywhere |= {line.strip() for name in shown
                   for line in (root / "benchmarks" / "kernels" / f"{name}.py").read_text().splitlines()}
    return {line for block in solution_blocks(chapter, root) for line in block
            if len(line) >= 8 and line not in everywhere}


def notebook_lines(path: Path) -> set[str]:
    """Every stripped line of every cell of the notebook at `path`."""
    nb = nbformat.read(path, as_version=4)
    return {line.strip() for cell in nb.cells for line in cell.source.splitlines()}


def text_lines(path: Path) -> list[str]:
    """The stripped, non-blank lines a reader sees in the file at `path`: a notebook's cells, an HTML page's
    text (tags removed, entities decoded: a site page's code cells are one span per token), else its lines."""
    if path.suffix == ".ipynb":
        lines = [line for cell in nbformat.read(path, as_version=4).cells for line in cell.source.splitlines()]
    elif path.suffix == ".html":
        lines = html.unescape(re.sub(r"<[^>]*>", "", path.read_text(errors="replace"))).splitlines()
    else:
        lines = path.read_text(errors="replace").splitlines()
    return [line.strip() for line in lines if line.strip()]


GRADERS = "cutekit/checks/"
RUN = 3       # this many consecutive answer lines copied into a file count as a leak
SCANNED = (".py", ".ipynb", ".md", ".html", ".txt")
PAGES = (".ipynb", ".html")       # what a learner reads as the course: a single answer line there is a leak


def leaks(tree: Path, root: Path = ROOT) -> list[str]:
    """What of the solutions reached `tree` (a student bundle, a checkout of the student branch, what the hub
    pulled into a home, a built site), one line each; empty when nothing did.

    A leak is a solutions/ file or INSTRUCTOR.md; an answer line in a notebook or an HTML page; RUN
    consecutive lines of a solution block, one of them an answer line, in any text
    file; or an answer line in a grader of cutekit/checks (which ship packed: `pack_graders`). (Worked
    examples the course itself shows may reappear in a solution; lines a course notebook has are no answer.)
    """
    found = [f"{p.relative_to(tree)}: a solutions file" for p in tree.rglob("*") if "solutions" in p.parts]
    found += [f"{p.relative_to(tree)}: the instructor's guide" for p in tree.rglob("INSTRUCTOR.md")]
    answers = {chapter: solution_lines(chapter, root) for chapter in chapters(root)}
    runs = {chapter: {tuple(block[k:k + RUN]) for block in solution_blocks(chapter, root)
                      for k in range(len(block) - RUN + 1) if answers[chapter] & set(block[k:k + RUN])}
            for chapter in answers}
    for path in sorted(p for p in tree.rglob("*") if p.is_file() and p.suffix in SCANNED and ".git" not in p.parts):
        where = path.relative_to(tree)
        text = text_lines(path)
        windows = {tuple(text[k:k + RUN]) for k in range(len(text) - RUN + 1)}
        for chapter in answers:
            if path.suffix in PAGES:
                found += [f"{where}: answer of {chapter}: {line}" for line in sorted(answers[chapter] & set(text))]
            found += [f"{where}: {RUN} lines of {chapter}'s solution: {run[0]} ..."
                      for run in sorted(runs[chapter] & windows)]
    for item in answer_exposure.exposure(tree, root):
        found += [f"{holder}: answer of {item.exercise}: {line}" for line, holders in item.found.items()
                  for holder in holders if holder.startswith(GRADERS)]
    return found


# The graders (cutekit/checks/chNN_*.py) must know the answers: several grade an exercise against a reference
# version of it (chapter 07's swizzle rule and main loop, chapter 01's batch layout, ...). In the bundle each
# ships packed: its source compressed (zlib) and base85-encoded inside a stub of the same name, which unpacks
# it when imported, puts the text in Python's line cache (so tracebacks, `inspect` and CuTeDSL's AST
# rewriting of the graders' own kernels read it as from the file) and runs it in the module's namespace.
# Any Python 3 reads it (bytecode would tie the bundle to one minor version). It keeps the answers out of
# plain sight in the learner's files; it does not hide them from a learner who decodes it (INSTRUCTOR.md).
PACKED = "cutekit/checks/ch[0-9][0-9]_*.py"
STUB = '''\
# {name}, packed by scripts/build_student.py: this grader holds reference answers to the
# exercises, so the student bundle ships its source compressed; importing it unpacks and runs it.
import base64 as _packed_base64, linecache as _packed_linecache, zlib as _packed_zlib
_packed_source = _packed_zlib.decompress(_packed_base64.b85decode(
{blob}
)).decode()
_packed_linecache.cache[__file__] = (len(_packed_source), None, _packed_source.splitlines(True), __file__)
exec(compile(_packed_source, __file__, "exec"), globals())  # noqa: S102
del _packed_base64, _packed_linecache, _packed_zlib, _packed_source
'''


def packed_module(source: str, name: str) -> str:
    """A module that runs `source` when imported, without holding it as plain text."""
    blob = base64.b85encode(zlib.compress(source.encode(), 9)).decode()
    lines = "\n".join(f"    {blob[k:k + 100]!r}" for k in range(0, len(blob), 100))
    return STUB.format(name=name, blob=lines)


def unpacked_source(text: str) -> str | None:
    """The source a stub written by `packed_module` holds (None for a plain module): for tests and instructors."""
    if "_packed_source" not in text:
        return None
    blob = "".join(line.strip().strip("'\"") for line in text.splitlines() if line.startswith("    '"))
    return zlib.decompress(base64.b85decode(blob)).decode()


def pack_graders(bundle: Path) -> list[Path]:
    """Replace each grader module of `bundle` by its packed stub; the paths packed."""
    packed = sorted(bundle.glob(PACKED))
    for path in packed:
        path.write_text(packed_module(path.read_text(), path.relative_to(bundle).as_posix()))
    return packed


def write_bundle(out: Path, root: Path = ROOT) -> Path:
    """Write the bundle folder `out/NAME` (replacing an old one) and return it."""
    bundle = out / NAME
    if bundle.exists():
        shutil.rmtree(bundle)
    (bundle / "course").mkdir(parents=True)
    for chapter in chapters(root):
        nbformat.write(student_notebook(chapter, root), bundle / "course" / f"{chapter}.ipynb")
    shutil.copytree(root / "cutekit", bundle / "cutekit", ignore=IGNORED)
    pack_graders(bundle)
    # chapter 07 runs the course's GEMM kernels and, on a GPU, chapters 05 and 07 time them with bench.py
    shutil.copytree(root / "benchmarks", bundle / "benchmarks", ignore=IGNORED)
    for name in ENVIRONMENT_FILES:
        target = bundle / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(root / name, target)
    for template, name in (("README.md", "README.md"), ("Makefile", "Makefile"), ("gitignore", ".gitignore")):
        shutil.copy2(TEMPLATES / template, bundle / name)
    return bundle


def zip_bundle(bundle: Path) -> Path:
    """`bundle` as `bundle.zip` beside it, unpacking to one folder of the same name."""
    archive = shutil.make_archive(str(bundle), "zip", root_dir=bundle.parent, base_dir=bundle.name)
    return Path(archive)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=ROOT / "build" / "student", help="folder for the bundle and zip")
    args = ap.parse_args(argv)
    missing = [name for name in ENVIRONMENT_FILES if not (ROOT / name).exists()]
    if missing:
        print(f"build_student: missing {', '.join(missing)} in {ROOT}", file=sys.stderr)
        return 2
    bundle = write_bundle(args.out.resolve())
    found = leaks(bundle)
    if found:
        print("build_student: solution text reached the bundle, no zip written:\n  " + "\n  ".join(found),
              file=sys.stderr)
        return 1
    archive = zip_bundle(bundle)
    print(f"student bundle: {bundle}\n           zip: {archive} ({archive.stat().st_size / 2**20:.1f} MiB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
