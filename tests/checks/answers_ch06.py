"""Chapter 06 answers: the model answers (taken from solutions/06_ldmatrix_retile.py, so they stay in step with
it) and wrong ones, each modelling one mistake learners make.

A real file on purpose: the cutedsl-cpu tier moves an answer to CuTeDSL by its source."""
from cutekit import cute

from simulated import solution_code

_MODEL = {}
exec(compile("from cutekit import cute\n"
             + solution_code("06_ldmatrix_retile", "def written_from(", 'check("ch06.ref_to_src"')
             + solution_code("06_ldmatrix_retile", "def held_by(", 'check("ch06.lands_in"')
             + solution_code("06_ldmatrix_retile", "def ldmatrix_for(", 'check("ch06.ldmatrix_for"'),
             "solutions/06_ldmatrix_retile.py", "exec"), _MODEL)
model_ref_to_src, model_lands_in, model_ldmatrix_for = (_MODEL["written_from"], _MODEL["held_by"],
                                                        _MODEL["ldmatrix_for"])


def _load(num_matrices, transpose):
    return cute.make_copy_atom(cute.nvgpu.warp.LdMatrix8x8x16bOp(transpose, num_matrices), cute.Float16)


def _store(num_matrices, transpose):
    return cute.make_copy_atom(cute.nvgpu.warp.StMatrix8x8x16bOp(transpose, num_matrices), cute.Float16)


def _steps(num_matrices, load_transpose, store_transpose):
    load, store = _load(num_matrices, load_transpose), _store(num_matrices, store_transpose)
    to_register = cute.composition(cute.right_inverse(store.layout_src_tv), store.layout_dst_tv)
    to_source = cute.composition(cute.right_inverse(load.layout_src_tv), load.layout_dst_tv)
    return load, store, to_register, to_source


# ---- ch06.ref_to_src: written_from(num_matrices, load_transpose, store_transpose) ----

def written_from(num_matrices, load_transpose, store_transpose):
    load = cute.make_copy_atom(cute.nvgpu.warp.LdMatrix8x8x16bOp(load_transpose, num_matrices), cute.Float16)
    store = cute.make_copy_atom(cute.nvgpu.warp.StMatrix8x8x16bOp(store_transpose, num_matrices), cute.Float16)
    to_register = cute.composition(cute.right_inverse(store.layout_src_tv), store.layout_dst_tv)
    to_source = cute.composition(cute.right_inverse(load.layout_src_tv), load.layout_dst_tv)
    return cute.composition(to_source, to_register)


ref_to_src = written_from


def written_from_the_load_alone(num_matrices, load_transpose, store_transpose):
    """Section 3's exercise of old: ldmatrix's reference -> source, the stmatrix step left out."""
    return _steps(num_matrices, load_transpose, store_transpose)[3]


def written_from_the_store_alone(num_matrices, load_transpose, store_transpose):
    return _steps(num_matrices, load_transpose, store_transpose)[2]


def written_from_the_store_step_reversed(num_matrices, load_transpose, store_transpose):
    """stmatrix's destination taken for its reference, as ldmatrix's is."""
    _, store, _, to_source = _steps(num_matrices, load_transpose, store_transpose)
    return cute.composition(to_source, cute.composition(cute.right_inverse(store.layout_dst_tv), store.layout_src_tv))


def written_from_composed_in_the_wrong_order(num_matrices, load_transpose, store_transpose):
    _, _, to_register, to_source = _steps(num_matrices, load_transpose, store_transpose)
    return cute.composition(to_register, to_source)


def written_from_section_3s_direction_twice(num_matrices, load_transpose, store_transpose):
    """Section 3's src2ref cell copied for both atoms: the same numbers as the steps composed in the wrong order."""
    load, store, _, _ = _steps(num_matrices, load_transpose, store_transpose)
    return cute.composition(cute.composition(cute.right_inverse(load.layout_dst_tv), load.layout_src_tv),
                            cute.composition(cute.right_inverse(store.layout_dst_tv), store.layout_src_tv))


def written_from_two_ldmatrix_atoms(num_matrices, load_transpose, store_transpose):
    """The store step built as the load step, from an ldmatrix atom with store_transpose."""
    to_source = _steps(num_matrices, load_transpose, store_transpose)[3]
    return cute.composition(to_source, _steps(num_matrices, store_transpose, store_transpose)[3])


def written_from_ignores_store_transpose(num_matrices, load_transpose, store_transpose):
    return written_from(num_matrices, load_transpose, load_transpose)


def written_from_ignores_load_transpose(num_matrices, load_transpose, store_transpose):
    return written_from(num_matrices, store_transpose, store_transpose)


def written_from_ignores_num_matrices(num_matrices, load_transpose, store_transpose):
    return written_from(4, load_transpose, store_transpose)


def written_from_is_the_identity(num_matrices, load_transpose, store_transpose):
    """"A round trip gives every element back": the identity on (lane, element)."""
    return cute.make_layout((32, 2 * num_matrices))


