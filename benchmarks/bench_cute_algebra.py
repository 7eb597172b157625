"""cutekit.cute's layout algebra against NVIDIA's pycute, on the operations both have.

    python benchmarks/bench_cute_algebra.py            # pycute from `pip install nvidia-cutlass --no-deps`

Each operation runs on the same random layouts in both libraries (cutekit's memo caches cleared before
each timing run, so this is the algebra itself, not a cache lookup); the ratio is pycute's time over cutekit's (above 1: cutekit is
faster). The last line times calling a 128x128 layout at every one of its 16384 coordinates.
"""
from __future__ import annotations

import argparse
import random
import sys
import time

from cutekit import cute
from cutekit.cute import layout as algebra


def random_layout(rng: random.Random):
    modes = rng.randint(1, 3)
    shape = tuple(rng.choice([2, 4, 8]) for _ in range(modes))
    stride, current = [], 1
    for extent in shape:                       # compact in a random order (complement needs injective)
        stride.append(current)
        current *= extent
    rng.shuffle(stride)
    return shape, tuple(stride)


def _time(function, inputs, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        algebra.clear_caches()
        started = time.perf_counter()
        for arguments in inputs:
            function(*arguments)
        best = min(best, time.perf_counter() - started)
    return best


def operations(pycute):
    def ours(name):
        return getattr(algebra, name).__wrapped__
    mk, pk = (lambda s, d: cute.make_layout(s, stride=d)), pycute.Layout
    return {
        "composition": (lambda a, b: ours("composition")(mk(*a), mk(*b)),
                        lambda a, b: pycute.composition(pk(*a), pk(*b))),
        "complement": (lambda a, b: ours("complement")(mk(*a), 4096),
                       lambda a, b: pycute.complement(pk(*a), 4096)),
        "logical_divide": (lambda a, b: ours("logical_divide")(mk(*a), mk(*b)),
                           lambda a, b: pycute.logical_divide(pk(*a), pk(*b))),
        "logical_product": (lambda a, b: ours("logical_product")(mk(*a), mk(*b)),
                            lambda a, b: pycute.logical_product(pk(*a), pk(*b))),
        "right_inverse": (lambda a, b: ours("right_inverse")(mk(*a)),
                          lambda a, b: pycute.right_inverse(pk(*a))),
        "coalesce": (lambda a, b: ours("coalesce")(mk(*a)),
                     lambda a, b: pycute.coalesce(pk(*a))),
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", type=int, default=300, help="random layout pairs per operation (>= 1)")
    parser.add_argument("--repeat", type=int, default=3, help="timing repeats, best kept (>= 1)")
    args = parser.parse_args(argv)
    if args.cases < 1 or args.repeat < 1:
        parser.error("--cases and --repeat must be at least 1")
    try:
        import pycute
    except ImportError:
        pycute = None
        print("pycute is not installed (it ships in NVIDIA's `nvidia-cutlass` wheel: "
              "pip install nvidia-cutlass --no-deps); timing cutekit alone")
    rng = random.Random(0)
    inputs = []
    while len(inputs) < args.cases:
        a, b = random_layout(rng), random_layout(rng)
        if cute.size(cute.make_layout(b[0], stride=b[1])) <= 64:
            inputs.append((a, b))
    if pycute is not None:
        print(f"{'operation':18} {'cutekit us':>11} {'pycute us':>10} {'pycute/cutekit':>15}")
        for name, (ours, theirs) in operations(pycute).items():
            usable = []
            for a, b in inputs:          # keep the cases both libraries accept
                try:
                    ours(a, b)
                    theirs(a, b)
                    usable.append((a, b))
                except Exception:        # noqa: BLE001 - a case one side refuses is not timed
                    pass
            mine, other = _time(ours, usable, args.repeat), _time(theirs, usable, args.repeat)
            print(f"{name:18} {1e6 * mine / len(usable):11.1f} {1e6 * other / len(usable):10.1f} "
                  f"{other / mine:15.2f}   ({len(usable)} cases)")
    layout = cute.make_layout((128, 128), stride=(1, 128))
    algebra.clear_caches()
    started = time.perf_counter()
    offsets = [layout((m, n)) for n in range(128) for m in range(128)]
    first = time.perf_counter() - started
    assert offsets == list(range(128 * 128))
    started = time.perf_counter()
    [layout((m, n)) for n in range(128) for m in range(128)]
    again = time.perf_counter() - started
    print(f"calling a 128x128 layout at all 16384 coordinates: {1e3 * first:.1f} ms (again, cached: "
          f"{1e3 * again:.1f} ms)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
