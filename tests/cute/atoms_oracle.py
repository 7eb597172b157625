"""What real CuTeDSL says about copy and MMA atoms, traced on the CPU.

CuTeDSL only traces functions whose source it can read, so this lives in a real module. A test builds a
list of configurations as plain data (tuples, strings, ints), calls `trace(configurations)` once, and gets
back, for each configuration, plain data: the printed attributes and, for every thread index, the elements
its partitions hold, in order. Tracing one batch of hundreds of configurations takes about a second.

A configuration is a dict:

    {"copy_atom": ATOM}                          a copy atom alone
    {"copy_atom": ATOM, "thr": L, "val": L,      make_tiled_copy_tv(atom, thr, val)
     "tensors": [T, ...], "fragment": SHAPE}
    {"copy_atom": ATOM, "layout_tv": L,          make_tiled_copy(atom, layout_tv, tiler_mn)
     "tiler_mn": (int, int), "tensors": [...]}
    {"copy_atom": ATOM, "mma": MMA, "operand": "A"|"B"|"C", "tensors": [...]}   make_tiled_copy_A/B/C
        (then also thread 0's MMA fragment of tensors[0], retiled: "mma_fragment", "retile")
    {"mma": MMA, "tensors_A": [T], "tensors_B": [T], "tensors_C": [T]}          a tiled MMA

    ATOM = ("universal", dtype_name, num_bits_per_copy) | ("g2s", dtype_name, num_bits_per_copy)
         | ("ldmatrix", dtype_name, transpose, num_matrices)
    MMA  = {"op": ("f16bf16", ab_name, acc_name, (m, n, k)) | ("fma", dtype_name),
            "atom_layout": L, "permutation": None | (P, P, P)}     P = None | int | L
    L    = (shape, stride)                        a layout; stride None means compact
    T    = ("identity", shape) | ("counting", shape, stride)

Partitions come back as (offsets, shape, stride, printed layout) in plain data: one offset per thread (a
coordinate for an identity tensor), strides as ints or ("basis", value, mode). `elements(offset, shape, stride)` lists the
coordinates (or offsets) one thread's partition holds, in order.
"""
import os

os.environ.setdefault("CUTE_DSL_ARCH", "sm_80")

import cutlass
import cutlass.cute as cute
from cutlass.cute import nvgpu

_pending = []
_results = []


def _dtype(name):
    return getattr(cutlass, name)


def _layout(spec):
    shape, stride = spec
    return cute.make_layout(shape) if stride is None else cute.make_layout(shape, stride=stride)


def _copy_atom(spec):
    kind = spec[0]
    if kind == "universal":
        return cute.make_copy_atom(nvgpu.CopyUniversalOp(), _dtype(spec[1]), num_bits_per_copy=spec[2])
    if kind == "g2s":
        return cute.make_copy_atom(nvgpu.cpasync.CopyG2SOp(), _dtype(spec[1]), num_bits_per_copy=spec[2])
    if kind == "ldmatrix":
        op = nvgpu.warp.LdMatrix8x8x16bOp(transpose=spec[2], num_matrices=spec[3])
        return cute.make_copy_atom(op, _dtype(spec[1]))
    raise ValueError(spec)


def _mma_op(spec):
    if spec[0] == "f16bf16":
        return nvgpu.warp.MmaF16BF16Op(_dtype(spec[1]), _dtype(spec[2]), spec[3])
    if spec[0] == "fma":
        return nvgpu.MmaUniversalOp(_dtype(spec[1]))
    raise ValueError(spec)


def _permutation(spec):
    if spec is None:
        return None
    return tuple(p if p is None or isinstance(p, int) else _layout(p) for p in spec)


def _tiled_mma(spec):
    return cute.make_tiled_mma(_mma_op(spec["op"]), _layout(spec["atom_layout"]),
                               permutation_mnk=_permutation(spec.get("permutation")))


