"""Chapter 04 exercises: local_tile (which tile), local_partition (which elements of a tile a thread owns),
`proj` for GEMM tilers, and the predicated elementwise add.

Answers are functions of their parameters, asked on random cases. The kernel exercise runs the learner's
host function on the simulator (reference tier) on shapes the tile does not divide, and on `cutedsl-cpu`
compiles the learner's kernel for sm_80 and reads its PTX (128-bit accesses, no local memory).
"""
from __future__ import annotations

from .common import DIVIDES, case_text, compiled_kernel, cutedsl_gives_the_same, each_outcome
from .grading import Criterion, Exercise, Verdict, failed, passed
from .kernels import gpu_median_ms, on_gpu, simulate

THIS_MODULE = __name__


def _cells(tensor) -> list:
    from cutekit import cute
    if not isinstance(tensor, cute.Tensor):
        raise TypeError(f"expected a tensor, got {type(tensor).__name__}: {tensor!r}")
    return [tensor[i] for i in range(cute.size(tensor))]


# ---- ch04.local_tile_by_hand ---------------------------------------------------------------------------------

def _tile_cases(rng):
    cases = []
    while len(cases) < 6:
        rank = 3 if len(cases) >= 4 else 2
        tiler = tuple(rng.randint(2, 4) for _ in range(rank))
        counts = tuple(rng.randint(2, 3) for _ in range(rank))
        shape = tuple(t * c for t, c in zip(tiler, counts))
        coord = tuple(rng.randrange(c) for c in counts)
        if len(set(tiler)) > 1 and any(coord) and (shape, tiler) != ((8, 8), (4, 4)):
            cases.append({"shape": shape, "tiler": tiler, "coord": coord})
    return cases


def _ask_tile(answer, case):
    from cutekit import cute
    tile = answer(cute.make_identity_tensor(case["shape"]), case["tiler"], case["coord"])
    return {"text": str(tile), "shape": tuple(tile.shape) if isinstance(tile, cute.Tensor) else None,
            "cells": _cells(tile)}


def _reference_tile(case):
    from cutekit import cute
    return cute.local_tile(cute.make_identity_tensor(case["shape"]), case["tiler"], case["coord"])


@each_outcome
def _tile_shape_criterion(outcome) -> Verdict | None:
    if outcome.value["shape"] != tuple(outcome.case["tiler"]):
        return failed(f"{case_text(outcome.case)}: the tile should have the tiler's shape "
                      f"{outcome.case['tiler']}, yours is {outcome.value['text']} (keep mode 0 whole, with one "
                      "None per tiler mode, and give coord to mode 1)")
    return None


@each_outcome
def _tile_cells_criterion(outcome) -> Verdict | None:
    want = _cells(_reference_tile(outcome.case))
    if outcome.value["cells"] != want:
        return failed(f"{case_text(outcome.case)}: the tile starts at {want[0]}, yours at "
                      f"{outcome.value['cells'][0]} (coord is the tile coordinate: it indexes the rest mode)")
    return None


LOCAL_TILE_BY_HAND = Exercise(
    id="ch04.local_tile_by_hand",
    statement="Write tile_of(tensor, tiler, coord): cute.local_tile(tensor, tiler, coord), with zipped_divide "
              "and one slice (local_tile is switched off while it is checked).",
    example="tile_of(make_identity_tensor((8, 8)), (4, 4), (1, 0)) is tensor<(4,0) o (4,4):(1@0,1@1)>",
    cases=_tile_cases,
    ask=_ask_tile,
    forbidden=("local_tile",),
    criteria=(
        Criterion("the tile has the tiler's shape", "reference", 1, _tile_shape_criterion),
        Criterion("it is the tile at coord (the rest mode), for 2-D and 3-D tensors", "reference", 2,
                  _tile_cells_criterion),
        Criterion("real CuTeDSL's local_tile gives the same tile", "cutedsl-cpu", 1,
                  cutedsl_gives_the_same(THIS_MODULE, "local_tile_in_cutedsl",
                                         lambda case: (case["shape"], case["tiler"], case["coord"]),
                                         lambda value: value["text"])),
    ),
)


