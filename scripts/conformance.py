"""cutekit.cute against CuTeDSL 4.8.1 traced on the CPU, on N random cases of the layout algebra (or, with
--atoms, of the TiledCopys and TiledMMAs built from the Ampere atoms; with --blackwell, of what a Blackwell
GEMM builds on the host: tcgen05 MMAs, TMEM accumulators and loads, shared-memory layouts, TMA loads, traced
for sm_100a).

    .venv/bin/python scripts/conformance.py --cases 200000 --seed 0
    .venv/bin/python scripts/conformance.py --atoms --cases 5000 --seed 0
    .venv/bin/python scripts/conformance.py --blackwell --cases 3000 --seed 0
    .venv/bin/python scripts/conformance.py --blackwell --pin     # rewrite tests/cute/pinned/blackwell_sm100a.json

Prints the disagreements grouped by function (by kind of configuration and first step that differs), one
example each, then `agree A/B, refused R/S` (R: cases both refuse, S: cases CuTeDSL refuses; for --atoms also
how many cases cutekit built with a named warning, as CuTeDSL builds them). Exit status 1 when any case
disagrees. Cases are drawn by tests/cute/conformance.py and tests/cute/atoms_conformance.py; CuTeDSL's answers
are cached under build/conformance/ (build/conformance/atoms/).
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

from tests.cute import atoms_conformance, blackwell_conformance, conformance  # noqa: E402

BLOCK = 20000
ATOMS_BLOCK = 500        # an atoms case traces every thread's partitions: about half a second each
BLACKWELL_BLOCK = 1000


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=20000, help="how many cases (default 20000)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the case generator (default 0)")
    parser.add_argument("--no-cache", action="store_true", help="ask CuTeDSL again even for cached cases")
    parser.add_argument("--atoms", action="store_true",
                        help="TiledCopys and TiledMMAs of the Ampere atoms instead of the layout algebra")
    parser.add_argument("--blackwell", action="store_true",
                        help="tcgen05 MMAs, TMEM, smem layouts and TMA loads of sm_100 (traced for sm_100a)")
    parser.add_argument("--pin", action="store_true",
                        help="with --blackwell: rewrite the pinned answers the CPU test compares without CuTeDSL")
    args = parser.parse_args(argv)
    start = time.time()
    if args.pin:
        if not args.blackwell:
            parser.error("--pin goes with --blackwell")
        path = blackwell_conformance.write_pinned(use_cache=not args.no_cache)
        print(f"wrote {path.relative_to(ROOT)} ({time.time() - start:.1f} s)")
        return 0
    suite, block = ((atoms_conformance, ATOMS_BLOCK) if args.atoms else
                    (blackwell_conformance, BLACKWELL_BLOCK) if args.blackwell else (conformance, BLOCK))
    cases = suite.make_cases(args.cases, args.seed)
    bad, totals = [], {"cases": 0, "agree": 0, "refused_cutedsl": 0, "refused_both": 0}
    if args.atoms:
        totals["warned"] = 0
    if args.blackwell:
        totals["steps"] = 0
    for first in range(0, len(cases), block):
        block_bad, counts = suite.run(cases[first:first + block], use_cache=not args.no_cache)
        bad += block_bad
        for key in totals:
            totals[key] += counts[key]
        print(f"... {totals['cases']} cases, {len(bad)} disagreements, {time.time() - start:.0f} s",
              file=sys.stderr, flush=True)
    print(suite.report(bad, totals))
    print(f"({time.time() - start:.1f} s, seed {args.seed})")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
