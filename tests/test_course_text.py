"""What the course's text may say: every layout the prose quotes is printed or asserted by a code cell of the
same chapter; no word of the source documents the learner does not have; no exercise whose answer already
stands in an earlier cell (an exercise asks for a variation, never the worked cell again)."""
import ast
import io
import os
import pathlib
import re
import sys
import tokenize

import jupytext
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import generate_course  # noqa: E402

CHAPTERS = generate_course.chapters()
# A quoted layout: shape:stride, each side a number, `?`-form or parenthesised int-tuple.
LAYOUT = re.compile(r"^(\(|\d|\?)[\w?{}=(), ]*:(\(|\d|\?)[\w?{}=(), ]*$")
SOURCE_WORDS = re.compile(r"\bseeds?('s)?\b", re.IGNORECASE)
RANDOM_SEEDS = re.compile(r"random seed|seed ?=|seeds? [0-9]|--seed|each seed|every seed|per seed|its seed|"
                          r"the seed is (reported|shown|printed)|a seed|which seed|seed\)|seed,", re.IGNORECASE)


def cells(chapter, folder="solutions"):
    return jupytext.read(ROOT / folder / f"{chapter}.py").cells


def string_constants(source):
    """Every string literal of a code cell (the text a cell can print or assert)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:          # a cell with a shell or magic line: fall back to quoted runs
        return re.findall(r"([\"'])(.*?)\1", source)
    return [node.value for node in ast.walk(tree) if isinstance(node, ast.Constant) and isinstance(node.value, str)]


def quoted_layouts(markdown):
    return [q for q in re.findall(r"`([^`\n]+)`", markdown) if LAYOUT.match(q.strip()) and re.search(r"\d", q)]


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_every_layout_the_prose_quotes_is_printed_or_asserted_by_a_code_cell(chapter):
    chapter_cells = cells(chapter)
    literals = [s for c in chapter_cells if c.cell_type == "code" for s in string_constants(c.source)]
    missing = sorted({q for c in chapter_cells if c.cell_type == "markdown" for q in quoted_layouts(c.source)
                      if not any(q.strip() in s for s in literals)})
    assert not missing, (f"{chapter}: the prose quotes {missing} but no code cell prints or asserts them "
                         f"(put each in an assert, e.g. assert str(layout) == \"...\")")


def test_the_layout_pattern_recognises_cutedsl_printed_forms():
    for text in ["(8,12):(12,1)", "((2,3),4):((1,2),6)", "(16,128):(?{i64},1)", "1:0", "(1,1):(0,0)"]:
        assert quoted_layouts(f"see `{text}` here") == [text]
    for text in ["cute.size(layout)", "a:b", "http://x", "tv[(t, None)]"]:
        assert quoted_layouts(f"see `{text}` here") == []


@pytest.mark.parametrize("folder", ["course", "solutions"])
def test_the_course_never_speaks_of_documents_the_learner_does_not_have(folder):
    found = []
    for path in sorted((ROOT / folder).glob("[0-9][0-9]_*.py")):
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if SOURCE_WORDS.search(line) and not RANDOM_SEEDS.search(line):
                found.append(f"{path.name}:{number}: {line.strip()}")
    assert not found, "quote the claim and cite its source by title instead:\n" + "\n".join(found)


KEPT_NAMES = {"cute", "cutlass", "None", "True", "False", "range", "len", "return", "for", "in", "if", "else",
              "and", "or", "not", "def", "lambda", "tuple", "list", "int", "sum", "zip", "min", "max"}


def normalized(line):
    """A line with its local names and numbers blotted out: the same cell with names changed reads the same."""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(line.strip()).readline))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return line.strip()
    out, previous = [], ""
    for token in tokens:
        text = token.string
        if token.type == tokenize.NAME and previous != "." and text not in KEPT_NAMES:
            text = "v"
        elif token.type == tokenize.NUMBER:
            text = "0"
        if token.type not in (tokenize.NEWLINE, tokenize.NL, tokenize.ENDMARKER, tokenize.COMMENT):
            out.append(text)
        previous = token.string
    return " ".join(out)


def significant(lines):
    kept = [normalized(line) for line in lines if line.strip() and not line.strip().startswith("#")]
    # a kernel's first lines read its thread and block indices: every kernel has them, they answer nothing
    return [line for line in kept if len(line) >= 24 and not PREAMBLE.fullmatch(line)]


PREAMBLE = re.compile(r"v( , v)* = cute \. arch \. (thread_idx|block_idx|block_dim|grid_dim|lane_idx|warp_idx) \( \)")


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_no_exercise_answer_already_stands_in_an_earlier_cell(chapter):
    text = (ROOT / "solutions" / f"{chapter}.py").read_text()
    copied, answers = [], generate_course.answers(text, chapter)
    # what the learner sees: the source without any answer (an earlier exercise's answer is not shown)
    hidden = {a.line + k for a in answers for k in range(len(a.lines) + 2)}
    shown = [line if number not in hidden else "" for number, line in enumerate(text.splitlines(), 1)]
    for answer in answers:
        before = shown[:answer.line - 1]
        # the exercise's own cell (its signature, its check) does not count as an earlier cell
        cell_start = max((i for i, line in enumerate(before) if line.startswith("# %%")), default=0)
        earlier = set(significant(before[:cell_start]))
        lines = significant(answer.lines)
        shared = [line for line in lines if line in earlier]
        if lines and len(shared) >= max(1, (len(lines) + 1) // 2):
            copied.append(f"line {answer.line}: {len(shared)} of {len(lines)} lines stand in earlier cells, "
                          f"e.g. {shared[0]!r}")
    assert not copied, f"{chapter}: exercises whose answer is already shown (ask for a variation):\n" + \
        "\n".join(copied)


# ---- cross-references: "section N" and "chapter NN section N" name a numbered heading that exists ----------

SECTION_HEADING = re.compile(r"^#{2,3} (\d+)(?:\.| ·) ", re.MULTILINE)
SECTION_REFERENCE = re.compile(r"(?:chapter (\d\d)(?:'s)? )?sections? (\d+)((?:(?:, | and | or )\d+)*)", re.IGNORECASE)


def numbered_sections(chapter):
    return {int(n) for c in cells(chapter) if c.cell_type == "markdown" for n in SECTION_HEADING.findall(c.source)}


def section_references(chapter):
    """[(chapter referred to, section number, the words)] for every "section N" in the chapter's text and comments."""
    text = (ROOT / "solutions" / f"{chapter}.py").read_text()
    found = []
    for match in SECTION_REFERENCE.finditer(text):
        target = next((c for c in CHAPTERS if match.group(1) and c.startswith(match.group(1))), chapter)
        for number in [match.group(2), *re.findall(r"\d+", match.group(3))]:
            found.append((target, int(number), match.group(0)))
    return found


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_every_section_a_chapter_names_exists(chapter):
    wrong = [(words, target) for target, number, words in section_references(chapter)
             if number not in numbered_sections(target)]
    assert not wrong, f"{chapter} names sections that do not exist: {wrong}"


