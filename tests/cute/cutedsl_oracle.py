"""Ask real CuTeDSL (traced on the CPU) what it prints, for many cases in one process.

Run as a worker: `python -m tests.cute.cutedsl_oracle` reads a JSON list of cases on stdin and writes one JSON
answer per line (the printed result, or "ERROR: ..." where CuTeDSL refuses). A case is [function, args, kwargs];
a layout argument is {"L": [shape, stride]} (stride null: compact), a tuple is {"T": [...]}, a list stays a list.
A function name starting with "." reads that attribute of the first argument (".stride" of a layout).
Cases are traced in chunks, one `@cute.jit` call per chunk, so a batch of thousands costs about a second per
ten thousand calls. If CuTeDSL kills the process on some case, that case is answered "CRASH" and the worker is
started again after it.
CuTeDSL compiles only code whose source file it can read, which is why this is a real module.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CHUNK = 2000


def encode(x):
    """Plain data for a reference object (Layout, tuple, list, int, None)."""
    from cutekit import cute
    if isinstance(x, cute.Layout):
        return {"L": [encode(x.shape), encode(x.stride)]}
    if isinstance(x, tuple):
        return {"T": [encode(p) for p in x]}
    if isinstance(x, list):
        return [encode(p) for p in x]
    return x


def decode(x, cute):
    """The object `encode` described, built with `cute` (cutekit.cute or cutlass.cute)."""
    if isinstance(x, dict) and "L" in x:
        shape, stride = decode(x["L"][0], cute), decode(x["L"][1], cute)
        return cute.make_layout(shape) if stride is None else cute.make_layout(shape, stride=stride)
    if isinstance(x, dict) and "T" in x:
        return tuple(decode(p, cute) for p in x["T"])
    if isinstance(x, list):
        return [decode(p, cute) for p in x]
    return x


def show(value) -> str:
    if isinstance(value, tuple):
        return "(" + ", ".join(show(v) for v in value) + ")"
    return str(value)


def call(cute, name, args, kwargs):
    if name.startswith("."):
        return getattr(args[0], name[1:])
    return getattr(cute, name)(*args, **kwargs)


def _first_line(exc) -> str:
    text = str(exc).strip()
    for line in text.splitlines():
        if line.startswith("error:"):
            return line[:300]
    return text.splitlines()[0][:300] if text else ""


def _evaluate_all(cute, cases, out):
    for name, args, kwargs in cases:
        try:
            value = call(cute, name, [decode(a, cute) for a in args], {k: decode(v, cute) for k, v in kwargs.items()})
            answer = show(value)
        except Exception as exc:  # CuTeDSL refused: the reference must refuse too
            answer = f"ERROR: {type(exc).__name__}: {_first_line(exc)}"
        out.write(json.dumps(answer) + "\n")
        out.flush()      # a case after this one may kill the process


def answer_in_forked_chunks(items: list, answer_chunk, crashed=lambda text: text, chunk: int = CHUNK):
    """The worker loop of every CuTeDSL oracle here (this one, the Ampere atoms', the Blackwell suite's): `items`
    in chunks, each traced in a forked child inside one `@cute.jit` call of `answer_chunk(chunk, out)`, which
    writes one JSON line per item to `out`. CuTeDSL dies (SIGFPE) on some inputs, and a fresh import costs a
    second or two, a fork a few milliseconds. The child's answers come back through a pipe, line by line, and
    go to stdout; an item the child died on is answered `crashed("CRASH: ...")` and the next chunk starts
    after it. Call with CUTE_DSL_ARCH set: the first import of `cutlass` reads it."""
    import cutlass.cute as cute
    done = 0
    while done < len(items):
        part = items[done:done + chunk]
        read_end, write_end = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(read_end)
            with os.fdopen(write_end, "w") as out:
                @cute.jit
                def traced():
                    answer_chunk(part, out)

                traced()
            os._exit(0)
        os.close(write_end)
        with os.fdopen(read_end) as answers:
            got = list(answers)
        _, status = os.waitpid(pid, 0)
        sys.stdout.writelines(got)
        done += len(got)
        if len(got) < len(part):
            reason = f"signal {os.WTERMSIG(status)}" if os.WIFSIGNALED(status) else f"exit {os.waitstatus_to_exitcode(status)}"
            sys.stdout.write(json.dumps(crashed(f"CRASH: CuTeDSL died on this case ({reason})")) + "\n")
            done += 1
        sys.stdout.flush()


def _worker():
    os.environ.setdefault("CUTE_DSL_ARCH", "sm_80")
    import cutlass.cute as cute
    answer_in_forked_chunks(json.load(sys.stdin), lambda chunk, out: _evaluate_all(cute, chunk, out))


def ask_encoded(payload_cases: list) -> list:
    """Answers from real CuTeDSL for cases already in plain data ([name, [args], {kwargs}])."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.setdefault("CUTE_DSL_ARCH", "sm_80")
    answers = []
    while len(answers) < len(payload_cases):
        rest = payload_cases[len(answers):]
        run = subprocess.run([sys.executable, "-m", "tests.cute.cutedsl_oracle"], input=json.dumps(rest),
                             capture_output=True, text=True, env=env, cwd=ROOT, timeout=3600)
        got = [json.loads(line) for line in run.stdout.splitlines() if line.startswith('"')]
        answers.extend(got[:len(rest)])
        if run.returncode != 0 and len(answers) < len(payload_cases):
            if not got and "Traceback" in run.stderr and "cutlass" not in run.stderr:
                raise RuntimeError("the CuTeDSL oracle failed:\n" + run.stderr[-3000:])
            answers.append("CRASH: CuTeDSL died on this case: " + run.stderr.strip()[-200:])
        elif run.returncode == 0 and len(got) < len(rest):
            raise RuntimeError("the CuTeDSL oracle answered too few cases:\n" + run.stderr[-3000:])
    return answers


