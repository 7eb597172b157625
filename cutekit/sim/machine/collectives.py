"""Warp and warpgroup collectives: which lanes must meet, where, and what a GPU does when they do not.

A shuffle, a vote, a warp reduction, ldmatrix, mma.sync, elect_one, `sync_warp` and the warpgroup MMA's
fence, commit, wait and `cute.gemm` are instructions that lanes execute together. A lane that reaches one waits
(machine._wait) until every lane it needs has reached the same one; the simulator then computes the result for
all of them at once. Which lanes are needed, as the PTX ISA says:

- shfl.sync, vote.sync (and the warp reductions and `warp_idx()`, which CuTeDSL builds from shfl.sync) wait
  until "all non-exited threads corresponding to membermask have executed shfl.sync with the same qualifiers
  and same membermask": lanes that returned from the kernel are not waited for. A shuffle that reads the value
  of such a lane (or of a lane outside the mask) reads nothing: "results are undefined if a thread sources a
  register from an inactive thread or a thread that is not in membermask". `exited_ok=True`.
- mma.sync, ldmatrix, stmatrix are `.sync.aligned`: "all threads in the warp must execute the same
  instruction", and the behaviour "is undefined ... if any thread in the warp has exited".
- bar.warp.sync (`sync_warp`) waits until "all threads corresponding to membermask have executed a
  bar.warp.sync", elect.sync until "all threads in the membermask execute the elect instruction": no exception
  for exited lanes either.
- wgmma.fence, wgmma.commit_group, wgmma.wait_group, wgmma.mma_async are `.aligned` over the warpgroup: "all
  threads in the warpgroup must execute the same" instruction (`group=128`).

"The same" is taken as the same line of the kernel: two halves of a warp at two shuffles in the two branches of
an `if` are refused (sm_6x requires one instruction "in convergence"; CUDA's guide asks every lane named in the
mask to execute "the same intrinsic"). A collective whose lanes are still elsewhere (at a barrier, at another
collective, waiting on an mbarrier) waits: they may come. Only when the whole block can go no further does the
launch stop, with the collective's line and, lane by lane, who arrived and where the others are (`story`); a
collective that needs a lane that has exited stops at once (`_exited_story`).

A collective that exchanges no data (`warp_idx()`, whose value every lane computes itself, and the wgmma
operations, each thread doing its own part) does not stop its lanes: a wait costs each thread a switch of its
stack. It is checked as if they waited (`passing_collective`): a lane that passed it counts as held there until
the lanes it needs pass it too, and the launch stops as above when one of them returns without it, meets a held
lane at a barrier or collective, or never comes.
"""
from __future__ import annotations

from . import threads as machine
from .threads import DeadlockError

FULL_MASK = 0xFFFFFFFF


class UndefinedResult(Exception):
    """Raised by a collective's resolve function when a lane reads what no lane supplied (an exited lane, a lane
    outside the mask): what PTX leaves undefined. The launch turns it into a DeadlockError naming the lanes."""


def warp_collective(key, resolve, payload, *, what: str = "a warp collective", instruction: str = "",
                    mask=FULL_MASK, exited_ok: bool = False, group: int = machine.WARP_SIZE):
    """Wait until every lane this collective needs has reached it at the same line (lanes of `mask` in this
    warp, or the whole warpgroup with `group=128`), then `resolve({lane: payload})` computes every lane's reply
    at once (lanes numbered within the warp or warpgroup); returns this lane's reply.

    `what` names it for the learner (`warp_reduction_sum`), `instruction` for the rule (`shfl.sync`);
    `exited_ok`: lanes that returned from the kernel are not waited for (shfl.sync, vote.sync)."""
    thread = machine.require_thread(what)
    thread.waiting = "warp"             # a vectorized launch (vector.py) refuses here and runs thread by thread
    mask = int(mask) & FULL_MASK
    if group == machine.WARP_SIZE and not mask >> thread.lane & 1:
        thread.waiting = ""
        error = machine.KernelError(
            f"{what}: lane {thread.lane} executes it with mask {mask:#010x}, which does not name lane "
            f"{thread.lane}. PTX leaves {instruction or what} undefined when the executing thread is not in its "
            f"membermask: give a mask with a bit for every lane that calls it (lane i is bit i)")
        if not thread.__dict__.get("held"):
            raise error
        # held at a passing collective (warp_idx()) that other lanes have not passed yet: on a GPU this lane is
        # still there. It waits alone; at the scheduler's next round the mask is refused, unless those lanes
        # never come (then the GPU hangs at warp_idx(), and that is told)
        request = (("outside its mask", thread.linear), _outside_mask(thread, error), None, 1 << thread.lane, True,
                   group, what, instruction or what)
        thread.request = request
    else:
        thread.request = (key, resolve, payload, mask, exited_ok, group, what, instruction or what)
    machine._wait(thread, "warp")
    reply, thread.reply, thread.request = thread.reply, None, None
    return reply


