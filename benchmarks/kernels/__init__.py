"""The course's fast CuTeDSL kernels, one module per kernel family.

Each module exposes the `@cute.jit` host functions (what a learner reads), a `compile_for_cpu` helper that
builds the kernel for sm_80 from fake tensors (no GPU needed, used by the CPU tests to read the PTX), and
`run(...)` that takes torch CUDA tensors and caches one compiled kernel per dtype and vector width.
`blackwell_gemm` is the exception: it has only its host function `gemm_tn` (chapter 09 compiles it for sm_100a
with `cutekit.checks.compile_to_ptx`, and the simulator runs it: tests/sim/test_blackwell_kernel.py); no Blackwell
GPU has run it.
"""
