"""The pictures: each function takes cute objects, reads their facts (`facts`) and draws them (`grid`).

Every function returns a matplotlib Figure and shows nothing. `figure=` redraws into an existing Figure
(a widget reuses one); otherwise a new one is made. When that figure already shows the same picture and only
the highlight (a thread, a tile, a row) or the title differs, nothing is rebuilt: the picture's facts are
kept with the figure and only colours, outlines and titles are repainted (`_picture`), which is what keeps a
widget's slider move fast.

Every picture checks the size of what it will draw (`limits.check_cells`, with `limits.MAX_CELLS`) before it
builds any grid or array, and refuses a larger one with `limits.PictureTooLarge` (a CuteError) naming the size,
what it is the size of, and the limit.
"""
from __future__ import annotations

import numpy
from matplotlib.font_manager import FontProperties
from matplotlib.textpath import TextToPath

from .. import cute
from ..cute import not_in_cutedsl
from . import banks, facts, frames, grid, limits

_TEXT_SIZES = TextToPath()


def _picture(figure, key, build, paint):
    """The figure for picture `key` (a tuple of the arguments that fix what is drawn), painted by
    `paint(parts)` for the current highlight and title. If `figure` was last built for an equal key, only
    `paint` runs on the parts kept from that build; otherwise `build(figure)` draws the fixed parts (the
    grids, labels and ticks, with the facts they need) and returns (figure, parts)."""
    if figure is not None and _same(getattr(figure, "_cutekit_key", None), key):
        paint(figure._cutekit_parts)
        return figure
    if figure is not None:
        figure._cutekit_key = None          # a build that fails half-way leaves nothing to repaint
    figure, parts = build(figure)
    paint(parts)
    grid.finish(figure)
    figure._cutekit_key, figure._cutekit_parts = key, parts
    frames.mark_built(figure)
    return figure


def _widen_for(figure, text, fontsize, share=1.0):
    """Widen `figure` (never narrow it) so a title of `text` at `fontsize`, on an axes that gets `share` of the
    figure's width, fits with room for a repaint's slightly longer text (a two-digit thread, say)."""
    points, _, _ = _TEXT_SIZES.get_text_width_height_descent(text, FontProperties(size=fontsize), ismath=False)
    needed = (points / 72 * 1.08 + 0.3) / share
    width, height = figure.get_size_inches()
    if needed > width:
        figure.set_size_inches(needed, height)


def _title(ax, text, *, fontsize, pad, share=None):
    """Set an axes' title; a repaint changes only its text (set_title would also move it back down onto the
    tick labels, where only a full draw lifts it again). The first one widens the figure to fit, the axes
    getting `share` of its width (default: an equal share with the figure's other axes, side by side)."""
    if ax.get_title():
        ax.title.set_text(text)
    else:
        _widen_for(ax.figure, text, fontsize, share=1.0 / max(1, len(ax.figure.axes)) if share is None else share)
        frames.repainted(ax.set_title(text, fontsize=fontsize, pad=pad))


def _suptitle(figure, text, fontsize=10):
    """Set the figure's title; a repaint changes only its text (the layout placed it when it was built)."""
    if figure._suptitle is None:
        _widen_for(figure, text, fontsize)
        frames.repainted(figure.suptitle(text, fontsize=fontsize))
    else:
        figure._suptitle.set_text(text)


def _same(a, b) -> bool:
    if a is b:
        return True
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


def _axes_row(figure, widths, height):
    """One row of axes whose widths follow `widths` (in cells)."""
    spec = figure.add_gridspec(1, len(widths), width_ratios=[max(w, 1) for w in widths])
    return [figure.add_subplot(spec[0, i]) for i in range(len(widths))]


def _size(columns, rows, cell, extra_width=0.8, extra_height=1.0):
    return (max(3.0, columns * cell + extra_width), max(1.6, rows * cell + extra_height))


def _check_index(name, value, count):
    if not isinstance(value, (int, numpy.integer)) or isinstance(value, bool) or not 0 <= value < count:
        raise cute.CuteError(f"{name} {value!r} is outside 0..{count - 1}")


# ---- layouts ------------------------------------------------------------------------------------------------

def layout(layout, *, title=None, highlight=None, figure=None):
    """A layout as a grid of the offsets it gives each coordinate: mode 0 down, mode 1 across (a 1-D layout is
    one row; modes 1.. of a deeper layout go across together). Thicker lines group the sub-modes of a
    hierarchical mode. Colours run light to dark with the offset. `highlight=(row, column)` outlines a cell.

    A swizzled ComposedLayout is drawn with its swizzled offsets."""
    layout = facts.as_layout(layout)
    limits.check_layout(layout)

    def build(figure):
        values = facts.grid_values(layout)
        row_shape, column_shape = facts.mode_shapes(layout)
        rows, columns = values.shape
        cell = grid.cell_inches(rows, columns)
        figure = grid.new_figure(figure, _size(columns, rows, cell))
        ax = figure.add_subplot()
        grid.draw_cells(ax, grid.index_colours(values), values.astype(str).astype(object), cell=cell,
                        row_shape=row_shape, column_shape=column_shape)
        return figure, {"ax": ax, "shape": values.shape}

    def paint(parts):
        mask = numpy.zeros(parts["shape"], dtype=bool)
        if highlight is not None:
            row, column = highlight
            _check_index("row", row, parts["shape"][0])
            _check_index("column", column, parts["shape"][1])
            mask[row, column] = True
        grid.outline_cells(parts["ax"], mask)
        _title(parts["ax"], str(layout) if title is None else title, fontsize=10, pad=8)

    return _picture(figure, ("layout", layout), build, paint)


