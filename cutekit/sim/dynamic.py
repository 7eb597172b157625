"""Run-time values as CuTeDSL sees them while it traces: `?`.

CuTeDSL traces a `@cute.jit` function (and the kernels it launches) without the values of its run-time
arguments: an Int32 argument, a Python int passed without `cutlass.Constexpr`, a kernel's int argument, and
the extents and strides of a tensor marked with `mark_layout_dynamic` / `mark_compact_shape_dynamic`. Python's
`print` inside the function shows each such value as `?` (`?{i64}` for a 64-bit stride, `?{div=16}` where a
divisor is known), and every layout built from them too: `(2,?):(1,2)`. The simulator knows the values (it
runs the code), so it holds each one as a `Dynamic`, an int that computes as its value and prints as CuTeDSL
prints it; `cute.printf` shows the value, as CuTeDSL's printf shows it when the code runs.

(Printed by CuTeDSL 4.8.1 traced on the CPU: tests/sim/test_dynamic_values.py compares.)
"""
from __future__ import annotations

import functools
import inspect

from ..cute.inttuple import CuteError, Dynamic, as_algebra, flatten, is_tuple
from ..cute.layout import Layout, make_layout
from .machine import threads
from .memory import numbers

_DEPTH = [0]        # >0 inside a @cute.jit call: a jit function called from another takes its arguments as they are


def _width(annotation) -> int | None:
    """64 or 32 for an integer annotation (cutlass.Int64, cutlass.Int32, ...), 0 for Constexpr, None otherwise."""
    if annotation is inspect.Parameter.empty:
        return None
    name = annotation if isinstance(annotation, str) else getattr(annotation, "__name__", "")
    name = name.split(".")[-1]
    if name.startswith("Constexpr"):
        return 0
    if name in ("Int64", "Uint64"):
        return 64
    if name in ("Int8", "Int16", "Int32", "Uint8", "Uint16", "Uint32"):
        return 32
    return None


def argument(value, annotation=inspect.Parameter.empty):
    """A host argument as the traced code sees it: an int not marked Constexpr becomes a run-time value, and
    so does every int of a tuple passed without an annotation; an annotated tuple (cute.Shape, ...) stays
    static, as CuTeDSL 4.8.1 passes it."""
    width = _width(annotation)
    if type(value) is tuple:            # annotated (cute.Shape, Constexpr, ...): static as it is
        return tuple(argument(v) for v in value) if annotation is inspect.Parameter.empty else value
    name = annotation if isinstance(annotation, str) else getattr(annotation, "__name__", "")
    if type(value) is float and width != 0:         # a float annotated cutlass.Float32: a run-time Float32
        return numbers.argument(value, name.split(".")[-1], 32)
    if width == 0 or type(value) is not int:        # Constexpr, a bool, a float, a tensor, already dynamic
        return value
    # an Int32 (Int64) that prints `?` and whose type prints as CuTeDSL's: Int32 (cutekit.sim.numbers)
    return numbers.argument(value, name.split(".")[-1], width or 32)


def arguments_of(function):
    """`function` (a @cute.jit body) taking its int arguments as run-time values when called from the host;
    a call from another @cute.jit function or from a kernel passes them on as they are, as CuTeDSL does."""
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError):
        return function

    @functools.wraps(function)
    def with_dynamic_arguments(*args, **kwargs):
        if _DEPTH[0] or threads.current() is not None:
            return function(*args, **kwargs)
        try:
            bound = signature.bind(*args, **kwargs)
        except TypeError:
            return function(*args, **kwargs)      # the call's own error, from the function itself
        bound.apply_defaults()
        for name, value in bound.arguments.items():
            parameter = signature.parameters[name]
            if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
                continue
            bound.arguments[name] = argument(value, parameter.annotation)
        _DEPTH[0] += 1
        try:
            return function(*bound.args, **bound.kwargs)
        finally:
            _DEPTH[0] -= 1
    return with_dynamic_arguments


# ---- tensors marked dynamic ---------------------------------------------------------------------------------

def _flat_layout(tensor, what):
    layout = tensor.layout
    if not isinstance(layout, Layout) or any(is_tuple(s) for s in (layout.shape if is_tuple(layout.shape) else ())):
        raise CuteError(f"{what}: only a flat layout can be marked dynamic (CuTeDSL 4.8.1's limitation), got {layout}")
    shape = layout.shape if is_tuple(layout.shape) else (layout.shape,)
    stride = layout.stride if is_tuple(layout.stride) else (layout.stride,)
    return list(shape), list(stride)


