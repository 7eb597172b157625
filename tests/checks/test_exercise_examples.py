"""An exercise's examples agree with its model answer and its check.

Every exercise states one example (`Exercise.example`, shown with the exercise) and many chapters give one in the
exercise's text (an input and its answer, or a rule such as "`8 * warps_n` columns apart"). For each exercise,
EXAMPLES below runs that example through the model answer (the function between the chapter's `### BEGIN
SOLUTION` markers, solutions/NN_topic.py) and through the check: the model answer gives what the example says,
and the check's reference criteria pass it on the example's own input. Each entry also names the example text
it tests, so that an example changed in the chapter or the check without its test fails here.
"""
import ast
import dataclasses
import pathlib
import re

import pytest

from cutekit import cute
from cutekit.checks import grading
from cutekit.checks.registry import exercise as find_exercise
from cutekit.checks.registry import exercises
from cutekit.cute.nvgpu import warpgroup
from cutekit.use import using

from simulated import kernels_on_simulator, solution_code

SOLUTIONS = pathlib.Path(__file__).parents[2] / "solutions"
CHAPTER_FILES = {path.stem[:2]: path for path in SOLUTIONS.glob("[0-9][0-9]_*.py")}


def chapter_text(exercise_id) -> str:
    """The chapter's prose, whitespace collapsed (the exercise texts' examples are looked up in it)."""
    text = CHAPTER_FILES[exercise_id[2:4]].read_text()
    prose = [line[2:] for line in text.splitlines() if line.startswith("# ") or line == "#"]
    return " ".join(" ".join(prose).split())


def model_answer(exercise_id):
    """The function the chapter passes to check(exercise_id, ...), defined from the chapter's source with
    cutekit's algebra as `cute` (a host-side answer: the kernel answers are built from their source below)."""
    tree = ast.parse(CHAPTER_FILES[exercise_id[2:4]].read_text())
    name = next(node.args[1].id for node in ast.walk(tree) if isinstance(node, ast.Call)
                and getattr(node.func, "id", "") == "check" and node.args and
                getattr(node.args[0], "value", None) == exercise_id)
    definition = next(node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name == name)
    from cutekit.cute import memory
    from cutekit.cute.nvgpu import OperandMajorMode, tcgen05
    from cutekit.cute.utils import blackwell_helpers
    namespace = {"cute": cute, "warpgroup": warpgroup, "memory": memory, "OperandMajorMode": OperandMajorMode,
                 "blackwell_helpers": blackwell_helpers, "tcgen05": tcgen05}
    exec(compile(ast.Module([definition], []), f"<{exercise_id} model answer>", "exec"), namespace)  # noqa: S102
    return namespace[name]


def failed_criteria(exercise_id, answer, case) -> list:
    """The reference criteria the check fails `answer` on, asked `case` only (in this process: an `ask` that
    switches `cutlass` to the simulator, as it may in its sandbox, has it switched back after)."""
    exercise = find_exercise(exercise_id)
    with using("sim"):
        try:
            outcome = grading.Outcome(case, value=exercise.ask(answer, case))
        except Exception as error:  # noqa: BLE001
            outcome = grading.Outcome(case, error=f"{type(error).__name__}: {error}")
    context = grading.Context(exercise, 0, (outcome,), answer)
    verdicts = [(c.name, c.judge(context)) for c in exercise.criteria if c.tier == "reference"]
    return [f"{name}: {verdict.hint}" for name, verdict in verdicts if not verdict.passed]


def graded_on(exercise_id, answer, case, monkeypatch) -> list:
    """The same for an answer that runs kernels: the check grades it on `case` alone, in its sandbox."""
    monkeypatch.setenv("CUTEKIT_TIERS", "reference")
    exercise = dataclasses.replace(find_exercise(exercise_id), cases=lambda rng: [case])
    result = grading.grade(exercise, answer, 0)
    return [f"{c.name}: {c.hint}" for c in result.criteria if c.tier == "reference" and c.status != "passed"]


