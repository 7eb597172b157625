"""Chapter 05 exercises: build a TiledCopy, predict partition_S's shape, the TiledCopy row sum with two rows
per warp, a compile cache key, a column sum over dim 0 with 4 adjacent columns per thread (kernel and launch),
and the capstone: a row softmax, kernel and launch written from a blank cell (the last two graded on the
simulator, by their sm_80 PTX, and on a GPU against torch).

Answers are functions of their parameters, asked on random cases; every seed draws the cases on which the
usual mistakes give a different answer from the right one, and a hint names a cause only where the answer is
what that mistake gives. The kernel exercises are graded on the simulator whatever backend the notebook
uses: the learner's host function and every kernel it calls are rebuilt from their source with the simulator
as `cutlass` (in the forked sandbox, so the notebook's modules stay as they were). On `cutedsl-cpu` they are
compiled for sm_80 with real CuTeDSL and their PTX read.

Also here, for the chapter's compilation section: `compile_notebook_kernel` (a notebook's kernel compiled
by real CuTeDSL for sm_80, no GPU needed) and `tensor_types_in_cutedsl` (how real CuTeDSL types a tensor
from from_dlpack, mark_layout_dynamic and make_fake_compact_tensor).
"""
from __future__ import annotations

import re
import time

from .common import compiled_kernel, each_outcome, on_simulator, torch_ready
from .common import compile_notebook_kernel  # noqa: F401 (the notebook calls chapter05.compile_notebook_kernel)
from .cutedsl import run_in_cutedsl
from .grading import Criterion, Exercise, Verdict, failed, passed

THIS_MODULE = __name__


# ---- for the chapter: real CuTeDSL on the CPU ------------------------------------------------------------------

def tensor_types_traced(cute, rows, columns):
    """Inside a cute.jit trace: the types of a (rows, columns) fp32 tensor as CuTeDSL builds them."""
    import cutlass
    import torch
    from cutlass.cute.runtime import from_dlpack, make_fake_compact_tensor
    host = torch.zeros(rows, columns)
    fake = make_fake_compact_tensor(cutlass.Float32, (cute.sym_int(), columns), stride_order=(1, 0))
    return "|".join([str(from_dlpack(host)), str(from_dlpack(host).mark_layout_dynamic()), str(fake)])


def tensor_types_in_cutedsl(rows: int, columns: int) -> tuple:
    """(from_dlpack, .mark_layout_dynamic(), make_fake_compact_tensor with M = sym_int()) as real CuTeDSL
    prints them, the pointer address written 0x...."""
    reply = run_in_cutedsl(THIS_MODULE, "tensor_types_traced", [(rows, columns)], with_cute=True)
    if not reply.ok or reply.values[0][1]:
        raise RuntimeError(f"CuTeDSL could not build the tensors: {reply.error or reply.values[0][1]}")
    static, dynamic, fake = reply.values[0][0].split("|")
    return re.sub(r"0x[0-9a-f]+", "0x...", static), re.sub(r"0x[0-9a-f]+", "0x...", dynamic), fake


# ---- ch05.tiled_copy_for ----------------------------------------------------------------------------------------

THREAD_SHAPES = ((4, 32), (8, 16), (2, 64), (16, 8), (4, 8), (8, 4))
VALUE_SHAPES = ((1, 4), (2, 4), (1, 8), (2, 2), (4, 2), (1, 2), (2, 8))


def _copy_cases(rng):
    cases = []
    while len(cases) < 6:
        threads, values = rng.choice(THREAD_SHAPES), rng.choice(VALUE_SHAPES)
        dtype = rng.choice(("Float32", "Float16"))
        if values[1] * (32 if dtype == "Float32" else 16) > 128 or threads == values:
            continue
        if len(cases) < 3 and values[0] == 1:   # rows of values > 1 tell row-major values from column-major
            continue
        if not cases and values[1] * (32 if dtype == "Float32" else 16) == 128:
            continue    # one atom narrower than 128 bits tells "a row of values" from "always 128 bits"

        if (threads, values) == ((4, 32), (1, 4)):
            continue
        cases.append({"thread_shape": threads, "value_shape": values, "dtype": dtype})
    return cases


def _reference_copy(thread_shape, value_shape, dtype_name, thread_order=(1, 0), value_order=(1, 0), bits=None):
    from cutekit import cute
    dtype = getattr(cute, dtype_name)
    atom = cute.make_copy_atom(cute.nvgpu.CopyUniversalOp(), dtype,
                               num_bits_per_copy=bits or value_shape[1] * dtype.width)
    return cute.make_tiled_copy_tv(atom, cute.make_ordered_layout(thread_shape, order=thread_order),
                                   cute.make_ordered_layout(value_shape, order=value_order))


def _copy_facts(tiled_copy) -> dict:
    return {"tiler": tuple(t.shape for t in tiled_copy.tiler_mn), "tv": str(tiled_copy.layout_tv_tiled),
            "atom": str(tiled_copy.layout_src_tv)}


def _ask_copy(answer, case):
    from cutekit import cute
    made = answer(case["thread_shape"], case["value_shape"], getattr(cute, case["dtype"]))
    if not hasattr(made, "layout_tv_tiled") or not hasattr(made, "tiler_mn"):
        raise TypeError(f"expected a TiledCopy (cute.make_tiled_copy_tv), got {type(made).__name__}: {made!r:.80}")
    return _copy_facts(made)


def _copy_text(case):
    return f"threads {case['thread_shape']}, values {case['value_shape']}, {case['dtype']}"


WORKED_COPY = ((4, 32), (1, 4), "Float32")      # section 2's TiledCopy


def _copy_story(case, got) -> str:
    """Why the learner's TiledCopy is wrong, where it is exactly what a known mistake builds; else ''."""
    args = (case["thread_shape"], case["value_shape"], case["dtype"])
    width = 32 if case["dtype"] == "Float32" else 16
    variants = [
        (lambda: _reference_copy(*WORKED_COPY), " That is section 2's TiledCopy (4x32 threads, 1x4 fp32 values): "
                                                "use thread_shape, value_shape and dtype."),
        (lambda: _reference_copy(case["value_shape"], case["thread_shape"], case["dtype"],
                                 bits=case["value_shape"][1] * width),
         " You passed the values where the threads go: make_tiled_copy_tv(atom, thread_layout, value_layout)."),
        (lambda: _reference_copy(*args, thread_order=(0, 1)),
         " Your threads are column-major: the exercise numbers them row-major, thread 1 to the right of "
         "thread 0."),
        (lambda: _reference_copy(*args, value_order=(0, 1)),
         " Your values are column-major: the exercise orders a thread's values row-major, value 1 to the right "
         "of value 0."),
    ]
    for build, story in variants:
        try:
            if _copy_facts(build()) == got:
                return story
        except Exception:  # a variant that cannot be built (an atom that does not fit) is not this answer
            continue
    return ""


def _copy_judge(judge_one):
    """each_outcome, with the error of an atom that does not fit explained."""
    def judge(context) -> Verdict:
        for outcome in context.outcomes:
            if outcome.error:
                why = ""
                if "atoms" in outcome.error or "num_bits" in outcome.error:
                    why = (" (an atom of num_bits_per_copy bits moves num_bits_per_copy / dtype.width values, and one "
                           "copy should move a row of a thread's values: num_bits_per_copy must cover one row of "
                           "them, no more)")
                return failed(f"{_copy_text(outcome.case)}: {outcome.error.splitlines()[0][:300]}{why}")
        for outcome in context.outcomes:
            verdict = judge_one(outcome)
            if verdict is not None:
                return verdict
        return passed()
    return judge


