"""The workshop kit: the student bundle, the student branch, what the hub pulls, the published site, the
offline wheelhouse and the Binder set-up.

`make student`, `make student-branch`, `make site` and `make wheelhouse` call scripts/build_student.py,
scripts/student_branch.py, scripts/build_site.py and scripts/wheelhouse.py; these tests call the same functions
on small inputs. Every route by which the course reaches learners (the bundle, the student branch, the hub's
pull into a home, the learners' site) is built and scanned for the model answers (`build_student.leaks`).
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import nbformat
import pytest
import yaml
from bs4 import BeautifulSoup

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

import answer_exposure  # noqa: E402
import build_site  # noqa: E402
import build_student  # noqa: E402
import student_branch  # noqa: E402
import wheelhouse  # noqa: E402

try:
    import tomllib
except ImportError:
    from pip._vendor import tomli as tomllib

CHAPTERS = build_student.chapters()
OFFLINE_PIP = {"PIP_CONFIG_FILE": os.devnull, "PIP_NO_INDEX": "1", "PIP_FIND_LINKS": "",
               "PIP_DISABLE_PIP_VERSION_CHECK": "1"}


def requirement_name(line: str) -> str:
    """`nvidia-cutlass-dsl==4.8.1` -> `nvidia-cutlass-dsl`, normalised as pip does (PEP 503)."""
    return re.sub(r"[-_.]+", "-", re.split(r"[<>=!~; \[]", line.strip(), maxsplit=1)[0]).lower()


def pyproject_requirements() -> set[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return {requirement_name(r) for r in project["dependencies"] + project["optional-dependencies"]["dev"]}


# ---- make student -----------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def bundle(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("student")
    built = build_student.write_bundle(out)
    build_student.zip_bundle(built)
    return built


def test_student_bundle_holds_every_course_notebook_the_kit_environment_files_and_a_readme(bundle):
    assert sorted(p.stem for p in (bundle / "course").glob("*.ipynb")) == CHAPTERS and len(CHAPTERS) == 11  # 10 + reference
    for name in ("README.md", "Makefile", "pyproject.toml", "environment.yml", "postBuild", ".gitignore",
                 "scripts/setup_env.py", "cutekit/__init__.py", "cutekit/checks/ch07_sgemm.py"):
        assert (bundle / name).is_file(), name
    assert not list(bundle.rglob("__pycache__")) and not (bundle / "tests").exists()
    assert "make lab WHEELHOUSE=" in (bundle / "README.md").read_text()


def test_every_module_of_this_repository_a_bundle_notebook_imports_is_in_the_bundle(bundle):
    """Chapter 07 runs the course's GEMM kernels from benchmarks/kernels, and chapters 05 and 07 time them
    with benchmarks/bench.py on a GPU: a bundle without them breaks those chapters."""
    ours = {p.name for p in ROOT.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    imported = set()
    for path in (bundle / "course").glob("*.ipynb"):
        for cell in nbformat.read(path, as_version=4).cells:
            if cell.cell_type == "code":
                imported |= set(re.findall(r"^\s*(?:from|import)\s+([A-Za-z_]\w*)(?:\.[\w.]+)?\s", cell.source, re.M))
                imported |= set(re.findall(r'"([A-Za-z_]\w*)\.[\w.]+"', cell.source)) & ours   # by module name
    needed = imported & ours
    assert {"cutekit", "benchmarks"} <= needed, needed
    for package in needed:
        for module in (ROOT / package).rglob("*.py"):
            if "__pycache__" not in module.parts and not module.name.startswith("test_"):
                assert (bundle / module.relative_to(ROOT)).is_file(), f"{module.relative_to(ROOT)} is not in the bundle"


def test_student_zip_unpacks_to_the_same_files_in_one_folder(bundle):
    with zipfile.ZipFile(bundle.with_suffix(".zip")) as archive:
        names = {n for n in archive.namelist() if not n.endswith("/")}
    on_disk = {f"{bundle.name}/{p.relative_to(bundle).as_posix()}" for p in bundle.rglob("*") if p.is_file()}
    assert names == on_disk


def test_student_notebooks_have_no_outputs_and_are_not_paired_with_py_files(bundle):
    for path in (bundle / "course").glob("*.ipynb"):
        nb = nbformat.read(path, as_version=4)
        assert all(not c.get("outputs") and c.get("execution_count") is None for c in nb.cells if c.cell_type == "code")
        assert "jupytext" not in nb.metadata
        assert nb.metadata.kernelspec.name == "cute-by-hand"


def test_no_solution_text_leaks_into_the_student_bundle(bundle):
    assert build_student.leaks(bundle) == []


@pytest.mark.parametrize("chapter", build_student.generate_course.lessons())
def test_every_chapter_has_answer_lines_for_the_leak_check_to_look_for(chapter):
    assert build_student.solution_lines(chapter)


def test_a_solution_pasted_into_a_course_notebook_is_reported_as_a_leak(bundle, tmp_path):
    answer = build_student.solution_blocks("01_layouts")[0][-1]     # the first exercise's answer, last line
    assert answer in build_student.solution_lines("01_layouts")
    copy = tmp_path / bundle.name
    build_student.write_bundle(tmp_path)
    path = copy / "course" / "01_layouts.ipynb"
    nb = nbformat.read(path, as_version=4)
    cell = next(c for c in nb.cells if "# YOUR CODE HERE" in c.source)
    cell.source = cell.source.replace("return None", answer, 1)
    nbformat.write(nb, path)
    assert any("01_layouts.ipynb" in leak and answer in leak for leak in build_student.leaks(copy))


def test_the_solutions_folder_copied_into_a_bundle_is_reported(bundle, tmp_path):
    copy = build_student.write_bundle(tmp_path)
    (copy / "solutions").mkdir()
    (copy / "solutions" / "01_layouts.py").write_text((ROOT / "solutions" / "01_layouts.py").read_text())
    assert any("solutions file" in leak for leak in build_student.leaks(copy))


def test_the_instructors_guide_in_a_bundle_is_reported(bundle, tmp_path):
    copy = tmp_path / bundle.name
    shutil.copytree(bundle, copy)
    (copy / "INSTRUCTOR.md").write_text((ROOT / "INSTRUCTOR.md").read_text())
    assert any("INSTRUCTOR.md: the instructor's guide" in leak for leak in build_student.leaks(copy))


# ---- the graders: packed in the bundle, and the course still grades from it ----------------------------------

def test_every_grader_ships_packed_and_unpacks_to_its_source(bundle):
    graders = sorted((ROOT / "cutekit" / "checks").glob("ch[0-9][0-9]_*.py"))
    assert len(graders) == len(build_student.generate_course.lessons())      # one grader per chapter; the reference has none
    for source in graders:
        shipped = (bundle / source.relative_to(ROOT)).read_text()
        assert build_student.unpacked_source(shipped) == source.read_text(), source.name
        assert "def " not in shipped and "EXERCISES" not in shipped and len(shipped.splitlines()) < len(
            source.read_text().splitlines()), source.name
    assert build_student.unpacked_source((bundle / "cutekit" / "checks" / "grading.py").read_text()) is None


def test_no_exercise_has_its_answer_in_the_bundle_outside_the_notebooks(bundle):
    """Measured as scripts/answer_exposure.py measures it: the lines found are in the kernels the chapters run
    and read (benchmarks/kernels) and the simulator, the CuTeDSL calls every answer of that kind makes; none
    in a grader, and no exercise with half its answer lines anywhere."""
    measured = answer_exposure.exposure(bundle)
    assert len(measured) == sum(len(build_student.generate_course.answers((ROOT / "solutions" / f"{c}.py").read_text()))
                                for c in CHAPTERS)
    in_graders = [(item.exercise, line) for item in measured for line, holders in item.found.items()
                  if any(holder.startswith("cutekit/checks/") for holder in holders)]
    assert in_graders == []
    assert all(item.share < 0.5 for item in measured), answer_exposure.table(measured)


def test_the_measure_finds_answer_lines_in_plain_source(tmp_path):
    exercise = next(item for item in answer_exposure.exercises() if item.exercise == "ch07.swizzle")
    grader = tmp_path / "cutekit" / "checks" / "reference.py"
    grader.parent.mkdir(parents=True)
    grader.write_text("def reference(row_elements, element_bits):\n" + "".join(f"    {line}\n" for line in exercise.lines))
    found = next(item for item in answer_exposure.exposure(tmp_path) if item.exercise == "ch07.swizzle")
    assert found.share == 1 and set(found.found) == set(exercise.lines)
    assert found.found[exercise.lines[0]] == ["cutekit/checks/reference.py"]


GRADE_IN_THE_BUNDLE = """
import inspect, json, re, cutekit
import cutekit.checks.ch07_sgemm as grader
from cutekit.checks import check
import answers_ch07 as answers
# what CuTeDSL's compiler reads of a grader's own kernels (inspect.getsourcelines), and a traceback shows
lines, first = inspect.getsourcelines(grader._main_loop_program)
out = {"cutekit": cutekit.__file__, "source": [first, "".join(lines)]}
for name, answer in (("right", answers.CORRECT["ch07.swizzle"]), ("copy", answers.CORRECT["ch07.s2r_copy"])):
    result = check("ch07.swizzle" if name == "right" else "ch07.s2r_copy", answer, seed=3)
    out[name] = [result.earned, result.possible - result.waiting, list(result.tiers)]
