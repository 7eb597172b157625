"""The Blackwell (sm_100) conformance suite: what a learner builds on the host for a tcgen05 GEMM, built by
cutekit.cute and by CuTeDSL 4.8.1 traced on the CPU for sm_100a (CUTE_DSL_ARCH=sm_100a), compared fact by fact
as printed text (a layout's printed shape:stride is its whole mapping, so equal text is an equal mapping).

`make_cases(n, seed)` draws n configurations of five kinds from a seeded generator:

    mma        a tcgen05 MMA op of every kind and type pair it accepts (f16/bf16 with f16/f32 accumulators,
               tf32, i8/u8, f8 e4m3/e5m2 pairs; A always from shared memory), CtaGroup ONE (M 64/128) or TWO (M 128/256), N from 8 to 256
               in legal steps and now and then an illegal N, M, K or type, A and B K- or MN-major; its atom,
               tiled MMA, TV layouts, partition shapes and each CTA's partitions of an MMA tile, the TMEM
               accumulator (make_fragment_C) and its column count, the staged shared-memory layouts of A and
               B (blackwell_helpers.make_smem_layout_a/b) and their descriptor fragments, make_trivial_tiled_mma
    smem_atom  tcgen05.make_smem_layout_atom of every kind for 8-, 16- and 32-bit types, tiled with
               tile_to_mma_shape to ((MMA_MN,MMA_K),MN_MMAs,K_MMAs,STAGE) in K- or MN-major order
    tmem_load  a tcgen05.ld atom (every shape, repetitions x1 .. x128, packed or not, 16- or 32-bit), or now
               and then the tcgen05.st of the same shape, and make_tmem_copy of it over an accumulator tile,
               with a few threads' partition_S/D
    epilogue   blackwell_helpers.compute_epilogue_tile_shape, get_tmem_load_op, make_smem_layout_epi for a
               CTA tile, D's type and majorness (sometimes with a source C of its own type and majorness), then the dense GEMM's epilogue copies: the accumulator
               flat-divided by the epilogue tile, make_tmem_copy, a few threads' partitions; get_smem_store_op
               and make_tiled_copy_D after it, its partition of the shared-memory C tile and its retile of
               the registers
    tma        the mainloop's TMA loads: cluster_shape_to_tma_atom_A/B for a cluster of 1x1 .. 4x4 CTAs,
               make_tiled_tma_atom_A/B over a (extent, K, L) tensor, K- or MN-major, with the staged layout
               of make_smem_layout_a/b, a CTA's partition_A/B of the tiles and every multicast CTA's
               tma_partition

A refused step is an answer too: the two agree when both refuse it. cutekit refuses with a CuteError (or the
TypeError/ValueError CuTeDSL raises for the same call); anything else inside cutekit is a crash and never agrees.
CuTeDSL runs in a worker process (`python -m tests.cute.blackwell_conformance`), its answers cached under
build/conformance/blackwell/ by the cases' digest.

    .venv/bin/python scripts/conformance.py --blackwell --cases 2000 --seed 0
"""
from __future__ import annotations

import inspect
import json
import os
import random
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CACHE = Path(os.environ.get("CUTEKIT_CONFORMANCE_CACHE", ROOT / "build" / "conformance")) / "blackwell"
CHUNK = 40

# (kind, a_dtype, b_dtype, acc_dtype)
MMA_KINDS = [("f16", "Float16", "Float16", "Float32"), ("f16", "Float16", "Float16", "Float16"),
             ("f16", "BFloat16", "BFloat16", "Float32"), ("tf32", "TFloat32", "TFloat32", "Float32"),
             ("i8", "Int8", "Int8", "Int32"), ("i8", "Uint8", "Uint8", "Int32"),
             ("f8", "Float8E4M3FN", "Float8E4M3FN", "Float32"), ("f8", "Float8E5M2", "Float8E4M3FN", "Float16"),
             ("f8", "Float8E4M3FN", "Float8E5M2", "Float32"), ("f8", "Float8E5M2", "Float8E5M2", "Float16"),
             ("f16", "BFloat16", "BFloat16", "Float16")]
# what CuTeDSL refuses: an accumulator or operand type the kind does not take
BAD_KINDS = [("f16", "Float16", "Float16", "Int32"), ("f16", "Float32", "Float32", "Float32"),
             ("i8", "Float16", "Float16", "Int32"), ("f8", "Float16", "Float8E4M3FN", "Float32")]
K_OF = {"f16": 16, "tf32": 8, "i8": 32, "f8": 32}
WIDTH = {"Float16": 16, "BFloat16": 16, "Float32": 32, "TFloat32": 32, "Int8": 8, "Uint8": 8, "Int32": 32,
         "Float8E4M3FN": 8, "Float8E5M2": 8}
ATOM_KINDS = ["MN_INTER", "MN_SW32", "MN_SW64", "MN_SW128", "MN_SW128_32B", "K_INTER", "K_SW32", "K_SW64",
              "K_SW128"]
