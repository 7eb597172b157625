"""Chapter 07 exercises: the tensor-core GEMM's layouts (TiledMMA, swizzle, pipeline stages, S2R copy), its
main loop, and the capstone: a whole GEMM, C = alpha A B + beta C with B stored (K, N), from an empty cell.

Layout answers are asked on random warp arrangements, row widths and pipeline depths, so an answer tuned to
the chapter's 128x128x64 kernel meets other cases; every draw holds the cases where the usual wrong rules
differ (a 4x2 or 2x4 warp grid, rows of 32 and 256 bytes of both element sizes, rings of 2 to 5 stages with
fewer k-tiles in flight than they could hold and with stages - 1, fewer k-tiles than that, both operands in
both major orders). The swizzle is graded by counting bank conflicts with the simulator's bank model
(`cutekit.sim.wavefronts`); the S2R copy by simulating it on a tile of known values and comparing every
thread's registers with the MMA's fragment; the main loop runs inside a small tensor-core GEMM on the
simulator, which reports wrong results and shared-memory races by name, and is
compiled with real CuTeDSL for sm_80 (its PTX read) where CuTeDSL is installed. The capstone runs on the
simulator on three ragged problems and is told what C holds instead when it is wrong (NaN from shared memory no
copy wrote, an old k-tile in a reused stage, B read K-contiguous, alpha or beta misapplied, cells never
written); its PTX is read for the fast path (cp.async.cg, a pipeline, ldmatrix .trans, mma.sync), and on a GPU
it is timed against torch.
"""
from __future__ import annotations

import functools
import inspect
import re
import tempfile
import time
import types
from pathlib import Path

from .common import case_text, compile_notebook_kernel, each_outcome
from .cutedsl import FakeTensor, NotMovable, compile_to_ptx, module_source, run_in_cutedsl
from .grading import Criterion, Exercise, Verdict, failed, passed
from .kernels import (decorated_with_jit, gpu_median_ms, kernel_module_source, on_gpu, simulate, unwrap,
                      use_the_simulator)

THIS_MODULE = __name__


def _warp_cases(rng, count):
    """`count` distinct (warps_m, warps_n) arrangements. The first is always 4x2 or 2x4: both modes above 1 and
    unequal, where M-fastest and N-fastest numbering, a swapped shape and the chapter's 2x2 all differ."""
    wide = rng.choice([(4, 2), (2, 4)])
    others = [(1, 1), (2, 1), (1, 2), (2, 2), (4, 1), (1, 4), (4, 2), (2, 4)]
    return [wide] + rng.sample([arrangement for arrangement in others if arrangement != wide], count - 1)


def _fp16_atom(cute):
    return cute.nvgpu.warp.MmaF16BF16Op(cute.Float16, cute.Float32, (16, 8, 16))


def exercise_tiled_mma(warps_m, warps_n):
    """Exercise 1's answer: m16n8k16 atoms (fp16 in, fp32 accumulators) on warps_m x warps_n warps numbered
    N-fastest, each warp covering 16 rows and two n8 atoms."""
    from cutekit import cute
    return cute.make_tiled_mma(_fp16_atom(cute), cute.make_layout((warps_m, warps_n, 1), stride=(warps_n, 1, 0)),
                               permutation_mnk=(16 * warps_m, 16 * warps_n, 16))


def kernel_tiled_mma(warps_m, warps_n, atoms_n=2):
    """The kernel's TiledMMA generalized (warps M-fastest, `atoms_n` n8 atoms per warp; the kernel has two):
    what exercise 4 is given."""
    from cutekit import cute
    return cute.make_tiled_mma(_fp16_atom(cute), cute.make_layout((warps_m, warps_n, 1)),
                               permutation_mnk=(16 * warps_m, 8 * atoms_n * warps_n, 16))


def _learner_in_cutedsl(answer, wrapper: str, calls: list):
    """Run `wrapper` (source defining `_ch07_facts`, calling the learner's function by `{name}`) under real
    CuTeDSL, with the learner's function moved there by source (`cute` becomes `cutlass.cute`)."""
    from .cutedsl import WorkerReply
    try:
        source = module_source(answer)
    except NotMovable as why:
        return WorkerReply(False, error=str(why))
    with tempfile.TemporaryDirectory(prefix="cutekit-ch07-") as folder:
        path = Path(folder) / "learner_answer.py"
        path.write_text(source + "\n\n" + wrapper.replace("{name}", answer.__name__) + "\n")
        return run_in_cutedsl(str(path), "_ch07_facts", calls)


def _cutedsl_builds_the_same(wrapper: str, arguments, learner_text):
    """A cutedsl-cpu criterion: real CuTeDSL, running the learner's own function on each case, builds what
    cutekit built from it (`learner_text(outcome.value)`); cases whose answer raised are left to the reference
    criteria, which report them."""
    def judge(context) -> Verdict:
        outcomes = [outcome for outcome in context.outcomes if not outcome.error]
        if not outcomes:
            return failed("your function raised on every case (see the other criteria)")
        reply = _learner_in_cutedsl(context.answer, wrapper, [arguments(outcome.case) for outcome in outcomes])
        if not reply.ok:
            return failed(f"CuTeDSL could not run your function: {reply.error[:600]}")
        for outcome, (value, error) in zip(outcomes, reply.values):
            if error:
                return failed(f"{case_text(outcome.case)}: under real CuTeDSL your function raised {error}")
            if value != learner_text(outcome.value):
                return failed(f"{case_text(outcome.case)}: real CuTeDSL builds\n{value.replace('|', chr(10))}\nfrom your "
                              f"function; cutekit built\n{learner_text(outcome.value).replace('|', chr(10))}")
        return passed()
    return judge


# ---- ch07.tiled_mma -------------------------------------------------------------------------------------------

def _mma_cases(rng):
    return [{"warps_m": m, "warps_n": n} for m, n in _warp_cases(rng, 4)]


def _layout_values(layout) -> list:
    from cutekit import cute
    return [layout(index) for index in range(cute.size(layout))]


def _mma_facts(tiled_mma) -> dict:
    if not hasattr(tiled_mma, "tv_layout_C_tiled"):
        raise TypeError(f"expected a TiledMMA made with cute.make_tiled_mma, got {type(tiled_mma).__name__}: "
                        f"{tiled_mma!r:.80}")
    vmnk = tiled_mma.thr_layout_vmnk
    warps = tuple(vmnk.shape[1:3])
    return {"vmnk": str(vmnk), "warps": warps,
            # the thread number of lane 0 of each warp (warp_m, warp_n), warp_m slowest
            "warp_threads": [vmnk((0, m, n, 0)) for m in range(warps[0]) for n in range(warps[1])],
            "tile": tuple(tiled_mma.get_tile_size(i) for i in range(3)),
            "A": str(tiled_mma.tv_layout_A_tiled), "B": str(tiled_mma.tv_layout_B_tiled),
            "C": str(tiled_mma.tv_layout_C_tiled), "op": str(tiled_mma.op)}


@functools.lru_cache(maxsize=64)
def _mma_reference(warps_m, warps_n) -> dict:
    return _mma_facts(exercise_tiled_mma(warps_m, warps_n))


@functools.lru_cache(maxsize=64)
def _mma_reference_values(warps_m, warps_n) -> list:
    return _layout_values(exercise_tiled_mma(warps_m, warps_n).tv_layout_C_tiled)


def _ask_mma(answer, case):
    tiled_mma = answer(case["warps_m"], case["warps_n"])
    facts = _mma_facts(tiled_mma)
    if facts["C"] != _mma_reference(case["warps_m"], case["warps_n"])["C"]:
        # another way of printing the same map (strides of size-1 modes)? compare the thread -> element values
        facts["C_same_map"] = (_layout_values(tiled_mma.tv_layout_C_tiled)
                               == _mma_reference_values(case["warps_m"], case["warps_n"]))
    return facts


@each_outcome
def _mma_op(outcome) -> Verdict | None:
    want = _mma_reference(outcome.case["warps_m"], outcome.case["warps_n"])["op"]
    if outcome.value["op"] != want:
        return failed(f"{case_text(outcome.case)}: the atom is\n{outcome.value['op']}\nit should be\n{want}\n"
                      "(MmaF16BF16Op(Float16, Float32, (16, 8, 16)): fp16 in, fp32 accumulators, the m16n8k16 shape)")
    return None


@each_outcome
def _mma_warps(outcome) -> Verdict | None:
    m, n = outcome.case["warps_m"], outcome.case["warps_n"]
    want, got = _mma_reference(m, n), outcome.value
    if got["warps"] == want["warps"] and got["warp_threads"] == want["warp_threads"]:
        return None
    where = case_text(outcome.case)
    if got["warps"] != (m, n):
        a, b = got["warps"]
        if (a, b) == (n, m):
            return failed(f"{where}: the warp layout is warps_n x warps_m ({a}x{b}, thread layout {got['vmnk']}): its "
                          f"shape should be (warps_m, warps_n, 1) = ({m}, {n}, 1)")
        return failed(f"{where}: you built {a}x{b} warps; this case asks for {m}x{n} warps (the shape comes from "
                      "the arguments, (warps_m, warps_n, 1))")
    m_fastest = [32 * (wm + m * wn) for wm in range(m) for wn in range(n)]
    if got["warp_threads"] == m_fastest:
        return failed(f"{where}: your warps are numbered M-fastest (thread layout {got['vmnk']}: warp_m has stride "
                      f"32, make_layout's default column-major order); the exercise numbers them N-fastest, warp "
                      f"(warp_m, warp_n) = warp_m * warps_n + warp_n, so the next warp is the next warp_n: thread "
                      f"layout {want['vmnk']}")
    return failed(f"{where}: the thread layout is {got['vmnk']}; warp (warp_m, warp_n) should be warp number "
                  f"warp_m * warps_n + warp_n, thread layout {want['vmnk']}")


@each_outcome
def _mma_tile(outcome) -> Verdict | None:
    m, n = outcome.case["warps_m"], outcome.case["warps_n"]
    want, got = _mma_reference(m, n)["tile"], outcome.value["tile"]
    if got == want:
        return None
    where = case_text(outcome.case)
    if outcome.value["warps"] != (m, n):
        a, b = outcome.value["warps"]
        return failed(f"{where}: the tile (M, N, K) is {got}, made for {a}x{b} warps; this case asks for {m}x{n} "
                      f"warps, a tile of {want}")
    if got == (16 * m, 8 * n, 16):
        return failed(f"{where}: the tile (M, N, K) is {got}: one n8 atom per warp. A permutation_mnk that "
                      f"makes the tile {want} gives each warp a second n8 atom")
    return failed(f"{where}: the tile (M, N, K) is {got}, so each warp covers {got[0] // m} rows x {got[1] // n} "
                  f"columns; it should be {want}: 16 rows and two n8 atoms (16 columns) per warp, through "
                  "permutation_mnk")


@each_outcome
def _mma_elements(outcome) -> Verdict | None:
    want, got = _mma_reference(outcome.case["warps_m"], outcome.case["warps_n"]), outcome.value
    for operand in ("A", "B", "C"):
        if got[operand] != want[operand] and not (operand == "C" and got.get("C_same_map")):
            return failed(f"{case_text(outcome.case)}: tv_layout_{operand}_tiled is {got[operand]}; it should be "
                          f"{want[operand]} (the warps' order and the permutation decide which thread holds what)")
    return None