def _tensor(spec):
    if spec[0] == "identity":
        return cute.make_identity_tensor(spec[1])
    if spec[0] == "counting":
        return cute.make_tensor(0, cute.make_layout(spec[1], stride=spec[2]))
    raise ValueError(spec)


def _plain(value):
    """Static CuTeDSL int-tuples and strides as nested tuples of ints and ("basis", value, mode)."""
    if isinstance(value, (tuple, list)):
        return tuple(_plain(v) for v in value)
    if isinstance(value, cute.ScaledBasis):
        return ("basis", _plain(value.value), tuple(value.mode))
    return int(value)


def _partitions_data(partitions):
    """One partition per thread -> (offsets, shape, stride): a partition's layout is the same for every
    thread (the thread index only moves the iterator), so it is read once; reading it is the slow part."""
    layout = partitions[0].layout
    return ([_plain(p.iterator) for p in partitions], _plain(layout.shape), _plain(layout.stride), str(layout))


def _copy_atom_facts(atom):
    facts = {"str": str(atom), "thr_id": str(atom.thr_id), "layout_src_tv": str(atom.layout_src_tv),
             "layout_dst_tv": str(atom.layout_dst_tv), "value_type": atom.value_type.__name__}
    # CuTeDSL keeps the reference layout inside its IR; for every atom here it is the destination layout
    # (CuTe's Copy_Traits: RefLayout = DstLayout), so the maps to it are CuTeDSL's algebra on these two.
    reference = atom.layout_dst_tv
    facts["src_to_ref"] = str(cute.composition(cute.right_inverse(reference), atom.layout_src_tv))
    facts["dst_to_ref"] = str(cute.composition(cute.right_inverse(reference), atom.layout_dst_tv))
    return facts


def _tiled_copy_facts(tiled, config):
    facts = {"str": str(tiled), "tiler_mn": str(tiled.tiler_mn).replace(" ", ""),
             "layout_tv_tiled": str(tiled.layout_tv_tiled), "layout_src_tv_tiled": str(tiled.layout_src_tv_tiled),
             "layout_dst_tv_tiled": str(tiled.layout_dst_tv_tiled), "size": int(tiled.size)}
    partitions = []
    for tensor_spec in config.get("tensors", []):
        tensor = _tensor(tensor_spec)
        slices = [tiled.get_slice(thread) for thread in range(int(tiled.size))]
        partitions.append((_partitions_data([s.partition_S(tensor) for s in slices]),
                           _partitions_data([s.partition_D(tensor) for s in slices])))
    facts["partitions"] = partitions
    if "fragment" in config:
        fragment = cute.make_rmem_tensor(cute.make_layout(config["fragment"]), _dtype(config["copy_atom"][1]))
        facts["retile"] = str(tiled.retile(fragment).layout)
    if "mma" in config and config.get("tensors"):
        # what an sm80 GEMM does: thread 0's MMA fragment of the operand, retiled for this copy
        tiled_mma = _tiled_mma(config["mma"])
        operand = config["operand"]
        part = getattr(tiled_mma.get_slice(0), "partition_" + operand)(_tensor(config["tensors"][0]))
        fragment = getattr(tiled_mma, "make_fragment_" + operand)(part.shape)
        facts["mma_fragment"] = str(fragment.layout)
        facts["retile"] = str(tiled.retile(fragment).layout)
    return facts