LOADS = {"Ld32x32bOp": 32, "Ld16x32bx2Op": 64, "Ld16x64bOp": 64, "Ld16x128bOp": 128, "Ld16x256bOp": 256}
MAX_REPEAT = {"Ld32x32bOp": 128, "Ld16x32bx2Op": 128, "Ld16x64bOp": 128, "Ld16x128bOp": 64, "Ld16x256bOp": 32}


# ---- the generator ----------------------------------------------------------------------------------------

def legal_ns(kind_b_width, b_major, group):
    """The N the tcgen05 MMA accepts: 8..256 step 8 (ONE) or 16..256 step 16 (TWO); twice the step for an
    8-bit B that is MN-major."""
    low = 8 if group == 1 else 16
    if kind_b_width == 8 and b_major == "MN":
        low *= 2
    return list(range(low, 257, low))


def draw_mma(rng, legal=True):
    kind = list(rng.choice(MMA_KINDS if legal or rng.random() < 0.5 else BAD_KINDS))
    group = rng.choice((1, 2))
    a_major, b_major = rng.choice(("K", "MN")), rng.choice(("K", "MN"))
    m = rng.choice((64, 128) if group == 1 else (128, 256))
    n = rng.choice(legal_ns(WIDTH[kind[2]], b_major, group))
    k = K_OF[kind[0]]
    if not legal:
        what = rng.choice(("n", "n", "m", "k", "kind"))
        if what == "n":
            n = rng.choice((4, 8, 12, 20, 24, 40, 48, 264, 272, 512))
        elif what == "m":
            m = rng.choice((32, 64, 96, 192, 256, 512) if group == 1 else (32, 64, 96, 192, 512))
        elif what == "k":
            k = rng.choice((4, 8, 16, 32, 64))
    return {"kind": kind, "shape": [m, n, k], "group": group, "a_major": a_major, "b_major": b_major}


def _case_mma(rng):
    mma = draw_mma(rng, legal=rng.random() < 0.85)
    m, n, k = mma["shape"]
    tile = [m * rng.choice((1, 1, 2)), n * rng.choice((1, 1, 2)), k * rng.choice((1, 2, 4))]
    if rng.random() < 0.08:             # a ragged tile: not a whole number of instructions in one mode
        i = rng.randrange(3)
        tile[i] += rng.choice((8, 16, -8)) if tile[i] > 16 else 8
    return {"kind": "mma", "mma": mma, "tile": tile, "stages": rng.choice((1, 2, 3, 4))}


def _case_smem_atom(rng):
    atom = rng.choice(ATOM_KINDS)
    dtype = rng.choice(("Float16", "BFloat16", "Float32", "TFloat32", "Int8", "Float8E4M3FN"))
    width = WIDTH[dtype]
    row = {"INTER": 128, "SW32": 256, "SW64": 512, "SW128": 1024, "SW128_32B": 1024}[atom.split("_", 1)[1]] // width
    major = atom.split("_")[0]
    contiguous = row * rng.choice((1, 2, 4))
    across = 8 * rng.choice((1, 2, 4, 8, 16))
    mn, kk = (across, contiguous) if major == "K" else (contiguous, across)
    mn_reps, k_reps = rng.choice((1, 2)), rng.choice((1, 2, 4))
    order = [1, 2, 3] if major == "K" else [2, 1, 3]
    return {"kind": "smem_atom", "atom": atom, "dtype": dtype,
            "shape": [[mn, kk], mn_reps, k_reps, rng.choice((1, 2, 3))], "order": order}


def _case_tmem_load(rng):
    """A TMEM load atom and an accumulator tile it can read: 32-bit values from a Float32 accumulator, 16-bit
    ones packed from a Float16 accumulator (one value per 32-bit column), the tile's columns a whole number
    of the atom's; now and then a combination CuTeDSL refuses (an unpacked 16-bit load, too many columns)."""
    op = rng.choice(list(LOADS))
    dtype = rng.choice(("Float32", "Float16"))
    pack = dtype == "Float16" and rng.random() < 0.85
    group = rng.choice((1, 2))
    lanes32 = op == "Ld32x32bOp"
    m = (128 if group == 1 else 256) if lanes32 or rng.random() < 0.3 else (64 if group == 1 else 128)
    n = rng.choice((64, 128, 256))
    per_rep = LOADS[op] // (16 if dtype == "Float16" else 32)        # columns one repetition reads
    fitting = [r for r in (1, 2, 4, 8, 16, 32, 64, 128) if r <= MAX_REPEAT[op] and r * per_rep <= n]
    rep = rng.choice(fitting) if rng.random() < 0.9 else rng.choice((64, 128))
    mma = {"kind": ["f16", "Float16", "Float16", dtype], "shape": [m, n, 16], "group": group, "a_major": "K",
           "b_major": "K"}
    columns = rep * per_rep
    epi_n = min(n, columns * rng.choice((1, 1, 2)))
    rows = m // group if m // group in (64, 128) else 128
    return {"kind": "tmem_load", "op": op if rng.random() < 0.75 else "St" + op[2:], "rep": rep, "dtype": dtype,
            "pack": pack, "mma": mma, "epi": [rows, epi_n], "threads": [0, 37, 127]}


