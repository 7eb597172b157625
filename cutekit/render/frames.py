"""PNG frames of a picture whose highlight moves (what a widget shows after each slider move), fast.

A full PNG (`render.png_bytes`) draws every artist of the figure, and most of that time goes to the parts a
highlight never changes: the axes' ticks and tick labels. A frame draws those once, keeps the pixels (the
background), and on every later frame of the same picture puts the background back and draws only the
artists a repaint may change (`moving_artists`: cells, labels, outlines, and the titles marked `repainted`),
in the order Figure.draw would. The result is the same image a full draw gives.

A picture built by `cutekit.render` is marked (`mark_built`) each time it is built from scratch, which is
what makes the kept background stale; a figure that was never marked is drawn in full every time.
"""
from __future__ import annotations

import contextlib
import io

import numpy
from PIL import Image
from matplotlib.backends.backend_agg import RendererAgg
from matplotlib.text import Text


def mark_built(figure) -> None:
    """Say that `figure`'s fixed parts (axes, ticks, layout) were just (re)built: the next frame draws all."""
    figure._cutekit_build = object()


def repainted(text):
    """Mark a Text (a title) that a repaint may change, so frames draw it again; other texts stay in the kept
    background (drawing a text costs more than drawing a thousand cells)."""
    text._cutekit_repainted = True
    return text


def moving_artists(figure) -> list:
    """The artists a repaint may change, in drawing order: per axes its collections, patches and lines and the
    texts marked `repainted` (by zorder, as Axes.draw sorts them), then the figure's marked texts (the
    suptitle). What is left out (the axes' background, spines, ticks, tick labels and fixed titles) is the
    kept background."""
    def marked(texts):
        return [text for text in texts if getattr(text, "_cutekit_repainted", False)]
    moving = []
    for ax in figure.axes:
        mine = [*ax.collections, *ax.patches, *ax.lines,
                *marked([*ax.texts, ax.title, ax._left_title, ax._right_title])]
        moving += sorted(mine, key=lambda artist: artist.get_zorder())
    return moving + sorted(marked(figure.texts), key=lambda artist: artist.get_zorder())


def png_frame(figure, dpi: float = 90) -> bytes:
    """`figure` as PNG bytes at `dpi`, drawing only its moving artists over a kept background when the figure
    was drawn at this size and dpi since it was last built. The same pixels `figure.savefig(format="png")`
    gives (opaque figures: the PNG is RGB)."""
    saved_dpi = figure.dpi
    figure.dpi = dpi
    try:
        pixels = _draw(figure, dpi)
    finally:
        figure.dpi = saved_dpi
    return _encode(figure, pixels)


def _draw(figure, dpi) -> numpy.ndarray:
    width, height = figure.canvas.get_width_height(physical=True)      # as savefig sizes its renderer
    build = getattr(figure, "_cutekit_build", None)
    kept = getattr(figure, "_cutekit_frame", None)
    moving = moving_artists(figure)
    if build is None or kept is None or kept["key"] != (build, dpi, width, height):
        renderer = RendererAgg(width, height, dpi)
        with _hidden(moving):
            figure.draw(renderer)
        kept = {"key": (build, dpi, width, height), "renderer": renderer,
                "background": renderer.copy_from_bbox(figure.bbox)}
        figure._cutekit_frame = kept
    else:
        renderer = kept["renderer"]
        renderer.restore_region(kept["background"])
    for artist in moving:
        if artist.get_visible():
            artist.draw(renderer)
    figure.stale = False
    return numpy.asarray(renderer.buffer_rgba())


@contextlib.contextmanager
def _hidden(artists):
    """Leave `artists` out of a draw. Texts are made transparent rather than invisible: Axes.draw places a
    title above the tick labels by measuring it, and an invisible title measures as nothing."""
    texts = [a for a in artists if isinstance(a, Text)]
    others = [a for a in artists if not isinstance(a, Text) and a.get_visible()]
    alphas = [a.get_alpha() for a in texts]
    for a in texts:
        a.set_alpha(0.0)
    for a in others:
        a.set_visible(False)
    try:
        yield
    finally:
        for a, alpha in zip(texts, alphas):
            a.set_alpha(alpha)
        for a in others:
            a.set_visible(True)


def _encode(figure, pixels: numpy.ndarray) -> bytes:
    """PNG bytes of the RGBA pixels, reusing the last frame's bytes when no pixel changed."""
    last = getattr(figure, "_cutekit_png", None)
    if last is not None and last[0].shape == pixels.shape and numpy.array_equal(last[0], pixels):
        return last[1]
    png = png_of(pixels[..., :3])
    figure._cutekit_png = (pixels.copy(), png)
    return png


def png_of(rgb: numpy.ndarray) -> bytes:
    """A PNG file of an (height, width, 3) uint8 image, by Pillow at zlib level 1: a picture of flat fills
    compresses about as well as at the default level 6, in 27 ms instead of 43 for a 1000 x 1000 frame."""
    out = io.BytesIO()
    Image.fromarray(rgb).save(out, format="PNG", compress_level=1)
    return out.getvalue()


def png_bytes(figure, dpi=100) -> bytes:
    """The figure as PNG bytes (what a widget shows, and a quick way to compare two pictures)."""
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=dpi, facecolor=figure.get_facecolor())
    return buffer.getvalue()
