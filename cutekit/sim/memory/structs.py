"""Shared memory carved by hand, as CuTeDSL code from outside the course carves it: `@cute.struct` (with
`cute.struct.MemRange[T, n]` and `cute.struct.Align[..., bytes]`), `SmemAllocator().allocate(bytes | struct |
type)`, `cute.recast_ptr` and pointer swizzles.

One allocation is bytes; a view of it with an element type is a `Storage` over the same bytes (NumPy's
`array.view`), one per element type, so the fp16 tiles of a struct and the fp16 epilogue tile laid over them
read and write the same memory. Race and cp.async bookkeeping is kept per view: it sees two fp16 views of
the same bytes, not an fp16 write read back through an fp32 view.

Rules read off CuTeDSL 4.8.1 (cutlass/cute/core.py `struct`, cutlass/memory/smem.py `SmemAllocator`):
  - a member starts at the next multiple of its alignment: a scalar's is its size (or Align's, if larger),
    a MemRange's its element size (or Align's), a nested struct's its own; the struct's size is rounded up
    to its largest member alignment;
  - `allocate(n_bytes)` gives an Int8 shared-memory pointer; `allocate(struct)` the struct over a new
    allocation aligned to the struct's alignment; `allocate(Float32)` a pointer to one element;
  - a pointer's swizzle acts on the byte address (the PTX of `recast_ptr(p, make_swizzle(3, 4, 3),
    dtype=Float16)` XORs bits 7-9 of the byte address into bits 4-6), a ComposedLayout's on the element
    offset the layout computes.
"""

from dataclasses import dataclass

import numpy

from ...cute import typing as types
from ...cute.inttuple import CuteError
from ...cute.layout import ComposedLayout, Layout, Swizzle, _layout_of, cosize, make_layout
from ..machine import threads
from ..machine.threads import KernelError
from .tensors import SimTensor, Storage


# --------------------------------------------------------------------------------------------- pointer swizzles

@dataclass(frozen=True)
class PointerSwizzle(Swizzle):
    """A pointer's swizzle: CuTeDSL applies `in_bytes` to the byte address; the simulator applies the same
    permutation to element offsets (bits, base and shift are in elements) and prints the byte form."""
    in_bytes: Swizzle = None

    def __str__(self):
        return str(self.in_bytes)

    __repr__ = __str__


def _span(swizzle: Swizzle) -> int:
    """The block of addresses a swizzle permutes within: adding a multiple of it commutes with the swizzle."""
    return 1 << (swizzle.bits + swizzle.base + abs(swizzle.shift))


def pointer_swizzle(swizzle: Swizzle, storage: Storage) -> PointerSwizzle:
    """`swizzle` (on byte addresses) as the element swizzle of `storage`'s elements."""
    if isinstance(swizzle, PointerSwizzle):
        swizzle = swizzle.in_bytes
    if not isinstance(swizzle, Swizzle):
        raise CuteError(f"a pointer's swizzle is a cute.make_swizzle(b, m, s), got {swizzle!r}")
    element_bytes = storage.bytes_per_element
    shift = element_bytes.bit_length() - 1
    if element_bytes & (element_bytes - 1) or swizzle.base < shift:
        raise CuteError(f"pointer swizzle {swizzle} moves parts of one {element_bytes}-byte element; the "
                        f"simulator swizzles whole elements (its base M must be at least {shift})")
    if storage.byte_base % _span(swizzle):
        raise CuteError(f"pointer swizzle {swizzle}: the simulator applies it to offsets inside this "
                        f"allocation, which starts at shared byte {storage.byte_base}, not a multiple of "
                        f"{_span(swizzle)}; allocate it with byte_alignment={_span(swizzle)}")
    return PointerSwizzle(swizzle.bits, swizzle.base - shift, swizzle.shift, swizzle)