exercise, mistake, wrong, cause = next(row for row in answers.MISTAKES if row[1] == "s_one_too_high")
result = check(exercise, wrong, seed=3)
hints = [c.hint for c in result.criteria if c.status == "failed"]
out["wrong"] = [result.passed, bool(hints) and all(re.search(cause, h) for h in hints), hints]
print("RESULT " + json.dumps(out))
"""


def test_the_course_grades_from_the_bundle_with_its_graders_packed(bundle, tmp_path):
    """Chapter 07's checks, run from the bundle alone (not this repository): the model answers earn every
    reference point (the simulator runs the packed grader's own kernel for exercise 4), a wrong swizzle gets
    the hint its mistake table names, and `inspect` reads a packed grader's kernel source, as CuTeDSL's
    compiler does. (Real CuTeDSL compiling that kernel, ch07.main_loop's cutedsl-cpu criterion, took 22 s on
    2026-11-27 and passed: too slow for this file.)"""
    shutil.copy(ROOT / "tests" / "checks" / "answers_ch07.py", tmp_path / "answers_ch07.py")
    env = {key: value for key, value in os.environ.items() if not key.startswith(("CUTEKIT_", "PYTHON"))}
    env.update(PYTHONPATH=os.pathsep.join([str(bundle), str(tmp_path)]), HOME=str(tmp_path),
               CUTEKIT_PROGRESS="off", CUTEKIT_TIERS="reference", CUTE_DSL_ARCH="sm_80")
    run = subprocess.run([sys.executable, "-c", GRADE_IN_THE_BUNDLE], cwd=bundle / "course", env=env,
                         capture_output=True, text=True, timeout=300)
    line = next((l for l in run.stdout.splitlines() if l.startswith("RESULT ")), None)
    assert line, run.stdout[-3000:] + run.stderr[-3000:]
    out = json.loads(line[len("RESULT "):])
    assert out["cutekit"].startswith(str(bundle))
    source = (ROOT / "cutekit" / "checks" / "ch07_sgemm.py").read_text().splitlines(keepends=True)
    first, text = out["source"]
    assert text.startswith("def _main_loop_program(") and text == "".join(source[first - 1:first - 1 + len(
        text.splitlines())])
    for name in ("right", "copy"):
        earned, reference_points, tiers = out[name]
        assert earned == reference_points > 0 and tiers == ["reference"], (name, out[name])
    passed, hint_names_the_cause, hints = out["wrong"]
    assert not passed and hint_names_the_cause, hints


# ---- the student branch and what the hub pulls into a home -------------------------------------------------

def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", *args],
                          capture_output=True, text=True, check=True).stdout.strip()


@pytest.fixture(scope="module")
def course_repo(tmp_path_factory, bundle) -> Path:
    """A course repository whose main holds solutions/ and INSTRUCTOR.md, with the student branch published
    from the bundle as `make student-branch` publishes it."""
    repo = tmp_path_factory.mktemp("repo")
    for name in ("solutions/01_layouts.py", "INSTRUCTOR.md", "README.md"):
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / name, repo / name)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "the course")
    before = git(repo, "rev-parse", "HEAD"), git(repo, "status", "--porcelain")
    commit, new = student_branch.commit_folder(repo, bundle, "student", "student bundle")
    assert new and git(repo, "rev-parse", "student") == commit
    assert (git(repo, "rev-parse", "HEAD"), git(repo, "status", "--porcelain")) == before      # main untouched
    assert git(repo, "symbolic-ref", "HEAD") == "refs/heads/main"
    return repo


def test_the_student_branch_is_the_bundle_and_nothing_else(course_repo, bundle, tmp_path):
    listed = set(git(course_repo, "ls-tree", "-r", "--name-only", "student").splitlines())
    assert listed == {p.relative_to(bundle).as_posix() for p in bundle.rglob("*") if p.is_file()}
    checkout = tmp_path / "checkout"
    git(course_repo, "worktree", "add", "-q", "--detach", str(checkout), "student")
    try:
        assert build_student.leaks(checkout) == []
    finally:
        git(course_repo, "worktree", "remove", "--force", str(checkout))


def test_publishing_again_adds_a_child_commit_only_when_the_bundle_changed(course_repo, bundle, tmp_path):
    first = git(course_repo, "rev-parse", "student")
    assert student_branch.commit_folder(course_repo, bundle, "student", "again") == (first, False)
    changed = tmp_path / "bundle"
    shutil.copytree(bundle, changed)
    (changed / "README.md").write_text((bundle / "README.md").read_text() + "\nA correction.\n")
    second, new = student_branch.commit_folder(course_repo, changed, "student", "a correction")
    assert new and git(course_repo, "rev-parse", f"{second}^") == first    # nbgitpuller can merge it
    git(course_repo, "update-ref", "refs/heads/student", first, second)    # as the other tests expect it


def test_publishing_to_the_branch_checked_out_here_is_refused(course_repo, bundle):
    with pytest.raises(student_branch.BranchError, match="checked out in"):
        student_branch.commit_folder(course_repo, bundle, "main", "no")
    with pytest.raises(student_branch.BranchError, match="not a valid branch name"):
        student_branch.commit_folder(course_repo, bundle, "two words", "no")


def hub_pull(monkeypatch, tmp_path, course_repo, config_out: list | None = None) -> tuple[dict, Path]:
    """The pull the hub's landing page makes (deploy/jupyterhub_config.py's default_url), done by nbgitpuller
    into a learner's home under tmp_path. Returns the pull's parameters and the course folder (and appends the
    hub's configuration to `config_out`)."""
    from nbgitpuller.pull import GitPuller
    from traitlets.config import Config
    for key, value in {"CUTEKIT_COURSE_ROOT": str(course_repo), "CUTEKIT_HUB_STATE": str(tmp_path)}.items():
        monkeypatch.setenv(key, value)
    monkeypatch.delenv("CUTEKIT_COURSE_REPO", raising=False)
    monkeypatch.delenv("CUTEKIT_COURSE_BRANCH", raising=False)
    config = Config()
    exec(compile((ROOT / "deploy" / "jupyterhub_config.py").read_text(), "jupyterhub_config.py", "exec"),
         {"get_config": lambda: config, "__file__": str(ROOT / "deploy" / "jupyterhub_config.py")})
    query = {key: values[0] for key, values in parse_qs(urlsplit(config.Spawner.default_url).query).items()}
    if config_out is not None:
        config_out.append(config)
    target = tmp_path / "home" / query["targetpath"]
    for _ in GitPuller(query["repo"], str(target), branch=query["branch"]).pull():
        pass
    return query, target


def test_what_the_hub_pulls_into_a_home_is_the_student_branch_alone(monkeypatch, tmp_path, course_repo, bundle):
    query, home = hub_pull(monkeypatch, tmp_path, course_repo)
    assert query["branch"] == "student" and query["urlpath"].endswith("/course/00_start_here.ipynb")
    assert (home / "course" / "00_start_here.ipynb").is_file() and not (home / "solutions").exists()
    assert build_student.leaks(home) == []
    # git took the student branch alone: main and its answers are not in the learner's .git either
    assert git(home, "branch", "-r").split() == ["origin/student"]
    answers_blob = git(course_repo, "rev-parse", "main:solutions/01_layouts.py")
    assert subprocess.run(["git", "-C", str(home), "cat-file", "-e", answers_blob]).returncode != 0


def test_a_learners_answer_survives_the_next_publication(monkeypatch, tmp_path, course_repo, bundle):
    query, home = hub_pull(monkeypatch, tmp_path, course_repo)
    notebook = home / "course" / "01_layouts.ipynb"
    notebook.write_text(notebook.read_text().replace("# YOUR CODE HERE", "# my answer", 1))
    first = git(course_repo, "rev-parse", "student")
    changed = tmp_path / "bundle"
    shutil.copytree(bundle, changed)
    (changed / "README.md").write_text((bundle / "README.md").read_text() + "\nA correction.\n")
    student_branch.commit_folder(course_repo, changed, "student", "a correction")
    try:
        for _ in __import__("nbgitpuller.pull").pull.GitPuller(query["repo"], str(home), branch="student").pull():
            pass
    finally:
        git(course_repo, "update-ref", "refs/heads/student", first)
    assert "A correction." in (home / "README.md").read_text()
    assert "# my answer" in notebook.read_text()


# ---- opening a notebook on the hub leaves it as pulled ---------------------------------------------------------

def learners_contents_manager(root: Path, server_args: list[str]):
    """The contents manager a learner's server saves notebooks with: jupytext's (installed with the course,
    pairing whatever a jupytext.toml asks) over Jupyter's file manager, configured by the hub's `server_args`
    (`--ContentsManager.trait=value`, as jupyterhub-singleuser receives them)."""
    from jupyter_server.services.contents.filemanager import FileContentsManager
    from jupytext.sync_contentsmanager import build_sync_jupytext_contents_manager_class
    from traitlets.config import Config
    config = Config()
    for arg in server_args:
        name, _, value = arg.removeprefix("--").partition("=")
        section, trait = name.split(".")
        config[section][trait] = value
    return build_sync_jupytext_contents_manager_class(FileContentsManager)(root_dir=str(root), config=config)


def open_and_autosave(manager, path: str):
    """What JupyterLab 4 does to a notebook a learner only opens: the kernel starts, the panel sets the
    notebook's kernelspec ({name, display_name, language} of the kernel's spec) and language_info (the kernel's
    info reply), each of which marks the notebook dirty unless equal to what it holds; autosave then saves it."""
    from ipykernel.ipkernel import IPythonKernel
    nb = manager.get(path)["content"]
    nb.metadata["kernelspec"] = {"name": "cute-by-hand", "display_name": "CuTe by Hand", "language": "python"}
    nb.metadata["language_info"] = dict(IPythonKernel.language_info)
    manager.save({"type": "notebook", "format": "json", "content": nb}, path)


def changed_in(home: Path) -> str:
    """What nbgitpuller counts as the learner's changes: `git reset --mixed`, then the files that differ, and
    the untracked ones."""
    git(home, "reset", "-q", "--mixed")
    return git(home, "status", "--porcelain", "--untracked-files=all")


def test_a_notebook_only_opened_on_the_hub_stays_as_pulled(monkeypatch, tmp_path, course_repo):
    from nbgitpuller.pull import GitPuller
    configs = []
    query, home = hub_pull(monkeypatch, tmp_path, course_repo, configs)
    args = list(configs[0].Spawner.args)
    assert "--ContentsManager.pre_save_hook=cutekit.notebook_files.pre_save" in args
    nb = nbformat.read(home / "course" / "07_sgemm.ipynb", as_version=4)
    assert nb.metadata.kernelspec == {"name": "cute-by-hand", "display_name": "CuTe by Hand", "language": "python"}
    manager = learners_contents_manager(home, args)
    for name in ("course/00_start_here.ipynb", "course/07_sgemm.ipynb"):
        open_and_autosave(manager, name)
    assert changed_in(home) == ""
    for _ in GitPuller(query["repo"], str(home), branch=query["branch"]).pull():
        pass
    assert "Automatic commit by nbgitpuller" not in git(home, "log", "--format=%s")


def test_without_the_hook_an_opened_notebook_is_changed_and_a_jupytext_toml_writes_py_twins(monkeypatch, tmp_path,
                                                                                          course_repo, bundle):
    """Why the hub sets the hook, and why the bundle has no jupytext.toml (the repository's pairs every notebook
    with a .py: on the hub each save would write one beside it, or over the course's own .py)."""
    _, home = hub_pull(monkeypatch, tmp_path, course_repo)
    open_and_autosave(learners_contents_manager(home, []), "course/07_sgemm.ipynb")
    assert changed_in(home) == "M course/07_sgemm.ipynb"
    git(home, "checkout", "--", ".")
    assert not (bundle / "jupytext.toml").exists() and not list(bundle.rglob(".jupytext*"))
    shutil.copy(ROOT / "jupytext.toml", home / "jupytext.toml")
    manager = learners_contents_manager(home, ["--ContentsManager.pre_save_hook=cutekit.notebook_files.pre_save"])
    open_and_autosave(manager, "course/07_sgemm.ipynb")
    assert (home / "course" / "07_sgemm.py").is_file()


# ---- make site ------------------------------------------------------------------------------------------

FIXTURE_SITE = ROOT / "tests" / "fixtures" / "site"


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("site")
    build_site.build(out, FIXTURE_SITE, None, timeout=120)
    return out


def test_site_has_a_landing_page_linking_every_chapter(site):
    index = (site / "index.html").read_text()
    for page in ("00_picture.html", "01_second.html"):
        assert f'href="{page}"' in index and (site / page).is_file()
    assert "00 · A picture" in index and 'id="search"' in index


def test_site_pages_show_executed_outputs_pictures_and_each_widget_as_its_run_left_it(site):
    page = (site / "00_picture.html").read_text()
    assert "data:image/png;base64," in page and "42" in (site / "01_second.html").read_text()
    widget = BeautifulSoup(page, "html.parser").select_one(".static-widget")
    assert widget is not None and "move it in JupyterLab" in widget.get_text()
    assert "thread 3" in widget.get_text(" ") and "holds 4 values" in widget.get_text()      # slider, caption
    assert widget.find("img")["src"].startswith("data:image/png;base64,iVBOR")               # the Image's PNG
    assert "widget-view+json" not in page and "widget-state+json" not in page


ELSEWHERE = re.compile(r"^\s*(https?:)?//", re.I)


def loaded_from_elsewhere(page: Path) -> list[str]:
    """What `page` would load from another host: script, stylesheet, picture or frame addresses, and CSS
    url()/@import of http(s) addresses."""
    soup = BeautifulSoup(page.read_text(), "html.parser")
    found = [f"<{tag.name} {attr}={tag[attr]}>" for tag in soup.find_all(["script", "link", "img", "iframe",
                                                                           "source", "embed", "object"])
             for attr in ("src", "href", "data") if tag.has_attr(attr) and ELSEWHERE.match(tag[attr])]
    css = " ".join(style.get_text() for style in soup.find_all("style"))
    css = re.sub(r"/\*.*?\*/", "", css, flags=re.S)
    found += re.findall(r"(?:url\(\s*['\"]?|@import\s+['\"])(?:https?:)?//[^)'\"\s]+", css)
    return found


def test_site_pages_load_nothing_from_elsewhere(site):
    """No CDN: the pages open offline, from file:// too (no require.js, MathJax or widget manager)."""
    for page in sorted(site.glob("*.html")):
        assert loaded_from_elsewhere(page) == [], page.name
    assert not re.search(r"https?://", (site / "search.js").read_text())


def test_the_check_for_addresses_elsewhere_finds_a_cdn_script(tmp_path):
    page = tmp_path / "page.html"
    page.write_text('<script src="https://cdn.jsdelivr.net/npm/@jupyter-widgets/html-manager/embed-amd.js">'
                    '</script><style>@import url("https://fonts.example/x.css");</style>')
    assert len(loaded_from_elsewhere(page)) == 2


def test_tex_math_is_found_and_the_course_has_none():
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("Offsets are $i \\cdot s$, not `$HOME`.")])
    assert build_site.math_in(nb) == ["$i \\cdot s$"]
    for folder in ("course", "solutions"):
        for chapter in CHAPTERS:
            assert build_site.math_in(nbformat.read(ROOT / folder / f"{chapter}.ipynb", as_version=4)) == [], chapter