def test_the_section_reference_pattern_reads_lists_and_other_chapters():
    assert SECTION_REFERENCE.search("as sections 2 and 4 show").group(0) == "sections 2 and 4"
    assert SECTION_REFERENCE.search("see chapter 06 section 7").groups()[:2] == ("06", "7")
    assert numbered_sections("07_sgemm") >= {1, 2, 3, 4, 5, 6, 7}
    assert numbered_sections("03_divide") >= {1, 8}


def test_the_instructor_demo_table_names_sections_that_exist():
    rows = re.findall(r"^\| (\d\d) \| (.*?) \|", (ROOT / "INSTRUCTOR.md").read_text(), re.MULTILINE)
    assert len(rows) == len(CHAPTERS)
    for number, demo in rows:
        chapter = next(c for c in CHAPTERS if c.startswith(number))
        named = [int(n) for phrase in re.findall(r"(?:Build it up|sections?) ((?:\d+(?: \([^)]*\))?(?:, | and )?)+)", demo)
                 for n in re.findall(r"(?<![\w(])\d+(?= |$|,)", phrase)]
        assert set(named) <= numbered_sections(chapter), (number, demo, named)


# ---- cross-references: a CuTeDSL name a pointer sentence gives is in the chapter it points to ---------------

POINTER = re.compile(r"\bchapters? (\d\d)\b", re.IGNORECASE)
NAME_SPAN = re.compile(r"^((?:cute|cutlass)(?:\.\w+)+|\w+)(\(.*\))?")
# Pointers in chapters being rewritten elsewhere, expected to fail until that rewrite lands (strict: delete the
# entry when it passes).
STALE_POINTERS = {}


def cutedsl_names() -> set:
    """Names CuTeDSL and cutekit.cute share: cutekit.cute's functions and its objects' methods."""
    from cutekit import cute
    from cutekit.cute import atom, layout, tensor
    names = {n for n in dir(cute) if not n.startswith("_")}
    for cls in (layout.Layout, layout.ComposedLayout, tensor.Tensor, atom.TiledCopy, atom.TiledMma, atom.ThrCopy,
                atom.ThrMma, atom.CopyAtom, atom.MmaAtom):
        names |= {n for n in dir(cls) if not n.startswith("_")}
    return names


