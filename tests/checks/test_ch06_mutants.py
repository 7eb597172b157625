"""Chapter 06 checks: the correct answers pass in strict mode, and every wrong answer below (each named for
the mistake it models) loses points with a hint. The kernel answers are rebuilt from source and run on the
simulator, so the kernel mutants are written out as a real module, one host function per mistake."""

import pytest

from cutekit import cute
from cutekit.checks import check, exercises

from simulated import kernels_on_simulator, solution_code, with_mistakes
from verdicts import assert_right_answer_earns_every_reference_point, assert_wrong_answer_loses_points_with_a_hint, mutant_params

SEEDS = (0, 1, 2)


# ---- ch06.to_reference ----

def to_reference(atom, side):
    chosen = atom.layout_src_tv if side == "src" else atom.layout_dst_tv
    return cute.composition(cute.right_inverse(atom.layout_ref_tv), chosen)


def reference_returns_the_side_itself(atom, side):
    return atom.layout_src_tv if side == "src" else atom.layout_dst_tv


def reference_composes_in_the_wrong_order(atom, side):
    chosen = atom.layout_src_tv if side == "src" else atom.layout_dst_tv
    return cute.composition(chosen, cute.right_inverse(atom.layout_ref_tv))


def reference_forgets_the_inverse(atom, side):
    chosen = atom.layout_src_tv if side == "src" else atom.layout_dst_tv
    return cute.composition(atom.layout_ref_tv, chosen)


def reference_always_the_source(atom, side):
    return cute.composition(cute.right_inverse(atom.layout_ref_tv), atom.layout_src_tv)


def reference_dst_as_identity_of_the_wrong_size(atom, side):
    if side == "dst":
        return cute.make_layout(32)
    return cute.composition(cute.right_inverse(atom.layout_ref_tv), atom.layout_src_tv)


def reference_hard_coded_x4(atom, side):
    return cute.make_layout(((8, 4), (2, 4)), stride=((4, 64), (32, 1))) if side == "src" \
        else cute.make_layout((32, (2, 4)), stride=(1, (32, 64)))


# ---- ch06.lands_in ----

def _tv(operand):
    mma = cute.make_tiled_mma(cute.nvgpu.warp.MmaF16BF16Op(cute.Float16, cute.Float32, (16, 8, 16)))
    return mma.tv_layout_A_tiled if operand == "A" else mma.tv_layout_B_tiled


