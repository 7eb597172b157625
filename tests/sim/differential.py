"""The simulator against real CuTeDSL 4.8.1 and the PTX ISA, on small generated kernels.

`make_cases(n, seed)` draws n kernels from a small grammar (`Generator`): branches and loops on thread and lane
indices and data, `cutlass.const_expr` ifs, `range` / `cutlass.range` loops (loops on the GPU) and
`cutlass.range_constexpr` loops (unrolled while tracing) with static and run-time bounds, shuffles of the four
kinds with literal and run-time offsets, masks and clamps, `warp_reduction_sum` with every `threads_in_group`,
votes (any, all, uni, ballot; with and without masks), `warp_idx()`, products that leave Int32's range followed by
a branch on their sign (`v = v * 300000007`, `if v < 0:`), and stores of each thread's value to an output tensor; blocks of
32, 48 (a warp the block fills by half) and 64 threads, one block. Each case is a module of its own (the
simulator's messages name its file and line) holding `kernel` and the host function `launch(mX, mOut, n)`.

Each case is judged three ways:
  * CuTeDSL (`cutedsl_verdicts`: one subprocess for a whole batch) traces and compiles `launch` for sm_80 on the
    CPU with fake tensors: it accepts (PTX is emitted; its shfl.sync/vote.sync count is kept) or refuses (the
    `error[CODE]` and line it prints);
  * the oracle (`oracle`) evaluates the program lane by lane by the PTX ISA's rules, independently of the
    simulator: shfl.sync's source lane from b and c (clamp, segment mask), a read of a lane that has exited or
    is outside the mask undefined, a collective that a lane of its mask reaches elsewhere (or not at all while it
    has not exited) a hang, a lane executing a collective whose mask does not name it undefined; Int32
    arithmetic wraps;
  * the simulator (`simulate`) runs `launch` on NumPy arrays under `cutekit.use("sim")`.

`judge` says which case disagrees: CuTeDSL refuses and the simulator does not refuse with the same
`error[CODE]` at the same line; CuTeDSL accepts and the oracle finds the program defined, and the simulator's
output is not the oracle's (or it refuses); CuTeDSL accepts and the oracle finds it undefined (PTX compiles
such programs), and the simulator does not stop with a KernelError at one of the collectives involved. The
generator also predicts which programs CuTeDSL refuses; a wrong prediction is reported as the oracle's error.
"""
from __future__ import annotations

import importlib.util
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FULL = 0xFFFFFFFF
GRID_SENTINEL = -777            # what mOut holds where a thread stored nothing


# --------------------------------------------------------------------------------------------- the program

@dataclass
class Case:
    index: int
    seed: int
    threads: int
    n: int
    body: list
    source: str = ""
    lines: dict = field(default_factory=dict)       # id(statement) -> its line in the module
    refusals: list = field(default_factory=list)    # (line, code) the generator expects CuTeDSL to refuse

    @property
    def name(self) -> str:
        return f"diffcase_{self.seed}_{self.index}"

    def inputs(self) -> list:
        return [((t * 37 + self.index) % 19) - 9 for t in range(self.threads)]


# Statements are lists [kind, ...]; expressions are tuples:
#   ("lit", k) | ("name", name) | ("bin", op, a, b) | ("cmp", op, a, b)
# Names: lane, tidx, v, n, a loop counter, K (a module constant). Run-time names: all but K and the counters
# of range_constexpr loops.

K_VALUE = 3
STATIC_OPS = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "^": lambda a, b: a ^ b,
              "*": lambda a, b: a * b, "%": lambda a, b: a % b, "//": lambda a, b: a // b,
              "&": lambda a, b: a & b}
COMPARE = {"<": lambda a, b: a < b, "<=": lambda a, b: a <= b, "==": lambda a, b: a == b,
           "!=": lambda a, b: a != b, ">": lambda a, b: a > b, ">=": lambda a, b: a >= b}
SHUFFLES = {"idx": "shuffle_sync", "up": "shuffle_sync_up", "down": "shuffle_sync_down",
            "bfly": "shuffle_sync_bfly"}


def wrap32(x: int) -> int:
    x &= 0xFFFFFFFF
    return x - (1 << 32) if x >= 1 << 31 else x


def render(e) -> str:
    kind = e[0]
    if kind == "lit":
        return str(e[1]) if e[1] >= 0 else f"({e[1]})"
    if kind == "name":
        return e[1]
    a, b = render(e[2]), render(e[3])
    return f"{a} {e[1]} {b}" if kind == "cmp" else f"({a} {e[1]} {b})"


