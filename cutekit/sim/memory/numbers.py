"""DSL numbers in @cute.jit host code: what `cutlass.Int32(5)` or `cutlass.Float32(3.14)` makes there.

In CuTeDSL such a value is an MLIR value: Python's print shows `?` (its value is known when the code runs),
`repr` shows the constant (`Int32(5)`), `cute.printf` shows the value, `.to(T)` converts it (an Int32 of 300
to Int8 wraps to 44, a Float32 to Int32 truncates), and arithmetic follows the DSL's rules: Int32 + Float32
is a Float32, Int32 / Int32 a Float32, a comparison a Boolean. The simulator computes the value and keeps
the type. Inside a kernel, `cutlass.Int32(...)` still gives a plain number (each thread's arithmetic stays
fast); outside @cute.jit it is unchanged too.

>>> from cutekit.cute import typing as types
>>> a, x = integer(10, types.Int32), floating(5.5, types.Float32)
>>> str(a), repr(a), repr(a + x), repr(a / integer(3, types.Int32)), repr(integer(300, types.Int32).to(types.Int8))
('?', 'Int32(10)', 'Float32(15.5)', 'Float32(3.3333333)', 'Int8(44)')
"""
from __future__ import annotations

import numpy

from ...cute import typing as types
from ...cute.inttuple import Dynamic
from ..machine import threads, tracing


def _wrap(value: int, element_type) -> int:
    """`value` as the element type holds it (two's complement wrap-around; a Boolean is 0 or 1)."""
    if element_type is types.Boolean:
        return 1 if value else 0
    bits = element_type.width
    if element_type.__name__.startswith("Uint"):
        return value % (1 << bits)
    half = 1 << (bits - 1)
    return (value + half) % (1 << bits) - half


def _rounded(value: float, element_type) -> float:
    storage = types.NUMPY_STORAGE.get(element_type, numpy.float32)
    return float(storage(value))


def _is_float_type(element_type) -> bool:
    return types.NUMPY_STORAGE.get(element_type, numpy.float32) in (numpy.float16, numpy.float32, numpy.float64) \
        and element_type is not types.Boolean


def make(value, element_type):
    """A DSL number of `element_type` holding `value`."""
    if _is_float_type(element_type):
        return floating(value, element_type)
    return integer(value, element_type)


class _Named(type):
    """The class of a DSL number prints as its element type: `print(type(a))` shows `Int32`, as in CuTeDSL."""

    def __str__(cls):
        return cls.element_type.__name__ if cls.element_type is not None else cls.__name__


_CLASSES: dict = {}


def _class_of(base, element_type):
    found = _CLASSES.get((base, element_type))
    if found is None:
        found = _CLASSES[(base, element_type)] = _Named(element_type.__name__, (base,),
                                                        {"element_type": element_type, "__slots__": ()})
    return found


def integer(value, element_type, known: bool = True) -> "Integer":
    """A DSL integer; `known=False` for a run-time argument (its repr is `Int32(?)`, a constant's `Int32(5)`)."""
    number = int(value) if not isinstance(value, (float, numpy.floating)) else int(numpy.trunc(value))
    self = Dynamic.__new__(_class_of(Integer, element_type), _wrap(number, element_type),
                           64 if element_type.width == 64 else 32)
    self.known = known
    return self


def floating(value, element_type, known: bool = True) -> "Float":
    self = float.__new__(_class_of(Float, element_type), _rounded(float(value), element_type))
    self.literal, self.known = value, known
    return self


def argument(value, annotation_name: str, width: int):
    """A run-time argument of a @cute.jit function or kernel (dynamic.argument): an int as an Int32 (Int64) that
    prints `?` and whose type prints `Int32`, a float annotated as a DSL float as that float."""
    if isinstance(value, float):
        element_type = getattr(types, annotation_name, None)
        return floating(value, element_type, known=False) if element_type is not None and \
            _is_float_type(element_type) else value
    element_type = getattr(types, annotation_name, None)
    if element_type is None or _is_float_type(element_type) or element_type is types.Boolean:
        element_type = types.Int64 if width == 64 else types.Int32
    return integer(value, element_type, known=False)


