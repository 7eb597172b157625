"""Learner-style kernels for the mutant tests: written to a real file (CuTeDSL and the simulator read
source) and imported with cutekit's simulator as `cutlass`; the real package comes back afterwards."""
import contextlib
import importlib
import sys

import cutekit


@contextlib.contextmanager
def kernels_on_simulator(source: str, name: str, folder):
    """The module `name`, made of `source`, imported on the simulator for the length of the block."""
    (folder / f"{name}.py").write_text(source)
    sys.path.insert(0, str(folder))
    try:
        with cutekit.using("sim", fresh=(name,)):
            yield importlib.import_module(name)
    finally:
        sys.path.remove(str(folder))
