"""Chapter 05 checks: every correct answer passes in strict mode, and every mistake in MISTAKES (each named for
what the learner got wrong) loses points on the sweep's seeds (tests/checks/verdicts.py HINT_SEEDS: 0-9, 0-99 under make test-deep) with a hint that names its cause.

The two kernel exercises (ch05.tiled_copy_row_sum, ch05.sum_dim0) run on the simulator, a fraction of a second
or more a check: their mistakes in KERNEL_MISTAKES are graded on KERNEL_SEEDS only (ch05.sum_dim0's, a second
a check, on DIM0_SEEDS; its right but slow kernel, PER_COLUMN, by its PTX; make test takes the first seed
only, one problem at a time: verdicts.kernel_mistake_results), and their case generators
are swept over seeds 0-99 to show that every seed draws the shapes on which those mistakes go wrong. Kernel
answers are rebuilt from source, so the wrong kernels are written out as a real module, one host function per
mistake. The capstone (ch05.capstone_softmax) does the same with CAPSTONE_MISTAKES (added to KERNEL_MISTAKES at
the end of this file) on CAPSTONE_SEEDS."""
import random
import re

import pytest

from cutekit.checks import check, exercises, grading, sandbox
from cutekit.checks import ch05_tiled_copy as chapter05

from simulated import kernels_on_simulator, solution_code, with_mistakes
from verdicts import (ALL_SEEDS, HINT_SEEDS, SEEDS, assert_kernel_mistake_fails_naming_its_cause,
                      assert_mistake_fails_naming_its_cause, assert_no_hint_answers,
                      assert_right_answer_earns_every_reference_point, mistake_params, mistakes_per_exercise)

import answers_ch05 as answers

CORRECT = {
    "ch05.tiled_copy_for": answers.tiled_copy_for,
    "ch05.partition_shape": answers.partition_shape,
    "ch05.cache_key": answers.cache_key,
}

# (exercise, mistake, wrong answer, what the hint must name: a regular expression, case-insensitive)
MISTAKES = [
    ("ch05.tiled_copy_for", "threads_column_major", answers.copy_threads_column_major, r"threads are column-major"),
    ("ch05.tiled_copy_for", "values_column_major", answers.copy_values_column_major, r"values are column-major"),
    ("ch05.tiled_copy_for", "one_value_per_atom", answers.copy_one_value_per_atom,
     r"num_bits_per_copy must cover one row"),
    ("ch05.tiled_copy_for", "always_128_bits", answers.copy_always_128_bits,
     r"num_bits_per_copy must cover one row"),
    ("ch05.tiled_copy_for", "threads_and_values_swapped", answers.copy_swaps_threads_and_values,
     r"values where the threads go"),
    ("ch05.tiled_copy_for", "worked_example_hard_coded", answers.copy_hard_coded_worked_example,
     r"section 2's TiledCopy"),

    ("ch05.partition_shape", "mode_0_flat", answers.shape_flat_mode_0, r"mode 0 is nested"),
    ("ch05.partition_shape", "modes_1_and_2_swapped", answers.shape_swaps_rest_modes, r"modes 1 and 2 are swapped"),
    ("ch05.partition_shape", "copy_tile_is_the_threads_alone", answers.shape_divides_by_threads_only,
     r"copy tile is threads x values"),
    ("ch05.partition_shape", "vector_ignored", answers.shape_ignores_the_vector, r"your atom moves 1 value"),
    ("ch05.partition_shape", "worked_example_hard_coded", answers.shape_hard_coded_worked_example,
     r"section 3's shape"),
    ("ch05.partition_shape", "calls_the_switched_off_constructor", answers.shape_calls_the_switched_off_constructor,
     r"switched off"),

    ("ch05.cache_key", "the_tutorials_dtype_only_key", answers.key_dtype_only, r"key needs N"),
    ("ch05.cache_key", "whole_shape", answers.key_whole_shape, r"leave M out"),
    ("ch05.cache_key", "strides_forgotten", answers.key_forgets_the_strides, r"key needs the strides"),
    ("ch05.cache_key", "alignment_forgotten", answers.key_forgets_the_alignment, r"multiple of 16 bytes"),
    ("ch05.cache_key", "m_not_n", answers.key_uses_m_not_n, r"leave M out"),
    ("ch05.cache_key", "the_tensor_object", answers.key_object_identity, r"not from the tensor object"),
    ("ch05.cache_key", "a_list", answers.key_returns_a_list, r"not hashable"),
]

