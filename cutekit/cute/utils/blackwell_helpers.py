"""`cutlass.utils.blackwell_helpers` (CuTeDSL 4.8.1) for the host side of an sm_100 dense GEMM:

    make_trivial_tiled_mma(a_dtype, b_dtype, a_major, b_major, acc_dtype, cta_group, mma_tiler_mn)
    get_smem_layout_atom_ab, make_smem_layout_a / _b      staged shared-memory layouts of A and B
    compute_epilogue_tile_shape, get_smem_layout_atom_epi, make_smem_layout_epi
    get_num_tmem_alloc_cols(tmem_tensors)                 TMEM columns to allocate (a power of two >= 32)
    get_tmem_load_op(...)                                 the tcgen05.ld atom for the epilogue tile
    cluster_shape_to_tma_atom_A / _B                      the TMA load op for A / B in a cluster
    get_smem_store_op(...)                                the epilogue's registers -> shared memory atom

The rules are CuTeDSL's, written over cutekit's layouts; each result prints as CuTeDSL prints it.
"""
from __future__ import annotations

from math import ceil, log2

from .. import typing as _types
from ..atom import make_copy_atom, make_mma_atom, make_tiled_mma
from ..inttuple import CuteError
from ..layout import Layout, coalesce, make_layout, right_inverse, size, tile_to_shape
from ..nvgpu.common_modes import OperandMajorMode
from ..nvgpu.tcgen05 import (CtaGroup, Ld16x32bx2Op, Ld16x64bOp, Ld16x128bOp, Ld16x256bOp, Ld32x32bOp,
                             MmaF8F6F4Op, MmaF16BF16Op, MmaI8Op, MmaTF32Op, OperandSource, Pack, Repetition,
                             SmemLayoutAtomKind, find_tmem_tensor_col_offset, make_smem_layout_atom,
                             tile_to_mma_shape)

_F8 = (_types.Float8E4M3FN, _types.Float8E5M2)


def make_trivial_tiled_mma(*args, **kwargs):
    """The tiled MMA of one tcgen05 MMA atom of shape (*mma_tiler_mn, K) for the operand types (A from shared
    memory unless `a_source` says otherwise):

        make_trivial_tiled_mma(a_dtype, b_dtype, a_leading_mode, b_leading_mode, acc_dtype, cta_group,
                               mma_tiler_mn, [a_source])

    (CuTeDSL's older form with one `ab_dtype` in place of a_dtype, b_dtype is accepted too.)"""
    names = ("a_dtype", "b_dtype", "a_leading_mode", "b_leading_mode", "acc_dtype", "cta_group", "mma_tiler_mn",
             "a_source")
    if "ab_dtype" in kwargs:
        ab = kwargs.pop("ab_dtype")
        args = (ab, ab) + tuple(args)
    elif len(args) >= 2 and isinstance(args[1], OperandMajorMode):       # the older (ab_dtype, ...) form
        args = (args[0], args[0]) + tuple(args[1:])
    bound = dict(zip(names, args))
    for key, value in kwargs.items():
        if key not in names:
            raise TypeError(f"make_trivial_tiled_mma() got an unexpected keyword argument '{key}'")
        bound[key] = value
    missing = [n for n in names[:-1] if n not in bound]
    if missing:
        raise TypeError(f"make_trivial_tiled_mma() missing required arguments: {', '.join(missing)}")
    a_dtype, b_dtype = bound["a_dtype"], bound["b_dtype"]
    a_major, b_major = bound["a_leading_mode"], bound["b_leading_mode"]
    acc, group, tiler = bound["acc_dtype"], bound["cta_group"], tuple(bound["mma_tiler_mn"])
    source = bound.get("a_source", OperandSource.SMEM)
    if a_dtype in (_types.Float16, _types.BFloat16) and b_dtype == a_dtype:
        op = MmaF16BF16Op(a_dtype, acc, (*tiler, 16), group, source, a_major, b_major)
    elif a_dtype in (_types.TFloat32, _types.Float32) and b_dtype == a_dtype:
        op = MmaTF32Op((*tiler, 8), group, source, a_major, b_major)
    elif a_dtype in (_types.Uint8, _types.Int8) and b_dtype == a_dtype:
        op = MmaI8Op(a_dtype, (*tiler, 32), group, source, a_major, b_major)
    elif a_dtype in _F8 and b_dtype in _F8:
        op = MmaF8F6F4Op(a_dtype, b_dtype, acc, (*tiler, 32), group, source, a_major, b_major)
    else:
        raise TypeError(f"unsupported a_dtype/b_dtype, got a_dtype: {a_dtype}, b_dtype: {b_dtype}")
    return make_tiled_mma(make_mma_atom(op))


