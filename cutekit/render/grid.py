"""The one drawing primitive every picture uses: a grid of coloured, optionally labelled cells on an Axes.

Cells are one QuadMesh (gid "cells"), whose face colours are row-major over the grid, and labels are one
PathCollection of glyph outlines (gid "labels", see `add_labels`; `labels_of(ax)` reads them back), so a test
or a widget can read back or recolour what is drawn without knowing how. Above LABEL_LIMIT cells the labels
are left out.
Colours are light fills with dark text on an opaque white figure, legible in light and dark notebook themes.
"""
from __future__ import annotations

import colorsys
import functools

import numpy
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.collections import LineCollection, PathCollection, QuadMesh
from matplotlib.font_manager import FontProperties
from matplotlib.path import Path
from matplotlib.textpath import TextPath, text_to_path
from matplotlib.transforms import Affine2D
from matplotlib.colors import to_rgba  # noqa: F401  (tests compare colours with it)
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle
from matplotlib import colormaps

from .. import cute

LABEL_LIMIT = 4096          # more cells than this: no labels (a 128x128 tile's 16384 would be unreadable anyway)
EDGE_LIMIT = 96             # more rows or columns than this: no cell edges (they would hide the fills)

# Legibility: a labelled picture is drawn with cells of at least MIN_CELL_PIXELS and labels of at least
# MIN_LABEL_POINTS at LEGIBLE_DPI, the explorers' PNG resolution (a notebook shows a Picture at 100 dpi, a
# little larger). A tile too wide for that is wrapped into bands of columns stacked down the figure
# (`bands`), and two panels too wide side by side are stacked; tests/render/test_legibility.py holds the rule
# for every picture the course notebooks draw.
LEGIBLE_DPI = 90
MIN_CELL_PIXELS = 16
MIN_LABEL_POINTS = 5.5
MIN_CELL_INCHES = MIN_CELL_PIXELS / LEGIBLE_DPI

# CUTLASS's print_latex colours threads with these eight (cute/util/print_latex.hpp, TikzColorFn)
THREAD_COLOURS = numpy.array([to_rgba(c) for c in (
    "#afafff", "#afffaf", "#ffffaf", "#ffafaf", "#d2d2ff", "#d2ffd2", "#ffffd2", "#ffd2d2")])
GREY = numpy.array(to_rgba("#e8e8e8"))
EMPTY = numpy.array(to_rgba("white"))
# label colours: every one keeps a WCAG contrast ratio of at least 4.5 against every fill it is drawn on
# (tests/render/test_legibility.py), so labels stay legible however the notebook theme is set
TEXT = "black"
MUTED_TEXT = "#595959"      # labels of greyed-out cells: fainter than black, still 4.5:1 on GREY
CONFLICT_TEXT = "#800000"   # dark red: a bank asked for several words, still 4.5:1 on the darkest bank colour
OUTLINE = "#d62728"


def distinct_colours(count: int) -> numpy.ndarray:
    """`count` light colours, neighbours far apart in hue (k * golden ratio around the wheel), so adjacent
    tiles or banks never look alike."""
    hues = (numpy.arange(count) * 0.618033988749895) % 1.0
    return numpy.array([(*colorsys.hsv_to_rgb(h, 0.38, 1.0), 1.0) for h in hues])


BANK_COLOURS = distinct_colours(32)
TILE_COLOURS = distinct_colours(24)


def index_colours(values: numpy.ndarray) -> numpy.ndarray:
    """A light sequential colour per value (its place between the smallest and largest), for offsets."""
    values = numpy.asarray(values, dtype=float)
    low, high = values.min(initial=0), values.max(initial=0)
    scaled = (values - low) / (high - low) if high > low else numpy.zeros_like(values)
    return colormaps["YlGnBu"](0.05 + 0.5 * scaled)


def palette_colours(keys: numpy.ndarray, palette: numpy.ndarray) -> numpy.ndarray:
    """palette[key % len(palette)] per cell; cells whose key is negative (nothing there) are white."""
    keys = numpy.asarray(keys)
    colours = palette[numpy.mod(keys, len(palette))]
    colours[keys < 0] = EMPTY
    return colours


