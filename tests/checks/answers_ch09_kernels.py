"""Chapter 09's kernel exercises: the right MMA loop and epilogue, and the mistakes learners make in each, planted
by name (`mma_loop_with(mistake)`, `epilogue_with(mistake)`). Each table maps a mistake to the tiers that catch
it and what each tier's hint must name (a regular expression). "ptx": the cutedsl-cpu criterion, reading the
PTX of an sm_100a compile; "simulator": the simulator tier, graded only where cutekit's simulator runs tcgen05
(cutekit/sim/arch/sm100.py)."""


def mma_loop_with(mistake=""):
    """The MMA warp's loop (3 stages, warp 1 loading), with `mistake` (a key of MMA_LOOP_MISTAKES) planted, or none
    ("": a plain string, so that the loop moved by source to real CuTeDSL carries it as a constant)."""
    def mma_loop(tiled_mma, accumulator, tCrA, tCrB, full, empty, accumulator_ready, k_tiles, stages):
        import cutlass              # kernel code: the simulator's or CuTeDSL's, as the check chooses
        import cutlass.cute as cute
        from cutlass.cute.nvgpu import tcgen05
        k_blocks = 2 if mistake == "half_the_k_blocks" else cute.size(tCrA, mode=[2])
        tiled_mma.set(tcgen05.Field.ACCUMULATE, mistake == "accumulate_true_from_the_start")
        for k_tile in cutlass.range(k_tiles):
            s = k_tile if mistake == "stage_never_wraps" else k_tile % stages
            if mistake == "reset_every_k_tile":
                tiled_mma.set(tcgen05.Field.ACCUMULATE, False)
            lap = k_tile // stages + (1 if mistake == "parity_off_by_one" else 0)
            if mistake == "waits_on_empty":
                cute.arch.mbarrier_wait(empty + s, lap % 2)
            elif mistake != "no_wait_on_full":
                cute.arch.mbarrier_wait(full + s, lap % 2)
            for k_block in cutlass.range_constexpr(k_blocks):
                cute.gemm(tiled_mma, accumulator, tCrA[None, None, k_block, s], tCrB[None, None, k_block, s],
                          accumulator)
                if mistake != "accumulate_never_true":
                    tiled_mma.set(tcgen05.Field.ACCUMULATE, True)
            if mistake == "commit_from_every_thread":
                tcgen05.commit(empty + s)
            elif mistake != "no_commit_per_k_tile":
                with cute.arch.elect_one():
                    tcgen05.commit(empty + s)
        if mistake != "no_final_commit":
            with cute.arch.elect_one():
                tcgen05.commit(accumulator_ready)
    mma_loop.__name__ = f"mma_loop_{mistake}" if mistake else "mma_loop"
    return mma_loop


# mistake -> {a tier that catches it: what that tier's hint must name}
MMA_LOOP_MISTAKES = {
    "no_commit_per_k_tile": {"ptx": r"stages are never released.*deadlock",
                             "simulator": r"can never go on.*released by a tcgen05.commit"},
    "no_final_commit": {"ptx": r"last commit, to the accumulator barrier.*missing",
                        "simulator": r"can never go on.*accumulator barrier by the last commit"},
    "commit_from_every_thread": {"ptx": r"no elect.sync before them.*one arrival",
                                 "simulator": r"every lane that executes it commits"},
    "no_wait_on_full": {"ptx": r"wait on the stage's full barrier before",
                        "simulator": r"waited on the wrong phase"},
    "half_the_k_blocks": {"ptx": r"2 tcgen05.mma per k-tile.*4 k-blocks",
                          "simulator": r"k-blocks \[2, 3, 6, 7.*missing"},
    "accumulate_never_true": {"simulator": r"only the last k-block's product"},
    "reset_every_k_tile": {"simulator": r"only the last k-tile's product"},
    "accumulate_true_from_the_start": {"simulator": r"TMEM that nothing has written.*very first UMMA of the tile "
                                                    r"overwrites it"},
    "parity_off_by_one": {"simulator": r"waited on the wrong phase.*parity is that of the phase this k-tile's copies"},
    "waits_on_empty": {"simulator": r"can never go on.*waits on the stage's full barrier \(not its empty one\)"},
    "stage_never_wraps": {"simulator": r"can never go on.*stage index wraps round the ring"},
}


