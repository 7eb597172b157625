"""A performance figure in a chapter's prose is a figure of benchmarks/RESULTS.md, and a range covers its rows.

A figure is a number or a range (`0.59-0.73`, `0.991 to 1.003`) followed by TFLOP/s, GB/s, TB/s, ms or %, or by
"of torch...", "of NVIDIA's...", "times NVIDIA's"; in a paragraph about measurements (it names one of those, or
RESULTS.md), a range of plain numbers too (`466-483`). Each number must be one RESULTS.md gives, at the
precision quoted (487.6 is quoted 488; 3105 GB/s is 3.1 TB/s). A range must be one RESULTS.md states, or be
listed in CITED_ROWS with the rows of RESULTS.md's tables it summarises, every one of which it must cover.
"""
import pathlib
import re
import sys
from decimal import ROUND_HALF_UP, Decimal

import jupytext
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import generate_course  # noqa: E402

CHAPTERS = generate_course.chapters()
RESULTS = (ROOT / "benchmarks" / "RESULTS.md").read_text()

NUMBER = r"\d+(?:\.\d+)?"
FIGURE = re.compile(rf"(?<![\w.^x/-])(?P<a>{NUMBER})(?:\s*(?:-|to)\s*(?P<b>{NUMBER}))?(?![\w.^x])"
                    r"(?:\s*(?P<unit>TFLOP/s|GB/s|TB/s|ms\b|%|(?:times|x) NVIDIA|of (?:torch|NVIDIA|cuBLAS)))?")
MEASURING = re.compile(r"TFLOP/s|GB/s|TB/s|of torch|NVIDIA's|RESULTS\.md")

# Ranges that summarise rows of RESULTS.md's tables, or ranges it states, without stating the range itself:
# (chapter, range as quoted) -> [(a substring of the table's header line, {column: regex a row matches}, column),
# or a range RESULTS.md states ("0.59-0.73"), ...]
CITED_ROWS = {
    ("05_tiled_copy", "0.991 to 1.003"): [("| kernel |", {"kernel": r"^sum rows,", "shape": r"^16384x16384$"}, "ratio")],
    ("07_sgemm", "0.92-0.93"): [("| kernel |", {"kernel": r"^SGEMM"}, "ratio")],
    ("07_sgemm", "644-688"): [("| ours FAST |", {"inputs": "randn"}, "torch")],
    ("07_sgemm", "337-395"): [("| ours FAST |", {"inputs": "randn"}, "NVIDIA")],
    ("07_sgemm", "0.52-0.57"): [("| ours FAST |", {"inputs": "randn"}, "NVIDIA / torch")],
    ("07_sgemm", "416-502"): [("| ours FAST |", {"inputs": "randn"}, "ours FAST")],
    ("07_sgemm", "0.61-0.73"): [("| ours FAST |", {"inputs": "randn"}, "ours / torch")],
    ("07_sgemm", "834-848"): [("| ours FAST |", {"inputs": "integers"}, "torch")],
    ("07_sgemm", "466-483"): [("| ours FAST |", {"inputs": "integers"}, "NVIDIA")],
    ("07_sgemm", "0.55-0.58"): [("| ours FAST |", {"inputs": "integers"}, "NVIDIA / torch")],
    ("07_sgemm", "504-534"): [("| ours FAST |", {"inputs": "integers"}, "ours FAST")],
    ("07_sgemm", "0.60-0.64"): [("| ours FAST |", {"inputs": "integers"}, "ours / torch")],
    ("08_hopper_gemm", "0.981-1.023"): [("| ours / NVIDIA | ours / torch | ours 2x1", {}, "ours / NVIDIA"),
                                        ("| round | ours | ours 2x1", {}, "ours / NVIDIA")],
    ("08_hopper_gemm", "0.984-1.012"): [("| ours / NVIDIA | ours / torch | ours 2x1", {}, "ours / torch"),
                                        ("| round | ours | ours 2x1", {}, "ours / torch")],
    ("08_hopper_gemm", "564-799"): [("| ours / NVIDIA | ours / torch | ours 2x1", {}, "ours TFLOP/s"),
                                    ("| round | ours | ours 2x1", {}, "ours")],
    ("08_hopper_gemm", "0.98-1.02"): [("| ours / NVIDIA | ours / torch | ours 2x1", {}, "ours / NVIDIA"),
                                      ("| round | ours | ours 2x1", {}, "ours / NVIDIA")],
    ("08_hopper_gemm", "0.98-1.01"): [("| ours / NVIDIA | ours / torch | ours 2x1", {}, "ours / torch"),
                                      ("| round | ours | ours 2x1", {}, "ours / torch")],
    ("07_sgemm", "0.58-0.73"): ["0.59-0.73", "0.58-0.66"],       # FAST and the 2x2 teaching configuration
    ("08_hopper_gemm", "0.58-0.73"): ["0.59-0.73", "0.58-0.66"],
}
# Findings in chapters being rewritten elsewhere: expected failures until the rewrite lands (strict: delete the
# entry when it passes).
KNOWN = {}


