"""cutekit.sim: a CPU simulator that runs CuTeDSL kernels unchanged, thread by thread.

`cutekit.use("sim")` puts its `cutlass` modules in place of CuTeDSL's; then the usual
`import cutlass`, `import cutlass.cute as cute` and `from cutlass.cute.runtime import from_dlpack` give the
simulator, and `kernel(...).launch(grid=..., block=...)` runs every CUDA thread on the CPU with barrier
and warp semantics (see `machine`). After a launch, `last_launch()` reports threads, time, printf output,
shared-memory bank conflicts and races. Whatever goes wrong in a kernel leaves the launch as one KernelError
naming the learner's line, the block and the thread, and what to write instead (`machine.failures`); a block
that makes no progress for `block_seconds` (10 s) is stopped the same way (NoProgressError).

The simulator is a house of floors; each imports only the floors below it (tests/test_architecture.py holds
this, and that nothing imports in a circle). The machine (`machine/`: threads, the scheduler, the watchdog,
warp collectives' meeting rules, the errors and what they tell the learner) is at the bottom; on it, memory
(`memory/`: storage and tensors with every access checked for bounds and races, shared memory, DSL numbers, the
vectorized launch); on that, the operations a kernel calls (`ops/`: indices, barriers, shuffles and reductions,
`cute.copy` and `cute.gemm`, mbarriers and pipelines); then one room per architecture (`arch/sm80.py`,
`arch/sm90.py`, `arch/sm100.py`), which adds its instructions by filling in the operations' tables, so a new architecture is a
new room and no floor below changes. The top-level modules are the face the learner meets: `dsl` builds the
`cutlass` modules `cutekit.use("sim")` installs (with `compat`, `host`, `constexpr` and `dynamic`), and
`mbarriers` is chapter 08's mbarrier pipeline on paper, driving the same `MBarrier` the kernels count on.
"""
from .machine import (DeadlockError, KernelError, LaunchReport, NoProgressError, OutOfBoundsError, RaceError,
                      configure, last_launch, wavefronts)
from .machine.failures import CoordinateError
from .ops.operands import OperandError
from .arch.sm90 import HopperError
from .arch.sm100 import BlackwellError

__all__ = ["BlackwellError", "CoordinateError", "DeadlockError", "HopperError", "KernelError", "LaunchReport", "NoProgressError",
           "OperandError", "OutOfBoundsError", "RaceError", "configure", "last_launch", "wavefronts"]
