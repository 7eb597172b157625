"""The conformance suite: cutekit.cute against CuTeDSL 4.8.1 traced on the CPU, on cases far wider than the
course's own layouts.

`make_cases(n, seed)` draws n cases from a seeded generator: layouts of rank up to 4 and nesting depth up to 3,
modes of size 1 and nested singletons, zero strides, compact, padded, broadcast, non-injective and overlapping
layouts, and tilers given as ints, layouts, tuples of layouts, ints, None and nested shapes. Each case calls one
layout-algebra function of `cutlass.cute`. `run(cases)` answers every case with cutekit and with CuTeDSL (one
traced process for the whole batch, answers cached under build/conformance/ by the cases' digest) and returns
the disagreements: not the same printed string, and not both refusing.
"""
from __future__ import annotations

import hashlib
import json
import os
import random
from collections import defaultdict
from pathlib import Path

from cutekit import cute

from .cutedsl_oracle import ROOT, agree, ask_encoded, encode, reference, refused, show

CACHE = Path(os.environ.get("CUTEKIT_CONFORMANCE_CACHE", ROOT / "build" / "conformance"))
LEAVES = [1, 1, 2, 2, 2, 2, 3, 4, 4, 4, 5, 6, 8, 8, 16]
STRIDES = [0, 1, 2, 3, 4, 5, 6, 8, 9, 12, 16, 24, 32, 64]


# ---- shapes, strides, layouts ----------------------------------------------------------------------------

def _leaf(rng):
    return rng.choice(LEAVES)


def draw_shape(rng, max_rank=4, max_depth=3, max_size=4096):
    """A shape of rank <= max_rank and depth <= max_depth, its size at most max_size."""
    for _ in range(20):
        shape = _shape(rng, max_rank, max_depth, top=True)
        if cute.size(shape) <= max_size:
            return shape
    return _leaf(rng)


def _shape(rng, max_rank, depth, top=False):
    if depth == 0 or rng.random() < (0.15 if top else 0.6):
        leaf = _leaf(rng)
        return (leaf,) if top and rng.random() < 0.1 else leaf   # a rank-1 tuple: (8) is not 8
    rank = rng.choice([1, 2, 2, 2, 3, 3, 4][:max(1, min(7, 2 * max_rank - 1))])
    rank = min(rank, max_rank)
    return tuple(_shape(rng, max_rank, depth - 1) for _ in range(rank))


def _like(shape, it):
    return tuple(_like(p, it) for p in shape) if isinstance(shape, tuple) else next(it)


def _leaves(shape):
    return list(cute.flatten(shape)) if isinstance(shape, tuple) else [shape]


def draw_stride(rng, shape, kind=None):
    """Strides congruent to `shape`: compact (col-major or permuted), padded, broadcast (some zeros), or random
    (overlapping and non-injective layouts included)."""
    leaves = _leaves(shape)
    kind = kind or rng.choice(["compact", "ordered", "ordered", "padded", "broadcast", "random", "random"])
    if kind == "random":
        return _like(shape, iter([rng.choice(STRIDES) for _ in leaves]))
    order = list(range(len(leaves)))
    if kind != "compact":
        rng.shuffle(order)
    strides, current = [0] * len(leaves), 1
    for i in order:
        strides[i] = current
        current *= leaves[i]
        if kind == "padded" and rng.random() < 0.4:
            current *= rng.choice([2, 3])
    if kind == "broadcast":
        strides = [0 if rng.random() < 0.35 else d for d in strides]
    if rng.random() < 0.2:   # a size-1 mode's stride means nothing; CuTe's own layouts give it 0
        strides = [0 if s == 1 else d for s, d in zip(leaves, strides)]
    return _like(shape, iter(strides))


def draw_layout(rng, max_rank=4, max_depth=3, max_size=4096, kind=None):
    shape = draw_shape(rng, max_rank, max_depth, max_size)
    if kind is None and rng.random() < 0.1:
        return cute.make_layout(shape)
    return cute.make_layout(shape, stride=draw_stride(rng, shape, kind))


def _divisor_or_not(rng, n):
    divisors = [d for d in range(1, n + 1) if n % d == 0]
    return rng.choice(divisors) if rng.random() < 0.8 else rng.randint(1, max(1, 2 * n))


