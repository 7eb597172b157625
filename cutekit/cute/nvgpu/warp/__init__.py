"""Warp-wide operations: ldmatrix (shared memory to registers) and mma.sync (tensor cores), sm_75/sm_80;
stmatrix (registers to shared memory), sm_90; stmatrix m16n8 of bytes, sm_100."""
from .copy import LdMatrix8x8x16bOp, StMatrix8x8x16bOp, StMatrix16x8x8bOp
from .mma import MmaF16BF16Op, MmaTF32Op

__all__ = ["LdMatrix8x8x16bOp", "StMatrix8x8x16bOp", "StMatrix16x8x8bOp", "MmaF16BF16Op", "MmaTF32Op"]
