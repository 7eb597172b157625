"""Chapter 08 exercises: the parts of a Hopper GEMM a learner writes. The shared-memory layout for a tile and a
dtype (the swizzle chosen from the contiguous extent in bytes), the TMA boxes and the transaction count of a
stage, the number of stages that fits in 227 KiB, and two loops of the chapter's kernel: the producer warp's
(mbarrier waits, arrivals with their bytes, TMA loads, phases) and the consumers' wgmma main loop.

Cases are drawn from a seed. The layout, box and stage generators draw until the cases tell every modelled
mistake apart from the right answer (each mistake below gives a wrong result on at least one case of every
draw), so a hint can name the mistake it recognises. The two loops run inside the chapter's kernel
(benchmarks/kernels/hopper_gemm.py, the learner's function in place of its `produce` or `consume`) on the
simulator, which checks the order a GPU needs and names the first thing that goes wrong ("waited on the wrong
phase", "stage reused before its consumer released it", "missing fence", ...); real CuTeDSL compiles the
kernel with the learner's loop for sm_90a where it is installed, and its PTX is read.

The capstone (`ch08.capstone`) is the learner's whole kernel, D = relu(A B^T + bias): two ragged problems on the
simulator, the simulator's ordering messages passed on with what to change, a wrong D named from what it holds
(`capstone_diagnosis`), the PTX of an sm_90a compile read, and on an sm_90 GPU a 4096^3 run timed against
torch.relu(torch.addmm(...)).
"""
from __future__ import annotations

import re
import tempfile
from pathlib import Path

from .common import case_text, each_outcome
from .cutedsl import FakeTensor, answer_in_cutedsl, compile_to_ptx
from .grading import Criterion, Exercise, Verdict, failed, passed
from .kernels import (decorated_with_jit, fresh_kernel, gpu_gemm_bias_relu, gpu_gemm_criterion, kernel_module_source,
                      kernel_root, unwrap, use_the_simulator)

SMEM_LIMIT = 227 * 1024           # bytes of shared memory one block may use on sm_90
BARRIER_BYTES = 8                 # one mbarrier
DTYPES = ("Float16", "BFloat16", "Float32", "Int8")


def _dtype(name):
    from cutekit import cute
    return getattr(cute, name) if hasattr(cute, name) else getattr(cute.typing, name)


def _width(name) -> int:
    return {"Float16": 16, "BFloat16": 16, "Float32": 32, "Int8": 8}[name]


def _matching(value, case, models: dict, facts: dict):
    """The hints of every modelled mistake whose answer for `case` is `value`, one per line ("" if none is):
    two mistakes can give the same answer on a case, and the learner made one of them."""
    hints = []
    for model, hint in models.values():
        try:
            if model(case) == value:
                hints.append(hint.format(**facts))
        except Exception:
            continue
    return "\n".join(hints)


def _draw_until_told_apart(rng, draw, reference, models, tries=400):
    """Cases from `draw(rng)` until every model differs from `reference` on at least one of them."""
    for _ in range(tries):
        cases = draw(rng)
        if all(any(_safe(model, case) != reference(case) for case in cases) for model, _ in models.values()):
            return cases
    raise RuntimeError("no draw tells the modelled mistakes apart")


def _safe(function, case):
    try:
        return function(case)
    except Exception as error:
        return f"error: {error}"


# ---- ch08.smem_layout -----------------------------------------------------------------------------------------

SWIZZLE_ROWS = {128: "SW128", 64: "SW64", 32: "SW32"}


def swizzle_kind_for(contiguous_bytes: int) -> str:
    """The largest swizzle whose row (128, 64 or 32 bytes) divides the contiguous extent; INTER otherwise
    (cutlass.utils.hopper_helpers.get_smem_layout_atom's rule)."""
    for row, kind in SWIZZLE_ROWS.items():
        if contiguous_bytes % row == 0:
            return kind
    return "INTER"


def _layout_text(case, kind_major=None, kind_bytes=None, order=None, stages=True):
    from cutekit import cute
    from cutekit.cute.nvgpu import warpgroup
    mn, k, major, dtype = case["mn"], case["k"], case["major"], case["dtype"]
    atom_major = kind_major or major
    contiguous = k if major == "K" else mn
    if kind_bytes is None:
        kind_bytes = contiguous * _width(dtype) // 8
    kind = getattr(warpgroup.SmemLayoutAtomKind, f"{atom_major}_{swizzle_kind_for(kind_bytes)}")
    atom = warpgroup.make_smem_layout_atom(kind, _dtype(dtype))
    if order is None:
        order = (0, 1, 2) if major == "K" else (1, 0, 2)
    shape = (mn, k, case["stages"]) if stages else (mn, k)
    return str(cute.tile_to_shape(atom, shape, order=order[:len(shape)]))


def reference_smem_layout(case) -> str:
    return _layout_text(case)