TILED_MMA_WRAPPER = '''
def _ch07_facts(warps_m, warps_n):
    tiled = {name}(warps_m, warps_n)
    return "|".join([str(tiled.tv_layout_A_tiled), str(tiled.tv_layout_B_tiled), str(tiled.tv_layout_C_tiled),
                     str([int(tiled.get_tile_size(i)) for i in range(3)])])
'''


def _mma_text(value) -> str:
    return "|".join([value["A"], value["B"], value["C"], str(list(value["tile"]))])


TILED_MMA = Exercise(
    id="ch07.tiled_mma",
    statement="Write tiled_mma_for(warps_m, warps_n): fp16 mma.sync.m16n8k16 atoms with fp32 accumulators on "
              "warps_m x warps_n warps numbered N-fastest, permuted so every warp covers 16 rows and two n8 atoms.",
    example="tiled_mma_for(4, 2) prints Thr Layout VMNK: (32,4,2,1):(1,64,32,0), Permutation MNK: (64:1,32:1,16:1)",
    rule=("make_tiled_mma(atom, atom layout, permutation_mnk): the atom layout places the warps over (M, N, K) and "
          "its strides number them; N-fastest numbering means the next warp is the next along N.\n"
          "permutation_mnk sets the tile the warps cover together; each warp here covers the atom's 16 rows and two "
          "n8 atoms, 16 columns."),
    cases=_mma_cases,
    ask=_ask_mma,
    criteria=(
        Criterion("the atom: fp16 inputs, fp32 accumulators, 16x8x16", "reference", 1, _mma_op),
        Criterion("warps_m x warps_n warps, numbered N-fastest", "reference", 1, _mma_warps),
        Criterion("the tile is (16 warps_m, 16 warps_n, 16): two n8 atoms per warp", "reference", 1, _mma_tile),
        Criterion("every thread holds the A, B and C elements asked for", "reference", 1, _mma_elements),
        Criterion("real CuTeDSL, running your function, builds the layouts cutekit built", "cutedsl-cpu", 1,
                  _cutedsl_builds_the_same(TILED_MMA_WRAPPER, lambda case: (case["warps_m"], case["warps_n"]),
                                           _mma_text)),
    ),
)


# ---- ch07.swizzle ---------------------------------------------------------------------------------------------

SHORT_ROWS = [(16, 16), (8, 32)]           # (row elements, element bits): 32-byte rows, 4 share a 128-byte line
LONG_ROWS = [(128, 16), (64, 32)]          # 256-byte rows: 16 chunks, more than the 8 the banks hold
LINE_ROWS = [(64, 16), (32, 32)]           # 128-byte rows
WORKED = {(3, 3, 3): "rows of 128 bytes of fp16 (the kernel's)", (2, 3, 3): "rows of 64 bytes of fp16"}


def _swizzle_cases(rng):
    """Four row shapes: always a 32-byte row and a 256-byte row, and both element sizes (section 4 worked 128-
    and 64-byte rows of fp16; 64-byte rows are never asked)."""
    while True:
        picked = [rng.choice(SHORT_ROWS), rng.choice(LONG_ROWS)]
        picked += rng.sample([row for row in SHORT_ROWS + LONG_ROWS + LINE_ROWS if row not in picked], 2)
        if {bits for _, bits in picked} == {16, 32}:
            rng.shuffle(picked)
            return [{"row_elements": row, "element_bits": bits} for row, bits in picked]


