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
    strides), size-1 modes at the ends and between two modes that merge, nested layouts that flatten to one
    mode and to two, and a layout whose modes all have size 1 (1:0)."""
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
    def all_ones():              # nothing is left once the size-1 modes go: one element at offset 0
        return (1, (1, 1)), (rng.randint(1, 9), (rng.randint(1, 9), rng.randint(1, 9)))
    made = [("merge", merging()), ("merge", out_of_order()), ("merge", equal_strides()),
            ("ones", ones_at_the_ends()), ("ones", one_between()),
            ("nested", nested_to_one()), ("nested", nested_to_two()), ("ones", all_ones())]
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
                nothing_left = (" (every mode of this layout has size 1: once they go nothing is left, and CuTe "
                                "writes that one element at offset 0 as 1:0)" if _reference_coalesce(case) == "1:0"
                                else "")
                return failed(f"{where}: {outcome.error}{nothing_left}")
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


# ---- ch01.compose_by_hand: composition(A, B) by step 7's rules, or None where CuTe refuses ----------------------
#
# A is a flat layout of two or three modes, B of one or two; the learner's layout is judged as a function (its
# mode sizes and the offset of every index), since CuTeDSL may print the same function coalesced.

COMPOSE_WORKED = "(2,2):(16,1)"   # step 7: composition((4,8):(8,1), 4:2)


def _modes_of(shape, stride) -> list:
    """The flat (size, stride) pairs of a layout given as plain (nested) tuples or ints."""
    return list(zip(_flatten(shape), _flatten(stride)))


def _coalesced_modes(modes) -> list:
    """Coalesce's rules on flat modes: size-1 modes go, a mode that continues the one before merges into it."""
    merged = []
    for size, step in modes:
        if size == 1:
            continue
        if merged and merged[-1][0] * merged[-1][1] == step:
            merged[-1] = (merged[-1][0] * size, merged[-1][1])
        else:
            merged.append((size, step))
    return merged or [(1, 0)]


