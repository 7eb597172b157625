"""The operations floor: what a kernel calls on the machine and its memory, named as in CuTeDSL.

device.py: thread and block indices, barriers, warp reductions, shuffles and votes, registers, `cute.copy` and
`cute.gemm` (with the tables an architecture's room fills in); operands.py: the operands CuTeDSL accepts in a
copy or a GEMM; pipeline.py: the mbarrier model (one `MBarrier`, for kernels and for chapter 08's model on
paper) and `cutlass.pipeline`'s producer/consumer pipelines.
"""