def sentences(markdown: str) -> list:
    """The sentences of a markdown cell (code blocks left out; a list item or a paragraph ends a sentence)."""
    markdown = re.sub(r"```.*?```", "", markdown, flags=re.DOTALL)
    found = []
    for paragraph in re.split(r"\n\s*\n|\n(?=\s*(?:[-*]|\d+\.) )", markdown):
        text = " ".join(paragraph.split())
        found += re.split(r"(?<=[.!?])\s+(?=[A-Z*\"(`])", text)
    return found


def pointed_names(sentence: str, names: set) -> list:
    """[(chapter number, the quoted text, dotted name, keywords)] for each CuTeDSL name the sentence's pointers
    ("chapter NN") vouch for. A pointer in parentheses vouches for the names inside them and for the quoted
    name just before them ("`logical_divide` (chapter 03)"); one outside parentheses for every name quoted in
    the sentence ("chapter 04 builds this mask and passes it to `cute.copy(..., pred=...)`")."""
    quoted = [(m.start(), m.end(), m.group(1)) for m in re.finditer(r"`([^`]+)`", sentence)]
    found = []
    for pointer in POINTER.finditer(sentence):
        depth, opening = 0, None
        for i in range(pointer.start() - 1, -1, -1):           # the innermost "(" around the pointer
            if any(start <= i < end for start, end, _ in quoted):
                continue
            if sentence[i] == ")":
                depth += 1
            elif sentence[i] == "(":
                if depth == 0:
                    opening = i
                    break
                depth -= 1
        if opening is None:
            spans = [text for _, _, text in quoted]
        else:
            closing = sentence.find(")", pointer.end())
            closing = len(sentence) if closing < 0 else closing
            spans = [text for start, end, text in quoted if opening < start and end <= closing + 1]
            before = [text for start, end, text in quoted if end <= opening]
            spans += before[-1:]
        for text in spans:
            match = NAME_SPAN.match(text)
            if not match or not (match.group(1).startswith(("cute.", "cutlass.")) or match.group(1) in names):
                continue
            found.append((pointer.group(1), text, match.group(1), re.findall(r"(\w+)=", match.group(2) or "")))
    return found


def code_uses(chapter: str) -> tuple:
    """(every identifier and dotted name the chapter's code uses, {dotted call name: [its keywords, ...]})."""
    used, calls = set(), {}

    def dotted(node):
        parts = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if isinstance(node, ast.Name):
            parts.append(node.id)
        return ".".join(reversed(parts))
    for cell in cells(chapter):
        if cell.cell_type != "code":
            continue
        source = "\n".join("" if line.startswith(("%", "!")) else line for line in cell.source.splitlines())
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, (ast.Attribute, ast.Name)):
                name = dotted(node)
                used |= {name, name.split(".")[-1]}
            if isinstance(node, ast.Call):
                calls.setdefault(dotted(node.func), []).append({k.arg for k in node.keywords})
    return used, calls


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_every_cutedsl_name_a_pointer_gives_is_in_the_chapter_it_points_to(chapter, request):
    if chapter in STALE_POINTERS:
        request.applymarker(pytest.mark.xfail(reason=STALE_POINTERS[chapter], strict=True))
    names, wrong = cutedsl_names(), []
    for cell in cells(chapter):
        if cell.cell_type != "markdown":
            continue
        for sentence in sentences(cell.source):
            for number, text, name, keywords in pointed_names(sentence, names):
                target = next((c for c in CHAPTERS if c.startswith(number)), None)
                if target is None or target == chapter:
                    continue
                used, calls = code_uses(target)
                if keywords:
                    ok = any(set(keywords) <= k for n, ks in calls.items() if n == name or n.endswith("." + name)
                             for k in ks)
                else:
                    ok = name in used
                if not ok:
                    wrong.append(f"`{text}` is not in {target}'s code: {sentence[:200]}")
    assert not wrong, f"{chapter} points to chapters for names they do not use:\n" + "\n".join(wrong)


def test_the_pointer_reading_scopes_parentheses_and_keywords():
    names = cutedsl_names()
    assert [p[2] for p in pointed_names("`logical_divide` (chapter 03) uses it, then `zipped_divide`.", names)] == \
        ["logical_divide"]
    assert pointed_names("chapter 04 passes it to `cute.copy(..., pred=...)`.", names) == \
        [("04", "cute.copy(..., pred=...)", "cute.copy", ["pred"])]
    assert pointed_names("`ldmatrix.x2` brings B (x4 does not fit, chapter 06), and `cute.gemm` adds.", names) == []
    assert code_uses("05_tiled_copy")[1]["cute.copy"] and {"pred"} in code_uses("05_tiled_copy")[1]["cute.copy"]


# ---- quotations: words in quotation marks attributed to a public tutorial are that tutorial's words ---------

