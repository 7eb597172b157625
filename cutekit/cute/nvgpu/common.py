"""The universal copy and MMA operations: one thread each, no special hardware."""
from dataclasses import dataclass

from .. import typing as _types
from ..atom import CopyOp, MmaOp
from ..layout import make_layout
from ..inttuple import CuteError


def _single_thread_copy_layouts(value_type, num_bits_per_copy):
    """One thread moving `num_bits_per_copy` bits: (thread, bit) -> bit is (1,bits):(0,1), read in elements.

    A width of 0 means "let the compiler choose"; CuTeDSL then describes the atom as one element, (1,1):(0,0).
    """
    thread = make_layout(1, stride=0)
    if num_bits_per_copy == 0:
        values = make_layout((1, 1), stride=(0, 0))
    else:
        values = CopyOp.bits_to_values(make_layout((1, num_bits_per_copy), stride=(0, 1)), value_type)
    return thread, values, values, values


@dataclass(frozen=True)
class CopyUniversalOp(CopyOp):
    """The universal copy: `dst = src` by one thread, `num_bits_per_copy` bits per atom (0: compiler's choice)."""

    def __str__(self):
        return "universal Copy Operation"

    def _atom_layouts(self, value_type, num_bits_per_copy=0, **unused):
        if not isinstance(num_bits_per_copy, int) or num_bits_per_copy < 0:
            raise CuteError("'num_bits_per_copy' must be a non-negative int when creating a copy Atom for "
                            "'CopyUniversalOp'")
        if num_bits_per_copy & (num_bits_per_copy - 1):
            # CuTeDSL 4.8.1: "Inputs are incorrect for type: cute.nvgpu.CopyAtomSIMTSyncCopyType"
            raise CuteError(f"CopyUniversalOp copies a power of two bits at a time (8, 16, 32, 64, 128, ...) or "
                            f"0 for the compiler's choice, not num_bits_per_copy={num_bits_per_copy}")
        return _single_thread_copy_layouts(value_type, num_bits_per_copy)


@dataclass(frozen=True)
class MmaUniversalOp(MmaOp):
    """The universal MMA: one thread, one fused multiply-add, shape (1,1,1); A, B and C share one type."""

    abacc_dtype: type

    def __post_init__(self):
        if self.abacc_dtype not in (_types.Float16, _types.Float32, _types.Float64):
            raise CuteError("expects the 'abacc_dtype' Op parameter to be one of Float16, Float32, or Float64")

    def __str__(self):
        return "universal MMA Operation using FMA\n  A/B/Accumulator data type = %s" % self.abacc_dtype

    @property
    def operand_dtypes(self):
        return self.abacc_dtype, self.abacc_dtype, self.abacc_dtype

    def _atom_layouts(self):
        one_value = make_layout((1, 1), stride=(0, 0))
        return make_layout(1, stride=0), (1, 1, 1), one_value, one_value, one_value
