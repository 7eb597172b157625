"""Simulator tests import kernels after `cutekit.use("sim")`, and give the real `cutlass` back afterwards
(other test files in the same process use real CuTeDSL)."""
import importlib

import pytest

import cutekit


@pytest.fixture(scope="module")
def sim():
    """The simulator as `cutlass`, with fresh imports of the kernels under test."""
    with cutekit.using("sim", fresh=("benchmarks.kernels", "tests.sim.kernels")):
        import cutlass
        yield cutlass


@pytest.fixture(scope="module")
def kernels(sim):
    return importlib.import_module("tests.sim.kernels")
