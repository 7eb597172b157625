"""How wide the suite's sweeps are: `quick` for `make test` (CI: under 7 minutes on 2 cores), `deep` for
`make test-deep`, which runs the same tests over every seed and the long conformance samples.

`CUTEKIT_SWEEP=quick` (the default) or `deep`. The quick width keeps every test and every mistake row; it
tries fewer seeds of each and smaller random samples. The case generators themselves are tested on all 100
seeds at either width (they are cheap), so a mistake that its table shows failing on the quick seeds fails
on the cases of every other seed too."""
import os

WIDTHS = ("quick", "deep")
WIDTH = os.environ.get("CUTEKIT_SWEEP", "quick").strip().lower() or "quick"
if WIDTH not in WIDTHS:
    raise SystemExit(f"CUTEKIT_SWEEP={os.environ['CUTEKIT_SWEEP']!r}: say 'quick' (make test) or 'deep' "
                     "(make test-deep)")
DEEP = WIDTH == "deep"


def pick(quick, deep):
    """`quick` under make test, `deep` under make test-deep."""
    return deep if DEEP else quick
