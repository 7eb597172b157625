"""cutekit.widgets: sliders and fields around `cutekit.render`'s pictures (ipywidgets).

Each explorer is one call and returns a VBox: its controls, an error line, and the picture (a PNG in an
`ipywidgets.Image`). Tests and notebooks drive them through attributes: `explorer.thread_slider.value = 5`
redraws; `explorer.figure` is the current matplotlib Figure; `explorer.error.value` holds the reference
algebra's message when a field cannot be read (never a traceback).

Arguments: every explorer checks what it is given before drawing (`cutekit.widgets.arguments`) and a wrong one
raises at once, naming the explorer, the parameter, what was given and what is expected: TypeError for a wrong
kind (a thread layout where a tiler goes), ValueError for a wrong value (a tiler larger than the shape, a thread
layout larger than its tile, a TV layout reaching past its tile).

Sizes: a field asking for more than `render.MAX_CELLS` cells (a shape, a tiler) shows render's
`PictureTooLarge` message (the size asked for, what it is the size of, and the limit) in the error line, keeps
the last picture, and the explorer redraws as usual once the field is set back. An explorer made in Python from
layouts too large to draw refuses them at once with that same exception. Every slider works at every
position: the swizzle explorer keeps B <= |S| by moving the other slider (the caption says so).

    layout_explorer(shape, stride)          shape and stride fields; row and column sliders pick a cell
    tv_explorer(thr_layout, val_layout)     a thread slider highlighting that thread's values
    divide_explorer(layout, tiler)          a tiler field and a tile slider
    partition_explorer(shape, tiler, thr)   block sliders (local_tile) and a thread slider (local_partition)
    swizzle_explorer(layout, element_bits)  B, M, S sliders with the bank conflicts before and after
    mma_explorer(tiled_mma)                 a thread slider across A, B and C

Depends on cutekit.render (and cutekit.cute for the layouts it builds); arrows: widgets -> render -> cute.
"""
from __future__ import annotations

import ast
import html
import time

import ipywidgets
import numpy

from .. import cute, render
from . import arguments

__all__ = ["Explorer", "layout_explorer", "tv_explorer", "divide_explorer", "partition_explorer",
           "swizzle_explorer", "mma_explorer", "parse_int_tuple"]


def parse_int_tuple(text: str, *, what: str = "value", allow_empty: bool = False):
    """An int or a nested tuple of ints from a text field ("(4, 8)", "(4,(2,3))", "8"); lists become
    tuples. Anything else raises CuteError naming the field.

    >>> parse_int_tuple("(4, (2, 3))"), parse_int_tuple("[8, 1]"), parse_int_tuple("", allow_empty=True)
    ((4, (2, 3)), (8, 1), None)
    """
    text = text.strip()
    if not text and allow_empty:
        return None
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        raise cute.CuteError(f"{what}: could not read {text!r} as an int or a tuple of ints, "
                             "for example 8 or (4, 8) or (4, (2, 3))") from None

    def check(v):
        if isinstance(v, list):
            v = tuple(v)
        if isinstance(v, tuple):
            if not v:
                raise cute.CuteError(f"{what}: an empty tuple is not a shape or a stride")
            return tuple(check(p) for p in v)
        if isinstance(v, bool) or not isinstance(v, int):
            raise cute.CuteError(f"{what}: {v!r} is not an int (in {text!r})")
        return v
    return check(value)


def _slider(description, maximum, value=0):
    return ipywidgets.IntSlider(value=min(value, max(maximum, 0)), min=0, max=max(maximum, 0), step=1,
                                description=description, continuous_update=True,
                                style={"description_width": "initial"})


def _text(description, value):
    return ipywidgets.Text(value=value, description=description, continuous_update=False,
                           style={"description_width": "initial"}, layout=ipywidgets.Layout(width="260px"))


def _as_text(value) -> str:
    return "" if value is None else str(value).replace(" ", "")


