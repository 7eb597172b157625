"""Run NVIDIA's CuTeDSL examples (Ampere's, and Blackwell's dense GEMM), unchanged, on cutekit's CPU simulator and
check them against torch.

    python scripts/run_nvidia_examples.py --examples DIR [--only NAME ...]

DIR holds NVIDIA's example files as they are in github.com/NVIDIA/cutlass (the layout
benchmarks/compare_nvidia_examples.py uses), one folder, no subfolders:
    DIR/elementwise_add.py     examples/python/CuTeDSL/cute/ampere/kernel/elementwise/elementwise_add.py
    DIR/elementwise_apply.py   examples/python/CuTeDSL/cute/ampere/kernel/elementwise/elementwise_apply.py
    DIR/sgemm.py               examples/python/CuTeDSL/cute/ampere/kernel/dense_gemm/sgemm.py
    DIR/tensorop_gemm.py       examples/python/CuTeDSL/cute/ampere/kernel/dense_gemm/tensorop_gemm.py
    DIR/flash_attention_v2.py  examples/python/CuTeDSL/cute/ampere/kernel/attention/flash_attention_v2.py
    DIR/dense_gemm.py          examples/python/CuTeDSL/cute/blackwell/kernel/dense_gemm/dense_gemm.py
They are not part of this repository: copy them into an ignored folder (.nvidia-examples/ is ignored).

Each example's `@cute.jit` entry point is called as its own `run(...)` calls it, but on CPU torch tensors, on
shapes its tiles divide and shapes they do not, and the result is compared with torch's (with the example's
own reference check and tolerance where it has one). The examples' `run` functions themselves need a CUDA
device (they allocate on "cuda" and time with CUDA events), so they are not called; their default problem
sizes (tensorop_gemm 256x256x512, flash_attention_v2 4 x 8192 x 16 heads, dense_gemm 256x256x512 on a cluster of
two CTAs with 2-CTA MMAs) are larger than the test shapes; dense_gemm runs with clusters of one CTA and
CtaGroup.ONE (the simulator runs no larger clusters). One line per example: its status (PASS, FAIL, MISSING), the seconds it took and what was run.
Exit status 0 when every example present passed.
"""
from __future__ import annotations

import argparse
import contextlib
import importlib.util
import io
import operator
import os
import sys
import time
import traceback
from functools import partial

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

EXAMPLES = ("elementwise_add.py", "elementwise_apply.py", "sgemm.py", "tensorop_gemm.py", "flash_attention_v2.py",
            "dense_gemm.py")