def get_smem_layout_atom_ab(major_mode, element_type, smem_shape_mn_k, sparsity=1):
    """The widest swizzle whose row (16, 32, 64 or 128 bytes) divides the contiguous extent of the tile
    (K for a K-major operand, M/N otherwise); 32-bit MN-major operands of 128-byte multiples get MN_SW128_32B."""
    k_major = major_mode == OperandMajorMode.K
    extent = size(smem_shape_mn_k[1] if k_major else smem_shape_mn_k[0])
    if extent % 8:
        raise CuteError(f"get_smem_layout_atom_ab: the contiguous extent {extent} of the tile {smem_shape_mn_k} is "
                        f"not a multiple of 8 elements")
    bits = extent * element_type.width
    if k_major:
        bits //= sparsity
    if bits % 128:
        raise CuteError(f"get_smem_layout_atom_ab: the contiguous extent {extent} x {element_type.width} bits is "
                        f"not a multiple of 16 bytes")
    prefix = "K" if k_major else "MN"
    if not k_major and element_type.width == 32 and bits % 1024 == 0:
        return SmemLayoutAtomKind.MN_SW128_32B
    for row_bits, name in ((1024, "SW128"), (512, "SW64"), (256, "SW32")):
        if bits % row_bits == 0:
            return SmemLayoutAtomKind[f"{prefix}_{name}"]
    return SmemLayoutAtomKind[f"{prefix}_INTER"]


def _dice_shape(tiler, keep):
    return tuple(t for t, k in zip(tiler, keep) if k)


def _make_smem_layout_ab(operand, tiled_mma, mma_tiler_mnk, dtype, num_stages, is_k_major):
    if is_k_major is None:
        major = tiled_mma.op.a_major_mode if operand == "A" else tiled_mma.op.b_major_mode
        is_k_major = major == OperandMajorMode.K
    major = OperandMajorMode.K if is_k_major else OperandMajorMode.MN
    tiler = tuple(size(t) for t in mma_tiler_mnk)
    if operand == "A":
        shape = tiled_mma.partition_shape_A((tiler[0], tiler[2]))
    else:
        shape = tiled_mma.partition_shape_B((tiler[1], tiler[2]))
    shape_mn_k = (size(shape[0][0]) * shape[1], size(shape[0][1]) * shape[2])
    kind = get_smem_layout_atom_ab(major, dtype, shape_mn_k)
    atom = make_smem_layout_atom(kind, dtype)
    order = (2, 1, 3) if not is_k_major else (1, 2, 3)
    return tile_to_mma_shape(atom, tuple(shape) + (num_stages,), order=order)


def make_smem_layout_a(tiled_mma, mma_tiler_mnk, a_dtype, num_stages, *, is_k_major=None):
    """A's staged shared-memory layout ((MMA_M,MMA_K),M_MMAs,K_MMAs,STAGE): the MMA's partition of the
    (M, K) tile, the swizzle atom get_smem_layout_atom_ab picks, tiled with tile_to_mma_shape.

    >>> from cutekit.cute.nvgpu import OperandMajorMode as Major
    >>> mma = make_trivial_tiled_mma(_types.Float16, _types.Float16, Major.K, Major.K, _types.Float32,
    ...                              CtaGroup.ONE, (128, 64))
    >>> str(make_smem_layout_a(mma, (128, 64, 64), _types.Float16, 3))
    'S<3,4,3> o 0 o ((128,16),1,4,3):((64,1),0,16,8192)'
    """
    return _make_smem_layout_ab("A", tiled_mma, mma_tiler_mnk, a_dtype, num_stages, is_k_major)


def make_smem_layout_b(tiled_mma, mma_tiler_mnk, b_dtype, num_stages, *, is_k_major=None):
    """B's staged shared-memory layout ((MMA_N,MMA_K),N_MMAs,K_MMAs,STAGE), as make_smem_layout_a."""
    return _make_smem_layout_ab("B", tiled_mma, mma_tiler_mnk, b_dtype, num_stages, is_k_major)


