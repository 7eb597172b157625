"""Which tiers this machine offers, detected in one place.

Tiers:
  reference    cutekit's own algebra (and simulator): always, if cutekit imports.
  cutedsl-cpu  real CuTeDSL (nvidia-cutlass-dsl) imported and tracing a layout on the CPU.
  gpu          real CuTeDSL kernels on an NVIDIA GPU of compute capability 8.0 (Ampere) or newer.

Each probe of CuTeDSL runs in a subprocess with a time limit, so a broken install cannot hang or crash the
caller, and reports *why* a tier is missing and what to do about it.
"""
from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
from dataclasses import dataclass, field

CUTEDSL_VERSION = "4.8.1"
TIERS = ("reference", "cutedsl-cpu", "gpu")


@dataclass(frozen=True)
class Tier:
    name: str
    available: bool
    detail: str                      # what was found (version, device) or why it is missing
    remedy: str = ""                 # what to do when missing
    facts: dict = field(default_factory=dict)


def _run_probe(which: str, timeout: float) -> tuple[dict | None, str]:
    try:
        out = subprocess.run([sys.executable, "-m", "cutekit._probe", which], capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, f"the probe did not finish within {timeout:.0f} s"
    lines = [l for l in out.stdout.splitlines() if l.startswith("CUTEKIT-PROBE ")]
    if lines:
        return json.loads(lines[-1][len("CUTEKIT-PROBE "):]), ""
    err = (out.stderr.strip().splitlines() or ["(no output)"])[-1]
    return None, err


def probe_reference() -> Tier:
    try:
        from cutekit import cute
        layout = cute.make_layout((4, 8), stride=(8, 1))
        got = str(layout), layout((1, 2))
    except Exception as exc:  # a broken checkout: say what broke
        return Tier("reference", False, f"cutekit.cute failed: {type(exc).__name__}: {exc}",
                    "reinstall the course: `make setup` (or `pip install -e .`)")
    if got != ("(4,8):(8,1)", 10):
        return Tier("reference", False, f"cutekit.cute gave {got}, expected ('(4,8):(8,1)', 10)",
                    "reinstall the course: `make setup`")
    return Tier("reference", True, "cutekit's layout algebra and CPU simulator")


# Where nvidia-cutlass-dsl 4.8.1 publishes wheels (pyproject.toml installs it there and only there).
CUTEDSL_PLATFORMS = {("Linux", "x86_64"), ("Linux", "aarch64"), ("Windows", "AMD64")}
WITHOUT_CUTEDSL_LOSS = ("the reference tier and the simulator grade every exercise; the criteria that compile "
                        "your kernel with real CuTeDSL and read its PTX wait (they never count as failed)")


def platform_name(system: str | None = None, machine: str | None = None) -> str:
    """This machine as a learner names it: `macOS arm64`, `Linux x86_64`, `Windows AMD64`."""
    system, machine = system or platform.system(), machine or platform.machine()
    return f"{ {'Darwin': 'macOS'}.get(system, system)} {machine}".strip()


def cutedsl_has_wheels(system: str | None = None, machine: str | None = None) -> bool:
    """Whether nvidia-cutlass-dsl 4.8.1 can be installed on this operating system and processor."""
    machine = {"arm64": "aarch64", "amd64": "AMD64" if (system or platform.system()) == "Windows" else "x86_64"}.get(
        (machine or platform.machine()).lower(), machine or platform.machine())
    return (system or platform.system(), machine) in CUTEDSL_PLATFORMS


def probe_cutedsl_cpu(timeout: float = 120) -> Tier:
    if not cutedsl_has_wheels():
        try:
            import importlib.util
            found = importlib.util.find_spec("cutlass") is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            return Tier("cutedsl-cpu", False, f"nvidia-cutlass-dsl {CUTEDSL_VERSION} publishes no wheels for "
                        f"{platform_name()}, so it is not installed here",
                        f"nothing: {WITHOUT_CUTEDSL_LOSS}. For them, use Linux (or WSL 2 on Windows)")
    facts, err = _run_probe("cpu", timeout)
    if facts is None:
        return Tier("cutedsl-cpu", False, err, "reinstall: `make setup`")
    if not facts["ok"]:
        remedy = (f"`pip install nvidia-cutlass-dsl=={CUTEDSL_VERSION}` (Python 3.10-3.13); without it "
                  f"{WITHOUT_CUTEDSL_LOSS}"
                  if "import cutlass failed" in facts["why"] else "report this with the message above")
        return Tier("cutedsl-cpu", False, facts["why"], remedy, facts)
    note = "" if facts.get("version") == CUTEDSL_VERSION else f" (the course is tested with {CUTEDSL_VERSION})"
    return Tier("cutedsl-cpu", True, f"CuTeDSL {facts.get('version')} traces layouts and compiles kernels{note}",
                facts=facts)


def probe_gpu(timeout: float = 300) -> Tier:
    facts, err = _run_probe("gpu", timeout)
    if facts is None:
        return Tier("gpu", False, err, "check `nvidia-smi` and your CUDA torch install")
    if not facts["ok"]:
        why = facts["why"]
        if "no CUDA device" in why:
            remedy = ("none needed: every exercise runs on the CPU tiers; for the GPU tier use a machine with an "
                      "Ampere-or-newer NVIDIA GPU and a CUDA build of torch")
        elif "sm_80" in why:
            remedy = "use an Ampere (A100, RTX 30xx) or newer GPU; the CPU tiers still grade everything else"
        else:
            remedy = "check the driver (`nvidia-smi`) and that torch and CuTeDSL use the same CUDA major version"
        return Tier("gpu", False, why, remedy, facts)
    return Tier("gpu", True, f"{facts['device']} (sm_{facts['capability'].replace('.', '')}): CuTeDSL kernels run",
                facts=facts)


def detect(gpu: bool = True) -> list[Tier]:
    """All tiers, probed now. `gpu=False` skips the GPU probe (it reports it as not checked)."""
    tiers = [probe_reference(), probe_cutedsl_cpu()]
    tiers.append(probe_gpu() if gpu else Tier("gpu", False, "not checked", ""))
    return tiers


def hub_note() -> str:
    """On a course JupyterHub, what the hub gave this learner (deploy/jupyterhub_config.py sets
    CUTEKIT_HUB_GPU and CUDA_VISIBLE_DEVICES); elsewhere empty."""
    note = os.environ.get("CUTEKIT_HUB_GPU", "")
    if note and os.environ.get("CUDA_VISIBLE_DEVICES"):
        note += f" (CUDA_VISIBLE_DEVICES={os.environ['CUDA_VISIBLE_DEVICES']})"
    return note


@dataclass(frozen=True)
class DoctorReport:
    """The tiers of this machine, shown as a table in JupyterLab and as lines in a terminal."""
    tiers: tuple

    @property
    def ok(self) -> bool:
        return self.tiers[0].available

    def __str__(self) -> str:
        lines = [f"CuTe by Hand: what this machine offers ({platform_name()}, Python {platform.python_version()})", ""]
        for t in self.tiers:
            lines.append(f"  [{'yes' if t.available else 'no '}] {t.name:<12} {t.detail}")
            if not t.available and t.remedy:
                lines.append(f"        {'':<12} what to do: {t.remedy}")
        lines.append("")
        if hub_note():
            lines += [f"JupyterHub: {hub_note()}", ""]
        if self.ok:
            lines.append("Checks will run on: " + ", ".join(t.name for t in self.tiers if t.available) + ".")
        else:
            lines.append("The reference tier is missing: nothing can be graded until it works.")
        return "\n".join(lines)

    __repr__ = __str__

    def _repr_html_(self) -> str:
        from html import escape
        rows = []
        for t in self.tiers:
            colour = "#1a7f37" if t.available else "#b35900"
            what = escape(t.detail) + ("" if t.available or not t.remedy else f"<br><i>what to do:</i> {escape(t.remedy)}")
            rows.append(f"<tr><td style='color:{colour};font-weight:bold'>{'yes' if t.available else 'no'}</td>"
                        f"<td><code>{t.name}</code></td><td style='text-align:left'>{what}</td></tr>")
        return (f"<p>{escape(platform_name())}, Python {platform.python_version()}</p><table><thead><tr><th>available</th><th>tier</th><th style='text-align:left'>details</th></tr></thead>"
                f"<tbody>{''.join(rows)}</tbody></table>")


def doctor(gpu: bool = True) -> DoctorReport:
    """Probe every tier now and return a report (a table in a notebook, lines in a terminal)."""
    return DoctorReport(tuple(detect(gpu=gpu)))
