"""tcgen05 MMA operations of sm_100 (Blackwell), as CuTeDSL 4.8.1 describes them on the host.

One thread issues `tcgen05.mma` for the whole CTA (CtaGroup.ONE) or for a pair of CTAs (CtaGroup.TWO); A and
B are read from shared memory through descriptors, the accumulator lives in tensor memory (TMEM). So the atom
has one "thread" per CTA (ThrID 1:0, or 2:1 for a CTA pair) and each CTA's values are its rows of the tile:

    TV Layout A: (V,(M/V,K)):(M/V,(1,M))     V = 1 (ONE) or 2 (TWO): CTA v holds rows v*M/V ...
    TV Layout B: (V,(N/V,K)):(N/V,(1,N))     with TWO each CTA loads half of B's N
    TV Layout C: (V,(M/V,N)):(M/V,(1,M))

`make_fragment_C(shape)` places the accumulator in TMEM (see `_tmem_accumulator`): a TMEM address is
(lane << 16) + column, in 32-bit columns; a 16-bit accumulator takes a whole column per value.
"""
from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from ... import typing as _types
from ...atom import MmaOp
from ...inttuple import CuteError, is_int, is_tuple
from ...layout import Layout, composition, cosize, make_layout, recast_layout, size, tiled_product
from ..common_modes import CtaGroup, OperandMajorMode


class OperandSource(Enum):
    TMEM = 0
    SMEM = 1

    def __str__(self):
        return f"OperandSource.{self.name}"


class Field(Enum):
    NEGATE_A = "neg_a"
    NEGATE_B = "neg_b"
    ACCUMULATE = "accum_c"

    def __str__(self):
        return f"Field.{self.name}"


class SmemLayoutAtomKind(Enum):
    MN_INTER = 1
    MN_SW32 = 2
    MN_SW64 = 3
    MN_SW128 = 4
    MN_SW128_32B = 5
    K_INTER = 6
    K_SW32 = 7
    K_SW64 = 8
    K_SW128 = 9

    def __str__(self):
        return f"SmemLayoutAtomKind.{self.name}"


def _refuse(message):
    raise CuteError(message)


