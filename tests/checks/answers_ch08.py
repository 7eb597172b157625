"""Chapter 08 answers: the right one per exercise (CORRECT) and the mistakes learners make (MISTAKES rows
`(exercise_id, mistake, wrong_answer, cause)`, `cause` a regular expression the hint must match)."""
from cutekit import cute
from cutekit.cute.nvgpu import warpgroup

Kind = warpgroup.SmemLayoutAtomKind


# ---- ch08.smem_layout ---------------------------------------------------------------------------------------------

def _kind(major, contiguous_bytes):
    for row, name in ((128, "SW128"), (64, "SW64"), (32, "SW32")):
        if contiguous_bytes % row == 0:
            return getattr(Kind, f"{major}_{name}")
    return getattr(Kind, f"{major}_INTER")


def smem_layout(mn, k, dtype, major, stages):
    contiguous = k if major == "K" else mn
    atom = warpgroup.make_smem_layout_atom(_kind(major, contiguous * dtype.width // 8), dtype)
    return cute.tile_to_shape(atom, (mn, k, stages), order=(0, 1, 2) if major == "K" else (1, 0, 2))


def smem_always_128(mn, k, dtype, major, stages):
    atom = warpgroup.make_smem_layout_atom(getattr(Kind, f"{major}_SW128"), dtype)
    return cute.tile_to_shape(atom, (mn, k, stages), order=(0, 1, 2) if major == "K" else (1, 0, 2))


def smem_swizzle_from_elements(mn, k, dtype, major, stages):
    contiguous = k if major == "K" else mn
    atom = warpgroup.make_smem_layout_atom(_kind(major, contiguous * 2), dtype)
    return cute.tile_to_shape(atom, (mn, k, stages), order=(0, 1, 2) if major == "K" else (1, 0, 2))


def smem_swizzle_from_other_mode(mn, k, dtype, major, stages):
    other = mn if major == "K" else k
    atom = warpgroup.make_smem_layout_atom(_kind(major, other * dtype.width // 8), dtype)
    return cute.tile_to_shape(atom, (mn, k, stages), order=(0, 1, 2) if major == "K" else (1, 0, 2))


def smem_major_swapped(mn, k, dtype, major, stages):
    contiguous = k if major == "K" else mn
    atom = warpgroup.make_smem_layout_atom(_kind("MN" if major == "K" else "K", contiguous * dtype.width // 8), dtype)
    return cute.tile_to_shape(atom, (mn, k, stages), order=(0, 1, 2) if major == "K" else (1, 0, 2))


def smem_order_swapped(mn, k, dtype, major, stages):
    contiguous = k if major == "K" else mn
    atom = warpgroup.make_smem_layout_atom(_kind(major, contiguous * dtype.width // 8), dtype)
    return cute.tile_to_shape(atom, (mn, k, stages), order=(1, 0, 2) if major == "K" else (0, 1, 2))


def smem_always_order_0_1(mn, k, dtype, major, stages):
    contiguous = k if major == "K" else mn
    atom = warpgroup.make_smem_layout_atom(_kind(major, contiguous * dtype.width // 8), dtype)
    return cute.tile_to_shape(atom, (mn, k, stages), order=(0, 1, 2))


def smem_smallest_swizzle(mn, k, dtype, major, stages):
    contiguous = k if major == "K" else mn
    kind = getattr(Kind, f"{major}_SW32") if contiguous * dtype.width // 8 % 32 == 0 else getattr(Kind, f"{major}_INTER")
    return cute.tile_to_shape(warpgroup.make_smem_layout_atom(kind, dtype), (mn, k, stages),
                              order=(0, 1, 2) if major == "K" else (1, 0, 2))


def smem_without_stages(mn, k, dtype, major, stages):
    contiguous = k if major == "K" else mn
    atom = warpgroup.make_smem_layout_atom(_kind(major, contiguous * dtype.width // 8), dtype)
    return cute.tile_to_shape(atom, (mn, k), order=(0, 1) if major == "K" else (1, 0))


# ---- ch08.tma_plan: tma_plan(bm, bn, bk, cluster_m, cluster_n, dtype), A and B both multicast ------------------

def tma_plan(bm, bn, bk, cluster_m, cluster_n, dtype):
    return {"A": (bm // cluster_n, bk), "B": (bn // cluster_m, bk), "expect_tx": (bm + bn) * bk * dtype.width // 8}


def tma_whole_b_per_cta(bm, bn, bk, cluster_m, cluster_n, dtype):
    return {**tma_plan(bm, bn, bk, cluster_m, cluster_n, dtype), "B": (bn, bk)}


def tma_whole_a_per_cta(bm, bn, bk, cluster_m, cluster_n, dtype):
    """the chapter's kernel shares only B: A not divided, whatever cluster_n"""
    return {**tma_plan(bm, bn, bk, cluster_m, cluster_n, dtype), "A": (bm, bk)}


def tma_cluster_modes_swapped(bm, bn, bk, cluster_m, cluster_n, dtype):
    return {**tma_plan(bm, bn, bk, cluster_m, cluster_n, dtype), "A": (bm // cluster_m, bk), "B": (bn // cluster_n, bk)}


def tma_expects_own_share_only(bm, bn, bk, cluster_m, cluster_n, dtype):
    return {**tma_plan(bm, bn, bk, cluster_m, cluster_n, dtype),
            "expect_tx": (bm // cluster_n + bn // cluster_m) * bk * dtype.width // 8}


def tma_expects_elements(bm, bn, bk, cluster_m, cluster_n, dtype):
    return {**tma_plan(bm, bn, bk, cluster_m, cluster_n, dtype), "expect_tx": (bm + bn) * bk}


def tma_two_bytes_hard_coded(bm, bn, bk, cluster_m, cluster_n, dtype):
    return {**tma_plan(bm, bn, bk, cluster_m, cluster_n, dtype), "expect_tx": (bm + bn) * bk * 2}


def tma_boxes_k_first(bm, bn, bk, cluster_m, cluster_n, dtype):
    return {**tma_plan(bm, bn, bk, cluster_m, cluster_n, dtype), "A": (bk, bm // cluster_n), "B": (bk, bn // cluster_m)}


def tma_expects_a_only(bm, bn, bk, cluster_m, cluster_n, dtype):
    return {**tma_plan(bm, bn, bk, cluster_m, cluster_n, dtype), "expect_tx": bm * bk * dtype.width // 8}


# ---- ch08.stage_count ---------------------------------------------------------------------------------------------

def stages_that_fit(bm, bn, bk, dtype, c_dtype, reuse):
    stage = (bm + bn) * bk * dtype.width // 8 + 2 * 8          # A and B tiles, a full and an empty mbarrier
    epilogue = 0 if reuse else bm * bn * c_dtype.width // 8
    return (227 * 1024 - epilogue) // stage


def stages_kib_as_1000(bm, bn, bk, dtype, c_dtype, reuse):
    stage = (bm + bn) * bk * dtype.width // 8 + 16
    return (227 * 1000 - (0 if reuse else bm * bn * c_dtype.width // 8)) // stage


def stages_228_kib(bm, bn, bk, dtype, c_dtype, reuse):
    stage = (bm + bn) * bk * dtype.width // 8 + 16
    return (228 * 1024 - (0 if reuse else bm * bn * c_dtype.width // 8)) // stage


def stages_without_b(bm, bn, bk, dtype, c_dtype, reuse):
    stage = bm * bk * dtype.width // 8 + 16
    return (227 * 1024 - (0 if reuse else bm * bn * c_dtype.width // 8)) // stage


def stages_without_barriers(bm, bn, bk, dtype, c_dtype, reuse):
    stage = (bm + bn) * bk * dtype.width // 8
    return (227 * 1024 - (0 if reuse else bm * bn * c_dtype.width // 8)) // stage


def stages_width_as_bytes(bm, bn, bk, dtype, c_dtype, reuse):
    stage = (bm + bn) * bk * dtype.width + 16
    return (227 * 1024 - (0 if reuse else bm * bn * c_dtype.width // 8)) // stage


def stages_epilogue_always_counted(bm, bn, bk, dtype, c_dtype, reuse):
    stage = (bm + bn) * bk * dtype.width // 8 + 16
    return (227 * 1024 - bm * bn * c_dtype.width // 8) // stage


def stages_epilogue_never_counted(bm, bn, bk, dtype, c_dtype, reuse):
    stage = (bm + bn) * bk * dtype.width // 8 + 16
    return 227 * 1024 // stage


# ---- ch08.mbarrier_phases: the producer warp's loop, its first lap unwaited ---------------------------------------

PRODUCER_MISTAKES = {
    "waits_in_the_first_lap": r"need no wait",
    "parity_off_by_one": r"first release completes its phase 0",
    "no_wait_on_empty": r"wait on empty \+ s .* before loading into stage s",
    "waits_on_full": r"first release completes its phase 0|before loading into stage s",
    "plain_arrive": r"all of the stage's bytes in one arrival",
    "copies_past_the_last_k_tile": r"load only the k-tiles that exist",
    "two_arrivals_per_k_tile": r"one mbarrier_arrive_and_expect_tx per k-tile",
    "announces_half_the_bytes": r"announcing fewer completes the phase",
    "every_lane_arrives": r"in one lane, inside `with cute.arch.elect_one\(\):`",
    "stage_never_wraps": r"wrap around the ring",
    "always_k_tile_0": r"every k-tile must be loaded",
    "b_copy_forgotten": r"both copies, A and B",
}


def producer_with(mistake=""):
    """The producer warp's loop (no wait in the first lap, the phase from the k-tile index), with `mistake` (a
    key of PRODUCER_MISTAKES) planted, or none ("": a plain string, so that the loop moved by source to real
    CuTeDSL carries it as a constant)."""
    def producer_loop(tma_a, tAgA, tAsA, tma_b, tBgB, tBsB, full, empty, k_tiles, stages, bytes_per_stage):
        import cutlass              # kernel code: the simulator's or CuTeDSL's, as the check chooses
        import cutlass.cute as cute
        nbytes = bytes_per_stage // 2 if mistake == "announces_half_the_bytes" else bytes_per_stage
        # the first lap loads `stages` k-tiles even when there are fewer (past K the copy engine reads zeros)
        loaded_tiles = cutlass.max(k_tiles, stages) if mistake == "copies_past_the_last_k_tile" else k_tiles
        for k_tile in range(loaded_tiles):
            s = k_tile if mistake == "stage_never_wraps" else k_tile % stages
            if mistake == "waits_in_the_first_lap":
                cute.arch.mbarrier_wait(empty + s, (k_tile // stages + 1) % 2)
            elif k_tile >= stages and mistake != "no_wait_on_empty":
                lap = k_tile // stages if mistake == "parity_off_by_one" else k_tile // stages - 1
                cute.arch.mbarrier_wait((full if mistake == "waits_on_full" else empty) + s, lap % 2)
            if mistake == "plain_arrive":
                with cute.arch.elect_one():
                    cute.arch.mbarrier_arrive(full + s)
            elif mistake == "every_lane_arrives":
                cute.arch.mbarrier_arrive_and_expect_tx(full + s, nbytes)
            elif mistake == "two_arrivals_per_k_tile":
                with cute.arch.elect_one():
                    cute.arch.mbarrier_arrive_and_expect_tx(full + s, nbytes // 2)
                    cute.arch.mbarrier_arrive_and_expect_tx(full + s, nbytes - nbytes // 2)
            else:
                with cute.arch.elect_one():
                    cute.arch.mbarrier_arrive_and_expect_tx(full + s, nbytes)
            loaded = 0 if mistake == "always_k_tile_0" else k_tile
            cute.copy(tma_a, tAgA[None, loaded], tAsA[None, s], tma_bar_ptr=full + s)
            if mistake != "b_copy_forgotten":
                cute.copy(tma_b, tBgB[None, loaded], tBsB[None, s], tma_bar_ptr=full + s)
    producer_loop.__name__ = f"producer_loop_{mistake}" if mistake else "producer_loop"
    return producer_loop


# ---- ch08.wgmma_main_loop: the consumers' loop, two k-tiles deep ---------------------------------------------------

CONSUMER_MISTAKES = {
    "phase_off_by_one": r"first fill completes its phase 0",
    "no_fence": r"warpgroup.fence\(\) after the wait",
    "releases_the_current_stage": r"two back",
    "releases_the_previous_stage": r"two back",
    "the_worked_depth_one_loop": r"wait_group\(1\) is section 3.7's loop",
    "wait_group_0_in_the_loop": r"tensor cores idle",
    "no_final_wait": r"epilogue reads the accumulators",
    "every_lane_arrives": r"more arrivals in one phase.*initialized with count 8.*only one lane of each warp arrives",
    "never_releases": r"release every stage",
    "no_commit_group": r"commit_group\(\) after each k-tile",
    "release_index_not_wrapped": r"inside the `stages` empty barriers",
    "waits_before_committing": r"counts only committed groups",
    "one_arrival_per_warpgroup": r"one arrival per warp \(lane 0\)",
}


def consumer_with(mistake=""):
    """The consumers' main loop two k-tiles deep, with `mistake` (a key of CONSUMER_MISTAKES) planted, or none."""
    def consumer_loop(tiled_mma, accumulators, tCrA, tCrB, full, empty, k_tiles, stages, lane):
        import cutlass              # kernel code: the simulator's or CuTeDSL's, as the check chooses
        import cutlass.cute as cute
        from cutlass.cute.nvgpu import warpgroup
        depth = 1 if mistake == "the_worked_depth_one_loop" else 0 if mistake == "wait_group_0_in_the_loop" else 2
        back = 1 if mistake == "releases_the_previous_stage" else 0 if mistake == "releases_the_current_stage" \
            else depth
        for k_tile in range(k_tiles):
            s = k_tile % stages
            lap = k_tile // stages + (1 if mistake == "phase_off_by_one" else 0)
            cute.arch.mbarrier_wait(full + s, lap % 2)
            if mistake != "no_fence":
                warpgroup.fence()
            for kb in cutlass.range_constexpr(cute.size(tCrA, mode=[2])):
                cute.gemm(tiled_mma, accumulators, tCrA[None, None, kb, s], tCrB[None, None, kb, s], accumulators)
            if mistake == "waits_before_committing":
                warpgroup.wait_group(depth)
            if mistake != "no_commit_group":
                warpgroup.commit_group()
            if mistake != "waits_before_committing":
                warpgroup.wait_group(depth)
            released = k_tile - back if mistake == "release_index_not_wrapped" else (k_tile - back) % stages
            tidx, _, _ = cute.arch.thread_idx()
            if cutlass.const_expr(mistake == "one_arrival_per_warpgroup"):
                arrives = tidx % 128 == 0
            elif cutlass.const_expr(mistake == "every_lane_arrives"):
                arrives = lane >= 0
            else:
                arrives = lane == 0
            if k_tile >= back and mistake != "never_releases":
                if arrives:
                    cute.arch.mbarrier_arrive(empty + released)
        if mistake != "no_final_wait":
            warpgroup.wait_group(0)
    consumer_loop.__name__ = f"consumer_loop_{mistake}" if mistake else "consumer_loop"
    return consumer_loop


CORRECT = {
    "ch08.smem_layout": smem_layout,
    "ch08.tma_plan": tma_plan,
    "ch08.stage_count": stages_that_fit,
    "ch08.mbarrier_phases": producer_with(),
    "ch08.wgmma_main_loop": consumer_with(),
}

MISTAKES = [
    ("ch08.smem_layout", "always the 128 byte swizzle", smem_always_128, r"largest swizzle|always use the 128-byte"),
    ("ch08.smem_layout", "swizzle from the element count", smem_swizzle_from_elements, r"number of elements"),
    ("ch08.smem_layout", "swizzle from the other mode", smem_swizzle_from_other_mode, r"other mode's extent"),
    ("ch08.smem_layout", "k atom for an mn major tile", smem_major_swapped, r"-major, but the tile is"),
    ("ch08.smem_layout", "tiling order swapped", smem_order_swapped, r"wrong order"),
    ("ch08.smem_layout", "order 0 1 for both majors", smem_always_order_0_1, r"wrong order"),
    ("ch08.smem_layout", "always the 32 byte swizzle", smem_smallest_swizzle, r"32-byte swizzle where"),
    ("ch08.smem_layout", "no stage mode", smem_without_stages, r"no stage mode"),
    ("ch08.tma_plan", "whole b tile per cta", tma_whole_b_per_cta, r"each loads 1/\d+ of B's tile"),
    ("ch08.tma_plan", "whole a tile per cta", tma_whole_a_per_cta, r"each loads 1/\d+ of A's tile"),
    ("ch08.tma_plan", "cluster modes swapped", tma_cluster_modes_swapped, r"divided each by the other cluster mode"),
    ("ch08.tma_plan", "expects only its own shares", tma_expects_own_share_only, r"all of A and all of B arrive"),
    ("ch08.tma_plan", "expect tx in elements", tma_expects_elements, r"bytes, not elements"),
    ("ch08.tma_plan", "two bytes per element hard coded", tma_two_bytes_hard_coded, r"hard-coded as 2 bytes"),
    ("ch08.tma_plan", "boxes written k first", tma_boxes_k_first, r"follow the tensors' modes"),
    ("ch08.tma_plan", "expects only a's bytes", tma_expects_a_only, r"only A's bytes"),
    ("ch08.stage_count", "a kib of 1000 bytes", stages_kib_as_1000, r"KiB is 1024 bytes"),
    ("ch08.stage_count", "228 kib", stages_228_kib, r"228 KiB is the SM's"),
    ("ch08.stage_count", "b tile forgotten", stages_without_b, r"counted only A's"),
    ("ch08.stage_count", "mbarriers forgotten", stages_without_barriers, r"8-byte mbarriers"),
    ("ch08.stage_count", "width taken as bytes", stages_width_as_bytes, r"width is in bits"),
    ("ch08.stage_count", "epilogue counted despite reuse", stages_epilogue_always_counted, r"costs no extra"),
    ("ch08.stage_count", "epilogue forgotten without reuse", stages_epilogue_never_counted, r"needs its own"),
] + [("ch08.mbarrier_phases", mistake.replace("_", " "), producer_with(mistake), cause)
     for mistake, cause in PRODUCER_MISTAKES.items()] \
  + [("ch08.wgmma_main_loop", mistake.replace("_", " "), consumer_with(mistake), cause)
     for mistake, cause in CONSUMER_MISTAKES.items()]

KERNEL_EXERCISES = ("ch08.mbarrier_phases", "ch08.wgmma_main_loop")     # simulated per case: a few seeds, not 100


# ---- ch08.capstone: the whole kernel, D = relu(A B^T + bias) ---------------------------------------------------
# Each mistake is the solution's capstone (solutions/08_hopper_gemm.py) with edits: (old, new) pairs of its
# text. `cause` is what the hint must name; the hint must not hold the solution's lines that the edit removed.

CAPSTONE_MISTAKES = {
    # the pipeline: the simulator's diagnostics, passed on with what to change
    "consumers_wait_for_the_wrong_parity": (
        [("cute.arch.mbarrier_wait(full + s, (k_tile // STAGES) % 2)",
          "cute.arch.mbarrier_wait(full + s, (k_tile // STAGES + 1) % 2)")],
        r"waited on the wrong phase.*wait for the phase those copies complete"),
    "producer_never_waits_for_a_free_stage": (
        [("                cute.arch.mbarrier_wait(empty + s, (k_tile // STAGES + 1) % 2)\n", "")],
        r"stage reused before its consumer released it.*did not wait on the stage's empty barrier"),
    "no_wgmma_fence": (
        [("            warpgroup.fence()\n", "")],
        r"missing fence: the wgmma"),
    "releases_the_stage_its_wgmmas_still_read": (
        [("            if k_tile > 0:\n                if lane == 0:\n"
          "                    cute.arch.mbarrier_arrive(empty + (k_tile - 1) % STAGES)",
          "            if lane == 0:\n                cute.arch.mbarrier_arrive(empty + s)")],
        r"stage reused.*arrived on it before the wait_group that retires"),
    "epilogue_before_the_last_wgmmas_retire": (
        [("        warpgroup.wait_group(0)\n", "")],
        r"still in flight.*every committed group of wgmmas must be waited for"),
    "epilogue_reads_accumulators_one_by_one_in_flight": (
        [("        warpgroup.wait_group(0)\n", ""),
         ("        summed = accumulators.load() + thr_mma.partition_C(bias_tile).load()\n",
          "        for i in cutlass.range_constexpr(cute.size(accumulators)):\n"
          "            accumulators[i] = accumulators[i] + 0.0\n"
          "        summed = accumulators.load() + thr_mma.partition_C(bias_tile).load()\n")],
        r"read the accumulators while wgmmas.*still in flight.*every committed group of wgmmas must be waited"),
    "every_lane_releases_the_stage": (
        [("                if lane == 0:\n                    cute.arch.mbarrier_arrive(empty + (k_tile - 1) % STAGES)",
          "                released = empty + (k_tile - 1) % STAGES\n                cute.arch.mbarrier_arrive(released)")],
        r"more arrivals in one phase than mbarrier .* counts: it was initialized with count 8.*threads 128-136.*"
        r"one lane per consumer warp"),
    "mbarrier_init_never_fenced": (
        [("    cute.arch.mbarrier_init_fence()\n", "")],
        r"initialization \(at .*\) was never fenced.*fence.mbarrier_init.*made visible to every thread"),
    "accumulate_never_set": (
        [("        tiled_mma.set(warpgroup.Field.ACCUMULATE, True)\n", "")],
        r"only the last k-block's product.*ACCUMULATE field false"),
    "accumulators_never_zeroed": (
        [("        accumulators.fill(0.0)\n", "")],
        r"accumulators that nothing has written.*registers start with garbage"),
    "expect_tx_of_a_only": (
        [("cute.arch.mbarrier_arrive_and_expect_tx(full + s, (BM + BN) * BK * 2)",
          "cute.arch.mbarrier_arrive_and_expect_tx(full + s, BM * BK * 2)")],
        r"every byte its copies deliver"),
    "no_proxy_fence_before_the_tma_store": (
        [('        cute.arch.fence_proxy("async.shared", space="cta")\n', "")],
        r"missing fence: the TMA store.*proxy fence"),
    # the epilogue: named from what D holds
    "bias_read_past_column_n": (
        [("            value = cutlass.Float32(0.0)\n            if column < cute.size(bias):\n"
          "                value = bias[column]\n            sBias[consumer] = value",
          "            sBias[consumer] = bias[column]")],
        r"bias holds N values, one per column"),
    "bias_added_per_row": (
        [("cute.make_layout((BM, BN), stride=(0, 1))", "cute.make_layout((BM, BN), stride=(1, 0))")],
        r"changes down the rows of a column"),
    "clamp_before_the_bias": (
        [("        summed = accumulators.load() + thr_mma.partition_C(bias_tile).load()\n",
          "        product = accumulators.load()\n"
          "        clamped = cute.where(product > 0.0, product, cute.full_like(product, 0.0))\n"
          "        summed = clamped + thr_mma.partition_C(bias_tile).load()\n"),
         ("result.store(cute.where(summed > 0.0, summed, cute.full_like(summed, 0.0)).to(cutlass.Float16))",
          "result.store(summed.to(cutlass.Float16))")],
        r"clamp at 0 came before the bias"),
    "bias_never_added": (
        [("        summed = accumulators.load() + thr_mma.partition_C(bias_tile).load()\n",
          "        summed = accumulators.load()\n")],
        r"bias was never added"),
    "bias_of_the_warpgroups_first_thread": (
        [("thr_mma.partition_C(bias_tile)", "tiled_mma.get_slice(consumer - consumer % 128).partition_C(bias_tile)")],
        r"columns its accumulators do not hold"),
    "tiles_counted_rounding_down": (
        [("grid = [cute.ceil_div(cute.size(mD, mode=[0]), BM), cute.ceil_div(cute.size(mD, mode=[1]), BN), 1]",
          "grid = [cute.size(mD, mode=[0]) // BM, cute.size(mD, mode=[1]) // BN, 1]")],
        r"no CTA along a mode.*rounding up"),
    "stores_from_registers_past_the_edge": (
        [("gemm_bias_relu_kernel(tma_a, tma_mA, tma_b, tma_mB, tma_d, tma_mD, bias,",
          "gemm_bias_relu_kernel(tma_a, tma_mA, tma_b, tma_mB, tma_d, mD, bias,"),
         ("        r2s = cute.make_tiled_copy_C(", "        cute.autovec_copy(result, thr_mma.partition_C(gD))\n"
          "        r2s = cute.make_tiled_copy_C("),
         ("        if warp == 4:\n            tDsD, tDgD", "        if warp == 1000:\n            tDsD, tDgD")],
        r"out-of-bounds.*store from registers must leave out the rows and columns past D's edge"),
}