def _case_epilogue(rng):
    group = rng.choice((1, 2))
    m = rng.choice((64, 128) if group == 1 else (128, 256))
    n = rng.choice((32, 64, 96, 128, 192, 256))
    acc, c = rng.choice([("Float32", "Float16"), ("Float32", "Float32"), ("Float32", "BFloat16"),
                         ("Float16", "Float16"), ("Float32", "Int8"), ("Int32", "Int32")])
    return {"kind": "epilogue", "mma": {"kind": ["f16", "Float16", "Float16", acc if acc != "Int32" else "Float32"],
                                        "shape": [m, n, 16], "group": group, "a_major": "K", "b_major": "K"},
            "c_dtype": c, "acc": acc if acc != "Int32" else "Float32", "c_layout": rng.choice(("ROW_MAJOR", "COL_MAJOR")),
            "stages": rng.choice((1, 2, 4)), "threads": [0, 45, 96],
            "source": (rng.choice(("ROW_MAJOR", "COL_MAJOR")), rng.choice(("Float16", "Float32", "Int8")))
            if rng.random() < 0.3 else None}


def _case_tma(rng):
    """The dense GEMM's TMA load of A or B: make_tiled_tma_atom_A/B for the MMA, its staged shared-memory
    layout and a cluster, then each multicast CTA's tma_partition of the CTA's partition of the tiles."""
    mma = draw_mma(rng)
    m, n, k = mma["shape"]
    group = mma["group"]
    cluster = [group * rng.choice((1, 1, 2)), rng.choice((1, 1, 2, 4))]
    operand = rng.choice("AB")
    extent = (m if operand == "A" else n) * rng.choice((3, 4, 7)) + rng.choice((0, 8, 24))
    k_total = k * 4 * rng.choice((2, 5))
    return {"kind": "tma", "operand": operand, "mma": mma, "tiler": [m, n, 4 * k], "cluster": cluster,
            "stages": rng.choice((1, 2, 3)), "gmem": [extent, k_total, rng.choice((1, 1, 3))], "cta": 1 % group}


DRAWS = [(_case_mma, 5), (_case_smem_atom, 2), (_case_tmem_load, 3), (_case_epilogue, 2), (_case_tma, 3)]


def make_cases(n: int, seed: int) -> list:
    rng = random.Random(seed)
    draws = [d for d, weight in DRAWS for _ in range(weight)]
    return [rng.choice(draws)(rng) for _ in range(n)]


