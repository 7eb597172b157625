"""Chapter 06's x1 / x2 / x4 rule against the copies themselves: for every one-warp tile up to 64 in each mode
(M, N, K multiples of the MMA atom's), both operands, m16n8k16 and m16n8k8, the notebook's model answer to
`ldmatrix_for` is the largest ldmatrix whose TiledCopy (make_tiled_copy_A / make_tiled_copy_B) loads every
register of the MMA fragment once: asked of cutekit's reference algebra always, and of real CuTeDSL 4.8.1
where it is installed. `ldmatrix_fit` (thread 0's partition_S and retile) was itself checked against a full
simulation of every thread's copy for all these tiles when the rule was worked out."""
import pathlib
import warnings

import pytest

from cutekit import cute
from cutekit.cute.not_in_cutedsl import AtomDoesNotFitWarning
from cutekit.checks import ch06_ldmatrix as chapter06
from cutekit.checks.cutedsl import FakeTensor, compile_to_ptx

import answers_ch06 as answers

ATOMS = [(16, 8, 16), (16, 8, 8)]


def every_tile(atom_mnk):
    return [(operand, (m, n, k), atom_mnk) for operand in "AB" for m in range(16, 65, 16) for n in range(8, 65, 8)
            for k in range(atom_mnk[2], 65, atom_mnk[2])]


@pytest.mark.parametrize("atom_mnk", ATOMS, ids=lambda atom: "m16n8k%d" % atom[2])
def test_the_model_answer_is_the_largest_copy_that_fits_in_cutekit(atom_mnk):
    wrong = [(case, answers.model_ldmatrix_for(*case), chapter06.largest_fitting_ldmatrix(cute, *case))
             for case in every_tile(atom_mnk)]
    wrong = [entry for entry in wrong if entry[1] != entry[2]]
    assert not wrong, f"{len(wrong)} tiles disagree, e.g. {wrong[:3]}"


def test_the_rule_written_out_is_the_model_answer():
    for atom_mnk in ATOMS:
        for case in every_tile(atom_mnk):
            assert chapter06.largest_ldmatrix(*case) == answers.model_ldmatrix_for(*case), case


@pytest.mark.cutedsl
@pytest.mark.parametrize("atom_mnk", ATOMS, ids=lambda atom: "m16n8k%d" % atom[2])
def test_the_model_answer_is_the_largest_copy_that_fits_in_real_cutedsl(atom_mnk):
    pytest.importorskip("cutlass", reason="nvidia-cutlass-dsl is not installed")
    cases = every_tile(atom_mnk)
    theirs = chapter06.largest_fitting_ldmatrix_in_cutedsl(cases)
    wrong = [(case, answers.model_ldmatrix_for(*case), got) for case, got in zip(cases, theirs)
             if answers.model_ldmatrix_for(*case) != got]
    assert not wrong, f"{len(wrong)} tiles disagree, e.g. {wrong[:3]}"


@pytest.mark.cutedsl
def test_cutedsl_builds_an_x4_copy_of_b_that_does_not_fit_and_refuses_to_compile_another():
    """What the chapter says CuTeDSL 4.8.1 does: (16,8,16) compiles to one ldmatrix.x4 whose registers are
    written twice; (16,24,32) does not compile ('unable to retile')."""
    pytest.importorskip("cutlass", reason="nvidia-cutlass-dsl is not installed")
    kernel = pathlib.Path(__file__).with_name("ch06_probe_kernel.py")
    out = FakeTensor("Float16", 2, 8)
    built = compile_to_ptx(kernel, "probe", (out, "B", 16, 8, 16, 4))
    assert built.ok and built.count("ldmatrix.sync.aligned.m8n8.x4") == 1, built.error
    assert chapter06.ldmatrix_fit_in_cutedsl([("B", (16, 8, 16), (16, 8, 16), 4)]) == \
        ["retile writes some values twice"]
    refused = compile_to_ptx(kernel, "probe", (out, "B", 16, 24, 32, 4))
    assert not refused.ok and "unable to retile" in refused.error, refused.error


def simulated_copy_is_right(operand, tile_mnk, atom_mnk, num_matrices) -> bool:
    """Run the ldmatrix TiledCopy by hand, every lane and value (cutekit's reference algebra): each instruction
    gathers the block its lanes' source values address (the lowest lane naming an offset is the one the hardware
    reads), and hands lane t's destination value j the element at offset layout_dst_tv(t, j). Right when every
    register of every thread's MMA fragment receives its own element once, from inside the tile."""
    mma = cute.make_tiled_mma(cute.nvgpu.warp.MmaF16BF16Op(cute.Float16, cute.Float32, atom_mnk), (1, 1, 1),
                              permutation_mnk=tile_mnk)
    atom = cute.make_copy_atom(cute.nvgpu.warp.LdMatrix8x8x16bOp(False, num_matrices), cute.Float16)
    try:
        with warnings.catch_warnings():     # a copy that is not whole atoms is built as CuTeDSL builds it
            warnings.simplefilter("ignore", AtomDoesNotFitWarning)
            tiled = (cute.make_tiled_copy_A if operand == "A" else cute.make_tiled_copy_B)(atom, mma)
    except ValueError:
        return False
    shape = (tile_mnk[0] if operand == "A" else tile_mnk[1], tile_mnk[2])
    identity = cute.make_identity_tensor(shape)
    reads, writes = cute.size(atom.layout_src_tv, mode=[1]), cute.size(atom.layout_dst_tv, mode=[1])
    want, got, sources, registers = {}, {}, [], []
    for t in range(32):
        part = mma.get_slice(t).partition_A(identity) if operand == "A" else mma.get_slice(t).partition_B(identity)
        fragment = (mma.make_fragment_A if operand == "A" else mma.make_fragment_B)(part.shape)
        want.update({(t, fragment.layout(i)): tuple(part[i]) for i in range(cute.size(part))})
        sources.append(tiled.get_slice(t).partition_S(identity))
        registers.append(tiled.get_slice(t).retile(fragment).layout)
    if cute.size(sources[0]) // reads != cute.size(registers[0]) // writes:
        return False
    for step in range(cute.size(sources[0]) // reads):
        block = {}
        for t in range(32):
            for v in range(reads):
                block.setdefault(atom.layout_src_tv((t, v)), tuple(sources[t][step * reads + v]))
        for t in range(32):
            for j in range(writes):
                key = (t, registers[t](step * writes + j))
                if key in got or key not in want:
                    return False
                got[key] = block[atom.layout_dst_tv((t, j))]
    inside = all(0 <= m < shape[0] and 0 <= k < shape[1] for m, k in got.values())
    return got == want and inside


CHAPTER_TILES = [("B", tile, (16, 8, 16), 4) for tile in [(16, 8, 16), (16, 16, 16), (16, 8, 32), (16, 24, 16),
                                                           (16, 24, 32), (16, 8, 48)]] + \
    [("B", (16, 8, 8), (16, 8, 8), n) for n in (1, 2)] + [("A", (16, 8, 8), (16, 8, 8), n) for n in (2, 4)] + \
    [("A", (32, 8, 16), (16, 8, 16), n) for n in (1, 2, 4)]


@pytest.mark.parametrize("case", CHAPTER_TILES, ids=str)
def test_fits_means_the_simulated_copy_loads_every_register_once(case):
    assert (chapter06.ldmatrix_fit(cute, *case) == "fits") == simulated_copy_is_right(*case)