def _outside_mask(thread, error):
    """The resolve function of a lane held at a passing collective that executes a collective whose mask does not
    name it: the passing collective's hang where the lanes it needs are all elsewhere, else the mask's error."""
    def resolve(payloads):
        _raise_held_hang(thread)
        from .failures import where_text
        import linecache
        error.kernel, error.block = thread.block.launch.report.kernel, tuple(thread.block_idx)
        error.thread = tuple(thread.thread_idx)
        if isinstance(thread.where, tuple) and thread.where[0] != "?":
            error.where = where_text(thread.where[0], thread.where[1])
            error.line = linecache.getline(thread.where[0], thread.where[1]).strip() or None
        raise error
    return resolve


def _raise_held_hang(thread):
    """If `thread` is held at a passing collective whose missing lanes can never come (each waits at a barrier or
    at a collective that needs a lane held there, or returned while held elsewhere), a GPU hangs there: raise
    that story. Else return."""
    threads = thread.block.threads
    for entry in thread.__dict__.get("held") or ():
        missing = [threads[entry.start + i] for i in sorted(entry.remaining) if entry.start + i < len(threads)]
        if missing and all(_never_comes(t, entry) for t in missing):
            arrived = list(entry.arrived.values())
            raise _failure(_passing_story(threads, entry, arrived, missing), arrived[0], entry.site)


def _never_comes(t, entry) -> bool:
    if t.finished:
        return bool(t.__dict__.get("held"))
    if t.waiting == "barrier":
        return True
    if t.waiting == "warp" and t.request:
        request = t.request
        if request[5] != machine.WARP_SIZE:
            return True
        return any(request[3] >> ((entry.start + lane) % machine.WARP_SIZE) & 1 for lane in entry.arrived)
    return False


def from_lane_0(value, what: str):
    """Lane 0's `value` in every lane: the shfl.sync.idx that CuTeDSL's make_warp_uniform (and warp_idx) is."""
    return warp_collective(("shuffle", "idx", what), _from_lane_0, value, what=what, instruction="shfl.sync",
                           exited_ok=True)


def _from_lane_0(payloads: dict) -> dict:
    if 0 not in payloads:
        raise UndefinedResult("every lane reads lane 0's value, and lane 0 is not there")
    return dict.fromkeys(payloads, payloads[0])


# --------------------------------------------------------------------------------------------- without waiting

class _Passing:
    """One execution of a data-free collective (`warp_idx()`, a wgmma fence, commit, wait or MMA) that some lanes
    of its warp (warpgroup) have passed and others not yet. A lane that has passed it is held there, as a GPU
    would hold it, until the lanes it needs (`remaining`) pass it too or, where exited lanes are not waited for,
    return."""
    __slots__ = ("key", "site", "request", "start", "size", "arrived", "remaining", "absent")

    def __init__(self, key, site, request, start, size, remaining):
        self.key, self.site, self.request, self.start, self.size = key, site, request, start, size
        self.arrived: dict = {}         # lane (within the group) -> its Thread
        self.remaining: set = remaining
        self.absent: list = []          # lanes that returned without passing it, where that is refused


