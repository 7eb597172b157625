"""The course on a machine without CuTeDSL (a Mac: nvidia-cutlass-dsl 4.8.1 has no macOS wheels) and on
every platform a learner brings: CuTeDSL is installed where it has wheels and skipped where not (an
environment marker), the dependencies resolve for each platform, and with CuTeDSL hidden the course still
runs on the reference tier and the simulator (`make test` runs the course notebooks that way)."""
import os
import pathlib
import re
import shutil
import subprocess
import sys

import pytest
from packaging.markers import Marker
from packaging.requirements import Requirement

from cutekit import backend

ROOT = pathlib.Path(__file__).resolve().parents[1]
HIDE = ROOT / "tests" / "without_cutedsl"
# (uv's --python-platform, sys_platform, platform_machine, platform.system(), has CuTeDSL wheels)
PLATFORMS = [
    ("aarch64-apple-darwin", "darwin", "arm64", "Darwin", False),
    ("x86_64-apple-darwin", "darwin", "x86_64", "Darwin", False),
    ("x86_64-pc-windows-msvc", "win32", "AMD64", "Windows", True),
    ("x86_64-unknown-linux-gnu", "linux", "x86_64", "Linux", True),
    ("aarch64-unknown-linux-gnu", "linux", "aarch64", "Linux", True),
]


def without_cutedsl(code):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(HIDE), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep))
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)


def cutedsl_requirement():
    import tomllib
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    return next(Requirement(d) for d in deps if d.startswith("nvidia-cutlass-dsl"))


@pytest.mark.parametrize("uv_platform, sys_platform, machine, system, wheels", PLATFORMS)
def test_cutedsl_is_required_exactly_where_it_has_wheels(uv_platform, sys_platform, machine, system, wheels):
    marker = cutedsl_requirement().marker
    assert marker.evaluate({"sys_platform": sys_platform, "platform_machine": machine}) is wheels
    assert backend.cutedsl_has_wheels(system, machine) is wheels


def test_the_hook_really_hides_cutedsl_and_the_simulator_still_runs():
    pytest.importorskip("cutlass", reason="nvidia-cutlass-dsl is not installed: nothing to hide")
    out = without_cutedsl(
        "import importlib.util, cutekit\n"
        "try:\n    import cutlass\n    print('VISIBLE', cutlass.__file__)\n"
        "except ModuleNotFoundError:\n    print('HIDDEN')\n"
        "print('SPEC', importlib.util.find_spec('cutlass'))\n"
        "print('USE', cutekit.use('auto').name)\n"
        "import cutlass.cute as cute\nprint('LAYOUT', cute.make_layout((8, 12), stride=(12, 1)))\n")
    assert out.returncode == 0, out.stderr
    assert "HIDDEN" in out.stdout and "SPEC None" in out.stdout, out.stdout
    assert "USE sim" in out.stdout and "LAYOUT (8,12):(12,1)" in out.stdout, out.stdout


def test_without_cutedsl_the_doctor_names_the_platform_and_what_is_lost():
    out = without_cutedsl("from cutekit import backend\nprint(backend.doctor(gpu=False))")
    assert out.returncode == 0, out.stderr
    assert backend.platform_name() in out.stdout
    assert "[no ] cutedsl-cpu" in out.stdout and "PTX" in out.stdout and "[yes] reference" in out.stdout


def test_on_a_mac_the_doctor_says_no_wheels_instead_of_asking_to_install(monkeypatch):
    monkeypatch.setattr(backend.platform, "system", lambda: "Darwin")
    monkeypatch.setattr(backend.platform, "machine", lambda: "arm64")
    monkeypatch.setattr("importlib.util.find_spec", lambda name, *a: None)
    tier = backend.probe_cutedsl_cpu()
    assert not tier.available and "no wheels for macOS arm64" in tier.detail
    assert "PTX" in tier.remedy and "pip install" not in tier.remedy


