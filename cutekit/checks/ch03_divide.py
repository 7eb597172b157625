"""Chapter 03 exercises: dividing a layout into tiles (logical and zipped divides, tilers, slicing a tile, the
predicate of an edge tile).

Every answer is a function of the exercise's parameters, asked on cases drawn from the seed, never only on
the notebook's worked example. Reference criteria use cutekit.cute; on `cutedsl-cpu` real CuTeDSL answers
the same questions in a subprocess (`*_in_cutedsl(cute, ...)` at the bottom) and must agree.
"""
from __future__ import annotations

from .common import DIVIDES, case_text, cutedsl_gives_the_same, describe_layout, each_outcome
from .grading import Criterion, Exercise, Verdict, failed, passed

THIS_MODULE = __name__


# ---- ch03.logical_divide_by_hand -----------------------------------------------------------------------------

def _divide_cases(rng):
    """One-dimensional layouts A (compact, sometimes scaled by a stride) and tilers B = k:d that divide them."""
    cases = []
    while len(cases) < 6:
        tile, step = rng.randint(2, 4), rng.choice([1, 2, 3])
        copies = rng.randint(2, 4)
        extent = tile * step * copies
        scale = rng.choice([1, 1, 2, 3])
        case = {"A": ((extent,), (scale,)), "B": (tile, step)}
        if (tile, step, extent, scale) != (4, 2, 24, 1) and case not in cases:
            cases.append(case)
    # a two-mode A: the divide walks through its modes
    cases.append({"A": ((4, 6), (1, 4)), "B": (rng.choice([2, 3]), 2)})
    return cases


def _a_and_b(case):
    from cutekit import cute
    (shape, stride), (tile, step) = case["A"], case["B"]
    a = cute.make_layout(shape[0], stride=stride[0]) if len(shape) == 1 else cute.make_layout(shape, stride=stride)
    return a, cute.make_layout(tile, stride=step)


def _ask_divide(answer, case):
    a, b = _a_and_b(case)
    return describe_layout(answer(a, b))


def _reference_divide(case) -> str:
    from cutekit import cute
    return str(cute.logical_divide(*_a_and_b(case)))


def _divide_part(which: int):
    """Criterion on mode `which` of the learner's divide: 0 is the tile (A through B), 1 the rest."""
    @each_outcome
    def judge(outcome) -> Verdict | None:
        from cutekit import cute
        a, b = _a_and_b(outcome.case)
        want_layout = cute.logical_divide(a, b)
        got = outcome.value
        where = f"divide_by_hand({a}, {b})"
        if not isinstance(got["shape_tuple"], tuple) or len(got["shape_tuple"]) != 2:
            return failed(f"{where}: the result should have two modes (tile, rest); yours is {got['text']}")
        mode = cute.make_layout(got["shape_tuple"][which], stride=got["stride_tuple"][which])
        want_text = str(cute.make_layout(want_layout.shape[which], stride=want_layout.stride[which]))
        if str(mode) != want_text:
            name = "tile" if which == 0 else "rest"
            why = (" (the tile part is A read through B: composition(A, B))" if which == 0 else
                   " (the rest part is A read through complement(B, size(A)): where copies of B start)")
            return failed(f"{where}: the {name} mode should be {want_text}, yours is {mode}{why}")
        return None
    return judge


@each_outcome
def _whole_divide(outcome) -> Verdict | None:
    want = _reference_divide(outcome.case)
    if outcome.value["text"] != want:
        return failed(f"{case_text(outcome.case)}: logical_divide prints {want}, yours is {outcome.value['text']}")
    return None


LOGICAL_DIVIDE_BY_HAND = Exercise(
    id="ch03.logical_divide_by_hand",
    statement="Write divide_by_hand(A, B) for 1-D layouts: logical_divide(A, B), built from complement, "
              "make_layout and composition (the divide functions are switched off while it is checked).",
    example="divide_by_hand(24:1, 4:2) prints (4,(2,3)):(2,(1,8))",
    cases=_divide_cases,
    ask=_ask_divide,
    forbidden=DIVIDES,
    criteria=(
        Criterion("mode 0 is one tile: A read through B", "reference", 1, _divide_part(0)),
        Criterion("mode 1 is the rest: A read through complement(B, size(A))", "reference", 1, _divide_part(1)),
        Criterion("the whole layout prints as logical_divide(A, B)", "reference", 1, _whole_divide),
        Criterion("real CuTeDSL's logical_divide gives your layouts", "cutedsl-cpu", 1,
                  cutedsl_gives_the_same(THIS_MODULE, "logical_divide_in_cutedsl",
                                         lambda case: (case["A"], case["B"]),
                                         lambda value: value["text"])),
    ),
)


