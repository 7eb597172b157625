"""Chapter 07 answers: the right one per exercise (CORRECT) and the mistakes learners make (MISTAKES rows
`(exercise_id, mistake, wrong_answer, cause)`, `cause` a regular expression the hint must match); for the
capstone also right but slow kernels (CAPSTONE_SLOW), whose PTX the check reads.

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


# ---- ch07.pipeline_stages: schedule(k_tiles, stages, ahead), a ring that may keep fewer k-tiles in flight ------

def schedule(k_tiles, stages, ahead):
    plan = []
    for k_tile in range(k_tiles):
        upcoming = k_tile + ahead
        plan.append((k_tile % stages, upcoming % stages, upcoming) if upcoming < k_tiles else (k_tile % stages, None, None))
    return plan


def schedule_copies_section_6_refill(k_tiles, stages, ahead):
    """section 6's bookkeeping with `ahead` put in: each refill into the stage read in the iteration before"""
    plan, read_stage, write_stage = [], 0, stages - 1
    for k_tile in range(k_tiles):
        upcoming = k_tile + ahead
        plan.append((read_stage, write_stage, upcoming) if upcoming < k_tiles else (read_stage, None, None))
        write_stage, read_stage = read_stage, (read_stage + 1) % stages
    return plan


def schedule_ignores_ahead(k_tiles, stages, ahead):
    """section 6's schedule, stages - 1 ahead, whatever `ahead` says"""
    return schedule(k_tiles, stages, stages - 1)


def schedule_ring_of_ahead_stages(k_tiles, stages, ahead):
    """the ring taken to have `ahead` stages"""
    return [(k % ahead, None if w is None else (k + ahead) % ahead, loaded)
            for k, (_, w, loaded) in enumerate(schedule(k_tiles, stages, ahead))]


def schedule_refills_the_stage_it_reads(k_tiles, stages, ahead):
    return [(r, None if w is None else r, k) for r, w, k in schedule(k_tiles, stages, ahead)]


def schedule_refills_the_stage_of_the_newest_k_tile(k_tiles, stages, ahead):
    """one stage short round the ring: onto the k-tile loaded in the iteration before, not yet multiplied"""
    return [(r, None if w is None else (w - 1) % stages, k) for r, w, k in schedule(k_tiles, stages, ahead)]


def schedule_loads_one_k_tile_too_far(k_tiles, stages, ahead):
    plan = schedule(k_tiles, stages, ahead)
    return [(r, w, None if k is None else k + 1) if k is not None and k + 1 < k_tiles else (r, None, None)
            for r, w, k in plan]


def schedule_loads_one_k_tile_too_near(k_tiles, stages, ahead):
    """k + ahead - 1: the k-tile already in flight, loaded again"""
    return [(r, w, None if k is None else k - 1) for r, w, k in schedule(k_tiles, stages, ahead)]


def schedule_loads_past_the_end(k_tiles, stages, ahead):
    return [(k % stages, (k + ahead) % stages, k + ahead) for k in range(k_tiles)]


def schedule_stops_one_k_tile_early(k_tiles, stages, ahead):
    return [(r, w, k) if k is not None and k < k_tiles - 1 else (r, None, None)
            for r, w, k in schedule(k_tiles, stages, ahead)]


def schedule_hard_coded_example_ring(k_tiles, stages, ahead):
    return schedule(k_tiles, 4, 2)


# ---- ch07.s2r_copy: the largest ldmatrix that fits, transposed for an M- or N-major tile ---------------------------

def ldmatrix_atom(transpose=False, matrices=4):
    return cute.make_copy_atom(cute.nvgpu.warp.LdMatrix8x8x16bOp(transpose, matrices), cute.Float16)


def _tiled(operand):
    return cute.make_tiled_copy_A if operand == "A" else cute.make_tiled_copy_B


def _warp_n(tiled_mma):
    return tiled_mma.get_tile_size(1) // cute.size(tiled_mma.thr_layout_vmnk, mode=[2])