def check_layout_swizzle(layout, base: int):
    """A ComposedLayout's swizzle acts on the layout's own offsets; the simulator applies it to the pointer's
    offset inside the allocation plus those, which is the same when that offset is a multiple of its span."""
    if isinstance(layout, ComposedLayout) and isinstance(layout.inner, Swizzle) and \
            base % _span(layout.inner):
        raise CuteError(f"a tensor with the swizzled layout {layout} starts {base} elements into its "
                        f"allocation, not a multiple of the swizzle's {_span(layout.inner)}; the simulator "
                        f"cannot separate the two: align the buffer (cute.struct.Align[..., "
                        f"{_span(layout.inner)} * element bytes])")


# --------------------------------------------------------------------------------------------- views of bytes

def byte_root(storage: Storage) -> Storage:
    """The Int8 storage over `storage`'s bytes (itself for a raw allocation); its typed views share them."""
    root = getattr(storage, "byte_root", None)
    if root is not None:
        return root
    if storage.element_type is not None and storage.element_type.width == 8 and \
            storage.array.dtype == numpy.int8:
        storage.byte_root, storage.views = storage, {types.Int8: storage}
        return storage
    _viewable(storage.element_type)
    array = storage.array
    if not array.flags.c_contiguous:
        raise CuteError(f"{storage.describe()} is not one run of memory; its bytes cannot be viewed with "
                        f"another element type")
    root = Storage(array.view(numpy.int8), storage.space, types.Int8, storage.name, byte_base=storage.byte_base)
    root.align_bytes = storage.align_bytes
    root.byte_root, root.views = root, {types.Int8: root, storage.element_type: storage}
    storage.byte_root = root
    return root


def _viewable(element_type):
    if element_type is types.BFloat16:
        raise CuteError("the simulator keeps BFloat16 values as float32 (NumPy has no bfloat16), so it cannot "
                        "view memory's bytes as BFloat16: use Float16")
    if element_type is not None and getattr(element_type, "width", 8) % 8:
        raise CuteError(f"the simulator views memory in whole bytes; {element_type} is {element_type.width} bits")


