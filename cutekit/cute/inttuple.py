"""Int-tuples: plain nested Python tuples of ints, and the few rules CuTe needs on them.

A shape like `((2,2),(2,3))` or a stride like `((2,12),(1,4))` is just a nested tuple. Every recursive rule
below is written once with `transform` / `fold`, never re-spelled.
"""
from __future__ import annotations

import math
from functools import reduce


class CuteError(ValueError):
    """A rule of the CuTe algebra was broken; the message names the rule and the values."""


class Dynamic(int):
    """A run-time integer: the simulator knows its value, CuTeDSL knows only that it exists (a kernel or @cute.jit
    argument, a mark_layout_dynamic tensor's extent or stride). It computes as its value and prints as CuTeDSL
    prints it at trace time: `?`, `?{i64}` (a 64-bit stride), `?{div=16}` (known to be a multiple of 16).

    Arithmetic written by the learner (`n * 3`) gives a plain `?`, as CuTeDSL's Int32 arithmetic does. Inside
    the layout algebra (`algebra=True`: make_layout turns its leaves into such values) a product or sum keeps
    what is known of the divisor, as CuTeDSL's algebra does: the size of (?,4) is `?{div=4}`.

    >>> n = Dynamic(6)
    >>> str(n), str(n * 3), int(n * 3), str(Dynamic(6, algebra=True) * 4)
    ('?', '?', 18, '?{div=4}')
    >>> str(Dynamic(48, width=64, divisibility=16, algebra=True)), repr(Dynamic(48, width=64))
    ('?{i64 div=16}', 'Int64(?)')
    """

    def __new__(cls, value, width=32, divisibility=1, algebra=False):
        self = int.__new__(cls, value)
        self.width, self.divisibility, self.algebra = width, divisibility, algebra
        return self

    def __str__(self):
        if not self.algebra:      # a run-time Int32 or Int64 value itself: `?`
            return "?"
        notes = ["i64"] if self.width == 64 else []
        notes += ["div=%d" % self.divisibility] if self.divisibility > 1 else []
        return "?{%s}" % " ".join(notes) if notes else "?"

    def __repr__(self):           # inside a printed tuple: (Int32(?), 4), as CuTeDSL's run-time integers
        return "Int%d(?)" % self.width

    def __format__(self, spec):
        return str(self) if not spec else format(int(self), spec)

    def __hash__(self):           # a layout with a run-time extent is not the static layout of the same values
        return hash((int(self), "dynamic", self.width, self.divisibility))

    def __reduce__(self):
        return Dynamic, (int(self), self.width, self.divisibility, self.algebra)

    def _combine(self, other, value, divisibility):
        other_dynamic = isinstance(other, Dynamic)
        algebra = self.algebra or (other_dynamic and other.algebra)
        width = max(self.width, other.width if other_dynamic else 32)
        return Dynamic(value, width, divisibility if algebra else 1, algebra)

    @staticmethod
    def _divisor(x):
        return x.divisibility if isinstance(x, Dynamic) else abs(int(x))

    def __mul__(self, other):
        if not isinstance(other, int) or isinstance(other, bool):
            return int(self) * other
        if not isinstance(other, Dynamic) and other == 0:
            return 0
        return self._combine(other, int(self) * int(other), self.divisibility * self._divisor(other))

    __rmul__ = __mul__

    def __add__(self, other):
        if not isinstance(other, int) or isinstance(other, bool):
            return int(self) + other
        if not isinstance(other, Dynamic) and other == 0:
            return self
        return self._combine(other, int(self) + int(other), math.gcd(self.divisibility, self._divisor(other)))

    __radd__ = __add__

    def __sub__(self, other):
        if not isinstance(other, int) or isinstance(other, bool):
            return int(self) - other
        return self + (-other)

    def __rsub__(self, other):
        return (-self) + other

    def __neg__(self):
        return Dynamic(-int(self), self.width, self.divisibility, self.algebra)

    def __floordiv__(self, other):
        if not isinstance(other, int) or isinstance(other, bool):
            return int(self) // other
        divisor = self._divisor(other)
        known = self.divisibility // divisor if not isinstance(other, Dynamic) and divisor and \
            self.divisibility % divisor == 0 else 1
        return self._combine(other, int(self) // int(other), known)

    def __rfloordiv__(self, other):
        if not isinstance(other, int) or isinstance(other, bool):
            return other // int(self)
        return self._combine(other, int(other) // int(self), 1)

    def __mod__(self, other):
        if not isinstance(other, int) or isinstance(other, bool):
            return int(self) % other
        return self._combine(other, int(self) % int(other), 1)

    def __rmod__(self, other):
        if not isinstance(other, int) or isinstance(other, bool):
            return other % int(self)
        return self._combine(other, int(other) % int(self), 1)


def as_algebra(x):
    """`x` with every run-time leaf made one the layout algebra tracks (`Dynamic(..., algebra=True)`); plain
    data comes back as it is (the common case costs one walk over the leaves)."""
    kind = type(x)
    if kind is int:
        return x
    if kind is tuple:
        if all(type(p) is int for p in x):      # the common case: plain ints, nothing to make
            return x
        parts = tuple(as_algebra(p) for p in x)
        return parts if any(a is not b for a, b in zip(parts, x)) else x
    if isinstance(x, Dynamic) and not x.algebra:      # a DSL Int32 of host code (cutekit.sim.memory.numbers) too
        return Dynamic(int(x), x.width, x.divisibility, True)
    return x


def plain(x):
    """`x` with every run-time leaf replaced by its value (what cute.printf shows)."""
    if isinstance(x, tuple):
        return tuple(plain(p) for p in x)
    return int(x) if isinstance(x, Dynamic) else x


def is_tuple(x) -> bool:
    return isinstance(x, tuple)


def is_int(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def transform(fn, *xs):
    """Apply `fn` leaf-wise over congruent int-tuples.

    >>> transform(lambda a, b: a * b, (2, (3, 4)), (1, (2, 3)))
    (2, (6, 12))
    """
    if is_tuple(xs[0]):
        return tuple(transform(fn, *parts) for parts in zip(*xs))
    return fn(*xs)


def flatten(x) -> tuple:
    """The leaves, left to right.

    >>> flatten(((2, 2), (2, 3)))
    (2, 2, 2, 3)
    """
    return tuple(leaf for part in x for leaf in flatten(part)) if is_tuple(x) else (x,)


def product(x) -> int:
    """Product of all leaves (the size of a shape). `product(()) == 1`."""
    return reduce(lambda a, b: a * b, flatten(x), 1)


def rank(x) -> int:
    return len(x) if is_tuple(x) else 1


def depth(x) -> int:
    return 1 + max((depth(p) for p in x), default=0) if is_tuple(x) else 0


def fmt(x) -> str:
    """CuTe's printed form of an int-tuple: `((2,2),3)`; a rank-1 tuple keeps its parentheses: `(4)`."""
    return "(" + ",".join(fmt(p) for p in x) + ")" if is_tuple(x) else str(x)


def compact_col_major(shape, start=1):
    """Column-major strides for `shape`; modes of size 1 get stride 0 (they never move).

    >>> compact_col_major(((2, 2), 1, 3))
    ((1, 2), 0, 4)
    """
    current = [start]

    def leaf(s):
        stride = 0 if s == 1 and not isinstance(s, Dynamic) else current[0]   # a run-time 1 is not known to be 1
        current[0] *= s
        return stride
    return transform(leaf, shape)


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def shape_div(a, b):
    """a / b when b divides a, else 1 when a divides b (CuTe's shape_div), leaf-wise over a.

    >>> shape_div(12, 4), shape_div(4, 12)
    (3, 1)
    """
    if is_tuple(a):
        out, rest = [], b
        for part in a:
            out.append(shape_div(part, rest))
            rest = shape_div(rest, product(part))
        return tuple(out)
    if a % b == 0:
        return a // b
    if b % a == 0:
        return 1
    raise CuteError(f"shape_div: neither {a} nor {b} divides the other")


def congruent(a, b) -> bool:
    if is_tuple(a) != is_tuple(b):
        return False
    return not is_tuple(a) or (len(a) == len(b) and all(congruent(x, y) for x, y in zip(a, b)))


def idx2crd(index: int, shape):
    """The natural (column-major, hierarchical) coordinate of a 1-D index in `shape`.

    >>> idx2crd(13, (4, 8))
    (1, 3)
    """
    if is_tuple(shape):
        out = []
        for i, part in enumerate(shape):
            last = i == len(shape) - 1      # the last mode takes what is left, so an index past the end still maps
            out.append(idx2crd(index if last else index % product(part), part))
            index //= product(part)
        return tuple(out)
    return index


def check_coordinate(coord, shape, what="coordinate"):
    """Raise a CuteError naming the mode when `coord` does not fit `shape`."""
    if coord is None:
        return
    if is_int(coord):
        if not 0 <= coord < product(shape):
            raise CuteError(f"{what} {coord} is out of range for shape {fmt(shape)} (size {product(shape)})")
        return
    if not is_tuple(coord):
        raise CuteError(f"{what} must be an int or a tuple of ints, got {type(coord).__name__}: {coord!r}")
    if not is_tuple(shape) or len(coord) != len(shape):
        raise CuteError(f"{what} {fmt_coord(coord)} has rank {len(coord)}, but shape {fmt(shape)} has rank "
                        f"{rank(shape)}")
    for c, s in zip(coord, shape):
        check_coordinate(c, s, what)


def fmt_coord(c) -> str:
    if c is None:
        return "_"
    return "(" + ",".join(fmt_coord(p) for p in c) + ")" if is_tuple(c) else str(c)


def crd2idx(coord, shape, stride):
    """Inner product of a coordinate with the strides; an int coordinate is unfolded column-major first.

    Strides may be ints or basis elements (identity layouts): anything with `*` by int and `+`.

    >>> crd2idx((1, 2), (4, 8), (1, 4))
    9
    """
    if coord is None:
        return 0
    if is_tuple(shape):
        if is_int(coord):
            coord = idx2crd(coord, shape)
        total = 0
        for c, s, d in zip(coord, shape, stride):
            total = total + crd2idx(c, s, d)
        return total
    if is_tuple(coord):
        coord = _fold_coord(coord, shape)
    return coord * stride


def _fold_coord(coord, shape):
    # A tuple coordinate into an int mode: only (c,) of rank 1 makes sense.
    flat = flatten(coord)
    if len(flat) == 1:
        return flat[0]
    raise CuteError(f"coordinate {fmt_coord(coord)} is deeper than its mode of shape {fmt(shape)}")


def prefix_products(shape):
    """Exclusive prefix products of a shape, congruent to it: the column-major strides without the size-1 rule."""
    current = [1]

    def leaf(s):
        out = current[0]
        current[0] *= s
        return out
    return transform(leaf, shape)


def gcd(a: int, b: int) -> int:
    return math.gcd(a, b)


def elem_less(a, b) -> bool:
    """`cute.elem_less`: every entry of coordinate `a` is less than the matching entry of `b` (shapes compared
    leaf-wise); the bounds test of a predicate, `elem_less(coordinate, shape)`."""
    if is_tuple(a) and is_tuple(b):
        if len(a) != len(b):
            raise CuteError(f"elem_less: {fmt(a)} and {fmt(b)} have different ranks")
        return all(elem_less(x, y) for x, y in zip(a, b))
    if is_tuple(a):
        return all(elem_less(x, b) for x in a)
    if is_tuple(b):
        return elem_less(a, product(b))
    return a < b
