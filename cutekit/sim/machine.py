"""The simulated GPU: a grid of blocks, each block's threads run one after another on the CPU.

CUDA's per-thread semantics, without one OS thread per CUDA thread: every CUDA thread of a block is a
greenlet (a coroutine with its own stack, switched in user space in well under a microsecond). A thread
runs until it finishes or waits: at `sync_threads` (the block barrier) or at a warp-collective operation
(shuffle, vote, reduction, ldmatrix, mma.sync, a warpgroup's wgmma operations). When every live thread of the
block waits at the barrier, the barrier opens; when every lane a collective needs waits at it, at the same line,
it is computed for them at once and they go on (collectives.py says which lanes each needs, as the PTX ISA
does, and names the lanes that never come). Blocks run one after another (a GPU gives no order between blocks
either, and no barrier spans them).

What no GPU tells you, the simulator does: an access outside a tensor stops the launch naming the block,
thread, tensor and coordinate; a shared-memory race (a value read or overwritten by another thread since
the last barrier) stops it too; shared-memory bank conflicts are counted per warp access; a trace can
record which thread touched which element; a block that makes no progress (a loop that never ends, a
thread polling memory for a value another thread writes) is stopped after `block_seconds` and named.
"""
from __future__ import annotations

import ctypes
import itertools
import os
import sys
import threading
import time
from dataclasses import dataclass, field

import numpy
from greenlet import greenlet

WARP_SIZE = 32
SHARED_MEMORY_LIMIT = 227 * 1024   # bytes per block on sm_90 (sm_80: 163 KB); 48 KB without an opt-in


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
            from .failures import learner_line
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


# --------------------------------------------------------------------------------------------- settings

@dataclass
class Settings:
    """What the simulator checks and records (change with `cutekit.sim.configure(...)`).

    races: "error" stops at the first shared-memory race, "warn" counts them (`last_launch().races`),
           "off" skips the check.
    trace: record (block, thread, tensor, offset, read/write) for every global and shared access.
    max_trace: stop recording after this many accesses (a trace of a large launch is large).
    block_seconds: a block still running after this many seconds, half of them or more on the CPU (a busy
           machine does not stop a slow block), is stopped with a NoProgressError naming the thread that runs
           and its line (the course's largest block takes 2.5 s of CPU); None never stops one.
    """
    races: str = "error"
    trace: bool = False
    max_trace: int = 1_000_000
    block_seconds: float | None = 10.0


SETTINGS = Settings()


_UNCHANGED = object()


def configure(*, races: str | None = None, trace: bool | None = None, max_trace: int | None = None,
              block_seconds=_UNCHANGED) -> Settings:
    """Change what the simulator checks and records; returns the settings now in force."""
    if races is not None:
        if races not in ("error", "warn", "off"):
            raise ValueError(f"configure(races=...) must be 'error', 'warn' or 'off', got {races!r}")
        SETTINGS.races = races
    if trace is not None:
        SETTINGS.trace = bool(trace)
    if max_trace is not None:
        if not isinstance(max_trace, int) or max_trace < 0:
            raise ValueError(f"configure(max_trace=...) must be a non-negative int, got {max_trace!r}")
        SETTINGS.max_trace = max_trace
    if block_seconds is not _UNCHANGED:
        if block_seconds is not None and (isinstance(block_seconds, bool) or not isinstance(block_seconds, (int, float))
                                          or not block_seconds > 0):
            raise ValueError(f"configure(block_seconds=...) must be a positive number of seconds or None, got "
                             f"{block_seconds!r}")
        SETTINGS.block_seconds = block_seconds
    return SETTINGS


# --------------------------------------------------------------------------------------------- reports

