"""Memory barriers (mbarriers) and `cutlass.pipeline`'s producer/consumer pipelines on the simulator.

An mbarrier lives in shared memory (a struct's `MemRange[cutlass.Int64, n]`); it expects `count` arrivals per
phase, and when the last one arrives its phase completes and the next begins. `wait(phase)` waits until the
phase of that parity has completed (a fresh barrier's phase 0 is running, so waiting for parity 1 returns at
once: that is how a producer finds every buffer empty at the start). The simulator holds each barrier's
count and completed phases per block, makes a waiting thread wait in the scheduler until the phase completes
(threads.wait_until), and counts a completed phase as a barrier for its race check: what was written
before it is seen after it.

PipelineAsync follows CuTeDSL 4.8.1 (cutlass/pipeline/sm90.py): stage i has a "full" barrier (the producer
group's threads arrive when the data is written) and an "empty" one (the consumer group's threads arrive when
they are done with it); the producer starts at phase 1, the consumer at phase 0; `create` initializes the
barriers and synchronizes the block unless `defer_sync=True`.
"""
from __future__ import annotations

import enum

from ...cute.inttuple import CuteError
from ..machine import collectives, threads
from . import device


# ----------------------------------------------------------------------------------------------- mbarriers

class MBarrier:
    """One mbarrier: a phase completes when `count` arrivals have come and every announced byte (`tx`) has
    landed; then `phase` (the phases completed) goes up by one and the counts start again.

    The one model of an mbarrier: a kernel's barriers (`mbarrier_init` below; `block` given, so that a completed
    phase counts as a barrier for the race check, and an arrival too many is refused) and chapter 08's model
    on paper (cutekit.sim.mbarriers, no block: an arrival too many leaves the phase unable to complete, which
    that model reports as the deadlock it causes)."""

    def __init__(self, name: str, count: int, key: int | None = None):
        self.name, self.count, self.pending, self.completed, self.tx = name, int(count), int(count), 0, 0
        self.key = key                          # shared byte address (a kernel's barrier)
        self.releasing: list = []               # wgmma groups whose release this phase carries (arch/sm90.py)
        self.arrivals: dict = {}                # this phase: (warp, site, k) -> the threads that arrived there
        self.previous: dict = {}                # the same, of the phase completed last
        self.initializers: set = set()          # the threads that executed its mbarrier.init
        self.init_site, self.init_syncs = "", 0     # where, and the block's barrier releases then
        self.fenced_syncs = None                # the block's barrier releases at the initializer's init fence

    @property
    def phase(self) -> int:
        """The phases completed so far (a fresh barrier is in phase 0)."""
        return self.completed

    @property
    def index(self) -> str:
        """The name, as messages write it ("barriers[3]")."""
        return self.name

    def passes(self, parity) -> bool:
        """mbarrier.try_wait.parity: true once the phase of this parity has completed."""
        return self.completed % 2 != int(parity) % 2

    def arrive(self, expect_tx: int = 0, block=None, instance=None, thread=None):
        """One arrival; `instance` (warp, site, k) names the warp instruction it belongs to: the k-th time the
        warp's lanes executed this arrive on this barrier. Its lanes arriving in two phases means the one
        instruction brought more arrivals than the barrier counts."""
        if instance is not None:
            earlier = self.previous.get(instance)
            if earlier is not None:
                self._too_many(instance, earlier, thread)
            self.arrivals.setdefault(instance, []).append(thread.linear)
        self.tx += expect_tx
        self.pending -= 1
        if self.pending < 0 and block is not None:
            raise CuteError(f"mbarrier {self.name} received more arrivals in one phase than the {self.count} it "
                            f"was initialized with (phase {self.completed} still waits for {self.tx} bytes): "
                            f"each counted thread arrives once per phase: one arrive call per phase (all the "
                            f"bytes in one mbarrier_arrive_and_expect_tx, or extra bytes with "
                            f"mbarrier_expect_tx, which does not arrive), in one lane "
                            f"(`with cute.arch.elect_one():`) when the count is 1")
        self._complete(block)

    def complete_tx(self, nbytes: int, block=None):
        self.tx -= nbytes
        self._complete(block)

    def _too_many(self, instance, earlier: list, thread):
        warp, site, _ = instance
        arrived = earlier + self.arrivals.get(instance, []) + [thread.linear]
        lanes = threads._ranges([t % threads.WARP_SIZE for t in arrived])
        raise CuteError(
            f"more arrivals in one phase than mbarrier {self.index} counts: it was initialized with count "
            f"{self.count}, and the arrive at {threads.site_text(site)} alone brought {len(arrived)} so far "
            f"(threads {threads._ranges(arrived)}: lanes {lanes} of warp {warp}; every lane that executes it arrives), "
            f"so phase {self.completed - 1} completed within that one instruction and the rest count towards phase "
            f"{self.completed} (PTX mbarrier.arrive: each arrival decrements the pending count; at zero the phase "
            f"completes). The phases then run ahead of the waits' parities. As many threads may arrive per phase as "
            f"the barrier's count (one arrival per warp: one lane of each; a count of 1: one lane, elect_one)")

    def _complete(self, block):
        if self.pending == 0 and self.tx == 0:
            self.completed += 1
            self.pending = self.count
            self.previous, self.arrivals = self.arrivals, {}
            for group in self.releasing:
                group.released = (self.key, self.completed)
            self.releasing = []
            if block is not None:
                block.epoch += 1    # what came before the phase is seen after it (the race check)

    def __repr__(self):
        return (f"MBarrier(name={self.name!r}, count={self.count}, phase={self.completed}, pending={self.pending}, "
                f"tx={self.tx})")


