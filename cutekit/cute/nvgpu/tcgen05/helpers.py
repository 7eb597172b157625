"""Shared-memory layouts for the tcgen05 MMA: the layout atoms (as sm_90's, plus MN_SW128_32B) and
`tile_to_mma_shape`, which tiles an atom to an MMA-partitioned shape ((MMA_M,MMA_K),M_MMAs,K_MMAs,STAGE)."""
from __future__ import annotations

from ...inttuple import CuteError, is_tuple
from ...layout import ComposedLayout, coalesce, make_composed_layout, make_layout, make_swizzle, size, tile_to_shape
from ...layout import tiled_divide
from .mma import SmemLayoutAtomKind

# (swizzle bits, base, shift), bits in one contiguous row
_KINDS = {"INTER": ((0, 4, 3), 128), "SW32": ((1, 4, 3), 256), "SW64": ((2, 4, 3), 512),
          "SW128": ((3, 4, 3), 1024), "SW128_32B": ((2, 5, 2), 1024)}


def make_smem_layout_atom(kind, element_type):
    """The shared-memory layout atom of `kind` for `element_type`, in elements: Swizzle o 0 o 8 rows of 16,
    32, 64 or 128 bytes, K contiguous (K_ kinds: (8,n):(n,1)) or M/N contiguous (MN_ kinds: (n,8):(1,n)).
    MN_SW128_32B (for 32-bit types) swizzles 32-byte units: S<2,5,2>.

    >>> from cutekit.cute.typing import Float16
    >>> str(make_smem_layout_atom(SmemLayoutAtomKind.K_SW128, Float16))
    'S<3,4,3> o 0 o (8,64):(64,1)'
    """
    if not isinstance(kind, SmemLayoutAtomKind):
        raise CuteError(f"make_smem_layout_atom: expected a tcgen05.SmemLayoutAtomKind, got {kind!r}")
    width = getattr(element_type, "width", None)
    if not isinstance(width, int) or width <= 0:
        raise TypeError(f"element_type must be a Numeric, but got {element_type}")
    major, swizzle = kind.name.split("_", 1)
    (bits, base, shift), row_bits = _KINDS[swizzle]
    n = row_bits // width
    outer = make_layout((8, n), stride=(n, 1)) if major == "K" else make_layout((n, 8), stride=(1, n))
    return make_composed_layout(make_swizzle(bits, base, shift), 0, outer)


def tile_to_mma_shape(atom, mma_tile_shape, order=None):
    """Tile `atom` to an MMA-partitioned shape ((MMA_M,MMA_N),M_MMAs,N_MMAs,...): as tile_to_shape on
    (MMA_M*M_MMAs, MMA_N*N_MMAs, ...) in `order`, then cut back into one MMA's tile and the repeats.

    >>> from cutekit.cute.typing import Float16
    >>> atom = make_smem_layout_atom(SmemLayoutAtomKind.K_SW128, Float16)
    >>> str(tile_to_mma_shape(atom, ((128, 16), 1, 4, 3)))
    'S<3,4,3> o 0 o ((128,16),1,4,3):((64,1),0,16,8192)'
    """
    if not is_tuple(mma_tile_shape) or len(mma_tile_shape) < 3 or not is_tuple(mma_tile_shape[0]) \
            or len(mma_tile_shape[0]) != 2:
        raise CuteError(f"tile_to_mma_shape: expects ((MMA_M,MMA_N),M_MMAs,N_MMAs,...), got {mma_tile_shape}")
    rank = len(mma_tile_shape)
    if order is None:
        order = tuple(range(rank - 1))
    if len(order) != rank - 1:
        raise ValueError(f"rank(order)={len(order)} must be equal to rank(mma_tile_shape)-1={rank - 1}")
    (a, b), m_reps, n_reps = mma_tile_shape[0], mma_tile_shape[1], mma_tile_shape[2]
    mn_shape = (size(a) * size(m_reps), size(b) * size(n_reps)) + tuple(size(s) for s in mma_tile_shape[3:])
    tiled = tile_to_shape(atom, mn_shape, order)
    outer = tiled.outer if isinstance(tiled, ComposedLayout) else tiled
    try:
        divided = tiled_divide(outer, (make_layout(size(a)), make_layout(size(b))))
    except CuteError:
        atom_outer = atom.outer if isinstance(atom, ComposedLayout) else atom
        raise CuteError(f"tile_to_mma_shape: the atom {atom_outer} tiled to {mn_shape} cannot be cut into "
                        f"tiles of one MMA ({size(a)},{size(b)}): an MMA's extent along the atom's contiguous "
                        f"mode must be a multiple of the atom's (or divide it); choose a narrower swizzle atom "
                        f"or another MMA shape") from None
    layout = divided
    layout = coalesce(layout, target_profile=mma_tile_shape)
    if isinstance(tiled, ComposedLayout):
        return ComposedLayout(tiled.inner, tiled.offset, layout)
    return layout


__all__ = ["make_smem_layout_atom", "tile_to_mma_shape"]
