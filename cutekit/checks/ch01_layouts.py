"""Chapter 01 exercises: layouts as functions from coordinates to offsets.

Every answer is a function of the exercise's parameters, asked on cases drawn from a random seed, so an
answer tuned to the notebook's worked example meets other shapes. Each exercise earns 3 points on the
reference tier (cutekit.cute) and 1 on `cutedsl-cpu`, where real CuTeDSL confirms the same answers in a
subprocess. Every seed draws the cases that tell the usual mistakes apart (for each exercise they are listed
by its case generator), and a hint names the mistake when the answer is one of them: a swapped pair of
strides, a row-major habit, a size-1 mode kept, a reshape taken for a transpose.
The `*_in_cutedsl(cute, ...)` functions at the bottom are what the CuTeDSL worker calls, with `cutlass.cute`.
"""
from __future__ import annotations

from .common import case_text, cutedsl_builds_same_layouts, describe_layout, each_outcome, layout_difference
from .cutedsl import cutedsl_agrees
from .grading import Criterion, Exercise, Verdict, failed, passed

THIS_MODULE = __name__


def _cutedsl_agrees(function: str, arguments, learner_text) -> "callable":
    """Criterion: real CuTeDSL, asked each case's question (`arguments(outcome)`), gives the learner's answer."""
    return cutedsl_agrees(THIS_MODULE, function, arguments, learner_text, case_text)


def _flat_ints(value) -> bool:
    return isinstance(value, tuple) and all(isinstance(part, int) for part in value)


def _first_wrong_mode(modes, got_stride) -> str:
    """`modes` are (name, meaning, value) per mode; the sentence naming the first whose stride is off (its place and
    what one step in it means, never the formula of the answer)."""
    for (name, meaning, value), got in zip(modes, got_stride):
        if got != value:
            return f"mode {name} ({meaning}) should have stride {value}; yours has {got}"
    return ""


def _column_major_coordinate(index: int, shape: tuple) -> tuple:
    """The coordinate of 1-D index `index` in a flat shape: CuTe unfolds column-major, the first mode fastest."""
    coordinate = []
    for extent in shape:
        coordinate.append(index % extent)
        index //= extent
    return tuple(coordinate)


def _sides(rng, count, low, high, avoid=()):
    """`count` distinct (M, N) pairs with M != N (so a transposed or swapped answer shows), none in `avoid`."""
    pairs = []
    while len(pairs) < count:
        pair = (rng.randint(low, high), rng.randint(low, high))
        if pair[0] != pair[1] and pair not in avoid and pair not in pairs:
            pairs.append(pair)
    return pairs


def _batch_cases(rng):
    """(M, N, B), three different numbers, B >= 2: swapped strides, a transposed shape, the batch mode put first
    and a missing batch all show."""
    return [{"M": m, "N": n, "B": rng.choice([b for b in range(2, 7) if b not in (m, n)])}
            for m, n in _sides(rng, 5, 2, 9, avoid=((4, 8),))]


# ---- ch01.layout_from_grid: a batch of B row-major M x N matrices ----------------------------------------------

def _batch_modes(M, N, B):
    return (("m", "down a column: the next row, N elements on in a row-major matrix", N),
            ("n", "along a row: the next column, the next element", 1),
            ("b", "the next matrix, one whole matrix on", M * N))


@each_outcome
def _batch_shape(outcome) -> Verdict | None:
    M, N, B = outcome.case["M"], outcome.case["N"], outcome.case["B"]
    got, want = outcome.value, f"({M},{N},{B})"
    if got["shape"] == want:
        return None
    shape = got["shape_tuple"]
    why = {(B, M, N): ": the batch mode comes last, (M, N, B), so that b is the third coordinate",
           (M, N): ": a batch needs a third mode, for the matrix index b",
           (N, M, B): ": rows first, (M, N, B), as m is the first coordinate"}.get(shape, "")
    return failed(f"{case_text(outcome.case)}: the shape should be {want}, yours is {got['shape']}{why} "
                  f"(your layout: {got['text']})")


