"""The learner's progress file and the tables built from it.

Every check appends one JSON line to `~/.cutekit/progress.jsonl` (`CUTEKIT_PROGRESS` names another file;
`CUTEKIT_PROGRESS=off` records nothing). The line is written with one `write` while holding an exclusive
`fcntl` lock on the file, so two notebooks checking at once never interleave or lose a line. A file whose
last line was cut off mid-write (a notebook killed while saving) gets its missing newline before the next
record, so that record starts a line of its own; readers skip the damaged line, name it in their problems
(`cutekit progress` and `cutekit report` print them) and keep every other line.

On a course JupyterHub (deploy/) the hub collects the room's progress: where `CUTEKIT_PROGRESS_URL` names its
progress service, every record written also sends the learner's whole file there with the hub token the
kernel has (`JUPYTERHUB_API_TOKEN`), so the hub's copy survives the learner's server being culled; a send that
fails is a note on the result, and the next check's send carries it. `hub_progress` reads the hub's copies
back for `cutekit report --hub`.

`learner_table` shows one learner's best score per exercise; `class_report` gathers many learners' files
(each file, home folder, or folder of home folders) into one table and CSV for an instructor. Given a hub's
home folders (`homes=`), every learner with a home gets a row: one with no progress file yet shows as
"not attempted", one whose file cannot be read as "unreadable", with the reason among the problems. The
report also shows the room per chapter and per exercise (passed, tried, checks run, learners failing it
repeatedly, last check) and the learners to go and see (failing one exercise again and again, idle, not
started), for every chapter or the chosen ones (`chapters=`, `--chapter 07`).
"""
from __future__ import annotations

import csv
import getpass
import io
import json
import os
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import NamedTuple

from .registry import exercises

try:
    import fcntl
except ImportError:  # Windows: appends of one short line are still whole in practice
    fcntl = None


def progress_path() -> Path | None:
    """Where this learner's results go; None when recording is switched off."""
    value = os.environ.get("CUTEKIT_PROGRESS", "")
    if value.lower() in ("off", "0", "none"):
        return None
    return Path(value).expanduser() if value else Path.home() / ".cutekit" / "progress.jsonl"


def learner_name() -> str:
    """CUTEKIT_LEARNER, else the hub's user name (on JupyterHub every learner may share one OS user, e.g.
    `jovyan`), else the OS user."""
    name = os.environ.get("CUTEKIT_LEARNER") or os.environ.get("JUPYTERHUB_USER")
    if name:
        return name
    try:
        return getpass.getuser()
    except Exception:
        return "unknown"


def append_line(path: Path, record: dict) -> None:
    """Append `record` as one JSON line, under an exclusive lock (safe with concurrent writers). After a
    last line cut off mid-write, the record starts on a new line: the damaged line stays on its own."""
    path.parent.mkdir(parents=True, exist_ok=True)
    line = (json.dumps(record, sort_keys=True) + "\n").encode()
    try:
        descriptor = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
    except PermissionError:  # a file we may append to but not read: append without looking at its end
        descriptor = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        if fcntl:
            fcntl.flock(descriptor, fcntl.LOCK_EX)
        if not _ends_a_line(descriptor):
            line = b"\n" + line
        written = 0
        while written < len(line):
            written += os.write(descriptor, line[written:])
        os.fsync(descriptor)
    finally:
        os.close(descriptor)  # closing releases the lock


def _ends_a_line(descriptor: int) -> bool:
    """Whether the open file is empty or ends in a newline (read under the writer's lock; a file that
    cannot be read counts as whole)."""
    try:
        size = os.fstat(descriptor).st_size
        if size == 0:
            return True
        os.lseek(descriptor, size - 1, os.SEEK_SET)
        return os.read(descriptor, 1) == b"\n"
    except OSError:
        return True


def record_result(result, exercise):
    """Append `result` to the progress file; a file that cannot be written becomes a note, not an error."""
    path = progress_path()
    if path is None:
        return result
    record = {
        "time": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "learner": learner_name(), "exercise": result.exercise_id,
        "chapter": exercise.chapter, "earned": result.earned, "possible": result.possible,
        "waiting": result.waiting, "passed": result.passed, "tiers": list(result.tiers), "seed": result.seed,
    }
    try:
        append_line(path, record)
    except OSError as error:
        return result.with_note(f"progress not saved to {path}: {error.strerror or error}")
    problem = send_to_hub(path)
    return result.with_note(problem) if problem else result


