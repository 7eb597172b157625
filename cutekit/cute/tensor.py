"""Tensors: an iterator (memory or a coordinate) composed with a layout.

Two kinds, as in CuTeDSL: a memory tensor over a NumPy array (element k is `array[base + layout(k)]`), and a
coordinate tensor from `make_identity_tensor` whose elements are the coordinates themselves, printed like
CuTeDSL: `tensor<(0,0) o (4,4):(1@0,1@1)>`. Slicing with None (CuTe's underscore) keeps modes; an int or a
full coordinate reads an element.
"""
from __future__ import annotations

import functools

import numpy

from .inttuple import CuteError, as_algebra, check_coordinate, fmt_coord, is_int, is_tuple, product
from .layout import (Basis, ComposedLayout, Coord, Layout, _has_none, _layout_of, composition, dice, make_layout,
                     size, slice_, slice_offset, zipped_divide)

_DTYPE_NAMES = {"float32": "f32", "float16": "f16", "float64": "f64", "int32": "i32", "int8": "i8",
                "int16": "i16", "int64": "i64", "bool": "i1", "uint8": "u8"}


_POINTER_KINDS = ("memory", "tmem", "smem_desc")


def _tmem_align(offset: int) -> int:
    """The alignment CuTeDSL 4.8.1 prints for a TMEM pointer: always 1, at any offset (the allocation's address
    is known only at run time); the offset itself is not printed."""
    return 1


def _tmem_type_name(value_type) -> str:
    """A TMEM pointer's element type as CuTeDSL 4.8.1 prints it: signed integers with their sign (si32)."""
    name = value_type.mlir_type
    return "s" + name if name.startswith("i") else name


class Tensor:
    """`iterator o layout`. `t[coord]` reads, `t[coord] = v` writes, `t[(None, k)]` slices."""

    def __init__(self, iterator, layout, name: str | None = None):
        self.iterator = iterator          # ("memory", array, base) or a tuple coordinate
        self.layout = layout
        self.name = name

    # -- plain facts ---------------------------------------------------------------------------------------
    @property
    def shape(self):
        return self.layout.shape

    @property
    def stride(self):
        return self.layout.stride

    @property
    def is_coordinate(self) -> bool:
        return is_tuple(self.iterator) and not (self.iterator and self.iterator[0] in _POINTER_KINDS)

    @property
    def element_type(self):
        from . import typing
        if self.is_coordinate:
            return None
        if self.iterator[0] == "tmem":
            return self.iterator[1]
        if self.iterator[0] == "smem_desc":
            return None
        name = {"float32": "Float32", "float16": "Float16", "float64": "Float64", "int32": "Int32",
                "int8": "Int8", "int16": "Int16", "uint8": "Uint8"}.get(str(self.iterator[1].dtype))
        return getattr(typing, name) if name else None

    def with_layout(self, layout) -> "Tensor":
        return Tensor(self.iterator, layout, self.name)

    def __len__(self):
        return size(self.layout, mode=[0]) if is_tuple(self.layout.shape) else size(self.layout)

    def __iter__(self):
        return (self[i] for i in range(size(self.layout)))

    # -- reading and writing -------------------------------------------------------------------------------
    def _offset(self, coord):
        try:
            check_coordinate(coord, self.layout.shape)
        except CuteError as exc:
            label = f"tensor {self.name}" if self.name else f"tensor {self}"
            raise CuteError(f"{label}: {exc}") from None
        return self.layout(coord)

    def __getitem__(self, coord):
        if isinstance(coord, list):
            coord = tuple(coord)
        if self.is_coordinate:
            try:        # a kernel reads the same coordinates of layouts alike in every thread
                step, kept = _coordinate_step(self.layout, coord)
                value = step.added_to(self.iterator)
                return value if kept is None else Tensor(value, kept, self.name)
            except (CuteError, TypeError):
                pass    # out of range, unhashable: the general path below says why
        if _has_none(coord):
            kept = slice_(coord, self.layout)        # first: its error names the coordinate as written
            if self.is_coordinate:
                return Tensor(self._advance(_coordinate_offset(coord, self.layout)), kept, self.name)
            return Tensor(self._advance(slice_offset(coord, self.layout)), kept, self.name)
        offset = self._offset(coord)
        if self.is_coordinate:
            return self._advance(offset)
        if self.iterator[0] != "memory":
            raise CuteError(f"{self} is not in memory this reference can read (tensor memory and shared-memory "
                            f"descriptors are only described here): slice it with None to keep modes")
        _, array, base = self.iterator
        return array[base + offset].item()

    def __setitem__(self, coord, value):
        if self.is_coordinate:
            raise CuteError("a coordinate tensor (make_identity_tensor) is read-only")
        if isinstance(coord, list):
            coord = tuple(coord)
        offset = self._offset(coord)
        _, array, base = self.iterator
        array[base + offset] = value

    def _advance(self, offset):
        if self.is_coordinate:
            total = Coord.of(offset) if not is_int(offset) else Coord(())
            if is_int(offset) and offset != 0:
                raise CuteError("a coordinate tensor moved by a plain offset: its layout must use basis strides")
            return total.added_to(self.iterator)
        kind, array, base = self.iterator
        return (kind, array, base + offset)

    def values(self) -> list:
        """Every element, in layout order (index 0, 1, ... of the layout)."""
        return [self[i] for i in range(size(self.layout))]

    def __str__(self):
        if self.is_coordinate:
            return f"tensor<{fmt_coord(self.iterator)} o {self.layout}>"
        if self.iterator[0] == "tmem":
            return f"tensor<ptr<{_tmem_type_name(self.iterator[1])}, tmem, align<{_tmem_align(self.iterator[2])}>> o {self.layout}>"
        if self.iterator[0] == "smem_desc":
            return f"tensor<smem_desc<{self.iterator[1].name}-major>+{self.iterator[2]} o {self.layout}>"
        dtype = _DTYPE_NAMES.get(str(self.iterator[1].dtype), str(self.iterator[1].dtype))
        return f"tensor<ptr<{dtype}, numpy+{self.iterator[2]}> o {self.layout}>"

    __repr__ = __str__