def epilogue_with(mistake=""):
    """The epilogue of D = alpha A B^T in 16-column strips of a 128 x 256 tile, with `mistake` (a key of
    EPILOGUE_MISTAKES) planted, another right way to write it (a member of RIGHT_EPILOGUES), or none."""
    def scaled_epilogue(accumulator, gD, accumulator_ready, thread, alpha):
        import cutlass
        import cutlass.cute as cute
        from cutlass.cute.nvgpu import tcgen05
        import cutlass.experimental.primitives as primitives
        if mistake != "no_wait_for_the_accumulator":
            cute.arch.mbarrier_wait(accumulator_ready, 1 if mistake == "accumulator_parity_1" else 0)
        primitives.tcgen05_fence("after_thread_sync")
        columns = 32 if mistake == "strips_of_32_with_x16" else 16
        strip = (128, columns)
        tAcc = cute.flat_divide(accumulator[((None, None), 0, 0)], strip)
        tD = cute.flat_divide(gD, strip)
        repetitions = tcgen05.Repetition.x32 if mistake == "x32_load_for_16_columns" else tcgen05.Repetition.x16
        op = tcgen05.Ld16x256bOp(tcgen05.Repetition.x4) if mistake == "16x256b_shape" else \
            tcgen05.Ld32x32bOp(repetitions)
        load = cute.make_copy_atom(op, cutlass.Float32)
        tmem_copy = tcgen05.make_tmem_copy(load, tAcc[(None, None, 0, 0)])
        mine = tmem_copy.get_slice(thread % 32 if mistake == "every_warp_reads_warp_0s_lanes" else thread)
        from_tmem, to_global = mine.partition_S(tAcc), mine.partition_D(tD)
        values = cute.make_rmem_tensor(to_global[(None, None, None, 0, 0)].shape, cutlass.Float32)
        result = cute.make_rmem_tensor(values.shape, cutlass.Float16)
        strips = 8 if mistake == "strip_count_of_32_column_strips" else cute.size(tAcc, mode=[3])
        for n_strip in cutlass.range_constexpr(strips):
            if mistake == "wait_ld_before_each_load":
                cute.arch.fence_view_async_tmem_load()
            cute.copy(tmem_copy, from_tmem[(None, None, None, 0, n_strip)], values)
            if mistake not in ("no_wait_ld", "one_wait_ld_after_the_loop", "wait_ld_before_each_load"):
                cute.arch.fence_view_async_tmem_load()
            if mistake == "no_alpha":
                result.store(values.load().to(cutlass.Float16))
            elif mistake == "alpha_on_fp16":
                result.store(values.load().to(cutlass.Float16) * cutlass.Float16(alpha))
            else:
                result.store((values.load() * alpha).to(cutlass.Float16))
            cute.autovec_copy(result, to_global[(None, None, None, 0, n_strip)])
        if mistake == "one_wait_ld_after_the_loop":
            cute.arch.fence_view_async_tmem_load()
    scaled_epilogue.__name__ = f"scaled_epilogue_{mistake}" if mistake else "scaled_epilogue"
    return scaled_epilogue


# right answers other than the model's: the registers used before any wait (a true register dependency orders
# them, PTX ISA 9.7.16.6.4.5) and one tcgen05.wait::ld after the last load, before the TMEM is freed
RIGHT_EPILOGUES = ("one_wait_ld_after_the_loop",)

