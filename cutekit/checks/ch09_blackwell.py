"""Chapter 09 exercises: the host side of a Blackwell (sm_100a) GEMM, asked the other way round from the
chapter's worked cells. How many accumulator stages a CTA can keep in tensor memory (TMEM) beside other columns
it holds there, and the tcgen05 MMA that computes each (`ch09.accumulator_stages`); the shared-memory bytes of one
A and B stage in each CTA, and how many stages fit the 227 KiB a CTA may use beside reserved bytes
(`ch09.ab_stages`), for one CTA or a CTA pair.

The reference answers are the rules written out in plain Python, compared with cutekit's Blackwell helpers
(tests/checks/test_ch09_mutants.py) and with CuTeDSL 4.8.1 traced for sm_100a (this module's cutedsl-cpu
criteria run the learner's own function under real CuTeDSL). Cases are drawn from a seed until they tell every
modelled mistake apart from the right answer, so a hint can name the mistake it recognises. Nothing here runs a
kernel: the simulator does not run tcgen05 instructions yet.
"""
from __future__ import annotations

from math import ceil, log2

from .blackwell_kernels import KERNEL_EXERCISES
from .common import case_text, each_outcome
from .cutedsl import answer_in_cutedsl
from .grading import Criterion, Exercise, Verdict, failed

ARCH = "sm_100a"
TMEM_COLUMNS = 512                  # 128 lanes x 512 columns of 32 bits per SM
SMEM_BYTES = 227 * 1024             # shared memory one CTA may use on sm_100 (CuTeDSL: get_smem_capacity_in_bytes)
WIDTH = {"Float16": 16, "BFloat16": 16, "TFloat32": 32, "Int8": 8}
ACCUMULATORS = {"Float16": ("Float32", "Float16"), "BFloat16": ("Float32",), "TFloat32": ("Float32",),
                "Int8": ("Int32",)}


def _dtype(name):
    from cutekit import cute
    return getattr(cute, name)


def _group(name):
    from cutekit.cute.nvgpu import tcgen05
    return getattr(tcgen05.CtaGroup, name)


def _refused(value) -> bool:
    return isinstance(value, tuple) and value[:1] == ("refused",)


def _same(a, b) -> bool:
    """Two outcomes agree: equal values, or both a refusal (whatever error each raised)."""
    return (_refused(a) and _refused(b)) or a == b


def _matching(value, case, models: dict, facts: dict) -> str:
    """The hints of every modelled mistake that gives `value` on `case`."""
    return "\n".join(hint.format(**facts) for model, hint in models.values() if _same(_safe(model, case), value))


def _safe(function, case):
    try:
        return function(case)
    except Exception as error:
        return ("refused", type(error).__name__)


def _draw_until_told_apart(rng, draw, reference, models, tries=400):
    for _ in range(tries):
        cases = draw(rng)
        if all(any(not _same(_safe(model, case), _safe(reference, case)) for case in cases)
               for model, _ in models.values()):
            return cases
    raise RuntimeError("no draw tells the modelled mistakes apart")


def _in_cutedsl(context, wrapper: str, calls, compare) -> Verdict:
    """cutedsl-cpu: the learner's function, moved by source into a CuTeDSL process traced for sm_100a (cutekit's
    `cute`, `tcgen05` and `blackwell_helpers` made CuTeDSL's), gives what it gave under cutekit, case by case."""
    return answer_in_cutedsl(context, wrapper, "_ch09_answer", calls, compare, arch=ARCH)


def _judged(outcome, want, keys, models, facts, otherwise: str, refusal: bool) -> Verdict | None:
    """One case of a criterion that looks at `keys` of the answer's dict (and at refusals when `refusal`)."""
    case, got = outcome.case, outcome.value
    if _refused(want) or _refused(got):
        if (_refused(want) and _refused(got)) or not refusal:
            return None
        named = _matching(got, case, models, facts)
        if _refused(got):
            return failed(f"{case_text(case)}: your function raised {got[1]}, but this case has an answer: "
                          f"{want}" + ("\n" + named if named else ""))
        return failed(f"{case_text(case)}: your function returned {got}, but nothing fits here: it must raise" +
                      ("\n" + named if named else "\n" + otherwise))
    wrong = [key for key in keys if got[key] != want[key]]
    if not wrong:
        return None
    named = _matching(got, case, models, facts)
    return failed(f"{case_text(case)}: " + ", ".join(f"{key} = {got[key]} (expected {want[key]})" for key in wrong) +
                  "\n" + (named or otherwise))


