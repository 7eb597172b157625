"""Chapter 09 answers: the right one per exercise (CORRECT) and the mistakes learners make (MISTAKES rows
`(exercise_id, mistake, wrong_answer, cause)`, `cause` a regular expression the hint must match)."""
from math import ceil, log2

from cutekit import cute
from cutekit.cute.nvgpu import OperandMajorMode, tcgen05
from cutekit.cute.utils import blackwell_helpers

K = OperandMajorMode.K


# ---- ch09.accumulator_stages ------------------------------------------------------------------------------------

def accumulator_stages(bm, bn, ab_dtype, acc_dtype, cta_group, other_columns):
    tiled_mma = blackwell_helpers.make_trivial_tiled_mma(ab_dtype, ab_dtype, K, K, acc_dtype, cta_group, (bm, bn))
    accumulator = tiled_mma.make_fragment_C(tiled_mma.partition_shape_C((bm, bn)))
    stages = (512 - other_columns) // tcgen05.find_tmem_tensor_col_offset(accumulator)
    if stages < 1:
        raise ValueError(f"{other_columns} other columns leave no room for an accumulator")
    return {"instruction": tuple(tiled_mma.op.shape_mnk), "stages": stages}


def _power_of_two(columns):
    return max(1 << ceil(log2(columns)), 32) if columns else 0


