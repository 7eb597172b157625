"""A small model of a TMA + mbarrier + wgmma pipeline, in plain Python: a producer and consumer warpgroups,
each a list of steps, run against `stages` shared-memory buffers with a `full` and an `empty` mbarrier each.
It reports the first mistake by name instead of hanging or computing garbage, as a GPU would.

An mbarrier (PTX `mbarrier`, 8 bytes of shared memory) counts down a *phase*: it is made with an expected
arrival count; a phase completes when that many arrivals have come AND every byte announced with
`expect_tx` has landed (a TMA copy "completes transactions" on the barrier as its bytes arrive). Then the
phase number goes up by one and the counts start again. A thread waits with a parity bit:
`wait(barrier, parity)` returns once the phase whose number has that parity has completed, that is, at
once while the current phase number's parity differs from `parity`. A fresh barrier is in phase 0, so
waiting for parity 1 ("the phase before") returns at once, and waiting for parity 0 waits for the first
completion.

Steps (plain tuples made by these functions, so a learner's list prints readably):

    wait(barrier, stage, parity)        mbarrier_wait(barriers[stage], parity); barrier is "full" or "empty"
    arrive(barrier, stage)              mbarrier_arrive
    arrive_expect_tx(barrier, stage, n) mbarrier_arrive_and_expect_tx: arrive, and n bytes are to land
    tma_load(stage, k_tile)             cute.copy of a TMA atom: k-tile `k_tile` of A and B into `stage`,
                                        its bytes completing transactions on full[stage] (lands later)
    fence()                             warpgroup.fence: registers ready for the tensor cores
    wgmma(stage, k_tile)                the k-tile's wgmmas, reading `stage` (asynchronous until retired)
    commit_group()                      warpgroup.commit_group: the wgmmas issued since the last commit
    wait_group(n)                       warpgroup.wait_group(n): until at most n committed groups still run
    mma(stage, k_tile)                  a synchronous MMA that has read `stage` when the step ends

`run_pipeline(producer, consumers, k_tiles, stages, bytes_per_stage)` runs them under two schedules (the
producer as far ahead as it can get, and the consumers first), with TMA copies landing as late as possible,
and returns a `PipelineReport`: `ok`, `mistake` (a name from MISTAKES) and `message`.

The barriers are the simulator's own `MBarrier` (cutekit.sim.ops.pipeline), the class a kernel's
`cute.arch.mbarrier_*` calls count on; this model only drives it with the steps above, one at a time.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .ops.pipeline import MBarrier     # the one mbarrier model: the kernels' barriers are the same class

MISTAKES = {
    "wrong phase": "waiting on the wrong phase",
    "stage reused": "stage reused before its consumer released it",
    "released while read": "stage released while a wgmma still reads it",
    "read before landed": "stage read before its TMA copy landed",
    "deadlock": "deadlock",
    "no fence": "wgmma without a warpgroup.fence before it",
    "still running": "wgmmas still running when the loop ends",
    "bad step": "a step the model does not know",
    "wrong k-tile": "k-tiles loaded or multiplied out of order",
}


def wait(barrier: str, stage: int, parity: int) -> tuple:
    return ("wait", barrier, stage, parity)


def arrive(barrier: str, stage: int) -> tuple:
    return ("arrive", barrier, stage)


def arrive_expect_tx(barrier: str, stage: int, nbytes: int) -> tuple:
    return ("arrive_expect_tx", barrier, stage, nbytes)


def tma_load(stage: int, k_tile: int) -> tuple:
    return ("tma_load", stage, k_tile)


def fence() -> tuple:
    return ("fence",)


def wgmma(stage: int, k_tile: int) -> tuple:
    return ("wgmma", stage, k_tile)


def commit_group() -> tuple:
    return ("commit_group",)


def wait_group(n: int) -> tuple:
    return ("wait_group", n)


def mma(stage: int, k_tile: int) -> tuple:
    return ("mma", stage, k_tile)


@dataclass(frozen=True)
class PipelineReport:
    ok: bool
    mistake: str = ""
    message: str = ""
    schedule: str = ""

    def __str__(self):
        return "ok" if self.ok else f"{MISTAKES.get(self.mistake, self.mistake)}: {self.message}"


class _Mistake(Exception):
    def __init__(self, mistake, message):
        super().__init__(message)
        self.mistake, self.message = mistake, message


@dataclass
class _Role:
    name: str
    steps: list
    pc: int = 0
    fenced: bool = False
    issued: list = field(default_factory=list)      # stages read by wgmmas issued since the last commit
    groups: list = field(default_factory=list)      # committed groups still running: lists of stages
    uses: dict = field(default_factory=dict)        # stage -> how many times this role waited it full/empty

    @property
    def done(self):
        return self.pc >= len(self.steps)


class _Machine:
    def __init__(self, k_tiles, stages, bytes_per_stage, consumers):
        self.k_tiles, self.stages, self.bytes = k_tiles, stages, bytes_per_stage
        self.full = [MBarrier(f"full[{s}]", 1) for s in range(stages)]
        self.empty = [MBarrier(f"empty[{s}]", consumers) for s in range(stages)]
        self.content = [None] * stages          # k-tile held (or being written) in each stage
        self.landed = [True] * stages
        self.in_flight = []                     # (stage, k_tile) TMA copies not landed yet
        self.readers = [set() for _ in range(stages)]    # consumers that read the stage's k-tile, not released
        self.released = [set(range(consumers)) for _ in range(stages)]
        self.consumers = consumers
        self.next_load = 0
        self.next_mma = [0] * consumers

    def barrier(self, name, stage, who):
        if name not in ("full", "empty"):
            raise _Mistake("bad step", f"{who}: barrier {name!r}: the pipeline's barriers are 'full' and 'empty'")
        if not isinstance(stage, int) or not 0 <= stage < self.stages:
            raise _Mistake("bad step", f"{who}: stage {stage!r} does not exist: there are {self.stages} stages, "
                                       f"0 to {self.stages - 1} (the stage index wraps around the ring)")
        return (self.full if name == "full" else self.empty)[stage]

    def land_one(self):
        stage, k_tile = self.in_flight.pop(0)
        self.landed[stage] = True
        self.full[stage].complete_tx(self.bytes)

    def step(self, role, index):
        """Try the role's next step; False if it must wait."""
        step = role.steps[role.pc]
        who = role.name
        if not isinstance(step, tuple) or not step:
            raise _Mistake("bad step", f"{who}: step {role.pc} is {step!r}: use the step functions (wait, arrive, ...)")
        kind = step[0]
        if kind == "wait":
            _, name, stage, parity = step
            bar = self.barrier(name, stage, who)
            if parity not in (0, 1):
                raise _Mistake("bad step", f"{who}: parity {parity!r}: a parity is 0 or 1")
            use = role.uses.get((name, stage), 0)
            if not bar.passes(parity):
                return False
            # the use-th wait of a consumer on full[s] needs fill number `use` (phase `use` complete); the producer's
            # use-th wait on empty[s] needs the consumers' release number `use` - 1 (none for its first pass)
            needed = use + 1 if who != "producer" else use
            if bar.phase < needed:
                right = (needed - 1) & 1 if needed else 1
                raise _Mistake("wrong phase", f"{who} waits on {bar.name} with parity {parity} (its wait number {use} "
                               f"on stage {stage}) while {bar.name} is in phase {bar.phase}: parity {parity} names a "
                               f"phase that has already completed (or the phase before the first), so the wait returns "
                               f"at once; it should wait for parity {right}")
            role.uses[(name, stage)] = use + 1
        elif kind in ("arrive", "arrive_expect_tx"):
            name, stage = step[1], step[2]
            bar = self.barrier(name, stage, who)
            nbytes = step[3] if kind == "arrive_expect_tx" else 0
            if name == "empty":
                if who == "producer":
                    raise _Mistake("bad step", f"producer arrives on {bar.name}: the consumers release a stage")
                consumer = index - 1
                if role.issued or any(stage in group for group in role.groups):
                    raise _Mistake("released while read", f"{who} arrives on {bar.name} while a wgmma it issued "
                                   f"still reads stage {stage}: wait_group must retire that wgmma's group first")
                if consumer not in self.readers[stage]:
                    raise _Mistake("stage reused", f"{who} arrives on {bar.name} before it has read stage {stage}: "
                                   f"the producer may overwrite the stage before the MMA reads it")
                self.readers[stage].discard(consumer)
                self.released[stage].add(consumer)
            elif who != "producer":
                raise _Mistake("bad step", f"{who} arrives on {bar.name}: the producer fills a stage")
            bar.arrive(nbytes)
        elif kind == "tma_load":
            _, stage, k_tile = step
            self.barrier("full", stage, who)
            if who != "producer":
                raise _Mistake("bad step", f"{who} issues a TMA load: the producer loads")
            if len(self.released[stage]) < self.consumers or self.readers[stage]:
                raise _Mistake("stage reused", f"producer loads k-tile {k_tile} into stage {stage}, which still "
                               f"holds k-tile {self.content[stage]} that the consumers have not released (it must "
                               f"wait on empty[{stage}] with the parity of the consumers' last release)")
            if k_tile != self.next_load:
                raise _Mistake("wrong k-tile", f"producer loads k-tile {k_tile}; the next one is {self.next_load}")
            self.next_load += 1
            self.content[stage], self.landed[stage] = k_tile, False
            self.released[stage] = set()
            self.in_flight.append((stage, k_tile))
        elif kind in ("wgmma", "mma"):
            _, stage, k_tile = step
            self.barrier("full", stage, who)
            consumer = index - 1
            if who == "producer":
                raise _Mistake("bad step", "the producer does not multiply")
            if kind == "wgmma" and not role.fenced:
                raise _Mistake("no fence", f"{who} issues a wgmma without warpgroup.fence() before the first one: "
                               f"the accumulators' last writes (the zero fill) are not ordered before the tensor cores")
            held = self.content[stage]
            if held is not None and held > k_tile:
                raise _Mistake("wrong k-tile", f"{who} multiplies k-tile {k_tile} from stage {stage}, which holds the "
                               f"later k-tile {held}: walking the ring in order, k-tile {k_tile} is in stage {k_tile % self.stages}")
            if not self.landed[stage] or held != k_tile:
                what = "is still landing" if held == k_tile else f"still holds k-tile {held}"
                raise _Mistake("read before landed", f"{who} multiplies k-tile {k_tile} from stage {stage}, which "
                               f"{what}: its wait on full[{stage}] did not wait for this fill")
            if k_tile != self.next_mma[consumer]:
                raise _Mistake("wrong k-tile", f"{who} multiplies k-tile {k_tile}; the next one is "
                               f"{self.next_mma[consumer]}")
            self.next_mma[consumer] += 1
            self.readers[stage].add(consumer)
            if kind == "wgmma":
                role.issued.append(stage)
        elif kind == "fence":
            role.fenced = True
        elif kind == "commit_group":
            if role.issued:
                role.groups.append(role.issued)
            role.issued = []
        elif kind == "wait_group":
            if not isinstance(step[1], int) or step[1] < 0:
                raise _Mistake("bad step", f"{who}: wait_group({step[1]!r}) takes a count of groups, 0 or more")
            # the oldest groups retire first (worst case: none retires before it must)
            while len(role.groups) > step[1]:
                role.groups.pop(0)
        else:
            raise _Mistake("bad step", f"{who}: unknown step {step!r}")
        role.pc += 1
        return True


