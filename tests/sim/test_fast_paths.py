"""The simulator's shortcuts (element offsets without the general algebra, bounds checked by a view's
extreme offsets, remembered slices and sizes, threads run without a greenlet each until one waits) give
what the general path gives: the same offsets, the same outputs, the same errors word for word."""
import itertools

import numpy
import pytest

from cutekit.cute.inttuple import CuteError
from cutekit.cute.layout import make_layout
from cutekit.sim import OutOfBoundsError, last_launch
from cutekit.sim.memory import tensors as memory

rng = numpy.random.default_rng(11)

LAYOUTS = [make_layout(8), make_layout(8, stride=3), make_layout((4, 6)), make_layout((4, 6), stride=(6, 1)),
           make_layout((2, (2, 3)), stride=(1, (2, 4))), make_layout(((2, 2), 3), stride=((3, 6), 1)),
           make_layout((2, 3, 4), stride=(12, 4, 1)), make_layout((1, 5), stride=(0, 1)),
           make_layout(((4, 2), (2, 2), 3), stride=((1, 16), (4, 8), 32))]


def general(layout, coord):
    try:
        return layout(coord)
    except (CuteError, TypeError):
        return "error"


@pytest.mark.parametrize("layout", LAYOUTS, ids=str)
def test_the_offset_shortcut_agrees_with_the_layout_wherever_it_answers(layout):
    offset_of = memory.offset_function(layout)
    total = memory.size(layout)
    shape = layout.shape if isinstance(layout.shape, tuple) else (layout.shape,)
    mode_sizes = [memory.size(layout, mode=[i]) for i in range(len(shape))] if isinstance(layout.shape, tuple) else []
    coords = list(range(-2, total + 2)) + [True, numpy.int64(1), None, (0,), ((0, 1), 0)]
    coords += list(itertools.product(*[range(-1, s + 1) for s in mode_sizes]))
    answered = 0
    for coord in coords:
        fast = offset_of(coord)
        if fast is not None:
            answered += 1
            assert fast == layout(coord), (layout, coord)
    assert answered >= total                    # every in-range int, at least, takes the shortcut


def test_a_coordinate_layout_takes_no_shortcut():
    from cutekit.cute import make_identity_tensor
    assert memory.offset_function(make_identity_tensor((4, 4)).layout) is None


@pytest.fixture
def general_path(monkeypatch):
    """The simulator with its shortcuts turned off: every access through the reference algebra."""
    def slow_checked_addresses(self):
        addresses = self.addresses()
        memory.check_bounds(self, addresses)
        return addresses
    monkeypatch.setattr(memory, "offset_function", lambda layout: None)
    monkeypatch.setattr(memory.SimTensor, "checked_addresses", slow_checked_addresses)
    monkeypatch.setattr(memory, "_SLICES", {})
    monkeypatch.setattr(memory, "_slice", memory._slice.__wrapped__)


def run_both_ways(request, run):
    """`run()` with the shortcuts, then without: (result, error text) each."""
    def attempt():
        try:
            return run(), None
        except Exception as error:          # the comparison is the point: any error, same words
            return None, f"{type(error).__name__}: {error}"
    fast = attempt()
    request.getfixturevalue("general_path")
    return fast, attempt()


def test_one_thread_per_element_gives_the_same_sums_and_the_same_out_of_bounds_report(sim, kernels, request):
    from cutlass.cute.runtime import from_dlpack
    a, b = rng.random((20, 20), numpy.float32), rng.random((20, 20), numpy.float32)

    def add(off_by_one):
        c = numpy.zeros_like(a)
        kernels.add_one_per_thread(from_dlpack(a, assumed_align=16), from_dlpack(b, assumed_align=16),
                                   from_dlpack(c, assumed_align=16), off_by_one)
        return c

    def both():
        return add(False), run_error(lambda: add(True))
    (fast, _), (slow, _) = run_both_ways(request, both)
    numpy.testing.assert_array_equal(fast[0], a + b)
    numpy.testing.assert_array_equal(fast[0], slow[0])
    assert fast[1] == slow[1] and "at coordinate (20,0)" in fast[1]


