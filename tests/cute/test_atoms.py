"""Copy and MMA atoms, tiled copies and tiled MMAs: the reference in cutekit.cute prints what CuTeDSL 4.8.1
prints and hands every thread the same elements, in the same order.

Every configuration here is traced once, in one batch, by real CuTeDSL on the CPU (tests/cute/atoms_oracle.py);
the tests then compare. Without nvidia-cutlass-dsl, the comparisons skip; the seed's printed layouts (which
were checked against CuTeDSL when written) still run.
"""
import importlib.util
import pathlib
import random

import numpy
import pytest

from cutekit.cute import atom as cute_atom
from cutekit.cute import not_in_cutedsl, nvgpu, typing as cute_types
from cutekit.cute.layout import make_layout, size
from cutekit.cute.tensor import make_identity_tensor, make_tensor
from tests.sweep import pick

HERE = pathlib.Path(__file__).parent
DTYPE_NAMES = ["Float16", "BFloat16", "Float32", "Int8"]


# --------------------------------------------------------------------------------------------------
# Building our objects from the oracle's plain-data configurations
# --------------------------------------------------------------------------------------------------

def our_dtype(name):
    return getattr(cute_types, name)


def our_layout(spec):
    shape, stride = spec
    return make_layout(shape) if stride is None else make_layout(shape, stride=stride)


def our_copy_atom(spec):
    kind = spec[0]
    if kind == "universal":
        return cute_atom.make_copy_atom(nvgpu.CopyUniversalOp(), our_dtype(spec[1]), num_bits_per_copy=spec[2])
    if kind == "g2s":
        return cute_atom.make_copy_atom(nvgpu.cpasync.CopyG2SOp(), our_dtype(spec[1]), num_bits_per_copy=spec[2])
    op = nvgpu.warp.LdMatrix8x8x16bOp(transpose=spec[2], num_matrices=spec[3])
    return cute_atom.make_copy_atom(op, our_dtype(spec[1]))


def our_mma_op(spec):
    if spec[0] == "f16bf16":
        return nvgpu.warp.MmaF16BF16Op(our_dtype(spec[1]), our_dtype(spec[2]), spec[3])
    return nvgpu.MmaUniversalOp(our_dtype(spec[1]))


def our_tiled_mma(spec):
    permutation = spec.get("permutation")
    if permutation is not None:
        permutation = tuple(p if p is None or isinstance(p, int) else our_layout(p) for p in permutation)
    return cute_atom.make_tiled_mma(our_mma_op(spec["op"]), our_layout(spec["atom_layout"]), permutation_mnk=permutation)


def our_tiled_copy(config):
    atom = our_copy_atom(config["copy_atom"])
    if "thr" in config:
        return cute_atom.make_tiled_copy_tv(atom, our_layout(config["thr"]), our_layout(config["val"]))
    if "layout_tv" in config:
        return cute_atom.make_tiled_copy(atom, our_layout(config["layout_tv"]), config["tiler_mn"])
    maker = getattr(cute_atom, "make_tiled_copy_" + config["operand"])
    return maker(atom, our_tiled_mma(config["mma"]))


def our_tensor(spec):
    """An identity tensor holds coordinates; a counting tensor is NumPy memory holding each element's offset."""
    if spec[0] == "identity":
        return make_identity_tensor(spec[1])
    layout = make_layout(spec[1], stride=spec[2])
    return make_tensor(numpy.arange(size(layout)), layout)


def our_elements(tensor):
    """What the tensor holds, in layout order: coordinates for an identity tensor, offsets for a counting one."""
    return [tensor[i] for i in range(size(tensor.layout))]


def shape_text(shape):
    return "(" + ",".join(shape_text(s) for s in shape) + ")" if isinstance(shape, tuple) else str(shape)


# --------------------------------------------------------------------------------------------------
# Configurations
# --------------------------------------------------------------------------------------------------

SGEMM_SM80_MMA = {"op": ("f16bf16", "Float16", "Float16", (16, 8, 16)), "atom_layout": ((2, 2, 1), None),
                  "permutation": (32, 32, 16)}

SEED_CONFIGS = [
    # sgemm_sm80 copyA: cp.async of 128 bits, 16x8 threads K-major, 1x8 values; gA is 128 x 64 x (3 k-tiles)
    {"copy_atom": ("g2s", "Float16", 128), "thr": ((16, 8), (8, 1)), "val": ((1, 8), None),
     "tensors": [("identity", (128, 64, 3))]},
    {"mma": SGEMM_SM80_MMA, "tensors_A": [("identity", (128, 64))], "tensors_B": [("identity", (128, 64))],
     "tensors_C": [("identity", (128, 128))]},
    # s2r_copy_a: ldmatrix x4 tiled against the MMA's A operand
    {"copy_atom": ("ldmatrix", "Float16", False, 4), "mma": SGEMM_SM80_MMA, "operand": "A",
     "tensors": [("identity", (128, 64))]},
]


