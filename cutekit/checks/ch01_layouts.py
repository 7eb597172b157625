"""Chapter 01 exercises: layouts as functions from coordinates to offsets.

Every answer is a function of the exercise's parameters, asked on cases drawn from the seed, so an answer
tuned to the notebook's worked example meets other shapes. Each exercise earns 3 points on the reference
tier (cutekit.cute) and 1 on `cutedsl-cpu`, where real CuTeDSL confirms the same answers in a subprocess.
The `*_in_cutedsl(cute, ...)` functions at the bottom are what the CuTeDSL worker calls, with `cutlass.cute`.
"""
from __future__ import annotations

from .common import (case_text, column_major_coordinate, cutedsl_builds_same_layouts, describe_layout,
                     each_outcome, layout_difference)
from .cutedsl import cutedsl_agrees
from .grading import Criterion, Exercise, Verdict, failed, passed

THIS_MODULE = __name__


def _same_layout_shape(expected_shape, pick=lambda value: value):
    """Criterion: the learner's layout (`pick(value)`) has the shape `expected_shape(case)` prints."""
    @each_outcome
    def judge(outcome) -> Verdict | None:
        want, got = expected_shape(outcome.case), pick(outcome.value)
        if got["shape"] != want:
            return failed(f"{case_text(outcome.case)}: the shape should be {want}, yours is {got['shape']} "
                          f"(your layout: {got['text']})")
        return None
    return judge


def _same_offsets(expected_offset, rows):
    """Criterion: every 1-D index lands where `expected_offset(case, m, n)` says; the hint names the first
    that does not."""
    @each_outcome
    def judge(outcome) -> Verdict | None:
        case, got = outcome.case, outcome.value
        size = case["M"] * case["N"] if "M" in case else len(case["grid"]) * len(case["grid"][0])
        if got["size"] != size:
            return failed(f"{case_text(case)}: your layout has {got['size']} elements, the grid has {size} "
                          f"(your layout: {got['text']})")
        for index, offset in enumerate(got["offsets"]):
            m, n = column_major_coordinate(index, rows(case))
            want = expected_offset(case, m, n)
            if offset != want:
                return layout_difference(f"{case_text(case)}: element (m, n) = ({m}, {n}) belongs at offset {want}; "
                                         f"your layout {got['text']} puts it at {offset}",
                                         got["text"], (m, n), want, offset)
        return None
    return judge


def _cutedsl_agrees(function: str, arguments, learner_text) -> "callable":
    """Criterion: real CuTeDSL, asked each case's question (`arguments(outcome)`), gives the learner's answer."""
    return cutedsl_agrees(THIS_MODULE, function, arguments, learner_text, case_text)


def _distinct_sides(rng, count, low=2, high=12):
    """`count` (M, N) pairs with M != N (so a transposed answer shows) and never the worked example (4, 8)."""
    pairs = []
    while len(pairs) < count:
        pair = (rng.randint(low, high), rng.randint(low, high))
        if pair[0] != pair[1] and pair != (4, 8) and pair not in pairs:
            pairs.append(pair)
    return pairs


# ---- ch01.layout_from_grid ------------------------------------------------------------------------------------

def _grid_cases(rng):
    return [{"M": m, "N": n} for m, n in _distinct_sides(rng, 5)]


LAYOUT_FROM_GRID = Exercise(
    id="ch01.layout_from_grid",
    statement="Write layout_for(M, N): the layout of an M x N row-major grid, element (m, n) at offset m*N + n.",
    example="layout_for(4, 8) prints (4,8):(8,1)",
    cases=_grid_cases,
    ask=lambda answer, case: describe_layout(answer(case["M"], case["N"])),
    criteria=(
        Criterion("returns a layout of shape (M, N)", "reference", 1,
                  _same_layout_shape(lambda case: f"({case['M']},{case['N']})")),
        Criterion("element (m, n) lands at offset m*N + n, for every (m, n)", "reference", 2,
                  _same_offsets(lambda case, m, n: m * case["N"] + n, rows=lambda case: case["M"])),
        Criterion("real CuTeDSL, running your function, builds the same layout", "cutedsl-cpu", 1,
                  cutedsl_builds_same_layouts(lambda case: (case["M"], case["N"]),
                                              lambda case: f"({case['M']},{case['N']}):({case['N']},1)")),
    ),
)


# ---- ch01.layout_from_picture -------------------------------------------------------------------------------

def _picture_cases(rng):
    """Pictures of row-major, column-major and padded grids, and grids with arbitrary steps."""
    cases = []
    for kind, (m, n) in zip(["row", "column", "padded rows", "padded columns", "any"], _distinct_sides(rng, 5, 2, 7)):
        pad = rng.randint(1, 3)
        down, across = {"row": (n, 1), "column": (1, m), "padded rows": (n + pad, 1), "padded columns": (1, m + pad),
                        "any": (rng.randint(2, 9), rng.randint(2, 9))}[kind]
        cases.append({"grid": tuple(tuple(row * down + column * across for column in range(n)) for row in range(m)),
                      "_strides": (down, across)})
    return cases


