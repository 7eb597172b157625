"""Simulator tests import kernels after `cutekit.use("sim")`, and give the real `cutlass` back afterwards
(other test files in the same process use real CuTeDSL)."""
import importlib
import sys

import pytest

import cutekit

_SWAPPED = ("cutlass", "benchmarks.kernels", "tests.sim.kernels")


def _swapped(name: str) -> bool:
    return any(name == prefix or name.startswith(prefix + ".") for prefix in _SWAPPED)


@pytest.fixture(scope="module")
def sim():
    """The simulator as `cutlass`, with fresh imports of the kernels under test."""
    saved = {name: module for name, module in sys.modules.items() if _swapped(name)}
    for name in saved:
        del sys.modules[name]
    cutekit.use("sim")
    import cutlass
    yield cutlass
    for name in [name for name in sys.modules if _swapped(name)]:
        del sys.modules[name]
    sys.modules.update(saved)


@pytest.fixture(scope="module")
def kernels(sim):
    return importlib.import_module("tests.sim.kernels")
