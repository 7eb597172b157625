"""Host-side CuTeDSL the simulator provides for code from outside the course (NVIDIA's notebooks):
`cutlass.cuda`, `cute.runtime.make_ptr` and `cute.AddressSpace`, `cute.slice_` with CuTeDSL's argument order,
composed layouts whose inner part is a Python function, `cute.make_identity_layout`, and sm_100's host side
(`cute.nvgpu.tcgen05`, `cutlass.utils.blackwell_helpers`, `make_tiled_tma_atom_A/B`: blackwell_modules).
What has no meaning on a CPU (a CUDA context) is accepted and said once (compat.notice)."""
from __future__ import annotations

import ctypes
import enum

import numpy

from .. import cute as reference
from ..cute import typing as types
from ..cute.inttuple import CuteError
from ..cute.layout import ComposedLayout, Coord, Layout, Swizzle, cosize, make_layout
from ..cute.tensor import Tensor
from . import compat
from .machine.errors import KernelError
from .memory.tensors import SimTensor, Storage


class AddressSpace(enum.Enum):
    """cute.AddressSpace: where a pointer points (CuTeDSL's names and numbers)."""
    generic = 0
    gmem = 1
    smem = 3
    rmem = 5
    tmem = 6


_SPACE_OF = {AddressSpace.generic: "gmem", AddressSpace.gmem: "gmem", AddressSpace.smem: "smem",
             AddressSpace.rmem: "rmem"}


