"""Hopper (sm_90) inside a simulated kernel: TMA copies, warpgroup MMA (wgmma), stmatrix, elect_one, the
proxy fence and bulk-copy groups, with CUDA's asynchrony checked rather than assumed.

A GPU runs these asynchronously: a TMA copy lands whenever the copy engine gets to it and reports its bytes
to an mbarrier; a wgmma reads shared memory until its group is retired by `warpgroup.wait_group`. The
simulator does each at once (a TMA copy writes shared memory and completes its bytes when it is issued, a
wgmma multiplies when it is issued) and instead checks the order a GPU would need, by happens-before:

  * a wgmma may read a stage only after its thread's wait on the stage's full mbarrier returned for the
    phase that the TMA copy's bytes complete. Waiting with the other parity returns at once (the phase
    before counts as complete), so the error says "waited on the wrong phase";
  * a TMA copy may overwrite a stage only when every wgmma that read it has been retired
    (`warpgroup.wait_group`) and released (an arrival on an mbarrier after the retirement) and the copying
    thread has waited on that mbarrier's phase: else "stage reused before its consumer released it";
  * a wgmma needs `warpgroup.fence()` before it when its accumulators were written by ordinary code since
    the thread's last fence (the zero fill), and its accumulators cannot be read or written before
    `warpgroup.wait_group` retired it: "missing fence" / "read while in flight";
  * a TMA store reads shared memory through the async proxy: what stmatrix (or any store) wrote must be
    followed by `cute.arch.fence_proxy("async.shared", space="cta")` in the writing thread; a thread that
    exits with a TMA store it did not wait for (`cp_async_bulk_wait_group(0, read=True)`) is refused;
  * an mbarrier phase completes on arrivals *and* bytes (ops/pipeline.py); a TMA copy whose barrier expects no
    bytes is refused (no `mbarrier_arrive_and_expect_tx` before it, or one that announced too few).

wgmma, wait_group and commit_group are warp-synchronous (.sync.aligned): what they read and when it is
retired is kept per warp, and an arrival by any lane releases its warp's retired groups. A TMA copy issued
by every lane of a warp is one copy (CuTeDSL elects one lane), as on a GPU. Clusters larger than one CTA
are not simulated (multicast is refused by name).

A room of the architecture floor (arch/__init__.py): it builds on sm_80's room (stmatrix is ldmatrix's exchange
the other way) and registers, when imported, what `cute.copy` and `cute.gemm` do with its atoms
(ops/device.py's tables), what an mbarrier arrival and wait note for it (ops/pipeline.py), the checks at a
thread's exit and a block's end (machine/scheduler.py) and on register and shared-memory accesses
(memory/tensors.py); CUTE_ARCH and NVGPU_WARPGROUP are the names it adds to `cute.arch` and
`cute.nvgpu.warpgroup`.
"""
from __future__ import annotations

import sys
from dataclasses import dataclass, field

import numpy

from ...cute.inttuple import CuteError, flatten, is_int, is_tuple
from ...cute.layout import Basis, size
from ...cute.nvgpu.cpasync import TmaCopyAtom
from ...cute.nvgpu.warp import StMatrix8x8x16bOp
from ...cute.tensor import Tensor
from ..machine import collectives, scheduler, threads
from ..memory import tensors
from ..memory.tensors import SimTensor
from ..ops import device, pipeline
from .sm80 import _tv_table, resolve_exchange


class HopperError(threads.KernelError):
    """A Hopper ordering mistake: a wrong phase, a stage reused while read, a missing fence."""


# --------------------------------------------------------------------------------------------- state

@dataclass(eq=False)
class _TmaWrite:
    number: int
    barrier: object                  # pipeline.MBarrier the bytes complete on
    phase: int                       # the barrier's completed count once these bytes landed
    site: str
    readers: list = field(default_factory=list)    # _Group records of the wgmmas that read it
    unannounced: bool = False        # issued while its barrier's phase had no arrival and no bytes announced


@dataclass(eq=False)
class _Group:
    warp: int
    site: str
    committed: bool = False
    retired: bool = False
    released: tuple | None = None    # (barrier key, completed count) of the phase that carried its release
    pending_release: bool = False


@dataclass(eq=False)
class _Warp:
    issued: int = 0                  # wgmmas the warp has issued (the first lane to issue one records it)
    commits: int = 0
    waits: int = 0
    tma: int = 0                     # TMA copies issued (one lane's call issues the warp's copy)
    open: _Group | None = None
    groups: list = field(default_factory=list)


