"""Blackwell (sm_100a) inside a simulated kernel: tensor memory (TMEM), the tcgen05 MMA that one thread issues
for the whole CTA, tcgen05.commit arriving on an mbarrier, tcgen05.ld / tcgen05.st between TMEM and registers.

Simulated: a TMEM of 128 lanes x 512 columns of 32-bit cells per CTA (`cute.arch.alloc_tmem` / `dealloc_tmem` /
`relinquish_tmem_alloc_permit` / `retrieve_tmem_ptr`, `cutlass.utils.TmemAllocator`); `cute.gemm` with a tcgen05
MMA (CtaGroup.ONE, A and B from shared memory, the ACCUMULATE field as CuTeDSL 4.8.1 sets it: false until set)
of 64 or 128 rows (64 rows sit in lanes 0-15 of each warp's 32, as make_fragment_C lays them out), kind::f16
with Float32 or Float16 accumulators, kind::tf32 (its operands multiplied as the fp32 values they are stored as:
a GPU reads only their top 19 bits) and kind::i8 (exact, into Int32), each MMA's exact sum rounded once to the
accumulator's type; `tcgen05.commit`; TMEM loads and stores through `cute.copy` (the Ld/St ops of
`make_tmem_copy`, 16-bit values one per 32-bit column with Pack.PACK_16b_IN_32b / Unpack.UNPACK_32b_IN_16b); the
TMEM waits and fences (`cute.arch.fence_view_async_tmem_load/store`,
`cutlass.experimental.primitives.tcgen05_fence`); the pipelines `PipelineTmaUmma`, `PipelineUmmaAsync` and
(sm_90's, for the epilogue's TMA stores) `PipelineTmaStore`.
Refused by name: CtaGroup.TWO (an MMA over a pair of CTAs) and clusters larger than one CTA, A from TMEM
(OperandSource.TMEM), a multicast commit.

A GPU runs the MMA asynchronously: it reads shared memory and writes TMEM some time after it is issued, and
`tcgen05.commit(bar)` makes `bar` receive one arrival once every MMA the committing warp issued before it has
completed. The simulator multiplies when the MMA is issued and arrives at the commit, and checks the order a GPU
needs by happens-before, as the Hopper room does (sm90.py):

  * a TMEM load may read cells an MMA wrote only when its thread has waited on the barrier of the commit that
    followed that MMA, for the phase the commit's arrival completes: no commit, no wait, or a wait on the other
    parity are each named ("read before the MMA's commit completed"); a load of columns no MMA (and no
    tcgen05.st) wrote, by a thread that has already waited for a commit, is named as that ("no tcgen05.mma wrote
    these columns before this load": e.g. a k-loop that ran zero times, the commit after it arriving all the same);
  * a TMA copy may overwrite a stage an MMA read only after a commit that covers the MMA arrived on a barrier the
    copying thread waited for (the stage's "empty" barrier);
  * `cute.gemm` with a tcgen05 MMA is warp-uniform: CuTeDSL elects one lane of each warp that calls it to issue
    the instruction (elect.sync in its PTX), so two warps calling it issue two MMAs that both add to the
    accumulator, and a call inside `elect_one` leaves elect.sync's other lanes out: each is named.
    `tcgen05.commit` is not elected: every lane that executes it commits, so it belongs inside `elect_one`;
  * a warp reaches only its quarter of TMEM's lanes: warp w loads and stores lanes 32 (w % 4) to 32 (w % 4) + 31;
  * TMEM columns are allocated by a whole warp in powers of two from 32 to 512, freed by the warp that allocated
    them with the same count, and all freed before the CTA ends; an access outside the allocated columns, an
    allocation beyond the 512 columns (tcgen05.alloc then waits forever) and an MMA that adds to cells nothing
    wrote (TMEM starts as garbage: NaN here) are named;
  * tcgen05.ld and tcgen05.st are asynchronous, and a warp's `fence_view_async_tmem_load` / `_store`
    (tcgen05.wait::ld / wait::st) is what completes them: TMEM that a load of a warp that has not waited yet reads
    may not be written (by an MMA or a tcgen05.st, "TMEM overwritten before the load that reads it completed"),
    and TMEM that a store not waited for writes may not be read or accumulated into ("TMEM read before the store
    that writes it completed"). The PTX ISA (release 9.2), tcgen05.wait: "Instruction tcgen05.wait::ld/tcgen05.wait::st
    causes the executing thread to block until all prior tcgen05.ld/tcgen05.st operations issued by the
    executing thread have completed", its example "tcgen05.ld [...]; // Prevents subsequent tcgen05.mma from
    racing ahead of the tcgen05.ld; tcgen05.wait::ld; tcgen05.mma [...]"; section 9.7.16.6.4.2 (non-pipelined
    instructions, same thread): "tcgen05.st; tcgen05.wait::st; tcgen05.ld"; and 9.7.16.6.4.5 (register
    dependencies, same thread): "For tcgen05.ld, an intra-thread ordering through true register dependency will
    be respected regardless of the presence or absence of other forms of synchronization. This form of register
    dependency does not imply any other form of ordering. [...] To enforce such memory orderings and avoiding
    anti-dependency hazards around tcgen05.ld, tcgen05.wait::ld must be used." NVIDIA's persistent CuTeDSL
    examples call fence_view_async_tmem_load before releasing the accumulator to the MMA warp, but CuTeDSL
    4.8.1's own helpers do not always (cutlass.utils.gemm.sm100.epilogue_tma_store releases it with no wait, its
    registers consumed first; `epilogue` without overlapping accumulators releases right after the last load):
    the simulator does not run those helpers, and would refuse them.

Accepted, as the PTX ISA and NVIDIA's code do:
  * using a TMEM load's registers before tcgen05.wait::ld (the true register dependency above). CuTeDSL 4.8.1
    inserts no wait itself: compiled for sm_100a (2026-11-28), tests/sim/blackwell_kernels.py's one_mma has one
    tcgen05.ld and one tcgen05.wait::ld right after it with `fence_view_async_tmem_load()`, and none without
    (its first use, a st.global of the registers, 3 lines after the load); NVIDIA's tour_to_sol_gemm (both
    kernels: 1 tcgen05.ld.32x32b.x64, 0 tcgen05.wait) and dense_gemm (1 tcgen05.ld .x128, or 4 .x32 with the
    TMA-store epilogue; 0 tcgen05.wait) use the registers without one;
  * freeing TMEM (dealloc after a block barrier) that loads no one waited for have read: both NVIDIA examples do
    it, their registers consumed before the barrier;
  * no `tcgen05.fence::before_thread_sync` / `after_thread_sync` around a thread synchronization. The ISA's
    patterns put them there (tcgen05.fence: "The tcgen05.fence::* instructions compose with execution ordering
    instructions across a thread scope and provide ordering between tcgen05 instructions across the same
    scope"; 9.7.16.6.4.4, an MMA in one thread and a load in another: "tcgen05.mma; tcgen05.commit [...]" then
    "mbarrier.try_wait [...]; tcgen05.fence::after_thread_sync; tcgen05.ld"), but NVIDIA's
    tour_to_sol_gemm and dense_gemm compile to PTX with no tcgen05.fence at all (CuTeDSL's pipelines and
    TmemAllocator emit none; 4.8.1 has no `cute.arch` call for them, only
    `cutlass.experimental.primitives.tcgen05_fence`), and CUTLASS's C++ headers (include/, 2026-08) never emit
    one either: a refusal would stop NVIDIA's own code. The simulator runs each tcgen05 operation when it is
    issued, so their absence changes nothing here.

A room of the architecture floor (arch/__init__.py): it builds on sm_90's room (TMA, elect_one, the ACCUMULATE
field) and registers, when imported, what `cute.gemm` and `cute.copy` do with tcgen05 atoms (ops/device.py's
tables) and the check at a block's end (machine/scheduler.py); CUTE_ARCH, NVGPU_TCGEN05, PIPELINES and
EXPERIMENTAL are the names it adds to `cute.arch`, `cute.nvgpu.tcgen05`, `cutlass.pipeline` and
`cutlass.experimental.primitives`.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy

from ...cute import typing as types
from ...cute.inttuple import CuteError, is_int
from ...cute.layout import size
from ...cute.nvgpu.common_modes import CtaGroup
from ...cute.nvgpu.tcgen05.copy import _LOADS, _STORES
from ...cute.nvgpu.tcgen05.mma import _Tcgen05MmaOp
from ..machine import collectives, scheduler, threads
from ..memory import tensors
from ..memory.structs import Pointer
from ..memory.tensors import SimTensor, Storage
from ..ops import device, pipeline
from . import sm90
from .sm80 import _tv_table


class BlackwellError(threads.KernelError):
    """A Blackwell mistake: TMEM read before the MMA's commit completed, TMEM written before a load of it completed
    (or read before a store completed), columns not allocated or never freed, an MMA issued by more than one warp,
    a warp outside its TMEM lanes."""


LANES, COLUMNS = 128, 512
LANE_STRIDE = 1 << 16            # a TMEM address is (lane << 16) + column, in 32-bit cells
_GARBAGE = 0x7FC07E00            # NaN as a float32 and, in its low half, as a float16: what TMEM holds at first


def _fail(message: str):
    raise BlackwellError(message)


def _site() -> str:
    return threads.site_text(threads.user_site(2))


# --------------------------------------------------------------------------------------------- state

@dataclass(eq=False)
class _Allocation:
    start: int
    columns: int
    warp: int
    site: str


@dataclass(eq=False)
class _Commit:
    barrier: object                # pipeline.MBarrier it arrived on
    phase: int                     # the barrier's completed count once that arrival's phase completed
    site: str


@dataclass(eq=False)
class _MmaGroup:
    """The MMAs one warp issued since its last commit. A commit covers every MMA its warp issued before it, so
    the group is known complete to a thread that waited for the phase of that commit or of any later one."""
    number: int
    warp: int
    site: str
    commits: list                  # the warp's commits (_Commit), in order
    first: int = -1                # index in `commits` of the first commit after these MMAs
    committed: bool = False
    retired: bool = False          # sm90's stage bookkeeping reads these two (TMA overwrite checks)

    def done_for(self, seen: dict):
        """(None, "") when a wait this thread returned from covers the group; else ((phases seen, the _Commit
        to wait for), what is missing: "none" (no commit yet), "no wait", "wrong phase")."""
        if not self.committed:
            return None, "none"
        later = self.commits[self.first:]
        observed = [(seen.get(c.barrier.key), c) for c in later]
        if any(o is not None and o >= c.phase for o, c in observed):
            return None, ""
        waited = [(o, c) for o, c in observed if o is not None]
        return (waited[-1] if waited else (None, later[0])), "wrong phase" if waited else "no wait"

    def check_overwrite(self, site: str, seen: dict):
        """A TMA copy at `site` overwrites shared memory these MMAs read (sm90._check_overwrite asks)."""
        found, missing = self.done_for(seen)
        if missing == "none":
            _fail(f"stage reused before its consumer released it: the TMA copy at {site} overwrites shared memory "
                  f"that the tcgen05 MMA at {self.site} reads, and no tcgen05.commit has followed that MMA: on a "
                  f"GPU it may still be reading the stage. Commit the k-tile's MMAs to the stage's empty barrier "
                  f"(tcgen05.commit, in elect_one) and wait for that barrier before loading into the stage")
        if missing:
            commit_ = found[1]
            _fail(f"stage reused before its consumer released it: the TMA copy at {site} overwrites shared memory "
                  f"that the tcgen05 MMA at {self.site} reads; its commit (at {commit_.site}) arrives on mbarrier "
                  f"{commit_.barrier.index} when the MMA has finished, and this thread has not waited for that "
                  f"phase (parity {(commit_.phase - 1) % 2}). Wait on the stage's empty barrier before loading "
                  f"into it again")


@dataclass(eq=False)
class _Warp:
    issued: int = 0                # MMAs issued (the first lane to reach one issues it for the warp)
    open: _MmaGroup | None = None
    done: list = field(default_factory=list)        # its commits (_Commit), in order
    allocs: int = 0
    deallocs: int = 0
    relinquishes: int = 0
    commits: dict = field(default_factory=dict)     # (site, k) -> the lane that executed that commit


@dataclass(eq=False)
class _Tmem:
    raw: numpy.ndarray
    storages: dict = field(default_factory=dict)    # element type -> Storage over `raw`
    allocations: list = field(default_factory=list)
    freed: list = field(default_factory=list)
    relinquished: str = ""
    writer: numpy.ndarray = None                    # (lane * 512 + column) -> the _MmaGroup number, -1
    unwaited: dict = field(default_factory=dict)    # "ld" / "st" -> (lane * 512 + column) -> warp, -1
    accesses: dict = field(default_factory=dict)    # ("ld" / "st", thread) -> [(compact cells, site)] not waited for
    groups: list = field(default_factory=list)
    warps: dict = field(default_factory=dict)
    issuers: dict = field(default_factory=dict)     # (site, k) -> the warp that issued that MMA
    version: int = 0                                # bumped by whatever changes what a TMEM load checks
    loads: dict = field(default_factory=dict)       # (warp, n) -> _WarpLoad: the warp's n-th TMEM load, checked


@dataclass(eq=False)
class _WarpLoad:
    """What the first lane of a warp to execute a tcgen05.ld found, for its other lanes (the load is .sync.aligned:
    every lane names the same TMEM block): valid while `version` is the TMEM's."""
    version: int
    op: object
    storage: object
    size: int
    first: int
    block: int
    mine: int
    numbers: numpy.ndarray          # the MMA groups that wrote the block
    table: numpy.ndarray            # (lane, register) -> element of the block


