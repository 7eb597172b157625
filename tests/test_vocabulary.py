"""Every name before its use: each CuTeDSL name a chapter's code calls or reads is said in the course's prose
at or before that code cell, and the reference notebook (90_reference) lists every one with what it is.

What counts as a use. scripts/vocabulary.py reads each chapter source, solutions/NN_topic.py (jupytext percent
format), as its markdown and code cells in order, and collects from every code cell, with `ast`:
  - each attribute chain rooted at a CuTeDSL module, the chapter's import aliases resolved (`cute.arch.
    sync_threads`; `warpgroup.fence` after `from cutlass.cute.nvgpu import warpgroup`; cutekit's mirror of
    the algebra, `from cutekit import cute`, counts as `cute`), and each name imported from one (`from_dlpack`);
  - each method or property of a CuTeDSL object named in `vocabulary.METHODS` (`.load`, `.partition_S`, ...);
  - the code between BEGIN and END SOLUTION too: a learner must know a name to write it;
  - the kernel lines a cell prints with `kernel_lines(module, first, last)` (at that cell), and the
    @cute.kernel and @cute.jit functions of a course kernel module a cell imports (`from benchmarks.kernels
    import hopper_gemm`) and of the modules it imports (`from . import cta`), at the importing cell.
cutekit's own names (render, widgets, check, hint, cutekit.*, cutekit.cute.not_in_cutedsl) are not CuTeDSL's.

What counts as saying it. A markdown cell at or before the code cell, in the same chapter or an earlier one
(the chapters are taught in order), writes in backticks (an inline span or a fenced block):
  - the name's last component: `sync_threads`, or `cute.arch.sync_threads()`, teaches cute.arch.sync_threads;
  - its last two components for a member of a class (`OperandMajorMode.K`: a lone `K` says nothing) and for a
    name that two CuTeDSL modules of the course define (`warp.MmaF16BF16Op`, `warpgroup.MmaF16BF16Op`);
  - its last component after a dot for a name Python also uses (a builtin such as `range` or `set`, or
    `copy`, `get`, `inner`, `outer`): `cutlass.range`, `cute.copy`, `.inner`.
A failure lists chapter, line and name; fix each by adding, in the prose at or before that line, one sentence
of what the name is (run `python scripts/vocabulary.py --check` for the same list).
"""
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import vocabulary  # noqa: E402


@pytest.fixture(scope="module")
def course():
    return vocabulary.read_course()


def test_every_cutedsl_name_a_code_cell_uses_is_said_in_prose_at_or_before_it(course):
    missing = vocabulary.untaught_report(course)
    assert not missing, ("names used before any prose says what they are (add one sentence with the name in "
                         "backticks at or before the line):\n" + "\n".join(missing))


def test_every_name_the_course_uses_has_one_line_of_what_it_is(course):
    described = vocabulary.descriptions()
    used = course.first_uses()
    missing = [vocabulary.describe(use) for name, use in used.items() if name not in described]
    unused = sorted(set(described) - set(used))
    assert not missing, f"no line in {vocabulary.DESCRIPTIONS.name} for:\n" + "\n".join(missing)
    assert not unused, f"{vocabulary.DESCRIPTIONS.name} describes names no chapter uses: {unused}"
    assert all(line.strip() and "|" not in line and "\n" not in line for line in described.values())


def test_the_committed_reference_is_what_the_chapters_and_descriptions_give(course):
    stale = [str(path.relative_to(ROOT)) for path, text in vocabulary.generated(course=course).items()
             if not path.exists() or path.read_text() != text]
    assert not stale, f"{stale} differ from what the chapters give: run {vocabulary.FIX}"


def test_the_reference_lists_every_name_once_with_its_chapter(course):
    from cutekit import reference
    names = [entry.name for entry in reference.ENTRIES]
    assert sorted(names) == sorted(course.first_uses()) and len(set(names)) == len(names)
    sync = next(e for e in reference.ENTRIES if e.name == "cute.arch.sync_threads")
    assert sync.chapter == "05" and "__syncthreads" in sync.description