@functools.lru_cache(maxsize=1 << 16)
def _coordinate_step(layout, coord):
    """(how far the coordinate moves, None) for an element of a coordinate tensor with this layout, or (how
    far, the kept layout) for a slice; remembered (a Coord is a value)."""
    if _has_none(coord):
        offset, kept = _coordinate_offset(coord, layout), slice_(coord, layout)
    else:
        check_coordinate(coord, layout.shape)
        offset, kept = layout(coord), None
    return (Coord(()) if is_int(offset) and offset == 0 else Coord.of(offset)), kept


def _coordinate_offset(coord, layout):
    """Where a slice of a coordinate tensor starts. CuTeDSL slices one at any coordinate, inside its shape or
    past it (NVIDIA's tensorop_gemm takes batch `bidz` of a one-batch identity tensor), so no range check.

    >>> str(make_identity_tensor((4, 4, 1))[None, None, 1])
    'tensor<(0,0,1) o (4,4):(1@0,1@1)>'
    """
    from .inttuple import crd2idx
    from .layout import _zero_none
    return crd2idx(_zero_none(coord), layout.shape, layout.stride)


def make_identity_tensor(shape) -> Tensor:
    """A tensor whose element at each coordinate is that coordinate (hierarchical for a hierarchical shape).

    >>> str(make_identity_tensor((4, 4)))
    'tensor<(0,0) o (4,4):(1@0,1@1)>'
    >>> identity = make_identity_tensor(((4, 2), 8))
    >>> str(identity), identity[5, 3]
    ('tensor<((0,0),0) o ((4,2),8):((1@0@0,1@1@0),1@1)>', ((1, 1), 3))
    """
    if is_int(shape):
        shape = (shape,)
    shape = as_algebra(shape)

    def strides(part, path):
        if is_tuple(part):
            return tuple(strides(sub, path + (i,)) for i, sub in enumerate(part))
        return Basis(1, path[0] if len(path) == 1 else path)

    def zeros(part):
        return tuple(zeros(sub) for sub in part) if is_tuple(part) else 0
    stride = tuple(strides(mode, (i,)) for i, mode in enumerate(shape))
    return Tensor(zeros(tuple(shape)), make_layout(tuple(shape), stride=stride))