# mistakes whose cause shows only in the forked sandbox (it switches functions off there): graded forked
SANDBOXED = {"calls_the_switched_off_constructor"}


def test_every_chapter_05_exercise_has_a_correct_answer_and_four_mistakes_or_more():
    ids = [exercise.id for exercise in exercises() if exercise.chapter == "ch05"]
    assert set(ids) == set(CORRECT) | {"ch05.tiled_copy_row_sum", "ch05.sum_dim0", "ch05.capstone_softmax"}
    counts = mistakes_per_exercise(MISTAKES + KERNEL_MISTAKES)
    assert all(counts[exercise_id] >= 4 for exercise_id in ids), counts


@pytest.mark.parametrize("exercise_id", sorted(CORRECT))
@pytest.mark.parametrize("seed", SEEDS)
def test_correct_answer_earns_every_reference_point_in_strict_mode(exercise_id, seed, monkeypatch):
    assert_right_answer_earns_every_reference_point(exercise_id, CORRECT[exercise_id], seed, monkeypatch)


@pytest.mark.parametrize("exercise_id,answer,cause", mistake_params(MISTAKES))
def test_each_mistake_fails_with_a_hint_naming_its_cause_on_every_seed(exercise_id, answer, cause, monkeypatch,
                                                                        request):
    """Graded in this process, not in a forked child per check: the hints are what this test is about. The
    mistakes in SANDBOXED are graded forked, as a learner's answer is."""
    if not any(name in request.node.name for name in SANDBOXED):
        monkeypatch.setenv("CUTEKIT_PROGRESS", "off")
        monkeypatch.setattr(grading, "run_isolated",
                            lambda function, timeout=10.0: sandbox.Isolated(value=function()))
    assert_mistake_fails_naming_its_cause(exercise_id, answer, cause, HINT_SEEDS, monkeypatch)


def test_hard_coded_answers_are_right_for_the_examples_they_copy():
    from cutekit import cute
    worked = answers.tiled_copy_for((4, 32), (1, 4), cute.Float32)
    assert str(answers.copy_hard_coded_worked_example(None, None, None).layout_tv_tiled) == str(worked.layout_tv_tiled)
    assert answers.shape_hard_coded_worked_example(None, None, None, None) == \
        answers.partition_shape((4, 32), (1, 4), 4, (4, 512))


# ---- kernels: the row sum (ch05.tiled_copy_row_sum) and the dim-0 host (ch05.sum_dim0) ----

ROW_SUM = solution_code("05_tiled_copy", "@cute.kernel\ndef two_rows_kernel", 'check("ch05.tiled_copy_row_sum"') \
    .replace("two_rows_kernel", "two_rows_kernel_NAME").replace("def two_rows_per_warp(", "def row_sum_NAME(")
VERSION_3_ENDING = '''    row_total = cute.arch.warp_reduction_sum(partials.load().reduce(cute.ReductionOp.ADD, cutlass.Float32(0.0), 0))
    row = row_block * cute.size(gX, mode=[0, 0]) + cute.arch.warp_idx()
    if cute.arch.lane_idx() == 0:
        if row < shape[0]:
            mOut[row] = row_total
'''
ANSWER_LINES = ROW_SUM[ROW_SUM.index("    mine = partials"):ROW_SUM.index("\n\n", ROW_SUM.index("    mine = partials")) + 1]

SUM_DIM0 = solution_code("05_tiled_copy", "@cute.kernel\ndef column_sum_kernel", 'check("ch05.sum_dim0"') \
    .replace("column_sum_kernel", "column_sum_kernel_NAME").replace("def sum_dim0(", "def sum_dim0_NAME(")

PER_COLUMN = ("column_per_thread", "", "")      # answers_ch05.COLUMN_PER_THREAD_SUM: right, and slow

