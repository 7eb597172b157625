"""Chapter 07 main loops that never finish, as a learner writes them: `while True:`, and a `while` over the
k-tiles whose counter is never advanced (a loop around sync_threads() whose condition never changes)."""


def main_loop_while_true(tiled_mma, g2s, s2r_A, s2r_B, parts, accumulators):
    import cutlass.cute as cute
    k_tiles = cute.size(parts.tAgA, mode=[3])
    while True:
        k_tiles = k_tiles + 0


def main_loop_counter_never_advanced(tiled_mma, g2s, s2r_A, s2r_B, parts, accumulators):
    import cutlass
    import cutlass.cute as cute
    k_tiles = cute.size(parts.tAgA, mode=[3])
    k_blocks = cute.size(parts.tCrA, mode=[2])
    k_tile = 0
    while k_tile < k_tiles:
        cute.copy(g2s, parts.tAgA[None, None, None, k_tile], parts.tAsA)
        cute.copy(g2s, parts.tBgB[None, None, None, k_tile], parts.tBsB)
        cute.arch.cp_async_commit_group()
        cute.arch.cp_async_wait_group(0)
        cute.arch.sync_threads()
        for kb in cutlass.range_constexpr(k_blocks):
            cute.copy(s2r_A, parts.tXsA[None, None, kb], parts.tXrA[None, None, kb])
            cute.copy(s2r_B, parts.tXsB[None, None, kb], parts.tXrB[None, None, kb])
            cute.gemm(tiled_mma, accumulators, parts.tCrA[None, None, kb], parts.tCrB[None, None, kb], accumulators)
        cute.arch.sync_threads()
