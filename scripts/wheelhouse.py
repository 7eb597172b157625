"""Download every wheel the course needs into one folder, for labs without internet.

    python scripts/wheelhouse.py [--dest build/wheelhouse] [--python 3.11] [--arch x86_64] [--glibc 2.28]
    python scripts/wheelhouse.py --os macos --arch arm64 [--macos 14.0]     # Macs (no CuTeDSL there)
    make wheelhouse WHEELHOUSE=/media/usb/wheels          # then, on each lab machine:
    make lab WHEELHOUSE=/media/usb/wheels                 # pip install --no-index --find-links DIR

The folder holds the course's dependencies and its test tools (pyproject.toml), torch (TORCH_SPEC, by
default the CPU build that scripts/setup_env.py installs without an NVIDIA driver), the build backend
(setuptools, wheel) so the course itself installs from source with the index switched off, and a wheel of
the course. `plan` is the pip command, as data; `wheelhouse.json` in the folder records it and the files.
Wheels are chosen for the target Python and platform with `pip download --only-binary=:all:`, so the
folder can be built on another machine than the labs' (same architecture or not).

Macs (`--os macos`, Apple silicon `arm64` or Intel `x86_64`) get what the set-up installs there: no CuTeDSL
(nvidia-cutlass-dsl 4.8.1 has no macOS wheels; the reference tier and the simulator grade every exercise),
PyPI's torch. pip evaluates environment markers (`sys_platform == 'darwin'`) for the machine it runs on, not
for `--platform`, so for a Mac the requirements are first resolved for the target by `uv pip compile
--python-platform` (every package a Mac needs, `appnope` included) and pip downloads exactly those pins
(`--no-deps`).
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

try:
    import tomllib
except ImportError:  # Python 3.10: pip carries a copy of the same parser
    from pip._vendor import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_TORCH = "torch==2.13.0"      # setup_env.py's choice without an NVIDIA driver: the CPU build
DEFAULT_GLIBC = "2.28"               # the oldest glibc torch's CPU wheels support; labs need this or newer
ARCHES = ("x86_64", "aarch64")       # what CuTeDSL ships wheels for
MAC_ARCHES = ("arm64", "x86_64")     # Apple silicon, Intel
DEFAULT_MACOS = "14.0"               # the oldest macOS among the labs' Macs (wheels for older ones also fit)
MAC_TORCH = "torch"                  # setup_env.py's choice on macOS: PyPI's build (CPU and MPS)


@dataclass(frozen=True)
class Plan:
    """What to download: requirements, for which interpreter and platform tags, into which folder."""
    dest: str
    python_version: str
    platforms: tuple[str, ...]
    requirements: tuple[str, ...]
    uv_platform: str = ""            # set: resolve for this platform with uv first (a Mac), then pip --no-deps

    @property
    def pinned(self) -> str:
        return str(Path(self.dest) / "requirements-resolved.txt")

    def uv_compile(self, uv: str, listed: str) -> list[str]:
        """`uv pip compile` of the requirements (written to `listed`) for the target platform, into `pinned`."""
        return [uv, "pip", "compile", listed, "--python-platform", self.uv_platform, "--python-version",
                self.python_version, "--only-binary", ":all:", "--quiet", "-o", self.pinned]

    def pip_download(self, python: str = sys.executable) -> list[str]:
        command = [python, "-m", "pip", "download", "--disable-pip-version-check", "--dest", self.dest,
                   "--only-binary=:all:", "--implementation", "cp", "--python-version", self.python_version]
        for tag in self.platforms:
            command += ["--platform", tag]
        if self.uv_platform:
            return command + ["--no-deps", "-r", self.pinned]
        return command + list(self.requirements)


def manylinux_platforms(arch: str, glibc: str) -> tuple[str, ...]:
    """Every manylinux tag a machine with `glibc` runs, newest first: pip takes `--platform` literally.

    >>> manylinux_platforms("x86_64", "2.28")[:2], manylinux_platforms("x86_64", "2.28")[-3:]
    (('manylinux_2_28_x86_64', 'manylinux_2_27_x86_64'), ('manylinux2014_x86_64', 'manylinux2010_x86_64', 'manylinux1_x86_64'))
    """
    if arch not in ARCHES:
        raise ValueError(f"no CuTeDSL wheels for {arch!r}: choose one of {', '.join(ARCHES)}")
    major, _, minor = glibc.partition(".")
    if major != "2" or not minor.isdigit() or int(minor) < 17:
        raise ValueError(f"glibc {glibc!r} is not a version like 2.28 (2.17 or newer)")
    tags = [f"manylinux_2_{m}_{arch}" for m in range(int(minor), 16, -1)] + [f"manylinux2014_{arch}"]
    if arch == "x86_64":
        tags += [f"manylinux2010_{arch}", f"manylinux1_{arch}"]
    return tuple(tags)


def mac_platforms(arch: str, macos: str) -> tuple[str, ...]:
    """Every macOS wheel tag a Mac of `arch` running `macos` (or newer) accepts, newest first.

    >>> mac_platforms("arm64", "14.0")[:3], "macosx_11_0_arm64" in mac_platforms("arm64", "14.0")
    (('macosx_14_0_arm64', 'macosx_14_0_universal2', 'macosx_13_0_arm64'), True)
    """
    from packaging.tags import mac_platforms as tags
    if arch not in MAC_ARCHES:
        raise ValueError(f"no Mac is {arch!r}: choose arm64 (Apple silicon) or x86_64 (Intel)")
    major, _, minor = macos.partition(".")
    if not major.isdigit() or not (minor or "0").isdigit() or not 11 <= int(major) <= 30 and not (
            int(major) == 10 and int(minor or 0) >= 15):
        raise ValueError(f"macOS {macos!r} is not a version like 14.0 (10.15 or newer)")
    return tuple(tags((int(major), int(minor or 0)), arch))


def for_target(requirements, target: dict) -> tuple[str, ...]:
    """The requirements a machine described by `target` (environment-marker values) installs, markers gone:
    nvidia-cutlass-dsl drops out on a Mac, `numpy<2` stays only on an Intel Mac."""
    from packaging.requirements import Requirement
    kept = []
    for line in requirements:
        requirement = Requirement(line)
        if requirement.marker is None or requirement.marker.evaluate(target):
            requirement.marker = None
            kept.append(str(requirement))
    return tuple(dict.fromkeys(kept))


def course_requirements(pyproject: Path, torch: str = DEFAULT_TORCH) -> tuple[str, ...]:
    """The project's dependencies and dev extras, the torch build, and the build backend."""
    project = tomllib.loads(pyproject.read_text())
    needs = list(project["project"]["dependencies"])
    needs += project["project"].get("optional-dependencies", {}).get("dev", [])
    needs += project["build-system"]["requires"] + ["wheel"]
    return tuple(dict.fromkeys([torch] + needs))


