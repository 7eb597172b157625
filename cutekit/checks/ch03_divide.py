"""Chapter 03 exercises: dividing a layout into tiles (logical and zipped divides, tilers, slicing a tile, the
predicate of an edge tile).

Every answer is a function of the exercise's parameters, asked on random cases, never only on the notebook's
worked example. Reference criteria use cutekit.cute; on `cutedsl-cpu` real CuTeDSL answers the same
questions in a subprocess (`*_in_cutedsl(cute, ...)` at the bottom), or runs the learner's own function,
and must agree.

Hints: each exercise keeps a table of the mistakes learners make (`*_MISTAKES`: what the mistake gives for a
case, and the words that name it). When the learner's answers are, on every case, exactly what one mistake
gives (an error included, where the mistake raises too), the hint names that mistake; otherwise it names the
first case and part that differ.
"""
from __future__ import annotations

import functools

from .common import DIVIDES, case_text, cutedsl_gives_the_same
from .cutedsl import trace_function
from .grading import Criterion, Exercise, Verdict, failed, passed

THIS_MODULE = __name__
RAISED = "raised"          # what a mistake "gives" for a case where it raises


def _key_of(outcome, key):
    return RAISED if outcome.error else key(outcome.value)


def _gives(model, case):
    try:
        return model(case)
    except Exception:
        return RAISED


def _named_mistake(context, key, mistakes) -> str:
    """The words of the first mistake in `mistakes` ((gives(case), words) pairs) that gives exactly the
    learner's answer (`key(value)`, or RAISED where the learner's code raised) on every case; "" if none."""
    for model, words in mistakes:
        if all(_key_of(outcome, key) == _gives(model, outcome.case) for outcome in context.outcomes):
            return words
    return ""


def _with(hint: str, why: str) -> str:
    return f"{hint}: {why}" if why else hint


def _first_error(context, why=""):
    for outcome in context.outcomes:
        if outcome.error:
            return failed(_with(f"{case_text(outcome.case)}: {outcome.error}", why))
    return None


def _describe(layout) -> dict:
    """A learner's layout as plain data: printed form, shape and stride (no offsets: they are not needed)."""
    from cutekit import cute
    if not isinstance(layout, cute.Layout):
        raise TypeError(f"expected a layout made with cute.make_layout(...), got {type(layout).__name__}: {layout!r}")
    return {"text": str(layout), "shape": layout.shape, "stride": layout.stride}


# ---- ch03.logical_divide_by_hand -----------------------------------------------------------------------------

WORKED_BATCH = {"A": ((12, 8, 3), (8, 1, 96)), "tiler": ((3, 2), (2, 1))}    # the statement's example


def _mode_of(rng):
    """(size, tile k, step d) of one mode divided by k:d: at least two copies of (k:d, its gaps) fit."""
    tile, step, copies = rng.randint(2, 4), rng.choice([1, 2, 3]), rng.randint(2, 3)
    return tile * step * copies, tile, step


def _batch_strides(shape, order, scale):
    """Compact strides of `shape` with mode order[0] fastest, all multiplied by `scale`."""
    strides, step = [0, 0, 0], scale
    for index in order:
        strides[index] = step
        step *= shape[index]
    return tuple(strides)


def _divide_cases(rng):
    """Batches of matrices A = (M, N, L) stored row-major, column-major or batch-innermost (some scaled by 2),
    divided by tilers of two 1-D layouts k:d (L is left whole: all rest) or of three (L is divided too). At
    least one tiler step d > 1 in mode 0 or 1, so the rest nests; the first three cases have two layouts,
    the last three three; tiler[0] != tiler[1], never the statement's example."""
    cases = []
    while len(cases) < 6:
        (m, km, dm), (n, kn, dn), (l, kl, dl) = _mode_of(rng), _mode_of(rng), _mode_of(rng)
        if (km, dm) == (kn, dn) or dm == dn == 1:
            continue
        if len(cases) < 3:
            l = rng.randint(2, 4)
        order = rng.choice([(1, 0, 2), (0, 1, 2), (2, 1, 0)])
        stride = _batch_strides((m, n, l), order, rng.choice([1, 1, 2]))
        tiler = ((km, dm), (kn, dn)) if len(cases) < 3 else ((km, dm), (kn, dn), (kl, dl))
        case = {"A": ((m, n, l), stride), "tiler": tiler}
        if case != WORKED_BATCH and case not in cases:
            cases.append(case)
    return cases


def _a_and_tiler(case):
    from cutekit import cute
    (shape, stride), tiler = case["A"], case["tiler"]
    return cute.make_layout(shape, stride=stride), tuple(cute.make_layout(k, stride=d) for k, d in tiler)


def _ask_divide(answer, case):
    return _describe(answer(*_a_and_tiler(case)))


def _gathered(tiles, rests):
    from cutekit import cute
    return cute.make_layout((tuple(t.shape for t in tiles), tuple(r.shape for r in rests)),
                            stride=(tuple(t.stride for t in tiles), tuple(r.stride for r in rests)))


def _divide_mistake(tile_of=None, rest_of=None, untouched="rest", whole=None):
    """A mistake's printed layout: each divided mode's tile `tile_of(mode, B, A)` and rest `rest_of(mode, B,
    A)`, a mode past the tiler's end put in the rest (`untouched="rest"`), the tile ("tile") or nowhere
    ("dropped"); or `whole(A, tiler)`."""
    def gives(case):
        from cutekit import cute
        a, tiler = _a_and_tiler(case)
        if whole is not None:
            return str(whole(a, tiler))
        tiles, rests = [], []
        for index in range(len(a.shape)):
            mode = cute.get(a, mode=[index])
            if index < len(tiler):
                tiles.append((tile_of or _tile_part)(mode, tiler[index], a))
                rests.append((rest_of or _rest_part)(mode, tiler[index], a))
            elif untouched == "rest":
                rests.append(mode)
            elif untouched == "tile":
                tiles.append(mode)
        return str(_gathered(tiles, rests))
    return gives


