"""Download every wheel the course needs into one folder, for labs without internet.

    python scripts/wheelhouse.py [--dest build/wheelhouse] [--python 3.11] [--arch x86_64] [--glibc 2.28]
    make wheelhouse WHEELHOUSE=/media/usb/wheels          # then, on each lab machine:
    make lab WHEELHOUSE=/media/usb/wheels                 # pip install --no-index --find-links DIR

The folder holds the course's dependencies and its test tools (pyproject.toml), torch (TORCH_SPEC, by
default the CPU build that scripts/setup_env.py installs without an NVIDIA driver), the build backend
(setuptools, wheel) so the course itself installs from source with the index switched off, and a wheel of
the course. `plan` is the pip command, as data; `wheelhouse.json` in the folder records it and the files.
Wheels are chosen for the target Python and platform with `pip download --only-binary=:all:`, so the
folder can be built on another machine than the labs' (same architecture or not).
"""
from __future__ import annotations

import argparse
import json
import os
import platform
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


@dataclass(frozen=True)
class Plan:
    """What to download: requirements, for which interpreter and platform tags, into which folder."""
    dest: str
    python_version: str
    platforms: tuple[str, ...]
    requirements: tuple[str, ...]

    def pip_download(self, python: str = sys.executable) -> list[str]:
        command = [python, "-m", "pip", "download", "--disable-pip-version-check", "--dest", self.dest,
                   "--only-binary=:all:", "--implementation", "cp", "--python-version", self.python_version]
        for tag in self.platforms:
            command += ["--platform", tag]
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


def course_requirements(pyproject: Path, torch: str = DEFAULT_TORCH) -> tuple[str, ...]:
    """The project's dependencies and dev extras, the torch build, and the build backend."""
    project = tomllib.loads(pyproject.read_text())
    needs = list(project["project"]["dependencies"])
    needs += project["project"].get("optional-dependencies", {}).get("dev", [])
    needs += project["build-system"]["requires"] + ["wheel"]
    return tuple(dict.fromkeys([torch] + needs))


def make_plan(dest: Path, python_version: str, arch: str, glibc: str, torch: str) -> Plan:
    if not python_version.replace(".", "").isdigit() or python_version.count(".") != 1:
        raise ValueError(f"python version {python_version!r} is not like 3.11")
    if not (3, 10) <= tuple(int(part) for part in python_version.split(".")) <= (3, 13):
        raise ValueError(f"python {python_version}: CuTeDSL 4.8.1 has wheels for Python 3.10-3.13 only")
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
    ap.add_argument("--arch", default=os.environ.get("WHEELHOUSE_ARCH") or platform.machine(),
                    help="the labs' CPU: x86_64 or aarch64 (default: this machine's)")
    ap.add_argument("--glibc", default=os.environ.get("WHEELHOUSE_GLIBC") or DEFAULT_GLIBC,
                    help=f"the oldest glibc among the labs (`ldd --version`; default {DEFAULT_GLIBC})")
    ap.add_argument("--torch", default=os.environ.get("TORCH_SPEC") or DEFAULT_TORCH,
                    help=f"the torch requirement (default {DEFAULT_TORCH}; `torch` for a CUDA build, several GB)")
    ap.add_argument("--dry-run", action="store_true", help="print the pip command and stop")
    args = ap.parse_args(argv)
    try:
        plan = make_plan(args.dest.resolve(), args.python, args.arch, args.glibc, args.torch)
    except ValueError as problem:
        print(f"wheelhouse: {problem}", file=sys.stderr)
        return 2
    command = plan.pip_download()
    print("wheelhouse: " + " ".join(command), flush=True)
    if args.dry_run:
        return 0
    started = time.monotonic()
    args.dest.mkdir(parents=True, exist_ok=True)
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