def make_plan(dest: Path, python_version: str, arch: str, glibc: str, torch: str, system: str = "linux",
              macos: str = DEFAULT_MACOS) -> Plan:
    if not python_version.replace(".", "").isdigit() or python_version.count(".") != 1:
        raise ValueError(f"python version {python_version!r} is not like 3.11")
    if not (3, 10) <= tuple(int(part) for part in python_version.split(".")) <= (3, 13):
        raise ValueError(f"python {python_version}: the course runs on Python 3.10-3.13 (CuTeDSL 4.8.1's wheels)")
    if system == "macos":
        arch = {"aarch64": "arm64"}.get(arch, arch)
        platforms = mac_platforms(arch, macos)
        target = {"sys_platform": "darwin", "platform_system": "Darwin", "platform_machine": arch,
                  "python_version": python_version, "os_name": "posix", "extra": ""}
        requirements = for_target(course_requirements(ROOT / "pyproject.toml", torch), target)
        return Plan(str(dest), python_version, platforms, requirements, f"{'aarch64' if arch == 'arm64' else arch}-apple-darwin")
    if system != "linux":
        raise ValueError(f"--os {system!r}: choose linux or macos (Windows labs run the Linux steps in WSL 2)")
    return Plan(str(dest), python_version, manylinux_platforms(arch, glibc),
                course_requirements(ROOT / "pyproject.toml", torch))


def build_course_wheel(dest: Path) -> None:
    """The course itself as a wheel (pure Python, any platform), beside its dependencies."""
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--disable-pip-version-check", "-q", "--no-deps",
                    "--wheel-dir", str(dest), str(ROOT)], check=True)


