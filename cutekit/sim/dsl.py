"""The `cutlass` package as the simulator provides it: the same module names (`cutlass`, `cutlass.cute`,
`cutlass.cute.arch`, `cutlass.cute.nvgpu`, `cutlass.cute.runtime`, `cutlass.utils`, `cutlass.memory`) and
the same functions, so a kernel written for CuTeDSL runs here unchanged.

Host code (`@cute.jit`) runs as plain Python over the reference layout algebra; a `@cute.kernel`'s
`.launch(grid=..., block=...)` runs every thread on the simulated GPU (`machine.scheduler.run`).
"""
from __future__ import annotations

import builtins
import enum
import functools
import inspect
import types as pytypes
from dataclasses import fields

import numpy

from .. import cute as reference
from ..cute import typing as types
from ..cute.atom import MmaAtom, ThrMma, TiledCopy, TiledMma, make_mma_atom as _make_mma_atom
from ..cute.atom import make_tiled_mma as _make_tiled_mma
from ..cute.inttuple import CuteError, is_tuple
from ..cute.layout import ComposedLayout, Layout, make_layout
from ..cute.tensor import Tensor
from . import compat, constexpr, dynamic, host, wrap32
from .arch import ROOMS, sm90, sm100
from .machine import scheduler, threads, tracing
from .machine.failures import LEARNER_FRAMES, plain_coordinate, thread_index
from .memory import numbers, printing, structs, vector
from .memory.structs import Pointer
from .memory.tensors import SimTensor, Storage, TensorSSA, adopt
from .ops import device
from .ops import pipeline as pipelines


# --------------------------------------------------------------------------------------------- pointers

def _iterator(self):
    # a swizzled layout's swizzle belongs to the layout, not to the pointer (CuTe's ComposedLayout)
    swizzle = self.swizzle if isinstance(self.swizzle, structs.PointerSwizzle) else None
    return Pointer(self.storage, self.base, swizzle)


SimTensor.iterator = property(_iterator, lambda self, value: None)


SimTensor.mark_layout_dynamic = dynamic.mark_layout_dynamic     # extents and strides print `?` when traced
SimTensor.mark_compact_shape_dynamic = dynamic.mark_compact_shape_dynamic


def make_tensor(iterator, layout):
    """cute.make_tensor: a tensor from a pointer (`other.iterator`), a tensor, or host memory."""
    if isinstance(iterator, host.RawPointer):       # cute.runtime.make_ptr(dtype, address)
        return iterator.tensor(layout)
    if isinstance(iterator, Pointer):
        return structs.tensor_at(iterator, layout)
    if isinstance(iterator, SimTensor):
        return SimTensor(iterator.storage, layout, iterator.base, iterator.swizzle)
    if isinstance(iterator, Tensor) and iterator.is_coordinate:
        return reference.make_tensor(iterator, layout)
    if is_tuple(iterator) and not (iterator and iterator[0] == "memory"):
        # a coordinate tensor's iterator (its origin coordinate): another coordinate tensor from there
        return Tensor(iterator, reference.make_layout(layout) if not isinstance(layout, Layout) else layout)
    return from_dlpack(iterator).with_layout(reference.make_layout(layout) if not isinstance(
        layout, (Layout, ComposedLayout)) else layout)


# --------------------------------------------------------------------------------------------- host data

