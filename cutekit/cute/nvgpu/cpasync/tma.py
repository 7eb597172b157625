"""TMA (the tensor memory accelerator, sm_90): one thread moves a whole box of a tensor between global and
shared memory, as CuTeDSL 4.8.1 builds it.

    make_tiled_tma_atom(op, gmem, smem_layout, cta_tiler, num_multicast=1) -> (atom, coordinate tensor)
    tma_partition(atom, cta_coord, cta_layout, smem_tensor, gmem_tensor)   -> (smem view, gmem view)

The copy engine is told the tensor's shape and strides once (the descriptor) and later asked for a box by
its coordinates, so the second result of `make_tiled_tma_atom` is not memory but a coordinate tensor over
the tensor's shape: `tensor<(0,0) o (M,K):(1@1,1@0)>` for a row-major (M, K) tensor, where `1@d` is TMA
dimension d. TMA dimension 0 is the contiguous one (stride 1), then the others in order of stride.

The box: composing the tile's coordinates (as TMA dimensions) with the inverse of the shared-memory layout
gives, for each shared-memory offset, the global coordinate that lands there; its leading modes with unit
basis strides are what one instruction moves. For a 128-byte-swizzled K-major fp16 tile (128, 64) that is the
whole tile (8192 elements); for an MN-major one it is 64 rows of MN by 64 of K, because shared memory holds
the tile as 64-element (128-byte) columns. The atom's TV layouts are (1, box):(0, 1): one thread, the box.

`tma_partition` follows CuTe's tma_partition: shared memory's mode 0 is re-ordered so that its offsets run
0, 1, 2, ... (the inverse of its layout), divided into boxes ((box, boxes), rest...), and the global
coordinate tensor is composed with the same map; with multicast, CTA `cta_coord` of `cta_layout` starts
its share `box / cosize(cta_layout)` elements further in.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ...atom import CopyAtom, CopyOp
from ..common_modes import CtaGroup
from ...inttuple import CuteError, is_int, is_tuple, product
from ...layout import (Basis, ComposedLayout, Layout, coalesce, composition, cosize, flatten, logical_divide,
                       make_layout, right_inverse, size, tile_to_shape)


def _check_cta_group(op):
    if not isinstance(op.cta_group, CtaGroup):
        raise CuteError("expects the 'cta_group' parameter to be a CtaGroup instance")


@dataclass(frozen=True)
class CopyBulkTensorTileG2SOp(CopyOp):
    """cp.async.bulk.tensor global -> shared: a box of a tensor into one CTA's shared memory, completing bytes
    on an mbarrier (`cute.copy(atom, gmem, smem, tma_bar_ptr=bar)`). `cta_group` TWO (sm_100): the load of
    one CTA of a pair that shares a tcgen05 MMA, completing bytes on the leader CTA's mbarrier."""
    cta_group: CtaGroup = CtaGroup.ONE

    def __post_init__(self):
        _check_cta_group(self)

    def __str__(self):
        return "cp.async GMEM -> SMEM bulk tensor copy Operation" + (
            "\n  CTA group = 2" if self.cta_group is CtaGroup.TWO else "")


@dataclass(frozen=True)
class CopyBulkTensorTileG2SMulticastOp(CopyOp):
    """cp.async.bulk.tensor global -> shared with .multicast::cluster: the box lands in the shared memory of
    every CTA of the cluster named by `mcast_mask`, at the same offset, completing bytes on each one's
    mbarrier."""
    cta_group: CtaGroup = CtaGroup.ONE

    def __post_init__(self):
        _check_cta_group(self)

    def __str__(self):
        return "cp.async GMEM -> SMEM bulk tensor multicast copy Operation" + (
            "\n  CTA group = 2" if self.cta_group is CtaGroup.TWO else "")


@dataclass(frozen=True)
class CopyBulkTensorTileS2GOp(CopyOp):
    """cp.async.bulk.tensor shared -> global: a box of shared memory into the tensor; rows and columns past
    the tensor's edge are not written."""

    def __str__(self):
        return "cp.async SMEM -> GMEM bulk tensor copy Operation"


_OPS = (CopyBulkTensorTileG2SOp, CopyBulkTensorTileG2SMulticastOp, CopyBulkTensorTileS2GOp)