def _compare_in_cutedsl(outcome, value, error):
    if _refused(outcome.value):
        return None if error else failed(f"{case_text(outcome.case)}: under cutekit your function raised "
                                         f"({outcome.value[1]}); under real CuTeDSL it gave {value}")
    if error:
        return failed(f"{case_text(outcome.case)}: under real CuTeDSL your function raised {error}")
    if value != str(outcome.value):
        return failed(f"{case_text(outcome.case)}: real CuTeDSL gives {value} from your function; cutekit gave "
                      f"{outcome.value}")
    return None


# ---- ch09.accumulator_stages -----------------------------------------------------------------------------------

def _legal_m(case) -> bool:
    return case["bm"] in ((64, 128) if case["cta_group"] == "ONE" else (128, 256))


def _legal_n(case, step=None) -> bool:
    step = step or (8 if case["cta_group"] == "ONE" else 16)
    return step <= case["bn"] <= 256 and case["bn"] % step == 0


def _columns_per_accumulator(case) -> int:
    # a pair's 128-row MMA leaves 64 rows in each CTA, which TMEM holds as 128 lanes of bn / 2 columns
    return case["bn"] // 2 if case["cta_group"] == "TWO" and case["bm"] == 128 else case["bn"]


def _round(columns: int) -> int:
    """What tcgen05.alloc takes for `columns`: a power of two, at least 32."""
    return max(1 << ceil(log2(max(columns, 1))), 32)


def _stages(case, *, legal_m=_legal_m, legal_n=_legal_n, k=None, per=_columns_per_accumulator,
            stage=lambda columns: columns, other=lambda columns: columns, budget=TMEM_COLUMNS, refuse=True):
    """The rules of accumulator_stages; a mistake bends one of them through a keyword."""
    if not legal_m(case) or not legal_n(case):
        raise ValueError("no tcgen05.mma computes this tile")
    k = k if k is not None else 256 // WIDTH[case["ab"]]
    stages = (budget - other(case["other"])) // stage(per(case))
    if refuse and stages < 1:
        raise ValueError("not one accumulator fits")
    return {"instruction": (case["bm"], case["bn"], k), "stages": stages}


def reference_accumulator_stages(case) -> dict:
    return _stages(case)