# (exercise, mistake, the solution's text and what it becomes, what the hint must name)
KERNEL_MISTAKES = [
    ("ch05.tiled_copy_row_sum", "whole_warp_reduced",
     ("cute.arch.warp_reduction_sum(mine, threads_in_group=16)", "cute.arch.warp_reduction_sum(mine)"),
     r"inside the 16 lanes of a row"),
    ("ch05.tiled_copy_row_sum", "row_from_the_warp_index",
     ("row = row_block * 8 + tidx // 16", "row = row_block * cute.size(gX, mode=[0, 0]) + cute.arch.warp_idx()"),
     r"counts 16-thread groups, not warps"),
    ("ch05.tiled_copy_row_sum", "only_lane_0_writes", ("if tidx % 16 == 0:", "if cute.arch.lane_idx() == 0:"),
     r"the first lane of each 16 writes"),
    ("ch05.tiled_copy_row_sum", "rows_past_the_end_written",
     ("        if row < shape[0]:\n            mOut[row] = row_total", "        mOut[row] = row_total"),
     r"rows that exist"),
    ("ch05.tiled_copy_row_sum", "version_3s_ending_copied", (ANSWER_LINES, VERSION_3_ENDING),
     r"counts 16-thread groups, not warps"),
    ("ch05.tiled_copy_row_sum", "groups_of_8_lanes", ("threads_in_group=16", "threads_in_group=8"), r"16 lanes"),

    # ch05.sum_dim0: each change is a list of (the solution's text, what it becomes), made everywhere
    ("ch05.sum_dim0", "grid_rounded_down",
     [("grid=[cute.size(gX, mode=[1, 1]), 1, 1]", "grid=[cute.size(mX, mode=[1]) // 512, 1, 1]")],
     r"block count must be rounded up"),
    ("ch05.sum_dim0", "grid_counts_the_row_steps",
     [("grid=[cute.size(gX, mode=[1, 1]), 1, 1]", "grid=[cute.size(gX, mode=[1, 0]), 1, 1]")],
     r"one block per 512 columns, counted along N"),
    ("ch05.sum_dim0", "rest_modes_swapped",
     [("(0, column_block)", "(column_block, 0)"), ("(k, column_block)", "(column_block, k)"),
      ("for k in cutlass.range(cute.size(gX, mode=[1, 0]))", "for k in cutlass.range(cute.size(gX, mode=[1, 1]))")],
     r"the block index picks a column block"),
    ("ch05.sum_dim0", "no_predicate", [(", fragment, pred=inside)", ", fragment)")], r"load past the end of mX"),
    ("ch05.sum_dim0", "fragment_cleared_once",
     [("        fragment.fill(0.0)\n        cute.copy", "        cute.copy"),
      ("    fragment = cute.make_fragment_like(partials)\n",
       "    fragment = cute.make_fragment_like(partials)\n    fragment.fill(0.0)\n")],
     r"clear the fragment before every copy"),
    ("ch05.sum_dim0", "the_4_columns_added_together",
     [("totals.store(partials.load().reduce(cute.ReductionOp.ADD, cutlass.Float32(0.0), (None, 1, 1)))",
       "totals.fill(partials.load().reduce(cute.ReductionOp.ADD, cutlass.Float32(0.0), 0))")],
     r"sum of 4 adjacent columns"),
    ("ch05.sum_dim0", "one_row_of_each_step",
     [("totals.store(partials.load().reduce(cute.ReductionOp.ADD, cutlass.Float32(0.0), (None, 1, 1)))",
       "for w in cutlass.range_constexpr(4):\n        totals[w] = partials[(w, 0), 0, 0]")],
     r"only every 4th row"),
    ("ch05.sum_dim0", "a_block_per_step_racing_on_the_columns",
     [("column_block, _, _ = cute.arch.block_idx()", "column_block, step, _ = cute.arch.block_idx()"),
      ("for k in cutlass.range(cute.size(gX, mode=[1, 0])):", "for k in cutlass.range(step, step + 1):"),
      ("grid=[cute.size(gX, mode=[1, 1]), 1, 1]", "grid=[cute.size(gX, mode=[1, 1]), cute.size(gX, mode=[1, 0]), 1]")],
     r"several blocks wrote the same columns"),
    ("ch05.sum_dim0", "store_not_predicated",
     [("        if n < shape[1]:\n            mOut[n] = totals[v]", "        mOut[n] = totals[v]")],
     r"store past the end of mOut"),
    ("ch05.sum_dim0", "a_column_per_thread_32_bit_loads", PER_COLUMN, r"your loads are 32-bit"),
]
KERNEL_SEEDS = (0, 1, 2)
DIM0_SEEDS = (0,)           # each check simulates three launches of 128-thread blocks: about a second


