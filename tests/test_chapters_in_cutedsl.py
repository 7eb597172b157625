"""A code cell written with CuTeDSL's names runs in real CuTeDSL 4.8.1, with every warning an error.

The chapters build layouts with `cutekit.cute` outside any `@cute.jit` function (CuTeDSL builds them only while
it traces one), and launch kernels that a CPU cannot run. `tests/chapters/in_cutedsl.py` runs each chapter's
code cells with the real package on the CPU: it records every call the cells make to `cutekit.cute` and makes
each again in CuTeDSL inside `@cute.jit`, comparing what the two print; and it compiles every `@cute.jit`
function a cell calls (and every kernel exercise's answer) for the chapter's GPU, sm_80 (sm_90a for chapter 08,
sm_100a for chapter 09), instead of running it. One process per architecture, both at once: on the 2-core course machine (2026-11-28)
the sm_80 process took 24 s of CPU for chapters 00-07 (cutlass imported in 2 s, the cells, 37 compiles and 4,743
replayed calls), the sm_90a one 5 s for chapter 08; with other jobs on the machine, 45-140 s of wall time.

A call cutekit answers on purpose where CuTeDSL cannot (a Python bool for `elem_less`) is in INTENDED, with the
place the chapter says so. A helper CuTeDSL lacks lives under cutekit's own name (`cutekit.cute.not_in_cutedsl`,
`cutekit.render`), which the replay does not ask CuTeDSL about.
"""
import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import jupytext
import pytest

pytestmark = pytest.mark.cutedsl
pytest.importorskip("cutlass", reason="nvidia-cutlass-dsl is not installed")

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import generate_course  # noqa: E402

CHAPTERS = generate_course.chapters()
HOPPER = ("08_hopper_gemm",)                       # compiled for sm_90a; the others for sm_80
BLACKWELL = ("09_blackwell",)                      # traced for sm_100a (tcgen05 exists only there)
SELF_TEST = str(ROOT / "tests" / "chapters" / "known_differences.py")

# cutekit answers these on purpose where CuTeDSL answers only when the kernel runs; the chapters say so
INTENDED = {
    "elem_less": "cutekit's elem_less gives a Python bool at once; CuTeDSL's a run-time Boolean that prints ? "
                 "(chapter 03 section 8, chapter 04 section 6)",
}

# Findings in chapters that are being rewritten elsewhere: expected failures until the rewrite lands, strict,
# so the test says so the day one passes (then delete its entry).
KNOWN = {
    ("calls", "08_hopper_gemm"):
        "section 3.3 builds the TMA atoms and tma_partition over tensors standing on NumPy arrays (cutekit's "
        "not_in_cutedsl.tensor_over, said in the prose), which this replay does not rebuild as CuTeDSL tensors "
        "yet; and its trap cell calls sA_stages((None, None, 0)) on purpose, to show CuTeDSL's 0",
}


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    """{chapter: what tests/chapters/in_cutedsl.py wrote for it}, both architectures run at once."""
    folder = tmp_path_factory.mktemp("in_cutedsl")
    runs = {"sm_80": [c for c in CHAPTERS if c not in HOPPER + BLACKWELL] + [SELF_TEST], "sm_90a": list(HOPPER),
            "sm_100a": list(BLACKWELL)}
    started = {}
    for arch, chapters in runs.items():
        out, log = folder / f"{arch}.json", folder / f"{arch}.log"
        path = os.pathsep.join([str(ROOT)] + [p for p in [os.environ.get("PYTHONPATH")] if p])
        env = dict(os.environ, CUTE_DSL_ARCH=arch, PYTHONPATH=path, CUTEKIT_PROGRESS="off")
        with open(log, "w") as sink:
            started[arch] = (out, log, subprocess.Popen(
                [sys.executable, "-m", "tests.chapters.in_cutedsl", "--arch", arch, "--out", str(out), *chapters],
                cwd=ROOT, env=env, stdout=sink, stderr=subprocess.STDOUT))
    merged = {}
    for arch, (out, log, process) in started.items():
        process.wait(timeout=900)
        assert process.returncode == 0 and out.exists(), log.read_text()[-3000:]
        for chapter, record in json.loads(out.read_text())["chapters"].items():
            assert "crashed" not in record, f"{chapter}: the run stopped:\n{record['crashed']}"
            merged[chapter] = dict(record, arch=arch)
    return merged


def known(request, kind, chapter):
    if (kind, chapter) in KNOWN:
        request.applymarker(pytest.mark.xfail(reason=KNOWN[kind, chapter], strict=True))


def where(entry) -> str:
    return f"cell {entry['cell']}, line {entry['line']}" if entry.get("cell") is not None else "?"


def call_text(call) -> str:
    target = f"{call['object'][:80]!s}." if call["object"] else "cute."
    arguments = call["arguments"] + (f" {call['kwargs']}" if call["kwargs"] else "")
    return (f"  {where(call)}: {target}{call['name'].lstrip('.')}{arguments[:160]}\n"
            f"      cutekit: {call['cutekit'][:200]}\n      CuTeDSL: {call['cutedsl'][:200]}")


def cutedsl_only_mistakes(calls) -> list:
    """Calls that print differently, and calls CuTeDSL cannot make at all (an argument that exists only in
    cutekit, such as a tensor over a NumPy array); a call skipped only because an earlier one was is left out."""
    return [call for call in calls
            if (call["status"] == "differs" and call["name"] not in INTENDED)
            or (call["status"] == "skipped" and "made outside cutekit.cute" in call["cutedsl"]
                and "made by a call" not in call["cutedsl"])]


