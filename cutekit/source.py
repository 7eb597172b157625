"""Lines of a course kernel's source, to read a long kernel one step at a time in a notebook without
importing it (importing a kernel module needs the `cutlass` it was written for; reading it does not).

    kernel_lines("benchmarks.kernels.hopper_gemm", "# ---- 2. shared memory", "consumer_warps =")
"""
from __future__ import annotations

import importlib.util
from pathlib import Path


def kernel_lines(module: str, first: str, last: str, through: bool = False) -> str:
    """The lines of `module`'s source from the first line containing `first` up to the next line containing
    `last` (that line included when `through`), with the common indentation removed. Raises ValueError
    naming the marker that is not there."""
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.origin:
        raise ValueError(f"kernel_lines: no module {module!r} on this path")
    lines = Path(spec.origin).read_text().splitlines()
    start = next((i for i, line in enumerate(lines) if first in line), None)
    if start is None:
        raise ValueError(f"kernel_lines: {module} has no line containing {first!r}")
    end = next((i for i in range(start + 1, len(lines)) if last in lines[i]), None)
    if end is None:
        raise ValueError(f"kernel_lines: {module} has no line containing {last!r} after {first!r}")
    chosen = lines[start:end + 1 if through else end]
    while chosen and not chosen[-1].strip():
        chosen.pop()
    indent = min(len(line) - len(line.lstrip()) for line in chosen if line.strip())
    return "\n".join(line[indent:] for line in chosen)


__all__ = ["kernel_lines"]