def draw_tile(rng, target_mode):
    """One entry of a tiler for a mode of the target: an int, a layout, None, or a nested tuple."""
    n = cute.size(target_mode)
    r = rng.random()
    if r < 0.35:
        return _divisor_or_not(rng, n)
    if r < 0.7:
        return _small_tile_layout(rng, n)
    if r < 0.8:
        return None
    if isinstance(target_mode.shape, tuple) and rng.random() < 0.8:
        return tuple(draw_tile(rng, m) for m in list(target_mode)[:rng.randint(1, len(target_mode.shape))])
    return tuple(_divisor_or_not(rng, n) for _ in range(rng.randint(1, 2)))


def _small_tile_layout(rng, n):
    """A layout meant to tile a mode of size n: usually compact-ish and fitting, sometimes not."""
    size_cap = max(1, n) if rng.random() < 0.8 else 4 * max(1, n)
    shape = draw_shape(rng, max_rank=2, max_depth=2, max_size=size_cap)
    kind = rng.choice(["compact", "ordered", "padded", "padded", "random", "broadcast"])
    return cute.make_layout(shape, stride=draw_stride(rng, shape, kind))


def draw_tiler(rng, target, allow_tuple=True):
    modes = list(target) if isinstance(target.shape, tuple) else [target]
    r = rng.random()
    if r < 0.15:
        return _divisor_or_not(rng, cute.size(target))
    if r < 0.4 or not allow_tuple:
        return _small_tile_layout(rng, cute.size(target))
    count = rng.randint(1, len(modes)) if rng.random() < 0.95 else len(modes) + 1
    return tuple(draw_tile(rng, modes[i % len(modes)]) for i in range(count))


def _profile(rng, shape, top=True):
    if not isinstance(shape, tuple) or (not top and rng.random() < 0.6):
        return 1
    count = rng.randint(1, len(shape))
    return tuple(_profile(rng, p, False) for p in shape[:count])


def _coord(rng, shape, inside=True):
    """A coordinate of `shape`: natural (nested like the shape), an int, or flat per top mode."""
    if not isinstance(shape, tuple) or rng.random() < 0.25:
        n = cute.size(shape)
        return rng.randrange(n) if inside or rng.random() < 0.8 else n + rng.randrange(3)
    return tuple(_coord(rng, p, inside) for p in shape)


# ---- cases ------------------------------------------------------------------------------------------------

def _case_make_layout(rng):
    shape = draw_shape(rng)
    if rng.random() < 0.3:
        return "make_layout", (shape,), {}
    return "make_layout", (shape,), {"stride": draw_stride(rng, shape)}


def _case_make_ordered_layout(rng):
    shape = draw_shape(rng)
    leaves = _leaves(shape)
    order = list(range(len(leaves)))
    rng.shuffle(order)
    if rng.random() < 0.1:
        order = [rng.randrange(len(leaves)) for _ in leaves]    # ties
    if isinstance(shape, tuple) and rng.random() < 0.5 and len(leaves) == len(shape):
        return "make_ordered_layout", (shape,), {"order": tuple(order)}
    return "make_ordered_layout", (shape,), {"order": _like(shape, iter(order)) if isinstance(shape, tuple)
                                             else order[0]}


def _mode_path(rng, layout, length=None):
    path, shape = [], layout.shape
    for _ in range(length if length is not None else rng.randint(1, 2)):
        n = len(shape) if isinstance(shape, tuple) else 1
        i = rng.randrange(n + (1 if rng.random() < 0.05 else 0))
        path.append(i)
        if not isinstance(shape, tuple) or i >= n:
            break
        shape = shape[i]
    return path


def _case_query(rng):
    layout = draw_layout(rng)
    name = rng.choice(["size", "size", "rank", "depth", "cosize", "shape", ".shape", ".stride", "get",
                       "flatten", "flatten_shape"])
    if name in ("size", "rank", "cosize", "get") and rng.random() < 0.6:
        return name, (layout,), {"mode": _mode_path(rng, layout)}
    if name == "flatten_shape":
        return "flatten", (layout.shape,), {}
    if name == "get":
        return name, (layout,), {"mode": _mode_path(rng, layout)}
    return name, (layout,), {}