class Explorer(ipywidgets.VBox):
    """Controls above a picture. Subclasses build their controls, then implement `draw(figure)`, which
    returns the Figure drawn (into `figure`, reused between redraws, where the picture keeps its kind).

    `redraw()` runs after every control change: on success the picture and `figure` update and `error` is
    cleared; on a CuteError (bad input, or render's PictureTooLarge: a size it cannot draw) the message shows
    in `error` and the last good picture stays (none, if there was none yet). The first draw, made by the
    constructor, raises PictureTooLarge instead: an explorer is not made around a picture it cannot draw.
    A control that only moves a highlight repaints the same figure (`cutekit.render` keeps its artists and
    facts) and the PNG is a `render.frames` frame (only the changed artists are drawn again).
    `last_redraw_seconds` is the Python time the last redraw took (drawing plus PNG encoding), and
    `last_redraw_cpu_seconds` the processor time it used (what a test on a machine shared with other work
    compares with the redraw budget: waiting for a core is not the explorer's cost)."""

    def __init__(self, rows, *, images=1):
        self.error = ipywidgets.HTML(value="")
        self.caption = ipywidgets.HTML(value="")
        self.images = [ipywidgets.Image(format="png", layout=ipywidgets.Layout(max_width="100%", width="auto"))
                       for _ in range(images)]
        self.image = self.images[0]
        self.figures = [None] * images
        self.last_redraw_seconds = 0.0
        self.last_redraw_cpu_seconds = 0.0
        self.redraw_count = 0
        self.last_error = None          # the CuteError the last redraw showed, or None
        super().__init__([*rows, self.error, self.caption, *self.images])
        for control in _controls_in(rows):
            control.observe(self._on_change, names="value")
        if not self.redraw() and isinstance(self.last_error, render.PictureTooLarge):
            raise self.last_error

    @property
    def figure(self):
        """The current (first) picture."""
        return self.figures[0]

    def _on_change(self, change):
        if not getattr(self, "_updating", False):
            self.redraw()

    def draw(self):
        """Return the list of Figures to show, reusing `self.figures` where possible."""
        raise NotImplementedError

    def redraw(self) -> bool:
        start, start_cpu = time.perf_counter(), time.process_time()
        try:
            figures = self.draw()
        except cute.CuteError as exc:
            self.error.value = f'<span style="color:#c62828">{html.escape(str(exc), quote=False)}</span>'
            self.last_error = exc
            return False
        for i, figure in enumerate(figures):
            self.figures[i] = figure
            self.images[i].value = render.frames.png_frame(figure, dpi=90)
        self.error.value = ""
        self.last_error = None
        self.redraw_count += 1
        self.last_redraw_seconds = time.perf_counter() - start
        self.last_redraw_cpu_seconds = time.process_time() - start_cpu
        return True

    def _set_quietly(self, slider, maximum):
        """Change a slider's range without one redraw per attribute."""
        self._updating = True
        try:
            slider.max = max(maximum, 0)
            slider.value = min(slider.value, slider.max)
        finally:
            self._updating = False


def _controls_in(widgets):
    """The value widgets (fields, sliders) among `widgets` and inside their boxes."""
    for widget in widgets:
        if isinstance(widget, ipywidgets.Box):
            yield from _controls_in(widget.children)
        elif isinstance(widget, ipywidgets.ValueWidget):
            yield widget


# ---- layouts ------------------------------------------------------------------------------------------------

class LayoutExplorer(Explorer):
    """Shape and stride fields; the row and column sliders pick a cell, outlined, whose offset is spelled out."""

    def __init__(self, shape=(4, 8), stride=None):
        self.shape_text = _text("shape", _as_text(shape))
        self.stride_text = _text("stride (empty: column-major)", _as_text(stride))
        self.row_slider = _slider("row", 0)
        self.column_slider = _slider("column", 0)
        self.current_layout = None      # (`layout` is ipywidgets' CSS trait)
        self._values = (None, None)     # (layout, its grid of offsets)
        super().__init__([ipywidgets.HBox([self.shape_text, self.stride_text]),
                          ipywidgets.HBox([self.row_slider, self.column_slider])])

    def draw(self):
        shape = parse_int_tuple(self.shape_text.value, what="shape")
        stride = parse_int_tuple(self.stride_text.value, what="stride", allow_empty=True)
        layout = cute.make_layout(shape) if stride is None else cute.make_layout(shape, stride=stride)
        if self._values[0] != layout:
            self._values = (layout, render.facts.grid_values(layout))
        values = self._values[1]
        rows, columns = values.shape
        row, column = min(self.row_slider.value, rows - 1), min(self.column_slider.value, columns - 1)
        figure = render.layout(layout, highlight=(row, column), figure=self.figures[0])
        # the sliders follow the new shape only once it is drawn: a refused one leaves them as they were
        self._set_quietly(self.row_slider, rows - 1)
        self._set_quietly(self.column_slider, columns - 1)
        self.current_layout = layout
        self.caption.value = (f"<code>{html.escape(str(layout))}</code>: coordinate ({row}, {column}) &rarr; "
                              f"offset <b>{int(values[row, column])}</b>")
        return [figure]


