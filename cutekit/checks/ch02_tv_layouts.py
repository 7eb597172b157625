"""Chapter 02 exercises: thread-value (TV) layouts, which map (thread, value) to a position in a tile.

A TV layout's output is a 1-D index into the tile, and the tile is unfolded column-major: index i is the
coordinate (i % M, i // M) of an (M, N) tile. Every answer is a function of the exercise's parameters and is
asked on random cases; the notebook's worked examples (the blog's ((2,2),(2,3)):((2,12),(1,4)), the
elementwise add's threads (4,32) with values (4,4), exercise 2's (8,16) with (2,4), exercise 4's
elementwise_tv(16, 2, 4)) are never among them. Reference criteria earn 3 points; `cutedsl-cpu` earns 1 where
real CuTeDSL answers the same question.

Hints: each exercise keeps a table of the mistakes learners make (`_*_MISTAKES`: what the mistake gives for a
case, and the words that name it). When the learner's answers are, on every case, exactly what one mistake
gives, the hint names that mistake; otherwise it names the first case and element that differ.
"""
from __future__ import annotations

import numpy

from .common import case_text, column_major_coordinate, cutedsl_builds_same_layouts, layout_difference
from .cutedsl import run_in_cutedsl, trace_function
from .grading import Criterion, Exercise, Verdict, failed, passed

THIS_MODULE = __name__


def _named_mistake(context, key, mistakes) -> str:
    """The words of the first mistake in `mistakes` ((gives(case), words) pairs) that gives exactly the
    learner's `key(outcome)` on every case; "" when no case raised and none does, or when one raised."""
    if any(outcome.error for outcome in context.outcomes):
        return ""
    for gives, words in mistakes:
        try:
            if all(key(outcome) == gives(outcome.case) for outcome in context.outcomes):
                return words
        except Exception:  # a mistake that cannot be made on some case does not explain the answer
            continue
    return ""


def _flat(shape, stride):
    if isinstance(shape, tuple):
        pairs = []
        for sub_shape, sub_stride in zip(shape, stride):
            pairs += _flat(sub_shape, sub_stride)
        return pairs
    return [(shape, stride)]