def grey_out(colours: numpy.ndarray, keep: numpy.ndarray) -> numpy.ndarray:
    """The colours with every cell outside `keep` (a boolean mask) turned light grey."""
    colours = colours.copy()
    colours[~keep] = GREY
    return colours


class Picture(Figure):
    """A matplotlib Figure that a notebook shows as a PNG when it is a cell's value, even when pyplot's inline
    backend was never started (a plain Figure would show as its repr text)."""

    def _repr_png_(self):
        import io
        buffer = io.BytesIO()
        self.savefig(buffer, format="png", dpi=100, facecolor=self.get_facecolor())
        return buffer.getvalue()


def new_figure(figure=None, size=(6.0, 4.0)) -> Figure:
    """A fresh Figure (object API, Agg canvas so savefig and PNG bytes work without pyplot), or the given
    one cleared for reuse (a widget redraws into the same Figure)."""
    if figure is None:
        figure = Picture(figsize=size, facecolor="white", layout="constrained")
        FigureCanvasAgg(figure)
    else:
        figure.clear()
        figure.set_size_inches(*size)
        figure.set_layout_engine("constrained")
    return figure


def finish(figure) -> None:
    """Lay the figure out once, now, and keep that layout: otherwise constrained layout runs on every
    savefig, and savefig then draws everything twice (once to measure, once to paint). A figure redrawn
    with the same panels (a widget moving a highlight) reuses the positions found the first time, since
    measuring is most of a redraw's cost."""
    engine = figure.get_layout_engine()
    if engine is None:
        return
    key = (tuple(figure.get_size_inches()), tuple((ax.get_xlim(), ax.get_ylim(), ax.get_gid(), ax.axison)
                                                  for ax in figure.axes))
    remembered = getattr(figure, "_cutekit_layout", None)
    if remembered is not None and remembered[0] == key:
        for ax, position in zip(figure.axes, remembered[1]):
            ax.set_position(position)
    else:
        engine.execute(figure)
        figure._cutekit_layout = (key, [ax.get_position() for ax in figure.axes])
    figure.set_layout_engine(None)


def cell_inches(rows: int, columns: int, *, most_width=11.0, most_height=9.0, largest=0.48) -> float:
    """The side of one cell so the grid fits `most_width` x `most_height` inches."""
    return min(largest, most_width / max(columns, 1), most_height / max(rows, 1))