def links(page: Path) -> dict:
    soup = BeautifulSoup(page.read_text(), "html.parser")
    return {"home": [a["href"] for a in soup.select("nav a") if a["href"] == "index.html"],
            "prev": [a["href"] for a in soup.find_all("a", rel="prev")],
            "next": [a["href"] for a in soup.find_all("a", rel="next")],
            "current": [a["href"] for a in soup.select("nav li.current a")]}


def test_site_pages_link_home_and_to_the_previous_and_next_chapter(site):
    first, second = links(site / "00_picture.html"), links(site / "01_second.html")
    assert first["home"] and first["prev"] == [] and first["next"] == ["01_second.html"]
    assert second["home"] and second["prev"] == ["00_picture.html"] and second["next"] == []
    assert second["current"] == ["01_second.html"]


def test_site_search_index_points_at_headings_that_exist_on_the_pages(site):
    text = (site / "search_index.js").read_text()
    entries = json.loads(text.removeprefix("window.SEARCH_INDEX = ").rstrip().rstrip(";"))
    assert {"A plot of local_tile", "A widget", "01 · Second page"} <= {e["title"] for e in entries}
    assert any("zipped_divide" in e["text"] for e in entries)
    for entry in entries:
        page, _, fragment = entry["url"].partition("#")
        if fragment:
            assert f'id="{fragment}"' in (site / page).read_text(), entry["url"]
    assert (site / "search.js").is_file() and '<script src="search.js">' in (site / "index.html").read_text()


