"""inf and nan in a simulated kernel arise as on a GPU: silently. exp(1000) is inf, 1 / 0 is inf, 0 / 0 and
inf / inf are nan, and NumPy's RuntimeWarnings (which a GPU has no counterpart of) stay out of the learner's
notebook; chapter 05's capstone checks a softmax that overflows or divides by zero this way."""
import warnings

import numpy


def test_overflow_and_division_by_zero_give_inf_and_nan_without_a_warning(sim):
    import cutlass
    import cutlass.cute as cute
    from cutlass.cute.runtime import from_dlpack

    @cute.kernel
    def specials(x: cute.Tensor, out: cute.Tensor):
        values = cute.make_rmem_tensor(cute.make_layout(2), cutlass.Float32)
        values[0] = x[0]
        values[1] = x[1]
        big = cute.math.exp(values.load())                  # exp(1000), exp(0)
        out[0] = big[0]
        out[1] = 1.0 / (big[1] - 1.0)                       # 1 / 0
        out[2] = (big[1] - 1.0) / (big[1] - 1.0)            # 0 / 0
        out[3] = big[0] / big[0]                            # inf / inf
        out[4] = cute.math.exp(x[0] * 1.0)                  # a scalar's exp

    @cute.jit
    def run(x: cute.Tensor, out: cute.Tensor):
        specials(x, out).launch(grid=[1, 1, 1], block=[1, 1, 1])

    x = numpy.array([1000.0, 0.0], dtype=numpy.float32)
    out = numpy.zeros(5, dtype=numpy.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        run(from_dlpack(x), from_dlpack(out))
    assert numpy.isposinf(out[0]) and numpy.isposinf(out[1]) and numpy.isposinf(out[4])
    assert numpy.isnan(out[2]) and numpy.isnan(out[3])
