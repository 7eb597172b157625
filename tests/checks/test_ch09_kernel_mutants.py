"""Chapter 09's kernel exercises (the MMA warp's loop, the TMEM epilogue, the capstone): each mistake of the tables
in answers_ch09_kernels.py fails on every tier the table says catches it, with a hint naming its cause.

- "ptx" rows: the cutedsl-cpu criterion's judge on the PTX of the kernel compiled by real CuTeDSL for sm_100a with
  the mistaken function (2-5 s a compile on the course's 2-core machine; skipped without CuTeDSL). The rows the
  PTX alone catches run under make test; those the simulator catches as well, under make test-deep only
  (CUTEKIT_SWEEP=deep), which keeps make test to about 10 compiles here.
- "simulator" rows: what the mistake leaves in D, made in NumPy from the same A and B, named by the
  simulator tier's diagnosis (cheap, always run); and, where cutekit's simulator runs tcgen05, the whole check
  on the simulator (skipped until it does)."""
import re

import numpy
import pytest

from cutekit.checks import blackwell_kernels, check, exercises

from answers_ch09_kernels import (EPILOGUE_MISTAKES, MMA_LOOP_MISTAKES, RIGHT_EPILOGUES, epilogue_with,
                                   mma_loop_with)
from tests.sweep import pick

ROLE = {"ch09.mma_warp_loop": ("mma_loop", mma_loop_with, MMA_LOOP_MISTAKES, blackwell_kernels.mma_loop_ptx),
        "ch09.tmem_epilogue": ("scaled_epilogue", epilogue_with, EPILOGUE_MISTAKES, blackwell_kernels.epilogue_ptx)}
ROWS = [(exercise_id, mistake, tier, cause) for exercise_id, (_, _, table, _) in ROLE.items()
        for mistake, tiers in table.items() for tier, cause in tiers.items()]
# a compile for every PTX row under make test-deep; under make test only for the rows the simulator misses
PTX_ROWS = [(e, m, c) for e, m, tier, c in ROWS if tier == "ptx"
            and pick(quick="simulator" not in ROLE[e][2][m], deep=True)]


def test_each_kernel_exercise_has_ten_mistakes_or_more_and_is_registered():
    ids = [exercise.id for exercise in exercises() if exercise.chapter == "ch09"]
    assert ids[-3:] == list(ROLE) + ["ch09.capstone"]
    assert all(len(table) >= 10 for _, _, table, _ in ROLE.values())


@pytest.fixture(scope="module")
def cutedsl():
    pytest.importorskip("cutlass", reason="nvidia-cutlass-dsl is not installed")


@pytest.mark.cutedsl
@pytest.mark.parametrize("exercise_id", list(ROLE))
def test_the_right_function_compiles_and_its_ptx_passes(exercise_id, cutedsl):
    role, make, _, judge = ROLE[exercise_id]
    verdict = judge(blackwell_kernels.compile_with(make(), role))
    assert verdict.passed, verdict.hint


@pytest.mark.cutedsl
@pytest.mark.parametrize("variant", RIGHT_EPILOGUES)
def test_another_right_epilogue_passes_the_ptx_criterion(variant, cutedsl):
    """one tcgen05.wait::ld after the strip loop, each strip's registers used before it: right by the PTX ISA"""
    verdict = blackwell_kernels.epilogue_ptx(blackwell_kernels.compile_with(epilogue_with(variant), "scaled_epilogue"))
    assert verdict.passed, verdict.hint


@pytest.mark.cutedsl
@pytest.mark.parametrize("exercise_id,mistake,cause", PTX_ROWS)
def test_each_ptx_mistake_fails_the_compiled_criterion_naming_its_cause(exercise_id, mistake, cause, cutedsl):
    role, make, _, judge = ROLE[exercise_id]
    verdict = judge(blackwell_kernels.compile_with(make(mistake), role))
    assert not verdict.passed, f"{mistake}: the PTX criterion passed"
    assert re.search(cause, verdict.hint, flags=re.DOTALL), f"{mistake}: /{cause}/ not in {verdict.hint}"