# ---- ch04.thread_elements ------------------------------------------------------------------------------------

def _element_cases(rng):
    cases = []
    while len(cases) < 6:
        threads = (rng.choice([2, 4]), rng.choice([1, 2, 4]))
        per_thread = (rng.randint(1, 3), rng.randint(2, 3))
        tile = (threads[0] * per_thread[0], threads[1] * per_thread[1])
        thread = rng.randrange(1, threads[0] * threads[1])
        if threads[0] != threads[1] or tile[0] != tile[1]:
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


def _elements_criterion(ordered: bool):
    @each_outcome
    def judge(outcome) -> Verdict | None:
        want, got = _reference_elements(outcome.case), outcome.value
        if (got == want) if ordered else (sorted(got) == sorted(want)):
            return None
        case = outcome.case
        why = ""
        if not ordered:
            (tm, tn), (hm, hn) = case["tile_shape"], case["thread_shape"]
            block_m, block_n = tm // hm, tn // hn
            coordinate = (case["thread"] % hm, case["thread"] // hm)
            blocked = sorted((coordinate[0] * block_m + i, coordinate[1] * block_n + j)
                             for i in range(block_m) for j in range(block_n))
            if sorted(got) == blocked:
                why = " (that is a blocked piece; local_partition is cyclic: one element of every piece)"
            elif got and got[0] == (case["thread"] // hn, case["thread"] % hn):
                why = " (thread numbers run down the thread layout's first mode first: column-major)"
        return failed(f"{case_text(case)}: the thread owns {want}, yours is {got}{why}")
    return judge


THREAD_ELEMENTS = Exercise(
    id="ch04.thread_elements",
    statement="Write elements_of(tile_shape, thread_shape, thread): the coordinates, in order, that "
              "local_partition(identity tile, make_layout(thread_shape), thread) holds (partitions and divides "
              "are switched off).",
    example="elements_of((4, 4), (2, 2), 0) is [(0, 0), (2, 0), (0, 2), (2, 2)]",
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
    cases = []
    for order in ("column", "row", "column", "row", "row"):
        threads = (rng.choice([2, 4]), rng.choice([2, 4, 8]))
        stride = (1, threads[0]) if order == "column" else (threads[1], 1)
        tile = (threads[0] * rng.randint(1, 2), threads[1] * rng.randint(1, 2))
        cases.append({"picture": _owner_picture(tile, threads, stride), "_threads": (threads, stride)})
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
            if picture[m][n] != thread:
                wrong.append((thread, (m, n), picture[m][n]))
    return {"text": str(layout), "size": cute.size(layout), "wrong": wrong[:3]}


@each_outcome
def _thread_count(outcome) -> Verdict | None:
    threads = 1 + max(max(row) for row in outcome.case["picture"])
    if outcome.value["size"] != threads:
        return failed(f"the picture has {threads} threads, your layout {outcome.value['text']} has "
                      f"{outcome.value['size']}")
    return None


@each_outcome
def _thread_cells(outcome) -> Verdict | None:
    if outcome.value["wrong"]:
        thread, cell, drawn = outcome.value["wrong"][0]
        return failed(f"with your layout {outcome.value['text']}, thread {thread} gets cell {cell}, which the "
                      f"picture gives to thread {drawn} (the layout maps a thread's coordinate to its number: "
                      "row-major numbering needs strides (threads across, 1))")
    return None


THREAD_LAYOUT_FOR_PICTURE = Exercise(
    id="ch04.thread_layout_for_picture",
    statement="Write thread_layout_for(picture): the thread layout for which local_partition gives every thread "
              "exactly the cells the picture marks with its number.",
    example="a 4x4 picture with rows 0 1 0 1 / 2 3 2 3 / ... gives (2,2):(2,1)",
    cases=_picture_cases,
    ask=_ask_thread_layout,
    criteria=(
        Criterion("as many threads as the picture has", "reference", 1, _thread_count),
        Criterion("every thread gets exactly its cells", "reference", 2, _thread_cells),
        Criterion("real CuTeDSL partitions the same way", "cutedsl-cpu", 1,
                  cutedsl_gives_the_same(THIS_MODULE, "thread_layout_in_cutedsl",
                                         lambda case: ((len(case["picture"]), len(case["picture"][0])),)
                                         + case["_threads"],
                                         lambda value: "None")),
    ),
)


# ---- ch04.gemm_tiles -----------------------------------------------------------------------------------------

def _gemm_cases(rng):
    cases = []
    while len(cases) < 5:
        tiler = (rng.choice([4, 8, 16]), rng.choice([2, 4, 8]), rng.choice([2, 4]))
        counts = (rng.randint(2, 3), rng.randint(2, 3), rng.randint(2, 4))
        if len(set(tiler)) < 3 or len(set(counts)) < 2:
            continue
        m_size, n_size, k_size = (t * c for t, c in zip(tiler, counts))
        cases.append({"M": m_size, "N": n_size, "K": k_size, "tiler": tiler,
                      "m": rng.randrange(counts[0]), "n": rng.randrange(1, counts[1])})
    return cases


def _gemm_tensors(case):
    from cutekit import cute
    return (cute.make_identity_tensor((case["M"], case["K"])), cute.make_identity_tensor((case["N"], case["K"])),
            cute.make_identity_tensor((case["M"], case["N"])))


def _ask_gemm(answer, case):
    value = answer(*_gemm_tensors(case), case["tiler"], case["m"], case["n"])
    if not isinstance(value, (tuple, list)) or len(value) != 3:
        raise TypeError(f"expected (gA, gB, gC), got {value!r}")
    return [str(part) for part in value]


def _reference_gemm(case):
    from cutekit import cute
    mA, mB, mC = _gemm_tensors(case)
    coordinate = (case["m"], case["n"], None)
    return [str(cute.local_tile(mA, case["tiler"], coordinate, proj=(1, None, 1))),
            str(cute.local_tile(mB, case["tiler"], coordinate, proj=(None, 1, 1))),
            str(cute.local_tile(mC, case["tiler"], coordinate, proj=(1, 1, None)))]


def _gemm_part(index: int, name: str, shape_words: str):
    @each_outcome
    def judge(outcome) -> Verdict | None:
        want, got = _reference_gemm(outcome.case)[index], outcome.value[index]
        if got != want:
            return failed(f"{case_text(outcome.case)}: {name} should be {want} {shape_words}, yours is {got}")
        return None
    return judge


GEMM_TILES = Exercise(
    id="ch04.gemm_tiles",
    statement="Write gemm_tiles(mA, mB, mC, tiler, m, n): block (m, n)'s tiles of A (M,K), B (N,K), C (M,N) from "
              "one tiler (BLK_M, BLK_N, BLK_K) with local_tile and proj; A and B keep every K tile.",
    example="tiler (16, 8, 4), block (1, 2): gA is tensor<(16,0) o (16,4,8):(1@0,1@1,4@1)>",
    cases=_gemm_cases,
    ask=_ask_gemm,
    criteria=(
        Criterion("gA is (BLK_M, BLK_K, k tiles) at row block m", "reference", 1,
                  _gemm_part(0, "gA", "(A has modes M and K: proj=(1, None, 1))")),
        Criterion("gB is (BLK_N, BLK_K, k tiles) at column block n", "reference", 1,
                  _gemm_part(1, "gB", "(B has modes N and K: proj=(None, 1, 1))")),
        Criterion("gC is (BLK_M, BLK_N) at block (m, n)", "reference", 1,
                  _gemm_part(2, "gC", "(C has modes M and N: proj=(1, 1, None))")),
        Criterion("real CuTeDSL gives the same three tiles", "cutedsl-cpu", 1,
                  cutedsl_gives_the_same(THIS_MODULE, "gemm_in_cutedsl",
                                         lambda case: (case["M"], case["N"], case["K"], case["tiler"], case["m"],
                                                       case["n"]),
                                         lambda value: " | ".join(value))),
    ),
)


# ---- ch04.add_with_tails -------------------------------------------------------------------------------------

def _add_cases(rng):
    """Shapes of 1 to 3 tiles of 16x128 each way; most are not multiples of the tile, some N not of 4."""
    cases = [{"M": 16 * rng.randint(1, 2), "N": 128, "kind": "divisible"}]
    while len(cases) < 4:
        m, n = rng.randint(3, 40), rng.choice([rng.randint(5, 300), 4 * rng.randint(2, 70)])
        if m % 16 or n % 128:
            cases.append({"M": m, "N": n, "kind": "ragged"})
    return cases


def simulator_add(host, case):
    """Harness: the learner's add on CPU tensors (the simulator's cutlass), compared with torch."""
    import torch
    from cutlass.cute.runtime import from_dlpack
    generator = torch.Generator().manual_seed(case["M"] * 1000 + case["N"])
    a = torch.randn(case["M"], case["N"], generator=generator)
    b = torch.randn(case["M"], case["N"], generator=generator)
    c = torch.full((case["M"], case["N"]), float("nan"))
    host(*[from_dlpack(t, assumed_align=16) for t in (a, b, c)], 4 if case["N"] % 4 == 0 else 1)
    wrong = (c != a + b).nonzero().tolist()
    return {"wrong": len(wrong), "first": tuple(wrong[0]) if wrong else None}


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
    vector = 4 if case["N"] % 4 == 0 else 1
    views = [from_dlpack(t, assumed_align=16) for t in (a, b, c)]
    compiled = cute.compile(host, *views, vector)
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
                    hint = " (guard the tail: predicate each copy atom with elem_less(coordinate, shape), copy with pred=)"
                return failed(f"{where}: {outcome.error.splitlines()[0][:400]}{hint}")
            if outcome.value["wrong"]:
                return failed(f"{where}: {outcome.value['wrong']} elements differ from torch, the first at (m, n) = "
                              f"{outcome.value['first']} (does every thread load A and B and store C?)")
        return passed()
    return judge


def _ptx_criterion(context) -> Verdict:
    report, problem = compiled_kernel(context.answer, *[("Float32", 2, 4)] * 3, 4, module="learner_add")
    if problem:
        return problem
    loads, stores = report.count("ld.global.v4"), report.count("st.global.v4")
    if loads != 8 or stores != 4 or report.local_memory:
        return failed(f"for fp32 with vector 4 each thread should issue 8 ld.global.v4 (4 per input) and 4 "
                      f"st.global.v4, with no local memory; your PTX has {loads}, {stores} and "
                      f"{report.local_memory} local accesses (is the predicate one per copy atom?)")
    return passed()


ADD_WITH_TAILS = Exercise(
    id="ch04.add_with_tails",
    statement="Complete tails_kernel: the predicated elementwise add, correct for any M, N.",
    example="add_with_tails on a 37x300 tensor equals torch.add",
    cases=_add_cases,
    ask=_ask_add,
    timeout=120.0,
    criteria=(
        Criterion("shapes the 16x128 tile divides: C equals A + B", "reference", 1, _add_criterion("divisible")),
        Criterion("shapes it does not divide: C equals A + B, nothing outside touched", "reference", 2,
                  _add_criterion("ragged")),
        Criterion("compiled for sm_80: 128-bit loads and stores, no local memory", "cutedsl-cpu", 1, _ptx_criterion),
        Criterion("on the GPU: equals torch.add on 4096x4096 and 1000x3001, timed against it", "gpu", 1,
                  _gpu_criterion),
    ),
)


# ---- what the CuTeDSL worker calls, with `cute` = cutlass.cute ------------------------------------------------

def local_tile_in_cutedsl(cute, shape, tiler, coord):
    return cute.local_tile(cute.make_identity_tensor(shape), tiler, coord)


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
    coordinate = (m, n, None)
    return " | ".join(str(part) for part in (
        cute.local_tile(cute.make_identity_tensor((m_size, k_size)), tiler, coordinate, proj=(1, None, 1)),
        cute.local_tile(cute.make_identity_tensor((n_size, k_size)), tiler, coordinate, proj=(None, 1, 1)),
        cute.local_tile(cute.make_identity_tensor((m_size, n_size)), tiler, coordinate, proj=(1, 1, None))))


EXERCISES = [LOCAL_TILE_BY_HAND, THREAD_ELEMENTS, THREAD_LAYOUT_FOR_PICTURE, GEMM_TILES, ADD_WITH_TAILS]