def _walk(modes, s: int, d: int, bounded: bool = False, stride_check: bool = True):
    """Rule 1 of step 7 on A's flat modes for one mode s:d of B: ("ok", [(size, stride)...], events) or
    ("refused", condition, events). Events: "skip" (a mode skipped whole), "inside" (a mode entered and left for
    the next), "past" (read past A's last mode), "uneven" (d lands inside a mode it does not divide, where
    CuTeDSL's answer is not A o B). `bounded`: a learner who stops at A's last element; `stride_check` off: one
    who divides d by a mode that does not divide it."""
    parts, events = [], set()
    for k, (n, e) in enumerate(modes):
        if k == len(modes) - 1:
            if d * (s - 1) >= n:
                events.add("past")
                if bounded:
                    return "refused", "bounded", events
            parts.append((s, d * e))
            return "ok", parts, events
        if d >= n:
            if d % n and stride_check:
                return "refused", "stride", events
            d //= n
            events.add("skip")
            continue
        take = min(-(-n // d), s)
        if s % take:
            return "refused", "shape", events
        if n % d:
            events.add("uneven")
        parts.append((take, d * e))
        s //= take
        d = 1
        if s == 1:
            return "ok", parts, events
        events.add("inside")
    return "ok", parts, events


def _compose_by_rule(a_modes, b_modes, coalesce_first: bool = True, bounded: bool = False, stride_check: bool = True):
    """A o B by rules 1 and 2: {"sizes": per B mode, "offsets": [...]} or {"refused": condition}; events too."""
    modes = _coalesced_modes(a_modes) if coalesce_first else a_modes
    per_mode, events = [], set()
    for s, d in b_modes:
        status, parts, seen = _walk(modes, s, d, bounded, stride_check)
        events |= seen
        if status == "refused":
            return {"refused": parts, "events": events}
        per_mode.append(parts)
    return {"sizes": [_product(size for size, _ in parts) for parts in per_mode],
            "offsets": _offsets_of_parts(per_mode), "events": events}


def _product(values) -> int:
    total = 1
    for value in values:
        total *= value
    return total


def _offsets_of_parts(per_mode) -> list:
    """The offsets of the layout whose top-level modes are `per_mode` (each a list of flat (size, stride))."""
    flat = [mode for parts in per_mode for mode in parts]
    offsets = []
    for index in range(_product(size for size, _ in flat)):
        offset = 0
        for size, step in flat:
            offset += (index % size) * step
            index //= size
        offsets.append(offset)
    return offsets


def _a_modes(case) -> list:
    return _modes_of(case["a_shape"], case["a_stride"])


def _b_modes(case) -> list:
    return _modes_of(case["b_shape"], case["b_stride"])


def _layout_text(shape, stride) -> str:
    from cutekit import cute
    return str(cute.make_layout(shape, stride=stride))


def _compose_where(case) -> str:
    return (f"composed({_layout_text(case['a_shape'], case['a_stride'])}, "
            f"{_layout_text(case['b_shape'], case['b_stride'])})")


def _draw_a(rng, rank: int):
    """A flat layout: sizes 2-6, strides compact in a random mode order, sometimes padded."""
    sizes = [rng.choice([2, 3, 4, 6]) for _ in range(rank)]
    stride, running = [0] * rank, 1
    for mode in rng.sample(range(rank), rank):
        stride[mode] = running
        running = running * sizes[mode] + rng.choice([0, 0, 0, 1, 2])
    return tuple(sizes), tuple(stride)


def _draw_b(rng, rank: int):
    divisors_and_multiples = [1, 2, 3, 4, 6, 8, 9, 12]
    shape = tuple(rng.choice([2, 3, 4, 6, 8]) for _ in range(rank))
    stride = tuple(rng.choice(divisors_and_multiples) for _ in range(rank))
    return (shape[0], stride[0]) if rank == 1 else (shape, stride)


COMPOSE_KINDS = ("skips a whole mode", "lands inside a mode", "two modes", "runs past A's end",
                 "coalesce A first", "stride divisibility", "shape divisibility")


def _is_compose_kind(case, kind) -> bool:
    a, b = _a_modes(case), _b_modes(case)
    if any(s == 1 or d == 0 for s, d in b) or (case["a_shape"], case["a_stride"]) == ((4, 8), (8, 1)):
        return False
    right, plain = _compose_by_rule(a, b), _compose_by_rule(a, b, coalesce_first=False)
    events = right["events"]
    if "uneven" in events or "uneven" in plain["events"]:
        return False                    # CuTeDSL's answer would not be A o B (step 7), or the rules would differ
    merges = len(_coalesced_modes(a)) < len(a)
    if kind == "coalesce A first":
        return merges and "refused" not in right and "refused" in plain
    if merges:
        return False
    if kind == "stride divisibility":       # and a walk that skips the check gets through, so a layout comes back
        return right.get("refused") == "stride" and "refused" not in _compose_by_rule(a, b, stride_check=False)
    if kind == "shape divisibility":
        return right.get("refused") == "shape"
    if "refused" in right or _compose_by_rule(b, a).get("offsets") == right["offsets"]:
        return False                    # the roles swapped must show
    one = len(b) == 1
    return {"skips a whole mode": one and events == {"skip"},
            "lands inside a mode": one and "inside" in events and "past" not in events,
            "two modes": not one and "past" not in events and len(set(b)) == 2,
            "runs past A's end": "past" in events}[kind]


def _same_cases_for_the_same_seed(draw):
    """A case set drawn by trial takes a hundred tries or so; asked again from the same random state (a check
    run again on one seed, as the tests' hint sweeps do), it comes back without being drawn again."""
    drawn = {}

    def cases(rng):
        state = rng.getstate()
        if state not in drawn:
            if len(drawn) >= 512:
                drawn.clear()
            drawn[state] = (draw(rng), rng.getstate())
        found, after = drawn[state]
        rng.setstate(after)
        return [dict(case) for case in found]
    cases.__doc__ = draw.__doc__
    return cases


@_same_cases_for_the_same_seed
def _compose_cases(rng):
    """Every seed: one case of each kind in COMPOSE_KINDS, drawn again until it is that kind. None lands inside
    a mode that d does not divide (there CuTeDSL's answer is not A o B), none is the worked A = (4,8):(8,1)."""
    cases = []
    for kind in COMPOSE_KINDS:
        for _ in range(5000):
            rank_a = 3 if kind == "coalesce A first" or rng.random() < 0.3 else 2
            a_shape, a_stride = _draw_a(rng, rank_a)
            b_shape, b_stride = _draw_b(rng, 2 if kind == "two modes" else 1)
            case = {"kind": kind, "a_shape": a_shape, "a_stride": a_stride, "b_shape": b_shape, "b_stride": b_stride}
            if _is_compose_kind(case, kind):
                cases.append(case)
                break
        else:
            raise RuntimeError(f"no {kind!r} case drawn")
    return cases


def _ask_composed(answer, case):
    from cutekit import cute
    got = answer(cute.make_layout(case["a_shape"], stride=case["a_stride"]),
                 cute.make_layout(case["b_shape"], stride=case["b_stride"]))
    if got is None:
        return None
    described = describe_layout(got)
    two = isinstance(case["b_shape"], tuple) and isinstance(got.shape, tuple) and len(got.shape) == 2
    described["sizes"] = [cute.size(got, mode=[0]), cute.size(got, mode=[1])] if two else [cute.size(got)]
    return described


def _multiplied(case) -> list:
    """Offsets of the stride-times-stride slip: B's mode k with stride d_k * (A's k-th stride, or its first)."""
    a, b = _a_modes(case), _b_modes(case)
    return [_offsets_of_parts([[(s, d * a[min(k, len(a) - 1)][1])] for k, (s, d) in enumerate(b)]),
            _offsets_of_parts([[(s, d * a[0][1])] for s, d in b])]


def _compose_story(case, got) -> str:
    """The mistake the learner's answer (None or a described layout) matches, as a sentence; "" if none."""
    a, b = _a_modes(case), _b_modes(case)
    right = _compose_by_rule(a, b)
    plain, bounded = _compose_by_rule(a, b, coalesce_first=False), _compose_by_rule(a, b, bounded=True)
    swapped = _compose_by_rule(b, a)
    if got is not None and got["text"] == COMPOSE_WORKED:
        return f"{COMPOSE_WORKED} is step 7's worked answer for (4,8):(8,1) o 4:2; this case is another"
    if got is not None and got["offsets"] == swapped.get("offsets"):
        return ("yours reads B through A, the roles swapped: in composition(A, B) B's values are 1-D indices "
                "into A, and A says where each lives")
    if got is not None and got["offsets"] in _multiplied(case):
        return ("yours multiplies B's strides by A's strides: B's values are 1-D indices into A's whole 1-D view, "
                "which unfolds over all of A's modes (step 7, rule 1: divide d out of A's modes, then keep s)")
    coalesced = _coalesced_modes(a)
    if (got is None and "refused" in plain) or (got is not None and got["offsets"] == plain.get("offsets")):
        if len(coalesced) < len(a):
            return (f"A's modes continue each other, so A's 1-D view is {_layout_text(*_unzip(coalesced))}: "
                    f"coalesce A first, then walk its modes")
    if got is None and "refused" in bounded and "refused" not in right:
        return ("this B reads past A's last element, and that is allowed: A's last mode never runs out, it keeps "
                "its stride")
    if got is None and "refused" in swapped:
        return "composing B with A would be refused; here A comes first and B's values index A"
    return ""


def _unzip(modes) -> tuple:
    shapes, strides = tuple(size for size, _ in modes), tuple(step for _, step in modes)
    return (shapes[0], strides[0]) if len(modes) == 1 else (shapes, strides)


def _compose_sizes(outcome) -> Verdict | None:
    case, got = outcome.case, outcome.value
    right = _compose_by_rule(_a_modes(outcome.case), _b_modes(outcome.case))
    if "refused" in right or got is None:
        return None
    want = [size for size, _ in _b_modes(case)]
    if got["sizes"] == want:
        return None
    why = ""
    if sorted(got["sizes"]) != sorted(want) and got["size"] == _product(size for size, _ in _a_modes(case)):
        why = ": yours has A's size; R has B's modes (B is the domain, A says where B's indices live)"
    elif len(want) == 2 and len(got["sizes"]) != 2:
        why = ": B has two modes, so R has two top-level modes, one per mode of B (rule 2)"
    return failed(f"{_compose_where(case)}: R's modes should have B's sizes {want}, yours "
                  f"{got['text']} has {got['sizes']}{why}")


def _compose_offsets(outcome) -> Verdict | None:
    case, got = outcome.case, outcome.value
    right = _compose_by_rule(_a_modes(case), _b_modes(case))
    if "refused" in right:
        return None
    story = _compose_story(case, got)
    tail = f": {story}" if story else ""
    if got is None:
        return failed(f"{_compose_where(case)}: CuTe composes these two, and yours returned None{tail}")
    if got["offsets"] != right["offsets"]:
        for index, (mine, theirs) in enumerate(zip(got["offsets"], right["offsets"])):
            if mine != theirs:
                return failed(f"{_compose_where(case)}: R({index}) should be A(B({index})) = {theirs}, your "
                              f"{got['text']} gives {mine}{tail}")
        return failed(f"{_compose_where(case)}: yours {got['text']} has {got['size']} elements, B has "
                      f"{len(right['offsets'])}{tail}")
    return None


def _compose_refusals(outcome) -> Verdict | None:
    case, got = outcome.case, outcome.value
    right = _compose_by_rule(_a_modes(case), _b_modes(case))
    if "refused" not in right or got is None:
        return None
    condition = {"stride": "stride divisibility is broken: a mode of A that d skips whole must divide d, or d "
                           "must be smaller than that mode",
                 "shape": "shape divisibility is broken: the number of elements a mode of A gives must divide "
                          "what is left of s"}[right["refused"]]
    return failed(f"{_compose_where(case)}: CuTe refuses this composition, {condition}; return None there "
                  f"(yours returned {got['text']})")


COMPOSE_BY_HAND = Exercise(
    id="ch01.compose_by_hand",
    statement="Write composed(A, B): the layout cute.composition(A, B) gives, built by hand with step 7's rules, "
              "or None where CuTe refuses (stride or shape divisibility broken); cute.composition is switched off.",
    example="composed((4,8):(8,1), 4:2) gives (2,2):(16,1)",
    rule=("A composed with B reads A at B's indices: R(i) is A(B(i)), and R has B's shape.\n"
          "One mode s:d of B takes every d-th element of A's 1-D view, s of them: the d is divided out of A's modes "
          "from the left (a mode no larger than what is left of d is skipped whole), then s elements are kept from "
          "the modes that remain; a tuple B composes mode by mode.\n"
          "CuTe refuses when d does not divide out of a mode evenly (stride divisibility) or when s does not split "
          "evenly across the modes it spans (shape divisibility)."),
    cases=_compose_cases,
    ask=_ask_composed,
    forbidden=("composition", "logical_divide", "zipped_divide", "tiled_divide", "flat_divide", "right_inverse",
               "left_inverse", "local_tile", "local_partition"),
    criteria=(
        Criterion("R's modes have B's sizes (B is the domain)", "reference", 1, each_outcome(_compose_sizes)),
        Criterion("every index i of B reads A(B(i)), A's last mode running on past A's size", "reference", 2,
                  each_outcome(_compose_offsets)),
        Criterion("None where CuTe refuses: stride or shape divisibility broken", "reference", 1,
                  each_outcome(_compose_refusals)),
        Criterion("real CuTeDSL composes the same layouts and refuses the same cases", "cutedsl-cpu", 1,
                  _cutedsl_agrees("composed_offsets_in_cutedsl",
                                  lambda outcome: (outcome.case["a_shape"], outcome.case["a_stride"],
                                                   outcome.case["b_shape"], outcome.case["b_stride"]),
                                  lambda value: "refused" if value is None else str(value["offsets"]))),
    ),
)


# ---- ch01.complement_by_hand: complement(A, n) by step 8's algorithm ------------------------------------------

COMPLEMENT_WORKED = "(2,3):(1,8)"   # step 8: complement(4:2, 24)


def _complement_parts(modes, n, *, sort=True, gaps=True, between=True, gap_step_one=False, drop_ones=True,
                      rounding="up", block="reached"):
    """Step 8's algorithm on flat modes, with switches for the usual slips: [(size, stride)...] of the result.
    `between=False`: only the gap before the first mode is filled, as if A's modes always followed each other."""
    kept = [(s, d) for s, d in modes if not drop_ones or (s != 1 and d != 0)]
    if sort:
        kept = sorted(kept, key=lambda mode: mode[1])
    parts, reached = [], 1
    for k, (s, d) in enumerate(kept):
        if gaps and (between or k == 0):
            parts.append((d // reached, 1 if gap_step_one else reached))
        reached = s * d
    if block == "cosize":
        reached = 1 + sum((s - 1) * d for s, d in modes)
    rest = -(-n // reached) if rounding == "up" else n // reached
    parts.append((rest, reached))
    return [(s, d) for s, d in parts if s != 1] or [(1, 0)]


def _complement_right(case) -> dict:
    from cutekit import cute
    return describe_layout(cute.complement(cute.make_layout(case["shape"], stride=case["stride"]), case["n"]))


def _complement_cases(rng):
    """Every seed: one mode with n a multiple of the block and one with n not a multiple; two modes out of
    stride order with a gap between them; n below the block; two modes in stride order with a gap between them
    (an interleaved complement, such as (2,2):(1,4) up to 16: a copy of A sits between A's modes); a nested
    layout with a mode of size 1. Every case has a gap and a rest, so a missing gap or a rest not rounded up
    shows."""
    def one_mode():
        size, step = rng.randint(2, 4), rng.randint(2, 5)
        return (size,), (step,), size * step

    def two_out_of_order():
        small, small_step = rng.randint(2, 3), rng.randint(1, 3)
        big = rng.randint(2, 3)
        big_step = small * small_step * rng.choice([2, 3])
        return (big, small), (big_step, small_step), big * big_step

    def gap_between_in_order():
        small, small_step = rng.randint(2, 3), rng.randint(1, 2)
        big = rng.randint(2, 3)
        big_step = small * small_step * rng.choice([2, 3])
        return (small, big), (small_step, big_step), big * big_step

    def nested_with_a_one():
        small, small_step = rng.randint(2, 3), rng.randint(2, 3)
        big, big_step = rng.randint(2, 3), small * small_step * rng.choice([1, 2])
        return ((small, 1), big), ((small_step, rng.randint(5, 9)), big_step), big * big_step

    cases = []
    for kind, make in (("a multiple", one_mode), ("not a multiple", one_mode), ("out of order", two_out_of_order),
                       ("below the block", two_out_of_order), ("a gap between modes", gap_between_in_order),
                       ("a size-1 mode", nested_with_a_one)):
        while True:
            shape, stride, block = make()
            n = {"a multiple": block * rng.randint(2, 3),
                 "not a multiple": block * rng.randint(1, 2) + rng.randint(1, block - 1),
                 "below the block": rng.randint(block // 2 + 1, block - 1)}.get(kind)
            if n is None:
                n = block * rng.randint(1, 3) + rng.choice([0, rng.randint(1, block - 1)])
            case = {"kind": kind, "shape": shape, "stride": stride, "n": n}
            modes = _modes_of(shape, stride)
            kept_one = _complement_parts(modes, n, drop_ones=False) != _complement_parts(modes, n)
            shown = ((4,), (2,), 24), ((2,), (3,), 10), ((4,), (2,), 7)    # step 8's examples
            if ((shape, stride, n) not in shown and _complement_right(case)["text"] != COMPLEMENT_WORKED
                    and (kind != "a size-1 mode" or kept_one)):
                cases.append(case)
                break
    return cases


def _complement_story(case, got) -> str:
    modes = _modes_of(case["shape"], case["stride"])
    right = _complement_parts(modes, case["n"])
    if got["text"] == COMPLEMENT_WORKED:
        return f"{COMPLEMENT_WORKED} is step 8's worked answer for 4:2 and 24; this case is another"
    reached = max(s * d for s, d in modes if s != 1)
    cosize = 1 + sum((s - 1) * d for s, d in modes)
    slips = [
        (dict(drop_ones=False), "a mode of size 1 adds no offsets: drop it before sorting the modes"),
        (dict(sort=False), "walk A's modes in order of stride, smallest first (yours follows A's own order)"),
        (dict(between=False), "the holes between A's modes are not filled: past the block its first modes cover, "
                              "A's next mode starts further on, and copies of that block fit in between. Every one "
                              "of A's modes, in stride order, gets its gap mode, not only the first (step 8, item 2)"),
        (dict(gaps=False), "the holes between A's offsets are not filled: before each of A's modes, in stride order, "
                           "comes a gap mode of copies of what is covered so far (step 8, item 2)"),
        (dict(gap_step_one=True), "a gap mode steps by the block covered so far (reached), not by 1"),
        (dict(rounding="down"), f"n = {case['n']} is not a multiple of the block A fills ({reached}): the rest mode "
                                f"rounds up, so that A and its complement cover at least 0 .. n-1"),
        (dict(block="cosize"), f"the rest repeats the block A fills, its largest stride times that mode's size "
                               f"({reached}), not A's cosize ({cosize})"),
    ]
    for switches, story in slips:
        slipped = _complement_parts(modes, case["n"], **switches)
        if slipped != right and _offsets_of_parts([slipped]) == got["offsets"]:
            return story
    return ""


def _complement_error_story(case) -> str:
    """Why an answer may have built a mode of size 0 here: a gap taken against a larger stride reached before."""
    modes = _modes_of(case["shape"], case["stride"])
    for switches, story in ((dict(sort=False), "walk A's modes in order of stride, smallest first"),
                            (dict(drop_ones=False), "a mode of size 1 adds no offsets: drop it before sorting")):
        if any(size == 0 for size, _ in _complement_parts(modes, case["n"], **switches)):
            return f" (a gap of size 0 comes from a stride smaller than the block reached before it: {story})"
    return ""


def _complement_criterion(kinds):
    def judge(context) -> Verdict:
        for outcome in context.outcomes:
            case = outcome.case
            if case["kind"] not in kinds:
                continue
            where = (f"complement_of({case['shape']}, {case['stride']}, {case['n']}) for A = "
                     f"{_layout_text(case['shape'], case['stride'])}")
            if outcome.error:
                return failed(f"{where}: {outcome.error}{_complement_error_story(case)}")
            want, got = _complement_right(case), outcome.value
            if got["offsets"] != want["offsets"]:
                story = _complement_story(case, got)
                return failed(f"{where} should be {want['text']}, yours is {got['text']}"
                              + (f": {story}" if story else ""))
        return passed()
    return judge


COMPLEMENT_BY_HAND = Exercise(
    id="ch01.complement_by_hand",
    statement="Write complement_of(shape, stride, n): the layout cute.complement(make_layout(shape, stride=stride), "
              "n) gives, built by hand with step 8's algorithm (cute.complement is switched off).",
    example="complement_of((2,), (3,), 10) gives (3,2):(1,6)",
    rule=("The complement fills A's gaps up to n: take A's modes in order of stride; before each, a mode counts how "
          "many copies of everything so far fit below that mode's stride.\n"
          "A last mode repeats the whole until it reaches n, rounded up, so the complement may cover more than n; "
          "a gap that is not a whole number of copies is rounded down without a word."),
    cases=_complement_cases,
    ask=lambda answer, case: describe_layout(answer(case["shape"], case["stride"], case["n"])),
    forbidden=("complement", "logical_divide", "zipped_divide", "tiled_divide", "flat_divide", "logical_product",
               "zipped_product", "tiled_product", "flat_product", "blocked_product", "raked_product",
               "local_tile", "local_partition"),
    criteria=(
        Criterion("one mode, n a multiple of the block: the gap, then the repeats", "reference", 1,
                  _complement_criterion(("a multiple",))),
        Criterion("the rest rounds up when n is not a multiple of the block (or is below it)", "reference", 1,
                  _complement_criterion(("not a multiple", "below the block"))),
        Criterion("modes in stride order, size-1 modes dropped, each gap filled (between A's modes too)",
                  "reference", 1, _complement_criterion(("out of order", "a gap between modes", "a size-1 mode"))),
        Criterion("real CuTeDSL's complement has your offsets", "cutedsl-cpu", 1,
                  _cutedsl_agrees("complement_offsets_in_cutedsl",
                                  lambda outcome: (outcome.case["shape"], outcome.case["stride"], outcome.case["n"]),
                                  lambda value: str(value["offsets"]))),
    ),
)


# ---- ch01.right_inverse_by_hand: R with A(R(i)) == i, by step 9's rule ------------------------------------------

INVERSE_WORKED = "(8,4):(4,1)"   # step 9: right_inverse((4,8):(8,1))


def _inverse_parts(shape, stride, *, sort=True, stop=True, index_steps=True):
    """Step 9's rule on A's coalesced modes, with switches for the usual slips: [(size, stride)...] of R."""
    modes = _coalesced_modes(_modes_of(shape, stride))
    before, running = [], 1
    for size, _ in modes:
        before.append(running)
        running *= size
    order = sorted(range(len(modes)), key=lambda i: modes[i][1]) if sort else list(range(len(modes)))
    parts, reached = [], 1
    for i in order:
        size, step = modes[i]
        if step != reached and stop:
            break
        parts.append((size, before[i] if index_steps else step))
        reached = size * step
    return [(s, d) for s, d in parts if s != 1] or [(1, 0)]


def _inverse_cases(rng):
    """Every seed: two and three modes whose strides are a permutation of compact ones (the whole inverse), a
    layout with a hole after its first run, one that never reaches offset 1, and a nested one."""
    def compact(sizes, pad_after=None):
        stride, running = [0] * len(sizes), 1
        for position, mode in enumerate(rng.sample(range(len(sizes)), len(sizes))):
            stride[mode] = running
            running *= sizes[mode]
            if position == pad_after:
                running += rng.randint(1, 3)
        return tuple(stride)

    cases = []
    for kind in ("two modes", "three modes", "a hole", "no offset 1", "nested"):
        while True:
            sizes = tuple(rng.choice([2, 3, 4, 5, 6]) for _ in range(3 if kind in ("three modes", "nested") else 2))
            stride = compact(sizes, pad_after=0 if kind == "a hole" else None)
            if kind == "no offset 1":
                stride = tuple(step * rng.randint(2, 3) for step in stride)
            shape = sizes
            if kind == "nested":
                shape, stride = ((sizes[0], sizes[1]), sizes[2]), ((stride[0], stride[1]), stride[2])
            case = {"kind": kind, "shape": shape, "stride": stride}
            parts = _inverse_parts(shape, stride)
            whole = _product(size for size, _ in parts) == _product(sizes)
            coalesces = len(_coalesced_modes(_modes_of(shape, stride))) < len(sizes)
            fits = {"two modes": whole, "three modes": whole, "nested": whole, "a hole": 1 < len(parts) or
                    _product(size for size, _ in parts) > 1, "no offset 1": True}[kind]
            if fits and not coalesces and (shape, stride) != ((4, 8), (8, 1)) and len(set(stride)) == len(stride):
                cases.append(case)
                break
    return cases


def _ask_inverse(answer, case):
    from cutekit import cute
    got = describe_layout(answer(case["shape"], case["stride"]))
    A = cute.make_layout(case["shape"], stride=case["stride"])
    got["reads"] = [A(index) if 0 <= index < cute.size(A) else None for index in got["offsets"]]
    return got


def _inverse_story(case, got) -> str:
    if got["text"] == INVERSE_WORKED:
        return f"{INVERSE_WORKED} is step 9's worked answer for (4,8):(8,1); this layout is another"
    right = _inverse_parts(case["shape"], case["stride"])
    slips = [
        (dict(index_steps=False), "R's values are indices into A (where in A offset i lives), not A's offsets: a "
                                  "mode of R steps through A's 1-D index"),
        (dict(sort=False), "walk A's modes in order of stride, smallest first (yours follows A's own order)"),
        (dict(stop=False), "a mode whose stride is not the offset reached so far leaves a hole: R ends there"),
    ]
    for switches, story in slips:
        slipped = _inverse_parts(case["shape"], case["stride"], **switches)
        if slipped != right and _offsets_of_parts([slipped]) == got["offsets"]:
            return story
    return ""


def _inverse_reads_back(outcome) -> Verdict | None:
    case, got = outcome.case, outcome.value
    where = f"right_inverse_of({case['shape']}, {case['stride']}) for A = {_layout_text(case['shape'], case['stride'])}"
    for i, (index, offset) in enumerate(zip(got["offsets"], got["reads"])):
        if offset != i:
            story = _inverse_story(case, got)
            what = (f"R({i}) = {index} is not an index of A (A has {_product(_flatten(case['shape']))})"
                    if offset is None else f"A(R({i})) = A({index}) = {offset}, not {i}")
            return failed(f"{where}: {what} (your R: {got['text']})" + (f": {story}" if story else ""))
    return None


def _inverse_reaches(outcome) -> Verdict | None:
    case, got = outcome.case, outcome.value
    right = _offsets_of_parts([_inverse_parts(case["shape"], case["stride"])])
    if got["size"] == len(right):
        return None
    where = f"right_inverse_of({case['shape']}, {case['stride']}) for A = {_layout_text(case['shape'], case['stride'])}"
    if got["size"] < len(right):
        why = f"A covers 0 .. {len(right) - 1} without a hole, so R has {len(right)} elements"
    else:
        why = f"A never reaches offset {len(right)}, so R stops after {len(right)} elements"
    story = _inverse_story(case, got)
    count = f"{got['size']} element" + ("" if got["size"] == 1 else "s")
    return failed(f"{where}: your R {got['text']} has {count}; {why}" + (f": {story}" if story else ""))


RIGHT_INVERSE_BY_HAND = Exercise(
    id="ch01.right_inverse_by_hand",
    statement="Write right_inverse_of(shape, stride): the layout R that cute.right_inverse gives for the "
              "layout of that shape and stride, built by hand with step 9's rule (right_inverse and left_inverse "
              "are switched off).",
    example="right_inverse_of((4, 8), (8, 1)) gives (8,4):(4,1)",
    rule=("R is a right inverse of A when A(R(i)) == i for every i R covers; R covers 0, 1, 2, ... as far as A "
          "reaches without a hole.\n"
          "Take A's modes in order of stride: the first must have stride 1, each next one the stride equal to the "
          "size covered so far; each such mode becomes a mode of R of the same size, stepping through A's 1-D "
          "indices the way that mode does."),
    cases=_inverse_cases,
    ask=_ask_inverse,
    forbidden=("right_inverse", "left_inverse"),
    criteria=(
        Criterion("A(R(i)) == i for every i < size(R)", "reference", 2, each_outcome(_inverse_reads_back)),
        Criterion("R is as long as A covers 0, 1, 2, ... without a hole", "reference", 1,
                  each_outcome(_inverse_reaches)),
        Criterion("real CuTeDSL's right_inverse has your offsets", "cutedsl-cpu", 1,
                  _cutedsl_agrees("right_inverse_offsets_in_cutedsl",
                                  lambda outcome: (outcome.case["shape"], outcome.case["stride"]),
                                  lambda value: str(value["offsets"]))),
    ),
)


# ---- what the CuTeDSL worker calls for the algebra exercises, with `cute` = cutlass.cute -----------------------

def composed_offsets_in_cutedsl(cute, a_shape, a_stride, b_shape, b_stride):
    try:
        composed = cute.composition(cute.make_layout(a_shape, stride=a_stride),
                                    cute.make_layout(b_shape, stride=b_stride))
    except Exception:                   # CuTeDSL refuses while tracing (an MLIRError)
        return "refused"
    return str([composed(index) for index in range(cute.size(composed))])


def complement_offsets_in_cutedsl(cute, shape, stride, n):
    rest = cute.complement(cute.make_layout(shape, stride=stride), n)
    return str([rest(index) for index in range(cute.size(rest))])


def right_inverse_offsets_in_cutedsl(cute, shape, stride):
    inverse = cute.right_inverse(cute.make_layout(shape, stride=stride))
    return str([inverse(index) for index in range(cute.size(inverse))])


EXERCISES += [COMPOSE_BY_HAND, COMPLEMENT_BY_HAND, RIGHT_INVERSE_BY_HAND]
