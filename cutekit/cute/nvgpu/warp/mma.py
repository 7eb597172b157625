"""mma.sync on sm_80 tensor cores: one warp computes D(16x8) = A(16xK) B(Kx8) + C with K = 8 or 16 for
fp16/bf16, K = 4 or 8 for tf32.

The (thread, value) -> (m, k) / (n, k) / (m, n) layouts are CuTe's MMA_Traits for SM80_16x8x{8,16}: thread t
is lane (t % 4, t // 4) of a 4x8 grid; `group = t // 4` picks the row, `t % 4` picks a pair of columns.
"""
from dataclasses import dataclass

from ... import typing as _types
from ...atom import MmaOp
from ...layout import make_layout
from ...inttuple import CuteError

# (T32,V4) -> (M16,N8): thread (t0,t1) holds rows t1 and t1+8, columns 2*t0 and 2*t0+1 (16x8 column-major index)
_SM80_16x8_ROW = make_layout(((4, 8), (2, 2)), stride=((32, 1), (16, 8)))
# (T32,V2) -> (N8,K8)
_SM80_8x8_ROW = make_layout(((4, 8), 2), stride=((16, 1), 8))
# tf32 holds one 32-bit element per register: (T32,V2) -> (M16,K4) and (T32,V1) -> (N8,K4) for m16n8k4,
# (T32,V4) -> (M16,K8) and (T32,V2) -> (N8,K8) for m16n8k8 (CuTe's SM80_16x8x{4,8}_F32TF32TF32F32_TN)
_TF32_LAYOUTS = {(16, 8, 4): (make_layout(((4, 8), 2), stride=((16, 1), 8)),
                              make_layout(((4, 8), 1), stride=((8, 1), 0))),
                 (16, 8, 8): (make_layout(((4, 8), (2, 2)), stride=((16, 1), (8, 64))),
                              make_layout(((4, 8), 2), stride=((8, 1), 32)))}


@dataclass(frozen=True)
class MmaF16BF16Op(MmaOp):
    """Warp-level F16/BF16 MMA: A and B in `ab_dtype` (Float16 or BFloat16), accumulator in `acc_dtype`
    (Float16 or Float32; Float32 for BFloat16), instruction shape (16,8,8) or (16,8,16)."""

    ab_dtype: type
    acc_dtype: type
    shape_mnk: tuple

    def __post_init__(self):
        if self.ab_dtype not in (_types.Float16, _types.BFloat16):
            raise CuteError("expects the 'ab_dtype' Op parameter to be one of Float16 or BFloat16")
        if self.acc_dtype not in (_types.Float16, _types.Float32):
            raise CuteError("expects the 'acc_dtype' Op parameter to be one of Float16 or Float32")
        if self.ab_dtype is _types.BFloat16 and self.acc_dtype is not _types.Float32:
            raise CuteError("expects the 'acc_dtype' Op parameter to be Float32 when 'ab_dtype' is BFloat16")
        if tuple(self.shape_mnk) not in ((16, 8, 8), (16, 8, 16)):
            raise CuteError("expects the 'shape_mnk' Op parameter to be one of (16,8,8) or (16,8,16)")

    def __str__(self):
        return ("warp-level F16/BF16 MMA Operation\n  A/B data type         = %s\n  Accumulator data type = %s"
                "\n  Instruction shape MNK = %s" % (self.ab_dtype, self.acc_dtype, tuple(self.shape_mnk)))

    @property
    def operand_dtypes(self):
        return self.ab_dtype, self.ab_dtype, self.acc_dtype

    def _atom_layouts(self):
        if tuple(self.shape_mnk) == (16, 8, 8):
            layout_a, layout_b = _SM80_16x8_ROW, _SM80_8x8_ROW
        else:
            layout_a = make_layout(((4, 8), (2, 2, 2)), stride=((32, 1), (16, 8, 128)))
            layout_b = make_layout(((4, 8), (2, 2)), stride=((16, 1), (8, 64)))
        return make_layout(32, stride=1), tuple(self.shape_mnk), layout_a, layout_b, _SM80_16x8_ROW


@dataclass(frozen=True)
class MmaTF32Op(MmaOp):
    """Warp-level TF32 MMA: A and B in TFloat32, accumulator in Float32, instruction shape (16,8,4) or (16,8,8)."""

    shape_mnk: tuple

    def __post_init__(self):
        if tuple(self.shape_mnk) not in _TF32_LAYOUTS:
            raise CuteError("expects the 'shape_mnk' Op parameter to be one of (16,8,4) or (16,8,8)")

    def __str__(self):
        return ("warp-level TF32 MMA Operation\n  A/B data type         = TFloat32\n  Accumulator data type = Float32"
                "\n  Instruction shape MNK = %s" % (tuple(self.shape_mnk),))

    @property
    def operand_dtypes(self):
        return _types.TFloat32, _types.TFloat32, _types.Float32

    def _atom_layouts(self):
        layout_a, layout_b = _TF32_LAYOUTS[tuple(self.shape_mnk)]
        return make_layout(32, stride=1), tuple(self.shape_mnk), layout_a, layout_b, _SM80_16x8_ROW