EPILOGUE_MISTAKES = {
    "no_wait_for_the_accumulator": {"ptx": r"wait on the accumulator barrier.*before its first tcgen05.ld",
                                    "simulator": r"read before the MMA's commit completed.*waits on the accumulator "
                                                 r"barrier"},
    "no_wait_ld": {"ptx": r"no tcgen05.wait::ld.*frees the accumulator's TMEM.*only tcgen05.wait::ld orders "
                          r"that read before a later write.*dealloc"},
    "wait_ld_before_each_load": {"ptx": r"last 1 tcgen05.ld have no tcgen05.wait::ld after them.*orders only the "
                                        r"loads issued before it"},
    "strip_count_of_32_column_strips": {"ptx": r"8 tcgen05.ld of 16 columns.*16 strips",
                                        "simulator": r"columns 128-255 \(128\) were never written"},
    "x32_load_for_16_columns": {"ptx": r"could not compile.*does not fit the strip",
                                "simulator": r"make_tmem_copy.*does not fit the strip"},
    "16x256b_shape": {"ptx": r"could not compile.*does not fit the strip",
                      "simulator": r"make_tmem_copy.*does not fit the strip"},
    "no_alpha": {"ptx": r"multiplies no fp32 value.*alpha", "simulator": r"never scaled by alpha"},
    "alpha_on_fp16": {"ptx": r"multiplies fp16 values.*rounds twice"},
    "strips_of_32_with_x16": {"ptx": r"2 tcgen05.ld before each tcgen05.wait::ld.*strips are 16 columns"},
    "every_warp_reads_warp_0s_lanes": {"simulator": r"outside its quarter.*slice of the TMEM copy comes from its "
                                                    r"own thread index"},
    "accumulator_parity_1": {"simulator": r"read before the MMA's commit completed.*wrong phase.*for the phase the "
                                          r"last commit completes|can never go on.*its phase 0"},
}


# ---- ch09.capstone: the warp-specialised kernel, D = relu(A B^T + bias) ------------------------------------------
# Each mistake is the solution's capstone (solutions/09_blackwell.py: warp 5 loads, warp 4 multiplies, warps 0-3 run
# the epilogue, a ring of 4 stages) with edits, (old, new) pairs of its text:
# mistake -> (edits, {a tier that catches it: what its hint must name}). The test puts every one in one module, so
# an edit changes a kernel's code, never a module constant (the last definition would hold for all).

_WAIT_AFTER_THE_LOOP = ("        cute.arch.fence_view_async_tmem_load()                  "
                        "# every load has read the TMEM before it is freed\n")
_LOAD = "            cute.copy(ld, src[(None, None, None, 0, c)], acc_regs)\n"
_MMA_WRAP = ("                tcgen05.commit(consumed + stage)\n            stage = stage + 1\n"
             "            if stage == RING:\n                stage, phase = cutlass.Int32(0), phase ^ 1\n")

