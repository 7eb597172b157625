"""cutekit.cute: a pure-Python reference of CuTeDSL's host-side layout algebra.

Same names, signatures and printed strings as `cutlass.cute` (nvidia-cutlass-dsl 4.8.1), so what a learner
writes here runs unchanged against the real package. No GPU imports.
"""
from .inttuple import CuteError, elem_less
from .layout import (Basis, ComposedLayout, Layout, Swizzle, append, blocked_product, coalesce, complement,
                     composition, cosize, crd2idx, depth, dice, filter, filter_zeros, flat_divide, flat_product,
                     flatten, get, group_modes, idx2crd, left_inverse, logical_divide, logical_product,
                     make_composed_layout, make_layout, make_layout_tv, make_ordered_layout, make_swizzle,
                     max_common_layout, max_common_vector, prepend, rank, raked_product, recast_layout, right_inverse, select, shape, size,
                     tile_to_shape, tiled_divide, tiled_product, zipped_divide, zipped_product)
from .tensor import Tensor, local_partition, local_tile, make_identity_tensor, make_tensor
from .tensor import cute_slice as slice_
from .typing import BFloat16, Float16, Float32, Float64, Int8, Int16, Int32, Numeric, TFloat32

try:  # copy and MMA atoms (cutekit/cute/atom.py, cutekit/cute/nvgpu/)
    from . import nvgpu
    from .atom import (CopyAtom, MmaAtom, ThrCopy, ThrMma, TiledCopy, TiledMma, make_copy_atom, make_mma_atom,
                       make_tiled_copy, make_tiled_copy_A, make_tiled_copy_B, make_tiled_copy_C, make_tiled_copy_tv,
                       make_tiled_mma)
except ImportError:  # pragma: no cover - atoms land separately
    pass


def ceil_div(a: int, b: int) -> int:
    """Round-up integer division, as `cute.ceil_div`."""
    return -(-a // b)