def reference_swizzle(row_elements: int, element_bits: int) -> tuple:
    vector = 128 // element_bits                       # elements per 16-byte chunk
    M = vector.bit_length() - 1
    B = min(row_elements // vector, 8).bit_length() - 1
    line = max(row_elements, 1024 // element_bits)     # a row, or a 128-byte line when rows are shorter
    return (B, M, line.bit_length() - 1 - M)


@functools.lru_cache(maxsize=256)
def _bank_counts(swizzle_bits: tuple, row_elements: int, element_bits: int) -> dict:
    """Conflicts of the ldmatrix reads and the cp.async writes of two 8-row atoms, each request served as the
    hardware serves 16-byte accesses (8 lanes per phase), and the 16-byte vectors the swizzle splits."""
    from cutekit import cute
    from cutekit.sim import wavefronts
    B, M, S = swizzle_bits
    swizzle = cute.make_swizzle(B, M, S)
    element_bytes = element_bits // 8
    vector = 16 // element_bytes
    chunks = row_elements // vector
    rows = 16

    def address(row, chunk):
        return swizzle(row * row_elements + chunk * vector) * element_bytes

    split = 0
    for row in range(rows):
        for chunk in range(chunks):
            first = swizzle(row * row_elements + chunk * vector)
            if first % vector or any(swizzle(row * row_elements + chunk * vector + i) != first + i
                                     for i in range(vector)):
                split += 1
    reads = 0
    for first_row in range(0, rows, 8):           # ldmatrix: 8 lanes give the same chunk of 8 consecutive rows
        for chunk in range(chunks):
            lanes = [(lane, [address(first_row + lane, chunk)]) for lane in range(8)]
            reads += wavefronts(lanes, 16) - 1
    writes = 0
    order = [(row, chunk) for row in range(rows) for chunk in range(chunks)]   # lanes walk along the rows
    for start in range(0, len(order), 8):
        lanes = [(lane, [address(*order[start + lane])]) for lane in range(8)]
        writes += wavefronts(lanes, 16) - 1
    return {"split": split, "reads": reads, "writes": writes}


def _ask_swizzle(answer, case):
    value = answer(case["row_elements"], case["element_bits"])
    if not isinstance(value, (tuple, list)) or len(value) != 3 or not all(isinstance(v, int) for v in value):
        raise TypeError(f"expected a tuple (B, M, S) of three ints, got {value!r}")
    B, M, S = value
    if not all(0 <= v <= 8 for v in value):
        raise ValueError(f"(B, M, S) = {tuple(value)}: each should be between 0 and 8 for a shared-memory atom")
    if S < B:
        raise ValueError(f"Swizzle<{B},{M},{S}>: S = {S} is smaller than B = {B}, so the bits XORed from "
                         "[M+S, M+S+B) would overlap the bits XORed into [M, M+B) (CuTe refuses it); S is the "
                         "distance from the chunk bits up to the row bits")
    return tuple(value)


def _swizzle_parameters(case, bits) -> str:
    """What is wrong with each of B, M, S against the rule of section 4, for this row shape."""
    row, element_bits = case["row_elements"], case["element_bits"]
    row_bytes, vector = row * element_bits // 8, 128 // element_bits
    chunks = row // vector
    want = reference_swizzle(row, element_bits)
    B, M, S = bits
    notes = []
    if tuple(bits) in WORKED and tuple(bits) != want:
        notes.append(f"Swizzle<{B},{M},{S}> is section 4's answer for {WORKED[tuple(bits)]}; these rows are "
                     f"{row_bytes} bytes of {element_bits}-bit values")
    if M != want[1]:
        notes.append(f"M = {M}, but a 16-byte chunk of {element_bits}-bit values is {vector} elements: M = {want[1]}")
    if B < want[0]:         # more bits than needed only moves rows' chunks further: not a conflict
        cap = " (3 bits are enough: 8 chunks of 16 bytes fill the 32 banks)" if chunks > 8 else ""
        notes.append(f"B = {B}, but a row of {row_bytes} bytes has {chunks} chunks of 16 bytes, so the 8 rows of a "
                     f"read need B = {want[0]} chunk bits XORed{cap}")
    if S != want[2]:
        first_row_bit = want[1] + want[2]
        if row_bytes < 128:
            why = (f"{128 // row_bytes} rows share a 128-byte line and already sit in different banks, so the row "
                   f"bits to XOR start above them, at offset bit {first_row_bit}")
        else:
            why = f"the row number starts at offset bit log2({row}) = {first_row_bit}"
        notes.append(f"S = {S}: {why}, so S = {first_row_bit} - M = {want[2]}")
    return "; ".join(notes)


def _swizzle_criterion(key: str, fact) -> "callable":
    @each_outcome
    def judge(outcome) -> Verdict | None:
        case = outcome.case
        counts = _bank_counts(outcome.value, case["row_elements"], case["element_bits"])
        if counts[key]:
            row_bytes = case["row_elements"] * case["element_bits"] // 8
            return failed(f"rows of {case['row_elements']} x {case['element_bits']}-bit values ({row_bytes} bytes), "
                          f"Swizzle<{','.join(map(str, outcome.value))}>: {fact(case, counts)}. "
                          f"{_swizzle_parameters(case, outcome.value)}")
        return None
    return judge


SWIZZLE = Exercise(
    id="ch07.swizzle",
    statement="Write swizzle_for(row_elements, element_bits): (B, M, S) of the Swizzle that makes the cp.async "
              "writes and the ldmatrix reads of a K-major shared-memory atom (8 rows of row_elements) conflict-free.",
    example="swizzle_for(64, 16) == (3, 3, 3) and swizzle_for(32, 16) == (2, 3, 3): section 4's two fp16 atoms",
    rule=("Swizzle<B, M, S> leaves the lowest M bits of an offset alone and XORs B bits, taken S bits higher, into "
          "the B bits above them: M keeps one 16-byte vector whole, B sets how many chunk positions of a row are "
          "permuted, S where the row number starts.\n"
          "Conflict-free: the 8 rows that one ldmatrix (or one round of cp.async) touches must spread their 16-byte "
          "chunks over different banks; rows that already share a 128-byte line sit in different banks by "
          "themselves."),
    cases=_swizzle_cases,
    ask=_ask_swizzle,
    criteria=(
        Criterion("16-byte vectors stay whole", "reference", 1, _swizzle_criterion(
            "split", lambda case, counts: f"{counts['split']} of the 16-byte vectors are split apart, so a 128-bit "
                                          "cp.async or ldmatrix row no longer lands in 16 contiguous bytes")),
        Criterion("the ldmatrix reads are conflict-free", "reference", 2, _swizzle_criterion(
            "reads", lambda case, counts: f"the ldmatrix reads (chunk c of 8 consecutive rows) need {counts['reads']} "
                                          "extra passes")),
        Criterion("the cp.async writes are conflict-free", "reference", 1, _swizzle_criterion(
            "writes", lambda case, counts: f"the cp.async writes (consecutive lanes along a row) need "
                                           f"{counts['writes']} extra passes")),
    ),
)


# ---- ch07.pipeline_stages -------------------------------------------------------------------------------------

EXAMPLE_RING = (4, 2)          # the statement's example: 4 stages, 2 k-tiles ahead


def _pipeline_cases(rng):
    """Fewer k-tiles in flight than the ring could hold (3 stages 1 ahead, 4-5 stages 2-3 ahead, several laps
    each), 2 stages 1 ahead and 4-5 stages stages - 1 ahead (section 6's depth), and fewer k-tiles than
    `ahead`. Never the statement's example."""
    deep = rng.choice([4, 5])
    full = rng.choice([4, 5])
    return [{"k_tiles": rng.randint(6, 10), "stages": 3, "ahead": 1},
            {"k_tiles": rng.randint(8, 12), "stages": deep, "ahead": rng.randint(2, deep - 2)},
            {"k_tiles": rng.randint(4, 8), "stages": 2, "ahead": 1},
            {"k_tiles": rng.randint(6, 9), "stages": full, "ahead": full - 1},
            {"k_tiles": rng.randint(1, 2), "stages": rng.choice([4, 5]), "ahead": 3}]


def reference_schedule(k_tiles: int, stages: int, ahead: int) -> list:
    """Iteration k reads the stage holding k-tile k and loads k-tile k + ahead while there is one; the ring
    goes round all `stages` stages in turn, so k-tile j lives in stage j % stages."""
    plan = []
    for k_tile in range(k_tiles):
        upcoming = k_tile + ahead
        plan.append((k_tile % stages, upcoming % stages, upcoming) if upcoming < k_tiles else (k_tile % stages, None, None))
    return plan


def _section_6_refill(k_tiles: int, stages: int, ahead: int) -> list:
    """Section 6's bookkeeping with `ahead` put in: each refill into the stage read in the iteration before."""
    plan, read_stage, write_stage = [], 0, stages - 1
    for k_tile in range(k_tiles):
        upcoming = k_tile + ahead
        plan.append((read_stage, write_stage, upcoming) if upcoming < k_tiles else (read_stage, None, None))
        write_stage, read_stage = read_stage, (read_stage + 1) % stages
    return plan


def _ask_pipeline(answer, case):
    plan = answer(case["k_tiles"], case["stages"], case["ahead"])
    if not isinstance(plan, (list, tuple)) or not all(isinstance(step, (list, tuple)) and len(step) == 3 for step in plan):
        raise TypeError(f"expected a list of (read_stage, write_stage, loaded_k_tile) tuples, got {plan!r:.120}")
    if len(plan) != case["k_tiles"]:
        raise ValueError(f"expected one step per k-tile ({case['k_tiles']}), got {len(plan)}")
    return [tuple(None if v is None else int(v) for v in step) for step in plan]


def _pipeline_note(case, plan) -> str:
    """The mistake this case's plan is exactly, in words; "" if none."""
    k_tiles, stages, ahead = case["k_tiles"], case["stages"], case["ahead"]
    if plan == reference_schedule(k_tiles, stages, ahead):
        return ""
    if ahead != stages - 1 and plan == reference_schedule(k_tiles, stages, stages - 1):
        return (f" (this is section 6's schedule, stages - 1 = {stages - 1} k-tiles ahead; this case keeps "
                f"{ahead} ahead)")
    if plan == _section_6_refill(k_tiles, stages, ahead):
        return (" (each refill went into the stage read in the iteration before, as in section 6: that is where "
                "the next k-tile goes only when stages - 1 are in flight; with fewer ahead the ring still goes "
                "round every stage in turn, and the stage refilled lies further on)")
    if (stages, ahead) != EXAMPLE_RING and plan == reference_schedule(k_tiles, *EXAMPLE_RING):
        return f" (this is the example's ring, 4 stages and 2 ahead; this case has {stages} stages, {ahead} ahead)"
    if all(step[0] == k % ahead for k, step in enumerate(plan)):
        return (f" (your reads go round a ring of {ahead} stage{'s' if ahead > 1 else ''}, the number of k-tiles "
                f"ahead; the ring has all {stages} stages)")
    return ""


def _replay(case, plan):
    """Play the schedule against the stages' contents; the first problem as (kind, text), or None."""
    stages, k_tiles, ahead = case["stages"], case["k_tiles"], case["ahead"]
    holds = {stage: stage for stage in range(min(ahead, k_tiles))}       # filled before the loop
    for k_tile, (read, write, loaded) in enumerate(plan):
        if holds.get(read) != k_tile:
            where = next((s for s, k in holds.items() if k == k_tile), None)
            place = (f"k-tile {k_tile} is in stage {where}" if where is not None else
                     f"k-tile {k_tile} was never loaded into any stage")
            held = "nothing yet" if holds.get(read) is None else f"k-tile {holds[read]}"
            return "read", (f"iteration {k_tile} reads stage {read}, which holds {held}; {place} "
                            f"(the prologue put k-tile s in stage s, and each refill goes where your schedule put "
                            f"it)")
        if write is not None:
            if write == read:
                return "write", (f"iteration {k_tile} refills stage {write} while it multiplies from it: a race; "
                                 "refill a stage whose k-tile has been multiplied")
            if holds.get(write) is not None and holds[write] > k_tile:
                return "write", (f"iteration {k_tile} refills stage {write}, which still holds k-tile {holds[write]} "
                                 "that has not been multiplied yet")
            if not 0 <= write < stages:
                return "write", f"iteration {k_tile} writes stage {write}, there are only {stages}"
            holds[write] = loaded
    return None


def _pipeline_criterion(kind: str) -> "callable":
    @each_outcome
    def judge(outcome) -> Verdict | None:
        found = _replay(outcome.case, outcome.value)
        if found and (kind == "read" or found[0] == kind):
            if kind == "write" or found[0] == "read":
                return failed(f"{case_text(outcome.case)}: {found[1]}{_pipeline_note(outcome.case, outcome.value)}")
        return None
    return judge


@each_outcome
def _loads_criterion(outcome) -> Verdict | None:
    case = outcome.case
    want = [step[2] for step in reference_schedule(case["k_tiles"], case["stages"], case["ahead"])]
    got = [step[2] for step in outcome.value]
    if got == want:
        return None
    late = [k for k in got if k is not None and k >= case["k_tiles"]]
    missing = [k for k in want if k is not None and k not in got]
    if late:
        why = f"k-tile {late[0]} does not exist (there are {case['k_tiles']}): load None once none is left"
    elif missing and all(k is None or k in want for k in got):
        why = (f"k-tile {missing[0]} is never loaded: each iteration loads the k-tile `ahead` after the one it "
               "multiplies, as long as there is one")
    else:
        why = (f"each iteration loads the k-tile `ahead` = {case['ahead']} after the one it multiplies (that many "
               "are in flight ahead of it)")
    return failed(f"{case_text(case)}: the loaded k-tiles are {got}, they should be {want}: {why}"
                  f"{_pipeline_note(case, outcome.value)}")


PIPELINE_STAGES = Exercise(
    id="ch07.pipeline_stages",
    statement="Write schedule(k_tiles, stages, ahead): for each main-loop iteration of a ring of `stages` stages "
              "that keeps `ahead` k-tiles in flight, (read_stage, write_stage, loaded_k_tile), with "
              "(read_stage, None, None) when no k-tile is left to load.",
    example="schedule(6, 4, 2) == [(0, 2, 2), (1, 3, 3), (2, 0, 4), (3, 1, 5), (0, None, None), (1, None, None)]",
    rule=("The iteration that multiplies k-tile k reads the stage holding it and loads the k-tile `ahead` after "
          "it; the refills go round the whole ring of stages in turn, after the prologue's.\n"
          "A refill may only go into a stage whose k-tile has been multiplied; with fewer than stages - 1 ahead, "
          "that is not the stage read in the previous iteration. Once no k-tile is left to load, an iteration "
          "loads nothing."),
    cases=_pipeline_cases,
    ask=_ask_pipeline,
    criteria=(
        Criterion("each iteration reads the stage that holds its k-tile", "reference", 2, _pipeline_criterion("read")),
        Criterion("each refill goes to a stage nobody still needs", "reference", 1, _pipeline_criterion("write")),
        Criterion("it loads the k-tile `ahead` after the one it multiplies, and nothing past the last k-tile",
                  "reference", 1, _loads_criterion),
    ),
)


# ---- ch07.s2r_copy --------------------------------------------------------------------------------------------

S2R_K = 32          # the simulated tile's K: two k-blocks


def _s2r_cases(rng):
    """Five cases on every draw, each on its own arrangement of at most 4 warps (each case is simulated): both
    operands in both major orders, B with one, two and three n8 atoms per warp (x2, x4, x2: the three atoms hold
    12 values of B per thread, a whole number of x4s, and still no x4 fits) and A with one or three, the first two
    with warps_m != warps_n, where A's and B's tiles differ in size."""
    a_atoms = rng.choice([1, 3])
    uneven = [rng.choice([(2, 1), (4, 1)] if a_atoms == 1 else [(2, 1)]),
              rng.choice([(1, 2), (1, 4)])]     # B's one atom per warp on 2 or 4 warps along N: N = 16 or 32
    rest = rng.sample([(1, 1), (2, 2), (2, 1), (1, 2)], 3)
    arrangements = uneven + rest
    kinds = [("A", "MN", a_atoms), ("B", "K", 1), ("B", "MN", 2), ("B", "K", 3), ("A", "K", 2)]
    cases = []
    for (m, n), (operand, major, atoms_n) in zip(arrangements, kinds):
        if atoms_n == 3 and m * n > 2:          # three atoms on at most two warps: the simulated tile stays small
            m, n = (1, 2) if n > 1 else (2, 1)
        cases.append({"warps_m": m, "warps_n": n, "atoms_n": atoms_n, "operand": operand, "major": major})
    return cases


def s2r_matrices(case) -> int:
    """Chapter 06 section 7's rule on the kernel's TiledMMA: A of m16n8k16 takes x4 over any warp tile; B's value
    modes are (4, atoms_n, 1) per warp, so x4 fits only where the n8 atoms per warp come in pairs."""
    # the first two cases have warps_m != warps_n; B's one-atom case has warps_n > 1, where the TiledMMA's N is a
    # multiple of 16 although one warp's is not
    return 4 if case["operand"] == "A" or case["atoms_n"] % 2 == 0 else 2


@functools.lru_cache(maxsize=8)
def _ldmatrix_layouts() -> dict:
    """(src, dst) TV layouts of each ldmatrix atom -> (transposed, matrices)."""
    from cutekit import cute
    table = {}
    for matrices in (1, 2, 4):
        for transpose in (False, True):
            atom = cute.make_copy_atom(cute.nvgpu.warp.LdMatrix8x8x16bOp(transpose, matrices), cute.Float16)
            table[(str(atom.layout_src_tv), str(atom.layout_dst_tv))] = (transpose, matrices)
    return table


def _copy_facts(tiled_copy) -> dict:
    if not hasattr(tiled_copy, "layout_tv_tiled"):
        raise TypeError(f"expected a TiledCopy, got {type(tiled_copy).__name__}: {tiled_copy!r:.80}")
    src, dst = str(tiled_copy.layout_src_tv), str(tiled_copy.layout_dst_tv)
    return {"src": src, "dst": dst, "ldmatrix": _ldmatrix_layouts().get((src, dst)),
            "tiled": str(tiled_copy.layout_tv_tiled), "tiler": [str(mode) for mode in tiled_copy.tiler_mn]}


def _reference_s2r(case, operand=None, transpose=None):
    from cutekit import cute
    operand = operand or case["operand"]
    transpose = case["major"] == "MN" if transpose is None else transpose
    atom = cute.make_copy_atom(cute.nvgpu.warp.LdMatrix8x8x16bOp(transpose, s2r_matrices(dict(case, operand=operand))),
                               cute.Float16)
    make = cute.make_tiled_copy_A if operand == "A" else cute.make_tiled_copy_B
    return make(atom, kernel_tiled_mma(case["warps_m"], case["warps_n"], case["atoms_n"]))


def _simulated_s2r(tiled_copy, case) -> dict:
    """Run `tiled_copy` on cutekit's simulator: the operand's tile (rows x 32, K- or MN-contiguous in shared
    memory) holds value r * 32 + k at (r, k); each thread copies its part into its MMA fragment through
    `retile`. Returns the first register that differs from the MMA's fragment, or the error the copy raised.
    Runs in the check's forked sandbox, where switching `cutlass` to the simulator touches nothing else."""
    import numpy

    import cutekit
    from cutekit import cute as reference
    cutekit.use("sim")
    import cutlass
    import cutlass.cute as cute
    from cutlass.cute.runtime import from_dlpack

    warps_m, warps_n, atoms_n, operand = case["warps_m"], case["warps_n"], case["atoms_n"], case["operand"]
    rows = _s2r_rows(case)
    threads = 32 * warps_m * warps_n
    stride = (S2R_K, 1) if case["major"] == "K" else (1, rows)
    mma = cute.make_tiled_mma(cute.nvgpu.warp.MmaF16BF16Op(cutlass.Float16, cutlass.Float32, (16, 8, 16)),
                              cute.make_layout((warps_m, warps_n, 1)),
                              permutation_mnk=(16 * warps_m, 8 * atoms_n * warps_n, 16))
    per_thread = rows * S2R_K // threads

    @cute.kernel
    def copy_kernel(mX: cute.Tensor, mOut: cute.Tensor):
        tidx, _, _ = cute.arch.thread_idx()
        sX = cutlass.memory.SmemAllocator().allocate_tensor(cutlass.Float16, cute.make_layout((rows, S2R_K), stride=stride), 16)
        for i in range(per_thread):
            sX[tidx + threads * i] = mX[tidx + threads * i]
        cute.arch.sync_threads()
        thread_mma = mma.get_slice(tidx)
        if operand == "A":
            fragment = mma.make_fragment_A(thread_mma.partition_A(sX))
        else:
            fragment = mma.make_fragment_B(thread_mma.partition_B(sX))
        fragment.fill(-1.0)
        thread_copy = tiled_copy.get_slice(tidx)
        cute.copy(tiled_copy, thread_copy.partition_S(sX), thread_copy.retile(fragment))
        for v in range(cute.size(fragment)):
            mOut[tidx, v] = fragment[v]

    @cute.jit
    def host(mX: cute.Tensor, mOut: cute.Tensor):
        copy_kernel(mX, mOut).launch(grid=[1, 1, 1], block=[threads, 1, 1])

    reference_mma = kernel_tiled_mma(warps_m, warps_n, atoms_n)
    identity = reference.make_identity_tensor((rows, S2R_K))
    values = reference.size(reference_mma.get_slice(0).partition_A(identity) if operand == "A"
                            else reference_mma.get_slice(0).partition_B(identity))
    tile = numpy.arange(rows * S2R_K, dtype=numpy.float16).reshape(rows, S2R_K)     # exact: at most 2048 values
    out = numpy.full((threads, values), -2.0, dtype=numpy.float16)
    try:
        host(from_dlpack(tile), from_dlpack(out))
    except Exception as error:
        return {"error": str(error).strip().splitlines()[0][:400]}
    for thread in range(threads):
        slice_ = reference_mma.get_slice(thread)
        want = slice_.partition_A(identity) if operand == "A" else slice_.partition_B(identity)
        for v in range(values):
            r, k = want[v]
            got = int(out[thread, v])
            if got != r * S2R_K + k:
                found = "nothing (the register was not written)" if got < 0 else f"element {divmod(got, S2R_K)}"
                return {"error": "", "first": (thread, v, found, (r, k))}
    return {"error": "", "first": None}


def _s2r_rows(case) -> int:
    """The operand tile's M (for A) or N (for B): the TiledMMA's tile along that mode."""
    return 16 * case["warps_m"] if case["operand"] == "A" else 8 * case["atoms_n"] * case["warps_n"]


def _ask_s2r(answer, case):
    tiled_copy = answer(kernel_tiled_mma(case["warps_m"], case["warps_n"], case["atoms_n"]), case["operand"],
                        case["major"])
    facts = _copy_facts(tiled_copy)
    facts["moved"] = _simulated_s2r(tiled_copy, case)
    # what the cutedsl-cpu criterion compares: thread 1's source elements and the copy's layouts
    from cutekit import cute
    rows = _s2r_rows(case)
    facts["text"] = "|".join([facts["src"], facts["dst"], facts["tiled"], ",".join(facts["tiler"]),
                              str(tiled_copy.get_slice(1).partition_S(cute.make_identity_tensor((rows, 16))))])
    return facts


def _s2r_cause(case, facts) -> str:
    """Which part of the answer is wrong, against the reference copy of this case."""
    operand, major, atoms_n = case["operand"], case["major"], case["atoms_n"]
    notes = []
    if facts["ldmatrix"] is None:
        notes.append("it is not an ldmatrix copy: build the atom from cute.nvgpu.warp.LdMatrix8x8x16bOp (section 5)")
    else:
        transpose, matrices = facts["ldmatrix"]
        want = s2r_matrices(case)
        if matrices > want:
            notes.append(f"its ldmatrix loads {matrices} 8x8 matrices per lane's instruction, which does not fit B "
                         f"here: with {atoms_n} n8 atom{'s' if atoms_n > 1 else ''} per warp a thread's values of B "
                         f"come in modes (4, {atoms_n}, 1), and {2 * matrices} consecutive values cannot be cut from "
                         "their front (chapter 06 section 7's rule; count the n8 atoms from the TiledMMA you are given)")
        elif matrices < want:
            notes.append(f"its ldmatrix loads {matrices} 8x8 matrices per instruction, but a larger one fits "
                         + ("A of m16n8k16 over any warp tile" if operand == "A" else
                            f"B here, {atoms_n} n8 atoms per warp, whose values come in modes (4, {atoms_n}, 1)")
                         + ": take the largest that fits (chapter 06 section 7's rule)")
        if transpose != (major == "MN"):
            notes.append("an MN-major tile needs the transposed ldmatrix: each lane points at 8 consecutive m (or n) "
                         "of one k (section 5)" if major == "MN" else
                         "a K-major tile needs the plain ldmatrix: each lane points at 8 consecutive k of one row "
                         "(section 5)")
    other = "B" if operand == "A" else "A"
    want = _copy_facts(_reference_s2r(case))
    if facts["tiled"] != want["tiled"] or facts["tiler"] != want["tiler"]:
        theirs = _copy_facts(_reference_s2r(case, operand=other))
        if facts["tiled"] == theirs["tiled"] and facts["tiler"] == theirs["tiler"]:
            notes.append(f"it takes its layout from the MMA's {other} operand: operand {operand} needs "
                         f"make_tiled_copy_{operand}(atom, tiled_mma)")
        elif not notes:
            notes.append(f"its TV layout is {facts['tiled']}, the MMA's {operand} layout is {want['tiled']}: build it "
                         f"with make_tiled_copy_{operand}(atom, tiled_mma)")
    return "; ".join(notes)


@each_outcome
def _s2r_atom(outcome) -> Verdict | None:
    want = _copy_facts(_reference_s2r(outcome.case))
    if (outcome.value["src"], outcome.value["dst"]) != (want["src"], want["dst"]):
        return failed(f"{case_text(outcome.case)}: the atom moves {outcome.value['src']} -> {outcome.value['dst']}; "
                      f"{_s2r_cause(outcome.case, outcome.value) or 'it should be an ldmatrix of fp16'}")
    return None


@each_outcome
def _s2r_tiler(outcome) -> Verdict | None:
    want = _copy_facts(_reference_s2r(outcome.case))["tiler"]
    if outcome.value["tiler"] != want:
        return failed(f"{case_text(outcome.case)}: the copy's tile is ({', '.join(outcome.value['tiler'])}), it should "
                      f"be ({', '.join(want)}); {_s2r_cause(outcome.case, outcome.value)}")
    return None


@each_outcome
def _s2r_moved(outcome) -> Verdict | None:
    moved, case = outcome.value["moved"], outcome.case
    where = f"{case_text(case)}, {'an MN' if case['major'] == 'MN' else 'a K'}-major tile of {case['operand']}"
    cause = _s2r_cause(case, outcome.value)
    if moved["error"]:
        return failed(f"{where}: the copy cannot run: {moved['error']}" + (f" So: {cause}" if cause else ""))
    if moved["first"] is not None:
        thread, value, got, want = moved["first"]
        return failed(f"{where}, simulated: thread {thread}'s value {value} holds {got}, the MMA's fragment wants "
                      f"element {want}" + (f". {cause}" if cause else ""))
    return None


S2R_WRAPPER = '''
def _ch07_facts(warps_m, warps_n, atoms_n, operand, major):
    import cutlass
    import cutlass.cute as _cute
    atom = _cute.nvgpu.warp.MmaF16BF16Op(cutlass.Float16, cutlass.Float32, (16, 8, 16))
    tiled_mma = _cute.make_tiled_mma(atom, _cute.make_layout((warps_m, warps_n, 1)),
                                     permutation_mnk=(16 * warps_m, 8 * atoms_n * warps_n, 16))
    copy = {name}(tiled_mma, operand, major)
    rows = 16 * warps_m if operand == "A" else 8 * atoms_n * warps_n
    return "|".join([str(copy.layout_src_tv), str(copy.layout_dst_tv), str(copy.layout_tv_tiled),
                     ",".join(str(mode) for mode in copy.tiler_mn),
                     str(copy.get_slice(1).partition_S(_cute.make_identity_tensor((rows, 16))))])
'''


S2R_COPY = Exercise(
    id="ch07.s2r_copy",
    statement="Write s2r_copy(tiled_mma, operand, major): the ldmatrix TiledCopy that loads the MMA's operand 'A' "
              "or 'B' from a K-major or MN-major shared-memory tile into exactly the fragments the MMA expects, "
              "with the largest ldmatrix (x4, x2 or x1) that fits, for a TiledMMA of the kernel's kind with one, two "
              "or three n8 atoms per warp.",
    example="s2r_copy(tiled_mma, 'A', 'MN') on the kernel's TiledMMA uses LdMatrix8x8x16bOp(True, 4): section 5's "
            "s2r_A_m_major",
    rule=("ldmatrix reads 8x8 fp16 matrices by rows: a K-major tile needs the plain ldmatrix, an MN-major tile the "
          "transposed one (section 5).\n"
          "An ldmatrix of n matrices takes 2n consecutive values of each lane from the front of the operand's value "
          "modes; it fits when they can be cut from there (chapter 06 section 7). Take the largest that fits.\n"
          "make_tiled_copy_A and make_tiled_copy_B build the copy from the MMA's own A or B layout, so that each "
          "thread loads exactly the fragment the MMA expects."),
    cases=_s2r_cases,
    ask=_ask_s2r,
    timeout=60.0,
    criteria=(
        Criterion("the atom: the largest ldmatrix on fp16 that fits, transposed exactly for an MN-major tile",
                  "reference", 1, _s2r_atom),
        Criterion("it covers the MMA's (M, K) or (N, K) tile", "reference", 1, _s2r_tiler),
        Criterion("every thread receives the MMA's fragment of that operand (the copy simulated on known values)",
                  "reference", 2, _s2r_moved),
        Criterion("real CuTeDSL, running your function, builds the copy cutekit built", "cutedsl-cpu", 1,
                  _cutedsl_builds_the_same(S2R_WRAPPER, lambda case: (case["warps_m"], case["warps_n"], case["atoms_n"],
                                                                      case["operand"], case["major"]),
                                           lambda value: value["text"])),
    ),
)


# ---- ch07.main_loop -------------------------------------------------------------------------------------------

TILE_K = 32          # one k-tile of the check's GEMM: two k-blocks of 16


def _main_loop_cases(rng):
    return [{"k_tiles": 1, "_data": rng.randrange(10_000)}, {"k_tiles": rng.randint(2, 3), "_data": rng.randrange(10_000)}]


def _main_loop_program(answer):
    """A one-stage tensor-core GEMM, C (fp32) = A B^T with A (M, K) and B (N, K) fp16, one 32x32 tile per
    CTA of 4 warps (the 2x2 TiledMMA), with `answer` as its main loop; built on whatever `cutlass` is
    imported now (the simulator, or real CuTeDSL on a GPU or for sm_80 on the CPU). Returns the host function.

    Only ever called in a worker process (forked for the simulator, fresh for CuTeDSL): it binds this
    module's `cutlass` and `cute`, because CuTeDSL evaluates a kernel's annotations in its module's globals."""
    global cutlass, cute
    import cutlass
    import cutlass.cute as cute
    # real CuTeDSL rewrites Python loops (range_constexpr, range over a k-tile count) only in functions
    # decorated in their source: the learner's plain function is reloaded with @cute.jit on it, and is
    # then inlined into the kernel (the simulator runs it as it is)
    loop = answer if getattr(cutlass, "__cutekit_sim__", False) else decorated_with_jit(answer)

    @cute.kernel
    def kernel(mA: cute.Tensor, mB: cute.Tensor, mC: cute.Tensor, smem_layout: cute.ComposedLayout,
               g2s: cute.TiledCopy, tiled_mma: cute.TiledMma, s2r_A: cute.TiledCopy, s2r_B: cute.TiledCopy):
        tidx, _, _ = cute.arch.thread_idx()
        m_tile, n_tile, _ = cute.arch.block_idx()
        tiler = (32, 32, TILE_K)
        gA = cute.local_tile(mA, tiler, (m_tile, n_tile, None), proj=(1, None, 1))
        gB = cute.local_tile(mB, tiler, (m_tile, n_tile, None), proj=(None, 1, 1))
        gC = cute.local_tile(mC, tiler, (m_tile, n_tile, None), proj=(1, 1, None))
        smem = cutlass.memory.SmemAllocator()
        sA = smem.allocate_tensor(cutlass.Float16, smem_layout, 128)
        sB = smem.allocate_tensor(cutlass.Float16, smem_layout, 128)
        copier = g2s.get_slice(tidx)
        thread_mma = tiled_mma.get_slice(tidx)
        tCrA = tiled_mma.make_fragment_A(thread_mma.partition_A(sA))
        tCrB = tiled_mma.make_fragment_B(thread_mma.partition_B(sB))
        # 1.0 in every operand register: an operand the loop never loads shows in C as the other one's sums
        tCrA.fill(1.0)
        tCrB.fill(1.0)
        tCgC = thread_mma.partition_C(gC)
        accumulators = tiled_mma.make_fragment_C(tCgC)
        accumulators.fill(0.0)
        parts = types.SimpleNamespace(
            tAgA=copier.partition_S(gA), tAsA=copier.partition_D(sA),
            tBgB=copier.partition_S(gB), tBsB=copier.partition_D(sB),
            tXsA=s2r_A.get_slice(tidx).partition_S(sA), tXrA=s2r_A.get_slice(tidx).retile(tCrA),
            tXsB=s2r_B.get_slice(tidx).partition_S(sB), tXrB=s2r_B.get_slice(tidx).retile(tCrB),
            tCrA=tCrA, tCrB=tCrB)
        loop(tiled_mma, g2s, s2r_A, s2r_B, parts, accumulators)
        cute.autovec_copy(accumulators, tCgC)

    @cute.jit
    def host(mA: cute.Tensor, mB: cute.Tensor, mC: cute.Tensor):
        atom = cute.make_composed_layout(cute.make_swizzle(2, 3, 3), 0, cute.make_layout((8, TILE_K), stride=(TILE_K, 1)))
        smem_layout = cute.tile_to_shape(atom, (32, TILE_K), (0, 1))
        copy_atom = cute.make_copy_atom(cute.nvgpu.cpasync.CopyG2SOp(), cutlass.Float16, num_bits_per_copy=128)
        g2s = cute.make_tiled_copy_tv(copy_atom, cute.make_layout((32, 4), stride=(4, 1)), cute.make_layout((1, 8)))
        tiled_mma = cute.make_tiled_mma(cute.nvgpu.warp.MmaF16BF16Op(cutlass.Float16, cutlass.Float32, (16, 8, 16)),
                                        cute.make_layout((2, 2, 1)), permutation_mnk=(32, 32, 16))
        ldmatrix = cute.make_copy_atom(cute.nvgpu.warp.LdMatrix8x8x16bOp(False, 4), cutlass.Float16)
        kernel(mA, mB, mC, smem_layout, g2s, tiled_mma, cute.make_tiled_copy_A(ldmatrix, tiled_mma),
               cute.make_tiled_copy_B(ldmatrix, tiled_mma)).launch(
            grid=[cute.size(mC, mode=[0]) // 32, cute.size(mC, mode=[1]) // 32, 1], block=[128, 1, 1])

    return host


def _what_c_holds(a, b, c, k_tiles: int) -> dict:
    """C written as whole multiples of the products it can hold: each k-block's A B^T, and (for an operand
    register never loaded, which the harness fills with 1.0) each k-block's row sums of A or of B, or 16.
    Returns the integer weights, or None when C is none of these."""
    import numpy
    blocks = [(t, kb) for t in range(k_tiles) for kb in range(TILE_K // 16)]
    columns = {}
    for t, kb in blocks:
        k = slice(TILE_K * t + 16 * kb, TILE_K * t + 16 * kb + 16)
        a_block, b_block = a[:, k].astype(numpy.float32), b[:, k].astype(numpy.float32)
        columns[("AB", t, kb)] = a_block @ b_block.T
        columns[("A only", t, kb)] = numpy.repeat(a_block.sum(axis=1, keepdims=True), c.shape[1], axis=1)
        columns[("B only", t, kb)] = numpy.repeat(b_block.sum(axis=1, keepdims=True).T, c.shape[0], axis=0)
    columns[("ones",)] = numpy.full(c.shape, 16.0, dtype=numpy.float32)
    keys = list(columns)
    matrix = numpy.stack([columns[key].ravel() for key in keys], axis=1)
    if not numpy.all(numpy.isfinite(c)):
        return None
    solution, *_ = numpy.linalg.lstsq(matrix, c.ravel().astype(numpy.float64), rcond=None)
    weights = numpy.rint(solution)
    if not numpy.allclose(matrix @ weights, c.ravel(), rtol=1e-3, atol=1e-2):
        return None
    return {key: int(weight) for key, weight in zip(keys, weights) if weight}


def _one_tile_gemm(answer, k_tiles: int, data: int) -> dict:
    """C (32x32, fp32) = A (32 x 32 k_tiles) B^T on one CTA of 4 warps, single-stage, on the simulator, with
    `answer` as the main loop; the elements that differ from NumPy's product and what C holds instead, or the
    error the kernel stopped with and how often the loop committed and waited for cp.async groups."""
    use_the_simulator(answer)
    import numpy

    import cutlass.cute as cute
    from cutlass.cute.runtime import from_dlpack
    calls = {"cp_async_commit_group": 0, "cp_async_wait_group": 0}

    def counted(name):
        original = getattr(cute.arch, name)

        def call(*args, **kwargs):
            calls[name] += 1
            return original(*args, **kwargs)
        return call
    for name in calls:            # in this forked child only
        setattr(cute.arch, name, counted(name))
    host = _main_loop_program(answer)
    # NumPy, not torch: this runs in a forked child, and torch's thread pool does not survive a fork
    rng = numpy.random.default_rng(data)
    a = rng.standard_normal((32, TILE_K * k_tiles)).astype(numpy.float16)
    b = rng.standard_normal((32, TILE_K * k_tiles)).astype(numpy.float16)
    c = numpy.full((32, 32), numpy.nan, dtype=numpy.float32)
    try:
        host(*[from_dlpack(t, assumed_align=16) for t in (a, b, c)])
    except Exception as error:
        return {"error": f"{type(error).__name__}: {str(error).strip()}", "calls": calls}
    product = a.astype(numpy.float32) @ b.astype(numpy.float32).T
    wrong = numpy.argwhere(~numpy.isclose(c, product, rtol=1e-3, atol=1e-2)).tolist()
    holds = _what_c_holds(a, b, c, k_tiles) if wrong else None
    return {"error": "", "calls": calls, "wrong": len(wrong), "first": tuple(wrong[0]) if wrong else None,
            "holds": None if holds is None else sorted(holds.items())}


def _explain_what_c_holds(holds, k_tiles: int) -> str:
    """The cause, read from the multiples of each k-block's product that C holds."""
    if holds is None:
        return ("C is none of the k-blocks' products: for every k-block, A's and B's k-block go from shared memory "
                "into the registers the MMA reads (through the retiled views), then that k-block is multiplied")
    weights = dict(holds)
    if any(key[0] == "ones" for key in weights) or (any(key[0] == "A only" for key in weights)
                                                     and any(key[0] == "B only" for key in weights)):
        return ("neither the A fragment nor the B fragment was ever loaded before cute.gemm (they still held the "
                "1.0s the check put there): copy s2r_A into parts.tXrA and s2r_B into parts.tXrB for every k-block")
    if any(key[0] == "A only" for key in weights):
        return ("C holds sums of A's rows: the B fragment was never loaded before cute.gemm (it still held the "
                "1.0s the check put there): every k-block needs B's S2R copy as well as A's")
    if any(key[0] == "B only" for key in weights):
        return ("C holds sums of B's rows: the A fragment was never loaded before cute.gemm (it still held the "
                "1.0s the check put there): every k-block needs A's S2R copy as well as B's")
    product = {(t, kb): weights.get(("AB", t, kb), 0) for t in range(k_tiles) for kb in range(TILE_K // 16)}
    if not any(product.values()):
        return ("no product reached C: did the k-tile loop run? It runs once per k-tile of parts.tAgA's last mode, "
                "k-tile 0 included, with cute.gemm for every k-block")
    per_block = {kb: {product[t, kb] for t in range(k_tiles)} for kb in range(TILE_K // 16)}
    if per_block[0] == {1} and per_block[1] == {0}:
        return ("only k-block 0 of each k-tile was multiplied; k-block 1 never: the k-block loop runs over every "
                "k-block of the fragments' third mode")
    if per_block[0] == {2} and per_block[1] == {0}:
        return ("k-block 0 twice and k-block 1 never: iteration kb copies into and multiplies k-block kb of the "
                "fragments (A's and B's), not k-block 0 each time")
    tiles = {t: product[t, 0] if product[t, 0] == product[t, 1] else None for t in range(k_tiles)}
    missing = [t for t, w in tiles.items() if w == 0]
    twice = [t for t, w in tiles.items() if w is not None and w > 1]
    if twice and missing:
        return (f"k-tile {twice[0]} was multiplied twice and k-tile {missing[0]} never: the copy's k-tile index is off "
                "by one: with one stage, iteration k_tile loads k-tile k_tile itself, nothing ahead")
    if missing and all(tiles[t] == 1 for t in tiles if t not in missing):
        if missing == [t for t in range(1, k_tiles)]:
            return ("only k-tile 0 reached C (k-tile 1 and on never): loop over every k-tile (parts.tAgA's last "
                    "mode) and accumulate")
        return (f"k-tile {missing[0]} never reached C: the k-tile loop must run over every k-tile of parts.tAgA's "
                f"last mode, from k-tile 0")
    return f"C holds each k-tile this many times: {[tiles[t] for t in range(k_tiles)]}; it should hold each once"


def _learner_source(answer) -> str:
    try:
        return inspect.getsource(unwrap(answer))
    except (OSError, TypeError):
        return ""


def _race_hint(error: str, calls: dict, several: bool) -> str:
    if "has not finished" in error:
        if not calls.get("cp_async_commit_group"):
            return (" (cute.arch.cp_async_commit_group() after the copies: your loop never committed a group, and "
                    "cp_async_wait_group waits only for committed groups)")
        return (" (the copies were committed but not waited for: a cp_async_wait_group that leaves no group in "
                "flight comes after the commit, before any ldmatrix reads the tile)")
    if several:
        return (" (a second cute.arch.sync_threads() at the end of each k-tile, before the next k-tile's copy "
                "overwrites what other warps may still be reading)")
    return (" (cute.arch.sync_threads() after the wait, before any warp's ldmatrix reads the tile: the other warps' "
            "copies must have landed)")


def _kernel_error(outcome) -> str:
    return outcome.error or (outcome.value or {}).get("error", "")


def _main_loop_criterion(several: bool) -> "callable":
    def judge(context) -> Verdict:
        one_raced = any(outcome.case["k_tiles"] == 1 and "race" in _kernel_error(outcome).lower()
                        for outcome in context.outcomes)
        for outcome in context.outcomes:
            case = outcome.case
            if (case["k_tiles"] > 1) != several:
                continue
            where = f"a 32x32 tile with K = {TILE_K * case['k_tiles']} ({case['k_tiles']} k-tile{'s' if several else ''})"
            error = _kernel_error(outcome)
            if error:
                text = error.splitlines()[0][:500]
                hint = ""
                if "race" in error.lower() or "has not finished" in error:
                    hint = _race_hint(error, (outcome.value or {}).get("calls", {}), several and not one_raced)
                elif "retile" in error:
                    hint = (" (an ldmatrix copy writes parts.tXrA / parts.tXrB: the MMA fragments retiled, grouped "
                            "per instruction)")
                return failed(f"{where}: {text}{hint}")
            value = outcome.value
            if value["wrong"]:
                return failed(f"{where}: {value['wrong']} of 1024 outputs differ from NumPy's product, the first at "
                              f"(m, n) = {value['first']}: {_explain_what_c_holds(value['holds'], case['k_tiles'])}")
        return passed()
    return judge


LAZY_HOST = '''

def __getattr__(name):
    """`host`: the check's one-stage GEMM around the main loop above (built on first use, by the compiler)."""
    if name == "host":
        from cutekit.checks import ch07_sgemm
        return ch07_sgemm._main_loop_program({name})
    raise AttributeError(name)
'''


def _compiled_main_loop(answer):
    """(PtxReport, None) of the check's GEMM around the learner's loop, compiled by real CuTeDSL for sm_80,
    or (None, the failed verdict saying why not)."""
    try:
        source = kernel_module_source(answer)
    except (OSError, TypeError) as error:
        return None, failed(f"the loop's source cannot be read ({error}); define it in a notebook cell or a .py file")
    with tempfile.TemporaryDirectory(prefix="cutekit-ch07-") as folder:
        path = Path(folder) / "learner_main_loop.py"
        # the name its `def` line gives it (a function renamed after its definition keeps that one in source)
        path.write_text(source + LAZY_HOST.replace("{name}", unwrap(answer).__code__.co_name))
        report = compile_to_ptx(str(path), "host", (FakeTensor("Float16", 2, 8), FakeTensor("Float16", 2, 8),
                                                    FakeTensor("Float32", 2, 4)))
    if not report.ok:
        first = report.error.strip().splitlines()[0][:400] if report.error.strip() else "no reason given"
        hint = ""
        if "same size in mode" in report.error or re.search(r"cute\.copy\(\s*s2r_[AB][^\n]*tCr[AB]", _learner_source(answer)):
            hint = (" CuTeDSL refuses an ldmatrix copy into the MMA fragment: its destination must be the retiled "
                    "view, parts.tXrA / parts.tXrB (s2r_A.get_slice(tidx).retile(tCrA)), grouped per ldmatrix, not "
                    "parts.tCrA / parts.tCrB.")
        return None, failed(f"CuTeDSL could not compile your loop for sm_80: {first}.{hint}")
    return report, None


def _main_loop_ptx(context) -> Verdict:
    report, problem = _compiled_main_loop(context.answer)
    if problem:
        return problem
    loads, mmas = report.count("ldmatrix.sync.aligned.m8n8.x4"), report.count("mma.sync.aligned.m16n8k16")
    if not mmas:
        return failed("the compiled loop has no mma.sync.aligned.m16n8k16: no cute.gemm(tiled_mma, ...) reached it")
    if loads != mmas:
        return failed(f"the compiled loop has {loads} ldmatrix.x4 for {mmas} mma.sync.m16n8k16; in this 2x2-warp tile "
                      "each k-block takes one ldmatrix.x4 for A and one for B per two MMAs: copy both operands, "
                      "through s2r_A and s2r_B, for every k-block you multiply")
    if report.local_memory:
        return failed(f"the compiled loop uses local memory ({report.local_memory} ld/st.local): a fragment indexed "
                      "with a run-time value, or spilled registers; index k-blocks with cutlass.range_constexpr")
    return passed()


def gpu_main_loop(answer, case):
    """Harness (runs on the GPU, real CuTeDSL): the learner's main loop in the one-stage GEMM on a grid of
    32x32 tiles, compared with torch.matmul in fp32, then timed (median of 20 launches) next to it."""
    import torch
    import cutlass.cute as cute
    from cutlass.cute.runtime import from_dlpack
    M, N, K = case["M"], case["N"], case["K"]
    generator = torch.Generator(device="cuda").manual_seed(M + N + K)
    a = torch.randn(M, K, device="cuda", generator=generator).half()
    b = torch.randn(N, K, device="cuda", generator=generator).half()
    c = torch.full((M, N), float("nan"), device="cuda")
    views = [from_dlpack(t, assumed_align=16) for t in (a, b, c)]
    compiled = cute.compile(_main_loop_program(answer), *views)
    compiled(*views)
    torch.cuda.synchronize()
    reference = a.float() @ b.float().T
    wrong = (~torch.isclose(c, reference, rtol=1e-3, atol=1e-2)).nonzero().tolist()
    result = {"wrong": len(wrong), "first": tuple(wrong[0]) if wrong else None}
    result["ms"] = gpu_median_ms(lambda: compiled(*views))
    result["torch_ms"] = gpu_median_ms(lambda: torch.matmul(a, b.T))
    return result


def _main_loop_gpu_criterion(context) -> Verdict:
    cases = [{"M": 1024, "N": 1024, "K": 2048}]
    reply = on_gpu(context.answer, f"{__name__}:gpu_main_loop", cases)
    if not reply.ok:
        return failed(f"on the GPU: {reply.error[:600]}")
    value, error = reply.values[0]
    where = "a 1024x1024x2048 GEMM of 32x32 tiles on the GPU"
    if error:
        return failed(f"{where}: {error[:400]}")
    if value["wrong"]:
        return failed(f"{where}: {value['wrong']} of {1024 * 1024} outputs differ from torch.matmul, the first at "
                      f"{value['first']} (on real hardware a missing sync_threads() shows up as wrong values "
                      "that change from run to run)")
    return Verdict(True, f"{where}: {value['ms']:.3f} ms; torch.matmul fp16 {value['torch_ms']:.3f} ms (one "
                         "stage and 32x32 tiles: the rest of chapter 07 is what closes the gap)")


def _ask_main_loop(answer, case):
    return _one_tile_gemm(answer, case["k_tiles"], case["_data"])


MAIN_LOOP = Exercise(
    id="ch07.main_loop",
    statement="Write main_loop(tiled_mma, g2s, s2r_A, s2r_B, parts, accumulators): for every k-tile, cp.async "
              "it to shared memory, wait and synchronize, then ldmatrix and cute.gemm every k-block; race-free.",
    example="a single-stage 32x32 tensor-core GEMM on the simulator equals NumPy's A @ B.T",
    rule=("Each k-tile: the cp.async copies of A and B, committed as a group and waited for, then a block-wide "
          "barrier before any warp reads the tile from shared memory.\n"
          "Then for each k-block, A's and B's k-block go from shared memory into the registers the MMA reads, and "
          "the MMA accumulates; a second barrier keeps the next k-tile's copies from overwriting what a warp still "
          "reads."),
    cases=_main_loop_cases,
    ask=_ask_main_loop,
    timeout=240.0,
    criteria=(
        Criterion("one k-tile: C = A B^T", "reference", 2, _main_loop_criterion(False)),
        Criterion("several k-tiles: all accumulated, no shared-memory race", "reference", 2, _main_loop_criterion(True)),
        Criterion("compiled by real CuTeDSL for sm_80: one ldmatrix.x4 per mma.sync, no local memory", "cutedsl-cpu", 1,
                  _main_loop_ptx),
        Criterion("on the GPU: a 1024x1024x2048 GEMM equals torch.matmul, timed against it", "gpu", 1,
                  _main_loop_gpu_criterion),
    ),
)


# ---- ch07.capstone_gemm: a whole tensor-core GEMM from a blank cell ----------------------------------------------

CAPSTONE_RATIO = 0.35       # of torch's speed on the GPU; the chapter's mma.sync kernel measured 0.596 on an H100
CAPSTONE_GPU_CASES = ({"M": 4096, "N": 4096, "K": 4096}, {"M": 1000, "N": 1032, "K": 1000})


def _capstone_cases(rng):
    """One draw, three problems the simulator runs in this order, each stopping the grading at its first wrong
    C (the later ones would only say it again, at a few seconds each): one partial k-tile with beta = 0; 72x136x40
    (M and N past a 128 tile, two k-tiles, the last partial); and K = 136 (five k-tiles of 32, three of 64: the
    partial last one lands in a stage that an earlier k-tile used, or in one never written). alpha and beta are
    drawn so that alpha, alpha^2, 1 and beta all differ; C starts with values of its own."""
    alpha, beta = rng.choice((1.5, -0.75, 2.5, -1.25)), rng.choice((-0.5, 0.25, 3.0, -2.0))
    first = {"M": rng.choice((33, 40, 47)), "N": rng.choice((16, 24, 40)), "K": rng.choice((8, 24)),
             "alpha": rng.choice((0.75, -1.5, 2.0)), "beta": 0.0}
    runs = [first, {"M": 72, "N": 136, "K": 40, "alpha": alpha, "beta": beta},
            {"M": rng.choice((24, 40)), "N": 16, "K": 136, "alpha": -alpha, "beta": -beta}]
    for run in runs:
        run["data"] = rng.randrange(10_000)
    return [{"runs": runs}]


def _problem(run) -> str:
    return (f"M, N, K = {run['M']}, {run['N']}, {run['K']} with alpha = {run['alpha']:g}, beta = {run['beta']:g}")


def _aligned(shape, dtype):
    """A zeroed NumPy array whose data starts on a 128-byte boundary (the 16-byte promise of from_dlpack holds)."""
    import numpy
    count = int(numpy.prod(shape))
    raw = numpy.zeros(count + 128, dtype=dtype)
    skip = (-raw.ctypes.data % 128) // raw.itemsize
    return raw[skip:skip + count].reshape(shape)


def _stale_contribution(a, b, k_tile: int, valid: int, BK: int):
    """What a stage holding k-tile `k_tile` adds past the `valid` columns of the ragged last k-tile."""
    columns = slice(k_tile * BK + valid, (k_tile + 1) * BK)
    return a[:, columns] @ b[columns, :]


def _what_c_holds_instead(a, b, c0, c, alpha: float, beta: float) -> dict:
    """Which wrong C the learner's kernel made: counts of wrong, NaN and never-written cells, where they are, and
    the names of the known wrong results C equals at every wrong cell."""
    import numpy
    a, b = a.astype(numpy.float32), b.astype(numpy.float32)
    K, N = b.shape
    product = a @ b
    want = alpha * product + beta * c0

    def close(x, y):
        return numpy.isclose(x, y, rtol=1e-3, atol=1e-3)

    wrong = ~close(c, want)
    if not wrong.any():
        return {"wrong": 0}
    unwritten = wrong & (c == c0)
    cells = numpy.argwhere(wrong)
    facts = {"wrong": int(wrong.sum()), "first": tuple(int(i) for i in cells[0]),
             "got": float(c[tuple(cells[0])]), "want": float(want[tuple(cells[0])]),
             "nan": int(numpy.isnan(c).sum()), "unwritten": int(unwritten.sum()),
             "rows": sorted({int(i) for i in numpy.argwhere(unwritten)[:, 0]}),
             "columns": sorted({int(j) for j in numpy.argwhere(unwritten)[:, 1]})}
    candidates = {
        "beta ignored": alpha * product, "beta taken as 1": alpha * product + c0,
        "alpha twice": alpha * alpha * product + beta * c0, "alpha ignored": product + beta * c0,
        "alpha and beta swapped": beta * product + alpha * c0, "alpha on C too": alpha * (product + beta * c0),
        # B's (K, N) memory read as an (N, K) K-contiguous matrix: the chapter's TN kernel, given this B
        "B read K-contiguous": alpha * (a @ b.reshape(N, K).T) + beta * c0,
    }
    for BK in (16, 32, 64, 128):
        last, valid = divmod(K, BK)
        if not valid:
            continue
        candidates[f"dropped {BK}"] = alpha * (a[:, :last * BK] @ b[:last * BK, :]) + beta * c0
        for stages in range(2, 7):
            if last - stages >= 0:
                stale = _stale_contribution(a, b, last - stages, valid, BK)
                candidates[f"stale {BK} {stages} {last - stages}"] = want + alpha * stale
    if not numpy.isnan(c).any():
        facts["explains"] = [name for name, value in candidates.items() if close(c[wrong], value[wrong]).all()]
    return facts


def simulator_capstone(host, case):
    """Harness: the learner's GEMM on the simulator, problem after problem, until the first wrong C. NumPy, not
    torch: this runs in the check's forked child, where torch's thread pool does not survive."""
    import numpy

    from cutlass.cute.runtime import from_dlpack
    results = []
    for run in case["runs"]:
        rng = numpy.random.default_rng(run["data"])
        a = _aligned((run["M"], run["K"]), numpy.float16)
        b = _aligned((run["K"], run["N"]), numpy.float16)
        c = _aligned((run["M"], run["N"]), numpy.float32)
        a[:], b[:] = rng.standard_normal(a.shape), rng.standard_normal(b.shape)
        c[:] = rng.standard_normal(c.shape)
        c0 = c.copy()
        started = time.perf_counter()
        try:
            host(from_dlpack(a, assumed_align=16), from_dlpack(b, assumed_align=16), from_dlpack(c, assumed_align=16),
                 run["alpha"], run["beta"])
        except Exception as error:
            results.append({"error": f"{type(error).__name__}: {str(error).strip()}",
                            "seconds": time.perf_counter() - started})
            break
        seconds = time.perf_counter() - started
        from cutekit.sim import last_launch
        launch = last_launch()
        lines = sorted(launch.bank_conflicts_by_line.items(), key=lambda item: -item[1]) if launch else []
        results.append({"error": "", "seconds": seconds, "conflicts": launch.bank_conflicts if launch else 0,
                        "conflict_lines": lines[:2], **_what_c_holds_instead(a, b, c0, c, run["alpha"], run["beta"])})
        if results[-1]["wrong"]:
            break
    return results


def _capstone_conflicts(context) -> Verdict:
    """Shared memory without bank conflicts on the 72x136x40 problem (counted by the simulator per warp access)."""
    outcome = context.outcomes[0]
    results = outcome.value or []
    if outcome.error or len(results) < 2 or results[1]["error"] or results[1]["wrong"]:
        return passed()                  # not run, or wrong: the criteria above say why
    value = results[1]
    if value["conflicts"]:
        where = ", ".join(f"{n} at {line}" for line, n in value["conflict_lines"])
        return failed(f"{_problem(context.outcomes[0].case['runs'][1])}: right, but its shared-memory accesses cost "
                      f"{value['conflicts']} bank conflicts (extra wavefronts; {where}): a warp's accesses to a tile "
                      f"stored without a swizzle land several times in one bank. Section 4's swizzle spreads each "
                      f"row of 8 16-byte chunks over the banks; B's N-contiguous tile needs one too, chosen by the "
                      f"same rule from its own contiguous extent (section 5, 'An M-major tile')")
    return passed()


def _ask_capstone(answer, case):
    return simulate(answer, simulator_capstone, case)


def _capstone_runs(outcome) -> list:
    """(problem, seconds) of each problem the learner's GEMM ran on the simulator, for the result's time lines."""
    return [(_problem(run), result["seconds"]) for run, result in zip(outcome.case["runs"], outcome.value or [])
            if "seconds" in result]


ZERO_RULE = ("a cp.async whose predicate is false still writes its 16 bytes, with zeros; a copy an `if` skips, or "
             "a plain copy whose predicate is false, writes nothing, and the stage keeps what it held (section 8.2)")


def _error_story(error: str) -> str:
    """The cause behind a kernel the simulator stopped, by what it stopped on."""
    line = error.splitlines()[0]
    where = re.search(r"`([^`]*)`", line)
    statement = where.group(1) if where else ""
    if "has not finished" in line:
        return ("a warp read a stage while cp.async copies into it were still in flight. Either the wait left the "
                "k-tile about to be read pending (cp_async_wait_group(n) returns once at most n of this thread's "
                "newest committed groups are; the k-tile read next must be older than those n), or a refill was "
                "issued into the stage about to be read (refill only the stage every warp finished in the k-tile "
                "before); and after the wait a barrier, so that the other threads' copies are visible (sections 6, "
                "8.1)")
    if "race" in line.lower():
        return ("two threads touched one shared-memory element with no barrier between: after the wait, every "
                "thread's copies must be visible before any warp's ldmatrix reads them, and a stage may be refilled "
                "only once every warp is done multiplying it (section 6)")
    if "grid" in line and "positive" in line:
        return ("the grid has no block along M or N: the number of tiles is rounded up, so that a partial tile at "
                "the edge gets its block (the shapes here are smaller than one tile)")
    if "ldmatrix" in line and ("misaligned" in line or "refuses" in line or "16 contiguous" in line):
        return ("an ldmatrix reads rows that are not 16 contiguous bytes of shared memory: B's tile is N-contiguous, "
                "so each lane's 8 values of one k are not in one row; the transposed ldmatrix reads it as it is "
                "(section 5, 'An M-major A')")
    if "out-of-bounds" in line.lower() or "outside" in line:
        tensor = re.search(r"global tensor (\w+)", line)
        name = tensor.group(1) if tensor else ""
        if "copy" in statement and "autovec" not in statement and (name in ("mA", "mB", "") or "g2s" in statement):
            return ("a copy into shared memory reads outside A or B: the tiles at the edges of M, N and K are partial "
                    "(K is not a multiple of the k-tile here), so each 16-byte vector is copied only where its first "
                    "element is inside the tensor, row and k both; " + ZERO_RULE)
        return ("the epilogue reads or writes C outside its M x N: in a partial tile, only the elements whose "
                "(m, n), from an identity tensor partitioned like C, are inside mC.shape exist")
    if "not enough values" in line or "unpack" in line or "positional argument" in line:
        return "the host function is called as gemm(mA, mB, mC, alpha, beta): check its parameters"
    return ""


def _wrong_story(run, value) -> str:
    """The cause behind a wrong C, from what C holds instead."""
    explains = value.get("explains") or []

    def has(prefix):
        return next((name for name in explains if name.startswith(prefix)), None)
    if value.get("nan"):
        return (f"C holds NaN in {value['nan']} cells: the MMA read shared memory that no copy had written (the "
                f"simulator fills new shared memory with NaN; a GPU leaves whatever was there). K = {run['K']} ends "
                "inside a k-tile: past K its stage must hold zeros, in A and in B; " + ZERO_RULE)
    if value["unwritten"] == value["wrong"]:
        everything = value["unwritten"] == run["M"] * run["N"]
        rows, columns = value["rows"], value["columns"]
        place = ("no element of C was written" if everything else
                 f"{value['unwritten']} elements of C were never written, in rows {rows[0]}-{rows[-1]} and columns "
                 f"{columns[0]}-{columns[-1]}")
        return (f"{place}: every tile here is partial (M = {run['M']}, N = {run['N']} end inside a tile), and its "
                "elements inside C must be stored too, each where its (m, n) is inside mC.shape")
    for name, story in (("beta ignored", "C = alpha A B: the old C was not added; beta scales the C the kernel "
                                         "reads before it writes"),
                        ("beta taken as 1", "C = alpha A B + C: the old C was added unscaled; it is multiplied by "
                                            "beta"),
                        ("alpha twice", "C = alpha^2 A B + beta C: alpha was applied twice (to the accumulators and "
                                        "again in the epilogue)"),
                        ("alpha ignored", "C = A B + beta C: the product is not scaled by alpha"),
                        ("alpha and beta swapped", "C = beta A B + alpha C: alpha and beta are swapped"),
                        ("alpha on C too", "C = alpha (A B + beta C): alpha scales only the product"),
                        ("B read K-contiguous", "C is what a B stored (N, K), K contiguous, would give: B arrives "
                                                "(K, N) with N contiguous (its stride is (N, 1)), so the MMA's (N, K) "
                                                "operand is the same memory with the modes swapped, N-contiguous in "
                                                "shared memory, and read by the transposed ldmatrix")):
        if has(name):
            return story
    stale = has("stale")
    if stale:
        _, BK, stages, earlier = stale.split()
        return (f"past K = {run['K']}, the last k-tile's stage still held k-tile {earlier} (k-tiles of {BK}, "
                f"{stages} stages): its columns past K must be zeros, not an earlier k-tile; " + ZERO_RULE)
    dropped = has("dropped")
    if dropped:
        BK = int(dropped.split()[1])
        return (f"C lacks the last, partial k-tile (columns {run['K'] // BK * BK}-{run['K'] - 1} of A): the k-tile "
                f"count is K / {BK} rounded up, and the partial k-tile is multiplied with zeros past K")
    if run["K"] > 64:
        return ("the ragged last k-tile after several: its stage was used by an earlier k-tile, and a stage is "
                "refilled only after every warp is done with it; past K it must hold zeros: " + ZERO_RULE)
    return ("C is none of the usual wrong results: check the MMA's partitions of A, B and C, the stage each k-tile "
            "is read from, and the epilogue's alpha A B + beta C")


def _capstone_criterion(index: int):
    def judge(context) -> Verdict:
        outcome = context.outcomes[0]
        if outcome.error:
            return failed(f"{outcome.error.splitlines()[0][:500]}")
        runs, results = outcome.case["runs"], outcome.value
        if index >= len(results):
            earlier = next((i for i, result in enumerate(results) if result["error"] or result["wrong"]), None)
            if earlier is None:                  # graded on fewer problems (a single example's)
                return passed()
            return failed(f"not run: {_problem(runs[earlier])} is wrong (the criterion above); fix that first")
        run, value = runs[index], results[index]
        where = _problem(run)
        if value["error"]:
            story = _error_story(value["error"])
            return failed(f"{where}: {value['error'].splitlines()[0][:420]}" + (f" So: {story}" if story else ""))
        if value["wrong"]:
            m, n = value["first"]
            return failed(f"{where}: {value['wrong']} of {run['M'] * run['N']} elements of C differ from alpha A B + "
                          f"beta C, the first at (m, n) = ({m}, {n}): {value['got']:.4g} instead of "
                          f"{value['want']:.4g}. {_wrong_story(run, value)}")
        return passed()
    return judge


def _capstone_ptx_verdict(report) -> Verdict:
    """What a compiled GEMM's PTX says about its speed: each part of the fast path it lacks, named."""
    ptx = report.ptx
    lacks = []
    if not report.count("mma.sync.aligned.m16n8k16"):
        lacks.append(f"no mma.sync.aligned.m16n8k16 (and {report.count('fma.rn.f32')} fma.rn.f32): the products are "
                     "SIMT FMAs on the CUDA cores; the tensor cores run through cute.gemm with an MmaF16BF16Op "
                     "TiledMMA (sections 2-3)")
    if not report.count("ldmatrix"):
        lacks.append(f"no ldmatrix: the MMA's operands come from shared memory through {report.count('ld.shared')} "
                     "ld.shared; an ldmatrix TiledCopy made from the TiledMMA loads four 8x8 matrices per "
                     "instruction (section 5)")
    elif not any(".trans" in opcode for opcode in report.counts if opcode.startswith("ldmatrix")):
        lacks.append("no ldmatrix .trans: B is N-contiguous in memory, and the transposed ldmatrix is what reads "
                     "an N-contiguous tile into the MMA's fragment (section 5)")
    copies = re.findall(r"cp\.async\.(c[ag])\.shared\.global\s+\[[^\]]*\],\s*\[[^\]]*\],\s*(\d+)", ptx)
    if not copies:
        lacks.append(f"no cp.async: global memory reaches shared memory through {report.count('ld.global')} "
                     "ld.global and st.shared, which hold the thread until the data arrives (section 4)")
    else:
        sizes = sorted({int(size) for _, size in copies})
        if sizes != [16]:
            lacks.append(f"cp.async of {', '.join(map(str, sizes))} bytes: 16 bytes (8 fp16) per copy moves a row "
                         "of the tile in as few instructions as the hardware allows")
        elif any(mode == "ca" for mode, _ in copies):
            lacks.append("cp.async.ca (LoadCacheMode.ALWAYS, the default): the tiles pass through L1, which they "
                         "never hit again; LoadCacheMode.GLOBAL gives cp.async.cg, L2 only (section 8.3)")
        waits = [int(n) for n in re.findall(r"cp\.async\.wait_group\s+(\d+)", ptx)]
        if report.count("cp.async.commit_group") < 2 and not any(waits):
            lacks.append("one commit group and cp.async.wait_group 0 only: each k-tile is waited for as soon as "
                         "it is requested, so no copy is in flight while the tensor cores work (section 6's "
                         "multistage pipeline keeps STAGES - 1 k-tiles in flight)")
    if report.local_memory:
        lacks.append(f"{report.local_memory} local-memory accesses (ld/st.local): a register array indexed with a "
                     "run-time value, or spilled registers; index fragments and predicates with "
                     "cutlass.range_constexpr loops")
    if lacks:
        return failed("C is right, but the compiled kernel is not yet the fast one: its PTX has " + "; ".join(lacks))
    return passed()


def _capstone_ptx(context) -> Verdict:
    try:
        report = compile_notebook_kernel(context.answer, ("Float16", 2, 8), ("Float16", 2, 8), ("Float32", 2, 4),
                                         1.5, 0.5, module="learner_gemm")
    except (OSError, TypeError) as error:
        return failed(f"the kernel's source cannot be read ({error}); define it in a notebook cell or a .py file")
    if not report.ok:
        first = report.error.strip().splitlines()[0][:500] if report.error.strip() else "no reason given"
        return failed(f"CuTeDSL could not compile your GEMM for sm_80 (A, B fp16 and C fp32 of run-time shapes, N and "
                      f"K multiples of 8, alpha and beta run-time Float32): {first}")
    return _capstone_ptx_verdict(report)


def gpu_capstone(host, case):
    """Harness (runs on the GPU, real CuTeDSL): C = alpha A B + beta C against torch in fp32, then the median
    time of the learner's compiled kernel and of torch.matmul(A, B) * alpha + beta * C on the same tensors."""
    import torch

    import cutlass.cute as cute
    from cutlass.cute.runtime import from_dlpack
    M, N, K = case["M"], case["N"], case["K"]
    alpha, beta = 1.5, 0.5
    generator = torch.Generator(device="cuda").manual_seed(M + N + K)
    a = torch.randn(M, K, device="cuda", generator=generator).half()
    b = torch.randn(K, N, device="cuda", generator=generator).half()
    c = torch.randn(M, N, device="cuda", generator=generator)
    reference = alpha * (a.float() @ b.float()) + beta * c
    views = [from_dlpack(t, assumed_align=16) for t in (a, b, c)]
    compiled = cute.compile(host, *views, alpha, beta)
    compiled(*views, alpha, beta)
    torch.cuda.synchronize()
    wrong = (~torch.isclose(c, reference, rtol=1e-3, atol=1e-2)).nonzero().tolist()
    result = {"wrong": len(wrong), "first": tuple(wrong[0]) if wrong else None}
    if not wrong:     # C = 1.5 A B + 0.5 C, launch after launch, stays bounded (it tends to 3 A B)
        result["ms"] = gpu_median_ms(lambda: compiled(*views, alpha, beta))
        result["torch_ms"] = gpu_median_ms(lambda: torch.matmul(a, b) * alpha + beta * c)
        result["matmul_ms"] = gpu_median_ms(lambda: torch.matmul(a, b))
    return result


def _capstone_gpu_criterion(context) -> Verdict:
    reply = on_gpu(context.answer, f"{__name__}:gpu_capstone", list(CAPSTONE_GPU_CASES))
    if not reply.ok:
        return failed(f"on the GPU: {reply.error[:600]}")
    notes = []
    for case, (value, error) in zip(CAPSTONE_GPU_CASES, reply.values):
        where = f"{case['M']}x{case['N']}x{case['K']} on the GPU"
        if error:
            return failed(f"{where}: {error[:500]}")
        if value["wrong"]:
            return failed(f"{where}: {value['wrong']} elements of C differ from torch's alpha A B + beta C (fp32), the "
                          f"first at {value['first']} (on a GPU an ordering mistake gives wrong values that change from "
                          "run to run)")
        ratio = value["torch_ms"] / value["ms"]
        tflops = 2 * case["M"] * case["N"] * case["K"] / value["ms"] / 1e9
        notes.append(f"{where}: {value['ms']:.3f} ms ({tflops:.0f} TFLOP/s), torch.matmul(A, B) * alpha + beta * C "
                     f"{value['torch_ms']:.3f} ms (torch.matmul alone {value['matmul_ms']:.3f}): {ratio:.2f} of "
                     "torch's speed")
        if case["M"] == 4096 and ratio < CAPSTONE_RATIO:
            return failed(f"{notes[-1]}; the exercise asks for at least {CAPSTONE_RATIO} (the chapter's mma.sync "
                          "kernel reached 0.596 on an H100). The cutedsl-cpu criterion lists what the PTX lacks")
    return Verdict(True, "; ".join(notes))


CAPSTONE_GEMM = Exercise(
    id="ch07.capstone_gemm",
    statement="Write gemm(mA, mB, mC, alpha, beta), a @cute.jit host and its @cute.kernel: C = alpha * A @ B + "
              "beta * C with A (M, K) fp16 K-contiguous, B (K, N) fp16 N-contiguous, C (M, N) fp32 row-major, "
              "alpha and beta run-time Float32, M any size, N and K multiples of 8, on tensor cores.",
    example="gemm on 72x136x40 equals alpha * (A @ B) + beta * C in fp32; its PTX has cp.async.cg, ldmatrix "
            "(.trans for B) and mma.sync.m16n8k16",
    rule=("The MMA reads B as (N, K) fragments: from an N-contiguous B in shared memory, ldmatrix's transposing "
          "form delivers them; a K-contiguous copy path does not apply.\n"
          "A cp.async whose predicate is false writes zeros (a source size of 0); a plain copy with a false "
          "predicate, or a copy an if skips, leaves the stage as it was, and a reused stage holds an older "
          "k-tile.\n"
          "The epilogue scales every accumulator by alpha and adds beta times C's old value, element by element, "
          "and writes only the elements of C that exist."),
    cases=_capstone_cases,
    ask=_ask_capstone,
    runs=_capstone_runs,
    timeout=240.0,
    criteria=(
        Criterion("K of 8 or 24, beta = 0: C = alpha A B", "reference", 2, _capstone_criterion(0)),
        Criterion("72x136x40: M, N and K past the tile, beta != 0: C = alpha A B + beta C", "reference", 2,
                  _capstone_criterion(1)),
        Criterion("K = 136, a partial last k-tile after several: zeros past K in its stage", "reference", 1,
                  _capstone_criterion(2)),
        Criterion("72x136x40: shared memory without bank conflicts (swizzled A and B tiles)", "reference", 1,
                  _capstone_conflicts),
        Criterion("compiled for sm_80: 16-byte cp.async.cg, a pipeline, ldmatrix (.trans for B), mma.sync m16n8k16, "
                  "no local memory", "cutedsl-cpu", 2, _capstone_ptx),
        Criterion(f"on the GPU: equals torch on 4096^3 and 1000x1032x1000, at least {CAPSTONE_RATIO} of "
                  "torch.matmul(A, B) * alpha + beta * C's speed at 4096^3", "gpu", 2, _capstone_gpu_criterion),
    ),
)


EXERCISES = [TILED_MMA, SWIZZLE, PIPELINE_STAGES, S2R_COPY, MAIN_LOOP, CAPSTONE_GEMM]
