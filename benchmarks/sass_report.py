"""What the tensor-core GEMM compiles to, without a GPU: registers, spills and the main loop's instruction mix.

    python benchmarks/sass_report.py [--arch sm_90] [--config teaching|fast|both]

CuTeDSL compiles the kernel for sm_80 on the CPU (PTX); `ptxas -arch=ARCH -v` assembles it and reports
registers and spills; `cuobjdump -sass` disassembles it, and the innermost backward branch's body (the
k-tile loop) is counted by opcode. Needs `ptxas` and `cuobjdump` on PATH (a CUDA toolkit, or the `bin/`
folder of the triton wheel), or their paths in $PTXAS / $CUOBJDUMP.
"""
from __future__ import annotations

import argparse
import collections
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def tool(name: str) -> str:
    path = os.environ.get(name.upper()) or shutil.which(name)
    if not path:
        raise SystemExit(f"sass_report: `{name}` not found: put a CUDA toolkit's bin/ on PATH or set ${name.upper()}")
    return path


def loop_mix(sass: str):
    """(instruction count, Counter of opcodes) of the largest loop body: from a backward branch's target to it."""
    instructions = [(int(m.group(1), 16), m.group(2).strip())
                    for m in re.finditer(r"/\*([0-9a-f]{4,})\*/\s+([^;/]*?)\s*;", sass)]
    best = []
    for address, text in instructions:
        target = re.search(r"BRA\s+(?:`?\(?\.?L?_?x?_?)?(0x[0-9a-f]+)", text)
        if target and int(target.group(1), 16) < address:
            body = [t for a, t in instructions if int(target.group(1), 16) <= a <= address]
            best = max(best, body, key=len)
    opcodes = collections.Counter(re.sub(r"^@!?U?P[T\d]+\s+", "", t).split()[0].split(".")[0] for t in best)
    return len(best), opcodes


def report(name: str, knobs: dict, arch: str) -> None:
    from benchmarks.kernels import gemm_tensorcore
    ptx = gemm_tensorcore.compile_for_cpu(**knobs).__ptx__
    with tempfile.TemporaryDirectory(prefix="sass-") as folder:
        source, cubin = os.path.join(folder, "gemm.ptx"), os.path.join(folder, "gemm.cubin")
        with open(source, "w") as handle:
            handle.write(ptx)
        assembled = subprocess.run([tool("ptxas"), f"-arch={arch}", "-v", source, "-o", cubin],
                                   capture_output=True, text=True)
        if assembled.returncode:
            raise SystemExit(f"sass_report: ptxas failed:\n{assembled.stderr[-2000:]}")
        usage = "; ".join(line.split(":", 1)[-1].strip() for line in assembled.stderr.splitlines()
                          if "registers" in line or "spill" in line)
        sass = subprocess.run([tool("cuobjdump"), "-sass", cubin], capture_output=True, text=True).stdout
    count, opcodes = loop_mix(sass)
    print(f"{name}: {usage}")
    print(f"  main loop: {count} instructions; " + ", ".join(f"{op} {n}" for op, n in opcodes.most_common(12)))
    print(f"  whole kernel: HMMA {sass.count('HMMA')}, LDSM {sass.count('LDSM')}, LDGSTS {sass.count('LDGSTS')}, "
          f"STG.E.128 {sass.count('STG.E.128')}, LDS.128 {sass.count('LDS.128')}, local memory "
          f"{len(re.findall(r'[^A-Z](?:LDL|STL)[. ]', sass))}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--arch", default="sm_90", help="the GPU to assemble for (sm_80, sm_86, sm_89, sm_90, ...)")
    parser.add_argument("--config", default="both", choices=("teaching", "fast", "both"))
    args = parser.parse_args(argv)
    if not re.fullmatch(r"sm_\d{2,3}a?", args.arch):
        parser.error(f"--arch must look like sm_90, got {args.arch!r}")
    os.environ["CUTE_DSL_ARCH"] = "sm_80"    # before cutlass is imported: PTX for sm_80, assembled for --arch
    from benchmarks.kernels import gemm_tensorcore
    configs = {"teaching": {}, "fast": gemm_tensorcore.FAST}
    for name in (("teaching", "fast") if args.config == "both" else (args.config,)):
        report(f"{name} {configs[name] or '(module defaults)'}", configs[name], args.arch)
    return 0


if __name__ == "__main__":
    sys.exit(main())
