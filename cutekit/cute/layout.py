"""Layouts and their algebra, as CuTeDSL 4.8.1 computes and prints them.

A `Layout` is a frozen pair (shape, stride) of congruent int-tuples: a function from coordinates to offsets.
Every operation is a free function returning a new layout. Where CuTeDSL refuses an input, so do we, with a
`CuteError` naming the rule.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

from .inttuple import (CuteError, Dynamic, as_algebra, ceil_div, check_coordinate, compact_col_major, congruent,
                       crd2idx as _crd2idx, depth as _depth, flatten as _flatten, transform, fmt, fmt_coord,
                       idx2crd as _idx2crd, is_int, is_tuple, prefix_products, product, rank as _rank, shape_div)


# ---- basis strides: the strides of identity (coordinate) layouts ------------------------------------------

@dataclass(frozen=True)
class Basis:
    """`k@i`: a stride that adds k to coordinate component i (CuTe's ScaledBasis). For a hierarchical
    coordinate `mode` is a path, outermost first; it prints innermost first, as CuTeDSL does (`1@1@0` adds 1
    to sub-mode 1 of mode 0)."""
    scale: int
    mode: object          # an int, or a tuple path into a nested coordinate

    def __mul__(self, k):
        if not is_int(k):
            raise CuteError(f"a basis stride {self} can only be scaled by an int, not {k!r}")
        return Basis(self.scale * k, self.mode)

    __rmul__ = __mul__

    def __add__(self, other):
        return Coord.of(self) + other

    __radd__ = __add__

    def __floordiv__(self, k):
        return Basis(self.scale // k, self.mode)

    def __str__(self):
        path = self.mode if isinstance(self.mode, tuple) else (self.mode,)
        return f"{self.scale}" + "".join(f"@{i}" for i in reversed(path))

    __repr__ = __str__


def _path(mode) -> tuple:
    return mode if isinstance(mode, tuple) else (mode,)


def _add_at(origin, path: tuple, value):
    if not path:
        return origin + value
    if not isinstance(origin, tuple) or path[0] >= len(origin):
        raise CuteError(f"a coordinate {fmt_coord(origin)} has no component at {path}")
    return tuple(_add_at(part, path[1:], value) if i == path[0] else part for i, part in enumerate(origin))


@dataclass(frozen=True)
class Coord:
    """A sum of basis strides: the value an identity layout gives (a coordinate, not an offset)."""
    parts: tuple  # ((mode, value), ...) sorted

    @staticmethod
    def of(x):
        if isinstance(x, Coord):
            return x
        if isinstance(x, Basis):
            return Coord(((_path(x.mode), x.scale),))
        if x == 0:
            return Coord(())
        raise CuteError(f"cannot add an offset {x!r} to a coordinate")

    def __add__(self, other):
        merged = dict(self.parts)
        for mode, value in Coord.of(other).parts:
            merged[mode] = merged.get(mode, 0) + value
        return Coord(tuple(sorted(merged.items())))

    __radd__ = __add__

    def as_tuple(self, rank: int) -> tuple:
        """The coordinate of a flat (rank-`rank`) tensor."""
        values = dict(self.parts)
        return tuple(values.get((i,), 0) for i in range(rank))

    def added_to(self, origin):
        """`origin` (a possibly nested coordinate) moved by this sum of basis strides."""
        for path, value in self.parts:
            origin = _add_at(origin, path, value)
        return origin


def _fmt_stride(d) -> str:
    return "(" + ",".join(_fmt_stride(p) for p in d) + ")" if is_tuple(d) else str(d)


# ---- the Layout type --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Layout:
    """shape:stride. Calling it at a coordinate (int, natural or hierarchical) gives the offset.

    >>> layout = make_layout((4, 8), stride=(8, 1))
    >>> str(layout), layout((1, 2)), layout(9)
    ('(4,8):(8,1)', 10, 10)
    """
    shape: object
    stride: object

    def __str__(self):
        return f"{fmt(self.shape)}:{_fmt_stride(self.stride)}"

    def __repr__(self):
        return str(self)

    def __call__(self, coord):
        if _has_none(coord):
            return slice_(coord, self)
        check_coordinate(coord, self.shape)
        return _crd2idx(coord, self.shape, self.stride)

    def __getitem__(self, i):
        return get(self, mode=[i])

    def __len__(self):
        return _rank(self.shape)

    def __iter__(self):
        return (get(self, mode=[i]) for i in range(_rank(self.shape)))

    def get_hier_coord(self, index: int):
        """The coordinate whose offset is `index` (the layout must hit it), nested as the shape is."""
        return _coord_of_offset(self, index)

    def get_flat_coord(self, index: int):
        """The coordinate whose offset is `index`, one integer per top-level mode (a nested mode's coordinate
        read colexicographically), as CuTeDSL 4.8.1 returns it: ((2),1,2,1):((1),0,2,0) gives (1, 0, 1, 0) for
        3, where get_hier_coord gives ((1,), 0, 1, 0)."""
        from .inttuple import crd2idx as _crd2idx
        hier = _coord_of_offset(self, index)
        if not is_tuple(self.shape):
            return hier
        return tuple(_crd2idx(c, s, compact_col_major(s)) if is_tuple(s) else c for c, s in zip(hier, self.shape))

    def with_shape(self, *shape):
        return composition(self, make_layout(shape if len(shape) > 1 else shape[0]))


def _has_none(c) -> bool:
    return c is None or (is_tuple(c) and any(_has_none(p) for p in c))


def _check_shape(shape, what="shape"):
    if is_tuple(shape):
        if len(shape) == 0:
            raise CuteError(f"{what} must not be an empty tuple")
        for p in shape:
            _check_shape(p, what)
    elif not is_int(shape) or shape < 1:
        raise CuteError(f"every {what} entry must be a positive int, got {shape!r}")


def make_layout(shape, *, stride=None) -> Layout:
    """A layout of `shape`; without `stride`, column-major (size-1 modes get stride 0).

    >>> str(make_layout((2, (2, 3)))), str(make_layout((1, 4)))
    ('(2,(2,3)):(1,(2,4))', '(1,4):(0,1)')
    """
    if isinstance(shape, Layout):
        return shape
    if isinstance(shape, list):
        shape = tuple(shape)
    _check_shape(shape)
    shape = as_algebra(shape)        # a run-time extent (cutekit.sim's Dynamic) keeps what is known of it
    if stride is None:
        return Layout(shape, compact_col_major(shape))
    if isinstance(stride, list):
        stride = tuple(stride)
    stride = as_algebra(stride)
    if not congruent(shape, stride):
        raise CuteError(f"make_layout: shape {fmt(shape)} and stride {_fmt_stride(stride)} are not congruent "
                        "(they must have the same nesting)")
    for d in _flatten(stride):
        if not (is_int(d) or isinstance(d, Basis)):
            raise CuteError(f"make_layout: every stride entry must be an int, got {d!r}")
    return Layout(shape, stride)


def make_ordered_layout(shape, order) -> Layout:
    """Compact layout whose modes get strides in increasing `order` (order=(1,0) is row-major).

    >>> str(make_ordered_layout((4, 32), order=(1, 0)))
    '(4,32):(32,1)'
    """
    _check_shape(shape)
    shape = as_algebra(shape)
    pairs = []              # (sub-shape, its order): an order entry may stand for a whole nested mode

    def pair(s, o):
        if is_tuple(o):
            if not is_tuple(s) or len(s) != len(o):
                raise CuteError(f"make_ordered_layout: order {fmt(order)} does not match the modes of shape "
                                f"{fmt(shape)} (each order entry names one mode or one nested mode)")
            return tuple(pair(si, oi) for si, oi in zip(s, o))
        if not is_int(o):
            raise CuteError(f"make_ordered_layout: every order entry must be an int, got {o!r}")
        pairs.append((s, o))
        return len(pairs) - 1
    where = pair(shape, order)
    # a mode's stride is the size of every mode with a smaller order (equal orders get the same stride)
    strides = [compact_col_major(s, product(tuple(product(t) for t, p in pairs if p < o))) for s, o in pairs]
    return Layout(shape, transform(lambda i: strides[i], where) if is_tuple(where) else strides[where])


def _unflatten_like(like, it):
    return tuple(_unflatten_like(p, it) for p in like) if is_tuple(like) else next(it)


def _as_layout(x) -> Layout:
    if isinstance(x, Layout):
        return x
    if is_int(x) or is_tuple(x):
        return make_layout(x)
    raise CuteError(f"expected a Layout or a shape, got {type(x).__name__}: {x!r}")


def _concat(*layouts) -> Layout:
    return Layout(tuple(l.shape for l in layouts), tuple(l.stride for l in layouts))


# ---- sizes and modes --------------------------------------------------------------------------------------

def _shape_of(x):
    if hasattr(x, "shape") and not is_tuple(x):
        return x.shape
    return x


def _select_path(x, path):
    for i in path:
        if isinstance(x, Layout):
            if not is_tuple(x.shape):
                if i != 0:
                    raise CuteError(f"mode {i} does not exist in rank-1 {x}")
                continue
            if not 0 <= i < len(x.shape):
                raise CuteError(f"mode {i} does not exist in {x} (rank {len(x.shape)})")
            x = Layout(x.shape[i], x.stride[i])
        else:
            if not is_tuple(x):
                if i != 0:
                    raise CuteError(f"mode {i} does not exist in {fmt(x)}")
                continue
            if not 0 <= i < len(x):
                raise CuteError(f"mode {i} does not exist in {fmt(x)} (rank {len(x)})")
            x = x[i]
    return x


def size(x, mode=()) -> int:
    """Number of coordinates (of one mode with `mode=[i, ...]`).

    >>> size(make_layout((4, (2, 3)))), size(make_layout((4, (2, 3))), mode=[1])
    (24, 6)
    """
    return product(_select_path(as_algebra(_shape_of(x)) if not isinstance(x, Layout) else x.shape, list(mode)))


def cosize(x, mode=()) -> int:
    """One past the largest offset: the memory the layout spans."""
    layout = get(_layout_of(x), mode=mode) if mode else _layout_of(x)
    return layout(size(layout) - 1) + 1


def rank(x, mode=()) -> int:
    """Number of top-level modes (of one mode with `mode=[i, ...]`); a mode path cannot enter an int.

    >>> rank(make_layout((4, (2, 3)))), rank(make_layout((4, (2, 3))), mode=[1])
    (2, 2)
    """
    shape = _shape_of(x) if not isinstance(x, Layout) else x.shape
    for i in mode:
        if not is_tuple(shape) or not 0 <= i < len(shape):
            raise CuteError(f"rank: mode {list(mode)} does not exist in shape {fmt(_shape_of(x))}")
        shape = shape[i]
    return _rank(shape)


def shape(x, *, mode=None):
    """The shape of a layout, tensor or tiler (a tuple of layouts and ints), or of its mode `mode`.

    >>> shape(make_layout((4, (2, 3)))), shape((make_layout(4), 8)), shape(make_layout((4, 8)), mode=0)
    ((4, (2, 3)), (4, 8), 4)
    """
    if is_tuple(x):
        value = tuple(shape(p) if not is_int(p) else p for p in x)
    elif is_int(x):
        value = x
    else:
        value = _layout_of(x).shape
    if mode is None:
        return value
    return get(value, mode=[mode] if is_int(mode) else list(mode))


def depth(x, mode=()) -> int:
    return _depth(_select_path(_shape_of(x) if not isinstance(x, Layout) else x.shape, list(mode)))


def _layout_of(x) -> Layout:
    if isinstance(x, Layout):
        return x
    if isinstance(x, ComposedLayout):    # size, cosize, rank... of a swizzled layout are its outer layout's
        return x.outer
    inner = getattr(x, "layout", None)
    if isinstance(inner, Layout):
        return inner
    return _as_layout(x)


def get(x, mode=()):
    """The sub-layout (or sub-tuple) at a mode path.

    >>> str(get(make_layout(((2, 3), 4)), mode=[0, 1]))
    '3:2'
    """
    return _select_path(x, list(mode))


def select(x, mode) -> Layout:
    """The layout made of the listed top-level modes, in that order.

    >>> str(select(make_layout((2, 3, 4)), mode=[2, 0]))
    '(4,2):(6,1)'
    """
    if isinstance(x, ComposedLayout):       # CuTeDSL selects the outer layout's modes, keeping the swizzle
        return ComposedLayout(x.inner, x.offset, select(x.outer, mode))
    modes = [get(x, mode=[i]) for i in mode]
    if isinstance(x, Layout):
        return _concat(*modes)
    return tuple(modes)


def group_modes(x, begin: int, end: int | None = None) -> Layout:
    """Gather modes [begin, end) into one mode.

    >>> str(group_modes(make_layout((2, 3, 4)), 0, 2))
    '((2,3),4):((1,2),6)'

    A tensor's modes are grouped in its layout: the result is the tensor, as in CuTeDSL.
    """
    if hasattr(x, "with_layout") and hasattr(x, "layout") and isinstance(x.layout, Layout):
        return x.with_layout(group_modes(x.layout, begin, end))
    layout = _layout_of(x)
    n = len(layout.shape) if is_tuple(layout.shape) else 1
    end = n if end is None else end
    modes = list(layout)
    if not (0 <= begin < end <= n):
        raise CuteError(f"group_modes: [{begin}, {end}) is not a range of modes of {layout} (rank {n})")
    grouped = _concat(*modes[begin:end])
    if not is_tuple(layout.shape):
        return grouped      # a single int mode grouped is that mode in a rank-1 tuple
    return _concat(*modes[:begin], grouped, *modes[end:])


def append(layout, other, up_to_rank=None) -> Layout:
    """`layout` with `other` as one more mode (or padded with 1:0 modes up to `up_to_rank`)."""
    layout = _layout_of(layout)
    modes = list(layout) if is_tuple(layout.shape) else [layout]
    if up_to_rank is not None:
        while len(modes) < up_to_rank:
            modes.append(Layout(1, 0))
        return _concat(*modes)
    return _concat(*modes, _layout_of(other))


def prepend(layout, other) -> Layout:
    layout = _layout_of(layout)
    modes = list(layout) if is_tuple(layout.shape) else [layout]
    return _concat(_layout_of(other), *modes)


def flatten(x):
    """All leaf modes side by side.

    >>> str(flatten(make_layout(((2, 3), 4))))
    '(2,3,4):(1,2,6)'
    """
    if isinstance(x, Layout):
        if not is_tuple(x.shape):
            return x
        return Layout(_flatten(x.shape), _flatten(x.stride))
    return _flatten(x) if is_tuple(x) else x


def crd2idx(coord, layout):
    """Offset of `coord` in `layout` (CuTeDSL's argument order).

    >>> crd2idx((1, 2), make_layout((4, 8)))
    9
    """
    layout = _layout_of(layout)
    _check_coordinate_form(coord, layout.shape)
    return _crd2idx(coord, layout.shape, layout.stride)


def _check_coordinate_form(coord, shape):
    """Ranks must match where a coordinate is a tuple; values are not bounded (CuTeDSL computes past the end)."""
    if is_tuple(coord):
        if not is_tuple(shape) or len(coord) != len(shape):
            if not is_tuple(shape) and len(_flatten(coord)) == 1:
                return
            raise CuteError(f"crd2idx: coordinate {fmt_coord(coord)} does not match the modes of shape {fmt(shape)}")
        for c, s in zip(coord, shape):
            _check_coordinate_form(c, s)
    elif not is_int(coord):
        raise CuteError(f"crd2idx: a coordinate must be an int or a tuple of ints, got {coord!r}")


def idx2crd(index, shape):
    """Natural coordinate of a 1-D index in a shape (column-major); past the end, the last mode keeps counting.

    >>> idx2crd(13, (4, 8)), idx2crd(35, (4, 8))
    ((1, 3), (3, 8))
    """
    _check_coordinate_form(index, shape)
    return _idx2crd(index, shape)


def _modes_flat(layout: Layout):
    return list(zip(_flatten(layout.shape), _flatten(layout.stride)))


def _from_modes(modes) -> Layout:
    if not modes:
        return Layout(1, 0)
    if len(modes) == 1:
        return Layout(modes[0][0], modes[0][1])
    return Layout(tuple(m[0] for m in modes), tuple(m[1] for m in modes))


def _coalesce_flat(layout: Layout) -> Layout:
    merged = []
    for s, d in _modes_flat(layout):
        if s == 1 and not isinstance(s, Dynamic):          # a run-time extent is not known to be 1
            continue
        # modes merge where one provably continues the other: never across a run-time value (CuTeDSL keeps
        # (?,4):(1,?) as it is, whatever ? turns out to be)
        if merged and merged[-1][0] * merged[-1][1] == d and not any(
                isinstance(v, Dynamic) for v in (merged[-1][0], merged[-1][1], d)):
            merged[-1] = (merged[-1][0] * s, merged[-1][1])
        else:
            merged.append((s, d))
    return _from_modes(merged)


def coalesce(x, target_profile=None):
    """Same function, fewest modes: drop size-1 modes, merge modes where one continues the other.

    With `target_profile`, coalesce each mode separately and keep the profile's rank.

    >>> str(coalesce(make_layout((2, 1, 3), stride=(1, 6, 2)))), str(coalesce(make_layout((1, 1))))
    ('6:1', '1:0')
    """
    if isinstance(x, ComposedLayout):
        return ComposedLayout(x.inner, x.offset, coalesce(x.outer, target_profile))
    layout = _layout_of(x)
    if target_profile is None or is_int(target_profile):
        return _coalesce_flat(layout)
    if not is_tuple(layout.shape) or len(layout.shape) < len(target_profile):
        raise CuteError(f"coalesce: target_profile {fmt(target_profile)} has more modes than {layout}")
    return _concat(*(coalesce(mode, target_profile[i]) if i < len(target_profile) else mode
                     for i, mode in enumerate(layout)))


def filter_zeros(x):
    """Stride-0 modes become size 1 (their coordinates never move the offset).

    >>> str(filter_zeros(make_layout((2, 1, 3), stride=(1, 6, 0))))
    '(2,1,1):(1,6,0)'
    """
    layout = _layout_of(x)
    from .inttuple import transform
    shape = transform(lambda s, d: 1 if d == 0 else s, layout.shape, layout.stride)
    return Layout(shape, layout.stride)


def filter(x):  # noqa: A001 (CuTeDSL's name)
    """filter_zeros, then coalesce: the layout's distinct offsets, fewest modes.

    >>> str(filter(make_layout((2, 1, 3), stride=(1, 6, 0))))
    '2:1'
    """
    return coalesce(filter_zeros(x))


# ---- composition, complement, inverses ------------------------------------------------------------------

def composition(a, b):
    """(a o b)(c) = a(b(c)). `b` may be a layout, an int n (meaning make_layout(n)), or a tiler tuple: entry i
    composes with mode i of `a`, and the modes of `a` the tiler does not reach are dropped, as in CuTeDSL.

    >>> str(composition(make_layout((4, 8), stride=(8, 1)), make_layout((2, 2), stride=(1, 4))))
    '(2,2):(8,1)'
    >>> str(composition(make_layout((4, 8, 2)), (2, 4)))
    '(2,4):(1,4)'
    """
    if isinstance(a, Swizzle):
        raise CuteError("composition: a Swizzle cannot be composed directly; use make_composed_layout(swizzle, "
                        "0, layout)")
    if hasattr(a, "layout") and not isinstance(a, (Layout, ComposedLayout)) and hasattr(a, "with_layout"):
        return a.with_layout(composition(a.layout, b))
    if isinstance(a, ComposedLayout):
        return ComposedLayout(a.inner, a.offset, composition(a.outer, b))
    if not isinstance(a, Layout):
        a = _as_layout(a)
    if b is None:
        return a
    if is_tuple(b):
        modes = _modes(a)
        if len(b) > len(modes):
            raise CuteError(f"composition: the tiler {fmt_coord(b)} has {len(b)} modes but {a} has only "
                            f"{len(modes)}")
        return _concat(*(composition(modes[i], b[i]) for i in range(len(b))))
    if is_int(b):
        b = make_layout(b)
    if not isinstance(b, Layout):
        raise CuteError(f"composition: the right-hand side must be a Layout, an int or a tiler tuple, got {b!r}")
    return _compose(_coalesce_x(a), a, b.shape, b.stride)


def _coalesce_x(layout: Layout):
    """The flat modes of `layout`, coalesced from the back, where a trailing size-1 mode counts as size 2 so its
    stride survives: the same function inside the domain and past it (CuTe's coalesce_x, used by composition)."""
    flat = _modes_flat(layout)
    last_shape, last_stride = flat[-1]
    new = [(2 if last_shape == 1 else last_shape, last_stride)]
    for s, d in reversed(flat[:-1]):
        if s == 1:
            continue
        if new[0][0] == 1:
            new[0] = (s, d)
        elif s * d == new[0][1]:
            new[0] = (s * new[0][0], d)
        else:
            new.insert(0, (s, d))
    return new


def _static_one(x) -> bool:
    """x is 1 and known to be while the layout is built (not a run-time value that happens to be 1)."""
    return x == 1 and not isinstance(x, Dynamic)


def _compose(lhs_modes, a, rhs_shape, rhs_stride):
    """composition_impl: `lhs_modes` (flat, coalesced) composed with rhs_shape:rhs_stride, mode by mode of the
    right-hand side (right-distributivity)."""
    if is_tuple(rhs_shape):
        parts = [_compose(lhs_modes, a, s, d) for s, d in zip(rhs_shape, rhs_stride)]
        return Layout(tuple(p.shape for p in parts), tuple(p.stride for p in parts))
    if isinstance(rhs_stride, Basis):
        raise CuteError(f"composition: {a} o {rhs_shape}:{rhs_stride} (a basis stride on the right) is not "
                        "supported by cutekit")
    if rhs_stride == 0:
        return Layout(rhs_shape, 0)
    if len(lhs_modes) == 1:
        return Layout(rhs_shape, rhs_stride * lhs_modes[0][1])
    result, rest_shape, rest_stride = [], rhs_shape, rhs_stride
    for curr_shape, curr_stride in lhs_modes[:-1]:
        if curr_shape == 0:
            raise CuteError(f"composition: {a} has a mode of size 0 (a complement of a non-injective layout), "
                            "so nothing can be composed with it")
        if not (rest_stride % curr_shape == 0 or rest_stride < curr_shape):
            raise CuteError(f"composition: stride divisibility condition broken: {a} o {rhs_shape}:{rhs_stride} "
                            f"needs the stride {rest_stride} to be a multiple of the mode size {curr_shape}, or "
                            "smaller than it")
        next_shape = ceil_div(curr_shape, abs(rest_stride))
        next_stride = ceil_div(abs(rest_stride), curr_shape) * (1 if rest_stride > 0 else -1)
        # CuTe skips a mode only where it is known to be 1 while it composes; a run-time extent that turns out
        # to be 1 stays a mode of its own (CuTeDSL composes (10,2):(16,4) o (5,4):(1,5) of Int32 values into
        # ((5,1),(2,2)):((16,4),(80,4)), of static ints into (5,(2,2)):(16,(80,4)))
        if not _static_one(next_shape) and not _static_one(rest_shape):
            new_shape = min(next_shape, rest_shape)
            if rest_shape % new_shape != 0:
                raise CuteError(f"composition: shape divisibility condition broken: {a} o {rhs_shape}:{rhs_stride} "
                                f"needs {new_shape} to divide {rest_shape}")
            result.append((new_shape, rest_stride * curr_stride))
            rest_shape //= new_shape
        rest_stride = next_stride
    if not result:
        return Layout(rest_shape, rest_stride * lhs_modes[-1][1])
    if _static_one(rest_shape):
        return _from_modes(result)
    # When a rest mode is left for the last mode of `a`, CuTeDSL coalesces the whole result: a stride smaller
    # than the mode it starts in can split one run ((5,4):(8,64) o 4:4 is (2,2):(32,64) by the rule, printed 4:32)
    return _coalesce_flat(_from_modes(result + [(rest_shape, rest_stride * lhs_modes[-1][1])]))


def _ceil_div_shape(a, b: int):
    """ceil_div(shape, n): n divided out of the modes left to right, each rounded up (CuTe's tuple ceil_div)."""
    if not is_tuple(a):
        return ceil_div(a, b)
    out = []
    for part in a:
        out.append(_ceil_div_shape(part, b))
        b = ceil_div(b, product(part))
    return tuple(out)


def complement(layout, cotarget=None):
    """The layout that fills the gaps of `layout` up to `cotarget`, strides increasing.

    Built as CuTe builds it, from the modes sorted by stride: each gap is (stride / the stride reached so far).
    For an overlapping layout a gap comes out 0, as in CuTeDSL (which does not refuse here).

    >>> str(complement(make_layout(4, stride=2), 24)), str(complement(make_layout(4), 24))
    ('(2,3):(1,8)', '6:4')
    """
    layout = _layout_of(layout)
    if cotarget is None:
        cotarget = cosize(layout)
    elif isinstance(cotarget, Layout):
        cotarget = cotarget.shape
    modes = _modes_flat(filter(layout))
    if len(modes) == 1 and modes[0][1] == 0:
        return make_layout(product(cotarget))
    result_shape, result_stride = [], [1]
    while len(modes) > 1:
        i = min(range(len(modes)), key=lambda k: modes[k][1])
        s, d = modes.pop(i)
        result_shape.append(d // result_stride[-1])
        result_stride.append(d * s)
    s, d = modes[0]
    result_shape.append(d // result_stride[-1])
    rest_stride = d * s
    rest = product(_ceil_div_shape(cotarget, rest_stride))
    return _coalesce_flat(_from_modes(list(zip(result_shape, result_stride)) + [(rest, rest_stride)]))


def _sorted_by_stride(modes):
    return sorted(range(len(modes)), key=lambda i: modes[i][1])


def right_inverse(layout):
    """R with layout(R(i)) == i for every i in [0, size(R)): the modes met by following the strides from 1.

    >>> str(right_inverse(make_layout((4, 8), stride=(8, 1))))
    '(8,4):(4,1)'
    """
    modes = _modes_flat(_coalesce_flat(_layout_of(layout)))
    prefixes = _flatten(prefix_products(tuple(s for s, _ in modes)))
    out, current = [(1, 0)], 1
    for i in _sorted_by_stride(modes):
        s, d = modes[i]
        if d == current:
            out.append((s, prefixes[i]))
            current = s * d
    return _coalesce_flat(_from_modes(out))


def left_inverse(layout):
    """L with L(layout(c)) == c (as a 1-D index) for every coordinate c of an injective layout; gaps map to
    stride 0. Each mode, in stride order, must start at a multiple of the stride before it.

    >>> str(left_inverse(make_layout((2, 2), stride=(2, 4))))
    '(2,4):(0,1)'
    """
    modes = _modes_flat(_coalesce_flat(_layout_of(layout)))
    prefixes = _flatten(prefix_products(tuple(s for s, _ in modes)))
    order = _sorted_by_stride(modes)
    shapes, strides, reached = [], [0], 1
    for i in order:
        d = modes[i][1]
        if d == 0:
            continue
        if d % reached != 0:
            raise CuteError(f"left_inverse: divisibility condition broken: in {layout} the stride {d} is not a "
                            f"multiple of the stride {reached} before it")
        shapes.append(d // reached)
        strides.append(prefixes[i])
        reached = d
    if not shapes:       # a layout that never leaves offset 0 has the trivial inverse, as in CuTeDSL
        return Layout(1, 0)
    shapes.append(modes[order[-1]][0])
    return _coalesce_flat(_from_modes(list(zip(shapes, strides))))


def _coord_of_offset(layout: Layout, index: int):
    for i in range(size(layout)):
        if layout(i) == index:
            return _idx2crd(i, layout.shape)
    raise CuteError(f"{layout} never reaches offset {index}")


# ---- divide and product -----------------------------------------------------------------------------------

def _tiler_mode(t):
    if t is None or isinstance(t, Layout):
        return t
    if is_int(t):
        return make_layout(t)       # compact: t:1, and 1:0 for a size-1 tile (CuTeDSL's make_layout(1))
    if is_tuple(t):
        return make_layout(t)
    raise CuteError(f"a tiler entry must be an int, a Layout or None, got {t!r}")


def _is_tiler_tuple(tiler) -> bool:
    return is_tuple(tiler)


def _modes(layout: Layout):
    return list(layout) if is_tuple(layout.shape) else [layout]


def logical_divide(target, tiler):
    """Split `target` into (tile, rest): composition(target, (tiler, complement(tiler, size(target)))).

    A tuple tiler divides mode by mode.

    >>> str(logical_divide(make_layout(16), make_layout(4, stride=2)))
    '(4,(2,2)):(2,(1,8))'
    """
    if _is_tensor(target):
        return target.with_layout(logical_divide(target.layout, tiler))
    if isinstance(target, ComposedLayout):
        return ComposedLayout(target.inner, target.offset, logical_divide(target.outer, tiler))
    target = _layout_of(target)
    if _is_tiler_tuple(tiler):
        modes = _modes(target)
        if len(tiler) > len(modes):
            raise CuteError(f"logical_divide: the tiler {fmt_coord(tiler)} has {len(tiler)} modes but {target} has "
                            f"only {len(modes)}")
        return _concat(*(logical_divide(modes[i], tiler[i]) if i < len(tiler) and tiler[i] is not None
                         else modes[i] for i in range(len(modes))))
    tile = _tiler_mode(tiler)
    rest = complement(tile, _coalesce_flat(target).shape)
    if 0 in _flatten(rest.shape):
        raise CuteError(f"logical_divide: the tiler {tile} is not injective (two of its coordinates reach the same "
                        f"offset), so it has no complement and {target} cannot be divided by it")
    # the complement reaches the target's coalesced shape mode by mode (CuTe: complement(tiler, shape(coalesce(A))))
    return composition(target, _concat(tile, rest))


def _zip2_by(layout: Layout, guide):
    """(tile, rest) of a divided mode: a leaf tiler entry left the mode as (tile, rest); a tuple entry divided
    its sub-modes one by one, so their tiles and rests are gathered recursively (CuTe's zip2_by)."""
    modes = _modes(layout)
    if is_tuple(guide):
        if len(guide) > len(modes):
            raise CuteError(f"the tiler {fmt_coord(guide)} has more modes than {layout}")
        pairs = [_zip2_by(modes[i], guide[i]) for i in range(len(guide))]
        return _concat(*(p[0] for p in pairs)), _concat(*(p[1] for p in pairs), *modes[len(guide):])
    if len(modes) != 2:
        raise CuteError(f"the mode {layout} was not divided into (tile, rest) by the tiler entry "
                        f"{'None' if guide is None else guide}, so it cannot be zipped (CuTeDSL refuses it too)")
    return modes[0], modes[1]


def _zip_divided(divided: Layout, tiler, how: str):
    """The (tile, rest) pairs of a divide or product gathered as `how` says: zipped ((tiles),(rests)), tiled
    ((tiles),rest_0,rest_1,...) or flat (tile_0,...,rest_0,...). A layout tiler left one pair already."""
    modes = _modes(divided)
    if not _is_tiler_tuple(tiler):
        tile, rest = modes
        if how == "zipped":
            return divided
        if how == "tiled":
            return _concat(tile, *_modes(rest))
        return _concat(*_modes(tile), *_modes(rest))
    pairs = [_zip2_by(modes[i], tiler[i]) for i in range(len(tiler))]
    tiles = [p[0] for p in pairs]
    rests = [p[1] for p in pairs] + modes[len(tiler):]
    if how == "zipped":
        return _concat(_concat(*tiles), _concat(*rests))
    if how == "tiled":
        return _concat(_concat(*tiles), *rests)
    return _concat(*tiles, *rests)


def _divide(target, tiler, how):
    if is_int(tiler):
        raise CuteError(f"{how}_divide: CuTeDSL 4.8.1 refuses an int tiler ({tiler}) here; give a tuple "
                        f"({tiler},) or a layout make_layout({tiler})")
    if _is_tensor(target):
        return target.with_layout(_divide(target.layout, tiler, how))
    if isinstance(target, ComposedLayout):
        return ComposedLayout(target.inner, target.offset, _divide(target.outer, tiler, how))
    return _zip_divided(logical_divide(target, tiler), tiler, how)


def zipped_divide(target, tiler):
    """((tile modes), (rest modes)): slice `[(None, ...), k]` to get tile k.

    >>> str(zipped_divide(make_layout((8, 6)), (4, 3)))
    '((4,3),(2,2)):((1,8),(4,24))'
    """
    return _divide(target, tiler, "zipped")


def tiled_divide(target, tiler):
    """((tile modes), rest_0, rest_1, ...).

    >>> str(tiled_divide(make_layout((8, 6)), (4, 3)))
    '((4,3),2,2):((1,8),4,24)'
    """
    return _divide(target, tiler, "tiled")


def flat_divide(target, tiler):
    """(tile_0, tile_1, ..., rest_0, rest_1, ...).

    >>> str(flat_divide(make_layout((8, 6)), (4, 3)))
    '(4,3,2,2):(1,8,4,24)'
    """
    return _divide(target, tiler, "flat")


def logical_product(block, tiler):
    """(block, tiler placed where block is not): make_layout(block, complement(block, size*cosize) o tiler).

    >>> str(logical_product(make_layout((2, 2)), make_layout((3, 4))))
    '((2,2),(3,4)):((1,2),(4,12))'
    """
    block = _layout_of(block)
    if _is_tiler_tuple(tiler):
        modes = _modes(block)
        if len(tiler) > len(modes):
            raise CuteError(f"logical_product: the tiler has {len(tiler)} modes but {block} has {len(modes)}")
        return _concat(*(logical_product(modes[i], tiler[i]) if i < len(tiler) and tiler[i] is not None
                         else modes[i] for i in range(len(modes))))
    tiler = _tiler_mode(tiler)
    return _concat(block, composition(complement(block, size(block) * cosize(tiler)), tiler))


def _product(block, tiler, how):
    if not isinstance(tiler, Layout):
        raise CuteError(f"{how}_product: CuTeDSL 4.8.1 takes only a Layout as the tiler here, got {tiler!r}; "
                        "use logical_product for a tuple of tiles, or make_layout(...) for a shape")
    return _zip_divided(logical_product(block, tiler), tiler, how)


def zipped_product(block, tiler):
    """((block modes), (tiler modes placed where block is not)): logical_product, zipped.

    >>> str(zipped_product(make_layout((2, 2)), make_layout((3, 4))))
    '((2,2),(3,4)):((1,2),(4,12))'
    """
    return _product(block, tiler, "zipped")


def tiled_product(block, tiler):
    """((block modes), tiler mode 0, tiler mode 1, ...).

    >>> str(tiled_product(make_layout((2, 2)), make_layout((3, 4))))
    '((2,2),3,4):((1,2),4,12)'
    """
    return _product(block, tiler, "tiled")


def flat_product(block, tiler):
    """(block mode 0, block mode 1, ..., tiler mode 0, ...).

    >>> str(flat_product(make_layout((2, 2)), make_layout((3, 4))))
    '(2,2,3,4):(1,2,4,12)'
    """
    return _product(block, tiler, "flat")


def _append_to_rank(layout: Layout, r: int) -> Layout:
    """CuTe's append<R>: pad with 1:0 modes up to rank r; a rank-1 layout that is not a tuple stays as it is
    when r is 1."""
    if r == 1 and not is_tuple(layout.shape):
        return layout
    modes = _modes(layout)
    return _concat(*modes, *[Layout(1, 0)] * (r - len(modes)))


def _zip_modes(first: Layout, second: Layout, name: str, block, tiler) -> Layout:
    """CuTe's zip of two layouts: ((first_0, second_0), (first_1, second_1), ...); a first that is not a
    tuple pairs as a whole: ((first, second))."""
    if not is_tuple(first.shape):
        return _concat(_concat(first, second))
    if not is_tuple(second.shape) or len(first.shape) != len(second.shape):
        raise CuteError(f"{name}: the ranks of {block} and {tiler} do not match up mode by mode (one is a rank-1 "
                        "tuple, the other not); CuTeDSL cannot zip them, so give both the same form")
    return _concat(*(_concat(f, s) for f, s in zip(first, second)))


def _rank_matched_product(block, tiler):
    block, tiler = _layout_of(block), _layout_of(tiler)
    r = max(_rank(block.shape), _rank(tiler.shape))
    return logical_product(_append_to_rank(block, r), _append_to_rank(tiler, r))


def blocked_product(block, tiler):
    """Each mode i is (block_i, tiler_i): copies of `block` laid out by `tiler`, block-contiguous.

    >>> str(blocked_product(make_layout((2, 2)), make_layout((3, 4))))
    '((2,3),(2,4)):((1,4),(2,12))'
    """
    prod = _rank_matched_product(block, tiler)
    return _zip_modes(prod[0], prod[1], "blocked_product", block, tiler)


def raked_product(block, tiler):
    """Each mode i is (tiler_i, block_i): the block's elements interleaved (raked) across the tiler.

    >>> str(raked_product(make_layout((2, 2)), make_layout((3, 4))))
    '((3,2),(4,2)):((4,1),(12,2))'
    """
    prod = _rank_matched_product(block, tiler)
    raked = _zip_modes(prod[1], prod[0], "raked_product", block, tiler)
    return coalesce(raked, (1,) * _rank(raked.shape))    # CuTeDSL coalesces each mode it rakes


def make_layout_tv(thr_layout, val_layout):
    """(tiler_mn, layout_tv): the tile covered by `thr_layout` threads each holding `val_layout` values,
    and the map (thread, value) -> column-major index in that tile.

    >>> tiler, tv = make_layout_tv(make_ordered_layout((4, 32), order=(1, 0)), make_ordered_layout((4, 4), order=(1, 0)))
    >>> tiler, str(tv)
    ((16, 128), '((32,4),(4,4)):((64,4),(16,1))')
    """
    thr_layout, val_layout = _layout_of(thr_layout), _layout_of(val_layout)
    layout_mn = raked_product(thr_layout, val_layout)
    tiler = tuple(size(mode) for mode in _modes(layout_mn))
    layout_tv = composition(right_inverse(layout_mn), make_layout((size(thr_layout), size(val_layout))))
    return tiler, layout_tv


def tile_to_shape(atom, trg_shape, order=None):
    """Repeat `atom` until it covers `trg_shape` (each mode must be a multiple of the atom's), in `order`.

    >>> str(tile_to_shape(make_layout((8, 8), stride=(8, 1)), (32, 64), (0, 1)))
    '((8,4),(8,8)):((8,64),(1,256))'
    """
    if isinstance(atom, ComposedLayout):
        return ComposedLayout(atom.inner, atom.offset, tile_to_shape(atom.outer, trg_shape, order))
    atom = _layout_of(atom)
    atom_shape = tuple(size(m) for m in _modes(atom))
    trg_shape = tuple(trg_shape)
    if len(trg_shape) < len(atom_shape):
        raise CuteError(f"tile_to_shape: target {fmt(trg_shape)} has fewer modes than the atom {atom}")
    atom_shape = atom_shape + (1,) * (len(trg_shape) - len(atom_shape))
    # CuTeDSL rounds up where the atom does not divide the target (C++ CuTe asserts instead)
    reps = tuple(ceil_div(size(t), a) for t, a in zip(trg_shape, atom_shape))
    order = tuple(range(len(reps))) if order is None else order
    return blocked_product(atom, make_ordered_layout(reps, order=order))


def recast_layout(new_type_bits: int, old_type_bits: int, src_layout):
    """The same memory seen as elements of another width (upcast merges, downcast splits unit-stride modes).

    >>> str(recast_layout(32, 16, make_layout((4, 8), stride=(8, 1))))
    '(4,4):(4,1)'
    """
    from .inttuple import transform
    layout = _layout_of(src_layout)
    if new_type_bits == old_type_bits:
        return layout
    if new_type_bits > old_type_bits:
        if new_type_bits % old_type_bits:
            raise CuteError(f"recast_layout: {new_type_bits} bits is not a multiple of {old_type_bits}")
        n = new_type_bits // old_type_bits

        def up(s, d):
            # CuTe's upcast; CuTeDSL's shape_div rounds up where neither value divides the other
            if d == 0:
                return (s, 0)
            return (ceil_div(s, ceil_div(n, abs(d))), ceil_div(d, n))
        pairs = transform(lambda s, d: up(s, d), layout.shape, layout.stride)
    else:
        if old_type_bits % new_type_bits:
            raise CuteError(f"recast_layout: {old_type_bits} bits is not a multiple of {new_type_bits}")
        n = old_type_bits // new_type_bits
        pairs = transform(lambda s, d: (s * n, 1) if d == 1 else (s, d * n), layout.shape, layout.stride)
    return Layout(_pick(pairs, 0, layout.shape), _pick(pairs, 1, layout.shape))


def _pick(pairs, k, like):
    return tuple(_pick(p, k, l) for p, l in zip(pairs, like)) if is_tuple(like) else pairs[k]


def _common_run(a, b):
    inverse_b = right_inverse(_layout_of(b))
    common = coalesce(composition(_layout_of(a), inverse_b))
    first = common if not is_tuple(common.shape) else common[0]
    return inverse_b, first


def max_common_layout(a, b) -> Layout:
    """The layout of the longest run of b's offsets 0, 1, 2, ... that `a` also maps to 0, 1, 2, ...:
    right_inverse(b) cut to the first mode of coalesce(a o right_inverse(b)) when that mode has stride 1,
    else 1:0.

    >>> str(max_common_layout(make_layout((4, 8), stride=(8, 1)), make_layout((4, 8), stride=(8, 1))))
    '(8,4):(4,1)'
    """
    inverse_b, first = _common_run(a, b)
    if first.stride == 1:
        return composition(inverse_b, first)
    return Layout(1, 0)


def max_common_vector(a, b) -> int:
    """How many consecutive elements both layouts keep consecutive (the widest common vector).

    >>> max_common_vector(make_layout((4, 8), stride=(8, 1)), make_layout((4, 8), stride=(8, 1)))
    32
    """
    _, first = _common_run(a, b)
    return first.shape if first.stride == 1 else 1


def slice_(coord, layout):
    """The modes of `layout` where `coord` is None (CuTe's underscore), side by side: each None keeps its
    whole sub-mode, and the kept modes are concatenated across the coordinate's nesting, as CuTeDSL does
    (((None,None),(0,None)) on ((128,16),(1,2)) keeps (128,16,2); (None,(0,1)) keeps ((128,16)), rank 1).

    >>> str(slice_(((None, None), (0, None)), make_layout(((128, 16), (1, 2)))))
    '(128,16,2):(1,128,2048)'
    >>> str(slice_((None, 3), make_layout((128, 32))))
    '(128):(1)'
    """
    layout = _layout_of(layout)
    if coord is None:
        return layout
    kept = _sliced(coord, layout.shape, layout.stride)
    if not kept:
        return Layout(1, 0)
    return Layout(tuple(k[0] for k in kept), tuple(k[1] for k in kept))


def _sliced(coord, shape, stride):
    if coord is None:
        return [(shape, stride)]
    if is_tuple(coord):
        if not is_tuple(shape) or len(coord) != len(shape):
            raise CuteError(f"slice {fmt_coord(coord)} does not match shape {fmt(shape)}")
        return [kept for c, s, d in zip(coord, shape, stride) for kept in _sliced(c, s, d)]
    return []


def _flatten_none(c):
    return tuple(x for p in c for x in _flatten_none(p)) if is_tuple(c) else (c,)


def slice_offset(coord, layout):
    """The offset of the fixed part of a slice coordinate (None counts as 0)."""
    from .inttuple import transform
    layout = _layout_of(layout)
    fixed = _zero_none(coord)
    check_coordinate(fixed, layout.shape)
    return _crd2idx(fixed, layout.shape, layout.stride)


def _zero_none(c):
    if c is None:
        return 0
    return tuple(_zero_none(p) for p in c) if is_tuple(c) else c


def dice(proj, x):
    """Keep the entries of `x` where `proj` is not None (the complement of a slice)."""
    if proj is None:
        return ()
    if is_tuple(proj):
        kept = tuple(dice(p, xi) for p, xi in zip(proj, x) if p is not None)
        return kept
    return x


def _is_tensor(x) -> bool:
    return hasattr(x, "with_layout") and hasattr(x, "layout")


# ---- swizzles ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Swizzle:
    """S<B,M,S>: XOR the B bits found S above bit M into the B bits at M: offset ^ ((offset & yyy) >> S).

    >>> sw = make_swizzle(3, 3, 3)
    >>> str(sw), sw(0b111_000_000), sw(8)
    ('S<3,3,3>', 504, 8)
    """
    bits: int
    base: int
    shift: int

    def __call__(self, offset: int) -> int:
        yyy = ((1 << self.bits) - 1) << (self.base + max(0, self.shift))
        zzz = ((1 << self.bits) - 1) << (self.base - min(0, self.shift))
        if self.shift >= 0:
            return offset ^ ((offset & yyy) >> self.shift)
        return offset ^ ((offset & zzz) << -self.shift)

    def __str__(self):
        return f"S<{self.bits},{self.base},{self.shift}>"

    __repr__ = __str__


def make_swizzle(b: int, m: int, s: int) -> Swizzle:
    for name, v in (("b", b), ("m", m)):
        if not is_int(v) or v < 0:
            raise CuteError(f"make_swizzle: {name} must be a non-negative int, got {v!r}")
    if not is_int(s) or abs(s) < b:
        raise CuteError(f"make_swizzle: |s| must be at least b so the two bit fields do not overlap "
                        f"(b={b}, s={s})")
    return Swizzle(b, m, s)


@dataclass(frozen=True)
class ComposedLayout:
    """inner o offset o outer: c -> inner(offset + outer(c)); CuTe's swizzled shared-memory layouts."""
    inner: object
    offset: int
    outer: Layout

    @property
    def shape(self):
        return self.outer.shape

    def __call__(self, coord):
        if _has_none(coord):
            # CuTeDSL 4.8.1 reads None as 0 here and returns an offset (0 for stage 0 of a staged layout), not a
            # slice: refused, so that code written against cutekit does not silently differ on CuTeDSL
            raise CuteError(f"calling a composed layout with None in the coordinate ({fmt_coord(coord)}) does not "
                            f"slice it: CuTeDSL 4.8.1 returns the offset of that coordinate with None read as 0, an "
                            f"int. Slice it with cute.slice_(layout, {fmt_coord(coord)})")
        return self.inner(self.offset + self.outer(coord))

    def __str__(self):
        return f"{self.inner} o {self.offset} o {self.outer}"

    __repr__ = __str__


def make_composed_layout(inner, offset, outer) -> ComposedLayout:
    """inner o offset o outer, printed as CuTeDSL prints it.

    >>> str(make_composed_layout(make_swizzle(3, 3, 3), 0, make_layout((8, (8, 8)), stride=(8, (1, 64)))))
    'S<3,3,3> o 0 o (8,(8,8)):(8,(1,64))'
    """
    if not isinstance(outer, Layout):
        raise CuteError(f"make_composed_layout: outer must be a Layout, got {outer!r}")
    return ComposedLayout(inner, offset, outer)


# ---- memoization --------------------------------------------------------------------------------------
# Layouts are immutable values, so every function above is pure. A simulated kernel asks the same questions
# once per thread (the same partition, the same slice), so the answers are kept. Calls that involve a
# tensor are never cached (a tensor is a view of memory, not a value).

_MEMO_CACHES = []


def clear_caches():
    """Forget every memoized answer (for benchmarks that time the algebra itself)."""
    for cache in _MEMO_CACHES:
        cache.cache_clear()


def _memo(function):
    cached = functools.lru_cache(maxsize=1 << 16)(lambda args, kwargs: function(*args, **dict(kwargs)))
    _MEMO_CACHES.append(cached)
    value_types = _VALUE_TYPES

    @functools.wraps(function)
    def call(*args, **kwargs):
        for a in args:
            if type(a) not in value_types:
                return function(*args, **kwargs)
        if kwargs:
            try:
                if len(kwargs) == 1:
                    (k, v), = kwargs.items()
                    key = ((k, tuple(v) if type(v) is list else v),)
                else:
                    key = tuple(sorted((k, tuple(v) if isinstance(v, list) else v) for k, v in kwargs.items()))
                hash(key)
            except TypeError:
                return function(*args, **kwargs)
            return cached(args, key)
        try:
            return cached(args, ())
        except TypeError:   # an unhashable part inside a tuple
            return function(*args, **kwargs)
    call.cache_info = cached.cache_info
    return call


_VALUE_TYPES = {int, tuple, type(None), Layout, ComposedLayout, Basis, Swizzle, Coord}


for _name in ("make_layout", "make_ordered_layout", "size", "cosize", "rank", "depth", "get", "select",
              "group_modes", "append", "prepend", "flatten", "crd2idx", "idx2crd", "coalesce", "filter_zeros",
              "filter", "composition", "complement", "right_inverse", "left_inverse", "logical_divide",
              "zipped_divide", "tiled_divide", "flat_divide", "logical_product", "zipped_product",
              "tiled_product", "flat_product", "blocked_product", "raked_product", "make_layout_tv",
              "tile_to_shape", "recast_layout", "max_common_vector", "max_common_layout", "shape", "slice_", "slice_offset", "dice",
              "_coord_of_offset"):
    globals()[_name] = _memo(globals()[_name])


def _kinds(coord):
    """The types inside a coordinate: 0 and 0.0 hash alike, so the cache below keys on them too."""
    return tuple(_kinds(c) for c in coord) if type(coord) is tuple else type(coord)


@functools.lru_cache(maxsize=1 << 16)
def _layout_at_cached(layout, coord, kinds):
    check_coordinate(coord, layout.shape)
    return _crd2idx(coord, layout.shape, layout.stride)


def _layout_at(layout, coord):
    return _layout_at_cached(layout, coord, _kinds(coord))


def _call_layout(self, coord):
    shape, stride = self.shape, self.stride
    if type(coord) is tuple and type(shape) is tuple and len(coord) == len(shape):
        total = 0                           # the common case, a flat coordinate of a flat layout
        for c, s, d in zip(coord, shape, stride):
            if type(c) is not int or type(s) is not int or type(d) is not int or not 0 <= c < s:
                break
            total += c * d
        else:
            return total
    if isinstance(coord, list):
        coord = tuple(coord)
    if _has_none(coord):
        return slice_(coord, self)
    try:
        return _layout_at(self, coord)
    except TypeError:
        check_coordinate(coord, self.shape)
        return _crd2idx(coord, self.shape, self.stride)


Layout.__call__ = _call_layout