def _by_hand(bm, bn, ab_dtype, acc_dtype, cta_group, other_columns, *, k=None, per_rule="right", n_step=None,
             m_ok=None, stage_rounded=False, other_rounded=False, other_counted=True, refuse=True):
    """accumulator_stages from the rules, with one rule bent per keyword."""
    pair = cta_group == tcgen05.CtaGroup.TWO
    if m_ok is None:
        m_ok = bm in ((128, 256) if pair else (64, 128))
    step = n_step or (16 if pair else 8)
    if not m_ok or not (step <= bn <= 256 and bn % step == 0):
        raise ValueError(f"no tcgen05.mma of {bm} x {bn}")
    per = bn // 2 if pair and bm == 128 else bn
    if per_rule == "pair never halved":
        per = bn
    elif per_rule == "pair always halved":
        per = bn // 2 if pair else bn
    elif per_rule == "f16 packed" and acc_dtype.width == 16:
        per //= 2
    elif per_rule == "m64 halved" and bm == 64:
        per //= 2
    other = (_power_of_two(other_columns) if other_rounded else other_columns) if other_counted else 0
    stages = (512 - other) // (_power_of_two(per) if stage_rounded else per)
    if refuse and stages < 1:
        raise ValueError("no accumulator fits")
    return {"instruction": (bm, bn, k if k is not None else 256 // ab_dtype.width), "stages": stages}


def stages_by_hand(bm, bn, ab_dtype, acc_dtype, cta_group, other_columns):
    return _by_hand(bm, bn, ab_dtype, acc_dtype, cta_group, other_columns)


def stages_other_columns_ignored(bm, bn, ab_dtype, acc_dtype, cta_group, other_columns):
    return _by_hand(bm, bn, ab_dtype, acc_dtype, cta_group, other_columns, other_counted=False)


def stages_each_stage_rounded(bm, bn, ab_dtype, acc_dtype, cta_group, other_columns):
    tiled_mma = blackwell_helpers.make_trivial_tiled_mma(ab_dtype, ab_dtype, K, K, acc_dtype, cta_group, (bm, bn))
    accumulator = tiled_mma.make_fragment_C(tiled_mma.partition_shape_C((bm, bn)))
    from cutekit.cute import memory
    stages = (512 - other_columns) // memory.get_num_tmem_alloc_cols(accumulator)
    if stages < 1:
        raise ValueError("no accumulator fits")
    return {"instruction": tuple(tiled_mma.op.shape_mnk), "stages": stages}


def stages_other_columns_rounded(bm, bn, ab_dtype, acc_dtype, cta_group, other_columns):
    return _by_hand(bm, bn, ab_dtype, acc_dtype, cta_group, other_columns, other_rounded=True)


def stages_f16_accumulators_packed(bm, bn, ab_dtype, acc_dtype, cta_group, other_columns):
    return _by_hand(bm, bn, ab_dtype, acc_dtype, cta_group, other_columns, per_rule="f16 packed")


def stages_pair_of_128_rows_not_halved(bm, bn, ab_dtype, acc_dtype, cta_group, other_columns):
    return _by_hand(bm, bn, ab_dtype, acc_dtype, cta_group, other_columns, per_rule="pair never halved")


def stages_pair_of_256_rows_halved(bm, bn, ab_dtype, acc_dtype, cta_group, other_columns):
    return _by_hand(bm, bn, ab_dtype, acc_dtype, cta_group, other_columns, per_rule="pair always halved")


def stages_m64_in_half_the_columns(bm, bn, ab_dtype, acc_dtype, cta_group, other_columns):
    return _by_hand(bm, bn, ab_dtype, acc_dtype, cta_group, other_columns, per_rule="m64 halved")


def stages_k_always_16(bm, bn, ab_dtype, acc_dtype, cta_group, other_columns):
    return _by_hand(bm, bn, ab_dtype, acc_dtype, cta_group, other_columns, k=16)


def stages_pair_with_the_one_cta_n_rule(bm, bn, ab_dtype, acc_dtype, cta_group, other_columns):
    return _by_hand(bm, bn, ab_dtype, acc_dtype, cta_group, other_columns, n_step=8)


def stages_m_256_on_one_cta(bm, bn, ab_dtype, acc_dtype, cta_group, other_columns):
    legal = (64, 128, 256) if cta_group == tcgen05.CtaGroup.ONE else (128, 256)
    return _by_hand(bm, bn, ab_dtype, acc_dtype, cta_group, other_columns, m_ok=bm in legal)


def stages_m_64_on_a_pair(bm, bn, ab_dtype, acc_dtype, cta_group, other_columns):
    legal = (64, 128) if cta_group == tcgen05.CtaGroup.ONE else (64, 128, 256)
    return _by_hand(bm, bn, ab_dtype, acc_dtype, cta_group, other_columns, m_ok=bm in legal)


def stages_zero_returned(bm, bn, ab_dtype, acc_dtype, cta_group, other_columns):
    return _by_hand(bm, bn, ab_dtype, acc_dtype, cta_group, other_columns, refuse=False)


# ---- ch09.ab_stages ---------------------------------------------------------------------------------------------

def ab_stages(bm, bn, bk, dtype, cta_group, reserved_bytes):
    acc = cute.Int32 if dtype.width == 8 else cute.Float32
    tiled_mma = blackwell_helpers.make_trivial_tiled_mma(dtype, dtype, K, K, acc, cta_group, (bm, bn))
    a = cute.size_in_bytes(dtype, blackwell_helpers.make_smem_layout_a(tiled_mma, (bm, bn, bk), dtype, 1))
    b = cute.size_in_bytes(dtype, blackwell_helpers.make_smem_layout_b(tiled_mma, (bm, bn, bk), dtype, 1))
    stages = (227 * 1024 - reserved_bytes) // (a + b)
    if stages < 1:
        raise ValueError("not one stage fits")
    return {"A": a, "B": b, "stages": stages}


def _ab(bm, bn, bk, dtype, cta_group, reserved_bytes, *, halve_a=None, halve_b=None, element=None, k=None,
        budget=227 * 1024, reserved_once=True, reserved_per_stage=False, accumulator=False, refuse=True):
    """ab_stages from the rules, with one rule bent per keyword."""
    pair = cta_group == tcgen05.CtaGroup.TWO
    halve_a = pair if halve_a is None else halve_a
    halve_b = pair if halve_b is None else halve_b
    element = dtype.width // 8 if element is None else element
    k = bk if k is None else k
    a = bm // (2 if halve_a else 1) * k * element
    b = bn // (2 if halve_b else 1) * k * element
    held = reserved_bytes if reserved_once else 0
    if accumulator:
        held += bm // (2 if pair else 1) * bn * 4
    stages = (budget - held) // (a + b + (reserved_bytes if reserved_per_stage else 0))
    if refuse and stages < 1:
        raise ValueError("not one stage fits")
    return {"A": a, "B": b, "stages": stages}


def ab_pair_a_not_halved(bm, bn, bk, dtype, cta_group, reserved_bytes):
    return _ab(bm, bn, bk, dtype, cta_group, reserved_bytes, halve_a=False)


def ab_pair_b_not_halved(bm, bn, bk, dtype, cta_group, reserved_bytes):
    return _ab(bm, bn, bk, dtype, cta_group, reserved_bytes, halve_b=False)


def ab_one_cta_halved_too(bm, bn, bk, dtype, cta_group, reserved_bytes):
    return _ab(bm, bn, bk, dtype, cta_group, reserved_bytes, halve_a=True, halve_b=True)


def ab_two_bytes_per_element(bm, bn, bk, dtype, cta_group, reserved_bytes):
    return _ab(bm, bn, bk, dtype, cta_group, reserved_bytes, element=2)


def ab_width_in_bits_as_bytes(bm, bn, bk, dtype, cta_group, reserved_bytes):
    return _ab(bm, bn, bk, dtype, cta_group, reserved_bytes, element=dtype.width)


def ab_sms_228_kib(bm, bn, bk, dtype, cta_group, reserved_bytes):
    return _ab(bm, bn, bk, dtype, cta_group, reserved_bytes, budget=228 * 1024)


def ab_reserved_ignored(bm, bn, bk, dtype, cta_group, reserved_bytes):
    return _ab(bm, bn, bk, dtype, cta_group, reserved_bytes, reserved_once=False)


def ab_reserved_per_stage(bm, bn, bk, dtype, cta_group, reserved_bytes):
    return _ab(bm, bn, bk, dtype, cta_group, reserved_bytes, reserved_once=False, reserved_per_stage=True)


def ab_accumulator_in_shared_memory(bm, bn, bk, dtype, cta_group, reserved_bytes):
    return _ab(bm, bn, bk, dtype, cta_group, reserved_bytes, accumulator=True)


def ab_instruction_k_as_the_k_tile(bm, bn, bk, dtype, cta_group, reserved_bytes):
    return _ab(bm, bn, bk, dtype, cta_group, reserved_bytes, k=256 // dtype.width)


def ab_zero_returned(bm, bn, bk, dtype, cta_group, reserved_bytes):
    return _ab(bm, bn, bk, dtype, cta_group, reserved_bytes, refuse=False)


CORRECT = {
    "ch09.accumulator_stages": accumulator_stages,
    "ch09.ab_stages": ab_stages,
}

MISTAKES = [
    ("ch09.accumulator_stages", "other columns ignored", stages_other_columns_ignored, r"same 512"),
    ("ch09.accumulator_stages", "each stage rounded", stages_each_stage_rounded,
     r"only the whole allocation is rounded"),
    ("ch09.accumulator_stages", "other columns rounded", stages_other_columns_rounded,
     r"not a power of two of their own"),
    ("ch09.accumulator_stages", "fp16 accumulators packed two to a column", stages_f16_accumulators_packed,
     r"not packed two to a column"),
    ("ch09.accumulator_stages", "a pair's 128 rows not halved", stages_pair_of_128_rows_not_halved,
     r"64 rows of C in each CTA"),
    ("ch09.accumulator_stages", "a pair's 256 rows halved", stages_pair_of_256_rows_halved,
     r"256-row MMA leaves 128 rows"),
    ("ch09.accumulator_stages", "m 64 in half the columns", stages_m64_in_half_the_columns,
     r"M=64 accumulator uses 64 of the 128 lanes"),
    ("ch09.accumulator_stages", "k always 16", stages_k_always_16, r"32 bytes of A and B"),
    ("ch09.accumulator_stages", "a pair with the one cta n rule", stages_pair_with_the_one_cta_n_rule,
     r"multiple of 16"),
    ("ch09.accumulator_stages", "m 256 on one cta", stages_m_256_on_one_cta, r"M=256 needs CtaGroup.TWO"),
    ("ch09.accumulator_stages", "m 64 on a pair", stages_m_64_on_a_pair, r"pair's tcgen05.mma has M 128 or 256"),
    ("ch09.accumulator_stages", "zero stages returned", stages_zero_returned, r"not even one accumulator"),
    ("ch09.ab_stages", "a pair's a not halved", ab_pair_a_not_halved, r"half of A's"),
    ("ch09.ab_stages", "a pair's b not halved", ab_pair_b_not_halved, r"half of B's"),
    ("ch09.ab_stages", "one cta halved too", ab_one_cta_halved_too, r"only a CTA pair halves them"),
    ("ch09.ab_stages", "two bytes per element", ab_two_bytes_per_element, r"bytes, not 2"),
    ("ch09.ab_stages", "width in bits as bytes", ab_width_in_bits_as_bytes, r"bits, which is \d bytes"),
    ("ch09.ab_stages", "the sm's 228 kib", ab_sms_228_kib, r"228 KiB is the SM's"),
    ("ch09.ab_stages", "reserved ignored", ab_reserved_ignored, r"reserved bytes share"),
    ("ch09.ab_stages", "reserved per stage", ab_reserved_per_stage, r"held once, not once per stage"),
    ("ch09.ab_stages", "accumulator in shared memory", ab_accumulator_in_shared_memory,
     r"accumulator lives in tensor memory"),
    ("ch09.ab_stages", "instruction k as the k tile", ab_instruction_k_as_the_k_tile, r"whole k-tile"),
    ("ch09.ab_stages", "zero stages returned", ab_zero_returned, r"not one stage of \d+ bytes fits"),
]
