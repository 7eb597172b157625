"""Chapter 06 exercises: src2ref / dst2ref of an ldmatrix atom, where an operand element lands (thread,
register, half), x1 / x2 / x4 for a warp tile, and the S2R copy of one k-block with `retile`.

The first three are graded on the reference algebra. The kernel is rebuilt from its source with the simulator
as `cutlass` (in the forked sandbox, as chapter 05 does) and every register it writes out is compared with
the MMA's A layout (partition_A of an identity tensor).
"""
from __future__ import annotations

import types

from .common import each_outcome, on_simulator, torch_ready
from .cutedsl import run_in_cutedsl
from .grading import Criterion, Exercise, Verdict, failed, passed

THIS_MODULE = __name__
MMA_SHAPE = (16, 8, 16)


# ---- for the chapter: real CuTeDSL on the CPU ------------------------------------------------------------------

def ldmatrix_copy_traced(cute, operand, tile_mnk, num_matrices, thread):
    """Inside a cute.jit trace: the S2R TiledCopy's TV layout, thread `thread`'s partition_S of an identity
    tile and the retile of its MMA fragment, as CuTeDSL builds them."""
    import cutlass
    op = cute.nvgpu.warp.MmaF16BF16Op(cutlass.Float16, cutlass.Float32, MMA_SHAPE)
    tiled_mma = cute.make_tiled_mma(op, (1, 1, 1), permutation_mnk=tuple(tile_mnk))
    atom = cute.make_copy_atom(cute.nvgpu.warp.LdMatrix8x8x16bOp(False, num_matrices), cutlass.Float16)
    make = cute.make_tiled_copy_A if operand == "A" else cute.make_tiled_copy_B
    tiled_copy = make(atom, tiled_mma)
    shape = (tile_mnk[0] if operand == "A" else tile_mnk[1], tile_mnk[2])
    identity = cute.make_identity_tensor(shape)
    thread_mma = tiled_mma.get_slice(thread)
    part = thread_mma.partition_A(identity) if operand == "A" else thread_mma.partition_B(identity)
    fragment = (tiled_mma.make_fragment_A if operand == "A" else tiled_mma.make_fragment_B)(part.shape)
    copy = tiled_copy.get_slice(thread)
    return "|".join([str(tiled_copy.layout_tv_tiled), str(copy.partition_S(identity)),
                     str(copy.retile(fragment).layout)])


def ldmatrix_copy_in_cutedsl(operand: str, tile_mnk: tuple, num_matrices: int, thread: int) -> tuple:
    """(TV layout, partition_S of an identity tile, retile of the MMA fragment) of the ldmatrix S2R copy that
    real CuTeDSL builds for one warp running m16n8k16 over `tile_mnk`, for thread `thread`."""
    reply = run_in_cutedsl(THIS_MODULE, "ldmatrix_copy_traced", [(operand, tile_mnk, num_matrices, thread)],
                           with_cute=True)
    if not reply.ok or reply.values[0][1]:
        raise RuntimeError(f"CuTeDSL could not build the copy: {reply.error or reply.values[0][1]}")
    return tuple(reply.values[0][0].split("|"))


def _atom(num_matrices, transpose):
    from cutekit import cute
    return cute.make_copy_atom(cute.nvgpu.warp.LdMatrix8x8x16bOp(transpose, num_matrices), cute.Float16)


def _warp_mma(tile_mnk=None):
    from cutekit import cute
    op = cute.nvgpu.warp.MmaF16BF16Op(cute.Float16, cute.Float32, MMA_SHAPE)
    if tile_mnk is None:
        return cute.make_tiled_mma(op)
    return cute.make_tiled_mma(op, (1, 1, 1), permutation_mnk=tile_mnk)


def _values(layout) -> list:
    """A layout as the list of what it sends each index to (its function, whatever its shape)."""
    from cutekit import cute
    return [layout(i) for i in range(cute.size(layout))]


# ---- ch06.to_reference ---------------------------------------------------------------------------------------