def _batch_story(case, got) -> str:
    M, N, B = case["M"], case["N"], case["B"]
    stride = got["stride_tuple"]
    if got["shape_tuple"] != (M, N, B) or not _flat_ints(stride):
        return ""
    known = {(1, M, M * N): "your matrices are column-major (m has stride 1); a row-major matrix puts the next "
                            "column at the next element (n: stride 1) and the next row N elements on (m: stride N)",
             (1, N, M * N): "the strides of m and n are swapped: the next row is N elements on, the next column 1",
             (N * B, B, 1): "yours interleaves the matrices (b has stride 1, so element (m, n) of every matrix "
                            "sits side by side); the batch keeps each matrix whole, one after another"}
    return known.get(stride) or _first_wrong_mode(_batch_modes(M, N, B), stride)


@each_outcome
def _batch_offsets(outcome) -> Verdict | None:
    case, got = outcome.case, outcome.value
    M, N, B = case["M"], case["N"], case["B"]
    if got["size"] != M * N * B:
        return failed(f"{case_text(case)}: your layout has {got['size']} elements, the batch of B matrices of "
                      f"M x N has {M * N * B} (your layout: {got['text']})")
    story = _batch_story(case, got)
    for index, offset in enumerate(got["offsets"]):
        m, n, b = _column_major_coordinate(index, (M, N, B))
        want = b * M * N + m * N + n
        if offset != want:
            return layout_difference(f"{case_text(case)}: element (m, n, b) = ({m}, {n}, {b}) belongs at offset "
                                     f"{want}; your layout {got['text']} puts it at {offset}"
                                     + (f": {story}" if story else ""), got["text"], (m, n, b), want, offset)
    return None


LAYOUT_FROM_GRID = Exercise(
    id="ch01.layout_from_grid",
    statement="Write layout_for(M, N, B): the layout of shape (M, N, B) of B row-major M x N matrices stored one "
              "after another, element (m, n) of matrix b at offset b*M*N + m*N + n.",
    example="layout_for(M, N, B)(m, n, b) == b*M*N + m*N + n",
    rule=("A layout's offset is the sum over its modes of coordinate times stride.\n"
          "A mode's stride is how far the offset moves when that coordinate grows by one and the others stay: read "
          "each one off the offset formula the exercise gives."),
    cases=_batch_cases,
    ask=lambda answer, case: describe_layout(answer(case["M"], case["N"], case["B"])),
    criteria=(
        Criterion("returns a layout of shape (M, N, B)", "reference", 1, _batch_shape),
        Criterion("element (m, n, b) lands at offset b*M*N + m*N + n, for every (m, n, b)", "reference", 2,
                  _batch_offsets),
        Criterion("real CuTeDSL, running your function, builds the same layout", "cutedsl-cpu", 1,
                  cutedsl_builds_same_layouts(lambda case: (case["M"], case["N"], case["B"]),
                                              lambda case: f"({case['M']},{case['N']},{case['B']}):"
                                                           f"({case['N']},1,{case['M'] * case['N']})")),
    ),
)


# ---- ch01.layout_from_picture -------------------------------------------------------------------------------

PICTURE_ABOVE = "(3,5):(7,2)"   # the picture the notebook draws above the exercise


def _picture_cases(rng):
    """Every seed: a row-major, a column-major, a padded-rows, a padded-columns and an arbitrary-step picture,
    each with rows != columns, so a row-major (or column-major) habit, swapped steps and a transposed shape show."""
    cases = []
    for kind, (m, n) in zip(["row", "column", "padded rows", "padded columns", "any"], _sides(rng, 5, 2, 7)):
        pad = rng.randint(1, 3)
        down, across = {"row": (n, 1), "column": (1, m), "padded rows": (n + pad, 1), "padded columns": (1, m + pad),
                        "any": (rng.randint(2, 9), rng.randint(2, 9))}[kind]
        cases.append({"grid": tuple(tuple(row * down + column * across for column in range(n)) for row in range(m)),
                      "_strides": (down, across), "_kind": kind})
    return cases


def _picture_text(case) -> str:
    rows, columns = len(case["grid"]), len(case["grid"][0])
    return f"({rows},{columns}):({case['_strides'][0]},{case['_strides'][1]})"


def _picture_copied(case, got) -> str:
    if got["text"] == PICTURE_ABOVE and _picture_text(case) != PICTURE_ABOVE:
        return (f": {PICTURE_ABOVE} is the picture drawn above the exercise; each case has its own picture, so read "
                f"the shape and the steps from grid")
    return ""


