"""Build the student bundle: the course without its solutions, as a folder and a zip.

    python scripts/build_student.py [--out build/student]

The bundle holds what a learner needs and nothing that answers an exercise: the course notebooks
(outputs cleared, unpaired from their .py twins), the cutekit package, the benchmarks package (chapter 07
runs its kernels; on a GPU chapters 05 and 07 time them), the environment files
(pyproject.toml, environment.yml, postBuild, the set-up script and a small Makefile) and a README.
`solution_lines` names the lines only the solution notebooks have; tests/test_workshop.py checks that
none of them reaches the bundle.
"""
from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

import nbformat

sys.path.insert(0, str(Path(__file__).resolve().parent))
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

    Lines of fewer than 8 characters (`else:`, `return`) are left out: any Python has them.
    """
    everywhere = {line.strip() for path in (root / "course").glob("[0-9][0-9]_*.py")
                  for line in path.read_text().splitlines()}
    return {line for block in solution_blocks(chapter, root) for line in block
            if len(line) >= 8 and line not in everywhere}


def notebook_lines(path: Path) -> set[str]:
    """Every stripped line of every cell of the notebook at `path`."""
    nb = nbformat.read(path, as_version=4)
    return {line.strip() for cell in nb.cells for line in cell.source.splitlines()}


# The graders must know the answers: cutekit/checks holds reference versions of some exercises (chapter 07's
# tiled MMA and pipeline plan among them). A learner who reads the grader's source can find them; the bundle
# keeps the notebooks, not the kit, free of solutions.
GRADERS = Path("cutekit") / "checks"
RUN = 3       # this many consecutive answer lines copied into a file count as a leak


def leaks(bundle: Path, root: Path = ROOT) -> list[str]:
    """What of the solutions reached `bundle`, one line each; empty when nothing did.

    A leak is an answer line in a course notebook, a solutions/ file, or RUN consecutive lines of a
    solution block, one of them an answer line, in any text file outside the graders. (Worked examples the
    course itself shows may reappear in a solution; lines a course notebook has are no answer.)
    """
    found = [f"{p.relative_to(bundle)}: a solutions file" for p in bundle.rglob("*") if "solutions" in p.parts]
    for chapter in chapters(root):
        answers = solution_lines(chapter, root)
        for notebook in sorted((bundle / "course").glob("*.ipynb")):
            found += [f"{notebook.relative_to(bundle)}: answer of {chapter}: {line}"
                      for line in sorted(answers & notebook_lines(notebook))]
        runs = {tuple(block[k:k + RUN]) for block in solution_blocks(chapter, root)
                for k in range(len(block) - RUN + 1) if answers & set(block[k:k + RUN])}
        for path in sorted(p for p in bundle.rglob("*") if p.is_file() and p.suffix in (".py", ".ipynb", ".md")):
            if path.relative_to(bundle).parts[:2] == GRADERS.parts:
                continue
            text = [line.strip() for line in path.read_text(errors="replace").splitlines() if line.strip()]
            if path.suffix == ".ipynb":
                text = [line.strip() for cell in nbformat.read(path, as_version=4).cells
                        for line in cell.source.splitlines() if line.strip()]
            windows = {tuple(text[k:k + RUN]) for k in range(len(text) - RUN + 1)}
            found += [f"{path.relative_to(bundle)}: {RUN} lines of {chapter}'s solution: {run[0]} ..."
                      for run in sorted(runs & windows)]
    return found


def write_bundle(out: Path, root: Path = ROOT) -> Path:
    """Write the bundle folder `out/NAME` (replacing an old one) and return it."""
    bundle = out / NAME
    if bundle.exists():
        shutil.rmtree(bundle)
    (bundle / "course").mkdir(parents=True)
    for chapter in chapters(root):
        nbformat.write(student_notebook(chapter, root), bundle / "course" / f"{chapter}.ipynb")
    shutil.copytree(root / "cutekit", bundle / "cutekit", ignore=IGNORED)
    # chapter 07 runs the course's GEMM kernels and, on a GPU, chapters 05 and 07 time them with bench.py
    shutil.copytree(root / "benchmarks", bundle / "benchmarks", ignore=IGNORED)
    for name in ENVIRONMENT_FILES:
        target = bundle / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(root / name, target)
    for template in ("README.md", "Makefile"):
        shutil.copy2(TEMPLATES / template, bundle / template)
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