def test_lookup_finds_part_of_a_name_then_words_of_the_descriptions_and_refuses_what_is_not_text():
    from cutekit import reference
    assert {e.name for e in reference.lookup("partition_S")} == {".partition_S"}
    assert "cute.nvgpu.cpasync.tma_partition" in {e.name for e in reference.lookup("partition")}
    by_word = reference.lookup("setmaxnreg")             # no name contains it; two descriptions do
    assert {e.name for e in by_word} == {"cute.arch.setmaxregister_decrease", "cute.arch.setmaxregister_increase"}
    assert "cute.arch.setmaxregister_decrease" in repr(by_word) and "chapter 08" in repr(by_word)
    assert "no CuTeDSL name of the course contains 'zzz'" in repr(reference.lookup("zzz"))
    for bad in ("", "  ", None, 3):
        with pytest.raises(ValueError, match="lookup takes part of a name"):
            reference.lookup(bad)


def test_every_name_the_course_uses_exists_in_cutedsl_4_8_1(course):
    """Ask real CuTeDSL, in a subprocess (this process's `cutlass` may be the simulator)."""
    names = sorted(name for name in course.first_uses() if not name.startswith("."))
    probe = textwrap.dedent("""
        import sys
        try:
            import cutlass, cutlass.cute as cute
            import cutlass.experimental.primitives  # a submodule `import cutlass` does not load
        except ImportError:
            sys.exit(3)
        for name in sys.argv[1:]:
            parts = name.split(".")
            value = cutlass if parts[0] == "cutlass" else cute
            for part in parts[1:]:
                value = getattr(value, part, None)
            if value is None:
                print(name)
    """)
    done = subprocess.run([sys.executable, "-c", probe, *names], capture_output=True, text=True, timeout=120)
    if done.returncode == 3:
        pytest.skip("CuTeDSL is not installed here")
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == [], "not in CuTeDSL 4.8.1: " + done.stdout


# ---- the rules, on small chapters ------------------------------------------------------------------------------

def chapter_file(root, name, cells):
    """Write solutions/NAME.py from (kind, text) cells, in jupytext's percent format."""
    parts = []
    for kind, text in cells:
        text = textwrap.dedent(text).strip("\n")
        if kind == "markdown":
            parts.append("# %% [markdown]\n" + "\n".join(("# " + line).rstrip() for line in text.splitlines()))
        else:
            parts.append("# %%\n" + text)
    (root / "solutions").mkdir(exist_ok=True)
    (root / "solutions" / f"{name}.py").write_text("\n\n".join(parts) + "\n")


def untaught(root):
    return [(use.chapter, use.name) for use in vocabulary.read_course(root).untaught]


def uses(root):
    return {use.name for use in vocabulary.read_course(root).uses}


def test_aliases_and_imported_names_resolve_to_cutedsl_names(tmp_path):
    chapter_file(tmp_path, "01_a", [("code", """
        import cutlass.cute as dsl
        from cutlass.cute.nvgpu import warpgroup as wg
        from cutlass.cute.runtime import from_dlpack
        from cutekit import cute, render
        from cutekit.cute import not_in_cutedsl
        dsl.arch.sync_threads()
        wg.fence()
        x = from_dlpack(t)
        cute.make_layout(4)
        render.layout(cute.make_layout(4))
        not_in_cutedsl.tidfrg_S(a, b)
        """)])
    assert uses(tmp_path) == {"cute.arch.sync_threads", "cute.nvgpu.warpgroup.fence", "cute.runtime.from_dlpack",
                              "cute.make_layout"}


def test_methods_of_cutedsl_objects_are_tracked_and_answers_count(tmp_path):
    chapter_file(tmp_path, "01_a", [("code", """
        import torch
        def f(t, copy):
            ### BEGIN SOLUTION
            t.store(t.load().reduce(op, 0, 0))
            return copy.get_slice(0).partition_S(t)
            ### END SOLUTION
        torch.zeros(3).to("cpu")
        """)])
    assert uses(tmp_path) == {".store", ".load", ".reduce", ".get_slice", ".partition_S"}


def test_prose_teaches_by_last_component_in_backticks_before_the_cell_and_in_later_chapters(tmp_path):
    chapter_file(tmp_path, "01_a", [
        ("markdown", "`cute.arch.sync_threads()` is CUDA's `__syncthreads()`; sync_threads outside backticks is no lesson"),
        ("code", "import cutlass.cute as cute\ncute.arch.sync_threads()\ncute.arch.lane_idx()"),
        ("markdown", "`lane_idx` is the lane, said one cell too late")])
    chapter_file(tmp_path, "02_b", [("code", "import cutlass.cute as cute\ncute.arch.sync_threads()\ncute.arch.lane_idx()")])
    assert untaught(tmp_path) == [("01_a", "cute.arch.lane_idx")]


