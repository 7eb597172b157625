"""Large launches run as NumPy vectors: every thread of a batch of blocks at once.

The simulator runs a kernel thread by thread (machine/scheduler.py): about 200,000 threads a second here, so NVIDIA's
elementwise_add notebook (16384 x 8192 elements, one thread each) would take more than ten minutes. A launch
of more than `THRESHOLD` threads is run instead the way Triton's interpreter runs a program: the kernel's
Python runs once per batch of blocks, and every value that differs between threads (thread and block indices,
what is computed from them, what is loaded with them) is a NumPy vector with one entry per thread (`Lanes`).
Tensor reads and writes with such indices are gathers and scatters, checked against the tensor's memory; a
register tensor holds one row per thread; a tensor value (`.load()`) holds one row per thread.

What a kernel does that vectors cannot say (a branch on a thread's value, a barrier, a warp collective,
shared memory, cp.async, printf) is found on a first, small batch of blocks spread over the grid: its writes
are undone and the launch runs thread by thread, as before. So the result is the same; only what the
thread-by-thread run adds is missing from a vectorized launch: shared-memory race and bank-conflict
bookkeeping (there is no shared memory in one) and the order of per-thread output (there is no printf).

Python's print in the kernel (CuTeDSL's trace) prints once per line of code; a value that differs between
threads prints as CuTeDSL prints a run-time value, `?`, with the divisor all threads' values share
(`?{div=64}`).
"""
from __future__ import annotations

import math
import sys

import numpy

from ...cute.inttuple import CuteError, fmt_coord, is_tuple, product
from ...cute.layout import Basis, Layout, _has_none, _path, cosize, make_layout, slice_
from ...cute.tensor import Tensor
from ..machine import threads, tracing
from ..machine.failures import Dim3
from ..machine.threads import KernelError, OutOfBoundsError
from .lanes import Lanes, NotVectorizable, dynamic_text, lanes  # noqa: F401  (vector.NotVectorizable, ...)
from .tensors import SimTensor, Storage, TensorSSA, offsets

THRESHOLD = 1 << 18          # launches of more threads than this run as vectors
_ELEMENTS_PER_BATCH = 1 << 22
_LANES_PER_BATCH = 1 << 20


def _plain(x):
    return numpy.asarray(x) if isinstance(x, numpy.ndarray) else x


# ----------------------------------------------------------------------------------------------- the threads

class _Block:
    """What device code asks of `thread.block` in a vectorized launch: the launch; no shared memory."""

    queue = ()
    position = 0

    def __init__(self, launch):
        self.launch = launch

    def _refuse(self):
        raise NotVectorizable("shared memory or a barrier")

    scheduler = shared = requests = epoch = shared_bytes = property(lambda self: self._refuse())