@dataclass
class LaunchReport:
    """What one kernel launch did: sizes, time, printf output, bank conflicts, races, trace."""
    kernel: str
    grid: tuple
    block: tuple
    threads: int = 0
    seconds: float = 0.0
    printed: list = field(default_factory=list)
    shared_accesses: int = 0          # warp-wide shared-memory requests
    shared_wavefronts: int = 0        # the passes the banks needed to serve them
    bank_conflicts_by_line: dict = field(default_factory=dict)   # "file:line" -> extra wavefronts
    races: list = field(default_factory=list)
    trace: list | None = None

    @property
    def bank_conflicts(self) -> int:
        """Extra shared-memory wavefronts caused by two addresses of one request in one bank."""
        return sum(self.bank_conflicts_by_line.values())

    @property
    def threads_per_second(self) -> float:
        return self.threads / self.seconds if self.seconds else float("inf")

    def __str__(self):
        lines = [f"{self.kernel}: grid {self.grid} x block {self.block} = {self.threads} threads simulated in "
                 f"{self.seconds:.3f} s ({self.threads_per_second:,.0f} threads/s)"]
        if self.shared_accesses:
            lines.append(f"  shared memory: {self.shared_accesses} warp requests, {self.shared_wavefronts} "
                         f"wavefronts, {self.bank_conflicts} bank conflicts")
            for where, extra in sorted(self.bank_conflicts_by_line.items()):
                if extra:
                    lines.append(f"    {where}: {extra} extra wavefronts")
        if self.races:
            lines.append(f"  {len(self.races)} shared-memory races; first: {self.races[0]}")
        return "\n".join(lines)

    __repr__ = __str__


_LAST: list = []


def last_launch() -> LaunchReport | None:
    """The report of the most recent simulated launch (None before the first)."""
    return _LAST[-1] if _LAST else None


# --------------------------------------------------------------------------------------------- threads

@dataclass(eq=False)
class Thread:
    """One CUDA thread: its ids, its coroutine, and what it waits for."""
    thread_idx: tuple
    block_idx: tuple
    linear: int                     # x + y * Bx + z * Bx * By
    block: "Block"
    coroutine: object = None        # the greenlet running it (set when it starts)
    finished: bool = False
    waiting: str = ""               # "", "barrier" or "warp"
    where: str = ""                 # the kernel line it waits at
    request: object = None          # a warp collective's (key, resolve, payload)
    reply: object = None
    shared_count: int = 0           # SmemAllocator allocations made so far
    access_counts: dict = field(default_factory=dict)   # (file, line) -> shared accesses issued there
    async_groups: list = field(default_factory=list)    # committed cp.async groups, oldest first
    async_pending: list = field(default_factory=list)   # cp.async copies not yet committed
    synced: int = 0                 # the block's barrier releases (block.syncs) when this thread last passed one

    @property
    def lane(self) -> int:
        return self.linear % WARP_SIZE

    @property
    def warp(self) -> int:
        return self.linear // WARP_SIZE

    def describe(self) -> str:
        return f"thread {self.thread_idx} of block {self.block_idx}"


@dataclass(eq=False)
class Block:
    """A block's shared state: its shared-memory allocations and its barrier count (the epoch)."""
    block_idx: tuple
    launch: "Launch"
    epoch: int = 0
    syncs: int = 0                  # barriers released (sync_threads, named barriers): mbarrier inits reach others
    shared: list = field(default_factory=list)
    shared_bytes: int = 0
    requests: dict = field(default_factory=dict)    # (warp, site, k) -> [(lane, byte address, width)]
    scheduler: object = None        # the greenlet running _run_block
    queue: list = field(default_factory=list)       # the threads the scheduler resumes this round
    position: int = 0               # which of them runs now: a waiting thread switches to the next
    started: float = 0.0            # time.perf_counter() when it began (the watchdog's clock)
    cpu_started: float = 0.0        # time.thread_time() then
    threads: list | None = None     # its threads while it runs (what a NoProgressError says of them)


@dataclass(eq=False)
class Launch:
    grid: tuple
    block_dim: tuple
    report: LaunchReport
    smem_limit: int
    block: object = None            # the Block running now (the watchdog's clock reads its start)
    stopped: object = None          # the watchdog's _StopRecord once it stops this launch
    stop_delivered: bool = False    # its _Stopped was raised and caught


_current: list = [None]   # the running Thread (None on the host)


def current() -> Thread | None:
    return _current[0]


def require_thread(what: str) -> Thread:
    """The running thread; a clear error when device code is called on the host."""
    thread = _current[0]
    if thread is None:
        raise KernelError(f"{what} is device code: call it inside a @cute.kernel launched with .launch(...)")
    return thread


# --------------------------------------------------------------------------------------------- where

_OWN_FILES = os.path.dirname(os.path.abspath(__file__))


_OWN_CODE: dict = {}     # code object -> whether it is cutekit's simulator's own (skipped by user_site)


