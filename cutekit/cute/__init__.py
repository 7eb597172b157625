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
                       make_tiled_copy, make_tiled_copy_A, make_tiled_copy_B, make_tiled_copy_C, make_tiled_copy_D, make_tiled_copy_S, make_tiled_copy_tv,
                       make_tiled_mma)
except ImportError:  # pragma: no cover - atoms land separately
    pass


def ceil_div(a: int, b: int) -> int:
    """Round-up integer division, as `cute.ceil_div`."""
    return -(-a // b)


def round_up(a, b):
    """`a` rounded up to a multiple of `b`, mode by mode for tuples (missing modes of `b` are 1), as
    `cute.round_up`: a grid rounded up to whole clusters."""
    if isinstance(a, tuple):
        if not a:
            raise ValueError("inputs cannot be empty")
        if not isinstance(b, tuple):
            raise TypeError(f"Expected both inputs to be tuple, but got {type(a)} and {type(b)}")
        if len(a) < len(b):
            raise ValueError(f"Expected rank(a) to be greater or equal than rank(b), but got {a}, {b}")
        b = tuple(b) + (1,) * (len(a) - len(b))
        return tuple(round_up(x, y) for x, y in zip(a, b))
    if isinstance(b, tuple):
        raise TypeError(f"Expected `b` to be a single integer when `a` is not a tuple, but got {b}")
    return ((a + b - 1) // b) * b


def product_each(a):
    """The product of each mode of an int tuple, as `cute.product_each`: ((2,3),4) -> (6,4)."""
    if isinstance(a, int):
        return a
    return tuple(size(x) for x in a)


def size_in_bytes(dtype, layout) -> int:
    """Bytes that `layout` spans in elements of `dtype` (its cosize; a swizzled layout's outer layout),
    rounded up to whole bytes, as `cute.size_in_bytes`: the bytes one TMA stage brings."""
    if not hasattr(dtype, "width"):
        raise TypeError(f"dtype must be a Numeric, but got {dtype}")
    if layout is None:
        return 0
    elements = cosize(layout.outer if isinstance(layout, ComposedLayout) else layout)
    return ceil_div(elements * dtype.width, 8)