def _tmem(thread) -> _Tmem:
    state = thread.block.__dict__.get("blackwell")
    if state is None:
        state = thread.block.__dict__["blackwell"] = _Tmem(numpy.zeros(LANES * LANE_STRIDE, numpy.uint32))
        state.writer = numpy.full(LANES * COLUMNS, -1, numpy.int32)
        state.unwaited = {"ld": numpy.full(LANES * COLUMNS, -1, numpy.int32),
                          "st": numpy.full(LANES * COLUMNS, -1, numpy.int32)}
    return state


def _warp(state: _Tmem, thread) -> _Warp:
    found = state.warps.get(thread.warp)
    if found is None:
        found = state.warps[thread.warp] = _Warp()
    return found


def _counter(thread, name: str) -> int:
    value = thread.__dict__.get(name, 0)
    thread.__dict__[name] = value + 1
    return value


_NUMPY = {32: {types.Float32: numpy.float32, types.Int32: numpy.int32, types.Uint32: numpy.uint32},
          16: {types.Float16: numpy.float16}}


def _storage(state: _Tmem, element_type) -> Storage:
    """TMEM seen as elements of `element_type`: 32-bit ones one per cell, 16-bit ones in a cell's low half."""
    found = state.storages.get(element_type)
    if found is None:
        width = getattr(element_type, "width", None)
        dtype = _NUMPY.get(width, {}).get(element_type)
        if dtype is None and width == 32:
            dtype = numpy.float32
        if dtype is None:
            raise CuteError(f"tensor memory of {element_type}: the simulator keeps 32-bit values (Float32, Int32) "
                            f"and Float16 accumulators in TMEM")
        found = Storage(state.raw.view(dtype), "tmem", element_type, name="tensor memory")
        state.storages[element_type] = found
    return found


