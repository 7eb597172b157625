"""The errors of a simulated kernel, and where in the learner's code they point.

A KernelError names the kernel, the block and thread, and the learner's line; its subclasses say what kind of
mistake it is (OutOfBoundsError, RaceError, DeadlockError, NoProgressError). The learner's frames are told from
cutekit's and the libraries' by file (`is_learner_file`): a KernelError leaves a launch with the learner's
frames only (`learner_frames`), and IPython shows just its message (`KernelError._render_traceback_`).
The bottom of the machine floor: it imports nothing of the simulator.
"""
from __future__ import annotations

import os
import sys
import sysconfig

_CUTEKIT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))     # cutekit/
_LIBRARIES = tuple(sorted({os.path.abspath(path) for key in ("stdlib", "platstdlib", "purelib", "platlib")
                           if (path := sysconfig.get_paths().get(key))}, key=len, reverse=True))


class KernelError(RuntimeError):
    """A simulated kernel did something a GPU would not allow (or would allow silently and wrongly).

    Raised out of a launch, it names where: the kernel, the block and thread, the learner's line (`where`,
    e.g. "Cell In[5], line 3", and its text `line`); `problem` says what went wrong and what to write
    instead. Its traceback holds only the learner's frames, and IPython shows just the message."""

    def __init__(self, problem: str = "", *, kernel: str | None = None, block: tuple | None = None,
                 thread: tuple | None = None, where: str | None = None, line: str | None = None):
        super().__init__(problem)
        self.problem, self.kernel, self.block, self.thread, self.where, self.line = (
            problem, kernel, block, thread, where, line)

    def _place(self) -> str:
        place = f"thread {self.thread} of block {self.block}"
        if self.kernel:
            place += f" in {self.kernel}"
        if self.where:
            place += f", {self.where}"
        return place

    def __str__(self):
        if self.thread is None:
            return self.problem
        return f"{self._place()}" + (f" `{self.line}`" if self.line else "") + f": {self.problem}"

    def _render_traceback_(self) -> list:
        """IPython's hook: the lines it shows instead of a traceback (no cutekit frames, no frames at all)."""
        if self.thread is None:         # not inside a thread (a launch's settings, device code on the host)
            found = learner_line(self.__traceback__)
            return [f"{type(self).__name__}: {self.problem}"] + ([f"    {found[0]}: {found[1]}"] if found else [])
        lines = [f"{type(self).__name__}: {self._place()}"]
        if self.line:
            lines.append(f"    {self.line}")
        return lines + [self.problem]


class OutOfBoundsError(KernelError):
    """An access outside the memory a tensor views."""


class RaceError(KernelError):
    """A shared-memory element read or written by two threads with no barrier in between."""


class DeadlockError(KernelError):
    """Threads wait for each other forever: a barrier or warp collective that not every thread reaches."""


class NoProgressError(KernelError):
    """A block that did not finish within `block_seconds`: a loop that never ends, or a thread that waits by
    polling memory for a value another thread writes."""


class _Stopped(BaseException):
    """Raised inside a running kernel thread by the watchdog (below) when its block runs out of time; the launch
    turns it into a NoProgressError. A BaseException, so that a kernel's own `except Exception:` cannot keep
    it from stopping the block."""



# --------------------------------------------------------------------------------------------- frames

def is_learner_file(filename: str) -> bool:
    """Code the learner wrote (a notebook cell, a course file, a test): not cutekit, not a library."""
    if filename.startswith("<frozen") or filename == "<string>":
        return False        # "<string>": code a library generated with exec (a dataclass's __eq__, a namedtuple)
    path = os.path.abspath(filename) if not filename.startswith("<") else filename
    return not path.startswith(_CUTEKIT + os.sep) and not any(path.startswith(lib + os.sep) for lib in _LIBRARIES)


def learner_traceback(tb):
    """The entries of traceback `tb` in the learner's code, relinked in order (None when there are none)."""
    kept = []
    while tb is not None:
        if is_learner_file(tb.tb_frame.f_code.co_filename):
            kept.append(tb)
        tb = tb.tb_next
    for outer, inner in zip(kept, kept[1:]):
        outer.tb_next = inner
    if kept:
        kept[-1].tb_next = None
    return kept[0] if kept else None


class learner_frames:
    """`with learner_frames():` around cutekit code a KernelError passes through on its way to the learner:
    the error leaves with the learner's frames only (this frame and every cutekit frame dropped)."""

    __slots__ = ()

    def __enter__(self):
        return self

    def __exit__(self, kind, error, tb):
        if isinstance(error, KernelError):
            error.__traceback__ = learner_traceback(error.__traceback__)
        return False


LEARNER_FRAMES = learner_frames()


def _innermost_learner_frame(tb):
    frame = None
    while tb is not None:
        if is_learner_file(tb.tb_frame.f_code.co_filename):
            frame = (tb.tb_frame, tb.tb_lineno)
        tb = tb.tb_next
    return frame


def learner_line(tb):
    """(where, source text) of the learner's innermost line in traceback `tb`, or None."""
    found = _innermost_learner_frame(tb)
    if found is None:
        return None
    frame, lineno = found
    return where_text(frame.f_code.co_filename, lineno), _source_line(frame, lineno)


def where_text(filename: str, lineno: int) -> str:
    """"Cell In[5], line 3" for a notebook cell (as IPython names it), else "file.py, line 3"."""
    try:
        shell = sys.modules.get("IPython") and sys.modules["IPython"].get_ipython()
        named = shell.compile.format_code_name(filename) if shell is not None else None
        if named:
            return f"{named[0]} {named[1]}, line {lineno}"
    except Exception:  # noqa: BLE001 (no IPython, or an older one: the file name will do)
        pass
    return f"{os.path.basename(filename)}, line {lineno}"


def _source_line(frame, lineno: int) -> str:
    import linecache
    return linecache.getline(frame.f_code.co_filename, lineno, frame.f_globals).strip()
