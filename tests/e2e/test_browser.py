"""End to end: the course notebooks in JupyterLab, as a learner meets them (make test: the first notebook and
the first notebook that makes each kind of explorer, the others run under nbval in both their forms; make
test-deep: all). One JupyterLab server on 127.0.0.1
(serving a copy of course/) and one headless Chromium (Playwright driving Debian's `chromium` through
`executable_path`) with JupyterLab open in one tab; each notebook opens in a tab of JupyterLab and runs with
"Run All Cells", KERNELS_AT_ONCE kernels at a time, while the tests move the sliders of the notebooks already run:

  - every code cell runs, and no output shows an error (a traceback, an exception's message, an explorer's
    red error line); an unsolved exercise's "not yet" is no error;
  - every slider of every explorer is moved with the keyboard down to its lowest position and up to its highest
    (make test-deep: through every position, one of more than 40 positions its first 8, then every 5th, and its
    last; make test: five positions a key press, PageDown and PageUp, one arrow step up from the lowest, as
    tests/widgets draws every position in Python), and at each one the explorer redraws (its caption or picture
    changes) with an empty error line; each slider changes the picture;
  - chapter 02's picture under JupyterLab's dark theme: the page turns dark, the figure stays light.

Screenshots go to $CUTEKIT_TEST_ARTIFACTS/e2e (default test-artifacts/e2e at the repository root): each
notebook's explorers after their sweep, and the page where a test failed. Skips in one line without playwright
or chromium (scripts/install_browser.sh installs both)."""
import io
import json
import os
import pathlib
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request

import pytest
from PIL import Image

from tests.sweep import pick

HERE = pathlib.Path(__file__).parent
ROOT = HERE.parent.parent
COURSE = ROOT / "course"
ALL_NOTEBOOKS = sorted(path.name for path in COURSE.glob("[0-9][0-9]_*.ipynb"))


def _explorers(notebook: str) -> set:
    """The kinds of explorer a notebook makes (widgets.layout_explorer, widgets.tv_explorer, ...)."""
    return set(re.findall(r"widgets\.(\w+_explorer)\(", (COURSE / notebook).with_suffix(".py").read_text(encoding="utf-8")))


def _first_of_each_explorer(notebooks) -> list:
    """The first notebook, and the first notebook that makes each kind of explorer (make test)."""
    chosen, seen = notebooks[:1], set()
    for notebook in notebooks:
        kinds = _explorers(notebook)
        if kinds - seen:
            chosen += [notebook] if notebook not in chosen else []
            seen |= kinds
    return chosen


NOTEBOOKS = pick(quick=_first_of_each_explorer(ALL_NOTEBOOKS), deep=ALL_NOTEBOOKS)
KERNELS_AT_ONCE = 3           # notebooks running at once: on 2 cores, one starts while two run
RUN_SECONDS = 300             # one notebook's Run All, on a machine busy with the others


def chromium_path():
    for candidate in (os.environ.get("CHROMIUM_PATH"), shutil.which("chromium"), shutil.which("chromium-browser")):
        if candidate and os.path.exists(candidate):
            return candidate
    return None


try:
    from playwright import sync_api as playwright_sync_api
except ImportError:
    pytest.skip("playwright not installed (scripts/install_browser.sh)", allow_module_level=True)
if chromium_path() is None:
    pytest.skip("chromium not found (scripts/install_browser.sh installs it)", allow_module_level=True)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def artifacts() -> pathlib.Path:
    folder = pathlib.Path(os.environ.get("CUTEKIT_TEST_ARTIFACTS", ROOT / "test-artifacts")) / "e2e"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture(scope="module")
