"""Answers to chapter 00's exercise: the right one, and wrong ones each named for a mistake learners make."""


def _ids(dims, x_fastest=True):
    x_range, y_range, z_range = range(dims[0]), range(dims[1]), range(dims[2])
    if x_fastest:
        return [(x, y, z) for z in z_range for y in y_range for x in x_range]
    return [(x, y, z) for x in x_range for y in y_range for z in z_range]


def predict(grid, block):
    return [f"block ({bx},{by},{bz}) thread ({tx},{ty},{tz})" for bx, by, bz in _ids(grid) for tx, ty, tz in _ids(block)]


def predict_z_fastest(grid, block):
    return [f"block ({bx},{by},{bz}) thread ({tx},{ty},{tz})"
            for bx, by, bz in _ids(grid, False) for tx, ty, tz in _ids(block, False)]


def predict_one_block_only(grid, block):
    return [f"block (0,0,0) thread ({tx},{ty},{tz})" for tx, ty, tz in _ids(block)]


def predict_ignores_y_and_z(grid, block):
    return [f"block ({bx},0,0) thread ({tx},0,0)" for bx in range(grid[0]) for tx in range(block[0])]


def predict_swaps_grid_and_block(grid, block):
    return [f"block ({bx},{by},{bz}) thread ({tx},{ty},{tz})" for bx, by, bz in _ids(block) for tx, ty, tz in _ids(grid)]


def predict_off_by_one_range(grid, block):
    return [f"block ({bx},{by},{bz}) thread ({tx},{ty},{tz})"
            for bx, by, bz in _ids(grid) for tx, ty, tz in _ids((block[0] + 1, block[1], block[2]))]


def predict_worked_example_only(grid, block):
    return [f"block ({b},0,0) thread ({t},0,0)" for b in range(2) for t in range(4)]


def predict_returns_a_string(grid, block):
    return "\n".join(predict(grid, block))


def predict_threads_outer_blocks_inner(grid, block):
    """Every line, but thread by thread across the blocks instead of block by block."""
    return [f"block ({bx},{by},{bz}) thread ({tx},{ty},{tz})" for tx, ty, tz in _ids(block) for bx, by, bz in _ids(grid)]


def predict_counts_from_one(grid, block):
    """Ids from 1 to the size, as in a Fortran loop, instead of from 0."""
    def one_based(dims):
        return [(x + 1, y + 1, z + 1) for x, y, z in _ids(dims)]
    return [f"block ({bx},{by},{bz}) thread ({tx},{ty},{tz})" for bx, by, bz in one_based(grid)
            for tx, ty, tz in one_based(block)]


def predict_blocks_z_fastest(grid, block):
    """Threads in the right order, but blocks with z varying fastest."""
    return [f"block ({bx},{by},{bz}) thread ({tx},{ty},{tz})" for bx, by, bz in _ids(grid, False) for tx, ty, tz in _ids(block)]
