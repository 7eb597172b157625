"""Chapter 04 exercises: local_tile (which tile), local_partition (which elements of a tile a thread owns),
a GEMM's tiles when B is stored (K, N), and the predicated add walked one row strip per block.

Answers are functions of their parameters, asked on random cases; every seed draws the cases on which the
usual mistakes give a different answer from the right one. A hint names a cause only where the learner's
answer is exactly what that mistake gives, so it never blames a part that was right. The kernel exercise
runs the learner's host function on the simulator (reference tier) on shapes the tile does not divide, on
`cutedsl-cpu` compiles it for sm_80 with real CuTeDSL, and on a GPU compares it with torch.add and times it.
"""
from __future__ import annotations

import functools

from .common import DIVIDES, case_text, compiled_kernel, cutedsl_gives_the_same, torch_ready
from .grading import Criterion, Exercise, Verdict, failed, passed
from .kernels import gpu_median_ms, on_gpu, simulate

THIS_MODULE = __name__


def _cells(tensor) -> list:
    from cutekit import cute
    if not isinstance(tensor, cute.Tensor):
        raise TypeError(f"expected a tensor, got {type(tensor).__name__}: {tensor!r}")
    return [tensor[i] for i in range(cute.size(tensor))]


def _first_failure(outcomes, judge_one, on_error):
    """Case by case in order: the first verdict `judge_one(outcome)` (or `on_error(outcome)` for a case whose
    answer raised) returns decides; all pass: passed(). Errors are met in case order, not ahead of the
    cases before them, so a hint is about the first case that went wrong."""
    for outcome in outcomes:
        verdict = on_error(outcome) if outcome.error else judge_one(outcome)
        if verdict is not None:
            return verdict
    return passed()


# ---- ch04.local_tile_by_hand ---------------------------------------------------------------------------------

WORKED = {"shape": (64, 32), "tiler": (16, 8, 4), "coord": (1, 2, None), "proj": (1, None, 1)}   # section 5's gA
GEMM_PROJ = {"A": (1, None, 1), "B": (None, 1, 1), "C": (1, 1, None)}


def _tile_cases(rng):
    """Six cases. Four are one GEMM's tiles, tiler (BLK_M, BLK_N, BLK_K) of three different sizes, the tile
    counts different from them and from one another: A, B and C at (m, n, None), then A or B with its row mode
    kept whole (None) and one K tile fixed. Then a 2-D and a 3-D tensor whose every mode the tiler keeps
    (proj all 1s), with a None in the 3-D coordinate. Every integer coordinate differs from its reverse (a
    reversed coordinate shows), and some is not 0 (always taking tile 0 shows); never section 5's gA."""
    while True:
        tiler = tuple(rng.sample([2, 3, 4, 5], 3))
        counts = tuple(rng.sample([2, 3, 4], 3))
        if all(t != c for t, c in zip(tiler, counts)):
            break
    (bm, bn, bk), (cm, cn, ck) = tiler, counts
    m, n, k = rng.randrange(1, cm), rng.randrange(cn), rng.randrange(1, ck)
    while n == m:
        n = rng.randrange(cn)
    shapes = {"A": (bm * cm, bk * ck), "B": (bn * cn, bk * ck), "C": (bm * cm, bn * cn)}
    cases = [{"shape": shapes[op], "tiler": tiler, "coord": (m, n, None), "proj": GEMM_PROJ[op]} for op in "ABC"]
    row = rng.choice("AB")
    cases.append({"shape": shapes[row], "tiler": tiler, "coord": (None, n, k) if row == "A" else (m, None, k),
                  "proj": GEMM_PROJ[row]})
    while True:      # a 2-D tensor, every mode kept, integer coordinates
        flat, tile_counts = (rng.randint(2, 5), rng.randint(6, 9)), (rng.randint(2, 3), rng.randint(2, 3))
        coord = tuple(rng.randrange(c) for c in tile_counts)
        if flat[0] != flat[1] and coord != coord[::-1] and all(c < t for c, t in zip(coord[::-1], tile_counts)):
            break
    cases.append({"shape": tuple(t * c for t, c in zip(flat, tile_counts)), "tiler": flat, "coord": coord,
                  "proj": (1, 1)})
    deep = tuple(rng.sample([2, 3, 4, 5], 3))
    deep_counts = tuple(rng.randint(2, 3) for _ in range(3))
    deep_coord = (rng.randrange(1, deep_counts[0]), None, rng.randrange(deep_counts[2]))
    cases.append({"shape": tuple(t * c for t, c in zip(deep, deep_counts)), "tiler": deep, "coord": deep_coord,
                  "proj": (1, 1, 1)})
    return cases


def _ask_tile(answer, case):
    from cutekit import cute
    tile = answer(cute.make_identity_tensor(case["shape"]), case["tiler"], case["coord"], case["proj"])
    return {"text": str(tile), "shape": tuple(tile.shape) if isinstance(tile, cute.Tensor) else None,
            "cells": _cells(tile)}


def _projected(case, keep=lambda p: p is not None):
    """The tiler and the coordinate with the modes `keep` selects."""
    kept = [i for i, p in enumerate(case["proj"]) if keep(p)]
    return tuple(case["tiler"][i] for i in kept), tuple(case["coord"][i] for i in kept)