def _picture_text(case) -> str:
    rows, columns = len(case["grid"]), len(case["grid"][0])
    return f"({rows},{columns}):({case['_strides'][0]},{case['_strides'][1]})"


LAYOUT_FROM_PICTURE = Exercise(
    id="ch01.layout_from_picture",
    statement="Write layout_from_picture(grid): grid[m][n] is the offset drawn at row m, column n; "
              "return the layout that draws it.",
    example="layout_from_picture(((0, 1, 2), (3, 4, 5))) prints (2,3):(3,1)",
    cases=_picture_cases,
    ask=lambda answer, case: describe_layout(answer(case["grid"])),
    criteria=(
        Criterion("the shape is (rows, columns) of the picture", "reference", 1,
                  _same_layout_shape(lambda case: f"({len(case['grid'])},{len(case['grid'][0])})")),
        Criterion("every cell of the picture gets its drawn offset", "reference", 2,
                  _same_offsets(lambda case, m, n: case["grid"][m][n], rows=lambda case: len(case["grid"]))),
        Criterion("real CuTeDSL, running your function, builds the same layout", "cutedsl-cpu", 1,
                  cutedsl_builds_same_layouts(lambda case: (case["grid"],), _picture_text)),
    ),
)


# ---- ch01.index_of_coordinate ---------------------------------------------------------------------------------

def _nested_layout(rng):
    """A rank-2 layout whose second mode is nested, e.g. (4,(2,3)):(2,(1,8)), with distinct strides."""
    shape = (rng.randint(2, 4), (rng.randint(2, 3), rng.randint(2, 4)))
    strides = rng.sample(range(1, 24), 3)
    return shape, (strides[0], (strides[1], strides[2]))


def _index_cases(rng):
    cases = []
    for _ in range(4):
        shape, stride = _nested_layout(rng)
        rows, (inner, outer) = shape
        size = rows * inner * outer
        m, i, j = rng.randrange(rows), rng.randrange(inner), rng.randrange(outer)
        cases += [
            {"kind": "flat", "shape": shape, "stride": stride, "coordinate": (m, rng.randrange(1, inner * outer))},
            {"kind": "1-D", "shape": shape, "stride": stride, "coordinate": rng.randrange(1, size)},
            {"kind": "nested", "shape": shape, "stride": stride, "coordinate": (m, (i, j))},
        ]
    return cases


def _reference_index(case) -> int:
    from cutekit import cute
    return cute.make_layout(case["shape"], stride=case["stride"])(case["coordinate"])


def _ask_index(answer, case):
    value = answer(case["shape"], case["stride"], case["coordinate"])
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"expected an int, got {type(value).__name__}: {value!r}")
    return value


def _row_major_index(case) -> int:
    """The offset a learner gets by unfolding a 1-D index row-major (the last mode fastest): the usual slip."""
    rows, (inner, outer) = case["shape"]
    flat_shape, flat_stride = (rows, inner, outer), (case["stride"][0], *case["stride"][1])
    index, offset = case["coordinate"], 0
    for extent, step in reversed(list(zip(flat_shape, flat_stride))):
        offset += (index % extent) * step
        index //= extent
    return offset


def _index_criterion(kind: str):
    def judge(context) -> Verdict:
        for outcome in context.outcomes:
            case = outcome.case
            if case["kind"] != kind:
                continue
            where = f"index_of({case['shape']}, {case['stride']}, {case['coordinate']})"
            if outcome.error:
                return failed(f"{where}: {outcome.error}")
            want = _reference_index(case)
            if outcome.value != want:
                why = ""
                if kind == "1-D" and outcome.value == _row_major_index(case):
                    why = " (you unfolded the 1-D index row-major; CuTe unfolds it column-major, the first mode fastest)"
                elif kind == "flat":
                    why = " (a flat coordinate's second entry is a 1-D index into the nested mode (2,3): unfold it there)"
                return failed(f"{where} should be {want}, yours is {outcome.value}{why}")
        return passed()
    return judge