def user_site(depth: int = 2) -> tuple:
    """(file, line) of the innermost frame outside cutekit's simulator: the kernel line being run."""
    frame = sys._getframe(depth)
    own = _OWN_CODE
    while frame is not None:
        code = frame.f_code
        mine = own.get(code)
        if mine is None:
            if len(own) > 4096:         # notebook cells make new code objects each run
                own.clear()
            mine = own[code] = code.co_filename.startswith(_OWN_FILES)
        if not mine:
            return (code.co_filename, frame.f_lineno)
        frame = frame.f_back
    return ("?", 0)


def site_text(site) -> str:
    if site is None or isinstance(site, str):
        return site or ""
    filename, line = site
    return f"{os.path.basename(filename)}:{line}"


# --------------------------------------------------------------------------------------------- waiting

def _wait(thread: Thread, kind: str):
    thread.waiting = kind
    thread.where = user_site(3)         # (file, line): made text only when a message needs it
    block = thread.block
    queue = block.queue                 # the threads this round resumes, in order: hand over to the next
    position = block.position + 1
    if position < len(queue):
        block.position = position
        following = queue[position]
        _current[0] = following
        following.coroutine.switch()    # back here when the scheduler resumes this thread
    else:
        block.scheduler.switch()


_SCHEDULER: list = [None]


def barrier():
    """`__syncthreads()`: wait until every live thread of the block arrives."""
    thread = require_thread("sync_threads()")
    _wait(thread, "barrier")


def named_barrier(barrier_id: int, number_of_threads: int):
    """`bar.sync id, n` (cute.arch.barrier(barrier_id=id, number_of_threads=n)): wait until n threads of the
    block wait at barrier `id`; the other threads go on meanwhile."""
    thread = require_thread("cute.arch.barrier()")
    thread.request = (int(barrier_id), int(number_of_threads))
    _wait(thread, "named")
    thread.request = None


def _release_named(block: Block, live: list) -> bool:
    waiting: dict = {}
    for t in live:
        if t.waiting == "named":
            waiting.setdefault(t.request, []).append(t)
    released = False
    for (barrier_id, count), group in waiting.items():
        if len(group) > count:
            raise DeadlockError(f"block {group[0].block_idx}: {len(group)} threads wait at named barrier "
                                f"{barrier_id}, which was given number_of_threads={count}")
        if len(group) == count:
            if "passing" in block.__dict__:
                collectives.on_release(block, group)
            block.epoch += 1
            block.syncs += 1
            for t in group:
                t.waiting = ""
                t.synced = block.syncs
            released = True
    return released


def wait_until(condition, what: str):
    """Wait until `condition()` holds, made true by other threads (an mbarrier's phase completing): the
    scheduler resumes the thread in the first round that finds it true."""
    thread = require_thread(what)
    if condition():
        return
    thread.request = (what, condition)
    _wait(thread, "until")
    thread.request = None


def _release_conditions(live: list) -> bool:
    released = False
    for t in live:
        if t.waiting == "until" and t.request[1]():
            t.waiting = ""
            released = True
    return released


# --------------------------------------------------------------------------------------------- cp.async

def complete_async(thread: Thread, keep: int | None):
    """Finish this thread's committed cp.async groups, all but the newest `keep` (None: finish nothing)."""
    if keep is None:
        return
    while len(thread.async_groups) > keep:
        for finish in thread.async_groups.pop(0):
            finish()


def commit_async(thread: Thread):
    thread.async_groups.append(thread.async_pending)
    thread.async_pending = []


# --------------------------------------------------------------------------------------------- launch

def _as_dim3(value, what: str) -> tuple:
    if isinstance(value, int) and not isinstance(value, bool):
        value = [value]
    try:
        dims = [int(v) for v in value]
        ok = all(int(v) == v for v in value)
    except (TypeError, ValueError):
        ok = False
    if not ok or not 1 <= len(dims) <= 3 or any(d < 1 for d in dims):
        raise KernelError(f"launch {what}= must be 1 to 3 positive ints, got {value!r}")
    return tuple(dims) + (1,) * (3 - len(dims))


def _learner_frames():
    from .failures import LEARNER_FRAMES
    return LEARNER_FRAMES


