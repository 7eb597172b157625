"""Device operations of the simulated GPU, named and called as in CuTeDSL: thread and block indices, barriers,
warp reductions, shuffles and votes, registers, copies (universal; what an architecture adds, such as sm_80's
cp.async and ldmatrix or sm_90's TMA and stmatrix, in its room under arch/), MMAs (one thread's FMAs and a
warp's MMA atoms; sm_90's wgmma in arch/sm90.py), printf."""
from __future__ import annotations

import enum
import functools
import sys

import numpy

from ...cute import typing as types
from ...cute.atom import CopyAtom, MmaAtom, TiledCopy, TiledMma, ThrCopy, ThrMma
from ...cute.inttuple import CuteError, elem_less as _elem_less, flatten, fmt, is_int, is_tuple, product
from ...cute.layout import ComposedLayout, Layout, _layout_of, cosize, make_layout, size
from ...cute.tensor import Tensor
from ...cute.nvgpu.common import CopyUniversalOp, MmaUniversalOp
from ..machine import collectives, threads, tracing
from ..machine.collectives import UndefinedResult
from ..machine.failures import Dim3
from ..machine.threads import KernelError, OutOfBoundsError
from ..memory import vector
from ..memory.lanes import NotVectorizable
from ..memory.structs import _element_type
from ..memory.tensors import (SimTensor, Storage, TensorSSA, adopt, check_alignment, check_bounds, offsets, read,
                              register_tensor, write)
from .operands import check_copy, check_gemm, extents

# What an architecture's room (arch/) adds to cute.copy and cute.gemm, filled in when the room is imported:
# (class, function) pairs, looked up in order. sm_80 (arch/sm80.py): ldmatrix, cp.async, mma.sync; sm_90
# (arch/sm90.py): TMA, stmatrix, wgmma.
ATOM_COPIES: list = []      # (copy atom class, copy(atom, src, dst, **kwargs)): before anything is checked
OWN_COPIES: list = []       # (op class, copy(atom, src, dst)): checks its operands itself
CHECKED_COPIES: list = []   # (op class, copy(atom, src, dst)): after check_copy's rules
LATER_COPIES: list = []     # (op class, land(src, dst, destination, values, per_atom)): the destination written later
GEMMS: list = []            # (is_its_own(mma), gemm(mma, d, a, b, c)): before check_gemm's rules
WARP_MMA: list = [None]     # resolve(mma, payloads): an MMA atom over a warp's lanes, once every lane is there


# --------------------------------------------------------------------------------------------- ids

def thread_idx():
    """(x, y, z), as CuTeDSL gives it: unpack it (`tidx, _, _ = cute.arch.thread_idx()`); used as one number
    it is refused by name (failures.Dim3)."""
    return Dim3(threads.require_thread("cute.arch.thread_idx()").thread_idx, "thread_idx")


def block_idx():
    return Dim3(threads.require_thread("cute.arch.block_idx()").block_idx, "block_idx")


def block_dim():
    return Dim3(threads.require_thread("cute.arch.block_dim()").block.launch.block_dim, "block_dim")


def grid_dim():
    return Dim3(threads.require_thread("cute.arch.grid_dim()").block.launch.grid, "grid_dim")


def lane_idx():
    return threads.require_thread("cute.arch.lane_idx()").lane


def warp_idx():
    """The warp's index in the block. CuTeDSL computes it as `make_warp_uniform(tid // 32)`, a shfl.sync.idx of
    lane 0's value over the full warp (its PTX: `shfl.sync.idx.b32 %r3, %r2, 0, 31, -1`), so every lane that has
    not exited must be there, as at any shuffle (collectives.py)."""
    thread = threads.require_thread("cute.arch.warp_idx()")
    if getattr(thread, "vectorized", False):        # a vectorized launch has no branch on a thread's value
        return thread.warp
    # every lane computes the same value itself: a collective its lanes pass without waiting
    collectives.passing_collective(("shuffle", "idx", "warp_idx"), what="cute.arch.warp_idx()",
                                   instruction="shfl.sync", exited_ok=True, reads_lane_0=True)
    return thread.warp