def passing_collective(key, *, what: str, instruction: str, exited_ok: bool = False,
                       group: int = machine.WARP_SIZE, reads_lane_0: bool = False):
    """A collective that exchanges no data (CuTeDSL's `warp_idx()`, the warpgroup's wgmma operations): the lane
    is not stopped (a wait costs a switch of its stack), but the collective is checked as if it were. Each
    execution is matched with the other lanes' executions of the same line, in order, and refused, naming its
    lanes, when a lane it needs returns without passing it (unless `exited_ok`), or when lanes it needs meet a
    lane held at it at another barrier or collective, or never come (a GPU would wait there forever)."""
    thread = machine.require_thread(what)
    if thread.__class__ is not machine.Thread:
        thread.waiting = "warp"         # a vectorized launch refuses here and runs thread by thread
    block = thread.block
    table = block.__dict__.get("passing")
    if table is None:
        table = block.__dict__["passing"] = {}
    linear = thread.linear
    start = linear - linear % group
    lane = linear - start
    site = machine.user_site(2)
    entries = table.get((group, start))
    if entries is None:
        entries = table[(group, start)] = []
    for entry in entries:
        if lane in entry.remaining and entry.site == site and entry.key == key:
            break
    else:
        request = (key, reads_lane_0, None, FULL_MASK, exited_ok, group, what, instruction)
        entry = _Passing(key, site, request, start, group, set(_named(request, group)))
        entries.append(entry)
        threads = block.threads
        for i in list(entry.remaining):
            t = threads[start + i] if start + i < len(threads) else None
            if t is None or (t.finished and not t.__dict__.get("held")):
                _exited(block, entry, i, thread)
    entry.arrived[lane] = thread
    entry.remaining.discard(lane)
    held = thread.__dict__.get("held")
    if held is None:
        held = thread.__dict__["held"] = []
    if not held and len(entries) > 1:
        _crossed(block, entries, entry, lane)
    held.append(entry)
    if not entry.remaining:
        _complete(block, entry)


def _crossed(block, entries, entry, lane: int):
    """`lane`, held nowhere else, stops at `entry` on a GPU. Where lanes that a GPU holds at another line's
    execution (their first hold) wait for this lane, each side waits for the other forever (warp_idx() in one
    branch of an `if` and after it). Lanes the simulator let pass `entry` while they are held at an earlier one
    are not at `entry` on a GPU, and do not count."""
    for other in entries:
        if other is entry or other.site == entry.site or other.size != entry.size or lane not in other.remaining:
            continue
        if any(t.__dict__["held"][0] is other for t in other.arrived.values()):
            size = other.size
            problem = (f"{_at(other.request, other.site)} is reached by {_lanes(sorted(other.arrived), size)} of "
                       f"{_group_name(other.start, size)}, which wait there for {_lanes([lane], size)}; it reaches "
                       f"{_at(entry.request, entry.site)} instead, which needs them: each waits for the other. "
                       f"{_rule(other.request, size)}: a GPU hangs here. The simulator stops instead. "
                       f"{_fix(other.request)}.")
            raise _failure(problem, next(iter(other.arrived.values())), other.site)


def _exited(block, entry, lane: int, thread):
    """Lane `lane` of the entry's group has returned (or is not in the block) without passing it. Where that is
    refused, the launch stops at the end of the scheduler's round, when every lane that returns in it has."""
    if not entry.request[4] or (entry.request[1] and lane == 0):
        if lane not in entry.absent:
            entry.absent.append(lane)
        block.__dict__.setdefault("passing_refused", entry)
        return
    entry.remaining.discard(lane)


def refused(block):
    """The failure for the first passing collective a returned lane made impossible (or None)."""
    entry = block.__dict__.get("passing_refused")
    if entry is None:
        return None
    arrived = list(entry.arrived.values())
    absent = sorted(entry.absent)
    if not arrived:
        return None
    if entry.request[4]:        # reads lane 0, which returned
        problem = _undefined_story(arrived[0], entry.request, arrived, absent, entry.start, entry.size,
                                   "every lane reads lane 0's value, and lane 0 is not there", entry.site)
    else:
        problem = _exited_story(block.threads, entry.request, entry.site, arrived, absent, entry.start, entry.size)
    return _failure(problem, arrived[0], entry.site)


def _complete(block, entry):
    block.__dict__["passing"][(entry.size, entry.start)].remove(entry)
    for t in entry.arrived.values():
        t.__dict__["held"].remove(entry)
        if t.finished and not t.__dict__["held"]:
            _returned(block, t)


def _returned(block, thread):
    """A thread that returned and is held nowhere has left: the entries of its group that need it drop it."""
    for (size, start), entries in list(block.__dict__["passing"].items()):
        if start <= thread.linear < start + size:
            for entry in list(entries):
                if thread.linear - start in entry.remaining:
                    _exited(block, entry, thread.linear - start, thread)
                    if not entry.remaining:
                        _complete(block, entry)


def on_exit(thread):
    """Called when a thread returns from the kernel."""
    if thread.block.__dict__.get("passing") and not thread.__dict__.get("held"):
        _returned(thread.block, thread)