# What an architecture's room adds to an arrival and a wait, filled in when it is imported (arch/sm90.py: the
# wgmma groups an arrival releases, and its log of waits for the checks): functions (thread, barrier) and
# (thread, barrier, parity).
ON_ARRIVE: list = []
ON_WAIT: list = []


def _key(pointer) -> int:
    storage = pointer.storage
    return storage.byte_base + int(pointer.base) * storage.bytes_per_element


def _barriers(thread) -> dict:
    block = thread.block
    found = block.__dict__.get("mbarriers")
    if found is None:
        found = block.__dict__["mbarriers"] = {}
    return found


def _barrier(pointer, what: str) -> MBarrier:
    thread = threads.require_thread(what)
    found = _barriers(thread).get(_key(pointer))
    if found is None:
        raise CuteError(f"{what}: the mbarrier at shared byte {_key(pointer)} was not initialized "
                        f"(cute.arch.mbarrier_init, or a pipeline's create), not by this point at least: an index "
                        f"past the barriers that were initialized, or a use before the initialization (initialize the "
                        f"barriers, fence the initialization and synchronize the block before any thread uses them)")
    if thread.linear not in found.initializers and thread.synced <= found.init_syncs:
        raise CuteError(f"{what} on mbarrier {found.index}, which another thread initialized (at "
                        f"{threads.site_text(found.init_site)}) with no barrier between its mbarrier.init and this "
                        f"use: this thread may find the barrier not yet initialized. Initialize the barriers, fence "
                        f"the initialization (fence.mbarrier_init: CuTeDSL's mbarrier_init_fence), then synchronize "
                        f"the block (sync_threads) before any other thread or a TMA copy uses them")
    return found


def barrier_at(pointer, what: str) -> MBarrier:
    """The initialized mbarrier a pointer names (arch/sm90.py's TMA copies complete bytes on it): its
    initialization must have been fenced for the async proxy, and seen by the issuing thread."""
    barrier = _barrier(pointer, what)
    thread = threads.current()
    if barrier.fenced_syncs is None:
        raise CuteError(
            f"{what} completes its bytes on mbarrier {barrier.index}, whose initialization (at "
            f"{threads.site_text(barrier.init_site)}) was never fenced: mbarrier.init writes the barrier through the "
            f"generic proxy, and the copy engine updates it through the async proxy. The PTX ISA asks for "
            f"fence.mbarrier_init (CuTeDSL's mbarrier_init_fence) in the initializing thread after its inits, then a "
            f"barrier before other threads or TMA use them (CUTLASS's pipelines and NVIDIA's CuTeDSL examples do "
            f"both); without it a GPU's copy may find the barrier uninitialized: a hang, or a phase completing early")
    if thread.linear not in barrier.initializers and thread.synced <= barrier.fenced_syncs:
        raise CuteError(
            f"{what} completes its bytes on mbarrier {barrier.index}, which another thread initialized and fenced "
            f"with no barrier since: the fenced initialization must reach this thread through a barrier "
            f"(sync_threads) before it issues the copy")
    return barrier


def mbarrier_init(pointer, count, **kwargs):
    """cute.arch.mbarrier_init: a barrier expecting `count` arrivals per phase (made once per block: every
    thread that calls it with the same barrier finds it made)."""
    thread = threads.require_thread("cute.arch.mbarrier_init")
    barriers = _barriers(thread)
    key = _key(pointer)
    barrier = barriers.get(key)
    if barrier is None:
        barrier = barriers[key] = MBarrier(f"{pointer.storage.name or 'mbarrier'}[{int(pointer.base)}]", count, key)
        barrier.init_site, barrier.init_syncs = threads.user_site(2), thread.block.syncs
    barrier.initializers.add(thread.linear)
    thread.__dict__.setdefault("mbarrier_unfenced", []).append(barrier)


