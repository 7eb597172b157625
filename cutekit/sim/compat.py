"""What CuTeDSL code from outside the course needs of the simulator: `cutlass.cute.testing`, `cutlass.pipeline`'s
barriers, `cutlass.utils.LayoutEnum`, `cutlass.torch`, `cutlass.dsl_user_op`, `tensor.type`, `tensor.leading_dim`,
`layout.max_alignment`, `cute.domain_offset`, and launch options that mean nothing on a CPU (streams, clusters,
CUDA graphs): they are accepted, and the first use of each says once what the simulator did instead.
"""
from __future__ import annotations

import enum
import time

import numpy

from ..cute import typing as types
from ..cute.inttuple import CuteError, is_tuple
from ..cute.layout import ComposedLayout, Layout, size
from ..cute.tensor import Tensor
from .machine.threads import _SAID, notice  # noqa: F401  (said once: the machine's notices, compat.notice too)
from .memory.structs import smem_capacity_in_bytes  # noqa: F401  (compat.smem_capacity_in_bytes, as before)
from .memory.tensors import SimTensor
from .ops import device


def launch_options(stream=None, cluster=None, **others):
    """The launch options that have no meaning on the CPU: accepted, and said once."""
    if stream is not None:
        notice("stream", "launch(stream=...): no CUDA streams on the CPU; each launch runs to completion, in "
                         "the order of the calls, before the call returns")
    if cluster is not None and _cluster_size(cluster) > 1:
        notice("cluster", f"launch(cluster={list(cluster)}): no thread-block clusters on the CPU; blocks run one "
                          "after another, each with its own shared memory (no distributed shared memory)")
    for name in sorted(others):
        if others[name] not in (None, False, 0):
            notice(f"launch-{name}", f"launch({name}=...): accepted and ignored by the simulator")


def _cluster_size(cluster) -> int:
    try:
        return int(numpy.prod([int(c) for c in cluster]))
    except TypeError:
        return int(cluster)


# --------------------------------------------------------------------------------------------- tensors

class TensorType:
    """`tensor.type`: what CuTeDSL prints for a tensor's MLIR type, e.g. `!cute.memref<f32, gmem, "(16,128):(128,1)">`."""

    def __init__(self, tensor):
        self.tensor = tensor

    def __str__(self):
        t = self.tensor
        if isinstance(t, SimTensor):
            from .memory.printing import tensor_type_text
            return tensor_type_text(t)
        if t.is_coordinate:
            return f'!cute.coord_tensor<"{t.iterator}", "{t.layout}">'
        return str(t)

    __repr__ = __str__

    def __eq__(self, other):
        return str(self) == str(other)

    def __hash__(self):
        return hash(str(self))


def _leading_dim(tensor):
    """The mode whose stride is 1 (CuTeDSL's `tensor.leading_dim`); None when there is none or several."""
    stride = tensor.layout.stride
    strides = stride if is_tuple(stride) else (stride,)
    found = [i for i, s in enumerate(strides) if type(s) is int and s == 1]
    if len(found) == 1:
        return found[0]
    shape = tensor.layout.shape if is_tuple(tensor.layout.shape) else (tensor.layout.shape,)
    wide = [i for i in found if not (type(shape[i]) is int and shape[i] == 1)]
    return wide[0] if len(wide) == 1 else None


def _max_alignment(layout) -> int:
    """`layout.max_alignment`: the largest power of two (at most 1024) that divides the layout's size, so a
    vector of that many elements never straddles its end."""
    n = size(layout)
    if n <= 0:
        return 1
    return min(n & -n, 1024)


def install():
    """Give the tensor and layout classes the attributes CuTeDSL code reads (only those they lack)."""
    if not hasattr(Tensor, "type"):
        Tensor.type = property(TensorType)
    if not hasattr(Tensor, "leading_dim"):
        Tensor.leading_dim = property(_leading_dim)
    for cls in (Layout, ComposedLayout):
        if not hasattr(cls, "max_alignment"):
            cls.max_alignment = property(_max_alignment)


def domain_offset(coord, tensor):
    """cute.domain_offset: `tensor` seen from `coord` on (element c of the result is element c + coord)."""
    layout = tensor.layout
    offset = _linear_offset(coord, layout.shape, layout.stride, coord)
    if isinstance(tensor, SimTensor):
        return SimTensor(tensor.storage, layout, tensor.base + offset, tensor.swizzle, tensor.name)
    if isinstance(tensor, Tensor):
        return Tensor(tensor._advance(offset) if tensor.is_coordinate else
                      (tensor.iterator[0], tensor.iterator[1], tensor.iterator[2] + offset), layout, tensor.name)
    raise CuteError(f"cute.domain_offset(coord, tensor): expected a tensor, got {type(tensor).__name__}")