HUB_SERVICE = "services/cutekit-progress/"
SEND_SECONDS = 3


def _no_proxy_request(request, timeout: float):
    """urlopen without the environment's HTTP proxy (the hub's service is an address inside the hub's network)."""
    import urllib.request
    return urllib.request.build_opener(urllib.request.ProxyHandler({})).open(request, timeout=timeout)


def send_to_hub(path: Path) -> str | None:
    """Send the learner's whole progress file to the hub's progress service (CUTEKIT_PROGRESS_URL), with the
    kernel's hub token; None when sent or when there is no hub to send to, else what went wrong."""
    import urllib.error
    import urllib.parse
    import urllib.request
    url = os.environ.get("CUTEKIT_PROGRESS_URL", "")
    token, user = os.environ.get("JUPYTERHUB_API_TOKEN", ""), os.environ.get("JUPYTERHUB_USER", "")
    if not (url and token and user):
        return None
    target = url.rstrip("/") + "/learners/" + urllib.parse.quote(user, safe="")
    try:
        request = urllib.request.Request(target, data=Path(path).read_bytes(), method="POST", headers={
            "Authorization": f"token {token}", "Content-Type": "application/x-ndjson"})
        with _no_proxy_request(request, SEND_SECONDS):
            return None
    except urllib.error.HTTPError as error:
        why = f"HTTP {error.code}: {error.read().decode(errors='replace')[:200]}"
    except (OSError, ValueError) as error:
        why = str(getattr(error, "reason", None) or error)
    return f"progress saved here, not sent to the hub ({target}: {why}); the next check sends it again"


class HubError(RuntimeError):
    """The hub's progress service could not be read; the message says why and what to do."""


def hub_service_url(hub: str) -> str:
    """The progress service's address from the hub's (`https://hub.example.org` -> `.../services/cutekit-progress/`);
    an address that already names a service is kept."""
    hub = hub.strip()
    if not hub.startswith(("http://", "https://")):
        raise HubError(f"--hub {hub!r}: give the hub's address, like https://hub.example.org")
    return hub if "/services/" in hub else hub.rstrip("/") + "/" + HUB_SERVICE


def hub_progress(url: str, token: str) -> tuple[dict, list]:
    """({learner: progress file text}, [every non-admin hub user]) from the hub's progress service."""
    import urllib.error
    import urllib.request
    if not token:
        raise HubError("no token: make one as an admin on the hub's token page (/hub/token) and set "
                       "CUTEKIT_HUB_TOKEN to it")
    request = urllib.request.Request(url.rstrip("/") + "/learners", headers={"Authorization": f"token {token}"})
    try:
        with _no_proxy_request(request, 60) as answer:
            body = json.loads(answer.read())
    except urllib.error.HTTPError as error:
        said = error.read().decode(errors="replace")
        try:
            said = json.loads(said).get("error", said)
        except ValueError:
            pass
        raise HubError(f"{url}: HTTP {error.code}: {said}") from None
    except (OSError, ValueError) as error:
        raise HubError(f"{url}: cannot be read ({getattr(error, 'reason', None) or error}); is the hub's "
                       "cutekit-progress service running (deploy/README.md)?") from None
    return dict(body.get("learners", {})), list(body.get("users", []))


def failed_attempts(exercise_id: str) -> int:
    """How many checks of `exercise_id` in this learner's progress file did not pass (0 when recording is off
    or the file cannot be read)."""
    path = progress_path()
    if path is None:
        return 0
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return 0
    count, quoted = 0, json.dumps(exercise_id)
    for line in text.splitlines():
        if quoted not in line:         # most lines are other exercises: skip them unparsed
            continue
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict) and record.get("exercise") == exercise_id and record.get("passed") is False:
            count += 1
    return count


@dataclass(frozen=True)
class Progress:
    """The records read from one file, and the problems met reading it."""
    source: str
    records: tuple
    problems: tuple


