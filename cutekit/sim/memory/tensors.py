"""Memory and tensors of the simulated GPU.

A `Storage` is one allocation: global (a torch CPU tensor's or NumPy array's own memory, shared, so a
kernel's writes are seen by the caller), shared (one per SmemAllocator call, shared by a block's threads)
or registers (per thread). A `SimTensor` is CuTe's tensor over it: `storage[swizzle(base + layout(c))]`,
with the layout algebra of `cutekit.cute` (a swizzle, when there is one, is applied to the final offset,
so every partition works on the plain layout, as CuTe's ComposedLayout does).

Every access is checked against the storage (out of bounds names the tensor and coordinate), shared
accesses are checked for races and counted for bank conflicts, and, when tracing, recorded.
"""
from __future__ import annotations

import functools
import itertools
import sys

import numpy

from ...cute import typing as types
from ...cute.inttuple import CuteError, crd2idx, flatten, fmt, fmt_coord, is_int, is_tuple, plain, product
from ...cute.layout import (ComposedLayout, Layout, Swizzle, _has_none, _zero_none, make_layout, size, slice_,
                           slice_offset)
from ...cute.tensor import Tensor
from ..machine import threads, tracing
from ..machine.failures import plain_coordinate
from ..machine.threads import _OWN_CODE, OutOfBoundsError, RaceError
from .lanes import NotVectorizable, lanes

_SPACE_NAMES = {"gmem": "global", "smem": "shared", "rmem": "register"}


_SCALAR_FORMATS = {"f", "d", "b", "B", "h", "H", "i", "I", "l", "L", "q", "Q", "?"}


def _scalar_view(array: numpy.ndarray):
    """A memoryview of a flat array whose elements it reads as the same Python values as `.item()` (None
    when it cannot: not one contiguous dimension, or an element type it does not know)."""
    if array.ndim != 1 or not array.flags.c_contiguous or array.dtype.kind not in "fiub" or \
            not array.dtype.isnative:
        return None
    try:
        view = memoryview(array)
    except (TypeError, ValueError, BufferError):
        return None
    return view if view.format in _SCALAR_FORMATS else None


