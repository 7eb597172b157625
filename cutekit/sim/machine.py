"""The simulated GPU: a grid of blocks, each block's threads run one after another on the CPU.

CUDA's per-thread semantics, without one OS thread per CUDA thread: every CUDA thread of a block is a
greenlet (a coroutine with its own stack, switched in user space in well under a microsecond). A thread
runs until it finishes or waits: at `sync_threads` (the block barrier) or at a warp-collective operation
(shuffle, reduction, ldmatrix, mma.sync). When every live thread of the block waits at the barrier, the
barrier opens; when every live lane of a warp waits at the same collective, the collective is computed for
the 32 lanes at once and they go on. Blocks run one after another (a GPU gives no order between blocks
either, and no barrier spans them).

What no GPU tells you, the simulator does: an access outside a tensor stops the launch naming the block,
thread, tensor and coordinate; a shared-memory race (a value read or overwritten by another thread since
the last barrier) stops it too; shared-memory bank conflicts are counted per warp access; a trace can
record which thread touched which element.
"""
from __future__ import annotations

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


# --------------------------------------------------------------------------------------------- settings

@dataclass
class Settings:
    """What the simulator checks and records (change with `cutekit.sim.configure(...)`).

    races: "error" stops at the first shared-memory race, "warn" counts them (`last_launch().races`),
           "off" skips the check.
    trace: record (block, thread, tensor, offset, read/write) for every global and shared access.
    max_trace: stop recording after this many accesses (a trace of a large launch is large).
    """
    races: str = "error"
    trace: bool = False
    max_trace: int = 1_000_000


SETTINGS = Settings()


def configure(*, races: str | None = None, trace: bool | None = None, max_trace: int | None = None) -> Settings:
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
    shared: list = field(default_factory=list)
    shared_bytes: int = 0
    requests: dict = field(default_factory=dict)    # (warp, site, k) -> [(lane, byte address, width)]
    scheduler: object = None        # the greenlet running _run_block
    queue: list = field(default_factory=list)       # the threads the scheduler resumes this round
    position: int = 0               # which of them runs now: a waiting thread switches to the next


@dataclass(eq=False)
class Launch:
    grid: tuple
    block_dim: tuple
    report: LaunchReport
    smem_limit: int


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


def warp_collective(key, resolve, payload):
    """Wait for every live lane of this warp to reach a collective with the same `key`, then
    `resolve({lane: payload})` computes every lane's reply at once; returns this lane's reply."""
    thread = require_thread("a warp-collective operation")
    thread.request = (key, resolve, payload)
    _wait(thread, "warp")
    reply, thread.reply, thread.request = thread.reply, None, None
    return reply


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
        return _run(kernel_name, body, grid, block, smem)


def _run(kernel_name: str, body, grid, block, smem: int) -> LaunchReport:
    grid, block = _as_dim3(grid, "grid"), _as_dim3(block, "block")
    threads_per_block = block[0] * block[1] * block[2]
    if threads_per_block > 1024:
        raise KernelError(f"launch block={block} has {threads_per_block} threads; a block holds at most 1024")
    report = LaunchReport(kernel_name, grid, block, trace=[] if SETTINGS.trace else None)
    launch = Launch(grid, block, report, SHARED_MEMORY_LIMIT)
    started = time.perf_counter()
    outer = _current[0]
    try:
        for bz, by, bx in itertools.product(range(grid[2]), range(grid[1]), range(grid[0])):
            _run_block(launch, (bx, by, bz), body)
    finally:
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
    threads = [Thread((tx, ty, tz), block_idx, linear, block)
               for linear, (tz, ty, tx) in enumerate(itertools.product(range(bz), range(by), range(bx)))]
    unstarted = iter(threads)

    def worker():
        for thread in unstarted:
            thread.coroutine = greenlet.getcurrent()
            _current[0] = thread
            body()
            _current[0] = None
            thread.finished = True
            if thread.async_pending or thread.async_groups:   # a returning thread's cp.async copies still land
                commit_async(thread)
                complete_async(thread, keep=0)

    def switch(coroutine):
        try:
            coroutine.switch()
        except Exception as error:      # whatever the kernel raised: one KernelError naming the learner's line
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
        if not _release_warps(live) and not _release_barrier(block, threads, live) and \
                not _release_conditions(live):
            raise DeadlockError(_deadlock_story(threads, live))
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
    _count_bank_conflicts(block)


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


def _release_barrier(block: Block, threads: list, live: list) -> bool:
    if all(t.waiting == "barrier" for t in live):
        if len(live) < len(threads) or len({t.where for t in live}) > 1:
            # a GPU may let this pass or hang; CUDA calls it undefined, so the simulator stops
            raise DeadlockError(_deadlock_story(threads, live))
        block.epoch += 1
        for t in live:
            t.waiting = ""
        return True
    return False


def _release_warps(live: list) -> bool:
    released = False
    by_warp: dict = {}
    for t in live:
        by_warp.setdefault(t.warp, []).append(t)
    for warp, lanes in by_warp.items():
        if not all(t.waiting == "warp" for t in lanes):
            continue
        keys = {t.request[0] for t in lanes}
        if len(keys) != 1:
            where = sorted({f"{t.request[0]} at {site_text(t.where)}" for t in lanes})
            raise DeadlockError(f"block {lanes[0].block_idx}, warp {warp}: its lanes wait at different warp "
                                f"collectives ({'; '.join(where)}); every lane must reach the same one")
        resolve = lanes[0].request[1]
        replies = resolve({t.lane: t.request[2] for t in lanes})
        for t in lanes:
            t.reply = replies.get(t.lane)
            t.waiting = ""
        released = True
    return released


def _deadlock_story(threads: list, live: list) -> str:
    waits: dict = {}
    for t in live:
        kind = {"barrier": "sync_threads", "until": t.request[0] if t.request else ""}.get(t.waiting, "a warp collective")
        waits.setdefault(f"{kind} at {site_text(t.where)}", []).append(t.linear)
    finished = len(threads) - len(live)
    parts = [f"threads {_ranges(ids)} wait at {what}" for what, ids in waits.items()]
    if finished:
        parts.append(f"{finished} threads have already returned")
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