TUTORIALS = {"Notes on CuTeDSL": "notes", "Thread Value Layouts in CuTe": "blog", "CuTe DSL Intro": None,
             "The Art of Slicing": None, "CuTe Layout Transformations for MMA and Copy": None}


def tutorial_texts() -> dict:
    """{title: its text, normalized}, from the folder of the tutorials' texts (TUTORIAL_TEXTS, or the course
    authors' shared folder beside the repository); the test skips where there is none (a learner's clone)."""
    candidates = [os.environ.get("TUTORIAL_TEXTS", "")] + [str(p / "shared" / "seeds") for p in ROOT.parents[:2]]
    folder = next((pathlib.Path(c) for c in candidates if c and pathlib.Path(c).is_dir()), None)
    if folder is None:
        pytest.skip("the tutorials' texts are not here (set TUTORIAL_TEXTS to their folder)")
    texts = {}
    for path in sorted(folder.glob("*.txt")):
        text = path.read_text()
        head = " ".join(text.split("\n")[:6])
        for title in TUTORIALS:
            if title in head:
                texts[title] = quotable(text)
    assert set(texts) == set(TUTORIALS), f"no text found for {set(TUTORIALS) - set(texts)} in {folder}"
    return texts


def quotable(text: str) -> str:
    """Text as a quotation is compared: typographic quotes straightened, markdown marks (`*_$\\) and line
    breaks dropped, runs of spaces made one."""
    text = text.translate(str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"'}))
    return " ".join(re.sub(r"[`*_$\\]", "", text).split())


def quotations(markdown: str) -> list:
    """(start, passage) of each passage between double quotes, outside code spans."""
    marks, in_code = [], False
    for i, char in enumerate(markdown):
        if char == "`":
            in_code = not in_code
        elif char == '"' and not in_code:
            marks.append(i)
    return [(start, markdown[start + 1:end]) for start, end in zip(marks[::2], marks[1::2])]


def attributed_quotations(chapter: str) -> list:
    """[(tutorial title, passage, paragraph)] for each quoted passage a paragraph attributes to a tutorial:
    the title cited in the paragraph (the nearest before the quotation), else "the notes" (Notes on CuTeDSL),
    "the blog" (Thread Value Layouts in CuTe) or "the tutorial" (the tutorial the chapter cited last)."""
    found, last = [], None
    for cell in cells(chapter):
        if cell.cell_type != "markdown":
            continue
        source = re.sub(r"(?m)^>[ \t]?", "", cell.source)          # a box ("> ...") reads as its text
        for paragraph in re.split(r"\n\s*\n|\n(?=\s*(?:[-*]|\d+\.) )", source):
            text = " ".join(paragraph.split())
            cited = sorted((m.start(), title) for title in TUTORIALS for m in re.finditer(re.escape(title), text))
            for start, passage in quotations(text):
                if any(passage.startswith(title) for title in TUTORIALS):
                    continue                                        # the citation itself
                before = [title for position, title in cited if position < start]
                nicknamed = [title for title, nickname in TUTORIALS.items()
                             if nickname and re.search(rf"\b{nickname}\b", text)]
                if before or cited:
                    title = (before or [cited[0][1]])[-1]
                elif nicknamed:
                    title = nicknamed[0]
                elif re.search(r"\btutorial", text) and last:
                    title = last
                else:
                    continue
                found.append((title, passage, text))
            if cited:
                last = cited[-1][1]
    return found


def occurs(passage: str, text: str) -> bool:
    """The passage is in the text, in order around an elision ("a ... b")."""
    position = 0
    for part in [p.strip() for p in quotable(passage).split("...") if p.strip()]:
        position = text.find(part, position)
        if position < 0:
            return False
        position += len(part)
    return True


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_every_passage_quoted_from_a_tutorial_is_its_words(chapter):
    texts = tutorial_texts()
    wrong = [f'"{passage}" is not in "{title}": {paragraph[:160]}...'
             for title, passage, paragraph in attributed_quotations(chapter) if not occurs(passage, texts[title])]
    assert not wrong, (f"{chapter} quotes words a tutorial does not say (quote them exactly, or say it in the "
                       f"course's words without quotation marks):\n" + "\n".join(wrong))


def test_quotations_are_read_outside_code_and_attributed_to_the_tutorial_named():
    assert quotations('the notes say "a `b` c" and `cutekit.use("auto")` "d"') == [(14, "a `b` c"), (50, "d")]
    quoted = attributed_quotations("02_tv_layouts")
    assert ("Notes on CuTeDSL", "the tiling size `(num_vals, num_thrs)`") in [(t, p) for t, p, _ in quoted]
    assert all(p != "auto" for _, p, _ in quoted)
    assert occurs("a ... c", "a b c") and not occurs("c ... a", "a b c")