@dataclass(frozen=True)
class TmaCopyAtom(CopyAtom):
    """A TMA copy atom: the copy atom CuTeDSL prints plus what its descriptor holds (the tensor, which TMA
    dimension each of its modes is, the box size, multicast)."""
    gmem: object = field(default=None, compare=False)
    tma_dims: tuple = ()              # TMA dimension of each mode of the tensor (0: the contiguous one)
    box: int = 0                      # elements one instruction moves
    num_multicast: int = 1

    @property
    def is_load(self) -> bool:
        return not isinstance(self.op, CopyBulkTensorTileS2GOp)


def _tma_dims(gmem) -> tuple:
    """TMA dimension of each mode: the stride-1 mode is 0, the others follow in order of stride; None for a
    mode of extent 1."""
    shape, stride = gmem.layout.shape, gmem.layout.stride
    if not is_tuple(shape) or any(is_tuple(s) for s in shape):
        raise CuteError(f"make_tiled_tma_atom: the global tensor must have a flat shape of rank 2 to 5, got "
                        f"{gmem.layout}")
    if not 2 <= len(shape) <= 5 and len(shape) != 1:
        raise CuteError(f"make_tiled_tma_atom: TMA describes tensors of rank 1 to 5, got rank {len(shape)}")
    strides = [s if is_int(s) else None for s in stride]
    unit = [i for i, s in enumerate(strides) if s == 1]
    if not unit:
        raise CuteError(f"make_tiled_tma_atom: TMA needs a mode of stride 1 in the global tensor, got strides "
                        f"{gmem.layout.stride}")
    # a mode of extent 1 is no TMA dimension (None): CuTeDSL's coordinate tensor steps it by 0
    rest = sorted((i for i in range(len(shape)) if i != unit[0] and shape[i] != 1),
                  key=lambda i: (strides[i] is None, strides[i] if strides[i] is not None else 0, i))
    order = [unit[0]] + rest
    dims = [None] * len(shape)
    for d, mode in enumerate(order):
        dims[mode] = d
    return tuple(dims)


def _outer(layout):
    if isinstance(layout, ComposedLayout):
        return layout.outer
    if isinstance(layout, Layout):
        return layout
    raise CuteError(f"make_tiled_tma_atom: smem_layout must be a Layout or ComposedLayout, got {layout!r}")


def _tile_extent(mode):
    """A tiler's mode as an extent: an int, or a layout of consecutive coordinates (`32:1`, the epilogue tiles of
    blackwell_helpers.compute_epilogue_tile_shape)."""
    if not isinstance(mode, Layout):
        return mode
    flat = coalesce(mode)
    if size(flat) > 1 and flat.stride != 1:
        raise CuteError(f"make_tiled_tma_atom: cutekit describes tilers whose modes are extents or consecutive "
                        f"layouts (n:1), got the mode {mode}")
    return size(flat)


def _box(outer: Layout, tiler, dims: tuple) -> int:
    tile = tuple(_tile_extent(t) for t in tiler) if is_tuple(tiler) else (_tile_extent(tiler),)
    if len(tile) != len(dims) and len(tile) > len(dims):
        raise CuteError(f"make_tiled_tma_atom: cta_tiler {tiler} has more modes than the tensor ({len(dims)})")
    if size(outer) != product(tile):
        raise CuteError(f"make_tiled_tma_atom: the shared-memory layout {outer} holds {size(outer)} elements but "
                        f"the CTA tile {tiler} has {product(tile)}")
    to_gmem = make_layout(tile, stride=tuple(Basis(1, dims[i]) if dims[i] is not None else 0
                                             for i in range(len(tile))))
    return _box_of_map(outer, to_gmem)


def _box_of_map(outer: Layout, to_gmem: Layout) -> int:
    """Elements one TMA instruction moves: shared-memory offsets 0, 1, 2, ... mapped to TMA coordinates
    (to_gmem after the inverse of `outer`), as long as they step through TMA dimensions with stride 1."""
    full = coalesce(composition(to_gmem, right_inverse(outer)))
    shapes = flatten(full.shape) if is_tuple(full.shape) else (full.shape,)
    strides = flatten(full.stride) if is_tuple(full.stride) else (full.stride,)
    box = 1
    for extent, stride in zip(shapes, strides):
        if not (isinstance(stride, Basis) and stride.scale == 1):
            break
        box *= extent
    if box == 1 and size(outer) > 1:
        raise CuteError(f"make_tiled_tma_atom: shared memory {outer} does not start with a run of the "
                        f"tensor's elements that TMA can move")
    return box