def mbarrier_init_fence(**kwargs):
    """cute.arch.mbarrier_init_fence (fence.mbarrier_init.release.cluster): this thread's earlier
    mbarrier.inits are ordered before later uses of the barriers, by the async proxy (TMA) included, once a
    barrier carries them to the thread that uses them."""
    thread = threads.require_thread("cute.arch.mbarrier_init_fence")
    fence_inits(thread)


def fence_inits(thread):
    """The thread's mbarrier inits so far are fenced (mbarrier_init_fence, or a proxy fence to the async
    proxy, arch/sm90.py's fence_proxy)."""
    for barrier in thread.__dict__.pop("mbarrier_unfenced", ()):
        if barrier.fenced_syncs is None:
            barrier.fenced_syncs = thread.block.syncs


def _arrive(pointer, what: str, expect_tx: int = 0, peer=None):
    if peer is not None and int(peer) != 0:
        raise CuteError(f"{what}: arriving on another CTA's mbarrier (CTA {int(peer)} of the cluster) needs "
                        "thread-block clusters, which the simulator does not run (clusters of 1 only)")
    barrier = _barrier(pointer, what)
    thread = threads.require_thread(what)
    for note in ON_ARRIVE:
        note(thread, barrier)
    site = threads.user_site(2)
    counts = thread.__dict__.get("mbarrier_arrivals")
    if counts is None:
        counts = thread.__dict__["mbarrier_arrivals"] = {}
    k = counts.get((site, barrier.key), 0)
    counts[(site, barrier.key)] = k + 1
    barrier.arrive(expect_tx, thread.block, (thread.warp, site, k), thread)


def mbarrier_arrive(pointer, peer_cta_rank_in_cluster=None, **kwargs):
    """cute.arch.mbarrier_arrive: this thread's arrival; the last one completes the phase."""
    _arrive(pointer, "cute.arch.mbarrier_arrive", 0, peer_cta_rank_in_cluster)


def mbarrier_arrive_and_expect_tx(pointer, bytes, peer_cta_rank_in_cluster=None, **kwargs):  # noqa: A002
    """cute.arch.mbarrier_arrive_and_expect_tx: announce `bytes` that copies (TMA) will deliver to this phase,
    and arrive; the phase completes once every arrival is in and every announced byte has landed."""
    if not isinstance(bytes, int) and not hasattr(bytes, "__index__"):
        raise CuteError(f"cute.arch.mbarrier_arrive_and_expect_tx: bytes must be an int, got {bytes!r}")
    _arrive(pointer, "cute.arch.mbarrier_arrive_and_expect_tx", int(bytes), peer_cta_rank_in_cluster)


def mbarrier_expect_tx(pointer, bytes, peer_cta_rank_in_cluster=None, **kwargs):  # noqa: A002
    """cute.arch.mbarrier_expect_tx: announce bytes without arriving."""
    _barrier(pointer, "cute.arch.mbarrier_expect_tx").tx += int(bytes)


def mbarrier_try_wait(pointer, phase, **kwargs) -> bool:
    """cute.arch.mbarrier_try_wait: whether the phase of parity `phase` has completed."""
    barrier = _barrier(pointer, "cute.arch.mbarrier_try_wait")
    done = barrier.passes(phase)
    if done:
        _seen(threads.require_thread("cute.arch.mbarrier_try_wait"), barrier)
    return done


mbarrier_test_wait = mbarrier_try_wait


class _Waiting:
    """What a thread waits for, told with the barrier's state when the message is written (a deadlock)."""

    def __init__(self, barrier: MBarrier, parity: int):
        self.barrier, self.parity = barrier, parity

    def __str__(self):
        b = self.barrier
        return (f"an mbarrier wait on {b.index} for phase parity {self.parity} ({b.completed} phase(s) of it "
                f"completed; phase {b.completed} has {b.count - b.pending} of {b.count} arrivals and waits for "
                f"{b.tx} more bytes)")


def _seen(thread, barrier: MBarrier):
    """A wait that returned: the thread has seen every phase completed so far (arch/sm90.py reads this)."""
    seen = thread.__dict__.get("mbarrier_seen")
    if seen is None:
        seen = thread.__dict__["mbarrier_seen"] = {}
    seen[barrier.key] = barrier.completed