def ask(cases: list) -> list:
    """Answers from real CuTeDSL for [(function, args, kwargs), ...] of reference objects."""
    return ask_encoded([[name, [encode(a) for a in args], {k: encode(v) for k, v in kw.items()}]
                        for name, args, kw in cases])


def reference(cases: list) -> list:
    """The same cases answered by cutekit.cute. A refusal is a CuteError ("ERROR: ..."); any other exception
    is a bug in cutekit ("CRASH: ...") and never agrees with CuTeDSL."""
    from cutekit import cute
    answers = []
    for name, args, kwargs in cases:
        try:
            answers.append(show(call(cute, name, args, kwargs)))
        except cute.CuteError as exc:
            answers.append(f"ERROR: CuteError: {exc}")
        except Exception as exc:
            answers.append(f"CRASH: {type(exc).__name__}: {exc}")
    return answers


def refused(answer: str) -> bool:
    """CuTeDSL raised, or died (a SIGFPE inside its C++ is a refusal a learner cannot miss)."""
    return answer.startswith("ERROR") or answer.startswith("CRASH: CuTeDSL")


def agree(ours: str, theirs: str) -> bool:
    """The same printed string, or both refuse."""
    if ours.startswith("ERROR") and refused(theirs):
        return True
    return ours == theirs and not ours.startswith("CRASH")


if __name__ == "__main__":
    _worker()


def report_by_step(bad, describe, totals: str, width: int = 400) -> str:
    """Disagreements of a suite that compares steps, (config, [(step, cutekit, CuTeDSL), ...]) each, grouped by
    (kind, first step that differs) with one example each, then the `totals` line."""
    groups: dict = {}
    for config, steps in bad:
        groups.setdefault((config["kind"], steps[0][0].rstrip("0123456789")), []).append((config, steps))
    lines = []
    for key in sorted(groups, key=lambda k: -len(groups[k])):
        config, steps = groups[key][0]
        name, ours, theirs = steps[0]
        lines.append(f"{key[0]} / {key[1]}: {len(groups[key])} disagreement(s), e.g.\n    {describe(config)}\n"
                     f"    step {name}\n    cutekit: {ours[:width]}\n    CuTeDSL: {theirs[:width]}")
    lines.append(totals)
    return "\n".join(lines)

