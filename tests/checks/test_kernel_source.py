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
