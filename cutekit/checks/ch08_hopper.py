"""Chapter 08 exercises: the parts of a Hopper GEMM a learner writes. The shared-memory layout for a tile and a
dtype (the swizzle chosen from the contiguous extent in bytes), the TMA boxes and the transaction count of a
stage, the number of stages that fits in 227 KiB, the mbarrier wait/arrive sequence with its phases, and the
wgmma main loop's order.

Cases are drawn from a seed. The layout, box and stage generators draw until the cases tell every modelled
mistake apart from the right answer (each mistake below gives a wrong result on at least one case of every
draw), so a hint can name the mistake it recognises. The two pipeline exercises run the learner's steps in
`cutekit.sim.mbarriers`, a model of the mbarriers, the TMA copies and the wgmma groups that names the first
thing that goes wrong ("waiting on the wrong phase", "stage reused before its consumer released it", ...).
"""
from __future__ import annotations

import tempfile
from pathlib import Path

from .common import case_text, each_outcome
from .cutedsl import NotMovable, WorkerReply, module_source, run_in_cutedsl
from .grading import Criterion, Exercise, Verdict, failed, passed

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
    outcomes = [outcome for outcome in context.outcomes if not outcome.error]
    if not outcomes:
        return failed("your function raised on every case (see the other criteria)")
    try:
        source = module_source(context.answer)
    except NotMovable as why:
        reply = WorkerReply(False, error=str(why))
    else:
        with tempfile.TemporaryDirectory(prefix="cutekit-ch08-") as folder:
            path = Path(folder) / "learner_answer.py"
            path.write_text(source + "\n\n" + SMEM_WRAPPER.replace("{name}", context.answer.__name__) + "\n")
            calls = [(o.case["mn"], o.case["k"], o.case["dtype"], o.case["major"], o.case["stages"]) for o in outcomes]
            reply = run_in_cutedsl(str(path), "_ch08_layout", calls)
    if not reply.ok:
        return failed(f"CuTeDSL could not run your function: {reply.error[:600]}")
    for outcome, (value, error) in zip(outcomes, reply.values):
        if error:
            return failed(f"{case_text(outcome.case)}: under real CuTeDSL your function raised {error}")
        if value != outcome.value:
            return failed(f"{case_text(outcome.case)}: real CuTeDSL builds\n{value}\nfrom your function; cutekit "
                          f"built\n{outcome.value}")
    return passed()


