"""cutekit.sim: a CPU simulator that runs CuTeDSL kernels unchanged, thread by thread.

`cutekit.use("sim")` puts its `cutlass` modules in place of CuTeDSL's; then the usual
`import cutlass`, `import cutlass.cute as cute` and `from cutlass.cute.runtime import from_dlpack` give the
simulator, and `kernel(...).launch(grid=..., block=...)` runs every CUDA thread on the CPU with barrier
and warp semantics (see `machine`). After a launch, `last_launch()` reports threads, time, printf output,
shared-memory bank conflicts and races. Whatever goes wrong in a kernel leaves the launch as one KernelError
naming the learner's line, the block and the thread, and what to write instead (`failures`); a block that makes
no progress for `block_seconds` (10 s) is stopped the same way (NoProgressError).
"""
from .machine import (DeadlockError, KernelError, LaunchReport, NoProgressError, OutOfBoundsError, RaceError,
                      configure, last_launch, wavefronts)
from .failures import CoordinateError
from .operands import OperandError

__all__ = ["CoordinateError", "DeadlockError", "KernelError", "LaunchReport", "NoProgressError", "OperandError",
           "OutOfBoundsError", "RaceError", "configure", "last_launch", "wavefronts"]
