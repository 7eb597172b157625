"""The operations that CuTeDSL's `cute.nvgpu` offers, as plain data: each knows the thread and value layouts
its atom has. `make_copy_atom` and `make_mma_atom` (in `cutekit.cute.atom`) turn them into atoms.

    CopyUniversalOp()                   a plain `dst = src`, one thread, `num_bits_per_copy` bits at a time
    MmaUniversalOp(dtype)               one thread, one fused multiply-add: the SIMT "MMA" of shape (1,1,1)
    cpasync.CopyG2SOp()                 cp.async, global to shared memory, one thread
    warp.LdMatrix8x8x16bOp(...)         ldmatrix: a warp loads 1, 2 or 4 8x8 matrices of 16-bit elements
    warp.MmaF16BF16Op(ab, acc, shape)   mma.sync m16n8k8 / m16n8k16 on a warp (tensor cores)
    warpgroup.make_smem_layout_atom     sm_90 shared-memory atoms (swizzled K- or MN-major) for wgmma and TMA
    warpgroup.MmaF16BF16Op(...)         wgmma 64xNx16 on a warpgroup (128 threads), operands in shared memory
    OperandMajorMode                    K or MN: which mode of an operand is contiguous
"""
from .common import CopyUniversalOp, MmaUniversalOp
from . import cpasync, tcgen05, warp, warpgroup
from .common_modes import OperandMajorMode
from .cpasync import make_tiled_tma_atom_A, make_tiled_tma_atom_B

__all__ = ["CopyUniversalOp", "MmaUniversalOp", "OperandMajorMode", "cpasync", "tcgen05", "warp", "warpgroup",
           "make_tiled_tma_atom_A", "make_tiled_tma_atom_B"]
