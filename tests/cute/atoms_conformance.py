"""The atoms conformance suite: every TiledCopy and TiledMMA that CuTeDSL 4.8.1 builds from the Ampere atoms,
built by cutekit.cute and by CuTeDSL traced on the CPU, compared fact by fact.

Atoms: the universal copy (32, 64 and 128 bits, now and then another width), cp.async (CopyG2SOp), ldmatrix
x1/x2/x4 with and without transpose, the warp MMAs fp16/bf16 16x8x8 and 16x8x16 and tf32 16x8x4 and 16x8x8, and
the SIMT FMA (MmaUniversalOp). `make_cases(n, seed)` draws n configurations from a seeded generator:

    mma     make_tiled_mma(op, atom layout up to 4x4x1 (row- or column-major), permutation_mnk), then every
            thread's partition_A/B/C of identity (and sometimes memory-offset) tensors and make_fragment_A/B/C
    copy_A  make_tiled_copy_A/B/C(copy atom, such a tiled MMA), every thread's partition_S/D, and the MMA's
    ..      fragment retiled for the copy (what an sm80 GEMM's S2R copy does)
    copy_tv make_tiled_copy_tv(atom, thread layout, value layout) or make_tiled_copy(atom, layout_tv, tiler)

A configuration is plain data (JSON), so the same one is built by both libraries: `collect(cute, config)` runs
the same steps with either `cute` module and writes down, step by step, what it printed (a layout, a tiled
copy, every thread's partition as its layout and the start of each thread's piece) or that it refused. A step's
refusal is an answer too: the two agree when both refuse it. cutekit refuses with a CuteError naming the rule;
any other exception inside cutekit is a crash and never agrees.

`run(cases)` answers every case with both (CuTeDSL in one forked worker process, its answers cached under
build/conformance/atoms/ by the cases' digest) and returns the disagreements and the counts.

Where CuTeDSL builds a copy it should not (an ldmatrix.x4 over an operand whose threads hold 4 values), cutekit
builds the same, with an AtomDoesNotFitWarning; where CuTeDSL prints a layout with an undefined entry (`x`, from
a permutation the atoms do not divide), cutekit refuses, and the two count as both refusing.

`.venv/bin/python scripts/conformance.py --atoms --cases 4000 --seed 0` (2026-11-24, the 2-core course machine,
CuTeDSL 4.8.1 on the CPU): agree 4000/4000, refused 144/144, warned 709; 1469 s with CuTeDSL traced, 217 s with
its answers cached.
"""
from __future__ import annotations

import inspect
import json
import os
import random
import re
import subprocess
import sys
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CACHE = Path(os.environ.get("CUTEKIT_CONFORMANCE_CACHE", ROOT / "build" / "conformance")) / "atoms"
CHUNK = 40          # configurations per traced @cute.jit call in the worker

WARP_MMAS = [("f16bf16", "Float16", "Float16", (16, 8, 8)), ("f16bf16", "Float16", "Float32", (16, 8, 8)),
             ("f16bf16", "BFloat16", "Float32", (16, 8, 8)), ("f16bf16", "Float16", "Float16", (16, 8, 16)),
             ("f16bf16", "Float16", "Float32", (16, 8, 16)), ("f16bf16", "BFloat16", "Float32", (16, 8, 16)),
             ("tf32", (16, 8, 4)), ("tf32", (16, 8, 8))]
FMAS = [("fma", "Float32"), ("fma", "Float16"), ("fma", "Float64")]


# ---- the generator ----------------------------------------------------------------------------------------

def _mma_shape(op):
    return tuple(op[3]) if op[0] == "f16bf16" else tuple(op[1]) if op[0] == "tf32" else (1, 1, 1)


def _operand_dtype(op, operand):
    if op[0] == "f16bf16":
        return op[2] if operand == "C" else op[1]
    if op[0] == "tf32":
        return "Float32" if operand == "C" else "TFloat32"
    return op[1]


def _power_of_two_factors(n):
    factors = []
    while n % 2 == 0 and n > 1:
        factors.append(2)
        n //= 2
    return factors + ([n] if n > 1 else [])


