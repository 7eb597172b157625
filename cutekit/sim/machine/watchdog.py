"""The watchdog: a block that makes no progress for `SETTINGS.block_seconds` is stopped and named.

One daemon OS thread per process watches the launch in progress (`_Watchdog`); when it stops a block it leaves
a `_StopRecord`, and `no_progress_story` tells from it what the thread that ran was doing (failures.py turns it
into the NoProgressError the learner sees).
"""
from __future__ import annotations

import ctypes
import os
import threading
import time
from dataclasses import dataclass

from .errors import _Stopped
from .threads import SETTINGS, Block, Launch, Thread, _current, _ranges, site_text


# --------------------------------------------------------------------------------------------- no progress

@dataclass(frozen=True)
class _StopRecord:
    """What the watchdog saw when it stopped a launch: the block, the thread that ran, for how long."""
    block: Block
    thread: Thread | None
    block_seconds: float            # how long the block had run
    running_seconds: float          # how long that thread had run without waiting (as sampled)


class _Watchdog:
    """One daemon OS thread per process that watches the launch in progress and stops a block that runs longer
    than `SETTINGS.block_seconds` (and has spent half of that on the CPU, so that a machine busy with other
    work does not stop a slow block): it raises `_Stopped` inside the thread that runs the kernel (CPython's
    PyThreadState_SetAsyncExc, delivered between two bytecodes of whatever kernel thread runs), and the launch
    turns that into a NoProgressError naming the thread, its block and its line.

    A thread of the simulator runs until it waits (a barrier, a warp collective) or returns, so a thread that
    never does (`while True:`, a spin-wait on memory another thread would write) holds the CPU: only a second
    OS thread can stop it. The launch itself pays a lock per launch and two clock readings per block (about
    2 microseconds); the watchdog samples a few times a second while a launch runs and sleeps otherwise."""

    interval = 0.25                 # seconds between samples: the stop comes at most this late

    def __init__(self):
        self.lock = threading.Lock()
        self.wake = threading.Event()
        self.launch: Launch | None = None
        self.ident = 0              # the OS thread running the launch
        self.clock = None           # its CPU-time clock (None where the platform has none: wall time only)
        self.clocks: dict = {}      # OS thread -> its CPU-time clock
        self.worker = threading.Thread(target=self._watch, name="cutekit-sim-watchdog", daemon=True)
        self.worker.start()

    def watch(self, launch: Launch):
        """Watch `launch` (run on this OS thread) until `unwatch(the value returned)`."""
        ident = threading.get_ident()
        with self.lock:
            previous = (self.launch, self.ident)
            if ident not in self.clocks:
                self.clocks[ident] = _cpu_clock(ident)
            self.launch, self.ident, self.clock = launch, ident, self.clocks[ident]
        if not self.wake.is_set():
            self.wake.set()
        return previous

    def unwatch(self, previous):
        with self.lock:
            launch, ident = self.launch, self.ident
            self.launch, self.ident = previous
            self.clock = self.clocks.get(self.ident)
            if launch is not None and launch.stopped is not None and not launch.stop_delivered:
                _raise_in(ident, None)    # a stop sent as the launch ended normally: take it back

    def _watch(self):
        seen, since, pause = None, 0.0, self.interval
        while True:
            self.wake.wait()
            time.sleep(pause)
            pause = self.interval
            with self.lock:
                launch = self.launch
                if launch is None:
                    self.wake.clear()       # `watch` sets it again under the same lock order: no wake-up lost
                    seen = None
                    continue
                limit, block, thread = SETTINGS.block_seconds, launch.block, _current[0]
                if thread is not None and thread.block is not block:
                    thread = None
                if limit is None or block is None:
                    thread = block = None
                    continue
                now = time.perf_counter()
                if thread is not None:
                    # the same thread, still in the same stretch (its `where` changes each time it waits)
                    key = (block.started, thread.linear, thread.where)
                    if seen is None or seen[:2] != key[:2] or seen[2] is not key[2]:
                        seen, since = key, now
                cpu = now - block.started if self.clock is None else time.clock_gettime(self.clock) - block.cpu_started
                # a thread spinning on shared memory leaves one bank-request record per read (a real kernel's
                # warp, one per 32 reads): past _REQUESTS_LIMIT it has spun for seconds; stop it before memory runs out
                if (now - block.started >= limit and cpu >= limit / 2) or len(block.requests) > _REQUESTS_LIMIT:
                    if thread is None:      # the scheduler runs (between two threads): look again very soon
                        pause = 0.01
                    else:
                        launch.stopped = _LAST_STOP[0] = _StopRecord(block, thread, now - block.started, now - since)
                        _raise_in(self.ident, _Stopped)     # again at the next sample, should this one be lost
                thread = block = None       # hold nothing of the launch between samples


def _cpu_clock(ident: int):
    """The CPU-time clock of OS thread `ident`, for time.clock_gettime (None where there is none, as on macOS)."""
    try:
        return time.pthread_getcpuclockid(ident)
    except (AttributeError, OSError, OverflowError):
        return None


def _raise_in(ident: int, exception) -> None:
    """Raise `exception` (a class; None takes back one not yet raised) in OS thread `ident` at its next bytecode."""
    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(ident),
                                               None if exception is None else ctypes.py_object(exception))


_WATCHDOGS: list = [None]
_REQUESTS_LIMIT = 1 << 19   # bank-request records in one block (about 200 MB); a real block stays far below
_LAST_STOP: list = [None]
STOPPED: list = []          # the NoProgressErrors raised in this process, oldest first (a check stops after one)


def _watchdog() -> _Watchdog:
    watchdog = _WATCHDOGS[0]
    if watchdog is None:
        watchdog = _WATCHDOGS[0] = _Watchdog()
    return watchdog


if hasattr(os, "register_at_fork"):     # a forked child (a check's sandbox) has no watchdog thread: start its own
    os.register_at_fork(after_in_child=lambda: _WATCHDOGS.__setitem__(0, None))


def no_progress_story(record: _StopRecord) -> str:
    """Why the block was stopped, from what the thread that ran was doing."""
    block, thread, limit = record.block, record.thread, SETTINGS.block_seconds
    raise_it = (f" A block that only needs longer: cutekit.sim.configure(block_seconds=...) (now {limit:g} s; the "
                "course's largest block takes 2.5 s).")
    if thread is not None and record.running_seconds >= record.block_seconds / 2:
        behind = [t.linear for t in block.threads or () if t is not thread and not t.finished]
        said = f" (threads {_ranges(behind)} of the block wait for their turn)" if behind else ""
        return (f"no progress for {record.running_seconds:.0f} s: this thread runs on without reaching a barrier, a "
                "warp collective or its end: a loop that never ends (`while True:`, or a condition nothing in the "
                "loop changes), or a spin-wait for a value another thread writes. The simulator runs a block's "
                "threads in turn, each until it waits at cute.arch.sync_threads() or returns, so a thread polling "
                f"memory never sees another thread's write{said}; on a GPU such a wait may hang too: wait with "
                "cute.arch.sync_threads() instead." + raise_it)
    last = f", the last at {site_text(thread.where)}" if thread is not None and thread.where else ""
    return (f"no progress: block {block.block_idx} has run for {record.block_seconds:.0f} s without finishing, its "
            f"threads meeting at barriers {block.epoch} times{last}: a loop around the barrier that never ends (a "
            "`while` whose condition nothing in the loop changes: is its counter advanced?), or threads waiting "
            "for a value no thread writes." + raise_it)