def _tile_shape_of(tensor_shape, tiler, coord):
    """The shape local_tile gives: the tile's modes, then one mode per None in the coordinate (its tile count)."""
    return tuple(tiler) + tuple(-(-s // t) for s, t, c in zip(tensor_shape, tiler, coord) if c is None)


def _reference_tile(case, tiler=None, coord=None):
    from cutekit import cute
    if tiler is not None:
        return cute.zipped_divide(cute.make_identity_tensor(case["shape"]), tiler)[
            (tuple(None for _ in tiler), coord)]
    return cute.local_tile(cute.make_identity_tensor(case["shape"]), case["tiler"], case["coord"], proj=case["proj"])


def _tile_error(outcome) -> Verdict:
    error, case = outcome.error, outcome.case
    why = ""
    tiler, coord = _projected(case)
    if "switched off" in error:
        why = " (write it with zipped_divide and one slice)"
    elif "modes but" in error:
        why = (f" (this tensor has {len(case['shape'])} modes: divide it by the tiler's modes proj marks with 1, "
               f"here {tiler}, and drop the others)")
    elif "does not match shape" in error or "out of range" in error:
        why = (f" (coord loses the entries proj drops, as the tiler does: the rest mode has one entry per kept "
               f"mode, here {coord}; the tile mode takes one None per kept tiler mode)")
    return failed(f"{case_text(case)}: {error.splitlines()[0][:300]}{why}")


def _tile_shape(outcome) -> Verdict | None:
    case, got = outcome.case, outcome.value
    tiler, coord = _projected(case)
    want = _tile_shape_of(case["shape"], tiler, coord)
    if got["shape"] == want:
        return None
    dropped_tiler, dropped_coord = _projected(case, keep=lambda p: p is None)
    fixed_none = tuple(0 if c is None else c for c in coord)
    if dropped_tiler and got["shape"] is not None and got["shape"][:len(dropped_tiler)] == dropped_tiler \
            and dropped_tiler != tiler[:len(dropped_tiler)]:
        why = ("you kept the tiler modes proj marks None: a 1 in proj keeps that mode of the tiler and of coord, "
               "None drops it")
    elif got["shape"] is not None and got["shape"][:2] == (16, 4) and tuple(tiler[:2]) != (16, 4):
        why = "that is section 5's gA, A's (16, 4) tiles at (1, None): use the tiler, coord and proj you are given"
    elif got["shape"] == tuple(tiler) and any(c is None for c in coord):
        why = (f"a None in coord keeps every tile of that mode, as a mode after the tile's (section 4); yours is "
               f"one tile, as if coord were {fixed_none}")
    elif got["shape"] == _tile_shape_of(case["shape"], case["tiler"][:len(case["shape"])],
                                        case["coord"][:len(case["shape"])]):
        why = ("you took the first modes of the tiler and of coord; proj says which of them this tensor has, "
               "wherever they are")
    else:
        why = "the tile's modes are the tiler's modes proj keeps, then one mode per None in coord"
    return failed(f"{case_text(case)}: the tile should have the shape {want}, yours is {got['text']} ({why})")


@functools.lru_cache(maxsize=1024)
def _reference_cells(shape, tiler, coord, proj) -> list:
    return _cells(_reference_tile({"shape": shape, "tiler": tiler, "coord": coord, "proj": proj}))


def _tile_cells(outcome) -> Verdict | None:
    case, got = outcome.case, outcome.value
    want = _reference_cells(case["shape"], case["tiler"], case["coord"], case["proj"])
    if got["cells"] == want:
        return None
    tiler, coord = _projected(case)
    start = got["cells"][0] if got["cells"] else None
    why = "coord is the tile coordinate, in tiles, mode by mode: it indexes the rest mode"
    if start == want[0]:
        why = ("yours starts there but walks other cells: the tile's modes are the kept tiler modes, in their "
               "order, then one mode per None")
    elif start == tuple(0 for _ in tiler):
        why = "yours is always the first tile: give coord to the rest mode"
    elif start == tuple((c or 0) * t for c, t in zip(reversed(coord), tiler)):
        why = "your coordinate is reversed: coord's first kept entry counts tiles down mode 0"
    return failed(f"{case_text(case)}: the tile starts at {want[0]}, yours at {start} ({why})")


LOCAL_TILE_BY_HAND = Exercise(
    id="ch04.local_tile_by_hand",
    statement="Write tile_of(tensor, tiler, coord, proj): cute.local_tile(tensor, tiler, coord, proj=proj), with "
              "zipped_divide and one slice (local_tile is switched off while it is checked); coord may hold None.",
    example="tile_of(make_identity_tensor((64, 32)), (16, 8, 4), (1, 2, None), (1, None, 1)) is tensor<(16,0) o "
            "(16,4,8):(1@0,1@1,4@1)>",
    rule=("local_tile(tensor, tiler, coord, proj) is a zipped_divide by the tiler modes proj keeps, with the rest "
          "mode fixed at the coordinates of those same modes and the tile mode kept whole.\n"
          "A None in the coordinate keeps every tile of that mode: it becomes a mode after the tile's."),
    cases=_tile_cases,
    ask=_ask_tile,
    forbidden=("local_tile",),
    criteria=(
        Criterion("the tile has local_tile's shape: the kept tiler modes, then one per None", "reference", 1,
                  lambda context: _first_failure(context.outcomes, _tile_shape, _tile_error)),
        Criterion("it is the tile at coord (the rest mode), for A, B and C of a GEMM and for 2-D and 3-D tensors",
                  "reference", 2, lambda context: _first_failure(context.outcomes, _tile_cells, _tile_error)),
        Criterion("real CuTeDSL's local_tile gives the same tile", "cutedsl-cpu", 1,
                  cutedsl_gives_the_same(THIS_MODULE, "local_tile_in_cutedsl",
                                         lambda case: (case["shape"], case["tiler"], case["coord"], case["proj"]),
                                         lambda value: value["text"])),
    ),
)


# ---- ch04.thread_elements ------------------------------------------------------------------------------------

WORKED_ELEMENTS = [(1, 0), (3, 0), (1, 3), (3, 3)]      # tile (4, 6), threads (2, 3), thread 1


def _element_cases(rng):
    """Six cases; every one has two or more rows of threads and of cells per thread, threads and pieces of
    different shapes, and a thread whose column-major and row-major coordinates differ: the blocked, the
    row-major, the swapped-steps and the row-major-listing answers all differ from the right one."""
    cases = []
    while len(cases) < 6:
        threads = (rng.choice([2, 4]), rng.choice([2, 3, 4]))
        per_thread = (rng.randint(2, 3), rng.randint(2, 3))
        tile = (threads[0] * per_thread[0], threads[1] * per_thread[1])
        thread = rng.randrange(1, threads[0] * threads[1])
        column_major = (thread % threads[0], thread // threads[0])
        row_major = (thread // threads[1], thread % threads[1])
        if threads[0] == threads[1] or column_major == row_major or (tile, threads) == ((4, 6), (2, 3)):
            continue
        cases.append({"tile_shape": tile, "thread_shape": threads, "thread": thread})
    return cases


def _reference_elements(case):
    from cutekit import cute
    return _cells(cute.local_partition(cute.make_identity_tensor(case["tile_shape"]),
                                       cute.make_layout(case["thread_shape"]), case["thread"]))


def _ask_elements(answer, case):
    value = answer(case["tile_shape"], case["thread_shape"], case["thread"])
    if value is None or isinstance(value, str):
        raise TypeError(f"expected a list of (m, n) coordinates, got {value!r}")
    return [tuple(int(x) for x in item) for item in value]


def _element_story(case, got) -> str:
    """Why `got` is wrong, where it is exactly what a known mistake gives; else ''."""
    (tm, tn), (hm, hn), t = case["tile_shape"], case["thread_shape"], case["thread"]
    rows, columns = tm // hm, tn // hn

    def cyclic(first, steps):
        return [(first[0] + steps[0] * (i % rows), first[1] + steps[1] * (i // rows)) for i in range(rows * columns)]
    coordinate = (t % hm, t // hm)
    if got == WORKED_ELEMENTS:
        return " (that is the worked example's answer, thread 1 of (2, 3) threads on a 4x6 tile)"
    if sorted(got) == sorted((coordinate[0] * rows + i, coordinate[1] * columns + j)
                             for i in range(rows) for j in range(columns)):
        return " (that is a blocked piece; local_partition is cyclic: one element of every thread-sized piece)"
    if sorted(got) == sorted(cyclic((t // hn, t % hn), (hm, hn))):
        return (" (those are the cells of the thread numbered row-major; make_layout(thread_shape) numbers "
                "threads down the first mode first: column-major)")
    if sorted(got) == sorted(cyclic(coordinate, (hn, hm))):
        return (" (your steps are swapped: the cells step by the thread shape, thread_shape[0] rows and "
                "thread_shape[1] columns)")
    want = _reference_elements(case)
    if sorted(got) == sorted(want):
        return (" (the right cells in another order: the partition lists them column-major, m fastest: "
                "index i is piece (i % pieces down, i // pieces down))")
    if got and set(got) < set(want):
        return f" (only {len(got)} of the thread's {len(want)} cells: it has one in every thread-sized piece)"
    return ""


def _elements_criterion(ordered: bool):
    def judge_one(outcome) -> Verdict | None:
        want, got = _reference_elements(outcome.case), outcome.value
        if (got == want) if ordered else (sorted(got) == sorted(want)):
            return None
        return failed(f"{case_text(outcome.case)}: the thread owns {want}, yours is {got}"
                      f"{_element_story(outcome.case, got)}")

    def on_error(outcome) -> Verdict:
        why = " (work it out by hand: the partitions and divides are switched off)" if "switched off" in \
            outcome.error else ""
        return failed(f"{case_text(outcome.case)}: {outcome.error.splitlines()[0][:300]}{why}")
    return lambda context: _first_failure(context.outcomes, judge_one, on_error)


THREAD_ELEMENTS = Exercise(
    id="ch04.thread_elements",
    statement="Write elements_of(tile_shape, thread_shape, thread): the coordinates, in order, that "
              "local_partition(identity tile, make_layout(thread_shape), thread) holds (partitions and divides "
              "are switched off).",
    example="elements_of((4, 6), (2, 3), 1) is [(1, 0), (3, 0), (1, 3), (3, 3)]",
    rule=("local_partition repeats the thread layout over the tile and keeps, in each repeat, the cell of the given "
          "thread.\n"
          "Thread t's first cell is where the thread layout puts index t (column-major); its cells repeat every "
          "thread-layout extent down and across, listed column-major over the repeats."),
    cases=_element_cases,
    ask=_ask_elements,
    forbidden=("local_partition", "local_tile") + DIVIDES,
    criteria=(
        Criterion("the thread owns the right cells (cyclic: one per thread-sized piece)", "reference", 2,
                  _elements_criterion(False)),
        Criterion("in the partition's order (column-major over the pieces)", "reference", 1,
                  _elements_criterion(True)),
        Criterion("real CuTeDSL's local_partition gives the same cells", "cutedsl-cpu", 1,
                  cutedsl_gives_the_same(THIS_MODULE, "elements_in_cutedsl",
                                         lambda case: (case["tile_shape"], case["thread_shape"], case["thread"]),
                                         lambda value: "tensor<({},{})".format(*value[0]))),
    ),
)


# ---- ch04.thread_layout_for_picture --------------------------------------------------------------------------

WORKED_THREAD_LAYOUT = "(2,3):(3,1)"


def _owner_picture(tile_shape, thread_shape, thread_stride):
    from cutekit import cute
    threads = cute.make_layout(thread_shape, stride=thread_stride)
    tile = cute.make_identity_tensor(tile_shape)
    grid = [[None] * tile_shape[1] for _ in range(tile_shape[0])]
    for thread in range(cute.size(threads)):
        for m, n in _cells(cute.local_partition(tile, threads, thread)):
            grid[m][n] = thread
    return tuple(tuple(row) for row in grid)


def _picture_cases(rng):
    """Five pictures, column- and row-major; every thread layout has rows and columns of different counts
    (a transposed shape shows), and none is the worked example's."""
    cases = []
    for order in ("column", "row", "column", "row", "row"):
        while True:
            threads = (rng.choice([2, 4]), rng.choice([2, 3, 4, 8]))
            if threads[0] != threads[1] and threads != (2, 3):
                break
        stride = (1, threads[0]) if order == "column" else (threads[1], 1)
        tile = (threads[0] * rng.randint(1, 2), threads[1] * rng.randint(1, 2))
        cases.append({"picture": _owner_picture(tile, threads, stride), "_threads": (threads, stride),
                      "_order": order})
    return cases


def _ask_thread_layout(answer, case):
    from cutekit import cute
    layout = answer(case["picture"])
    if not isinstance(layout, cute.Layout):
        raise TypeError(f"expected a layout made with cute.make_layout, got {type(layout).__name__}: {layout!r}")
    picture = case["picture"]
    tile = cute.make_identity_tensor((len(picture), len(picture[0])))
    wrong = []
    for thread in range(cute.size(layout)):
        for m, n in _cells(cute.local_partition(tile, layout, thread)):
            drawn = picture[m][n] if m < len(picture) and n < len(picture[0]) else None
            if drawn != thread:
                wrong.append((thread, (m, n), drawn))
    return {"text": str(layout), "size": cute.size(layout), "wrong": wrong[:3], "shape": layout.shape,
            "stride": layout.stride}


def _picture_text(case) -> str:
    picture = case["picture"]
    return f"a {len(picture)}x{len(picture[0])} picture whose first row is {list(picture[0])}"


def _layout_story(case, got) -> str:
    (threads, stride), order = case["_threads"], case["_order"]
    shape = got["shape"]
    if got["text"] == WORKED_THREAD_LAYOUT:
        return "(2,3):(3,1) is the worked example's layout: read the shape and the order off this picture"
    if not isinstance(shape, tuple):
        return ("a 1-D thread layout partitions only the tile's first mode: give it the picture's 2-D shape "
                "(threads down, threads across)")
    if tuple(shape) == tuple(reversed(threads)):
        return (f"your shape {tuple(shape)} is transposed: the shape is (threads down a column, threads across "
                f"a row) = {threads}")
    if tuple(shape) == tuple(threads):
        if order == "row":
            return ("this picture numbers threads row-major (thread 1 right of thread 0): strides "
                    f"({threads[1]}, 1), not column-major")
        return ("this picture numbers threads column-major (thread 1 below thread 0): strides "
                f"(1, {threads[0]}), not row-major")
    return f"the picture's threads form a {threads[0]}x{threads[1]} grid"


def _thread_count(outcome) -> Verdict | None:
    threads = 1 + max(max(row) for row in outcome.case["picture"])
    if outcome.value["size"] != threads:
        return failed(f"{_picture_text(outcome.case)}: the picture has {threads} threads, your layout "
                      f"{outcome.value['text']} has {outcome.value['size']} "
                      f"({_layout_story(outcome.case, outcome.value)})")
    return None


def _thread_cells(outcome) -> Verdict | None:
    if outcome.value["wrong"]:
        thread, cell, drawn = outcome.value["wrong"][0]
        owner = "which lies outside the picture" if drawn is None else f"which the picture gives to thread {drawn}"
        return failed(f"{_picture_text(outcome.case)}: with your layout {outcome.value['text']}, thread {thread} "
                      f"gets cell {cell}, {owner} "
                      f"({_layout_story(outcome.case, outcome.value)})")
    return None


def _picture_error(outcome) -> Verdict:
    return failed(f"{_picture_text(outcome.case)}: {outcome.error.splitlines()[0][:300]}")


THREAD_LAYOUT_FOR_PICTURE = Exercise(
    id="ch04.thread_layout_for_picture",
    statement="Write thread_layout_for(picture): the thread layout for which local_partition gives every thread "
              "exactly the cells the picture marks with its number.",
    example="a 4x6 picture with first row 0 1 2 0 1 2 and second row 3 4 5 3 4 5 gives (2,3):(3,1)",
    rule=("The thread layout's shape is the extent of the block of thread numbers that repeats over the picture, "
          "down and across.\n"
          "Its strides are the steps in thread number between neighbours in that block, one cell down and one cell "
          "across."),
    cases=_picture_cases,
    ask=_ask_thread_layout,
    criteria=(
        Criterion("as many threads as the picture has", "reference", 1,
                  lambda context: _first_failure(context.outcomes, _thread_count, _picture_error)),
        Criterion("every thread gets exactly its cells", "reference", 2,
                  lambda context: _first_failure(context.outcomes, _thread_cells, _picture_error)),
        Criterion("real CuTeDSL partitions the same way", "cutedsl-cpu", 1,
                  cutedsl_gives_the_same(THIS_MODULE, "thread_layout_in_cutedsl",
                                         lambda case: ((len(case["picture"]), len(case["picture"][0])),)
                                         + case["_threads"],
                                         lambda value: "None")),
    ),
)


# ---- ch04.gemm_tiles -----------------------------------------------------------------------------------------

WORKED_GEMM_TILER = (16, 8, 4)      # section 5: block (1, 2), B of modes (N, K)

def _gemm_cases(rng):
    """Five cases on which every mistake `_gemm_stories` knows gives a tensor of its own (none raises, none is
    right), so each is told apart by what it gives: the three block sizes differ, so do the counts of tiles
    along M, N and K (3 to 5), m != n, and M, N, K are large enough for section 5's block (1, 2) to exist."""
    cases = []
    for _ in range(10_000):
        if len(cases) == 5:
            return cases
        tiler = (rng.choice([16, 32]), rng.choice([8, 16]), rng.choice([4, 8]))
        counts = tuple(rng.sample([3, 4, 5], 3))
        m, n = rng.sample(range(3), 2)
        if len(set(tiler)) < 3 or tiler[2] * counts[2] < 17:
            continue
        m_size, n_size, k_size = (t * c for t, c in zip(tiler, counts))
        case = {"M": m_size, "N": n_size, "K": k_size, "tiler": tiler, "m": m, "n": n}
        if all(_stories_tell_apart(case, index) for index in range(3)):
            cases.append(case)
    raise RuntimeError("ch04.gemm_tiles: no cases found (a bug in the check)")


def _stories_tell_apart(case, index: int) -> bool:
    """Every mistake of tile `index` gives a tensor on this case, each a different one, none the right one."""
    wrong = [tile for tile, _ in _gemm_stories(case, index)]
    return all(wrong) and len(set(wrong)) == len(wrong) and _gemm_reference(case)[index] not in wrong


def _gemm_tensors(case):
    from cutekit import cute
    return (cute.make_identity_tensor((case["M"], case["K"])), cute.make_identity_tensor((case["K"], case["N"])),
            cute.make_identity_tensor((case["M"], case["N"])))


def _ask_gemm(answer, case):
    from cutekit import cute
    value = answer(*_gemm_tensors(case), case["tiler"], case["m"], case["n"])
    if not isinstance(value, (tuple, list)) or len(value) != 3:
        raise TypeError(f"expected (gA, gB, gC), got {value!r}")
    for name, part in zip(("gA", "gB", "gC"), value):
        if not isinstance(part, cute.Tensor):
            raise TypeError(f"expected {name} to be a tensor (cute.local_tile), got {type(part).__name__}: {part!r}")
    return [str(part) for part in value]


def _gemm_tile(case, which: str, tiler, coordinate, proj=None) -> str:
    shape = {"A": (case["M"], case["K"]), "B": (case["K"], case["N"]), "C": (case["M"], case["N"])}[which]
    return _tile_text(shape, tuple(tiler), tuple(coordinate), proj)


@functools.lru_cache(maxsize=4096)
def _tile_text(shape, tiler, coordinate, proj) -> str:
    """local_tile of an identity tensor of `shape`, printed ('' where it raises); remembered, since every
    case asks the same few tiles many times."""
    from cutekit import cute
    tensor = cute.make_identity_tensor(shape)
    try:
        if proj is None:
            return str(cute.local_tile(tensor, tiler, coordinate))
        return str(cute.local_tile(tensor, tiler, coordinate, proj=proj))
    except Exception:   # a mistake that raises on this case gives no tensor to compare with
        return ""


def _gemm_reference(case) -> list:
    (bm, bn, bk), m, n = case["tiler"], case["m"], case["n"]
    return [_gemm_tile(case, "A", (bm, bk), (m, None)), _gemm_tile(case, "B", (bk, bn), (None, n)),
            _gemm_tile(case, "C", (bm, bn), (m, n))]


def _gemm_stories(case, index: int) -> list:
    """(what a mistake gives for tile `index`, the hint that names it), most specific first."""
    (bm, bn, bk), m, n = case["tiler"], case["m"], case["n"]
    tiler = case["tiler"]
    if index == 0:
        return [
            (_gemm_tile(case, "A", (bm, bk), (n, None)), "gA is at row block n: A's row block is m"),
            (_gemm_tile(case, "A", (bm, bk), (m, 0)), "gA holds only the first k tile: None in the k coordinate "
                                                     "keeps every k tile as a third mode"),
            (_gemm_tile(case, "A", WORKED_GEMM_TILER, (1, 2, None), (1, None, 1)),
             "that is section 5's block (1, 2): use m, n and the tiler you are given"),
            (_gemm_tile(case, "A", (bk, bm), (None, m)), "gA's tiler is in the wrong order: A's modes are (M, K), so "
                                                        "its tiler is (BLK_M, BLK_K) and its coordinate (m, None)"),
        ]
    if index == 1:
        return [
            (_gemm_tile(case, "B", tiler, (m, n, None), (None, 1, 1)),
             "that is proj=(None, 1, 1), section 5's B of modes (N, K); this B's modes are (K, N): proj keeps "
             "the tiler's order (BLK_N, BLK_K), so B needs its own tiler (BLK_K, BLK_N) and coordinate (None, n)"),
            (_gemm_tile(case, "B", (bk, bn), (None, m)), "gB is at column block m: B's column block is n"),
            (_gemm_tile(case, "B", (bk, bn), (n, None)),
             "B's coordinate is in the wrong order: its modes are (K, N), so the coordinate is (None, n), K first"),
            (_gemm_tile(case, "B", (bn, bk), (None, n)),
             "B's tiler is in the wrong order: its modes are (K, N), so the tiler is (BLK_K, BLK_N)"),
            (_gemm_tile(case, "B", (bk, bn), (0, n)), "gB holds only the first k tile: None in the k coordinate "
                                                     "keeps every k tile as a third mode"),
            (_gemm_tile(case, "B", WORKED_GEMM_TILER, (1, 2, None), (None, 1, 1)),
             "that is section 5's block (1, 2) and its B of modes (N, K): use m, n, the tiler you are given and "
             "B's own mode order (K, N)"),
        ]
    return [
        (_gemm_tile(case, "C", (bm, bn), (n, m)), "gC is at block (n, m): C's block is (m, n)"),
        (_gemm_tile(case, "C", (bm, bn), (m, None)), "gC keeps every column tile: C's coordinate is (m, n), "
                                                    "it has no K mode and no None"),
        (_gemm_tile(case, "C", WORKED_GEMM_TILER, (1, 2, None), (1, 1, None)),
         "that is section 5's block (1, 2): use m, n and the tiler you are given"),
    ]


def _gemm_part(index: int, name: str, shape_words: str):
    def judge_one(outcome) -> Verdict | None:
        case = outcome.case
        want, got = _gemm_reference(case)[index], outcome.value[index]
        if got == want:
            return None
        why = next((story for wrong, story in _gemm_stories(case, index) if wrong and got == wrong), "")
        if not why:
            why = f"{name} should be {shape_words}"
        return failed(f"{case_text(case)}: {name} should be {want}, yours is {got} ({why})")

    def on_error(outcome) -> Verdict:
        return failed(f"{case_text(outcome.case)}: {outcome.error.splitlines()[0][:300]} (A is (M, K), B is "
                      "(K, N), C is (M, N): each local_tile takes a tiler and a coordinate in its tensor's mode order)")
    return lambda context: _first_failure(context.outcomes, judge_one, on_error)


GEMM_TILES = Exercise(
    id="ch04.gemm_tiles",
    statement="Write gemm_tiles(mA, mB, mC, tiler, m, n) for A (M, K), B stored (K, N) and C (M, N), tiler "
              "(BLK_M, BLK_N, BLK_K): block (m, n)'s gA (BLK_M, BLK_K, k tiles), gB (BLK_K, BLK_N, k tiles) and "
              "gC (BLK_M, BLK_N).",
    example="A 64x32, B 32x48, tiler (16, 8, 4), block (1, 2): gB is tensor<(0,16) o (4,8,8):(1@0,1@1,4@0)>",
    rule=("local_tile(tensor, tile shape, coord) keeps a mode whole where coord has None and picks one tile where "
          "it has a number.\n"
          "Block (m, n) reads A's row of tiles m and B's column of tiles n over every k, and writes C's one tile "
          "(m, n); B is stored (K, N), so its tile shape lists K first."),
    cases=_gemm_cases,
    ask=_ask_gemm,
    criteria=(
        Criterion("gA is (BLK_M, BLK_K, k tiles) at row block m", "reference", 1,
                  _gemm_part(0, "gA", "(BLK_M, BLK_K, k tiles) at row block m: local_tile(mA, (BLK_M, BLK_K), (m, None))")),
        Criterion("gB is (BLK_K, BLK_N, k tiles) at column block n", "reference", 1,
                  _gemm_part(1, "gB", "(BLK_K, BLK_N, k tiles) at column block n: B's modes are (K, N)")),
        Criterion("gC is (BLK_M, BLK_N) at block (m, n)", "reference", 1,
                  _gemm_part(2, "gC", "(BLK_M, BLK_N) at block (m, n)")),
        Criterion("real CuTeDSL gives the same three tiles", "cutedsl-cpu", 1,
                  cutedsl_gives_the_same(THIS_MODULE, "gemm_in_cutedsl",
                                         lambda case: (case["M"], case["N"], case["K"], case["tiler"], case["m"],
                                                       case["n"]),
                                         lambda value: " | ".join(value))),
    ),
)


# ---- ch04.add_with_tails: one block per row strip ------------------------------------------------------------

TILE = (16, 128)


def _strip_cases(rng):
    """Two strips of two tiles the tile divides (32x256), then two shapes it does not: rows past 16 and
    columns past 128 in strips of two tiles, and one tile's worth or less. On every seed a kernel that writes
    one tile per strip, guards nothing, compares with the tile's shape or gives every block strip 0 fails
    (and each leaves its own pattern of cells unwritten), at a few thousand simulated cells per case."""
    torch_ready()
    return [{"M": 32, "N": 256, "kind": "divisible"},
            {"M": rng.randint(17, 31), "N": rng.randint(129, 255), "kind": "ragged"},
            {"M": rng.randint(3, 15), "N": rng.randint(5, 100), "kind": "ragged"}]


def simulator_add(host, case):
    """Harness: the learner's add on CPU tensors (the simulator's cutlass), compared with torch. C starts as
    NaN: cells never written stay NaN."""
    import torch
    from cutlass.cute.runtime import from_dlpack
    generator = torch.Generator().manual_seed(case["M"] * 1000 + case["N"])
    a = torch.randn(case["M"], case["N"], generator=generator)
    b = torch.randn(case["M"], case["N"], generator=generator)
    c = torch.full((case["M"], case["N"]), float("nan"))
    host(from_dlpack(a), from_dlpack(b), from_dlpack(c))
    unwritten = torch.isnan(c)
    wrong = ((c != a + b) & ~unwritten).nonzero().tolist()
    cells = unwritten.nonzero().tolist()
    rows = torch.arange(case["M"]).view(-1, 1).expand(case["M"], case["N"])
    columns = torch.arange(case["N"]).view(1, -1).expand(case["M"], case["N"])
    patterns = {"first tile of each strip only": columns >= TILE[1],
                "tile-shaped predicate": (rows >= TILE[0]) | (columns >= TILE[1]),
                "first strip only": rows >= TILE[0]}
    return {"wrong": len(wrong), "first_wrong": tuple(wrong[0]) if wrong else None,
            "a_only": bool(wrong) and bool(torch.equal(c[~unwritten], a[~unwritten])),
            "unwritten": len(cells), "first_unwritten": tuple(cells[0]) if cells else None,
            "pattern": next((name for name, mask in patterns.items() if cells and torch.equal(unwritten, mask)), "")}


def gpu_add(host, case):
    """Harness (runs on the GPU, real CuTeDSL): correctness against torch.add, then the median time of the
    learner's compiled add and of torch.add on the same tensors."""
    import torch
    import cutlass.cute as cute
    from cutlass.cute.runtime import from_dlpack
    generator = torch.Generator(device="cuda").manual_seed(case["M"] * 1000 + case["N"])
    a = torch.randn(case["M"], case["N"], device="cuda", generator=generator)
    b = torch.randn(case["M"], case["N"], device="cuda", generator=generator)
    c = torch.full_like(a, float("nan"))
    views = [from_dlpack(t) for t in (a, b, c)]
    compiled = cute.compile(host, *views)
    compiled(*views)
    torch.cuda.synchronize()
    wrong = (c != a + b).nonzero().tolist()
    result = {"wrong": len(wrong), "first": tuple(wrong[0]) if wrong else None}
    result["ms"] = gpu_median_ms(lambda: compiled(*views))
    result["torch_ms"] = gpu_median_ms(lambda: torch.add(a, b, out=c))
    return result


def _ask_add(answer, case):
    return simulate(answer, simulator_add, case)


def _gpu_criterion(context) -> Verdict:
    cases = [{"M": 4096, "N": 4096}, {"M": 1000, "N": 3001}]
    reply = on_gpu(context.answer, f"{__name__}:gpu_add", cases)
    if not reply.ok:
        return failed(f"on the GPU: {reply.error[:600]}")
    notes = []
    for case, (value, error) in zip(cases, reply.values):
        where = f"a {case['M']}x{case['N']} add on the GPU"
        if error:
            return failed(f"{where}: {error[:400]}")
        if value["wrong"]:
            return failed(f"{where}: {value['wrong']} elements differ from torch.add, the first at {value['first']}")
        notes.append(f"{case['M']}x{case['N']}: {value['ms']:.3f} ms, torch.add {value['torch_ms']:.3f} ms "
                     f"({value['torch_ms'] / value['ms']:.2f} of its speed)")
    return Verdict(True, "; ".join(notes))


def _unwritten_story(value) -> str:
    pattern = value["pattern"]
    if pattern == "first tile of each strip only":
        return ("only the first 128 columns of each strip were written: loop k over every tile of the strip (the "
                "strip's last mode counts them) and partition tile k, not tile 0 each time")
    if pattern == "tile-shaped predicate":
        return ("only cells with m < 16 and n < 128 were written: the identity tensor holds the matrix's (m, n), "
                "so compare it with mC.shape, not with the tile's shape")
    if pattern == "first strip only":
        return ("rows past the first 16 were never written: every block worked on strip 0; block b's strip is the "
                "b-th 16-row strip, b from cute.arch.block_idx()")
    return ("each cell of the matrix belongs to one tile of one strip: the block's strip, then each tile k of it, "
            "then the thread's cells of that tile, added where the cell's coordinate lies inside mC")


def _add_criterion(kind: str):
    def judge(context) -> Verdict:
        for outcome in context.outcomes:
            case = outcome.case
            if case["kind"] != kind:
                continue
            where = f"a {case['M']}x{case['N']} add"
            if outcome.error:
                hint = ""
                if "out-of-bounds" in outcome.error:
                    hint = (" (guard the tail: partition an identity tensor like C, and add cell i only "
                            "where its coordinate lies inside mC's shape)")
                elif "slice" in outcome.error or "coordinate" in outcome.error:
                    hint = (" (the strip's tiles are its last mode: loop k over all of them and slice tile k "
                            "out of the strip before partitioning it)")
                return failed(f"{where}: {outcome.error.splitlines()[0][:400]}{hint}")
            value = outcome.value
            if value["wrong"]:
                story = ("C holds A, not A + B" if value["a_only"] else
                         "C[i] = A[i] + B[i], with A, B and C partitioned alike (same tile k, same thread)")
                return failed(f"{where}: {value['wrong']} elements differ from torch, the first at (m, n) = "
                              f"{value['first_wrong']} ({story})")
            if value["unwritten"]:
                return failed(f"{where}: {value['unwritten']} elements were never written, the first at (m, n) = "
                              f"{value['first_unwritten']} ({_unwritten_story(value)})")
        return passed()
    return judge


def _ptx_criterion(context) -> Verdict:
    report, problem = compiled_kernel(context.answer, *[("Float32", 2, 1)] * 3, module="learner_add")
    if problem:
        return problem
    if report.local_memory:
        return failed(f"your kernel's PTX has {report.local_memory} local-memory accesses: index the thread's "
                      "cells with the unrolled i of cutlass.range_constexpr, not a run-time index")
    if not report.count("ld.global") or not report.count("st.global"):
        return failed("your kernel's PTX has no global loads or stores: does every thread load A and B and store C?")
    return passed()


ADD_WITH_TAILS = Exercise(
    id="ch04.add_with_tails",
    statement="Complete strip_kernel: the predicated elementwise add, one block per 16-row strip walking its "
              "128-column tiles, correct for any M, N.",
    example="add_strips on a 37x300 tensor equals torch.add",
    rule=("Each block owns one strip, the one its block index names, and must walk every tile of that strip.\n"
          "Where a tile reaches past the matrix, partition an identity tensor exactly as C is partitioned and touch "
          "a cell only if its coordinate lies inside the matrix."),
    cases=_strip_cases,
    ask=_ask_add,
    timeout=180.0,
    criteria=(
        Criterion("shapes the 16x128 tile divides, strips of several tiles: C equals A + B", "reference", 1,
                  _add_criterion("divisible")),
        Criterion("shapes it does not divide: C equals A + B, nothing outside touched", "reference", 2,
                  _add_criterion("ragged")),
        Criterion("real CuTeDSL compiles it for sm_80, with no local memory", "cutedsl-cpu", 1, _ptx_criterion),
        Criterion("on the GPU: equals torch.add on 4096x4096 and 1000x3001, timed against it", "gpu", 1,
                  _gpu_criterion),
    ),
)


# ---- what the CuTeDSL worker calls, with `cute` = cutlass.cute ------------------------------------------------

def local_tile_in_cutedsl(cute, shape, tiler, coord, proj):
    return cute.local_tile(cute.make_identity_tensor(shape), tiler, coord, proj=proj)


def elements_in_cutedsl(cute, tile_shape, thread_shape, thread):
    import cutlass
    part = cute.local_partition(cute.make_identity_tensor(tile_shape), cute.make_layout(thread_shape),
                                cutlass.Int32(thread))
    return str(part).split(" o ")[0]


def thread_layout_in_cutedsl(cute, tile_shape, thread_shape, thread_stride):
    """None when CuTeDSL's local_partition of every thread starts where the reference's does."""
    import cutlass
    from cutekit import cute as reference
    threads = cute.make_layout(thread_shape, stride=thread_stride)
    mine = reference.make_layout(thread_shape, stride=thread_stride)
    for thread in range(reference.size(mine)):
        real = str(cute.local_partition(cute.make_identity_tensor(tile_shape), threads, cutlass.Int32(thread)))
        expected = str(reference.local_partition(reference.make_identity_tensor(tile_shape), mine, thread))
        if real.split(" o ")[0] != expected.split(" o ")[0]:
            return f"thread {thread}: {real} (reference {expected})"
    return None


def gemm_in_cutedsl(cute, m_size, n_size, k_size, tiler, m, n):
    blk_m, blk_n, blk_k = tiler
    return " | ".join(str(part) for part in (
        cute.local_tile(cute.make_identity_tensor((m_size, k_size)), (blk_m, blk_k), (m, None)),
        cute.local_tile(cute.make_identity_tensor((k_size, n_size)), (blk_k, blk_n), (None, n)),
        cute.local_tile(cute.make_identity_tensor((m_size, n_size)), (blk_m, blk_n), (m, n))))


EXERCISES = [LOCAL_TILE_BY_HAND, THREAD_ELEMENTS, THREAD_LAYOUT_FOR_PICTURE, GEMM_TILES, ADD_WITH_TAILS]