def _reference_cases(rng):
    cases = [{"num_matrices": 4, "transpose": False, "side": "src"},
             {"num_matrices": rng.choice((1, 2)), "transpose": False, "side": "src"},
             {"num_matrices": rng.choice((1, 2, 4)), "transpose": True, "side": "src"},
             {"num_matrices": rng.choice((2, 4)), "transpose": rng.choice((False, True)), "side": "dst"},
             {"num_matrices": rng.choice((1, 2, 4)), "transpose": True, "side": "dst"}]
    rng.shuffle(cases)
    return cases


def _ask_reference(answer, case):
    atom = _atom(case["num_matrices"], case["transpose"])
    # only the three layouts: the atom's own src_to_ref / dst_to_ref are the answer
    given = types.SimpleNamespace(layout_src_tv=atom.layout_src_tv, layout_dst_tv=atom.layout_dst_tv,
                                  layout_ref_tv=atom.layout_ref_tv, op=atom.op, value_type=atom.value_type)
    made = answer(given, case["side"])
    if not hasattr(made, "shape") or not callable(made):
        raise TypeError(f"expected a Layout, got {type(made).__name__}: {made!r:.80}")
    return {"text": str(made), "values": _values(made)}


def _reference_want(case):
    atom = _atom(case["num_matrices"], case["transpose"])
    return atom.src_to_ref if case["side"] == "src" else atom.dst_to_ref


def _reference_side(side: str):
    @each_outcome
    def judge(outcome) -> Verdict | None:
        case = outcome.case
        if case["side"] != side:
            return None
        want = _reference_want(case)
        if outcome.value["values"] == _values(want):
            return None
        atom = _atom(case["num_matrices"], case["transpose"])
        chosen = atom.layout_src_tv if side == "src" else atom.layout_dst_tv
        got = outcome.value["text"]
        why = (f" {side}2ref = composition(right_inverse(ref), {side}): first {side} sends (thread, value) to "
               "an offset, then right_inverse(ref) sends the offset to a reference (thread, value) index.")
        if got == str(chosen):
            why = f" That is the {side} layout itself, (thread, value) -> offset, not -> reference index." + why
        elif side == "dst" and got == str(atom.layout_src_tv):
            why = " That is the source side: the dst side renumbers the destination layout." + why
        return failed(f"ldmatrix x{case['num_matrices']}{' transposed' if case['transpose'] else ''}, "
                      f"side {side!r}: want {want}, yours is {got}.{why}")
    return judge


TO_REFERENCE = Exercise(
    id="ch06.to_reference",
    statement="Write to_reference(atom, side): src2ref (side 'src') or dst2ref (side 'dst') of a copy atom, "
              "from its layout_src_tv, layout_dst_tv and layout_ref_tv.",
    example="to_reference(ldmatrix x4, 'src') is ((8,4),(2,4)):((4,64),(32,1))",
    cases=_reference_cases,
    ask=_ask_reference,
    criteria=(
        Criterion("dst2ref: the destination renumbered (the identity for ldmatrix)", "reference", 1,
                  _reference_side("dst")),
        Criterion("src2ref: the source renumbered into the reference order", "reference", 2,
                  _reference_side("src")),
    ),
)


# ---- ch06.lands_in -------------------------------------------------------------------------------------------

def _lands_cases(rng):
    cases = [{"operand": "A", "row": rng.randint(8, 15), "k": rng.randint(0, 7)},
             {"operand": "A", "row": rng.randint(0, 7), "k": rng.randint(8, 15)},
             {"operand": "B", "row": rng.randint(0, 7), "k": rng.randint(8, 15)}]
    while len(cases) < 8:
        operand = rng.choice("AB")
        cases.append({"operand": operand, "row": rng.randint(0, 15 if operand == "A" else 7),
                      "k": rng.randint(0, 15)})
    return cases