def _case_select(rng):
    layout = draw_layout(rng)
    n = len(layout.shape) if isinstance(layout.shape, tuple) else 1
    if rng.random() < 0.5:
        modes = [rng.randrange(n + (1 if rng.random() < 0.05 else 0)) for _ in range(rng.randint(1, 4))]
        return "select", (layout,), {"mode": modes}
    begin = rng.randrange(n + 1)
    end = rng.randint(begin, n + (1 if rng.random() < 0.1 else 0))
    if rng.random() < 0.1:
        begin, end = end, begin
    if rng.random() < 0.2:
        return "group_modes", (layout, begin), {}
    return "group_modes", (layout, begin, end), {}


def _case_coalesce(rng):
    layout = draw_layout(rng)
    name = rng.choice(["coalesce", "coalesce", "filter", "filter_zeros"])
    if name == "coalesce" and isinstance(layout.shape, tuple) and rng.random() < 0.4:
        return name, (layout,), {"target_profile": _profile(rng, layout.shape)}
    return name, (layout,), {}


def _case_composition(rng):
    a = draw_layout(rng)
    r = rng.random()
    if r < 0.5:
        b = draw_layout(rng, max_rank=3, max_size=max(2, cute.size(a)) if rng.random() < 0.8 else 256)
    elif r < 0.65:
        b = _divisor_or_not(rng, cute.size(a))
    else:
        b = draw_tiler(rng, a)
        if not isinstance(b, tuple):
            b = (b,)
    return "composition", (a, b), {}


def _case_complement(rng):
    a = draw_layout(rng, max_size=256)
    r = rng.random()
    cosize = max(1, cute.cosize(a)) if all(d >= 0 for d in _leaves(a.stride)) else 16
    if r < 0.7:
        cotarget = rng.choice([cosize, 2 * cosize, cute.size(a), rng.randint(1, 4 * cosize)])
    else:
        cotarget = draw_shape(rng, max_rank=3, max_depth=2, max_size=1024)
    return "complement", (a, cotarget), {}


def _case_inverse(rng):
    return rng.choice(["right_inverse", "left_inverse"]), (draw_layout(rng),), {}


def _case_divide(rng):
    name = rng.choice(["logical_divide", "zipped_divide", "tiled_divide", "flat_divide"])
    target = draw_layout(rng)
    return name, (target, draw_tiler(rng, target)), {}


def _case_product(rng):
    name = rng.choice(["logical_product", "zipped_product", "tiled_product", "flat_product", "blocked_product",
                       "raked_product"])
    block = draw_layout(rng, max_size=256)
    if name in ("blocked_product", "raked_product") or rng.random() < 0.5:
        tiler = draw_layout(rng, max_size=64)
    else:
        tiler = draw_tiler(rng, block)
        if isinstance(tiler, cute.Layout) and cute.size(tiler) > 64:
            tiler = _small_tile_layout(rng, 16)
    return name, (block, tiler), {}


def _case_coordinates(rng):
    layout = draw_layout(rng)
    inside = rng.random() < 0.9
    if rng.random() < 0.5:
        n = cute.size(layout)
        index = rng.randrange(n) if inside else n + rng.randrange(4)
        return "idx2crd", (index, layout.shape), {}
    return "crd2idx", (_coord(rng, layout.shape, inside), layout), {}


def _case_common(rng):
    a = draw_layout(rng)
    if rng.random() < 0.6:
        b = cute.make_layout(a.shape, stride=draw_stride(rng, a.shape))
    else:
        b = draw_layout(rng)
    return rng.choice(["max_common_layout", "max_common_vector"]), (a, b), {}