def _kind(other):
    """The element type of an operand (None for what is not a number)."""
    if isinstance(other, (Integer, Float)):
        return other.element_type
    if isinstance(other, bool):
        return types.Boolean
    if isinstance(other, int):
        return types.Int32
    if isinstance(other, float):
        return types.Float32
    if isinstance(other, numpy.generic):
        return types.from_numpy_dtype(other.dtype)
    return None


def _result_type(a, b):
    """The element type of a binary operation (the float one, else the wider integer)."""
    ka, kb = _kind(a), _kind(b)
    if ka is None or kb is None:
        return None
    if _is_float_type(ka) or _is_float_type(kb):
        floats = [k for k in (ka, kb) if _is_float_type(k)]
        return max(floats, key=lambda k: k.width) if isinstance(a, Float) or isinstance(b, Float) or \
            isinstance(a, numpy.floating) or isinstance(b, numpy.floating) else types.Float32
    return ka if ka.width >= kb.width else kb


def _arith(operation, integer_result=True, true_division=False):
    def method(self, other):
        kind = _result_type(self, other)
        if kind is None:
            return NotImplemented
        a, b = float(self) if isinstance(self, Float) else int(self), \
            float(other) if isinstance(other, (float, numpy.floating)) else int(other)
        if true_division and not _is_float_type(kind):
            kind = types.Float32
        known = getattr(self, "known", True) and getattr(other, "known", True)
        if _is_float_type(kind):
            storage = types.NUMPY_STORAGE.get(kind, numpy.float32)
            with numpy.errstate(all="ignore"):
                return floating(operation(storage(a), storage(b)), kind, known)
        return integer(operation(a, b), kind, known)
    return method


def _reflected(operation, **options):
    forward = _arith(lambda a, b: operation(b, a), **options)
    return forward


def _compare(operation):
    def method(self, other):
        if _kind(other) is None:
            return NotImplemented
        return integer(operation(float(self) if isinstance(self, Float) else int(self),
                                 float(other) if isinstance(other, (float, numpy.floating)) else int(other)),
                       types.Boolean, getattr(self, "known", True) and getattr(other, "known", True))
    return method


class _Operators:
    """Arithmetic shared by DSL integers and floats."""
    import operator as _op
    __add__, __radd__ = _arith(_op.add), _reflected(_op.add)
    __sub__, __rsub__ = _arith(_op.sub), _reflected(_op.sub)
    __mul__, __rmul__ = _arith(_op.mul), _reflected(_op.mul)
    __truediv__ = _arith(_op.truediv, true_division=True)
    __rtruediv__ = _reflected(_op.truediv, true_division=True)
    __floordiv__, __rfloordiv__ = _arith(_op.floordiv), _reflected(_op.floordiv)
    __mod__, __rmod__ = _arith(_op.mod), _reflected(_op.mod)
    __lt__, __le__ = _compare(_op.lt), _compare(_op.le)
    __gt__, __ge__ = _compare(_op.gt), _compare(_op.ge)
    del _op

    def __str__(self):
        return "?"

    def __format__(self, spec):
        return "?" if not spec else format(self.value, spec)

    def to(self, element_type, *args, **kwargs):
        """The value converted to `element_type` (an integer wraps, a float to an integer truncates)."""
        converted = make(self.value, element_type)
        converted.known = self.known
        return converted

    @property
    def dtype(self):
        return self.element_type

    def ir_value(self, *args, **kwargs):
        return self


def _c_remainder(a, b):
    """An integer `%` as the GPU computes it: the sign of the dividend (arith.remsi, C's %), not Python's."""
    if isinstance(a, int) and isinstance(b, int) and b:
        r = abs(a) % abs(b)
        return -r if a < 0 else r
    return a % b