def sync_threads():
    threads.barrier()


def barrier(barrier_id=None, number_of_threads=None):
    """cute.arch.barrier: the block barrier, or with barrier_id / number_of_threads a named barrier that
    only that many threads meet at."""
    thread = threads.require_thread("cute.arch.barrier()")
    block_threads = product(thread.block.launch.block_dim)
    if number_of_threads is None or (int(barrier_id or 0) == 0 and int(number_of_threads) == block_threads):
        return threads.barrier()
    if not is_int(number_of_threads) or int(number_of_threads) <= 0 or int(number_of_threads) % 32:
        raise CuteError(f"cute.arch.barrier(number_of_threads=...): a multiple of 32, got {number_of_threads!r}")
    if not is_int(barrier_id or 0) or not 0 <= int(barrier_id or 0) < 16:
        raise CuteError(f"cute.arch.barrier(barrier_id=...): 0 to 15, got {barrier_id!r}")
    threads.named_barrier(int(barrier_id or 0), int(number_of_threads))


def sync_warp(mask=0xFFFFFFFF, **kwargs):
    """cute.arch.sync_warp (bar.warp.sync): wait for every lane of `mask`; PTX makes no exception for lanes that
    have exited."""
    collectives.warp_collective(("sync_warp",), _no_reply, None, what="cute.arch.sync_warp()",
                            instruction="bar.warp.sync", mask=mask)


def _no_reply(payloads: dict) -> dict:
    return {}


# --------------------------------------------------------------------------------------------- reductions

class ReductionOp(enum.Enum):
    """cute.ReductionOp: how `TensorSSA.reduce` and warp reductions combine values."""
    ADD = "add"
    MUL = "mul"
    MAX = "max"
    MIN = "min"

    @property
    def numpy(self):
        return {"add": numpy.sum, "mul": numpy.prod, "max": numpy.max, "min": numpy.min}[self.value]

    def combine(self, a, b):
        return {"add": lambda: a + b, "mul": lambda: a * b, "max": lambda: max(a, b),
                "min": lambda: min(a, b)}[self.value]()


def _butterfly(values: dict, combine, group: int) -> dict:
    """What a shuffle-xor tree leaves in every lane: the combination over its group of `group` lanes
    (float sums are taken in the tree's order, as on the GPU). A lane that reads a lane that is not there
    (it returned from the kernel) reads an undefined value: UndefinedResult."""
    lanes = dict(values)
    offset = group // 2
    while offset >= 1:
        for lane in lanes:
            if lane ^ offset not in lanes:
                raise UndefinedResult(f"lane {lane} reads lane {lane ^ offset}'s value (the butterfly step of "
                                      f"offset {offset}), and lane {lane ^ offset} is not there")
        lanes = {lane: combine(value, lanes[lane ^ offset]) for lane, value in lanes.items()}
        offset //= 2
    return lanes


def warp_reduction(value, op, *, threads_in_group: int = 32, what: str = "cute.arch.warp_reduction()"):
    """Combine `value` over groups of `threads_in_group` lanes (a power of two up to 32): every lane gets
    its group's result (CuTeDSL's cute.arch.warp_reduction: shfl.sync.bfly steps over the full warp)."""
    if threads_in_group not in (1, 2, 4, 8, 16, 32):
        raise KernelError(f"warp_reduction: threads_in_group must be a power of two up to 32, got "
                          f"{threads_in_group!r}")
    if threads_in_group == 1:
        return value        # no shuffle at all (CuTeDSL emits none): not a collective, any lane may call it alone
    combine = op if callable(op) and not isinstance(op, ReductionOp) else op.combine
    return collectives.warp_collective(("warp_reduction", threads_in_group),
                                   lambda payloads: _butterfly(payloads, combine, threads_in_group), value,
                                   what=what, instruction="shfl.sync", exited_ok=True)


def warp_reduction_sum(value, *, threads_in_group: int = 32):
    return warp_reduction(value, lambda a, b: a + b, threads_in_group=threads_in_group,
                          what="cute.arch.warp_reduction_sum()")