def on_release(block, released: list):
    """Threads that meet at a barrier or collective: none of them may be held at a passing collective that
    needs another of them (on a GPU the one would wait at the collective, the other at the barrier, forever)."""
    if not block.__dict__.get("passing"):
        return
    meeting = None
    for t in released:
        held = t.__dict__.get("held")
        if held:
            entry = held[0]
            if meeting is None:
                meeting = {u.linear for u in released}
            stuck = [block.threads[entry.start + i] for i in entry.remaining if entry.start + i in meeting]
            if stuck:
                raise _failure(_passing_story(block.threads, entry, list(entry.arrived.values()), stuck),
                               next(iter(entry.arrived.values())), entry.site)


def passing_story(block):
    """At a block that can go no further (or has ended): a passing collective some lanes never passed, as
    (problem, the first lane at it, its line), or None."""
    threads = block.threads or ()
    for entries in (block.__dict__.get("passing") or {}).values():
        for entry in entries:
            missing = [threads[entry.start + i] for i in sorted(entry.remaining) if entry.start + i < len(threads)]
            if missing:
                arrived = list(entry.arrived.values())
                return _passing_story(threads, entry, arrived, missing), arrived[0], entry.site
    return None


# --------------------------------------------------------------------------------------------- releasing

def release(threads: list, live: list) -> bool:
    """Compute every collective whose lanes have all arrived; True if any was."""
    released = False
    seen = None
    for t in live:
        if t.waiting != "warp":
            continue
        size = t.request[5]
        start = t.linear - t.linear % size
        if seen is None:
            seen = set()
        elif (size, start) in seen:
            continue
        seen.add((size, start))
        if _release_group(threads, start, size):
            released = True
    return released


def _release_group(threads: list, start: int, size: int) -> bool:
    members = threads[start:start + size]
    first = None
    for t in members:
        if t.waiting == "warp" and t.request[5] == size:
            first = t
            break
    request, where = first.request, first.where
    key, mask = request[0], request[3]
    if len(members) == size and (mask == FULL_MASK or size != machine.WARP_SIZE):
        # the usual case: every lane waits at this collective, at this line, with this mask
        for t in members:
            r = t.request
            if t.waiting != "warp" or t.where != where or r[3] != mask or r[5] != size or r[0] != key:
                break
        else:
            _resolve(members, request, start, size, [])
            return True
    return _release_divergent(threads, members, start, size)


def _collectives(members: list, size: int) -> list:
    """[request, where, arrived threads] of each distinct collective the lanes of one warp (warpgroup) wait at."""
    found: list = []
    for t in members:
        if t.waiting != "warp" or t.request[5] != size:
            continue
        r = t.request
        for entry in found:
            if entry[1] == t.where and entry[0][3] == r[3] and entry[0][0] == r[0]:
                entry[2].append(t)
                break
        else:
            found.append([r, t.where, [t]])
    return found


def _named(request, size: int) -> range | list:
    if size != machine.WARP_SIZE:
        return range(size)
    mask = request[3]
    return range(32) if mask == FULL_MASK else [lane for lane in range(32) if mask >> lane & 1]


def _missing(threads: list, request, start: int, size: int, arrived: list):
    """The lanes (numbered within the group) this collective needs that are not at it: those that have exited
    (or do not exist: a block whose size is not a multiple of 32), and the threads still elsewhere."""
    here = {t.linear - start for t in arrived}
    absent, elsewhere = [], []
    for i in _named(request, size):
        if i in here:
            continue
        t = threads[start + i] if start + i < len(threads) else None
        if t is None or (t.finished and not t.__dict__.get("held")):
            absent.append(i)
        else:               # a lane that returned while held at a passing collective is still there on a GPU
            elsewhere.append(t)
    return absent, elsewhere


def _release_divergent(threads: list, members: list, start: int, size: int) -> bool:
    released = False
    for request, where, arrived in _collectives(members, size):
        absent, elsewhere = _missing(threads, request, start, size, arrived)
        if elsewhere:
            continue            # they may still come; judged when the block can go no further (story)
        if absent and not request[4]:
            raise _failure(_exited_story(threads, request, where, arrived, absent, start, size), arrived[0], where)
        _resolve(arrived, request, start, size, absent)
        released = True
    return released