def _tile_part(mode, b, a):
    from cutekit import cute
    return cute.composition(mode, b)


def _rest_part(mode, b, a, up_to=None):
    from cutekit import cute
    return cute.composition(mode, cute.complement(b, cute.size(mode) if up_to is None else up_to))


def _divide_mistakes():
    from cutekit import cute
    return (
        (_divide_mistake(whole=cute.logical_divide),
         "that is logical_divide's grouping, section 2's (tile, rest) pair in each mode; zipped_divide gathers "
         "every mode's tile part into mode 0 and every rest part into mode 1 (section 3)"),
        (_divide_mistake(untouched="dropped"),
         "the batch mode the tiler does not reach is missing: a mode past the tiler's end is not divided, and "
         "zipped_divide keeps all of it, with the rest"),
        (_divide_mistake(untouched="tile"),
         "you put the batch mode the tiler does not reach in the tile; a mode past the tiler's end is not "
         "divided, and zipped_divide counts all of it with the rest, after the divided modes' rests"),
        (_divide_mistake(rest_of=lambda mode, b, a: _rest_part(mode, b, a, up_to=cute.size(a))),
         "you took each complement up to size(A), the whole layout; the divide happens mode by mode, so the "
         "complement of a mode's tiler goes up to the size of that mode (section 2)"),
        (_divide_mistake(tile_of=lambda mode, b, a: b,
                         rest_of=lambda mode, b, a: cute.complement(b, cute.size(mode))),
         "your parts are B and its complement not read through A: each part is a composition with that mode of "
         "A, so the strides become A's memory steps (section 1)"),
        (_divide_mistake(whole=lambda a, tiler: _rest_then_tile(a, tiler)),
         "your modes are (rests, tiles); zipped_divide lists the tiles first, in mode 0, then the rests"),
        (_divide_mistake(whole=lambda a, tiler: _zipped_with_tiler_swapped(a, tiler)),
         "you divided mode 0 by tiler[1] and mode 1 by tiler[0]; tiler[i] divides mode i of A"),
        (lambda case: "((3,2),((2,2),4,3)):((16,1),((8,48),2,96))",
         "you return the example's divide for every case"),
    )


def _rest_then_tile(a, tiler):
    from cutekit import cute
    zipped = cute.zipped_divide(a, tiler)
    return cute.make_layout((zipped.shape[1], zipped.shape[0]), stride=(zipped.stride[1], zipped.stride[0]))


def _zipped_with_tiler_swapped(a, tiler):
    from cutekit import cute
    return cute.zipped_divide(a, (tiler[1], tiler[0]) + tuple(tiler[2:]))


def _divide_why(context) -> str:
    return _named_mistake(context, lambda value: value["text"], _divide_mistakes())


def _divide_part(which: int):
    """Criterion on mode `which` of the learner's zipped divide (0: every mode's tile, 1: every rest)."""
    def judge(context) -> Verdict:
        from cutekit import cute
        why = _divide_why(context)
        error = _first_error(context, why)
        if error:
            return error
        for outcome in context.outcomes:
            a, tiler = _a_and_tiler(outcome.case)
            want = cute.zipped_divide(a, tiler)
            got = outcome.value
            where = f"zipped_by_hand({a}, ({', '.join(str(b) for b in tiler)}))"
            name = "tile" if which == 0 else "rest"
            if not (isinstance(got["shape"], tuple) and len(got["shape"]) == 2):
                return failed(_with(f"{where}: the result should have two modes, (tiles, rests); yours is "
                                    f"{got['text']}", why))
            mine = str(cute.make_layout(got["shape"][which], stride=got["stride"][which]))
            right = str(cute.get(want, mode=[which]))
            if mine != right:
                return failed(_with(f"{where}: mode {which}, the {name} parts, should be {right}, yours is {mine}",
                                    why))
        return passed()
    return judge


def _whole_divide(context) -> Verdict:
    from cutekit import cute
    why = _divide_why(context)
    error = _first_error(context, why)
    if error:
        return error
    for outcome in context.outcomes:
        want = str(cute.zipped_divide(*_a_and_tiler(outcome.case)))
        if outcome.value["text"] != want:
            return failed(_with(f"{case_text(outcome.case)}: zipped_divide prints {want}, yours is "
                                f"{outcome.value['text']}", why))
    return passed()


LOGICAL_DIVIDE_BY_HAND = Exercise(
    id="ch03.logical_divide_by_hand",
    statement="Write zipped_by_hand(A, tiler) for a batch of matrices A = (M, N, L) and a tiler of two or three "
              "1-D layouts: zipped_divide(A, tiler), built from get, complement, composition and make_layout "
              "(the divide functions are switched off while it is checked).",
    example="zipped_by_hand((12,8,3):(8,1,96), (3:2, 2:1)) prints ((3,2),((2,2),4,3)):((16,1),((8,48),2,96))",
    rule=("A divide works mode by mode: mode i of A is divided by tiler[i] alone, with section 1's rule (the tile "
          "is that mode read through tiler[i], the rest that mode read through the complement of tiler[i] within "
          "the mode's size).\n"
          "zipped_divide then gathers every mode's tile part into mode 0 and every rest part into mode 1, in mode "
          "order; a mode past the tiler's end is not divided and goes whole into the rest, after the others."),
    cases=_divide_cases,
    ask=_ask_divide,
    forbidden=DIVIDES,
    criteria=(
        Criterion("mode 0 gathers the tile parts: each mode read through its tiler layout", "reference", 1,
                  _divide_part(0)),
        Criterion("mode 1 gathers the rest parts: each mode read through the complement of its tiler layout, "
                  "then the modes the tiler does not reach", "reference", 1, _divide_part(1)),
        Criterion("the whole layout prints as zipped_divide(A, tiler)", "reference", 1, _whole_divide),
        Criterion("real CuTeDSL's zipped_divide prints the layouts you built", "cutedsl-cpu", 1,
                  cutedsl_gives_the_same(THIS_MODULE, "zipped_batch_in_cutedsl",
                                         lambda case: (case["A"], case["tiler"]),
                                         lambda value: value["text"])),
    ),
)


