"""Element types, named as CuTeDSL names them (`cutlass.Float16`, ...).

An element type is a class, as in CuTeDSL: `Float16.width` is its size in bits, `str(Float16)` is its name,
and `Float16.mlir_type` is the short name CuTeDSL prints for it inside an atom ("f16"). Calling one makes
a value, as `cutlass.Float32(0.0)` does in a kernel: a NumPy scalar of that width for floats (BFloat16 is
held as float32: NumPy has no bfloat16), a Python int for integers, a bool for Boolean.

>>> Float16.width, str(BFloat16), Int8.mlir_type
(16, 'BFloat16', 'i8')
>>> Float32(1) / 3, Int32(7.9), Boolean(1)
(np.float32(0.33333334), 7, True)
>>> -Float32.inf, Float32.zero, Int32.zero
(-inf, 0.0, 0)
"""
import numpy


class _NumericMeta(type):
    def __str__(cls):
        return cls.__name__

    def __repr__(cls):
        return "<class 'cutekit.cute.typing.%s'>" % cls.__name__

    # CuTeDSL's class-level constants: `cutlass.Float32.inf` is the Python float inf, `Int32.zero` the int 0
    @property
    def zero(cls):
        return 0 if cls.numpy_type in (int, bool) else 0.0

    @property
    def inf(cls):
        if cls.numpy_type in (int, bool):
            raise AttributeError(f"type object '{cls.__name__}' has no attribute 'inf'")
        return float("inf")

    @property
    def nan(cls):
        if cls.numpy_type in (int, bool):
            raise AttributeError(f"type object '{cls.__name__}' has no attribute 'nan'")
        return float("nan")


class Numeric(metaclass=_NumericMeta):
    """The base of every element type; subclasses set `width` (bits), `mlir_type` (printed name) and
    `numpy_type` (how a value is held on the CPU)."""
    width = 0
    mlir_type = ""
    numpy_type = None

    def __new__(cls, value=0):
        if cls.numpy_type is bool:
            return bool(value)
        if cls.numpy_type is int:
            return int(value)
        return cls.numpy_type(value)


class Float16(Numeric):
    numpy_type = numpy.float16
    width = 16
    mlir_type = "f16"


class BFloat16(Numeric):
    numpy_type = numpy.float32
    width = 16
    mlir_type = "bf16"


class Float32(Numeric):
    numpy_type = numpy.float32
    width = 32
    mlir_type = "f32"


class TFloat32(Numeric):
    """TensorFloat-32: a 32-bit register holding an fp32 value that the tensor cores read with a 10-bit
    mantissa (the A and B type of the tf32 mma.sync); held as float32."""
    numpy_type = numpy.float32
    width = 32
    mlir_type = "tf32"


class Float64(Numeric):
    numpy_type = numpy.float64
    width = 64
    mlir_type = "f64"


class Float8E4M3FN(Numeric):
    """8-bit float (4 exponent bits, 3 mantissa bits, finite): an A/B type of the sm_100 tcgen05 MMA (kind
    f8f6f4). Describes layouts only: its values are held as float32."""
    numpy_type = numpy.float32
    width = 8
    mlir_type = "f8E4M3FN"


class Float8E5M2(Numeric):
    """8-bit float (5 exponent bits, 2 mantissa bits): an A/B type of the sm_100 tcgen05 MMA (kind f8f6f4).
    Describes layouts only: its values are held as float32."""
    numpy_type = numpy.float32
    width = 8
    mlir_type = "f8E5M2"


class Int8(Numeric):
    numpy_type = int
    width = 8
    mlir_type = "i8"


class Int16(Numeric):
    numpy_type = int
    width = 16
    mlir_type = "i16"


class Int32(Numeric):
    numpy_type = int
    width = 32
    mlir_type = "i32"


class Int64(Numeric):
    numpy_type = int
    width = 64
    mlir_type = "i64"


class Uint8(Numeric):
    numpy_type = int
    width = 8
    mlir_type = "i8"          # CuTeDSL 4.8.1 prints MLIR's signless integer type, as for Int8


class Uint32(Numeric):
    numpy_type = int
    width = 32
    mlir_type = "i32"         # signless, as CuTeDSL 4.8.1 prints it


class Boolean(Numeric):
    numpy_type = bool
    width = 8
    mlir_type = "i1"


NUMPY_STORAGE = {Float16: numpy.float16, BFloat16: numpy.float32, Float32: numpy.float32, TFloat32: numpy.float32,
                 Float64: numpy.float64, Int8: numpy.int8, Int16: numpy.int16, Int32: numpy.int32, Int64: numpy.int64, Uint8: numpy.uint8,
                 Uint32: numpy.uint32, Boolean: numpy.bool_}
"""The NumPy dtype that holds an array of each element type."""


def from_numpy_dtype(dtype) -> type:
    """The element type of a NumPy (or torch, by name) dtype; a clear error for one the course does not use."""
    name = str(dtype).replace("torch.", "")
    table = {"float16": Float16, "bfloat16": BFloat16, "float32": Float32, "float64": Float64, "int8": Int8,
             "int16": Int16, "int32": Int32, "int64": Int64, "uint8": Uint8, "uint32": Uint32, "bool": Boolean}
    if name not in table:
        raise TypeError(f"no CuTe element type for dtype {name}; use one of {', '.join(sorted(table))}")
    return table[name]


__all__ = ["Numeric", "Boolean", "Int64", "Uint8", "Uint32", "NUMPY_STORAGE", "from_numpy_dtype", "Float16", "BFloat16", "Float32", "TFloat32", "Float64", "Int8", "Int16", "Int32",
           "Float8E4M3FN", "Float8E5M2"]
