"""NVIDIA's CuTeDSL examples (Ampere's, Blackwell's dense_gemm) and notebooks, unchanged, on the simulator
(scripts/run_nvidia_examples.py, scripts/run_nvidia_notebooks.py).

They are not part of this repository: the tests run when the folder named by CUTEKIT_NVIDIA_EXAMPLES (default
.nvidia-examples at the repository root) holds them, and skip otherwise."""
import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FOLDER = os.environ.get("CUTEKIT_NVIDIA_EXAMPLES", os.path.join(ROOT, ".nvidia-examples"))
SCRIPT = os.path.join(ROOT, "scripts", "run_nvidia_examples.py")
EXAMPLES = ("elementwise_add", "elementwise_apply", "sgemm", "tensorop_gemm", "flash_attention_v2", "dense_gemm")


@pytest.mark.parametrize("name", EXAMPLES)
def test_example_runs_and_equals_torch(name):
    if not os.path.isfile(os.path.join(FOLDER, name + ".py")):
        pytest.skip(f"no {name}.py in {FOLDER} (set CUTEKIT_NVIDIA_EXAMPLES to NVIDIA's examples)")
    done = subprocess.run([sys.executable, SCRIPT, "--examples", FOLDER, "--only", name],
                          capture_output=True, text=True, timeout=900, cwd=ROOT)
    line = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else done.stderr[-2000:]
    assert done.returncode == 0 and line.split()[1] == "PASS", line
    assert "Traceback" not in done.stderr, done.stderr[-2000:]


def test_script_refuses_a_missing_folder(tmp_path):
    done = subprocess.run([sys.executable, SCRIPT, "--examples", str(tmp_path / "absent")],
                          capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 2 and "is not a folder" in done.stderr


def test_script_says_missing_files(tmp_path):
    done = subprocess.run([sys.executable, SCRIPT, "--examples", str(tmp_path), "--only", "sgemm"],
                          capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert done.returncode == 0 and done.stdout.split()[:2] == ["sgemm", "MISSING"], done.stdout + done.stderr


# ---- NVIDIA's CuTeDSL notebooks (scripts/run_nvidia_notebooks.py) --------------------------------------------
# The notebooks are not part of this repository either: examples/python/CuTeDSL/notebooks/ of NVIDIA/cutlass,
# in the folder CUTEKIT_NVIDIA_NOTEBOOKS names (default .nvidia-examples/notebooks).

NOTEBOOK_SCRIPT = os.path.join(ROOT, "scripts", "run_nvidia_notebooks.py")
NOTEBOOK_FOLDER = os.environ.get("CUTEKIT_NVIDIA_NOTEBOOKS", os.path.join(FOLDER, "notebooks"))
# code cells that run on the simulator (None: every one); tour_to_sol_gemm's Blackwell GEMM runs at 256x512x256
# (the runner's --small) instead of 8192^3
NOTEBOOKS = {"hello_world": None, "print": None, "data_types": None, "tensor": None, "tensorssa": None,
             "composed_layout": None, "cute_layout_algebra": None, "elementwise_add": None, "async_pipeline": None,
             "tour_to_sol_gemm": None}
SLOW_NOTEBOOKS = ("elementwise_add", "tour_to_sol_gemm")


def _run_notebooks(*arguments, timeout=1800):
    done = subprocess.run([sys.executable, NOTEBOOK_SCRIPT, *arguments], capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT)
    lines = done.stdout.strip().splitlines()
    return done, lines[-1] if lines else done.stderr[-2000:]


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow) if n in SLOW_NOTEBOOKS else n
                                  for n in NOTEBOOKS])
def test_notebook_cells_run_on_the_simulator(name):
    if not os.path.isfile(os.path.join(NOTEBOOK_FOLDER, name + ".ipynb")):
        pytest.skip(f"no {name}.ipynb in {NOTEBOOK_FOLDER} (set CUTEKIT_NVIDIA_NOTEBOOKS to NVIDIA's notebooks)")
    done, line = _run_notebooks("--notebooks", NOTEBOOK_FOLDER, "--only", name, "--small", "--timeout", "120")
    ran, cells = (int(n) for n in line.split()[1].split("/"))
    assert ran == (cells if NOTEBOOKS[name] is None else NOTEBOOKS[name]), line
    if name == "tour_to_sol_gemm":        # the problem it ran is said on its line
        assert "(--small: m, n, k = 256, 512, 256)" in line, line


def test_notebook_runner_changes_only_the_device_and_stops_a_long_cell(tmp_path):
    cells = ['device = "cuda"', "device", "import time\ntime.sleep(30)", "never = 1"]
    notebook = {"cells": [{"cell_type": "code", "source": c, "metadata": {}, "outputs": []} for c in cells],
                "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (tmp_path / "hello_world.ipynb").write_text(json.dumps(notebook))
    done, line = _run_notebooks("--notebooks", str(tmp_path), "--only", "hello_world", "--timeout", "3",
                                "--show", timeout=300)
    assert "'cpu'" in done.stdout, done.stdout
    assert line.split()[:3] == ["hello_world", "2/4", "cells"] and "cell 3: still running after 3 s" in line, line
    assert done.returncode == 1