def _changes(exercise_id):
    return {name: change for e, name, change, _ in KERNEL_MISTAKES if e == exercise_id and change is not PER_COLUMN}


def _with_changes(code: str, mistakes: dict) -> str:
    """with_mistakes for changes of several (old, new) pairs: `code` once per mistake with each pair made."""
    pieces = []
    for name, pairs in {"none": [], **mistakes}.items():
        text = code.replace("NAME", name)
        for old, new in pairs:
            assert old in text, f"the solution no longer contains what mistake {name!r} replaces: {old!r}"
            text = text.replace(old, new)
        pieces.append(text)
    return "\n".join(pieces)


def _kernel_source() -> str:
    return "\n".join(["import cutlass\nimport cutlass.cute as cute\n",
                      with_mistakes(ROW_SUM, _changes("ch05.tiled_copy_row_sum")),
                      _with_changes(SUM_DIM0, _changes("ch05.sum_dim0")), answers.COLUMN_PER_THREAD_SUM])


@pytest.fixture(scope="module")
def kernels(tmp_path_factory):
    """The kernels, imported from a real file with the simulator as `cutlass`; real cutlass given back."""
    with kernels_on_simulator(_kernel_source(), "ch05_kernels", tmp_path_factory.mktemp("ch05_kernels")) as module:
        yield module


def _host(kernels, exercise_id, name):
    if name == "a_column_per_thread_32_bit_loads":
        return kernels.column_per_thread_sum_dim0
    return getattr(kernels, f"{'row_sum' if exercise_id.endswith('row_sum') else 'sum_dim0'}_{name}")


@pytest.mark.parametrize("exercise_id", ["ch05.tiled_copy_row_sum", "ch05.sum_dim0"])
def test_the_correct_kernel_passes_on_the_simulator_in_strict_mode(kernels, exercise_id, monkeypatch):
    monkeypatch.setenv("CUTEKIT_STRICT", "1")
    monkeypatch.setenv("CUTEKIT_TIERS", "reference")
    for seed in _seeds(exercise_id):
        assert check(exercise_id, _host(kernels, exercise_id, "none"), seed=seed).passed


def _seeds(exercise_id):
    return DIM0_SEEDS if exercise_id == "ch05.sum_dim0" else KERNEL_SEEDS


@pytest.mark.parametrize("exercise_id,mistake,cause",
                         [pytest.param(e, m, c, id=f"{e.split('.')[1]}-{m}") for e, m, change, c in KERNEL_MISTAKES
                          if change is not PER_COLUMN])
def test_each_kernel_mistake_fails_with_a_hint_naming_its_cause(kernels, exercise_id, mistake, cause, monkeypatch):
    assert_kernel_mistake_fails_naming_its_cause(exercise_id, _host(kernels, exercise_id, mistake), cause,
                                                 _seeds(exercise_id), monkeypatch)


