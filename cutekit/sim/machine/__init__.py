"""The machine floor: threads, blocks and the scheduler that runs them, the watchdog, and the errors.

Modules, each importing only the ones before it: errors (KernelError and its kinds, the learner's frames),
threads (threads, blocks, launches, waits, bank counting, settings), watchdog (a block that makes no progress),
collectives (which lanes a warp-synchronous instruction waits for), failures (what the learner is told),
tracing (when prints come out), scheduler (a launch's blocks and threads in turns).
"""
from .errors import DeadlockError, KernelError, NoProgressError, OutOfBoundsError, RaceError
from .threads import (SETTINGS, WARP_SIZE, LaunchReport, Settings, configure, current, last_launch,
                      require_thread, wavefronts)
from .watchdog import STOPPED
from .scheduler import run

__all__ = ["DeadlockError", "KernelError", "LaunchReport", "NoProgressError", "OutOfBoundsError", "RaceError",
           "SETTINGS", "STOPPED", "Settings", "WARP_SIZE", "configure", "current", "last_launch",
           "require_thread", "run", "wavefronts"]
