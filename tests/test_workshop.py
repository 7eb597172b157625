"""The workshop kit: the student bundle, the published site, the offline wheelhouse and the Binder set-up.

`make student`, `make site` and `make wheelhouse` call scripts/build_student.py, scripts/build_site.py and
scripts/wheelhouse.py; these tests call the same functions on small inputs.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import nbformat
import pytest
import yaml
from bs4 import BeautifulSoup

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

import build_site  # noqa: E402
import build_student  # noqa: E402
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
    assert sorted(p.stem for p in (bundle / "course").glob("*.ipynb")) == CHAPTERS and len(CHAPTERS) == 10  # 9 + reference
    for name in ("README.md", "Makefile", "pyproject.toml", "environment.yml", "postBuild",
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


def test_site_pages_show_executed_outputs_pictures_and_embedded_widget_state(site):
    page = (site / "00_picture.html").read_text()
    assert "data:image/png;base64," in page
    assert 'application/vnd.jupyter.widget-state+json' in page and "IntSliderModel" in page
    assert "42" in (site / "01_second.html").read_text()


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
    chapters = build_site.build(tmp_path, ROOT / "solutions", ["00"], timeout=600)
    assert [c.page for c in chapters] == ["00_start_here.html"]
    page = (tmp_path / "00_start_here.html").read_text()
    assert "data:image/png;base64," in page and "available tiers" in page and 'href="index.html"' in page


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


@pytest.mark.parametrize("arch, glibc, python, words", [
    ("armv7l", "2.28", "3.11", "no CuTeDSL wheels"),
    ("x86_64", "2.5", "3.11", "2.17 or newer"),
    ("x86_64", "musl", "3.11", "not a version"),
    ("x86_64", "2.28", "311", "not like 3.11"),
    ("x86_64", "2.28", "3.9", "Python 3.10-3.13 only"),
])
def test_wheelhouse_names_a_target_it_cannot_serve(tmp_path, arch, glibc, python, words):
    with pytest.raises(ValueError, match=words):
        wheelhouse.make_plan(tmp_path, python, arch, glibc, "torch")


def test_wheelhouse_dry_run_prints_the_pip_command_without_downloading(tmp_path, capsys):
    assert wheelhouse.main(["--dest", str(tmp_path / "w"), "--dry-run", "--python", "3.11", "--arch", "x86_64"]) == 0
    assert "pip download" in capsys.readouterr().out and not (tmp_path / "w").exists()


def test_the_course_installs_from_a_folder_of_wheels_with_the_index_switched_off(tmp_path):
    """The last step of an offline lab set-up, for real: cutekit from a wheel, pip told to use no index."""
    wheels, venv = tmp_path / "wheels", tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
                    "--wheel-dir", str(wheels), str(ROOT)], check=True, cwd=tmp_path)
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True)
    env = {**os.environ, **OFFLINE_PIP}
    subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--no-index", "--find-links",
                    str(wheels), "--no-deps", "--ignore-installed", "cute-by-hand"], check=True, env=env)
    where = subprocess.run([str(venv / "bin" / "python"), "-c", "import cutekit; print(cutekit.__file__)"],
                           capture_output=True, text=True, check=True, cwd=tmp_path).stdout
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
    named = {requirement_name(d) for d in conda} | {requirement_name(p) for p in pip if not p.startswith("-")}
    assert pyproject_requirements() <= named, pyproject_requirements() - named
    assert "-e ." in pip and any(line.startswith("nvidia-cutlass-dsl==4.8.1;") for line in pip)
    assert any(d.startswith("python=3.1") for d in conda)


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

def test_instructor_guide_covers_every_chapter_progress_collection_and_the_hub_section():
    guide = (ROOT / "INSTRUCTOR.md").read_text()
    for chapter in CHAPTERS:
        assert chapter[:2] in re.findall(r"^\|\s*(\d\d)\b", guide, flags=re.MULTILINE), chapter
    assert "python -m cutekit report" in guide and "## Workshops on JupyterHub" in guide