def power_of_two(rng, low, high):
    choices = [1 << e for e in range(low, high + 1)]
    return rng.choice(choices)


def random_copy_config(rng):
    dtype = rng.choice(DTYPE_NAMES)
    width = getattr(cute_types, dtype).width
    kind = rng.choice(["universal", "universal", "g2s"])
    if kind == "universal":
        bits = rng.choice([0, width, 2 * width, 4 * width, 8 * width, 128, 256])
    else:
        bits = rng.choice([b for b in (32, 64, 128) if b >= width] or [width])
    atom_values = 1 if bits == 0 else max(1, bits // width)
    threads_m, threads_n = power_of_two(rng, 0, 5), power_of_two(rng, 0, 4)
    while threads_m * threads_n > 128:
        threads_m //= 2
    thread_stride = None if rng.random() < 0.5 else (threads_n, 1)
    values_m, values_n = power_of_two(rng, 0, 2), atom_values * power_of_two(rng, 0, 1)
    if rng.random() < 0.25:  # values down the rows instead
        values_m, values_n = values_n, values_m
    value_stride = None if rng.random() < 0.7 else (values_n, 1)
    tile_m, tile_n = threads_m * values_m, threads_n * values_n
    extent_m, extent_n = tile_m * rng.choice([1, 2]), tile_n * rng.choice([1, 2, 3])
    tensors = [("identity", (extent_m, extent_n)), ("counting", (extent_m, extent_n), (extent_n, 1))]
    return {"copy_atom": ("universal" if kind == "universal" else "g2s", dtype, bits),
            "thr": ((threads_m, threads_n), thread_stride), "val": ((values_m, values_n), value_stride),
            "tensors": tensors, "fragment": (values_m * values_n, extent_m // tile_m, extent_n // tile_n)}


def random_permutation_layout(rng, extent):
    """A bijection on [0, extent): a random factorization into powers of two with shuffled compact strides."""
    factors = []
    rest = extent
    while rest > 1:
        f = rng.choice([f for f in (2, 4) if rest % f == 0])
        factors.append(f)
        rest //= f
    if len(factors) < 2:
        return extent
    order = list(range(len(factors)))
    rng.shuffle(order)
    strides, running = [0] * len(factors), 1
    for i in order:
        strides[i] = running
        running *= factors[i]
    return (tuple(factors), tuple(strides))


def random_mma_spec(rng, warp_only=False):
    if warp_only or rng.random() < 0.75:
        ab, acc = rng.choice([("Float16", "Float16"), ("Float16", "Float32"), ("BFloat16", "Float32")])
        shape = rng.choice([(16, 8, 8), (16, 8, 16)])
        op = ("f16bf16", ab, acc, shape)
        atoms_m, atoms_n = rng.choice([1, 2, 4]), rng.choice([1, 2])
    else:
        op = ("fma", rng.choice(["Float32", "Float16"]))
        shape = (1, 1, 1)
        atoms_m, atoms_n = power_of_two(rng, 0, 4), power_of_two(rng, 0, 3)
    stride = None if rng.random() < 0.6 else (atoms_n, 1, 0)
    natural = (shape[0] * atoms_m, shape[1] * atoms_n, shape[2])
    permutation = None
    roll = rng.random()
    if roll < 0.35:
        permutation = tuple(n * rng.choice([1, 2]) for n in natural)
    elif roll < 0.6:
        permutation = tuple(None if rng.random() < 0.4 else random_permutation_layout(rng, n * rng.choice([1, 2]))
                            for n in natural)
    return {"op": op, "atom_layout": ((atoms_m, atoms_n, 1), stride), "permutation": permutation}


def tile_sizes(spec):
    """The M, N, K extents a tiled MMA covers (what get_tile_size says), from the plain-data spec."""
    shape = spec["op"][3] if spec["op"][0] == "f16bf16" else (1, 1, 1)
    atoms = spec["atom_layout"][0]
    out = []
    for i in range(3):
        p = (spec.get("permutation") or (None, None, None))[i]
        if p is None:
            out.append(shape[i] * atoms[i])
        elif isinstance(p, int):
            out.append(p)
        else:
            n = 1
            for f in p[0]:
                n *= f
            out.append(n)
    return out


def random_mma_copy_config(rng, operand):
    """A universal copy tiled like an MMA operand, 1 or 2 values per atom (what an epilogue or a SIMT load does)."""
    spec = random_mma_spec(rng)
    m, n, k = tile_sizes(spec)
    op = spec["op"]
    dtype = {"A": op[1], "B": op[1], "C": op[2] if op[0] == "f16bf16" else op[1]}[operand]
    values = 1 if op[0] == "fma" else rng.choice([1, 2])
    extents = {"A": (m, k), "B": (n, k), "C": (m, n)}[operand]
    return {"copy_atom": ("universal", dtype, values * getattr(cute_types, dtype).width), "mma": spec,
            "operand": operand, "tensors": [("identity", tuple(e * rng.choice([1, 2]) for e in extents))]}


def random_mma_config(rng):
    spec = random_mma_spec(rng)
    m, n, k = tile_sizes(spec)
    scale_m, scale_n, scale_k = rng.choice([1, 2]), rng.choice([1, 2]), rng.choice([1, 2])
    config = {"mma": spec, "tensors_A": [("identity", (m * scale_m, k * scale_k))],
              "tensors_B": [("identity", (n * scale_n, k * scale_k))],
              "tensors_C": [("identity", (m * scale_m, n * scale_n))]}
    if rng.random() < 0.3:
        config["tensors_A"].append(("identity", (m * scale_m, k * scale_k, 2)))
    return config


def values_per_thread(spec, operand):
    """How many values each thread holds in tv_layout_{operand}_tiled, from the plain-data spec."""
    shape = spec["op"][3]  # warp MMAs only
    atom_values = {"A": shape[0] * shape[2], "B": shape[1] * shape[2], "C": shape[0] * shape[1]}[operand] // 32
    first, second = {"A": (0, 2), "B": (1, 2), "C": (0, 1)}[operand]
    tiles, atoms = tile_sizes(spec), spec["atom_layout"][0]
    return atom_values * (tiles[first] // (shape[first] * atoms[first])) * (tiles[second] // (shape[second] * atoms[second]))


def random_ldmatrix_config(rng, transpose, num_matrices, operand):
    # ldmatrix moves 2 * num_matrices 16-bit values per thread: keep MMAs whose threads hold a multiple of that
    spec = random_mma_spec(rng, warp_only=True)
    while values_per_thread(spec, operand) % (2 * num_matrices):
        spec = random_mma_spec(rng, warp_only=True)
    m, n, k = tile_sizes(spec)
    extents = {"A": (m, k), "B": (n, k), "C": (m, n)}[operand]
    dtype = spec["op"][1]
    return {"copy_atom": ("ldmatrix", dtype, transpose, num_matrices), "mma": spec, "operand": operand,
            "tensors": [("identity", tuple(e * rng.choice([1, 2]) for e in extents))]}


def build_configs():
    rng = random.Random(20240401)
    drawn = [random_copy_config(rng) for _ in range(110)]
    copies = drawn[:pick(quick=30, deep=110)]     # the same draw either way; make test asks CuTeDSL about 30
    copies += [{"copy_atom": ("universal", rng.choice(DTYPE_NAMES), bits)} for bits in (0, 8, 16, 32, 64, 128, 256)]
    copies += [{"copy_atom": ("g2s", "Float16", 128), "layout_tv": (((8, 16), 8), ((128, 1), 16)),
                "tiler_mn": (16, 64), "tensors": [("identity", (32, 64))]}]
    mmas = [random_mma_config(rng) for _ in range(70)]
    mmas += [random_mma_copy_config(rng, operand) for operand in "ABC" for _ in range(8)]
    ldmatrix = [random_ldmatrix_config(rng, transpose, count, operand)
                for transpose in (False, True) for count in (1, 2, 4) for operand in ("A", "B") for _ in range(4)]
    ldmatrix += [{"copy_atom": ("ldmatrix", dtype, transpose, count)}
                 for dtype in DTYPE_NAMES for transpose in (False, True) for count in (1, 2, 4)]
    return {"seed": SEED_CONFIGS, "copy": copies, "mma": mmas, "ldmatrix": ldmatrix}


CONFIGS = build_configs()


@pytest.fixture(scope="module")
def cutedsl():
    """Every configuration traced by CuTeDSL, in one batch."""
    pytest.importorskip("cutlass", reason="nvidia-cutlass-dsl is not installed")
    spec = importlib.util.spec_from_file_location("atoms_oracle", HERE / "atoms_oracle.py")
    oracle = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(oracle)
    flat = [c for group in CONFIGS.values() for c in group]
    facts = oracle.trace(flat)
    out, start = {}, 0
    for name, group in CONFIGS.items():
        out[name] = list(zip(group, facts[start:start + len(group)]))
        start += len(group)
    out["elements"] = oracle.elements
    return out


# --------------------------------------------------------------------------------------------------
# Comparisons
# --------------------------------------------------------------------------------------------------

def assert_copy_atom_matches(atom, facts):
    assert str(atom) == facts["str"]
    assert str(atom.thr_id) == facts["thr_id"]
    assert str(atom.layout_src_tv) == facts["layout_src_tv"]
    assert str(atom.layout_dst_tv) == facts["layout_dst_tv"]
    assert atom.value_type.__name__ == facts["value_type"]
    assert str(not_in_cutedsl.layout_ref_tv(atom)) == facts["layout_dst_tv"]
    assert str(not_in_cutedsl.src_to_ref(atom)) == facts["src_to_ref"]
    assert str(not_in_cutedsl.dst_to_ref(atom)) == facts["dst_to_ref"]


def iterator_offset(tensor):
    """Where a partition starts: a coordinate (identity tensor) or an element offset (memory tensor)."""
    return tensor.iterator[2] if tensor.iterator and tensor.iterator[0] == "memory" else tensor.iterator


def assert_partition_matches(ours, theirs, thread, elements):
    """The partition's layout prints the same and starts at the same place: then, element for element, the
    thread holds the same things. Listing every element is slow, so that is done for a few threads."""
    offsets_by_thread, shape, stride, printed = theirs
    assert str(ours.layout) == printed, "thread %d" % thread
    assert iterator_offset(ours) == offsets_by_thread[thread], "thread %d" % thread
    if thread in (0, 1, len(offsets_by_thread) - 1):
        assert our_elements(ours) == elements(offsets_by_thread[thread], shape, stride), "thread %d" % thread


def assert_tiled_copy_matches(config, facts, elements):
    assert_copy_atom_matches(our_copy_atom(config["copy_atom"]), facts["atom"])
    tiled = our_tiled_copy(config)
    theirs = facts["tiled"]
    assert str(tiled) == theirs["str"]
    assert "(" + ",".join(str(t) for t in tiled.tiler_mn) + ")" == theirs["tiler_mn"]
    assert str(tiled.layout_tv_tiled) == theirs["layout_tv_tiled"]
    assert str(tiled.layout_src_tv_tiled) == theirs["layout_src_tv_tiled"]
    assert str(tiled.layout_dst_tv_tiled) == theirs["layout_dst_tv_tiled"]
    assert tiled.size == theirs["size"]
    for spec, (sources, destinations) in zip(config.get("tensors", []), theirs["partitions"]):
        tensor = our_tensor(spec)
        for thread in range(tiled.size):
            sliced = tiled.get_slice(thread)
            assert_partition_matches(sliced.partition_S(tensor), sources, thread, elements)
            assert_partition_matches(sliced.partition_D(tensor), destinations, thread, elements)
    if "mma_fragment" in theirs:
        tiled_mma = our_tiled_mma(config["mma"])
        part = getattr(tiled_mma.get_slice(0), "partition_" + config["operand"])(our_tensor(config["tensors"][0]))
        fragment = getattr(tiled_mma, "make_fragment_" + config["operand"])(part.shape)
        assert str(fragment.layout) == theirs["mma_fragment"]
        assert str(tiled.retile(fragment).layout) == theirs["retile"]
    elif "retile" in theirs:
        fragment = make_tensor(numpy.zeros(size(make_layout(config["fragment"]))), make_layout(config["fragment"]))
        assert str(tiled.retile(fragment).layout) == theirs["retile"]


def assert_tiled_mma_matches(config, facts, elements):
    tiled = our_tiled_mma(config["mma"])
    atom = cute_atom.make_mma_atom(our_mma_op(config["mma"]["op"]))
    assert str(atom) == facts["atom"]["str"]
    theirs = facts["tiled"]
    assert str(tiled) == theirs["str"]
    assert str(tiled.thr_layout_vmnk) == theirs["thr_layout_vmnk"]
    assert shape_text(tiled.shape_mnk) == theirs["shape_mnk"]
    assert "(" + ",".join(str(p) for p in tiled.permutation_mnk) + ")" == theirs["permutation_mnk"]
    assert tiled.size == theirs["size"]
    assert tuple(tiled.get_tile_size(i) for i in range(3)) == theirs["tile_size"]
    for operand in "ABC":
        assert str(getattr(tiled, "tv_layout_" + operand)) == theirs["tv_layout_" + operand]
        assert str(getattr(tiled, "tv_layout_%s_tiled" % operand)) == theirs["tv_layout_%s_tiled" % operand]
        for spec, result in zip(config.get("tensors_" + operand, []), theirs["partitions_" + operand]):
            tensor = our_tensor(spec)
            assert len(result["partition"][0]) == tiled.size
            for thread in range(tiled.size):
                ours = getattr(tiled.get_slice(thread), "partition_" + operand)(tensor)
                assert_partition_matches(ours, result["partition"], thread, elements)
                if thread == 0:
                    fragment = getattr(tiled, "make_fragment_" + operand)(ours.shape)
                    assert str(fragment.layout) == result["fragment"]


def check_all(group, cutedsl, minimum):
    checked = 0
    for config, facts in cutedsl[group]:
        assert "error" not in facts, "CuTeDSL rejects %r: %s" % (config, facts["error"])
        try:
            if "copy_atom" in config and "tiled" not in facts:
                assert_copy_atom_matches(our_copy_atom(config["copy_atom"]), facts["atom"])
            elif "copy_atom" in config:
                assert_tiled_copy_matches(config, facts, cutedsl["elements"])
            else:
                assert_tiled_mma_matches(config, facts, cutedsl["elements"])
        except AssertionError as failure:
            raise AssertionError("configuration %r: %s" % (config, failure)) from None
        checked += 1
    assert checked >= minimum, "only %d configurations traced without error" % checked
    return checked


# --------------------------------------------------------------------------------------------------
# Tests
# --------------------------------------------------------------------------------------------------

def test_random_tiled_copies_give_every_thread_the_same_elements_as_cutedsl(cutedsl):
    check_all("copy", cutedsl, minimum=pick(quick=30, deep=100))


def test_random_tiled_mmas_print_and_partition_like_cutedsl(cutedsl):
    check_all("mma", cutedsl, minimum=60)


def test_ldmatrix_atoms_and_copies_tiled_against_mmas_match_cutedsl(cutedsl):
    check_all("ldmatrix", cutedsl, minimum=40)


def test_seed_sgemm_sm80_configurations_match_cutedsl(cutedsl):
    check_all("seed", cutedsl, minimum=3)


# The seed's sgemm_sm80 printouts, in CuTeDSL's spelling (no `_` on static integers, tiles as layouts).

def test_seed_g2s_copy_a_layouts():
    atom = cute_atom.make_copy_atom(nvgpu.cpasync.CopyG2SOp(), cute_types.Float16, num_bits_per_copy=128)
    tiled = cute_atom.make_tiled_copy_tv(atom, make_layout((16, 8), stride=(8, 1)), make_layout((1, 8)))
    assert str(tiled.layout_tv_tiled) == "((8,16),8):((128,1),16)"
    assert [str(t) for t in tiled.tiler_mn] == ["16:1", "64:1"]
    assert str(tiled.layout_src_tv_tiled) == "((8,16),(8,1)):((128,1),(16,0))"
    assert str(tiled.layout_dst_tv_tiled) == "((8,16),(8,1)):((128,1),(16,0))"
    # thread 0's share of a 128 x 64 x k gA: 8 contiguous halves per cp.async, 8 tiles down M
    gA = our_tensor(("identity", (128, 64, 3)))
    assert shape_text(tiled.get_slice(0).partition_S(gA).layout.shape) == "((8,1),8,1,3)"


def test_seed_mma_atom_layouts():
    atom = cute_atom.make_mma_atom(nvgpu.warp.MmaF16BF16Op(cute_types.Float16, cute_types.Float16, (16, 8, 16)))
    assert atom.shape_mnk == (16, 8, 16)
    assert str(atom.thr_id) == "32:1"
    assert str(atom.tv_layout_A) == "((4,8),(2,2,2)):((32,1),(16,8,128))"
    assert str(atom.tv_layout_B) == "((4,8),(2,2)):((16,1),(8,64))"
    assert str(atom.tv_layout_C) == "((4,8),(2,2)):((32,1),(16,8))"


def test_seed_tiled_mma_with_tile_32x32x16():
    op = nvgpu.warp.MmaF16BF16Op(cute_types.Float16, cute_types.Float16, (16, 8, 16))
    tiled = cute_atom.make_tiled_mma(op, (2, 2, 1), permutation_mnk=(32, 32, 16))
    assert str(tiled.thr_layout_vmnk) == "(32,2,2,1):(1,32,64,0)"
    assert tuple(tiled.get_tile_size(i) for i in range(3)) == (32, 32, 16)
    assert str(tiled.tv_layout_A_tiled) == "((4,8,2,2),((2,2,2),(1,1))):((64,1,16,0),((32,8,256),(0,0)))"
    assert str(tiled.tv_layout_B_tiled) == "((4,8,2,2),((2,2),(2,1))):((64,1,0,8),((32,256),(16,0)))"
    assert str(tiled.tv_layout_C_tiled) == "((4,8,2,2),((2,2),(1,2))):((64,1,16,256),((32,8),(0,512)))"


def test_seed_ldmatrix_x4_value_layouts_and_maps_to_the_reference():
    atom = cute_atom.make_copy_atom(nvgpu.warp.LdMatrix8x8x16bOp(transpose=False, num_matrices=4), cute_types.Float16)
    assert str(atom.layout_src_tv) == "(32,8):(8,1)"
    assert str(atom.layout_dst_tv) == "(32,(2,4)):(2,(1,64))"
    assert str(not_in_cutedsl.layout_ref_tv(atom)) == "(32,(2,4)):(2,(1,64))"
    assert str(not_in_cutedsl.src_to_ref(atom)) == "((8,4),(2,4)):((4,64),(32,1))"
    assert str(not_in_cutedsl.dst_to_ref(atom)) == "(32,(2,4)):(1,(32,64))"
    # the seed's sample rows: source (thread, value) -> reference (thread, (lane, register))
    def reference_coordinate(index):
        thread, value = index % 32, index // 32
        return thread, (value % 2, value // 2)
    for thread, register in ((0, 0), (8, 1), (16, 2), (24, 3)):
        row = [reference_coordinate(not_in_cutedsl.src_to_ref(atom)(thread + 32 * v)) for v in range(8)]
        assert row == [(t, (lane, register)) for t in range(4) for lane in range(2)]


def test_seed_s2r_copy_a_uses_the_mma_a_layout():
    op = nvgpu.warp.MmaF16BF16Op(cute_types.Float16, cute_types.Float16, (16, 8, 16))
    tiled_mma = cute_atom.make_tiled_mma(op, (2, 2, 1), permutation_mnk=(32, 32, 16))
    atom = cute_atom.make_copy_atom(nvgpu.warp.LdMatrix8x8x16bOp(transpose=False, num_matrices=4), cute_types.Float16)
    s2r = cute_atom.make_tiled_copy_A(atom, tiled_mma)
    assert str(s2r.layout_tv_tiled) == "((4,8,2,2),((2,2,2),(1,1))):((64,1,16,0),((32,8,256),(0,0)))"
    assert [str(t) for t in s2r.tiler_mn] == ["32:1", "16:1"]


# An ldmatrix.x4 moves 8 values per thread; the A operand of a 16x8x8 MMA holds 4 per thread. CuTeDSL 4.8.1
# builds make_tiled_copy_A anyway (C++ CuTe refuses it at compile time): its partitions and retile are printed
# below as CuTeDSL prints them (traced on the CPU), and cutekit builds the same, with a named warning.
LDSM_X4_OVER_TWO_MATRICES = [
    # (atom layout, permutation_mnk, tensor, TV layout tiled, dst TV layout tiled, partition_S of thread 0,
    #  MMA fragment, its retile: the stride 0 says two values of the copy land in one register)
    ((2, 1, 1), (32, 16, 8), (32, 16), "((4,8,2),((2,2),(1,1))):((64,1,16),((32,8),(0,0)))",
     "((4,8,2),((2,2,2),1)):((64,1,16),((32,8,0),0))", "((8,1),1,2):((1@1,0),0,8@1)",
     "((2,2),1,2):((1,2),0,4)", "(((4,2),1),1,2):(((1,0),0),0,4)"),
    ((4, 2, 1), None, (32, 16), "((4,8,4,2),((2,2),(1,1))):((128,1,16,0),((64,8),(0,0)))",
     "((4,8,4,2),((2,2,2),1)):((128,1,16,0),((64,8,0),0))", "((8,1),1,2):((1@1,0),0,8@1)",
     "((2,2),1,2):((1,2),0,4)", "(((4,2),1),1,2):(((1,0),0),0,4)"),
]


@pytest.mark.parametrize("case", LDSM_X4_OVER_TWO_MATRICES, ids=lambda c: "atoms%s-perm%s" % (c[0], c[1]))
def test_ldmatrix_x4_over_an_operand_of_two_matrices_builds_as_in_cutedsl_with_a_named_warning(case):
    atoms, permutation, extent, layout_tv, dst_tv, partition_s, fragment_layout, retiled = case
    op = nvgpu.warp.MmaF16BF16Op(cute_types.Float16, cute_types.Float16, (16, 8, 8))
    tiled_mma = cute_atom.make_tiled_mma(op, atoms, permutation_mnk=permutation)
    atom = cute_atom.make_copy_atom(nvgpu.warp.LdMatrix8x8x16bOp(transpose=False, num_matrices=4), cute_types.Float16)
    with pytest.warns(not_in_cutedsl.AtomDoesNotFitWarning, match="4 values.*ldmatrix.*8"):
        tiled = cute_atom.make_tiled_copy_A(atom, tiled_mma)
    assert str(tiled.layout_tv_tiled) == layout_tv
    assert str(tiled.layout_dst_tv_tiled) == dst_tv
    identity = make_identity_tensor(extent)
    assert str(tiled.get_slice(0).partition_S(identity).layout) == partition_s
    fragment = tiled_mma.make_fragment_A(tiled_mma.get_slice(0).partition_A(identity).shape)
    assert str(fragment.layout) == fragment_layout
    assert str(tiled.retile(fragment).layout) == retiled


def test_an_mma_fragment_is_made_for_memory_or_a_shape_never_for_coordinates():
    op = nvgpu.warp.MmaF16BF16Op(cute_types.Float16, cute_types.Float32, (16, 8, 16))
    tiled_mma = cute_atom.make_tiled_mma(op)
    part = tiled_mma.get_slice(0).partition_A(make_identity_tensor((64, 32)))
    # CuTeDSL 4.8.1: "expects a memref/shape/layout type as inputs, but got '!cute.coord_tensor<...>'"
    with pytest.raises(cute_atom.CuteError, match="make_fragment_A: expects a shape, a layout or a memory tensor"):
        tiled_mma.make_fragment_A(part)
    assert str(tiled_mma.make_fragment_A(part.shape).layout) == "((2,2,2),4,2):((1,2,4),8,32)"
    assert str(tiled_mma.make_fragment_A(part.layout).layout) == "((2,2,2),4,2):((1,2,4),8,32)"
    memory = make_tensor(numpy.zeros(64 * 32), make_layout((64, 32)))
    assert str(tiled_mma.make_fragment_A(tiled_mma.get_slice(0).partition_A(memory)).layout) == \
        "((2,2,2),4,2):((1,2,4),8,32)"


def test_cutekit_only_views_are_functions_of_not_in_cutedsl_never_attributes_of_the_atoms():
    atom = cute_atom.make_copy_atom(nvgpu.warp.LdMatrix8x8x16bOp(transpose=False, num_matrices=4), cute_types.Float16)
    op = nvgpu.warp.MmaF16BF16Op(cute_types.Float16, cute_types.Float32, (16, 8, 16))
    tiled_mma = cute_atom.make_tiled_mma(op, (2, 2, 1))
    tiled = cute_atom.make_tiled_copy_A(atom, tiled_mma)
    # the public names CuTeDSL 4.8.1's objects have (dir() of each, traced on the CPU), less get/set/type/with_
    cutedsl = {
        "CopyAtom": {"layout_dst_tv", "layout_src_tv", "op", "thr_id", "value_type"},
        "TiledCopy": {"get_slice", "layout_dst_tv", "layout_dst_tv_tiled", "layout_src_tv", "layout_src_tv_tiled",
                      "layout_tv_tiled", "op", "retile", "size", "thr_id", "tiler_mn", "value_type"},
        "ThrCopy": {"partition_D", "partition_S", "thr_idx"},
        "TiledMma": {"get_slice", "get_tile_size", "make_fragment_A", "make_fragment_B", "make_fragment_C", "op",
                     "partition_shape_A", "partition_shape_B", "partition_shape_C", "permutation_mnk", "shape_mnk",
                     "size", "thr_id", "thr_layout_vmnk", "tv_layout_A", "tv_layout_A_tiled", "tv_layout_B",
                     "tv_layout_B_tiled", "tv_layout_C", "tv_layout_C_tiled"},
        "ThrMma": {"partition_A", "partition_B", "partition_C", "thr_idx"}}
    cutedsl["ThrCopy"] |= cutedsl["TiledCopy"]
    cutedsl["ThrMma"] |= cutedsl["TiledMma"]
    for name, obj in [("CopyAtom", atom), ("TiledCopy", tiled), ("ThrCopy", tiled.get_slice(0)),
                      ("TiledMma", tiled_mma), ("ThrMma", tiled_mma.get_slice(0))]:
        ours = {n for n in dir(obj) if not n.startswith("_")}
        assert ours <= cutedsl[name], (name, sorted(ours - cutedsl[name]))
    assert str(not_in_cutedsl.tidfrg_S(tiled, make_layout((32, 16)))) == \
        "((16,2,2,2),(8,1),(1,1)):((1,256,16,0),(32,0),(0,0))"
    with pytest.raises(cute_atom.CuteError, match="does not expose tidfrg_S"):
        not_in_cutedsl.tidfrg_S(object(), make_layout((32, 16)))


def test_a_cp_async_atom_needs_a_positive_width():
    with pytest.raises(ValueError, match="num_bits_per_copy"):
        cute_atom.make_copy_atom(nvgpu.cpasync.CopyG2SOp(), cute_types.Float16)


@pytest.mark.parametrize("ab,acc,shape", [
    (cute_types.BFloat16, cute_types.Float16, (16, 8, 16)),  # bf16 accumulates in f32 only
    (cute_types.Float32, cute_types.Float32, (16, 8, 16)),   # not a 16-bit input type
    (cute_types.Float16, cute_types.Float32, (16, 8, 32)),   # not an sm80 f16 shape
])
def test_mma_f16_bf16_refuses_what_the_instruction_does_not_have(ab, acc, shape):
    with pytest.raises((TypeError, ValueError)):
        nvgpu.warp.MmaF16BF16Op(ab, acc, shape)


def test_ldmatrix_takes_one_two_or_four_matrices():
    with pytest.raises(ValueError):
        nvgpu.warp.LdMatrix8x8x16bOp(transpose=False, num_matrices=3)


def test_operations_print_like_cutedsl():
    assert str(nvgpu.CopyUniversalOp()) == "universal Copy Operation"
    assert str(nvgpu.cpasync.CopyG2SOp()) == "cp.async GMEM -> SMEM copy Operation"
    assert str(nvgpu.warp.LdMatrix8x8x16bOp(True, 4)) == "LdMatrix8x8x16b Copy Operation\n  number of matrices = 4\n  transposed"
    assert str(nvgpu.MmaUniversalOp(cute_types.Float32)) == "universal MMA Operation using FMA\n  A/B/Accumulator data type = Float32"
    assert str(nvgpu.warp.MmaF16BF16Op(cute_types.Float16, cute_types.Float32, (16, 8, 16))) == (
        "warp-level F16/BF16 MMA Operation\n  A/B data type         = Float16\n  Accumulator data type = Float32"
        "\n  Instruction shape MNK = (16, 8, 16)")


# Rules that hold for every tiled copy and MMA (no CuTeDSL needed).

@pytest.mark.parametrize("config", CONFIGS["copy"][:40:4], ids=lambda c: "%s-%s-%s" % (c["copy_atom"], c.get("thr"), c.get("val")))
def test_the_threads_of_a_tiled_copy_together_touch_every_element_once(config):
    if "thr" not in config:
        pytest.skip("an atom alone")
    tiled = our_tiled_copy(config)
    spec = config["tensors"][0]
    tensor = our_tensor(spec)
    for partition in ("partition_S", "partition_D"):
        touched = [e for thread in range(tiled.size)
                   for e in our_elements(getattr(tiled.get_slice(thread), partition)(tensor))]
        assert sorted(touched) == sorted(our_elements(tensor))


@pytest.mark.parametrize("config", CONFIGS["mma"][:30:3], ids=lambda c: str(c["mma"]["op"]) + str(c["mma"]["atom_layout"]))
def test_every_c_element_is_accumulated_by_exactly_one_thread(config):
    tiled = our_tiled_mma(config["mma"])
    spec = config["tensors_C"][0]
    tensor = our_tensor(spec)
    owned = [e for thread in range(tiled.size) for e in our_elements(tiled.get_slice(thread).partition_C(tensor))]
    assert sorted(owned) == sorted(our_elements(tensor))


@pytest.mark.parametrize("config", CONFIGS["mma"][:30:3], ids=lambda c: str(c["mma"]["op"]) + str(c["mma"]["atom_layout"]))
def test_every_a_element_is_read_by_each_column_of_atoms(config):
    # A(m,k) is needed by every atom in row m's band, so the N-direction atom count of threads hold it
    tiled = our_tiled_mma(config["mma"])
    spec = config["tensors_A"][0]
    tensor = our_tensor(spec)
    copies = size(make_layout(tiled.thr_layout_vmnk.shape[2]))
    held = [e for thread in range(tiled.size) for e in our_elements(tiled.get_slice(thread).partition_A(tensor))]
    assert sorted(held) == sorted(our_elements(tensor) * copies)


def test_the_worked_examples_in_the_docstrings_hold():
    import doctest
    from cutekit.cute import inttuple, tensor
    for module in (cute_atom, not_in_cutedsl, inttuple, tensor):
        assert doctest.testmod(module).failed == 0, module.__name__