STAGE_MODELS = {
    "other ignored": (lambda c: _stages(c, other=lambda n: 0),
                      "the {other} other columns are in the same 512 as the accumulators: the stages get only the "
                      "columns they leave"),
    "each stage rounded": (lambda c: _stages(c, stage=_round),
                           "only the whole allocation is rounded to a power of two: inside it an accumulator of "
                           "{per} columns takes {per}, not {per_rounded}"),
    "other rounded": (lambda c: _stages(c, other=lambda n: _round(n) if n else 0),
                      "the other columns are part of the one allocation: they take their {other} columns, not a "
                      "power of two of their own"),
    "f16 packed": (lambda c: _stages(c, per=lambda c: _columns_per_accumulator(c) // (2 if c["acc"] == "Float16"
                                                                                     else 1)),
                   "a Float16 accumulator is not packed two to a column: each value of C takes one 32-bit TMEM "
                   "column, as a Float32 does"),
    "pair 128 not halved": (lambda c: _stages(c, per=lambda c: c["bn"]),
                            "a CTA pair's 128-row MMA leaves 64 rows of C in each CTA, held as 128 TMEM lanes of "
                            "bn / 2 columns: an accumulator spans {per} columns, not {bn}"),
    "pair 256 halved": (lambda c: _stages(c, per=lambda c: c["bn"] // (2 if c["cta_group"] == "TWO" else 1)),
                        "a CTA pair's 256-row MMA leaves 128 rows of C in each CTA, one per TMEM lane, so each "
                        "accumulator spans all bn={bn} columns; only the pair's 128-row MMA splits N in two"),
    "M 64 halved": (lambda c: _stages(c, per=lambda c: _columns_per_accumulator(c) // (2 if c["bm"] == 64 else 1)),
                    "an M=64 accumulator uses 64 of the 128 lanes (four groups of 16) and still one column per value "
                    "of N: {per} columns, not half of them"),
    "K 16": (lambda c: _stages(c, k=16),
             "the instruction's K is 32 bytes of A and B: with {ab} ({width}-bit) that is {k} elements, not 16"),
    "pair with the one-CTA N rule": (lambda c: _stages(c, legal_n=lambda c: _legal_n(c, step=8)),
                                     "with CtaGroup.TWO each CTA holds half of B's N rows, so N must be a multiple "
                                     "of 16 (16 to 256); bn={bn} must be refused"),
    "M 256 on one CTA": (lambda c: _stages(c, legal_m=lambda c: c["bm"] in ((64, 128, 256) if c["cta_group"] == "ONE"
                                                                            else (128, 256))),
                         "one CTA's tcgen05.mma has M 64 or 128; M=256 needs CtaGroup.TWO, so bm={bm} with "
                         "CtaGroup.ONE must be refused"),
    "M 64 on a pair": (lambda c: _stages(c, legal_m=lambda c: c["bm"] in ((64, 128) if c["cta_group"] == "ONE"
                                                                          else (64, 128, 256))),
                       "a CTA pair's tcgen05.mma has M 128 or 256 (the pair's rows); bm={bm} with CtaGroup.TWO must "
                       "be refused"),
    "none fits, not refused": (lambda c: _stages(c, refuse=False),
                               "not even one accumulator of {per} columns fits beside the {other} other columns: "
                               "raise"),
}


def _stage_case(rng, kind):
    ab = rng.choice(list(WIDTH))
    acc = rng.choice(ACCUMULATORS[ab])
    group, bm = "ONE", 128
    bn = rng.choice([64, 96, 128, 160, 192, 256])
    other = rng.choice([0, 16, 32, 48, 64, 80, 96, 128])
    if kind == "round":
        bn, other = rng.choice([48, 80, 96, 112, 144, 160, 176]), rng.choice([0, 32, 64])
    elif kind == "other":
        other = rng.choice([40, 48, 80, 96, 100, 136, 160, 200])
        bn = rng.choice([32, 40, 64, 72, 96])
    elif kind == "pair128":
        group, bm, bn = "TWO", 128, rng.choice([64, 96, 128, 160, 192, 256])
    elif kind == "pair256":
        group, bm, bn = "TWO", 256, rng.choice([64, 96, 128, 160, 192, 256])
    elif kind == "m64":
        bm, bn = 64, rng.choice([40, 64, 96, 128, 136, 200])
    elif kind == "f16":
        ab, acc = "Float16", "Float16"
        group = rng.choice(["ONE", "TWO"])
        bm = 128 if group == "ONE" else 256
    elif kind == "K":
        ab = rng.choice(["TFloat32", "Int8"])
        acc = ACCUMULATORS[ab][0]
    elif kind == "pair N":
        group, bm, bn = "TWO", rng.choice([128, 256]), rng.choice([8, 24, 40, 72])
    elif kind == "M 256":
        bm, bn = 256, rng.choice([64, 128])
    elif kind == "M 64 pair":
        group, bm, bn = "TWO", 64, rng.choice([64, 128])
    elif kind == "none":
        bn = rng.choice([128, 192, 256])
        other = TMEM_COLUMNS - bn + rng.choice([16, 32, 64])
    return {"bm": bm, "bn": bn, "ab": ab, "acc": acc, "cta_group": group, "other": other}


def _stage_draw(rng):
    kinds = ["round", "other", "pair128", "pair256", "m64", "f16", "K", "pair N", "M 256", "M 64 pair", "none",
             "plain"]
    cases = [_stage_case(rng, kind) for kind in kinds]
    rng.shuffle(cases)
    return cases


def _stage_cases(rng):
    return _draw_until_told_apart(rng, _stage_draw, reference_accumulator_stages, STAGE_MODELS)


def _ask_stages(answer, case):
    try:
        plan = answer(case["bm"], case["bn"], _dtype(case["ab"]), _dtype(case["acc"]), _group(case["cta_group"]),
                      case["other"])
    except Exception as error:
        return ("refused", type(error).__name__)
    if not isinstance(plan, dict) or set(plan) != {"instruction", "stages"}:
        raise TypeError(f"expected a dict with keys 'instruction' and 'stages', got {plan!r:.120}")
    return {"instruction": tuple(int(x) for x in plan["instruction"]), "stages": int(plan["stages"])}


def _stage_facts(case) -> dict:
    per = _columns_per_accumulator(case)
    return {**case, "per": per, "per_rounded": _round(per), "width": WIDTH[case["ab"]], "k": 256 // WIDTH[case["ab"]]}


def _stage_hint(outcome, keys, refusal) -> Verdict | None:
    case = outcome.case
    return _judged(outcome, _safe(reference_accumulator_stages, case), keys, STAGE_MODELS, _stage_facts(case),
                   "the instruction is (bm, bn, 32 bytes of K); the stages share TMEM's 512 columns with the other "
                   "columns, each accumulator taking the columns it spans", refusal)


STAGES_WRAPPER = """
def _ch09_answer(bm, bn, ab, acc, group, other):
    import cutlass
    from cutlass.cute.nvgpu import tcgen05
    plan = {name}(bm, bn, getattr(cutlass, ab), getattr(cutlass, acc), getattr(tcgen05.CtaGroup, group), other)
    return str({"instruction": tuple(int(x) for x in plan["instruction"]), "stages": int(plan["stages"])})
"""


def _stages_in_cutedsl(context) -> Verdict:
    calls = lambda c: (c["bm"], c["bn"], c["ab"], c["acc"], c["cta_group"], c["other"])
    return _in_cutedsl(context, STAGES_WRAPPER, calls, _compare_in_cutedsl)


ACCUMULATOR_STAGES = Exercise(
    id="ch09.accumulator_stages",
    statement="Write accumulator_stages(bm, bn, ab_dtype, acc_dtype, cta_group, other_columns): the (M, N, K) of "
              "the one tcgen05.mma that computes a bm x bn tile (bm is the pair's rows with CtaGroup.TWO), and the "
              "most accumulators of that tile each CTA can keep in TMEM at once, in one allocation with "
              "other_columns columns it holds there for something else; raise where no tcgen05 MMA computes the "
              "tile or not one accumulator fits.",
    example="accumulator_stages(128, 96, Float16, Float32, CtaGroup.ONE, 64) is {'instruction': (128, 96, 16), "
            "'stages': 4}",
    rule=("One tcgen05.mma computes the whole tile: M is 64 or 128 on one CTA, 128 or 256 on a CTA pair; N is a "
          "multiple of 8 (one CTA) or 16 (a pair) up to 256; K is 32 bytes of A and B.\n"
          "Each row of C a CTA holds sits in one TMEM lane and each value in one 32-bit column, whatever the "
          "accumulator type; a pair's 128-row MMA leaves 64 rows per CTA, which TMEM holds in two halves of N.\n"
          "tcgen05.alloc takes one power of two of columns, at most the SM's 512, for everything the CTA keeps in "
          "TMEM: what is inside the allocation is not rounded, piece by piece."),
    cases=_stage_cases,
    ask=_ask_stages,
    criteria=(
        Criterion("the instruction shape, and the cases where nothing fits refused", "reference", 1,
                  each_outcome(lambda outcome: _stage_hint(outcome, ("instruction",), True))),
        Criterion("the accumulator stages that fit", "reference", 2,
                  each_outcome(lambda outcome: _stage_hint(outcome, ("stages",), False))),
        Criterion("real CuTeDSL (sm_100a), running your function, gives the same answers", "cutedsl-cpu", 1,
                  _stages_in_cutedsl),
    ),
)


# ---- ch09.ab_stages ---------------------------------------------------------------------------------------------

def _pair(case) -> int:
    return 2 if case["cta_group"] == "TWO" else 1


def _ab(case, *, rows_a=None, rows_b=None, element=None, k=None, budget=SMEM_BYTES, reserved=None,
        per_stage_extra=0, refuse=True):
    """The rules of ab_stages; a mistake bends one of them through a keyword."""
    element = element(case) if element else WIDTH[case["dtype"]] // 8
    k = k(case) if k else case["bk"]
    a = (rows_a(case) if rows_a else case["bm"] // _pair(case)) * k * element
    b = (rows_b(case) if rows_b else case["bn"] // _pair(case)) * k * element
    held = reserved(case) if reserved else case["reserved"]
    stages = (budget - held) // (a + b + per_stage_extra(case) if per_stage_extra else a + b)
    if refuse and stages < 1:
        raise ValueError("not one stage fits")
    return {"A": a, "B": b, "stages": stages}


def reference_ab_stages(case) -> dict:
    return _ab(case)


AB_MODELS = {
    "pair A not halved": (lambda c: _ab(c, rows_a=lambda c: c["bm"]),
                          "on a CTA pair each CTA holds half of A's bm={bm} rows: {rows_a} rows per stage"),
    "pair B not halved": (lambda c: _ab(c, rows_b=lambda c: c["bn"]),
                          "on a CTA pair each CTA holds half of B's bn={bn} rows as well: {rows_b} rows per stage"),
    "one CTA halved": (lambda c: _ab(c, rows_a=lambda c: c["bm"] // 2, rows_b=lambda c: c["bn"] // 2),
                       "with CtaGroup.ONE the CTA holds all of A's bm={bm} rows and all of B's bn={bn}: only a "
                       "CTA pair halves them"),
    "two bytes": (lambda c: _ab(c, element=lambda c: 2),
                  "a {dtype} element is {bytes} bytes, not 2"),
    "bits": (lambda c: _ab(c, element=lambda c: WIDTH[c["dtype"]]),
             "a {dtype} element is {width} bits, which is {bytes} bytes: the sizes are in bytes"),
    "228 KiB": (lambda c: _ab(c, budget=228 * 1024),
                "228 KiB is the SM's shared memory; one CTA may use 227 KiB (232448 bytes)"),
    "reserved ignored": (lambda c: _ab(c, reserved=lambda c: 0),
                         "the {reserved} reserved bytes share the CTA's 227 KiB with the stages"),
    "reserved per stage": (lambda c: _ab(c, reserved=lambda c: 0, per_stage_extra=lambda c: c["reserved"]),
                           "the reserved bytes are held once, not once per stage"),
    "accumulator in shared memory": (lambda c: _ab(c, reserved=lambda c: c["reserved"] +
                                                   c["bm"] // _pair(c) * c["bn"] * 4),
                                     "the accumulator lives in tensor memory (TMEM), not in shared memory: it takes "
                                     "none of the 227 KiB"),
    "instruction K": (lambda c: _ab(c, k=lambda c: 256 // WIDTH[c["dtype"]]),
                      "a stage holds the whole k-tile (bk={bk}), not one instruction's K ({k})"),
    "none fits, not refused": (lambda c: _ab(c, refuse=False),
                               "not one stage of {stage} bytes fits beside the {reserved} reserved bytes: raise"),
}


def _ab_case(rng, kind):
    dtype = rng.choice(list(WIDTH))
    group = rng.choice(["ONE", "TWO"])
    bm = rng.choice([64, 128]) if group == "ONE" else rng.choice([128, 256])
    bn = rng.choice([64, 96, 128, 192, 256])
    bk = rng.choice([64, 128, 256]) * 8 // WIDTH[dtype]          # 64, 128 or 256 bytes of K
    reserved = rng.choice([1024, 8192, 16384, 33792, 50176])
    if kind == "pair":
        group, bm = "TWO", rng.choice([128, 256])
    elif kind == "one":
        group, bm = "ONE", rng.choice([64, 128])
    elif kind == "width":
        dtype = rng.choice(["TFloat32", "Int8"])
        bk = rng.choice([64, 128, 256]) * 8 // WIDTH[dtype]
    elif kind == "none":
        stage = (bm + bn) // (2 if group == "TWO" else 1) * bk * WIDTH[dtype] // 8
        reserved = SMEM_BYTES - stage + rng.choice([8, 1024, 4096])
    case = {"bm": bm, "bn": bn, "bk": bk, "dtype": dtype, "cta_group": group, "reserved": reserved}
    if kind == "edge":      # the budget ends just short of a whole stage: 1 KiB more would hold one more
        stage = (bm + bn) // _pair(case) * bk * WIDTH[dtype] // 8
        case["reserved"] = SMEM_BYTES % stage + stage * rng.choice([0, 1, 2]) + 512 if stage > 1024 else 1024
    return case


def _ab_draw(rng):
    cases = [_ab_case(rng, kind) for kind in ("pair", "pair", "one", "width", "edge", "none", "plain")]
    rng.shuffle(cases)
    return cases


def _ab_cases(rng):
    return _draw_until_told_apart(rng, _ab_draw, reference_ab_stages, AB_MODELS)


def _ask_ab(answer, case):
    try:
        plan = answer(case["bm"], case["bn"], case["bk"], _dtype(case["dtype"]), _group(case["cta_group"]),
                      case["reserved"])
    except Exception as error:
        return ("refused", type(error).__name__)
    if not isinstance(plan, dict) or set(plan) != {"A", "B", "stages"}:
        raise TypeError(f"expected a dict with keys 'A', 'B' and 'stages', got {plan!r:.120}")
    return {key: int(plan[key]) for key in ("A", "B", "stages")}


def _ab_facts(case) -> dict:
    pair, element = _pair(case), WIDTH[case["dtype"]] // 8
    rows_a, rows_b = case["bm"] // pair, case["bn"] // pair
    return {**case, "rows_a": rows_a, "rows_b": rows_b, "bytes": element, "width": WIDTH[case["dtype"]],
            "k": 256 // WIDTH[case["dtype"]], "stage": (rows_a + rows_b) * case["bk"] * element}


def _ab_hint(outcome, keys, refusal) -> Verdict | None:
    case = outcome.case
    return _judged(outcome, _safe(reference_ab_stages, case), keys, AB_MODELS, _ab_facts(case),
                   "a stage is one k-tile of the A rows and the B rows this CTA holds, in bytes; the stages share "
                   "the CTA's shared memory with the reserved bytes", refusal)


AB_WRAPPER = """
def _ch09_answer(bm, bn, bk, dtype, group, reserved):
    import cutlass
    from cutlass.cute.nvgpu import tcgen05
    plan = {name}(bm, bn, bk, getattr(cutlass, dtype), getattr(tcgen05.CtaGroup, group), reserved)
    return str({key: int(plan[key]) for key in ("A", "B", "stages")})
"""


def _ab_in_cutedsl(context) -> Verdict:
    calls = lambda c: (c["bm"], c["bn"], c["bk"], c["dtype"], c["cta_group"], c["reserved"])
    return _in_cutedsl(context, AB_WRAPPER, calls, _compare_in_cutedsl)


AB_STAGES = Exercise(
    id="ch09.ab_stages",
    statement="Write ab_stages(bm, bn, bk, dtype, cta_group, reserved_bytes): the bytes of one stage of A ('A') "
              "and of B ('B') that each CTA holds in shared memory for a bm x bn MMA tile and a bk-deep k-tile of "
              "dtype, K-major, on one CTA or a CTA pair, and the most such stages that fit in the 227 KiB one CTA "
              "may use beside reserved_bytes held for other things ('stages'); raise where not one stage fits.",
    example="ab_stages(256, 96, 64, Float16, CtaGroup.TWO, 16384) is {'A': 16384, 'B': 6144, 'stages': 9}",
    rule=("Each CTA of a pair holds half of A's rows and half of B's rows of the MMA tile; one CTA holds them all.\n"
          "A stage holds the whole k-tile of each operand; the accumulator is in TMEM, not in shared memory.\n"
          "One CTA may use 227 KiB of shared memory on sm_100; the reserved bytes are held once, beside all the "
          "stages."),
    cases=_ab_cases,
    ask=_ask_ab,
    criteria=(
        Criterion("the bytes of one stage of A and of B in each CTA", "reference", 1,
                  each_outcome(lambda outcome: _ab_hint(outcome, ("A", "B"), False))),
        Criterion("the stages that fit, and a budget that fits none refused", "reference", 1,
                  each_outcome(lambda outcome: _ab_hint(outcome, ("stages",), True))),
        Criterion("real CuTeDSL (sm_100a), running your function, gives the same answers", "cutedsl-cpu", 1,
                  _ab_in_cutedsl),
    ),
)


EXERCISES = [ACCUMULATOR_STAGES, AB_STAGES, *KERNEL_EXERCISES]
