"""Ask real CuTeDSL (traced on the CPU) what it prints, for many cases in one process.

Run as a worker: `python -m tests.cute.cutedsl_oracle` reads a JSON list of cases on stdin and writes a JSON
list of answers (the printed result, or "ERROR: ..." where CuTeDSL refuses). A case is [function, args, kwargs];
a layout argument is {"L": [shape, stride]}, a tiler tuple of layouts is a list of such.
CuTeDSL compiles only code whose source file it can read, which is why this is a real module.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def encode(x):
    """Plain data for a reference object (Layout, tuple, int)."""
    from cutekit import cute
    if isinstance(x, cute.Layout):
        return {"L": [encode(x.shape), encode(x.stride)]}
    if isinstance(x, tuple):
        return {"T": [encode(p) for p in x]}
    return x


def _decode(x, cute):
    if isinstance(x, dict) and "L" in x:
        return cute.make_layout(_decode(x["L"][0], cute), stride=_decode(x["L"][1], cute))
    if isinstance(x, dict) and "T" in x:
        return tuple(_decode(p, cute) for p in x["T"])
    if isinstance(x, list):
        return [_decode(p, cute) for p in x]
    return x


def _show(value) -> str:
    if isinstance(value, tuple):
        return "(" + ", ".join(_show(v) for v in value) + ")"
    return str(value)


def _evaluate_all(cute, cases, answers):
    for name, args, kwargs in cases:
        try:
            fn = getattr(cute, name)
            value = fn(*[_decode(a, cute) for a in args], **{k: _decode(v, cute) for k, v in kwargs.items()})
            answers.append(_show(value))
        except Exception as exc:  # CuTeDSL refused: the reference must refuse too
            answers.append("ERROR: " + type(exc).__name__)


def _worker():
    import cutlass.cute as cute
    cases = json.load(sys.stdin)
    answers = []

    @cute.jit
    def traced():
        _evaluate_all(cute, cases, answers)

    traced()
    json.dump(answers, sys.stdout)


def ask(cases: list) -> list:
    """Answers from real CuTeDSL for [(function, args, kwargs), ...] of reference objects."""
    payload = json.dumps([[name, [encode(a) for a in args], {k: encode(v) for k, v in kw.items()}]
                          for name, args, kw in cases])
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    run = subprocess.run([sys.executable, "-m", "tests.cute.cutedsl_oracle"], input=payload, capture_output=True,
                         text=True, env=env, cwd=ROOT, timeout=600)
    if run.returncode != 0:
        raise RuntimeError("the CuTeDSL oracle failed:\n" + run.stderr[-3000:])
    return json.loads(run.stdout.strip().splitlines()[-1])


def reference(cases: list) -> list:
    """The same cases answered by cutekit.cute."""
    from cutekit import cute
    answers = []
    for name, args, kwargs in cases:
        try:
            answers.append(_show(getattr(cute, name)(*args, **kwargs)))
        except Exception as exc:
            answers.append("ERROR: " + type(exc).__name__)
    return answers


if __name__ == "__main__":
    _worker()
