"""Chapter 09 answers: the right one per exercise (CORRECT) and the mistakes learners make (MISTAKES rows
`(exercise_id, mistake, wrong_answer, cause)`, `cause` a regular expression the hint must match)."""
from math import ceil, log2

from cutekit import cute
from cutekit.cute import memory
from cutekit.cute.nvgpu import OperandMajorMode, tcgen05
from cutekit.cute.utils import blackwell_helpers

K = OperandMajorMode.K


# ---- ch09.umma_plan ---------------------------------------------------------------------------------------------

def umma_plan(bm, bn, ab_dtype, acc_dtype, cta_group, acc_stages):
    tiled_mma = blackwell_helpers.make_trivial_tiled_mma(ab_dtype, ab_dtype, K, K, acc_dtype, cta_group, (bm, bn))
    accumulator = tiled_mma.make_fragment_C(tiled_mma.partition_shape_C((bm, bn)))
    return {"instruction": tuple(tiled_mma.op.shape_mnk),
            "tmem_columns": memory.get_num_tmem_alloc_cols([accumulator] * acc_stages)}


def _by_hand(bm, bn, ab_dtype, acc_dtype, cta_group, acc_stages, *, k=None, halve_pair=True, f16_packed=False,
             n_step=None, m_ok=None, rounding="once", minimum=32, limit=True, stages=True):
    """umma_plan from the rules, with one rule bent per keyword."""
    pair = cta_group == tcgen05.CtaGroup.TWO
    if m_ok is None:
        m_ok = bm in ((128, 256) if pair else (64, 128))
    step = n_step or (16 if pair else 8)
    if not m_ok or not (step <= bn <= 256 and bn % step == 0):
        raise ValueError(f"no tcgen05.mma of {bm} x {bn}")
    per = bn // 2 if pair and bm == 128 and halve_pair else bn
    if f16_packed and acc_dtype.width == 16:
        per //= 2
    count = acc_stages if stages else 1
    if rounding == "once":
        columns = max(1 << ceil(log2(per * count)), minimum)
    elif rounding == "each":
        columns = max(1 << ceil(log2(per)), minimum) * count
    else:
        columns = per * count
    if limit and columns > 512:
        raise ValueError(f"{columns} TMEM columns: an SM has 512")
    return {"instruction": (bm, bn, k if k is not None else 256 // ab_dtype.width), "tmem_columns": columns}


def umma_by_hand(bm, bn, ab_dtype, acc_dtype, cta_group, acc_stages):
    return _by_hand(bm, bn, ab_dtype, acc_dtype, cta_group, acc_stages)


def umma_columns_not_rounded(bm, bn, ab_dtype, acc_dtype, cta_group, acc_stages):
    tiled_mma = blackwell_helpers.make_trivial_tiled_mma(ab_dtype, ab_dtype, K, K, acc_dtype, cta_group, (bm, bn))
    accumulator = tiled_mma.make_fragment_C(tiled_mma.partition_shape_C((bm, bn)))
    return {"instruction": tuple(tiled_mma.op.shape_mnk),
            "tmem_columns": tcgen05.find_tmem_tensor_col_offset(accumulator) * acc_stages}


def umma_no_minimum_of_32(bm, bn, ab_dtype, acc_dtype, cta_group, acc_stages):
    return _by_hand(bm, bn, ab_dtype, acc_dtype, cta_group, acc_stages, minimum=1)


def umma_f16_accumulators_packed(bm, bn, ab_dtype, acc_dtype, cta_group, acc_stages):
    return _by_hand(bm, bn, ab_dtype, acc_dtype, cta_group, acc_stages, f16_packed=True)


def umma_k_always_16(bm, bn, ab_dtype, acc_dtype, cta_group, acc_stages):
    return _by_hand(bm, bn, ab_dtype, acc_dtype, cta_group, acc_stages, k=16)


def umma_pair_of_128_rows_not_halved(bm, bn, ab_dtype, acc_dtype, cta_group, acc_stages):
    return _by_hand(bm, bn, ab_dtype, acc_dtype, cta_group, acc_stages, halve_pair=False)


def umma_one_accumulator_stage(bm, bn, ab_dtype, acc_dtype, cta_group, acc_stages):
    tiled_mma = blackwell_helpers.make_trivial_tiled_mma(ab_dtype, ab_dtype, K, K, acc_dtype, cta_group, (bm, bn))
    accumulator = tiled_mma.make_fragment_C(tiled_mma.partition_shape_C((bm, bn)))
    return {"instruction": tuple(tiled_mma.op.shape_mnk),
            "tmem_columns": memory.get_num_tmem_alloc_cols(accumulator)}


def umma_each_stage_rounded(bm, bn, ab_dtype, acc_dtype, cta_group, acc_stages):
    tiled_mma = blackwell_helpers.make_trivial_tiled_mma(ab_dtype, ab_dtype, K, K, acc_dtype, cta_group, (bm, bn))
    accumulator = tiled_mma.make_fragment_C(tiled_mma.partition_shape_C((bm, bn)))
    return {"instruction": tuple(tiled_mma.op.shape_mnk),
            "tmem_columns": memory.get_num_tmem_alloc_cols(accumulator) * acc_stages}


def umma_more_than_512_columns(bm, bn, ab_dtype, acc_dtype, cta_group, acc_stages):
    return _by_hand(bm, bn, ab_dtype, acc_dtype, cta_group, acc_stages, limit=False)


def umma_pair_with_the_one_cta_n_rule(bm, bn, ab_dtype, acc_dtype, cta_group, acc_stages):
    return _by_hand(bm, bn, ab_dtype, acc_dtype, cta_group, acc_stages, n_step=8)


def umma_m_256_on_one_cta(bm, bn, ab_dtype, acc_dtype, cta_group, acc_stages):
    return _by_hand(bm, bn, ab_dtype, acc_dtype, cta_group, acc_stages, m_ok=bm in (64, 128, 256))


# ---- ch09.operand_smem ------------------------------------------------------------------------------------------

def _smem(bm, bn, bk, dtype, major, cta_group, stages, *, tiler=None, group=None, swap=False, b_with_a=False):
    mode = getattr(OperandMajorMode, ("MN" if major == "K" else "K") if swap else major)
    acc = cute.Int32 if dtype.width == 8 else cute.Float32
    tile = tiler or (bm, bn, bk)
    tiled_mma = blackwell_helpers.make_trivial_tiled_mma(dtype, dtype, mode, mode, acc, group or cta_group, tile[:2])
    make_b = blackwell_helpers.make_smem_layout_a if b_with_a else blackwell_helpers.make_smem_layout_b
    return (blackwell_helpers.make_smem_layout_a(tiled_mma, tile, dtype, stages),
            make_b(tiled_mma, tile, dtype, stages))


def operand_smem(bm, bn, bk, dtype, major, cta_group, stages):
    mode = OperandMajorMode.K if major == "K" else OperandMajorMode.MN
    acc = cute.Int32 if dtype.width == 8 else cute.Float32
    tiled_mma = blackwell_helpers.make_trivial_tiled_mma(dtype, dtype, mode, mode, acc, cta_group, (bm, bn))
    return (blackwell_helpers.make_smem_layout_a(tiled_mma, (bm, bn, bk), dtype, stages),
            blackwell_helpers.make_smem_layout_b(tiled_mma, (bm, bn, bk), dtype, stages))


def smem_per_cta_rows_as_the_tile(bm, bn, bk, dtype, major, cta_group, stages):
    pair = 2 if cta_group == tcgen05.CtaGroup.TWO else 1
    return _smem(bm, bn, bk, dtype, major, cta_group, stages, tiler=(bm // pair, bn, bk))


def smem_b_halved_by_hand(bm, bn, bk, dtype, major, cta_group, stages):
    pair = 2 if cta_group == tcgen05.CtaGroup.TWO else 1
    return _smem(bm, bn, bk, dtype, major, cta_group, stages, tiler=(bm, bn // pair, bk))


def smem_always_one_cta(bm, bn, bk, dtype, major, cta_group, stages):
    return _smem(bm, bn, bk, dtype, major, cta_group, stages, group=tcgen05.CtaGroup.ONE)


def smem_major_swapped(bm, bn, bk, dtype, major, cta_group, stages):
    return _smem(bm, bn, bk, dtype, major, cta_group, stages, swap=True)


def smem_b_with_as_helper(bm, bn, bk, dtype, major, cta_group, stages):
    return _smem(bm, bn, bk, dtype, major, cta_group, stages, b_with_a=True)


def smem_one_stage(bm, bn, bk, dtype, major, cta_group, stages):
    return _smem(bm, bn, bk, dtype, major, cta_group, 1)


def smem_instruction_k_as_the_k_tile(bm, bn, bk, dtype, major, cta_group, stages):
    return _smem(bm, bn, bk, dtype, major, cta_group, stages, tiler=(bm, bn, 256 // dtype.width))


CORRECT = {
    "ch09.umma_plan": umma_plan,
    "ch09.operand_smem": operand_smem,
}

MISTAKES = [
    ("ch09.umma_plan", "columns not rounded to a power of two", umma_columns_not_rounded, r"power of two"),
    ("ch09.umma_plan", "no minimum of 32 columns", umma_no_minimum_of_32, r"at least 32 columns"),
    ("ch09.umma_plan", "fp16 accumulators packed two to a column", umma_f16_accumulators_packed,
     r"not packed two to a column"),
    ("ch09.umma_plan", "k always 16", umma_k_always_16, r"32 bytes of A and B"),
    ("ch09.umma_plan", "a pair's 128 rows not halved", umma_pair_of_128_rows_not_halved, r"64 rows of C in each CTA"),
    ("ch09.umma_plan", "one accumulator stage", umma_one_accumulator_stage, r"count all of them before rounding"),
    ("ch09.umma_plan", "each stage rounded", umma_each_stage_rounded, r"round the sum once"),
    ("ch09.umma_plan", "more than 512 columns", umma_more_than_512_columns, r"512 TMEM columns"),
    ("ch09.umma_plan", "a pair with the one cta n rule", umma_pair_with_the_one_cta_n_rule, r"multiple of 16"),
    ("ch09.umma_plan", "m 256 on one cta", umma_m_256_on_one_cta, r"M=256 needs CtaGroup.TWO"),
    ("ch09.operand_smem", "per cta rows as the tile", smem_per_cta_rows_as_the_tile, r"halved twice"),
    ("ch09.operand_smem", "b halved by hand", smem_b_halved_by_hand, r"halved bn in the tiler"),
    ("ch09.operand_smem", "always one cta", smem_always_one_cta, r"made for CtaGroup.ONE"),
    ("ch09.operand_smem", "major swapped", smem_major_swapped, r"other major mode"),
    ("ch09.operand_smem", "b with a's helper", smem_b_with_as_helper, r"made by make_smem_layout_a"),
    ("ch09.operand_smem", "one stage", smem_one_stage, r"hold 1 stage"),
    ("ch09.operand_smem", "instruction k as the k tile", smem_instruction_k_as_the_k_tile, r"one instruction's K"),
]