class Storage:
    """One allocation: a flat NumPy array plus what the checks need to know about it."""
    _counter = itertools.count()

    def __init__(self, array: numpy.ndarray, space: str, element_type, name: str | None = None,
                 root: Layout | None = None, byte_base: int = 0):
        self.array = array
        self.space = space
        self.element_type = element_type
        self.name = name
        self.root = root                    # the layout it was created with (global: shape and strides)
        self.byte_base = byte_base          # shared memory: where it starts in the block's shared memory
        self.align_bytes = None             # the alignment the compiler may assume (from_dlpack's assumed_align)
        self.bytes_per_element = array.dtype.itemsize if element_type is None else max(1, element_type.width // 8)
        self.values = _scalar_view(array) if space != "rmem" else None   # one element read as a Python value
        if space == "gmem" and array.dtype.kind in "iu" and array.dtype.itemsize == 8:
            self.values = None      # a 64-bit integer is read as NumPy's: wrap32.py leaves it 64-bit
        self.wgmma_busy = 0                 # registers: wgmma groups in flight that write them (arch/sm90.py)
        self.generic_stamp = None           # registers: the thread's wgmma fence count at the last ordinary write
        self.fresh = False                  # registers: made with garbage (NaN) and never written since
        self.wgmma_used = False             # registers: a wgmma's accumulators (element writes are checked)
        if space == "smem":
            self.writer = numpy.full(array.size, -1, numpy.int32)
            self.write_epoch = numpy.full(array.size, -1, numpy.int64)
            self.reader = numpy.full(array.size, -1, numpy.int32)
            self.read_epoch = numpy.full(array.size, -1, numpy.int64)
            self.in_flight = numpy.zeros(array.size, numpy.int16)
            # the same bookkeeping seen as memoryviews: one element read or written by Python at a time
            # (scalar_access) costs a fraction of NumPy's scalar indexing; the arrays stay the truth
            self._scalar_views = (memoryview(self.writer), memoryview(self.write_epoch),
                                  memoryview(self.reader), memoryview(self.read_epoch),
                                  memoryview(self.in_flight))

    def scalar_access(self, address: int, thread, writing: bool) -> bool:
        """A shared-memory element read or written by `thread`: do the race bookkeeping and count it for
        bank conflicts, and answer True; answer False, changing nothing, when the access races or reads
        what a cp.async copy has not finished writing (`read`/`write` then say so, with their messages)."""
        writer, write_epoch, reader, read_epoch, in_flight = self._scalar_views
        if not writing and in_flight[address]:
            return False
        me, block = thread.linear, thread.block
        if threads.SETTINGS.races != "off":
            epoch = block.epoch
            if write_epoch[address] == epoch and writer[address] != me:
                return False
            if writing:
                if read_epoch[address] == epoch and reader[address] != me:
                    return False
                writer[address] = me
                write_epoch[address] = epoch
            elif read_epoch[address] != epoch:
                reader[address] = me
                read_epoch[address] = epoch
            elif reader[address] != me:
                reader[address] = -2
        # threads.record_shared_request, written out; the kernel line is most often __getitem__'s caller
        frame = sys._getframe(2)
        code = frame.f_code
        site = (code.co_filename, frame.f_lineno) if _OWN_CODE.get(code) is False else threads.user_site(3)
        counts = thread.access_counts
        k = counts.get(site, 0)
        counts[site] = k + 1
        width = self.bytes_per_element
        key = (me >> 5, site, k, width)
        lanes = block.requests.get(key)
        if lanes is None:
            block.requests[key] = [(me & 31, [self.byte_base + address * width])]
        else:
            lanes.append((me & 31, [self.byte_base + address * width]))
        return True

    def describe(self) -> str:
        what = f"{_SPACE_NAMES[self.space]} tensor"
        if self.name:
            what += f" {self.name}"
        if self.root is not None and self.space == "gmem":
            what += f" (shape {fmt(self.root.shape)}, {self.array.size} elements)"
        else:
            what += f" ({self.array.size} elements)"
        return what

    def root_coordinate(self, offset: int):
        """The coordinate of the original tensor at a storage offset (global tensors; None if none)."""
        if self.root is None or not 0 <= offset < self.array.size:
            return None
        shapes, strides = flatten(self.root.shape), flatten(self.root.stride)
        order = sorted(range(len(shapes)), key=lambda i: -strides[i] if is_int(strides[i]) else 0)
        coordinate, rest = [0] * len(shapes), offset
        for i in order:
            if strides[i]:
                coordinate[i], rest = divmod(rest, strides[i])
        if rest:
            return None
        return tuple(coordinate) if len(coordinate) > 1 else coordinate[0]


# --------------------------------------------------------------------------------------------- offsets

@functools.lru_cache(maxsize=65536)
def offsets(layout: Layout) -> numpy.ndarray:
    """layout(i) for every index i, as an int64 array (cached: a kernel's layouts repeat per thread)."""
    shapes, strides = flatten(layout.shape), flatten(layout.stride)
    index = numpy.arange(product(layout.shape), dtype=numpy.int64)
    result = numpy.zeros_like(index)
    step = 1
    for extent, stride in zip(shapes, strides):
        if not is_int(stride):
            raise CuteError(f"a tensor of coordinates ({layout}) has no memory offsets")
        result += (index // step) % extent * stride
        step *= extent
    result.setflags(write=False)
    return result


@functools.lru_cache(maxsize=65536)
def offset_function(layout: Layout):
    """`layout(coord)` for the common case of element access, an in-range int or tuple of ints (one per
    top-level mode), as a small function made for this layout; it answers None for anything else (the
    general algebra then answers, or names the error). None when a stride is not an int (a coordinate
    layout). Agrees with `Layout.__call__` wherever it answers (tests/sim/test_fast_paths.py)."""
    shape, stride = plain(layout.shape), plain(layout.stride)    # a run-time (Dynamic) extent: its value
    modes = []
    for mode_shape, mode_stride in (zip(shape, stride) if is_tuple(shape) else [(shape, stride)]):
        leaves = tuple(zip(flatten(mode_shape), flatten(mode_stride)))
        if any(type(extent) is not int or type(step) is not int for extent, step in leaves):
            return None
        modes.append((product(mode_shape), leaves))
    every_leaf = tuple(leaf for _, leaves in modes for leaf in leaves)
    total, rank_ = product(shape), (len(shape) if is_tuple(shape) else None)

    def of_index(coord):                # an int unfolds column-major over every leaf
        offset = 0
        for extent, step in every_leaf:
            offset += coord % extent * step
            coord //= extent
        return offset

    if rank_ is None:
        (_, ((_, step),)), = modes

        def offset_1d(coord):
            return coord * step if type(coord) is int and 0 <= coord < total else None
        return offset_1d
    if rank_ == 2 and all(len(leaves) == 1 for _, leaves in modes):
        (rows, ((_, row_step),)), (cols, ((_, col_step),)) = modes

        def offset_2d(coord):
            if type(coord) is tuple:
                if len(coord) == 2:
                    i, j = coord
                    if type(i) is int and type(j) is int and 0 <= i < rows and 0 <= j < cols:
                        return i * row_step + j * col_step
                return None
            return of_index(coord) if type(coord) is int and 0 <= coord < total else None
        return offset_2d

    def offset_nd(coord):
        if type(coord) is int:
            return of_index(coord) if 0 <= coord < total else None
        if type(coord) is not tuple or len(coord) != rank_:
            return None
        offset = 0
        for c, (mode_size, leaves) in zip(coord, modes):
            if type(c) is not int or not 0 <= c < mode_size:
                return None
            for extent, step in leaves:
                offset += c % extent * step
                c //= extent
        return offset
    return offset_nd


@functools.lru_cache(maxsize=65536)
def offsets_and_range(layout: Layout) -> tuple:
    """(offsets(layout), smallest, largest): a bounds check of a whole view without touching every address."""
    values = offsets(layout)
    return values, int(values.min()), int(values.max())


_SLICES: dict = {}     # (layout, coordinate with Nones) -> _slice's answer


@functools.lru_cache(maxsize=65536)
def _slice(layout: Layout, coord) -> tuple:
    """(the kept layout, the offset moved by or the CuteError saying why not) of `tensor[coord]` with
    Nones in coord; the slicing errors are the algebra's own."""
    kept = slice_(coord, layout)
    try:
        return kept, slice_offset(coord, layout)
    except CuteError as error:
        return kept, error


def _apply_swizzle(swizzle: Swizzle | None, values):
    if swizzle is None:
        return values
    if isinstance(values, numpy.ndarray):
        yyy = ((1 << swizzle.bits) - 1) << (swizzle.base + max(0, swizzle.shift))
        return values ^ ((values & yyy) >> swizzle.shift)
    return swizzle(values)


# --------------------------------------------------------------------------------------------- tensors

class SimTensor(Tensor):
    """A tensor of the simulated GPU: `storage[swizzle(base + layout(coordinate))]`."""

    def __init__(self, storage: Storage, layout, base: int = 0, swizzle: Swizzle | None = None,
                 name: str | None = None):
        if isinstance(layout, ComposedLayout):
            swizzle, base, layout = layout.inner, base + layout.offset, layout.outer
        super().__init__(("memory", storage.array, base), layout, name or storage.name)
        self.storage = storage
        self.base = base
        self.swizzle = swizzle
        self._offset_of = False         # offset_function(layout), worked out at the first element access

    outside = None                      # OutsideView: why an access through this view is refused

    # ---- the reference algebra builds new views through these two
    def with_layout(self, layout) -> "SimTensor":
        return SimTensor(self.storage, layout, self.base, self.swizzle, self.name)

    def renamed(self, name: str) -> "SimTensor":
        if self.storage.name is None:
            self.storage.name = name
        return SimTensor(self.storage, self.layout, self.base, self.swizzle, name)

    @property
    def element_type(self):
        return self.storage.element_type

    @property
    def memspace(self) -> str:
        return self.storage.space

    # ---- element access
    def _indexing(self, coord) -> str:
        shown = fmt_coord(coord) if type(coord) is tuple and all(type(c) in (int, tuple) for c in coord) else \
            repr(coord)
        return f"{self.name or 'tensor'}[{shown}]"

    def _locate(self, coord) -> int:
        try:
            offset = self.layout(coord)
        except CuteError as error:
            raise OutOfBoundsError(f"out-of-bounds access to {self._label()} at coordinate "
                                   f"{fmt_coord(coord) if isinstance(coord, tuple) else coord}: {error}") from None
        return offset

    def _fast_address(self, coord):
        """The storage address of an in-range int or tuple-of-ints coordinate, or None (then the general
        path answers, with its checks and messages)."""
        offset_of = self._offset_of
        if offset_of is False:
            offset_of = self._offset_of = offset_function(self.layout)
        if offset_of is None:
            return None
        offset = offset_of(coord)
        if offset is None:
            return None
        address = self.base + offset
        if self.swizzle is not None:
            address = self.swizzle(address)
        if not 0 <= address < self.storage.array.size:
            return None
        return address

    def __getitem__(self, coord):
        offset_of = self._offset_of     # _fast_address, written out: the kernel's most frequent call
        if offset_of is False:
            offset_of = self._offset_of = offset_function(self.layout)
        offset = offset_of(coord) if offset_of is not None else None
        address = None
        if offset is not None:
            address = self.base + offset
            if self.swizzle is not None:
                address = self.swizzle(address)
            if not 0 <= address < self.storage.array.size:
                address = None
        if address is not None:
            storage = self.storage
            space = storage.space
            if space == "gmem":
                if threads.SETTINGS.trace:
                    read(storage, numpy.array([address]), self, coord)
                values = storage.values
                if values is not None:
                    return values[address]
                value = storage.array[address]
                return value if value.dtype.kind in "iu" and value.dtype.itemsize == 8 else value.item()
            if space == "smem":
                thread = threads._current[0]
                if threads.SETTINGS.trace or thread is None or not storage.scalar_access(address, thread, False):
                    read(storage, numpy.array([address]), self, coord)
                values = storage.values
                return values[address] if values is not None else storage.array[address].item()
            if threads.SETTINGS.trace or storage.wgmma_busy:     # accumulators of wgmmas in flight: refused
                read(storage, numpy.array([address]), self, coord)
            value = storage.array[address]
            return value.item() if storage.array.dtype == numpy.bool_ else value
        coord = plain_coordinate(coord, lambda: self._indexing(coord))    # ints (bools, NumPy ints), or refused
        if type(coord) is tuple:
            try:
                kept, moved = _SLICES[(self.layout, coord)]     # a slice this kernel made before
                if isinstance(moved, CuteError):
                    return self._outside_slice(kept, coord, moved)
                return SimTensor(self.storage, kept, self.base + moved, self.swizzle, self.name)
            except (KeyError, TypeError):
                pass
        if _has_none(coord):
            try:
                kept, moved = _slice(self.layout, coord)
                if len(_SLICES) > 65536:
                    _SLICES.clear()
                _SLICES[(self.layout, coord)] = kept, moved
            except TypeError:       # an unhashable part: no cache
                kept = slice_(coord, self.layout)
                try:
                    moved = slice_offset(coord, self.layout)
                except CuteError as error:
                    moved = error
            if isinstance(moved, CuteError):
                return self._outside_slice(kept, coord, moved)
            return SimTensor(self.storage, kept, self.base + moved, self.swizzle, self.name)
        address = self._address(self._locate(coord), coord)
        if self.storage.space == "smem" or threads.SETTINGS.trace or self.storage.wgmma_busy:
            read(self.storage, numpy.array([address]), self, coord)
        value = self.storage.array[address]
        return value.item() if self.storage.space != "rmem" or self.storage.array.dtype == numpy.bool_ else value

    def __setitem__(self, coord, value):
        offset_of = self._offset_of     # _fast_address, written out
        if offset_of is False:
            offset_of = self._offset_of = offset_function(self.layout)
        offset = offset_of(coord) if offset_of is not None else None
        address = None
        if offset is not None:
            address = self.base + offset
            if self.swizzle is not None:
                address = self.swizzle(address)
            if not 0 <= address < self.storage.array.size:
                address = None
        if address is None:
            if coord is None or (type(coord) is tuple and _has_none(coord)):
                return self[coord].store(value)         # t[None] = values: every element of the slice
            coord = plain_coordinate(coord, lambda: self._indexing(coord))
            address = self._address(self._locate(coord), coord)
        storage = self.storage
        if storage.space == "smem":
            thread = threads._current[0]
            if threads.SETTINGS.trace or thread is None or not storage.scalar_access(address, thread, True):
                write(storage, numpy.array([address]), self, coord, values=value)
        elif threads.SETTINGS.trace or storage.wgmma_used:
            # a wgmma's accumulators: refused while wgmmas write them, and what warpgroup.fence() must order
            write(storage, numpy.array([address]), self, coord)
        storage.fresh = False
        try:
            storage.array[address] = value
        except OverflowError:
            storage.array[address] = _wrapped(value, storage.array.dtype)

    def _outside_slice(self, kept, coord, error: CuteError) -> "OutsideView":
        """A slice at a coordinate outside the shape: CuTe moves the pointer anyway (NVIDIA's GEMMs slice the
        k-tile after the last and copy it with every predicate false); any access through it is refused."""
        message = f"{self._label()}: {error}"
        try:
            moved = crd2idx(_zero_none(coord), self.layout.shape, self.layout.stride)
        except (CuteError, TypeError, ValueError):
            raise OutOfBoundsError(message) from None
        return OutsideView(self.storage, kept, self.base + moved, self.swizzle, self.name, message)

    def _address(self, offset: int, coord=None) -> int:
        address = _apply_swizzle(self.swizzle, self.base + offset)
        if not 0 <= address < self.storage.array.size:
            raise OutOfBoundsError(self._outside(address, coord))
        return address

    def addresses(self) -> numpy.ndarray:
        """Storage offsets of every element, in layout order."""
        return _apply_swizzle(self.swizzle, self.base + offsets(self.layout))

    def checked_addresses(self) -> numpy.ndarray:
        """`addresses()`, every one checked to be inside the storage (`check_bounds`); a view whose offsets
        all fall inside is checked by its smallest and largest offset alone."""
        if self.swizzle is None:
            values, lowest, highest = offsets_and_range(self.layout)
            if 0 <= self.base + lowest and self.base + highest < self.storage.array.size:
                return self.base + values
        addresses = self.addresses()
        check_bounds(self, addresses)
        return addresses

    def _label(self) -> str:
        return self.storage.describe() if self.name in (None, self.storage.name) else \
            f"{self.name} (a view of {self.storage.describe()})"

    def _outside(self, address: int, coord=None) -> str:
        where = f" at coordinate {fmt_coord(coord) if isinstance(coord, tuple) else coord}" if coord is not None else ""
        return (f"out-of-bounds access to {self._label()}{where}: offset {address} is outside its "
                f"{self.storage.array.size} elements")

    # ---- whole-tensor operations
    def load(self) -> "TensorSSA":
        """All elements as a value (CuTeDSL's TensorSSA), in layout order."""
        addresses = self.checked_addresses()
        read(self.storage, addresses, self)
        return TensorSSA(self.storage.array[addresses].copy(), self.layout.shape, self.element_type)

    def store(self, value):
        """Write a TensorSSA (or a scalar, broadcast) into every element."""
        addresses = self.addresses()
        if isinstance(value, TensorSSA):
            if value.values.size != addresses.size:
                raise CuteError(f"store: a value of {value.values.size} elements into {self._label()} of shape "
                                f"{fmt(self.layout.shape)} ({addresses.size} elements)")
            value = value.values
        check_bounds(self, addresses)
        write(self.storage, addresses, self, values=value)
        self.storage.array[addresses] = value

    def fill(self, value):
        self.store(value)

    def __str__(self):
        from .printing import tensor_text
        return tensor_text(self)

    __repr__ = __str__


def _wrapped(value, dtype):
    """A kernel's integer arithmetic is plain Python ints (fast), which do not wrap; a GPU's registers do
    (add.s32, mul.lo.s32 keep the low 32 bits). Stored to an integer tensor, the value is what the GPU's register
    would hold: its low bits, two's complement."""
    if not numpy.issubdtype(dtype, numpy.integer) or not isinstance(value, (int, numpy.integer)):
        raise OverflowError(f"{value!r} does not fit {dtype}")
    bits = numpy.dtype(dtype).itemsize * 8
    value = int(value) % (1 << bits)
    if numpy.issubdtype(dtype, numpy.signedinteger) and value >= 1 << (bits - 1):
        value -= 1 << bits
    return value


class OutsideView(SimTensor):
    """A view sliced at a coordinate outside its tensor's shape: it may be sliced further and passed to a
    copy whose predicates are all false; reading or writing through it raises the slice's error."""
    outside = None

    def __init__(self, storage, layout, base=0, swizzle=None, name=None, outside: str = ""):
        super().__init__(storage, layout, base, swizzle, name)
        self.outside = outside

    def _refuse(self):
        raise OutOfBoundsError(self.outside)

    def with_layout(self, layout):
        return OutsideView(self.storage, layout, self.base, self.swizzle, self.name, self.outside)

    def renamed(self, name):
        return OutsideView(self.storage, self.layout, self.base, self.swizzle, name, self.outside)

    def __getitem__(self, coord):
        if not _has_none(coord):
            self._refuse()
        kept = slice_(coord, self.layout)
        moved = crd2idx(_zero_none(coord), self.layout.shape, self.layout.stride)
        return OutsideView(self.storage, kept, self.base + moved, self.swizzle, self.name, self.outside)

    def __setitem__(self, coord, value):
        self._refuse()

    def checked_addresses(self):
        self._refuse()


def check_alignment(tensor: SimTensor, addresses: numpy.ndarray, vector: int, what: str):
    """A `vector`-element access needs its address aligned to the vector's bytes, and (for global and shared
    memory) the compiler must know it: CuTeDSL refuses a 128-bit copy from a tensor only known to be
    4-byte aligned, and a GPU faults on a misaligned vector access."""
    storage = tensor.storage
    vector_bytes = vector * storage.bytes_per_element
    if vector <= 1 or storage.space == "rmem":
        return
    known = storage.align_bytes or storage.bytes_per_element
    if known < vector_bytes:
        fix = (f"from_dlpack(tensor, assumed_align={vector_bytes})" if storage.space == "gmem"
               else f"allocate_tensor(..., byte_alignment={vector_bytes})")
        raise CuteError(f"{what}: a {vector_bytes * 8}-bit copy needs {vector_bytes}-byte aligned addresses, but "
                        f"{tensor._label()} is only known to be {known}-byte aligned (CuTeDSL refuses to compile "
                        f"this); promise the alignment with {fix}, or copy fewer bits at a time")
    starts = addresses[::vector] * storage.bytes_per_element + storage.byte_base
    misaligned = starts % vector_bytes != 0
    if misaligned.any():
        first = int(numpy.argmax(misaligned))
        raise OutOfBoundsError(f"{what}: misaligned address: vector {first} of {tensor._label()} starts at byte "
                               f"{int(starts[first])}, not a multiple of {vector_bytes} (a GPU faults with "
                               f"'misaligned address')")


def check_bounds(tensor: SimTensor, addresses: numpy.ndarray, mask=None):
    """Every address (where `mask` is true) inside the storage; else name the first element outside."""
    if tensor.outside is not None and (mask is None or mask.any()):
        raise OutOfBoundsError(tensor.outside)
    size_ = tensor.storage.array.size
    inside = (addresses >= 0) & (addresses < size_)
    if mask is not None:
        inside |= ~mask
    if not inside.all():
        first = int(numpy.argmin(inside))
        coord = _coordinate_of_index(tensor.layout, first)
        raise OutOfBoundsError(tensor._outside(int(addresses[first]), coord) + _root_hint(tensor, addresses[first]))


def _coordinate_of_index(layout: Layout, index: int):
    from ...cute.inttuple import idx2crd
    return idx2crd(index, layout.shape)


def _root_hint(tensor: SimTensor, address: int) -> str:
    storage = tensor.storage
    if storage.space != "gmem" or storage.root is None:
        return ""
    return (f" (the tensor {storage.name or ''} has shape {fmt(storage.root.shape)}; guard the tail with an "
            f"identity tensor and elem_less, or copy with pred=)")


# --------------------------------------------------------------------------------------------- checks

# What sm_90's room (arch/sm90.py) checks while its asynchronous work is in flight, set when it is imported (only
# its own state, `storage.wgmma_busy` and a block's "hopper", calls them): a register a wgmma still uses,
# read or written; a generic-proxy write to shared memory that a TMA store may read.
REGISTER_ACCESS_CHECK: list = [None]
GENERIC_WRITE_NOTE: list = [None]


def read(storage: Storage, addresses: numpy.ndarray, tensor: SimTensor | None = None, coord=None,
         vector: int | None = None):
    """Checks and bookkeeping for one thread reading `addresses` of `storage` (`vector`: elements per
    instruction; None lets the widest aligned contiguous access up to 16 bytes be chosen, as the compiler
    does)."""
    thread = threads.current()
    if thread is None:
        return
    if storage.wgmma_busy:
        REGISTER_ACCESS_CHECK[0](storage, False)
    if storage.space == "smem":
        _check_race(storage, addresses, thread, "read", tensor)
        if (storage.in_flight[addresses[0]] if addresses.size == 1 else storage.in_flight[addresses].any()):
            raise RaceError(f"read of {tensor._label() if tensor else storage.describe()} while a cp.async "
                            f"copy into it has not finished: call cute.arch.cp_async_wait_group(...) (and "
                            f"sync_threads) before reading what cp.async wrote")
        _record_requests(thread, storage, addresses, vector)
    if storage.space != "rmem" and threads.SETTINGS.trace:
        threads.record_trace(thread, storage.name or "?", addresses, "read")


def write(storage: Storage, addresses: numpy.ndarray, tensor: SimTensor | None = None, coord=None,
          vector: int | None = None, thread=None, record: bool = True, values=None):
    """Checks and bookkeeping for one thread writing `addresses` of `storage` (see `read`); `values`, when
    given, are what is written (a write of the value already there races with nothing)."""
    thread = thread or threads.current()
    if thread is None:
        return
    if storage.space == "rmem":
        if storage.wgmma_busy:
            REGISTER_ACCESS_CHECK[0](storage, True)
        storage.generic_stamp = thread.__dict__.get("wgmma_fences", 0)
        storage.fresh = False
    if storage.space == "smem":
        _check_race(storage, addresses, thread, "write", tensor, values)
        if record:
            _record_requests(thread, storage, addresses, vector)
        if "hopper" in thread.block.__dict__:
            GENERIC_WRITE_NOTE[0](thread, storage, addresses)
    if storage.space != "rmem" and threads.SETTINGS.trace:
        threads.record_trace(thread, storage.name or "?", addresses, "write")


def vector_length(addresses: numpy.ndarray, bytes_per_element: int) -> int:
    """`_vector_length`, remembered for the few address patterns a kernel's copies repeat."""
    if addresses.size > 1024:
        return _vector_length(addresses, bytes_per_element)
    key = (addresses.tobytes(), addresses.dtype.str, bytes_per_element)
    width = _VECTOR_LENGTHS.get(key)
    if width is None:
        width = _vector_length(addresses, bytes_per_element)
        if len(_VECTOR_LENGTHS) > 4096:
            _VECTOR_LENGTHS.clear()
        _VECTOR_LENGTHS[key] = width
    return width


_VECTOR_LENGTHS: dict = {}


def _vector_length(addresses: numpy.ndarray, bytes_per_element: int) -> int:
    """The widest access (elements, a power of two, at most 16 bytes) that cuts `addresses` into aligned
    runs of consecutive elements.

    >>> vector_length(numpy.arange(8), 4), vector_length(numpy.array([0, 1, 8, 9]), 4), vector_length(numpy.arange(1, 5), 4)
    (4, 2, 1)
    """
    width = max(1, 16 // bytes_per_element)
    while width > 1:
        if addresses.size % width == 0:
            runs = addresses.reshape(-1, width)
            if (runs[:, 0] % width == 0).all() and (numpy.diff(runs, axis=1) == 1).all():
                return width
        width //= 2
    return 1


def _record_requests(thread, storage: Storage, addresses: numpy.ndarray, vector: int | None):
    if addresses.size == 1:             # one element (t[i] = v): no vector to find
        threads.record_shared_request(thread, [storage.byte_base + int(addresses[0]) * storage.bytes_per_element],
                                      storage.bytes_per_element, threads.user_site(1))
        return
    if vector is None:
        vector = vector_length(addresses, storage.bytes_per_element)
    starts = storage.byte_base + addresses[::vector] * storage.bytes_per_element
    width = vector * storage.bytes_per_element
    site = threads.user_site(1)
    # threads.record_shared_request for each vector, written out: a tile copy issues hundreds per thread
    counts = thread.access_counts
    k = counts.get(site, 0)
    starts = starts.tolist()
    counts[site] = k + len(starts)
    warp, lane, requests = thread.linear >> 5, thread.linear & 31, thread.block.requests
    for start in starts:
        key = (warp, site, k, width)
        k += 1
        lanes = requests.get(key)
        if lanes is None:
            requests[key] = [(lane, [start])]
        else:
            lanes.append((lane, [start]))


def _check_race(storage: Storage, addresses: numpy.ndarray, thread, kind: str, tensor, values=None):
    if threads.SETTINGS.races == "off":
        return
    epoch, me = thread.block.epoch, thread.linear
    if addresses.size == 1 and not (storage.write_epoch[addresses[0]] == epoch and storage.writer[addresses[0]] != me) \
            and not (kind == "write" and storage.read_epoch[addresses[0]] == epoch
                     and storage.reader[addresses[0]] != me):
        a = int(addresses[0])           # one element and no race: the bookkeeping below, on scalars
        if kind == "read":
            if storage.read_epoch[a] != epoch:
                storage.reader[a], storage.read_epoch[a] = me, epoch
            elif storage.reader[a] != me:
                storage.reader[a] = -2
        else:
            storage.writer[a], storage.write_epoch[a] = me, epoch
        return
    clash = (storage.write_epoch[addresses] == epoch) & (storage.writer[addresses] != me)
    if kind == "read":
        readers = storage.reader[addresses]
    else:
        clash |= (storage.read_epoch[addresses] == epoch) & (storage.reader[addresses] != me)
        if values is not None and clash.any():
            # threads that write the value already there (NVIDIA's async_pipeline notebook: every thread fills
            # the same staging element with 0) leave every reader and writer seeing the same value: no race
            try:
                clash &= ~(storage.array[addresses] == numpy.asarray(values, storage.array.dtype))
            except (TypeError, ValueError):
                pass
    if clash.any():
        first = int(numpy.argmax(clash))
        address = int(addresses[first])
        if kind == "read" or storage.write_epoch[address] == epoch:
            culprit = int(storage.writer[address])
        else:
            culprit = int(storage.reader[address])
        who = f"thread {culprit}" if culprit >= 0 else "several other threads"
        label = tensor._label() if tensor is not None else storage.describe()
        what = ("reads a value that " + who + " wrote" if kind == "read"
                else "overwrites a value that " + who + " used")
        message = (f"shared-memory race on {label}, element {address}: thread {me} {what} since the last "
                   f"barrier. Put cute.arch.sync_threads() between the write and the read.")
        if threads.SETTINGS.races == "error":
            raise RaceError(message)
        thread.block.launch.report.races.append(f"{thread.describe()}: {message}")
    if kind == "read":
        fresh = storage.read_epoch[addresses] != epoch
        shared_with_other = (~fresh) & (readers != me)
        storage.reader[addresses] = numpy.where(fresh, me, numpy.where(shared_with_other, -2, readers))
        storage.read_epoch[addresses] = epoch
    else:
        storage.writer[addresses] = me
        storage.write_epoch[addresses] = epoch


# --------------------------------------------------------------------------------------------- values

class TensorSSA:
    """A tensor's values in registers (what `.load()` gives): element-wise arithmetic and reductions."""

    def __init__(self, values: numpy.ndarray, shape, element_type):
        self.values = values
        self.shape = shape
        self.element_type = element_type

    @property
    def dtype(self):
        return self.element_type

    def _extents(self) -> tuple:
        """The size of each top-level mode."""
        return tuple(product(m) for m in self.shape) if is_tuple(self.shape) else (self.shape,)

    def _nd(self) -> numpy.ndarray:
        """The values as an array with one axis per top-level mode (column-major, as the layout orders them)."""
        if self.values.ndim != 1:
            _per_thread_rows("reshaping a tensor value")
        return self.values.reshape(tuple(int(e) for e in self._extents()), order="F")

    @staticmethod
    def _from_nd(array: numpy.ndarray, element_type) -> "TensorSSA":
        shape = tuple(int(e) for e in array.shape)
        return TensorSSA(array.reshape(-1, order="F"), shape, element_type)

    def _binary(self, other, operation):
        element_type = self.element_type
        if isinstance(other, TensorSSA) and other.values.shape != self.values.shape or \
                isinstance(other, TensorSSA) and other._extents() != self._extents():
            # shapes that differ broadcast mode by mode, a mode of 1 against any ((1,3) + (4,1) is (4,3))
            ours, theirs = self._nd(), other._nd()
            if ours.ndim != theirs.ndim:
                raise CuteError(f"tensor values of shapes {fmt(self.shape)} and {fmt(other.shape)} do not broadcast "
                                "(their ranks differ)")
            try:
                result = operation(ours, theirs)
            except ValueError:
                raise CuteError(f"tensor values of shapes {fmt(self.shape)} and {fmt(other.shape)} do not "
                                "broadcast (a mode differs and is not 1)") from None
            return TensorSSA._from_nd(result, types.Boolean if result.dtype == numpy.bool_ else element_type)
        other_values = other.values if isinstance(other, TensorSSA) else other
        result = operation(self.values, other_values)
        element_type = self.element_type
        if result.dtype == numpy.bool_:
            element_type = types.Boolean
        return TensorSSA(result, self.shape, element_type)

    def __add__(self, other):
        return self._binary(other, numpy.add)

    def __radd__(self, other):
        return self._binary(other, lambda a, b: numpy.add(b, a))

    def __sub__(self, other):
        return self._binary(other, numpy.subtract)

    def __rsub__(self, other):
        return self._binary(other, lambda a, b: numpy.subtract(b, a))

    def __mul__(self, other):
        return self._binary(other, numpy.multiply)

    def __rmul__(self, other):
        return self._binary(other, lambda a, b: numpy.multiply(b, a))

    def __truediv__(self, other):
        return self._binary(other, lambda a, b: numpy.divide(a, b).astype(a.dtype))

    def __rtruediv__(self, other):
        return self._binary(other, lambda a, b: numpy.divide(b, a).astype(a.dtype))

    def __neg__(self):
        return TensorSSA(-self.values, self.shape, self.element_type)

    def __lt__(self, other):
        return self._binary(other, numpy.less)

    def __le__(self, other):
        return self._binary(other, numpy.less_equal)

    def __gt__(self, other):
        return self._binary(other, numpy.greater)

    def __ge__(self, other):
        return self._binary(other, numpy.greater_equal)

    def to(self, element_type):
        """The values converted to another element type (fp32 accumulators to fp16, say)."""
        return TensorSSA(self.values.astype(types.NUMPY_STORAGE[element_type]), self.shape, element_type)

    def reduce(self, op, init_val, reduction_profile=0):
        """Reduce with `op` (cute.ReductionOp.ADD, MUL, MAX, MIN) starting from `init_val`; a profile of 0
        reduces everything to a scalar, a tuple reduces the modes where it holds 1 and keeps those where it
        holds None ((None, 1) of a (2,3) value: the 2 sums of its rows)."""
        if self.values.ndim != 1:
            _per_thread_rows("reduce")
        if not is_tuple(reduction_profile) and reduction_profile == 0:
            folded = op.numpy(self.values) if self.values.size else init_val
            return _host_scalar(self.values.dtype.type(op.combine(init_val, folded)), self.element_type)
        profile = reduction_profile if is_tuple(reduction_profile) else (reduction_profile,)
        extents = self._extents()
        if len(profile) != len(extents) or any(p not in (None, 1) for p in profile):
            raise CuteError(f"reduce: reduction_profile {reduction_profile!r} must be 0 or have one entry, None "
                            f"(keep) or 1 (reduce), per mode of the shape {fmt(self.shape)}")
        axes = tuple(i for i, p in enumerate(profile) if p == 1)
        array = self._nd()
        folded = op.numpy(array, axis=axes) if array.size else numpy.full(
            [e for i, e in enumerate(array.shape) if i not in axes], init_val)
        result = numpy.asarray(op.combine(numpy.asarray(init_val, array.dtype), folded)).astype(array.dtype)
        kept = tuple(s for s, p in zip(self.shape if is_tuple(self.shape) else (self.shape,), profile) if p is None)
        if not kept:
            return _host_scalar(result.reshape(()).item(), self.element_type)
        return TensorSSA(result.reshape(-1, order="F"), kept, self.element_type)

    def __getitem__(self, index):
        if self.values.ndim != 1 and (type(index) is int or isinstance(index, numpy.integer)):
            return lanes(                   # a vectorized launch: element `index` of every thread's row
                self.values[:, index])
        if type(index) is int or isinstance(index, numpy.integer):
            return _host_scalar(self.values[index], self.element_type)
        if is_tuple(index):
            extents = self._extents()
            if len(index) != len(extents) or any(not (i is None or is_int(i)) for i in index):
                raise CuteError(f"tensor value of shape {fmt(self.shape)}: index {index!r} must have one int or "
                                "None per mode")
            if not any(i is None for i in index):
                return _host_scalar(self._nd()[tuple(int(i) for i in index)], self.element_type)
            picked = self._nd()[tuple(slice(None) if i is None else int(i) for i in index)]
            shape = tuple(s for s, i in zip(self.shape, index) if i is None)
            return TensorSSA(picked.reshape(-1, order="F").copy(), shape, self.element_type)
        return self.values[index]

    def __len__(self):
        return self.values.size

    def __floordiv__(self, other):
        return self._binary(other, lambda a, b: numpy.floor_divide(a, b).astype(a.dtype))

    def __rfloordiv__(self, other):
        return self._binary(other, lambda a, b: numpy.floor_divide(b, a).astype(a.dtype))

    def __mod__(self, other):
        return self._binary(other, lambda a, b: numpy.mod(a, b).astype(a.dtype))

    def __rmod__(self, other):
        return self._binary(other, lambda a, b: numpy.mod(b, a).astype(a.dtype))

    def __and__(self, other):
        return self._binary(other, numpy.bitwise_and)

    __rand__ = __and__

    def __or__(self, other):
        return self._binary(other, numpy.bitwise_or)

    __ror__ = __or__

    def __xor__(self, other):
        return self._binary(other, numpy.bitwise_xor)

    __rxor__ = __xor__

    def __eq__(self, other):
        return self._binary(other, numpy.equal)

    def __ne__(self, other):
        return self._binary(other, numpy.not_equal)

    __hash__ = object.__hash__

    def __invert__(self):
        return TensorSSA(~self.values, self.shape, self.element_type)

    def __abs__(self):
        return TensorSSA(numpy.abs(self.values), self.shape, self.element_type)

    def broadcast_to(self, shape):
        """The value repeated along its modes of size 1 to `shape` ((1,3) to (4,3))."""
        target = tuple(product(m) for m in shape) if is_tuple(shape) else (shape,)
        if len(target) != len(self._extents()):
            raise CuteError(f"broadcast_to: a value of shape {fmt(self.shape)} and the shape {fmt(shape)} must "
                            "have the same rank (a mode of 1 broadcasts)")
        try:
            array = numpy.broadcast_to(self._nd(), tuple(int(t) for t in target))
        except ValueError:
            raise CuteError(f"broadcast_to: a value of shape {fmt(self.shape)} does not broadcast to "
                            f"{fmt(shape)} (a mode differs and is not 1)") from None
        return TensorSSA(array.reshape(-1, order="F").copy(), shape, self.element_type)

    def __str__(self):
        from .printing import value_text
        return value_text(self)

    __repr__ = __str__


def register_tensor(layout, element_type, name: str | None = None) -> SimTensor:
    """Registers of one thread: a compact tensor of `element_type` with the given layout (its cosize)."""
    if isinstance(layout, ComposedLayout):
        layout = layout.outer
    if not isinstance(layout, Layout):
        layout = make_layout(layout)
    from ...cute.layout import cosize
    count = max(1, cosize(layout))
    storage = garbage_registers(count, element_type, name)
    return SimTensor(storage, layout)


def garbage_registers(count: int, element_type, name: str | None = None) -> Storage:
    """New registers hold whatever they held before, as on a GPU: floating-point ones start at NaN (so a value
    read before it is written shows in the result, and a wgmma that adds to never-written accumulators is
    named, hopper.py); integer and boolean ones at 0. Outside a kernel (host code of a @cute.jit, printed
    in a notebook) they start at 0."""
    dtype = numpy.dtype(types.NUMPY_STORAGE[element_type])
    if dtype.kind == "f" and threads._current[0] is not None:
        storage = Storage(numpy.full(count, numpy.nan, dtype), "rmem", element_type, name)
        storage.fresh = True
        return storage
    return Storage(numpy.zeros(count, dtype), "rmem", element_type, name)


def adopt(tensor) -> SimTensor:
    """A reference-algebra tensor over NumPy memory (an MMA fragment, say) as a simulator register tensor."""
    if isinstance(tensor, SimTensor) or not isinstance(tensor, Tensor) or tensor.is_coordinate:
        return tensor
    _, array, base = tensor.iterator
    element_type = tensor.element_type or types.from_numpy_dtype(array.dtype)
    return SimTensor(Storage(array, "rmem", element_type), tensor.layout, base)


def _host_scalar(value, element_type):
    """An element of a tensor value: in @cute.jit host code a DSL number (it prints `?`, as CuTeDSL's does),
    in a kernel the plain value."""
    if tracing.mode() is None or threads.current() is not None or element_type is None:
        return value
    try:
        from .numbers import make
    except ImportError:     # pragma: no cover - DSL numbers need cutekit.cute's run-time integers
        return value
    return make(value.item() if isinstance(value, numpy.generic) else value, element_type)


def _per_thread_rows(what: str):
    """A tensor value of a vectorized launch (one row per thread) where only one thread's will do."""
    raise NotVectorizable(f"{what} of a value that holds every thread's row")