def _offsets(layout) -> numpy.ndarray:
    """Offset of every 1-D index of a cutekit layout (colexicographic order, as CuTe unfolds), with NumPy."""
    index = numpy.arange(int(numpy.prod([size for size, _ in _flat(layout.shape, layout.stride)])))
    offsets, step = numpy.zeros_like(index), 1
    for size, stride in _flat(layout.shape, layout.stride):
        offsets += (index // step) % size * stride
        step *= size
    return offsets


def _layout_text(shape, stride) -> str:
    from cutekit import cute
    return str(cute.make_layout(shape, stride=stride))


def _random_tv(rng, order=None):
    """A bijective TV layout ((p,q),(r,s)) onto an (M, N) tile: the four modes get compact strides in a random
    order (the blog's example is one such order), and M is a divisor of the tile size so the picture is 2-D."""
    sizes = [rng.randint(2, 3) for _ in range(4)]
    order = rng.sample(range(4), 4) if order is None else order   # order[k]: the k-th fastest of the four modes
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


# mode orders (fastest first) in which a mode's second stride is not its first times its first size: the
# threads' sub-modes apart (thread 0's, then the values', then thread 1's), and the values' apart
SPLIT_ORDERS = ((0, 2, 1, 3), (2, 0, 3, 1), (0, 2, 3, 1), (2, 0, 1, 3))


def _tv_cases(rng, count):
    """`count` random TV layouts; the first is one whose thread and value sub-modes are both split, so that
    "one equal step per mode" is wrong for threads and for values on every seed."""
    cases = []
    while len(cases) < count:
        shape, stride, tiler = _random_tv(rng, rng.choice(SPLIT_ORDERS) if not cases else None)
        if not _is_worked_example(shape, stride):
            cases.append({"shape": shape, "stride": stride, "tiler": tiler})
    return cases


def _layout_offsets(shape, stride, threads, values):
    from cutekit import cute
    layout = cute.make_layout(shape, stride=stride)
    return [[layout((thread, value)) for value in range(values)] for thread in range(threads)]


def _describe_tv(layout) -> dict:
    """A learner's TV layout as plain data: printed form, shape part, mode sizes, offset of every
    (thread, value) as rows of values (computed with NumPy: an fp8 tile has 16384 elements)."""
    from cutekit import cute
    if not isinstance(layout, cute.Layout):
        raise TypeError(f"expected a layout made with cute.make_layout(...), got {type(layout).__name__}: {layout!r}")
    text = str(layout)
    described = {"text": text, "shape": text.split(":", 1)[0], "rank": cute.rank(layout)}
    if cute.rank(layout) != 2:
        described.update(threads=cute.size(layout), values=0, tv_offsets=None)
        return described
    threads, values = cute.size(layout, mode=[0]), cute.size(layout, mode=[1])
    described.update(threads=threads, values=values,
                     tv_offsets=_offsets(layout).reshape(values, threads).T.tolist())
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
    return _layout_text((case["thread_shape"], case["value_shape"]), case["_stride"])


def _picture_with(strides):
    """A mistake's TV layout text for a picture case: `strides(thread_strides, value_strides, case)` gives the
    (shape, stride) the mistake builds from the right strides."""
    def gives(case):
        shape, stride = strides(case["_stride"][0], case["_stride"][1], case)
        return _layout_text(shape, stride)
    return gives


def _row_major_strides(thread_strides, value_strides, case):
    rows, columns = len(case["owner"]), len(case["owner"][0])
    moved = tuple(tuple((i % rows) * columns + i // rows for i in part) for part in (thread_strides, value_strides))
    return (case["thread_shape"], case["value_shape"]), moved


TV_FROM_PICTURE_MISTAKES = (
    (_picture_with(lambda t, v, c: ((c["value_shape"], c["thread_shape"]), (v, t))),
     "your layout is (value, thread): threads come first, a TV layout is indexed (thread, value)"),
    (_picture_with(lambda t, v, c: (c["value_shape"], v)),
     "you returned only the value layout (one thread's values); a TV layout has two modes, "
     "(thread mode, value mode)"),
    (lambda case: "((2,2),(2,3)):((2,12),(1,4))",
     "you return the worked example's layout ((2,2),(2,3)):((2,12),(1,4)) for every picture; read the "
     "strides off each picture"),
    (_picture_with(_row_major_strides),
     "your strides are row-major tile indices m*N + n; the tile is unfolded column-major: m + n*M"),
    (_picture_with(lambda t, v, c: ((c["thread_shape"], c["value_shape"]), ((t[0], c["thread_shape"][0] * t[0]), v))),
     "the thread mode's second stride is not thread_shape[0] x its first: thread p = thread_shape[0] starts "
     "wherever the picture draws its value 0, read that cell's index"),
    (_picture_with(lambda t, v, c: ((c["thread_shape"], c["value_shape"]), (t, (v[0], c["value_shape"][0] * v[0])))),
     "the value mode's second stride is not value_shape[0] x its first: thread 0's value r = value_shape[0] "
     "sits wherever the picture draws it, read that cell's index"),
    (_picture_with(lambda t, v, c: ((c["thread_shape"], c["value_shape"]), (t, (v[1], v[0])))),
     "the value mode's strides are swapped: its first stride goes from value 0 to value 1, its second from "
     "value 0 to value value_shape[0]"),
    (_picture_with(lambda t, v, c: ((c["thread_shape"], c["value_shape"]), ((t[1], t[0]), v))),
     "the thread mode's strides are swapped: its first stride goes from thread 0 to thread 1, its second from "
     "thread 0 to thread thread_shape[0]"),
)


def _picture_mistake(context) -> str:
    return _named_mistake(context, lambda outcome: outcome.value["text"], TV_FROM_PICTURE_MISTAKES)


def _picture_shape(context) -> Verdict:
    for outcome in context.outcomes:
        if outcome.error:
            return failed(f"{case_text(outcome.case)}: {outcome.error}")
    for outcome in context.outcomes:
        case, got = outcome.case, outcome.value
        want = f"({case['thread_shape']},{case['value_shape']})".replace(" ", "")
        if got["shape"] != want:
            why = _picture_mistake(context)
            return failed(f"thread_shape={case['thread_shape']}, value_shape={case['value_shape']}: the shape "
                          f"should be {want}, yours is {got['shape']} (your layout: {got['text']})"
                          + (f": {why}" if why else ""))
    return passed()


def _picture_offsets(context) -> Verdict:
    for outcome in context.outcomes:
        if outcome.error:
            return failed(f"{case_text(outcome.case)}: {outcome.error}")
    for outcome in context.outcomes:
        case, got = outcome.case, outcome.value
        owner = case["owner"]
        rows, columns = len(owner), len(owner[0])
        where = {owner[m][n]: (m, n) for m in range(rows) for n in range(columns)}
        offsets = got["tv_offsets"]
        for (thread, value), (m, n) in sorted(where.items()):
            want = m + n * rows
            index = (offsets[thread][value] if offsets is not None and thread < len(offsets)
                     and value < len(offsets[thread]) else None)
            if index != want:
                why = _picture_mistake(context)
                text = (f"{rows}x{columns} picture: thread {thread}, value {value} is drawn at (m, n) = ({m}, {n}), "
                        f"tile index {want}; your layout {got['text']} "
                        + (f"gives {index}" if index is not None else "has no such (thread, value)")
                        + (f": {why}" if why else ""))
                if index is None:
                    return failed(text)
                return layout_difference(text, got["text"], (thread, value), want, index)
    return passed()


TV_FROM_PICTURE = Exercise(
    id="ch02.tv_from_picture",
    statement="Write tv_from_picture(owner, thread_shape, value_shape): owner[m][n] = (thread, value) says who "
              "holds tile element (m, n); return the TV layout, shape (thread_shape, value_shape), that maps "
              "(thread, value) to the column-major tile index m + n*M.",
    example="the blog's 4x6 picture with thread_shape (2,2), value_shape (2,3) gives ((2,2),(2,3)):((2,12),(1,4))",
    rule=("A TV layout maps (thread, value) to the tile's column-major index: m + n*M for element (m, n) of an "
          "M-row tile.\n"
          "Each stride is how far that index moves when one sub-mode of thread or value grows by one: find in the "
          "picture where that (thread, value) is drawn, relative to (thread 0, value 0)."),
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

WORKED_SHAPE_PAIRS = (((4, 32), (4, 4)), ((8, 16), (2, 4)))
WORKED_TILER_LAYOUTS = ((((2, 4), 8), ((32, 8), 1)), ((2, 4), (1, 2)))     # the statement's example


def _shape_pairs(rng, count):
    """(thread_shape, value_shape) pairs, never a worked example, with rows != columns in the tile. The first
    has values in more than one row and more than one column, and thread rows != values per row."""
    pairs = []
    while len(pairs) < count:
        threads = (rng.choice([1, 2, 4, 8]), rng.choice([4, 8, 16, 32]))
        values = (rng.choice([1, 2, 4]), rng.choice([2, 4, 8, 16]))
        pair = (threads, values)
        tiler = (threads[0] * values[0], threads[1] * values[1])
        if not pairs and (values[0] == 1 or threads[0] == values[1] or threads[0] == 1):
            continue
        if pair not in WORKED_SHAPE_PAIRS and tiler[0] != tiler[1] and pair not in pairs:
            pairs.append(pair)
    return pairs


def _leaves(shape):
    return [x for part in shape for x in (_leaves(part) if isinstance(part, tuple) else [part])]


def _compact(shape, order):
    """Compact strides for the (nested, two-mode) `shape`: its leaves numbered fastest first in `order`."""
    leaves = _leaves(shape)
    steps, step = [0] * len(leaves), 1
    for index in order:
        steps[index] = step
        step *= leaves[index]
    it = iter(steps)
    return tuple(tuple(next(it) for _ in part) if isinstance(part, tuple) else next(it) for part in shape)


def _drawn_layout(rng, kind, sizes):
    """A two-mode compact layout: "row" row-major, "column" column-major, "nested rows" / "nested columns" with
    that mode split in two and its leaves numbered in a random order."""
    rows, columns = sizes
    if kind == "nested rows" and rows >= 4:
        shape = ((2, rows // 2), columns)
    elif kind == "nested columns" and columns >= 4:
        shape = (rows, (2, columns // 2))
    else:
        shape = (rows, columns)
    count = len(_leaves(shape))
    if kind == "row":
        order = list(range(count))[::-1]
    elif kind == "column":
        order = list(range(count))
    else:
        order = list(range(count))
        rng.shuffle(order)
    return shape, _compact(shape, order)


def _tiler_cases(rng):
    """Six (thread layout, value layout) pairs as (shape, stride): row-major, column-major and nested modes in
    both, some value modes of size 1; at most 256 threads; the tile's rows != columns; never the statement's
    example. On every seed: a column-major thread layout, a nested thread mode, a nested value mode."""
    kinds = [("column", "row"), ("nested rows", "column"), ("row", "nested columns"), ("nested columns", "row"),
             ("column", "column"), ("row", "row")]
    while True:
        cases = []
        for thread_kind, value_kind in kinds:
            while True:
                threads = (rng.choice([2, 4, 8]), rng.choice([4, 8, 16]))
                values = (rng.choice([1, 2, 4]), rng.choice([2, 4, 8]))
                t = _drawn_layout(rng, thread_kind, threads)
                v = _drawn_layout(rng, value_kind, values)
                case = {"threads": t, "values": v}
                tiler = (threads[0] * values[0], threads[1] * values[1])
                nested = [kind.startswith("nested") == (len(_leaves(layout[0])) == 3)
                          for kind, layout in ((thread_kind, t), (value_kind, v))]
                if (all(nested) and tiler[0] != tiler[1] and threads[0] != threads[1]
                        and (t, v) != WORKED_TILER_LAYOUTS):
                    break
            cases.append(case)
        if len({str(case) for case in cases}) == len(cases):
            return cases


def _layouts(case):
    from cutekit import cute
    (ts, tst), (vs, vst) = case["threads"], case["values"]
    return cute.make_layout(ts, stride=tst), cute.make_layout(vs, stride=vst)


def _reference_tiler(case) -> tuple:
    from cutekit import cute
    return tuple(cute.make_layout_tv(*_layouts(case))[0])


def _ask_tiler(answer, case):
    value = answer(*_layouts(case))
    if not (isinstance(value, tuple) and len(value) == 2 and all(isinstance(x, int) for x in value)):
        raise TypeError(f"expected a tuple of two ints (rows, columns), got {value!r}")
    return value


def _mode_sizes(layout_spec):
    """(size of mode 0, size of mode 1) of a (shape, stride) pair."""
    out = []
    for part in layout_spec[0]:
        size = 1
        for leaf in (_leaves(part) if isinstance(part, tuple) else [part]):
            size *= leaf
        out.append(size)
    return tuple(out)


def _first_leaves(layout_spec):
    """The first two numbers of the flattened shape."""
    leaves = _leaves(layout_spec[0])
    return leaves[0], leaves[1]


def _by_stride_order(layout_spec):
    """Mode sizes, put in (rows, columns) by stride: the mode whose first stride is 1 taken as the columns."""
    (rows, columns), (s0, s1) = _mode_sizes(layout_spec), layout_spec[1]
    first = lambda s: _leaves((s,))[0] if isinstance(s, tuple) else s
    return (columns, rows) if first(s0) < first(s1) else (rows, columns)


def _tiler_mistake(thread_part, value_part, combine, words):
    def gives(case):
        (tm, tn), (vm, vn) = thread_part(case["threads"]), value_part(case["values"])
        return combine(tm, tn, vm, vn)
    return gives, words


_TIMES = lambda tm, tn, vm, vn: (tm * vm, tn * vn)

TILER_FOR_MISTAKES = (
    _tiler_mistake(_mode_sizes, _mode_sizes, lambda tm, tn, vm, vn: (tn * vn, tm * vm),
                   "rows and columns swapped: the tiler is (M, N) of the tile, rows first"),
    _tiler_mistake(_by_stride_order, _by_stride_order, _TIMES,
                   "you took the mode with the smaller stride as the columns; mode 0 of each layout is the rows and "
                   "mode 1 the columns, whatever the strides: strides only number the threads (or values) in that "
                   "grid"),
    _tiler_mistake(_first_leaves, _first_leaves, _TIMES,
                   "you took the first two numbers of the flattened shape; a nested mode such as (2,4) is one mode, "
                   "its extent is the product of its sizes"),
    _tiler_mistake(_mode_sizes, _mode_sizes, lambda tm, tn, vm, vn: (vm * vn, tm * tn),
                   "that is (values per thread, threads); the tiler is the tile's extent in the tensor, mode by "
                   "mode: the thread grid's extent times the value block's"),
    _tiler_mistake(_mode_sizes, _mode_sizes, lambda tm, tn, vm, vn: (tm, tn),
                   "that is the thread grid alone; each thread's values widen it"),
    _tiler_mistake(_mode_sizes, _mode_sizes, lambda tm, tn, vm, vn: (vm, vn),
                   "that is one thread's value block; the threads' grid repeats it"),
    _tiler_mistake(_mode_sizes, _mode_sizes, lambda tm, tn, vm, vn: (tm + vm, tn + vn),
                   "you added the sizes; each thread's block repeats over the grid, so multiply them"),
    (lambda case: (16, 32), "you return (16, 32), the example's tiler, whatever the layouts"),
)


def _tiler_right(context) -> Verdict:
    for outcome in context.outcomes:
        if outcome.error:
            return failed(f"{case_text(outcome.case)}: {outcome.error}")
    for outcome in context.outcomes:
        want = _reference_tiler(outcome.case)
        if outcome.value != want:
            why = _named_mistake(context, lambda o: o.value, TILER_FOR_MISTAKES)
            return failed(f"{case_text(outcome.case)}: the tiler is {want}, yours is {outcome.value}"
                          + (f" ({why})" if why else ""))
    return passed()


def tiler_in_cutedsl(cute, threads, values):
    (ts, tst), (vs, vst) = threads, values
    return tuple(cute.make_layout_tv(cute.make_layout(ts, stride=tst), cute.make_layout(vs, stride=vst))[0])


def _cutedsl_tiler(context) -> Verdict:
    reply = run_in_cutedsl(THIS_MODULE, "tiler_in_cutedsl",
                           [(o.case["threads"], o.case["values"]) for o in context.outcomes], with_cute=True)
    if not reply.ok:
        return failed(f"CuTeDSL could not run this check: {reply.error}")
    for outcome, (value, error) in zip(context.outcomes, reply.values):
        if error or value != str(outcome.value):
            return failed(f"{case_text(outcome.case)}: CuTeDSL's make_layout_tv gives the tiler {value or error}, "
                          f"yours is {outcome.value}")
    return passed()


TILER_FOR = Exercise(
    id="ch02.tiler_for",
    statement="Write tiler_for(thread_layout, value_layout): the tiler (rows, columns) that cute.make_layout_tv "
              "returns for these two layouts, row-major, column-major or with a nested mode (make_layout_tv is "
              "switched off).",
    example="tiler_for(((2,4),8):((32,8),1), (2,4):(1,2)) is (16, 32)",
    rule=("make_layout_tv places one thread's value block at every position of the thread layout, so the tile it "
          "returns covers the thread layout's extent times the value layout's extent, mode by mode: mode 0 is the "
          "rows, mode 1 the columns.\n"
          "A mode's extent is its size, however it is nested; strides only say which id stands where."),
    cases=_tiler_cases,
    ask=_ask_tiler,
    forbidden=("make_layout_tv",),
    criteria=(
        Criterion("the tile is (thread rows x value rows, thread columns x value columns)", "reference", 3,
                  _tiler_right),
        Criterion("real CuTeDSL's make_layout_tv gives your tilers", "cutedsl-cpu", 1, _cutedsl_tiler),
    ),
)


# ---- ch02.thread_owns ----------------------------------------------------------------------------------------

def _owns_cases(rng):
    """Three random TV layouts (the first one with a thread whose elements, in value order, are not sorted
    by (m, n): listing them sorted is then wrong) and three of make_layout_tv's, on tiles with M != N."""
    cases = []
    while len(cases) < 3:
        case = _tv_cases(rng, 1)[0]
        (p, q), _ = case["shape"]
        case["thread"] = rng.randrange(1, p * q)
        owned = _reference_owned(case)
        if cases or owned != sorted(owned):
            cases.append(case)
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


def _owned_mistake(unfold):
    """A mistake that lists each value's tile index unfolded by `unfold(index, M, N)`."""
    def gives(case):
        from cutekit import cute
        layout = cute.make_layout(case["shape"], stride=case["stride"])
        rows, columns = case["tiler"]
        return [unfold(layout((case["thread"], value)), rows, columns)
                for value in range(cute.size(layout, mode=[1]))]
    return gives


THREAD_OWNS_MISTAKES = (
    (_owned_mistake(lambda i, rows, columns: i),
     "those are tile indices; unfold each into its (m, n) in the tile, column-major (m runs fastest)"),
    (_owned_mistake(lambda i, rows, columns: (i // columns, i % columns)),
     "you unfolded the index row-major (n fastest); CuTe's tile is column-major: m runs fastest"),
    (_owned_mistake(lambda i, rows, columns: (i % columns, i // columns)),
     "you unfolded with the number of columns N; a column-major tile's index is m + n*M, so a column holds "
     "the number of rows M of them"),
    (_owned_mistake(lambda i, rows, columns: (i // rows, i % rows)),
     "each pair is (n, m); list (m, n), the row first"),
    (lambda case: sorted(_reference_owned(case)),
     "the right elements, sorted; list them in value order: value 0, 1, 2, ..."),
    (lambda case: _reference_owned({**case, "thread": 0}),
     "that is thread 0's elements; call the layout with (thread, value) for the thread asked"),
    (lambda case: [(0, 3), (1, 3), (0, 4), (1, 4), (0, 5), (1, 5)],
     "that is the worked example's answer (thread 2 of the blog's layout) for every case"),
)


def _owned_right(context) -> Verdict:
    for outcome in context.outcomes:
        if outcome.error:
            return failed(f"{case_text(outcome.case)}: {outcome.error}")
    for outcome in context.outcomes:
        case, got = outcome.case, outcome.value
        want = _reference_owned(case)
        if got == want:
            continue
        layout_text = _layout_text(case["shape"], case["stride"])
        where = f"thread {case['thread']} of {layout_text} on a {case['tiler'][0]}x{case['tiler'][1]} tile"
        why = _named_mistake(context, lambda o: o.value, THREAD_OWNS_MISTAKES)
        if not why and len(got) != len(want):
            why = f"a thread holds {len(want)} values here, as many as the TV layout's value mode has"
        return failed(f"{where}: owns {want}, yours is {got}" + (f" ({why})" if why else ""))
    return passed()


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
    example="owned_by(((2,2),(2,3)):((2,12),(1,4)), (4, 6), 2) is [(0, 3), (1, 3), (0, 4), (1, 4), (0, 5), (1, 5)]",
    rule=("A TV layout sends (thread, value) to a tile index; an (M, N) tile's index unfolds column-major, m "
          "fastest.\n"
          "A thread's elements are its values 0, 1, 2, ... in that order, each index turned into its (m, n)."),
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

WORKED_DTYPE_CASES = ((32, 4, 4), (16, 2, 4))


def _dtype_cases(rng):
    """Six (bits, thread_rows, value_rows), never a worked example. The first is not 32-bit (so "4 values
    whatever the type" is wrong) and not one where the notes' tiler formula happens to be right."""
    cases, seen = [], set()
    while len(cases) < 6:
        case = (rng.choice([8, 16, 32, 64]), rng.choice([2, 4, 8]), rng.choice([2, 4]))
        vector = 128 // case[0]
        if not cases and (case[0] == 32 or vector == case[1] == case[2]):
            continue
        if case not in WORKED_DTYPE_CASES and case not in seen:
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


def _dtype_mistake(build):
    """A mistake for a dtype case: `build(vector, thread_rows, value_rows)` gives (tiler, (shape, stride))."""
    def gives(case):
        tiler, (shape, stride) = build(128 // case["bits"], case["thread_rows"], case["value_rows"])
        return tiler, _layout_text(shape, stride)
    return gives


def _right_tv(vector, tr, vr):
    rows = tr * vr
    return ((32, tr), (vector, vr)), ((rows * vector, vr), (rows, 1))


LAYOUT_TV_FOR_DTYPE_MISTAKES = (
    (_dtype_mistake(lambda vector, tr, vr: ((tr * vector, tr * 32), _right_tv(vector, tr, vr))),
     "that tiler is the notes' formula (thread rows x 128//bits, all threads); the rows are thread rows x "
     "value rows, the columns 32 threads x 128//bits values"),
    (_dtype_mistake(lambda vector, tr, vr: ((tr * vr, 128), _right_tv(4, tr, vr))),
     "you give every thread 4 values per row whatever the type; a row of values is one 128-bit access: "
     "128 // bits values"),
    (_dtype_mistake(lambda vector, tr, vr: ((tr * vr, 32 * vector),
                                           (((tr, 32), (vector, vr)), ((vr, tr * vr * vector), (tr * vr, 1))))),
     "your thread ids run down the thread rows first; the thread layout is row-major, so thread t stands at "
     "row t // 32, column t % 32 of the thread grid (32 threads along a row first)"),
    (_dtype_mistake(lambda vector, tr, vr: ((tr * vr, 32 * vector),
                                           (((32, tr), (vr, vector)), ((tr * vr * vector, vr), (1, tr * vr))))),
     "your values run down the thread's rows first; the value layout is row-major, so value 1 is to the right "
     "of value 0, and value 128 // bits starts the next row"),
    (_dtype_mistake(lambda vector, tr, vr: ((tr * vr, 32 * vector),
                                           tuple(tuple(reversed(part)) for part in _right_tv(vector, tr, vr)))),
     "your layout is (value, thread): threads come first, a TV layout is indexed (thread, value)"),
    (_dtype_mistake(lambda vector, tr, vr: ((tr * vr, 32 * vector),
                                           (((32, tr), (vector, vr)), ((vector, vr * 32 * vector), (1, 32 * vector))))),
     "your offsets are row-major tile indices m*N + n; the tile is unfolded column-major: m + n*M"),
    (lambda case: ((8, 256), "((32,2),(8,4)):((64,4),(8,1))"),
     "you return the worked example elementwise_tv(16, 2, 4) for every case"),
)


def _dtype_mistake_named(context) -> str:
    return _named_mistake(context, lambda o: (o.value["tiler"], o.value["tv"]["text"]), LAYOUT_TV_FOR_DTYPE_MISTAKES)


def _dtype_tiler_right(context) -> Verdict:
    for outcome in context.outcomes:
        if outcome.error:
            return failed(f"{case_text(outcome.case)}: {outcome.error}")
    for outcome in context.outcomes:
        case, got = outcome.case, outcome.value["tiler"]
        want = tuple(_reference_tv_for_dtype(case)[0])
        if got != want:
            why = _dtype_mistake_named(context)
            return failed(f"{case_text(case)}: the tiler is {want}, yours is {got}" + (f" ({why})" if why else ""))
    return passed()


def _dtype_tv_right(context) -> Verdict:
    for outcome in context.outcomes:
        if outcome.error:
            return failed(f"{case_text(outcome.case)}: {outcome.error}")
    for outcome in context.outcomes:
        case, got = outcome.case, outcome.value["tv"]
        _, want_layout = _reference_tv_for_dtype(case)
        if got["text"] == str(want_layout):
            continue
        want = _describe_tv(want_layout)
        why = _dtype_mistake_named(context)
        why = f": {why}" if why else ""
        if (got["threads"], got["values"]) != (want["threads"], want["values"]):
            return failed(f"{case_text(case)}: the TV layout has {want['threads']} threads of {want['values']} "
                          f"values each ({want['text']}); yours has {got['threads']} of {got['values']} "
                          f"({got['text']}){why}")
        wrong = numpy.argwhere(numpy.array(got["tv_offsets"]) != numpy.array(want["tv_offsets"]))
        if len(wrong):
            thread, value = (int(x) for x in wrong[0])
            index = want["tv_offsets"][thread][value]
            rows = case["thread_rows"] * case["value_rows"]
            return failed(f"{case_text(case)}: (thread {thread}, value {value}) is tile element "
                          f"{column_major_coordinate(index, rows)}, index {index}; your layout {got['text']} "
                          f"gives {got['tv_offsets'][thread][value]} (make_layout_tv gives {want['text']}){why}")
    return passed()


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
    example="elementwise_tv(16, 2, 4) is ((8, 256), ((32,2),(8,4)):((64,4),(8,1)))",
    rule=("One 128-bit access moves 128 // bits values of a type that is `bits` wide: a row of a thread's values is "
          "that many.\n"
          "make_layout_tv tiles the value layout over the thread layout: the tile is threads times values along "
          "each mode, and each stride of the TV layout is the column-major tile-index step of its sub-mode (one row "
          "down is 1, one column across is the tile's row count).\n"
          "Row-major threads and values: the last mode varies fastest."),
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
