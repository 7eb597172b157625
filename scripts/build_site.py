"""Build the published course: a static HTML site from the executed solution notebooks.

    python scripts/build_site.py [--out build/site] [--chapters 00 01 ...] [--source solutions]

Each notebook is executed (nbclient, through nbconvert's ExecutePreprocessor with the widget state kept)
and exported with nbconvert's `lab` template, so pictures are inline PNGs and widget state is embedded in
the page. A small template (scripts/site/) adds chapter navigation; the landing page lists the chapters
and searches their text in the browser over `search_index.js` (a plain script, so the search also works
from file://). Nothing is fetched while building: the site builds offline.
"""
from __future__ import annotations

import argparse
import html
import json
import os
import re
import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

import nbformat

sys.path.insert(0, str(Path(__file__).resolve().parent))
import generate_course  # noqa: E402  (the course's one generator)

ROOT = Path(__file__).resolve().parent.parent
TEMPLATE_DIR = ROOT / "scripts" / "site"
SITE_TITLE = "CuTe by Hand"


@dataclass(frozen=True)
class Chapter:
    """One page of the site: where its notebook is, the page's file name and the chapter's title."""
    notebook: Path
    page: str
    title: str


def chapter_title(nb: nbformat.NotebookNode, fallback: str) -> str:
    """The first Markdown heading of the notebook (`00 · Start here`), or `fallback` without one."""
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            match = re.search(r"^#+\s+(.+)$", cell.source, flags=re.MULTILINE)
            if match:
                return match.group(1).strip()
    return fallback


def load(notebook: Path) -> nbformat.NotebookNode:
    """The chapter at `notebook`, made by the course's generator from its percent-format .py twin when it has
    one (a chapter source in solutions/), so the site shows what the source says even before `make sync`."""
    twin = notebook.with_suffix(".py")
    if twin.exists():
        return nbformat.reads(generate_course.notebook_text(twin.read_text()), as_version=4)
    return nbformat.read(notebook, as_version=4)


def find_chapters(source: Path, wanted: list[str] | None = None) -> list[Chapter]:
    """The numbered notebooks (`NN_topic.ipynb`) in `source`, only those whose number is in `wanted` if given."""
    notebooks = sorted(source.glob("[0-9][0-9]_*.ipynb"))
    if wanted:
        unknown = set(wanted) - {p.name[:2] for p in notebooks}
        if unknown:
            raise SystemExit(f"build_site: no chapter {', '.join(sorted(unknown))} in {source}")
        notebooks = [p for p in notebooks if p.name[:2] in wanted]
    if not notebooks:
        raise SystemExit(f"build_site: no NN_topic.ipynb notebooks in {source}")
    return [Chapter(p, p.stem + ".html", chapter_title(load(p), p.stem)) for p in notebooks]


def execute(nb: nbformat.NotebookNode, cwd: Path, timeout: int) -> nbformat.NotebookNode:
    """Run every cell in `cwd`, keeping the widget state in the notebook's metadata; progress is not recorded."""
    from nbconvert.preprocessors import ExecutePreprocessor
    os.environ["CUTEKIT_PROGRESS"] = "off"            # the kernel inherits it: building the site is no learner
    os.environ.setdefault("CUTE_DSL_ARCH", "sm_80")
    runner = ExecutePreprocessor(timeout=timeout, store_widget_state=True)
    runner.preprocess(nb, {"metadata": {"path": str(cwd)}})
    return nb


def anchor(heading: str) -> str:
    """The id nbconvert gives a Markdown heading: its plain text, spaces turned into dashes, URL-quoted
    (nbconvert.filters.strings.add_anchor)."""
    text = re.sub(r"[*`]", "", heading).strip()
    return quote(text.replace(" ", "-"), safe="?/:@!$&'()*+,;=")


def sections(nb: nbformat.NotebookNode) -> list[dict]:
    """The notebook cut at its Markdown headings: title, anchor and the words under it (prose and code)."""
    found = [{"title": "", "anchor": "", "text": []}]
    for cell in nb.cells:
        for line in cell.source.splitlines():
            heading = re.match(r"^#{1,4}\s+(.+)$", line) if cell.cell_type == "markdown" else None
            if heading:
                title = heading.group(1).strip()
                found.append({"title": re.sub(r"[*`]", "", title), "anchor": anchor(title), "text": []})
            elif line.strip():
                found[-1]["text"].append(line.strip())
    return [{**s, "text": " ".join(s["text"])} for s in found if s["title"] or s["text"]]