def layout_explorer(shape=(4, 8), stride=None) -> LayoutExplorer:
    """Type a shape and a stride, see the layout's offsets; sliders pick one coordinate."""
    return LayoutExplorer(*arguments.layout_explorer(shape, stride))


# ---- thread-value layouts -----------------------------------------------------------------------------------

class TvExplorer(Explorer):
    """A TV layout on its tile; the thread slider greys every other thread."""

    def __init__(self, tv_layout, tiler_mn):
        self.tv_layout, self.tiler_mn = tv_layout, tiler_mn
        threads = cute.size(render.facts.modes(tv_layout)[0])
        self.thread_of_cell, self.value_of_cell = render.facts.tv_cells(tv_layout, render.facts.tile_size(tiler_mn))
        self.thread_slider = _slider("thread", threads - 1)
        super().__init__([self.thread_slider])

    def draw(self):
        thread = self.thread_slider.value
        figure = render.tv_layout(self.tv_layout, self.tiler_mn, highlight=thread, figure=self.figures[0])
        self.caption.value = self.holdings(thread)
        return [figure]

    def holdings(self, thread, most=8) -> str:
        """"thread t holds n values: V0 at (m,n), V1 at ..." (the first `most`), read from the tile."""
        rows, columns = numpy.nonzero(self.thread_of_cell == thread)
        order = numpy.argsort(self.value_of_cell[rows, columns], kind="stable")
        places = [f"V{self.value_of_cell[r, c]} at ({r},{c})" for r, c in zip(rows[order], columns[order])]
        listed = ", ".join(places[:most]) + (", ..." if len(places) > most else "")
        return f"thread {thread} holds {len(places)} values" + (f": {listed}" if places else "")


def tv_explorer(thr_layout=None, val_layout=None, *, tv_layout=None, tiler_mn=None) -> TvExplorer:
    """A thread slider over a TV layout: either `tv_layout` and `tiler_mn`, or the `thr_layout` and
    `val_layout` that make_layout_tv combines (default: 4x8 threads row-major, 2x2 values each)."""
    tv_layout, tiler_mn = arguments.tv_explorer(thr_layout, val_layout, tv_layout, tiler_mn)
    if tv_layout is None:
        thr_layout = cute.make_ordered_layout((4, 8), order=(1, 0)) if thr_layout is None else thr_layout
        val_layout = cute.make_layout((2, 2)) if val_layout is None else val_layout
        try:
            tiler_mn, tv_layout = cute.make_layout_tv(thr_layout, val_layout)
        except cute.CuteError as error:
            raise ValueError(f"tv_explorer: make_layout_tv cannot combine thr_layout {thr_layout} and val_layout "
                             f"{val_layout}: {error}") from None
    else:
        try:
            render.facts.tv_cells(tv_layout, render.facts.tile_size(tiler_mn))
        except render.PictureTooLarge:
            raise
        except cute.CuteError as error:
            raise ValueError(f"tv_explorer: tv_layout {tv_layout} must map every (thread, value) into the "
                             f"{render.facts.tile_size(tiler_mn)} tile given as tiler_mn; {error}") from None
    return TvExplorer(tv_layout, tiler_mn)


# ---- divides ------------------------------------------------------------------------------------------------

