"""A kernel that makes no progress (a loop that never ends, a spin-wait on a flag no thread sets in time) is stopped
after `block_seconds` with one NoProgressError naming the line, the block and the thread; the simulator runs on
afterwards, and the course's largest kernels finish well inside the limit. The stuck kernels run with a short limit
(to keep the suite short: 1 s); tests/checks/test_stuck_answers.py runs one with the default 10 s through a check."""
import importlib
import os
import time

import numpy
import pytest

import cutekit
from cutekit.sim import KernelError, NoProgressError, configure, machine

from .test_kernel_errors import CUTEKIT_FRAME, _frames

LIMIT = 1.0


@pytest.fixture(scope="module")
def stuck():
    with cutekit.using("sim", fresh=("tests.sim.stuck_kernels",)):
        yield importlib.import_module("tests.sim.stuck_kernels")


@pytest.fixture
def short_limit():
    before = machine.SETTINGS.block_seconds
    configure(block_seconds=LIMIT)
    yield LIMIT
    configure(block_seconds=before)


def _run(stuck, which):
    from cutlass.cute.runtime import from_dlpack
    stuck.STUCK[0] = which
    a = numpy.zeros(32, numpy.float32)
    started = time.process_time()       # this process's processor time: other work on the machine does not count
    try:
        stuck.run_stuck(from_dlpack(a))
    except KernelError as error:
        return error, time.process_time() - started, a
    return None, time.process_time() - started, a


@pytest.mark.parametrize("which, thread, words", [
    ("while_true", (0, 0, 0), ["this thread runs on without reaching a barrier", "`while True:`"]),
    # stopped by its bank records (spin-wait named) or, on a loaded machine, by the time limit first (the
    # message then names threads waiting for a value no thread writes): either way the spinning line
    ("spin_on_a_shared_flag", (0, 0, 0), ["`while flag[0] == 0:`",
                                          ("spin-wait for a value another thread writes",
                                           "threads waiting for a value no thread writes")]),
    ("barrier_loop_without_its_counter", None, ["block (0, 0, 0) has run for ", "s without finishing",
                                                "meeting at barriers", "is its counter advanced?"]),
    ("while_true_that_catches_everything", (0, 0, 0), ["this thread runs on"]),
])
def test_a_kernel_that_makes_no_progress_is_stopped_naming_its_line_block_and_thread(stuck, short_limit, which,
                                                                                     thread, words):
    error, seconds, _ = _run(stuck, which)
    assert isinstance(error, NoProgressError), f"{type(error).__module__}.{type(error).__qualname__}: {error}"
    # the watchdog looks four times a second, and stops a block once half the limit was spent on the CPU
    assert seconds < LIMIT + 3, seconds
    message = str(error)
    assert "\n" not in message and error.block == (0, 0, 0) and "of block (0, 0, 0) in stuck_kernel" in message
    if thread is not None:
        assert error.thread == thread
    assert "stuck_kernels.py, line " in message and error.line in stuck.LOOP_LINES[which], message
    assert f"configure(block_seconds=...) (now {LIMIT:g} s" in message
    for word in words:          # a tuple: one of its phrasings
        assert any(w in message for w in ((word,) if isinstance(word, str) else word)), message
    if "spin-wait for a value another thread writes" in message:
        assert "threads 1-31 of the block wait for their turn" in message, message
        assert "wait with cute.arch.sync_threads() instead" in message, message
    assert not [f for f in _frames(error) if CUTEKIT_FRAME in f]
    shown = error._render_traceback_()
    assert shown[0].startswith(f"NoProgressError: thread {error.thread} of block (0, 0, 0)")


def test_the_simulator_runs_on_after_a_stop(stuck, short_limit):
    _run(stuck, "while_true")
    error, _, a = _run(stuck, "none")
    assert error is None and a.tolist() == [2.0] * 32          # two blocks, each adds 1 to every element


def test_a_block_is_stopped_only_when_the_limit_is_set(stuck):
    assert machine.SETTINGS.block_seconds == 10.0                # the default
    for wrong in (0, -1, True, "10"):
        with pytest.raises(ValueError, match="block_seconds"):
            configure(block_seconds=wrong)
    configure(block_seconds=None)
    try:
        assert machine.SETTINGS.block_seconds is None
    finally:
        configure(block_seconds=10.0)


def test_the_course_largest_block_finishes_well_inside_the_limit(stuck):
    """The SIMT sgemm's 128x128 tile at K = 64 (one block of 256 threads) is the largest block any course notebook
    or benchmark runs: about 2.5 s of CPU here, where a block is stopped after 10 s with 5 of them on the CPU."""
    import torch
    from cutlass.cute.runtime import from_dlpack
    with cutekit.using("sim", fresh=("benchmarks.kernels",)):
        sgemm_simt = importlib.import_module("benchmarks.kernels.sgemm_simt")
        a_t, b, c = torch.randn(64, 128), torch.randn(64, 128), torch.zeros(128, 128)
        started = time.process_time()
        sgemm_simt.sgemm(from_dlpack(a_t.T, assumed_align=16), from_dlpack(b.T, assumed_align=16),
                         from_dlpack(c, assumed_align=16))
        cpu = time.process_time() - started
    torch.testing.assert_close(c, a_t.T @ b, rtol=1e-5, atol=1e-4)
    assert machine.last_launch().grid == (1, 1, 1) and cpu < machine.SETTINGS.block_seconds / 2, cpu


def test_a_forked_child_gets_its_own_watchdog(stuck, short_limit):
    """A check runs kernels in a forked child, where the parent's watchdog thread does not exist."""
    from cutekit.checks.sandbox import run_isolated
    _run(stuck, "none")                                          # the parent's watchdog is running

    def in_child():
        error, seconds, _ = _run(stuck, "while_true")
        return type(error).__name__, seconds, os.getpid()
    outcome = run_isolated(in_child, timeout=30)
    assert outcome.ok, outcome.error
    name, seconds, pid = outcome.value
    assert name == "NoProgressError" and seconds < LIMIT + 3 and pid != os.getpid()
