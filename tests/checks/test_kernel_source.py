"""A learner's kernel travels to the simulator and the GPU worker as source; that source must keep its
`@cute.jit` / `@cute.kernel` decorators even after real CuTeDSL has compiled the function once (on a GPU
the notebook runs the kernel before the check does: without the decorators the simulator called the kernel
as a plain function, "thread_idx() is device code")."""
import importlib.util
import textwrap

import pytest

pytest.importorskip("cutlass")

LEARNER = textwrap.dedent('''
    import cutlass
    import cutlass.cute as cute

    @cute.kernel
    def fill_kernel(mOut: cute.Tensor):
        tidx, _, _ = cute.arch.thread_idx()
        if tidx < cute.size(mOut):
            mOut[tidx] = cutlass.Float32(1.0)

    @cute.jit
    def fill(mOut: cute.Tensor):
        fill_kernel(mOut).launch(grid=[1, 1, 1], block=[32, 1, 1])
''')


def _import(tmp_path):
    path = tmp_path / "learner_fill.py"
    path.write_text(LEARNER)
    spec = importlib.util.spec_from_file_location("learner_fill", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_source_keeps_its_decorators_after_cutedsl_compiled_it(tmp_path, monkeypatch):
    monkeypatch.setenv("CUTE_DSL_ARCH", "sm_80")
    import torch
    import cutlass.cute as cute
    from cutlass.cute.runtime import from_dlpack
    from cutekit.checks.kernels import kernel_module_source
    learner = _import(tmp_path)
    before = kernel_module_source(learner.fill)
    cute.compile(learner.fill, from_dlpack(torch.zeros(32)))
    after = kernel_module_source(learner.fill)
    assert after == before
    assert "@cute.kernel\ndef fill_kernel" in after and "@cute.jit\ndef fill(" in after


OUT_OF_BOUNDS = textwrap.dedent('''
    import cutlass
    import cutlass.cute as cute

    WIDTH = 64


    @cute.kernel
    def fill_kernel(mOut: cute.Tensor):
        tidx, _, _ = cute.arch.thread_idx()
        mOut[tidx] = cutlass.Float32(1.0)

    @cute.jit
    def fill(mOut: cute.Tensor):
        fill_kernel(mOut).launch(grid=[1, 1, 1], block=[WIDTH, 1, 1])
''')


def run_fill(host, case):
    """A harness (as a check's): the learner's host on 32 floats, 64 threads; the error's text."""
    import numpy
    from cutlass.cute.runtime import from_dlpack
    try:
        host(from_dlpack(numpy.zeros(32, numpy.float32)))
    except Exception as error:  # noqa: BLE001
        return str(error)
    return ""


def test_a_simulated_kernel_from_a_script_names_the_scripts_file_and_line(tmp_path):
    """The check runs the learner's functions rebuilt from source; its messages name the learner's own file and
    line (before: "learner_kernel.py, line 12", a file the learner never saw, with its own numbering)."""
    import cutekit
    from cutekit.checks.kernels import simulate
    path = tmp_path / "learner_oob.py"
    path.write_text(OUT_OF_BOUNDS)
    spec = importlib.util.spec_from_file_location("learner_oob", path)
    learner = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(learner)
    line = OUT_OF_BOUNDS.splitlines().index("    mOut[tidx] = cutlass.Float32(1.0)") + 1
    with cutekit.using("sim"):
        message = simulate(learner.fill, run_fill, {})
    assert f"learner_oob.py, line {line} `mOut[tidx] = cutlass.Float32(1.0)`" in message, message
    assert "learner_kernel" not in message


BY_NAME = textwrap.dedent('''
    import cutlass
    import cutlass.cute as cute
    from cutlass import Float32 as F32
    from cutlass.cute.arch import thread_idx

    @cute.kernel
    def fill_kernel(mOut: cute.Tensor):
        tidx, _, _ = thread_idx()
        if tidx < cute.size(mOut):
            for _ in range(1):
                mOut[tidx] = F32(1.0)

    @cute.jit
    def fill(mOut: cute.Tensor):
        fill_kernel(mOut).launch(grid=[1, 1, 1], block=[{threads}, 1, 1])
''')


def _learner(tmp_path, name, source):
    path = tmp_path / f"{name}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_kernel_whose_module_imports_from_cutlass_by_name_runs_rebuilt(tmp_path):
    """`from cutlass.cute.nvgpu import OperandMajorMode` is how chapter 09's kernel file imports; the rebuilt
    module imports such a name again (before: only modules and constants were carried, and the check said
    "NameError: name 'OperandMajorMode' is not defined" of a name the learner's file defines)."""
    import cutekit
    from cutekit.checks.kernels import kernel_module_source, simulate
    with cutekit.using("sim"):
        learner = _learner(tmp_path, "learner_by_name", BY_NAME.replace("{threads}", "32"))
        source = kernel_module_source(learner.fill)
        assert "from cutlass import Float32 as F32" in source and "from cutlass.cute.arch import thread_idx" in source
        assert "__cutekit_not_carried__" not in source
        assert "import range" not in source          # the simulator's `range` for the module stays Python's own
        assert simulate(learner.fill, run_fill, {}) == ""
    real = _learner(tmp_path, "learner_by_name_real", BY_NAME.replace("{threads}", "32"))
    assert "from cutlass.cute.arch import thread_idx" in kernel_module_source(real.fill)   # real CuTeDSL's own


NOT_CARRIED = textwrap.dedent('''
    import cutlass
    import cutlass.cute as cute

    ONES = [1.0]

    @cute.kernel
    def fill_kernel(mOut: cute.Tensor):
        tidx, _, _ = cute.arch.thread_idx()
        if tidx < cute.size(mOut):
            mOut[tidx] = cutlass.Float32({value})

    @cute.jit
    def fill(mOut: cute.Tensor):
        fill_kernel(mOut).launch(grid=[1, 1, 1], block=[32, 1, 1])
''')


def test_a_name_the_rebuild_does_not_carry_is_named_with_why(tmp_path):
    import cutekit
    from cutekit.checks.kernels import simulate
    with cutekit.using("sim"):
        listed = _learner(tmp_path, "learner_list", NOT_CARRIED.replace("{value}", "ONES[0]"))
        message = simulate(listed.fill, run_fill, {})
    assert "NameError" in message and "`ONES` is bound in your module to a list" in message, message
    assert "pass it to the kernel as an argument" in message and "define it" not in message, message


def test_a_truly_undefined_name_still_says_define_it(tmp_path):
    import cutekit
    from cutekit.checks.kernels import simulate
    with cutekit.using("sim"):
        undefined = _learner(tmp_path, "learner_undefined", NOT_CARRIED.replace("{value}", "TWOS[0]"))
        message = simulate(undefined.fill, run_fill, {})
        host_side = _learner(tmp_path, "learner_undefined_host",
                             NOT_CARRIED.replace("{value}", "1.0").replace("block=[32", "block=[THREADS"))
        host_message = simulate(host_side.fill, run_fill, {})
    assert "name 'TWOS' is not defined" in message and "define it or pass it to the kernel" in message, message
    assert "name 'THREADS' is not defined" in host_message and "define it in your module" in host_message, \
        host_message