def _linear_offset(coord, shape, stride, whole):
    """The offset of `coord`, extended linearly past the shape (a domain offset may be negative)."""
    if coord is None or (type(coord) is int and coord == 0):
        return 0
    if is_tuple(coord):
        if not is_tuple(shape) or len(coord) != len(shape):
            raise CuteError(f"cute.domain_offset: coordinate {whole} does not match the shape {shape}")
        total = 0
        for c, s, d in zip(coord, shape, stride):
            total = total + _linear_offset(c, s, d, whole)
        return total
    if not is_tuple(shape):
        return coord * stride
    if 0 <= coord < product(shape):
        return _nested_offset(coord, shape, stride)
    raise CuteError(f"cute.domain_offset: coordinate {coord} of {whole} is outside the nested mode {shape}")


def _nested_offset(index, shape, stride):
    total = 0
    for s, d in zip(shape, stride):
        n = product(s)
        total = total + (_nested_offset(index % n, s, d) if is_tuple(s) else (index % n) * d)
        index //= n
    return total


# --------------------------------------------------------------------------------------------- cutlass.*

def dsl_user_op(function):
    """@cutlass.dsl_user_op: in CuTeDSL it threads MLIR locations (`loc=`, `ip=`); here the function as it is."""
    return function


class JitArguments:
    """cute.testing.JitArguments: the arguments of one call, for `benchmark`."""

    def __init__(self, *args, **kwargs):
        self.args, self.kwargs = args, kwargs


def benchmark(callable, *, warmup_iterations=10, iterations=100, stream=None, kernel_arguments=None,
              workspace_generator=None, workspace_count=1, use_cuda_graphs=False, **kwargs):
    """cute.testing.benchmark: one call, timed on the CPU, in microseconds (what the real one returns)."""
    if use_cuda_graphs:
        notice("graphs", "use_cuda_graphs=True: no CUDA graphs on the CPU; the function is called directly")
    notice("benchmark", f"testing.benchmark: timed one call on the CPU instead of {warmup_iterations} warm-up "
                        f"and {iterations} timed iterations; the simulator's time says nothing about a GPU's")
    arguments = workspace_generator() if workspace_generator is not None else (kernel_arguments or JitArguments())
    started = time.perf_counter()
    callable(*arguments.args, **arguments.kwargs)
    return (time.perf_counter() - started) * 1e6


class NamedBarrier:
    """cutlass.pipeline.NamedBarrier: a barrier for `num_threads` threads of the block (all of them when not
    given); the threads that do not take part go on."""

    def __init__(self, barrier_id, num_threads=None):
        if not 0 <= int(barrier_id) < 16:
            raise CuteError(f"NamedBarrier(barrier_id={barrier_id}): a barrier id is 0..15")
        self.barrier_id, self.num_threads = int(barrier_id), num_threads

    def arrive_and_wait(self, *args, **kwargs):
        device.barrier(self.barrier_id, self.num_threads)

    wait = sync = arrive_and_wait

    def arrive(self, *args, **kwargs):
        raise CuteError("NamedBarrier.arrive (arrive without waiting) is not simulated; use arrive_and_wait")

    def get_barrier(self):
        return self.barrier_id


class LayoutEnum(enum.Enum):
    """cutlass.utils.LayoutEnum: a 2-D operand's major mode (ROW_MAJOR: mode 1 is contiguous)."""
    ROW_MAJOR = "row_major"
    COL_MAJOR = "col_major"

    def mma_major_mode(self):
        """The operand's major mode for an MMA: K where mode 1 (K of A and B) is contiguous, else MN."""
        from ..cute.nvgpu.common_modes import OperandMajorMode
        return OperandMajorMode.K if self is LayoutEnum.ROW_MAJOR else OperandMajorMode.MN

    sm90_mma_major_mode = mma_major_mode

    def is_k_major_a(self):
        return self is LayoutEnum.ROW_MAJOR

    def is_m_major_a(self):
        return self is LayoutEnum.COL_MAJOR

    def is_n_major_b(self):
        return self is LayoutEnum.COL_MAJOR

    def is_k_major_b(self):
        return self is LayoutEnum.ROW_MAJOR

    def is_n_major_c(self):
        return self is LayoutEnum.ROW_MAJOR

    def is_m_major_c(self):
        return self is LayoutEnum.COL_MAJOR

    @staticmethod
    def from_tensor(tensor):
        lead = tensor.leading_dim
        if isinstance(lead, tuple):
            lead = lead[0]
        if lead == 1:
            return LayoutEnum.ROW_MAJOR
        if lead == 0:
            return LayoutEnum.COL_MAJOR
        raise CuteError(f"LayoutEnum.from_tensor: {tensor} has no mode of stride 1 in its first two modes")