def names_in(e) -> set:
    if e[0] == "name":
        return {e[1]}
    if e[0] in ("bin", "cmp"):
        return names_in(e[2]) | names_in(e[3])
    return set()


class Generator:
    """Draws one program: a body of statements of depth <= 3, at most one construct CuTeDSL refuses."""

    def __init__(self, rng: random.Random):
        self.rng = rng
        self.budget = rng.randint(3, 11)
        self.refusable = rng.random() < 0.3         # whether this program may hold a refused const_expr
        self.refused = False

    # expressions
    def index_expr(self, loops: dict):
        r = self.rng
        base = r.choice(["lane", "lane", "tidx"] + [name for name, kind in loops.items()])
        choice = r.random()
        if choice < 0.4:
            return ("name", base)
        if choice < 0.7:
            return ("bin", "%", ("name", base), ("lit", r.choice([2, 3, 4, 8])))
        if choice < 0.85:
            return ("bin", "^", ("name", base), ("lit", r.choice([1, 3, 16])))
        return ("bin", "//", ("name", base), ("lit", r.choice([2, 8, 32])))

    def condition(self, loops: dict, uniform_only: bool = False):
        r = self.rng
        pick = r.random()
        if uniform_only or pick < 0.12:
            return ("cmp", r.choice([">", "<=", "=="]), ("name", "n"), ("lit", r.randint(0, 3)))
        if pick < 0.55:
            return ("cmp", r.choice(["<", ">=", "!=", "<"]), ("name", "lane"), ("lit", r.choice([1, 8, 16, 24, 31])))
        if pick < 0.7:
            modulus = r.choice([2, 4])
            return ("cmp", "==", ("bin", "%", ("name", r.choice(["lane", "tidx"])), ("lit", modulus)),
                    ("lit", r.randrange(modulus)))
        if pick < 0.8:
            return ("cmp", "<", ("name", "tidx"), ("lit", r.choice([16, 32, 40, 48])))
        if pick < 0.9 and loops:
            return ("cmp", "==", ("name", r.choice(list(loops))), ("lit", r.randint(0, 2)))
        return ("cmp", r.choice([">", "<"]), ("name", "v"), ("lit", r.randint(-4, 4)))

    def value_expr(self, loops: dict):
        r = self.rng
        pick = r.random()
        if pick < 0.35:
            return ("lit", r.randint(-5, 9))
        if pick < 0.6:
            return ("name", r.choice(["lane", "tidx", "n"]))
        if pick < 0.75 and loops:
            return ("name", r.choice(list(loops)))
        if pick < 0.9:
            return ("bin", "*", ("name", r.choice(["lane", "v"])), ("lit", r.choice([2, 3])))
        return self.index_expr(loops)

    def mask(self, lanes: set | None):
        r = self.rng
        pick = r.random()
        if lanes is not None and pick < 0.25:
            return sum(1 << lane for lane in lanes) or FULL
        if pick < 0.35:
            return r.choice([0x0000FFFF, 0xFFFF0000, 0x55555555, 0x7FFFFFFF])
        return None

    # statements
    def block(self, depth: int, loops: dict, lanes: set | None, tail: bool = False) -> list:
        count = self.rng.randint(1, 3 if depth else 5)
        out = []
        for _ in range(count):
            if self.budget <= 0:
                break
            out.append(self.statement(depth, loops, lanes))
        if tail or self.rng.random() < 0.3:
            out.append(["store"])
        return out or [["assign", "+", ("lit", 1)]]

    def statement(self, depth: int, loops: dict, lanes: set | None) -> list:
        r = self.rng
        self.budget -= 1
        kinds = ["assign", "assign", "store", "shfl", "shfl", "shfl", "reduce", "reduce", "ballot", "warp_idx"]
        if depth < 3:
            kinds += ["if", "if", "if", "for", "for", "vote", "cif"]
        kind = r.choice(kinds)
        if kind == "assign":
            return ["assign", r.choice(["+", "-", "^"]), self.value_expr(loops)]
        if kind == "store":
            return ["store"]
        if kind == "shfl":
            shuffle = r.choice(list(SHUFFLES))
            if r.random() < 0.25:
                offset = r.choice([("bin", "^", ("name", "lane"), ("lit", 1)), ("bin", "+", ("name", "lane"),
                                   ("lit", 1)), ("name", "n")])
            else:
                offset = ("lit", r.choice([0, 1, 1, 2, 3, 4, 8, 16, 31, 33]))
            clamp = r.choice([0, 31, 0x181F, 0x1800, 0x1C03, 0x1007]) if r.random() < 0.25 else None
            return ["shfl", shuffle, offset, self.mask(lanes), clamp]
        if kind == "reduce":
            return ["reduce", r.choice([1, 2, 4, 8, 16, 32, 32])]
        if kind == "ballot":
            return ["ballot", self.condition(loops), self.mask(lanes)]
        if kind == "warp_idx":
            return ["warp_idx"]
        if kind == "if":
            condition = self.condition(loops)
            inner = _narrow(lanes, condition)
            then = self.block(depth + 1, loops, inner)
            other = self.block(depth + 1, loops, _narrow(lanes, condition, negate=True)) \
                if r.random() < 0.3 else None
            return ["if", condition, then, other]
        if kind == "vote":
            mask = self.mask(lanes)
            return ["vote", r.choice(["any", "all", "uni"]), self.condition(loops),
                    self.block(depth + 1, loops, lanes), mask]
        if kind == "cif":
            refuse = self.refusable and not self.refused and r.random() < 0.5
            if refuse:
                self.refused = True
                condition = self.condition(loops)
                if not (names_in(condition) - {"K"} - {n for n, k in loops.items() if k == "constexpr"}):
                    condition = ("cmp", "<", ("name", "lane"), ("lit", 4))
            else:
                static = [n for n, k in loops.items() if k == "constexpr"]
                if static and r.random() < 0.5:
                    condition = ("cmp", "==", ("name", r.choice(static)), ("lit", r.randint(0, 2)))
                else:
                    condition = ("cmp", r.choice([">", "<", "=="]), ("name", "K"), ("lit", r.randint(1, 4)))
            then = self.block(depth + 1, loops, lanes)
            other = self.block(depth + 1, loops, lanes) if r.random() < 0.4 else None
            return ["cif", condition, then, other]
        # for
        loop = r.choice(["range", "crange", "constexpr", "constexpr"])
        free = [name for name in ("i", "j", "k") if name not in loops]
        var = free[0] if r.random() < 0.7 else r.choice(free)
        if loop == "constexpr":
            if self.refusable and not self.refused and r.random() < 0.4:
                self.refused = True
                bound = r.choice([("name", "n"), ("bin", "+", ("bin", "%", ("name", "lane"), ("lit", 2)),
                                                     ("lit", 1))])
            else:
                bound = r.choice([("lit", r.randint(0, 3)), ("name", "K")])
        else:
            pick = r.random()
            bound = (("lit", r.randint(0, 3)) if pick < 0.4 else ("name", "n") if pick < 0.6 else
                     ("bin", "+", ("bin", "%", ("name", "lane"), ("lit", 3)), ("lit", 0)) if pick < 0.85 else
                     ("bin", "+", ("bin", "//", ("name", "tidx"), ("lit", 32)), ("lit", 1)))
        inner = dict(loops)
        inner[var] = "constexpr" if loop == "constexpr" else "dynamic"
        return ["for", loop, var, bound, self.block(depth + 1, inner, lanes)]


