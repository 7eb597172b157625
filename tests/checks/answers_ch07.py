"""Main-loop answers for ch07.main_loop: the correct one and one per mistake. Each imports `cutlass` when it
runs, so it meets whatever `cutekit.use(...)` installed (the check installs the simulator)."""

MISTAKES = ("no_barrier_before_reading", "no_barrier_before_the_next_copy", "no_wait_for_the_copies",
            "only_the_first_k_tile", "only_the_first_k_block", "multiplies_k_block_zero_every_time",
            "never_loads_B")


def main_loop_with(mistake=None):
    """The main loop of a single-stage tensor-core GEMM, with `mistake` (one of MISTAKES) planted, or none."""
    def main_loop(tiled_mma, g2s, s2r_A, s2r_B, parts, accumulators):
        import cutlass
        import cutlass.cute as cute
        k_tiles = 1 if mistake == "only_the_first_k_tile" else cute.size(parts.tAgA, mode=[3])
        k_blocks = 1 if mistake == "only_the_first_k_block" else cute.size(parts.tCrA, mode=[2])
        for k_tile in range(k_tiles):
            cute.copy(g2s, parts.tAgA[None, None, None, k_tile], parts.tAsA)
            cute.copy(g2s, parts.tBgB[None, None, None, k_tile], parts.tBsB)
            cute.arch.cp_async_commit_group()
            if mistake != "no_wait_for_the_copies":
                cute.arch.cp_async_wait_group(0)
            if mistake != "no_barrier_before_reading":
                cute.arch.sync_threads()
            for kb in cutlass.range_constexpr(k_blocks):
                cute.copy(s2r_A, parts.tXsA[None, None, kb], parts.tXrA[None, None, kb])
                if mistake != "never_loads_B":
                    cute.copy(s2r_B, parts.tXsB[None, None, kb], parts.tXrB[None, None, kb])
                used = 0 if mistake == "multiplies_k_block_zero_every_time" else kb
                cute.gemm(tiled_mma, accumulators, parts.tCrA[None, None, used], parts.tCrB[None, None, used],
                          accumulators)
            if mistake != "no_barrier_before_the_next_copy":
                cute.arch.sync_threads()
        if mistake == "no_wait_for_the_copies":
            cute.arch.cp_async_wait_group(0)
    main_loop.__name__ = f"main_loop_{mistake}" if mistake else "main_loop"
    return main_loop