def make_tiled_tma_atom(op, gmem_tensor, smem_layout, cta_tiler, num_multicast: int = 1, *,
                        internal_type=None, **kwargs):
    """(TMA copy atom, coordinate tensor) for copying `cta_tiler` tiles of `gmem_tensor` to or from shared
    memory laid out as `smem_layout` (one stage)."""
    from ...tensor import Tensor
    if not isinstance(op, _OPS):
        raise CuteError(f"make_tiled_tma_atom: op must be a TMA copy operation (CopyBulkTensorTileG2SOp, "
                        f"CopyBulkTensorTileG2SMulticastOp, CopyBulkTensorTileS2GOp), got {op!r}")
    if not is_int(num_multicast) or num_multicast < 1:
        raise CuteError(f"make_tiled_tma_atom: num_multicast must be a positive int, got {num_multicast!r}")
    if num_multicast > 1 and not isinstance(op, CopyBulkTensorTileG2SMulticastOp):
        raise CuteError("make_tiled_tma_atom: num_multicast > 1 needs CopyBulkTensorTileG2SMulticastOp")
    layout = getattr(gmem_tensor, "layout", None)
    if not isinstance(layout, Layout):
        raise CuteError(f"make_tiled_tma_atom: expected a global-memory tensor, got {gmem_tensor!r}")
    dims = _tma_dims(gmem_tensor)
    box = _box(_outer(smem_layout), cta_tiler, dims)
    value_type = _value_type(gmem_tensor, internal_type)
    if value_type is None:
        raise CuteError("make_tiled_tma_atom: the tensor's element type is not known; pass internal_type=")
    tv = make_layout((1, box), stride=(0, 1))
    atom = TmaCopyAtom(op, value_type, make_layout(1, stride=0), tv, tv, tv, gmem=gmem_tensor, tma_dims=dims,
                       box=box, num_multicast=num_multicast)
    return atom, _coordinates(layout, dims)


def _coordinates(layout: Layout, dims: tuple):
    """The TMA coordinate tensor over the tensor's shape: mode i steps TMA dimension dims[i] (a mode of
    extent 1 gets stride 0, as CuTeDSL prints it)."""
    from ...tensor import Tensor
    shape = layout.shape
    return Tensor(tuple(0 for d in dims if d is not None),
                  make_layout(shape, stride=tuple(Basis(1, d) if d is not None else 0 for d in dims)))


def _to_tma_dims(stride, dims):
    """A stride of a coordinate map over the tensor's modes (k@i), rewritten over TMA dimensions (k@dims[i])."""
    if is_tuple(stride):
        return tuple(_to_tma_dims(d, dims) for d in stride)
    if isinstance(stride, Basis):
        dim = dims[stride.mode if is_int(stride.mode) else stride.mode[0]]
        return Basis(stride.scale, dim) if dim is not None else 0
    return stride