class Integer(_Operators, Dynamic, metaclass=_Named):
    """A DSL integer (Int8 ... Int64, Uint8, Uint32, Boolean) in host code: an int that prints `?`."""
    element_type = None
    __mod__, __rmod__ = _arith(_c_remainder), _reflected(_c_remainder)
    import operator as _op
    __and__ = __rand__ = _arith(_op.and_)
    __or__ = __ror__ = _arith(_op.or_)
    __xor__ = __rxor__ = _arith(_op.xor)
    __lshift__, __rshift__ = _arith(_op.lshift), _arith(_op.rshift)
    del _op

    @property
    def value(self) -> int:
        return int(self)

    def __neg__(self):
        return integer(-int(self), self.element_type, self.known)

    def __invert__(self):
        return integer(~int(self), self.element_type, self.known)

    def __abs__(self):
        return integer(abs(int(self)), self.element_type, self.known)

    def __pos__(self):
        return self

    __hash__ = Dynamic.__hash__       # not the plain int's: a layout made of it is not the static layout
    __eq__ = int.__eq__
    __ne__ = int.__ne__

    def __repr__(self):
        return f"{self.element_type.__name__}({int(self) if self.known else '?'})"

    def __reduce__(self):
        return integer, (int(self), self.element_type, self.known)


class Float(_Operators, float, metaclass=_Named):
    """A DSL float (Float16, BFloat16, Float32, Float64) in host code: a float that prints `?`."""
    element_type = None

    @property
    def value(self) -> float:
        return float(self)

    def __neg__(self):
        return floating(-float(self), self.element_type, self.known)

    def __abs__(self):
        return floating(abs(float(self)), self.element_type, self.known)

    def __pos__(self):
        return self

    __hash__ = float.__hash__
    __eq__ = float.__eq__
    __ne__ = float.__ne__

    def __repr__(self):
        return f"{self.element_type.__name__}({str(self.literal) if self.known else '?'})"

    def __reduce__(self):
        return floating, (float(self), self.element_type, self.known)


def for_kernel(value):
    """A host DSL float passed to a kernel becomes the NumPy scalar of its type, as a kernel's own
    `cutlass.Float32(...)` is (its arithmetic then keeps the type); other values pass as they are."""
    if isinstance(value, Float):
        return types.NUMPY_STORAGE.get(value.element_type, numpy.float32)(float(value))
    return value


# ----------------------------------------------------------------------------------------------- constructors

_PLAIN_NEW = types.Numeric.__new__


def _numeric_new(cls, value=0):
    """`cutlass.Int32(v)`: a DSL number in @cute.jit host code, the plain value elsewhere (typing.py)."""
    if tracing.mode() is not None and threads.current() is None and cls is not types.Numeric:
        if isinstance(value, (Integer, Float)):
            return value.to(cls)
        return make(value, cls)
    return _PLAIN_NEW(cls, value)


def _extent_compare(operation):
    """A comparison of a run-time extent (a Dynamic: an extent or stride of a tensor marked dynamic, a size or
    `ceil_div` of one) inside @cute.jit code or a kernel: a run-time Boolean, as CuTeDSL 4.8.1 gives (`cute.size(t)
    > 3` is a Boolean whose value the GPU computes, refused by `cutlass.const_expr`); plain Python's bool
    elsewhere. A DSL Int32 (Integer) compares by its own operators (_compare)."""
    def method(self, other):
        kind = type(other)
        if kind is not int and kind is not float and not isinstance(other, int):
            return NotImplemented
        answer = operation(int(self), other if kind is int or kind is float else int(other))
        if tracing._STATE.mode is None and threads._current[0] is None:
            return answer
        return _RUN_TIME_TRUE if answer else _RUN_TIME_FALSE
    return method


def install():
    """Make the element types build DSL numbers in @cute.jit host code (once per process), and comparisons of
    run-time extents give run-time Booleans there and in kernels."""
    global _RUN_TIME_TRUE, _RUN_TIME_FALSE
    if types.Numeric.__new__ is not _numeric_new:
        types.Numeric.__new__ = _numeric_new
        _RUN_TIME_TRUE, _RUN_TIME_FALSE = integer(1, types.Boolean, False), integer(0, types.Boolean, False)
        import operator
        for name in ("lt", "le", "gt", "ge", "eq", "ne"):
            setattr(Dynamic, f"__{name}__", _extent_compare(getattr(operator, name)))
        Dynamic.__hash__ = Dynamic.__dict__["__hash__"]     # kept: a class defining __eq__ keeps its own hash


_RUN_TIME_TRUE = _RUN_TIME_FALSE = None