def test_every_seed_draws_the_shapes_the_kernel_mistakes_fail_on():
    """What makes each kernel mistake fail, on every seed 0-99. Row sum: more than 8 rows and an odd count (a
    second block; rows 4-7 of a block, odd rows and a row past the end all show), and a divisible shape of two
    blocks. Sum over dim 0 (N a multiple of 4 in every case): a divisible case with more column blocks than row
    steps (a grid of row steps leaves columns unwritten, swapped rest modes leave them too) and M > 1 (one row
    of each step shows); M not a multiple of 4 over two or more steps, with N past a multiple of 512 and above
    it (a last step past M, a last block past N, a grid rounded down, a fragment cleared once, a missing
    predicate, blocks racing on a column); N below 512 (a grid rounded down to no blocks)."""
    for seed in ALL_SEEDS:
        rows = chapter05._row_sum_cases(random.Random(seed))
        assert any(c["M"] > 8 and c["M"] % 2 for c in rows if c["kind"] == "ragged"), (seed, rows)
        assert any(c["M"] >= 16 and c["M"] % 8 == 0 for c in rows if c["kind"] == "divisible"), (seed, rows)
        dim0 = chapter05._dim0_cases(random.Random(seed))
        assert all(c["N"] % 4 == 0 for c in dim0), (seed, dim0)
        divisible = [c for c in dim0 if c["kind"] == "divisible"]
        assert any(c["N"] // 512 > c["M"] // 4 and c["M"] > 1 and c["N"] % 512 == 0 == c["M"] % 4 for c in divisible)
        ragged = [c for c in dim0 if c["kind"] == "ragged"]
        assert any(c["M"] > 4 and c["M"] % 4 and c["N"] > 512 and c["N"] % 512 for c in ragged), (seed, dim0)
        assert any(c["N"] < 512 for c in ragged), (seed, dim0)


@pytest.mark.cutedsl
@pytest.mark.parametrize("exercise_id", ["ch05.tiled_copy_row_sum", "ch05.sum_dim0"])
def test_the_correct_kernels_compile_with_real_cutedsl(kernels, exercise_id, monkeypatch):
    pytest.importorskip("cutlass", reason="nvidia-cutlass-dsl is not installed")
    monkeypatch.setenv("CUTEKIT_STRICT", "1")
    monkeypatch.setenv("CUTEKIT_TIERS", "reference cutedsl-cpu")
    result = check(exercise_id, _host(kernels, exercise_id, "none"), seed=0)
    compiled = next(criterion for criterion in result.criteria if criterion.tier == "cutedsl-cpu")
    assert result.passed and compiled.status == "passed", str(result)


@pytest.mark.cutedsl
def test_a_whole_warp_reduction_is_caught_in_the_ptx(kernels, monkeypatch):
    """The PTX criterion on its own: version 3's whole-warp reduction is 5 butterfly shuffles, not 4."""
    pytest.importorskip("cutlass", reason="nvidia-cutlass-dsl is not installed")
    from cutekit.checks.grading import Context
    context = Context(chapter05.TILED_COPY_ROW_SUM, 0, (), kernels.row_sum_whole_warp_reduced)
    verdict = chapter05._row_sum_ptx(context)
    assert not verdict.passed and "4 butterfly shuffles" in verdict.hint and "has 5" in verdict.hint, verdict.hint


@pytest.mark.cutedsl
def test_a_column_per_thread_earns_the_simulators_points_and_loses_the_ptx_criterion(kernels, monkeypatch):
    """Right but slow: version 4's one column per thread passes every reference criterion; compiled for sm_80
    its loads are 32-bit, which the hint says."""
    pytest.importorskip("cutlass", reason="nvidia-cutlass-dsl is not installed")
    cause = next(c for _, m, change, c in KERNEL_MISTAKES if change is PER_COLUMN)
    monkeypatch.setenv("CUTEKIT_TIERS", "reference cutedsl-cpu")
    result = check("ch05.sum_dim0", kernels.column_per_thread_sum_dim0, seed=DIM0_SEEDS[0])
    by_tier = {criterion.tier: criterion for criterion in result.criteria}
    assert all(c.status == "passed" for c in result.criteria if c.tier == "reference"), str(result)
    assert by_tier["cutedsl-cpu"].status == "failed" and re.search(cause, by_tier["cutedsl-cpu"].hint), str(result)
    assert_no_hint_answers(result)


@pytest.mark.cutedsl
def test_real_cutedsl_types_from_dlpack_static_and_a_fake_tensor_with_a_symbolic_m():
    pytest.importorskip("cutlass", reason="nvidia-cutlass-dsl is not installed")
    from cutekit.checks.ch05_tiled_copy import tensor_types_in_cutedsl
    static, dynamic, fake = tensor_types_in_cutedsl(8, 64)
    assert static == "Tensor<0x...@generic o (8,64):(64,1)>"
    assert dynamic == "Tensor<0x...@generic o (?,?):(?{i64},1)>"
    assert fake == "FakeTensor<Float32, (?{div=1}, 64), (64, 1)>"


# ---- the capstone (ch05.capstone_softmax): a row softmax written from a blank cell ----
# Three bases: the chapter's model answer (solutions/05_tiled_copy.py), a learner's three-pass softmax in the
# style of version 2 (answers_ch05.LEARNER_SOFTMAX), and a right but slow one-thread-per-row kernel. Each row
# of the table is one base with one mistake; the hints name the mistake on CAPSTONE_SEEDS (the simulator costs
# about a second a check here), and test_every_seed_draws_the_capstones_shapes shows that every seed 0-99
# draws the shapes each mistake fails on. A warp reduction inside an `if` that only some lanes reach is not in
# the table: the simulator pairs the lanes waiting at two different warp reductions of the same kind, as
# shfl.sync does on sm_70+, so the values come out wrong without naming that cause.

CAPSTONE = solution_code("05_tiled_copy", "@cute.kernel\ndef softmax_kernel", 'check("ch05.capstone_softmax"') \
    .replace("softmax_kernel", "softmax_kernel_NAME").replace("def softmax_rows(", "def softmax_rows_NAME(")
CAPSTONE_SEEDS = (0,)
PER_THREAD = ("row_per_thread", "", "")

# (exercise, mistake, (base, the base's text, what it becomes), what the hint must name)
CAPSTONE_MISTAKES = [
    ("ch05.capstone_softmax", "max_not_subtracted", ("learner", "fragment.load() - row_max", "fragment.load()"),
     r"subtract the row's max"),
    ("ch05.capstone_softmax", "padding_read_as_zero",
     ("model", "fragment.fill(-cutlass.Float32.inf)", "fragment.fill(0.0)"), r"past the end of the row, read as 0"),
    ("ch05.capstone_softmax", "half_a_warp_reduced",
     ("model", "warp_reduction_max(running_max)\n    row_sum = cute.arch.warp_reduction_sum("
               "running_sum * cute.math.exp(running_max - row_max))",
      "warp_reduction_max(running_max, threads_in_group=16)\n    row_sum = cute.arch.warp_reduction_sum("
      "running_sum * cute.math.exp(running_max - row_max), threads_in_group=16)"),
     r"only part of the threads that hold the row"),
    ("ch05.capstone_softmax", "only_lane_0_writes",
     ("learner", "                cute.autovec_copy(fragment, cute.composition(y_tiles",
      "                if lane == 0:\n                    cute.autovec_copy(fragment, cute.composition(y_tiles"),
     r"every thread stores every element"),
    ("ch05.capstone_softmax", "row_ignores_the_rows_of_earlier_blocks",
     ("learner", "row = block * 4 + warp", "row = block + warp"), r"rows of every block before its own"),
    ("ch05.capstone_softmax", "every_warp_on_the_blocks_first_row",
     ("learner", "row = block * 4 + warp", "row = block * 4"), r"warp's place in the block"),
    ("ch05.capstone_softmax", "grid_rounded_down",
     ("learner", "grid=[cute.ceil_div(cute.size(mX, mode=[0]), 4), 1, 1]", "grid=[cute.size(mX, mode=[0]) // 4, 1, 1]"),
     r"block count must be rounded up"),
    ("ch05.capstone_softmax", "store_not_predicated",
     ("model", "thread.partition_D(gY[None, None, k]), pred=inside)", "thread.partition_D(gY[None, None, k]))"),
     r"store past the end of Y"),
    ("ch05.capstone_softmax", "not_divided_by_the_sum",
     ("model", "fragment.store(cute.math.exp(fragment.load() - row_max) * scale)",
      "fragment.store(cute.math.exp(fragment.load() - row_max))"), r"never divided by the row's sum"),
    ("ch05.capstone_softmax", "sum_not_rescaled_when_the_max_grows",
     ("model", "running_sum * cute.math.exp(running_max - new_max) + ", "running_sum + "), r"rescale it"),
    ("ch05.capstone_softmax", "one_thread_per_row", PER_THREAD, r"your loads are 32-bit"),
]
KERNEL_MISTAKES = KERNEL_MISTAKES + CAPSTONE_MISTAKES      # INSTRUCTOR.md's table and test_mistake_tables read it
HOST_PREFIX = {"model": "softmax_rows_", "learner": "learner_softmax_rows_"}


def _capstone_source() -> str:
    changes = {base: {name: (old, new) for _, name, (b, old, new), _ in CAPSTONE_MISTAKES if b == base}
               for base in HOST_PREFIX}
    return "\n".join(["import cutlass\nimport cutlass.cute as cute\n", with_mistakes(CAPSTONE, changes["model"]),
                      with_mistakes(answers.LEARNER_SOFTMAX, changes["learner"]), answers.ROW_PER_THREAD_SOFTMAX])


@pytest.fixture(scope="module")
def softmax_kernels(tmp_path_factory):
    with kernels_on_simulator(_capstone_source(), "ch05_softmax", tmp_path_factory.mktemp("ch05_softmax")) as module:
        yield module


def _softmax_host(module, base, name):
    return module.row_per_thread_softmax_rows if base == "row_per_thread" else \
        getattr(module, f"{HOST_PREFIX[base]}{name}")


def test_a_learners_three_pass_softmax_passes_on_the_simulator_in_strict_mode(softmax_kernels, monkeypatch):
    """Another right design than the model answer's (whose strict run is the solution notebook's): a warp per
    row through composition, three passes, a vector read or written only where it lies inside the row."""
    monkeypatch.setenv("CUTEKIT_STRICT", "1")
    monkeypatch.setenv("CUTEKIT_TIERS", "reference")
    for seed in CAPSTONE_SEEDS:
        assert check("ch05.capstone_softmax", _softmax_host(softmax_kernels, "learner", "none"), seed=seed).passed


@pytest.mark.parametrize("mistake,change,cause", [pytest.param(m, ch, c, id=m) for _, m, ch, c in CAPSTONE_MISTAKES
                                                  if ch is not PER_THREAD])
def test_each_capstone_mistake_fails_with_a_hint_naming_its_cause(softmax_kernels, mistake, change, cause,
                                                                   monkeypatch):
    assert_kernel_mistake_fails_naming_its_cause("ch05.capstone_softmax",
                                                 _softmax_host(softmax_kernels, change[0], mistake), cause,
                                                 CAPSTONE_SEEDS, monkeypatch)


@pytest.mark.cutedsl
def test_one_thread_per_row_earns_the_simulators_points_and_loses_the_ptx_criterion(softmax_kernels, monkeypatch):
    """Right but slow: every reference criterion passes; compiled for sm_80 its loads are 32-bit and it has no
    shuffle, which the hint says."""
    pytest.importorskip("cutlass", reason="nvidia-cutlass-dsl is not installed")
    cause = next(c for _, m, _, c in CAPSTONE_MISTAKES if m == "one_thread_per_row")
    monkeypatch.setenv("CUTEKIT_TIERS", "reference cutedsl-cpu")
    result = check("ch05.capstone_softmax", softmax_kernels.row_per_thread_softmax_rows, seed=CAPSTONE_SEEDS[0])
    by_tier = {criterion.tier: criterion for criterion in result.criteria}
    assert all(c.status == "passed" for c in result.criteria if c.tier == "reference"), str(result)
    assert by_tier["cutedsl-cpu"].status == "failed", str(result)
    assert re.search(cause, by_tier["cutedsl-cpu"].hint) and "shfl.sync.bfly" in by_tier["cutedsl-cpu"].hint


def test_every_seed_draws_the_capstones_shapes():
    """On every seed 0-99: rows of 1024 with M a multiple of 4 (a warp's rows, a sum not rescaled, half a warp
    reduced); an odd M over three blocks of 4 rows and an odd N longer than one 128-wide step of vector 1 (rows
    counted without the blocks before, padding in the sum, a grid rounded down, a last row alone); N = 1;
    inputs near +1000 with N a multiple of 4 and a tail (overflow) and near -1000 with N odd (padding read as
    0 as the max)."""
    for seed in ALL_SEEDS:
        cases = chapter05._softmax_cases(random.Random(seed))
        aligned = [c for c in cases if c["kind"] == "aligned"]
        ragged = [c for c in cases if c["kind"] == "ragged"]
        large = [c for c in cases if c["kind"] == "large"]
        assert any(c["M"] % 4 == 0 and c["N"] == 1024 for c in aligned), (seed, cases)
        assert any(c["M"] % 2 and c["M"] > 8 and c["N"] % 2 and c["N"] > 128 for c in ragged), (seed, cases)
        assert any(c["N"] == 1 for c in ragged), (seed, cases)
        assert any(c["shift"] > 0 and c["N"] % 4 == 0 and c["N"] % 512 for c in large), (seed, cases)
        assert any(c["shift"] < 0 and c["N"] % 2 for c in large), (seed, cases)