@each_outcome
def _picture_shape(outcome) -> Verdict | None:
    case, got = outcome.case, outcome.value
    rows, columns = len(case["grid"]), len(case["grid"][0])
    want = f"({rows},{columns})"
    if got["shape"] == want:
        return None
    why = _picture_copied(case, got)
    if not why and got["shape_tuple"] == (columns, rows):
        why = ": the shape is (rows, columns) of the picture, rows first"
    elif not why:
        why = f": the picture has {rows} rows and {columns} columns"
    return failed(f"{case_text(case)}: the shape should be {want}, yours is {got['shape']}{why} "
                  f"(your layout: {got['text']})")


def _picture_story(case, got) -> str:
    rows, columns = len(case["grid"]), len(case["grid"][0])
    down, across = case["_strides"]
    stride = got["stride_tuple"]
    if got["shape_tuple"] != (rows, columns) or not _flat_ints(stride):
        return _picture_copied(case, got)[2:]
    steps = "read both steps off the picture itself: one down a column and one across a row, from cell (0, 0)"
    if stride == (across, down):
        return (f"your strides are swapped: mode m (down a column) steps {down} in this picture, mode n "
                f"(across a row) steps {across}")
    if stride == (columns, 1):
        return f"not every picture is row-major: {steps}"
    if stride == (1, rows):
        return f"not every picture is column-major: {steps}"
    return _first_wrong_mode((("m", "down a column, from row 0 to row 1 of the picture", down),
                              ("n", "across a row, from column 0 to column 1 of the picture", across)), stride)


@each_outcome
def _picture_offsets(outcome) -> Verdict | None:
    case, got = outcome.case, outcome.value
    rows, columns = len(case["grid"]), len(case["grid"][0])
    if got["size"] != rows * columns:
        return failed(f"{case_text(case)}: your layout has {got['size']} elements, the picture has {rows * columns} "
                      f"(your layout: {got['text']}){_picture_copied(case, got)}")
    story = _picture_story(case, got)
    for index, offset in enumerate(got["offsets"]):
        m, n = _column_major_coordinate(index, (rows, columns))
        want = case["grid"][m][n]
        if offset != want:
            return layout_difference(f"{case_text(case)}: element (m, n) = ({m}, {n}) belongs at offset {want}; "
                                     f"your layout {got['text']} puts it at {offset}" + (f": {story}" if story else ""),
                                     got["text"], (m, n), want, offset)
    return None


LAYOUT_FROM_PICTURE = Exercise(
    id="ch01.layout_from_picture",
    statement="Write layout_from_picture(grid): grid[m][n] is the offset drawn at row m, column n; "
              "return the layout that draws it.",
    example="layout_from_picture(((0, 1, 2), (3, 4, 5))) prints (2,3):(3,1)",
    rule=("The shape is the picture's (rows, columns), rows first.\n"
          "A stride is how far the offset moves between neighbours along that mode: read it off the picture's "
          "cells, whatever order the picture was drawn in (row-major, column-major or neither)."),
    cases=_picture_cases,
    ask=lambda answer, case: describe_layout(answer(case["grid"])),
    criteria=(
        Criterion("the shape is (rows, columns) of the picture", "reference", 1, _picture_shape),
        Criterion("every cell of the picture gets its drawn offset", "reference", 2, _picture_offsets),
        Criterion("real CuTeDSL, running your function, builds the same layout", "cutedsl-cpu", 1,
                  cutedsl_builds_same_layouts(lambda case: (case["grid"],), _picture_text)),
    ),
)


# ---- ch01.index_of_coordinate ---------------------------------------------------------------------------------

WORKED_INDEX = 19   # index_of((4,(2,3)), (2,(1,8)), (1,(1,2))), worked in the notebook


def _size(shape) -> int:
    if isinstance(shape, int):
        return shape
    total = 1
    for mode in shape:
        total *= _size(mode)
    return total


def _flatten(value) -> tuple:
    return sum((_flatten(part) for part in value), ()) if isinstance(value, tuple) else (value,)