def _stride_width(tensor) -> int:
    return 32 if getattr(tensor.storage, "use_32bit_stride", False) else 64


def _set(tensor, shape, stride):
    """The tensor's layout with the marked extents and strides: a rank-1 tensor keeps its 1-tuple, `(?):(1)`
    and `mA.shape[0]` as in CuTeDSL 4.8.1 (from_dlpack makes one)."""
    tensor.layout = make_layout(tuple(shape), stride=tuple(stride)) if len(shape) > 1 or is_tuple(
        tensor.layout.shape) else make_layout(shape[0], stride=stride[0])
    tensor._offset_of = False           # the element-access shortcut is worked out again for the new layout


def _leading(shape, stride, leading_dim, what):
    if leading_dim is not None:
        if not 0 <= leading_dim < len(shape) or stride[leading_dim] != 1:
            raise CuteError(f"{what}: leading_dim={leading_dim} must name a mode of stride 1; the strides are "
                            f"{tuple(int(d) for d in stride)}")
        return leading_dim
    ones = [i for i, d in enumerate(stride) if d == 1]
    if len(ones) > 1:
        ones = [i for i in ones if shape[i] > 1]
        if len(ones) != 1:
            raise CuteError(f"{what}: several modes have stride 1 and the leading one cannot be told; give "
                            f"leading_dim=")
    return ones[0] if ones else None


def mark_layout_dynamic(tensor, leading_dim=None):
    """tensor.mark_layout_dynamic(): every extent and stride a run-time value (`?`, strides `?{i64}`), but the
    leading mode's stride 1, which stays static. Returns the tensor (marked in place, as CuTeDSL does)."""
    shape, stride = _flat_layout(tensor, "mark_layout_dynamic")
    leading = _leading(shape, stride, leading_dim, "mark_layout_dynamic")
    width = _stride_width(tensor)
    shape = [Dynamic(int(s), 32, algebra=True) for s in shape]
    stride = [d if i == leading else Dynamic(int(d), width, algebra=True) for i, d in enumerate(stride)]
    _set(tensor, shape, stride)
    return tensor


def mark_compact_shape_dynamic(tensor, mode, stride_order=None, divisibility=1):
    """tensor.mark_compact_shape_dynamic(mode, stride_order, divisibility): extent `mode` a run-time value
    known to be a multiple of `divisibility`; the compact strides are worked out again from the extents in
    `stride_order` (torch's dim_order: outermost first; deduced from the strides when not given), so the
    strides that the run-time extent multiplies are run-time values too, their divisor known."""
    shape, stride = _flat_layout(tensor, "mark_compact_shape_dynamic")
    if not 0 <= mode < len(shape):
        raise CuteError(f"mark_compact_shape_dynamic: mode {mode} does not exist in a rank-{len(shape)} tensor")
    if stride_order is None:
        if sum(1 for d in stride if d == 1) != 1:
            raise CuteError("mark_compact_shape_dynamic: the stride order cannot be deduced (it needs exactly one "
                            "mode of stride 1); give stride_order= (torch's tensor.dim_order())")
        stride_order = tuple(sorted(range(len(shape)), key=lambda i: -int(stride[i])))
    if sorted(stride_order) != list(range(len(shape))):
        raise CuteError(f"mark_compact_shape_dynamic: stride_order {tuple(stride_order)} must list every mode once")
    if int(shape[mode]) % divisibility:
        raise CuteError(f"mark_compact_shape_dynamic: extent {int(shape[mode])} of mode {mode} is not a multiple "
                        f"of divisibility={divisibility}")
    shape = [as_algebra(s) for s in shape]
    shape[mode] = Dynamic(int(shape[mode]), 32, divisibility, algebra=True)
    width, running, new_stride = _stride_width(tensor), 1, [0] * len(shape)
    for i in reversed(tuple(stride_order)):            # innermost first
        new_stride[i] = Dynamic(int(running), width, running.divisibility, True) if isinstance(running, Dynamic) \
            else running
        running = running * shape[i]
    _set(tensor, shape, new_stride)
    return tensor


def is_dynamic(x) -> bool:
    """Whether an int-tuple, layout or tensor holds a run-time value."""
    if hasattr(x, "layout"):
        x = x.layout
    if isinstance(x, Layout):
        return is_dynamic(x.shape) or is_dynamic(x.stride)
    return any(isinstance(leaf, Dynamic) for leaf in flatten(x)) if is_tuple(x) else isinstance(x, Dynamic)