def _tiled_mma_facts(tiled, config):
    facts = {"str": str(tiled), "thr_layout_vmnk": str(tiled.thr_layout_vmnk),
             "shape_mnk": str(tiled.shape_mnk).replace(" ", ""), "permutation_mnk": str(tiled.permutation_mnk).replace(" ", ""),
             "thr_id": str(tiled.thr_id), "size": int(tiled.size),
             "tile_size": tuple(int(tiled.get_tile_size(i)) for i in range(3))}
    for operand in "ABC":
        facts["tv_layout_" + operand] = str(getattr(tiled, "tv_layout_" + operand))
        facts["tv_layout_%s_tiled" % operand] = str(getattr(tiled, "tv_layout_%s_tiled" % operand))
    for operand in "ABC":
        results = []
        for tensor_spec in config.get("tensors_" + operand, []):
            tensor = _tensor(tensor_spec)
            parts = [getattr(tiled.get_slice(thread), "partition_" + operand)(tensor)
                     for thread in range(int(tiled.size))]
            fragment = str(getattr(tiled, "make_fragment_" + operand)(parts[0].shape).layout)
            results.append({"partition": _partitions_data(parts), "fragment": fragment})
        facts["partitions_" + operand] = results
    return facts


def _one(config):
    try:
        if "copy_atom" in config:
            atom = _copy_atom(config["copy_atom"])
            facts = {"atom": _copy_atom_facts(atom)}
            if "thr" in config:
                tiled = cute.make_tiled_copy_tv(atom, _layout(config["thr"]), _layout(config["val"]))
            elif "layout_tv" in config:
                tiled = cute.make_tiled_copy(atom, _layout(config["layout_tv"]), config["tiler_mn"])
            elif "mma" in config:
                maker = getattr(cute, "make_tiled_copy_" + config["operand"])
                tiled = maker(atom, _tiled_mma(config["mma"]))
            else:
                return facts
            facts["tiled"] = _tiled_copy_facts(tiled, config)
            return facts
        if "mma" in config:
            tiled = _tiled_mma(config["mma"])
            atom = cute.make_mma_atom(_mma_op(config["mma"]["op"]))
            return {"atom": {"str": str(atom), "thr_id": str(atom.thr_id), "shape_mnk": str(atom.shape_mnk).replace(" ", ""),
                             "tv_layout_A": str(atom.tv_layout_A), "tv_layout_B": str(atom.tv_layout_B),
                             "tv_layout_C": str(atom.tv_layout_C)},
                    "tiled": _tiled_mma_facts(tiled, config)}
    except Exception as error:  # a configuration CuTeDSL rejects is a fact too
        return {"error": "%s: %s" % (type(error).__name__, str(error).splitlines()[0] if str(error) else "")}
    raise ValueError(config)


@cute.jit
def _trace_pending():
    _results.extend(_run_pending())


def _run_pending():
    # A plain function: the DSL rewrites loops only inside @cute.jit bodies, and these must stay Python loops.
    return [_one(config) for config in _pending]


def trace(configurations):
    """One traced call for the whole batch; returns one facts dict per configuration."""
    _pending[:] = list(configurations)
    _results.clear()
    _trace_pending()
    return list(_results)


def elements(offset, shape, stride):
    """The coordinates (or offsets) a partition holds, in CuTe's colexicographic order."""
    def flat(t):
        if isinstance(t, tuple) and not (len(t) == 3 and t[0] == "basis"):
            return [leaf for item in t for leaf in flat(item)]
        return [t]
    shapes, strides = flat(shape), flat(stride)
    rank = len(offset) if isinstance(offset, tuple) else 0
    def step(coordinate, mode_stride):
        if isinstance(mode_stride, tuple):
            _, value, mode = mode_stride
            assert len(mode) == 1, mode_stride
            vector = [0] * rank
            vector[mode[0]] = value * coordinate
            return vector
        return [mode_stride * coordinate] if rank == 0 else None
    total = 1
    for s in shapes:
        total *= s
    out = []
    for index in range(total):
        position = list(offset) if rank else [offset]
        rest = index
        for s, d in zip(shapes, strides):
            coordinate, rest = rest % s, rest // s
            if isinstance(d, int) and rank:
                assert d == 0 or coordinate == 0, "integer stride on a coordinate tensor"
                continue
            position = [p + q for p, q in zip(position, step(coordinate, d))]
        out.append(tuple(position) if rank else position[0])
    return out