def _offset(shape, stride, coordinate) -> int:
    """The layout's offset of a 1-D, flat or nested coordinate (CuTe's rule, written out)."""
    if isinstance(shape, int):
        return coordinate * stride
    if isinstance(coordinate, int):
        total = 0
        for mode_shape, mode_stride in zip(shape, stride):
            total += _offset(mode_shape, mode_stride, coordinate % _size(mode_shape))
            coordinate //= _size(mode_shape)
        return total
    return sum(_offset(s, d, c) for s, d, c in zip(shape, stride, coordinate))


def _nested_mode(case) -> int:
    return 0 if isinstance(case["shape"][0], tuple) else 1


def _slips(case) -> dict:
    """What each usual slip gives for this case: {slip name: offset}."""
    shape, stride, coordinate = case["shape"], case["stride"], case["coordinate"]
    which = _nested_mode(case)
    reversed_stride = tuple(d[::-1] if isinstance(d, tuple) else d for d in stride)
    compact, running = [], 1
    for extent in _flatten(shape):
        compact.append(running)
        running *= extent
    compact_stride = ((tuple(compact[:2]), compact[2]) if which == 0 else (compact[0], tuple(compact[1:])))
    slips = {"off by one": _offset(shape, stride, coordinate) + 1,
             "compact": _offset(shape, compact_stride, coordinate),
             "reversed": _offset(shape, reversed_stride, coordinate),
             "worked": WORKED_INDEX}
    if case["kind"] == "1-D":
        flat_shape, flat_stride, index, total = _flatten(shape), _flatten(stride), coordinate, 0
        for extent, step in reversed(list(zip(flat_shape, flat_stride))):
            total += (index % extent) * step
            index //= extent
        slips["row-major"] = total
    if case["kind"] == "flat":
        entry, (inner, outer), (inner_stride, outer_stride) = coordinate[which], shape[which], stride[which]
        other = 1 - which
        rest = coordinate[other] * stride[other]
        slips["not unfolded"] = rest + entry * inner_stride
        slips["unfolded row-major"] = rest + (entry // outer) * inner_stride + (entry % outer) * outer_stride
    return slips


def _slips_apart(case) -> bool:
    """The right offset and every slip's differ from each other, so the hint can name the slip."""
    values = [_offset(case["shape"], case["stride"], case["coordinate"]), *_slips(case).values()]
    return len(set(values)) == len(values)


def _index_cases(rng):
    """Every seed: four layouts, two whose second mode nests and two whose first mode does (an answer written
    for the worked example's structure meets the other), each asked a flat, a 1-D and a nested coordinate.
    Each case is drawn again until the right offset and every usual slip's offset all differ."""
    cases = []
    for nested_first in (False, True, False, True):
        for kind in ("flat", "1-D", "nested"):
            while True:
                nested, plain = (rng.randint(2, 3), rng.randint(2, 4)), rng.randint(2, 4)
                s0, s1, s2 = rng.sample(range(1, 24), 3)
                shape, stride = ((nested, plain), ((s1, s2), s0)) if nested_first else ((plain, nested), (s0, (s1, s2)))
                i, j, m = rng.randrange(nested[0]), rng.randrange(nested[1]), rng.randrange(plain)
                coordinate = {"flat": rng.randrange(1, nested[0] * nested[1]),
                              "1-D": rng.randrange(1, _size(shape)), "nested": (i, j)}[kind]
                if kind != "1-D":
                    coordinate = (coordinate, m) if nested_first else (m, coordinate)
                case = {"kind": kind, "shape": shape, "stride": stride, "coordinate": coordinate}
                if _slips_apart(case):
                    cases.append(case)
                    break
    return cases


def _ask_index(answer, case):
    value = answer(case["shape"], case["stride"], case["coordinate"])
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"expected an int, got {type(value).__name__}: {value!r}")
    return value