_TORCH_DTYPES = {"Float16": "float16", "BFloat16": "bfloat16", "Float32": "float32", "Float64": "float64",
                 "Int8": "int8", "Int16": "int16", "Int32": "int32", "Int64": "int64", "Uint8": "uint8",
                 "Boolean": "bool"}


def torch_dtype(element_type):
    """cutlass.torch.dtype: the torch dtype of a cutlass numeric type."""
    import torch
    name = getattr(element_type, "__name__", str(element_type))
    if name not in _TORCH_DTYPES:
        raise CuteError(f"cutlass.torch.dtype({name}): no torch dtype the simulator can use")
    return getattr(torch, _TORCH_DTYPES[name])


def current_stream():
    """cutlass.torch.current_stream: there are no streams on the CPU; a stand-in (0) is given."""
    notice("stream", "current_stream(): no CUDA streams on the CPU; launches run in call order and finish "
                     "before the call returns")
    return 0


def _numeric_names():
    return {name for name in dir(types) if not name.startswith("_")}


def numeric_type(name):
    """cutlass.dtype("Float16"): the numeric type of that name (as the examples' argument parsers use it)."""
    if not isinstance(name, str):
        return name
    found = getattr(types, name, None)
    if found is None:
        raise CuteError(f"cutlass.dtype({name!r}): the simulator knows no numeric type of that name")
    return found


# --------------------------------------------------------------------------------------------- int-tuple helpers

def ceil_div(a, b):
    """cute.ceil_div: on integers, or mode by mode on tuples (`ceil_div(shape, tile)`)."""
    if is_tuple(a):
        if not is_tuple(b):
            raise CuteError(f"cute.ceil_div({a}, {b}): a tuple is divided by a tuple of the same rank")
        if len(b) > len(a):
            raise CuteError(f"cute.ceil_div({a}, {b}): the divisor has more modes than the dividend")
        return tuple(ceil_div(x, y) for x, y in zip(a, b)) + tuple(a[len(b):])
    if is_tuple(b):
        raise CuteError(f"cute.ceil_div({a}, {b}): an integer cannot be divided by a tuple")
    return -(-a // b)


def product(a):
    """cute.product: the product of every leaf of an int tuple."""
    if is_tuple(a):
        out = 1
        for x in a:
            out *= product(x)
        return out
    return a


def product_each(a):
    """cute.product_each: the product of each top-level mode."""
    return tuple(product(x) for x in a) if is_tuple(a) else a


def repeat_like(value, target):
    """cute.repeat_like: `value` in `target`'s nesting."""
    if is_tuple(target):
        return tuple(repeat_like(value, t) for t in target)
    return value


# --------------------------------------------------------------------------------------------- fp8, helpers

class Float8E4M3FN(types.Numeric):
    """cutlass.Float8E4M3FN: named so code that lists it imports; the simulator has no fp8 arithmetic."""
    numpy_type = numpy.uint8
    width = 8
    mlir_type = "f8E4M3FN"


class Float8E5M2(types.Numeric):
    """cutlass.Float8E5M2: named so code that lists it imports; the simulator has no fp8 arithmetic."""
    numpy_type = numpy.uint8
    width = 8
    mlir_type = "f8E5M2"


FP8 = (Float8E4M3FN, Float8E5M2)


def is_fp8_dtype(dtype):
    return dtype in FP8


def make_fake_stream(*args, **kwargs):
    """cute.runtime.make_fake_stream: a stand-in stream (there are none on the CPU)."""
    return 0


def rcp_approx(value):
    """cute.arch.rcp_approx: 1/x in fp32 (the GPU's rcp.approx.ftz.f32 is within an ulp or two of it; the
    simulator gives the correctly rounded quotient)."""
    return numpy.float32(1.0) / numpy.float32(value)
