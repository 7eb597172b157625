"""The course's home: installable, two commands, pairs in sync, a doctor that tells the truth."""
from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import jupytext
import nbformat
import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK_DIRS = ("course", "solutions")


def _setup_env():
    spec = importlib.util.spec_from_file_location("setup_env", ROOT / "scripts" / "setup_env.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _name(requirement: str) -> str:
    return re.split(r"[<>=!~\[; ]", requirement.strip(), maxsplit=1)[0].lower().replace("_", "-")


def test_layout_of_the_repository():
    for path in ("course", "cutekit", "solutions", "tests", "environment.yml", "pyproject.toml",
                 "Makefile", "README.md", ".ci/run"):
        assert (ROOT / path).exists(), f"{path} is missing"


def test_pyproject_pins_cutedsl_and_lists_the_stack():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    deps = project["dependencies"]
    cutedsl = [d for d in deps if _name(d) == "nvidia-cutlass-dsl"]
    assert len(cutedsl) == 1 and cutedsl[0].startswith("nvidia-cutlass-dsl==4.8.1;"), cutedsl  # pinned, where it has wheels
    for name in ("torch", "numpy", "matplotlib", "ipywidgets", "jupyterlab", "jupytext", "nbval"):
        assert name in {_name(d) for d in deps}, f"{name} missing from dependencies"
    assert {"pytest", "hypothesis"} <= {_name(d) for d in project["optional-dependencies"]["dev"]}


def test_environment_yml_names_the_same_dependencies_as_pyproject():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    wanted = {_name(d) for d in project["dependencies"] + project["optional-dependencies"]["dev"]}
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    conda, pip = set(), set()
    for dep in env["dependencies"]:
        if isinstance(dep, dict):
            pip |= {_name(d) for d in dep["pip"] if not d.startswith("-") and d != "."}
            assert "." in dep["pip"], ("environment.yml must install this repository, as a copy (`.`, not `-e .`: an "
                                       "image's home volume is mounted over the folder it was built in)")
        else:
            conda.add(_name(dep))
    named = (conda | pip) - {"python", "pip"}
    assert named == wanted, f"only in environment.yml: {sorted(named - wanted)}; only in pyproject: {sorted(wanted - named)}"
    pinned = [d for d in project["dependencies"] if _name(d) == "nvidia-cutlass-dsl"]
    assert pinned[0] in [d for dep in env["dependencies"] if isinstance(dep, dict) for d in dep["pip"]]


def test_ci_runs_the_readmes_test_command():
    readme = (ROOT / "README.md").read_text()
    assert "make lab" in readme and "make test" in readme
    lines = [l for l in (ROOT / ".ci/run").read_text().splitlines() if l.strip() and not l.startswith("#")]
    assert lines[-1].strip() == "make test"


def _pairs():
    for d in NOTEBOOK_DIRS:
        for py in sorted((ROOT / d).glob("[0-9][0-9]_*.py")):
            yield py, py.with_suffix(".ipynb")


def test_every_chapter_is_a_pair():
    for d in NOTEBOOK_DIRS:
        pys = {p.stem for p in (ROOT / d).glob("[0-9][0-9]_*.py")}
        nbs = {p.stem for p in (ROOT / d).glob("[0-9][0-9]_*.ipynb")}
        assert pys == nbs, f"{d}: unpaired {sorted(pys ^ nbs)}"


@pytest.mark.parametrize("py,nb", list(_pairs()), ids=lambda p: str(p.relative_to(ROOT)) if isinstance(p, Path) else p)
def test_jupytext_pair_is_in_sync(py, nb):
    from_py = jupytext.read(py)
    from_nb = nbformat.read(nb, as_version=4)
    a = [(c.cell_type, c.source.strip()) for c in from_py.cells]
    b = [(c.cell_type, c.source.strip()) for c in from_nb.cells]
    for i, (x, y) in enumerate(zip(a, b)):
        assert x == y, f"{py.name} and {nb.name} differ at cell {i}: run `make sync`"
    assert len(a) == len(b), f"{py.name} has {len(a)} cells, {nb.name} {len(b)}: run `make sync`"


@pytest.mark.parametrize("py,nb", list(_pairs()), ids=lambda p: str(p.relative_to(ROOT)) if isinstance(p, Path) else p)
def test_notebook_is_committed_without_outputs(py, nb):
    book = nbformat.read(nb, as_version=4)
    dirty = [i for i, c in enumerate(book.cells) if c.cell_type == "code" and (c.outputs or c.execution_count)]
    assert not dirty, f"{nb.name} has outputs in cells {dirty}: run `make sync`"


def test_doctor_reports_the_reference_tier_and_exits_zero():
    out = subprocess.run([sys.executable, "-m", "cutekit", "doctor", "--no-gpu"], capture_output=True, text=True,
                         timeout=300, cwd=ROOT)
    assert out.returncode == 0, out.stdout + out.stderr
    assert re.search(r"\[yes\] reference", out.stdout)
    assert "cutedsl-cpu" in out.stdout and "gpu" in out.stdout


def test_doctor_says_why_the_gpu_tier_is_missing_on_a_cpu_machine():
    from cutekit import backend
    gpu = backend.probe_gpu()
    pytest.importorskip("torch")
    import torch
    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU")
    assert not gpu.available and "no CUDA device" in gpu.detail and gpu.remedy


def test_doctor_finds_cutedsl_traced_on_the_cpu():
    pytest.importorskip("cutlass")
    from cutekit import backend
    tier = backend.probe_cutedsl_cpu()
    assert tier.available, tier.detail
    assert tier.facts["version"] == "4.8.1"


def test_setup_refuses_a_wrong_python_in_one_line(monkeypatch, capsys):
    env = _setup_env()
    monkeypatch.setattr(env.sys, "version_info", (3, 8, 10))
    with pytest.raises(SystemExit) as exit_:
        env.check_python()
    assert exit_.value.code == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Python 3.8" in err and "3.10" in err


def test_setup_refuses_a_full_disk(monkeypatch, capsys, tmp_path):
    env = _setup_env()
    monkeypatch.setattr(env.shutil, "disk_usage", lambda p: type("U", (), {"free": 2**29})())
    with pytest.raises(SystemExit):
        env.check_disk(tmp_path)
    err = capsys.readouterr().err
    assert "0.5 GB free" in err and "free some space" in err


@pytest.mark.parametrize("log,expected", [
    ("ERROR: ... Max retries exceeded with url: /simple/torch/ (Caused by NewConnectionError)", "could not reach the package index"),
    ("OSError: [Errno 28] No space left on device", "disk filled up"),
    ("ERROR: No matching distribution found for nvidia-cutlass-dsl==4.8.1", "no build of"),
])
def test_setup_explains_pip_failures(log, expected):
    assert expected in _setup_env().explain_pip_failure(log, "x", None)


def test_setup_without_network_says_so(tmp_path):
    """A real pip run against an index that cannot be reached gives the one clear line."""
    env = _setup_env()
    out = subprocess.run([sys.executable, "-m", "pip", "install", "--no-cache-dir", "--index-url",
                          "http://127.0.0.1:9/simple", "--retries", "1", "--isolated", "--timeout", "2",
                          "definitely-not-installed-pkg"], capture_output=True, text=True, timeout=120)
    assert out.returncode != 0
    assert "could not reach the package index" in env.explain_pip_failure(out.stdout + out.stderr, "x", None)