def typed_view(root: Storage, element_type) -> Storage:
    """The storage of `root`'s bytes seen as `element_type` (made once per root and type)."""
    view = root.views.get(element_type)
    if view is not None:
        return view
    _viewable(element_type)
    width = max(1, element_type.width // 8)
    count = root.array.size // width
    array = root.array[:count * width].view(types.NUMPY_STORAGE[element_type])
    view = Storage(array, root.space, element_type, root.name, byte_base=root.byte_base)
    view.align_bytes = root.align_bytes
    view.byte_root = root
    root.views[element_type] = view
    return view


def recast_ptr(ptr, swizzle_=None, dtype=None):
    """cute.recast_ptr(ptr, swizzle, dtype=T): the same address seen as a pointer to `T` (and, with a
    swizzle, one whose addresses are swizzled)."""
    if not isinstance(ptr, Pointer):
        raise CuteError(f"cute.recast_ptr: expected a pointer (tensor.iterator, SmemAllocator().allocate(...)), "
                        f"got {type(ptr).__name__}")
    storage, base = ptr.storage, ptr.base
    if dtype is not None and dtype is not storage.element_type:
        if not (isinstance(dtype, type) and issubclass(dtype, types.Numeric)):
            raise CuteError(f"cute.recast_ptr: dtype must be an element type such as cutlass.Float16, got {dtype!r}")
        root = byte_root(storage)
        address = base * storage.bytes_per_element
        storage = typed_view(root, dtype)
        if address % storage.bytes_per_element:
            raise CuteError(f"cute.recast_ptr: byte {address} is not aligned for {dtype} "
                            f"({storage.bytes_per_element} bytes)")
        base = address // storage.bytes_per_element
    swizzle = ptr.swizzle
    if swizzle_ is not None:
        swizzle = pointer_swizzle(swizzle_, storage)
    elif swizzle is not None and dtype is not None:
        swizzle = pointer_swizzle(swizzle, storage)
    return Pointer(storage, base, swizzle)


def tensor_at(ptr, layout, name: str | None = None) -> SimTensor:
    """cute.make_tensor(ptr, layout) for a simulator pointer."""
    if isinstance(layout, ComposedLayout) and ptr.swizzle is not None:
        raise CuteError(f"a tensor cannot have both a swizzled pointer ({ptr.swizzle}) and a swizzled layout "
                        f"({layout}) (CuTeDSL: \"incompatible layout with swizzle\")")
    if not isinstance(layout, (Layout, ComposedLayout)):
        layout = make_layout(layout)
    check_layout_swizzle(layout, ptr.base)
    return SimTensor(ptr.storage, layout, ptr.base, ptr.swizzle, name)


# --------------------------------------------------------------------------------------------- cute.struct

def _is_scalar_type(dtype) -> bool:
    return isinstance(dtype, type) and issubclass(dtype, types.Numeric)


def _width(dtype) -> int:
    return dtype.width if dtype is not types.Boolean else 8


class struct:  # noqa: N801 (CuTeDSL's name)
    """@cute.struct: a C struct laid over shared memory; members are element types, MemRange[T, n] arrays,
    other structs, each optionally Align[member, bytes].

    >>> import cutekit.cute as cute
    >>> @struct
    ... class Storage:
    ...     flag: cute.Int32
    ...     tile: struct.Align[struct.MemRange[cute.Float16, 100], 16]
    >>> Storage._offsets, Storage.size_in_bytes(), Storage.__alignof__()
    ({'flag': 0, 'tile': 16}, 224, 16)
    """

    class _MemRangeMeta(type):
        _dtype = None
        _size = None

        def __getitem__(cls, params):
            if not isinstance(params, tuple) or len(params) != 2:
                raise TypeError("Invalid struct.MemRange Arguments")
            dtype, size = params
            if not _is_scalar_type(dtype):
                raise TypeError("MemRange only support dsl scalar type!")
            return type(f"struct.MemRange[{dtype.__name__}, {size}]", (struct.MemRange,),
                        {"_dtype": dtype, "_size": int(size)})

        @property
        def size(cls):
            return cls._size

        @property
        def elem_width(cls):
            return _width(cls._dtype)

        @property
        def size_in_bytes(cls):
            return cls._size * cls.elem_width // 8

    class MemRange(metaclass=_MemRangeMeta):
        """MemRange[T, n]: n elements of T, one after another."""

    class _AlignMeta(type):
        _dtype = None
        _align = None

        def __getitem__(cls, params):
            if not isinstance(params, tuple) or len(params) != 2:
                raise TypeError("Invalid struct.Align Arguments")
            dtype, align = params
            if not align > 0:
                raise CuteError(f"struct.Align[..., {align}]: an alignment is a positive power of two")
            if not _is_scalar_type(dtype) and not isinstance(dtype, (struct, struct._MemRangeMeta)):
                raise TypeError("align only can be applied to struct/MemRange/base_dsl scalar")
            return type(f"struct.Align[{getattr(dtype, '__name__', dtype)}, {align}]", (struct.Align,),
                        {"_dtype": dtype, "_align": int(align)})

        @property
        def dtype(cls):
            return cls._dtype

        @property
        def align(cls):
            return cls._align

    class Align(metaclass=_AlignMeta):
        """Align[member, bytes]: the member starts at a multiple of `bytes`."""

    class _MemRangeData:
        """A MemRange member of a struct instance: `get_tensor(layout)`, `data_ptr()`, `[i]`."""

        def __init__(self, dtype, size, base, name=None):
            self._dtype, self._size, self._base, self._name = dtype, size, base, name

        def data_ptr(self):
            return recast_ptr(self._base, dtype=self._dtype)

        def get_tensor(self, layout, swizzle=None, dtype=None):
            if isinstance(layout, ComposedLayout) and swizzle is not None:
                raise TypeError("incompatible layout with swizzle")
            if not isinstance(layout, (Layout, ComposedLayout)):
                layout = make_layout(layout)
            ptr = recast_ptr(self._base, swizzle, dtype=self._dtype if dtype is None else dtype)
            return tensor_at(ptr, layout, self._name)

        def _element(self, index):
            if not 0 <= index < self._size:
                raise CuteError(f"{self._name or 'struct.MemRange'}[{index}]: outside its {self._size} elements")
            return tensor_at(self.data_ptr(), make_layout(self._size), self._name)

        def __getitem__(self, index):
            return self._element(index)[index]

        def __setitem__(self, index, value):
            self._element(index)[index] = value

        def __repr__(self):
            return f"<struct.MemRange[{self._dtype}, {self._size}]> <data_ptr = {self.data_ptr()}>"

    class _ScalarData:
        """A scalar member of a struct instance: `.ptr` is its pointer."""

        def __init__(self, ptr):
            self._ptr = ptr

        @property
        def ptr(self):
            return self._ptr

        @property
        def dtype(self):
            return self._ptr.storage.element_type

        def __repr__(self):
            return f"<{self.dtype}> <ptr = {self._ptr}>"

    def __init__(self, cls):
        self._cls = cls
        self.__name__ = f"cute.struct::{cls.__name__}"
        self._annotations = dict(getattr(cls, "__annotations__", {}))
        self._offsets = {}
        if not self._annotations:
            raise TypeError("Empty struct is not supported!")

        def struct_setattr(instance, name, value):
            attr = getattr(instance, name, None)
            if not isinstance(attr, struct._ScalarData):
                raise ValueError(f"cannot assign value to `{name}` in {instance.__name__}")
            attr.ptr.store(value)

        type.__setattr__(cls, "__setattr__", struct_setattr)
        offset, alignment = 0, 1
        for name, member in self._annotations.items():
            sub_align = 1
            if isinstance(member, struct._AlignMeta):
                sub_align, member = member.align, member.dtype
            if _is_scalar_type(member):
                size = max(1, member.width // 8)
                sub_align = max(size, sub_align)
            elif isinstance(member, struct._MemRangeMeta):
                size = member.size_in_bytes
                sub_align = max(member.elem_width // 8, sub_align)
            elif isinstance(member, struct):
                size = member.__sizeof__()
                sub_align = max(member.__alignof__(), sub_align)
            else:
                raise TypeError(f"Struct element only support struct/array/base_dsl scalar, but got {member}")
            offset = self.align_offset(offset, sub_align)
            self._offsets[name] = offset
            offset += size
            alignment = max(alignment, sub_align)
        self._align_of = alignment
        self._size_of = self.align_offset(offset, alignment)

    def __call__(self, base):
        """The struct laid over the bytes at `base` (an Int8 pointer: SmemAllocator().allocate(n))."""
        if not isinstance(base, Pointer) or base.storage.bytes_per_element != 1:
            raise TypeError("struct base ptr value type must be byte sized.")
        instance = self._cls()
        object.__setattr__(instance, "base", base)
        object.__setattr__(instance, "__name__", self.__name__)
        for name, offset in self._offsets.items():
            member = self._annotations[name]
            if isinstance(member, struct._AlignMeta):
                member = member.dtype
            if _is_scalar_type(member):
                value = struct._ScalarData(recast_ptr(base + offset, dtype=member))
            elif isinstance(member, struct._MemRangeMeta):
                value = struct._MemRangeData(member._dtype, member._size, base + offset,
                                             f"{self._cls.__name__}.{name}")
            else:
                value = member(base + offset)
            object.__setattr__(instance, name, value)
        return instance

    def size_in_bytes(self) -> int:
        return self._size_of

    def __sizeof__(self) -> int:
        return self._size_of

    def __alignof__(self) -> int:
        return self._align_of

    @staticmethod
    def align_offset(offset: int, align: int) -> int:
        if align <= 0 or align & (align - 1):
            raise CuteError(f"struct: alignment {align} is not a positive power of two")
        return (offset + align - 1) & ~(align - 1)


# --------------------------------------------------------------------------------------------- allocation

def allocate(thread, size_or_type, byte_alignment: int = 1):
    """SmemAllocator().allocate(n_bytes | struct | element type), as CuTeDSL gives it."""
    if not isinstance(byte_alignment, int) or byte_alignment < 1:
        raise CuteError("`byte_alignment` must be at least 1")
    if isinstance(size_or_type, struct):
        ptr = _raw(thread, size_or_type.__sizeof__(), max(byte_alignment, size_or_type.__alignof__()),
                   _shared_storage, Pointer)
        return size_or_type(ptr)
    if _is_scalar_type(size_or_type):
        ptr = _raw(thread, max(1, -(-_width(size_or_type) // 8)), byte_alignment, _shared_storage, Pointer)
        return recast_ptr(ptr, dtype=size_or_type)
    if isinstance(size_or_type, (int, numpy.integer)) and not isinstance(size_or_type, bool):
        if size_or_type < 0:
            raise CuteError("size must be non-negative")
        return _raw(thread, int(size_or_type), byte_alignment, _shared_storage, Pointer)
    raise TypeError(f"Expected int, struct, or numeric type, but got {type(size_or_type)}")


def _raw(thread, nbytes: int, alignment: int, shared_storage, Pointer):
    before = len(thread.block.shared)
    storage = shared_storage(thread, types.Int8, max(1, nbytes), alignment)
    if len(thread.block.shared) > before:
        storage.array[:] = -1           # garbage: every byte 0xFF, so a float view reads NaN before a write
    storage.align_bytes = alignment
    byte_root(storage)
    return Pointer(storage, 0)


# --------------------------------------------------------------------------------------------- pointers

class Pointer:
    """`tensor.iterator`: where a tensor starts (a storage and an element offset)."""

    def __init__(self, storage: Storage, base: int = 0, swizzle=None):
        self.storage, self.base, self.swizzle = storage, base, swizzle

    @property
    def element_type(self):
        return self.storage.element_type

    @property
    def memspace(self):
        return self.storage.space

    def __add__(self, k):
        return Pointer(self.storage, self.base + k, self.swizzle)

    def align(self, bytes_, *args, **kwargs):
        """ptr.align(n): a promise that the address is a multiple of n bytes (copies check their alignment
        when they run); the same pointer."""
        return self

    @property
    def dtype(self):
        return self.storage.element_type

    def load(self):
        """The element the pointer points at."""
        return tensor_at(self, make_layout(1))[0]

    def store(self, value):
        """Write one element where the pointer points."""
        tensor_at(self, make_layout(1))[0] = value

    def __str__(self):
        return f"ptr<{self.storage.element_type.mlir_type}, {self.storage.space}>+{self.base}"

    __repr__ = __str__


# --------------------------------------------------------------------------------------------- the block's shared memory

def _element_type(dtype):
    if isinstance(dtype, type) and issubclass(dtype, types.Numeric):
        return dtype
    raise CuteError(f"expected an element type such as cutlass.Float32, got {dtype!r}")


class SmemAllocator:
    """cutlass.memory.SmemAllocator: carve the block's shared memory. The k-th allocation a thread makes is
    the same memory as every other thread's k-th allocation (that is what makes it shared)."""

    def __init__(self, *args, **kwargs):
        pass

    @staticmethod
    def capacity_in_bytes(compute_capability=None):
        return smem_capacity_in_bytes(compute_capability)

    def allocate(self, size_or_type, byte_alignment: int = 1, **kwargs):
        """`allocate(n)`: an Int8 pointer to n bytes; `allocate(struct)`: the cute.struct over a new
        allocation; `allocate(Float32)`: a pointer to one element (structs.allocate)."""
        return allocate(threads.require_thread("SmemAllocator.allocate"), size_or_type, byte_alignment)

    def allocate_tensor(self, element_type, layout, byte_alignment: int = 16, swizzle=None):
        thread = threads.require_thread("SmemAllocator.allocate_tensor")
        element_type = _element_type(element_type)
        outer = layout.outer if isinstance(layout, ComposedLayout) else _layout_of(layout)
        count = cosize(outer)
        if isinstance(layout, ComposedLayout) and hasattr(layout.inner, "bits"):
            span = 1 << (layout.inner.bits + layout.inner.base + max(0, layout.inner.shift))
            count = -(-count // span) * span
        storage = _shared_storage(thread, element_type, count, byte_alignment)
        storage.align_bytes = byte_alignment
        tensor = SimTensor(storage, layout)
        if swizzle is not None:
            tensor = SimTensor(storage, layout, 0, swizzle)
        return tensor

    def allocate_array(self, element_type, num_elems: int = 1, byte_alignment: int = 16):
        thread = threads.require_thread("SmemAllocator.allocate_array")
        storage = _shared_storage(thread, _element_type(element_type), num_elems, byte_alignment)
        storage.align_bytes = byte_alignment
        return Pointer(storage, 0)      # CuTeDSL gives a pointer to the first element


# CuTeDSL 4.8.1 moved the allocator to cutlass.memory; the old name still works and warns on every construction
# (typing_extensions.deprecated on cutlass/utils/smem_allocator.py's subclass), with this message.
SMEM_ALLOCATOR_MOVED = ("cutlass.utils.smem_allocator.SmemAllocator is deprecated; use cutlass.memory.SmemAllocator "
                        "instead. It will be removed in a future release.")


class DeprecatedSmemAllocator(SmemAllocator):
    """cutlass.utils.SmemAllocator: the same allocator, with CuTeDSL's DeprecationWarning."""

    def __new__(cls, *args, **kwargs):
        import warnings
        warnings.warn(SMEM_ALLOCATOR_MOVED, DeprecationWarning, stacklevel=2)
        return super().__new__(cls)

    @staticmethod
    def capacity_in_bytes(compute_capability=None):
        import warnings
        warnings.warn("cutlass.utils.smem_allocator.SmemAllocator.capacity_in_bytes is deprecated; use "
                      "cutlass.memory.SmemAllocator.capacity_in_bytes instead. It will be removed in a future "
                      "release.", DeprecationWarning, stacklevel=2)
        return SmemAllocator.capacity_in_bytes(compute_capability)


DeprecatedSmemAllocator.__name__ = DeprecatedSmemAllocator.__qualname__ = "SmemAllocator"


def _shared_storage(thread, element_type, count: int, alignment: int) -> Storage:
    block = thread.block
    k = thread.shared_count
    thread.shared_count += 1
    if k < len(block.shared):
        storage = block.shared[k]
        if storage.array.size != count or storage.element_type is not element_type:
            raise KernelError(f"shared allocation {k} differs between threads ({storage.array.size} x "
                              f"{storage.element_type} vs {count} x {element_type}); every thread must make "
                              f"the same SmemAllocator calls in the same order")
        return storage
    start = -(-block.shared_bytes // alignment) * alignment
    nbytes = count * max(1, element_type.width // 8)
    if start + nbytes > block.launch.smem_limit:
        raise KernelError(f"shared memory: {start + nbytes} bytes requested, more than the "
                          f"{block.launch.smem_limit} a block can have")
    storage = Storage(numpy.zeros(count, types.NUMPY_STORAGE[element_type]), "smem", element_type,
                      name=f"shared allocation {k}", byte_base=start)
    # shared memory starts as garbage on a GPU: NaN for floats makes a read before any write visible
    if storage.array.dtype.kind == "f":
        storage.array[:] = numpy.nan
    block.shared_bytes = start + nbytes
    block.shared.append(storage)
    return storage


_SMEM_CAPACITY = {"sm_80": (164 - 1) * 1024, "sm_86": (100 - 1) * 1024, "sm_87": (164 - 1) * 1024,
                  "sm_89": (100 - 1) * 1024, "sm_90": (228 - 1) * 1024, "sm_100": (228 - 1) * 1024,
                  "sm_120": (100 - 1) * 1024}


def smem_capacity_in_bytes(compute_capability=None):
    """cutlass.utils.get_smem_capacity_in_bytes: a block's shared memory on that architecture (CuTeDSL
    4.8.1's SMEM_CAPACITY_MAP); without one, the simulator's own limit (an sm_80's)."""
    if compute_capability is None:
        return threads.SHARED_MEMORY_LIMIT
    if compute_capability not in _SMEM_CAPACITY:
        raise CuteError(f"Unsupported compute capability: {compute_capability}")
    return _SMEM_CAPACITY[compute_capability]
