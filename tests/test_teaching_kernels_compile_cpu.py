"""The simulator's test kernels are real CuTeDSL: each compiles for sm_80 with the real package, without a
GPU, warnings as errors (so a kernel that runs on the simulator but not on CuTeDSL, or only with a deprecated
name, cannot slip into the course)."""
import pytest

pytestmark = [pytest.mark.cutedsl, pytest.mark.filterwarnings("error")]
pytest.importorskip("cutlass", reason="nvidia-cutlass-dsl is not installed")


@pytest.fixture(autouse=True)
def real_cutedsl():
    """The real package, whatever an earlier test in this process chose with cutekit.use("sim"): its simulator
    modules step aside for the test and come back after it."""
    import sys
    before = {name: module for name, module in sys.modules.items() if name == "cutlass" or name.startswith("cutlass.")}
    for name, module in before.items():
        if getattr(module, "__cutekit_sim__", False):
            del sys.modules[name]
    yield
    for name in [name for name in sys.modules if name == "cutlass" or name.startswith("cutlass.")]:
        del sys.modules[name]
    sys.modules.update(before)


def _kernels():
    import importlib
    import sys
    module = sys.modules.get("tests.sim.kernels")
    if module is not None and getattr(module.cutlass, "__cutekit_sim__", False):
        del sys.modules["tests.sim.kernels"]
    return importlib.import_module("tests.sim.kernels")


def _cases():
    import cutlass
    import cutlass.cute as cute
    from cutlass.cute.runtime import make_fake_compact_tensor

    def fake(*shape):
        order = tuple(range(len(shape)))[::-1]
        return make_fake_compact_tensor(cutlass.Float32, shape, stride_order=order, assumed_align=16)

    def m_major():
        return make_fake_compact_tensor(cutlass.Float16, (32, 64), stride_order=(0, 1), assumed_align=16)
    kernels = _kernels()
    return {"add_one_per_thread": (kernels.add_one_per_thread, (fake(20, 20), fake(20, 20), fake(20, 20), False)),
            "reverse": (kernels.reverse, (fake(64), fake(64), True)),
            "transpose": (kernels.transpose, (fake(32, 32), fake(32, 32), 1)),
            "hello": (kernels.hello, ((2, 1, 1), (2, 2, 1))),
            "warp_sums": (kernels.warp_sums, (fake(96), fake(3))),
            "staged_copy": (kernels.staged_copy, (fake(128), fake(32), True)),
            "m_major_tile": (kernels.m_major_tile, (m_major(), m_major(), 2))}, cute


@pytest.mark.parametrize("name", ["add_one_per_thread", "reverse", "transpose", "hello", "warp_sums",
                                  "staged_copy", "m_major_tile"])
def test_each_simulator_test_kernel_compiles_with_real_cutedsl(name):
    cases, cute = _cases()
    function, arguments = cases[name]
    compiled = cute.compile(function, *arguments)
    assert compiled is not None
