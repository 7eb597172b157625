"""tcgen05 (sm_100, Blackwell): the MMA that one thread issues for a CTA or a CTA pair, its accumulator in
tensor memory (TMEM), and the TMEM loads that bring the accumulator to registers, as CuTeDSL 4.8.1's
`cutlass.cute.nvgpu.tcgen05` builds them on the host.

    MmaF16BF16Op, MmaTF32Op, MmaI8Op, MmaF8F6F4Op   the MMA kinds (CtaGroup.ONE: M 64/128; TWO: M 128/256)
    CtaGroup, OperandSource, Field                 the MMA's parameters
    SmemLayoutAtomKind, make_smem_layout_atom      shared-memory atoms for A and B (and the epilogue)
    tile_to_mma_shape                              an atom tiled to ((MMA_M,MMA_K),M_MMAs,K_MMAs,STAGE)
    Ld32x32bOp, Ld16x32bx2Op, Ld16x64bOp, Ld16x128bOp, Ld16x256bOp, Repetition, Pack
                                                   TMEM -> register loads (tcgen05.ld); St...Op the stores
    make_tmem_copy, find_tmem_tensor_col_offset    a TMEM load tiled over a warpgroup; TMEM columns used
"""
from .mma import CtaGroup, Field, MmaF8F6F4Op, MmaF16BF16Op, MmaI8Op, MmaTF32Op, OperandSource, SmemLayoutAtomKind
from .copy import (Ld16x32bx2Op, Ld16x64bOp, Ld16x128bOp, Ld16x256bOp, Ld32x32bOp, Pack, Repetition,
                   St16x32bx2Op, St16x64bOp, St16x128bOp, St16x256bOp, St32x32bOp, Unpack, find_tmem_tensor_col_offset,
                   get_tmem_copy_properties, is_tmem_load, is_tmem_store, make_tmem_copy)
from .helpers import make_smem_layout_atom, tile_to_mma_shape

__all__ = ["CtaGroup", "Field", "MmaF8F6F4Op", "MmaF16BF16Op", "MmaI8Op", "MmaTF32Op", "OperandSource",
           "SmemLayoutAtomKind", "Ld16x32bx2Op", "Ld16x64bOp", "Ld16x128bOp", "Ld16x256bOp", "Ld32x32bOp", "Pack",
           "Repetition", "Unpack", "St16x32bx2Op", "St16x64bOp", "St16x128bOp", "St16x256bOp", "St32x32bOp",
           "find_tmem_tensor_col_offset", "get_tmem_copy_properties", "is_tmem_load", "is_tmem_store",
           "make_tmem_copy", "make_smem_layout_atom", "tile_to_mma_shape"]