def _resolve(arrived: list, request, start: int, size: int, absent: list):
    block = arrived[0].block
    if "passing" in block.__dict__:
        on_release(block, arrived)
    try:
        replies = request[1]({t.linear - start: t.request[2] for t in arrived})
    except UndefinedResult as undefined:
        if "passing" in block.__dict__:     # lanes a GPU holds at warp_idx() never read anything here
            _raise_held_hang(arrived[0])
        raise _failure(_undefined_story(arrived[0], request, arrived, absent, start, size, str(undefined)),
                       arrived[0], arrived[0].where) from None
    for t in arrived:
        t.reply = replies.get(t.linear - start)
        t.waiting = ""


# --------------------------------------------------------------------------------------------- stories

def _failure(problem: str, thread, where) -> DeadlockError:
    """A DeadlockError located at the collective's line, in `thread` (the first lane that reached it)."""
    from .failures import where_text
    import linecache
    error = DeadlockError(problem, kernel=thread.block.launch.report.kernel, block=tuple(thread.block_idx),
                          thread=tuple(thread.thread_idx))
    if isinstance(where, tuple) and where[0] != "?":
        error.where = where_text(where[0], where[1])
        error.line = linecache.getline(where[0], where[1]).strip() or None
    return error


def _group_name(start: int, size: int) -> str:
    if size == machine.WARP_SIZE:
        return f"warp {start // size}"
    return f"warpgroup {start // size} (threads {start}-{start + size - 1})"


def _lanes(numbers, size: int) -> str:
    word = "lane" if size == machine.WARP_SIZE else "thread"
    numbers = list(numbers)
    return f"{word}{'s' if len(numbers) > 1 else ''} {machine._ranges(numbers)}"


def _gone(absent: list, start: int, threads: list, size: int) -> str:
    """`lanes 1-15 have returned from the kernel`, and which are not in the block at all (a block whose size is
    not a multiple of 32)."""
    returned = [i for i in absent if start + i < len(threads)]
    missing = [i for i in absent if start + i >= len(threads)]
    parts = []
    if returned:
        parts.append(f"{_lanes(returned, size)} {'have' if len(returned) > 1 else 'has'} returned from the kernel")
    if missing:
        parts.append(f"{_lanes(missing, size)} {'are' if len(missing) > 1 else 'is'} not in the block (it has "
                     f"{len(threads)} threads)")
    return " and ".join(parts)


def _at(request, where) -> str:
    return f"{request[6]} at {machine.site_text(where)}"


def _waits_at(t) -> str:
    """Where a live thread waits, in words (a thread that returned while held at a passing collective: there)."""
    held = t.__dict__.get("held")
    if held and t.finished:
        return _at(held[0].request, held[0].site)
    if t.waiting == "warp":
        return _at(t.request, t.where)
    if t.waiting == "barrier":
        return f"cute.arch.sync_threads() at {machine.site_text(t.where)}"
    if t.waiting == "named" and t.request:
        return f"named barrier {t.request[0]} (of {t.request[1]} threads) at {machine.site_text(t.where)}"
    if t.waiting == "until" and t.request:
        return f"{t.request[0]} at {machine.site_text(t.where)}"
    return f"{t.waiting or 'nothing'} at {machine.site_text(t.where)}"


def _rule(request, size: int) -> str:
    instruction = request[7]
    if size != machine.WARP_SIZE:
        return (f"{instruction} is .aligned over the warpgroup: all 128 threads of it must execute the same "
                f"{instruction} (PTX ISA), or the behaviour is undefined")
    if request[4]:
        return (f"{instruction} waits until every lane named in its mask that has not exited executes the same "
                f"{instruction} with the same mask (PTX ISA)")
    if instruction in ("bar.warp.sync", "elect.sync"):
        return (f"{instruction} waits until every lane named in its mask executes it, exited or not (PTX ISA)")
    return (f"{instruction} is .sync.aligned: every lane of the warp must execute the same {instruction}, and it "
            f"is undefined if any lane of the warp has exited (PTX ISA)")


_MASKED = ("cute.arch.shuffle_sync", "cute.arch.vote_", "cute.arch.sync_warp")


def _fix(request) -> str:
    """What to write instead; a mask only where the function takes one."""
    masked = request[6].startswith(_MASKED)
    return ("Reach it with every lane it needs: call it where all of them are (before the `if` that some lanes "
            "skip, or after it) and branch on its result" + (", or give it a mask of exactly the lanes that call it"
                                                             if masked else ""))