def mbarrier_wait(pointer, phase, **kwargs):
    """cute.arch.mbarrier_wait: wait until the phase of parity `phase` has completed."""
    barrier = _barrier(pointer, "cute.arch.mbarrier_wait")
    parity = int(phase) % 2
    thread = threads.require_thread("cute.arch.mbarrier_wait")
    for note in ON_WAIT:
        note(thread, barrier, parity)
    threads.wait_until(lambda: barrier.completed % 2 != parity, _Waiting(barrier, parity))
    _seen(thread, barrier)


def make_warp_uniform(value, **kwargs):
    """cute.arch.make_warp_uniform: a promise that every lane holds the same value, kept by a shfl.sync.idx of
    lane 0's value over the full warp (its PTX), so every lane that has not exited must be there."""
    thread = threads.require_thread("cute.arch.make_warp_uniform()")
    if getattr(thread, "vectorized", False):        # a vectorized launch has no branch on a thread's value
        return value
    return collectives.from_lane_0(value, "cute.arch.make_warp_uniform()")


# ----------------------------------------------------------------------------------------------- groups

class Agent(enum.Enum):
    """cutlass.pipeline.Agent: what takes part in a pipeline's synchronization."""
    Thread = enum.auto()
    Warp = enum.auto()
    ThreadBlock = enum.auto()
    ThreadBlockCluster = enum.auto()


class CooperativeGroup:
    """cutlass.pipeline.CooperativeGroup(agent, size): `size` agents (threads, warps, blocks)."""

    def __init__(self, agent: Agent, size=1, alignment=None):
        if not isinstance(agent, Agent):
            raise ValueError("Unsupported agent type")
        if isinstance(size, int) and size <= 0:
            raise ValueError("Error: The number of threads in a CooperativeGroup must be greater than 0.")
        self.agent, self.size = agent, size

    def threads(self) -> int:
        """How many threads arrive for the group (CuTeDSL's _get_thread_arrive_count)."""
        if self.agent is Agent.Thread:
            return int(self.size)
        if self.agent is Agent.Warp:
            return int(self.size) * threads.WARP_SIZE
        block = threads.require_thread("a pipeline").block.launch.block_dim
        per_block = block[0] * block[1] * block[2]
        if self.agent is Agent.ThreadBlockCluster:
            threads.notice("cluster-pipeline", "a pipeline over a thread-block cluster: the simulator runs one "
                                               "block at a time (no clusters); the group is one block")
        return int(self.size) * per_block


# ----------------------------------------------------------------------------------------------- pipelines

class PipelineState:
    """Where a producer or consumer is: the stage (`index`), its parity (`phase`), the stages passed (`count`)."""

    def __init__(self, stages: int, count: int, index: int, phase: int):
        self.stages, self.count, self.index, self.phase = stages, count, index, phase

    def clone(self) -> "PipelineState":
        return PipelineState(self.stages, self.count, self.index, self.phase)

    def advance(self):
        self.index += 1
        self.count += 1
        if self.index == self.stages:
            self.index = 0
            self.phase ^= 1

    def reset_count(self):
        self.count = 0


class PipelineUserType(enum.Enum):
    Producer = enum.auto()
    Consumer = enum.auto()


def make_pipeline_state(kind: PipelineUserType, stages: int) -> PipelineState:
    """A producer starts at phase 1 (every buffer empty), a consumer at phase 0."""
    return PipelineState(stages, 0, 0, 1 if kind is PipelineUserType.Producer else 0)