def compute_epilogue_tile_size(cta_tile_m, cta_tile_n, use_2cta, elem_width_d, elem_width_c=None,
                               d_is_m_major=True, c_is_m_major=True, tmem_warp_shape_mn=None):
    """(tile_m, tile_n) of one epilogue step (CuTeDSL's rule: at most 32 TMEM lanes a warp, about 4096
    elements a step without a source C, at least 16 bytes contiguous for the TMA store)."""
    warp_m, warp_n = tmem_warp_shape_mn or ((2, 2) if (cta_tile_m == 64 and use_2cta) else (4, 1))
    no_source = elem_width_c is None
    max_bits = elem_width_d if no_source else max(elem_width_c, elem_width_d)
    tile_m = min(cta_tile_m, 32 * warp_m)
    if no_source:
        n_perf = (8192 if max_bits == 4 else 4096) // tile_m
    elif max_bits == 32:
        n_perf = 16 if (cta_tile_m > 64 and cta_tile_n <= 128) else 32
    elif max_bits == 16:
        n_perf = 32 if cta_tile_n <= 128 else 64
    else:
        n_perf = 64
    while cta_tile_n % n_perf:
        n_perf //= 2
    n_min_d = 8 * warp_n if d_is_m_major else (128 * warp_n if elem_width_d == 6 else 128 // elem_width_d * warp_n)
    if c_is_m_major or no_source:
        n_min_c = 8 * warp_n
    else:
        n_min_c = 128 * warp_n if elem_width_c == 6 else 128 // elem_width_c * warp_n
    tile_n = min(cta_tile_n, max(n_perf, n_min_c, n_min_d))
    if cta_tile_n % tile_n:
        tile_n = cta_tile_n
    return tile_m, tile_n


def compute_epilogue_tile_shape(cta_tile_shape, use_2cta_instrs, layout_d, elem_ty_d, *, layout_c=None,
                                elem_ty_c=None, tmem_warp_shape_mn=None):
    """The epilogue tiler (M layout, N layout): each step covers compute_epilogue_tile_size's tile; with a
    (2,2) warp grid (a CTA pair's 64-row tile) the N layout takes its columns from both halves of the tile.

    >>> from cutekit.cute.utils import LayoutEnum
    >>> [str(t) for t in compute_epilogue_tile_shape((128, 256, 64), False, LayoutEnum.ROW_MAJOR, _types.Float16)]
    ['128:1', '32:1']
    """
    if not hasattr(elem_ty_d, "width"):
        raise TypeError(f"elem_ty_d must be Numeric, but got {elem_ty_d}")
    cta_m, cta_n = cta_tile_shape[:2]
    d_m_major = layout_d.is_m_major_c()
    c_m_major = True if layout_c is None else layout_c.is_m_major_c()
    tile_m, tile_n = compute_epilogue_tile_size(cta_m, cta_n, use_2cta_instrs, elem_ty_d.width,
                                                elem_ty_c.width if elem_ty_c is not None else None, d_m_major,
                                                c_m_major, tmem_warp_shape_mn=tmem_warp_shape_mn)
    warp_m, warp_n = tmem_warp_shape_mn or ((2, 2) if (cta_m == 64 and use_2cta_instrs) else (4, 1))
    n_min_d = 8 * warp_n if d_m_major else (128 * warp_n if elem_ty_d.width == 6 else 128 // elem_ty_d.width * warp_n)
    if c_m_major or elem_ty_c is None:
        n_min_c = 8 * warp_n
    else:
        n_min_c = 128 * warp_n if elem_ty_c.width == 6 else 128 // elem_ty_c.width * warp_n
    if cta_n < n_min_c or cta_n < n_min_d:
        raise ValueError(f"CTA tile too small: cta_tile_shape={cta_tile_shape!r}")
    return (make_layout(tile_m), coalesce(make_layout((tile_n // warp_n, warp_n), stride=(1, cta_n // warp_n))))


def get_smem_layout_atom_epi(layout, element_type, epi_tile):
    """The swizzle atom of the epilogue's shared-memory tile: as get_smem_layout_atom_ab for the contiguous
    mode (M for a column-major C, N for a row-major one)."""
    shape = tuple(coalesce(right_inverse(x)).shape if isinstance(x, Layout) else x for x in epi_tile)
    major = OperandMajorMode.MN if layout.is_m_major_c() else OperandMajorMode.K
    return get_smem_layout_atom_ab(major, element_type, shape)


def make_smem_layout_epi(epi_dtype, epi_layout, epi_tile, epi_stage):
    """The epilogue's staged shared-memory layout (EPI_M, EPI_N, STAGE)."""
    shape = tuple(size(x) for x in epi_tile)
    kind = get_smem_layout_atom_epi(epi_layout, epi_dtype, epi_tile)
    atom = make_smem_layout_atom(kind, epi_dtype)
    order = (1, 0, 2) if not epi_layout.is_n_major_c() else (0, 1, 2)
    return tile_to_shape(atom, shape + (epi_stage,), order=order)


def get_num_tmem_alloc_cols(tmem_tensors, rounding=True):
    """TMEM columns to allocate for `tmem_tensors` (one or a list): the columns each spans, summed, rounded up
    to a power of two of at least 32 (tcgen05.alloc's rule); at most 512."""
    tensors = tmem_tensors if isinstance(tmem_tensors, (list, tuple)) else [tmem_tensors]
    total = sum(find_tmem_tensor_col_offset(t) for t in tensors)
    if rounding:
        total = max(1 << ceil(log2(total)), 32)
    if total > 512 or total < 32:
        raise ValueError(f"TMEM allocation columns {total} exceeds the maximum capacity of 512 or less than 32")
    return total


def get_tmem_load_op(cta_tile_shape, layout_d, elem_ty_d, elem_ty_acc, epi_tile, use_2cta_instrs, *,
                     tmem_warp_shape_mn=None):
    """The tcgen05.ld copy atom that brings one epilogue tile of the accumulator to registers: 32 or 16 lanes
    a warp (from the tile's rows per warp), a width that suits C's type and majorness, and as many repetitions
    as the tile's columns allow (CuTeDSL's rule)."""
    m_major = layout_d.is_m_major_c()
    acc_bits, d_bits = elem_ty_acc.width, elem_ty_d.width
    warp_m, warp_n = tmem_warp_shape_mn or ((2, 2) if (cta_tile_shape[0] == 64 and use_2cta_instrs) else (4, 1))
    tile_mn = tuple(size(x) for x in epi_tile)
    num_dp = max(1, tile_mn[0] // warp_m)
    if num_dp not in (16, 32):
        raise ValueError("Cta tile and 2sm config does not generate correct num dp.")
    num_col_bits = max(1, tile_mn[1] // warp_n) * acc_bits
    pack = False
    if acc_bits == 32 and d_bits == 32:
        dp, bit = (16, 256 if m_major else 128) if num_dp == 16 else (32, 32)
    elif acc_bits == 32 and d_bits == 16:
        dp, bit = (16, 256) if (num_dp == 16 or m_major) else (32, 32)
    elif acc_bits == 32 and d_bits == 8:
        if num_dp == 16:
            dp, bit = (16, 256) if m_major else (16, 32)
        else:
            dp, bit = (16, 256) if m_major else (32, 32)
    elif acc_bits == 16 and d_bits == 16:
        pack = True
        dp, bit = (16, 128) if (num_dp == 16 or m_major) else (32, 32)
    else:
        raise ValueError(f"Can not handle acc/d type combination: elem_ty_acc={elem_ty_acc}, elem_ty_d={elem_ty_d}")
    div = 64 if (dp == 16 and bit == 32) else bit
    rep = None
    if num_col_bits % (div * 128) == 0 and (dp, bit) in ((16, 64), (16, 32), (32, 32)):
        rep = 128
    elif num_col_bits % (div * 64) == 0 and (dp, bit) in ((16, 128), (16, 64), (16, 32), (32, 32)):
        rep = 64
    else:
        for r in (32, 16, 8, 4, 2, 1):
            if num_col_bits % (div * r) == 0:
                rep = r
                break
    if rep is None:
        raise ValueError("Can not pick tmem_rep based on cta tile shape and tmem atom.")
    cls = {(16, 64): Ld16x64bOp, (16, 128): Ld16x128bOp, (16, 256): Ld16x256bOp, (16, 32): Ld16x32bx2Op,
           (32, 32): Ld32x32bOp}[(dp, bit)]
    return make_copy_atom(cls(Repetition(rep), Pack.PACK_16b_IN_32b if pack else Pack.NONE), elem_ty_acc)


def get_smem_store_op(layout_d, elem_ty_d, elem_ty_acc, tiled_tmem_load):
    """The copy atom that stores the epilogue's registers to shared memory after `tiled_tmem_load`: stmatrix
    m8n8 (x4, x2) where the TMEM load left each thread 16-bit pairs in its pattern (16 lanes of 128 or 256
    bits), stmatrix m16n8 (transposed bytes) for an 8-bit column-major C, else the universal copy (CuTeDSL's
    rule)."""
    from ..nvgpu.common import CopyUniversalOp
    from ..nvgpu.tcgen05 import get_tmem_copy_properties, is_tmem_load
    from ..nvgpu.warp import StMatrix16x8x8bOp, StMatrix8x8x16bOp
    for ty, name in ((elem_ty_d, "elem_ty_d"), (elem_ty_acc, "elem_ty_acc")):
        if not hasattr(ty, "width"):
            raise TypeError(f"{name} must be a Numeric, but got {ty}")
    m_major, n_major = layout_d.is_m_major_c(), layout_d.is_n_major_c()
    if not is_tmem_load(tiled_tmem_load):
        return make_copy_atom(CopyUniversalOp(), elem_ty_d)
    dp, bits, rep, pack = get_tmem_copy_properties(tiled_tmem_load)
    acc, d = elem_ty_acc.width, elem_ty_d.width
    packed = pack is Pack.PACK_16b_IN_32b

    def pattern(reps):
        return ((acc == 32 and d == 32 and n_major and dp == 16 and bits == 128 and rep in reps and not packed)
                or (acc == 32 and d == 16 and dp == 16 and bits == 256 and rep in reps and not packed)
                or (acc == 16 and d == 16 and dp == 16 and bits == 128 and rep in reps and packed))
    eight_bit = acc == 32 and d == 8 and m_major and dp == 16 and bits == 256 and not packed
    if pattern((2, 4, 8, 16, 32, 64)):
        return make_copy_atom(StMatrix8x8x16bOp(m_major, 4), elem_ty_d)
    if pattern((1,)):
        return make_copy_atom(StMatrix8x8x16bOp(m_major, 2), elem_ty_d)
    if eight_bit and rep in (1, 2, 4, 8, 16, 32):
        return make_copy_atom(StMatrix16x8x8bOp(transpose=True, num_matrices=4 if rep >= 4 else rep), elem_ty_d)
    return make_copy_atom(CopyUniversalOp(), elem_ty_d)


def _cluster_op(operand, cluster_shape_mnk, atom_thr_id):
    from ..nvgpu.cpasync import CopyBulkTensorTileG2SMulticastOp, CopyBulkTensorTileG2SOp
    ctas = size(atom_thr_id)
    shape = tuple(cluster_shape_mnk)
    # A is shared along N (mode 1 of the cluster), B along M (mode 0)
    multicast = size(shape[1]) != 1 if operand == "A" else size(shape[0]) != ctas
    if size(shape[0]) % ctas:
        raise ValueError(f"Cluster shape not divisible by MMA size: {shape} and {atom_thr_id}")
    group = CtaGroup.TWO if ctas == 2 else CtaGroup.ONE
    if ctas not in (1, 2):
        raise ValueError(f"Unsupported Configuration for SM100 TMA: {shape} and {atom_thr_id}")
    return (CopyBulkTensorTileG2SMulticastOp if multicast else CopyBulkTensorTileG2SOp)(group)


def cluster_shape_to_tma_atom_A(cluster_shape_mnk, atom_thr_id):
    """The TMA load op for A: multicast when the cluster has more than one CTA along N (they share A's
    tile), CtaGroup.TWO when the MMA spans a CTA pair (atom_thr_id of size 2)."""
    return _cluster_op("A", cluster_shape_mnk, atom_thr_id)


def cluster_shape_to_tma_atom_B(cluster_shape_mnk, atom_thr_id):
    """The TMA load op for B: multicast when the cluster has more CTAs along M than the MMA spans."""
    return _cluster_op("B", cluster_shape_mnk, atom_thr_id)


__all__ = ["get_smem_store_op", "cluster_shape_to_tma_atom_A", "cluster_shape_to_tma_atom_B", "make_trivial_tiled_mma", "get_smem_layout_atom_ab", "make_smem_layout_a", "make_smem_layout_b",
           "compute_epilogue_tile_size", "compute_epilogue_tile_shape", "get_smem_layout_atom_epi",
           "make_smem_layout_epi", "get_num_tmem_alloc_cols", "get_tmem_load_op"]
