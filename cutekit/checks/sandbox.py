"""Running a learner's code so that nothing it does can take the notebook down with it.

The rule: learner code runs in a forked child process with a time limit. The child inherits the notebook's
state (the answer function, its globals, the modules it imported), so nothing has to be moved by hand; it
sends back plain data (pickled) and whatever it printed. An exception, an infinite loop, a crash (a
segfault, `os._exit`) or a result that cannot be sent back each becomes a clear message in the parent.

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


def run_isolated(function, timeout: float = 10.0) -> Isolated:
    """Call `function()` in a forked child and return its value (which must pickle) or an error message."""
    if not hasattr(os, "fork"):
        return _call_capturing_output(function)
    read_end, write_end = os.pipe()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # "multi-threaded fork": the child only computes
        pid = os.fork()
    if pid == 0:  # the child: compute, send, and leave without running the parent's exit handlers
        os.close(read_end)
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
    chunks, deadline, timed_out = [], time.monotonic() + timeout, False
    with os.fdopen(read_end, "rb", buffering=0) as pipe:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                timed_out = True
                break
            ready, _, _ = select.select([pipe], [], [], left)
            if ready:
                chunk = pipe.read(1 << 16)
                if not chunk:
                    break
                chunks.append(chunk)
    if timed_out:
        os.kill(pid, signal.SIGKILL)
    _, status = os.waitpid(pid, 0)
    if timed_out:
        return Isolated(error=f"your code did not finish within {timeout:g} s (an infinite loop, or far too much work?)")
    if os.WIFSIGNALED(status):
        name = signal.Signals(os.WTERMSIG(status)).name
        return Isolated(error=f"your code crashed the process that ran it ({name}); the notebook is fine")
    try:
        return pickle.loads(b"".join(chunks))
    except Exception:
        return Isolated(error="your code ended the process that ran it before it could answer (os._exit or exit?)")