def warp_reduction_max(value, *, threads_in_group: int = 32):
    return warp_reduction(value, lambda a, b: max(a, b), threads_in_group=threads_in_group,
                          what="cute.arch.warp_reduction_max()")


def _source_lane(kind: str, lane: int, offset: int, clamp: int) -> int:
    """shfl.sync's source lane, as the PTX ISA computes it from b (`offset`) and c (`mask_and_clamp`: the clamp
    in bits 0-4, the segment mask in bits 8-12); out of range, the lane's own. CuTeDSL 4.8.1's default c is 31
    for idx, down and bfly and 0 for up (`shfl.sync.up.b32 %r8, %r6, 1, 0, -1` in its PTX): lane i reads lane
    i - b, and lanes below b keep their own value, as CUDA's __shfl_up_sync."""
    b, c, segment = offset & 31, clamp & 31, (clamp >> 8) & 31
    highest = (lane & segment) | (c & ~segment)
    if kind == "up":
        j = lane - b
        ok = j >= highest
    elif kind == "down":
        j = lane + b
        ok = j <= highest
    elif kind == "bfly":
        j = lane ^ b
        ok = j <= highest
    else:
        j = (lane & segment) | (b & ~segment)
        ok = j <= highest
    return j if ok else lane


def _shuffle(kind):
    name = f"shuffle_sync_{kind}" if kind != "idx" else "shuffle_sync"
    default_clamp = 0 if kind == "up" else 31     # CuTeDSL 4.8.1: shfl.up clamps at the segment's lower end

    def shuffle(value, offset, mask=0xFFFFFFFF, mask_and_clamp=default_clamp, **kwargs):
        def resolve(payloads):
            replies = {}
            for lane in payloads:
                offset_, clamp = payloads[lane][1]
                source = _source_lane(kind, lane, int(offset_), int(clamp))
                if source not in payloads:
                    raise UndefinedResult(f"lane {lane} reads lane {source}'s value, and lane {source} is not "
                                          f"there")
                replies[lane] = payloads[source][0]
            return replies
        return collectives.warp_collective(("shuffle", kind), resolve, (value, (offset, mask_and_clamp)),
                                       what=f"cute.arch.{name}()", instruction="shfl.sync", mask=mask,
                                       exited_ok=True)
    shuffle.__name__ = name
    return shuffle


shuffle_sync = _shuffle("idx")
shuffle_sync_bfly = _shuffle("bfly")
shuffle_sync_down = _shuffle("down")
shuffle_sync_up = _shuffle("up")


def _vote(kind):
    name = f"vote_{kind}_sync"

    def vote(pred, mask=0xFFFFFFFF, **kwargs):
        """vote.sync over the lanes of `mask` that have not exited (an exited lane counts as absent)."""
        def resolve(payloads):
            values = [bool(v) for v in payloads.values()]
            if kind == "ballot":
                bits = sum(1 << lane for lane, v in payloads.items() if v)
                result = bits - (1 << 32) if bits >= 1 << 31 else bits     # an Int32, as CuTeDSL returns it
            elif kind == "any":
                result = any(values)
            elif kind == "all":
                result = all(values)
            else:
                result = all(values) or not any(values)
            return dict.fromkeys(payloads, result)
        return collectives.warp_collective(("vote", kind), resolve, bool(pred), what=f"cute.arch.{name}()",
                                       instruction="vote.sync", mask=mask, exited_ok=True)
    vote.__name__ = name
    return vote


vote_ballot_sync = _vote("ballot")
vote_any_sync = _vote("any")
vote_all_sync = _vote("all")
vote_uni_sync = _vote("uni")


# --------------------------------------------------------------------------------------------- registers

def make_rmem_tensor(layout_or_shape, dtype):
    """Registers of this thread, laid out by `layout_or_shape` (a shape means compact column-major)."""
    layout = layout_or_shape if isinstance(layout_or_shape, (Layout, ComposedLayout)) else make_layout(layout_or_shape)
    if getattr(threads._current[0], "vectorized", False):   # every thread of a vectorized batch (memory/vector.py)
        return vector.register_tensor(layout, _element_type(dtype))
    return register_tensor(layout, _element_type(dtype))


