"""Create or refresh the course's virtual environment; say plainly what is wrong when it cannot.

Run by `make lab` / `make test` with the system Python. Standard library only.
Exit status: 0 ready, 2 a set-up problem explained in one line on stderr.
"""
from __future__ import annotations

import argparse
import hashlib
import os
import platform
import shutil
import subprocess
import sys
from pathlib import Path

MIN_PY, MAX_PY = (3, 10), (3, 13)       # nvidia-cutlass-dsl 4.8.1 ships wheels for these
MIN_FREE_GB = 4.0                        # torch (CPU) + CuTeDSL + Jupyter, unpacked
KERNEL_NAME = "cute-by-hand"
ROOT = Path(__file__).resolve().parent.parent


def fail(message: str) -> None:
    print(f"setup: {message}", file=sys.stderr)
    sys.exit(2)


def check_python() -> None:
    v = sys.version_info[:2]
    if not (MIN_PY <= v <= MAX_PY):
        fail(f"Python {v[0]}.{v[1]} cannot run CuTeDSL 4.8.1; install Python "
             f"{MIN_PY[0]}.{MIN_PY[1]}-{MAX_PY[0]}.{MAX_PY[1]} and run `make PY=python3.11 ...`")


def check_disk(where: Path) -> None:
    free_gb = shutil.disk_usage(where).free / 2**30
    if free_gb < MIN_FREE_GB:
        fail(f"only {free_gb:.1f} GB free under {where}; the course needs about {MIN_FREE_GB:.0f} GB "
             "(torch, CuTeDSL, JupyterLab): free some space and run the command again")


def explain_pip_failure(log: str, what: str, wheelhouse: str | None) -> str:
    low = log.lower()
    if wheelhouse:
        return (f"installing {what} from the wheelhouse {wheelhouse} failed: a wheel is missing for this "
                "Python/platform; rebuild it with `make wheelhouse` on a machine with internet")
    if any(s in low for s in ("connection", "network is unreachable", "temporary failure in name resolution",
                              "max retries exceeded", "name or service not known", "timed out")):
        return (f"pip could not reach the package index while installing {what}: connect to the internet "
                "(or a proxy via PIP_INDEX_URL), or install offline with `make lab WHEELHOUSE=dir`")
    if "no space left" in low:
        return f"the disk filled up while installing {what}: free some space and run the command again"
    if "no matching distribution" in low or "could not find a version" in low:
        return (f"pip found no build of {what} for Python {sys.version_info[0]}.{sys.version_info[1]} on "
                f"this platform ({platform.system()} {platform.machine()})")
    tail = "\n".join(log.strip().splitlines()[-5:])
    return f"pip failed while installing {what}:\n{tail}"


def torch_spec(system: str, nvidia_driver: bool) -> str:
    """The torch to install: on Linux without an NVIDIA driver the CPU build (not several GB of CUDA
    wheels); elsewhere PyPI's own build (macOS: CPU/MPS; the last Intel-Mac build is chosen by pip)."""
    return "torch==2.13.0" if system == "Linux" and not nvidia_driver else "torch"


def pip(vpy: Path, args: list[str], what: str, wheelhouse: str | None) -> None:
    cmd = [str(vpy), "-m", "pip", "install", "--disable-pip-version-check", "-q"]
    if wheelhouse:
        cmd += ["--no-index", "--find-links", wheelhouse]
    print(f"setup: installing {what} ...", flush=True)
    run = subprocess.run(cmd + args, capture_output=True, text=True)
    if run.returncode != 0:
        fail(explain_pip_failure(run.stdout + run.stderr, what, wheelhouse))


def has_module(vpy: Path, name: str) -> bool:
    return subprocess.run([str(vpy), "-c", f"import {name}"], capture_output=True).returncode == 0


def fingerprint() -> str:
    h = hashlib.sha256()
    for name in ("pyproject.toml", "scripts/setup_env.py"):
        h.update((ROOT / name).read_bytes())
    return h.hexdigest()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--venv", default=".venv")
    ap.add_argument("--wheelhouse", default=os.environ.get("WHEELHOUSE") or None)
    ap.add_argument("--torch", default=os.environ.get("TORCH_SPEC") or None,
                    help="pip requirement for torch when none is installed (default: torch==2.13.0 without "
                         "an NVIDIA driver, plain `torch` with one)")
    a = ap.parse_args()
    check_python()
    venv = (ROOT / a.venv).resolve()
    stamp = venv / ".cutekit-installed"
    if stamp.exists() and stamp.read_text() == fingerprint():
        return                                          # nothing changed: no reinstall
    if a.wheelhouse and not Path(a.wheelhouse).is_dir():
        fail(f"WHEELHOUSE={a.wheelhouse} is not a folder; build one with `make wheelhouse`")
    check_disk(ROOT)
    vpy = venv / "bin" / "python"
    if not vpy.exists():
        print(f"setup: creating {venv} with Python {sys.version.split()[0]}", flush=True)
        made = subprocess.run([sys.executable, "-m", "venv", str(venv)], capture_output=True, text=True)
        if made.returncode != 0:
            fail("could not create a virtual environment (on Debian/Ubuntu: apt install python3-venv): "
                 + made.stderr.strip().splitlines()[-1] if made.stderr.strip() else "")
    if not has_module(vpy, "torch"):
        spec = a.torch or torch_spec(platform.system(), bool(shutil.which("nvidia-smi")))
        pip(vpy, [spec], spec, a.wheelhouse)
    pip(vpy, ["-e", f"{ROOT}[dev]"], "the course (cutekit, CuTeDSL, Jupyter, test tools)", a.wheelhouse)
    reg = subprocess.run([str(vpy), "-m", "ipykernel", "install", "--sys-prefix", "--name", KERNEL_NAME,
                          "--display-name", "CuTe by Hand"], capture_output=True, text=True)
    if reg.returncode != 0:
        fail("could not register the Jupyter kernel: " + reg.stderr.strip()[-300:])
    stamp.write_text(fingerprint())
    print(f"setup: ready ({venv})", flush=True)


if __name__ == "__main__":
    main()