# ---- ch03.tiler_from_picture ---------------------------------------------------------------------------------

def _picture(rows, columns, tiler_rows, tiler_columns):
    """The tile number of every cell when `zipped_divide(make_layout((rows, columns)), tiler)` tiles it."""
    from cutekit import cute
    tiler = (cute.make_layout(tiler_rows[0], stride=tiler_rows[1]),
             cute.make_layout(tiler_columns[0], stride=tiler_columns[1]))
    return _tile_numbers(rows, columns, tiler)


def _tile_numbers(rows, columns, tiler):
    """Grid of tile numbers (the rest mode's 1-D index) drawn by a tiler; cells no tile covers are None,
    cells outside the matrix that a tile reaches are reported in the second value."""
    from cutekit import cute
    divided = cute.zipped_divide(cute.make_identity_tensor((rows, columns)), tiler)
    grid = [[None] * columns for _ in range(rows)]
    outside, twice = [], []
    for tile in range(cute.size(divided, mode=[1])):
        for inside in range(cute.size(divided, mode=[0])):
            m, n = divided[(inside, tile)]
            if m >= rows or n >= columns:
                outside.append((m, n))
            elif grid[m][n] is not None:
                twice.append((m, n))
            else:
                grid[m][n] = tile
    return tuple(tuple(row) for row in grid), outside, twice


def _tiler_cases(rng):
    cases = []
    for kind in ("blocks", "blocks", "every k-th row", "every k-th row", "blocks"):
        tile_m, tile_n = rng.randint(1, 3), rng.randint(2, 4)
        step = rng.randint(2, 3) if kind != "blocks" else 1
        rows, columns = tile_m * step * rng.randint(1, 2), tile_n * rng.randint(2, 3)
        if kind != "blocks" and tile_m == 1:
            tile_m = 2
            rows = tile_m * step
        if kind == "blocks" and rows == tile_m:
            rows *= 2
        grid, _, _ = _picture(rows, columns, (tile_m, step), (tile_n, 1))
        cases.append({"picture": grid, "_tiler": ((tile_m, step), (tile_n, 1))})
    return cases


def _ask_tiler(answer, case):
    from cutekit import cute
    picture = case["picture"]
    tiler = answer(picture)
    if not isinstance(tiler, (tuple, list)) or len(tiler) != 2:
        raise TypeError(f"expected a tuple of two layouts (or sizes), got {tiler!r}")
    tiler = tuple(tiler)
    grid, outside, twice = _tile_numbers(len(picture), len(picture[0]), tiler)
    return {"tiler": "(" + ",".join(str(part) for part in tiler) + ")", "grid": grid,
            "outside": outside[:3], "twice": twice[:3],
            "tile_size": cute.size(cute.zipped_divide(cute.make_layout((len(picture), len(picture[0]))), tiler),
                                   mode=[0])}


def _tile_size(case) -> int:
    (rows, _), (columns, _) = case["_tiler"]
    return rows * columns


@each_outcome
def _tiler_size_criterion(outcome) -> Verdict | None:
    want, got = _tile_size(outcome.case), outcome.value
    if got["tile_size"] != want:
        return failed(f"picture {len(outcome.case['picture'])}x{len(outcome.case['picture'][0])}: one tile of "
                      f"the picture has {want} cells, your tiler {got['tiler']} takes {got['tile_size']}")
    if got["outside"]:
        return failed(f"your tiler {got['tiler']} reaches cells outside the matrix, e.g. {got['outside'][0]}")
    return None


@each_outcome
def _tiler_picture_criterion(outcome) -> Verdict | None:
    picture, got = outcome.case["picture"], outcome.value
    for m, row in enumerate(picture):
        for n, want in enumerate(row):
            if got["grid"][m][n] != want:
                hint = ""
                if picture[1 % len(picture)][0] != picture[0][0] and got["grid"][1 % len(picture)][0] == got["grid"][0][0]:
                    hint = " (in this picture a tile skips rows: its row layout needs a stride, e.g. 2:3)"
                return failed(f"with your tiler {got['tiler']}, cell ({m}, {n}) is in tile {got['grid'][m][n]}; "
                              f"the picture puts it in tile {want}{hint}")
    return None