def _narrow(lanes: set | None, condition, negate: bool = False) -> set | None:
    """The lanes (of warp 0) for which `condition` holds among `lanes`, when it depends on the lane alone."""
    if lanes is None:
        lanes = set(range(32))
    if names_in(condition) - {"lane", "tidx"}:
        return None
    held = set()
    for lane in lanes:
        value = evaluate(condition, {"lane": lane, "tidx": lane})
        if bool(value) != negate:
            held.add(lane)
    return held


def make_case(seed: int, index: int) -> Case:
    rng = random.Random(f"{seed}:{index}")
    generator = Generator(rng)
    body = generator.block(0, {}, None, tail=True)
    _overflow(random.Random(f"{seed}:{index}:int32"), body)
    case = Case(index, seed, rng.choice([32, 32, 32, 64, 64, 48]), rng.randint(0, 3), body)
    _write_source(case)
    return case


_MULTIPLIERS = [300000007, 268435459, 1000000007, 65537]     # v is -9..9 and what the program adds


def _overflow(rng: random.Random, body: list):
    """Half the programs get, at a top-level place, a product that leaves Int32's range (`v = v * 300000007`) and
    a branch on its sign (`if v < 0:`), which sees the wrapped value on a GPU. Drawn from a random stream of
    their own, so the rest of each program is what the grammar drew before."""
    if rng.random() < 0.5:
        return
    place = rng.randrange(len(body))
    test = ("cmp", rng.choice(["<", ">=", ">"]), ("name", "v"), ("lit", rng.choice([0, 0, -3, 5])))
    body[place:place] = [["assign", "*", ("lit", rng.choice(_MULTIPLIERS))],
                         ["if", test, [["assign", "+", ("lit", 1)]], [["assign", "-", ("lit", 2)]]
                          if rng.random() < 0.5 else None]]