def _lands_want(case) -> tuple:
    mma = _warp_mma()
    tv = mma.tv_layout_A_tiled if case["operand"] == "A" else mma.tv_layout_B_tiled
    rows = 16 if case["operand"] == "A" else 8
    target = case["row"] + rows * case["k"]
    for thread in range(32):
        for value in range(8 if case["operand"] == "A" else 4):
            if tv((thread, value)) == target:
                return (thread, value // 2, value % 2)
    raise AssertionError(f"no thread holds {case}")


def _ask_lands(answer, case):
    made = answer(case["operand"], case["row"], case["k"])
    if not isinstance(made, (tuple, list)) or len(made) != 3:
        raise TypeError(f"expected (thread, register, half), got {made!r:.80}")
    return tuple(int(x) for x in made)


def _lands_text(case):
    return f"{case['operand']}[{case['row']}, {case['k']}]"


@each_outcome
def _lands_thread(outcome) -> Verdict | None:
    want = _lands_want(outcome.case)
    if outcome.value[0] != want[0]:
        return failed(f"{_lands_text(outcome.case)} is held by thread {want[0]}, not {outcome.value[0]}: in the "
                      "MMA layout, thread t holds rows (t // 4) and (t // 4) + 8 of A (row t // 4 of B) and "
                      "columns 2 * (t % 4), +1 of every 8-wide k half; invert the operand's TV layout")
    return None


@each_outcome
def _lands_register(outcome) -> Verdict | None:
    want = _lands_want(outcome.case)
    if outcome.value != want:
        return failed(f"{_lands_text(outcome.case)} lands in thread {want[0]}, register {want[1]}, half "
                      f"{want[2]}; yours is {outcome.value}. Value v of a thread is half v % 2 of register "
                      "v // 2; A's values go (k, k+1), then row + 8, then k + 8 (strides (16,8,128)).")
    return None


LANDS_IN = Exercise(
    id="ch06.lands_in",
    statement="Write lands_in(operand, row, k): (thread, register, half) holding element (row, k) of A (16x16) "
              "or B (8x16) of the m16n8k16 MMA.",
    example="lands_in('A', 8, 1) == (0, 1, 1)",
    cases=_lands_cases,
    ask=_ask_lands,
    criteria=(
        Criterion("the thread", "reference", 1, _lands_thread),
        Criterion("the register and the half", "reference", 2, _lands_register),
    ),
)


# ---- ch06.ldmatrix_for ---------------------------------------------------------------------------------------

def _choose_cases(rng):
    cases = [{"operand": "B", "tile_mnk": (rng.choice((16, 32)), 8, 16)},
             {"operand": "B", "tile_mnk": (16, 8, 32)},
             {"operand": "B", "tile_mnk": (rng.choice((16, 32)), rng.choice((16, 32)), 16)},
             {"operand": "A", "tile_mnk": (rng.choice((16, 32, 64)), 8, rng.choice((16, 32)))}]
    while len(cases) < 7:
        cases.append({"operand": rng.choice("AB"),
                      "tile_mnk": (rng.choice((16, 32)), rng.choice((8, 16, 32)), rng.choice((16, 32)))})
    return cases


def _choose_want(case) -> int:
    from cutekit import cute
    make = cute.make_tiled_copy_A if case["operand"] == "A" else cute.make_tiled_copy_B
    mma = _warp_mma(case["tile_mnk"])
    for num_matrices in (4, 2, 1):
        try:
            make(_atom(num_matrices, False), mma)
            return num_matrices
        except ValueError:
            continue
    raise AssertionError(f"no ldmatrix fits {case}")


def _ask_choose(answer, case):
    made = answer(case["operand"], case["tile_mnk"])
    if isinstance(made, bool) or not isinstance(made, int):
        raise TypeError(f"expected 1, 2 or 4, got {made!r:.80}")
    return made


def _choose_criterion(operand: str):
    @each_outcome
    def judge(outcome) -> Verdict | None:
        case = outcome.case
        if case["operand"] != operand:
            return None
        want = _choose_want(case)
        if outcome.value != want:
            rows = "M" if operand == "A" else "N"
            return failed(f"operand {operand}, warp tile {case['tile_mnk']}: x{want} is the largest that fits "
                          f"(cutekit's make_tiled_copy_{operand} accepts it), yours is {outcome.value}. One x4 needs "
                          f"four 8x8 matrices in a thread's values: count the 8x8 blocks of the warp's {rows} x K "
                          "operand tile (at most 4 per instruction).")
        return None
    return judge


LDMATRIX_FOR = Exercise(
    id="ch06.ldmatrix_for",
    statement="Write ldmatrix_for(operand, tile_mnk): the largest num_matrices (4, 2, 1) whose ldmatrix atom "
              "make_tiled_copy_A/B accepts for one warp running m16n8k16 over tile_mnk.",
    example="ldmatrix_for('B', (16, 8, 16)) == 2",
    cases=_choose_cases,
    ask=_ask_choose,
    forbidden=("make_tiled_copy_A", "make_tiled_copy_B", "make_tiled_copy", "make_tiled_copy_tv"),
    criteria=(
        Criterion("operand A", "reference", 1, _choose_criterion("A")),
        Criterion("operand B (N and K decide)", "reference", 2, _choose_criterion("B")),
    ),
)


# ---- ch06.s2r_k_block ----------------------------------------------------------------------------------------

def _k_block_cases(rng):
    torch_ready()
    return [{"k_block": 1, "seed": rng.randint(0, 10_000)}, {"k_block": 0, "seed": rng.randint(0, 10_000)}]


def _ask_k_block(answer, case):
    import torch
    run, from_dlpack = on_simulator(answer)
    generator = torch.Generator().manual_seed(case["seed"])
    # distinct integers, exact in fp16: a register's value names the element it came from
    a = torch.randperm(512, generator=generator).to(torch.float16).reshape(16, 32)
    out = torch.full((32, 8), -1.0, dtype=torch.float16)
    run(from_dlpack(a, assumed_align=16), from_dlpack(out), case["k_block"])
    from cutekit import cute
    mma = _warp_mma((16, 8, 32))
    identity = cute.make_identity_tensor((16, 32))
    position = {float(a[m, k]): (m, k) for m in range(16) for k in range(32)}
    wrong, unwritten = [], 0
    for thread in range(32):
        part = mma.get_slice(thread).partition_A(identity)
        for value in range(8):
            want = part[value, 0, case["k_block"]]
            got = float(out[thread, value])
            if got == -1.0:
                unwritten += 1
            elif position.get(got) != want:
                wrong.append((thread, value, want, position.get(got)))
    return {"unwritten": unwritten, "wrong": len(wrong), "first": wrong[0] if wrong else None}


def _k_block_criterion(context) -> Verdict:
    for outcome in context.outcomes:
        where = f"k-block {outcome.case['k_block']}"
        if outcome.error:
            return failed(f"{where}: {outcome.error.splitlines()[0][:400]} (the source is "
                          "s2r.get_slice(tidx).partition_S(sA), the destination s2r.get_slice(tidx).retile(tCrA), "
                          "both sliced [None, None, k_block])")
        value = outcome.value
        if value["unwritten"]:
            return failed(f"{where}: {value['unwritten']} of the 256 registers were never loaded (copy into "
                          "retile(tCrA)[None, None, k_block]: the retiled view shares tCrA's registers)")
        if value["wrong"]:
            thread, v, want, got = value["first"]
            return failed(f"{where}: {value['wrong']} registers hold the wrong element; thread {thread} value {v} "
                          f"should hold A{want}, it holds A{got} (the source and destination must be the same "
                          "k-block, the source from partition_S of the S2R copy, the destination its retile)")
    return passed()


S2R_K_BLOCK = Exercise(
    id="ch06.s2r_k_block",
    statement="Complete s2r_kernel: ldmatrix k-block `k_block` of a 16x32 shared-memory A tile into the MMA "
              "fragment through partition_S and retile.",
    example="load_k_block(A, out, 1): out[t, v] is A at partition_A(identity)[v, 0, 1] of thread t",
    cases=_k_block_cases,
    ask=_ask_k_block,
    timeout=120.0,
    criteria=(Criterion("every register of the k-block holds its MMA element", "reference", 3,
                        _k_block_criterion),),
)


EXERCISES = [TO_REFERENCE, LANDS_IN, LDMATRIX_FOR, S2R_K_BLOCK]