def rounded(value: str, like: str) -> Decimal:
    """`value` rounded half up to the decimals of `like`."""
    places = len(like.split(".")[1]) if "." in like else 0
    return Decimal(value).quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP)


def results_numbers() -> list:
    """Every number RESULTS.md gives, as written (dates and shapes like 8192x8192 included; harmless)."""
    return re.findall(NUMBER, RESULTS)


def is_a_results_figure(number: str, unit: str) -> bool:
    scale = Decimal(1000) if unit == "TB/s" else Decimal(1)       # RESULTS.md writes bandwidths in GB/s
    return any(rounded(str(Decimal(given) / scale), number) == Decimal(number) for given in results_numbers())


def tables() -> list:
    """(header line, [{column: cell}]) of every table in RESULTS.md."""
    found, lines = [], RESULTS.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("|") and i + 1 < len(lines) and lines[i + 1].startswith("|---"):
            header = [c.strip() for c in line.strip("|").split("|")]
            rows = []
            for row in lines[i + 2:]:
                if not row.startswith("|"):
                    break
                rows.append(dict(zip(header, [c.strip() for c in row.strip("|").split("|")])))
            found.append((line, rows))
    return found


def cited_values(chapter: str, quoted: str) -> list:
    values = []
    for cited in CITED_ROWS[chapter, quoted]:
        if isinstance(cited, str):
            a, b = re.findall(NUMBER, cited)
            assert states_range(a, b), f"RESULTS.md does not state {cited}"
            values += [a, b]
            continue
        header, where, column = cited
        for line, rows in tables():
            if header not in line:
                continue
            for row in rows:
                if all(re.search(pattern, row.get(key, "")) for key, pattern in where.items()):
                    values += re.findall(NUMBER, row[column].split("(")[0])
    return values


def paragraph_figures(paragraph: str) -> list:
    """(quoted text, a, b or None, unit, paragraph) of each performance figure of one paragraph."""
    text = re.sub(r"\d{4}-\d\d-\d\d", " ", re.sub(r"`[^`]*`", " ", " ".join(paragraph.split())))
    if not MEASURING.search(text):
        return []
    found = []
    for match in FIGURE.finditer(text):
        a, b, unit = match.group("a"), match.group("b"), match.group("unit") or ""
        if not unit and not (b and ("." in a or len(a) >= 3)):
            continue
        quoted = match.group(0)[:len(match.group(0)) - len(unit)].strip()
        found.append((quoted, a, b, unit, text))
    return found


def figures(chapter: str) -> list:
    """The performance figures of the chapter's prose."""
    return [figure for cell in jupytext.read(ROOT / "solutions" / f"{chapter}.py").cells if cell.cell_type == "markdown"
            for paragraph in re.split(r"\n\s*\n", cell.source) for figure in paragraph_figures(paragraph)]


def states_range(a: str, b: str) -> bool:
    """RESULTS.md gives the range itself ("0.59-0.73", "1.05-1.27x")."""
    return re.search(rf"(?<![\d.]){re.escape(a)}\s*(?:-|to)\s*{re.escape(b)}(?!\d)", RESULTS) is not None


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_every_performance_figure_is_a_figure_of_results_and_a_range_covers_its_rows(chapter, request):
    if chapter in KNOWN:
        request.applymarker(pytest.mark.xfail(reason=KNOWN[chapter], strict=True))
    wrong = []
    for quoted, a, b, unit, paragraph in figures(chapter):
        where = f"`{quoted} {unit}`".replace(" `", "`") + f" in: ...{paragraph[max(0, paragraph.find(quoted) - 80):][:200]}..."
        for number in [n for n in (a, b) if n]:
            if not is_a_results_figure(number, unit):
                wrong.append(f"{number} is no figure of benchmarks/RESULTS.md: {where}")
        if b is None or states_range(a, b):
            continue
        if (chapter, quoted) not in CITED_ROWS:
            wrong.append(f"the range {quoted} is not one RESULTS.md states: list the rows it covers in CITED_ROWS: {where}")
            continue
        values = cited_values(chapter, quoted)
        outside = [v for v in values if not Decimal(a) <= rounded(v, a) <= Decimal(b)]
        if not values or outside:
            wrong.append(f"the range {quoted} does not cover its rows ({values or 'none found'}): {where}")
    assert not wrong, f"{chapter}:\n" + "\n".join(wrong)


def test_figures_are_read_with_their_units_and_ranges():
    text = "RESULTS.md: 0.991 to 1.003 of torch.sum, about 3.1 TB/s, 466-483 (0.55-0.58), 8192^3, 2026-11-23, 16 rows"
    assert [(q, u) for q, _, _, u, _ in paragraph_figures(text)] == \
        [("0.991 to 1.003", "of torch"), ("3.1", "TB/s"), ("466-483", ""), ("0.55-0.58", "")]
    assert paragraph_figures("0.5-0.6 of a tile, 466-483") == []          # not about a measurement
    assert is_a_results_figure("3.1", "TB/s") and is_a_results_figure("688", "")
    assert not is_a_results_figure("0.77", "of torch") and rounded("336.5", "337") == 337
    assert states_range("0.59", "0.73") and not states_range("0.62", "0.77")