def write_manifest(plan: Plan, dest: Path, seconds: float) -> dict:
    files = sorted(p for p in dest.iterdir() if p.suffix == ".whl")
    manifest = {**asdict(plan), "built": time.strftime("%Y-%m-%d %H:%M"), "seconds": round(seconds),
                "install": f"make lab WHEELHOUSE={dest}   (pip install --no-index --find-links {dest} ...)",
                "wheels": {p.name: p.stat().st_size for p in files},
                "total_mib": round(sum(p.stat().st_size for p in files) / 2**20, 1)}
    (dest / "wheelhouse.json").write_text(json.dumps(manifest, indent=1) + "\n")
    return manifest


def main(argv: list[str] | None = None) -> int:
    here = f"{sys.version_info[0]}.{sys.version_info[1]}"
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dest", type=Path, default=ROOT / "build" / "wheelhouse")
    ap.add_argument("--python", default=os.environ.get("WHEELHOUSE_PYTHON") or here,
                    help=f"the labs' Python, like 3.11 (default: this one, {here})")
    ap.add_argument("--os", dest="system", default=os.environ.get("WHEELHOUSE_OS") or "linux",
                    help="the labs' system: linux (default) or macos (no CuTeDSL there; PyPI's torch)")
    ap.add_argument("--arch", default=os.environ.get("WHEELHOUSE_ARCH") or platform.machine(),
                    help="the labs' CPU: x86_64 or aarch64; on macos arm64 or x86_64 (default: this machine's)")
    ap.add_argument("--macos", default=os.environ.get("WHEELHOUSE_MACOS") or DEFAULT_MACOS,
                    help=f"with --os macos: the oldest macOS among the labs (default {DEFAULT_MACOS})")
    ap.add_argument("--glibc", default=os.environ.get("WHEELHOUSE_GLIBC") or DEFAULT_GLIBC,
                    help=f"the oldest glibc among the labs (`ldd --version`; default {DEFAULT_GLIBC})")
    ap.add_argument("--torch", default=os.environ.get("TORCH_SPEC") or None,
                    help=f"the torch requirement (default {DEFAULT_TORCH} on Linux, the CPU build; `torch` for a "
                         f"CUDA build, several GB; on macos {MAC_TORCH})")
    ap.add_argument("--dry-run", action="store_true", help="print the pip command and stop")
    args = ap.parse_args(argv)
    torch = args.torch or (MAC_TORCH if args.system == "macos" else DEFAULT_TORCH)
    try:
        plan = make_plan(args.dest.resolve(), args.python, args.arch, args.glibc, torch, args.system, args.macos)
    except ValueError as problem:
        print(f"wheelhouse: {problem}", file=sys.stderr)
        return 2
    command = plan.pip_download()
    listed = Path(plan.dest) / "requirements-wanted.txt"
    if plan.uv_platform:
        uv = shutil.which("uv") or shutil.which("uv", path=str(Path(sys.executable).parent)) or "uv"
        print("wheelhouse: " + " ".join(plan.uv_compile(uv, str(listed))), flush=True)
    print("wheelhouse: " + " ".join(command), flush=True)
    if args.dry_run:
        return 0
    started = time.monotonic()
    args.dest.mkdir(parents=True, exist_ok=True)
    if plan.uv_platform:
        listed.write_text("\n".join(plan.requirements) + "\n")
        if subprocess.run(plan.uv_compile(uv, str(listed))).returncode != 0:
            print(f"wheelhouse: uv could not resolve the course for {plan.uv_platform} (the message above says "
                  "why; `pip install uv` if it is missing); no wheelhouse written", file=sys.stderr)
            return 1
    if subprocess.run(command).returncode != 0:
        print(f"wheelhouse: pip could not download a wheel for Python {plan.python_version} on {plan.platforms[0]}"
              " (the message above names it); no wheelhouse written", file=sys.stderr)
        return 1
    build_course_wheel(plan_dest := Path(plan.dest))
    manifest = write_manifest(plan, plan_dest, time.monotonic() - started)
    print(f"wheelhouse: {len(manifest['wheels'])} wheels, {manifest['total_mib']} MiB in {plan_dest} "
          f"({manifest['seconds']} s)\n  on each lab machine: {manifest['install']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
