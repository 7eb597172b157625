"""The latest GPU numbers measured for the course's kernels, for notebooks that run where there is no GPU.

`latest_table("sum rows")` returns the device line of the repository's benchmarks/RESULTS.md and the rows
of its main table whose kernel starts with one of the given words, as a small text table; chapters 05 and
07 print it when they cannot measure.
"""
from __future__ import annotations

from pathlib import Path

RESULTS = Path(__file__).resolve().parent.parent / "benchmarks" / "RESULTS.md"


def _cells(line: str) -> list[str]:
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def latest_table(*kernels: str, path: Path = RESULTS) -> str:
    """The device and the main table's rows for `kernels` (prefixes of the first column) from RESULTS.md."""
    if not kernels:
        raise ValueError("latest_table: name at least one kernel, e.g. latest_table('sum rows')")
    if not Path(path).is_file():
        raise FileNotFoundError(f"latest_table: {path} is not here (it comes with the course's repository and "
                                "student bundle, not with an installed cutekit)")
    lines = Path(path).read_text().splitlines()
    first = next((i for i, line in enumerate(lines) if line.startswith("Device:")), None)
    device = "Device: (not recorded)"
    if first is not None:
        paragraph = []
        for line in lines[first:]:
            if not line.strip() or line.startswith("Command"):
                break
            paragraph.append(line.strip())
        device = " ".join(paragraph)
    start = next(i for i, line in enumerate(lines) if line.startswith("| kernel |"))
    header = _cells(lines[start])
    rows = []
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        cells = _cells(line)
        if any(cells[0].startswith(k) for k in kernels):
            rows.append(cells)
    if not rows:
        raise ValueError(f"latest_table: no row of {Path(path).name} starts with {', '.join(map(repr, kernels))}")
    keep = [header.index(name) for name in ("kernel", "shape", "dtype", "rate", "torch rate", "ratio")]
    table = [[header[i] for i in keep]] + [[row[i] for i in keep] for row in rows]
    widths = [max(len(r[c]) for r in table) for c in range(len(keep))]
    text = ["  ".join(cell.ljust(width) for cell, width in zip(r, widths)).rstrip() for r in table]
    return "\n".join([device, ""] + text[:1] + ["-" * len(text[0])] + text[1:])
