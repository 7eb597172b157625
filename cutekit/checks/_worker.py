"""The CuTeDSL worker: `python -m cutekit.checks._worker JOB REPLY` (run by `cutedsl.py`, one job per process).

It is a real file on purpose: CuTeDSL reads the source of every function it traces, so the `cute.jit`
wrapper lives here, and the functions it calls (the learner's, moved by source) run as plain Python inside
the trace.
"""
import importlib
import importlib.util
import pickle
import sys
import traceback
from pathlib import Path

from cutekit.checks.cutedsl import Dtype, FakeTensor, WorkerReply


def load(module: str):
    if module.endswith(".py"):
        spec = importlib.util.spec_from_file_location(Path(module).stem, module)
        loaded = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = loaded
        spec.loader.exec_module(loaded)
        return loaded
    return importlib.import_module(module)


def short(error: BaseException) -> str:
    """`ErrorType: first line`; an MLIR error's first line only says an operation failed, so its next line (what
    failed: `error: unknown: unable to compute the following composition: ...`) comes too."""
    lines = [line.strip() for line in str(error).strip().splitlines() if line.strip()]
    text = lines[0] if lines else ""
    if text.endswith(":") and len(lines) > 1:
        text += " " + lines[1]
    return f"{type(error).__name__}: {text}"


def trace(job):
    import cutlass
    import cutlass.cute as cute
    function = getattr(load(job["module"]), job["function"])
    values = []

    def body():
        for args in job["calls"]:
            try:
                value = function(cute, *args) if job["with_cute"] else function(*args)
                values.append((str(value), ""))
            except Exception as error:
                values.append((None, short(error)))

    @cute.jit
    def traced(body: cutlass.Constexpr):
        body()

    traced(body)
    return WorkerReply(True, values)


def argument(value):
    import cutlass
    import cutlass.cute as cute
    from cutlass.cute.runtime import make_fake_compact_tensor
    if isinstance(value, Dtype):
        return getattr(cutlass, value.name)
    if not isinstance(value, FakeTensor):
        return value
    dtype = getattr(cutlass, value.dtype)
    if value.shape is not None:
        shape, rank = tuple(value.shape), len(value.shape)
    else:
        rank = value.rank
        shape = tuple(cute.sym_int(divisibility=value.divisibility) if mode == rank - 1 else cute.sym_int()
                      for mode in range(rank))
    # row-major: the last mode is innermost (order 0), the first outermost
    order = tuple(rank - 1 - mode for mode in range(rank))
    return make_fake_compact_tensor(dtype, shape, stride_order=order,
                                    assumed_align=max(1, value.divisibility * dtype.width // 8))


def ptx(job):
    import os
    import cutlass.cute as cute
    function = getattr(load(job["module"]), job["function"])
    compiled = cute.compile(function, *[argument(value) for value in job["arguments"]])
    text = getattr(compiled, "__ptx__", None)
    if not text:
        found = sorted(Path(os.environ.get("CUTE_DSL_DUMP_DIR", ".")).rglob("*.ptx"))
        text = "\n".join(path.read_text() for path in found)
    if not text:
        return WorkerReply(False, error="compiled, but no PTX was kept (is CUTE_DSL_KEEP=ptx honoured?)")
    return WorkerReply(True, ptx=text)


def harness(job):
    """Run the learner's host function through a cutekit harness ("module:function") for each case."""
    import cutlass  # noqa: F401  (real CuTeDSL, before the learner's module binds to it)
    host = getattr(load(job["module"]), job["function"])
    module_name, function_name = job["harness"].split(":")
    run = getattr(importlib.import_module(module_name), function_name)
    values = []
    for case in job["cases"]:
        try:
            values.append((run(host, case), ""))
        except Exception as error:
            values.append((None, short(error)))
    return WorkerReply(True, values)


def main(job_path, reply_path):
    job = pickle.loads(Path(job_path).read_bytes())
    try:
        reply = {"trace": trace, "ptx": ptx, "harness": harness}[job["task"]](job)
    except Exception as error:
        frames = traceback.format_exception(type(error), error, error.__traceback__)
        reply = WorkerReply(False, error=short(error) + "\n" + "".join(frames[-3:]).strip()[-1500:])
    Path(reply_path).write_bytes(pickle.dumps(reply))


if __name__ == "__main__":
    main(*sys.argv[1:3])
