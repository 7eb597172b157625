"""Chapter 09 exercises: the host side of a Blackwell (sm_100a) GEMM. The tcgen05 MMA a CTA tile needs and the
tensor-memory (TMEM) columns its accumulators take (`ch09.umma_plan`), and the staged shared-memory layouts of A
and B each CTA holds, for one CTA or a CTA pair (`ch09.operand_smem`).

The reference answers are rules written out in plain Python (umma_plan) or cutekit's Blackwell helpers
(operand_smem), both compared with CuTeDSL 4.8.1 traced for sm_100a (tests/cute/blackwell_conformance.py, and
this module's cutedsl-cpu criteria, which run the learner's own function under real CuTeDSL). Cases are drawn
from a seed until they tell every modelled mistake apart from the right answer, so a hint can name the mistake
it recognises. Nothing here runs a kernel: the simulator does not run tcgen05 instructions yet.
"""
from __future__ import annotations

from math import ceil, log2

from .common import case_text, each_outcome
from .cutedsl import answer_in_cutedsl
from .blackwell_kernels import KERNEL_EXERCISES
from .grading import Criterion, Exercise, Verdict, failed

ARCH = "sm_100a"
TMEM_COLUMNS = 512                  # 128 lanes x 512 columns of 32 bits per SM
WIDTH = {"Float16": 16, "BFloat16": 16, "TFloat32": 32, "Int8": 8}
ACCUMULATORS = {"Float16": ("Float32", "Float16"), "BFloat16": ("Float32",), "TFloat32": ("Float32",),
                "Int8": ("Int32",)}


def _dtype(name):
    from cutekit import cute
    return getattr(cute, name)


def _group(name):
    from cutekit.cute.nvgpu import tcgen05
    return getattr(tcgen05.CtaGroup, name)


def _matching(value, case, models: dict, facts: dict) -> str:
    hints = []
    for model, hint in models.values():
        try:
            if _safe(model, case) == value:
                hints.append(hint.format(**facts))
        except Exception:
            continue
    return "\n".join(hints)


def _safe(function, case):
    try:
        return function(case)
    except Exception as error:
        return ("refused", type(error).__name__)


def _draw_until_told_apart(rng, draw, reference, models, tries=400):
    for _ in range(tries):
        cases = draw(rng)
        if all(any(_safe(model, case) != _safe(reference, case) for case in cases) for model, _ in models.values()):
            return cases
    raise RuntimeError("no draw tells the modelled mistakes apart")


def _in_cutedsl(context, wrapper: str, calls, compare) -> Verdict:
    """cutedsl-cpu: the learner's function, moved by source into a CuTeDSL process traced for sm_100a (cutekit's
    `cute`, `tcgen05` and `blackwell_helpers` made CuTeDSL's), gives what it gave under cutekit, case by case."""
    return answer_in_cutedsl(context, wrapper, "_ch09_answer", calls, compare, arch=ARCH)


# ---- ch09.umma_plan -------------------------------------------------------------------------------------------

def _legal_m(case) -> bool:
    return case["bm"] in ((64, 128) if case["cta_group"] == "ONE" else (128, 256))


def _legal_n(case, step=None) -> bool:
    step = step or (8 if case["cta_group"] == "ONE" else 16)
    return step <= case["bn"] <= 256 and case["bn"] % step == 0


def _columns_per_accumulator(case) -> int:
    # a pair's 128-row MMA leaves 64 rows in each CTA, which TMEM holds as 128 lanes of bn / 2 columns
    return case["bn"] // 2 if case["cta_group"] == "TWO" and case["bm"] == 128 else case["bn"]


def _round(columns: int) -> int:
    return max(1 << ceil(log2(columns)), 32)


def _plan(case, *, legal_n=None, legal_m=None, k=None, per=None, total=None, rounding=_round, limit=True):
    legal_n = legal_n or _legal_n
    legal_m = legal_m or _legal_m
    if not legal_m(case) or not legal_n(case):
        raise ValueError("illegal instruction shape")
    k = k if k is not None else 256 // WIDTH[case["ab"]]
    per = per(case) if per else _columns_per_accumulator(case)
    columns = total(case, per) if total else rounding(per * case["acc_stages"])
    if limit and columns > TMEM_COLUMNS:
        raise ValueError("more TMEM columns than an SM has")
    return {"instruction": (case["bm"], case["bn"], k), "tmem_columns": columns}


def reference_umma_plan(case) -> dict:
    return _plan(case)