SMEM_LAYOUT = Exercise(
    id="ch08.smem_layout",
    statement="Write smem_layout(mn, k, dtype, major, stages): the staged shared-memory layout of an (mn, k) "
              "operand tile, K-major or MN-major, built from the warpgroup atom with the largest swizzle the "
              "contiguous extent (in bytes) allows.",
    example="smem_layout(128, 64, Float16, 'K', 4) is S<3,4,3> o 0 o ((8,16),(64,1),(1,4)):((64,512),(1,0),(0,8192))",
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
    bm, bn, bk, cluster, width = case["bm"], case["bn"], case["bk"], case["cluster_m"], _width(case["dtype"])
    return {"A": (bm, bk), "B": (bn // cluster, bk), "expect_tx": (bm + bn) * bk * width // 8}


TMA_MODELS = {
    "whole B": (lambda c: {**reference_tma_plan(c), "B": (c["bn"], c["bk"])},
                "with a cluster of {cluster_m} CTAs each CTA loads 1/{cluster_m} of B's tile ({bn_part} rows) and "
                "multicasts it; your B box is the whole tile"),
    "own share": (lambda c: {**reference_tma_plan(c), "expect_tx": (c["bm"] + c["bn"] // c["cluster_m"]) * c["bk"] * _width(c["dtype"]) // 8},
                  "the full barrier counts every byte that lands in this CTA's shared memory: all of B arrives "
                  "(its own share and the other CTAs' multicast shares), so expect_tx is (bm + bn) * bk * bytes"),
    "elements": (lambda c: {**reference_tma_plan(c), "expect_tx": (c["bm"] + c["bn"]) * c["bk"]},
                 "expect_tx is a count of bytes, not elements: multiply by {bytes} bytes per {dtype}"),
    "fp16 bytes": (lambda c: {**reference_tma_plan(c), "expect_tx": (c["bm"] + c["bn"]) * c["bk"] * 2},
                   "the element size is hard-coded as 2 bytes; {dtype} is {bytes} bytes"),
    "A shared": (lambda c: {**reference_tma_plan(c), "A": (c["bm"] // c["cluster_m"], c["bk"]), "B": (c["bn"], c["bk"])},
                 "the cluster's CTAs compute different rows of C (different A tiles) and share B: divide B's box, "
                 "not A's"),
    "K first": (lambda c: {**reference_tma_plan(c), "A": (c["bk"], c["bm"]), "B": (c["bk"], c["bn"] // c["cluster_m"])},
                "the boxes are written (K, M) / (K, N); they follow the tensors' modes: A is (M, K) and B (N, K)"),
    "one stage of A": (lambda c: {**reference_tma_plan(c), "expect_tx": c["bm"] * c["bk"] * _width(c["dtype"]) // 8},
                       "expect_tx counts only A's bytes; the full barrier waits for A's and B's copies together"),
}


def _tma_draw(rng):
    cases = []
    for cluster in (2, 1, rng.choice([1, 2])):
        cases.append({"bm": rng.choice([64, 128, 192]), "bn": rng.choice([64, 128, 256]),
                      "bk": rng.choice([32, 64, 128]), "cluster_m": cluster, "dtype": rng.choice(DTYPES)})
    rng.shuffle(cases)
    return cases


def _tma_cases(rng):
    return _draw_until_told_apart(rng, _tma_draw, reference_tma_plan, TMA_MODELS)


def _ask_tma(answer, case):
    plan = answer(case["bm"], case["bn"], case["bk"], case["cluster_m"], _dtype(case["dtype"]))
    if not isinstance(plan, dict) or set(plan) != {"A", "B", "expect_tx"}:
        raise TypeError(f"expected a dict with keys 'A', 'B', 'expect_tx', got {plan!r:.120}")
    return {"A": tuple(plan["A"]), "B": tuple(plan["B"]), "expect_tx": plan["expect_tx"]}


def _tma_hint(outcome, keys) -> Verdict | None:
    case, got = outcome.case, outcome.value
    want = reference_tma_plan(case)
    if all(got[key] == want[key] for key in keys):
        return None
    facts = {**case, "bytes": _width(case["dtype"]) // 8, "bn_part": case["bn"] // case["cluster_m"]}
    named = _matching(got, case, TMA_MODELS, facts)
    wrong = ", ".join(f"{key} = {got[key]} (expected {want[key]})" for key in keys if got[key] != want[key])
    text = f"{case_text(case)}: {wrong}"
    if named:
        return failed(text + "\n" + named)
    return failed(text + "\nA's box is (bm, bk); B's is (bn / cluster_m, bk), each CTA's share; expect_tx is every "
                  "byte of A's and B's tiles")


TMA_PLAN = Exercise(
    id="ch08.tma_plan",
    statement="Write tma_plan(bm, bn, bk, cluster_m, dtype): the TMA box each CTA loads for A and for B (B "
              "multicast across cluster_m CTAs along M) and the bytes its full barrier expects per stage.",
    example="tma_plan(128, 256, 64, 1, Float16) is {'A': (128, 64), 'B': (256, 64), 'expect_tx': 49152}",
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
    "1000": (lambda c: _fit(c, limit=227 * 1000), "a KiB is 1024 bytes: the limit is 227 * 1024 = 232448 bytes"),
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
    cases=_stage_cases,
    ask=_ask_stages,
    criteria=(Criterion("the number of stages that fits in 227 KiB", "reference", 2, _stages_right),),
)


# ---- ch08.mbarrier_phases and ch08.wgmma_main_loop: the pipeline model ----------------------------------------------

def _pipeline_cases(rng):
    """Always one case with fewer k-tiles than stages, and one going round the ring at least twice."""
    stages = rng.choice([2, 3, 4])
    cases = [{"k_tiles": rng.randint(1, stages - 1) if stages > 2 else 1, "stages": stages},
             {"k_tiles": rng.randint(2 * stages + 1, 3 * stages + 2), "stages": stages},
             {"k_tiles": rng.randint(2, 12), "stages": rng.choice([2, 3, 4, 5])}]
    for case in cases:
        case["nbytes"] = rng.choice([16384, 24576, 32768, 49152])
    return cases


def reference_producer(k_tiles, stages, nbytes):
    from cutekit.sim.mbarriers import arrive_expect_tx, tma_load, wait
    steps, stage, phase = [], 0, 1
    for k_tile in range(k_tiles):
        steps += [wait("empty", stage, phase), arrive_expect_tx("full", stage, nbytes), tma_load(stage, k_tile)]
        stage += 1
        if stage == stages:
            stage, phase = 0, phase ^ 1
    return steps


def _as_steps(value, what):
    if not isinstance(value, (list, tuple)) or not all(isinstance(step, tuple) for step in value):
        raise TypeError(f"{what} should be a list of steps (wait(...), arrive(...), ...), got {value!r:.120}")
    return [tuple(step) for step in value]


def _ask_phases(answer, case):
    from cutekit.sim.mbarriers import run_pipeline
    value = answer(case["k_tiles"], case["stages"], case["nbytes"])
    if not isinstance(value, tuple) or len(value) != 2:
        raise TypeError(f"expected (producer_steps, consumer_steps), got {value!r:.120}")
    producer, consumer = _as_steps(value[0], "producer_steps"), _as_steps(value[1], "consumer_steps")
    report = run_pipeline(producer, [consumer], case["k_tiles"], case["stages"], case["nbytes"])
    return {"ok": report.ok, "report": str(report), "mistake": report.mistake, "schedule": report.schedule,
            "producer": producer, "consumer": consumer}


PIPELINE_HINTS = {
    "wrong phase": "the parity flips each time the stage index wraps to 0: a consumer waits on full[s] for parity "
                   "0 on its first pass; the producer's first pass waits on empty[s] for parity 1 (the phase "
                   "before the first, complete at once)",
    "deadlock": "a wait that never returns: a parity that names a phase nobody completes, or an arrive that never "
                "comes (the consumer releases each stage on empty[s] once it has used it)",
    "stage reused": "the producer must wait on empty[s] before it loads into stage s again, and the consumer "
                    "arrives on empty[s] only after it has read the stage",
    "read before landed": "the full barrier completes only when its arrival and its expected bytes are in: "
                          "arrive_expect_tx with the stage's bytes (not a plain arrive, not too few bytes)",
}


def _pipeline_verdict(outcome, extra_hints=None) -> Verdict | None:
    value = outcome.value
    if value["ok"]:
        return None
    hints = {**PIPELINE_HINTS, **(extra_hints or {})}
    advice = hints.get(value["mistake"], "")
    return failed(f"{case_text(outcome.case)} ({value['schedule']}): {value['report']}"
                  + (f"\n{advice}" if advice else ""))


@each_outcome
def _phases_run(outcome) -> Verdict | None:
    return _pipeline_verdict(outcome)


@each_outcome
def _phases_bytes(outcome) -> Verdict | None:
    expect = [step for step in outcome.value["producer"] if step[0] == "arrive_expect_tx"]
    if len(expect) != outcome.case["k_tiles"] or any(step[3] != outcome.case["nbytes"] for step in expect):
        got = sorted({step[3] for step in expect}) if expect else "none"
        return failed(f"{case_text(outcome.case)}: the producer should announce nbytes = {outcome.case['nbytes']} with "
                      f"arrive_expect_tx on full[s] once per k-tile; it announced {got} in {len(expect)} "
                      f"arrive_expect_tx step(s) (read before landed: a plain arrive completes the phase early)")
    return None


MBARRIER_PHASES = Exercise(
    id="ch08.mbarrier_phases",
    statement="Write pipeline_steps(k_tiles, stages, nbytes) -> (producer_steps, consumer_steps): the producer "
              "waits for a free stage, announces nbytes and loads each k-tile; the consumer waits for a full "
              "stage, multiplies it with a synchronous mma and releases it, both cycling over the ring of stages "
              "with the right phase parities.",
    example="pipeline_steps(3, 2, 32768)[1][:3] is [wait('full', 0, 0), mma(0, 0), arrive('empty', 0)]",
    cases=_pipeline_cases,
    ask=_ask_phases,
    criteria=(
        Criterion("every k-tile's bytes announced on its full barrier", "reference", 1, _phases_bytes),
        Criterion("the pipeline runs in the mbarrier model without a wrong phase, reuse or deadlock", "reference", 2,
                  _phases_run),
    ),
)


def _main_loop_cases(rng):
    cases = []
    for depth in (1, rng.choice([0, 2])):
        stages = rng.choice([depth + 1, depth + 2, 4]) if depth < 3 else 4
        stages = max(stages, depth + 1)
        cases.append({"k_tiles": rng.randint(2 * stages + 1, 3 * stages + 3), "stages": stages, "depth": depth,
                      "nbytes": 49152})
    cases.append({"k_tiles": 1, "stages": 2, "depth": 1, "nbytes": 49152})
    return cases


def _ask_main_loop(answer, case):
    from cutekit.sim.mbarriers import run_pipeline
    consumer = _as_steps(answer(case["k_tiles"], case["stages"], case["depth"]), "consumer_loop")
    producer = reference_producer(case["k_tiles"], case["stages"], case["nbytes"])
    report = run_pipeline(producer, [consumer], case["k_tiles"], case["stages"], case["nbytes"])
    # after each wait_group before the last step: (groups still running, groups committed so far)
    running, committed, left = 0, 0, []
    for index, step in enumerate(consumer):
        if step[0] == "commit_group":
            running, committed = running + 1, committed + 1
        elif step[0] == "wait_group" and isinstance(step[1], int):
            running = min(running, step[1])
            if index < len(consumer) - 1:
                left.append((running, committed))
    return {"ok": report.ok, "report": str(report), "mistake": report.mistake, "schedule": report.schedule,
            "left": left, "consumer": consumer}


MAIN_LOOP_HINTS = {
    "released while read": "release the stage of the k-tile `depth` k-tiles back, after wait_group(depth) has "
                           "retired its wgmmas (with depth 0: the current stage, after wait_group(0)); wait_group "
                           "counts only groups closed with commit_group",
    "no fence": "warpgroup.fence() comes before the first wgmma (after the wait on full[s])",
    "still running": "after the loop, wait_group(0): the epilogue reads the accumulators",
    "deadlock": "each stage must be released once its wgmmas are retired, or the producer waits forever",
}


@each_outcome
def _main_loop_runs(outcome) -> Verdict | None:
    return _pipeline_verdict(outcome, MAIN_LOOP_HINTS)


@each_outcome
def _main_loop_overlap(outcome) -> Verdict | None:
    case, value = outcome.case, outcome.value
    if not value["ok"]:
        return failed(f"{case_text(case)}: the loop must first run correctly (see the criterion above)")
    depth = case["depth"]
    wrong = [(left, committed) for left, committed in value["left"] if left != min(depth, committed)]
    if wrong or (not value["left"] and case["k_tiles"] > depth):
        got = [left for left, _ in value["left"]][:8]
        want = [min(depth, committed) for _, committed in value["left"]][:8]
        return failed(f"{case_text(case)}: after the loop's wait_group steps, {got} groups of wgmmas stay running; "
                      f"with depth {depth} it should be {want}: wait_group({depth}) keeps the last {depth} k-tiles' "
                      f"wgmmas overlapping the next wait (wait_group(0) in the loop leaves none, so the tensor cores "
                      f"idle while the warpgroup waits)")
    return None


WGMMA_MAIN_LOOP = Exercise(
    id="ch08.wgmma_main_loop",
    statement="Write consumer_loop(k_tiles, stages, depth): a consumer warpgroup's main loop as steps (wait on "
              "full, fence, wgmma, commit_group, wait_group, release on empty) that keeps `depth` k-tiles of "
              "wgmmas running and releases each stage once its wgmmas are retired, then waits for all of them.",
    example="the kernel's loop is depth 1: release the previous k-tile's stage after wait_group(1)",
    cases=_main_loop_cases,
    ask=_ask_main_loop,
    criteria=(
        Criterion("the loop runs in the mbarrier model: phases, fence, releases after retirement", "reference", 2,
                  _main_loop_runs),
        Criterion("`depth` k-tiles of wgmmas stay running after each wait_group", "reference", 1, _main_loop_overlap),
    ),
)


EXERCISES = [SMEM_LAYOUT, TMA_PLAN, STAGE_COUNT, MBARRIER_PHASES, WGMMA_MAIN_LOOP]
