"""A one-warp kernel for the chapter 06 rule tests: ldmatrix (num_matrices) of one operand of an fp16 MMA atom
repeated over a warp tile, from a K-contiguous shared tile into the retiled MMA fragment (as the chapter's
kernels do), every register written out so that the copy survives compilation."""
import cutlass
import cutlass.cute as cute


@cute.kernel
def probe_kernel(mOut: cute.Tensor, tiled_mma: cute.TiledMma, s2r: cute.TiledCopy, operand: cutlass.Constexpr,
                 rows: cutlass.Constexpr, cols: cutlass.Constexpr):
    tidx, _, _ = cute.arch.thread_idx()
    sX = cutlass.memory.SmemAllocator().allocate_tensor(cutlass.Float16, cute.make_layout((rows, cols), stride=(cols, 1)),
                                                       16)
    thread_mma = tiled_mma.get_slice(tidx)
    if cutlass.const_expr(operand == "A"):
        fragment = tiled_mma.make_fragment_A(thread_mma.partition_A(sX))
    else:
        fragment = tiled_mma.make_fragment_B(thread_mma.partition_B(sX))
    thread_copy = s2r.get_slice(tidx)
    cute.copy(s2r, thread_copy.partition_S(sX), thread_copy.retile(fragment))
    for v in cutlass.range_constexpr(cute.size(fragment)):
        mOut[tidx, v] = fragment[v]


@cute.jit
def probe(mOut: cute.Tensor, operand: cutlass.Constexpr, tile_m: cutlass.Constexpr, tile_n: cutlass.Constexpr,
          tile_k: cutlass.Constexpr, num_matrices: cutlass.Constexpr):
    tiled_mma = cute.make_tiled_mma(cute.nvgpu.warp.MmaF16BF16Op(cutlass.Float16, cutlass.Float32, (16, 8, 16)),
                                    (1, 1, 1), permutation_mnk=(tile_m, tile_n, tile_k))
    atom = cute.make_copy_atom(cute.nvgpu.warp.LdMatrix8x8x16bOp(False, num_matrices), cutlass.Float16)
    s2r = (cute.make_tiled_copy_A if operand == "A" else cute.make_tiled_copy_B)(atom, tiled_mma)
    probe_kernel(mOut, tiled_mma, s2r, operand, tile_m if operand == "A" else tile_n, tile_k).launch(
        grid=[1, 1, 1], block=[32, 1, 1])