@dataclass(eq=False)
class _Block:
    writes: list = field(default_factory=list)
    last: dict = field(default_factory=dict)       # id(storage) -> int32 array: last TMA write per element
    warps: dict = field(default_factory=dict)


def _block(thread) -> _Block:
    state = thread.block.__dict__.get("hopper")
    if state is None:
        state = thread.block.__dict__["hopper"] = _Block()
    return state


def _warp(thread) -> _Warp:
    warps = _block(thread).warps
    found = warps.get(thread.warp)
    if found is None:
        found = warps[thread.warp] = _Warp()
    return found


def _counter(thread, name: str) -> int:
    value = thread.__dict__.get(name, 0)
    thread.__dict__[name] = value + 1
    return value


def _site() -> str:
    return threads.site_text(threads.user_site(2))


def check_block_end(block):
    """The block is done: every TMA load must have been waited for (its bytes' phase seen by some thread). A
    copy nobody waited for may still be writing shared memory that the block reuses or gives up."""
    state = block.__dict__.get("hopper")
    if state is None:
        return
    seen: dict = {}
    for thread in block.threads or ():
        for key, completed in thread.__dict__.get("mbarrier_seen", {}).items():
            seen[key] = max(seen.get(key, 0), completed)
    for record in state.writes:
        if seen.get(record.barrier.key, 0) < record.phase:
            _fail(f"the TMA copy at {record.site} (phase {record.phase - 1} of mbarrier {record.barrier.index}) was "
                  f"never waited for: no thread waited for the phase its bytes complete, so on a GPU it may still "
                  f"be writing shared memory when the block reuses it (the epilogue's tile) or exits. Load only "
                  f"the k-tiles that exist, each into a stage that a consumer then waits for")


def _fail(message: str):
    raise HopperError(message)


# --------------------------------------------------------------------------------------------- elect_one

class _SkipBlock(Exception):
    pass


class elect_one:  # noqa: N801 (CuTeDSL's name)
    """`with cute.arch.elect_one():` — the block runs in one lane of the warp (elect.sync over the whole warp:
    every lane must reach it). The other lanes skip it, as the `if` CuTeDSL makes of it skips it."""

    def __enter__(self):
        thread = threads.require_thread("cute.arch.elect_one()")
        elected = collectives.warp_collective(("elect_one",), _elect, thread.lane, what="cute.arch.elect_one()",
                                          instruction="elect.sync")
        self._skipping = not elected
        if elected:
            thread.__dict__["elected"] = True      # sm100.py: a tcgen05 MMA refuses to be issued in here
            return True
        # skip the with-block: a trace function on the caller's frame raises before its first line runs
        self._previous = sys.gettrace()
        frame = sys._getframe(1)
        sys.settrace(lambda *args: None)
        frame.f_trace = self._skip
        return False

    @staticmethod
    def _skip(frame, event, arg):
        raise _SkipBlock

    def __exit__(self, kind, value, traceback):
        if not self._skipping:
            threads.current().__dict__.pop("elected", None)
            return False
        sys.settrace(self._previous)
        return kind is _SkipBlock


def _elect(payloads: dict) -> dict:
    first = min(payloads)
    return {lane: lane == first for lane in payloads}


# --------------------------------------------------------------------------------------------- TMA