@_copy_judge
def _copy_tiler(outcome) -> Verdict | None:
    case = outcome.case
    want = _copy_facts(_reference_copy(case["thread_shape"], case["value_shape"], case["dtype"]))["tiler"]
    if outcome.value["tiler"] != want:
        why = _copy_story(case, outcome.value) or " (threads times values, mode by mode)"
        return failed(f"{_copy_text(case)}: the copy tile should be {want}, yours is {outcome.value['tiler']}.{why}")
    return None


@_copy_judge
def _copy_atom(outcome) -> Verdict | None:
    case = outcome.case
    want = _copy_facts(_reference_copy(case["thread_shape"], case["value_shape"], case["dtype"]))["atom"]
    if outcome.value["atom"] != want:
        width = 32 if case["dtype"] == "Float32" else 16
        why = _copy_story(case, outcome.value) or (" (the atom's num_bits_per_copy must cover one row of a "
                                                    "thread's values: no fewer bits, no more)")
        return failed(f"{_copy_text(case)}: one copy should move a row of {case['value_shape'][1]} values "
                      f"({case['value_shape'][1] * width} bits), the atom layout {want}; yours is "
                      f"{outcome.value['atom']}.{why}")
    return None


@_copy_judge
def _copy_layout(outcome) -> Verdict | None:
    case = outcome.case
    args = (case["thread_shape"], case["value_shape"], case["dtype"])
    want = _copy_facts(_reference_copy(*args))["tv"]
    got = outcome.value["tv"]
    if got == want:
        return None
    why = _copy_story(case, outcome.value)
    return failed(f"{_copy_text(case)}: the TV layout should be {want}, yours is {got}.{why}")


TILED_COPY_FOR = Exercise(
    id="ch05.tiled_copy_for",
    statement="Write tiled_copy_for(thread_shape, value_shape, dtype): a TiledCopy with row-major threads, "
              "row-major values per thread, and an atom that moves one row of a thread's values.",
    example="tiled_copy_for((4, 32), (1, 4), Float32) has TV layout ((32,4),4):((16,1),4) and tile (4, 128)",
    rule=("make_tiled_copy_tv takes the copy atom, the thread layout and the value layout, in that order; row-major "
          "layouts have their last mode fastest.\n"
          "A copy atom moves num_bits_per_copy bits per thread at a time; one atom should move exactly one row of a "
          "thread's values."),
    cases=_copy_cases,
    ask=_ask_copy,
    criteria=(
        Criterion("the copy tile is threads x values", "reference", 1, _copy_tiler),
        Criterion("one copy moves a row of a thread's values (value_shape[1] * width bits)", "reference", 1,
                  _copy_atom),
        Criterion("threads and values row-major: the TV layout", "reference", 2, _copy_layout),
    ),
)


# ---- ch05.partition_shape ---------------------------------------------------------------------------------------

def _shape_cases(rng):
    cases = []
    while len(cases) < 6:
        threads, values = rng.choice(THREAD_SHAPES), rng.choice(VALUE_SHAPES)
        # atoms across a row and down rows would make mode 0 (vector, (across, down)): not asked here, so a
        # thread with several rows of values copies whole rows
        vectors = [v for v in (1, 2, 4) if values[1] % v == 0 and (values[0] == 1 or v == values[1])]
        if not vectors:
            continue
        vector = max(vectors) if not cases else rng.choice(vectors)
        repeats = (rng.randint(1, 3), rng.randint(1, 4))
        if not cases and vector == 1:
            continue
        if repeats[0] == repeats[1] or (values[0] * values[1]) // vector == 1 and len(cases) < 3:
            continue
        tile = (threads[0] * values[0] * repeats[0], threads[1] * values[1] * repeats[1])
        case = {"thread_shape": threads, "value_shape": values, "vector": vector, "tile_shape": tile}
        if _reference_shape(case) != WORKED_PARTITION_SHAPE:
            cases.append(case)
    return cases


def _reference_shape(case):
    from cutekit import cute
    tiled_copy = _reference_copy(case["thread_shape"], case["value_shape"], "Float32", bits=32 * case["vector"])
    return tiled_copy.get_slice(0).partition_S(cute.make_identity_tensor(case["tile_shape"])).shape


def _plain_shape(value):
    if isinstance(value, bool) or value is None or isinstance(value, str):
        raise TypeError(f"expected a nested tuple of ints like ((4, 1), 1, 4), got {value!r}")
    if isinstance(value, (tuple, list)):
        return tuple(_plain_shape(item) for item in value)
    return int(value)


def _ask_shape(answer, case):
    return _plain_shape(answer(case["thread_shape"], case["value_shape"], case["vector"], case["tile_shape"]))


def _shape_text(case):
    return (f"threads {case['thread_shape']}, values {case['value_shape']}, vector {case['vector']}, "
            f"tile {case['tile_shape']}")


WORKED_PARTITION_SHAPE = ((4, 1), 1, 4)      # section 3: thread 5 of a 4x512 super tile