def run_error(run):
    try:
        run()
    except OutOfBoundsError as error:
        return str(error)
    return None


def test_the_simt_gemm_gives_the_same_product_and_bank_counts_either_way(sim, request):
    import importlib
    import torch
    from cutlass.cute.runtime import from_dlpack
    sgemm = importlib.import_module("benchmarks.kernels.sgemm_simt")
    a_t, b = torch.randn(16, 64), torch.randn(16, 128)

    def run():
        c = torch.zeros(64, 128)
        sgemm.sgemm(from_dlpack(a_t.T, assumed_align=16), from_dlpack(b.T, assumed_align=16),
                    from_dlpack(c, assumed_align=16))
        report = last_launch()
        return c, report.shared_wavefronts, dict(report.bank_conflicts_by_line)
    (fast, _), (slow, _) = run_both_ways(request, run)
    assert torch.equal(fast[0], slow[0]) and fast[1:] == slow[1:]
    assert torch.allclose(fast[0], a_t.T @ b, atol=1e-3)


def test_threads_run_in_the_same_order_with_and_without_barriers(sim, kernels, capsys):
    kernels.hello((2, 1, 1), (3, 2, 1))
    printed = capsys.readouterr().out.splitlines()
    assert printed == [f"block ({bx},0,0) thread ({tx},{ty},0)" for bx in range(2) for ty in range(2) for tx in range(3)]


def test_size_of_a_tensor_is_the_size_of_its_layout(sim):
    import cutlass.cute as cute
    from cutlass.cute.runtime import from_dlpack
    tensor = from_dlpack(numpy.zeros((4, 6), numpy.float32))
    assert [cute.size(tensor), cute.size(tensor, mode=[0]), cute.size(tensor, mode=[1])] == [24, 4, 6]
    with pytest.raises(CuteError, match="mode 2 does not exist"):
        cute.size(tensor, mode=[2])


@pytest.mark.parametrize("name", ["logical_divide", "zipped_divide", "tiled_divide", "flat_divide"])
def test_dividing_a_tensor_divides_its_layout_as_the_algebra_does(sim, name):
    import cutlass.cute as cute
    from cutekit import cute as reference
    from cutlass.cute.runtime import from_dlpack
    tensor = from_dlpack(numpy.zeros((8, 12), numpy.float32))
    divided = getattr(cute, name)(tensor, (4, 3))
    expected = getattr(reference, name)(tensor, (4, 3))
    assert divided.layout == expected.layout and divided.storage is tensor.storage and divided.base == expected.base


def test_worker_greenlets_kept_for_the_next_block_leave_no_state_behind(sim, kernels):
    """Worker greenlets wait in a pool between blocks and launches: a launch stopped by a race or a deadlock
    leaves the next launch's threads with stacks of their own and the same results and reports."""
    from cutlass.cute.runtime import from_dlpack
    from cutekit.sim import DeadlockError, RaceError
    from cutekit.sim.machine import scheduler
    x = numpy.arange(64, dtype=numpy.float32)

    def reverse():
        out = numpy.zeros(64, numpy.float32)
        kernels.reverse(from_dlpack(x, assumed_align=16), from_dlpack(out, assumed_align=16))
        return out, last_launch()

    first, report = reverse()
    for _ in range(2):
        with pytest.raises(RaceError):
            kernels.reverse(from_dlpack(x, assumed_align=16), from_dlpack(numpy.zeros(64, numpy.float32),
                                                                          assumed_align=16), False)
        with pytest.raises(DeadlockError):
            kernels.half_barrier(from_dlpack(numpy.zeros(64, numpy.float32), assumed_align=16))
        again, again_report = reverse()
        numpy.testing.assert_array_equal(again, x[::-1])
        numpy.testing.assert_array_equal(again, first)
        assert (again_report.shared_accesses, again_report.shared_wavefronts, again_report.bank_conflicts) == \
            (report.shared_accesses, report.shared_wavefronts, report.bank_conflicts)
    assert 0 < len(scheduler._idle_workers()) <= 1024
    assert scheduler._NEXT_JOB[0] is None