def _cells(tensor: SimTensor, addresses: numpy.ndarray) -> numpy.ndarray:
    """The 32-bit cell, (lane << 16) + column, of each element address of a TMEM tensor."""
    width = tensor.storage.element_type.width
    return addresses if width == 32 else addresses * width // 32


def _check_allocated(state: _Tmem, cells: numpy.ndarray, what: str):
    columns = cells & (LANE_STRIDE - 1)
    allocated = numpy.zeros(LANE_STRIDE, bool)
    for allocation in state.allocations:
        allocated[allocation.start:allocation.start + allocation.columns] = True
    outside = ~allocated[columns]
    if outside.any():
        bad = numpy.unique(columns[outside])
        have = ", ".join(f"{a.start}..{a.start + a.columns - 1}" for a in state.allocations) or "none"
        _fail(f"{what} at {_site()} touches TMEM columns {_ranges(bad)}, which are not allocated (allocated: {have}). "
              f"On a GPU they belong to nobody or to another CTA on the SM: allocate them first "
              f"(cute.arch.alloc_tmem, a power of two from 32 to 512 columns) and use the address it wrote")


def _ranges(values) -> str:
    return threads._ranges([int(v) for v in values])


# --------------------------------------------------------------------------------------------- allocation

def _warp_op(thread, name: str, key):
    """tcgen05.alloc/dealloc/relinquish are .sync.aligned over the warp: every lane executes the same one, and
    one of them does the work for the warp (the first to reach it here). Returns whether this lane does it."""
    collectives.passing_collective(key, what=f"cute.arch.{name}()", instruction=f"tcgen05.{name.split('_')[0]}")
    state = _tmem(thread)
    warp = _warp(state, thread)
    attribute = {"alloc_tmem": "allocs", "dealloc_tmem": "deallocs", "relinquish_tmem_alloc_permit": "relinquishes"}[name]
    mine = _counter(thread, "tmem_" + attribute)
    if mine < getattr(warp, attribute):
        return state, False
    setattr(warp, attribute, getattr(warp, attribute) + 1)
    return state, True


def _check_columns(num_columns, what: str) -> int:
    if not is_int(num_columns):
        raise CuteError(f"{what}: the number of columns must be an int, got {num_columns!r}")
    n = int(num_columns)
    if n < 32 or n > COLUMNS or n & (n - 1):
        _fail(f"{what} at {_site()} asks for {n} TMEM columns: tcgen05.alloc takes a power of two from 32 to "
              f"{COLUMNS} (CuTeDSL refuses other constants when it compiles: \"num_columns must be between 32 and "
              f"512, and must be pow of 2\")")
    return n


def alloc_tmem(num_columns, smem_ptr_to_write_address, is_two_cta=None, **kwargs):
    """cute.arch.alloc_tmem: the warp allocates `num_columns` TMEM columns (all 128 lanes) and writes their address,
    (lane 0 << 16) + first column, to the shared-memory word `smem_ptr_to_write_address`."""
    thread = threads.require_thread("cute.arch.alloc_tmem()")
    if is_two_cta:
        _refuse_two_cta("cute.arch.alloc_tmem(is_two_cta=True)")
    n = _check_columns(num_columns, "cute.arch.alloc_tmem")
    pointer = _scalar_pointer(smem_ptr_to_write_address, "cute.arch.alloc_tmem")
    state, mine = _warp_op(thread, "alloc_tmem", ("tcgen05.alloc", n))
    if not mine:
        return
    if state.relinquished:
        _fail(f"cute.arch.alloc_tmem at {_site()} allocates after the CTA gave up its right to allocate "
              f"(relinquish_tmem_alloc_permit at {state.relinquished}): the PTX ISA leaves that undefined")
    used = numpy.zeros(COLUMNS, bool)
    for allocation in state.allocations:
        used[allocation.start:allocation.start + allocation.columns] = True
    start = next((s for s in range(0, COLUMNS, n) if not used[s:s + n].any()), None)
    if start is None:
        taken = sum(a.columns for a in state.allocations)
        _fail(f"cute.arch.alloc_tmem at {_site()} asks for {n} more TMEM columns while this CTA holds {taken} of "
              f"the {COLUMNS} ({', '.join(f'{a.columns} at {a.site}' for a in state.allocations)}): on a GPU "
              f"tcgen05.alloc then waits until columns are freed, and nobody frees them: the CTA hangs. Allocate at "
              f"most {COLUMNS} columns in all (free some first)")
    state.allocations.append(_Allocation(start, n, thread.warp, _site()))
    state.version += 1
    state.raw.reshape(LANES, LANE_STRIDE)[:, start:start + n] = _GARBAGE
    storage, base = pointer.storage, pointer.base
    storage.array[base] = start                     # lane 0, column `start`
    tensors.write(storage, numpy.array([base]), None, thread=thread)


def _scalar_pointer(pointer, what: str) -> Pointer:
    pointer = getattr(pointer, "ptr", pointer) if not isinstance(pointer, Pointer) else pointer
    if not isinstance(pointer, Pointer) or pointer.storage.space != "smem":
        raise CuteError(f"{what}: expects a pointer to a shared-memory Int32 (a struct member's .ptr, or "
                        f"smem.allocate_array(cutlass.Int32, 1)), got {pointer!r}")
    return pointer


