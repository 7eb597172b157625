"""What a learner sees when a simulated kernel fails: one KernelError that names their line, the block and the
thread, says what went wrong in plain words and what to write instead, and carries no cutekit frames.

Whatever a kernel raises (a simulator check, a rule of the layout algebra, or a plain Python error such as a
ZeroDivisionError or a bad unpacking) leaves the launch as a KernelError (the simulator's own subclasses,
OutOfBoundsError, RaceError, OperandError, ..., stay what they are). Its traceback keeps only the learner's
frames: the cell or file that called the @cute.jit function, the launch line, the kernel line; every cutekit
frame is dropped on the way out (`learner_frames`). In Jupyter, IPython shows just the message
(`KernelError._render_traceback_`).

Indices are checked as CuTeDSL checks them: a coordinate's leaves must be integers (an int, a bool or a
NumPy integer, which is what the simulator holds where CuTeDSL holds an Int32); a float is refused, and so is
the (x, y, z) tuple of `cute.arch.thread_idx()` used where one number belongs (`Dim3`).
"""
from __future__ import annotations

import ast
import re

import numpy

from ...cute.inttuple import CuteError
from . import watchdog
from .errors import (LEARNER_FRAMES, DeadlockError, KernelError, NoProgressError, OutOfBoundsError,  # noqa: F401
                     RaceError, _innermost_learner_frame, _source_line, _Stopped, is_learner_file,
                     learner_frames, learner_line, learner_traceback, where_text)   # (the frames: failures.X too)


class CoordinateError(KernelError, CuteError):
    """An index or coordinate that is not made of integers (a float, or thread_idx()'s whole tuple)."""


# --------------------------------------------------------------------------------------------- thread ids

class Dim3(tuple):
    """What `cute.arch.thread_idx()` (block_idx, block_dim, grid_dim) returns: the three values (x, y, z), as
    in CuTeDSL. Unpacked (`tidx, _, _ = ...`) it is three ints; used as one number it is refused by name
    (CuTeDSL refuses it too, or silently makes a 6-tuple of `tidx * 2`)."""

    def __new__(cls, values, function: str = "thread_idx"):
        self = super().__new__(cls, values)
        self.function = function
        return self

    def __getnewargs__(self):
        return tuple(self), self.function

    def _misused(self, *other):
        raise CoordinateError(dim3_problem(self.function, None))

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = _misused
    __truediv__ = __rtruediv__ = __floordiv__ = __rfloordiv__ = __mod__ = __rmod__ = _misused
    __int__ = __float__ = __index__ = _misused

    def __lt__(self, other):
        return tuple.__lt__(self, other) if isinstance(other, tuple) else self._misused()

    def __le__(self, other):
        return tuple.__le__(self, other) if isinstance(other, tuple) else self._misused()

    def __gt__(self, other):
        return tuple.__gt__(self, other) if isinstance(other, tuple) else self._misused()

    def __ge__(self, other):
        return tuple.__ge__(self, other) if isinstance(other, tuple) else self._misused()

    __hash__ = tuple.__hash__


def dim3_problem(function: str, name: str | None) -> str:
    short = {"thread_idx": "tidx", "block_idx": "bidx", "block_dim": "bdim", "grid_dim": "gdim"}[function]
    name = name or short
    return (f"`{name}` holds all three values (x, y, z) of cute.arch.{function}(), not one number: write "
            f"`{name}, _, _ = cute.arch.{function}()` (or use `{name}[0]`)")


# --------------------------------------------------------------------------------------------- indices

def _float_problem(value, what: str) -> str:
    return (f"{what}: an index must be an integer, but {value!r} is a {type(value).__name__}; compute it with "
            f"integers (`//` instead of `/`, `int(...)` around a float)")


def _is_plain(coord) -> bool:
    kind = type(coord)
    return kind is int or coord is None or (kind is tuple and all(map(_is_plain, coord)))


def plain_coordinate(coord, what="index"):
    """`coord` with every leaf a Python int (bools and NumPy integers converted, as CuTeDSL accepts them as
    integers); a CoordinateError for a float, thread_idx()'s tuple, or anything else that is not an index.
    `what` names the access in the message (a string, or a function giving it, asked only on an error)."""
    if _is_plain(coord):
        return coord
    kind = type(coord)
    if isinstance(coord, Dim3):
        raise CoordinateError(f"{_said(what)}: " + dim3_problem(coord.function, None))
    if kind is list or isinstance(coord, tuple):
        return tuple(plain_coordinate(c, what) for c in coord)
    if isinstance(coord, (int, numpy.integer, numpy.bool_)):
        return int(coord)
    if isinstance(coord, (float, numpy.floating)):
        raise CoordinateError(_float_problem(coord, _said(what)))
    raise CoordinateError(f"{_said(what)}: an index must be an integer or a tuple of integers, got "
                          f"{type(coord).__name__} {coord!r}")


def _said(what) -> str:
    return what() if callable(what) else what


def thread_index(value, what: str) -> int:
    """A thread's index for local_partition / get_slice: an integer (not a bool, a float, or thread_idx()'s
    whole tuple)."""
    if type(value) is int:
        return value
    if isinstance(value, Dim3):
        raise CoordinateError(f"{what}: " + dim3_problem(value.function, None))
    if isinstance(value, (bool, numpy.bool_)):
        raise CoordinateError(f"{what}: a thread index must be an integer, got {value!r} (CuTeDSL refuses a bool "
                              f"here)")
    if isinstance(value, (int, numpy.integer)):
        return int(value)
    if isinstance(value, (float, numpy.floating)):
        raise CoordinateError(_float_problem(value, what))
    raise CoordinateError(f"{what}: a thread index must be an integer, got {type(value).__name__} {value!r}")