def owner_picture(tv, rows, columns):
    """owner[m][n] = (thread, value) holding tile element (m, n) of a column-major tile."""
    owner = [[None] * columns for _ in range(rows)]
    for t in range(cute.size(tv, mode=[0])):
        for v in range(cute.size(tv, mode=[1])):
            index = tv((t, v))
            owner[index % rows][index // rows] = (t, v)
    return tuple(tuple(row) for row in owner)


# ---- the examples, exercise by exercise: (the example= text, snippets of the chapter's exercise text, a test) ---

def ch00_predict(answer, accepts, monkeypatch):
    lines = answer((1, 1, 1), (2, 1, 1))
    assert lines == ['block (0,0,0) thread (0,0,0)', 'block (0,0,0) thread (1,0,0)']
    assert accepts({"grid": (1, 1, 1), "block": (2, 1, 1)}) == []


def ch01_layout_for(answer, accepts, monkeypatch):
    for M, N, B in [(2, 6, 3), (4, 8, 2), (3, 5, 4)]:
        layout = answer(M, N, B)
        assert all(layout((m, n, b)) == b * M * N + m * N + n for m in range(M) for n in range(N) for b in range(B))
        assert accepts({"M": M, "N": N, "B": B}) == []


def ch01_picture(answer, accepts, monkeypatch):
    assert str(answer(((0, 1, 2), (3, 4, 5)))) == "(2,3):(3,1)"
    assert accepts({"grid": ((0, 1, 2), (3, 4, 5)), "_strides": (3, 1), "_kind": "row"}) == []


def ch01_index_of(answer, accepts, monkeypatch):
    assert answer((4, (2, 3)), (2, (1, 8)), (1, (1, 2))) == 19
    assert accepts({"kind": "hierarchical", "shape": (4, (2, 3)), "stride": (2, (1, 8)), "coordinate": (1, (1, 2))}) == []


def ch01_coalesced(answer, accepts, monkeypatch):
    assert str(answer((2, (1, 6)), (1, (6, 2)))) == "12:1"
    assert accepts({"kind": "merge", "shape": (2, (1, 6)), "stride": (1, (6, 2))}) == []


def ch01_transposer(answer, accepts, monkeypatch):
    for M, N, B in [(2, 6, 3), (4, 3, 2)]:
        A = cute.make_layout((M, N, B), stride=(N, 1, M * N))
        view = cute.composition(A, answer(M, N, B))
        assert all(view((n, m, b)) == A((m, n, b)) for m in range(M) for n in range(N) for b in range(B))
        assert accepts({"M": M, "N": N, "B": B}) == []


BLOG_TV = cute.make_layout(((2, 2), (2, 3)), stride=((2, 12), (1, 4)))


def ch02_tv_from_picture(answer, accepts, monkeypatch):
    owner = owner_picture(BLOG_TV, 4, 6)
    assert str(answer(owner, (2, 2), (2, 3))) == "((2,2),(2,3)):((2,12),(1,4))"
    assert accepts({"owner": owner, "thread_shape": (2, 2), "value_shape": (2, 3), "_stride": ((2, 12), (1, 4))}) == []


def ch02_tiler_for(answer, accepts, monkeypatch):
    threads = cute.make_layout(((2, 4), 8), stride=((32, 8), 1))
    assert answer(threads, cute.make_layout((2, 4), stride=(1, 2))) == (16, 32)
    assert accepts({"threads": (((2, 4), 8), ((32, 8), 1)), "values": ((2, 4), (1, 2))}) == []


def ch02_owned_by(answer, accepts, monkeypatch):
    assert answer(BLOG_TV, (4, 6), 2) == [(0, 3), (1, 3), (0, 4), (1, 4), (0, 5), (1, 5)]
    assert accepts({"shape": ((2, 2), (2, 3)), "stride": ((2, 12), (1, 4)), "tiler": (4, 6), "thread": 2}) == []


def ch02_elementwise_tv(answer, accepts, monkeypatch):
    tiler, tv = answer(16, 2, 4)
    assert tiler == (8, 256) and str(tv) == "((32,2),(8,4)):((64,4),(8,1))"
    assert accepts({"bits": 16, "thread_rows": 2, "value_rows": 4}) == []


def ch03_zipped_by_hand(answer, accepts, monkeypatch):
    A = cute.make_layout((12, 8, 3), stride=(8, 1, 96))
    tiler = (cute.make_layout(3, stride=2), cute.make_layout(2, stride=1))
    assert str(answer(A, tiler)) == "((3,2),((2,2),4,3)):((16,1),((8,48),2,96))"
    assert accepts({"A": ((12, 8, 3), (8, 1, 96)), "tiler": ((3, 2), (2, 1))}) == []


def ch03_tiler_from_picture(answer, accepts, monkeypatch):
    picture = tuple(tuple((n // 3) * 2 + m // 2 for n in range(6)) for m in range(4))     # 2x3 blocks of a 4x6
    tiler = answer(picture)
    assert [str(t) if not isinstance(t, int) else t for t in tiler] in (["2:1", "3:1"], [2, 3])
    assert accepts({"picture": picture, "_tiler": ((2, 1), (3, 1))}) == []


def ch03_zipped_text(answer, accepts, monkeypatch):
    assert answer((8, 12), (1, 8), (4, 3)) == "((4,3),(2,4)):((1,8),(4,24))"
    assert accepts({"shape": (8, 12), "stride": (1, 8), "tiler": (4, 3)}) == []


def ch03_block_tile(answer, accepts, monkeypatch):
    tile = answer(cute.make_identity_tensor((10, 12, 3)), (4, 8), 13)
    assert str(tile) == "tensor<(4,0,2) o (4,8):(1@0,1@1)>" and tile[0] == (4, 0, 2)
    assert accepts({"shape": (10, 12, 3), "tiler": (4, 8), "block": 13}) == []


def ch03_inside(answer, accepts, monkeypatch):
    mask = answer((10, 12), ((4, 2), (8, 1)), 3)
    assert mask == [[i == 0 for j in range(8)] for i in range(4)]
    assert accepts({"shape": (10, 12), "tiler": ((4, 2), (8, 1)), "block": 3}) == []


def ch04_tile_of(answer, accepts, monkeypatch):
    mA = cute.make_identity_tensor((64, 32))
    assert str(answer(mA, (16, 8, 4), (1, 2, None), (1, None, 1))) == "tensor<(16,0) o (16,4,8):(1@0,1@1,4@1)>"
    assert accepts({"shape": (64, 32), "tiler": (16, 8, 4), "coord": (1, 2, None), "proj": (1, None, 1)}) == []


def ch04_elements_of(answer, accepts, monkeypatch):
    assert answer((4, 6), (2, 3), 1) == [(1, 0), (3, 0), (1, 3), (3, 3)]
    assert accepts({"tile_shape": (4, 6), "thread_shape": (2, 3), "thread": 1}) == []


def ch04_thread_layout(answer, accepts, monkeypatch):
    picture = ((0, 1, 2, 0, 1, 2), (3, 4, 5, 3, 4, 5), (0, 1, 2, 0, 1, 2), (3, 4, 5, 3, 4, 5))
    assert str(answer(picture)) == "(2,3):(3,1)"
    assert accepts({"picture": picture, "_threads": ((2, 3), (3, 1)), "_order": "row"}) == []


def ch04_gemm_tiles(answer, accepts, monkeypatch):
    tiles = answer(cute.make_identity_tensor((64, 32)), cute.make_identity_tensor((32, 48)),
                   cute.make_identity_tensor((64, 48)), (16, 8, 4), 1, 2)
    assert str(tiles[1]) == "tensor<(0,16) o (4,8,8):(1@0,1@1,4@0)>"
    assert accepts({"M": 64, "N": 48, "K": 32, "tiler": (16, 8, 4), "m": 1, "n": 2}) == []


def ch05_tiled_copy_for(answer, accepts, monkeypatch):
    tiled_copy = answer((4, 32), (1, 4), cute.Float32)
    assert str(tiled_copy.layout_tv_tiled) == "((32,4),4):((16,1),4)"
    assert tuple(cute.size(t) if not isinstance(t, int) else t for t in tiled_copy.tiler_mn) == (4, 128)
    assert accepts({"thread_shape": (4, 32), "value_shape": (1, 4), "dtype": "Float32"}) == []


def ch05_partition_shape(answer, accepts, monkeypatch):
    assert answer((4, 32), (1, 4), 4, (4, 512)) == ((4, 1), 1, 4)
    assert accepts({"thread_shape": (4, 32), "value_shape": (1, 4), "vector": 4, "tile_shape": (4, 512)}) == []


def ch05_cache_key(answer, accepts, monkeypatch):
    torch = pytest.importorskip("torch")
    assert answer(torch.zeros(8, 64)) == answer(torch.zeros(32, 64)) != answer(torch.zeros(8, 68))
    assert accepts({"M": (8, 32, 8), "N": 64, "other_N": 68}) == []


def ch06_ref_to_src(answer, accepts, monkeypatch):
    # destination lane 9, element 2 is index 9 + 32 * 2; source index 42 is lane 42 % 32, element 42 // 32
    index = answer(4, False, True)(9 + 32 * 2)
    assert (index, index % 32, index // 32) == (42, 10, 1)
    assert accepts({"num_matrices": 4, "load_transpose": False, "store_transpose": True}) == []


def ch06_lands_in(answer, accepts, monkeypatch):
    assert [tuple(holder) for holder in answer("B", 20, 5)] == [(18, 2, 1), (50, 2, 1)]
    assert accepts({"operand": "B", "row": 20, "k": 5}) == []


def ch06_ldmatrix_for(answer, accepts, monkeypatch):
    assert answer("B", (16, 8, 16), (16, 8, 16)) == 2
    assert accepts({"operand": "B", "tile_mnk": (16, 8, 16), "atom_mnk": (16, 8, 16)}) == []


def ch07_tiled_mma(answer, accepts, monkeypatch):
    text = str(answer(4, 2))
    assert "Thr Layout VMNK: (32,4,2,1):(1,64,32,0)" in text and "Permutation MNK: (64:1,32:1,16:1)" in text
    for warps_m, warps_n in [(4, 2), (2, 2), (2, 4), (1, 1), (3, 3)]:
        tiled_mma = answer(warps_m, warps_n)
        columns = cute.make_identity_tensor((16 * warps_m, 16 * warps_n))
        for warp in range(warps_m * warps_n):                   # each warp's two n8 atoms: 8 * warps_n apart
            mine = tiled_mma.get_slice(32 * warp).partition_C(columns)
            starts = sorted({mine[i][1] for i in range(cute.size(mine))})[::2]
            assert len(starts) == 2 and starts[1] - starts[0] == 8 * warps_n, (warps_m, warps_n, warp, starts)
        assert accepts({"warps_m": warps_m, "warps_n": warps_n}) == []


def ch07_swizzle(answer, accepts, monkeypatch):
    assert answer(64, 16) == (3, 3, 3) and answer(32, 16) == (2, 3, 3)
    assert accepts({"row_elements": 64, "element_bits": 16}) == [] and \
        accepts({"row_elements": 32, "element_bits": 16}) == []


def ch07_schedule(answer, accepts, monkeypatch):
    assert answer(6, 4, 2) == [(0, 2, 2), (1, 3, 3), (2, 0, 4), (3, 1, 5), (0, None, None), (1, None, None)]
    assert accepts({"k_tiles": 6, "stages": 4, "ahead": 2}) == []
    # section 6's 3 stages, 2 ahead: what its cell printed
    assert answer(5, 3, 2) == [(0, 2, 2), (1, 0, 3), (2, 1, 4), (0, None, None), (1, None, None)]
    assert accepts({"k_tiles": 5, "stages": 3, "ahead": 2}) == []


def ch07_s2r_copy(answer, accepts, monkeypatch):
    atom = cute.nvgpu.warp.MmaF16BF16Op(cute.Float16, cute.Float32, (16, 8, 16))
    tiled_mma = cute.make_tiled_mma(atom, cute.make_layout((2, 2, 1)), permutation_mnk=(32, 32, 16))
    copy = answer(tiled_mma, "A", "MN")
    assert copy.op == cute.nvgpu.warp.LdMatrix8x8x16bOp(True, 4)
    assert accepts({"warps_m": 2, "warps_n": 2, "atoms_n": 2, "operand": "A", "major": "MN"}) == []
    # the statement's case no cell shows: B of section 3's unpermuted TiledMMA (one n8 atom per warp)
    unpermuted = cute.make_tiled_mma(atom, cute.make_layout((2, 2, 1)))
    assert answer(unpermuted, "B", "K").op == cute.nvgpu.warp.LdMatrix8x8x16bOp(False, 2)


def ch08_smem_layout(answer, accepts, monkeypatch):
    layout = answer(128, 64, cute.Float16, "K", 4)
    assert str(layout) == "S<3,4,3> o 0 o ((8,16),(64,1),(1,4)):((64,512),(1,0),(0,8192))"
    assert accepts({"mn": 128, "k": 64, "dtype": "Float16", "major": "K", "stages": 4}) == []


def ch08_tma_plan(answer, accepts, monkeypatch):
    assert answer(128, 256, 64, 2, 2, cute.Float16) == {"A": (64, 64), "B": (128, 64), "expect_tx": 49152}
    assert accepts({"bm": 128, "bn": 256, "bk": 64, "cluster_m": 2, "cluster_n": 2, "dtype": "Float16"}) == []
    # the chapter's kernel: CLUSTER_M = 2, A not shared
    assert answer(128, 256, 64, 2, 1, cute.Float16) == {"A": (128, 64), "B": (128, 64), "expect_tx": 49152}
    assert accepts({"bm": 128, "bn": 256, "bk": 64, "cluster_m": 2, "cluster_n": 1, "dtype": "Float16"}) == []


def ch08_stages(answer, accepts, monkeypatch):
    assert answer(128, 256, 64, cute.Float16, cute.Float16, True) == 4
    assert accepts({"bm": 128, "bn": 256, "bk": 64, "dtype": "Float16", "c_dtype": "Float16", "reuse": True}) == []


def ch09_accumulator_stages(answer, accepts, monkeypatch):
    from cutekit.cute.nvgpu import tcgen05
    assert answer(128, 96, cute.Float16, cute.Float32, tcgen05.CtaGroup.ONE, 64) == \
        {"instruction": (128, 96, 16), "stages": 4}
    assert accepts({"bm": 128, "bn": 96, "ab": "Float16", "acc": "Float32", "cta_group": "ONE", "other": 64}) == []


def ch09_ab_stages(answer, accepts, monkeypatch):
    from cutekit.cute.nvgpu import tcgen05
    assert answer(256, 96, 64, cute.Float16, tcgen05.CtaGroup.TWO, 16384) == {"A": 16384, "B": 6144, "stages": 9}
    assert accepts({"bm": 256, "bn": 96, "bk": 64, "dtype": "Float16", "cta_group": "TWO", "reserved": 16384}) == []


# the kernel exercises: the model kernels, from the chapter's source, graded on the example's input in the sandbox

KERNEL_SOURCES = {
    "ch04.add_with_tails": ("04_local_tile_partition", "@cute.kernel\ndef strip_kernel", 'check("ch04.add_with_tails"',
                            "add_strips"),
    "ch05.tiled_copy_row_sum": ("05_tiled_copy", "@cute.kernel\ndef two_rows_kernel", 'check("ch05.tiled_copy_row_sum"',
                                "two_rows_per_warp"),
    "ch05.sum_dim0": ("05_tiled_copy", "@cute.kernel\ndef column_sum_kernel", 'check("ch05.sum_dim0"', "sum_dim0"),
    "ch06.s2r_k_block": ("06_ldmatrix_retile", "@cute.kernel\ndef s2r_kernel", 'check("ch06.s2r_k_block"', "load_k_block"),
    "ch07.main_loop": ("07_sgemm", "def main_loop", 'check("ch07.main_loop"', "main_loop"),
    "ch08.mbarrier_phases": ("08_hopper_gemm", "def producer_loop", 'check("ch08.mbarrier_phases"', "producer_loop"),
    "ch08.wgmma_main_loop": ("08_hopper_gemm", "def consumer_loop", 'check("ch08.wgmma_main_loop"', "consumer_loop"),
    "ch09.mma_warp_loop": ("09_blackwell", "def mma_loop", 'check("ch09.mma_warp_loop"', "mma_loop"),
    "ch09.tmem_epilogue": ("09_blackwell", "def scaled_epilogue", 'check("ch09.tmem_epilogue"', "scaled_epilogue"),
    "ch09.capstone": ("09_blackwell", "import cutlass.experimental.primitives as primitives\nimport cutlass.utils.blackwell_helpers",
                      'check("ch09.capstone"', "gemm_bias_relu"),
    "ch05.capstone_softmax": ("05_tiled_copy", "### BEGIN SOLUTION (placeholder: pass)\n@cute.kernel",
                              'check("ch05.capstone_softmax"', "softmax_rows"),
    "ch07.capstone_gemm": ("07_sgemm", "BM, BN, BK, STAGES = 128, 128, 32, 4", 'check("ch07.capstone_gemm"', "gemm"),
    "ch08.capstone": ("08_hopper_gemm", "BM, BN, BK, STAGES = 128, 256, 64, 4      # the chapter's tile: two", 'check("ch08.capstone"',
                      "gemm_bias_relu"),
}


def kernel_answer(exercise_id, folder):
    chapter, start, end, name = KERNEL_SOURCES[exercise_id]
    source = ("import cutlass\nimport cutlass.cute as cute\nimport cutlass.experimental.primitives as primitives\n"
              "from cutlass.cute.nvgpu import cpasync, tcgen05, warpgroup\n\n"
              + solution_code(chapter, start, end))
    return kernels_on_simulator(source, exercise_id.replace(".", "_"), folder), name


def ch04_add_strips(answer, accepts, monkeypatch):
    assert accepts({"M": 37, "N": 300, "kind": "ragged"}) == []


def ch05_two_rows(answer, accepts, monkeypatch):
    assert accepts({"M": 9, "N": 300, "kind": "ragged"}) == []


def ch05_sum_dim0(answer, accepts, monkeypatch):
    assert accepts({"M": 6, "N": 1000, "kind": "ragged"}) == []


def ch06_load_k_block(answer, accepts, monkeypatch):
    assert accepts({"k_block": 1, "_seed": 0}) == []


def ch07_main_loop(answer, accepts, monkeypatch):
    assert accepts({"k_tiles": 1, "_data": 0}) == []


def ch08_producer(answer, accepts, monkeypatch):
    from cutekit.checks import ch08_hopper
    assert ch08_hopper.ROLES["ch08.mbarrier_phases"] == "produce"
    assert accepts({"M": 11, "N": 72, "K": 128, "STAGES": 3, "BN": 128, "_data": 0}) == []


def ch08_consumer(answer, accepts, monkeypatch):
    from cutekit.checks import ch08_hopper
    assert ch08_hopper.ROLES["ch08.wgmma_main_loop"] == "consume"
    assert accepts({"M": 11, "N": 72, "K": 136, "STAGES": 3, "BN": 128, "_data": 0}) == []


def ch09_mma_loop(answer, accepts, monkeypatch):
    from cutekit.checks import blackwell_kernels
    assert blackwell_kernels.ROLES["ch09.mma_warp_loop"] == "mma_loop"
    assert accepts({"M": 128, "N": 128, "K": 128, "_data": 0}) == []


def ch09_scaled_epilogue(answer, accepts, monkeypatch):
    from cutekit.checks import blackwell_kernels
    assert blackwell_kernels.ROLES["ch09.tmem_epilogue"] == "scaled_epilogue"
    assert accepts({"M": 128, "N": 256, "K": 64, "_data": 0}) == []


def ch09_capstone(answer, accepts, monkeypatch):
    assert accepts({"M": 100, "N": 200, "K": 40, "_shape": 0, "_data": 0}) == []


def ch01_composed(answer, accepts, monkeypatch):
    assert str(answer(cute.make_layout((4, 8), stride=(8, 1)), cute.make_layout(4, stride=2))) == "(2,2):(16,1)"


def ch01_complement(answer, accepts, monkeypatch):
    assert str(answer((2,), (3,), 10)) == "(3,2):(1,6)"


def ch01_right_inverse(answer, accepts, monkeypatch):
    assert str(answer((4, 8), (8, 1))) == "(8,4):(4,1)"


def ch05_softmax(answer, accepts, monkeypatch):
    assert accepts({"M": 9, "N": 601, "shift": 0.0, "kind": "ragged"}) == []


def ch07_capstone(answer, accepts, monkeypatch):
    assert accepts({"runs": [{"M": 72, "N": 136, "K": 40, "alpha": 1.5, "beta": -0.5, "data": 0}]}) == []


def ch08_capstone(answer, accepts, monkeypatch):
    assert accepts({"M": 100, "N": 328, "K": 40, "_shape": 0, "_data": 0}) == []


EXAMPLES = {
    "ch00.predict_printf": ("predict((1,1,1), (2,1,1)) == ['block (0,0,0) thread (0,0,0)', 'block (0,0,0) thread "
                            "(1,0,0)']", [], ch00_predict),
    "ch01.layout_from_grid": ("layout_for(M, N, B)(m, n, b) == b*M*N + m*N + n",
                              ["element `(m, n)` of matrix `b` sits at offset `b * M * N + m * N + n`"], ch01_layout_for),
    "ch01.compose_by_hand": ("composed((4,8):(8,1), 4:2) gives (2,2):(16,1)", [], ch01_composed),
    "ch01.complement_by_hand": ("complement_of((2,), (3,), 10) gives (3,2):(1,6)", [], ch01_complement),
    "ch01.right_inverse_by_hand": ("right_inverse_of((4, 8), (8, 1)) gives (8,4):(4,1)", [], ch01_right_inverse),
    "ch01.layout_from_picture": ("layout_from_picture(((0, 1, 2), (3, 4, 5))) prints (2,3):(3,1)", [], ch01_picture),
    "ch01.index_of_coordinate": ("index_of((4,(2,3)), (2,(1,8)), (1,(1,2))) is 19",
                                 ["`index_of((4,(2,3)), (2,(1,8)), (1,(1,2)))` is 19"], ch01_index_of),
    "ch01.coalesce_by_hand": ("coalesced((2,(1,6)), (1,(6,2))) prints 12:1",
                              ["`coalesced((2,(1,6)), (1,(6,2)))` prints `12:1`"], ch01_coalesced),
    "ch01.transpose_by_composition": ("composition(A, transposer(M, N, B))(n, m, b) == A(m, n, b)",
                                      ["`cute.composition(A, X)` at `(n, m, b)` reads A at `(m, n, b)`"],
                                      ch01_transposer),
    "ch02.tv_from_picture": ("the blog's 4x6 picture with thread_shape (2,2), value_shape (2,3) gives "
                             "((2,2),(2,3)):((2,12),(1,4))", [], ch02_tv_from_picture),
    "ch02.tiler_for": ("tiler_for(((2,4),8):((32,8),1), (2,4):(1,2)) is (16, 32)",
                       ["`tiler_for(thread_layout, value_layout)` gives `(16, 32)`"], ch02_tiler_for),
    "ch02.thread_owns": ("owned_by(((2,2),(2,3)):((2,12),(1,4)), (4, 6), 2) is [(0, 3), (1, 3), (0, 4), (1, 4), "
                         "(0, 5), (1, 5)]",
                         ["`owned_by(tv, (4, 6), 2)` is `[(0, 3), (1, 3), (0, 4), (1, 4), (0, 5), (1, 5)]`"],
                         ch02_owned_by),
    "ch02.layout_tv_for_dtype": ("elementwise_tv(16, 2, 4) is ((8, 256), ((32,2),(8,4)):((64,4),(8,1)))",
                                 ["`elementwise_tv(16, 2, 4)` must give what step 4 printed for 2 rows of threads and "
                                  "fp16 values: the tiler `(8, 256)` and `((32,2),(8,4)):((64,4),(8,1))`"],
                                 ch02_elementwise_tv),
    "ch03.logical_divide_by_hand": ("zipped_by_hand((12,8,3):(8,1,96), (3:2, 2:1)) prints ((3,2),((2,2),4,3)):"
                                    "((16,1),((8,48),2,96))", [], ch03_zipped_by_hand),
    "ch03.tiler_from_picture": ("a 4x6 picture of 2x3 blocks gives (2:1, 3:1)", [], ch03_tiler_from_picture),
    "ch03.predict_zipped": ("zipped_text((8, 12), (1, 8), (4, 3)) is ((4,3),(2,4)):((1,8),(4,24))",
                            ["`zipped_text((8, 12), (1, 8), (4, 3))` is `((4,3),(2,4)):((1,8),(4,24))`"],
                            ch03_zipped_text),
    "ch03.slice_block": ("block_tile(make_identity_tensor((10, 12, 3)), (4, 8), 13) is tensor<(4,0,2) o "
                         "(4,8):(1@0,1@1)>",
                         ["`block_tile(cute.make_identity_tensor((10, 12, 3)), (4, 8), 13)` is "
                          "`tensor<(4,0,2) o (4,8):(1@0,1@1)>`"], ch03_block_tile),
    "ch03.tile_predicate": ("inside((10, 12), ((4, 2), (8, 1)), 3) is True in the tile's first row only",
                            ["`inside((10, 12), ((4, 2), (8, 1)), 3)` is True in the tile's first row only"],
                            ch03_inside),
    "ch04.local_tile_by_hand": ("tile_of(make_identity_tensor((64, 32)), (16, 8, 4), (1, 2, None), (1, None, 1)) is "
                                "tensor<(16,0) o (16,4,8):(1@0,1@1,4@1)>",
                                ["`tile_of(mA, (16, 8, 4), (1, 2, None), (1, None, 1))`, which prints "
                                 "`tensor<(16,0) o (16,4,8):(1@0,1@1,4@1)>`"], ch04_tile_of),
    "ch04.thread_elements": ("elements_of((4, 6), (2, 3), 1) is [(1, 0), (3, 0), (1, 3), (3, 3)]", [],
                             ch04_elements_of),
    "ch04.thread_layout_for_picture": ("a 4x6 picture with first row 0 1 2 0 1 2 and second row 3 4 5 3 4 5 gives "
                                       "(2,3):(3,1)", [], ch04_thread_layout),
    "ch04.gemm_tiles": ("A 64x32, B 32x48, tiler (16, 8, 4), block (1, 2): gB is tensor<(0,16) o "
                        "(4,8,8):(1@0,1@1,4@0)>", [], ch04_gemm_tiles),
    "ch04.add_with_tails": ("add_strips on a 37x300 tensor equals torch.add", [], ch04_add_strips),
    "ch05.tiled_copy_for": ("tiled_copy_for((4, 32), (1, 4), Float32) has TV layout ((32,4),4):((16,1),4) and tile "
                            "(4, 128)", [], ch05_tiled_copy_for),
    "ch05.partition_shape": ("partition_shape((4, 32), (1, 4), 4, (4, 512)) == ((4, 1), 1, 4)", [],
                             ch05_partition_shape),
    "ch05.tiled_copy_row_sum": ("two_rows_per_warp on a 9x300 tensor equals torch.sum(x, dim=-1)", [], ch05_two_rows),
    "ch05.cache_key": ("cache_key(torch.zeros(8, 64)) == cache_key(torch.zeros(32, 64)) != "
                       "cache_key(torch.zeros(8, 68))", [], ch05_cache_key),
    "ch05.sum_dim0": ("sum_dim0 on a 6x1000 tensor equals torch.sum(x, dim=0); nothing outside mOut is written", [],
                      ch05_sum_dim0),
    "ch06.ref_to_src": ("written_from(4, False, True) sends destination lane 9, element 2 (index 73) to source lane "
                        "10, element 1 (index 42)", [], ch06_ref_to_src),
    "ch06.lands_in": ("held_by('B', 20, 5) == [(18, 2, 1), (50, 2, 1)]", [], ch06_lands_in),
    "ch06.ldmatrix_for": ("ldmatrix_for('B', (16, 8, 16), (16, 8, 16)) == 2", [], ch06_ldmatrix_for),
    "ch06.s2r_k_block": ("load_k_block(B, out, 1): out[t, v] is B at partition_B(identity)[v, 0, 1] of thread t", [],
                         ch06_load_k_block),
    "ch07.tiled_mma": ("tiled_mma_for(4, 2) prints Thr Layout VMNK: (32,4,2,1):(1,64,32,0), Permutation MNK: "
                       "(64:1,32:1,16:1)", ["a warp's second n8 atom starts `8 * warps_n` columns after its first: 16 "
                                            "apart there, with 2 warps along N, and 32 apart with 4"], ch07_tiled_mma),
    "ch07.swizzle": ("swizzle_for(64, 16) == (3, 3, 3) and swizzle_for(32, 16) == (2, 3, 3): section 4's two fp16 "
                     "atoms", ["Section 4 worked out rows of 128 and 64 bytes of fp16"], ch07_swizzle),
    "ch07.pipeline_stages": ("schedule(6, 4, 2) == [(0, 2, 2), (1, 3, 3), (2, 0, 4), (3, 1, 5), (0, None, None), "
                             "(1, None, None)]",
                             ["`schedule(6, 4, 2)` is `[(0, 2, 2), (1, 3, 3), (2, 0, 4), (3, 1, 5), (0, None, None), "
                              "(1, None, None)]`", "For section 6's 3 stages, `schedule(5, 3, 2)` is what it printed"],
                             ch07_schedule),
    "ch07.s2r_copy": ("s2r_copy(tiled_mma, 'A', 'MN') on the kernel's TiledMMA uses LdMatrix8x8x16bOp(True, 4): "
                      "section 5's s2r_A_m_major",
                      ["`s2r_copy(tiled_mma, \"A\", \"MN\")` is section 5's `s2r_A_m_major`"], ch07_s2r_copy),
    "ch08.smem_layout": ("smem_layout(128, 64, Float16, 'K', 4) is S<3,4,3> o 0 o ((8,16),(64,1),(1,4)):((64,512),"
                         "(1,0),(0,8192))", [], ch08_smem_layout),
    "ch08.tma_plan": ("tma_plan(128, 256, 64, 2, 2, Float16) is {'A': (64, 64), 'B': (128, 64), 'expect_tx': 49152}",
                      ["`tma_plan(128, 256, 64, 2, 2, Float16)` is `{'A': (64, 64), 'B': (128, 64), 'expect_tx': "
                       "49152}`"], ch08_tma_plan),
    "ch08.stage_count": ("stages_that_fit(128, 256, 64, Float16, Float16, True) is 4", [], ch08_stages),
    "ch09.accumulator_stages": ("accumulator_stages(128, 96, Float16, Float32, CtaGroup.ONE, 64) is {'instruction': "
                                "(128, 96, 16), 'stages': 4}",
                                ["`accumulator_stages(128, 96, Float16, Float32, CtaGroup.ONE, 64)` is `{'instruction': "
                                 "(128, 96, 16), 'stages': 4}`"], ch09_accumulator_stages),
    "ch09.ab_stages": ("ab_stages(256, 96, 64, Float16, CtaGroup.TWO, 16384) is {'A': 16384, 'B': 6144, 'stages': 9}",
                       ["`ab_stages(256, 96, 64, Float16, CtaGroup.TWO, 16384)` is `{'A': 16384, 'B': 6144, "
                        "'stages': 9}`"], ch09_ab_stages),
    "ch07.main_loop": ("a single-stage 32x32 tensor-core GEMM on the simulator equals NumPy's A @ B.T", [],
                       ch07_main_loop),
    "ch08.mbarrier_phases": ("it replaces the kernel's `produce`; the consumers, the epilogue and the launch are the "
                             "chapter's", ["with your function in place of its `produce`"], ch08_producer),
    "ch05.capstone_softmax": ("softmax_rows on a 9x601 tensor equals torch.softmax(x, dim=-1); nothing outside Y "
                              "is written", [], ch05_softmax),
    "ch07.capstone_gemm": ("gemm on 72x136x40 equals alpha * (A @ B) + beta * C in fp32; its PTX has cp.async.cg, "
                           "ldmatrix (.trans for B) and mma.sync.m16n8k16", [], ch07_capstone),
    "ch08.capstone": ("M=100, N=328, K=40: D[m, n] = max(sum_k A[m, k] B[n, k] + bias[n], 0)", [], ch08_capstone),
    "ch08.wgmma_main_loop": ("it replaces the kernel's `consume`; the producer, the epilogue and the launch are the "
                             "chapter's", ["with your function in place of its `consume`"], ch08_consumer),
    "ch09.mma_warp_loop": ("it replaces the kernel's `mma_loop` (warp 0); warp 1 loads, all four warps run the epilogue",
                           ["with your function as warp 0's loop"], ch09_mma_loop),
    "ch09.capstone": ("M=100, N=200, K=40: D[m, n] = max(sum_k A[m, k] B[n, k] + bias[n], 0)", [], ch09_capstone),
    "ch09.tmem_epilogue": ("it replaces the kernel's epilogue (all four warps, thread 0-127); alpha is 0.5 in the check",
                           ["with your epilogue on the simulator"], ch09_scaled_epilogue),
}
def test_every_exercise_has_its_example_tested():
    ids = {e.id for e in exercises()}
    assert ids == set(EXAMPLES), f"untested: {sorted(ids - set(EXAMPLES))}; no such exercise: {sorted(set(EXAMPLES) - ids)}"


@pytest.mark.parametrize("exercise_id", sorted(EXAMPLES))
def test_the_example_is_what_the_model_answer_gives_and_what_the_check_accepts(exercise_id, monkeypatch, tmp_path):
    example, text, run = EXAMPLES[exercise_id]
    assert find_exercise(exercise_id).example == example, "the example changed: test the new one here"
    prose = chapter_text(exercise_id)
    for snippet in text:
        assert " ".join(snippet.split()) in prose, f"the exercise's text no longer says: {snippet}"
    if exercise_id in KERNEL_SOURCES:
        context, name = kernel_answer(exercise_id, tmp_path)
        with context as module:
            answer = getattr(module, name)
            run(answer, lambda case: graded_on(exercise_id, answer, case, monkeypatch), monkeypatch)
        return
    answer = model_answer(exercise_id)
    run(answer, lambda case: failed_criteria(exercise_id, answer, case), monkeypatch)


def test_an_example_in_an_exercise_text_is_one_the_table_tests():
    """Each "`answer(...)` is / prints / must give ..." example in a chapter's text, for the function an exercise
    asks for, is among the snippets EXAMPLES tests."""
    quoted = []
    for path in CHAPTER_FILES.values():
        source = path.read_text()
        answers = set(re.findall(r'^check\("[\w.]+", (\w+)\)', source, flags=re.MULTILINE))
        prose = " ".join(" ".join(line[2:] for line in source.splitlines() if line.startswith("# ")).split())
        quoted += [m.group(0) for m in re.finditer(r"`(\w+)\([^`]*\)` (?:is|prints|must give|gives|==)", prose)
                   if m.group(1) in answers]
    tested = " ".join(" ".join(snippet.split()) for _, text, _ in EXAMPLES.values() for snippet in text)
    untested = sorted({q for q in quoted if q not in tested})
    assert not untested, f"examples the exercise texts give that no test runs: {untested}"
    assert len(quoted) >= 5          # index_of, coalesced, tiler_for, owned_by, elementwise_tv
