"""What CuTeDSL keeps in `cutlass.tensor_utils`: `LayoutEnum`, whether a tensor is row- or column-major (CuTeDSL
4.8.1 moved it here from `cutlass.utils`, where the old name still works but warns that it is deprecated; cutekit's
`cutekit.cute.utils.LayoutEnum` is this one)."""
from enum import Enum

from .nvgpu.common_modes import OperandMajorMode


class LayoutEnum(Enum):
    """Whether a 2-D (or batched) tensor is row-major (mode 1 contiguous) or column-major (mode 0 contiguous),
    as `cutlass.utils.LayoutEnum`; for an MMA operand, row-major A is K-major."""
    ROW_MAJOR = "row_major"
    COL_MAJOR = "col_major"

    def __str__(self):
        return f"LayoutEnum.{self.name}"

    def mma_major_mode(self) -> OperandMajorMode:
        return OperandMajorMode.K if self is LayoutEnum.ROW_MAJOR else OperandMajorMode.MN

    sm90_mma_major_mode = mma_major_mode

    def is_k_major_a(self) -> bool:
        return self is LayoutEnum.ROW_MAJOR

    def is_m_major_a(self) -> bool:
        return self is LayoutEnum.COL_MAJOR

    def is_n_major_b(self) -> bool:
        return self is LayoutEnum.COL_MAJOR

    def is_k_major_b(self) -> bool:
        return self is LayoutEnum.ROW_MAJOR

    def is_n_major_c(self) -> bool:
        return self is LayoutEnum.ROW_MAJOR

    def is_m_major_c(self) -> bool:
        return self is LayoutEnum.COL_MAJOR

    @staticmethod
    def from_tensor(tensor) -> "LayoutEnum":
        """ROW_MAJOR where mode 1 has stride 1, COL_MAJOR where mode 0 has."""
        stride = tensor.layout.stride
        stride = stride if isinstance(stride, tuple) else (stride,)
        if len(stride) > 1 and stride[1] == 1:
            return LayoutEnum.ROW_MAJOR
        if stride[0] == 1:
            return LayoutEnum.COL_MAJOR
        raise ValueError(f"Invalid leading dimension: no mode of stride 1 among the first two of {tensor.layout}")


__all__ = ["LayoutEnum"]
