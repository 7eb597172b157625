"""What a GEMM's CTA does first, shared by the SIMT and the tensor-core kernel: which tile it owns, and its
views of A, B and C (with identity tensors of the same tiles, for predicates on partial tiles)."""
from __future__ import annotations

import cutlass
import cutlass.cute as cute


@cute.jit
def grouped_tile(linear: cutlass.Int32, tiles_m: cutlass.Int32, tiles_n: cutlass.Int32, group_m: cutlass.Constexpr):
    """Map a linear CTA index to (m, n) tile coordinates, `group_m` tile-rows at a time (column-major inside
    a group), so that consecutive CTAs reuse the same B columns and A rows in L2."""
    per_group = group_m * tiles_n
    group = linear // per_group
    first_m = group * group_m
    rows_in_group = cutlass.min(tiles_m - first_m, group_m)
    within = linear - group * per_group
    return first_m + within % rows_in_group, within // rows_in_group


@cute.jit
def cta_tiles(mA: cute.Tensor, mB: cute.Tensor, mC: cute.Tensor, cta_tiler: cutlass.Constexpr, group_m: cutlass.Constexpr):
    """This CTA's tiles: gA (BM, BK, k_tiles), gB (BN, BK, k_tiles), gC (BM, BN), and cA, cB, cC, the same
    tiles of identity tensors ((m, k), (n, k), (m, n) coordinates). One tiler (BM, BN, BK) serves all
    three through `proj`, which drops the mode an operand does not have."""
    linear, _, _ = cute.arch.block_idx()
    tiles_m = cute.ceil_div(cute.size(mC, mode=[0]), cta_tiler[0])
    tiles_n = cute.ceil_div(cute.size(mC, mode=[1]), cta_tiler[1])
    m_tile, n_tile = grouped_tile(linear, tiles_m, tiles_n, group_m)
    coord = (m_tile, n_tile, None)
    tiles = []
    for tensor, proj in ((mA, (1, None, 1)), (mB, (None, 1, 1)), (mC, (1, 1, None))):
        tiles.append(cute.local_tile(tensor, cta_tiler, coord, proj=proj))
    for tensor, proj in ((mA, (1, None, 1)), (mB, (None, 1, 1)), (mC, (1, 1, None))):
        tiles.append(cute.local_tile(cute.make_identity_tensor(tensor.shape), cta_tiler, coord, proj=proj))
    return tuple(tiles)
