"""cp.async: the asynchronous copy from global to shared memory (sm_80), and TMA (sm_90, tma.py)."""
import enum
from dataclasses import dataclass, field

from ..common import _single_thread_copy_layouts
from ...atom import CopyOp
from ...inttuple import CuteError


class LoadCacheMode(enum.Enum):
    """Which caches a cp.async load goes through: ALWAYS (L1 and L2, `.ca`) or GLOBAL (L2 only, `.cg`; the
    only choice for 16-byte copies), as CuTeDSL's `cpasync.LoadCacheMode`."""
    ALWAYS = "ca"
    GLOBAL = "cg"
    STREAMING = "cs"
    LAST_USE = "lu"
    NONE = "cv"


@dataclass(frozen=True)
class CopyG2SOp(CopyOp):
    """cp.async, global to shared memory, by one thread; `num_bits_per_copy` must be given (32, 64 or 128 on
    hardware; the layouts are defined for any positive width)."""
    cache_mode: LoadCacheMode = field(default=LoadCacheMode.ALWAYS, compare=False)

    def __str__(self):
        return "cp.async GMEM -> SMEM copy Operation"

    def _atom_layouts(self, value_type, num_bits_per_copy=None, **unused):
        if not isinstance(num_bits_per_copy, int) or num_bits_per_copy <= 0:
            raise CuteError("expects a 'num_bits_per_copy' kw argument of type int that is positive when "
                            "creating a copy Atom for CopyG2SOp")
        return _single_thread_copy_layouts(value_type, num_bits_per_copy)


from .tma import (CopyBulkTensorTileG2SMulticastOp, CopyBulkTensorTileG2SOp, CopyBulkTensorTileS2GOp,  # noqa: E402
                  TmaCopyAtom, make_tiled_tma_atom, make_tiled_tma_atom_A, make_tiled_tma_atom_B, tma_partition)

__all__ = ["CopyG2SOp", "LoadCacheMode", "CopyBulkTensorTileG2SOp", "CopyBulkTensorTileG2SMulticastOp",
           "CopyBulkTensorTileS2GOp", "TmaCopyAtom", "make_tiled_tma_atom", "make_tiled_tma_atom_A",
           "make_tiled_tma_atom_B", "tma_partition"]