# ---- ch03.tiler_from_picture ---------------------------------------------------------------------------------

_drawn_grids: dict = {}


def _tile_numbers(rows, columns, tiler):
    """Grid of tile numbers (the rest mode's 1-D index) drawn by a tiler; cells no tile covers are None.
    Also the cells outside the matrix that a tile reaches, and the cells two tiles claim. Remembered by the
    tiler's printed form: the mistakes' pictures are drawn again for every criterion."""
    key = (rows, columns, _tiler_text(tiler) if isinstance(tiler, tuple) else str(tiler))
    if key not in _drawn_grids:
        if len(_drawn_grids) > 4096:
            _drawn_grids.clear()
        _drawn_grids[key] = _tile_numbers_drawn(rows, columns, tiler)
    return _drawn_grids[key]


def _tile_numbers_drawn(rows, columns, tiler):
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


def _layouts(tiler):
    from cutekit import cute
    return tuple(cute.make_layout(size, stride=step) for size, step in tiler)


def _tiler_cases(rng):
    """Five pictures: plain blocks and tiles that take every k-th row. The first is of blocks with
    tile_m != tile_n, so a tiler with rows and columns swapped draws another picture."""
    cases = []
    for kind in ("blocks", "blocks", "every k-th row", "every k-th row", "blocks"):
        tile_m, tile_n = rng.randint(1, 3), rng.randint(2, 4)
        while not cases and tile_m == tile_n:
            tile_m = rng.randint(1, 3)
        step = rng.randint(2, 3) if kind != "blocks" else 1
        rows, columns = tile_m * step * rng.randint(1, 2), tile_n * rng.randint(2, 3)
        if kind != "blocks" and tile_m == 1:
            tile_m = 2
            rows = tile_m * step
        if kind == "blocks" and rows == tile_m:
            rows *= 2
        grid, _, _ = _tile_numbers(rows, columns, _layouts(((tile_m, step), (tile_n, 1))))
        cases.append({"picture": grid, "_tiler": ((tile_m, step), (tile_n, 1))})
    return cases


def _tiler_text(tiler) -> str:
    return "(" + ",".join(str(part) for part in tiler) + ")"


def _drawn(picture, tiler) -> dict:
    """What a tiler draws on the picture's matrix: its text, the grid of tile numbers, the size of one tile."""
    from cutekit import cute
    rows, columns = len(picture), len(picture[0])
    grid, outside, twice = _tile_numbers(rows, columns, tiler)
    return {"tiler": _tiler_text(tiler), "grid": grid, "outside": outside[:3], "twice": twice[:3],
            "tile_size": cute.size(cute.zipped_divide(cute.make_layout((rows, columns)), tiler), mode=[0])}


def _ask_tiler(answer, case):
    tiler = answer(case["picture"])
    if not isinstance(tiler, (tuple, list)) or len(tiler) != 2:
        from cutekit import cute
        if isinstance(tiler, cute.Layout):
            raise TypeError(f"got the single layout {tiler}: a single layout divides the matrix as one "
                            f"one-dimensional sequence (section 4); give a tuple (rows layout, columns layout)")
        raise TypeError(f"expected a tuple of two layouts (or sizes), got {tiler!r}")
    return _drawn(case["picture"], tuple(tiler))


def _picture_mistake(tiler_of):
    """A mistake's grid: `tiler_of(case)` is the tiler that mistake gives for the case's picture."""
    return lambda case: _drawn(case["picture"], tiler_of(case))["grid"]


def _tiles_counted(case):
    picture = case["picture"]
    return (len({row[0] for row in picture}), len(set(picture[0])))


TILER_FROM_PICTURE_MISTAKES = (
    (_picture_mistake(lambda case: (case["_tiler"][0][0], case["_tiler"][1][0])),
     "in this picture a tile skips rows: its row layout needs a stride, e.g. 2:3 for rows 0 and 3"),
    (_picture_mistake(lambda case: _layouts((case["_tiler"][1], case["_tiler"][0]))),
     "rows and columns swapped: the tiler's first layout is for the rows (mode 0), the second for the columns"),
    (_picture_mistake(_tiles_counted),
     "that is the number of tiles down and across; the tiler is the size of one tile"),
    (_picture_mistake(lambda case: (len(case["picture"]), len(case["picture"][0]))),
     "one tile covers the whole matrix; the tiler is one tile of the picture"),
    (_picture_mistake(lambda case: (2, 3)),
     "you return (2, 3), the example's tiler, for every picture; read the tile off each picture"),
)


def _picture_why(context) -> str:
    return _named_mistake(context, lambda value: value["grid"], TILER_FROM_PICTURE_MISTAKES)


def _tiler_size_criterion(context) -> Verdict:
    why = _picture_why(context)
    error = _first_error(context, why)
    if error:
        return error
    for outcome in context.outcomes:
        (rows, _), (columns, _) = outcome.case["_tiler"]
        want, got = rows * columns, outcome.value
        picture = outcome.case["picture"]
        if got["tile_size"] != want:
            return failed(_with(f"picture {len(picture)}x{len(picture[0])}: one tile of the picture has {want} "
                                f"cells, your tiler {got['tiler']} takes {got['tile_size']}", why))
        if got["outside"]:
            return failed(_with(f"your tiler {got['tiler']} reaches cells outside the matrix, e.g. "
                                f"{got['outside'][0]}", why))
    return passed()


def _tiler_picture_criterion(context) -> Verdict:
    why = _picture_why(context)
    error = _first_error(context, why)
    if error:
        return error
    for outcome in context.outcomes:
        picture, got = outcome.case["picture"], outcome.value
        for m, row in enumerate(picture):
            for n, want in enumerate(row):
                if got["grid"][m][n] != want:
                    return failed(_with(f"with your tiler {got['tiler']}, cell ({m}, {n}) is in tile "
                                        f"{got['grid'][m][n]}; the picture puts it in tile {want}", why))
    return passed()


