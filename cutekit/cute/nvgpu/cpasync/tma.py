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
from ...inttuple import CuteError, is_int, is_tuple, product
from ...layout import (Basis, ComposedLayout, Layout, coalesce, composition, cosize, flatten, logical_divide,
                       make_layout, right_inverse, size, tile_to_shape)


@dataclass(frozen=True)
class CopyBulkTensorTileG2SOp(CopyOp):
    """cp.async.bulk.tensor global -> shared: a box of a tensor into one CTA's shared memory, completing bytes
    on an mbarrier (`cute.copy(atom, gmem, smem, tma_bar_ptr=bar)`)."""

    def __str__(self):
        return "cp.async SM90 TMA LOAD Operation"


@dataclass(frozen=True)
class CopyBulkTensorTileG2SMulticastOp(CopyOp):
    """cp.async.bulk.tensor global -> shared with .multicast::cluster: the box lands in the shared memory of
    every CTA of the cluster named by `mcast_mask`, at the same offset, completing bytes on each one's
    mbarrier."""

    def __str__(self):
        return "cp.async SM90 TMA LOAD MULTICAST Operation"


@dataclass(frozen=True)
class CopyBulkTensorTileS2GOp(CopyOp):
    """cp.async.bulk.tensor shared -> global: a box of shared memory into the tensor; rows and columns past
    the tensor's edge are not written."""

    def __str__(self):
        return "cp.async SM90 TMA STORE Operation"


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
    """TMA dimension of each mode: the stride-1 mode is 0, the others follow in order of stride."""
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
    rest = sorted((i for i in range(len(shape)) if i != unit[0]),
                  key=lambda i: (strides[i] is None, strides[i] if strides[i] is not None else 0, i))
    order = [unit[0]] + rest
    dims = [0] * len(shape)
    for d, mode in enumerate(order):
        dims[mode] = d
    return tuple(dims)


def _outer(layout):
    if isinstance(layout, ComposedLayout):
        return layout.outer
    if isinstance(layout, Layout):
        return layout
    raise CuteError(f"make_tiled_tma_atom: smem_layout must be a Layout or ComposedLayout, got {layout!r}")


def _box(outer: Layout, tiler, dims: tuple) -> int:
    tile = tuple(tiler) if is_tuple(tiler) else (tiler,)
    if len(tile) != len(dims) and len(tile) > len(dims):
        raise CuteError(f"make_tiled_tma_atom: cta_tiler {tiler} has more modes than the tensor ({len(dims)})")
    if size(outer) != product(tile):
        raise CuteError(f"make_tiled_tma_atom: the shared-memory layout {outer} holds {size(outer)} elements but "
                        f"the CTA tile {tiler} has {product(tile)}")
    to_gmem = make_layout(tile, stride=tuple(Basis(1, dims[i]) for i in range(len(tile))))
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
    value_type = internal_type or getattr(gmem_tensor, "element_type", None)
    if value_type is None:
        raise CuteError("make_tiled_tma_atom: the tensor's element type is not known; pass internal_type=")
    tv = make_layout((1, box), stride=(0, 1))
    atom = TmaCopyAtom(op, value_type, make_layout(1, stride=0), tv, tv, tv, gmem=gmem_tensor, tma_dims=dims,
                       box=box, num_multicast=num_multicast)
    shape = layout.shape
    coordinates = Tensor(tuple(0 for _ in shape),
                         make_layout(shape, stride=tuple(Basis(1, d) for d in dims)))
    return atom, coordinates


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
    start = ((offset, 0),) + tuple(0 for _ in _rest(g_new))

    def moved(tensor, layout):
        step = layout(start) if offset else 0
        if hasattr(tensor, "storage"):          # the simulator's tensor over memory: move its base
            return type(tensor)(tensor.storage, layout, tensor.base + step, tensor.swizzle, tensor.name)
        if isinstance(tensor, Tensor):
            return Tensor(tensor._advance(step) if offset else tensor.iterator, layout, tensor.name)
        raise CuteError(f"tma_partition: expected tensors, got {type(tensor).__name__}")
    return moved(smem_tensor, s_new), moved(gmem_tensor, g_new)


__all__ = ["CopyBulkTensorTileG2SOp", "CopyBulkTensorTileG2SMulticastOp", "CopyBulkTensorTileS2GOp",
           "TmaCopyAtom", "make_tiled_tma_atom", "tma_partition"]