def lands_in(operand, row, k):
    index = cute.right_inverse(_tv(operand))(row + (16 if operand == "A" else 8) * k)
    return (index % 32, (index // 32) // 2, (index // 32) % 2)


def lands_register_is_the_value_index(operand, row, k):
    index = cute.right_inverse(_tv(operand))(row + (16 if operand == "A" else 8) * k)
    return (index % 32, index // 32, (index // 32) % 2)


def lands_row_major_index(operand, row, k):
    index = cute.right_inverse(_tv(operand))(row * 16 + k)
    return (index % 32, (index // 32) // 2, (index // 32) % 2)


def lands_b_read_as_16_rows(operand, row, k):
    index = cute.right_inverse(_tv(operand))(row + 16 * k)
    return (index % 32, (index // 32) // 2, (index // 32) % 2)


def lands_lane_is_the_row_address(operand, row, k):
    return (row + 16 * (k // 8) if operand == "A" else row + 8 * (k // 8), (k % 8) // 2, k % 2)


def lands_half_and_register_swapped(operand, row, k):
    thread, register, half = lands_in(operand, row, k)
    return (thread, half, register)


def lands_hard_coded_worked_example(operand, row, k):
    return (0, 1, 1)


# ---- ch06.ldmatrix_for ----

def ldmatrix_for(operand, tile_mnk):
    rows = tile_mnk[0] if operand == "A" else tile_mnk[1]
    return min(4, (rows // 8) * (tile_mnk[2] // 8))


def choose_always_x4(operand, tile_mnk):
    return 4


def choose_x4_for_a_x2_for_b(operand, tile_mnk):
    return 4 if operand == "A" else 2


def choose_ignores_k(operand, tile_mnk):
    rows = tile_mnk[0] if operand == "A" else tile_mnk[1]
    return min(4, (rows // 8) * 2)


def choose_uses_m_for_b(operand, tile_mnk):
    return min(4, (tile_mnk[0] // 8) * (tile_mnk[2] // 8))


def choose_no_cap_at_four(operand, tile_mnk):
    rows = tile_mnk[0] if operand == "A" else tile_mnk[1]
    return (rows // 8) * (tile_mnk[2] // 8)


def choose_calls_the_switched_off_constructor(operand, tile_mnk):
    mma = cute.make_tiled_mma(cute.nvgpu.warp.MmaF16BF16Op(cute.Float16, cute.Float32, (16, 8, 16)), (1, 1, 1),
                              permutation_mnk=tile_mnk)
    for n in (4, 2, 1):
        try:
            cute.make_tiled_copy_B(cute.make_copy_atom(cute.nvgpu.warp.LdMatrix8x8x16bOp(False, n), cute.Float16), mma)
            return n
        except ValueError:
            continue


# ---- ch06.s2r_k_block (kernels) ----

S2R_KERNEL = solution_code("06_ldmatrix_retile", "@cute.kernel\ndef s2r_kernel", 'check("ch06.s2r_k_block"') \
    .replace("s2r_kernel", "s2r_kernel_NAME").replace("def load_k_block(", "def load_k_block_NAME(")

S2R_MISTAKES = {
    "always_k_block_0": ("tXsA[None, None, k_block], tXrA[None, None, k_block]",
                         "tXsA[None, None, 0], tXrA[None, None, 0]"),
    "source_from_the_other_k_block": ("tXsA[None, None, k_block], tXrA", "tXsA[None, None, 1 - k_block], tXrA"),
    "every_thread_copies_thread_0s_rows": ("tXsA = thread_copy.partition_S(sA)",
                                           "tXsA = s2r.get_slice(0).partition_S(sA)"),
    "partition_D_for_the_source": ("tXsA = thread_copy.partition_S(sA)", "tXsA = thread_copy.partition_D(sA)"),
    "no_copy_at_all": ("    cute.copy(s2r, tXsA[None, None, k_block], tXrA[None, None, k_block])\n", ""),
    "copies_into_a_separate_fragment": ("tXrA = thread_copy.retile(tCrA)",
                                        "tXrA = thread_copy.retile(cute.make_fragment_like(tCrA))"),
}


def _kernel_source() -> str:
    return "import cutlass\nimport cutlass.cute as cute\n\n" + with_mistakes(S2R_KERNEL, S2R_MISTAKES)


@pytest.fixture(scope="module")
def kernels(tmp_path_factory):
    """The kernels, imported from a real file with the simulator as `cutlass`; real cutlass given back."""
    with kernels_on_simulator(_kernel_source(), "ch06_kernels", tmp_path_factory.mktemp("ch06_kernels")) as module:
        yield module


CORRECT = {
    "ch06.to_reference": to_reference,
    "ch06.lands_in": lands_in,
    "ch06.ldmatrix_for": ldmatrix_for,
}

MUTANTS = [
    ("ch06.to_reference", "returns_the_side_itself", reference_returns_the_side_itself),
    ("ch06.to_reference", "composes_in_the_wrong_order", reference_composes_in_the_wrong_order),
    ("ch06.to_reference", "forgets_the_inverse", reference_forgets_the_inverse),
    ("ch06.to_reference", "always_the_source", reference_always_the_source),
    ("ch06.to_reference", "dst_as_identity_of_the_wrong_size", reference_dst_as_identity_of_the_wrong_size),
    ("ch06.to_reference", "hard_coded_x4", reference_hard_coded_x4),
    ("ch06.lands_in", "register_is_the_value_index", lands_register_is_the_value_index),
    ("ch06.lands_in", "row_major_index", lands_row_major_index),
    ("ch06.lands_in", "b_read_as_16_rows", lands_b_read_as_16_rows),
    ("ch06.lands_in", "lane_is_the_row_address", lands_lane_is_the_row_address),
    ("ch06.lands_in", "half_and_register_swapped", lands_half_and_register_swapped),
    ("ch06.lands_in", "hard_coded_worked_example", lands_hard_coded_worked_example),
    ("ch06.ldmatrix_for", "always_x4", choose_always_x4),
    ("ch06.ldmatrix_for", "x4_for_a_x2_for_b", choose_x4_for_a_x2_for_b),
    ("ch06.ldmatrix_for", "ignores_k", choose_ignores_k),
    ("ch06.ldmatrix_for", "uses_m_for_b", choose_uses_m_for_b),
    ("ch06.ldmatrix_for", "no_cap_at_four", choose_no_cap_at_four),
    ("ch06.ldmatrix_for", "calls_the_switched_off_constructor", choose_calls_the_switched_off_constructor),
]


def test_every_chapter_06_exercise_has_a_correct_answer_and_five_wrong_ones():
    ids = [exercise.id for exercise in exercises() if exercise.chapter == "ch06"]
    assert set(ids) == set(CORRECT) | {"ch06.s2r_k_block"}
    for exercise_id in CORRECT:
        assert sum(1 for mutant in MUTANTS if mutant[0] == exercise_id) >= 5, exercise_id
    assert len(S2R_MISTAKES) >= 5


@pytest.mark.parametrize("exercise_id", sorted(CORRECT))
@pytest.mark.parametrize("seed", SEEDS)
def test_correct_answer_earns_every_reference_point_in_strict_mode(exercise_id, seed, monkeypatch):
    assert_right_answer_earns_every_reference_point(exercise_id, CORRECT[exercise_id], seed, monkeypatch)


@pytest.mark.parametrize("exercise_id,answer", mutant_params(MUTANTS))
def test_wrong_answer_loses_points_with_a_hint_on_every_seed(exercise_id, answer, monkeypatch):
    assert_wrong_answer_loses_points_with_a_hint(exercise_id, answer, SEEDS, monkeypatch)


def test_the_dst_side_of_ldmatrix_is_told_it_returned_the_layout_itself(monkeypatch):
    monkeypatch.setenv("CUTEKIT_TIERS", "reference")
    result = check("ch06.to_reference", reference_returns_the_side_itself, seed=0)
    assert any("layout itself" in criterion.hint for criterion in result.criteria)


def test_the_correct_s2r_kernel_passes_on_the_simulator_in_strict_mode(kernels, monkeypatch):
    monkeypatch.setenv("CUTEKIT_STRICT", "1")
    monkeypatch.setenv("CUTEKIT_TIERS", "reference")
    assert check("ch06.s2r_k_block", kernels.load_k_block_none, seed=0).passed


@pytest.mark.parametrize("mistake", sorted(S2R_MISTAKES))
def test_a_wrong_s2r_kernel_loses_points_with_a_hint(kernels, mistake, monkeypatch):
    monkeypatch.setenv("CUTEKIT_TIERS", "reference")
    result = check("ch06.s2r_k_block", getattr(kernels, f"load_k_block_{mistake}"), seed=0)
    lost = [criterion for criterion in result.criteria if criterion.status == "failed"]
    assert lost and not result.passed, f"{mistake}: {result}"
    assert all(criterion.hint for criterion in lost)
