"""Chapter 06's S2R kernel (one k-block of A through ldmatrix.x4 into the MMA's registers), with the copy's
destination either the retiled view (right) or the MMA fragment itself (CuTeDSL refuses to compile it).
Imported after `cutekit.use("sim")` it runs on the simulator; tests.sim.cutedsl_operands_oracle compiles it
with real CuTeDSL."""
import cutlass
import cutlass.cute as cute

VARIANT = ["retiled"]       # or "plain": the destination is tCrA, not its retiled view


@cute.kernel
def s2r_kernel(mA: cute.Tensor, mOut: cute.Tensor, tiled_mma: cute.TiledMma, s2r: cute.TiledCopy,
               k_block: cutlass.Constexpr):
    tidx, _, _ = cute.arch.thread_idx()
    sA = cutlass.memory.SmemAllocator().allocate_tensor(cutlass.Float16, cute.make_layout((16, 32), stride=(32, 1)),
                                                        16)
    for i in cutlass.range_constexpr(16):
        sA[tidx * 16 + i] = mA[tidx * 16 + i]
    cute.arch.sync_threads()
    tCrA = tiled_mma.make_fragment_A(tiled_mma.get_slice(tidx).partition_A(sA))
    tCrA.fill(-1.0)
    thread_copy = s2r.get_slice(tidx)
    tXsA = thread_copy.partition_S(sA)
    tXrA = thread_copy.retile(tCrA)
    if cutlass.const_expr(VARIANT[0] == "retiled"):
        cute.copy(s2r, tXsA[None, None, k_block], tXrA[None, None, k_block])
    else:
        cute.copy(s2r, tXsA[None, None, k_block], tCrA[None, None, k_block])
    for v in cutlass.range_constexpr(cute.size(tCrA, mode=[0])):
        mOut[tidx, v] = tCrA[v, 0, k_block]


@cute.jit
def load_k_block(mA: cute.Tensor, mOut: cute.Tensor, k_block: cutlass.Constexpr):
    tiled_mma = cute.make_tiled_mma(cute.nvgpu.warp.MmaF16BF16Op(cutlass.Float16, cutlass.Float32, (16, 8, 16)))
    s2r = cute.make_tiled_copy_A(cute.make_copy_atom(cute.nvgpu.warp.LdMatrix8x8x16bOp(False, 4),
                                                     cutlass.Float16), tiled_mma)
    s2r_kernel(mA, mOut, tiled_mma, s2r, k_block).launch(grid=[1, 1, 1], block=[32, 1, 1])