def bands(rows: int, columns: int, *, least=MIN_CELL_INCHES, most_width=11.0, most_height=9.0,
          most_wrapped_height=16.0, largest=0.48) -> tuple:
    """(band count, columns per band, cell inches) for a rows x columns grid that is wrapped, when it has to be,
    into bands of columns stacked down the figure so every cell is at least `least` inches: the fewest bands
    that do it, preferring a count that divides the columns (4x128 -> 4 bands of 32 columns), in a figure up to
    `most_wrapped_height` tall. One band (the grid as it is) when it is legible already, too large to label
    (LABEL_LIMIT), or no wrapping makes it legible.

    >>> bands(4, 128)[:2], bands(16, 128, least=0.212)[:2], bands(4, 8)[:2]
    ((4, 32), (4, 32), (1, 8))
    """
    cell = cell_inches(rows, columns, most_width=most_width, most_height=most_height, largest=largest)
    if cell >= least or rows * columns > LABEL_LIMIT:
        return 1, columns, cell
    counts = range(2, columns + 1)
    for count in [c for c in counts if columns % c == 0] + [c for c in counts if columns % c]:
        width = -(-columns // count)
        # each band after the first also needs room for its column tick labels: about one cell
        wrapped = cell_inches(count * rows + count - 1, width, most_width=most_width,
                              most_height=most_wrapped_height, largest=largest)
        if wrapped >= least:
            return count, width, wrapped
    return 1, columns, cell


def cell_for_labels(longest_line: int, lines: int) -> float:
    """The smallest cell (inches) whose labels of `lines` lines of up to `longest_line` characters
    `label_fontsize` draws at MIN_LABEL_POINTS or more (never below MIN_CELL_INCHES)."""
    points = MIN_LABEL_POINTS / min(0.9 * 1.6 / max(1, longest_line), 0.75 / max(1, lines))
    return max(MIN_CELL_INCHES, points / 72)


def label_fontsize(cell: float, longest_line: int, lines: int) -> float:
    """Points for labels that fit a cell of `cell` inches (0 means: too small, leave labels out)."""
    points = cell * 72
    size = min(points * 0.9 / max(1, longest_line) * 1.6, points * 0.75 / max(1, lines), 10.0)
    return size if size >= 4.0 else 0.0


def group_boundaries(shape, extent: int):
    """[(position, level)] where a hierarchical mode of `shape` starts a new group: a mode (2,3) of 6 cells
    has level-1 boundaries every 2 cells; ((2,2),3) adds level 2 every 4. Level 0 (every cell) is left out."""
    leaves = cute.flatten(shape) if isinstance(shape, tuple) else (shape,)
    boundaries = {}
    period = 1
    for level, leaf in enumerate(leaves[:-1], start=1):
        period *= leaf
        if period >= extent:
            break
        for position in range(period, extent, period):
            boundaries[position] = level
    return sorted(boundaries.items())


def draw_cells(ax, colours: numpy.ndarray, labels=None, *, cell: float = 0.4, row_shape=None, column_shape=None,
               fontsize=None, text_colours=None, row_ticks=None, column_ticks=None):
    """Draw a (rows, columns) grid of `colours` (RGBA, shape (rows, columns, 4)) on `ax`, row 0 at the top,
    with optional `labels` (a (rows, columns) array of strings; "" for none). `row_shape` / `column_shape`
    (int-tuples) add thicker lines between the groups of a hierarchical mode; `cell` (inches) sizes the
    labels; `row_ticks` / `column_ticks` name every row / column (the tick labels; default: the index).
    Returns the QuadMesh. The caller has already checked the grid's size (`limits.check_cells`)."""
    rows, columns = colours.shape[:2]
    x, y = numpy.meshgrid(numpy.arange(columns + 1), numpy.arange(rows + 1))
    with_edges = rows <= EDGE_LIMIT and columns <= EDGE_LIMIT
    mesh = QuadMesh(numpy.stack([x, y], axis=-1), facecolors=colours.reshape(-1, 4),
                    edgecolors="#606060" if with_edges else "none", linewidths=0.4 if with_edges else 0,
                    antialiased=False, gid="cells")
    ax.add_collection(mesh)
    ax.set_xlim(0, columns)
    ax.set_ylim(rows, 0)
    ax.set_aspect("equal")
    for spine in ax.spines.values():
        spine.set_visible(False)
    _ticks(ax, rows, columns, row_ticks, column_ticks)
    _group_lines(ax, rows, columns, row_shape, column_shape)
    ax.add_patch(Rectangle((0, 0), columns, rows, fill=False, edgecolor="#303030", linewidth=1.2))
    if labels is not None and rows * columns <= LABEL_LIMIT:
        _labels(ax, labels, cell, fontsize, text_colours)
    return mesh


def tick_step(extent: int) -> int:
    """Every how many rows (or columns) a tick is drawn: every one on small grids, then every 4th, 16th, and
    above 256 a power of two giving at most 16 ticks. A tick is a heavy artist (two lines and a text), so their
    number stays bounded however long the axis (a 1x65536 layout draws 16 ticks, not 4096).

    >>> [tick_step(n) for n in (16, 64, 256, 257, 65536)]
    [1, 4, 16, 32, 4096]
    """
    if extent <= 16:
        return 1
    if extent <= 64:
        return 4
    step = 16
    while extent > 16 * step:
        step *= 2
    return step


def _ticks(ax, rows, columns, row_ticks, column_ticks):
    """Ticks every `tick_step` rows and columns; `row_ticks` / `column_ticks` give a label for every row or
    column (only those at a tick are shown)."""
    ax.xaxis.tick_top()
    for set_ticks, extent, names in ((ax.set_xticks, columns, column_ticks), (ax.set_yticks, rows, row_ticks)):
        step = tick_step(extent)
        if names is not None and len(names) != extent:
            raise ValueError(f"{len(names)} tick labels for {extent} rows or columns")
        names = [str(i) for i in range(0, extent, step)] if names is None else list(names)[::step]
        set_ticks(numpy.arange(0, extent, step) + 0.5, names)
    ax.tick_params(length=0, labelsize=7, colors="#303030")


def _group_lines(ax, rows, columns, row_shape, column_shape):
    segments, widths = [], []
    for position, level in group_boundaries(row_shape, rows) if row_shape is not None else []:
        segments.append([(0, position), (columns, position)])
        widths.append(0.8 + 0.9 * level)
    for position, level in group_boundaries(column_shape, columns) if column_shape is not None else []:
        segments.append([(position, 0), (position, rows)])
        widths.append(0.8 + 0.9 * level)
    if segments:
        ax.add_collection(LineCollection(segments, linewidths=widths, colors="#202020", gid="groups"))


def _labels(ax, labels, cell, fontsize, text_colours):
    rows, columns = labels.shape
    if fontsize is None:
        texts = [str(t) for t in labels.ravel() if t]
        fontsize = label_fontsize(cell, max((len(line) for t in texts for line in t.split("\n")), default=1),
                                  max((t.count("\n") + 1 for t in texts), default=1))
    if not fontsize:
        return None
    cells, texts, paths, colours = [], [], [], []
    for (r, c), text in numpy.ndenumerate(labels):
        if text:
            cells.append((r, c))
            texts.append(str(text))
            paths.append(_label_path(str(text), fontsize))
            colours.append(to_rgba(TEXT if text_colours is None else text_colours[r, c]))
    collection = add_labels(ax, cells, texts, paths, colours)
    collection.fontsize = fontsize
    return collection


def relabel(ax, labels) -> None:
    """Change the texts of the labels drawn on `ax` by `draw_cells` to `labels` (a (rows, columns) array of
    strings; "" for none), at the size they were drawn; their colours are reset to TEXT. Nothing happens where
    labels were left out (too many or too small cells)."""
    collection = artist(ax, "labels")
    if collection is None:
        return
    cells = [(r, c) for (r, c), text in numpy.ndenumerate(labels) if text]
    texts = [str(labels[cell]) for cell in cells]
    if texts == collection.texts and cells == collection.cells:
        return
    collection.set_paths([_label_path(text, collection.fontsize) for text in texts])
    collection.set_offsets([(c + 0.5, r + 0.5) for r, c in cells] or numpy.zeros((0, 2)))
    collection.set_facecolor(to_rgba(TEXT))
    collection.cells, collection.texts = cells, texts


def artist(ax, gid: str):
    """The collection with this gid on `ax` ("cells", "labels", "outline", "groups"), or None."""
    return next((c for c in ax.collections if c.get_gid() == gid), None)


def recolour(ax, colours: numpy.ndarray, text_colours=None) -> None:
    """Repaint the grid drawn on `ax` by `draw_cells`: fills `colours` (rows, columns, 4) and label text
    `text_colours` ((rows, columns) of colour names; None: all TEXT). Only colours change (a widget moving a
    highlight), so nothing is rebuilt."""
    artist(ax, "cells").set_facecolor(numpy.asarray(colours).reshape(-1, 4))
    labels = artist(ax, "labels")
    if labels is None or not labels.cells:
        return
    if text_colours is None:
        labels.set_facecolor(to_rgba(TEXT))
        return
    rows, columns = numpy.asarray(labels.cells).T
    names, which = numpy.unique(numpy.asarray(text_colours, dtype=object)[rows, columns].astype(str),
                                return_inverse=True)
    labels.set_facecolor(numpy.array([to_rgba(name) for name in names])[which.ravel()])


def add_labels(ax, cells, texts, paths, colours):
    """All cell labels as one PathCollection (gid "labels"): drawing a thousand Text artists costs about a
    second, one collection of glyph outlines a few tens of milliseconds. `collection.cells[i]` and
    `collection.texts[i]` say which cell holds which label, so tests and widgets can read them back."""
    figure = ax.figure
    points_to_pixels = Affine2D().scale(1 / 72) + figure.dpi_scale_trans
    collection = PathCollection(paths, offsets=[(c + 0.5, r + 0.5) for r, c in cells],
                                offset_transform=ax.transData, transform=points_to_pixels,
                                facecolors=colours, edgecolors="none", linewidths=0, gid="labels", zorder=2.5)
    collection.cells, collection.texts = list(cells), list(texts)
    ax.add_collection(collection, autolim=False)
    return collection


def labels_of(ax) -> dict:
    """{(row, column): label} for the cell labels drawn on `ax` (for tests and widgets)."""
    found = {}
    for collection in ax.collections:
        if collection.get_gid() == "labels":
            found.update(zip(collection.cells, collection.texts))
    return found


_GLYPH_SIZE = 100.0        # glyph outlines are cached at this size (points) and scaled


@functools.lru_cache(maxsize=512)
def _glyph(character: str):
    """(vertices, codes, advance) of one character at _GLYPH_SIZE points, baseline at y = 0."""
    properties = FontProperties(size=_GLYPH_SIZE)
    advance = text_to_path.get_text_width_height_descent(character, properties, ismath=False)[0]
    if character == " ":
        return numpy.zeros((0, 2)), numpy.zeros(0, dtype=Path.code_type), advance
    path = TextPath((0, 0), character, prop=properties)
    return path.vertices, path.codes, advance


@functools.lru_cache(maxsize=1 << 14)
def _label_path(text: str, fontsize: float) -> Path:
    """The outline of `text` (lines split at newlines), centred on (0, 0), in points."""
    scale = fontsize / _GLYPH_SIZE
    lines = text.split("\n")
    line_height = 1.12 * fontsize
    vertices, codes = [], []
    for i, line in enumerate(lines):
        glyphs = [_glyph(character) for character in line]
        width = sum(g[2] for g in glyphs) * scale
        # digits and capitals are ~0.72 em tall: centre that band on the line's place
        baseline = ((len(lines) - 1) / 2 - i) * line_height - 0.36 * fontsize
        x = -width / 2
        for glyph_vertices, glyph_codes, advance in glyphs:
            if len(glyph_codes):
                vertices.append(glyph_vertices * scale + (x, baseline))
                codes.append(glyph_codes)
            x += advance * scale
    if not vertices:
        return Path(numpy.zeros((1, 2)), [Path.MOVETO])
    return Path(numpy.concatenate(vertices), numpy.concatenate(codes))


def outline_cells(ax, mask: numpy.ndarray, *, colour=OUTLINE, width=2.2):
    """Draw a thick line around the region of cells where `mask` (rows, columns) is True: one LineCollection
    (gid "outline") of the cell edges between a masked and an unmasked cell. Called again on the same `ax`,
    it moves the outline (an all-False mask hides it)."""
    padded = numpy.pad(numpy.asarray(mask, dtype=bool), 1)
    horizontal = numpy.argwhere(padded[:-1, 1:-1] != padded[1:, 1:-1])     # edge above row r (r = 0 .. rows)
    vertical = numpy.argwhere(padded[1:-1, :-1] != padded[1:-1, 1:])       # edge left of column c
    segments = [[(c, r), (c + 1, r)] for r, c in horizontal.tolist()] + \
               [[(c, r), (c, r + 1)] for r, c in vertical.tolist()]
    outline = artist(ax, "outline")
    if outline is None:
        outline = LineCollection(segments, linewidths=width, colors=colour, gid="outline", capstyle="projecting",
                                 zorder=3)
        ax.add_collection(outline, autolim=False)
    else:
        outline.set_segments(segments)
        outline.set_color(colour)
        outline.set_linewidth(width)
    return outline


def label_grid(rows: int, columns: int, fill="") -> numpy.ndarray:
    return numpy.full((rows, columns), fill, dtype=object)