def _shape_story(case, got) -> str:
    """Why the learner's shape is wrong, where it is exactly what a known mistake gives; else ''."""
    want = _reference_shape(case)
    (tm, tn), (vm, vn), vector, (sm, sn) = (case["thread_shape"], case["value_shape"], case["vector"],
                                            case["tile_shape"])
    values = vm * vn
    if got == WORKED_PARTITION_SHAPE:
        return " That is section 3's shape (4x32 threads, 1x4 values, a 4x512 tile): work it out for this case."
    if not isinstance(got, tuple) or len(got) != 3:
        return " partition_S gives three modes: ((values one atom moves, atoms), copy tiles down, copy tiles across)."
    if got[0] == values and got[0] != want[0]:
        return (f" Mode 0 is nested: (values one atom moves, atoms per copy tile) = ({vector}, {values // vector}), "
                f"not the {values} values flat.")
    if got[0] == (1, values) and vector != 1:
        return (f" Your atom moves 1 value; this one moves vector = {vector}: mode 0 is (values one atom moves, "
                f"atoms per copy tile).")
    if got[1:] == (want[2], want[1]) and want[1] != want[2]:
        return (" Modes 1 and 2 are swapped: mode 1 counts copy tiles down (tile_shape[0] / (threads x values "
                "down)), mode 2 across.")
    if got[1:] == (sm // tm, sn // tn):
        return (" Modes 1 and 2 count copy tiles, and a copy tile is threads x values: divide the tile by "
                f"({tm} x {vm}, {tn} x {vn}), not by the threads alone.")
    return ""


@each_outcome
def _shape_mode0(outcome) -> Verdict | None:
    want = _reference_shape(outcome.case)
    got = outcome.value
    if not isinstance(got, tuple) or len(got) != 3 or got[0] != want[0]:
        why = _shape_story(outcome.case, got) or " (values one atom moves, atoms per copy tile)"
        return failed(f"{_shape_text(outcome.case)}: mode 0 should be {want[0]}; yours is "
                      f"{got[0] if isinstance(got, tuple) and got else got}.{why}")
    return None


@each_outcome
def _shape_rest(outcome) -> Verdict | None:
    want = _reference_shape(outcome.case)
    if outcome.value != want:
        why = _shape_story(outcome.case, outcome.value) or (
            " Modes 1 and 2 count how often the copy tile, threads x values, repeats down and across the tile.")
        return failed(f"{_shape_text(outcome.case)}: partition_S gives {want}; yours is {outcome.value}.{why}")
    return None


PARTITION_SHAPE = Exercise(
    id="ch05.partition_shape",
    statement="Write partition_shape(thread_shape, value_shape, vector, tile_shape): the shape of one thread's "
              "partition_S of a tile, for row-major threads and values and an atom of `vector` values.",
    example="partition_shape((4, 32), (1, 4), 4, (4, 512)) == ((4, 1), 1, 4)",
    rule=("A thread's partition_S of a tile is (CPY, CPY_M, CPY_N): mode 0 is (values one atom moves, atoms per "
          "copy tile); modes 1 and 2 count how often the copy tile repeats down and across the tile.\n"
          "A copy tile is threads times values, mode by mode."),
    cases=_shape_cases,
    ask=_ask_shape,
    forbidden=("make_tiled_copy_tv", "make_tiled_copy", "local_partition"),
    criteria=(
        Criterion("mode 0 is (atom values, atoms)", "reference", 1, _shape_mode0),
        Criterion("the whole shape, with the copy tile's repeats", "reference", 2, _shape_rest),
    ),
)


# ---- ch05.tiled_copy_row_sum: two rows per warp ---------------------------------------------------------------

ROWS_PER_BLOCK = 8          # threads (8, 16) row-major: lanes 0-15 of warp w hold row 2w, lanes 16-31 row 2w + 1


def _row_sum_cases(rng):
    """A shape the super tile divides (two blocks of 8 rows, two super tiles per row), then two it does not:
    more than 8 rows, not a multiple of 8 and odd (a second block, a last row alone in its warp), and N not
    a multiple of the super tile, once not of 4 either. On every seed each of the mistakes below writes a
    wrong sum, leaves rows unwritten, or writes past the output."""
    torch_ready()
    return [{"M": 16, "N": 256, "kind": "divisible"},
            {"M": rng.choice([9, 11, 13]), "N": 4 * rng.randint(20, 60), "kind": "ragged"},
            {"M": rng.choice([3, 5, 7]), "N": rng.choice([7, 33, 95, 130]), "kind": "ragged"}]


def _ask_row_sum(answer, case):
    import torch
    run, from_dlpack = on_simulator(answer)
    generator = torch.Generator().manual_seed(case["M"] * 1000 + case["N"])
    x = torch.randn(case["M"], case["N"], generator=generator)
    out = torch.full((case["M"],), float("nan"))
    run(from_dlpack(x, assumed_align=16), from_dlpack(out), 4 if case["N"] % 4 == 0 else 1)
    sums = x.sum(dim=-1)
    partner = torch.arange(case["M"]) ^ 1                    # the other row of the same warp
    pair = sums + torch.where(partner < case["M"], sums[partner.clamp(max=case["M"] - 1)], torch.zeros(()))
    written = ~torch.isnan(out)
    wrong = (written & ~torch.isclose(out, sums, atol=1e-3)).nonzero().flatten().tolist()
    return {"unwritten": (~written).nonzero().flatten().tolist(), "wrong": wrong,
            "pair_sums": bool(wrong) and all(bool(torch.isclose(out[r], pair[r], atol=1e-3)) for r in wrong)}


def _row_sum_story(case, value) -> str:
    """Why the rows came out wrong, from which rows are unwritten or wrong and how."""
    unwritten, rows = value["unwritten"], case["M"]
    if unwritten and all(r % 2 == 1 for r in unwritten):
        return ("the odd rows were never written: lanes 16-31 of a warp hold row 2w + 1, so the first lane of each "
                "16 writes, not only lane 0")
    if unwritten and all(r % ROWS_PER_BLOCK >= 4 for r in unwritten):
        return ("rows 4 to 7 of each block were never written: 8 rows of 16 threads, so a thread's row in its "
                "block counts 16-thread groups, not warps (a warp holds two rows; warp_idx() counts warps)")
    if value["wrong"] and value["pair_sums"]:
        return ("each sum is two rows' sums added: a warp holds two rows, so the reduction must stay inside the "
                "16 lanes of a row, not span the whole warp")
    if unwritten:
        return (f"{len(unwritten)} of {rows} rows were never written: each row is written once, by the first of "
                "its 16 lanes, at the row's index among all M rows (8 rows per block)")
    return "each row's sum comes from exactly the 16 lanes of that row: no fewer lanes, and none of the other row"


def _row_sum_criterion(kind: str):
    def judge(context) -> Verdict:
        for outcome in context.outcomes:
            case = outcome.case
            if case["kind"] != kind:
                continue
            where = f"a {case['M']}x{case['N']} row sum"
            if outcome.error:
                hint = ""
                if "out-of-bounds" in outcome.error and "mOut" in outcome.error:
                    hint = " (write only rows that exist: the last block's rows past M are not there)"
                elif "out-of-bounds" in outcome.error:
                    hint = " (the loop reads through the TiledCopy with one predicate per atom: keep it as given)"
                return failed(f"{where}: {outcome.error.splitlines()[0][:400]}{hint}")
            value = outcome.value
            if value["unwritten"] or value["wrong"]:
                wrong = value["wrong"][:1] or value["unwritten"][:1]
                return failed(f"{where}: {len(value['wrong'])} rows differ from torch.sum and {len(value['unwritten'])} "
                              f"were never written, the first row {wrong[0]} ({_row_sum_story(case, value)})")
        return passed()
    return judge


def _row_sum_ptx(context) -> Verdict:
    report, problem = compiled_kernel(context.answer, ("Float32", 2, 4), ("Float32", 1, 1), 4)
    if problem:
        return problem
    loads, vectors = report.count("ld.global"), report.count("ld.global.v4")
    if not vectors or loads != vectors or report.local_memory:
        return failed(f"for fp32 with vector 4 every global load should be a 128-bit ld.global.v4 and nothing "
                      f"should go to local memory; your PTX has {loads} global loads, {vectors} of them v4, and "
                      f"{report.local_memory} local accesses")
    shuffles = report.count("shfl.sync.bfly")
    if shuffles != 4:
        return failed(f"a 16-lane reduction is 4 butterfly shuffles (shfl.sync.bfly); your PTX has {shuffles} "
                      "(a reduction over each row's 16 lanes, not the whole warp's 32)")
    return passed()


TILED_COPY_ROW_SUM = Exercise(
    id="ch05.tiled_copy_row_sum",
    statement="Finish two_rows_kernel: 8 rows of 16 threads per block, two rows per warp; reduce each thread's "
              "partials over its row's 16 lanes and let the row's first lane write it, if the row exists.",
    example="two_rows_per_warp on a 9x300 tensor equals torch.sum(x, dim=-1)",
    rule=("A shuffle reduction adds the values of the lanes in its group; when a warp holds two rows, the group "
          "must be the lanes of one row, or the two rows are added together.\n"
          "Exactly one lane writes each row's sum, at that row's index among all rows (blocks hold consecutive "
          "rows), and only for rows that exist: the last block may reach past M."),
    cases=_row_sum_cases,
    ask=_ask_row_sum,
    timeout=180.0,
    criteria=(
        Criterion("shapes the super tile divides: every row's sum", "reference", 1, _row_sum_criterion("divisible")),
        Criterion("shapes it does not divide (an odd number of rows, N not a multiple of 4): every row's sum",
                  "reference", 2, _row_sum_criterion("ragged")),
        Criterion("compiled for sm_80: only 128-bit global loads, no local memory, a 16-lane reduction",
                  "cutedsl-cpu", 1, _row_sum_ptx),
    ),
)


# ---- ch05.cache_key ---------------------------------------------------------------------------------------------

def _key_cases(rng):
    torch_ready()
    cases = []
    for _ in range(3):
        n = 4 * rng.randint(2, 40)
        m1, m2, m3 = rng.sample(range(2, 60), 3)
        cases.append({"M": (m1, m2, m3), "N": n, "other_N": n + 4 * rng.randint(1, 5)})
    return cases


def _key_tensors(case):
    import torch
    (m1, m2, m3), n = case["M"], case["N"]
    return {
        "base": torch.zeros(m1, n),
        "the same shape again": torch.zeros(m1, n),
        "another M": torch.zeros(m2, n),
        "a third M": torch.zeros(m3, n),
        "float16": torch.zeros(m1, n, dtype=torch.float16),
        "another N": torch.zeros(m1, case["other_N"]),
        "column-major strides": torch.zeros(n, m1).t(),
        "an address 4 bytes past a 16-byte boundary": torch.zeros(m1 * n + 1)[1:].view(m1, n),
    }


def _ask_key(answer, case):
    tensors = _key_tensors(case)
    keys = {name: answer(tensor) for name, tensor in tensors.items()}
    try:
        for key in keys.values():
            hash(key)
        hashable = True
    except TypeError:
        hashable = False
    return {"hashable": hashable, "same": {name: bool(key == keys["base"]) for name, key in keys.items()},
            "base": repr(keys["base"])[:120]}


SAME_KERNEL = ("the same shape again", "another M", "a third M")
# what the key must hold to tell each tensor from the base one
NEW_KERNEL = {"float16": "the dtype (x.dtype)",
              "another N": "N, which the kernel was compiled for (x.shape[1])",
              "column-major strides": "the strides (x.stride())",
              "an address 4 bytes past a 16-byte boundary": "whether the address is a multiple of 16 bytes, "
                                                            "which assumed_align=16 promised"}


@each_outcome
def _key_hashable(outcome) -> Verdict | None:
    if not outcome.value["hashable"]:
        return failed(f"your key {outcome.value['base']} cannot go in a dict (it is not hashable): use a tuple, "
                      "not a list")
    return None


@each_outcome
def _key_reuse(outcome) -> Verdict | None:
    if not outcome.value["same"]["the same shape again"]:
        return failed("two different tensors of the same dtype, shape, strides and alignment get different keys: "
                      "build the key from the tensor's properties, not from the tensor object (id(x))")
    for name in SAME_KERNEL[1:]:
        if not outcome.value["same"][name]:
            return failed(f"M = {outcome.case['M'][0]} and {name}: one compiled kernel serves both (M is "
                          "dynamic), but your keys differ, so every new M compiles again: leave M out")
    return None


@each_outcome
def _key_separates(outcome) -> Verdict | None:
    for name, needed in NEW_KERNEL.items():
        if outcome.value["same"][name]:
            return failed(f"a {outcome.case['M'][0]}x{outcome.case['N']} float32 tensor and one with {name} get "
                          f"the same key, but the kernel compiled for the first is wrong for the second: the "
                          f"key needs {needed}")
    return None


CACHE_KEY = Exercise(
    id="ch05.cache_key",
    statement="Write cache_key(x): equal exactly when one compiled row-sum kernel (M dynamic, N static, strides "
              "static, 16-byte alignment assumed) serves both tensors; hashable.",
    example="cache_key(torch.zeros(8, 64)) == cache_key(torch.zeros(32, 64)) != cache_key(torch.zeros(8, 68))",
    rule=("One compiled kernel serves every tensor that agrees on all it was compiled for: the dtype, each static "
          "extent (not the dynamic ones), the strides, and the alignment it assumes.\n"
          "A cache key is hashable (a tuple, not a list) and built from those facts, not from the tensor object."),
    cases=_key_cases,
    ask=_ask_key,
    criteria=(
        Criterion("the key is hashable", "reference", 1, _key_hashable),
        Criterion("one key for every M (M is dynamic)", "reference", 1, _key_reuse),
        Criterion("a new key for a new dtype, N, strides or alignment", "reference", 2, _key_separates),
    ),
)


# ---- ch05.sum_dim0: a column sum, 4 adjacent columns per thread, 128-bit loads down the rows ------------------

COLUMNS_PER_BLOCK = 512     # 128 threads x 4 columns
ROWS_PER_STEP = 4           # the super tile (4, 512): a step reads 4 rows of the block's columns
GPU_DIM0_CASES = ({"M": 4096, "N": 8192}, {"M": 3001, "N": 5004})


def _dim0_cases(rng):
    """A shape the super tile divides, one step over two column blocks (a grid of as many blocks as row steps
    shows); then M not a multiple of 4 over two steps with N past a multiple of 512 (a last step partly past
    M, a last block partly past N, a fragment cleared once keeps the first step's rows, blocks racing on a
    column leave one step's rows); then M below 4 and N below 512 (one partial step in one partial block). N
    is always a multiple of 4. Small, so that a check simulates few 128-thread blocks: about a second."""
    torch_ready()
    return [{"M": 4, "N": 1024, "kind": "divisible"},
            {"M": rng.choice([5, 6, 7]), "N": 4 * rng.randint(129, 255), "kind": "ragged"},
            {"M": rng.choice([1, 2, 3]), "N": 4 * rng.randint(2, 120), "kind": "ragged"}]


def _close(a, b) -> bool:
    import torch
    return bool(torch.allclose(a, b, atol=1e-3))


def _ask_dim0(answer, case):
    import torch
    run, from_dlpack = on_simulator(answer)
    M, N = case["M"], case["N"]
    generator = torch.Generator().manual_seed(M * 1000 + N)
    x = torch.randn(M, N, generator=generator)
    out = torch.full((N,), float("nan"))
    run(from_dlpack(x, assumed_align=16), from_dlpack(out, assumed_align=16))
    want = x.sum(dim=0)
    unwritten = torch.isnan(out)
    written = ~unwritten
    wrong = written & ~torch.isclose(out, want, atol=1e-3)
    facts = {"unwritten": int(unwritten.sum()), "wrong": int(wrong.sum()),
             "first_unwritten": int(unwritten.nonzero()[0]) if unwritten.any() else None,
             "first_wrong": int(wrong.nonzero()[0]) if wrong.any() else None}
    first = facts["first_unwritten"]
    facts["tail_unwritten"] = first is not None and bool(unwritten[first:].all()) and bool(written[:first].all())
    facts["pattern"] = ""
    if not wrong.any():
        return facts
    got = out[written]
    groups = x.reshape(M, N // 4, 4).sum(dim=(0, 2)).repeat_interleave(4)        # 4 adjacent columns added
    steps = -(-M // ROWS_PER_STEP)
    padded = torch.cat([x, torch.zeros(steps * ROWS_PER_STEP - M, N)])
    by_step = padded.reshape(steps, ROWS_PER_STEP, N).sum(dim=1)                   # (steps, N): each step's rows
    by_row_in_step = padded.reshape(steps, ROWS_PER_STEP, N).sum(dim=0)            # (4, N): rows r, r + 4, ...
    if _close(got, groups[written]):
        facts["pattern"] = "columns_added"
    elif any(_close(got, by_row_in_step[r][written]) for r in range(ROWS_PER_STEP)) and M > 1:
        facts["pattern"] = "one_row_per_step"
    elif steps > 1 and bool((torch.isclose(out, by_step, atol=1e-3).any(dim=0) | unwritten).all()):
        facts["pattern"] = "one_step"
    elif steps > 1 and M % ROWS_PER_STEP:
        stale = x[(steps - 2) * ROWS_PER_STEP + M % ROWS_PER_STEP:(steps - 1) * ROWS_PER_STEP].sum(dim=0)
        if _close(got, (want + stale)[written]):
            facts["pattern"] = "stale_rows"
    return facts


def _blocks(count: int) -> str:
    return f"{count} block{'' if count == 1 else 's'}"


def _dim0_story(case, value) -> str:
    """Why the columns came out wrong, from which columns are unwritten or wrong and how."""
    M, N = case["M"], case["N"]
    pattern = value["pattern"]
    if pattern == "columns_added":
        return ("each output holds the sum of 4 adjacent columns, the 4 of one thread: a thread's fragment holds "
                "4 different columns in its vector mode, and reducing everything adds them together; fold the "
                "rows' modes and keep the vector mode (a reduction profile)")
    if pattern == "one_row_per_step":
        return ("each output holds only every 4th row (one row of each step): a step's 4 rows sit in the "
                "fragment's mode 1, and all of them belong to the sum")
    if pattern == "one_step":
        return (f"each output holds the sum of only 4 rows, one step's: several blocks wrote the same columns, each "
                f"with its own rows, and the last write won (a race between blocks). One block walks every row "
                f"step of its columns in a loop, and the grid has one block per {COLUMNS_PER_BLOCK} columns")
    if pattern == "stale_rows":
        return (f"each output is too large by rows of the step before the last: with M = {M}, the last step's rows "
                f"past M are skipped by the predicate, and the fragment still held what the step before loaded "
                f"there; clear the fragment before every copy, not once before the loop (version 3, Tails)")
    first = value["first_unwritten"]
    if value["unwritten"] and value["tail_unwritten"] and first % COLUMNS_PER_BLOCK == 0 and value["wrong"]:
        return (f"columns {first} to {N - 1} were never written and the first {first} hold wrong sums: every block "
                f"wrote the same first columns. The divided tensors' rest mode is (row steps, column blocks): the "
                f"block index picks a column block, the rest mode's second index, and the loop walks the row steps, "
                f"its first")
    if value["unwritten"] and value["tail_unwritten"] and first % COLUMNS_PER_BLOCK == 0:
        blocks = first // COLUMNS_PER_BLOCK
        if blocks == N // COLUMNS_PER_BLOCK and N % COLUMNS_PER_BLOCK:
            return (f"columns {first} to {N - 1} were never written: a grid of {_blocks(blocks)} covers only the "
                    f"first {first} columns; the block count must be rounded up so that a last, partial block "
                    f"takes the rest")
        return (f"columns {first} to {N - 1} were never written: the grid has {_blocks(blocks)}, and a block sums "
                f"{COLUMNS_PER_BLOCK} columns; the launch needs one block per {COLUMNS_PER_BLOCK} columns, counted "
                f"along N (the divided tensor's rest mode is (row steps, column blocks))")
    if value["unwritten"]:
        return (f"{value['unwritten']} columns were never written, the first column {first}: each thread writes "
                f"all 4 of its columns that lie inside the tensor, at their own index n")
    return (f"the first wrong column is {value['first_wrong']}: a block's columns are the rest mode's second "
            f"index, its row steps the first; each thread adds, for each of its 4 columns, every row of that "
            f"column")


def _dim0_access(error: str) -> str:
    """What an out-of-bounds access of the learner's kernel says: a store past mOut or a load past mX."""
    found = re.search(r"tensor (\w+) \(shape", error)
    name = found.group(1) if found else ""
    if re.search(r"out", name, flags=re.IGNORECASE):
        return (" (a store past the end of mOut: the last block's columns reach past N, and only the columns "
                "that exist are written)")
    if re.search(r"coordinate \d+ is out of range for shape \d+ ", error):
        return (" (a tile of the divided tensor that does not exist: its rest mode is (row steps, column blocks), "
                "so the block index picks a column block, the rest mode's second index, and the loop walks the "
                "row steps, its first)")
    return (" (a load past the end of mX: every row of a step needs its own predicate, one elem_less per atom, "
            "since the last step reaches past M and the last block past N; cute.copy(..., pred=) skips the "
            "atoms outside)")


def _dim0_criterion(kind: str):
    def judge(context) -> Verdict:
        for outcome in context.outcomes:
            case = outcome.case
            if case["kind"] != kind:
                continue
            where = f"a {case['M']}x{case['N']} sum over dim 0"
            if outcome.error:
                hint = ""
                if "out-of-bounds" in outcome.error or "OutOfBoundsError" in outcome.error:
                    hint = _dim0_access(outcome.error)
                elif "grid=" in outcome.error and "[0," in outcome.error:
                    hint = (f" (a grid of no blocks for {case['N']} columns: the block count must be rounded up, so "
                            f"that a last, partial block takes the columns left over)")
                return failed(f"{where}: {outcome.error.splitlines()[0][:400]}{hint}")
            value = outcome.value
            if value["unwritten"] or value["wrong"]:
                return failed(f"{where}: {value['wrong']} columns differ from torch.sum(x, dim=0) and "
                              f"{value['unwritten']} were never written ({_dim0_story(case, value)})")
        return passed()
    return judge


def _dim0_ptx(context) -> Verdict:
    report, problem = compiled_kernel(context.answer, ("Float32", 2, 4), ("Float32", 1, 4), module="learner_sum_dim0")
    if problem:
        return problem
    loads, vectors = report.count("ld.global"), report.count("ld.global.v4")
    facts = []
    if not vectors:
        facts.append(f"your loads are 32-bit: none of its {loads} global loads is a 128-bit ld.global.v4, so a "
                     f"thread reads one float per instruction where one could move its 4 adjacent columns of a row "
                     f"(N a multiple of 4 and assumed_align=16 put every row on a 16-byte boundary)")
    elif loads != vectors:
        facts.append(f"your loads are not all 128-bit: {loads - vectors} of its {loads} global loads move less "
                     f"than 4 floats at once (ld.global without .v4)")
    elif vectors < ROWS_PER_STEP:
        facts.append(f"{vectors} 128-bit load(s) where a step of the (4, 512) super tile gives each thread "
                     f"{ROWS_PER_STEP}, one per row, all in flight before the first add")
    if report.local_memory:
        facts.append(f"{report.local_memory} local-memory accesses (a register array indexed with a run-time value "
                     f"or spilled registers: index fragments with cutlass.range_constexpr)")
    if facts:
        return failed("compiled for sm_80 with M and N run-time values: " + "; ".join(facts) + ". Right but "
                      "slow: a column sum is limited by how it reads memory")
    return passed()


def gpu_sum_dim0(host, case):
    """Harness (runs on the GPU, real CuTeDSL): the learner's column sum against torch.sum(x, dim=0), then the
    median time of each on the same tensors (the same process, CUDA events)."""
    import torch
    import cutlass.cute as cute
    from cutlass.cute.runtime import from_dlpack

    from .kernels import gpu_median_ms
    generator = torch.Generator(device="cuda").manual_seed(case["M"] + case["N"])
    x = torch.randn(case["M"], case["N"], device="cuda", generator=generator)
    out = torch.full((case["N"],), float("nan"), device="cuda")
    views = [from_dlpack(x, assumed_align=16), from_dlpack(out, assumed_align=16)]
    compiled = cute.compile(host, *views)
    compiled(*views)
    torch.cuda.synchronize()
    differ = ~torch.isclose(out, x.sum(dim=0), rtol=1e-4, atol=1e-2)
    first = differ.nonzero()[:1].flatten().tolist()
    result = {"wrong": int(differ.sum()), "first": first[0] if first else None}
    if not first:
        result["ms"] = gpu_median_ms(lambda: compiled(*views))
        result["torch_ms"] = gpu_median_ms(lambda: torch.sum(x, dim=0))
    return result


def _dim0_gpu(context) -> Verdict:
    from .kernels import on_gpu
    cases = list(GPU_DIM0_CASES)
    reply = on_gpu(context.answer, f"{__name__}:gpu_sum_dim0", cases)
    if not reply.ok:
        return failed(f"on the GPU: {reply.error[:600]}")
    notes = []
    for case, (value, error) in zip(cases, reply.values):
        where = f"a {case['M']}x{case['N']} sum over dim 0 on the GPU"
        if error:
            return failed(f"{where}: {error[:400]}")
        if value["wrong"]:
            return failed(f"{where}: {value['wrong']} columns differ from torch.sum(x, dim=0), the first column "
                          f"{value['first']}")
        notes.append(f"{case['M']}x{case['N']}: {value['ms']:.3f} ms, torch.sum {value['torch_ms']:.3f} ms")
    return Verdict(True, "; ".join(notes) + " (the time is printed, not graded)")


SUM_DIM0 = Exercise(
    id="ch05.sum_dim0",
    statement="Write column_sum_kernel and the rest of sum_dim0(mX, mOut): mOut[n] = sum over m of mX[m, n] for a "
              "contiguous fp32 (M, N) tensor, N a multiple of 4, 128 threads per block, each thread owning 4 "
              "adjacent columns read with 128-bit loads, 4 rows per step of a (4, 512) super tile.",
    example="sum_dim0 on a 6x1000 tensor equals torch.sum(x, dim=0); nothing outside mOut is written",
    rule=("Neighbouring threads read neighbouring addresses: in a row-major tensor the threads of a warp lie "
          "along a row, and a thread's vector of 4 floats is 4 adjacent columns of one row.\n"
          "A thread's fragment of a step is (vector, rows of the step, column tiles): the vector mode holds 4 "
          "different outputs, so the rows are folded and the vector mode is kept.\n"
          "Every atom of every step gets its own predicate from the identity tensor, and the fragment is cleared "
          "before each predicated copy: the last step may reach past M, the last block past N.\n"
          "One block per 512 columns, rounded up; one block walks all the row steps of its columns, so no two "
          "blocks write the same output."),
    cases=_dim0_cases,
    ask=_ask_dim0,
    timeout=180.0,
    criteria=(
        Criterion("a shape the super tile divides: every column's sum", "reference", 1,
                  _dim0_criterion("divisible")),
        Criterion("ragged shapes (M not a multiple of 4, N not a multiple of 512): every column's sum, nothing "
                  "written past N", "reference", 2, _dim0_criterion("ragged")),
        Criterion("compiled for sm_80: every global load 128-bit, at least 4 per step, no local memory",
                  "cutedsl-cpu", 1, _dim0_ptx),
        Criterion("on the GPU: 4096x8192 and 3001x5004 equal torch.sum(x, dim=0) (the time is printed)", "gpu", 1,
                  _dim0_gpu),
    ),
)


EXERCISES = [TILED_COPY_FOR, PARTITION_SHAPE, TILED_COPY_ROW_SUM, CACHE_KEY, SUM_DIM0]


# ---- ch05.capstone_softmax: a row softmax, kernel and launch written from a blank cell -----------------------

SENTINEL = -7.0             # softmax outputs lie in [0, 1]: a -7 left in Y was never written
GPU_THRESHOLD = 0.4         # the learner's kernel reaches at least this fraction of torch.softmax's speed
GPU_SOFTMAX_CASES = ({"M": 8192, "N": 8192}, {"M": 3000, "N": 5001})


def _softmax_cases(rng):
    """Rows of 1024 with M a multiple of 4 (every lane busy, more than one 512-wide step); then ragged shapes: an
    odd M over three blocks of 4 rows, N odd and longer than a 128-wide step; N = 1 in 3 rows; then
    inputs near +1000 (exp overflows without the max subtracted) with N a multiple of 4 and a tail, and near
    -1000 (exp underflows to 0 where something larger than the row, such as padding read as 0, is its max)."""
    torch_ready()
    return [{"M": 4, "N": 1024, "shift": 0.0, "kind": "aligned"},
            {"M": rng.choice([9, 11]), "N": rng.choice([133, 167, 201]), "shift": 0.0, "kind": "ragged"},
            {"M": 3, "N": 1, "shift": 0.0, "kind": "ragged"},
            {"M": 3, "N": 4 * rng.randint(10, 40), "shift": 1000.0, "kind": "large"},
            {"M": rng.choice([2, 3]), "N": rng.choice([67, 101, 133]), "shift": -1000.0, "kind": "large"}]


def _softmax_inputs(case):
    import torch
    generator = torch.Generator().manual_seed(case["M"] * 1000 + case["N"])
    return torch.randn(case["M"], case["N"], generator=generator) * 3 + case["shift"]


def _softmax_facts(x, y) -> dict:
    """What the learner's Y says about the kernel, as plain data: unwritten, non-finite and wrong elements,
    whether the wrong rows are softmax times a number per row (and whether that number is the row's sum of
    exponentials), and what each row's outputs add up to. In NumPy: in the forked sandbox, torch.softmax and
    a max over a dim wait forever for a thread pool the notebook's own torch calls started before the fork."""
    import numpy
    x, y = x.numpy(), y.numpy()
    M, N = x.shape
    exponentials = numpy.exp(x.astype(numpy.float64) - x.max(axis=-1, keepdims=True))
    want = exponentials / exponentials.sum(axis=-1, keepdims=True)
    unwritten = y == SENTINEL
    finite = numpy.isfinite(y)
    written = ~unwritten
    wrong = written & finite & ~numpy.isclose(y, want, rtol=1e-3, atol=1e-6)

    def first(mask):
        return tuple(int(i) for i in numpy.argwhere(mask)[0]) if mask.any() else None

    whole_rows = unwritten.all(axis=-1)
    partly = unwritten.any(axis=-1) & ~whole_rows
    facts = {"M": M, "N": N,
             "unwritten": int(unwritten.sum()), "first_unwritten": first(unwritten),
             "unwritten_rows": [int(r) for r in numpy.flatnonzero(whole_rows)],
             "partly_unwritten_rows": int(partly.sum()),
             "columns_written": int(written[partly].sum()) // max(int(partly.sum()), 1),
             "nonfinite": int((written & ~finite).sum()), "first_nonfinite": first(written & ~finite),
             "zeros": bool((written & finite).any()) and bool((y[written & finite] == 0).all()),
             "wrong": int(wrong.sum()), "first_wrong": first(wrong)}
    bad_rows = [int(r) for r in numpy.flatnonzero(wrong.any(axis=-1) & ~unwritten.any(axis=-1) & finite.all(axis=-1))]
    facts["row_sums"] = [round(float(y[r].astype(numpy.float64).sum()), 4) for r in bad_rows[:8]]
    factors = []
    for r in bad_rows:
        kept = want[r] > 1e-12
        factor = float(numpy.median(y[r][kept] / want[r][kept])) if kept.any() else float("nan")
        factors.append(factor if numpy.allclose(y[r], want[r] * factor, rtol=1e-3, atol=1e-6) else None)
    facts["proportional"] = bool(bad_rows) and all(f is not None for f in factors)
    facts["undivided"] = bool(bad_rows) and all(
        bool(numpy.allclose(y[r], exponentials[r], rtol=1e-3, atol=1e-6)) for r in bad_rows)
    return facts


def _ask_softmax(answer, case):
    import torch
    run, from_dlpack = on_simulator(answer)
    x = _softmax_inputs(case)
    y = torch.full_like(x, SENTINEL)
    started = time.perf_counter()
    run(from_dlpack(x, assumed_align=16), from_dlpack(y, assumed_align=16), 4 if case["N"] % 4 == 0 else 1)
    return {**_softmax_facts(x, y), "seconds": time.perf_counter() - started}


def _softmax_where(case) -> str:
    near = {0.0: "", 1000.0: ", inputs near +1000", -1000.0: ", inputs near -1000"}[case["shift"]]
    return f"a {case['M']}x{case['N']} softmax{near}"


def _softmax_runs(outcome) -> list:
    """(problem, seconds) of the learner's softmax on the simulator, for the result's time lines."""
    value = outcome.value or {}
    return [(_softmax_where(outcome.case), value["seconds"])] if "seconds" in value else []


def _rows_text(rows) -> str:
    return ", ".join(str(r) for r in rows[:6]) + (", ..." if len(rows) > 6 else "")


def _row_range(first: int, last: int) -> str:
    return f"row {first}" if first == last else f"rows {first} to {last}"


def _softmax_story(case, value, tail_free_wrong: bool = False) -> str:
    """Why Y is wrong, from the pattern of what was written. `tail_free_wrong`: the case without a tail (the
    aligned one) came out wrong too, so a ragged case's error is not the tail's."""
    M, N = value["M"], value["N"]
    rows = value["unwritten_rows"]
    if rows:
        first = rows[0]
        step = next((s for s in (2, 4, 8, 16) if M > 1 and all((r % s != 0) == (r in rows) for r in range(M))), None)
        if step:
            return (f"only every {step}th row (0, {step}, ...) was written: a block holds several rows and every "
                    f"warp of the block worked on the block's first row; the row must include the warp's place in "
                    f"the block")
        # a grid rounded down leaves fewer rows than a block holds, after a whole number of blocks
        if rows == list(range(first, M)) and any(first % r == 0 and M - first < r for r in (2, 4, 8, 16, 32)):
            return (f"{_row_range(first, M - 1)} never written: the grid's blocks cover only the first {first} "
                    f"rows; the block count must be rounded up so that a last, partial block takes the rest")
        if rows == list(range(first, M)) and first > 0:
            return (f"{_row_range(first, M - 1)} never written while {_row_range(0, first - 1)} were, with "
                    f"enough blocks for every row: where a block holds several rows, the row a warp works on must "
                    f"count the rows of every block before its own, not only the block's index")
        return (f"rows {_rows_text(rows)} were never written: every row must belong to one group of threads "
                f"of one block")
    if value["partly_unwritten_rows"]:
        return (f"in {value['partly_unwritten_rows']} rows only {value['columns_written']} of the {N} outputs were "
                f"written, the first one missing at (m, n) = {value['first_unwritten']}: one thread of the row's "
                f"group stored its elements and the others did not; every thread stores every element it "
                f"computed, where it is inside the tensor")
    if value["nonfinite"] and case["shift"] > 0:
        return (f"inf or nan at (m, n) = {value['first_nonfinite']} for inputs near +1000: exp(x) overflows fp32 "
                f"above x = 88.7, so exp of the raw inputs is inf and inf / inf is nan; subtract the row's max "
                f"before exp")
    if (value["nonfinite"] or value["zeros"]) and case["shift"] < 0:
        return (f"every output is {'nan or inf' if value['nonfinite'] else '0'} for inputs near -1000: exp of "
                f"each element minus the max you used underflowed to 0, so the max you used was far above the "
                f"row's own (the elements are all near -1000). The padding past the end of the row, read as 0, "
                f"became the max: what a predicated-off element holds must never win the max (or add to the sum)")
    if value["nonfinite"]:
        return (f"inf or nan at (m, n) = {value['first_nonfinite']}: a sum of 0 or an exp of an unbounded value; "
                f"every row's max and sum must come from the whole row, and only from the row")
    if value["undivided"]:
        return ("every output is its element's exponential (the max subtracted), never divided by the row's sum: "
                "the outputs of a row must add up to 1")
    if value["proportional"] and (case["kind"] == "aligned" or tail_free_wrong):
        tail = f"though N = {N} has no tail" if case["kind"] == "aligned" else "and rows with no tail did too"
        return (f"each row's outputs add up to {value['row_sums'][:3]}, not 1, {tail}: the sum "
                f"you divide by is not the sum of the exponentials for the max you subtract at the end (a sum "
                f"gathered while the max still grew holds terms taken against older, smaller maxima: rescale it "
                f"when the max changes)")
    if value["proportional"]:
        return (f"each row's outputs add up to {value['row_sums'][:3]}, less than 1, where N = {N} leaves a tail: "
                f"the sum you divide by is too large. Elements past the end of the row, read as 0, entered the "
                f"sum (each adds exp(0 - max)); what a predicated-off element holds must add nothing to the sum "
                f"(and never win the max)")
    sums = value["row_sums"]
    if sums and all(1.5 < s < 32.5 and abs(s - round(s)) < 0.02 for s in sums):
        return (f"each row's outputs add up to about {round(sums[0])}, not 1: the max and the sum were reduced "
                f"over only part of the threads that hold the row, and each part normalized its own elements; "
                f"reduce over every thread of the row (and only those)")
    return ("the outputs differ from torch.softmax and are not a multiple of it: every output of a row must use "
            "the same max and the same sum, both taken over the whole row")


def _access_story(error: str) -> str:
    """What an out-of-bounds access of the learner's kernel says: a store past Y, a load past X, or either."""
    found = re.search(r"tensor (\w+) \(shape", error)
    name = found.group(1).lower() if found else ""
    if re.search(r"y|out|dst|dest", name):
        return (" (a store past the end of Y: the output is written through the same predicate as the input, one "
                "Boolean per element or vector that says it lies inside the tensor)")
    if re.search(r"x|in|src", name):
        return (" (a load past the end of X: predicate the loads, and give what is not loaded a value that can "
                "neither win the max nor add to the sum)")
    return (" (an access past the end of X or Y: every load and every store goes through a predicate that says "
            "the element lies inside the tensor)")


def _softmax_criterion(kind: str):
    def judge(context) -> Verdict:
        tail_free_wrong = any(o.case["kind"] == "aligned" and not o.error and o.value["proportional"]
                              for o in context.outcomes)
        for outcome in context.outcomes:
            case = outcome.case
            if case["kind"] != kind:
                continue
            where = _softmax_where(case)
            if outcome.error:
                first = outcome.error.splitlines()[0][:400]
                hint = ""
                if "out-of-bounds" in outcome.error:
                    hint = _access_story(outcome.error)
                elif "grid=" in outcome.error and "[0," in outcome.error:
                    hint = (f" (a grid of no blocks for {case['M']} rows: the block count must be rounded up, so that "
                            f"a last, partial block takes the rows left over)")
                return failed(f"{where}: {first}{hint}")
            value = outcome.value
            if value["unwritten"] or value["nonfinite"] or value["wrong"]:
                story = _softmax_story(case, value, tail_free_wrong)
                return failed(f"{where}: {value['wrong']} outputs differ from torch.softmax, {value['nonfinite']} are "
                              f"inf or nan and {value['unwritten']} were never written ({story})")
        return passed()
    return judge


def _softmax_ptx_facts(report) -> list:
    """What a slow kernel's PTX lacks, one phrase each (empty: loads and stores 128-bit, shuffles, no local
    memory)."""
    facts = []
    loads, vectors = report.count("ld.global"), report.count("ld.global.v4")
    if not vectors:
        facts.append(f"your loads are 32-bit: none of its {loads} global loads is a 128-bit ld.global.v4, so a "
                     f"thread reads one float per instruction where one could move 4 consecutive floats of a row "
                     f"(with vector 4 the rows start on 16-byte boundaries, as promised by assumed_align=16)")
    elif loads != vectors:
        facts.append(f"your loads are not all 128-bit: {loads - vectors} of its {loads} global loads move less "
                     f"than 4 floats at once (ld.global without .v4)")
    stores, vector_stores = report.count("st.global"), report.count("st.global.v4")
    if stores != vector_stores:
        facts.append(f"{stores - vector_stores} of its {stores} global stores are narrower than 128 bits (st.global "
                     f"without .v4): Y is written a float at a time where one instruction could write 4")
    if not any(report.count(f"shfl.sync.{kind}") for kind in ("bfly", "down", "up")):
        facts.append("there is no warp shuffle that combines lanes (shfl.sync.bfly, .down or .up): no row's max or "
                     "sum is reduced across the threads of a warp. Where one thread walks a whole row, the 32 lanes "
                     "of a warp read 32 rows N floats apart: 32 memory lines per load instead of one")
    if report.local_memory:
        facts.append(f"{report.local_memory} local-memory accesses (a register array indexed with a run-time value "
                     "or spilled registers: index fragments with cutlass.range_constexpr)")
    return facts


def _softmax_ptx(context) -> Verdict:
    report, problem = compiled_kernel(context.answer, ("Float32", 2, 4), ("Float32", 2, 4), 4, module="learner_softmax")
    if problem:
        return problem
    facts = _softmax_ptx_facts(report)
    if facts:
        return failed("compiled for sm_80 with N a multiple of 4 (vector 4): " + "; ".join(facts) + ". Right but "
                      "slow: a row softmax is limited by memory, and these are what a fast one moves it with")
    return passed()


def gpu_softmax(host, case):
    """Harness (runs on the GPU, real CuTeDSL): the learner's softmax against torch.softmax, then the median
    time of each on the same tensors (the same process, CUDA events)."""
    import torch
    import cutlass.cute as cute
    from cutlass.cute.runtime import from_dlpack

    from .kernels import gpu_median_ms
    generator = torch.Generator(device="cuda").manual_seed(case["M"] + case["N"])
    x = torch.randn(case["M"], case["N"], device="cuda", generator=generator) * 3
    y = torch.full_like(x, SENTINEL)
    vector = 4 if case["N"] % 4 == 0 else 1
    views = [from_dlpack(x, assumed_align=16), from_dlpack(y, assumed_align=16)]
    compiled = cute.compile(host, *views, vector)
    compiled(*views)
    torch.cuda.synchronize()
    differ = ~torch.isclose(y, torch.softmax(x, dim=-1), rtol=1e-3, atol=1e-6)
    first = differ.nonzero()[:1].tolist()
    result = {"wrong": int(differ.sum()), "first": tuple(first[0]) if first else None}
    if not first:
        result["ms"] = gpu_median_ms(lambda: compiled(*views))
        result["torch_ms"] = gpu_median_ms(lambda: torch.softmax(x, dim=-1))
    return result


def _softmax_gpu(context) -> Verdict:
    from .kernels import on_gpu
    cases = list(GPU_SOFTMAX_CASES)
    reply = on_gpu(context.answer, f"{__name__}:gpu_softmax", cases)
    if not reply.ok:
        return failed(f"on the GPU: {reply.error[:600]}")
    notes = []
    for case, (value, error) in zip(cases, reply.values):
        where = f"a {case['M']}x{case['N']} softmax on the GPU"
        if error:
            return failed(f"{where}: {error[:400]}")
        if value["wrong"]:
            return failed(f"{where}: {value['wrong']} outputs differ from torch.softmax, the first at {value['first']}")
        notes.append(f"{case['M']}x{case['N']}: {value['ms']:.3f} ms, torch.softmax {value['torch_ms']:.3f} ms "
                     f"({value['torch_ms'] / value['ms']:.2f} of its speed)")
    first = reply.values[0][0]
    speed = first["torch_ms"] / first["ms"]
    if speed < GPU_THRESHOLD:
        report, problem = compiled_kernel(context.answer, ("Float32", 2, 4), ("Float32", 2, 4), 4,
                                          module="learner_softmax")
        facts = _softmax_ptx_facts(report) if report else []
        why = ("; ".join(facts) if facts else "its PTX has 128-bit loads and stores and shuffles: count how many "
               "times it reads each row (a softmax needs one read of X and one write of Y, 8 bytes per element; "
               "each further read adds 4)")
        return failed(f"right, but {'; '.join(notes)}: below {GPU_THRESHOLD} of torch.softmax's speed on "
                      f"8192x8192. Compiled for sm_80: {why}")
    return Verdict(True, "; ".join(notes))


CAPSTONE_SOFTMAX = Exercise(
    id="ch05.capstone_softmax",
    statement="Capstone: write a kernel and its launch, softmax_rows(mX, mY, vector): Y[m, :] = softmax(X[m, :]) "
              "with the row max subtracted before exp, for a contiguous fp32 (M, N) tensor of any M and N.",
    example="softmax_rows on a 9x601 tensor equals torch.softmax(x, dim=-1); nothing outside Y is written",
    rule=("Softmax is unchanged when the same number is taken from every element of a row; taking the row's largest "
          "makes every exponent at most 0, so nothing overflows.\n"
          "Each thread folds its own elements of a row first (their maximum, then their exponentials' sum), and "
          "the threads of that row combine theirs with a warp reduction over exactly the lanes that hold the row.\n"
          "Elements past N do not exist: they must enter neither the maximum nor the sum, and nothing outside Y "
          "may be written (predicates from an identity tensor, on the way in and on the way out)."),
    cases=_softmax_cases,
    ask=_ask_softmax,
    runs=_softmax_runs,
    timeout=240.0,
    criteria=(
        Criterion("M and N multiples of 4, N = 1024: every row equals torch.softmax", "reference", 1,
                  _softmax_criterion("aligned")),
        Criterion("ragged shapes (M odd over several blocks, N odd past a tile, N = 1): every row equals "
                  "torch.softmax, nothing outside Y written", "reference", 2, _softmax_criterion("ragged")),
        Criterion("inputs near +1000 and -1000: no overflow, no underflow, equal to torch.softmax", "reference", 1,
                  _softmax_criterion("large")),
        Criterion("compiled for sm_80 (N a multiple of 4): 128-bit global loads and stores, warp shuffles that "
                  "reduce, no local memory", "cutedsl-cpu", 1, _softmax_ptx),
        Criterion(f"on the GPU: 8192x8192 and 3000x5001 equal torch.softmax, and 8192x8192 runs at {GPU_THRESHOLD} "
                  "of its speed or more", "gpu", 1, _softmax_gpu),
    ),
)

EXERCISES.append(CAPSTONE_SOFTMAX)     # the chapter's capstone, its last exercise
