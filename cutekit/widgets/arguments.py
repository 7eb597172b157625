"""What each explorer accepts, checked before anything is drawn.

An explorer given the wrong kind of argument (a thread layout where a tiler goes, a tuple where a layout
goes) or a value that cannot be drawn as asked (a tiler larger than the shape, a thread layout larger than
its tile, a TV layout that reaches past its tile) raises at once, naming the explorer, the parameter, what
was given and what is expected, with the right call where one can be guessed. Wrong kinds raise TypeError;
wrong values ValueError. Without these checks a wrong argument is taken silently and fails later, at one
slider position, with an algebra message about something the learner never typed.

A tiler that does not divide the shape is accepted: chapter 03 (section 7) and chapter 04 draw the partial
edge tiles a predicate guards.
"""
from __future__ import annotations

from .. import cute
from ..cute.atom import MmaAtom, MmaOp

Layout, ComposedLayout = cute.Layout, cute.ComposedLayout


def describe(value) -> str:
    """How a message names a given value: its kind and its text.

    >>> describe(cute.make_layout((4, 2))), describe((4, 2)), describe("8")
    ('the Layout (4,2):(1,4)', 'the tuple (4, 2)', "the str '8'")
    """
    if isinstance(value, (Layout, ComposedLayout)):
        return f"the {type(value).__name__} {value}"
    if isinstance(value, str):
        return f"the str {value!r}"
    return f"the {type(value).__name__} {value!r}"


def is_int_tuple(value) -> bool:
    """An int or a (nested, non-empty) tuple of ints; bools are not ints here."""
    if isinstance(value, tuple):
        return bool(value) and all(is_int_tuple(v) for v in value)
    return isinstance(value, int) and not isinstance(value, bool)


def _positive(value) -> bool:
    if isinstance(value, tuple):
        return all(_positive(v) for v in value)
    return value > 0


def _text(value) -> str:
    return str(value).replace(" ", "")


def _rank(value) -> int:
    return len(value) if isinstance(value, tuple) else 1


def _mode_sizes(value) -> tuple:
    """The size of each top-level mode of an int-tuple or a layout's shape."""
    shape = value.shape if isinstance(value, Layout) else value
    return tuple(cute.size(mode) for mode in shape) if isinstance(shape, tuple) else (cute.size(shape),)


def fail(explorer: str, name: str, value, expected: str, hint: str = "", *, kind=ValueError):
    """Raise `kind` with "{explorer}: {name} must be {expected}; got {value described}. {hint}"."""
    message = f"{explorer}: {name} must be {expected}; got {describe(value)}"
    raise kind(message + (f". {hint[0].upper()}{hint[1:]}" if hint else ""))


def shape(explorer: str, name: str, value, *, ranks=None, example="(4, 8)"):
    """An int-tuple of positive sizes (of rank in `ranks`, if given)."""
    expected = ("an int or a tuple of ints" + (f" with {' or '.join(map(str, ranks))} modes" if ranks else "")
                + f", such as {example}")
    if isinstance(value, (Layout, ComposedLayout)):
        fail(explorer, name, value, expected, f"a layout's shape is {_text(value.shape)}", kind=TypeError)
    if isinstance(value, list):
        value = tuple(value)
    if not is_int_tuple(value):
        fail(explorer, name, value, expected, kind=TypeError)
    if not _positive(value):
        fail(explorer, name, value, "a shape of positive sizes" + (f", such as {example}"))
    if ranks is not None and _rank(value) not in ranks:
        fail(explorer, name, value, expected)
    return value


def layout(explorer: str, name: str, value, *, example="cute.make_layout((4, 8))", composed=False):
    """A Layout (or, if `composed`, also a ComposedLayout); a shape gets the make_layout hint."""
    kinds = (Layout, ComposedLayout) if composed else (Layout,)
    expected = f"a Layout, such as {example}"
    if isinstance(value, kinds):
        return value
    if is_int_tuple(value):
        fail(explorer, name, value, expected, f"for a compact layout of that shape pass "
             f"cute.make_layout({_text(value)})", kind=TypeError)
    if isinstance(value, ComposedLayout):
        fail(explorer, name, value, expected, "it is already swizzled: pass the layout under the swizzle "
             f"({value.outer})", kind=TypeError)
    fail(explorer, name, value, expected, kind=TypeError)


