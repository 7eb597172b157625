"""Publish the student bundle as a branch of this repository: what the hub and the pull link give learners.

    python scripts/student_branch.py [--branch student] [--repo .]
    make student-branch [BRANCH=student]

It builds the student bundle (scripts/build_student.py: the course notebooks without answers, cutekit with its
graders packed, the kernels, the environment files, a README), refuses it if any answer reached it, and
commits its files as the next commit of BRANCH, with git's plumbing (`git add` into a temporary index with the
bundle as work tree, `write-tree`, `commit-tree`, `update-ref`): the branch checked out here, its index and
its files are not touched. Each publication is a child of the branch's last one, so nbgitpuller, which merges
the branch into each learner's copy, brings a learner's copy up to date without losing their answers. A
bundle equal to the branch's last commit makes no commit. Then push it: `git push origin student`.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import build_student  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_BRANCH = "student"
IDENTITY = {"GIT_AUTHOR_NAME": "CuTe by Hand", "GIT_AUTHOR_EMAIL": "course@cute-by-hand.invalid"}


class BranchError(RuntimeError):
    """The branch cannot be published (checked out somewhere, not a valid name, an answer in the bundle)."""


def git(repo: Path, *args: str, env: dict | None = None, check: bool = True, cwd: Path | None = None) -> str:
    """`git -C repo args...` (or, with `cwd`, `git args...` run there); its output. Raises BranchError."""
    where = ["-C", str(repo)] if cwd is None else []
    done = subprocess.run(["git", *where, *args], capture_output=True, text=True, cwd=cwd,
                          env={**os.environ, **(env or {})})
    if check and done.returncode != 0:
        raise BranchError(f"git {' '.join(args)}: {done.stderr.strip() or done.stdout.strip()}")
    return done.stdout.strip()


def tip(repo: Path, branch: str) -> str | None:
    """The commit `branch` points at, or None when there is no such branch."""
    found = git(repo, "rev-parse", "--verify", "-q", f"refs/heads/{branch}^{{commit}}", check=False)
    return found or None


def checked_out(repo: Path, branch: str) -> list[str]:
    """The worktrees of `repo` that have `branch` checked out."""
    listing = git(repo, "worktree", "list", "--porcelain")
    places, current = [], None
    for line in listing.splitlines():
        if line.startswith("worktree "):
            current = line.split(" ", 1)[1]
        elif line == f"branch refs/heads/{branch}":
            places.append(current)
    return places


def commit_folder(repo: Path, folder: Path, branch: str, message: str) -> tuple[str, bool]:
    """Commit every file of `folder` as the next commit of `branch` in `repo` (made if missing), touching no
    worktree, index or other branch. Returns (the branch's commit, whether a new one was made)."""
    if git(repo, "check-ref-format", "--branch", branch, check=False) != branch:
        raise BranchError(f"{branch!r} is not a valid branch name")
    places = checked_out(repo, branch)
    if places:
        raise BranchError(f"branch {branch!r} is checked out in {', '.join(places)}: publishing would change "
                          f"files under it; choose another branch (BRANCH=...) or check out another branch there")
    parent = tip(repo, branch)
    with tempfile.TemporaryDirectory() as scratch:
        index = {"GIT_INDEX_FILE": str(Path(scratch) / "index")}
        # -f: the repository's exclude rules (.git/info/exclude, core.excludesFile) must not drop a bundle file
        git_dir = git(repo, "rev-parse", "--absolute-git-dir")
        git(repo, f"--git-dir={git_dir}", f"--work-tree={folder}", "add", "-A", "-f", ".", env=index, cwd=folder)
        tree = git(repo, "write-tree", env=index)
    if parent and git(repo, "rev-parse", f"{parent}^{{tree}}") == tree:
        return parent, False
    identity = {key: value for key, value in IDENTITY.items()
                if not git(repo, "config", "user.name" if "NAME" in key else "user.email", check=False)}
    identity.update({key.replace("AUTHOR", "COMMITTER"): value for key, value in identity.items()})
    commit = git(repo, "commit-tree", tree, *(["-p", parent] if parent else []), "-m", message, env=identity)
    git(repo, "update-ref", "-m", "student-branch: publish the student bundle", f"refs/heads/{branch}", commit,
        parent or "0" * len(commit))
    return commit, True


def publish(repo: Path = ROOT, branch: str = DEFAULT_BRANCH, root: Path = ROOT) -> tuple[str, bool, int]:
    """Build the bundle of `root`'s course and commit it as `branch` of `repo`. Returns (commit, new, files)."""
    source = git(repo, "rev-parse", "--short", "HEAD", check=False) or "an unborn HEAD"
    dirty = " (with uncommitted changes)" if git(repo, "status", "--porcelain", "--untracked-files=no",
                                                 check=False) else ""
    with tempfile.TemporaryDirectory() as out:
        bundle = build_student.write_bundle(Path(out), root)
        found = build_student.leaks(bundle, root)
        if found:
            raise BranchError("solution text reached the bundle, nothing published:\n  " + "\n  ".join(found))
        files = sum(1 for path in bundle.rglob("*") if path.is_file())
        message = (f"Student bundle of {source}{dirty}\n\nThe course without its answers (make student-branch): "
                   f"what the hub and the pull link give learners.")
        commit, new = commit_folder(repo, bundle, branch, message)
    return commit, new, files


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--branch", default=DEFAULT_BRANCH, help="the branch to publish to (default: student)")
    ap.add_argument("--repo", type=Path, default=ROOT, help="the repository that gets the branch (default: this one)")
    args = ap.parse_args(argv)
    try:
        commit, new, files = publish(args.repo.resolve(), args.branch)
    except BranchError as error:
        print(f"student-branch: {error}", file=sys.stderr)
        return 1
    what = "new commit" if new else "unchanged: the bundle equals the branch's last commit"
    print(f"student branch {args.branch!r}: {commit[:12]} ({what}; {files} files)\n"
          f"push it: git push origin {args.branch}; learners' link: make pull-link HUB=... REPO=... "
          f"(BRANCH={args.branch})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