def test_site_refuses_a_chapter_that_is_not_there(tmp_path):
    with pytest.raises(SystemExit, match="no chapter 42"):
        build_site.find_chapters(FIXTURE_SITE, ["42"])


def test_site_builds_from_the_real_first_chapter(tmp_path):
    chapters = build_site.build(tmp_path, ROOT / "course", ["00"], timeout=600)
    assert [c.page for c in chapters] == ["00_start_here.html"]
    page = (tmp_path / "00_start_here.html").read_text()
    assert "data:image/png;base64," in page and "available tiers" in page and 'href="index.html"' in page
    assert loaded_from_elsewhere(tmp_path / "00_start_here.html") == []
    assert build_student.leaks(tmp_path) == []


def test_make_site_is_the_learners_site_and_site_instructor_shows_the_answers(tmp_path):
    """`make site` builds from course/ (no answer on any page), `make site-instructor` from solutions/."""
    made = {target: subprocess.run(["make", "-n", target, "SITE_CHAPTERS=07"], cwd=ROOT, capture_output=True,
                                   text=True, timeout=60).stdout for target in ("site", "site-instructor")}
    assert "build_site.py --source course --out build/site --chapters 07" in made["site"]
    assert "build_site.py --source solutions --out build/site-instructor --chapters 07" in made["site-instructor"]
    assert build_site.main(["--no-execute", "--chapters", "07", "--out", str(tmp_path / "learners")]) == 0
    assert build_student.leaks(tmp_path / "learners") == []
    assert "exercises left for you" in (tmp_path / "learners" / "index.html").read_text()
    assert build_site.main(["--no-execute", "--chapters", "00", "--source", str(ROOT / "solutions"),
                            "--out", str(tmp_path / "instructors")]) == 0
    assert any("00_start_here.html: answer of 00_start_here" in leak
               for leak in build_student.leaks(tmp_path / "instructors"))
    assert "CuTe by Hand · solutions" in (tmp_path / "instructors" / "00_start_here.html").read_text()


