"""NVIDIA's CuTeDSL Ampere examples, unchanged, on the simulator (scripts/run_nvidia_examples.py).

They are not part of this repository: the tests run when the folder named by CUTEKIT_NVIDIA_EXAMPLES (default
.nvidia-examples at the repository root) holds them, and skip otherwise."""
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FOLDER = os.environ.get("CUTEKIT_NVIDIA_EXAMPLES", os.path.join(ROOT, ".nvidia-examples"))
SCRIPT = os.path.join(ROOT, "scripts", "run_nvidia_examples.py")
EXAMPLES = ("elementwise_add", "elementwise_apply", "sgemm", "tensorop_gemm", "flash_attention_v2")


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
