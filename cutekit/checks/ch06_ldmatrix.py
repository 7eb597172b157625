"""Chapter 06 exercises: where an ldmatrix then an stmatrix through the same registers put each element (the
renumbering of section 3 applied to both atoms), every (thread, register, half)
holding an element on section 6's 2x2 TiledMMA, x1 / x2 / x4 for a warp tile, and the S2R copy of one k-block
with `retile`.

The first three are graded on the reference algebra (cutekit.cute), and the round trip once more with the learner's own
function running under real CuTeDSL. The kernel is rebuilt from its source with the simulator as `cutlass` (in
the forked sandbox) and every register it writes out is compared with the MMA's A layout (partition_A of an
identity tensor); on `cutedsl-cpu` it is compiled for sm_80 and its PTX must hold one ldmatrix.x4.

Also here, for the chapter and the tests:
  ldmatrix_fit(cute, operand, tile_mnk, atom_mnk, num_matrices)   does that ldmatrix copy fit? (either library)
  ldmatrix_fit_in_cutedsl(cases)                                   the same question asked of real CuTeDSL
  largest_fitting_ldmatrix(cute, operand, tile_mnk, atom_mnk)      the largest num_matrices that fits (and
  largest_fitting_ldmatrix_in_cutedsl(cases)                        the same asked of real CuTeDSL)
  largest_ldmatrix(operand, tile_mnk, atom_mnk)                    the rule the chapter teaches, written out
"""
from __future__ import annotations

import functools
import re
import warnings

from cutekit.cute.atom import AtomDoesNotFitWarning

from .common import case_text, compile_notebook_kernel, compiled_kernel, each_outcome, first_error, on_simulator, torch_ready
from .cutedsl import run_in_cutedsl, trace_function
from .grading import Criterion, Exercise, Outcome, Verdict, failed, passed

THIS_MODULE = __name__
MMA_SHAPE = (16, 8, 16)
ROWS = {"A": 0, "B": 1}            # the mode of tile_mnk that is the operand's rows: M for A, N for B


# ---- layouts as printed: the offsets a printed layout sends each index to (for CuTeDSL's answers) ---------------

def _parse_layout(text: str):
    tokens = re.findall(r"-?\d+|[(),:]", text)
    position = 0

    def item():
        nonlocal position
        token = tokens[position]
        position += 1
        if token != "(":
            return int(token)
        items = []
        while tokens[position] != ")":
            items.append(item())
            if tokens[position] == ",":
                position += 1
        position += 1
        return tuple(items)

    shape = item()
    if position >= len(tokens) or tokens[position] != ":":
        raise ValueError(f"not a layout: {text!r}")
    position += 1
    return shape, item()


def _flat_modes(shape, stride):
    if isinstance(shape, tuple):
        return [mode for s, d in zip(shape, stride) for mode in _flat_modes(s, d)]
    return [(shape, stride)]


def printed_layout_offsets(text: str) -> list:
    """The offsets of a layout printed as `shape:stride` (plain integer strides), index 0 first, column-major.

    >>> printed_layout_offsets("(2,(2,2)):(4,(1,2))")
    [0, 4, 1, 5, 2, 6, 3, 7]
    """
    offsets = [0]
    for extent, stride in _flat_modes(*_parse_layout(text)):
        offsets = [offset + step * stride for step in range(extent) for offset in offsets]
    return offsets


def _values(layout) -> list:
    """A layout as the list of what it sends each index to (its function, whatever its shape)."""
    from cutekit import cute
    return [layout(i) for i in range(cute.size(layout))]


# ---- does an ldmatrix copy fit a warp tile? (the chapter, exercise 3 and its tests) -----------------------------