def index(explorer: str, name: str, value, low: int, high: int):
    if isinstance(value, bool) or not isinstance(value, int):
        fail(explorer, name, value, f"an int from {low} to {high}", kind=TypeError)
    if not low <= value <= high:
        fail(explorer, name, value, f"an int from {low} to {high}")
    return value


# ---- each explorer's arguments -------------------------------------------------------------------------------

def layout_explorer(shape_value, stride):
    """(shape, stride) for layout_explorer: a shape, and None or a stride congruent with it."""
    where = "layout_explorer"
    if isinstance(shape_value, Layout) and stride is None:
        fail(where, "shape", shape_value, "an int or a tuple of ints, such as (4, 8)",
             f"to explore this layout pass layout_explorer(shape={_text(shape_value.shape)}, "
             f"stride={_text(shape_value.stride)})", kind=TypeError)
    shape_value = shape(where, "shape", shape_value)
    if stride is None:
        return shape_value, None
    if isinstance(stride, list):
        stride = tuple(stride)
    if not is_int_tuple(stride):
        fail(where, "stride", stride, "None (column-major) or an int or tuple of ints with the shape's nesting",
             kind=TypeError)
    try:
        cute.make_layout(shape_value, stride=stride)
    except cute.CuteError as error:
        fail(where, "stride", stride, f"an int-tuple with the nesting of shape {_text(shape_value)}",
             str(error))
    return shape_value, stride


def tv_explorer(thr_layout, val_layout, tv_layout, tiler_mn):
    """Either (thr_layout, val_layout) or (tv_layout, tiler_mn), never a mix; returns (tv_layout, tiler_mn)."""
    where = "tv_explorer"
    pair_hint = ("give either thr_layout and val_layout (which make_layout_tv combines), or tv_layout and "
                 "tiler_mn, by name: tv_explorer(tv_layout=tv, tiler_mn=tiler)")
    if tv_layout is None and tiler_mn is None:
        if thr_layout is not None:
            layout(where, "thr_layout", thr_layout, example="cute.make_ordered_layout((4, 8), order=(1, 0))")
        if val_layout is not None:
            if is_int_tuple(val_layout) and isinstance(thr_layout, Layout) and _rank(val_layout) <= 2:
                fail(where, "val_layout", val_layout, "a Layout, such as cute.make_layout((2, 2))",
                     "if it is a TV layout's tile, " + pair_hint, kind=TypeError)
            layout(where, "val_layout", val_layout, example="cute.make_layout((2, 2))")
        if thr_layout is not None and val_layout is not None and _rank(thr_layout.shape) != _rank(val_layout.shape):
            fail(where, "val_layout", val_layout, f"a layout with as many modes as thr_layout {thr_layout} "
                 f"({_rank(thr_layout.shape)})")
        return None, None
    if thr_layout is not None or val_layout is not None:
        given = "thr_layout" if thr_layout is not None else "val_layout"
        fail(where, given, thr_layout if thr_layout is not None else val_layout,
             "left out when tv_layout or tiler_mn is given", pair_hint, kind=TypeError)
    if tv_layout is None:
        fail(where, "tv_layout", tv_layout, "a (thread, value) -> tile index Layout when tiler_mn is given",
             pair_hint, kind=TypeError)
    layout(where, "tv_layout", tv_layout, example="cute.make_layout(((2, 2), (2, 3)), stride=((2, 12), (1, 4)))")
    tiler_mn = tiler(where, "tiler_mn", tiler_mn, ranks=(1, 2), example="(4, 6)", missing_hint=pair_hint)
    return tv_layout, tiler_mn


