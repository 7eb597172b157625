"""Running a learner's code so that nothing it does can take the notebook down with it.

The rule: learner code runs in a forked child process with a time limit. The child inherits the notebook's
state (the answer function, its globals, the modules it imported), so nothing has to be moved by hand; it
sends back plain data (pickled) and whatever it printed. An exception, an infinite loop, a crash (a
segfault, `os._exit`) or a result that cannot be sent back each becomes a clear message in the parent.

Two limits: `timeout` for the whole call, and `quiet` (QUIET_SECONDS) for any stretch in which the child
shows no progress: it shows some each time it calls `still_working()` (grading does, after every case), so a
check of many cases may take long, but a case that hangs is stopped after 20 s.

Where `os.fork` does not exist (Windows) the code runs in this process, without a time limit.
"""
from __future__ import annotations

import contextlib
import faulthandler
import io
import os
import pickle
import select
import signal
import time
import traceback
import warnings
from dataclasses import dataclass


QUIET_SECONDS = 20.0     # the longest a graded case may run (the course's kernel cases take 0.5-2 s)

_HEARTBEAT: list = [None]   # in a sandbox child: the pipe on which still_working() tells the parent


def still_working() -> None:
    """In a sandbox child: tell the parent the code makes progress (its quiet clock starts again). Elsewhere
    it does nothing."""
    pipe = _HEARTBEAT[0]
    if pipe is not None:
        try:
            os.write(pipe, b".")
        except OSError:
            pass


@dataclass(frozen=True)
class Isolated:
    """What came back from a call run in isolation: a value, or `error` saying why there is none."""
    value: object = None
    error: str = ""
    output: str = ""          # what the code printed (stdout and stderr, interleaved)

    @property
    def ok(self) -> bool:
        return not self.error


def describe_exception(error: BaseException) -> str:
    """`TypeError: ...` followed by the innermost frame that is not cutekit's, where the learner can look."""
    frames = [frame for frame in traceback.extract_tb(error.__traceback__)
              if f"{os.sep}cutekit{os.sep}" not in frame.filename]
    where = f" (line {frames[-1].lineno}: {frames[-1].line})" if frames and frames[-1].line else ""
    return f"{type(error).__name__}: {error}{where}"


def _call_capturing_output(function):
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer), contextlib.redirect_stderr(buffer):
        try:
            return Isolated(value=function(), output=buffer.getvalue())
        except BaseException as error:  # the learner's code may raise anything, SystemExit included
            return Isolated(error=f"your code raised {describe_exception(error)}", output=buffer.getvalue())


def run_isolated(function, timeout: float = 10.0, quiet: float | None = QUIET_SECONDS) -> Isolated:
    """Call `function()` in a forked child and return its value (which must pickle) or an error message. The
    child is stopped after `timeout` seconds in all, or after `quiet` seconds without calling still_working()."""
    if not hasattr(os, "fork"):
        return _call_capturing_output(function)
    read_end, write_end = os.pipe()
    beat_read, beat_write = os.pipe()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # "multi-threaded fork": the child only computes
        pid = os.fork()
    if pid == 0:  # the child: compute, send, and leave without running the parent's exit handlers
        os.close(read_end)
        os.close(beat_read)
        _HEARTBEAT[0] = beat_write
        faulthandler.disable()  # a crash is reported by the parent, in words, not as a C-level traceback
        try:
            result = _call_capturing_output(function)
            try:
                data = pickle.dumps(result)
            except Exception as error:
                data = pickle.dumps(Isolated(error=f"the result could not be sent back ({describe_exception(error)})",
                                             output=result.output))
            with os.fdopen(write_end, "wb") as pipe:
                pipe.write(data)
        finally:
            os._exit(0)
    os.close(write_end)
    os.close(beat_write)
    chunks, timed_out = [], ""
    started = time.monotonic()
    deadline, progress = started + timeout, started
    with os.fdopen(read_end, "rb", buffering=0) as pipe, os.fdopen(beat_read, "rb", buffering=0) as beats:
        watched = [pipe, beats]
        while True:
            now = time.monotonic()
            if now >= deadline:
                timed_out = f"did not finish within {timeout:g} s (an infinite loop, or far too much work?)"
                break
            if quiet is not None and now >= progress + quiet:
                timed_out = (f"made no progress for {quiet:g} s ({'no case' if progress == started else 'no further case'}"
                             " finished): an infinite loop, or far too much work?")
                break
            left = deadline - now if quiet is None else min(deadline, progress + quiet) - now
            ready, _, _ = select.select(watched, [], [], left)
            if beats in ready:
                if beats.read(1 << 12):
                    progress = time.monotonic()
                else:
                    watched.remove(beats)       # the child closed it (it is leaving)
            if pipe in ready:
                chunk = pipe.read(1 << 16)
                if not chunk:
                    break
                chunks.append(chunk)
    if timed_out:
        os.kill(pid, signal.SIGKILL)
    _, status = os.waitpid(pid, 0)
    if timed_out:
        return Isolated(error=f"your code {timed_out}")
    if os.WIFSIGNALED(status):
        name = signal.Signals(os.WTERMSIG(status)).name
        return Isolated(error=f"your code crashed the process that ran it ({name}); the notebook is fine")
    try:
        return pickle.loads(b"".join(chunks))
    except Exception:
        return Isolated(error="your code ended the process that ran it before it could answer (os._exit or exit?)")