def layout_inverse(layout, *, title=None, columns=None, figure=None):
    """Which coordinate holds each index: cell k (row-major over the indices 0 .. cosize-1, `columns` per row)
    is labelled with the (row, column) whose offset is k, coloured by that coordinate's column-major
    position. Indices no coordinate reaches stay white (a layout with gaps); where several coordinates give k
    (a stride-0 broadcast) the first is shown and the cell says how many. Both the layout's size and its
    index range (cosize) must be within `limits.MAX_CELLS`."""
    layout = facts.as_layout(layout)
    limits.check_layout(layout)
    if columns is not None and (not isinstance(columns, (int, numpy.integer)) or isinstance(columns, bool)
                                or columns < 1):
        raise cute.CuteError(f"columns must be a positive int, got {columns!r}")
    values = facts.grid_values(layout)
    rows, width = values.shape
    if values.min(initial=0) < 0:
        raise cute.CuteError(f"layout {layout} gives the negative offset {int(values.min())}; an inverse is drawn "
                             "over the indices 0 .. cosize-1")
    span = int(values.max(initial=0)) + 1
    if columns is None:
        columns = width if width > 1 and span % width == 0 and span // width <= 64 else min(span, 16)
    index_rows = -(-span // columns)
    limits.check_cells(index_rows * columns, f"the inverse of {layout} (indices 0..{span - 1}, {columns} per row)",
                       advice="choose a layout with a smaller cosize")
    position = numpy.full(index_rows * columns, -1, dtype=numpy.int64)
    hits = numpy.bincount(values.ravel(), minlength=index_rows * columns)
    column_major = (numpy.arange(rows)[:, None] + rows * numpy.arange(width)[None, :]).ravel()
    order = numpy.argsort(column_major)[::-1]             # keep the first coordinate (column-major) per index
    position[values.ravel()[order]] = column_major[order]
    position = position.reshape(index_rows, columns)
    labels = grid.label_grid(index_rows, columns)
    for k in numpy.flatnonzero(position.ravel() >= 0):
        r, c = position.ravel()[k] % rows, position.ravel()[k] // rows
        labels.ravel()[k] = f"({r},{c})" if rows > 1 else f"({c})"
        if hits[k] > 1:
            labels.ravel()[k] += f"\nx{hits[k]}"
    colours = grid.index_colours(numpy.where(position >= 0, position, 0))
    colours[position < 0] = grid.EMPTY
    cell = grid.cell_inches(index_rows, columns, largest=0.55)
    figure = grid.new_figure(figure, _size(columns, index_rows, cell))
    ax = figure.add_subplot()
    grid.draw_cells(ax, colours, labels, cell=cell,
                    row_ticks=[str(r * columns) for r in range(index_rows)])
    ax.set_title((f"inverse of {layout}: coordinate at each index" if title is None else title), fontsize=10,
                 pad=8)
    grid.finish(figure)
    return figure


# ---- thread-value layouts -----------------------------------------------------------------------------------

def _tv_labels(threads, values):
    labels = grid.label_grid(*threads.shape)
    if threads.size > grid.LABEL_LIMIT:
        return labels                   # draw_cells leaves labels out above LABEL_LIMIT: no need to spell them
    for (r, c), t in numpy.ndenumerate(threads):
        if t >= 0:
            labels[r, c] = f"T{t}\nV{values[r, c]}"
    return labels


def _tv_colours(threads, highlight):
    colours = grid.palette_colours(threads, grid.THREAD_COLOURS)
    if highlight is not None:
        colours = grid.grey_out(colours, threads == highlight)
    return colours


def _text_colours(threads, highlight):
    if highlight is None:
        return None
    return numpy.where(threads == highlight, grid.TEXT, grid.MUTED_TEXT)


def draw_tv(ax, threads, values, *, cell, highlight=None, title=None, transpose=False, column_ticks=None):
    """Draw (thread, value) cells on `ax` in print_latex's style: colour by thread, label T{t} V{v}."""
    if transpose:
        threads, values = threads.T, values.T
    grid.draw_cells(ax, _tv_colours(threads, highlight), _tv_labels(threads, values), cell=cell,
                    text_colours=_text_colours(threads, highlight), column_ticks=column_ticks)
    if title:
        ax.set_title(title, fontsize=9, pad=6)


def paint_tv(ax, threads, highlight, *, transpose=False):
    """Repaint cells drawn by `draw_tv` for a new `highlight` (a thread, or None for all)."""
    if transpose:
        threads = threads.T
    grid.recolour(ax, _tv_colours(threads, highlight), _text_colours(threads, highlight))


def _thread_count(tv_layout):
    return cute.size(facts.modes(tv_layout)[0])


def tv_layout(tv_layout, tiler_mn, *, highlight=None, title=None, figure=None):
    """A (thread, value) -> tile-index layout drawn on its M x N tile (the index is column-major, m + n*M):
    each cell coloured by the thread that holds it and labelled T{t} V{v}, as CUTLASS's print_latex draws a
    TV layout. `highlight=t` greys every other thread's cells.

    A tile too wide to label legibly in one row of cells (a 4x128 copy tile) is wrapped into bands of columns
    stacked top to bottom (`grid.bands`: 4x128 as four 4x32 bands), each band's column ticks naming the tile's
    columns, so every cell keeps its T{t} V{v} label at grid.MIN_CELL_PIXELS or more."""
    rows, columns = facts.tile_size(tiler_mn)
    facts.tv_modes(tv_layout, (rows, columns))
    if highlight is not None:
        _check_index("thread", highlight, _thread_count(tv_layout))

    def build(figure):
        threads, values = facts.tv_cells(tv_layout, (rows, columns))
        longest = max(len(str(threads.max(initial=0))), len(str(values.max(initial=0)))) + 1     # "T127"
        count, width, cell = grid.bands(rows, columns, least=grid.cell_for_labels(longest, 2), largest=0.5)
        figure = grid.new_figure(figure, _size(width, count * rows + count - 1, cell))
        if count == 1:
            ax = figure.add_subplot()
            draw_tv(ax, threads, values, cell=cell)
            return figure, {"ax": ax, "threads": threads, "bands": [(ax, threads)]}
        spec = figure.add_gridspec(count, 1)
        drawn = []
        for band in range(count):
            start, stop = band * width, min(columns, (band + 1) * width)
            ax = figure.add_subplot(spec[band, 0], gid=f"columns {start}-{stop - 1}")
            draw_tv(ax, threads[:, start:stop], values[:, start:stop], cell=cell,
                    column_ticks=[str(c) for c in range(start, stop)])
            ax.set_xlim(0, width)          # a shorter last band keeps the others' cell size
            drawn.append((ax, threads[:, start:stop]))
        return figure, {"ax": drawn[0][0], "threads": threads, "bands": drawn}

    def paint(parts):
        threads = parts["threads"]
        for ax, band_threads in parts["bands"]:
            paint_tv(ax, band_threads, highlight)
        heading = f"TV layout {tv_layout} on a {rows}x{columns} tile"
        if len(parts["bands"]) > 1:
            heading += f" (in {len(parts['bands'])} bands of columns)"
        if highlight is not None:
            heading += f": thread {highlight} holds {int((threads == highlight).sum())} values"
        _title(parts["ax"], heading if title is None else title, fontsize=9, pad=6, share=1.0)

    return _picture(figure, ("tv_layout", tv_layout, (rows, columns)), build, paint)


# ---- divides ------------------------------------------------------------------------------------------------

def _tile_index(tile, rest_shape):
    """A tile given as an index or as a coordinate of the rest mode -> its column-major index."""
    count = cute.size(rest_shape)
    if isinstance(tile, tuple):
        tile = cute.make_layout(rest_shape)(tile)
    _check_index("tile", tile, count)
    return int(tile)


def _owner_cells(owner_grid, layout_coordinates, shape):
    """The tile owning each cell of a divided layout drawn as a grid (via the coordinates its cells hold)."""
    row, column, inside = facts.cell_of_coordinate(layout_coordinates, shape)
    owned = numpy.full(inside.shape, -1, dtype=numpy.int64)
    owned[inside] = owner_grid[row[inside], column[inside]]
    return owned


def divide(layout, tiler, *, tile=None, title=None, figure=None):
    """Three panels: the source layout (its offsets) coloured by the tile each element falls in, then
    logical_divide(layout, tiler) and zipped_divide(layout, tiler) drawn as grids of their two modes with the
    same colours, so each coloured cell can be followed. In the zipped panel each column is one tile.
    `tile=k` (the rest mode's index, or its coordinate) keeps that tile's colour and greys the others."""
    layout = facts.as_layout(layout)

    def build(figure):
        shape = layout.shape
        operations = {"logical_divide": cute.logical_divide, "zipped_divide": cute.zipped_divide}
        divided_layouts = {name: operation(layout, tiler) for name, operation in operations.items()}
        sizes = [cute.size(layout)] + [cute.size(d) for d in divided_layouts.values()]
        limits.check_cells(sum(sizes), f"divide({layout}, {_tiler_text(tiler)}) in three panels "
                           f"({' + '.join(map(str, sizes))})", advice="choose a smaller layout or tiler")
        owner, rest_shape = facts.tile_owner(shape, tiler)
        rank = facts.shape_rank(shape)
        identity = facts.identity_layout(shape)
        panels = [("source\n" + str(layout), layout, owner, facts.mode_shapes(layout))]
        for name, operation in operations.items():
            divided = divided_layouts[name]
            coordinates = facts.coordinates_of(operation(identity, tiler), rank)
            panels.append((f"{name}\n{divided}", divided, _owner_cells(owner, coordinates, shape),
                           facts.mode_shapes(divided)))
        grids = [facts.grid_values(p[1]) for p in panels]
        widest = sum(g.shape[1] for g in grids)
        tallest = max(g.shape[0] for g in grids)
        cell = grid.cell_inches(tallest, widest, most_width=15.0, most_height=8.0, largest=0.4)
        figure = grid.new_figure(figure, _size(widest, tallest, cell, extra_width=2.5, extra_height=1.4))
        axes = _axes_row(figure, [g.shape[1] for g in grids], tallest)
        drawn = []
        for ax, (heading, _, tiles, (row_shape, column_shape)), values in zip(axes, panels, grids):
            colours = grid.palette_colours(tiles, grid.TILE_COLOURS)
            grid.draw_cells(ax, colours, values.astype(str).astype(object), cell=cell, row_shape=row_shape,
                            column_shape=column_shape)
            ax.set_title(heading, fontsize=8, pad=6)
            drawn.append((ax, tiles, colours))
        return figure, {"figure": figure, "panels": drawn, "rest_shape": rest_shape}

    def paint(parts):
        chosen = None if tile is None else _tile_index(tile, parts["rest_shape"])
        for ax, tiles, colours in parts["panels"]:
            if chosen is None:
                grid.recolour(ax, colours)
            else:
                keep = tiles == chosen
                grid.recolour(ax, grid.grey_out(colours, keep), numpy.where(keep, grid.TEXT, grid.MUTED_TEXT))
        _suptitle(parts["figure"], title if title is not None else
                  f"divide by {_tiler_text(tiler)}" + ("" if chosen is None else f": tile {chosen}"))

    return _picture(figure, ("divide", layout, tiler), build, paint)


def _tiler_text(tiler):
    if isinstance(tiler, tuple):
        return "<" + ", ".join(str(t) for t in tiler) + ">"
    return str(tiler)


def local_tile(shape, tiler, coord, *, title=None, figure=None):
    """Which block owns each element of a `shape` tensor tiled by `tiler` (zipped_divide's rest mode: one
    colour per block, labelled with the block coordinate), with block `coord` outlined and the others faded:
    the tile `cute.local_tile(tensor, tiler, coord)` returns."""
    facts.check_shape(shape)

    def build(figure):
        owner, rest_shape = facts.tile_owner(shape, tiler)
        rows, columns = owner.shape
        labels = grid.label_grid(rows, columns)
        rest_layout = cute.make_layout(rest_shape)
        for (r, c), k in numpy.ndenumerate(owner if owner.size <= grid.LABEL_LIMIT else numpy.zeros((0, 0))):
            if k >= 0:
                labels[r, c] = cute.idx2crd(int(k), rest_layout.shape).__str__().replace(" ", "")
        colours = grid.palette_colours(owner, grid.TILE_COLOURS)
        cell = grid.cell_inches(rows, columns, largest=0.42)
        figure = grid.new_figure(figure, _size(columns, rows, cell))
        ax = figure.add_subplot()
        grid.draw_cells(ax, colours, labels, cell=cell)
        return figure, {"ax": ax, "colours": colours, "identity": cute.make_identity_tensor(shape)}

    def paint(parts):
        chosen = cute.local_tile(parts["identity"], tiler, coord)
        colours = parts["colours"].copy()
        chosen_mask = numpy.zeros(colours.shape[:2], dtype=bool)
        chosen_mask[facts.tensor_cells(chosen, shape)] = True
        colours[~chosen_mask] = 0.45 * colours[~chosen_mask] + 0.55 * grid.EMPTY
        ax = parts["ax"]
        grid.recolour(ax, colours, numpy.where(chosen_mask, grid.TEXT, grid.MUTED_TEXT))
        grid.outline_cells(ax, chosen_mask)
        _title(ax, title if title is not None else
               f"local_tile(shape {shape}, tiler {_tiler_text(tiler)}, coord {coord}): {chosen}", fontsize=9, pad=8)

    return _picture(figure, ("local_tile", shape, tiler), build, paint)


def _owner_grid(figure, owner):
    """Draw `owner` (rows, columns) of thread indices (-1: nobody): each cell in its thread's colour, labelled
    T{t}. Returns (figure, ax, colours, labels)."""
    rows, columns = owner.shape
    labels = grid.label_grid(rows, columns)
    for (r, c), t in numpy.ndenumerate(owner if owner.size <= grid.LABEL_LIMIT else numpy.zeros((0, 0))):
        if t >= 0:
            labels[r, c] = f"T{t}"
    colours = grid.palette_colours(owner, grid.THREAD_COLOURS)
    cell = grid.cell_inches(rows, columns, largest=0.42)
    figure = grid.new_figure(figure, _size(columns, rows, cell))
    ax = figure.add_subplot()
    grid.draw_cells(ax, colours, labels, cell=cell)
    return figure, ax, colours, labels


def _single_out(ax, colours, mask):
    """Keep the colours of the cells in `mask` (outlined), grey the others and mute their labels."""
    grid.recolour(ax, grid.grey_out(colours, mask), numpy.where(mask, grid.TEXT, grid.MUTED_TEXT))
    grid.outline_cells(ax, mask, width=1.6)


def local_partition(shape, thr_layout, index, *, title=None, figure=None):
    """Which thread owns each element of a `shape` tensor under local_partition(tensor, thr_layout, t): the
    thread layout is repeated over the tensor (an outer partition), so thread t owns one element of every
    thr_layout-sized tile. Thread `index` keeps its colour (outlined); the others are grey."""
    thr_layout = facts.as_layout(thr_layout)
    facts.check_shape(shape)
    _check_index("thread", index, cute.size(thr_layout))

    def build(figure):
        figure, ax, colours, _ = _owner_grid(figure, facts.thread_owner(shape, thr_layout))
        return figure, {"ax": ax, "colours": colours, "identity": cute.make_identity_tensor(shape)}

    def paint(parts):
        mine = cute.local_partition(parts["identity"], thr_layout, index)
        mine_mask = numpy.zeros(parts["colours"].shape[:2], dtype=bool)
        mine_mask[facts.tensor_cells(mine, shape)] = True
        ax = parts["ax"]
        _single_out(ax, parts["colours"], mine_mask)
        _title(ax, title if title is not None else
               f"local_partition(shape {shape}, {thr_layout}, {index}): {mine}", fontsize=9, pad=8)

    return _picture(figure, ("local_partition", shape, thr_layout), build, paint)


# ---- copies and MMAs ----------------------------------------------------------------------------------------

def copy_partition(tiled_copy, shape, thread, *, title=None, figure=None):
    """A whole `shape` tensor (more than one copy tile) as a TiledCopy's partition_S splits it: each element
    coloured by the thread whose `get_slice(t).partition_S(tensor)` holds it. Thread `thread`'s elements
    are outlined and labelled V{value} over the copy tile (rest m, rest n) they fall in: the partition's
    modes ((values, atoms), rest m, rest n), which is what tidfrg_S (C++ tile2thrfrg) builds: the copy tile
    repeated over the tensor, one thread's values in every repeat."""
    facts.check_shape(shape)
    _check_index("thread", thread, tiled_copy.size)

    def build(figure):
        identity = cute.make_identity_tensor(shape)
        figure, ax, colours, labels = _owner_grid(figure, copy_owner(tiled_copy, shape, identity))
        return figure, {"ax": ax, "colours": colours, "labels": labels, "identity": identity}

    def paint(parts):
        mine = tiled_copy.get_slice(thread).partition_S(parts["identity"])
        mine_mask = numpy.zeros(parts["colours"].shape[:2], dtype=bool)
        rows, columns = facts.tensor_cells(mine, shape)
        mine_mask[rows, columns] = True
        ax = parts["ax"]
        if parts["labels"].size <= grid.LABEL_LIMIT:        # above it no labels are drawn to change
            labels = parts["labels"].copy()
            values, rest = cute.size(mine.layout, mode=[0]), mine.layout.shape[1:]
            for k, (r, c) in enumerate(zip(rows, columns)):
                where = cute.idx2crd(k // values, rest)
                labels[r, c] = f"V{k % values}\n" + ",".join(str(i) for i in where)
            grid.relabel(ax, labels)
        _single_out(ax, parts["colours"], mine_mask)
        _title(ax, title if title is not None else
               f"partition_S of a {shape[0]}x{shape[1]} tensor, thread {thread}: {mine.layout}", fontsize=9, pad=8)

    return _picture(figure, ("copy_partition", tiled_copy, shape), build, paint)



def copy_owner(tiled_copy, shape, identity=None):
    """Which thread's partition_S holds each element of a `shape` tensor: an array of thread indices of shape
    (rows, columns) (-1: none; where several threads hold one element, the highest). The same as setting
    `owner[cells of get_slice(t).partition_S(identity)] = t` for t = 0, 1, ..., read at once from tidfrg_S
    (thread, fragment, rest), whose thread mode gives each thread's first coordinate and whose other modes
    add the same offsets for every thread; its size (threads x values x copy tiles, the tensor padded to
    whole copy tiles) is checked against MAX_CELLS first."""
    identity = cute.make_identity_tensor(shape) if identity is None else identity
    arranged = not_in_cutedsl.tidfrg_S(tiled_copy, identity.layout)
    limits.check_cells(cute.size(arranged), f"a {str(shape).replace(' ', '')} tensor partitioned by a "
                       f"{tiled_copy.size}-thread TiledCopy (threads x values x copy tiles)",
                       advice="choose a smaller shape or copy")
    rank = facts.shape_rank(shape)
    thread_mode, fragment_mode, rest_mode = facts.modes(arranged)
    coordinates = (facts.mode_coordinates(thread_mode, rank)[:, None, None, :]
                   + facts.mode_coordinates(fragment_mode, rank)[None, :, None, :]
                   + facts.mode_coordinates(rest_mode, rank)[None, None, :, :])
    row, column, inside = facts.cell_of_coordinate(coordinates, shape)
    threads = numpy.broadcast_to(numpy.arange(coordinates.shape[0])[:, None, None], inside.shape)
    owner = numpy.full(facts.shape_extent(shape), -1, dtype=numpy.int64)
    # thread-major order: where threads share an element, NumPy keeps the last write, the highest thread
    owner[row[inside], column[inside]] = threads[inside]
    return owner


def tiled_copy(tiled_copy, *, highlight=None, title=None, figure=None):
    """A TiledCopy's source and destination (thread, value) layouts on its tile, side by side, as
    print_latex(TiledCopy) draws them: which thread reads each source element and which writes each
    destination element, and as which of its values. `highlight=t` greys every other thread."""
    rows, columns = facts.tile_size(tiled_copy.tiler_mn)
    limits.check_cells(2 * rows * columns, f"a TiledCopy drawn as source and destination tiles of {rows}x{columns}",
                       advice="choose a copy with a smaller tile")
    for tv in (tiled_copy.layout_src_tv_tiled, tiled_copy.layout_dst_tv_tiled):
        facts.tv_modes(tv, (rows, columns))
    if highlight is not None:
        _check_index("thread", highlight, tiled_copy.size)

    def build(figure):
        cell = grid.cell_inches(rows, 2 * columns, most_width=14.0, largest=0.45)
        figure = grid.new_figure(figure, _size(2 * columns, rows, cell, extra_width=1.6, extra_height=1.3))
        axes = _axes_row(figure, [columns, columns], rows)
        drawn = []
        for ax, name, tv in ((axes[0], "source", tiled_copy.layout_src_tv_tiled),
                             (axes[1], "destination", tiled_copy.layout_dst_tv_tiled)):
            threads, values = facts.tv_cells(tv, (rows, columns))
            draw_tv(ax, threads, values, cell=cell, title=f"{name}: {tv}")
            drawn.append((ax, threads))
        return figure, {"figure": figure, "panels": drawn}

    def paint(parts):
        for ax, threads in parts["panels"]:
            paint_tv(ax, threads, highlight)
        _suptitle(parts["figure"], title if title is not None else
                  f"TiledCopy on a {rows}x{columns} tile, {tiled_copy.size} threads")

    return _picture(figure, ("tiled_copy", tiled_copy), build, paint)


def tiled_mma(tiled_mma, *, highlight=None, title=None, figure=None):
    """A TiledMMA's A (M x K), B and C (M x N) thread-value layouts, arranged as print_latex(TiledMMA) does:
    A on the left, B above C drawn K down and N across (so B's columns line up with C's), C bottom right.
    Each cell: the thread that holds it and as which value. `highlight=t` greys every other thread."""
    m, n, k = (tiled_mma.get_tile_size(i) for i in range(3))
    limits.check_cells(m * k + n * k + m * n, f"a TiledMMA drawn as A ({m}x{k}), B ({n}x{k}) and C ({m}x{n})",
                       advice="choose a TiledMMA with a smaller tile")
    for tv, tile in ((tiled_mma.tv_layout_A_tiled, (m, k)), (tiled_mma.tv_layout_B_tiled, (n, k)),
                     (tiled_mma.tv_layout_C_tiled, (m, n))):
        facts.tv_modes(tv, tile)
    if highlight is not None:
        _check_index("thread", highlight, tiled_mma.size)

    def build(figure):
        cell = grid.cell_inches(k + m, k + n, most_width=13.0, most_height=11.0, largest=0.45)
        figure = grid.new_figure(figure, _size(k + n, k + m, cell, extra_width=1.8, extra_height=2.0))
        spec = figure.add_gridspec(2, 2, width_ratios=[k, n], height_ratios=[k, m])
        corner = figure.add_subplot(spec[0, 0])
        corner.axis("off")
        corner.text(0.5, 0.5, f"{tiled_mma.size} threads\nM={m} N={n} K={k}", ha="center", va="center",
                    fontsize=9)
        operands = [("A", spec[1, 0], tiled_mma.tv_layout_A_tiled, (m, k), False, f"A ({m}x{k}: M x K)"),
                    ("B", spec[0, 1], tiled_mma.tv_layout_B_tiled, (n, k), True,
                     f"B ({n}x{k}: N x K, drawn K x N)"),
                    ("C", spec[1, 1], tiled_mma.tv_layout_C_tiled, (m, n), False, f"C ({m}x{n}: M x N)")]
        drawn = []
        for name, place, tv, tile, transpose, heading in operands:
            ax = figure.add_subplot(place, gid=name)
            threads, values = facts.tv_cells(tv, tile)
            draw_tv(ax, threads, values, cell=cell, title=heading, transpose=transpose)
            drawn.append((ax, threads, transpose))
        return figure, {"figure": figure, "panels": drawn}

    def paint(parts):
        for ax, threads, transpose in parts["panels"]:
            paint_tv(ax, threads, highlight, transpose=transpose)
        _suptitle(parts["figure"], title if title is not None else
                  "TiledMMA" + ("" if highlight is None else f": thread {highlight}"))

    return _picture(figure, ("tiled_mma", tiled_mma), build, paint)


def ldmatrix(num_matrices=4, transpose=False, *, lane=None, title=None, figure=None):
    """ldmatrix (`LdMatrix8x8x16bOp`): a warp loads `num_matrices` 8x8 matrices of 16-bit elements from
    shared memory. Each matrix row is 16 contiguous bytes whose address one lane supplies (the row labels:
    lane 8*i + r gives row r of matrix i). Each cell says which thread receives the element and where: R{i}
    is the 32-bit register for matrix i, .lo/.hi its lower or upper 16 bits. Matrices are placed as an MMA's
    A fragment uses them (0 and 1 down the left, 2 and 3 down the right). `lane=l` outlines the row lane l
    addresses and greys what every other thread receives."""
    if num_matrices not in (1, 2, 4):
        raise cute.CuteError(f"ldmatrix loads 1, 2 or 4 matrices, not {num_matrices!r}")
    if lane is not None:
        _check_index("lane", lane, 32)

    def build(figure):
        atom = cute.make_copy_atom(cute.nvgpu.warp.LdMatrix8x8x16bOp(transpose=transpose,
                                                                     num_matrices=num_matrices), cute.Float16)
        # destination: (thread, value) -> element offset; matrix i is elements 64i .. 64i+63, row-major by 8
        threads, values = facts.tv_cells(atom.layout_dst_tv, (1, 64 * num_matrices))
        threads, values = threads.reshape(num_matrices, 8, 8), values.reshape(num_matrices, 8, 8)
        # source: lane t supplies the address of the row holding its value 0 (lanes past 8*num_matrices
        # repeat earlier rows: their addresses are ignored by the hardware)
        source_threads, _ = facts.tv_cells(atom.layout_src_tv, (1, 64 * num_matrices))
        row_lane = source_threads.reshape(num_matrices, 8, 8)[:, :, 0]
        grid_columns = 2 if num_matrices == 4 else 1
        grid_rows = 2 if num_matrices >= 2 else 1
        cell = 0.5
        figure = grid.new_figure(figure, (grid_columns * (8 * cell + 1.2) + 0.4,
                                          grid_rows * (8 * cell + 0.7) + 0.9))
        spec = figure.add_gridspec(grid_rows, grid_columns)
        drawn = []
        for matrix in range(num_matrices):
            ax = figure.add_subplot(spec[matrix % 2, matrix // 2], gid=f"matrix {matrix}")
            labels = grid.label_grid(8, 8)
            for (r, c), t in numpy.ndenumerate(threads[matrix]):
                v = values[matrix][r, c]
                labels[r, c] = f"T{t}\nR{v // 2}.{'lo' if v % 2 == 0 else 'hi'}"
            grid.draw_cells(ax, grid.palette_colours(threads[matrix], grid.THREAD_COLOURS), labels, cell=cell,
                            row_ticks=[f"lane {row_lane[matrix, r]}" for r in range(8)])
            ax.set_title(f"matrix {matrix} (register R{matrix})", fontsize=9, pad=6)
            drawn.append((ax, threads[matrix], row_lane[matrix]))
        return figure, {"figure": figure, "panels": drawn}

    def paint(parts):
        for ax, threads, row_lane in parts["panels"]:
            paint_tv(ax, threads, lane)
            grid.outline_cells(ax, numpy.broadcast_to((row_lane == lane)[:, None], (8, 8)))
        _suptitle(parts["figure"], title if title is not None else
                  f"ldmatrix .x{num_matrices}{' .trans' if transpose else ''}: row addresses from lanes, "
                  "elements to threads" + ("" if lane is None else f" (lane {lane})"))

    return _picture(figure, ("ldmatrix", num_matrices, transpose), build, paint)


# ---- shared-memory banks ------------------------------------------------------------------------------------

def bank_conflicts(layout, *, element_bits=32) -> int:
    """The extra shared-memory wavefronts over all rows of `layout`, each row read as one request
    (see `cutekit.render.banks`). 0 means conflict-free. A layout of more than `limits.MAX_CELLS` elements
    is refused (PictureTooLarge), as its picture would be."""
    return banks.bank_conflicts(layout, element_bits)


def _bank_facts(layout, element_bits):
    """What a banks panel shows of `layout`: its offsets, the bank of each and the conflicts of each row."""
    offsets = facts.grid_values(layout)
    return {"offsets": offsets, "banks": banks.banks_of(offsets, element_bits),
            "per_access": banks.conflicts_per_access(layout, element_bits)}


def _conflict_marks(offsets, element_bits, row):
    """For one row (one request): True for each element whose bank is asked for more than one distinct word."""
    words = banks.words_of(offsets[row], element_bits)
    distinct_words = numpy.unique(words)
    per_bank = numpy.bincount(distinct_words % banks.BANKS, minlength=banks.BANKS)
    return per_bank[words % banks.BANKS] > 1


def _paint_banks(ax, bank_facts, element_bits, highlight_row, heading, share=0.5):
    """Colour a banks panel (drawn by `swizzle`) for `bank_facts`; `highlight_row` greys the other rows and
    writes the conflicting banks of that row in dark red."""
    bank_grid = bank_facts["banks"]
    grid.relabel(ax, bank_grid.astype(str).astype(object))
    colours = grid.palette_colours(bank_grid, grid.BANK_COLOURS)
    text_colours = None
    keep = numpy.zeros_like(bank_grid, dtype=bool)
    if highlight_row is not None:
        keep[highlight_row] = True
        colours = grid.grey_out(colours, keep)
        text_colours = numpy.where(keep, grid.TEXT, grid.MUTED_TEXT).astype(object)
        conflicting = _conflict_marks(bank_facts["offsets"], element_bits, highlight_row)
        text_colours[highlight_row, conflicting] = grid.CONFLICT_TEXT
    grid.recolour(ax, colours, text_colours)
    grid.outline_cells(ax, keep, colour="#202020", width=1.6)
    per_access = bank_facts["per_access"]
    _title(ax, f"{heading}: {sum(per_access)} conflicts (worst {max(per_access, default=0) + 1}-way)",
           fontsize=9, pad=6, share=share)


def swizzle(swizzle, layout, *, element_bits=32, highlight_row=None, title=None, figure=None):
    """The shared-memory bank of every element of `layout` (mode 0 down: one row = one request; see
    `cutekit.render.banks`), before and after composing it with `swizzle`, with the bank conflicts of each
    in the titles. `highlight_row=r` greys the other rows and writes the conflicting banks of row r in dark red.
    Redrawn into its own figure for another swizzle or row, only the "after" banks are recomputed."""
    layout = facts.as_layout(layout)
    limits.check_cells(2 * cute.size(layout), f"a swizzle picture of a {str(layout.shape).replace(' ', '')} layout "
                       "(before and after panels)")

    def build(figure):
        before = _bank_facts(layout, element_bits)
        rows, columns = before["banks"].shape
        cell = grid.cell_inches(rows, 2 * columns, most_width=14.0, largest=0.36)
        stacked = cell < grid.MIN_CELL_INCHES and rows * columns <= grid.LABEL_LIMIT
        if stacked:     # too wide side by side to read the bank numbers: "before" above "after"
            cell = grid.cell_inches(2 * rows + 1, columns, most_width=14.0, largest=0.36)
            figure = grid.new_figure(figure, _size(columns, 2 * rows, cell, extra_width=1.0, extra_height=2.0))
            spec = figure.add_gridspec(2, 1)
            axes = [figure.add_subplot(spec[0, 0]), figure.add_subplot(spec[1, 0])]
        else:
            figure = grid.new_figure(figure, _size(2 * columns, rows, cell, extra_width=1.6, extra_height=1.4))
            axes = _axes_row(figure, [columns, columns], rows)
        row_shape, column_shape = facts.mode_shapes(layout)
        for ax in axes:
            grid.draw_cells(ax, grid.palette_colours(before["banks"], grid.BANK_COLOURS),
                            before["banks"].astype(str).astype(object), cell=cell, row_shape=row_shape,
                            column_shape=column_shape, fontsize=grid.label_fontsize(cell, 2, 1))
        return figure, {"figure": figure, "axes": axes, "before": before, "rows": rows, "after": {},
                        "share": 1.0 if stacked else 0.5}

    def paint(parts):
        if highlight_row is not None:
            _check_index("row", highlight_row, parts["rows"])
        if swizzle not in parts["after"]:
            parts["after"][swizzle] = _bank_facts(cute.make_composed_layout(swizzle, 0, layout), element_bits)
        after = parts["after"][swizzle]
        before_ax, after_ax = parts["axes"]
        _paint_banks(before_ax, parts["before"], element_bits, highlight_row, "before", parts["share"])
        _paint_banks(after_ax, after, element_bits, highlight_row, f"after {swizzle}", parts["share"])
        totals = sum(parts["before"]["per_access"]), sum(after["per_access"])
        _suptitle(parts["figure"], title if title is not None else
                  f"banks of {layout}, {element_bits}-bit elements: conflicts {totals[0]} -> {totals[1]}")

    return _picture(figure, ("swizzle", layout, element_bits), build, paint)