TILER_FROM_PICTURE = Exercise(
    id="ch03.tiler_from_picture",
    statement="Write tiler_from_picture(picture): the tiler (two layouts or sizes) for which "
              "zipped_divide(make_layout((M, N)), tiler) numbers the tiles as drawn.",
    example="a 4x6 picture of 2x3 blocks gives (2:1, 3:1)",
    rule=("A tiler gives the size of one tile, never the number of tiles; a mode whose tile rows (or columns) are "
          "not neighbours is a 1-D layout with a stride, not a plain size.\n"
          "zipped_divide numbers the tiles down the rest mode first (column-major): the picture's numbers show "
          "which cells share a tile."),
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

WORKED_ZIPPED = {"shape": (8, 12), "stride": (1, 8), "tiler": (4, 3)}     # the statement's column-major example


def _zipped_cases(rng):
    """Six 2-mode matrices none of which is section 5's unpadded row-major one alone: column-major, padded
    row-major, padded column-major, a tile one row or one column thick (a size-1 mode, printed stride 0), a
    tile as tall or as wide as the matrix (a rest of size 1, stride 0), and one unpadded row-major. Tile sizes
    divide the shape; tile_m != tile_n and M != N, so a transposed answer differs; never the statement's
    example."""
    def matrix(tile_m, tile_n, rests):
        return tile_m * rests[0], tile_n * rests[1]

    def draw():
        tile_m, tile_n = rng.choice([2, 4, 8]), rng.choice([3, 4, 16, 32])
        return tile_m, tile_n, (rng.randint(2, 4), rng.randint(2, 5))

    cases = []
    kinds = ["column", "padded row", "padded column", "thin", "whole", "row"]
    while len(cases) < len(kinds):
        kind = kinds[len(cases)]
        tile_m, tile_n, rests = draw()
        if kind == "thin":
            tile_m, tile_n = (1, tile_n) if rng.random() < 0.5 else (tile_m, 1)
        if kind == "whole":
            rests = (1, rests[1]) if rng.random() < 0.5 else (rests[0], 1)
        m, n = matrix(tile_m, tile_n, rests)
        pad = rng.randint(1, 7)
        stride = {"column": (1, m), "padded row": (n + pad, 1), "padded column": (1, m + pad),
                  "thin": (n, 1) if rng.random() < 0.5 else (1, m),
                  "whole": (1, m) if rng.random() < 0.5 else (n, 1), "row": (n, 1)}[kind]
        case = {"shape": (m, n), "stride": stride, "tiler": (tile_m, tile_n)}
        if tile_m == tile_n or m == n or case == WORKED_ZIPPED or case in cases:
            continue
        cases.append(case)
    return cases


def _reference_zipped(case) -> str:
    return _zipped_of(case["shape"], case["stride"], case["tiler"])


@functools.lru_cache(maxsize=1024)
def _zipped_of(shape, stride, tiler) -> str:
    from cutekit import cute
    return str(cute.zipped_divide(cute.make_layout(shape, stride=stride), tiler))


def _ask_zipped(answer, case):
    value = answer(case["shape"], case["stride"], case["tiler"])
    return str(value)


def _zipped_mistake(text):
    return lambda case: text(*case["shape"], *case["stride"], *case["tiler"])


def _size_one_is_zero(size, step):
    return step if size > 1 else 0


def _zipped_from(tile, rest, tile_steps, rest_steps, zero_size_one=True):
    fix = _size_one_is_zero if zero_size_one else (lambda size, step: step)
    steps = [fix(s, d) for s, d in zip(tile + rest, tile_steps + rest_steps)]
    return f"(({tile[0]},{tile[1]}),({rest[0]},{rest[1]})):(({steps[0]},{steps[1]}),({steps[2]},{steps[3]}))"


PREDICT_ZIPPED_MISTAKES = (
    (_zipped_mistake(lambda M, N, a, b, tm, tn: _zipped_from((tm, tn), (M // tm, N // tn), (N, 1), (tm * N, tn),
                                                                 zero_size_one=False)),
     "those are the strides of an unpadded row-major matrix, section 5's (N, 1); this matrix's strides are the "
     "`stride` you are given: a divide keeps them inside the tile"),
    (_zipped_mistake(lambda M, N, a, b, tm, tn: _zipped_from((tm, tn), (M // tm, N // tn),
                                                             (N, 1) if b == 1 else (1, M),
                                                             (tm * N, tn) if b == 1 else (tm, tn * M))),
     "those are the strides of the unpadded matrix; this one is padded: its rows (or columns) are further apart "
     "than its width, as its `stride` says"),
    (_zipped_mistake(lambda M, N, a, b, tm, tn: _zipped_from((tm, tn), (tm, tn), (a, b), (tm * a, tn * b))),
     "the rest counts tiles: how many tiles fit down and how many across, not the tile's size"),
    (_zipped_mistake(lambda M, N, a, b, tm, tn: _zipped_from((tm, tn), (M // tm, N // tn), (a, b), (a, b))),
     "the rest's steps go from one tile to the next: a whole tile down or across, not one row or one column"),
    (_zipped_mistake(lambda M, N, a, b, tm, tn: _zipped_from((tm, tn), (M // tm, N // tn), (a, b), (tm, tn))),
     "strides are memory steps: one tile down is tile_m rows of the matrix, each a row stride apart, not tile_m "
     "elements"),
    (_zipped_mistake(lambda M, N, a, b, tm, tn: _zipped_from((tm, tn), (M // tm, N // tn), (a, b), (tm * a, tn * b),
                                                             zero_size_one=False)),
     "a mode of size 1 never moves, and where CuTe chooses the stride itself (a divide) it prints 0 for it "
     "(section 4)"),
    (_zipped_mistake(lambda M, N, a, b, tm, tn:
                     f"(({tm},{M // tm}),({tn},{N // tn})):(({a},{tm * a}),({b},{tn * b}))"),
     "that is logical_divide's grouping, (tile, rest) in each mode; zipped_divide gathers the tile parts "
     "into mode 0 and the rest parts into mode 1"),
    (_zipped_mistake(lambda M, N, a, b, tm, tn: _zipped_from((tn, tm), (N // tn, M // tm), (b, a), (tn * b, tm * a))),
     "your modes are (columns, rows); every mode lists rows first, then columns, as the shape (M, N) does"),
    (lambda case: "((4,3),(2,4)):((1,8),(4,24))",
     "you return the example's text for every case"),
    (lambda case: "((16,128),(16,4)):((512,1),(8192,128))",
     "you return section 5's text for every case"),
)


def _zipped_part(part: str):
    def judge(context) -> Verdict:
        why = _named_mistake(context, lambda value: value, PREDICT_ZIPPED_MISTAKES)
        error = _first_error(context, why)
        if error:
            return error
        for outcome in context.outcomes:
            want, got = _reference_zipped(outcome.case), outcome.value
            if part == "shape":
                want_part, got_part = want.split(":", 1)[0], got.split(":", 1)[0]
            else:
                want_part, got_part = want.split(":", 1)[-1], got.split(":", 1)[-1] if ":" in got else ""
            if want_part != got_part:
                return failed(_with(f"{case_text(outcome.case)}: the {part} should be {want_part}, yours is "
                                    f"{got_part or got}", why))
        return passed()
    return judge


PREDICT_ZIPPED = Exercise(
    id="ch03.predict_zipped",
    statement="Write zipped_text(shape, stride, tiler): what print shows for zipped_divide of the two-mode matrix "
              "make_layout(shape, stride=stride), column-major, row-major or padded, by tiler (tile_m, tile_n) "
              "(the divide functions are switched off).",
    example="zipped_text((8, 12), (1, 8), (4, 3)) is ((4,3),(2,4)):((1,8),(4,24))",
    rule=("zipped_divide gathers ((tile), (rest)): mode 0 is the tile's shape, mode 1 counts how many tiles fit "
          "down and across.\n"
          "The strides are memory steps of the divided layout: inside the tile, the matrix's own, whatever its "
          "order or padding; in the rest, the step from one tile to the next, down and across. A mode of size 1 "
          "never moves, and a divide prints its stride as 0."),
    cases=_zipped_cases,
    ask=_ask_zipped,
    forbidden=DIVIDES,
    criteria=(
        Criterion("the shape: ((tile),(number of tiles))", "reference", 1, _zipped_part("shape")),
        Criterion("the strides: steps inside a tile, then from tile to tile", "reference", 2, _zipped_part("stride")),
        Criterion("real CuTeDSL prints the same", "cutedsl-cpu", 1,
                  cutedsl_gives_the_same(THIS_MODULE, "zipped_in_cutedsl",
                                         lambda case: (case["shape"], case["stride"], case["tiler"]),
                                         lambda value: value)),
    ),
)


# ---- ch03.slice_block ----------------------------------------------------------------------------------------

def _rests(case):
    """(RestM, RestN, L): how many tiles fit down and across, rounded up, and the batch mode, left whole."""
    (rows, columns, batch), (tile_m, tile_n) = case["shape"], case["tiler"]
    return -(-rows // tile_m), -(-columns // tile_n), batch


def _slice_cases(rng):
    """Six (shape (M, N, L), tiler (tile_m, tile_n), block), blocks given by number and by rest coordinate
    (bm, bn, l), some with rows the tile does not divide, RestM != RestN. Drawn so that on every seed: a
    numbered block in a matrix l > 0 whose right decoding, its row-major decoding, its batch-first decoding and
    its decoding without the batch are four different coordinates, and a coordinate with bm != bn and l > 0."""
    while True:
        cases = []
        while len(cases) < 6:
            tile_m, tile_n = rng.randint(2, 4), rng.randint(2, 5)
            tiles_m, tiles_n, batch = rng.randint(2, 4), rng.randint(2, 3), rng.randint(2, 3)
            if tile_m == tile_n or tiles_m == tiles_n or batch in (tiles_m, tiles_n):
                continue
            rows, columns = tile_m * tiles_m - rng.choice([0, 0, 1]), tile_n * tiles_n
            bm, bn, l = rng.randrange(tiles_m), rng.randrange(1, tiles_n), rng.randrange(1, batch)
            block = (bm, bn, l) if len(cases) % 2 else bm + tiles_m * (bn + tiles_n * l)
            cases.append({"shape": (rows, columns, batch), "tiler": (tile_m, tile_n), "block": block})
        numbered = [c for c in cases if isinstance(c["block"], int)]
        paired = [c for c in cases if not isinstance(c["block"], int)]
        decodings = ("column-major", "row-major", "batch first", "no batch")
        if (any(len({_rest_coordinate(c, d) for d in decodings}) == 4 for c in numbered)
                and any(c["block"][0] != c["block"][1] for c in paired)):
            return cases


def _rest_coordinate(case, decode="column-major"):
    """The (bm, bn, l) a case's block names: a tile number counts down the rest mode (RestM, RestN, L) first,
    then across, then through the batch. `decode` "row-major" counts across first, "batch first" counts the
    batch first, "no batch" reads (b % RestM, b // RestM) as if the rest had two modes, in matrix 0."""
    block = case["block"]
    if not isinstance(block, int):
        return tuple(block)
    rest_m, rest_n, batch = _rests(case)
    if decode == "row-major":
        return ((block // rest_n) % rest_m, block % rest_n, block // (rest_m * rest_n))
    if decode == "batch first":
        return ((block // batch) % rest_m, block // (batch * rest_m), block % batch)
    if decode == "no batch":
        return (block % rest_m, block // rest_m, 0)
    return (block % rest_m, (block // rest_m) % rest_n, block // (rest_m * rest_n))


def _cells(tile) -> tuple:
    from cutekit import cute
    return tuple(tile[i] for i in range(cute.size(tile)))


def _ask_slice(answer, case):
    from cutekit import cute
    tensor = cute.make_identity_tensor(case["shape"])
    tile = answer(tensor, case["tiler"], case["block"])
    if not isinstance(tile, cute.Tensor):
        raise TypeError(f"expected a tensor (a slice of the divided tensor), got {type(tile).__name__}: {tile!r}")
    return {"text": str(tile), "shape": tile.shape, "cells": _cells(tile)}


def _slice_of(case, coordinate):
    """Cells of the slice `coordinate` of the logical divide of the case's identity tensor."""
    return _cells_of_slice(tuple(case["shape"]), tuple(case["tiler"]), coordinate)


@functools.lru_cache(maxsize=4096)
def _cells_of_slice(shape, tiler, coordinate):
    from cutekit import cute
    return _cells(cute.logical_divide(cute.make_identity_tensor(shape), tiler)[coordinate])


def _expected_cells(case):
    bm, bn, l = _rest_coordinate(case)
    return _slice_of(case, ((None, bm), (None, bn), l))


def _slice_decoded(decode):
    def gives(case):
        bm, bn, l = _rest_coordinate(case, decode)
        return _slice_of(case, ((None, bm), (None, bn), l))
    return gives


def _whole(case):
    return _whole_division(tuple(case["shape"]), tuple(case["tiler"]))


@functools.lru_cache(maxsize=1024)
def _whole_division(shape, tiler):
    from cutekit import cute
    return _cells(cute.logical_divide(cute.make_identity_tensor(shape), tiler))


def _sliced(where):
    def gives(case):
        bm, bn, l = _rest_coordinate(case)
        return _slice_of(case, where(bm, bn, l))
    return gives


SLICE_BLOCK_MISTAKES = (
    (_slice_decoded("row-major"),
     "you numbered the tiles of a matrix row-major (across first); tile numbers run down the rest mode first, "
     "column-major: tile 1 is the tile below tile 0"),
    (_slice_decoded("batch first"),
     "you counted the batch first; the batch is the rest mode's last mode, so in column-major numbering it "
     "changes slowest: all of matrix 0's tiles come before matrix 1's"),
    (_slice_decoded("no batch"),
     "you decoded the tile number as if the rest had two modes; it has three, (tiles down, tiles across, "
     "matrices), and a number past the tiles of one matrix is in the next matrix"),
    (_sliced(lambda bm, bn, l: ((None, bm), (None, bn), 0)),
     "you always take matrix 0; the block's coordinate names its matrix too, in the batch mode"),
    (_sliced(lambda bm, bn, l: ((None, bn), (None, bm), l)),
     "you sliced (bn, bm): the rest coordinate is (bm, bn, l), the tile row first"),
    (_sliced(lambda bm, bn, l: ((bm, None), (bn, None), l)),
     "you fixed the tile part of each divided mode and kept the rest part; in a logical divide each divided "
     "mode is (tile, rest): keep the tile part with None and fix the rest part"),
    (_sliced(lambda bm, bn, l: ((None, bm), (None, bn), None)),
     "you kept the batch mode whole, so your tile holds that block of every matrix; a block works on one "
     "matrix: fix the batch mode as well"),
    (lambda case: _slice_of(case, ((None, 0), (None, 0), 0)), "you return tile 0 whatever the block"),
    (_whole, "you returned the whole divided tensor; slice one tile out of it"),
)


def _slice_why(context) -> str:
    return _named_mistake(context, lambda value: value["cells"], SLICE_BLOCK_MISTAKES)


def _slice_text(case) -> str:
    return case_text({**case, "rest coordinate": _rest_coordinate(case)} if isinstance(case["block"], int) else case)


def _slice_shape(context) -> Verdict:
    why = _slice_why(context)
    error = _first_error(context, why)
    if error:
        return error
    for outcome in context.outcomes:
        if tuple(outcome.value["shape"]) != tuple(outcome.case["tiler"]):
            return failed(_with(f"{_slice_text(outcome.case)}: a tile has the tiler's shape "
                                f"{outcome.case['tiler']}, yours is {outcome.value['text']}", why))
    return passed()


def _slice_cells(context) -> Verdict:
    why = _slice_why(context)
    error = _first_error(context, why)
    if error:
        return error
    for outcome in context.outcomes:
        want, got = _expected_cells(outcome.case), outcome.value["cells"]
        if got != want:
            return failed(_with(f"{_slice_text(outcome.case)}: the tile's first cells should be {list(want[:3])}, "
                                f"yours are {list(got[:3])}", why))
    return passed()


SLICE_BLOCK = Exercise(
    id="ch03.slice_block",
    statement="Write block_tile(tensor, tiler, block) for a batch of matrices (M, N, L) and a tiler (tile_m, "
              "tile_n) that leaves L whole: block `block`'s 2-D tile (block is a tile number or a rest "
              "coordinate (bm, bn, l)), with logical_divide and one slice (zipped_divide and local_tile are "
              "switched off).",
    example="block_tile(make_identity_tensor((10, 12, 3)), (4, 8), 13) is tensor<(4,0,2) o (4,8):(1@0,1@1)>",
    rule=("logical_divide keeps each divided mode as (tile, rest) and a mode the tiler does not reach whole; "
          "block b's tile keeps the tile parts whole and fixes every rest part and every undivided mode.\n"
          "A tile number counts through zipped_divide's rest mode column-major, its first mode fastest and its "
          "last (here the batch) slowest (section 6)."),
    cases=_slice_cases,
    ask=_ask_slice,
    forbidden=("zipped_divide", "local_tile"),
    criteria=(
        Criterion("the tile has the tiler's shape", "reference", 1, _slice_shape),
        Criterion("it covers exactly the cells of that block, in order", "reference", 2, _slice_cells),
        Criterion("real CuTeDSL's zipped_divide slices the same tile", "cutedsl-cpu", 1,
                  cutedsl_gives_the_same(THIS_MODULE, "slice_in_cutedsl",
                                         lambda case: (case["shape"], case["tiler"], case["block"]),
                                         lambda value: value["text"])),
    ),
)


# ---- ch03.tile_predicate -------------------------------------------------------------------------------------

def _tile_size(tiler):
    """(tile_m, tile_n) of a tiler of (size, stride) pairs."""
    return tiler[0][0], tiler[1][0]


def _plain(tiler):
    """The tiler with every stride 1: the sizes alone."""
    return (tiler[0][0], 1), (tiler[1][0], 1)


def _predicate_cases(rng):
    """Seven ragged shapes divided by tilers of two (size, stride) layouts, one mode strided (every second or
    third row or column), and blocks asked by tile number; an eighth tensor smaller than one tile, block 0.
    Drawn so that on every seed each mistake in TILE_PREDICATE_MISTAKES gives something else than the right
    masks, and no two give the same, and at least one block's tile lies wholly inside."""
    from cutekit import cute
    while True:
        cases = []
        for index in range(7):
            tile_m, tile_n = rng.randint(2, 4), rng.randint(3, 6)
            step = rng.choice([2, 3])
            strided_rows = index % 2 == 0
            tiler = ((tile_m, step), (tile_n, 1)) if strided_rows else ((tile_m, 1), (tile_n, step))
            rows = tile_m * (step if strided_rows else 1) * rng.randint(1, 2) - rng.randint(0, 2)
            columns = tile_n * (1 if strided_rows else step) * rng.randint(1, 2) - rng.randint(0, 2)
            shape = (max(rows, 2), max(columns, 2))
            blocks = cute.size(_divided_identity(shape, tiler), mode=[1])
            cases.append({"shape": shape, "tiler": tiler, "block": rng.randrange(blocks)})
        (tile_m, tile_n), step = rng.choice([(4, 3), (3, 4), (2, 5)]), rng.choice([2, 3])
        cases.append({"shape": (rng.randint(1, tile_m * step - 1), rng.randint(1, tile_n - 1)),
                      "tiler": ((tile_m, step), (tile_n, 1)), "block": 0})
        right = [_reference_mask(case) for case in cases]
        given = [[_gives(model, case) for case in cases] for model, _ in TILE_PREDICATE_MISTAKES]
        if (all(g != right for g in given) and len({str(g) for g in given}) == len(given)
                and any(all(all(row) for row in mask) for mask in right)):
            return cases


@functools.lru_cache(maxsize=4096)
def _divided_identity(shape, tiler):
    from cutekit import cute
    layouts = tuple(cute.make_layout(size, stride=step) for size, step in tiler)
    return cute.zipped_divide(cute.make_identity_tensor(shape), layouts)


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


@functools.lru_cache(maxsize=4096)
def _tile_coordinates(shape, tiler, block):
    """(m, n) of every element of block `block`'s tile, read from a divided identity tensor: rows of columns."""
    tile = _divided_identity(shape, tiler)[((None, None), block)]
    tile_m, tile_n = _tile_size(tiler)
    return tuple(tuple(tile[(i, j)] for j in range(tile_n)) for i in range(tile_m))


def _mask(case, inside, block=None, tiler=None):
    """The mask `inside(m, n, rows, columns)` gives over the tile of `block` (the case's block by default),
    divided by `tiler` (the case's by default)."""
    rows, columns = case["shape"]
    coordinates = _tile_coordinates(tuple(case["shape"]), tuple(tiler or case["tiler"]),
                                    case["block"] if block is None else block)
    return [[inside(m, n, rows, columns) for m, n in row] for row in coordinates]


def _reference_mask(case):
    return _mask(case, lambda m, n, rows, columns: m < rows and n < columns)


def _tiler_words(tiler) -> str:
    return "(" + ", ".join(f"{size}:{step}" for size, step in tiler) + ")"


def _block_text(case) -> str:
    return f"block {case['block']}"


TILE_PREDICATE_MISTAKES = (
    (lambda case: _mask(case, lambda m, n, rows, columns: m <= rows and n <= columns),
     "coordinates run from 0 to M-1 and 0 to N-1: compare with <, not <="),
    (lambda case: [[True] * _tile_size(case["tiler"])[1] for _ in range(_tile_size(case["tiler"])[0])],
     "an edge tile reaches past the tensor: the elements outside must be False; compare each element's "
     "coordinate in the whole tensor, read from the divided identity tensor"),
    (lambda case: _mask(case, lambda m, n, rows, columns: m < rows and n < columns, block=0),
     "that is block 0's mask for every block; compare each element's coordinate in the whole tensor, read from "
     "the block's own tile of the divided identity tensor"),
    (lambda case: _mask(case, lambda m, n, rows, columns: m < rows),
     "you compared only the row; both coordinates must be inside: m < M and n < N"),
    (lambda case: _mask(case, lambda m, n, rows, columns: n < columns),
     "you compared only the column; both coordinates must be inside: m < M and n < N"),
    (lambda case: _mask(case, lambda m, n, rows, columns: m < rows and n < columns, tiler=_plain(case["tiler"])),
     "you divided by the tile's sizes alone, as if every stride were 1; the tiler's layouts have strides: a "
     "stride d takes every d-th row (or column), so the tile's rows (or columns) are d apart in the tensor "
     "(section 4)"),
    (lambda case: [[i < case["shape"][0] and j < case["shape"][1] for j in range(_tile_size(case["tiler"])[1])]
                   for i in range(_tile_size(case["tiler"])[0])],
     "you compared the position (i, j) inside the tile; compare each element's coordinate in the whole "
     "tensor, read from the block's tile of the divided identity tensor"),
)


def _predicate_shape(context) -> Verdict:
    """Fails when an answer raised or its mask is not tile rows x tile columns."""
    why = _named_mistake(context, lambda value: value, TILE_PREDICATE_MISTAKES)
    error = _first_error(context, why)
    if error:
        return error
    for outcome in context.outcomes:
        (tile_m, tile_n), got = _tile_size(outcome.case["tiler"]), outcome.value
        if len(got) != tile_m or any(len(row) != tile_n for row in got):
            lengths = sorted({len(row) for row in got})
            shape = f"{len(got)} rows of {' or '.join(str(length) for length in lengths) or 'no'} entries"
            return failed(f"{case_text(outcome.case)}: a ({tile_m}, {tile_n}) tile needs {tile_m} rows of {tile_n} "
                          f"entries (mask[i][j] is tile element (i, j)); yours has {shape}")
    return passed()


def _predicate_on(edge: bool):
    """Criterion on the blocks whose tile lies inside the tensor (edge=False) or reaches past it (edge=True)."""
    def judge(context) -> Verdict:
        shape = _predicate_shape(context)
        if not shape.passed:
            return shape
        why = _named_mistake(context, lambda value: value, TILE_PREDICATE_MISTAKES)
        for outcome in context.outcomes:
            case, got = outcome.case, outcome.value
            want = _reference_mask(case)
            if all(all(row) for row in want) == edge:
                continue
            coordinates = _tile_coordinates(case["shape"], case["tiler"], case["block"])
            for i, row in enumerate(want):
                for j, inside in enumerate(row):
                    if got[i][j] != inside:
                        (m, n), (rows, columns) = coordinates[i][j], case["shape"]
                        return failed(_with(
                            f"{_block_text(case)} of tiler {_tiler_words(case['tiler'])}: tile element ({i}, {j}) is at ({m}, {n}) "
                            f"of the tensor, which is {'inside' if inside else 'outside'} shape ({rows}, {columns}); "
                            f"you said {'inside' if got[i][j] else 'outside'}", why))
        return passed()
    return judge


def _cutedsl_runs_your_predicate(context) -> Verdict:
    """Real CuTeDSL runs the learner's own function (its identity tensor, divide and slice) on every case and
    must give the same bools."""
    outcomes = [outcome for outcome in context.outcomes if not outcome.error]
    reply = trace_function(context.answer, [(o.case["shape"], o.case["tiler"], o.case["block"]) for o in outcomes])
    if not reply.ok:
        return failed(f"CuTeDSL could not run your function: {reply.error}")
    for outcome, (value, error) in zip(outcomes, reply.values):
        if error:
            return failed(f"{case_text(outcome.case)}: under CuTeDSL your function raised {error}")
        if value != str(outcome.value):
            why = ""
            if set(value.replace("True", "").replace("False", "")) - set("[], "):
                why = (" (not bools: a value CuTeDSL knows only at run time, such as elem_less's run-time "
                       "Boolean; compare the plain-int coordinates with <)")
            return failed(f"{case_text(outcome.case)}: under CuTeDSL your function returned {value[:200]}, "
                          f"under cutekit {outcome.value}{why}")
    return passed()


TILE_PREDICATE = Exercise(
    id="ch03.tile_predicate",
    statement="Write inside(shape, tiler, block) for a tiler of two (size, stride) pairs, the layouts "
              "size:stride of section 4, one of them strided (every d-th row or column): block `block`'s "
              "predicate, a list of tile rows of bools, True where the element lies inside `shape`, from an "
              "identity tensor, zipped_divide, a slice and plain comparisons of each coordinate with the shape "
              "(elem_less and local_tile are switched off).",
    example="inside((10, 12), ((4, 2), (8, 1)), 3) is True in the tile's first row only",
    rule=("An identity tensor holds each element's own coordinate, so a block's tile of a divided identity tensor "
          "holds the whole tensor's coordinates of that tile's elements, whatever the tiler's strides.\n"
          "An element is inside when each of its coordinates is strictly below the shape's extent in that mode."),
    cases=_predicate_cases,
    ask=_ask_predicate,
    forbidden=("local_tile", "elem_less"),
    criteria=(
        Criterion("one bool per tile element: tile rows x tile columns", "reference", 1, _predicate_shape),
        Criterion("a tile inside the tensor is True everywhere", "reference", 1, _predicate_on(edge=False)),
        Criterion("an edge tile is False exactly where it reaches past the tensor", "reference", 2,
                  _predicate_on(edge=True)),
        Criterion("real CuTeDSL, running your function, gives the same bools", "cutedsl-cpu", 1,
                  _cutedsl_runs_your_predicate),
    ),
)


# ---- what the CuTeDSL worker calls, with `cute` = cutlass.cute ------------------------------------------------

def zipped_batch_in_cutedsl(cute, a, tiler):
    shape, stride = a
    layouts = tuple(cute.make_layout(size, stride=step) for size, step in tiler)
    return cute.zipped_divide(cute.make_layout(shape, stride=stride), layouts)


def tiler_picture_in_cutedsl(cute, rows, columns, tiler):
    """None when CuTeDSL's zipped divide numbers the tiles as the reference does (the picture is right)."""
    from cutekit import cute as reference
    layouts = tuple(cute.make_layout(size, stride=step) for size, step in tiler)
    mine = tuple(reference.make_layout(size, stride=step) for size, step in tiler)
    real = cute.zipped_divide(cute.make_layout((rows, columns)), layouts)
    expected = reference.zipped_divide(reference.make_layout((rows, columns)), mine)
    return None if str(real) == str(expected) else f"{real} (reference {expected})"


def zipped_in_cutedsl(cute, shape, stride, tiler):
    return cute.zipped_divide(cute.make_layout(shape, stride=stride), tiler)


def slice_in_cutedsl(cute, shape, tiler, block):
    return cute.zipped_divide(cute.make_identity_tensor(shape), tiler)[((None, None), block)]


EXERCISES = [LOGICAL_DIVIDE_BY_HAND, TILER_FROM_PICTURE, PREDICT_ZIPPED, SLICE_BLOCK, TILE_PREDICATE]