SMEM_MODELS = {
    "always 128": (lambda c: _layout_text(c, kind_bytes=128 * 4),
                   "you always use the 128-byte swizzle; the contiguous extent here is {bytes} bytes, so the atom "
                   "is the largest swizzle whose row (128, 64 or 32 bytes) divides it: {kind}"),
    "elements": (lambda c: _layout_text(c, kind_bytes=(c["k"] if c["major"] == "K" else c["mn"]) * 2),
                 "you chose the swizzle from the number of elements as if they were 2 bytes each; the contiguous "
                 "extent is {extent} {dtype} elements = {bytes} bytes, so the swizzle is {kind}"),
    "other mode": (lambda c: _layout_text(c, kind_bytes=(c["mn"] if c["major"] == "K" else c["k"]) * _width(c["dtype"]) // 8),
                   "you chose the swizzle from the other mode's extent; a {major}-major tile is contiguous along "
                   "{contiguous_name}: {bytes} bytes, so the swizzle is {kind}"),
    "major swapped": (lambda c: _layout_text(c, kind_major="MN" if c["major"] == "K" else "K"),
                      "your atom is {other}-major, but the tile is {major}-major: use the {major}_ atom kinds "
                      "({major}_{kind})"),
    "order": (lambda c: _layout_text(c, order=(0, 1, 2) if c["major"] == "MN" else (1, 0, 2)),
              "the atoms are tiled in the wrong order: a K-major tile repeats the atom down M/N first "
              "(order=(0, 1, 2)), an MN-major one along K first (order=(1, 0, 2)), as make_smem_layout_a does"),
    "order 0 1": (lambda c: _layout_text(c, order=(0, 1, 2)),
                  "the atoms are tiled in the wrong order for an MN-major tile: repeat the atom along K first "
                  "(order=(1, 0, 2)), as make_smem_layout_a does; order=(0, 1, 2) is the K-major tiling"),
    "smallest": (lambda c: _layout_text(c, kind_bytes=32 if (c["k"] if c["major"] == "K" else c["mn"]) * _width(c["dtype"]) // 8 % 32 == 0 else 16),
                 "you use the 32-byte swizzle where {bytes} contiguous bytes allow {kind}: a smaller swizzle "
                 "leaves bank conflicts and shorter TMA/wgmma rows"),
    "no stages": (lambda c: _layout_text(c, stages=False),
                  "the layout has no stage mode: tile the atom to (mn, k, stages)"),
}


def _smem_draw(rng):
    cases = []
    for _ in range(4):
        major = rng.choice(["K", "MN"])
        dtype = rng.choice(DTYPES)
        width = _width(dtype)
        contiguous_bytes = rng.choice([32, 64, 128, 256, 96, 192])
        contiguous = contiguous_bytes * 8 // width
        other = rng.choice([64, 128, 192, 256])
        other = max(other, 8)
        mn, k = (other, contiguous) if major == "K" else (contiguous, other)
        cases.append({"mn": mn, "k": k, "dtype": dtype, "major": major, "stages": rng.choice([2, 3, 4, 5])})
    return cases


def _smem_cases(rng):
    cases = _draw_until_told_apart(rng, _smem_draw, reference_smem_layout, SMEM_MODELS)
    for case in cases:             # every case's tile must hold whole atoms in both modes
        reference_smem_layout(case)
    return cases


def _ask_smem(answer, case):
    from cutekit import cute
    layout = answer(case["mn"], case["k"], _dtype(case["dtype"]), case["major"], case["stages"])
    if not isinstance(layout, (cute.ComposedLayout, cute.Layout)):
        raise TypeError(f"expected a layout (cute.tile_to_shape of a warpgroup atom), got {type(layout).__name__}")
    return str(layout)


def _smem_facts(case):
    width = _width(case["dtype"])
    contiguous = case["k"] if case["major"] == "K" else case["mn"]
    nbytes = contiguous * width // 8
    return {"bytes": nbytes, "extent": contiguous, "dtype": case["dtype"], "major": case["major"],
            "other": "MN" if case["major"] == "K" else "K", "kind": swizzle_kind_for(nbytes),
            "contiguous_name": "K" if case["major"] == "K" else "M/N"}


@each_outcome
def _smem_swizzle(outcome) -> Verdict | None:
    want = reference_smem_layout(outcome.case)
    got = outcome.value
    if got.split(" o ")[0] == want.split(" o ")[0]:
        return None
    return _smem_hint(outcome, "the swizzle")


@each_outcome
def _smem_whole(outcome) -> Verdict | None:
    if outcome.value == reference_smem_layout(outcome.case):
        return None
    return _smem_hint(outcome, "the layout")


def _smem_hint(outcome, what) -> Verdict:
    case, got = outcome.case, outcome.value
    want = reference_smem_layout(case)
    facts = _smem_facts(case)
    named = _matching(got, case, SMEM_MODELS, facts)
    head = f"{case_text(case)}: {what} is\n{got}\nexpected\n{want}\n"
    if named:
        return failed(head + named)
    return failed(head + f"the contiguous mode ({facts['contiguous_name']}) is {facts['bytes']} bytes: the "
                  f"{facts['major']}_{facts['kind']} atom, tiled to (mn, k, stages)")


SMEM_WRAPPER = '''
def _ch08_layout(mn, k, dtype_name, major, stages):
    import cutlass
    return str({name}(mn, k, getattr(cutlass, dtype_name), major, stages))
'''


def _smem_in_cutedsl(context) -> Verdict:
    """cutedsl-cpu: real CuTeDSL, running the learner's own function (moved by source, cutekit's `cute` and
    `warpgroup` made CuTeDSL's), builds the layout cutekit built from it, case by case."""
    def compare(outcome, value, error):
        if error:
            return failed(f"{case_text(outcome.case)}: under real CuTeDSL your function raised {error}")
        if value != outcome.value:
            return failed(f"{case_text(outcome.case)}: real CuTeDSL builds\n{value}\nfrom your function; cutekit "
                          f"built\n{outcome.value}")
        return None

    return answer_in_cutedsl(context, SMEM_WRAPPER, "_ch08_layout",
                             lambda case: (case["mn"], case["k"], case["dtype"], case["major"], case["stages"]),
                             compare)


SMEM_LAYOUT = Exercise(
    id="ch08.smem_layout",
    statement="Write smem_layout(mn, k, dtype, major, stages): the staged shared-memory layout of an (mn, k) "
              "operand tile, K-major or MN-major, built from the warpgroup atom with the largest swizzle the "
              "contiguous extent (in bytes) allows.",
    example="smem_layout(128, 64, Float16, 'K', 4) is S<3,4,3> o 0 o ((8,16),(64,1),(1,4)):((64,512),(1,0),(0,8192))",
    rule=("A warpgroup atom's swizzle is the largest (128, 64 or 32 bytes) whose row divides the tile's contiguous "
          "extent in bytes: the K extent of a K-major tile, the MN extent of an MN-major one; if none divides, the "
          "interleaved atom.\n"
          "tile_to_shape repeats the atom over (mn, k, stages); its order says which mode's repeats come first, and "
          "the stage mode comes last."),
    cases=_smem_cases,
    ask=_ask_smem,
    criteria=(
        Criterion("the swizzle fits the contiguous extent in bytes", "reference", 1, _smem_swizzle),
        Criterion("the atom's major mode, its tiling order and the stages", "reference", 2, _smem_whole),
        Criterion("real CuTeDSL, running your function, builds the same layouts", "cutedsl-cpu", 1, _smem_in_cutedsl),
    ),
)


# ---- ch08.tma_plan ----------------------------------------------------------------------------------------------

def reference_tma_plan(case) -> dict:
    bm, bn, bk, width = case["bm"], case["bn"], case["bk"], _width(case["dtype"])
    return {"A": (bm // case["cluster_n"], bk), "B": (bn // case["cluster_m"], bk),
            "expect_tx": (bm + bn) * bk * width // 8}


def _bytes(case, rows) -> int:
    return rows * case["bk"] * _width(case["dtype"]) // 8


TMA_MODELS = {
    "whole B": (lambda c: {**reference_tma_plan(c), "B": (c["bn"], c["bk"])},
                "the {cluster_m} CTAs of a cluster column compute different rows of C from the same B tile: each "
                "loads 1/{cluster_m} of B's tile ({bn_part} rows) and multicasts it; your B box is the whole tile"),
    "whole A": (lambda c: {**reference_tma_plan(c), "A": (c["bm"], c["bk"])},
                "the {cluster_n} CTAs of a cluster row compute different columns of C from the same A tile: each "
                "loads 1/{cluster_n} of A's tile ({bm_part} rows) and multicasts it, as B's is shared down a "
                "cluster column; your A box is the whole tile"),
    "cluster modes swapped": (lambda c: {**reference_tma_plan(c), "A": (c["bm"] // c["cluster_m"], c["bk"]),
                                         "B": (c["bn"] // c["cluster_n"], c["bk"])},
                              "A's tile is shared by the CTAs along N (cluster_n of them: same rows of C, other "
                              "columns), B's by the CTAs along M (cluster_m); you divided each by the other "
                              "cluster mode"),
    "own share": (lambda c: {**reference_tma_plan(c),
                             "expect_tx": _bytes(c, c["bm"] // c["cluster_n"] + c["bn"] // c["cluster_m"])},
                  "the full barrier counts every byte that lands in this CTA's shared memory: all of A and all of "
                  "B arrive (its own shares and the other CTAs' multicast shares), so expect_tx counts the whole "
                  "tiles, not this CTA's shares of them"),
    "elements": (lambda c: {**reference_tma_plan(c), "expect_tx": (c["bm"] + c["bn"]) * c["bk"]},
                 "expect_tx is a count of bytes, not elements: multiply by {bytes} bytes per {dtype}"),
    "fp16 bytes": (lambda c: {**reference_tma_plan(c), "expect_tx": (c["bm"] + c["bn"]) * c["bk"] * 2},
                   "the element size is hard-coded as 2 bytes; {dtype} is {bytes} bytes"),
    "K first": (lambda c: {**reference_tma_plan(c), "A": (c["bk"], c["bm"] // c["cluster_n"]),
                           "B": (c["bk"], c["bn"] // c["cluster_m"])},
                "the boxes are written (K, M) / (K, N); they follow the tensors' modes: A is (M, K) and B (N, K)"),
    "one stage of A": (lambda c: {**reference_tma_plan(c), "expect_tx": _bytes(c, c["bm"])},
                       "expect_tx counts only A's bytes; the full barrier waits for A's and B's copies together"),
}


def _tma_draw(rng):
    cases = []
    for cluster_m, cluster_n in ((2, 1), (1, 2), (2, 2), rng.choice([(1, 1), (2, 4), (4, 2)])):
        cases.append({"bm": rng.choice([64, 128, 192]), "bn": rng.choice([64, 128, 256]),
                      "bk": rng.choice([32, 64, 128]), "cluster_m": cluster_m, "cluster_n": cluster_n,
                      "dtype": rng.choice(DTYPES)})
    rng.shuffle(cases)
    return cases


def _tma_cases(rng):
    return _draw_until_told_apart(rng, _tma_draw, reference_tma_plan, TMA_MODELS)


def _ask_tma(answer, case):
    plan = answer(case["bm"], case["bn"], case["bk"], case["cluster_m"], case["cluster_n"], _dtype(case["dtype"]))
    if not isinstance(plan, dict) or set(plan) != {"A", "B", "expect_tx"}:
        raise TypeError(f"expected a dict with keys 'A', 'B', 'expect_tx', got {plan!r:.120}")
    return {"A": tuple(plan["A"]), "B": tuple(plan["B"]), "expect_tx": plan["expect_tx"]}


def _tma_hint(outcome, keys) -> Verdict | None:
    case, got = outcome.case, outcome.value
    want = reference_tma_plan(case)
    if all(got[key] == want[key] for key in keys):
        return None
    facts = {**case, "bytes": _width(case["dtype"]) // 8, "bn_part": case["bn"] // case["cluster_m"],
             "bm_part": case["bm"] // case["cluster_n"]}
    named = _matching(got, case, TMA_MODELS, facts)
    wrong = ", ".join(f"{key} = {got[key]} (expected {want[key]})" for key in keys if got[key] != want[key])
    text = f"{case_text(case)}: {wrong}"
    if named:
        return failed(text + "\n" + named)
    return failed(text + "\nEach box is one CTA's share of a tile the CTAs sharing it split by rows, in the tensor's "
                  "modes; expect_tx is every byte of A's and B's tiles that lands in the CTA")


TMA_PLAN = Exercise(
    id="ch08.tma_plan",
    statement="Write tma_plan(bm, bn, bk, cluster_m, cluster_n, dtype): the TMA box each CTA of a cluster_m x "
              "cluster_n cluster loads for A (multicast across the cluster_n CTAs along N) and for B (across the "
              "cluster_m CTAs along M), and the bytes its full barrier expects per stage.",
    example="tma_plan(128, 256, 64, 2, 2, Float16) is {'A': (64, 64), 'B': (128, 64), 'expect_tx': 49152}",
    rule=("CTAs that need the same tile share it: those along M (same columns of C) share B's, those along N "
          "(same rows of C) share A's; each loads an equal share of the tile's rows and multicasts it to the "
          "others.\n"
          "A full barrier counts every byte that lands in its CTA's shared memory in one stage: all of A's tile and "
          "all of B's, the other CTAs' multicast shares included, in bytes, not elements."),
    cases=_tma_cases,
    ask=_ask_tma,
    criteria=(
        Criterion("the boxes of A and B each CTA loads", "reference", 1,
                  each_outcome(lambda outcome: _tma_hint(outcome, ("A", "B")))),
        Criterion("the transaction count of one stage", "reference", 1,
                  each_outcome(lambda outcome: _tma_hint(outcome, ("expect_tx",)))),
    ),
)


# ---- ch08.stage_count ----------------------------------------------------------------------------------------------

def _stage_bytes(c, width=None, b=True):
    width = _width(c["dtype"]) if width is None else width
    return (c["bm"] + (c["bn"] if b else 0)) * c["bk"] * width // 8


def _epilogue_bytes(c):
    return c["bm"] * c["bn"] * _width(c["c_dtype"]) // 8


def _fit(c, limit=SMEM_LIMIT, stage_bytes=None, barriers=True, epilogue=None):
    stage = _stage_bytes(c) if stage_bytes is None else stage_bytes
    per_stage = stage + (2 * BARRIER_BYTES if barriers else 0)
    extra = (0 if c["reuse"] else _epilogue_bytes(c)) if epilogue is None else epilogue
    return (limit - extra) // per_stage


def reference_stages(case) -> int:
    return _fit(case)


STAGE_MODELS = {
    "1000": (lambda c: _fit(c, limit=227 * 1000), "a KiB is 1024 bytes: the limit, 227 KiB, is 232448 bytes"),
    "228": (lambda c: _fit(c, limit=228 * 1024),
            "228 KiB is the SM's shared memory; one block may use 227 KiB (232448 bytes)"),
    "no B": (lambda c: _fit(c, stage_bytes=_stage_bytes(c, b=False)),
             "a stage holds A's (bm, bk) tile and B's (bn, bk) tile; you counted only A's"),
    "no barriers": (lambda c: _fit(c, barriers=False),
                    "each stage also has two 8-byte mbarriers (full and empty) in shared memory"),
    "bits": (lambda c: _fit(c, stage_bytes=_stage_bytes(c) * 8),
             "dtype.width is in bits: {dtype} is {bytes} bytes per element"),
    "epilogue always": (lambda c: _fit(c, epilogue=_epilogue_bytes(c)),
                        "with reuse the epilogue's C tile lives in the stages' buffers once the MMAs are done: it "
                        "costs no extra shared memory"),
    "epilogue never": (lambda c: _fit(c, epilogue=0),
                       "without reuse the epilogue's (bm, bn) tile of C needs its own {c_bytes} bytes"),
}


def _stage_case(rng, reuse):
    while True:
        case = {"bm": rng.choice([64, 128, 256]), "bn": rng.choice([64, 96, 128, 192, 256]),
                "bk": rng.choice([32, 64, 96, 128]), "dtype": rng.choice(["Float16", "BFloat16", "Int8"]),
                "c_dtype": rng.choice(["Float16", "Float32"]), "reuse": reuse}
        if reference_stages(case) >= 2:
            return case


def _stage_cases(rng):
    """Two cases with reuse and two without, then, for each modelled mistake the draw does not yet expose,
    one more case that does (the barriers' 16 bytes a stage, or 227 against 228 KiB, matter only near a limit)."""
    cases = [_stage_case(rng, reuse) for reuse in (True, False, True, False)]
    for model, _ in STAGE_MODELS.values():
        for _ in range(5000):
            if any(_safe(model, case) != reference_stages(case) for case in cases):
                break
            case = _stage_case(rng, rng.choice([True, False]))
            if _safe(model, case) != reference_stages(case):
                cases.append(case)
                break
        else:
            raise RuntimeError("no case tells a modelled mistake apart")
    rng.shuffle(cases)
    return cases


def _ask_stages(answer, case):
    value = answer(case["bm"], case["bn"], case["bk"], _dtype(case["dtype"]), _dtype(case["c_dtype"]), case["reuse"])
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"expected an int (the number of stages), got {value!r}")
    return value


@each_outcome
def _stages_right(outcome) -> Verdict | None:
    case, got = outcome.case, outcome.value
    want = reference_stages(case)
    if got == want:
        return None
    used = want * (_stage_bytes(case) + 2 * BARRIER_BYTES) + (0 if case["reuse"] else _epilogue_bytes(case))
    text = (f"{case_text(case)}: you said {got} stages; {want} fit ({want} x ({_stage_bytes(case)} bytes of A and B + "
            f"16 bytes of mbarriers){'' if case['reuse'] else f' + {_epilogue_bytes(case)} bytes of C'} = {used} "
            f"of {SMEM_LIMIT} bytes)")
    facts = {**case, "bytes": _width(case["dtype"]) // 8, "c_bytes": _epilogue_bytes(case)}
    named = _matching(got, case, STAGE_MODELS, facts)
    if not named:
        named = ("too many: they do not fit in 227 KiB" if got > want else "fewer than fit: count A's and B's tiles, "
                 "two 8-byte mbarriers per stage and, without reuse, C's tile")
    return failed(text + "\n" + named)


STAGE_COUNT = Exercise(
    id="ch08.stage_count",
    statement="Write stages_that_fit(bm, bn, bk, dtype, c_dtype, reuse): the most pipeline stages (A and B "
              "tiles plus a full and an empty mbarrier each) that fit in 227 KiB with the epilogue's C tile, "
              "which reuses the stages' memory when reuse is True and needs its own otherwise.",
    example="stages_that_fit(128, 256, 64, Float16, Float16, True) is 4",
    rule=("One stage holds A's (bm, bk) tile, B's (bn, bk) tile and two 8-byte mbarriers, a full and an empty one; "
          "a tile's bytes are its elements times the dtype's width in bits, over 8.\n"
          "The budget is 227 KiB (1 KiB = 1024 bytes); the epilogue's C tile needs its own room unless it reuses "
          "the stages' memory."),
    cases=_stage_cases,
    ask=_ask_stages,
    criteria=(Criterion("the number of stages that fits in 227 KiB", "reference", 2, _stages_right),),
)


# ---- ch08.mbarrier_phases and ch08.wgmma_main_loop: the producer's and the consumers' loops in the kernel ----------

KERNEL = "benchmarks.kernels.hopper_gemm"        # the chapter's kernel; its `produce` and `consume` are the loops
ROLES = {"ch08.mbarrier_phases": "produce", "ch08.wgmma_main_loop": "consume"}


def _loop_cases(rng, stage_choices=(2, 3, 4)):
    """A ragged problem with fewer k-tiles than stages, and one that goes round the ring of stages at least
    twice; one tile of C each (the simulator runs 384 threads a tile), BN and STAGES drawn."""
    stages, bn = rng.choice(stage_choices), rng.choice([64, 128])
    few = {"M": rng.randint(1, 128), "N": 8 * rng.randint(1, bn // 8), "K": 8 * rng.randint(1, 8 * (stages - 1)),
           "STAGES": stages, "BN": bn, "_data": rng.randrange(10_000)}
    laps = {"M": rng.randint(65, 128), "N": 8 * rng.randint(bn // 16, bn // 8),
            "K": 64 * (2 * stages + 1) + 8 * rng.randint(1, 7), "STAGES": stages, "BN": bn,
            "_data": rng.randrange(10_000)}
    return [few, laps]


def _consumer_cases(rng):
    """Two k-tiles of wgmmas in flight need a third stage for the producer to fill: 3 or 4 stages."""
    return _loop_cases(rng, (3, 4))


def _fresh_kernel():
    """The chapter's kernel module imported anew (on whatever `cutlass` is imported now), with its whole
    package: its helpers (`cta`, `tensors`) bind to that `cutlass` too."""
    return fresh_kernel(KERNEL, "loop")


def simulate_kernel(a, b, *, edit: tuple | None = None, **knobs):
    """C = A B^T for fp16 NumPy arrays a (M, K) and b (N, K), computed by the chapter's kernel on the simulator
    (with the module settings `knobs`, e.g. BN=128, STAGES=2). `edit` = (old, new) plants one change in the
    kernel's source first: how chapter 08 shows a mistake stopped by name. Returns C (fp16)."""
    import numpy

    import cutekit
    with cutekit.using("sim", fresh=("benchmarks",)):
        module = _fresh_kernel()
        if edit is not None:
            source = Path(module.__file__).read_text()
            if source.count(edit[0]) != 1:
                raise ValueError(f"simulate_kernel(edit=...): the kernel's source holds {edit[0]!r} "
                                 f"{source.count(edit[0])} times, not once")
            exec(compile(source.replace(*edit), module.__file__, "exec"), module.__dict__)  # noqa: S102
        from cutlass.cute.runtime import from_dlpack
        c = numpy.zeros((a.shape[0], b.shape[0]), numpy.float16)
        with module.configured(**knobs):
            module.gemm_tn(*[from_dlpack(t, assumed_align=16) for t in (a, b, c)])
        return c


def kernel_with(answer, role: str):
    """The chapter's `gemm_tn` with the learner's function as its `role` loop ("produce" or "consume"). Real
    CuTeDSL needs the function decorated in its source (decorated_with_jit); the simulator runs it as it is."""
    import cutlass
    module = _fresh_kernel()
    loop = answer if getattr(cutlass, "__cutekit_sim__", False) else decorated_with_jit(answer)
    setattr(module, role, loop)
    return module


def _run_loop(answer, role: str, case: dict, prepared: bool = False) -> dict:
    """C = A B^T with the learner's loop in the kernel, on the simulator (in the forked sandbox; `prepared`:
    the simulator is `cutlass` already)."""
    if not prepared:
        use_the_simulator(answer)
    import numpy

    from cutlass.cute.runtime import from_dlpack
    module = kernel_with(answer, role)
    rng = numpy.random.default_rng(case["_data"])
    a = rng.standard_normal((case["M"], case["K"])).astype(numpy.float16)
    b = rng.standard_normal((case["N"], case["K"])).astype(numpy.float16)
    c = numpy.full((case["M"], case["N"]), numpy.nan, dtype=numpy.float16)
    try:
        with module.configured(BN=case["BN"], STAGES=case["STAGES"]):
            module.gemm_tn(*[from_dlpack(t, assumed_align=16) for t in (a, b, c)])
    except Exception as error:  # noqa: BLE001 - the kernel's failure is the learner's message
        return {"error": f"{type(error).__name__}: {str(error).strip()}"}
    product = a.astype(numpy.float32) @ b.astype(numpy.float32).T
    wrong = numpy.argwhere(~numpy.isclose(c.astype(numpy.float32), product, rtol=2e-2, atol=6e-2)).tolist()
    return {"error": "", "wrong": len(wrong), "first": tuple(wrong[0]) if wrong else None,
            "nan": int(numpy.isnan(c).sum())}


def _ask_producer(answer, case):
    """The loop run in the kernel, and how many mbarrier waits the producer (thread 0) made."""
    from cutekit.sim.arch import sm90 as hopper
    hopper.EVENTS = []                  # this forked child only
    value = _run_loop(answer, "produce", case)
    value["waits"] = sum(1 for event in hopper.EVENTS if event[0] == "mbarrier_wait" and event[1] == 0)
    return value


def _ask_consumer(answer, case):
    """The loop run in the kernel, and after each of its wait_group calls (in the first consumer thread) how
    many committed groups were still running and how many had been committed."""
    from cutekit.sim.arch import sm90 as hopper
    hopper.EVENTS = []                  # this forked child only
    value = _run_loop(answer, "consume", case)
    left = [(running, committed) for kind, thread, running, committed in
            (event for event in hopper.EVENTS if event[0] == "wait_group") if thread == 128]
    value["left"] = left[:-1]          # the last wait_group is the one after the loop
    return value


# what a failure's message says -> the cause and the place in the loop, for each loop
PRODUCER_HINTS = (
    ("stage reused before its consumer released it", "from k-tile `stages` on, each load reuses a stage that an "
     "earlier k-tile filled: wait on empty + s for the consumers' release of the k-tile that last used it "
     "(k-tile k_tile - stages) before loading into stage s; a wait with the wrong parity returns at once, as if "
     "that release had come (a stage's first release completes its phase 0, its second phase 1, and so on)"),
    ("expected none", "each k-tile's copies need their bytes announced on full + s: all of the stage's bytes in "
     "one arrival (mbarrier_arrive_and_expect_tx), from one lane, and both copies reporting to that barrier"),
    ("never waited for", "load only the k-tiles that exist: with fewer k-tiles than stages the first lap ends at "
     "the last k-tile, not at the last stage"),
    ("more arrivals", "full + s counts one arrival per phase: one mbarrier_arrive_and_expect_tx per k-tile with all "
     "of the stage's bytes, in one lane, inside `with cute.arch.elect_one():`"),
    ("never go on", "a wait that never returns: the producer's wait on empty + s must name, by its parity, the "
     "phase that the release of k-tile k_tile - stages completes: a stage's first release completes its phase "
     "0, its second phase 1, and so on (the other parity waits for a phase no consumer completes yet); and each "
     "stage's full barrier must receive the announced bytes (both copies, A and B)"),
    ("wrong phase", "the consumers found a stage not loaded yet: each k-tile's copies must fill the stage its "
     "index wraps to on the ring, and report their bytes to that stage's full barrier"),
    ("was not initialized", "the stage index ran past the last stage: it must wrap around the ring of `stages` "
     "stages, so that full + s and empty + s stay inside the `stages` barriers of each kind"),
    ("out-of-bounds", "the stage index ran past the last stage (tAsA[None, s] has `stages` stages): it must wrap "
     "around the ring"),
)
CONSUMER_HINTS = (
    ("never committed", "warpgroup.commit_group() after each k-tile's cute.gemm calls: wait_group counts only "
     "committed groups"),
    ("waited on the wrong phase", "the consumers' wait on full[s] must name, by its parity, the phase that "
     "k-tile k_tile's copies complete: a stage's first fill completes its phase 0, its second phase 1, and so on"),
    ("missing fence", "warpgroup.fence() after the wait on full[s], before the k-tile's first cute.gemm"),
    ("not been retired", "release a stage only after warpgroup.wait_group has retired the wgmmas that read it; "
     "wait_group counts only committed groups (closed with warpgroup.commit_group()), so the commit comes first"),
    ("still in flight", "after the loop, the last k-tiles' wgmmas are still running when the epilogue reads the "
     "accumulators: wait until none is left"),
    ("was not initialized", "the released stage's index ran past the last stage: like every stage index it wraps "
     "around the ring, so the release stays inside the `stages` empty barriers"),
    ("more arrivals", "empty[s] counts one arrival per consumer warp: only one lane of each warp arrives"),
    ("never go on", "a wait that never returns: release every stage once its wgmmas are retired, on that stage's "
     "own empty barrier (the stage of the k-tile two back), one arrival per warp (lane 0)"),
    ("stage reused", "release a stage only once the wgmmas reading it are retired (committed, then waited for: "
     "wait_group counts only committed groups); with two k-tiles of wgmmas kept running, that is the stage of the "
     "k-tile two back, not this k-tile's or the one before; one arrival per warp (lane 0), on the empty barrier "
     "of the stage they read"),
)


def _loop_verdict(outcome, hints) -> Verdict | None:
    case = outcome.case
    where = (f"M={case['M']}, N={case['N']}, K={case['K']} ({-(-case['K'] // 64)} k-tiles) on {case['STAGES']} "
             f"stages, BN={case['BN']}")
    value = outcome.value or {}
    error = outcome.error or value.get("error", "")
    if error:
        advice = next((fix for clue, fix in hints if clue in error), "")
        text = error.strip()
        return failed(f"{where}: {text[:900]}" + (f"\nTo fix: {advice}" if advice else ""))
    if value["wrong"]:
        unwritten = f"; {value['nan']} outputs were never written" if value["nan"] else ""
        return failed(f"{where}: {value['wrong']} of {case['M'] * case['N']} outputs differ from NumPy's A @ B.T, "
                      f"the first at (m, n) = {value['first']}{unwritten}: every k-tile must be loaded (each into "
                      f"the stage its index wraps to) and multiplied once (every k-block of the stage)")
    return None


def _loop_criterion(which: int, hints):
    def judge(context) -> Verdict:
        for outcome in context.outcomes[which:which + 1]:
            verdict = _loop_verdict(outcome, hints)
            if verdict is not None:
                return verdict
        return passed()
    return judge


LAZY_KERNEL = """

import sys as _sys
_sys.path.insert(0, {root!r})      # where the chapter's kernel package lives


def __getattr__(name):
    \"\"\"`gemm_tn`: the chapter's kernel with the loop above as its {role} loop (built on first use).\"\"\"
    if name == "gemm_tn":
        from cutekit.checks import ch08_hopper
        return ch08_hopper.kernel_with({name}, "{role}").gemm_tn
    raise AttributeError(name)
"""

# opcode -> (at least, at most or None, what it says)
PRODUCER_PTX = (("mbarrier.try_wait.parity", 1, None, "an mbarrier_wait on empty[s]"),
                ("mbarrier.arrive.expect_tx", 1, None, "mbarrier_arrive_and_expect_tx on full[s]"),
                ("cp.async.bulk.tensor.2d.shared", 2, None, "the TMA loads of A and B"),
                ("elect.sync", 1, None, "elect_one around the arrival"))
CONSUMER_PTX = (("wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16", 4, 4, "BK / 16 = 4 wgmmas per k-tile"),
                ("wgmma.fence", 1, None, "warpgroup.fence()"),
                ("wgmma.commit_group", 1, None, "warpgroup.commit_group()"),
                ("wgmma.wait_group", 2, None, "one wait_group in the loop and one after it"),
                ("mbarrier.try_wait.parity", 1, None, "an mbarrier_wait on full[s]"))


DEPTH = 2          # exercise 5: k-tiles of wgmmas kept running


@each_outcome
def _producer_first_lap(outcome) -> Verdict | None:
    value, case = outcome.value or {}, outcome.case
    if outcome.error or value.get("error") or value.get("wrong"):
        return failed(f"{case_text(case)}: the loop must first compute C (the criteria above)")
    k_tiles = -(-case["K"] // 64)
    due = max(0, k_tiles - case["STAGES"])
    if value["waits"] != due:
        return failed(f"{k_tiles} k-tiles on {case['STAGES']} stages: the producer waited {value['waits']} times; "
                      f"the first {case['STAGES']} k-tiles' stages are fresh and need no wait, every later one "
                      f"waits once, on empty + s: {due} waits")
    return None


@each_outcome
def _consumer_depth(outcome) -> Verdict | None:
    value = outcome.value or {}
    if outcome.error or value.get("error") or value.get("wrong"):
        return failed(f"{case_text(outcome.case)}: the loop must first compute C (the criteria above)")
    wrong = [(running, committed) for running, committed in value["left"] if running != min(DEPTH, committed)]
    if wrong or not value["left"]:
        got = [running for running, _ in value["left"]][:8]
        return failed(f"after each k-tile's wait_group, {got} groups of wgmmas stayed running; this loop keeps "
                      f"{DEPTH} k-tiles of them running after each commit (wait_group(1) is section 3.7's loop, one "
                      f"k-tile deep; waiting for every group in the loop leaves the tensor cores idle while the "
                      f"warpgroup waits)")
    return None


def _kernel_root() -> str:
    """The folder holding the chapter's kernel package (the repository), for a compiler in another process."""
    return kernel_root(KERNEL)


def _ptx_criterion(role: str, expected):
    def judge(context) -> Verdict:
        try:
            source = kernel_module_source(context.answer)
        except (OSError, TypeError) as error:
            return failed(f"the loop's source cannot be read ({error}); define it in a notebook cell or a .py file")
        with tempfile.TemporaryDirectory(prefix="cutekit-ch08-") as folder:
            path = Path(folder) / f"learner_{role}.py"
            path.write_text(source + LAZY_KERNEL.replace("{name}", unwrap(context.answer).__code__.co_name)
                            .replace("{role}", role).replace("{root!r}", repr(_kernel_root())))
            report = compile_to_ptx(str(path), "gemm_tn", (FakeTensor("Float16", 2, 8),) * 3, arch="sm_90a")
        if not report.ok:
            first = report.error.strip().splitlines()[0][:500] if report.error.strip() else "no reason given"
            return failed(f"CuTeDSL could not compile the kernel with your loop for sm_90a: {first}")
        for opcode, least, most, what in expected:
            count = report.count(opcode)
            if count < least or (most is not None and count > most):
                want = f"{least}" if most == least else f"at least {least}" if most is None else f"{least}-{most}"
                return failed(f"the compiled kernel has {count} {opcode} where {what} should give {want}")
        if role == "consume" and not re.search(rf"wgmma\.wait_group\.sync\.aligned\s+{DEPTH};", report.ptx):
            return failed(f"the compiled kernel has no wgmma.wait_group.sync.aligned {DEPTH}: the loop keeps {DEPTH} "
                          f"k-tiles of wgmmas running with warpgroup.wait_group({DEPTH})")
        if report.local_memory:
            return failed(f"the compiled kernel uses local memory ({report.local_memory} ld/st.local): a stage or "
                          f"k-block index the compiler could not resolve; index k-blocks with cutlass.range_constexpr")
        return passed()
    return judge


GPU_CASE = {"M": 4096, "N": 4096, "K": 4096}


def _gpu_loop(role: str, loop, case) -> dict:
    """Harness (an sm_90 GPU, real CuTeDSL): the chapter's kernel with the learner's loop, on a case x case GEMM
    compared with fp32 torch, then timed (median of 20 launches) next to torch.matmul and the chapter's own
    kernel."""
    import torch

    from .kernels import gpu_median_ms
    M, N, K = case["M"], case["N"], case["K"]
    generator = torch.Generator(device="cuda").manual_seed(M + N + K)
    a = torch.randn(M, K, device="cuda", generator=generator).half()
    b = torch.randn(N, K, device="cuda", generator=generator).half()
    c = torch.full((M, N), float("nan"), device="cuda", dtype=torch.float16)
    launch = kernel_with(loop, role).prepare(a, b, c)
    launch()
    torch.cuda.synchronize()
    reference = (a.float() @ b.float().T).half()
    wrong = (~torch.isclose(c.float(), reference.float(), rtol=2e-2, atol=0.25)).nonzero().tolist()
    result = {"wrong": len(wrong), "first": tuple(wrong[0]) if wrong else None}
    if not wrong:
        chapters = _fresh_kernel().prepare(a, b, torch.empty_like(c))
        result["ms"] = gpu_median_ms(launch)
        result["chapter_ms"] = gpu_median_ms(chapters)
        result["torch_ms"] = gpu_median_ms(lambda: torch.matmul(a, b.T))
    return result


def gpu_producer(loop, case):
    return _gpu_loop("produce", loop, case)


def gpu_consumer(loop, case):
    return _gpu_loop("consume", loop, case)


def _gpu_criterion(harness: str):
    return gpu_gemm_criterion(__name__, harness, GPU_CASE, chapter_kernel=True)


MBARRIER_PHASES = Exercise(
    id="ch08.mbarrier_phases",
    statement="Write the producer warp's loop with its first lap unwaited, producer_loop(tma_a, tAgA, tAsA, tma_b, "
              "tBgB, tBsB, full, empty, k_tiles, stages, bytes_per_stage): no wait for the first `stages` k-tiles, "
              "then for every k-tile a wait on empty + s with the parity of the release it needs (worked out "
              "from the k-tile index); the stage's bytes announced on full + s in one lane, and the TMA loads "
              "of A and B into the stage.",
    example="it replaces the kernel's `produce`; the consumers, the epilogue and the launch are the chapter's",
    rule=("A phase of an mbarrier completes when its arrivals and its transaction bytes are all in; a wait on "
          "parity p returns once the phase with that parity has completed (a fresh barrier counts the phase before "
          "its first as completed).\n"
          "Each use of a stage completes one phase of that stage's barriers, so their parity alternates 0, 1, 0, "
          "... as the k-tiles go round the ring of stages.\n"
          "The producer announces a stage's bytes once per k-tile, from one lane (an arrival with expect_tx), and "
          "the TMA copies deliver them to the same barrier; before it refills a stage, it waits for the consumers' "
          "release on the stage's empty barrier."),
    cases=_loop_cases,
    ask=_ask_producer,
    timeout=240.0,
    criteria=(
        Criterion("fewer k-tiles than stages: C = A B^T, ragged M, N and K", "reference", 1,
                  _loop_criterion(0, PRODUCER_HINTS)),
        Criterion("twice round the ring: every wait, arrival and copy in order, C = A B^T", "reference", 2,
                  _loop_criterion(1, PRODUCER_HINTS)),
        Criterion("no wait in the first lap, one wait per k-tile after it", "reference", 1, _producer_first_lap),
        Criterion("compiled by real CuTeDSL for sm_90a: mbarrier waits, expect_tx, TMA loads, elect", "cutedsl-cpu",
                  1, _ptx_criterion("produce", PRODUCER_PTX)),
        Criterion("on an sm_90 GPU: a 4096^3 GEMM equals torch, timed against it", "gpu", 1,
                  _gpu_criterion("gpu_producer"), needs="sm_90"),
    ),
)


WGMMA_MAIN_LOOP = Exercise(
    id="ch08.wgmma_main_loop",
    statement="Write the consumers' main loop two k-tiles deep, consumer_loop(tiled_mma, accumulators, tCrA, "
              "tCrB, full, empty, k_tiles, stages, lane): for every k-tile wait until its stage is filled "
              "(full[s]), fence, issue its wgmmas and commit them, keep two k-tiles of them running, "
              "then release the stage of the k-tile two back (empty[s], lane 0 of each warp); "
              "after the loop, wait for every wgmma.",
    example="it replaces the kernel's `consume`; the producer, the epilogue and the launch are the chapter's",
    rule=("wgmmas run asynchronously: commit_group closes the wgmmas issued since the last commit into a group, and "
          "wait_group(n) returns once at most n committed groups are still running.\n"
          "A stage may be released (one arrival per warp on its empty barrier) only once the wgmmas that read it "
          "are retired, and the accumulators may be read only once none is running.\n"
          "The consumers wait on a stage's full barrier with the parity of the phase its k-tile's copies complete, "
          "and warpgroup.fence() orders earlier ordinary writes of the accumulators before the first wgmma."),
    cases=_consumer_cases,
    ask=_ask_consumer,
    timeout=240.0,
    criteria=(
        Criterion("fewer k-tiles than stages: C = A B^T, ragged M, N and K", "reference", 1,
                  _loop_criterion(0, CONSUMER_HINTS)),
        Criterion("twice round the ring: phases, fence, releases after retirement, C = A B^T", "reference", 2,
                  _loop_criterion(1, CONSUMER_HINTS)),
        Criterion("two k-tiles of wgmmas stay running after each wait_group", "reference", 1, _consumer_depth),
        Criterion("compiled by real CuTeDSL for sm_90a: 4 wgmma 64x256x16 per k-tile, fence, commit, wait",
                  "cutedsl-cpu", 1, _ptx_criterion("consume", CONSUMER_PTX)),
        Criterion("on an sm_90 GPU: a 4096^3 GEMM equals torch, timed against it", "gpu", 1,
                  _gpu_criterion("gpu_consumer"), needs="sm_90"),
    ),
)



# ---- ch08.capstone: the whole Hopper kernel, with a fused epilogue D = relu(A @ B^T + bias) ----------------

CAPSTONE_TOLERANCE = {"rtol": 2e-2, "atol": 6e-2}     # fp16 D against fp32 NumPy
BIAS_STEP = 0.125          # the bias is a shuffled run of multiples of 1/8: a column's value names its index
_CAPSTONE_FAILED: dict = {}     # in the forked child: the answer whose first problem failed (its second is skipped)


def _ragged(rng, low: int, high: int) -> int:
    """A multiple of 8 (TMA needs rows of whole 16-byte chunks) from low to high that 64 does not divide."""
    return 8 * rng.choice([eighths for eighths in range(low // 8, high // 8 + 1) if eighths % 8])


def _capstone_cases(rng):
    """Two ragged problems, each a few seconds on the simulator for 128 x 256 tiles: M, N and K divided by no
    tile of 64, 128 or 256. The first spans two such tiles along N with one short k-tile (fewer k-tiles than
    stages; the second tile-column's bias starts at column 256), rows 65-127 (the second warpgroup's rows
    partly past M); the second is one tile of at most 63 rows (the second warpgroup's all past M), 9 k-tiles
    deep: twice round a ring of 4 stages, the last k-tile short."""
    edges = {"M": rng.randint(65, 127), "N": _ragged(rng, 264, 376), "K": _ragged(rng, 8, 56), "_shape": 0,
             "_data": rng.randrange(10_000)}
    laps = {"M": rng.randint(9, 63), "N": _ragged(rng, 136, 248), "K": _ragged(rng, 520, 568), "_shape": 1,
            "_data": rng.randrange(10_000)}
    return [edges, laps]


def _capstone_data(case: dict):
    """A (M, K), B (N, K) fp16, bias (N,) fp32 and D (M, N) fp16 filled with NaN (never written shows)."""
    import numpy
    rng = numpy.random.default_rng(case["_data"])
    M, N, K = case["M"], case["N"], case["K"]
    a = rng.standard_normal((M, K)).astype(numpy.float16)
    b = rng.standard_normal((N, K)).astype(numpy.float16)
    bias = ((rng.permutation(N) - N // 2) * BIAS_STEP).astype(numpy.float32)
    d = numpy.full((M, N), numpy.nan, numpy.float16)
    return a, b, bias, d


def last_k_block_product(a, b):
    """A B^T over the last 16-wide k-block alone (the last k-tile zero-filled past K): what the accumulators
    hold when every wgmma overwrote them (the atom's ACCUMULATE field never set to True)."""
    import numpy
    K = a.shape[1]
    start = -(-K // 64) * 64 - 16
    if start >= K:
        return numpy.zeros((a.shape[0], b.shape[0]), numpy.float32)
    return a[:, start:].astype(numpy.float32) @ b[:, start:].astype(numpy.float32).T


def capstone_diagnosis(product, bias, d, last_block=None) -> dict:
    """What D holds, against relu(product + bias) with product = A B^T in fp32: {"wrong": 0} when it is right,
    else how many entries differ, the first, and `cause`: what D equals instead (no bias, no relu, relu before
    the bias, a bias per row, another column's bias, entries never written, only the last k-block's product
    when `last_block` is given) or "product" when the differences follow no such pattern."""
    import numpy
    want = numpy.maximum(product + bias, 0)
    got = d.astype(numpy.float32)

    def equals(other):
        return numpy.isclose(got, other, **CAPSTONE_TOLERANCE)

    right = equals(want)
    if right.all():
        return {"wrong": 0}
    m, n = (int(x) for x in numpy.argwhere(~right)[0])
    out = {"wrong": int((~right).sum()), "first": (m, n), "got": float(got[m, n]), "want": float(want[m, n]),
           "nan": int(numpy.isnan(got).sum())}
    if out["nan"] == got.size:
        out["cause"] = "all nan"
        return out
    if out["nan"]:
        rows, columns = numpy.nonzero(numpy.isnan(got))
        out.update(cause="unwritten", first_unwritten=(int(rows[0]), int(columns[0])),
                   from_row=int(rows.min()), from_column=int(columns.min()))
        return out
    candidates = [("no bias", numpy.maximum(product, 0)), ("no relu", product + bias),
                  ("relu first", numpy.maximum(product, 0) + bias)]
    if last_block is not None:
        candidates.insert(0, ("last k-block", numpy.maximum(last_block + bias, 0)))
    for cause, other in candidates:
        if equals(other).all():
            out["cause"] = cause
            return out
    # where D is clearly positive the clamp did nothing: D - A B^T is the bias that was added there. The bias
    # values are multiples of BIAS_STEP, so an added value names the bias entry it came from (below 64, fp16
    # rounds D by 1/64 at most)
    added = numpy.where((got > 0.5) & (got < 64), got - product, numpy.nan)
    counted = numpy.isfinite(added)
    steps = added[counted] / BIAS_STEP
    if not counted.any() or numpy.abs(steps - numpy.round(steps)).max() * BIAS_STEP > 0.04:
        out["cause"] = "product"
        return out
    seen = counted.any(axis=0)                       # columns with an entry the clamp left alone
    highest = numpy.where(counted, added, -numpy.inf).max(axis=0)
    lowest = numpy.where(counted, added, numpy.inf).min(axis=0)
    if (highest - lowest)[seen].max() >= 0.2:
        out["cause"] = "per row"
        return out
    received = numpy.where(seen, highest, 0.0)      # the one value each column received
    moved = [(int(j), int(numpy.argmin(numpy.abs(bias - received[j]))))
             for j in numpy.nonzero(seen & (numpy.abs(received - bias) > BIAS_STEP / 2))[0]]
    if not moved:
        out["cause"] = "product"
        return out
    shifts = {column - source for column, source in moved}
    out.update(cause="other column", moved=moved[:3], columns=len(moved),
               shift=shifts.pop() if len(shifts) == 1 else None)
    return out


def capstone_on_simulator(host, case: dict) -> dict:
    """Harness (the forked sandbox, the simulator as `cutlass`): the learner's host on one problem."""
    import time

    import numpy
    from cutlass.cute.runtime import from_dlpack
    a, b, bias, d = _capstone_data(case)
    started = time.perf_counter()
    try:
        host(*[from_dlpack(x, assumed_align=16) for x in (a, b, bias, d)])
    except Exception as error:  # noqa: BLE001 - the kernel's failure is the learner's message
        return {"error": f"{type(error).__name__}: {str(error).strip()}", "seconds": time.perf_counter() - started}
    seconds = time.perf_counter() - started
    product = a.astype(numpy.float32) @ b.astype(numpy.float32).T
    return {"error": "", "seconds": seconds, **capstone_diagnosis(product, bias, d, last_k_block_product(a, b))}


def _ask_capstone(answer, case):
    """The learner's kernel on one problem; the second is skipped once the first failed (a failing Hopper
    kernel costs seconds a problem, and the first problem's message is the one to act on)."""
    from .kernels import simulate_until_one_fails
    return simulate_until_one_fails(answer, capstone_on_simulator, case, _CAPSTONE_FAILED)


def _capstone_runs(outcome) -> list:
    """(problem, seconds) of the learner's kernel on the simulator, for the result's time lines (none for a
    problem skipped after the first failed)."""
    value = outcome.value or {}
    return [(_capstone_where(outcome.case), value["seconds"])] if "seconds" in value else []


# what a failure's message says -> what to change (names the cause and the place, not the code)
CAPSTONE_ERRORS = (
    ("waited on the wrong phase", "the consumers' wait on a stage's full barrier returned before that k-tile's "
     "copies landed: wait for the phase those copies complete (a consumer's parity starts at 0 and flips each "
     "time the stage index wraps round the ring)"),
    ("stage reused before its consumer released it", "the producer refilled a stage the consumers had not "
     "released. Either the producer did not wait on the stage's empty barrier for the release of the k-tile "
     "that used the stage one lap earlier (in the first lap nothing is released yet, and nothing needs to be), "
     "or the consumers arrived on it before the wait_group that retires that k-tile's wgmmas (an arrival "
     "releases only retired wgmmas)"),
    ("expected none", "each k-tile's full barrier must be told, once and by one lane, every byte its copies "
     "deliver (A's tile and B's tile)"),
    ("not been retired", "a stage is released after the wait_group that retires the wgmmas reading it, not "
     "before: release the stage of the k-tile whose group the wait just retired"),
    ("still in flight", "the epilogue reads the accumulators: every committed group of wgmmas must be waited "
     "for before"),
    ("accumulators that nothing has written", "registers start with garbage, not zero: the accumulators need "
     "a value before the first wgmma adds to them"),
    ("missing fence", "a fence is missing between two proxies or two writers: the message above names which "
     "and where"),
    ("out-of-bounds access to global tensor bias", "bias holds N values, one per column of D; the last "
     "tile-column reaches past column N, where no bias exists (D's edge drops those columns anyway)"),
    ("out-of-bounds", "D's last tile-row and tile-column are partial (M and N are not multiples of the tile): a "
     "store from registers must leave out the rows and columns past D's edge (a TMA store clips them itself)"),
    ("never waited for", "every TMA copy must complete on a barrier some thread waits on before the block "
     "ends: load only the k-tiles that exist"),
    ("was never fenced", "the barriers' initialization must be fenced for the copy engine by the thread that "
     "initialized them, then made visible to every thread by a barrier, before the first wait, arrival or copy"),
    ("was not initialized", "a thread used an mbarrier that no thread had initialized by then: an index past the "
     "barriers that were initialized, or a use before the barrier that makes their initialization visible to "
     "every thread"),
    ("with no barrier between its mbarrier.init", "a thread used an mbarrier before its initialization was made "
     "visible to every thread by a barrier"),
    ("more arrivals", "an mbarrier counts the arrivals it was initialised with, per phase: as many arriving "
     "threads as its count (one elected lane for a full barrier, one lane per consumer warp for an empty one)"),
    ("never go on", "a wait that never returns: every phase a thread waits for must be completed by arrivals "
     "(and, on a full barrier, by the bytes announced)"),
    ("launch grid=", "a grid with no CTA along a mode: the tiles of D must be counted rounding up, the partial "
     "tile at the ragged edge included"),
)
# the simulator's own remedies that spell out the code of a fix: the hint keeps the cause, the advice above
# says where to look
SIMULATOR_REMEDIES = (
    (re.compile(r"\s*Guard the access with an `if` on the tensor's shape \(e\.g\. `[^`]*`\) or fix the index"), ""),
    (re.compile(r": call cute\.arch\.fence_proxy\([^)]*\) after writing and before the barrier that precedes the "
                r"store"), ": the writes need a proxy fence (section 3.8) before the barrier that precedes the store"),
)


def _capstone_where(case) -> str:
    k_tiles = -(-case['K'] // 64)
    return f"M={case['M']}, N={case['N']}, K={case['K']} ({k_tiles} k-tile{'s' if k_tiles > 1 else ''} of 64)"


def _capstone_hint(value: dict, case: dict) -> str:
    cause, (m, n) = value.get("cause"), value["first"]
    head = (f"{value['wrong']} of {case['M'] * case['N']} entries of D differ from relu(A B^T + bias), the first "
            f"at (m, n) = ({m}, {n}): yours {value['got']:.3f}, expected {value['want']:.3f}. ")
    if cause == "all nan":
        return (head + "every entry of D is NaN: either nothing reached D (no store, or stores outside it), or what "
                "was stored was NaN: registers read before anything wrote them (registers start with garbage; the "
                "simulator fills new registers with NaN so that such a read shows)")
    if cause == "unwritten":
        um, un = value["first_unwritten"]
        return (head + f"{value['nan']} entries were never written, the first at ({um}, {un}), none before row "
                f"{value['from_row']} or column {value['from_column']}: every tile of D needs a CTA and a store, "
                f"the partial tiles at the ragged edge too (count tiles rounding up)")
    if cause == "last k-block":
        return (head + "D holds only the last k-block's product (the last 16 k of the last k-tile, zeros past K; + bias, clamped): each "
                "wgmma overwrote the accumulators instead of adding to them. CuTeDSL makes the wgmma atom with its "
                "ACCUMULATE field false, so every wgmma computes D = A B until the kernel sets that field to "
                "True (a GPU does the same)")
    if cause == "no bias":
        return head + "D is relu(A B^T): the bias was never added to the accumulators before the store"
    if cause == "no relu":
        return head + "D is A B^T + bias, negative values included: the clamp at 0 is missing from the epilogue"
    if cause == "relu first":
        return (head + "D is relu(A B^T) + bias: the clamp at 0 came before the bias was added; the bias goes in "
                "first, then the clamp")
    if cause == "per row":
        return (head + "the bias you added changes down the rows of a column: bias holds one value per column n of "
                "D, and every row of column n gets that same value (if the column came from D's TMA coordinate "
                "tensor: its entries are in the TMA box's order, contiguous dimension first, so (n, m) for D, not "
                "(m, n); chapter 08, section 3.6)")
    if cause == "other column":
        (column, source), shift = value["moved"][0], value["shift"]
        text = head + f"column {column} received the bias of column {source} ({value['columns']} columns got another column's bias): "
        if shift is not None and shift >= 64:
            return text + (f"every wrong column is {shift} columns past its bias, so each tile-column read the first "
                           f"tile-column's bias: the bias of a tile starts at the tile's first column of D")
        return text + ("within a tile, a thread added the bias of columns its accumulators do not hold: pair each "
                       "accumulator with its own column, from the thread's own slice of the TiledMMA (a slice by "
                       "the warpgroup's first thread gives that thread's columns, not this one's)")
    return (head + "the differences are not the bias's or the clamp's: the product A B^T itself is wrong there "
            "(every k-tile loaded into its stage and multiplied once, every tile at its own rows and columns)")


def _capstone_criterion(shape: int):
    from .kernels import capstone_problem_criterion
    return capstone_problem_criterion(shape, _capstone_where, CAPSTONE_ERRORS, SIMULATOR_REMEDIES, _capstone_hint)


CAPSTONE_FAKES = (FakeTensor("Float16", 2, 8), FakeTensor("Float16", 2, 8), FakeTensor("Float32", 1, 8),
                  FakeTensor("Float16", 2, 8))
# opcode prefix, at least, what it shows
CAPSTONE_PTX = (("cp.async.bulk.tensor.2d.shared", 1, "TMA loads of A and B (cp.async.bulk.tensor, global to "
                 "shared memory)"),
                ("mbarrier.try_wait", 1, "mbarrier waits"),
                ("mbarrier.arrive.expect_tx", 1, "an arrival that announces the stage's bytes (expect_tx)"),
                ("wgmma.mma_async", 1, "warpgroup MMAs (wgmma.mma_async)"))


def _capstone_ptx(context) -> Verdict:
    try:
        source = kernel_module_source(context.answer)
    except (OSError, TypeError) as error:
        return failed(f"the kernel's source cannot be read ({error}); define it in a notebook cell or a .py file")
    with tempfile.TemporaryDirectory(prefix="cutekit-ch08-") as folder:
        path = Path(folder) / "learner_capstone.py"
        path.write_text(source)
        report = compile_to_ptx(str(path), unwrap(context.answer).__name__, CAPSTONE_FAKES, arch="sm_90a")
    if not report.ok:
        first = report.error.strip().splitlines()[0][:500] if report.error.strip() else "no reason given"
        return failed(f"CuTeDSL could not compile your kernel for sm_90a: {first}")
    for opcode, least, what in CAPSTONE_PTX:
        if report.count(opcode) < least:
            return failed(f"the compiled kernel has no {opcode}: {what} belong in a Hopper kernel of this chapter")
    if report.count("mma.sync"):
        return failed(f"the compiled kernel has {report.count('mma.sync')} mma.sync (chapter 07's warp MMA): the "
                      f"multiply is the warpgroup's wgmma here")
    if report.local_memory:
        return failed(f"the compiled kernel uses local memory ({report.local_memory} ld/st.local): a register "
                      f"tensor indexed with a run-time value, or spilled registers")
    return passed()


CAPSTONE_GPU_CASE = {"M": 4096, "N": 4096, "K": 4096}
CAPSTONE_SPEED = 0.5          # at least half of torch's speed for torch.relu(torch.addmm(...)), fp16


def gpu_capstone(host, case) -> dict:
    """Harness (an sm_90 GPU, real CuTeDSL): the learner's kernel on a case x case fp16 GEMM with an fp32 bias,
    compared with torch.relu(torch.addmm(bias, A, B^T)) in fp32, then timed (median of 20 launches) next to
    torch.relu(torch.addmm(...)) in fp16, in this process."""
    return gpu_gemm_bias_relu(host, case, bias_scale=8)


def _capstone_gpu(context) -> Verdict:
    from .kernels import on_gpu
    reply = on_gpu(context.answer, f"{__name__}:gpu_capstone", [CAPSTONE_GPU_CASE])
    if not reply.ok:
        return failed(f"on the GPU: {reply.error[:600]}")
    value, error = reply.values[0]
    size = CAPSTONE_GPU_CASE["M"]
    where = f"a {size}^3 fp16 GEMM + bias + relu on the GPU"
    if error:
        return failed(f"{where}: {error[:500]}")
    if value["wrong"]:
        return failed(f"{where}: {value['wrong']} entries differ from torch.relu(torch.addmm(bias, A, B^T)), the "
                      f"first at {value['first']} (on a GPU an ordering mistake gives wrong values that change from "
                      f"run to run)")
    speed = value["torch_ms"] / value["ms"]
    flops = 2 * size ** 3
    text = (f"{where}: {value['ms']:.3f} ms ({flops / value['ms'] / 1e9:.0f} TFLOP/s), torch.relu(torch.addmm(...)) "
            f"{value['torch_ms']:.3f} ms: {speed:.2f} of torch's speed")
    if speed < CAPSTONE_SPEED:
        return failed(text + f", below the {CAPSTONE_SPEED} this criterion asks (look at the tile, the stages and "
                             f"what the epilogue does per element)")
    return Verdict(True, text)


CAPSTONE = Exercise(
    id="ch08.capstone",
    statement="Write gemm_bias_relu(mA, mB, bias, mD) and its kernel: D (M, N) fp16 = relu(A (M, K) @ B (N, K)^T "
              "+ bias (N,) fp32), one bias value per column, on sm_90: TMA loads by a producer warp through an "
              "mbarrier pipeline, wgmma in consumer warpgroups, the bias and the clamp applied to the accumulators "
              "in registers before the store; M, N and K ragged (N and K multiples of 8).",
    example="M=100, N=328, K=40: D[m, n] = max(sum_k A[m, k] B[n, k] + bias[n], 0)",
    rule=("The pipeline is exercises 4 and 5's: one producer warp fills a ring of stages through TMA, announcing each "
          "stage's bytes on its full barrier, and waits on the empty barrier before it refills a stage; the consumer "
          "warpgroups wait on full, multiply with wgmma, and release a stage only once the wgmmas that read it retired.\n"
          "A thread's accumulators hold the columns of D its slice of the TiledMMA gives it, many columns apart; the "
          "epilogue works on those values, each with the bias of its own column of D (a tile's columns start at the "
          "tile's first column), before they leave the registers.\n"
          "relu clamps the biased sum, so the bias goes in first; columns past N have no bias value, and rows or "
          "columns past D's edge must never be written (a TMA store clips them, a store from registers does not)."),
    cases=_capstone_cases,
    ask=_ask_capstone,
    runs=_capstone_runs,
    timeout=240.0,
    criteria=(
        Criterion("ragged M, N and K over two tiles of 128 x 256, one short k-tile: D = relu(A B^T + bias)",
                  "reference", 3,
                  _capstone_criterion(0)),
        Criterion("9 k-tiles, twice round a 4-stage ring: every wait, arrival and copy in order", "reference", 2,
                  _capstone_criterion(1)),
        Criterion("compiled by real CuTeDSL for sm_90a: TMA loads, mbarrier try_wait and expect_tx, wgmma; no "
                  "mma.sync, no local memory", "cutedsl-cpu", 1, _capstone_ptx),
        Criterion(f"on an sm_90 GPU: a 4096^3 GEMM + bias + relu equals torch, at least {CAPSTONE_SPEED} of the "
                  f"speed of torch.relu(torch.addmm(...))", "gpu", 1, _capstone_gpu, needs="sm_90"),
    ),
)


EXERCISES = [SMEM_LAYOUT, TMA_PLAN, STAGE_COUNT, MBARRIER_PHASES, WGMMA_MAIN_LOOP, CAPSTONE]