CAPSTONE_MISTAKES = {
    "mma_warp_waits_with_the_wrong_parity": (
        [("        stage, phase = cutlass.Int32(0), cutlass.Int32(0)\n",
          "        stage, phase = cutlass.Int32(0), cutlass.Int32(1)\n")],
        {"simulator": r"waited on the wrong phase.*wait for the phase those copies complete|can never go on.*every wait "
                     r"names the phase its event completes"}),
    "producer_waits_on_parity_0_of_a_fresh_barrier": (
        [("stage, phase = cutlass.Int32(0), cutlass.Int32(1)       # parity 1",
          "stage, phase = cutlass.Int32(0), cutlass.Int32(0)       # parity 1")],
        {"simulator": r"can never go on.*every wait names the phase its event completes"}),
    "producer_refills_without_waiting": (
        [("            cute.arch.mbarrier_wait(consumed + stage, phase)\n", "")],
        {"simulator": r"before refilling, wait on the stage's empty barrier"}),
    "stage_never_released": (
        [("            with cute.arch.elect_one():\n                tcgen05.commit(consumed + stage)\n", "")],
        {"simulator": r"can never go on.*every stage is released by a commit"}),
    "no_commit_to_the_accumulator_barrier": (
        [("        with cute.arch.elect_one():\n            tcgen05.commit(acc_full)\n", "")],
        {"simulator": r"can never go on.*accumulator barrier by the last commit"}),
    "commit_from_every_lane": (
        [("with cute.arch.elect_one():\n                tcgen05.commit(consumed",
          "if True:\n                tcgen05.commit(consumed")],
        {"simulator": r"tcgen05.commit.*one lane", "ptx": r"no elect.sync before them"}),
    "accumulate_never_turned_on": (
        [("                mma.set(tcgen05.Field.ACCUMULATE, True)\n", "")],
        {"simulator": r"only the last k-block's product|single 16-wide k-block, or of none.*ACCUMULATE field"}),
    "accumulate_on_from_the_start": (
        [("        mma.set(tcgen05.Field.ACCUMULATE, False)\n", "        mma.set(tcgen05.Field.ACCUMULATE, True)\n")],
        {"simulator": r"nothing has written.*very first MMA overwrites it"}),
    "one_warp_loads_and_multiplies": (
        [("    if warp == MMA_WARP:        # MMA warp", "    if warp == TMA_WARP:        # MMA warp")],
        {"simulator": r"warp 5 issues both the TMA loads and the MMAs"}),
    "mma_warp_runs_the_epilogue_too": (
        [("    if warp == MMA_WARP:        # MMA warp", "    if warp == 0:        # MMA warp")],
        {"simulator": r"warp 0 reads TMEM in the epilogue and also issues the MMAs.*four warps of their own"}),
    "epilogue_without_the_accumulator_wait": (
        [("        cute.arch.mbarrier_wait(acc_full, 0)\n", "")],
        {"simulator": r"read before the MMA's commit completed.*wait on that barrier before the first TMEM load"}),
    "every_warp_slices_as_warp_0": (
        [("row = ld.get_slice(tidx)", "row = ld.get_slice(tidx % 32)")],
        {"simulator": r"outside its quarter.*its own index in the CTA"}),
    "store_past_the_edge": (
        [("if m < rows and n < cols:", "if m < rows + bm and n < cols:")],
        {"simulator": r"out-of-bounds"}),
    "tiles_counted_rounding_down": (
        [("tiles = [cute.ceil_div(cute.size(mD, mode=[0]), bm), cute.ceil_div(cute.size(mD, mode=[1]), bn), 1]",
          "tiles = [cute.size(mD, mode=[0]) // bm + 1, cute.size(mD, mode=[1]) // bn, 1]")],
        {"simulator": r"never written.*count tiles rounding up"}),
    "bias_never_added": (
        [("acc_regs[v] + bias[n]", "acc_regs[v] + 0.0")],
        {"simulator": r"bias was never added"}),
    "clamp_missing": (
        [("cutlass.Float16(cutlass.max(acc_regs[v] + bias[n], cutlass.Float32(0.0)))",
          "cutlass.Float16(acc_regs[v] + bias[n])")],
        {"simulator": r"clamp at 0 is missing"}),
    "bias_of_the_row": (
        [("acc_regs[v] + bias[n]", "acc_regs[v] + bias[m]")],
        {"simulator": r"changes down the rows of a column|out-of-bounds access to global tensor bias"}),
    "tmem_never_freed": (
        [("            cute.arch.dealloc_tmem(acc.iterator, bn)\n", "            pass\n")],
        {"simulator": r"freed|never freed", "ptx": r"tcgen05.dealloc.*freed before it exits"}),
    "no_wait_ld": (
        [(_WAIT_AFTER_THE_LOOP, "")],
        {"ptx": r"no tcgen05.wait::ld before its tcgen05.dealloc.*only tcgen05.wait::ld orders that read"}),
    "wait_ld_before_each_load": (
        [(_WAIT_AFTER_THE_LOOP, ""), (_LOAD, "            cute.arch.fence_view_async_tmem_load()\n" + _LOAD)],
        {"ptx": r"last 1 tcgen05.ld have no tcgen05.wait::ld after them before the tcgen05.dealloc"}),
}

# right capstones other than the model: a tcgen05.wait::ld after each load (section 4's epilogue; the model waits
# once, after the last); the MMA warp's stage and phase worked out from the k-tile index instead of carried round
# the ring (as exercise 3 does)
CAPSTONE_RIGHT_VARIANTS = {
    "wait_ld_after_each_load": [(_WAIT_AFTER_THE_LOOP, ""),
                                (_LOAD, _LOAD + "            cute.arch.fence_view_async_tmem_load()\n")],
    "phase_from_the_k_tile_index": [
        ("        stage, phase = cutlass.Int32(0), cutlass.Int32(0)\n", ""),
        ("        for _ in cutlass.range(cute.size(tile_a, mode=[2])):\n",
         "        for k_tile in cutlass.range(cute.size(tile_a, mode=[2])):\n"
         "            stage, phase = k_tile % RING, k_tile // RING % 2\n"),
        (_MMA_WRAP, "                tcgen05.commit(consumed + stage)\n")],
}
