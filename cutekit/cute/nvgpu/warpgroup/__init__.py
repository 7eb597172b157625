"""Warpgroup operations of sm_90 (Hopper), as plain data: the shared-memory layout atoms that wgmma and TMA
read, and the warpgroup MMA (`wgmma.mma_async`) as a TiledMMA atom.

    SmemLayoutAtomKind                  K_INTER, K_SW32, K_SW64, K_SW128 and the MN_ ones, as in CuTeDSL
    make_smem_layout_atom(kind, dtype)  the atom: Swizzle o 0 o (rows, columns) in elements, e.g. for fp16
                                        K_SW128 is S<3,4,3> o 0 o (8,64):(64,1)
    MmaF16BF16Op(ab, acc, shape, a_src, a_major, b_major)
                                        64xNx16 on 128 threads; A and B read from shared memory (a_src SMEM),
                                        each K- or MN-major (cute.nvgpu.OperandMajorMode)

The swizzle of an atom acts on *byte* addresses (CuTeDSL gives it to the shared-memory pointer): S<B,4,3>
XORs B bits of the 128-byte row index (offset bits 7..) into the 16-byte chunk index (bits 4..), which is the
pattern the hardware knows as SWIZZLE_32B / 64B / 128B (B = 1, 2, 3; INTER is B = 0, no swizzle). The outer
layout is the atom in elements: 8 rows of 16, 32, 64 or 128 bytes, K contiguous (K_) or M/N contiguous (MN_).
"""
from dataclasses import dataclass
from enum import Enum

from ... import typing as _types
from ...atom import MmaOp
from ...inttuple import CuteError
from ...layout import make_composed_layout, make_layout, make_swizzle
from ..common_modes import OperandMajorMode


class SmemLayoutAtomKind(Enum):
    MN_INTER = 1
    MN_SW32 = 2
    MN_SW64 = 3
    MN_SW128 = 4
    K_INTER = 5
    K_SW32 = 6
    K_SW64 = 7
    K_SW128 = 8

    def __str__(self):
        return f"SmemLayoutAtomKind.{self.name}"


class OperandSource(Enum):
    RMEM = 0
    SMEM = 1

    def __str__(self):
        return f"OperandSource.{self.name}"


# swizzle bits and bytes per row of each kind
_SWIZZLE_BYTES = {"INTER": (0, 16), "SW32": (1, 32), "SW64": (2, 64), "SW128": (3, 128)}


def make_smem_layout_atom(kind: SmemLayoutAtomKind, element_type):
    """The shared-memory layout atom of `kind` for `element_type`: S<B,4,3> o 0 o outer, where outer is 8 rows
    of (row bytes / element bytes) elements, K-major ((8, n):(n, 1)) or MN-major ((n, 8):(1, n)).

    >>> from cutekit.cute.typing import Float16
    >>> str(make_smem_layout_atom(SmemLayoutAtomKind.K_SW128, Float16))
    'S<3,4,3> o 0 o (8,64):(64,1)'
    >>> str(make_smem_layout_atom(SmemLayoutAtomKind.MN_SW32, Float16))
    'S<1,4,3> o 0 o (16,8):(1,16)'
    """
    if not isinstance(kind, SmemLayoutAtomKind):
        raise CuteError(f"make_smem_layout_atom: expected a SmemLayoutAtomKind, got {kind!r}")
    width = getattr(element_type, "width", None)
    if not isinstance(width, int) or width not in (8, 16, 32):
        raise CuteError(f"make_smem_layout_atom: expected an 8-, 16- or 32-bit element type, got {element_type!r}")
    major, swizzle = kind.name.split("_")
    bits, row_bytes = _SWIZZLE_BYTES[swizzle]
    contiguous = row_bytes * 8 // width
    outer = (make_layout((8, contiguous), stride=(contiguous, 1)) if major == "K"
             else make_layout((contiguous, 8), stride=(1, contiguous)))
    return make_composed_layout(make_swizzle(bits, 4, 3), 0, outer)


