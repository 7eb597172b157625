"""The simulator against real CuTeDSL 4.8.1 and the PTX ISA, on N generated kernels (tests/sim/differential.py):
branches and loops on thread indices, warp collectives, const_expr, dynamic and static loops.

    .venv/bin/python scripts/differential.py --cases 2000 --seed 0

CuTeDSL traces and compiles every kernel for sm_80 on the CPU (one subprocess per block of cases); the simulator
runs it; an oracle evaluates it lane by lane by the PTX ISA's rules. Prints each disagreement with its kernel,
then the counts: how many kernels CuTeDSL accepts (and of those how many the PTX ISA leaves undefined) and
refuses, how many the simulator runs and refuses. Exit status 1 when any case disagrees.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("CUTE_DSL_ARCH", "sm_80")

from tests.sim import differential  # noqa: E402

BLOCK = 250             # cases per CuTeDSL process (about 0.25 s a compile)


def positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected at least 1 case, got {value}")
    return value


def whole(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a seed of 0 or more, got {value}")
    return value


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=positive, default=200, help="how many kernels (default 200)")
    parser.add_argument("--seed", type=whole, default=0, help="seed of the generator (default 0)")
    parser.add_argument("--keep", type=Path, default=None,
                        help="a folder to keep the generated modules in (default: a temporary one)")
    args = parser.parse_args(argv)
    if args.keep is not None and args.keep.exists() and not args.keep.is_dir():
        parser.error(f"--keep: {args.keep} is a file, not a folder")
    start = time.time()
    cases = differential.make_cases(args.cases, args.seed)
    bad, totals = [], None
    for first in range(0, len(cases), BLOCK):
        folder = None if args.keep is None else args.keep / f"block{first // BLOCK}"
        block_bad, counts = differential.run(cases[first:first + BLOCK], folder)
        bad += block_bad
        totals = counts if totals is None else {key: totals[key] + counts[key] for key in totals}
        print(f"... {totals['cases']} cases, {len(bad)} disagreements, {time.time() - start:.0f} s",
              file=sys.stderr, flush=True)
    print(differential.report(bad, totals))
    print(f"({time.time() - start:.1f} s, seed {args.seed})")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
