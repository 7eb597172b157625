"""On a machine without a GPU, every test sees CuTeDSL compile for sm_80.

CuTeDSL reads CUTE_DSL_ARCH once, when `cutlass` is first imported, so it is set here, before any test
module imports it (the Makefile exports it too; this covers a bare `pytest`). With a GPU, CuTeDSL
targets the GPU it finds.

make test hands whole files to its two workers (`--dist loadfile --no-loadscope-reorder`) in the order collected
here: the longest files first, so that neither worker ends waiting on the other's last long file."""
import os
import shutil
from pathlib import Path

if not shutil.which("nvidia-smi"):
    os.environ.setdefault("CUTE_DSL_ARCH", "sm_80")

# seconds each took in make test on the 2-core course machine (2026-11-28), longest first; the rest follow
LONGEST_FIRST = [
    "checks/test_ch08_mutants.py",            # 66
    "checks/test_ch07_mutants.py",            # 41
    "checks/test_ch09_kernel_mutants.py",     # 40
    "test_chapters_in_cutedsl.py",            # 28
    "sim/test_hopper_kernel.py",              # 27
    "test_workshop.py",                       # 26
    "test_hub.py",                            # 25
    "cute/test_algebra_matches_cutedsl.py",   # 22
    "checks/test_ch05_mutants.py",            # 21
    "checks/test_ch03_mutants.py",            # 20
    "checks/test_ch01_mutants.py",            # 18
    "cute/test_atoms.py",                     # 17
    "checks/test_stuck_answers.py",           # 16
    "sim/test_simulator.py",                  # 15
]
HERE = Path(__file__).parent


def pytest_collection_modifyitems(items):
    rank = {name: place for place, name in enumerate(LONGEST_FIRST)}

    def place(item):
        try:
            return rank.get(Path(str(item.fspath)).relative_to(HERE).as_posix(), len(rank))
        except ValueError:       # not under tests/
            return len(rank)
    items.sort(key=place)        # stable: within a file, and among the rest, the collected order