class PipelineAsync:
    """cutlass.pipeline.PipelineAsync: producer and consumer threads hand `num_stages` buffers to each other."""

    def __init__(self, full, empty, num_stages: int):
        self.full, self.empty, self.num_stages = full, empty, num_stages

    @staticmethod
    def create(*, num_stages: int, producer_group: CooperativeGroup, consumer_group: CooperativeGroup,
               barrier_storage=None, producer_mask=None, consumer_mask=None, defer_sync: bool = False,
               name: str = "", **kwargs) -> "PipelineAsync":
        if barrier_storage is None:
            raise CuteError("PipelineAsync.create: give barrier_storage= (a struct's MemRange[cutlass.Int64, "
                            "2 * num_stages] .data_ptr()); the simulator has no reserved barrier memory")
        full = [barrier_storage + i for i in range(num_stages)]
        empty = [barrier_storage + num_stages + i for i in range(num_stages)]
        for pointer in full:
            mbarrier_init(pointer, producer_group.threads())
        for pointer in empty:
            mbarrier_init(pointer, consumer_group.threads())
        if not defer_sync:       # CuTeDSL 4.8.1 (pipeline/sm90.py): mbarrier_init_fence, then the block meets
            mbarrier_init_fence()
            device.sync_threads()
        return PipelineAsync(full, empty, num_stages)

    def producer_acquire(self, state: PipelineState, try_acquire_token=None):
        if try_acquire_token is None or not try_acquire_token:
            mbarrier_wait(self.empty[state.index], state.phase)

    def producer_try_acquire(self, state: PipelineState) -> bool:
        return mbarrier_try_wait(self.empty[state.index], state.phase)

    def producer_commit(self, state: PipelineState):
        mbarrier_arrive(self.full[state.index])

    def consumer_wait(self, state: PipelineState, try_wait_token=None):
        if try_wait_token is None or not try_wait_token:
            mbarrier_wait(self.full[state.index], state.phase)

    def consumer_try_wait(self, state: PipelineState) -> bool:
        return mbarrier_try_wait(self.full[state.index], state.phase)

    def consumer_release(self, state: PipelineState):
        mbarrier_arrive(self.empty[state.index])

    def producer_get_barrier(self, state: PipelineState):
        return self.full[state.index]

    def consumer_get_barrier(self, state: PipelineState):
        return self.empty[state.index]

    def producer_tail(self, state: PipelineState):
        """Wait until the consumers have released every stage (before the producer exits)."""
        for _ in range(self.num_stages):
            mbarrier_wait(self.empty[state.index], state.phase)
            state.advance()

    def make_producer(self) -> "PipelineProducer":
        return PipelineProducer(self, make_pipeline_state(PipelineUserType.Producer, self.num_stages))

    def make_consumer(self) -> "PipelineConsumer":
        return PipelineConsumer(self, make_pipeline_state(PipelineUserType.Consumer, self.num_stages))

    def make_participants(self):
        return self.make_producer(), self.make_consumer()


class ImmutableResourceHandle:
    """A stage a producer acquired or a consumer waited for: `index`, `count`, and what to do when done."""

    def __init__(self, pipeline: PipelineAsync, state: PipelineState):
        self._pipeline, self._state = pipeline, state

    @property
    def index(self):
        return self._state.index

    @property
    def count(self):
        return self._state.count

    @property
    def phase(self):
        return self._state.phase

    def get_origin(self):
        return self._pipeline


class _ProducerHandle(ImmutableResourceHandle):
    @property
    def barrier(self):
        return self._pipeline.producer_get_barrier(self._state)

    def commit(self):
        self._pipeline.producer_commit(self._state)


class _ConsumerHandle(ImmutableResourceHandle):
    @property
    def barrier(self):
        return self._pipeline.consumer_get_barrier(self._state)

    def release(self):
        self._pipeline.consumer_release(self._state)


class PipelineProducer:
    """The producer's side: acquire an empty stage, write it, commit it."""

    def __init__(self, pipeline: PipelineAsync, state: PipelineState):
        self._pipeline, self._state = pipeline, state

    def clone(self):
        return PipelineProducer(self._pipeline, self._state.clone())

    def reset(self):
        self._state = make_pipeline_state(PipelineUserType.Producer, self._pipeline.num_stages)

    def current_handle(self):
        return _ProducerHandle(self._pipeline, self._state.clone())

    def acquire(self, try_acquire_token=None):
        self._pipeline.producer_acquire(self._state, try_acquire_token)
        return self.current_handle()

    def advance(self):
        self._state.advance()

    def acquire_and_advance(self, try_acquire_token=None):
        handle = self.acquire(try_acquire_token)
        self.advance()
        return handle

    def try_acquire(self):
        return self._pipeline.producer_try_acquire(self._state)

    def commit(self, handle=None):
        (handle or self.current_handle()).commit()

    def tail(self):
        self._pipeline.producer_tail(self._state)


class PipelineConsumer:
    """The consumer's side: wait for a full stage, read it, release it."""

    def __init__(self, pipeline: PipelineAsync, state: PipelineState):
        self._pipeline, self._state = pipeline, state

    def clone(self):
        return PipelineConsumer(self._pipeline, self._state.clone())

    def reset(self):
        self._state = make_pipeline_state(PipelineUserType.Consumer, self._pipeline.num_stages)

    def current_handle(self):
        return _ConsumerHandle(self._pipeline, self._state.clone())

    def wait(self, try_wait_token=None):
        self._pipeline.consumer_wait(self._state, try_wait_token)
        return self.current_handle()

    def advance(self):
        self._state.advance()

    def wait_and_advance(self, try_wait_token=None):
        handle = self.wait(try_wait_token)
        self.advance()
        return handle

    def try_wait(self):
        return self._pipeline.consumer_try_wait(self._state)

    def release(self, handle=None):
        (handle or self.current_handle()).release()
