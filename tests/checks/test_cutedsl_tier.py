"""The cutedsl-cpu tier: a learner's function moves to a fresh process by its source (a notebook cell's
source included) and runs under real CuTeDSL; kernels compile for sm_80 without a GPU and their PTX can be
inspected."""
import linecache
import pathlib

import pytest

from cutekit.checks.cutedsl import FakeTensor, NotMovable, compile_to_ptx, module_source, trace_function

pytestmark = pytest.mark.cutedsl
pytest.importorskip("cutlass", reason="nvidia-cutlass-dsl is not installed")

HERE = pathlib.Path(__file__).parent


def notebook_cell(source: str, name: str):
    """Define `name` as IPython does for a cell: the source is registered in linecache under a cell name."""
    filename = f"<ipython-input-{abs(hash(source))}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = {}
    exec(compile(source, filename, "exec"), namespace)
    return namespace[name]


def test_a_notebook_cells_function_runs_under_real_cutedsl_with_cute_made_cutlass_cute():
    cell = ("from cutekit import cute\nROWS_FIRST = True\n"
            "def layout_for(M, N):\n    return cute.make_layout((M, N), stride=(N, 1) if ROWS_FIRST else (1, M))\n")
    reply = trace_function(notebook_cell(cell, "layout_for"), [(3, 5), (6, 2)])
    assert reply.ok, reply.error
    assert reply.values == [("(3,5):(5,1)", ""), ("(6,2):(2,1)", "")]


def test_the_moved_module_imports_cutlass_cute_and_copies_helpers_and_constants():
    cell = ("import cutekit.cute as cute\nSTEP = 2\ndef helper(n):\n    return n * STEP\n"
            "def answer(n):\n    return cute.make_layout(helper(n), stride=1)\n")
    source = module_source(notebook_cell(cell, "answer"))
    assert "import cutlass.cute as cute" in source and "def helper" in source and "STEP = " in source


def test_a_function_made_by_exec_without_source_says_why_it_cannot_move():
    namespace = {}
    exec("def answer(M, N):\n    return None\n", namespace)
    with pytest.raises(NotMovable, match="cannot be read"):
        module_source(namespace["answer"])
    assert "cannot be read" in trace_function(namespace["answer"], [(1, 1)]).error


def test_an_error_under_cutedsl_comes_back_per_call():
    cell = "from cutekit import cute\ndef answer(M, N):\n    return cute.make_layout((M, N), stride=(N,))\n"
    reply = trace_function(notebook_cell(cell, "answer"), [(2, 2)])
    assert reply.ok and reply.values[0][0] is None and reply.values[0][1]


def test_compile_to_ptx_shows_128_bit_global_loads_and_no_local_memory():
    report = compile_to_ptx(HERE / "copy_kernel_for_ptx.py", "copy",
                            (FakeTensor("Float32", rank=2, divisibility=4), FakeTensor("Float32", rank=2, divisibility=4), 4))
    assert report.ok, report.error
    assert report.count("ld.global.v4") >= 1 and report.count("st.global.v4") >= 1
    assert report.local_memory == 0 and ".target sm_80" in report.ptx


def test_compile_to_ptx_of_a_scalar_copy_has_no_vector_loads():
    report = compile_to_ptx(HERE / "copy_kernel_for_ptx.py", "copy",
                            (FakeTensor("Float32", shape=(8, 128)), FakeTensor("Float32", shape=(8, 128)), 1))
    assert report.ok, report.error
    assert report.count("ld.global.v4") == 0 and report.count("ld.global") >= 1


def test_compile_to_ptx_compiles_a_script_that_asks_for_use_auto_at_import(tmp_path):
    """A learner's script starts with cutekit.use("auto"), which on a machine without a GPU installs the
    simulator as `cutlass`; the compile worker keeps real CuTeDSL all the same (before, cute.compile met the
    simulator: "cute.sym_int ... the simulator runs on real tensors")."""
    script = tmp_path / "learner_script.py"
    script.write_text("import cutekit\n\ncutekit.use(\"auto\")\n" + (HERE / "copy_kernel_for_ptx.py").read_text())
    report = compile_to_ptx(script, "copy", (FakeTensor("Float32", rank=2, divisibility=4),
                                             FakeTensor("Float32", rank=2, divisibility=4), 4))
    assert report.ok, report.error
    assert report.count("ld.global.v4") >= 1 and ".target sm_80" in report.ptx


def test_compile_to_ptx_reports_a_compile_error_in_words():
    report = compile_to_ptx(HERE / "copy_kernel_for_ptx.py", "no_such_function")
    assert not report.ok and "no_such_function" in report.error


def _coalesce_context(answers):
    from cutekit.checks.grading import Context, Outcome
    cases = [{"shape": (2, 3), "stride": (1, 2)}, {"shape": (4, 2), "stride": (2, 1)}]
    outcomes = tuple(Outcome(case, value=value, error=error) for case, (value, error) in zip(cases, answers))
    return Context(exercise=None, seed=0, outcomes=outcomes, answer=None)


def test_a_criterion_passes_when_real_cutedsl_gives_what_the_learner_gave():
    from cutekit.checks.cutedsl import cutedsl_agrees
    judge = cutedsl_agrees("cutekit.checks.ch01_layouts", "coalesce_in_cutedsl",
                           lambda outcome: (outcome.case["shape"], outcome.case["stride"]), str, str)
    assert judge(_coalesce_context([("6:1", ""), ("(4,2):(2,1)", "")])).passed


def test_a_criterion_names_the_case_and_both_answers_when_cutedsl_disagrees():
    from cutekit.checks.cutedsl import cutedsl_agrees
    judge = cutedsl_agrees("cutekit.checks.ch01_layouts", "coalesce_in_cutedsl",
                           lambda outcome: (outcome.case["shape"], outcome.case["stride"]), str,
                           lambda case: f"shape={case['shape']}")
    verdict = judge(_coalesce_context([("6:1", ""), ("8:1", "")]))
    assert not verdict.passed
    assert "shape=(4, 2)" in verdict.hint and "CuTeDSL gives (4,2):(2,1), yours is 8:1" in verdict.hint


def test_a_case_the_learner_failed_is_left_to_the_reference_criteria():
    from cutekit.checks.cutedsl import cutedsl_agrees
    judge = cutedsl_agrees("cutekit.checks.ch01_layouts", "coalesce_in_cutedsl",
                           lambda outcome: (outcome.case["shape"], outcome.case["stride"]), str, str)
    assert judge(_coalesce_context([("6:1", ""), (None, "TypeError: boom")])).passed
