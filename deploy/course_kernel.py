"""Does the Python that runs learners' servers offer the course kernel? Asked once per hub, before spawning.

A hub whose single-user servers lack the kernel `cute-by-hand` opens notebooks that ask for a kernel that
does not exist; this says so at spawn time, in words that name the Python and the fix.
"""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

KERNEL_NAME = "cute-by-hand"          # scripts/setup_env.py registers it under this name


def kernel_names(python: str, timeout: float = 60) -> set:
    """The kernels `python`'s Jupyter can start (`jupyter kernelspec list --json`)."""
    try:
        out = subprocess.run([python, "-m", "jupyter", "kernelspec", "list", "--json"],
                             capture_output=True, text=True, timeout=timeout)
    except FileNotFoundError:
        raise RuntimeError(f"the course Python {python} does not exist: set CUTEKIT_COURSE_PYTHON to the "
                           f"python of the environment `make setup` made (e.g. /srv/cute-by-hand/.venv/bin/python)")
    except subprocess.TimeoutExpired:
        raise RuntimeError(f"`{python} -m jupyter kernelspec list` did not answer within {timeout:.0f} s")
    if out.returncode != 0:
        last = (out.stderr.strip().splitlines() or ["(no output)"])[-1]
        raise RuntimeError(f"`{python} -m jupyter kernelspec list` failed: {last}")
    return set(json.loads(out.stdout)["kernelspecs"])


def course_kernel_problem(names: set, python: str, kernel: str = KERNEL_NAME) -> str | None:
    """None when `kernel` is among `names`; else what is wrong and what to do."""
    if kernel in names:
        return None
    return (f"the learners' servers lack the course kernel '{kernel}': {python} offers only "
            f"{', '.join(sorted(names)) or 'no kernels'}. Register it in that environment with "
            f"`{python} -m ipykernel install --sys-prefix --name {kernel} --display-name 'CuTe by Hand'` "
            f"(`make setup` does this), or point CUTEKIT_COURSE_PYTHON at the course's environment.")


def answers_beside(python: str, timeout: float = 60) -> str | None:
    """When the cutekit that `python` imports sits in a checkout that holds solutions/ (the instructor's, not a
    checkout of the student branch), a warning that learners' kernels can read the answers; else None."""
    try:
        out = subprocess.run([python, "-c", "import cutekit, pathlib; print(pathlib.Path(cutekit.__file__).parent)"],
                             capture_output=True, text=True, timeout=timeout, cwd="/")   # not this folder's
    except (FileNotFoundError, subprocess.TimeoutExpired):
        return None                   # kernel_names has said what is wrong with this Python
    if out.returncode != 0 or not out.stdout.strip():
        return None
    checkout = Path(out.stdout.strip().splitlines()[-1]).parent
    if not (checkout / "solutions").is_dir():
        return None
    return (f"learners' kernels import cutekit from {checkout}, which holds solutions/ and the graders as plain "
            f"source: a learner can read the answers there. For a workshop, run the servers from a checkout of "
            f"the student branch (`git clone --single-branch --branch student file://{checkout} "
            f"/srv/cute-by-hand-student`, `make setup` in it, CUTEKIT_COURSE_ROOT=/srv/cute-by-hand-student; "
            f"deploy/README.md)")
