"""Chapter 02 exercises: thread-value (TV) layouts, which map (thread, value) to a position in a tile.

A TV layout's output is a 1-D index into the tile, and the tile is unfolded column-major: index i is the
coordinate (i % M, i // M) of an (M, N) tile. Every answer is a function of the exercise's parameters and is
asked on cases drawn from the seed; the notebook's worked examples (the seed's ((2,2),(2,3)):((2,12),(1,4))
and the elementwise add's thr (4,32), val (4,4)) are never among them. Reference criteria earn 3 points;
`cutedsl-cpu` earns 1 where real CuTeDSL answers the same question.
"""
from __future__ import annotations

from .common import (case_text, column_major_coordinate, cutedsl_builds_same_layouts, describe_layout,
                     each_outcome, layout_difference)
from .cutedsl import run_in_cutedsl, trace_function
from .grading import Criterion, Exercise, Verdict, failed, passed

THIS_MODULE = __name__


def _random_tv(rng):
    """A bijective TV layout ((p,q),(r,s)) onto an (M, N) tile: the four modes get compact strides in a random
    order (the seed's example is one such order), and M is a divisor of the tile size so the picture is 2-D."""
    sizes = [rng.randint(2, 3) for _ in range(4)]
    order = rng.sample(range(4), 4)          # order[k]: which of the four modes is k-th fastest
    strides, step = [0] * 4, 1
    for mode in order:
        strides[mode] = step
        step *= sizes[mode]
    total = step
    rows = rng.choice([d for d in range(2, total) if total % d == 0 and 2 <= total // d])
    shape = ((sizes[0], sizes[1]), (sizes[2], sizes[3]))
    stride = ((strides[0], strides[1]), (strides[2], strides[3]))
    return shape, stride, (rows, total // rows)


def _is_worked_example(shape, stride) -> bool:
    return (shape, stride) == (((2, 2), (2, 3)), ((2, 12), (1, 4)))


def _tv_cases(rng, count):
    cases = []
    while len(cases) < count:
        shape, stride, tiler = _random_tv(rng)
        if not _is_worked_example(shape, stride):
            cases.append({"shape": shape, "stride": stride, "tiler": tiler})
    return cases


def _layout_offsets(shape, stride, threads, values):
    from cutekit import cute
    layout = cute.make_layout(shape, stride=stride)
    return [[layout((thread, value)) for value in range(values)] for thread in range(threads)]


def _describe_tv(layout) -> dict:
    """A learner's TV layout as plain data: printed form, mode sizes, offset of every (thread, value)."""
    from cutekit import cute
    described = describe_layout(layout)
    if cute.rank(layout) != 2:
        raise ValueError(f"a TV layout has two modes, (threads, values); yours has rank {cute.rank(layout)}: "
                         f"{layout}")
    threads, values = cute.size(layout, mode=[0]), cute.size(layout, mode=[1])
    described.update(threads=threads, values=values,
                     tv_offsets=[[layout((thread, value)) for value in range(values)] for thread in range(threads)])
    return described


# ---- ch02.tv_from_picture -------------------------------------------------------------------------------------

def _picture_cases(rng):
    cases = []
    for case in _tv_cases(rng, 5):
        (p, q), (r, s) = case["shape"]
        rows, columns = case["tiler"]
        owner = [[None] * columns for _ in range(rows)]
        for thread, row in enumerate(_layout_offsets(case["shape"], case["stride"], p * q, r * s)):
            for value, index in enumerate(row):
                m, n = column_major_coordinate(index, rows)
                owner[m][n] = (thread, value)
        cases.append({"owner": tuple(tuple(row) for row in owner), "thread_shape": (p, q), "value_shape": (r, s),
                      "_stride": case["stride"]})
    return cases


def _picture_text(case) -> str:
    (p, q), (r, s) = case["thread_shape"], case["value_shape"]
    (a, b), (c, d) = case["_stride"]
    return f"(({p},{q}),({r},{s})):(({a},{b}),({c},{d}))"


@each_outcome
def _picture_shape(outcome) -> Verdict | None:
    case, got = outcome.case, outcome.value
    want = f"({case['thread_shape']},{case['value_shape']})".replace(" ", "")
    if got["shape"] != want:
        why = ""
        if got["shape"] == f"({case['value_shape']},{case['thread_shape']})".replace(" ", ""):
            why = " (threads come first: a TV layout is indexed (thread, value))"
        return failed(f"thread_shape={case['thread_shape']}, value_shape={case['value_shape']}: the shape should "
                      f"be {want}, yours is {got['shape']}{why} (your layout: {got['text']})")
    return None


@each_outcome
def _picture_offsets(outcome) -> Verdict | None:
    case, got = outcome.case, outcome.value
    owner = case["owner"]
    rows, columns = len(owner), len(owner[0])
    where = {owner[m][n]: (m, n) for m in range(rows) for n in range(columns)}
    for thread, row in enumerate(got["tv_offsets"]):
        for value, index in enumerate(row):
            m, n = where[(thread, value)]
            want = m + n * rows
            if index != want:
                why = ""
                if index == m * columns + n:
                    why = (" (that is the row-major index m*N + n; the tile is unfolded column-major: "
                           "m + n*M)")
                return layout_difference(f"{rows}x{columns} picture: thread {thread}, value {value} is drawn at "
                                         f"(m, n) = ({m}, {n}), tile index {want}; your layout {got['text']} gives "
                                         f"{index}{why}", got["text"], (thread, value), want, index)
    return None


TV_FROM_PICTURE = Exercise(
    id="ch02.tv_from_picture",
    statement="Write tv_from_picture(owner, thread_shape, value_shape): owner[m][n] = (thread, value) says who "
              "holds tile element (m, n); return the TV layout, shape (thread_shape, value_shape), that maps "
              "(thread, value) to the column-major tile index m + n*M.",
    example="the seed's 4x6 picture with thread_shape (2,2), value_shape (2,3) gives ((2,2),(2,3)):((2,12),(1,4))",
    cases=_picture_cases,
    ask=lambda answer, case: _describe_tv(answer(case["owner"], case["thread_shape"], case["value_shape"])),
    criteria=(
        Criterion("the shape is (thread_shape, value_shape): threads first", "reference", 1, _picture_shape),
        Criterion("every (thread, value) maps to the column-major index of the cell drawn for it", "reference", 2,
                  _picture_offsets),
        Criterion("real CuTeDSL, running your function, builds the same layout", "cutedsl-cpu", 1,
                  cutedsl_builds_same_layouts(
                      lambda case: (case["owner"], case["thread_shape"], case["value_shape"]), _picture_text)),
    ),
)


# ---- ch02.tiler_for ----------------------------------------------------------------------------------------

def _shape_pairs(rng, count):
    """(thread_shape, value_shape) pairs, never the worked example ((4,32),(4,4)), with rows != columns."""
    pairs = []
    while len(pairs) < count:
        threads = (rng.choice([1, 2, 4, 8]), rng.choice([4, 8, 16, 32]))
        values = (rng.choice([1, 2, 4]), rng.choice([2, 4, 8, 16]))
        pair = (threads, values)
        tiler = (threads[0] * values[0], threads[1] * values[1])
        if pair != ((4, 32), (4, 4)) and tiler[0] != tiler[1] and pair not in pairs:
            pairs.append(pair)
    return pairs


def _tiler_cases(rng):
    return [{"thread_shape": threads, "value_shape": values} for threads, values in _shape_pairs(rng, 6)]


def _reference_tiler(case) -> tuple:
    from cutekit import cute
    threads = cute.make_ordered_layout(case["thread_shape"], order=(1, 0))
    values = cute.make_ordered_layout(case["value_shape"], order=(1, 0))
    return tuple(cute.make_layout_tv(threads, values)[0])


def _ask_tiler(answer, case):
    value = answer(case["thread_shape"], case["value_shape"])
    if not (isinstance(value, tuple) and len(value) == 2 and all(isinstance(x, int) for x in value)):
        raise TypeError(f"expected a tuple of two ints (rows, columns), got {value!r}")
    return value


@each_outcome
def _tiler_right(outcome) -> Verdict | None:
    case, got = outcome.case, outcome.value
    want = _reference_tiler(case)
    if got == want:
        return None
    (tm, tn), (vm, vn) = case["thread_shape"], case["value_shape"]
    why = ""
    if got == (want[1], want[0]):
        why = " (rows and columns swapped: the tiler is (M, N) of the tile, rows first)"
    elif got == (vm * vn, tm * tn):
        why = (" (that is (values per thread, threads); the tiler is the tile's extent in the tensor: "
               "rows of threads x rows of values, threads per row x values per row)")
    elif got == (tm, tn):
        why = " (that is the thread grid alone; each thread's values widen it)"
    return failed(f"{case_text(case)}: the tiler is {want}, yours is {got}{why}")


def tiler_in_cutedsl(cute, thread_shape, value_shape):
    threads = cute.make_ordered_layout(thread_shape, order=(1, 0))
    values = cute.make_ordered_layout(value_shape, order=(1, 0))
    return tuple(cute.make_layout_tv(threads, values)[0])


def _cutedsl_tiler(context) -> Verdict:
    reply = run_in_cutedsl(THIS_MODULE, "tiler_in_cutedsl",
                           [(o.case["thread_shape"], o.case["value_shape"]) for o in context.outcomes], with_cute=True)
    if not reply.ok:
        return failed(f"CuTeDSL could not run this check: {reply.error}")
    for outcome, (value, error) in zip(context.outcomes, reply.values):
        if error or value != str(outcome.value):
            return failed(f"{case_text(outcome.case)}: CuTeDSL's make_layout_tv gives the tiler {value or error}, "
                          f"yours is {outcome.value}")
    return passed()


TILER_FOR = Exercise(
    id="ch02.tiler_for",
    statement="Write tiler_for(thread_shape, value_shape): the tiler (rows, columns) that cute.make_layout_tv "
              "returns for row-major thread and value layouts of these shapes (make_layout_tv is switched off).",
    example="tiler_for((4, 32), (4, 4)) is (16, 128)",
    cases=_tiler_cases,
    ask=_ask_tiler,
    forbidden=("make_layout_tv",),
    criteria=(
        Criterion("the tile is (thread rows x value rows, threads per row x values per row)", "reference", 3,
                  _tiler_right),
        Criterion("real CuTeDSL's make_layout_tv gives your tilers", "cutedsl-cpu", 1, _cutedsl_tiler),
    ),
)


# ---- ch02.thread_owns ----------------------------------------------------------------------------------------

def _owns_cases(rng):
    cases = []
    for case in _tv_cases(rng, 3):
        (p, q), _ = case["shape"]
        cases.append({**case, "thread": rng.randrange(1, p * q)})
    from cutekit import cute
    for threads, values in _shape_pairs(rng, 3):
        tiler, tv = cute.make_layout_tv(cute.make_ordered_layout(threads, order=(1, 0)),
                                        cute.make_ordered_layout(values, order=(1, 0)))
        cases.append({"shape": tv.shape, "stride": tv.stride, "tiler": tuple(tiler),
                      "thread": rng.randrange(1, cute.size(tv, mode=[0]))})
    return cases


def _reference_owned(case) -> list:
    from cutekit import cute
    layout = cute.make_layout(case["shape"], stride=case["stride"])
    return [column_major_coordinate(layout((case["thread"], value)), case["tiler"][0])
            for value in range(cute.size(layout, mode=[1]))]


def _ask_owned(answer, case):
    from cutekit import cute
    value = answer(cute.make_layout(case["shape"], stride=case["stride"]), case["tiler"], case["thread"])
    if not isinstance(value, (list, tuple)):
        raise TypeError(f"expected a list of (m, n) coordinates, got {type(value).__name__}: {value!r}")
    return [tuple(item) if isinstance(item, (list, tuple)) else item for item in value]


@each_outcome
def _owned_right(outcome) -> Verdict | None:
    case, got = outcome.case, outcome.value
    want = _reference_owned(case)
    if got == want:
        return None
    layout_text = f"{case['shape']}:{case['stride']}".replace(" ", "")
    where = f"thread {case['thread']} of {layout_text} on a {case['tiler'][0]}x{case['tiler'][1]} tile"
    rows, columns = case["tiler"]
    indices = [m + n * rows for m, n in want]
    why = ""
    if len(got) != len(want):
        why = f" (a thread holds size(tv, mode=[1]) = {len(want)} values)"
    elif got == indices:
        why = " (those are tile indices; unfold each into (m, n) = (i % M, i // M))"
    elif got == [(i // columns, i % columns) for i in indices]:
        why = " (you unfolded the index row-major; CuTe's tile is column-major: (i % M, i // M))"
    elif got == [(n, m) for m, n in want]:
        why = " (each pair is (n, m); rows come first)"
    elif sorted(got) == sorted(want):
        why = " (the right elements in the wrong order: list them by value index 0, 1, 2, ...)"
    return failed(f"{where}: owns {want}, yours is {got}{why}")


def owned_in_cutedsl(cute, shape, stride, tiler, thread):
    layout = cute.make_layout(shape, stride=stride)
    return [tuple(int(x) for x in cute.idx2crd(layout((thread, value)), tiler))
            for value in range(cute.size(layout, mode=[1]))]


def _cutedsl_owned(context) -> Verdict:
    reply = run_in_cutedsl(THIS_MODULE, "owned_in_cutedsl",
                           [(o.case["shape"], o.case["stride"], o.case["tiler"], o.case["thread"])
                            for o in context.outcomes], with_cute=True)
    if not reply.ok:
        return failed(f"CuTeDSL could not run this check: {reply.error}")
    for outcome, (value, error) in zip(context.outcomes, reply.values):
        if error or value != str(outcome.value):
            return failed(f"thread {outcome.case['thread']}: CuTeDSL gives {value or error}, yours is {outcome.value}")
    return passed()


THREAD_OWNS = Exercise(
    id="ch02.thread_owns",
    statement="Write owned_by(tv_layout, tiler, thread): the (m, n) coordinates of the tile elements `thread` "
              "holds, in value order (cute.idx2crd is switched off: unfold the index yourself).",
    example="owned_by(((2,2),(2,3)):((2,12),(1,4)), (4, 6), 1) is [(2, 0), (3, 0), (2, 1), (3, 1), (2, 2), (3, 2)]",
    cases=_owns_cases,
    ask=_ask_owned,
    forbidden=("idx2crd",),
    criteria=(
        Criterion("lists, value by value, the (m, n) of the column-major tile index the layout gives", "reference",
                  3, _owned_right),
        Criterion("real CuTeDSL lists the same coordinates", "cutedsl-cpu", 1, _cutedsl_owned),
    ),
)


# ---- ch02.layout_tv_for_dtype ---------------------------------------------------------------------------------

def _dtype_cases(rng):
    cases, seen = [], set()
    while len(cases) < 6:
        case = (rng.choice([8, 16, 32, 64]), rng.choice([2, 4, 8]), rng.choice([2, 4]))
        if case != (32, 4, 4) and case not in seen:
            seen.add(case)
            cases.append({"bits": case[0], "thread_rows": case[1], "value_rows": case[2]})
    return cases


def _reference_tv_for_dtype(case):
    from cutekit import cute
    threads = cute.make_ordered_layout((case["thread_rows"], 32), order=(1, 0))
    values = cute.make_ordered_layout((case["value_rows"], 128 // case["bits"]), order=(1, 0))
    return cute.make_layout_tv(threads, values)


def _ask_tv_for_dtype(answer, case):
    value = answer(case["bits"], case["thread_rows"], case["value_rows"])
    if not (isinstance(value, tuple) and len(value) == 2):
        raise TypeError(f"expected (tiler, tv_layout), got {value!r}")
    tiler, layout = value
    if not (isinstance(tiler, tuple) and len(tiler) == 2 and all(isinstance(x, int) for x in tiler)):
        raise TypeError(f"expected the tiler as a tuple of two ints, got {tiler!r}")
    return {"tiler": tiler, "tv": _describe_tv(layout), "text": str(value)}


@each_outcome
def _dtype_tiler_right(outcome) -> Verdict | None:
    case, got = outcome.case, outcome.value["tiler"]
    want = tuple(_reference_tv_for_dtype(case)[0])
    if got == want:
        return None
    why = ""
    if got == (case["thread_rows"] * 128 // case["bits"], case["thread_rows"] * 32):
        why = (" (that is the seed's formula (rows x 128//width, threads); the rows are thread rows x value "
               "rows, the columns 32 threads x 128//width values)")
    elif got == (want[1], want[0]):
        why = " (rows and columns swapped)"
    return failed(f"{case_text(case)}: the tiler is {want}, yours is {got}{why}")


@each_outcome
def _dtype_tv_right(outcome) -> Verdict | None:
    case, got = outcome.case, outcome.value["tv"]
    _, want_layout = _reference_tv_for_dtype(case)
    want = _describe_tv(want_layout)
    if (got["threads"], got["values"]) != (want["threads"], want["values"]):
        return failed(f"{case_text(case)}: the TV layout has {want['threads']} threads of {want['values']} "
                      f"values each ({want['text']}); yours has {got['threads']} of {got['values']} "
                      f"({got['text']})")
    for thread, row in enumerate(want["tv_offsets"]):
        for value, index in enumerate(row):
            if got["tv_offsets"][thread][value] != index:
                rows = case["thread_rows"] * case["value_rows"]
                return failed(f"{case_text(case)}: (thread {thread}, value {value}) is tile element "
                              f"{column_major_coordinate(index, rows)}, index {index}; your layout {got['text']} "
                              f"gives {got['tv_offsets'][thread][value]} (make_layout_tv gives {want['text']})")
    return None


def _cutedsl_runs_your_function(context) -> Verdict:
    """Real CuTeDSL runs the learner's own function; it must build what the reference run built."""
    cases = [outcome.case for outcome in context.outcomes]
    reply = trace_function(context.answer, [(c["bits"], c["thread_rows"], c["value_rows"]) for c in cases])
    if not reply.ok:
        return failed(f"CuTeDSL could not run your function: {reply.error}")
    for outcome, (value, error) in zip(context.outcomes, reply.values):
        if error:
            return failed(f"{case_text(outcome.case)}: under CuTeDSL your function raised {error}")
        if value != outcome.value["text"]:
            return failed(f"{case_text(outcome.case)}: under CuTeDSL your function returned {value}, under "
                          f"cutekit {outcome.value['text']}")
    return passed()


LAYOUT_TV_FOR_DTYPE = Exercise(
    id="ch02.layout_tv_for_dtype",
    statement="Write elementwise_tv(bits, thread_rows, value_rows): by hand (make_layout_tv is switched off), the "
              "(tiler, tv_layout) that make_layout_tv gives for row-major threads (thread_rows, 32) and row-major "
              "values (value_rows, 128 // bits): every row of values one 128-bit access.",
    example="elementwise_tv(32, 4, 4) is ((16, 128), ((32,4),(4,4)):((64,4),(16,1)))",
    cases=_dtype_cases,
    ask=_ask_tv_for_dtype,
    forbidden=("make_layout_tv",),
    criteria=(
        Criterion("the tiler is (thread_rows x value_rows, 32 x 128//bits)", "reference", 1, _dtype_tiler_right),
        Criterion("every (thread, value) lands on the tile element make_layout_tv gives it", "reference", 2,
                  _dtype_tv_right),
        Criterion("real CuTeDSL, running your function, builds the same tiler and layout", "cutedsl-cpu", 1,
                  _cutedsl_runs_your_function),
    ),
)


EXERCISES = [TV_FROM_PICTURE, TILER_FOR, THREAD_OWNS, LAYOUT_TV_FOR_DTYPE]