def draw_permutation_layout(rng, extent):
    """A layout of `extent` elements for one mode of permutation_mnk: usually a bijection on [0, extent) (a
    shuffled factorization, as NVIDIA's examples write them), sometimes one with holes or repeats."""
    factors = _power_of_two_factors(extent)
    if not factors:
        return extent
    merged = []
    for f in factors:                       # merge some 2s into 4s and 8s
        if merged and merged[-1] * f <= 8 and rng.random() < 0.5:
            merged[-1] *= f
        else:
            merged.append(f)
    if len(merged) < 2 and rng.random() < 0.5:
        return extent
    order = list(range(len(merged)))
    rng.shuffle(order)
    strides, running = [0] * len(merged), 1
    for i in order:
        strides[i] = running
        running *= merged[i] * (2 if rng.random() < 0.08 else 1)      # a hole now and then
    if rng.random() < 0.04:
        strides[rng.randrange(len(strides))] = 0                        # a repeat now and then
    if len(merged) == 1:
        return [[merged[0]], [strides[0]]]
    return [merged, strides]


def draw_mma(rng, ops=None):
    """A tiled MMA: op, atom layout (m, n, 1) with m, n <= 4 (the FMA up to 16 x 16 now and then), its
    stride, and permutation_mnk (None, or per mode None, an int or a layout)."""
    r = rng.random()
    op = rng.choice(ops) if ops else (rng.choice(WARP_MMAS) if r < 0.75 else rng.choice(FMAS))
    if op[0] == "fma" and rng.random() < 0.3:
        atoms = [rng.choice([1, 2, 4, 8, 16]), rng.choice([1, 2, 4, 8, 16]), 1]
    else:
        atoms = [rng.randint(1, 4), rng.randint(1, 4), 1]
    stride = None if rng.random() < 0.65 else [atoms[1], 1, 0]           # row-major atoms
    shape = _mma_shape(op)
    natural = [shape[i] * atoms[i] for i in range(3)]
    permutation = None
    roll = rng.random()
    if roll < 0.3:
        permutation = [n * rng.choice([1, 1, 2, 3]) for n in natural]
    elif roll < 0.6:
        permutation = []
        for n in natural:
            p = rng.random()
            if p < 0.3:
                permutation.append(None)
            elif p < 0.55:
                permutation.append(n * rng.choice([1, 2, 3, 4]) if rng.random() < 0.9
                                   else max(1, n + rng.choice([-4, 4, 8])))
            else:
                permutation.append(draw_permutation_layout(rng, n * rng.choice([1, 1, 2])))
    return {"op": list(op), "atom_layout": [atoms, stride], "permutation": permutation}


def tile_of(mma):
    """The M, N, K extents the tiled MMA covers (get_tile_size), from the plain data."""
    shape = _mma_shape(mma["op"])
    atoms = mma["atom_layout"][0]
    out = []
    for i in range(3):
        p = (mma["permutation"] or [None] * 3)[i]
        if p is None:
            out.append(shape[i] * atoms[i])
        elif isinstance(p, int):
            out.append(p)
        else:
            n = 1
            for f in (p[0] if isinstance(p[0], list) else [p[0]]):
                n *= f
            out.append(n)
    return out


_EXTENTS = {"A": (0, 2), "B": (1, 2), "C": (0, 1)}


def _operand_tensors(rng, mma, operand):
    tile = tile_of(mma)
    rows, cols = (tile[i] for i in _EXTENTS[operand])
    tensors = [["identity", [rows * rng.choice([1, 2]), cols * rng.choice([1, 1, 2])]]]
    r = rng.random()
    if r < 0.25:
        tensors.append(["identity", [rows, cols, rng.choice([2, 3])]])              # k-tiles, as gA(_, _, k)
    elif r < 0.5:
        extent = [rows * rng.choice([1, 2]), cols]
        tensors.append(["counting", extent, [extent[1], 1]])                           # row-major memory
    return tensors


def _case_mma(rng):
    mma = draw_mma(rng)
    return {"kind": "mma", "mma": mma, "tensors": {x: _operand_tensors(rng, mma, x) for x in "ABC"}}


def draw_copy_atom(rng, dtype, ldmatrix_ok=True):
    r = rng.random()
    width = {"Float16": 16, "BFloat16": 16, "Float32": 32, "TFloat32": 32, "Float64": 64, "Int8": 8}[dtype]
    if ldmatrix_ok and r < 0.45:
        return ["ldmatrix", dtype, rng.random() < 0.5, rng.choice([1, 2, 4])]
    bits = rng.choice([32, 64, 128]) if rng.random() < 0.9 else rng.choice([0, 8, 16, 24, 256])
    if rng.random() < 0.7:                  # a width the element type divides, as a kernel would choose
        bits = max(bits, width) if bits else 0
    return ["g2s" if r < 0.65 else "universal", dtype, bits]


