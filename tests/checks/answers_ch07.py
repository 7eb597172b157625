"""Chapter 07 answers: the right one per exercise (CORRECT) and the mistakes learners make (MISTAKES rows
`(exercise_id, mistake, wrong_answer, cause)`, `cause` a regular expression the hint must match).

The main-loop answers import `cutlass` when they run, so they meet whatever `cutekit.use(...)` installed (the
check installs the simulator)."""
from cutekit import cute


def fp16_atom(accumulator=cute.Float32, shape=(16, 8, 16)):
    return cute.nvgpu.warp.MmaF16BF16Op(cute.Float16, accumulator, shape)


# ---- ch07.tiled_mma: warps numbered N-fastest, 16 rows and two n8 atoms per warp ----------------------------

def tiled_mma_for(warps_m, warps_n):
    return cute.make_tiled_mma(fp16_atom(), cute.make_layout((warps_m, warps_n, 1), stride=(warps_n, 1, 0)),
                               permutation_mnk=(16 * warps_m, 16 * warps_n, 16))


def mma_warps_m_fastest(warps_m, warps_n):
    """the worked example's warp order (make_layout's default, column-major)"""
    return cute.make_tiled_mma(fp16_atom(), cute.make_layout((warps_m, warps_n, 1)),
                               permutation_mnk=(16 * warps_m, 16 * warps_n, 16))


def mma_warps_shape_swapped(warps_m, warps_n):
    return cute.make_tiled_mma(fp16_atom(), cute.make_layout((warps_n, warps_m, 1), stride=(warps_m, 1, 0)),
                               permutation_mnk=(16 * warps_n, 16 * warps_m, 16))


def mma_without_permutation(warps_m, warps_n):
    return cute.make_tiled_mma(fp16_atom(), cute.make_layout((warps_m, warps_n, 1), stride=(warps_n, 1, 0)))


def mma_permutation_doubled(warps_m, warps_n):
    """two n8 atoms per warp counted twice: four per warp"""
    return cute.make_tiled_mma(fp16_atom(), cute.make_layout((warps_m, warps_n, 1), stride=(warps_n, 1, 0)),
                               permutation_mnk=(16 * warps_m, 32 * warps_n, 16))


def mma_permutation_in_m(warps_m, warps_n):
    """the second atom put below the first (two m16 atoms) instead of beside it"""
    return cute.make_tiled_mma(fp16_atom(), cute.make_layout((warps_m, warps_n, 1), stride=(warps_n, 1, 0)),
                               permutation_mnk=(32 * warps_m, 8 * warps_n, 16))


def mma_accumulates_in_fp16(warps_m, warps_n):
    return cute.make_tiled_mma(fp16_atom(cute.Float16), cute.make_layout((warps_m, warps_n, 1), stride=(warps_n, 1, 0)),
                               permutation_mnk=(16 * warps_m, 16 * warps_n, 16))


def mma_hard_coded_worked_example(warps_m, warps_n):
    return cute.make_tiled_mma(fp16_atom(), cute.make_layout((2, 2, 1)), permutation_mnk=(32, 32, 16))


def mma_returns_the_atom(warps_m, warps_n):
    return fp16_atom()


# ---- ch07.swizzle ----------------------------------------------------------------------------------------------