def test_members_names_of_two_modules_and_python_words_need_their_qualified_spelling(tmp_path):
    calls = ("code", """
        import cutlass
        import cutlass.cute as cute
        cute.nvgpu.OperandMajorMode.K
        cute.nvgpu.warp.MmaF16BF16Op(a, b, c)
        cute.nvgpu.warpgroup.MmaF16BF16Op(a, b, c)
        cutlass.range(4)
        cute.copy(a, b, c)
        layout.inner
        """)      # one cell, before and after the prose that names its calls
    chapter_file(tmp_path, "01_a", [
        ("markdown", "`K`, `MmaF16BF16Op`, `range`, `copy` and `inner` alone are not enough"),
        calls,
        ("markdown", "`OperandMajorMode.K`, `warp.MmaF16BF16Op`, `warpgroup.MmaF16BF16Op(...)`, `cutlass.range`, "
                     "`cute.copy` and a composed layout's `.inner`"),
        calls])
    course = vocabulary.read_course(tmp_path)
    assert sorted({use.name for use in course.untaught}) == sorted(
        {"cute.nvgpu.OperandMajorMode.K", "cute.nvgpu.warp.MmaF16BF16Op", "cute.nvgpu.warpgroup.MmaF16BF16Op",
         "cutlass.range", "cute.copy", ".inner"})
    assert {use.cell for use in course.untaught} == {1}         # the first code cell; the second is taught


def test_printed_kernel_lines_and_imported_kernels_are_read_with_their_modules_imports(tmp_path):
    chapter_file(tmp_path, "01_a", [("code", """
        from cutekit.source import kernel_lines
        print(kernel_lines("benchmarks.kernels.hopper_gemm", "def consume(", "    warpgroup.wait_group(0)", through=True))
        """), ("code", "from benchmarks.kernels import sgemm_simt")])
    course = vocabulary.read_course(tmp_path)
    shown = {use.name: use for use in course.uses if not use.runs}
    fence = shown["cute.nvgpu.warpgroup.fence"]
    assert fence.line == 3 and fence.origin.startswith("benchmarks/kernels/hopper_gemm.py:")
    source_line = int(fence.origin.rsplit(":", 1)[1])
    assert "warpgroup.fence()" in (ROOT / "benchmarks/kernels/hopper_gemm.py").read_text().splitlines()[source_line - 1]
    ran = {use.name: use for use in course.uses if use.runs}
    assert "cutlass.min" in ran and ran["cutlass.min"].origin.startswith("benchmarks/kernels/cta.py:")   # via `from . import cta`
    assert "cute.nvgpu.warpgroup.fence" not in ran                     # sgemm_simt is no Hopper kernel
    message = vocabulary.describe(ran["cutlass.min"])
    assert message.startswith("solutions/01_a.py:6: cutlass.min (in benchmarks/kernels/cta.py:")


def test_a_failure_names_the_chapter_the_line_and_the_name(tmp_path):
    chapter_file(tmp_path, "03_c", [("markdown", "# A title"), ("code", "import cutlass\n\nx = cutlass.Float32(1.0)")])
    assert vocabulary.untaught_report(vocabulary.read_course(tmp_path)) == ["solutions/03_c.py:7: cutlass.Float32"]


def test_headings_say_where_a_name_is_taught_and_a_hash_comment_in_a_fenced_block_is_no_heading():
    found = vocabulary.sections("a `x`\n## 2. Two\n```\n# a comment\n```\n`y`\n### 2.1 Sub\n`z`", "title")
    assert found == [("title", "a `x`"), ("2. Two", "```\n# a comment\n```\n`y`"), ("2.1 Sub", "`z`")]


def test_the_reader_cuts_every_chapter_into_the_cells_jupytext_makes():
    import jupytext
    for chapter in vocabulary.chapters():
        path = ROOT / "solutions" / f"{chapter}.py"
        mine = [(c.kind, c.text.strip()) for c in vocabulary.read_cells(path) if c.text.strip()]
        theirs = [(c.cell_type, c.source.strip()) for c in jupytext.read(path).cells if c.source.strip()]
        assert [kind for kind, _ in mine] == [kind for kind, _ in theirs], chapter
        assert [text for kind, text in mine if kind == "markdown"] == \
            [text for kind, text in theirs if kind == "markdown"], chapter