def _make_tiled_tma_atom_mma(operand, op, gmem_tensor, smem_layout, mma_tiler_mnk, tiled_mma, cluster_shape_vmnk,
                             internal_type):
    from ...atom import TiledMma, _by_mode, _mode
    name = "make_tiled_tma_atom_" + operand
    if not isinstance(op, (CopyBulkTensorTileG2SOp, CopyBulkTensorTileG2SMulticastOp)):
        raise CuteError(f"{name}: op must be a TMA load (CopyBulkTensorTileG2SOp or "
                        f"CopyBulkTensorTileG2SMulticastOp), got {op!r}")
    if not isinstance(tiled_mma, TiledMma):
        raise CuteError(f"{name}: expects the TiledMma whose operand {operand} the loads feed, got {tiled_mma!r}")
    layout = getattr(gmem_tensor, "layout", None)
    if not isinstance(layout, Layout):
        raise CuteError(f"{name}: expected a global-memory tensor, got {gmem_tensor!r}")
    outer = _outer(smem_layout)
    rank = len(outer.shape) if is_tuple(outer.shape) else 1
    if rank not in (3, 4):
        raise CuteError(f"{name}: the shared-memory layout must be non-staged (atom, rest_{'m' if operand == 'A' else 'n'}, "
                        f"rest_k) or staged (..., stage), but got rank = {rank}: {outer}")
    if rank == 4:
        outer = make_layout(tuple(outer.shape[:3]), stride=tuple(outer.stride[:3]))
    if isinstance(op, CopyBulkTensorTileG2SOp):
        num_multicast = 1
    else:
        if cluster_shape_vmnk is None:
            raise ValueError(f"cluster_shape_vmnk must be provided for multicast {operand} tensor loads")
        # A is shared by the CTAs along N (mode 2 of VMNK), B by those along M (mode 1)
        num_multicast = size(cluster_shape_vmnk[2 if operand == "A" else 1])
    dims = _tma_dims(gmem_tensor)
    shape = layout.shape
    identity = make_layout(shape, stride=tuple(Basis(1, i) for i in range(len(shape))))
    tiler = tuple(size(t) for t in mma_tiler_mnk)
    extents = (tiler[0], tiler[2]) if operand == "A" else (tiler[1], tiler[2])
    # the (M|N, K) tile of the tensor's first two modes (CuTeDSL composes the identity with a rank-2 tiler and
    # keeps those two modes only)
    g_tile = _by_mode(composition, make_layout(tuple(identity.shape[:2]), stride=tuple(identity.stride[:2])),
                      extents)
    cta_v_map = _mode(tiled_mma._thrfrg(operand, g_tile), 1)
    if size(cta_v_map) != size(outer):
        raise CuteError(f"{name}: the shared-memory layout {outer} holds {size(outer)} elements but one CTA's "
                        f"share of the {extents} tile of {operand} has {size(cta_v_map)}")
    _refuse_what_cutedsl_aborts_on(name, operand, tiled_mma, outer)
    to_gmem = make_layout(cta_v_map.shape, stride=_to_tma_dims(cta_v_map.stride, dims))
    box = _box_of_map(outer, to_gmem)
    value_type = _value_type(gmem_tensor, internal_type)
    if value_type is None:
        raise CuteError(f"{name}: the tensor's element type is not known; pass internal_type=")
    ctas = size(tiled_mma.thr_id)
    tv = make_layout((1, box), stride=(0, 1)) if ctas == 1 else make_layout((ctas, box), stride=(box, 1))
    atom = TmaCopyAtom(op, value_type, tiled_mma.thr_id, tv, tv, tv, gmem=gmem_tensor, tma_dims=dims, box=box,
                       num_multicast=num_multicast)
    return atom, _coordinates(layout, dims)


def _refuse_what_cutedsl_aborts_on(name, operand, tiled_mma, outer):
    """CuTeDSL 4.8.1 (sm_100a, traced on the CPU, 2026-11-28) aborts the whole process, without a Python
    error, when it builds the TMA load of a K-major operand of 16- or 32-bit elements whose tile has more rows
    than the element has bits but not a multiple of them: a Float16 B of 24, 40, 56, ... rows per CTA, a
    TFloat32 B of 40, 48, 56, 72, ... rows (8-bit operands of any multiple of 8 rows load). cutekit refuses
    those with the rule instead."""
    major = tiled_mma.op.a_major_mode if operand == "A" else tiled_mma.op.b_major_mode
    dtype = tiled_mma.op.a_dtype if operand == "A" else tiled_mma.op.b_dtype
    if getattr(major, "name", None) != "K" or dtype.width <= 8:
        return
    rows = size(outer.shape[0][0]) * size(outer.shape[1]) if is_tuple(outer.shape[0]) else size(outer.shape[0])
    if rows > dtype.width and rows % dtype.width:
        raise CuteError(f"{name}: a K-major {dtype} operand {operand} of {rows} rows per CTA: CuTeDSL 4.8.1 "
                        f"stops the whole process (no Python error) building this TMA load; it loads K-major "
                        f"{dtype.width}-bit tiles of at most {dtype.width} rows or a multiple of {dtype.width} "
                        f"(choose the MMA's {'M' if operand == 'A' else 'N'} so that each CTA's share is one)")


def make_tiled_tma_atom_A(op, gmem_tensor, smem_layout, mma_tiler_mnk, tiled_mma, cluster_shape_vmnk=None, *,
                          internal_type=None):
    """(TMA copy atom, coordinate tensor) for loading A's (M, K) tiles of `mma_tiler_mnk` into shared memory
    laid out as `smem_layout` (make_smem_layout_a's, staged or one stage), each CTA its share of the
    tiled MMA's A (with a CTA pair, rows 0-127 and 128-255 of a 256-row tile); multicast to the CTAs along N
    of `cluster_shape_vmnk`."""
    return _make_tiled_tma_atom_mma("A", op, gmem_tensor, smem_layout, mma_tiler_mnk, tiled_mma,
                                    cluster_shape_vmnk, internal_type)