def covering_cases() -> list:
    """A fixed set that names every MMA kind and type pair with both CTA groups and both majors, every
    shared-memory atom for each width, every TMEM load shape with and without packing, and the dense GEMM's
    epilogue for each C type and majorness: the sample `make test` compares (against pinned answers)."""
    cases = []
    for i, kind in enumerate(MMA_KINDS):
        for group in (1, 2):
            a_major, b_major = ("K", "MN") if (i + group) % 2 else ("MN", "K")
            m = (64, 128)[i % 2] if group == 1 else (128, 256)[i % 2]
            n = legal_ns(WIDTH[kind[2]], b_major, group)[-1 - (i % 3)]
            cases.append({"kind": "mma", "mma": {"kind": list(kind), "shape": [m, n, K_OF[kind[0]]], "group": group,
                                                 "a_major": a_major, "b_major": b_major},
                          "tile": [m, n, 4 * K_OF[kind[0]]], "stages": 2})
    for kind, shape, group, b_major in [(MMA_KINDS[0], [128, 12, 16], 1, "K"), (MMA_KINDS[0], [128, 8, 16], 2, "K"),
                                        (MMA_KINDS[4], [128, 24, 32], 1, "MN"), (MMA_KINDS[0], [96, 64, 16], 1, "K"),
                                        (MMA_KINDS[0], [64, 64, 16], 2, "K"), (MMA_KINDS[0], [128, 64, 8], 1, "K"),
                                        (BAD_KINDS[0], [128, 64, 16], 1, "K"), (BAD_KINDS[2], [128, 64, 32], 1, "K"),
                                        (MMA_KINDS[0], [128, 264, 16], 1, "K")]:
        cases.append({"kind": "mma", "mma": {"kind": list(kind), "shape": shape, "group": group, "a_major": "K",
                                             "b_major": b_major}, "tile": shape, "stages": 1})
    for atom in ATOM_KINDS:
        for dtype in ("Float16", "Float32", "Int8"):
            major = atom.split("_")[0]
            row = {"INTER": 128, "SW32": 256, "SW64": 512, "SW128": 1024, "SW128_32B": 1024}[atom.split("_", 1)[1]]
            contiguous = 2 * row // WIDTH[dtype]
            mn, kk = (64, contiguous) if major == "K" else (contiguous, 64)
            cases.append({"kind": "smem_atom", "atom": atom, "dtype": dtype, "shape": [[mn, kk], 2, 2, 2],
                          "order": [1, 2, 3] if major == "K" else [2, 1, 3]})
    for op in list(LOADS) + ["St" + name[2:] for name in LOADS]:
        for rep, dtype, pack in ((1, "Float32", False), (8, "Float16", True), (MAX_REPEAT["Ld" + op[2:]], "Float32", False)):
            lanes32 = op[2:] == "32x32bOp"
            m = 128 if lanes32 else 64
            mma = {"kind": ["f16", "Float16", "Float16", dtype], "shape": [m, 256, 16], "group": 1, "a_major": "K",
                   "b_major": "K"}
            columns = LOADS["Ld" + op[2:]] * rep // 32
            cases.append({"kind": "tmem_load", "op": op, "rep": rep, "dtype": dtype, "pack": pack, "mma": mma,
                          "epi": [m, min(256, max(8, columns))], "threads": [0, 37, 127]})
    for group, m, n, acc, c, layout in [(1, 128, 256, "Float32", "Float16", "ROW_MAJOR"),
                                        (1, 128, 128, "Float32", "Float32", "COL_MAJOR"),
                                        (1, 64, 128, "Float32", "BFloat16", "ROW_MAJOR"),
                                        (1, 128, 64, "Float16", "Float16", "ROW_MAJOR"),
                                        (2, 256, 128, "Float32", "Float16", "ROW_MAJOR"),
                                        (2, 128, 256, "Float32", "Float16", "COL_MAJOR"),
                                        (2, 256, 256, "Float32", "Int8", "ROW_MAJOR"),
                                        (1, 64, 128, "Float32", "Int8", "COL_MAJOR"),
                                        (1, 128, 64, "Float32", "Float32", "ROW_MAJOR")]:
        cases.append({"kind": "epilogue", "mma": {"kind": ["f16", "Float16", "Float16", acc], "shape": [m, n, 16],
                                                  "group": group, "a_major": "K", "b_major": "K"},
                      "c_dtype": c, "acc": acc, "c_layout": layout, "stages": 2, "threads": [0, 45, 96]})
    for operand in "AB":
        for i, (kind, group, majors, cluster) in enumerate([(MMA_KINDS[0], 1, ("K", "K"), [1, 1]),
                                                            (MMA_KINDS[0], 2, ("K", "MN"), [2, 1]),
                                                            (MMA_KINDS[2], 1, ("MN", "K"), [2, 2]),
                                                            (MMA_KINDS[3], 2, ("MN", "MN"), [4, 2]),
                                                            (MMA_KINDS[4], 1, ("K", "K"), [1, 4])]):
            m = 128 if group == 1 else 256
            k = K_OF[kind[0]]
            mma = {"kind": list(kind), "shape": [m, 128, k], "group": group, "a_major": majors[0],
                   "b_major": majors[1]}
            cases.append({"kind": "tma", "operand": operand, "mma": mma, "tiler": [m, 128, 4 * k],
                          "cluster": cluster, "stages": 3, "gmem": [1000 + 8 * i, 8 * k * 4, 1 + i % 2],
                          "cta": group - 1})
    return cases


# ---- the two libraries --------------------------------------------------------------------------------------

def _tuples(x):
    return tuple(_tuples(p) for p in x) if isinstance(x, list) else x