UMMA_MODELS = {
    "no rounding": (lambda c: _plan(c, rounding=lambda n: n),
                    "tcgen05.alloc takes a power of two of at least 32 columns: {used} columns in use round up to "
                    "{columns}"),
    "no minimum": (lambda c: _plan(c, rounding=lambda n: 1 << ceil(log2(n))),
                   "tcgen05.alloc takes at least 32 columns: {used} columns in use still allocate {columns}"),
    "f16 packed": (lambda c: _plan(c, per=lambda c: _columns_per_accumulator(c) // (2 if c["acc"] == "Float16" else 1)),
                   "a Float16 accumulator is not packed two to a column: each value of C takes one 32-bit TMEM "
                   "column, as a Float32 does"),
    "K 16": (lambda c: _plan(c, k=16),
             "the instruction's K is 32 bytes of A and B: with {ab} ({width}-bit) that is {k} elements, not 16"),
    "pair not halved": (lambda c: _plan(c, per=lambda c: c["bn"]),
                        "a CTA pair's 128-row MMA leaves 64 rows of C in each CTA, held as 128 TMEM lanes of "
                        "bn / 2 columns: the columns per accumulator are {per}, not {bn}"),
    "one stage": (lambda c: _plan(c, total=lambda c, per: _round(per)),
                  "the TMEM holds {acc_stages} accumulators (one per accumulator stage): count all of them before "
                  "rounding"),
    "rounded per stage": (lambda c: _plan(c, total=lambda c, per: _round(per) * c["acc_stages"]),
                          "the accumulators of all {acc_stages} stages are one allocation: add their columns, then "
                          "round the sum once"),
    "no limit": (lambda c: _plan(c, limit=False),
                 "an SM has 512 TMEM columns: a plan that needs more must be refused (raise)"),
    "pair with the one-CTA N rule": (lambda c: _plan(c, legal_n=lambda c: _legal_n(c, step=8)),
                                     "with CtaGroup.TWO each CTA holds half of B's N rows, so N must be a multiple "
                                     "of 16 (16 to 256); bn={bn} must be refused"),
    "M 256 on one CTA": (lambda c: _plan(c, legal_m=lambda c: c["bm"] in (64, 128, 256)),
                         "one CTA's tcgen05.mma has M 64 or 128; M=256 needs CtaGroup.TWO, so bm={bm} with "
                         "CtaGroup.ONE must be refused"),
}


def _umma_case(rng, kind):
    ab = rng.choice(list(WIDTH))
    acc = rng.choice(ACCUMULATORS[ab])
    group, bm, bn, stages = "ONE", 128, rng.choice([64, 128, 256]), 1
    if kind == "round":
        group, bm, bn, stages = rng.choice(["ONE", "TWO"]), rng.choice([128]), rng.choice([80, 96, 112, 144, 176, 208]), 1
    elif kind == "small":
        group, bm, bn, stages = "ONE", rng.choice([64, 128]), rng.choice([8, 16, 24]), 1
    elif kind == "pair128":
        group, bm, bn, stages = "TWO", 128, rng.choice([64, 128, 256]), rng.choice([1, 2])
    elif kind == "stages":
        group, bm, bn, stages = rng.choice(["ONE", "TWO"]), rng.choice([128]), rng.choice([64, 96]), 3
        if group == "TWO":
            bm = 256
    elif kind == "too many":
        group, bm, bn, stages = rng.choice(["ONE", "TWO"]), 128, rng.choice([192, 256]), rng.choice([3, 4])
        if group == "TWO":
            bm = 256
    elif kind == "pair N":
        group, bm, bn, stages = "TWO", rng.choice([128, 256]), rng.choice([8, 24, 40]), 1
    elif kind == "M 256":
        group, bm, bn, stages = "ONE", 256, rng.choice([64, 128]), 1
    elif kind == "f16":
        ab, acc = "Float16", "Float16"
        group, bm, bn, stages = rng.choice(["ONE", "TWO"]), 256, rng.choice([64, 128, 256]), rng.choice([1, 2])
        if group == "ONE":
            bm = 128
    elif kind == "K":
        ab = rng.choice(["TFloat32", "Int8"])
        acc = ACCUMULATORS[ab][0]
    return {"bm": bm, "bn": bn, "ab": ab, "acc": acc, "cta_group": group, "acc_stages": stages}


def _umma_draw(rng):
    kinds = ["round", "small", "pair128", "stages", "too many", "pair N", "M 256", "f16", "K", "plain"]
    cases = [_umma_case(rng, kind) for kind in kinds]
    rng.shuffle(cases)
    return cases


def _umma_cases(rng):
    return _draw_until_told_apart(rng, _umma_draw, reference_umma_plan, UMMA_MODELS)


def _ask_umma(answer, case):
    try:
        plan = answer(case["bm"], case["bn"], _dtype(case["ab"]), _dtype(case["acc"]), _group(case["cta_group"]),
                      case["acc_stages"])
    except Exception as error:
        return ("refused", type(error).__name__)
    if not isinstance(plan, dict) or set(plan) != {"instruction", "tmem_columns"}:
        raise TypeError(f"expected a dict with keys 'instruction' and 'tmem_columns', got {plan!r:.120}")
    return {"instruction": tuple(int(x) for x in plan["instruction"]), "tmem_columns": int(plan["tmem_columns"])}


def _umma_facts(case) -> dict:
    per = _columns_per_accumulator(case)
    used = per * case["acc_stages"]
    return {**case, "per": per, "used": used, "columns": _round(used), "width": WIDTH[case["ab"]],
            "k": 256 // WIDTH[case["ab"]]}


def _refused(value) -> bool:
    return isinstance(value, tuple) and value[:1] == ("refused",)


def _umma_hint(outcome, keys) -> Verdict | None:
    case, got = outcome.case, outcome.value
    want = _safe(reference_umma_plan, case)
    if _refused(want) or _refused(got):
        if _refused(want) and _refused(got):
            return None
        if "refusal" not in keys:
            return None
        facts = _umma_facts(case)
        named = _matching(got, case, UMMA_MODELS, facts)
        if _refused(got):
            return failed(f"{case_text(case)}: your function raised {got[1]}, but this tile is legal; expected "
                          f"{want}" + ("\n" + named if named else ""))
        return failed(f"{case_text(case)}: your function returned {got}, but no tcgen05 plan fits this tile: it must "
                      f"raise" + ("\n" + named if named else "\nCheck M and N against the rules of the CTA group, and "
                                  "the columns against the 512 an SM has"))
    if all(got[key] == want[key] for key in keys if key != "refusal"):
        return None
    facts = _umma_facts(case)
    named = _matching(got, case, UMMA_MODELS, facts)
    wrong = ", ".join(f"{key} = {got[key]} (expected {want[key]})" for key in keys
                      if key != "refusal" and got[key] != want[key])
    return failed(f"{case_text(case)}: {wrong}\n" + (named or "the instruction is (bm, bn, 32 bytes of K); the "
                                                      "columns are those of every accumulator stage, rounded as "
                                                      "tcgen05.alloc needs"))


UMMA_WRAPPER = '''
def _ch09_answer(bm, bn, ab, acc, group, stages):
    import cutlass
    from cutlass.cute.nvgpu import tcgen05
    plan = {name}(bm, bn, getattr(cutlass, ab), getattr(cutlass, acc), getattr(tcgen05.CtaGroup, group), stages)
    return str({"instruction": tuple(int(x) for x in plan["instruction"]), "tmem_columns": int(plan["tmem_columns"])})
'''


def _umma_compare(outcome, value, error):
    if _refused(outcome.value):
        return None if error else failed(f"{case_text(outcome.case)}: cutekit refused this tile with your function "
                                         f"({outcome.value[1]}); real CuTeDSL gave {value}")
    if error:
        return failed(f"{case_text(outcome.case)}: under real CuTeDSL your function raised {error}")
    if value != str(outcome.value):
        return failed(f"{case_text(outcome.case)}: real CuTeDSL gives {value} from your function; cutekit gave "
                      f"{outcome.value}")
    return None


def _umma_in_cutedsl(context) -> Verdict:
    calls = lambda c: (c["bm"], c["bn"], c["ab"], c["acc"], c["cta_group"], c["acc_stages"])
    return _in_cutedsl(context, UMMA_WRAPPER, calls, _umma_compare)


UMMA_PLAN = Exercise(
    id="ch09.umma_plan",
    statement="Write umma_plan(bm, bn, ab_dtype, acc_dtype, cta_group, acc_stages): the (M, N, K) of the one "
              "tcgen05.mma that computes a bm x bn tile (bm is the pair's rows with CtaGroup.TWO), and the TMEM "
              "columns each CTA allocates for acc_stages accumulators; raise where no tcgen05 MMA or allocation fits.",
    example="umma_plan(128, 96, Float16, Float32, CtaGroup.ONE, 2) is {'instruction': (128, 96, 16), "
            "'tmem_columns': 256}",
    rule=("One tcgen05.mma computes the whole tile: M is 64 or 128 on one CTA, 128 or 256 on a CTA pair; N is a "
          "multiple of 8 (one CTA) or 16 (a pair) up to 256; K is 32 bytes of A and B.\n"
          "Each row of C a CTA holds sits in one TMEM lane and each value in one 32-bit column, whatever the "
          "accumulator type; a pair's 128-row MMA leaves 64 rows per CTA, which TMEM holds in two halves of N.\n"
          "tcgen05.alloc takes one power of two of columns, at least 32 and at most the SM's 512, for everything the "
          "CTA keeps in TMEM."),
    cases=_umma_cases,
    ask=_ask_umma,
    criteria=(
        Criterion("the instruction shape, and the tiles no tcgen05 MMA computes refused", "reference", 1,
                  each_outcome(lambda outcome: _umma_hint(outcome, ("instruction", "refusal")))),
        Criterion("the TMEM columns to allocate", "reference", 2,
                  each_outcome(lambda outcome: _umma_hint(outcome, ("tmem_columns",)))),
        Criterion("real CuTeDSL (sm_100a), running your function, gives the same plans", "cutedsl-cpu", 1,
                  _umma_in_cutedsl),
    ),
)


# ---- ch09.operand_smem ----------------------------------------------------------------------------------------

def _smem_pair(case, *, group=None, tiler=None, major=None, stages=None, b_helper="b"):
    from cutekit.cute.nvgpu import OperandMajorMode
    from cutekit.cute.utils import blackwell_helpers as sm100
    dtype = _dtype(case["dtype"])
    mode = getattr(OperandMajorMode, major or case["major"])
    acc = _dtype("Int32" if case["dtype"] == "Int8" else "Float32")
    shape = tiler(case) if tiler else (case["bm"], case["bn"], case["bk"])
    count = stages if stages is not None else case["stages"]
    make_b = sm100.make_smem_layout_b if b_helper == "b" else sm100.make_smem_layout_a
    mma_for_tiler = sm100.make_trivial_tiled_mma(dtype, dtype, mode, mode, acc, _group(group or case["cta_group"]),
                                                 shape[:2])
    return (str(sm100.make_smem_layout_a(mma_for_tiler, shape, dtype, count)),
            str(make_b(mma_for_tiler, shape, dtype, count)))


def reference_operand_smem(case) -> tuple:
    return _smem_pair(case)


def _pair(case) -> int:
    return 2 if case["cta_group"] == "TWO" else 1


SMEM_MODELS = {
    "per-CTA tile": (lambda c: _smem_pair(c, tiler=lambda c: (c["bm"] // _pair(c), c["bn"], c["bk"])),
                     "the MMA tiler is the whole MMA's tile, (bm, bn, bk): the helper itself gives each CTA of the "
                     "pair its share of A's rows; you passed the per-CTA rows and they were halved twice"),
    "B halved by hand": (lambda c: _smem_pair(c, tiler=lambda c: (c["bm"], c["bn"] // _pair(c), c["bk"])),
                         "B's rows are split over the CTA pair by the helper; you halved bn in the tiler as well"),
    "one CTA": (lambda c: _smem_pair(c, group="ONE"),
                "the tiled MMA was made for CtaGroup.ONE; with cta_group={cta_group} each CTA holds {rows_a} of A's "
                "rows and {rows_b} of B's"),
    "major swapped": (lambda c: _smem_pair(c, major="MN" if c["major"] == "K" else "K"),
                      "your layouts are for the other major mode: a {major}-major operand needs the tiled MMA made "
                      "with OperandMajorMode.{major} for A and B"),
    "B with A's helper": (lambda c: _smem_pair(c, b_helper="a"),
                          "B's layout was made by make_smem_layout_a: it has A's {rows_a} rows instead of B's "
                          "{rows_b}"),
    "one stage": (lambda c: _smem_pair(c, stages=1),
                  "the layouts hold 1 stage; the pipeline keeps {stages}"),
    "instruction K": (lambda c: _smem_pair(c, tiler=lambda c: (c["bm"], c["bn"], 256 // WIDTH[c["dtype"]])),
                      "the tiler's K is one instruction's K ({k}); a stage holds the k-tile, bk={bk}"),
}


def _smem_draw(rng):
    cases = []
    for group, bm in (("TWO", 256), ("TWO", 128), ("ONE", 128), (rng.choice(["ONE", "TWO"]), 128)):
        dtype = rng.choice(["Float16", "BFloat16", "Int8"])
        bk = rng.choice([64, 128]) * 16 // WIDTH[dtype]
        cases.append({"bm": bm, "bn": rng.choice([64, 128, 256]), "bk": bk, "dtype": dtype,
                      "major": rng.choice(["K", "MN"]), "cta_group": group, "stages": rng.choice([2, 3, 4])})
    cases[-1]["major"] = "MN" if cases[0]["major"] == "K" else "K"
    rng.shuffle(cases)
    return cases


def _smem_cases(rng):
    return _draw_until_told_apart(rng, _smem_draw, reference_operand_smem, SMEM_MODELS)


def _ask_smem(answer, case):
    from cutekit import cute
    try:
        pair = answer(case["bm"], case["bn"], case["bk"], _dtype(case["dtype"]), case["major"],
                      _group(case["cta_group"]), case["stages"])
    except Exception as error:          # every case is a legal tile: the hint says which rule the call broke
        return ("refused", type(error).__name__, str(error).splitlines()[0][:300])
    if not isinstance(pair, tuple) or len(pair) != 2 or \
            not all(isinstance(layout, (cute.ComposedLayout, cute.Layout)) for layout in pair):
        raise TypeError(f"expected a pair of layouts (sA, sB), got {pair!r:.120}")
    return tuple(str(layout) for layout in pair)


def _smem_facts(case) -> dict:
    pair = _pair(case)
    return {**case, "rows_a": case["bm"] // pair, "rows_b": case["bn"] // pair, "k": 256 // WIDTH[case["dtype"]]}


def _smem_hint(outcome, which) -> Verdict | None:
    case, got = outcome.case, outcome.value
    want = reference_operand_smem(case)
    if _refused(got):
        named = _matching(got[:2], case, SMEM_MODELS, _smem_facts(case))
        return failed(f"{case_text(case)}: your function raised {got[1]}: {got[2]}\n" +
                      (named or "every tile of this exercise is one a tcgen05 MMA computes: build the tiled MMA "
                                "from the whole tile and the CTA group you are given"))
    if got[which] == want[which]:
        return None
    named = _matching(got, case, SMEM_MODELS, _smem_facts(case))
    name = "sA" if which == 0 else "sB"
    return failed(f"{case_text(case)}: {name} is\n{got[which]}\nexpected\n{want[which]}\n" +
                  (named or "make the tiled MMA for the operands' major mode and CTA group, then the staged layout "
                            "of each operand from the MMA's tile and the k-tile"))


SMEM_WRAPPER = '''
def _ch09_answer(bm, bn, bk, dtype, major, group, stages):
    import cutlass
    from cutlass.cute.nvgpu import tcgen05
    pair = {name}(bm, bn, bk, getattr(cutlass, dtype), major, getattr(tcgen05.CtaGroup, group), stages)
    return str(tuple(str(layout) for layout in pair))
'''


def _smem_compare(outcome, value, error):
    if error:
        return failed(f"{case_text(outcome.case)}: under real CuTeDSL your function raised {error}")
    if value != str(outcome.value):
        return failed(f"{case_text(outcome.case)}: real CuTeDSL builds\n{value}\nfrom your function; cutekit built\n"
                      f"{outcome.value}")
    return None


def _smem_in_cutedsl(context) -> Verdict:
    calls = lambda c: (c["bm"], c["bn"], c["bk"], c["dtype"], c["major"], c["cta_group"], c["stages"])
    return _in_cutedsl(context, SMEM_WRAPPER, calls, _smem_compare)


OPERAND_SMEM = Exercise(
    id="ch09.operand_smem",
    statement="Write operand_smem(bm, bn, bk, dtype, major, cta_group, stages): the staged shared-memory layouts "
              "(sA, sB) one CTA holds for a bm x bn x bk MMA tile of dtype, A and B both K-major ('K') or both "
              "MN-major ('MN'), on one CTA or a CTA pair.",
    example="operand_smem(256, 128, 64, Float16, 'K', CtaGroup.TWO, 3)[1] is "
            "S<3,4,3> o 0 o ((64,16),1,4,3):((64,1),0,16,4096)",
    rule=("The staged layouts come from the tiled MMA (its operand types, major modes and CTA group) and the MMA's "
          "whole tile (bm, bn, bk): on a CTA pair the helpers give each CTA its half of A's rows and of B's rows.\n"
          "A stage holds one k-tile (bk), not one instruction's K; the stage mode comes last."),
    cases=_smem_cases,
    ask=_ask_smem,
    criteria=(
        Criterion("sA: A's rows per CTA, major mode and stages", "reference", 1,
                  each_outcome(lambda outcome: _smem_hint(outcome, 0))),
        Criterion("sB: B's rows per CTA, major mode and stages", "reference", 1,
                  each_outcome(lambda outcome: _smem_hint(outcome, 1))),
        Criterion("real CuTeDSL (sm_100a), running your function, builds the same layouts", "cutedsl-cpu", 1,
                  _smem_in_cutedsl),
    ),
)


EXERCISES = [UMMA_PLAN, OPERAND_SMEM, *KERNEL_EXERCISES]