def make_cases(count: int, seed: int) -> list:
    return [make_case(seed, index) for index in range(count)]


# --------------------------------------------------------------------------------------------- source text

def _write_source(case: Case):
    lines = [f'"""Generated by tests/sim/differential.py (seed {case.seed}, case {case.index})."""',
             "import cutlass", "import cutlass.cute as cute", "", f"K = {K_VALUE}", "", "",
             "@cute.kernel", "def kernel(mX: cute.Tensor, mOut: cute.Tensor, n: cutlass.Int32):",
             "    tidx, _, _ = cute.arch.thread_idx()", "    lane = cute.arch.lane_idx()", "    v = mX[tidx]"]
    loops: dict = {}

    def emit(statements, indent, loops):
        pad = "    " * indent
        for s in statements:
            kind = s[0]
            line = len(lines) + 1
            case.lines[id(s)] = line
            if kind == "assign":
                lines.append(f"{pad}v = v {s[1]} {render(s[2])}")
            elif kind == "store":
                lines.append(f"{pad}mOut[tidx] = v")
            elif kind == "shfl":
                arguments = [f"v, {render(s[2])}"]
                if s[3] is not None:
                    arguments.append(f"mask={s[3]:#010x}")
                if s[4] is not None:
                    arguments.append(f"mask_and_clamp={s[4]:#x}")
                lines.append(f"{pad}v = v + cute.arch.{SHUFFLES[s[1]]}({', '.join(arguments)})")
            elif kind == "reduce":
                lines.append(f"{pad}v = cute.arch.warp_reduction_sum(v, threads_in_group={s[1]})")
            elif kind == "ballot":
                mask = f", mask={s[2]:#010x}" if s[2] is not None else ""
                lines.append(f"{pad}v = v ^ cute.arch.vote_ballot_sync({render(s[1])}{mask})")
            elif kind == "warp_idx":
                lines.append(f"{pad}v = v + cute.arch.warp_idx()")
            elif kind in ("if", "cif"):
                condition = render(s[1]) if kind == "if" else f"cutlass.const_expr({render(s[1])})"
                lines.append(f"{pad}if {condition}:")
                emit(s[2], indent + 1, loops)
                if s[3] is not None:
                    lines.append(f"{pad}else:")
                    emit(s[3], indent + 1, loops)
            elif kind == "vote":
                mask = f", mask={s[4]:#010x}" if s[4] is not None else ""
                lines.append(f"{pad}if cute.arch.vote_{s[1]}_sync({render(s[2])}{mask}):")
                emit(s[3], indent + 1, loops)
            elif kind == "for":
                call = {"range": "range", "crange": "cutlass.range", "constexpr": "cutlass.range_constexpr"}[s[1]]
                lines.append(f"{pad}for {s[2]} in {call}({render(s[3])}):")
                inner = dict(loops)
                inner[s[2]] = "constexpr" if s[1] == "constexpr" else "dynamic"
                emit(s[4], indent + 1, inner)

    emit(case.body, 1, loops)
    case.refusals = sorted(set(_traced_refusals(case, case.body, {})))
    lines += ["", "", "@cute.jit", "def launch(mX: cute.Tensor, mOut: cute.Tensor, n: cutlass.Int32):",
              f"    kernel(mX, mOut, n).launch(grid=[1, 1, 1], block=[{case.threads}, 1, 1])", ""]
    case.source = "\n".join(lines)


def _traced_refusals(case: Case, statements: list, static: dict) -> list:
    """(line, code) of the run-time const_expr / range_constexpr CuTeDSL's trace reaches: it traces both sides
    of a run-time `if` and a dynamic loop's body once, only the side of a const_expr `if` its value picks, and a
    range_constexpr body once per value (`static`: the values of the range_constexpr counters around)."""
    found = []
    for s in statements:
        kind, line = s[0], case.lines[id(s)]
        if kind == "cif":
            if _runtime(s[1], {name: "constexpr" for name in static}):
                found.append((line, "PHASE_REQUIRES_CONSTANT"))
            elif evaluate(s[1], static):
                found += _traced_refusals(case, s[2], static)
            elif s[3] is not None:
                found += _traced_refusals(case, s[3], static)
        elif kind == "if":
            found += _traced_refusals(case, s[2], static)
            if s[3] is not None:
                found += _traced_refusals(case, s[3], static)
        elif kind == "vote":
            found += _traced_refusals(case, s[3], static)
        elif kind == "for":
            inner = {name: value for name, value in static.items() if name != s[2]}
            if s[1] != "constexpr":
                found += _traced_refusals(case, s[4], inner)
            elif _runtime(s[3], {name: "constexpr" for name in static}):
                found.append((line, "ARG_NON_CONSTANT"))
            else:
                for value in range(evaluate(s[3], static)):
                    found += _traced_refusals(case, s[4], {**inner, s[2]: value})
    return found


