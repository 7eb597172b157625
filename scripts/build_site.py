"""Build the published course: a static HTML site from the executed course notebooks.

    python scripts/build_site.py [--out build/site] [--chapters 00 01 ...] [--source course]
    make site                 # the learners' site: course/, the exercises unsolved
    make site-instructor      # the instructor's: solutions/, every answer shown (build/site-instructor)

Each notebook is executed (nbclient, through nbconvert's ExecutePreprocessor with the widget state kept)
and exported with nbconvert's `lab` template, so pictures are inline PNGs. A small template (scripts/site/)
adds chapter navigation; the landing page lists the chapters and searches their text in the browser over
`search_index.js` (a plain script, so the search also works from file://).

The pages work offline and load nothing from elsewhere: the template drops the `lab` template's scripts from
CDNs (require.js, MathJax, mermaid, the jupyter-widgets HTML manager), and each widget is drawn from the state
the run left it in, as static HTML (`static_widget`): the explorer's pictures, captions and the values of its
controls, with a line saying it moves in JupyterLab. The course has no TeX math; a chapter that gains some is
refused (`math_in`) until the site carries MathJax. Nothing is fetched while building either.
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
LEDES = {
    "course": "These pages are the course notebooks, executed, with the exercises left for you: to do them, open "
              "the course in JupyterLab (<code>make lab</code>). The explorers move there; here they show one setting.",
    "solutions": "These pages are the solved notebooks, executed: every exercise's model answer is shown. They are "
                 "the instructor's; the learners' site is built from the course notebooks (<code>make site</code>).",
}
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"


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


# ---- widgets as static HTML ------------------------------------------------------------------------------

BOXES = {"VBoxModel": "column", "BoxModel": "column", "GridBoxModel": "row", "HBoxModel": "row",
         "AccordionModel": "column", "TabModel": "column", "StackModel": "column"}
CHOICES = {"DropdownModel", "RadioButtonsModel", "ToggleButtonsModel", "SelectModel", "SelectionSliderModel"}
STATIC_NOTE = ("A widget: move it in JupyterLab. Here it is as the notebook's run left it.")


def _children(state: dict) -> list[str]:
    return [child[len("IPY_MODEL_"):] for child in state.get("children", []) if isinstance(child, str)
            and child.startswith("IPY_MODEL_")]


def _output_html(output: dict) -> str:
    """One output of an Output widget (or a cell) as HTML: a picture, its HTML, or its text."""
    data = output.get("data", {})
    if "image/png" in data:
        return f'<img alt="" src="data:image/png;base64,{"".join(data["image/png"]).strip()}">'
    if "text/html" in data:
        return "".join(data["text/html"])
    text = "".join(output.get("text", "") or data.get("text/plain", ""))
    return f"<pre>{html.escape(text)}</pre>" if text else ""


def _widget_html(model_id: str, models: dict, seen: set) -> str:
    """One widget model (and its children) as HTML, from the widget state nbconvert saved in the notebook."""
    model = models.get(model_id)
    if model is None or model_id in seen:
        return ""
    seen.add(model_id)
    name, state = model.get("model_name", ""), model.get("state", {})
    label = html.escape(state.get("description", "") or "")
    if name in BOXES:
        inner = "".join(_widget_html(child, models, seen) for child in _children(state))
        return f'<div style="display:flex;flex-direction:{BOXES[name]};gap:4px;flex-wrap:wrap">{inner}</div>'
    if name == "ImageModel":
        data = next((b["data"] for b in model.get("buffers", []) if b.get("path") == ["value"]), None)
        if data is None and isinstance(state.get("value"), str):
            data = state["value"]
        if not data:
            return ""
        kind = html.escape(state.get("format", "png"))
        return f'<img alt="{label}" style="max-width:100%" src="data:image/{kind};base64,{data}">'
    if name in ("HTMLModel", "HTMLMathModel"):
        return f"<div>{(label + ' ') if label else ''}{state.get('value', '')}</div>"
    if name == "LabelModel":
        return f"<div>{html.escape(str(state.get('value', '')))}</div>"
    if name == "OutputModel":
        return "".join(_output_html(output) for output in state.get("outputs", []))
    if name == "ButtonModel":
        return f"<button disabled>{label}</button>"
    if name in CHOICES:
        labels, index = state.get("_options_labels", []), state.get("index")
        value = labels[index] if isinstance(index, int) and 0 <= index < len(labels) else ""
        return f"<div><b>{label}</b> {html.escape(str(value))}</div>"
    if "value" in state and name.endswith("Model"):           # sliders, text boxes, check boxes, numbers
        value = state["value"]
        value = " - ".join(map(str, value)) if isinstance(value, list) else value
        return f"<div><b>{label}</b> {html.escape(str(value))}</div>"
    return ""


def static_widget(model_id: str, models: dict) -> str:
    """The widget `model_id` as static HTML (its pictures, text and the values of its controls)."""
    body = _widget_html(model_id, models, set())
    return (f'<div class="static-widget"><p class="static-widget-note">{html.escape(STATIC_NOTE)}</p>'
            f"{body}</div>")


def static_widgets(nb: nbformat.NotebookNode) -> int:
    """Replace each widget output of `nb` by its static HTML, and drop the saved widget state (nothing on the
    page would read it). Returns how many widgets were drawn."""
    models = nb.metadata.get("widgets", {}).get(WIDGET_STATE, {}).get("state", {})
    drawn = 0
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            view = output.get("data", {}).get(WIDGET_VIEW)
            if view is None:
                continue
            output["data"] = {"text/html": static_widget(view.get("model_id", ""), models)}
            drawn += 1
    nb.metadata.pop("widgets", None)
    return drawn


MATH = re.compile(r"\$\$.+?\$\$|(?<![\\$\w])\$[^\s$][^$\n]*?[^\s$\\]\$(?![\w$])|\\\(|\\\[|\\begin\{", re.S)


def math_in(nb: nbformat.NotebookNode) -> list[str]:
    """The TeX math of `nb`'s Markdown (code spans and fenced code left out): what would need MathJax."""
    found = []
    for cell in nb.cells:
        if cell.cell_type != "markdown":
            continue
        prose = re.sub(r"```.*?```|`[^`\n]*`", "", cell.source, flags=re.S)
        found += [match.group(0)[:60] for match in MATH.finditer(prose)]
    return found


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