def run_pipeline(producer, consumers, k_tiles: int, stages: int, bytes_per_stage: int) -> PipelineReport:
    """Run the producer's steps and each consumer's against the ring; the first mistake under either schedule."""
    consumers = [list(steps) for steps in consumers]
    for schedule in ("producer first", "consumers first"):
        report = _run(producer, consumers, k_tiles, stages, bytes_per_stage, schedule)
        if not report.ok:
            return report
    return PipelineReport(True)


def _run(producer, consumers, k_tiles, stages, bytes_per_stage, schedule) -> PipelineReport:
    machine = _Machine(k_tiles, stages, bytes_per_stage, len(consumers))
    roles = [_Role("producer", list(producer))] + [
        _Role("consumer" if len(consumers) == 1 else f"consumer {i}", list(steps)) for i, steps in enumerate(consumers)]
    order = list(range(len(roles))) if schedule == "producer first" else list(range(1, len(roles))) + [0]
    try:
        for _ in range(100_000):
            moved = False
            for index in order:
                role = roles[index]
                while not role.done and machine.step(role, index):
                    moved = True
                if moved:
                    break
            if all(role.done for role in roles):
                break
            if not moved:
                if machine.in_flight:            # nobody can move: the oldest TMA copy lands now, not sooner
                    machine.land_one()
                    continue
                blocked = []
                for role in roles:
                    if not role.done:
                        _, name, stage, parity = role.steps[role.pc]   # only a wait can block
                        bar = machine.barrier(name, stage, role.name)
                        blocked.append(f"{role.name} waits on {bar.name} for parity {parity} (it is in phase "
                                       f"{bar.phase}, {bar.pending} arrival(s) and {bar.tx} bytes still to come)")
                raise _Mistake("deadlock", "; ".join(blocked) + ", and nothing else can run: waiting on the wrong "
                               "phase, or an arrive that never comes")
        for role in roles[1:]:
            if role.issued or role.groups:
                raise _Mistake("still running", f"{role.name} ends with wgmmas still running: wait_group(0) (after a "
                               f"commit_group) before the accumulators are read")
        for consumer in range(len(consumers)):
            if machine.next_mma[consumer] != k_tiles:
                raise _Mistake("wrong k-tile", f"{roles[consumer + 1].name} multiplied {machine.next_mma[consumer]} "
                               f"k-tiles of {k_tiles}")
        if machine.next_load != k_tiles:
            raise _Mistake("wrong k-tile", f"the producer loaded {machine.next_load} k-tiles of {k_tiles}")
    except _Mistake as mistake:
        return PipelineReport(False, mistake.mistake, mistake.message, schedule)
    return PipelineReport(True, schedule=schedule)


__all__ = ["MBarrier", "PipelineReport", "run_pipeline", "wait", "arrive", "arrive_expect_tx", "tma_load", "fence",
           "wgmma", "commit_group", "wait_group", "mma", "MISTAKES"]
