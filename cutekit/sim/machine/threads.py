"""The simulated GPU's threads, blocks and launches, and how a thread waits.

CUDA's per-thread semantics, without one OS thread per CUDA thread: every CUDA thread of a block is a
greenlet (a coroutine with its own stack, switched in user space in well under a microsecond). A thread
runs until it finishes or waits: at `sync_threads` (the block barrier) or at a warp-collective operation
(shuffle, vote, reduction, ldmatrix, mma.sync, a warpgroup's wgmma operations). When every live thread of the
block waits at the barrier, the barrier opens; when every lane a collective needs waits at it, at the same line,
it is computed for them at once and they go on (collectives.py says which lanes each needs, as the PTX ISA
does, and names the lanes that never come). Blocks run one after another (scheduler.py; a GPU gives no order
between blocks either, and no barrier spans them).

What no GPU tells you, the simulator does: an access outside a tensor stops the launch naming the block,
thread, tensor and coordinate; a shared-memory race (a value read or overwritten by another thread since
the last barrier) stops it too; shared-memory bank conflicts are counted per warp access (here); a trace can
record which thread touched which element (here); a block that makes no progress (a loop that never ends, a
thread polling memory for a value another thread writes) is stopped after `block_seconds` and named
(watchdog.py).
"""
from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field

import numpy

from .errors import (DeadlockError, KernelError, NoProgressError, OutOfBoundsError, RaceError,  # noqa: F401
                     _Stopped)   # (the machine's errors, as threads.X too)

WARP_SIZE = 32
SHARED_MEMORY_LIMIT = 227 * 1024   # bytes per block on sm_90 (sm_80: 163 KB); 48 KB without an opt-in

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

_OWN_FILES = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))   # cutekit/sim


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


def wait_until(condition, what: str):
    """Wait until `condition()` holds, made true by other threads (an mbarrier's phase completing): the
    scheduler resumes the thread in the first round that finds it true."""
    thread = require_thread(what)
    if condition():
        return
    thread.request = (what, condition)
    _wait(thread, "until")
    thread.request = None


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



# --------------------------------------------------------------------------------------------- notices

_SAID: set = set()


def notice(key: str, message: str):
    """Print `message` (on stderr) the first time `key` is met in this process; silent after."""
    if key in _SAID:
        return
    _SAID.add(key)
    print(f"cutekit simulator: {message}", file=sys.stderr, flush=True)