def run(kernel_name: str, body, grid, block, smem: int = 0) -> LaunchReport:
    """Run `body()` as every thread of every block; returns the launch report. A failure leaves as one
    KernelError with the learner's frames only (failures.kernel_failure)."""
    with _learner_frames():
        try:
            return _run(kernel_name, body, grid, block, smem)
        except _Stopped as stopped:     # the watchdog's stop landed outside a kernel thread (between blocks)
            from .failures import kernel_failure
            failure = kernel_failure(stopped, None, kernel_name)
            raise failure.with_traceback(failure.__traceback__) from None


def _run(kernel_name: str, body, grid, block, smem: int) -> LaunchReport:
    grid, block = _as_dim3(grid, "grid"), _as_dim3(block, "block")
    threads_per_block = block[0] * block[1] * block[2]
    if threads_per_block > 1024:
        raise KernelError(f"launch block={block} has {threads_per_block} threads; a block holds at most 1024")
    report = LaunchReport(kernel_name, grid, block, trace=[] if SETTINGS.trace else None)
    launch = Launch(grid, block, report, SHARED_MEMORY_LIMIT)
    started = time.perf_counter()
    outer = _current[0]
    watchdog = _watchdog()
    watched = watchdog.watch(launch)
    try:
        for bz, by, bx in itertools.product(range(grid[2]), range(grid[1]), range(grid[0])):
            _run_block(launch, (bx, by, bz), body)
    finally:
        watchdog.unwatch(watched)
        launch.block = None
        _current[0] = outer
        report.seconds = time.perf_counter() - started
        report.threads = threads_per_block * grid[0] * grid[1] * grid[2]
        _LAST[:] = [report]
    return report


def _run_block(launch: Launch, block_idx: tuple, body):
    """Run a block's threads in order, each until it returns or waits (at a barrier or a warp collective);
    open the barrier or compute the collectives; repeat until every thread has returned.

    A thread that returns without waiting needs no stack of its own: one worker greenlet runs threads one
    after another, and a new worker takes over only when a thread waits (its worker then stays with it).
    A kernel without barriers runs in one greenlet per block; the order threads run in is the same."""
    bx, by, bz = launch.block_dim
    block = Block(block_idx, launch)
    scheduler = block.scheduler = greenlet.getcurrent()
    _SCHEDULER[0] = scheduler
    threads = block.threads = [Thread((tx, ty, tz), block_idx, linear, block)
                               for linear, (tz, ty, tx) in enumerate(itertools.product(range(bz), range(by), range(bx)))]
    block.started, block.cpu_started = time.perf_counter(), time.thread_time()
    launch.block = block
    unstarted = iter(threads)

    def worker():
        for thread in unstarted:
            thread.coroutine = greenlet.getcurrent()
            _current[0] = thread
            body()
            if "bulk_pending" in thread.__dict__:      # a TMA store (hopper.py) must have read shared memory
                from .hopper import check_exit
                check_exit(thread)
            _current[0] = None
            thread.finished = True
            if "passing" in block.__dict__:            # collectives its lanes pass without waiting (collectives.py)
                collectives.on_exit(thread)
            if thread.async_pending or thread.async_groups:   # a returning thread's cp.async copies still land
                commit_async(thread)
                complete_async(thread, keep=0)

    def switch(coroutine):
        try:
            coroutine.switch()
        except (Exception, _Stopped) as error:   # whatever the kernel raised: one KernelError naming its line
            from .failures import kernel_failure
            failure = kernel_failure(error, _current[0], launch.report.kernel)
            raise failure.with_traceback(failure.__traceback__) from None
        finally:
            _current[0] = None

    pool = _idle_workers()
    while threads[-1].coroutine is None:      # the first round: start every thread
        if pool:
            coroutine = pool.pop()
            coroutine.parent = scheduler
        else:
            coroutine = greenlet(_pooled_worker, parent=scheduler)
        _NEXT_JOB[0] = (worker, scheduler, pool)
        switch(coroutine)
    live = [t for t in threads if not t.finished]
    while live:
        if "passing_refused" in block.__dict__ and collectives.refused(block):
            raise collectives.refused(block)
        if not _release_warps(threads, live) and not _release_barrier(block, threads, live) and \
                not _release_conditions(live) and not _release_named(block, live):
            raise _deadlock(threads, live)
        # a thread that waits switches straight to the next thread of the queue (one switch, not two);
        # the scheduler is back when the last one waits or a thread returns (its worker then ends)
        queue = block.queue = [t for t in live if not t.waiting]
        block.position = 0
        while block.position < len(queue):
            _current[0] = queue[block.position]
            switch(queue[block.position].coroutine)
            block.position += 1
        block.queue = []
        live = [t for t in live if not t.finished]
    if "passing_refused" in block.__dict__ and collectives.refused(block):
        raise collectives.refused(block)
    if block.__dict__.get("passing"):       # a collective its lanes passed without waiting that some never did
        found = collectives.passing_story(block)
        if found is not None:
            raise collectives._failure(*found)
    if "hopper" in block.__dict__:          # TMA copies nobody waited for (hopper.py)
        from .hopper import check_block_end
        try:
            check_block_end(block)
        except KernelError as error:
            error.kernel = error.kernel or launch.report.kernel
            raise
    _count_bank_conflicts(block)
    block.threads = None                # no cycle (block -> threads -> block): the block is freed at once


