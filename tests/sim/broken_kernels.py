"""Chapter 04's kernels with the mistakes learners make, one per BROKEN entry (the first is right). Imported
after `cutekit.use("sim")` they run on the simulator; tests/sim/test_kernel_errors.py checks that each mistake
comes back as one KernelError naming the line, the block, the thread and the fix."""
import numpy

import cutlass
import cutlass.cute as cute

MISTAKE = ["none"]


@cute.kernel
def add_kernel(gA: cute.Tensor, gB: cute.Tensor, gC: cute.Tensor):
    mistake = MISTAKE[0]
    bidx, _, _ = cute.arch.block_idx()
    if mistake == "thread_idx_used_as_a_number":
        tidx = cute.arch.thread_idx()
        gC[bidx, tidx] = gA[bidx, tidx] + gB[bidx, tidx]
    elif mistake == "thread_idx_unpacked_into_one_name":
        tidx, = cute.arch.thread_idx()
        gC[bidx, tidx] = gA[bidx, tidx] + gB[bidx, tidx]
    elif mistake == "thread_idx_times_two":
        tidx = cute.arch.thread_idx()
        gC[bidx, tidx * 2] = gA[bidx, 0]
    elif mistake == "float_index":
        tidx, _, _ = cute.arch.thread_idx()
        gC[bidx, tidx] = gA[1.0]
    elif mistake == "float_in_a_coordinate":
        tidx, _, _ = cute.arch.thread_idx()
        gC[(bidx, tidx / 2)] = gA[bidx, tidx]
    elif mistake == "numpy_float_index":
        tidx, _, _ = cute.arch.thread_idx()
        gC[bidx, numpy.float32(tidx)] = gA[bidx, tidx]
    elif mistake == "one_past_the_end":
        tidx, _, _ = cute.arch.thread_idx()
        gC[bidx, tidx + 1] = gA[bidx, tidx] + gB[bidx, tidx]
    elif mistake == "division_by_zero":
        tidx, _, _ = cute.arch.thread_idx()
        scale = 1 // (tidx - tidx)
        gC[bidx, tidx] = gA[bidx, tidx] * scale
    elif mistake == "float_in_a_layout_call":
        tidx, _, _ = cute.arch.thread_idx()
        column = cute.make_layout(8)(tidx * 1.0)
        gC[bidx, column] = gA[bidx, tidx]
    elif mistake == "integer_like_indices":        # a bool and a NumPy integer: integers to CuTeDSL too
        tidx, _, _ = cute.arch.thread_idx()
        gC[bidx, numpy.int64(tidx)] = gA[bidx, tidx] + gB[bidx, tidx] + gA[True, 0] * 0
    else:
        tidx, _, _ = cute.arch.thread_idx()
        gC[bidx, tidx] = gA[bidx, tidx] + gB[bidx, tidx]


@cute.jit
def add(mA: cute.Tensor, mB: cute.Tensor, mC: cute.Tensor):
    add_kernel(mA, mB, mC).launch(grid=[2, 1, 1], block=[8, 1, 1])


@cute.kernel
def owner_kernel(mOwner: cute.Tensor):
    mistake = MISTAKE[0]
    bx, by, _ = cute.arch.block_idx()
    tile = cute.local_tile(mOwner, (4, 4), (bx, by))
    if mistake == "thread_idx_in_local_partition":
        tidx = cute.arch.thread_idx()
        mine = cute.local_partition(tile, cute.make_layout((2, 2)), tidx)
    elif mistake == "float_in_local_partition":
        tidx, _, _ = cute.arch.thread_idx()
        mine = cute.local_partition(tile, cute.make_layout((2, 2)), tidx / 1)
    elif mistake == "float_in_local_tile":
        tidx, _, _ = cute.arch.thread_idx()
        mine = cute.local_partition(cute.local_tile(mOwner, (4, 4), (bx / 1, by)), cute.make_layout((2, 2)), tidx)
    else:
        tidx, _, _ = cute.arch.thread_idx()
        mine = cute.local_partition(tile, cute.make_layout((2, 2)), tidx)
    for i in cutlass.range_constexpr(cute.size(mine)):
        mine[i] = (bx + 2 * by) * 10 + tidx


@cute.jit
def record_owners(mOwner: cute.Tensor):
    owner_kernel(mOwner).launch(grid=[2, 2, 1], block=[4, 1, 1])


@cute.kernel
def tiled_copy_kernel(gA: cute.Tensor, gC: cute.Tensor, tiled_copy: cute.TiledCopy):
    tidx = cute.arch.thread_idx()
    thread = tiled_copy.get_slice(tidx)
    cute.copy(tiled_copy, thread.partition_S(gA), thread.partition_D(gC))


@cute.jit
def copy_with_thread_idx_tuple(mA: cute.Tensor, mC: cute.Tensor):
    atom = cute.make_copy_atom(cute.nvgpu.CopyUniversalOp(), mA.element_type)
    tiled_copy = cute.make_tiled_copy_tv(atom, cute.make_layout(8), cute.make_layout(1))
    tiled_copy_kernel(mA, mC, tiled_copy).launch(grid=[1, 1, 1], block=[8, 1, 1])