def read_progress(path: Path) -> Progress:
    """Read a progress file; an unreadable file or a damaged line is reported in `problems`, not raised:
    a damaged line is skipped, every other line is kept."""
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError as error:
        return Progress(str(path), (), (cannot_read(path, error),))
    return parse_progress(text, path)


def parse_progress(text: str, path) -> Progress:
    """The records of a progress file's `text` (read from `path`, named in problems)."""
    records, problems = [], []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            if not isinstance(record, dict) or not {"exercise", "earned", "possible"} <= record.keys():
                raise ValueError("not a check record")
            records.append(record)
        except ValueError as error:
            why = f"cut off mid-write: {error}" if _cut_off(line) else str(error)
            problems.append(f"{path}:{number}: skipped a damaged line ({why})")
    return Progress(str(path), tuple(records), tuple(problems))


def _cut_off(line: str) -> bool:
    """Whether a line that is not a record looks like the start of one whose end was never written."""
    text = line.strip()
    return text.startswith("{") and not text.endswith("}")


def cannot_read(path, error: OSError) -> str:
    """The problem line for a file or folder that cannot be read, with what to do when it is permissions."""
    text = f"{path}: cannot be read ({error.strerror or error})"
    if isinstance(error, PermissionError):
        text += ("; learners' homes are private: run the report as a user who may read them "
                 "(on a hub server: `sudo <course venv>/bin/python -m cutekit report --homes /home`)")
    return text


def best_scores(records) -> dict:
    """For each exercise, the best record (most points, then most tiers, then the latest)."""
    best = {}
    for record in records:
        key = (record["earned"], len(record.get("tiers", [])), record.get("time", ""))
        current = best.get(record["exercise"])
        if current is None or key >= (current["earned"], len(current.get("tiers", [])), current.get("time", "")):
            best[record["exercise"]] = record
    return best


def learner_table(progress: Progress) -> str:
    """One learner's chapters and exercises: best score, tiers passed, attempts."""
    best = best_scores(progress.records)
    attempts = {}
    for record in progress.records:
        attempts[record["exercise"]] = attempts.get(record["exercise"], 0) + 1
    known = {exercise.id: exercise for exercise in exercises()}
    ids = list(known) + sorted(set(best) - set(known))
    lines = [f"Progress in {progress.source}", ""]
    earned = possible = 0
    chapter = None
    for exercise_id in ids:
        this_chapter = exercise_id.split(".", 1)[0]
        if this_chapter != chapter:
            chapter = this_chapter
            lines.append(f"{chapter}")
        record = best.get(exercise_id)
        points = known[exercise_id].points if exercise_id in known else record["possible"]
        possible += points
        if record is None:
            lines.append(f"  {exercise_id:<32} {'-':>7}  not tried")
            continue
        earned += record["earned"]
        tiers = ", ".join(record.get("tiers", [])) or "none"
        waiting = f", {record['waiting']} waiting" if record.get("waiting") else ""
        lines.append(f"  {exercise_id:<32} {record['earned']:>3}/{points:<3}  tiers: {tiers}{waiting}; "
                     f"{attempts[exercise_id]} attempt{'s' if attempts[exercise_id] > 1 else ''}")
    lines += ["", f"Total: {earned}/{possible} points"]
    lines += progress.problems
    return "\n".join(lines)


def find_progress_files(place: Path) -> list:
    """A file is itself; a home folder gives `.cutekit/progress.jsonl`; any other folder gives its
    `*.jsonl` files and its sub-folders' `.cutekit/progress.jsonl` (a folder of home folders)."""
    place = Path(place)
    if not place.is_dir():
        return [place]
    own = place / ".cutekit" / "progress.jsonl"
    if _exists(own):
        return [own]
    return sorted(place.glob("*.jsonl")) + sorted(place.glob("*/.cutekit/progress.jsonl"))


def learner_homes(folder: Path) -> list:
    """The learners' home folders in `folder` (a hub's `/home`): every visible sub-folder but `lost+found`."""
    folder = Path(folder)
    if not folder.is_dir():
        raise NotADirectoryError(f"{folder}: not a folder of learners' homes")
    return sorted(home for home in folder.iterdir()
                  if home.is_dir() and not home.name.startswith(".") and home.name != "lost+found")


