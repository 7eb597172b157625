"""Chapter 04's answers for the checks' tests: the right ones, and wrong ones named for the mistake each
models (a learner's usual confusion about local_tile, local_partition, thread layouts and proj)."""
from cutekit import cute


# ---- ch04.local_tile_by_hand: tile_of(tensor, tiler, coord, proj) ----

def _kept(tiler, coord, proj, keep=lambda p: p is not None):
    modes = [i for i, p in enumerate(proj) if keep(p)]
    return tuple(tiler[i] for i in modes), tuple(coord[i] for i in modes)


def tile_of(tensor, tiler, coord, proj):
    tile, where = _kept(tiler, coord, proj)
    return cute.zipped_divide(tensor, tile)[(tuple(None for _ in tile), where)]


def tile_of_flat_divide(tensor, tiler, coord, proj):
    """Right too: flat_divide lists the tile modes, then the rest modes; None keeps the tile modes whole."""
    tile, where = _kept(tiler, coord, proj)
    return cute.flat_divide(tensor, tile)[tuple(None for _ in tile) + where]


def tile_ignores_proj(tensor, tiler, coord, proj):
    return cute.zipped_divide(tensor, tiler)[(tuple(None for _ in tiler), coord)]


def tile_projects_the_tiler_not_the_coordinate(tensor, tiler, coord, proj):
    tile, _ = _kept(tiler, coord, proj)
    return cute.zipped_divide(tensor, tile)[(tuple(None for _ in tile), coord)]


def tile_keeps_the_modes_proj_drops(tensor, tiler, coord, proj):
    """1 and None read the other way round: the modes marked None kept (and, for C, also K)"""
    tile, where = _kept(tiler, coord, proj, keep=lambda p: p is None)
    if len(tile) < len(tensor.shape):                  # one dropped mode: keep the first kept one with it
        first = next(i for i, p in enumerate(proj) if p is not None)
        tile, where = (tile + (tiler[first],))[:len(tensor.shape)], (where + (coord[first],))[:len(tensor.shape)]
    return cute.zipped_divide(tensor, tile)[(tuple(None for _ in tile), where)]


def tile_takes_the_first_modes(tensor, tiler, coord, proj):
    rank = len(tensor.shape)
    return cute.zipped_divide(tensor, tiler[:rank])[(tuple(None for _ in range(rank)), coord[:rank])]


def tile_fixes_a_none_at_zero(tensor, tiler, coord, proj):
    tile, where = _kept(tiler, coord, proj)
    return cute.zipped_divide(tensor, tile)[(tuple(None for _ in tile), tuple(0 if c is None else c for c in where))]


def tile_slices_the_tile_mode(tensor, tiler, coord, proj):
    tile, where = _kept(tiler, coord, proj)
    return cute.zipped_divide(tensor, tile)[(where, tuple(None for _ in tile))]


def tile_reverses_the_coordinate(tensor, tiler, coord, proj):
    tile, where = _kept(tiler, coord, proj)
    return cute.zipped_divide(tensor, tile)[(tuple(None for _ in tile), tuple(reversed(where)))]


def tile_always_the_first(tensor, tiler, coord, proj):
    tile, where = _kept(tiler, coord, proj)
    return cute.zipped_divide(tensor, tile)[(tuple(None for _ in tile), tuple(None if c is None else 0 for c in where))]


def tile_hard_coded_worked_example(tensor, tiler, coord, proj):
    return cute.zipped_divide(tensor, (16, 4))[((None, None), (1, None))]


def tile_calls_the_switched_off_local_tile(tensor, tiler, coord, proj):
    return cute.local_tile(tensor, tiler, coord, proj=proj)


# ---- ch04.thread_elements ----