def ldmatrix_fit(cute, operand: str, tile_mnk, atom_mnk, num_matrices: int) -> str:
    """'fits' when the ldmatrix TiledCopy that `make_tiled_copy_A/B` builds for one warp running the MMA atom
    `atom_mnk` (fp16 in, fp32 out) over `tile_mnk` loads every register of the MMA fragment exactly once;
    otherwise what goes wrong. `cute` is cutekit.cute or, inside a @cute.jit trace, cutlass.cute.

    Thread 0's view decides it, because every thread's partition_S and retile have the same layout: the copy's
    source (partition_S) and destination (retile of the fragment) must ask for the same number of ldmatrix
    instructions, and the retiled view must name each value of the fragment once. That agrees with a full
    simulation of the copy (every thread, value and element, the ldmatrix shuffle included) for every tile up
    to 64 in each mode of m16n8k16 and m16n8k8, in both libraries (worked out once; the chapter's tiles are
    simulated again in tests/checks/test_ch06_ldmatrix_rule.py)."""
    if hasattr(cute, "Float16"):                 # cutekit.cute names the types itself
        half, single = cute.Float16, cute.Float32
    else:                                        # cutlass.cute, inside a trace: the types live in cutlass
        import cutlass
        half, single = cutlass.Float16, cutlass.Float32
    mma = cute.make_tiled_mma(cute.nvgpu.warp.MmaF16BF16Op(half, single, tuple(atom_mnk)), (1, 1, 1),
                              permutation_mnk=tuple(tile_mnk))
    atom = cute.make_copy_atom(cute.nvgpu.warp.LdMatrix8x8x16bOp(False, num_matrices), half)
    rows = tile_mnk[ROWS[operand]]
    try:
        with warnings.catch_warnings():     # cutekit names a copy that is not whole atoms; this function says more
            warnings.simplefilter("ignore", AtomDoesNotFitWarning)
            tiled_copy = (cute.make_tiled_copy_A if operand == "A" else cute.make_tiled_copy_B)(atom, mma)
        identity = cute.make_identity_tensor((rows, tile_mnk[2]))
        thread_mma = mma.get_slice(0)
        part = thread_mma.partition_A(identity) if operand == "A" else thread_mma.partition_B(identity)
        fragment = (mma.make_fragment_A if operand == "A" else mma.make_fragment_B)(part.shape)
        thread_copy = tiled_copy.get_slice(0)
        sources = cute.size(thread_copy.partition_S(identity))
        registers = printed_layout_offsets(str(thread_copy.retile(fragment).layout))
    except Exception as error:   # both libraries refuse in partition_S or retile, where they refuse
        lines = str(error).strip().splitlines() or [type(error).__name__]
        said = next((line for line in lines if "error:" in line), lines[0])
        return "refused: " + said.split("error:", 1)[-1].strip()[:160]
    per_instruction = 2 * num_matrices
    if sources // 8 != len(registers) // per_instruction:
        return (f"partition_S asks for {sources // 8} ldmatrix, retile for {len(registers) // per_instruction}: "
                "they disagree")
    count = cute.size(fragment)
    if any(register >= count for register in registers):
        return f"retile writes past the thread's {count} values"
    if len(set(registers)) != len(registers):
        return "retile writes some values twice"
    return "fits"


def ldmatrix_fit_traced(cute, operand, tile_mnk, atom_mnk, num_matrices):
    return ldmatrix_fit(cute, operand, tile_mnk, atom_mnk, num_matrices)


def largest_fitting_ldmatrix(cute, operand, tile_mnk, atom_mnk) -> int:
    """The largest num_matrices whose copy `ldmatrix_fit` says fits (0 if none), in either library."""
    return next((n for n in (4, 2, 1) if ldmatrix_fit(cute, operand, tile_mnk, atom_mnk, n) == "fits"), 0)


def largest_fitting_ldmatrix_in_cutedsl(cases: list) -> list:
    """`largest_fitting_ldmatrix` for each (operand, tile_mnk, atom_mnk), asked of real CuTeDSL in one process."""
    reply = run_in_cutedsl(THIS_MODULE, "largest_fitting_ldmatrix", [tuple(case) for case in cases],
                           timeout=600, with_cute=True)
    if not reply.ok:
        raise RuntimeError(f"CuTeDSL could not answer: {reply.error}")
    return [int(value) if value is not None else error for value, error in reply.values]


def ldmatrix_fit_in_cutedsl(cases: list) -> list:
    """`ldmatrix_fit` for each (operand, tile_mnk, atom_mnk, num_matrices), asked of real CuTeDSL 4.8.1 in a
    fresh process (traced on the CPU)."""
    reply = run_in_cutedsl(THIS_MODULE, "ldmatrix_fit_traced", [tuple(case) for case in cases], with_cute=True)
    if not reply.ok:
        raise RuntimeError(f"CuTeDSL could not answer: {reply.error}")
    return [value if value is not None else f"refused: {error}" for value, error in reply.values]