def make_tensor(iterator, layout) -> Tensor:
    """A tensor over a NumPy array (or a CPU torch tensor) seen through `layout` (its flat storage is used)."""
    layout = _layout_of(layout)
    if hasattr(iterator, "detach") and hasattr(iterator, "numpy"):
        iterator = iterator.detach().numpy()
    if isinstance(iterator, Tensor):
        if iterator.is_coordinate:
            return Tensor(iterator.iterator, layout)
        return Tensor(iterator.iterator, layout)
    if not isinstance(iterator, numpy.ndarray):
        raise CuteError(f"make_tensor: expected a NumPy array, got {type(iterator).__name__}")
    flat = iterator.reshape(-1)
    if not numpy.shares_memory(flat, iterator) and iterator.size > 0:
        raise CuteError("make_tensor: the array must be contiguous so the layout can index its storage")
    span = layout(size(layout) - 1) + 1 if size(layout) else 0
    if span > flat.size:
        raise CuteError(f"make_tensor: layout {layout} reaches offset {span - 1}, but the array has only "
                        f"{flat.size} elements")
    return Tensor(("memory", flat, 0), layout)


def cute_slice(src, coord):
    """`cute.slice_(src, coord)` in CuTeDSL's order, the sliced thing first: the modes of a layout, composed
    layout, tensor or int tuple (an MMA tiler) where `coord` is None. A composed layout keeps its swizzle and its offset (CuTeDSL 4.8.1
    does not add the offset of the modes sliced away: stage 1 of a staged layout prints as stage 0 does).

    >>> str(cute_slice(make_layout((4, 8), stride=(8, 1)), (None, 1)))
    '(4):(8)'
    """
    slicing = (Layout, ComposedLayout, Tensor)
    if not isinstance(src, slicing) and isinstance(coord, slicing):
        raise CuteError(f"cute.slice_(src, coord) takes the layout or tensor first, then the coordinate (CuTeDSL's "
                        f"order); this call passes the coordinate {fmt_coord(src) if is_tuple(src) else src!r} "
                        f"first (CuTeDSL 4.8.1 returns () for that, without an error)")
    if isinstance(src, Tensor):
        return src[coord]
    if is_tuple(src) and is_tuple(coord):
        return _slice_int_tuple(coord, src)
    if isinstance(src, ComposedLayout):
        return ComposedLayout(src.inner, src.offset, slice_(coord, src.outer))
    return slice_(coord, src)


def _slice_int_tuple(coord, value):
    """The entries of an int tuple where `coord` is None, as CuTe slices a tuple: a nested coordinate's kept
    entries join their parent's, (None, 0, None) of (128, 256, 64) is (128, 64)."""
    def kept(c, v):
        if c is None:
            return (v,)
        if is_tuple(c):
            if not is_tuple(v) or len(c) != len(v):
                raise CuteError(f"cute.slice_: the coordinate {fmt_coord(coord)} does not match the modes of "
                                f"{fmt_coord(value)}")
            return tuple(x for ci, vi in zip(c, v) for x in kept(ci, vi))
        return ()
    return kept(coord, value)


