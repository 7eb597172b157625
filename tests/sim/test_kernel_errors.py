"""A mistake in a learner's kernel comes back as one KernelError: it names the learner's line (and its text), the
block and the thread, says what went wrong and what to write instead, and its traceback (plain Python's and
what IPython shows) holds no cutekit frame. Indices must be integers, as CuTeDSL wants them."""
import importlib
import os
import traceback

import pytest
import torch

import cutekit
from cutekit.sim import KernelError, OutOfBoundsError

CUTEKIT_FRAME = f"{os.sep}cutekit{os.sep}"


@pytest.fixture(scope="module")
def broken():
    with cutekit.using("sim", fresh=("tests.sim.broken_kernels",)):
        yield importlib.import_module("tests.sim.broken_kernels")


def _add(broken, mistake):
    from cutlass.cute.runtime import from_dlpack
    broken.MISTAKE[0] = mistake
    a, b = torch.arange(16.0).reshape(2, 8), torch.ones(2, 8)
    c = torch.zeros(2, 8)
    broken.add(*[from_dlpack(t) for t in (a, b, c)])
    return a, b, c


def _owners(broken, mistake):
    from cutlass.cute.runtime import from_dlpack
    broken.MISTAKE[0] = mistake
    owners = torch.full((8, 8), -1, dtype=torch.int32)
    broken.record_owners(from_dlpack(owners))
    return owners


def _failure(run, *args) -> KernelError:
    with pytest.raises(KernelError) as caught:
        run(*args)
    return caught.value


def _frames(error) -> list:
    return [line for line in traceback.format_exception(error) if line.lstrip().startswith("File ")]


# (mistake, the kernel that runs it, the line's text, block, thread, words of the explanation and fix)
MISTAKES = [
    ("thread_idx_used_as_a_number", _add, "gC[bidx, tidx] = gA[bidx, tidx] + gB[bidx, tidx]", (0, 0, 0), (0, 0, 0),
     ["`tidx` holds all three values (x, y, z) of cute.arch.thread_idx()",
      "write `tidx, _, _ = cute.arch.thread_idx()`"]),
    ("thread_idx_unpacked_into_one_name", _add, "tidx, = cute.arch.thread_idx()", (0, 0, 0), (0, 0, 0),
     ["cute.arch.thread_idx() returns three values (x, y, z)", "write `tidx, _, _ = cute.arch.thread_idx()`"]),
    ("thread_idx_times_two", _add, "gC[bidx, tidx * 2] = gA[bidx, 0]", (0, 0, 0), (0, 0, 0),
     ["`tidx` holds all three values", "write `tidx, _, _ = cute.arch.thread_idx()`"]),
    ("float_index", _add, "gC[bidx, tidx] = gA[1.0]", (0, 0, 0), (0, 0, 0),
     ["gA[1.0]: an index must be an integer, but 1.0 is a float", "`//` instead of `/`"]),
    ("float_in_a_coordinate", _add, "gC[(bidx, tidx / 2)] = gA[bidx, tidx]", (0, 0, 0), (0, 0, 0),
     ["gC[(0, 0.0)]: an index must be an integer, but 0.0 is a float", "`//` instead of `/`"]),
    ("numpy_float_index", _add, "gC[bidx, numpy.float32(tidx)] = gA[bidx, tidx]", (0, 0, 0), (0, 0, 0),
     ["an index must be an integer", "is a float32"]),
    ("one_past_the_end", _add, "gC[bidx, tidx + 1] = gA[bidx, tidx] + gB[bidx, tidx]", (0, 0, 0), (7, 0, 0),
     ["out-of-bounds access to global tensor gC", "coordinate (0,8)", "Guard the access with an `if`"]),
    ("division_by_zero", _add, "scale = 1 // (tidx - tidx)", (0, 0, 0), (0, 0, 0),
     ["ZeroDivisionError: integer division or modulo by zero", "the divisor is 0"]),
    ("float_in_a_layout_call", _add, "column = cute.make_layout(8)(tidx * 1.0)", (0, 0, 0), (0, 0, 0),
     ["an index must be an integer, but 0.0 is a float", "`//` instead of `/`"]),
    ("thread_idx_in_local_partition", _owners, "mine = cute.local_partition(tile, cute.make_layout((2, 2)), tidx)",
     (0, 0, 0), (0, 0, 0), ["`tidx` holds all three values", "write `tidx, _, _ = cute.arch.thread_idx()`"]),
    ("float_in_local_partition", _owners, "mine = cute.local_partition(tile, cute.make_layout((2, 2)), tidx / 1)",
     (0, 0, 0), (0, 0, 0), ["an index must be an integer, but 0.0 is a float"]),
    ("float_in_local_tile", _owners, "(bx / 1, by)", (0, 0, 0), (0, 0, 0),
     ["cute.local_tile(tensor, tiler, coord): an index must be an integer, but 0.0 is a float"]),
]


@pytest.mark.parametrize("mistake, run, line, block, thread, words", MISTAKES, ids=[m[0] for m in MISTAKES])
def test_a_broken_kernel_is_one_message_naming_line_block_thread_and_fix(broken, mistake, run, line, block,
                                                                         thread, words):
    error = _failure(run, broken, mistake)
    message = str(error)
    assert "\n" not in message                               # one message (a check shows its first line)
    assert line in message and f"thread {thread} of block {block}" in message
    assert "broken_kernels.py, line " in message
    for word in words:
        assert word in message, message
    assert error.line and line in error.line and error.thread == thread and error.block == block
    frames = _frames(error)
    assert frames and not [f for f in frames if CUTEKIT_FRAME in f], "".join(frames)
    assert "broken_kernels.py" in frames[-1]                 # the innermost frame is the learner's kernel line
    shown = error._render_traceback_()
    assert shown[0].startswith(f"{type(error).__name__}: thread {thread} of block {block}")
    assert not [row for row in shown if CUTEKIT_FRAME in row or row.lstrip().startswith("File ")]
    assert any(words[-1] in row for row in shown)