def outside_jit(record) -> list:
    """Statements of the cells that called a CuTeDSL function outside @cute.jit (CuTeDSL's CALL_OUTSIDE_JIT)."""
    return [f"  {where(s)}: {s['error'][:300]}" for s in record["statements"] + record["asserts"]
            if "CALL_OUTSIDE_JIT" in s["error"]]


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_every_cutekit_call_a_chapter_makes_prints_the_same_in_cutedsl(results, chapter, request):
    known(request, "calls", chapter)
    record = results[chapter]
    outside = outside_jit(record)
    assert not outside, (f"{chapter}: cells call CuTeDSL's layout functions outside @cute.jit (use cutekit's "
                         f"`cute` there, or move the code into a @cute.jit function):\n" + "\n".join(outside))
    wrong = cutedsl_only_mistakes(record["calls"])
    assert not wrong, (
        f"{chapter}: {len(wrong)} of the {len(record['calls'])} calls its cells make to cutekit.cute do not give in "
        f"CuTeDSL 4.8.1 (traced on the CPU, inside @cute.jit) what cutekit gives. Make the cell CuTeDSL's, or call "
        f"cutekit's own name and say in the prose that only cutekit runs it:\n" + "\n".join(call_text(c) for c in wrong[:25]))


def decorated(chapter) -> dict:
    """{name: names its body uses} of every @cute.jit and @cute.kernel function the chapter's cells define."""
    found = {}
    for cell in jupytext.read(ROOT / "solutions" / f"{chapter}.py").cells:
        if cell.cell_type != "code" or cell.source.startswith("%%"):
            continue
        try:
            tree = ast.parse("\n".join("" if line.startswith(("%", "!")) else line
                                       for line in cell.source.splitlines()))
        except SyntaxError:
            continue
        for node in tree.body:
            if not isinstance(node, ast.FunctionDef):
                continue
            for decorator in node.decorator_list:
                target = decorator.func if isinstance(decorator, ast.Call) else decorator
                if isinstance(target, ast.Attribute) and target.attr in ("jit", "kernel"):
                    found[node.name] = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
    return found


def failed_compiles(record) -> list:
    """Compiles that failed, but for a failure a chapter asks for on purpose (a kernel compiled through
    compile_notebook_kernel or compile_to_ptx to show CuTeDSL's error), unless that failure is a warning."""
    return [c for c in record["compiles"] if not c["ok"] and
            (c["warning"] or c["via"] not in ("compile_notebook_kernel", "compile_to_ptx"))]


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_every_kernel_a_chapter_defines_compiles_for_its_gpu_with_warnings_as_errors(results, chapter, request):
    known(request, "compiles", chapter)
    record = results[chapter]
    failed = failed_compiles(record)
    defined = decorated(chapter)
    covered = {c["function"] for c in record["compiles"] if c["ok"]} & set(defined)
    while True:         # a kernel a compiled function launches, a @cute.jit helper it calls, is compiled with it
        more = {name for name in defined if name not in covered and any(name in defined[c] for c in covered)}
        if not more:
            break
        covered |= more
    missing = sorted(set(defined) - covered)
    text = "\n".join(f"  {c['function']} ({c['via']}, {where(c)}) with {c['arguments']}:\n      {c['error'][:700]}"
                     for c in failed)
    assert not failed, f"{chapter}: CuTeDSL 4.8.1 does not compile these for {record['arch']}, warnings as errors:\n{text}"
    assert not missing, (f"{chapter}: never compiled (no cell calls them, nor a compiled function; a kernel "
                         f"exercise's answer needs its check's arguments in EXERCISE_ARGUMENTS): {missing}")


def test_the_run_catches_a_zero_slice_a_swizzle_called_the_old_allocator_and_a_call_outside_jit(results):
    """tests/chapters/known_differences.py: what the two tests above must find, found."""
    record = results[SELF_TEST]
    calls = {(c["cell"], c["line"]): c for c in record["calls"]}
    sliced = next(c for c in record["calls"] if c["name"] == ".__call__" and "None" in c["arguments"])
    assert sliced["status"] == "differs" and sliced["cutedsl"] == "0"
    assert sliced["cutekit"].startswith("raises CuteError: calling a composed layout with None")  # cutekit refuses it too
    swizzle = next(c for c in record["calls"] if c["name"] == ".__call__" and c["object"] == "S<3,4,3>")
    assert swizzle["status"] == "differs" and "no attribute '__call__'" in swizzle["cutedsl"] and swizzle["cutekit"] == "144"
    assert next(c for c in calls.values() if c["name"] == "coalesce")["status"] == "same"
    assert [c["name"] for c in cutedsl_only_mistakes(record["calls"])] == [".__call__", ".__call__"]
    compiles = {c["function"]: c for c in record["compiles"]}
    assert compiles["new_allocator"]["ok"]
    old = compiles["old_allocator"]
    assert not old["ok"] and old["warning"] and "use cutlass.memory.SmemAllocator instead" in old["error"]
    assert [c["function"] for c in failed_compiles(record)] == ["old_allocator"]
    assert len(outside_jit(record)) == 1 and "`make_layout` builds GPU kernel IR" in outside_jit(record)[0]