class Library:
    """Where cutlass and cutekit keep the same things, and how each makes a shared-memory tensor."""

    def __init__(self, real: bool):
        self.real = real
        if real:
            import cutlass
            import cutlass.cute as cute
            import cutlass.utils.blackwell_helpers as helpers
            from cutlass.cute.nvgpu import OperandMajorMode, tcgen05
            from cutlass.tensor_utils import LayoutEnum
            self.types = cutlass
        else:
            from cutekit import cute
            from cutekit.cute import typing
            from cutekit.cute.nvgpu import OperandMajorMode, tcgen05
            from cutekit.cute.utils import LayoutEnum
            from cutekit.cute.utils import blackwell_helpers as helpers
            self.types = typing
        self.cute, self.tcgen05, self.helpers = cute, tcgen05, helpers
        self.Major, self.LayoutEnum = OperandMajorMode, LayoutEnum

    def dtype(self, name):
        return getattr(self.types, name)

    def mma_op(self, spec):
        t, cute = self.tcgen05, self.cute
        kind, a, b, acc = spec["kind"]
        group = t.CtaGroup.ONE if spec["group"] == 1 else t.CtaGroup.TWO
        shape = tuple(spec["shape"])
        majors = (getattr(self.Major, spec["a_major"]), getattr(self.Major, spec["b_major"]))
        source = t.OperandSource.SMEM
        if kind == "f16":
            return t.MmaF16BF16Op(self.dtype(a), self.dtype(acc), shape, group, source, *majors)
        if kind == "tf32":
            return t.MmaTF32Op(shape, group, source, *majors)
        if kind == "i8":
            return t.MmaI8Op(self.dtype(a), shape, group, source, *majors)
        return t.MmaF8F6F4Op(self.dtype(a), self.dtype(b), self.dtype(acc), shape, group, source, *majors)

    def gmem_tensor(self, name, shape, k_major):
        """A global tensor (extent, K, L), K- or MN-major, and the internal_type to pass for it (TF32 loads read
        a Float32 tensor; cutekit's NumPy storage needs the type named where NumPy has none)."""
        cute = self.cute
        rows, columns, batch = shape
        stride = (columns, 1, rows * columns) if k_major else (1, rows, rows * columns)
        layout = cute.make_layout(tuple(shape), stride=stride)
        stored = "Float32" if name == "TFloat32" else name
        internal = self.dtype("TFloat32") if name == "TFloat32" else None
        if self.real:
            return cute.make_tensor(cute.make_ptr(self.dtype(stored), 0, cute.AddressSpace.gmem, assumed_align=16),
                                    layout), internal
        import numpy
        numpy_type = {"Float16": numpy.float16, "Int8": numpy.int8, "Uint8": numpy.uint8}.get(stored, numpy.float32)
        if stored not in ("Float16", "Float32", "Int8", "Uint8"):
            internal = self.dtype(name)
        return cute.make_tensor(numpy.zeros(rows * columns * batch, numpy_type), layout), internal

    def fragment(self, shape, dtype):
        if self.real:
            return self.cute.make_rmem_tensor(shape, dtype)
        import numpy
        return self.cute.make_tensor(numpy.zeros(self.cute.size(self.cute.make_layout(shape)), numpy.float32),
                                     self.cute.make_layout(shape))

    def smem_tensor(self, dtype, layout):
        cute = self.cute
        if self.real:
            return cute.make_tensor(cute.make_ptr(dtype, 1024, cute.AddressSpace.smem, assumed_align=1024), layout)
        import numpy
        return cute.make_tensor(numpy.zeros(cute.cosize(layout), numpy.float32), layout)


def _text(value):
    return str(value)


def collect(lib: Library, config: dict, on_error) -> dict:
    """{step: printed text, or on_error(exception)}; a step whose input was refused is left out."""
    facts, holder = {}, {}

    def step(name, compute):
        try:
            facts[name] = compute()
            return True
        except Exception as error:          # noqa: BLE001 - a refusal is a fact
            facts[name] = on_error(error)
            return False

    cute, t, h = lib.cute, lib.tcgen05, lib.helpers
    kind = config["kind"]
    if kind == "smem_atom":
        def atom():
            holder["atom"] = t.make_smem_layout_atom(getattr(t.SmemLayoutAtomKind, config["atom"]),
                                                     lib.dtype(config["dtype"]))
            return _text(holder["atom"])
        if step("atom", atom):
            step("tile_to_mma_shape", lambda: _text(t.tile_to_mma_shape(holder["atom"], _tuples(config["shape"]),
                                                                         order=tuple(config["order"]))))
        return facts
    if kind == "tmem_load":
        dtype = lib.dtype(config["dtype"])

        def atom():
            if config["op"].startswith("St"):       # a store: TMEM is the destination
                pack = t.Unpack.UNPACK_32b_IN_16b if config["pack"] else t.Unpack.NONE
            else:
                pack = t.Pack.PACK_16b_IN_32b if config["pack"] else t.Pack.NONE
            op = getattr(t, config["op"])(t.Repetition(config["rep"]), pack)
            holder["atom"] = cute.make_copy_atom(op, dtype)
            return _text(op) + "\n" + _text(holder["atom"])
        if step("atom", atom):
            _tmem_copy(lib, config, holder["atom"], tuple(config["epi"]), step)
        return facts
    if kind == "epilogue":
        _epilogue(lib, config, step)
        return facts
    if kind == "tma":
        _tma(lib, config, step)
        return facts
    # mma
    spec, tile = config["mma"], config["tile"]
    def make_op():
        holder["op"] = lib.mma_op(spec)
        return _text(holder["op"])
    if not step("op", make_op):
        return facts
    op = holder["op"]
    if not step("tiled", lambda: _tiled_facts(cute, op, holder)):
        return facts
    tiled = holder["tiled"]
    extents = {"A": (tile[0], tile[2]), "B": (tile[1], tile[2]), "C": (tile[0], tile[1])}
    for operand in "ABC":
        step("tv_layout_" + operand, lambda: _text(getattr(tiled, f"tv_layout_{operand}_tiled")))
        step("partition_shape_" + operand,
             lambda: _text(getattr(tiled, "partition_shape_" + operand)(extents[operand])))
        step("partition_" + operand, lambda: "\n".join(
            _text(getattr(tiled.get_slice(v), "partition_" + operand)(cute.make_identity_tensor(extents[operand])))
            for v in range(cute.size(tiled.thr_id))))

    def accumulator():
        acc = tiled.make_fragment_C(tiled.partition_shape_C(extents["C"]))
        holder["acc"] = acc
        return _text(acc) + "\n" + str(int(t.find_tmem_tensor_col_offset(acc)))
    if step("accumulator", accumulator):
        step("tmem_alloc_cols", lambda: str(int(h.get_num_tmem_alloc_cols(holder["acc"]))))
    a_dtype, b_dtype = lib.dtype(spec["kind"][1]), lib.dtype(spec["kind"][2])
    for operand, dtype in (("A", a_dtype), ("B", b_dtype)):
        def smem():
            layout = getattr(h, "make_smem_layout_" + operand.lower())(tiled, tuple(tile), dtype, config["stages"])
            holder["smem_" + operand] = layout
            return _text(layout)
        if step("smem_" + operand, smem):
            step("fragment_" + operand, lambda: _text(getattr(tiled, "make_fragment_" + operand)(
                lib.smem_tensor(dtype, holder["smem_" + operand].outer)).layout))
    step("trivial", lambda: _text(h.make_trivial_tiled_mma(
        a_dtype, b_dtype, getattr(lib.Major, spec["a_major"]), getattr(lib.Major, spec["b_major"]),
        lib.dtype(spec["kind"][3]), t.CtaGroup.ONE if spec["group"] == 1 else t.CtaGroup.TWO,
        tuple(spec["shape"][:2]))))
    return facts