# ---- make wheelhouse --------------------------------------------------------------------------------------

def test_wheelhouse_plan_downloads_every_course_requirement_torch_and_the_build_backend(tmp_path):
    plan = wheelhouse.make_plan(tmp_path, "3.11", "x86_64", "2.28", "torch==2.13.0")
    names = {requirement_name(r) for r in plan.requirements}
    build_backend = tomllib.loads((ROOT / "pyproject.toml").read_text())["build-system"]["requires"]
    assert pyproject_requirements() <= names
    assert {requirement_name(r) for r in build_backend} | {"wheel"} <= names
    assert "torch==2.13.0" in plan.requirements


def test_wheelhouse_plan_asks_pip_for_wheels_of_the_target_python_and_platform(tmp_path):
    command = wheelhouse.make_plan(tmp_path, "3.12", "aarch64", "2.28", "torch").pip_download("python")
    assert command[:3] == ["python", "-m", "pip"] and "download" in command and "--only-binary=:all:" in command
    assert command[command.index("--python-version") + 1] == "3.12"
    platforms = [command[i + 1] for i, arg in enumerate(command) if arg == "--platform"]
    assert platforms[0] == "manylinux_2_28_aarch64" and "manylinux_2_17_aarch64" in platforms
    assert "manylinux2014_aarch64" in platforms and not any("x86_64" in p for p in platforms)