class VectorThread:
    """Every thread of a batch at once, standing where machine/threads.py's Thread stands (`threads.current()`)."""

    vectorized = True

    def __init__(self, launch, block_linear: numpy.ndarray, threads_per_block: int):
        grid, dims = launch.grid, launch.block_dim
        count = block_linear.size
        # Int32, as CUDA's indices are (a grid of 2**31 threads or more is not vectorized)
        linear = numpy.tile(numpy.arange(threads_per_block, dtype=numpy.int32), count)
        blocks = numpy.repeat(block_linear.astype(numpy.int32), threads_per_block)
        self.size = size = linear.size
        zeros = numpy.broadcast_to(numpy.int32(0), (size,))

        def split(values, extents):
            if extents[1] == 1 and extents[2] == 1:
                return lanes(values), lanes(zeros), lanes(zeros)
            return (lanes(values % extents[0]), lanes(values // extents[0] % extents[1]),
                    lanes(values // (extents[0] * extents[1])))
        self.linear = lanes(linear)
        self.thread_idx = split(linear, dims)
        self.block_idx = split(blocks, grid)
        self.block = _Block(launch)
        self.register_tensors = []

    @property
    def lane(self):
        return lanes(numpy.asarray(self.linear) % threads.WARP_SIZE)

    @property
    def warp(self):
        return lanes(numpy.asarray(self.linear) // threads.WARP_SIZE)

    def _refuse(self, *args):
        raise NotVectorizable("a barrier, a warp collective, shared memory or cp.async")

    waiting = property(lambda self: "", _refuse)
    shared_count = property(_refuse, _refuse)
    async_pending = property(_refuse, _refuse)
    async_groups = property(_refuse, _refuse)
    access_counts = property(_refuse, _refuse)

    def describe_lane(self, lane: int) -> str:
        return (f"thread {tuple(int(numpy.asarray(t)[lane]) for t in self.thread_idx)} of block "
                f"{tuple(int(numpy.asarray(b)[lane]) for b in self.block_idx)}")


_RUN: list = [None]         # the running vectorized launch's _Run


class _Run:
    """One vectorized launch: what its first batch printed and wrote (to undo), how much each thread reads."""

    def __init__(self):
        self.held = []              # the first batch's prints, shown once it succeeds
        self.probing = True
        self.undo = []              # (array, addresses, old values) written by the first batch
        self.elements_per_lane = 1
        self.offsets, self.kept = {}, []


def trace_print(args, kwargs, line) -> None:
    """Python's print in a vectorized kernel: what the first batch prints, once (CuTeDSL prints at trace
    time, and the first batch runs every line the kernel runs: a vectorized kernel has no branch on a
    thread's values)."""
    run = _RUN[0]
    if run.probing:
        run.held.append((args, kwargs))


def active() -> bool:
    return _RUN[0] is not None


# ----------------------------------------------------------------------------------------------- offsets

def _sum(parts):
    """Offsets added: numbers, or {mode path: value} for coordinate (basis) strides."""
    total, coordinate = 0, None
    for p in parts:
        if isinstance(p, dict):
            coordinate = dict(coordinate or {})
            for path, value in p.items():
                coordinate[path] = coordinate.get(path, 0) + value
        else:
            total = total + p
    if coordinate is not None:
        if not (isinstance(total, int) and total == 0):
            raise CuteError("a coordinate layout mixes basis and integer strides")
        return coordinate
    return total


def crd2idx(coord, shape, stride):
    """The offset of `coord` (ints and Lanes, nested, or one index) in the layout shape:stride; a dict of
    {mode path: value} where the strides are bases (a coordinate tensor)."""
    if is_tuple(coord):
        if not is_tuple(shape) or len(coord) != len(shape):
            raise CuteError(f"coordinate {coord} does not match the shape {shape}")
        return _sum([crd2idx(c, s, d) for c, s, d in zip(coord, shape, stride)])
    if coord is None:
        return 0
    if is_tuple(shape):
        parts, rest = [], coord
        for k, (s, d) in enumerate(zip(shape, stride)):
            if k == len(shape) - 1:
                parts.append(crd2idx(rest, s, d))
            else:
                n = product(s)
                parts.append(crd2idx(rest % n, s, d))
                rest = rest // n
        return _sum(parts)
    if isinstance(stride, Basis):
        return {_path(stride.mode): coord * stride.scale}
    return coord * int(stride)


def _identity(coord):
    """A key for a coordinate of this batch: its ints, and its vectors by identity."""
    if is_tuple(coord):
        return tuple(_identity(c) for c in coord)
    return ("lanes", id(coord)) if isinstance(coord, numpy.ndarray) else coord


def _offset(coord, layout):
    """crd2idx for a tensor access; a kernel that reads and writes at the same coordinate (gC[m, n] =
    gA[m, n] + gB[m, n]) works the offsets out once per batch."""
    run = _RUN[0]
    if run is None:
        return crd2idx(coord, layout.shape, layout.stride)
    key = (layout, _identity(coord))
    found = run.offsets.get(key)
    if found is None:
        found = crd2idx(coord, layout.shape, layout.stride)
        run.offsets[key] = found
        run.kept.append(coord)          # the vectors stay alive, so their ids stay theirs, for the batch
    return found


def _zero_leaves(coord):
    """`coord` with every leaf but None made 0 (its static shape, for the algebra's slice_)."""
    if is_tuple(coord):
        return tuple(_zero_leaves(c) for c in coord)
    return None if coord is None else 0


def _none_to_zero(coord):
    if is_tuple(coord):
        return tuple(_none_to_zero(c) for c in coord)
    return 0 if coord is None else coord


def _has_lanes(x) -> bool:
    if is_tuple(x):
        return any(_has_lanes(p) for p in x)
    return isinstance(x, numpy.ndarray)


# ----------------------------------------------------------------------------------------------- tensors

def _check(tensor, addresses: numpy.ndarray):
    size = tensor.storage.array.size
    plain = numpy.asarray(addresses)
    if plain.size and (plain.min() < 0 or plain.max() >= size):
        bad = numpy.flatnonzero(((plain < 0) | (plain >= size)).reshape(plain.shape[0], -1).any(axis=1)) \
            if plain.ndim > 1 else numpy.flatnonzero((plain < 0) | (plain >= size))
        lane = int(bad[0])
        thread = threads._current[0]
        who = thread.describe_lane(lane) if isinstance(thread, VectorThread) else f"lane {lane}"
        value = int(numpy.asarray(plain[lane]).ravel()[0]) if plain.ndim > 1 else int(plain[lane])
        raise OutOfBoundsError(f"out-of-bounds access to {tensor._label()} by {who}: offset {value} is outside "
                               f"its {size} elements")


def _log_write(storage: Storage, addresses):
    run = _RUN[0]
    if run is not None and run.probing and storage.space != "rmem":
        plain = numpy.asarray(addresses)
        run.undo.append((storage.array, plain.copy(), storage.array[plain].copy()))


def _note_elements(count: int):
    run = _RUN[0]
    if run is not None and count > run.elements_per_lane:
        run.elements_per_lane = count


class LaneTensor(SimTensor):
    """A tensor of a vectorized launch: its start (`base`) may differ between threads (Lanes)."""

    def with_layout(self, layout) -> "LaneTensor":
        return LaneTensor(self.storage, layout, self.base, self.swizzle, self.name)

    def renamed(self, name):
        return LaneTensor(self.storage, self.layout, self.base, self.swizzle, name)

    def _lane_address(self, coord):
        if self.swizzle is not None:
            raise NotVectorizable("a swizzled tensor")
        return self.base + _offset(coord, self.layout)

    def __getitem__(self, coord):
        if isinstance(coord, list):
            coord = tuple(coord)
        if not isinstance(self.base, numpy.ndarray) and not _has_lanes(coord):
            found = SimTensor.__getitem__(self, coord)
            return LaneTensor(found.storage, found.layout, found.base, found.swizzle, found.name) \
                if isinstance(found, SimTensor) else found
        if coord is None or _has_none(coord):
            kept = slice_(_zero_leaves(coord), self.layout)
            base = self.base + _offset(_none_to_zero(coord), self.layout)
            return LaneTensor(self.storage, kept, lanes(base) if isinstance(base, numpy.ndarray) else base,
                              self.swizzle, self.name)
        address = self._lane_address(coord)
        _check(self, address)
        return lanes(self.storage.array[numpy.asarray(address)])

    def __setitem__(self, coord, value):
        if isinstance(coord, list):
            coord = tuple(coord)
        if coord is None or _has_none(coord):
            return self[coord].store(value)
        if not isinstance(self.base, numpy.ndarray) and not _has_lanes(coord) and \
                not isinstance(value, numpy.ndarray):
            return SimTensor.__setitem__(self, coord, value)
        address = numpy.asarray(self._lane_address(coord))
        _check(self, address)
        _log_write(self.storage, address)
        self.storage.array[address] = _plain(value)

    def _all_addresses(self):
        if self.swizzle is not None:
            raise NotVectorizable("a swizzled tensor")
        steps = offsets(self.layout)
        _note_elements(steps.size)
        base = self.base
        if isinstance(base, numpy.ndarray):
            return numpy.asarray(base)[:, None] + steps[None, :]
        return base + steps

    def load(self) -> TensorSSA:
        addresses = self._all_addresses()
        _check(self, addresses)
        return TensorSSA(self.storage.array[addresses], self.layout.shape, self.element_type)

    def store(self, value):
        addresses = self._all_addresses()
        _check(self, addresses)
        if isinstance(value, TensorSSA):
            value = value.values
        value = _plain(value)
        if isinstance(value, numpy.ndarray) and addresses.ndim == 2 and value.ndim == 1 and \
                value.shape[0] == addresses.shape[0] and addresses.shape[1] != addresses.shape[0]:
            value = value[:, None]          # one value per thread, for all its elements
        _log_write(self.storage, addresses)
        self.storage.array[addresses] = value

    def fill(self, value):
        self.store(value)

    def addresses(self):
        if isinstance(self.base, numpy.ndarray):
            raise NotVectorizable("a copy or MMA through a per-thread tensor")
        return SimTensor.addresses(self)

    def checked_addresses(self):
        if isinstance(self.base, numpy.ndarray):
            raise NotVectorizable("a copy or MMA through a per-thread tensor")
        return SimTensor.checked_addresses(self)


class LaneCoordTensor(Tensor):
    """A coordinate (identity) tensor of a vectorized launch: its origin may differ between threads."""

    def with_layout(self, layout) -> "LaneCoordTensor":
        return LaneCoordTensor(self.iterator, layout, self.name)

    def _moved(self, coord):
        moved = crd2idx(_none_to_zero(coord), self.layout.shape, self.layout.stride)
        origin = self.iterator
        if isinstance(moved, dict):
            for path, value in moved.items():
                origin = _add_at(origin, path, value)
        elif not (isinstance(moved, int) and moved == 0):
            raise CuteError(f"a coordinate tensor cannot move by an offset {moved}")
        return origin

    def __getitem__(self, coord):
        if isinstance(coord, list):
            coord = tuple(coord)
        origin = self._moved(coord)
        if coord is None or _has_none(coord):
            return LaneCoordTensor(origin, slice_(_zero_leaves(coord), self.layout), self.name)
        return origin

    @property
    def type(self):
        return f'!cute.coord_tensor<"{fmt_coord(self.iterator)}", "{self.layout}">'

    def __str__(self):
        return f"tensor<{fmt_coord(self.iterator)} o {self.layout}>"

    __repr__ = __str__


def _add_at(origin, path: tuple, value):
    if not path:
        total = origin + value
        return lanes(total) if isinstance(total, numpy.ndarray) else total
    return tuple(_add_at(part, path[1:], value) if i == path[0] else part for i, part in enumerate(origin))


def register_tensor(layout, element_type) -> LaneTensor:
    """Registers of every thread of the batch: one row of cosize(layout) elements per thread."""
    from ...cute import typing as types
    thread = threads._current[0]
    if not isinstance(layout, Layout):
        layout = make_layout(layout)
    count = max(1, cosize(layout))
    from .tensors import garbage_registers
    storage = garbage_registers(thread.size * count, element_type)       # NaN for floats, as memory.py's
    _note_elements(count)
    return LaneTensor(storage, layout, lanes(numpy.arange(thread.size, dtype=numpy.int64) * count))


def elem_less(a, b):
    """cute.elem_less with coordinates that differ between threads: every entry of `a` less than `b`'s."""
    if is_tuple(a) and is_tuple(b):
        if len(a) != len(b):
            raise CuteError(f"elem_less: {fmt_coord(a)} and {fmt_coord(b)} have different ranks")
        return _every([elem_less(x, y) for x, y in zip(a, b)])
    if is_tuple(a):
        return _every([elem_less(x, b) for x in a])
    if is_tuple(b):
        return elem_less(a, product(b))
    result = a < b
    return lanes(result) if isinstance(result, numpy.ndarray) else result


def _every(results):
    if any(isinstance(r, numpy.ndarray) for r in results):
        out = numpy.ones(1, bool)
        for r in results:
            out = numpy.logical_and(out, numpy.asarray(r))
        return lanes(out)
    return all(results)


# ----------------------------------------------------------------------------------------------- arguments

def _for_lanes(value):
    if type(value) is SimTensor:
        return LaneTensor(value.storage, value.layout, value.base, value.swizzle, value.name)
    if isinstance(value, SimTensor):
        raise NotVectorizable(f"a {type(value).__name__} argument")
    if isinstance(value, Tensor) and value.is_coordinate:
        return LaneCoordTensor(value.iterator, value.layout, value.name)
    if type(value) in (list, tuple):
        return type(value)(_for_lanes(v) for v in value)
    return value


# ----------------------------------------------------------------------------------------------- the launch

def wanted(grid: tuple, block: tuple) -> bool:
    threads = math.prod(grid) * math.prod(block)
    return THRESHOLD < threads < 1 << 31 and math.prod(block) > 1


def _first_blocks(count: int) -> numpy.ndarray:
    """The first batch: a few blocks spread over the grid (its ends, its first blocks, some between), so that
    what differs between blocks shows in it."""
    picks = {0, 1, 2, 3, count - 1, count - 2, count // 2, count // 2 + 1}
    picks.update(int(b) for b in numpy.linspace(0, count - 1, 9))
    return numpy.array(sorted(b for b in picks if 0 <= b < count), dtype=numpy.int64)


def _run_batch(launch, function, args, kwargs, blocks, threads_per_block):
    run = _RUN[0]
    run.offsets, run.kept = {}, []
    thread = VectorThread(launch, blocks, threads_per_block)
    outer = threads._current[0]
    threads._current[0] = thread
    try:
        function(*_for_lanes(args), **{k: _for_lanes(v) for k, v in kwargs.items()})
    finally:
        threads._current[0] = outer


def run(kernel_name: str, function, args: tuple, kwargs: dict, grid, block, smem: int = 0):
    """Run the launch as vectors; None when the kernel cannot be (then nothing it did remains)."""
    import time
    grid, block = threads._as_dim3(grid, "grid"), threads._as_dim3(block, "block")
    threads_per_block, blocks = math.prod(block), math.prod(grid)
    if threads_per_block > 1024:
        return None
    report = threads.LaunchReport(kernel_name, grid, block)
    launch = threads.Launch(grid, block, report, threads.SHARED_MEMORY_LIMIT)
    started = time.perf_counter()
    state = _RUN[0] = _Run()
    try:
        first = _first_blocks(blocks)
        try:
            _run_batch(launch, function, args, kwargs, first, threads_per_block)
        except Exception:  # noqa: BLE001 - anything vectors cannot run: undo, and run thread by thread
            for array, addresses, old in reversed(state.undo):
                array[addresses] = old
            return None
        state.probing, state.undo = False, []
        _PRINT = tracing._PRINT
        for printed_args, printed_kwargs in state.held:
            _PRINT(*printed_args, **printed_kwargs)
        rest = numpy.ones(blocks, bool)
        rest[first] = False
        remaining = numpy.flatnonzero(rest)
        per_batch = max(1, min(_LANES_PER_BATCH, _ELEMENTS_PER_BATCH // state.elements_per_lane) // threads_per_block)
        for start in range(0, remaining.size, per_batch):
            try:
                _run_batch(launch, function, args, kwargs, remaining[start:start + per_batch], threads_per_block)
            except KernelError:
                raise
            except Exception as error:  # noqa: BLE001 - a failure of some blocks: named as the launch's
                raise KernelError(f"{kernel_name}: {type(error).__name__}: {error} (in a launch of "
                                  f"{blocks * threads_per_block} threads run as vectors)") from error
    finally:
        _RUN[0] = None
        report.seconds = time.perf_counter() - started
        report.threads = threads_per_block * blocks
    threads._LAST[:] = [report]
    return report


tracing.VECTOR_PRINT[0] = trace_print     # Python's print in a vectorized kernel comes here