def _exists(path: Path) -> bool:
    """Like `Path.exists`, but a folder we may not enter counts as there (reading it then says why not)."""
    try:
        path.stat()
    except PermissionError:
        return True
    except OSError:
        return False
    return True


class Row(NamedTuple):
    learner: str
    source: str
    scores: dict             # exercise id -> best points earned
    total: int
    status: str = ""         # "" when scores were read; else "not attempted" or "unreadable"
    attempts: dict | None = None     # exercise id -> checks run
    passed: frozenset = frozenset()  # exercise ids passed at least once
    last: datetime | None = None     # the latest check's time
    last_exercise: str = ""          # and its exercise
    failing: dict | None = None      # exercise id -> checks failed since it last passed (all, if never)
    last_checks: dict | None = None  # exercise id -> the time of its latest check


STUCK_AFTER = 3          # this many checks of one exercise, none passed: "failing repeatedly"
IDLE_MINUTES = 15        # no check in this many minutes before the room's latest: "idle"


def record_time(record: dict) -> datetime | None:
    """When a record was written (its `time`, with its UTC offset; one without is local time)."""
    text = str(record.get("time", ""))
    for form in ("%Y-%m-%dT%H:%M:%S%z", "%Y-%m-%dT%H:%M:%S"):
        try:
            return datetime.strptime(text, form).astimezone()
        except ValueError:
            continue
    return None


def record_passed(record: dict) -> bool:
    """Whether a check passed: its `passed`, or (older records) every point of the tiers that ran."""
    if "passed" in record:
        return bool(record["passed"])
    return record["earned"] >= record["possible"] - record.get("waiting", 0)


def chapter_of(exercise_id: str) -> str:
    """`ch07.swizzle` -> `ch07`."""
    return exercise_id.split(".", 1)[0]


def chapter_names(wanted) -> tuple:
    """`07`, `7`, `ch07` -> `ch07`; refuses anything else with the form it wants."""
    names = []
    for item in wanted or ():
        text = str(item).strip().lower().removeprefix("ch")
        if not text.isdigit():
            raise ValueError(f"--chapter {item!r}: give a chapter number, like 07 (or ch07)")
        names.append(f"ch{int(text):02d}")
    return tuple(dict.fromkeys(names))


def _row_from_records(learner: str, source: str, records) -> Row:
    best = best_scores(records)
    scores = {exercise_id: record["earned"] for exercise_id, record in best.items()}
    attempts, passed, failing = {}, set(), {}
    timed = sorted(records, key=lambda record: getattr(record_time(record), "timestamp", lambda: float("-inf"))())
    for record in timed:
        exercise_id = record["exercise"]
        attempts[exercise_id] = attempts.get(exercise_id, 0) + 1
        if record_passed(record):
            passed.add(exercise_id)
            failing.pop(exercise_id, None)
        else:
            failing[exercise_id] = failing.get(exercise_id, 0) + 1
    last_checks = {}
    for record in timed:
        moment = record_time(record)
        if moment is not None:
            last_checks[record["exercise"]] = moment
    last, last_exercise = max(((moment, e) for e, moment in last_checks.items()), default=(None, ""))
    return Row(learner, source, scores, sum(scores.values()), "" if scores else "not attempted",
               attempts, frozenset(passed), last, last_exercise, failing, last_checks)


def _when(moment: datetime | None, latest: datetime | None) -> str:
    if moment is None:
        return "-"
    if latest is not None and moment.date() == latest.date():
        return moment.strftime("%H:%M")
    return moment.strftime("%Y-%m-%d %H:%M")