@pytest.mark.parametrize("arch, glibc, python, system, words", [
    ("armv7l", "2.28", "3.11", "linux", "no CuTeDSL wheels"),
    ("x86_64", "2.5", "3.11", "linux", "2.17 or newer"),
    ("x86_64", "musl", "3.11", "linux", "not a version"),
    ("x86_64", "2.28", "311", "linux", "not like 3.11"),
    ("x86_64", "2.28", "3.9", "linux", "Python 3.10-3.13"),
    ("ppc64le", "", "3.11", "macos", "choose arm64 .Apple silicon. or x86_64"),
    ("AMD64", "", "3.11", "windows", "choose linux or macos .Windows labs run the Linux steps in WSL 2"),
])
def test_wheelhouse_names_a_target_it_cannot_serve(tmp_path, arch, glibc, python, system, words):
    with pytest.raises(ValueError, match=words):
        wheelhouse.make_plan(tmp_path, python, arch, glibc, "torch", system)


def test_a_mac_wheelhouse_has_no_cutedsl_pypis_torch_and_macos_tags(tmp_path, capsys):
    """Apple silicon: what the set-up installs on a Mac (no CuTeDSL, which has no macOS wheels; PyPI's torch),
    for macOS 14 and older-tagged wheels, resolved for the Mac by uv before pip downloads the pins."""
    plan = wheelhouse.make_plan(tmp_path, "3.11", "arm64", "", wheelhouse.MAC_TORCH, "macos")
    names = {requirement_name(r) for r in plan.requirements}
    assert "nvidia-cutlass-dsl" not in names and "torch" in plan.requirements
    assert pyproject_requirements() - {"nvidia-cutlass-dsl"} <= names and not any(";" in r for r in plan.requirements)
    assert plan.platforms[0] == "macosx_14_0_arm64" and "macosx_11_0_arm64" in plan.platforms
    assert not any("x86_64" in tag or "linux" in tag for tag in plan.platforms)
    command = plan.pip_download("python")
    assert command[-3:] == ["--no-deps", "-r", plan.pinned] and plan.uv_platform == "aarch64-apple-darwin"
    intel = wheelhouse.make_plan(tmp_path, "3.11", "x86_64", "", "torch", "macos")
    assert "numpy<2" in intel.requirements and "numpy<2" not in plan.requirements     # the Intel Mac's marker
    assert wheelhouse.main(["--dest", str(tmp_path / "w"), "--os", "macos", "--arch", "arm64", "--dry-run"]) == 0
    printed = capsys.readouterr().out
    assert "pip compile" in printed and "--python-platform aarch64-apple-darwin" in printed
    assert "--platform macosx_14_0_arm64" in printed and "--no-deps" in printed and not (tmp_path / "w").exists()