def _case_copy_mma(rng):
    mma = draw_mma(rng)
    operand = rng.choice("AABBC")
    dtype = _operand_dtype(mma["op"], operand)
    if rng.random() < 0.1:
        dtype = rng.choice(["Float16", "BFloat16", "Float32"])
    atom = draw_copy_atom(rng, dtype, ldmatrix_ok=operand != "C" or rng.random() < 0.2)
    tile = tile_of(mma)
    rows, cols = (tile[i] for i in _EXTENTS[operand])
    tensors = [["identity", [rows * rng.choice([1, 2]), cols * rng.choice([1, 2])]]]
    if rng.random() < 0.3:
        tensors.append(["counting", [rows, cols], [cols, 1]])
    return {"kind": "copy_mma", "copy_atom": atom, "mma": mma, "operand": operand, "tensors": tensors}


def _case_copy_tv(rng):
    dtype = rng.choice(["Float16", "BFloat16", "Float32", "Float64", "Int8", "TFloat32"])
    atom = draw_copy_atom(rng, dtype, ldmatrix_ok=rng.random() < 0.3)
    width = {"Float16": 16, "BFloat16": 16, "Float32": 32, "TFloat32": 32, "Float64": 64, "Int8": 8}[dtype]
    if atom[0] == "ldmatrix":
        per_thread = 2 * atom[3] * 16 // width if width <= 16 else atom[3]
        threads = [rng.choice([8, 16, 32]), 1]
        threads[1] = 32 // threads[0] * rng.choice([1, 1, 2])
    else:
        per_thread = max(1, atom[2] // width) if atom[2] else 1
        threads = [rng.choice([1, 2, 4, 8, 16, 32]), rng.choice([1, 2, 4, 8, 16])]
        while threads[0] * threads[1] > 256:
            threads[0] //= 2
    thr_stride = None if rng.random() < 0.5 else [threads[1], 1]
    values = [rng.choice([1, 1, 2, 4]), max(1, per_thread) * rng.choice([1, 1, 2])]
    if rng.random() < 0.25:
        values.reverse()
    if rng.random() < 0.1:                  # a value count the atom does not divide
        values[1] = max(1, values[1] // 2 + rng.choice([0, 1]))
    val_stride = None if rng.random() < 0.7 else [values[1], 1]
    tile = [threads[0] * values[0], threads[1] * values[1]]
    tensors = [["identity", [tile[0] * rng.choice([1, 2]), tile[1] * rng.choice([1, 2, 3])]]]
    if rng.random() < 0.4:
        extent = [tile[0] * rng.choice([1, 2]), tile[1]]
        tensors.append(["counting", extent, [extent[1], 1]])
    if rng.random() < 0.2:                  # the same copy given as (layout_tv, tiler) to make_tiled_copy
        return {"kind": "copy_layout_tv", "copy_atom": atom, "thr": [threads, thr_stride],
                "val": [values, val_stride], "tensors": tensors}
    return {"kind": "copy_tv", "copy_atom": atom, "thr": [threads, thr_stride], "val": [values, val_stride],
            "tensors": tensors}


DRAWS = [(_case_mma, 3), (_case_copy_mma, 5), (_case_copy_tv, 2)]


def make_cases(n: int, seed: int) -> list:
    """n configurations (plain JSON data), the same ones for the same seed."""
    rng = random.Random(seed)
    draws = [draw for draw, weight in DRAWS for _ in range(weight)]
    return [rng.choice(draws)(rng) for _ in range(n)]


def features(config: dict) -> set:
    """What a configuration exercises: its kind (and operand), each atom and MMA, the MMA's atom layout and
    the form of its permutation."""
    found = {("kind", config["kind"])}
    if config["kind"] == "copy_mma":
        found.add(("operand", config["operand"]))
    if "mma" in config:
        mma = config["mma"]
        found |= {("op", json.dumps(mma["op"])), ("atom_layout", json.dumps(mma["atom_layout"][0])),
                  ("permutation", mma["permutation"] is None)}
        found |= {("entry", type(entry).__name__) for entry in mma["permutation"] or ()}
    if "copy_atom" in config:
        found.add(("copy_atom", config["copy_atom"][0], json.dumps(config["copy_atom"][2:])))
    return found


def covering_sample(configs: list, first: int) -> list:
    """The first `first` configurations and, greedily, as few others as give every feature the list holds,
    in the list's order."""
    chosen, covered = set(range(min(first, len(configs)))), set()
    for i in chosen:
        covered |= features(configs[i])
    wanted = set().union(*(features(c) for c in configs))
    while covered != wanted:
        best = max(range(len(configs)), key=lambda i: len(features(configs[i]) - covered))
        chosen.add(best)
        covered |= features(configs[best])
    return [configs[i] for i in sorted(chosen)]


# ---- building either library's objects from the plain data --------------------------------------------------

def _tuples(x):
    return tuple(_tuples(p) for p in x) if isinstance(x, list) else x


class Library:
    """What differs between cutlass.cute and cutekit.cute for these steps: where the element types live,
    how a memory tensor and a register fragment are made, how a partition's start is read."""

    def __init__(self, cute, real: bool):
        self.cute, self.real = cute, real
        if real:
            import cutlass
            self.types = cutlass
        else:
            from cutekit.cute import typing
            self.types = typing

    def dtype(self, name):
        return getattr(self.types, name)

    def layout(self, spec):
        shape, stride = _tuples(spec[0]), _tuples(spec[1])
        return self.cute.make_layout(shape) if stride is None else self.cute.make_layout(shape, stride=stride)

    def tensor(self, spec):
        cute = self.cute
        if spec[0] == "identity":
            return cute.make_identity_tensor(_tuples(spec[1]))
        layout = cute.make_layout(_tuples(spec[1]), stride=_tuples(spec[2]))
        if self.real:
            return cute.make_tensor(0, layout)        # a counting tensor: its elements are their offsets
        import numpy
        return cute.make_tensor(numpy.arange(cute.cosize(layout)), layout)

    def fragment(self, shape, dtype):
        if self.real:
            return self.cute.make_rmem_tensor(self.cute.make_layout(shape), dtype)
        import numpy
        from cutekit.cute.tensor import make_tensor
        layout = self.cute.make_layout(shape)
        return make_tensor(numpy.zeros(self.cute.size(layout)), layout)

    def start(self, tensor):
        """Where a partition starts: a coordinate (identity tensor) or an offset (memory), as plain data."""
        iterator = tensor.iterator
        if not self.real and isinstance(iterator, tuple) and iterator and iterator[0] == "memory":
            return iterator[2]
        return _plain(iterator)

    def copy_atom(self, spec):
        cute, kind = self.cute, spec[0]
        if kind == "universal":
            return cute.make_copy_atom(cute.nvgpu.CopyUniversalOp(), self.dtype(spec[1]), num_bits_per_copy=spec[2])
        if kind == "g2s":
            return cute.make_copy_atom(cute.nvgpu.cpasync.CopyG2SOp(), self.dtype(spec[1]), num_bits_per_copy=spec[2])
        return cute.make_copy_atom(cute.nvgpu.warp.LdMatrix8x8x16bOp(transpose=spec[2], num_matrices=spec[3]),
                                   self.dtype(spec[1]))

    def mma_op(self, spec):
        nvgpu = self.cute.nvgpu
        if spec[0] == "f16bf16":
            return nvgpu.warp.MmaF16BF16Op(self.dtype(spec[1]), self.dtype(spec[2]), _tuples(spec[3]))
        if spec[0] == "tf32":
            return nvgpu.warp.MmaTF32Op(_tuples(spec[1]))
        return nvgpu.MmaUniversalOp(self.dtype(spec[1]))

    def tiled_mma(self, spec):
        permutation = spec["permutation"]
        if permutation is not None:
            permutation = tuple(p if p is None or isinstance(p, int) else self.layout(p) for p in permutation)
        return self.cute.make_tiled_mma(self.mma_op(spec["op"]), self.layout(spec["atom_layout"]),
                                        permutation_mnk=permutation)


def _plain(value):
    """Int-tuples as nested lists of ints (JSON)."""
    if isinstance(value, (tuple, list)):
        return [_plain(v) for v in value]
    return int(value)


def _text(value):
    return str(value).replace(" ", "")


# ---- the steps, the same for both libraries ---------------------------------------------------------------

def collect(lib: Library, config: dict, on_error) -> dict:
    """Plain facts about one configuration, step by step: {step: printed text, or on_error(exception)}. A step
    whose input was refused is left out."""
    facts = {}

    def step(name, compute):
        try:
            facts[name] = compute()
            return True
        except Exception as error:           # noqa: BLE001 - a refusal is a fact
            facts[name] = on_error(error)
            return False

    kind = config["kind"]
    holder = {}
    if "mma" in config:
        if not step("mma", lambda: _mma_facts(lib, config["mma"], holder)):
            return facts
        for operand in "ABC":
            step("tv_layout_%s_tiled" % operand, lambda: _text(getattr(holder["mma"], "tv_layout_%s_tiled" % operand)))
    if kind == "mma":
        for operand in "ABC":
            for i, spec in enumerate(config["tensors"][operand]):
                _partitions_of_mma(lib, holder["mma"], operand, spec, "%s%d" % (operand, i), step)
        return facts
    if kind == "copy_mma":      # thread 0's MMA fragment of the operand, which the copy's retile will view
        step("mma_fragment", lambda: _mma_fragment(lib, holder["mma"], config["operand"], config["tensors"][0], holder))
    if not step("copy_atom", lambda: _copy_atom_facts(lib, config["copy_atom"], holder)):
        return facts
    if not step("tiled_copy", lambda: _tiled_copy_facts(lib, config, holder)):
        return facts
    tiled = holder["tiled_copy"]
    for i, spec in enumerate(config["tensors"]):
        for side in "SD":
            step("partition_%s%d" % (side, i), lambda: _copy_partitions(lib, tiled, spec, side, holder))
    if kind == "copy_mma":
        if "fragment" in holder:
            step("retile_mma_fragment", lambda: _text(tiled.retile(holder["fragment"]).layout))
    elif "partition_D0" in holder:
        shape = holder["partition_D0"]
        dtype = lib.dtype(config["copy_atom"][1])
        step("retile", lambda: _text(tiled.retile(lib.fragment(shape, dtype)).layout))
        if isinstance(shape, tuple) and len(shape) > 1:
            flat = (lib.cute.size(lib.cute.make_layout(shape[0])),) + shape[1:]
            step("retile_flat", lambda: _text(tiled.retile(lib.fragment(flat, dtype)).layout))
    return facts


def _mma_facts(lib, spec, holder):
    tiled = lib.tiled_mma(spec)
    holder["mma"] = tiled
    lines = [str(tiled), _text(tiled.thr_layout_vmnk), _text(tiled.permutation_mnk),
             _text(tuple(int(tiled.get_tile_size(i)) for i in range(3))), str(int(tiled.size))]
    return "\n".join(lines)


def _every_thread(partitions, lib):
    """One partition per thread -> its layout (the same for every thread, or the first that differs) and the
    start of every thread's piece."""
    layouts = [_text(p.layout) for p in partitions[:1]]
    if not lib.real:       # CuTeDSL's layout is the thread's slice of one static layout; cutekit's is checked
        others = {_text(p.layout) for p in partitions}
        layouts = sorted(others, key=lambda text: text != layouts[0])
    return json.dumps([layouts, [lib.start(p) for p in partitions]], separators=(",", ":"))


def _partitions_of_mma(lib, tiled, operand, spec, name, step):
    tensor = lib.tensor(spec)
    holder = {}

    def partition():
        parts = [getattr(tiled.get_slice(t), "partition_" + operand)(tensor) for t in range(int(tiled.size))]
        holder["shape"] = parts[0].shape
        return _every_thread(parts, lib)
    if step("partition_" + name, partition):
        step("fragment_" + name, lambda: _text(getattr(tiled, "make_fragment_" + operand)(holder["shape"]).layout))


def _copy_atom_facts(lib, spec, holder):
    atom = lib.copy_atom(spec)
    holder["copy_atom"] = atom
    return "\n".join([str(atom), _text(atom.thr_id), _text(atom.layout_src_tv), _text(atom.layout_dst_tv),
                      str(atom.value_type)])


def _tiled_copy_facts(lib, config, holder):
    cute, atom, kind = lib.cute, holder["copy_atom"], config["kind"]
    if kind == "copy_mma":
        tiled = getattr(cute, "make_tiled_copy_" + config["operand"])(atom, holder["mma"])
    elif kind == "copy_tv":
        tiled = cute.make_tiled_copy_tv(atom, lib.layout(config["thr"]), lib.layout(config["val"]))
    else:
        # the (layout_tv, tiler) that make_tiled_copy_tv would build, given to make_tiled_copy directly
        tiler, layout_tv = cute.make_layout_tv(lib.layout(config["thr"]), lib.layout(config["val"]))
        tiled = cute.make_tiled_copy(atom, layout_tv, tuple(cute.size(t) for t in tiler))
    holder["tiled_copy"] = tiled
    return "\n".join([str(tiled), _text(tiled.tiler_mn), _text(tiled.layout_tv_tiled),
                      _text(tiled.layout_src_tv_tiled), _text(tiled.layout_dst_tv_tiled), str(int(tiled.size))])


def _copy_partitions(lib, tiled, spec, side, holder):
    tensor = lib.tensor(spec)
    parts = [getattr(tiled.get_slice(t), "partition_" + side)(tensor) for t in range(int(tiled.size))]
    if side == "D" and "partition_D0" not in holder:
        holder["partition_D0"] = _tuples(_plain(parts[0].shape))
    return _every_thread(parts, lib)


def _mma_fragment(lib, tiled_mma, operand, spec, holder):
    part = getattr(tiled_mma.get_slice(0), "partition_" + operand)(lib.tensor(spec))
    fragment = getattr(tiled_mma, "make_fragment_" + operand)(part.shape)
    holder["fragment"] = fragment
    return _text(fragment.layout)


# ---- answering: cutekit here, CuTeDSL in a worker ---------------------------------------------------------

def _first_line(error) -> str:
    text = str(error).strip()
    for line in text.splitlines():
        if line.startswith("error:"):
            return line[:300]
    return text.splitlines()[0][:300] if text else ""


def _cutedsl_error(error):
    return "ERROR: %s: %s" % (type(error).__name__, _first_line(error))


def cutekit_facts(config: dict) -> dict:
    """cutekit's facts for one configuration; the named warnings it gave under "warnings" (not compared)."""
    from cutekit import cute
    from cutekit.cute.inttuple import CuteError

    def on_error(error):
        if isinstance(error, CuteError):
            return "ERROR: CuteError: %s" % error
        return "CRASH: %s: %s" % (type(error).__name__, error)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        facts = collect(Library(cute, real=False), config, on_error)
    named = sorted({w.category.__name__ for w in caught if w.category.__module__.startswith("cutekit")})
    if named:
        facts["warnings"] = named
    return facts


def _worker():
    """`python -m tests.cute.atoms_conformance`: configurations (JSON) on stdin, one JSON line of facts per
    configuration on stdout. Chunks are traced in forked children: CuTeDSL can die (SIGFPE) on an input."""
    os.environ.setdefault("CUTE_DSL_ARCH", "sm_80")
    import cutlass.cute as cute

    from tests.cute.cutedsl_oracle import answer_in_forked_chunks
    lib = Library(cute, real=True)
    answer_in_forked_chunks(json.load(sys.stdin), lambda chunk, out: _answer_all(lib, chunk, out),
                            crashed=lambda text: {"crash": text}, chunk=CHUNK)


def _answer_all(lib, chunk, out):
    # a plain function: CuTeDSL rewrites loops only inside @cute.jit bodies, and these stay Python loops
    for config in chunk:
        out.write(json.dumps(collect(lib, config, _cutedsl_error)) + "\n")
        out.flush()


def ask_cutedsl(configs: list) -> list:
    """CuTeDSL's facts for each configuration, from one worker process (restarted after a case it dies on)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.setdefault("CUTE_DSL_ARCH", "sm_80")
    answers = []
    while len(answers) < len(configs):
        rest = configs[len(answers):]
        run = subprocess.run([sys.executable, "-m", "tests.cute.atoms_conformance"], input=json.dumps(rest),
                             capture_output=True, text=True, env=env, cwd=ROOT, timeout=36000)
        got = [json.loads(line) for line in run.stdout.splitlines() if line.startswith("{")]
        answers.extend(got[:len(rest)])
        if len(answers) < len(configs):
            if not got and run.returncode != 0:
                raise RuntimeError("the CuTeDSL worker failed:\n" + run.stderr[-3000:])
            if run.returncode != 0:
                answers.append({"crash": "CRASH: CuTeDSL died on this case: " + run.stderr.strip()[-200:]})
            else:
                raise RuntimeError("the CuTeDSL worker answered too few cases:\n" + run.stderr[-3000:])
    return answers


def cutedsl_facts(configs: list, use_cache=True) -> list:
    """CuTeDSL's facts, from build/conformance/atoms/<digest>.json when these very configurations were asked
    with these very steps (the digest covers the steps' source)."""
    import importlib.metadata
    version = importlib.metadata.version("nvidia-cutlass-dsl")
    steps = "".join(inspect.getsource(f) for f in (Library, _plain, _text, collect, _mma_facts, _every_thread,
                                                     _partitions_of_mma, _copy_atom_facts, _tiled_copy_facts,
                                                     _copy_partitions, _mma_fragment))
    from tests.cute.conformance import cached
    return cached(CACHE, [version, steps, configs], lambda: ask_cutedsl(configs), use_cache)


def _refused(answer: str) -> bool:
    """CuTeDSL raised, died, or printed a layout with an undefined entry (`x`: a shape or stride its C++ could
    not work out, as in a permutation whose modes the atoms do not divide); cutekit refuses those."""
    return answer.startswith("ERROR") or answer.startswith("CRASH: CuTeDSL") or _UNDEFINED.search(answer) is not None


_UNDEFINED = re.compile(r"[(,:]x[),]")


def compare(ours: dict, theirs: dict) -> list:
    """The steps on which the two disagree: [(step, cutekit's answer, CuTeDSL's answer)]."""
    if "crash" in theirs:
        refusals = [v for k, v in ours.items() if k != "warnings" and v.startswith("ERROR")]
        return [] if refusals else [("build", "built", theirs["crash"])]
    bad, both_refused = [], False
    for name in list(theirs) + [k for k in ours if k not in theirs and k != "warnings"]:
        mine, real = ours.get(name, "(not reached)"), theirs.get(name, "(not reached)")
        if (mine.startswith("ERROR") or mine == "(not reached)") and _refused(real):
            both_refused = True
            continue      # both refuse (cutekit may have refused an earlier step, where CuTeDSL printed an `x`)
        if mine == "(not reached)" and both_refused:
            continue      # a step after one both refused: CuTeDSL went on from a tiled copy it could not print
        if mine != real or mine.startswith("CRASH"):
            bad.append((name, mine, real))
    return bad


def run(configs, use_cache=True):
    """(disagreements, counts); a disagreement is (config, [(step, cutekit, CuTeDSL), ...]).

    counts: cases; agree (every step agrees); refused_cutedsl (cases where CuTeDSL refused a step);
    refused_both (of those, the cases that agree: cutekit refused the same steps); warned (cases where cutekit
    built what CuTeDSL builds and said with a named warning why it is wrong)."""
    theirs = cutedsl_facts(configs, use_cache)
    bad, counts = [], {"cases": len(configs), "agree": 0, "refused_cutedsl": 0, "refused_both": 0, "warned": 0}
    for config, real in zip(configs, theirs):
        ours = cutekit_facts(config)
        steps = compare(ours, real)
        refused = "crash" in real or any(_refused(v) for v in real.values())
        counts["refused_cutedsl"] += refused
        counts["warned"] += "warnings" in ours
        if steps:
            bad.append((config, steps))
        else:
            counts["agree"] += 1
            counts["refused_both"] += refused
    return bad, counts


def describe(config) -> str:
    parts = [config["kind"]]
    if "mma" in config:
        mma = config["mma"]
        parts.append("mma=%s atoms=%s perm=%s" % (tuple(_tuples(mma["op"])), _tuples(mma["atom_layout"]),
                                                  _tuples(mma["permutation"])))
    if "copy_atom" in config:
        parts.append("atom=%s" % (tuple(config["copy_atom"]),))
    if "operand" in config:
        parts.append("operand=" + config["operand"])
    if "thr" in config:
        parts.append("thr=%s val=%s" % (_tuples(config["thr"]), _tuples(config["val"])))
    parts.append("tensors=%s" % (_tuples(config["tensors"]),))
    return " ".join(parts)


def report(bad, counts) -> str:
    """Disagreements grouped by (kind, first step that differs) with one example each, then the totals."""
    from tests.cute.cutedsl_oracle import report_by_step
    return report_by_step(bad, describe, f"agree {counts['agree']}/{counts['cases']}, refused "
                          f"{counts['refused_both']}/{counts['refused_cutedsl']}, warned {counts['warned']}")


if __name__ == "__main__":
    _worker()
