"""The scheduler: a launch's blocks one after another, each block's threads in turns until all have returned.

`run` is the launch (machine.threads holds the threads, blocks and waits it schedules); a thread that waits
hands over to the next, and when no thread can go on, the scheduler opens the barrier, computes the warp
collectives whose lanes have all come (collectives.py), releases named barriers and waits whose condition
holds, or stops the block with the deadlock it found. The watchdog (watchdog.py) stops a block that runs out
of time.
"""
from __future__ import annotations

import itertools
import threading
import time

from greenlet import greenlet

from . import collectives
from .errors import DeadlockError, KernelError, _Stopped
from .failures import LEARNER_FRAMES, kernel_failure
from .threads import (SETTINGS, SHARED_MEMORY_LIMIT, Block, Launch, LaunchReport, Thread, _LAST, _SCHEDULER,
                      _as_dim3, _count_bank_conflicts, _current, commit_async, complete_async, site_text, _ranges)
from .watchdog import _watchdog

# What an architecture's room adds to the end of a thread and of a block, filled in when the room is imported
# (arch/sm90.py: a TMA store must have read shared memory before its thread exits; TMA copies nobody waited
# for): (the key the room's state leaves in thread.__dict__ or block.__dict__, the check).
THREAD_EXIT_CHECKS: list = []
BLOCK_END_CHECKS: list = []


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


def _release_conditions(live: list) -> bool:
    released = False
    for t in live:
        if t.waiting == "until" and t.request[1]():
            t.waiting = ""
            released = True
    return released


def run(kernel_name: str, body, grid, block, smem: int = 0) -> LaunchReport:
    """Run `body()` as every thread of every block; returns the launch report. A failure leaves as one
    KernelError with the learner's frames only (failures.kernel_failure)."""
    with LEARNER_FRAMES:
        try:
            return _run(kernel_name, body, grid, block, smem)
        except _Stopped as stopped:     # the watchdog's stop landed outside a kernel thread (between blocks)
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
            for key, check in THREAD_EXIT_CHECKS:      # a TMA store (arch/sm90.py) must have read shared memory
                if key in thread.__dict__:
                    check(thread)
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
    for key, check in BLOCK_END_CHECKS:     # TMA copies nobody waited for (arch/sm90.py)
        if key in block.__dict__:
            try:
                check(block)
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


# the warp and warpgroup collectives (collectives.py) wait in this scheduler and are released by it
_release_warps = collectives.release
