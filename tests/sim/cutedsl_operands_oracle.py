"""Ask real CuTeDSL (compiling for sm_80 on the CPU) whether it accepts cute.copy / cute.gemm operand pairs.

Run as a worker: `python -m tests.sim.cutedsl_operands_oracle` reads a JSON list of cases on stdin and writes a
JSON list of answers: "ACCEPTED", "REFUSED <exception>: <message>", or "CRASH: <the compiler's last words>" when
the compiler aborts the whole process (CuTeDSL 4.8.1 does that for an ldmatrix or cp.async destination that is
not grouped per instruction). Each case is compiled in a forked child, so an abort costs only that child.

A case (see tests/sim/test_copy_gemm_operands.py) is plain data:
  {"kind": "copy", "atom": "ldsm4" | "ldsm4t" | "ldsm2" | "univ16" | "univ128" | "cpasync128" ..., "dtype": "Float16",
   "src": [shape, stride, space, dtype?], "dst": [...]}            space: "gmem", "smem" or "rmem"
  {"kind": "gemm", "mma": "f16" | "fma", "threads": 32, "a": [...], "b": [...], "c": [...], "d": [...]}
  {"kind": "s2r", "variant": "retiled" | "plain"}                  tests.sim.operand_kernels.load_k_block
CuTeDSL compiles only code whose source file it can read, which is why this is a real module; it imports
real `cutlass` at the top, so only the worker process imports it (the tests start it with `ask`, in
tests/sim/test_copy_gemm_operands.py).
"""
from __future__ import annotations

import json
import os
import re
import signal
import sys
import tempfile

CASE: dict = {}


def _tuple(x):
    return tuple(_tuple(v) for v in x) if isinstance(x, list) else x


import cutlass  # noqa: E402 (real CuTeDSL: this module runs only as the worker, never inside the tests)
import cutlass.cute as cute  # noqa: E402


def _dtype(name):
    return getattr(cutlass, name)


def _atom_of():
    spec, element = CASE["atom"], _dtype(CASE.get("dtype", "Float16"))
    if spec.startswith("ldsm"):
        return cute.make_copy_atom(cute.nvgpu.warp.LdMatrix8x8x16bOp(spec.endswith("t"), int(spec[4])), element)
    if spec.startswith("cpasync"):
        return cute.make_copy_atom(cute.nvgpu.cpasync.CopyG2SOp(), element, num_bits_per_copy=int(spec[7:]))
    return cute.make_copy_atom(cute.nvgpu.CopyUniversalOp(), element, num_bits_per_copy=int(spec[4:]))


def _operand(which, gmem, smem):
    spec = CASE[which]
    element = _dtype(spec[3] if len(spec) > 3 else CASE.get("dtype", "Float16"))
    layout = cute.make_layout(_tuple(spec[0]), stride=_tuple(spec[1]))
    if spec[2] == "smem":
        return cute.make_tensor(cute.recast_ptr(smem.iterator, dtype=element), layout)
    if spec[2] == "gmem":
        return cute.make_tensor(cute.recast_ptr(gmem.iterator, dtype=element), layout)
    registers = cute.make_rmem_tensor(layout, element)
    registers.fill(0)
    return registers


def _mma_of():
    if CASE["mma"] == "f16":
        return cute.make_tiled_mma(cute.nvgpu.warp.MmaF16BF16Op(cutlass.Float16, cutlass.Float32, (16, 8, 16)))
    return cute.make_tiled_mma(cute.nvgpu.MmaUniversalOp(cutlass.Float32), (16, 16, 1))


@cute.kernel
def copy_kernel(mA: cute.Tensor):
    smem = cutlass.memory.SmemAllocator().allocate_tensor(cutlass.Float32, cute.make_layout(2048), 16)
    src = _operand("src", mA, smem)
    dst = _operand("dst", mA, smem)
    cute.copy(_atom_of(), src, dst)
    mA[0] = dst[0]


@cute.kernel
def gemm_kernel(mA: cute.Tensor):
    smem = cutlass.memory.SmemAllocator().allocate_tensor(cutlass.Float32, cute.make_layout(2048), 16)
    a, b, c, d = (_operand(which, mA, smem) for which in ("a", "b", "c", "d"))
    cute.gemm(_mma_of(), d, a, b, c)
    mA[0] = d[0]


@cute.jit
def host(mA: cute.Tensor):
    if cutlass.const_expr(CASE["kind"] == "copy"):
        copy_kernel(mA).launch(grid=[1, 1, 1], block=[CASE.get("threads", 32), 1, 1])
    else:
        gemm_kernel(mA).launch(grid=[1, 1, 1], block=[CASE.get("threads", 32), 1, 1])


_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _one(case: dict) -> str:
    CASE.clear()
    CASE.update(case)
    from cutlass.cute.runtime import make_fake_compact_tensor
    try:
        if case["kind"] == "s2r":
            from tests.sim import operand_kernels
            operand_kernels.VARIANT[0] = case["variant"]
            a = make_fake_compact_tensor(cutlass.Float16, (16, 32), stride_order=(1, 0), assumed_align=16)
            out = make_fake_compact_tensor(cutlass.Float16, (32, 8), stride_order=(1, 0), assumed_align=16)
            cute.compile(operand_kernels.load_k_block, a, out, 1)
        else:
            cute.compile(host, make_fake_compact_tensor(cutlass.Float32, (4096,), assumed_align=16))
        return "ACCEPTED"
    except Exception as error:  # noqa: BLE001 (every refusal is an answer)
        text = _ANSI.sub("", str(error))
        found = (re.search(r"Verification failed:\s+(?:error:\s+)?(?:unknown:\s+)?(.*?)(?:\s+note:|\n|$)", text, re.S)
                 or re.search(r"error: (?:unknown: )?(.*?)\n\s*suggestion", text, re.S))
        return f"REFUSED {type(error).__name__}: " + " ".join((found.group(1) if found else text).split())


def _worker():
    cases = json.load(sys.stdin)
    answers = []
    for case in cases:
        read_end, write_end = os.pipe()
        errors = tempfile.TemporaryFile()
        pid = os.fork()
        if pid == 0:  # the child compiles one case; an abort in the compiler ends only the child
            os.close(read_end)
            os.dup2(errors.fileno(), 2)
            try:
                answer = _one(case)
            except BaseException as error:  # noqa: BLE001
                answer = f"REFUSED {type(error).__name__}: {error}"
            os.write(write_end, answer.encode())
            os._exit(0)
        os.close(write_end)
        data = b""
        while chunk := os.read(read_end, 1 << 16):
            data += chunk
        os.close(read_end)
        _, status = os.waitpid(pid, 0)
        if not data:
            errors.seek(0)
            lines = errors.read().decode(errors="replace").splitlines()
            at = [i for i, line in enumerate(lines) if "LLVM ERROR" in line or "terminate called" in line]
            died = signal.Signals(os.WTERMSIG(status)).name if os.WIFSIGNALED(status) else f"exit {status}"
            data = (f"CRASH ({died}): " + " | ".join(lines[at[0]:at[0] + 2] if at else lines[-2:])).encode()
        answers.append(data.decode())
    json.dump(answers, sys.stdout)


if __name__ == "__main__":
    _worker()