# Starting and ending a greenlet costs tens of microseconds here (a new Python stack each), switching to one
# well under one: a worker greenlet does not end when its threads are done, it waits in a pool of this OS
# thread for the next block's threads.
_POOLS = threading.local()
_NEXT_JOB: list = [None]          # (the block's worker function, its scheduler, the pool) for a worker taking over


def _idle_workers() -> list:
    pool = getattr(_POOLS, "workers", None)
    if pool is None:
        pool = _POOLS.workers = []
    return pool


def _pooled_worker():
    while True:
        work, scheduler, pool = _NEXT_JOB[0]
        _NEXT_JOB[0] = None
        work()                          # runs threads until none is left to start (an error ends the greenlet)
        work = None                     # hold nothing of the launch while idle
        if len(pool) < 1024:
            pool.append(greenlet.getcurrent())
            scheduler.switch()
        else:
            return


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


def _release_barrier(block: Block, threads: list, live: list) -> bool:
    if all(t.waiting == "barrier" for t in live):
        if len(live) < len(threads) or len({t.where for t in live}) > 1:
            # a GPU may let this pass or hang; CUDA calls it undefined, so the simulator stops
            raise DeadlockError(_deadlock_story(threads, live))
        if "passing" in block.__dict__:
            collectives.on_release(block, live)
        block.epoch += 1
        block.syncs += 1
        for t in live:
            t.waiting = ""
            t.synced = block.syncs
        return True
    return False


def _deadlock(threads: list, live: list) -> DeadlockError:
    """The error for a block that can go no further: located at a warp collective some lanes never reach, when
    one waits (collectives.story), else the block's story."""
    found = collectives.story(threads, live) or collectives.passing_story(threads[0].block)
    if found is None:
        return DeadlockError(_deadlock_story(threads, live))
    problem, thread, where = found
    return collectives._failure(problem, thread, where)


def _deadlock_story(threads: list, live: list) -> str:
    waits: dict = {}
    for t in live:
        kind = {"barrier": "sync_threads", "until": t.request[0] if t.request else "",
                "named": f"named barrier {t.request[0]} (of {t.request[1]} threads)" if t.request else ""
                }.get(t.waiting, "a warp collective")
        waits.setdefault(f"{kind} at {site_text(t.where)}", []).append(t.linear)
    finished = len(threads) - len(live)
    parts = [f"threads {_ranges(ids)} wait at {what}" for what, ids in waits.items()]
    if finished:
        parts.append(f"{finished} threads have already returned")
    if any("mbarrier wait" in what for what in waits):
        return (f"block {live[0].block_idx} can never go on: " + "; ".join(parts) + ". Every waiting thread "
                "waits for an mbarrier phase that nothing left can complete: a wait with the wrong parity (a "
                "consumer starts at 0, a producer waiting on fresh empty barriers at 1, and both flip the bit "
                "each time the stage index wraps to 0), an arrival on the wrong stage's barrier (or none), or "
                "announced bytes (expect_tx) that no copy delivers. A GPU hangs here.")
    return (f"block {live[0].block_idx} can never go on: " + "; ".join(parts) +
            ". A barrier that not every thread of the block reaches (inside an `if`, or after some threads "
            "returned), or a warp collective some lanes skip, is undefined in CUDA: a GPU may hang or pass "
            "silently. The simulator stops here instead.")