def retrieve_tmem_ptr(element_type, alignment, ptr_to_buffer_holding_addr, **kwargs):
    """cute.arch.retrieve_tmem_ptr: a TMEM pointer of `element_type` from the address alloc_tmem wrote."""
    thread = threads.require_thread("cute.arch.retrieve_tmem_ptr()")
    pointer = _scalar_pointer(ptr_to_buffer_holding_addr, "cute.arch.retrieve_tmem_ptr")
    storage, base = pointer.storage, pointer.base
    tensors.read(storage, numpy.array([base]), None)
    cell = int(storage.array[base])
    state = _tmem(thread)
    if not any(a.start == cell & (LANE_STRIDE - 1) for a in state.allocations):
        _fail(f"cute.arch.retrieve_tmem_ptr at {_site()} reads the TMEM address from shared memory that holds "
              f"{cell}, not the address of an allocation: call it after the allocating warp's alloc_tmem wrote it "
              f"and a barrier (sync_threads, or the TmemAllocator's wait_for_alloc) made it visible")
    tmem = _storage(state, element_type)
    width = element_type.width
    return Pointer(tmem, cell * 32 // width)


def relinquish_tmem_alloc_permit(is_two_cta=None, **kwargs):
    """cute.arch.relinquish_tmem_alloc_permit: this CTA allocates no more TMEM (other CTAs on the SM may)."""
    thread = threads.require_thread("cute.arch.relinquish_tmem_alloc_permit()")
    state, mine = _warp_op(thread, "relinquish_tmem_alloc_permit", ("tcgen05.relinquish",))
    if mine and not state.relinquished:
        state.relinquished = _site()


def dealloc_tmem(tmem_ptr, num_columns, is_two_cta=None, **kwargs):
    """cute.arch.dealloc_tmem: the allocating warp frees the columns alloc_tmem gave it."""
    thread = threads.require_thread("cute.arch.dealloc_tmem()")
    if is_two_cta:
        _refuse_two_cta("cute.arch.dealloc_tmem(is_two_cta=True)")
    n = _check_columns(num_columns, "cute.arch.dealloc_tmem")
    if isinstance(tmem_ptr, SimTensor):
        tmem_ptr = tmem_ptr.iterator
    if not isinstance(tmem_ptr, Pointer) or tmem_ptr.storage.space != "tmem":
        raise CuteError(f"cute.arch.dealloc_tmem: expects the TMEM pointer (retrieve_tmem_ptr's, or the "
                        f"accumulator's .iterator), got {tmem_ptr!r}")
    state, mine = _warp_op(thread, "dealloc_tmem", ("tcgen05.dealloc", n))
    if not mine:
        return
    column = (tmem_ptr.base * tmem_ptr.storage.element_type.width // 32) & (LANE_STRIDE - 1)
    found = next((a for a in state.allocations if a.start == column), None)
    if found is None:
        _fail(f"cute.arch.dealloc_tmem at {_site()} frees TMEM column {column}, where no allocation starts "
              f"(allocated: {', '.join(f'{a.start}..{a.start + a.columns - 1}' for a in state.allocations) or 'none'})")
    if found.columns != n:
        _fail(f"cute.arch.dealloc_tmem at {_site()} frees {n} columns of the allocation of {found.columns} made at "
              f"{found.site}: free exactly what was allocated")
    if found.warp != thread.warp:
        _fail(f"cute.arch.dealloc_tmem at {_site()}: warp {thread.warp} frees the TMEM that warp {found.warp} "
              f"allocated (at {found.site}); the warp that allocates is the warp that frees")
    state.allocations.remove(found)
    state.freed.append(found)
    state.version += 1


def _refuse_two_cta(what: str):
    raise CuteError(f"{what}: a CTA pair (CtaGroup.TWO, 2-CTA MMAs and their TMEM) needs thread-block clusters, which "
                    f"the simulator does not run (clusters of one CTA only): use CtaGroup.ONE")


def check_block_end(block):
    """The CTA is done: its TMEM must have been freed (the next CTA on the SM otherwise waits in tcgen05.alloc
    forever)."""
    state = block.__dict__.get("blackwell")
    if state is None or not state.allocations:
        return
    held = ", ".join(f"{a.columns} columns allocated by warp {a.warp} at {a.site}" for a in state.allocations)
    _fail(f"the CTA ends holding TMEM ({held}): TMEM is not freed when a CTA exits, so on a GPU the next CTA on "
          f"this SM waits in tcgen05.alloc forever. The allocating warp frees it (cute.arch.dealloc_tmem) once every "
          f"warp has read it (after a block barrier)")


# --------------------------------------------------------------------------------------------- MMA

def is_tcgen05(mma) -> bool:
    return isinstance(getattr(mma, "op", None), _Tcgen05MmaOp)


def check_one_cta(mma):
    """A kernel's tcgen05 MMA of CtaGroup.TWO (its fragments are made in the kernel) is refused by name."""
    if threads.current() is not None and is_tcgen05(mma) and mma.op.cta_group is CtaGroup.TWO:
        _refuse_two_cta("a tcgen05 MMA of CtaGroup.TWO (make_fragment_A/B in a kernel)")


_COMPUTE = {types.Int8: numpy.int64, types.Uint8: numpy.int64}


def umma(mma, d, a, b, c):
    """cute.gemm with a tcgen05 MMA: D (TMEM) = A B (+ D with ACCUMULATE), A and B read from shared memory, for
    the whole CTA; issued once per warp that calls it (CuTeDSL elects one lane)."""
    thread = threads.require_thread("a tcgen05 MMA (cute.gemm)")
    op = mma.op
    if op.cta_group is CtaGroup.TWO:
        _refuse_two_cta("cute.gemm with a tcgen05 MMA of CtaGroup.TWO")
    if thread.__dict__.get("elected"):
        _fail(f"the tcgen05 MMA at {_site()} is called inside `with cute.arch.elect_one():`. cute.gemm with a "
              f"tcgen05 MMA elects its issuing lane itself (elect.sync over the whole warp, in its PTX), so every "
              f"lane of the warp must call it; inside elect_one only one lane does, and elect.sync waits for the "
              f"others (undefined on a GPU: a hang or no MMA). Call it from the whole warp (`if warp == 0:`)")
    collectives.passing_collective(("tcgen05.mma", op.shape_mnk), what="cute.gemm with a tcgen05 MMA",
                                   instruction="elect.sync + tcgen05.mma")
    state = _tmem(thread)
    warp = _warp(state, thread)
    if _counter(thread, "umma_issued") < warp.issued:
        return                              # another lane of this warp issued it for the warp
    warp.issued += 1
    site = threads.user_site(2)
    k = _counter(thread, "umma_at:" + repr(site))
    other = state.issuers.setdefault((site, k), thread.warp)
    if other != thread.warp:
        _fail(f"the tcgen05 MMA at {threads.site_text(site)} is issued by warp {other} and by warp {thread.warp}: "
              f"one MMA computes the tile for the whole CTA, and CuTeDSL issues it once per warp that calls "
              f"cute.gemm (one elected lane each), so every calling warp adds its own A B to the accumulator. "
              f"Call it from one warp (`if warp == 0:`)")
    for name, operand in (("A", a), ("B", b)):
        if not isinstance(operand, SimTensor) or operand.storage.space != "smem":
            if name == "A" and isinstance(operand, SimTensor) and operand.storage.space == "tmem":
                raise CuteError("cute.gemm with a tcgen05 MMA: A in tensor memory (OperandSource.TMEM) is not "
                                "simulated; read A from shared memory (OperandSource.SMEM)")
            raise CuteError(f"cute.gemm with a tcgen05 MMA: {name} must be the shared-memory fragment "
                            f"(tiled_mma.make_fragment_{name}(s{name})[None, None, k_block, stage]), got {operand!r}")
    for name, operand in (("D", d), ("C", c)):
        if not isinstance(operand, SimTensor) or operand.storage.space != "tmem":
            raise CuteError(f"cute.gemm with a tcgen05 MMA: {name} must be the accumulator in tensor memory "
                            f"(make_fragment_C's layout over retrieve_tmem_ptr's pointer), got {operand!r}")
    d_addresses = d.checked_addresses()
    if c.storage is not d.storage or not numpy.array_equal(c.checked_addresses(), d_addresses):
        raise CuteError("cute.gemm with a tcgen05 MMA: C and D must be the same TMEM accumulator (the MMA "
                        "accumulates in place): cute.gemm(tiled_mma, acc, a, b, acc)")
    cells = _cells(d, d_addresses)
    _check_allocated(state, cells, "the tcgen05 MMA")
    compact = _compact(cells)
    _check_stores_done(state, compact, "the tcgen05 MMA")
    _check_loads_done(state, compact, "the tcgen05 MMA")
    hopper = sm90._block(thread)
    a_addresses, b_addresses = a.checked_addresses(), b.checked_addresses()
    numbers = (sm90._check_reads(thread, hopper, a, a_addresses, "A", who="tcgen05 MMA")
               + sm90._check_reads(thread, hopper, b, b_addresses, "B", who="tcgen05 MMA"))
    accumulate = sm90.accumulates(mma)
    m_, n_, k_ = op.shape_mnk
    compute = _COMPUTE.get(op.a_dtype, numpy.float32)
    a_values = a.storage.array[a_addresses].astype(compute)
    b_values = b.storage.array[b_addresses].astype(compute)
    if a_values.size % (m_ * k_) or b_values.size % (n_ * k_) or d_addresses.size % (m_ * n_):
        raise CuteError(f"cute.gemm with a tcgen05 MMA of {m_}x{n_}x{k_}: A ({a_values.size} values), B "
                        f"({b_values.size}) and D ({d_addresses.size}) must be whole MMA tiles: slice one k-block "
                        f"and stage, tCrA[None, None, k_block, stage]")
    tiles_a, tiles_b, tiles_d = a_values.size // (m_ * k_), b_values.size // (n_ * k_), d_addresses.size // (m_ * n_)
    tiles_m = size(d.layout, mode=[1]) if len(d.layout.shape) > 1 else 1
    tiles_n = tiles_d // tiles_m
    tiles_k = tiles_a // tiles_m
    if tiles_m * tiles_n != tiles_d or tiles_k * tiles_m != tiles_a or tiles_k * tiles_n != tiles_b:
        raise CuteError(f"cute.gemm with a tcgen05 MMA: the fragments' tiles do not match: A has {tiles_a} "
                        f"{m_}x{k_} tiles, B {tiles_b} {n_}x{k_}, D {tiles_d} {m_}x{n_}")
    a_tiles = a_values.reshape(tiles_k, tiles_m, k_, m_)          # colex: (m, k) first, then MMA_M, MMA_K
    b_tiles = b_values.reshape(tiles_k, tiles_n, k_, n_)
    accumulator = d.storage.array
    d_tiles = accumulator[d_addresses].reshape(tiles_n, tiles_m, n_, m_)
    if accumulate and _garbage(state, cells).all():
        _fail(f"the tcgen05 MMA at {_site()} adds its product to TMEM that nothing has written: tensor memory "
              f"starts with whatever it held (the simulator starts it at NaN), so D is garbage plus A B. Let the "
              f"first MMA overwrite it: tiled_mma.set(tcgen05.Field.ACCUMULATE, False) before it (CuTeDSL starts "
              f"the field false), True after it")
    result = d_tiles.astype(numpy.float64 if compute is numpy.float32 else compute)
    for kk in range(tiles_k):
        product = numpy.einsum("mkx,nky->nmyx", a_tiles[kk], b_tiles[kk], dtype=result.dtype)
        result = (result + product) if accumulate else product
    accumulator[d_addresses] = result.reshape(-1).astype(accumulator.dtype)
    # bookkeeping: what the MMA wrote and read, for the commit that covers it
    group = warp.open
    if group is None:
        group = warp.open = _MmaGroup(len(state.groups), thread.warp, threads.site_text(site), warp.done)
        state.groups.append(group)
    state.writer[compact] = group.number
    state.version += 1
    for number in numbers:
        if group not in hopper.writes[number].readers:
            hopper.writes[number].readers.append(group)


def _compact(cells: numpy.ndarray) -> numpy.ndarray:
    return (cells >> 16) * COLUMNS + (cells & (LANE_STRIDE - 1))


def _garbage(state: _Tmem, cells: numpy.ndarray) -> numpy.ndarray:
    return state.raw[cells] == _GARBAGE


def commit(mbar_ptr, mask=None, cta_group=CtaGroup.ONE, **kwargs):
    """tcgen05.commit: `mbar_ptr`'s mbarrier receives one arrival once every MMA this warp issued before it has
    completed (here: now, with the bookkeeping that later reads of their TMEM or shared memory check)."""
    thread = threads.require_thread("tcgen05.commit()")
    if cta_group is CtaGroup.TWO:
        _refuse_two_cta("tcgen05.commit(cta_group=CtaGroup.TWO)")
    if mask is not None and int(mask) not in (0, 1):
        raise CuteError(f"tcgen05.commit(mask={int(mask):#b}): a multicast commit arrives on the mbarriers of several "
                        f"CTAs of a cluster, which the simulator does not run (clusters of one CTA only)")
    state = _tmem(thread)
    warp = _warp(state, thread)
    site = threads.user_site(2)
    k = _counter(thread, "tcgen05_commit_at:" + repr(site))
    earlier = warp.commits.setdefault((site, k), thread.lane)
    if earlier != thread.lane:
        _fail(f"tcgen05.commit at {threads.site_text(site)} is executed by lanes {earlier} and {thread.lane} of warp "
              f"{thread.warp}: unlike cute.gemm, CuTeDSL does not elect a lane for it, so every lane that executes it "
              f"commits (32 commits, 32 arrivals on a barrier that counts one). Put it inside "
              f"`with cute.arch.elect_one():`")
    barrier = pipeline.barrier_at(mbar_ptr, f"the tcgen05.commit at {threads.site_text(site)}")
    group, warp.open = warp.open, None
    if group is not None:
        group.committed = group.retired = True
        group.first = len(warp.done)
    warp.done.append(_Commit(barrier, barrier.completed + 1, threads.site_text(site)))
    pipeline._arrive(mbar_ptr, f"tcgen05.commit at {threads.site_text(site)}")


# --------------------------------------------------------------------------------------------- TMEM copies

def _check_quarter(thread, cells: numpy.ndarray, what: str):
    lanes = cells >> 16
    quarter = thread.warp % 4
    outside = (lanes // 32) != quarter
    if outside.any():
        _fail(f"{what} at {_site()}: warp {thread.warp} (thread {thread.linear}) reaches TMEM lanes "
              f"{_ranges(numpy.unique(lanes[outside]))}, outside its quarter: warp w may only access lanes "
              f"{32 * quarter}..{32 * quarter + 31} (32 (w % 4) .. +31). Slice the TMEM copy with the thread's own "
              f"index (tiled_copy.get_slice(tidx)) and give the epilogue four consecutive warps")


def tmem_load(atom, src: SimTensor, dst: SimTensor):
    """cute.copy with a TMEM load atom (tcgen05.ld): this thread's part of the warp's load, TMEM -> registers."""
    thread = threads.require_thread("a TMEM load (tcgen05.ld)")
    what = "the TMEM load (tcgen05.ld)"
    if src.storage.space != "tmem":
        raise CuteError(f"cute.copy with a TMEM load atom: the source must be tensor memory (the accumulator "
                        f"partitioned by tmem_copy.get_slice(tidx).partition_S), got {src.storage.describe()}")
    if dst.storage.space != "rmem":
        raise CuteError(f"cute.copy with a TMEM load atom: the destination must be registers, got "
                        f"{dst.storage.describe()}")
    collectives.passing_collective(("tcgen05.ld", type(atom.op).__name__), what="cute.copy with a TMEM load",
                                   instruction="tcgen05.ld.sync.aligned")
    source, destination = src.checked_addresses(), dst.checked_addresses()
    state = _tmem(thread)
    key = (thread.warp, _counter(thread, "tmem_loads"))
    found = state.loads.get(key)
    if (found is None or found.version != state.version or found.size != source.size or found.storage is not
            src.storage or (source.size and found.first != source[0]) or found.op != atom.op):
        found = state.loads[key] = _load_checked(thread, state, atom, src, source, what)
    block, mine = found.block, found.mine
    if destination.size % mine or source.size // block != destination.size // mine:
        raise CuteError(f"cute.copy with a TMEM load: the warp's TMEM view ({source.size} values, {block} per "
                        f"instruction) and this thread's registers ({destination.size}, {mine} per instruction) do "
                        f"not match: partition the TMEM tensor with partition_S and the registers like partition_D "
                        f"of the same thread's slice")
    _check_groups_done(thread, state, found.numbers)
    # every lane addresses the warp's whole block (the atom's TMEM side is (32, n):(0, 1)); lane t receives the
    # elements the atom's register side gives it
    values = src.storage.array[source].reshape(-1, block)[:, found.table[thread.lane]].reshape(-1)
    tensors.write(dst.storage, destination, dst)
    dst.storage.array[destination] = values


def _load_checked(thread, state: _Tmem, atom, src: SimTensor, source: numpy.ndarray, what: str) -> _WarpLoad:
    """The checks of a warp's TMEM load that do not depend on the lane: the TMEM block is the same for all 32
    (the first lane to execute it runs them, and issues the load for the warp)."""
    block, mine = _exchange_tables(atom, load=True)
    if source.size % block:
        raise CuteError(f"cute.copy with a TMEM load: the warp's TMEM view ({source.size} values) is not a whole "
                        f"number of the atom's {block} per instruction: partition the TMEM tensor with partition_S "
                        f"of the tiled copy's slice")
    cells = _cells(src, source)
    _check_quarter(thread, cells, what)
    _check_allocated(state, cells, what)
    compact = _compact(cells)
    _check_stores_done(state, compact, what)
    numbers = _mma_writers(state, cells, compact, thread)
    _issued(state, thread, "ld", compact, _site())
    return _WarpLoad(state.version, atom.op, src.storage, source.size, int(source[0]) if source.size else 0, block,
                     mine, numbers, _tv_table(atom.layout_dst_tv, 32, mine))


def tmem_store(atom, src: SimTensor, dst: SimTensor):
    """cute.copy with a TMEM store atom (tcgen05.st): registers -> this thread's TMEM cells."""
    thread = threads.require_thread("a TMEM store (tcgen05.st)")
    what = "the TMEM store (tcgen05.st)"
    if dst.storage.space != "tmem":
        raise CuteError(f"cute.copy with a TMEM store atom: the destination must be tensor memory, got "
                        f"{dst.storage.describe()}")
    collectives.passing_collective(("tcgen05.st", type(atom.op).__name__), what="cute.copy with a TMEM store",
                                   instruction="tcgen05.st.sync.aligned")
    source, destination = src.checked_addresses(), dst.checked_addresses()
    block, mine = _exchange_tables(atom, load=False)
    if destination.size % block or source.size % mine or destination.size // block != source.size // mine:
        raise CuteError(f"cute.copy with a TMEM store: this thread's registers ({source.size} values, {mine} per "
                        f"instruction) and the warp's TMEM view ({destination.size}, {block} per instruction) do "
                        f"not match")
    state = _tmem(thread)
    cells = _cells(dst, destination)
    _check_quarter(thread, cells, what)
    _check_allocated(state, cells, what)
    compact = _compact(cells)
    _check_loads_done(state, compact, what)
    tensors.read(src.storage, source, src)
    state.version += 1
    collectives.warp_collective(("tcgen05.st.data", type(atom.op).__name__),
                                lambda payloads: _store_block(atom, block, mine, payloads),
                                (src.storage.array[source].copy(), dst, destination),
                                what="cute.copy with a TMEM store", instruction="tcgen05.st.sync.aligned")
    state.writer[compact] = -1
    _issued(state, thread, "st", compact, _site())


def _store_block(atom, block: int, mine: int, payloads: dict) -> dict:
    """tcgen05.st for a warp: each lane's registers land where the atom's register side puts them."""
    table = _tv_table(atom.layout_src_tv, 32, mine)
    some_dst, some_addresses = next(iter(payloads.values()))[1:]
    values = numpy.zeros((some_addresses.size // block, block), some_dst.storage.array.dtype)
    for lane, (registers, _, _) in payloads.items():
        values[:, table[lane]] = registers.reshape(-1, mine)
    some_dst.storage.array[some_addresses] = values.reshape(-1)
    return {}


def _exchange_tables(atom, load: bool):
    """(values of the warp's TMEM block per instruction, registers of one lane per instruction)."""
    tmem_side = atom.layout_src_tv if load else atom.layout_dst_tv
    registers = atom.layout_dst_tv if load else atom.layout_src_tv
    return size(tmem_side, mode=[1]), size(registers, mode=[1])


def _mma_writers(state: _Tmem, cells: numpy.ndarray, compact: numpy.ndarray, thread=None) -> numpy.ndarray:
    """The MMA groups whose results a TMEM load of `cells` reads (numbers into state.groups); a load of TMEM that
    nothing wrote came before any MMA finished, or, when this thread has already waited for a commit (the
    simulator multiplies when an MMA is issued, so every MMA before that commit has written its columns), after
    a commit that followed no MMA writing these columns (a k-loop that ran zero times)."""
    writers = state.writer[compact]
    unwritten = (writers < 0) & _garbage(state, cells)
    waited = _commit_waited_for(state, thread)
    if unwritten.all() and waited is not None:
        columns = numpy.unique(cells & (LANE_STRIDE - 1))
        span = f"{columns[0]}-{columns[-1]}" if columns.size > 1 else f"{columns[0]}"
        _fail(f"no tcgen05.mma wrote these columns before this load: the TMEM load at {_site()} reads columns "
              f"{span}, which no MMA (and no tcgen05.st) has written, although this thread waited for the commit at "
              f"{waited.site}, which covers every MMA its warp issued before it. So no MMA writing these columns was "
              f"issued before that commit: e.g. the k-loop ran zero times (a k-tile count rounded down to 0 when K "
              f"is smaller than a k-tile), or the MMAs write other columns than the ones loaded")
    if unwritten.all():
        _fail(f"read before the MMA's commit completed: the TMEM load at {_site()} reads TMEM that no MMA (and no "
              f"tcgen05.st) has written yet, so whatever this thread waited for came too early: no wait at all, or "
              f"a wait on the wrong phase (a wait returns at once when the barrier's last completed phase has the "
              f"other parity: a fresh barrier counts the phase before the first as complete, so the first wait is "
              f"for parity 0). Wait on the barrier the MMAs' last tcgen05.commit arrives on")
    numbers = numpy.unique(writers)
    return numbers[numbers >= 0]


def _commit_waited_for(state: _Tmem, thread):
    """A commit (_Commit) of any warp whose arrival's phase `thread` has seen complete in a wait, else None."""
    seen = thread.__dict__.get("mbarrier_seen", {}) if thread is not None else {}
    for warp in state.warps.values():
        for commit_ in warp.done:
            observed = seen.get(commit_.barrier.key)
            if observed is not None and observed >= commit_.phase:
                return commit_
    return None


def _check_groups_done(thread, state: _Tmem, numbers: numpy.ndarray):
    """This thread has seen the commit of every MMA group in `numbers` complete."""
    seen = thread.__dict__.get("mbarrier_seen", {})
    for number in numbers:
        group = state.groups[int(number)]
        found, missing = group.done_for(seen)
        if missing == "none":
            _fail(f"read before the MMA's commit completed: the TMEM load at {_site()} reads the accumulator that "
                  f"the tcgen05 MMA at {group.site} writes, and no tcgen05.commit has followed that MMA, so nothing "
                  f"tells this thread it has finished: on a GPU the load reads a partial sum. Commit the MMAs to an "
                  f"mbarrier (tcgen05.commit, in elect_one) and wait on it (cute.arch.mbarrier_wait) before loading")
        if missing == "no wait":
            commit_ = found[1]
            _fail(f"read before the MMA's commit completed: the TMEM load at {_site()} reads the accumulator that "
                  f"the tcgen05 MMA at {group.site} writes; its commit (at {commit_.site}) arrives on mbarrier "
                  f"{commit_.barrier.index} when the MMA has finished, and this thread never waited on that barrier: "
                  f"on a GPU it may read a partial sum. Call cute.arch.mbarrier_wait(bar, phase) first")
        if missing:
            observed, commit_ = found
            _fail(f"read before the MMA's commit completed (waited on the wrong phase): the TMEM load at {_site()} "
                  f"reads the accumulator of the tcgen05 MMA at {group.site}, whose commit (at {commit_.site}) "
                  f"completes phase {commit_.phase - 1} of mbarrier {commit_.barrier.index}, but this thread's wait "
                  f"returned having seen only {observed} completed phase(s): a wait with the other parity returns "
                  f"at once. Wait with parity {(commit_.phase - 1) % 2}")


# --------------------------------------------------------------------------------------------- waits

def _issued(state: _Tmem, thread, kind: str, compact: numpy.ndarray, site: str):
    """A tcgen05.ld ("ld") or tcgen05.st ("st") of `thread`'s warp touched `compact`: until the warp executes
    tcgen05.wait::ld / wait::st, the access may still be in flight."""
    state.unwaited[kind][compact] = thread.warp
    state.version += kind == "st"
    records = state.accesses.setdefault((kind, thread.warp), [])
    if not records or records[-1][1] != site or records[-1][0] is not compact:
        records.append((compact, site))


def _waited(kind: str, what: str):
    """tcgen05.wait::ld / wait::st (.sync.aligned: the warp's lanes execute it together): every load / store this
    warp issued before it has completed."""
    thread = threads.require_thread(what)
    state = thread.block.__dict__.get("blackwell")
    if state is None:
        return
    owners = state.unwaited[kind]
    state.version += kind == "st"
    for compact, _ in state.accesses.pop((kind, thread.warp), ()):
        cells = compact[owners[compact] == thread.warp]
        owners[cells] = -1


def _in_flight(state: _Tmem, kind: str, compact: numpy.ndarray):
    """(warp, site) of a load / store not yet waited for that touched one of `compact`'s cells, or None."""
    owners = state.unwaited[kind][compact]
    pending = owners >= 0
    if not pending.any():
        return None
    warp = int(owners[pending][0])
    cells = compact[pending & (owners == warp)]
    site = next((site for done, site in state.accesses.get((kind, warp), ()) if numpy.isin(cells, done).any()),
                "an earlier line")
    return warp, site


def _check_loads_done(state: _Tmem, compact: numpy.ndarray, what: str):
    """`what` writes TMEM: a tcgen05.ld still reading those cells (its warp has not executed tcgen05.wait::ld) may
    read the new values (PTX ISA 9.7.16.6.4.5: only tcgen05.wait::ld orders the load's TMEM access)."""
    found = _in_flight(state, "ld", compact)
    if found is None:
        return
    warp, site = found
    _fail(f"TMEM overwritten before the load that reads it completed: {what} at {_site()} writes TMEM that the "
          f"TMEM load (tcgen05.ld) at {site} reads for warp {warp}, and that warp has not waited for its loads "
          f"(cute.arch.fence_view_async_tmem_load(), PTX tcgen05.wait::ld). A tcgen05.ld is asynchronous: its "
          f"registers may be used without the wait (the PTX ISA orders a true register dependency on them), but "
          f"only tcgen05.wait::ld orders its read of TMEM before a later write, so on a GPU the load may return "
          f"the new values. Call fence_view_async_tmem_load() after the loads and before the TMEM is handed back "
          f"(the barrier, or the accumulator pipeline's release) or stored to")


def _check_stores_done(state: _Tmem, compact: numpy.ndarray, what: str):
    """`what` reads (or accumulates into) TMEM: a tcgen05.st still writing those cells (its warp has not executed
    tcgen05.wait::st) may land after it (PTX ISA 9.7.16.6.4.2: tcgen05.st; tcgen05.wait::st; tcgen05.ld)."""
    found = _in_flight(state, "st", compact)
    if found is None:
        return
    warp, site = found
    _fail(f"TMEM read before the store that writes it completed: {what} at {_site()} reads TMEM that the TMEM "
          f"store (tcgen05.st) at {site} writes for warp {warp}, and that warp has not waited for its stores "
          f"(cute.arch.fence_view_async_tmem_store(), PTX tcgen05.wait::st). A tcgen05.st is asynchronous: on a "
          f"GPU {what} may see the old values. Call fence_view_async_tmem_store() after the stores and before "
          f"anything reads that TMEM (and before the barrier that hands it to another warp)")


# --------------------------------------------------------------------------------------------- fences

def fence_view_async_tmem_load(**kwargs):
    """cute.arch.fence_view_async_tmem_load (tcgen05.wait::ld): this warp's TMEM loads have completed."""
    _waited("ld", "cute.arch.fence_view_async_tmem_load()")


def fence_view_async_tmem_store(**kwargs):
    """cute.arch.fence_view_async_tmem_store (tcgen05.wait::st): this warp's TMEM stores have completed."""
    _waited("st", "cute.arch.fence_view_async_tmem_store()")


def fence_view_async_tmem_op(kind=None, **kwargs):
    """cute.arch.fence_view_async_tmem_op("load" | "store")."""
    name = str(getattr(kind, "value", kind)).lower()
    if name not in ("load", "store"):
        raise CuteError(f"cute.arch.fence_view_async_tmem_op(kind): \"load\" or \"store\", got {kind!r}")
    _waited("ld" if name == "load" else "st", "cute.arch.fence_view_async_tmem_op()")


def tcgen05_fence(kind, **kwargs):
    """cutlass.experimental.primitives.tcgen05_fence("before_thread_sync" | "after_thread_sync"): orders this
    thread's tcgen05 operations around a thread synchronization (the simulator runs each when issued)."""
    if str(getattr(kind, "value", kind)) not in ("before_thread_sync", "after_thread_sync", "before", "after"):
        raise CuteError(f"tcgen05_fence(kind): \"before_thread_sync\" or \"after_thread_sync\", got {kind!r}")
    threads.require_thread("tcgen05_fence()")


# --------------------------------------------------------------------------------------------- the allocator

class TmemAllocator:
    """cutlass.utils.TmemAllocator (cutlass.memory.TmemAllocator in CuTeDSL 4.8.1): warp `allocator_warp_id`
    allocates and frees, every thread retrieves the pointer after `wait_for_alloc` (its named barrier)."""

    def __init__(self, alloc_result_dst_smem_ptr=None, *, barrier_for_retrieve, allocator_warp_id: int = 0,
                 is_two_cta: bool = False, num_allocated_columns: int = 0, two_cta_tmem_dealloc_mbar_ptr=None,
                 arch: str = "sm_100", initialize_mbarrier: bool = True, **kwargs):
        if is_two_cta:
            _refuse_two_cta("TmemAllocator(is_two_cta=True)")
        if alloc_result_dst_smem_ptr is None:
            raise CuteError("TmemAllocator(): give the shared-memory word for the TMEM address "
                            "(storage.tmem_holding_buf.ptr); the simulator has no reserved shared memory")
        self._holder, self._barrier = alloc_result_dst_smem_ptr, barrier_for_retrieve
        self._warp, self._columns = int(allocator_warp_id), int(num_allocated_columns)

    def _mine(self) -> bool:
        return threads.require_thread("TmemAllocator").warp == self._warp

    def allocate(self, num_columns, **kwargs):
        n = _check_columns(num_columns, "TmemAllocator.allocate")
        if self._columns + n > COLUMNS:
            _fail(f"TmemAllocator.allocate at {_site()}: {self._columns} + {n} columns exceed TMEM's {COLUMNS} "
                  f"(CuTeDSL's run-time assert: \"total allocated columns must be less than or equal to 512\")")
        if self._mine():
            alloc_tmem(n, self._holder)
        self._columns += n

    def wait_for_alloc(self, **kwargs):
        self._barrier.arrive_and_wait()

    def retrieve_ptr(self, dtype=types.Float32, **kwargs):
        return retrieve_tmem_ptr(dtype, 16, self._holder)

    def reserve(self, num_columns, **kwargs):
        raise CuteError("TmemAllocator.reserve (a TmemBufferPool) is not simulated: allocate, wait_for_alloc and "
                        "retrieve_ptr")

    def relinquish_alloc_permit(self, **kwargs):
        if self._mine():
            relinquish_tmem_alloc_permit()

    def free(self, tmem_ptr, num_columns: int = 0, **kwargs):
        n = self._columns if num_columns == 0 else int(num_columns)
        self._columns -= n
        if self._mine():
            dealloc_tmem(tmem_ptr, n)


# --------------------------------------------------------------------------------------------- pipelines

def _elected(what: str) -> bool:
    thread = threads.require_thread(what)
    return collectives.warp_collective(("elect_one",), sm90._elect, thread.lane, what=what, instruction="elect.sync")


def _check_cluster(cta_layout_vmnk, what: str):
    if cta_layout_vmnk is not None and size(cta_layout_vmnk) != 1:
        raise CuteError(f"{what}(cta_layout_vmnk={cta_layout_vmnk}): a cluster of {size(cta_layout_vmnk)} CTAs; the "
                        f"simulator runs clusters of one CTA only (cluster_shape_mn=(1, 1), CtaGroup.ONE)")


class PipelineTmaUmma(pipeline.PipelineAsync):
    """cutlass.pipeline.PipelineTmaUmma: TMA loads fill a stage (the producer announces the bytes), tcgen05 MMAs
    consume it and release it with tcgen05.commit."""

    def __init__(self, full, empty, num_stages: int, tx_count: int):
        super().__init__(full, empty, num_stages)
        self.tx_count = int(tx_count)

    @staticmethod
    def create(*, num_stages: int, producer_group, consumer_group, tx_count: int, barrier_storage=None,
               cta_layout_vmnk=None, mcast_mode_mn=(1, 1), enable_multicast_signaling=False, defer_sync: bool = False,
               name: str = "", **kwargs) -> "PipelineTmaUmma":
        _check_cluster(cta_layout_vmnk, "PipelineTmaUmma.create")
        made = pipeline.PipelineAsync.create(num_stages=num_stages, producer_group=producer_group,
                                             consumer_group=consumer_group, barrier_storage=barrier_storage,
                                             defer_sync=defer_sync)
        return PipelineTmaUmma(made.full, made.empty, num_stages, tx_count)

    def producer_acquire(self, state, try_acquire_token=None, expected_tx=None, **kwargs):
        if try_acquire_token is None or not try_acquire_token:
            pipeline.mbarrier_wait(self.empty[state.index], state.phase)
        if _elected("PipelineTmaUmma.producer_acquire"):
            pipeline.mbarrier_arrive_and_expect_tx(self.full[state.index],
                                                   self.tx_count if expected_tx is None else expected_tx)

    def producer_commit(self, state, **kwargs):
        """The TMA copies complete the stage's bytes themselves: nothing to do."""

    def consumer_release(self, state, **kwargs):
        if _elected("PipelineTmaUmma.consumer_release"):
            commit(self.empty[state.index])


class PipelineUmmaAsync(pipeline.PipelineAsync):
    """cutlass.pipeline.PipelineUmmaAsync: tcgen05 MMAs fill an accumulator stage (tcgen05.commit), threads read it
    out of TMEM and release it with an arrival each."""

    @staticmethod
    def create(*, num_stages: int, producer_group, consumer_group, barrier_storage=None, cta_layout_vmnk=None,
               defer_sync: bool = False, name: str = "", **kwargs) -> "PipelineUmmaAsync":
        _check_cluster(cta_layout_vmnk, "PipelineUmmaAsync.create")
        made = pipeline.PipelineAsync.create(num_stages=num_stages, producer_group=producer_group,
                                             consumer_group=consumer_group, barrier_storage=barrier_storage,
                                             defer_sync=defer_sync)
        return PipelineUmmaAsync(made.full, made.empty, num_stages)

    def producer_commit(self, state, **kwargs):
        if _elected("PipelineUmmaAsync.producer_commit"):
            commit(self.full[state.index])

    def producer_tail(self, state, **kwargs):
        for _ in range(self.num_stages - 1):
            state.advance()
        self.producer_acquire(state)


class PipelineTmaStore:
    """cutlass.pipeline.PipelineTmaStore (sm_90's, used by Blackwell epilogues): no mbarriers, the thread's TMA
    stores in bulk groups: commit a group, acquire waits until at most num_stages - 1 groups still read shared
    memory, the tail until none does."""

    def __init__(self, num_stages: int):
        self.num_stages = int(num_stages)

    @staticmethod
    def create(*, num_stages: int, producer_group=None, **kwargs) -> "PipelineTmaStore":
        if int(num_stages) <= 0:
            raise CuteError("PipelineTmaStore.create: num_stages must be greater than 0")
        return PipelineTmaStore(num_stages)

    def producer_commit(self, **kwargs):
        sm90.cp_async_bulk_commit_group()

    def producer_acquire(self, **kwargs):
        sm90.cp_async_bulk_wait_group(self.num_stages - 1, read=True)

    def producer_tail(self, **kwargs):
        sm90.cp_async_bulk_wait_group(0, read=True)


def pipeline_init_arrive(cluster_shape_mn=None, is_relaxed: bool = False, **kwargs):
    """cutlass.pipeline.pipeline_init_arrive: fences this thread's mbarrier inits (with one CTA, no arrival:
    sync_threads has no arrive-only form)."""
    _check_cluster(cluster_shape_mn, "pipeline_init_arrive")
    pipeline.mbarrier_init_fence()


def pipeline_init_wait(cluster_shape_mn=None, **kwargs):
    """cutlass.pipeline.pipeline_init_wait: with one CTA, the block barrier."""
    _check_cluster(cluster_shape_mn, "pipeline_init_wait")
    device.sync_threads()


def sync(barrier_id: int = 0, **kwargs):
    """cutlass.pipeline.sync: cute.arch.barrier(barrier_id=...), the whole block."""
    device.barrier(barrier_id)


# --------------------------------------------------------------------------------------------- the room

CUTE_ARCH = {"alloc_tmem": alloc_tmem, "dealloc_tmem": dealloc_tmem, "retrieve_tmem_ptr": retrieve_tmem_ptr,
             "relinquish_tmem_alloc_permit": relinquish_tmem_alloc_permit,
             "fence_view_async_tmem_load": fence_view_async_tmem_load,
             "fence_view_async_tmem_store": fence_view_async_tmem_store,
             "fence_view_async_tmem_op": fence_view_async_tmem_op,
             "get_max_tmem_alloc_cols": lambda compute_capability="sm_100": COLUMNS,
             "get_min_tmem_alloc_cols": lambda compute_capability="sm_100": 32}
NVGPU_TCGEN05 = {"commit": commit}
PIPELINES = {"PipelineTmaUmma": PipelineTmaUmma, "PipelineUmmaAsync": PipelineUmmaAsync,
             "PipelineTmaStore": PipelineTmaStore, "sync": sync,
             "pipeline_init_arrive": pipeline_init_arrive, "pipeline_init_wait": pipeline_init_wait}
EXPERIMENTAL = {"tcgen05_fence": tcgen05_fence}


def _add(table: list, entry):
    if entry not in table:
        table.append(entry)


_add(device.GEMMS, (is_tcgen05, umma))
_add(device.OWN_COPIES, (_LOADS, tmem_load))
_add(device.OWN_COPIES, (_STORES, tmem_store))
_add(scheduler.BLOCK_END_CHECKS, ("blackwell", check_block_end))