def _tiled_facts(cute, op, holder):
    atom = cute.make_mma_atom(op)
    tiled = cute.make_tiled_mma(atom)
    holder["tiled"] = tiled
    return "\n".join([_text(atom), _text(tiled), _text(tiled.thr_id), _text(tiled.shape_mnk),
                      str(int(cute.size(tiled.thr_id)))])


def _accumulator(lib, spec, holder, step):
    def make():
        tiled = lib.cute.make_tiled_mma(lib.mma_op(spec))
        m, n = spec["shape"][:2]
        acc = tiled.make_fragment_C(tiled.partition_shape_C((m, n)))
        holder["acc"] = acc
        return _text(acc)
    return step("accumulator", make)


def _tmem_copy(lib, config, atom, epi, step):
    """make_tmem_copy of `atom` over the accumulator's first tile of shape `epi` (ints or layouts), and a few
    threads' partitions of the tiles (source: TMEM; destination: coordinates of the MMA tile)."""
    cute, t = lib.cute, lib.tcgen05
    holder = {}
    if not _accumulator(lib, config["mma"], holder, step):
        return holder

    def tiled_copy():
        acc = holder["acc"][((None, None), 0, 0)]
        holder["epi"] = cute.flat_divide(acc, epi)
        tiled = t.make_tmem_copy(atom, holder["epi"][(None, None, 0, 0)])
        holder["tiled"] = tiled
        return "\n".join([_text(tiled), _text(tiled.layout_tv_tiled), str(int(tiled.size))])
    if not step("tmem_copy", tiled_copy):
        return holder
    tiled = holder["tiled"]
    m, n = config["mma"]["shape"][:2]
    m //= config["mma"]["group"]
    coordinates = cute.flat_divide(cute.make_identity_tensor((m, n)), epi)
    store = config.get("op", "").startswith("St")
    tmem_side, register_side = ("partition_D", "partition_S") if store else ("partition_S", "partition_D")
    for thread in config["threads"]:
        step(f"{tmem_side}{thread}", lambda: _text(getattr(tiled.get_slice(thread), tmem_side)(holder["epi"])))

        def destination():
            part = getattr(tiled.get_slice(thread), register_side)(coordinates)
            holder.setdefault("registers", part[(None, None, None, 0, 0)].shape)
            return _text(part)
        step(f"{register_side}{thread}", destination)
    return holder