# ---- what the simulator tier names, from D made in NumPy ---------------------------------------------------------

def _data(k_tiles: int, n: int, seed: int = 0):
    rng = numpy.random.default_rng(seed)
    a = rng.standard_normal((128, 64 * k_tiles)).astype(numpy.float16)
    b = rng.standard_normal((n, 64 * k_tiles)).astype(numpy.float16)
    return a, b


def _mma_loop_d(mistake: str, a, b):
    """D (fp16) that the MMA loop with `mistake` gives, where what it gives is a product of A and B."""
    blocks = blackwell_kernels.block_products(a, b)
    if mistake == "accumulate_never_true":
        d = blocks[-1]
    elif mistake == "reset_every_k_tile":
        d = sum(blocks[-4:])
    elif mistake == "accumulate_true_from_the_start":
        d = numpy.full(blocks[0].shape, numpy.nan)      # the simulator's TMEM starts as NaN, as registers do
    elif mistake == "half_the_k_blocks":
        d = sum(block for i, block in enumerate(blocks) if i % 4 < 2)
    elif mistake == "a_k_tile_read_from_another_stage":  # k-tile 1 multiplied k-tile 0's stage again
        d = sum(blocks[:4]) * 2 + sum(blocks[8:])
    else:
        d = sum(blocks)
    return d.astype(numpy.float16)


SIMULATED_MMA_LOOP = {"accumulate_never_true": r"only the last k-block's product",
                      "reset_every_k_tile": r"only the last k-tile's product",
                      "accumulate_true_from_the_start": r"NaN",
                      "half_the_k_blocks": r"k-blocks \[2, 3, 6, 7.*are missing",
                      "a_k_tile_read_from_another_stage": r"k-blocks \[4, 5, 6, 7\] .*are missing.*counted more than once"}


@pytest.mark.parametrize("mistake", list(SIMULATED_MMA_LOOP))
def test_the_mma_loop_diagnosis_names_what_d_holds(mistake):
    a, b = _data(3, 128)
    value = blackwell_kernels.mma_loop_diagnosis(a, b, _mma_loop_d(mistake, a, b))
    assert value["cause"] != "right"
    hint = blackwell_kernels.mma_loop_hint(value, {"M": 128, "N": 128, "K": a.shape[1]})
    assert re.search(SIMULATED_MMA_LOOP[mistake], hint, flags=re.DOTALL), hint


def test_the_diagnoses_accept_the_right_d():
    a, b = _data(7, 128)
    assert blackwell_kernels.mma_loop_diagnosis(a, b, _mma_loop_d("", a, b))["cause"] == "right"
    a, b = _data(2, 256)
    product = a.astype(numpy.float32) @ b.astype(numpy.float32).T
    assert blackwell_kernels.epilogue_diagnosis(product, (0.5 * product).astype(numpy.float16), 0.5)["cause"] == "right"


def _epilogue_d(mistake: str, product):
    d = 0.5 * product
    if mistake == "every_warp_reads_warp_0s_lanes":
        d = d[numpy.arange(128) % 32]
    elif mistake == "no_alpha":
        d = product
    elif mistake == "strip_count_of_32_column_strips":
        d = d.copy()
        d[:, 128:] = numpy.nan
    elif mistake == "accumulator_parity_1":            # TMEM read before the UMMAs wrote it: NaN
        d = numpy.full(d.shape, numpy.nan)
    return d.astype(numpy.float16)


SIMULATED_EPILOGUE = {"every_warp_reads_warp_0s_lanes": r"row r % 32.*own quarter",
                      "no_alpha": r"never scaled by alpha",
                      "strip_count_of_32_column_strips": r"columns 128-255 \(128\) were never written",
                      "accumulator_parity_1": r"NaN"}