def make_fragment_like(src, dtype=None):
    """Registers shaped like `src` (a tensor or layout), compact, in src's element type or `dtype`."""
    if isinstance(src, Tensor):
        shape = src.layout.shape
        element_type = dtype or src.element_type or types.Float32
    else:
        shape = _layout_of(src).shape
        element_type = dtype or types.Float32
    if getattr(threads._current[0], "vectorized", False):
        return vector.register_tensor(make_layout(shape), _element_type(element_type))
    return register_tensor(make_layout(shape), _element_type(element_type))


make_rmem_tensor_like = make_fragment_like


def _as_sim(tensor, what: str) -> SimTensor:
    tensor = adopt(tensor)
    if not isinstance(tensor, SimTensor):
        raise CuteError(f"{what}: expected a tensor over memory, got {tensor!r}")
    return tensor


# --------------------------------------------------------------------------------------------- copies

def _atom_of(copy) -> CopyAtom:
    if isinstance(copy, CopyAtom):
        return copy
    raise CuteError(f"cute.copy: the first argument must be a copy atom or a TiledCopy, got {copy!r}")


def _values_per_atom(atom: CopyAtom) -> int:
    return size(atom.layout_src_tv, mode=[1]) if isinstance(atom.layout_src_tv.shape, tuple) else 1