TILER_FROM_PICTURE = Exercise(
    id="ch03.tiler_from_picture",
    statement="Write tiler_from_picture(picture): the tiler (two layouts or sizes) for which "
              "zipped_divide(make_layout((M, N)), tiler) numbers the tiles as drawn.",
    example="a 4x6 picture of 2x3 blocks gives (2:1, 3:1)",
    cases=_tiler_cases,
    ask=_ask_tiler,
    criteria=(
        Criterion("one tile has as many cells as the picture's tiles, all inside the matrix", "reference", 1,
                  _tiler_size_criterion),
        Criterion("every cell lands in the tile the picture draws", "reference", 2, _tiler_picture_criterion),
        Criterion("real CuTeDSL divides the same way", "cutedsl-cpu", 1,
                  cutedsl_gives_the_same(THIS_MODULE, "tiler_picture_in_cutedsl",
                                         lambda case: (len(case["picture"]), len(case["picture"][0]), case["_tiler"]),
                                         lambda value: "None")),
    ),
)


# ---- ch03.predict_zipped -------------------------------------------------------------------------------------

def _zipped_cases(rng):
    cases = []
    while len(cases) < 6:
        tile_m, tile_n = rng.choice([1, 2, 4, 8, 16]), rng.choice([2, 4, 8, 32, 128])
        m, n = tile_m * rng.randint(2, 6), tile_n * rng.randint(2, 5)
        case = {"M": m, "N": n, "tile_m": tile_m, "tile_n": tile_n}
        if tile_m != tile_n and (m, n, tile_m, tile_n) != (256, 512, 16, 128) and case not in cases and tile_m > 1:
            cases.append(case)
    return cases


def _reference_zipped(case) -> str:
    from cutekit import cute
    return str(cute.zipped_divide(cute.make_layout((case["M"], case["N"]), stride=(case["N"], 1)),
                                  (case["tile_m"], case["tile_n"])))


def _ask_zipped(answer, case):
    value = answer(case["M"], case["N"], case["tile_m"], case["tile_n"])
    return str(value)


def _zipped_part(part: str):
    @each_outcome
    def judge(outcome) -> Verdict | None:
        want = _reference_zipped(outcome.case)
        got = outcome.value
        want_part, got_part = (want.split(":", 1)[0], got.split(":", 1)[0]) if part == "shape" else \
            (want.split(":", 1)[-1], got.split(":", 1)[-1] if ":" in got else "")
        if want_part == got_part:
            return None
        case = outcome.case
        why = ""
        if part == "shape" and got_part.startswith(f"(({case['tile_m']},{case['tile_n']}),({case['tile_m']}"):
            why = " (the rest counts tiles: M // tile_m and N // tile_n)"
        elif part == "stride":
            why = (" (strides are memory steps: inside a tile, one row down is N and one column across is 1; "
                   "one tile down is tile_m rows of N, one tile across is tile_n)")
        return failed(f"{case_text(case)}: the {part} should be {want_part}, yours is {got_part or got}{why}")
    return judge


PREDICT_ZIPPED = Exercise(
    id="ch03.predict_zipped",
    statement="Write zipped_text(M, N, tile_m, tile_n): what print shows for zipped_divide of the row-major "
              "(M,N):(N,1) by (tile_m, tile_n) (the divide functions are switched off).",
    example="zipped_text(256, 512, 16, 128) is ((16,128),(16,4)):((512,1),(8192,128))",
    cases=_zipped_cases,
    ask=_ask_zipped,
    forbidden=DIVIDES,
    criteria=(
        Criterion("the shape: ((tile),(number of tiles))", "reference", 1, _zipped_part("shape")),
        Criterion("the strides: steps inside a tile, then from tile to tile", "reference", 2, _zipped_part("stride")),
        Criterion("real CuTeDSL prints the same", "cutedsl-cpu", 1,
                  cutedsl_gives_the_same(THIS_MODULE, "zipped_in_cutedsl",
                                         lambda case: (case["M"], case["N"], case["tile_m"], case["tile_n"]),
                                         lambda value: value)),
    ),
)


# ---- ch03.slice_block ----------------------------------------------------------------------------------------