def _exited_story(threads, request, where, arrived, absent, start, size) -> str:
    mask = "" if request[3] == FULL_MASK or size != machine.WARP_SIZE else f" (mask {request[3]:#010x})"
    return (f"{_at(request, where)} is reached by {_lanes([t.linear - start for t in arrived], size)} of "
            f"{_group_name(start, size)}{mask}; {_gone(absent, start, threads, size)} without reaching it. "
            f"{_rule(request, size)}: a GPU may hang here or give undefined results. The simulator stops "
            f"instead. {_fix(request)}.")


def _undefined_story(thread, request, arrived, absent, start, size, detail, where=None) -> str:
    threads = thread.block.threads or ()
    gone = f"; {_gone(absent, start, threads, size)}" if absent else ""
    returned = any(start + i < len(threads) for i in absent)
    hang = (", and had those lanes gone elsewhere instead of returning, it would wait for them forever"
            if returned else "")
    fix = _fix(request) if returned or not absent else (
        "Launch whole warps (a block size that is a multiple of 32), or keep the reads within the lanes there")
    return (f"{_at(request, where or thread.where)} is reached by {_lanes([t.linear - start for t in arrived], size)} "
            f"of {_group_name(start, size)}{gone}. Lanes that are not there are not waited for, but {detail}: PTX "
            f"leaves the result undefined (\"results are undefined if a thread sources a register from an inactive "
            f"thread or a thread that is not in membermask\"), so a GPU gives garbage here{hang}. {fix}.")


def _passing_story(threads, entry, arrived, elsewhere) -> str:
    start, size, request = entry.start, entry.size, entry.request
    places: dict = {}
    for other in elsewhere:
        held = other.__dict__.get("held")
        if held:
            text = _at(held[0].request, held[0].site)
        elif other.finished:
            text = "the kernel's end, having returned while others were held"
        else:
            text = _waits_at(other)
        places.setdefault(text, []).append(other.linear - start)
    parts = [f"{_lanes(ids, size)} {'wait' if len(ids) > 1 else 'waits'} at {text}" for text, ids in places.items()]
    return (f"{_at(request, entry.site)} is reached by {_lanes([t.linear - start for t in arrived], size)} of "
            f"{_group_name(start, size)}, never by the others it needs: " + "; ".join(parts) +
            f". {_rule(request, size)}: a GPU hangs here (or gives undefined results). The simulator stops instead. "
            f"{_fix(request)}.")


def story(threads: list, live: list):
    """When the block can go no further: the first collective some of whose lanes never come, as
    (problem, the first lane at it, its line), or None when no collective waits."""
    seen = set()
    for t in live:
        if t.waiting != "warp":
            continue
        size = t.request[5]
        start = t.linear - t.linear % size
        if (size, start) in seen:
            continue
        seen.add((size, start))
        members = threads[start:start + size]
        for request, where, arrived in _collectives(members, size):
            absent, elsewhere = _missing(threads, request, start, size, arrived)
            if not elsewhere:
                continue
            held = next((t.__dict__["held"][0] for t in arrived if t.__dict__.get("held")), None)
            if held is not None:    # on a GPU these lanes wait at the passing collective they are held at
                missing = [threads[held.start + i] for i in sorted(held.remaining) if held.start + i < len(threads)]
                if missing:
                    passed = list(held.arrived.values())
                    return _passing_story(threads, held, passed, missing), passed[0], held.site
            places: dict = {}
            for other in elsewhere:
                text = _waits_at(other)
                if other.waiting == "warp" and other.where == where and other.request[3] != request[3]:
                    text += f" with mask {other.request[3]:#010x}, not {request[3]:#010x}"
                places.setdefault(text, []).append(other.linear - start)
            parts = [f"{_lanes(ids, size)} {'wait' if len(ids) > 1 else 'waits'} at {text}"
                     for text, ids in places.items()]
            if absent:
                parts.append(_gone(absent, start, threads, size))
            problem = (f"{_at(request, where)} is reached by {_lanes([a.linear - start for a in arrived], size)} of "
                       f"{_group_name(start, size)}, never by the others it needs: "
                       + "; ".join(parts) + f". {_rule(request, size)}: a GPU hangs here (or gives undefined "
                       f"results). The simulator stops instead. {_fix(request)}.")
            return problem, arrived[0], where
    return None