def _coordinates(tensor: Tensor, dims: int) -> list:
    """Per TMA dimension, the coordinate of every element of a coordinate tensor (layout order)."""
    shapes = flatten(tensor.layout.shape) if is_tuple(tensor.layout.shape) else (tensor.layout.shape,)
    strides = flatten(tensor.layout.stride) if is_tuple(tensor.layout.stride) else (tensor.layout.stride,)
    total = int(numpy.prod(shapes))
    index = numpy.arange(total, dtype=numpy.int64)
    origin = tensor.iterator if is_tuple(tensor.iterator) else (tensor.iterator,)
    origin = flatten(origin) if any(is_tuple(o) for o in origin) else origin
    result = [numpy.full(total, int(origin[d]) if d < len(origin) else 0, numpy.int64) for d in range(dims)]
    step = 1
    for extent, stride in zip(shapes, strides):
        part = (index // step) % extent
        step *= extent
        if isinstance(stride, Basis):
            mode = stride.mode if is_int(stride.mode) else stride.mode[0]
            result[mode] += part * stride.scale
        elif stride != 0:
            raise CuteError(f"a TMA copy's global side must be the coordinate tensor of make_tiled_tma_atom "
                            f"(tiled, partitioned), got a layout with stride {stride}")
    return result


def _global_offsets(atom, coordinates: list):
    gmem = atom.gmem
    shape, stride = gmem.layout.shape, gmem.layout.stride
    inside = numpy.ones(coordinates[0].size, bool)
    offset = numpy.full(coordinates[0].size, int(getattr(gmem, "base", 0)), numpy.int64)
    for mode, dim in enumerate(atom.tma_dims):
        if dim is None:                 # a mode of extent 1 is no TMA dimension: its coordinate is 0
            continue
        c = coordinates[dim]
        inside &= (c >= 0) & (c < int(shape[mode]))
        offset += c * int(stride[mode])
    return inside, offset


def tma_copy(atom, src, dst, *, tma_bar_ptr=None, mcast_mask=None, **kwargs):
    """cute.copy with a TMA atom: a box between global memory (src or dst: the coordinate tensor) and shared
    memory, issued once per warp."""
    thread = threads.require_thread("a TMA copy")
    if mcast_mask is not None and int(mcast_mask) not in (0, 1):
        raise CuteError(f"cute.copy(..., mcast_mask={int(mcast_mask):#b}): TMA multicast writes into the shared "
                        f"memory of several CTAs of a cluster, which the simulator does not run (clusters of "
                        f"one CTA only: CLUSTER_M = 1)")
    warp = _warp(thread)
    mine = _counter(thread, "hopper_tma")
    if mine < warp.tma:
        return                          # another lane of this warp issued it
    warp.tma += 1
    if atom.is_load:
        if not (isinstance(src, Tensor) and src.is_coordinate):
            raise CuteError("cute.copy with a TMA load atom: the source must be the TMA coordinate tensor "
                            "(from make_tiled_tma_atom, tiled and partitioned with tma_partition)")
        smem, coords = dst, src
        if tma_bar_ptr is None:
            raise CuteError("cute.copy with a TMA load atom needs tma_bar_ptr=: the mbarrier whose phase the "
                            "copy's bytes complete (the stage's full barrier)")
    else:
        if not (isinstance(dst, Tensor) and dst.is_coordinate):
            raise CuteError("cute.copy with a TMA store atom: the destination must be the TMA coordinate tensor")
        smem, coords = src, dst
    if not isinstance(smem, SimTensor) or smem.storage.space != "smem":
        raise CuteError(f"a TMA copy moves between global and shared memory; its shared side is {smem!r}")
    if size(smem.layout) != size(coords.layout):
        raise CuteError(f"a TMA copy's shared view ({size(smem.layout)} elements) and global view "
                        f"({size(coords.layout)}) differ in size: slice both the same way (t[None, k])")
    addresses = smem.checked_addresses()
    inside, offsets = _global_offsets(atom, _coordinates(coords, len(atom.tma_dims)))
    gstorage = atom.gmem.storage
    state = _block(thread)
    if atom.is_load:
        _check_overwrite(thread, state, smem.storage, addresses)
        barrier = pipeline.barrier_at(tma_bar_ptr, f"the TMA copy at {_site()}")
        values = numpy.zeros(addresses.size, smem.storage.array.dtype)
        values[inside] = gstorage.array[offsets[inside]]
        smem.storage.array[addresses] = values
        # bytes may land before they are announced (the tx-count goes below zero until the arrival), so this is
        # judged when the stage is read: the phase these bytes complete is the one its readers must wait for
        record = _TmaWrite(len(state.writes), barrier, barrier.completed + 1, _site(),
                           unannounced=barrier.pending == barrier.count and barrier.tx <= 0)
        state.writes.append(record)
        last = state.last.get(id(smem.storage))
        if last is None:
            last = state.last[id(smem.storage)] = numpy.full(smem.storage.array.size, -1, numpy.int32)
        last[addresses] = record.number
        barrier.complete_tx(addresses.size * smem.storage.bytes_per_element, thread.block)
    else:
        _check_fenced(thread, smem.storage, addresses)
        pending = thread.__dict__.setdefault("bulk_pending", [])
        pending.append(_site())
        gstorage.array[offsets[inside]] = smem.storage.array[addresses[inside]]


def _check_overwrite(thread, state: _Block, storage, addresses):
    last = state.last.get(id(storage))
    if last is None:
        return
    seen = thread.__dict__.get("mbarrier_seen", {})
    for number in numpy.unique(last[addresses]):
        if number < 0:
            continue
        if not state.writes[number].readers:
            _fail(f"stage reused before its consumer released it: the TMA copy at {_site()} overwrites shared "
                  f"memory that the copy at {state.writes[number].site} filled and no MMA (wgmma, tcgen05) has read yet. The "
                  f"producer must wait on the stage's empty barrier (for the consumers' release) before "
                  f"loading into it again")
        for group in state.writes[number].readers:
            if hasattr(group, "check_overwrite"):       # a tcgen05 MMA's (sm100.py): its commit releases the stage
                group.check_overwrite(_site(), seen)
                continue
            if not group.retired:
                uncommitted = "" if group.committed else (" (its wgmmas were not committed when the warp last "
                                                          "waited: warpgroup.commit_group() comes before "
                                                          "wait_group, which counts only committed groups)")
                _fail(f"stage reused before its consumer released it: the TMA copy at {_site()} overwrites shared "
                      f"memory that warp {group.warp}'s wgmma (at {group.site}) is still reading; its group has "
                      f"not been retired{uncommitted}. A consumer may arrive on the stage's empty barrier only "
                      f"after warpgroup.wait_group has retired the wgmmas that read the stage")
            if group.released is None or seen.get(group.released[0], -1) < group.released[1]:
                _fail(f"stage reused before its consumer released it: the TMA copy at {_site()} overwrites shared "
                      f"memory that warp {group.warp}'s wgmma (at {group.site}) read, and this thread has not "
                      f"waited for that warp's release (an arrival on the stage's empty barrier, whose phase "
                      f"this thread must wait for before loading into the stage)")


# --------------------------------------------------------------------------------------------- bulk groups, fences

def fence_proxy(kind=None, *args, space=None, **kwargs):
    """cute.arch.fence_proxy: with "async..." kinds, what this thread wrote through ordinary stores is
    ordered before later async-proxy reads (a TMA store)."""
    thread = threads.require_thread("cute.arch.fence_proxy")
    if kind is None or "async" in str(kind):
        thread.__dict__["unfenced"] = {}
        pipeline.fence_inits(thread)       # generic-proxy writes, mbarrier.init included, reach the async proxy


def note_generic_write(thread, storage, addresses):
    """A store to shared memory that a TMA copy reads: remembered until the writer's fence_proxy."""
    if thread is None:
        return
    unfenced = thread.__dict__.setdefault("unfenced", {})
    unfenced.setdefault(id(storage), []).append(numpy.asarray(addresses).copy())


def _check_fenced(thread, storage, addresses):
    for other in thread.block.threads or ():
        pieces = other.__dict__.get("unfenced", {}).get(id(storage))
        if pieces and numpy.isin(addresses, numpy.concatenate(pieces)).any():
            _fail(f"missing fence: the TMA store at {_site()} reads shared memory that {other.describe()} wrote "
                  f"with ordinary stores (stmatrix) and did not fence: call cute.arch.fence_proxy("
                  f"\"async.shared\", space=\"cta\") after writing and before the barrier that precedes the "
                  f"store")


def cp_async_bulk_commit_group(**kwargs):
    thread = threads.require_thread("cute.arch.cp_async_bulk_commit_group")
    pending = thread.__dict__.get("bulk_pending", [])
    if pending:
        thread.__dict__.setdefault("bulk_groups", []).append(pending)
        thread.__dict__["bulk_pending"] = []


def cp_async_bulk_wait_group(group=0, *args, read=False, **kwargs):  # noqa: A002
    thread = threads.require_thread("cute.arch.cp_async_bulk_wait_group")
    groups = thread.__dict__.get("bulk_groups", [])
    keep = int(group)
    del groups[:max(0, len(groups) - keep)]


def check_exit(thread):
    """A thread that returns: its TMA stores must have read shared memory (the block's shared memory goes)."""
    if thread.__dict__.get("bulk_pending") or thread.__dict__.get("bulk_groups"):
        sites = thread.__dict__.get("bulk_pending", []) + [s for g in thread.__dict__.get("bulk_groups", []) for s in g]
        _fail(f"the thread returns while its TMA store (at {sites[0]}) may still be reading shared memory, which "
              f"the block gives up when it exits: cute.arch.cp_async_bulk_commit_group() then "
              f"cute.arch.cp_async_bulk_wait_group(0, read=True) before returning")


# --------------------------------------------------------------------------------------------- wgmma

class Field:
    """warpgroup.Field: the runtime fields of a wgmma TiledMMA (`tiled_mma.set(Field.ACCUMULATE, b)`)."""
    ACCUMULATE = "accumulate"


def runtime_fields(mma) -> dict:
    """The run-time fields of an MMA atom, shared by its slices: {"host": the value set in host code (or the
    atom's initial false), id(...) per thread: (the fields, the value that thread set)}."""
    box = mma.__dict__.get("_runtime_fields")
    if box is None:
        box = {"host": False}
        object.__setattr__(mma, "_runtime_fields", box)
    return box


def set_accumulate(mma, value: bool):
    """tiled_mma.set(Field.ACCUMULATE, value): in a kernel, this thread's atom only (each thread holds the
    atom's value in its registers); on the host, what every thread's atom starts with."""
    box = runtime_fields(mma)
    thread = threads.current()
    if thread is None:
        box["host"] = value
        return
    mine = thread.__dict__.get("mma_fields")
    if mine is None:
        mine = thread.__dict__["mma_fields"] = {}
    mine[id(box)] = (box, value)


def accumulates(mma) -> bool:
    """Whether a wgmma with this atom adds its product to C (wgmma's scale-d predicate): the field's value in
    the running thread. CuTeDSL 4.8.1 makes the wgmma atom with accumulate false (warpgroup/mma.py,
    `make_atom(ty, [Boolean(False)...])`); the PTX passes it as the predicate: false, D = A B, overwriting."""
    box = runtime_fields(mma)
    thread = threads.current()
    if thread is not None:
        found = thread.__dict__.get("mma_fields", {}).get(id(box))
        if found is not None:
            return found[1]
    return box["host"]


def _aligned(key, what: str, instruction: str):
    """wgmma.* are .sync.aligned over the warpgroup: every one of its 128 threads executes the same one; each
    does its own part, so they pass it without waiting, checked as if they waited (collectives.py)."""
    collectives.passing_collective(key, what=what, instruction=instruction, group=WARPGROUP)


WARPGROUP = 128


def fence(**kwargs):
    """warpgroup.fence (wgmma.fence): orders this thread's earlier register writes before its next wgmmas."""
    thread = threads.require_thread("warpgroup.fence()")
    _aligned(("wgmma.fence",), "warpgroup.fence()", "wgmma.fence")
    thread.__dict__["wgmma_fences"] = thread.__dict__.get("wgmma_fences", 0) + 1


def commit_group(**kwargs):
    """warpgroup.commit_group: the wgmmas issued since the last commit become one group."""
    thread = threads.require_thread("warpgroup.commit_group()")
    _aligned(("wgmma.commit_group",), "warpgroup.commit_group()", "wgmma.commit_group")
    opened = thread.__dict__.get("wgmma_open")
    if opened:
        thread.__dict__.setdefault("wgmma_groups", []).append(opened)
        thread.__dict__["wgmma_open"] = set()
    warp = _warp(thread)
    if _counter(thread, "wgmma_commits") == warp.commits:
        warp.commits += 1
        if warp.open is not None:
            warp.open.committed = True
            warp.groups.append(warp.open)
            warp.open = None


EVENTS: list | None = None     # a check sets a list: ("wait_group", thread, running, committed), ("mbarrier_wait", ...)


def log(*event):
    if EVENTS is not None:
        EVENTS.append(event)


def wait_group(n, **kwargs):
    """warpgroup.wait_group(n): wait until at most n committed groups are still running."""
    if not is_int(n) or int(n) < 0:
        raise CuteError(f"warpgroup.wait_group(n): n must be a non-negative int, got {n!r}")
    thread = threads.require_thread("warpgroup.wait_group()")
    _aligned(("wgmma.wait_group", int(n)), "warpgroup.wait_group()", "wgmma.wait_group")
    groups = thread.__dict__.get("wgmma_groups", [])
    while len(groups) > int(n):
        for storage in groups.pop(0):
            storage.wgmma_busy -= 1
    if EVENTS is not None:
        EVENTS.append(("wait_group", thread.linear, len(groups), thread.__dict__.get("wgmma_commits", 0)))
    warp = _warp(thread)
    if _counter(thread, "wgmma_waits") == warp.waits:
        warp.waits += 1
        running = [g for g in warp.groups if not g.retired]
        for group in running[:max(0, len(running) - int(n))]:
            group.retired = True


def releasing(thread, barrier):
    """An arrival by `thread` on `barrier`: its warp's retired wgmma groups are released with the phase."""
    warps = thread.block.__dict__.get("hopper")
    if warps is None:
        return
    warp = warps.warps.get(thread.warp)
    if warp is None:
        return
    for group in warp.groups:
        if group.retired and group.released is None and not group.pending_release:
            group.pending_release = True
            barrier.releasing.append(group)


def _check_reads(thread, state: _Block, tensor: SimTensor, addresses, what: str, who: str = "wgmma"):
    last = state.last.get(id(tensor.storage))
    seen = thread.__dict__.get("mbarrier_seen", {})
    found = numpy.unique(last[addresses]) if last is not None else numpy.array([-1])
    untouched = addresses if last is None else addresses[last[addresses] < 0]
    written = tensor.storage.writer[untouched] >= 0 if threads.SETTINGS.races != "off" else None
    if found[0] < 0 and (written is None or not written.all()):
        _fail(f"waited on the wrong phase: the {who} at {_site()} reads {what} from shared memory that no TMA "
              f"copy has filled yet, so the mbarrier wait before it returned too early. A wait returns at once "
              f"when the barrier's last completed phase has the other parity (a fresh barrier counts the "
              f"phase before the first as complete): consumers start waiting with parity 0")
    numbers = [int(n) for n in found if n >= 0]
    for number in numbers:
        write_ = state.writes[number]
        barrier = write_.barrier
        observed = seen.get(barrier.key)
        if observed is None:
            _fail(f"the {who} at {_site()} reads {what} from shared memory that the TMA copy at {write_.site} "
                  f"fills, without waiting on its mbarrier {barrier.index}: call cute.arch.mbarrier_wait(bar, "
                  f"phase) first")
        if observed < write_.phase and write_.unannounced:
            _fail(f"the TMA copy at {write_.site} delivered its bytes to mbarrier {barrier.index} in a phase that "
                  f"expected none: the phase the consumers waited for had completed without them (announcing "
                  f"fewer completes the phase before the data is there). Each k-tile needs one "
                  f"cute.arch.mbarrier_arrive_and_expect_tx(bar, bytes) with every byte of the stage's copies; a "
                  f"plain mbarrier_arrive announces none")
        if observed < write_.phase:
            _fail(f"waited on the wrong phase: the {who} at {_site()} reads {what} that the TMA copy at "
                  f"{write_.site} delivers with phase {write_.phase - 1} of mbarrier {barrier.index}, but this "
                  f"thread's wait on it returned having seen only {observed} completed phase(s) (a wait with "
                  f"the other parity returns at once). Wait with parity {(write_.phase - 1) % 2} here: the "
                  f"phase bit starts at 0 and flips each time the stage index wraps round the ring")
    return numbers


def is_wgmma(mma) -> bool:
    from ...cute.nvgpu.warpgroup import MmaF16BF16Op
    return isinstance(getattr(mma, "op", None), MmaF16BF16Op)


def wgmma(mma, d, a, b, c):
    """cute.gemm with a warpgroup MMA: D = A B + C for this thread's accumulators, A and B read from shared
    memory (the whole warpgroup's 64 x N x 16 per k-block)."""
    thread = threads.require_thread("a wgmma (cute.gemm)")
    _aligned(("wgmma.mma_async", mma.shape_mnk), "cute.gemm with a warpgroup MMA", "wgmma.mma_async")
    for name, operand in (("A", a), ("B", b)):
        if not isinstance(operand, SimTensor) or operand.storage.space != "smem":
            raise CuteError(f"cute.gemm with a warpgroup MMA: {name} must be the shared-memory fragment "
                            f"(tiled_mma.make_fragment_{name}(thr_mma.partition_{name}(s{name}))[..., k, stage]),"
                            f" got {operand!r}")
    for name, operand in (("D", d), ("C", c)):
        if not isinstance(operand, SimTensor) or operand.storage.space != "rmem":
            raise CuteError(f"cute.gemm with a warpgroup MMA: {name} must be the register accumulators, got "
                            f"{operand!r}")
    fences = thread.__dict__.get("wgmma_fences", 0)
    for accumulator in {id(d.storage): d.storage, id(c.storage): c.storage}.values():
        if fences == 0 or getattr(accumulator, "generic_stamp", None) == fences:
            _fail(f"missing fence: the wgmma at {_site()} uses accumulators that ordinary code wrote (the "
                  f"zero fill, a store) with no warpgroup.fence() after the write: call warpgroup.fence() "
                  f"before the k-tile's first wgmma")
    accumulate = accumulates(mma)
    if accumulate and c.storage.fresh:
        c_addresses = c.checked_addresses()
        if numpy.isnan(c.storage.array[c_addresses]).all():
            _fail(f"the wgmma at {_site()} adds its product to accumulators that nothing has written: registers "
                  f"start with whatever they held before (the simulator starts them at NaN), so D is garbage "
                  f"plus A B. Zero the accumulators before the first wgmma (or have the first wgmma overwrite "
                  f"them, with the atom's ACCUMULATE field false for it)")
    state = _block(thread)
    a_addresses, b_addresses = a.checked_addresses(), b.checked_addresses()
    numbers = _check_reads(thread, state, a, a_addresses, "A") + _check_reads(thread, state, b, b_addresses, "B")
    warp = _warp(thread)
    if _counter(thread, "wgmma_issued") == warp.issued:
        warp.issued += 1
        if warp.open is None:
            warp.open = _Group(thread.warp, _site())
        for number in numbers:
            if warp.open not in state.writes[number].readers:
                state.writes[number].readers.append(warp.open)
    d.storage.wgmma_used = c.storage.wgmma_used = True
    opened = thread.__dict__.setdefault("wgmma_open", set())
    if d.storage not in opened:
        opened.add(d.storage)
        d.storage.wgmma_busy = getattr(d.storage, "wgmma_busy", 0) + 1
    _multiply(mma, thread, d, a, b, c, a_addresses, b_addresses, accumulate)
    d.storage.fresh = False


def _multiply(mma, thread, d, a, b, c, a_addresses, b_addresses, accumulate):
    m_, n_, k_ = mma.shape_mnk
    t = thread.linear % 128
    tv_c = mma.tv_layout_C
    values = size(tv_c, mode=[1])
    cells = _tv_table(tv_c, 128, values)[t]                   # m + 64 n of each accumulator value
    rows, cols = cells % m_, cells // m_
    a_order = _tv_table(mma.tv_layout_A, 1, size(mma.tv_layout_A, mode=[1]))[0]     # value -> m + 64 k
    b_order = _tv_table(mma.tv_layout_B, 1, size(mma.tv_layout_B, mode=[1]))[0]     # value -> n + N k
    a_values = a.storage.array[a_addresses].astype(numpy.float32).reshape(-1, a_order.size)
    b_values = b.storage.array[b_addresses].astype(numpy.float32).reshape(-1, b_order.size)
    a_tile = numpy.empty_like(a_values)
    a_tile[:, a_order] = a_values
    b_tile = numpy.empty_like(b_values)
    b_tile[:, b_order] = b_values
    a_tile = a_tile.reshape(-1, k_, m_)                        # (MMA_M * MMA_K, k, m)
    b_tile = b_tile.reshape(-1, k_, n_)
    c_addresses, d_addresses = c.checked_addresses(), d.addresses()
    c_values = c.storage.array[c_addresses].astype(numpy.float32)
    blocks_c = c_values.size // values
    if a_tile.shape[0] != 1 or b_tile.shape[0] != 1 or blocks_c != 1:
        raise CuteError("cute.gemm with a warpgroup MMA: call it with one k-block of A and B "
                        "(tCrA[None, None, k, stage]) and the thread's accumulators of one wgmma tile")
    product = numpy.einsum("kv,kv->v", a_tile[0][:, rows], b_tile[0][:, cols])
    result = (c_values.reshape(values) if accumulate else 0.0) + product
    d.storage.array[d_addresses] = result.astype(d.storage.array.dtype)


def check_register_access(storage, writing: bool):
    """Called for a read or write of registers that wgmmas may own (memory.read/write)."""
    thread = threads.current()
    if getattr(storage, "wgmma_busy", 0) and thread is not None and storage in thread.__dict__.get("wgmma_open", ()):
        _fail(f"{'wrote' if writing else 'read'} the accumulators while wgmmas that write them were never "
              f"committed: warpgroup.commit_group() after each k-tile's wgmmas (wait_group waits only for "
              f"committed groups)")
    if getattr(storage, "wgmma_busy", 0):
        _fail(f"{'wrote' if writing else 'read'} the accumulators while wgmmas that write them are still in "
              f"flight: commit them (warpgroup.commit_group()) and wait until no group of them is left running "
              f"(warpgroup.wait_group) first")
    if writing and thread is not None:
        storage.generic_stamp = thread.__dict__.get("wgmma_fences", 0)


# --------------------------------------------------------------------------------------------- stmatrix

def stmatrix(atom, src: SimTensor, dst: SimTensor):
    """stmatrix: the warp's registers, exchanged through the atom's layouts, land in shared memory (ldmatrix's
    exchange the other way round)."""
    import functools

    thread = threads.require_thread("stmatrix")
    check_register_access(src.storage, False)
    values = src.storage.array[src.checked_addresses()].copy()
    collectives.warp_collective(("stmatrix", atom.layout_src_tv, atom.layout_dst_tv),
                            functools.partial(resolve_exchange, atom), (values, dst, thread),
                            what="stmatrix (cute.copy)", instruction="stmatrix")


# --------------------------------------------------------------------------------------------- the rest

def setmaxregister(registers, **kwargs):
    """cute.arch.setmaxregister_increase/decrease: a warpgroup's register budget (24 to 256, multiple of 8)."""
    if not is_int(registers) or not 24 <= int(registers) <= 256 or int(registers) % 8:
        raise CuteError(f"setmaxregister: the register count must be a multiple of 8 from 24 to 256, got "
                        f"{registers!r}")


def block_idx_in_cluster(**kwargs):
    threads.require_thread("cute.arch.block_idx_in_cluster()")
    return 0


def cluster_arrive(**kwargs):
    """cute.arch.cluster_arrive(_relaxed): with one CTA per cluster, the arrival half of a block barrier."""
    threads.require_thread("cute.arch.cluster_arrive()")


def cluster_wait(**kwargs):
    """cute.arch.cluster_wait: with one CTA per cluster, every thread of the block meets here."""
    threads.barrier()


__all__ = ["elect_one", "tma_copy", "wgmma", "fence", "commit_group", "wait_group", "Field", "stmatrix",
           "fence_proxy", "cp_async_bulk_commit_group", "cp_async_bulk_wait_group", "setmaxregister",
           "block_idx_in_cluster", "cluster_arrive", "cluster_wait", "HopperError"]


# --------------------------------------------------------------------------------------------- the room

# the names the face (dsl.py) adds to cute.arch and cute.nvgpu.warpgroup
CUTE_ARCH = {"elect_one": elect_one, "fence_proxy": fence_proxy, "cp_async_bulk_commit_group": cp_async_bulk_commit_group,
             "cp_async_bulk_wait_group": cp_async_bulk_wait_group, "block_idx_in_cluster": block_idx_in_cluster,
             "cluster_wait": cluster_wait, "setmaxregister_increase": setmaxregister,
             "setmaxregister_decrease": setmaxregister, "cluster_arrive": cluster_arrive,
             "cluster_arrive_relaxed": cluster_arrive}
NVGPU_WARPGROUP = {"Field": Field, "fence": fence, "commit_group": commit_group, "wait_group": wait_group}


def _add(table: list, entry):
    if entry not in table:
        table.append(entry)


def _log_wait(thread, barrier, parity):
    log("mbarrier_wait", thread.linear, barrier.index, parity)


_add(device.ATOM_COPIES, (TmaCopyAtom, tma_copy))
_add(device.OWN_COPIES, (StMatrix8x8x16bOp, stmatrix))
_add(device.GEMMS, (is_wgmma, wgmma))
_add(pipeline.ON_ARRIVE, releasing)
_add(pipeline.ON_WAIT, _log_wait)
_add(scheduler.THREAD_EXIT_CHECKS, ("bulk_pending", check_exit))
_add(scheduler.BLOCK_END_CHECKS, ("hopper", check_block_end))
tensors.REGISTER_ACCESS_CHECK[0] = check_register_access
tensors.GENERIC_WRITE_NOTE[0] = note_generic_write