def _slice_cases(rng):
    cases = []
    while len(cases) < 6:
        tile_m, tile_n = rng.randint(2, 4), rng.randint(2, 5)
        tiles_m, tiles_n = rng.randint(2, 4), rng.randint(2, 3)
        rows, columns = tile_m * tiles_m - rng.choice([0, 0, 1]), tile_n * tiles_n
        if tile_m == tile_n or tiles_m == tiles_n:
            continue
        bm, bn = rng.randrange(tiles_m), rng.randrange(1, tiles_n)
        block = (bm, bn) if len(cases) % 2 else bm + tiles_m * bn
        cases.append({"shape": (rows, columns), "tiler": (tile_m, tile_n), "block": block,
                      "_first": (bm * tile_m, bn * tile_n)})
    return cases


def _ask_slice(answer, case):
    from cutekit import cute
    tensor = cute.make_identity_tensor(case["shape"])
    tile = answer(tensor, case["tiler"], case["block"])
    if not isinstance(tile, cute.Tensor):
        raise TypeError(f"expected a tensor (a slice of the divided tensor), got {type(tile).__name__}: {tile!r}")
    return {"text": str(tile), "shape": tile.shape, "cells": [tile[i] for i in range(cute.size(tile))]}


def _expected_cells(case):
    (first_m, first_n), (tile_m, tile_n) = case["_first"], case["tiler"]
    return [(first_m + i % tile_m, first_n + i // tile_m) for i in range(tile_m * tile_n)]


@each_outcome
def _slice_shape(outcome) -> Verdict | None:
    if tuple(outcome.value["shape"]) != tuple(outcome.case["tiler"]):
        return failed(f"{case_text(outcome.case)}: a tile has shape {outcome.case['tiler']}, yours is "
                      f"{outcome.value['text']} (slice mode 1, the rest, and keep mode 0 whole with (None, None))")
    return None


@each_outcome
def _slice_cells(outcome) -> Verdict | None:
    case, got = outcome.case, outcome.value
    want = _expected_cells(case)
    if got["cells"] == want:
        return None
    why = ""
    if got["cells"] and got["cells"][0] != want[0]:
        why = (f" (block {case['block']} starts at cell {want[0]}; tile numbers run down the rest mode first, "
               "column-major)")
    return failed(f"{case_text(case)}: the tile's first cells should be {want[:3]}, yours are "
                  f"{got['cells'][:3]}{why}")


SLICE_BLOCK = Exercise(
    id="ch03.slice_block",
    statement="Write block_tile(tensor, tiler, block): block `block`'s tile (block is a tile number or a rest "
              "coordinate (bm, bn)), with zipped_divide and a slice (local_tile is switched off).",
    example="block_tile(make_identity_tensor((256, 512)), (16, 128), 5) starts at (80, 0)",
    cases=_slice_cases,
    ask=_ask_slice,
    forbidden=("local_tile",),
    criteria=(
        Criterion("the tile has the tiler's shape", "reference", 1, _slice_shape),
        Criterion("it covers exactly the cells of that block, in order", "reference", 2, _slice_cells),
        Criterion("real CuTeDSL slices the same tile", "cutedsl-cpu", 1,
                  cutedsl_gives_the_same(THIS_MODULE, "slice_in_cutedsl",
                                         lambda case: (case["shape"], case["tiler"], case["block"]),
                                         lambda value: value["text"])),
    ),
)


# ---- ch03.tile_predicate -------------------------------------------------------------------------------------

def _predicate_cases(rng):
    """Shapes the tile does not divide, and blocks of every kind: inside the tensor (all True), on the bottom
    edge, on the right edge, in the corner, and a tensor smaller than one tile. A block is a tile number (an
    int, column-major) or a rest coordinate (bm, bn); the first bottom-edge block is asked by number, at
    bn = 0, where numbering the tiles row-major would name a block that does not reach past the bottom."""
    cases = []
    for kind in ("corner", "bottom", "right", "inside", "bottom", "right", "corner"):
        tile_m, tile_n = rng.randint(2, 4), rng.randint(3, 8)
        while tile_n == tile_m:
            tile_n = rng.randint(3, 8)
        tiles_m, tiles_n = rng.randint(2, 4), rng.randint(2, 3)
        ragged_rows = kind in ("corner", "bottom") or rng.random() < 0.5
        ragged_columns = kind in ("corner", "right") or not ragged_rows or rng.random() < 0.5
        rows = tile_m * tiles_m - (rng.randint(1, tile_m - 1) if ragged_rows else 0)
        columns = tile_n * tiles_n - (rng.randint(1, tile_n - 1) if ragged_columns else 0)
        bm = tiles_m - 1 if kind in ("corner", "bottom") else rng.randrange(tiles_m - 1)
        bn = tiles_n - 1 if kind in ("corner", "right") else rng.randrange(tiles_n - 1)
        by_number = rng.random() < 0.5
        if kind == "bottom" and not any(case["_kind"] == "bottom" for case in cases):
            bn, by_number = 0, True
        block = bm + tiles_m * bn if by_number else (bm, bn)
        cases.append({"shape": (rows, columns), "tiler": (tile_m, tile_n), "block": block, "_kind": kind})
    tile_m, tile_n = rng.choice([(4, 8), (8, 4), (2, 16)])
    cases.append({"shape": (rng.randint(1, tile_m - 1), rng.randint(1, tile_n - 1)), "tiler": (tile_m, tile_n),
                  "block": 0, "_kind": "smaller than one tile"})
    return cases


def _ask_predicate(answer, case):
    import numpy
    mask = answer(case["shape"], case["tiler"], case["block"])
    if not isinstance(mask, (list, tuple)) or not all(isinstance(row, (list, tuple)) for row in mask):
        raise TypeError(f"expected a list of rows, each a list of bools, got {type(mask).__name__}: "
                        f"{str(mask)[:120]}")
    for row in mask:
        for entry in row:
            if not isinstance(entry, (bool, numpy.bool_)):
                raise TypeError(f"expected True or False for every element, got {type(entry).__name__} {entry!r}")
    return [[bool(entry) for entry in row] for row in mask]


def _tile_coordinates(shape, tiler, block):
    """(m, n) of every element of block `block`'s tile, read from a divided identity tensor: rows of columns."""
    from cutekit import cute
    tile = cute.zipped_divide(cute.make_identity_tensor(shape), tiler)[((None, None), block)]
    return [[tile[(i, j)] for j in range(tiler[1])] for i in range(tiler[0])]


def _reference_mask(shape, tiler, block):
    from cutekit import cute
    return [[cute.elem_less(coordinate, shape) for coordinate in row]
            for row in _tile_coordinates(shape, tiler, block)]


def _rest_coordinate(case, row_major: bool = False):
    """The (bm, bn) a case's block names: a tile number counts down the rest mode first (column-major);
    `row_major` decodes it the wrong way, across first."""
    block = case["block"]
    if not isinstance(block, int):
        return tuple(block)
    tiles_m, tiles_n = (-(-extent // tile) for extent, tile in zip(case["shape"], case["tiler"]))
    return (block // tiles_n, block % tiles_n) if row_major else (block % tiles_m, block // tiles_m)


def _block_text(case) -> str:
    if isinstance(case["block"], int):
        return f"block {case['block']} (rest coordinate {_rest_coordinate(case)})"
    return f"block {case['block']}"


@each_outcome
def _predicate_shape(outcome) -> Verdict | None:
    """Fails when an answer raised or its mask is not tile rows x tile columns."""
    (tile_m, tile_n), got = outcome.case["tiler"], outcome.value
    if len(got) != tile_m or any(len(row) != tile_n for row in got):
        lengths = sorted({len(row) for row in got})
        shape = f"{len(got)} rows of {' or '.join(str(length) for length in lengths) or 'no'} entries"
        return failed(f"{case_text(outcome.case)}: a ({tile_m}, {tile_n}) tile needs {tile_m} rows of {tile_n} "
                      f"entries (mask[i][j] is tile element (i, j)); yours has {shape}")
    return None


def _predicate_hint(case, got, want, coordinates, i, j) -> str:
    (m, n), (rows, columns) = coordinates[i][j], case["shape"]
    where = "inside" if want[i][j] else "outside"
    text = (f"{_block_text(case)} of tiler {case['tiler']}: tile element ({i}, {j}) is at ({m}, {n}) of the tensor, "
            f"which is {where} shape ({rows}, {columns}); you said {'inside' if got[i][j] else 'outside'}")
    return text + _predicate_why(case, got, coordinates)


def _predicate_why(case, got, coordinates) -> str:
    """The likely mistake behind a wrong mask, when the mask is exactly what that mistake gives."""
    rows, columns = case["shape"]
    row_major = _rest_coordinate(case, row_major=True)
    if row_major != _rest_coordinate(case) and got == _reference_mask(case["shape"], case["tiler"], row_major):
        return " (tile numbers run down the rest mode first, column-major: tile b is (b % RestM, b // RestM))"
    if all(all(row) for row in got):
        return (" (an edge tile reaches past the tensor: the elements outside must be False; compare each "
                "element's coordinate in the whole tensor, read from the divided identity tensor)")
    if got == [[m <= rows and n <= columns for m, n in row] for row in coordinates]:
        return f" (coordinates run from 0 to {rows - 1} and 0 to {columns - 1}: compare with <, not <=)"
    rows_only = [[m < rows for m, _ in row] for row in coordinates]
    columns_only = [[n < columns for _, n in row] for row in coordinates]
    if got in (rows_only, columns_only):
        return " (both coordinates must be inside: elem_less(coordinate, shape) compares every mode)"
    return ""


def _predicate_on(edge: bool):
    """Criterion on the blocks whose tile lies inside the tensor (edge=False) or reaches past it (edge=True)."""
    def judge(context) -> Verdict:
        shape = _predicate_shape(context)
        if not shape.passed:
            return shape
        for outcome in context.outcomes:
            case, got = outcome.case, outcome.value
            coordinates = _tile_coordinates(case["shape"], case["tiler"], case["block"])
            want = _reference_mask(case["shape"], case["tiler"], case["block"])
            if all(all(row) for row in want) == edge:
                continue
            for i, row in enumerate(want):
                for j, inside in enumerate(row):
                    if got[i][j] != inside:
                        return failed(_predicate_hint(case, got, want, coordinates, i, j))
        return passed()
    return judge


TILE_PREDICATE = Exercise(
    id="ch03.tile_predicate",
    statement="Write inside(shape, tiler, block): block `block`'s predicate, a list of tile rows of bools, True "
              "where the element lies inside `shape`, from an identity tensor, zipped_divide, a slice and elem_less.",
    example="inside((10, 12), (4, 8), 5) is True for rows 0-1 and columns 0-3 of the tile, False elsewhere",
    cases=_predicate_cases,
    ask=_ask_predicate,
    forbidden=("local_tile",),
    criteria=(
        Criterion("one bool per tile element: tile rows x tile columns", "reference", 1, _predicate_shape),
        Criterion("a tile inside the tensor is True everywhere", "reference", 1, _predicate_on(edge=False)),
        Criterion("an edge tile is False exactly where it reaches past the tensor", "reference", 2,
                  _predicate_on(edge=True)),
        Criterion("real CuTeDSL's identity tensor puts the tile's elements at the same coordinates", "cutedsl-cpu",
                  1, cutedsl_gives_the_same(THIS_MODULE, "predicate_in_cutedsl",
                                            lambda case: (case["shape"], case["tiler"], case["block"]), str)),
    ),
)


# ---- what the CuTeDSL worker calls, with `cute` = cutlass.cute ------------------------------------------------

def logical_divide_in_cutedsl(cute, a, b):
    (shape, stride), (tile, step) = a, b
    layout = cute.make_layout(shape[0], stride=stride[0]) if len(shape) == 1 else cute.make_layout(shape, stride=stride)
    return cute.logical_divide(layout, cute.make_layout(tile, stride=step))


def tiler_picture_in_cutedsl(cute, rows, columns, tiler):
    """None when CuTeDSL's zipped divide numbers the tiles as the reference does (the picture is right)."""
    from cutekit import cute as reference
    layouts = tuple(cute.make_layout(size, stride=step) for size, step in tiler)
    mine = tuple(reference.make_layout(size, stride=step) for size, step in tiler)
    real = cute.zipped_divide(cute.make_layout((rows, columns)), layouts)
    expected = reference.zipped_divide(reference.make_layout((rows, columns)), mine)
    return None if str(real) == str(expected) else f"{real} (reference {expected})"


def zipped_in_cutedsl(cute, m, n, tile_m, tile_n):
    return cute.zipped_divide(cute.make_layout((m, n), stride=(n, 1)), (tile_m, tile_n))


def slice_in_cutedsl(cute, shape, tiler, block):
    return cute.zipped_divide(cute.make_identity_tensor(shape), tiler)[((None, None), block)]


def predicate_in_cutedsl(cute, shape, tiler, block):
    """The mask from CuTeDSL's own coordinates. Its elem_less gives a run-time Boolean inside a trace, so the
    comparison, every mode less than the shape, is made here on the static coordinates."""
    tile = cute.zipped_divide(cute.make_identity_tensor(shape), tiler)[((None, None), block)]
    return [[all(c < s for c, s in zip(tile[(i, j)], shape)) for j in range(tiler[1])] for i in range(tiler[0])]


EXERCISES = [LOGICAL_DIVIDE_BY_HAND, TILER_FROM_PICTURE, PREDICT_ZIPPED, SLICE_BLOCK, TILE_PREDICATE]