@pytest.mark.parametrize("mistake", list(SIMULATED_EPILOGUE))
def test_the_epilogue_diagnosis_names_what_d_holds(mistake):
    a, b = _data(2, 256)
    product = a.astype(numpy.float32) @ b.astype(numpy.float32).T
    value = blackwell_kernels.epilogue_diagnosis(product, _epilogue_d(mistake, product), 0.5)
    hint = blackwell_kernels.epilogue_hint(value, {"M": 128, "N": 256, "K": a.shape[1]})
    assert re.search(SIMULATED_EPILOGUE[mistake], hint, flags=re.DOTALL), hint


# ---- on the simulator, once it runs tcgen05 ----------------------------------------------------------------------

simulated = pytest.mark.skipif(not blackwell_kernels.simulator_runs_tcgen05(),
                               reason="cutekit's simulator does not run tcgen05 yet (cutekit/sim/arch/sm100.py)")


@simulated
@pytest.mark.parametrize("exercise_id", list(ROLE))
def test_the_right_function_earns_every_simulator_point(exercise_id, monkeypatch):
    monkeypatch.setenv("CUTEKIT_TIERS", "reference")
    _, make, _, _ = ROLE[exercise_id]
    result = check(exercise_id, make(), seed=0, record=False)
    assert result.passed and result.earned == result.possible - result.waiting, str(result)


@simulated
@pytest.mark.parametrize("variant", RIGHT_EPILOGUES)
def test_another_right_epilogue_earns_every_simulator_point(variant, monkeypatch):
    monkeypatch.setenv("CUTEKIT_TIERS", "reference")
    result = check("ch09.tmem_epilogue", epilogue_with(variant), seed=0, record=False)
    assert result.passed and result.earned == result.possible - result.waiting, str(result)


@simulated
@pytest.mark.parametrize("exercise_id,mistake,cause",
                         [(e, m, c) for e, m, tier, c in ROWS if tier == "simulator"])
def test_each_simulator_mistake_fails_naming_its_cause(exercise_id, mistake, cause, monkeypatch):
    monkeypatch.setenv("CUTEKIT_TIERS", "reference")
    _, make, _, _ = ROLE[exercise_id]
    result = check(exercise_id, make(mistake), seed=0, record=False)
    hints = " | ".join(criterion.hint for criterion in result.criteria if criterion.status == "failed")
    assert not result.passed and re.search(cause, hints, flags=re.DOTALL), f"{mistake}: {hints}"


# ---- ch09.capstone: the whole kernel, D = relu(A B^T + bias) ------------------------------------------------------

from answers_ch09_kernels import CAPSTONE_MISTAKES, CAPSTONE_RIGHT_VARIANTS  # noqa: E402
from simulated import kernels_on_simulator, solution_code  # noqa: E402

CAPSTONE = solution_code("09_blackwell", "import cutlass.experimental.primitives as primitives\n"
                                         "import cutlass.utils.blackwell_helpers as blackwell_helpers\n",
                         'check("ch09.capstone"')


def _capstone_text(name: str, edits) -> str:
    text = CAPSTONE
    for old, new in edits:
        assert text.count(old) == 1, f"the solution no longer holds, once, what mistake {name!r} edits: {old!r}"
        text = text.replace(old, new)
    return text.replace("gemm_bias_relu", f"gemm_bias_relu_{name}")


def _capstone_source() -> str:
    pieces = ["import cutlass\nimport cutlass.cute as cute\nfrom cutlass.cute.nvgpu import tcgen05\n"]
    for name, (edits, _) in {"none": ([], {}), **CAPSTONE_MISTAKES}.items():
        pieces.append(_capstone_text(name, edits))
    for name, edits in CAPSTONE_RIGHT_VARIANTS.items():
        pieces.append(_capstone_text(name, edits))
    return "\n".join(pieces)


@pytest.fixture(scope="module")
def capstones(tmp_path_factory):
    with kernels_on_simulator(_capstone_source(), "ch09_capstones", tmp_path_factory.mktemp("ch09_capstones")) as module:
        yield module