def tiler(explorer, name, value, *, ranks=None, example="(4, 4)", missing_hint="", layouts=True):
    """A tiler: an int, or a tuple whose modes are ints (or, if `layouts`, Layouts), or a Layout."""
    expected = (f"an int or a tuple of ints{' or Layouts' if layouts else ''} (one per mode), "
                f"such as {example}")
    if value is None:
        fail(explorer, name, value, expected, missing_hint, kind=TypeError)
    if isinstance(value, list):
        value = tuple(value)
    modes = value if isinstance(value, tuple) else (value,)
    if isinstance(value, Layout):
        if not layouts:
            fail(explorer, name, value, expected, kind=TypeError)
        return value
    ok = bool(modes) and all(is_int_tuple(m) or (layouts and isinstance(m, Layout)) for m in modes)
    if not ok:
        fail(explorer, name, value, expected, missing_hint, kind=TypeError)
    if not all(_positive(m) for m in modes if not isinstance(m, Layout)):
        fail(explorer, name, value, f"a tiler of positive sizes, such as {example}")
    if ranks is not None and len(modes) not in ranks:
        fail(explorer, name, value, f"a tiler with {' or '.join(map(str, ranks))} modes, such as {example}")
    return value


def _tiler_extents(tiler_value) -> tuple:
    """How far each tiler mode reaches into its mode of the shape: an int's size, a Layout's cosize."""
    modes = tiler_value if isinstance(tiler_value, tuple) else (tiler_value,)
    return tuple(cute.cosize(m) if isinstance(m, Layout) else cute.size(m) for m in modes)


def divide_explorer(layout_value, tiler_value):
    where = "divide_explorer"
    if is_int_tuple(layout_value) or isinstance(layout_value, list):
        layout_value = cute.make_layout(shape(where, "layout", layout_value))
    elif hasattr(layout_value, "layout") and hasattr(layout_value, "with_layout"):
        layout_value = layout_value.layout               # a tensor: its layout
    layout_value = layout(where, "layout", layout_value, example="cute.make_layout((8, 12), stride=(12, 1))")
    if isinstance(tiler_value, Layout):
        extents, sizes = (cute.cosize(tiler_value),), (cute.size(layout_value),)
    else:
        if isinstance(tiler_value, int) and not isinstance(tiler_value, bool):
            fail(where, "tiler", tiler_value, "a tuple of ints or Layouts (one per mode) or a Layout, such as (2, 4)",
                 f"CuTeDSL refuses an int tiler: give ({tiler_value},) or cute.make_layout({tiler_value})",
                 kind=TypeError)
        tiler_value = tiler(where, "tiler", tiler_value, example="(2, 4)")
        extents, sizes = _tiler_extents(tiler_value), _mode_sizes(layout_value)
        if len(extents) > len(sizes):
            fail(where, "tiler", tiler_value, f"a tiler with at most {len(sizes)} modes (layout {layout_value} "
                 f"has {len(sizes)})")
    for mode, (extent, size) in enumerate(zip(extents, sizes)):
        if extent > size:
            fail(where, "tiler", tiler_value, f"a tiler within the layout's shape {_text(layout_value.shape)}",
                 f"its mode {mode} reaches {extent} elements, past the layout's {size}")
    return layout_value, tiler_value