def _columns(rows: list) -> list:
    widths = [max(len(row[column]) for row in rows) for column in range(len(rows[0]))]
    return ["  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip() for row in rows]


@dataclass(frozen=True)
class ClassReport:
    exercise_ids: tuple
    rows: tuple              # Row per learner
    possible: dict
    problems: tuple
    chapters: tuple = ()     # only these chapters (`ch07`), or every chapter
    stuck_after: int = STUCK_AFTER
    idle_minutes: int = IDLE_MINUTES

    @property
    def shown(self) -> tuple:
        """The exercise ids of the chosen chapters."""
        return tuple(e for e in self.exercise_ids if not self.chapters or chapter_of(e) in self.chapters)

    @property
    def latest(self) -> datetime | None:
        """The room's latest check: what "idle" is measured from (live or from files collected later)."""
        times = [row.last for row in self.rows if row.last is not None]
        return max(times) if times else None

    def _total(self, row: Row) -> int:
        return sum(row.scores.get(exercise_id, 0) for exercise_id in self.shown)

    def table(self) -> str:
        """One row per learner: best points per exercise, total, status (of the chosen chapters)."""
        shown = self.shown
        header = ["learner"] + [exercise_id.split(".", 1)[1] for exercise_id in shown] + ["total", ""]
        body = [[row.learner] + [str(row.scores.get(exercise_id, "-")) for exercise_id in shown]
                + [str(self._total(row)), row.status] for row in self.rows]
        out_of = ["(out of)"] + [str(self.possible[exercise_id]) for exercise_id in shown]
        out_of += [str(sum(self.possible[exercise_id] for exercise_id in shown)), ""]
        lines = _columns([header, out_of] + body)
        if not self.rows:
            lines.append("(no progress files found)")
        lines += [f"problem: {problem}" for problem in self.problems]
        return "\n".join(lines)

    def summary(self) -> str:
        """The room per chapter and per exercise: learners who passed, who tried, checks run, learners
        failing it repeatedly, the last check."""
        learners = len(self.rows)
        latest = self.latest
        lines = [f"The room: {learners} learner{'s' if learners != 1 else ''}"
                 + (f", latest check {_when(latest, None)}" if latest else "")
                 + (f"; chapters {', '.join(self.chapters)}" if self.chapters else "")]
        rows = [["exercise", "passed", "tried", "checks", f"failing {self.stuck_after}+", "last check"]]
        for chapter in dict.fromkeys(chapter_of(e) for e in self.shown):
            ids = [e for e in self.shown if chapter_of(e) == chapter]
            everything = sum(1 for row in self.rows if set(ids) <= row.passed)
            tried = sum(1 for row in self.rows if any((row.attempts or {}).get(e) for e in ids))
            checks = sum((row.attempts or {}).get(e, 0) for row in self.rows for e in ids)
            stuck = sum(1 for row in self.rows if any((row.failing or {}).get(e, 0) >= self.stuck_after
                                                      and e not in row.passed for e in ids))
            rows.append([f"{chapter}: all {len(ids)} exercises", f"{everything}/{learners}", str(tried), str(checks),
                         str(stuck), ""])
            for exercise_id in ids:
                last = max((row.last_checks[exercise_id] for row in self.rows
                            if exercise_id in (row.last_checks or {})), default=None)
                rows.append([f"  {exercise_id}",
                             f"{sum(1 for row in self.rows if exercise_id in row.passed)}/{learners}",
                             str(sum(1 for row in self.rows if (row.attempts or {}).get(exercise_id))),
                             str(sum((row.attempts or {}).get(exercise_id, 0) for row in self.rows)),
                             str(sum(1 for row in self.rows if (row.failing or {}).get(exercise_id, 0)
                                     >= self.stuck_after and exercise_id not in row.passed)),
                             _when(last, latest)])
        return "\n".join(lines + _columns(rows))

    def attention(self) -> list[str]:
        """Learners to go and see: failing one exercise repeatedly, idle, not started (chosen chapters)."""
        latest, found = self.latest, []
        for row in self.rows:
            stuck = [(count, e) for e, count in (row.failing or {}).items()
                     if count >= self.stuck_after and e not in row.passed and e in self.shown]
            for count, exercise_id in sorted(stuck, reverse=True):
                found.append(f"{row.learner}: failing {exercise_id}, {count} checks, none passed")
            if row.status:
                found.append(f"{row.learner}: {row.status}")
            elif latest is not None and row.last is not None and \
                    (latest - row.last).total_seconds() > 60 * self.idle_minutes:
                minutes = int((latest - row.last).total_seconds() // 60)
                found.append(f"{row.learner}: idle, last check {_when(row.last, latest)} ({row.last_exercise}), "
                             f"{minutes} min before the room's latest")
        return found

    def text(self) -> str:
        """What `python -m cutekit report` prints: the learners' table, the room, who needs attention."""
        attention = self.attention()
        lines = [self.table(), "", self.summary(), "",
                 f"Needs attention (failing {self.stuck_after}+ times, idle {self.idle_minutes}+ min, not started):"]
        lines += [f"  {line}" for line in attention] or ["  nobody"]
        return "\n".join(lines)

    def csv(self) -> str:
        buffer = io.StringIO()
        writer = csv.writer(buffer)
        shown = self.shown
        writer.writerow(["learner", "source", "status", "checks", "last check", "failing", *shown, "total",
                         "possible"])
        for row in self.rows:
            failing = " ".join(f"{e}:{n}" for e, n in sorted((row.failing or {}).items())
                               if n >= self.stuck_after and e not in row.passed and e in shown)
            writer.writerow([row.learner, row.source, row.status,
                             sum((row.attempts or {}).get(e, 0) for e in shown),
                             row.last.isoformat(timespec="seconds") if row.last else "", failing,
                             *(row.scores.get(exercise_id, "") for exercise_id in shown),
                             self._total(row), sum(self.possible[exercise_id] for exercise_id in shown)])
        return buffer.getvalue()


def class_report(places=(), homes=(), chapters=(), stuck_after: int = STUCK_AFTER,
                 idle_minutes: int = IDLE_MINUTES, collected=None, users=(), collected_from: str = "") -> ClassReport:
    """Best scores, checks run and last activity of every learner found under `places` (files, home folders or
    folders of them), of every learner with a home in the `homes` folders (a hub's `/home`), tried or not, and
    of every learner in `collected` ({name: progress file text}, from `collected_from`, the hub's progress
    service) or `users` (its users: those without a file are "not attempted").
    `chapters` (`07`, `ch07`) chooses what the tables show."""
    chosen = chapter_names(chapters)
    possible = {exercise.id: exercise.points for exercise in exercises()}
    rows, problems = [], []

    def add_file(path: Path, learner_hint: str | None = None, progress: Progress | None = None) -> None:
        progress = progress or read_progress(path)
        problems.extend(progress.problems)
        if not progress.records and progress.problems:
            if learner_hint:
                rows.append(Row(learner_hint, str(path), {}, 0, "unreadable"))
            return
        learners = {record.get("learner") for record in progress.records} - {None}
        learner = learner_hint or (learners.pop() if len(learners) == 1 else _name_from_path(path))
        for record in progress.records:
            possible.setdefault(record["exercise"], record["possible"])
        rows.append(_row_from_records(learner, str(path), progress.records))

    for place in places:
        try:
            files = find_progress_files(Path(place))
        except OSError as error:
            problems.append(cannot_read(place, error))
            continue
        if not files:
            problems.append(f"{place}: no progress files found")
        for path in files:
            add_file(path)

    for folder in homes:
        try:
            found = learner_homes(Path(folder))
        except OSError as error:
            problems.append(cannot_read(folder, error) if not isinstance(error, NotADirectoryError) else str(error))
            continue
        if not found:
            problems.append(f"{folder}: no learners' home folders in it")
        for home in found:
            path = home / ".cutekit" / "progress.jsonl"
            if _exists(path):
                add_file(path, learner_hint=home.name)
            else:
                rows.append(Row(home.name, str(path), {}, 0, "not attempted"))
    collected = collected or {}
    for learner in sorted(set(collected) | set(users)):
        source = f"{collected_from}{learner}"
        if learner in collected:
            add_file(Path(source), learner_hint=learner, progress=parse_progress(collected[learner], source))
        else:
            rows.append(Row(learner, source, {}, 0, "not attempted"))
    unknown = set(chosen) - {chapter_of(e) for e in possible}
    if unknown:
        raise ValueError(f"--chapter: no chapter {', '.join(sorted(unknown))} (chapters: "
                         f"{', '.join(sorted({chapter_of(e) for e in possible}))})")
    return ClassReport(tuple(possible), tuple(rows), possible, tuple(problems), chosen, stuck_after, idle_minutes)


def _name_from_path(path: Path) -> str:
    """`/home/ada/.cutekit/progress.jsonl` -> `ada`; `class/ada.jsonl` -> `ada`."""
    path = Path(path)
    return path.parent.parent.name if path.parent.name == ".cutekit" else path.stem