@dataclass(frozen=True, init=False)
class _Tcgen05MmaOp(MmaOp):
    """The fields CuTeDSL's tcgen05 MmaOp holds, its checks (in its order) and its printed form."""
    a_dtype: type
    b_dtype: type
    acc_dtype: type
    shape_mnk: tuple
    cta_group: CtaGroup
    a_src: OperandSource
    a_major_mode: OperandMajorMode
    b_major_mode: OperandMajorMode

    descriptive_name = ""
    instruction_k = 0

    def _set(self, a_dtype, b_dtype, acc_dtype, shape, cta_group, a_src, a_major_mode, b_major_mode):
        for name, value in (("a_dtype", a_dtype), ("b_dtype", b_dtype), ("acc_dtype", acc_dtype),
                            ("shape_mnk", shape), ("cta_group", cta_group), ("a_src", a_src),
                            ("a_major_mode", a_major_mode), ("b_major_mode", b_major_mode)):
            object.__setattr__(self, name, value)
        self._check_common()
        self._check_kind()
        self._check_k()

    def _check_common(self):
        if not isinstance(self.cta_group, CtaGroup):
            _refuse("expects the 'cta_group' Op parameter to be a tcgen05.CtaGroup instance")
        if not isinstance(self.a_src, OperandSource):
            _refuse("expects the 'a_src' Op parameter to be a tcgen05.OperandSource instance")
        for name in ("a_major_mode", "b_major_mode"):
            if not isinstance(getattr(self, name), OperandMajorMode):
                _refuse(f"expects the '{name}' Op parameter to be a cute.nvgpu.OperandMajorMode or "
                        "tcgen05.OperandMajorMode (deprecated) instance")
        shape = self.shape_mnk
        if not is_tuple(shape) or len(shape) not in (2, 3) or not all(is_int(s) for s in shape):
            _refuse(f"expected a flat rank 2 or 3 tuple for the 'shape_mnk' Op parameter, but got {shape}")
        m, n = shape[0], shape[1]
        narrow_b_mn = self.b_dtype.width == 8 and self.b_major_mode is OperandMajorMode.MN
        if self.cta_group is CtaGroup.ONE:
            if m not in (64, 128):
                _refuse(f"expects the M-mode to be 64 or 128, but got {m}")
            low, step = (16, 16) if narrow_b_mn else (8, 8)
        else:
            if m not in (128, 256):
                _refuse(f"expects the M-mode to be 128 or 256, but got {m}")
            low, step = (32, 32) if narrow_b_mn else (16, 16)
        if n < low or n > 256 or n % step:
            _refuse(f"expects the N-mode to satisfy {low} <= N <= 256 and N % {step} == 0, but got {n}")

    def _check_kind(self):
        pass

    def _check_k(self):
        shape = tuple(self.shape_mnk)
        if len(shape) == 2:
            shape = shape + (self.instruction_k,)
        object.__setattr__(self, "shape_mnk", shape)
        if shape[2] != self.instruction_k:
            _refuse(f"expects the instruction extent in the K-mode to be {self.instruction_k}, but got {shape[2]}")

    def __str__(self):
        return (self.descriptive_name
                + f"\n  A data type           = {self.a_dtype}"
                + f"\n  B data type           = {self.b_dtype}"
                + f"\n  Accumulator data type = {self.acc_dtype}"
                + f"\n  CTA group             = {self.cta_group}"
                + f"\n  A source location     = {self.a_src}"
                + f"\n  A major mode          = {self.a_major_mode}"
                + f"\n  B major mode          = {self.b_major_mode}"
                + f"\n  Instruction shape MNK = {self.shape_mnk}")

    @property
    def operand_dtypes(self):
        return self.a_dtype, self.b_dtype, self.acc_dtype

    def _atom_layouts(self):
        m, n, k = self.shape_mnk
        v = self.cta_group.value
        thr_id = make_layout(1, stride=0) if v == 1 else make_layout(2, stride=1)
        layout_a = make_layout((v, (m // v, k)), stride=(m // v, (1, m)))
        layout_b = make_layout((v, (n // v, k)), stride=(n // v, (1, n)))
        layout_c = make_layout((v, (m // v, n)), stride=(m // v, (1, m)))
        return thr_id, (m, n, k), layout_a, layout_b, layout_c

    # -- fragments: the accumulator in TMEM, A and B as shared-memory descriptors ---------------------------
    def _make_fragment_C(self, input):
        return _tmem_accumulator(self.acc_dtype, self.cta_group.value, input)

    def _make_fragment_AB(self, operand, input):
        return _descriptor_fragment(operand, self, input)


@dataclass(frozen=True, init=False)
class MmaF16BF16Op(_Tcgen05MmaOp):
    """tcgen05.mma kind::f16: Float16 or BFloat16 A and B, Float16 or Float32 accumulator, K = 16."""
    descriptive_name = "tcgen05 F16/BF16 MMA Operation"
    instruction_k = 16

    def __init__(self, ab_dtype, acc_dtype, instruction_shape, cta_group, a_src, a_major_mode, b_major_mode):
        self._set(ab_dtype, ab_dtype, acc_dtype, instruction_shape, cta_group, a_src, a_major_mode, b_major_mode)

    def _check_kind(self):
        if self.a_dtype not in (_types.Float16, _types.BFloat16):
            _refuse("expects the 'ab_dtype' Op parameter to be one of Float16 or BFloat16")
        if self.acc_dtype not in (_types.Float16, _types.Float32):
            _refuse("expects the 'acc_dtype' Op parameter to be one of Float16 or Float32")


@dataclass(frozen=True, init=False)
class MmaTF32Op(_Tcgen05MmaOp):
    """tcgen05.mma kind::tf32: TFloat32 A and B, Float32 accumulator, K = 8."""
    descriptive_name = "tcgen05 TF32 MMA Operation"
    instruction_k = 8

    def __init__(self, instruction_shape, cta_group, a_src, a_major_mode, b_major_mode):
        self._set(_types.TFloat32, _types.TFloat32, _types.Float32, instruction_shape, cta_group, a_src,
                  a_major_mode, b_major_mode)


@dataclass(frozen=True, init=False)
class MmaI8Op(_Tcgen05MmaOp):
    """tcgen05.mma kind::i8: Int8 or Uint8 A and B, Int32 accumulator, K = 32."""
    descriptive_name = "tcgen05 I8 MMA Operation"
    instruction_k = 32

    def __init__(self, ab_dtype, instruction_shape, cta_group, a_src, a_major_mode, b_major_mode):
        self._set(ab_dtype, ab_dtype, _types.Int32, instruction_shape, cta_group, a_src, a_major_mode,
                  b_major_mode)

    def _check_common(self):
        if getattr(self.b_dtype, "width", None) is None:
            _refuse("expects the 'ab_dtype' Op parameter to be one of Int8 or Uint8")
        super()._check_common()

    def _check_kind(self):
        if self.a_dtype not in (_types.Int8, _types.Uint8):
            _refuse("expects the 'ab_dtype' Op parameter to be one of Int8 or Uint8")


@dataclass(frozen=True, init=False)
class MmaF8F6F4Op(_Tcgen05MmaOp):
    """tcgen05.mma kind::f8f6f4 with 8-bit floats: Float8E4M3FN or Float8E5M2 A and B (each its own),
    Float16 or Float32 accumulator, K = 32."""
    descriptive_name = "tcgen05 F8F6F4 MMA Operation"
    instruction_k = 32

    def __init__(self, a_dtype, b_dtype, acc_dtype, instruction_shape, cta_group, a_src, a_major_mode,
                 b_major_mode):
        self._set(a_dtype, b_dtype, acc_dtype, instruction_shape, cta_group, a_src, a_major_mode, b_major_mode)

    def _check_common(self):
        if getattr(self.b_dtype, "width", None) is None:
            _refuse("expects the 'b_dtype' Op parameter to be a Numeric type")
        super()._check_common()

    def _check_kind(self):
        eights = (_types.Float8E4M3FN, _types.Float8E5M2)
        if self.a_dtype not in eights:
            _refuse("cutekit describes MmaF8F6F4Op for 8-bit A and B (Float8E4M3FN, Float8E5M2) only, not "
                    f"a_dtype={self.a_dtype}")
        if self.b_dtype not in eights:
            _refuse("cutekit describes MmaF8F6F4Op for 8-bit A and B (Float8E4M3FN, Float8E5M2) only, not "
                    f"b_dtype={self.b_dtype}")
        if self.acc_dtype not in (_types.Float16, _types.Float32):
            _refuse("expects the 'acc_dtype' Op parameter to be one of Float16 or Float32")


# --------------------------------------------------------------------------------------------------
# The accumulator in tensor memory
# --------------------------------------------------------------------------------------------------

def tmem_dp_stride(value_type) -> int:
    """The address step of one TMEM lane (data path) for elements of `value_type`: 65536 32-bit units, so
    65536 * 32 / width (131072 for 16-bit values)."""
    return 65536 * max(1, 32 // value_type.width)


def _tmem_accumulator(acc_dtype, n_sm, input):
    """CuTe's UMMA::tmem_frg: the accumulator tile ((M_MMA,N_MMA),MMA_M,MMA_N,...) placed in TMEM.

    Lanes first: M_MMA 128 fills the 128 lanes, one column per N value; M_MMA 64 with one CTA takes lanes
    0-15 of each of the four 32-lane sub-partitions ((16,4):(1,32)), further tiles going to lanes 16-31
    before new columns; M_MMA 64 of a CTA pair (M = 128) takes lanes 0-63 for the first half of N and lanes
    64-127 for the second. Values narrower than 32 bits still take a whole column each."""
    from ...tensor import Tensor
    shape = input.layout.shape if isinstance(input, Tensor) else input.shape if isinstance(input, Layout) else input
    if not is_tuple(shape) or len(shape) < 1 or not is_tuple(shape[0]) or len(shape[0]) != 2:
        raise CuteError(f"make_fragment_C: expects the partitioned accumulator shape ((M_MMA,N_MMA),MMA_M,MMA_N,...) "
                        f"of partition_shape_C, got {shape}")
    m_mma, n_mma = size(shape[0][0]), size(shape[0][1])
    rest = tuple(shape[1:])
    column = max(1, 32 // acc_dtype.width)
    lane = tmem_dp_stride(acc_dtype)
    # "virtual" addresses: lane stride 1, column stride 128; restrided to (lane << 16) + column at the end
    restride = make_layout((128, 16384), stride=(lane, column))
    if n_sm == 1:
        if m_mma == 64:
            atom = make_layout(((16, 4), n_mma), stride=((1, 32), 128))
        elif m_mma == 128:
            atom = make_layout((128, n_mma), stride=(1, 128))
        else:
            raise CuteError(f"make_fragment_C: a one-CTA tcgen05 accumulator has 64 or 128 rows, got {m_mma}")
    else:
        if m_mma == 64:
            atom = make_layout((64, (n_mma // 2, 2)), stride=(1, (128, 64)))
        elif m_mma == 128:
            atom = make_layout((128, n_mma), stride=(1, 128))
        else:
            raise CuteError(f"make_fragment_C: a CTA pair's tcgen05 accumulator has 64 or 128 rows per CTA, "
                            f"got {m_mma}")
    tiles = make_layout(rest) if rest else make_layout(1)
    logical = tiled_product(atom, tiles)
    layout = composition(restride, logical)
    if not rest:
        layout = make_layout(layout.shape[0], stride=layout.stride[0])
    if cosize(recast_layout(32, acc_dtype.width, layout)) > 128 * 65536:
        raise CuteError(f"make_fragment_C: the accumulator {shape} needs more than TMEM's 512 columns")
    return Tensor(("tmem", acc_dtype, 0), layout)


def _descriptor_fragment(operand, op, input):
    """make_fragment_A/B of a tcgen05 MMA: the shared-memory tensor seen as a tensor of descriptors, one per
    MMA: its layout recast to 128-bit units with mode 0 (one MMA's operand) replaced by 1:0."""
    from ...tensor import Tensor
    from ...layout import ComposedLayout
    name = "make_fragment_" + operand
    if operand == "A" and op.a_src is OperandSource.TMEM:
        raise CuteError(f"{name}: this MMA reads A from tensor memory (a_src=OperandSource.TMEM); cutekit describes "
                        f"the fragments of tcgen05 MMAs with A in shared memory (OperandSource.SMEM) only")
    if not isinstance(input, Tensor):
        raise CuteError(f"{name}: expects the shared-memory tensor of the operand (sA/sB, modes (MMA,MMA_{'M' if operand == 'A' else 'N'},MMA_K,STAGE)), "
                        f"got {type(input).__name__}: a tcgen05 MMA reads {operand} from shared memory, not registers")
    if isinstance(input.layout, ComposedLayout):
        raise CuteError(f"{name}: expected an affine layout for the tcgen05 MMA's operand {operand}, but got the "
                        f"composed layout {input.layout}: make the tensor from the staged layout's .outer (the "
                        f"swizzle goes with the pointer)")
    dtype = op.a_dtype if operand == "A" else op.b_dtype
    recast = recast_layout(128, dtype.width, input.layout)
    if not is_tuple(recast.shape):
        raise CuteError(f"{name}: expects an (MMA,MMA_M/N,MMA_K,...) tensor, got {input.layout}")
    shape = (1,) + tuple(recast.shape[1:])
    stride = (0,) + tuple(recast.stride[1:])
    return Tensor(("smem_desc", op.a_major_mode if operand == "A" else op.b_major_mode, 0),
                  make_layout(shape, stride=stride))


__all__ = ["OperandSource", "CtaGroup", "Field", "SmemLayoutAtomKind", "MmaF16BF16Op", "MmaTF32Op", "MmaI8Op",
           "MmaF8F6F4Op"]