def partition_explorer(shape_value, tiler_value, thr_layout):
    where = "partition_explorer"
    shape_value = shape(where, "shape", shape_value, ranks=(1, 2), example="(16, 16)")
    sizes = _mode_sizes(shape_value)
    example = "(" + ", ".join(str(max(1, s // 2)) for s in sizes) + ("," if len(sizes) == 1 else "") + ")"
    expected = (f"a tuple of {len(sizes)} int{'s' if len(sizes) > 1 else ''}, one tile size per mode "
                f"of shape {_text(shape_value)}, such as {example}")
    if isinstance(tiler_value, (Layout, ComposedLayout)):
        threads = _text(tiler_value)
        fail(where, "tiler", tiler_value, expected, "a layout of threads goes in thr_layout: "
             f"partition_explorer({_text(shape_value)}, {example}, thr_layout=cute.make_layout({threads.split(':')[0]}"
             f"{', stride=' + threads.split(':')[1] if ':' in threads else ''}))", kind=TypeError)
    if isinstance(tiler_value, list):
        tiler_value = tuple(tiler_value)
    if isinstance(tiler_value, int) and not isinstance(tiler_value, bool) and len(sizes) == 1:
        tiler_value = (tiler_value,)
    if not (isinstance(tiler_value, tuple) and all(isinstance(t, int) and not isinstance(t, bool)
                                                   for t in tiler_value)):
        fail(where, "tiler", tiler_value, expected, kind=TypeError)
    if len(tiler_value) != len(sizes):
        fail(where, "tiler", tiler_value, expected)
    if not _positive(tiler_value):
        fail(where, "tiler", tiler_value, f"a tiler of positive sizes, such as {example}")
    for mode, (tile, size) in enumerate(zip(tiler_value, sizes)):
        if tile > size:
            fail(where, "tiler", tiler_value, f"a tile no larger than shape {_text(shape_value)}",
                 f"mode {mode} is {tile}, past the shape's {size}")
    thr_layout = layout(where, "thr_layout", thr_layout, example="cute.make_layout((2, 4))")
    threads = _mode_sizes(thr_layout)
    if len(threads) > len(tiler_value):
        fail(where, "thr_layout", thr_layout, f"a thread layout with at most {len(tiler_value)} modes, one per "
             f"mode of the tile {_text(tiler_value)}")
    for mode, (count, tile) in enumerate(zip(threads, tiler_value)):
        if count > tile:
            fail(where, "thr_layout", thr_layout, f"a thread layout that fits in the {_text(tiler_value)} tile",
                 f"it has {count} threads along mode {mode}, where the tile has {tile} elements, so some "
                 "threads would own nothing")
    return shape_value, tiler_value, thr_layout


SWIZZLE_RANGES = {"bits": (0, 5), "base": (0, 6), "shift": (-6, 6)}      # the explorer's slider ranges
ELEMENT_BITS = (8, 16, 32, 64, 128)


def swizzle_explorer(layout_value, element_bits, bits, base, shift):
    where = "swizzle_explorer"
    if is_int_tuple(layout_value):
        layout(where, "layout", layout_value, example="cute.make_layout((8, 64), stride=(1, 8))")
    layout_value = layout(where, "layout", layout_value, example="cute.make_layout((8, 64), stride=(1, 8))")
    if isinstance(element_bits, bool) or not isinstance(element_bits, int):
        fail(where, "element_bits", element_bits, f"one of {ELEMENT_BITS}", kind=TypeError)
    if element_bits not in ELEMENT_BITS:
        fail(where, "element_bits", element_bits, f"one of {ELEMENT_BITS} (bits per element)")
    values = {"bits": bits, "base": base, "shift": shift}
    for name, (low, high) in SWIZZLE_RANGES.items():
        index(where, name, values[name], low, high)
    if abs(shift) < bits:
        fail(where, "shift", shift, f"at least bits ({bits}) away from 0 (a Swizzle<B,M,S> needs |S| >= B)")
    return layout_value


def mma_explorer(tiled_mma):
    where = "mma_explorer"
    if isinstance(tiled_mma, cute.TiledMma):
        return tiled_mma
    hint = ""
    if isinstance(tiled_mma, (MmaOp, MmaAtom)):
        hint = "make one from it: mma_explorer(cute.make_tiled_mma(op))"
    fail(where, "tiled_mma", tiled_mma, "a TiledMma, such as cute.make_tiled_mma(cute.nvgpu.warp.MmaF16BF16Op("
         "cute.Float16, cute.Float32, (16, 8, 16)))", hint, kind=TypeError)
