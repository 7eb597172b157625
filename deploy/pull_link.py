"""An nbgitpuller link: a learner who opens it gets the course in their home on the hub, and on later
visits gets the course's updates merged in without losing their own answers (nbgitpuller never overwrites
a file the learner changed; it keeps theirs and adds what is new).

    python deploy/pull_link.py --hub https://hub.example.org --repo https://github.com/ORG/cute-by-hand
    make pull-link HUB=https://hub.example.org REPO=https://github.com/ORG/cute-by-hand [BRANCH=main]
"""
from __future__ import annotations

import argparse
import sys
from urllib.parse import urlencode, urlsplit

FIRST_NOTEBOOK = "course/00_start_here.ipynb"


def folder_of(repo: str) -> str:
    """The folder the course is cloned into, in the learner's home: the repository's last path part
    without `.git`."""
    name = urlsplit(repo).path.rstrip("/").rsplit("/", 1)[-1]
    return name[:-4] if name.endswith(".git") else name


def pull_link(hub: str, repo: str, branch: str = "main", open_path: str = FIRST_NOTEBOOK, app: str = "lab") -> str:
    """The link, opening `open_path` of the course in JupyterLab once the pull is done.

    >>> pull_link("https://hub.example.org", "https://github.com/org/cute-by-hand.git")
    'https://hub.example.org/hub/user-redirect/git-pull?repo=https%3A%2F%2Fgithub.com%2Forg%2Fcute-by-hand.git&branch=main&targetpath=cute-by-hand&urlpath=lab%2Ftree%2Fcute-by-hand%2Fcourse%2F00_start_here.ipynb'
    """
    hub_parts = urlsplit(hub)
    if hub_parts.scheme not in ("http", "https") or not hub_parts.netloc:
        raise ValueError(f"HUB must be the hub's address, like https://hub.example.org, got {hub!r}")
    if not repo:
        raise ValueError("REPO must name the course's git repository, like https://github.com/ORG/cute-by-hand")
    if not branch:
        raise ValueError("BRANCH must name a branch, like main")
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
    ap.add_argument("--branch", default="main")
    ap.add_argument("--open", default=FIRST_NOTEBOOK, help="the notebook to open after the pull")
    args = ap.parse_args(argv)
    try:
        print(pull_link(args.hub, args.repo, args.branch, args.open))
    except ValueError as error:
        print(f"pull-link: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
