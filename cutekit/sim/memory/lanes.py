"""Values that differ between the threads of a launch run as NumPy vectors (vector.py): one entry per thread.

The bottom of the memory floor: a tensor value (tensors.py) of a vectorized launch hands out `Lanes`, and a
kernel that does what a vectorized launch cannot raises NotVectorizable (the launch then runs thread by thread).
"""
from __future__ import annotations

import numpy


class NotVectorizable(Exception):
    """The kernel did something a vectorized launch cannot do; the launch runs thread by thread."""


# ----------------------------------------------------------------------------------------------- lane values

class Lanes(numpy.ndarray):
    """A value that differs between threads: one entry per thread of the batch. Prints as CuTeDSL prints a
    run-time value."""

    def __str__(self):
        return dynamic_text(self)

    __repr__ = __str__

    def __format__(self, spec):
        return str(self) if not spec else format(str(self), spec)


def lanes(array) -> Lanes:
    return numpy.asarray(array).view(Lanes)


def dynamic_text(values) -> str:
    """`?`, or `?{div=k}` when every thread's value is a multiple of k > 1."""
    plain = numpy.asarray(values)
    if plain.dtype.kind in "iu" and plain.size:
        divisor = int(numpy.gcd.reduce(numpy.abs(plain.astype(numpy.int64)).ravel()))
        if divisor > 1:
            return "?{div=%d}" % divisor
    return "?"