def _predicate_mask(pred, src: SimTensor, per_atom: int, count: int) -> numpy.ndarray | None:
    """One bool per element of src: the predicate entry of the atom (copy instruction) it belongs to."""
    if pred is None:
        return None
    pred = _as_sim(pred, "cute.copy(pred=...)")
    first = size(src.layout, mode=[0]) if is_tuple(src.layout.shape) else size(src.layout)
    instances_in_first = max(1, first // per_atom)
    index = numpy.arange(count)
    in_first, rest = index % first, index // first
    entry = in_first // per_atom + instances_in_first * rest
    pred_values = pred.storage.array[pred.addresses()]
    if entry.max(initial=0) >= pred_values.size:
        raise CuteError(f"cute.copy: pred has {pred_values.size} entries but the copy has "
                        f"{instances_in_first * max(1, count // first)} atoms ({fmt(src.layout.shape)} in atoms "
                        f"of {per_atom})")
    return pred_values[entry].astype(bool)


def copy(atom_or_tiled_copy, src, dst, *, pred=None, **kwargs):
    """cute.copy: move src to dst with the atom's instruction; with `pred`, only the atoms whose predicate
    is true (one entry per copy instruction, i.e. per vector)."""
    atom = _atom_of(atom_or_tiled_copy)
    for kind, room_copy in ATOM_COPIES:     # an atom of an architecture's own (sm_90's TMA)
        if isinstance(atom, kind):
            return room_copy(atom, src, dst, **kwargs)
    src, dst = _as_sim(src, "cute.copy source"), _as_sim(dst, "cute.copy destination")
    for kind, room_copy in OWN_COPIES:      # an instruction that checks its own operands (sm_90's stmatrix)
        if isinstance(atom.op, kind):
            return room_copy(atom, src, dst)
    check_copy(atom, src, dst)       # what CuTeDSL refuses to compile, refused by the same rules
    for kind, room_copy in CHECKED_COPIES:  # a warp's exchange (sm_80's ldmatrix)
        if isinstance(atom.op, kind):
            return room_copy(atom, src, dst)
    per_atom = _values_per_atom(atom)
    if atom.value_type.width * per_atom > 128 and not isinstance(atom.op, CopyUniversalOp):
        raise CuteError(f"cute.copy: {atom.op} moves at most 128 bits per instruction")
    mask = _predicate_mask(pred, src, per_atom, size(src.layout))
    if mask is None:
        source, destination = src.checked_addresses(), dst.checked_addresses()
    else:
        source, destination = src.addresses(), dst.addresses()
        check_bounds(src, source, mask)
        check_bounds(dst, destination, mask)
    check_alignment(src, source, per_atom, "cute.copy source")
    check_alignment(dst, destination, per_atom, "cute.copy destination")
    land = None                      # a copy whose destination is written later (sm_80's cp.async)
    for kind, landing in LATER_COPIES:
        if isinstance(atom.op, kind):
            land = landing
            break
    if mask is not None and land is not None:
        # a predicated-off cp.async still writes its destination, with zeros (src-size 0: zero fill);
        # NVIDIA's sgemm relies on it for the partial first K tile
        values = numpy.zeros(destination.shape, dst.storage.array.dtype)
        values[mask] = src.storage.array[source[mask]]
        read(src.storage, source[mask], src, vector=per_atom if per_atom > 1 else None)
        check_bounds(dst, destination)
        return land(src, dst, destination, values, per_atom)
    if mask is not None:
        source, destination = source[mask], destination[mask]
    values = src.storage.array[source]
    read(src.storage, source, src, vector=per_atom if per_atom > 1 else None)
    if land is not None:
        return land(src, dst, destination, values, per_atom)
    write(dst.storage, destination, dst, vector=per_atom if per_atom > 1 else None)
    dst.storage.array[destination] = values


def autovec_copy(src, dst):
    """cute.autovec_copy: element-wise copy; the widest aligned vectors are used (as the compiler does)."""
    src, dst = _as_sim(src, "autovec_copy source"), _as_sim(dst, "autovec_copy destination")
    if size(src.layout) != size(dst.layout):
        raise CuteError(f"autovec_copy: source {fmt(src.layout.shape)} and destination "
                        f"{fmt(dst.layout.shape)} differ in size")
    source, destination = src.checked_addresses(), dst.checked_addresses()
    read(src.storage, source, src)
    values = src.storage.array[source]
    write(dst.storage, destination, dst)
    dst.storage.array[destination] = values


# --------------------------------------------------------------------------------------------- mma

def gemm(mma, d, a, b, c, **kwargs):
    """cute.gemm(tiled_mma, D, A, B, C): D = A * B + C over the fragments' (V, M, K), (V, N, K), (V, M, N)
    modes, accumulating over K."""
    if not isinstance(mma, MmaAtom):
        raise CuteError(f"cute.gemm: the first argument must be an MMA atom or TiledMma, got {mma!r}")
    d, a, b, c = (_as_sim(t, f"cute.gemm {name}") for t, name in ((d, "D"), (a, "A"), (b, "B"), (c, "C")))
    for is_its_own, room_gemm in GEMMS:     # an MMA of an architecture's own (sm_90's wgmma)
        if is_its_own(mma):
            return room_gemm(mma, d, a, b, c)
    profile = check_gemm(mma, d, a, b, c)     # what CuTeDSL refuses (and what no MMA can run), by name
    if size(mma.thr_id) == 1:
        return _gemm_per_thread(d, a, b, c, profile)
    key = ("mma", mma.shape_mnk)
    collectives.warp_collective(key, functools.partial(WARP_MMA[0], mma),
                            (_values_3d(a, profile, "A"), _values_3d(b, profile, "B"),
                             _values_3d(c, profile, "C"), d), what="mma.sync (cute.gemm)", instruction="mma.sync")


def _values_3d(tensor: SimTensor, profile: str, operand: str) -> numpy.ndarray:
    """(V, X, Y) values of a fragment, its modes read as CuTeDSL's dispatch `profile` reads them
    (operands.gemm_profile: a (V, M) fragment gets Y = 1, an (M, K) one V = 1)."""
    addresses = tensor.checked_addresses()
    return tensor.storage.array[addresses].reshape(_reversed_extents(tensor.layout.shape, profile, operand)
                                                   ).transpose(2, 1, 0)


@functools.lru_cache(maxsize=4096)
def _reversed_extents(shape, profile: str, operand: str) -> tuple:
    """A fragment's (V, X, Y) sizes under the dispatch `profile`, last first."""
    return tuple(extents(shape, profile, operand)[::-1])


def _store_3d(tensor: SimTensor, values: numpy.ndarray):
    addresses = tensor.addresses()
    tensor.storage.array[addresses] = values.transpose(2, 1, 0).reshape(-1)


def _gemm_per_thread(d, a, b, c, profile: str):
    """One thread's FMAs: D[v, m, n] = C[v, m, n] + sum_k A[v, m, k] * B[v, n, k] (one-value atoms)."""
    av, bv, cv = _values_3d(a, profile, "A"), _values_3d(b, profile, "B"), _values_3d(c, profile, "C")
    accumulator = cv.astype(numpy.float64) if cv.dtype == numpy.float64 else cv.astype(numpy.float32)
    product_ = numpy.einsum("vmk,vnk->vmn", av.astype(accumulator.dtype), bv.astype(accumulator.dtype))
    _store_3d(d, (accumulator + product_).astype(d.storage.array.dtype))


# --------------------------------------------------------------------------------------------- misc

def elem_less(a, b):
    """cute.elem_less (inttuple.elem_less); in a vectorized launch, per thread where the coordinate differs
    between threads (memory/vector.py)."""
    if getattr(threads._current[0], "vectorized", False):
        return vector.elem_less(a, b)
    return _elem_less(a, b)


def printf(fmt_string, *args, **kwargs):
    """cute.printf: printed by the thread that calls it (the simulator keeps the output in order: block by
    block, thread by thread) when the code runs, after what the trace printed (machine/tracing.py); `{}` placeholders,
    or C-style `%d` / `%f`. Values print as CuTeDSL's run-time printf prints them: integers with %d, floats
    with %f (`3.140000`), a Boolean as 1 or 0, tuples and layouts with their run-time values (`(8,2):(1,8)`).
    A format that is not a string is printed as a value (`cute.printf(layout(0))`)."""
    if not isinstance(fmt_string, str):
        fmt_string, args = "{}", (fmt_string,) + args
    if getattr(threads._current[0], "vectorized", False):
        raise NotVectorizable("printf prints thread by thread")
    try:
        if "{" in fmt_string:
            text = fmt_string.format(*[_printed(a) for a in args])
        elif "%" in fmt_string:
            text = fmt_string % tuple(_c_value(a) for a in args)
        else:
            text = " ".join([fmt_string] + [_printed(a) for a in args])
    except (IndexError, TypeError, ValueError, KeyError) as error:
        raise CuteError(f"cute.printf: the format {fmt_string!r} does not fit the {len(args)} values given "
                        f"({error})") from None
    tracing.emit(text)
    thread = threads.current()
    if thread is not None:
        thread.block.launch.report.printed.append(text)


def _printed(value) -> str:
    """One value as the run-time printf shows it."""
    if isinstance(value, (bool, numpy.bool_)):
        return "1" if value else "0"
    if isinstance(value, (int, numpy.integer)):
        return str(int(value))
    if isinstance(value, (float, numpy.floating)):
        return "%f" % float(value)
    if is_tuple(value):
        return "(" + ",".join(_printed(v) for v in value) + ")"
    if isinstance(value, Layout):
        return f"{_printed(value.shape)}:{_printed(value.stride)}"
    if isinstance(value, (Tensor, TensorSSA, numpy.ndarray, str)):
        return str(value)
    if hasattr(value, "__index__"):         # a DSL integer
        return str(value.__index__())
    if hasattr(value, "__float__"):         # a DSL float
        return "%f" % float(value)
    return str(value)


def _c_value(value):
    """A value for a C-style (`%d`, `%f`) format."""
    if isinstance(value, (bool, numpy.bool_)):
        return int(value)
    if isinstance(value, (numpy.floating, numpy.integer)):
        return value.item()
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    if is_tuple(value) or isinstance(value, Layout):
        return _printed(value)
    if hasattr(value, "__index__"):
        return value.__index__()
    if hasattr(value, "__float__"):
        return float(value)
    return value