def test_an_out_of_bounds_access_stays_an_out_of_bounds_error(broken):
    assert isinstance(_failure(_add, broken, "one_past_the_end"), OutOfBoundsError)


def test_bools_and_numpy_integers_are_integers_as_in_cutedsl(broken):
    a, b, c = _add(broken, "integer_like_indices")
    assert torch.equal(c, a + b)


def test_the_right_kernels_still_run(broken):
    a, b, c = _add(broken, "none")
    assert torch.equal(c, a + b)
    owners = _owners(broken, "none")
    assert owners[0].tolist() == [0, 2, 0, 2, 20, 22, 20, 22]


def test_get_slice_with_thread_idx_tuple_is_named(broken):
    from cutlass.cute.runtime import from_dlpack
    error = _failure(broken.copy_with_thread_idx_tuple, from_dlpack(torch.zeros(8)), from_dlpack(torch.zeros(8)))
    assert "`tidx` holds all three values (x, y, z) of cute.arch.thread_idx()" in str(error)
    assert "thread = tiled_copy.get_slice(tidx)" in str(error)
    assert not [f for f in _frames(error) if CUTEKIT_FRAME in f]


def test_a_refused_copy_names_the_learners_line(broken):
    with cutekit.using("sim", fresh=("tests.sim.operand_kernels",)):
        from cutlass.cute.runtime import from_dlpack
        kernels = importlib.import_module("tests.sim.operand_kernels")
        kernels.VARIANT[0] = "plain"
        a, out = torch.zeros(16, 32, dtype=torch.float16), torch.zeros(32, 8, dtype=torch.float16)
        error = _failure(kernels.load_k_block, from_dlpack(a, assumed_align=16), from_dlpack(out, assumed_align=16), 0)
    assert "operand_kernels.py, line " in str(error)
    assert "`cute.copy(s2r, tXsA[None, None, k_block], tCrA[None, None, k_block])`" in str(error)
    assert "pass the retiled view, `s2r.retile(tCrA)[None, None, k_block]`" in str(error)
    assert not [f for f in _frames(error) if CUTEKIT_FRAME in f]


def test_a_graded_answer_sees_the_line_and_the_fix_in_the_first_line(broken):
    from cutekit.checks.sandbox import describe_exception
    error = _failure(_add, broken, "thread_idx_used_as_a_number")
    first = describe_exception(error).splitlines()[0][:400]
    assert first.startswith(f"{type(error).__name__}: thread (0, 0, 0) of block (0, 0, 0)")
    assert "gC[bidx, tidx] = gA[bidx, tidx] + gB[bidx, tidx]" in first
    assert "write `tidx, _, _ = cute.arch.thread_idx()`" in first


def test_the_error_pickles_whole(broken):
    import pickle
    error = _failure(_add, broken, "float_index")
    copy = pickle.loads(pickle.dumps(error))
    assert str(copy) == str(error) and type(copy) is type(error)


# --------------------------------------------------------------------------------------------- IPython

IPYTHON_CELLS = ['''
import cutekit
cutekit.use("sim")
import torch
import cutlass
import cutlass.cute as cute
from cutlass.cute.runtime import from_dlpack
''', '''
@cute.kernel
def add_kernel(gA: cute.Tensor, gB: cute.Tensor, gC: cute.Tensor):
    tidx = cute.arch.thread_idx()
    bidx, _, _ = cute.arch.block_idx()
    gC[bidx, tidx] = gA[bidx, tidx] + gB[bidx, tidx]


@cute.jit
def add(mA: cute.Tensor, mB: cute.Tensor, mC: cute.Tensor):
    add_kernel(mA, mB, mC).launch(grid=[2, 1, 1], block=[8, 1, 1])
''', '''
a, b = torch.randn(2, 8), torch.randn(2, 8)
add(from_dlpack(a), from_dlpack(b), from_dlpack(torch.zeros(2, 8)))
''']


def test_in_ipython_a_cells_kernel_error_shows_one_message_naming_the_cell(capsys):
    shell_module = pytest.importorskip("IPython.core.interactiveshell")
    shell = shell_module.InteractiveShell.instance()
    with cutekit.using("sim"):
        for cell in IPYTHON_CELLS[:2]:
            assert shell.run_cell(cell).success
        capsys.readouterr()
        result = shell.run_cell(IPYTHON_CELLS[2], store_history=True)
    shown = capsys.readouterr().out
    error = result.error_in_exec
    assert isinstance(error, KernelError)
    assert error.where.startswith("Cell In[") and error.where.endswith(", line 5")
    assert "gC[bidx, tidx] = gA[bidx, tidx] + gB[bidx, tidx]" in shown
    assert "write `tidx, _, _ = cute.arch.thread_idx()`" in shown
    assert "Cell In[" in shown and "cutekit" not in shown.replace("cutekit.use", "")
    assert "Traceback" not in shown and "File " not in shown


def test_device_code_on_the_host_names_the_learners_line(broken):
    import cutlass.cute as cute
    with pytest.raises(KernelError) as caught:
        cute.arch.thread_idx()
    shown = caught.value._render_traceback_()
    assert "is device code" in shown[0]
    assert shown[1].strip().startswith("test_kernel_errors.py, line ") and "cute.arch.thread_idx()" in shown[1]