def local_tile(input, tiler, coord, proj=None):
    """The tile of `input` at tile coordinate `coord` (inner partition): zipped_divide(input, tiler)[(None,...), coord],
    the tile's modes first, then the rest modes `coord` leaves open (None).

    As in CuTeDSL 4.8.1: a tiler of R modes needs a coordinate of at least R entries (an int for a 2-D tiler is
    refused), and the coordinate must have the profile of the rest: one entry per rest mode (the input's rank
    for a tuple tiler, a single int for a layout tiler). With `proj` (e.g. (1, None, 1)), the tiler and the
    coordinate keep only the modes where proj is not None.

    >>> str(local_tile(make_identity_tensor((64, 32)), (16, 8), (1, 2)))
    'tensor<(16,16) o (16,8):(1@0,1@1)>'
    >>> local_tile(make_identity_tensor((64, 32)), (16, 8), 3)
    Traceback (most recent call last):
    ...
    cutekit.cute.inttuple.CuteError: local_tile: expected a coordinate of rank 2 (one entry per mode of the tiler (16,8)) but got 3
    """
    layout = _layout_of(input)
    if is_tuple(tiler) and (len(coord) if is_tuple(coord) else 1) < len(tiler):
        raise CuteError(f"local_tile: expected a coordinate of rank {len(tiler)} (one entry per mode of the tiler "
                        f"{_show(tiler)}) but got {_show(coord)}")
    if proj is not None:
        if not (is_tuple(proj) and is_tuple(tiler) and is_tuple(coord) and len(proj) == len(tiler) <= len(coord)):
            raise CuteError(f"local_tile: proj {_show(proj)} needs one entry per mode of the tiler {_show(tiler)} and "
                            f"a coordinate {_show(coord)} at least as long")
        # CuTeDSL 4.8.1 drops the entries where proj is None and keeps those past proj's end
        tiler, coord = (tuple(x for i, x in enumerate(t) if i >= len(proj) or proj[i] is not None)
                        for t in (tiler, coord))
    divided = zipped_divide(input, make_layout(tiler) if is_int(tiler) else tiler)
    tile, rest = _layout_of(divided).shape
    if not is_tuple(tiler) and not is_tuple(tile):
        raise CuteError(f"local_tile: the tiler {_show(tiler)} cuts a tile of one int mode ({tile}) out of "
                        f"{_show(layout.shape)}, where CuTeDSL 4.8.1 wants the tile as a tuple of modes (its "
                        "coordinate and shape are then not weakly congruent); give the tiler as a tuple")
    if not (_same_profile(coord, rest) if is_tuple(coord) else not is_tuple(rest)):
        raise CuteError(f"local_tile: the coordinate {_show(coord)} does not have the profile of the tiles' shape "
                        f"{_show(rest)} (one entry per mode of the rest: the input's rank for a tuple tiler, one "
                        "int for a layout tiler)")
    if is_tuple(tiler):
        return divided[(tuple(None for _ in tiler), coord)]
    # a layout tiler's tile is one mode: its own modes come first, then the rest modes the coordinate left open
    piece = divided[(None, coord)]
    kept = _layout_of(piece)
    modes = [make_layout(s, stride=d) for s, d in zip(kept.shape, kept.stride)]
    tile = modes[0]
    front = [make_layout(s, stride=d) for s, d in zip(tile.shape, tile.stride)] if is_tuple(tile.shape) else [tile]
    out = front + modes[1:]
    return piece.with_layout(make_layout(tuple(m.shape for m in out), stride=tuple(m.stride for m in out)))


def _show(x) -> str:
    return fmt_coord(x) if is_tuple(x) else str(x)


def _same_profile(coord, shape) -> bool:
    """A coordinate with one entry per mode of `shape`, nested where it nests (an int or None inside stands for
    a whole mode)."""
    if not is_tuple(coord):
        return True
    return is_tuple(shape) and len(coord) == len(shape) and all(_same_profile(c, s) for c, s in zip(coord, shape))


def local_partition(input, thr_layout, index, proj=None):
    """The elements of `input` that thread `index` of `thr_layout` owns (outer partition): every element at
    the thread's coordinate inside each thr_layout-shaped tile."""
    thr_layout = _layout_of(thr_layout)
    tiler = thr_layout.shape if is_tuple(thr_layout.shape) else (thr_layout.shape,)
    if proj is not None:
        tiler = dice(proj, tiler)
    tiler = tuple(product(t) for t in tiler)
    coord = thr_layout.get_flat_coord(index)
    if proj is not None:
        coord = dice(proj, coord)
    divided = zipped_divide(input, tiler)
    rest_rank = len(divided.layout.shape[1]) if is_tuple(divided.layout.shape[1]) else 1
    return divided[(coord, tuple(None for _ in range(rest_rank)) if rest_rank > 1 else None)]