def test_the_course_installs_from_a_folder_of_wheels_with_the_index_switched_off(tmp_path):
    """The last step of an offline lab set-up, for real: cutekit from a wheel, pip told to use no index."""
    wheels, venv = tmp_path / "wheels", tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
                    "--wheel-dir", str(wheels), str(ROOT)], check=True, cwd=tmp_path)
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True)
    env = {**os.environ, **OFFLINE_PIP}
    subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--no-index", "--find-links",
                    str(wheels), "--no-deps", "--ignore-installed", "cute-by-hand"], check=True, env=env)
    alone = {key: value for key, value in env.items() if key != "PYTHONPATH"}    # not this checkout's cutekit
    where = subprocess.run([str(venv / "bin" / "python"), "-c", "import cutekit; print(cutekit.__file__)"],
                           capture_output=True, text=True, check=True, cwd=tmp_path, env=alone).stdout
    assert where.startswith(str(venv))


@pytest.mark.slow
@pytest.mark.skipif(not os.environ.get("CUTEKIT_WHEELHOUSE"),
                    reason="set CUTEKIT_WHEELHOUSE to a folder built by `make wheelhouse` (needs the internet "
                           "to build, several hundred MB) to check that everything resolves from it alone")
def test_a_built_wheelhouse_resolves_every_requirement_with_the_index_switched_off():
    folder = os.environ["CUTEKIT_WHEELHOUSE"]
    plan = wheelhouse.make_plan(Path(folder), f"{sys.version_info[0]}.{sys.version_info[1]}", "x86_64", "2.28",
                                wheelhouse.DEFAULT_TORCH)
    run = subprocess.run([sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed", "--no-index",
                          "--find-links", folder, *plan.requirements, "cute-by-hand"],
                         capture_output=True, text=True, env={**os.environ, **OFFLINE_PIP})
    assert run.returncode == 0, run.stderr[-2000:]


# ---- Binder / repo2docker -----------------------------------------------------------------------------------

def environment_yml() -> tuple[list[str], list[str]]:
    """environment.yml's conda packages and pip lines."""
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    conda = [d for d in env["dependencies"] if isinstance(d, str)]
    pip = [line for d in env["dependencies"] if isinstance(d, dict) for line in d.get("pip", [])]
    return conda, pip


def test_environment_yml_installs_every_dependency_of_pyproject_and_the_project_itself():
    conda, pip = environment_yml()
    named = {requirement_name(d) for d in conda} | {requirement_name(p) for p in pip if not p.startswith(("-", "."))}
    assert pyproject_requirements() <= named, pyproject_requirements() - named
    assert "." in pip and any(line.startswith("nvidia-cutlass-dsl==4.8.1;") for line in pip)
    assert any(d.startswith("python=3.1") for d in conda)


IMPORT_IN_THE_IMAGE = """
import site, sys, sysconfig
environment = sysconfig.get_paths()["purelib"]       # numpy and the rest, without this machine's .pth files
site.addsitedir(sys.argv[1])                         # the image's environment: the course's install step
sys.path.append(environment)
import cutekit, cutekit.checks.ch01_layouts
print("CUTEKIT", cutekit.__file__)
"""


def image_prefix(bundle: Path, tmp_path: Path, line: str) -> tuple[Path, Path]:
    """environment.yml's install of the course, `line`, done as repo2docker does it: the repository copied to
    the home folder /home/jovyan and pip run there, into the image's environment (a prefix here). Then the
    hub mounts the learner's home volume over /home/jovyan: the folder is emptied. (prefix's site-packages,
    the home)"""
    home, prefix = tmp_path / "home" / "jovyan", tmp_path / "srv" / "conda"
    shutil.copytree(bundle, home)
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation", "--ignore-installed", "--prefix",
                    str(prefix), *line.split()], cwd=home, check=True, env={**os.environ, **OFFLINE_PIP})
    shutil.rmtree(home)
    home.mkdir()
    return Path(prefix / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}" / "site-packages"), home


def import_cutekit(site_packages: Path, home: Path, pythonpath: str = "") -> subprocess.CompletedProcess:
    env = {key: value for key, value in os.environ.items() if not key.startswith(("CUTEKIT_", "PYTHON"))}
    env.update(HOME=str(home), CUTEKIT_PROGRESS="off", **({"PYTHONPATH": pythonpath} if pythonpath else {}))
    return subprocess.run([sys.executable, "-S", "-c", IMPORT_IN_THE_IMAGE, str(site_packages)], cwd=home, env=env,
                          capture_output=True, text=True, timeout=120)