def test_setup_chooses_the_cpu_torch_on_linux_and_pypis_elsewhere():
    sys.path.insert(0, str(ROOT / "scripts"))
    import setup_env
    assert setup_env.torch_spec("Linux", nvidia_driver=False) == "torch==2.13.0"
    assert setup_env.torch_spec("Linux", nvidia_driver=True) == "torch"
    assert setup_env.torch_spec("Darwin", nvidia_driver=False) == "torch"
    assert setup_env.torch_spec("Windows", nvidia_driver=False) == "torch"


def uv_compile(requirements, uv_platform, tmp_path):
    uv = shutil.which("uv") or shutil.which("uv", path=str(pathlib.Path(sys.executable).parent))
    if uv is None:
        pytest.skip("uv is not installed (pip install uv): cannot resolve for other platforms")
    out = tmp_path / f"{uv_platform}.txt"
    done = subprocess.run([uv, "pip", "compile", *requirements, "--python-platform", uv_platform,
                           "--python-version", "3.11", "-q", "-o", str(out)],
                          capture_output=True, text=True, cwd=ROOT, timeout=240)
    if done.returncode != 0 and any(s in done.stderr.lower() for s in
                                    ("failed to fetch", "dns", "connect", "network", "timed out")):
        pytest.skip(f"the package index is not reachable: {done.stderr.strip().splitlines()[-1]}")
    assert done.returncode == 0, done.stderr
    pins = (re.match(r"^([A-Za-z0-9_.-]+)\s*(==|@)", line) for line in out.read_text().splitlines())
    return {pin.group(1).lower(): pin.group(0) for pin in pins if pin}


@pytest.mark.parametrize("uv_platform, sys_platform, machine, system, wheels", PLATFORMS)
def test_the_course_dependencies_resolve_for_every_platform(uv_platform, sys_platform, machine, system, wheels,
                                                             tmp_path):
    pinned = uv_compile(["pyproject.toml", "--extra", "dev"], uv_platform, tmp_path)
    assert ("nvidia-cutlass-dsl" in pinned) is wheels
    assert "torch" in pinned and "greenlet" in pinned and "jupyterlab" in pinned


@pytest.mark.parametrize("uv_platform", ["aarch64-apple-darwin", "x86_64-apple-darwin"])
def test_environment_yml_pip_section_resolves_on_macos(uv_platform, tmp_path):
    import yaml
    spec = yaml.safe_load((ROOT / "environment.yml").read_text())
    pip_section = next(d["pip"] for d in spec["dependencies"] if isinstance(d, dict))
    wanted = [line for line in pip_section if not line.startswith("-")] + [str(ROOT)]
    listed = tmp_path / "environment-pip.txt"
    listed.write_text("\n".join(wanted) + "\n")
    pinned = uv_compile([str(listed)], uv_platform, tmp_path)
    assert "torch" in pinned and "nvidia-cutlass-dsl" not in pinned


def test_without_cutedsl_a_ptx_cell_learns_it_is_unavailable_not_broken():
    out = without_cutedsl("from cutekit.checks import compile_to_ptx\n"
                          "r = compile_to_ptx('benchmarks/kernels/elementwise_add.py', 'add', ())\n"
                          "print(r.ok, r.available, r.error)")
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("False False no PTX on this machine: CuTeDSL"), out.stdout


def test_a_mac_wheelhouse_resolves_for_apple_silicon(tmp_path):
    """What `make wheelhouse WHEELHOUSE_OS=macos WHEELHOUSE_ARCH=arm64` downloads, resolved here by uv for
    aarch64-apple-darwin as scripts/wheelhouse.py resolves it: no CuTeDSL, PyPI's torch, and the Mac-only
    dependencies that pip's --platform alone would miss (it evaluates markers for the machine it runs on)."""
    sys.path.insert(0, str(ROOT / "scripts"))
    import wheelhouse
    plan = wheelhouse.make_plan(tmp_path, "3.11", "arm64", "", wheelhouse.MAC_TORCH, "macos")
    listed = tmp_path / "wanted.txt"
    listed.write_text("\n".join(plan.requirements) + "\n")
    pinned = uv_compile([str(listed), "--only-binary", ":all:"], plan.uv_platform, tmp_path)
    assert "torch" in pinned and "nvidia-cutlass-dsl" not in pinned and "jupyterlab" in pinned
    assert "appnope" in pinned       # ipykernel's dependency on macOS only