def _matrices(tiled_mma, operand):
    return 4 if operand == "A" or _warp_n(tiled_mma) % 16 == 0 else 2


def s2r_copy(tiled_mma, operand, major):
    return _tiled(operand)(ldmatrix_atom(major == "MN", _matrices(tiled_mma, operand)), tiled_mma)


def s2r_copy_from_the_value_modes(tiled_mma, operand, major):
    """chapter 06 section 7's rule read off the TV layout: B's values per thread are (4, n8 atoms, k-blocks)"""
    values = cute.size(tiled_mma.tv_layout_A_tiled if operand == "A" else tiled_mma.tv_layout_B_tiled, mode=[1])
    matrices = 4 if operand == "A" or (values // 4) % 2 == 0 else 2
    return _tiled(operand)(ldmatrix_atom(major == "MN", matrices), tiled_mma)


def s2r_always_x4(tiled_mma, operand, major):
    """section 5's copy: x4 whatever the TiledMMA"""
    return _tiled(operand)(ldmatrix_atom(major == "MN", 4), tiled_mma)


def s2r_always_x2(tiled_mma, operand, major):
    return _tiled(operand)(ldmatrix_atom(major == "MN", 2), tiled_mma)


def s2r_always_x1(tiled_mma, operand, major):
    return _tiled(operand)(ldmatrix_atom(major == "MN", 1), tiled_mma)


def s2r_x2_for_every_B(tiled_mma, operand, major):
    return _tiled(operand)(ldmatrix_atom(major == "MN", 4 if operand == "A" else 2), tiled_mma)


def s2r_x4_when_eight_values_or_more(tiled_mma, operand, major):
    """enough values for an x4 taken for a fit: three atoms hold 12 values of B, but 8 consecutive ones would
    straddle the atoms"""
    values = cute.size(tiled_mma.tv_layout_A_tiled if operand == "A" else tiled_mma.tv_layout_B_tiled, mode=[1])
    return _tiled(operand)(ldmatrix_atom(major == "MN", min(4, values // 2)), tiled_mma)


def s2r_the_whole_tiles_n(tiled_mma, operand, major):
    """the TiledMMA's N, not one warp's"""
    matrices = 4 if operand == "A" or tiled_mma.get_tile_size(1) % 16 == 0 else 2
    return _tiled(operand)(ldmatrix_atom(major == "MN", matrices), tiled_mma)


def s2r_divides_by_warps_m(tiled_mma, operand, major):
    warp_n = tiled_mma.get_tile_size(1) // cute.size(tiled_mma.thr_layout_vmnk, mode=[1])
    matrices = 4 if operand == "A" or warp_n % 16 == 0 else 2
    return _tiled(operand)(ldmatrix_atom(major == "MN", matrices), tiled_mma)


def s2r_never_transposed(tiled_mma, operand, major):
    return _tiled(operand)(ldmatrix_atom(False, _matrices(tiled_mma, operand)), tiled_mma)


def s2r_always_transposed(tiled_mma, operand, major):
    return _tiled(operand)(ldmatrix_atom(True, _matrices(tiled_mma, operand)), tiled_mma)


def s2r_transposed_for_the_k_major_tile(tiled_mma, operand, major):
    return _tiled(operand)(ldmatrix_atom(major == "K", _matrices(tiled_mma, operand)), tiled_mma)


def s2r_transposed_for_operand_B(tiled_mma, operand, major):
    """transposed by operand (B) instead of by the tile's major mode"""
    return _tiled(operand)(ldmatrix_atom(operand == "B", _matrices(tiled_mma, operand)), tiled_mma)


def s2r_always_operand_A(tiled_mma, operand, major):
    return cute.make_tiled_copy_A(ldmatrix_atom(major == "MN", _matrices(tiled_mma, operand)), tiled_mma)


def s2r_operands_swapped(tiled_mma, operand, major):
    return s2r_copy(tiled_mma, "B" if operand == "A" else "A", major)


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
    ("ch07.pipeline_stages", "copies_section_6_refill", schedule_copies_section_6_refill,
     r"refill went into the stage read in the iteration before"),
    ("ch07.pipeline_stages", "ignores_ahead", schedule_ignores_ahead, r"section 6's schedule, stages - 1 = \d+"),
    ("ch07.pipeline_stages", "ring_of_ahead_stages", schedule_ring_of_ahead_stages,
     r"refills stage \d+ while it multiplies from it|ring of \d+ stages"),
    ("ch07.pipeline_stages", "refills_the_stage_it_reads", schedule_refills_the_stage_it_reads,
     r"refills stage \d+ while it multiplies from it"),
    ("ch07.pipeline_stages", "refills_the_stage_of_the_newest_k_tile", schedule_refills_the_stage_of_the_newest_k_tile,
     r"still holds k-tile \d+ that has not been multiplied|refills stage \d+ while it multiplies from it"),
    ("ch07.pipeline_stages", "loads_one_k_tile_too_far", schedule_loads_one_k_tile_too_far,
     r"loads the k-tile `ahead` = \d+ after the one it multiplies|k-tile \d+ is never loaded"),
    ("ch07.pipeline_stages", "loads_one_k_tile_too_near", schedule_loads_one_k_tile_too_near,
     r"loads the k-tile `ahead` = \d+ after the one it multiplies"),
    ("ch07.pipeline_stages", "loads_past_the_end", schedule_loads_past_the_end, r"does not exist"),
    ("ch07.pipeline_stages", "stops_one_k_tile_early", schedule_stops_one_k_tile_early, r"never loaded"),
    ("ch07.pipeline_stages", "hard_coded_example_ring", schedule_hard_coded_example_ring,
     r"the example's ring, 4 stages and 2 ahead"),
    ("ch07.s2r_copy", "always_x4", s2r_always_x4, r"does not fit B here: with 1 n8 atom per warp"),
    ("ch07.s2r_copy", "always_x2", s2r_always_x2, r"a larger one fits A of m16n8k16"),
    ("ch07.s2r_copy", "always_x1", s2r_always_x1, r"loads 1 8x8 matrices per instruction, but a larger one fits"),
    ("ch07.s2r_copy", "x2_for_every_b", s2r_x2_for_every_B, r"a larger one fits B here, 2 n8 atoms per warp"),
    ("ch07.s2r_copy", "x4_when_eight_values_or_more", s2r_x4_when_eight_values_or_more,
     r"does not fit B here: with 3 n8 atoms per warp"),
    ("ch07.s2r_copy", "the_whole_tiles_n", s2r_the_whole_tiles_n, r"does not fit B here: with 1 n8 atom per warp"),
    ("ch07.s2r_copy", "divides_by_warps_m", s2r_divides_by_warps_m, r"does not fit B here: with 1 n8 atom per warp"),
    ("ch07.s2r_copy", "never_transposed", s2r_never_transposed, r"MN-major tile needs the transposed"),
    ("ch07.s2r_copy", "always_transposed", s2r_always_transposed, r"K-major tile needs the plain"),
    ("ch07.s2r_copy", "transposed_for_the_k_major_tile", s2r_transposed_for_the_k_major_tile,
     r"(MN|K)-major tile needs the (transposed|plain)"),
    ("ch07.s2r_copy", "transposed_for_operand_b", s2r_transposed_for_operand_B,
     r"(MN|K)-major tile needs the (transposed|plain)"),
    ("ch07.s2r_copy", "always_operand_a", s2r_always_operand_A, r"make_tiled_copy_B"),
    ("ch07.s2r_copy", "operands_swapped", s2r_operands_swapped, r"make_tiled_copy_[AB]"),
    ("ch07.s2r_copy", "plain_copy_not_ldmatrix", s2r_plain_copy_not_ldmatrix, r"ldmatrix"),
    ("ch07.s2r_copy", "returns_the_mma", s2r_returns_the_mma, r"expected a TiledCopy"),
] + [("ch07.main_loop", mistake, main_loop_with(mistake), cause) for mistake, cause in LOOP_CAUSES.items()]

KERNEL_EXERCISES = ("ch07.s2r_copy", "ch07.main_loop")      # simulated per case: a few seeds, not 100


# ---- ch07.capstone_gemm: the chapter's model answer, with one mistake planted in each copy ------------------------
#
# Each wrong kernel is the solved chapter's GEMM (solutions/07_sgemm.py) with some of its lines replaced, so the
# table stays in step with the model answer: a replacement whose line is gone fails loudly. They are imported
# from real files (CuTeDSL and the simulator read source) with the simulator as `cutlass`.

def _skipped_by_if(operand: str, k_tile: str, stage: str) -> str:
    """The predicated copy of one operand rewritten CUDA-style: each 16-byte copy issued only where its
    predicate holds, so a vector past K is not copied at all (instead of zero-filled)."""
    x, pad = operand, " " * 12
    return (f"for i in cutlass.range_constexpr(cute.size(p{x}, mode=[1])):\n"
            f"{pad}    for j in cutlass.range_constexpr(cute.size(p{x}, mode=[2])):\n"
            f"{pad}        if p{x}[0, i, j]:\n"
            f"{pad}            cute.copy(g2s_{x}, t{x}g{x}[None, i, j, {k_tile}], t{x}s{x}[None, i, j, {stage}])")


_COPIES = {("A", "stage", "stage"): "cute.copy(g2s_A, tAgA[None, None, None, stage], tAsA[None, None, None, stage], pred=pA)",
           ("B", "stage", "stage"): "cute.copy(g2s_B, tBgB[None, None, None, stage], tBsB[None, None, None, stage], pred=pB)",
           ("A", "next_k_tile", "write_stage"):
               "cute.copy(g2s_A, tAgA[None, None, None, next_k_tile], tAsA[None, None, None, write_stage], pred=pA)",
           ("B", "next_k_tile", "write_stage"):
               "cute.copy(g2s_B, tBgB[None, None, None, next_k_tile], tBsB[None, None, None, write_stage], pred=pB)"}
SKIPPED_BY_IF = [(line, _skipped_by_if(*key)) for key, line in _COPIES.items()]
EPILOGUE_EDGE = ("    else:\n        for i in cutlass.range(cute.size(tCgC), unroll_full=True):\n"
                 "            if cute.elem_less(tCcC[i], mC.shape):\n"
                 "                tCgC[i] = alpha * accumulators[i] + beta * tCgC[i]\n")

# mistake: (the lines it replaces, what the hint must name)
CAPSTONE_MISTAKES = {
    "no_k_predicate": (   # the predicate tests the row only, as chapter 07's kernel of section 7 (K a multiple of 64)
        [("cute.elem_less(coordinates[(0, 0), i, j], shape)", "cute.elem_less(coordinates[(0, 0), i, j][0], shape[0])")],
        r"reads outside A or B.*row and k both"),
    "plain_copy_not_cp_async": (
        [("cute.nvgpu.cpasync.CopyG2SOp(cache_mode=cute.nvgpu.cpasync.LoadCacheMode.GLOBAL)", "cute.nvgpu.CopyUniversalOp()")],
        r"NaN.*no copy had written.*plain copy whose predicate is false"),
    "copies_skipped_by_if": (SKIPPED_BY_IF, r"NaN.*no copy had written.*an `if` skips"),
    "stages_cleared_once_then_copies_skipped": (   # fresh stages hold zeros; a reused one keeps its old k-tile
        [("    k_tiles = cute.size(tAgA, mode=[3])\n",
          "    k_tiles = cute.size(tAgA, mode=[3])\n    tAsA.fill(0.0)\n    tBsB.fill(0.0)\n    cute.arch.sync_threads()\n")]
        + SKIPPED_BY_IF, r"stage still held k-tile \d+"),
    "b_read_as_k_contiguous": (    # the chapter's TN kernel, handed this B
        [("mB_nk = cute.make_tensor(mB.iterator, cute.select(mB.layout, mode=[1, 0]))",
          "mB_nk = cute.make_tensor(mB.iterator, cute.make_layout((cute.size(mB, mode=[1]), cute.size(mB, mode=[0])), "
          "stride=(cute.size(mB, mode=[0]), 1)))"),
         ("b_atom = cute.make_composed_layout(cute.make_swizzle(3, 3, 3), 0, cute.make_layout((64, 8), stride=(1, 64)))",
          "b_atom = a_atom"),
         ("g2s_B = cute.make_tiled_copy_tv(cp_async, cute.make_layout((16, 8), stride=(1, 16)), cute.make_layout((8, 1)))",
          "g2s_B = g2s_A"),
         ("LdMatrix8x8x16bOp(True, 4)", "LdMatrix8x8x16bOp(False, 4)")],
        r"stored \(N, K\), K contiguous.*N contiguous.*transposed ldmatrix"),
    "beta_ignored": (
        [("alpha * accumulators.load() + beta * old.load()", "alpha * accumulators.load()"),
         ("alpha * accumulators[i] + beta * tCgC[i]", "alpha * accumulators[i]")], r"old C was not added"),
    "alpha_applied_twice": (
        [("    cute.arch.cp_async_wait_group(0)\n",
          "    cute.arch.cp_async_wait_group(0)\n    accumulators.store(alpha * accumulators.load())\n")],
        r"alpha was applied twice"),
    "alpha_and_beta_swapped": (
        [("alpha * accumulators.load() + beta * old.load()", "beta * accumulators.load() + alpha * old.load()"),
         ("alpha * accumulators[i] + beta * tCgC[i]", "beta * accumulators[i] + alpha * tCgC[i]")],
        r"alpha and beta are swapped"),
    "edge_tiles_never_stored": ([(EPILOGUE_EDGE, "")], r"no element of C was written|never written"),
    "epilogue_unpredicated": (
        [("if cute.elem_less(cC[BM - 1, BN - 1], mC.shape):", "if True:")], r"epilogue reads or writes C outside"),
    "no_barrier_after_the_wait": ([("        cute.arch.sync_threads()\n", "")], r"no barrier between"),
    "waits_for_one_group_too_few": (
        [("cute.arch.cp_async_wait_group(STAGES - 2)", "cute.arch.cp_async_wait_group(STAGES - 1)")],
        r"still in flight.*the wait left the k-tile about to be read pending"),
    "refills_the_stage_read_next": (
        [("        write_stage = read_stage\n", "        write_stage = (read_stage + 1) % STAGES\n")],
        r"still in flight.*a refill was issued into the stage about to be read"),
    "plain_ldmatrix_for_b": ([("LdMatrix8x8x16bOp(True, 4)", "LdMatrix8x8x16bOp(False, 4)")], r"transposed ldmatrix"),
    "grid_rounds_down": (
        [("cute.ceil_div(cute.size(mC, mode=[0]), BM), cute.ceil_div(cute.size(mC, mode=[1]), BN)",
          "cute.size(mC, mode=[0]) // BM, cute.size(mC, mode=[1]) // BN")], r"rounded up"),
    "unswizzled": (       # right values, but every warp's accesses to the plain tiles pile into a few banks
        [("cute.make_swizzle(2, 3, 3)", "cute.make_swizzle(0, 3, 3)"), ("cute.make_swizzle(3, 3, 3)", "cute.make_swizzle(0, 3, 3)")],
        r"bank conflicts.*swizzle"),
}

# right but slow: C is right (every reference point), the PTX says what is missing
CAPSTONE_SLOW = {
    "single_stage": (   # exercise 5's loop: each k-tile requested and waited for in the same iteration
        [("BM, BN, BK, STAGES = 128, 128, 32, 4", "BM, BN, BK, STAGES = 128, 128, 32, 1"),
         ("""        cute.arch.cp_async_wait_group(STAGES - 2)
        cute.arch.sync_threads()
        if next_k_tile < k_tiles:
            inside(pA, tAcA[None, None, None, next_k_tile], mA.shape)
            inside(pB, tBcB[None, None, None, next_k_tile], mB.shape)
            cute.copy(g2s_A, tAgA[None, None, None, next_k_tile], tAsA[None, None, None, write_stage], pred=pA)
            cute.copy(g2s_B, tBgB[None, None, None, next_k_tile], tBsB[None, None, None, write_stage], pred=pB)
        cute.arch.cp_async_commit_group()
""", """        inside(pA, tAcA[None, None, None, k_tile], mA.shape)
        inside(pB, tBcB[None, None, None, k_tile], mB.shape)
        cute.copy(g2s_A, tAgA[None, None, None, k_tile], tAsA[None, None, None, 0], pred=pA)
        cute.copy(g2s_B, tBgB[None, None, None, k_tile], tBsB[None, None, None, 0], pred=pB)
        cute.arch.cp_async_commit_group()
        cute.arch.cp_async_wait_group(0)
        cute.arch.sync_threads()
"""),
         ("        write_stage = read_stage\n", "        cute.arch.sync_threads()\n")],
        r"no copy is in flight while the tensor cores work"),
    "no_ldmatrix": (
        [("cute.copy(s2r_A, tXsA[None, None, kb, read_stage], tXrA[None, None, kb])",
          "cute.autovec_copy(thr_mma.partition_A(sA)[None, None, kb, read_stage], tCrA[None, None, kb])"),
         ("cute.copy(s2r_B, tXsB[None, None, kb, read_stage], tXrB[None, None, kb])",
          "cute.autovec_copy(thr_mma.partition_B(sB)[None, None, kb, read_stage], tCrB[None, None, kb])")],
        r"no ldmatrix"),
    "cache_mode_always": (
        [("cute.nvgpu.cpasync.LoadCacheMode.GLOBAL", "cute.nvgpu.cpasync.LoadCacheMode.ALWAYS")], r"cp\.async\.ca"),
}


def capstone_source(replacements=()) -> str:
    """The chapter's model answer as a module, with `replacements` made (each line must still be there)."""
    from simulated import solution_code
    code = solution_code("07_sgemm", "BM, BN, BK, STAGES = ", '\ncheck("ch07.capstone_gemm"')
    for old, new in replacements:
        assert old in code, f"the capstone's model answer no longer contains {old!r}"
        code = code.replace(old, new)
    return "import cutlass\nimport cutlass.cute as cute\n\n" + code


def _capstone_hosts(table: dict, prefix: str) -> dict:
    """name -> the `gemm` host function of each variant, imported from its own file on the simulator."""
    import importlib
    import sys
    import tempfile
    from pathlib import Path

    import cutekit
    folder = Path(tempfile.mkdtemp(prefix=f"ch07-{prefix}-"))
    names = {name: f"ch07_{prefix}_{name}" for name in table}
    for name, module in names.items():
        (folder / f"{module}.py").write_text(capstone_source(table[name][0]))
    sys.path.insert(0, str(folder))
    try:
        with cutekit.using("sim", fresh=tuple(names.values())):
            return {name: importlib.import_module(module).gemm for name, module in names.items()}
    finally:
        sys.path.remove(str(folder))


def _solutions_at_hand() -> bool:
    """The capstone's answers are read from solutions/07_sgemm.py: a student bundle has none (its test of the
    packed graders copies this table without them), and then the capstone's rows are left out."""
    try:
        import simulated
    except ImportError:
        return False
    return (simulated.SOLUTIONS / "07_sgemm.py").is_file()


if _solutions_at_hand():
    CAPSTONE = _capstone_hosts({"right": ([], "")}, "model")["right"]
    CAPSTONE_WRONG = _capstone_hosts(CAPSTONE_MISTAKES, "mistake")
    CORRECT["ch07.capstone_gemm"] = CAPSTONE
    MISTAKES += [("ch07.capstone_gemm", mistake, CAPSTONE_WRONG[mistake], cause)
                 for mistake, (_, cause) in CAPSTONE_MISTAKES.items()]
    KERNEL_EXERCISES += ("ch07.capstone_gemm",)