def test_the_image_imports_cutekit_with_the_learners_home_mounted_over_the_build_folder(bundle, tmp_path):
    """The image's environment as environment.yml installs the course (a copy, not `-e .`), the home folder it
    was built in replaced by an empty volume: cutekit imports from the environment. Then the course pulled into
    ~/cute-by-hand with the Helm values' PYTHONPATH: the kernels take cutekit from the pulled copy (a grader
    fixed during the workshop arrives with the pull), the image's copy staying the fallback. (Installed with
    `-e .` instead, the import fails here with "No module named 'cutekit'": checked 2026-11-28.)"""
    _, pip = environment_yml()
    local = [line for line in pip if line.split()[-1].startswith(".")]
    assert local == ["."], "the course is installed as a copy: an editable install points into the home volume"
    site_packages, home = image_prefix(bundle, tmp_path, local[0])
    alone = import_cutekit(site_packages, home)
    assert alone.returncode == 0, alone.stderr[-2000:]
    assert alone.stdout.split()[-1].startswith(str(site_packages)), alone.stdout

    values = yaml.safe_load((ROOT / "deploy" / "helm" / "values.yaml").read_text())
    pythonpath = values["singleuser"]["extraEnv"]["PYTHONPATH"]
    assert pythonpath == f"{values['singleuser']['storage']['homeMountPath']}/cute-by-hand"
    pulled = home / "cute-by-hand"
    shutil.copytree(bundle, pulled)                       # what the postStart pull brings
    first = import_cutekit(site_packages, home, pythonpath.replace("/home/jovyan", str(home)))
    assert first.returncode == 0, first.stderr[-2000:]
    assert first.stdout.split()[-1] == str(pulled / "cutekit" / "__init__.py"), first.stdout


def test_environment_yml_takes_the_cpu_build_of_torch_that_setup_installs():
    _, pip = environment_yml()
    assert "--extra-index-url https://download.pytorch.org/whl/cpu" in pip
    assert f"torch=={wheelhouse.DEFAULT_TORCH.split('==')[1]}; sys_platform == 'linux'" in pip


def test_postbuild_registers_the_kernel_the_notebooks_ask_for():
    post_build = ROOT / "postBuild"
    assert os.access(post_build, os.X_OK)
    subprocess.run(["bash", "-n", str(post_build)], check=True)
    wanted = {nbformat.read(p, as_version=4).metadata.kernelspec.name for p in (ROOT / "course").glob("*.ipynb")}
    assert wanted == {"cute-by-hand"}
    assert re.search(r"ipykernel install .*--name cute-by-hand", post_build.read_text())


# ---- INSTRUCTOR.md ----------------------------------------------------------------------------------------

def test_the_guides_timing_sentence_is_the_sum_of_its_table():
    guide = (ROOT / "INSTRUCTOR.md").read_text()
    minutes = {number: int(workshop) for number, workshop in
               re.findall(r"^\| (\d\d) [^|]+\|[^|]+\| (\d+) min \|", guide, flags=re.MULTILINE)}
    assert sorted(minutes) == [c[:2] for c in build_student.generate_course.lessons()]
    stated = re.search(r"sums to ([\d.]+) hours of teaching for 00-07, ([\d.]+) hours with 08 and ([\d.]+) hours "
                       r"with 09", " ".join(guide.split()))
    assert stated, "the sentence that sums the workshop column"
    up_to = {last: sum(m for number, m in minutes.items() if number <= last) for last in ("07", "08", "09")}
    assert tuple(float(h) for h in stated.groups()) == (up_to["07"] / 60, up_to["08"] / 60, up_to["09"] / 60)
    assert re.search(rf"08 \({minutes['08']} minutes\)", guide)
    one_day = re.search(r"\*\*one-day\*\* workshop does 00-04 \((\d+) h (\d+) min\)", guide)
    assert one_day and int(one_day[1]) * 60 + int(one_day[2]) == sum(minutes[n] for n in ("00", "01", "02", "03", "04"))


def test_the_guide_states_the_zip_size_make_student_gives(bundle):
    stated = float(re.search(r"`\.zip` \(([\d.]+) MiB", (ROOT / "INSTRUCTOR.md").read_text())[1])
    actual = bundle.with_suffix(".zip").stat().st_size / 2**20
    assert abs(stated - actual) <= max(0.2, actual / 4), f"INSTRUCTOR.md says {stated} MiB, the zip is {actual:.2f} MiB"


def test_the_student_readme_lists_every_chapter_and_says_what_macos_and_windows_learners_do(bundle):
    readme = (bundle / "README.md").read_text()
    assert re.findall(r"^\| (\d\d) \|", readme, flags=re.MULTILINE) == [c[:2] for c in CHAPTERS]
    words = " ".join(readme.split())
    assert "no macOS wheels" in words and "reference" in words and "WSL 2" in words and "wsl --install" in words


def test_instructor_guide_covers_every_chapter_progress_collection_and_the_hub_section():
    guide = (ROOT / "INSTRUCTOR.md").read_text()
    for chapter in CHAPTERS:
        assert chapter[:2] in re.findall(r"^\|\s*(\d\d)\b", guide, flags=re.MULTILINE), chapter
    assert "python -m cutekit report" in guide and "## Workshops on JupyterHub" in guide