def swizzle_for(row_elements, element_bits):
    vector = 128 // element_bits
    M = vector.bit_length() - 1
    B = min(row_elements // vector, 8).bit_length() - 1
    line = max(row_elements, 1024 // element_bits)
    return (B, M, line.bit_length() - 1 - M)


def swizzle_none(row_elements, element_bits):
    _, m, s = swizzle_for(row_elements, element_bits)
    return (0, m, s)


def swizzle_hard_coded_kernel(row_elements, element_bits):
    return (3, 3, 3)


def swizzle_assumes_fp16_vectors(row_elements, element_bits):
    b, _, s = swizzle_for(row_elements, element_bits)
    return (b, 3, s)


def swizzle_s_one_too_high(row_elements, element_bits):
    b, m, s = swizzle_for(row_elements, element_bits)
    return (b, m, s + 1)


def swizzle_s_one_too_low(row_elements, element_bits):
    b, m, s = swizzle_for(row_elements, element_bits)
    return (b, m, s - 1)


def swizzle_ignores_short_rows(row_elements, element_bits):
    """S from the row's first bit even when several rows share a 128-byte line"""
    b, m, _ = swizzle_for(row_elements, element_bits)
    return (b, m, row_elements.bit_length() - 1 - m)


def swizzle_b_one_too_few(row_elements, element_bits):
    b, m, s = swizzle_for(row_elements, element_bits)
    return (b - 1, m, s)


def swizzle_m_one_too_few(row_elements, element_bits):
    b, m, s = swizzle_for(row_elements, element_bits)
    return (b, m - 1, s + 1)


# ---- ch07.pipeline_stages ----------------------------------------------------------------------------------------

def schedule(k_tiles, stages):
    plan = []
    for k_tile in range(k_tiles):
        upcoming = k_tile + stages - 1
        plan.append((k_tile % stages, upcoming % stages, upcoming) if upcoming < k_tiles else (k_tile % stages, None, None))
    return plan


def schedule_reads_modulo_stages_minus_one(k_tiles, stages):
    return [((k % (stages - 1)) if stages > 1 else 0, w, k_loaded) for k, (_, w, k_loaded) in
            enumerate(schedule(k_tiles, stages))]


def schedule_refills_the_stage_it_reads(k_tiles, stages):
    return [(r, None if w is None else r, k) for r, w, k in schedule(k_tiles, stages)]


def schedule_refills_the_next_stage(k_tiles, stages):
    return [(r, None if w is None else (r + 1) % stages, k) for r, w, k in schedule(k_tiles, stages)]


def schedule_loads_one_k_tile_too_far(k_tiles, stages):
    plan = []
    for k_tile in range(k_tiles):
        upcoming = k_tile + stages
        plan.append((k_tile % stages, (k_tile - 1) % stages, upcoming) if upcoming < k_tiles else (k_tile % stages, None, None))
    return plan


def schedule_loads_one_k_tile_too_near(k_tiles, stages):
    """k + stages - 2: the k-tile already in flight, loaded again"""
    plan = []
    for k_tile in range(k_tiles):
        upcoming = k_tile + stages - 2
        plan.append((k_tile % stages, (k_tile - 1) % stages, upcoming) if upcoming < k_tiles else (k_tile % stages, None, None))
    return plan


def schedule_loads_past_the_end(k_tiles, stages):
    return [(k % stages, (k + stages - 1) % stages, k + stages - 1) for k in range(k_tiles)]


def schedule_stops_one_k_tile_early(k_tiles, stages):
    return [(r, w, k) if k is not None and k < k_tiles - 1 else (r, None, None) for r, w, k in schedule(k_tiles, stages)]


def schedule_hard_coded_three_stages(k_tiles, stages):
    return schedule(k_tiles, 3)


# ---- ch07.s2r_copy: ldmatrix x4, transposed for an M- or N-major tile ---------------------------------------------

def ldmatrix_atom(transpose=False, matrices=4):
    return cute.make_copy_atom(cute.nvgpu.warp.LdMatrix8x8x16bOp(transpose, matrices), cute.Float16)


def _tiled(operand):
    return cute.make_tiled_copy_A if operand == "A" else cute.make_tiled_copy_B


def s2r_copy(tiled_mma, operand, major):
    return _tiled(operand)(ldmatrix_atom(transpose=major == "MN"), tiled_mma)


def s2r_never_transposed(tiled_mma, operand, major):
    return _tiled(operand)(ldmatrix_atom(), tiled_mma)


def s2r_always_transposed(tiled_mma, operand, major):
    return _tiled(operand)(ldmatrix_atom(transpose=True), tiled_mma)


def s2r_transposed_for_the_k_major_tile(tiled_mma, operand, major):
    return _tiled(operand)(ldmatrix_atom(transpose=major == "K"), tiled_mma)


def s2r_transposed_for_operand_B(tiled_mma, operand, major):
    """transposed by operand (B) instead of by the tile's major mode"""
    return _tiled(operand)(ldmatrix_atom(transpose=operand == "B"), tiled_mma)


def s2r_always_operand_A(tiled_mma, operand, major):
    return cute.make_tiled_copy_A(ldmatrix_atom(transpose=major == "MN"), tiled_mma)


def s2r_operands_swapped(tiled_mma, operand, major):
    return s2r_copy(tiled_mma, "B" if operand == "A" else "A", major)


def s2r_two_matrices(tiled_mma, operand, major):
    return _tiled(operand)(ldmatrix_atom(transpose=major == "MN", matrices=2), tiled_mma)


def s2r_plain_copy_not_ldmatrix(tiled_mma, operand, major):
    return _tiled(operand)(cute.make_copy_atom(cute.nvgpu.CopyUniversalOp(), cute.Float16), tiled_mma)


def s2r_returns_the_mma(tiled_mma, operand, major):
    return tiled_mma


# ---- ch07.main_loop ------------------------------------------------------------------------------------------------

LOOP_MISTAKES = ("no_barrier_before_reading", "no_barrier_before_the_next_copy", "no_wait_for_the_copies",
                 "no_commit_group", "only_the_first_k_tile", "skips_k_tile_zero", "loads_the_next_k_tile",
                 "only_the_first_k_block", "multiplies_k_block_zero_every_time", "never_loads_A", "never_loads_B",
                 "copies_into_the_mma_fragment")


def main_loop_with(mistake=""):
    """The main loop of a single-stage tensor-core GEMM, with `mistake` (one of LOOP_MISTAKES) planted, or none
    ("": a plain string, so that the loop moved by source to real CuTeDSL carries it as a constant)."""
    def main_loop(tiled_mma, g2s, s2r_A, s2r_B, parts, accumulators):
        import cutlass
        import cutlass.cute as cute
        k_tiles = 1 if mistake == "only_the_first_k_tile" else cute.size(parts.tAgA, mode=[3])
        k_blocks = 1 if mistake == "only_the_first_k_block" else cute.size(parts.tCrA, mode=[2])
        first = 1 if mistake == "skips_k_tile_zero" else 0
        for k_tile in range(first, k_tiles):
            loaded = min(k_tile + 1, k_tiles - 1) if mistake == "loads_the_next_k_tile" else k_tile
            cute.copy(g2s, parts.tAgA[None, None, None, loaded], parts.tAsA)
            cute.copy(g2s, parts.tBgB[None, None, None, loaded], parts.tBsB)
            if mistake != "no_commit_group":
                cute.arch.cp_async_commit_group()
            if mistake != "no_wait_for_the_copies":
                cute.arch.cp_async_wait_group(0)
            if mistake != "no_barrier_before_reading":
                cute.arch.sync_threads()
            into_A = parts.tCrA if mistake == "copies_into_the_mma_fragment" else parts.tXrA
            into_B = parts.tCrB if mistake == "copies_into_the_mma_fragment" else parts.tXrB
            for kb in cutlass.range_constexpr(k_blocks):
                if mistake != "never_loads_A":
                    cute.copy(s2r_A, parts.tXsA[None, None, kb], into_A[None, None, kb])
                if mistake != "never_loads_B":
                    cute.copy(s2r_B, parts.tXsB[None, None, kb], into_B[None, None, kb])
                used = 0 if mistake == "multiplies_k_block_zero_every_time" else kb
                cute.gemm(tiled_mma, accumulators, parts.tCrA[None, None, used], parts.tCrB[None, None, used],
                          accumulators)
            if mistake != "no_barrier_before_the_next_copy":
                cute.arch.sync_threads()
        if mistake == "no_wait_for_the_copies":
            cute.arch.cp_async_wait_group(0)
    main_loop.__name__ = f"main_loop_{mistake}" if mistake else "main_loop"
    return main_loop


LOOP_CAUSES = {
    "no_barrier_before_reading": r"sync_threads\(\) after the wait",
    "no_barrier_before_the_next_copy": r"sync_threads\(\) at the end of (each|the) k-tile",
    "no_wait_for_the_copies": r"cp_async_wait_group",
    "no_commit_group": r"cp_async_commit_group",
    "only_the_first_k_tile": r"only k-tile 0|k-tile 1 .*never",
    "skips_k_tile_zero": r"k-tile 0 never",
    "loads_the_next_k_tile": r"twice.*never|off by one",
    "only_the_first_k_block": r"k-block 1 never|only k-block 0",
    "multiplies_k_block_zero_every_time": r"k-block 0 twice",
    "never_loads_A": r"A fragment .*never loaded",
    "never_loads_B": r"B fragment .*never loaded",
    "copies_into_the_mma_fragment": r"retile",
}


# ---- the tables ------------------------------------------------------------------------------------------------

CORRECT = {"ch07.tiled_mma": tiled_mma_for, "ch07.swizzle": swizzle_for, "ch07.pipeline_stages": schedule,
           "ch07.s2r_copy": s2r_copy, "ch07.main_loop": main_loop_with()}

MISTAKES = [
    ("ch07.tiled_mma", "warps_m_fastest", mma_warps_m_fastest, r"M-fastest"),
    ("ch07.tiled_mma", "warps_shape_swapped", mma_warps_shape_swapped, r"warps_n x warps_m"),
    ("ch07.tiled_mma", "permutation_omitted", mma_without_permutation, r"permutation_mnk"),
    ("ch07.tiled_mma", "permutation_doubled", mma_permutation_doubled, r"permutation_mnk"),
    ("ch07.tiled_mma", "second_atom_in_m", mma_permutation_in_m, r"permutation_mnk"),
    ("ch07.tiled_mma", "accumulates_in_fp16", mma_accumulates_in_fp16, r"fp32 accumulators"),
    ("ch07.tiled_mma", "hard_coded_worked_example", mma_hard_coded_worked_example, r"asks for \d+x\d+ warps"),
    ("ch07.tiled_mma", "returns_the_atom", mma_returns_the_atom, r"expected a TiledMMA"),
    ("ch07.swizzle", "no_swizzle", swizzle_none, r"\bB = 0\b"),
    ("ch07.swizzle", "hard_coded_kernel_swizzle", swizzle_hard_coded_kernel, r"section 4's answer"),
    ("ch07.swizzle", "assumes_fp16_vectors", swizzle_assumes_fp16_vectors, r"\bM = 3\b.*16-byte chunk"),
    ("ch07.swizzle", "s_one_too_high", swizzle_s_one_too_high, r"\bS = \d+\b"),
    ("ch07.swizzle", "s_one_too_low", swizzle_s_one_too_low, r"\bS = \d+\b"),
    ("ch07.swizzle", "ignores_short_rows", swizzle_ignores_short_rows, r"\bS = \d+\b.*128-byte line"),
    ("ch07.swizzle", "b_one_too_few", swizzle_b_one_too_few, r"\bB = \d+\b"),
    ("ch07.swizzle", "m_one_too_few", swizzle_m_one_too_few, r"\bM = \d+\b"),
    ("ch07.pipeline_stages", "reads_modulo_stages_minus_one", schedule_reads_modulo_stages_minus_one,
     r"reads stage \d+, which holds"),
    ("ch07.pipeline_stages", "refills_the_stage_it_reads", schedule_refills_the_stage_it_reads,
     r"refills stage \d+ while it multiplies from it"),
    ("ch07.pipeline_stages", "refills_the_next_stage", schedule_refills_the_next_stage,
     r"still holds k-tile \d+ that has not been multiplied"),
    ("ch07.pipeline_stages", "loads_one_k_tile_too_far", schedule_loads_one_k_tile_too_far,
     r"stages - 1 ahead of the one it multiplies"),
    ("ch07.pipeline_stages", "loads_one_k_tile_too_near", schedule_loads_one_k_tile_too_near,
     r"stages - 1 ahead of the one it multiplies"),
    ("ch07.pipeline_stages", "loads_past_the_end", schedule_loads_past_the_end, r"does not exist"),
    ("ch07.pipeline_stages", "stops_one_k_tile_early", schedule_stops_one_k_tile_early, r"never loaded"),
    ("ch07.pipeline_stages", "hard_coded_three_stages", schedule_hard_coded_three_stages, r"stages"),
    ("ch07.s2r_copy", "never_transposed", s2r_never_transposed, r"MN-major tile needs the transposed"),
    ("ch07.s2r_copy", "always_transposed", s2r_always_transposed, r"K-major tile needs the plain"),
    ("ch07.s2r_copy", "transposed_for_the_k_major_tile", s2r_transposed_for_the_k_major_tile,
     r"-major tile needs the (plain|transposed)"),
    ("ch07.s2r_copy", "transposed_for_operand_b", s2r_transposed_for_operand_B,
     r"-major tile needs the (plain|transposed)"),
    ("ch07.s2r_copy", "always_operand_a", s2r_always_operand_A, r"make_tiled_copy_B"),
    ("ch07.s2r_copy", "operands_swapped", s2r_operands_swapped, r"make_tiled_copy_[AB]"),
    ("ch07.s2r_copy", "two_matrices", s2r_two_matrices, r"four 8x8 matrices"),
    ("ch07.s2r_copy", "plain_copy_not_ldmatrix", s2r_plain_copy_not_ldmatrix, r"ldmatrix"),
    ("ch07.s2r_copy", "returns_the_mma", s2r_returns_the_mma, r"expected a TiledCopy"),
] + [("ch07.main_loop", mistake, main_loop_with(mistake), cause) for mistake, cause in LOOP_CAUSES.items()]

KERNEL_EXERCISES = ("ch07.s2r_copy", "ch07.main_loop")      # simulated per case: a few seeds, not 100
