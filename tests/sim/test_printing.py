"""What the simulator prints, and when, as CuTeDSL 4.8.1 prints it (cutekit/sim/machine/tracing.py, memory/printing.py). The
expected texts are CuTeDSL's own, run on the CPU (host code runs there; pointer addresses differ per run)."""
import re

import numpy
import pytest


def _addresses_hidden(text: str) -> str:
    return re.sub(r"0x[0-9a-f]{16}", "0x...", text)


def test_trace_prints_come_before_what_the_run_prints(sim, capsys):
    import cutlass
    import cutlass.cute as cute

    @cute.jit
    def show(a: cutlass.Int32, b: cutlass.Constexpr[int]):
        print(">>>", b)
        cute.printf(">?? {}", a)
        print(">>>", cute.make_layout((4, b)))
        cute.printf(">?? {} {} {}", cutlass.Float32(3.14), a > 1, (a, 3))

    show(8, 2)
    assert capsys.readouterr().out.splitlines() == [">>> 2", ">>> (4,2):(1,4)", ">?? 8", ">?? 3.140000 1 (8,3)"]
    compiled = cute.compile(show, 8, 2)                 # traces: Python's prints only
    assert capsys.readouterr().out.splitlines() == [">>> 2", ">>> (4,2):(1,4)"]
    assert compiled(8) == 0                            # runs: the run's output only, and its status
    assert capsys.readouterr().out.splitlines() == [">?? 8", ">?? 3.140000 1 (8,3)"]


def test_a_kernels_print_comes_once_per_launch(sim, capsys):
    import cutlass.cute as cute
    from cutlass.cute.runtime import from_dlpack

    @cute.kernel
    def kernel(src: cute.Tensor):
        tidx, _, _ = cute.arch.thread_idx()
        print("kernel sees", src)
        if tidx == 5:
            print("a line only thread 5 runs")

    @cute.jit
    def host(src: cute.Tensor):
        kernel(src).launch(grid=(2, 1, 1), block=(8, 1, 1))

    host(from_dlpack(numpy.zeros((4, 3), numpy.float32)))
    assert capsys.readouterr().out.splitlines() == ["kernel sees tensor<ptr<f32, generic> o (4,3):(3,1)>",
                                                    "a line only thread 5 runs"]


def test_print_tensor_lays_out_rows_columns_and_matrices(sim, capsys):
    import cutlass.cute as cute
    from cutlass.cute.runtime import from_dlpack

    @cute.jit
    def show(x: cute.Tensor):
        print(x, "|", x.type)
        cute.print_tensor(x)

    show(from_dlpack(numpy.arange(14, dtype=numpy.float32).reshape(2, 7)))
    show(from_dlpack(numpy.arange(8, dtype=numpy.float32).reshape(2, 2, 2)))
    show(from_dlpack(numpy.arange(7, dtype=numpy.int32)))
    show(from_dlpack(numpy.arange(6, dtype=numpy.float16).reshape(2, 3), assumed_align=16))
    assert _addresses_hidden(capsys.readouterr().out) == """\
tensor<ptr<f32, generic> o (2,7):(7,1)> | !cute.memref<f32, generic, "(2,7):(7,1)">
tensor(raw_ptr(0x...: f32, generic, align<4>) o (2,7):(7,1), data=
       [[ 0.000000,  1.000000,  2.000000, ...,  4.000000,  5.000000,  6.000000, ],
        [ 7.000000,  8.000000,  9.000000, ...,  11.000000,  12.000000,  13.000000, ]])
tensor<ptr<f32, generic> o (2,2,2):(4,2,1)> | !cute.memref<f32, generic, "(2,2,2):(4,2,1)">
tensor(raw_ptr(0x...: f32, generic, align<4>) o (2,2,2):(4,2,1), data=
       [[[ 0.000000,  2.000000, ],
         [ 4.000000,  6.000000, ]],

        [[ 1.000000,  3.000000, ],
         [ 5.000000,  7.000000, ]]])
tensor<ptr<i32, generic> o (7):(1)> | !cute.memref<i32, generic, "(7):(1)">
tensor(raw_ptr(0x...: i32, generic, align<4>) o (7):(1), data=
       [ 0, ],
       [ 1, ],
       [ 2, ],
       ...
       [ 4, ],
       [ 5, ],
       [ 6, ])
tensor<ptr<f16, generic, align<16>> o (2,3):(3,1)> | !cute.memref<f16, generic, align<16>, "(2,3):(3,1)">
tensor(raw_ptr(0x...: f16, generic, align<16>) o (2,3):(3,1), data=
       [[ 0.000000,  1.000000,  2.000000, ],
        [ 3.000000,  4.000000,  5.000000, ]])
"""


def test_print_tensor_verbose_and_of_values(sim, capsys):
    import cutlass
    import cutlass.cute as cute
    from cutlass.cute.runtime import from_dlpack

    @cute.jit
    def show(x: cute.Tensor):
        cute.print_tensor(x, verbose=True)
        value = x.load()
        print(value, value[(None, 1)])
        cute.print_tensor(value.reduce(cute.ReductionOp.ADD, 1.0, reduction_profile=(1, None)))
        row = cute.make_rmem_tensor((1, 3), dtype=cutlass.Float32)
        row[0], row[1], row[2] = 1.0, 2.0, 3.0
        cute.print_tensor(row.load().broadcast_to((2, 3)) + x.load())

    show(from_dlpack(numpy.arange(6, dtype=numpy.float32).reshape(2, 3)))
    assert _addresses_hidden(capsys.readouterr().out) == """\
tensor_value<vector<6xf32> o (2, 3)> tensor_value<vector<2xf32> o (2,)>
tensor(raw_ptr(0x...: f32, generic, align<4>) o (2,3):(3,1), data= (
\t(0,0)= 0.000000
\t(1,0)= 3.000000
\t(0,1)= 1.000000
\t(1,1)= 4.000000
\t(0,2)= 2.000000
\t(1,2)= 5.000000
)
tensor(raw_ptr(0x...: f32, rmem, align<32>) o (3):(1), data=
       [ 4.000000, ],
       [ 6.000000, ],
       [ 8.000000, ])
tensor(raw_ptr(0x...: f32, rmem, align<32>) o (2,3):(1,2), data=
       [[ 1.000000,  3.000000,  5.000000, ],
        [ 4.000000,  6.000000,  8.000000, ]])
"""


def test_pointers_composed_layouts_and_the_cuda_context(sim, capsys):
    import torch
    import cutlass
    import cutlass.cute as cute
    from cutlass.cute.runtime import make_ptr

    @cute.jit
    def fill(ptr: cute.Pointer):
        tensor = cute.make_tensor(ptr, cute.make_layout((2, 3), stride=(3, 1)))
        tensor.fill(1)
        layout = cute.make_composed_layout(lambda c: (c[0], c[1] + 1), (1, 0), cute.make_identity_layout((8, 4)))
        cute.printf(layout(0))
        cute.printf("%d -> %d", 2, cute.slice_(cute.make_layout((4, 8)), (None, 1))(2))

    data = torch.zeros(2, 3)
    cutlass.cuda.initialize_cuda_context()
    fill(make_ptr(cutlass.Float32, data.data_ptr(), cute.AddressSpace.generic))
    captured = capsys.readouterr()
    assert bool((data == 1).all())
    assert captured.out.splitlines() == ["(1,1)", "2 -> 2"]
    assert "no CUDA context on the CPU" in captured.err or "cuda-context" in str(captured)
