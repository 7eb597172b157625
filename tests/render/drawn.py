"""Reading a figure back: what each cell of a drawn grid shows (its label and fill colour).

Every picture draws its cells as one QuadMesh (gid "cells", face colours row-major over the grid) and its
labels as one collection that knows which cell holds which text (`cutekit.render.grid.labels_of`)."""
import numpy

from cutekit.render import grid


def cell_colours(ax) -> numpy.ndarray:
    """The fill colour of every cell, shape (rows, columns, 4)."""
    mesh = next(c for c in ax.collections if c.get_gid() == "cells")
    rows, columns = int(ax.get_ylim()[0]), int(ax.get_xlim()[1])
    return numpy.asarray(mesh.get_facecolor()).reshape(rows, columns, 4)


def cell_labels(ax) -> dict:
    """{(row, column): label} for every labelled cell."""
    return grid.labels_of(ax)


def label_colours(ax) -> dict:
    """{(row, column): RGBA of the label's text}."""
    for collection in ax.collections:
        if collection.get_gid() == "labels":
            return {cell: tuple(colour) for cell, colour in zip(collection.cells, collection.get_facecolor())}
    return {}


def contrast_ratio(a, b) -> float:
    """WCAG 2 contrast ratio of two colours (1 to 21; 4.5 is the minimum for normal text), each RGBA
    composited over the white figure background."""
    def luminance(colour):
        rgba = numpy.asarray(grid.to_rgba(colour), dtype=float)
        rgb = rgba[:3] * rgba[3] + (1 - rgba[3])
        linear = numpy.where(rgb <= 0.04045, rgb / 12.92, ((rgb + 0.055) / 1.055) ** 2.4)
        return float(linear @ (0.2126, 0.7152, 0.0722))
    light, dark = sorted((luminance(a), luminance(b)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


def same_colour(a, b) -> bool:
    return numpy.allclose(a, b, atol=1e-6)


def is_grey(colour) -> bool:
    return same_colour(colour, grid.GREY)


def axes_named(figure, start: str):
    """The axes whose title starts with `start`."""
    return next(ax for ax in figure.axes if ax.get_title().startswith(start))


def outlined_cells(ax) -> set:
    """The cells surrounded by the outline (cells whose four edges... read as: cells inside the outlined
    region, found from the outline's segments by flood from its vertical edges)."""
    segments = [numpy.asarray(s) for c in ax.collections if c.get_gid() == "outline" for s in c.get_segments()]
    vertical = sorted((int(s[0][0]), int(min(s[0][1], s[1][1]))) for s in segments if s[0][0] == s[1][0])
    inside = set()
    rows = {}
    for x, y in vertical:
        rows.setdefault(y, []).append(x)
    for y, xs in rows.items():
        xs = sorted(xs)
        for left, right in zip(xs[0::2], xs[1::2]):
            inside.update((y, x) for x in range(left, right))
    return inside