def navigation(chapters: list[Chapter], index: int, site_title: str = SITE_TITLE) -> dict:
    """The links a chapter page shows: home, previous, next and every chapter."""
    def link(other: Chapter | None) -> dict | None:
        return {"href": other.page, "title": other.title} if other else None
    return {"home": "index.html", "site_title": site_title,
            "previous": link(chapters[index - 1] if index > 0 else None),
            "next": link(chapters[index + 1] if index + 1 < len(chapters) else None),
            "chapters": [{"href": c.page, "title": c.title, "current": i == index} for i, c in enumerate(chapters)]}


def export_page(nb: nbformat.NotebookNode, nav: dict, title: str) -> str:
    """The chapter's page: nbconvert's `lab` export through scripts/site/cute_site (no script from elsewhere)."""
    from nbconvert import HTMLExporter
    exporter = HTMLExporter(template_name="cute_site", extra_template_basedirs=[str(TEMPLATE_DIR)])
    nb.metadata["title"] = f"{title} · {nav['site_title']}"
    body, _ = exporter.from_notebook_node(nb, resources={"site_nav": nav})
    return body


def landing_page(chapters: list[Chapter], summaries: dict[str, str], site_title: str = SITE_TITLE,
                 lede: str = LEDES["course"]) -> str:
    """index.html: the course's purpose, the chapter list and the search box."""
    template = (TEMPLATE_DIR / "index.html").read_text()
    items = "\n".join(f'<li><a href="{html.escape(c.page)}">{html.escape(c.title)}</a>'
                      f'<p>{html.escape(summaries.get(c.page, ""))}</p></li>' for c in chapters)
    return (template.replace("{{title}}", html.escape(site_title)).replace("{{lede}}", lede)
            .replace("{{chapters}}", items))


def summary(nb: nbformat.NotebookNode) -> str:
    """The first sentence or two of the chapter's prose, for the landing page."""
    for s in sections(nb):
        text = re.sub(r"\*\*Why\.\*\*\s*|[*`]", "", s["text"]).strip()
        if text:
            return text if len(text) <= 240 else text[:237].rsplit(" ", 1)[0] + " ..."
    return ""


def build(out: Path, source: Path, wanted: list[str] | None, timeout: int, run: bool = True,
          title: str = SITE_TITLE) -> list[Chapter]:
    """The site of the notebooks in `source` (those numbered in `wanted`, or all) in `out`, emptied first."""
    chapters = find_chapters(source, wanted)
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    entries, summaries = [], {}
    for i, chapter in enumerate(chapters):
        started = time.monotonic()
        nb = load(chapter.notebook)
        math = math_in(nb)
        if math:
            raise SystemExit(f"build_site: {chapter.notebook.name} has TeX math ({math[0]!r}, ...), and the site "
                             f"carries no MathJax (its pages load nothing from elsewhere): write it as code or "
                             f"text, or add MathJax to scripts/site/")
        if run:
            execute(nb, chapter.notebook.parent, timeout)
        static_widgets(nb)
        (out / chapter.page).write_text(export_page(nb, navigation(chapters, i, title), chapter.title))
        entries += search_entries(chapter, nb)
        summaries[chapter.page] = summary(nb)
        print(f"site: {chapter.page} ({time.monotonic() - started:.1f} s)", flush=True)
    (out / "search_index.js").write_text("window.SEARCH_INDEX = " + json.dumps(entries) + ";\n")
    lede = LEDES["solutions" if source.name == "solutions" else "course"]
    (out / "index.html").write_text(landing_page(chapters, summaries, title, lede))
    for asset in ("site.css", "search.js"):
        shutil.copy2(TEMPLATE_DIR / asset, out / asset)
    return chapters


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=ROOT / "build" / "site")
    ap.add_argument("--source", type=Path, default=ROOT / "course",
                    help="folder of NN_topic.ipynb notebooks: course (learners, the default) or solutions (instructors)")
    ap.add_argument("--title", help="the site's title (default: CuTe by Hand; from solutions/, with 'solutions')")
    ap.add_argument("--chapters", nargs="*", metavar="NN", help="only these chapter numbers (default: all)")
    ap.add_argument("--timeout", type=int, default=900, help="seconds one cell may run")
    ap.add_argument("--no-execute", action="store_true", help="export the notebooks' stored outputs as they are")
    args = ap.parse_args(argv)
    title = args.title or (f"{SITE_TITLE} · solutions" if args.source.resolve().name == "solutions" else SITE_TITLE)
    chapters = build(args.out.resolve(), args.source.resolve(), args.chapters, args.timeout, run=not args.no_execute,
                     title=title)
    print(f"site: {len(chapters)} chapters in {args.out / 'index.html'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