def elements_of(tile_shape, thread_shape, thread):
    (tile_m, tile_n), (threads_m, threads_n) = tile_shape, thread_shape
    first_m, first_n = thread % threads_m, thread // threads_m
    rows = tile_m // threads_m
    return [(first_m + threads_m * (i % rows), first_n + threads_n * (i // rows))
            for i in range(rows * (tile_n // threads_n))]


def elements_blocked(tile_shape, thread_shape, thread):
    (tile_m, tile_n), (threads_m, threads_n) = tile_shape, thread_shape
    rows, columns = tile_m // threads_m, tile_n // threads_n
    first_m, first_n = (thread % threads_m) * rows, (thread // threads_m) * columns
    return [(first_m + i % rows, first_n + i // rows) for i in range(rows * columns)]


def elements_row_major_threads(tile_shape, thread_shape, thread):
    (tile_m, tile_n), (threads_m, threads_n) = tile_shape, thread_shape
    first_m, first_n = thread // threads_n, thread % threads_n
    rows = tile_m // threads_m
    return [(first_m + threads_m * (i % rows), first_n + threads_n * (i // rows))
            for i in range(rows * (tile_n // threads_n))]


def elements_steps_swapped(tile_shape, thread_shape, thread):
    (tile_m, tile_n), (threads_m, threads_n) = tile_shape, thread_shape
    first_m, first_n = thread % threads_m, thread // threads_m
    rows = tile_m // threads_m
    return [(first_m + threads_n * (i % rows), first_n + threads_m * (i // rows))
            for i in range(rows * (tile_n // threads_n))]


def elements_listed_row_major(tile_shape, thread_shape, thread):
    return sorted(elements_of(tile_shape, thread_shape, thread))


def elements_only_the_first(tile_shape, thread_shape, thread):
    return elements_of(tile_shape, thread_shape, thread)[:1]


def elements_hard_coded_worked_example(tile_shape, thread_shape, thread):
    return [(1, 0), (3, 0), (1, 3), (3, 3)]


def elements_calls_the_switched_off_partition(tile_shape, thread_shape, thread):
    part = cute.local_partition(cute.make_identity_tensor(tile_shape), cute.make_layout(thread_shape), thread)
    return [part[i] for i in range(cute.size(part))]


# ---- ch04.thread_layout_for_picture ----

def thread_layout_for(picture):
    threads_n = next(n for n in range(1, len(picture[0]) + 1)
                     if n == len(picture[0]) or picture[0][n] == picture[0][0])
    threads_m = next(m for m in range(1, len(picture) + 1) if m == len(picture) or picture[m][0] == picture[0][0])
    return cute.make_layout((threads_m, threads_n), stride=(picture[1 % threads_m][0] if threads_m > 1 else 1,
                                                          picture[0][1 % threads_n] if threads_n > 1 else 1))


def thread_layout_always_column_major(picture):
    return cute.make_layout(thread_layout_for(picture).shape)


def thread_layout_always_row_major(picture):
    shape = thread_layout_for(picture).shape
    return cute.make_layout(shape, stride=(shape[1], 1))


def thread_layout_transposed(picture):
    layout = thread_layout_for(picture)
    return cute.make_layout((layout.shape[1], layout.shape[0]), stride=(layout.stride[1], layout.stride[0]))


def thread_layout_one_dimensional(picture):
    return cute.make_layout(cute.size(thread_layout_for(picture)))


def thread_layout_hard_coded_worked_example(picture):
    return cute.make_layout((2, 3), stride=(3, 1))


# ---- ch04.gemm_tiles (B stored (K, N)) ----

def gemm_tiles(mA, mB, mC, tiler, m, n):
    blk_m, blk_n, blk_k = tiler
    return (cute.local_tile(mA, (blk_m, blk_k), (m, None)),
            cute.local_tile(mB, (blk_k, blk_n), (None, n)),
            cute.local_tile(mC, (blk_m, blk_n), (m, n)))


def gemm_tiles_with_proj_for_a_and_c(mA, mB, mC, tiler, m, n):
    """Right too: proj for A and C (their modes follow the tiler's order), B's own tiler."""
    coordinate = (m, n, None)
    return (cute.local_tile(mA, tiler, coordinate, proj=(1, None, 1)),
            cute.local_tile(mB, (tiler[2], tiler[1]), (None, n)),
            cute.local_tile(mC, tiler, coordinate, proj=(1, 1, None)))


def gemm_worked_proj_for_b(mA, mB, mC, tiler, m, n):
    coordinate = (m, n, None)
    return (cute.local_tile(mA, tiler, coordinate, proj=(1, None, 1)),
            cute.local_tile(mB, tiler, coordinate, proj=(None, 1, 1)),
            cute.local_tile(mC, tiler, coordinate, proj=(1, 1, None)))


def gemm_b_coordinate_in_n_k_order(mA, mB, mC, tiler, m, n):
    gA, _, gC = gemm_tiles(mA, mB, mC, tiler, m, n)
    return gA, cute.local_tile(mB, (tiler[2], tiler[1]), (n, None)), gC


def gemm_b_tiler_in_n_k_order(mA, mB, mC, tiler, m, n):
    gA, _, gC = gemm_tiles(mA, mB, mC, tiler, m, n)
    return gA, cute.local_tile(mB, (tiler[1], tiler[2]), (None, n)), gC


def gemm_m_and_n_swapped(mA, mB, mC, tiler, m, n):
    return gemm_tiles(mA, mB, mC, tiler, n, m)


def gemm_only_the_first_k_tile(mA, mB, mC, tiler, m, n):
    blk_m, blk_n, blk_k = tiler
    return (cute.local_tile(mA, (blk_m, blk_k), (m, 0)), cute.local_tile(mB, (blk_k, blk_n), (0, n)),
            cute.local_tile(mC, (blk_m, blk_n), (m, n)))


def gemm_c_keeps_every_column_tile(mA, mB, mC, tiler, m, n):
    gA, gB, _ = gemm_tiles(mA, mB, mC, tiler, m, n)
    return gA, gB, cute.local_tile(mC, tiler[:2], (m, None))


def gemm_hard_coded_worked_example(mA, mB, mC, tiler, m, n):
    return gemm_worked_proj_for_b(mA, mB, mC, (16, 8, 4), 1, 2)