class DivideExplorer(Explorer):
    """The divide pictures with a tiler field and a slider choosing the tile to highlight."""

    def __init__(self, layout, tiler):
        self.source_layout = render.facts.as_layout(layout)
        self.tiler = tiler
        self.tiler_text = _text("tiler", _as_text(tiler) if _is_int_tuple(tiler) else "")
        self.tiler_text.disabled = not _is_int_tuple(tiler)
        self.tile_slider = _slider("tile", 0)
        self._rest_shapes = {}          # tiler -> rest shape
        super().__init__([self.tiler_text, self.tile_slider])

    def draw(self):
        tiler = parse_int_tuple(self.tiler_text.value, what="tiler") if not self.tiler_text.disabled else self.tiler
        if tiler not in self._rest_shapes:
            self._rest_shapes[tiler] = render.facts.tile_owner(self.source_layout.shape, tiler)[1]
        rest_shape = self._rest_shapes[tiler]
        tile = min(self.tile_slider.value, cute.size(rest_shape) - 1)
        figure = render.divide(self.source_layout, tiler, tile=tile, figure=self.figures[0])
        self._set_quietly(self.tile_slider, cute.size(rest_shape) - 1)      # once drawn, as in LayoutExplorer
        self.tiler = tiler
        self.caption.value = (f"{cute.size(rest_shape)} tiles (rest shape {html.escape(_as_text(rest_shape))}); "
                              f"tile {tile} is rest coordinate {cute.idx2crd(tile, rest_shape)}")
        return [figure]


def _is_int_tuple(value) -> bool:
    if isinstance(value, tuple):
        return all(_is_int_tuple(v) for v in value)
    return isinstance(value, int) and not isinstance(value, bool)


def divide_explorer(layout=None, tiler=(2, 4)) -> DivideExplorer:
    """A tile slider over divide(layout, tiler); a tiler of ints can be retyped in its field."""
    layout = cute.make_layout((8, 12), stride=(12, 1)) if layout is None else layout
    return DivideExplorer(*arguments.divide_explorer(layout, tiler))


# ---- tiles and partitions -----------------------------------------------------------------------------------

class PartitionExplorer(Explorer):
    """Two pictures: which block owns each element (block sliders pick the local_tile), and inside that
    block which thread owns each element (the thread slider picks the local_partition)."""

    def __init__(self, shape, tiler, thr_layout):
        self.shape, self.tiler = shape, tiler
        self.thr_layout = render.facts.as_layout(thr_layout)
        _, rest_shape = render.facts.tile_owner(shape, tiler)
        rest = rest_shape if isinstance(rest_shape, tuple) else (rest_shape,)
        self.block_row_slider = _slider("block row", cute.size(rest[0]) - 1)
        self.block_column_slider = _slider("block column", cute.size(rest[1]) - 1 if len(rest) > 1 else 0)
        self.thread_slider = _slider("thread", cute.size(self.thr_layout) - 1)
        super().__init__([self.block_row_slider, self.block_column_slider, self.thread_slider], images=2)

    def draw(self):
        block = (self.block_row_slider.value, self.block_column_slider.value)
        thread = self.thread_slider.value
        tile_figure = render.local_tile(self.shape, self.tiler, block, figure=self.figures[0])
        tile_shape = tuple(cute.size(t) for t in self.tiler)
        partition_figure = render.local_partition(tile_shape, self.thr_layout, thread, figure=self.figures[1],
                                                  title=f"inside block {block}: thread {thread} of "
                                                        f"{self.thr_layout}")
        self.caption.value = f"block {block}, thread {thread}"
        return [tile_figure, partition_figure]


def partition_explorer(shape=(16, 16), tiler=(8, 8), thr_layout=None) -> PartitionExplorer:
    """Block sliders over local_tile(shape, tiler, block) and a thread slider over local_partition of that
    block by `thr_layout` (default 2x4 threads)."""
    thr_layout = cute.make_layout((2, 4)) if thr_layout is None else thr_layout
    return PartitionExplorer(*arguments.partition_explorer(shape, tiler, thr_layout))


# ---- banks --------------------------------------------------------------------------------------------------

