"""`python -m cutekit doctor | progress | report [DIR...] [--homes /home] [--hub [URL]] [--chapter 07] [--csv OUT.csv]`"""
from __future__ import annotations

import argparse
import os
import sys


def doctor(args) -> int:
    from cutekit import backend
    report = backend.doctor(gpu=not args.no_gpu)
    print(report)
    return 0 if report.ok else 1


def progress(args) -> int:
    from cutekit.checks.progress import learner_table, progress_path, read_progress
    path = args.file or progress_path()
    if path is None:
        print("progress recording is switched off (CUTEKIT_PROGRESS=off)")
        return 1
    if not os.path.exists(path):
        print(f"no progress yet: {path} does not exist (it is written by the first check)")
        return 0
    print(learner_table(read_progress(path)))
    return 0


def report(args) -> int:
    import os

    from cutekit.checks.progress import HubError, class_report, hub_progress, hub_service_url
    if not args.places and not args.homes and args.hub is None:
        print("report: name progress files or folders, a folder of learners' homes with --homes "
              "(on a hub server: `python -m cutekit report --homes /home/learners`), or a hub with --hub URL",
              file=sys.stderr)
        return 2
    collected, users, source = {}, [], ""
    if args.hub is not None:
        try:
            url = hub_service_url(args.hub) if args.hub else os.environ.get("CUTEKIT_PROGRESS_URL", "")
            if not url:
                raise HubError("--hub: give the hub's address, like --hub https://hub.example.org")
            token = os.environ.get("CUTEKIT_HUB_TOKEN") or os.environ.get("JUPYTERHUB_API_TOKEN", "")
            collected, users = hub_progress(url, token)
        except HubError as error:
            print(f"report: {error}", file=sys.stderr)
            return 2
        source = url.rstrip("/") + "/learners/"
    try:
        found = class_report(args.places, homes=args.homes, chapters=args.chapter, stuck_after=args.failing,
                             idle_minutes=args.idle, collected=collected, users=users, collected_from=source)
    except ValueError as error:
        print(f"report: {error}", file=sys.stderr)
        return 2
    print(found.text())
    if args.csv:
        with open(args.csv, "w", newline="") as out:
            out.write(found.csv())
        print(f"\nwrote {args.csv}")
    return 1 if found.problems else 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m cutekit", description="CuTe by Hand's helper commands")
    sub = ap.add_subparsers(dest="command", metavar="COMMAND")
    d = sub.add_parser("doctor", help="which tiers this machine offers, and what to do about missing ones")
    d.add_argument("--no-gpu", action="store_true", help="skip the GPU probe")
    d.set_defaults(run=doctor)
    p = sub.add_parser("progress", help="your exercises: best score and tiers passed")
    p.add_argument("file", nargs="?", help="a progress file (default: CUTEKIT_PROGRESS or ~/.cutekit/progress.jsonl)")
    p.set_defaults(run=progress)
    r = sub.add_parser("report", help="a class table from many learners' progress files (for instructors)")
    r.add_argument("places", nargs="*", metavar="DIR_OR_FILE",
                   help="progress files, home folders, or folders holding them (collected files)")
    r.add_argument("--homes", action="append", default=[], metavar="DIR",
                   help="a hub's folder of learners' homes (e.g. /home): every learner with a home gets a row, "
                        "'not attempted' when no progress file is there yet; may be given more than once")
    r.add_argument("--hub", nargs="?", const="", metavar="URL",
                   help="the progress a course JupyterHub collected (its cutekit-progress service): every learner "
                        "of the hub, culled servers included; needs an admin's token in CUTEKIT_HUB_TOKEN. Without "
                        "URL, CUTEKIT_PROGRESS_URL (set on the hub's servers)")
    r.add_argument("--chapter", action="append", default=[], metavar="NN",
                   help="only this chapter's exercises (07 or ch07); may be given more than once")
    r.add_argument("--failing", type=int, default=3, metavar="N",
                   help="name learners with N or more checks of one exercise since it last passed (default 3)")
    r.add_argument("--idle", type=int, default=15, metavar="MIN",
                   help="name learners whose last check is MIN minutes or more before the room's latest (default 15)")
    r.add_argument("--csv", metavar="OUT.csv", help="also write the table as CSV")
    r.set_defaults(run=report)
    args = ap.parse_args(argv)
    if not getattr(args, "run", None):
        ap.print_help()
        return 2
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())
