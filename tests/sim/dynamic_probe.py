"""What Python's `print` shows inside @cute.jit and @cute.kernel for values CuTeDSL knows only at run time, asked
of whichever `cutlass` is imported (the simulator or real CuTeDSL 4.8.1, traced on the CPU by cute.compile).

`host_lines()` and `kernel_lines()` return the text each line would print (str of the same values). Run as
`python -m tests.sim.dynamic_probe` to print CuTeDSL's, as JSON (tests/sim/test_dynamic_values.py pins them).
"""
import json
import os

os.environ.setdefault("CUTE_DSL_ARCH", "sm_80")


def host_lines():
    import torch
    import cutlass
    import cutlass.cute as cute
    from cutlass.cute.runtime import from_dlpack

    out = []

    @cute.jit
    def inner(x, y: cutlass.Int32, z: cutlass.Constexpr):
        out.append(f"inner {x} {y} {z}")

    @cute.jit
    def arguments(t: cute.Tensor, n: cutlass.Int32, m: cutlass.Int64, k, c: cutlass.Constexpr, shape: cute.Shape,
                  plain):
        out.append(f"args {n} {m} {k} {c} {shape} {plain}")
        out.append(str(cute.make_layout((2, (1, 6)), stride=(1, (n, 2)))))
        out.append(str(cute.make_layout(((2, 2), 3), stride=((n * 3, 2), m))))
        out.append(f"{cute.make_layout((2, n))} {cute.make_layout((n, 4))} {cute.make_layout((k, 2))}")
        out.append(f"{cute.make_layout((m, 2))} {cute.make_layout((n, 4), stride=(4, 1))}")
        out.append(f"{cute.size(cute.make_layout((n, 4)))} {cute.size((n, 4))} {(n, 4)} {n * 3} {n + 1}")
        out.append(str(cute.make_ordered_layout((n, 4, n), order=(2, 0, 1))))
        out.append(str(cute.make_identity_tensor((n, 4))))
        out.append(str(cute.logical_divide(cute.make_layout((n, 8)), (2, 4))))
        out.append(str(cute.coalesce(cute.make_layout((n, 4), stride=(1, n)))))
        out.append(f"{t.layout} {t.shape} {t.layout.stride}")
        out.append(str(cute.zipped_divide(t, (4, 8)).layout))
        out.append(str(cute.local_tile(t, (4, 8), (0, None)).layout))
        out.append(str(cute.local_partition(t, cute.make_layout((2, 4)), cutlass.Int32(0)).layout))
        out.append(str(cute.make_identity_tensor(t.shape)))
        out.append(str(cute.make_layout(plain)))
        inner(5, 6, 7)
        inner(n, n, 7)

    @cute.jit
    def layout_of(t: cute.Tensor):
        out.append(str(t.layout))

    a = torch.zeros(16, 128)
    cute.compile(arguments, from_dlpack(a).mark_layout_dynamic(), cutlass.Int32(6), cutlass.Int64(5), 7, 3, (16, 8),
                 (3, 4))
    cute.compile(arguments, from_dlpack(a), 6, 5, 7, 3, (16, 8), (3, 4))
    for tensor in [from_dlpack(torch.zeros(64, 128)).mark_compact_shape_dynamic(mode=0, divisibility=16),
                   from_dlpack(torch.zeros(8, 4, 2)).mark_compact_shape_dynamic(mode=1, divisibility=2),
                   from_dlpack(torch.zeros(8, 4, 2), use_32bit_stride=True).mark_layout_dynamic(),
                   from_dlpack(torch.zeros(8, 4)).mark_compact_shape_dynamic(mode=0, divisibility=4)
                   .mark_compact_shape_dynamic(mode=1, divisibility=2),
                   from_dlpack(torch.zeros(8, 4).t()).mark_layout_dynamic(),
                   from_dlpack(torch.zeros(1, 4)).mark_layout_dynamic(leading_dim=1),
                   from_dlpack(torch.zeros(8, 4)).mark_layout_dynamic()
                   .mark_compact_shape_dynamic(mode=1, divisibility=4),
                   from_dlpack(torch.zeros(16, 128)).mark_compact_shape_dynamic(mode=1, stride_order=(0, 1))]:
        cute.compile(layout_of, tensor)
    return out


def kernel_lines(run):
    """What a kernel's print shows of its arguments; `run(jit_function, *args)` traces (CuTeDSL: cute.compile)
    or runs (the simulator: a call, whose kernel prints once) it."""
    import torch
    import cutlass
    import cutlass.cute as cute
    from cutlass.cute.runtime import from_dlpack

    out = []

    @cute.kernel
    def kernel(t: cute.Tensor, n: cutlass.Int32, c: cutlass.Constexpr, plain):
        if not out:
            out.append(f"{n} {c} {plain} {cute.make_layout((n, c))}")
            out.append(f"{t.layout} {cute.local_tile(t, (4, 8), (0, None)).layout}")
            out.append(f"{cute.size(t)} {cute.size(t, mode=[0])} {t.shape} {t.layout.stride}")

    @cute.jit
    def launch(t: cute.Tensor, n: cutlass.Int32):
        kernel(t, n, 5, 7).launch(grid=[1, 1, 1], block=[1, 1, 1])

    run(launch, from_dlpack(torch.zeros(16, 128)).mark_layout_dynamic(), cutlass.Int32(6))
    return out


if __name__ == "__main__":
    import cutlass.cute as cute
    print(json.dumps({"host": host_lines(), "kernel": kernel_lines(lambda f, *args: cute.compile(f, *args))}))
