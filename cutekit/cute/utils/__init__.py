"""What CuTeDSL keeps in `cutlass.utils` for building kernels on the host: `LayoutEnum` (row- or column-major
tensors) and `blackwell_helpers` (sm_100 shared-memory layouts, the trivial tiled MMA, TMEM sizes and the
epilogue's TMEM load)."""
from ..tensor_utils import LayoutEnum  # CuTeDSL 4.8.1 keeps it in cutlass.tensor_utils; cutlass.utils' warns

from . import blackwell_helpers  # noqa: E402

__all__ = ["LayoutEnum", "blackwell_helpers"]