def _case_course_helpers(rng):
    """The layout helpers the course's kernels call: make_layout_tv, tile_to_shape, recast_layout."""
    r = rng.random()
    if r < 0.4:
        thr = draw_layout(rng, max_rank=2, max_depth=2, max_size=256, kind=rng.choice(["compact", "ordered"]))
        val = draw_layout(rng, max_rank=2, max_depth=2, max_size=16,
                          kind=rng.choice(["compact", "ordered", "padded", "random"]))
        return "make_layout_tv", (thr, val), {}
    if r < 0.7:
        atom = draw_layout(rng, max_rank=2, max_depth=2, max_size=64)
        modes = list(atom) if isinstance(atom.shape, tuple) else [atom]
        target = tuple(cute.size(m) * rng.choice([1, 1, 2, 3, 4]) + (rng.random() < 0.1) for m in modes)
        target += tuple(rng.choice([1, 2, 4]) for _ in range(rng.choice([0, 0, 1])))
        order = list(range(len(target)))
        rng.shuffle(order)
        return "tile_to_shape", (atom, target, tuple(order)), {}
    layout = draw_layout(rng, max_size=1024)
    return "recast_layout", (rng.choice([8, 16, 32, 64]), rng.choice([8, 16, 32, 64]), layout), {}


DRAWS = [(_case_course_helpers, 2), (_case_make_layout, 1), (_case_make_ordered_layout, 1), (_case_query, 2), (_case_select, 1),
         (_case_coalesce, 2), (_case_composition, 4), (_case_complement, 3), (_case_inverse, 2),
         (_case_divide, 4), (_case_product, 4), (_case_coordinates, 1), (_case_common, 2)]


def make_cases(n: int, seed: int) -> list:
    """n cases, the same ones for the same seed."""
    rng = random.Random(seed)
    draws = [draw for draw, weight in DRAWS for _ in range(weight)]
    return [rng.choice(draws)(rng) for _ in range(n)]


# ---- running ----------------------------------------------------------------------------------------------

def _payload(cases):
    return [[name, [encode(a) for a in args], {k: encode(v) for k, v in kw.items()}] for name, args, kw in cases]


def cutedsl_answers(cases, use_cache=True) -> list:
    """CuTeDSL's answers, from build/conformance/<digest>.json when these very cases were asked before."""
    import importlib.metadata
    payload = _payload(cases)
    version = importlib.metadata.version("nvidia-cutlass-dsl")
    return cached(CACHE, [version, payload], lambda: ask_encoded(payload), use_cache)


def cached(folder, key, ask, use_cache=True):
    """`ask()`'s JSON answer, kept in folder/<digest of key>.json and read back when the same key is asked again
    (written through a temporary file, so an interrupted run leaves no half file)."""
    path = folder / f"{hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:24]}.json"
    if use_cache and path.exists():
        return json.loads(path.read_text())
    answers = ask()
    if use_cache:
        folder.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(answers))
        tmp.replace(path)
    return answers


def describe(case) -> str:
    name, args, kwargs = case
    parts = [show(a) if not isinstance(a, list) else str(a) for a in args]
    parts += [f"{k}={show(v) if not isinstance(v, list) else v}" for k, v in kwargs.items()]
    return f"{name}({', '.join(parts)})"


def run(cases, use_cache=True):
    """(disagreements, counts): disagreements as (case, cutekit's answer, CuTeDSL's answer)."""
    theirs = cutedsl_answers(cases, use_cache)
    ours = reference(cases)
    bad = [(c, o, t) for c, o, t in zip(cases, ours, theirs) if not agree(o, t)]
    counts = {"cases": len(cases), "agree": len(cases) - len(bad),
              "refused_cutedsl": sum(refused(t) for t in theirs),
              "refused_both": sum(refused(t) and o.startswith("ERROR") for o, t in zip(ours, theirs))}
    return bad, counts


def report(bad, counts) -> str:
    """Disagreements grouped by function with one example each, then the totals."""
    groups = defaultdict(list)
    for case, ours, theirs in bad:
        groups[case[0]].append((case, ours, theirs))
    lines = []
    for name in sorted(groups, key=lambda n: -len(groups[n])):
        case, ours, theirs = groups[name][0]
        lines.append(f"{name}: {len(groups[name])} disagreement(s), e.g.\n    {describe(case)}\n"
                     f"    cutekit: {ours[:300]}\n    CuTeDSL: {theirs[:300]}")
    lines.append(f"agree {counts['agree']}/{counts['cases']}, refused {counts['refused_both']}/"
                 f"{counts['refused_cutedsl']}")
    return "\n".join(lines)