def _epilogue(lib, config, step):
    h, cute = lib.helpers, lib.cute
    spec = config["mma"]
    m, n = spec["shape"][:2]
    two = spec["group"] == 2
    cta_tile = (m // spec["group"], n, 64)
    layout = getattr(lib.LayoutEnum, config["c_layout"])
    c_dtype, acc_dtype = lib.dtype(config["c_dtype"]), lib.dtype(config["acc"])
    holder = {}

    def epi():
        source = config.get("source")
        extra = {} if not source else {"layout_c": getattr(lib.LayoutEnum, source[0]), "elem_ty_c": lib.dtype(source[1])}
        holder["epi"] = h.compute_epilogue_tile_shape(cta_tile, two, layout, c_dtype, **extra)
        return _text(holder["epi"])
    if not step("epi_tile", epi):
        return

    def load_op():
        holder["atom"] = h.get_tmem_load_op(cta_tile, layout, c_dtype, acc_dtype, holder["epi"], two)
        return _text(holder["atom"])
    def smem_epi():
        holder["smem"] = h.make_smem_layout_epi(c_dtype, layout, holder["epi"], config["stages"])
        return _text(holder["smem"])
    step("smem_epi", smem_epi)
    if not step("tmem_load_op", load_op):
        return
    t2r = _tmem_copy(lib, config, holder["atom"], holder["epi"], step)
    if "tiled" not in t2r or "smem" not in holder:
        return

    def store_op():
        holder["r2s_atom"] = h.get_smem_store_op(layout, c_dtype, acc_dtype, t2r["tiled"])
        return _text(holder["r2s_atom"])

    def r2s():
        holder["r2s"] = cute.make_tiled_copy_D(holder["r2s_atom"], t2r["tiled"])
        return _text(holder["r2s"]) + "\n" + _text(holder["r2s"].layout_tv_tiled)
    if not (step("smem_store_op", store_op) and step("tiled_r2s", r2s)):
        return
    smem_c = lib.smem_tensor(c_dtype, holder["smem"].outer)
    for thread in config["threads"]:
        step(f"partition_r2s_D{thread}", lambda: _text(holder["r2s"].get_slice(thread).partition_D(smem_c).layout))
    if "registers" in t2r:
        step("retile_r2s", lambda: _text(holder["r2s"].retile(lib.fragment(t2r["registers"], c_dtype)).layout))


def _tma(lib, config, step):
    cute, h = lib.cute, lib.helpers
    spec, operand, tiler = config["mma"], config["operand"], tuple(config["tiler"])
    holder = {}

    def tiled():
        holder["mma"] = h.make_trivial_tiled_mma(
            lib.dtype(spec["kind"][1]), lib.dtype(spec["kind"][2]), getattr(lib.Major, spec["a_major"]),
            getattr(lib.Major, spec["b_major"]), lib.dtype(spec["kind"][3]),
            lib.tcgen05.CtaGroup.ONE if spec["group"] == 1 else lib.tcgen05.CtaGroup.TWO, tuple(spec["shape"][:2]))
        return _text(holder["mma"].thr_id)
    if not step("tiled_mma", tiled):
        return
    mma = holder["mma"]
    dtype_name = spec["kind"][1 if operand == "A" else 2]
    dtype = lib.dtype(dtype_name)

    def smem():
        holder["smem"] = getattr(h, "make_smem_layout_" + operand.lower())(mma, tiler, dtype, config["stages"])
        return _text(holder["smem"])

    def op():
        holder["op"] = getattr(h, "cluster_shape_to_tma_atom_" + operand)(tuple(config["cluster"]), mma.thr_id)
        holder["vmnk"] = cute.tiled_divide(cute.make_layout((*config["cluster"], 1)), (mma.thr_id.shape,))
        return _text(holder["op"]) + "\n" + _text(holder["vmnk"])
    if not (step("smem", smem) and step("op", op)):
        return
    step("smem_bytes", lambda: str(int(cute.size_in_bytes(dtype, cute.slice_(holder["smem"], (None, None, None, 0))))))
    k_major = spec[operand.lower() + "_major"] == "K"

    def atom():
        gmem, internal = lib.gmem_tensor(dtype_name, config["gmem"], k_major)
        make = getattr(cute.nvgpu, "make_tiled_tma_atom_" + operand)
        one_stage = cute.slice_(holder["smem"], (None, None, None, 0))
        holder["atom"], holder["coords"] = make(holder["op"], gmem, one_stage, tiler, mma, holder["vmnk"].shape,
                                                internal_type=internal)
        return _text(holder["atom"]) + "\n" + _text(holder["coords"])
    if not step("tma_atom", atom):
        return
    extents = (tiler[0], tiler[2]) if operand == "A" else (tiler[1], tiler[2])

    def partition():
        tiles = cute.local_tile(holder["coords"], extents, (None, None, None))
        holder["part"] = getattr(mma.get_slice(config["cta"]), "partition_" + operand)(tiles)
        return _text(holder["part"])
    if not step("partition", partition):
        return
    vmnk = holder["vmnk"]
    mode = (0, 0, None, 0) if operand == "A" else (0, None, 0, 0)
    ctas = cute.make_layout(cute.slice_(vmnk, mode).shape)
    smem_tensor = lib.smem_tensor(dtype, holder["smem"].outer)
    for rank in range(cute.size(ctas)):
        def share():
            s, g = lib.cute.nvgpu.cpasync.tma_partition(holder["atom"], rank, ctas, cute.group_modes(smem_tensor, 0, 3),
                                                       cute.group_modes(holder["part"], 0, 3))
            return _text(s.layout) + "\n" + _text(g)
        step(f"tma_partition{rank}", share)


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
    from cutekit.cute.inttuple import CuteError

    def on_error(error):
        if isinstance(error, (CuteError, TypeError, ValueError)) and not isinstance(error, (KeyError,)):
            return "ERROR: %s: %s" % (type(error).__name__, error)
        return "CRASH: %s: %s" % (type(error).__name__, error)
    return collect(Library(real=False), config, on_error)


def _worker():
    """`python -m tests.cute.blackwell_conformance`: configurations (JSON) on stdin, one JSON line of facts per
    configuration on stdout, traced for sm_100a in forked children (CuTeDSL can die on an input)."""
    os.environ["CUTE_DSL_ARCH"] = "sm_100a"
    import warnings
    warnings.simplefilter("ignore")
    from tests.cute.cutedsl_oracle import answer_in_forked_chunks
    lib = Library(real=True)
    answer_in_forked_chunks(json.load(sys.stdin), lambda chunk, out: _answer_all(lib, chunk, out),
                            crashed=lambda text: {"crash": text}, chunk=CHUNK)


def _answer_all(lib, chunk, out):
    for config in chunk:
        out.write(json.dumps(collect(lib, config, _cutedsl_error)) + "\n")
        out.flush()


def ask_cutedsl(configs: list) -> list:
    env = dict(os.environ, PYTHONPATH=str(ROOT), CUTE_DSL_ARCH="sm_100a")
    answers = []
    while len(answers) < len(configs):
        rest = configs[len(answers):]
        run = subprocess.run([sys.executable, "-m", "tests.cute.blackwell_conformance"], input=json.dumps(rest),
                             capture_output=True, text=True, env=env, cwd=ROOT, timeout=36000)
        got = [json.loads(line) for line in run.stdout.splitlines() if line.startswith("{")]
        answers.extend(got[:len(rest)])
        if len(answers) < len(configs):
            if not got:
                raise RuntimeError("the CuTeDSL worker failed:\n" + run.stderr[-3000:])
            answers.append({"crash": "CRASH: CuTeDSL died on this case: " + run.stderr.strip()[-200:]})
    return answers


def steps_source() -> str:
    return "".join(inspect.getsource(f) for f in (Library, _text, collect, _tiled_facts, _accumulator, _tmem_copy,
                                                    _epilogue, _tma))


def cutedsl_facts(configs: list, use_cache=True) -> list:
    import importlib.metadata
    version = importlib.metadata.version("nvidia-cutlass-dsl")
    from tests.cute.conformance import cached
    return cached(CACHE, [version, steps_source(), configs], lambda: ask_cutedsl(configs), use_cache)


PINNED = Path(__file__).resolve().parent / "pinned" / "blackwell_sm100a.json"


def write_pinned(use_cache=True) -> Path:
    """Ask CuTeDSL (sm_100a) for the covering cases' answers and keep them in tests/cute/pinned/, so the
    comparison runs where CuTeDSL is not installed (the course on a Mac)."""
    import datetime
    import importlib.metadata
    cases = covering_cases()
    answers = cutedsl_facts(cases, use_cache)
    PINNED.parent.mkdir(exist_ok=True)
    PINNED.write_text(json.dumps({
        "cutedsl": importlib.metadata.version("nvidia-cutlass-dsl"), "arch": "sm_100a",
        "written": datetime.date.today().isoformat(),
        "how": "python scripts/conformance.py --blackwell --pin (CuTeDSL traced on the CPU)",
        "cases": cases, "answers": answers}, indent=1) + "\n")
    return PINNED


def pinned() -> dict:
    return json.loads(PINNED.read_text())


def _refused(answer: str) -> bool:
    return answer.startswith("ERROR") or answer.startswith("CRASH: CuTeDSL")


def compare(ours: dict, theirs: dict) -> list:
    """[(step, cutekit's answer, CuTeDSL's answer)] where they disagree."""
    if "crash" in theirs:
        refusals = [v for v in ours.values() if v.startswith("ERROR")]
        return [] if refusals else [("build", "built", theirs["crash"])]
    bad = []
    for name in list(theirs) + [k for k in ours if k not in theirs]:
        mine, real = ours.get(name, "(not reached)"), theirs.get(name, "(not reached)")
        if mine.startswith("ERROR") and _refused(real):
            continue
        if mine != real or mine.startswith("CRASH"):
            bad.append((name, mine, real))
    return bad


def run(configs, use_cache=True, theirs=None):
    """(disagreements, counts): counts of cases, agree, refused_cutedsl (cases where CuTeDSL refused a step),
    refused_both (of those, the ones cutekit refused alike), steps (facts compared)."""
    theirs = cutedsl_facts(configs, use_cache) if theirs is None else theirs
    bad = []
    counts = {"cases": len(configs), "agree": 0, "refused_cutedsl": 0, "refused_both": 0, "steps": 0}
    for config, real in zip(configs, theirs):
        ours = cutekit_facts(config)
        steps = compare(ours, real)
        refused = "crash" in real or any(_refused(v) for v in real.values())
        counts["refused_cutedsl"] += refused
        counts["steps"] += len(real)
        if steps:
            bad.append((config, steps))
        else:
            counts["agree"] += 1
            counts["refused_both"] += refused
    return bad, counts


def describe(config) -> str:
    return json.dumps(config, separators=(",", ":"))


def report(bad, counts) -> str:
    """Disagreements grouped by (kind, first step that differs) with one example each, then the totals."""
    from tests.cute.cutedsl_oracle import report_by_step
    return report_by_step(bad, describe, f"agree {counts['agree']}/{counts['cases']}, refused "
                          f"{counts['refused_both']}/{counts['refused_cutedsl']}, steps compared {counts['steps']}",
                          width=600)


if __name__ == "__main__":
    _worker()