def test_the_capstone_has_twelve_mistakes_or_more():
    assert len(CAPSTONE_MISTAKES) >= 12


def test_the_capstones_model_answer_earns_every_simulator_point(capstones, monkeypatch):
    monkeypatch.setenv("CUTEKIT_TIERS", "reference")
    result = check("ch09.capstone", capstones.gemm_bias_relu_none, seed=0, record=False)
    assert result.passed and result.earned == result.possible - result.waiting == 6, str(result)


@pytest.mark.parametrize("variant", list(CAPSTONE_RIGHT_VARIANTS))
def test_another_right_capstone_earns_every_simulator_point(capstones, variant, monkeypatch):
    monkeypatch.setenv("CUTEKIT_TIERS", "reference")
    result = check("ch09.capstone", getattr(capstones, f"gemm_bias_relu_{variant}"), seed=0, record=False)
    assert result.passed and result.earned == result.possible - result.waiting == 6, str(result)


def test_an_accumulator_overwritten_by_every_mma_is_named_on_every_first_problem():
    """The first problem has K <= 56, one 64-wide k-tile whose last 16-wide k-block is zero padding when K <= 48:
    a kernel whose MMAs all overwrite the accumulator then stores relu(bias) alone, which is not "the last
    k-block's product" of A and B; the hint still names the MMAs overwriting the accumulator (cheap: D is built
    here, as such a kernel stores it, and only the diagnosis runs)."""
    for K in range(8, 57, 8):
        case = {"M": 72, "N": 136, "K": K, "_shape": 0, "_data": K}
        a, b, bias, _ = blackwell_kernels._capstone_data(case)
        padded = numpy.zeros((72, 64), numpy.float16), numpy.zeros((136, 64), numpy.float16)
        padded[0][:, :K], padded[1][:, :K] = a, b
        last = padded[0][:, 48:].astype(numpy.float32) @ padded[1][:, 48:].astype(numpy.float32).T
        d = numpy.maximum(last + bias, 0).astype(numpy.float16)
        value = blackwell_kernels.capstone_diagnosis(a, b, bias, d)
        hint = blackwell_kernels._capstone_hint(value, case)
        assert value["cause"] in ("last k-block", "one k-block"), (K, value)
        assert "overwrote the accumulator" in hint and "ACCUMULATE field" in hint, (K, hint)


def removed_statements(edits) -> list:
    """The solution's statements an edit removed or changed, 24 characters or more: a hint must not hold them."""
    return [line.strip() for old, _ in edits for line in old.splitlines() if len(line.strip()) >= 24]


@pytest.mark.parametrize("mistake", [m for m, (_, tiers) in CAPSTONE_MISTAKES.items() if "simulator" in tiers])
def test_each_capstone_mistake_fails_with_a_hint_naming_its_cause_not_the_answer(capstones, mistake, monkeypatch):
    edits, tiers = CAPSTONE_MISTAKES[mistake]
    cause = tiers["simulator"]
    monkeypatch.setenv("CUTEKIT_TIERS", "reference")
    result = check("ch09.capstone", getattr(capstones, f"gemm_bias_relu_{mistake}"), seed=0, record=False)
    lost = [criterion for criterion in result.criteria if criterion.status == "failed"]
    assert lost and not result.passed, f"a wrong kernel passed:\n{result}"
    hints = " | ".join(criterion.hint for criterion in lost)
    assert re.search(cause, hints, flags=re.IGNORECASE | re.DOTALL), f"the hint does not name /{cause}/: {hints}"
    for statement in removed_statements(edits):
        assert statement not in hints, f"the hint gives the answer's {statement!r} away: {hints}"


@pytest.mark.cutedsl
@pytest.mark.parametrize("mistake", ["none", *CAPSTONE_RIGHT_VARIANTS]
                         + [m for m, (_, tiers) in CAPSTONE_MISTAKES.items() if "ptx" in tiers
                            and pick(quick="simulator" not in tiers, deep=True)])