class RawPointer:
    """cute.runtime.make_ptr(dtype, address): a pointer to host memory given by its address (a torch CPU
    tensor's `data_ptr()`). How many elements it reaches is known when a tensor is made over it
    (`cute.make_tensor(ptr, layout)`: the layout's cosize)."""

    def __init__(self, dtype, address: int, space: AddressSpace, assumed_align=None):
        self.dtype, self.address, self.space = dtype, int(address), space
        self.assumed_align = assumed_align

    @property
    def element_type(self):
        return self.dtype

    @property
    def memspace(self):
        return self.space

    def __add__(self, k):
        return RawPointer(self.dtype, self.address + int(k) * max(1, self.dtype.width // 8), self.space,
                          self.assumed_align)

    def align(self, *args, **kwargs):
        return self

    def tensor(self, layout) -> SimTensor:
        """The tensor `layout` lays over the memory this pointer points at."""
        outer = layout.outer if isinstance(layout, ComposedLayout) else layout
        if not isinstance(outer, Layout):
            layout = outer = make_layout(layout)
        count = max(1, cosize(outer))
        storage_type = types.NUMPY_STORAGE[self.dtype]
        element_bytes = numpy.dtype(storage_type).itemsize
        buffer = (ctypes.c_char * (count * element_bytes)).from_address(self.address)
        array = numpy.frombuffer(buffer, dtype=storage_type, count=count)
        storage = Storage(array, _SPACE_OF.get(self.space, "gmem"), self.dtype)
        storage.align_bytes = self.assumed_align or max(1, self.dtype.width // 8)
        return SimTensor(storage, layout)

    def __str__(self):
        return f"ptr<{self.dtype.mlir_type}, {self.space.name}>"

    __repr__ = __str__


def make_ptr(dtype, value, mem_space=AddressSpace.generic, assumed_align=None):
    """cute.runtime.make_ptr: a pointer of element type `dtype` at host address `value`."""
    if not (isinstance(dtype, type) and issubclass(dtype, types.Numeric)):
        raise CuteError(f"make_ptr(dtype, address): dtype must be an element type such as cutlass.Float32, got "
                        f"{dtype!r}")
    if isinstance(value, ctypes._Pointer):
        value = ctypes.cast(value, ctypes.c_void_p).value
    if not isinstance(value, int) or value <= 0:
        raise CuteError(f"make_ptr(dtype, address): the address must be a positive int (tensor.data_ptr()), got "
                        f"{value!r}")
    return RawPointer(dtype, value, mem_space, assumed_align)


def slice_(src, coord):
    """cute.slice_(src, coord): the modes of a layout, tensor or tuple where `coord` is None (CuTeDSL's order
    of arguments: the sliced thing first)."""
    return reference.slice_(src, coord)


def initialize_cuda_context(*args, **kwargs):
    """cutlass.cuda.initialize_cuda_context: there is no CUDA context to make on the CPU."""
    compat.notice("cuda-context", "cutlass.cuda.initialize_cuda_context(): no CUDA context on the CPU; nothing "
                                  "to initialize (kernels run on the simulator)")


class FunctionComposedLayout:
    """`cute.make_composed_layout(inner, offset, outer)` with a Python function as `inner`: c ->
    inner(offset + outer(c)), the offset moved by what the outer layout gives (an identity layout's coordinate
    or an offset). Printed as CuTeDSL prints it: `(<function inner at 0x...> o (1, 0) o (8,4):(1@0,1@1))`."""

    def __init__(self, inner, offset, outer):
        self.inner, self.offset, self.outer = inner, offset, outer

    @property
    def shape(self):
        return self.outer.shape

    def __call__(self, coord):
        moved = self.outer(coord)
        if isinstance(moved, Coord):
            position = moved.added_to(self.offset) if isinstance(self.offset, tuple) else moved + self.offset
        else:
            position = self.offset + moved
        return self.inner(position)

    def __str__(self):
        return f"({self.inner!r} o {self.offset!r} o {self.outer})"

    __repr__ = __str__


def make_composed_layout(inner, offset, outer):
    """cute.make_composed_layout: a Python function as `inner` too (FunctionComposedLayout)."""
    if callable(inner) and not isinstance(inner, (Layout, ComposedLayout, Swizzle)):
        if not isinstance(outer, Layout):
            raise CuteError(f"make_composed_layout: outer must be a Layout, got {outer!r}")
        return FunctionComposedLayout(inner, offset, outer)
    return reference.make_composed_layout(inner, offset, outer)


def make_identity_layout(shape):
    """cute.make_identity_layout: the layout whose value at each coordinate is that coordinate,
    `(8,4):(1@0,1@1)`."""
    return reference.make_identity_tensor(shape).layout


class NotSimulated(KernelError, CuteError):
    """A CuTeDSL feature the simulator does not run (named, with what runs instead); it reaches the learner with
    their own frames only, as a kernel's failure does."""


def _not_simulated_module(name: str, what: str):
    import types as pytypes

    def refuse(attribute):
        if attribute.startswith("__"):
            raise AttributeError(attribute)
        raise NotSimulated(f"{name}.{attribute}: {what}")
    module = pytypes.ModuleType(name, f"cutekit's CPU simulator: {what}")
    module.__getattr__ = refuse
    module.__cutekit_sim__ = True
    return module


_BLACKWELL_REST = ("not simulated: the simulator runs sm_100's tcgen05 MMAs of CtaGroup.ONE with A and B in shared "
                   "memory, tensor memory, tcgen05.commit and the TMEM loads and stores (cutekit/sim/arch/sm100.py)")


def blackwell_modules(nvgpu, utils, cutlass, pipeline, memory, retype_tiled_mma, retype_tiled_copy) -> dict:
    """`cute.nvgpu.tcgen05`, `cutlass.utils.blackwell_helpers` and the rest of sm_100's host side, over cutekit's
    reference objects (cutekit.cute builds them as CuTeDSL 4.8.1 does), with the device calls of the Blackwell
    room (arch/sm100.py): tcgen05.commit, the TMEM allocator, the pipelines, `cutlass.experimental.primitives`'
    tcgen05_fence. A tiled MMA made by blackwell_helpers and a TMEM copy are the simulator's (`retype_...`)."""
    import types as pytypes

    from ..cute.nvgpu import tcgen05 as reference_tcgen05
    from ..cute.utils import blackwell_helpers as reference_helpers
    from .arch import sm100

    def module(name, namespace, package=False):
        made = _not_simulated_module(name, _BLACKWELL_REST)        # a name it lacks says so, by name
        made.__doc__ = f"cutekit's CPU simulator standing in for `{name}` (CuTeDSL)"
        made.__dict__.update(namespace)
        made.__cutekit_sim__ = True
        if package:
            made.__path__ = []
        return made

    def as_reference(tensor):
        """A TMEM tensor of a kernel (a pointer from retrieve_tmem_ptr) as the reference describes one."""
        if isinstance(tensor, SimTensor) and tensor.storage.space == "tmem":
            return Tensor(("tmem", tensor.storage.element_type, 0), tensor.layout)
        return tensor

    made_tmem_copies = {}

    def make_tmem_copy(atom, tmem_tensor):
        """Kept per (atom, element type, layout): every thread of an epilogue makes the same one (TiledCopy and its
        atom are frozen values)."""
        tensor = as_reference(tmem_tensor)
        key = (atom, getattr(tensor, "iterator", None), getattr(tensor, "layout", None))
        try:
            return made_tmem_copies[key]
        except (KeyError, TypeError):
            pass
        made = retype_tiled_copy(reference_tcgen05.make_tmem_copy(atom, tensor))
        try:
            if len(made_tmem_copies) > 4096:
                made_tmem_copies.clear()
            made_tmem_copies[key] = made
        except TypeError:           # an unhashable part: not kept
            pass
        return made

    def find_tmem_tensor_col_offset(tmem_tensor):
        return reference_tcgen05.find_tmem_tensor_col_offset(as_reference(tmem_tensor))

    tcgen05 = module("cutlass.cute.nvgpu.tcgen05", {
        **{name: getattr(reference_tcgen05, name) for name in reference_tcgen05.__all__},
        "OperandMajorMode": nvgpu.OperandMajorMode, "make_tmem_copy": make_tmem_copy,
        "find_tmem_tensor_col_offset": find_tmem_tensor_col_offset, **sm100.NVGPU_TCGEN05})
    helpers_names = {name: getattr(reference_helpers, name) for name in dir(reference_helpers)
                     if not name.startswith("_") and callable(getattr(reference_helpers, name))}

    def make_trivial_tiled_mma(*args, **kwargs):
        return retype_tiled_mma(reference_helpers.make_trivial_tiled_mma(*args, **kwargs))
    make_trivial_tiled_mma.__doc__ = reference_helpers.make_trivial_tiled_mma.__doc__
    helpers = module("cutlass.utils.blackwell_helpers", {**helpers_names,
                                                         "make_trivial_tiled_mma": make_trivial_tiled_mma})
    nvgpu.tcgen05, utils.blackwell_helpers = tcgen05, helpers
    nvgpu.make_tiled_tma_atom_A = reference.nvgpu.make_tiled_tma_atom_A
    nvgpu.make_tiled_tma_atom_B = reference.nvgpu.make_tiled_tma_atom_B
    nvgpu.cpasync.prefetch_descriptor = lambda *args, **kwargs: None
    utils.TmemAllocator = memory.TmemAllocator = sm100.TmemAllocator
    utils.get_num_tmem_alloc_cols = memory.get_num_tmem_alloc_cols = reference_helpers.get_num_tmem_alloc_cols
    for name, value in sm100.PIPELINES.items():
        setattr(pipeline, name, value)
    primitives = module("cutlass.experimental.primitives", dict(sm100.EXPERIMENTAL))
    experimental = module("cutlass.experimental", {"primitives": primitives}, package=True)
    cutlass.experimental = experimental
    return {"cutlass.cute.nvgpu.tcgen05": tcgen05, "cutlass.utils.blackwell_helpers": helpers,
            "cutlass.experimental": experimental, "cutlass.experimental.primitives": primitives}