def from_dlpack(tensor, assumed_align=None, use_32bit_stride=False, **kwargs):
    """A CuTe tensor over a torch CPU tensor or a NumPy array, sharing its memory (a kernel's writes are
    the caller's)."""
    if isinstance(tensor, SimTensor):
        return tensor
    array = _host_array(tensor)
    element_type = types.from_numpy_dtype(getattr(tensor, "dtype", array.dtype))
    if array.ndim == 0:
        array = array.reshape(1)
    strides = tuple(s // array.itemsize for s in array.strides)
    if any(s < 0 for s in strides):
        raise CuteError("from_dlpack: negative strides are not supported; pass a contiguous copy")
    span = 1 + sum((extent - 1) * stride for extent, stride in zip(array.shape, strides)) if array.size else 0
    flat = numpy.lib.stride_tricks.as_strided(array, shape=(span,), strides=(array.itemsize,))
    shape = tuple(array.shape)
    layout = make_layout(shape, stride=strides)         # a 1-D tensor too has a rank-1 tuple: (5):(1)
    storage = Storage(flat, "gmem", element_type, root=layout)
    element_bytes = max(1, element_type.width // 8)
    if assumed_align is not None:
        if not isinstance(assumed_align, int) or assumed_align < 1 or assumed_align & (assumed_align - 1):
            raise CuteError(f"from_dlpack(assumed_align=...) must be a power of two in bytes, got {assumed_align!r}")
        if array.ctypes.data % assumed_align:
            raise CuteError(f"from_dlpack: assumed_align={assumed_align} promises an address that is a multiple of "
                            f"{assumed_align} bytes, but this tensor starts at {array.ctypes.data:#x}")
    storage.align_bytes = max(element_bytes, assumed_align or element_bytes)
    storage.use_32bit_stride = use_32bit_stride      # a stride marked dynamic is then ?, not ?{i64}
    return SimTensor(storage, layout)


def _host_array(tensor) -> numpy.ndarray:
    if isinstance(tensor, numpy.ndarray):
        return tensor
    if hasattr(tensor, "detach") and hasattr(tensor, "device"):
        if tensor.device.type != "cpu":
            raise CuteError(f"the simulator runs on the CPU: pass a CPU tensor (tensor.cpu()), not one on "
                            f"{tensor.device}")
        if str(tensor.dtype) == "torch.bfloat16":
            raise CuteError("the simulator cannot share a torch.bfloat16 tensor's memory (NumPy has no "
                            "bfloat16): use float16 or float32 on the CPU")
        return tensor.detach().numpy()
    raise CuteError(f"from_dlpack: expected a torch tensor or a NumPy array, got {type(tensor).__name__}")


_SIZES: dict = {}


def size(x, mode=()):
    """cute.size: a tensor's size is its layout's (remembered: a kernel asks it once per thread)."""
    layout = x.layout if isinstance(x, Tensor) else x
    if type(layout) is not Layout or type(mode) not in (list, tuple):
        return reference.size(layout, mode=mode)
    key = (layout, tuple(mode))
    try:
        return _SIZES[key]
    except KeyError:
        pass
    except TypeError:               # an unhashable mode
        return reference.size(layout, mode=mode)
    answer = reference.size(layout, mode=mode)
    if len(_SIZES) > 65536:
        _SIZES.clear()
    _SIZES[key] = answer
    return answer


def _divide_on_layout(algebra):
    """A divide of a simulator tensor is the tensor with its layout divided: asked of the layout, so the
    algebra's cache answers (a kernel divides the same view once per thread)."""
    def divide(target, tiler):
        if isinstance(target, SimTensor):
            return target.with_layout(algebra(target.layout, tiler))
        return algebra(target, tiler)
    functools.update_wrapper(divide, algebra)
    return divide


def make_fake_compact_tensor(*args, **kwargs):
    raise CuteError("fake tensors only describe shapes for compiling without a GPU; the simulator runs on "
                    "data: pass from_dlpack(a torch CPU tensor or NumPy array)")


def sym_int(*args, **kwargs):
    raise CuteError("cute.sym_int makes a symbolic size for compiling without data; the simulator runs on "
                    "real tensors, whose sizes are known")


def _host_argument(value):
    if isinstance(value, numpy.ndarray) or (hasattr(value, "detach") and hasattr(value, "device")):
        return from_dlpack(value)
    return value


# --------------------------------------------------------------------------------------------- jit, kernel

class Constexpr:
    """Marks a compile-time argument (`vector: cutlass.Constexpr = 4`); in the simulator, a plain value."""

    def __class_getitem__(cls, item):
        return cls


def const_expr(value):
    return value


def _range(*args, unroll=None, unroll_full=False, pipelining=None, prefetch_stages=None, **kwargs):
    return builtins.range(*args)


def _dsl_range(function):
    """CuTeDSL rewrites `range(n, unroll_full=True)` in jit code; the simulator gives the module of `function`
    a `range` that takes those keywords (and is Python's otherwise), unless the module has its own."""
    namespace = getattr(function, "__globals__", None)
    if isinstance(namespace, dict) and "range" not in namespace:
        namespace["range"] = _range


def jit(function=None, **options):
    """@cute.jit: host code (and device helpers called from kernels), run as plain Python; torch tensors
    and NumPy arrays passed to it become CuTe tensors, as CuTeDSL does."""
    if function is None:
        return lambda f: jit(f, **options)
    _dsl_range(function)
    source, checked = function, [False]
    function = wrap32.rewrite(function)             # its run-time ints compare as Int32 registers do
    function = dynamic.arguments_of(function)       # int arguments not marked Constexpr print `?` when traced

    @functools.wraps(function)
    def run_jit(*args, **kwargs):
        if not checked[0]:          # CuTeDSL refuses a `return` in a run-time `if` (...) when it compiles
            constexpr.refuse_control_flow(source)
            checked[0] = True
        with LEARNER_FRAMES:        # a kernel's failure reaches the learner without this frame
            if threads.current() is not None:       # a device helper called from a kernel
                return function(*args, **kwargs)
            args = tuple(_host_argument(a) for a in args)
            kwargs = {k: _host_argument(v) for k, v in kwargs.items()}
            with tracing.jit_call("call"):          # trace-time prints now, run-time output when it returns
                return function(*args, **kwargs)
    run_jit.__cute_sim__ = True
    run_jit.set_name_prefix = lambda prefix: None
    return run_jit


class Kernel:
    """@cute.kernel: `kernel(args...)` gives a launchable; `.launch(grid=[...], block=[...])` runs it."""

    def __init__(self, function):
        self.function = wrap32.rewrite(function)    # its run-time ints compare as Int32 registers do
        _dsl_range(function)
        self.signature = inspect.signature(function)
        functools.update_wrapper(self, function)

    def __get__(self, instance, owner=None):
        """A kernel defined in a class (`self.kernel(...)`) is bound to the instance, as a method is."""
        if instance is None:
            return self
        return functools.partial(self.__call__, instance)

    def set_name_prefix(self, prefix):
        """CuTeDSL names the compiled kernel; the simulator has nothing to name."""

    def __call__(self, *args, **kwargs):
        if threads.current() is not None:
            raise CuteError(f"{self.function.__name__}: a kernel cannot be launched from device code")
        constexpr.refuse_control_flow(self.function)    # once per function (cached): CuTeDSL's compile-time refusals
        try:
            bound = self.signature.bind(*args, **kwargs)
        except TypeError as error:
            raise CuteError(f"{self.function.__name__}{self.signature}: {error}") from None
        for name, value in bound.arguments.items():
            value = dynamic.argument(_host_argument(value), self.signature.parameters[name].annotation)
            value = numbers.for_kernel(value)      # a DSL float of host code: the kernel's plain value
            bound.arguments[name] = value.renamed(name) if isinstance(value, SimTensor) else value
        return Launchable(self, bound)


class Launchable:
    def __init__(self, kernel: Kernel, bound):
        self.kernel, self.bound = kernel, bound

    def launch(self, grid=(1, 1, 1), block=(1, 1, 1), smem=0, stream=None, cluster=None, **kwargs):
        compat.launch_options(stream=stream, cluster=cluster, **kwargs)
        function = self.kernel.function
        args, kwargs = self.bound.args, self.bound.kwargs     # worked out once, not once per thread

        def body():
            with numpy.errstate(all="ignore"):     # on a GPU exp(1000) is inf and 0 / 0 nan, without a word
                function(*args, **kwargs)
        with LEARNER_FRAMES:
            constexpr.check_kernel(function)        # what CuTeDSL refuses to compile, whichever threads run
        if tracing.tracing_only():      # cute.compile traces the host code; nothing runs
            return None
        with LEARNER_FRAMES, numpy.errstate(all="ignore"):
            if vector.wanted(threads._as_dim3(grid, "grid"), threads._as_dim3(block, "block")):
                report = vector.run(function.__name__, function, args, kwargs, grid, block, smem)
                if report is not None:      # else the kernel needs the thread-by-thread run
                    return report
            return scheduler.run(function.__name__, body, grid, block, smem)


def kernel(function=None, **options):
    if function is None:
        return lambda f: Kernel(f)
    return Kernel(function)


class _Compile:
    """cute.compile(function, *args): the function's host code runs once, as CuTeDSL's trace does (its Python
    prints appear, cute.printf prints nothing, no kernel is launched); calling the result runs it
    (machine/tracing.py). `cute.compile[options](...)` too."""

    def __call__(self, function, *args, options=None, **kwargs):
        with LEARNER_FRAMES, tracing.jit_call("trace"):
            function(*[_host_argument(a) for a in args], **{k: _host_argument(v) for k, v in kwargs.items()})
        return Compiled(function, args, kwargs)

    def __getitem__(self, options):
        kept = [getattr(o, "__name__", "") for o in (options if isinstance(options, tuple) else (options,))]
        kept = [name for name in kept if name in ("KeepPTX", "KeepCUBIN")]
        if kept:
            compat.notice("keep", f"cute.compile[{', '.join(kept)}]: the simulator compiles nothing, so nothing is "
                                  "kept; real CuTeDSL compiles for a GPU without one (cutekit.checks.compile_to_ptx)")
        return self


def _is_constexpr(annotation) -> bool:
    return annotation is Constexpr or (isinstance(annotation, str) and annotation.split(".")[-1].startswith(
        "Constexpr"))


class Compiled:
    """What `cute.compile` returns in the simulator: calling it runs the function (nothing is compiled).
    As in CuTeDSL, the call passes only the run-time arguments: the `cutlass.Constexpr` ones keep the values
    given to cute.compile (NVIDIA's tensorop_gemm compiles `bmm(gemm_op, a, b, c, stream, epilogue_op)` and
    calls it with `(a, b, c, stream)`)."""

    def __init__(self, function, args=(), kwargs=None):
        self.function = function
        self.parameters, self.constants = [], {}
        try:
            signature = inspect.signature(function)
            bound = signature.bind_partial(*args, **(kwargs or {}))
        except (TypeError, ValueError):
            return
        self.parameters = [p for p in signature.parameters.values()
                           if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        for parameter in self.parameters:
            if _is_constexpr(parameter.annotation):
                self.constants[parameter.name] = bound.arguments.get(parameter.name, parameter.default)

    def _arguments(self, args, kwargs):
        """The call's run-time arguments with the compile-time constants put back in their places."""
        if not self.constants or len(args) + len(kwargs) >= len(self.parameters):
            return args, kwargs
        given, full = list(args), []
        for parameter in self.parameters:
            if parameter.name in self.constants:
                full.append(self.constants[parameter.name])
            elif given:
                full.append(given.pop(0))
            elif parameter.name in kwargs:
                full.append(kwargs.pop(parameter.name))
            elif parameter.default is not parameter.empty:
                full.append(parameter.default)
            else:
                raise CuteError(f"the compiled {getattr(self.function, '__name__', 'function')} needs its run-time "
                                f"argument {parameter.name}")
        return tuple(full) + tuple(given), kwargs

    def __call__(self, *args, **kwargs):
        args, kwargs = self._arguments(args, dict(kwargs))
        first, self.called = not getattr(self, "called", False), True
        # the host's prints came while compiling; the kernels' come at the first call (none was traced then)
        with LEARNER_FRAMES, tracing.jit_call("run", kernel_prints=first):
            result = self.function(*args, **kwargs)
        return 0 if result is None else result      # a compiled CuTeDSL function returns its status, 0

    @property
    def __ptx__(self):
        raise CuteError("the simulator compiles nothing, so there is no PTX; compile with real CuTeDSL "
                        "(CUTE_DSL_ARCH=sm_80 works without a GPU: cutekit.checks.compile_to_ptx)")


compile = _Compile()  # noqa: A001 (CuTeDSL's name)


# --------------------------------------------------------------------------------------------- MMA fragments

def _descriptor(mma, input):
    """A wgmma or a tcgen05 MMA reads A and B from shared memory through matrix descriptors: the "fragment" of a
    shared-memory partition is that partition (CuTeDSL's descriptor tensor has the same k-block and stage modes)."""
    return (sm90.is_wgmma(mma) or sm100.is_tcgen05(mma)) and isinstance(input, SimTensor) and \
        input.storage.space == "smem"


def _fragment(tensor):
    """An MMA fragment made in a kernel: registers, which start as garbage (memory.garbage_registers)."""
    tensor = adopt(tensor)
    if threads.current() is not None and isinstance(tensor, SimTensor) and tensor.storage.array.dtype.kind == "f":
        tensor.storage.array[:] = numpy.nan
        tensor.storage.fresh = True
    return tensor


class SimMmaAtom(MmaAtom):
    def make_fragment_A(self, input):
        sm100.check_one_cta(self)
        if _descriptor(self, input):
            return input
        return _fragment(MmaAtom.make_fragment_A(self, input))

    def make_fragment_B(self, input):
        sm100.check_one_cta(self)
        if _descriptor(self, input):
            return input
        return _fragment(MmaAtom.make_fragment_B(self, input))

    def set(self, field_, value):
        """tiled_mma.set(warpgroup.Field.ACCUMULATE, b): whether the next wgmmas add to C (True) or overwrite.
        As in CuTeDSL, the field is a value of the atom held by each thread (set in a kernel, it changes that
        thread's atom only), false until set: make_mma_atom builds the wgmma atom with accumulate off."""
        if field_ != sm90.Field.ACCUMULATE and field_ is not reference.nvgpu.tcgen05.Field.ACCUMULATE:
            raise CuteError(f"tiled_mma.set: the simulator knows the field ACCUMULATE (warpgroup.Field, "
                            f"tcgen05.Field), got {field_!r}")
        sm90.set_accumulate(self, bool(value))

    def make_fragment_C(self, input):
        if sm100.is_tcgen05(self):      # an accumulator in TMEM: its layout, for the pointer retrieve_tmem_ptr gives
            return MmaAtom.make_fragment_C(self, input)
        return _fragment(MmaAtom.make_fragment_C(self, input))


class SimThrMma(ThrMma):
    make_fragment_A = SimMmaAtom.make_fragment_A
    make_fragment_B = SimMmaAtom.make_fragment_B
    make_fragment_C = SimMmaAtom.make_fragment_C
    set = SimMmaAtom.set


class SimTiledMma(TiledMma):
    make_fragment_A = SimMmaAtom.make_fragment_A
    make_fragment_B = SimMmaAtom.make_fragment_B
    make_fragment_C = SimMmaAtom.make_fragment_C
    set = SimMmaAtom.set

    def get_slice(self, thr_idx):
        thr_idx = thread_index(thr_idx, "tiled_mma.get_slice(thread index)")
        sliced = SimThrMma(*[getattr(self, f.name) for f in fields(TiledMma)], thr_idx)
        # CuTeDSL's slice shares the atom's trait: a field set on the TiledMMA later is the slice's too
        object.__setattr__(sliced, "_runtime_fields", sm90.runtime_fields(self))
        return sliced


def _retype(obj, cls):
    return cls(*[getattr(obj, f.name) for f in fields(obj)])


class SimTiledCopy(TiledCopy):
    """A TiledCopy whose get_slice takes only an integer thread index (a float or thread_idx()'s whole tuple
    is refused by name)."""

    def get_slice(self, thr_idx):
        return TiledCopy.get_slice(self, thread_index(thr_idx, "tiled_copy.get_slice(thread index)"))


def _tiled_copy_maker(make):
    def make_tiled_copy(*args, **kwargs):
        return _retype(make(*args, **kwargs), SimTiledCopy)
    functools.update_wrapper(make_tiled_copy, make)
    return make_tiled_copy


def local_partition(input, thr_layout, index, proj=None):
    """cute.local_partition: `index` must be an integer thread index."""
    return reference.local_partition(input, thr_layout,
                                     thread_index(index, "cute.local_partition(tensor, layout, index)"), proj)


def local_tile(input, tiler, coord, proj=None):
    """cute.local_tile: the tile coordinate's leaves must be integers (or None)."""
    return reference.local_tile(input, tiler, plain_coordinate(coord, "cute.local_tile(tensor, tiler, coord)"), proj)


def make_mma_atom(op):
    return _retype(_make_mma_atom(op), SimMmaAtom)


def make_tiled_mma(op_or_atom, atom_layout_mnk=(1, 1, 1), permutation_mnk=None):
    return _retype(_make_tiled_mma(op_or_atom, atom_layout_mnk, permutation_mnk), SimTiledMma)


# --------------------------------------------------------------------------------------------- math

def _elementwise(numpy_function):
    def apply(value, fastmath=False):
        if isinstance(value, TensorSSA):
            return TensorSSA(numpy_function(value.values).astype(value.values.dtype), value.shape,
                             value.element_type)
        return numpy_function(value)
    apply.__name__ = numpy_function.__name__
    return apply


_MATH = {name: _elementwise(getattr(numpy, name)) for name in
         ("exp", "exp2", "log", "log2", "log10", "sqrt", "sin", "cos", "tanh", "abs")}
_MATH["rsqrt"] = _elementwise(lambda x: 1 / numpy.sqrt(x))


def where(condition, a, b, *, loc=None, ip=None):
    pick = lambda v: v.values if isinstance(v, TensorSSA) else v  # noqa: E731
    like = next(v for v in (a, b, condition) if isinstance(v, TensorSSA))
    values = numpy.where(pick(condition), pick(a), pick(b)).astype(
        (a if isinstance(a, TensorSSA) else like).values.dtype)
    return TensorSSA(values, like.shape, like.element_type)


def full_like(value, fill_value, dtype=None):
    element_type = dtype or value.element_type
    return TensorSSA(numpy.full(value.values.shape if isinstance(value, TensorSSA) else reference.size(value),
                                fill_value, types.NUMPY_STORAGE[element_type]),
                     value.shape, element_type)


def zeros_like(value, dtype=None):
    return full_like(value, 0, dtype)


def print_tensor(tensor, *, verbose=False, **kwargs):
    """cute.print_tensor: the tensor's pointer, layout and data, printed when the code runs (memory/printing.py)."""
    tensor = adopt(tensor)
    if isinstance(tensor, TensorSSA):
        text = printing.value_data_text(tensor, verbose)
    elif isinstance(tensor, SimTensor):
        text = printing.tensor_data_text(tensor, verbose)
    elif isinstance(tensor, Tensor) and tensor.is_coordinate:
        text = printing.coordinate_data_text(tensor, verbose)
    else:
        raise CuteError(f"cute.print_tensor: expected a tensor or a tensor value, got {type(tensor).__name__}")
    tracing.emit(text)


# --------------------------------------------------------------------------------------------- modules

def _module(name: str, namespace: dict, package: bool = False) -> pytypes.ModuleType:
    module = pytypes.ModuleType(name, f"cutekit's CPU simulator standing in for `{name}` (CuTeDSL)")
    module.__dict__.update(namespace)
    module.__cutekit_sim__ = True
    if package:
        module.__path__ = []
    return module


def _annotation(name: str):
    return type(name, (), {"__doc__": f"cute.{name}: a type annotation (any value is accepted)"})


def _option(name: str):
    """A compile option (`cute.compile[cute.GenerateLineInfo(True)]`): accepted, nothing to compile."""
    return type(name, (), {"__init__": lambda self, *args, **kwargs: None,
                           "__doc__": f"cute.{name}: a compile option; the simulator compiles nothing"})


def create_cute_tensor_for_fp8(storage_tensor, dtype, leading_dim, source_f32_tensor=None, assumed_align=16,
                               mark_dynamic_layout=True):
    """cutlass.utils.tensor_helpers.create_cute_tensor_for_fp8: from_dlpack for the types the simulator has."""
    if compat.is_fp8_dtype(dtype):
        raise CuteError(f"the simulator has no {dtype} arithmetic (fp8): use Float16 or BFloat16 inputs")
    return from_dlpack(storage_tensor, assumed_align=assumed_align)


def build_modules() -> dict:
    """Fresh simulator modules, keyed by their import names."""
    numeric = {name: getattr(types, name) for name in
               ("Numeric", "Float16", "BFloat16", "Float32", "Float64", "Int8", "Int16", "Int32", "Int64",
                "Uint8", "Uint32", "Boolean", "TFloat32")}
    arch = _module("cutlass.cute.arch", {
        "thread_idx": device.thread_idx, "block_idx": device.block_idx, "block_dim": device.block_dim,
        "grid_dim": device.grid_dim, "lane_idx": device.lane_idx, "warp_idx": device.warp_idx,
        "sync_threads": device.sync_threads, "barrier": device.barrier, "sync_warp": device.sync_warp,
        "warp_reduction": device.warp_reduction, "warp_reduction_sum": device.warp_reduction_sum,
        "warp_reduction_max": device.warp_reduction_max, "shuffle_sync": device.shuffle_sync,
        "shuffle_sync_bfly": device.shuffle_sync_bfly, "shuffle_sync_down": device.shuffle_sync_down,
        "shuffle_sync_up": device.shuffle_sync_up, "vote_ballot_sync": device.vote_ballot_sync,
        "vote_any_sync": device.vote_any_sync, "vote_all_sync": device.vote_all_sync, "vote_uni_sync": device.vote_uni_sync,
        "WARP_SIZE": threads.WARP_SIZE,
        "fmax": max, "fmin": min, "exp": _MATH["exp"], "exp2": _MATH["exp2"], "rcp_approx": compat.rcp_approx,
        **{name: function for room in ROOMS for name, function in room.CUTE_ARCH.items()},    # sm_80's, sm_90's
        **numeric})
    reference_cpasync = reference.nvgpu.cpasync
    cpasync = _module("cutlass.cute.nvgpu.cpasync", {
        "CopyG2SOp": reference_cpasync.CopyG2SOp, "LoadCacheMode": reference_cpasync.LoadCacheMode,
        **{name: getattr(reference_cpasync, name) for name in
           ("CopyBulkTensorTileG2SOp", "CopyBulkTensorTileG2SMulticastOp", "CopyBulkTensorTileS2GOp",
            "make_tiled_tma_atom", "tma_partition")}})
    warp = _module("cutlass.cute.nvgpu.warp", {
        "LdMatrix8x8x16bOp": reference.nvgpu.warp.LdMatrix8x8x16bOp,
        "StMatrix8x8x16bOp": reference.nvgpu.warp.StMatrix8x8x16bOp,
        "MmaF16BF16Op": reference.nvgpu.warp.MmaF16BF16Op})
    reference_warpgroup = reference.nvgpu.warpgroup
    warpgroup = _module("cutlass.cute.nvgpu.warpgroup", {
        **{name: getattr(reference_warpgroup, name) for name in
           ("SmemLayoutAtomKind", "OperandSource", "OperandMajorMode", "make_smem_layout_atom", "MmaF16BF16Op")},
        **sm90.NVGPU_WARPGROUP})
    nvgpu = _module("cutlass.cute.nvgpu", {
        "CopyUniversalOp": reference.nvgpu.CopyUniversalOp, "MmaUniversalOp": reference.nvgpu.MmaUniversalOp,
        "cpasync": cpasync, "warp": warp, "warpgroup": warpgroup,
        "OperandMajorMode": reference_warpgroup.OperandMajorMode,
        "LoadCacheMode": reference.nvgpu.cpasync.LoadCacheMode}, package=True)
    runtime = _module("cutlass.cute.runtime", {"from_dlpack": from_dlpack,
                                                "make_fake_compact_tensor": make_fake_compact_tensor})
    math = _module("cutlass.cute.math", dict(_MATH))
    cute_names = {name: getattr(reference, name) for name in dir(reference) if not name.startswith("_")}
    for room in ("inttuple", "layout", "tensor", "atom", "typing", "not_in_cutedsl"):
        cute_names.pop(room, None)
    cute_names.update(numeric)
    cute_names.update({
        "arch": arch, "nvgpu": nvgpu, "runtime": runtime, "math": math,
        "kernel": kernel, "jit": jit, "compile": compile, "Tensor": Tensor, "TensorSSA": TensorSSA,
        "Layout": Layout, "ComposedLayout": ComposedLayout, "Pointer": Pointer,
        "Shape": _annotation("Shape"), "Stride": _annotation("Stride"), "Coord": _annotation("Coord"),
        "IntTuple": _annotation("IntTuple"), "Tile": _annotation("Tile"), "Tiler": _annotation("Tiler"),
        "copy": device.copy, "autovec_copy": device.autovec_copy, "basic_copy": device.autovec_copy, "gemm": device.gemm,
        "make_rmem_tensor": device.make_rmem_tensor, "make_rmem_tensor_like": device.make_rmem_tensor_like,
        "make_fragment_like": device.make_fragment_like, "elem_less": device.elem_less, "printf": device.printf,
        "ReductionOp": device.ReductionOp, "make_tensor": make_tensor, "make_mma_atom": make_mma_atom,
        "make_tiled_mma": make_tiled_mma, "local_partition": local_partition, "local_tile": local_tile,
        **{name: _tiled_copy_maker(getattr(reference, name)) for name in
           ("make_tiled_copy", "make_tiled_copy_tv", "make_tiled_copy_A", "make_tiled_copy_B", "make_tiled_copy_C")},
        "where": where, "full_like": full_like, "zeros_like": zeros_like,
        "print_tensor": print_tensor, "ceil_div": reference.ceil_div, "size": size,
        **{name: _divide_on_layout(getattr(reference, name))
           for name in ("logical_divide", "zipped_divide", "tiled_divide", "flat_divide")},
        "exp": _MATH["exp"], "sqrt": _MATH["sqrt"], "sym_int": sym_int,
    })
    compat.install()
    numbers.install()
    testing = _module("cutlass.cute.testing", {"JitArguments": compat.JitArguments,
                                               "benchmark": compat.benchmark})
    cute_names.update({"testing": testing, "domain_offset": compat.domain_offset, "struct": structs.struct,
                       "recast_ptr": structs.recast_ptr,
                       "GenerateLineInfo": _option("GenerateLineInfo"),
                       "ceil_div": compat.ceil_div, "product": compat.product,
                       "product_each": compat.product_each, "repeat_like": compat.repeat_like, "KeepPTX": _option("KeepPTX"),
                       "KeepCUBIN": _option("KeepCUBIN"), "AddressSpace": host.AddressSpace,
                       "slice_": host.slice_, "make_composed_layout": host.make_composed_layout,
                       "make_identity_layout": host.make_identity_layout})
    cute = _module("cutlass.cute", cute_names, package=True)
    utils = _module("cutlass.utils", {"SmemAllocator": structs.DeprecatedSmemAllocator, "LayoutEnum": compat.LayoutEnum,
                                      "get_smem_capacity_in_bytes": structs.smem_capacity_in_bytes},
                    package=True)
    memory = _module("cutlass.memory", {"SmemAllocator": structs.SmemAllocator,
                                        "get_smem_capacity_in_bytes": structs.smem_capacity_in_bytes})
    pipeline = _module("cutlass.pipeline", {"NamedBarrier": compat.NamedBarrier})
    for name in ("Agent", "CooperativeGroup", "PipelineAsync", "PipelineState", "PipelineUserType",
                 "make_pipeline_state", "PipelineProducer", "PipelineConsumer", "ImmutableResourceHandle"):
        setattr(pipeline, name, getattr(pipelines, name))
    for name in ("make_warp_uniform", "mbarrier_init", "mbarrier_init_fence", "mbarrier_arrive", "mbarrier_wait",
                 "mbarrier_try_wait", "mbarrier_test_wait", "mbarrier_arrive_and_expect_tx", "mbarrier_expect_tx"):
        setattr(arch, name, getattr(pipelines, name))
    tensor_helpers = _module("cutlass.utils.tensor_helpers", {
        "create_cute_tensor_for_fp8": create_cute_tensor_for_fp8, "is_fp8_dtype": compat.is_fp8_dtype})
    utils.tensor_helpers = tensor_helpers
    runtime.make_fake_stream = compat.make_fake_stream
    torch_module = _module("cutlass.torch", {"dtype": compat.torch_dtype,
                                             "current_stream": compat.current_stream})
    runtime.make_ptr = host.make_ptr
    runtime.AddressSpace = host.AddressSpace
    cuda = _module("cutlass.cuda", {"initialize_cuda_context": host.initialize_cuda_context})
    cutlass = _module("cutlass", {
        "cuda": cuda,
        "testing": testing, "pipeline": pipeline, "Float8E4M3FN": compat.Float8E4M3FN,
        "Float8E5M2": compat.Float8E5M2, "torch": torch_module, "dsl_user_op": compat.dsl_user_op,
        "dtype": compat.numeric_type,
        **numeric, "cute": cute, "utils": utils, "memory": memory, "Constexpr": Constexpr,
        "const_expr": constexpr.const_expr, "dynamic_expr": const_expr, "range": _range,
        "range_constexpr": constexpr.range_constexpr,
        "range_dynamic": _range, "min": builtins.min, "max": builtins.max, "CuteError": CuteError,
    }, package=True)
    blackwell = host.blackwell_modules(nvgpu, utils, cutlass, pipeline, memory,
                                       lambda tiled: _retype(tiled, SimTiledMma), lambda tiled: _retype(tiled, SimTiledCopy))
    return {**blackwell, "cutlass": cutlass, "cutlass.cuda": cuda, "cutlass.cute": cute, "cutlass.cute.arch": arch, "cutlass.cute.nvgpu": nvgpu,
            "cutlass.cute.nvgpu.cpasync": cpasync, "cutlass.cute.nvgpu.warp": warp,
            "cutlass.cute.nvgpu.warpgroup": warpgroup,
            "cutlass.cute.runtime": runtime, "cutlass.cute.math": math, "cutlass.utils": utils,
            "cutlass.memory": memory, "cutlass.cute.testing": testing, "cutlass.testing": testing,
            "cutlass.pipeline": pipeline, "cutlass.torch": torch_module,
            "cutlass.utils.tensor_helpers": tensor_helpers}
