"""cutekit.cute against CuTeDSL 4.8.1 traced on the CPU, on N random cases of the layout algebra (or, with
--atoms, of the TiledCopys and TiledMMAs built from the Ampere atoms).

    .venv/bin/python scripts/conformance.py --cases 200000 --seed 0
    .venv/bin/python scripts/conformance.py --atoms --cases 5000 --seed 0

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

from tests.cute import atoms_conformance, conformance  # noqa: E402

BLOCK = 20000
ATOMS_BLOCK = 500        # an atoms case traces every thread's partitions: about half a second each


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=20000, help="how many cases (default 20000)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the case generator (default 0)")
    parser.add_argument("--no-cache", action="store_true", help="ask CuTeDSL again even for cached cases")
    parser.add_argument("--atoms", action="store_true",
                        help="TiledCopys and TiledMMAs of the Ampere atoms instead of the layout algebra")
    args = parser.parse_args(argv)
    start = time.time()
    suite, block = (atoms_conformance, ATOMS_BLOCK) if args.atoms else (conformance, BLOCK)
    cases = suite.make_cases(args.cases, args.seed)
    bad, totals = [], {"cases": 0, "agree": 0, "refused_cutedsl": 0, "refused_both": 0}
    if args.atoms:
        totals["warned"] = 0
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