INDEX_OF_COORDINATE = Exercise(
    id="ch01.index_of_coordinate",
    statement="Write index_of(shape, stride, coordinate) by hand: the offset a layout gives a 1-D, flat or nested "
              "coordinate (cute.make_layout and cute.Layout are switched off while it is checked).",
    example="index_of((4,(2,3)), (2,(1,8)), (1,(1,2))) is 19",
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
    """Layouts where modes merge, where size-1 modes must go, and nested ones that must flatten."""
    def merging():
        first, second = rng.randint(2, 4), rng.randint(2, 4)
        step = rng.choice([1, 2])
        third_stride = first * second * step + rng.choice([0, 1])  # sometimes merges, sometimes not
        return (first, second, 2), (step, first * step, third_stride)

    def with_ones():
        extent = rng.randint(2, 6)
        return (1, extent, 1, 2), (rng.randint(1, 9), 1, rng.randint(1, 9), extent)

    def nested():
        inner = rng.randint(2, 4)
        return ((2, inner), rng.randint(2, 3)), ((1, 2), 2 * inner)

    def separate(equal):  # no merge possible: strides out of order, or equal (the same offsets twice)
        first, step = rng.randint(2, 4), rng.randint(1, 4)
        return (first, 3), ((step, step) if equal else (3 * step, step))
    cases = [merging(), merging(), with_ones(), with_ones(), nested(), nested(), separate(False), separate(True)]
    return [{"kind": kind, "shape": shape, "stride": stride} for kind, (shape, stride) in
            zip(["merge", "merge", "ones", "ones", "nested", "nested", "merge", "merge"], cases)]


def _reference_coalesce(case) -> str:
    from cutekit import cute
    return str(cute.coalesce(cute.make_layout(case["shape"], stride=case["stride"])))


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
                from cutekit import cute
                same = outcome.value["offsets"] == describe_layout(cute.make_layout(case["shape"],
                                                                                    stride=case["stride"]))["offsets"]
                why = (" (same offsets, so nothing is lost, but it is not as short as it can be)" if same else
                       " (the offsets differ from the original layout: a merge that should not happen?)")
                return failed(f"{where} should be {want}, yours is {got}{why}")
        return passed()
    return judge


COALESCE_BY_HAND = Exercise(
    id="ch01.coalesce_by_hand",
    statement="Write coalesced(shape, stride): the layout cute.coalesce gives, built by hand with cute.make_layout "
              "(cute.coalesce is switched off while it is checked).",
    example="coalesced((2,(1,6)), (1,(6,2))) prints 12:1",
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


# ---- ch01.transpose_by_composition ----------------------------------------------------------------------------

def _ask_transposer(answer, case):
    from cutekit import cute
    b = answer(case["M"], case["N"])
    described = describe_layout(b)
    a = cute.make_layout((case["M"], case["N"]), stride=(case["N"], 1))
    try:
        composed, problem = describe_layout(cute.composition(a, b)), ""
    except Exception as error:  # judged by the composition criterion; B's shape is still graded
        composed, problem = None, f"cute.composition(A, your B = {b}) failed: {type(error).__name__}: {error}"
    return {"b": described, "composed": composed, "composition_error": problem}


@each_outcome
def _transposed_offsets(outcome) -> Verdict | None:
    case, composed = outcome.case, outcome.value["composed"]
    if composed is None:
        return failed(f"{case_text(case)}: {outcome.value['composition_error']}")
    m_rows, n_columns = case["M"], case["N"]
    if composed["size"] != m_rows * n_columns:
        return failed(f"{case_text(case)}: composition(A, B) = {composed['text']} has {composed['size']} "
                      f"elements, A has {m_rows * n_columns}")
    for index, offset in enumerate(composed["offsets"]):
        n, m = column_major_coordinate(index, n_columns)   # the transpose is indexed (n, m)
        want = m * n_columns + n
        if offset != want:
            return layout_difference(f"{case_text(case)}: composition(A, B) at (n, m) = ({n}, {m}) should read "
                                     f"A's (m, n) = ({m}, {n}), offset {want}; with your B = "
                                     f"{outcome.value['b']['text']} it reads offset {offset} (composition(A, B) = "
                                     f"{composed['text']})", composed["text"], (n, m), want, offset)
    return None


TRANSPOSE_BY_COMPOSITION = Exercise(
    id="ch01.transpose_by_composition",
    statement="Write transposer(M, N): the layout B for which cute.composition(A, B), with A = (M,N):(N,1), "
              "is A's transpose (N, M) view.",
    example="for M, N = 4, 8, composition(A, B) prints (8,4):(1,8)",
    cases=_grid_cases,
    ask=_ask_transposer,
    criteria=(
        Criterion("B has shape (N, M)", "reference", 1,
                  _same_layout_shape(lambda case: f"({case['N']},{case['M']})", pick=lambda value: value["b"])),
        Criterion("composition(A, B) at (n, m) reads A at (m, n), for every element", "reference", 2,
                  _transposed_offsets),
        Criterion("real CuTeDSL composes A with your B to the same layout", "cutedsl-cpu", 1,
                  _cutedsl_agrees("compose_in_cutedsl",
                                  lambda outcome: ((outcome.case["M"], outcome.case["N"]), (outcome.case["N"], 1),
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