def _ranges(ids: list) -> str:
    ids = sorted(ids)
    spans, start, previous = [], ids[0], ids[0]
    for i in ids[1:] + [None]:
        if i is not None and i == previous + 1:
            previous = i
            continue
        spans.append(str(start) if start == previous else f"{start}-{previous}")
        if i is not None:
            start = previous = i
    return ",".join(spans)


# --------------------------------------------------------------------------------------------- banks

def record_shared_request(thread: Thread, byte_addresses, width: int, site: tuple | None = None):
    """Note one shared-memory access of `width` bytes per address by this thread, for bank counting:
    the k-th access a thread issues at a kernel line (`site`, found when not given) meets the k-th access
    of the other lanes of its warp there (a warp instruction)."""
    if site is None:
        site = user_site(3)
    counts = thread.access_counts
    k = counts.get(site, 0)
    counts[site] = k + 1
    key = (thread.linear >> 5, site, k, width)
    lanes = thread.block.requests.get(key)
    if lanes is None:
        thread.block.requests[key] = [(thread.linear & 31, byte_addresses)]
    else:
        lanes.append((thread.linear & 31, byte_addresses))


def wavefronts(lane_addresses: list, width: int) -> int:
    """The passes 32 banks of 4 bytes need to serve one warp request: requests wider than 4 bytes are
    served a phase at a time (8 bytes: half a warp, 16 bytes: a quarter), and within a phase a bank serves
    one 4-byte word per pass (lanes reading the same word share it).

    >>> wavefronts([(lane, [4 * lane]) for lane in range(32)], 4)            # consecutive floats
    1
    >>> wavefronts([(lane, [4 * 32 * lane]) for lane in range(32)], 4)       # a column of a 32x32 float tile
    32
    """
    lanes_per_phase = max(1, min(WARP_SIZE, 128 // max(width, 4)))
    phases: dict = {}
    for lane, addresses in lane_addresses:
        words = phases.setdefault(lane // lanes_per_phase, set())
        for address in addresses:
            for byte in range(address - address % 4, address + width, 4):
                words.add(byte // 4)
    total = 0
    for words in phases.values():
        per_bank: dict = {}
        for word in words:
            per_bank[word % 32] = per_bank.get(word % 32, 0) + 1
        total += max(per_bank.values(), default=0)
    return total


_WAVEFRONTS: dict = {}   # (width, ((lane, addresses), ...)) -> (wavefronts, phases): blocks repeat patterns


def _count_bank_conflicts(block: Block):
    report = block.launch.report
    known = _WAVEFRONTS
    by_line = report.bank_conflicts_by_line
    for (warp, site, k, width), lanes in block.requests.items():
        key = (width, tuple([(lane, tuple(addresses)) for lane, addresses in lanes]))
        counted = known.get(key)
        if counted is None:
            passes = wavefronts(lanes, width)
            # one pass per phase is the best any request can do; every pass beyond that is a conflict
            phases = len({lane // max(1, min(WARP_SIZE, 128 // max(width, 4))) for lane, _ in lanes})
            if len(known) > 16384:
                known.clear()
            counted = known[key] = (passes, phases)
        passes, phases = counted
        report.shared_accesses += 1
        report.shared_wavefronts += passes
        where = site_text(site)
        by_line[where] = by_line.get(where, 0) + max(0, passes - phases)
    block.requests.clear()


# --------------------------------------------------------------------------------------------- trace

def record_trace(thread: Thread | None, tensor_name: str, offsets, kind: str):
    report_trace = _LAST_TRACE()
    if report_trace is None or thread is None:
        return
    if len(report_trace) >= SETTINGS.max_trace:
        return
    for offset in numpy.atleast_1d(offsets).tolist():
        report_trace.append((thread.block_idx, thread.thread_idx, tensor_name, offset, kind))


def _LAST_TRACE():
    thread = _current[0]
    if thread is None:
        return None
    return thread.block.launch.report.trace


# the warp and warpgroup collectives (collectives.py) wait in this scheduler and are released by it
from . import collectives  # noqa: E402
from .collectives import warp_collective  # noqa: E402,F401  (machine.warp_collective: the ops' entry point)

_release_warps = collectives.release