def test_the_capstones_ptx_passes_the_model_and_names_the_ptx_mistakes(mistake, cutedsl, tmp_path):
    edits, tiers = CAPSTONE_MISTAKES.get(mistake, (CAPSTONE_RIGHT_VARIANTS.get(mistake, []), {}))
    cause = tiers.get("ptx")
    path = tmp_path / "capstone.py"
    path.write_text("import cutlass\nimport cutlass.cute as cute\nfrom cutlass.cute.nvgpu import tcgen05\n"
                    + _capstone_text(mistake, edits))
    from cutekit.checks.cutedsl import compile_to_ptx
    report = compile_to_ptx(str(path), f"gemm_bias_relu_{mistake}", blackwell_kernels.CAPSTONE_FAKES, arch="sm_100a")
    verdict = blackwell_kernels.capstone_ptx(report)
    if mistake == "none" or mistake in CAPSTONE_RIGHT_VARIANTS:
        assert verdict.passed, verdict.hint
    else:
        assert not verdict.passed and re.search(cause, verdict.hint, flags=re.DOTALL), verdict.hint


def test_every_capstone_draw_is_ragged_over_two_tiles_and_goes_round_the_ring_twice():
    import random

    from verdicts import ALL_SEEDS
    for seed in ALL_SEEDS:
        edges, laps = blackwell_kernels._capstone_cases(random.Random(seed))
        for case in (edges, laps):
            assert case["N"] % 8 == case["K"] % 8 == 0 and case["N"] % 64 and case["K"] % 64 and case["M"] % 64
        assert 64 < edges["M"] < 128 < edges["N"] < 256 and edges["K"] < 64            # two tile-columns, one k-tile
        assert 128 < laps["M"] < 256 and laps["N"] < 128 and 6 * 64 < laps["K"] < 7 * 64   # two tile-rows, 7 k-tiles


def mma_loop_with_a_carried_phase(tiled_mma, accumulator, tCrA, tCrB, full, empty, accumulator_ready, k_tiles,
                                  stages):
    """another right loop: the stage and the phase carried round the loop, as the kernel's `produce` of chapter
    08 does, and ACCUMULATE turned on after each k-block"""
    import cutlass
    import cutlass.cute as cute
    from cutlass.cute.nvgpu import tcgen05
    stage, phase = cutlass.Int32(0), cutlass.Int32(0)
    tiled_mma.set(tcgen05.Field.ACCUMULATE, False)
    for _ in cutlass.range(k_tiles):
        cute.arch.mbarrier_wait(full + stage, phase)
        for k_block in cutlass.range_constexpr(cute.size(tCrA, mode=[2])):
            cute.gemm(tiled_mma, accumulator, tCrA[None, None, k_block, stage], tCrB[None, None, k_block, stage],
                      accumulator)
            tiled_mma.set(tcgen05.Field.ACCUMULATE, True)
        with cute.arch.elect_one():
            tcgen05.commit(empty + stage)
        stage = stage + 1
        if stage == stages:
            stage, phase = cutlass.Int32(0), phase ^ 1
    with cute.arch.elect_one():
        tcgen05.commit(accumulator_ready)


def test_another_right_mma_loop_earns_every_simulator_point(monkeypatch):
    monkeypatch.setenv("CUTEKIT_TIERS", "reference")
    result = check("ch09.mma_warp_loop", mma_loop_with_a_carried_phase, seed=3, record=False)
    assert result.passed and result.earned == result.possible - result.waiting == 3, str(result)


@pytest.mark.cutedsl
def test_another_right_mma_loop_passes_the_ptx_criterion(cutedsl):
    verdict = blackwell_kernels.mma_loop_ptx(blackwell_kernels.compile_with(mma_loop_with_a_carried_phase, "mma_loop"))
    assert verdict.passed, verdict.hint