def _import_example(folder, name):
    path = os.path.join(folder, name)
    spec = importlib.util.spec_from_file_location(f"nvidia_example_{name[:-3]}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Mismatch(AssertionError):
    pass


def _close(label, got, want, atol=1e-5, rtol=1e-5):
    import torch
    try:
        torch.testing.assert_close(got, want, atol=atol, rtol=rtol)
    except AssertionError as error:
        raise Mismatch(f"{label}: result differs from torch's: {str(error).splitlines()[0]}") from None


# ----------------------------------------------------------------------------------------------- the cases
# Each returns the shapes it ran, as short labels; a mismatch or an error raises.

def _elementwise_add(module):
    import torch
    from cutlass.cute.runtime import from_dlpack
    ran = []
    for m, n in ((32, 256), (37, 200)):            # tile (16, 128) for float32: divides, does not
        a, b = torch.randn(m, n), torch.randn(m, n)
        c = torch.zeros_like(a)
        module.elementwise_add(from_dlpack(a).mark_layout_dynamic(), from_dlpack(b).mark_layout_dynamic(),
                               from_dlpack(c).mark_layout_dynamic())
        _close(f"{m}x{n}", c, a + b)
        ran.append(f"{m}x{n}")
    return ran


def _elementwise_apply(module):
    import torch
    import cuda.bindings.driver as cuda
    from cutlass.cute.runtime import from_dlpack
    stream = cuda.CUstream(0)
    ran = []
    # tile (64, 256) for float32. NVIDIA's kernel computes the bounds predicate but stores without it, so
    # only shapes the tile divides are in bounds; on others the simulator reports the out-of-bounds access.
    for m, n in ((64, 256), (128, 512)):
        cases = (("add", operator.add, 2, lambda a, b: a + b),
                 ("mul", operator.mul, 2, lambda a, b: a * b),
                 ("leaky_relu", partial(module.leaky_relu, alpha=0.01), 1,
                  partial(module.leaky_relu_ref, alpha=0.01)))
        for label, op, count, reference in cases:
            inputs = [torch.randn(m, n) for _ in range(count)]
            c = torch.zeros_like(inputs[0])
            module.elementwise_apply(op, [from_dlpack(t, assumed_align=16) for t in inputs],
                                     from_dlpack(c, assumed_align=16).mark_layout_dynamic(), stream)
            _close(f"{label} {m}x{n}", c, reference(*inputs))
            ran.append(f"{label} {m}x{n}")
    return ran


def _major(torch, rows, cols, mode0_major, dtype):
    """A (rows, cols) tensor whose mode 0 (mode0_major) or mode 1 is contiguous, as the examples build it."""
    shape = (cols, rows) if mode0_major else (rows, cols)
    t = torch.randint(-2, 3, shape, dtype=torch.int32).to(dtype)
    return t.permute(1, 0) if mode0_major else t


def _sgemm(module):
    import torch
    from cutlass.cute.runtime import from_dlpack
    ran = []
    # tile (128, 128, 8), 3 stages, 256 threads; NVIDIA's default majors: A m-major, B k-major, C n-major
    for (m, n, k), majors in (((128, 128, 32), "mkn"), ((100, 72, 20), "mkn"), ((128, 128, 16), "knm")):
        a = _major(torch, m, k, majors[0] == "m", torch.float32)
        b = _major(torch, n, k, majors[1] == "n", torch.float32)
        c = _major(torch, m, n, majors[2] == "m", torch.float32).zero_()
        module.SGemm()(from_dlpack(a, assumed_align=16), from_dlpack(b, assumed_align=16),
                       from_dlpack(c, assumed_align=16))
        _close(f"{m}x{n}x{k}", c, torch.einsum("mk,nk->mn", a, b), atol=1e-3)
        ran.append(f"{m}x{n}x{k} {majors}")
    return ran


def _gemm_operands(torch, mnkl, a_major, b_major, c_major):
    """A, B, C as NVIDIA's tensorop_gemm `prepare_tensors` makes them (bmm's (l, m, k), (l, k, n), (l, m, n),
    each with its major mode contiguous, small integers in fp16), on the CPU."""
    m, n, k, l = mnkl
    a = torch.empty((l, m, k)) if a_major == "k" else torch.empty((l, k, m)).permute(0, 2, 1)
    b = torch.empty((l, k, n)) if b_major == "n" else torch.empty((l, n, k)).permute(0, 2, 1)
    c = torch.empty((l, m, n)) if c_major == "n" else torch.empty((l, n, m)).permute(0, 2, 1)
    for t in (a, b, c):
        t.random_(-2, 3)
    return a.to(torch.float16), b.to(torch.float16), c.to(torch.float16)


def _tensorop_gemm(module):
    import torch
    import cutlass
    ran = []
    # tile (128, 128, 32), 4 stages, atoms (2, 2, 1): 128 threads; fp16 in, fp32 accumulate, fp16 out.
    # As its run() does: mark_dynamic_layout, compile_bmm (cute.compile of bmm), the compiled call with
    # (a, b, c, stream), and its reference check (torch.bmm in fp32, rounded to fp16, atol 1e-3).
    for mnkl, (a_major, b_major, c_major) in (((128, 128, 64, 1), "mnn"), ((72, 136, 40, 2), "mnn"),
                                              ((128, 128, 32, 1), "kkm")):
        a, b, c = _gemm_operands(torch, mnkl, a_major, b_major, c_major)
        a_, b_, c_ = module.mark_dynamic_layout(a, b, c, 2 if a_major == "k" else 1, 1 if b_major == "k" else 2,
                                                2 if c_major == "n" else 1, cutlass.Float16, cutlass.Float16)
        compiled = module.compile_bmm(mnkl, a_, b_, c_, cutlass.Float16, cutlass.Float16, cutlass.Float32, (2, 2, 1))
        compiled(a_, b_, c_, 0)
        reference = torch.bmm(a.float(), b.float()).to(torch.float16).float()
        _close("x".join(map(str, mnkl)), c.float(), reference, atol=1e-3)
        ran.append("x".join(map(str, mnkl)) + f" {a_major}{b_major}{c_major}")
    return ran


def _flash_attention_v2(module):
    import torch
    import cutlass
    import cutlass.cute as cute
    from cutlass.cute.runtime import from_dlpack
    ran = []
    # As its run() does: (batch, seqlen, heads, head_dim) tensors of small integers, marked dynamic, the
    # kernel compiled with cute.compile and called, checked against torch's scaled_dot_product_attention
    # (atol 1e-2, rtol 1e-4). Blocks of 128 query rows and 64 key rows, 128 threads.
    for batch, seqlen_q, seqlen_k, heads, head_dim, causal in ((1, 128, 128, 1, 64, False),
                                                               (1, 100, 72, 2, 40, False),
                                                               (1, 128, 192, 1, 32, True)):
        def create(seqlen):
            t = torch.empty(batch, seqlen, heads, head_dim, dtype=torch.int32).random_(-2, 2).to(torch.float16)
            return t, from_dlpack(t, assumed_align=16).mark_layout_dynamic(leading_dim=3).mark_compact_shape_dynamic(
                mode=3, stride_order=t.dim_order(), divisibility=128 // cutlass.Float16.width)
        (q, q_), (k, k_), (v, v_), (o, o_) = create(seqlen_q), create(seqlen_k), create(seqlen_k), create(seqlen_q)
        scale = 0.5
        attention = module.FlashAttentionForwardAmpere(head_dim, 128, 64, 128, causal)
        compiled = cute.compile(attention, q_, k_, v_, o_, scale, 0, options="")
        compiled(q_, k_, v_, o_, scale, 0)
        reference = torch.nn.functional.scaled_dot_product_attention(
            *(t.permute(0, 2, 1, 3).float() for t in (q, k, v)), scale=scale, is_causal=causal).permute(0, 2, 1, 3)
        label = f"b{batch} q{seqlen_q} k{seqlen_k} h{heads} d{head_dim}{' causal' if causal else ''}"
        _close(label, o.float(), reference.half().float(), atol=1e-2, rtol=1e-4)
        ran.append(label)
    return ran


def _dense_gemm(module):
    import torch
    import cuda.bindings.driver as cuda
    import cutlass
    import cutlass.cute as cute
    from cutlass.cute.runtime import from_dlpack
    ran = []
    # As its run() does (create_tensors: small integers, (m, k, l) / (n, k, l) / (m, n, l) with the named mode
    # contiguous; DenseGemmKernel(acc_dtype, use_2cta_instrs, mma_tiler_mn, cluster_shape_mn, use_tma_store),
    # can_implement, cute.compile, the call, compare's einsum in fp32 rounded to C's type, atol 1e-1), on clusters
    # of one CTA with CtaGroup.ONE: a 128-row MMA tile, fp16 in, fp32 accumulators, fp16 out
    def operand(rows, cols, batches, major_rows):
        shape = (batches, cols, rows) if major_rows else (batches, rows, cols)
        t = torch.empty(shape, dtype=torch.int32).random_(-2, 2).to(torch.float16)
        return t.permute(2, 1, 0) if major_rows else t.permute(1, 2, 0)
    for (m, n, k, l), tiler, majors, tma_store in (((256, 256, 128, 1), (128, 128), "kkn", False),
                                                   ((128, 256, 192, 2), (128, 64), "kkn", True),
                                                   ((256, 128, 64, 1), (128, 128), "mnm", True)):
        a, b = operand(m, k, l, majors[0] == "m"), operand(n, k, l, majors[1] == "n")
        c = operand(m, n, l, majors[2] == "m").zero_()
        a_, b_, c_ = (from_dlpack(t, assumed_align=16).mark_layout_dynamic(leading_dim=t.stride().index(1))
                      for t in (a, b, c))
        gemm = module.DenseGemmKernel(cutlass.Float32, False, tiler, (1, 1), tma_store)
        if not gemm.can_implement(a_, b_, c_):
            raise ValueError(f"DenseGemmKernel.can_implement refuses {m}x{n}x{k}x{l} {majors} tile {tiler}")
        stream = cuda.CUstream(0)
        compiled = cute.compile(gemm, a_, b_, c_, stream)
        compiled(a_, b_, c_, stream)
        reference = torch.einsum("mkl,nkl->mnl", a.float(), b.float()).to(torch.float16)
        label = f"{m}x{n}x{k}x{l} {majors} tile {tiler[0]}x{tiler[1]}{' TMA store' if tma_store else ''}"
        _close(label, c.float(), reference.float(), atol=1e-1)
        ran.append(label)
    return ran


CASES = {"elementwise_add.py": _elementwise_add, "elementwise_apply.py": _elementwise_apply,
         "sgemm.py": _sgemm, "tensorop_gemm.py": _tensorop_gemm, "flash_attention_v2.py": _flash_attention_v2,
         "dense_gemm.py": _dense_gemm}


def run_one(folder, name, verbose=False):
    """(status, seconds, detail) for one example file."""
    if not os.path.isfile(os.path.join(folder, name)):
        return "MISSING", 0.0, f"no {name} in {folder}"
    start = time.perf_counter()
    printed = io.StringIO()
    try:
        with contextlib.redirect_stdout(printed):        # the examples print their layouts as they trace
            module = _import_example(folder, name)
            ran = CASES[name](module)
        return "PASS", time.perf_counter() - start, ", ".join(ran)
    except Mismatch as error:
        return "FAIL", time.perf_counter() - start, str(error)
    except Exception as error:  # noqa: BLE001 - any failure is this example's line
        detail = f"{type(error).__name__}: {error}".splitlines()[0][:300]
        if verbose:
            detail += "\n" + traceback.format_exc()
        return "FAIL", time.perf_counter() - start, detail


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--examples", required=True, help="folder holding NVIDIA's " + ", ".join(EXAMPLES))
    parser.add_argument("--only", nargs="*", choices=[e[:-3] for e in EXAMPLES], help="run only these")
    parser.add_argument("--verbose", action="store_true", help="print the traceback of a failure")
    args = parser.parse_args(argv)
    if not os.path.isdir(args.examples):
        parser.error(f"--examples {args.examples} is not a folder (see this script's help)")

    import torch
    import cutekit
    cutekit.use("sim")
    torch.manual_seed(0)
    failed = 0
    for name in EXAMPLES:
        if args.only and name[:-3] not in args.only:
            continue
        status, seconds, detail = run_one(args.examples, name, args.verbose)
        failed += status == "FAIL"
        print(f"{name[:-3]:<18} {status:<7} {seconds:7.2f} s  {detail}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