def make_tiled_tma_atom_B(op, gmem_tensor, smem_layout, mma_tiler_mnk, tiled_mma, cluster_shape_vmnk=None, *,
                          internal_type=None):
    """As make_tiled_tma_atom_A for B's (N, K) tiles; multicast to the CTAs along M of `cluster_shape_vmnk`."""
    return _make_tiled_tma_atom_mma("B", op, gmem_tensor, smem_layout, mma_tiler_mnk, tiled_mma,
                                    cluster_shape_vmnk, internal_type)


def _value_type(gmem_tensor, internal_type):
    """The atom's value type, as CuTeDSL prints it: the tensor's element type (`internal_type` only sets the
    format TMA moves, as TFloat32 for a Float32 tensor). Where cutekit's NumPy storage cannot hold the type
    (bfloat16, 8-bit floats: the element type is unknown or of another width), `internal_type` names it."""
    element = getattr(gmem_tensor, "element_type", None)
    if internal_type is None:
        return element
    if element is None or element.width != internal_type.width:
        return internal_type
    return element


def _mode0(layout: Layout) -> Layout:
    return list(layout)[0] if is_tuple(layout.shape) else layout


def _rest(layout: Layout) -> list:
    return list(layout)[1:] if is_tuple(layout.shape) else []


def _join(*modes) -> Layout:
    return make_layout(tuple(m.shape for m in modes), stride=tuple(m.stride for m in modes))


def tma_partition(atom, cta_coord, cta_layout, smem_tensor, gmem_tensor):
    """(smem view, gmem view), each ((box, boxes), rest...): what `cute.copy(atom, g[..., k], s[..., stage])`
    moves, one instruction per box."""
    from ...tensor import Tensor
    if not isinstance(atom, TmaCopyAtom):
        raise CuteError(f"tma_partition: expected a TMA copy atom (make_tiled_tma_atom), got {atom!r}")
    s_layout, g_layout = getattr(smem_tensor, "layout", None), getattr(gmem_tensor, "layout", None)
    if s_layout is None or g_layout is None:
        raise CuteError("tma_partition: smem_tensor and gmem_tensor must be tensors")
    s_layout = _outer(s_layout)
    s0 = _mode0(s_layout)
    if size(s0) != size(_mode0(g_layout)):
        raise CuteError(f"tma_partition: mode 0 of the shared-memory tensor ({size(s0)} elements) and of the "
                        f"global tensor ({size(_mode0(g_layout))}) differ: group the tile's modes of both "
                        f"(cute.group_modes(t, 0, 2))")
    inverse = right_inverse(s0)
    one_mode = make_layout((inverse.shape,), stride=(inverse.stride,))
    layout_v = tile_to_shape(one_mode, (size(s0),))
    divided = logical_divide(layout_v, make_layout(atom.box))      # ((box, boxes))

    def partitioned(layout):
        mode0 = coalesce(composition(_mode0(layout), divided), (1, 1))
        return _join(mode0, *_rest(layout))

    cta_layout = cta_layout if isinstance(cta_layout, Layout) else make_layout(cta_layout)
    offset = cta_layout(cta_coord) * (atom.box // cosize(cta_layout)) if cosize(cta_layout) > 1 else 0
    s_new, g_new = partitioned(s_layout), partitioned(g_layout)

    def moved(tensor, layout):
        # this CTA's share starts `offset` elements into the box; the other modes at 0 (each layout its rank)
        step = layout(((offset, 0),) + tuple(0 for _ in _rest(layout))) if offset else 0
        if hasattr(tensor, "storage"):          # the simulator's tensor over memory: move its base
            return type(tensor)(tensor.storage, layout, tensor.base + step, tensor.swizzle, tensor.name)
        if isinstance(tensor, Tensor):
            return Tensor(tensor._advance(step) if offset else tensor.iterator, layout, tensor.name)
        raise CuteError(f"tma_partition: expected tensors, got {type(tensor).__name__}")
    return moved(smem_tensor, s_new), moved(gmem_tensor, g_new)


__all__ = ["CopyBulkTensorTileG2SOp", "CopyBulkTensorTileG2SMulticastOp", "CopyBulkTensorTileS2GOp",
           "TmaCopyAtom", "make_tiled_tma_atom", "make_tiled_tma_atom_A", "make_tiled_tma_atom_B", "tma_partition"]