@dataclass(frozen=True)
class MmaF16BF16Op(MmaOp):
    """Warpgroup F16/BF16 MMA (wgmma.mma_async): 128 threads (4 warps) compute a 64 x N x 16 block, N a
    multiple of 8 from 8 to 256. With `a_src` SMEM both operands are read from shared memory through matrix
    descriptors, so every thread "holds" all of A and B (stride 0 in the thread mode); the fp32 or fp16
    accumulators are spread over the 128 threads as four m16 slices, warp w holding rows 16w..16w+15."""

    ab_dtype: type
    acc_dtype: type
    shape_mnk: tuple
    a_src: OperandSource               # all six are required, as in CuTeDSL 4.8.1
    a_major_mode: OperandMajorMode
    b_major_mode: OperandMajorMode

    def __post_init__(self):
        if self.ab_dtype not in (_types.Float16, _types.BFloat16):
            raise CuteError("expects the 'ab_dtype' Op parameter to be one of Float16 or BFloat16")
        if self.acc_dtype not in (_types.Float16, _types.Float32):
            raise CuteError("expects the 'acc_dtype' Op parameter to be one of Float16 or Float32")
        m, n, k = tuple(self.shape_mnk)
        if m != 64:
            raise CuteError(f"expects the M-mode to be 64, but got {m}")
        if not (8 <= n <= 256 and n % 8 == 0):
            raise CuteError(f"expects the N-mode to satisfy 8 <= N <= 256 and N % 8 == 0. but got {n}")
        if k != 16:
            raise CuteError(f"expects the instruction extent in the K-mode to be 16, but got {k}")
        if not isinstance(self.a_src, OperandSource):
            raise CuteError("expects the 'a_src' Op parameter to be a warpgroup.OperandSource instance")
        for name in ("a_major_mode", "b_major_mode"):
            if not isinstance(getattr(self, name), OperandMajorMode):
                raise CuteError(f"expects the '{name}' Op parameter to be a cute.nvgpu.OperandMajorMode instance")
        if self.a_src is not OperandSource.SMEM:
            raise CuteError("cutekit describes the warpgroup MMA with A in shared memory (OperandSource.SMEM) only")

    def __str__(self):
        return ("warpgroup F16/BF16 MMA Operation\n  A data type           = %s\n  B data type           = %s\n"
                "  Accumulator data type = %s\n  A source location     = %s\n  A major mode          = %s\n"
                "  B major mode          = %s\n  Instruction shape MNK = %s"
                % (self.ab_dtype, self.ab_dtype, self.acc_dtype, self.a_src, self.a_major_mode,
                   self.b_major_mode, tuple(self.shape_mnk)))

    @property
    def operand_dtypes(self):
        return self.ab_dtype, self.ab_dtype, self.acc_dtype

    def _atom_layouts(self):
        m, n, k = tuple(self.shape_mnk)
        layout_a = make_layout((128, (m, k)), stride=(0, (1, m)))
        layout_b = make_layout((128, (n, k)), stride=(0, (1, n)))
        # thread t = t0 + 4 t1 + 32 warp: row t1 + 16 warp, column 2 t0 (the 64xN tile column-major: m + 64 n);
        # its values: the next column (64), 8 rows down (8), 8 columns on (512), N/8 times
        values = (2, 2) if n == 8 else (2, 2, n // 8)
        value_strides = (64, 8) if n == 8 else (64, 8, 512)
        layout_c = make_layout(((4, 8, 4), values), stride=((128, 1, 16), value_strides))
        return make_layout(128, stride=1), (m, n, k), layout_a, layout_b, layout_c


__all__ = ["SmemLayoutAtomKind", "OperandSource", "OperandMajorMode", "make_smem_layout_atom", "MmaF16BF16Op"]