class SwizzleExplorer(Explorer):
    """B, M, S sliders for Swizzle<B,M,S> over a shared-memory layout; the caption counts the conflicts."""

    def __init__(self, layout, element_bits, bits, base, shift):
        self.shared_layout, self.element_bits = render.facts.as_layout(layout), element_bits
        rows = render.facts.grid_values(self.shared_layout).shape[0]
        self.bits_slider = ipywidgets.IntSlider(value=bits, min=0, max=5, description="B (bits)")
        self.base_slider = ipywidgets.IntSlider(value=base, min=0, max=6, description="M (base)")
        self.shift_slider = ipywidgets.IntSlider(value=shift, min=-6, max=6, description="S (shift)")
        self.row_slider = _slider("row", rows - 1)
        self.conflicts = (None, None)
        self._before = render.bank_conflicts(self.shared_layout, element_bits=element_bits)
        self._after = {}                # swizzle -> its bank conflicts
        self._moved = ""                # what keeping B <= |S| did to the other slider, for the caption
        super().__init__([self.bits_slider, self.base_slider, self.shift_slider, self.row_slider])

    def _on_change(self, change):
        """A swizzle needs |S| >= B (its two bit fields must not overlap), so every position of either slider
        is kept a swizzle: raising B past |S| moves S out to +-B (its sign kept), and moving S inside B
        lowers B to |S|. The caption says which slider moved."""
        if getattr(self, "_updating", False):
            return
        bits, shift = self.bits_slider.value, self.shift_slider.value
        self._moved = ""
        if change.owner is self.bits_slider and abs(shift) < bits:
            self._set_value_quietly(self.shift_slider, bits if shift >= 0 else -bits)
            self._moved = f"S moved to {self.shift_slider.value} to keep |S| &ge; B"
        elif change.owner is self.shift_slider and abs(shift) < bits:
            self._set_value_quietly(self.bits_slider, abs(shift))
            self._moved = f"B lowered to {self.bits_slider.value} to keep B &le; |S|"
        self.redraw()

    def _set_value_quietly(self, slider, value):
        self._updating = True
        try:
            slider.value = value
        finally:
            self._updating = False

    def draw(self):
        swizzle = cute.make_swizzle(self.bits_slider.value, self.base_slider.value, self.shift_slider.value)
        figure = render.swizzle(swizzle, self.shared_layout, element_bits=self.element_bits,
                                highlight_row=self.row_slider.value, figure=self.figures[0])
        if swizzle not in self._after:
            self._after[swizzle] = render.bank_conflicts(cute.make_composed_layout(swizzle, 0, self.shared_layout),
                                                         element_bits=self.element_bits)
        before, after = self._before, self._after[swizzle]
        self.conflicts = (before, after)
        self.caption.value = (f"{swizzle}: bank conflicts <b>{before}</b> before, <b>{after}</b> after"
                              + (f" ({self._moved})" if self._moved else ""))
        return [figure]


def swizzle_explorer(layout=None, element_bits=16, bits=3, base=3, shift=3) -> SwizzleExplorer:
    """Swizzle<B,M,S> sliders over a shared-memory layout (default: 8 rows of 64 16-bit elements, each row
    of the picture read as one request, the columns of a 64x8 column-major tile)."""
    layout = cute.make_layout((8, 64), stride=(1, 8)) if layout is None else layout
    layout = arguments.swizzle_explorer(layout, element_bits, bits, base, shift)
    return SwizzleExplorer(layout, element_bits, bits, base, shift)


# ---- MMAs ---------------------------------------------------------------------------------------------------

class MmaExplorer(Explorer):
    """A thread slider across a TiledMMA's A, B and C."""

    def __init__(self, tiled_mma):
        self.tiled_mma = tiled_mma
        self.thread_slider = _slider("thread", tiled_mma.size - 1)
        super().__init__([self.thread_slider])

    def draw(self):
        thread = self.thread_slider.value
        figure = render.tiled_mma(self.tiled_mma, highlight=thread, figure=self.figures[0])
        self.caption.value = f"thread {thread} of {self.tiled_mma.size}"
        return [figure]


def mma_explorer(tiled_mma=None) -> MmaExplorer:
    """A thread slider over a TiledMMA (default: one m16n8k16 F16 tensor-core atom, 32 threads)."""
    if tiled_mma is None:
        op = cute.nvgpu.warp.MmaF16BF16Op(cute.Float16, cute.Float32, (16, 8, 16))
        tiled_mma = cute.make_tiled_mma(op)
    return MmaExplorer(arguments.mma_explorer(tiled_mma))