def jupyterlab(tmp_path_factory):
    """A JupyterLab server on 127.0.0.1 serving a copy of the course notebooks; yields a function giving the URL
    that opens JupyterLab (in a fresh workspace) on one of them."""
    folder = tmp_path_factory.mktemp("course")
    for name in NOTEBOOKS:
        shutil.copy(COURSE / name, folder / name)
    settings = folder / "settings"
    # every cell rendered, on screen or not (JupyterLab 4 otherwise leaves cells far off screen unrendered)
    (settings / "@jupyterlab" / "notebook-extension").mkdir(parents=True)
    (settings / "@jupyterlab" / "notebook-extension" / "tracker.jupyterlab-settings").write_text(
        json.dumps({"windowingMode": "none"}))
    (settings / "@jupyterlab" / "apputils-extension").mkdir(parents=True)       # no news toast over the page
    (settings / "@jupyterlab" / "apputils-extension" / "notification.jupyterlab-settings").write_text(
        json.dumps({"fetchNews": "false"}))
    port, token = free_port(), "cutekit-e2e-" + os.urandom(8).hex()
    environment = dict(os.environ, JUPYTER_RUNTIME_DIR=str(folder / "runtime"),
                       JUPYTERLAB_WORKSPACES_DIR=str(folder / "workspaces"),
                       JUPYTERLAB_SETTINGS_DIR=str(settings),      # the theme switch stays here
                       PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    log = folder / "jupyterlab.log"
    server = subprocess.Popen(
        [sys.executable, "-m", "jupyterlab", "--no-browser", "--ip=127.0.0.1", f"--port={port}",
         f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={folder}", "--allow-root"],
        env=environment, stdout=subprocess.DEVNULL, stderr=open(log, "wb"))
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/api/status?token={token}", timeout=2)
                break
            except OSError:
                if time.monotonic() > deadline or server.poll() is not None:
                    pytest.fail("JupyterLab did not start: " + log.read_text()[-2000:])
                time.sleep(0.5)
        yield lambda name: f"http://127.0.0.1:{port}/lab/workspaces/e2e/tree/{name}?reset&token={token}"
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()


# ---- driving the notebooks --------------------------------------------------------------------------------------
# JupyterLab runs in one browser tab (starting it costs about 5 s of CPU); each notebook is a tab of its dock, and
# everything below reads one notebook's panel, found by its id (`#id`), whether it is shown or not.

PROMPTS = "panel => [...document.querySelectorAll(`#${panel} .jp-CodeCell .jp-InputPrompt`)].map(e => e.textContent)"
# every code cell with code has run (JupyterLab runs no empty cell: its prompt stays [ ])
ALL_RAN = (f"([panel, cells]) => ({PROMPTS})(panel).filter(t => /\\[\\d+\\]/.test(t)).length >= cells")
# Run All has ended: no cell waits or runs (after an error JupyterLab runs no further cell)
ENDED = f"panel => !({PROMPTS})(panel).some(t => t.includes('*'))"
STARTED = f"panel => ({PROMPTS})(panel).some(t => /\\[(\\*|\\d+)\\]/.test(t))"
IDLE = "panel => !!document.querySelector(`#${panel} .jp-Notebook-ExecutionIndicator[data-status=\"idle\"]`)"


def code_cells(name: str) -> int:
    """How many code cells of the notebook hold code."""
    cells = json.loads((COURSE / name).read_text())["cells"]
    return sum(1 for cell in cells if cell["cell_type"] == "code" and "".join(cell["source"]).strip())


def _menu(page, menu: str, item: str, tries: int = 3):
    """Menu > item. On a machine busy with a fresh JupyterLab's first start the menu may open before its items
    are drawn, or a click may land while it closes: Escape and ask again, `tries` times."""
    for attempt in range(tries):
        page.locator(".lm-MenuBar-itemLabel", has_text=menu).first.click(force=True, timeout=10_000)
        try:
            page.locator(".lm-Menu-itemLabel", has_text=item).first.click(force=True, timeout=10_000)
            return
        except Exception:
            if attempt == tries - 1:
                raise
            page.keyboard.press("Escape")
            page.wait_for_timeout(1_000)


class Runner:
    """Opens the course notebooks in one JupyterLab tab and runs them, KERNELS_AT_ONCE at a time, in the order
    the tests ask for them; `ran(name)` returns (the page, the notebook's panel id, seconds it ran) once every
    cell has run or Run All stopped at an error (seconds None: it did not end within RUN_SECONDS), with that
    notebook shown."""

    def __init__(self, browser, url_for, notebooks):
        self.page = browser.new_page(viewport={"width": 1400, "height": 1000})
        self.url_for = url_for
        # the longest first (a notebook's size says roughly how long it runs), so that the last to end is short
        self.waiting = sorted(notebooks, key=lambda name: -(COURSE / name).stat().st_size)
        self.running, self.finished = {}, {}
        self.panels, self.started = {}, {}

    def show(self, name) -> str:
        """Make the notebook's tab the current one; returns its panel's id."""
        self.page.locator(f".lm-DockPanel-tabBar .lm-TabBar-tab[data-id='{self.panels[name]}']").click(timeout=10_000)
        self.page.wait_for_selector(f"#{self.panels[name]}:not(.lm-mod-hidden)", timeout=10_000)
        return self.panels[name]

    def _open(self, name):
        page = self.page
        if not self.panels:
            page.goto(self.url_for(name), timeout=60_000)
        else:
            _menu(page, "File", "Open from Path")
            page.locator(".jp-Dialog input").first.fill(name)
            page.keyboard.press("Enter")
        label = page.locator(".lm-TabBar-tabLabel", has_text=name)
        tab = page.locator(".lm-DockPanel-tabBar .lm-TabBar-tab", has=label)
        self.panels[name] = tab.first.get_attribute("data-id", timeout=60_000)
        panel = self.show(name)
        page.wait_for_selector(f"#{panel} .jp-Notebook .jp-CodeCell", timeout=60_000)
        page.wait_for_function(IDLE, arg=panel, timeout=60_000)
        page.wait_for_timeout(1_000)       # JupyterLab may still swap the session's first kernel for another
        self._start_run_all(panel)
        self.running[name], self.started[name] = panel, time.monotonic()

    def _start_run_all(self, panel):
        """Run > Run All Cells until a code cell shows it started ([*] or [n]): a command issued while the
        kernel's connection is still being made is dropped, so it is repeated; a kernel that never answers (its
        websocket failed on a loaded machine) is restarted with Kernel > Restart Kernel and Run All Cells."""
        page = self.page
        for attempt in range(8):
            if attempt == 6:
                _menu(page, "Kernel", "Restart Kernel and Run All Cells")
                page.locator(".jp-Dialog-button.jp-mod-accept").first.click(timeout=10_000)
            else:
                _menu(page, "Run", "Run All Cells")
            try:
                page.wait_for_function(STARTED, arg=panel, timeout=8_000)
                return
            except Exception:
                page.keyboard.press("Escape")
        raise AssertionError("Run All Cells never started the notebook")

    def ran(self, name):
        if name not in self.running and name not in self.finished:     # asked for before its turn: it goes first
            if name in self.waiting:
                self.waiting.remove(name)
            self.waiting.insert(0, name)
        while name not in self.finished:
            while self.waiting and len(self.running) < KERNELS_AT_ONCE:
                self._open(self.waiting.pop(0))
            for other, panel in list(self.running.items()):
                if self.page.evaluate(ENDED, panel) and self.page.evaluate(IDLE, panel):
                    self.finished[other] = time.monotonic() - self.started[other]
                    del self.running[other]
                elif time.monotonic() - self.started[other] > RUN_SECONDS:
                    self.finished[other] = None
                    del self.running[other]
            if name not in self.finished:
                time.sleep(0.5)
        return self.page, self.show(name), self.finished[name]


@pytest.fixture(scope="module")
def runner(jupyterlab, request):
    # the notebooks the selected tests ask for, in their order (a test run with -k opens no other)
    wanted = []
    for item in request.session.items:
        name = getattr(item, "callspec", None) and item.callspec.params.get("notebook")
        name = name or ("02_tv_layouts.ipynb" if item.name.endswith("dark_theme") else None)
        if name and name not in wanted and item.module is request.module:
            wanted.append(name)
    with playwright_sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium_path(), headless=True,
                                             args=["--no-sandbox", "--disable-gpu"])
        try:
            yield Runner(browser, jupyterlab, wanted)
        finally:
            browser.close()


# ---- what the page shows --------------------------------------------------------------------------------------

# a notebook's outputs that show an error: a traceback or an exception's message written to stderr (a warning is
# no error), an explorer's red error line
ERRORS_SHOWN = """panel => {
    const found = [];
    for (const out of document.querySelectorAll(`#${panel} .jp-OutputArea-output`)) {
        const text = out.textContent;
        if (out.dataset.mimeType === 'application/vnd.jupyter.stderr'
                && /Traceback|^\\s*\\w*(Error|Exception)\\b/m.test(text)) found.push(text.slice(0, 600));
    }
    for (const span of document.querySelectorAll(`#${panel} .widget-html span[style*="c62828"]`))
        found.push('explorer: ' + span.textContent.slice(0, 600));
    return found;
}"""
EXPLORERS = "#{panel} .jp-OutputArea-output:has(.widget-slider)"
EVERY_POSITION_UP_TO = 40      # positions of a slider all visited; a longer one: its first 8, then every 5th, its last
EVERY_POSITION = pick(quick=False, deep=True)   # make test: PageDown/PageUp (5 positions), one ArrowRight at the bottom
# an explorer as the tests read it, in one call: slider `n`'s position and range, what a redraw changes (the
# caption's text and every picture's source: a new PNG is a new blob: URL), the pictures, its red error line
STATE = """([explorer, n]) => {
    const handle = explorer.querySelectorAll('.widget-slider .noUi-handle')[n];
    const number = name => Math.round(Number(handle.getAttribute(name)));
    const pictures = [...explorer.querySelectorAll('img.widget-image')].map(e => e.src).join('|');
    return {value: number('aria-valuenow'), lowest: number('aria-valuemin'), highest: number('aria-valuemax'),
            drawn: [...explorer.querySelectorAll('.widget-html')].map(e => e.textContent).join('|') + pictures,
            pictures: pictures,
            red: [...explorer.querySelectorAll('.widget-html span[style*="c62828"]')].map(e => e.textContent).join(' '),
            label: handle.closest('.widget-slider').querySelector('.widget-label').textContent.trim()};
}"""
REDRAWN = f"([explorer, n, old]) => {{ const state = ({STATE})([explorer, n]); return state.drawn !== old && state; }}"


def sweep(page, panel, explorer, number: int) -> tuple[int, list]:
    """Move slider `number` of `explorer` with the keyboard down to its minimum, then up to its maximum through
    every position (a slider of more than EVERY_POSITION_UP_TO positions: arrow keys for its first 8, then
    PageUp, 5 at a time, as the widget tests draw a long slider at its ends and between; make test: PageDown and
    PageUp, 5 at a time, one ArrowRight from the minimum), waiting at each for the explorer to redraw; returns
    (positions visited, problems)."""
    element = explorer.element_handle()
    handle = explorer.locator(".widget-slider .noUi-handle").nth(number)
    state = first = page.evaluate(STATE, [element, number])
    long = first["highest"] - first["lowest"] + 1 > EVERY_POSITION_UP_TO
    problems, visited = [], 0
    for key, stop in (("ArrowLeft", first["lowest"]), ("ArrowRight", first["highest"])):
        while state["value"] != stop:
            was = state
            if EVERY_POSITION:
                pressed = "PageUp" if long and key == "ArrowRight" and was["value"] >= first["lowest"] + 8 else key
            else:
                pressed = ("PageDown" if key == "ArrowLeft" else
                           "ArrowRight" if was["value"] == first["lowest"] else "PageUp")
            handle.press(pressed)
            try:
                state = page.wait_for_function(REDRAWN, arg=[element, number, was["drawn"]],
                                               timeout=30_000).json_value()
            except Exception:
                problems.append(f"{first['label']} {was['value']}: {pressed} did not redraw the explorer")
                return visited, problems
            if state["value"] == was["value"]:
                problems.append(f"{first['label']}: {pressed} did not move it from {was['value']}")
                return visited, problems
            visited += 1
            if state["red"]:
                problems.append(f"{first['label']} = {state['value']}: the explorer shows an error: "
                                f"{state['red'][:300]}")
    page.wait_for_function(IDLE, arg=panel, timeout=30_000)
    if page.evaluate(STATE, [element, number])["pictures"] == first["pictures"] and visited:
        problems.append(f"{first['label']}: moving it through {visited} positions never changed the picture")
    return visited, problems


SWEPT: dict = {}       # notebook -> (sliders, positions), for the summary test


@pytest.mark.slow
@pytest.mark.parametrize("notebook", NOTEBOOKS)
def test_every_cell_runs_without_an_error_and_every_slider_redraws_from_its_lowest_to_its_highest_position(runner, notebook):
    page, panel, seconds = runner.ran(notebook)
    stem, swept = pathlib.Path(notebook).stem, time.monotonic()
    try:
        errors = page.evaluate(ERRORS_SHOWN, panel)
        assert not errors, f"{notebook} shows errors after Run All Cells:\n" + "\n".join(errors)
        assert seconds is not None, f"{notebook}: Run All Cells did not end within {RUN_SECONDS} s"
        assert page.evaluate(ALL_RAN, [panel, code_cells(notebook)]), f"{notebook}: some code cells did not run"
        explorers = page.locator(EXPLORERS.format(panel=panel))
        sliders = positions = 0
        problems = []
        for index in range(explorers.count()):
            explorer = explorers.nth(index)
            explorer.scroll_into_view_if_needed()
            for number in range(explorer.locator(".widget-slider").count()):
                moved, found = sweep(page, panel, explorer, number)
                sliders, positions = sliders + 1, positions + moved
                problems += [f"explorer {index + 1}, {problem}" for problem in found]
            explorer.screenshot(path=str(artifacts() / f"{stem}-explorer{index + 1}.png"))
        errors = page.evaluate(ERRORS_SHOWN, panel)
        assert not problems and not errors, f"{notebook}:\n" + "\n".join(problems + errors)
        SWEPT[notebook] = (sliders, positions, seconds)
    except Exception:
        page.screenshot(path=str(artifacts() / f"{stem}-failure.png"))
        raise
    print(f"{notebook}: ran in {seconds:.0f} s; {sliders} sliders through {positions} positions in "
          f"{time.monotonic() - swept:.0f} s")


@pytest.mark.slow
def test_the_course_notebooks_have_sliders_to_move():
    """What the sweep above covered: every notebook ran, and the explorers' sliders were all moved."""
    if len(SWEPT) < len(NOTEBOOKS):
        pytest.skip(f"{len(NOTEBOOKS) - len(SWEPT)} notebooks were not swept (see above)")
    sliders = sum(s for s, _, _ in SWEPT.values())
    positions = sum(p for _, p, _ in SWEPT.values())
    print(f"{len(SWEPT)} notebooks, {sliders} sliders moved through {positions} positions")
    assert sliders >= 10 and positions >= sliders


@pytest.mark.slow
def test_the_picture_stays_light_under_jupyterlab_dark_theme(runner):
    page, panel, _ = runner.ran("02_tv_layouts.ipynb")
    picture = page.locator(f"{EXPLORERS.format(panel=panel)} img.widget-image").first
    picture.scroll_into_view_if_needed()
    page.locator(".lm-MenuBar-itemLabel", has_text="Settings").first.click(force=True)
    page.locator(".lm-Menu-itemLabel", has_text="Theme").first.hover()
    page.locator(".lm-Menu-itemLabel", has_text="JupyterLab Dark").first.click(force=True)
    page.wait_for_function("() => document.body.dataset.jpThemeLight === 'false'", timeout=30_000)
    page.wait_for_timeout(500)
    page.screenshot(path=str(artifacts() / "dark.png"))
    dark_page = page.evaluate("panel => getComputedStyle(document.querySelector(`#${panel} .jp-Notebook`))"
                              ".backgroundColor", panel)
    dark_pixels = picture.screenshot()
    # the notebook's background is dark, the picture's own corner still near white
    red, green, blue = (int(v) for v in dark_page[dark_page.index("(") + 1:dark_page.index(")")].split(",")[:3])
    assert red + green + blue < 3 * 96, dark_page
    corner = Image.open(io.BytesIO(dark_pixels)).convert("RGB").getpixel((2, 2))
    assert min(corner) > 235, corner