def written_from_with_cutekits_reference(num_matrices, load_transpose, store_transpose):
    """Right in cutekit, which computes an atom's reference layout (cutekit.cute.not_in_cutedsl); CuTeDSL's
    copy atoms have no such attribute."""
    from cutekit.cute import not_in_cutedsl
    load = cute.make_copy_atom(cute.nvgpu.warp.LdMatrix8x8x16bOp(load_transpose, num_matrices), cute.Float16)
    store = cute.make_copy_atom(cute.nvgpu.warp.StMatrix8x8x16bOp(store_transpose, num_matrices), cute.Float16)
    to_register = cute.composition(cute.right_inverse(not_in_cutedsl.layout_ref_tv(store)), store.layout_dst_tv)
    to_source = cute.composition(cute.right_inverse(load.layout_src_tv), not_in_cutedsl.layout_ref_tv(load))
    return cute.composition(to_source, to_register)


# ---- ch06.lands_in: held_by(operand, row, k) on section 6's 2x2 TiledMMA, (32, 32, 16) ----

def _mma_2x2():
    op = cute.nvgpu.warp.MmaF16BF16Op(cute.Float16, cute.Float32, (16, 8, 16))
    return cute.make_tiled_mma(op, (2, 2, 1), permutation_mnk=(32, 32, 16))


def _tv(operand):
    mma = _mma_2x2()
    return mma.tv_layout_A_tiled if operand == "A" else mma.tv_layout_B_tiled


def _holders(operand, index):
    tv = _tv(operand)
    return sorted((thread, value // 2, value % 2) for thread in range(128) for value in range(8)
                  if tv((thread, value)) == index)


def held_by(operand, row, k):
    """Through the right inverse and the stride-0 warp of the operand's TV layout, without a walk."""
    at = cute.right_inverse(_tv(operand))(row + 32 * k)
    thread, value = at % 128, at // 128
    other = (thread + 64) % 128 if operand == "A" else (thread ^ 32)     # A: the N warps; B: the M warps
    return sorted([(thread, value // 2, value % 2), (other, value // 2, value % 2)])


lands_in = held_by


def held_by_one_thread(operand, row, k):
    """Section 5's right inverse, one holder."""
    at = cute.right_inverse(_tv(operand))(row + 32 * k)
    return [(at % 128, (at // 128) // 2, (at // 128) % 2)]


def held_by_the_other_warp_wrong(operand, row, k):
    """Warps taken as numbered N first: the second holder 32 threads on for A, 64 for B."""
    first = held_by(operand, row, k)[0]
    step = 32 if operand == "A" else 64
    return sorted([first, ((first[0] + step) % 128, first[1], first[2])])


def held_by_lanes(operand, row, k):
    return sorted((thread % 32, register, half) for thread, register, half in held_by(operand, row, k))


def held_by_one_warps_decoding(operand, row, k):
    """Section 5's index % 32 and // 32 kept for 128 threads."""
    at = cute.right_inverse(_tv(operand))(row + 32 * k)
    return [(at % 32, (at // 32) // 2, (at // 32) % 2)]


def held_by_register_is_the_value_index(operand, row, k):
    return [(thread, 2 * register + half, half) for thread, register, half in held_by(operand, row, k)]


def held_by_half_and_register_swapped(operand, row, k):
    return sorted((thread, half, register) for thread, register, half in held_by(operand, row, k))


def held_by_a_column_of_16(operand, row, k):
    return _holders(operand, row + 16 * k)


def held_by_b_as_k_by_n(operand, row, k):
    return _holders(operand, row + 32 * k if operand == "A" else k + 16 * row)


def held_by_row_major_index(operand, row, k):
    return _holders(operand, row * 16 + k)


def held_by_hard_coded_example(operand, row, k):
    return [(18, 2, 1), (50, 2, 1)]


# ---- ch06.ldmatrix_for: ldmatrix_for(operand, tile_mnk, atom_mnk) ----

def ldmatrix_for(operand, tile_mnk, atom_mnk):
    return model_ldmatrix_for(operand, tile_mnk, atom_mnk)


def choose_by_counting_8x8_matrices(operand, tile_mnk, atom_mnk):
    """The chapter's earlier model answer: min(4, the operand tile's 8x8 matrices)."""
    rows = tile_mnk[0] if operand == "A" else tile_mnk[1]
    return min(4, (rows // 8) * (tile_mnk[2] // 8))


def choose_n16_or_k32(operand, tile_mnk, atom_mnk):
    """The chapter's earlier prose rule: x4 fits 'B with N >= 16 or K >= 32'."""
    return 4 if operand == "A" or tile_mnk[1] >= 16 or tile_mnk[2] >= 32 else 2


def choose_even_values(operand, tile_mnk, atom_mnk):
    """cutekit's make_tiled_copy_B's old test: a whole number of 8-value atoms per thread."""
    if operand == "A":
        return 4
    return 4 if (tile_mnk[1] // 8) * (tile_mnk[2] // 16) % 2 == 0 else 2


def choose_ignores_the_mma_shape(operand, tile_mnk, atom_mnk):
    return model_ldmatrix_for(operand, tile_mnk, (16, 8, 16))


def choose_x4_for_a_x2_for_b(operand, tile_mnk, atom_mnk):
    return 4 if operand == "A" else 2


def choose_uses_m_for_b(operand, tile_mnk, atom_mnk):
    return model_ldmatrix_for("A", tile_mnk, atom_mnk)


def choose_always_x4(operand, tile_mnk, atom_mnk):
    return 4