def thread_values(operand: str, tile_mnk, atom_mnk) -> list:
    """One thread's values of the operand, in the order the MMA's TV layout lists them, as mode sizes: the
    atom's own values (rows x K / 32), then its repeats along the rows (M or N), then along K."""
    row = ROWS[operand]
    return [atom_mnk[row] * atom_mnk[2] // 32, tile_mnk[row] // atom_mnk[row], tile_mnk[2] // atom_mnk[2]]


def _cut_from_front(values: list, needed: int) -> bool:
    for extent in values:
        if needed == 1 or extent % needed == 0:
            return True
        if needed % extent:
            return False
        needed //= extent
    return needed == 1


def largest_ldmatrix(operand: str, tile_mnk, atom_mnk) -> int:
    """The chapter's rule: the largest x_n whose 2n values per thread can be cut from the front of
    `thread_values` by whole modes, or by a mode that splits into them evenly."""
    values = thread_values(operand, tile_mnk, atom_mnk)
    return next(n for n in (4, 2, 1) if _cut_from_front(values, 2 * n))


def _atom(num_matrices, transpose):
    from cutekit import cute
    return cute.make_copy_atom(cute.nvgpu.warp.LdMatrix8x8x16bOp(transpose, num_matrices), cute.Float16)


def _warp_mma(tile_mnk=None, atom_mnk=MMA_SHAPE):
    from cutekit import cute
    op = cute.nvgpu.warp.MmaF16BF16Op(cute.Float16, cute.Float32, tuple(atom_mnk))
    if tile_mnk is None:
        return cute.make_tiled_mma(op)
    return cute.make_tiled_mma(op, (1, 1, 1), permutation_mnk=tuple(tile_mnk))


def _diagnosis(mistakes: list, outcomes: list, want) -> str:
    """The hint of the first known mistake (`(name, answer_of(case), hint)`) that gives the learner's value on
    every case where the learner is wrong; '' when none does."""
    wrong = [outcome for outcome in outcomes if outcome.value != want(outcome.case)]
    for _, answer_of, hint in mistakes:
        try:
            if wrong and all(answer_of(outcome.case) == outcome.value for outcome in wrong):
                return hint
        except Exception:   # a mistake's own answer may not exist for a case (a layout out of range)
            continue
    return ""


# ---- ch06.ref_to_src: written_from, an ldmatrix then an stmatrix through the same registers ---------------------

def _ref_cases(rng):
    cases = [{"num_matrices": n, "load_transpose": load, "store_transpose": store}
             for n in (1, 2, 4) for load in (False, True) for store in (False, True)]
    rng.shuffle(cases)
    return cases


def _ask_ref(answer, case):
    made = answer(case["num_matrices"], case["load_transpose"], case["store_transpose"])
    if not hasattr(made, "shape") or not callable(made):
        raise TypeError(f"expected a Layout, got {type(made).__name__}: {made!r:.80}")
    return {"text": str(made), "values": _values(made)}


def _store_atom(num_matrices, transpose):
    from cutekit import cute
    return cute.make_copy_atom(cute.nvgpu.warp.StMatrix8x8x16bOp(transpose, num_matrices), cute.Float16)


@functools.lru_cache(maxsize=None)
def _round_trip(num_matrices, load_transpose, store_transpose, mistake=None):
    """The layout a round trip builds, or one of the mistakes' (named as in _ref_mistakes)."""
    from cutekit import cute
    inverse, compose = cute.right_inverse, cute.composition
    load, store = _atom(num_matrices, load_transpose), _store_atom(num_matrices, store_transpose)
    to_register = compose(inverse(store.layout_src_tv), store.layout_dst_tv)     # stmatrix: reference = source
    to_source = compose(inverse(load.layout_src_tv), load.layout_dst_tv)         # ldmatrix: reference = destination
    built = {
        None: lambda: compose(to_source, to_register),
        "load only": lambda: to_source,
        "store only": lambda: to_register,
        "store the wrong way": lambda: compose(to_source, compose(inverse(store.layout_dst_tv), store.layout_src_tv)),
        "order": lambda: compose(to_register, to_source),
        "identity": lambda: cute.make_layout((32, 2 * num_matrices)),
    }[mistake]()
    return str(built), tuple(_values(built))


def _ref_want(case) -> list:
    return list(_round_trip(case["num_matrices"], case["load_transpose"], case["store_transpose"])[1])


def _ref_mistakes():
    def made(mistake):
        return lambda case: list(_round_trip(case["num_matrices"], case["load_transpose"], case["store_transpose"],
                                             mistake)[1])
    return [
        ("load only", made("load only"),
         "That is ldmatrix's step alone: it starts from a register, not from a stmatrix destination (lane, "
         "element). The stmatrix step, destination -> register, comes first."),
        ("store only", made("store only"),
         "That stops at the registers: it sends a stmatrix destination to the register stored there. One step is "
         "missing: from that register back to the ldmatrix source lane and element that loaded it."),
        ("store the wrong way", made("store the wrong way"),
         "Your stmatrix step goes from a register to its destination (so does an ldmatrix atom standing in for "
         "the store): for stmatrix the registers are the source (its reference), so the step the round trip "
         "needs reads a destination (lane, element) and names the register."),
        ("order", made("order"),
         "The two steps are composed in the wrong order, or each goes section 3's worked direction (row address "
         "to registers), which gives the same numbers: composition(f, g) applies g first, and the round trip "
         "starts at stmatrix's destination and ends at ldmatrix's source."),
        ("one transpose for both", lambda case: _ref_want({**case, "store_transpose": case["load_transpose"]}),
         "Right when the two transposes agree: one atom is built with the other's transpose. ldmatrix takes "
         "load_transpose, stmatrix store_transpose."),
        ("ignores num_matrices", lambda case: _ref_want({**case, "num_matrices": 4}),
         "That is the x4 round trip whatever num_matrices is: build both atoms with the num_matrices you are "
         "given."),
        ("identity", made("identity"),
         "That is the identity layout: a round trip is not always the identity. With the transposes unequal "
         "each 8x8 matrix comes back transposed, and for x1 and x2 the lanes past 8 or 16 pass no address the "
         "hardware reads."),
    ]


def _case_name(case) -> str:
    flags = {(False, False): "plain, plain", (True, True): "transposed, transposed",
             (False, True): "plain load, transposed store", (True, False): "transposed load, plain store"}
    return f"x{case['num_matrices']} ({flags[case['load_transpose'], case['store_transpose']]})"


def _ref_criterion(same_transpose: bool):
    def judge(context) -> Verdict:
        problem = first_error(context.outcomes)
        if problem:
            return problem
        mine = [outcome for outcome in context.outcomes
                if (outcome.case["load_transpose"] == outcome.case["store_transpose"]) == same_transpose]
        for outcome in mine:
            if outcome.value["values"] == _ref_want(outcome.case):
                continue
            right = _round_trip(outcome.case["num_matrices"], outcome.case["load_transpose"],
                                outcome.case["store_transpose"])[0]
            why = _diagnosis(_ref_mistakes(), [Outcome(o.case, o.value["values"]) for o in context.outcomes],
                             _ref_want)
            return failed(f"{_case_name(outcome.case)}: the round trip is {right}, yours is "
                          f"{outcome.value['text']}. {why}".strip())
        return passed()
    return judge


def _cutedsl_ref(context) -> Verdict:
    """Real CuTeDSL runs the learner's own function (moved by source, `cute` made `cutlass.cute`)."""
    outcomes = [outcome for outcome in context.outcomes if not outcome.error]
    cases = [(outcome.case["num_matrices"], outcome.case["load_transpose"], outcome.case["store_transpose"])
             for outcome in outcomes]
    reply = trace_function(context.answer, cases)
    if not reply.ok:
        return failed(f"CuTeDSL could not run your function: {reply.error}")
    for outcome, (value, error) in zip(outcomes, reply.values):
        where = _case_name(outcome.case)
        if error:
            return failed(f"{where}: under CuTeDSL your function raised {error} (CuTeDSL's copy atoms have "
                          "layout_src_tv and layout_dst_tv, no reference layout: use the side that is the registers)")
        try:
            theirs = printed_layout_offsets(value)
        except (ValueError, IndexError):
            return failed(f"{where}: under CuTeDSL your function returned {value}, not a layout")
        if theirs != _ref_want(outcome.case):
            return failed(f"{where}: under CuTeDSL your function built {value}, which is not the round trip")
    return passed()


REF_TO_SRC = Exercise(
    id="ch06.ref_to_src",
    statement="Write written_from(num_matrices, load_transpose, store_transpose): a warp loads 8x8 matrices with "
              "LdMatrix8x8x16bOp(load_transpose, num_matrices) and stores the same registers with "
              "StMatrix8x8x16bOp(store_transpose, num_matrices), every lane passing the same row address to both. "
              "Return the layout sending a stmatrix destination index (lane + 32 * element of its row) to the "
              "ldmatrix source index (the same numbering) whose element is written there.",
    example="written_from(4, False, True) sends destination lane 9, element 2 (index 73) to source lane 10, "
            "element 1 (index 42)",
    rule=("Section 3: to renumber one side of a copy atom into another, go to the offset with the layout of the "
          "side you start from, and back with the right inverse of the layout of the side you end on; "
          "composition(f, g) applies g first.\n"
          "ldmatrix's reference is its destination, the registers; stmatrix moves registers to row addresses, so "
          "for it the registers are the source. The two atoms meet at the registers."),
    cases=_ref_cases,
    ask=_ask_ref,
    criteria=(
        Criterion("the same transpose for both, x1, x2, x4: each element traced back to where it was loaded",
                  "reference", 1, _ref_criterion(True)),
        Criterion("one transposed and one not, x1, x2, x4: the same", "reference", 2, _ref_criterion(False)),
        Criterion("real CuTeDSL, running your function, builds the same layouts", "cutedsl-cpu", 1, _cutedsl_ref),
    ),
)


@functools.lru_cache(maxsize=None)
def _inverse(layout):
    from cutekit import cute
    return cute.right_inverse(layout)


# ---- ch06.lands_in: held_by, on section 6's 2x2 TiledMMA ---------------------------------------------------------

HELD_TILE = (32, 32, 16)         # 2x2 warps of m16n8k16 (section 6): A is 32 x 16 (M x K), B is 32 x 16 (N x K)
HELD_ROWS = 32                   # both operand tiles have 32 rows


@functools.lru_cache(maxsize=None)
def _mma_2x2():
    from cutekit import cute
    return cute.make_tiled_mma(cute.nvgpu.warp.MmaF16BF16Op(cute.Float16, cute.Float32, MMA_SHAPE), (2, 2, 1),
                               permutation_mnk=HELD_TILE)


def _tv_2x2(operand):
    mma = _mma_2x2()
    return mma.tv_layout_A_tiled if operand == "A" else mma.tv_layout_B_tiled


def _lands_cases(rng):
    cases = [{"operand": "A", "row": rng.randint(16, 31), "k": rng.randint(8, 15)},
             {"operand": "A", "row": rng.randint(0, 15), "k": rng.randint(0, 7)},
             {"operand": "B", "row": rng.randint(16, 23), "k": rng.randint(0, 15)},
             {"operand": "B", "row": rng.randint(8, 15), "k": rng.randint(8, 15)},
             {"operand": "B", "row": rng.randint(24, 31), "k": rng.randint(0, 7) | 1}]
    while len(cases) < 9:
        cases.append({"operand": rng.choice("AB"), "row": rng.randint(0, 31), "k": rng.randint(0, 15)})
    rng.shuffle(cases)
    return cases


@functools.lru_cache(maxsize=None)
def _held_table(operand) -> dict:
    """(row, k) -> sorted (thread, register, half) of every holder, by walking the TiledMMA's TV layout."""
    tv = _tv_2x2(operand)
    table = {}
    for thread in range(128):
        for value in range(8):
            index = tv((thread, value))
            table.setdefault((index % HELD_ROWS, index // HELD_ROWS), []).append((thread, value // 2, value % 2))
    return {key: tuple(sorted(holders)) for key, holders in table.items()}


def _lands_want(case) -> tuple:
    return _held_table(case["operand"])[case["row"], case["k"]]


def _decoded(operand, index, threads=128) -> tuple:
    """The one (thread, register, half) the right inverse names for a tile index, read with `threads` threads."""
    at = _inverse(_tv_2x2(operand))(index)
    value = at // threads
    return ((at % threads, value // 2, value % 2),)


@functools.lru_cache(maxsize=None)
def _lands_mistakes():
    def right(case):
        return _lands_want(case)

    def each(change):
        return lambda case: tuple(sorted(change(holder) for holder in right(case)))

    def other_warp(case):
        first = min(right(case))
        step = 32 if case["operand"] == "A" else 64          # the warp of the other operand's sharing
        return tuple(sorted([first, ((first[0] + step) % 128, first[1], first[2])]))

    return [
        ("one holder", lambda c: _decoded(c["operand"], c["row"] + HELD_ROWS * c["k"]),
         "Yours names one thread; every element of A and of B is held by two threads here. The right inverse "
         "picks one of them: look at the thread mode whose stride is 0 in the operand's TV layout (section 6)."),
        ("the other holder in the wrong warp", other_warp,
         "The second holder is in the wrong warp: which warps hold the same A (or B) element is the thread mode "
         "with stride 0 in that operand's TV layout, and thr_layout_vmnk says how warps are numbered."),
        ("lane, not thread", each(lambda h: (h[0] % 32, h[1], h[2])),
         "That is the lane: a 4-warp TiledMMA numbers its threads 0 to 127."),
        ("one warp's index decoding", lambda c: _decoded(c["operand"], c["row"] + HELD_ROWS * c["k"], 32),
         "The right inverse's index is read as for one warp: with 128 threads its thread part runs to 127, and "
         "the value is what lies above that."),
        ("register is the value index", each(lambda h: (h[0], 2 * h[1] + h[2], h[2])),
         "The register is the value index: value v of a thread is half v % 2 of register v // 2 (two fp16 in "
         "one 32-bit register)."),
        ("half and register swapped", each(lambda h: (h[0], h[2], h[1])),
         "Register and half are swapped: return (thread, register, half), register = value // 2, half = value % 2."),
        ("a column of 16", lambda c: _held_table(c["operand"]).get(((c["row"] + 16 * c["k"]) % HELD_ROWS,
                                                                    (c["row"] + 16 * c["k"]) // HELD_ROWS)),
         "The tile index is column-major over the whole 32-row tile: a column of A or of B is 32 elements "
         "long here, not one warp's 16."),
        ("B as K x N", lambda c: right(c) if c["operand"] == "A" else
         _held_table("B").get(((c["k"] + 16 * c["row"]) % HELD_ROWS, (c["k"] + 16 * c["row"]) // HELD_ROWS)),
         "B is indexed (n, k): CuTe's B tile is N x K (the MMA computes C[m, n] = sum over k of A[m, k] * B[n, k]),"
         " so B[n, k] sits at n + N * k."),
        ("row-major index", lambda c: _held_table(c["operand"]).get(((c["row"] * 16 + c["k"]) % HELD_ROWS,
                                                                     (c["row"] * 16 + c["k"]) // HELD_ROWS)),
         "The TV layout's index is column-major over the (rows, K) tile: row + rows * k, not row * K + k."),
    ]


def _ask_lands(answer, case):
    made = answer(case["operand"], case["row"], case["k"])
    if not isinstance(made, (tuple, list)) or not all(isinstance(h, (tuple, list)) and len(h) == 3 for h in made):
        raise TypeError(f"expected a list of (thread, register, half), got {made!r:.80}")
    return tuple(sorted(tuple(int(x) for x in holder) for holder in made))


def _lands_text(case):
    return f"{case['operand']}[{case['row']}, {case['k']}]"


def _lands_judge(part: str):
    def judge(context) -> Verdict:
        problem = first_error(context.outcomes)
        if problem:
            return problem
        for outcome in context.outcomes:
            want = _lands_want(outcome.case)
            got = outcome.value
            if ([h[0] for h in got] != [h[0] for h in want]) if part == "thread" else (got != want):
                why = _diagnosis(_lands_mistakes(), list(context.outcomes), _lands_want)
                if len({other.value for other in context.outcomes}) == 1:
                    why = ("Yours gives the same answer for every element (a worked example kept?): each (row, k) "
                           "has its own holders.")
                if not why:
                    why = ("The 2x2 TiledMMA's TV layout for this operand sends (thread, value) to the element's "
                           "column-major index in the 32 x 16 tile; every (thread, value) that reaches the index "
                           "holds the element.")
                return failed(f"{_lands_text(outcome.case)} is held by {list(want)} as (thread, register, half); "
                              f"yours is {list(got)}. {why}")
        return passed()
    return judge


LANDS_IN = Exercise(
    id="ch06.lands_in",
    statement="Write held_by(operand, row, k): every (thread, register, half), sorted, holding element (row, k) of "
              "A (32 x 16, row = m) or B (32 x 16, row = n) in section 6's TiledMMA: 2x2 warps of m16n8k16, "
              "permutation_mnk=(32, 32, 16), threads 0 to 127. A thread's value number `value` lies in register "
              "value // 2, half value % 2.",
    example="held_by('B', 20, 5) == [(18, 2, 1), (50, 2, 1)]",
    rule=("The tiled MMA's TV layout for an operand sends (thread, value) to the operand tile's column-major index; "
          "a thread mode with stride 0 means several threads reach the same index.\n"
          "Two fp16 values share one 32-bit register: value v lies in register v // 2, half v % 2.\n"
          "With permutation_mnk (32, 32, 16) the A and B tiles are both 32 rows by 16."),
    cases=_lands_cases,
    ask=_ask_lands,
    criteria=(
        Criterion("the threads", "reference", 1, _lands_judge("thread")),
        Criterion("the registers and the halves", "reference", 2, _lands_judge("all")),
    ),
)


# ---- ch06.ldmatrix_for -------------------------------------------------------------------------------------------

# the tiles where the easy wrong rules part from the right one; every seed asks all of them
EDGE_CASES = [
    {"operand": "B", "tile_mnk": (16, 24, 16), "atom_mnk": (16, 8, 16)},    # 4, then 3 N repeats: x2
    {"operand": "B", "tile_mnk": (16, 8, 48), "atom_mnk": (16, 8, 16)},     # 4, 1, then 3 K repeats: x2
    {"operand": "B", "tile_mnk": (16, 40, 16), "atom_mnk": (16, 8, 16)},    # 5 N repeats: x2
    {"operand": "B", "tile_mnk": (16, 8, 80), "atom_mnk": (16, 8, 16)},     # 5 K repeats: x2
    {"operand": "B", "tile_mnk": (16, 24, 32), "atom_mnk": (16, 8, 16)},    # 3 N repeats, even K: still x2
    {"operand": "B", "tile_mnk": (16, 8, 32), "atom_mnk": (16, 8, 16)},     # no N repeat, 2 K repeats: x4
    {"operand": "B", "tile_mnk": (16, 8, 8), "atom_mnk": (16, 8, 8)},       # 2 values a thread: x1
    {"operand": "A", "tile_mnk": (16, 8, 8), "atom_mnk": (16, 8, 8)},       # 4 values, nothing after: x2
    {"operand": "A", "tile_mnk": (32, 8, 8), "atom_mnk": (16, 8, 8)},       # 4, then 2 M repeats: x4
]


def _choose_cases(rng):
    cases = [dict(case) for case in EDGE_CASES]
    for atom_k in (16, 8):
        operand = rng.choice("AB")
        tile = (16 * rng.randint(1, 4), 8 * rng.randint(1, 8), atom_k * rng.randint(1, 64 // atom_k))
        cases.append({"operand": operand, "tile_mnk": tile, "atom_mnk": (16, 8, atom_k)})
    return cases


_fits: dict = {}


def _choose_want(case) -> int:
    """The largest num_matrices whose copy fits (cutekit's reference algebra, `ldmatrix_fit`)."""
    key = (case["operand"], tuple(case["tile_mnk"]), tuple(case["atom_mnk"]))
    if key not in _fits:
        from cutekit import cute
        _fits[key] = largest_fitting_ldmatrix(cute, *key)
    return _fits[key]


def _ask_choose(answer, case):
    made = answer(case["operand"], tuple(case["tile_mnk"]), tuple(case["atom_mnk"]))
    if isinstance(made, bool) or not isinstance(made, int):
        raise TypeError(f"expected 1, 2 or 4, got {made!r:.80}")
    return made


def _walk(case) -> str:
    """Why the case's answer is what it is, in the chapter's words."""
    operand, tile, atom = case["operand"], case["tile_mnk"], case["atom_mnk"]
    own, along_rows, along_k = thread_values(operand, tile, atom)
    rows = "M" if operand == "A" else "N"
    want = _choose_want(case)
    text = (f"a thread's {operand} values are {own} of one MMA, then {along_rows} repeat(s) along {rows}, then "
            f"{along_k} along K: x{want} takes {2 * want} from the front")
    if want < 4:
        text += f"; x{2 * want} would take {4 * want}, and {own} x {along_rows} x {along_k} does not split that way"
    return text


@functools.lru_cache(maxsize=None)
def _choose_mistakes():
    def rows_of(case):
        return case["tile_mnk"][ROWS[case["operand"]]]

    return [
        ("counts 8x8 matrices", lambda c: min(4, (rows_of(c) // 8) * (c["tile_mnk"][2] // 8)),
         "Counting the tile's 8x8 matrices is not enough: one ldmatrix fills consecutive values of a thread, in "
         "the MMA's value order, and x4 takes 8 of them."),
        ("ignores the MMA shape", lambda c: largest_ldmatrix(c["operand"], c["tile_mnk"], (16, 8, 16)),
         "The MMA atom is not always m16n8k16: with m16n8k8 a thread holds rows x K / 32 = 4 values of A and 2 "
         "of B per atom."),
        ("M for B", lambda c: largest_ldmatrix("A", c["tile_mnk"], c["atom_mnk"]),
         "B's rows are N (tile_mnk[1], atom_mnk[1]), not M: B's tile is N x K."),
        ("N >= 16 or K >= 32", lambda c: 4 if c["operand"] == "A" or rows_of(c) >= 16 or c["tile_mnk"][2] >= 32
         else 2,
         "'B with N >= 16 or K >= 32' is a rule read off one example: x4 needs the repeats that follow the atom's "
         "values to split into pairs."),
        ("N/8 x K/16 even", lambda c: 4 if c["operand"] == "A" or (rows_of(c) // 8) * (c["tile_mnk"][2] // 16) % 2
         == 0 else 2,
         "An even number of values per thread is not enough: the 8 values of an x4 must come from whole repeats "
         "in order (the N repeats first, then the K repeats)."),
        ("x4 for A, x2 for B", lambda c: 4 if c["operand"] == "A" else 2,
         "x4 for A and x2 for B is the rule of one MMA, not of a warp tile: the repeats along N and K can make x4 "
         "fit B, and a smaller MMA can make it miss A."),
        ("always x4", lambda c: 4, "x4 does not fit every tile."),
    ]


def _choose_criterion(operand: str):
    def judge(context) -> Verdict:
        problem = first_error(context.outcomes)
        if problem:
            return problem
        mine = [outcome for outcome in context.outcomes if outcome.case["operand"] == operand]
        for outcome in mine:
            want = _choose_want(outcome.case)
            if outcome.value != want:
                why = _diagnosis(_choose_mistakes(), list(context.outcomes), _choose_want)
                return failed(f"operand {operand}, {case_text(outcome.case)}: x{want} is the largest that fits, "
                              f"yours is {outcome.value}. {_walk(outcome.case)}. {why}".strip())
        return passed()
    return judge


LDMATRIX_FOR = Exercise(
    id="ch06.ldmatrix_for",
    statement="Write ldmatrix_for(operand, tile_mnk, atom_mnk): the largest num_matrices (4, 2, 1) whose ldmatrix "
              "copy loads every register of one warp's MMA fragment exactly once, for the MMA atom atom_mnk "
              "(fp16) repeated over tile_mnk.",
    example="ldmatrix_for('B', (16, 8, 16), (16, 8, 16)) == 2",
    rule=("An ldmatrix of n 8x8 matrices fills 2n consecutive fp16 values of each lane, in the MMA fragment's value "
          "order: the atom's own values, then its repeats along M (or N for B), then along K.\n"
          "It fits when those 2n values are whole pieces of that order; take the largest n of 4, 2, 1 that fits, so "
          "that every register is loaded exactly once."),
    cases=_choose_cases,
    ask=_ask_choose,
    forbidden=("make_tiled_copy_A", "make_tiled_copy_B", "make_tiled_copy", "make_tiled_copy_tv"),
    criteria=(
        Criterion("operand A (m16n8k16 and m16n8k8)", "reference", 1, _choose_criterion("A")),
        Criterion("operand B, including the tiles where x4 does not fit", "reference", 2, _choose_criterion("B")),
    ),
)


# ---- ch06.s2r_k_block --------------------------------------------------------------------------------------------

def _k_block_cases(rng):
    torch_ready()
    return [{"k_block": 1, "_seed": rng.randint(0, 10_000)}, {"k_block": 0, "_seed": rng.randint(0, 10_000)}]


def _ask_k_block(answer, case):
    import torch
    import warnings
    run, from_dlpack = on_simulator(answer)
    generator = torch.Generator().manual_seed(case["_seed"])
    # distinct integers, exact in fp16: a register's value names the element it came from
    b = torch.randperm(256, generator=generator).to(torch.float16).reshape(8, 32)
    out = torch.full((32, 4), -1.0, dtype=torch.float16)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run(from_dlpack(b, assumed_align=16), from_dlpack(out), case["k_block"])
    misfit = [str(warning.message) for warning in caught if warning.category.__name__ == "AtomDoesNotFitWarning"]
    from cutekit import cute
    mma = _warp_mma()
    identity = cute.make_identity_tensor((8, 32))
    position = {float(b[n, k]): (n, k) for n in range(8) for k in range(32)}
    wrong, unwritten = [], 0
    for thread in range(32):
        part = mma.get_slice(thread).partition_B(identity)
        for value in range(4):
            want = part[value, 0, case["k_block"]]
            got = float(out[thread, value])
            if got == -1.0:
                unwritten += 1
            elif position.get(got) != want:
                wrong.append((thread, value, want, position.get(got)))
    return {"unwritten": unwritten, "wrong": len(wrong), "first": wrong[0] if wrong else None,
            "misfit": misfit[0] if misfit else None}


RETILE_HINT = ("the destination is the MMA's registers seen through the copy: tCrB retiled by this thread's slice "
               "of the S2R copy, sliced at the same k-block as the source")
FIT_HINT = ("section 7's rule, for B's value modes on the TiledMMA's own warp tile (the single m16n8k16 atom), "
            "says which num_matrices fits")


def _k_block_criterion(context) -> Verdict:
    for outcome in context.outcomes:
        where = f"k-block {outcome.case['k_block']}"
        if outcome.error:
            first = outcome.error.strip().splitlines()[0][:700]
            if "retile" in first:            # the simulator's refusal says what went wrong; the cause is said here
                first = first.split(" Partition the source with")[0]
                return failed(f"{where}: {first} (the source is this thread's partition_S of sB; {RETILE_HINT})")
            if "out of range" in first:
                return failed(f"{where}: {first} (tXsB and tXrB are (CPY, CPY_N, CPY_K): k_block indexes the last "
                              "mode, and the other two stay whole)")
            return failed(f"{where}: {first} (the S2R copy of B is built for B's operand layout, an 8 x 16 "
                          "k-block of N x K; the source is sB partitioned by this thread's slice of it, its "
                          f"partition_S; {RETILE_HINT})")
        value = outcome.value
        if value["misfit"]:
            return failed(f"{where}: the ldmatrix does not fit B here: {value['misfit']} ({FIT_HINT})")
        if value["unwritten"]:
            return failed(f"{where}: {value['unwritten']} of the 128 values of the k-block were never loaded (copy "
                          "this k-block, the last mode of both the source partition and the retiled registers: the "
                          "retiled view shares tCrB's registers)")
        if value["wrong"]:
            thread, v, want, got = value["first"]
            return failed(f"{where}: {value['wrong']} values hold the wrong element; thread {thread} value {v} "
                          f"should hold B{want}, it holds B{got} (the S2R copy of B is built for B's operand "
                          "layout; the source and destination must be the same k-block, the source from this "
                          "thread's partition_S of the S2R copy, the destination its retile of tCrB)")
    return passed()


def _k_block_ptx(context) -> Verdict:
    report, problem = compiled_kernel(context.answer, ("Float16", 2, 8), ("Float16", 2, 8), 1,
                                      module="learner_s2r")
    if problem:
        try:        # the refusal that names the cause sits past the first 600 characters of CuTeDSL's error
            error = compile_notebook_kernel(context.answer, ("Float16", 2, 8), ("Float16", 2, 8), 1,
                                            module="learner_s2r").error or ""
        except (OSError, TypeError):
            error = problem.hint
        said = re.search(r"'cute\.copy' op expects same size in restAtomVRank,\s+but got srcShape: \S+ and "
                         r"dstShape: \S+", error)
        if said:
            return failed(f"CuTeDSL could not compile your kernel for sm_80: {' '.join(said.group(0).split())} "
                          f"({RETILE_HINT})")
        if "retile" in error or "restAtomV" in error or "crd2idx" in error:
            return failed(f"{problem.hint[:500]} ({RETILE_HINT})")
        return problem
    sizes = {n: report.count(f"ldmatrix.sync.aligned.m8n8.x{n}") for n in (1, 2, 4)}
    total = report.count("ldmatrix")
    found = ", ".join(f"{count} ldmatrix.x{n}" for n, count in sizes.items() if count) or "no ldmatrix"
    if total != 1:
        return failed(f"one k-block of B (8 x 16 fp16) on one m16n8k16 atom is one ldmatrix per thread; your PTX "
                      f"has {found} (copy only [None, None, k_block] of partition_S and of the retiled registers, "
                      f"with the largest ldmatrix that fits: {FIT_HINT})")
    if sizes[1]:
        return failed(f"your PTX has {found}: a smaller ldmatrix than fits one k-block of B ({FIT_HINT})")
    if sizes[4]:
        return failed(f"your PTX has {found}: the ldmatrix does not fit B here, one k-block of B gives each "
                      f"thread fewer values than an x4 fills ({FIT_HINT})")
    return passed()


S2R_K_BLOCK = Exercise(
    id="ch06.s2r_k_block",
    statement="Complete s2r_kernel: build the S2R TiledCopy of B (8 x 32, N x K) on the single m16n8k16 TiledMMA "
              "with the largest ldmatrix that fits, and load k-block `k_block` of sB into the MMA fragment.",
    example="load_k_block(B, out, 1): out[t, v] is B at partition_B(identity)[v, 0, 1] of thread t",
    rule=("Section 7: an ldmatrix.x_n fills 2n consecutive values of each lane, cut from the front of the operand's "
          "value modes on the TiledMMA's warp tile; the largest n that fits is the copy to build.\n"
          "Section 4: a thread's slice of the S2R TiledCopy partitions the shared tile in the copy's order "
          "(partition_S) and views the MMA's registers in the same order (retile); both are (CPY, CPY_N, CPY_K), "
          "and one k-block is one index of the last mode, the same on both sides."),
    cases=_k_block_cases,
    ask=_ask_k_block,
    timeout=120.0,
    criteria=(
        Criterion("every value of the k-block holds its MMA element", "reference", 3, _k_block_criterion),
        Criterion("compiled for sm_80: one ldmatrix of the size that fits, for the k-block", "cutedsl-cpu", 1,
                  _k_block_ptx),
    ),
)


EXERCISES = [REF_TO_SRC, LANDS_IN, LDMATRIX_FOR, S2R_K_BLOCK]
