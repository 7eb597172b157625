"""Kernels that never finish, one per STUCK entry: imported after `cutekit.use("sim")` they run on the simulator,
and tests/sim/test_no_progress.py checks that each is stopped, named by its line, block and thread."""
import cutlass
import cutlass.cute as cute

STUCK = ["none"]


@cute.kernel
def stuck_kernel(gA: cute.Tensor):
    stuck = STUCK[0]
    tidx, _, _ = cute.arch.thread_idx()
    smem = cutlass.memory.SmemAllocator()
    flag = smem.allocate_tensor(cutlass.Int32, cute.make_layout(1), 4)
    if tidx == 0:
        flag[0] = 0
    cute.arch.sync_threads()
    if stuck == "while_true":
        while True:
            gA[tidx] = gA[tidx] + 1.0
    elif stuck == "spin_on_a_shared_flag":            # thread 0 waits for thread 1, which runs only after it
        if tidx == 0:
            while flag[0] == 0:
                pass
        if tidx == 1:
            flag[0] = 1
    elif stuck == "barrier_loop_without_its_counter":
        k = 0
        while k < 4:
            gA[tidx] = gA[tidx] + 1.0
            cute.arch.sync_threads()
    elif stuck == "while_true_that_catches_everything":
        while True:
            try:
                gA[tidx] = gA[tidx] + 1.0
            except Exception:
                pass
    else:
        gA[tidx] = gA[tidx] + 1.0


@cute.jit
def run_stuck(mA: cute.Tensor):
    stuck_kernel(mA).launch(grid=[2, 1, 1], block=[32, 1, 1])


# the line each stuck kernel is stopped on (one of its loop's lines)
LOOP_LINES = {
    "while_true": ("while True:", "gA[tidx] = gA[tidx] + 1.0"),
    "spin_on_a_shared_flag": ("while flag[0] == 0:", "pass"),
    "barrier_loop_without_its_counter": ("while k < 4:", "gA[tidx] = gA[tidx] + 1.0", "cute.arch.sync_threads()"),
    "while_true_that_catches_everything": ("while True:", "try:", "gA[tidx] = gA[tidx] + 1.0", "except Exception:",
                                           "pass"),
}
