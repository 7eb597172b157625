"""An nbgitpuller link: a learner who opens it gets the course in their home on the hub, and on later
visits gets the course's updates merged in without losing their own answers (nbgitpuller never overwrites
a file the learner changed; it keeps theirs and adds what is new).

    python deploy/pull_link.py --hub https://hub.example.org --repo https://github.com/ORG/cute-by-hand
    make pull-link HUB=https://hub.example.org REPO=https://github.com/ORG/cute-by-hand [BRANCH=student]

The branch is the student bundle, published by `make student-branch` (scripts/student_branch.py): the course
without its answers. A branch that holds solutions/ or INSTRUCTOR.md (main) is refused, here and by the hub
(deploy/jupyterhub_config.py), since every learner would get the model answers.
"""
from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path
from urllib.parse import unquote, urlencode, urlsplit

FIRST_NOTEBOOK = "course/00_start_here.ipynb"
DEFAULT_BRANCH = "student"
ANSWER_PATHS = ("solutions", "INSTRUCTOR.md")       # what only the instructor's branches hold
CHECKOUT = Path(__file__).resolve().parent.parent


def local_repository(repo: str) -> Path | None:
    """The folder of `repo` when it is a repository on this machine (a path or a file:// URL), else None."""
    parts = urlsplit(repo)
    if parts.scheme == "file":
        path = Path(unquote(parts.path))
    elif not parts.scheme and not parts.netloc:
        path = Path(repo)
    else:
        return None
    return path if path.exists() else None


def branch_check(repo: str, branch: str) -> tuple[str, str] | None:
    """("missing" or "answers", why) when learners must not be given `branch` of `repo`: it is not there, or it
    holds the answers. None when it can be given, or when `repo` is not on this machine (nothing to look at)."""
    path = local_repository(repo)
    if path is None:
        return None
    listing = subprocess.run(["git", "-C", str(path), "ls-tree", "--name-only", f"refs/heads/{branch}", "--"],
                             capture_output=True, text=True)
    if listing.returncode != 0:
        return "missing", (f"the course repository {path} has no branch {branch!r}: publish the student bundle "
                           f"(the course without its answers) there with `make student-branch BRANCH={branch}`")
    answers = [name for name in ANSWER_PATHS if name in listing.stdout.split()]
    if answers:
        return "answers", (f"branch {branch!r} of {path} holds {' and '.join(answers)}: every learner would get "
                           f"the model answers. Give learners the student bundle: `make student-branch` publishes "
                           f"it as the branch {DEFAULT_BRANCH!r}, the default")
    return None


def branch_problem(repo: str, branch: str) -> str | None:
    """Why learners must not be given `branch` of `repo`, or None (see `branch_check`)."""
    found = branch_check(repo, branch)
    return found[1] if found else None


def folder_of(repo: str) -> str:
    """The folder the course is cloned into, in the learner's home: the repository's last path part
    without `.git`."""
    name = urlsplit(repo).path.rstrip("/").rsplit("/", 1)[-1]
    return name[:-4] if name.endswith(".git") else name


def pull_link(hub: str, repo: str, branch: str = DEFAULT_BRANCH, open_path: str = FIRST_NOTEBOOK, app: str = "lab") -> str:
    """The link, opening `open_path` of the course in JupyterLab once the pull is done.

    >>> pull_link("https://hub.example.org", "https://github.com/org/cute-by-hand.git")
    'https://hub.example.org/hub/user-redirect/git-pull?repo=https%3A%2F%2Fgithub.com%2Forg%2Fcute-by-hand.git&branch=student&targetpath=cute-by-hand&urlpath=lab%2Ftree%2Fcute-by-hand%2Fcourse%2F00_start_here.ipynb'
    """
    hub_parts = urlsplit(hub)
    if hub_parts.scheme not in ("http", "https") or not hub_parts.netloc:
        raise ValueError(f"HUB must be the hub's address, like https://hub.example.org, got {hub!r}")
    if not repo:
        raise ValueError("REPO must name the course's git repository, like https://github.com/ORG/cute-by-hand")
    if not branch:
        raise ValueError(f"BRANCH must name a branch, like {DEFAULT_BRANCH}")
    folder = folder_of(repo)
    if not folder:
        raise ValueError(f"cannot tell the course folder from REPO {repo!r}")
    # targetpath is explicit: nbgitpuller's own default keeps a `.git` ending that urlpath would not match
    query = urlencode({"repo": repo, "branch": branch, "targetpath": folder,
                       "urlpath": f"{app}/tree/{folder}/{open_path}"})
    return f"{hub.rstrip('/')}/hub/user-redirect/git-pull?{query}"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="print the nbgitpuller link that gives learners the course")
    ap.add_argument("--hub", required=True, help="the hub's address, e.g. https://hub.example.org")
    ap.add_argument("--repo", required=True, help="the course's git repository (https URL)")
    ap.add_argument("--branch", default=DEFAULT_BRANCH, help="the student bundle's branch (make student-branch)")
    ap.add_argument("--open", default=FIRST_NOTEBOOK, help="the notebook to open after the pull")
    ap.add_argument("--checkout", default=str(CHECKOUT),
                    help="a checkout of the course whose copy of the branch is looked at (default: this one)")
    args = ap.parse_args(argv)
    try:
        link = pull_link(args.hub, args.repo, args.branch, args.open)
    except ValueError as error:
        print(f"pull-link: {error}", file=sys.stderr)
        return 2
    found = branch_check(args.checkout, args.branch)
    if found and found[0] == "answers":
        print(f"pull-link: {found[1]}", file=sys.stderr)
        return 2
    if found:        # not published in this checkout: it may be elsewhere, so say it and give the link
        print(f"pull-link: note: {found[1]}, and push it (git push origin {args.branch}) before learners open "
              f"the link", file=sys.stderr)
    print(link)
    return 0


if __name__ == "__main__":
    sys.exit(main())
