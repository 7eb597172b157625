"""Run the code cells of NVIDIA's CuTeDSL notebooks on cutekit's CPU simulator.

    python scripts/run_nvidia_notebooks.py --notebooks DIR [--only NAME ...] [--timeout 60] [--show] [--cutedsl] [--seed N]
                                           [--small]

DIR holds NVIDIA's notebooks as they are in github.com/NVIDIA/cutlass, examples/python/CuTeDSL/notebooks/
(hello_world.ipynb, print.ipynb, ...). They are not part of this repository: copy them into an ignored folder
(.nvidia-examples/notebooks/ is ignored).

Each notebook runs in a fresh Python process: `import cutekit; cutekit.use("sim")` first, then its code cells
in order, in one namespace, as a notebook kernel runs them. The only change made to a cell is the device: the
string "cuda" becomes "cpu" and `torch.cuda.` becomes `torch.cpu.` (`cutlass.cuda` is left alone). A cell whose
last line is an expression prints its value, as a notebook shows it. A cell may run at most --timeout seconds
(60 by default); the first cell that fails or runs too long stops its notebook.

One line per notebook: its name, cells run / code cells, the seconds the cells took, and the first failure
(cells are numbered 1, 2, ... among the notebook's code cells).
--small shrinks the problem of the notebooks that set one in a cell (SMALL: tour_to_sol_gemm's m, n, k of 8192
become 256, 512, 256, which the simulator runs in seconds); the line says so. The notebook file is not changed.
--show prints every cell's output (what the notebook would show) under its number; --cutedsl runs the cells
with real CuTeDSL instead of the simulator (on a machine without a GPU, CuTeDSL runs host code and compiles
kernels but cannot launch them), to compare what the two print (--seed N makes their random data the same).
Exit status 0 when every notebook ran all its
cells.
"""
from __future__ import annotations

import argparse
import ast
import json
import linecache
import os
import re
import select
import signal
import subprocess
import sys
import tempfile
import time
import traceback

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

NOTEBOOKS = ("hello_world", "print", "data_types", "tensor", "tensorssa", "composed_layout", "cute_layout_algebra",
             "elementwise_add", "tour_to_sol_gemm", "async_pipeline")

# --small: (the line of a cell, what it becomes) per notebook
SMALL = {"tour_to_sol_gemm": [("m, n, k = 8192, 8192, 8192", "m, n, k = 256, 512, 256")]}

_STRING_CUDA = re.compile(r"""(["'])cuda\1""")
_TORCH_CUDA = re.compile(r"\btorch\.cuda\.")


def on_the_cpu(source: str) -> str:
    """The cell with its device changed: "cuda" -> "cpu", torch.cuda. -> torch.cpu. (nothing else)."""
    return _TORCH_CUDA.sub("torch.cpu.", _STRING_CUDA.sub(r"\1cpu\1", source))


def code_cells(path: str) -> list:
    with open(path, encoding="utf-8") as file:
        notebook = json.load(file)
    cells = []
    for cell in notebook.get("cells", []):
        if cell.get("cell_type") == "code":
            source = cell.get("source", "")
            cells.append("".join(source) if isinstance(source, list) else source)
    return cells


# ----------------------------------------------------------------------------------------------- the worker
# runs in the notebook's own process; tells the parent, one JSON line per event, on the file descriptor it got

def _run_cell(source: str, filename: str, namespace: dict):
    """exec the cell; a last expression's value is printed as a notebook shows it."""
    lines = source.splitlines(keepends=True)
    linecache.cache[filename] = (len(source), None, lines, filename)   # inspect.getsource finds cell code
    tree = ast.parse(source, filename)
    last = tree.body[-1] if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    if last is not None:
        tree.body.pop()
    exec(compile(tree, filename, "exec", dont_inherit=True), namespace)   # no __future__ of this script
    if last is not None:
        value = eval(compile(ast.Expression(last.value), filename, "eval", dont_inherit=True), namespace)
        if value is not None:
            print(repr(value))


def _where(error: BaseException) -> str:
    """The innermost frame of a failure, as file:line (cell frames named by the cell)."""
    frames = traceback.extract_tb(error.__traceback__)
    if not frames:
        return ""
    frame = frames[-1]
    name = frame.filename if frame.filename.startswith("<") else os.path.relpath(frame.filename, ROOT)
    return f" (at {name}:{frame.lineno})"


def shrunk(name: str, cells: list) -> list:
    """The cells with SMALL's substitutions for the notebook `name` (each must match exactly one cell)."""
    cells = list(cells)
    for old, new in SMALL.get(name, ()):
        found = [i for i, source in enumerate(cells) if old in source]
        if len(found) != 1:
            raise SystemExit(f"--small: {name} has {len(found)} cells with {old!r} (expected one); the notebook "
                             f"changed: update SMALL in {os.path.basename(__file__)}")
        cells[found[0]] = cells[found[0]].replace(old, new)
    return cells


def worker(path: str, status_fd: int, cutedsl: bool, seed, small: bool = False) -> int:
    status = os.fdopen(status_fd, "w", buffering=1)

    def tell(**event):
        sys.stdout.flush()
        sys.stderr.flush()
        event["output_at"] = os.lseek(1, 0, os.SEEK_CUR)     # where the cell's output begins or ends
        status.write(json.dumps(event) + "\n")

    sys.path.insert(0, ROOT)
    if not cutedsl:
        import cutekit
        cutekit.use("sim")
    if seed is not None:            # the same random data in both runs, to compare what they print
        import numpy
        import torch
        numpy.random.seed(seed)
        torch.manual_seed(seed)
    name = os.path.splitext(os.path.basename(path))[0]
    namespace = {"__name__": "__main__"}
    cells = shrunk(name, code_cells(path)) if small else code_cells(path)
    for number, source in enumerate(cells, start=1):
        tell(cell=number, started=time.time())
        start = time.perf_counter()
        try:
            _run_cell(on_the_cpu(source), f"<{name} cell {number}>", namespace)
        except BaseException as error:  # noqa: BLE001 - the cell's failure is the notebook's line
            sys.stdout.flush()
            traceback.print_exc()
            first = (str(error).strip().splitlines() or [""])[0][:300]
            tell(cell=number, seconds=time.perf_counter() - start,
                 error=f"{type(error).__name__}: {first}{_where(error)}")
            return 1
        tell(cell=number, seconds=time.perf_counter() - start)
    return 0