# --------------------------------------------------------------------------------------------- explaining

_ARCH_CALL = re.compile(r"cute\.arch\.(thread_idx|block_idx|block_dim|grid_dim)\(\)")
_GOT_FLOAT = re.compile(r"must be an int or a tuple of ints, got (float\w*): (.*)$")


def _unpacking_fix(line: str, function: str) -> str:
    """`tidx, = cute.arch.thread_idx()` -> "`tidx, _, _ = cute.arch.thread_idx()`"."""
    try:
        statement = ast.parse(line).body[0]
        targets = statement.targets[0].elts if isinstance(statement, ast.Assign) else []
        names = [ast.unparse(t) for t in targets][:3]
    except (SyntaxError, IndexError, AttributeError):
        names = []
    names = (names or ["tidx"]) + ["_"] * (3 - len(names or ["tidx"]))
    return f"`{', '.join(names)} = cute.arch.{function}()`"


def explain(error: BaseException, frame, line: str) -> str:
    """What went wrong, in plain words, and what to write instead."""
    text = error.problem if isinstance(error, KernelError) else str(error)
    # thread_idx()'s tuple unpacked into the wrong number of names
    arch = _ARCH_CALL.search(line or "")
    if arch and isinstance(error, (ValueError, TypeError)) and "unpack" in str(error):
        return (f"cute.arch.{arch.group(1)}() returns three values (x, y, z) ({error}): write "
                f"{_unpacking_fix(line, arch.group(1))}")
    # thread_idx()'s tuple held in a name and used as one number
    if frame is not None and not isinstance(error, (RaceError, DeadlockError)):
        for name, value in frame.f_locals.items():
            if isinstance(value, Dim3) and re.search(rf"(?<![\w.]){re.escape(name)}(?!\w|\s*\[)", line or ""):
                return dim3_problem(value.function, name)
        if arch and isinstance(error, (TypeError, CoordinateError)):
            return dim3_problem(arch.group(1), None)
    if isinstance(error, KernelError):
        if isinstance(error, OutOfBoundsError) and "guard" not in text and "misaligned" not in text:
            text += (". Guard the access with an `if` on the tensor's shape (e.g. `if i < t.shape[0]:`)"
                     " or fix the index")
        return text
    floated = _GOT_FLOAT.search(text)
    if isinstance(error, CuteError) and floated:
        return (f"an index must be an integer, but {floated.group(2)} is a {floated.group(1)}; compute it with "
                f"integers (`//` instead of `/`, `int(...)` around a float)")
    if isinstance(error, CuteError):
        return text
    # a module-level name that a check's rebuilt module did not carry (cutekit/checks/kernels.py lists them)
    not_carried = (frame.f_globals.get("__cutekit_not_carried__") or {}) if frame is not None else {}
    if type(error) is NameError and getattr(error, "name", None) in not_carried:
        return f"Python raised NameError: {error}; {not_carried[error.name]}"
    hints = {       # the first kind that matches (UnboundLocalError is a NameError)
        ZeroDivisionError: "for this thread the divisor is 0: check how it is computed, or guard the division",
        UnboundLocalError: "it is assigned only on some paths (inside an `if`?): give it a value before the branch",
        NameError: "a kernel can use its arguments, its own variables and module-level names: define it or "
                   "pass it to the kernel",
        AttributeError: "check the name against CuTeDSL's API (cute.*, cute.arch.*, tensor methods)",
    }
    hint = next((h for kind, h in hints.items() if isinstance(error, kind)), "fix this line")
    return f"Python raised {type(error).__name__}: {error}; {hint}"


def kernel_failure(error: BaseException, thread, kernel: str) -> KernelError:
    """The KernelError a learner sees for `error`, raised by `thread` while running `kernel`: located at the
    learner's innermost line, explained, with the learner's frames as its traceback."""
    if isinstance(error, KernelError) and error.thread is not None:
        return error
    found = _innermost_learner_frame(error.__traceback__)
    frame, lineno = found if found else (None, 0)
    line = _source_line(frame, lineno) if frame is not None else ""
    kind = type(error) if isinstance(error, KernelError) else KernelError
    if isinstance(error, _Stopped):     # the watchdog stopped a block that ran out of time
        record = _stop_record(thread)
        thread = thread or (record.thread if record else None)
        if thread is not None:
            thread.block.launch.stop_delivered = True
        kind = NoProgressError
        problem = watchdog.no_progress_story(record) if record else "no progress: the block ran out of time"
    else:
        problem = explain(error, frame, line)
    failure = kind(problem, kernel=kernel, block=tuple(thread.block_idx) if thread else None,
                   thread=tuple(thread.thread_idx) if thread else None, line=line or None,
                   where=where_text(frame.f_code.co_filename, lineno) if frame is not None else None)
    if kind is NoProgressError:
        watchdog.STOPPED.append(f"{kind.__name__}: {failure}")
    failure.__traceback__ = learner_traceback(error.__traceback__)
    return failure


def _stop_record(thread):
    """The watchdog's record of the launch it stopped (the one `thread` runs in, else the latest)."""
    record = (thread.block.launch.stopped if thread is not None else None) or watchdog._LAST_STOP[0]
    watchdog._LAST_STOP[0] = None        # it holds the stopped block, and its threads, alive
    return record
