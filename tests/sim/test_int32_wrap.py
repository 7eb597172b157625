"""A kernel's Int32 values wrap where a GPU's 32-bit registers wrap, before a comparison sees them: a product of a
thread's index or of an element of an Int32 tensor past 2**31 is negative in the branch that tests it, `//`, `%`
`>>`, `min`, `if x:` and a conversion to Float32 see the wrapped value, an Int32 argument's arithmetic wraps, and a `cutlass.Int64` value does
not; an integer `%` takes the dividend's sign, as the GPU's does. The kernel is tests/sim/int32_kernels.py; the expected values follow two's complement, as the PTX CuTeDSL
4.8.1 compiles for it does (`mul.lo.s32`, `setp.lt.s32`)."""
import importlib
import os

import numpy
import pytest

import cutekit
from cutekit.sim import wrap32


def wrapped(x: int) -> int:
    return ((x + 2 ** 31) % 2 ** 32) - 2 ** 31


def c_remainder(a: int, b: int) -> int:
    """C's `%` (arith.remsi): the sign of the dividend."""
    return -(abs(a) % abs(b)) if a < 0 else abs(a) % abs(b)


@pytest.fixture(scope="module")
def kernels():
    with cutekit.using("sim", fresh=("tests.sim.int32_kernels",)):
        yield importlib.import_module("tests.sim.int32_kernels")


def test_values_past_int32_wrap_before_a_comparison_sees_them(kernels):
    from cutlass.cute.runtime import from_dlpack
    import cutlass
    x = numpy.arange(32, dtype=numpy.int32)
    out = numpy.zeros(256, numpy.int32)
    kernels.launch(from_dlpack(x), from_dlpack(out), cutlass.Int32(50000), cutlass.Int32(50000))
    expected_flags, quotients, remainders, shifted = [], [], [], []
    for t in range(32):
        product = wrapped(t * 100000000)
        flags = (1 if product < 0 else 0) + (2 if wrapped(t * 1000000000) < 0 else 0) + \
            (4 if wrapped(50000 * 50000) < 0 else 0) + (16 if min(product, 0) < 0 else 0)
        expected_flags.append(flags)
        quotients.append((product // 1000) // 7)
        remainders.append(c_remainder(product, 1000003))
        shifted.append(product >> 20)
    assert out[:32].tolist() == expected_flags
    assert expected_flags[21] == 2 + 4 and expected_flags[22] == 1 + 4 + 16     # 22 * 10**8 wraps below 0
    assert out[32:64].tolist() == quotients and out[64:96].tolist() == remainders
    assert out[96:128].tolist() == shifted
    assert out[128:160].tolist() == [c_remainder(t - 8, 5) for t in range(32)] and out[128] == -3
    assert out[160:192].tolist() == [-3] * 32
    assert not out[192:224].any()                                   # `if z:` with z a multiple of 2**32
    assert out[224:].tolist() == [int(wrapped(t * 100000000) < 0) for t in range(32)]


def test_an_element_of_an_int64_tensor_stays_64_bit(kernels):
    from cutlass.cute.runtime import from_dlpack
    out = numpy.zeros(2, numpy.int32)
    kernels.launch_wide(from_dlpack(numpy.array([3_000_000_000, -5], numpy.int64)), from_dlpack(out))
    assert out.tolist() == [1, 0]


def test_only_run_time_ints_are_wrapped_and_the_rewritten_kernel_is_the_same_code_otherwise():
    assert (wrap32.int32(22 * 100000000), wrap32.int32(2 ** 31), wrap32.int32(-2 ** 31 - 1)) == \
        (-2094967296, -2 ** 31, 2 ** 31 - 1)
    assert wrap32.int32(2.5e9) == 2.5e9 and wrap32.int32(True) is True


def test_a_source_that_is_not_the_code_running_is_left_as_it_is(tmp_path):
    """A function compiled from a string that differs from the file on disk: not compiled again."""
    path = tmp_path / "edited.py"
    path.write_text("def f(t):\n    return t * 100000000 < 0\n")
    namespace: dict = {}
    exec(compile("def f(t):\n    return t * 100000001 < 0\n", str(path), "exec"), namespace)   # noqa: S102
    assert wrap32.rewrite(namespace["f"]) is namespace["f"]


@pytest.mark.skipif(os.environ.get("CUTEKIT_CUTEDSL_ORACLE") != "1",
                    reason="compiles with real CuTeDSL (about 10 s); set CUTEKIT_CUTEDSL_ORACLE=1")
def test_cutedsl_compiles_the_products_as_32_bit_multiplies():
    from cutekit.checks.cutedsl import FakeTensor, compile_to_ptx
    path = os.path.join(os.path.dirname(__file__), "int32_kernels.py")
    report = compile_to_ptx(path, "launch", (FakeTensor("Int32", 1), FakeTensor("Int32", 1), 50000, 50000))
    assert report.ok, report.error
    assert "mul.lo.s32" in report.ptx and "setp.lt.s32" in report.ptx