def _runtime(expression, loops: dict) -> bool:
    static = {"K"} | {name for name, kind in loops.items() if kind == "constexpr"}
    return bool(names_in(expression) - static)


# --------------------------------------------------------------------------------------------- the oracle

_WRAP = [wrap32]       # wrap32, or _unbounded for the simulator's arithmetic (oracle(wrapped=False))


def evaluate(e, env: dict) -> int:
    kind = e[0]
    if kind == "lit":
        return e[1]
    if kind == "name":
        return K_VALUE if e[1] == "K" else env[e[1]]
    a, b = evaluate(e[2], env), evaluate(e[3], env)
    if kind == "cmp":
        return COMPARE[e[1]](a, b)
    return _WRAP[0](STATIC_OPS[e[1]](a, b))


@dataclass
class Request:
    kind: str
    line: int
    mask: int
    payload: object


def _lane_program(case: Case, env: dict, out: dict):
    """One lane's run of the program: a generator that yields a Request at each collective and receives its
    reply. Collectives are matched by their line, as CUDA asks ("the same intrinsic")."""

    def block(statements):
        for s in statements:
            yield from statement(s)

    def statement(s):
        kind, line = s[0], case.lines[id(s)]
        if kind == "assign":
            env["v"] = _WRAP[0](STATIC_OPS[s[1]](env["v"], evaluate(s[2], env)))
        elif kind == "store":
            out[env["tidx"]] = env["v"]
        elif kind in ("if", "cif"):
            if evaluate(s[1], env):
                yield from block(s[2])
            elif s[3] is not None:
                yield from block(s[3])
        elif kind == "for":
            saved = env.get(s[2])
            for i in range(evaluate(s[3], env)):
                env[s[2]] = i
                yield from block(s[4])
            env[s[2]] = saved
        elif kind == "shfl":
            offset = evaluate(s[2], env)
            clamp = s[4] if s[4] is not None else (0 if s[1] == "up" else 31)   # CuTeDSL 4.8.1's defaults
            reply = yield Request("shfl:" + s[1], line, FULL if s[3] is None else s[3], (env["v"], offset, clamp))
            env["v"] = _WRAP[0](env["v"] + reply)
        elif kind == "reduce":
            if s[1] == 1:
                return                      # no shuffle at all: CuTeDSL emits none for a group of 1
            env["v"] = yield Request(f"reduce:{s[1]}", line, FULL, env["v"])
        elif kind == "ballot":
            reply = yield Request("ballot", line, FULL if s[2] is None else s[2], bool(evaluate(s[1], env)))
            env["v"] = env["v"] ^ reply
        elif kind == "warp_idx":
            reply = yield Request("warp_idx", line, FULL, env["tidx"] // 32)
            env["v"] = _WRAP[0](env["v"] + reply)
        elif kind == "vote":
            reply = yield Request("vote:" + s[1], line, FULL if s[4] is None else s[4], bool(evaluate(s[2], env)))
            if reply:
                yield from block(s[3])

    yield from block(case.body)


def source_lane(kind: str, lane: int, b: int, c: int) -> int:
    """shfl.sync's source lane (PTX ISA, "shfl.sync"): j and pval from b, c; the lane's own where pval is false."""
    b, clamp, segment = b & 31, c & 31, (c >> 8) & 31
    max_lane = (lane & segment) | (clamp & ~segment)
    min_lane = lane & segment
    if kind == "up":
        j = lane - b
        valid = j >= max_lane
    elif kind == "down":
        j = lane + b
        valid = j <= max_lane
    elif kind == "bfly":
        j = lane ^ b
        valid = j <= max_lane
    else:
        j = min_lane | (b & ~segment)
        valid = j <= max_lane
    return j if valid else lane


def _resolve(request: Request, payloads: dict, problems: list) -> dict:
    """Every arrived lane's reply to one collective. A lane that reads a lane that is not there gets an undefined
    value (here its own: a GPU goes on with whatever the register held), and the read is noted in `problems`."""
    kind, line = request.kind, request.line
    if kind.startswith("shfl:"):
        replies = {}
        for lane, (value, offset, clamp) in payloads.items():
            source = source_lane(kind[5:], lane, offset, clamp)
            if source not in payloads:
                problems.append(f"line {line}: lane {lane} reads lane {source}, which is not there")
                source = lane
            replies[lane] = payloads[source][0]
        return replies
    if kind.startswith("reduce:"):
        values = dict(payloads)
        offset = int(kind[7:]) // 2
        while offset:
            for lane in values:
                if lane ^ offset not in values:
                    problems.append(f"line {line}: lane {lane} reads lane {lane ^ offset}, which is not there")
            values = {lane: _WRAP[0](v + values.get(lane ^ offset, v)) for lane, v in values.items()}
            offset //= 2
        return values
    if kind == "warp_idx":
        if 0 not in payloads:
            problems.append(f"line {line}: warp_idx() reads lane 0, which is not there")
        return {lane: payloads.get(0, payload) for lane, payload in payloads.items()}
    if kind == "ballot":
        return dict.fromkeys(payloads, wrap32(sum(1 << lane for lane, p in payloads.items() if p)))
    votes = list(payloads.values())
    result = {"vote:any": any(votes), "vote:all": all(votes), "vote:uni": all(votes) or not any(votes)}[kind]
    return dict.fromkeys(payloads, result)


def oracle(case: Case, wrapped: bool = True) -> dict:
    """{"undefined": why, "lines": [...]} or {"out": [...]}: the output tensor the PTX ISA says the kernel leaves.

    Undefined: `lines` holds every collective where some warp meets what the PTX ISA leaves undefined or hangs
    (the oracle goes on with the other lanes and warps after the first: a program may have several, and the
    simulator, running lanes in another order, may meet any of them first). `wrapped=False` computes with
    Python's unbounded ints (the simulator's arithmetic) instead of Int32 registers."""
    _WRAP[0] = wrap32 if wrapped else _unbounded
    x = case.inputs()
    out: dict = {}
    reasons, lines = [], set()
    try:
        for warp in range((case.threads + 31) // 32):
            _run_warp(case, warp, x, out, reasons, lines)
    finally:
        _WRAP[0] = wrap32
    if reasons:
        return {"undefined": "; ".join(reasons[:3]), "lines": sorted(lines)}
    return {"out": [wrap32(out.get(t, GRID_SENTINEL)) for t in range(case.threads)]}


def _unbounded(x: int) -> int:
    return x


def _run_warp(case: Case, warp: int, x: list, out: dict, reasons: list, lines: set):
    """Run one warp's lanes, collective by collective. A lane executing a collective whose mask does not name it
    is held there for good; a lane that reads a lane that is not there goes on with an undefined value. Lanes
    left waiting at the end hang: every line they wait at is one a GPU hangs at."""
    lanes = [lane for lane in range(32) if warp * 32 + lane < case.threads]
    finished = set(range(32)) - set(lanes)          # lanes the block does not have count as exited
    programs, pending, stuck = {}, {}, set()

    def advance(lane, reply):
        try:
            pending[lane] = programs[lane].send(reply)
        except StopIteration:
            pending.pop(lane, None)
            finished.add(lane)

    for lane in lanes:
        tidx = warp * 32 + lane
        programs[lane] = _lane_program(case, {"lane": lane, "tidx": tidx, "v": x[tidx], "n": case.n}, out)
        advance(lane, None)
    while True:
        groups: dict = {}
        for lane, request in pending.items():
            if lane not in stuck:
                groups.setdefault((request.line, request.mask), []).append(lane)
        progress = False
        for (line, mask), members in groups.items():
            outside = [lane for lane in members if not mask >> lane & 1]
            if outside:
                reasons.append(f"line {line}: lane {outside[0]} executes it with mask {mask:#x}, which does not "
                               f"name it")
                lines.add(line)
                stuck.update(outside)
                progress = True
                break
            needed = [lane for lane in range(32) if mask >> lane & 1 and lane not in finished]
            if all(lane in members for lane in needed):
                problems: list = []
                replies = _resolve(pending[members[0]], {lane: pending[lane].payload for lane in members}, problems)
                if problems:
                    reasons.append(problems[0])
                    lines.add(line)
                for lane in members:
                    advance(lane, replies[lane])
                progress = True
                break
        if not progress:
            break
    if pending:
        waiting: dict = {}
        for lane, request in pending.items():
            waiting.setdefault(request.line, []).append(lane)
        if len(stuck) < len(pending):
            reasons.append(f"warp {warp}: a collective waits for lanes that are elsewhere: "
                           + "; ".join(f"line {line}: lanes {ids}" for line, ids in waiting.items()))
        lines.update(waiting)


# --------------------------------------------------------------------------------------------- CuTeDSL

def write_modules(cases: list, folder: Path) -> list:
    paths = []
    for case in cases:
        path = folder / f"{case.name}.py"
        path.write_text(case.source)
        paths.append(str(path))
    return paths


def cutedsl_verdicts(cases: list, folder: Path, timeout: float = 3600) -> list:
    """Trace and compile each case's `launch` with real CuTeDSL for sm_80 (one subprocess for all of them):
    [{"ok": True, "collectives": shfl/vote count in the PTX} | {"ok": False, "code": ..., "line": ..., "text":
    ...}]."""
    paths = write_modules(cases, folder)
    job, reply = folder / "job.json", folder / "reply.json"
    job.write_text(json.dumps([[path, case.threads] for path, case in zip(paths, cases)]))
    dump = folder / "dump"
    dump.mkdir(exist_ok=True)
    env = {**os.environ, "CUTE_DSL_ARCH": "sm_80", "CUTE_DSL_KEEP": "ptx", "CUTE_DSL_DUMP_DIR": str(dump),
           "PYTHONPATH": str(ROOT)}
    finished = subprocess.run([sys.executable, "-m", "tests.sim.differential", "--worker", str(job), str(reply)],
                              capture_output=True, text=True, timeout=timeout, env=env, cwd=str(ROOT))
    if not reply.exists():
        raise RuntimeError(f"the CuTeDSL process ended without an answer (exit {finished.returncode}):\n"
                           + "\n".join((finished.stderr or finished.stdout).strip().splitlines()[-12:]))
    return json.loads(reply.read_text())


ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _worker(job_path: str, reply_path: str):
    import cutlass
    import cutlass.cute as cute
    from cutlass.cute.runtime import make_fake_compact_tensor
    verdicts = []
    for path, threads in json.loads(Path(job_path).read_text()):
        spec = importlib.util.spec_from_file_location(Path(path).stem, path)
        module = importlib.util.module_from_spec(spec)
        try:
            spec.loader.exec_module(module)
            x = make_fake_compact_tensor(cutlass.Int32, (threads,))
            out = make_fake_compact_tensor(cutlass.Int32, (threads,))
            compiled = cute.compile(module.launch, x, out, cutlass.Int32(1))
            ptx = compiled.__ptx__ or ""
            verdicts.append({"ok": True, "collectives": len(re.findall(r"\b(?:shfl|vote)\.sync\.", ptx)),
                             "ptx": bool(ptx)})
        except Exception as error:      # a refusal: its code and line, as CuTeDSL prints them
            text = ANSI.sub("", str(error))
            code = re.search(r"error\[([A-Z_]+)\]", text)
            line = re.search(re.escape(Path(path).name) + r":(\d+)", text)
            first = next((t.strip() for t in text.splitlines() if t.strip()), "")
            verdicts.append({"ok": False, "code": code.group(1) if code else type(error).__name__,
                             "line": int(line.group(1)) if line else None, "text": first[:300]})
    Path(reply_path).write_text(json.dumps(verdicts))


# --------------------------------------------------------------------------------------------- the simulator

def simulate(cases: list, folder: Path) -> list:
    """Run each case on the simulator (imported under cutekit.using("sim")): [{"out": [...]} | {"error":
    class name, "line": ..., "text": ...}]."""
    import numpy

    import cutekit
    paths = write_modules(cases, folder)
    results = []
    with cutekit.using("sim"):
        from cutlass.cute.runtime import from_dlpack
        from cutekit.sim import KernelError
        for path, case in zip(paths, cases):
            spec = importlib.util.spec_from_file_location(case.name, path)
            module = importlib.util.module_from_spec(spec)
            x = numpy.array(case.inputs(), numpy.int32)
            out = numpy.full(case.threads, GRID_SENTINEL, numpy.int32)
            try:
                spec.loader.exec_module(module)
                module.launch(from_dlpack(x), from_dlpack(out), case.n)
                results.append({"out": out.tolist()})
            except KernelError as error:
                where = re.search(r"line (\d+)", getattr(error, "where", "") or "")
                results.append({"error": type(error).__name__, "line": int(where.group(1)) if where else None,
                                "text": str(error)})
            except Exception as error:      # not a refusal the learner can read: always a disagreement
                results.append({"error": "crash:" + type(error).__name__, "line": None, "text": str(error)[:2000]})
    return results


# --------------------------------------------------------------------------------------------- judging

COLLECTIVE_NAMED = re.compile(r"cute\.arch\.(?:shuffle_sync\w*|warp_reduction_sum|vote_\w+_sync|warp_idx)\(\)")


def judge(case: Case, cutedsl: dict, sim: dict, expected: dict) -> tuple:
    """(category, disagreement text or ""). Categories: refused (both refuse alike), undefined (the simulator
    stops, naming the collective, where the PTX ISA leaves the program undefined), defined (the simulator's output is the oracle's),
    oracle (the generator's own prediction of CuTeDSL's verdict is wrong)."""
    predicted = sorted(case.refusals)
    if cutedsl["ok"] == bool(predicted):
        return "oracle", (f"the generator expected CuTeDSL to {'refuse' if predicted else 'accept'} it "
                          f"({predicted}); CuTeDSL: {cutedsl}")
    if not cutedsl["ok"]:
        code, line = cutedsl["code"], cutedsl["line"]
        if "error" not in sim:
            return "refused", f"CuTeDSL refuses it (error[{code}] at line {line}); the simulator runs it"
        if f"error[{code}]" not in sim["text"] or sim["line"] != line:
            return "refused", (f"CuTeDSL refuses it with error[{code}] at line {line}; the simulator with "
                               f"{sim['error']} at line {sim['line']}: {sim['text'][:400]}")
        return "refused", ""
    if "undefined" in expected:
        if "error" not in sim:
            return "undefined", f"the PTX ISA leaves it undefined ({expected['undefined']}); the simulator runs it"
        if sim["error"] not in ("DeadlockError", "KernelError") or sim["line"] not in expected["lines"] or \
                not COLLECTIVE_NAMED.search(sim["text"]):
            return "undefined", (f"the PTX ISA leaves it undefined ({expected['undefined']}); the simulator "
                                 f"stops with {sim['error']} at line {sim['line']}: {sim['text'][:400]}")
        return "undefined", ""
    if "error" in sim:
        return "defined", (f"defined by the PTX ISA; the simulator stops with {sim['error']} at line {sim['line']}: "
                         f"{sim['text'][:400]}")
    if sim["out"] != expected["out"]:
        wrong = [t for t, (a, b) in enumerate(zip(sim["out"], expected["out"])) if a != b]
        return "defined", (f"outputs differ at threads {wrong[:8]}: simulator {[sim['out'][t] for t in wrong[:8]]}, "
                         f"PTX ISA {[expected['out'][t] for t in wrong[:8]]}")
    return "defined", ""


def run(cases: list, folder: Path | None = None) -> tuple:
    """Judge every case: (disagreements [(case, category, text)], counts). `folder` keeps the modules."""
    with tempfile.TemporaryDirectory(prefix="cutekit-differential-") as scratch:
        base = Path(folder or scratch)
        for side in ("cutedsl", "sim"):
            (base / side).mkdir(parents=True, exist_ok=True)
        start = time.perf_counter()
        cutedsl = cutedsl_verdicts(cases, base / "cutedsl")
        middle = time.perf_counter()
        sims = simulate(cases, base / "sim")
        end = time.perf_counter()
    counts = {"cases": len(cases), "cutedsl_accepts": 0, "cutedsl_refuses": 0, "undefined": 0, "defined": 0,
              "sim_refuses": 0, "sim_runs": 0, "past_int32": 0, "cutedsl_seconds": middle - start, "sim_seconds": end - middle}
    bad = []
    for case, verdict, sim in zip(cases, cutedsl, sims):
        expected = oracle(case) if verdict["ok"] else {}
        counts["cutedsl_accepts" if verdict["ok"] else "cutedsl_refuses"] += 1
        if verdict["ok"]:
            counts["undefined" if "undefined" in expected else "defined"] += 1
            if "out" in expected and oracle(case, wrapped=False) != expected:
                counts["past_int32"] += 1       # a comparison sees a value past 2**31, wrapped as on a GPU
        counts["sim_refuses" if "error" in sim else "sim_runs"] += 1
        category, text = judge(case, verdict, sim, expected)
        if text:
            bad.append((case, category, text))
    return bad, counts


def report(bad: list, counts: dict) -> str:
    lines = [f"{counts['cases']} cases: CuTeDSL accepts {counts['cutedsl_accepts']} (the PTX ISA defines "
             f"{counts['defined']}, leaves {counts['undefined']} undefined), refuses {counts['cutedsl_refuses']}; "
             f"the simulator runs {counts['sim_runs']}, refuses {counts['sim_refuses']}; "
             f"{counts['past_int32']} of the defined ones compare a value past 2**31 (wrapped to Int32 first); "
             f"{len(bad)} disagreements (CuTeDSL's processes {counts['cutedsl_seconds']:.1f} s, the simulator "
             f"{counts['sim_seconds']:.1f} s)"]
    for case, category, text in bad:
        lines.append(f"\n--- seed {case.seed} case {case.index} ({category}; {case.threads} threads, n={case.n}): "
                     f"{text}\n{case.source}")
    return "\n".join(lines)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--worker"]:
        _worker(*sys.argv[2:4])