# ----------------------------------------------------------------------------------------------- the parent

def run_notebook(path: str, timeout: float, show: bool, cutedsl: bool, seed=None, small: bool = False) -> dict:
    """{"cells", "ran", "seconds", "failure", "output"} for one notebook, run in its own process."""
    cells = len(code_cells(path))
    read_end, write_end = os.pipe()
    output = tempfile.TemporaryFile()
    env = dict(os.environ)
    env.setdefault("PYTHONUNBUFFERED", "1")
    command = [sys.executable, os.path.abspath(__file__), "--worker", path, "--status-fd", str(write_end)]
    if cutedsl:
        command.append("--cutedsl")
    if seed is not None:
        command += ["--seed", str(seed)]
    if small:
        command.append("--small")
    process = subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT, pass_fds=(write_end,), cwd=ROOT,
                               env=env, start_new_session=True)
    os.close(write_end)
    pending, ran, seconds, failure = b"", 0, 0.0, None
    running, started = None, time.monotonic()
    marks = []                      # (cell, position in the output where the cell began)
    timings = {}                    # cell -> seconds it ran
    ended = False
    while not ended:
        while b"\n" not in pending:
            wait = None if running is None else max(0.0, running[1] + timeout - time.monotonic())
            ready, _, _ = select.select([read_end], [], [], wait)
            if not ready:           # a cell ran past the limit: the notebook's process is stopped
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
                failure = f"cell {running[0]}: still running after {timeout:g} s"
                seconds += time.monotonic() - running[1]
                ended = True
                break
            chunk = os.read(read_end, 65536)
            if not chunk:
                process.wait()
                if running is not None and failure is None:
                    failure = f"cell {running[0]}: the notebook's process ended (exit status {process.returncode})"
                ended = True
                break
            pending += chunk
        if ended:
            break
        line, pending = pending.split(b"\n", 1)
        event = json.loads(line)
        if "started" in event:
            running = (event["cell"], time.monotonic())
            marks.append((event["cell"], event["output_at"]))
            continue
        running = None
        seconds += event["seconds"]
        timings[event["cell"]] = event["seconds"]
        if "error" in event:
            failure = f"cell {event['cell']}: {event['error']}"
        else:
            ran += 1
    process.wait()
    os.close(read_end)
    output.seek(0)
    text = output.read()
    output.close()
    if failure is None and ran < cells:
        last = (text.decode("utf-8", "replace").strip().splitlines() or [""])[-1][:300]
        failure = f"cell {ran + 1}: the notebook's process ended before it (exit status {process.returncode}): {last}"
    per_cell = []
    for k, (cell, position) in enumerate(marks):
        end = marks[k + 1][1] if k + 1 < len(marks) else len(text)
        per_cell.append((cell, text[position:end].decode("utf-8", "replace"), timings.get(cell)))
    return {"cells": cells, "ran": ran, "seconds": seconds, "failure": failure, "output": per_cell,
            "wall": time.monotonic() - started}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--notebooks", help="folder holding NVIDIA's " + ", ".join(n + ".ipynb" for n in NOTEBOOKS))
    parser.add_argument("--only", nargs="*", choices=NOTEBOOKS, help="run only these")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds one cell may run (default 60)")
    parser.add_argument("--show", action="store_true", help="print every cell's output")
    parser.add_argument("--cutedsl", action="store_true", help="run with real CuTeDSL instead of the simulator")
    parser.add_argument("--seed", type=int, help="seed NumPy's and torch's random numbers first (to compare runs)")
    parser.add_argument("--small", action="store_true",
                        help="shrink the problem sizes SMALL names (tour_to_sol_gemm: 256x512x256)")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--status-fd", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        return worker(args.worker, args.status_fd, args.cutedsl, args.seed, args.small)
    if not args.notebooks:
        parser.error("--notebooks DIR is required (see this script's help)")
    if not os.path.isdir(args.notebooks):
        parser.error(f"--notebooks {args.notebooks} is not a folder (see this script's help)")

    incomplete = 0
    for name in NOTEBOOKS:
        if args.only and name not in args.only:
            continue
        path = os.path.join(args.notebooks, name + ".ipynb")
        if not os.path.isfile(path):
            print(f"{name:<20} MISSING   no {name}.ipynb in {args.notebooks}", flush=True)
            continue
        result = run_notebook(path, args.timeout, args.show, args.cutedsl, args.seed, args.small)
        if args.show:
            for cell, text, took in result["output"]:
                print(f"--- {name} cell {cell}" + (f" ({took:.1f} s)" if took is not None else ""))
                print(text, end="" if text.endswith("\n") or not text else "\n")
        done = f"{result['ran']}/{result['cells']}"
        incomplete += result["ran"] != result["cells"]
        line = f"{name:<20} {done:>7} cells {result['seconds']:7.1f} s"
        if args.small and name in SMALL:
            line += "  (--small: " + "; ".join(new for _, new in SMALL[name]) + ")"
        if result["failure"]:
            line += f"  {result['failure']}"
        print(line, flush=True)
    return 1 if incomplete else 0


if __name__ == "__main__":
    sys.exit(main())