def _index_story(case, value) -> str:
    want = _offset(case["shape"], case["stride"], case["coordinate"])
    which = _nested_mode(case)
    inner_shape = case["shape"][which]
    stories = {
        "off by one": "yours is one more than the right offset (coordinate 0 is offset 0)",
        "compact": "yours is the compact column-major index, computed from the shape alone: the strides say how "
                   "far each step goes",
        "reversed": f"you paired the nested mode's coordinates with its strides {case['stride'][which]} in reverse "
                    f"order: the first inner coordinate goes with the first inner stride",
        "worked": f"{WORKED_INDEX} is the worked example's answer; this layout is another",
        "row-major": "you unfolded the 1-D index row-major (the last mode fastest); CuTe unfolds it column-major, "
                     "the first mode fastest",
    }
    if case["kind"] == "flat":
        entry = case["coordinate"][which]
        inner = (entry % inner_shape[0], entry // inner_shape[0])
        stories["not unfolded"] = (f"the entry {entry} for the nested mode {inner_shape} is a 1-D index into the "
                                   f"nested mode: unfold it there first ({entry} is {inner}), then use the strides "
                                   f"{case['stride'][which]}")
        stories["unfolded row-major"] = (f"the entry {entry} for the nested mode {inner_shape} unfolds column-major "
                                         f"inside the nested mode: {entry} is {inner} there, the first inner mode "
                                         f"fastest")
    for slip, offset in _slips(case).items():
        if value == offset and value != want:
            return f" ({stories[slip]})"
    return ""


def _index_criterion(kind: str):
    def judge(context) -> Verdict:
        for outcome in context.outcomes:
            case = outcome.case
            if case["kind"] != kind:
                continue
            where = f"index_of({case['shape']}, {case['stride']}, {case['coordinate']})"
            if outcome.error:
                note = ""
                if _nested_mode(case) == 0 and "switched off" not in outcome.error:
                    note = (" (this layout's first mode nests: any mode may nest, so walk the shape without "
                            "assuming which)")
                return failed(f"{where}: {outcome.error}{note}")
            want = _offset(case["shape"], case["stride"], case["coordinate"])
            if outcome.value != want:
                return failed(f"{where} should be {want}, yours is {outcome.value}{_index_story(case, outcome.value)}")
        return passed()
    return judge


INDEX_OF_COORDINATE = Exercise(
    id="ch01.index_of_coordinate",
    statement="Write index_of(shape, stride, coordinate) by hand: the offset a layout gives a 1-D, flat or nested "
              "coordinate (cute.make_layout, cute.Layout, crd2idx and idx2crd are switched off while it is checked).",
    example="index_of((4,(2,3)), (2,(1,8)), (1,(1,2))) is 19",
    rule=("The offset of a coordinate is the sum over modes of coordinate times stride; a nested mode applies the "
          "same rule inside itself.\n"
          "A single integer given for a mode that has sub-modes (or for the whole layout) is a 1-D index: CuTe "
          "unfolds it column-major over that mode's shape, first sub-mode fastest, and each piece then goes through "
          "the rule above."),
    cases=_index_cases,
    ask=_ask_index,
    forbidden=("make_layout", "Layout", "crd2idx", "idx2crd"),
    criteria=(
        Criterion("nested coordinates: the inner product of coordinate and stride, at every level", "reference", 1,
                  _index_criterion("nested")),
        Criterion("flat coordinates: a 1-D index into a nested mode unfolds inside it", "reference", 1,
                  _index_criterion("flat")),
        Criterion("1-D coordinates unfold column-major (the first mode fastest)", "reference", 1,
                  _index_criterion("1-D")),
        Criterion("real CuTeDSL gives the same offsets", "cutedsl-cpu", 1,
                  _cutedsl_agrees("index_in_cutedsl",
                                  lambda outcome: (outcome.case["shape"], outcome.case["stride"],
                                                   outcome.case["coordinate"]), str)),
    ),
)


# ---- ch01.coalesce_by_hand ----------------------------------------------------------------------------------

def _coalesce_cases(rng):
    """Every seed: merges that must and must not happen (strides that continue, strides out of order, equal
    strides), size-1 modes at the ends and between two modes that merge, and nested layouts that flatten to
    one mode and to two."""
    def merging():
        first, second = rng.randint(2, 4), rng.randint(2, 4)
        step = rng.choice([1, 2])
        third_stride = first * second * step + rng.choice([0, 1])  # sometimes merges, sometimes not
        return (first, second, 2), (step, first * step, third_stride)

    def out_of_order():          # (a,3):(3s,s): the row-major habit would merge it
        first, step = rng.randint(2, 4), rng.randint(1, 4)
        return (first, 3), (3 * step, step)

    def equal_strides():         # the same offsets twice: never a merge
        first, step = rng.randint(2, 4), rng.randint(1, 4)
        return (first, 3), (step, step)

    def ones_at_the_ends():
        extent = rng.randint(2, 6)
        return (1, extent, 1, 2), (rng.randint(1, 9), 1, rng.randint(1, 9), extent)

    def one_between():           # (a,1,b):(s,r,a*s): merges once the size-1 mode is gone
        first, last, step = rng.randint(2, 4), rng.randint(2, 4), rng.randint(1, 3)
        between = rng.choice([value for value in range(1, 13) if value != first * step])
        return (first, 1, last), (step, between, first * step)

    def nested_to_one():
        inner = rng.randint(2, 4)
        return ((2, inner), rng.randint(2, 3)), ((1, 2), 2 * inner)

    def nested_to_two():         # (a,(2,c)):(1,(a,3a)) flattens and merges once: (2a,c):(1,3a)
        first, last = rng.randint(2, 4), rng.randint(2, 4)
        return (first, (2, last)), (1, (first, 3 * first))
    made = [("merge", merging()), ("merge", out_of_order()), ("merge", equal_strides()),
            ("ones", ones_at_the_ends()), ("ones", one_between()),
            ("nested", nested_to_one()), ("nested", nested_to_two())]
    return [{"kind": kind, "shape": shape, "stride": stride} for kind, (shape, stride) in made]


def _reference_coalesce(case) -> str:
    from cutekit import cute
    return str(cute.coalesce(cute.make_layout(case["shape"], stride=case["stride"])))


def _original(case) -> dict:
    from cutekit import cute
    return describe_layout(cute.make_layout(case["shape"], stride=case["stride"]))


def _coalesce_story(case, got) -> str:
    """Every finding about the learner's layout that names a broken rule, joined."""
    want, original = _reference_coalesce(case), _original(case)
    shape, stride = got["shape_tuple"], got["stride_tuple"]
    findings = []
    if got["text"] == "12:1" and want != "12:1":
        findings.append("12:1 is the worked example's answer; this layout is another")
    if got["text"] == original["text"]:
        findings.append("yours is the layout unchanged: apply the three rules of step 6")
    if isinstance(shape, tuple) and any(isinstance(mode, tuple) for mode in shape):
        findings.append("yours still nests: cute.flatten the shape and the stride first, then apply the rules")
    if isinstance(shape, tuple) and len(shape) == 1:
        findings.append(f"a single mode is built from plain integers: make_layout({shape[0]}, stride={stride[0]}) "
                        f"prints {shape[0]}:{stride[0]}, make_layout(({shape[0]},), stride=({stride[0]},)) prints "
                        f"{got['text']}")
    flat_shape, flat_stride = _flatten(shape), _flatten(stride)
    if 1 in flat_shape:
        findings.append("yours keeps a mode of size 1, which adds no offsets and goes")
    if got["size"] != original["size"]:
        findings.append(f"yours has {got['size']} elements, the layout has {original['size']}: coalescing keeps "
                        f"every element and its offset")
    elif got["offsets"] != original["offsets"]:
        findings.append("yours merged modes that do not continue each other, and the offsets changed: mode i+1 "
                        "merges into mode i only when stride[i+1] == shape[i] * stride[i]")
    else:
        for i in range(len(flat_shape) - 1):
            if flat_shape[i] != 1 and flat_shape[i + 1] != 1 and flat_stride[i + 1] == flat_shape[i] * flat_stride[i]:
                between = 1 in _flatten(case["shape"])
                findings.append(f"your modes {flat_shape[i]}:{flat_stride[i]} and {flat_shape[i + 1]}:"
                                f"{flat_stride[i + 1]} continue each other (stride[i+1] == shape[i] * stride[i]: "
                                f"{flat_stride[i + 1]} == {flat_shape[i]} * {flat_stride[i]}) and merge"
                                + (" (a size-1 mode between them does not keep them apart: drop the size-1 modes "
                                   "first)" if between else ""))
                break
    return "; ".join(findings)


def _coalesce_criterion(kind: str):
    def judge(context) -> Verdict:
        for outcome in context.outcomes:
            case = outcome.case
            if case["kind"] != kind:
                continue
            where = f"coalesced({case['shape']}, {case['stride']})"
            if outcome.error:
                return failed(f"{where}: {outcome.error}")
            want, got = _reference_coalesce(case), outcome.value["text"]
            if got != want:
                story = _coalesce_story(case, outcome.value)
                return failed(f"{where} should be {want}, yours is {got}" + (f": {story}" if story else ""))
        return passed()
    return judge


COALESCE_BY_HAND = Exercise(
    id="ch01.coalesce_by_hand",
    statement="Write coalesced(shape, stride): the layout cute.coalesce gives, built by hand with cute.make_layout "
              "(cute.coalesce is switched off while it is checked).",
    example="coalesced((2,(1,6)), (1,(6,2))) prints 12:1",
    rule=("Coalescing keeps the function from 1-D index to offset and only writes it with fewer modes.\n"
          "Flatten the layout, drop the modes of size 1, then merge a mode into the one before it when it continues "
          "where that one ends: its stride equals the earlier mode's size times the earlier mode's stride.\n"
          "One mode left is written as plain integers (shape:stride), several as a flat tuple."),
    cases=_coalesce_cases,
    ask=lambda answer, case: describe_layout(answer(case["shape"], case["stride"])),
    forbidden=("coalesce",),
    criteria=(
        Criterion("merges mode i+1 into mode i when stride[i+1] == shape[i] * stride[i], and only then",
                  "reference", 1, _coalesce_criterion("merge")),
        Criterion("drops modes of size 1", "reference", 1, _coalesce_criterion("ones")),
        Criterion("flattens nested modes; a single mode prints as 12:1, not (12):(1)", "reference", 1,
                  _coalesce_criterion("nested")),
        Criterion("real CuTeDSL's coalesce gives your layouts", "cutedsl-cpu", 1,
                  _cutedsl_agrees("coalesce_in_cutedsl",
                                  lambda outcome: (outcome.case["shape"], outcome.case["stride"]),
                                  lambda value: value["text"])),
    ),
)


# ---- ch01.transpose_by_composition: every matrix of a batch transposed ------------------------------------------

STEP_7_TRANSPOSER = "(8,4):(4,1)"   # the notebook's transposer of one 4 x 8 matrix


def _batch_layout(case):
    from cutekit import cute
    M, N, B = case["M"], case["N"], case["B"]
    return cute.make_layout((M, N, B), stride=(N, 1, M * N))


def _ask_transposer(answer, case):
    from cutekit import cute
    x = answer(case["M"], case["N"], case["B"])
    described = describe_layout(x)
    try:
        composed, problem = describe_layout(cute.composition(_batch_layout(case), x)), ""
    except Exception as error:  # judged by the composition criterion; X's shape is still graded
        composed, problem = None, f"cute.composition(A, your X = {x}) failed: {type(error).__name__}: {error}"
    return {"b": described, "composed": composed, "composition_error": problem}


@each_outcome
def _transposer_shape(outcome) -> Verdict | None:
    M, N, B = outcome.case["M"], outcome.case["N"], outcome.case["B"]
    got, want = outcome.value["b"], f"({N},{M},{B})"
    if got["shape"] == want:
        return None
    if got["text"] == STEP_7_TRANSPOSER:
        why = (f": {STEP_7_TRANSPOSER} is step 7's transposer for the worked example's one 4 x 8 matrix; this case "
               f"has B = {B} matrices of {M} x {N}")
    else:
        why = {(M, N, B): ": X has the view's shape (N, M, B), n first, then m, then b; yours has A's own shape",
               (N, M): ": a batch needs a third mode, for the matrix index b"}.get(got["shape_tuple"], "")
    return failed(f"{case_text(outcome.case)}: X should have shape (N, M, B) = {want}, yours is {got['shape']}{why} "
                  f"(your X: {got['text']})")


def _transposer_story(case, x) -> str:
    M, N, B = case["M"], case["N"], case["B"]
    stride = x["stride_tuple"]
    if x["shape_tuple"] != (N, M, B) or not _flat_ints(stride):
        return ""
    known = {(1, N, M * N): "your X is compact column-major over (N, M, B), so its values are A's 1-D indices in A's "
                            "own order and composition(A, X) reads A's elements in memory order, cut into (N, M, B): "
                            "a reshape, not a transpose (those are also the strides of the transposed view itself; X is "
                            "not the view but the map from the view's coordinates to A's). X must send (n, m, b) to "
                            "the 1-D index of A's (m, n, b), m + n*M + b*M*N",
             (B, N * B, 1): "your X counts A's 1-D index row-major (b fastest); CuTe unfolds a 1-D index into A "
                            "column-major over A's shape (M, N, B): m fastest, then n, then b",
             (1, M, M * N): "the strides of n and m are swapped: one step in n is one column of A, M indices on; "
                            "one step in m is the next row, the next index"}
    modes = (("n", "the next column of A: M 1-D indices on", M),
             ("m", "the next row of A: the next 1-D index", 1),
             ("b", "the next matrix of A, one whole matrix of M*N indices on", M * N))
    return known.get(stride) or _first_wrong_mode(modes, stride)


@each_outcome
def _transposed_offsets(outcome) -> Verdict | None:
    case, composed, x = outcome.case, outcome.value["composed"], outcome.value["b"]
    M, N, B = case["M"], case["N"], case["B"]
    story = _transposer_story(case, x)
    tail = f": {story}" if story else ""
    if composed is None:
        return failed(f"{case_text(case)}: {outcome.value['composition_error']}{tail}")
    if composed["size"] != M * N * B:
        return failed(f"{case_text(case)}: composition(A, X) = {composed['text']} has {composed['size']} elements, A "
                      f"has M*N*B = {M * N * B}{tail}")
    for index, offset in enumerate(composed["offsets"]):
        n, m, b = _column_major_coordinate(index, (N, M, B))   # the view is indexed (n, m, b)
        want = b * M * N + m * N + n
        if offset != want:
            return layout_difference(f"{case_text(case)}: composition(A, X) at (n, m, b) = ({n}, {m}, {b}) should read "
                                     f"A's (m, n, b) = ({m}, {n}, {b}), offset {want}; with your X = {x['text']} it "
                                     f"reads offset {offset} (composition(A, X) = {composed['text']}){tail}",
                                     composed["text"], (n, m, b), want, offset)
    return None


TRANSPOSE_BY_COMPOSITION = Exercise(
    id="ch01.transpose_by_composition",
    statement="Write transposer(M, N, B): the layout X of shape (N, M, B) for which cute.composition(A, X), with "
              "A = (M,N,B):(N,1,M*N) (a batch of row-major matrices), reads A at (m, n, b) at (n, m, b).",
    example="composition(A, transposer(M, N, B))(n, m, b) == A(m, n, b)",
    rule=("composition(A, X) sends a coordinate c to A(X(c)): X turns the view's coordinate into a 1-D index of A, "
          "and A turns that index into an offset.\n"
          "A 1-D index into A unfolds column-major over A's shape (M, N, B): m fastest, then n, then b. X must send "
          "(n, m, b) to the index of A's element (m, n, b)."),
    cases=_batch_cases,
    ask=_ask_transposer,
    criteria=(
        Criterion("X has shape (N, M, B)", "reference", 1, _transposer_shape),
        Criterion("composition(A, X) at (n, m, b) reads A at (m, n, b), for every element", "reference", 2,
                  _transposed_offsets),
        Criterion("real CuTeDSL composes A with your X to the same layout", "cutedsl-cpu", 1,
                  _cutedsl_agrees("compose_in_cutedsl",
                                  lambda outcome: ((outcome.case["M"], outcome.case["N"], outcome.case["B"]),
                                                   (outcome.case["N"], 1, outcome.case["M"] * outcome.case["N"]),
                                                   outcome.value["b"]["shape_tuple"],
                                                   outcome.value["b"]["stride_tuple"]),
                                  lambda value: value["composed"]["text"])),
    ),
)


# ---- what the CuTeDSL worker calls, with `cute` = cutlass.cute ------------------------------------------------

def index_in_cutedsl(cute, shape, stride, coordinate):
    return cute.make_layout(shape, stride=stride)(coordinate)


def coalesce_in_cutedsl(cute, shape, stride):
    return cute.coalesce(cute.make_layout(shape, stride=stride))


def compose_in_cutedsl(cute, a_shape, a_stride, b_shape, b_stride):
    return cute.composition(cute.make_layout(a_shape, stride=a_stride), cute.make_layout(b_shape, stride=b_stride))


EXERCISES = [LAYOUT_FROM_GRID, LAYOUT_FROM_PICTURE, INDEX_OF_COORDINATE, COALESCE_BY_HAND, TRANSPOSE_BY_COMPOSITION]