def search_entries(chapter: Chapter, nb: nbformat.NotebookNode) -> list[dict]:
    return [{"chapter": chapter.title, "page": chapter.page, "title": s["title"] or chapter.title,
             "url": chapter.page + (f"#{s['anchor']}" if s["anchor"] else ""), "text": s["text"]}
            for s in sections(nb)]


def navigation(chapters: list[Chapter], index: int) -> dict:
    """The links a chapter page shows: home, previous, next and every chapter."""
    def link(other: Chapter | None) -> dict | None:
        return {"href": other.page, "title": other.title} if other else None
    return {"home": "index.html", "site_title": SITE_TITLE,
            "previous": link(chapters[index - 1] if index > 0 else None),
            "next": link(chapters[index + 1] if index + 1 < len(chapters) else None),
            "chapters": [{"href": c.page, "title": c.title, "current": i == index} for i, c in enumerate(chapters)]}


def export_page(nb: nbformat.NotebookNode, nav: dict, title: str) -> str:
    from nbconvert import HTMLExporter
    exporter = HTMLExporter(template_name="cute_site", extra_template_basedirs=[str(TEMPLATE_DIR)])
    nb.metadata["title"] = f"{title} · {SITE_TITLE}"
    body, _ = exporter.from_notebook_node(nb, resources={"site_nav": nav})
    return body


def landing_page(chapters: list[Chapter], summaries: dict[str, str]) -> str:
    """index.html: the course's purpose, the chapter list and the search box."""
    template = (TEMPLATE_DIR / "index.html").read_text()
    items = "\n".join(f'<li><a href="{html.escape(c.page)}">{html.escape(c.title)}</a>'
                      f'<p>{html.escape(summaries.get(c.page, ""))}</p></li>' for c in chapters)
    return template.replace("{{title}}", SITE_TITLE).replace("{{chapters}}", items)


def summary(nb: nbformat.NotebookNode) -> str:
    """The first sentence or two of the chapter's prose, for the landing page."""
    for s in sections(nb):
        text = re.sub(r"\*\*Why\.\*\*\s*|[*`]", "", s["text"]).strip()
        if text:
            return text if len(text) <= 240 else text[:237].rsplit(" ", 1)[0] + " ..."
    return ""


def build(out: Path, source: Path, wanted: list[str] | None, timeout: int, run: bool = True) -> list[Chapter]:
    chapters = find_chapters(source, wanted)
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    entries, summaries = [], {}
    for i, chapter in enumerate(chapters):
        started = time.monotonic()
        nb = load(chapter.notebook)
        if run:
            execute(nb, chapter.notebook.parent, timeout)
        (out / chapter.page).write_text(export_page(nb, navigation(chapters, i), chapter.title))
        entries += search_entries(chapter, nb)
        summaries[chapter.page] = summary(nb)
        print(f"site: {chapter.page} ({time.monotonic() - started:.1f} s)", flush=True)
    (out / "search_index.js").write_text("window.SEARCH_INDEX = " + json.dumps(entries) + ";\n")
    (out / "index.html").write_text(landing_page(chapters, summaries))
    for asset in ("site.css", "search.js"):
        shutil.copy2(TEMPLATE_DIR / asset, out / asset)
    return chapters


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=ROOT / "build" / "site")
    ap.add_argument("--source", type=Path, default=ROOT / "solutions", help="folder of NN_topic.ipynb notebooks")
    ap.add_argument("--chapters", nargs="*", metavar="NN", help="only these chapter numbers (default: all)")
    ap.add_argument("--timeout", type=int, default=900, help="seconds one cell may run")
    ap.add_argument("--no-execute", action="store_true", help="export the notebooks' stored outputs as they are")
    args = ap.parse_args(argv)
    chapters = build(args.out.resolve(), args.source.resolve(), args.chapters, args.timeout, run=not args.no_execute)
    print(f"site: {len(chapters)} chapters in {args.out / 'index.html'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
